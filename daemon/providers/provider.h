/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The provider interface: what the broker needs from whatever carries the
 * events (the in-daemon embedded provider, upstream user_events, the v1
 * kernel provider). The broker calls it only through provider-link.c, so
 * a new provider is one new file plus one line in provider_table[]
 * (providers/provider.c) and one in providers/meson.build.
 *
 * Objects:
 *   struct provider          one per daemon
 *   struct provider_event    one per event the broker knows
 *   struct provider_session  one per client (bus connection): its data file
 *                            and status page
 *
 * Index rules (SPEC.md sections 3 and 4): the broker proposes a status index
 * (1..4095, never 0) for each new event; a provider whose kernel chooses the
 * index itself returns the one it got. Write indexes belong to a session
 * and are kept in one table, the session's (write-indexes.h): the broker
 * (provider-link.c) says which index an event gets, 0, 1, 2, ... in order of
 * first registration, the same one when the event is registered again; a
 * provider binds it, or refuses with -EPROTO when its kernel numbered the
 * event otherwise. An index stays bound to its event for the session's
 * life, as in the kernel: session_unregister deactivates it (writes to it
 * are dropped where the provider can drop them), registering the same event
 * again reactivates it, and it is never handed out for another event. The
 * broker never removes an event while a session has an index bound to it.
 * The provider session reads the table (the broker's, borrowed until
 * session_free) to route records and to undo what is active.
 *
 * How the kernel providers map onto this (upstream is written:
 * providers/upstream.c; nothing above this interface changed for it):
 *
 * upstream user_events (Linux 6.4+, shared/UPSTREAM_ABI.md):
 *   probe        tracefs user_events_data exists, and user_events_status is
 *                not mmap()able (that is the v1 interface).
 *   event_add    nothing in the kernel yet (a non-PERSIST event exists only
 *                while registered); remembers the definition with flags
 *                dropped (upstream rejects text flags).
 *   session_new  opens user_events_data for the client (data fd = that open
 *                file) and creates a memfd status page (4096 bytes) which
 *                the broker maps read-write and seals like the embedded
 *                page; the client maps it read-only.
 *   session_register
 *                DIAG_IOCSREG on the session's data fd with
 *                enable_addr = page + (status_index & ~3), enable_size = 4,
 *                enable_bit = (status_index & 3) * 8: on little-endian that
 *                bit is the lowest bit of byte status_index, so byte
 *                status_index is non-zero while the event is enabled, the
 *                same contract as a v1 page. The kernel returns the write
 *                index, which must be the one the broker gave. The
 *                broker's process is the one registering, so the
 *                kernel's remote writes land in the broker's mapping of the
 *                memfd, which the client sees through its own mapping.
 *   session_unregister
 *                DIAG_IOCSUNREG with the same address and bit.
 *   event_status reads a session page byte or the tracefs enable file.
 *   record       a tracefs instance per recorder (tracefs-record.c),
 *                read and re-sent in the uebroker-record.h format.
 *
 * v1 user_events (the original interface, kernel/; providers/v1.c):
 *   probe        tracefs speaks the original interface (a mappable
 *                user_events_status with Max: 4096) and DIAG_IOCGWRITER
 *                works on user_events_data.
 *   event_add    registers the event on a data file opened for that and
 *                closed at once (v1 events persist); the kernel returns its
 *                status index, which the provider reports back instead of
 *                the proposed one.
 *   session_new  opens user_events_data for the session (the broker
 *                registers on it) and makes a write-only handle of it
 *                (DIAG_IOCGWRITER): the client's data fd. The status fd is
 *                user_events_status opened read-only, one for all sessions.
 *   session_register
 *                DIAG_IOCSREG (v1 struct) on the session's data file; the
 *                kernel's write index must be the broker's.
 *   session_unregister
 *                nothing: the interface has no unregistration.
 *   event_remove DIAG_IOCSDEL by name once nothing holds it.
 *   event_status byte status_index of the mapped kernel page.
 *   record       a tracefs instance per recorder (tracefs-record.c); the
 *                events persist, so nothing is registered for it.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#include "event-def.h"
#include "write-indexes.h"

struct provider;
struct provider_event;
struct provider_session;

/* Who is behind a session, from the bus's kernel-verified credentials. */
struct provider_peer {
        pid_t pid;
        uid_t uid;
        const char *bus_name;   /* unique name, for log messages */
};

/* What the daemon's options say about providers; passed to probe() and
 * new(). Every field may be NULL: the provider's default. */
struct provider_settings {
        const char *tracefs;    /* --tracefs=PATH: where tracefs is mounted */
};

/* What passed through the daemon's data path since the provider started
 * (providers whose kernel carries the records have no counters). */
struct provider_counters {
        uint64_t received;              /* messages read from data files */
        uint64_t dropped;               /* of those, invalid: unknown write index, bad payload */
        uint64_t writer_dropped;        /* records writers could not hand over (full data
                                         * file), as their drop reports say */
        uint64_t recorded;              /* records delivered to record streams */
        uint64_t lost;                  /* records a record stream missed (consumer too slow) */
};

/* Who a record stream is charged to (the broker's share of streams per
 * uid): the provider calls @closed(@userdata) exactly once, when it lets
 * the stream go (its consumer closed it, or the provider stops), never from
 * within record() or record_matching() and never when they fail. */
struct provider_stream_owner {
        void (*closed)(void *userdata);
        void *userdata;
};

static inline void provider_stream_owner_closed(struct provider_stream_owner *o) {
        if (o->closed)
                o->closed(o->userdata);
        *o = (struct provider_stream_owner) {};
}

struct provider_ops {
        const char *name;
        /* Descriptors the daemon holds per session, to size Clients= against
         * the fd limit. */
        unsigned fds_per_session;
        /* Record streams it serves at once (RecordStreams= is capped to it). */
        unsigned max_record_streams;

        /* 1 if usable on this machine, 0 if not (with a malloc()ed reason in
         * *ret_reason when not NULL), negative errno on failure. */
        int (*probe)(const struct provider_settings *settings, char **ret_reason);

        int (*new)(sd_event *event, const struct provider_settings *settings, struct provider **ret);
        struct provider *(*free)(struct provider *p);

        /* Makes @def known to the provider. *io_status_index holds the
         * proposed index and may be replaced by the one actually used.
         * @def stays owned by the caller and outlives the provider event. */
        int (*event_add)(struct provider *p, const struct event_def *def, uint32_t *io_status_index,
                         struct provider_event **ret);
        /* Only called when no session has a write index bound to the
         * event, active or not. */
        void (*event_remove)(struct provider *p, struct provider_event *ev);
        /* The event's status byte: EVENT_STATUS_* bits of who listens. */
        uint8_t (*event_status)(struct provider *p, struct provider_event *ev);

        int (*session_new)(struct provider *p, const struct provider_peer *peer, const struct write_indexes *indexes,
                           struct provider_session **ret);
        /* Drops every registration of the session and closes its files. */
        void (*session_free)(struct provider *p, struct provider_session *s);
        /* Borrowed descriptors: the caller dups what it sends. */
        int (*session_data_fd)(struct provider_session *s);
        int (*session_status_fd)(struct provider_session *s);
        /* Binds @write_index to @ev on this session and activates it:
         * either the index already bound to @ev, inactive, or the next new
         * one (indexes->n). The table is updated by the broker once this
         * succeeds. */
        int (*session_register)(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                uint32_t write_index);
        /* Deactivates @write_index, active and bound to @ev; the table is
         * updated by the broker once this succeeds. */
        int (*session_unregister)(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                  uint32_t write_index);

        /* A stream of records of @events for a consumer (uebroker-record.h);
         * returns the consumer's descriptor (owned by the caller), or
         * -EOPNOTSUPP if this provider leaves recording to the kernel's
         * tools, -EUSERS when it has all the streams it can serve. @owner
         * (copied) is told when the stream goes. */
        int (*record)(struct provider *p, struct provider_event *const *events, size_t n_events,
                      const struct provider_stream_owner *owner);
        /* Optional (NULL: RecordMatching is not supported): the same for
         * the events given (which match @patterns; maybe none yet), and each
         * event added later (event_add) whose name matches one of
         * @patterns (event-pattern.h; at most EVENT_PATTERNS_MAX) joins the
         * stream. */
        int (*record_matching)(struct provider *p, struct provider_event *const *events, size_t n_events,
                               const char *const *patterns, size_t n_patterns,
                               const struct provider_stream_owner *owner);

        /* The data path's counters; NULL when the daemon is not on the data
         * path. */
        void (*counters)(struct provider *p, struct provider_counters *ret);

        /* A shared-memory ring for the session (ring.h) of about @requested
         * data bytes, mapping (header included) at most @max_bytes, which
         * the broker charged to the session's uid (user-charges.h):
         * returns its memfd (the caller's, to hand out) with the data size
         * granted in *@ret_size and the bytes mapped in *@ret_mapped;
         * -EBUSY when the session has one, -EDQUOT when even the smallest
         * ring exceeds @max_bytes. NULL: the provider has none. */
        int (*session_ring)(struct provider *p, struct provider_session *s, uint32_t requested, uint64_t max_bytes,
                            uint32_t *ret_size, uint64_t *ret_mapped);
        /* Reads what the session's ring holds committed, then unmaps it:
         * the client's later ring writes are not read (it asks for a new
         * ring when it registers again). Nothing without a ring. NULL
         * when session_ring is. */
        void (*session_ring_close)(struct provider *p, struct provider_session *s);
};

extern const struct provider_ops embedded_provider_ops;
extern const struct provider_ops upstream_provider_ops;
extern const struct provider_ops v1_provider_ops;

/* Providers in order of preference for --provider=auto. */
extern const struct provider_ops *const provider_table[];

/* The provider called @name, NULL if there is none. */
const struct provider_ops *provider_find(const char *name);

/* --provider=auto: the first usable provider in provider_table[]; logs at
 * info why it chose it. */
int provider_choose_auto(const struct provider_settings *settings, const struct provider_ops **ret);

/* "auto, upstream, embedded": the names --provider= takes, for messages. */
const char *provider_names(void);
