/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The embedded provider's record streams (Record()): each valid record of
 * the chosen events goes to the recorder's sink (record-sink.h: packed
 * many per message), flushed after every batch the data path read. A
 * consumer whose socket is full loses the records meant for it, counted in
 * its stream (a LOST notice where they went missing) and in the
 * provider's counters, until its message went out. It never holds the
 * data path up: writers and the other recorders lose nothing for it. Only
 * when every recorder of a session's events waits for its consumer does
 * the ring reader leave that session's ring (embedded-ring.c): a record
 * read then would be lost by all of them.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "embedded-internal.h"
#include "event-pattern.h"
#include "fd-util.h"
#include "macro.h"
#include "record-sink.h"

void embedded_status_update(struct provider *p, struct provider_event *ev) {
        assert(p);
        /* Bit 7: "any other consumer" -- our recorders. */
        p->page[ev->status_index] = ev->n_recorders > 0 ? EVENT_STATUS_OTHER : 0;
}

/* Room in @ev's recorders for one more, so that adding it cannot fail
 * later (recorder_open() reserves before it commits). */
static int event_reserve_recorder(struct provider_event *ev) {
        return ARRAY_RESERVE(ev->recorders, ev->n_recorders_allocated, ev->n_recorders + 1u);
}

/* Counts @r as a recorder of @ev (room reserved). */
static void event_add_recorder(struct provider_event *ev, struct recorder *r) {
        assert(ev->n_recorders < ev->n_recorders_allocated);
        ev->recorders[ev->n_recorders++] = r;
}

static void event_remove_recorder(struct provider_event *ev, struct recorder *r) {
        for (unsigned i = 0; i < ev->n_recorders; i++)
                if (ev->recorders[i] == r) {
                        ev->recorders[i] = ev->recorders[--ev->n_recorders];
                        return;
                }
        assert(!"a recorder of an event is in the event's list");
}

void embedded_event_recorders_free(struct provider_event *ev) {
        assert(ev->n_recorders == 0);
        free(ev->recorders);
        ev->recorders = NULL;
        ev->n_recorders_allocated = 0;
}

/* Recorders came or went: the provider's hook (embedded-ring.c sets it,
 * the rings' polling follows what is recorded). */
static void recorders_changed(struct provider *p) {
        p->recorders_generation++;
        if (p->recorders_changed)
                p->recorders_changed(p);
}

/* Closes the stream and frees @r; its events and the list are the
 * caller's business. */
static void recorder_release(struct recorder *r) {
        record_sink_free(r->sink);
        provider_stream_owner_closed(&r->owner);
        free(r->events);
        event_patterns_free(r->patterns, r->n_patterns);
        event_patterns_free(r->names, r->n_names);
        free(r);
}

/* The sink's counts move to the provider's when it goes; what was packed
 * and never sent is lost. */
static void recorder_retire_counts(struct recorder *r) {
        struct provider *p = r->provider;

        p->recorded += record_sink_sent(r->sink);
        p->lost += record_sink_lost(r->sink) + record_sink_unsent(r->sink);
}

void embedded_recording_counts(struct provider *p, uint64_t *ret_recorded, uint64_t *ret_lost) {
        assert(p);
        *ret_recorded = p->recorded;
        *ret_lost = p->lost;
        LIST_FOREACH(recorders, r, p->recorders) {
                *ret_recorded += record_sink_sent(r->sink);
                *ret_lost += record_sink_lost(r->sink);
        }
}

static void recorder_free(struct recorder *r) {
        struct provider *p = r->provider;

        for (size_t i = 0; i < r->n_events; i++) {
                event_remove_recorder(r->events[i], r);
                embedded_status_update(p, r->events[i]);
        }
        LIST_REMOVE(recorders, p->recorders, r);
        p->n_recorders--;
        recorder_retire_counts(r);
        recorder_release(r);
        recorders_changed(p);
}

/* @r's stream had no room before a send and has now, whichever send found
 * it (EPOLLOUT's, a flush after a read, a full message's): the rings left
 * unread for it are read again. */
static void recorder_check_room(struct recorder *r, bool was_waiting) {
        struct provider *p = r->provider;

        if (!was_waiting || record_sink_waiting(r->sink))
                return;
        p->recorders_generation++;
        if (p->recorder_drained)
                p->recorder_drained(p);
}

/* Sends what @r packed; a consumer without room keeps its message until
 * EPOLLOUT and loses what does not fit meanwhile. */
static int recorder_flush(struct recorder *r) {
        bool was_waiting = record_sink_waiting(r->sink);
        int ret = record_sink_flush(r->sink);

        recorder_check_room(r, was_waiting);
        return ret;
}

bool embedded_recorder_add(struct recorder *r, const struct ueb_record_header *h, const char *name, size_t name_len,
                  const void *payload, size_t payload_len) {
        bool was_waiting;

        assert(r);
        was_waiting = record_sink_waiting(r->sink);
        (void) record_sink_send(r->sink, h, name, name_len, payload, payload_len);
        recorder_check_room(r, was_waiting);
        return record_sink_waiting(r->sink);
}

bool embedded_recorder_waiting(const struct recorder *r) {
        assert(r);
        return record_sink_waiting(r->sink);
}

/* Sends what the recorders packed: after each batch read from a session,
 * so records wait for no timer. */
void embedded_recorders_flush(struct provider *p) {
        assert(p);
        LIST_FOREACH(recorders, r, p->recorders)
                (void) recorder_flush(r);
}

static void recorder_gone(void *userdata) {
        recorder_free(userdata);
}

/* EPOLLOUT sent the message that waited: the stream has room again. */
static void recorder_drained(void *userdata) {
        recorder_check_room(userdata, true);
}

static void recorder_releasep(struct recorder **r) {
        if (*r)
                recorder_release(*r);
}

/* Adds @ev to @r's events (once); counts @r as its recorder when
 * @count_recorder, else only makes room for it in @ev's recorders. */
static int recorder_add_event(struct recorder *r, struct provider_event *ev, bool count_recorder) {
        uint32_t idx = ev->status_index;
        int ret;

        if (recorder_wants(r, idx))
                return 0;       /* named twice, or matched by two patterns */
        ret = event_reserve_recorder(ev);
        if (ret < 0)
                return ret;
        ret = ARRAY_RESERVE(r->events, r->n_allocated, r->n_events + 1);
        if (ret < 0)
                return ret;
        r->wanted[idx / 8] |= (uint8_t) (1u << (idx % 8));
        r->events[r->n_events++] = ev;
        if (count_recorder)
                event_add_recorder(ev, r);
        return 0;
}

/* A new event joins the recordings whose patterns match its name, and
 * those that named it (names have no wildcards: each matches itself). */
void embedded_recorders_follow(struct provider *p, struct provider_event *ev) {
        assert(p);
        /* Who records what changes: rings held for full recorders are
         * looked at again. */
        p->recorders_generation++;
        LIST_FOREACH(recorders, r, p->recorders) {
                if (!event_patterns_match((const char *const *) r->patterns, r->n_patterns, ev->def->name) &&
                    !event_patterns_match((const char *const *) r->names, r->n_names, ev->def->name))
                        continue;
                if (recorder_add_event(r, ev, true) < 0)
                        log_warning("Out of memory: new event %s is not recorded by a recording matching it.",
                                    ev->def->name);
        }
}

/* Takes @ev out of every recording that holds it. */
void embedded_recorders_forget(struct provider *p, struct provider_event *ev) {
        uint32_t idx = ev->status_index;

        assert(p);
        p->recorders_generation++;
        while (ev->n_recorders > 0) {
                struct recorder *r = ev->recorders[--ev->n_recorders];

                for (size_t i = 0; i < r->n_events; i++)
                        if (r->events[i] == ev) {
                                r->events[i] = r->events[--r->n_events];
                                break;
                        }
                r->wanted[idx / 8] &= (uint8_t) ~(1u << (idx % 8));
        }
}

static int recorder_open(struct provider *p, struct provider_event *const *events, size_t n_events,
                         const char *const *patterns, size_t n_patterns,
                         const struct provider_stream_owner *owner) {
        _cleanup_(recorder_releasep) struct recorder *r = NULL;
        _cleanup_close_ int consumer_fd = -EBADF;
        int ret;

        if (n_events > STATUS_INDEX_MAX || n_patterns > EVENT_PATTERNS_MAX || (n_events == 0 && n_patterns == 0))
                return -EINVAL;
        if (p->n_recorders >= EMBEDDED_RECORDERS_MAX)
                return -EUSERS;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->provider = p;
        for (size_t i = 0; i < n_events; i++) {
                ret = recorder_add_event(r, events[i], false);
                if (ret < 0)
                        return ret;
        }
        if (n_events > 0) {
                _cleanup_free_ const char **names = calloc(n_events, sizeof(*names));

                if (!names)
                        return -ENOMEM;
                for (size_t i = 0; i < n_events; i++)
                        names[i] = events[i]->def->name;
                r->names = event_patterns_copy(names, n_events);
                if (!r->names)
                        return -ENOMEM;
                r->n_names = n_events;
        }
        if (n_patterns > 0) {
                r->patterns = event_patterns_copy(patterns, n_patterns);
                if (!r->patterns)
                        return -ENOMEM;
                r->n_patterns = n_patterns;
        }

        ret = record_sink_new(p->event, EMBEDDED_DATA_PRIORITY, "embedded-recorder", recorder_gone, r, &r->sink,
                              &consumer_fd);
        if (ret < 0)
                return ret;
        record_sink_on_drained(r->sink, recorder_drained);

        for (size_t i = 0; i < r->n_events; i++) {
                event_add_recorder(r->events[i], r);    /* room reserved by recorder_add_event() */
                embedded_status_update(p, r->events[i]);
        }
        LIST_PREPEND(recorders, p->recorders, r);
        p->n_recorders++;
        recorders_changed(p);
        if (owner)
                r->owner = *owner;
        r = NULL;
        return TAKE_FD(consumer_fd);
}

int embedded_record(struct provider *p, struct provider_event *const *events, size_t n_events,
                    const struct provider_stream_owner *owner) {
        assert(p);
        if (n_events == 0)
                return -EINVAL;
        return recorder_open(p, events, n_events, NULL, 0, owner);
}

int embedded_record_matching(struct provider *p, struct provider_event *const *events, size_t n_events,
                             const char *const *patterns, size_t n_patterns,
                             const struct provider_stream_owner *owner) {
        assert(p);
        if (n_patterns == 0)
                return -EINVAL;
        return recorder_open(p, events, n_events, patterns, n_patterns, owner);
}

int embedded_recording_init(struct provider *p) {
        assert(p);
        return 0;
}

void embedded_recording_done(struct provider *p) {
        assert(p);
        /* The broker frees sessions and events first, so a recorder's
         * events are gone: release the recorders without touching them. */
        while (p->recorders) {
                struct recorder *r = p->recorders;

                LIST_REMOVE(recorders, p->recorders, r);
                recorder_retire_counts(r);
                recorder_release(r);
        }
}
