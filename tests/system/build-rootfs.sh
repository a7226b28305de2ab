#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-rootfs.sh [PACKAGE...]
#
# Prints the path of the system tier's Debian bookworm root filesystem, a
# gzip'ed newc cpio (the first half of the guest's initramfs; run-system.sh
# appends the project). Built with mmdebstrap from the Debian mirror
# (UEBROKER_SYSTEM_MIRROR, default http://deb.debian.org/debian), about 30 s
# with a near mirror, and cached outside the build directory, keyed by a
# hash of this script (it is the recipe) and the PACKAGEs:
#   ${UEBROKER_SYSTEM_CACHE:-${XDG_CACHE_HOME:-/var/cache}/uebroker-system}/<hash>/rootfs.cpio.gz
# (~/.cache/uebroker-system when /var/cache is not writable). A missing
# image is built; nothing needs it cached. Progress goes to stderr, the
# path alone to stdout. Exit 77 when mmdebstrap or bsdtar is missing.
#
# The root filesystem: minbase plus systemd (PID 1), dbus, polkitd,
# libpam-systemd, udev, procps (/bin/kill, for the unit's ExecReload=) and
# the PACKAGEs; an unprivileged user tester (uid 1000), and a
# user tracer (uid 1001) in group "tracing", the group the example polkit
# rules (polkit/50-uebroker-example.rules) grant Record and Delete.
# Documentation, man pages and locales are left out (size, packing time).

set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
mirror="${UEBROKER_SYSTEM_MIRROR:-http://deb.debian.org/debian}"
# The system; the PACKAGEs add what the project's programs link
# (run-system.sh finds them with ldd and dpkg, as a package's Depends).
packages=systemd,systemd-sysv,dbus,polkitd,libpam-systemd,udev,procps
for p in "$@"; do
        case "$p" in *[!a-z0-9.+-]*|"") echo "build-rootfs: not a package name: '$p'" >&2; exit 1 ;; esac
        case ",$packages," in *",$p,"*) ;; *) packages="$packages,$p" ;; esac
done

log() { printf 'build-rootfs: %s\n' "$*" >&2; }

if [ -n "${UEBROKER_SYSTEM_CACHE:-}" ]; then
        cache="$UEBROKER_SYSTEM_CACHE"
elif [ -n "${XDG_CACHE_HOME:-}" ]; then
        cache="$XDG_CACHE_HOME/uebroker-system"
elif mkdir -p /var/cache/uebroker-system 2>/dev/null && [ -w /var/cache/uebroker-system ]; then
        cache=/var/cache/uebroker-system
else
        cache="$HOME/.cache/uebroker-system"
fi

key="$( { cat "$here/build-rootfs.sh"; echo "$packages"; } | sha256sum | cut -c1-16)"
dir="$cache/$key"
image="$dir/rootfs.cpio.gz"
if [ -s "$image" ]; then
        log "cached: $image"
        echo "$image"
        exit 0
fi

command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing (apt-get install mmdebstrap)"; exit 77; }
command -v bsdtar >/dev/null || { log "bsdtar is missing (apt-get install libarchive-tools)"; exit 77; }

mkdir -p "$dir"
# One build per key at a time; a second caller waits and then finds it.
exec 9>"$dir/.lock"
flock 9
if [ -s "$image" ]; then
        log "cached (built meanwhile): $image"
        echo "$image"
        exit 0
fi

log "building bookworm ($packages) from $mirror, key $key"
start=$(date +%s)
rm -f "$dir/rootfs.tar"
# mmdebstrap picks its mode: root as root, unshare otherwise; either way the
# tarball carries the right owners, and bsdtar turns it into a cpio without
# needing to own them. --skip=output/dev: the guest's /dev is devtmpfs.
# The hooks' "$1" (the chroot) is mmdebstrap's to expand:
# shellcheck disable=SC2016
mmdebstrap --variant=minbase --include="$packages" \
        --dpkgopt='path-exclude=/usr/share/man/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' \
        --dpkgopt='path-exclude=/usr/share/doc/*' \
        --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-include=/usr/share/doc/uebrokerd/*' \
        --customize-hook='chroot "$1" useradd --create-home --uid 1000 --shell /bin/bash tester' \
        --customize-hook='chroot "$1" groupadd --gid 1100 tracing' \
        --customize-hook='chroot "$1" useradd --create-home --uid 1001 --groups tracing --shell /bin/bash tracer' \
        --skip=output/dev \
        bookworm "$dir/rootfs.tar" "$mirror" >&2
bsdtar -cf - --format newc @"$dir/rootfs.tar" | gzip -6 > "$image.tmp"
rm -f "$dir/rootfs.tar"
mv "$image.tmp" "$image"
log "built $image ($(stat -c %s "$image") bytes) in $(( $(date +%s) - start )) s"
echo "$image"
