/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * uebctl record -o DIR: the records as a CTF trace (Common Trace Format 1.8,
 * what babeltrace2 and Trace Compass open), written by libbabeltrace2's own
 * sink.ctf.fs component; we only feed it trace IR (docs/DECISIONS.md,
 * "Recordings for trace tools").
 *
 * One stream; a clock of 1 GHz whose origin is the Unix epoch, each event
 * stamped with the record's timestamp_ns; per event the common context
 * { pid, uid } (pid: the writer's, or the thread id from the kernel's trace;
 * uid 4294967295 when unknown) and a payload with the event's fields:
 * integers as integers, char arrays and char dynamic fields as strings,
 * other dynamic fields and structs as arrays of bytes. An event class is
 * made for each event name as its first record arrives. LOST notices (the
 * recorder was too slow) are events "uebroker:lost" { count }, so a reader
 * of the file sees where and how many records are missing.
 */

#include <stddef.h>
#include <stdint.h>

#include "event-def.h"
#include "uebroker-record.h"

struct ctf_writer;

/* Starts a trace in the directory @path (created if needed). Prints the
 * reason and returns a negative errno on failure. */
int ctf_writer_new(const char *path, struct ctf_writer **ret);
/* Adds one record; @def is its event's definition (NULL when unknown: the
 * record is skipped, counted). Returns 0, or a negative errno when the
 * trace cannot be written. */
int ctf_writer_add(struct ctf_writer *w, const struct ueb_record_header *h, const char *name, size_t name_len,
                   const uint8_t *payload, size_t payload_len, const struct event_def *def);
/* The event a LOST notice becomes: records the broker could not deliver
 * to this recorder, { u64 count }, at the notice's time. Not a valid user
 * event name, so no event can be mistaken for it. */
#define CTF_LOST_EVENT_NAME "uebroker:lost"
/* Adds the LOST notice @h (h->lost_count records). 0 or a negative errno. */
int ctf_writer_add_lost(struct ctf_writer *w, const struct ueb_record_header *h);
/* Records the LOST notices said were lost, together. */
uint64_t ctf_writer_lost(const struct ctf_writer *w);
/* Ends the trace (metadata and stream files complete) and frees @w.
 * Returns 0 or a negative errno. */
int ctf_writer_finish(struct ctf_writer *w);
/* Records written, and skipped (no definition, or not decodable). */
uint64_t ctf_writer_written(const struct ctf_writer *w);
uint64_t ctf_writer_skipped(const struct ctf_writer *w);
