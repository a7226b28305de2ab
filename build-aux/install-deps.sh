#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# install-deps.sh [--check]
#
# Installs what uebroker needs to build and to run every test tier on
# Debian 12 (bookworm), with apt-get; run as root. With --check, only
# reports whether everything is there (exit 0) or not (exit 1).

set -eu

packages=(
        # build
        gcc meson ninja-build pkg-config libsystemd-dev check
        # install directories from pkg-config (systemd.pc comes with systemd;
        # tests/integration/test-install.sh checks them), man pages (scdoc;
        # that test renders them with man-db)
        libdbus-1-dev libpolkit-gobject-1-dev bash-completion scdoc man-db
        # the upstream provider records through tracefs instances
        libtracefs-dev libtraceevent-dev
        # uebctl record -o writes CTF through libbabeltrace2's sink.ctf.fs;
        # its test reads the trace back with babeltrace2
        libbabeltrace2-dev babeltrace2
        # uebctl record -o FILE.dat: its test reads the file back with trace-cmd
        # and libtracecmd's reading API, and opens it in KernelShark under Xvfb
        # (xwininfo tells it has loaded; a screenshot with ImageMagick's import;
        # Qt needs a font)
        trace-cmd libtracecmd-dev kernelshark xvfb x11-utils imagemagick fonts-dejavu-core
        # integration tests: private bus, clients in other languages, polkit
        dbus-daemon dbus-bin systemd libglib2.0-bin python3 python3-dbus python3-dbusmock
        python3-gi polkitd libxml2-utils util-linux nodejs
        # the hostile tests again on a private dbus-broker (the machine's
        # own system bus is left as it was: see below)
        dbus-broker
        # LinuxTracepoints' programs (a checkout -Dlinuxtracepoints=PATH names,
        # built with its own CMake build: libtracepoint's samples and unit
        # tests, the EventHeader sample, perf-collect, perf-decode)
        cmake g++
        # sanitizers, valgrind, fuzzing; clang and Debian's build flags
        # (dpkg-buildflags) for build-aux/check-builds.sh
        clang libclang-rt-14-dev valgrind dpkg-dev
        # the hostile test checks the state file is fsync'ed (strace)
        strace
        # the Debian packages (debian/, build-aux/build-debs.sh: dch for the
        # lower version the upgrade test starts from)
        debhelper lintian devscripts
        # bench/: LTTng-UST beside the ring (bench-ring-write, built by CI;
        # run-bench.sh also needs lttng-tools to record, not installed here)
        liblttng-ust-dev
        # vm tier (tests/vm): a kernel built from Debian's source, QEMU, busybox
        make bc bison flex libelf-dev libssl-dev xz-utils
        # kernel/upstream-6.12: its series applied to the 6.12 tree and headers;
        # its kselftests installed by the kernel's make (which copies with rsync)
        patch rsync
        qemu-system-x86 busybox-static
        # the kernel provider's test kernel (kernel/build-test-kernel.sh)
        linux-source-6.1
        # system tier (tests/system): a Debian root filesystem, packed as cpio
        mmdebstrap libarchive-tools
)
# From bookworm-backports (added below with the system's own mirror URIs).
backports_packages=(linux-source-6.12)

installed() {
        dpkg-query -W -f='${Status}\n' "$1" 2>/dev/null | grep -q '^install ok installed$'
}
missing=()
for p in "${packages[@]}"; do
        installed "$p" || missing+=("$p")
done
missing_bp=()
for p in "${backports_packages[@]}"; do
        installed "$p" || missing_bp+=("$p")
done

all_missing=("${missing[@]}" "${missing_bp[@]}")
if [ "${1:-}" = "--check" ]; then
        [ ${#all_missing[@]} -eq 0 ] && exit 0
        echo "missing packages: ${all_missing[*]}" >&2
        exit 1
fi

[ ${#all_missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: these packages are missing: ${all_missing[*]}" >&2
        echo "install-deps: run as root (sudo $0) to install them" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive

# bookworm-backports, from the same mirror(s) as the system's bookworm
# suite (deb822 debian.sources or a one-line sources.list).
add_backports() {
        local list=/etc/apt/sources.list.d/uebroker-bookworm-backports.sources
        local uris="" f
        grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
        for f in /etc/apt/sources.list.d/*.sources; do
                [ -f "$f" ] || continue
                # URIs of each stanza whose Suites name bookworm itself
                uris="$uris $(awk '
                        /^[[:space:]]*$/ { if (s && u != "") print u; s = 0; u = ""; next }
                        /^URIs:/ { sub(/^URIs:[[:space:]]*/, ""); u = $0 }
                        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") s = 1 }
                        END { if (s && u != "") print u }' "$f")"
        done
        if [ -z "${uris// /}" ] && [ -f /etc/apt/sources.list ]; then
                uris="$(awk '$1 == "deb" && $3 == "bookworm" { print $2 }' /etc/apt/sources.list | sort -u | tr '\n' ' ')"
        fi
        if [ -z "${uris// /}" ]; then
                echo "install-deps: no bookworm mirror found in /etc/apt to add bookworm-backports" >&2
                return 1
        fi
        printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
                "$(echo $uris)" > "$list"
}
[ ${#missing_bp[@]} -eq 0 ] || add_backports

# Installing dbus-broker makes it the system bus from the next boot on
# (its postinst enables the dbus.service alias); the tests only run it
# privately, so a machine whose bus was dbus-daemon keeps it.
bus_alias=/etc/systemd/system/dbus.service
bus_before="$(readlink "$bus_alias" 2>/dev/null || true)"

apt-get update -q
[ ${#missing[@]} -eq 0 ] || apt-get install -y -q --no-install-recommends "${missing[@]}"
if [ -z "$bus_before" ] && [[ " ${missing[*]} " == *" dbus-broker "* ]]; then
        systemctl disable -q dbus-broker.service ||
                echo "install-deps: could not disable dbus-broker.service: it becomes the system bus at the next boot" >&2
fi
for p in "${missing_bp[@]}"; do
        apt-get install -y -q --no-install-recommends "$p/bookworm-backports"
done
