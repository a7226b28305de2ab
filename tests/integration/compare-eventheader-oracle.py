#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""compare-eventheader-oracle.py EVENTHEADER_DAT_JSON TESTOUTPUT_DIR [DECODE_DAT_UTEST]
   compare-eventheader-oracle.py --perf-decode ARTIFACT_DIR

Our EventHeader decoding (eventheader-dat-json, as `uebctl record --json`
renders events) against LinuxTracepoints' own, on the file its tests
decode: TESTOUTPUT_DIR/EventHeaderInterceptorLE64.dat (374 events written
by its test providers: every encoding and format, arrays, structs, tags,
activity ids) and the JSON its decoder writes for it: with
DECODE_DAT_UTEST (its eventheader-decode-dat-utest, built from the same
checkout) that JSON is written now, by its decoding library, and must
equal the one it keeps (EventHeaderInterceptorLE64.dat.linux.json), which
is used without it. Every event's name, fields
(names, order, values) and header (level, keyword, opcode, id, version,
tag, activity ids) must agree, but for the differences listed in KNOWN
with their reasons; a known difference that no longer differs fails too
(the list must stay true). Exit 77 without a LinuxTracepoints checkout.

With --perf-decode, the vm tier's host check (tests/vm/run-vm.sh
--host-check): one run of LinuxTracepoints' EventHeader sample in the
guest, collected by perf-collect and decoded by perf-decode
(ARTIFACT_DIR/eh-perf-decode.json) and recorded by `uebctl record --json`
(ARTIFACT_DIR/eh-uebctl.jsonl): the same events, each with the same name,
header, fields and values, and the same thread.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

DAT = 'EventHeaderInterceptorLE64.dat'

# (event, field): why ours differs. A UTF-32 unit past U+10FFFF (or a
# surrogate) is no character: LinuxTracepoints writes it as the bytes of
# an invalid UTF-8 sequence (an old 5- or 6-byte form), we write U+FFFD,
# as JSON readers need valid text (docs/DECISIONS.md, EventHeader).
KNOWN = {
    ('TestProviderC:u32ch', 'FFFEFDFC'): 'UTF-32 unit 0xFFFEFDFC',
    ('TestProviderC:wch', '0x7fffffff'): 'UTF-32 unit 0x7FFFFFFF',
    ('TestProviderCpp:u32ch', 'FFFEFDFC'): 'UTF-32 unit 0xFFFEFDFC',
    ('TestProviderCpp:wch', '0x7fffffff'): 'UTF-32 unit 0x7FFFFFFF',
}


SEEN = set()


def pairs(p):
    return p


def decode_theirs(utest, testoutput, workdir):
    """Their library's JSON for the file, written now by their utest (it
    reads DIR/DAT, writes DIR/DAT.linux.json.actual and compares it with
    DIR/DAT.linux.json.expected)."""
    shutil.copyfile(os.path.join(testoutput, DAT), os.path.join(workdir, DAT))
    shutil.copyfile(os.path.join(testoutput, DAT + '.linux.json'), os.path.join(workdir, DAT + '.linux.json.expected'))
    run = subprocess.run([utest, workdir], capture_output=True)
    if run.returncode != 0:
        sys.exit(f'not ok: {utest} {workdir}: exit {run.returncode}: {run.stdout.decode(errors="replace")}')
    return os.path.join(workdir, DAT + '.linux.json.actual')


def load_theirs(path):
    """LinuxTracepoints' JSON (perf-decode's, or the decode test's): a BOM,
    then { "FILE": [ events ] } (the test's file lacks the outer braces)."""
    with open(path, 'rb') as f:
        # Their file holds the raw bytes of invalid UTF-8; surrogateescape
        # gives \\udcNN for each, as our JSON writes them.
        text = f.read().decode('utf-8', 'surrogateescape').lstrip('\ufeff').strip()
    if not text.startswith('{'):
        text = '{' + text + '}'
    return json.loads(text, object_pairs_hook=pairs)[0][1]


def load_ours(tool, testoutput):
    out = subprocess.run([tool, os.path.join(testoutput, DAT)], capture_output=True, check=True)
    return [json.loads(line, object_pairs_hook=pairs) for line in out.stdout.decode('utf-8').splitlines()]


def same_value(a, b):
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return False
        if all(isinstance(x, tuple) for x in a) and all(isinstance(x, tuple) for x in b):
            return all(x[0] == y[0] and same_value(x[1], y[1]) for x, y in zip(a, b))
        return all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, tuple) or isinstance(b, tuple):
        return a == b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (isinstance(a, float) or isinstance(b, float)) and abs(a - b) <= 1e-6 * max(abs(a), abs(b))
    if isinstance(a, str) and isinstance(b, str):
        if a.lower().startswith('0x') and b.lower().startswith('0x'):
            return a.lower() == b.lower()
        return a == b or same_bytes(a, b)
    return a == b


def same_bytes(ours, theirs):
    """A string that is not valid UTF-8: we keep each invalid byte as
    \\udcNN (lossless), LinuxTracepoints reads the whole string as Latin-1;
    the same bytes either way."""
    raw = ours.encode('utf-8', 'surrogateescape')
    try:
        return raw == theirs.encode('latin-1')
    except UnicodeEncodeError:
        return False


def header_of(ours):
    """LinuxTracepoints' "meta" members from our "eventheader" object."""
    eh = dict(ours.get('eventheader', []))
    meta = {}
    for theirs_key, ours_key in (('id', 'id'), ('version', 'version'), ('level', 'level'), ('opcode', 'opcode'),
                                 ('tag', 'tag'), ('activity', 'activity'), ('relatedActivity', 'related_activity')):
        if ours_key in eh:
            meta[theirs_key] = eh[ours_key]
    meta['keyword'] = eh.get('keyword')
    return eh, meta


def compare(theirs, ours):
    problems = []
    name = dict(ours).get('name')
    t = dict((k, v) for k, v in theirs if k in ('n', 'meta'))
    t_fields = [(k, v) for k, v in theirs if k not in ('n', 'meta')]
    o = dict(ours)
    for key in ('error', 'eventheader_error'):
        if key in o:
            return [f'{name}: ours did not decode it: {o[key]}']
    eh, meta = header_of(o)
    event = f'{eh.get("provider")}:{eh.get("event")}'
    if t['n'] != event:
        problems.append(f'{name}: name {event!r}, theirs {t["n"]!r}')
    t_meta = dict(t.get('meta', []))
    for key in ('level', 'id', 'version', 'opcode', 'tag', 'activity', 'relatedActivity'):
        mine, other = meta.get(key), t_meta.get(key)
        if key in ('id', 'version', 'opcode') and not other:
            other = 0
        if key in ('id', 'version', 'opcode') and not mine:
            mine = 0
        if key == 'tag':
            mine, other = int(str(mine or 0), 0), int(str(other or 0), 0)
        if not same_value(mine, other) and not (mine is None and other is None):
            problems.append(f'{t["n"]}: {key} {mine!r}, theirs {other!r}')
    # Theirs leaves the keyword out when it is 0.
    mine_kw = int(meta['keyword'] or '0', 16)
    other_kw = int(t_meta.get('keyword', '0'), 16)
    if mine_kw != other_kw:
        problems.append(f'{t["n"]}: keyword {meta["keyword"]!r}, theirs {t_meta.get("keyword")!r}')
    o_fields = list(o.get('fields', []))
    if len(o_fields) != len(t_fields):
        problems.append(f'{t["n"]}: {len(o_fields)} fields, theirs {len(t_fields)}: {o_fields!r} / {t_fields!r}')
    for (ok, ov), (tk, tv) in zip(o_fields, t_fields):
        if ok != tk:
            problems.append(f'{t["n"]}: field {ok!r}, theirs {tk!r}')
        elif not same_value(ov, tv):
            if (t['n'], tk) in KNOWN and ov == '\ufffd':
                SEEN.add((t['n'], tk))
                continue
            problems.append(f'{t["n"]}: {tk} = {ov!r}, theirs {tv!r}')
    return problems


def event_name(ours):
    eh = dict(dict(ours).get('eventheader', []))
    return f'{eh.get("provider")}:{eh.get("event")}'


def main_perf_decode(artifacts):
    """Each of perf-decode's events against uebctl's record of the same
    event (the first not yet matched with its name: the two may order
    events of different CPUs differently)."""
    theirs = load_theirs(os.path.join(artifacts, 'eh-perf-decode.json'))
    with open(os.path.join(artifacts, 'eh-uebctl.jsonl'), 'rb') as f:
        ours = [json.loads(line, object_pairs_hook=pairs) for line in f.read().decode('utf-8').splitlines()]
    problems = []
    if len(theirs) != len(ours) or len(theirs) < 2:
        problems.append(f'{len(ours)} events recorded by uebctl, {len(theirs)} by perf-collect (2 or more due)')
    unmatched = list(ours)
    for t in theirs:
        t_name = dict(t)['n']
        o = next((o for o in unmatched if event_name(o) == t_name), None)
        if o is None:
            problems.append(f'{t_name}: perf-decode shows it, uebctl recorded no such event')
            continue
        unmatched.remove(o)
        problems += compare(t, o)
        t_tid, o_tid = dict(dict(t).get('meta', [])).get('tid'), dict(o).get('tid', dict(o).get('pid'))
        if t_tid != o_tid:
            problems.append(f'{t_name}: thread {o_tid}, theirs {t_tid}')
    for o in unmatched:
        problems.append(f'{event_name(o)}: uebctl recorded it, perf-decode does not show it')
    for p in problems:
        print('not ok:', p)
    print(f'{len(theirs)} events of perf-decode against {len(ours)} of uebctl record: {len(problems)} differences')
    return 1 if problems else 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == '--perf-decode':
        return main_perf_decode(sys.argv[2])
    if len(sys.argv) < 3:
        print('compare-eventheader-oracle: ' + os.environ.get('LINUXTRACEPOINTS_MISSING', 'no TestOutput directory'),
              file=sys.stderr)
        return 77
    tool, testoutput = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as workdir:
        if len(sys.argv) > 3:
            theirs = load_theirs(decode_theirs(sys.argv[3], testoutput, workdir))
        else:
            theirs = load_theirs(os.path.join(testoutput, DAT + '.linux.json'))
    ours = load_ours(tool, testoutput)
    if len(theirs) != len(ours):
        print(f'not ok: {len(ours)} events decoded, theirs {len(theirs)}')
        return 1
    problems = []
    for t, o in zip(theirs, ours):
        problems += compare(t, o)
    for key in sorted(set(KNOWN) - SEEN):
        problems.append(f'{key[0]}: {key[1]} no longer differs ({KNOWN[key]}): take it out of KNOWN')
    for p in problems:
        print('not ok:', p)
    print(f'{len(theirs)} events, {len(problems)} differences beyond the {len(KNOWN)} known')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
