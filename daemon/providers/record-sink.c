/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "record-sink.h"
#include "macro.h"

struct record_sink {
        int fd;
        sd_event_source *io;
        struct record_batch batch;      /* the next message */
        uint64_t batch_records;         /* records in it, LOST notices not counted */
        bool waiting;                   /* the message waits for room */
        uint64_t unreported;            /* lost, not yet told to the consumer */
        uint64_t sent;
        uint64_t lost;
        uint64_t bytes_sent;            /* until the consumer is seen reading */
        bool grown;                     /* it reads: the large buffer */
        void (*on_gone)(void *userdata);
        void (*on_drained)(void *userdata);
        void *userdata;
};

struct record_sink *record_sink_free(struct record_sink *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->io);
        safe_close(s->fd);
        free(s->batch.data);
        free(s);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct record_sink *, record_sink_free);

void record_sink_on_drained(struct record_sink *s, void (*on_drained)(void *userdata)) {
        s->on_drained = on_drained;
}

void record_sink_count_lost(struct record_sink *s, uint64_t n) {
        assert(s);
        if (n == 0)
                return;
        s->unreported += n;
        s->lost += n;
        /* Tell the consumer as soon as it has room again. */
        (void) sd_event_source_set_io_events(s->io, EPOLLOUT);
}

/* The notice of what was lost, packed where the records went missing. */
static int pack_lost_notice(struct record_sink *s) {
        const struct ueb_record_header h = { .flags = UEB_RECORD_FLAG_LOST, .lost_count = s->unreported };
        int r;

        if (s->unreported == 0)
                return 0;
        r = record_batch_append(&s->batch, &h, NULL, 0, NULL, 0);
        if (r < 0)
                return r;
        s->unreported = 0;
        return 0;
}

/* Once the socket holds less than was ever sent on it, the consumer has
 * read: it gets the large buffer (one ioctl per message until then). */
static void sink_grow_if_read(struct record_sink *s) {
        int queued = 0, sndbuf = RECORD_SINK_SNDBUF;

        if (s->grown || ioctl(s->fd, SIOCOUTQ, &queued) < 0 || (uint64_t) queued >= s->bytes_sent)
                return;
        s->grown = true;
        (void) setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
}

int record_sink_flush(struct record_sink *s) {
        ssize_t n;

        assert(s);
        if (s->batch.len == 0)
                return 0;
        n = send(s->fd, s->batch.data, s->batch.len, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0 && errno == EAGAIN) {
                s->waiting = true;
                (void) sd_event_source_set_io_events(s->io, EPOLLOUT);
                return -EAGAIN;
        }
        if (n < 0) {
                /* Gone: EPOLLHUP tells the owner. Records for a consumer
                 * that closed its end are nobody's loss (the broker learns
                 * of the close a moment later than it happened). */
                n = -errno;
                if (n != -EPIPE && n != -ECONNRESET && n != -ECONNREFUSED)
                        s->lost += s->batch_records;
        } else {
                s->sent += s->batch_records;
                s->bytes_sent += (uint64_t) n;
                n = 0;
                sink_grow_if_read(s);
        }
        s->batch.len = 0;
        s->batch_records = 0;
        s->waiting = false;
        (void) sd_event_source_set_io_events(s->io, s->unreported > 0 ? EPOLLOUT : 0);
        return (int) n;
}

static int sink_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct record_sink *s = ASSERT_PTR(userdata);
        bool was_waiting = s->waiting;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("Record stream closed by its consumer.");
                /* Nothing more to send: a closed consumer must not wake us
                 * again before the owner frees the sink. */
                (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                s->on_gone(s->userdata);
                return 0;
        }
        if (!(revents & EPOLLOUT) || record_sink_flush(s) < 0)
                return 0;
        /* Room again: what was lost meanwhile is told now, not with the
         * next record, which may be long in coming. */
        if (pack_lost_notice(s) >= 0)
                (void) record_sink_flush(s);
        if (s->batch.len == 0 && s->unreported == 0)
                (void) sd_event_source_set_io_events(source, 0);
        if (was_waiting && !s->waiting && s->on_drained)
                s->on_drained(s->userdata);
        return 0;
}

int record_sink_new(sd_event *event, int64_t priority, const char *description,
                    void (*on_gone)(void *userdata), void *userdata, struct record_sink **ret, int *ret_consumer_fd) {
        _cleanup_(record_sink_freep) struct record_sink *s = NULL;
        int fds[2], sndbuf = RECORD_SINK_SNDBUF_UNREAD, r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = -EBADF;
        s->on_gone = on_gone;
        s->userdata = userdata;
        s->batch.data = malloc(UEB_RECORD_MESSAGE_MAX);
        if (!s->batch.data)
                return -ENOMEM;
        s->batch.capacity = UEB_RECORD_MESSAGE_MAX;

        r = socketpair_seqpacket(fds, 0);
        if (r < 0)
                return r;
        s->fd = fds[0];
        r = fd_set_nonblock(s->fd, true);
        if (r < 0) {
                safe_close(fds[1]);
                return r;
        }
        (void) setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
        /* We never read from the consumer; it is not allowed to make us. */
        (void) shutdown(s->fd, SHUT_RD);

        r = sd_event_add_io(event, &s->io, s->fd, 0, sink_io, s);
        if (r < 0) {
                safe_close(fds[1]);
                return r;
        }
        (void) sd_event_source_set_description(s->io, description);
        (void) sd_event_source_set_priority(s->io, priority);

        *ret = TAKE_PTR(s);
        *ret_consumer_fd = fds[1];
        return 0;
}

/* Sends the full message if the consumer may have room: not while it is
 * known to wait (EPOLLOUT tells us when it read), or every record lost
 * meanwhile would cost a send() that fails (a recorder that does not read
 * cost the broker a core, and a writer of another uid two thirds of its
 * records: test-hostile's test_e6). */
static int flush_unless_waiting(struct record_sink *s) {
        return s->waiting ? -EAGAIN : record_sink_flush(s);
}

/* Packs a record after the LOST notice due before it; a full message is
 * sent first, if the consumer has room. -ENOBUFS: no room. */
static int pack(struct record_sink *s, const struct ueb_record_header *h, const char *name, size_t name_len,
                const void *payload, size_t payload_len) {
        int r;

        /* The notice first, so that it stands where the records went
         * missing. */
        r = pack_lost_notice(s);
        if (r == -ENOBUFS && flush_unless_waiting(s) >= 0)
                r = pack_lost_notice(s);
        if (r >= 0) {
                r = record_batch_append(&s->batch, h, name, name_len, payload, payload_len);
                if (r == -ENOBUFS && flush_unless_waiting(s) >= 0)
                        r = record_batch_append(&s->batch, h, name, name_len, payload, payload_len);
        }
        return r;
}

bool record_sink_send(struct record_sink *s, const struct ueb_record_header *h, const char *name, size_t name_len,
                      const void *payload, size_t payload_len) {
        assert(s);
        if (pack(s, h, name, name_len, payload, payload_len) < 0) {
                record_sink_count_lost(s, 1);
                return false;
        }
        s->batch_records++;
        /* Sent at three quarters, not when the next record no longer
         * fits: a consumer without room is then known to be waiting while
         * the message still has room, and a reader that stops at that
         * (embedded-ring.c) loses nothing. */
        if (!s->waiting && s->batch.len >= s->batch.capacity / 4 * 3)
                (void) record_sink_flush(s);
        return true;
}

int record_sink_send_description(struct record_sink *s, const struct ueb_record_header *h, const char *name,
                                 size_t name_len, const void *payload, size_t payload_len) {
        int r = pack(ASSERT_PTR(s), h, name, name_len, payload, payload_len);

        return r == -ENOBUFS ? -EAGAIN : r;
}

bool record_sink_waiting(const struct record_sink *s) {
        assert(s);
        return s->waiting;
}

uint64_t record_sink_sent(const struct record_sink *s) {
        assert(s);
        return s->sent;
}

uint64_t record_sink_lost(const struct record_sink *s) {
        assert(s);
        return s->lost;
}

uint64_t record_sink_unsent(const struct record_sink *s) {
        assert(s);
        return s->batch_records;
}
