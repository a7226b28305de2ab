#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# On a bus that gives the broker no connection statistics
# (broker-harness.sh --no-bus-stats, as dbus-broker), the broker says so
# once and holds nothing back (daemon/bus/delivery.h): busctl and libuebroker
# work, and nothing is pinned.
#
#     test-no-bus-stats.sh TEST_LIBUEBROKER
set -eu

test_libuebroker="$1"
bus=(--address="$UEBROKER_BUS_ADDRESS")

for i in 1 2 3; do
        busctl "${bus[@]}" call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s "no_stats_$i u32 a" \
                >/dev/null
done
# A client that stays, so the broker's question about it cannot find it
# gone: it registers and holds its connection until its stdin closes.
coproc holder {
        /usr/bin/python3 -c '
import sys, dbus
conn = dbus.bus.BusConnection(sys.argv[1])
conn.call_blocking("org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "Register", "s", ("no_stats_held u32 a",),
                   timeout=60)
print("registered", flush=True)
sys.stdin.read()
' "$UEBROKER_BUS_ADDRESS"
}
# bash unsets holder_PID once the coproc has ended: keep it now.
# shellcheck disable=SC2154 # set by coproc
holder_pid=$holder_PID
read -r -t 60 line <&"${holder[0]}" || true
[ "${line:-}" = registered ] || { echo "test-no-bus-stats: the holding client did not register" >&2; exit 1; }
# The bus's refusal of the statistics comes back after the reply went
# out: wait for it (the broker may run under valgrind).
fell_back() { grep -q 'The bus gives no connection statistics to the broker' "$UEBROKERD_LOG"; }
for i in $(seq 1 200); do
        fell_back && break
        sleep 0.1
done
fell_back || {
        echo "test-no-bus-stats: the broker did not say it gets no statistics:" >&2
        cat "$UEBROKERD_LOG" >&2
        busctl "${bus[@]}" get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker Delivery >&2
        exit 1
}
delivery() {
        busctl "${bus[@]}" get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker Delivery
}
field() {
        sed -n "s/.*\"$1\" \([0-9]*\).*/\1/p" <<<"$2"
}
# Nothing pinned, nothing waiting.
settled() {
        [ "$(field pinned-fds "$1")" = 0 ] && [ "$(field pinned-connections "$1")" = 0 ] &&
                [ "$(field waiting "$1")" = 0 ]
}
for i in $(seq 1 200); do
        d="$(delivery)"
        settled "$d" && break
        sleep 0.1
done
echo "Delivery: $d"
if ! settled "$d" || [ "$(field bus-statistics "$d")" != 0 ]; then
        echo "test-no-bus-stats: replies stay pinned, or statistics were used: $d" >&2
        exit 1
fi
kill "$holder_pid" 2>/dev/null
wait "$holder_pid" 2>/dev/null || true
# Last: it restarts the broker.
"$test_libuebroker"
