/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stream Record() hands to a consumer: a SOCK_SEQPACKET socket whose
 * messages each carry one or more records back to back (the broker packs
 * what it read in one wakeup into one message, so a consumer pays one
 * receive for many records). A message is at most RECORD_STREAM_MESSAGE_MAX
 * bytes. All integers are host byte order: the consumer runs on the same
 * machine.
 *
 * One record, at an offset that is a multiple of RECORD_ALIGN (8) from the
 * start of the message:
 *
 *     0                 48                48 + name_len                length
 *     | struct record_header | name (no NUL) | payload                 | zero padding to a multiple of 8 |
 *
 * header.length counts header, name and payload, not the padding; the
 * next record starts at RECORD_ALIGN_UP(length) from this one. The payload
 * is the bytes the writer sent after its u32 write index (from a kernel
 * provider: what the kernel traced, the bytes written plus up to 3 bytes
 * of ring-buffer padding). The last record
 * of a message is padded too, so a message's size is a multiple of 8;
 * record_stream_next() also accepts a last record without its padding.
 *
 * A record with RECORD_FLAG_LOST has no name and no payload (length 48)
 * and carries in lost_count how many records of this stream were dropped
 * (consumer too slow) since the last such notice; it stands where they
 * would have been. Records of one writer arrive in the order it wrote them.
 */

#include <stddef.h>
#include <stdint.h>

#define RECORD_FLAG_LOST (1u << 0)
/* pid is the writing thread's id (the kernel's trace records that, not the
 * process id), timestamp_ns the time of the write. */
#define RECORD_FLAG_KERNEL_TRACE (1u << 1)
/* The uid of a record the kernel traced: its trace records only the
 * writing thread's id. */
#define RECORD_UID_UNKNOWN UINT32_MAX

#define RECORD_ALIGN 8u
#define RECORD_ALIGN_UP(n) (((n) + (RECORD_ALIGN - 1)) & ~(size_t) (RECORD_ALIGN - 1))
/* Large enough for the largest single record (header, a 255-byte name, a
 * 64 KiB payload); a consumer receives into a buffer of this size. */
#define RECORD_STREAM_MESSAGE_MAX (128u * 1024u)

struct record_header {
        uint32_t length;        /* header + name + payload, without padding */
        uint16_t name_len;
        uint16_t flags;         /* RECORD_FLAG_* */
        uint32_t pid;           /* embedded: the writer, from the data socket's peer
                                 * credentials; kernel providers: the writing
                                 * thread's id, as the kernel traced it */
        uint32_t uid;           /* the writer's uid, or RECORD_UID_UNKNOWN */
        uint64_t timestamp_ns;  /* CLOCK_REALTIME: embedded, when the daemon read
                                 * the record; kernel providers, when it was
                                 * written (the kernel's CLOCK_MONOTONIC stamp,
                                 * converted) */
        uint64_t lost_count;    /* only with RECORD_FLAG_LOST */
        /* Who wrote it and when, where that is known: records from a
         * ring (DESIGN.md, OpenRing) and from the kernel's trace; 0 for
         * the embedded data socket. */
        uint32_t tid;           /* the writing thread */
        uint32_t reserved;      /* 0 */
        uint64_t write_monotonic_ns;    /* CLOCK_MONOTONIC at the write, as perf and ftrace stamp */
};

_Static_assert(sizeof(struct record_header) == 48, "record_header is part of the stream ABI");

/* One record of a received message; name and payload point into it. */
struct record_view {
        struct record_header header;
        const char *name;
        const uint8_t *payload;
        size_t payload_len;
};

/* The record at *@offset of the message @msg (@len bytes): 1 with *@ret
 * filled and *@offset moved to the next record, 0 at the end of the
 * message, -EBADMSG when what is left is not a record (the rest of the
 * message is unusable; *@offset is left alone). */
int record_stream_next(const uint8_t *msg, size_t len, size_t *offset, struct record_view *ret);

/* A message being packed (the broker's side). */
struct record_batch {
        uint8_t *data;
        size_t len;
        size_t capacity;        /* at most RECORD_STREAM_MESSAGE_MAX */
};

/* Appends a record made of @h (its length is set here), @name and @payload,
 * padded. -ENOBUFS when it does not fit in what is left (send the batch
 * first), -EMSGSIZE when it could never fit. */
int record_batch_append(struct record_batch *b, const struct record_header *h, const char *name, size_t name_len,
                        const void *payload, size_t payload_len);
