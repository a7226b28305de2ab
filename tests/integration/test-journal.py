#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Run by test-journal.sh through broker-harness.sh, with the broker's
records going to a fake journald: creates, refuses and deletes an event
and checks the records that arrived, field by field, as
`journalctl -u uebrokerd UEB_EVENT=jr_tick` would select them.

Environment: UEBROKER_BUS_ADDRESS, UEBROKERD_LOG (the broker's stderr),
UEB_FAKE_JOURNAL (fake-journald.py's JSON lines).
"""

import json
import os
import sys
import unittest

import dbus

from uebtest import exit_status, wait_for

NAME = 'org.uebroker1'
PATH = '/org/uebroker1'
IFACE = 'org.uebroker1.Broker'
# daemon/bus/message-ids.h, documented in uebrokerd(8).
CREATED = 'b7a0d51fd0b64accaeacf4326e0823ac'
DELETED = 'c836e09e63754f3d95c28e6903626559'
REFUSED = '2570cd7e85584e59999940128f203305'


def records():
    with open(os.environ['UEB_FAKE_JOURNAL']) as f:
        return [json.loads(line) for line in f if line.strip()]


def select(**match):
    return [r for r in records() if all(r.get(k) == v for k, v in match.items())]


class Journal(unittest.TestCase):
    def test_event_history(self):
        conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
        broker = dbus.Interface(conn.get_object(NAME, PATH), IFACE)
        bus = dbus.Interface(conn.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'),
                             'org.freedesktop.DBus')
        pid = int(bus.GetConnectionUnixProcessID(conn.get_unique_name()))

        broker.Register('jr_tick u32 count')
        with self.assertRaises(dbus.DBusException):
            broker.Register('jr_tick u64 other')        # NameInUse
        with self.assertRaises(dbus.DBusException):
            broker.Register('jr_bad u32 a; u32 a')      # InvalidCommand
        conn.close()

        conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
        broker = dbus.Interface(conn.get_object(NAME, PATH), IFACE)
        self.assertTrue(wait_for(lambda: all(int(e[3]) == 0 for e in broker.ListEvents() if str(e[0]) == 'jr_tick')))
        broker.Delete('jr_tick', False)
        self.assertTrue(wait_for(lambda: len(select(MESSAGE_ID=DELETED)) == 1), records())

        # journalctl UEB_EVENT=jr_tick: created, refused, deleted, in order.
        history = select(UEB_EVENT='jr_tick')
        self.assertEqual([r.get('MESSAGE_ID') for r in history], [CREATED, REFUSED, DELETED], history)
        created, refused, deleted = history
        self.assertEqual(created['UEB_UID'], '0')
        self.assertEqual(created['UEB_PID'], str(pid))
        self.assertEqual(created['PRIORITY'], '6')
        self.assertEqual(created['SYSLOG_IDENTIFIER'], 'uebrokerd')
        self.assertRegex(created['MESSAGE'], r'^Event jr_tick created by uid 0 \(pid %d\) with status index \d+\.$' % pid)
        self.assertEqual(refused['UEB_UID'], '0')
        self.assertEqual(refused['UEB_PID'], str(pid))
        self.assertIn('org.uebroker1.Error.NameInUse', refused['MESSAGE'])
        self.assertEqual(deleted['UEB_UID'], '0')
        self.assertRegex(deleted['MESSAGE'], r'^Event jr_tick \(status index \d+\) deleted by uid 0\.$')
        # The refused command's name, valid or not, is only a field when valid.
        bad = select(MESSAGE_ID=REFUSED, UEB_EVENT='jr_bad')
        self.assertEqual(len(bad), 1, records())
        self.assertIn('InvalidCommand', bad[0]['MESSAGE'])

        # Every other record went there too, with a priority; none to stderr.
        self.assertTrue(select(SYSLOG_IDENTIFIER='uebrokerd', PRIORITY='6'))
        self.assertTrue(any('serving org.uebroker1' in r.get('MESSAGE', '') for r in records()))
        self.assertFalse([r for r in records() if '_FAKE_JOURNALD_ERROR' in r])
        with open(os.environ['UEBROKERD_LOG']) as f:
            stderr = f.read()
        self.assertNotIn('jr_tick', stderr)
        self.assertNotIn('serving org.uebroker1', stderr)
        conn.close()


if __name__ == '__main__':
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(exit_status(result))
