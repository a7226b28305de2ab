#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# run-bench.sh BUILD_DIR [COMMAND ARGS...]
#
# Runs every benchmark of bench/ once against a broker on a private bus
# configured like a stock system bus, and prints each figure beside its
# baseline measured in the same run (see bench/README.md):
#   - a private dbus-daemon with <type>system</type>, Debian's default-deny
#     policy (/usr/share/dbus-1/system.conf), the project's
#     dbus/org.uebroker1.conf through <include>, and stock limits except
#     max_completed_connections and max_connections_per_user (10000 each,
#     so that 5000 clients fit; stock: 2048 in all, 256 per user);
#   - uebrokerd --system --provider=embedded --state-dir=TMP, with
#     DBUS_SYSTEM_BUS_ADDRESS pointing at that bus (polkit is asked there;
#     the callers here are root, which needs no polkit), and a config that
#     raises ClientsPerUser= to 8192 (default 64) so that one uid may hold
#     5000 connections with registrations;
#   - bench-floor-service, the no-work stand-in, owning
#     org.uebroker1.BenchFloor on the same bus;
#   - tracefs for bench-ring-write's and bench-ring-rates' trace_marker
#     baseline: the mounted one, or one mounted in the temporary directory
#     for the run (unmounted at the end) when none is and the mount succeeds;
#   - for those two benches, when lttng-tools is installed, a session daemon
#     of our own (user space only) and a session recording their tracepoint.
# With COMMAND, runs only COMMAND in that setting instead (to profile one
# bench: UEBROKER_BUS_ADDRESS, DBUS_SYSTEM_BUS_ADDRESS, UEBROKERD_PID and
# DBUS_DAEMON_PID are exported), with the LTTng session and tracefs set up
# as for the ring benches.
# Run it as root: the figures are for a root caller.
# Exits 77 (skip) when dbus-daemon is missing.

set -u

if [ $# -lt 1 ] || [ ! -d "$1" ]; then
        echo "usage: run-bench.sh BUILD_DIR [COMMAND ARGS...]" >&2
        exit 2
fi
build="$(cd "$1" && pwd)"
shift
src="$(cd "$(dirname "$0")/.." && pwd)"
for b in daemon/uebrokerd bench/bench-floor-service bench/bench-clients bench/bench-latency bench/bench-register \
         bench/bench-embedded-write bench/bench-ring-write bench/bench-ring-rates bench/bench-typed-write bench/bench-disabled-check bench/bench-decode \
         bench/bench-preload-write bench/bench-preload-syscalls bench/bench-state-save run/uebroker-run; do
        if [ ! -x "$build/$b" ]; then
                echo "run-bench: $build/$b is missing; build first (ninja -C $build)" >&2
                exit 2
        fi
done
if ! command -v dbus-daemon >/dev/null 2>&1; then
        echo "run-bench: dbus-daemon is not installed, skipping" >&2
        exit 77
fi
if [ "$(id -u)" -ne 0 ]; then
        echo "run-bench: run as root (the figures are for a root caller, and the bus is a system bus)" >&2
        exit 2
fi

dir="$(mktemp -d "${TMPDIR:-/tmp}/uebroker-bench.XXXXXX")" || exit 2
chmod 0755 "$dir"
bus_pid=""
broker_pid=""
floor_pid=""
lttng_pid=""
lttng_runs=0
tracefs_mounted=""

stop() {
        local pid="$1" _
        [ -n "$pid" ] || return 0
        kill -TERM "$pid" 2>/dev/null || return 0
        for _ in $(seq 1 50); do
                kill -0 "$pid" 2>/dev/null || return 0
                sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null
}

cleanup() {
        if [ -n "$lttng_pid" ]; then
                lttng destroy ueb-bench >/dev/null 2>&1
                stop "$lttng_pid"
        fi
        stop "$floor_pid"
        stop "$broker_pid"
        stop "$bus_pid"
        # Never rm -rf through a mounted tracefs (instances are global).
        if [ -n "$tracefs_mounted" ] && ! umount "$tracefs_mounted"; then
                echo "run-bench: cannot unmount $tracefs_mounted; leaving $dir" >&2
                return
        fi
        rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

socket="$dir/system_bus_socket"
cat >"$dir/system.conf" <<CONF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <auth>EXTERNAL</auth>
  <listen>unix:path=$socket</listen>

  <!-- Debian's /usr/share/dbus-1/system.conf default policy. -->
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus" />
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Properties"/>
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Containers1"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus"
          send_member="UpdateActivationEnvironment"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.DBus.Debug.Stats"/>
    <deny send_destination="org.freedesktop.DBus"
          send_interface="org.freedesktop.systemd1.Activator"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Monitoring"/>
  </policy>
  <!-- As Debian's: root may read the bus's statistics, which the broker
       asks for to confirm that its replies left the bus. -->
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus"
           send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>

  <!-- The bench's stand-in service, given the same rules as the broker. -->
  <policy user="root">
    <allow own="org.uebroker1.BenchFloor"/>
  </policy>
  <policy context="default">
    <allow send_destination="org.uebroker1.BenchFloor"
           send_interface="org.uebroker1.BenchFloor"/>
    <allow send_destination="org.uebroker1.BenchFloor"
           send_interface="org.freedesktop.DBus.Peer"/>
  </policy>

  <!-- The project's own policy, as installed. -->
  <include>$src/dbus/org.uebroker1.conf</include>

  <!-- The only limits raised from the stock values (2048 and 256). -->
  <limit name="max_completed_connections">10000</limit>
  <limit name="max_connections_per_user">10000</limit>
</busconfig>
CONF

cat >"$dir/uebrokerd.conf" <<CONF
# One uid (root) holds 5000 connections with registrations in bench-clients.
[Limits]
ClientsPerUser=8192
CONF

dbus-daemon --config-file="$dir/system.conf" --nofork --print-pid=4 4>"$dir/bus.pid" </dev/null \
        >"$dir/bus.log" 2>&1 &
bus_pid=$!
address="unix:path=$socket"
for _ in $(seq 1 100); do
        [ -S "$socket" ] && break
        kill -0 "$bus_pid" 2>/dev/null || break
        sleep 0.05
done
if [ ! -S "$socket" ]; then
        echo "run-bench: dbus-daemon did not start:" >&2
        cat "$dir/bus.log" >&2
        exit 2
fi

wait_name() {
        # $1: bus name, $2: pid of its owner
        local _
        for _ in $(seq 1 100); do
                busctl --address="$address" status "$1" >/dev/null 2>&1 && return 0
                kill -0 "$2" 2>/dev/null || break
                sleep 0.1
        done
        echo "run-bench: $1 did not appear on the bus" >&2
        return 1
}

export DBUS_SYSTEM_BUS_ADDRESS="$address"
export UEBROKER_BUS_ADDRESS="$address"
mkdir -m 0755 "$dir/state"
"$build/daemon/uebrokerd" --system --provider=embedded --state-dir="$dir/state" --config="$dir/uebrokerd.conf" \
        </dev/null 2>"$dir/broker.log" &
broker_pid=$!
wait_name org.uebroker1 "$broker_pid" || { cat "$dir/broker.log" >&2; exit 2; }
"$build/bench/bench-floor-service" </dev/null &
floor_pid=$!
wait_name org.uebroker1.BenchFloor "$floor_pid" || exit 2
export UEBROKERD_PID="$broker_pid"
export DBUS_DAEMON_PID="$bus_pid"

# LTTng-UST's tracepoint beside the ring, when lttng-tools can record it: a
# session daemon of our own (user space only), one session recording the
# bench's tracepoint into the temporary directory.
lttng_start() {
        local _
        if ! command -v lttng-sessiond >/dev/null 2>&1 || ! command -v lttng >/dev/null 2>&1; then
                echo "run-bench: lttng-tools is not installed: no LTTng-UST figure (bench-ring-write and bench-ring-rates say so)"
                return 0
        fi
        export LTTNG_HOME="$dir/lttng"
        mkdir -p "$LTTNG_HOME"
        lttng_runs=$((lttng_runs + 1))
        lttng-sessiond --no-kernel >"$dir/lttng-sessiond.$lttng_runs.log" 2>&1 &
        lttng_pid=$!
        for _ in $(seq 1 50); do
                lttng list >/dev/null 2>&1 && break
                sleep 0.1
        done
        if ! { lttng create ueb-bench --output="$dir/lttng-trace.$lttng_runs" &&
               lttng enable-event --userspace 'uebroker_bench:*' && lttng start; } >"$dir/lttng.log" 2>&1; then
                echo "run-bench: could not start an LTTng session (the benches say so):" >&2
                cat "$dir/lttng.log" >&2
        fi
}

# Stops the session, printing what LTTng says it discarded (during $1),
# and its daemon.
lttng_stop() {
        [ -n "$lttng_pid" ] || return 0
        lttng stop ueb-bench 2>&1 | grep -i -E 'discarded|lost' | sed "s/^/run-bench: LTTng session during $1: /"
        lttng destroy ueb-bench >/dev/null 2>&1
        stop "$lttng_pid"
        lttng_pid=""
}

# trace_marker, the kernel's own marker, as the writer's baseline.
tracefs_setup() {
        grep -q ' tracefs ' /proc/mounts && return 0
        mkdir -p "$dir/tracefs"
        if mount -t tracefs nodev "$dir/tracefs" 2>"$dir/tracefs.log"; then
                tracefs_mounted="$dir/tracefs"
                export UEB_BENCH_TRACEFS="$tracefs_mounted"
        else
                echo "run-bench: cannot mount tracefs ($(cat "$dir/tracefs.log")): no trace_marker figure"
        fi
}

if [ $# -gt 0 ]; then
        lttng_start
        tracefs_setup
        "$@"
        rc=$?
        lttng_stop "$(basename "$1")"
        exit "$rc"
fi

buildtype="$(python3 -c 'import json, sys
print(next(o["value"] for o in json.load(open(sys.argv[1])) if o["name"] == "buildtype"))' \
        "$build/meson-info/intro-buildoptions.json" 2>/dev/null || echo unknown)"
echo "== uebroker benches: $(nproc) CPUs, Linux $(uname -r), $buildtype build"
echo "== private system bus: stock limits and Debian's default-deny policy, except max_completed_connections=10000"
echo "   and max_connections_per_user=10000 (stock: 2048, 256); uebrokerd --system --provider=embedded,"
echo "   ClientsPerUser=8192 (default 64); all callers root (uid 0, no polkit check); fd limit $(ulimit -Hn) (hard)"

status=0
run() {
        echo
        echo "== $*"
        "$@" || { echo "run-bench: $1 failed" >&2; status=1; }
}
# The footprint first, on a fresh broker.
run "$build/bench/bench-clients" 5000
run "$build/bench/bench-latency" 20000
run "$build/bench/bench-register" 20000
run "$build/bench/bench-embedded-write" 300000
run "$build/bench/bench-typed-write" 300000
# A program of the kernel interface through uebroker-run vs ueb_write().
UEBROKER_PRELOAD="$build/run/libuebroker-preload.so" run "$build/run/uebroker-run" \
        "$build/bench/bench-preload-write" 0.5
# What the preload adds to calls on files that are not user_events.
run "$build/bench/bench-preload-syscalls" "$build/run/libuebroker-preload.so" 200000
# The ring benches, with LTTng-UST's tracepoint and trace_marker beside them
# (a session each, so that what LTTng discarded is told per bench).
tracefs_setup
lttng_start
run "$build/bench/bench-ring-write" 1000000
lttng_stop bench-ring-write
# Paced at 1k to 1M events/s; the idle test for 10 s (the
# issue's figure is for 60 s: run-bench.sh BUILD_DIR bench-ring-rates 60).
lttng_start
run "$build/bench/bench-ring-rates" 10
lttng_stop bench-ring-rates
run "$build/bench/bench-disabled-check" 300000000
run "$build/bench/bench-state-save"
run "$build/bench/bench-decode" 2000000
# EventHeader decoding vs LinuxTracepoints' library, when meson built it
# (-Dlinuxtracepoints=PATH); the test file comes from the same checkout.
lt_src="$(meson introspect --buildoptions "$build" 2>/dev/null |
          /usr/bin/python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "linuxtracepoints"))' 2>/dev/null)"
if [ -x "$build/tests/integration/eventheader-decode-dat-utest" ] && [ -n "$lt_src" ]; then
        run "$build/bench/bench-eventheader-decode" "$build/tests/integration/eventheader-dat-json" \
                "$build/tests/integration/eventheader-decode-dat-utest" "$lt_src/TestOutput/EventHeaderInterceptorLE64.dat"
else
        echo "run-bench: bench-eventheader-decode left out: no LinuxTracepoints build (meson -Dlinuxtracepoints=PATH)"
fi
# Hostile clients beside honest ones, on a bus of its own with stock
# limits (the hostile test's setting), against the broker of this build.
run /usr/bin/python3 "$src/bench/bench-noisy-neighbour.py" --broker "$build/daemon/uebrokerd" --source-root "$src"
if ! kill -0 "$broker_pid" 2>/dev/null; then
        echo "run-bench: uebrokerd died during the run:" >&2
        tail -20 "$dir/broker.log" >&2
        status=1
fi
exit "$status"
