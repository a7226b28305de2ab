# SPDX-License-Identifier: LGPL-2.1-or-later
# Sourced (bash) by the tests that run uebctl record beside a broker
# (test-uebctl.sh, test-uebctl-ctf.sh, test-uebctl-tracedat.sh,
# test-kernelshark.sh): their check lines, and recorders started in the
# background.
#     ok TEXT / fail TEXT    one line each; fail counts into $failures
#     pids+=(PID)            killed when the test exits, if still running
#     wait_recording FILE PID   waits (bounded) for the recorder PID's
#                            "Recording" line in FILE, its own stderr
#     wait_exit PID          waits (bounded) for PID; returns its status
#     record_through_loss NAME ERR -o PATH...
#                            a recording that loses records: "$UEBCTL"
#                            record -o PATH... NAME (stderr to ERR) is
#                            stopped (SIGSTOP) once attached while 40
#                            records of NAME ("NAME u32 i; __data_loc
#                            char[] s", s 30000 bytes) fill its stream, so
#                            the broker drops what no longer fits; then it
#                            reads again, one small record (i=99 s=after)
#                            follows, and SIGTERM ends it. Returns its exit
#                            status.
#     finish                 prints the count of failures; its status is 0
#                            when there were none

failures=0
pids=()
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
kill_recorders() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap kill_recorders EXIT
wait_recording() {
        for _ in $(seq 1 200); do
                grep -q '^Recording' "$1" 2>/dev/null && return 0
                kill -0 "$2" 2>/dev/null || break
                sleep 0.05
        done
        fail "recorder did not attach: $(cat "$1" 2>/dev/null)"
        return 1
}
wait_exit() {
        for _ in $(seq 1 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
        wait "$1"
}
record_through_loss() {
        local name="$1" err="$2" pid big i
        shift 2
        "$UEBCTL" record "$@" "$name" >/dev/null 2>"$err" &
        pid=$!
        pids+=("$pid")
        wait_recording "$err" "$pid"
        kill -STOP "$pid"
        big="$(head -c 30000 /dev/zero | tr '\0' x)"
        for i in $(seq 1 40); do
                "$UEBCTL" emit "$name u32 i; __data_loc char[] s" i="$i" s="$big" >/dev/null || fail "emit $name $i"
        done
        kill -CONT "$pid"
        sleep 1
        "$UEBCTL" emit "$name u32 i; __data_loc char[] s" i=99 s=after >/dev/null || fail "emit $name after the loss"
        sleep 1
        kill -TERM "$pid"
        wait_exit "$pid"
}
finish() {
        echo "$failures failure(s)"
        [ "$failures" -eq 0 ]
}
