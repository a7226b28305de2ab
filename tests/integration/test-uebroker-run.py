#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""uebroker-run: existing user_events programs, built unchanged from their
sources (linux-source-6.12's sample, a LinuxTracepoints checkout:
tests/integration/meson.build), run as an unprivileged user through the
broker of broker-harness.sh (--polkit-mock, embedded provider):

- the kernel's samples/user_events/example.c: its enable word follows a
  recorder starting and stopping, its record reaches `uebctl record`;
- LinuxTracepoints' api-sample: a name another uid owns gets EADDRINUSE,
  the others register and their records reach the recorder;
- LinuxTracepoints' provider-sample: all four tracepoints recorded;
- LinuxTracepoints' EventHeader provider sample (C++, TraceLoggingProvider.h,
  built by its own CMake build): both providers' events recorded by
  pattern, with the EventHeader header fields (uebctl decodes the fields
  the definition declares; the EventHeader payload after them is the vm
  tier's, decoded there by perf-decode);
- without uebroker-run the same program cannot register;
- libtracepoint's own unit tests (api-utest, provider-utest) pass, every
  tracepoint they define taken;
- what real programs do with the file (preload-cases.c), each
  run with and without uebroker-run, each bounded (a hang is a failure):
  a signal handler closing the file under an ioctl(), fork() while a
  thread registers, numbers recycled by close_range()/dup2()/raw system
  calls and followed through dup(), enable words that are read-only,
  unmapped, unmapped later or shared with the program's own bits; the
  threaded ones under helgrind too.

Needs root (to run as another user) and setpriv; exits 77 otherwise.
"""

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import unittest

import dbus

from uebtest import EXIT_SKIP, exit_status, wait_for

BIN_UID = 2                     # Debian's "bin"
HELGRIND_SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'helgrind.supp')
HELGRIND_EXIT_SUPP = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'helgrind-exit.supp')
BROKER = 'org.uebroker1'
PATH = '/org/uebroker1'
INTERFACE = 'org.uebroker1.Broker'


def preload_is_sanitized():
    libs = subprocess.run(['ldd', os.environ['UEBROKER_PRELOAD']], capture_output=True, text=True).stdout
    return 'libasan' in libs


def program_env():
    """The environment of a program run through the preload. A sanitizer
    build's preload library needs the sanitizer runtime, which the
    programs (built without it) do not load first: ASan is told so, and
    leaks of theirs (libtracepoint leaks its file on purpose) are not ours."""
    env = dict(os.environ)
    if preload_is_sanitized():
        env['ASAN_OPTIONS'] = ':'.join(filter(None, [env.get('ASAN_OPTIONS', ''), 'verify_asan_link_order=0',
                                                     'detect_leaks=0']))
    return env


def as_bin(*argv):
    return ['setpriv', f'--reuid={BIN_UID}', f'--regid={BIN_UID}', '--clear-groups', *argv]


def through_broker(*argv, debug=False):
    # Line-buffered stdout (the samples printf to a pipe): stdbuf's own
    # preload stays beside ours.
    return as_bin('stdbuf', '-oL', os.environ['UEBROKER_RUN'], *(['--debug'] if debug else []), *argv)


def run_bounded(argv, timeout, stdin=None, feed=None):
    """Runs @argv in a session of its own; past @timeout seconds it and
    everything it forked are killed and the test fails (a hang is a
    failure). @feed(proc) may drive it through stdin."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=program_env(), start_new_session=True)
    try:
        if feed:
            feed(proc)
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f'{argv[-1]}: still running after {timeout} s (hangs); stdout {out!r} stderr {err!r}')
    return proc.returncode, out, err


class Program:
    """A program driven through stdin, its stdout read line by line."""

    def __init__(self, argv):
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, bufsize=1, env=program_env())
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.proc.stderr, self.stderr.append), daemon=True).start()

    @staticmethod
    def _read(stream, put):
        for line in stream:
            put(line.rstrip('\n'))

    def expect(self, text, timeout=10):
        """The lines until one containing @text (AssertionError if none)."""
        seen = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                line = self.lines.get(timeout=max(0.01, end - time.monotonic()))
            except queue.Empty:
                break
            seen.append(line)
            if text in line:
                return seen
        raise AssertionError(f'no line with {text!r} in {seen}; stderr: {self.stderr}')

    def send(self, text):
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except OSError:
                pass


def recorder(*patterns, n=None):
    return subprocess.Popen([os.environ['UEBCTL'], 'record', *(['-n', str(n)] if n else []), *patterns],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def events():
    conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
    try:
        return {str(e[0]): (str(e[1]), int(e[2]), int(e[3]), bool(e[4]))
                for e in conn.call_blocking(BROKER, PATH, INTERFACE, 'ListEvents', '', (), timeout=30)}
    finally:
        conn.close()


def setUpModule():
    # The bus socket lives in the harness's directory: let bin reach it.
    os.chmod(os.environ['UEBROKER_HARNESS_DIR'], 0o755)
    conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
    mock = dbus.Interface(conn.get_object('org.freedesktop.PolicyKit1', '/org/freedesktop/PolicyKit1/Authority'),
                          'org.freedesktop.DBus.Mock')
    mock.SetAllowed(['org.uebroker1.register'])
    conn.close()


def third_party(test, name):
    """The path of a program nobody here wrote (meson sets NAME to it), or
    skips @test saying why it was not built."""
    path = os.environ.get(name)
    if not path:
        reason = os.environ.get('KERNEL_EXAMPLE_MISSING' if name == 'KERNEL_EXAMPLE' else 'LINUXTRACEPOINTS_MISSING')
        test.skipTest(reason or f'{name} is not set')
    return path


class UebrokerRunTest(unittest.TestCase):

    def test_1_without_uebroker_run_nothing_registers(self):
        out = subprocess.run(as_bin(third_party(self, 'KERNEL_EXAMPLE')), input='\n', capture_output=True, text=True,
                             timeout=30)
        self.assertNotEqual(out.returncode, 0)
        self.assertNotIn('Press enter', out.stdout)
        self.assertNotIn('test', events())

    def test_2_kernel_example_follows_a_recorder(self):
        program = Program(through_broker(third_party(self, 'KERNEL_EXAMPLE')))
        try:
            program.expect('Press enter to check status')
            self.assertEqual(events()['test'][:2], ('u32 count', BIN_UID))
            # Nobody records: the enable word stays clear.
            program.send('\n')
            self.assertNotIn('Something was attached', '\n'.join(program.expect('Press enter')))

            rec = recorder('test', n=1)
            try:
                self.assertTrue(wait_for(lambda: events()['test'][3], 10), events())
                # Within 100 ms of the status byte (the library follows it
                # every 20 ms); 500 ms is the bound under valgrind.
                time.sleep(0.5)
                program.send('\n')
                lines = program.expect('Press enter')
                self.assertIn('Something was attached, wrote data', lines)
                out, err = rec.communicate(timeout=30)
            finally:
                if rec.poll() is None:
                    rec.kill()
                    rec.communicate()
            self.assertRegex(out, rf'uid {BIN_UID} pid {program.proc.pid}\] test: count=0\n')

            # The recorder is gone: the word clears again.
            self.assertTrue(wait_for(lambda: not events()['test'][3], 10), events())
            time.sleep(0.5)
            program.send('\n')
            self.assertNotIn('Something was attached', '\n'.join(program.expect('Press enter')))
            self.assertEqual(program.stderr, [])        # no UEBROKER_DEBUG: not a word
        finally:
            program.close()

    def test_3_libtracepoint_api_sample(self):
        sample = third_party(self, 'TRACEPOINT_API_SAMPLE')
        # Another uid (root) owns simple_tracepoint with other fields.
        conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
        data_fd, status_fd, _, _ = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's',
                                                      ('simple_tracepoint u64 other',), timeout=30)
        os.close(data_fd.take())
        os.close(status_fd.take())
        conn.close()

        rec = recorder('tp_data_loc', 'empty_tracepoint', n=2)
        program = Program(through_broker(sample, debug=True))
        try:
            lines = program.expect('Press enter to iterate')
            self.assertIn('tracepoint_open_provider: 0', lines)
            self.assertIn('tracepoint_connect(simple_tracepoint): 98', lines)     # EADDRINUSE
            self.assertIn('tracepoint_connect(empty_tracepoint): 0', lines)
            self.assertIn('tracepoint_connect(tp_data_loc): 0', lines)
            self.assertIn('TRACEPOINT_ENABLED(&simple_tracepoint): 0', lines)
            self.assertIn('tracepoint_write(tp_data_loc): 0', lines, lines)
            self.assertIn('tracepoint_write(empty_tracepoint): 0', lines, lines)
            out, err = rec.communicate(timeout=30)
            self.assertIn('empty_tracepoint:', out)
            self.assertRegex(out, r'tp_data_loc: field1=101 field2=field2-str field3=301')
            # --debug: a line for each registration, the refusal named.
            self.assertTrue(any('org.uebroker1.Error.NameInUse' in line and 'EADDRINUSE' in line
                                for line in program.stderr), program.stderr)
            program.send('x\n')
            self.assertEqual(program.proc.wait(timeout=30), 0)
        finally:
            if rec.poll() is None:
                rec.kill()
                rec.communicate()
            program.close()
        self.assertEqual(events()['tp_data_loc'][1], BIN_UID)

    def test_4_libtracepoint_provider_sample(self):
        sample = third_party(self, 'TRACEPOINT_PROVIDER_SAMPLE')
        rec = recorder('my_tracepoint*', n=4)
        try:
            time.sleep(1)       # recording: new events are enabled at once
            out = subprocess.run(through_broker(sample), capture_output=True,
                                 text=True, timeout=60, env=program_env())
            self.assertEqual(out.returncode, 0, out.stderr)
            recorded, err = rec.communicate(timeout=30)
        finally:
            if rec.poll() is None:
                rec.kill()
                rec.communicate()
        for n in range(1, 5):
            self.assertIn(f'] my_tracepoint{n}:', recorded)
        self.assertIn('my_tracepoint1: field1=1 field2=value for field 2 field3=5char', recorded)

    def test_5_eventheader_provider_sample(self):
        sample = third_party(self, 'EVENTHEADER_PROVIDER_SAMPLE')
        # Two iterations (enter, then x), each writing Event1 and Event2;
        # recorded as text and as JSON at once (decoded).
        rec = recorder('MyProviderName_*', 'OtherProviderName_*', n=4)
        rec_json = recorder('--json=short', 'MyProviderName_*', 'OtherProviderName_*', n=4)
        program = None
        try:
            time.sleep(1)       # recording: new events are enabled at once
            program = subprocess.Popen(through_broker(sample), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.PIPE, text=True, env=program_env())
            stdout, stderr = program.communicate('\nx\n', timeout=60)
            self.assertEqual(program.returncode, 0, stderr)
            recorded, err = rec.communicate(timeout=30)
            recorded_json, err_json = rec_json.communicate(timeout=30)
        finally:
            for proc in filter(None, (program, rec, rec_json)):
                if proc.poll() is None:
                    proc.kill()
                    proc.communicate()
        # The program saw its events enabled (TraceLoggingProviderEnabled).
        self.assertEqual(stdout.count('MyProviderName_L4K1 Event1 status=1\n'), 2, stdout)
        self.assertEqual(stdout.count('OtherProviderName_L5K23Gmygroup Event2 status=1\n'), 2, stdout)
        # Its tracepoints, named PROVIDER_L<level>K<keyword>[G<group>], with
        # EventHeader's fixed fields, registered as bin.
        header = 'u8 eventheader_flags; u8 version; u16 id; u16 tag; u8 opcode; u8 level'
        listed = events()
        for name in ('MyProviderName_L4K1', 'OtherProviderName_L5K23Gmygroup'):
            self.assertEqual(listed[name][:2], (header, BIN_UID), listed)
        # Each record decoded as the sample wrote it (provider-sample.cpp):
        # the event's name and fields after the tracepoint's name, as
        # perf-decode shows them.
        arg0 = sample
        for name, want in (('MyProviderName_L4K1',
                            [f'MyProviderName:Event1 level=4 keyword=0x1 ArgC=1 '
                             f'Structure={{ArgCount=1 Arg0={arg0}}} iteration={i}' for i in (1, 2)]),
                           ('OtherProviderName_L5K23Gmygroup',
                            [f'OtherProviderName:Event2 level=5 keyword=0x23 group=mygroup iteration={i} '
                             f'__null= argv0={arg0} struct={{cargv0={arg0}}} '
                             f'bin=0x{arg0[:2].encode().hex()} vchar=[{arg0[0]},{arg0[1]}] '
                             f'cchar=[{arg0[0]},{arg0[1]}]' for i in (1, 2)])):
            lines = re.findall(rf'^\[received \S+ uid {BIN_UID} pid {program.pid}\] {name}: (.*)$', recorded, re.M)
            self.assertEqual(lines, want, recorded)
        docs = [json.loads(line) for line in recorded_json.splitlines()]
        self.assertEqual(len(docs), 4, recorded_json)
        event1 = [d for d in docs if d['name'] == 'MyProviderName_L4K1']
        self.assertEqual([d['fields'] for d in event1],
                         [{'ArgC': 1, 'Structure': {'ArgCount': 1, 'Arg0': arg0}, 'iteration': i} for i in (1, 2)],
                         recorded_json)
        self.assertEqual(event1[0]['eventheader'],
                         {'provider': 'MyProviderName', 'event': 'Event1', 'level': 4, 'keyword': '0x1',
                          'opcode': 0, 'tag': 0, 'id': 0, 'version': 0, 'flags': 7}, recorded_json)
        event2 = [d for d in docs if d['name'] == 'OtherProviderName_L5K23Gmygroup']
        self.assertEqual(event2[1]['fields'],
                         {'iteration': 2, '__null': '', 'argv0': arg0,
                          'struct': {'cargv0': arg0}, 'bin': ' '.join(f'{b:02x}' for b in arg0[:2].encode()),
                          'vchar;tag=0x7B': [arg0[0], arg0[1]], 'cchar': [arg0[0], arg0[1]]},
                         recorded_json)
        self.assertEqual(event2[1]['eventheader']['group'], 'mygroup', recorded_json)

    def test_6_status_file(self):
        # A program reading user_events_status gets the broker's status
        # text; the file is read-only, as the kernel's.
        out = subprocess.run(through_broker('cat', '/sys/kernel/tracing/user_events_status'), capture_output=True,
                             text=True, timeout=30, env=program_env())
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertRegex(out.stdout, r'(?m)^Active: [0-9]+$')
        self.assertRegex(out.stdout, r'(?m)^Max: 4096$')
        # The events the earlier tests registered, as the broker lists them
        # (whichever ran: some skip without LinuxTracepoints).
        listed = set(events())
        self.assertTrue(listed, 'the earlier tests registered nothing')
        self.assertEqual(set(re.findall(r'(?m)^[0-9]+:(\w+)', out.stdout)), listed, out.stdout)
        out = subprocess.run(through_broker('sh', '-c', 'echo x > /sys/kernel/tracing/user_events_status'),
                             capture_output=True, text=True, timeout=30, env=program_env())
        self.assertNotEqual(out.returncode, 0)
        self.assertIn('Permission denied', out.stderr)

    def test_6_libtracepoint_unit_tests(self):
        # LinuxTracepoints' own unit tests of libtracepoint, unchanged,
        # through uebroker-run as an unprivileged uid: they pass
        # as they pass as root on a kernel with user_events (the vm tier
        # runs them both ways there). Here, without user_events, root's own
        # run fails (EOPNOTSUPP from tracepoint_open_provider).
        for name in ('TRACEPOINT_API_UTEST', 'TRACEPOINT_PROVIDER_UTEST'):
            with self.subTest(name=name):
                rc, out, err = run_bounded(through_broker(third_party(self, name)), 120)
                self.assertEqual(rc, 0, f'{name}: exit {rc}, stdout {out!r}, stderr {err!r}')
                if name == 'TRACEPOINT_API_UTEST':
                    self.assertEqual(err.strip().splitlines()[-1], 'OK', err)
                    self.assertNotIn('error', err)
                else:
                    self.assertIn('TestProviderC register: 0', out)
                    self.assertIn('TestProviderCpp register: 0', out)
                    # Every tracepoint it defines was taken, the ones
                    # with '__rel_loc unsigned[]' fields too.
                    ev = events()
                    for name in ('func1_C', 'func2_C', 'func1_CPP', 'func2_CPP', 'write1_C', 'write2_C'):
                        self.assertEqual(ev.get(name, (None, None))[1], BIN_UID, f'{name}: {ev.get(name)}')


class PreloadCasesTest(unittest.TestCase):
    """Each case of preload-cases.c without uebroker-run (the program
    itself is right: it passes on its stand-in) and with it."""

    def run_case(self, case, timeout=60, feed=None, preload_too=True, wrap=(), must_register=True):
        prog = os.environ['PRELOAD_CASES']
        runs = [(as_bin(*wrap, prog, case), False)] + \
            ([(through_broker(*wrap, prog, case), True)] if preload_too else [])
        for argv, preload in runs:
            with self.subTest(preload=preload):
                start = time.monotonic()
                rc, out, err = run_bounded(argv, timeout, feed=feed and (lambda proc: feed(proc, preload)))
                self.assertEqual(rc, 0, f'{case} (preload {preload}): exit {rc}, stdout {out!r}, stderr {err!r}')
                self.assertIn('ok\n', out)
                count = int(re.search(r'^registered ([0-9]+)$', out, re.M).group(1))
                if not preload:
                    self.assertEqual(count, 0, out)
                elif must_register:
                    self.assertGreater(count, 0, out)
                print(f'{case} (preload {preload}): {count} registrations, {time.monotonic() - start:.1f} s',
                      file=sys.stderr)

    def test_signal_handler_closes_during_ioctl(self):
        # The case's alarms (0.1 to 4 ms) interrupt registrations that each
        # take two bus round trips (OpenSession, Register): with the broker
        # under valgrind (CI's valgrind step, UEBROKERD_WRAPPER) they can beat
        # every one (seen in CI10), and the test there is that nothing hangs
        # or fails, as under helgrind below.
        slowed = bool(os.environ.get('UEBROKERD_WRAPPER'))
        if slowed:
            print('signal-close: the broker runs under a wrapper: registrations need not get through',
                  file=sys.stderr)
        self.run_case('signal-close', must_register=not slowed)

    def test_fork_while_a_thread_registers(self):
        # The child registers, so it allocates (sd-bus), as glibc lets the
        # child of a multithreaded program do. Debian 12's libasan (gcc 12)
        # does not take its allocator's locks around fork(): a child forked
        # while another thread allocates waits for ever in calloc() (seen
        # with gdb: __sanitizer::SizeClassAllocator64::GetFromAllocator
        # under sd_bus_message_new()), 3 runs in 8. Through a sanitized
        # preload only the program's own half runs.
        sanitized = preload_is_sanitized()
        if sanitized:
            print('fork: the preload half is not run under ASan: gcc 12\'s libasan is not fork-safe in a '
                  'multithreaded parent', file=sys.stderr)
        self.run_case('fork', preload_too=not sanitized)

    def test_threaded_cases_under_helgrind(self):
        # helgrind checks the library's locks in the cases with threads and
        # signal handlers, with and without the preload (a race or a lock
        # order it reports fails the run: --error-exitcode). valgrind cannot
        # run a sanitizer build's library.
        if preload_is_sanitized():
            print('helgrind: not run on a sanitizer build of the preload', file=sys.stderr)
            return
        self.assertTrue(shutil.which('valgrind'), 'valgrind is missing (apt-get install valgrind)')
        # tests/helgrind-exit.supp: the library's detached thread ended by
        # the program's exit inside a send (for every case).
        helgrind = ('valgrind', '--tool=helgrind', '-q', '--error-exitcode=3',
                    f'--suppressions={HELGRIND_EXIT_SUPP}')
        # Under helgrind (and a broker under valgrind, as CI runs it) the
        # case's alarms (0.1 to 4 ms) can beat every registration: here the
        # test is helgrind's verdict and that nothing hangs or fails.
        self.run_case('signal-close', timeout=900, wrap=helgrind, must_register=False)
        # In a fork()ed child helgrind still counts the accesses of the
        # parent's threads, which the child does not have: the library
        # forgets its own records' history there (hg_forget_range()), and
        # tests/helgrind.supp says why libsystemd's are left out for this
        # case only.
        self.run_case('fork', timeout=900, wrap=helgrind + (f'--suppressions={HELGRIND_SUPP}',))

    def test_recycled_numbers(self):
        self.run_case('recycle')

    def test_enable_word(self):
        recorders = []

        def feed(proc, preload):
            line = proc.stdout.readline()
            self.assertEqual(line, 'ready\n', proc.stderr.read() if proc.poll() is not None else line)
            if preload:
                rec = recorder('preload_word_a', 'preload_word_later')
                recorders.append(rec)
                self.assertTrue(wait_for(lambda: events()['preload_word_a'][3] and
                                         events()['preload_word_later'][3], 10), events())
            proc.stdin.write('recording\n')
            proc.stdin.flush()

        try:
            self.run_case('enable-word', feed=feed)
        finally:
            for rec in recorders:
                rec.kill()
                rec.communicate()

    def test_many_files_one_connection(self):
        # A connection per file used up the bus's connections per uid (256
        # on a stock system bus) and stopped the uid's other bus programs:
        # the process has one, whatever it opens, and each file is a data
        # session on it.
        def connections_of(pid):
            conn = dbus.bus.BusConnection(os.environ['UEBROKER_BUS_ADDRESS'])
            try:
                bus = dbus.Interface(conn.get_object('org.freedesktop.DBus', '/org/freedesktop/DBus'),
                                     'org.freedesktop.DBus')
                n = 0
                for name in bus.ListNames():
                    if not name.startswith(':'):
                        continue
                    try:
                        if int(bus.GetConnectionUnixProcessID(name)) == pid:
                            n += 1
                    except dbus.DBusException:
                        pass    # gone meanwhile
                return n
            finally:
                conn.close()

        def feed(proc, preload):
            line = proc.stdout.readline()
            m = re.match(r'^ready ([0-9]+) ([0-9]+)$', line)
            self.assertTrue(m, proc.stderr.read() if proc.poll() is not None else line)
            ok, refused = int(m.group(1)), int(m.group(2))
            if preload:
                self.assertEqual(ok + refused, 300)
                self.assertGreater(ok, 1)
                self.assertEqual(connections_of(proc.pid), 1)
                self.assertEqual(events()['preload_many'][2], ok)
            proc.stdin.write('counted\n')
            proc.stdin.flush()
            self.assertEqual(proc.stdout.readline(), 'again\n')
            if preload:
                self.assertEqual(events()['preload_many'][2], 1)
                self.assertEqual(connections_of(proc.pid), 1)
            proc.stdin.write('counted\n')
            proc.stdin.flush()

        self.run_case('many-files', feed=feed)


def main():
    if os.geteuid() != 0 or not shutil.which('setpriv') or not shutil.which('stdbuf'):
        print('test-uebroker-run: needs root, setpriv and stdbuf', file=sys.stderr)
        return EXIT_SKIP
    result = unittest.main(exit=False, verbosity=2).result
    return exit_status(result)


if __name__ == '__main__':
    sys.exit(main())
