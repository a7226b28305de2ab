/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The embedded provider: user_events in user space, for machines whose
 * kernel has none.
 *
 * Status page: one memfd page for all sessions (status indexes are global),
 * mapped read-write here, sealed so clients can only map it read-only.
 * Data file: per session an AF_UNIX SOCK_SEQPACKET pair; the client's end is
 * non-blocking (a writer sees EAGAIN instead of waiting for us), we read the
 * other end. Each message is [u32 write_index][payload]. A wakeup reads up
 * to EMBEDDED_READS_PER_WAKEUP messages of one session, EMBEDDED_READ_BATCH
 * per recvmmsg(), so the cost of a system call is shared by many records.
 * Recording: Record() hands out one end of another SEQPACKET pair; the
 * records of the chosen events go to it many per message
 * (embedded-recorder.c). A recording made with patterns (RecordMatching)
 * also takes each event added later whose name matches.
 * Rings: a client may also write into a shared-memory ring (OpenRing,
 * embedded-ring.c); its records take the same route from
 * embedded_session_record_accept() on.
 * When a session ends, what its client wrote last and is still queued is
 * read before the socket is closed.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#include "cleanup.h"
#include "data-message.h"
#include "embedded-internal.h"
#include "fd-util.h"
#include "time-util.h"
#include "macro.h"

static int embedded_probe(const struct provider_settings *settings, char **ret_reason) {
        /* memfd_create and AF_UNIX sockets are all it needs. */
        return 1;
}

static struct provider *embedded_free(struct provider *p) {
        if (!p)
                return NULL;

        embedded_recording_done(p);
        embedded_ring_done(p);

        log_info("Embedded provider: %llu records received, %llu dropped as invalid, %llu dropped by writers, "
                 "%llu recorded, %llu lost to slow consumers.",
                 (unsigned long long) p->received, (unsigned long long) p->dropped,
                 (unsigned long long) p->writer_dropped, (unsigned long long) p->recorded,
                 (unsigned long long) p->lost);

        if (p->page)
                munmap(p->page, STATUS_PAGE_SIZE);
        safe_close(p->page_ro_fd);
        safe_close(p->page_fd);
        if (p->slots)
                munmap(p->slots, (size_t) EMBEDDED_READ_BATCH * EMBEDDED_SLOT_SIZE);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct provider *, embedded_free);

static int embedded_new(sd_event *event, const struct provider_settings *settings, struct provider **ret) {
        _cleanup_(embedded_freep) struct provider *p = NULL;
        void *page;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->event = sd_event_ref(event);
        p->page_fd = p->page_ro_fd = -EBADF;
        p->drop_ratelimit = (struct log_ratelimit) LOG_RATELIMIT_INIT(10 * 1000000ull, 10);
        p->ring_ratelimit = (struct log_ratelimit) LOG_RATELIMIT_INIT(5 * 1000000ull, 10);

        page = mmap(NULL, (size_t) EMBEDDED_READ_BATCH * EMBEDDED_SLOT_SIZE, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED)
                return -errno;
        p->slots = page;
        for (unsigned i = 0; i < EMBEDDED_READ_BATCH; i++) {
                p->slot_iov[i] = (struct iovec) { p->slots + (size_t) i * EMBEDDED_SLOT_SIZE, EMBEDDED_MESSAGE_MAX };
                p->messages[i].msg_hdr = (struct msghdr) { .msg_iov = &p->slot_iov[i], .msg_iovlen = 1 };
        }

        r = embedded_recording_init(p);
        if (r < 0)
                return r;
        r = embedded_ring_init(p);
        if (r < 0)
                return r;

        p->page_fd = memfd_new_sized("uebroker-status", STATUS_PAGE_SIZE);
        if (p->page_fd < 0)
                return log_error_errno(p->page_fd, "Cannot create the status page memfd: %m");

        /* Map writable before sealing: F_SEAL_FUTURE_WRITE keeps this
         * mapping and refuses every later writable one. */
        page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->page_fd, 0);
        if (page == MAP_FAILED)
                return log_error_errno(errno, "Cannot map the status page: %m");
        p->page = page;

        r = memfd_seal_read_only(p->page_fd);
        if (r < 0)
                return log_error_errno(r, "Cannot seal the status page: %m");

        /* An O_RDONLY descriptor on top of the seals: the receiver cannot
         * even ask for a writable shared mapping. Without /proc the sealed
         * memfd itself is handed out. */
        p->page_ro_fd = fd_reopen_read_only(p->page_fd);
        if (p->page_ro_fd < 0) {
                log_debug_errno(p->page_ro_fd, "Cannot reopen the status page read-only, handing out the sealed memfd: %m");
                p->page_ro_fd = fd_dup_cloexec(p->page_fd);
                if (p->page_ro_fd < 0)
                        return p->page_ro_fd;
        }

        *ret = TAKE_PTR(p);
        return 0;
}

static int embedded_event_add(struct provider *p, const struct event_def *def, uint32_t *io_status_index,
                              struct provider_event **ret) {
        struct provider_event *ev;

        if (*io_status_index == 0 || *io_status_index > STATUS_INDEX_MAX)
                return -EINVAL;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->def = def;
        ev->name_len = (uint16_t) strlen(def->name);    /* at most EVENT_NAME_MAX */
        ev->status_index = *io_status_index;
        embedded_recorders_follow(p, ev);
        embedded_status_update(p, ev);
        *ret = ev;
        return 0;
}

static void embedded_event_remove(struct provider *p, struct provider_event *ev) {
        if (!ev)
                return;
        /* The broker removes only events nobody records (status byte 0),
         * except when undoing an event_add that a pattern matched. */
        embedded_recorders_forget(p, ev);
        embedded_event_recorders_free(ev);
        p->page[ev->status_index] = 0;
        free(ev);
}

static uint8_t embedded_event_status(struct provider *p, struct provider_event *ev) {
        return p->page[ev->status_index];
}

/* Data path */

/* What the client could not hand over (data-message.h): not a record. A
 * client can only make its own numbers lie; the sums do not wrap. */
static void session_drop_report(struct provider *p, const uint8_t *msg) {
        uint64_t count;

        memcpy(&count, msg + sizeof(uint32_t), sizeof(count));
        p->writer_dropped = count > UINT64_MAX - p->writer_dropped ? UINT64_MAX : p->writer_dropped + count;
}

/* One message from the data socket (data-message.h), read at
 * @timestamp_ns. */
static void session_handle_message(struct provider_session *s, const uint8_t *msg, size_t len,
                                   uint64_t timestamp_ns) {
        const struct provider_event *ev;
        uint32_t write_index;

        if (len == DATA_DROP_REPORT_SIZE && memcmp(msg, &(uint32_t) { DATA_DROP_REPORT_INDEX }, sizeof(uint32_t)) == 0) {
                session_drop_report(s->provider, msg);
                return;
        }
        /* The ring's doorbell: waking us was all it had to do. */
        if (len == sizeof(uint32_t) && memcmp(msg, &(uint32_t) { DATA_RING_DOORBELL_INDEX }, sizeof(uint32_t)) == 0)
                return;
        if (len < sizeof(write_index)) {
                s->received++;
                s->provider->received++;
                embedded_session_drop(s, "shorter than a write index", 0);
                return;
        }
        memcpy(&write_index, msg, sizeof(write_index));
        ev = embedded_session_record_accept(s, write_index, len - sizeof(write_index));
        if (ev)
                embedded_session_record_deliver(s, ev, write_index, msg + sizeof(write_index), len - sizeof(write_index),
                                       timestamp_ns, 0, 0);
}

/* Receives up to @max (at most EMBEDDED_READ_BATCH) messages with one
 * recvmmsg() into the provider's slots and handles them in order. Returns
 * how many it received, -EAGAIN when nothing was queued, another negative
 * errno on failure. *@ret_eof is set when the batch ended in end of file:
 * recvmmsg() fills every remaining entry with an empty read then, so with
 * the socket shut down for reading, trailing empty entries are taken for
 * end of file rather than for empty messages (invalid either way). */
static int session_receive_batch(struct provider_session *s, unsigned max, bool shut_down, size_t *ret_bytes,
                                 bool *ret_eof) {
        struct provider *p = s->provider;
        uint64_t timestamp_ns;
        size_t bytes = 0;
        int n, last;

        *ret_eof = false;
        for (unsigned i = 0; i < max; i++)
                p->messages[i].msg_hdr.msg_flags = 0;
        n = recvmmsg(s->daemon_fd, p->messages, max, MSG_DONTWAIT | MSG_CMSG_CLOEXEC, NULL);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        if (n == 0)
                return -EAGAIN;

        last = n;
        if (shut_down) {
                while (last > 0 && p->messages[last - 1].msg_len == 0)
                        last--;
                *ret_eof = last < n;
        }
        timestamp_ns = clock_ns(CLOCK_REALTIME);
        for (int i = 0; i < last; i++) {
                const struct mmsghdr *m = p->messages + i;

                bytes += m->msg_len ?: 1;       /* an empty message counts as one byte */
                if (m->msg_hdr.msg_flags & MSG_TRUNC) {
                        s->received++;
                        p->received++;
                        embedded_session_drop(s, "longer than the record limit", 0);
                } else
                        session_handle_message(s, m->msg_hdr.msg_iov->iov_base, m->msg_len, timestamp_ns);
        }
        *ret_bytes = bytes;
        return n;
}

static int session_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct provider_session *s = ASSERT_PTR(userdata);
        struct provider *p = s->provider;
        bool shut_down = revents & (EPOLLRDHUP | EPOLLHUP), eof = false;
        size_t bytes;
        int n = 0;

        for (unsigned left = EMBEDDED_READS_PER_WAKEUP; left > 0 && !eof; left -= (unsigned) n) {
                n = session_receive_batch(s, left < EMBEDDED_READ_BATCH ? left : EMBEDDED_READ_BATCH, shut_down,
                                          &bytes, &eof);
                if (n == -EAGAIN)
                        break;
                if (n < 0) {
                        log_debug_errno(n, "Reading the data socket of %s failed, closing it: %m", s->bus_name);
                        (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                        break;
                }
        }
        embedded_session_ring_read(s, false);
        if (eof) {
                /* The client shut its end down for writing (we hold a copy
                 * of that end, so it was deliberate): nothing more can
                 * arrive, and end of file would wake us forever. */
                log_debug("Data socket of %s was shut down, no longer reading it.", s->bus_name);
                (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
        }
        embedded_recorders_flush(p);
        return 0;
}

/* Reads the messages queued on the session's socket right now, no more
 * (a writer that keeps writing cannot keep us here): what a client wrote
 * before a bus call is handled before the call changes what it means. The
 * bus is served at a higher priority than the data sockets, so without this
 * an Unregister or a disconnect would overtake the records written before
 * it. Returns how many messages it read. */
static uint64_t session_read_queued(struct provider_session *s, bool shut_down) {
        uint64_t before = s->received;
        int queued = 0;
        bool eof = false;

        if (s->daemon_fd < 0 || ioctl(s->daemon_fd, SIOCINQ, &queued) < 0)
                return 0;
        /* Bytes queued; empty messages add none, and only empty messages
         * (invalid records) can hide behind 0. */
        for (size_t left = (size_t) queued; left > 0 && !eof;) {
                size_t bytes = 0;
                int n = session_receive_batch(s, EMBEDDED_READ_BATCH, shut_down, &bytes, &eof);

                if (n < 0)
                        break;
                left = bytes >= left ? 0 : left - bytes;
        }
        embedded_session_ring_read(s, true);
        embedded_recorders_flush(s->provider);
        return s->received - before;
}

/* The session ends (its client left the bus, or the broker stops) while
 * what the client wrote last may still be queued on our end. Shutting our
 * end down for reading makes further writes fail (EPIPE), so the queue can
 * only shrink: read what is queued, then the records reached the recorders
 * like any other. */
static void session_drain(struct provider_session *s) {
        uint64_t n;

        if (s->daemon_fd < 0)
                return;
        if (shutdown(s->daemon_fd, SHUT_RD) < 0) {
                log_debug_errno(errno, "Cannot shut down the data socket of %s, not reading what is queued: %m",
                                s->bus_name);
                return;
        }
        n = session_read_queued(s, true);
        if (n > 0)
                log_debug("Read %llu messages still queued from %s before closing its data socket.",
                          (unsigned long long) n, s->bus_name);
}

/* Sessions */

static void embedded_session_free(struct provider *p, struct provider_session *s) {
        if (!s)
                return;
        s->io = sd_event_source_disable_unref(s->io);
        session_drain(s);
        embedded_ring_unmap(s);
        safe_close(s->daemon_fd);
        safe_close(s->client_fd);
        free(s->bus_name);
        free(s);
}

static void embedded_session_freep(struct provider_session **s) {
        if (*s)
                embedded_session_free((*s)->provider, *s);
}

static int embedded_session_new(struct provider *p, const struct provider_peer *peer, const struct write_indexes *indexes,
                                struct provider_session **ret) {
        _cleanup_(embedded_session_freep) struct provider_session *s = NULL;
        int fds[2], r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->provider = p;
        s->indexes = indexes;
        s->daemon_fd = s->client_fd = -EBADF;
        s->pid = peer->pid;
        s->uid = peer->uid;
        s->privileged = peer->privileged;
        s->bus_name = strdup(peer->bus_name ?: "?");
        if (!s->bus_name)
                return -ENOMEM;

        /* Writers never block: a full socket is EAGAIN, a dropped event. */
        r = socketpair_seqpacket(fds, SOCK_NONBLOCK);
        if (r < 0)
                return r;
        s->daemon_fd = fds[0];
        s->client_fd = fds[1];
        /* Nothing ever flows from us to the client on this socket. */
        (void) shutdown(s->daemon_fd, SHUT_WR);

        r = sd_event_add_io(p->event, &s->io, s->daemon_fd, EPOLLIN | EPOLLRDHUP, session_io, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->io, "embedded-data");
        (void) sd_event_source_set_priority(s->io, EMBEDDED_DATA_PRIORITY);

        *ret = TAKE_PTR(s);
        return 0;
}

static int embedded_session_data_fd(struct provider_session *s) {
        return s->client_fd;
}

static int embedded_session_status_fd(struct provider_session *s) {
        return s->provider->page_ro_fd;
}

static int embedded_session_register(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                     uint32_t write_index) {
        /* The index is the broker's (write-indexes.h): records are routed
         * by its table, nothing to set up here. */
        return 0;
}

static int embedded_session_unregister(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                       uint32_t write_index) {
        /* Records written before the Unregister still count. */
        (void) session_read_queued(s, false);
        return 0;
}

static void embedded_counters(struct provider *p, struct provider_counters *ret) {
        *ret = (struct provider_counters) {
                .received = p->received,
                .dropped = p->dropped,
                .writer_dropped = p->writer_dropped,
        };
        embedded_recording_counts(p, &ret->recorded, &ret->lost);
}

const struct provider_ops embedded_provider_ops = {
        .name = "embedded",
        .fds_per_session = 2,   /* the data socket's two ends */
        .max_record_streams = EMBEDDED_RECORDERS_MAX,
        .probe = embedded_probe,
        .new = embedded_new,
        .free = embedded_free,
        .event_add = embedded_event_add,
        .event_remove = embedded_event_remove,
        .event_status = embedded_event_status,
        .session_new = embedded_session_new,
        .session_free = embedded_session_free,
        .session_data_fd = embedded_session_data_fd,
        .session_status_fd = embedded_session_status_fd,
        .session_register = embedded_session_register,
        .session_unregister = embedded_session_unregister,
        .record = embedded_record,
        .record_matching = embedded_record_matching,
        .counters = embedded_counters,
        .session_ring = embedded_session_ring,
        .session_ring_close = embedded_session_ring_close,
};
