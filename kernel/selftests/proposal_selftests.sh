#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# In the QEMU guest on the 6.1 kernel with the provider (run-selftests.sh
# runs it): the user_events selftests of linux-source-6.1, built by
# build-proposal-selftests.sh (dyn_test.c unchanged; ftrace_test.c and
# perf_test.c with their `status_bit` named `status_index`, the one name
# they miss in the v10 header), with every one of their results compared
# with what this kernel is meant to give. Each test must pass, unless it
# is in the list below of expected differences; such a test must fail, at
# the assertion the list names, for the reason it gives (kernel/README.md,
# "How it differs, and why"). A skip, a crash, a missing result, a listed
# test that passes or fails elsewhere is a failure. Prints TAP; the
# programs' own output goes to stderr.

dir="${UE_SELFTESTS:-/usr/libexec/uebroker-vm}"

# PROGRAM TEST|the failing assertion, as the harness prints it after
# "FILE:LINE:"|why (kernel/README.md)
expected_differences='
ftrace_test user.write_events|write_events:Expected EINVAL (22) == errno (2)|a negative write index is ENOENT here, as every index this file has not registered; the revision these tests were written for answers EINVAL for a negative one
perf_test user.perf_write|perf_write:Expected 0 (0) != status_check(status_page, reg.status_bit) (0)|the status page has a byte per event (status_index; bit 1 while perf has it open), which the test reads as the bitmap of that revision (bit status_bit), so the rest of it does not run
'

n=0
ok() { n=$((n + 1)); echo "ok $n - $*"; }
not_ok() { n=$((n + 1)); echo "not ok $n - $*"; }

# listed PROGRAM TEST: "assertion|why" when TEST is an expected difference
listed() {
        printf '%s\n' "$expected_differences" | while IFS='|' read -r key at why; do
                if [ "$key" = "$1 $2" ]; then
                        printf '%s|%s\n' "$at" "$why"
                        break
                fi
        done
}

for prog in dyn_test ftrace_test perf_test; do
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
        # shellcheck disable=SC2094 # $out is only read, by the loop and by grep
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
                entry="$(listed "$prog" "$test")"
                at="${entry%%|*}"
                why="${entry#*|}"
                if [ -z "$entry" ] && [ "$got" = pass ]; then
                        ok "$prog $test: passes"
                elif [ -z "$entry" ]; then
                        not_ok "$prog $test: fails (not an expected difference)"
                elif [ "$got" = pass ]; then
                        not_ok "$prog $test: passes, but is listed as failing here ($why)"
                elif grep -qF ":$at" "$out"; then
                        ok "$prog $test: fails as expected at '$at': $why"
                else
                        not_ok "$prog $test: fails, but not at '$at' as listed"
                fi
        done < "$out"
        plan="$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$out" | head -n 1)"
        if [ -z "$plan" ] || [ "$plan" != "$results" ]; then
                not_ok "$prog: $results results for a plan of ${plan:-nothing}"
        fi
        # every listed difference of this program showed up
        printf '%s\n' "$expected_differences" | while IFS='|' read -r key at why; do
                case "$key" in
                "$prog "*)
                        case " $seen " in
                        *" ${key#"$prog "} "*) ;;
                        *) echo "$key: listed as an expected difference, but did not run" ;;
                        esac ;;
                esac
        done > /tmp/proposal_missing
        while IFS= read -r line; do
                not_ok "$line"
        done < /tmp/proposal_missing
done
echo "1..$n"
