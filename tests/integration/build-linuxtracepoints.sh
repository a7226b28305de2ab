#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# build-linuxtracepoints.sh [--depfile=FILE] [--build-type=TYPE] SRC_DIR BUILD_DIR OUTPUT...
#
# Builds programs of LinuxTracepoints (github.com/microsoft/LinuxTracepoints:
# a checkout at SRC_DIR, which meson's -Dlinuxtracepoints=PATH names; CI
# passes ../shared/thirdparty/LinuxTracepoints), unmodified, with its own
# CMake build, out of tree in BUILD_DIR, and copies each to OUTPUT: the
# CMake target is OUTPUT's file name (tracepoint-api-sample,
# eventheader-provider-sample, perf-collect, perf-decode, the unit tests
# tracepoint-api-utest and tracepoint-provider-utest, ...). Only those
# targets are built: a plain build of everything stops on Debian 12 at
# eventheader-decode-live-sample, whose libtracefs header does not compile
# as C++ there. BUILD_DIR is configured once; later runs only build what
# changed. Nothing of it is copied into this repository.
#
# --build-type=TYPE is CMake's CMAKE_BUILD_TYPE (Release, Debug, ...; empty:
# CMake's plain build, no optimisation), meson's buildtype translated, so
# that the bench compares optimised code with optimised code.
#
# --depfile=FILE writes a Makefile-style depfile naming every file under
# SRC_DIR but its .git and TestOutput, for the meson custom target that
# runs this script (ninja then reruns it only when one of them changed).
#
# Needs cmake and a C++ compiler (Debian: cmake g++); exits 77 saying which
# is missing. Output of CMake goes to BUILD_DIR/build.log, shown on failure.

set -euo pipefail

depfile=
build_type=
while :; do
        case "${1:-}" in
        --depfile=*) depfile="${1#--depfile=}"; shift ;;
        --build-type=*) build_type="${1#--build-type=}"; shift ;;
        *) break ;;
        esac
done
[ $# -ge 3 ] || { echo "usage: $0 [--depfile=FILE] [--build-type=TYPE] SRC_DIR BUILD_DIR OUTPUT..." >&2; exit 2; }
src="$(cd "$1" && pwd)"
build="$2"
shift 2

command -v cmake >/dev/null || { echo "build-linuxtracepoints: cmake is missing (apt-get install cmake)" >&2; exit 77; }
# CMake's choice of compiler: $CXX, else c++, else g++
cxx="${CXX:-}"
if [ -z "$cxx" ]; then
        for c in c++ g++; do
                command -v "$c" >/dev/null && { cxx="$c"; break; }
        done
fi
[ -n "$cxx" ] && command -v "${cxx%% *}" >/dev/null ||
        { echo "build-linuxtracepoints: no C++ compiler (apt-get install g++)" >&2; exit 77; }

mkdir -p "$build"
build="$(cd "$build" && pwd)"
log="$build/build.log"
: > "$log"
run() {
        if ! "$@" >> "$log" 2>&1; then
                echo "build-linuxtracepoints: failed: $*" >&2
                cat "$log" >&2
                exit 1
        fi
}

# Configure once (the generated build reconfigures itself when a
# CMakeLists.txt changes); again if BUILD_DIR was configured for another
# source tree.
if ! grep -qxF "CMAKE_HOME_DIRECTORY:INTERNAL=$src" "$build/CMakeCache.txt" 2>/dev/null ||
   ! grep -qxF "CMAKE_BUILD_TYPE:STRING=$build_type" "$build/CMakeCache.txt"; then
        rm -rf "$build/CMakeCache.txt" "$build/CMakeFiles"
        generator=()
        command -v ninja >/dev/null && generator=(-G Ninja)
        # BUILD_TESTING: libtracepoint's unit tests are among the targets.
        run cmake "${generator[@]}" -S "$src" -B "$build" -DBUILD_TESTING=ON -DCMAKE_BUILD_TYPE="$build_type"
fi

targets=()
for out in "$@"; do
        targets+=("$(basename "$out")")
done
run cmake --build "$build" --parallel "$(nproc)" --target "${targets[@]}"

for out in "$@"; do
        # A fresh file (and modification time) at OUTPUT, never a half one.
        cp "$build/bin/$(basename "$out")" "$out.tmp"
        mv -f "$out.tmp" "$out"
done

if [ -n "$depfile" ]; then
        {
                printf '%s:' "$1"
                find "$src" \( -name .git -o -name TestOutput \) -prune -o -type f -print | LC_ALL=C sort |
                while IFS= read -r f; do
                        printf ' \\\n  %s' "${f// /\\ }"
                done
                printf '\n'
        } > "$depfile.tmp"
        mv -f "$depfile.tmp" "$depfile"
fi
