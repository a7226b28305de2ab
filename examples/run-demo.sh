#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-demo.sh: the main job, end to end, on this machine.
#
# Installs the build dependencies if needed (apt-get, as root), builds into
# build/, starts uebrokerd on a private D-Bus bus with the embedded provider
# (it needs no user_events in the kernel), runs examples/hello-events, which
# writes hello_tick events only while someone listens, and shows them decoded
# with `uebctl record`.

set -eu

top="$(cd "$(dirname "$0")/.." && pwd)"
build="${UEBROKER_BUILD_DIR:-$top/build}"

"$top/build-aux/install-deps.sh"
[ -f "$build/build.ninja" ] || meson setup "$build" "$top" >/dev/null
ninja -C "$build" >/dev/null

export UEBROKERD="$build/daemon/uebrokerd"
export UEBCTL="$build/tools/uebctl"
export HELLO="$build/examples/hello-events"

exec "$top/tests/integration/broker-harness.sh" -- bash -c '
set -eu
echo "== uebrokerd is serving org.uebroker1 on a private bus: $UEBROKER_BUS_ADDRESS"
echo -n "== provider: "
busctl --address="$UEBROKER_BUS_ADDRESS" get-property org.uebroker1 /org/uebroker1 \
        org.uebroker1.Broker Provider

echo "== hello-events registers hello_tick and writes only while someone listens"
"$HELLO" --count=40 --interval=100 &
hello=$!
for i in $(seq 1 50); do
        "$UEBCTL" list | grep -q "^hello_tick" && break
        sleep 0.1
done
"$UEBCTL" list
echo
"$UEBCTL" status
echo
echo "== uebctl record hello_tick (10 records), decoded with the event format"
"$UEBCTL" record --count=10 hello_tick
wait "$hello"
echo
echo "== after the recorder left, the status byte is clear again:"
"$UEBCTL" status
'
