#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# mutation-review.sh [--build=DIR] [--only=ID] LIST
#
# A mutation review: for each mutant of LIST (tests/mutations.list), makes
# its one-line change in the source tree, rebuilds (a build directory of
# its own, -Dwerror=false: a warning the change causes is not a catch),
# runs the tests the mutant names and counts it caught when one of them
# fails (or the tree no longer builds), survived when they all pass. The
# source file is restored after each mutant, and on any exit. Prints one
# line per mutant and the tally; exit 0 when at least the list's required
# share was caught (its "require NN%" line), else 1.
#
# LIST lines (blank lines and # comments aside):
#   require 90%
#   ID | FILE | OLD | NEW | TEST [TEST...]
# FILE relative to the source root; OLD must occur exactly once in FILE
# (the mutant is refused otherwise, so a list that drifted from the code
# says so instead of testing nothing); NEW replaces it; TEST are meson test
# names or --suite NAME. Runs as the tests need (root for the integration
# suite).
set -euo pipefail

top="$(cd "$(dirname "$0")/.." && pwd)"
build="$top/build-mutants"
only=
while [ $# -gt 1 ]; do
        case "$1" in
        --build=*) build="${1#--build=}" ;;
        --only=*) only="${1#--only=}" ;;
        *) echo "mutation-review: unknown option $1" >&2; exit 2 ;;
        esac
        shift
done
[ $# = 1 ] || { echo "usage: mutation-review.sh [--build=DIR] [--only=ID] LIST" >&2; exit 2; }
list="$1"

backup=
restore() {
        if [ -n "$backup" ]; then
                cp "$backup" "$top/$current_file"
                rm -f "$backup"
                backup=
        fi
}
trap restore EXIT INT TERM

if [ ! -f "$build/build.ninja" ]; then
        ltp=()
        [ -n "${UEBROKER_LINUXTRACEPOINTS:-}" ] && ltp=("-Dlinuxtracepoints=$UEBROKER_LINUXTRACEPOINTS")
        meson setup "$build" "$top" -Dwerror=false ${ltp[@]+"${ltp[@]}"} > "$build.setup.log" 2>&1 ||
                { cat "$build.setup.log" >&2; exit 1; }
fi
ninja -C "$build" > /dev/null || { echo "mutation-review: the unmutated tree does not build" >&2; exit 1; }

require=90
caught=0 survived=0 refused=0
while IFS= read -r line || [ -n "$line" ]; do
        case "$line" in ''|'#'*) continue ;; esac
        if [[ $line =~ ^require\ ([0-9]+)%$ ]]; then
                require=${BASH_REMATCH[1]}
                continue
        fi
        IFS='|' read -r id current_file old new tests <<< "$line"
        id="$(echo $id)"; current_file="$(echo $current_file)"
        old="${old# }"; old="${old% }"; new="${new# }"; new="${new% }"
        [ -n "$only" ] && [ "$id" != "$only" ] && continue
        n=$(grep -cF -- "$old" "$top/$current_file" || true)
        if [ "$n" != 1 ]; then
                echo "REFUSED  $id: '$old' occurs $n times in $current_file"
                refused=$((refused + 1))
                continue
        fi
        backup="$(mktemp)"
        cp "$top/$current_file" "$backup"
        OLD="$old" NEW="$new" perl -0pi -e 's/\Q$ENV{OLD}\E/$ENV{NEW}/' "$top/$current_file"
        if ! ninja -C "$build" > "$build/mutant.log" 2>&1; then
                verdict=CAUGHT why="it does not build"
        else
                # shellcheck disable=SC2086
                if meson test -C "$build" --no-rebuild --print-errorlogs $tests > "$build/mutant.log" 2>&1; then
                        verdict=SURVIVED why="$tests pass"
                else
                        verdict=CAUGHT why="$(grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|ERROR|TIMEOUT)' "$build/mutant.log" |
                                              awk '{print $4}' | sort -u | tr '\n' ' ')"
                fi
        fi
        restore
        if [ $verdict = CAUGHT ]; then caught=$((caught + 1)); else survived=$((survived + 1)); fi
        printf '%-8s %s (%s): %s\n' "$verdict" "$id" "$current_file" "$why"
done < "$list"
ninja -C "$build" > /dev/null || true

total=$((caught + survived))
echo "mutation-review: $caught of $total caught, $survived survived, $refused refused (required: $require%)"
[ $total -gt 0 ] && [ $((caught * 100)) -ge $((require * total)) ] && [ $refused = 0 ]
