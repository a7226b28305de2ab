/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The shared-memory ring of the embedded provider (OpenRing, DESIGN.md):
 * a memfd the broker creates and maps, the client maps read-write too.
 * Many threads of the client write records (reserve by compare-and-swap
 * on @tail, fill, commit by setting the first word last); the broker alone
 * reads them and frees the space (zeroes it, then moves @head).
 *
 *     page 0          struct ring_header
 *     page 1 ...      data: RING_DATA_SIZE(total) bytes, a power of two
 *
 * A record, 8-byte aligned, never wrapping (the end of the data area is
 * filled with a padding record instead):
 *
 *     u32 word        size (header + payload, a multiple of 8) | RING_COMMITTED
 *                     [| RING_PADDING]; written last, with release order
 *     u32 write_index as Register gave it
 *     u32 tid         the writing thread (gettid())
 *     u32 payload_len exact, the padding excluded
 *     u64 timestamp   CLOCK_MONOTONIC at the write, ns
 *     payload
 *
 * The broker trusts nothing in the mapping: it keeps its own head and
 * size, reads at most a budget of records per call, validates every word
 * and copies a record out before looking at it (ring_read()). A ring whose
 * contents make no sense is given up: only its client's records are lost.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "data-message.h"

#define RING_MAGIC 0x676e6972u          /* "ring" */
#define RING_VERSION 2u
#define RING_HEADER_SIZE 4096u
#define RING_DATA_MIN (8u * 1024u)
#define RING_DATA_MAX (1024u * 1024u)

#define RING_COMMITTED (1u << 31)
#define RING_PADDING (1u << 30)
#define RING_SIZE_MASK (RING_PADDING - 1u)
/* What a record no one wants costs the reader's budget at least, as if it
 * carried this much (the broker charges a record every recorder loses as
 * much: embedded-ring.c): a writer that honours its status byte writes none
 * (at most a few as recording stops), and freeing one costs the reader
 * its fixed part whatever it claims (about 17 ns on the machines of
 * bench/README.md), so that charging only the claims let one uid's
 * rings of 4-byte records, written flat out regardless of the status
 * byte, take 60% of the broker's core (test-hostile's test_e5). */
#define RING_UNWANTED_CHARGE 256u

struct ring_header {
        uint32_t magic;
        uint32_t version;
        uint32_t data_size;     /* the broker's word; it keeps its own copy */
        uint32_t reserved;
        /* Written by the client's threads. */
        uint64_t tail __attribute__((aligned(64)));     /* bytes reserved, ever */
        uint64_t dropped;       /* records that found the ring full */
        /* Written by the broker. */
        uint64_t head __attribute__((aligned(64)));     /* bytes freed, ever */
        /* 1 while the broker waits for a doorbell; a writer that finds it
         * set (and the ring filled to @wake_bytes) clears it and rings. A
         * line of their own, which the broker writes only when they
         * change: a writer reads it at every commit, and a line the broker
         * wrote since costs that write a cache miss. */
        uint32_t waiting __attribute__((aligned(64)));
        uint32_t wake_bytes;
};

struct ring_record {
        uint32_t word;
        uint32_t write_index;
        uint32_t tid;
        uint32_t payload_len;
        uint64_t timestamp_ns;
};

_Static_assert(sizeof(struct ring_record) == 24, "ring_record is shared with clients");
_Static_assert(sizeof(struct ring_header) <= RING_HEADER_SIZE, "ring_header fits its page");
/* The layout clients and tests (test-broker.py, hostile-client.py) rely on. */
_Static_assert(offsetof(struct ring_header, tail) == 64 && offsetof(struct ring_header, head) == 128 &&
               offsetof(struct ring_header, waiting) == 192, "ring_header's lines");

#define RING_ALIGN_UP(n) (((n) + 7u) & ~(size_t) 7u)

/* The writer's side (libuebroker). */
struct ring_writer {
        struct ring_header *header;
        uint8_t *data;
        uint32_t size;          /* data area, from the broker's answer */
        /* header->head as last read: it only grows, so a stale one only
         * underestimates the room, and the broker's line is read again
         * only when the ring looks full by it. Shared by the writing
         * threads, relaxed. */
        uint64_t head_seen;
};

/* Writes one record of @payload_len bytes gathered from @iov. 0 when
 * committed; -EAGAIN when the ring is full (counted in header->dropped);
 * -EMSGSIZE when it could never fit (more than a quarter of the ring) or
 * is longer than the broker takes (DATA_PAYLOAD_MAX).
 * Returns in *@ret_wake whether the caller must ring the doorbell. */
struct iovec;
int ring_write(struct ring_writer *w, uint32_t write_index, uint32_t tid, uint64_t timestamp_ns,
               const struct iovec *iov, int iovcnt, size_t payload_len, bool *ret_wake);

/* The reader's side (the broker). */
struct ring_reader {
        struct ring_header *header;
        uint8_t *data;
        uint32_t size;          /* ours, never re-read from the mapping */
        uint64_t head;          /* ours; published to header->head */
        uint64_t dropped_seen;  /* header->dropped already counted */
        bool broken;
};

/* What the reader does with the records it finds. */
struct ring_read_ops {
        /* Before anything is copied: whether @rec (its header, read from
         * the mapping; its length already checked against
         * DATA_PAYLOAD_MAX) is worth a copy. false: it is freed unread.
         * NULL: every record is. */
        bool (*want)(const struct ring_record *rec, void *userdata);
        /* Each wanted record, a private copy (@rec, @payload). Returns
         * whether it went anywhere: false (it was lost by everyone who
         * wanted it after all) charges it as an unwanted record. */
        bool (*record)(const struct ring_record *rec, const uint8_t *payload, void *userdata);
};

/* What one ring_read() may consume, decremented by what it did: records
 * and paddings (@turns), and the bytes they claim to carry (@bytes: a
 * record's length less its struct ring_record, a padding's length),
 * copied or not, and a record that goes nowhere (not wanted, or
 * record() returned false) at least RING_UNWANTED_CHARGE. A reader's cost
 * per record is bounded by @turns; what a writer can claim without writing
 * it (the payload) by @bytes. @starved is set when a committed record or
 * padding was left for want of @bytes. */
struct ring_budget {
        unsigned turns;
        uint64_t bytes;
        bool starved;
};

/* Reads committed records and paddings in order, within @budget, hands
 * each record @ops->want()s (copied into @scratch, RING_DATA_MAX bytes)
 * to @ops->record(), frees their space. Returns how many records it
 * read (handed out or freed unread); -EBADMSG when the ring's contents are impossible (the
 * reader is then broken and reads nothing more): among them a record
 * whose length is not what its payload_len makes it, or whose payload is
 * longer than DATA_PAYLOAD_MAX, which ring_write() never writes. */
int ring_read(struct ring_reader *r, struct ring_budget *budget, uint8_t *scratch, const struct ring_read_ops *ops,
              void *userdata);

/* Before the broker sleeps: asks writers to ring once @wake_bytes are
 * pending (0: at the next record). true when enough is committed already:
 * read again instead of sleeping. */
bool ring_reader_wait(struct ring_reader *r, uint32_t wake_bytes);

/* Bytes written and not yet read, as far as the mapping can be believed
 * (0 when it cannot). */
uint64_t ring_pending(const struct ring_reader *r);

/* Drops the writer counted since the last call (header->dropped). */
uint64_t ring_take_dropped(struct ring_reader *r);
