#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The client side of test-polkit.py, run as an unprivileged user.

    polkit-caller.py ADDRESS check ACTION INTERACTIVE(0|1)
    polkit-caller.py ADDRESS abandon ACTION      (then holds like flood)
    polkit-caller.py ADDRESS flood ACTION N

Prints one JSON line: who the caller is (unique name, pid, uid, process start
time) and what came back. "flood" sends N calls at once, prints when the
ones refused outright have arrived, and keeps its connection (and the calls
still waiting) open until standard input closes.
"""

import json
import os
import sys

import dbus
import dbus.mainloop.glib
from gi.repository import GLib

SERVICE = 'org.uebroker1.PolkitTest'
OBJECT = '/org/uebroker1/PolkitTest'
INTERFACE = 'org.uebroker1.PolkitTest'


def start_time():
    with open('/proc/self/stat') as f:
        stat = f.read()
    return int(stat[stat.rindex(')') + 2:].split()[19])


def identity(bus):
    return {'name': bus.get_unique_name(), 'pid': os.getpid(), 'uid': os.geteuid(), 'start_time': start_time()}


def call(method, *args):
    try:
        return {'result': method(*args, timeout=30)}
    except dbus.exceptions.DBusException as e:
        return {'error': e.get_dbus_name(), 'message': e.get_dbus_message()}


def flood(bus, iface, action, count):
    loop = GLib.MainLoop()
    outcome = {'errors': [], 'replies': 0, 'messages': []}
    expected_errors = max(count - 16, 0)

    def on_reply(*_):
        outcome['replies'] += 1

    def on_error(e):
        outcome['errors'].append(e.get_dbus_name())
        outcome['messages'].append(e.get_dbus_message())
        if len(outcome['errors']) >= expected_errors:
            loop.quit()

    for _ in range(count):
        iface.Check(action, False, reply_handler=on_reply, error_handler=on_error, timeout=60)
    GLib.timeout_add_seconds(10, loop.quit)
    if expected_errors:
        loop.run()
    # Let any wrong early answers arrive before reporting.
    GLib.timeout_add(300, loop.quit)
    loop.run()
    return outcome


def main():
    address, op = sys.argv[1], sys.argv[2]
    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = dbus.bus.BusConnection(address)
    iface = dbus.Interface(bus.get_object(SERVICE, OBJECT), INTERFACE)
    out = identity(bus)
    if op == 'check':
        out.update(call(iface.Check, sys.argv[3], sys.argv[4] == '1'))
    elif op == 'abandon':
        out.update(call(iface.Abandon, sys.argv[3]))
    elif op == 'flood':
        out.update(flood(bus, iface, sys.argv[3], int(sys.argv[4])))
    else:
        sys.exit(f'unknown operation {op}')
    print(json.dumps(out), flush=True)
    if op in ('flood', 'abandon'):
        sys.stdin.read()


if __name__ == '__main__':
    main()
