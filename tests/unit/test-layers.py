#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon's layers, as daemon/meson.build describes them: every file of
daemon/LAYER/ includes (with #include "...") only files of its own layer
and of the layers below it, core/ never includes sd-bus, and no file of
daemon/, client/, run/, tools/ or src/shared/ depends on itself through others
(no circle of files): neither through includes (a NAME.c with its NAME.h
is one unit) nor through calls (which object file defines each symbol
another one uses, from nm(1) over BUILD_ROOT, per library or program).

    test-layers.py SOURCE_ROOT [BUILD_ROOT]
    test-layers.py --self-test SOURCE_ROOT   (the check finds what it names)
"""
import glob
import os
import re
import subprocess
import sys

LAYERS = ["providers", "config", "core", "bus"]         # lowest first
# src/shared's rooms: basic/ below both others, which ignore each other.
SHARED_BELOW = {"basic": set(), "events": {"basic"}, "wire": {"basic"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^">]+)[">]', re.M)
SD_BUS = ("systemd/sd-bus.h", "bus-util.h", "bus-caller.h")
TREES = ["daemon", "client", "run", "tools", "src/shared"]


def layer_of(path):
    """The layer index of a daemon file, len(LAYERS) for main(), None else."""
    parts = path.split("/")
    if parts[0] != "daemon":
        return None
    if len(parts) == 2:
        return len(LAYERS)
    return LAYERS.index(parts[1])


def sources(root):
    """{relative path: text} of every .c and .h of TREES."""
    out = {}
    for tree in TREES:
        for dirpath, _, names in os.walk(os.path.join(root, tree)):
            for name in names:
                if name.endswith((".c", ".h")):
                    full = os.path.join(dirpath, name)
                    with open(full, encoding="utf-8", errors="replace") as f:
                        out[os.path.relpath(full, root)] = f.read()
    return out


def resolve(files, includer, name):
    """The file an #include "name" of includer means, among files, or None
    (a system, generated or public header)."""
    here = os.path.dirname(includer)
    candidates = [os.path.normpath(os.path.join(here, name))]
    if includer.startswith("daemon/"):
        candidates += ["daemon/%s/%s" % (layer, name) for layer in LAYERS]
    candidates += ["src/shared/%s/%s" % (room, name) for room in SHARED_BELOW]
    candidates += [os.path.join(tree, name) for tree in TREES]
    for c in candidates:
        if c in files:
            return c
    return None


def shared_room(path):
    parts = path.split("/")
    return parts[2] if parts[:2] == ["src", "shared"] and len(parts) == 4 else None


def unit(path):
    return path[:-2]


def circles(edges):
    """Every circle a depth-first search over @edges ({node: set}) meets."""
    state, stack, found = {}, [], []

    def visit(u):
        state[u] = 1
        stack.append(u)
        for v in sorted(edges.get(u, ())):
            if state.get(v) == 1:
                found.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = 2

    for u in sorted(edges):
        if u not in state:
            visit(u)
    return found


def call_edges(build):
    """{object: objects it calls into}, within each library or program."""
    defined, used = {}, {}
    for tree in TREES:
        for obj in glob.glob(os.path.join(build, tree, "**", "*.o"), recursive=True):
            rel = os.path.relpath(obj, build)
            if ".p/" not in rel:
                continue
            target = rel.split(".p/")[0]
            out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                f = line.split()
                if len(f) == 3 and f[1] in "TDBR":
                    defined.setdefault((target, f[2]), set()).add(rel)
                elif len(f) == 2 and f[0] == "U":
                    used.setdefault(rel, set()).add(f[1])
    edges = {}
    for rel, symbols in used.items():
        target = rel.split(".p/")[0]
        for sym in symbols:
            for other in defined.get((target, sym), ()):
                if other != rel:
                    edges.setdefault(rel, set()).add(other)
    return edges


def check(files):
    problems = []
    edges = {}
    for path, text in sorted(files.items()):
        mine = layer_of(path)
        for kind, name in INCLUDE.findall(text):
            if path.startswith("daemon/core/") and name.endswith(SD_BUS):
                problems.append("%s includes %s: core/ knows no bus" % (path, name))
            if kind != '"':
                continue
            target = resolve(files, path, name)
            if target is None:
                continue
            theirs = layer_of(target)
            if mine is not None and theirs is not None and theirs > mine:
                problems.append("%s (%s) includes %s, a layer above it" %
                                (path, LAYERS[mine] if mine < len(LAYERS) else "main", target))
            mine_room, theirs_room = shared_room(path), shared_room(target)
            if mine_room and theirs_room and theirs_room != mine_room and theirs_room not in SHARED_BELOW[mine_room]:
                problems.append("%s (src/shared/%s/) includes %s" % (path, mine_room, target))
            if unit(target) != unit(path):
                edges.setdefault(unit(path), set()).add(unit(target))
    problems += ["a circle of files: " + " -> ".join(c) for c in circles(edges)]
    return problems


def self_test(files):
    """Each kind of breakage is found once planted."""
    if not circles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) or circles({"a": {"b"}, "b": {"c"}, "a2": {"c"}}):
        print("self-test: the circle finder is wrong")
        return 1
    cases = [
        ("daemon/providers/provider-link.c", '#include "broker.h"\n', "a layer above"),
        ("daemon/core/admission.c", "#include <systemd/sd-bus.h>\n", "core/ knows no bus"),
        ("src/shared/basic/strbuf.c", '#include "event-def.h"\n', "(src/shared/basic/) includes"),
        ("src/shared/events/event-pattern.c", '#include "ring.h"\n', "(src/shared/events/) includes"),
        ("src/shared/basic/strbuf.h", '#include "log.h"\n', None),
    ]
    failed = 0
    for path, line, want in cases:
        planted = dict(files)
        planted[path] = line + planted[path]
        found = check(planted)
        if want is None:
            # log.c includes strbuf.h? Only a circle if it does; plant both.
            planted["src/shared/basic/log.h"] = '#include "strbuf.h"\n' + planted["src/shared/basic/log.h"]
            found = check(planted)
            want = "a circle of files"
        if not any(want in p for p in found):
            print("self-test: planting %r in %s was not found" % (line.strip(), path))
            failed += 1
    return failed


def main(argv):
    if len(argv) == 3 and argv[1] == "--self-test":
        files = sources(argv[2])
        if check(files):
            print("self-test needs a clean tree:", *check(files), sep="\n  ")
            return 1
        return 1 if self_test(files) else 0
    files = sources(argv[1])
    problems = check(files)
    if len(argv) > 2:
        problems += ["a circle of calls: " + " -> ".join(c) for c in circles(call_edges(argv[2]))]
    for p in problems:
        print(p)
    print("%d files, %d problems" % (len(files), len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
