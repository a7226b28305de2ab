#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-system.sh [--kernel=upstream|v1] BUILD_DIR [SOURCE_ROOT]
#
# The system test tier: boots Debian bookworm with systemd as PID 1 under
# QEMU (TCG) on the vm tier's user_events kernel (--kernel=v1: the kernel
# provider's 6.1 kernel with the original interface, the vm tier's
# vm-v1 kernel, built once for both), where the guest installs the
# project's Debian packages with apt-get (a lower version, then an upgrade
# to these) as an administrator does, and reports the checks it ran
# (tests/system/scenario.sh, debian/tests among them) as TAP on stdout, for
# meson. Details go to stderr.
#
# The guest's initramfs is two gzip'ed cpio archives, one after the other:
# the cached root filesystem (build-rootfs.sh, given what the packages
# depend on) and an overlay with the .deb files, the example program (from
# an install-style build of its own, BUILD_DIR/tests/system/install-build),
# debian/tests, and the test unit with its scenario.
#
# Exit: TAP results (meson decides), "Bail out!" when the guest died or ran
# out of time; 77 (skip, with the reason) only when a tool is missing.
# Environment:
#   UEBROKER_VM_KERNEL       a bzImage to boot instead of the cached one
#   UEBROKER_SYSTEM_TIMEOUT  seconds the guest may run (default 600)
#   UEBROKER_SYSTEM_KEEP     a directory to keep the console log and overlay in
#   UEBROKER_SYSTEM_DEBS     the packages to test (build-aux/build-debs.sh's
#                            OUT_DIR); default: built here (--quick) from the
#                            committed tree, cached per tree
#   UEBROKER_SYSTEM_DEBS_OLDER  a lower version of them to upgrade from
#                            (build-debs.sh --older); with the default, built too
#   UEBROKER_SYSTEM_BUS      the system bus: dbus-daemon (default) or dbus-broker
#                            (a root filesystem of its own with the package,
#                            which enables itself as dbus.service)

set -euo pipefail

kernel_kind=upstream
case "${1:-}" in
--kernel=upstream|--kernel=v1) kernel_kind="${1#--kernel=}"; shift ;;
--*) echo "run-system: unknown option $1" >&2; exit 2 ;;
esac
build="$(cd "${1:?usage: $0 [--kernel=upstream|v1] BUILD_DIR [SOURCE_ROOT]}" && pwd)"
here="$(cd "$(dirname "$0")" && pwd)"
src="$(cd "${2:-$here/../..}" && pwd)"
timeout_s="${UEBROKER_SYSTEM_TIMEOUT:-600}"
system_bus="${UEBROKER_SYSTEM_BUS:-dbus-daemon}"
case "$system_bus" in dbus-daemon|dbus-broker) ;; *) echo "run-system: UEBROKER_SYSTEM_BUS=$system_bus?" >&2; exit 2 ;; esac

log() { printf 'run-system: %s\n' "$*" >&2; }
skip() { echo "1..0 # SKIP $*"; exit 77; }
bail() { echo "Bail out! $*"; exit 1; }
t0=$(date +%s)

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is missing (apt-get install qemu-system-x86)"
command -v bsdtar >/dev/null || skip "bsdtar is missing (apt-get install libarchive-tools)"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is missing (apt-get install mmdebstrap)"
if ! command -v meson >/dev/null || ! command -v ninja >/dev/null; then skip "meson or ninja is missing"; fi

work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-system.XXXXXX")"
trap 'rm -rf "$work"' EXIT

# --- the kernel (the vm tier's, cached) ---
if [ -n "${UEBROKER_VM_KERNEL:-}" ]; then
        kernel="$UEBROKER_VM_KERNEL"
elif [ "$kernel_kind" = v1 ]; then
        set +e
        "$src/kernel/build-test-kernel.sh" "$build/kernel-v1" >&2
        r=$?
        set -e
        [ $r = 77 ] && skip "cannot build the kernel provider's test kernel (its source or a build tool is missing)"
        [ $r = 0 ] || bail "building the kernel provider's test kernel failed ($r)"
        kernel="$build/kernel-v1/bzImage"
else
        set +e
        kernel="$("$src/tests/vm/build-kernel.sh")"
        r=$?
        set -e
        [ $r = 77 ] && skip "cannot build the test kernel (its source or a build tool is missing, see the log)"
        [ $r = 0 ] || bail "building the test kernel failed ($r)"
fi
t_cached=$(date +%s)

# --- the project's Debian packages, which the guest installs with apt-get
#     (a lower version first, then these: the upgrade), and the example
#     program, built from an install-style build of its own ---
debs="${UEBROKER_SYSTEM_DEBS:-}"
debs_older="${UEBROKER_SYSTEM_DEBS_OLDER:-}"
if [ -z "$debs" ]; then
        command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null ||
                skip "dpkg-buildpackage or debhelper is missing (apt-get install dpkg-dev debhelper devscripts)"
        tree_id="$(git -C "$src" rev-parse 'HEAD^{tree}' 2>/dev/null)" ||
                skip "no git checkout to build the packages from (build them, build-aux/build-debs.sh, and set UEBROKER_SYSTEM_DEBS)"
        cached="$build/tests/system/debs-$tree_id"
        if [ ! -e "$cached/.built" ]; then
                rm -rf "$build/tests/system"/debs-*
                log "building the packages of the committed tree (HEAD $tree_id) and a lower version of it"
                "$src/build-aux/build-debs.sh" --quick "$cached/new" >&2 || bail "building the packages failed"
                "$src/build-aux/build-debs.sh" --quick --older "$cached/older" >&2 ||
                        bail "building the lower version's packages failed"
                touch "$cached/.built"
        fi
        debs="$cached/new"
        debs_older="$cached/older"
        log "the packages of the committed tree (HEAD): changes not committed are not in them"
fi
ls "$debs"/*.deb >/dev/null 2>&1 || bail "no packages in $debs"
stage="$work/stage"
mkdir -p "$stage/var/lib/uebroker-system/debs/new"
chmod 0755 "$stage"
cp "$debs"/*.deb "$stage/var/lib/uebroker-system/debs/new/"
if [ -n "$debs_older" ]; then
        mkdir -p "$stage/var/lib/uebroker-system/debs/older"
        cp "$debs_older"/*.deb "$stage/var/lib/uebroker-system/debs/older/"
fi
log "packages: $(cd "$stage/var/lib/uebroker-system/debs" && find . -name '*.deb' | sort | tr '\n' ' ')"

inst="$build/tests/system/install-build"
if [ ! -e "$inst/build.ninja" ]; then
        meson setup "$inst" "$src" -Dprefix=/usr -Dsysconfdir=/etc -Dlocalstatedir=/var \
                -Dtests=disabled >&2 || bail "meson setup of $inst failed"
fi
ninja -C "$inst" examples/hello-events >&2 || bail "building $inst/examples/hello-events failed"
# the example program (examples/ is built, not packaged), against the
# packaged library
install -D -m 0755 "$inst/examples/hello-events" "$stage/usr/local/bin/hello-events"
# a client that never reads its replies, for the scenario (no Python there)
mkdir -p "$stage/usr/local/lib/uebroker-system"
# shellcheck disable=SC2046 # pkg-config's words
cc -std=gnu11 -O1 -Wall -Werror -o "$stage/usr/local/lib/uebroker-system/unread-client" "$here/unread-client.c" \
        $(pkg-config --cflags --libs libsystemd) >&2 || bail "building unread-client failed"
# debian/tests (autopkgtest), which the scenario runs as autopkgtest would
mkdir -p "$stage/usr/local/lib/uebroker-system/debian"
cp -r "$src/debian/tests" "$stage/usr/local/lib/uebroker-system/debian/"

# --- the root filesystem (cached), with what the packages depend on (apt
#     in the guest has no network: every dependency is there already) and
#     the libraries the two test programs link ---
# dpkg knows a file by the path its package ships, which merged /usr and
# the libraries' symlinks hide: try the name, its target, each with and
# without /usr.
package_of() {
        local p t pkg
        t="$(readlink -f "$1")"
        for p in "$1" "$t" "${1#/usr}" "${t#/usr}" "/usr$1" "/usr$t"; do
                pkg="$(dpkg-query -S "$p" 2>/dev/null | head -n1 | cut -d: -f1)"
                [ -n "$pkg" ] && { echo "$pkg"; return 0; }
        done
        return 0
}
libs_of() { ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'; }
ours=()
for d in "$stage"/var/lib/uebroker-system/debs/*/*.deb; do
        ours+=("$(dpkg-deb -f "$d" Package)")
done
depends=()
while IFS= read -r lib; do
        case "$lib" in "$inst"/*|*/libuebroker.so*) continue ;; esac     # the project's own
        pkg="$(package_of "$lib")"
        [ -n "$pkg" ] || bail "no Debian package holds $lib (linked by the test programs)"
        depends+=("$pkg")
done < <(for f in "$stage/usr/local/bin/hello-events" "$stage/usr/local/lib/uebroker-system/unread-client"; do
                libs_of "$f"; done | sort -u)
# Each Depends: of the packages, the first of alternatives, versions and
# architecture qualifiers dropped; virtual names (dbus-system-bus) are
# provided by the bus the root gets anyway.
while IFS= read -r dep; do
        case " ${ours[*]} " in *" $dep "*) continue ;; esac
        candidate="$(apt-cache policy "$dep" 2>/dev/null | sed -n 's/^ *Candidate: //p')"
        if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
                log "dependency $dep: virtual, left to its provider"
                continue
        fi
        depends+=("$dep")
done < <(for d in "$stage"/var/lib/uebroker-system/debs/*/*.deb; do dpkg-deb -f "$d" Depends Pre-Depends; done |
         sed -e 's/^[A-Za-z-]*: //' | tr ',' '\n' | sed -e 's/|.*//' -e 's/(.*)//' -e 's/:any//' -e 's/[[:space:]]//g' |
         grep -v '^$' | sort -u)
[ "$system_bus" = dbus-broker ] && depends+=(dbus-broker)
mapfile -t depends < <(printf '%s\n' "${depends[@]}" | sort -u)
log "the root gets, for the packages and the test programs: ${depends[*]}"
set +e
rootfs="$("$here/build-rootfs.sh" "${depends[@]}")"
r=$?
set -e
[ $r = 77 ] && skip "cannot build the root filesystem (see the log)"
[ $r = 0 ] || bail "building the root filesystem failed ($r)"

# the test unit, its scenario, and what the boot must not do
install -D -m 0644 "$here/uebroker-system-test.service" "$stage/etc/systemd/system/uebroker-system-test.service"
install -D -m 0755 "$here/scenario.sh" "$stage/usr/local/lib/uebroker-system/scenario.sh"
mkdir -p "$stage/etc/systemd/system/multi-user.target.wants"
ln -s ../uebroker-system-test.service "$stage/etc/systemd/system/multi-user.target.wants/"
mkdir -p "$stage/etc/systemd/system/uebroker-system-test.service.d"
printf '[Service]\nEnvironment=UEBROKER_SYSTEM_BUS=%s\n' "$system_bus" \
        > "$stage/etc/systemd/system/uebroker-system-test.service.d/bus.conf"
# the scenario writes its results on the serial console: no getty there;
# no first-boot prompt (a fixed machine id); e2scrub_reap costs 12 s.
for unit in serial-getty@ttyS0.service getty@tty1.service systemd-firstboot.service e2scrub_reap.service; do
        ln -s /dev/null "$stage/etc/systemd/system/$unit"
done
echo 5eb0c0ffee5eb0c0ffee5eb0c0ffee00 > "$stage/etc/machine-id"
echo uebroker-system > "$stage/etc/hostname"
find "$stage" -type d -exec chmod 0755 {} +

# The kernel opens /dev/console before PID 1 runs; devtmpfs comes later.
printf '#mtree\n./dev type=dir mode=0755 uid=0 gid=0\n./dev/console type=char mode=0600 uid=0 gid=0 device=native,5,1\n' > "$work/dev.mtree"
mapfile -t top < <(ls -A "$stage")
(cd "$stage" && bsdtar -cf - --format newc --uid 0 --gid 0 --uname root --gname root \
        "${top[@]}" @"$work/dev.mtree") | gzip -1 > "$work/overlay.cpio.gz"
cat "$rootfs" "$work/overlay.cpio.gz" > "$work/initrd"
t_image=$(date +%s)
log "kernel: $kernel"
log "root filesystem: $rootfs ($(stat -c %s "$rootfs") bytes), overlay $(stat -c %s "$work/overlay.cpio.gz") bytes"

# --- boot ---
console="$work/console.log"
set +e
timeout --foreground -k 10 "$timeout_s" qemu-system-x86_64 -accel tcg -m 2048 -nographic -no-reboot \
        -nic none -monitor none -serial stdio \
        -kernel "$kernel" -initrd "$work/initrd" \
        -append 'console=ttyS0 rdinit=/lib/systemd/systemd panic=-1 systemd.show_status=0 loglevel=4' \
        < /dev/null > "$console" 2>&1
qrc=$?
set -e
t_boot=$(date +%s)
sed -e 's/\r//g' -e 's/\x1b\[[0-9;?]*[A-Za-z]//g' -e 's/\x1bc//g' < "$console" > "$console.txt"
if [ -n "${UEBROKER_SYSTEM_KEEP:-}" ]; then
        mkdir -p "$UEBROKER_SYSTEM_KEEP"
        cp "$console.txt" "$work/overlay.cpio.gz" "$UEBROKER_SYSTEM_KEEP/"
fi

sed -n '/===== uebroker-system: begin log =====$/,/^===== uebroker-system: end log =====$/p' "$console.txt" |
        sed '1d;$d' >&2
log "system bus: $system_bus"
log "timings: kernel ready $((t_cached - t0)) s, install, root filesystem and image $((t_image - t_cached)) s, boot to power-off $((t_boot - t_image)) s (qemu exit $qrc)"

tap="$work/tap"
sed -n '/===== uebroker-system: begin TAP =====$/,/^===== uebroker-system: end TAP =====$/p' "$console.txt" |
        sed '1d;$d' > "$tap"
if ! grep -q '^===== uebroker-system: end TAP =====$' "$console.txt"; then
        echo "----- console (last 80 lines)" >&2
        tail -n 80 "$console.txt" >&2
        [ $qrc = 124 ] || [ $qrc = 137 ] && bail "the guest did not finish within $timeout_s s"
        bail "the guest printed no complete result (qemu exit $qrc)"
fi
cat "$tap"
