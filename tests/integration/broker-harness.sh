#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# broker-harness.sh [--config FILE] [--writable-config FILE] [--notify] [--polkit-mock] [--state-dir]
#                   [--no-bus-stats] -- CMD ARGS...
#
# Runs CMD against a real uebrokerd on a private bus: starts a private
# dbus-daemon, starts uebrokerd on it with the embedded provider, waits for
# org.uebroker1, exports
#     UEBROKER_BUS_ADDRESS   the bus address (the contract clients use)
#     UEBROKERD_PID          the broker's pid
#     UEBROKER_HARNESS_DIR   a scratch directory removed afterwards
#     UEBROKERD_LOG          what the broker writes to stderr (also copied
#                            to the harness's stderr)
# --writable-config FILE copies FILE into the scratch directory and runs the
# broker with that copy, exported as UEBROKER_CONFIG, for tests that change
# it and reload. --notify gives the broker a NOTIFY_SOCKET and appends each
# sd_notify() message it sends to UEBROKER_NOTIFY_LOG, one per line with
# newlines as '|'. --polkit-mock runs python3-dbusmock's polkitd template
# on the private bus and gives the broker that bus as its system bus, for
# polkit only (the test allows actions with the mock's SetAllowed); it
# needs python3-dbusmock in /usr/bin/python3 (exit 77 without).
# --no-bus-stats denies everyone org.freedesktop.DBus.Debug.Stats on the
# bus (as a bus without statistics, or dbus-broker, does): the broker then
# holds no reply back (daemon/bus/delivery.h).
# --state-dir runs the broker with a state directory in the scratch
# directory, exported as UEBROKER_STATE_DIR, for tests that restart the
# broker and expect it to remember its events (as the system broker does).
# runs CMD, stops broker and bus, and exits with CMD's status.
#
# Environment:
#     UEBROKERD            the broker binary (default: the build tree's)
#     UEBROKERD_WRAPPER    a command to run it under, e.g.
#                          "valgrind --leak-check=full --error-exitcode=1"
#     UEBROKERD_ARGS       extra broker arguments (e.g. --debug)
# If the broker exits with an error after CMD succeeded (a valgrind report,
# a crash at shutdown) the harness fails.
# Exits 77 (skip) when dbus-daemon is missing.

set -u

config=""
writable_config=""
notify=""
polkit_mock=""
state_dir=""
no_bus_stats=""
while [ $# -gt 0 ]; do
        case "$1" in
        --config) config="$2"; shift 2 ;;
        --config=*) config="${1#--config=}"; shift ;;
        --writable-config) writable_config="$2"; shift 2 ;;
        --notify) notify=1; shift ;;
        --polkit-mock) polkit_mock=1; shift ;;
        --state-dir) state_dir=1; shift ;;
        --no-bus-stats) no_bus_stats=1; shift ;;
        --) shift; break ;;
        *) echo "broker-harness: unknown option $1" >&2; exit 2 ;;
        esac
done
if [ $# -eq 0 ]; then
        echo "usage: broker-harness.sh [--config FILE] -- CMD ARGS..." >&2
        exit 2
fi

if ! command -v dbus-daemon >/dev/null 2>&1; then
        echo "broker-harness: dbus-daemon is not installed, skipping" >&2
        exit 77
fi

here="$(cd "$(dirname "$0")" && pwd)"
if [ -z "${UEBROKERD:-}" ]; then
        for candidate in "$here/../../build/daemon/uebrokerd" "$here/../../daemon/uebrokerd"; do
                [ -x "$candidate" ] && UEBROKERD="$candidate" && break
        done
fi
if [ -z "${UEBROKERD:-}" ] || [ ! -x "$UEBROKERD" ]; then
        echo "broker-harness: no uebrokerd binary; set UEBROKERD" >&2
        exit 2
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-harness.XXXXXX")" || exit 2
bus_pid=""
broker_pid=""

stop() {
        # $1: pid; SIGTERM, then SIGKILL after ~10 s (valgrind is slow).
        local pid="$1" i
        [ -n "$pid" ] || return 0
        kill -TERM "$pid" 2>/dev/null || return 0
        for i in $(seq 1 100); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
}

cleanup() {
        [ -n "$broker_pid" ] && stop "$broker_pid"
        [ -n "${notify_pid:-}" ] && stop "$notify_pid"
        [ -n "${polkit_pid:-}" ] && stop "$polkit_pid"
        [ -n "$bus_pid" ] && stop "$bus_pid"
        rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

stats_policy=""
if [ -n "$no_bus_stats" ]; then
        stats_policy='<policy context="mandatory"><deny send_destination="org.freedesktop.DBus"'
        stats_policy+=' send_interface="org.freedesktop.DBus.Debug.Stats"/></policy>'
fi
cat >"$dir/bus.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:dir=$dir</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
  $stats_policy
</busconfig>
CONF

dbus-daemon --config-file="$dir/bus.conf" --print-address=3 --print-pid=4 --nofork \
        3>"$dir/address" 4>"$dir/bus.pid" </dev/null >"$dir/bus.log" 2>&1 &
bus_pid=$!

address=""
for i in $(seq 1 100); do
        address="$(head -n1 "$dir/address" 2>/dev/null)"
        [ -n "$address" ] && break
        kill -0 "$bus_pid" 2>/dev/null || break
        sleep 0.05
done
if [ -z "$address" ]; then
        echo "broker-harness: dbus-daemon did not start:" >&2
        cat "$dir/bus.log" >&2
        exit 2
fi

broker_args=(--bus-address="$address" --provider=embedded)
if [ -n "$writable_config" ]; then
        cp "$writable_config" "$dir/uebrokerd.conf" || exit 2
        config="$dir/uebrokerd.conf"
        export UEBROKER_CONFIG="$config"
fi
[ -n "$config" ] && broker_args+=(--config="$config")
if [ -n "$state_dir" ]; then
        export UEBROKER_STATE_DIR="$dir/state"
        broker_args+=(--state-dir="$UEBROKER_STATE_DIR")
fi

# The sd_notify() reader: a datagram socket, each message a line.
notify_pid=""
if [ -n "$notify" ]; then
        export UEBROKER_NOTIFY_LOG="$dir/notify.log"
        : >"$UEBROKER_NOTIFY_LOG"
        python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("ready", flush=True)
with open(sys.argv[2], "a") as log:
    while True:
        log.write(s.recv(4096).decode(errors="replace").strip("\n").replace("\n", "|") + "\n")
        log.flush()
' "$dir/notify" "$UEBROKER_NOTIFY_LOG" >"$dir/notify.ready" &
        notify_pid=$!
        for _ in $(seq 1 100); do
                [ -s "$dir/notify.ready" ] && break
                sleep 0.05
        done
        [ -S "$dir/notify" ] || { echo "broker-harness: the notify socket did not appear" >&2; exit 2; }
fi

polkit_pid=""
if [ -n "$polkit_mock" ]; then
        if ! /usr/bin/python3 -c 'import dbusmock.templates.polkitd' 2>/dev/null; then
                echo "broker-harness: python3-dbusmock is not installed, skipping" >&2
                exit 77
        fi
        DBUS_SYSTEM_BUS_ADDRESS="$address" /usr/bin/python3 -m dbusmock --system --template polkitd \
                </dev/null >"$dir/polkit.log" 2>&1 &
        polkit_pid=$!
        for _ in $(seq 1 200); do
                busctl --address="$address" status org.freedesktop.PolicyKit1 >/dev/null 2>&1 && break
                kill -0 "$polkit_pid" 2>/dev/null || break
                sleep 0.05
        done
        if ! busctl --address="$address" status org.freedesktop.PolicyKit1 >/dev/null 2>&1; then
                echo "broker-harness: the polkit mock did not start:" >&2
                cat "$dir/polkit.log" >&2
                exit 2
        fi
fi

export UEBROKERD_LOG="$dir/broker.log"
# shellcheck disable=SC2086
${notify:+env NOTIFY_SOCKET="$dir/notify"} ${polkit_mock:+env DBUS_SYSTEM_BUS_ADDRESS="$address"} ${UEBROKERD_WRAPPER:-} "$UEBROKERD" "${broker_args[@]}" ${UEBROKERD_ARGS:-} \
        </dev/null 2> >(tee "$UEBROKERD_LOG" >&2) &
broker_pid=$!

# Wait (bounded: 30 s, valgrind starts slowly) for the name to appear.
up=""
for i in $(seq 1 300); do
        if busctl --address="$address" status org.uebroker1 >/dev/null 2>&1; then
                up=1
                break
        fi
        kill -0 "$broker_pid" 2>/dev/null || break
        sleep 0.1
done
if [ -z "$up" ]; then
        echo "broker-harness: uebrokerd did not acquire org.uebroker1" >&2
        exit 2
fi

export UEBROKER_BUS_ADDRESS="$address"
export UEBROKERD_PID="$broker_pid"
export UEBROKER_HARNESS_DIR="$dir"

"$@"
status=$?

# Stop the broker first and collect its exit status: a leak or crash at
# shutdown fails the run. One that ended during CMD is said, whatever CMD
# made of it: its log above tells why.
broker_status=0
if ! kill -0 "$broker_pid" 2>/dev/null; then
        wait "$broker_pid"
        broker_status=$?
        echo "broker-harness: uebrokerd ended while the test ran, with status $broker_status" >&2
else
        kill -TERM "$broker_pid"
        for i in $(seq 1 300); do
                kill -0 "$broker_pid" 2>/dev/null || break
                sleep 0.1
        done
        if kill -0 "$broker_pid" 2>/dev/null; then
                echo "broker-harness: uebrokerd ignored SIGTERM" >&2
                kill -KILL "$broker_pid"
                wait "$broker_pid"
                broker_status=1
        else
                wait "$broker_pid"
                broker_status=$?
        fi
fi
broker_pid=""

if [ "$status" -eq 0 ] && [ "$broker_status" -ne 0 ]; then
        echo "broker-harness: uebrokerd exited with status $broker_status" >&2
        status=1
fi
exit "$status"
