#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# uebctl record -o FILE.dat against a real broker (through
# broker-harness.sh, the embedded provider): the trace.dat file is read
# back by trace-cmd report and by libtracecmd's reading API
# (tracedat-read.c: tracecmd_open, tracecmd_iterate_events), and shows
# every record with its fields, the writer's pid and the time a text
# recorder beside it printed, to the nanosecond. A recorder that stops
# reading loses records: trace-cmd report shows them dropped.
set -u

UEBCTL="${UEBCTL:?UEBCTL must name the uebctl binary}"
dir="${UEBROKER_HARNESS_DIR:?run me through broker-harness.sh}"
if ! command -v trace-cmd >/dev/null 2>&1; then
        echo "trace-cmd is not installed (apt-get install trace-cmd), skipping" >&2
        exit 77
fi
if [ -z "${TRACEDAT_READ:-}" ]; then
        echo "tracedat-read was not built: libtracecmd-dev is missing (apt-get install libtracecmd-dev), skipping" >&2
        exit 77
fi

. "$(dirname "$0")/recorder-lib.sh"

# Usage errors, before any bus traffic.
out="$("$UEBCTL" record --format=tracedat x 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q -- "--format says what -o writes" && ok "--format without -o is refused" ||
        fail "--format without -o: $rc $out"
out="$("$UEBCTL" record --format=pcap -o "$dir/x" x 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "takes ctf or tracedat" && ok "an unknown --format is refused" ||
        fail "--format=pcap: $rc $out"
out="$("$UEBCTL" record --json -o "$dir/x.dat" x 2>&1)"; rc=$?
[ "$rc" -eq 2 ] && echo "$out" | grep -q "writes a trace.dat file" && ok "--json with -o FILE.dat is refused" ||
        fail "--json -o x.dat: $rc $out"
out="$("$UEBCTL" record -o "$dir/no/such/dir/x.dat" x 2>&1)"; rc=$?
[ "$rc" -eq 1 ] && echo "$out" | grep -q "cannot create $dir/no/such/dir/x.dat" && ok "an unwritable FILE.dat is named" ||
        fail "unwritable FILE.dat: $rc $out"

# The same records into a trace.dat file (by its name; and by --format
# with another name) and as JSON lines, by three recorders.
"$UEBCTL" record -o "$dir/trace.dat" --count=4 'dat_*' >"$dir/dat.out" 2>"$dir/dat.err" &
dat_pid=$!
"$UEBCTL" record --format=tracedat -o "$dir/trace.tracedat" --count=4 'dat_*' >/dev/null 2>"$dir/fmt.err" &
fmt_pid=$!
"$UEBCTL" record --json=short --count=4 'dat_*' >"$dir/json.out" 2>"$dir/json.err" &
json_pid=$!
pids+=("$dat_pid" "$fmt_pid" "$json_pid")
wait_recording "$dir/dat.err" "$dat_pid"
wait_recording "$dir/fmt.err" "$fmt_pid"
wait_recording "$dir/json.err" "$json_pid"

A='dat_a u32 a; s16 n; char[8] b; __data_loc char[] s'
"$UEBCTL" emit "$A" a=42 n=-3 b=hi s='hello dat' >/dev/null || fail "emit dat_a"
"$UEBCTL" emit 'dat_b u64 big; s64 neg; unsigned char[4] raw' big=18446744073709551615 neg=-5 raw=xyz >/dev/null ||
        fail "emit dat_b"
# Larger than 112 bytes: the event header's other size form.
long="$(head -c 300 /dev/zero | tr '\0' y)"
"$UEBCTL" emit "$A" a=7 s="$long" >/dev/null || fail "emit dat_a long"
"$UEBCTL" emit "$A" a=8 s=last >/dev/null || fail "emit dat_a last"

for p in "$dat_pid" "$fmt_pid" "$json_pid"; do
        wait_exit "$p" || fail "a recorder failed: $(cat "$dir/dat.err" "$dir/fmt.err" "$dir/json.err")"
done
pids=()
grep -q "^note: the embedded provider has no kernel ring buffer to take pages from; .*building the file's pages from the records$" \
        "$dir/dat.err" && ok "on the embedded provider record -o FILE.dat says it builds the pages" ||
        fail "no note of built pages: $(cat "$dir/dat.err")"
grep -q "^Wrote 4 records to the trace.dat file $dir/trace.dat$" "$dir/dat.err" && ok "record -o FILE.dat says what it wrote" ||
        fail "record -o summary: $(cat "$dir/dat.err")"
grep -q "into the trace.dat file $dir/trace.tracedat" "$dir/fmt.err" && ok "--format=tracedat writes a trace.dat file whatever the name" ||
        fail "--format=tracedat: $(cat "$dir/fmt.err")"
[ -s "$dir/dat.out" ] && fail "record -o printed records on stdout: $(cat "$dir/dat.out")" || ok "record -o prints nothing on stdout"

for f in trace.dat trace.tracedat; do
        trace-cmd report -t "$dir/$f" >"$dir/$f.report" 2>"$dir/$f.report.err"; rc=$?
        [ "$rc" -eq 0 ] && ok "trace-cmd report reads $f" || fail "trace-cmd report $f: status $rc: $(cat "$dir/$f.report.err")"
        "$TRACEDAT_READ" "$dir/$f" >"$dir/$f.read" 2>"$dir/$f.read.err"; rc=$?
        [ "$rc" -eq 0 ] && ok "libtracecmd reads $f" || fail "tracedat-read $f: status $rc: $(cat "$dir/$f.read.err")"
done
cat "$dir/trace.dat.report"
cmp -s "$dir/trace.dat.read" "$dir/trace.tracedat.read" && ok "both files hold the same records" ||
        fail "the two files differ: $(diff "$dir/trace.dat.read" "$dir/trace.tracedat.read")"

# libtracecmd: every record, with the JSON recorder's time (ns), pid, name
# and field values; CPU 0, system user_events.
python3 - "$dir/trace.dat.read" "$dir/json.out" <<'PY' && ok "libtracecmd reads every record with its fields, pid and time" || fail "libtracecmd's records: $(cat "$dir/trace.dat.read")"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(got) == len(want) == 4, (got, want)
for g, w in zip(got, want):
    assert g["ts"] == w["timestamp_ns"], (g, w)
    assert (g["cpu"], g["system"], g["name"], g["pid"]) == (0, "user_events", w["name"], w["pid"]), (g, w)
    assert "missed" not in g, g
    assert g["fields"] == w["fields"], (g["fields"], w["fields"])
assert got[0]["fields"]["n"] == -3 and got[1]["fields"]["neg"] == -5, got
assert got[2]["fields"]["s"] == "y" * 300, got[2]
PY

# trace-cmd report: the same, as it prints them. Its s16 and s64 are
# printed by libtraceevent 1.7 from the kernel's own print fmt ("%d",
# "%lld"): an s16 shows as its unsigned value, as in a kernel trace.dat.
python3 - "$dir/trace.dat.report" "$dir/json.out" <<'PY' && ok "trace-cmd report prints every record with its fields, pid and time" || fail "trace-cmd report: $(cat "$dir/trace.dat.report")"
import json, re, sys
lines = [l for l in open(sys.argv[1]).read().splitlines() if not l.startswith("cpus=")]
want = [json.loads(l) for l in open(sys.argv[2])]
assert len(lines) == 4, lines
fields = [
    "a=42 n=65533 b=hi s=hello dat",
    "big=18446744073709551615 neg=-5 raw=xyz",
    "a=7 n=0 b= s=" + "y" * 300,
    "a=8 n=0 b= s=last",
]
for line, w, f in zip(lines, want, fields):
    # the writer's name: uebctl (emit), or <...> if it was gone before
    # the recorder read /proc (uebctl-tracedat.h)
    m = re.match(r"^\s*(?:uebctl|<\.\.\.>)-(\d+)\s+\[000\]\s+(\d+)\.(\d{9}): (\S+):\s+(.*)$", line)
    assert m, line
    assert int(m.group(1)) == w["pid"], (line, w)
    assert int(m.group(2)) * 10**9 + int(m.group(3)) == w["timestamp_ns"], (line, w)
    assert m.group(4) == w["name"], line
    assert m.group(5) == f, (m.group(5), f)
PY

# Ended by SIGTERM (Ctrl-C's way) before any --count: the file is written
# all the same, with the record sent before the signal.
"$UEBCTL" record -o "$dir/term.dat" dat_a >/dev/null 2>"$dir/term.err" &
dat_pid=$!
"$UEBCTL" record --count=1 dat_a >/dev/null 2>"$dir/term-text.err" &
text_pid=$!
pids+=("$dat_pid" "$text_pid")
wait_recording "$dir/term.err" "$dat_pid"
wait_recording "$dir/term-text.err" "$text_pid"
"$UEBCTL" emit "$A" a=99 s=term >/dev/null || fail "emit before SIGTERM"
wait_exit "$text_pid" || fail "text recorder (SIGTERM case): $(cat "$dir/term-text.err")"
kill -TERM "$dat_pid"
wait_exit "$dat_pid"; rc=$?
pids=()
[ "$rc" -eq 0 ] && ok "record -o FILE.dat exits 0 on SIGTERM" || fail "record -o FILE.dat on SIGTERM: status $rc: $(cat "$dir/term.err")"
out="$(trace-cmd report "$dir/term.dat" 2>&1)"
echo "$out" | grep -q 'dat_a: *a=99 n=0 b= s=term$' && ok "the file ended by SIGTERM reads back" ||
        fail "file after SIGTERM: $out"

# A recorder too slow (stopped) loses records: trace-cmd report shows them
# dropped before the first record after the loss, with the count uebctl
# says it lost. The records are larger than a page (to fill the stream's
# socket fast): those not lost are skipped and counted, and the last one,
# small, is in the file.
record_through_loss dat_lost "$dir/lost.err" -o "$dir/lost.dat"; rc=$?
[ "$rc" -eq 0 ] && ok "record -o FILE.dat of a lossy stream exits 0" || fail "lossy: status $rc: $(cat "$dir/lost.err")"
grep -q "lost, marked as dropped events on the page after them" "$dir/lost.err" && ok "record -o says how many were lost" ||
        fail "summary of a lossy stream: $(cat "$dir/lost.err")"
trace-cmd report "$dir/lost.dat" >"$dir/lost.report" 2>&1 || fail "trace-cmd report on the lossy file: $(cat "$dir/lost.report")"
"$TRACEDAT_READ" "$dir/lost.dat" >"$dir/lost.read" 2>&1 || fail "tracedat-read on the lossy file: $(cat "$dir/lost.read")"
grep -v 'dat_lost: ' "$dir/lost.report"
python3 - "$dir/lost.report" "$dir/lost.read" "$dir/lost.err" <<'PY' && ok "trace-cmd report and libtracecmd show the loss: dropped counts that add up to what uebctl said" || fail "lossy file: $(grep -v 'dat_lost: ' "$dir/lost.report" | head -5) / $(cat "$dir/lost.err")"
import json, re, sys
report = open(sys.argv[1]).read().splitlines()
records = [json.loads(l) for l in open(sys.argv[2])]
summary = open(sys.argv[3]).read()
said = int(re.search(r"; (\d+) lost, marked as dropped", summary).group(1))
skipped = int(re.search(r"\((\d+) skipped: no definition, not valid, or larger than a page\)", summary).group(1))
dropped = [int(m.group(1)) for m in (re.match(r"^CPU:0 \[(\d+) EVENTS DROPPED\]$", l) for l in report) if m]
kept = [l for l in report if " dat_lost: " in l]
assert dropped and all(n > 0 for n in dropped), report[:5]
assert sum(dropped) == said, (dropped, said)
assert len(kept) == 1 and skipped + said == 40, (len(kept), skipped, said)
assert kept[-1].endswith("i=99 s=after"), kept[-1]
# libtracecmd: the same counts, on the records after each loss.
assert [r["missed"] for r in records if "missed" in r] == dropped, records
assert len(records) == len(kept)
PY

# An event name with '-' (the broker allows it, libtraceevent reads an
# event's name as one word): written with '_', said once, and readable.
"$UEBCTL" record -o "$dir/dash.dat" --count=1 'dat-dash' >/dev/null 2>"$dir/dash.err" &
dat_pid=$!
pids+=("$dat_pid")
wait_recording "$dir/dash.err" "$dat_pid"
"$UEBCTL" emit 'dat-dash u32 v' v=77 >/dev/null || fail "emit dat-dash"
wait_exit "$dat_pid" || fail "dash recorder: $(cat "$dir/dash.err")"
grep -q "^note: event dat-dash is named dat_dash in the trace.dat file" "$dir/dash.err" &&
        ok "a name with '-' is said to be written with '_'" || fail "no note of the name: $(cat "$dir/dash.err")"
trace-cmd report "$dir/dash.dat" >"$dir/dash.report" 2>&1
grep -q " dat_dash: .*v=77" "$dir/dash.report" && ! grep -q "UNKNOWN EVENT" "$dir/dash.report" &&
        ok "trace-cmd report reads an event whose name has '-'" || fail "dash report: $(cat "$dir/dash.report")"

# The writers' names: hello-events runs until stopped, so its /proc comm is
# there when its first record arrives.
"$UEBCTL" record -o "$dir/comm.dat" --count=2 hello_tick >/dev/null 2>"$dir/comm.err" &
dat_pid=$!
pids+=("$dat_pid")
wait_recording "$dir/comm.err" "$dat_pid"
"$HELLO" --count=0 --interval=20 >/dev/null 2>&1 &
hello_pid=$!
pids+=("$hello_pid")
wait_exit "$dat_pid" || fail "comm recorder: $(cat "$dir/comm.err")"
kill "$hello_pid" 2>/dev/null
trace-cmd report "$dir/comm.dat" >"$dir/comm.report" 2>&1
[ "$(grep -Ec "^ *hello-events-$hello_pid +\[000\] .* hello_tick: " "$dir/comm.report")" = 2 ] &&
        ok "trace-cmd report names the writer (hello-events-$hello_pid)" ||
        fail "writer's name: $(cat "$dir/comm.report")"

finish
