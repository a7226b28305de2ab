#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# In the QEMU guest on the 6.1 kernel with the provider (run-selftests.sh
# runs it): the user_events selftests of linux-source-6.1 that build
# unchanged against the header here (dyn_test.c, built by
# build-proposal-selftests.sh), with every one of their results compared with
# what this kernel is meant to give. Each test must pass, unless it is in
# the list below of expected differences, each tied to the section of
# kernel/README.md ("How it differs, and why") that explains it; such a
# test must then fail. A skip, a crash, a missing result or a listed test
# that passes is a failure. Prints TAP; the programs' own output goes to
# stderr.

dir="${UE_SELFTESTS:-/usr/libexec/uebroker-vm}"

# PROGRAM TEST|reason (kernel/README.md)
expected_differences='
'

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }

# reason PROGRAM TEST: the listed reason, empty when TEST is to pass
reason() {
        printf '%s\n' "$expected_differences" | while IFS='|' read -r key why; do
                if [ "$key" = "$1 $2" ]; then
                        printf '%s\n' "$why"
                        break
                fi
        done
}

for prog in dyn_test; do
        bin="$dir/proposal_$prog"
        if [ ! -x "$bin" ]; then
                not_ok "$prog: not in the image (kernel/selftests/meson.build builds proposal_$prog)"
                continue
        fi
        out=/tmp/proposal_$prog.out
        timeout 90 "$bin" > "$out" 2>&1
        rc=$?
        sed "s/^/$prog: /" "$out" >&2
        [ $rc -lt 124 ] || not_ok "$prog: exited with $rc (124: time-out after 90 s, above: a signal)"
        results=0
        seen=
        while IFS= read -r line; do
                case "$line" in
                "ok "*" # SKIP"*)
                        results=$((results + 1))
                        not_ok "$prog: a test skipped:${line#*# SKIP}"
                        continue ;;
                "ok "*) got=pass ;;
                "not ok "*) got=fail ;;
                *) continue ;;
                esac
                results=$((results + 1))
                test="${line##* }"
                seen="$seen $test"
                why="$(reason "$prog" "$test")"
                if [ -z "$why" ] && [ $got = pass ]; then
                        ok "$prog $test: passes"
                elif [ -z "$why" ]; then
                        not_ok "$prog $test: fails (not an expected difference)"
                elif [ $got = fail ]; then
                        ok "$prog $test: fails as expected: $why"
                else
                        not_ok "$prog $test: passes, but is listed as failing here ($why)"
                fi
        done < "$out"
        plan="$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -n 1)"
        if [ -z "$plan" ] || [ "$plan" != "$results" ]; then
                not_ok "$prog: $results results for a plan of ${plan:-nothing}"
        fi
        # every listed difference of this program showed up
        printf '%s\n' "$expected_differences" | while IFS='|' read -r key why; do
                case "$key" in
                "$prog "*)
                        case " $seen " in
                        *" ${key#"$prog "} "*) ;;
                        *) echo "not ok - $key: listed as an expected difference, but did not run" ;;
                        esac ;;
                esac
        done > /tmp/proposal_missing
        while IFS= read -r line; do
                not_ok "${line#not ok - }"
        done < /tmp/proposal_missing
done
echo "1..$n"
