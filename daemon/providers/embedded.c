/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The embedded provider: user_events in user space, for machines whose
 * kernel has none.
 *
 * Status page: one memfd page for all sessions (status indexes are global),
 * mapped read-write here, sealed so clients can only map it read-only.
 * Data file: per session an AF_UNIX SOCK_SEQPACKET pair; the client's end is
 * non-blocking (a writer sees EAGAIN instead of waiting for us), we read the
 * other end. Each message is [u32 write_index][payload].
 * Recording: Record() hands out one end of another SEQPACKET pair and we
 * send each valid record of the chosen events to it (uebroker-record.h),
 * never blocking: what does not fit is counted as lost. A recording made
 * with patterns (RecordMatching) also takes each event added later whose
 * name matches.
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
#include "event-pattern.h"
#include "fd-util.h"
#include "log.h"
#include "provider.h"
#include "record-sink.h"
#include "status-text.h"

/* A record is its u32 write index plus a payload; dynamic fields address at
 * most 64 KiB, so anything longer is useless and dropped. */
#define EMBEDDED_PAYLOAD_MAX 65536u
#define EMBEDDED_MESSAGE_MAX (sizeof(uint32_t) + EMBEDDED_PAYLOAD_MAX)
/* Messages read from one session per wakeup, so one busy writer cannot
 * starve the others or the bus. */
#define EMBEDDED_READ_BATCH 64
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
        unsigned n_recorders;
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
        struct recorder *next, *prev;
};

struct provider_session {
        struct provider *provider;
        int daemon_fd;
        int client_fd;          /* kept so every Register can hand out a dup */
        sd_event_source *io;
        const struct write_indexes *indexes;    /* the broker's table: routes records */
        pid_t pid;
        uid_t uid;
        char *bus_name;
        uint64_t received;
        uint64_t dropped;
};

struct provider {
        sd_event *event;
        int page_fd;            /* read-write memfd, ours */
        int page_ro_fd;         /* read-only descriptor handed to clients */
        uint8_t *page;
        uint8_t *buffer;        /* one message being read */
        struct recorder *recorders;
        unsigned n_recorders;
        uint64_t received;
        uint64_t dropped;
        uint64_t recorded;
        uint64_t lost;
        struct log_ratelimit drop_ratelimit;
};

/* Closes the stream and frees @r; its events and the list are the
 * caller's business. */
static void recorder_release(struct recorder *r) {
        record_sink_free(r->sink);
        free(r->events);
        event_patterns_free(r->patterns, r->n_patterns);
        free(r);
}

static int embedded_probe(const struct provider_settings *settings, char **ret_reason) {
        /* memfd_create and AF_UNIX sockets are all it needs. */
        return 1;
}

static struct provider *embedded_free(struct provider *p) {
        if (!p)
                return NULL;

        /* The broker frees sessions and events first, so a recorder's
         * events are gone: release the recorders without touching them. */
        while (p->recorders) {
                struct recorder *r = p->recorders;

                p->recorders = r->next;
                recorder_release(r);
        }

        log_info("Embedded provider: %llu records received, %llu dropped as invalid, %llu recorded, %llu lost to slow consumers.",
                 (unsigned long long) p->received, (unsigned long long) p->dropped,
                 (unsigned long long) p->recorded, (unsigned long long) p->lost);

        if (p->page)
                munmap(p->page, STATUS_PAGE_SIZE);
        safe_close(p->page_ro_fd);
        safe_close(p->page_fd);
        free(p->buffer);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

static void embedded_freep(struct provider **p) {
        *p = embedded_free(*p);
}

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

        p->buffer = malloc(EMBEDDED_MESSAGE_MAX);
        if (!p->buffer)
                return -ENOMEM;

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

        *ret = p;
        p = NULL;
        return 0;
}

static void status_update(struct provider *p, struct provider_event *ev) {
        /* Bit 7: "any other consumer" -- our recorders. */
        p->page[ev->status_index] = ev->n_recorders > 0 ? EVENT_STATUS_OTHER : 0;
}

static bool recorder_wants(const struct recorder *r, uint32_t status_index) {
        return r->wanted[status_index / 8] & (1u << (status_index % 8));
}

/* Adds @ev to @r's events (once); counts @r as its recorder when
 * @count_recorder. */
static int recorder_add_event(struct recorder *r, struct provider_event *ev, bool count_recorder) {
        uint32_t idx = ev->status_index;

        if (recorder_wants(r, idx))
                return 0;       /* named twice, or matched by two patterns */
        if (r->n_events == r->n_allocated) {
                size_t n = r->n_allocated ? r->n_allocated * 2 : 8;
                struct provider_event **grown = reallocarray(r->events, n, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                r->events = grown;
                r->n_allocated = n;
        }
        r->wanted[idx / 8] |= (uint8_t) (1u << (idx % 8));
        r->events[r->n_events++] = ev;
        if (count_recorder)
                ev->n_recorders++;
        return 0;
}

/* A new event joins the recordings whose patterns match its name. */
static void recorders_follow(struct provider *p, struct provider_event *ev) {
        for (struct recorder *r = p->recorders; r; r = r->next) {
                if (r->n_patterns == 0 ||
                    !event_patterns_match((const char *const *) r->patterns, r->n_patterns, ev->def->name))
                        continue;
                if (recorder_add_event(r, ev, true) < 0)
                        log_warning("Out of memory: new event %s is not recorded by a recording matching it.",
                                    ev->def->name);
        }
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
        recorders_follow(p, ev);
        status_update(p, ev);
        *ret = ev;
        return 0;
}

/* Takes @ev out of every recording that holds it. */
static void recorders_forget(struct provider *p, struct provider_event *ev) {
        uint32_t idx = ev->status_index;

        for (struct recorder *r = p->recorders; r && ev->n_recorders > 0; r = r->next) {
                if (!recorder_wants(r, idx))
                        continue;
                for (size_t i = 0; i < r->n_events; i++)
                        if (r->events[i] == ev) {
                                r->events[i] = r->events[--r->n_events];
                                break;
                        }
                r->wanted[idx / 8] &= (uint8_t) ~(1u << (idx % 8));
                ev->n_recorders--;
        }
}

static void embedded_event_remove(struct provider *p, struct provider_event *ev) {
        if (!ev)
                return;
        /* The broker removes only events nobody records (status byte 0),
         * except when undoing an event_add that a pattern matched. */
        recorders_forget(p, ev);
        p->page[ev->status_index] = 0;
        free(ev);
}

static uint8_t embedded_event_status(struct provider *p, struct provider_event *ev) {
        return p->page[ev->status_index];
}

/* Recording */

static void recorder_free(struct recorder *r) {
        struct provider *p = r->provider;

        for (size_t i = 0; i < r->n_events; i++) {
                r->events[i]->n_recorders--;
                status_update(p, r->events[i]);
        }
        if (r->prev)
                r->prev->next = r->next;
        else
                p->recorders = r->next;
        if (r->next)
                r->next->prev = r->prev;
        p->n_recorders--;
        recorder_release(r);
}

/* @h is the record's header, the same for every recorder. */
static void recorder_send(struct recorder *r, struct ueb_record_header *h, const struct provider_event *ev,
                          const void *payload, size_t payload_len) {
        if (record_sink_send(r->sink, h, ev->def->name, ev->name_len, payload, payload_len))
                r->provider->recorded++;
        else
                r->provider->lost++;
}

static void recorder_gone(void *userdata) {
        recorder_free(userdata);
}

static void recorder_releasep(struct recorder **r) {
        if (*r)
                recorder_release(*r);
}

static int recorder_open(struct provider *p, struct provider_event *const *events, size_t n_events,
                         const char *const *patterns, size_t n_patterns) {
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

        for (size_t i = 0; i < r->n_events; i++) {
                r->events[i]->n_recorders++;
                status_update(p, r->events[i]);
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

static int embedded_record(struct provider *p, struct provider_event *const *events, size_t n_events) {
        if (n_events == 0)
                return -EINVAL;
        return recorder_open(p, events, n_events, NULL, 0);
}

static int embedded_record_matching(struct provider *p, struct provider_event *const *events, size_t n_events,
                                    const char *const *patterns, size_t n_patterns) {
        if (n_patterns == 0)
                return -EINVAL;
        return recorder_open(p, events, n_events, patterns, n_patterns);
}

/* Data path */

static void session_drop(struct provider_session *s, const char *why, uint32_t write_index) {
        struct provider *p = s->provider;
        unsigned suppressed = 0;

        s->dropped++;
        p->dropped++;
        if (log_get_max_level() >= LOG_DEBUG && log_ratelimit_ok(&p->drop_ratelimit, &suppressed))
                log_debug("Dropped a record from %s (pid %d), write index %u: %s (%llu dropped by this client; %u messages suppressed).",
                          s->bus_name, (int) s->pid, write_index, why,
                          (unsigned long long) s->dropped, suppressed);
}

static void session_handle_message(struct provider_session *s, const uint8_t *msg, size_t len) {
        struct provider *p = s->provider;
        const struct provider_event *ev;
        struct ueb_record_header h;
        struct timespec ts;
        const uint8_t *payload;
        size_t payload_len;
        uint32_t write_index;
        int r;

        s->received++;
        p->received++;

        if (len < sizeof(write_index)) {
                session_drop(s, "shorter than a write index", 0);
                return;
        }
        memcpy(&write_index, msg, sizeof(write_index));
        ev = write_indexes_active_event(s->indexes, write_index);
        if (!ev) {
                session_drop(s, "write index not registered", write_index);
                return;
        }
        payload = msg + sizeof(write_index);
        payload_len = len - sizeof(write_index);
        r = event_def_validate_payload(ev->def, payload, payload_len);
        if (r < 0) {
                session_drop(s, r == -EINVAL ? "payload shorter than the event's fields" :
                                               "dynamic field out of bounds or not NUL-terminated", write_index);
                return;
        }

        /* Disabled events cost a lookup and a validation, nothing more. */
        if (ev->n_recorders == 0)
                return;

        clock_gettime(CLOCK_REALTIME, &ts);
        h = (struct ueb_record_header) {
                .pid = (uint32_t) s->pid,
                .uid = (uint32_t) s->uid,
                .timestamp_ns = (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec,
        };
        /* Sending never frees a recorder (a gone consumer is freed on
         * EPOLLHUP), so the list stays intact while we walk it. */
        for (struct recorder *rec = p->recorders; rec; rec = rec->next)
                if (recorder_wants(rec, ev->status_index))
                        recorder_send(rec, &h, ev, payload, payload_len);
}

/* Receives one message and handles it. Returns its length; 0 for an empty
 * read (an empty message, or end of file once the socket is shut down),
 * which the caller interprets; -EAGAIN when nothing is queued; another
 * negative errno on failure. */
static ssize_t session_receive(struct provider_session *s) {
        struct provider *p = s->provider;
        struct iovec iov = { p->buffer, EMBEDDED_MESSAGE_MAX };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
        ssize_t n;

        n = recvmsg(s->daemon_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n < 0)
                return errno == EINTR ? -EAGAIN : -errno;
        if (n == 0)
                return 0;
        if (mh.msg_flags & MSG_TRUNC)
                session_drop(s, "longer than the record limit", 0);
        else
                session_handle_message(s, p->buffer, (size_t) n);
        return n;
}

static int session_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct provider_session *s = userdata;
        struct provider *p = s->provider;

        for (unsigned i = 0; i < EMBEDDED_READ_BATCH; i++) {
                ssize_t n = session_receive(s);

                if (n == -EAGAIN)
                        break;
                if (n < 0) {
                        log_debug_errno((int) n, "Reading the data socket of %s failed, closing it: %m", s->bus_name);
                        (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                        return 0;
                }
                if (n == 0 && (revents & (EPOLLRDHUP | EPOLLHUP))) {
                        /* The client shut its end down for writing (we
                         * hold a copy of that end, so it was deliberate):
                         * nothing more can arrive, and EOF would wake us
                         * forever. */
                        log_debug("Data socket of %s was shut down, no longer reading it.", s->bus_name);
                        (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                        return 0;
                }
                if (n == 0)
                        session_handle_message(s, p->buffer, 0);        /* an empty message: dropped */
        }
        return 0;
}

/* Reads the messages queued on the session's socket right now, no more
 * (a writer that keeps writing cannot keep us here): what a client wrote
 * before a bus call is handled before the call changes what it means. The
 * bus is served at a higher priority than the data sockets, so without this
 * an Unregister or a disconnect would overtake the records written before
 * it. Returns how many messages it read. */
static uint64_t session_read_queued(struct provider_session *s) {
        uint64_t before = s->received;
        int queued = 0;

        if (s->daemon_fd < 0 || ioctl(s->daemon_fd, SIOCINQ, &queued) < 0)
                return 0;
        /* Bytes queued; empty messages add none, and only empty messages
         * (invalid records) can hide behind 0. */
        for (ssize_t left = queued; left > 0;) {
                ssize_t n = session_receive(s);

                if (n < 0)
                        break;
                if (n == 0)
                        session_handle_message(s, s->provider->buffer, 0);
                left -= n > 0 ? n : 1;
        }
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
        n = session_read_queued(s);
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
        s->bus_name = strdup(peer->bus_name ?: "?");
        if (!s->bus_name)
                return -ENOMEM;

        r = socketpair_seqpacket(fds);
        if (r < 0)
                return r;
        s->daemon_fd = fds[0];
        s->client_fd = fds[1];

        /* Writers never block: a full socket is EAGAIN, a dropped event. */
        r = fd_set_nonblock(s->client_fd, true);
        if (r < 0)
                return r;
        r = fd_set_nonblock(s->daemon_fd, true);
        if (r < 0)
                return r;
        /* Nothing ever flows from us to the client on this socket. */
        (void) shutdown(s->daemon_fd, SHUT_WR);

        r = sd_event_add_io(p->event, &s->io, s->daemon_fd, EPOLLIN | EPOLLRDHUP, session_io, s);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(s->io, "embedded-data");
        (void) sd_event_source_set_priority(s->io, EMBEDDED_DATA_PRIORITY);

        *ret = s;
        s = NULL;
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
        (void) session_read_queued(s);
        return 0;
}

const struct provider_ops embedded_provider_ops = {
        .name = "embedded",
        .fds_per_session = 2,   /* the data socket's two ends */
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
};
