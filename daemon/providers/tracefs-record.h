/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Record on a kernel provider (upstream and v1): one tracefs instance per
 * recording (libtracefs), its per-CPU trace_pipe_raw read without blocking
 * from the event loop and its sub-buffers parsed with libtraceevent's
 * kbuffer; each record is re-sent in the Record stream format
 * (uebroker-record.h), so one consumer serves every provider. A
 * RecordKernelPages recording sends the sub-buffers themselves, with the
 * header and format files that say how to read them.
 * docs/DECISIONS.md says why not perf.
 *
 * An upstream event exists in the kernel only while something has it
 * registered, so there each recording registers its events on a data file
 * of its own (an enabler in a page of its own) for as long as it records:
 * the event is there to enable, and its writers' status bytes show FTRACE.
 * A v1 event exists until deleted: nothing is registered.
 */

#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "list.h"
#include "provider.h"
#include "record-sink.h"

struct tracefs_record_event {
        const char *name;
        /* What DIAG_IOCSREG (upstream) takes; NULL where the event exists
         * without a registration (v1). */
        const char *reg_string;
};

/* Instance names start with this, then the broker's pid and a counter; a
 * broker at start removes what a dead one left. */
#define TRACEFS_RECORDER_INSTANCE_PREFIX "uebroker-record-"
/* Per-CPU ring buffer of a recording's instance. */
#define TRACEFS_RECORDER_BUFFER_KB 256u
/* Recordings at once, per provider. */
#define TRACEFS_RECORDINGS_MAX 16u
/* As the embedded provider's data: below the bus (SD_EVENT_PRIORITY_NORMAL),
 * above SD_EVENT_PRIORITY_IDLE. */
#define TRACEFS_RECORD_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)

struct tracefs_recording;

/* What a recording needs of a provider's event (struct provider_event is
 * each provider's own): its name, and for upstream its reg_string. */
typedef struct tracefs_record_event (*tracefs_record_describe_fn)(const struct provider_event *ev);

/* A kernel provider's recordings: the base both kernel providers share.
 * Their struct provider begins with it (a static assertion in each says
 * so), so that tracefs_provider_record() and its two siblings are their
 * provider_ops.record, .record_matching and .record_kernel_pages. */
struct tracefs_recordings {
        sd_event *event;
        char *data_path;        /* upstream: where recordings register; NULL for v1 */
        tracefs_record_describe_fn describe;
        LIST_HEAD(struct tracefs_recording, list);
        unsigned n;
};

/* Points libtracefs at @tracefs and removes instances a dead broker left.
 * @data_path is user_events_data for upstream, NULL for v1; @describe is
 * the provider's, called during the record calls. */
int tracefs_recordings_init(struct tracefs_recordings *set, sd_event *event, const char *tracefs,
                            const char *data_path, tracefs_record_describe_fn describe);
void tracefs_recordings_done(struct tracefs_recordings *set);

/**
 * tracefs_provider_record() - provider_ops.record of a kernel provider
 * @p: a provider whose struct begins with its struct tracefs_recordings
 *
 * A new recording of @events (at least one). Returns the consumer's
 * descriptor, -EINVAL for no events or too many, -EUSERS beyond
 * TRACEFS_RECORDINGS_MAX, or another negative errno (EADDRINUSE: a name
 * the kernel has with other fields). @owner (may be NULL) as
 * provider_ops.record says. Event-loop thread only.
 */
int tracefs_provider_record(struct provider *p, struct provider_event *const *events, size_t n_events,
                            const struct provider_stream_owner *owner);

/**
 * tracefs_provider_record_matching() - provider_ops.record_matching of a
 * kernel provider
 *
 * As tracefs_provider_record(), with @events maybe none, and each event
 * added later whose name matches one of @patterns (1..EVENT_PATTERNS_MAX,
 * copied; -EINVAL otherwise) joins the recording.
 */
int tracefs_provider_record_matching(struct provider *p, struct provider_event *const *events, size_t n_events,
                                     const char *const *patterns, size_t n_patterns,
                                     const struct provider_stream_owner *owner);

/**
 * tracefs_provider_record_kernel_pages() - provider_ops.record_kernel_pages
 * of a kernel provider
 *
 * As tracefs_provider_record_matching(), the stream carrying the
 * instance's header files, each event's format file and the sub-buffers
 * read from its per-CPU trace_pipe_raw as they are (uebroker-record.h).
 */
int tracefs_provider_record_kernel_pages(struct provider *p, struct provider_event *const *events, size_t n_events,
                                         const char *const *patterns, size_t n_patterns,
                                         const struct provider_stream_owner *owner);

/* A new event joins the recordings whose patterns match its name. */
void tracefs_recordings_follow(struct tracefs_recordings *set, const struct tracefs_record_event *event);
/* The event leaves every recording (an undone event_add). */
void tracefs_recordings_forget(struct tracefs_recordings *set, const char *name);
