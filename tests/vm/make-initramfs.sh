#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# make-initramfs.sh [--kselftest=DIR] BUILD_DIR SOURCE_ROOT OUTPUT [SCENARIO [GUEST_BIN...]]
#
# Packs the vm tier's initramfs (gzip'ed newc cpio) into OUTPUT: static
# busybox; the project's uebrokerd, uebctl, libuebroker, vm-client and vm-perf from
# BUILD_DIR; trace-cmd; a real system bus (dbus-daemon, the distribution's system.conf,
# the project's dbus/org.uebroker1.conf), a real polkitd with the
# distribution's rules and the project's polkit/org.uebroker1.policy; every
# binary's libraries as ldd lists them; users root, messagebus, polkitd and
# tester (uid 1000); tests/vm/init as /init and SCENARIO (default
# tests/vm/scenario.sh) as /scenario.sh; each GUEST_BIN (a test program,
# with its libraries) in /usr/libexec/uebroker-vm/. --kselftest=DIR: a
# kselftest installation (run_kselftest.sh and its collections, as
# tests/vm/build-kernel.sh builds them beside a patched kernel) in
# /usr/libexec/uebroker-vm/kselftest/, with coreutils' timeout (the runner
# uses --foreground, which busybox's lacks).

set -euo pipefail

kselftest=
case "${1:-}" in --kselftest=*) kselftest="${1#--kselftest=}"; shift ;; esac

build="$(cd "${1:?usage: $0 BUILD_DIR SOURCE_ROOT OUTPUT}" && pwd)"
src="$(cd "${2:?usage: $0 BUILD_DIR SOURCE_ROOT OUTPUT}" && pwd)"
out="${3:?usage: $0 BUILD_DIR SOURCE_ROOT OUTPUT [SCENARIO [GUEST_BIN...]]}"
scenario="${4:-$src/tests/vm/scenario.sh}"
shift $(( $# < 4 ? $# : 4 ))

busybox=/bin/busybox
dbus_daemon=/usr/bin/dbus-daemon
polkitd=/usr/lib/polkit-1/polkitd

root="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-initramfs.XXXXXX")"
trap 'rm -rf "$root"' EXIT
# mktemp -d gives 0700: the guest's non-root processes need to get through /.
chmod 0755 "$root"

# Merged /usr, as on the host, so ldd's paths land where the loader looks.
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,usr/libexec,etc,proc,sys,dev,run,tmp,root,var/lib,home/tester}
ln -s usr/bin "$root/bin"
ln -s usr/sbin "$root/sbin"
ln -s usr/lib "$root/lib"
ln -s usr/lib64 "$root/lib64"
# GLib (polkitd) looks for the system bus at /var/run/dbus/system_bus_socket.
ln -s ../run "$root/var/run"
chmod 1777 "$root/tmp"
chmod 0700 "$root/root"

# Copies FILE to the same path in the image, with its libraries.
copy_libs() {
        local lib
        # "name => /path (addr)", or "/lib64/ld-linux... (addr)" for the loader
        for lib in $(ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'); do
                case "$lib" in
                /usr/*|/lib/*|/lib64/*) dest="$lib" ;;
                # the build tree's own libraries (libuebroker): the default path
                *) dest="/usr/lib/x86_64-linux-gnu/$(basename "$lib")" ;;
                esac
                if [ ! -e "$root$dest" ]; then
                        mkdir -p "$root$(dirname "$dest")"
                        cp -L "$lib" "$root$dest"
                fi
        done
}
copy_bin() {        # copy_bin FILE [DEST]
        local dest="${2:-$1}"
        mkdir -p "$root$(dirname "$dest")"
        cp -L "$1" "$root$dest"
        copy_libs "$1"
}

# busybox, and an applet link for every command nothing else provides
copy_bin "$busybox" /usr/bin/busybox
for applet in $("$busybox" --list); do
        [ -e "$root/usr/bin/$applet" ] || ln -s busybox "$root/usr/bin/$applet"
done

# the project
copy_bin "$build/daemon/uebrokerd" /usr/sbin/uebrokerd
copy_bin "$build/tools/uebctl" /usr/bin/uebctl
copy_bin "$build/tests/vm/vm-client" /usr/bin/vm-client
copy_bin "$build/tests/vm/vm-perf" /usr/bin/vm-perf
copy_bin "$build/tests/vm/vm-grant" /usr/bin/vm-grant
for bin in "$@"; do
        copy_bin "$bin" "/usr/libexec/uebroker-vm/$(basename "$bin")"
done
if [ -n "$kselftest" ]; then
        mkdir -p "$root/usr/libexec/uebroker-vm"
        cp -a "$kselftest" "$root/usr/libexec/uebroker-vm/kselftest"
        while IFS= read -r -d '' f; do
                copy_libs "$f"
        done < <(find "$kselftest" -type f -perm -u+x -print0)
        rm -f "$root/usr/bin/timeout"
        copy_bin /usr/bin/timeout
fi

# system bus and polkit, clients for the scenario; trace-cmd reads what
# uebctl record -o FILE.dat writes
copy_bin "$dbus_daemon"
for tool in /usr/bin/dbus-send /usr/bin/busctl /usr/bin/trace-cmd; do
        copy_bin "$tool"
done
copy_bin "$polkitd"
mkdir -p "$root/usr/share/dbus-1/system.d" "$root/usr/share/polkit-1/actions" \
        "$root/usr/share/polkit-1/rules.d" "$root/etc/polkit-1/rules.d"
cp /usr/share/dbus-1/system.conf "$root/usr/share/dbus-1/"
cp /usr/share/dbus-1/system.d/org.freedesktop.PolicyKit1.conf "$root/usr/share/dbus-1/system.d/"
cp "$src/dbus/org.uebroker1.conf" "$root/usr/share/dbus-1/system.d/"
cp /usr/share/polkit-1/actions/org.freedesktop.policykit.policy "$root/usr/share/polkit-1/actions/"
cp "$src/polkit/org.uebroker1.policy" "$root/usr/share/polkit-1/actions/"
cp /usr/share/polkit-1/rules.d/50-default.rules "$root/usr/share/polkit-1/rules.d/"

cat > "$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
messagebus:x:100:101::/nonexistent:/usr/sbin/nologin
polkitd:x:997:997:polkit:/nonexistent:/usr/sbin/nologin
tester:x:1000:1000:tester:/home/tester:/bin/sh
EOF
cat > "$root/etc/group" <<'EOF'
root:x:0:
messagebus:x:101:
polkitd:x:997:
tester:x:1000:
EOF
echo 'passwd: files
group: files' > "$root/etc/nsswitch.conf"
# dbus-daemon reads the machine id
echo 0123456789abcdef0123456789abcdef > "$root/etc/machine-id"
mkdir -p "$root/var/lib/dbus"
ln -s /etc/machine-id "$root/var/lib/dbus/machine-id"
# Everything is packed as root's (cpio -R 0:0); /init gives tester its home
# and polkitd its rules directory.

install -m 0755 "$src/tests/vm/init" "$root/init"
install -m 0755 "$scenario" "$root/scenario.sh"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -mindepth 1 | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) | gzip -6 > "$out.tmp"
mv "$out.tmp" "$out"
