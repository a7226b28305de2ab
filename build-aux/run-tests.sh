#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-tests.sh [MESON TEST ARGS...]
#
# Installs the dependencies if needed (apt-get, as root), builds into
# build/ and runs the unit and integration test suites with meson.
# Extra arguments go to `meson test` (e.g. --suite unit; --suite vm runs the
# vm tier, which boots QEMU, tests/vm/run-vm.sh; --suite system boots
# Debian with systemd, tests/system/run-system.sh).

set -eu

top="$(cd "$(dirname "$0")/.." && pwd)"
build="${UEBROKER_BUILD_DIR:-$top/build}"

"$top/build-aux/install-deps.sh"
# Warnings are errors in every build the project runs (the default is off
# for distributions: docs/DECISIONS.md).
if [ -f "$build/build.ninja" ]; then
        meson configure "$build" -Dwerror=true
else
        meson setup "$build" "$top" -Dwerror=true
fi
ninja -C "$build"
# The vm and system suites (QEMU, a kernel build on their first run) only
# when asked for by name: --suite vm, --suite system.
case " $* " in
*" --suite"*) meson test -C "$build" --print-errorlogs "$@" ;;
*) meson test -C "$build" --print-errorlogs --no-suite vm --no-suite system "$@" ;;
esac
