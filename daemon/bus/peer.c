/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdlib.h>
#include <string.h>

#include "broker-bus.h"
#include "broker-config.h"
#include "bus-caller.h"
#include "bus-util.h"
#include "cleanup.h"
#include "event-registry.h"
#include "fd-util.h"
#include "log.h"
#include "privileged-uid.h"
#include "provider-link.h"
#include "ring.h"
#include "peer.h"
#include "user-charges.h"
#include "macro.h"

static int compare_by_bus_name(const void *a, const void *b) {
        const struct peer *x = a, *y = b;

        return strcmp(x->bus_name, y->bus_name);
}

void peer_registry_init(struct peer_registry *reg, sd_bus *bus, struct provider_link *link,
                           struct event_registry *events, struct delivery *delivery, struct user_charges *charges,
                           const char *config_name, unsigned max) {
        assert(reg);
        *reg = (struct peer_registry) {
                .bus = bus,
                .sessions = { .link = link, .events = events, .charges = charges },
                .delivery = delivery,
                .config_name = config_name,
                .max = max,
        };
}

void peer_registry_done(struct peer_registry *reg) {
        assert(reg);
        while (reg->by_bus_name)
                peer_free(*(struct peer **) reg->by_bus_name);
}

struct peer *peer_find(struct peer_registry *reg, const char *bus_name) {
        struct peer key = { .bus_name = (char *) bus_name };
        void *found = tfind(&key, &ASSERT_PTR(reg)->by_bus_name, compare_by_bus_name);

        return found ? *(struct peer **) found : NULL;
}

/* Lets go of the calls that waited for identification: re-run each
 * (sd_bus_enqueue_for_read) when @error is NULL, else fail it with @error. */
static void release_waiting(struct peer *p, const sd_bus_error *error) {
        for (unsigned i = 0; i < p->n_waiting; i++) {
                int r = error ? -EIO : sd_bus_enqueue_for_read(p->registry->bus, p->waiting[i]);

                if (error)
                        (void) sd_bus_reply_method_error(p->waiting[i], error);
                else if (r < 0)
                        (void) sd_bus_reply_method_errnof(p->waiting[i], r, "Cannot resume the call: %m");
                p->waiting[i] = sd_bus_message_unref(p->waiting[i]);
        }
        p->n_waiting = 0;
        free(p->waiting);
        p->waiting = NULL;
}

/* Reads UnixUserID and ProcessID out of a GetConnectionCredentials reply. */
static int read_credentials(sd_bus_message *reply, uid_t *ret_uid, pid_t *ret_pid) {
        static const char *const keys[] = { "UnixUserID", "ProcessID" };
        uint32_t values[2] = { 0, 0 }, found;
        int r;

        r = bus_read_u32_dict(reply, keys, 2, values, &found);
        if (r < 0)
                return r;
        if (!(found & 1))
                return -ENODATA;
        *ret_uid = (uid_t) values[0];
        *ret_pid = (pid_t) values[1];
        return 0;
}

static int peer_identified(struct peer *p, sd_bus_error *error);

static int on_credentials(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct peer *p = ASSERT_PTR(userdata);
        int r;

        p->identify_slot = sd_bus_slot_unref(p->identify_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);

                r = -EIO;
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "the caller cannot be identified: the bus did not say who it is (%s)",
                                  e && e->name ? e->name : "error");
        } else {
                r = read_credentials(reply, &p->uid, &p->pid);
                if (r >= 0 && p->pid <= 0)
                        r = -ENODATA;   /* a data session needs the writer's pid for its records */
                if (r < 0)
                        sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "the caller cannot be identified: the bus gave no uid and pid for it (%s)",
                                          strerror(-r));
        }
        if (r >= 0)
                r = peer_identified(p, &error);
        if (r < 0) {
                log_debug("Cannot identify %s: %s", p->bus_name, error.message);
                release_waiting(p, &error);
                peer_free(p);
                return 0;
        }
        log_debug("Client %s is uid %u, pid %d.", p->bus_name, (unsigned) p->uid, (int) p->pid);
        release_waiting(p, NULL);
        return 0;
}

/* @p is known to be uid and pid: charged to its uid from now on, within
 * the uid's part of Clients= among the uids with connections (root: the
 * pool only). Negative errno with @error set when refused. */
static int peer_identified(struct peer *p, sd_bus_error *error) {
        struct peer_registry *reg = p->registry;
        char holders[160];
        int r;

        user_charge_init(&p->connection_charge, reg->sessions.charges, p->uid, CHARGE_CONNECTIONS);
        r = user_charge_take(&p->connection_charge, 1);
        if (r == -EUSERS || r == -EDQUOT || r == -ENOSPC) {
                sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                  "uid %u holds its part (%" PRIu64 ") of the %u connections the broker serves, "
                                  "which %" PRIu64 " uids share now; most are held by %s; close some of its "
                                  "connections, or try again once others have closed",
                                  (unsigned) p->uid, user_charges_held(reg->sessions.charges, p->uid, CHARGE_CONNECTIONS),
                                  reg->max, reg->sessions.charges->holders[CHARGE_CONNECTIONS],
                                  user_charges_holders_text(reg->sessions.charges, CHARGE_CONNECTIONS, holders,
                                                            sizeof(holders)));
                return r;
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "cannot count the connection: %m");
        p->identified = true;
        reg->n_unidentified--;
        delivery_ledger_init(&p->ledger, reg->delivery, p->bus_name, p->uid, uid_privileged(p->uid));
        data_session_init(&p->own, &reg->sessions, &(struct data_session_owner) { p->uid, p->pid, p->bus_name }, 0);
        return 0;
}

/* Asks the bus who @p is; without a bus daemon (a direct connection) the
 * socket's peer credentials answer at once. */
static int peer_start_identify(struct peer *p, sd_bus_message *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error refused = SD_BUS_ERROR_NULL;
        sd_bus *bus = p->registry->bus;
        uid_t uid;
        pid_t pid;
        int r;

        if (sd_bus_is_bus_client(bus) <= 0) {
                r = bus_caller_identify(m, &uid, &pid);
                if (r < 0)
                        return r;
                if (pid <= 0)
                        return -ENODATA;
                p->uid = uid;
                p->pid = pid;
                r = peer_identified(p, &refused);
                return r < 0 ? r : 1;
        }
        r = sd_bus_call_method_async(bus, &p->identify_slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionCredentials", on_credentials, p, "s",
                                     p->bus_name);
        return r < 0 ? r : 0;
}

static int peer_new(struct peer_registry *reg, const char *bus_name, struct peer **ret) {
        _cleanup_free_ struct peer *p = NULL;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->registry = reg;
        p->bus_name = strdup(bus_name);
        if (!p->bus_name)
                return -ENOMEM;
        if (!tsearch(p, &reg->by_bus_name, compare_by_bus_name)) {
                free(p->bus_name);
                return -ENOMEM;
        }
        reg->n++;
        reg->n_unidentified++;
        *ret = TAKE_PTR(p);
        return 0;
}

int peer_identify(struct peer_registry *reg, sd_bus_message *m, sd_bus_error *error, struct peer **ret) {
        const char *sender = sd_bus_message_get_sender(m);
        struct peer *p;
        int r;

        assert(reg);
        if (!sender)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "the call carries no sender name: call the broker through the message bus, "
                                        "not over a direct connection");
        p = peer_find(reg, sender);
        if (p && p->identified) {
                *ret = p;
                return 1;
        }
        if (!p) {
                if (reg->n >= reg->max)
                        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                                 "the broker already serves %u connections (Clients=%s); "
                                                 "try again once some have closed", reg->max,
                                                 broker_limit_where_text(reg->limit_origins, reg->config_name,
                                                                         "Clients",
                                                                         (char[BROKER_LIMIT_WHERE_MAX]) {}));
                if (reg->n_unidentified >= peer_unidentified_max(reg->max))
                        return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                                 "%u connections already wait for the bus to say who they are; "
                                                 "try again in a moment", reg->n_unidentified);
                r = peer_new(reg, sender, &p);
                if (r < 0)
                        return r;
                r = peer_start_identify(p, m);
                if (r < 0) {
                        peer_free(p);
                        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                                 "the caller cannot be identified: %s", strerror(-r));
                }
                if (r > 0) {
                        *ret = p;
                        return 1;
                }
        }
        if (p->n_waiting >= PEER_WAITING_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "%u calls of this connection already wait for the bus to identify it; "
                                         "wait for their replies", PEER_WAITING_MAX);
        if ((p->n_waiting & (p->n_waiting - 1)) == 0) {      /* 0, 1, 2, 4, ...: grow */
                sd_bus_message **grown = reallocarray(p->waiting, p->n_waiting ? p->n_waiting * 2 : 1,
                                                      sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                p->waiting = grown;
        }
        p->waiting[p->n_waiting++] = sd_bus_message_ref(m);
        return 0;
}

void peer_gone(struct peer_registry *reg, const char *bus_name) {
        struct peer *p = peer_find(reg, bus_name);

        if (!p)
                return;
        log_debug("Client %s (uid %u, pid %d) went away, releasing its %u data sessions.",
                  p->bus_name, (unsigned) p->uid, (int) p->pid, p->identified ? p->n_sessions + 1 : 0);
        peer_free(p);
}

struct peer *peer_free(struct peer *p) {
        struct peer_registry *reg;

        if (!p)
                return NULL;
        reg = p->registry;

        while (p->sessions)
                peer_close_session(p, p->sessions);
        if (p->identified)
                data_session_done(&p->own);
        for (unsigned i = 0; i < p->n_waiting; i++)
                sd_bus_message_unref(p->waiting[i]);
        free(p->waiting);       /* no reply: the caller left, or the broker stops */
        delivery_ledger_done(&p->ledger);

        user_charge_deinit(&p->connection_charge);
        if (!p->identified)
                reg->n_unidentified--;
        tdelete(p, &reg->by_bus_name, compare_by_bus_name);
        reg->n--;

        sd_bus_slot_unref(p->identify_slot);
        free(p->bus_name);
        free(p);
        return NULL;
}

int peer_open_session(struct peer *p, struct data_session **ret) {
        _cleanup_free_ struct data_session *ds = NULL;
        int r;

        assert(p);
        if (p->n_sessions >= PEER_SESSIONS_MAX)
                return -EMFILE;
        ds = malloc(sizeof(*ds));
        if (!ds)
                return -ENOMEM;
        data_session_init(ds, &p->registry->sessions, &(struct data_session_owner) { p->uid, p->pid, p->bus_name },
                          p->registry->last_session_id + 1);
        r = user_charge_take(&ds->client_charge, 1);
        if (r < 0)
                return r;
        p->registry->last_session_id++;
        LIST_PREPEND(sessions, p->sessions, ds);
        p->n_sessions++;
        *ret = TAKE_PTR(ds);
        return 0;
}

struct data_session *peer_session(struct peer *p, uint64_t id) {
        assert(p);
        if (id == 0)
                return p->identified ? &p->own : NULL;
        LIST_FOREACH(sessions, ds, p->sessions)
                if (ds->id == id)
                        return ds;
        return NULL;
}

void peer_close_session(struct peer *p, struct data_session *ds) {
        assert(p);
        data_session_done(ds);
        LIST_REMOVE(sessions, p->sessions, ds);
        p->n_sessions--;
        free(ds);
}
