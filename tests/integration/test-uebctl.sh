#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# uebctl against a real broker (run through broker-harness.sh): list and
# list --json (parsed by python's json), status, emit + record decoded
# lines (text and --json, with the writer's uid), a hostile writer's bytes
# escaped in both, emit's refusals, delete, and the bus options.
set -u

UEBCTL="${UEBCTL:?UEBCTL must name the uebctl binary}"
dir="${UEBROKER_HARNESS_DIR:?run me through broker-harness.sh}"
# ok, fail, wait_recording, pids (recorders killed at exit): recorder-lib.sh
. "$(dirname "$0")/recorder-lib.sh"
record_pid=""

check() { # check DESCRIPTION EXPECTED ACTUAL
        if [ "$2" = "$3" ]; then ok "$1"; else fail "$1: expected '$2', got '$3'"; fi
}
# run_list [ARGS]: uebctl list's output in $out; fails the test unless it exits
# 0 (piped straight into a check, its status would be lost).
run_list() {
        out="$("$UEBCTL" list "$@")" || fail "list${*:+ $*} exits 0 (status $?)"
}

EV='ctl_ev u32 a; char[8] b; __data_loc char[] s; s16 n'
uid="$(id -u)"
# Record lines name the time the broker received the record and the
# writer's pid, which differ per emit: "[uid U pid P]".
mask_pid() { sed -E 's/^\[received [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{6}Z uid ([0-9]+) pid [0-9]+\]/[uid \1 pid P]/' "$@"; }
# record_start FILE ARGS...: a recorder in the background, attached.
record_start() {
        local out="$1"
        shift
        "$UEBCTL" record "$@" >"$out" 2>"$out.err" &
        record_pid=$!
        pids+=("$record_pid")
        wait_recording "$out.err" "$record_pid"
}
# record_end: waits for a --count recorder to finish; its exit status in
# $record_rc. Not in a $(...) subshell: only this shell can reap it.
record_end() {
        local i
        for i in $(seq 1 100); do kill -0 "$record_pid" 2>/dev/null || break; sleep 0.05; done
        wait "$record_pid"; record_rc=$?; record_pid=""
}

# Status and list on an empty broker.
out="$("$UEBCTL" status)" || fail "status exits 0"
check "status summary" "Active: 0" "$(echo "$out" | grep '^Active:')"
echo "$out" | grep -q '^Max: 4096$' && ok "status max" || fail "status max: $out"
"$UEBCTL" status --help | grep -q 'MaxEvents property (at most 4095' && ok "status --help explains Max: and MaxEvents" ||
        fail "status --help lacks Max:/MaxEvents"
run_list --json
echo "$out" | python3 -c 'import json,sys; assert json.load(sys.stdin) == []' && ok "empty list --json" || fail "empty list --json: $out"

# emit with nobody listening creates the event and writes nothing.
out="$("$UEBCTL" emit "$EV" a=1 b=hello s='with space' n=-2)"
check "emit while disabled" "ctl_ev: not enabled, nothing written" "$out"
"$UEBCTL" list --json >"$dir/list.json" || fail "list --json exits 0"
python3 - "$dir/list.json" <<'PY' && ok "list --json describes ctl_ev" || fail "list --json content: $(cat "$dir/list.json")"
import json, os, sys
events = json.load(open(sys.argv[1]))
assert len(events) == 1, events
e = events[0]
assert e["name"] == "ctl_ev", e
assert e["fields"] == "u32 a; char[8] b; __data_loc char[] s; s16 n", e
assert e["owner_uid"] == os.getuid(), e
assert e["registrations"] == 0 and e["enabled"] is False, e
PY
run_list
echo "$out" | grep -q '^ctl_ev .* no  u32 a; char\[8\] b' && ok "list table" || fail "list table: $out"


# Like systemd's tools: options after the command, per-command --help,
# --json=MODE, --no-legend, user names beside uids, the pager.
user="$(id -un)"
out="$("$UEBCTL" list --bus-address="$UEBROKER_BUS_ADDRESS")" && ok "option after the command" || fail "list --bus-address: $out"
# The option carries the real address, the environment a dead one: on purpose.
# shellcheck disable=SC2097,SC2098
out="$(UEBROKER_BUS_ADDRESS=unix:path=/nonexistent "$UEBCTL" list --no-legend --bus-address="$UEBROKER_BUS_ADDRESS")" &&
        ok "--bus-address after the command wins over the environment" || fail "list --bus-address (env): $out"
echo "$out" | grep -Eq "^ctl_ev +$uid +$user +0 +no  u32 a;" && ok "list shows uid and user name" || fail "OWNER column: $out"
check "--no-legend: one line" 1 "$(echo "$out" | wc -l)"
run_list
check "legend: header" "NAME UID OWNER REGS ENABLED FIELDS" "$(echo "$out" | sed -n 1p | tr -s ' ')"
check "legend: summary" "1 event." "$(echo "$out" | tail -n 1)"
out="$("$UEBCTL" list --help)" || fail "list --help exits 0"
echo "$out" | grep -q "^Usage: uebctl list" && ok "list --help" || fail "list --help: $out"
out="$("$UEBCTL" --help record)" || fail "--help record exits 0"
echo "$out" | grep -q "^Usage: uebctl record" && echo "$out" | grep -q "fnmatch" && ok "--help record" || fail "--help record: $out"
run_list --json=short
check "--json=short: one line" 1 "$(echo "$out" | wc -l)"
echo "$out" | python3 -c 'import json,os,sys; e=json.load(sys.stdin)[0]; assert e["owner"] == sys.argv[1] and e["owner_uid"] == os.getuid(), e' "$user" &&
        ok "--json=short owner" || fail "--json=short: $out"
run_list --json=pretty
[ "$(echo "$out" | wc -l)" -gt 5 ] && ok "--json=pretty: indented" || fail "--json=pretty: $out"
echo "$out" | grep -q '^    "name": "ctl_ev",$' && ok "--json=pretty layout" || fail "--json=pretty layout: $out"
echo "$out" | python3 -c 'import json,sys; assert json.load(sys.stdin)[0]["name"] == "ctl_ev"' && ok "--json=pretty parses" || fail "--json=pretty parse: $out"
run_list -j
check "-j on a pipe is short" 1 "$(echo "$out" | wc -l)"
run_list --json=off
echo "$out" | grep -q '^NAME ' && ok "--json=off is the table" || fail "--json=off: $out"
out="$("$UEBCTL" list --json=yaml 2>&1)"; rc=$?
check "--json=yaml refused" 2 "$rc"
out="$("$UEBCTL" list --count=3 2>&1)"; rc=$?
check "an option the command ignores is refused" "2 error: --count does nothing for uebctl list (see uebctl list --help)" "$rc $out"
out="$("$UEBCTL" status ctl_ev)" || fail "status NAME exits 0: $out"
echo "$out" | grep -q "^        Owner: $user (uid $uid)$" && ok "status NAME shows the owner" || fail "status NAME: $out"
out="$("$UEBCTL" status --json=short ctl_ev)" || fail "status --json NAME exits 0"
echo "$out" | python3 -c 'import json,sys; e=json.load(sys.stdin); assert [x["name"] for x in e] == ["ctl_ev"], e' && ok "status --json NAME" || fail "status --json: $out"
out="$("$UEBCTL" status ctl_ev nosuch 2>&1)"; rc=$?
check "status of an unknown event fails" 1 "$rc"
echo "$out" | grep -q "no event is called nosuch" && ok "status names the unknown event" || fail "status nosuch: $out"
# The pager: never on a pipe; on a terminal (script(1) makes one) $UEBCTL_PAGER
# gets the output, unless --no-pager.
UEBCTL_PAGER="touch $dir/paged-pipe" "$UEBCTL" list >/dev/null
[ -e "$dir/paged-pipe" ] && fail "pager started on a pipe" || ok "no pager on a pipe"
UEBCTL_PAGER="cat >$dir/paged" script -qec "'$UEBCTL' list" /dev/null >/dev/null </dev/null
grep -q '^ctl_ev ' "$dir/paged" 2>/dev/null && ok "pager on a terminal gets the list" || fail "pager: $(cat "$dir/paged" 2>&1)"
UEBCTL_PAGER="cat >$dir/unpaged" script -qec "'$UEBCTL' list --no-pager" /dev/null >"$dir/tty-out" </dev/null
[ -e "$dir/unpaged" ] && fail "--no-pager still paged" || ok "--no-pager"
grep -q 'ctl_ev ' "$dir/tty-out" && ok "--no-pager prints to the terminal" || fail "--no-pager output: $(cat "$dir/tty-out")"

# Record: text lines.
"$UEBCTL" record --count=2 ctl_ev >"$dir/rec.txt" 2>"$dir/rec-text.err" &
record_pid=$!; pids+=("$record_pid")
wait_recording "$dir/rec-text.err" "$record_pid"
out="$("$UEBCTL" emit "$EV" a=1 b=hello s='with space' n=-2)"
check "emit while recorded" "ctl_ev: written (" "${out%%[0-9]*}"
out="$("$UEBCTL" emit "$EV" a=4294967295 b=12345678)" || fail "second emit exits 0"
check "second emit while recorded" "ctl_ev: written (" "${out%%[0-9]*}"
for i in $(seq 1 200); do kill -0 "$record_pid" 2>/dev/null || break; sleep 0.05; done
kill -0 "$record_pid" 2>/dev/null && { fail "record --count=2 still running"; kill "$record_pid"; }
wait "$record_pid"; rc=$?; record_pid=""
check "record --count=2 exits 0" 0 "$rc"
check "first record decoded" "[uid $uid pid P] ctl_ev: a=1 b=hello s=with space n=-2" "$(mask_pid "$dir/rec.txt" | sed -n 1p)"
check "second record decoded" "[uid $uid pid P] ctl_ev: a=4294967295 b=12345678 s= n=0" "$(mask_pid "$dir/rec.txt" | sed -n 2p)"
grep -q "^\[received [^ ]* uid $uid pid [1-9][0-9]*\] " "$dir/rec.txt" && ok "record names a real pid" || fail "pid: $(cat "$dir/rec.txt")"
# The time is labelled as the broker's reception, and is now (UTC).
python3 - "$dir/rec.txt" <<'PY' && ok "record time is the reception, now" || fail "record time: $(cat "$dir/rec.txt")"
import datetime, sys
line = open(sys.argv[1]).readline()
assert line.startswith("[received "), line
stamp = datetime.datetime.strptime(line.split()[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
assert abs((datetime.datetime.now(datetime.timezone.utc) - stamp).total_seconds()) < 60, stamp
PY

# Record: --json, one object per line; SIGTERM ends it cleanly.
"$UEBCTL" record --json ctl_ev >"$dir/rec.json" 2>"$dir/rec-json.err" &
record_pid=$!; pids+=("$record_pid")
wait_recording "$dir/rec-json.err" "$record_pid"
out="$("$UEBCTL" emit "$EV" a=7 'b=q"\' s=$'tab\there')" || fail "json emit exits 0"
check "emit while recorded (--json)" "ctl_ev: written (" "${out%%[0-9]*}"
for i in $(seq 1 100); do [ -s "$dir/rec.json" ] && break; sleep 0.05; done
kill -TERM "$record_pid"
wait "$record_pid"; rc=$?; record_pid=""
check "record exits 0 on SIGTERM" 0 "$rc"
python3 - "$dir/rec.json" <<'PY' && ok "record --json parsed" || fail "record --json: $(cat "$dir/rec.json")"
import json, os, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
assert r["name"] == "ctl_ev", r
assert r["uid"] == os.getuid() and r["pid"] > 0 and r["timestamp_ns"] > 0, r
assert r["time_source"] == "received", r
assert r["timestamp"].endswith("Z"), r
assert r["fields"] == {"a": 7, "b": 'q"\\', "s": "tab\there", "n": 0}, r["fields"]
PY

# A hostile writer: C1 CSI (U+009B), a bidi override (U+202E), invalid
# UTF-8 (FF FE), ESC, a backslash. Exact escaped output, text and JSON, and
# nothing a terminal would act on.
hostile_b=$'\xc2\x9b31m'
hostile_s=$'x\xe2\x80\xaey\xff\xfe\x1b[2Jz\\'
record_start "$dir/hostile.txt" --count=1 ctl_ev
"$UEBCTL" emit "$EV" a=2 b="$hostile_b" s="$hostile_s" n=1 >/dev/null || fail "hostile emit"
record_end
check "hostile record ends" 0 "$record_rc"
check "hostile bytes escaped in text" \
        "[uid $uid pid P] ctl_ev: a=2 b=\\u{9b}31m s=x\\u{202e}y\\xff\\xfe\\x1b[2Jz\\\\ n=1" \
        "$(mask_pid "$dir/hostile.txt")"
record_start "$dir/hostile.json" --json --count=1 ctl_ev
"$UEBCTL" emit "$EV" a=2 b="$hostile_b" s="$hostile_s" n=1 >/dev/null || fail "hostile emit (json)"
record_end
check "hostile json record ends" 0 "$record_rc"
check "hostile bytes escaped in JSON" \
        '{"a":2,"b":"\u009b31m","s":"x\u202ey\udcff\udcfe\u001b[2Jz\\","n":1}}' \
        "$(sed -E 's/.*"fields"://' "$dir/hostile.json")"
if LC_ALL=C grep -q -P '[\x00-\x09\x0b-\x1f\x7f-\xff]' "$dir/hostile.txt" "$dir/hostile.json"; then
        fail "raw control or non-ASCII bytes reached the output: $(od -c "$dir/hostile.txt" "$dir/hostile.json")"
else
        ok "only printable ASCII in the output"
fi
python3 - "$dir/hostile.json" "$uid" <<'PY' && ok "JSON is lossless (surrogateescape)" || fail "JSON: $(cat "$dir/hostile.json")"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["uid"] == int(sys.argv[2]), r
assert r["fields"]["s"].encode("utf-8", "surrogateescape") == b"x\xe2\x80\xaey\xff\xfe\x1b[2Jz\\", r
assert r["fields"]["b"] == "\u009b31m", r
PY

# After the recorder left, the event is disabled again.
out="$("$UEBCTL" emit "$EV" a=1)"
check "disabled after record ends" "ctl_ev: not enabled, nothing written" "$out"

# The status text ends with what the data path counted: the five records
# recorded above, none lost, none invalid.
out="$("$UEBCTL" status)" || fail "status exits 0 after recording"
check "status: recorded" "Records recorded: 5" "$(echo "$out" | grep '^Records recorded:')"
check "status: lost" "Records lost to slow consumers: 0" "$(echo "$out" | grep '^Records lost')"
check "status: invalid" "Records dropped as invalid: 0" "$(echo "$out" | grep '^Records dropped as invalid')"

# Refusals: bad values and bad commands, with messages, nothing registered.
out="$("$UEBCTL" emit "$EV" a=-1 2>&1)"; rc=$?
check "negative u32 refused" "1 error: a: -1 is negative, u32 is unsigned" "$rc $out"
out="$("$UEBCTL" emit "$EV" b=123456789 2>&1)"; rc=$?
check "long char[8] refused" "1 error: b: 9 bytes do not fit in char[8]" "$rc $out"
out="$("$UEBCTL" emit 'ctl_bad u32 a; x y' 2>&1)"; rc=$?
check "bad command refused" "1" "$rc"
echo "$out" | grep -q "field 2" && ok "parser message" || fail "parser message: $out"
out="$("$UEBCTL" emit 'ctl_ev u64 a' 2>&1)"; rc=$?
check "other fields refused" "1" "$rc"
echo "$out" | grep -q "NameInUse\|exists with other fields" && ok "NameInUse message" || fail "NameInUse message: $out"

# Patterns, and events registered after the recorder started: armed
# before the program registers its event (RecordMatching).
record_start "$dir/late.txt" --count=2 'ctl_late*' ctl_named_later
grep -q "note: no event is called ctl_named_later yet" "$dir/late.txt.err" && ok "record notes a name not registered yet" ||
        fail "record's note: $(cat "$dir/late.txt.err")"
out="$("$UEBCTL" emit 'ctl_late_a u32 x; __data_loc char[] s' x=5 s=late)"
check "emit of an event registered after the recorder" "ctl_late_a: written (" "${out%%[0-9]*}"
"$UEBCTL" emit 'ctl_other u32 x' x=6 >/dev/null
out="$("$UEBCTL" emit 'ctl_named_later u16 y' y=7)"
check "emit of a named event registered after the recorder" "ctl_named_later: written (" "${out%%[0-9]*}"
record_end
check "pattern recorder ends" 0 "$record_rc"
check "pattern record decoded" "[uid $uid pid P] ctl_late_a: x=5 s=late" "$(mask_pid "$dir/late.txt" | sed -n 1p)"
check "named-later record decoded" "[uid $uid pid P] ctl_named_later: y=7" "$(mask_pid "$dir/late.txt" | sed -n 2p)"
check "non-matching event not recorded" 2 "$(wc -l <"$dir/late.txt")"
out="$("$UEBCTL" record 'bad pattern' 2>&1)"; rc=$?
check "invalid pattern refused" 2 "$rc"
echo "$out" | grep -q "neither a name character" && ok "invalid pattern's message" || fail "invalid pattern: $out"
record_start "$dir/pretty.json" --json=pretty --count=1 ctl_late_a
"$UEBCTL" emit 'ctl_late_a u32 x; __data_loc char[] s' x=8 s=p >/dev/null
record_end
python3 - "$dir/pretty.json" <<'PY' && ok "record --json=pretty" || fail "record --json=pretty: $(cat "$dir/pretty.json")"
import json, sys
text = open(sys.argv[1]).read()
assert text.count("\n") > 5, text
r = json.loads(text)
assert r["fields"] == {"x": 8, "s": "p"} and r["time_source"] == "received", r
PY
for ev in ctl_late_a ctl_other ctl_named_later; do "$UEBCTL" delete "$ev" || fail "delete $ev"; done

# The bash completion (shell-completion/uebctl) completes event names the
# broker knows, asking it on the bus given on the command line.
completion="$(dirname "$0")/../../shell-completion/uebctl"
if [ -f /usr/share/bash-completion/bash_completion ]; then
        out="$(PATH="$(dirname "$UEBCTL"):$PATH" bash -c 'source /usr/share/bash-completion/bash_completion &&
                source "$1" && compopt() { :; } && COMP_WORDS=(uebctl "--bus-address=$2" record ctl_e) &&
                COMP_CWORD=3 && COMP_LINE="${COMP_WORDS[*]}" && COMP_POINT=${#COMP_LINE} &&
                _uebctl uebctl ctl_e record; echo "${COMPREPLY[*]}"' _ "$completion" "$UEBROKER_BUS_ADDRESS" 2>&1)"
        check "bash completion of event names" "ctl_ev" "$out"
else
        fail "bash-completion is not installed"
fi

# delete, then it is gone; deleting again fails with NoSuchEvent.
"$UEBCTL" delete ctl_ev && ok "delete" || fail "delete"
run_list --json
echo "$out" | python3 -c 'import json,sys; assert json.load(sys.stdin) == []' && ok "gone after delete" || fail "gone after delete: $out"
out="$("$UEBCTL" delete ctl_ev 2>&1)"; rc=$?
check "delete twice fails" "1" "$rc"
echo "$out" | grep -q "org.uebroker1.Error.NoSuchEvent" && ok "NoSuchEvent" || fail "NoSuchEvent: $out"

# An EventHeader tracepoint whose header says extension blocks
# follow, with none there: the raw header fields, and why, in text and JSON.
EH='ctl_Bad_L4K1 u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level'
record_start "$dir/eh.txt" --count=1 ctl_Bad_L4K1
"$UEBCTL" emit "$EH" eventheader_flags=7 version=0 id=0 tag=0 opcode=0 level=4 >/dev/null || fail "eventheader emit"
record_end
check "malformed EventHeader shown raw with the reason" \
        "[uid $uid pid P] ctl_Bad_L4K1: eventheader_flags=7 version=0 id=0 tag=0 opcode=0 level=4 (not a valid EventHeader event: an extension block's header runs past the record; 8 bytes: 0700000000000004)" \
        "$(mask_pid "$dir/eh.txt")"
record_start "$dir/eh.json" --json --count=1 ctl_Bad_L4K1
"$UEBCTL" emit "$EH" eventheader_flags=7 version=0 id=0 tag=0 opcode=0 level=4 >/dev/null || fail "eventheader emit (json)"
record_end
python3 - "$dir/eh.json" <<'PY' && ok "malformed EventHeader in JSON: raw fields and the reason" || fail "eventheader JSON: $(cat "$dir/eh.json")"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["fields"] == {"eventheader_flags": 7, "version": 0, "id": 0, "tag": 0, "opcode": 0, "level": 4}, r
assert r["eventheader_error"] == "an extension block's header runs past the record", r
assert r["raw"] == "0700000000000004", r
PY
# The same header without the extension flag: a decoded event of no fields.
record_start "$dir/eh-ok.txt" --count=1 ctl_Bad_L4K1
"$UEBCTL" emit "$EH" eventheader_flags=3 version=1 id=5 tag=0 opcode=0 level=4 >/dev/null || fail "eventheader emit (plain)"
record_end
check "EventHeader without metadata decoded" \
        "[uid $uid pid P] ctl_Bad_L4K1: ctl_Bad:(no metadata) level=4 keyword=0x1 id=5 version=1 data=0x" \
        "$(mask_pid "$dir/eh-ok.txt")"
"$UEBCTL" delete ctl_Bad_L4K1 || fail "delete ctl_Bad_L4K1"

# Record: EventHeader filters, as EventHeader sessions filter:
# the provider and levels 1..N asked of the broker by pattern (a level
# above stays disabled in the writer), any bit of the keyword mask on what
# arrives.
"$UEBCTL" record --count=3 --provider=ehprov --level=3 --keyword=0x5 >"$dir/eh.txt" 2>"$dir/eh.err" &
record_pid=$!; pids+=("$record_pid")
wait_recording "$dir/eh.err" "$record_pid"
grep -q "Recording events matching 3 patterns" "$dir/eh.err" && ok "--provider --level=3: three patterns" ||
        fail "filter patterns: $(cat "$dir/eh.err")"
out="$("$UEBCTL" emit 'ehprov_L4K1 u32 a' a=1)"
check "a level above --level stays disabled in the writer" "ehprov_L4K1: not enabled, nothing written" "$out"
out="$("$UEBCTL" emit 'ehother_L1K1 u32 a' a=1)"
check "another provider stays disabled" "ehother_L1K1: not enabled, nothing written" "$out"
for ev in ehprov_L2K1 ehprov_L3K2 ehprov_L1K4Gmygroup ehprov_L3Kf; do
        out="$("$UEBCTL" emit "$ev u32 a" a=7)"
        case "$out" in
        "$ev: written ("*) ok "emit $ev: within the level, enabled" ;;
        *) fail "emit $ev: within the level: $out" ;;
        esac
done
record_end
check "record with filters exits 0" 0 "$record_rc"
check "only the keyword's events are shown (0x2 is not in 0x5)" "ehprov_L2K1 ehprov_L1K4Gmygroup ehprov_L3Kf" \
        "$(sed -n 's/^\[[^]]*\] \([A-Za-z0-9_]*\):.*/\1/p' "$dir/eh.txt" | tr '\n' ' ' | sed 's/ $//')"
out="$("$UEBCTL" record --provider='a*' 2>&1)"; rc=$?
check "--provider takes a provider name, not a pattern" 2 "$rc"
out="$("$UEBCTL" list --level=3 2>&1)"; rc=$?
check "the filters are record's" "2 error: --provider, --level, --keyword or --keyword-all does nothing for uebctl list (see uebctl list --help)" "$rc $out"

for ev in ehprov_L4K1 ehother_L1K1 ehprov_L2K1 ehprov_L3K2 ehprov_L1K4Gmygroup ehprov_L3Kf; do
        "$UEBCTL" delete "$ev" || fail "delete $ev"
done

# Bus options: --bus-address overrides the environment.
out="$(UEBROKER_BUS_ADDRESS=unix:path=/nonexistent "$UEBCTL" --bus-address="$UEBROKER_BUS_ADDRESS" status)" &&
        ok "--bus-address" || fail "--bus-address: $out"
out="$(UEBROKER_BUS_ADDRESS=unix:path=/nonexistent "$UEBCTL" status 2>&1)"; rc=$?
check "unreachable bus fails" "1" "$rc"
out="$("$UEBCTL" --help)" || fail "--help exits 0"
echo "$out" | grep -q "record" && ok "--help lists record" || fail "--help: $out"
"$UEBCTL" nosuchcommand 2>/dev/null; check "unknown command" 2 "$?"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
