#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A consumer of the record stream written from docs/DESIGN.md alone ("The
bus contract", "The record stream", "The client contract"): no project code,
no header. It registers an event and writes records as the client contract
says, calls Record over D-Bus, and decodes what arrives with the documented
layout. Run through broker-harness.sh."""

import mmap
import os
import socket
import struct
import sys
import time
import unittest

import dbus

from uebtest import exit_status

ADDRESS = os.environ['UEBROKER_BUS_ADDRESS']
HEADER = struct.Struct('=IHHIIQQIIQ')   # "The record stream": 48 bytes
FLAG_LOST = 1 << 0
MESSAGE_MAX = 131072


def broker(conn):
    return dbus.Interface(conn.get_object('org.uebroker1', '/org/uebroker1'), 'org.uebroker1.Broker')


class Writer:
    """The client contract: Register, map the status page, write
    [u32 write_index][payload] while status[status_index] is non-zero."""

    def __init__(self, command):
        self.conn = dbus.bus.BusConnection(ADDRESS)
        data, status, self.status_index, self.write_index = broker(self.conn).Register(command)
        self.data = data.take()
        status_fd = status.take()
        self.page = mmap.mmap(status_fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)
        os.close(status_fd)

    def enabled(self):
        return self.page[int(self.status_index)] != 0

    def write(self, payload):
        return os.writev(self.data, [struct.pack('=I', int(self.write_index)), payload])

    def close(self):
        self.page.close()
        os.close(self.data)
        self.conn.close()


def parse(message):
    """One message: its records, each (header fields, name, payload); a
    record starts at a multiple of 8, the message ends after the last
    one's padding."""
    records = []
    offset = 0
    while offset < len(message):
        (length, name_len, flags, pid, uid, timestamp_ns, lost_count, tid, reserved,
         write_monotonic_ns) = HEADER.unpack_from(message, offset)
        assert HEADER.size + name_len <= length <= len(message) - offset, (offset, length, len(message))
        name = message[offset + 48:offset + 48 + name_len].decode('ascii')
        payload = message[offset + 48 + name_len:offset + length]
        records.append((dict(length=length, name_len=name_len, flags=flags, pid=pid, uid=uid,
                             timestamp_ns=timestamp_ns, lost_count=lost_count, tid=tid,
                             write_monotonic_ns=write_monotonic_ns), name, payload))
        offset += (length + 7) // 8 * 8
    assert offset == len(message), (offset, len(message))
    return records


def decode_rc_ev(payload):
    """'u32 a; char[8] b; __data_loc char[] s; s16 n': fields in order, no
    padding; the __data_loc word is size << 16 | offset, the offset from
    the kernel's record start (8 bytes before the payload)."""
    a, b, loc, n = struct.unpack_from('=I8sIh', payload)
    size, offset = loc >> 16, loc & 0xffff
    s = payload[offset - 8:offset - 8 + size]
    assert s.endswith(b'\0'), s
    return dict(a=a, b=b.rstrip(b'\0').decode(), s=s[:-1].decode(), n=n)


def encode_rc_ev(a, b, s, n):
    fixed = struct.calcsize('=I8sIh')       # 18
    data = s.encode() + b'\0'
    return struct.pack('=I8sIh', a, b.encode(), len(data) << 16 | (8 + fixed), n) + data


class Consumer(unittest.TestCase):
    def setUp(self):
        self.conn = dbus.bus.BusConnection(ADDRESS)

    def tearDown(self):
        self.conn.close()

    def record(self, names):
        fd = broker(self.conn).Record(names).take()
        sock = socket.socket(fileno=fd)
        self.assertEqual(sock.type, socket.SOCK_SEQPACKET)
        sock.settimeout(10)
        return sock

    def test_decode_records(self):
        writer = Writer('rc_ev u32 a; char[8] b; __data_loc char[] s; s16 n')
        stream = self.record(['rc_ev'])
        try:
            # Recording counts as enabled, at once.
            self.assertTrue(writer.enabled())
            before = time.time_ns()
            writer.write(encode_rc_ev(42, 'hi', 'from python', -3))
            writer.write(encode_rc_ev(7, '12345678', '', 0))
            records = []
            while len(records) < 2:
                records += parse(stream.recv(MESSAGE_MAX))
            after = time.time_ns()
            decoded = []
            for header, name, payload in records:
                self.assertEqual(header['length'], 48 + len(name) + len(payload))
                self.assertEqual(header['name_len'], len('rc_ev'))
                # The writev path knows neither the thread nor the time of
                # the write.
                self.assertEqual((header['tid'], header['write_monotonic_ns']), (0, 0))
                self.assertEqual(header['flags'] & FLAG_LOST, 0)
                self.assertEqual(header['lost_count'], 0)
                self.assertEqual(name, 'rc_ev')
                self.assertEqual(header['pid'], os.getpid())
                self.assertEqual(header['uid'], os.getuid())
                self.assertTrue(before <= header['timestamp_ns'] <= after,
                                (before, header['timestamp_ns'], after))
                decoded.append(decode_rc_ev(payload))
            self.assertEqual(decoded, [dict(a=42, b='hi', s='from python', n=-3),
                                       dict(a=7, b='12345678', s='', n=0)])
        finally:
            stream.close()
            writer.close()

    def test_lost_notice(self):
        """Records the consumer has no room for are counted, and reported
        in a 48-byte record with LOST once it reads again."""
        writer = Writer('rc_big u32 i; char[1024] x')
        stream = self.record(['rc_big'])
        try:
            written = 0
            for i in range(5000):
                try:
                    writer.write(struct.pack('=I', i) + b'x' * 1024)
                    written += 1
                except BlockingIOError:
                    time.sleep(0.001)
            received, lost, notices, last_i = 0, 0, 0, -1
            deadline = time.monotonic() + 20
            while received + lost < written and time.monotonic() < deadline:
                for header, name, payload in parse(stream.recv(MESSAGE_MAX)):
                    if header['flags'] & FLAG_LOST:
                        self.assertEqual((header['length'], header['name_len'], name, payload), (48, 0, '', b''))
                        self.assertGreater(header['lost_count'], 0)
                        lost += header['lost_count']
                        notices += 1
                        continue
                    self.assertEqual(name, 'rc_big')
                    i = struct.unpack_from('=I', payload)[0]
                    self.assertGreater(i, last_i)     # in order, each once
                    last_i = i
                    received += 1
            print('%d written: %d received, %d lost in %d notices' % (written, received, lost, notices))
            self.assertEqual(received + lost, written)
            self.assertGreater(notices, 0, 'the consumer never fell behind; write more')
        finally:
            stream.close()
            writer.close()


if __name__ == '__main__':
    suite = unittest.TestLoader().loadTestsFromTestCase(Consumer)
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    sys.exit(exit_status(result))
