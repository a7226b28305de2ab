#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A polkit stand-in for test-hostile.py on its private system bus:
org.freedesktop.PolicyKit1 answering CheckAuthorization for
("system-bus-name", {"name": ...}) subjects, as polkitd does, by the uid the
bus gives for that name.

    polkit-standin.py ADDRESS ALLOWED_ACTION[,...] STALLED_UID LOG

Allows the listed actions, denies others; never answers a check of
STALLED_UID (a polkit that hangs on one user). Appends "UID ACTION" to LOG
for every check it receives.
"""

import sys

import dbus
import dbus.service
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

POLKIT = 'org.freedesktop.PolicyKit1'
AUTHORITY = 'org.freedesktop.PolicyKit1.Authority'


class Authority(dbus.service.Object):
    def __init__(self, bus, allowed, stalled_uid, log):
        super().__init__(bus, '/org/freedesktop/PolicyKit1/Authority')
        self.bus = bus
        self.allowed = allowed
        self.stalled_uid = stalled_uid
        self.log = log
        self.stalled = []       # kept so the calls stay unanswered

    @dbus.service.method(AUTHORITY, in_signature='(sa{sv})sa{ss}us', out_signature='(bba{ss})',
                         async_callbacks=('reply', 'error'))
    def CheckAuthorization(self, subject, action, details, flags, cancellation_id, reply, error):
        kind, fields = subject
        if kind != 'system-bus-name':
            error(dbus.exceptions.DBusException('subject kind ' + kind, name='org.freedesktop.PolicyKit1.Error.Failed'))
            return
        uid = int(self.bus.get_unix_user(str(fields['name'])))
        with open(self.log, 'a') as f:
            f.write(f'{uid} {action}\n')
        # STALLED_UID's checks, and every interactive one (flag 1: a user
        # whose authentication agent never answers), stay unanswered.
        if uid == self.stalled_uid or int(flags) & 1:
            self.stalled.append(reply)
            return
        reply((action in self.allowed, False, {}))


def main():
    address, allowed, stalled_uid, log = sys.argv[1:5]
    DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    Authority(bus, set(allowed.split(',')), int(stalled_uid), log)
    bus.request_name(POLKIT)
    print('ready', flush=True)
    GLib.MainLoop().run()


if __name__ == '__main__':
    main()
