#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A stand-in for journald's native socket, for test-journal.sh (run in a
mount namespace of its own, with a tmpfs on /run): receives what
sd_journal_send() sends to /run/systemd/journal/socket and appends each
record as one JSON object per line to LOG.

    fake-journald.py SOCKET LOG

The native protocol (systemd's "Native Journal Protocol" document): a
datagram of fields, each "NAME=value\\n", or "NAME\\n" + 64-bit
little-endian length + value + "\\n" for values holding newlines; a record
too large for a datagram comes as a sealed memfd passed with SCM_RIGHTS and
an empty datagram.
"""

import array
import json
import os
import socket
import struct
import sys


def parse(data):
    fields = {}
    i = 0
    while i < len(data):
        nl = data.index(b'\n', i)
        line = data[i:nl]
        if b'=' in line:
            name, value = line.split(b'=', 1)
            i = nl + 1
        else:
            name = line
            (size,) = struct.unpack_from('<Q', data, nl + 1)
            start = nl + 1 + 8
            value = data[start:start + size]
            if data[start + size:start + size + 1] != b'\n':
                raise ValueError('binary field %r not terminated' % name)
            i = start + size + 1
        fields[name.decode()] = value.decode(errors='replace')
    return fields


def main():
    path, log_path = sys.argv[1], sys.argv[2]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    os.chmod(path, 0o666)
    print('ready', flush=True)
    with open(log_path, 'a') as log:
        while True:
            fds = array.array('i')
            data, anc, _, _ = s.recvmsg(1 << 20, socket.CMSG_SPACE(4 * fds.itemsize))
            for level, kind, payload in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    fds.frombytes(payload[:len(payload) - len(payload) % fds.itemsize])
            for fd in fds:
                with os.fdopen(fd, 'rb') as f:
                    data = f.read()
            try:
                record = parse(data)
            except (ValueError, struct.error) as e:
                record = {'_FAKE_JOURNALD_ERROR': str(e)}
            log.write(json.dumps(record) + '\n')
            log.flush()


if __name__ == '__main__':
    main()
