#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# On a bus that gives the broker no connection statistics
# (broker-harness.sh --no-bus-stats), deliveries are confirmed with
# org.freedesktop.DBus.Peer.Ping (daemon/delivery.h): libuebroker, whose
# thread reads its bus, and busctl, which leaves after its reply, keep
# working, and nothing stays pinned once they are gone.
#
#     test-ping-fallback.sh TEST_LIBUEBROKER
set -eu

test_libuebroker="$1"
bus=(--address="$UEBROKER_BUS_ADDRESS")

for i in 1 2 3; do
        busctl "${bus[@]}" call org.uebroker1 /org/uebroker1 org.uebroker1.Broker Register s "ping_fallback_$i u32 a" \
                >/dev/null
done
# The bus's refusal of the statistics comes back after the reply went
# out: wait for it (the broker may run under valgrind).
fell_back() { grep -q 'confirming deliveries with org.freedesktop.DBus.Peer.Ping instead' "$UEBROKERD_LOG"; }
for i in $(seq 1 200); do
        fell_back && break
        sleep 0.1
done
fell_back || {
        echo "test-ping-fallback: the broker did not fall back to Peer.Ping:" >&2
        cat "$UEBROKERD_LOG" >&2
        exit 1
}
delivery() {
        busctl "${bus[@]}" get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker Delivery
}
field() {
        sed -n "s/.*\"$1\" \([0-9]*\).*/\1/p" <<<"$2"
}
# Done once busctl's connections are gone (the broker learns it from
# NameOwnerChanged): nothing pinned but the reading call's own reply (one
# connection, no descriptors).
settled() {
        [ "$(field pinned-fds "$1")" = 0 ] && [ "$(field pinned-connections "$1")" -le 1 ] &&
                [ "$(field waiting "$1")" = 0 ]
}
for i in $(seq 1 200); do
        d="$(delivery)"
        settled "$d" && break
        sleep 0.1
done
echo "Delivery: $d"
if ! settled "$d" || [ "$(field bus-statistics "$d")" != 0 ]; then
        echo "test-ping-fallback: replies stay pinned, or statistics were used: $d" >&2
        exit 1
fi
# Last: it restarts the broker.
"$test_libuebroker"
