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
 * Index rules (uebroker-event-command(7), org.uebroker1(5)): the broker proposes a status index
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
 * Contract of every operation below: who owns what it returns, its errors
 * (negative errno) and its thread. Threads, once for all: the daemon is one
 * thread, and every operation runs on it, the sd-event loop's (the one that
 * called new()), one at a time; none is thread-safe, none may be called
 * from another thread. A provider's own event sources run there too.
 *
 * How each provider implements the operations is said at the top of its
 * file: embedded.c, upstream.c (Linux 6.4+, with the restricted handles of
 * kernel/upstream-6.12/ when the kernel has them) and v1.c (kernel/).
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
        /* Root or the daemon's uid (privileged-uid.h): exempt from the
         * bounds shared by all other users (ring-read-shares.h). */
        bool privileged;
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

/**
 * provider_stream_owner_closed() - tell a stream's owner it went, once
 * @o: the owner; cleared, so a second call does nothing
 *
 * No errors. Threads: the event loop's.
 */
static inline void provider_stream_owner_closed(struct provider_stream_owner *o) {
        if (o->closed)
                o->closed(o->userdata);
        *o = (struct provider_stream_owner) {};
}

struct provider_ops {
        /** @name: "embedded", "upstream", "v1": what --provider= takes; static. */
        const char *name;
        /** @fds_per_session: descriptors the daemon holds per session, to size
         * Clients= against the fd limit. */
        unsigned fds_per_session;
        /** @max_record_streams: record streams it serves at once
         * (RecordStreams= is capped to it). */
        unsigned max_record_streams;
        /** @self_registration: the session's data file is the kernel's own
         * user_events_data, on which a client may register what the broker
         * granted it with its own DIAG_IOCSREG (Authorize; uebroker-run):
         * the kernel then keeps the client's enable word itself. */
        bool self_registration;

        /**
         * probe() - whether the provider can run on this machine
         * @settings: may be NULL; read during the call only
         * @ret_reason: NULL, or set when not usable to a malloc()ed reason the
         *              caller frees (may stay NULL: out of memory)
         *
         * Registers nothing and keeps nothing open.
         * Return: 1 if usable, 0 if not, negative errno when it cannot tell
         * (-ENOMEM, an error reading tracefs).
         */
        int (*probe)(const struct provider_settings *settings, char **ret_reason);

        /**
         * new() - start the provider on @event
         * @event: the daemon's loop; referenced until free()
         * @settings: may be NULL; read during the call only
         * @ret: set to the provider, the caller's until free()
         *
         * Return: 0, or negative errno with nothing left behind: -ENODEV (a
         * kernel provider that probe() would refuse), -ENOMEM, or what
         * opening, mapping or sealing its files failed with (logged).
         */
        int (*new)(sd_event *event, const struct provider_settings *settings, struct provider **ret);
        /**
         * free() - stop the provider and free it
         * @p: the provider, or NULL
         *
         * The broker frees every session and removes every event first.
         * Open record streams are closed (their owners told).
         * Return: NULL; it cannot fail.
         */
        struct provider *(*free)(struct provider *p);

        /**
         * event_add() - make @def known to the provider
         * @p: the provider
         * @def: stays owned by the caller and outlives the provider event
         * @io_status_index: holds the proposed index (1..STATUS_INDEX_MAX)
         *                   and may be replaced by the one actually used
         *                   (v1: the kernel's)
         * @ret: set to the provider event, the provider's: event_remove()
         *       frees it
         *
         * A record stream whose patterns match the name joins it.
         * Return: 0, or negative errno with nothing kept: -ENOMEM; embedded
         * and upstream -EINVAL (proposed index out of range); v1 what
         * opening user_events_data or the kernel's registration failed with
         * (-EADDRINUSE other fields, -EMFILE page full, -EINVAL) and -EPROTO
         * (the kernel's status index is outside the page).
         */
        int (*event_add)(struct provider *p, const struct event_def *def, uint32_t *io_status_index,
                         struct provider_event **ret);
        /**
         * event_remove() - forget an event and free it
         * @p: the provider
         * @ev: from event_add(), or NULL
         *
         * Only called when no session has a write index bound to the event,
         * active or not. Takes it out of every record stream. A kernel
         * provider deletes it there too (logged when the kernel keeps it:
         * EBUSY). No errors.
         */
        void (*event_remove)(struct provider *p, struct provider_event *ev);
        /**
         * event_status() - the event's status byte
         * @p: the provider
         * @ev: an event of @p
         *
         * Return: EVENT_STATUS_* bits of who listens; 0 for none. No errors
         * (upstream falls back to the session pages, as "other", when the
         * kernel's status text cannot be read, and logs that once).
         */
        uint8_t (*event_status)(struct provider *p, struct provider_event *ev);

        /**
         * session_new() - open a client's data file and status page
         * @peer: copied (bus_name included)
         * @indexes: the session's write-index table, the broker's, borrowed
         *           until session_free()
         * @ret: set to the session, the caller's until session_free()
         *
         * Return: 0, or negative errno with nothing left behind: -ENOMEM,
         * or what creating its socket, memfd or data file failed with
         * (-EMFILE, -ENFILE, -EACCES, ...; kernel providers log it).
         */
        int (*session_new)(struct provider *p, const struct provider_peer *peer, const struct write_indexes *indexes,
                           struct provider_session **ret);
        /**
         * session_free() - end a session and free it
         * @p: the provider
         * @s: from session_new(), or NULL
         *
         * Drops every registration of the session and closes its files;
         * the embedded provider reads what is still queued first. The
         * broker's table is intact until it returns. No errors (upstream
         * leaks the page's mapping, logged, when the kernel keeps an enabler
         * on it).
         */
        void (*session_free)(struct provider *p, struct provider_session *s);
        /**
         * session_data_fd() - the client's data file
         * @s: a session
         *
         * Return: a descriptor borrowed for the session's life: the caller
         * dups what it sends. No errors.
         */
        int (*session_data_fd)(struct provider_session *s);
        /**
         * session_status_fd() - the client's status page, read-only
         * @s: a session
         *
         * Return: a descriptor borrowed for the session's life (v1: the
         * provider's, shared by all sessions): the caller dups what it
         * sends. No errors.
         */
        int (*session_status_fd)(struct provider_session *s);
        /**
         * session_register() - bind @write_index to @ev and activate it
         * @p: the provider
         * @s: a session of @p
         * @write_index: either the index already bound to @ev, inactive, or
         *               the next new one (indexes->n)
         *
         * The table is updated by the broker once this succeeds.
         * Return: 0, or negative errno with nothing bound: -EPROTO when the
         * kernel numbered the event otherwise (logged); what the kernel's
         * registration refused with (-EADDRINUSE the name exists with other
         * fields, -EMFILE user_events_max or a full page, -EINVAL, -ENOMEM).
         * Embedded: always 0.
         */
        int (*session_register)(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                uint32_t write_index);
        /**
         * session_unregister() - deactivate @write_index
         * @p: the provider
         * @s: a session of @p
         * @write_index: active and bound to @ev
         *
         * The table is updated by the broker once this succeeds. Embedded
         * reads what the client queued before; v1 has nothing to undo (writes
         * to the index still reach the event).
         * Return: 0, or negative errno (upstream: what DIAG_IOCSUNREG failed
         * with, ENOENT aside); the index stays active then.
         */
        int (*session_unregister)(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                  uint32_t write_index);

        /**
         * session_grant() - let the client register @ev itself (Authorize)
         * @p: the provider
         * @s: a session of @p
         *
         * Optional (NULL: the kernel enforces nothing, the grant is the
         * broker's bookkeeping only). Only for providers with
         * self_registration. After it, session_data_fd() is the descriptor
         * the client registers on.
         * Return: 0, or negative errno with nothing granted: what the
         * kernel's grant refused with (-EADDRINUSE the name exists with
         * other fields, -EMFILE user_events_max, -EINVAL), -ENOMEM, or what
         * deriving the client's granting handle failed with.
         */
        int (*session_grant)(struct provider *p, struct provider_session *s, struct provider_event *ev);
        /**
         * session_withdraw() - undo session_grant() of @ev
         * @p: the provider
         * @s: a session of @p
         *
         * Optional, as session_grant. The broker also withdraws every
         * grant of a session before session_free(). What the client registered of @ev
         * is cut off too (the kernel's rule: its write index fails, its
         * enable bit is cleared).
         * Return: 0, or negative errno with the grant kept (-ENOMEM).
         */
        int (*session_withdraw)(struct provider *p, struct provider_session *s, struct provider_event *ev);

        /**
         * record() - a stream of records of @events for a consumer
         * @p: the provider
         * @events: n_events (at least 1) events of this provider; the array
         *          is read during the call only
         * @owner: copied; told (closed()) when the stream goes, never when
         *         this fails
         * @n_events: how many @events
         *
         * Return: the consumer's descriptor (uebroker-record.h), owned by
         * the caller; or negative errno with no stream: -EINVAL (no events,
         * too many), -EUSERS when it has all the streams it can serve
         * (max_record_streams), -EOPNOTSUPP if this provider leaves
         * recording to the kernel's tools (none of today's), -ENOMEM, or what
         * creating the stream's socket pair (kernel providers: its tracefs
         * instance) failed with.
         */
        int (*record)(struct provider *p, struct provider_event *const *events, size_t n_events,
                      const struct provider_stream_owner *owner);
        /**
         * record_matching() - record(), and every event that matches later
         * @events: those that match @patterns now (maybe none); read during
         *          the call only
         * @patterns: 1..EVENT_PATTERNS_MAX (event-pattern.h); copied
         * @n_events: how many @events
         * @n_patterns: how many @patterns
         * @owner: who the stream is charged to, or NULL (copied)
         *
         * Optional (NULL: RecordMatching is not supported). Each event added
         * later (event_add) whose name matches one of @patterns joins the
         * stream.
         * Return: as record(); -EINVAL also for no pattern or too many.
         */
        int (*record_matching)(struct provider *p, struct provider_event *const *events, size_t n_events,
                               const char *const *patterns, size_t n_patterns,
                               const struct provider_stream_owner *owner);
        /**
         * record_kernel_pages() - record_matching(), the stream carrying
         * the kernel's ring-buffer pages with the header and format files
         * that describe them instead of one record per event
         * (uebroker-record.h, RecordKernelPages)
         * @p: the provider
         * @events: the events to record (the broker's, read during the call)
         * @n_events: how many @events
         * @patterns: glob patterns (copied)
         * @n_patterns: how many @patterns
         * @owner: who the stream is charged to, or NULL (copied)
         *
         * Optional (NULL: the provider has no kernel ring buffer, as the
         * embedded one). Return: as record_matching().
         */
        int (*record_kernel_pages)(struct provider *p, struct provider_event *const *events, size_t n_events,
                                   const char *const *patterns, size_t n_patterns,
                                   const struct provider_stream_owner *owner);

        /**
         * counters() - the data path's counters
         * @p: the provider
         * @ret: the caller's, filled in
         *
         * Optional: NULL when the daemon is not on the data path (kernel
         * providers). No errors.
         */
        void (*counters)(struct provider *p, struct provider_counters *ret);

        /**
         * session_ring() - a shared-memory ring for the session (ring.h)
         * @p: the provider
         * @s: a session of @p
         * @requested: data bytes the client asked for, rounded up to a power
         *             of two within RING_DATA_MIN..RING_DATA_MAX
         * @max_bytes: what the ring may map, header included, as the broker
         *             charged it to the session's uid (user-charges.h); the
         *             ring shrinks to fit
         * @ret_size: set to the data size granted
         * @ret_mapped: set to the bytes mapped
         *
         * Optional (NULL: the provider has none). The ring is the session's
         * until session_ring_close() or session_free().
         * Return: its memfd, the caller's to hand out and close; or negative
         * errno with no ring: -EBUSY when the session has one, -ENOSPC when
         * even the smallest ring exceeds @max_bytes, or what creating,
         * sealing or mapping the memfd failed with (-ENOMEM, -EMFILE).
         */
        int (*session_ring)(struct provider *p, struct provider_session *s, uint32_t requested, uint64_t max_bytes,
                            uint32_t *ret_size, uint64_t *ret_mapped);
        /**
         * session_ring_close() - read the session's ring one last time, unmap it
         * @p: the provider
         * @s: a session of @p
         *
         * Reads what it holds committed, then unmaps it: the client's later
         * ring writes are not read (it asks for a new ring when it registers
         * again). Nothing without a ring. NULL when session_ring is. No
         * errors.
         */
        void (*session_ring_close)(struct provider *p, struct provider_session *s);
};

extern const struct provider_ops embedded_provider_ops;
extern const struct provider_ops upstream_provider_ops;
extern const struct provider_ops v1_provider_ops;

/* Providers in order of preference for --provider=auto, NULL-terminated. */
extern const struct provider_ops *const provider_table[];

/**
 * provider_find() - the provider called @name
 * @name: not NULL
 *
 * Return: its static ops, or NULL if there is none (no other error).
 * Threads: any; it reads constant tables only.
 */
const struct provider_ops *provider_find(const char *name);

/**
 * provider_choose_auto() - --provider=auto: the first usable provider
 * @settings: passed to each probe(); may be NULL
 * @ret: set to the static ops of the first provider in provider_table[]
 *       whose probe() says 1
 *
 * Logs at info why it chose it and why it passed over the others (a probe
 * that fails counts as not usable).
 * Return: 0, or -ENODEV (logged as an error) when none is usable.
 * Threads: the daemon's, at start-up.
 */
int provider_choose_auto(const struct provider_settings *settings, const struct provider_ops **ret);

/**
 * provider_names() - the names --provider= takes, for messages
 *
 * Return: "auto, upstream, v1, embedded" (from provider_table[]), a static
 * buffer built at the first call: do not free it. No errors.
 * Threads: the first call is not thread-safe (the daemon makes it on its
 * one thread); later calls only read.
 */
const char *provider_names(void);
