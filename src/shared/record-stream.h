/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The stream Record() hands to a consumer: a SOCK_SEQPACKET socket, one
 * message per record, each a struct record_header, then name_len bytes of
 * the event name (no NUL), then the payload (the bytes the writer sent after
 * its u32 write index). All integers are host byte order: the consumer runs
 * on the same machine.
 *
 * A message with RECORD_FLAG_LOST and no name carries in lost_count how many
 * records of this stream were dropped (consumer too slow) since the last such
 * notice.
 */

#include <stdint.h>

#define RECORD_FLAG_LOST (1u << 0)

struct record_header {
        uint32_t length;        /* whole message: header + name + payload */
        uint16_t name_len;
        uint16_t flags;         /* RECORD_FLAG_* */
        uint32_t pid;           /* writer, from the data socket's peer credentials */
        uint32_t uid;
        uint64_t timestamp_ns;  /* CLOCK_REALTIME when the daemon read the record */
        uint64_t lost_count;    /* only with RECORD_FLAG_LOST */
};

_Static_assert(sizeof(struct record_header) == 32, "record_header is part of the stream ABI");
