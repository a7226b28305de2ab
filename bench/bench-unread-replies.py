#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a client that never reads its replies costs everyone else (issue
#17), and a recorder that reads slowly (issue #18): root's GetStatus and another uid's Register (polkit answering, both
descriptors received), p50 and p99 in ms, with no attack and under each
attack of tests/integration/test-hostile.py, in one run:

- descriptors: 4 connections x 5000 Registers, never read;
- bytes: 500 events of 511-byte definitions, 16 connections x 100
  ListEvents, never read;
- both: 250 connections x 40 of each.

The setting is the hostile test's: a private dbus-daemon configured like a
stock system bus (stock limits, default deny, root may read Debug.Stats as
Debian's system.conf says), the project's bus policy, a polkit stand-in
allowing register, `uebrokerd --system --provider=embedded`. Needs root.

    bench-unread-replies.py --broker PATH --source-root DIR [--samples N]
"""

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import dbus

HERE = os.path.dirname(os.path.abspath(__file__))


def load_harness(source_root):
    path = os.path.join(source_root, 'tests', 'integration', 'test-hostile.py')
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location('hostile', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def measure(h, samples, tag):
    status = []
    for _ in range(samples):
        start = time.monotonic()
        h.root_call('GetStatus', timeout=25)
        status.append((time.monotonic() - start) * 1000)
    out = h.run_as(h.VICTIM, 'victim', samples // 4 or 1, f'bench_{tag}_{time.monotonic_ns()}', timeout=600)
    register = [s * 1000 for s in out['seconds']]
    if out['ok'] != len(register):
        print(f'{tag}: {len(register) - out["ok"]} Registers refused: {out["errors"]}', file=sys.stderr)
    return status, register


def slow_recorder(h):
    """(sent, dropped, received by root) of a steady writer of another uid,
    alone and beside the slow recorder of hostile test_h."""
    import socket
    import struct
    import threading
    h.run_as(h.VICTIM, 'churn', 'bench_steady', 1)
    conn = dbus.bus.BusConnection(h.ARGS.address)
    fd = conn.call_blocking(h.BROKER, h.PATH, h.INTERFACE, 'Record', 'as', (['bench_steady_0'],), timeout=30)
    conn.close()
    stream = socket.socket(fileno=fd.take())
    counted = [0]

    def read():
        stream.settimeout(5)
        try:
            while True:
                message = stream.recv(128 * 1024)
                if not message:
                    return
                off = 0
                while off + 48 <= len(message):
                    length, _, flags = struct.unpack_from('=IHH', message, off)
                    if not flags & 1:
                        counted[0] += 1
                    off += (length + 7) & ~7
        except OSError:
            return
    reader = threading.Thread(target=read)
    reader.start()
    rows = {}
    out = h.run_as(h.VICTIM, 'steady-writer', 'bench_steady_0', 10000, 3, timeout=120)
    time.sleep(0.5)
    rows['alone'] = (out['sent'], out['dropped'], counted[0])
    before = counted[0]
    attacker = h.Holder(h.ATTACKER, 'slow-recorder', 'bench_slow', 6)
    try:
        time.sleep(1)
        out = h.run_as(h.VICTIM, 'steady-writer', 'bench_steady_0', 10000, 3, timeout=120)
        attacker.result()
    finally:
        attacker.close()
    reader.join(timeout=30)
    stream.close()
    rows['beside the slow one'] = (out['sent'], out['dropped'], counted[0] - before)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--broker', required=True)
    parser.add_argument('--source-root', required=True)
    parser.add_argument('--samples', type=int, default=200)
    args = parser.parse_args()
    if os.geteuid() != 0:
        print('bench-unread-replies: needs root to act as other users', file=sys.stderr)
        return 77
    h = load_harness(os.path.abspath(args.source_root))
    h.ARGS = argparse.Namespace(broker=os.path.abspath(args.broker), source_root=os.path.abspath(args.source_root))
    h.TMP = tempfile.mkdtemp(prefix='uebroker-bench-unread.')
    os.chmod(h.TMP, 0o755)
    for helper in ('hostile-client.py', 'polkit-standin.py'):
        shutil.copy(os.path.join(h.HERE, helper), h.TMP)
    socket = os.path.join(h.TMP, 'system_bus_socket')
    with open(os.path.join(h.TMP, 'bus.conf'), 'w') as f:
        f.write(h.BUS_CONFIG.format(socket=socket, policy=os.path.join(h.ARGS.source_root, 'dbus',
                                                                     'org.uebroker1.conf')))
    with open(os.path.join(h.TMP, 'unread.conf'), 'w') as f:
        f.write(h.UNREAD_CONFIG)
    bus = subprocess.Popen(['dbus-daemon', '--config-file=' + os.path.join(h.TMP, 'bus.conf'), '--nofork',
                            '--print-address'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    polkit = broker = None
    holders = []
    try:
        h.ARGS.address = bus.stdout.readline().strip()
        polkit = subprocess.Popen(['/usr/bin/python3', os.path.join(h.TMP, 'polkit-standin.py'), h.ARGS.address,
                                   'org.uebroker1.register,org.uebroker1.record', str(h.STALLED),
                                   os.path.join(h.TMP, 'polkit.log')],
                                  stdout=subprocess.PIPE, text=True)
        if polkit.stdout.readline().strip() != 'ready':
            raise RuntimeError('the polkit stand-in did not start')
        broker = h.Broker(config='unread.conf')
        fill = h.Holder(h.ATTACKER, 'fill', 500)
        holders.append(fill)
        fill.result()
        results = {'none': measure(h, args.samples, 'none')}
        attacks = {
            'descriptors': ('unread-register', 4, 5000, 'unread_fd u32 a'),
            'bytes': ('unread', 16, 100),
            'both': ('unread-both', 250, 40, 'unread_both u32 a'),
        }
        for tag, attack in attacks.items():
            holder = h.Holder(h.ATTACKER, *attack)
            holder.result()
            time.sleep(3)
            results[tag] = measure(h, args.samples, tag)
            holder.close()
            time.sleep(1)
        print('uebrokerd under a client that never reads its replies (dbus-daemon, stock limits); ms')
        print(f'{"attack":<12} {"GetStatus p50":>14} {"p99":>9} {"ratio p99":>10} '
              f'{"Register p50":>13} {"p99":>9} {"ratio p99":>10}')
        base = results['none']
        for tag, (status, register) in results.items():
            print(f'{tag:<12} {percentile(status, 50):14.3f} {percentile(status, 99):9.3f} '
                  f'{percentile(status, 99) / percentile(base[0], 99):10.2f} '
                  f'{percentile(register, 50):13.3f} {percentile(register, 99):9.3f} '
                  f'{percentile(register, 99) / percentile(base[1], 99):10.2f}')
        print()
        print('an uninvolved writer (10,000 records/s, 3 s, recorded by root reading promptly), alone and beside')
        print('a recorder that drains its own stream once every 0.21 s and refills it with 60 KB records')
        print(f'{"":<22} {"sent":>8} {"dropped":>8} {"received":>9}')
        for tag, row in slow_recorder(h).items():
            print(f'{tag:<22} {row[0]:8d} {row[1]:8d} {row[2]:9d}')
        conn = dbus.bus.BusConnection(h.ARGS.address)
        delivery = conn.call_blocking(h.BROKER, h.PATH, 'org.freedesktop.DBus.Properties', 'Get', 'ss',
                                      (h.INTERFACE, 'Delivery'), timeout=25)
        conn.close()
        print('Delivery after the attacks:', json.dumps({str(k): int(v) for k, v in delivery.items()}))
    finally:
        for holder in holders:
            holder.close()
        if broker:
            broker.stop()
        for proc in (polkit, bus):
            if proc:
                proc.terminate()
                proc.wait(timeout=30)
                proc.stdout.close()
        shutil.rmtree(h.TMP, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
