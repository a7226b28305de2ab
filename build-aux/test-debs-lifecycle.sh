#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The packages' life in a fresh Debian 12 chroot (mmdebstrap, from the
# mirror; as root): their dependencies installed first, then the file
# list taken; the packages of OLD_DEBS_DIR installed (the unit enabled, the
# configuration in place), upgraded to those of NEW_DEBS_DIR, removed (the
# configuration stays), purged (it goes, with the event table in
# /run/uebroker); then the file list again, which must be what it was: the
# packages leave nothing of theirs behind. No systemd runs in the chroot:
# the maintainer scripts enable the unit but start nothing.
#   build-aux/test-debs-lifecycle.sh OLD_DEBS_DIR NEW_DEBS_DIR
# UEBROKER_SYSTEM_MIRROR: the Debian mirror (as the system tier's).
set -euo pipefail

old="$(cd "${1:?usage: test-debs-lifecycle.sh OLD_DEBS_DIR NEW_DEBS_DIR}" && pwd)"
new="$(cd "${2:?usage: test-debs-lifecycle.sh OLD_DEBS_DIR NEW_DEBS_DIR}" && pwd)"
mirror="${UEBROKER_SYSTEM_MIRROR:-http://deb.debian.org/debian}"
packages="uebrokerd uebroker-tools libuebroker1 libuebroker-dev"

# Runs inside the chroot (sh -c), with /tmp/old and /tmp/new holding the
# .debs; every check says what it found when it fails.
read -r -d '' inside <<'SCRIPT' || true
set -eu
fail() { echo "lifecycle: $*" >&2; exit 1; }
version() { dpkg-query -W -f='${Version}' "$1"; }
snapshot() {
        find / -xdev \( -path /proc -o -path /sys -o -path /dev -o -path /tmp -o -path /var/cache \
                -o -path /var/lib/apt -o -path /var/lib/dpkg -o -path /var/log \) -prune -o -print | sort
}
export DEBIAN_FRONTEND=noninteractive
# The dependencies alone, so that what stays after the purge is theirs.
deps="$(apt-get install -s -q /tmp/old/*.deb | sed -n 's/^Inst \([^ ]*\) .*/\1/p' |
        grep -vxE 'uebrokerd|uebroker-tools|libuebroker1|libuebroker-dev')"
apt-get install -y -q $deps >/dev/null
snapshot > /tmp/before

apt-get install -y -q /tmp/old/*.deb >/dev/null
old_version="$(version uebrokerd)"
for f in /usr/sbin/uebrokerd /usr/bin/uebctl /usr/bin/uebroker-run /etc/uebroker/uebrokerd.conf \
         /lib/systemd/system/uebrokerd.service /usr/share/dbus-1/system.d/org.uebroker1.conf \
         /usr/share/dbus-1/system-services/org.uebroker1.service /usr/share/polkit-1/actions/org.uebroker1.policy \
         /usr/lib/systemd/catalog/uebroker.catalog /usr/include/uebroker.h; do
        [ -e "$f" ] || fail "$f is missing after installing $old_version"
done
[ -L /etc/systemd/system/multi-user.target.wants/uebrokerd.service ] || fail "the unit is not enabled"
uebctl --version | grep -qx "uebctl ${old_version%-*}" || fail "uebctl --version: $(uebctl --version)"
# What a running daemon would have kept.
mkdir -p /run/uebroker && echo "kept by the daemon" > /run/uebroker/events

apt-get install -y -q /tmp/new/*.deb >/dev/null
new_version="$(version uebrokerd)"
[ "$new_version" != "$old_version" ] || fail "the upgrade left version $old_version"
dpkg --compare-versions "$new_version" gt "$old_version" || fail "$new_version is not newer than $old_version"
[ -L /etc/systemd/system/multi-user.target.wants/uebrokerd.service ] || fail "the upgrade disabled the unit"
[ -s /run/uebroker/events ] || fail "the upgrade lost /run/uebroker/events"

apt-get remove -y -q PACKAGES >/dev/null
[ ! -e /usr/sbin/uebrokerd ] || fail "uebrokerd stayed after remove"
[ -e /etc/uebroker/uebrokerd.conf ] || fail "remove took the configuration (only purge may)"
# dpkg, not apt: the libraries, with no configuration, are gone already.
dpkg --purge PACKAGES >/dev/null 2>&1 || fail "dpkg --purge failed"
[ ! -e /etc/uebroker ] || fail "/etc/uebroker stayed after purge"
[ ! -e /run/uebroker ] || fail "/run/uebroker stayed after purge"
snapshot > /tmp/after
if ! diff -u /tmp/before /tmp/after; then
        fail "the purge left the files above (+) or took others' (-)"
fi
echo "lifecycle: $old_version installed, upgraded to $new_version, removed, purged: nothing left behind"
SCRIPT
work="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-lifecycle.XXXXXX")"
trap 'rm -rf "$work"' EXIT
printf '%s\n' "${inside//PACKAGES/$packages}" > "$work/lifecycle.sh"

# The hooks' "$1" (the chroot) is mmdebstrap's to expand:
# shellcheck disable=SC2016
mmdebstrap --variant=apt \
        --customize-hook='mkdir -p "$1/tmp/old" "$1/tmp/new"' \
        --customize-hook="cp \"$old\"/*.deb \"\$1/tmp/old/\"" \
        --customize-hook="cp \"$new\"/*.deb \"\$1/tmp/new/\"" \
        --customize-hook='rm -f "$1"/tmp/old/*-dbgsym_*.deb "$1"/tmp/new/*-dbgsym_*.deb' \
        --customize-hook="cp \"$work/lifecycle.sh\" \"\$1/tmp/lifecycle.sh\"" \
        --customize-hook='chroot "$1" sh /tmp/lifecycle.sh' \
        bookworm /dev/null "$mirror"
