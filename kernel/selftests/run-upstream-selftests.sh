#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# The 6.12 selftests, run as root inside the QEMU guest (the vm tier's
# scenario: tests/vm/run-vm.sh --kernel=upstream|patched). Runs
# linux-source-6.12's own user_events selftests (ftrace, dyn, perf, abi;
# built unchanged) and handle_test (restricted handles; with --stock on the
# stock kernel, where the handle requests must be ENOTTY), and prints one
# TAP stream: each program's checks renumbered and prefixed with its name, a
# "not ok" when a program fails without a failing check of its own, and a
# last check that the kernel logged no warning or oops. Which kernel it is
# comes from the command line run-vm.sh gives it (uebroker.kernel=...).

dir="${UE_SELFTESTS:-/usr/libexec/uebroker-vm}"
limit="${UE_SELFTEST_TIMEOUT:-300}"
kind=$(sed -n 's/.*uebroker\.kernel=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
n=0
echo "kernel: ${kind:-unknown} ($(uname -r))" >&2
for t in ue612_ftrace_test ue612_dyn_test ue612_perf_test ue612_abi_test handle_test; do
	args=
	[ "$t" = handle_test ] && [ "$kind" != patched ] && args=--stock
	out=/tmp/$t.tap
	start=$(date +%s)
	timeout "$limit" "$dir/$t" $args > "$out" 2> /tmp/$t.err
	rc=$?
	echo "selftest $t $args: exit $rc in $(( $(date +%s) - start )) s" >&2
	cat /tmp/$t.err >&2
	grep '^#' "$out" >&2
	failed=0
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*)
			# kselftest skips: a test that cannot run here fails the tier
			n=$((n + 1)); failed=1; echo "not ok $n - $t: skipped: ${line#ok * }" ;;
		"ok "*)
			n=$((n + 1)); echo "ok $n - $t: $(echo "${line#ok }" | sed 's/^[0-9]* *-* *//')" ;;
		"not ok "*)
			n=$((n + 1)); failed=1; echo "not ok $n - $t: $(echo "${line#not ok }" | sed 's/^[0-9]* *-* *//')" ;;
		esac
	done < "$out"
	if [ $rc != 0 ] && [ $failed = 0 ]; then
		n=$((n + 1)); echo "not ok $n - $t: exited with $rc (124: time-out after $limit s) without a failing check"
	elif ! grep -q '^1\.\.[0-9]' "$out"; then
		n=$((n + 1)); echo "not ok $n - $t: printed no plan"
	fi
done
n=$((n + 1))
if dmesg | grep -Eq 'WARNING:|BUG:|Oops|Call Trace|user_events:'; then
	echo "not ok $n - the kernel log has no warning, oops or user_events message"
	dmesg | grep -E -B2 -A25 'WARNING:|BUG:|Oops|Call Trace|user_events:' | head -n 80 >&2
else
	echo "ok $n - the kernel log has no warning, oops or user_events message"
fi
echo "1..$n"
