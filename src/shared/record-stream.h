/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stream Record() hands to a consumer: a SOCK_SEQPACKET socket, one
 * message per record, each a struct record_header, then name_len bytes of
 * the event name (no NUL), then the payload (the bytes the writer sent after
 * its u32 write index). All integers are host byte order: the consumer runs
 * on the same machine.
 *
 * From a kernel provider the payload is what the kernel traced: the bytes
 * written, plus up to 3 bytes of ring-buffer padding.
 *
 * A message with RECORD_FLAG_LOST and no name carries in lost_count how many
 * records of this stream were dropped (consumer too slow) since the last such
 * notice.
 */

#include <stdint.h>

#define RECORD_FLAG_LOST (1u << 0)
/* pid is the writing thread's id (the kernel's trace records that, not the
 * process id), timestamp_ns the time of the write. */
#define RECORD_FLAG_KERNEL_TRACE (1u << 1)
/* The uid of a record the kernel traced: its trace records only the
 * writing thread's id. */
#define RECORD_UID_UNKNOWN UINT32_MAX

struct record_header {
        uint32_t length;        /* whole message: header + name + payload */
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
};

_Static_assert(sizeof(struct record_header) == 32, "record_header is part of the stream ABI");
