/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's side of a broker session: the bus connection, Register and
 * Unregister, adopting the data file and status page the broker hands out,
 * and dropping them when the broker goes away. Every function here runs
 * with c->lock held, so none of them waits for the bus: calls go out
 * asynchronously and their answers are applied in ueb_session_process().
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "broker-bus.h"
#include "broker-errors.h"
#include "bus-util.h"
#include "cleanup.h"
#include "client-internal.h"
#include "fd-util.h"
#include "status-text.h"
#include "macro.h"

/* tracefs, where a kernel provider's status page lives. */
#define TRACEFS_MAGIC_NUMBER 0x74726163

/* Name watch */

static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct ueb_client *c = ASSERT_PTR(userdata);
        const char *name, *old_owner, *new_owner;

        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || strcmp(name, BROKER_BUS_NAME) != 0)
                return 0;

        /* Only the broker that holds our session can take it away: a stale
         * signal about an earlier broker must not drop a fresh session. */
        if (c->broker_owner && strcmp(old_owner, c->broker_owner) == 0)
                ueb_session_lose(c);

        if (*new_owner) {
                /* A new broker: try everything again, refused events too
                 * (its configuration may differ). */
                c->broker_absent = false;
                c->next_register_usec = 0;
                LIST_FOREACH(events, e, c->events)
                        if (e->state == UEB_EVENT_REFUSED)
                                e->state = UEB_EVENT_PENDING;
        }
        return 0;
}

/* Connection */

static int bus_open(struct ueb_client *c, sd_bus **ret) {
        switch (c->bus_kind) {
        case UEB_BUS_SYSTEM:
                return sd_bus_open_system_with_description(ret, "uebroker");
        case UEB_BUS_SESSION:
                return sd_bus_open_user_with_description(ret, "uebroker");
        case UEB_BUS_ADDRESS:
                return bus_open_address(c->address, ret);
        default:
                return -EINVAL;
        }
}

static void connect_failed(struct ueb_client *c) {
        c->next_connect_usec = ueb_now_usec() + c->connect_backoff_usec;
        c->connect_backoff_usec = c->connect_backoff_usec * 2 > UEB_CONNECT_RETRY_MAX_USEC ?
                                          UEB_CONNECT_RETRY_MAX_USEC : c->connect_backoff_usec * 2;
        c->connect_attempts++;
}

/* sd_bus_start() only sends the authentication; nothing here waits for the
 * bus to answer (ueb_session_process() finishes the job). The watch is
 * asynchronous too: a refused AddMatch makes sd-bus drop the connection,
 * which we notice and retry. */
int ueb_session_connect(struct ueb_client *c) {
        sd_bus *bus = NULL;
        int r;

        if (c->bus)
                return 1;

        r = bus_open(c, &bus);
        if (r < 0) {
                ueb_set_error(c, r, "cannot connect to the bus: %s", strerror(-r));
                goto fail;
        }
        (void) sd_bus_set_method_call_timeout(bus, UEB_BUS_CALL_TIMEOUT_USEC);

        r = sd_bus_add_match_async(bus, &c->owner_watch,
                                   "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',"
                                   "interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" BROKER_BUS_NAME "'",
                                   on_name_owner_changed, NULL, c);
        if (r < 0) {
                ueb_set_error(c, r, "cannot watch the broker's bus name: %s", strerror(-r));
                goto fail;
        }

        c->bus = bus;
        c->bus_ready = false;
        c->connect_deadline_usec = ueb_now_usec() + UEB_CONNECT_TIMEOUT_USEC;
        return 1;

fail:
        c->owner_watch = sd_bus_slot_unref(c->owner_watch);
        sd_bus_close_unref(bus);
        connect_failed(c);
        return r;
}

/* Hello is answered: the connection can carry Register. */
static int bus_became_ready(struct ueb_client *c) {
        /* Not before now: on a connection still starting, sd_bus_can_send()
         * waits for it. */
        int r = sd_bus_can_send(c->bus, SD_BUS_TYPE_UNIX_FD);

        if (r <= 0) {
                r = r < 0 ? r : -EOPNOTSUPP;
                return ueb_set_error(c, r, "the bus connection cannot pass file descriptors");
        }
        c->bus_ready = true;
        c->broker_absent = false;
        c->next_register_usec = 0;
        c->connect_backoff_usec = UEB_CONNECT_RETRY_MIN_USEC;
        c->connect_attempts++;
        return 0;
}

void ueb_session_disconnect(struct ueb_client *c) {
        if (ueb_client_forked(c)) {
                /* After fork() the connection belongs to the parent; sd-bus
                 * refuses to touch it here. Leave it. */
                c->owner_watch = NULL;
                c->ring_call = NULL;
                c->bus = NULL;
                LIST_FOREACH(events, e, c->events)
                        e->register_call = NULL;
        }
        /* Calls in flight die with the connection; their events wait for
         * the next one. */
        LIST_FOREACH(events, e, c->events)
                ueb_session_register_event_cancel(e);
        c->owner_watch = sd_bus_slot_unref(c->owner_watch);
        c->ring_call = sd_bus_slot_unref(c->ring_call);
        /* No flush: sd_bus_flush() waits for a bus that may never answer. */
        c->bus = sd_bus_close_unref(c->bus);
        if (c->bus_ready || c->connect_deadline_usec)
                c->bus_generation++;
        c->bus_ready = false;
        c->connect_deadline_usec = 0;
        free(c->broker_owner);
        c->broker_owner = NULL;
}

/* The connection itself is gone (bus daemon restarted, or it threw us out). */
static void bus_lost(struct ueb_client *c) {
        bool was_ready = c->bus_ready;

        ueb_session_lose(c);
        ueb_session_disconnect(c);
        if (was_ready) {
                /* Reconnect right away once; backoff after that. */
                c->next_connect_usec = 0;
                c->connect_backoff_usec = UEB_CONNECT_RETRY_MIN_USEC;
        } else
                connect_failed(c);
}

void ueb_session_process(struct ueb_client *c) {
        int r;

        if (!c->bus)
                return;
        /* Bounded: a flood of signals cannot keep us here forever. */
        for (unsigned i = 0; i < 1024; i++) {
                r = sd_bus_process(c->bus, NULL);
                if (r < 0) {
                        if (!c->bus_ready)
                                ueb_set_error(c, r, "cannot connect to the bus: %s", strerror(-r));
                        bus_lost(c);
                        return;
                }
                if (!c->bus)
                        return;
                if (!c->bus_ready && sd_bus_is_ready(c->bus) > 0 && bus_became_ready(c) < 0) {
                        bus_lost(c);
                        return;
                }
                if (r == 0)
                        break;
        }
        if (!c->bus_ready && ueb_now_usec() >= c->connect_deadline_usec) {
                ueb_set_error(c, -ETIMEDOUT, "cannot connect to the bus: no answer within %llu ms",
                              (unsigned long long) (UEB_CONNECT_TIMEOUT_USEC / 1000));
                bus_lost(c);
        }
}

/* The session */

static void window_clear(struct ueb_client *c) {
        if (!c->window_holds_page)
                return;
        /* A zero page over the broker's page, in one step: a reader that
         * still holds a pointer into the window reads 0, never faults. */
        if (mmap(c->status_window, STATUS_PAGE_SIZE, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
            MAP_FAILED)
                c->window_holds_page = false;
}

void ueb_session_lose(struct ueb_client *c) {
        int old_fd;

        /* The one-load bytes read 0 before any event reads unregistered:
         * whoever saw ueb_registered() false sees them 0 too. */
        window_clear(c);
        LIST_FOREACH(events, e, c->events) {
                if (e->state == UEB_EVENT_REGISTERED)
                        e->state = UEB_EVENT_PENDING;
                __atomic_store_n(&e->head.status, &ueb_zero_status, __ATOMIC_RELEASE);
        }

        pthread_rwlock_wrlock(&c->swap_lock);
        LIST_FOREACH(events, e, c->events)
                e->registered = false;
        old_fd = c->data_fd;
        c->data_fd = -1;
        c->session_generation++;
        pthread_rwlock_unlock(&c->swap_lock);

        ueb_ring_drop(c);
        safe_close(old_fd);
        free(c->broker_owner);
        c->broker_owner = NULL;
        /* Try again soon (the rate limit in register_pending applies). */
        c->next_register_usec = 0;
}

void ueb_session_check_data_file(struct ueb_client *c) {
        struct pollfd p = { .fd = c->data_fd, .events = 0 };

        if (c->data_fd < 0)
                return;
        if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLNVAL)))
                ueb_session_lose(c);
}

/* Only a memfd sealed against shrinking (so it can never be truncated under
 * our mapping: SIGBUS) or a tracefs file is acceptable as status page. */
static int check_status_fd(struct ueb_client *c, int fd) {
        struct stat st;
        struct statfs sfs;
        int seals;

        if (fstat(fd, &st) < 0)
                return ueb_set_error(c, -errno, "cannot inspect the status page: %m");
        seals = fcntl(fd, F_GET_SEALS);
        if (seals >= 0) {
                if (!(seals & F_SEAL_SHRINK) || st.st_size < STATUS_PAGE_SIZE)
                        return ueb_set_error(c, -EPROTO, "the status page is not a sealed page of %d bytes",
                                             STATUS_PAGE_SIZE);
                return 0;
        }
        if (fstatfs(fd, &sfs) >= 0 && sfs.f_type == TRACEFS_MAGIC_NUMBER)
                return 0;
        return ueb_set_error(c, -EPROTO, "the status page is neither a sealed memfd nor a tracefs file");
}

/* Maps @fd over the status window. A fresh mapping first, so a bad fd leaves
 * the window alone, then moved over it atomically. */
static int window_map(struct ueb_client *c, int fd) {
        void *p;

        p = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        if (p == MAP_FAILED)
                return ueb_set_error(c, -errno, "cannot map the status page: %m");
        if (mremap(p, STATUS_PAGE_SIZE, STATUS_PAGE_SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, c->status_window) ==
            MAP_FAILED) {
                /* Some special mappings cannot move; map the file in place. */
                munmap(p, STATUS_PAGE_SIZE);
                if (mmap(c->status_window, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
                        return ueb_set_error(c, -errno, "cannot map the status page: %m");
        }
        c->window_holds_page = true;
        return 0;
}

static int session_adopt(struct ueb_client *c, int data_fd, int status_fd, const char *owner) {
        struct stat st;
        bool is_socket;
        char *owner_copy;
        int fd, r;

        if (fstat(data_fd, &st) < 0)
                return ueb_set_error(c, -errno, "cannot inspect the data file: %m");
        /* Sockets get sendmsg(MSG_NOSIGNAL); anything that could raise
         * SIGPIPE on writev() (a pipe) is refused. A kernel's restricted
         * handle (kernel/upstream-6.12/, the v1 provider's writer) is an
         * anonymous inode: no file type at all. */
        if (S_ISSOCK(st.st_mode))
                is_socket = true;
        else if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || (st.st_mode & S_IFMT) == 0)
                is_socket = false;
        else
                return ueb_set_error(c, -EPROTO, "the data file is neither a socket nor a file");

        r = check_status_fd(c, status_fd);
        if (r < 0)
                return r;

        owner_copy = strdup(owner);
        if (!owner_copy)
                return -ENOMEM;
        fd = fd_dup_cloexec(data_fd);
        if (fd < 0) {
                free(owner_copy);
                return ueb_set_error(c, fd, "cannot keep the data file: %s", strerror(-fd));
        }
        r = window_map(c, status_fd);
        if (r < 0) {
                safe_close(fd);
                free(owner_copy);
                return r;
        }

        pthread_rwlock_wrlock(&c->swap_lock);
        c->data_fd = fd;
        c->data_is_socket = is_socket;
        c->session_generation++;
        pthread_rwlock_unlock(&c->swap_lock);
        c->data_dev = st.st_dev;
        c->data_ino = st.st_ino;
        free(c->broker_owner);
        c->broker_owner = owner_copy;
        return 0;
}

static bool session_matches(const struct ueb_client *c, int data_fd, const char *owner) {
        struct stat st;

        return c->broker_owner && strcmp(c->broker_owner, owner) == 0 && fstat(data_fd, &st) >= 0 &&
               st.st_dev == c->data_dev && st.st_ino == c->data_ino;
}

/* Errors */

/* Answers that mean "no broker right now", not "no". */
static bool error_is_unavailable(const sd_bus_error *error) {
        static const char *const names[] = {
                SD_BUS_ERROR_SERVICE_UNKNOWN,
                SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                SD_BUS_ERROR_NO_REPLY,
                SD_BUS_ERROR_TIMEOUT,
                SD_BUS_ERROR_DISCONNECTED,
                SD_BUS_ERROR_UNKNOWN_OBJECT,
        };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (sd_bus_error_has_name(error, names[i]))
                        return true;
        return error->name && strncmp(error->name, "org.freedesktop.DBus.Error.Spawn.", 33) == 0;
}

/* Sorts an error answer: 0 = try again later (no broker right now, or no
 * answer in time), negative errno = a definitive refusal, message in
 * last_error. */
static int answer_refused(struct ueb_client *c, const sd_bus_error *error, const char *what) {
        int r = -sd_bus_error_get_errno(error), refusal;

        if (error_is_unavailable(error)) {
                ueb_set_error(c, r, "%s: the broker is not reachable: %s", what, error->message ?: error->name);
                return 0;
        }
        refusal = broker_error_contract_errno(error);
        if (refusal == 0 && sd_bus_error_has_names(error, SD_BUS_ERROR_ACCESS_DENIED,
                                                   SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED))
                refusal = -EACCES;
        if (refusal < 0)
                return ueb_set_error(c, refusal, "%s", error->message ?: error->name);
        /* An answer we do not know, e.g. from a broker of another version. */
        return ueb_set_error(c, r == -EIO || r >= 0 ? -EPROTO : r, "%s: %s: %s", what, error->name ?: "",
                             error->message ?: "");
}

/* Register */

/* 1: registered; 0: no broker (stays pending, retry timer set); negative
 * errno: refused. */
static int register_answer_apply(struct ueb_client *c, struct ueb_event *e, sd_bus_message *reply) {
        const char *owner;
        uint32_t status_index, write_index;
        int data_fd, status_fd, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *error = sd_bus_message_get_error(reply);

                /* Busy is "not now": the broker's queue is full, or the bus
                 * has not yet delivered its earlier replies to this uid.
                 * The event stays pending and is asked for again. */
                if (sd_bus_error_has_name(error, BROKER_ERROR_BUSY)) {
                        ueb_set_error(c, -EBUSY, "Register: %s", error->message ?: error->name);
                        c->next_register_usec = ueb_now_usec() + UEB_REGISTER_BUSY_RETRY_USEC;
                        return 0;
                }
                r = answer_refused(c, error, "Register");
                if (r == 0) {
                        c->broker_absent = true;
                        c->next_register_usec = ueb_now_usec() + UEB_REGISTER_RETRY_USEC;
                }
                return r;
        }

        r = sd_bus_message_read(reply, "hhuu", &data_fd, &status_fd, &status_index, &write_index);
        owner = sd_bus_message_get_sender(reply);
        if (r <= 0 || !owner)
                return ueb_set_error(c, -EPROTO, "Register: unexpected reply");
        if (status_index == 0 || status_index > STATUS_INDEX_MAX)
                return ueb_set_error(c, -EPROTO, "Register: status index %u is outside the page", status_index);

        /* Every Register of one connection returns the same data file; if
         * this one differs, the broker restarted between two calls. */
        if (c->data_fd >= 0 && !session_matches(c, data_fd, owner))
                ueb_session_lose(c);
        if (c->data_fd < 0) {
                r = session_adopt(c, data_fd, status_fd, owner);
                if (r < 0)
                        return r;
        }
        /* The first registration, or the first since the last went (the
         * broker released the ring with it). */
        ueb_ring_open_start(c);

        pthread_rwlock_wrlock(&c->swap_lock);
        e->write_index = write_index;
        e->registered = true;
        pthread_rwlock_unlock(&c->swap_lock);
        e->status_index = status_index;
        e->state = UEB_EVENT_REGISTERED;
        __atomic_store_n(&e->head.status, c->status_window + status_index, __ATOMIC_RELEASE);
        ueb_counter_add(&e->registrations);
        c->broker_absent = false;
        return 1;
}

/* Runs in ueb_session_process(), lock held. */
static int on_register_answer(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct ueb_event *e = ASSERT_PTR(userdata);
        int r;

        /* sd-bus holds its own reference while we run. */
        e->register_call = sd_bus_slot_unref(e->register_call);
        r = register_answer_apply(e->client, e, reply);
        if (r < 0) {
                e->state = UEB_EVENT_REFUSED;
                e->refusal = r;
        }
        e->answers++;
        return 0;
}

int ueb_session_register_event_start(struct ueb_client *c, struct ueb_event *e) {
        int r;

        if (!c->bus_ready || e->register_call)
                return 0;
        r = sd_bus_call_method_async(c->bus, &e->register_call, BROKER_BUS_NAME, BROKER_OBJECT_PATH,
                                     BROKER_INTERFACE, "Register", on_register_answer, e, "s", e->command);
        if (r < 0) {
                /* A dead connection is noticed by ueb_session_process();
                 * anything else (a full queue) gets a pause. */
                ueb_set_error(c, r, "Register: %s", strerror(-r));
                c->next_register_usec = ueb_now_usec() + UEB_REGISTER_RETRY_USEC;
                return 0;
        }
        return 1;
}

void ueb_session_register_event_cancel(struct ueb_event *e) {
        e->register_call = sd_bus_slot_unref(e->register_call);
}

bool ueb_session_has_pending(const struct ueb_client *c) {
        LIST_FOREACH(events, e, c->events)
                if (e->state == UEB_EVENT_PENDING && !e->register_call)
                        return true;
        return false;
}

void ueb_session_register_pending(struct ueb_client *c) {
        uint64_t now = ueb_now_usec();

        if (!c->bus_ready)
                return;
        if (now < c->last_register_round_usec + UEB_REGISTER_MIN_GAP_USEC) {
                c->next_register_usec = c->last_register_round_usec + UEB_REGISTER_MIN_GAP_USEC;
                return;
        }
        c->last_register_round_usec = now;

        /* All at once; each answer is applied on its own. A session change
         * in between sends events back to pending for the next round. */
        LIST_FOREACH(events, e, c->events) {
                if (e->state != UEB_EVENT_PENDING || e->register_call)
                        continue;
                if (ueb_session_register_event_start(c, e) == 0)
                        return;
        }
}

/* Unregister */

struct unregister_answer {
        struct ueb_client *client;
        bool answered;
        int result;
};

static bool any_registered(const struct ueb_client *c) {
        LIST_FOREACH(events, e, c->events)
                if (e->state == UEB_EVENT_REGISTERED)
                        return true;
        return false;
}

static int on_unregister_answer(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct unregister_answer *answer = ASSERT_PTR(userdata);
        int r = 0;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                /* 0 from answer_refused: the broker is gone, and with it the
                 * registration; still, it was not told. */
                r = answer_refused(answer->client, sd_bus_message_get_error(reply), "Unregister");
                if (r == 0)
                        r = -ENOTCONN;
        } else if (!any_registered(answer->client))
                /* The broker released the ring with the connection's last
                 * registration: what was written to it is read, nothing
                 * later would be. The next Register asks for a new one. */
                ueb_ring_drop(answer->client);
        answer->result = r;
        answer->answered = true;
        return 0;
}

int ueb_session_unregister_event(struct ueb_client *c, struct ueb_event *e, uint64_t deadline_usec) {
        /* Dropped before we return (lock held): the answer callback can
         * never run on our stack after that. */
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *call = NULL;
        struct unregister_answer answer = { .client = c };
        unsigned generation;
        int r;

        ueb_session_register_event_cancel(e);
        if (e->state != UEB_EVENT_REGISTERED)
                return 0;

        __atomic_store_n(&e->head.status, &ueb_zero_status, __ATOMIC_RELEASE);
        pthread_rwlock_wrlock(&c->swap_lock);
        e->registered = false;
        pthread_rwlock_unlock(&c->swap_lock);
        e->state = UEB_EVENT_PENDING;

        /* Another handle on the same event keeps the registration. */
        LIST_FOREACH(events, o, c->events)
                if (o != e && o->state == UEB_EVENT_REGISTERED && o->write_index == e->write_index)
                        return 0;
        if (!c->bus_ready)
                return 0;

        r = sd_bus_call_method_async(c->bus, &call, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE,
                                     "Unregister", on_unregister_answer, &answer, "u", e->write_index);
        if (r < 0)
                return ueb_set_error(c, r, "Unregister: %s", strerror(-r));
        generation = c->bus_generation;
        ueb_monitor_wake(c);

        while (!answer.answered) {
                if (c->bus_generation != generation)
                        return ueb_set_error(c, -ENOTCONN, "Unregister: the bus connection closed");
                if (ueb_now_usec() >= deadline_usec)
                        return ueb_set_error(c, -ETIMEDOUT, "Unregister: no answer within %d ms",
                                             UEB_CALL_WAIT_MAX_MSEC);
                (void) ueb_client_wait(c, deadline_usec);
        }
        return answer.result;
}
