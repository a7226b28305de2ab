/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>

#include "privileged-uid.h"
#include "time-util.h"
#include "user-charges.h"
#include "macro.h"

/* What one uid holds; dropped once it holds nothing, so the tree never
 * grows with users that have gone. */
struct user_account {
        uid_t uid;
        uint64_t held[_CHARGE_KIND_MAX];
        struct token_bucket rate[_RATE_KIND_MAX];
};

static void bucket_refill(const struct rate_bound *bound, struct token_bucket *bucket, uint64_t now_usec) {
        uint64_t elapsed = now_usec > bucket->updated_usec ? now_usec - bucket->updated_usec : 0;

        /* elapsed * per_minute, without overflow: compared by division. */
        if (bound->per_minute > 0) {
                if (elapsed > bucket->used / bound->per_minute)
                        bucket->used = 0;
                else
                        bucket->used -= elapsed * bound->per_minute;
        }
        if (now_usec > bucket->updated_usec)
                bucket->updated_usec = now_usec;
}

bool charge_within_part(uint64_t pool, uint64_t total, uint64_t user, uint64_t amount, uint64_t others) {
        uint64_t free_part = pool > total ? pool - total : 0;
        uint64_t available = free_part > UINT64_MAX - user ? UINT64_MAX : free_part + user;
        uint64_t n_plus_one = others < UINT64_MAX - 2 ? others + 2 : UINT64_MAX;

        /* (user + amount) * (n + 1) <= available, without overflow. */
        return user <= available / n_plus_one && amount <= available / n_plus_one - user;
}

enum charge_verdict charge_decide(const struct charge_bound *bound, const struct charge_usage *usage, uint64_t amount,
                                  bool privileged) {
        bool share_exempt;

        assert(bound && usage);
        share_exempt = privileged && bound->privileged_exempt;
        if (!share_exempt && (usage->user > bound->share || amount > bound->share - usage->user))
                return CHARGE_OVER_SHARE;
        if (usage->total > bound->pool || amount > bound->pool - usage->total)
                return CHARGE_POOL_FULL;
        if (!privileged && !charge_within_part(bound->pool, usage->total, usage->user, amount, usage->others))
                return CHARGE_CROWDED;
        return CHARGE_GRANTED;
}

bool rate_decide(const struct rate_bound *bound, struct token_bucket *bucket, uint64_t now_usec,
                 uint64_t *ret_wait_usec) {
        uint64_t room;

        assert(bound && bucket);
        room = bound->burst <= UINT64_MAX / RATE_TAKE_UNITS ? bound->burst * RATE_TAKE_UNITS : UINT64_MAX;
        bucket_refill(bound, bucket, now_usec);
        if (bucket->used <= room && RATE_TAKE_UNITS <= room - bucket->used) {
                bucket->used += RATE_TAKE_UNITS;
                return true;
        }
        if (ret_wait_usec) {
                uint64_t short_by = bucket->used + RATE_TAKE_UNITS - room;

                *ret_wait_usec = bound->per_minute ? (short_by + bound->per_minute - 1) / bound->per_minute
                                                   : UINT64_MAX;
        }
        return false;
}

uint64_t charge_default_share(uint64_t pool) {
        uint64_t share = pool / CHARGE_SHARE_DIVISOR;

        return share > 0 || pool == 0 ? share : 1;
}

static int compare_uid(const void *a, const void *b) {
        const struct user_account *x = a, *y = b;

        return x->uid < y->uid ? -1 : x->uid > y->uid;
}

static struct user_account *account_find(const struct user_charges *c, uid_t uid) {
        struct user_account key = { .uid = uid };
        void *found = tfind(&key, &c->by_uid, compare_uid);

        return found ? *(struct user_account **) found : NULL;
}

static struct user_account *account_get(struct user_charges *c, uid_t uid) {
        struct user_account *a = account_find(c, uid);

        if (a)
                return a;
        a = calloc(1, sizeof(*a));
        if (!a)
                return NULL;
        a->uid = uid;
        if (!tsearch(a, &c->by_uid, compare_uid)) {
                free(a);
                return NULL;
        }
        c->n_accounts++;
        return a;
}

static void account_trim(struct user_charges *c, struct user_account *a) {
        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                if (a->held[k] > 0)
                        return;
        for (unsigned k = 0; k < _RATE_KIND_MAX; k++) {
                bucket_refill(&c->bounds.rate[k], &a->rate[k], c->now_usec());
                if (a->rate[k].used > 0)
                        return;
        }
        tdelete(a, &c->by_uid, compare_uid);
        c->n_accounts--;
        free(a);
}

void user_charges_init(struct user_charges *c, const struct charge_bounds *bounds) {
        assert(c);

        *c = (struct user_charges) { .bounds = *bounds, .now_usec = monotonic_usec };
}

void user_charges_done(struct user_charges *c) {
        assert(c);

        tdestroy(c->by_uid, free);
        *c = (struct user_charges) { .bounds = c->bounds, .now_usec = c->now_usec };
}

void user_charges_set_bounds(struct user_charges *c, const struct charge_bounds *bounds) {
        assert(c);

        c->bounds = *bounds;
}

/* Root and the daemon's uid are not counted among the holders: they are
 * what the shrinking parts keep room for, not competitors for it. */
static bool counted_holder(const struct user_account *a) {
        return !uid_privileged(a->uid);
}

static void add(struct user_charges *c, struct user_account *a, enum charge_kind kind, uint64_t amount) {
        if (a->held[kind] == 0 && amount > 0 && counted_holder(a))
                c->holders[kind]++;
        a->held[kind] += amount;
        c->total[kind] += amount;
}

int user_charges_check(const struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount) {
        uint64_t held = user_charges_held(c, uid, kind);
        struct charge_usage usage = {
                .total = ASSERT_PTR(c)->total[kind],
                .user = held,
                .others = user_charges_other_holders(c, uid, kind),
        };

        switch (charge_decide(&c->bounds.kind[kind], &usage, amount, uid_privileged(uid))) {
        case CHARGE_OVER_SHARE:
                return -EDQUOT;
        case CHARGE_POOL_FULL:
                return -ENOSPC;
        case CHARGE_CROWDED:
                return -EUSERS;
        case CHARGE_GRANTED:
                break;
        }
        return 0;
}

int user_charges_take(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount) {
        struct user_account *a;
        int r;

        assert(c);

        r = user_charges_check(c, uid, kind, amount);
        if (r < 0)
                return r;
        a = account_get(c, uid);
        if (!a)
                return -ENOMEM;
        add(c, a, kind, amount);
        return 0;
}

int user_charges_force(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount) {
        struct user_account *a = account_get(ASSERT_PTR(c), uid);

        if (!a)
                return -ENOMEM;
        add(c, a, kind, amount);
        return 0;
}

void user_charges_release(struct user_charges *c, uid_t uid, enum charge_kind kind, uint64_t amount) {
        struct user_account *a = account_find(ASSERT_PTR(c), uid);

        if (!a)
                return;
        if (amount > a->held[kind])
                amount = a->held[kind];
        a->held[kind] -= amount;
        c->total[kind] -= amount;
        if (amount > 0 && a->held[kind] == 0 && counted_holder(a))
                c->holders[kind]--;
        account_trim(c, a);
}

void user_charge_init(struct user_charge *ch, struct user_charges *c, uid_t uid, enum charge_kind kind) {
        assert(ch);

        *ch = (struct user_charge) { .charges = c, .uid = uid, .kind = kind };
}

/* @amount more for @ch: within the bounds, or whatever they say (@force). */
static int charge_add(struct user_charge *ch, uint64_t amount, bool force) {
        int r;

        assert(ch->charges);
        r = force ? user_charges_force(ch->charges, ch->uid, ch->kind, amount) :
                    user_charges_take(ch->charges, ch->uid, ch->kind, amount);
        if (r < 0)
                return r;
        ch->amount += amount;
        return 0;
}

int user_charge_take(struct user_charge *ch, uint64_t amount) {
        assert(ch);

        return charge_add(ch, amount, false);
}

int user_charge_force(struct user_charge *ch, uint64_t amount) {
        assert(ch);

        return charge_add(ch, amount, true);
}

void user_charge_release(struct user_charge *ch, uint64_t amount) {
        assert(ch);

        if (amount > ch->amount)
                amount = ch->amount;
        if (amount == 0)
                return;
        user_charges_release(ch->charges, ch->uid, ch->kind, amount);
        ch->amount -= amount;
}

void user_charge_deinit(struct user_charge *ch) {
        assert(ch);

        user_charge_release(ch, ch->amount);
}

int user_charges_take_rate(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t *ret_wait_usec) {
        const struct rate_bound *bound = &ASSERT_PTR(c)->bounds.rate[kind];
        struct user_account *a;

        if (bound->privileged_exempt && uid_privileged(uid))
                return 0;
        a = account_get(c, uid);
        if (!a)
                return -ENOMEM;
        if (!rate_decide(bound, &a->rate[kind], c->now_usec(), ret_wait_usec))
                return -EDQUOT;         /* kept: it has taken from its bucket */
        return 0;
}

/* How long until @bucket holds less than @bound's burst: 0 when it does. */
static uint64_t bucket_debt_wait(const struct rate_bound *bound, struct token_bucket *bucket, uint64_t now_usec) {
        uint64_t room;

        assert(bound && bucket);
        room = bound->burst <= UINT64_MAX / RATE_TAKE_UNITS ? bound->burst * RATE_TAKE_UNITS : UINT64_MAX;
        bucket_refill(bound, bucket, now_usec);
        if (bucket->used < room)
                return 0;
        return bound->per_minute ? (bucket->used - room) / bound->per_minute + 1 : UINT64_MAX;
}

int user_charges_rate_allowed(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t *ret_wait_usec) {
        const struct rate_bound *bound = &ASSERT_PTR(c)->bounds.rate[kind];
        const struct rate_bound all = { .burst = bound->all_burst, .per_minute = bound->all_per_minute };
        uint64_t now = c->now_usec(), wait;
        struct user_account *a;

        if (bound->privileged_exempt && uid_privileged(uid))
                return 0;
        a = account_get(c, uid);
        if (!a)
                return -ENOMEM;
        wait = bucket_debt_wait(bound, &a->rate[kind], now);
        if (wait > 0) {
                *ret_wait_usec = wait;
                return -EDQUOT;
        }
        if (bound->all_burst > 0) {
                wait = bucket_debt_wait(&all, &c->all_rate[kind], now);
                if (wait > 0) {
                        *ret_wait_usec = wait;
                        return -ENOSPC;
                }
        }
        return 0;
}

static void bucket_charge(struct token_bucket *bucket, uint64_t takes) {
        uint64_t units = takes <= UINT64_MAX / RATE_TAKE_UNITS ? takes * RATE_TAKE_UNITS : UINT64_MAX;

        bucket->used = units <= UINT64_MAX - bucket->used ? bucket->used + units : UINT64_MAX;
}

void user_charges_rate_charge(struct user_charges *c, uid_t uid, enum rate_kind kind, uint64_t takes) {
        const struct rate_bound *bound = &ASSERT_PTR(c)->bounds.rate[kind];
        struct user_account *a;

        if (bound->privileged_exempt && uid_privileged(uid))
                return;
        a = account_find(c, uid);       /* user_charges_rate_allowed() made it */
        if (!a)
                return;
        bucket_charge(&a->rate[kind], takes);
        if (bound->all_burst > 0)
                bucket_charge(&c->all_rate[kind], takes);
}

bool user_charges_exempt(const struct user_charges *c, uid_t uid, enum charge_kind kind) {
        assert(c);

        return c->bounds.kind[kind].privileged_exempt && uid_privileged(uid);
}

uint64_t user_charges_other_holders(const struct user_charges *c, uid_t uid, enum charge_kind kind) {
        bool counted = !uid_privileged(uid) && user_charges_held(ASSERT_PTR(c), uid, kind) > 0;

        return c->holders[kind] - counted;
}

uint64_t user_charges_held(const struct user_charges *c, uid_t uid, enum charge_kind kind) {
        const struct user_account *a = account_find(ASSERT_PTR(c), uid);

        return a ? a->held[kind] : 0;
}

uint64_t user_charges_room(const struct user_charges *c, uid_t uid, enum charge_kind kind) {
        const struct charge_bound *bound = &ASSERT_PTR(c)->bounds.kind[kind];
        uint64_t pool_room = bound->pool > c->total[kind] ? bound->pool - c->total[kind] : 0;
        uint64_t held = user_charges_held(c, uid, kind);
        uint64_t share_room = bound->share > held ? bound->share - held : 0;
        uint64_t room = user_charges_exempt(c, uid, kind) || share_room > pool_room ? pool_room : share_room;

        if (!uid_privileged(uid)) {
                /* The part among the holders: (held + room) * (n + 1) <=
                 * pool_room + held, n counting this uid. */
                uint64_t others = user_charges_other_holders(c, uid, kind);
                uint64_t part = (pool_room + held) / (others + 2);
                uint64_t part_room = part > held ? part - held : 0;

                if (part_room < room)
                        room = part_room;
        }
        return room;
}

struct holders_walk {
        enum charge_kind kind;
        const struct user_account *top[CHARGE_TOP_HOLDERS];
        uint64_t n;
};

static void holders_visit(const void *node, VISIT which, void *userdata) {
        const struct user_account *a = *(const struct user_account *const *) node;
        struct holders_walk *w = ASSERT_PTR(userdata);
        const struct user_account *carry = a;

        if ((which != postorder && which != leaf) || a->held[w->kind] == 0)
                return;
        w->n++;
        /* Insertion into the largest, largest first. */
        for (unsigned i = 0; i < CHARGE_TOP_HOLDERS && carry; i++)
                if (!w->top[i] || carry->held[w->kind] > w->top[i]->held[w->kind]) {
                        const struct user_account *t = w->top[i];

                        w->top[i] = carry;
                        carry = t;
                }
}

uint64_t user_charges_top_holders(const struct user_charges *c, enum charge_kind kind,
                                  struct charge_holder ret[CHARGE_TOP_HOLDERS], size_t *ret_n) {
        struct holders_walk w = { .kind = kind };
        size_t n = 0;

        assert(c);

        twalk_r(c->by_uid, holders_visit, &w);
        for (; n < CHARGE_TOP_HOLDERS && w.top[n]; n++)
                ret[n] = (struct charge_holder) { .uid = w.top[n]->uid, .held = w.top[n]->held[kind] };
        *ret_n = n;
        return w.n;
}

const char *user_charges_holders_text(const struct user_charges *c, enum charge_kind kind, char *buf, size_t size) {
        struct charge_holder top[CHARGE_TOP_HOLDERS];
        size_t at = 0, n;
        uint64_t all;

        assert(c);

        if (size == 0)
                return buf;
        buf[0] = '\0';
        all = user_charges_top_holders(c, kind, top, &n);
        if (all == 0) {
                snprintf(buf, size, "nobody");
                return buf;
        }
        for (size_t i = 0; i < n && at < size; i++) {
                int k = snprintf(buf + at, size - at, "%suid %u (%" PRIu64 ")", i ? ", " : "",
                                 (unsigned) top[i].uid, top[i].held);

                if (k < 0)
                        break;
                at += (size_t) k;
        }
        if (all > n && at < size)
                snprintf(buf + at, size - at, " and %" PRIu64 " more uid%s", all - n, all - n == 1 ? "" : "s");
        return buf;
}

const char *charge_kind_name(enum charge_kind kind) {
        static const char *const names[_CHARGE_KIND_MAX] = {
                [CHARGE_CONNECTIONS] = "connections the broker serves",
                [CHARGE_CLIENTS] = "connections with registrations",
                [CHARGE_EVENTS] = "events",
                [CHARGE_AUTHORIZATIONS] = "authorization checks",
                [CHARGE_RING_BYTES] = "ring memory",
                [CHARGE_RECORD_STREAMS] = "record streams",
                [CHARGE_REPLY_FDS] = "descriptors in undelivered replies",
                [CHARGE_REPLY_BYTES] = "bytes of undelivered replies",
                [CHARGE_REPLIES_HELD] = "replies waiting in the broker",
        };

        return (unsigned) kind < _CHARGE_KIND_MAX ? names[kind] : "?";
}
