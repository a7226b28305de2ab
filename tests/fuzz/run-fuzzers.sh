#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for
# SECONDS (default 60) on a temporary copy of its seed corpus, so the
# corpus in the repository stays untouched. Exits non-zero if any target
# finds a crash, leak, sanitizer report or failed check; the offending
# inputs are kept in BUILD/fuzz-artifacts/.
#
# usage: tests/fuzz/run-fuzzers.sh [SECONDS]
# environment: FUZZ_BUILD_DIR (default: build-fuzz in the source tree)
set -euo pipefail

seconds="${1:-60}"
case "$seconds" in
        ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2 ;;
esac

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${FUZZ_BUILD_DIR:-$src/build-fuzz}"
targets=(fuzz-event-parse fuzz-event-validate fuzz-event-encode fuzz-ring-read fuzz-eventheader)

if [ ! -f "$build/build.ninja" ]; then
        CC=clang meson setup "$build" "$src" \
                -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false -Dwerror=true \
                -Dtests=disabled -Ddaemon=disabled
fi
ninja -C "$build" "${targets[@]/#/tests/fuzz/}"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"

# UBSan reports are recoverable by default: make them fatal.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"

failed=0
for target in "${targets[@]}"; do
        corpus="$work/$target"
        cp -r "$src/tests/fuzz/corpus/$target" "$corpus"
        args=(-max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$artifacts/$target-")
        if [ -f "$src/tests/fuzz/$target.dict" ]; then
                args+=(-dict="$src/tests/fuzz/$target.dict")
        fi
        echo "=== $target: ${seconds}s, seeds: $(ls "$corpus" | wc -l)"
        if "$build/tests/fuzz/$target" "${args[@]}" "$corpus" >"$work/$target.log" 2>&1; then
                grep -E '^stat::(number_of_executed_units|peak_rss_mb)' "$work/$target.log" || true
                echo "=== $target: OK (corpus grew to $(ls "$corpus" | wc -l) inputs)"
        else
                tail -n 60 "$work/$target.log"
                echo "=== $target: FAILED (inputs in $artifacts)"
                failed=1
        fi
done
exit "$failed"
