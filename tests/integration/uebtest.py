# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers shared by the python integration tests."""

import sys
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
