/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef UEBROKER_RECORD_H
#define UEBROKER_RECORD_H

/*
 * The record stream of uebrokerd: what org.uebroker1.Broker.Record() and
 * RecordMatching() return (docs/DESIGN.md, "The record stream", describes
 * the same bytes for consumers in other languages).
 *
 * The returned descriptor is a connected AF_UNIX SOCK_SEQPACKET socket the
 * consumer only reads: one message per recv(), never split or merged. Each
 * message is a struct ueb_record_header (32 bytes), then name_len bytes of
 * the event name (ASCII, no NUL), then the payload: the bytes the writer
 * wrote after its u32 write index, as validated against the event's fields
 * (SPEC.md section 5); from a kernel provider, what the kernel traced: the
 * bytes written plus up to 3 bytes of ring-buffer padding. Integers are in
 * host byte order (the consumer runs on the same machine); no padding in
 * the header.
 *
 * A message with UEB_RECORD_FLAG_LOST set has no name and no payload
 * (length 32): lost_count records of this stream were dropped since the
 * last such notice because the consumer read too slowly. Consumers ignore
 * flag bits they do not know. recv() returning 0 means the broker closed
 * the stream. A buffer of UEB_RECORD_MESSAGE_MAX bytes holds any message.
 */

#include <stdint.h>

#define UEB_RECORD_FLAG_LOST (1u << 0)
/* The record comes from the kernel's trace (a kernel provider): pid is the
 * writing thread's id (what the trace records), timestamp_ns the time of the
 * write, uid UEB_RECORD_UID_UNKNOWN. Without this flag (the embedded
 * provider) pid and uid are the writer's process and uid from its data
 * socket's peer credentials, and timestamp_ns is when the broker received
 * the record. */
#define UEB_RECORD_FLAG_KERNEL_TRACE (1u << 1)
/* The uid of a record whose path does not carry it (the kernel's trace). */
#define UEB_RECORD_UID_UNKNOWN UINT32_MAX

#define UEB_RECORD_NAME_MAX 255u
#define UEB_RECORD_PAYLOAD_MAX 65536u
#define UEB_RECORD_MESSAGE_MAX (32u + UEB_RECORD_NAME_MAX + UEB_RECORD_PAYLOAD_MAX)

struct ueb_record_header {
        uint32_t length;        /* bytes  0- 3: whole message: header + name + payload */
        uint16_t name_len;      /* bytes  4- 5: 1..255; 0 in a lost notice */
        uint16_t flags;         /* bytes  6- 7: UEB_RECORD_FLAG_* */
        uint32_t pid;           /* bytes  8-11: writer's pid (thread id with KERNEL_TRACE) */
        uint32_t uid;           /* bytes 12-15: writer's uid, or UEB_RECORD_UID_UNKNOWN */
        uint64_t timestamp_ns;  /* bytes 16-23: CLOCK_REALTIME, ns since the epoch: received
                                 * by the broker, or written (KERNEL_TRACE) */
        uint64_t lost_count;    /* bytes 24-31: only with UEB_RECORD_FLAG_LOST, else 0 */
};

#ifdef __cplusplus
static_assert(sizeof(struct ueb_record_header) == 32, "ueb_record_header is the stream's ABI");
#else
_Static_assert(sizeof(struct ueb_record_header) == 32, "ueb_record_header is the stream's ABI");
#endif

#endif
