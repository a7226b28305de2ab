#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-builds.sh [WORKDIR]
#
# Compiles the whole tree (daemon, client, tools, tests, bench, kernel
# selftests) the ways packagers and developers build it, each with
# warnings as errors, and runs nothing: the suites run once, on the main
# build (.ci/run). Fails on the first build that warns.
#
#   gcc-O0     meson's debug build type
#   gcc-O3     -Dbuildtype=release, as `meson setup` users pick for a package
#   gcc-dpkg   Debian's flags as dh_auto_configure passes them: buildtype
#              plain, CFLAGS/CPPFLAGS/LDFLAGS from dpkg-buildflags with
#              DEB_BUILD_MAINT_OPTIONS=hardening=+all (-O2,
#              _FORTIFY_SOURCE=2, stack protector, relro/now)
#   clang      Debian's clang, the project's default build type
#   clang-fuzz the libFuzzer targets, as tests/fuzz/run-fuzzers.sh builds
#              them (clang, ASan + UBSan), so that a change to what they
#              call fails here and not after the suites
#
# WORKDIR (default: build-check/ in the source tree) holds one build
# directory per way, each removed once it has built.

set -euo pipefail

top="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$top/build-check}"

# -Dtests=enabled: a missing Check must fail here, not drop the tests
# from what is compiled.
common=(-Dwerror=true -Dtests=enabled)

build() {
        local name="$1"
        shift
        local dir="$work/$name" start=$SECONDS

        rm -rf "$dir"
        echo "check-builds: $name: $*"
        if ! env "$@" >"$work/$name.log" 2>&1; then
                cat "$work/$name.log" >&2
                echo "check-builds: $name: meson setup failed" >&2
                return 1
        fi
        if ! ninja -C "$dir" >>"$work/$name.log" 2>&1; then
                grep -E -B2 -A12 'error:|warning:' "$work/$name.log" >&2 || tail -n 60 "$work/$name.log" >&2
                echo "check-builds: $name: the build failed (whole log: $work/$name.log)" >&2
                return 1
        fi
        # Warnings are errors; a warning that got through anyway (a flag
        # outside -Werror's reach) fails too.
        if grep -E ': warning:' "$work/$name.log" >&2; then
                echo "check-builds: $name: warnings above" >&2
                return 1
        fi
        rm -rf "$dir"
        echo "check-builds: $name: clean ($((SECONDS - start)) s)"
}

command -v dpkg-buildflags >/dev/null || { echo "check-builds: dpkg-buildflags missing (apt-get install dpkg-dev)" >&2; exit 1; }
command -v clang >/dev/null || { echo "check-builds: clang missing (apt-get install clang)" >&2; exit 1; }
mkdir -p "$work"

deb_flags() {
        DEB_BUILD_MAINT_OPTIONS=hardening=+all dpkg-buildflags --get "$1"
}

build gcc-O0 CC=gcc meson setup "$work/gcc-O0" "$top" -Dbuildtype=debug "${common[@]}"
build gcc-O3 CC=gcc meson setup "$work/gcc-O3" "$top" -Dbuildtype=release "${common[@]}"
build gcc-dpkg CC=gcc CFLAGS="$(deb_flags CFLAGS) $(deb_flags CPPFLAGS)" LDFLAGS="$(deb_flags LDFLAGS)" \
        meson setup "$work/gcc-dpkg" "$top" -Dbuildtype=plain "${common[@]}"
build clang CC=clang meson setup "$work/clang" "$top" "${common[@]}"
build clang-fuzz CC=clang meson setup "$work/clang-fuzz" "$top" -Dfuzz=true -Db_sanitize=address,undefined \
        -Db_lundef=false -Dwerror=true -Dtests=disabled -Ddaemon=disabled
echo "check-builds: every way compiled without a warning"
