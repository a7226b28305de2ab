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
#include "provider-link.h"
#include "ring.h"
#include "session.h"
#include "user-charges.h"

static int compare_by_bus_name(const void *a, const void *b) {
        const struct session *x = a, *y = b;

        return strcmp(x->bus_name, y->bus_name);
}

void session_registry_init(struct session_registry *reg, sd_bus *bus, struct provider_link *link,
                           struct event_registry *events, struct delivery *delivery, struct user_charges *charges,
                           const char *config_name, unsigned max) {
        *reg = (struct session_registry) {
                .bus = bus,
                .link = link,
                .events = events,
                .delivery = delivery,
                .charges = charges,
                .config_name = config_name,
                .max = max,
        };
}

void session_registry_done(struct session_registry *reg) {
        while (reg->by_bus_name)
                session_free(*(struct session **) reg->by_bus_name);
}

struct session *session_find(struct session_registry *reg, const char *bus_name) {
        struct session key = { .bus_name = (char *) bus_name };
        void *found = tfind(&key, &reg->by_bus_name, compare_by_bus_name);

        return found ? *(struct session **) found : NULL;
}

/* Lets go of the calls that waited for identification: re-run each
 * (sd_bus_enqueue_for_read) when @error is NULL, else fail it with @error. */
static void release_waiting(struct session *s, const sd_bus_error *error) {
        for (unsigned i = 0; i < s->n_waiting; i++) {
                int r = error ? -EIO : sd_bus_enqueue_for_read(s->registry->bus, s->waiting[i]);

                if (error)
                        (void) sd_bus_reply_method_error(s->waiting[i], error);
                else if (r < 0)
                        (void) sd_bus_reply_method_errnof(s->waiting[i], r, "Cannot resume the call: %m");
                s->waiting[i] = sd_bus_message_unref(s->waiting[i]);
        }
        s->n_waiting = 0;
        free(s->waiting);
        s->waiting = NULL;
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

static int session_identified(struct session *s, sd_bus_error *error);

static int on_credentials(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct session *s = userdata;
        int r;

        s->identify_slot = sd_bus_slot_unref(s->identify_slot);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);

                r = -EIO;
                sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "the caller cannot be identified: the bus did not say who it is (%s)",
                                  e && e->name ? e->name : "error");
        } else {
                r = read_credentials(reply, &s->uid, &s->pid);
                if (r >= 0 && s->pid <= 0)
                        r = -ENODATA;   /* a session needs the writer's pid for its records */
                if (r < 0)
                        sd_bus_error_setf(&error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "the caller cannot be identified: the bus gave no uid and pid for it (%s)",
                                          strerror(-r));
        }
        if (r >= 0)
                r = session_identified(s, &error);
        if (r < 0) {
                log_debug("Cannot identify %s: %s", s->bus_name, error.message);
                release_waiting(s, &error);
                session_free(s);
                return 0;
        }
        log_debug("Client %s is uid %u, pid %d.", s->bus_name, (unsigned) s->uid, (int) s->pid);
        release_waiting(s, NULL);
        return 0;
}

/* @s is known to be uid and pid: charged to its uid from now on, within
 * the uid's part of Clients= among the uids with connections (root: the
 * pool only). Negative errno with @error set when refused. */
static int session_identified(struct session *s, sd_bus_error *error) {
        struct session_registry *reg = s->registry;
        char holders[160];
        int r;

        user_charge_init(&s->connection_charge, reg->charges, s->uid, CHARGE_CONNECTIONS);
        user_charge_init(&s->client_charge, reg->charges, s->uid, CHARGE_CLIENTS);
        user_charge_init(&s->ring_charge, reg->charges, s->uid, CHARGE_RING_BYTES);
        r = user_charge_take(&s->connection_charge, 1);
        if (r == -EUSERS || r == -EDQUOT || r == -ENOSPC) {
                sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                  "uid %u holds its part (%" PRIu64 ") of the %u connections the broker serves, "
                                  "which %" PRIu64 " uids share now; most are held by %s; close some of its "
                                  "connections, or try again once others have closed",
                                  (unsigned) s->uid, user_charges_held(reg->charges, s->uid, CHARGE_CONNECTIONS),
                                  reg->max, reg->charges->holders[CHARGE_CONNECTIONS],
                                  user_charges_holders_text(reg->charges, CHARGE_CONNECTIONS, holders,
                                                            sizeof(holders)));
                return r;
        }
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "cannot count the connection: %m");
        s->identified = true;
        reg->n_unidentified--;
        delivery_ledger_init(&s->ledger, reg->delivery, s->bus_name, s->uid, bus_caller_privileged(s->uid));
        return 0;
}

/* Asks the bus who @s is; without a bus daemon (a direct connection) the
 * socket's peer credentials answer at once. */
static int session_start_identify(struct session *s, sd_bus_message *m) {
        _cleanup_(sd_bus_error_free) sd_bus_error refused = SD_BUS_ERROR_NULL;
        sd_bus *bus = s->registry->bus;
        uid_t uid;
        pid_t pid;
        int r;

        if (sd_bus_is_bus_client(bus) <= 0) {
                r = bus_caller_identify(m, &uid, &pid);
                if (r < 0)
                        return r;
                if (pid <= 0)
                        return -ENODATA;
                s->uid = uid;
                s->pid = pid;
                r = session_identified(s, &refused);
                return r < 0 ? r : 1;
        }
        r = sd_bus_call_method_async(bus, &s->identify_slot, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                     "org.freedesktop.DBus", "GetConnectionCredentials", on_credentials, s, "s",
                                     s->bus_name);
        return r < 0 ? r : 0;
}

static int session_new(struct session_registry *reg, const char *bus_name, struct session **ret) {
        _cleanup_free_ struct session *s = NULL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->registry = reg;
        s->bus_name = strdup(bus_name);
        if (!s->bus_name)
                return -ENOMEM;
        if (!tsearch(s, &reg->by_bus_name, compare_by_bus_name)) {
                free(s->bus_name);
                return -ENOMEM;
        }
        reg->n++;
        reg->n_unidentified++;
        *ret = TAKE_PTR(s);
        return 0;
}

int session_identify(struct session_registry *reg, sd_bus_message *m, sd_bus_error *error, struct session **ret) {
        const char *sender = sd_bus_message_get_sender(m);
        struct session *s;
        int r;

        if (!sender)
                return sd_bus_error_set(error, SD_BUS_ERROR_ACCESS_DENIED,
                                        "the call carries no sender name: call the broker through the message bus, "
                                        "not over a direct connection");
        s = session_find(reg, sender);
        if (s && s->identified) {
                *ret = s;
                return 1;
        }
        if (!s) {
                if (reg->n >= reg->max)
                        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                                 "the broker already serves %u connections (Clients=%s); "
                                                 "try again once some have closed", reg->max,
                                                 broker_limit_where_text(reg->limit_origins, reg->config_name,
                                                                         "Clients",
                                                                         (char[BROKER_LIMIT_WHERE_MAX]) {}));
                if (reg->n_unidentified >= session_unidentified_max(reg->max))
                        return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                                 "%u connections already wait for the bus to say who they are; "
                                                 "try again in a moment", reg->n_unidentified);
                r = session_new(reg, sender, &s);
                if (r < 0)
                        return r;
                r = session_start_identify(s, m);
                if (r < 0) {
                        session_free(s);
                        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                                 "the caller cannot be identified: %s", strerror(-r));
                }
                if (r > 0) {
                        *ret = s;
                        return 1;
                }
        }
        if (s->n_waiting >= SESSION_WAITING_MAX)
                return sd_bus_error_setf(error, SD_BUS_ERROR_LIMITS_EXCEEDED,
                                         "%u calls of this connection already wait for the bus to identify it; "
                                         "wait for their replies", SESSION_WAITING_MAX);
        if ((s->n_waiting & (s->n_waiting - 1)) == 0) {      /* 0, 1, 2, 4, ...: grow */
                sd_bus_message **grown = reallocarray(s->waiting, s->n_waiting ? s->n_waiting * 2 : 1,
                                                      sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                s->waiting = grown;
        }
        s->waiting[s->n_waiting++] = sd_bus_message_ref(m);
        return 0;
}

int session_open_provider(struct session *s) {
        struct session_registry *reg = s->registry;
        struct provider_peer peer = { .pid = s->pid, .uid = s->uid, .bus_name = s->bus_name };
        int r;

        if (s->provider_session)
                return 0;
        r = user_charge_take(&s->client_charge, 1);
        if (r < 0)
                return r == -ENOSPC ? -EDQUOT : r;      /* the pool is Clients=, checked at identification */
        r = provider_link_session_open(reg->link, &peer, &s->indexes, &s->provider_session);
        if (r < 0)
                user_charge_deinit(&s->client_charge);
        return r;
}

int session_open_ring(struct session *s, uint32_t requested, uint32_t *ret_size) {
        struct session_registry *reg = s->registry;
        uint64_t room = user_charges_room(reg->charges, s->uid, CHARGE_RING_BYTES), mapped = 0;
        int fd, r;

        if (!s->provider_session || s->indexes.n_active == 0)
                return -ENOENT;
        if (s->ring_charge.amount > 0)
                return -EBUSY;
        /* The smallest ring must fit; which bound it misses tells the
         * caller whose memory is used up. */
        r = user_charges_check(reg->charges, s->uid, CHARGE_RING_BYTES, RING_HEADER_SIZE + RING_DATA_MIN);
        if (r < 0)
                return r;
        fd = provider_link_session_ring(reg->link, s->provider_session, requested, room, ret_size, &mapped);
        if (fd == -EDQUOT)
                return -ENOSPC;         /* the provider's own smallest ring is bigger */
        if (fd < 0)
                return fd;
        r = user_charge_take(&s->ring_charge, mapped);
        if (r < 0) {
                /* The provider mapped more than the room it was given. */
                provider_link_session_ring_close(reg->link, s->provider_session);
                safe_close(fd);
                return r;
        }
        return fd;
}

static void session_close_ring(struct session *s) {
        struct session_registry *reg = s->registry;

        if (s->ring_charge.amount == 0)
                return;
        provider_link_session_ring_close(reg->link, s->provider_session);
        user_charge_deinit(&s->ring_charge);
}

void session_gone(struct session_registry *reg, const char *bus_name) {
        struct session *s = session_find(reg, bus_name);

        if (!s)
                return;
        log_debug("Client %s (uid %u, pid %d) went away, releasing its %u registrations.",
                  s->bus_name, (unsigned) s->uid, (int) s->pid, session_n_events(s));
        session_free(s);
}

struct session *session_free(struct session *s) {
        struct session_registry *reg;

        if (!s)
                return NULL;
        reg = s->registry;

        /* The provider reads what the client still had queued first, while
         * every bound event is still there. A grant is withdrawn in the
         * kernel too: the client may keep its data fd after leaving the
         * bus, and must not go on registering or writing on it (the
         * provider logs a failure; the session goes all the same). */
        if (s->provider_session) {
                for (unsigned i = 0; i < s->n_granted; i++)
                        (void) provider_link_withdraw(reg->link, s->provider_session, s->granted[i]->provider_event);
                provider_link_session_close(reg->link, s->provider_session);
        }
        user_charge_deinit(&s->ring_charge);
        user_charge_deinit(&s->client_charge);
        for (size_t i = 0; i < s->indexes.n; i++) {
                struct broker_event *ev = s->indexes.entries[i].event;

                if (s->indexes.entries[i].active)
                        ev->n_registrations--;
                ev->n_bound_sessions--;
                event_registry_touch(reg->events, ev);
        }
        for (unsigned i = 0; i < s->n_granted; i++) {
                s->granted[i]->n_registrations--;
                s->granted[i]->n_bound_sessions--;
                event_registry_touch(reg->events, s->granted[i]);
        }
        free(s->granted);
        for (unsigned i = 0; i < s->n_waiting; i++)
                sd_bus_message_unref(s->waiting[i]);
        free(s->waiting);       /* no reply: the caller left, or the broker stops */
        delivery_ledger_done(&s->ledger);

        user_charge_deinit(&s->connection_charge);
        if (!s->identified)
                reg->n_unidentified--;
        tdelete(s, &reg->by_bus_name, compare_by_bus_name);
        reg->n--;

        sd_bus_slot_unref(s->identify_slot);
        write_indexes_done(&s->indexes);
        free(s->bus_name);
        free(s);
        return NULL;
}

int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        int index = write_indexes_find(&s->indexes, ev);

        if (index < 0 || !s->indexes.entries[index].active)
                return -ENOENT;
        *ret_write_index = (uint32_t) index;
        return 0;
}

int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index) {
        struct session_registry *reg = s->registry;
        unsigned active_before = s->indexes.n_active;
        int r;

        r = provider_link_register(reg->link, s->provider_session, &s->indexes, ev, ev->provider_event,
                                   ret_write_index);
        if (r < 0)
                return r;
        if (r > 0)
                ev->n_bound_sessions++;
        if (s->indexes.n_active != active_before)
                ev->n_registrations++;
        event_registry_touch(reg->events, ev);
        return 0;
}

int session_unregister(struct session *s, uint32_t write_index) {
        struct session_registry *reg = s->registry;
        int r;

        r = provider_link_unregister(reg->link, s->provider_session, &s->indexes, write_index);
        if (r < 0)
                return r;
        s->indexes.entries[write_index].event->n_registrations--;
        event_registry_touch(reg->events, s->indexes.entries[write_index].event);
        if (s->indexes.n_active == 0)
                session_close_ring(s);
        return 0;
}

bool session_is_granted(const struct session *s, const struct broker_event *ev) {
        for (unsigned i = 0; i < s->n_granted; i++)
                if (s->granted[i] == ev)
                        return true;
        return false;
}

int session_grant(struct session *s, struct broker_event *ev) {
        struct broker_event **granted;
        int r;

        granted = reallocarray(s->granted, s->n_granted + 1, sizeof(*granted));
        if (!granted)
                return -ENOMEM;
        s->granted = granted;
        r = provider_link_grant(s->registry->link, s->provider_session, ev->provider_event);
        if (r < 0)
                return r;
        s->granted[s->n_granted++] = ev;
        ev->n_registrations++;
        ev->n_bound_sessions++;
        event_registry_touch(s->registry->events, ev);
        return 0;
}

int session_withdraw(struct session *s, struct broker_event *ev) {
        for (unsigned i = 0; i < s->n_granted; i++) {
                int r;

                if (s->granted[i] != ev)
                        continue;
                r = provider_link_withdraw(s->registry->link, s->provider_session, ev->provider_event);
                if (r < 0)
                        return r;
                s->granted[i] = s->granted[--s->n_granted];
                ev->n_registrations--;
                ev->n_bound_sessions--;
                event_registry_touch(s->registry->events, ev);
                return 0;
        }
        return -ENOENT;
}
