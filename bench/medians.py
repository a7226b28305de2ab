#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Runs a bench command N times (default 3) and prints, for every
comparison line it prints ("name value unit | baseline value unit | ratio
R", bench-util.h's bench_report()), the median of each figure over the
runs and the spread of the ratio, in the order the lines first appeared.

    bench/medians.py [--runs N] -- bench/run-bench.sh BUILD COMMAND ARGS...

Each run's whole output goes to stderr as it comes; a run that fails
stops it (exit 1)."""

import argparse
import re
import statistics
import subprocess
import sys

LINE = re.compile(r'^(?P<name>.+?)\s+(?P<value>-?[0-9.]+)\s+(?P<unit>\S+)\s+\|\s+'
                  r'(?P<base>.+?)\s+(?P<base_value>-?[0-9.]+)\s+\S+\s+\|\s+ratio\s+(?P<ratio>-?[0-9.]+)\s*$')


def parse(output):
    """(name, baseline) -> (value, base value, ratio, unit) of one run; a
    name seen twice in one run gets a #2, #3 suffix."""
    seen, figures = {}, {}
    for line in output.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        key = (m['name'], m['base'])
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:
            key = (f"{m['name']} #{seen[key]}", m['base'])
        figures[key] = (float(m['value']), float(m['base_value']), float(m['ratio']), m['unit'])
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('command', nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ['--'] else args.command
    if not command or args.runs < 1:
        parser.error('give a command after --, and --runs of 1 or more')
    runs = []
    for i in range(args.runs):
        print(f'medians: run {i + 1} of {args.runs}: {" ".join(command)}', file=sys.stderr, flush=True)
        proc = subprocess.run(command, stdout=subprocess.PIPE, text=True)
        sys.stderr.write(proc.stdout)
        if proc.returncode != 0:
            print(f'medians: run {i + 1} failed (exit {proc.returncode})', file=sys.stderr)
            return 1
        runs.append(parse(proc.stdout))
    order = [k for k in runs[0]] + [k for r in runs[1:] for k in r if k not in runs[0]]
    print(f'medians of {args.runs} runs (ratio: median, then min-max over the runs):')
    for key in dict.fromkeys(order):
        got = [r[key] for r in runs if key in r]
        unit = got[0][3]
        value = statistics.median(g[0] for g in got)
        base = statistics.median(g[1] for g in got)
        ratios = [g[2] for g in got]
        note = '' if len(got) == args.runs else f' (in {len(got)} of {args.runs} runs)'
        print(f'{key[0]:<40} {value:10.2f} {unit:<8} | {key[1]:<40} {base:10.2f} {unit:<8} | '
              f'ratio {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f}){note}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
