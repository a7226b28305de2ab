#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a hostile (or just busy) local user does to the broker, run as that
user by test-hostile.py (setpriv). Prints one JSON line with what happened,
then, for the commands that hold their connections, waits for stdin to
close.

    hostile-client.py ADDRESS hold N COMMAND        N connections, one Register each
    hostile-client.py ADDRESS churn PREFIX N        N new events, each on its own
                                                    connection, closed after
    hostile-client.py ADDRESS register COMMAND      one Register, connection kept
    hostile-client.py ADDRESS many PREFIX N         N new events on one connection, kept
    hostile-client.py ADDRESS flood N COMMAND       N Registers at once on one connection
    hostile-client.py ADDRESS fds N                 N Registers carrying a descriptor
    hostile-client.py ADDRESS unread CONNS N        N ListEvents per connection, replies never read
    hostile-client.py ADDRESS repeat N COMMAND      Register once, report, wait for a line, N more
    hostile-client.py ADDRESS unread-register CONNS N COMMAND
                                                    N Registers per connection, replies never read
    hostile-client.py ADDRESS unread-both CONNS N COMMAND
                                                    on each connection N Registers and N ListEvents,
                                                    replies never read
    hostile-client.py ADDRESS unread-introspect CONNS N
                                                    N Introspect calls per connection (sd-bus
                                                    answers them itself), never read
    hostile-client.py ADDRESS ring-write EVENT KIND  writes one record into its own ring by hand:
                                                    KIND big (a 91,000-byte payload), claimed
                                                    (tid 1, write time 2^63), paddings (the
                                                    ring filled with 8-byte paddings, then one
                                                    record), claims (3 s of laps of records
                                                    claiming 64 KiB never written), records
                                                    (3 s of laps of records of a real u32;
                                                    reports laps and the longest wait for one);
                                                    reports, holds
    hostile-client.py ADDRESS hold-flooded N COMMAND N connections, their names on a line; at a
                                                    line on stdin each registers COMMAND; reports,
                                                    holds
    hostile-client.py ADDRESS signal-flood SECONDS SIZE NAME...
                                                    unicast signals of SIZE bytes to each NAME
                                                    in turn for SECONDS; reports, exits
    hostile-client.py ADDRESS ring-corrupt EVENT N  N times: connect, open a ring, write an
                                                    impossible record, ring, disconnect
    hostile-client.py ADDRESS call METHOD SIGNATURE JSON-ARGS
                                                    one call on a new connection; reports its
                                                    error name or "ok"
    hostile-client.py ADDRESS slow-recorder EVENT SECONDS
                                                    records its own EVENT, drains its stream once
                                                    every 0.21 s and refills it with 45 records
                                                    of 60 KB; reports what it got
    hostile-client.py ADDRESS steady-writer EVENT RATE SECONDS [SIZE]
                                                    writes EVENT at RATE/s, SIZE-byte payloads
                                                    (EAGAIN counted as a drop, as libuebroker
                                                    does); reports
    hostile-client.py ADDRESS fill N                N new events with long definitions on one
                                                    connection, kept
    hostile-client.py ADDRESS victim N PREFIX       N Registers of new events (a connection each,
                                                    descriptors checked), timed
    hostile-client.py ADDRESS churn-polite PREFIX N as churn, waiting as a rate refusal says
    hostile-client.py ADDRESS churn-for PREFIX SECONDS
                                                    as churn, new names until SECONDS passed
    hostile-client.py ADDRESS rings N SIZE EVENT    N connections, each registers EVENT and opens
                                                    a ring of SIZE bytes; reports, then on a line
                                                    unregisters everything and reports again, holds
    hostile-client.py ADDRESS rings-write N SIZE EVENT
                                                    as rings, then writes every ring flat out (a
                                                    lap of records at once whenever the broker has
                                                    emptied it) until stdin closes; reports what
                                                    it wrote
    hostile-client.py ADDRESS streams N PATTERN     N RecordMatching streams on one connection,
                                                    never read; reports, holds
"""

import json
import os
import re
import sys
import time

import dbus
import dbus.lowlevel
from dbus.mainloop.glib import DBusGMainLoop
from gi.repository import GLib

BROKER = 'org.uebroker1'
PATH = '/org/uebroker1'
INTERFACE = 'org.uebroker1.Broker'


def connect(address, mainloop=None):
    return dbus.bus.BusConnection(address, mainloop=mainloop)


def register(conn, command):
    try:
        data_fd, status_fd, status_index, write_index = conn.call_blocking(
            BROKER, PATH, INTERFACE, 'Register', 's', (command,), timeout=60)
        os.close(data_fd.take())
        os.close(status_fd.take())
        return {'ok': True, 'status_index': int(status_index), 'write_index': int(write_index)}
    except dbus.exceptions.DBusException as e:
        return {'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()}


def wait_stdin():
    print(flush=True)
    sys.stdin.read()


def cmd_hold(address, n, command):
    conns, results = [], []
    for _ in range(int(n)):
        conn = connect(address)
        conns.append(conn)
        results.append(register(conn, command))
    ok = sum(1 for r in results if r['ok'])
    errors = sorted({r['error'] for r in results if not r['ok']})
    print(json.dumps({'ok': ok, 'errors': errors,
                      'messages': sorted({r['message'] for r in results if not r['ok']})[:3]}), end='')
    wait_stdin()


def cmd_hold_flooded(address, n, command):
    """N connections; their unique names on a line; then, at a line on
    stdin, each registers COMMAND (while others may already be queueing
    messages to it); the results on a line; holds until stdin closes."""
    conns = [connect(address) for _ in range(int(n))]
    print(json.dumps({'names': [str(c.get_unique_name()) for c in conns]}), flush=True)
    sys.stdin.readline()
    results = [register(conn, command) for conn in conns]
    print(json.dumps({'ok': sum(1 for r in results if r['ok']),
                      'errors': sorted({r['error'] for r in results if not r['ok']})}), flush=True)
    sys.stdin.read()


def cmd_signal_flood(address, seconds, size, *names):
    """Unicast signals of SIZE bytes to each of NAMES in turn for SECONDS:
    the stock system bus lets anyone send them to anyone, and a receiver
    that runs no main loop lets them queue."""
    conn = connect(address)
    body = dbus.ByteArray(b'x' * int(size))
    end = time.monotonic() + float(seconds)
    sent = 0
    while time.monotonic() < end:
        for name in names:
            msg = dbus.lowlevel.SignalMessage('/org/example/Flood', 'org.example.Flood', 'Junk')
            msg.set_destination(name)
            msg.append(body, signature='ay')
            conn.send_message(msg)
            sent += 1
        conn.flush()
    print(json.dumps({'sent': sent}), flush=True)


def register_when_allowed(conn, command):
    """register(), waiting as told when refused for creating new events
    too often (NewEventsPerUserPerMinute=): what a polite client does."""
    for _ in range(100):
        result = register(conn, command)
        wait = re.search(r'try again in (\d+) ms', result.get('message', ''))
        if result['ok'] or not wait:
            return result
        time.sleep(int(wait.group(1)) / 1000 + 0.001)
    return result


def churn(address, prefix, n, polite):
    results = []
    for i in range(int(n)):
        conn = connect(address)
        command = f'{prefix}_{i} u32 a'
        results.append(register_when_allowed(conn, command) if polite else register(conn, command))
        conn.close()
    print(json.dumps({'ok': sum(1 for r in results if r['ok']),
                      'errors': sorted({r['error'] for r in results if not r['ok']}),
                      'messages': sorted({r['message'] for r in results if not r['ok']})[:3]}), flush=True)


def cmd_churn(address, prefix, n):
    churn(address, prefix, n, polite=False)


def cmd_churn_polite(address, prefix, n):
    churn(address, prefix, n, polite=True)


def cmd_churn_for(address, prefix, seconds):
    results = []
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        conn = connect(address)
        results.append(register(conn, f'{prefix}_{len(results)} u32 a'))
        conn.close()
    print(summary(results, tried=len(results)), flush=True)


def cmd_many(address, prefix, n):
    conn = connect(address)
    results = [register(conn, f'{prefix}_{i} u32 a') for i in range(int(n))]
    print(json.dumps({'ok': sum(1 for r in results if r['ok']),
                      'errors': sorted({r['error'] for r in results if not r['ok']}),
                      'messages': sorted({r['message'] for r in results if not r['ok']})[:3]}), end='')
    wait_stdin()


def cmd_fill(address, n):
    """Events whose ListEvents entries are as long as the grammar allows
    (511-byte commands), so that each ListEvents reply is large."""
    conn = connect(address)
    fields = '; '.join(f'u32 field_name_{j:02d}' for j in range(16))
    results = []
    for i in range(int(n)):
        name = f'fill_{i:04d}_' + 'x' * (511 - len(fields) - 11)
        results.append(register(conn, f'{name} {fields}'))
    print(json.dumps({'ok': sum(1 for r in results if r['ok']),
                      'errors': sorted({r['error'] for r in results if not r['ok']}),
                      'messages': sorted({r['message'] for r in results if not r['ok']})[:3]}), end='')
    wait_stdin()


def cmd_register(address, command):
    conn = connect(address)
    print(json.dumps(register(conn, command)), end='')
    wait_stdin()


def send_async(conn, loop_state, method, signature, args):
    msg = dbus.lowlevel.MethodCallMessage(BROKER, PATH, INTERFACE, method)
    if signature:
        msg.append(*args, signature=signature)

    def on_reply(reply):
        loop_state['replies'].append(reply)
        if len(loop_state['replies']) == loop_state['expected']:
            loop_state['loop'].quit()

    conn.send_message_with_reply(msg, on_reply, timeout_s=120, require_main_loop=True)


def reply_summary(replies):
    errors, ok = {}, 0
    for reply in replies:
        if isinstance(reply, dbus.lowlevel.ErrorMessage):
            name = reply.get_error_name()
            errors[name] = errors.get(name, 0) + 1
        else:
            ok += 1
    return ok, errors


def cmd_flood(address, n, command):
    """N Registers sent at once; reports the replies that come within 3 s
    (a stalled polkit answers none of them), then holds the connection."""
    loop = GLib.MainLoop()
    conn = connect(address, mainloop=DBusGMainLoop())
    state = {'replies': [], 'expected': int(n), 'loop': loop}
    for _ in range(int(n)):
        send_async(conn, state, 'Register', 's', (command,))
    GLib.timeout_add(3000, loop.quit)
    loop.run()
    ok, errors = reply_summary(state['replies'])
    print(json.dumps({'ok': ok, 'errors': errors}), end='')
    wait_stdin()


def cmd_fds(address, n):
    conn = connect(address)
    errors = {}
    r, w = os.pipe()
    for _ in range(int(n)):
        try:
            conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 'sh', ('fds_ev u32 a', dbus.types.UnixFd(r)),
                               timeout=30)
            errors['none'] = errors.get('none', 0) + 1
        except dbus.exceptions.DBusException as e:
            errors[e.get_dbus_name()] = errors.get(e.get_dbus_name(), 0) + 1
    os.close(r)
    os.close(w)
    print(json.dumps({'errors': errors}), flush=True)


def cmd_unread(address, n_conns, n):
    """ListEvents on many connections whose replies are never read: the
    replies pile up in the bus, not in the broker."""
    conns = []
    for _ in range(int(n_conns)):
        conn = connect(address)
        conns.append(conn)
        for _ in range(int(n)):
            msg = dbus.lowlevel.MethodCallMessage(BROKER, PATH, INTERFACE, 'ListEvents')
            conn.send_message(msg)
        conn.flush()
    print(json.dumps({'sent': int(n_conns) * int(n)}), end='')
    wait_stdin()


def send_unread(conns, methods, n):
    """@n calls of each of @methods on each connection, flushed, replies
    never read: they pile up in the bus, charged to the broker."""
    for conn in conns:
        for _ in range(int(n)):
            for method, signature, args in methods:
                msg = dbus.lowlevel.MethodCallMessage(BROKER, PATH, INTERFACE, method)
                if signature:
                    msg.append(*args, signature=signature)
                conn.send_message(msg)
        conn.flush()


def cmd_unread_register(address, n_conns, n, command):
    conns = [connect(address) for _ in range(int(n_conns))]
    send_unread(conns, [('Register', 's', (command,))], n)
    print(json.dumps({'sent': int(n_conns) * int(n)}), end='')
    wait_stdin()


def cmd_interactive_register(address, n_conns, n, prefix):
    """Registers of new names that allow interactive authorization, one
    connection each, replies never waited for: with a polkit whose agent
    never answers (polkit-standin.py), each check stays in flight."""
    conns = [connect(address) for _ in range(int(n_conns))]
    for c, conn in enumerate(conns):
        for i in range(int(n)):
            msg = dbus.lowlevel.MethodCallMessage(BROKER, PATH, INTERFACE, 'Register')
            msg.append(f'{prefix}_{c}_{i} u32 a', signature='s')
            msg.set_allow_interactive_authorization(True)
            conn.send_message(msg)
        conn.flush()
    print(json.dumps({'sent': int(n_conns) * int(n)}), end='')
    wait_stdin()


def cmd_unread_both(address, n_conns, n, command):
    conns = [connect(address) for _ in range(int(n_conns))]
    send_unread(conns, [('Register', 's', (command,)), ('ListEvents', '', ())], n)
    print(json.dumps({'sent': 2 * int(n_conns) * int(n)}), end='')
    wait_stdin()


def cmd_unread_introspect(address, n_conns, n):
    """Paced at 100 calls per connection every 20 ms, below dbus-daemon's
    128 pending calls per connection: the broker answers every one."""
    conns = [connect(address) for _ in range(int(n_conns))]
    for _ in range(int(n) // 100):
        for conn in conns:
            for _ in range(100):
                conn.send_message(dbus.lowlevel.MethodCallMessage(BROKER, PATH,
                                                                  'org.freedesktop.DBus.Introspectable', 'Introspect'))
            conn.flush()
        time.sleep(0.02)
    print(json.dumps({'sent': int(n_conns) * int(n)}), end='')
    wait_stdin()


RING_HEADER_SIZE = 4096
RING_COMMITTED, RING_PADDING = 1 << 31, 1 << 30
RING_TAIL, RING_HEAD = 64, 128                  # offsets in struct ring_header (ring.h)
DATA_RING_DOORBELL_INDEX = 0xFFFFFFFE


def record_size(payload_len):
    """A ring record's length: its 24-byte header and payload, to 8 bytes."""
    return (24 + payload_len + 7) & ~7


def record_fields(write_index, tid, payload_len, write_ns):
    """A record's header after its length word (struct ring_record, ring.h)."""
    import struct
    return struct.pack('=IIIQ', int(write_index), tid, payload_len, write_ns)


class HandRing:
    """A ring written by hand, not by libuebroker's ring_write(): what is
    put in it is whatever the caller likes."""

    def __init__(self, conn, event, size):
        import mmap
        self.conn = conn        # the session lives while its connection does
        data_fd, status_fd, _, self.write_index = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's',
                                                                     (f'{event} u32 a',), timeout=60)
        self.data_fd = data_fd.take()
        os.close(status_fd.take())
        ring_fd, size = conn.call_blocking(BROKER, PATH, INTERFACE, 'OpenRing', 'u', (size,), timeout=60)
        ring_fd = ring_fd.take()
        self.size = int(size)
        self.ring = mmap.mmap(ring_fd, RING_HEADER_SIZE + self.size)
        os.close(ring_fd)
        self.tail = 0

    def head(self):
        import struct
        return struct.unpack_from('=Q', self.ring, RING_HEAD)[0]

    def claim(self, payload_len, tid=0, write_ns=0):
        """Commits a record of PAYLOAD_LEN bytes at the tail, whatever its
        payload holds (put() writes it first); not yet published."""
        import struct
        need = record_size(payload_len)
        pos = RING_HEADER_SIZE + self.tail % self.size
        self.ring[pos + 4:pos + 24] = record_fields(self.write_index, tid, payload_len, write_ns)
        self.ring[pos:pos + 4] = struct.pack('=I', need | RING_COMMITTED)
        self.tail += need

    def put(self, payload, tid=4242, write_ns=1):
        """A record of PAYLOAD, published."""
        pos = RING_HEADER_SIZE + self.tail % self.size
        self.ring[pos + 24:pos + 24 + len(payload)] = payload
        self.claim(len(payload), tid, write_ns)
        self.publish()

    def pad(self, length):
        """Commits a padding of LENGTH bytes at the tail; not yet published."""
        import struct
        pos = RING_HEADER_SIZE + self.tail % self.size
        self.ring[pos:pos + 4] = struct.pack('=I', length | RING_PADDING | RING_COMMITTED)
        self.tail += length

    def pad_lap(self):
        """Pads the rest of the lap (nothing at a lap's start)."""
        if self.tail % self.size:
            self.pad(self.size - self.tail % self.size)

    def publish(self):
        import struct
        self.ring[RING_TAIL:RING_TAIL + 8] = struct.pack('=Q', self.tail)

    def ring_doorbell(self):
        import struct
        os.write(self.data_fd, struct.pack('=I', DATA_RING_DOORBELL_INDEX))

    def end_lap(self):
        """Pads the rest of the lap, publishes it and rings."""
        self.pad_lap()
        self.publish()
        self.ring_doorbell()

    def fill_lap(self, lap):
        """A whole lap of records of a real u32 (LAP), at once; the ring
        must be empty (head at tail, at a lap's start). Returns how many."""
        import struct
        need = record_size(4)
        per_lap = self.size // need
        record = (struct.pack('=I', need | RING_COMMITTED) + record_fields(self.write_index, 4242, 4, 1) +
                  struct.pack('=I', lap))
        self.ring[RING_HEADER_SIZE:RING_HEADER_SIZE + per_lap * need] = record.ljust(need, b'\0') * per_lap
        self.tail += per_lap * need
        self.end_lap()
        return per_lap


def cmd_ring_write(address, event, kind):
    """A writer that does not use libuebroker's ring_write(): what it puts
    in its ring is whatever it likes."""
    import struct
    conn = connect(address)
    r = HandRing(conn, event, 1 << 20)
    size = r.size

    if kind == 'big':
        r.put(struct.pack('=I', 1) + b'b' * 90996)
        r.put(struct.pack('=I', 2))         # then a good one, so the test knows it was read
    elif kind == 'claims':
        # For 3 s, laps of the ring in records that claim the
        # most the broker takes (a 64 KiB payload) and are never written,
        # then a doorbell; each lap waits for the broker to free the ring.
        need = (24 + 65536 + 7) & ~7
        end = time.monotonic() + 3
        laps = 0
        while time.monotonic() < end:
            while r.head() != r.tail and time.monotonic() < end:
                time.sleep(0.0005)
            while r.tail % size + need <= size:
                r.claim(65536)
            r.end_lap()
            laps += 1
        print(json.dumps({'written': kind, 'laps': laps}), end='')
        wait_stdin()
        return
    elif kind == 'records':
        # For 3 s, laps of the ring in records of a real u32 (each lap
        # numbered in its payloads), then a doorbell; each lap waits for the
        # broker to free the ring.
        end = time.monotonic() + 3
        laps = 0
        max_wait = 0.0
        while time.monotonic() < end:
            waited = time.monotonic()
            while r.head() != r.tail and time.monotonic() < end:
                time.sleep(0.0005)
            if r.head() != r.tail:
                break
            max_wait = max(max_wait, time.monotonic() - waited)
            r.fill_lap(laps)
            laps += 1
        print(json.dumps({'written': kind, 'laps': laps, 'max_wait': max_wait}), end='')
        wait_stdin()
        return
    elif kind == 'claimed':
        r.put(struct.pack('=I', 3), tid=1, write_ns=1 << 63)
    elif kind == 'paddings':
        # The whole ring in 8-byte paddings, refilled as the broker frees
        # it, for a few seconds; then one record.
        end = time.monotonic() + 3
        paddings = 0
        while time.monotonic() < end:
            head = r.head()
            while r.tail - head < size - 8 and r.tail % size != size - 8:
                r.pad(8)
                paddings += 1
            r.publish()
            r.ring_doorbell()
            time.sleep(0.001)
        while r.head() != r.tail and time.monotonic() < end + 10:
            time.sleep(0.01)
        if r.tail % size > size - 32:
            r.pad_lap()
        r.put(struct.pack('=I', 4))
    r.ring_doorbell()
    print(json.dumps({'written': kind}), end='')
    wait_stdin()


def cmd_ring_corrupt(address, event, n):
    import mmap
    import struct
    for _ in range(int(n)):
        conn = connect(address)
        data_fd, status_fd, _, _ = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's', (f'{event} u32 a',),
                                                      timeout=60)
        ring_fd, size = conn.call_blocking(BROKER, PATH, INTERFACE, 'OpenRing', 'u', (1 << 13,), timeout=60)
        ring_fd = ring_fd.take()
        ring = mmap.mmap(ring_fd, RING_HEADER_SIZE + int(size))
        ring[RING_HEADER_SIZE:RING_HEADER_SIZE + 4] = struct.pack('=I', 12 | RING_COMMITTED)  # shorter than a record
        ring[RING_TAIL:RING_TAIL + 8] = struct.pack('=Q', 32)
        data_fd = data_fd.take()
        os.write(data_fd, struct.pack('=I', DATA_RING_DOORBELL_INDEX))
        # A round trip before leaving (the ring is read at the latest when
        # the session ends); a Ping, not a GetStatus of a full table a
        # hundred times over (large replies are charged to their uid).
        conn.call_blocking(BROKER, PATH, 'org.freedesktop.DBus.Peer', 'Ping', '', (), timeout=60)
        ring.close()
        for fd in (ring_fd, data_fd, status_fd.take()):
            os.close(fd)
        conn.close()
    print(json.dumps({'corrupted': int(n)}), flush=True)


def cmd_call(address, method, signature, args):
    conn = connect(address)
    try:
        conn.call_blocking(BROKER, PATH, INTERFACE, method, signature, tuple(json.loads(args)), timeout=60)
        print(json.dumps({'result': 'ok'}), flush=True)
    except dbus.exceptions.DBusException as e:
        print(json.dumps({'result': e.get_dbus_name()}), flush=True)


def cmd_slow_recorder(address, event, seconds):
    import socket
    import struct
    conn = connect(address)
    data_fd, _, _, write_index = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's', (f'{event} u32 a',),
                                                    timeout=60)
    data = socket.socket(fileno=data_fd.take())
    stream = socket.socket(fileno=conn.call_blocking(BROKER, PATH, INTERFACE, 'Record', 'as', ([event],),
                                                     timeout=60).take())
    stream.setblocking(False)
    record = struct.pack('=I', int(write_index)) + b'r' * 60000
    got = lost = 0
    end = time.monotonic() + float(seconds)
    while time.monotonic() < end:
        for _ in range(45):
            try:
                data.send(record, socket.MSG_DONTWAIT)
            except BlockingIOError:
                pass
        time.sleep(0.21)
        while True:                 # one drain
            try:
                message = stream.recv(128 * 1024)
            except BlockingIOError:
                break
            off = 0
            while off + 48 <= len(message):
                length, _, flags = struct.unpack_from('=IHH', message, off)
                if flags & 1:
                    lost += struct.unpack_from('=Q', message, off + 24)[0]
                else:
                    got += 1
                off += (length + 7) & ~7
    print(json.dumps({'got': got, 'lost': lost}), end='')
    wait_stdin()


def cmd_steady_writer(address, event, rate, seconds, size=4):
    import socket
    import struct
    conn = connect(address)
    data_fd, _, _, write_index = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's', (f'{event} u32 a',),
                                                    timeout=60)
    data = socket.socket(fileno=data_fd.take())
    interval = 1.0 / float(rate)
    sent = dropped = 0
    start = time.monotonic()
    n = int(float(rate) * float(seconds))
    for i in range(n):
        delay = start + i * interval - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        try:
            data.send(struct.pack('=II', int(write_index), i) + b's' * (int(size) - 4), socket.MSG_DONTWAIT)
            sent += 1
        except BlockingIOError:
            dropped += 1
    print(json.dumps({'sent': sent, 'dropped': dropped}), flush=True)


def cmd_victim(address, n, prefix):
    """What an honest user sees meanwhile: each Register answered, with
    its two descriptors, and how long each took (seconds)."""
    results, times = [], []
    for i in range(int(n)):
        conn = connect(address)
        start = time.monotonic()
        try:
            data_fd, status_fd, _, _ = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's',
                                                          (f'{prefix}_{i} u32 a',), timeout=60)
            fds = [data_fd.take(), status_fd.take()]
            for fd in fds:
                os.fstat(fd)
                os.close(fd)
            results.append({'ok': True})
        except dbus.exceptions.DBusException as e:
            results.append({'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()})
        times.append(time.monotonic() - start)
        conn.close()
    print(json.dumps({'ok': sum(1 for r in results if r['ok']),
                      'errors': sorted({r['error'] for r in results if not r['ok']}),
                      'messages': sorted({r['message'] for r in results if not r['ok']})[:3],
                      'seconds': times}), flush=True)


def summary(results, **extra):
    return json.dumps(dict({'ok': sum(1 for r in results if r['ok']),
                            'errors': sorted({r['error'] for r in results if not r['ok']}),
                            'messages': sorted({r['message'] for r in results if not r['ok']})[:3]}, **extra))


def cmd_rings(address, n, size, event):
    conns, results, sizes = [], [], []
    for _ in range(int(n)):
        conn = connect(address)
        try:
            data_fd, status_fd, _, write_index = conn.call_blocking(BROKER, PATH, INTERFACE, 'Register', 's',
                                                                    (f'{event} u32 a',), timeout=60)
        except dbus.exceptions.DBusException as e:
            # Among many uids, refused as any of them may be.
            results.append({'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()})
            conn.close()
            continue
        os.close(data_fd.take())
        os.close(status_fd.take())
        conns.append((conn, write_index))
        try:
            ring_fd, data_size = conn.call_blocking(BROKER, PATH, INTERFACE, 'OpenRing', 'u', (int(size),), timeout=60)
            os.close(ring_fd.take())
            sizes.append(int(data_size))
            results.append({'ok': True})
        except dbus.exceptions.DBusException as e:
            results.append({'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()})
    print(summary(results, bytes=sum(sizes)), flush=True)
    sys.stdin.readline()
    for conn, write_index in conns:
        conn.call_blocking(BROKER, PATH, INTERFACE, 'Unregister', 'u', (write_index,), timeout=60)
    print(json.dumps({'unregistered': len(conns)}), flush=True)
    sys.stdin.read()


def cmd_rings_write(address, n, size, event):
    """N connections, each with EVENT's ring of SIZE bytes, written flat out
    whatever the status byte says: every ring the broker has emptied gets a
    whole lap of records at once, until stdin closes."""
    import select
    rings, results = [], []
    for _ in range(int(n)):
        conn = connect(address)
        try:
            rings.append(HandRing(conn, event, int(size)))
            results.append({'ok': True})
        except dbus.exceptions.DBusException as e:
            # Among many uids, refused as any of them may be.
            results.append({'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()})
            conn.close()
    print(summary(results, bytes=sum(r.size for r in rings)), flush=True)
    laps = records = 0
    while not select.select([sys.stdin], [], [], 0)[0]:
        emptied = [r for r in rings if r.head() == r.tail]
        for r in emptied:
            records += r.fill_lap(laps)
            laps += 1
        if not emptied:
            time.sleep(0.0005)
    print(json.dumps({'laps': laps, 'records': records}), flush=True)


def cmd_streams(address, n, pattern):
    conn = connect(address)
    streams, results = [], []
    for _ in range(int(n)):
        try:
            fd = conn.call_blocking(BROKER, PATH, INTERFACE, 'RecordMatching', 'as', ([pattern],), timeout=60)
            streams.append(fd.take())
            results.append({'ok': True})
        except dbus.exceptions.DBusException as e:
            results.append({'ok': False, 'error': e.get_dbus_name(), 'message': e.get_dbus_message()})
    print(summary(results), end='')
    wait_stdin()


def cmd_repeat(address, n, command):
    conn = connect(address)
    print(json.dumps(register(conn, command)), flush=True)
    sys.stdin.readline()
    results = [register(conn, command) for _ in range(int(n))]
    print(json.dumps({'ok': sum(1 for r in results if r['ok'])}), flush=True)
    sys.stdin.read()


def main():
    address, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    commands = {'hold': cmd_hold, 'churn': cmd_churn, 'churn-polite': cmd_churn_polite, 'many': cmd_many, 'register': cmd_register, 'flood': cmd_flood,
                'fds': cmd_fds, 'unread': cmd_unread, 'repeat': cmd_repeat,
                'unread-register': cmd_unread_register, 'interactive-register': cmd_interactive_register, 'unread-both': cmd_unread_both, 'victim': cmd_victim, 'fill': cmd_fill,
                'unread-introspect': cmd_unread_introspect,
                'ring-write': cmd_ring_write,
                'slow-recorder': cmd_slow_recorder, 'ring-corrupt': cmd_ring_corrupt, 'call': cmd_call, 'steady-writer': cmd_steady_writer,
                'rings': cmd_rings, 'rings-write': cmd_rings_write, 'streams': cmd_streams, 'signal-flood': cmd_signal_flood,
                'hold-flooded': cmd_hold_flooded,
                'churn-for': cmd_churn_for}
    commands[command](address, *args)


if __name__ == '__main__':
    main()
