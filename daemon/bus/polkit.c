/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Asynchronous polkit checks, rebuilt from public sd-bus pieces: the first
 * call of a handler sends CheckAuthorization and suspends; the answer is
 * stored with the method call, which is then re-queued with
 * sd_bus_enqueue_for_read(); the re-run handler asks again and gets the
 * stored verdict.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "bus-caller.h"
#include "cleanup.h"
#include "log.h"
#include "privileged-uid.h"
#include "polkit-queue.h"
#include "polkit.h"
#include "user-charges.h"
#include "macro.h"

#define POLKIT_BUS_NAME "org.freedesktop.PolicyKit1"
#define POLKIT_OBJECT "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_INTERFACE "org.freedesktop.PolicyKit1.Authority"
#define POLKIT_FLAG_ALLOW_USER_INTERACTION UINT32_C(1)

/* A person typing a password takes longer than sd-bus's default 25 s. */
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (UINT64_C(300) * 1000 * 1000)

struct polkit_query {
        struct polkit_registry *registry;
        /* Its place in the queue: the key (the suspended method call,
         * referenced below, its cookie and sender), the action, the uid
         * charged, and whether it is queued, sent or answered. */
        struct polkit_queue_entry entry;
        sd_bus_message *request;

        pid_t pid;
        bool interactive;
        /* Sent, and its caller has left: kept (still sent, still charged
         * to its uid) until polkit answers or the call times out, because
         * the bus counts it against the broker's pending calls until then
         * (dbus-daemon: 128). Dropping it at once let callers that come
         * and go fill that count, and every later check failed. */
        bool orphaned;

        sd_bus_slot *call_slot;         /* the CheckAuthorization in flight */
        sd_event_source *drop_source;   /* drops an answer the re-run did not take */

        int verdict;                    /* once answered: 1, or negative errno with error set */
        sd_bus_error error;
};

struct polkit_registry {
        sd_bus *bus;
        bool bus_is_system;
        sd_bus *system_bus;             /* opened on first need, off the system bus only */
        /* Every query, each charged to its uid (CHARGE_AUTHORIZATIONS); at
         * most POLKIT_MAX_IN_FLIGHT sent at once. */
        struct polkit_queue queue;
        size_t n_orphaned;              /* of them, sent for callers that left */
};

static struct polkit_query *query_of(struct polkit_queue_entry *e) {
        return (struct polkit_query *) ((char *) e - offsetof(struct polkit_query, entry));
}

static void start_queued(struct polkit_registry *reg);

static const struct {
        const char *action;
        const char *what;
} action_descriptions[] = {
        { "org.uebroker1.register", "register events" },
        { "org.uebroker1.register-foreign", "register events with names owned by another user" },
        { "org.uebroker1.delete", "delete events" },
        { "org.uebroker1.record", "record events" },
};

static const char *describe_action(const char *action) {
        for (size_t i = 0; i < sizeof(action_descriptions) / sizeof(action_descriptions[0]); i++)
                if (strcmp(action_descriptions[i].action, action) == 0)
                        return action_descriptions[i].what;
        return "do this";
}

static int set_denied(sd_bus_error *error, const char *action) {
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "Not authorized to %s (polkit action %s); an administrator can grant it with a polkit rule",
                                 describe_action(action), action);
}

static int set_unavailable(sd_bus_error *error, const char *action, const char *why) {
        sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                          "Not authorized to %s (polkit action %s): polkit is unavailable (%s), so the request is refused",
                          describe_action(action), action, why);
        return -EACCES;
}

static struct polkit_query *polkit_query_free(struct polkit_query *q) {
        struct polkit_registry *reg;

        if (!q)
                return NULL;
        reg = q->registry;
        if (q->orphaned)
                reg->n_orphaned--;
        polkit_queue_remove(&reg->queue, &q->entry);

        sd_bus_slot_unref(q->call_slot);        /* cancels the reply callback */
        sd_event_source_disable_unref(q->drop_source);
        sd_bus_message_unref(q->request);
        sd_bus_error_free(&q->error);
        free(q);
        return NULL;
}

/* Field 22 of /proc/PID/stat, the start time polkit uses to tell a process
 * from a later one with the same pid. */
static int process_start_time(pid_t pid, uint64_t *ret) {
        char path[64], buf[1024];
        const char *p;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%" PRIi32 "/stat", (int32_t) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        if (n < 0)
                n = -errno;
        close(fd);
        if (n < 0)
                return (int) n;
        buf[n] = '\0';

        /* The command name in parentheses may contain anything, ')' included. */
        p = strrchr(buf, ')');
        if (!p)
                return -EIO;
        p++;
        for (int field = 3; field <= 22; field++) {
                char *end;
                unsigned long long v;

                while (*p == ' ')
                        p++;
                if (field < 22) {
                        p = strchr(p, ' ');
                        if (!p)
                                return -EIO;
                        continue;
                }
                errno = 0;
                v = strtoull(p, &end, 10);
                if (errno != 0 || end == p || (*end != ' ' && *end != '\n' && *end != '\0'))
                        return -EIO;
                *ret = v;
        }
        return 0;
}

static int on_drop_unclaimed(sd_event_source *s, void *userdata) {
        /* Idle priority: runs once the bus queue is drained, i.e. after the
         * re-queued call was dispatched without asking for its answer (the
         * handler failed before authorizing, say). */
        polkit_query_free(userdata);
        return 0;
}

static int verdict_from_reply(struct polkit_query *q, sd_bus_message *reply) {
        int authorized, challenge, r;

        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);

                log_debug("polkit check of %s for %s failed: %s: %s", q->entry.action, q->entry.sender,
                          e ? e->name : "?", e && e->message ? e->message : "");
                return set_unavailable(&q->error, q->entry.action, e && e->name ? e->name : "error reply");
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r > 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r <= 0)
                return set_unavailable(&q->error, q->entry.action, "malformed answer");

        if (authorized)
                return 1;
        if (challenge)
                return sd_bus_error_setf(&q->error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                         "Authentication is required to %s (polkit action %s); "
                                         "call again allowing interactive authorization with an authentication agent running",
                                         describe_action(q->entry.action), q->entry.action);
        return set_denied(&q->error, q->entry.action);
}

/* The verdict is in (@q->verdict, @q->error): re-run the suspended call,
 * which takes it. */
static void query_answered(struct polkit_query *q) {
        sd_bus *request_bus = sd_bus_message_get_bus(q->request);
        sd_event *event;
        int r;

        polkit_queue_answered(&q->registry->queue, &q->entry);
        r = sd_bus_enqueue_for_read(request_bus, q->request);
        if (r < 0) {
                log_warning_errno(r, "Cannot resume a call of %s after its polkit check: %m", q->entry.sender);
                (void) sd_bus_reply_method_errnof(q->request, r, "Cannot resume the call after the authorization check: %m");
                polkit_query_free(q);
                return;
        }

        event = sd_bus_get_event(request_bus);
        if (event) {
                r = sd_event_add_defer(event, &q->drop_source, on_drop_unclaimed, q);
                if (r >= 0)
                        r = sd_event_source_set_priority(q->drop_source, SD_EVENT_PRIORITY_IDLE);
                if (r < 0) {
                        /* Not fatal: the answer is still dropped when the
                         * sender goes away or the registry is freed. */
                        log_debug_errno(r, "Cannot schedule dropping an unclaimed polkit answer: %m");
                        q->drop_source = sd_event_source_disable_unref(q->drop_source);
                }
        }
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct polkit_query *q = ASSERT_PTR(userdata);
        struct polkit_registry *reg = q->registry;

        q->call_slot = sd_bus_slot_unref(q->call_slot);
        if (q->orphaned) {
                polkit_query_free(q);   /* nobody to answer: its slot is free now */
                start_queued(reg);
                return 0;
        }
        q->verdict = verdict_from_reply(q, reply);
        query_answered(q);
        start_queued(reg);
        return 0;
}

static int system_bus_for_polkit(struct polkit_registry *reg, sd_bus **ret) {
        sd_event *event;
        int r;

        if (reg->system_bus && sd_bus_is_open(reg->system_bus) > 0) {
                *ret = reg->system_bus;
                return 0;
        }
        reg->system_bus = sd_bus_close_unref(reg->system_bus);

        r = sd_bus_open_system_with_description(&reg->system_bus, "polkit");
        if (r < 0)
                return r;
        (void) sd_bus_set_exit_on_disconnect(reg->system_bus, false);
        event = sd_bus_get_event(reg->bus);
        if (event) {
                r = sd_bus_attach_event(reg->system_bus, event, SD_EVENT_PRIORITY_NORMAL);
                if (r < 0) {
                        reg->system_bus = sd_bus_close_unref(reg->system_bus);
                        return r;
                }
        }
        *ret = reg->system_bus;
        return 0;
}

static int append_subject(struct polkit_registry *reg, sd_bus_message *call, const char *sender, uid_t uid,
                          pid_t pid, const char *action, sd_bus_error *error) {
        uint64_t start_time;
        int r;

        if (reg->bus_is_system)
                return sd_bus_message_append(call, "(sa{sv})", "system-bus-name", 1, "name", "s", sender);

        r = process_start_time(pid, &start_time);
        if (r < 0) {
                log_debug_errno(r, "Cannot read the start time of pid %" PRIi32 ": %m", (int32_t) pid);
                sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Not authorized to %s (polkit action %s): the calling process cannot be identified",
                                  describe_action(action), action);
                return -EACCES;
        }
        return sd_bus_message_append(call, "(sa{sv})", "unix-process", 3, "pid", "u", (uint32_t) pid, "start-time",
                                     "t", start_time, "uid", "i", (int32_t) uid);
}

/* Sends CheckAuthorization for @q; negative errno with @error set when the
 * check cannot even be asked (which is a denial). */
static int start_query(struct polkit_query *q, sd_bus_error *error) {
        struct polkit_registry *reg = q->registry;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        sd_bus *polkit_bus;
        int r;

        if (reg->bus_is_system)
                polkit_bus = reg->bus;
        else {
                r = system_bus_for_polkit(reg, &polkit_bus);
                if (r < 0) {
                        log_debug_errno(r, "Cannot connect to the system bus for polkit: %m");
                        return set_unavailable(error, q->entry.action, "no system bus");
                }
        }

        r = sd_bus_message_new_method_call(polkit_bus, &call, POLKIT_BUS_NAME, POLKIT_OBJECT, POLKIT_INTERFACE,
                                           "CheckAuthorization");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot ask polkit: %m");
        r = append_subject(reg, call, q->entry.sender, q->entry.uid, q->pid, q->entry.action, error);
        if (r == -EACCES)
                return r;
        if (r >= 0)
                r = sd_bus_message_append(call, "sa{ss}us", q->entry.action, 0,
                                          q->interactive ? POLKIT_FLAG_ALLOW_USER_INTERACTION : 0, "");
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot ask polkit: %m");

        r = sd_bus_call_async(polkit_bus, &q->call_slot, call, on_polkit_reply, q,
                              q->interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : 0);
        if (r < 0) {
                log_debug_errno(r, "Cannot send CheckAuthorization: %m");
                return set_unavailable(error, q->entry.action, "cannot send to it");
        }
        polkit_queue_sent(&reg->queue, &q->entry);
        return 0;
}

/* Sends queued checks, oldest first, while fewer than POLKIT_MAX_IN_FLIGHT
 * are out. A check that cannot be sent is answered with its error. */
static void start_queued(struct polkit_registry *reg) {
        struct polkit_queue_entry *e;

        while ((e = polkit_queue_next(&reg->queue))) {
                struct polkit_query *oldest = query_of(e);

                oldest->verdict = start_query(oldest, &oldest->error);
                if (oldest->verdict < 0)
                        query_answered(oldest);
        }
}

int polkit_registry_new(sd_bus *bus, bool bus_is_system, struct user_charges *charges,
                        struct polkit_registry **ret) {
        struct polkit_registry *reg;

        if (!bus || !ret || !charges)
                return -EINVAL;
        reg = calloc(1, sizeof(*reg));
        if (!reg)
                return -ENOMEM;
        reg->bus = sd_bus_ref(bus);
        reg->bus_is_system = bus_is_system;
        polkit_queue_init(&reg->queue, charges, POLKIT_MAX_IN_FLIGHT);
        *ret = reg;
        return 0;
}

struct polkit_registry *polkit_registry_free(struct polkit_registry *reg) {
        if (!reg)
                return NULL;
        while (reg->queue.entries)
                polkit_query_free(query_of(reg->queue.entries));
        sd_bus_close_unref(reg->system_bus);
        sd_bus_unref(reg->bus);
        free(reg);
        return NULL;
}

size_t polkit_registry_n_queries(const struct polkit_registry *reg) {
        assert(reg);
        return reg ? reg->queue.n - reg->n_orphaned : 0;
}

size_t polkit_registry_n_orphaned(const struct polkit_registry *reg) {
        assert(reg);
        return reg ? reg->n_orphaned : 0;
}

/* Why polkit_queue_add() did not queue a check (@r): -EBUSY with
 * LimitsExceeded when a bound is reached, else @r. */
static int set_not_queued(struct polkit_registry *reg, uid_t uid, int r, sd_bus_error *error) {
        const struct charge_bound *bound = &reg->queue.charges->bounds.kind[CHARGE_AUTHORIZATIONS];

        if (r == -EDQUOT) {
                sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                  "Too many authorization checks of uid %u in progress (at most %" PRIu64
                                  ", AuthorizationsPerUser=); wait for their answers and try again",
                                  (unsigned) uid, bound->share);
                return -EBUSY;
        }
        if (r == -ENOSPC) {
                sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                  "Too many authorization checks of all users are in progress (at most %" PRIu64
                                  "); try again in a moment",
                                  bound->pool);
                return -EBUSY;
        }
        if (r == -EUSERS) {
                char holders[160];

                sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                  "uid %u has its part (%" PRIu64 ") of the authorization checks that %" PRIu64
                                  " uids share now; most are held by %s; wait for their answers and try again",
                                  (unsigned) uid, user_charges_held(reg->queue.charges, uid, CHARGE_AUTHORIZATIONS),
                                  reg->queue.charges->holders[CHARGE_AUTHORIZATIONS],
                                  user_charges_holders_text(reg->queue.charges, CHARGE_AUTHORIZATIONS, holders,
                                                            sizeof(holders)));
                return -EBUSY;
        }
        return r;
}

int polkit_check(struct polkit_registry *reg, sd_bus_message *m, const char *action, bool interactive, uid_t uid,
                 pid_t pid, sd_bus_error *error) {
        struct polkit_queue_entry *e;
        struct polkit_query *q;
        const char *sender;
        uint64_t cookie = 0;
        int r;

        if (!reg || !m || !action)
                return -EINVAL;
        sender = sd_bus_message_get_sender(m) ?: "";
        (void) sd_bus_message_get_cookie(m, &cookie);

        e = polkit_queue_find(&reg->queue, m, cookie, sender);
        if (e) {
                q = query_of(e);
                switch (polkit_queue_match(e, action)) {
                case POLKIT_MATCH_PENDING:
                        return 0;
                case POLKIT_MATCH_CONFLICT:
                        sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                          "An authorization check for this call is still pending");
                        return -EBUSY;
                case POLKIT_MATCH_VERDICT:
                        r = q->verdict;
                        if (r < 0)
                                sd_bus_error_move(error, &q->error);
                        polkit_query_free(q);
                        return r;
                case POLKIT_MATCH_STALE:
                        /* The handler now needs another action (the state
                         * changed while polkit was asked): that answer
                         * does not apply. */
                        polkit_query_free(q);
                        break;
                }
        }

        /* Privileged callers skip polkit, as systemd's services do. */
        if (uid_privileged(uid))
                return 1;

        if (reg->bus_is_system ? sender[0] == '\0' : pid <= 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                         "Not authorized to %s (polkit action %s): the caller cannot be identified",
                                         describe_action(action), action);

        q = calloc(1, sizeof(*q));
        if (!q)
                return -ENOMEM;
        r = polkit_queue_add(&reg->queue, &q->entry, m, cookie, sender, action, uid);
        if (r < 0) {
                free(q);
                return set_not_queued(reg, uid, r, error);
        }
        q->registry = reg;
        q->request = sd_bus_message_ref(m);
        q->pid = pid;
        q->interactive = interactive;

        if (polkit_queue_may_send_for(&reg->queue, uid)) {
                r = start_query(q, error);
                if (r < 0) {
                        polkit_query_free(q);
                        return r;
                }
        }
        return 0;
}

/* @q's caller left: a check still out stays until polkit answers it (see
 * polkit_query.orphaned); anything else goes now. */
static void query_forget(struct polkit_query *q) {
        if (q->orphaned)
                return;
        if (q->entry.state != POLKIT_SENT || !q->call_slot) {
                polkit_query_free(q);
                return;
        }
        q->orphaned = true;
        q->registry->n_orphaned++;
        q->request = sd_bus_message_unref(q->request);
}

void polkit_registry_forget_sender(struct polkit_registry *reg, const char *sender) {
        if (!reg || !sender)
                return;
        LIST_FOREACH_SAFE(entries, e, next, reg->queue.entries)
                if (strcmp(e->sender, sender) == 0)
                        query_forget(query_of(e));
        start_queued(reg);
}
