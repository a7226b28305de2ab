#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# An unprivileged libuebroker client (tests/vm/vm-client, uid 1000) on the
# v1 provider: it registers through the broker, its data descriptor is a
# write-only handle, it sees the event enabled through the kernel's status
# page, its record reaches the trace and a short payload is refused by the
# kernel. TAP on stdout, as the C selftests.
T=/sys/kernel/tracing
EV=bv2
CMD="$EV u32 a; char[8] b"
n=0
check() { text="$1"; shift; n=$((n + 1)); if "$@" >&2; then echo "ok $n - $text"; else echo "not ok $n - $text"; fi; }
waitfor() { w=$1; shift; while [ "$w" -gt 0 ]; do "$@" && return 0; sleep 0.1; w=$((w - 1)); done; return 1; }

out=/tmp/bv2-client.out
: > /sys/kernel/tracing/trace
su -s /bin/sh tester -c "vm-client '$CMD' fds wait-enabled 30 write a=7 b=client raw 01 hold > $out 2>&1 &"
waitfor 100 grep -q '^registered\|^register failed' $out
check "uid 1000 registers '$CMD' through the broker with libuebroker" grep -q '^registered' $out
check "its data descriptor is the write-only handle" grep -q "^fd [0-9]* -> anon_inode:\[user_events_writer\]\$" $out
pid=$(pidof vm-client)
check "it maps the kernel's user_events_status" grep -q " $T/user_events_status\$" /proc/"$pid"/maps
echo 1 > $T/events/user_events/$EV/enable
waitfor 100 grep -q '^raw' $out
cat $out >&2
check "it sees the event enabled (the kernel's page)" grep -q '^enabled 1' $out
check "its write succeeds" grep -q '^write 0$' $out
check "its record is in the trace: '$EV: a=7 b=client'" grep -q " $EV: a=7 b=client\$" $T/trace
check "a 1-byte payload is refused by the kernel with EINVAL" grep -q '^raw -22 ' $out
echo 0 > $T/events/user_events/$EV/enable
[ -n "$pid" ] && kill -KILL "$pid"
echo "1..$n"
