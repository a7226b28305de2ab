/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Record on a kernel with user_events: one tracefs instance per recorder
 * (libtracefs), its per-CPU trace_pipe_raw read without blocking from the
 * event loop and its sub-buffers parsed with libtraceevent's kbuffer; each
 * record is re-sent in the Record stream format (uebroker-record.h), so one
 * consumer serves every provider. docs/DECISIONS.md says why not perf.
 *
 * A user_events event exists in the kernel only while something has it
 * registered, so the recorder registers each event on a data file of its
 * own (an enabler in a page of its own) for as long as it records: the
 * event is there to enable, and its writers' status bytes show FTRACE.
 */

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "record-sink.h"

struct upstream_recorder;

struct upstream_record_event {
        const char *name;
        const char *reg_string;         /* what DIAG_IOCSREG takes */
};

/* Instance names start with this, then the broker's pid and a counter; a
 * broker at start removes what a dead one left (upstream_recorder_cleanup). */
#define UPSTREAM_RECORDER_INSTANCE_PREFIX "uebroker-record-"

/* Per-CPU ring buffer of a recorder's instance. */
#define UPSTREAM_RECORDER_BUFFER_KB 256u

/* @n_events may be 0: a recording of patterns that match nothing yet. */
int upstream_recorder_new(sd_event *event, int64_t priority, const char *data_path,
                          const struct upstream_record_event *events, size_t n_events,
                          void (*on_gone)(void *userdata), void *userdata,
                          struct upstream_recorder **ret, int *ret_consumer_fd);
struct upstream_recorder *upstream_recorder_free(struct upstream_recorder *r);

/* An event joins a running recording (RecordMatching: registered after
 * the recording started). 0 if it was recorded already. */
int upstream_recorder_add_event(struct upstream_recorder *r, const struct upstream_record_event *event);
/* The event leaves the recording, if it is in it. */
void upstream_recorder_remove_event(struct upstream_recorder *r, const char *name);

/* Removes the instances of recorders whose broker is gone (named with
 * another pid than ours). Returns how many. */
int upstream_recorder_cleanup(const char *tracefs);
