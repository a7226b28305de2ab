#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""EventAdded / EventRemoved on a private bus (run through broker-harness.sh):
what they carry (exactly what ListEvents shows), that a Register of a known
event sends nothing, and that churn is coalesced to a bounded rate (signals
counted against the interval in daemon/bus/event-signals.h)."""

import os
import sys
import time
import unittest

import dbus
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

from uebtest import exit_status, wait_for

NAME = 'org.uebroker1'
PATH = '/org/uebroker1'
IFACE = 'org.uebroker1.Broker'
ADDRESS = os.environ['UEBROKER_BUS_ADDRESS']
INTERVAL = 0.2      # EVENT_SIGNALS_INTERVAL_USEC


def connect():
    conn = dbus.bus.BusConnection(ADDRESS)
    return conn, dbus.Interface(conn.get_object(NAME, PATH), IFACE)


class Monitor:
    """Collects the broker's signals as `busctl monitor` would see them."""

    def __init__(self):
        self.conn = dbus.bus.BusConnection(ADDRESS, mainloop=DBusGMainLoop())
        self.signals = []
        for member in ('EventAdded', 'EventRemoved'):
            self.conn.add_signal_receiver(self._collector(member), signal_name=member, dbus_interface=IFACE,
                                          path=PATH)
        self.conn.add_signal_receiver(self._on_properties, signal_name='PropertiesChanged',
                                      dbus_interface='org.freedesktop.DBus.Properties', path=PATH)
        # The match rules are in place once a call made after them returns.
        self.conn.get_object(NAME, PATH).Introspect(dbus_interface='org.freedesktop.DBus.Introspectable')

    def _collector(self, member):
        def collect(*args):
            self.signals.append((time.monotonic(), member, tuple(self._plain(a) for a in args)))
        return collect

    def _on_properties(self, interface, changed, invalidated):
        if interface == IFACE and 'ActiveEvents' in changed:
            self.signals.append((time.monotonic(), 'ActiveEvents', (int(changed['ActiveEvents']),)))

    @staticmethod
    def _plain(value):
        return str(value) if isinstance(value, dbus.String) else int(value)

    def pump(self, seconds):
        """Dispatches what arrives for @seconds."""
        end = time.monotonic() + seconds
        context = GLib.MainContext.default()
        while time.monotonic() < end:
            while context.iteration(False):
                pass
            time.sleep(0.01)

    def wait(self, predicate, seconds=10.0):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.pump(0.02)
            if predicate():
                return True
        return predicate()

    def of(self, member, name=None):
        return [s for s in self.signals if s[1] == member and (name is None or s[2][0] == name)]

    def close(self):
        self.conn.close()


def list_entry(broker, name):
    for e in broker.ListEvents():
        if str(e[0]) == name:
            return (str(e[0]), str(e[1]), int(e[2]))
    return None


def delete_when_free(broker, name, timeout=10.0):
    """Delete, retried while the broker still sees the registering
    connection (Busy until its departure is processed)."""
    end = time.monotonic() + timeout
    while True:
        try:
            broker.Delete(name, False)
            return
        except dbus.DBusException as e:
            if e.get_dbus_name() != 'org.uebroker1.Error.Busy' or time.monotonic() > end:
                raise


class Signals(unittest.TestCase):
    def setUp(self):
        self.monitor = Monitor()
        self.conn, self.broker = connect()

    def tearDown(self):
        self.monitor.close()
        self.conn.close()

    def test_added_and_removed_carry_what_list_events_shows(self):
        conn, broker = connect()
        try:
            fds = broker.Register('sig_one u32 a; __data_loc char[] s')
            start = time.monotonic()
            for fd in fds[:2]:
                os.close(fd.take())
            self.assertTrue(self.monitor.wait(lambda: self.monitor.of('EventAdded', 'sig_one')),
                            'no EventAdded: %r' % self.monitor.signals)
            added = self.monitor.of('EventAdded', 'sig_one')
            self.assertEqual(len(added), 1, added)
            # The first change after a quiet time goes out at once, not after
            # an interval (generous bound: a loaded CI machine).
            self.assertLess(added[0][0] - start, 1.0)
            self.assertEqual(added[0][2], list_entry(self.broker, 'sig_one'))
            self.assertEqual(added[0][2], ('sig_one', 'u32 a; __data_loc char[] s', os.getuid()))
            self.assertTrue(self.monitor.wait(lambda: self.monitor.of('ActiveEvents')))
        finally:
            conn.close()
        delete_when_free(self.broker, 'sig_one')
        self.assertTrue(self.monitor.wait(lambda: self.monitor.of('EventRemoved', 'sig_one')))
        self.assertEqual([s[2] for s in self.monitor.of('EventRemoved', 'sig_one')], [('sig_one',)])
        self.assertIsNone(list_entry(self.broker, 'sig_one'))

    def test_register_of_a_known_event_sends_nothing(self):
        self.broker.Register('sig_known u32 a')
        self.assertTrue(self.monitor.wait(lambda: self.monitor.of('EventAdded', 'sig_known')))
        self.monitor.signals.clear()
        conns = []
        try:
            for i in range(100):
                self.broker.Register('sig_known u32 a')
            for i in range(20):
                conn, broker = connect()
                conns.append(conn)
                broker.Register('sig_known u32 a')
        finally:
            for conn in conns:
                conn.close()
        self.monitor.pump(3 * INTERVAL)
        self.assertEqual(self.monitor.signals, [])

    def test_churn_is_coalesced(self):
        self.churn('sig_churn', ['u32 a'])

    def test_churn_with_changing_fields_is_coalesced(self):
        # Each batch may now see other fields than it announced last:
        # EventRemoved + EventAdded, still at most once per interval.
        self.churn('sig_churn2', ['u32 a', 'u64 b'])

    def churn(self, name, field_lists):
        cycles = 0
        start = time.monotonic()
        # Create and delete the same event as fast as the bus allows.
        while time.monotonic() - start < 2.0 or cycles < 40:
            conn, broker = connect()
            broker.Register(name + ' ' + field_lists[cycles % len(field_lists)])
            conn.close()
            delete_when_free(self.broker, name)
            cycles += 1
            self.monitor.pump(0)
        elapsed = time.monotonic() - start
        self.monitor.pump(3 * INTERVAL)
        mine = self.monitor.of('EventAdded', name) + self.monitor.of('EventRemoved', name)
        active = self.monitor.of('ActiveEvents')
        intervals = elapsed / INTERVAL + 2
        print('%d create/delete cycles in %.2f s: %d EventAdded/EventRemoved, %d ActiveEvents changes '
              '(bound %d and %d)' % (cycles, elapsed, len(mine), len(active), 2 * intervals, intervals))
        # At most one EventRemoved and one EventAdded per batch, one batch
        # per interval (plus the first, sent at once).
        self.assertLessEqual(len(mine), 2 * intervals)
        self.assertLessEqual(len(active), intervals)
        # Coalescing happened: far fewer signals than changes.
        self.assertGreater(cycles * 2, 3 * len(mine), 'too few cycles to tell: %d' % cycles)
        # Listeners end with the truth: the event is gone, and the signals
        # alternate so that the last one says so. No signal at all is the
        # truth too: when every batch found the event deleted again (a
        # loaded machine can run a Delete before the first batch's timer),
        # listeners, who began without it, were never told otherwise.
        members = [s[1] for s in sorted(mine)]
        if members:
            self.assertEqual(members[-1], 'EventRemoved', members)
        for a, b in zip(members, members[1:]):
            self.assertNotEqual(a, b, members)
        # Each EventAdded carried fields the event really had.
        for s in self.monitor.of('EventAdded', name):
            self.assertIn(s[2][1], field_lists)
        self.assertIsNone(list_entry(self.broker, name))


if __name__ == '__main__':
    suite = unittest.TestLoader().loadTestsFromTestCase(Signals)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(exit_status(result))
