/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The embedded provider's record streams (Record()): each valid record of
 * the chosen events is packed into the recorder's next message
 * (record-stream.h), sent when it is full and after every batch the data
 * path read. A consumer whose socket is full holds the data path up for
 * at most EMBEDDED_STALL_MAX_USEC (writers see EAGAIN meanwhile); after
 * that it loses records, counted in its stream and in the provider's
 * counters, until its message went out.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cleanup.h"
#include "embedded-internal.h"
#include "fd-util.h"

/* Closes the stream and frees @r; its events and the list are the
 * caller's business. */
static void recorder_release(struct recorder *r) {
        sd_event_source_disable_unref(r->io);
        safe_close(r->fd);
        free(r->events);
        free(r->batch.data);
        free(r);
}

/* Reading the data sockets stops while a recorder stalls: sessions that
 * wake meanwhile switch themselves off here, and go on when it is over. */
void session_pause(struct provider_session *s) {
        struct provider *p = s->provider;

        if (s->paused)
                return;
        (void) sd_event_source_set_enabled(s->io, SD_EVENT_OFF);
        s->paused = true;
        s->paused_prev = NULL;
        s->paused_next = p->paused;
        if (p->paused)
                p->paused->paused_prev = s;
        p->paused = s;
}

void session_unpause(struct provider_session *s) {
        struct provider *p = s->provider;

        if (!s->paused)
                return;
        if (s->paused_prev)
                s->paused_prev->paused_next = s->paused_next;
        else
                p->paused = s->paused_next;
        if (s->paused_next)
                s->paused_next->paused_prev = s->paused_prev;
        s->paused = false;
        (void) sd_event_source_set_enabled(s->io, SD_EVENT_ON);
        session_ring_poll(s);
}

static void recorder_stall_end(struct recorder *r, bool slow) {
        struct provider *p = r->provider;

        if (!r->stalled)
                return;
        r->stalled = false;
        r->slow = slow;
        if (--p->n_stalled > 0)
                return;
        (void) sd_event_source_set_enabled(p->stall_timer, SD_EVENT_OFF);
        while (p->paused)
                session_unpause(p->paused);
}

static int stall_timer_fired(sd_event_source *source, uint64_t usec, void *userdata) {
        struct provider *p = userdata;
        uint64_t next = UINT64_MAX;

        for (struct recorder *r = p->recorders; r; r = r->next) {
                if (!r->stalled)
                        continue;
                if (r->stalled_since_usec + EMBEDDED_STALL_MAX_USEC <= usec) {
                        log_debug("A record stream has not been read for %llu ms; it loses records from now on.",
                                  (unsigned long long) (EMBEDDED_STALL_MAX_USEC / 1000));
                        recorder_stall_end(r, true);
                } else if (r->stalled_since_usec + EMBEDDED_STALL_MAX_USEC < next)
                        next = r->stalled_since_usec + EMBEDDED_STALL_MAX_USEC;
        }
        if (next != UINT64_MAX) {
                (void) sd_event_source_set_time(source, next);
                (void) sd_event_source_set_enabled(source, SD_EVENT_ONESHOT);
        }
        return 0;
}

static void recorder_stall_begin(struct recorder *r) {
        struct provider *p = r->provider;
        uint64_t now;

        if (r->stalled || r->slow || sd_event_now(p->event, CLOCK_MONOTONIC, &now) < 0)
                return;
        r->stalled = true;
        r->stalled_since_usec = now;
        if (p->n_stalled++ > 0)
                return;
        (void) sd_event_source_set_time(p->stall_timer, now + EMBEDDED_STALL_MAX_USEC);
        (void) sd_event_source_set_enabled(p->stall_timer, SD_EVENT_ONESHOT);
}

static void recorder_free(struct recorder *r) {
        struct provider *p = r->provider;

        for (size_t i = 0; i < r->n_events; i++) {
                r->events[i]->n_recorders--;
                embedded_status_update(p, r->events[i]);
        }
        if (r->prev)
                r->prev->next = r->next;
        else
                p->recorders = r->next;
        if (r->next)
                r->next->prev = r->prev;
        p->n_recorders--;
        /* What was packed but never sent is lost with the stream. */
        p->lost += r->batch_records;
        recorder_stall_end(r, false);
        recorder_release(r);
}

/* Sends the packed message. -EAGAIN while the consumer's socket is full:
 * the message stays packed and EPOLLOUT sends it. Any other error (the
 * consumer is gone; EPOLLHUP frees it) counts its records as lost. */
static int recorder_flush(struct recorder *r) {
        ssize_t n;

        if (r->batch.len == 0)
                return 0;
        n = send(r->fd, r->batch.data, r->batch.len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
                (void) sd_event_source_set_io_events(r->io, EPOLLOUT);
                recorder_stall_begin(r);
                return -EAGAIN;
        }
        recorder_stall_end(r, false);
        if (n < 0)
                r->provider->lost += r->batch_records;
        else
                r->provider->recorded += r->batch_records;
        r->batch.len = 0;
        r->batch_records = 0;
        (void) sd_event_source_set_io_events(r->io, r->lost > 0 ? EPOLLOUT : 0);
        return n < 0 ? -errno : 0;
}

/* Packs one record, sending the message first when it is full. A record
 * that finds both the message and the consumer's socket full is lost, and
 * counted: the count goes into the stream where the records went missing. */
void recorder_add(struct recorder *r, const struct record_header *h, const char *name, size_t name_len,
                         const void *payload, size_t payload_len) {
        const struct record_header lost = { .flags = RECORD_FLAG_LOST, .lost_count = r->lost };
        int ret;

        if (r->lost > 0) {
                ret = record_batch_append(&r->batch, &lost, NULL, 0, NULL, 0);
                if (ret == -ENOBUFS && recorder_flush(r) >= 0)
                        ret = record_batch_append(&r->batch, &lost, NULL, 0, NULL, 0);
                if (ret < 0)
                        goto lost;
                r->lost = 0;
        }
        ret = record_batch_append(&r->batch, h, name, name_len, payload, payload_len);
        if (ret == -ENOBUFS && recorder_flush(r) >= 0)
                ret = record_batch_append(&r->batch, h, name, name_len, payload, payload_len);
        if (ret < 0)
                goto lost;
        r->batch_records++;
        return;

lost:
        r->lost++;
        r->provider->lost++;
        /* Tell the consumer as soon as it has room again. */
        (void) sd_event_source_set_io_events(r->io, EPOLLOUT);
}

/* Sends what the recorders packed: after each batch read from a session,
 * so records wait for no timer. */
void recorders_flush(struct provider *p) {
        for (struct recorder *r = p->recorders; r; r = r->next)
                (void) recorder_flush(r);
}

static int recorder_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct recorder *r = userdata;
        const struct record_header lost = { .flags = RECORD_FLAG_LOST };

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("Record stream closed by its consumer.");
                recorder_free(r);
                return 0;
        }
        if (!(revents & EPOLLOUT) || recorder_flush(r) < 0)
                return 0;
        /* Room again: the notice of what was lost meanwhile goes out now,
         * not with the next record, which may be long in coming. */
        if (r->lost > 0) {
                struct record_header notice = lost;

                notice.lost_count = r->lost;
                if (record_batch_append(&r->batch, &notice, NULL, 0, NULL, 0) >= 0) {
                        r->lost = 0;
                        (void) recorder_flush(r);
                }
        }
        return 0;
}

static void recorder_releasep(struct recorder **r) {
        if (*r)
                recorder_release(*r);
}

int embedded_record(struct provider *p, struct provider_event *const *events, size_t n_events) {
        _cleanup_(recorder_releasep) struct recorder *r = NULL;
        _cleanup_close_ int consumer_fd = -EBADF;
        int fds[2], sndbuf = EMBEDDED_RECORD_SNDBUF, ret;

        if (n_events == 0 || n_events > STATUS_INDEX_MAX)
                return -EINVAL;
        if (p->n_recorders >= EMBEDDED_RECORDERS_MAX)
                return -EUSERS;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->provider = p;
        r->fd = -EBADF;
        r->events = calloc(n_events, sizeof(*r->events));
        if (!r->events)
                return -ENOMEM;
        r->batch.data = malloc(RECORD_STREAM_MESSAGE_MAX);
        if (!r->batch.data)
                return -ENOMEM;
        r->batch.capacity = RECORD_STREAM_MESSAGE_MAX;
        for (size_t i = 0; i < n_events; i++) {
                uint32_t idx = events[i]->status_index;

                if (recorder_wants(r, idx))
                        continue;       /* duplicate name */
                r->wanted[idx / 8] |= (uint8_t) (1u << (idx % 8));
                r->events[r->n_events++] = events[i];
        }

        ret = socketpair_seqpacket(fds);
        if (ret < 0)
                return ret;
        r->fd = fds[0];
        consumer_fd = fds[1];
        ret = fd_set_nonblock(r->fd, true);
        if (ret < 0)
                return ret;
        /* A larger buffer absorbs bursts; the kernel caps it at wmem_max. */
        (void) setsockopt(r->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        /* We never read from the consumer; it is not allowed to make us. */
        (void) shutdown(r->fd, SHUT_RD);

        ret = sd_event_add_io(p->event, &r->io, r->fd, 0, recorder_io, r);
        if (ret < 0)
                return ret;
        (void) sd_event_source_set_description(r->io, "embedded-recorder");
        (void) sd_event_source_set_priority(r->io, EMBEDDED_DATA_PRIORITY);

        for (size_t i = 0; i < r->n_events; i++) {
                r->events[i]->n_recorders++;
                embedded_status_update(p, r->events[i]);
        }
        r->next = p->recorders;
        if (r->next)
                r->next->prev = r;
        p->recorders = r;
        p->n_recorders++;
        r = NULL;
        ret = consumer_fd;
        consumer_fd = -EBADF;
        return ret;
}

int embedded_recording_init(struct provider *p) {
        int r;

        r = sd_event_add_time(p->event, &p->stall_timer, CLOCK_MONOTONIC, UINT64_MAX, 0, stall_timer_fired, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->stall_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_description(p->stall_timer, "embedded-recorder-stall");
        return 0;
}

void embedded_recording_done(struct provider *p) {
        /* The broker frees sessions and events first, so a recorder's
         * events are gone: release the recorders without touching them. */
        while (p->recorders) {
                struct recorder *r = p->recorders;

                p->recorders = r->next;
                p->lost += r->batch_records;    /* packed, never sent */
                recorder_release(r);
        }
        p->stall_timer = sd_event_source_disable_unref(p->stall_timer);
}
