/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What a client writes to an embedded data socket (one message each):
 *
 *     [u32 write_index][payload]            a record (the writev contract)
 *     [u32 DATA_DROP_REPORT_INDEX][u64 n]   a drop report: n records this
 *                                           client could not hand over
 *                                           (EAGAIN: the socket was full)
 *                                           since its last report
 *     [u32 DATA_RING_DOORBELL_INDEX]        the client wrote to its ring
 *                                           (ring.h) while the broker
 *                                           slept: wake up and read it
 *
 * The drop report is libuebroker's, sent before its next record once the
 * socket takes messages again, so that the broker counts (and `uebctl
 * status` shows) what writers lost as well as what it dropped itself. No
 * write index reaches it (at most WRITE_INDEXES_MAX). Host byte order.
 */

#include <stdint.h>

/* The most payload one record carries, through the socket or a ring: a
 * ring record that claims more is not what libuebroker writes. */
#define DATA_PAYLOAD_MAX 65536u

#define DATA_DROP_REPORT_INDEX UINT32_MAX
#define DATA_RING_DOORBELL_INDEX (UINT32_MAX - 1)

/* 12 bytes: the index, then the u64 count right after it (unaligned). */
#define DATA_DROP_REPORT_SIZE (sizeof(uint32_t) + sizeof(uint64_t))
