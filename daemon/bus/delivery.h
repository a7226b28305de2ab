/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Replies the bus has not yet delivered: every reply to a client is sent
 * through here, counted as pinned on its connection and its uid until the
 * bus confirms it left, and sent only within delivery-budget.h's bounds;
 * what does not fit waits here and goes out when it fits.
 *
 * Confirmation never relies on what the client does, only on the bus:
 *
 * - On dbus-daemon (which is where undelivered messages are charged to
 *   their sender), org.freedesktop.DBus.Debug.Stats.GetConnectionStats of
 *   the client: once its OutgoingBytes and OutgoingFDs are 0, nothing sent
 *   to it before that call still waits in dbus-daemon. Messages of one
 *   sender are handled in order, so the answer covers every reply sent
 *   before the question. Debian's system.conf lets root ask.
 * - Where the bus has no such statistics (dbus-broker), or refuses us:
 *   nothing is pinned from then on (logged once). dbus-broker accounts
 *   per user and drops a reply its receiver has no room for; a guess (a
 *   Ping the client answers when it dispatches) held back every reply
 *   for clients that do not dispatch, and with them everyone's.
 * - The client leaving the bus: the bus drops whatever it still held for
 *   it.
 *
 * Questions are asked at most DELIVERY_PROBES_MAX at a time (below
 * dbus-daemon's 128 pending replies beside polkit's checks), again with a
 * back-off while a client's queue does not drain. A question costs the bus
 * as much as a reply, so while room is plenty one question covers a
 * connection's replies of 20 ms; when room is short (a connection pins a
 * few descriptors or 64 KiB, or a reply waits or is refused) every
 * question goes at once.
 *
 * A watch on the broker's own outgoing queue says in the log (rate
 * limited) when the bus stops taking what the broker sends, and who holds
 * pinned replies; delivery_get_stats() gives the same figures to the
 * Delivery property (uebctl status).
 *
 * Single-threaded, on the broker's event loop.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "delivery-budget.h"
#include "list.h"
#include "user-charges.h"

#define DELIVERY_PROBES_MAX 32u

struct delivery;
struct held_reply;

/* One per client connection (embedded in its session). */
struct delivery_ledger {
        struct delivery *delivery;
        const char *bus_name;           /* the session's; outlives the ledger */
        uid_t uid;
        bool privileged;
        struct delivery_cost pinned;    /* sent, not yet known to have left the bus */
        /* What the pins and held replies take of uid's pools, while they last. */
        struct user_charge fds_charge;          /* CHARGE_REPLY_FDS: pinned.fds */
        struct user_charge bytes_charge;        /* CHARGE_REPLY_BYTES: pinned.bytes */
        struct user_charge held_charge;         /* CHARGE_REPLIES_HELD: n_held */
        struct delivery_cost probed;    /* of which sent before the question in flight */
        sd_bus_slot *probe;             /* the question in flight */
        sd_event_source *retry;         /* the next question, after a back-off or deferred */
        bool deferred;                  /* retry is a deferral (probe_soon()), not a back-off */
        unsigned backoff;
        unsigned n_held;
        bool probe_queued;
        bool listed;                    /* in the delivery's list of ledgers with pins */
        LIST_FIELDS(struct delivery_ledger, pinned_list);
        LIST_FIELDS(struct delivery_ledger, probe_queue);
};

struct delivery_stats {
        struct delivery_usage all;
        unsigned pinned_connections;
        uint64_t sent, held, refused, dropped;  /* since start */
        uint64_t stalled_usec;          /* how long the bus has not taken our queue; 0: it does */
        bool bus_statistics;            /* confirmed through the bus's statistics; false: nothing held back */
};

/** delivery_new() - the broker's delivery accounting on @bus.
 * @limits is copied (delivery_set_limits() changes it). What each uid has
 * pinned and held is charged to @charges (borrowed; must outlive the
 * delivery) as CHARGE_REPLY_FDS, CHARGE_REPLY_BYTES and CHARGE_REPLIES_HELD.
 * Returns 0 or a negative errno; *@ret is owned by the caller
 * (delivery_free()). */
int delivery_new(sd_event *event, sd_bus *bus, const struct delivery_limits *limits, struct user_charges *charges,
                 struct delivery **ret);
/** delivery_free() - drops held replies unsent; the ledgers must be done
 * first. Returns NULL. */
struct delivery *delivery_free(struct delivery *d);

/** delivery_ledger_init() - starts the ledger of an identified connection
 * @bus_name (borrowed; must outlive the ledger) of @uid. */
void delivery_ledger_init(struct delivery_ledger *l, struct delivery *d, const char *bus_name, uid_t uid,
                          bool privileged);
/** delivery_ledger_done() - the connection left the bus (or the broker
 * stops): what it pinned is released, its held replies are dropped. Safe on
 * a ledger never initialized (zeroed). */
void delivery_ledger_done(struct delivery_ledger *l);

/**
 * delivery_send() - sends @reply to @call of @l's connection, costing @cost.
 *
 * @param l: the connection's ledger
 * @param call: the call @reply answers: a held reply that waits more than a
 *   second is replaced by a Busy error to it naming who holds the room;
 *   NULL: held as long as it takes
 * @param reply: a method return or error; a reference is taken when held
 * @param cost: what it pins
 * @param may_hold: false: never held
 *
 * Return: 0 when sent, 1 when held (sent once it fits, or refused after a
 * second), -EBUSY when the budget refuses it (nothing sent: the caller
 * answers Busy or nothing), or the negative errno of sd_bus_send().
 * Single-threaded.
 */
int delivery_send(struct delivery_ledger *l, sd_bus_message *call, sd_bus_message *reply, struct delivery_cost cost,
                  bool may_hold);

/** delivery_charge() - pins @cost for a reply sd-bus is about to send by
 * itself (Introspectable, Properties, Peer, unknown methods), if it fits;
 * the question to the bus goes out after that reply. 0: charged; -EBUSY:
 * it does not fit (the caller drops the call). */
int delivery_charge(struct delivery_ledger *l, struct delivery_cost cost);

/** delivery_error_cost() - an upper bound of the size of an error reply
 * with @error. */
struct delivery_cost delivery_error_cost(const sd_bus_error *error);

/** delivery_check() - the verdict delivery_send() would give now, without
 * sending: for replies too costly to build in vain (large ones). Not
 * pure: as delivery_send() does, a verdict other than DELIVERY_SEND sends
 * every deferred question to the bus at once (room is short, and the
 * answers release pins sooner). */
enum delivery_verdict delivery_check(struct delivery_ledger *l, struct delivery_cost cost, bool may_hold);

/**
 * delivery_set_busy_error() - sets @error to the Busy refusal of a call of
 * @uid whose reply cannot go (delivery_send()'s -EBUSY), or whose reply
 * waited @waited_usec (0: did not wait) and went no further: what @uid
 * holds, and the uids holding the most (the caller may hold nothing).
 * Returns sd_bus_error_setf()'s negative errno.
 */
int delivery_set_busy_error(struct delivery *d, uid_t uid, uint64_t waited_usec, sd_bus_error *error);

/** delivery_get_user() - what @uid has pinned and held now. */
void delivery_get_user(struct delivery *d, uid_t uid, struct delivery_usage *ret);

/** delivery_count_dropped() - a call got no reply at all (not even an
 * error would fit). */
void delivery_count_dropped(struct delivery *d);

/** delivery_get_stats() - the figures now. */
void delivery_get_stats(struct delivery *d, struct delivery_stats *ret);
