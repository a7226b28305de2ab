#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# journal-stream.sh CMD ARGS...: runs CMD as systemd runs a service whose
# stderr is the journal's stream: JOURNAL_STREAM names stderr's device and
# inode ("%lu:%lu", systemd.exec(5)). Used as UEBROKERD_WRAPPER by
# test-journal.sh.
set -eu
JOURNAL_STREAM="$(stat -L -c '%d:%i' /proc/self/fd/2)"
export JOURNAL_STREAM
exec "$@"
