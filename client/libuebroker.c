/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libuebroker: the public calls (see include/uebroker.h). */
#include <assert.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "time-util.h"
#include "client-internal.h"
#include "data-message.h"
#include "event-def.h"
#include "event-encode.h"
#include "fd-util.h"
#include "status-text.h"

#define UEB_EXPORT __attribute__((visibility("default")))

static uint64_t deadline_after_msec(unsigned msec) {
        return ueb_now_usec() + msec * 1000ull;
}

static uint64_t counter_get(const uint64_t *counter) {
        return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

static struct ueb_event *event_free(struct ueb_event *e) {
        if (e) {
                free(e->command);
                event_def_free(e->def);
                free(e);
        }
        return NULL;
}

/* Records written just before close are still in the socket: give the
 * broker a moment (bounded) to read them before the disconnect makes it
 * drop the session. */
static void data_drain(struct ueb_client *c) {
        int fd = c->data_fd, queued;

        if (fd < 0 || !c->data_is_socket)
                return;
        for (unsigned i = 0; i < UEB_CLOSE_DRAIN_MSEC; i++) {
                if (ioctl(fd, SIOCOUTQ, &queued) < 0 || queued <= 0)
                        return;
                (void) usleep(1000);
        }
}

static struct ueb_client *client_free(struct ueb_client *c) {
        if (!c)
                return NULL;

        ueb_monitor_stop(c);
        pthread_mutex_lock(&c->lock);
        data_drain(c);
        pthread_mutex_unlock(&c->lock);

        /* First: it cancels the calls in flight, which point at events. */
        ueb_session_disconnect(c);
        ueb_ring_drop(c);
        while (c->events) {
                struct ueb_event *e = c->events;

                LIST_REMOVE(events, c->events, e);
                event_free(e);
        }
        if (c->status_window)
                munmap(c->status_window, STATUS_PAGE_SIZE);
        safe_close(c->data_fd);
        safe_close(c->wake_fd);
        free(c->address);
        pthread_cond_destroy(&c->changed);
        pthread_rwlock_destroy(&c->swap_lock);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct ueb_client *, client_free);

/* A client whose locks are initialized, and nothing else yet. */
static struct ueb_client *client_new(void) {
        _cleanup_free_ struct ueb_client *c = calloc(1, sizeof(*c));
        pthread_condattr_t attr;
        struct ueb_client *result;
        bool cond_ok;

        if (!c || pthread_condattr_init(&attr) != 0)
                return NULL;
        /* Waits use CLOCK_MONOTONIC deadlines, like every timer here. */
        cond_ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&c->changed, &attr) == 0;
        pthread_condattr_destroy(&attr);
        if (!cond_ok)
                return NULL;
        if (pthread_mutex_init(&c->lock, NULL) != 0) {
                pthread_cond_destroy(&c->changed);
                return NULL;
        }
        if (pthread_rwlock_init(&c->swap_lock, NULL) != 0) {
                pthread_mutex_destroy(&c->lock);
                pthread_cond_destroy(&c->changed);
                return NULL;
        }
        result = TAKE_PTR(c);
        return result;
}

/* $UEBROKER_RING_KIB: the ring's size in KiB, 0 for none (the socket
 * path only); the broker grants what its memory allows. */
static uint32_t ring_request_from_env(void) {
        const char *env = secure_getenv("UEBROKER_RING_KIB");
        unsigned long kib = UEB_RING_DEFAULT_KIB;
        char *end;

        if (env && *env) {
                errno = 0;
                kib = strtoul(env, &end, 10);
                if (errno || *end)
                        kib = UEB_RING_DEFAULT_KIB;
        }
        if (kib == 0)
                return 0;
        return kib > RING_DATA_MAX / 1024 ? RING_DATA_MAX : (uint32_t) kib * 1024u;
}

UEB_EXPORT int ueb_open_bus(struct ueb_client **ret, enum ueb_bus bus, const char *address) {
        _cleanup_(client_freep) struct ueb_client *c = NULL;
        uint64_t deadline;
        int r;

        if (!ret)
                return -EINVAL;
        *ret = NULL;
        if (bus > UEB_BUS_ADDRESS || (bus == UEB_BUS_ADDRESS) != !!address)
                return -EINVAL;
        if (bus == UEB_BUS_DEFAULT) {
                const char *env = secure_getenv("UEBROKER_BUS_ADDRESS");

                if (env && *env) {
                        bus = UEB_BUS_ADDRESS;
                        address = env;
                } else
                        bus = UEB_BUS_SYSTEM;
        }

        c = client_new();
        if (!c)
                return -ENOMEM;
        c->data_fd = c->wake_fd = -1;
        c->owner_pid = getpid();
        c->ring_request = ring_request_from_env();
        ueb_ring_init_once();
        c->bus_kind = bus;
        c->connect_backoff_usec = UEB_CONNECT_RETRY_MIN_USEC;
        if (address) {
                c->address = strdup(address);
                if (!c->address)
                        return -ENOMEM;
        }

        /* Reserved for the client's life; see status_window. */
        c->status_window = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (c->status_window == MAP_FAILED) {
                c->status_window = NULL;
                return -errno;
        }

        /* The thread connects; we only wait for its first attempt, and not
         * for long: a bus that accepts but never answers must not hold the
         * host. No bus yet is no failure: the thread keeps trying. */
        deadline = deadline_after_msec(UEB_OPEN_WAIT_MAX_MSEC);
        r = ueb_monitor_start(c);
        if (r < 0)
                return r;
        pthread_mutex_lock(&c->lock);
        while (c->connect_attempts == 0 && ueb_now_usec() < deadline)
                (void) ueb_client_wait(c, deadline);
        r = c->bus_ready ? 1 : 0;
        if (r == 0 && c->connect_attempts == 0)
                ueb_set_error(c, -ETIMEDOUT, "the bus did not answer within %d ms; still trying",
                              UEB_OPEN_WAIT_MAX_MSEC);
        pthread_mutex_unlock(&c->lock);

        *ret = TAKE_PTR(c);
        return r;
}

UEB_EXPORT int ueb_open(struct ueb_client **ret) {
        return ueb_open_bus(ret, UEB_BUS_DEFAULT, NULL);
}

UEB_EXPORT struct ueb_client *ueb_close(struct ueb_client *c) {
        return client_free(c);
}

/* Adds the counters of @e to @sum. */
static void stats_add(struct ueb_stats *sum, const struct ueb_event *e) {
        struct ueb_stats s;

        ueb_event_stats(e, &s);
        sum->written += s.written;
        sum->dropped += s.dropped;
        sum->failed += s.failed;
        sum->registrations += s.registrations;
}

/* A new pending event of @command (@len bytes, parsed here: the broker
 * runs the same parser, asking it first only saves the round trip and
 * works while no broker is there), on @c's list. Under c->lock. */
static int event_new_pending(struct ueb_client *c, const char *command, size_t len, struct ueb_event **ret) {
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        struct event_error parse_error = { 0 };
        struct ueb_event *e;
        int r;

        r = event_def_parse_n(command, len, 0, &def, &parse_error);
        if (r == -EINVAL)
                return ueb_set_error(c, r, "%s", parse_error.message);
        if (r < 0)
                return ueb_set_error(c, r, "cannot parse the command: %s", strerror(-r));

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        e->command = strndup(command, len);
        if (!e->command) {
                event_free(e);
                return -ENOMEM;
        }
        /* Kept for typed writes: the layout comes from it. */
        e->def = TAKE_PTR(def);
        e->client = c;
        e->head.status = &ueb_zero_status;
        e->state = UEB_EVENT_PENDING;
        LIST_PREPEND(events, c->events, e);
        *ret = e;
        return 0;
}

/* Asks the broker for @e now unless it is known to be away (the
 * background thread sends it if the connection is still starting), then
 * waits for the answer, lock released, but not beyond @deadline: a late
 * answer is applied in the background. Under c->lock. */
static void register_and_wait(struct ueb_client *c, struct ueb_event *e, uint64_t deadline) {
        unsigned generation = c->bus_generation;

        if (!c->bus || (c->broker_absent && ueb_now_usec() < c->next_register_usec))
                return;
        (void) ueb_session_register_event_start(c, e);
        ueb_monitor_wake(c);
        /* The first registration of a session also waits for the ring it
         * asks for, so that writes go there from the start. */
        while ((e->answers == 0 || c->ring_call) && c->bus && c->bus_generation == generation &&
               ueb_now_usec() < deadline)
                (void) ueb_client_wait(c, deadline);
}

UEB_EXPORT int ueb_register(struct ueb_client *c, const char *command, struct ueb_event **ret) {
        struct ueb_event *e = NULL;
        uint64_t deadline;
        int r;

        if (!ret)
                return -EINVAL;
        *ret = NULL;
        if (!c || !command)
                return -EINVAL;

        deadline = deadline_after_msec(UEB_CALL_WAIT_MAX_MSEC);
        pthread_mutex_lock(&c->lock);
        c->last_error[0] = '\0';
        r = event_new_pending(c, command, strnlen(command, EVENT_COMMAND_MAX + 1), &e);
        if (r >= 0) {
                register_and_wait(c, e, deadline);
                r = e->state == UEB_EVENT_REGISTERED ? 1 : 0;
                if (e->state == UEB_EVENT_REFUSED) {
                        r = e->refusal;
                        LIST_REMOVE(events, c->events, e);
                        event_free(e);
                } else
                        *ret = e;
        }
        pthread_mutex_unlock(&c->lock);
        /* The thread retries what is pending and runs what the call may
         * have queued on the bus. */
        ueb_monitor_wake(c);
        return r;
}

UEB_EXPORT int ueb_unregister(struct ueb_event *e) {
        struct ueb_client *c;
        uint64_t deadline;
        int r;

        if (!e)
                return 0;
        c = e->client;

        deadline = deadline_after_msec(UEB_CALL_WAIT_MAX_MSEC);
        pthread_mutex_lock(&c->lock);
        /* Unlinked first: while we wait for the answer the background
         * thread must not register it again. */
        LIST_REMOVE(events, c->events, e);
        r = ueb_session_unregister_event(c, e, deadline);
        /* Its counters stay in the client's totals. */
        stats_add(&c->retired, e);
        pthread_mutex_unlock(&c->lock);
        ueb_monitor_wake(c);

        event_free(e);
        return r;
}

/* errno values of a data file write, sorted into the documented results. */
static bool error_is_drop(int error) {
        /* Full socket, or a kernel data file with nobody listening. */
        return error == EAGAIN || error == EWOULDBLOCK || error == EBADF || error == ENOBUFS;
}

static bool error_is_lost_broker(int error) {
        return error == EPIPE || error == ECONNRESET || error == ENOTCONN || error == ECONNREFUSED;
}

/* Tells the broker how many records the full socket refused since the
 * last report (data-message.h), so that its counters show them too. Runs
 * before a record is sent, under the read lock; a report that does not fit
 * either waits for the next write. */
static void drops_report(struct ueb_client *c) {
        uint64_t count = __atomic_exchange_n(&c->unreported_drops, 0, __ATOMIC_RELAXED);
        const uint32_t index = DATA_DROP_REPORT_INDEX;
        uint8_t msg[DATA_DROP_REPORT_SIZE];

        if (count == 0)
                return;
        memcpy(msg, &index, sizeof(index));
        memcpy(msg + sizeof(index), &count, sizeof(count));
        if (send(c->data_fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                __atomic_fetch_add(&c->unreported_drops, count, __ATOMIC_RELAXED);
}

/* The most iovecs a record is gathered from: ueb_write()'s, or a typed
 * write's fixed part and each dynamic field with its NUL. */
#define RECORD_IOV_MAX                                                          \
        (UEB_WRITE_IOV_MAX > 1 + 2 * EVENT_DYNAMIC_FIELDS_MAX ? UEB_WRITE_IOV_MAX     \
                                                              : 1 + 2 * EVENT_DYNAMIC_FIELDS_MAX)

/* One record on the data file, its write index first: 0 or an errno.
 * Under the swap lock. Out of event_send(): only here are the caller's
 * iovecs copied (behind the write index), which the ring path never
 * needs. */
static int data_file_send(struct ueb_client *c, uint32_t write_index, const struct iovec *iov, int iovcnt) {
        struct iovec v[1 + RECORD_IOV_MAX];
        ssize_t n;

        assert(iovcnt >= 0 && iovcnt <= (int) RECORD_IOV_MAX);
        v[0] = (struct iovec) { &write_index, sizeof(write_index) };
        if (iovcnt > 0)
                memcpy(v + 1, iov, (size_t) iovcnt * sizeof(*iov));
        if (c->data_is_socket) {
                struct msghdr mh = { .msg_iov = v, .msg_iovlen = (size_t) iovcnt + 1 };

                if (__atomic_load_n(&c->unreported_drops, __ATOMIC_RELAXED) != 0)
                        drops_report(c);
                /* MSG_NOSIGNAL: a dead broker is EPIPE, not SIGPIPE. */
                n = sendmsg(c->data_fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        } else
                n = writev(c->data_fd, v, iovcnt + 1);
        return n < 0 ? errno : 0;
}

/* Writes @iov (@iovcnt of them, at most RECORD_IOV_MAX) as one record of
 * @e. Counts the result in @e's statistics. */
static int event_send(struct ueb_event *e, const struct iovec *iov, int iovcnt) {
        struct ueb_client *c = e->client;
        int error;

        /* Never wait: a held write lock means a swap is under way. */
        if (pthread_rwlock_tryrdlock(&c->swap_lock) != 0) {
                ueb_counter_add(&e->dropped);
                return -EAGAIN;
        }
        if (!e->registered || c->data_fd < 0) {
                pthread_rwlock_unlock(&c->swap_lock);
                ueb_counter_add(&e->dropped);
                return -ENOTCONN;
        }

        if (c->ring.header) {
                int r = ueb_ring_write(c, e->write_index, iov, iovcnt);

                if (r != -EMSGSIZE) {
                        pthread_rwlock_unlock(&c->swap_lock);
                        ueb_counter_add(r == 0 ? &e->written : &e->dropped);
                        return r;
                }
                /* Too large for the ring: the socket takes it. */
        }
        error = data_file_send(c, e->write_index, iov, iovcnt);
        if (error_is_drop(error) && c->data_is_socket)
                __atomic_fetch_add(&c->unreported_drops, 1, __ATOMIC_RELAXED);
        pthread_rwlock_unlock(&c->swap_lock);

        if (error == 0) {
                ueb_counter_add(&e->written);
                return 0;
        }
        if (error_is_drop(error)) {
                ueb_counter_add(&e->dropped);
                return -EAGAIN;
        }
        if (error_is_lost_broker(error)) {
                ueb_counter_add(&e->dropped);
                /* Tell the background thread once; it re-registers. */
                if (__atomic_exchange_n(&c->session_broken, 1, __ATOMIC_ACQ_REL) == 0)
                        ueb_monitor_wake(c);
                return -error;
        }
        ueb_counter_add(&e->failed);
        return -error;
}

UEB_EXPORT int ueb_write(struct ueb_event *e, const struct iovec *iov, int iovcnt) {
        if (iovcnt < 0 || iovcnt > UEB_WRITE_IOV_MAX || (iovcnt > 0 && !iov)) {
                ueb_counter_add(&e->failed);
                return -EINVAL;
        }
        return event_send(e, iov, iovcnt);
}

/* The fixed part of a typed write: on the stack when it fits, which is the
 * common case and costs no allocation. */
struct fixed_buffer {
        uint8_t stack[UEB_VALUES_STACK_MAX];
        uint8_t *heap;
        uint8_t *data;
};

static int fixed_buffer_init(struct fixed_buffer *b, size_t size) {
        b->heap = NULL;
        b->data = b->stack;
        if (size > sizeof(b->stack)) {
                b->heap = malloc(size);
                if (!b->heap)
                        return -ENOMEM;
                b->data = b->heap;
        }
        return 0;
}

static void fixed_buffer_done(struct fixed_buffer *b) {
        free(b->heap);
}

UEB_EXPORT int ueb_write_values(struct ueb_event *e, const struct ueb_value *values, size_t n) {
        static const uint8_t nul = 0;
        struct event_encode_span spans[EVENT_DYNAMIC_FIELDS_MAX];
        /* The fixed part, and each span with its NUL. */
        struct iovec v[1 + 2 * EVENT_DYNAMIC_FIELDS_MAX];
        _cleanup_(fixed_buffer_done) struct fixed_buffer fixed;
        size_t n_spans, len, count = 0;
        int r;

        r = fixed_buffer_init(&fixed, e->def->min_size);
        if (r < 0) {
                ueb_counter_add(&e->failed);
                return r;
        }
        r = event_encode_values(e->def, values, n, fixed.data, spans, &n_spans, &len, NULL);
        if (r < 0) {
                ueb_counter_add(&e->failed);
                return r;
        }

        /* The dynamic bytes go from the caller's memory straight to the
         * data file: no copy. */
        if (e->def->min_size > 0)
                v[count++] = (struct iovec) { fixed.data, e->def->min_size };
        for (size_t i = 0; i < n_spans; i++) {
                if (spans[i].len > 0)
                        v[count++] = (struct iovec) { (void *) spans[i].data, spans[i].len };
                if (spans[i].nul)
                        v[count++] = (struct iovec) { (void *) &nul, 1 };
        }
        return event_send(e, v, (int) count);
}

UEB_EXPORT int ueb_check_values(const struct ueb_event *e, const struct ueb_value *values, size_t n, char *message,
                                size_t size) {
        struct event_encode_span spans[EVENT_DYNAMIC_FIELDS_MAX];
        _cleanup_(fixed_buffer_done) struct fixed_buffer fixed;
        struct event_error error = { 0 };
        size_t n_spans, len;
        int r;

        r = fixed_buffer_init(&fixed, e->def->min_size);
        if (r < 0) {
                if (message && size > 0)
                        snprintf(message, size, "%s", strerror(-r));
                return r;
        }
        r = event_encode_values(e->def, values, n, fixed.data, spans, &n_spans, &len, &error);
        if (message && size > 0)
                snprintf(message, size, "%s", r < 0 ? error.message : "");
        return r;
}

UEB_EXPORT bool ueb_registered(const struct ueb_event *e) {
        return e && __atomic_load_n(&e->head.status, __ATOMIC_RELAXED) != &ueb_zero_status;
}

UEB_EXPORT int ueb_enabled_address(struct ueb_event *e, const volatile uint8_t **ret) {
        struct ueb_client *c;
        uint32_t index;

        if (!e || !ret)
                return -EINVAL;
        c = e->client;
        pthread_mutex_lock(&c->lock);
        index = e->status_index;
        pthread_mutex_unlock(&c->lock);
        /* Index 0 is never handed out: no registration yet. */
        if (index == 0)
                return -EAGAIN;
        *ret = c->status_window + index;
        return 0;
}

UEB_EXPORT const char *ueb_last_error(struct ueb_client *c) {
        return c ? c->last_error : "";
}

UEB_EXPORT void ueb_event_stats(const struct ueb_event *e, struct ueb_stats *ret) {
        *ret = (struct ueb_stats) {
                .written = counter_get(&e->written),
                .dropped = counter_get(&e->dropped),
                .failed = counter_get(&e->failed),
                .registrations = counter_get(&e->registrations),
        };
}

UEB_EXPORT void ueb_client_stats(struct ueb_client *c, struct ueb_stats *ret) {
        pthread_mutex_lock(&c->lock);
        *ret = c->retired;
        LIST_FOREACH(events, e, c->events)
                stats_add(ret, e);
        pthread_mutex_unlock(&c->lock);
}
