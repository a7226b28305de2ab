#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""daemon/bus/polkit.c against a fake polkit, for real over D-Bus.

A private "system" bus runs python3-dbusmock's polkitd template; the
polkit-test-service (daemon/bus/polkit.c behind one guarded method) runs on it
with --system semantics, and on a second private bus with --bus-address
semantics. Callers are an unprivileged user (setpriv nobody) and root.

    test-polkit.py --service PATH --caller PATH

Needs root (to switch users); exits 77 (skip) otherwise or without
dbus-daemon/setpriv. POLKIT_TEST_WRAPPER (e.g. "valgrind --leak-check=full
--error-exitcode=1") runs the service under a wrapper; every service must
exit 0 on SIGTERM.
"""

import argparse
import json
import os
import select
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import dbus

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from uebtest import EXIT_SKIP, exit_status  # noqa: E402

SERVICE = 'org.uebroker1.PolkitTest'
OBJECT = '/org/uebroker1/PolkitTest'
INTERFACE = 'org.uebroker1.PolkitTest'
POLKIT = 'org.freedesktop.PolicyKit1'
POLKIT_OBJECT = '/org/freedesktop/PolicyKit1/Authority'
POLKIT_INTERFACE = 'org.freedesktop.PolicyKit1.Authority'
MOCK_INTERFACE = 'org.freedesktop.DBus.Mock'

ACCESS_DENIED = 'org.freedesktop.DBus.Error.AccessDenied'
LIMITS_EXCEEDED = 'org.freedesktop.DBus.Error.LimitsExceeded'
INTERACTIVE_REQUIRED = 'org.freedesktop.DBus.Error.InteractiveAuthorizationRequired'
NOBODY_UID = 65534

ARGS = None
TMP = None

BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>{kind}</type>
  <listen>unix:path={path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
'''


def plain(value):
    """dbus-python values as plain Python, for comparisons."""
    if isinstance(value, (dbus.Struct, tuple, list, dbus.Array)):
        return [plain(v) for v in value]
    if isinstance(value, (dict, dbus.Dictionary)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, str):
        return str(value)
    return value


def stop(proc, timeout=20):
    """SIGTERM, wait, SIGKILL as a last resort; returns the exit status."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    for pipe in (proc.stdin, proc.stdout):
        if pipe:
            pipe.close()
    return proc.returncode


def wait_for(predicate, what, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(f'timed out waiting for {what}')


def assert_pending_check_dropped(test, action):
    """A caller (uid nobody) asks for @action while polkit hangs, then is
    killed: the service must drop its pending check before polkit answers."""
    test.mock.control.SimulateHang(True)
    caller = subprocess.Popen(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', sys.executable,
                               os.path.join(TMP, 'polkit-caller.py'), test.bus.address, 'check', action, '0'],
                              stdout=subprocess.PIPE, text=True)
    try:
        try:
            wait_for(lambda: bool(test.mock.control.HaveHangingCalls()), 'the check to reach polkit')
            test.assertEqual(test.service.queries(), 1)
        finally:
            caller.kill()
            caller.wait(timeout=30)
            caller.stdout.close()
        wait_for(lambda: test.service.queries() == 0, 'the departed caller\'s check to be dropped')
        test.assertTrue(test.mock.control.HaveHangingCalls(), 'polkit answered: the test proved nothing')
        # Sent, it stays out (orphaned) until polkit answers: the bus
        # counts it against the service's pending calls until then.
        test.assertEqual(test.service.orphaned(), 1)
        test.mock.control.ReleaseHangingCalls()
        wait_for(lambda: test.service.orphaned() == 0, 'the orphaned check to go with polkit\'s answer')
    finally:
        test.mock.control.SimulateHang(False)
        test.mock.control.ReleaseHangingCalls()


class Bus:
    """A private dbus-daemon listening on TMP/NAME."""

    def __init__(self, name, kind='system'):
        path = os.path.join(TMP, name)
        config = os.path.join(TMP, name + '.conf')
        with open(config, 'w') as f:
            f.write(BUS_CONFIG.format(kind=kind, path=path))
        with open(os.path.join(TMP, name + '.log'), 'w') as log:
            self.proc = subprocess.Popen(['dbus-daemon', '--nofork', '--print-address=1', '--config-file=' + config],
                                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, stderr=log, text=True)
        self.address = self.proc.stdout.readline().strip()
        if not self.address:
            raise RuntimeError('dbus-daemon did not start')
        self.conn = dbus.bus.BusConnection(self.address)

    def has_owner(self, name):
        return bool(self.conn.name_has_owner(name))

    def close(self):
        self.conn.close()
        stop(self.proc)


class Mock:
    """python3-dbusmock's polkitd template on @bus."""

    def __init__(self, bus):
        self.bus = bus
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=bus.address)
        self.proc = subprocess.Popen([sys.executable, '-m', 'dbusmock', '--template', 'polkitd'], env=env,
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        wait_for(lambda: bus.has_owner(POLKIT) or self.proc.poll() is not None, 'the polkit mock')
        if self.proc.poll() is not None:
            raise RuntimeError('the polkit mock exited')
        obj = bus.conn.get_object(POLKIT, POLKIT_OBJECT)
        self.control = dbus.Interface(obj, MOCK_INTERFACE)

    def checks(self):
        """The CheckAuthorization calls seen: [subject, action, details, flags, cancellation_id]."""
        return [plain(args) for _, args in self.control.GetMethodCalls('CheckAuthorization')]

    def close(self):
        stop(self.proc)
        wait_for(lambda: not self.bus.has_owner(POLKIT), 'the polkit mock to leave the bus')


class Service:
    """polkit-test-service on a bus (--system, or --bus-address)."""

    def __init__(self, bus, system_address, as_system):
        env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=system_address)
        wrapper = shlex.split(os.environ.get('POLKIT_TEST_WRAPPER', ''))
        mode = ['--system'] if as_system else ['--bus-address=' + bus.address]
        self.bus = bus
        self.proc = subprocess.Popen(wrapper + [ARGS.service] + mode, env=env, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.PIPE, text=True)
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        if not ready or self.proc.stdout.readline().strip() != 'ready':
            stop(self.proc)
            raise RuntimeError('polkit-test-service did not start')
        self.iface = dbus.Interface(bus.conn.get_object(SERVICE, OBJECT), INTERFACE)

    def queries(self):
        return int(self.iface.Queries())

    def orphaned(self):
        return int(self.iface.Orphaned())

    def close(self):
        return stop(self.proc, timeout=60)


def call_as(address, *args, user='nobody'):
    """Runs polkit-caller.py as @user (or as root with user=None)."""
    cmd = [sys.executable, os.path.join(TMP, 'polkit-caller.py'), address] + list(args)
    if user:
        cmd = ['setpriv', '--reuid=' + user, '--regid=nogroup', '--clear-groups'] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise AssertionError(f'caller failed ({out.returncode}): {out.stderr}')
    return json.loads(out.stdout)


class SystemBusTests(unittest.TestCase):
    """The service on the "system" bus: subject system-bus-name."""

    @classmethod
    def setUpClass(cls):
        cls.bus = Bus('system')
        try:
            cls.mock = Mock(cls.bus)
            cls.service = Service(cls.bus, cls.bus.address, as_system=True)
        except Exception:
            # tearDownClass does not run after a failed setUpClass.
            if getattr(cls, 'mock', None):
                stop(cls.mock.proc)
            cls.bus.close()
            raise

    @classmethod
    def tearDownClass(cls):
        status = cls.service.close()
        cls.mock.close()
        cls.bus.close()
        if status != 0:
            raise AssertionError(f'polkit-test-service exited with {status}')

    def setUp(self):
        if self.mock.proc.poll() is not None:
            type(self).mock = Mock(self.bus)
        self.mock.control.SimulateHang(False)
        self.mock.control.ReleaseHangingCalls()
        self.mock.control.SetAllowed(dbus.Array([], signature='s'))
        self.mock.control.ClearCalls()

    def tearDown(self):
        wait_for(lambda: self.service.queries() == 0, 'no polkit queries left in the service')

    def start_holding_caller(self, *args):
        """A caller as nobody that keeps its connection until its stdin closes."""
        return subprocess.Popen(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', sys.executable,
                                 os.path.join(TMP, 'polkit-caller.py'), self.bus.address] + list(args),
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def restart_mock(self):
        self.mock.close()
        type(self).mock = Mock(self.bus)

    def test_allowed_action_succeeds(self):
        self.mock.control.SetAllowed(['org.uebroker1.register'])
        out = call_as(self.bus.address, 'check', 'org.uebroker1.register', '0')
        self.assertEqual(out.get('result'), 'authorized', out)
        self.assertEqual(out['uid'], NOBODY_UID)
        self.assertEqual(self.mock.checks(),
                         [[['system-bus-name', {'name': out['name']}], 'org.uebroker1.register', {}, 0, '']])

    def test_refused_action_is_access_denied_with_the_action(self):
        self.mock.control.SetAllowed(['org.uebroker1.register'])
        out = call_as(self.bus.address, 'check', 'org.uebroker1.register-foreign', '0')
        self.assertEqual(out.get('error'), ACCESS_DENIED, out)
        self.assertEqual(out['message'],
                         'Not authorized to register events with names owned by another user '
                         '(polkit action org.uebroker1.register-foreign); an administrator can grant it with a polkit rule')
        self.assertEqual(len(self.mock.checks()), 1)

    def test_interactive_sets_allow_user_interaction(self):
        self.mock.control.SetAllowed(['org.uebroker1.delete'])
        out = call_as(self.bus.address, 'check', 'org.uebroker1.delete', '1')
        self.assertEqual(out.get('result'), 'authorized', out)
        self.assertEqual([c[3] for c in self.mock.checks()], [1])

    def test_root_is_allowed_without_asking(self):
        out = call_as(self.bus.address, 'check', 'org.uebroker1.record', '0', user=None)
        self.assertEqual(out.get('result'), 'authorized', out)
        self.assertEqual(self.mock.checks(), [])

    def test_challenge_is_interactive_authorization_required(self):
        try:
            self.mock.control.AddMethod(POLKIT_INTERFACE, 'CheckAuthorization', '(sa{sv})sa{ss}us', '(bba{ss})',
                                        'ret = (False, True, {})')
            out = call_as(self.bus.address, 'check', 'org.uebroker1.record', '0')
            self.assertEqual(out.get('error'), INTERACTIVE_REQUIRED, out)
            self.assertEqual(out['message'],
                             'Authentication is required to record events (polkit action org.uebroker1.record); '
                             'call again allowing interactive authorization with an authentication agent running')
        finally:
            self.restart_mock()

    def test_polkit_absent_is_denied(self):
        self.mock.close()
        out = call_as(self.bus.address, 'check', 'org.uebroker1.register', '0')
        self.assertEqual(out.get('error'), ACCESS_DENIED, out)
        self.assertEqual(out['message'],
                         'Not authorized to register events (polkit action org.uebroker1.register): polkit is '
                         'unavailable (org.freedesktop.DBus.Error.ServiceUnknown), so the request is refused')

    def test_polkit_vanishing_mid_check_is_denied(self):
        self.mock.control.SetAllowed(['org.uebroker1.register'])
        self.mock.control.SimulateHang(True)
        caller = subprocess.Popen(['setpriv', '--reuid=nobody', '--regid=nogroup', '--clear-groups', sys.executable,
                                   os.path.join(TMP, 'polkit-caller.py'), self.bus.address, 'check',
                                   'org.uebroker1.register', '0'], stdout=subprocess.PIPE, text=True)
        wait_for(lambda: bool(self.mock.control.HaveHangingCalls()), 'the check to reach polkit')
        self.assertEqual(self.service.queries(), 1)
        self.mock.proc.kill()
        out = json.loads(caller.communicate(timeout=60)[0])
        self.mock.proc.wait()
        self.assertEqual(out.get('error'), ACCESS_DENIED, out)
        self.assertIn('polkit is unavailable (org.freedesktop.DBus.Error.NoReply)', out['message'])

    def test_flood_is_bounded_and_released_on_disconnect(self):
        self.mock.control.SimulateHang(True)
        caller = self.start_holding_caller('flood', 'org.uebroker1.register', '20')
        try:
            ready, _, _ = select.select([caller.stdout], [], [], 60)
            self.assertTrue(ready, 'the flooding caller did not report')
            out = json.loads(caller.stdout.readline())
            self.assertEqual(out['errors'], [LIMITS_EXCEEDED] * 4, out)
            self.assertEqual(out['replies'], 0)
            self.assertEqual(out['messages'][0], f'Too many authorization checks of uid {NOBODY_UID} in progress '
                             '(at most 16, AuthorizationsPerUser=); wait for their answers and try again')
            self.assertEqual(self.service.queries(), 16)
            self.assertEqual(len(self.mock.checks()), 16)
        finally:
            caller.stdin.close()
            caller.wait(timeout=30)
            caller.stdout.close()
        # The sender is gone: its checks are dropped, and polkit's late
        # answers to them go nowhere.
        wait_for(lambda: self.service.queries() == 0, 'the flood to be forgotten')
        self.assertEqual(self.service.orphaned(), 16)
        self.mock.control.ReleaseHangingCalls()
        wait_for(lambda: self.service.orphaned() == 0, 'the orphaned checks to go with polkit\'s answers')
        self.assertEqual(self.service.queries(), 0)

    def test_pending_check_dropped_when_caller_disconnects(self):
        # The caller dies while polkit hangs: the service drops the check at
        # once, without waiting for polkit and without a session telling it.
        assert_pending_check_dropped(self, 'org.uebroker1.register')
        self.assertEqual(self.service.queries(), 0)

    def test_unclaimed_answer_is_dropped(self):
        self.mock.control.SetAllowed(['org.uebroker1.delete'])
        caller = self.start_holding_caller('abandon', 'org.uebroker1.delete')
        try:
            out = json.loads(caller.stdout.readline())
            self.assertEqual(out.get('error'), 'org.freedesktop.DBus.Error.Failed', out)
            self.assertEqual(out['message'], 'abandoned')
            self.assertEqual(len(self.mock.checks()), 1)
            # Still connected, so only the idle drop can have freed it.
            wait_for(lambda: self.service.queries() == 0, 'the unclaimed answer to be dropped', timeout=3)
        finally:
            caller.stdin.close()
            caller.wait(timeout=30)
            caller.stdout.close()


class OtherBusTests(unittest.TestCase):
    """The service on a non-system bus: same uid allowed, others unix-process."""

    @classmethod
    def setUpClass(cls):
        cls.system = Bus('system2')
        cls.mock = cls.bus = None
        try:
            cls.mock = Mock(cls.system)
            cls.bus = Bus('session2', kind='session')
            cls.service = Service(cls.bus, cls.system.address, as_system=False)
        except Exception:
            for bus in (cls.bus, cls.system):
                if bus:
                    bus.close()
            if cls.mock:
                stop(cls.mock.proc)
            raise

    @classmethod
    def tearDownClass(cls):
        status = cls.service.close()
        cls.mock.close()
        cls.bus.close()
        cls.system.close()
        if status != 0:
            raise AssertionError(f'polkit-test-service exited with {status}')

    def setUp(self):
        self.mock.control.SetAllowed(dbus.Array([], signature='s'))
        self.mock.control.ClearCalls()

    def tearDown(self):
        self.assertEqual(self.service.queries(), 0)

    def test_same_uid_is_allowed_without_asking(self):
        out = call_as(self.bus.address, 'check', 'org.uebroker1.delete', '0', user=None)
        self.assertEqual(out.get('result'), 'authorized', out)
        self.assertEqual(out['uid'], os.geteuid())
        self.assertEqual(self.mock.checks(), [])

    def test_other_uid_is_checked_as_unix_process(self):
        self.mock.control.SetAllowed(['org.uebroker1.record'])
        out = call_as(self.bus.address, 'check', 'org.uebroker1.record', '0')
        self.assertEqual(out.get('result'), 'authorized', out)
        self.assertEqual(self.mock.checks(),
                         [[['unix-process', {'pid': out['pid'], 'start-time': out['start_time'], 'uid': NOBODY_UID}],
                           'org.uebroker1.record', {}, 0, '']])

    def test_other_uid_refused(self):
        self.mock.control.SetAllowed(['org.uebroker1.record'])
        out = call_as(self.bus.address, 'check', 'org.uebroker1.delete', '0')
        self.assertEqual(out.get('error'), ACCESS_DENIED, out)
        self.assertEqual(out['message'], 'Not authorized to delete events (polkit action org.uebroker1.delete); '
                         'an administrator can grant it with a polkit rule')

    def test_pending_check_dropped_when_caller_disconnects(self):
        # polkit is asked over another connection here; the caller leaving
        # the service's bus still drops its check at once.
        assert_pending_check_dropped(self, 'org.uebroker1.record')

    def test_no_system_bus_is_denied(self):
        bus = Bus('session3', kind='session')
        try:
            service = Service(bus, 'unix:path=' + os.path.join(TMP, 'no-such-socket'), as_system=False)
            try:
                out = call_as(bus.address, 'check', 'org.uebroker1.register', '0')
                self.assertEqual(out.get('error'), ACCESS_DENIED, out)
                self.assertEqual(out['message'],
                                 'Not authorized to register events (polkit action org.uebroker1.register): polkit is '
                                 'unavailable (no system bus), so the request is refused')
                out = call_as(bus.address, 'check', 'org.uebroker1.register', '0', user=None)
                self.assertEqual(out.get('result'), 'authorized', out)
                self.assertEqual(service.queries(), 0)
            finally:
                self.assertEqual(service.close(), 0)
        finally:
            bus.close()


def main():
    global ARGS, TMP
    parser = argparse.ArgumentParser()
    parser.add_argument('--service', required=True)
    parser.add_argument('--caller', required=True)
    ARGS, rest = parser.parse_known_args()

    if os.geteuid() != 0:
        print('not root: cannot run callers as another user, skipping')
        return EXIT_SKIP
    for tool in ('dbus-daemon', 'setpriv'):
        if not shutil.which(tool):
            print(f'{tool} is missing, skipping')
            return EXIT_SKIP

    TMP = tempfile.mkdtemp(prefix='uebroker-polkit.')
    try:
        # The unprivileged caller must reach the sockets and its script.
        os.chmod(TMP, 0o755)
        shutil.copy(ARGS.caller, os.path.join(TMP, 'polkit-caller.py'))
        os.chmod(os.path.join(TMP, 'polkit-caller.py'), 0o644)
        result = unittest.main(argv=[sys.argv[0], '-v'] + rest, exit=False).result
        return exit_status(result)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)


if __name__ == '__main__':
    sys.exit(main())
