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
# LinuxTracepoints, whose programs the uebroker-run tests run unchanged:
# UEBROKER_LINUXTRACEPOINTS, else a checkout beside this one in
# ../shared/thirdparty (where CI has it). Without one those tests skip,
# saying so.
options=(-Dwerror=true)
ltp="${UEBROKER_LINUXTRACEPOINTS:-$top/../shared/thirdparty/LinuxTracepoints}"
if [ -f "$ltp/CMakeLists.txt" ]; then
        options+=("-Dlinuxtracepoints=$(cd "$ltp" && pwd)")
else
        echo "run-tests: no LinuxTracepoints checkout at $ltp (UEBROKER_LINUXTRACEPOINTS=PATH names one): the tests of its programs will skip" >&2
fi
# Warnings are errors in every build the project runs (the default is off
# for distributions: docs/DECISIONS.md).
if [ -f "$build/build.ninja" ]; then
        meson configure "$build" "${options[@]}"
else
        meson setup "$build" "$top" "${options[@]}"
fi
ninja -C "$build"
# The vm and system suites (QEMU, a kernel build on their first run) only
# when asked for by name: --suite vm, --suite system.
case " $* " in
*" --suite"*) meson test -C "$build" --print-errorlogs "$@" ;;
*) meson test -C "$build" --print-errorlogs --no-suite vm --no-suite system "$@" ;;
esac
