#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh [MESON TEST ARGS...]
#
# Installs the dependencies if needed (apt-get, as root), builds into
# build/ and runs every test suite (unit and integration) with meson.
# Extra arguments go to `meson test` (e.g. --suite unit).

set -eu

top="$(cd "$(dirname "$0")/.." && pwd)"
build="${UEBROKER_BUILD_DIR:-$top/build}"

"$top/build-aux/install-deps.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top"
ninja -C "$build"
meson test -C "$build" --print-errorlogs "$@"
