#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# One version everywhere a user or a packager reads it: meson's project
# version (what the build says), `uebctl --version`, `uebrokerd --version`,
# the library's pkg-config file, and the upstream part of
# debian/changelog's first entry.
#   test-version.sh SOURCE_ROOT PROJECT_VERSION UEBCTL UEBROKERD PC_FILE
set -eu

src="$1" want="$2" uebctl="$3" uebrokerd="$4" pc="$5"
fail=0

check() {
        if [ "$2" != "$want" ]; then
                echo "version: $1 says '$2', the project is $want" >&2
                fail=1
        else
                echo "version: $1: $2"
        fi
}

check "uebctl --version" "$("$uebctl" --version | sed -n '1s/^uebctl //p')"
check "uebrokerd --version" "$("$uebrokerd" --version | sed -n '1s/^uebrokerd //p')"
check "$pc (Version:)" "$(sed -n 's/^Version: //p' "$pc")"
# "uebroker (0.1.0-1) unstable; ...": the upstream version is what comes
# before the last '-' (the Debian revision).
changelog="$(sed -n '1s/^uebroker (\([^)]*\)).*/\1/p' "$src/debian/changelog")"
check "debian/changelog" "${changelog%-*}"
exit "$fail"
