#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# uebctl record -o DIR against a real broker (through broker-harness.sh):
# the CTF trace it writes is read back by babeltrace2, the reference reader,
# and shows each record's values, the writer's pid (the same a text recorder
# prints) and the time (within the run, from the clock's epoch origin).
set -u

UEBCTL="${UEBCTL:?UEBCTL must name the uebctl binary}"
dir="${UEBROKER_HARNESS_DIR:?run me through broker-harness.sh}"
if ! command -v babeltrace2 >/dev/null 2>&1; then
        echo "babeltrace2 is not installed (apt-get install babeltrace2), skipping" >&2
        exit 77
fi
# Refused at once either way: the message says whether -o exists.
if "$UEBCTL" record --json -o "$dir/probe" x 2>&1 | grep -q "built without libbabeltrace2"; then
        echo "uebctl was built without libbabeltrace2 (libbabeltrace2-dev), skipping" >&2
        exit 77
fi

. "$(dirname "$0")/recorder-lib.sh"

start="$(date +%s)"
# The same records into a CTF trace and as text lines, by two recorders.
"$UEBCTL" record -o "$dir/trace" --count=3 'ctf_*' >"$dir/ctf.out" 2>"$dir/ctf.err" &
ctf_pid=$!
pids+=("$ctf_pid")
"$UEBCTL" record --count=3 'ctf_*' >"$dir/text.out" 2>"$dir/text.err" &
text_pid=$!
pids+=("$text_pid")
wait_recording "$dir/ctf.err" "$ctf_pid"
wait_recording "$dir/text.err" "$text_pid"

A='ctf_a u32 a; s16 n; char[8] b; __data_loc char[] s'
"$UEBCTL" emit "$A" a=42 n=-3 b=hi s='hello ctf' >/dev/null || fail "emit ctf_a"
"$UEBCTL" emit 'ctf_b u64 big; unsigned char[4] raw' big=18446744073709551615 raw=xyz >/dev/null || fail "emit ctf_b"
"$UEBCTL" emit "$A" a=7 s=again >/dev/null || fail "emit ctf_a again"

wait_exit "$ctf_pid"; rc=$?
[ "$rc" -eq 0 ] && ok "record -o exits 0" || fail "record -o exit status $rc: $(cat "$dir/ctf.err")"
wait_exit "$text_pid" || fail "text recorder: $(cat "$dir/text.err")"
pids=()
end="$(date +%s)"
grep -q "^Wrote 3 records to the CTF trace $dir/trace$" "$dir/ctf.err" && ok "record -o says what it wrote" ||
        fail "record -o summary: $(cat "$dir/ctf.err")"
[ -s "$dir/ctf.out" ] && fail "record -o printed records on stdout: $(cat "$dir/ctf.out")" || ok "record -o prints nothing on stdout"
[ -f "$dir/trace/metadata" ] && ok "the trace has its CTF metadata" || fail "no metadata in $dir/trace: $(ls -la "$dir/trace" 2>&1)"

babeltrace2 --clock-gmt --clock-seconds --no-delta "$dir/trace" >"$dir/bt.out" 2>"$dir/bt.err"; rc=$?
[ "$rc" -eq 0 ] && ok "babeltrace2 reads the trace" || fail "babeltrace2 exit status $rc: $(cat "$dir/bt.err")"
cat "$dir/bt.out"

python3 - "$dir/bt.out" "$dir/text.out" "$start" "$end" "$(id -u)" <<'PY' && ok "babeltrace2 shows values, pid and time" || fail "babeltrace2 output: $(cat "$dir/bt.out")"
import re, sys
bt, text, start, end, uid = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
lines = open(bt).read().splitlines()
assert len(lines) == 3, lines
# The text recorder names each writer's pid: the CTF events must carry the same.
text_pids = [int(re.search(r" pid (\d+)\]", l).group(1)) for l in open(text).read().splitlines()]
assert len(text_pids) == 3, text_pids
want = [
    ("ctf_a", '{ a = 42, n = -3, b = "hi", s = "hello ctf" }'),
    ("ctf_b", "{ big = 18446744073709551615, raw = \"xyz\" }"),
    ("ctf_a", '{ a = 7, n = 0, b = "", s = "again" }'),
]
for line, (name, fields), pid in zip(lines, want, text_pids):
    m = re.match(r"^\[(\d+)\.(\d{9})\] (\S+): \{ pid = (\d+), uid = (\d+) \}, (.*)$", line)
    assert m, line
    seconds = int(m.group(1))
    assert start <= seconds <= end, (start, seconds, end)
    assert m.group(3) == name, line
    assert int(m.group(4)) == pid, (line, pid)
    assert int(m.group(5)) == uid, line
    assert m.group(6).startswith(fields), (m.group(6), fields)
PY

# Ended by SIGTERM (Ctrl-C's way) before any --count: the trace is complete
# all the same, with the record sent before the signal. A text recorder
# beside it tells when the broker has sent the record (to both at once).
"$UEBCTL" record -o "$dir/trace2" ctf_a >"$dir/ctf2.out" 2>"$dir/ctf2.err" &
ctf_pid=$!
pids+=("$ctf_pid")
"$UEBCTL" record --count=1 ctf_a >"$dir/text2.out" 2>"$dir/text2.err" &
text_pid=$!
pids+=("$text_pid")
wait_recording "$dir/ctf2.err" "$ctf_pid"
wait_recording "$dir/text2.err" "$text_pid"
"$UEBCTL" emit "$A" a=99 s=last >/dev/null || fail "emit before SIGTERM"
wait_exit "$text_pid" || fail "text recorder (SIGTERM case): $(cat "$dir/text2.err")"
kill -TERM "$ctf_pid"
wait_exit "$ctf_pid"; rc=$?
pids=()
[ "$rc" -eq 0 ] && ok "record -o exits 0 on SIGTERM" || fail "record -o on SIGTERM: status $rc: $(cat "$dir/ctf2.err")"
out="$(babeltrace2 --no-delta "$dir/trace2" 2>&1)"
echo "$out" | grep -q 'ctf_a: { pid = [0-9]*, uid = [0-9]* }, { a = 99, n = 0, b = "", s = "last" }$' &&
        ok "the trace ended by SIGTERM reads back" || fail "trace after SIGTERM: $out"

# A recorder too slow (stopped) loses records: the LOST notice is in the
# trace, as an event of its own where the records are missing, with its
# count, so a reader of the file can tell.
record_through_loss ctf_lost "$dir/ctf3.err" -o "$dir/trace3"; rc=$?
[ "$rc" -eq 0 ] && ok "record -o of a lossy stream exits 0" || fail "record -o, lossy: status $rc: $(cat "$dir/ctf3.err")"
grep -q "lost, written as uebroker:lost events" "$dir/ctf3.err" && ok "record -o says how many were lost" ||
        fail "record -o summary of a lossy stream: $(cat "$dir/ctf3.err")"
babeltrace2 --no-delta "$dir/trace3" >"$dir/bt3.out" 2>"$dir/bt3.err" || fail "babeltrace2 on the lossy trace: $(cat "$dir/bt3.err")"
python3 - "$dir/bt3.out" "$dir/ctf3.err" <<'PY' && ok "babeltrace2 shows the loss: uebroker:lost events whose counts add up to what uebctl said" || fail "lossy trace: $(grep -v 'ctf_lost: ' "$dir/bt3.out" | head -5) / $(cat "$dir/ctf3.err")"
import re, sys
lines = open(sys.argv[1]).read().splitlines()
lost = [int(m.group(1)) for m in (re.search(r"uebroker:lost: .*\{ count = (\d+) \}$", l) for l in lines) if m]
said = int(re.search(r"; (\d+) lost, written as", open(sys.argv[2]).read()).group(1))
kept = [l for l in lines if " ctf_lost: " in l]
assert lost and all(n > 0 for n in lost), lines[:5]
assert sum(lost) == said, (lost, said)
assert len(kept) + sum(lost) == 41, (len(kept), lost)
assert kept[-1].endswith('{ i = 99, s = "after" }'), kept[-1]
PY

finish
