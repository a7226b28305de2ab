#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""uebrokerd's life cycle: command line, sd_notify READY/STOPPING/WATCHDOG,
the bus name already taken, clean exit on SIGTERM and SIGINT.

Run through broker-harness.sh: the harness's broker is used for the
"name taken" case, then stopped so this test can start its own.
Environment: UEBROKERD, optional UEBROKERD_WRAPPER (e.g. valgrind).
"""

import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest

import dbus

from uebtest import exit_status, wait_for

ADDRESS = os.environ['UEBROKER_BUS_ADDRESS']
UEBROKERD = os.environ['UEBROKERD']
WRAPPER = shlex.split(os.environ.get('UEBROKERD_WRAPPER', ''))


def name_owned(conn):
    return bool(conn.name_has_owner('org.uebroker1'))


def run_daemon(*args, **kwargs):
    return subprocess.run(WRAPPER + [UEBROKERD, *args], capture_output=True, text=True, timeout=120, **kwargs)


class CommandLine(unittest.TestCase):
    def test_version_and_help(self):
        out = run_daemon('--version')
        self.assertEqual(out.returncode, 0)
        self.assertRegex(out.stdout, r'^uebrokerd \d+\.\d+\.\d+\n$')
        out = run_daemon('--help')
        self.assertEqual(out.returncode, 0)
        for option in ('--system', '--session', '--bus-address=', '--provider=', '--config=', '--bus-introspect='):
            self.assertIn(option, out.stdout)

    def test_bad_options(self):
        for args, message in ((['--provider=nosuch'], "Unknown provider 'nosuch'"),
                              (['--config=/nonexistent/uebrokerd.conf', '--bus-address=' + ADDRESS],
                               '/nonexistent/uebrokerd.conf does not exist'),
                              (['--no-such-option'], 'unrecognized option'),
                              (['stray-argument'], "Unexpected argument 'stray-argument'")):
            with self.subTest(args=args):
                out = run_daemon(*args)
                self.assertEqual(out.returncode, 1)
                self.assertIn(message, out.stderr)

    def test_introspect_to_file(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, 'broker.xml')
            out = run_daemon('--bus-introspect=' + path)
            self.assertEqual(out.returncode, 0)
            with open(path) as f:
                self.assertEqual(f.read(), run_daemon('--bus-introspect=-').stdout)
            self.assertIn('<interface name="org.uebroker1.Broker">', run_daemon('--bus-introspect=-').stdout)


class Lifecycle(unittest.TestCase):
    """Ordered: name taken (harness broker running), then our own daemons."""

    @classmethod
    def setUpClass(cls):
        cls.conn = dbus.bus.BusConnection(ADDRESS)

    @classmethod
    def tearDownClass(cls):
        cls.conn.close()

    def test_1_name_taken(self):
        self.assertTrue(name_owned(self.conn))
        out = run_daemon('--bus-address=' + ADDRESS, '--provider=embedded')
        self.assertEqual(out.returncode, 1)
        self.assertIn('org.uebroker1 is already taken', out.stderr)

    def test_2_stop_harness_broker(self):
        os.kill(int(os.environ['UEBROKERD_PID']), signal.SIGTERM)
        self.assertTrue(wait_for(lambda: not name_owned(self.conn), 30.0), 'the harness broker did not leave')

    def start_notified(self, extra_env):
        # The harness removes its scratch directory afterwards.
        path = tempfile.mktemp(prefix='notify.', dir=os.environ['UEBROKER_HARNESS_DIR'])
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(path)
        env = dict(os.environ, NOTIFY_SOCKET=path, **extra_env)
        proc = subprocess.Popen(WRAPPER + [UEBROKERD, '--bus-address=' + ADDRESS, '--provider=auto'],
                                env=env, stderr=subprocess.PIPE, text=True)
        return proc, sock

    def read_notify(self, sock, want, timeout=60.0):
        sock.settimeout(timeout)
        seen = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                msg = sock.recv(4096).decode()
            except socket.timeout:
                break
            seen.append(msg)
            if want in msg.split('\n'):
                return seen
        self.fail('no %s among %r' % (want, seen))

    def run_and_stop(self, sig):
        proc, sock = self.start_notified({'WATCHDOG_USEC': '400000'})
        try:
            self.read_notify(sock, 'READY=1')
            # READY comes after the name is acquired.
            self.assertTrue(name_owned(self.conn))
            # The watchdog is served from the event loop.
            self.read_notify(sock, 'WATCHDOG=1', timeout=10)
            proc.send_signal(sig)
            self.read_notify(sock, 'STOPPING=1')
            _, err = proc.communicate(timeout=60)
            self.assertEqual(proc.returncode, 0, err)
            self.assertIn('Provider auto: using embedded', err)
            self.assertRegex(err, r'<6>uebrokerd .* serving org.uebroker1 with the embedded provider')
            self.assertTrue(wait_for(lambda: not name_owned(self.conn), 30.0))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            sock.close()

    def test_3_sigterm(self):
        self.run_and_stop(signal.SIGTERM)

    def test_4_sigint(self):
        self.run_and_stop(signal.SIGINT)


if __name__ == '__main__':
    suite = unittest.TestSuite()
    suite.addTests(unittest.TestLoader().loadTestsFromTestCase(CommandLine))
    suite.addTests(unittest.TestLoader().loadTestsFromTestCase(Lifecycle))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(exit_status(result))
