/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <systemd/sd-id128.h>

#include "admission.h"
#include "broker.h"
#include "broker-errors.h"
#include "bus-caller.h"
#include "bus-departures.h"
#include "bus-util.h"
#include "cleanup.h"
#include "broker-config.h"
#include "config.h"
#include "delivery.h"
#include "event-pattern.h"
#include "event-signals.h"
#include "event-store.h"
#include "fd-util.h"
#include "name-reservation.h"
#include "log.h"
#include "macro.h"
#include "message-ids.h"
#include "polkit.h"
#include "peer.h"
#include "status-text.h"

static unsigned broker_max_events(const struct broker *b) {
        return b->limits.events < STATUS_INDEX_MAX ? b->limits.events : STATUS_INDEX_MAX;
}

const char *broker_config_name(const struct broker *b) {
        assert(b);
        return b->config_path ?: BROKER_CONFIG_DEFAULT_PATH;
}

const char *broker_limit_where(const struct broker *b, const char *key, char buf[static BROKER_LIMIT_WHERE_MAX]) {
        assert(b);
        return broker_limit_where_text(b->limit_origins, broker_config_name(b), key, buf);
}

/* In a refusal's arguments: the text lives until the call returns. */
#define LIMIT_WHERE(b, key) broker_limit_where((b), (key), (char[BROKER_LIMIT_WHERE_MAX]) {})

/* At info level under @rl: what callers can make the broker log, as often
 * as they call, must not flood the journal. */
static void log_limited(struct log_ratelimit *rl, const char *what, const struct log_about *about,
                        const char *format, ...) __attribute__((format(printf, 4, 5)));
static void log_limited(struct log_ratelimit *rl, const char *what, const struct log_about *about,
                        const char *format, ...) {
        unsigned suppressed = 0;
        char text[1024];
        va_list ap;

        if (!log_ratelimit_ok(rl, &suppressed))
                return;
        if (suppressed > 0)
                log_info("(%u more %s not logged)", suppressed, what);
        va_start(ap, format);
        (void) vsnprintf(text, sizeof(text), format, ap);
        va_end(ap);
        log_struct(LOG_INFO, about, "%s", text);
}

/* The event a refused Register or Delete named: the first argument's
 * leading name (log_fields_build() drops it unless it is a valid one). */
static void refused_event_name(sd_bus_message *m, char *buf, size_t size) {
        const char *member = sd_bus_message_get_member(m), *arg = NULL;
        size_t n;

        buf[0] = '\0';
        if (!member || (strcmp(member, "Register") != 0 && strcmp(member, "Authorize") != 0 &&
                        strcmp(member, "Delete") != 0))
                return;
        if (sd_bus_message_rewind(m, true) < 0 || sd_bus_message_read_basic(m, 's', &arg) <= 0 || !arg)
                return;
        n = strcspn(arg, " \t;");
        if (n < size)
                snprintf(buf, size, "%.*s", (int) n, arg);
}

/* Small replies (a few numbers, a descriptor or two): an upper bound of
 * their size on the wire, header included. */
#define SMALL_REPLY_BYTES 256u

static const struct delivery_cost small_reply = { .bytes = SMALL_REPLY_BYTES };

static int refuse_undelivered(struct broker *b, struct peer *p, sd_bus_error *error) {
        return delivery_set_busy_error(b->delivery, p->uid, 0, error);
}

/* Sends @reply to session @s through its ledger: now, or once the bus has
 * delivered enough of what went before (delivery.h). 1: sent or held;
 * negative: refused, @error set. */
static int reply_to(struct broker *b, struct peer *p, sd_bus_message *call, sd_bus_message *reply,
                    struct delivery_cost cost, sd_bus_error *error) {
        int r = delivery_send(&p->ledger, call, reply, cost, true);

        if (r == -EBUSY)
                return refuse_undelivered(b, p, error);
        return r < 0 ? r : 1;
}

/* A method return of @m with @types and what follows, through reply_to(). */
static int reply_with(struct broker *b, struct peer *p, sd_bus_message *m, struct delivery_cost cost,
                      sd_bus_error *error, const char *types, ...) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        va_list ap;
        int r;

        if (sd_bus_message_get_expect_reply(m) <= 0)
                return 1;
        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        if (types) {
                va_start(ap, types);
                r = sd_bus_message_appendv(reply, types, ap);
                va_end(ap);
                if (r < 0)
                        return r;
        }
        return reply_to(b, p, m, reply, cost, error);
}

/* An error for an identified caller goes through its ledger too; when
 * even the error does not fit, the call gets no reply: a client that does
 * not read its replies would not read that one either. */
static int reply_error_to(struct broker *b, struct peer *p, sd_bus_message *m, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        if (sd_bus_message_get_expect_reply(m) <= 0)
                return 1;
        r = sd_bus_message_new_method_error(m, &reply, error);
        if (r < 0)
                return r;
        r = delivery_send(&p->ledger, m, reply, delivery_error_cost(error), true);
        if (r == -EBUSY)
                delivery_count_dropped(b->delivery);
        else if (r < 0)
                log_debug_errno(r, "Cannot send an error to %s: %m", p->bus_name);
        sd_bus_error_free(error);
        return 1;
}

/* A call that would cost @cost is refused at once, before any work, when
 * its reply could neither go nor wait. */
/* What building large replies may cost a uid: ListEvents and
 * GetStatus of a full table are hundreds of KiB each, and where the bus
 * cannot tell the broker what it has not delivered (dbus-broker: no
 * statistics) nothing else stopped one uid's thousands of unread calls
 * from keeping the broker building them for 14 s ahead of root's
 * GetStatus. Such a reply is built while its uid's bucket and that of all
 * uids are not in debt, and is charged by its size once built
 * (RATE_LARGE_REPLY_KIB). Root and the daemon's uid are exempt. */
#define LARGE_REPLY_BYTES 4096u
#define LARGE_REPLY_BURST_KIB 4096u             /* a dozen full ListEvents at once */
#define LARGE_REPLY_KIB_PER_SEC 8192u           /* 8 MiB/s for one uid */
#define LARGE_REPLY_ALL_BURST_KIB 16384u
#define LARGE_REPLY_ALL_KIB_PER_SEC 65536u      /* 64 MiB/s for all uids together */

static int check_deliverable(struct broker *b, struct peer *p, struct delivery_cost cost, bool may_hold,
                             sd_bus_error *error) {
        uint64_t wait_usec = 0;
        int r;

        if (delivery_check(&p->ledger, cost, may_hold) == DELIVERY_REFUSE)
                return refuse_undelivered(b, p, error);
        if (cost.bytes < LARGE_REPLY_BYTES)
                return 0;
        r = user_charges_rate_allowed(&b->charges, p->uid, RATE_LARGE_REPLY_KIB, &wait_usec);
        if (r == -EDQUOT || r == -ENOSPC)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "uid %u asked for more large replies (ListEvents, GetStatus) than the broker "
                                         "builds for %s (%u MiB a second); try again in %" PRIu64 " ms",
                                         (unsigned) p->uid, r == -EDQUOT ? "one user" : "all users together",
                                         (r == -EDQUOT ? LARGE_REPLY_KIB_PER_SEC : LARGE_REPLY_ALL_KIB_PER_SEC) / 1024u,
                                         wait_usec == UINT64_MAX ? UINT64_MAX : DIV_ROUND_UP(wait_usec, UINT64_C(1000)));
        return r;
}

/* A large reply of @bytes was built for @s: its uid pays for it. */
static void large_reply_built(struct broker *b, struct peer *p, uint64_t bytes) {
        if (bytes >= LARGE_REPLY_BYTES)
                user_charges_rate_charge(&b->charges, p->uid, RATE_LARGE_REPLY_KIB, DIV_ROUND_UP(bytes, UINT64_C(1024)));
}

/* Every handler's result goes through here: refusals are logged, rate
 * limited, with the event and the caller when known. */
static int refused(struct broker *b, sd_bus_message *m, int r, sd_bus_error *error) {
        char event[EVENT_NAME_MAX + 1];
        struct log_about about = { .message_id = UEB_MESSAGE_CALL_REFUSED, .uid = LOG_UID_NONE, .event = event };
        struct peer *p;

        if (r >= 0 || !sd_bus_error_is_set(error))
                return r;
        refused_event_name(m, event, sizeof(event));
        p = peer_find(&b->peers, sd_bus_message_get_sender(m) ?: "");
        if (p && p->identified) {
                about.uid = p->uid;
                about.pid = p->pid;
        }
        log_limited(&b->refusal_ratelimit, "refusals", &about, "Refused %s of %s: %s: %s",
                    sd_bus_message_get_member(m), sd_bus_message_get_sender(m) ?: "?",
                    error->name ?: "?", error->message ?: "");
        if (!p || !p->identified)
                return r;       /* sd-bus answers: no ledger yet */
        return reply_error_to(b, p, m, error);
}

static void save_events(struct broker *b) {
        int r = event_store_save(&b->registry, b->state_dir);

        if (r < 0)
                log_warning_errno(r, "Cannot save the events and their owners in %s: %m", b->state_dir);
}

void broker_restore(struct broker *b) {
        int r;

        assert(b);
        if (!b->state_dir)
                return;
        r = event_store_load(&b->registry, b->state_dir);
        if (r < 0)
                log_warning_errno(r, "Cannot restore the events kept in %s, starting without them: %m",
                                  b->state_dir);
        else if (r > 0)
                log_info("Restored %d events and their owners from %s.", r, b->state_dir);
}

/* The set of events changed and a reply is about to say so (an event
 * exists, or is gone): saved before it goes, so that a crash right after
 * cannot take back what the caller was told. Every change of the set is
 * such a reply's (Register, Delete), so nothing is ever left to save
 * later. On /run's tmpfs the rewrite of the whole table takes 0.1 to 2 ms
 * (bench/bench-state-save.c); a uid creates at most
 * NewEventsPerUserPerMinute= events a minute after its first burst. */
static void events_changed_reply_follows(struct broker *b) {
        if (b->state_dir)
                save_events(b);
}

/* Refuses new calls while the broker's own outgoing queue is over its
 * bound (the bus does not take what the broker sends as fast as callers
 * ask): a sequence of calls cannot grow the broker past its memory bound.
 * What the bus took but has not delivered is the ledgers' (delivery.h). */
static int check_outgoing_backlog(struct broker *b, sd_bus_error *error) {
        uint64_t queued = 0;

        (void) sd_bus_get_n_queued_write(b->bus, &queued);
        if (queued >= b->limits.outgoing_queue)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "the broker has %" PRIu64 " replies waiting for the bus (OutgoingQueue=%s); "
                                         "try again in a moment", queued,
                                         LIMIT_WHERE(b, "OutgoingQueue"));
        return 0;
}

/* Length bounds, the grammar's first: a command longer than the grammar
 * allows is invalid whatever the configuration, one within it but over
 * CommandLength= exceeds a configured limit. */
static int check_command_length(struct broker *b, size_t len, sd_bus_error *error) {
        if (len > EVENT_COMMAND_MAX)
                return 0;       /* the parser names it */
        if (len > b->limits.command_length)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "command is %zu bytes, longer than %u (CommandLength=%s)", len,
                                         b->limits.command_length,
                                         LIMIT_WHERE(b, "CommandLength"));
        return 0;
}

/* The command grammar (uebroker-event-command(7)) allows "u:name ...",
 * which would silently create an event called "u" with the flag "name":
 * refuse it with what to write. */
static int check_no_prefix(const char *command, sd_bus_error *error) {
        if (strncmp(command, "u:", 2) != 0)
                return 0;
        return sd_bus_error_setf(error, BROKER_ERROR_INVALID_COMMAND,
                                 "commands take no 'u:' prefix: write '%s'", command + 2);
}

/* 1 when @s may use the name @name under the reservations: a reserved name
 * is refused to everyone else, whatever polkit says. A reservation added
 * (by a reload) for a name that an event of another owner already has
 * takes effect when the name is free: until the event is deleted or
 * evicted, its owner keeps using it. @ev is the existing event, or NULL. */
static int check_reservation(struct broker *b, struct peer *p, const char *name, const struct broker_event *ev,
                             bool *ret_reserved_for_caller, sd_bus_error *error) {
        _cleanup_free_ gid_t *gids = NULL;
        const struct name_reservation *res;
        size_t n_gids = 0;

        *ret_reserved_for_caller = false;
        if (!b->reservations)
                return 1;
        if (ev && ev->owner_uid == p->uid)
                return 1;
        res = name_reservations_find(b->reservations, name);
        if (!res)
                return 1;
        if (res->is_group && p->uid != 0)
                (void) user_groups(p->uid, &gids, &n_gids);
        if (name_reservation_allows(res, p->uid, gids, n_gids)) {
                *ret_reserved_for_caller = true;
                return 1;
        }
        return sd_bus_error_setf(error, SD_BUS_ERROR_ACCESS_DENIED,
                                 "event name %s is reserved for %s (%s%s, set in %s); choose another name",
                                 name, res->who, res->is_prefix ? "names starting with " : "the name ",
                                 res->pattern, res->origin);
}

/* A refusal for a uid over its part of a pool among the uids holding it
 * (user_charge_take()'s -EUSERS): the holders are named, not the caller
 * alone, which may hold little. */
static int refuse_crowded(struct broker *b, uid_t uid, enum charge_kind kind, sd_bus_error *error) {
        char holders[160];

        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                 "uid %u holds its part (%" PRIu64 ") of the %s that %" PRIu64
                                 " uids share now; most are held by %s; try again once they release some",
                                 (unsigned) uid, user_charges_held(&b->charges, uid, kind), charge_kind_name(kind),
                                 b->charges.holders[kind],
                                 user_charges_holders_text(&b->charges, kind, holders, sizeof(holders)));
}

static int refuse_clients_share(struct broker *b, struct peer *p, int r, sd_bus_error *error) {
        if (r == -EUSERS)
                return refuse_crowded(b, p->uid, CHARGE_CLIENTS, error);
        if (r == -ENOSPC)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "the broker already serves %" PRIu64 " data sessions (Clients=%s); try "
                                         "again once some have closed", b->charges.bounds.kind[CHARGE_CLIENTS].pool,
                                         LIMIT_WHERE(b, "Clients"));
        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                 "uid %u already has %u data sessions holding registrations or opened "
                                 "(ClientsPerUser=%s); close some (Close, or end their connections)",
                                 (unsigned) p->uid, b->limits.clients_per_user,
                                 LIMIT_WHERE(b, "ClientsPerUser"));
}

static int refuse_admission(struct broker *b, enum admission verdict, uid_t uid, const char *name,
                            sd_bus_error *error) {
        if (verdict == ADMISSION_CROWDED)
                return refuse_crowded(b, uid, CHARGE_EVENTS, error);
        if (verdict == ADMISSION_USER_FULL)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "uid %u already owns %u events, all in use (EventsPerUser=%s); "
                                         "unregister events it no longer writes or close connections holding them",
                                         (unsigned) uid, b->limits.events_per_user, LIMIT_WHERE(b, "EventsPerUser"));
        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                 "cannot create event %s: the broker holds %u events (Events=%s), none unused "
                                 "for %u s (UnusedEventExpirySec=%s); Delete unused events or try later",
                                 name, broker_max_events(b), LIMIT_WHERE(b, "Events"),
                                 b->limits.unused_event_expiry_sec, LIMIT_WHERE(b, "UnusedEventExpirySec"));
}

/* Each new event is an EventAdded to every listener (and an eviction an
 * EventRemoved, and a state-file rewrite): a uid creates them at the
 * rate of NewEventsPerUserPerMinute=, after EventsPerUser= at once. */
static int take_new_event(struct broker *b, uid_t uid, const char *name, sd_bus_error *error) {
        uint64_t wait_usec = 0;
        int r;

        r = user_charges_take_rate(&b->charges, uid, RATE_NEW_EVENTS, &wait_usec);
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "cannot create event %s: uid %u creates new events too often (%u a minute "
                                         "after the first %u, NewEventsPerUserPerMinute=%s); try again in %"
                                         PRIu64 " ms, or register the events it already has",
                                         name, (unsigned) uid, b->limits.new_events_per_user_per_minute,
                                         b->limits.events_per_user, LIMIT_WHERE(b, "NewEventsPerUserPerMinute"),
                                         (wait_usec + 999u) / 1000u);
        return r;
}

/* An evicted event, kept until the Register that evicted it has committed:
 * eviction, creation and registration succeed or fail together, and on
 * failure the victim is put back as it was (unused, same owner and
 * fields). */
struct eviction {
        struct event_def *def;
        uid_t owner;
        uint32_t status_index;  /* given back on undo: clients hold its address */
};

static void eviction_done(struct eviction *e) {
        e->def = event_def_free(e->def);
}

static void evict(struct broker *b, struct broker_event *victim, const char *for_name, uid_t uid,
                  struct eviction *ret) {
        log_limited(&b->event_log_ratelimit, "event changes",
                    &(struct log_about) { .message_id = UEB_MESSAGE_EVENT_EVICTED, .event = victim->def->name,
                                          .uid = uid },
                    "Event %s (status index %u, owner uid %u) evicted to make room for %s of uid %u: it was unused "
                    "and %s.", victim->def->name, victim->status_index, (unsigned) victim->owner_uid, for_name,
                    (unsigned) uid, victim->owner_uid == uid ? "the caller's own" : "idle past UnusedEventExpirySec=");
        ret->owner = victim->owner_uid;
        ret->status_index = victim->status_index;
        ret->def = event_registry_remove_keep_def(&b->registry, victim);
}

static void eviction_undo(struct broker *b, struct eviction *e) {
        struct broker_event *restored;

        if (!e->def)
                return;
        if (event_registry_add_at(&b->registry, e->def, e->owner, e->status_index, &restored) < 0) {
                log_error("Event %s of uid %u could not be restored after a failed eviction.", e->def->name,
                          (unsigned) e->owner);
                eviction_done(e);
                return;
        }
        e->def = NULL;  /* the registry's again */
}

/* Register's reply: the data file and the status page; Authorize's: the
 * data file. */
static const struct delivery_cost register_reply_cost = { .fds = 2, .bytes = SMALL_REPLY_BYTES };
/* The data session a call names and its peer, identified: the
 * connection's own at BROKER_OBJECT_PATH, one it opened at its
 * BROKER_SESSION_PATH_PREFIX path. As peer_identify(): 1 with both set, 0
 * when the call waits for identification, negative errno with @error set. */
static int identify_data_session(struct broker *b, sd_bus_message *m, sd_bus_error *error, struct peer **ret_peer,
                                 struct data_session **ret) {
        const char *path = sd_bus_message_get_path(m);
        struct data_session *ds = NULL;
        struct peer *p;
        uint64_t id;
        int r;

        /* Set on every path: a caller's compiler cannot see that a
         * positive return always comes with both. */
        *ret_peer = NULL;
        *ret = NULL;
        r = peer_identify(&b->peers, m, error, &p);
        if (r <= 0)
                return r;
        if (data_session_path_id(path, &id) >= 0)
                ds = peer_session(p, id);
        if (!ds)
                return sd_bus_error_setf(error, SD_BUS_ERROR_UNKNOWN_OBJECT,
                                         "%s is not a data session of this connection: open one with OpenSession "
                                         "on %s, and call its methods on the connection that opened it",
                                         path ?: "(no path)", BROKER_OBJECT_PATH);
        *ret_peer = p;
        *ret = ds;
        return 1;
}

static const struct delivery_cost authorize_reply_cost = { .fds = 1, .bytes = SMALL_REPLY_BYTES };

/* Register's and Authorize's command, read and validated: @ret_def is the
 * parsed definition. Negative errno with @error set. */
static int read_registration(struct broker *b, sd_bus_message *m, bool grant, struct event_def **ret_def,
                             sd_bus_error *error) {
        struct event_error parse_error = { 0 };
        const char *command;
        size_t len;
        int r;

        r = sd_bus_message_read(m, "s", &command);
        if (r < 0)
                return r;
        len = strlen(command);
        r = check_command_length(b, len, error);
        if (r < 0)
                return r;
        r = check_no_prefix(command, error);
        if (r < 0)
                return r;
        r = event_def_parse_n(command, len, 0, ret_def, &parse_error);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return sd_bus_error_set(error, BROKER_ERROR_INVALID_COMMAND, parse_error.message);
        if (grant && !provider_link_self_registration(&b->link))
                return sd_bus_error_setf(error, BROKER_ERROR_NOT_SUPPORTED,
                                         "the %s provider's data file is not the kernel's user_events_data, so "
                                         "nothing can register on it but the broker: call Register instead",
                                         provider_link_name(&b->link));
        return 0;
}

/* The data session a Register (or Authorize, @grant) names, if it takes
 * that kind of call and its reply can be delivered. As
 * identify_data_session(): 1, 0 while identification waits, or negative
 * errno with @error set. */
static int registration_session(struct broker *b, sd_bus_message *m, bool grant, struct delivery_cost reply_cost,
                                struct peer **ret_peer, struct data_session **ret, sd_bus_error *error) {
        int r;

        r = identify_data_session(b, m, error, ret_peer, ret);
        if (r <= 0)
                return r;
        if (grant && (*ret)->indexes.n > 0)
                return sd_bus_error_set(error, BROKER_ERROR_BUSY,
                                        "this data session has registered events through the broker (Register); "
                                        "Authorize definitions on another (OpenSession), whose data file is then "
                                        "the caller's to register on");
        if (!grant && data_session_registers_itself(*ret))
                return sd_bus_error_set(error, BROKER_ERROR_BUSY,
                                        "this data session registers its events itself (Authorize); call Register "
                                        "on another (OpenSession)");
        r = check_outgoing_backlog(b, error);
        if (r < 0)
                return r;
        r = check_deliverable(b, *ret_peer, reply_cost, true, error);
        return r < 0 ? r : 1;
}

/* The polkit action registering @def as @p asks for: another uid's event
 * (not reserved for the caller) is register-foreign. Negative errno with
 * @error set when the name cannot be the caller's at all. */
static int registration_action(struct broker *b, struct peer *p, const struct event_def *def,
                               const struct broker_event *ev, const char **ret_action, sd_bus_error *error) {
        bool reserved_for_caller;
        int r;

        r = check_reservation(b, p, def->name, ev, &reserved_for_caller, error);
        if (r < 0)
                return r;
        if (ev && !event_def_equal(ev->def, def)) {
                _cleanup_free_ char *existing = event_def_canonical(ev->def);

                return sd_bus_error_setf(error, BROKER_ERROR_NAME_IN_USE,
                                         "event %s exists with other fields: %s; register it with exactly those "
                                         "fields or choose another name", def->name, existing ?: "(out of memory)");
        }
        *ret_action = ev && ev->owner_uid != p->uid && !reserved_for_caller ? "org.uebroker1.register-foreign" :
                                                                               "org.uebroker1.register";
        return 0;
}

/* Whether @ds may hold one more registration, of @ev or (NULL) of a new
 * event named @name: the clients' share, EventsPerClient=, and for a new
 * event the admission decision (admission.c), which may name a @ret_victim
 * to evict. Negative errno with @error set when refused. */
static int admit_registration(struct broker *b, struct peer *p, struct data_session *ds,
                              const struct broker_event *ev, const char *name, struct broker_event **ret_victim,
                              sd_bus_error *error) {
        struct admission_limits limits = {
                .max_events = broker_max_events(b),
                .events_per_user = b->limits.events_per_user,
                .unused_expiry_usec = (uint64_t) b->limits.unused_event_expiry_sec * 1000000u,
        };
        enum admission verdict;
        int r;

        *ret_victim = NULL;
        if (ds->client_charge.amount == 0) {
                r = user_charges_check(&b->charges, p->uid, CHARGE_CLIENTS, 1);
                if (r < 0)
                        return refuse_clients_share(b, p, r, error);
        }
        if (data_session_n_events(ds) >= b->limits.events_per_client)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "this data session already holds %u registrations (EventsPerClient=%s)",
                                         b->limits.events_per_client, LIMIT_WHERE(b, "EventsPerClient"));
        if (ev)
                return 0;
        verdict = admission_for_new_event(&b->registry, p->uid,
                                          user_charges_exempt(&b->charges, p->uid, CHARGE_EVENTS),
                                          user_charges_check(&b->charges, p->uid, CHARGE_EVENTS, 1) == -EUSERS,
                                          b->registry.now_usec(), &limits, ret_victim);
        if (verdict != ADMISSION_ADMIT && verdict != ADMISSION_EVICT)
                return refuse_admission(b, verdict, p->uid, name, error);
        return take_new_event(b, p->uid, name, error);
}

/* @error for a registration of @name the provider refused with @r. */
static int registration_refused(sd_bus_error *error, int r, const char *name) {
        switch (r) {
        case -ENOSPC:
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "cannot register event %s: too many distinct events on this data session "
                                         "(%u); open another (OpenSession)", name, WRITE_INDEXES_MAX);
        case -EADDRINUSE:
                /* The kernel's own answer: the broker's registry had no
                 * such name. */
                return sd_bus_error_setf(error, BROKER_ERROR_NAME_IN_USE,
                                         "cannot register event %s: the kernel already has an event of that name "
                                         "with other fields, defined outside the broker (see %s); pick another name",
                                         name, "user_events_status");
        case -EMFILE:
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "cannot register event %s: the kernel's limit of user events is reached "
                                         "(sysctl kernel.user_events_max); delete unused events or raise it", name);
        default:
                return broker_error_set_errnof(error, r, "cannot register event %s: %m", name);
        }
}

/* A new event of @def (taken on success) for @p, evicting @victim first if
 * set; the eviction is kept in @evicted until the registration commits.
 * Negative errno with @error set, the victim back in place. */
static int create_event(struct broker *b, struct peer *p, struct event_def **def, struct broker_event *victim,
                        struct eviction *evicted, struct broker_event **ret, sd_bus_error *error) {
        const char *name = (*def)->name;
        int r;

        if (victim)
                evict(b, victim, name, p->uid, evicted);
        r = event_registry_add(&b->registry, *def, p->uid, ret);
        if (r < 0) {
                eviction_undo(b, evicted);
                if (r == -ENOSPC)
                        return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                                 "cannot create event %s: every status index is in use; "
                                                 "Delete unused events", name);
                return broker_error_set_errnof(error, r, "cannot create event %s: %m", name);
        }
        *def = NULL;    /* the registry's now */
        return 0;
}

/* Changes state for an admitted registration: the session's provider
 * session, the event (created from @def when @ev is NULL, evicting
 * @victim), then Register's registration or Authorize's grant. All or
 * nothing: on failure a created event goes and the victim comes back.
 * Returns the event in @ret_ev (its new index in @ret_write_index for
 * Register), or negative errno with @error set. */
static int commit_registration(struct broker *b, struct peer *p, struct data_session *ds, bool grant,
                               struct event_def **def, struct broker_event *ev, struct broker_event *victim,
                               struct broker_event **ret_ev, uint32_t *ret_write_index, sd_bus_error *error) {
        _cleanup_(eviction_done) struct eviction evicted = {};
        bool created = false;
        int r;

        r = data_session_open_provider(ds);
        if (r == -EDQUOT || r == -EUSERS || r == -ENOSPC)
                return refuse_clients_share(b, p, r, error);
        if (r < 0)
                return broker_error_set_errnof(error, r, "cannot open a data file and status page: %m");
        if (!ev) {
                r = create_event(b, p, def, victim, &evicted, &ev, error);
                if (r < 0)
                        return r;
                created = true;
        }
        r = grant ? data_session_grant(ds, ev) : data_session_register(ds, ev, ret_write_index);
        if (r < 0) {
                registration_refused(error, r, ev->def->name);
                if (created) {
                        event_registry_remove(&b->registry, ev);
                        eviction_undo(b, &evicted);
                }
                return r;
        }
        if (created) {
                log_limited(&b->event_log_ratelimit, "event changes",
                            &(struct log_about) { .message_id = UEB_MESSAGE_EVENT_CREATED, .event = ev->def->name,
                                                  .uid = p->uid, .pid = p->pid },
                            "Event %s created by uid %u (pid %d) with status index %u.", ev->def->name,
                            (unsigned) p->uid, (int) p->pid, ev->status_index);
                events_changed_reply_follows(b);
        }
        *ret_ev = ev;
        return 0;
}

/* Register, and Authorize (@grant): the same validation, authorization and
 * admission; Register then registers the event on the caller's data file,
 * Authorize only grants it, for the caller's own DIAG_IOCSREG (data-session.h,
 * Grants). Identification and polkit may suspend the call (1): it runs
 * again from the start when they answer. */
static int register_event(struct broker *b, sd_bus_message *m, bool grant, sd_bus_error *error) {
        const struct delivery_cost reply_cost = grant ? authorize_reply_cost : register_reply_cost;
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        struct broker_event *ev, *victim;
        struct data_session *ds;
        uint32_t write_index = 0;
        const char *action = NULL;
        struct peer *p;
        int r;

        r = read_registration(b, m, grant, &def, error);
        if (r < 0)
                return r;
        r = registration_session(b, m, grant, reply_cost, &p, &ds, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        ev = event_registry_find(&b->registry, def->name);
        r = registration_action(b, p, def, ev, &action, error);
        if (r < 0)
                return r;
        r = polkit_check(b->polkit, m, action, sd_bus_message_get_allow_interactive_authorization(m) > 0, p->uid,
                         p->pid, error);
        if (r <= 0)
                return r < 0 ? r : 1;   /* 0: re-run when polkit answers */

        /* Already registered (or granted) on this session: the same reply. */
        if (!ev || !(grant ? data_session_is_granted(ds, ev) :
                             data_session_find_registration(ds, ev, &write_index) == 0)) {
                r = admit_registration(b, p, ds, ev, def->name, &victim, error);
                if (r < 0)
                        return r;
                r = commit_registration(b, p, ds, grant, &def, ev, victim, &ev, &write_index, error);
                if (r < 0)
                        return r;
        }

        event_registry_touch(&b->registry, ev);
        if (grant)
                return reply_with(b, p, m, reply_cost, error, "h", data_session_data_fd(ds));
        return reply_with(b, p, m, reply_cost, error, "hhuu", data_session_data_fd(ds), data_session_status_fd(ds),
                          ev->status_index, write_index);
}

static int method_register(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, register_event(b, m, false, error), error);
}

static int method_authorize(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, register_event(b, m, true, error), error);
}

static int unregister_event(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        struct data_session *ds;
        struct peer *p;
        uint32_t write_index;
        int r;

        r = sd_bus_message_read(m, "u", &write_index);
        if (r < 0)
                return r;

        /* Acts only on the caller's own registrations: nothing to authorize
         * (identified all the same, so that its replies have a ledger). */
        r = identify_data_session(b, m, error, &p, &ds);
        if (r <= 0)
                return r < 0 ? r : 1;
        r = data_session_unregister(ds, write_index);
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "write index %u is not registered on this data session; pass a "
                                         "write_index that Register returned on this same object", write_index);
        if (r < 0)
                return broker_error_set_errnof(error, r, "cannot unregister write index %u: %m", write_index);

        return reply_with(b, p, m, small_reply, error, NULL);
}

static int method_unregister(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, unregister_event(b, m, error), error);
}

static const struct delivery_cost ring_reply_cost = { .fds = 1, .bytes = SMALL_REPLY_BYTES };

/* The caller's own data session gets a shared-memory ring: nothing to
 * authorize beyond what its Register was. */
static int open_ring(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        _cleanup_close_ int fd = -EBADF;
        struct data_session *ds;
        struct peer *p;
        uint32_t requested, size = 0;
        int r;

        r = sd_bus_message_read(m, "u", &requested);
        if (r < 0)
                return r;

        r = identify_data_session(b, m, error, &p, &ds);
        if (r <= 0)
                return r < 0 ? r : 1;
        if (!ds->provider_session || ds->indexes.n_active == 0)
                return sd_bus_error_set(error, BROKER_ERROR_NO_SUCH_EVENT,
                                        "this data session holds no registration; Register an event on it first "
                                        "(a ring lives while its data session holds one)");
        r = check_deliverable(b, p, ring_reply_cost, true, error);
        if (r < 0)
                return r;
        fd = data_session_open_ring(ds, requested, &size);
        if (fd == -EOPNOTSUPP)
                return sd_bus_error_setf(error, BROKER_ERROR_NOT_SUPPORTED,
                                         "the %s provider has no rings; write to the data file",
                                         provider_link_name(&b->link));
        if (fd == -EBUSY)
                return sd_bus_error_set(error, BROKER_ERROR_BUSY,
                                        "this data session has a ring already; keep using it");
        if (fd == -EUSERS)
                return refuse_crowded(b, p->uid, CHARGE_RING_BYTES, error);
        if (fd == -EDQUOT)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "uid %u has used its share of the memory for rings (RingMemoryPerUserKiB=%"
                                         PRIu64 "%s); write to the data file instead, or close a connection",
                                         (unsigned) p->uid, b->charges.bounds.kind[CHARGE_RING_BYTES].share / 1024u,
                                         LIMIT_WHERE(b, "RingMemoryPerUserKiB"));
        if (fd == -ENOSPC)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "the memory for rings is used up (RingMemoryKiB=%" PRIu64
                                         "%s); write to the data file instead",
                                         b->charges.bounds.kind[CHARGE_RING_BYTES].pool / 1024u,
                                         LIMIT_WHERE(b, "RingMemoryKiB"));
        if (fd < 0)
                return broker_error_set_errnof(error, fd, "cannot open a ring: %m");

        /* The reply carries a dup; ours closes on return: the broker keeps
         * the mapping only. */
        return reply_with(b, p, m, ring_reply_cost, error, "hu", fd, size);
}

static int method_open_ring(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, open_ring(b, m, error), error);
}

static const struct delivery_cost open_session_reply_cost = { .bytes = SMALL_REPLY_BYTES };

/* A data session beside the connection's own: charged at once, like a
 * data file; nothing to authorize until something registers on it. */
static int open_session(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        char path[DATA_SESSION_PATH_MAX];
        struct data_session *ds;
        struct peer *p;
        int r;

        r = peer_identify(&b->peers, m, error, &p);
        if (r <= 0)
                return r < 0 ? r : 1;
        r = check_deliverable(b, p, open_session_reply_cost, true, error);
        if (r < 0)
                return r;
        r = peer_open_session(p, &ds);
        if (r == -EDQUOT || r == -EUSERS || r == -ENOSPC)
                return refuse_clients_share(b, p, r, error);
        if (r == -EMFILE)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "this connection already has %u data sessions open; Close some",
                                         PEER_SESSIONS_MAX);
        if (r < 0)
                return broker_error_set_errnof(error, r, "cannot open a data session: %m");
        return reply_with(b, p, m, open_session_reply_cost, error, "o", data_session_path(ds, path));
}

static int method_open_session(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, open_session(b, m, error), error);
}

/* Ends a data session the connection opened, as its connection's end
 * would: its registrations and grants go, its data file stops counting. */
static int close_session(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        struct data_session *ds;
        struct peer *p;
        int r;

        r = identify_data_session(b, m, error, &p, &ds);
        if (r <= 0)
                return r < 0 ? r : 1;
        if (ds->id == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "a connection's own data session ends with the connection");
        peer_close_session(p, ds);
        return reply_with(b, p, m, small_reply, error, NULL);
}

static int method_close_session(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, close_session(b, m, error), error);
}

static bool event_name_plausible(const char *name) {
        size_t len = strlen(name);

        return len > 0 && len <= EVENT_NAME_MAX;
}

/* Drops one of the caller's own grants (Authorize), for a client whose
 * own DIAG_IOCSREG the kernel then refused: nothing to authorize. */
static int withdraw_grant(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        struct data_session *ds;
        struct broker_event *ev;
        struct peer *p;
        const char *name;
        int r;

        r = sd_bus_message_read(m, "s", &name);
        if (r < 0)
                return r;
        r = identify_data_session(b, m, error, &p, &ds);
        if (r <= 0)
                return r < 0 ? r : 1;
        ev = event_name_plausible(name) ? event_registry_find(&b->registry, name) : NULL;
        r = ev ? data_session_withdraw(ds, ev) : -ENOENT;
        if (r == -ENOENT)
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "this data session holds no grant of an event called %.*s; pass a name "
                                         "Authorize granted on this same object", (int) EVENT_NAME_MAX, name);
        if (r < 0)
                return broker_error_set_errnof(error, r, "cannot withdraw the grant of %s: %m", ev->def->name);
        return reply_with(b, p, m, small_reply, error, NULL);
}

static int method_withdraw(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, withdraw_grant(b, m, error), error);
}

static int delete_event(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        struct broker_event *ev;
        struct peer *p;
        const char *name;
        int interactive, r;

        r = sd_bus_message_read(m, "sb", &name, &interactive);
        if (r < 0)
                return r;
        if (!event_name_plausible(name))
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "no event has a name of %zu bytes (names are 1 to %u bytes)", strlen(name),
                                         (unsigned) EVENT_NAME_MAX);

        r = peer_identify(&b->peers, m, error, &p);
        if (r <= 0)
                return r < 0 ? r : 1;
        r = polkit_check(b->polkit, m, "org.uebroker1.delete", interactive, p->uid, p->pid, error);
        if (r <= 0)
                return r < 0 ? r : 1;

        ev = event_registry_find(&b->registry, name);
        if (!ev)
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "no event is called %s (ListEvents shows the events that exist)", name);
        if (ev->n_registrations > 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s still has %u registrations; delete it once the programs holding "
                                         "them unregister or disconnect", name, ev->n_registrations);
        if (ev->n_bound_sessions > 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s is unregistered but its write index stays bound on %u connections "
                                         "(an index is never reused); delete it once they disconnect",
                                         name, ev->n_bound_sessions);
        if (broker_event_status(&b->registry, ev) != 0)
                return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                         "event %s is being listened to; stop recording or tracing it first", name);

        log_struct(LOG_INFO,
                   &(struct log_about) { .message_id = UEB_MESSAGE_EVENT_DELETED, .event = name, .uid = p->uid,
                                         .pid = p->pid },
                   "Event %s (status index %u) deleted by uid %u.", name, ev->status_index, (unsigned) p->uid);
        event_registry_remove(&b->registry, ev);
        events_changed_reply_follows(b);
        return reply_with(b, p, m, small_reply, error, NULL);
}

static int method_delete(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, delete_event(b, m, error), error);
}

/* Identifies the caller of a large reply (ListEvents, GetStatus) of about
 * @estimate bytes and checks it may be built: the bus is not backed up, and
 * the reply can go to the caller now (never held) within its uid's rate.
 * Returns 1 with *@ret_peer, 0 while identification is pending (the call
 * reruns), or negative errno with @error set. */
static int identify_for_large_reply(struct broker *b, sd_bus_message *m, size_t estimate, sd_bus_error *error,
                                    struct peer **ret_peer) {
        struct peer *p;
        int r;

        r = peer_identify(&b->peers, m, error, &p);
        if (r <= 0)
                return r;
        r = check_outgoing_backlog(b, error);
        if (r < 0)
                return r;
        r = check_deliverable(b, p, (struct delivery_cost) { .bytes = estimate }, false, error);
        if (r < 0)
                return r;
        *ret_peer = p;
        return 1;
}

/* An upper bound of the ListEvents reply: each event's name, fields text
 * and fixed part. */
static size_t list_events_reply_estimate(const struct broker *b) {
        return (size_t) b->registry.n_events * (EVENT_COMMAND_MAX + 64u);
}

static int list_events(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        struct peer *p;
        size_t estimate = list_events_reply_estimate(b), built = 0;
        int r;

        r = identify_for_large_reply(b, m, estimate, error, &p);
        if (r <= 0)
                return r < 0 ? r : 1;
        if (sd_bus_message_get_expect_reply(m) <= 0)
                return 1;

        r = sd_bus_message_new_method_return(m, &reply);
        if (r < 0)
                return r;
        r = sd_bus_message_open_container(reply, 'a', "(ssuub)");
        if (r < 0)
                return r;
        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++) {
                struct broker_event *ev = b->registry.by_index[i];
                _cleanup_free_ char *fields = NULL;

                if (!ev)
                        continue;
                fields = event_def_fields_text(ev->def);
                if (!fields)
                        return -ENOMEM;
                r = sd_bus_message_append(reply, "(ssuub)", ev->def->name, fields, (uint32_t) ev->owner_uid,
                                          ev->n_registrations, broker_event_status(&b->registry, ev) != 0);
                if (r < 0)
                        return r;
                /* Two strings (length, NUL, padding) and three numbers. */
                built += strlen(ev->def->name) + strlen(fields) + 32u;
        }
        r = sd_bus_message_close_container(reply);
        if (r < 0)
                return r;
        large_reply_built(b, p, built);
        r = delivery_send(&p->ledger, m, reply, (struct delivery_cost) { .bytes = estimate }, false);
        if (r == -EBUSY)
                return refuse_undelivered(b, p, error);
        return r < 0 ? r : 1;
}

static int method_list_events(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, list_events(b, m, error), error);
}

static int get_status(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        _cleanup_free_ struct status_entry *entries = NULL;
        _cleanup_free_ char *text = NULL;
        struct peer *p;
        size_t n = 0, estimate = (size_t) b->registry.n_events * (EVENT_NAME_MAX + 32u) + 128u;
        int r;

        r = identify_for_large_reply(b, m, estimate, error, &p);
        if (r <= 0)
                return r < 0 ? r : 1;

        entries = calloc(b->registry.n_events ?: 1, sizeof(*entries));
        if (!entries)
                return -ENOMEM;
        for (uint32_t i = 1; i < STATUS_PAGE_SIZE && n < b->registry.n_events; i++) {
                struct broker_event *ev = b->registry.by_index[i];

                if (!ev)
                        continue;
                entries[n++] = (struct status_entry) {
                        .index = ev->status_index,
                        .name = ev->def->name,
                        .status = broker_event_status(&b->registry, ev),
                };
        }
        text = status_text(entries, n, STATUS_MAX_EVENTS);
        if (!text)
                return -ENOMEM;
        large_reply_built(b, p, strlen(text));
        return reply_with(b, p, m, (struct delivery_cost) { .bytes = estimate }, error, "s", text);
}

static int method_get_status(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, get_status(b, m, error), error);
}

/* The reply to Record and RecordMatching: the stream @fd (ours, closed by
 * the caller; the reply carries a dup) or why there is none. */
static const struct delivery_cost record_reply_cost = { .fds = 1, .bytes = SMALL_REPLY_BYTES };

/* A record stream is charged to its caller's uid until the provider lets
 * it go (provider_stream_owner): the charge goes with the stream. */
static void stream_charge_closed(void *userdata) {
        struct user_charge *c = ASSERT_PTR(userdata);

        user_charge_deinit(c);
        free(c);
}

static int stream_charge_take(struct broker *b, struct peer *p, struct provider_stream_owner *ret,
                              sd_bus_error *error) {
        const struct charge_bound *bound = &b->charges.bounds.kind[CHARGE_RECORD_STREAMS];
        _cleanup_free_ struct user_charge *c = malloc(sizeof(*c));
        int r;

        if (!c)
                return -ENOMEM;
        user_charge_init(c, &b->charges, p->uid, CHARGE_RECORD_STREAMS);
        r = user_charge_take(c, 1);
        if (r == -EUSERS)
                return refuse_crowded(b, p->uid, CHARGE_RECORD_STREAMS, error);
        if (r == -EDQUOT)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "uid %u already has %" PRIu64 " record streams open (RecordStreamsPerUser=%s); "
                                         "close one and try again",
                                         (unsigned) p->uid, bound->share, LIMIT_WHERE(b, "RecordStreamsPerUser"));
        if (r == -ENOSPC)
                return sd_bus_error_setf(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                         "all %" PRIu64 " record streams are open (RecordStreams=%s; at most "
                                         "%u on the %s provider); try again once one has closed",
                                         bound->pool, LIMIT_WHERE(b, "RecordStreams"),
                                         provider_link_max_record_streams(&b->link),
                                         provider_link_name(&b->link));
        if (r < 0)
                return r;
        *ret = (struct provider_stream_owner) { .closed = stream_charge_closed, .userdata = TAKE_PTR(c) };
        return 0;
}

static int reply_record_stream(struct broker *b, struct peer *p, sd_bus_message *m, int fd,
                               struct provider_stream_owner *owner, const char *unsupported, sd_bus_error *error) {
        if (fd < 0)
                provider_stream_owner_closed(owner);    /* the provider never took it */
        if (fd == -EOPNOTSUPP)
                return sd_bus_error_setf(error, BROKER_ERROR_NOT_SUPPORTED, "the %s provider %s",
                                         provider_link_name(&b->link), unsupported);
        if (fd == -EUSERS)
                return sd_bus_error_set(error, BROKER_ERROR_QUOTA_EXCEEDED,
                                        "too many record streams are open; close one and try again");
        if (fd < 0)
                return broker_error_set_errnof(error, fd, "cannot open a record stream: %m");
        return reply_with(b, p, m, record_reply_cost, error, "h", fd);
}

/* Record and RecordMatching: who calls (the session), may they record
 * (polkit's org.uebroker1.record). 1: go on; 0: the call waits for the bus
 * or polkit and is re-run; negative: refused, @error set. */
static int authorize_recording(struct broker *b, sd_bus_message *m, struct peer **ret_peer,
                               sd_bus_error *error) {
        struct peer *p;
        int r;

        r = peer_identify(&b->peers, m, error, &p);
        if (r <= 0)
                return r;
        *ret_peer = p;
        r = check_deliverable(b, p, record_reply_cost, true, error);
        if (r < 0)
                return r;
        return polkit_check(b->polkit, m, "org.uebroker1.record",
                            sd_bus_message_get_allow_interactive_authorization(m) > 0, p->uid, p->pid, error);
}

static int check_record_name(const char *name, size_t index, void *userdata, sd_bus_error *error) {
        if (!event_name_plausible(name))
                return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                         "no event has a name of %zu bytes (names are 1 to %u bytes)", strlen(name),
                                         (unsigned) EVENT_NAME_MAX);
        return 0;
}

static int record_events(struct broker *b, sd_bus_message *m, sd_bus_error *error) {
        _cleanup_free_ struct provider_event **events = NULL;
        _cleanup_free_ const char **names = NULL;
        struct provider_stream_owner owner = {};
        _cleanup_close_ int fd = -EBADF;
        struct peer *p = NULL;
        size_t n = 0;
        int r;

        /* Read and validate: a bounded number of plausible names. */
        r = bus_message_read_strv_bounded(m, STATUS_INDEX_MAX, check_record_name, NULL, error, &names, &n);
        if (r == -E2BIG)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "more than %u event names; ask for at most %u", STATUS_INDEX_MAX,
                                         STATUS_INDEX_MAX);
        if (r < 0)
                return r;
        if (n == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "no event names given; name at least one event to record");

        r = authorize_recording(b, m, &p, error);
        if (r <= 0)
                return r < 0 ? r : 1;   /* 0: re-run when the bus or polkit answers */

        events = calloc(n, sizeof(*events));
        if (!events)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                struct broker_event *ev = event_registry_find(&b->registry, names[i]);

                if (!ev)
                        return sd_bus_error_setf(error, BROKER_ERROR_NO_SUCH_EVENT,
                                                 "no event is called %s (ListEvents shows the events that exist)",
                                                 names[i]);
                events[i] = ev->provider_event;
                event_registry_touch(&b->registry, ev);
        }

        r = stream_charge_take(b, p, &owner, error);
        if (r < 0)
                return r;
        fd = provider_link_record(&b->link, events, n, &owner);
        return reply_record_stream(b, p, m, fd, &owner, "does not record; use ftrace or perf", error);
}

static int method_record(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, record_events(b, m, error), error);
}

static int check_record_pattern(const char *pattern, size_t index, void *userdata, sd_bus_error *error) {
        struct event_error pattern_error = { 0 };

        if (event_pattern_validate(pattern, &pattern_error) < 0)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "pattern %zu: %s", index + 1,
                                         pattern_error.message);
        return 0;
}

/* RecordMatching(as patterns): as Record, for the events whose names match
 * a pattern now and those registered later. None need match yet.
 * RecordKernelPages(as patterns) (@kernel_pages): the same events, the
 * stream carrying the kernel's ring-buffer pages (uebroker-record.h). */
static int record_matching(struct broker *b, sd_bus_message *m, bool kernel_pages, sd_bus_error *error) {
        _cleanup_free_ struct provider_event **events = NULL;
        _cleanup_free_ const char **patterns = NULL;
        struct provider_stream_owner owner = {};
        _cleanup_close_ int fd = -EBADF;
        struct peer *p = NULL;
        size_t n = 0, n_events = 0;
        int r;

        /* Read and validate: a bounded number of valid patterns. */
        r = bus_message_read_strv_bounded(m, EVENT_PATTERNS_MAX, check_record_pattern, NULL, error, &patterns, &n);
        if (r == -E2BIG)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS,
                                         "more than %u patterns; ask for at most %u (one pattern may match many "
                                         "events)", EVENT_PATTERNS_MAX, EVENT_PATTERNS_MAX);
        if (r < 0)
                return r;
        if (n == 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INVALID_ARGS,
                                        "no patterns given; give at least one name or pattern such as 'app_*'");

        r = authorize_recording(b, m, &p, error);
        if (r <= 0)
                return r < 0 ? r : 1;   /* 0: re-run when the bus or polkit answers */

        events = calloc(b->registry.n_events ?: 1, sizeof(*events));
        if (!events)
                return -ENOMEM;
        for (uint32_t i = 1; i < STATUS_PAGE_SIZE && n_events < b->registry.n_events; i++) {
                struct broker_event *ev = b->registry.by_index[i];

                if (!ev || !event_patterns_match(patterns, n, ev->def->name))
                        continue;
                events[n_events++] = ev->provider_event;
                event_registry_touch(&b->registry, ev);
        }

        r = stream_charge_take(b, p, &owner, error);
        if (r < 0)
                return r;
        if (kernel_pages) {
                fd = provider_link_record_kernel_pages(&b->link, events, n_events, patterns, n, &owner);
                return reply_record_stream(b, p, m, fd, &owner,
                                           "has no kernel ring buffer to take pages from; use RecordMatching "
                                           "(uebctl record -o FILE.dat then builds the pages from the records)",
                                           error);
        }
        fd = provider_link_record_matching(&b->link, events, n_events, patterns, n, &owner);
        return reply_record_stream(b, p, m, fd, &owner, "cannot follow events registered later; use Record with names",
                                   error);
}

static int method_record_matching(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, record_matching(b, m, false, error), error);
}

static int method_record_kernel_pages(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return refused(b, m, record_matching(b, m, true, error), error);
}

static int property_get_version(sd_bus *bus, const char *path, const char *interface, const char *property,
                                sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        return sd_bus_message_append(reply, "s", PACKAGE_VERSION);
}

static int property_get_provider(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return sd_bus_message_append(reply, "s", provider_link_name(&b->link));
}

static int property_get_max_events(sd_bus *bus, const char *path, const char *interface, const char *property,
                                   sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return sd_bus_message_append(reply, "u", broker_max_events(b));
}

static int property_get_active_events(sd_bus *bus, const char *path, const char *interface, const char *property,
                                      sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);

        return sd_bus_message_append(reply, "u", b->registry.n_events);
}

/* The data path's counters by name; empty when the provider has none
 * (the kernel carries the records). */
static int property_get_record_counters(sd_bus *bus, const char *path, const char *interface, const char *property,
                                        sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);
        struct provider_counters c;
        int r;

        r = sd_bus_message_open_container(reply, 'a', "{st}");
        if (r < 0)
                return r;
        if (provider_link_counters(&b->link, &c)) {
                r = sd_bus_message_append(reply, "{st}{st}{st}{st}{st}", "received", c.received, "dropped",
                                          c.dropped, "writer-dropped", c.writer_dropped, "recorded", c.recorded,
                                          "lost", c.lost);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* What the bus has not delivered yet (delivery.h), for uebctl status. */
static int property_get_delivery(sd_bus *bus, const char *path, const char *interface, const char *property,
                                 sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);
        struct delivery_stats st;

        delivery_get_stats(b->delivery, &st);
        return sd_bus_message_append(reply, "a{st}", 10, "pinned-fds", (uint64_t) st.all.pinned.fds,
                                     "pinned-bytes", st.all.pinned.bytes,
                                     "pinned-connections", (uint64_t) st.pinned_connections,
                                     "waiting", (uint64_t) st.all.held, "sent", st.sent, "held", st.held,
                                     "refused", st.refused, "dropped", st.dropped,
                                     "stalled-usec", st.stalled_usec,
                                     "bus-statistics", (uint64_t) st.bus_statistics);
}

/* The pools of user-charges.h a client draws from: what all users hold,
 * the pool's bound and one uid's share. */
/* The pools as the Pools and PoolHolders properties name them. */
static const struct {
        const char *key;
        enum charge_kind kind;
} pools[] = {
        { "connections", CHARGE_CONNECTIONS },
        { "clients", CHARGE_CLIENTS },
        { "events", CHARGE_EVENTS },
        { "authorizations", CHARGE_AUTHORIZATIONS },
        { "ring-bytes", CHARGE_RING_BYTES },
        { "record-streams", CHARGE_RECORD_STREAMS },
        { "reply-fds", CHARGE_REPLY_FDS },
        { "reply-bytes", CHARGE_REPLY_BYTES },
        { "replies-held", CHARGE_REPLIES_HELD },
};

static int property_get_pools(sd_bus *bus, const char *path, const char *interface, const char *property,
                              sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sttt)");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(pools); i++) {
                const struct charge_bound *bound = &b->charges.bounds.kind[pools[i].kind];

                r = sd_bus_message_append(reply, "(sttt)", pools[i].key, b->charges.total[pools[i].kind], bound->pool,
                                          bound->share);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* Who holds the most of each pool that anyone holds: its key, how many
 * uids hold some, and the largest (uid, held), at most CHARGE_TOP_HOLDERS.
 * `uebctl status` shows it; a refusal names the same uids. */
static int property_get_pool_holders(sd_bus *bus, const char *path, const char *interface, const char *property,
                                     sd_bus_message *reply, void *userdata, sd_bus_error *error) {
        struct broker *b = ASSERT_PTR(userdata);
        int r;

        r = sd_bus_message_open_container(reply, 'a', "(sta(ut))");
        if (r < 0)
                return r;
        for (size_t i = 0; i < ELEMENTSOF(pools); i++) {
                struct charge_holder top[CHARGE_TOP_HOLDERS];
                size_t n;
                uint64_t all = user_charges_top_holders(&b->charges, pools[i].kind, top, &n);

                if (all == 0)
                        continue;
                r = sd_bus_message_open_container(reply, 'r', "sta(ut)");
                if (r >= 0)
                        r = sd_bus_message_append(reply, "st", pools[i].key, all);
                if (r >= 0)
                        r = sd_bus_message_open_container(reply, 'a', "(ut)");
                for (size_t k = 0; r >= 0 && k < n; k++)
                        r = sd_bus_message_append(reply, "(ut)", (uint32_t) top[k].uid, top[k].held);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r >= 0)
                        r = sd_bus_message_close_container(reply);
                if (r < 0)
                        return r;
        }
        return sd_bus_message_close_container(reply);
}

/* The methods of a data session: on the broker's object for the
 * connection's own, on a session object for one it opened. */
#define DATA_SESSION_METHODS                                                                            \
        SD_BUS_METHOD_WITH_NAMES("Register",                                                            \
                                 "s", SD_BUS_PARAM(command),                                            \
                                 "hhuu", SD_BUS_PARAM(data_fd) SD_BUS_PARAM(status_fd)                  \
                                         SD_BUS_PARAM(status_index) SD_BUS_PARAM(write_index),          \
                                 method_register, SD_BUS_VTABLE_UNPRIVILEGED),                          \
        SD_BUS_METHOD_WITH_NAMES("Authorize",                                                           \
                                 "s", SD_BUS_PARAM(command),                                            \
                                 "h", SD_BUS_PARAM(data_fd),                                            \
                                 method_authorize, SD_BUS_VTABLE_UNPRIVILEGED),                         \
        SD_BUS_METHOD_WITH_NAMES("Withdraw",                                                            \
                                 "s", SD_BUS_PARAM(name),                                               \
                                 "", ,                                                                  \
                                 method_withdraw, SD_BUS_VTABLE_UNPRIVILEGED),                          \
        SD_BUS_METHOD_WITH_NAMES("Unregister",                                                          \
                                 "u", SD_BUS_PARAM(write_index),                                        \
                                 "", ,                                                                  \
                                 method_unregister, SD_BUS_VTABLE_UNPRIVILEGED),                        \
        SD_BUS_METHOD_WITH_NAMES("OpenRing",                                                            \
                                 "u", SD_BUS_PARAM(size),                                               \
                                 "hu", SD_BUS_PARAM(ring_fd) SD_BUS_PARAM(data_size),                   \
                                 method_open_ring, SD_BUS_VTABLE_UNPRIVILEGED)

static const sd_bus_vtable broker_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_PROPERTY("Version", "s", property_get_version, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("Provider", "s", property_get_provider, 0, SD_BUS_VTABLE_PROPERTY_CONST),
        SD_BUS_PROPERTY("MaxEvents", "u", property_get_max_events, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("ActiveEvents", "u", property_get_active_events, 0, SD_BUS_VTABLE_PROPERTY_EMITS_CHANGE),
        SD_BUS_PROPERTY("RecordCounters", "a{st}", property_get_record_counters, 0, 0),
        SD_BUS_PROPERTY("Delivery", "a{st}", property_get_delivery, 0, 0),
        SD_BUS_PROPERTY("Pools", "a(sttt)", property_get_pools, 0, 0),
        SD_BUS_PROPERTY("PoolHolders", "a(sta(ut))", property_get_pool_holders, 0, 0),
        SD_BUS_SIGNAL_WITH_NAMES("EventAdded", "ssu",
                                 SD_BUS_PARAM(name) SD_BUS_PARAM(fields) SD_BUS_PARAM(owner_uid), 0),
        SD_BUS_SIGNAL_WITH_NAMES("EventRemoved", "s", SD_BUS_PARAM(name), 0),
        DATA_SESSION_METHODS,
        SD_BUS_METHOD_WITH_NAMES("OpenSession",
                                 "", ,
                                 "o", SD_BUS_PARAM(session),
                                 method_open_session, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Delete",
                                 "sb", SD_BUS_PARAM(name) SD_BUS_PARAM(interactive),
                                 "", ,
                                 method_delete, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("ListEvents",
                                 "", ,
                                 "a(ssuub)", SD_BUS_PARAM(events),
                                 method_list_events, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("GetStatus",
                                 "", ,
                                 "s", SD_BUS_PARAM(status),
                                 method_get_status, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("Record",
                                 "as", SD_BUS_PARAM(names),
                                 "h", SD_BUS_PARAM(record_fd),
                                 method_record, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("RecordMatching",
                                 "as", SD_BUS_PARAM(patterns),
                                 "h", SD_BUS_PARAM(record_fd),
                                 method_record_matching, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD_WITH_NAMES("RecordKernelPages",
                                 "as", SD_BUS_PARAM(patterns),
                                 "h", SD_BUS_PARAM(record_fd),
                                 method_record_kernel_pages, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

/* A data session the connection opened: the same methods as the broker's
 * object for the connection's own, acting on it alone, and Close. */
static const sd_bus_vtable session_vtable[] = {
        SD_BUS_VTABLE_START(0),
        DATA_SESSION_METHODS,
        SD_BUS_METHOD("Close", "", "", method_close_session, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

/* Every well-formed session path is an object: whose it is, the handlers
 * check against the caller (identify_data_session()), as sd-bus's find
 * callback does not see the message. */
static int find_session_object(sd_bus *bus, const char *path, const char *interface, void *userdata,
                               void **ret_found, sd_bus_error *error) {
        uint64_t id;

        if (data_session_path_id(path, &id) < 0 || id == 0)
                return 0;
        *ret_found = userdata;
        return 1;
}

/* The replies sd-bus gives by itself (Introspectable, Properties, Peer, and
 * the errors for unknown objects, interfaces and methods) cost the bus as
 * much as the broker's own: their callers are identified and charged the
 * same way, and a call whose reply would not fit gets none. Upper bounds of
 * each reply's size. */
#define BUILTIN_INTROSPECT_BYTES (8u * 1024u)
#define BUILTIN_PROPERTIES_BYTES (2u * 1024u)
#define BUILTIN_OTHER_BYTES 512u

static bool is_broker_method(sd_bus_message *m) {
        const char *interface = sd_bus_message_get_interface(m), *member = sd_bus_message_get_member(m);
        const char *path = sd_bus_message_get_path(m);
        const sd_bus_vtable *vtable;
        uint64_t id;

        if (!interface || !member || data_session_path_id(path, &id) < 0)
                return false;
        if (id == 0 && strcmp(interface, BROKER_INTERFACE) == 0)
                vtable = broker_vtable;
        else if (id > 0 && strcmp(interface, BROKER_SESSION_INTERFACE) == 0)
                vtable = session_vtable;
        else
                return false;
        for (const sd_bus_vtable *v = vtable; v->type != _SD_BUS_VTABLE_END; v++)
                if (v->type == _SD_BUS_VTABLE_METHOD && strcmp(v->x.method.member, member) == 0)
                        return true;
        return false;
}

static uint64_t builtin_reply_bytes(sd_bus_message *m) {
        const char *interface = sd_bus_message_get_interface(m);

        if (interface && strcmp(interface, "org.freedesktop.DBus.Introspectable") == 0)
                return BUILTIN_INTROSPECT_BYTES;
        if (interface && strcmp(interface, "org.freedesktop.DBus.Properties") == 0)
                return BUILTIN_PROPERTIES_BYTES;
        return BUILTIN_OTHER_BYTES;
}

/* Every incoming message, before sd-bus dispatches it: 1 consumes it. */
static int on_incoming(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct broker *b = ASSERT_PTR(userdata);
        struct peer *p;
        int r;

        if (!sd_bus_message_is_method_call(m, NULL, NULL) || is_broker_method(m) ||
            sd_bus_message_get_expect_reply(m) <= 0)
                return 0;       /* the handlers charge their own replies */
        r = peer_identify(&b->peers, m, &error, &p);
        if (r == 0)
                return 1;       /* re-run through here once identified */
        if (r < 0)
                return 0;       /* sd-bus answers; the caller cannot be charged */
        if (delivery_charge(&p->ledger, (struct delivery_cost) { .bytes = builtin_reply_bytes(m) }) == -EBUSY) {
                delivery_count_dropped(b->delivery);
                return 1;       /* no reply: it would not fit */
        }
        return 0;
}

/* Clients= lowered, if need be, so that sessions cannot exhaust the fd
 * limit: past it sd-bus cannot receive a message carrying descriptors and
 * drops the bus connection. */
static unsigned sessions_within_fd_limit(unsigned clients, unsigned fds_per_session) {
        struct rlimit rl;
        uint64_t fit;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY || fds_per_session == 0)
                return clients;
        fit = rl.rlim_cur > BROKER_FD_RESERVE ? (rl.rlim_cur - BROKER_FD_RESERVE) / fds_per_session : 0;
        if (fit >= clients)
                return clients;
        log_warning("The fd limit (%llu) holds %llu clients of %u descriptors each beside a reserve of %u, "
                    "fewer than Clients=%u: serving at most %llu. Raise LimitNOFILE= to serve more.",
                    (unsigned long long) rl.rlim_cur, (unsigned long long) fit, fds_per_session, BROKER_FD_RESERVE,
                    clients, (unsigned long long) fit);
        return (unsigned) (fit ?: 1);
}

static void on_client_gone(const char *unique_name, void *userdata) {
        struct broker *b = ASSERT_PTR(userdata);

        polkit_registry_forget_sender(b->polkit, unique_name);
        peer_gone(&b->peers, unique_name);
}

/* Every pool's bound and share from the limits (docs/CONFIGURATION.md). */
static struct charge_bounds broker_charge_bounds(const struct broker *b, unsigned max_sessions) {
        const struct broker_limits *l = &b->limits;
        const struct delivery_limits d = DELIVERY_LIMITS_DEFAULT;
        uint64_t ring_pool = (uint64_t) l->ring_memory_kib * 1024u;
        uint64_t streams = l->record_streams < provider_link_max_record_streams(&b->link) ?
                                   l->record_streams : provider_link_max_record_streams(&b->link);
        struct charge_bounds bounds = {};

        /* Every identified connection, whatever it calls: no fixed share,
         * its part among the uids that have some; root the rest. */
        bounds.kind[CHARGE_CONNECTIONS] = (struct charge_bound) { max_sessions, max_sessions, true };
        bounds.kind[CHARGE_CLIENTS] = (struct charge_bound) { max_sessions, l->clients_per_user };
        bounds.kind[CHARGE_EVENTS] = (struct charge_bound) { broker_max_events(b), l->events_per_user };
        /* Root never waits for polkit: nothing to exempt. */
        bounds.kind[CHARGE_AUTHORIZATIONS] = (struct charge_bound) { POLKIT_MAX_PENDING, l->authorizations_per_user };
        bounds.kind[CHARGE_RING_BYTES] = (struct charge_bound) {
                ring_pool,
                l->ring_memory_per_user_kib ? (uint64_t) l->ring_memory_per_user_kib * 1024u
                                            : charge_default_share(ring_pool),
                true,
        };
        bounds.kind[CHARGE_RECORD_STREAMS] = (struct charge_bound) {
                streams,
                l->record_streams_per_user ?: charge_default_share(streams),
                true,
        };
        bounds.kind[CHARGE_REPLY_FDS] = (struct charge_bound) { d.max_fds, d.fds_per_uid, true };
        bounds.kind[CHARGE_REPLY_BYTES] = (struct charge_bound) { d.max_bytes, d.bytes_per_uid, true };
        bounds.kind[CHARGE_REPLIES_HELD] = (struct charge_bound) { d.max_held, d.held_per_uid, true };
        /* A program's whole set of events at once, then a steady trickle. */
        bounds.rate[RATE_NEW_EVENTS] = (struct rate_bound) { l->events_per_user, l->new_events_per_user_per_minute,
                                                             true };
        bounds.rate[RATE_LARGE_REPLY_KIB] = (struct rate_bound) {
                .burst = LARGE_REPLY_BURST_KIB,
                .per_minute = LARGE_REPLY_KIB_PER_SEC * 60u,
                .privileged_exempt = true,
                .all_burst = LARGE_REPLY_ALL_BURST_KIB,
                .all_per_minute = LARGE_REPLY_ALL_KIB_PER_SEC * 60u,
        };
        return bounds;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct broker *, broker_free);

int broker_new(sd_event *event, sd_bus *bus, const struct provider_ops *ops, const struct broker_settings *settings,
               struct broker **ret) {
        _cleanup_(broker_freep) struct broker *b = NULL;
        struct charge_bounds bounds;
        unsigned max_sessions;
        int r;

        assert(event);
        b = calloc(1, sizeof(*b));
        if (!b)
                return -ENOMEM;
        b->event = sd_event_ref(event);
        b->bus = sd_bus_ref(bus);
        b->limits = *settings->limits;
        b->reservations = settings->reservations;
        b->limit_origins = settings->limit_origins;
        b->config_path = settings->config_path;
        b->state_dir = settings->state_dir;
        b->refusal_ratelimit = (struct log_ratelimit) LOG_RATELIMIT_INIT(5u * 1000000u, 20u);
        b->event_log_ratelimit = (struct log_ratelimit) LOG_RATELIMIT_INIT(5u * 1000000u, 50u);

        r = provider_link_start(&b->link, event, ops, settings->provider);
        if (r < 0)
                return r;
        max_sessions = sessions_within_fd_limit(b->limits.clients, ops->fds_per_session);
        bounds = broker_charge_bounds(b, max_sessions);
        user_charges_init(&b->charges, &bounds);
        event_registry_init(&b->registry, &b->link, &b->charges);

        r = delivery_new(event, bus, &DELIVERY_LIMITS_DEFAULT, &b->charges, &b->delivery);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the delivery accounting: %m");
        peer_registry_init(&b->peers, bus, &b->link, &b->registry, b->delivery, &b->charges,
                              broker_config_name(b), max_sessions);
        b->peers.limit_origins = b->limit_origins;

        r = event_signals_new(event, bus, &b->registry, EVENT_SIGNALS_INTERVAL_USEC, &b->signals);
        if (r < 0)
                return log_error_errno(r, "Cannot set up the event signals: %m");

        r = polkit_registry_new(bus, settings->bus_is_system, &b->charges, &b->polkit);
        if (r < 0)
                return log_error_errno(r, "Cannot set up polkit checks: %m");

        r = bus_departures_watch(bus, on_client_gone, b, &b->departures);
        if (r < 0)
                return log_error_errno(r, "Cannot watch for clients leaving the bus: %m");

        r = sd_bus_add_object_vtable(bus, &b->object_slot, BROKER_OBJECT_PATH, BROKER_INTERFACE, broker_vtable, b);
        if (r < 0)
                return log_error_errno(r, "Cannot add the bus object: %m");
        r = sd_bus_add_fallback_vtable(bus, &b->session_slot, BROKER_SESSION_PATH_PREFIX, BROKER_SESSION_INTERFACE,
                                       session_vtable, find_session_object, b);
        if (r < 0)
                return log_error_errno(r, "Cannot add the data sessions' bus objects: %m");

        r = sd_bus_add_filter(bus, &b->filter_slot, on_incoming, b);
        if (r < 0)
                return log_error_errno(r, "Cannot add the bus filter: %m");

        *ret = TAKE_PTR(b);
        return 0;
}

void broker_reconfigure(struct broker *b, const struct broker_limits *limits,
                        const struct broker_limit_origins *limit_origins,
                        const struct name_reservations *reservations) {
        unsigned old_max_events = broker_max_events(ASSERT_PTR(b));
        struct charge_bounds bounds;
        int r;

        b->limits = *limits;
        b->peers.max = sessions_within_fd_limit(b->limits.clients, provider_link_fds_per_session(&b->link));
        bounds = broker_charge_bounds(b, b->peers.max);
        user_charges_set_bounds(&b->charges, &bounds);
        b->reservations = reservations;
        b->limit_origins = limit_origins;
        b->peers.limit_origins = limit_origins;
        if (broker_max_events(b) != old_max_events) {
                r = sd_bus_emit_properties_changed(b->bus, BROKER_OBJECT_PATH, BROKER_INTERFACE, "MaxEvents", NULL);
                if (r < 0)
                        log_debug_errno(r, "Cannot emit PropertiesChanged for MaxEvents: %m");
        }
}

struct broker *broker_free(struct broker *b) {
        if (!b)
                return NULL;

        sd_bus_slot_unref(b->filter_slot);
        sd_bus_slot_unref(b->object_slot);
        sd_bus_slot_unref(b->session_slot);
        sd_bus_slot_unref(b->departures);
        peer_registry_done(&b->peers);
        b->delivery = delivery_free(b->delivery);
        /* Nothing is announced on the way out. */
        b->signals = event_signals_free(b->signals);
        if (b->link.provider) {
                event_registry_done(&b->registry);
                provider_link_stop(&b->link);
        }
        polkit_registry_free(b->polkit);
        /* Last: everything above released what it held. */
        user_charges_done(&b->charges);
        sd_bus_unref(b->bus);
        sd_event_unref(b->event);
        free(b);
        return NULL;
}

/* Introspection without a bus */

static int on_introspect_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        char **xml = userdata;
        const char *text;
        int r;

        if (sd_bus_message_is_method_error(m, NULL))
                return -sd_bus_message_get_errno(m) ?: -EIO;
        r = sd_bus_message_read(m, "s", &text);
        if (r < 0)
                return r;
        *xml = strdup(text);
        return *xml ? 0 : -ENOMEM;
}

/* Two started buses of this process talking over a socket pair, @ret_server
 * serving @ret_client. */
static int bus_pair_new(sd_bus **ret_server, sd_bus **ret_client) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *server = NULL, *client = NULL;
        _cleanup_close_ int server_fd = -EBADF, client_fd = -EBADF;
        sd_id128_t id;
        int fds[2], r;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) < 0)
                return -errno;
        server_fd = fds[0];
        client_fd = fds[1];

        r = sd_bus_new(&server);
        if (r < 0)
                return r;
        r = sd_bus_new(&client);
        if (r < 0)
                return r;
        r = sd_bus_set_fd(server, server_fd, server_fd);
        if (r < 0)
                return r;
        TAKE_FD(server_fd);     /* the bus owns it now */
        r = sd_bus_set_fd(client, client_fd, client_fd);
        if (r < 0)
                return r;
        TAKE_FD(client_fd);

        r = sd_id128_randomize(&id);
        if (r < 0)
                return r;
        r = sd_bus_set_server(server, 1, id);
        if (r < 0)
                return r;
        r = sd_bus_start(server);
        if (r < 0)
                return r;
        r = sd_bus_start(client);
        if (r < 0)
                return r;
        *ret_server = TAKE_PTR(server);
        *ret_client = TAKE_PTR(client);
        return 0;
}

int broker_introspect(char **ret_xml) {
        /* Declared first, released last: the reply callback writes it
         * while the buses live. */
        _cleanup_free_ char *xml = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *server = NULL, *client = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL;
        int r;

        r = bus_pair_new(&server, &client);
        if (r < 0)
                return r;

        /* No broker behind the object: introspection never calls handlers. */
        r = sd_bus_add_object_vtable(server, NULL, BROKER_OBJECT_PATH, BROKER_INTERFACE, broker_vtable, NULL);
        if (r < 0)
                return r;
        r = sd_bus_add_fallback_vtable(server, NULL, BROKER_SESSION_PATH_PREFIX, BROKER_SESSION_INTERFACE,
                                       session_vtable, find_session_object, NULL);
        if (r < 0)
                return r;

        r = sd_bus_message_new_method_call(client, &call, NULL, BROKER_OBJECT_PATH,
                                           "org.freedesktop.DBus.Introspectable", "Introspect");
        if (r < 0)
                return r;
        r = sd_bus_call_async(client, NULL, call, on_introspect_reply, &xml, 5 * 1000000ull);
        if (r < 0)
                return r;

        /* Both ends live in this process: turn the crank on each until the
         * reply is in. Bounded; each step waits at most 10 ms. */
        for (unsigned i = 0; i < 1000 && !xml; i++) {
                struct pollfd p[2] = {
                        { .fd = sd_bus_get_fd(server), .events = (short) sd_bus_get_events(server) },
                        { .fd = sd_bus_get_fd(client), .events = (short) sd_bus_get_events(client) },
                };
                int a, c;

                a = sd_bus_process(server, NULL);
                if (a < 0)
                        return a;
                c = sd_bus_process(client, NULL);
                if (c < 0)
                        return c;
                if (a == 0 && c == 0)
                        (void) poll(p, 2, 10);
        }
        if (!xml)
                return -ETIMEDOUT;
        *ret_xml = TAKE_PTR(xml);
        return 0;
}
