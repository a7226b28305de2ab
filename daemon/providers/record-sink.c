/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "record-sink.h"

struct record_sink {
        int fd;
        sd_event_source *io;
        uint64_t unreported;    /* lost, not yet told to the consumer */
        uint64_t sent;
        uint64_t lost;
        void (*on_gone)(void *userdata);
        void *userdata;
};

struct record_sink *record_sink_free(struct record_sink *s) {
        if (!s)
                return NULL;
        sd_event_source_disable_unref(s->io);
        safe_close(s->fd);
        free(s);
        return NULL;
}

static void record_sink_freep(struct record_sink **s) {
        *s = record_sink_free(*s);
}

static int send_lost_notice(struct record_sink *s) {
        struct ueb_record_header h = {
                .length = sizeof(h),
                .flags = UEB_RECORD_FLAG_LOST,
                .lost_count = s->unreported,
        };

        if (send(s->fd, &h, sizeof(h), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                return -errno;
        s->unreported = 0;
        /* Nothing pending any more: only wait for the consumer to close. */
        (void) sd_event_source_set_io_events(s->io, 0);
        return 0;
}

void record_sink_count_lost(struct record_sink *s, uint64_t n) {
        if (n == 0)
                return;
        s->unreported += n;
        s->lost += n;
        /* Tell the consumer as soon as it has room again. */
        (void) sd_event_source_set_io_events(s->io, EPOLLOUT);
}

static int sink_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct record_sink *s = userdata;

        if (revents & (EPOLLHUP | EPOLLERR)) {
                log_debug("Record stream closed by its consumer.");
                /* Nothing more to send: a closed consumer must not wake us
                 * again before the owner frees the sink. */
                (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                s->on_gone(s->userdata);
                return 0;
        }
        if ((revents & EPOLLOUT) && s->unreported > 0)
                (void) send_lost_notice(s);
        return 0;
}

int record_sink_new(sd_event *event, int64_t priority, const char *description,
                    void (*on_gone)(void *userdata), void *userdata, struct record_sink **ret, int *ret_consumer_fd) {
        _cleanup_(record_sink_freep) struct record_sink *s = NULL;
        int fds[2], sndbuf = RECORD_SINK_SNDBUF, r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->fd = -EBADF;
        s->on_gone = on_gone;
        s->userdata = userdata;

        r = socketpair_seqpacket(fds);
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

        *ret = s;
        s = NULL;
        *ret_consumer_fd = fds[1];
        return 0;
}

bool record_sink_send(struct record_sink *s, struct ueb_record_header *h, const char *name, size_t name_len,
                      const void *payload, size_t payload_len) {
        struct iovec iov[3] = {
                { h, sizeof(*h) },
                { (void *) name, name_len },
                { (void *) payload, payload_len },
        };
        struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 3 };

        h->length = (uint32_t) (sizeof(*h) + name_len + payload_len);
        h->name_len = (uint16_t) name_len;

        if (s->unreported > 0 && send_lost_notice(s) < 0) {
                record_sink_count_lost(s, 1);
                return false;
        }
        if (sendmsg(s->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) {
                /* EAGAIN: consumer too slow. EPIPE and friends: it is gone,
                 * EPOLLHUP tells the owner; count either way. */
                record_sink_count_lost(s, 1);
                return false;
        }
        s->sent++;
        return true;
}

uint64_t record_sink_sent(const struct record_sink *s) {
        return s->sent;
}

uint64_t record_sink_lost(const struct record_sink *s) {
        return s->lost;
}
