/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/bus/peer.c and daemon/core/data-session.c: identification, what a peer
 * and its data sessions may hold.
 *
 * No bus daemon: the broker's connection is one end of a socket pair, an
 * sd-bus client as on a real bus; the other end is a stand-in for the bus
 * that answers Hello, holds GetConnectionCredentials until a test answers
 * it, and counts the replies the broker sends to its callers. The calls
 * given to peer_identify() are built here with the sender a bus would
 * have set; one re-queued by the session (sd_bus_enqueue_for_read()) is
 * dispatched to a handler that asks again, as the broker's handlers do.
 * Sessions hold the real embedded provider's data sessions and rings; a
 * double adds the grants the embedded provider lacks (grant_ops). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "check-tap.h"
#include "cleanup.h"

#include "broker-bus.h"
#include "event-registry.h"
#include "fd-util.h"
#include "ring.h"
#include "peer.h"
#include "status-text.h"
#include "user-charges.h"

#define CLIENTS_MAX 8u
#define CLIENTS_SHARE 2u
#define RING_SIZE_MIN (RING_HEADER_SIZE + RING_DATA_MIN)
#define N_HELD_MAX 512u      /* the unidentified pool of test_unidentified_share_a_pool, and more */
#define N_RERUNS_MAX (PEER_WAITING_MAX + 8)

static sd_event *event;
static sd_bus *broker_bus;      /* the broker's connection: a bus client */
static sd_bus *bus;             /* the stand-in for the bus daemon */
static struct provider_link plink;
static struct user_charges charges;
static struct event_registry events;
static struct peer_registry sessions;
static uint64_t next_cookie;

/* What the stand-in for the bus saw. */
static struct {
        sd_bus_message *held[N_HELD_MAX];       /* GetConnectionCredentials not answered yet */
        unsigned n_held;
        unsigned n_credentials;                 /* GetConnectionCredentials asked in all */
        unsigned n_returns;                     /* replies to callers */
        unsigned n_errors;                      /* error replies to callers */
        char last_error[256];
        char last_message[512];
} seen;

/* What the handler saw of calls re-run after identification. */
static struct {
        uint64_t cookies[N_RERUNS_MAX];
        unsigned n;
        uid_t uid;                              /* of the last one's session */
} reruns;

/* The embedded provider with grants kept as the kernel's restricted
 * handles keep them (kernel/upstream-6.12/README.md, "The interface"):
 * granting again is no error, withdrawing what is not granted is -ENOENT.
 * Only kernel providers have grants, so without it no test here would see
 * the broker forget to withdraw one. A grant outlives session_free(), as
 * it outlives the broker's file in the kernel (the client keeps its
 * handle): only the broker's withdrawal ends it. */
#define GRANTS_MAX 16u

static struct provider_ops grant_ops;
static struct {
        struct {
                const struct provider_session *session;
                const struct provider_event *event;
        } held[GRANTS_MAX];
        unsigned n;
        unsigned n_freed_holding;       /* session_free() of a session still holding grants */
} grants;

static int grant_find(const struct provider_session *s, const struct provider_event *ev) {
        for (unsigned i = 0; i < grants.n; i++)
                if (grants.held[i].session == s && grants.held[i].event == ev)
                        return (int) i;
        return -ENOENT;
}

static bool double_granted(const struct provider_session *s, const struct provider_event *ev) {
        return grant_find(s, ev) >= 0;
}

static int double_grant(struct provider *p, struct provider_session *s, struct provider_event *ev) {
        ck_assert_ptr_nonnull(s);
        ck_assert_ptr_nonnull(ev);
        if (double_granted(s, ev))
                return 0;
        ck_assert_uint_lt(grants.n, GRANTS_MAX);
        grants.held[grants.n].session = s;
        grants.held[grants.n++].event = ev;
        return 0;
}

static int double_withdraw(struct provider *p, struct provider_session *s, struct provider_event *ev) {
        int i = grant_find(s, ev);

        if (i < 0)
                return i;
        grants.held[i] = grants.held[--grants.n];
        return 0;
}

/* provider.h: the broker withdraws every grant before session_free(). */
static void double_session_free(struct provider *p, struct provider_session *s) {
        for (unsigned i = 0; i < grants.n; i++)
                if (grants.held[i].session == s)
                        grants.n_freed_holding++;
        embedded_provider_ops.session_free(p, s);
}

/* Ordinary uids, neither root nor whoever runs the test (both are exempt
 * from some shares). */
static uid_t plain_uid(unsigned i) {
        uid_t uid = 50000 + i;

        return uid == geteuid() ? uid + 100 : uid;
}

static int on_bus_message(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        uint8_t type;

        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "Hello"))
                return sd_bus_reply_method_return(m, "s", ":1.1");
        if (sd_bus_message_is_method_call(m, "org.freedesktop.DBus", "GetConnectionCredentials")) {
                ck_assert_uint_lt(seen.n_held, N_HELD_MAX);
                seen.held[seen.n_held++] = sd_bus_message_ref(m);
                seen.n_credentials++;
                return 1;
        }
        if (sd_bus_message_is_method_error(m, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(m);

                seen.n_errors++;
                snprintf(seen.last_error, sizeof(seen.last_error), "%s", e->name);
                snprintf(seen.last_message, sizeof(seen.last_message), "%s", e->message ?: "");
                return 1;
        }
        if (sd_bus_message_get_type(m, &type) >= 0 && type == SD_BUS_MESSAGE_METHOD_RETURN)
                seen.n_returns++;
        return 1;
}

/* A method handler of the broker: who is calling, then the reply. */
static int on_call(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct peer *s;
        uint64_t cookie = 0;
        int r;

        ck_assert_int_ge(sd_bus_message_get_cookie(m, &cookie), 0);
        ck_assert_uint_lt(reruns.n, N_RERUNS_MAX);
        reruns.cookies[reruns.n++] = cookie;
        r = peer_identify(&sessions, m, error, &s);
        if (r <= 0)
                return r < 0 ? r : 1;
        reruns.uid = s->uid;
        return sd_bus_reply_method_return(m, "");
}

/* Runs the loop until nothing is left to do. */
static void settle(void) {
        for (unsigned i = 0; i < 1000; i++) {
                int r = sd_event_run(event, 10 * 1000);

                ck_assert_int_ge(r, 0);
                if (r == 0)
                        return;
        }
        ck_abort_msg("the loop does not settle");
}

static void setup(void) {
        struct charge_bounds bounds = {
                .kind = {
                        [CHARGE_CONNECTIONS] = { .pool = 1000, .share = 1000, .privileged_exempt = true },
                        [CHARGE_CLIENTS] = { .pool = CLIENTS_MAX, .share = CLIENTS_SHARE },
                        [CHARGE_EVENTS] = { .pool = STATUS_INDEX_MAX, .share = STATUS_INDEX_MAX },
                        [CHARGE_RING_BYTES] = { .pool = 8 * RING_SIZE_MIN, .share = 3 * RING_SIZE_MIN },
                },
        };
        int pair[2];
        sd_id128_t id;

        memset(&seen, 0, sizeof(seen));
        memset(&reruns, 0, sizeof(reruns));
        memset(&grants, 0, sizeof(grants));
        next_cookie = 1000;
        ck_assert_int_eq(sd_event_new(&event), 0);

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, pair), 0);
        ck_assert_int_eq(sd_id128_randomize(&id), 0);
        ck_assert_int_eq(sd_bus_new(&bus), 0);
        ck_assert_int_eq(sd_bus_set_fd(bus, pair[1], pair[1]), 0);
        ck_assert_int_eq(sd_bus_set_server(bus, true, id), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        ck_assert_int_eq(sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL), 0);
        ck_assert_int_eq(sd_bus_add_filter(bus, NULL, on_bus_message, NULL), 0);

        ck_assert_int_eq(sd_bus_new(&broker_bus), 0);
        ck_assert_int_eq(sd_bus_set_fd(broker_bus, pair[0], pair[0]), 0);
        ck_assert_int_eq(sd_bus_set_bus_client(broker_bus, true), 0);
        ck_assert_int_ge(sd_bus_start(broker_bus), 0);
        ck_assert_int_eq(sd_bus_attach_event(broker_bus, event, SD_EVENT_PRIORITY_NORMAL), 0);
        ck_assert_int_eq(sd_bus_add_object(broker_bus, NULL, BROKER_OBJECT_PATH, on_call, NULL), 0);
        /* Hello answered: nothing may come before its reply. */
        for (unsigned i = 0; i < 100 && sd_bus_is_ready(broker_bus) <= 0; i++)
                ck_assert_int_ge(sd_event_run(event, 100 * 1000), 0);
        ck_assert_int_gt(sd_bus_is_ready(broker_bus), 0);

        /* Everything else is the embedded provider's own. */
        grant_ops = embedded_provider_ops;
        grant_ops.name = "embedded+grants";
        grant_ops.self_registration = true;     /* session_grant is only for such providers */
        grant_ops.session_grant = double_grant;
        grant_ops.session_withdraw = double_withdraw;
        grant_ops.session_free = double_session_free;
        ck_assert_int_eq(provider_link_start(&plink, event, &grant_ops, NULL), 0);
        user_charges_init(&charges, &bounds);
        event_registry_init(&events, &plink, &charges);
        peer_registry_init(&sessions, broker_bus, &plink, &events, NULL, &charges, "test.conf", CLIENTS_MAX);
}

static void teardown(void) {
        peer_registry_done(&sessions);
        ck_assert_uint_eq(sessions.n, 0);
        /* Every session ended: every grant withdrawn, before its end. */
        ck_assert_uint_eq(grants.n, 0);
        ck_assert_uint_eq(grants.n_freed_holding, 0);
        event_registry_done(&events);
        provider_link_stop(&plink);
        /* Everything charged was released. */
        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                ck_assert_uint_eq(charges.total[k], 0);
        ck_assert_uint_eq(charges.n_accounts, 0);
        user_charges_done(&charges);
        for (unsigned i = 0; i < seen.n_held; i++)
                sd_bus_message_unref(seen.held[i]);
        broker_bus = sd_bus_close_unref(broker_bus);
        bus = sd_bus_close_unref(bus);
        event = sd_event_unref(event);
}

/* A call of @sender (NULL: none) as the bus would deliver it. */
static sd_bus_message *call_from(const char *sender) {
        sd_bus_message *m = NULL;

        ck_assert_int_eq(sd_bus_message_new_method_call(broker_bus, &m, BROKER_BUS_NAME, BROKER_OBJECT_PATH,
                                                        BROKER_INTERFACE, "Register"), 0);
        if (sender)
                ck_assert_int_eq(sd_bus_message_set_sender(m, sender), 0);
        ck_assert_int_eq(sd_bus_message_seal(m, next_cookie++, 0), 0);
        return m;
}

/* peer_identify() of a new call of @sender; the call is dropped (a
 * waiting one is still held by the session). */
static int identify(const char *sender, sd_bus_error *error, struct peer **ret) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = call_from(sender);
        struct peer *s = NULL;
        int r = peer_identify(&sessions, m, error, &s);

        if (ret)
                *ret = s;
        return r;
}

/* Like identify(), expecting the call to wait. */
static void identify_waits(const char *sender) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        ck_assert_int_eq(identify(sender, &error, NULL), 0);
        ck_assert(!sd_bus_error_is_set(&error));
}

/* The held GetConnectionCredentials for @sender, taken out of seen.held. */
static sd_bus_message *take_held(const char *sender) {
        for (unsigned i = 0; i < seen.n_held; i++) {
                sd_bus_message *m = seen.held[i];
                const char *name;

                ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
                ck_assert_int_ge(sd_bus_message_read(m, "s", &name), 0);
                if (strcmp(name, sender) == 0) {
                        memmove(&seen.held[i], &seen.held[i + 1], (seen.n_held - i - 1) * sizeof(seen.held[0]));
                        seen.n_held--;
                        return m;
                }
        }
        ck_abort_msg("nobody asked who %s is", sender);
        return NULL;
}

/* The bus answers who @sender is: @uid, and @pid unless it is negative. */
static void answer(const char *sender, uid_t uid, pid_t pid) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = take_held(sender);

        if (pid < 0)
                ck_assert_int_ge(sd_bus_reply_method_return(m, "a{sv}", 1, "UnixUserID", "u", (uint32_t) uid), 0);
        else
                ck_assert_int_ge(sd_bus_reply_method_return(m, "a{sv}", 3, "UnixUserID", "u", (uint32_t) uid,
                                                            "ProcessID", "u", (uint32_t) pid, "Other", "s", "x"),
                                 0);
        settle();
}

static void answer_error(const char *sender) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = take_held(sender);

        ck_assert_int_ge(sd_bus_reply_method_errorf(m, "org.freedesktop.DBus.Error.NameHasNoOwner",
                                                    "no such name"), 0);
        settle();
}

/* A session of @sender identified as @uid (this process's pid, which the
 * provider session records). */
static struct peer *identified(const char *sender, uid_t uid) {
        struct peer *s;

        identify_waits(sender);
        settle();
        answer(sender, uid, getpid());
        s = peer_find(&sessions, sender);
        ck_assert_ptr_nonnull(s);
        ck_assert(s->identified);
        return s;
}

static struct broker_event *add_event(const char *command) {
        struct event_def *def = NULL;
        struct broker_event *ev = NULL;

        ck_assert_int_eq(event_def_parse(command, 0, &def, NULL), 0);
        ck_assert_int_eq(event_registry_add(&events, def, plain_uid(9), &ev), 0);
        return ev;
}

/* Identification */

START_TEST(test_asked_once_then_served) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct peer *s = NULL, *again = NULL;
        uint64_t first = next_cookie;

        /* The first call asks the bus and waits; so does the second,
         * without asking again. */
        identify_waits(":1.7");
        identify_waits(":1.7");
        settle();
        ck_assert_uint_eq(seen.n_credentials, 1);
        ck_assert_uint_eq(sessions.n, 1);
        s = peer_find(&sessions, ":1.7");
        ck_assert_ptr_nonnull(s);
        ck_assert(!s->identified);
        ck_assert_uint_eq(s->n_waiting, 2);
        ck_assert_uint_eq(reruns.n, 0);

        /* The answer: both calls run again, in order, and are served as
         * the uid the bus named. */
        answer(":1.7", plain_uid(1), 4242);
        ck_assert(s->identified);
        ck_assert_uint_eq(s->uid, plain_uid(1));
        ck_assert_int_eq(s->pid, 4242);
        ck_assert_uint_eq(s->n_waiting, 0);
        ck_assert_uint_eq(reruns.n, 2);
        ck_assert_uint_eq(reruns.cookies[0], first);
        ck_assert_uint_eq(reruns.cookies[1], first + 1);
        ck_assert_uint_eq(reruns.uid, plain_uid(1));
        ck_assert_uint_eq(seen.n_returns, 2);
        ck_assert_uint_eq(seen.n_errors, 0);

        /* Later calls: at once, the same session, nobody asked. */
        ck_assert_int_eq(identify(":1.7", &error, &again), 1);
        ck_assert_ptr_eq(again, s);
        settle();
        ck_assert_uint_eq(seen.n_credentials, 1);
        ck_assert_uint_eq(sessions.n, 1);
}
END_TEST

START_TEST(test_no_sender_refused) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        ck_assert_int_lt(identify(NULL, &error, NULL), 0);
        ck_assert_str_eq(error.name, SD_BUS_ERROR_ACCESS_DENIED);
        ck_assert_ptr_nonnull(strstr(error.message, "carries no sender name"));
        ck_assert_uint_eq(sessions.n, 0);
        settle();
        ck_assert_uint_eq(seen.n_credentials, 0);
}
END_TEST

START_TEST(test_waiting_calls_bounded) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        uint64_t first = next_cookie;

        for (unsigned i = 0; i < PEER_WAITING_MAX; i++)
                identify_waits(":1.8");
        /* One more of that connection is refused; another connection is
         * not held up by it. */
        ck_assert_int_lt(identify(":1.8", &error, NULL), 0);
        ck_assert_str_eq(error.name, SD_BUS_ERROR_LIMITS_EXCEEDED);
        ck_assert_ptr_nonnull(strstr(error.message, "128 calls of this connection already wait"));
        identify_waits(":1.9");
        settle();
        ck_assert_uint_eq(seen.n_credentials, 2);

        /* Every call that waited runs again, in order. */
        answer(":1.8", plain_uid(1), getpid());
        ck_assert_uint_eq(reruns.n, PEER_WAITING_MAX);
        for (unsigned i = 0; i < PEER_WAITING_MAX; i++)
                ck_assert_uint_eq(reruns.cookies[i], first + i);
        ck_assert_uint_eq(seen.n_returns, PEER_WAITING_MAX);
        ck_assert_uint_eq(peer_find(&sessions, ":1.8")->n_waiting, 0);
        answer(":1.9", plain_uid(2), getpid());
        ck_assert_uint_eq(reruns.n, PEER_WAITING_MAX + 1);
}
END_TEST

START_TEST(test_clients_bounded) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;

        sessions.max = 3;
        /* Sessions count from their first call, identified or not. */
        identify_waits(":1.10");
        identify_waits(":1.11");
        identified(":1.12", plain_uid(1));
        ck_assert_uint_eq(sessions.n, 3);
        ck_assert_int_lt(identify(":1.13", &error, NULL), 0);
        ck_assert_str_eq(error.name, BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_ptr_nonnull(strstr(error.message, "already serves 3 connections (Clients=, the default; set it in test.conf)"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.13"));
        sd_bus_error_free(&error);

        /* The connections it has are still served. */
        identify_waits(":1.10");
        ck_assert_int_eq(identify(":1.12", &error, NULL), 1);

        /* One leaves, or fails to be identified: room for another. */
        peer_gone(&sessions, ":1.10");
        ck_assert_uint_eq(sessions.n, 2);
        identify_waits(":1.13");
        ck_assert_int_lt(identify(":1.14", &error, NULL), 0);
        sd_bus_error_free(&error);
        settle();
        answer_error(":1.11");
        ck_assert_uint_eq(sessions.n, 2);
        identify_waits(":1.14");
        ck_assert_uint_eq(sessions.n, 3);
}
END_TEST

/* Every identified connection is charged to its uid, whatever it calls:
 * one uid gets its part of Clients=, root the rest; the unidentified share
 * a pool of their own. */
START_TEST(test_connections_charged_to_their_uid) {
        struct charge_bounds bounds = charges.bounds;
        char name[16];
        unsigned i;

        bounds.kind[CHARGE_CONNECTIONS] = (struct charge_bound) { .pool = 8, .share = 8, .privileged_exempt = true };
        user_charges_set_bounds(&charges, &bounds);
        /* Alone: half of the 8. */
        for (i = 0; i < 4; i++) {
                snprintf(name, sizeof(name), ":1.%u", 30 + i);
                identified(name, plain_uid(1));
        }
        ck_assert_uint_eq(user_charges_held(&charges, plain_uid(1), CHARGE_CONNECTIONS), 4);
        identify_waits(":1.40");
        settle();
        answer(":1.40", plain_uid(1), getpid());
        ck_assert_ptr_null(peer_find(&sessions, ":1.40"));
        ck_assert_str_eq(seen.last_error, BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_ptr_nonnull(strstr(seen.last_message, "holds its part (4) of the 8 connections the broker serves"));
        ck_assert_uint_eq(sessions.n_unidentified, 0);
        /* Root is served from the rest. */
        for (i = 0; i < 4; i++) {
                snprintf(name, sizeof(name), ":1.%u", 50 + i);
                identified(name, 0);
        }
        ck_assert_uint_eq(charges.total[CHARGE_CONNECTIONS], 8);
        /* Gone: given back. */
        peer_gone(&sessions, ":1.30");
        ck_assert_uint_eq(user_charges_held(&charges, plain_uid(1), CHARGE_CONNECTIONS), 3);
}
END_TEST

START_TEST(test_unidentified_share_a_pool) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        char name[16];
        unsigned i, max;

        sessions.max = 1000;
        max = peer_unidentified_max(sessions.max);
        ck_assert_uint_eq(max, 250);
        for (i = 0; i < max; i++) {
                snprintf(name, sizeof(name), ":1.%u", 100 + i);
                identify_waits(name);
        }
        ck_assert_uint_eq(sessions.n_unidentified, max);
        ck_assert_int_lt(identify(":1.99", &error, NULL), 0);
        ck_assert_str_eq(error.name, BROKER_ERROR_BUSY);
        ck_assert_ptr_nonnull(strstr(error.message, "250 connections already wait for the bus"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.99"));
        /* Identified: room again. */
        settle();
        answer(":1.100", plain_uid(1), getpid());
        ck_assert_uint_eq(sessions.n_unidentified, max - 1);
        identify_waits(":1.99");
}
END_TEST

START_TEST(test_unidentified_calls_refused) {
        identify_waits(":1.20");
        identify_waits(":1.20");
        settle();
        answer_error(":1.20");
        /* Each waiting call gets the refusal; none runs; the session is
         * gone, so the next call asks again. */
        ck_assert_uint_eq(reruns.n, 0);
        ck_assert_uint_eq(seen.n_errors, 2);
        ck_assert_uint_eq(seen.n_returns, 0);
        ck_assert_str_eq(seen.last_error, SD_BUS_ERROR_ACCESS_DENIED);
        ck_assert_ptr_nonnull(
                strstr(seen.last_message, "did not say who it is (org.freedesktop.DBus.Error.NameHasNoOwner)"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.20"));
        ck_assert_uint_eq(sessions.n, 0);
        identify_waits(":1.20");
        settle();
        ck_assert_uint_eq(seen.n_credentials, 2);

        /* An answer without a pid, or with pid 0, identifies nobody: a
         * session needs the writer's pid. */
        answer(":1.20", plain_uid(1), -1);
        ck_assert_uint_eq(seen.n_errors, 3);
        ck_assert_ptr_nonnull(strstr(seen.last_message, "gave no uid and pid"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.20"));
        identify_waits(":1.21");
        settle();
        answer(":1.21", plain_uid(1), 0);
        ck_assert_uint_eq(seen.n_errors, 4);
        ck_assert_ptr_nonnull(strstr(seen.last_message, "gave no uid and pid"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.21"));
        ck_assert_uint_eq(reruns.n, 0);
        ck_assert_uint_eq(sessions.n, 0);
}
END_TEST

START_TEST(test_answer_without_uid_refused) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

        identify_waits(":1.22");
        settle();
        m = take_held(":1.22");
        ck_assert_int_ge(sd_bus_reply_method_return(m, "a{sv}", 1, "ProcessID", "u", (uint32_t) getpid()), 0);
        settle();
        ck_assert_uint_eq(seen.n_errors, 1);
        ck_assert_ptr_nonnull(strstr(seen.last_message, "gave no uid and pid"));
        ck_assert_ptr_null(peer_find(&sessions, ":1.22"));
        ck_assert_uint_eq(reruns.n, 0);
}
END_TEST

START_TEST(test_departure_while_identifying) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;

        identify_waits(":1.30");
        identify_waits(":1.30");
        settle();
        peer_gone(&sessions, ":1.30");
        ck_assert_uint_eq(sessions.n, 0);
        /* The late answer finds nobody to run: no reply to a caller that
         * left, no session made. */
        m = take_held(":1.30");
        ck_assert_int_ge(sd_bus_reply_method_return(m, "a{sv}", 2, "UnixUserID", "u", (uint32_t) plain_uid(1),
                                                    "ProcessID", "u", (uint32_t) getpid()), 0);
        settle();
        ck_assert_uint_eq(reruns.n, 0);
        ck_assert_uint_eq(seen.n_returns + seen.n_errors, 0);
        ck_assert_ptr_null(peer_find(&sessions, ":1.30"));
        /* Unknown names are no harm. */
        peer_gone(&sessions, ":1.30");
        peer_gone(&sessions, ":1.31");
}
END_TEST

/* The provider session: one per connection, charged to its uid */

START_TEST(test_provider_session_charged_per_uid) {
        uid_t a = plain_uid(1), b = plain_uid(2), c = plain_uid(3);
        struct peer *a1, *a2, *a3;
        char name[16];

        sessions.max = 2 * CLIENTS_MAX;
        a1 = identified(":1.40", a);
        a2 = identified(":1.41", a);
        a3 = identified(":1.42", a);

        /* Opening is charged once, whatever the number of Registers. */
        ck_assert_int_eq(data_session_open_provider(&a1->own), 0);
        ck_assert_int_eq(data_session_open_provider(&a1->own), 0);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), 1);
        ck_assert_int_eq(data_session_open_provider(&a2->own), 0);
        /* ClientsPerUser=: the third connection of the uid is refused. */
        ck_assert_int_eq(data_session_open_provider(&a3->own), -EDQUOT);
        ck_assert_ptr_null(a3->own.provider_session);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), CLIENTS_SHARE);

        /* A connection gone gives its charge back. */
        peer_gone(&sessions, ":1.40");
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), 1);
        ck_assert_int_eq(data_session_open_provider(&a3->own), 0);
        ck_assert_ptr_nonnull(a3->own.provider_session);

        /* Other uids take their parts of what is left, each less as more
         * hold some (user-charges.h): the second its share, the third one
         * connection, the fourth none; the pool keeps room for root. */
        for (unsigned j = 0; j < CLIENTS_SHARE; j++) {
                snprintf(name, sizeof(name), ":1.%u", 50 + j);
                ck_assert_int_eq(data_session_open_provider(&identified(name, plain_uid(10))->own), 0);
        }
        ck_assert_int_eq(data_session_open_provider(&identified(":1.60", c)->own), 0);
        ck_assert_int_eq(data_session_open_provider(&identified(":1.61", c)->own), -EUSERS);
        ck_assert_int_eq(data_session_open_provider(&identified(":1.43", b)->own), -EUSERS);
        ck_assert_uint_eq(user_charges_held(&charges, b, CHARGE_CLIENTS), 0);
        ck_assert_uint_lt(charges.total[CHARGE_CLIENTS], CLIENTS_MAX);
        ck_assert_int_eq(data_session_open_provider(&identified(":1.44", 0)->own), 0);

        /* Clients= itself: once it is full even a uid exempt from shares is
         * refused, with -ENOSPC, which the bus layer words as Clients=. */
        struct charge_bounds bounds = charges.bounds;
        bounds.kind[CHARGE_CLIENTS].privileged_exempt = true;
        user_charges_set_bounds(&charges, &bounds);
        for (unsigned j = 0; charges.total[CHARGE_CLIENTS] < CLIENTS_MAX; j++) {
                snprintf(name, sizeof(name), ":1.%u", 100 + j);
                ck_assert_int_eq(data_session_open_provider(&identified(name, 0)->own), 0);
        }
        ck_assert_int_eq(data_session_open_provider(&identified(":1.98", 0)->own), -ENOSPC);
        ck_assert_uint_eq(charges.total[CHARGE_CLIENTS], CLIENTS_MAX);
}
END_TEST

/* Registrations and the ring */

START_TEST(test_registrations_counted_per_event) {
        struct broker_event *ev = add_event("reg_a u32 a"), *other = add_event("reg_b u32 b");
        struct peer *s = identified(":1.60", plain_uid(1)), *t = identified(":1.61", plain_uid(2));
        uint32_t wi = 99;

        ck_assert_int_eq(data_session_open_provider(&s->own), 0);
        ck_assert_int_eq(data_session_open_provider(&t->own), 0);
        ck_assert_int_eq(data_session_register(&s->own, other, &wi), 0);
        ck_assert_int_eq(data_session_register(&s->own, ev, &wi), 0);
        ck_assert_uint_eq(wi, 1);
        ck_assert_int_eq(data_session_register(&t->own, ev, &wi), 0);
        ck_assert_uint_eq(wi, 0);
        /* Again in the same session: counted once. */
        ck_assert_int_eq(data_session_register(&t->own, ev, &wi), 0);
        ck_assert_uint_eq(ev->n_registrations, 2);
        ck_assert_uint_eq(ev->n_bound_sessions, 2);
        ck_assert_int_eq(data_session_find_registration(&s->own, ev, &wi), 0);
        ck_assert_uint_eq(wi, 1);

        ck_assert_int_eq(data_session_unregister(&t->own, 0), 0);
        ck_assert_int_eq(data_session_unregister(&t->own, 0), -ENOENT);
        ck_assert_int_eq(data_session_find_registration(&t->own, ev, &wi), -ENOENT);
        ck_assert_uint_eq(ev->n_registrations, 1);
        ck_assert_uint_eq(ev->n_bound_sessions, 2);
        /* Leaving releases what is active and what is bound. */
        peer_gone(&sessions, ":1.61");
        ck_assert_uint_eq(ev->n_registrations, 1);
        ck_assert_uint_eq(ev->n_bound_sessions, 1);
        peer_gone(&sessions, ":1.60");
        ck_assert_uint_eq(ev->n_registrations + ev->n_bound_sessions, 0);
        ck_assert_uint_eq(other->n_registrations + other->n_bound_sessions, 0);
}
END_TEST

START_TEST(test_ring_needs_a_registration_and_is_charged) {
        struct broker_event *ev = add_event("ring_a u32 a"), *ev2 = add_event("ring_b u32 b");
        struct peer *s = identified(":1.70", plain_uid(1));
        uid_t uid = s->uid;
        uint32_t wi, wi2, size = 0;
        int fd;

        /* No data session, or no registration: nothing to ring for. */
        ck_assert_int_eq(data_session_open_ring(&s->own, RING_DATA_MIN, &size), -ENOENT);
        ck_assert_int_eq(data_session_open_provider(&s->own), 0);
        ck_assert_int_eq(data_session_open_ring(&s->own, RING_DATA_MIN, &size), -ENOENT);
        ck_assert_int_eq(data_session_register(&s->own, ev, &wi), 0);
        ck_assert_int_eq(data_session_register(&s->own, ev2, &wi2), 0);
        ck_assert_int_eq(data_session_unregister(&s->own, wi2), 0);

        /* Charged what is mapped; one ring a session. */
        fd = data_session_open_ring(&s->own, RING_DATA_MIN, &size);
        ck_assert_int_ge(fd, 0);
        ck_assert_uint_eq(size, RING_DATA_MIN);
        ck_assert_uint_eq(s->own.ring_charge.amount, RING_SIZE_MIN);
        ck_assert_uint_eq(user_charges_held(&charges, uid, CHARGE_RING_BYTES), RING_SIZE_MIN);
        ck_assert_int_eq(data_session_open_ring(&s->own, RING_DATA_MIN, &size), -EBUSY);
        safe_close(fd);

        /* The last registration gone, the ring goes and its charge with
         * it; registered again, a ring may be opened again. */
        ck_assert_int_eq(data_session_unregister(&s->own, wi), 0);
        ck_assert_uint_eq(s->own.ring_charge.amount, 0);
        ck_assert_uint_eq(user_charges_held(&charges, uid, CHARGE_RING_BYTES), 0);
        ck_assert_int_eq(data_session_register(&s->own, ev, &wi), 0);
        fd = data_session_open_ring(&s->own, RING_DATA_MIN, &size);
        ck_assert_int_ge(fd, 0);
        safe_close(fd);
        ck_assert_uint_eq(user_charges_held(&charges, uid, CHARGE_RING_BYTES), RING_SIZE_MIN);

        /* Leaving releases it. */
        peer_gone(&sessions, ":1.70");
        ck_assert_uint_eq(user_charges_held(&charges, uid, CHARGE_RING_BYTES), 0);
}
END_TEST

/* A session of @uid with a data session and one registration of @ev. */
static struct peer *registered(const char *sender, uid_t uid, struct broker_event *ev) {
        struct peer *s = identified(sender, uid);
        uint32_t wi;

        ck_assert_int_eq(data_session_open_provider(&s->own), 0);
        ck_assert_int_eq(data_session_register(&s->own, ev, &wi), 0);
        return s;
}

START_TEST(test_ring_within_share_and_pool) {
        struct broker_event *ev = add_event("ringq u32 a");
        uid_t a = plain_uid(1), b = plain_uid(2);
        struct peer *a1 = registered(":1.80", a, ev), *a2 = registered(":1.81", a, ev);
        struct peer *b1 = registered(":1.82", b, ev), *b2 = registered(":1.83", b, ev);
        uint32_t size = 0;
        int fd1, fd2, fd3;

        /* A big request is given what the uid has room for (its share is
         * three smallest rings: one header and four smallest data
         * areas), smaller rather than none. */
        fd1 = data_session_open_ring(&a1->own, RING_DATA_MAX, &size);
        ck_assert_int_ge(fd1, 0);
        ck_assert_uint_eq(size, 4 * RING_DATA_MIN);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_RING_BYTES), 3 * RING_SIZE_MIN);
        /* No room left for even the smallest ring in the uid's share. */
        ck_assert_int_eq(data_session_open_ring(&a2->own, RING_DATA_MIN, &size), -EDQUOT);
        ck_assert_uint_eq(a2->own.ring_charge.amount, 0);

        /* Another uid: one smallest ring is within its part of the five
         * left among the two holders, a second is not (user-charges.h). */
        fd2 = data_session_open_ring(&b1->own, RING_DATA_MIN, &size);
        ck_assert_int_ge(fd2, 0);
        ck_assert_int_eq(data_session_open_ring(&b2->own, RING_DATA_MIN, &size), -EUSERS);
        ck_assert_uint_eq(b2->own.ring_charge.amount, 0);
        ck_assert_uint_eq(charges.total[CHARGE_RING_BYTES], 4 * RING_SIZE_MIN);

        /* Given back: room again. */
        peer_gone(&sessions, ":1.80");
        fd3 = data_session_open_ring(&b2->own, RING_DATA_MIN, &size);
        ck_assert_int_ge(fd3, 0);
        safe_close(fd1);
        safe_close(fd2);
        safe_close(fd3);
}
END_TEST

/* Data sessions a connection opens beside its own */

START_TEST(test_opened_sessions_charged_and_separate) {
        struct broker_event *ev = add_event("ds_a u32 a"), *other = add_event("ds_b u32 b");
        uid_t a = plain_uid(1);
        struct peer *p = identified(":1.90", a), *q = identified(":1.91", a);
        struct data_session *one, *two, *refused = NULL;
        uint32_t wi;

        /* Charged at once, to the connection's uid, within ClientsPerUser=. */
        ck_assert_int_eq(peer_open_session(p, &one), 0);
        ck_assert_int_eq(peer_open_session(p, &two), 0);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), CLIENTS_SHARE);
        ck_assert_int_eq(peer_open_session(p, &refused), -EDQUOT);
        ck_assert_ptr_null(refused);
        ck_assert_int_eq(data_session_open_provider(&q->own), -EDQUOT);
        ck_assert_uint_eq(p->n_sessions, 2);
        ck_assert_uint_gt(one->id, 0);
        ck_assert_uint_ne(one->id, two->id);
        ck_assert_ptr_eq(peer_session(p, one->id), one);
        ck_assert_ptr_eq(peer_session(p, two->id), two);
        ck_assert_ptr_eq(peer_session(p, 0), &p->own);
        /* Another connection's ids name nothing of it. */
        ck_assert_ptr_null(peer_session(q, one->id));

        /* Opening the provider session charges nothing more; each has its
         * own write indexes, as a file of its own. */
        ck_assert_int_eq(data_session_open_provider(one), 0);
        ck_assert_int_eq(data_session_open_provider(two), 0);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), CLIENTS_SHARE);
        ck_assert_int_eq(data_session_register(one, other, &wi), 0);
        ck_assert_uint_eq(wi, 0);
        ck_assert_int_eq(data_session_register(one, ev, &wi), 0);
        ck_assert_uint_eq(wi, 1);
        ck_assert_int_eq(data_session_register(two, ev, &wi), 0);
        ck_assert_uint_eq(wi, 0);
        ck_assert_uint_eq(ev->n_registrations, 2);
        ck_assert_uint_eq(ev->n_bound_sessions, 2);

        /* Closing one releases what it held, and its charge. */
        peer_close_session(p, one);
        ck_assert_ptr_null(peer_session(p, 1));
        ck_assert_uint_eq(p->n_sessions, 1);
        ck_assert_uint_eq(ev->n_registrations, 1);
        ck_assert_uint_eq(other->n_bound_sessions, 0);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), 1);
        ck_assert_int_eq(data_session_open_provider(&q->own), 0);

        /* The connection's end releases every one. */
        peer_gone(&sessions, ":1.90");
        ck_assert_uint_eq(ev->n_registrations, 0);
        ck_assert_uint_eq(ev->n_bound_sessions, 0);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), 1);
        peer_gone(&sessions, ":1.91");
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_CLIENTS), 0);
}
END_TEST

START_TEST(test_opened_session_ids_never_reused) {
        struct peer *p = identified(":1.92", plain_uid(2));
        struct data_session *ds;
        uint64_t first;

        ck_assert_int_eq(peer_open_session(p, &ds), 0);
        first = ds->id;
        peer_close_session(p, ds);
        ck_assert_int_eq(peer_open_session(p, &ds), 0);
        ck_assert_uint_gt(ds->id, first);
        ck_assert_ptr_null(peer_session(p, first));
}
END_TEST

START_TEST(test_session_paths) {
        char buf[DATA_SESSION_PATH_MAX];
        struct data_session ds = { .id = UINT64_MAX };
        uint64_t id = 7;

        ck_assert_int_eq(data_session_path_id(BROKER_OBJECT_PATH, &id), 0);
        ck_assert_uint_eq(id, 0);
        ck_assert_int_eq(data_session_path_id(BROKER_SESSION_PATH_PREFIX "/42", &id), 0);
        ck_assert_uint_eq(id, 42);
        ck_assert_str_eq(data_session_path(&ds, buf), BROKER_SESSION_PATH_PREFIX "/18446744073709551615");
        ck_assert_int_eq(data_session_path_id(buf, &id), 0);
        ck_assert_uint_eq(id, UINT64_MAX);
        ds.id = 0;
        ck_assert_str_eq(data_session_path(&ds, buf), BROKER_OBJECT_PATH);
        /* Anything else names no data session. */
        static const char *const bad[] = {
                BROKER_SESSION_PATH_PREFIX, BROKER_SESSION_PATH_PREFIX "/", BROKER_SESSION_PATH_PREFIX "/0",
                BROKER_SESSION_PATH_PREFIX "/01", BROKER_SESSION_PATH_PREFIX "/1a", BROKER_SESSION_PATH_PREFIX "/1/2",
                BROKER_SESSION_PATH_PREFIX "/18446744073709551616", BROKER_SESSION_PATH_PREFIX "/-1",
                BROKER_SESSION_PATH_PREFIX "x/1", "/org/uebroker1/", "/", "",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(data_session_path_id(bad[i], &id) == -EINVAL, "%s was taken", bad[i]);
        ck_assert_int_eq(data_session_path_id(NULL, &id), -EINVAL);
}
END_TEST

/* Grants (Authorize), held by the provider double */

START_TEST(test_grant_withdrawn) {
        struct broker_event *ev = add_event("grant_a u32 a"), *other = add_event("grant_b u32 b");
        /* Another session holds ev too: its counts are not the withdrawal's
         * to drop. */
        struct peer *s = identified(":1.100", plain_uid(1)), *t = registered(":1.101", plain_uid(2), ev);
        unsigned n_registrations = ev->n_registrations, n_bound = ev->n_bound_sessions;
        struct provider_session *ps;

        ck_assert_int_eq(data_session_open_provider(&s->own), 0);
        ps = s->own.provider_session;
        ck_assert_int_eq(data_session_grant(&s->own, ev), 0);
        ck_assert_int_eq(data_session_grant(&s->own, other), 0);
        ck_assert(double_granted(ps, ev->provider_event));
        ck_assert(double_granted(ps, other->provider_event));
        ck_assert_uint_eq(grants.n, 2);
        ck_assert_uint_eq(ev->n_registrations, n_registrations + 1);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound + 1);

        /* Withdrawn in the kernel too, that grant alone, and ev's counts
         * back to what they were. */
        ck_assert_int_eq(data_session_withdraw(&s->own, ev), 0);
        ck_assert(!data_session_is_granted(&s->own, ev));
        ck_assert(!double_granted(ps, ev->provider_event));
        ck_assert(double_granted(ps, other->provider_event));
        ck_assert_uint_eq(grants.n, 1);
        ck_assert_uint_eq(ev->n_registrations, n_registrations);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound);
        ck_assert_uint_eq(other->n_registrations, 1);
        ck_assert_uint_eq(other->n_bound_sessions, 1);

        /* Nothing left to withdraw, for the broker as for the kernel. */
        ck_assert_int_eq(data_session_withdraw(&s->own, ev), -ENOENT);
        ck_assert_int_eq(provider_link_withdraw(&plink, ps, ev->provider_event), -ENOENT);
        ck_assert_int_eq(data_session_withdraw(&t->own, ev), -ENOENT);
        ck_assert_uint_eq(ev->n_registrations, n_registrations);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound);
        ck_assert_uint_eq(grants.n, 1);
}
END_TEST

START_TEST(test_grants_withdrawn_when_session_ends) {
        struct broker_event *ev = add_event("grant_c u32 c"), *other = add_event("grant_d u32 d");
        struct peer *p = identified(":1.102", plain_uid(1));
        unsigned n_registrations, n_bound;
        struct data_session *opened;

        registered(":1.103", plain_uid(2), ev);
        n_registrations = ev->n_registrations;
        n_bound = ev->n_bound_sessions;
        ck_assert_int_eq(data_session_open_provider(&p->own), 0);
        ck_assert_int_eq(data_session_grant(&p->own, ev), 0);
        ck_assert_int_eq(data_session_grant(&p->own, other), 0);
        ck_assert_int_eq(peer_open_session(p, &opened), 0);
        ck_assert_int_eq(data_session_open_provider(opened), 0);
        ck_assert_int_eq(data_session_grant(opened, ev), 0);
        ck_assert_uint_eq(grants.n, 3);
        ck_assert_uint_eq(ev->n_registrations, n_registrations + 2);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound + 2);

        /* A data session closed (CloseSession) withdraws its grant, before
         * its provider session goes; the connection's own keep theirs. */
        peer_close_session(p, opened);
        ck_assert_uint_eq(grants.n_freed_holding, 0);
        ck_assert_uint_eq(grants.n, 2);
        ck_assert(double_granted(p->own.provider_session, ev->provider_event));
        ck_assert(double_granted(p->own.provider_session, other->provider_event));
        ck_assert_uint_eq(ev->n_registrations, n_registrations + 1);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound + 1);

        /* The connection gone: every grant it held is withdrawn. */
        peer_gone(&sessions, ":1.102");
        ck_assert_uint_eq(grants.n_freed_holding, 0);
        ck_assert_uint_eq(grants.n, 0);
        ck_assert_uint_eq(ev->n_registrations, n_registrations);
        ck_assert_uint_eq(ev->n_bound_sessions, n_bound);
        ck_assert_uint_eq(other->n_registrations + other->n_bound_sessions, 0);
}
END_TEST

static Suite *session_suite(void) {
        Suite *s = suite_create("session");
        TCase *tc = tcase_create("identify");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_asked_once_then_served);
        tcase_add_test(tc, test_no_sender_refused);
        tcase_add_test(tc, test_waiting_calls_bounded);
        tcase_add_test(tc, test_clients_bounded);
        tcase_add_test(tc, test_connections_charged_to_their_uid);
        tcase_add_test(tc, test_unidentified_share_a_pool);
        tcase_add_test(tc, test_unidentified_calls_refused);
        tcase_add_test(tc, test_answer_without_uid_refused);
        tcase_add_test(tc, test_departure_while_identifying);
        suite_add_tcase(s, tc);

        tc = tcase_create("limits");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_provider_session_charged_per_uid);
        tcase_add_test(tc, test_registrations_counted_per_event);
        tcase_add_test(tc, test_ring_needs_a_registration_and_is_charged);
        tcase_add_test(tc, test_ring_within_share_and_pool);
        tcase_add_test(tc, test_opened_sessions_charged_and_separate);
        tcase_add_test(tc, test_opened_session_ids_never_reused);
        tcase_add_test(tc, test_session_paths);
        suite_add_tcase(s, tc);

        tc = tcase_create("grants");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, test_grant_withdrawn);
        tcase_add_test(tc, test_grants_withdrawn_when_session_ends);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(session_suite());
}
