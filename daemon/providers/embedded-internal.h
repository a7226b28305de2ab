/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The embedded provider's pieces (see embedded.c for the whole):
 *   embedded.c           the provider, its events and status page, sessions
 *                        and their data sockets (the data path)
 *   embedded-ring.c      the shared-memory rings (OpenRing): reading them,
 *                        when to wake and when to poll
 *   embedded-route.c     a record read by either: counted, checked, handed
 *                        to the recorders that want it
 *   embedded-recorder.c  record streams and the status bytes they set:
 *                        packing records into messages; a full stream loses
 *                        its own records, never holds the data path up
 * Each calls only the files below it in this list.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <systemd/sd-event.h>

#include "list.h"
#include "log.h"
#include "provider.h"
#include "record-stream.h"
#include "ring.h"
#include "status-text.h"

/* A record is its u32 write index plus a payload; dynamic fields address at
 * most 64 KiB, so anything longer is useless and dropped. */
#define EMBEDDED_PAYLOAD_MAX DATA_PAYLOAD_MAX
#define EMBEDDED_MESSAGE_MAX (sizeof(uint32_t) + EMBEDDED_PAYLOAD_MAX)
/* Messages one recvmmsg() reads, into slots of EMBEDDED_SLOT_SIZE: one
 * mapping per daemon, whose pages are touched only as far as messages
 * reach (one page per slot for small records). */
#define EMBEDDED_READ_BATCH 64u
#define EMBEDDED_SLOT_SIZE (EMBEDDED_MESSAGE_MAX + 4096u - EMBEDDED_MESSAGE_MAX % 4096u)
/* Messages read from one session per wakeup, so one busy writer cannot
 * starve the others or the bus. */
#define EMBEDDED_READS_PER_WAKEUP 64u
/* The bus before the data: data sockets and record streams are served at a
 * lower sd-event priority than the bus connection (attached at
 * SD_EVENT_PRIORITY_NORMAL), so a record flood delays no method call; and
 * above SD_EVENT_PRIORITY_IDLE, where polkit.c drops unclaimed answers. */
#define EMBEDDED_DATA_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)
#define EMBEDDED_RECORDERS_MAX 64u

struct provider_event {
        const struct event_def *def;
        uint16_t name_len;      /* strlen(def->name), for each record's header */
        uint32_t status_index;
        /* Its recorders: a record walks these, not every recorder of the
         * broker (other users' streams cost its delivery nothing). */
        struct recorder **recorders;
        unsigned n_recorders;
        unsigned n_recorders_allocated;
};

struct recorder {
        struct provider *provider;
        struct record_sink *sink;
        /* Which status indexes this recorder wants: one bit each. */
        uint8_t wanted[STATUS_PAGE_SIZE / 8];
        struct provider_event **events;
        size_t n_events;
        size_t n_allocated;
        /* RecordMatching: events added later that match join. */
        char **patterns;
        size_t n_patterns;
        /* Record: the names asked for, which join again when their event
         * is created again (after an eviction or a Delete). */
        char **names;
        size_t n_names;
        struct provider_stream_owner owner;
        LIST_FIELDS(struct recorder, recorders);
};

/* What reading one uid's rings may cost the broker now (embedded-ring.c):
 * the bytes their records claim, refilled for all uids together
 * (ring-read-shares.h), shared by all the uid's rings. */
struct ring_share {
        uid_t uid;
        bool privileged;                /* not counted in the total */
        unsigned n_rings;
        uint64_t bytes;                 /* may read now */
        LIST_FIELDS(struct ring_share, shares);
};

struct provider_session {
        struct provider *provider;
        int daemon_fd;
        int client_fd;          /* kept so every Register can hand out a dup */
        sd_event_source *io;
        const struct write_indexes *indexes;    /* the broker's table: routes records */
        pid_t pid;
        uid_t uid;
        bool privileged;        /* provider_peer's */
        char *bus_name;
        uint64_t received;
        uint64_t dropped;
        /* The ring, if the client opened one: our own head and size, the
         * mapping only (its memfd is closed once handed out). */
        struct ring_reader ring;        /* .header NULL: none */
        size_t ring_map_size;
        LIST_FIELDS(struct provider_session, rings);    /* while it has a ring */
        struct ring_share *ring_share;  /* while it has a ring: its uid's */
        bool ring_sleeping;             /* polled: no, waits for its doorbell */
        /* Every recorder of the session's events waited for its consumer
         * when last looked at, in recorders_generation ring_hold_generation,
         * at ring_held_usec (CLOCK_MONOTONIC): the ring is left unread until
         * that changes, or EMBEDDED_RING_HOLD_MAX_USEC passed. */
        bool ring_held;
        uint64_t ring_hold_generation;
        uint64_t ring_held_usec;
        unsigned ring_empty_ticks;      /* ticks in a row that found it empty */
};

struct provider {
        sd_event *event;
        int page_fd;            /* read-write memfd, ours */
        int page_ro_fd;         /* read-only descriptor handed to clients */
        uint8_t *page;
        uint8_t *slots;         /* EMBEDDED_READ_BATCH slots of EMBEDDED_SLOT_SIZE */
        struct mmsghdr messages[EMBEDDED_READ_BATCH];
        struct iovec slot_iov[EMBEDDED_READ_BATCH];
        LIST_HEAD(struct recorder, recorders);
        unsigned n_recorders;
        /* Moves when a recorder comes, goes, or has room again after its
         * stream was full: what a session's ring_held was judged on. */
        uint64_t recorders_generation;
        uint8_t *ring_scratch;          /* RING_DATA_MAX: one ring record's private copy */
        size_t ring_bytes;              /* mapped for rings, every session's */
        sd_event_source *ring_timer;    /* on while rings_polled */
        LIST_HEAD(struct provider_session, rings);      /* sessions with a ring */
        LIST_HEAD(struct ring_share, ring_shares);      /* one per uid with a ring, the privileged first */
        size_t n_ring_shares;
        size_t n_ring_shares_exempt;    /* the privileged among them */
        uint64_t *ring_share_bytes;     /* the refill's copy of their allowances */
        size_t n_ring_share_bytes_allocated;
        uint64_t ring_refilled_usec;    /* CLOCK_MONOTONIC */
        bool rings_polled;              /* something records and a ring exists */
        /* Called by the recorders when one came or went (embedded-ring.c's
         * embedded_rings_update() once the rings are set up): a hook, so
         * the recorders call nothing above them. */
        void (*recorders_changed)(struct provider *p);
        /* Called when a recorder's stream that was full has room again
         * (embedded-ring.c reads the rings it left unread). */
        void (*recorder_drained)(struct provider *p);
        unsigned n_rings_awake;         /* while rings_polled: rings the ticks read */
        uint64_t ring_poll_usec;        /* the timer's next interval */
        uint64_t received;
        uint64_t dropped;
        uint64_t writer_dropped;
        uint64_t recorded;              /* by recorders already gone; */
        uint64_t lost;                  /* the others' sinks count theirs */
        struct log_ratelimit drop_ratelimit;
        /* Rings given up: a client can cause one per connection, as often
         * as it connects. */
        struct log_ratelimit ring_ratelimit;
};

/* embedded-route.c: below both readers, above the recorders. */
/* Counts a record of @s that is dropped, and why (logged when debugging). */
void embedded_session_drop(struct provider_session *s, const char *why, uint32_t write_index);
/* A record of @s for @write_index, of @payload_len bytes, before its
 * payload is looked at: counts it, and returns its event, or NULL when it
 * is dropped (counted; no such event, or too long). */
const struct provider_event *embedded_session_record_accept(struct provider_session *s, uint32_t write_index,
                                                   size_t payload_len);
/* Whether @s's events are recorded and every recorder of any of them waits
 * for its consumer (record_sink_waiting()): a record of @s read now would
 * be lost by all its recorders. Costs the recorders of the session's events,
 * up to the first that has room. */
bool embedded_session_recorders_full(const struct provider_session *s);
/* Validates what embedded_session_record_accept() took (@payload: what follows the
 * write index, a copy of our own), read at @timestamp_ns (CLOCK_REALTIME),
 * and hands it to @ev's recorders; @tid and @write_monotonic_ns are the
 * ring's, 0 from the socket. Returns true when it went to recorders and
 * every one of them now waits for its consumer (record_sink_waiting()). */
bool embedded_session_record_deliver(struct provider_session *s, const struct provider_event *ev, uint32_t write_index,
                            const uint8_t *payload, size_t payload_len, uint64_t timestamp_ns, uint32_t tid,
                            uint64_t write_monotonic_ns);

/* embedded-ring.c */
int embedded_ring_init(struct provider *p);
void embedded_ring_done(struct provider *p);
/* Opens the session's ring of about @requested data bytes: its memfd
 * (the caller's, to hand out) and in *@ret_size the data size granted. */
int embedded_session_ring(struct provider *p, struct provider_session *s, uint32_t requested, uint64_t max_bytes,
                          uint32_t *ret_size, uint64_t *ret_mapped);
/* provider_ops.session_ring_close: reads what is committed, then unmaps. */
void embedded_session_ring_close(struct provider *p, struct provider_session *s);
/* Reads the session's ring: a budget's worth, or with @all everything
 * committed now (bounded by the ring). Decides how it wakes us next. The
 * caller flushes the recorders once it has read everything of this
 * wake-up (the data socket too). */
void embedded_session_ring_read(struct provider_session *s, bool all);
void embedded_ring_unmap(struct provider_session *s);
/* Recorders or rings came or went: the ring timer runs while anything
 * records and a ring exists, and every ring's fill mark follows. */
void embedded_rings_update(struct provider *p);

/* embedded-recorder.c: the bottom; calls nothing of the files above it. */
/* The status byte of @ev from its recorders. */
void embedded_status_update(struct provider *p, struct provider_event *ev);
int embedded_recording_init(struct provider *p);
/* Frees every recorder; their events are gone already. */
void embedded_recording_done(struct provider *p);
int embedded_record(struct provider *p, struct provider_event *const *events, size_t n_events,
                    const struct provider_stream_owner *owner);
int embedded_record_matching(struct provider *p, struct provider_event *const *events, size_t n_events,
                             const char *const *patterns, size_t n_patterns,
                             const struct provider_stream_owner *owner);
/* A new event joins the recordings whose patterns match its name; an
 * event going away leaves every recording. */
void embedded_recorders_follow(struct provider *p, struct provider_event *ev);
void embedded_recorders_forget(struct provider *p, struct provider_event *ev);
/* Frees @ev's list of recorders (it has none left: after
 * embedded_recorders_forget()). */
void embedded_event_recorders_free(struct provider_event *ev);
/* Records recorded and lost over the provider's life. */
void embedded_recording_counts(struct provider *p, uint64_t *ret_recorded, uint64_t *ret_lost);

static inline bool recorder_wants(const struct recorder *r, uint32_t status_index) {
        return r->wanted[status_index / 8] & (1u << (status_index % 8));
}

/* Packs one record for @r; what cannot be sent or kept is counted lost.
 * Returns whether @r's stream now waits for its consumer. */
bool embedded_recorder_add(struct recorder *r, const struct ueb_record_header *h, const char *name, size_t name_len,
                  const void *payload, size_t payload_len);
/* Whether @r's stream waits for its consumer. */
bool embedded_recorder_waiting(const struct recorder *r);
/* Sends what the recorders packed. */
void embedded_recorders_flush(struct provider *p);
