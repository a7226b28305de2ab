/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * What each uid holds of every pool a client draws from, charged and
 * released in this one place, so that no user, nor a few together, can
 * empty a pool for the others. Each pool has a bound for all users
 * together and two shares for one uid:
 *
 * - a fixed share, the most one uid may ever hold (ClientsPerUser=, ...);
 * - a share of what is left that shrinks as more uids hold part of the
 *   pool (dbus-broker's user accounting): after a take, the uid holds at
 *   most 1/(n+1) of what is available to it (the pool's free part plus
 *   what it holds), n the number of uids holding part of the pool, itself
 *   included. Alone a uid gets at most half; k uids together leave at
 *   least half free, and a newcomer among them still gets a part. So the
 *   pool is never empty for root, the daemon's uid, or a bystander.
 *
 * Root and the daemon's own uid are bound by the pool only: never by the
 * shrinking share (theirs is the reserve it keeps), nor by the fixed share
 * of the pools that say so (they could open tracefs themselves);
 * ClientsPerUser= and EventsPerUser= bind root as well, as they always
 * did, so that no runaway service of root fills the event table either.
 * docs/CONFIGURATION.md lists every pool, its share and where each is set.
 *
 * Charging is a pure decision (charge_decide()) over counters kept here;
 * the holders (sessions and their rings, the event registry, polkit
 * checks, record streams, delivery for replies) each keep a struct
 * user_charge that takes when they hand something out and gives back what
 * it took when it comes back. No I/O, no bus: tests/unit/test-user-charges.c
 * covers every rule. Single-threaded, like the event loop that calls it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum charge_kind {
        CHARGE_CONNECTIONS,             /* identified connections the broker keeps state for: Clients= */
        CHARGE_CLIENTS,                 /* connections holding a data session: ClientsPerUser= of Clients= */
        CHARGE_EVENTS,                  /* events owned, used or not: EventsPerUser= of Events= */
        CHARGE_AUTHORIZATIONS,          /* polkit checks waiting: AuthorizationsPerUser= */
        CHARGE_RING_BYTES,              /* shared-memory rings: RingMemoryPerUser= of RingMemory= */
        CHARGE_RECORD_STREAMS,          /* open record streams: RecordStreamsPerUser= of RecordStreams= */
        CHARGE_REPLY_FDS,               /* descriptors in replies the bus has not delivered (delivery.h) */
        CHARGE_REPLY_BYTES,             /* bytes of those replies */
        CHARGE_REPLIES_HELD,            /* replies waiting in the broker for room */
        _CHARGE_KIND_MAX,
};

struct charge_bound {
        uint64_t pool;                  /* all users together */
        uint64_t share;                 /* one uid */
        bool privileged_exempt;         /* root and the daemon's uid have no share */
};

/*
 * Rates: how often one uid may do something that costs everyone (a new
 * event is an EventAdded to every listener, an eviction an EventRemoved,
 * a state-file rewrite), as a token bucket: @burst at once, then
 * @per_minute.
 */
enum rate_kind {
        RATE_NEW_EVENTS,                /* events created: NewEventsPerUserPerMinute=, burst EventsPerUser= */
        RATE_LARGE_REPLY_KIB,           /* KiB of large replies built (ListEvents, GetStatus) */
        _RATE_KIND_MAX,
};

struct rate_bound {
        uint64_t burst;                 /* taken at once from a full bucket */
        uint64_t per_minute;            /* refilled */
        bool privileged_exempt;
        /* All uids together (root and the daemon's aside when exempt), as
         * a bucket of its own; burst 0: no such bound. */
        uint64_t all_burst;
        uint64_t all_per_minute;
};

/* Zeroed: full. What was taken, in 1/60,000,000 of a take (a take is
 * RATE_TAKE_UNITS), as of @updated_usec. */
struct token_bucket {
        uint64_t used;
        uint64_t updated_usec;
};

#define RATE_TAKE_UNITS UINT64_C(60000000)      /* microseconds per minute */

struct charge_bounds {
        struct charge_bound kind[_CHARGE_KIND_MAX];
        struct rate_bound rate[_RATE_KIND_MAX];
};

enum charge_verdict {
        CHARGE_GRANTED,
        CHARGE_OVER_SHARE,              /* the uid would hold more than its fixed share */
        CHARGE_POOL_FULL,               /* all users together would hold more than the pool */
        CHARGE_CROWDED,                 /* the uid would hold more than its part among the holders */
};

/* What is held of one pool, as one uid sees it. */
struct charge_usage {
        uint64_t total;                 /* all users together */
        uint64_t user;                  /* the uid asking */
        uint64_t others;                /* uids other than it holding part of the pool */
};

/**
 * charge_within_part() - whether a uid may hold @user + @amount of a pool
 * of @pool whose users hold @total in all, with @others other uids holding
 * part of it: at most 1/(n+1) of the pool's free part plus @user, n =
 * @others + 1 (dbus-broker's user_charge_check(), A(n) = n + 1).
 *
 * @param pool: the pool's bound
 * @param total: what all users hold
 * @param user: what the uid holds
 * @param amount: what it asks for
 * @param others: how many other uids hold part of the pool
 *
 * Return: true when within its part. Pure, no overflow; thread-safe.
 */
bool charge_within_part(uint64_t pool, uint64_t total, uint64_t user, uint64_t amount, uint64_t others);

/**
 * charge_decide() - may a uid take @amount more of a pool held as @usage?
 *
 * @param bound: the pool and the fixed share
 * @param usage: what is held, as the uid sees it
 * @param amount: what it asks for
 * @param privileged: root or the daemon's uid: bound by the pool, and by
 *   the fixed share only where @bound says so (!privileged_exempt); never
 *   by its part among the holders
 *
 * The fixed share is checked first, so a user at its share learns that it
 * is its own limit (what it can fix) even when the pool is full too; then
 * the pool; then the uid's part among the holders.
 *
 * Return: the verdict. Pure; thread-safe.
 */
enum charge_verdict charge_decide(const struct charge_bound *bound, const struct charge_usage *usage, uint64_t amount,
                                  bool privileged);

/**
 * rate_decide() - may one more take come out of @bucket at @now_usec?
 *
 * Refills @bucket to @now_usec, then takes one if @bound allows it. Returns
 * true when taken; false, with *@ret_wait_usec how long until one would
 * be, when not. A clock that went back refills nothing. Pure apart from
 * @bucket; thread-safe on distinct buckets.
 */
bool rate_decide(const struct rate_bound *bound, struct token_bucket *bucket, uint64_t now_usec,
                 uint64_t *ret_wait_usec);
/* A share of a fixed fraction of its pool: the default when none is
 * configured. At least 1 when the pool has room for anything. */
#define CHARGE_SHARE_DIVISOR 4u
uint64_t charge_default_share(uint64_t pool);

struct user_charges {
        void *by_uid;                   /* tsearch() tree of struct user_account; none holding nothing */
        uint64_t total[_CHARGE_KIND_MAX];
        uint64_t holders[_CHARGE_KIND_MAX];     /* uids holding some of each, root and the daemon's aside */
        struct token_bucket all_rate[_RATE_KIND_MAX];   /* every uid's takes (struct rate_bound's all_*) */
        struct charge_bounds bounds;
        unsigned n_accounts;
        uint64_t (*now_usec)(void);     /* CLOCK_MONOTONIC; tests set their own */
};

/** user_charges_init() - empty counters with @bounds (copied). */
void user_charges_init(struct user_charges *c, const struct charge_bounds *bounds);
/** user_charges_done() - frees the accounts; what was held is forgotten. */
void user_charges_done(struct user_charges *c);
/**
 * user_charges_set_bounds() - new bounds (a reload) for charges from now
 * on: what is held beyond a lowered bound stays held until released.
 */
void user_charges_set_bounds(struct user_charges *c, const struct charge_bounds *bounds);

/**
 * user_charges_take() - charges @amount of @kind to @uid if charge_decide()
 * grants it (exempt: user_charges_exempt()).
 *
 * Returns 0; -EDQUOT when over the uid's fixed share; -ENOSPC when the
 * pool is full; -EUSERS when over its part among the uids holding the pool
 * (user_charges_holders_text() names them); -ENOMEM. Nothing is charged on
 * error.
 */
int user_charges_take(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount);
/** user_charges_check() - what user_charges_take() would return, charging
 * nothing (-ENOMEM aside). */
int user_charges_check(const struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount);
/**
 * user_charges_force() - charges @amount whatever the bounds: for what is
 * held already (events restored from the state file) or was decided by a
 * rule of its own (delivery_decide()). Returns 0 or -ENOMEM.
 */
int user_charges_force(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount);
/**
 * user_charges_release() - gives back @amount of @kind; saturating, so a
 * caller can never release more than the uid holds.
 */
void user_charges_release(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount);

/*
 * A charge: what one holder (a connection, a data session, its ring, an
 * event, a polkit check, a record stream, a connection's replies) took of
 * one pool for one uid. It remembers whose it is, of which pool and how
 * much, so that giving it back names none of them again (dbus-broker's
 * UserCharge): every holder releases through its own charge, and a holder
 * freed releases exactly what it took. Zeroed or user_charge_init()ed, it
 * holds nothing; user_charge_deinit() gives back all it holds and may be
 * called again. Single-threaded, as the ledger.
 */
struct user_charge {
        struct user_charges *charges;   /* NULL: zeroed, holds nothing */
        uid_t uid;
        enum charge_kind kind;
        uint64_t amount;                /* held */
};

/** user_charge_init() - @ch holds nothing yet of @kind for @uid in @c
 * (borrowed; must outlive what @ch holds). */
void user_charge_init(struct user_charge *ch, struct user_charges *c, uid_t uid, enum charge_kind kind);
/** user_charge_take() - @amount more, as user_charges_take() decides
 * (its errors; nothing taken on error). @ch must be initialized. */
int user_charge_take(struct user_charge *ch, uint64_t amount);
/** user_charge_force() - @amount more whatever the bounds, as
 * user_charges_force() (-ENOMEM). @ch must be initialized. */
int user_charge_force(struct user_charge *ch, uint64_t amount);
/** user_charge_release() - gives back @amount of what @ch holds, at most
 * all of it. */
void user_charge_release(struct user_charge *ch, uint64_t amount);
/** user_charge_deinit() - gives back all @ch holds; it then holds nothing
 * (initialized still, or zeroed: either may be called again). */
void user_charge_deinit(struct user_charge *ch);

/**
 * user_charges_take_rate() - one take of @kind for @uid, if its bucket
 * allows (rate_decide(); exempt: root and the daemon's uid when the bound
 * says so).
 *
 * Returns 0; -EDQUOT when too soon, with *@ret_wait_usec how long until it
 * would not be; -ENOMEM. A uid's bucket is kept while it holds anything or
 * has taken from it lately, so leaving and coming back does not refill it.
 */
int user_charges_take_rate(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t *ret_wait_usec);

/**
 * user_charges_rate_allowed() - whether @uid may start something of @kind
 * whose cost is known only once done: its bucket and that of all uids
 * together are not in debt (user_charges_rate_charge()). Returns 0,
 * -EDQUOT (the uid's) or -ENOSPC (all users'), with *@ret_wait_usec until
 * it would be; -ENOMEM. Exempt as user_charges_take_rate().
 */
int user_charges_rate_allowed(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t *ret_wait_usec);
/**
 * user_charges_rate_charge() - @takes takes of @kind for what @uid was
 * allowed and has done: taken from both buckets even beyond them (a debt
 * the refill pays before the next is allowed).
 */
void user_charges_rate_charge(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t takes);

/** user_charges_exempt() - whether @uid has no share of @kind. */
bool user_charges_exempt(const struct user_charges *c, uid_t uid, enum charge_kind kind);
/** user_charges_other_holders() - how many uids other than @uid hold some
 * of @kind (root and the daemon's uid not counted). */
uint64_t user_charges_other_holders(const struct user_charges *c, uid_t uid, enum charge_kind kind);
/** user_charges_held() - what @uid holds of @kind (0 for an unknown uid). */
uint64_t user_charges_held(const struct user_charges *c, uid_t uid, enum charge_kind kind);
/** user_charges_room() - what @uid may still take of @kind: the smaller of
 * its share's and the pool's rest (the pool's alone when exempt). */
uint64_t user_charges_room(const struct user_charges *c, uid_t uid, enum charge_kind kind);

/* A uid and what it holds of a pool. */
struct charge_holder {
        uid_t uid;
        uint64_t held;
};

#define CHARGE_TOP_HOLDERS 3u

/**
 * user_charges_top_holders() - the uids holding the most of @kind, at most
 * CHARGE_TOP_HOLDERS, the largest first, into @ret (*@ret_n of them).
 * Returns how many uids hold some of it in all, root's and the daemon's
 * included. O(uids); for a refusal or `uebctl status`, not a hot path.
 */
uint64_t user_charges_top_holders(const struct user_charges *c, enum charge_kind kind,
                                  struct charge_holder ret[CHARGE_TOP_HOLDERS], size_t *ret_n);

/**
 * user_charges_holders_text() - who holds most of @kind, for a refusal:
 * "uid 1001 (12), uid 1002 (12), uid 7 (4) and 2 more uids", at most three
 * named, the largest first.
 *
 * @param c: the ledger
 * @param kind: the pool
 * @param buf: where the text goes, NUL-terminated, cut to @size
 * @param size: its size
 *
 * Return: @buf ("nobody" when nobody holds any). Single-threaded.
 */
const char *user_charges_holders_text(const struct user_charges *c, enum charge_kind kind, char *buf, size_t size);

/* For messages: "connections", "events", ... */
const char *charge_kind_name(enum charge_kind kind);
