/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Ring-buffer pages as the kernel's ftrace ring buffer fills them, and as
 * trace.dat files (trace-cmd.dat.v6(5)) carry them: what trace-cmd,
 * KernelShark and libtraceevent's kbuffer read. Used by uebctl record -o
 * FILE.dat, which builds its pages from the records of a record stream.
 *
 * A page (sub-buffer): u64 timestamp, long commit (bytes of events; bit 31
 * RB_MISSED_EVENTS: events were lost before this page; bit 30
 * RB_MISSED_STORED: their count, a long, follows the events), then events,
 * each a u32 header { type_len:5, time_delta:27 } (little-endian bit
 * order, as on x86) and 4-byte aligned data: type_len 1..28 is the data's
 * size in words; 0 puts the size in the next u32 (data + 4); 30 is a time
 * extension (delta bits 27 and up in the next u32). Host byte order and
 * long size throughout, as the file header says.
 *
 * Pure code: no I/O, no global state; a page is used by one thread.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* u64 timestamp and long commit, before the events. */
#define TRACEDAT_PAGE_HEADER_SIZE (8u + (unsigned) sizeof(long))
#define TRACEDAT_MISSED_EVENTS (1ul << 31)
#define TRACEDAT_MISSED_STORED (1ul << 30)
/* Largest type_len that holds the data size itself (RB_MAX_SMALL_DATA / 4). */
#define TRACEDAT_TYPE_LEN_DATA_MAX 28u
#define TRACEDAT_TYPE_TIME_EXTEND 30u
/* time_delta bits in an event header. */
#define TRACEDAT_TIME_DELTA_BITS 27u

struct tracedat_page {
        uint8_t *data;          /* page_size bytes: header, then events */
        size_t page_size;
        size_t used;            /* bytes of events after the header */
        uint64_t last_ts;       /* of the last event; the page's own stamp is the first's */
        uint64_t missed;        /* records lost before this page's first event */
        bool has_missed;
        size_t n_events;
};

/**
 * tracedat_page_init() - an empty page of @page_size bytes
 *
 * @page_size: at least 64 and at most 1 << 27 (what commit can count).
 * Return: 0, -EINVAL, or -ENOMEM. Free with tracedat_page_done().
 */
int tracedat_page_init(struct tracedat_page *p, size_t page_size);
void tracedat_page_done(struct tracedat_page *p);

/* Empties @p for the next page (its missed count too). */
void tracedat_page_reset(struct tracedat_page *p);

/**
 * tracedat_page_add_missed() - @n records (0: an unknown number) were lost
 * before this page's first event
 *
 * Return: 0, or -EBUSY when the page has events already (finish it, reset,
 * then mark the next one). Counts add up; an unknown number stays unknown.
 */
int tracedat_page_add_missed(struct tracedat_page *p, uint64_t n);

/**
 * tracedat_page_add() - appends one event stamped @ts
 * @ts: nanoseconds; not before the page's last event
 * @head, @body: the event's data, @head_len then @body_len bytes (ftrace's
 *          trace_entry and the payload); padded to 4 bytes with zeros
 *
 * Return: 0; -ENOSPC when it does not fit in what is left (finish and reset
 * the page, then add it again); -EMSGSIZE when it cannot fit in any page;
 * -ERANGE when @ts is before the last event's.
 */
int tracedat_page_add(struct tracedat_page *p, uint64_t ts, const void *head, size_t head_len, const void *body,
                      size_t body_len);

/* Fills in the page header (timestamp, commit and its flags, the stored
 * missed count) and returns the page's page_size bytes, unused ones zero.
 * Valid until the next change of @p. */
const uint8_t *tracedat_page_finish(struct tracedat_page *p);

/* events/header_page as a kernel with @page_size sub-buffers and this
 * host's long prints it. malloc()ed, NULL on -ENOMEM. */
char *tracedat_header_page_text(size_t page_size);
/* events/header_event, as the kernel prints it. A constant. */
const char *tracedat_header_event_text(void);
