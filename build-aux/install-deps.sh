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
        # integration tests: private bus, clients in other languages, polkit
        dbus-daemon dbus-bin systemd libglib2.0-bin python3 python3-dbus python3-dbusmock
        python3-gi polkitd libxml2-utils util-linux nodejs
        # sanitizers, valgrind, fuzzing
        clang libclang-rt-14-dev valgrind
)

missing=()
for p in "${packages[@]}"; do
        dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed$' || missing+=("$p")
done

if [ "${1:-}" = "--check" ]; then
        [ ${#missing[@]} -eq 0 ] && exit 0
        echo "missing packages: ${missing[*]}" >&2
        exit 1
fi

[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
        echo "install-deps: these packages are missing: ${missing[*]}" >&2
        echo "install-deps: run as root (sudo $0) to install them" >&2
        exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
