# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers shared by the python integration tests."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

# The exit status of a test program that meson (and .ci/run) reads as a
# skip; CI refuses any.
EXIT_SKIP = 77


def wait_for(predicate, timeout=10.0):
    """Polls predicate() every 50 ms until it is true or timeout seconds
    passed; returns its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def exit_status(result):
    """The exit status for a unittest result: 1 if anything failed, else 77
    (skip) if any test was skipped, else 0. A skipped test proves nothing,
    so it must not pass for one that ran."""
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        for test, reason in result.skipped:
            print('SKIPPED: %s: %s' % (test.id(), reason), file=sys.stderr)
        return EXIT_SKIP
    return 0


# Uids of users that exist only inside the mount namespace of
# run_with_users() (attacks of up to sixteen uids; the base
# system has only about a dozen unprivileged users, and dbus-daemon refuses
# a system bus connection whose uid has no passwd entry). Above 65535 so
# that no Debian allocation can hold them.
EXTRA_USER_BASE = 70000
EXTRA_USERS_ENV = 'UEBTEST_EXTRA_USERS'


def extra_users(count):
    """The first @count uids run_with_users() adds."""
    return list(range(EXTRA_USER_BASE, EXTRA_USER_BASE + count))


def run_with_users(count):
    """Runs this program again with @count extra users (extra_users())
    in /etc/passwd and /etc/group, bind-mounted in a private mount
    namespace so that the machine's files stay as they are. Returns None
    in the program run so (go on), else the exit status of that run.
    Needs root and unshare(1)."""
    if os.environ.get(EXTRA_USERS_ENV) == str(count):
        return None
    tmp = tempfile.mkdtemp(prefix='uebtest-users.')
    try:
        for name, line in (('passwd', 'uebtest{i}:x:{uid}:{uid}::/nonexistent:/usr/sbin/nologin\n'),
                           ('group', 'uebtest{i}:x:{uid}:\n')):
            with open('/etc/' + name) as f:
                text = f.read()
            if text and not text.endswith('\n'):
                text += '\n'
            text += ''.join(line.format(i=i, uid=uid) for i, uid in enumerate(extra_users(count)))
            path = os.path.join(tmp, name)
            with open(path, 'w') as f:
                f.write(text)
            os.chmod(path, 0o644)
        os.chmod(tmp, 0o755)
        script = ('set -e; mount --bind "$1/passwd" /etc/passwd; mount --bind "$1/group" /etc/group; '
                  'shift; exec "$@"')
        return subprocess.call(['unshare', '--mount', '--propagation', 'private', 'sh', '-c', script, 'sh', tmp,
                                sys.executable] + sys.argv,
                               env=dict(os.environ, **{EXTRA_USERS_ENV: str(count)}))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
