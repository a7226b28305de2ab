# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers shared by the python integration tests."""

import time


def wait_for(predicate, timeout=10.0):
    """Polls predicate() every 50 ms until it is true or timeout seconds
    passed; returns its last value."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()
