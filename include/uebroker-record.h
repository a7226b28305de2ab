/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef UEBROKER_RECORD_H
#define UEBROKER_RECORD_H

/*
 * The record stream of uebrokerd: what org.uebroker1.Broker.Record() and
 * RecordMatching() return (docs/DESIGN.md, "The record stream", describes
 * the same bytes for consumers in other languages).
 *
 * The returned descriptor is a connected AF_UNIX SOCK_SEQPACKET socket the
 * consumer only reads, one message per recv(). A message carries one or
 * more records back to back (the broker packs what it read in one wakeup
 * into one message), at most UEB_RECORD_MESSAGE_MAX bytes in all. Each
 * record starts at a multiple of UEB_RECORD_ALIGN (8) bytes from the start
 * of the message:
 *
 *     struct ueb_record_header   48 bytes
 *     name                       name_len bytes (ASCII, no NUL)
 *     payload                    length - 48 - name_len bytes
 *     padding                    zero bytes up to the next multiple of 8
 *
 * length counts header, name and payload, not the padding; the next
 * record starts UEB_RECORD_ALIGN_UP(length) bytes after this one, and a
 * message ends after the last record's padding. The payload is the bytes
 * the writer wrote after its u32 write index, as validated against the
 * event's fields (uebroker-record.h); from a kernel provider, what the
 * kernel traced: the bytes written plus up to 3 bytes of ring-buffer
 * padding. Integers are in host byte order (the consumer runs on the same
 * machine); no padding in the header. Records of one writer arrive in the
 * order it wrote them.
 *
 * A record with UEB_RECORD_FLAG_LOST set has no name and no payload
 * (length 48): lost_count records of this stream were dropped since the
 * last such notice because the consumer read too slowly; it stands where
 * they went missing. Consumers ignore flag bits they do not know. recv()
 * returning 0 means the broker closed the stream.
 *
 * A stream from RecordKernelPages() (kernel providers only) carries the
 * kernel's ring buffer as trace-cmd records it, instead of one record per
 * event:
 * - UEB_RECORD_FLAG_KERNEL_HEADER: name "header_page" or "header_event",
 *   the payload that file of the broker's tracefs instance (text, no NUL).
 *   Both come first.
 * - UEB_RECORD_FLAG_KERNEL_FORMAT: name an event's, the payload its format
 *   file (events/user_events/NAME/format, with the ID its records carry as
 *   their type). Sent when the event joins the stream, before any page
 *   with its records; never counted as lost: if the consumer has no room
 *   then, it comes before a later page.
 * - UEB_RECORD_FLAG_KERNEL_PAGE: no name; the payload one sub-buffer of
 *   CPU @cpu as per_cpu/cpuN/trace_pipe_raw returns it (its header says
 *   how much of it holds events, and whether the kernel dropped events
 *   before it). Pages of one CPU arrive in order. A LOST notice counts
 *   pages the consumer was too slow to take.
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
/* tid and write_monotonic_ns are what the writer put in its shared-memory
 * ring: claimed, not verified (any thread id, any time). pid, uid and
 * timestamp_ns are the broker's own, whatever this flag says. */
#define UEB_RECORD_FLAG_WRITER_CLAIMED (1u << 2)
/* RecordKernelPages() streams (above). */
#define UEB_RECORD_FLAG_KERNEL_HEADER (1u << 3)
#define UEB_RECORD_FLAG_KERNEL_FORMAT (1u << 4)
#define UEB_RECORD_FLAG_KERNEL_PAGE (1u << 5)
/* The uid of a record whose path does not carry it (the kernel's trace). */
#define UEB_RECORD_UID_UNKNOWN UINT32_MAX

#define UEB_RECORD_NAME_MAX 255u
#define UEB_RECORD_PAYLOAD_MAX 65536u
#define UEB_RECORD_ALIGN 8u
#define UEB_RECORD_ALIGN_UP(n) (((n) + (UEB_RECORD_ALIGN - 1u)) & ~(UEB_RECORD_ALIGN - 1u))
/* Holds any message: the largest single record fits. */
#define UEB_RECORD_MESSAGE_MAX (128u * 1024u)

struct ueb_record_header {
        uint32_t length;        /* bytes  0- 3: header + name + payload, without padding */
        uint16_t name_len;      /* bytes  4- 5: 1..255; 0 in a lost notice or a page */
        uint16_t flags;         /* bytes  6- 7: UEB_RECORD_FLAG_* */
        uint32_t pid;           /* bytes  8-11: writer's pid (thread id with KERNEL_TRACE) */
        uint32_t uid;           /* bytes 12-15: writer's uid, or UEB_RECORD_UID_UNKNOWN */
        uint64_t timestamp_ns;  /* bytes 16-23: CLOCK_REALTIME, ns since the epoch: received
                                 * by the broker, or written (KERNEL_TRACE) */
        uint64_t lost_count;    /* bytes 24-31: only with UEB_RECORD_FLAG_LOST, else 0 */
        uint32_t tid;           /* bytes 32-35: the writing thread, where the path knows
                                 * it (a ring, the kernel's trace), else 0 */
        uint32_t cpu;           /* bytes 36-39: the CPU whose ring buffer held it
                                 * (KERNEL_TRACE, KERNEL_PAGE), else 0 */
        uint64_t write_monotonic_ns;    /* bytes 40-47: CLOCK_MONOTONIC at the write, as perf
                                         * and ftrace stamp, where known, else 0 */
};

#ifdef __cplusplus
static_assert(sizeof(struct ueb_record_header) == 48, "ueb_record_header is the stream's ABI");
#else
_Static_assert(sizeof(struct ueb_record_header) == 48, "ueb_record_header is the stream's ABI");
#endif

#endif
