#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""systemctl reload, as the unit does it (SIGHUP), against a real broker
(broker-harness.sh --writable-config reload.conf --notify --polkit-mock): the daemon
answers RELOADING=1 with MONOTONIC_USEC, then READY=1; new limits apply to
new calls while what sessions hold stays; a broken file keeps the settings
in force and the log says why; a reservation of a name an event already
has takes effect when the name is free.

Environment (from the harness): UEBROKER_BUS_ADDRESS, UEBROKERD_PID,
UEBROKER_CONFIG, UEBROKERD_LOG, UEBROKER_NOTIFY_LOG, UEBROKER_HARNESS_DIR.
"""

import os
import signal
import subprocess
import sys
import time
import unittest

import dbus

from uebtest import exit_status, wait_for

NAME = 'org.uebroker1'
PATH = '/org/uebroker1'
IFACE = 'org.uebroker1.Broker'
ADDRESS = os.environ['UEBROKER_BUS_ADDRESS']
PID = int(os.environ['UEBROKERD_PID'])
CONFIG = os.environ['UEBROKER_CONFIG']
LOG = os.environ['UEBROKERD_LOG']
NOTIFY_LOG = os.environ['UEBROKER_NOTIFY_LOG']
# Debian system users with passwd entries (the bus refuses others).
BIN_UID, SYS_UID, DAEMON_UID = 2, 3, 1


def connect():
    conn = dbus.bus.BusConnection(ADDRESS)
    return conn, dbus.Interface(conn.get_object(NAME, PATH), IFACE)


def read(path):
    with open(path, errors='replace') as f:
        return f.read()


def write_config(text):
    # A new file renamed over the old one: the broker never reads half of it.
    tmp = CONFIG + '.new'
    with open(tmp, 'w') as f:
        f.write(text)
    os.rename(tmp, CONFIG)


def reload(expect_success=True):
    """SIGHUP, then waits for the READY=1 that follows RELOADING=1, and for
    the log line saying how it went. Returns the notify messages it sent."""
    notified = len(read(NOTIFY_LOG).splitlines())
    marker = 'Reloaded the configuration' if expect_success else 'Reloading failed'
    logged = read(LOG).count(marker)
    os.kill(PID, signal.SIGHUP)
    assert wait_for(lambda: any(m.startswith('READY=1') for m in read(NOTIFY_LOG).splitlines()[notified:])), \
        'no READY=1 after SIGHUP: %r' % read(NOTIFY_LOG)
    assert wait_for(lambda: read(LOG).count(marker) > logged), 'no "%s" in the log:\n%s' % (marker, read(LOG))
    return read(NOTIFY_LOG).splitlines()[notified:]


def register_as(uid, command):
    """Registers @command as @uid on its own connection, which then closes:
    'ok', or the error name and message."""
    code = ('import dbus, sys\n'
            'b = dbus.Interface(dbus.bus.BusConnection(sys.argv[1]).get_object(%r, %r), %r)\n'
            'try:\n'
            '    b.Register(sys.argv[2])\n'
            '    print("ok")\n'
            'except dbus.DBusException as e:\n'
            '    print(e.get_dbus_name(), e.get_dbus_message())\n' % (NAME, PATH, IFACE))
    out = subprocess.run(['setpriv', '--reuid=%d' % uid, '--regid=%d' % uid, '--clear-groups',
                          '/usr/bin/python3', '-c', code, ADDRESS, command],
                         capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise AssertionError('client as uid %d failed: %s' % (uid, out.stderr))
    return out.stdout.strip()


def events_by_name(broker):
    return {str(e[0]): (int(e[2]), int(e[3])) for e in broker.ListEvents()}


class Reload(unittest.TestCase):
    def expect_error(self, call, name, text):
        with self.assertRaises(dbus.DBusException) as cm:
            call()
        self.assertEqual(cm.exception.get_dbus_name(), name)
        self.assertIn(text, cm.exception.get_dbus_message())

    def test_1_notify_protocol(self):
        # The start: READY=1 once.
        self.assertTrue(wait_for(lambda: any(m.startswith('READY=1') for m in read(NOTIFY_LOG).splitlines())))
        messages = reload()
        self.assertGreaterEqual(len(messages), 2, messages)
        first = messages[0].split('|')
        self.assertIn('RELOADING=1', first)
        usec = [f for f in first if f.startswith('MONOTONIC_USEC=')]
        self.assertEqual(len(usec), 1, first)
        # CLOCK_MONOTONIC in microseconds, taken before now.
        sent = int(usec[0].split('=')[1])
        self.assertGreater(sent, 0)
        self.assertLessEqual(sent, time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000)
        self.assertTrue(messages[-1].startswith('READY=1'), messages)

    def test_2_limits_apply_to_new_calls_and_sessions_keep_theirs(self):
        conn_a, a = connect()
        props = dbus.Interface(conn_a.get_object(NAME, PATH), 'org.freedesktop.DBus.Properties')
        write_config('[Limits]\nEventsPerClient=3\nEvents=100\n')
        reload()
        self.assertEqual(int(props.Get(IFACE, 'MaxEvents')), 100)
        for i in range(3):
            a.Register('rl_a%d u32 x' % i)
        self.expect_error(lambda: a.Register('rl_a3 u32 x'), 'org.uebroker1.Error.QuotaExceeded', 'EventsPerClient=')

        # Lowered: A keeps its three; a new connection gets one.
        write_config('[Limits]\nEventsPerClient=1\nEvents=50\n')
        reload()
        self.assertEqual(int(props.Get(IFACE, 'MaxEvents')), 50)
        events = events_by_name(a)
        self.assertEqual([events['rl_a%d' % i][1] for i in range(3)], [1, 1, 1])
        a.Register('rl_a0 u32 x')       # held already: still answered
        conn_b, b = connect()
        b.Register('rl_b0 u32 x')
        self.expect_error(lambda: b.Register('rl_b1 u32 x'), 'org.uebroker1.Error.QuotaExceeded', 'EventsPerClient=')
        self.expect_error(lambda: a.Register('rl_a3 u32 x'), 'org.uebroker1.Error.QuotaExceeded', 'EventsPerClient=')

        # Raised: both may register more.
        write_config('[Limits]\nEventsPerClient=5\nEvents=50\n')
        reload()
        a.Register('rl_a3 u32 x')
        b.Register('rl_b1 u32 x')
        conn_a.close()
        conn_b.close()

    def test_3_broken_file_keeps_the_settings(self):
        write_config('[Limits]\nEventsPerClient=1\nEvents=40\n')
        reload()
        write_config('[Limits]\nEventsPerClient=7\nEvents=abc\n')
        reload(expect_success=False)
        self.assertIn('Reloading failed, keeping the configuration in force: %s:3: Events=abc is not a decimal '
                      'number (1..4095)' % CONFIG, read(LOG))
        conn, c = connect()
        props = dbus.Interface(conn.get_object(NAME, PATH), 'org.freedesktop.DBus.Properties')
        self.assertEqual(int(props.Get(IFACE, 'MaxEvents')), 40)
        c.Register('rl_c0 u32 x')
        # EventsPerClient=7 was not applied: still 1.
        self.expect_error(lambda: c.Register('rl_c1 u32 x'), 'org.uebroker1.Error.QuotaExceeded',
                          'EventsPerClient=')
        # The broker still serves, and a good file applies again.
        write_config('[Limits]\nEventsPerClient=2\n')
        reload()
        c.Register('rl_c1 u32 x')
        self.assertEqual(int(props.Get(IFACE, 'MaxEvents')), 4095)     # back to the default
        conn.close()

    def test_4_reservation_takes_effect_when_the_name_is_free(self):
        # The bus socket lives in the harness's private directory: let the
        # other users reach it.
        os.chmod(os.environ['UEBROKER_HARNESS_DIR'], 0o755)
        # The harness's polkit mock allows registering; reservations are
        # the broker's own decision, before polkit.
        conn, root = connect()
        mock = dbus.Interface(conn.get_object('org.freedesktop.PolicyKit1', '/org/freedesktop/PolicyKit1/Authority'),
                              'org.freedesktop.DBus.Mock')
        mock.SetAllowed(['org.uebroker1.register'])
        write_config('[Limits]\n')
        reload()
        self.assertEqual(register_as(BIN_UID, 'rl_held u32 x'), 'ok')
        self.assertEqual(events_by_name(root)['rl_held'][0], BIN_UID)

        write_config('[Reservations]\nrl_held=user:%d\n' % SYS_UID)
        reload()
        # bin's event keeps its name for bin while it exists ...
        self.assertEqual(register_as(BIN_UID, 'rl_held u32 x'), 'ok')
        # ... and the reservation holds against everyone else.
        out = register_as(DAEMON_UID, 'rl_held u32 x')
        self.assertTrue(out.startswith('org.freedesktop.DBus.Error.AccessDenied event name rl_held is reserved '
                                       'for user:%d' % SYS_UID), out)
        # Once the name is free, it is sys's alone.
        self.assertTrue(wait_for(lambda: events_by_name(root)['rl_held'][1] == 0))
        root.Delete('rl_held', False)
        out = register_as(BIN_UID, 'rl_held u32 x')
        self.assertTrue(out.startswith('org.freedesktop.DBus.Error.AccessDenied event name rl_held is reserved'), out)
        self.assertEqual(register_as(SYS_UID, 'rl_held u32 x'), 'ok')
        self.assertEqual(events_by_name(root)['rl_held'][0], SYS_UID)
        conn.close()


if __name__ == '__main__':
    if os.geteuid() != 0:
        print('test-reload: needs root (clients run as other users with setpriv)', file=sys.stderr)
        sys.exit(77)
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(exit_status(result))
