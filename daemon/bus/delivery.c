/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "broker-errors.h"
#include "bus-util.h"
#include "cleanup.h"
#include "delivery.h"
#include "log.h"
#include "time-util.h"
#include "macro.h"

/* Back-off between questions while a client's queue does not drain: 10 ms
 * doubling to 2 s. */
#define PROBE_BACKOFF_MIN_USEC 10000u
#define PROBE_BACKOFF_STEPS 8u
/* The watch on the broker's own queue: sampled each second; a queue that
 * has not shrunk for STALL_AFTER_USEC is a stalled bus. */
#define WATCH_INTERVAL_USEC 1000000u
#define STALL_AFTER_USEC (5u * 1000000u)
/* How long a reply waits in the broker for room before its call is refused
 * instead (Busy, naming who holds the room): a caller gets its reply or a
 * refusal within that, never silence, however many uids hold the pools.
 * Half a second, so that with a polkit check before it a bystander hears
 * within a second (1.25 s with a whole second: bench-noisy-neighbour). */
#define HOLD_MAX_USEC 500000u
/* A question costs the bus a message pair, as much as a reply. While the
 * pins do not press, one question covers the replies of PROBE_DEFER_USEC:
 * it waits that long after the first unconfirmed reply. They press when
 * the connection pins PROBE_NOW_FDS descriptors (eight Register replies)
 * or PROBE_NOW_BYTES bytes, when its uid could not send PROBE_HEADROOM
 * more at once (two Register replies; its part shrinks as more uids pin),
 * or when any reply waits for room or is refused: then every deferred
 * question goes at once. */
#define PROBE_DEFER_USEC 20000u
#define PROBE_NOW_FDS 16u
#define PROBE_NOW_BYTES (UINT64_C(64) << 10)
#define PROBE_HEADROOM ((struct delivery_cost) { .fds = 4, .bytes = 4096 })

struct held_reply {
        sd_bus_message *call;           /* for the refusal, once held too long; NULL: never refused */
        uint64_t since_usec;            /* CLOCK_MONOTONIC */
        sd_bus_message *reply;
        struct delivery_cost cost;
        struct delivery_ledger *ledger;
        LIST_FIELDS(struct held_reply, held);
};

struct delivery {
        sd_event *event;
        sd_bus *bus;
        struct delivery_limits limits;
        struct user_charges *charges;                   /* borrowed: what each uid has pinned and held */
        LIST_HEAD(struct held_reply, held);             /* oldest first */
        struct held_reply *held_tail;
        LIST_HEAD(struct delivery_ledger, pinned);      /* ledgers with something pinned */
        LIST_HEAD(struct delivery_ledger, probe_queue); /* waiting for a question slot */
        struct delivery_ledger *probe_queue_tail;
        unsigned probes_in_flight;
        unsigned pinned_connections;
        bool unconfirmable;                             /* no statistics for us: pin nothing */
        uint64_t sent, held_total, refused, dropped;

        sd_event_source *hold_timer;                    /* the oldest held reply's HOLD_MAX_USEC */
        sd_event_source *watch;
        uint64_t queued_last;
        uint64_t queue_stuck_since;                     /* 0: the queue moves */
        struct log_ratelimit stall_ratelimit;
        bool stall_logged;
};

/* What @uid has pinned and held, as user-charges.h counts it. */
static struct delivery_usage usage_of(const struct delivery *d, uid_t uid) {
        return (struct delivery_usage) {
                .pinned = {
                        .fds = (unsigned) user_charges_held(d->charges, uid, CHARGE_REPLY_FDS),
                        .bytes = user_charges_held(d->charges, uid, CHARGE_REPLY_BYTES),
                },
                .held = (unsigned) user_charges_held(d->charges, uid, CHARGE_REPLIES_HELD),
        };
}

/* What all users have pinned and held, as @uid sees it (the other uids
 * that pin). */
static struct delivery_usage usage_all(const struct delivery *d, uid_t uid) {
        const struct user_charges *c = d->charges;

        return (struct delivery_usage) {
                .pinned = {
                        .fds = (unsigned) c->total[CHARGE_REPLY_FDS],
                        .bytes = c->total[CHARGE_REPLY_BYTES],
                },
                .held = (unsigned) c->total[CHARGE_REPLIES_HELD],
                .others = {
                        .fds = (unsigned) user_charges_other_holders(c, uid, CHARGE_REPLY_FDS),
                        .bytes = user_charges_other_holders(c, uid, CHARGE_REPLY_BYTES),
                },
        };
}

/* delivery_decide() is the rule for replies (a reply is sent or held, not
 * refused, at a share): the charges follow what it decided. */
static void charge(struct user_charge *ch, uint64_t amount) {
        if (amount > 0 && user_charge_force(ch, amount) < 0)
                log_debug("Out of memory counting uid %u's replies.", (unsigned) ch->uid);
}

static void watch_arm(struct delivery *d);

static void pin(struct delivery_ledger *l, struct delivery_cost cost) {
        struct delivery *d = l->delivery;

        if (d->unconfirmable)
                return;
        delivery_cost_add(&l->pinned, cost);
        charge(&l->fds_charge, cost.fds);
        charge(&l->bytes_charge, cost.bytes);
        if (!l->listed && !delivery_cost_is_zero(l->pinned)) {
                LIST_PREPEND(pinned_list, d->pinned, l);
                l->listed = true;
                d->pinned_connections++;
        }
        watch_arm(d);
}

static void unpin(struct delivery_ledger *l, struct delivery_cost cost) {
        struct delivery *d = l->delivery;

        if (cost.fds > l->pinned.fds)
                cost.fds = l->pinned.fds;
        if (cost.bytes > l->pinned.bytes)
                cost.bytes = l->pinned.bytes;
        delivery_cost_sub(&l->pinned, cost);
        user_charge_release(&l->fds_charge, cost.fds);
        user_charge_release(&l->bytes_charge, cost.bytes);
        if (l->listed && delivery_cost_is_zero(l->pinned)) {
                LIST_REMOVE(pinned_list, d->pinned, l);
                l->listed = false;
                d->pinned_connections--;
        }
}

/* Questions */

static void probe_start(struct delivery_ledger *l);
static void flush_held(struct delivery *d);

static void probe_queue_remove(struct delivery_ledger *l) {
        struct delivery *d = l->delivery;

        if (!l->probe_queued)
                return;
        if (d->probe_queue_tail == l)
                d->probe_queue_tail = l->probe_queue_prev;
        LIST_REMOVE(probe_queue, d->probe_queue, l);
        l->probe_queued = false;
}

static void start_queued_probes(struct delivery *d) {
        while (d->probe_queue && d->probes_in_flight < DELIVERY_PROBES_MAX) {
                struct delivery_ledger *l = d->probe_queue;

                probe_queue_remove(l);
                probe_start(l);
        }
}

/* Ends @l's timer, whether it defers a question or backs off after a
 * failed one. */
static void retry_stop(struct delivery_ledger *l) {
        l->retry = sd_event_source_disable_unref(l->retry);
        l->deferred = false;
}

/* Cancels @l's deferred question, if any: true if there was one. */
static bool probe_cancel_deferral(struct delivery_ledger *l) {
        if (!l->deferred)
                return false;
        retry_stop(l);
        return true;
}

static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        struct delivery_ledger *l = ASSERT_PTR(userdata);

        retry_stop(l);
        probe_start(l);
        return 0;
}

/* Room is short: every deferred question goes now, so that pins of
 * replies already read are released within a round trip to the bus. */
static void probe_undefer_all(struct delivery *d) {
        LIST_FOREACH_SAFE(pinned_list, l, next, d->pinned)
                if (probe_cancel_deferral(l))
                        probe_start(l);
}

/* Whether @l's question should go now: @all and @user are the usage seen
 * before @added was pinned (what deliver() decided on), so that the pools
 * are not counted twice for every reply. */
static bool pins_press(const struct delivery_ledger *l, const struct delivery_usage *all,
                       const struct delivery_usage *user, struct delivery_cost added) {
        const struct delivery *d = l->delivery;

        if (d->held || l->pinned.fds >= PROBE_NOW_FDS || l->pinned.bytes >= PROBE_NOW_BYTES)
                return true;
        delivery_cost_add(&added, PROBE_HEADROOM);
        return delivery_decide(&d->limits, all, user, l->privileged, added, false) != DELIVERY_SEND;
}

static bool pins_press_now(const struct delivery_ledger *l) {
        struct delivery_usage all = usage_all(l->delivery, l->uid), user = usage_of(l->delivery, l->uid);

        return pins_press(l, &all, &user, (struct delivery_cost) {});
}

/* Asks about what @l pinned: now if the pins @press, else within
 * PROBE_DEFER_USEC, with whatever else is sent to it meanwhile. @sent
 * false: the reply is still to go (sd-bus sends what a filter charged once
 * the filter returns), so the question waits for the next turn of the loop
 * at least: it must follow the reply. */
static void probe_soon(struct delivery_ledger *l, bool sent, bool press) {
        int r;

        if (l->probe || l->probe_queued || delivery_cost_is_zero(l->pinned))
                return;
        if (press && sent) {
                probe_cancel_deferral(l);
                probe_start(l);                 /* unless backing off */
                return;
        }
        if (l->retry && !(press && probe_cancel_deferral(l)))
                return;                         /* deferred already, or backing off */
        r = sd_event_add_time_relative(l->delivery->event, &l->retry, CLOCK_MONOTONIC, press ? 0 : PROBE_DEFER_USEC,
                                       press ? 0 : PROBE_DEFER_USEC / 4, on_retry, l);
        if (r < 0) {
                log_warning_errno(r, "Cannot schedule asking the bus about %s's replies: %m", l->bus_name);
                if (sent)
                        probe_start(l);
                return;
        }
        l->deferred = !press;
}

/* The bus still holds something for @l: ask again after a back-off. */
static void probe_later(struct delivery_ledger *l) {
        uint64_t delay = (uint64_t) PROBE_BACKOFF_MIN_USEC << (l->backoff < PROBE_BACKOFF_STEPS ? l->backoff : PROBE_BACKOFF_STEPS);
        int r;

        if (l->backoff < PROBE_BACKOFF_STEPS)
                l->backoff++;
        if (l->retry)
                return;
        r = sd_event_add_time_relative(l->delivery->event, &l->retry, CLOCK_MONOTONIC, delay, 0, on_retry, l);
        if (r < 0)
                log_warning_errno(r, "Cannot schedule asking the bus about %s's replies: %m", l->bus_name);
}

/* The bus holds @bytes and @fds for @l's connection, from every sender:
 * of what @l had pinned when the question went out, no more than that can
 * still be ours. Traffic that others queue to the connection (signals
 * anyone may send) thus never extends the pins of the broker's replies
 * beyond what it could be: descriptors in particular, which signals
 * rarely carry, are released as soon as the connection has read ours. */
static void probe_bounded(struct delivery_ledger *l, uint32_t bytes, uint32_t fds) {
        struct delivery_cost delivered = {
                .fds = l->probed.fds > fds ? l->probed.fds - fds : 0,
                .bytes = l->probed.bytes > bytes ? l->probed.bytes - bytes : 0,
        };

        if (delivery_cost_is_zero(delivered))
                return;
        unpin(l, delivered);
        delivery_cost_sub(&l->probed, delivered);
}

/* The bus confirmed that what @l had pinned when the question went out
 * has left it. */
static void probe_confirmed(struct delivery_ledger *l) {
        unpin(l, l->probed);
        l->probed = (struct delivery_cost) {};
        l->backoff = 0;
        probe_soon(l, true, pins_press_now(l));  /* what was sent after the question */
}

static void probe_finished(struct delivery_ledger *l) {
        struct delivery *d = l->delivery;

        l->probe = sd_bus_slot_unref(l->probe);
        d->probes_in_flight--;
}

/* Reads OutgoingBytes and OutgoingFDs from GetConnectionStats' a{sv}. */
static int read_outgoing(sd_bus_message *reply, uint32_t *ret_bytes, uint32_t *ret_fds) {
        static const char *const keys[] = { "OutgoingBytes", "OutgoingFDs" };
        uint32_t values[2] = { 0, 0 }, found;
        int r;

        r = bus_read_u32_dict(reply, keys, 2, values, &found);
        if (r < 0)
                return r;
        if (found != 3)
                return -ENODATA;
        *ret_bytes = values[0];
        *ret_fds = values[1];
        return 0;
}

static bool error_means_gone(const char *name) {
        return name && (strcmp(name, SD_BUS_ERROR_NAME_HAS_NO_OWNER) == 0 ||
                        strcmp(name, SD_BUS_ERROR_SERVICE_UNKNOWN) == 0 ||
                        strcmp(name, SD_BUS_ERROR_DISCONNECTED) == 0);
}

/* The bus cannot tell us what it holds for a client (no statistics, or
 * not for us): from now on nothing is pinned. A bus without them that
 * charges undelivered messages to their sender would be unprotected; the
 * one in the field, dbus-broker, accounts per user and drops a reply its
 * receiver has no room for instead of stalling the sender. Guessing
 * instead (a client's answer to a Ping) would hold back every reply for
 * clients that simply do not dispatch, and with them everyone's. */
static void give_up_confirming(struct delivery *d, struct delivery_ledger *l, const char *why, const char *detail) {
        if (!d->unconfirmable)
                log_info("The bus gives no connection statistics to the broker (%s%s%s): replies to clients that do not "
                         "read are not held back (a bus that accounts per user, as dbus-broker does, drops them "
                         "itself).", why, *detail ? ": " : "", detail);
        d->unconfirmable = true;
        unpin(l, l->pinned);
        l->probed = (struct delivery_cost) {};
        /* The others go with their own answers. */
        LIST_FOREACH_SAFE(pinned_list, o, next, d->pinned)
                if (!o->probe)
                        unpin(o, o->pinned);
}

static int on_stats(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct delivery_ledger *l = ASSERT_PTR(userdata);
        struct delivery *d = l->delivery;
        uint32_t bytes = 0, fds = 0;

        probe_finished(l);
        if (sd_bus_message_is_method_error(reply, NULL)) {
                const sd_bus_error *e = sd_bus_message_get_error(reply);
                const char *name = e ? e->name : NULL;

                if (error_means_gone(name))
                        unpin(l, l->pinned);    /* the bus dropped what it held for it */
                else if (name && strcmp(name, SD_BUS_ERROR_NO_REPLY) == 0)
                        probe_later(l);
                else
                        give_up_confirming(d, l, name ?: "error", e && e->message ? e->message : "");
        } else if (read_outgoing(reply, &bytes, &fds) < 0)
                give_up_confirming(d, l, "no OutgoingBytes and OutgoingFDs", "");
        else if (bytes == 0 && fds == 0)
                probe_confirmed(l);
        else {
                probe_bounded(l, bytes, fds);
                probe_later(l);
        }

        start_queued_probes(d);
        flush_held(d);
        return 0;
}

static int send_probe(struct delivery_ledger *l) {
        struct delivery *d = l->delivery;

        return sd_bus_call_method_async(d->bus, &l->probe, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                        "org.freedesktop.DBus.Debug.Stats", "GetConnectionStats", on_stats, l, "s",
                                        l->bus_name);
}

/* Asks the bus whether what @l has pinned left it; one question at a time
 * per connection, DELIVERY_PROBES_MAX in all. */
static void probe_start(struct delivery_ledger *l) {
        struct delivery *d = l->delivery;
        int r;

        if (l->probe || l->retry || l->probe_queued || delivery_cost_is_zero(l->pinned))
                return;
        if (d->probes_in_flight >= DELIVERY_PROBES_MAX) {
                l->probe_queue_next = NULL;
                l->probe_queue_prev = d->probe_queue_tail;
                if (d->probe_queue_tail)
                        d->probe_queue_tail->probe_queue_next = l;
                else
                        d->probe_queue = l;
                d->probe_queue_tail = l;
                l->probe_queued = true;
                return;
        }
        r = send_probe(l);
        if (r < 0) {
                log_warning_errno(r, "Cannot ask the bus about %s's replies: %m", l->bus_name);
                probe_later(l);
                return;
        }
        l->probed = l->pinned;
        d->probes_in_flight++;
}

/* Held replies */

static void held_remove(struct delivery *d, struct held_reply *h) {
        if (d->held_tail == h)
                d->held_tail = h->held_prev;
        LIST_REMOVE(held, d->held, h);
        h->ledger->n_held--;
        user_charge_release(&h->ledger->held_charge, 1);
        sd_bus_message_unref(h->call);
        sd_bus_message_unref(h->reply);
        free(h);
}



/* @all and @user: the usage deliver() decided on, before @cost. */
static int send_now(struct delivery_ledger *l, sd_bus_message *reply, struct delivery_cost cost,
                    const struct delivery_usage *all, const struct delivery_usage *user) {
        int r = sd_bus_send(l->delivery->bus, reply, NULL);

        if (r < 0)
                return r;
        l->delivery->sent++;
        pin(l, cost);
        probe_soon(l, true, pins_press(l, all, user, cost));
        return 0;
}

/* Sends the held replies that fit now, oldest first. */
static void flush_held(struct delivery *d) {
        LIST_FOREACH_SAFE(held, h, next, d->held) {
                struct delivery_ledger *l = h->ledger;
                struct delivery_usage all = usage_all(d, l->uid), user = usage_of(d, l->uid);
                int r;

                if (delivery_decide(&d->limits, &all, &user, l->privileged, h->cost, false) != DELIVERY_SEND)
                        continue;
                r = sd_bus_send(d->bus, h->reply, NULL);
                if (r < 0)
                        log_debug_errno(r, "Cannot send a held reply to %s: %m", l->bus_name);
                else {
                        d->sent++;
                        pin(l, h->cost);
                }
                held_remove(d, h);
                probe_start(l);
        }
}

int delivery_set_busy_error(struct delivery *d, uid_t uid, uint64_t waited_usec, sd_bus_error *error) {
        struct delivery_usage u = usage_of(ASSERT_PTR(d), uid);
        char fds_holders[160], bytes_holders[160], waited[48] = "";

        if (waited_usec > 0)
                (void) snprintf(waited, sizeof(waited), " for %" PRIu64 " ms", waited_usec / 1000u);
        /* The caller may hold nothing: the holders are named too. */
        return sd_bus_error_setf(error, BROKER_ERROR_BUSY,
                                 "the bus has not yet delivered earlier replies of the broker%s (uid %u's: %u "
                                 "descriptors, %" PRIu64 " bytes, %u more replies waiting in the broker; "
                                 "descriptors held most by %s, bytes by %s): read the replies on your "
                                 "connections, or close those that do not, and try again",
                                 waited, (unsigned) uid, u.pinned.fds, u.pinned.bytes, u.held,
                                 user_charges_holders_text(d->charges, CHARGE_REPLY_FDS, fds_holders,
                                                           sizeof(fds_holders)),
                                 user_charges_holders_text(d->charges, CHARGE_REPLY_BYTES, bytes_holders,
                                                           sizeof(bytes_holders)));
}

static int deliver(struct delivery_ledger *l, sd_bus_message *call, sd_bus_message *reply, struct delivery_cost cost,
                   bool may_hold);

/* @h waited HOLD_MAX_USEC: its call gets Busy in its place, naming who
 * holds the room, if even that fits (no descriptors); else nothing, as for
 * a client that does not read. A held error is dropped. */
static void held_expire(struct delivery *d, struct held_reply *h) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *refusal = NULL, *call = NULL;
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        struct delivery_ledger *l = h->ledger;

        if (!h->call || sd_bus_message_is_method_error(h->reply, NULL)) {
                d->dropped++;
                held_remove(d, h);
                return;
        }
        call = sd_bus_message_ref(h->call);
        held_remove(d, h);
        d->refused++;
        (void) delivery_set_busy_error(d, l->uid, HOLD_MAX_USEC, &error);
        if (sd_bus_message_new_method_error(call, &refusal, &error) < 0 ||
            deliver(l, NULL, refusal, delivery_error_cost(&error), false) < 0)
                d->dropped++;
}

static void hold_timer_arm(struct delivery *d);

static int on_hold_timer(sd_event_source *source, uint64_t usec, void *userdata) {
        struct delivery *d = ASSERT_PTR(userdata);
        uint64_t now = monotonic_usec();

        while (d->held && now - d->held->since_usec >= HOLD_MAX_USEC)
                held_expire(d, d->held);
        hold_timer_arm(d);
        return 0;
}

/* Wakes up when the oldest held reply has waited HOLD_MAX_USEC. */
static void hold_timer_arm(struct delivery *d) {
        int r;

        if (!d->held) {
                if (d->hold_timer)
                        (void) sd_event_source_set_enabled(d->hold_timer, SD_EVENT_OFF);
                return;
        }
        if (d->hold_timer)
                r = sd_event_source_set_time(d->hold_timer, d->held->since_usec + HOLD_MAX_USEC);
        else
                r = sd_event_add_time(d->event, &d->hold_timer, CLOCK_MONOTONIC, d->held->since_usec + HOLD_MAX_USEC,
                                      0, on_hold_timer, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->hold_timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_warning_errno(r, "Cannot time the replies waiting for room: %m");
}

/* delivery_send() without counting a refusal: 1 sent or held, -EBUSY. */
static int deliver(struct delivery_ledger *l, sd_bus_message *call, sd_bus_message *reply, struct delivery_cost cost,
                   bool may_hold) {
        struct delivery *d = l->delivery;
        struct delivery_usage all = usage_all(d, l->uid), user = usage_of(d, l->uid);
        struct held_reply *h;

        switch (delivery_decide(&d->limits, &all, &user, l->privileged, cost, may_hold)) {
        case DELIVERY_SEND:
                return send_now(l, reply, cost, &all, &user);
        case DELIVERY_HOLD:
                h = calloc(1, sizeof(*h));
                if (!h)
                        return -ENOMEM;
                *h = (struct held_reply) {
                        .call = call ? sd_bus_message_ref(call) : NULL,
                        .since_usec = monotonic_usec(),
                        .reply = sd_bus_message_ref(reply),
                        .cost = cost,
                        .ledger = l,
                };
                h->held_prev = d->held_tail;
                if (d->held_tail)
                        d->held_tail->held_next = h;
                else
                        d->held = h;
                d->held_tail = h;
                charge(&l->held_charge, 1);
                l->n_held++;
                d->held_total++;
                hold_timer_arm(d);
                probe_undefer_all(d);
                return 1;
        case DELIVERY_REFUSE:
        default:
                probe_undefer_all(d);
                return -EBUSY;
        }
}

int delivery_send(struct delivery_ledger *l, sd_bus_message *call, sd_bus_message *reply, struct delivery_cost cost,
                  bool may_hold) {
        int r;

        assert(l);
        r = deliver(l, call, reply, cost, may_hold);
        if (r == -EBUSY)
                l->delivery->refused++;
        return r;
}

int delivery_charge(struct delivery_ledger *l, struct delivery_cost cost) {
        struct delivery *d = ASSERT_PTR(l)->delivery;
        struct delivery_usage all = usage_all(d, l->uid), user = usage_of(d, l->uid);

        if (delivery_decide(&d->limits, &all, &user, l->privileged, cost, false) != DELIVERY_SEND) {
                d->refused++;
                probe_undefer_all(d);
                return -EBUSY;
        }
        d->sent++;
        pin(l, cost);
        /* sd-bus sends the reply once the filter returns */
        probe_soon(l, false, pins_press(l, &all, &user, cost));
        return 0;
}

enum delivery_verdict delivery_check(struct delivery_ledger *l, struct delivery_cost cost, bool may_hold) {
        struct delivery *d = ASSERT_PTR(l)->delivery;
        struct delivery_usage all = usage_all(d, l->uid), user = usage_of(d, l->uid);
        enum delivery_verdict v = delivery_decide(&d->limits, &all, &user, l->privileged, cost, may_hold);

        if (v != DELIVERY_SEND)
                probe_undefer_all(d);
        return v;
}

void delivery_get_user(struct delivery *d, uid_t uid, struct delivery_usage *ret) {
        assert(d);
        *ret = usage_of(d, uid);
}

struct delivery_cost delivery_error_cost(const sd_bus_error *error) {
        /* Header fields (destination, reply serial, error name, signature)
         * and the message string, padded. */
        size_t n = 192;

        assert(error);
        if (error->name)
                n += strlen(error->name);
        if (error->message)
                n += strlen(error->message);
        return (struct delivery_cost) { .bytes = n };
}

/* Ledgers */

void delivery_ledger_init(struct delivery_ledger *l, struct delivery *d, const char *bus_name, uid_t uid,
                          bool privileged) {
        assert(l);
        struct user_charges *charges = d ? d->charges : NULL;   /* none: a session of tests without a bus */

        *l = (struct delivery_ledger) { .delivery = d, .bus_name = bus_name, .uid = uid, .privileged = privileged };
        user_charge_init(&l->fds_charge, charges, uid, CHARGE_REPLY_FDS);
        user_charge_init(&l->bytes_charge, charges, uid, CHARGE_REPLY_BYTES);
        user_charge_init(&l->held_charge, charges, uid, CHARGE_REPLIES_HELD);
}

void delivery_ledger_done(struct delivery_ledger *l) {
        struct delivery *d = ASSERT_PTR(l)->delivery;

        if (!d)
                return;
        if (l->n_held > 0)
                LIST_FOREACH_SAFE(held, h, next, d->held)
                        if (h->ledger == l)
                                held_remove(d, h);
        if (l->probe)
                probe_finished(l);
        probe_queue_remove(l);
        retry_stop(l);
        unpin(l, l->pinned);
        /* Nothing is held any more: whatever a count missed goes too. */
        user_charge_deinit(&l->fds_charge);
        user_charge_deinit(&l->bytes_charge);
        user_charge_deinit(&l->held_charge);
        l->delivery = NULL;
        start_queued_probes(d);
        flush_held(d);
}

/* The watch on the broker's own queue */

static void log_stall(struct delivery *d, uint64_t queued, uint64_t stuck_usec) {
        struct delivery_usage all = usage_all(d, (uid_t) -1);
        unsigned suppressed = 0, shown = 0;
        char who[512] = "";
        size_t len = 0;

        if (!log_ratelimit_ok(&d->stall_ratelimit, &suppressed))
                return;
        /* The connections holding the most descriptors, then bytes: a few. */
        LIST_FOREACH(pinned_list, l, d->pinned) {
                int n;

                if (shown >= 4 || len >= sizeof(who) - 1)
                        break;
                n = snprintf(who + len, sizeof(who) - len, "%s%s (uid %u): %u fds, %" PRIu64 " bytes", shown ? "; " : "",
                             l->bus_name, (unsigned) l->uid, l->pinned.fds, l->pinned.bytes);
                if (n < 0)
                        break;
                len += (size_t) n < sizeof(who) - len ? (size_t) n : sizeof(who) - len - 1;
                shown++;
        }
        log_warning("The bus has taken none of the broker's %" PRIu64 " queued messages for %" PRIu64 " s. Replies "
                    "not yet delivered: %u fds, %" PRIu64 " bytes on %u connections%s%s%s%s",
                    queued, stuck_usec / 1000000u, all.pinned.fds, all.pinned.bytes, d->pinned_connections,
                    shown ? ", among them " : "", who, d->pinned_connections > shown ? ", ..." : "",
                    suppressed ? " (earlier such reports not logged)" : "");
        d->stall_logged = true;
}

static int on_watch(sd_event_source *s, uint64_t usec, void *userdata) {
        struct delivery *d = ASSERT_PTR(userdata);
        uint64_t queued = 0, now = monotonic_usec();

        (void) sd_bus_get_n_queued_write(d->bus, &queued);
        if (queued == 0 || queued < d->queued_last) {
                if (d->stall_logged)
                        log_info("The bus takes the broker's messages again (%" PRIu64 " queued).", queued);
                d->queue_stuck_since = 0;
                d->stall_logged = false;
        } else if (d->queue_stuck_since == 0)
                d->queue_stuck_since = now;
        else if (now - d->queue_stuck_since >= STALL_AFTER_USEC)
                log_stall(d, queued, now - d->queue_stuck_since);
        d->queued_last = queued;

        /* Sleep when there is nothing to watch. */
        if (queued == 0 && !d->pinned)
                return sd_event_source_set_enabled(s, SD_EVENT_OFF);
        return sd_event_source_set_time_relative(s, WATCH_INTERVAL_USEC);
}

static void watch_arm(struct delivery *d) {
        int enabled = SD_EVENT_OFF;

        if (!d->watch || (sd_event_source_get_enabled(d->watch, &enabled) >= 0 && enabled != SD_EVENT_OFF))
                return;
        if (sd_event_source_set_time_relative(d->watch, WATCH_INTERVAL_USEC) < 0 ||
            sd_event_source_set_enabled(d->watch, SD_EVENT_ON) < 0)
                log_debug("Cannot arm the watch on the bus's queue.");
}

void delivery_get_stats(struct delivery *d, struct delivery_stats *ret) {
        uint64_t now = monotonic_usec();

        assert(d);
        *ret = (struct delivery_stats) {
                .all = usage_all(d, (uid_t) -1),
                .pinned_connections = d->pinned_connections,
                .sent = d->sent,
                .held = d->held_total,
                .refused = d->refused,
                .dropped = d->dropped,
                .stalled_usec = d->queue_stuck_since && now > d->queue_stuck_since ? now - d->queue_stuck_since : 0,
                .bus_statistics = !d->unconfirmable,
        };
}

void delivery_count_dropped(struct delivery *d) {
        assert(d);
        d->dropped++;
}

int delivery_new(sd_event *event, sd_bus *bus, const struct delivery_limits *limits, struct user_charges *charges,
                 struct delivery **ret) {
        struct delivery *d;
        int r;

        assert(event);
        d = calloc(1, sizeof(*d));
        if (!d)
                return -ENOMEM;
        d->event = sd_event_ref(event);
        d->bus = sd_bus_ref(bus);
        d->limits = *limits;
        d->charges = charges;
        d->stall_ratelimit = (struct log_ratelimit) LOG_RATELIMIT_INIT(60u * 1000000u, 1u);
        /* Without a bus daemon (a direct connection) nobody holds our
         * messages but the peer's socket. */
        d->unconfirmable = sd_bus_is_bus_client(bus) <= 0;
        r = sd_event_add_time_relative(event, &d->watch, CLOCK_MONOTONIC, WATCH_INTERVAL_USEC, 0, on_watch, d);
        if (r >= 0)
                r = sd_event_source_set_enabled(d->watch, SD_EVENT_OFF);
        if (r < 0) {
                delivery_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

struct delivery *delivery_free(struct delivery *d) {
        if (!d)
                return NULL;
        while (d->held) {
                struct held_reply *h = d->held;

                d->held = h->held_next;
                sd_bus_message_unref(h->call);
                sd_bus_message_unref(h->reply);
                free(h);
        }
        sd_event_source_disable_unref(d->hold_timer);
        sd_event_source_disable_unref(d->watch);
        sd_bus_unref(d->bus);
        sd_event_unref(d->event);
        free(d);
        return NULL;
}
