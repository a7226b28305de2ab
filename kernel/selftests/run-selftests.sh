#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The kernel provider's selftests, run as root inside the QEMU guest (as the
# vm tier's scenario: tests/vm/run-vm.sh --kernel=v1). Runs every test
# program in $UE_SELFTESTS (default /usr/libexec/uebroker-vm) with a
# time limit and prints one TAP stream: each program's checks renumbered,
# prefixed with its name, plus a "not ok" when a program fails without a
# failing check of its own (crash, time-out, missing plan), and a last
# check that the kernel logged no warning or oops. Details on stderr.

dir="${UE_SELFTESTS:-/usr/libexec/uebroker-vm}"
limit="${UE_SELFTEST_TIMEOUT:-600}"
n=0
for t in reg_test status_test write_test perf_test dyn_test format_test writer_test proposal_selftests.sh broker_v1_test broker_v1_client.sh; do
        out=/tmp/$t.tap
        start=$(date +%s)
        timeout "$limit" "$dir/$t" > "$out" 2> /tmp/$t.err
        rc=$?
        echo "selftest $t: exit $rc in $(( $(date +%s) - start )) s" >&2
        cat /tmp/$t.err >&2
        grep '^# ' "$out" >&2
        failed=0
        while IFS= read -r line; do
                case "$line" in
                "ok "*)
                        n=$((n + 1)); echo "ok $n - $t: ${line#ok * - }" ;;
                "not ok "*)
                        n=$((n + 1)); failed=1; echo "not ok $n - $t: ${line#not ok * - }" ;;
                esac
        done < "$out"
        if [ $rc != 0 ] && [ $failed = 0 ]; then
                n=$((n + 1)); echo "not ok $n - $t: exited with $rc (124: time-out after $limit s) without a failing check"
        elif ! grep -q '^1\.\.[0-9]' "$out"; then
                n=$((n + 1)); echo "not ok $n - $t: printed no plan"
        fi
done
# a kernel warning or oops during the tests fails the run, whatever the checks said
n=$((n + 1))
if dmesg | grep -Eq 'WARNING:|BUG:|Oops|Call Trace|user_events_v1'; then
        echo "not ok $n - the kernel log has no warning, oops or user_events_v1 message"
        dmesg | grep -E -B2 -A25 'WARNING:|BUG:|Oops|Call Trace|user_events_v1' | head -n 80 >&2
else
        echo "ok $n - the kernel log has no warning, oops or user_events_v1 message"
fi
echo "1..$n"
