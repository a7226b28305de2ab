#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# uebctl's trace.dat writer on kernel pages (RecordKernelPages streams):
# tracedat-kernel-pages feeds it pages of CPUs 0 and 2, a LOST notice and
# hostile pages (see its head); libtracecmd's reading API (tracedat-read)
# and trace-cmd report read the file back: every event on its CPU, in time
# order, the pages after the loss marked, the writers named. The kernel's
# own pages go the same way in the vm tier (scenario 9b-dat).
set -u
: "${TRACEDAT_KERNEL_PAGES:?}"
failures=0
ok() { echo "ok: $1"; }
fail() { echo "FAIL: $1"; failures=$((failures + 1)); }

command -v trace-cmd >/dev/null || { echo "SKIP: trace-cmd is missing (apt-get install trace-cmd)"; exit 77; }
[ -n "${TRACEDAT_READ:-}" ] || { echo "SKIP: tracedat-read was not built (libtracecmd-dev is missing)"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

out=$("$TRACEDAT_KERNEL_PAGES" "$dir/k.dat" 2>"$dir/err") && ok "the writer takes kernel pages ($out)" ||
        fail "tracedat-kernel-pages: $(cat "$dir/err")"
pid=${out#pid }
grep -q "format file of kp_c has no event ID" "$dir/err" && ok "a format without an ID is named and left out" ||
        fail "no word of kp_c's format: $(cat "$dir/err")"

"$TRACEDAT_READ" "$dir/k.dat" >"$dir/read" 2>&1 || fail "tracedat-read: $(cat "$dir/read")"
/usr/bin/python3 - "$dir/read" "$pid" <<'PY' && ok "libtracecmd reads each event on its CPU in time order, the pages after the loss marked" || fail "libtracecmd: $(cat "$dir/read")"
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
pid = int(sys.argv[2])
want = [(0, 0, pid, "kp_a", {"a": 1}, None),
        (500, 2, 999999, "kp_a", {"a": 3}, None),
        (1000, 0, pid, "kp_b", {"b": 2}, None),
        (2000, 0, pid, "kp_a", {"a": 4}, -1),
        (2500, 2, pid, "kp_b", {"b": 5}, -1)]
assert len(got) == len(want), got
for g, (dt, cpu, p, name, fields, missed) in zip(got, want):
    assert g["ts"] - got[0]["ts"] == dt, (g, dt)
    assert (g["cpu"], g["pid"], g["system"], g["name"], g["fields"]) == (cpu, p, "user_events", name, fields), g
    assert g.get("missed") == missed, g
PY

trace-cmd report "$dir/k.dat" >"$dir/report" 2>&1 || fail "trace-cmd report: $(cat "$dir/report")"
grep -q '^cpus=3$' "$dir/report" && ok "trace-cmd report: three CPUs (the highest seen plus one)" ||
        fail "cpus: $(cat "$dir/report")"
grep -Eq "^ *tracedat-kernel-$pid +\[000\] .* kp_a: +a=1$" "$dir/report" &&
        ok "trace-cmd report names the writer (its /proc comm)" || fail "no comm: $(cat "$dir/report")"
grep -Eq "^ *<\.\.\.>-999999 +\[002\] .* kp_a: +a=3$" "$dir/report" &&
        ok "a writer gone before the recorder looked stays unnamed, on CPU 2" || fail "cpu 2: $(cat "$dir/report")"
[ "$(grep -Ec '^CPU:[02] \[EVENTS DROPPED\]$' "$dir/report")" = 2 ] &&
        ok "trace-cmd report: events dropped on each CPU's page after the loss" || fail "drops: $(cat "$dir/report")"
[ "$(grep -Ec ' kp_[ab]: ' "$dir/report")" = 5 ] && ok "five events, the hostile pages skipped" ||
        fail "events: $(cat "$dir/report")"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
