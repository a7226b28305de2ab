#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The files uebroker installs for the system: polkit actions and example
rule, the system bus policy, the activation file and the systemd unit.

    test-system-files.py --source-root DIR --dbus-service FILE --unit FILE --sbindir DIR

The bus policy is tested for real: a dbus-daemon with the default-deny
policy of a distribution's system.conf includes dbus/org.uebroker1.conf, a
root service owns org.uebroker1, and an unprivileged caller (setpriv
nobody) tries what it may and may not do. That part needs root and
dbus-daemon; the node part needs node. Missing tools skip those parts, and
then the program exits 77 (skip) after running the rest.
"""

import argparse
import configparser
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from uebtest import exit_status  # noqa: E402

ARGS = None

ACTION_DEFAULTS = {
    'org.uebroker1.register': ('yes', 'yes', 'yes'),
    'org.uebroker1.register-foreign': ('auth_admin', 'auth_admin', 'auth_admin_keep'),
    'org.uebroker1.delete': ('auth_admin', 'auth_admin', 'auth_admin_keep'),
    'org.uebroker1.record': ('auth_admin_keep', 'auth_admin_keep', 'auth_admin_keep'),
}

SYSTEM_LIKE_BUS = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <!-- The default policy of dbus's system.conf: holes are punched by
       service files. -->
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
  </policy>
  <include>{policy}</include>
</busconfig>
'''

# A stand-in owner of org.uebroker1: the broker's interface and one it
# does not export to the bus policy.
FAKE_BROKER = '''
import dbus, dbus.service, dbus.mainloop.glib, sys
from gi.repository import GLib
dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
bus = dbus.bus.BusConnection(sys.argv[1])
class Broker(dbus.service.Object):
    @dbus.service.method('org.uebroker1.Broker', out_signature='s')
    def GetStatus(self):
        return 'status'
    @dbus.service.method('org.uebroker1.Hidden', out_signature='s')
    def Secret(self):
        return 'secret'
name = dbus.service.BusName('org.uebroker1', bus)
Broker(bus, '/org/uebroker1')
print('ready', flush=True)
GLib.MainLoop().run()
'''

CALLER = '''
import dbus, json, sys
bus = dbus.bus.BusConnection(sys.argv[1])
def attempt(f):
    try:
        return ['ok', str(f())]
    except dbus.exceptions.DBusException as e:
        return ['error', e.get_dbus_name()]
out = {}
if sys.argv[2] == 'own':
    out['own'] = attempt(lambda: bus.request_name('org.uebroker1'))
else:
    obj = bus.get_object('org.uebroker1', '/org/uebroker1', introspect=False)
    out['broker'] = attempt(lambda: obj.GetStatus(dbus_interface='org.uebroker1.Broker'))
    out['introspect'] = attempt(lambda: 'org.uebroker1.Broker' in obj.Introspect(
        dbus_interface='org.freedesktop.DBus.Introspectable'))
    out['properties'] = attempt(lambda: obj.GetAll('org.uebroker1.Broker',
                                                   dbus_interface='org.freedesktop.DBus.Properties'))
    out['peer'] = attempt(lambda: obj.Ping(dbus_interface='org.freedesktop.DBus.Peer'))
    out['hidden'] = attempt(lambda: obj.Secret(dbus_interface='org.uebroker1.Hidden'))
print(json.dumps(out))
'''


def source(*parts):
    return os.path.join(os.path.abspath(ARGS.source_root), *parts)


def read(path):
    with open(path) as f:
        return f.read()


class PolkitFiles(unittest.TestCase):
    def test_policy_actions_and_defaults(self):
        root = ET.parse(source('polkit', 'org.uebroker1.policy')).getroot()
        self.assertEqual(root.tag, 'policyconfig')
        found = {}
        for action in root.findall('action'):
            self.assertTrue(action.findtext('description'), action.get('id'))
            self.assertTrue(action.findtext('message'), action.get('id'))
            d = action.find('defaults')
            found[action.get('id')] = (d.findtext('allow_any'), d.findtext('allow_inactive'),
                                       d.findtext('allow_active'))
        self.assertEqual(found, ACTION_DEFAULTS)

    def test_policy_matches_the_dtd(self):
        dtd = '/usr/share/polkit-1/policyconfig-1.dtd'
        if not shutil.which('xmllint') or not os.path.exists(dtd):
            self.skipTest('xmllint or the polkit DTD is missing')
        out = subprocess.run(['xmllint', '--noout', '--dtdvalid', dtd, source('polkit', 'org.uebroker1.policy')],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)

    def test_example_rule(self):
        node = shutil.which('node') or shutil.which('nodejs')
        if not node:
            self.skipTest('node is missing')
        script = '''
const fs = require('fs');
let rule = null;
const polkit = { Result: { YES: 'yes', NO: 'no', NOT_HANDLED: null }, addRule(f) { rule = f; } };
new Function('polkit', fs.readFileSync(process.argv[1], 'utf8'))(polkit);
const subject = (groups) => ({ isInGroup: (g) => groups.includes(g) });
const out = {};
for (const id of ['org.uebroker1.register', 'org.uebroker1.register-foreign', 'org.uebroker1.delete',
                  'org.uebroker1.record'])
    for (const groups of [['tracing'], ['users']])
        out[id + ' ' + groups[0]] = rule({ id }, subject(groups));
console.log(JSON.stringify(out));
'''
        out = subprocess.run([node, '-e', script, source('polkit', '50-uebroker-example.rules')],
                             capture_output=True, text=True, timeout=30)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(json.loads(out.stdout), {
            'org.uebroker1.register tracing': None, 'org.uebroker1.register users': None,
            'org.uebroker1.register-foreign tracing': None, 'org.uebroker1.register-foreign users': None,
            'org.uebroker1.delete tracing': 'yes', 'org.uebroker1.delete users': None,
            'org.uebroker1.record tracing': 'yes', 'org.uebroker1.record users': None,
        })


class ActivationAndUnit(unittest.TestCase):
    def test_activation_file(self):
        parser = configparser.ConfigParser(interpolation=None)
        parser.optionxform = str
        parser.read(ARGS.dbus_service)
        self.assertEqual(dict(parser['D-BUS Service']), {
            'Name': 'org.uebroker1',
            'Exec': os.path.join(ARGS.sbindir, 'uebrokerd') + ' --system',
            'User': 'root',
            'SystemdService': 'uebrokerd.service',
        })

    def unit(self):
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.optionxform = str
        parser.read(ARGS.unit)
        return parser

    def test_unit_essentials(self):
        service = self.unit()['Service']
        expected = {
            'Type': 'notify', 'BusName': 'org.uebroker1', 'WatchdogSec': '30s',
            'ExecStart': os.path.join(ARGS.sbindir, 'uebrokerd') + ' --system',
            'ProtectSystem': 'strict', 'ProtectHome': 'yes', 'PrivateTmp': 'yes', 'NoNewPrivileges': 'yes',
            'RestrictAddressFamilies': 'AF_UNIX', 'MemoryDenyWriteExecute': 'yes',
            'SystemCallFilter': '@system-service', 'CapabilityBoundingSet': '',
            'ReadWritePaths': '-/sys/kernel/tracing',
        }
        self.assertEqual({k: service.get(k) for k in expected}, expected)
        # It would make tracefs read-only whatever ReadWritePaths= says.
        self.assertNotIn('ProtectKernelTunables', service)

    def test_unit_verifies(self):
        if not shutil.which('systemd-analyze'):
            self.skipTest('systemd-analyze is missing')
        if not ARGS.man_dir:
            self.skipTest('the man pages were not built (scdoc missing): Documentation=man: cannot be checked')
        with tempfile.TemporaryDirectory() as tmp:
            # verify wants ExecStart= to exist: point it at a real binary.
            text = read(ARGS.unit)
            exec_line = next(line for line in text.splitlines() if line.startswith('ExecStart='))
            unit = os.path.join(tmp, 'uebrokerd.service')
            with open(unit, 'w') as f:
                f.write(text.replace(exec_line, 'ExecStart=/bin/true --system'))
            # ... and each Documentation=man: page to be found by man(1):
            # the built pages, laid out as they install (manSECTION/).
            man_root = os.path.join(tmp, 'man')
            for page in os.listdir(ARGS.man_dir):
                section = page.rsplit('.', 1)[-1]
                if not section.isdigit():
                    continue
                os.makedirs(os.path.join(man_root, 'man' + section), exist_ok=True)
                os.symlink(os.path.join(ARGS.man_dir, page), os.path.join(man_root, 'man' + section, page))
            env = dict(os.environ, MANPATH=man_root)
            out = subprocess.run(['systemd-analyze', 'verify', unit], capture_output=True, text=True, timeout=60,
                                 env=env)
        complaints = [line for line in (out.stdout + out.stderr).splitlines() if 'uebrokerd.service' in line]
        self.assertEqual(complaints, [])
        self.assertEqual(out.returncode, 0, out.stderr)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdout:
        proc.stdout.close()


class BusPolicy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if os.geteuid() != 0 or not shutil.which('dbus-daemon') or not shutil.which('setpriv'):
            raise unittest.SkipTest('needs root, dbus-daemon and setpriv')
        if subprocess.run([sys.executable, '-c', 'import dbus.mainloop.glib, gi.repository.GLib']).returncode != 0:
            raise unittest.SkipTest('needs python3-dbus and python3-gi')
        cls.tmp = tempfile.mkdtemp(prefix='uebroker-buspolicy.')
        os.chmod(cls.tmp, 0o755)
        config = os.path.join(cls.tmp, 'system.conf')
        with open(config, 'w') as f:
            f.write(SYSTEM_LIKE_BUS.format(socket=os.path.join(cls.tmp, 'bus'),
                                           policy=source('dbus', 'org.uebroker1.conf')))
        with open(os.path.join(cls.tmp, 'bus.log'), 'w') as log:
            cls.bus = subprocess.Popen(['dbus-daemon', '--nofork', '--print-address=1', '--config-file=' + config],
                                       stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL, text=True)
        cls.address = cls.bus.stdout.readline().strip()
        cls.broker = None
        if not cls.address:
            stop(cls.bus)
            log = read(os.path.join(cls.tmp, 'bus.log'))
            shutil.rmtree(cls.tmp, ignore_errors=True)   # tearDownClass does not run
            raise RuntimeError('dbus-daemon did not start: ' + log)

    @classmethod
    def tearDownClass(cls):
        if cls.broker:
            stop(cls.broker)
        stop(cls.bus)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def caller(self, what, user='nobody'):
        cmd = [sys.executable, '-c', CALLER, self.address, what]
        if user:
            cmd = ['setpriv', '--reuid=' + user, '--regid=nogroup', '--clear-groups'] + cmd
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, cwd=self.tmp)
        self.assertEqual(out.returncode, 0, out.stderr)
        return json.loads(out.stdout)

    def test_1_only_root_may_own_the_name(self):
        self.assertEqual(self.caller('own'), {'own': ['error', 'org.freedesktop.DBus.Error.AccessDenied']})
        cls = type(self)
        cls.broker = subprocess.Popen([sys.executable, '-c', FAKE_BROKER, self.address], stdout=subprocess.PIPE,
                                      stdin=subprocess.DEVNULL, text=True)
        self.assertEqual(cls.broker.stdout.readline().strip(), 'ready')

    def test_2_anyone_may_call_the_broker_interfaces_only(self):
        if not self.broker:
            self.skipTest('no broker (the previous test failed)')
        self.assertEqual(self.caller('call'), {
            'broker': ['ok', 'status'],
            'introspect': ['ok', 'True'],
            # dbus-python has no Properties: the service answers, not the bus.
            'properties': ['error', 'org.freedesktop.DBus.Error.UnknownMethod'],
            'peer': ['ok', 'None'],
            'hidden': ['error', 'org.freedesktop.DBus.Error.AccessDenied'],
        })


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument('--source-root', required=True)
    parser.add_argument('--dbus-service', required=True)
    parser.add_argument('--unit', required=True)
    parser.add_argument('--sbindir', required=True)
    parser.add_argument('--man-dir', help='the built man pages (NAME.SECTION), for Documentation=man:')
    ARGS, rest = parser.parse_known_args()
    result = unittest.main(argv=[sys.argv[0], '-v'] + rest, exit=False).result
    # A part skipped (not root, a tool missing) is a skip of the whole
    # program (77), which CI refuses, not a pass.
    return exit_status(result)


if __name__ == '__main__':
    sys.exit(main())
