#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-journal.sh: the broker's records reach the journal through sd-journal
# with their fields (MESSAGE_ID=, UEB_EVENT=, UEB_UID=, UEB_PID=), as they
# would under systemd, on a host where journald may not run: in a mount
# namespace of its own with a tmpfs on /run, fake-journald.py listens on
# /run/systemd/journal/socket (the path sd-journal sends to), and the broker
# starts with JOURNAL_STREAM naming its stderr (journal-stream.sh), as
# systemd starts a service. test-journal.py then makes events and reads
# what arrived. Needs root (unshare, mount): exits 77 without.
set -u

here="$(cd "$(dirname "$0")" && pwd)"
if [ "$(id -u)" -ne 0 ]; then
        echo "test-journal: needs root for a mount namespace (unshare --mount)" >&2
        exit 77
fi
if [ -z "${UEB_JOURNAL_NAMESPACE:-}" ]; then
        exec env UEB_JOURNAL_NAMESPACE=1 unshare --mount --propagation private -- "$0" "$@"
fi

mount -t tmpfs -o mode=0755 uebroker-test-run /run || exit 2
mkdir -p /run/systemd/journal
log="$(mktemp "${TMPDIR:-/tmp}/uebroker-journal.XXXXXX")" || exit 2
/usr/bin/python3 "$here/fake-journald.py" /run/systemd/journal/socket "$log" >"$log.ready" &
journald_pid=$!
trap 'kill "$journald_pid" 2>/dev/null; rm -f "$log" "$log.ready"' EXIT
for _ in $(seq 1 100); do
        [ -s "$log.ready" ] && break
        sleep 0.05
done
[ -S /run/systemd/journal/socket ] || { echo "test-journal: fake-journald did not start" >&2; exit 2; }

UEBROKERD_WRAPPER="$here/journal-stream.sh ${UEBROKERD_WRAPPER:-}" UEB_FAKE_JOURNAL="$log" \
        "$here/broker-harness.sh" -- /usr/bin/python3 "$here/test-journal.py"
