/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/core/user-charges.c: every pool's bound for all users and each uid's
 * share, root exempt from the share only, what is released given back
 * exactly, accounts gone once they hold nothing. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check-tap.h"

#include "user-charges.h"

/* Two ordinary uids, neither root nor whoever runs the test (both are
 * exempt from shares). */
static uid_t plain_uid(unsigned i) {
        uid_t uid = 50000 + i;

        return uid == geteuid() ? uid + 100 : uid;
}

static struct charge_bounds test_bounds(void) {
        struct charge_bounds b = {};

        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                b.kind[k] = (struct charge_bound) { .pool = 100, .share = 25, .privileged_exempt = k != CHARGE_CLIENTS };
        return b;
}

static enum charge_verdict decide(const struct charge_bound *bound, uint64_t total, uint64_t user, uint64_t amount,
                                  bool privileged) {
        /* Nobody else holds any: only the caller's part of half. */
        return charge_decide(bound, &(struct charge_usage) { .total = total, .user = user }, amount, privileged);
}

START_TEST(test_decide_share_then_pool) {
        const struct charge_bound bound = { .pool = 100, .share = 25, .privileged_exempt = true };

        ck_assert_int_eq(decide(&bound, 0, 0, 25, false), CHARGE_GRANTED);
        ck_assert_int_eq(decide(&bound, 24, 24, 2, false), CHARGE_OVER_SHARE);
        /* The share is named first when both are reached: that one the
         * caller can fix. */
        ck_assert_int_eq(decide(&bound, 100, 25, 1, false), CHARGE_OVER_SHARE);
        ck_assert_int_eq(decide(&bound, 99, 10, 2, false), CHARGE_POOL_FULL);
        /* Privileged, where the bound says so: the pool only. */
        ck_assert_int_eq(decide(&bound, 50, 50, 50, true), CHARGE_GRANTED);
        ck_assert_int_eq(decide(&bound, 50, 50, 51, true), CHARGE_POOL_FULL);
        /* No overflow with huge amounts or counters beyond a lowered bound. */
        ck_assert_int_eq(decide(&bound, 0, 0, UINT64_MAX, true), CHARGE_POOL_FULL);
        ck_assert_int_eq(decide(&bound, 200, 30, 0, false), CHARGE_OVER_SHARE);
        ck_assert_int_eq(decide(&bound, 200, 0, 0, true), CHARGE_POOL_FULL);
        /* A bound whose share binds the privileged too. */
        ck_assert_int_eq(decide(&(struct charge_bound) { .pool = 100, .share = 25 }, 0, 25, 1, true),
                         CHARGE_OVER_SHARE);
}
END_TEST

/* dbus-broker's rule: after a take, at most 1/(n+1) of the pool's free
 * part plus what the uid holds, n the uids holding part, itself included. */
START_TEST(test_part_among_holders) {
        const struct charge_bound bound = { .pool = 48, .share = 48, .privileged_exempt = true };

        /* Alone: half of the pool. */
        ck_assert(charge_within_part(48, 0, 0, 24, 0));
        ck_assert(!charge_within_part(48, 0, 0, 25, 0));
        ck_assert(charge_within_part(48, 23, 23, 1, 0));
        ck_assert(!charge_within_part(48, 24, 24, 1, 0));
        /* Four uids with 6 each (24 free): 6 * 5 > 24 + 6, none gets more,
         * a fifth gets 4: (0 + 4) * 6 <= 24. */
        ck_assert(!charge_within_part(48, 24, 6, 1, 3));
        ck_assert(charge_within_part(48, 24, 0, 4, 4));
        ck_assert(!charge_within_part(48, 24, 0, 5, 4));
        ck_assert_int_eq(charge_decide(&bound, &(struct charge_usage) { .total = 24, .user = 6, .others = 3 }, 1,
                                       false),
                         CHARGE_CROWDED);
        /* Root is never bound by its part: the reserve is its. */
        ck_assert_int_eq(charge_decide(&bound, &(struct charge_usage) { .total = 24, .user = 6, .others = 3 }, 24,
                                       true),
                         CHARGE_GRANTED);
        /* The pool is named before the part. */
        ck_assert_int_eq(charge_decide(&bound, &(struct charge_usage) { .total = 48, .others = 3 }, 1, false),
                         CHARGE_POOL_FULL);
        /* No overflow at the extremes. */
        ck_assert(!charge_within_part(UINT64_MAX, 0, 0, UINT64_MAX, UINT64_MAX));
        ck_assert(!charge_within_part(UINT64_MAX, 0, UINT64_MAX, 1, 0));
        ck_assert(charge_within_part(UINT64_MAX, 0, 0, 1, UINT64_MAX - 3));
        ck_assert(!charge_within_part(0, 0, 0, 1, 0));
        ck_assert(charge_within_part(0, 0, 0, 0, 0));
}
END_TEST

/* However many uids take in turn as much as they may, the pool keeps at
 * least half free, and a newcomer and root are served. */
START_TEST(test_a_few_uids_cannot_empty_a_pool) {
        struct charge_bounds bounds = {};
        struct user_charges c;
        char text[160];

        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                bounds.kind[k] = (struct charge_bound) { .pool = 4095, .share = 256, .privileged_exempt = true };
        user_charges_init(&c, &bounds);
        for (unsigned n_uids = 1; n_uids <= 16; n_uids++) {
                for (unsigned round = 0; round < 300; round++)
                        for (unsigned i = 1; i <= n_uids; i++)
                                (void) user_charges_take(&c, plain_uid(i), CHARGE_EVENTS, 1);
                /* At worst 1/(n+1) free, as each newcomer took its part
                 * of what the earlier ones left (dbus-broker's bound). */
                ck_assert_uint_ge(4095 - c.total[CHARGE_EVENTS], 4095 / (n_uids + 1));
                ck_assert_uint_eq(c.holders[CHARGE_EVENTS], n_uids);
                ck_assert_int_eq(user_charges_check(&c, plain_uid(100), CHARGE_EVENTS, 1), 0);
                ck_assert_uint_gt(user_charges_room(&c, plain_uid(100), CHARGE_EVENTS), 0);
        }
        /* Sixteen: each at its part, refused with -EUSERS (not its fixed
         * share of 256, far away), and named. */
        ck_assert_uint_lt(user_charges_held(&c, plain_uid(16), CHARGE_EVENTS), 256);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(16), CHARGE_EVENTS, 1), -EUSERS);
        ck_assert_uint_eq(user_charges_room(&c, plain_uid(1), CHARGE_EVENTS), 0);
        ck_assert_int_eq(user_charges_take(&c, 0, CHARGE_EVENTS, 1000), 0);
        ck_assert_ptr_nonnull(strstr(user_charges_holders_text(&c, CHARGE_EVENTS, text, sizeof(text)),
                                     " and 14 more uids"));
        ck_assert_str_eq(user_charges_holders_text(&c, CHARGE_RING_BYTES, text, sizeof(text)), "nobody");
        /* Root is named among who holds most, not counted among the
         * holders whose number shrinks the parts. */
        ck_assert_uint_eq(c.holders[CHARGE_EVENTS], 16);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_holders_text_largest_first_and_cut) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;
        char text[160], want[160], tiny[12];

        user_charges_init(&c, &bounds);
        ck_assert_int_eq(user_charges_force(&c, plain_uid(1), CHARGE_REPLY_FDS, 2), 0);
        ck_assert_int_eq(user_charges_force(&c, plain_uid(2), CHARGE_REPLY_FDS, 7), 0);
        ck_assert_int_eq(user_charges_force(&c, plain_uid(3), CHARGE_REPLY_FDS, 4), 0);
        snprintf(want, sizeof(want), "uid %u (7), uid %u (4), uid %u (2)", (unsigned) plain_uid(2),
                 (unsigned) plain_uid(3), (unsigned) plain_uid(1));
        ck_assert_str_eq(user_charges_holders_text(&c, CHARGE_REPLY_FDS, text, sizeof(text)), want);
        /* Cut, never overrun. */
        user_charges_holders_text(&c, CHARGE_REPLY_FDS, tiny, sizeof(tiny));
        ck_assert_uint_eq(strlen(tiny), sizeof(tiny) - 1);
        user_charges_release(&c, plain_uid(2), CHARGE_REPLY_FDS, 7);
        ck_assert_uint_eq(c.holders[CHARGE_REPLY_FDS], 2);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_default_share) {
        ck_assert_uint_eq(charge_default_share(4095), 1023);
        ck_assert_uint_eq(charge_default_share(UINT64_C(32) << 20), UINT64_C(8) << 20);
        ck_assert_uint_eq(charge_default_share(3), 1);
        ck_assert_uint_eq(charge_default_share(0), 0);
}
END_TEST

START_TEST(test_one_uid_cannot_empty_a_pool) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;
        unsigned granted = 0;

        user_charges_init(&c, &bounds);
        while (user_charges_take(&c, plain_uid(1), CHARGE_RING_BYTES, 1) == 0)
                granted++;
        ck_assert_uint_eq(granted, 25);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_RING_BYTES, 1), -EDQUOT);
        /* Another uid still gets its own share; another kind is apart. */
        ck_assert_int_eq(user_charges_take(&c, plain_uid(2), CHARGE_RING_BYTES, 25), 0);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_RECORD_STREAMS, 25), 0);
        ck_assert_uint_eq(c.total[CHARGE_RING_BYTES], 50);
        ck_assert_uint_eq(user_charges_room(&c, plain_uid(1), CHARGE_RING_BYTES), 0);
        /* A third uid: its part among three of the 50 left, not its share. */
        ck_assert_uint_eq(user_charges_room(&c, plain_uid(3), CHARGE_RING_BYTES), 12);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_root_exempt_from_share_not_pool) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;

        user_charges_init(&c, &bounds);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_EVENTS, 20), 0);
        ck_assert_int_eq(user_charges_take(&c, 0, CHARGE_EVENTS, 80), 0);
        ck_assert_int_eq(user_charges_take(&c, 0, CHARGE_EVENTS, 1), -ENOSPC);
        /* The pool is full for everyone, but the plain uid is told about
         * the pool, not its share, while below the share. */
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_EVENTS, 1), -ENOSPC);
        ck_assert_uint_eq(user_charges_room(&c, 0, CHARGE_EVENTS), 0);
        user_charges_release(&c, 0, CHARGE_EVENTS, 10);
        ck_assert_uint_eq(user_charges_room(&c, 0, CHARGE_EVENTS), 10);
        /* The plain uid holds 20 of the 30 available to it (10 free): more
         * than its half already, root's reserve is not its. */
        ck_assert_uint_eq(user_charges_room(&c, plain_uid(1), CHARGE_EVENTS), 0);
        /* A pool whose share binds root too. */
        ck_assert(!user_charges_exempt(&c, 0, CHARGE_CLIENTS));
        ck_assert_int_eq(user_charges_take(&c, 0, CHARGE_CLIENTS, 25), 0);
        ck_assert_int_eq(user_charges_take(&c, 0, CHARGE_CLIENTS, 1), -EDQUOT);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_release_is_exact_and_saturating) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;

        user_charges_init(&c, &bounds);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_CLIENTS, 10), 0);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(2), CHARGE_CLIENTS, 5), 0);
        user_charges_release(&c, plain_uid(1), CHARGE_CLIENTS, 4);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_CLIENTS), 6);
        /* More than held: only what it held goes, the other uid's stays. */
        user_charges_release(&c, plain_uid(1), CHARGE_CLIENTS, 1000);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_CLIENTS), 0);
        ck_assert_uint_eq(c.total[CHARGE_CLIENTS], 5);
        /* A uid that never held anything. */
        user_charges_release(&c, plain_uid(3), CHARGE_CLIENTS, 1);
        ck_assert_uint_eq(c.total[CHARGE_CLIENTS], 5);
        /* Exactly one more than held: still only what it held, nothing
         * wraps and the other uid's stays. */
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_CLIENTS, 3), 0);
        user_charges_release(&c, plain_uid(2), CHARGE_CLIENTS, 6);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(2), CHARGE_CLIENTS), 0);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_CLIENTS), 3);
        ck_assert_uint_eq(c.total[CHARGE_CLIENTS], 3);
        ck_assert_uint_eq(c.holders[CHARGE_CLIENTS], 1);
        user_charges_done(&c);
}
END_TEST

/* A charge remembers whose it is, of what and how much: its holder
 * gives it back without saying any of that again, never more than it took
 * (another holder of the same uid keeps its own), and a refused take
 * leaves it as it was. */
START_TEST(test_charge_objects_release_what_they_took) {
        struct charge_bounds bounds = test_bounds();
        struct user_charge a, b, zeroed = {};
        struct user_charges c;

        user_charges_init(&c, &bounds);
        user_charge_init(&a, &c, plain_uid(1), CHARGE_RING_BYTES);
        user_charge_init(&b, &c, plain_uid(1), CHARGE_RING_BYTES);
        ck_assert_int_eq(user_charge_take(&a, 10), 0);
        ck_assert_int_eq(user_charge_take(&a, 5), 0);
        ck_assert_int_eq(user_charge_force(&b, 3), 0);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_RING_BYTES), 18);
        /* Over the uid's share of 25: refused, nothing taken. */
        ck_assert_int_eq(user_charge_take(&a, 10), -EDQUOT);
        ck_assert_uint_eq(a.amount, 15);
        user_charge_release(&a, 4);
        ck_assert_uint_eq(a.amount, 11);
        /* More than it holds: only its own goes, b's stays. */
        user_charge_release(&a, 1000);
        ck_assert_uint_eq(a.amount, 0);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_RING_BYTES), 3);
        user_charge_deinit(&b);
        user_charge_deinit(&b);
        user_charge_deinit(&zeroed);
        ck_assert_uint_eq(c.total[CHARGE_RING_BYTES], 0);
        ck_assert_uint_eq(c.n_accounts, 0);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_accounts_go_when_empty) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;

        user_charges_init(&c, &bounds);
        for (unsigned i = 0; i < 1000; i++) {
                ck_assert_int_eq(user_charges_take(&c, plain_uid(10 + i), CHARGE_AUTHORIZATIONS, 0), 0);
                user_charges_release(&c, plain_uid(10 + i), CHARGE_AUTHORIZATIONS, 0);
        }
        ck_assert_uint_eq(c.n_accounts, 0);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_AUTHORIZATIONS, 1), 0);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_EVENTS, 1), 0);
        user_charges_release(&c, plain_uid(1), CHARGE_AUTHORIZATIONS, 1);
        ck_assert_uint_eq(c.n_accounts, 1);
        user_charges_release(&c, plain_uid(1), CHARGE_EVENTS, 1);
        ck_assert_uint_eq(c.n_accounts, 0);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_lowered_bound_keeps_what_is_held) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;

        user_charges_init(&c, &bounds);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_RECORD_STREAMS, 20), 0);
        bounds.kind[CHARGE_RECORD_STREAMS].share = 10;
        user_charges_set_bounds(&c, &bounds);
        ck_assert_uint_eq(user_charges_held(&c, plain_uid(1), CHARGE_RECORD_STREAMS), 20);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_RECORD_STREAMS, 1), -EDQUOT);
        ck_assert_uint_eq(user_charges_room(&c, plain_uid(1), CHARGE_RECORD_STREAMS), 0);
        user_charges_release(&c, plain_uid(1), CHARGE_RECORD_STREAMS, 11);
        ck_assert_int_eq(user_charges_take(&c, plain_uid(1), CHARGE_RECORD_STREAMS, 1), 0);
        /* Forced charges ignore the bounds (state restored at start). */
        ck_assert_int_eq(user_charges_force(&c, plain_uid(2), CHARGE_RECORD_STREAMS, 500), 0);
        ck_assert_uint_eq(c.total[CHARGE_RECORD_STREAMS], 510);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_rate_burst_then_per_minute) {
        const struct rate_bound bound = { .burst = 4, .per_minute = 60 };
        struct token_bucket bucket = {};
        uint64_t now = 1000000, wait = 0;

        for (unsigned i = 0; i < 4; i++)
                ck_assert(rate_decide(&bound, &bucket, now, &wait));
        ck_assert(!rate_decide(&bound, &bucket, now, &wait));
        ck_assert_uint_eq(wait, 1000000);                      /* one a second */
        ck_assert(!rate_decide(&bound, &bucket, now + 999999, &wait));
        ck_assert_uint_eq(wait, 1);
        ck_assert(rate_decide(&bound, &bucket, now + 1000000, &wait));
        ck_assert(!rate_decide(&bound, &bucket, now + 1000000, &wait));
        /* A long pause fills the bucket, never beyond the burst. */
        now += 3600u * 1000000u;
        for (unsigned i = 0; i < 4; i++)
                ck_assert(rate_decide(&bound, &bucket, now, &wait));
        ck_assert(!rate_decide(&bound, &bucket, now, &wait));
        /* A clock that goes back refills nothing. */
        ck_assert(!rate_decide(&bound, &bucket, now - 5000000, &wait));
        ck_assert(!rate_decide(&bound, &bucket, now, &wait));
}
END_TEST

START_TEST(test_rate_extremes) {
        struct token_bucket bucket = {};
        uint64_t wait = 0;

        /* No refill: the burst only, and a wait of forever. */
        ck_assert(rate_decide(&(struct rate_bound) { .burst = 1 }, &bucket, 5, &wait));
        ck_assert(!rate_decide(&(struct rate_bound) { .burst = 1 }, &bucket, UINT64_MAX, &wait));
        ck_assert_uint_eq(wait, UINT64_MAX);
        /* No burst: nothing. */
        bucket = (struct token_bucket) {};
        ck_assert(!rate_decide(&(struct rate_bound) { .per_minute = 60 }, &bucket, 5, &wait));
        /* Huge bounds do not overflow. */
        bucket = (struct token_bucket) {};
        ck_assert(rate_decide(&(struct rate_bound) { .burst = UINT64_MAX, .per_minute = UINT64_MAX }, &bucket,
                              UINT64_MAX, &wait));
        ck_assert(rate_decide(&(struct rate_bound) { .burst = UINT64_MAX, .per_minute = UINT64_MAX }, &bucket,
                              UINT64_MAX, &wait));
}
END_TEST

static uint64_t fake_now;

static uint64_t fake_clock(void) {
        return fake_now;
}

/* What costs what it built: allowed while neither bucket is in debt,
 * charged after, beyond the bucket if it was large; the debt waits. */
START_TEST(test_rate_allowed_then_charged) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;
        uint64_t wait = 0;

        bounds.rate[RATE_LARGE_REPLY_KIB] = (struct rate_bound) {
                .burst = 100, .per_minute = 600, .privileged_exempt = true, .all_burst = 250, .all_per_minute = 1200,
        };
        user_charges_init(&c, &bounds);
        c.now_usec = fake_clock;
        fake_now = 1000000;

        ck_assert_int_eq(user_charges_rate_allowed(&c, plain_uid(1), RATE_LARGE_REPLY_KIB, &wait), 0);
        user_charges_rate_charge(&c, plain_uid(1), RATE_LARGE_REPLY_KIB, 130);     /* 30 in debt */
        ck_assert_int_eq(user_charges_rate_allowed(&c, plain_uid(1), RATE_LARGE_REPLY_KIB, &wait), -EDQUOT);
        ck_assert_uint_ge(wait, 3000000);                      /* 30 at 10 a second */
        ck_assert_uint_le(wait, 3000001);
        fake_now += 3000001;
        ck_assert_int_eq(user_charges_rate_allowed(&c, plain_uid(1), RATE_LARGE_REPLY_KIB, &wait), 0);
        /* All users together: 70 left of the first (20 a second for 3 s)
         * and 190 more is a debt of 10 for everyone. */
        ck_assert_int_eq(user_charges_rate_allowed(&c, plain_uid(2), RATE_LARGE_REPLY_KIB, &wait), 0);
        user_charges_rate_charge(&c, plain_uid(2), RATE_LARGE_REPLY_KIB, 190);
        ck_assert_int_eq(user_charges_rate_allowed(&c, plain_uid(3), RATE_LARGE_REPLY_KIB, &wait), -ENOSPC);
        /* Root is neither charged nor refused. */
        user_charges_rate_charge(&c, 0, RATE_LARGE_REPLY_KIB, 100000);
        ck_assert_int_eq(user_charges_rate_allowed(&c, 0, RATE_LARGE_REPLY_KIB, &wait), 0);
        user_charges_done(&c);
}
END_TEST

START_TEST(test_rate_survives_leaving) {
        struct charge_bounds bounds = test_bounds();
        struct user_charges c;
        uid_t uid = plain_uid(1);
        uint64_t wait = 0;

        bounds.rate[RATE_NEW_EVENTS] = (struct rate_bound) { .burst = 2, .per_minute = 6, .privileged_exempt = true };
        user_charges_init(&c, &bounds);
        c.now_usec = fake_clock;
        fake_now = 1000000;

        /* Create, hold, let go, again: what it took stays taken. */
        for (unsigned i = 0; i < 2; i++) {
                ck_assert_int_eq(user_charges_take_rate(&c, uid, RATE_NEW_EVENTS, &wait), 0);
                ck_assert_int_eq(user_charges_take(&c, uid, CHARGE_EVENTS, 1), 0);
                user_charges_release(&c, uid, CHARGE_EVENTS, 1);
        }
        ck_assert_uint_eq(c.n_accounts, 1);
        ck_assert_int_eq(user_charges_take_rate(&c, uid, RATE_NEW_EVENTS, &wait), -EDQUOT);
        ck_assert_uint_eq(wait, 10000000);                     /* 6 a minute */
        /* Another uid has a bucket of its own; root none. */
        ck_assert_int_eq(user_charges_take_rate(&c, plain_uid(2), RATE_NEW_EVENTS, &wait), 0);
        for (unsigned i = 0; i < 10; i++)
                ck_assert_int_eq(user_charges_take_rate(&c, 0, RATE_NEW_EVENTS, &wait), 0);
        /* Refilled, the account goes with its next release. */
        fake_now += 60u * 1000000u;
        ck_assert_int_eq(user_charges_take(&c, uid, CHARGE_EVENTS, 1), 0);
        fake_now += 60u * 1000000u;
        user_charges_release(&c, uid, CHARGE_EVENTS, 1);
        ck_assert_uint_eq(user_charges_held(&c, uid, CHARGE_EVENTS), 0);
        ck_assert_uint_eq(c.n_accounts, 1);                    /* plain_uid(2)'s, still refilling */
        user_charges_done(&c);
}
END_TEST

static Suite *user_charges_suite(void) {
        Suite *s = suite_create("user-charges");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_decide_share_then_pool);
        tcase_add_test(tc, test_part_among_holders);
        tcase_add_test(tc, test_a_few_uids_cannot_empty_a_pool);
        tcase_add_test(tc, test_holders_text_largest_first_and_cut);
        tcase_add_test(tc, test_default_share);
        tcase_add_test(tc, test_one_uid_cannot_empty_a_pool);
        tcase_add_test(tc, test_root_exempt_from_share_not_pool);
        tcase_add_test(tc, test_release_is_exact_and_saturating);
        tcase_add_test(tc, test_charge_objects_release_what_they_took);
        tcase_add_test(tc, test_accounts_go_when_empty);
        tcase_add_test(tc, test_lowered_bound_keeps_what_is_held);
        tcase_add_test(tc, test_rate_burst_then_per_minute);
        tcase_add_test(tc, test_rate_extremes);
        tcase_add_test(tc, test_rate_survives_leaving);
        tcase_add_test(tc, test_rate_allowed_then_charged);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(user_charges_suite());
}
