#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Typed writes end to end (run through broker-harness.sh): typed-writer
# writes through libuebroker's ueb_write_values() and UEB_EVENT() calls on
# the embedded provider, `uebctl record` decodes what arrived with the
# events' format; then examples/hello-events (UEB_EVENT, a string field)
# is recorded the same way.
set -u

UEBCTL="${UEBCTL:?UEBCTL must name the uebctl binary}"
TYPED_WRITER="${TYPED_WRITER:?TYPED_WRITER must name tests/integration/typed-writer}"
HELLO="${HELLO:?HELLO must name examples/hello-events}"
dir="${UEBROKER_HARNESS_DIR:?run me through broker-harness.sh}"
failures=0
pids=()

ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() { # check DESCRIPTION EXPECTED ACTUAL
        if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
cleanup() { local p; for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap cleanup EXIT
# wait_for FILE PATTERN: until a line of FILE matches (bounded, 10 s).
wait_for() {
        local i
        for i in $(seq 1 200); do
                grep -q "$2" "$1" 2>/dev/null && return 0
                sleep 0.05
        done
        fail "no '$2' in $1: $(cat "$1" 2>/dev/null)"
        return 1
}
# wait_exit PID: its exit status (bounded, 10 s; killed after that).
wait_exit() {
        local i
        for i in $(seq 1 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
        kill "$1" 2>/dev/null
        wait "$1"
}
# The decoded values: each line from the event's name on (what record
# prints before it, writer and time, is test-uebctl.sh's business).
values() { sed -E 's/^.*[] ](typed_all|typed_struct|hello_tick): /\1: /' "$@"; }

# The writer registers first (record needs the events to exist), then
# waits for the recorder to enable them.
"$TYPED_WRITER" >"$dir/writer.out" 2>&1 &
writer=$!
pids+=("$writer")
wait_for "$dir/writer.out" '^registered$'
"$UEBCTL" record --count=3 typed_all typed_struct >"$dir/rec.txt" 2>"$dir/rec.err" &
recorder=$!
pids+=("$recorder")
wait_exit "$writer"; rc=$?
check "typed-writer exits 0" 0 "$rc"
grep '^FAIL' "$dir/writer.out" && fail "typed-writer: $(cat "$dir/writer.out")"
wait_exit "$recorder"; rc=$?
check "record --count=3 exits 0" 0 "$rc"
check "typed_all, every kind of field" \
        "typed_all: u8v=255 s16v=-2 u32v=4000000000 s64v=-9223372036854775808 tag=tag msg=hello, typed world rel=relative words=0x0201b0a0" \
        "$(values "$dir/rec.txt" | sed -n 1p)"
check "typed_all, empty and NULL values" \
        "typed_all: u8v=0 s16v=0 u32v=0 s64v=0 tag=12345678 msg= rel= words=0x" \
        "$(values "$dir/rec.txt" | sed -n 2p)"
check "typed_struct through ueb_write_values" \
        "typed_struct: p=0x07000000ffffffff note=pair" \
        "$(values "$dir/rec.txt" | sed -n 3p)"
check "nothing else recorded" 3 "$(wc -l <"$dir/rec.txt")"
check "each record names the writer's pid" 3 "$(grep -cE "pid $writer\b" "$dir/rec.txt")"

# The example: hello_tick declared with UEB_EVENT, a string without offsets.
"$HELLO" --count=0 --interval=20 --message='typed hello' >"$dir/hello.out" 2>"$dir/hello.err" &
hello=$!
pids+=("$hello")
wait_for "$dir/hello.err" 'hello_tick registered'
"$UEBCTL" record --count=3 hello_tick >"$dir/hello-rec.txt" 2>"$dir/hello-rec.err" &
recorder=$!
pids+=("$recorder")
wait_exit "$recorder"; rc=$?
check "record hello_tick exits 0" 0 "$rc"
kill -TERM "$hello"
wait_exit "$hello"; rc=$?
check "hello-events exits 0 on SIGTERM" 0 "$rc"
n="$(values "$dir/hello-rec.txt" | grep -cE "^hello_tick: count=[0-9]+ msg=typed hello$")"
check "three hello_tick records decoded" 3 "$n"
grep -qE '[1-9][0-9]* written' "$dir/hello.out" && ok "hello-events counted its writes" ||
        fail "hello-events: $(cat "$dir/hello.out")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
