/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * uebctl record -o FILE.dat: the records as a trace.dat file, version 6 of
 * trace-cmd's format (trace-cmd.dat.v6(5)), what trace-cmd report and
 * KernelShark open. docs/DECISIONS.md ("trace.dat files") says why we write
 * it ourselves and why version 6.
 *
 * What the file says, whichever provider recorded:
 * - One CPU (cpus=1), CPU 0: the record stream does not say on which CPU a
 *   record was written, so no CPU is claimed but the one.
 * - Pages of this host's page size (getpagesize()), built from the
 *   records (tracedat-page.h), in time order: records arrive per CPU and
 *   per writer, so they are sorted by time when the file is finished.
 * - Clock "mono" (CLOCK_MONOTONIC), as the broker's tracefs instances
 *   stamp: the kernel's own stamp of the write (write_monotonic_ns) on a
 *   kernel provider; on the embedded provider the broker's receive time
 *   (timestamp_ns) less CLOCK_REALTIME - CLOCK_MONOTONIC as uebctl measured
 *   it when the file was opened (whole microseconds). That difference is
 *   the file's DATE option, so trace-cmd report shows CLOCK_REALTIME
 *   seconds, the times uebctl record prints.
 * - Each event in system "user_events", with the format file the broker's
 *   definition gives (event_def_format_text()) and an ID of the file's
 *   own (1, 2, ... in order of first record). common_pid: the writer's pid
 *   (embedded) or thread id (kernel), as the stream has it.
 * - LOST notices: the next page carries RB_MISSED_EVENTS with the count
 *   stored (RB_MISSED_STORED), as the kernel marks records it dropped;
 *   trace-cmd report prints "CPU:0 [N EVENTS DROPPED]" before that page's
 *   first record. A loss with no record after it has no page to mark and
 *   is only in uebctl's summary.
 *
 * From a RecordKernelPages stream (a kernel provider) the file holds what
 * the kernel wrote instead, as trace-cmd record keeps it: the broker's
 * tracefs instance's header_page and header_event, each event's format
 * file (the kernel's IDs), and each CPU's sub-buffers as trace_pipe_raw
 * gave them (cpus: the highest CPU seen plus one; the sub-buffer size is
 * the file's page size). A LOST notice (pages the consumer was too slow
 * to take) sets RB_MISSED_EVENTS on the next page of every CPU, without a
 * count: trace-cmd report prints "[EVENTS DROPPED]" there.
 *
 * Both ways the file names the writers (saved_cmdlines): each pid's
 * /proc/PID/comm, read when its first record arrives (a writer gone by
 * then stays unnamed, <...> in trace-cmd report).
 *
 * Records and pages are spooled to an unlinked file beside the output until
 * tracedat_writer_finish() writes the file. Single-threaded.
 */

#include <stddef.h>
#include <stdint.h>

#include "event-def.h"
#include "uebroker-record.h"

struct tracedat_writer;

/* Creates (truncates) the file @path and a spool beside it. Prints the
 * reason and returns a negative errno on failure. */
int tracedat_writer_new(const char *path, struct tracedat_writer **ret);
/* Adds one record; @def is its event's definition (NULL when unknown, or
 * a payload it does not validate: skipped and counted; also one too large
 * for a page). 0, or a negative errno when the spool cannot be written. */
int tracedat_writer_add(struct tracedat_writer *w, const struct ueb_record_header *h, const char *name,
                        size_t name_len, const uint8_t *payload, size_t payload_len, const struct event_def *def);
/* Adds the LOST notice @h (h->lost_count records). 0 or a negative errno. */
int tracedat_writer_add_lost(struct tracedat_writer *w, const struct ueb_record_header *h);
/* A RecordKernelPages stream's description records (uebroker-record.h):
 * UEB_RECORD_FLAG_KERNEL_HEADER or _FORMAT, named @name, the file's text.
 * The last of each name counts. 0 or -ENOMEM; a format without a valid
 * "ID:" line is skipped (its records stay undecoded). */
int tracedat_writer_add_kernel_file(struct tracedat_writer *w, uint16_t flags, const char *name, size_t name_len,
                                    const char *text, size_t text_len);
/* A kernel sub-buffer (UEB_RECORD_FLAG_KERNEL_PAGE) of CPU @h->cpu.
 * Returns the number of events in it (0..), or a negative errno: -EINVAL
 * for a page of another size than the first, or larger than 1 MiB, or a
 * CPU number above 4095 (skipped and counted); -EIO when the spool cannot
 * be written. */
int tracedat_writer_add_kernel_page(struct tracedat_writer *w, const struct ueb_record_header *h,
                                    const uint8_t *page, size_t len);
/* Writes the file and frees @w (also on failure). 0 or a negative errno,
 * with the reason printed. */
int tracedat_writer_finish(struct tracedat_writer *w);
/* Records written (from pages: events in them), skipped (records, or
 * pages), and said lost by LOST notices (records, or pages). */
uint64_t tracedat_writer_written(const struct tracedat_writer *w);
uint64_t tracedat_writer_skipped(const struct tracedat_writer *w);
uint64_t tracedat_writer_lost(const struct tracedat_writer *w);
/* Kernel pages kept, and the CPUs they came from (0: built from records). */
uint64_t tracedat_writer_kernel_pages(const struct tracedat_writer *w);
unsigned tracedat_writer_kernel_cpus(const struct tracedat_writer *w);
