#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a hostile client costs everyone else, in one
run: with no attack, then during each attack of
tests/integration/test-hostile.py, root's GetStatus and another uid's
first Register on a fresh connection of one of its events (polkit answering, both descriptors
received), p50 and p99 in ms, and meanwhile an uninvolved writer of a
third uid at 5,000 records/s recorded by root reading promptly (sent,
refused with EAGAIN, received). The attacks:

- descriptors: 4 connections x 5000 Registers, replies never read;
- bytes: 16 connections x 100 ListEvents of 500 long events, never read;
- both: 250 connections x 40 of each;
- slow recorder: records its own event, drains once every 0.21 s and
  refills its stream with 60 KB records;
- rings: 1 MiB rings on 36 connections (its share of the ring memory);
- rings written: the same 36 rings written flat out, a lap of 4-byte
  records (32,768) whenever the broker has emptied one, with no regard to
  the status byte;
- streams: 20 RecordMatching streams matching the writer's event, never
  read (its share of the streams);
- churn: a new event name on a new connection, closed, for 4 s (at
  NewEventsPerUserPerMinute=);
- ring corruption: connect, corrupt a ring, disconnect, 300 times;
- paddings: a 1 MiB ring refilled with 8-byte paddings for 3 s.

Then attacks of several uids at once, each uid with names of
its own, with 1, 4, 8 and 16 uids (users that exist only in the run's
own mount namespace, test-hostile.py's CROWD): unread Registers (4 connections x
300), unread ListEvents (4 x 100), interactive Registers whose polkit
agent never answers (8 connections), 1 MiB rings (9), the same written
flat out, record streams (5).
With --bus dbus-broker the bus is dbus-broker serving the same
configuration (test-hostile.py's start_bus()). For each row, the CPU the
broker, the bus and the attackers' processes used while it was measured
(schedstat, % of one CPU): which of them a slow call waited behind.

The setting is the hostile test's: a private dbus-daemon configured like a
stock system bus (stock limits, default deny, root may read Debug.Stats as
Debian's system.conf says), the project's bus policy, a polkit stand-in
allowing register and record, `uebrokerd --system --provider=embedded`
with the hostile test's unread.conf. Needs root.

    bench-noisy-neighbour.py --broker PATH --source-root DIR [--samples N] [--bus dbus-daemon|dbus-broker]
"""

import argparse
import importlib.util
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

import dbus

WRITER_RATE = 5000
WRITER_SECONDS = 3


def load_harness(source_root):
    path = os.path.join(source_root, 'tests', 'integration', 'test-hostile.py')
    sys.path.insert(0, os.path.dirname(path))
    spec = importlib.util.spec_from_file_location('hostile', path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def percentile(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))] if values else float('nan')


class RootRecorder:
    """Root's Record stream of the writer's event, read promptly; counts
    records and LOST notices."""

    def __init__(self, h, event):
        conn = dbus.bus.BusConnection(h.ARGS.address)
        fd = conn.call_blocking(h.BROKER, h.PATH, h.INTERFACE, 'Record', 'as', ([event],), timeout=30)
        conn.close()
        self.stream = socket.socket(fileno=fd.take())
        self.received = self.lost = 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.read, daemon=True)
        self.thread.start()

    def read(self):
        try:
            while True:
                message = self.stream.recv(128 * 1024)
                if not message:
                    return
                off = 0
                while off + 48 <= len(message):
                    length, _, flags = struct.unpack_from('=IHH', message, off)
                    with self.lock:
                        if flags & 1:
                            self.lost += struct.unpack_from('=Q', message, off + 24)[0]
                        else:
                            self.received += 1
                    off += (length + 7) & ~7
        except OSError:
            return

    def counts(self):
        with self.lock:
            return self.received, self.lost

    def close(self):
        self.stream.shutdown(socket.SHUT_RDWR)
        self.thread.join(timeout=10)
        self.stream.close()


# The bystander's events, made before the first row: each row's Registers
# are then the same in every row (a fresh connection, polkit, both
# descriptors; the event already its), and new names in every row would
# run into its own NewEventsPerUserPerMinute= (37 rows of 25).
VICTIM_PREFIX = 'bench_victim'


def victim_registers(samples):
    return max(samples // 8, 1)


def measure(h, recorder, samples, tag, parties):
    """GetStatus and Register latencies while the writer writes, and the
    CPU each of @parties (name: pids, descendants included) used
    meanwhile, in % of one CPU (the machine has os.cpu_count())."""
    before = recorder.counts()
    cpu0 = {name: h.process_tree_cpu_ns(pids) for name, pids in parties.items()}
    wall0 = time.monotonic()
    print(f'bench-noisy-neighbour: {tag}', file=sys.stderr, flush=True)
    writer = subprocess.Popen(h.as_user(h.USERS[7], 'steady-writer', 'bench_steady_0', WRITER_RATE, WRITER_SECONDS),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    status = []
    deadline = time.monotonic() + WRITER_SECONDS
    for _ in range(samples):
        start = time.monotonic()
        h.root_call('GetStatus', timeout=25)
        status.append((time.monotonic() - start) * 1000)
        if time.monotonic() > deadline:
            break
    out = h.run_as(h.VICTIM, 'victim', victim_registers(samples), VICTIM_PREFIX, timeout=600)
    register = [s * 1000 for s in out['seconds']]
    wall = time.monotonic() - wall0
    cpu = {name: (h.process_tree_cpu_ns(pids) - cpu0[name]) / 1e7 / wall for name, pids in parties.items()}
    out_writer, err_writer = writer.communicate(timeout=120)
    try:
        written = json.loads(out_writer)
    except json.JSONDecodeError:
        # Its Register refused (among many uids, a refusal naming the
        # holders is what a bystander may get): nothing written.
        reason = (err_writer or '').strip().splitlines()[-1:] or ['no report']
        written = {'sent': 0, 'dropped': 0, 'writer_refused': reason[0][:200]}
    time.sleep(0.5)
    after = recorder.counts()
    return {
        'status': status,
        'register': register,
        'refused': (out['ok'] != len(register) and (out['errors'] + out['messages'])) or
                   ([written['writer_refused']] if 'writer_refused' in written else []),
        'sent': written['sent'],
        'dropped': written['dropped'],
        'received': after[0] - before[0],
        'lost': after[1] - before[1],
        'cpu': cpu,
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--broker', required=True)
    parser.add_argument('--source-root', required=True)
    parser.add_argument('--samples', type=int, default=200)
    parser.add_argument('--bus', choices=('dbus-daemon', 'dbus-broker'), default='dbus-daemon')
    args = parser.parse_args()
    if os.geteuid() != 0:
        print('bench-noisy-neighbour: needs root to act as other users', file=sys.stderr)
        return 77
    h = load_harness(os.path.abspath(args.source_root))
    # The crowd's users, in a mount namespace of this run's own.
    status = h.run_with_users(len(h.CROWD))
    if status is not None:
        return status
    h.ARGS = argparse.Namespace(broker=os.path.abspath(args.broker), source_root=os.path.abspath(args.source_root),
                                bus=args.bus)
    h.TMP = tempfile.mkdtemp(prefix='uebroker-bench-noisy.')
    os.chmod(h.TMP, 0o755)
    for helper in ('hostile-client.py', 'polkit-standin.py'):
        shutil.copy(os.path.join(h.HERE, helper), h.TMP)
    bus_socket = os.path.join(h.TMP, 'system_bus_socket')
    with open(os.path.join(h.TMP, 'bus.conf'), 'w') as f:
        f.write(h.BUS_CONFIG.format(socket=bus_socket, policy=os.path.join(h.ARGS.source_root, 'dbus',
                                                                         'org.uebroker1.conf')))
    with open(os.path.join(h.TMP, 'unread.conf'), 'w') as f:
        f.write(h.UNREAD_CONFIG)
    bus = h.start_bus(bus_socket)
    polkit = broker = recorder = None
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
        # 500 long events, so ListEvents replies are large: root's, since
        # a uid that holds them has no part left for the attacks' events.
        fill = h.Holder(0, 'fill', 500)
        holders.append(fill)
        fill.result()
        h.run_as(h.USERS[7], 'churn', 'bench_steady', 1)
        recorder = RootRecorder(h, 'bench_steady_0')

        h.run_as(h.VICTIM, 'victim', victim_registers(args.samples), VICTIM_PREFIX, timeout=600)
        def parties(attackers):
            return {'broker': [broker.proc.pid], 'bus': [bus.pid], 'attackers': [a.proc.pid for a in attackers]}

        results = {'none': measure(h, recorder, args.samples, 'none', parties([]))}
        # (attack, hostile-client command, whether it reports before the
        # attack holds (True) or when it is over (False))
        attacks = [
            ('descriptors', ('unread-register', 4, 5000, 'unread_fd u32 a'), True),
            ('bytes', ('unread', 16, 100), True),
            ('both', ('unread-both', 250, 40, 'unread_both u32 a'), True),
            ('slow recorder', ('slow-recorder', 'bench_slow', 8), False),
            ('rings', ('rings', 36, 1 << 20, 'bench_rings'), True),
            ('rings written', ('rings-write', 36, 1 << 20, 'bench_ringw'), True),
            ('streams', ('streams', 20, 'bench_*'), True),
            ('churn', ('churn-for', 'bench_churn', 4), False),
            ('ring corruption', ('ring-corrupt', 'bench_corrupt', 300), False),
            ('paddings', ('ring-write', 'bench_pad', 'paddings'), False),
        ]
        reports = {}
        for tag, command, holds in attacks:
            attack = h.Holder(h.ATTACKER, *command)
            try:
                if holds:
                    reports[tag] = attack.result()
                    time.sleep(2)
                else:
                    time.sleep(0.5)
                results[tag] = measure(h, recorder, args.samples, tag.replace(' ', '_'), parties([attack]))
                if not holds:
                    reports[tag] = attack.result(timeout=600)
                elif command[0] == 'rings-write':
                    reports[tag] = [reports[tag], attack.finish()]
            finally:
                attack.close()
            time.sleep(1)

        # Several uids at once: each runs the same attack (its own names).
        crowd = h.CROWD
        crowd_attacks = (
            ('unread', lambda uid: ('unread-register', 4, 300, f'unread_many_{uid} u32 a')),
            ('bytes', lambda uid: ('unread', 4, 100)),
            ('rings', lambda uid: ('rings', 9, 1 << 20, f'bench_rings_{uid}')),
            ('rings written', lambda uid: ('rings-write', 9, 1 << 20, f'bench_ringw_{uid}')),
            ('streams', lambda uid: ('streams', 5, 'bench_*')),
        )
        # The polkit checks last: the stand-in never answers them, so they
        # stay charged to their uids after they leave (orphaned, until
        # polkit answers) and would refuse those uids' later Registers.
        polkit_attack = ('polkit', lambda uid: ('interactive-register', 8, 1, f'bench_polkit_{uid}'))
        rounds = [(n, a) for n in (1, 4, 8, len(crowd)) for a in crowd_attacks]
        rounds += [(n, polkit_attack) for n in (1, 4, 8, len(crowd))]
        for n_uids, (name, command) in rounds:
            tag = f'{name} x{n_uids} uids'
            attacks_now = [h.Holder(uid, *command(uid)) for uid in crowd[:n_uids]]
            try:
                reports[tag] = [a.result() for a in attacks_now][:1]
                time.sleep(2)
                results[tag] = measure(h, recorder, args.samples, tag.replace(' ', '_'), parties(attacks_now))
                if command(0)[0] == 'rings-write':
                    reports[tag].append([a.finish() for a in attacks_now])
            finally:
                for a in attacks_now:
                    a.close()
            time.sleep(1)

        print('uebrokerd beside hostile clients (dbus-daemon with stock limits, the embedded provider); '
              'latencies in ms')
        print(f'{"attack":<20} {"GetStatus p50":>13} {"p99":>8} {"p99/none":>8} {"Register p50":>12} {"p99":>8} '
              f'{"p99/none":>8} | {"writer sent":>11} {"EAGAIN":>6} {"received":>8} {"lost":>5}')
        base = results['none']
        for tag, r in results.items():
            print(f'{tag:<20} {percentile(r["status"], 50):13.3f} {percentile(r["status"], 99):8.3f} '
                  f'{percentile(r["status"], 99) / percentile(base["status"], 99):8.2f} '
                  f'{percentile(r["register"], 50):12.3f} {percentile(r["register"], 99):8.3f} '
                  f'{percentile(r["register"], 99) / percentile(base["register"], 99):8.2f} | '
                  f'{r["sent"]:11d} {r["dropped"]:6d} {r["received"]:8d} {r["lost"]:5d}'
                  + (f'  (Registers refused: {r["refused"]})' if r['refused'] else ''))
        print()
        print(f'CPU used while each row was measured, % of one CPU ({os.cpu_count()} CPUs): the broker, the bus, '
              'and the attackers\' own processes (the bystanders, root\'s reader and this script are the rest)')
        print(f'{"attack":<20} {"broker":>8} {"bus":>8} {"attackers":>10}')
        for tag, r in results.items():
            print(f'{tag:<20} {r["cpu"]["broker"]:8.1f} {r["cpu"]["bus"]:8.1f} {r["cpu"]["attackers"]:10.1f}')
        print()
        print('what each attacker got:')
        for tag, report in reports.items():
            print(f'  {tag}: {json.dumps(report)[:300]}')
        conn = dbus.bus.BusConnection(h.ARGS.address)
        delivery = conn.call_blocking(h.BROKER, h.PATH, 'org.freedesktop.DBus.Properties', 'Get', 'ss',
                                      (h.INTERFACE, 'Delivery'), timeout=25)
        counters = conn.call_blocking(h.BROKER, h.PATH, 'org.freedesktop.DBus.Properties', 'Get', 'ss',
                                      (h.INTERFACE, 'RecordCounters'), timeout=25)
        conn.close()
        print('Delivery after the attacks:', json.dumps({str(k): int(v) for k, v in delivery.items()}))
        print('RecordCounters after the attacks:', json.dumps({str(k): int(v) for k, v in counters.items()}))
    finally:
        if recorder:
            recorder.close()
        for holder in holders:
            holder.close()
        if broker:
            broker.stop()
        for proc in (polkit, bus):
            if proc:
                proc.terminate()
                proc.wait(timeout=30)
                proc.stdout.close()
        if args.bus == 'dbus-broker':
            try:
                os.killpg(bus.pid, signal.SIGTERM)      # the journal stand-in with it
            except ProcessLookupError:
                pass
        shutil.rmtree(h.TMP, ignore_errors=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
