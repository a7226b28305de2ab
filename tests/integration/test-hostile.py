#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile local users against the real uebrokerd, on a private bus that is
configured like a stock system bus: dbus-daemon's built-in per-connection
limits (512 match rules, 128 pending replies, 256 connections per user),
a default-deny policy and the project's own dbus/org.uebroker1.conf. polkit
is a stand-in (polkit-standin.py) that allows org.uebroker1.register and
hangs on one uid's checks. Callers are unprivileged uids (setpriv).

    test-hostile.py --broker PATH --source-root DIR [--bus dbus-daemon|dbus-broker]

With --bus dbus-broker the same bus configuration is served by
dbus-broker-launch (socket-activated by systemd-socket-activate, in a mount
namespace of its own with fake-journald.py on /run/systemd/journal, which
the launcher logs to), so that every attack meets dbus-broker's own user
accounting; the tests about dbus-daemon's own mechanisms (its statistics,
its limits, its monitor) say so and are skipped there.

Needs root (to switch users) and setpriv; exits 77 (skip) otherwise.
UEBROKERD_WRAPPER (e.g. valgrind) runs the broker under a wrapper.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import dbus
import dbus.lowlevel

from uebtest import extra_users, run_with_users, wait_for

BROKER = 'org.uebroker1'
PATH = '/org/uebroker1'
INTERFACE = 'org.uebroker1.Broker'
ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied'
LIMITS_EXCEEDED = 'org.freedesktop.DBus.Error.LimitsExceeded'
NAME_IN_USE = 'org.uebroker1.Error.NameInUse'
QUOTA_EXCEEDED = 'org.uebroker1.Error.QuotaExceeded'

# Ten unprivileged uids of Debian's base system users (dbus-daemon refuses
# a system bus connection whose uid has no passwd entry): bin, sys, sync,
# games, man, lp, mail, news, uucp, proxy.
USERS = [2, 3, 4, 5, 6, 7, 8, 9, 10, 13]
OWNER, OTHER = USERS[0], USERS[1]
STALLED = 38                            # "list": the uid whose polkit checks hang
DAEMON_UID = 1                          # Debian's "daemon" user, primary group "daemon"

ARGS = None
TMP = None
BUS_PID = None
HERE = os.path.dirname(os.path.abspath(__file__))

BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <!-- As Debian's system.conf: default deny, no limit raised. -->
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Peer"/>
    <deny send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
  </policy>
  <policy user="root">
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Debug.Stats"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Monitoring"/>
    <allow own="org.freedesktop.PolicyKit1"/>
    <allow send_destination="org.freedesktop.PolicyKit1"/>
  </policy>
  <include>{policy}</include>
</busconfig>
'''

# NewEventsPerUserPerMinute= out of the way of the tests that churn on
# purpose; test_p has its own.
BROKER_CONFIG = '''[Limits]
Events=48
EventsPerUser=8
UnusedEventExpirySec=3600
NewEventsPerUserPerMinute=65536

[Reservations]
reserved_tick=user:{owner}
resv_*=group:daemon
'''


# For the unread-replies attacks: room for a table of large definitions
# (500 of one uid: at most half of the table while it is alone in it).
UNREAD_CONFIG = '''[Limits]
Events=1200
EventsPerUser=600
EventsPerClient=600
UnusedEventExpirySec=3600
'''

# For the churn of new names: NewEventsPerUserPerMinute= at its default.
CHURN_CONFIG = '''[Limits]
Events=600
EventsPerUser=8
UnusedEventExpirySec=3600
'''
ATTACKER, VICTIM = USERS[8], USERS[9]

# A handful of uids at once (system services each run as their
# own): sixteen users that main() adds in a mount namespace of the test's
# own (uebtest.run_with_users()), as dbus-daemon wants a passwd entry.
CROWD = extra_users(16)

# The default table (Events=4095, EventsPerUser=256), which sixteen uids
# at their EventsPerUser= would fill.
TABLE_CONFIG = '''[Limits]
UnusedEventExpirySec=3600
'''


def as_user(uid, *args):
    return ['setpriv', f'--reuid={uid}', f'--regid={uid}', '--clear-groups', '/usr/bin/python3',
            os.path.join(TMP, 'hostile-client.py'), ARGS.address] + [str(a) for a in args]


def run_as(uid, *args, timeout=120):
    """Runs a hostile-client command that does not hold; returns its JSON."""
    out = subprocess.run(as_user(uid, *args), capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise AssertionError(f'client {args} as {uid} failed: {out.stderr}')
    return json.loads(out.stdout)


class Holder:
    """A hostile-client command that holds its connections until closed."""

    def __init__(self, uid, *args):
        self.proc = subprocess.Popen(as_user(uid, *args), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def result(self, timeout=180):
        line = self.proc.stdout.readline()
        if not line:
            self.proc.wait(timeout=30)
            raise AssertionError(f'holder exited with {self.proc.returncode} before reporting')
        return json.loads(line)

    def finish(self):
        """Closes its stdin (for commands that report once more when it
        closes, as rings-write does): that last report."""
        self.proc.stdin.close()
        return self.result()

    def close(self):
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)
        self.proc.stdout.close()


class Broker:
    def __init__(self, prefix=(), config='uebrokerd.conf'):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=ARGS.address)
        wrapper = shlex.split(os.environ.get('UEBROKERD_WRAPPER', ''))
        self.log = open(os.path.join(TMP, 'broker.log'), 'a')
        self.proc = subprocess.Popen(list(prefix) + wrapper + [ARGS.broker, '--system', '--provider=embedded',
                                     '--config=' + os.path.join(TMP, config),
                                     '--state-dir=' + os.path.join(TMP, 'state')],
                                     env=env, stdout=self.log, stderr=self.log)
        root = dbus.bus.BusConnection(ARGS.address)
        try:
            if not wait_for(lambda: self.proc.poll() is None and root.name_has_owner(BROKER), 60):
                raise AssertionError('the broker did not come up: ' + self.log_text())
        finally:
            root.close()

    def log_text(self, tail=4000):
        with open(os.path.join(TMP, 'broker.log')) as f:
            text = f.read()
            return text[-tail:] if tail else text

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
        self.log.close()
        return rc

    def fds(self):
        return len(os.listdir(f'/proc/{self.proc.pid}/fd'))

    def rss_kib(self):
        with open(f'/proc/{self.proc.pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return int(line.split()[1])
        return 0


def broker_is_sanitized():
    """Whether the broker under test was built with AddressSanitizer."""
    with open(ARGS.broker, 'rb') as f:
        return b'__asan_init' in f.read()


def root_call(method, signature='', args=(), timeout=30):
    conn = dbus.bus.BusConnection(ARGS.address)
    try:
        return conn.call_blocking(BROKER, PATH, INTERFACE, method, signature, args, timeout=timeout)
    finally:
        conn.close()


def process_tree_cpu_ns(pids):
    """CPU time (every thread, /proc/PID/task/*/schedstat) of @pids and
    their descendants alive now, in ns: what they have used so far."""
    children = {}
    for entry in os.listdir('/proc'):
        if not entry.isdigit():
            continue
        try:
            with open(f'/proc/{entry}/stat') as f:
                # The field after the parenthesized comm: state, then ppid.
                ppid = int(f.read().rsplit(')', 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    total, todo = 0, list(pids)
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, []))
        try:
            for task in os.listdir(f'/proc/{pid}/task'):
                with open(f'/proc/{pid}/task/{task}/schedstat') as f:
                    total += int(f.read().split()[0])
        except (OSError, ValueError):
            continue        # it ended meanwhile
    return total


def delete_unused():
    """Root makes room: deletes every event nobody holds."""
    for name, (_, _, n_registrations) in events().items():
        if n_registrations == 0:
            root_call('Delete', 'sb', (name, False))


def events():
    return {str(e[0]): (str(e[1]), int(e[2]), int(e[3])) for e in root_call('ListEvents')}


class HostileTest(unittest.TestCase):
    broker = None

    @classmethod
    def setUpClass(cls):
        cls.broker = Broker()

    @classmethod
    def tearDownClass(cls):
        rc = cls.broker.stop()
        if rc != 0:
            raise AssertionError(f'the broker exited with {rc}: ' + cls.broker.log_text())

    def assertAlive(self):
        self.assertTrue(self.broker.alive(), 'the broker died: ' + self.broker.log_text())
        conn = dbus.bus.BusConnection(ARGS.address)
        try:
            conn.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Peer', 'Ping', '', (), timeout=30)
        finally:
            conn.close()

    def restart(self, prefix=(), config='uebrokerd.conf'):
        rc = type(self).broker.stop()
        self.assertEqual(rc, 0, 'the broker failed on SIGTERM')
        type(self).broker = self.broker = Broker(prefix, config)

    def test_1_600_sessions_of_10_users(self):
        # Beyond dbus-daemon's 512 match rules per connection: the broker
        # must not hold one per session.
        holders = [Holder(uid, 'hold', 60, f'hold_{uid} u32 a') for uid in USERS]
        try:
            for h in holders:
                self.assertEqual(h.result(), {'ok': 60, 'errors': [], 'messages': []})
            self.assertAlive()
            ev = events()
            for uid in USERS:
                self.assertEqual(ev[f'hold_{uid}'][1:], (uid, 60))
        finally:
            for h in holders:
                h.close()
        # Leaving releases everything, learned from the one subscription.
        self.assertTrue(wait_for(lambda: all(events()[f'hold_{uid}'][2] == 0 for uid in USERS), 60),
                        events())
        self.assertAlive()

    def test_2_descriptors_sent_to_a_method_are_refused_by_the_bus(self):
        before = self.broker.fds()
        out = run_as(USERS[2], 'fds', 200)
        self.assertEqual(out['errors'], {ACCESS_DENIED: 200})
        self.assertAlive()
        self.assertEqual(self.broker.fds(), before)

    def test_3_a_stalled_polkit_user_does_not_block_another(self):
        flood = Holder(STALLED, 'flood', 30, 'stalled_ev u32 a')
        try:
            out = flood.result()
            # AuthorizationsPerUser=8 (the default) wait; the rest are refused.
            self.assertEqual(out, {'ok': 0, 'errors': {LIMITS_EXCEEDED: 22}})
            other = Holder(USERS[3], 'register', 'not_stalled u32 a')
            try:
                self.assertTrue(other.result()['ok'])
            finally:
                other.close()
            with open(os.path.join(TMP, 'polkit.log')) as f:
                self.assertIn(f'{USERS[3]} org.uebroker1.register\n', f.read())
        finally:
            flood.close()
        self.assertAlive()

    def test_4_unread_replies_do_not_grow_the_broker(self):
        run_as(USERS[4], 'churn', 'unread_' + 'x' * 200, 8)
        rss_before = self.broker.rss_kib()
        holders = [Holder(USERS[4], 'unread', 4, 500) for _ in range(4)]
        try:
            for h in holders:
                self.assertEqual(h.result(), {'sent': 2000})
            start = time.monotonic()
            status = str(root_call('GetStatus', timeout=30))
            self.assertLess(time.monotonic() - start, 30)
            self.assertIn('unread_', status)
            self.assertTrue(run_as(USERS[5], 'churn', 'during_unread', 1)['ok'] == 1)
            self.assertLess(self.broker.rss_kib() - rss_before, 48 * 1024,
                            'the broker grew by more than 48 MiB for replies nobody reads')
        finally:
            for h in holders:
                h.close()
        self.assertAlive()

    def test_5_churn_cannot_take_another_users_name(self):
        owner = Holder(OWNER, 'register', 'owned_by_a u32 a')
        self.assertTrue(owner.result()['ok'])
        owner.close()           # unused from now on
        # Others take what they may of the table (48), each evicting only its
        # own events: each its part among the owners, which shrinks as more
        # own some, so six uids cannot fill it (user-charges.h).
        for uid in USERS[2:8]:
            run_as(uid, 'churn-polite', f'fill_{uid}', 8)
        ev = events()
        self.assertLess(len(ev), 48)
        self.assertLess(sum(1 for e in ev.values() if e[1] == USERS[7]), 8)
        # The last of them is refused as over its part, with who holds most.
        many = Holder(USERS[7], 'many', 'over_part', 8)
        out = many.result()
        many.close()
        self.assertEqual(out['errors'], [QUOTA_EXCEEDED], out)
        self.assertRegex(out['messages'][0], r'uid %d holds its part \(\d+\) of the events that \d+ uids share '
                         r'now; most are held by uid \d+ \(\d+\)' % USERS[7])
        # Root's reserve: root still creates events.
        root = Holder(0, 'register', 'root_reserve u32 a')
        out = root.result()
        root.close()
        self.assertTrue(out['ok'], out)
        # Churning new names only ever evicts its own (as fast as the
        # new-event rate allows: 65536 a minute here).
        out = run_as(OTHER, 'churn-polite', 'churn', 100)
        self.assertEqual(out['ok'], 100, out)
        ev = events()
        self.assertEqual(ev['owned_by_a'][1], OWNER)
        self.assertLessEqual(sum(1 for e in ev.values() if e[1] == OTHER), 8)
        # The name stays the owner's: other fields, or the same ones.
        theft = Holder(OTHER, 'register', 'owned_by_a u64 b')
        self.assertEqual(theft.result()['error'], NAME_IN_USE)
        theft.close()
        theft = Holder(OTHER, 'register', 'owned_by_a u32 a')
        out = theft.result()
        theft.close()
        self.assertEqual(out['error'], ACCESS_DENIED)
        self.assertIn('org.uebroker1.register-foreign', out['message'])
        owner = Holder(OWNER, 'register', 'owned_by_a u32 a')
        self.assertTrue(owner.result()['ok'])
        owner.close()
        delete_unused()         # room for the tests after this one

    def test_6_reserved_names(self):
        h = Holder(OTHER, 'register', 'reserved_tick u32 a')
        out = h.result()
        h.close()
        self.assertEqual(out['error'], ACCESS_DENIED)
        self.assertIn(f'reserved_tick is reserved for user:{OWNER}', out['message'])
        h = Holder(OWNER, 'register', 'reserved_tick u32 a')
        out = h.result()
        self.assertTrue(out['ok'], out)
        h.close()
        h = Holder(OTHER, 'register', 'resv_x u32 a')
        out = h.result()
        h.close()
        self.assertEqual(out['error'], ACCESS_DENIED)
        self.assertIn('group:daemon', out['message'])
        h = Holder(DAEMON_UID, 'register', 'resv_x u32 a')
        out = h.result()
        self.assertTrue(out['ok'], out)
        h.close()

    def test_7_ownership_survives_a_restart(self):
        h = Holder(OWNER, 'register', 'persist_a u32 a')
        self.assertTrue(h.result()['ok'])
        h.close()
        self.restart()
        ev = events()
        self.assertEqual(ev['persist_a'], ('u32 a', OWNER, 0))
        h = Holder(OTHER, 'register', 'persist_a u64 b')
        self.assertEqual(h.result()['error'], NAME_IN_USE)
        h.close()
        h = Holder(OTHER, 'register', 'persist_a u32 a')
        self.assertEqual(h.result()['error'], ACCESS_DENIED)
        h.close()

    def count_messages_of_registers(self, uid, n):
        """The broker's bus messages, by "TYPE MEMBER" (dbus-monitor's types),
        while a known connection of @uid registers a known event @n times."""
        root = dbus.bus.BusConnection(ARGS.address)
        broker_name = str(root.get_name_owner(BROKER))
        # The Ping that ends the count costs root's connection its one
        # identification (the broker charges even the replies sd-bus gives
        # by itself): pay it before counting.
        root.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Peer', 'Ping', '', (), timeout=30)
        client = subprocess.Popen(as_user(uid, 'repeat', n, f'counted_{uid} u32 a'), stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)
        monitor = None
        try:
            self.assertTrue(json.loads(client.stdout.readline())['ok'])
            # That first Register created the event: its EventAdded and
            # ActiveEvents change go out in the next batch of signals, at
            # most one interval (200 ms, daemon/bus/event-signals.h) later; let
            # it pass before counting.
            time.sleep(0.6)
            monitor = subprocess.Popen(['dbus-monitor', '--address', ARGS.address, '--profile'],
                                       stdout=subprocess.PIPE, text=True)
            # Monitoring once its own NameLost (BecomeMonitor's last act) shows.
            for line in monitor.stdout:
                if line.startswith('sig') and line.rstrip().endswith('NameLost'):
                    break
            client.stdin.write('go\n')
            client.stdin.flush()
            self.assertEqual(json.loads(client.stdout.readline()), {'ok': n})
            # The broker answers in order: once its reply to this Ping is
            # seen, so was everything before.
            root.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Peer', 'Ping', '', (), timeout=30)
            counts, ping_serial = {}, None
            for line in monitor.stdout:
                f = line.rstrip('\n').split('\t')
                kind, serial, sender, destination = f[0], f[2], f[3], f[4]
                if broker_name not in (sender, destination) and destination != BROKER:
                    continue
                if kind == 'mc' and f[7] == 'Ping' and sender == str(root.get_unique_name()):
                    ping_serial = serial
                    continue
                if kind == 'mr' and destination == str(root.get_unique_name()) and f[5] == ping_serial:
                    break
                key = f'{kind} {f[7]}' if kind in ('mc', 'sig') else kind
                counts[key] = counts.get(key, 0) + 1
        finally:
            if monitor:
                monitor.kill()
                monitor.wait()
                monitor.stdout.close()
            client.stdin.close()
            client.wait(timeout=30)
            client.stdout.close()
            root.close()
        return counts

    def test_8_a_known_connection_costs_no_extra_bus_round_trip(self):
        # Identity once: root's Register is its call and its reply, and
        # the broker's questions to the bus whether the replies with their
        # descriptors left it (GetConnectionStats, off the caller's path,
        # one for several replies: daemon/bus/delivery.c asks at once only
        # when the pins press, here every 8 replies of root and every 4 of
        # a uid bound by its share); an unprivileged one adds exactly one
        # CheckAuthorization round trip.
        # On dbus-broker there is no GetConnectionStats to ask: no probe.
        for uid, own_calls in ((0, {}), (USERS[3], {'mc CheckAuthorization': 20})):
            counts = self.count_messages_of_registers(uid, 20)
            probes = counts.pop('mc GetConnectionStats', 0)
            if ARGS.bus == 'dbus-daemon':
                self.assertTrue(1 <= probes <= 10, f'{probes} questions for 20 replies of uid {uid}: {counts}')
            else:
                self.assertEqual(probes, 0, counts)
            self.assertEqual(counts, {'mc Register': 20, **own_calls, 'mr': 20 + len(own_calls) * 20 + probes},
                             counts)

    def test_9_clients_sized_to_the_fd_limit(self):
        # 1200 descriptors: a reserve of 1024 and 88 sessions of two (fewer
        # under valgrind, which keeps some descriptors for itself).
        self.restart(['prlimit', '--nofile=1200:1200', '--'])
        match = re.search(r'serving at most (\d+)\.', self.broker.log_text(tail=None))
        self.assertIsNotNone(match, 'the broker did not say it lowered Clients=')
        limit = int(match.group(1))
        self.assertTrue(80 <= limit <= 88, limit)
        holders = [Holder(uid, 'hold', 50, f'fdlimit_{uid} u32 a') for uid in USERS[:2]]
        try:
            results = [h.result() for h in holders]
            # Every identified connection is charged to its uid: each of the
            # two holds its part of the bound (Clients=, lowered to the
            # descriptors), the first at most half, the second at least a
            # sixth, never all of it together: the rest is root's.
            self.assertIn(f'of the {limit} connections the broker serves, which 2 uids share now',
                          ' '.join(m for r in results for m in r['messages']))
            self.assertEqual(sorted({e for r in results for e in r['errors']}), [QUOTA_EXCEEDED])
            self.assertLess(sum(r['ok'] for r in results), limit, results)
            for r in results:
                self.assertGreaterEqual(r['ok'], limit // 6, results)
                self.assertLessEqual(r['ok'], limit // 2, results)
            self.assertAlive()
        finally:
            for h in holders:
                h.close()

    # A client that never reads its replies. dbus-daemon charges
    # what it could not deliver yet to the sender's incoming counters (64
    # descriptors, 127 MB) and stops reading the sender when they are full:
    # the broker must never leave that much undelivered.

    def broker_bus_stats(self):
        """dbus-daemon's statistics of the broker's connection; {} on a bus
        without them (dbus-broker)."""
        if ARGS.bus != 'dbus-daemon':
            return {}
        root = dbus.bus.BusConnection(ARGS.address)
        try:
            name = root.get_name_owner(BROKER)
            stats = root.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus',
                                       'org.freedesktop.DBus.Debug.Stats', 'GetConnectionStats', 's', (name,),
                                       timeout=30)
            return {str(k): int(v) for k, v in stats.items() if k != 'UniqueName'}
        finally:
            root.close()

    def assertServed(self, tag):
        """Root's GetStatus and another uid's Register (polkit answering,
        descriptors received) are answered while the attack runs."""
        times = []
        for _ in range(5):
            start = time.monotonic()
            try:
                root_call('GetStatus', timeout=25)
            except dbus.exceptions.DBusException as e:
                self.fail(f'{tag}: root\'s GetStatus not answered: {e}; broker on the bus: '
                          f'{self.broker_bus_stats()}')
            times.append(time.monotonic() - start)
        # Answered, and not starved (at native speed): on dbus-broker,
        # before large replies were charged to their uid, the first
        # GetStatus waited 16 to 22 s behind 20,000 unread calls of one
        # attacker. A served call takes milliseconds; the first one after
        # an attack waits for the bus to work through the attacker's
        # backlog, 2.2 s once on this 2-CPU machine with two compilers and
        # a mutation review beside the suite. The bound tells starved from
        # served, not fast from slow (bench-noisy-neighbour measures that).
        if not os.environ.get('UEBROKERD_WRAPPER') and not broker_is_sanitized():
            self.assertLess(max(times), 8.0, f'{tag}: GetStatus took {times}')
        out = run_as(VICTIM, 'victim', 5, f'victim_{tag}', timeout=200)
        self.assertEqual(out['ok'], 5, f'{tag}: {out}; broker on the bus: {self.broker_bus_stats()}')
        stats = self.broker_bus_stats()
        if stats:
            self.assertLess(stats['IncomingFDs'], 64, stats)
            self.assertLess(stats['IncomingBytes'], 64 << 20, stats)
        print(f'{tag}: GetStatus {[round(t, 3) for t in times]} s, Register max {max(out["seconds"]):.3f} s, '
              f'broker on the bus {stats.get("IncomingFDs")} fds, {stats.get("IncomingBytes")} bytes',
              file=sys.stderr)

    def test_a_unread_descriptor_replies(self):
        self.restart(config='unread.conf')
        attack = Holder(ATTACKER, 'unread-register', 4, 5000, 'unread_fd u32 a')
        try:
            self.assertEqual(attack.result(), {'sent': 20000})
            time.sleep(3)
            self.assertServed('descriptors')
        finally:
            attack.close()
        self.assertAlive()

    def test_b_unread_large_replies(self):
        self.restart(config='unread.conf')
        delete_unused()         # the attacker alone in the table: its half
        fill = Holder(ATTACKER, 'fill', 500)
        try:
            self.assertEqual(fill.result()['ok'], 500)
            attack = Holder(ATTACKER, 'unread', 16, 100)
            try:
                self.assertEqual(attack.result(), {'sent': 1600})
                time.sleep(3)
                self.assertServed('bytes')
            finally:
                attack.close()
        finally:
            fill.close()
        self.assertAlive()

    def test_s_four_uids_of_unread_registers(self):
        # Four uids, four connections each, 300 Registers each read by
        # nobody: each holds its part of the reply descriptors, which
        # shrinks as more uids pin some, so root and a fifth uid are served.
        self.restart(config='unread.conf')
        attacks = [Holder(uid, 'unread-register', 4, 300, f'unread4_{uid} u32 a') for uid in CROWD[:4]]
        try:
            for attack in attacks:
                self.assertEqual(attack.result(), {'sent': 1200})
            time.sleep(3)
            self.assertServed('four_uids')
            out = run_as(0, 'victim', 3, 'root_four', timeout=200)
            self.assertEqual(out['ok'], 3, out)
            # uebctl status says who holds what (PoolHolders): the four
            # uids hold the connections with registrations, the most named.
            status = subprocess.run([os.environ['UEBCTL'], 'status'], capture_output=True, text=True, timeout=60,
                                    env=dict(os.environ, UEBROKER_BUS_ADDRESS=ARGS.address))
            self.assertEqual(status.returncode, 0, status.stderr)
            line = re.search(r'^  clients +(\d+) uids?:(.*)$', status.stdout, re.M)
            self.assertIsNotNone(line, status.stdout)
            self.assertGreaterEqual(int(line.group(1)), 4, line.group(0))
            named = [int(uid) for uid in re.findall(r'uid (\d+) \(\d+\)', line.group(2))]
            self.assertEqual(len(named), 3, line.group(0))
            self.assertLessEqual(set(named), set(CROWD[:4]), line.group(0))
        finally:
            for attack in attacks:
                attack.close()
        self.assertAlive()

    def test_u_eight_uids_of_unanswered_interactive_checks(self):
        # Eight uids, each with AuthorizationsPerUser=8 interactive checks
        # that their agents never answer (the stand-in holds every
        # interactive check): each holds its part of the 64 checks in
        # flight, so another uid's plain Register is answered at once.
        self.restart()
        attacks = [Holder(uid, 'interactive-register', 8, 1, f'interactive_{uid}') for uid in CROWD[:8]]
        try:
            for attack in attacks:
                self.assertEqual(attack.result(), {'sent': 8})
            time.sleep(2)
            out = run_as(VICTIM, 'victim', 3, 'interactive_victim', timeout=200)
            self.assertEqual(out['ok'], 3, f'{out}; the broker said: {self.broker.log_text(tail=3000)}')
            self.assertLess(max(out['seconds']), 5, out)
        finally:
            for attack in attacks:
                attack.close()
        delete_unused()
        self.assertAlive()

    def test_x_many_uids_of_unread_registers_never_silence(self):
        # Sixteen uids whose Registers nobody reads pin the
        # reply descriptors up to their parts, which leaves too little for
        # another uid's 2-descriptor reply: it waits in the broker, and
        # after a second its call gets Busy naming who holds the room
        # instead of no answer at all. Root is served.
        self.restart(config='unread.conf')
        # 300 Registers on each of 4 connections: the refusals fill the
        # connections' sockets, and the replies after them stay in the bus.
        attacks = [Holder(uid, 'unread-register', 4, 300, f'unread16_{uid} u32 a') for uid in CROWD]
        try:
            for attack in attacks:
                self.assertEqual(attack.result(), {'sent': 1200})
            time.sleep(3)
            print('pools under sixteen uids:', self.pools(), file=sys.stderr)
            out = run_as(VICTIM, 'victim', 3, 'silence_victim', timeout=200)
            # Its reply or a refusal naming the holders within a second
            #, at native speed.
            native = not os.environ.get('UEBROKERD_WRAPPER') and not broker_is_sanitized()
            self.assertLess(max(out['seconds']), 1.0 if native else 3, out)
            for message in out['messages']:
                self.assertRegex(message, r'descriptors held most by uid \d+ \(\d+\)')
            self.assertEqual(set(out['errors']) - {'org.uebroker1.Error.Busy'}, set(), out)
            print(f'sixteen uids: bystander {out["ok"]} of 3 served, the rest refused; '
                  f'max {max(out["seconds"]):.3f} s', file=sys.stderr)
            out = run_as(0, 'victim', 3, 'silence_root', timeout=200)
            self.assertEqual(out['ok'], 3, out)
        finally:
            for attack in attacks:
                attack.close()
        self.assertAlive()

    def test_z_signals_queued_by_others_pin_no_replies(self):
        # The stock policy lets anyone send unicast signals to
        # any connection. 24 root connections run no main loop (dbus-python
        # without one: the documented bus contract) and register while
        # another uid floods them with signals, so their queues in the bus
        # never drain. They read their replies (call_blocking does); what
        # others queue to them must not keep the replies' descriptors
        # pinned (48 of 48 before, a bystander's Register unanswered).
        self.restart()
        root = subprocess.Popen(as_user(0, 'hold-flooded', 24, 'flooded u32 a'), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True)
        flood = None
        try:
            names = json.loads(root.stdout.readline())['names']
            # The flooder blocks once the bus stops reading it; it is
            # killed, not waited for.
            flood = subprocess.Popen(as_user(ATTACKER, 'signal-flood', 60, 32768, *names),
                                     stdout=subprocess.DEVNULL)
            if ARGS.bus == 'dbus-daemon':
                self.assertTrue(wait_for(lambda: self.outgoing_bytes(names[-1]) > 32768, 10))
            else:
                time.sleep(2)   # dbus-broker shows no queue; the flood runs all the same
            root.stdin.write('\n')
            root.stdin.flush()
            held = json.loads(root.stdout.readline())
            self.assertEqual(held['ok'], 24, held)
            time.sleep(2)
            queued = self.outgoing_bytes(names[0]) if ARGS.bus == 'dbus-daemon' else None
            out = run_as(VICTIM, 'victim', 3, 'flood_victim', timeout=120)
            fds, pool, _ = self.pools()['reply-fds']
            print(f'signal flood: {queued} bytes queued to a root connection, reply-fds {fds}/{pool}, '
                  f'victim {out}', file=sys.stderr)
            if queued is not None:
                self.assertGreater(queued, 32768)       # the attack took
            self.assertEqual(out['ok'], 3, out)
            self.assertLess(max(out['seconds']), 2, out)
            self.assertLessEqual(fds, 4, f'reply descriptors pinned during the flood: {fds} of {pool}')
        finally:
            if flood:
                flood.kill()
                flood.wait()
            root.stdin.close()
            root.wait(timeout=60)
            root.stdout.close()
        self.assertAlive()

    def outgoing_bytes(self, name):
        """What the bus holds for @name and has not delivered (root may
        read Debug.Stats, as Debian's system.conf lets it)."""
        conn = dbus.bus.BusConnection(ARGS.address)
        try:
            stats = conn.call_blocking('org.freedesktop.DBus', '/org/freedesktop/DBus',
                                       'org.freedesktop.DBus.Debug.Stats', 'GetConnectionStats', 's', (name,),
                                       timeout=30)
            return int(stats.get('OutgoingBytes', 0))
        finally:
            conn.close()

    def test_y_checks_of_callers_that_left_do_not_exhaust_the_bus(self):
        # Rounds of sixteen uids that each send 8 interactive
        # Registers (their agents never answer) and disconnect. The bus
        # counts every check the broker sent against the broker's pending
        # calls (128) until polkit answers, whoever left: the broker keeps
        # them out (orphaned, within the 64 in flight) instead of forgetting
        # them, and another uid's check still reaches polkit.
        self.restart()
        for round_ in range(4):
            attacks = [Holder(uid, 'interactive-register', 8, 1, f'orphan_{round_}') for uid in CROWD]
            for attack in attacks:
                self.assertEqual(attack.result(), {'sent': 8})
            time.sleep(0.5)
            for attack in attacks:
                attack.close()
            time.sleep(0.5)
        out = run_as(VICTIM, 'victim', 3, 'orphan_victim', timeout=200)
        self.assertEqual(out['ok'], 3, out)
        self.assertLess(max(out['seconds']), 5, out)
        delete_unused()
        self.assertAlive()

    def test_t_many_uids_fill_the_table_and_leave(self):
        # Sixteen uids register what they may (EventsPerUser=256 of the
        # default Events=4095 each) and leave their events unused: each took its
        # part of what the ones before it left, so the table keeps room
        # for root and for one more uid (a share alone left it full).
        self.restart(config='table.conf')
        delete_unused()
        for uid in CROWD:
            holder = Holder(uid, 'many', f'table_{uid}', 256)
            out = holder.result()
            holder.close()
            self.assertGreater(out['ok'], 0, out)
            self.assertLess(out['ok'], 257, out)
        ev = events()
        print(f'table: {len(ev)} of 4095 events after {len(CROWD)} uids', file=sys.stderr)
        self.assertLess(len(ev), 4095)
        out = run_as(VICTIM, 'victim', 5, 'table_victim', timeout=200)
        self.assertEqual(out['ok'], 5, out)
        out = run_as(0, 'victim', 5, 'table_root', timeout=200)
        self.assertEqual(out['ok'], 5, out)
        # The next Register of a uid at its part is refused, naming who
        # holds most of the table.
        holder = Holder(CROWD[-1], 'many', 'table_more', 300)
        out = holder.result()
        holder.close()
        self.assertEqual(out['errors'], [QUOTA_EXCEEDED], out)
        self.assertRegex(out['messages'][0], r'holds its part \(\d+\) of the events that \d+ uids share now; '
                         r'most are held by uid \d+ \(256\)')
        delete_unused()
        self.assertAlive()

    def test_c_unread_both_on_250_connections(self):
        self.restart(config='unread.conf')
        delete_unused()         # the attacker alone in the table: its half
        fill = Holder(ATTACKER, 'fill', 500)
        try:
            self.assertEqual(fill.result()['ok'], 500)
            attack = Holder(ATTACKER, 'unread-both', 250, 40, 'unread_both u32 a')
            try:
                self.assertEqual(attack.result(), {'sent': 20000})
                time.sleep(3)
                self.assertServed('both')
            finally:
                attack.close()
        finally:
            fill.close()
        self.assertAlive()

    def test_d_unread_introspection(self):
        # sd-bus answers Introspect by itself: 40,000 unread answers of
        # 3.5 KB would be 140 MB in dbus-daemon.
        self.restart(config='unread.conf')
        attack = Holder(ATTACKER, 'unread-introspect', 4, 10000)
        try:
            self.assertEqual(attack.result(), {'sent': 40000})
            time.sleep(3)
            self.assertServed('introspection')
        finally:
            attack.close()
        self.assertAlive()

    # The ring is hostile input.

    def record_stream(self, *names):
        conn = dbus.bus.BusConnection(ARGS.address)
        try:
            fd = conn.call_blocking(BROKER, PATH, INTERFACE, 'Record', 'as', (list(names),), timeout=30)
        finally:
            conn.close()
        import socket
        return socket.socket(fileno=fd.take())

    def drain_in_background(self, stream):
        """Reads @stream in a thread and discards what comes until it is
        closed; returns a list whose length is the messages read."""
        import threading
        messages = []

        def drain():
            try:
                while stream.recv(128 * 1024):
                    messages.append(1)
            except OSError:
                return
        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        return messages

    def drain_records_in_background(self, stream):
        """Reads @stream in a thread until it is closed; returns a list
        [records, lost] counted as they come."""
        import struct
        import threading
        counts = [0, 0]

        def drain():
            try:
                while True:
                    message = stream.recv(128 * 1024)
                    if not message:
                        return
                    off = 0
                    while off + 48 <= len(message):
                        length, _, flags = struct.unpack_from('=IHH', message, off)
                        if flags & 1:
                            counts[1] += struct.unpack_from('=Q', message, off + 24)[0]
                        else:
                            counts[0] += 1
                        off += (length + 7) & ~7
            except OSError:
                return
        thread = threading.Thread(target=drain, daemon=True)
        thread.start()
        return counts

    def read_records(self, stream, want, timeout=20):
        """(header fields, payload) of each record until @want arrived."""
        import struct
        header = struct.Struct('=IHHIIQQIIQ')
        stream.settimeout(timeout)
        records = []
        while len(records) < want:
            message = stream.recv(128 * 1024)
            off = 0
            while off + header.size <= len(message):
                length, name_len, flags, pid, uid, ts, lost, tid, _, write_ns = header.unpack_from(message, off)
                payload = message[off + header.size + name_len:off + length]
                records.append({'flags': flags, 'tid': tid, 'write_ns': write_ns, 'payload': payload,
                                'lost': lost})
                off += (length + 7) & ~7
        return records

    def counters(self):
        conn = dbus.bus.BusConnection(ARGS.address)
        try:
            props = conn.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Properties', 'Get', 'ss',
                                       (INTERFACE, 'RecordCounters'), timeout=30)
            return {str(k): int(v) for k, v in props.items()}
        finally:
            conn.close()

    def test_e_ring_payload_over_the_limit(self):
        self.restart(config='unread.conf')
        # The event exists before the recorder asks for it.
        run_as(ATTACKER, 'churn', 'ring_big', 1)
        stream = self.record_stream('ring_big_0')
        writer = Holder(ATTACKER, 'ring-write', 'ring_big_0', 'big')
        try:
            self.assertEqual(writer.result(), {'written': 'big'})
            # A 91,000-byte record is more than the broker takes and more
            # than libuebroker writes into a ring: the ring is
            # given up, nothing of it copied, and the good record behind
            # it is lost with it; its writer's other rings are not.
            with self.assertRaises(socket.timeout):
                self.read_records(stream, 1, timeout=2)
            self.assertIn('holds what no writer writes', self.broker.log_text())
            other = Holder(ATTACKER, 'ring-write', 'ring_big_0', 'claimed')
            try:
                self.assertEqual(other.result(), {'written': 'claimed'})
                (record,) = self.read_records(stream, 1)
                self.assertEqual(record['payload'][:4], b'\x03\x00\x00\x00')
            finally:
                other.close()
        finally:
            writer.close()
            stream.close()
        self.assertAlive()

    def broker_cpu_seconds(self):
        return process_tree_cpu_ns([self.broker.proc.pid]) / 1e9

    def test_e2_ring_claims_cost_the_broker_a_bounded_share(self):
        # Records claiming 64 KiB payloads they never write, a
        # ring's worth per lap, cost the writer a few stores; reading them
        # is charged to the writer's uid (EMBEDDED_RING_READ_BYTES_PER_SEC),
        # so the broker spends a bounded share of a core on them however
        # fast the laps come (83% of a core before), while root's calls and
        # a recorded writer of another uid are served.
        run_as(ATTACKER, 'churn', 'ring_claims', 1)
        stream = self.record_stream('ring_claims_0')
        # Read: a recorder alone that does not read stops the reading
        # (test_e3).
        self.drain_in_background(stream)
        before = self.broker_cpu_seconds()
        start = time.monotonic()
        writer = Holder(ATTACKER, 'ring-write', 'ring_claims_0', 'claims')
        try:
            times = []
            while time.monotonic() - start < 2.5:
                t = time.monotonic()
                root_call('GetStatus', timeout=25)
                times.append(time.monotonic() - t)
                time.sleep(0.05)
            result = writer.result()
            spent = self.broker_cpu_seconds() - before
            elapsed = time.monotonic() - start
            print(f'claims: {result["laps"]} laps, broker CPU {spent:.2f} s in {elapsed:.1f} s, '
                  f'GetStatus max {max(times):.3f} s', file=sys.stderr)
            # A lap is 1 MiB of claims (15 records and a padding): at
            # 256 MiB/s (EMBEDDED_RING_READ_BYTES_PER_SEC) with a 2 MiB
            # burst, 3 s are at most 770 laps (5000 before: all this
            # attacker manages, the broker reading whatever it claimed).
            self.assertGreater(result['laps'], 10)
            self.assertLessEqual(result['laps'], 3.1 * 256 * 1.1 + 2)
            # What the laps cost in CPU is compared at native speed only:
            # under valgrind or ASan a copy of a MiB costs many times more.
            if not os.environ.get('UEBROKERD_WRAPPER') and not broker_is_sanitized():
                self.assertLess(spent, 0.25 * elapsed)
                self.assertLess(max(times), 1.0)
        finally:
            writer.close()
            stream.close()
        self.assertAlive()

    def test_e2b_ring_claims_of_eight_uids_share_one_bound(self):
        # Eight uids make the claims of test_e2 at once. Each uid alone is
        # read at most EMBEDDED_RING_READ_BYTES_PER_SEC; all of them
        # together at most EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC
        # (ring-read-shares.h), shared evenly among those that want more,
        # so more uids (a user with subordinate uids has many) do not buy
        # more of the broker's CPU. Before the total, eight uids were read
        # eight times one's bound. Root, beside them, is read at its own
        # bound, outside the total (as user-charges.h exempts it).
        uids = CROWD[:8] + [0]
        events = []
        for i, uid in enumerate(uids):
            run_as(uid, 'churn', f'claims_uid{i}', 1)
            events.append(f'claims_uid{i}_0')
        stream = self.record_stream(*events)
        self.drain_in_background(stream)
        writers = []
        try:
            before = self.broker_cpu_seconds()
            start = time.monotonic()
            writers = [Holder(uid, 'ring-write', event, 'claims') for uid, event in zip(uids, events)]
            times = []
            while any(w.proc.poll() is None and time.monotonic() - start < 3.5 for w in writers):
                t = time.monotonic()
                root_call('GetStatus', timeout=25)
                times.append(time.monotonic() - t)
                time.sleep(0.05)
            laps = [w.result()['laps'] for w in writers]
            spent = self.broker_cpu_seconds() - before
            elapsed = time.monotonic() - start
            print(f'claims of 8 uids and root: laps {laps} (sum of the 8 {sum(laps[:-1])}), broker CPU {spent:.2f} s '
                  f'in {elapsed:.1f} s, GetStatus max {max(times):.3f} s', file=sys.stderr)
            laps, root_laps = laps[:-1], laps[-1]
            # A lap is 1 MiB of claims: at 512 MiB/s in all, the writers'
            # 3 s each (started within elapsed) are at most 512 * elapsed
            # laps, with 10% for the clocks' disagreement and two laps a
            # uid for a refill after a pause (at most a burst of two
            # rings; a new share starts empty).
            self.assertLessEqual(sum(laps), 512 * elapsed * 1.1 + 2 * len(uids))
            # And shared: every uid got some (under valgrind, whose broker
            # read 22-35 laps a uid here, a few), natively about as much
            # as the others (194-211 laps each in four runs).
            self.assertGreater(min(laps), 2 if os.environ.get('UEBROKERD_WRAPPER') else 10)
            self.assertLessEqual(root_laps, 256 * elapsed * 1.1 + 2)
            if not os.environ.get('UEBROKERD_WRAPPER') and not broker_is_sanitized():
                self.assertGreaterEqual(2 * min(laps), max(laps))
                # Root at its own bound (256 MiB/s), each of the others at
                # an eighth of 512.
                self.assertGreaterEqual(root_laps, 2 * max(laps))
                self.assertLess(spent, 0.45 * elapsed)
                self.assertLess(max(times), 1.0)
        finally:
            for w in writers:
                w.close()
            stream.close()
        self.assertAlive()

    def write_alone_then_beside_a_reader(self, event):
        """Runs ATTACKER's ring writer of @event twice: with the recorders
        the caller holds, then beside root's recorder reading it too;
        returns what the writer reported each time and the list whose
        length is the messages root read."""
        writer = Holder(ATTACKER, 'ring-write', event, 'records')
        try:
            alone = writer.result()
        finally:
            writer.close()
        reader = self.record_stream(event)
        try:
            messages = self.drain_in_background(reader)
            writer = Holder(ATTACKER, 'ring-write', event, 'records')
            try:
                beside = writer.result()
            finally:
                writer.close()
        finally:
            reader.close()
        return alone, beside, messages

    def assertHeldThenReadOn(self, alone, beside, messages, beside_max_wait):
        """What write_alone_then_beside_a_reader() reported: alone, the
        writer waited once for the hold (about 0.1 s) and then wrote on;
        beside the reader it wrote on, never waiting @beside_max_wait."""
        self.assertGreater(len(messages), 0)
        # Under valgrind the broker reads a lap of 32,768 records in
        # seconds: the timing is checked at native speed only.
        if os.environ.get('UEBROKERD_WRAPPER'):
            return
        self.assertGreater(alone['laps'], 10)
        self.assertGreaterEqual(alone['max_wait'], 0.09)
        self.assertLess(alone['max_wait'], 1.0)
        self.assertGreater(beside['laps'], 10)
        self.assertGreater(len(messages), 10)
        self.assertLess(beside['max_wait'], beside_max_wait)

    def test_e3_a_recorder_that_does_not_read_holds_back_little(self):
        # The only recorder does not read: once its stream is full a record
        # read from the ring would be lost, so the broker leaves the ring
        # unread, but no longer than EMBEDDED_RING_HOLD_MAX_USEC (0.1 s):
        # then it reads again and the recorder loses what does not fit.
        # Beside a recorder that reads, the unread one holds nothing back.
        run_as(ATTACKER, 'churn', 'ring_held', 1)
        unread = self.record_stream('ring_held_0')
        try:
            alone, beside, messages = self.write_alone_then_beside_a_reader('ring_held_0')
        finally:
            unread.close()
        print(f'unread recorder: alone {alone}, beside a reader {beside} ({len(messages)} messages read)',
              file=sys.stderr)
        # Beside a reader: never held.
        self.assertHeldThenReadOn(alone, beside, messages, float('inf') if broker_is_sanitized() else 0.09)
        self.assertAlive()

    def test_e4_unread_recorders_of_several_uids_hold_back_as_one(self):
        # Three uids each hold a stream recording the event and read
        # none: together they hold the ring as one unread recorder does
        # (at most 0.1 s per change of the recorders: the hold is the
        # session's, not a recorder's). Beside a recorder that reads, the
        # records go on.
        run_as(ATTACKER, 'churn', 'ring_held_uids', 1)
        holders = [Holder(uid, 'streams', 1, 'ring_held_uids_0') for uid in (ATTACKER, VICTIM, USERS[3])]
        try:
            for holder in holders:
                self.assertEqual(holder.result()['ok'], 1)
            alone, beside, messages = self.write_alone_then_beside_a_reader('ring_held_uids_0')
        finally:
            for holder in holders:
                holder.close()
        print(f'unread recorders of 3 uids: alone {alone}, beside a reader {beside} ({len(messages)} messages read)',
              file=sys.stderr)
        # Held, and then read on, as by one recorder (test_e3: its writer
        # waits about 0.18 s at most here, as this one does). Beside a
        # reader the records go on; each read costs four streams' copies,
        # so the wait beside it is timed by test_e3, with one.
        self.assertHeldThenReadOn(alone, beside, messages, 1.0)
        self.assertAlive()

    def steady_writer_beside(self, event, attack):
        """Root records VICTIM's steady writer of @event (10,000 records/s
        for 2 s) and calls GetStatus every 50 ms: alone, then with ATTACKER's
        hostile-client @attack holding. Returns what the writer reported,
        the broker's CPU seconds and the longest GetStatus, each (alone,
        beside), what the attacker reported, and the records root got."""
        def steady():
            before = self.broker_cpu_seconds()
            writer = Holder(VICTIM, 'steady-writer', event, 10000, 2)
            try:
                times = []
                start = time.monotonic()
                while time.monotonic() - start < 2.5:
                    t = time.monotonic()
                    root_call('GetStatus', timeout=25)
                    times.append(time.monotonic() - t)
                    time.sleep(0.05)
                return writer.result(), self.broker_cpu_seconds() - before, max(times)
            finally:
                writer.close()

        run_as(VICTIM, 'churn', event.rsplit('_', 1)[0], 1)
        stream = self.record_stream(event)
        try:
            got = self.drain_records_in_background(stream)
            alone = steady()
            attacker = Holder(ATTACKER, *attack)
            try:
                opened = attacker.result()
                beside = steady()
                written = attacker.finish()
            finally:
                attacker.close()
            wait_for(lambda: sum(got) >= alone[0]['sent'] + beside[0]['sent'], 30)
        finally:
            stream.close()
        return alone, beside, (opened, written), got

    def test_e5_rings_written_flat_out_cost_the_broker_a_bounded_share(self):
        # One uid writes its rings (its whole share of ring memory) flat
        # out, a lap of 4-byte records at once whenever the broker has
        # emptied one, whatever the status byte says (no one records
        # them). Charged their claims only (8 bytes), the broker freed 32
        # million a second for it, 60% of its core; an unwanted record
        # costs RING_UNWANTED_CHARGE now. Root's calls and another uid's
        # recorded writer are served meanwhile.
        alone, beside, attack, got = self.steady_writer_beside(
            'flat_steady_0', ('rings-write', 36, 1 << 20, 'ring_flat'))
        self.assertFlatOutBounded(alone, beside, attack, got)

    def test_e6_rings_written_flat_out_to_an_unread_recorder(self):
        # The same, recorded by a stream no one reads: once the hold is
        # over (test_e3), every record is read and lost to it.
        run_as(ATTACKER, 'churn', 'ring_lost', 1)
        unread = self.record_stream('ring_lost_0')
        try:
            alone, beside, attack, got = self.steady_writer_beside(
                'lost_steady_0', ('rings-write', 36, 1 << 20, 'ring_lost_0'))
        finally:
            unread.close()
        self.assertFlatOutBounded(alone, beside, attack, got)

    def assertFlatOutBounded(self, alone, beside, attack, got):
        (out_alone, cpu_alone, call_alone), (out, cpu, call) = alone, beside
        print(f'rings written flat out: {attack[0]["ok"]} rings, {attack[1]}; broker CPU {cpu_alone:.2f} s '
              f'alone, {cpu:.2f} s beside; GetStatus max {call_alone:.3f} s, {call:.3f} s; steady writer alone '
              f'{out_alone}, beside {out}; root received {got[0]} ({got[1]} lost)', file=sys.stderr)
        self.assertGreater(attack[0]['ok'], 0)
        self.assertGreater(attack[1]['records'], 0)
        # Root got every record the steady writer sent, and the writer
        # lost no more than alone (5% of slack for a loaded machine; a
        # quarter under ASan, where reading the attacker's rings at its
        # bound, which is in bytes, takes the broker several times the
        # CPU: 9.5% was seen once beside another test of the suite).
        self.assertEqual(got, [out_alone['sent'] + out['sent'], 0])
        if not os.environ.get('UEBROKERD_WRAPPER'):
            slack = out['sent'] // (4 if broker_is_sanitized() else 20)
            self.assertLessEqual(out['dropped'], out_alone['dropped'] + slack, (out_alone, out))
        # What the rings cost the broker beyond the writer's 2.5 s, at
        # native speed (under valgrind or ASan a record costs many times
        # more): a bounded share of a core, as claims (test_e2).
        if not os.environ.get('UEBROKERD_WRAPPER') and not broker_is_sanitized():
            self.assertLess(cpu - cpu_alone, 0.25 * 2.5)
            self.assertLess(call, 1.0)
        self.assertAlive()

    def test_f_ring_claims_are_flagged(self):
        run_as(ATTACKER, 'churn', 'ring_claimed', 1)
        stream = self.record_stream('ring_claimed_0')
        writer = Holder(ATTACKER, 'ring-write', 'ring_claimed_0', 'claimed')
        try:
            self.assertEqual(writer.result(), {'written': 'claimed'})
            (record,) = self.read_records(stream, 1)
            # What the writer claimed comes through, marked as a claim.
            self.assertEqual((record['tid'], record['write_ns']), (1, 1 << 63))
            self.assertTrue(record['flags'] & 4, record)      # UEB_RECORD_FLAG_WRITER_CLAIMED
        finally:
            writer.close()
            stream.close()
        self.assertAlive()

    def test_g_ring_of_paddings(self):
        run_as(ATTACKER, 'churn', 'ring_pad', 1)
        stream = self.record_stream('ring_pad_0')
        writer = Holder(ATTACKER, 'ring-write', 'ring_pad_0', 'paddings')
        try:
            times = []
            for _ in range(20):
                start = time.monotonic()
                root_call('GetStatus', timeout=25)
                times.append(time.monotonic() - start)
            self.assertEqual(writer.result(), {'written': 'paddings'})
            (record,) = self.read_records(stream, 1)
            self.assertEqual(record['payload'][:4], b'\x04\x00\x00\x00')
            print(f'paddings: GetStatus max {max(times):.3f} s', file=sys.stderr)
        finally:
            writer.close()
            stream.close()
        self.assertAlive()

    def test_h_a_slow_recorder_costs_only_itself(self):
        # A recorder that drains its stream once every 0.21 s
        # and refills it with its own 60 KB records; meanwhile another uid
        # writes 2,000 records/s and root records them, reading promptly.
        run_as(VICTIM, 'churn', 'steady', 1)
        stream = self.record_stream('steady_0')
        got = self.drain_records_in_background(stream)
        # What the writer loses by itself (a slow machine, valgrind): the
        # baseline, in the same run.
        baseline = run_as(VICTIM, 'steady-writer', 'steady_0', 10000, 3, timeout=120)
        attacker = Holder(ATTACKER, 'slow-recorder', 'slow_rec', 6)
        try:
            time.sleep(1)
            out = run_as(VICTIM, 'steady-writer', 'steady_0', 10000, 3, timeout=120)
            attack = attacker.result()
        finally:
            attacker.close()
        sent = baseline['sent'] + out['sent']
        wait_for(lambda: sum(got) >= sent, 30)
        stream.close()
        print(f'slow recorder: {attack}; writer alone {baseline}, beside it {out}; root received '
              f'{got[0]} ({got[1]} lost)', file=sys.stderr)
        # The writer loses nothing more for the slow recorder (the old
        # broker paused every data socket 200 ms of each 210: 7-12% lost
        # at 10,000/s), and root's prompt recorder gets all it wrote. Under
        # valgrind the broker itself cannot read 10,000/s (half is lost
        # alone) and the slow recorder's 13 MB/s of its own records costs
        # it CPU: the comparison is made at native speed only.
        # 5% of slack for a loaded machine (the recorder's own 13 MB/s
        # costs the broker CPU); the old pauses cost 12%.
        if not os.environ.get('UEBROKERD_WRAPPER'):
            self.assertLessEqual(out['dropped'], baseline['dropped'] + out['sent'] // 20, (baseline, out))
        self.assertEqual(got, [sent, 0])
        self.assertAlive()

    def drain_stream(self, stream):
        """Records and lost counts now in @stream, without waiting."""
        import struct
        got = lost = 0
        stream.setblocking(False)
        while True:
            try:
                message = stream.recv(128 * 1024)
            except BlockingIOError:
                break
            off = 0
            while off + 48 <= len(message):
                length, _, flags = struct.unpack_from('=IHH', message, off)
                if flags & 1:
                    lost += struct.unpack_from('=Q', message, off + 24)[0]
                else:
                    got += 1
                off += (length + 7) & ~7
        return got, lost

    def test_i_unread_streams_hold_little(self):
        # A stream nobody reads keeps a small send buffer (64
        # such held 138.7 MB); one whose consumer reads gets the large one.
        run_as(VICTIM, 'churn', 'buf', 1)
        stream = self.record_stream('buf_0')
        try:
            # 2,000 records of 4 KB, 8 MB: far more than either buffer.
            out = run_as(VICTIM, 'steady-writer', 'buf_0', 4000, 0.5, 4096, timeout=120)
            time.sleep(1)
            got, lost = self.drain_stream(stream)
            print(f'unread stream: {got} records kept of {out["sent"]}', file=sys.stderr)
            self.assertLess(got * 4200, 512 * 1024, 'an unread stream held more than 512 KiB')
            # Read once: the next burst finds the large buffer.
            run_as(VICTIM, 'steady-writer', 'buf_0', 4000, 0.05, 4096, timeout=120)
            time.sleep(0.5)
            self.drain_stream(stream)
            out = run_as(VICTIM, 'steady-writer', 'buf_0', 4000, 0.5, 4096, timeout=120)
            time.sleep(1)
            got, lost = self.drain_stream(stream)
            print(f'read stream: {got} records kept, {lost} lost of {out["sent"]}', file=sys.stderr)
            self.assertGreater(got * 4200, 600 * 1024, 'a stream that is read has the large buffer')
        finally:
            stream.close()
        self.assertAlive()

    def test_j_a_stalled_bus_is_reported(self):
        # When the bus takes none of what the broker queued
        # for 5 s, the log says so, with who holds undelivered replies,
        # and says when it moves again. The bus is stopped (SIGSTOP) while
        # the broker answers root's large ListEvents.
        if ARGS.bus != 'dbus-daemon':
            self.skipTest('the broker learns of a stall from dbus-daemon\'s statistics, which dbus-broker '
                          'does not have (there it holds nothing back: test-no-bus-stats)')
        self.restart(config='unread.conf')
        delete_unused()         # the attacker alone in the table: its half
        fill = Holder(ATTACKER, 'fill', 500)
        try:
            self.assertEqual(fill.result()['ok'], 500)
            conn = dbus.bus.BusConnection(ARGS.address)
            try:
                # Identified first: answering then needs nothing of the bus.
                conn.call_blocking(BROKER, PATH, INTERFACE, 'GetStatus', '', (), timeout=30)
                # The calls reach the broker's socket while it is stopped;
                # it answers them once the bus is.
                os.kill(self.broker.proc.pid, signal.SIGSTOP)
                # 100 of about 260 KB: more than the 16 MB the kernel takes
                # into the broker's socket (sd-bus asks for 8 MiB).
                for _ in range(100):
                    conn.send_message(dbus.lowlevel.MethodCallMessage(BROKER, PATH, INTERFACE, 'ListEvents'))
                conn.flush()
                time.sleep(0.5)
                os.kill(BUS_PID, signal.SIGSTOP)
                os.kill(self.broker.proc.pid, signal.SIGCONT)
                try:
                    stalled = wait_for(lambda: "The bus has taken none of the broker's" in
                                       self.broker.log_text(tail=None), 20)
                finally:
                    os.kill(BUS_PID, signal.SIGCONT)
                log = self.broker.log_text(tail=None)
                self.assertTrue(stalled, 'no stall reported: ' + log[-2000:])
                self.assertRegex(log, r"queued messages for [0-9]+ s\. Replies not yet delivered: [0-9]+ fds, "
                                      r"[0-9]+ bytes on [0-9]+ connections")
                self.assertTrue(wait_for(lambda: 'The bus takes the broker\'s messages again' in
                                         self.broker.log_text(tail=None), 30), self.broker.log_text()[-2000:])
            finally:
                conn.close()
        finally:
            fill.close()
        self.assertAlive()

    def test_k_ring_corruption_logs_are_rate_limited(self):
        # Connect, corrupt the ring, disconnect, 100 times: a
        # warning each time was 4,320 lines in 10 s from one process.
        self.restart(config='unread.conf')
        self.assertEqual(run_as(ATTACKER, 'ring-corrupt', 'corrupt_ev', 100, timeout=300), {'corrupted': 100})
        lines = [l for l in self.broker.log_text(tail=None).splitlines() if 'holds what no writer writes' in l]
        print(f'ring corruption: {len(lines)} of 100 logged', file=sys.stderr)
        self.assertGreaterEqual(len(lines), 1)
        self.assertLessEqual(len(lines), 25)
        self.assertAlive()

    def test_l_a_closed_recorder_counts_what_it_never_sent(self):
        # Records packed for a recorder but not yet sent when
        # it closes are lost, and counted: every record received for the
        # event is recorded or lost.
        run_as(VICTIM, 'churn', 'unsent', 1)
        before = self.counters()
        stream = self.record_stream('unsent_0')
        out = run_as(VICTIM, 'steady-writer', 'unsent_0', 4000, 0.5, 4096, timeout=120)
        time.sleep(1)               # the broker read it all; its message waits for room
        stream.close()
        self.assertTrue(wait_for(lambda: self.counters()['received'] - before['received'] == out['sent'], 10))
        time.sleep(1)
        after = self.counters()
        delta = {k: after[k] - before[k] for k in after}
        print(f'closed recorder: {delta} for {out["sent"]} sent', file=sys.stderr)
        self.assertEqual(delta['recorded'] + delta['lost'], delta['received'], delta)
        self.assertAlive()

    def pools(self):
        conn = dbus.bus.BusConnection(ARGS.address)
        try:
            pools = conn.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Properties', 'Get', 'ss',
                                       (INTERFACE, 'Pools'), timeout=30)
            return {str(name): (int(held), int(pool), int(share)) for name, held, pool, share in pools}
        finally:
            conn.close()

    def test_n_rings_take_one_users_share_and_go_with_the_last_registration(self):
        # One uid got 1 MiB rings on 36 connections and
        # unregistered everything; the rings stayed, and another uid was
        # refused one. Its share (a quarter of RingMemoryKiB=32768) stops it;
        # Unregister of the last event releases each ring.
        held, pool, share = self.pools()['ring-bytes']
        self.assertEqual((held, pool, share), (0, 32768 * 1024, 8192 * 1024))
        attack = Holder(ATTACKER, 'rings', 36, 1 << 20, 'ring_hog')
        try:
            out = attack.result()
            self.assertLess(out['ok'], 36, out)
            self.assertEqual(out['errors'], [QUOTA_EXCEEDED], out)
            self.assertIn(f'uid {ATTACKER} has used its share of the memory for rings (RingMemoryPerUserKiB=8192',
                          out['messages'][0])
            self.assertLessEqual(self.pools()['ring-bytes'][0], share)
            self.assertGreater(self.pools()['ring-bytes'][0], share - (2 << 20))
            victim = Holder(VICTIM, 'rings', 1, 1 << 20, 'ring_other')
            try:
                self.assertEqual(victim.result()['ok'], 1)
                victim_bytes = self.pools()['ring-bytes'][0] - out['bytes']
                attack.proc.stdin.write('\n')
                attack.proc.stdin.flush()
                self.assertEqual(attack.result(), {'unregistered': 36})
                # The attacker's connections stay, its rings do not.
                self.assertTrue(wait_for(lambda: self.pools()['ring-bytes'][0] <= victim_bytes + 4096 * 2, 20),
                                self.pools())
            finally:
                victim.close()
        finally:
            attack.close()
        self.assertTrue(wait_for(lambda: self.pools()['ring-bytes'][0] == 0, 20), self.pools())
        self.assertAlive()

    def test_o_record_streams_take_one_users_share(self):
        # 64 RecordMatching calls from one connection took
        # every stream; now a uid gets a quarter of RecordStreams=64.
        self.assertEqual(self.pools()['record-streams'], (0, 64, 16))
        attack = Holder(ATTACKER, 'streams', 20, 'ring_*')
        try:
            out = attack.result()
            self.assertEqual(out['ok'], 16, out)
            self.assertEqual(out['errors'], [QUOTA_EXCEEDED], out)
            self.assertIn(f'uid {ATTACKER} already has 16 record streams open (RecordStreamsPerUser=', out['messages'][0])
            other = Holder(VICTIM, 'streams', 1, 'ring_*')
            try:
                self.assertEqual(other.result()['ok'], 1)
                self.assertEqual(self.pools()['record-streams'][0], 17)
            finally:
                other.close()
        finally:
            attack.close()
        self.assertTrue(wait_for(lambda: self.pools()['record-streams'][0] == 0, 20), self.pools())
        self.assertAlive()

    def monitor_signals(self, action):
        """(time, member, name) of every EventAdded and EventRemoved the
        broker broadcast while @action ran, and its result."""
        # To a file: a pipe nobody reads until the end would stop the
        # monitor, and the bus would hold the rest of the signals for it.
        path = os.path.join(TMP, 'monitor.txt')
        with open(path, 'w') as out_file:
            monitor = subprocess.Popen(['dbus-monitor', '--address', ARGS.address,
                                        f"type='signal',sender='{BROKER}',interface='{INTERFACE}'"],
                                       stdout=out_file, stderr=subprocess.DEVNULL)
        try:
            time.sleep(1)
            result = action()
            time.sleep(1.5)         # the last batches
        finally:
            monitor.terminate()
            monitor.wait(timeout=30)
        signals, member = [], None
        with open(path) as f:
            for line in f:
                found = re.search(r'time=([0-9.]+) .*member=(EventAdded|EventRemoved)', line)
                if found:
                    member = (float(found.group(1)), found.group(2))
                elif member and line.strip().startswith('string "'):
                    signals.append(member + (line.strip()[len('string "'):-1],))
                    member = None
        return signals, result

    def test_p_new_event_churn_is_rate_limited(self):
        # A new name on a new connection, closed, at
        # EventsPerUser=: 4,903 EventAdded and 4,903 EventRemoved in 10 s
        # from one uid. Now EventsPerUser= at once, then 60 a minute.
        self.restart(config='churn.conf')
        delete_unused()

        def churn():
            start = time.monotonic()
            out = run_as(ATTACKER, 'churn', 'churn_rate', 200, timeout=600)
            elapsed = time.monotonic() - start
            # Another uid creates its own set at once.
            other = run_as(VICTIM, 'churn', 'churn_other', 8)
            return out, elapsed, other

        signals, (out, elapsed, other) = self.monitor_signals(churn)
        print(f'churn: {out["ok"]} of 200 new events in {elapsed:.1f} s', file=sys.stderr)
        self.assertGreaterEqual(out['ok'], 8, out)
        self.assertLessEqual(out['ok'], 8 + int(elapsed) + 1, out)
        self.assertEqual(out['errors'], [QUOTA_EXCEEDED], out)
        self.assertIn(f'uid {ATTACKER} creates new events too often (60 a minute after the first 8, '
                      'NewEventsPerUserPerMinute=, the default; set it in ', out['messages'][0])
        self.assertEqual(other['ok'], 8, other)
        # The signals of this test's names (delete_unused()'s go out in
        # batches meanwhile).
        added = sum(1 for _, member, name in signals if member == 'EventAdded' and name.startswith('churn_'))
        removed = sum(1 for _, member, name in signals if member == 'EventRemoved' and name.startswith('churn_'))
        print(f'churn: {added} EventAdded, {removed} EventRemoved', file=sys.stderr)
        self.assertLessEqual(removed, out['ok'])
        self.assertEqual(added, out['ok'] + 8)
        self.assertAlive()

    def test_q_signal_batches_are_capped(self):
        # Signal batches are capped: 300 new events at once (within
        # EventsPerUser=600 of unread.conf) go out 64 per batch, one batch
        # per 200 ms, every one of them.
        self.restart(config='unread.conf')
        delete_unused()
        signals, out = self.monitor_signals(lambda: run_as(VICTIM, 'churn', 'batch', 300, timeout=600))
        self.assertEqual(out['ok'], 300, out)
        ours = sorted(t for t, member, name in signals if member == 'EventAdded' and name.startswith('batch_'))
        self.assertEqual(len(ours), 300)
        # Any 150 ms (less than an interval, more than a batch takes) holds
        # one batch at most: 64 changed events, each at most two signals.
        every = sorted(t for t, _, _ in signals)
        densest = max(sum(1 for u in every[i:i + 200] if u - t < 0.15) for i, t in enumerate(every))
        print(f'batches: densest 150 ms held {densest} signals', file=sys.stderr)
        self.assertLessEqual(densest, 2 * 64)
        delete_unused()
        self.assertAlive()

    def test_r_the_state_file(self):
        # A 2 MiB state file of junk lines printed
        # 1,048,576 warnings at start; now ten and a count. And the file is
        # fsync'ed before the rename, its directory after.
        state = os.path.join(TMP, 'state')
        rc = type(self).broker.stop()
        self.assertEqual(rc, 0)
        with open(os.path.join(TMP, 'broker.log')) as f:
            log_start = len(f.read())
        with open(os.path.join(state, 'events'), 'w') as f:
            f.write('x\n' * (1 << 20))
        os.chmod(os.path.join(state, 'events'), 0o600)
        type(self).broker = self.broker = Broker()

        def log_since():
            with open(os.path.join(TMP, 'broker.log')) as f:
                return f.read()[log_start:]
        # The broker restores once the bus name is its own, then says it
        # serves: wait for that (slow under valgrind).
        self.assertTrue(wait_for(lambda: 'serving org.uebroker1' in log_since(), 120), log_since()[-2000:])
        log = log_since()
        skipped = [line for line in log.splitlines() if 'events:' in line and 'skipping' in line]
        self.assertEqual(len(skipped), 10, log[:2000])
        self.assertIn('1048566 more lines skipped (1048576 in all), not logged one by one.', log)
        # A new event is saved before its Register is answered: data, name,
        # directory.
        trace = os.path.join(TMP, 'strace.log')
        tracer = subprocess.Popen(['strace', '-f', '-qq', '-p', str(self.broker.proc.pid), '-o', trace, '-e',
                                   'trace=fsync,rename,renameat,renameat2'])
        try:
            time.sleep(2)           # attached
            self.assertTrue(run_as(VICTIM, 'churn', 'saved', 1)['ok'] == 1)
            with open(os.path.join(state, 'events')) as f:
                self.assertIn('saved_0', f.read())
            time.sleep(0.5)
        finally:
            tracer.send_signal(signal.SIGINT)       # detaches
            tracer.wait(timeout=30)
        with open(trace) as f:
            calls = [line.split(None, 1)[1] for line in f if 'fsync(' in line or 'rename' in line]
        renames = [i for i, call in enumerate(calls) if 'events.tmp' in call and 'rename' in call]
        self.assertTrue(renames, calls)
        last = renames[-1]
        self.assertTrue(any(call.startswith('fsync(') for call in calls[:last]), calls)
        self.assertTrue(any(call.startswith('fsync(') for call in calls[last + 1:]), calls)
        self.assertAlive()

    def test_v_acknowledged_events_survive_a_crash(self):
        # What a reply says exists survives a SIGKILL right
        # after it (the table was saved at most once a second before), and
        # so does a deletion, with the owner and the status index.
        created = run_as(VICTIM, 'churn', 'crash_kept', 3)
        self.assertEqual(created['ok'], 3, created)
        root_call('Delete', 'sb', ('crash_kept_1', False))
        self.broker.proc.kill()
        self.broker.proc.wait(timeout=30)
        self.broker.log.close()
        type(self).broker = self.broker = Broker()
        after = events()
        for name in ('crash_kept_0', 'crash_kept_2'):
            self.assertIn(name, after)
            self.assertEqual(after[name][1], VICTIM)
        self.assertNotIn('crash_kept_1', after)
        delete_unused()
        self.assertAlive()

    def test_m_each_method_asks_polkit_its_own_action(self):
        # Which action a real call asks for, method by method,
        # as an unprivileged uid against the stand-in (which logs each
        # question and allows register and record only).
        caller = USERS[7]
        run_as(OWNER, 'churn', 'theirs', 1)         # an event of another uid, unused
        cases = [
            ('Register', 's', ['mine_ev u32 a'], 'org.uebroker1.register', 'ok'),
            ('Register', 's', ['theirs_0 u32 a'], 'org.uebroker1.register-foreign', ACCESS_DENIED),
            ('Delete', 'sb', ['theirs_0', False], 'org.uebroker1.delete', ACCESS_DENIED),
            ('Record', 'as', [['theirs_0']], 'org.uebroker1.record', 'ok'),
            ('RecordMatching', 'as', [['theirs_*']], 'org.uebroker1.record', 'ok'),
        ]
        log = os.path.join(TMP, 'polkit.log')
        for method, signature, args, action, result in cases:
            with open(log) as f:
                seen = len(f.readlines())
            out = run_as(caller, 'call', method, signature, json.dumps(args))
            with open(log) as f:
                asked = [line.rstrip('\n') for line in f.readlines()[seen:]]
            self.assertEqual(asked, [f'{caller} {action}'], f'{method}{args}')
            self.assertEqual(out['result'], result, f'{method}{args}: {out}')
        self.assertAlive()


def start_bus(socket):
    """The bus, on @socket, configured by TMP/bus.conf; its address is
    the first line of its stdout."""
    config = os.path.join(TMP, 'bus.conf')
    if ARGS.bus == 'dbus-daemon':
        return subprocess.Popen(['dbus-daemon', '--config-file=' + config, '--nofork', '--print-address'],
                                stdout=subprocess.PIPE, text=True)
    # dbus-broker-launch logs to journald's socket and connects to the bus
    # it serves as a client (sd_bus_open_system()): both given to it here.
    address = 'unix:path=' + socket
    script = f"""
        set -e
        mount -t tmpfs tmpfs /run/systemd
        mkdir /run/systemd/journal
        /usr/bin/python3 {shlex.quote(os.path.join(HERE, 'fake-journald.py'))} /run/systemd/journal/socket \
                {shlex.quote(os.path.join(TMP, 'bus-journal.log'))} > /dev/null &
        for i in $(seq 100); do [ -S /run/systemd/journal/socket ] && break; sleep 0.05; done
        echo {shlex.quote(address)}
        exec systemd-socket-activate -E DBUS_SYSTEM_BUS_ADDRESS={shlex.quote(address)} -l {shlex.quote(socket)} \
                dbus-broker-launch --scope system --config-file {shlex.quote(config)}
    """
    os.makedirs('/run/systemd', exist_ok=True)
    # A session of its own: the journal stand-in goes with it (main()).
    bus = subprocess.Popen(['unshare', '--mount', '--propagation', 'private', 'bash', '-c', script],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    # The launcher starts at the first connection; wait until the bus answers.
    def answers():
        try:
            conn = dbus.bus.BusConnection(address)
            conn.close()
            return True
        except dbus.exceptions.DBusException:
            return False
    if not wait_for(lambda: os.path.exists(socket) and answers(), 30):
        bus.kill()
        raise RuntimeError('dbus-broker did not start')
    # systemd-socket-activate makes it 0755; a system bus is everyone's.
    os.chmod(socket, 0o666)
    return bus


def main():
    global ARGS, TMP
    parser = argparse.ArgumentParser()
    parser.add_argument('--broker', required=True)
    parser.add_argument('--source-root', required=True)
    parser.add_argument('--bus', choices=('dbus-daemon', 'dbus-broker'), default='dbus-daemon')
    ARGS, rest = parser.parse_known_args()
    if os.geteuid() != 0:
        print('test-hostile: needs root to act as other users, skipping', file=sys.stderr)
        return 77
    tools = ['dbus-monitor', 'setpriv', 'prlimit', 'unshare']
    tools += ['dbus-daemon'] if ARGS.bus == 'dbus-daemon' else ['dbus-broker-launch', 'systemd-socket-activate']
    for tool in tools:
        if not shutil.which(tool):
            print(f'test-hostile: {tool} is missing, skipping', file=sys.stderr)
            return 77
    # The crowd's users, in a mount namespace of this run's own.
    status = run_with_users(len(CROWD))
    if status is not None:
        return status

    TMP = tempfile.mkdtemp(prefix='uebroker-hostile.')
    os.chmod(TMP, 0o755)
    for helper in ('hostile-client.py', 'polkit-standin.py'):
        shutil.copy(os.path.join(HERE, helper), TMP)
    socket = os.path.join(TMP, 'system_bus_socket')
    with open(os.path.join(TMP, 'bus.conf'), 'w') as f:
        f.write(BUS_CONFIG.format(socket=socket,
                                  policy=os.path.join(ARGS.source_root, 'dbus', 'org.uebroker1.conf')))
    with open(os.path.join(TMP, 'uebrokerd.conf'), 'w') as f:
        f.write(BROKER_CONFIG.format(owner=OWNER))
    with open(os.path.join(TMP, 'unread.conf'), 'w') as f:
        f.write(UNREAD_CONFIG)
    with open(os.path.join(TMP, 'churn.conf'), 'w') as f:
        f.write(CHURN_CONFIG)
    with open(os.path.join(TMP, 'table.conf'), 'w') as f:
        f.write(TABLE_CONFIG)
    bus = start_bus(socket)
    global BUS_PID
    BUS_PID = bus.pid
    polkit = None
    try:
        ARGS.address = bus.stdout.readline().strip()
        polkit = subprocess.Popen(['/usr/bin/python3', os.path.join(TMP, 'polkit-standin.py'), ARGS.address,
                                   'org.uebroker1.register,org.uebroker1.record', str(STALLED),
                                   os.path.join(TMP, 'polkit.log')],
                                  stdout=subprocess.PIPE, text=True)
        if polkit.stdout.readline().strip() != 'ready':
            raise RuntimeError('the polkit stand-in did not start')
        program = unittest.main(argv=[sys.argv[0]] + rest, exit=False, verbosity=2)
        return 0 if program.result.wasSuccessful() else 1
    finally:
        for proc in (polkit, bus):
            if proc:
                proc.terminate()
                proc.wait(timeout=30)
                proc.stdout.close()
        if ARGS.bus == 'dbus-broker':
            try:
                os.killpg(bus.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
