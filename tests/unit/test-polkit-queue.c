/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/bus/polkit-queue.c: the polkit checks waiting for an answer. Which
 * call a stored check is found by, what a re-run gets, oldest first within
 * the in-flight bound, each uid's share of waiting checks and the pool,
 * and every charge given back. No bus: requests are plain addresses. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "check-tap.h"

#include "polkit-queue.h"
#include "user-charges.h"

#define MAX_IN_FLIGHT 8u
#define SHARE 4u
#define POOL 16u
#define N_ENTRIES 80u

static struct user_charges charges;
static struct polkit_queue queue, *const q = &queue;
static struct polkit_queue_entry entries[N_ENTRIES];
static char requests[N_ENTRIES];        /* the keys: distinct addresses */

/* Ordinary uids, neither root nor whoever runs the test (both are exempt
 * from shares). */
static uid_t plain_uid(unsigned i) {
        uid_t uid = 50000 + i;

        return uid == geteuid() ? uid + 100 : uid;
}

static void setup(void) {
        const struct charge_bounds bounds = {
                .kind[CHARGE_AUTHORIZATIONS] = { .pool = POOL, .share = SHARE, .privileged_exempt = true },
        };

        user_charges_init(&charges, &bounds);
        polkit_queue_init(q, &charges, MAX_IN_FLIGHT);
}

static void teardown(void) {
        /* Everything charged was released. */
        ck_assert_uint_eq(charges.total[CHARGE_AUTHORIZATIONS], 0);
        ck_assert_uint_eq(charges.n_accounts, 0);
        user_charges_done(&charges);
}

/* Queues entries[i] for request i of ":1.<i>", asking "act" for uid @uid. */
static void add(unsigned i, uid_t uid) {
        char sender[16];

        snprintf(sender, sizeof(sender), ":1.%u", i);
        ck_assert_int_eq(polkit_queue_add(q, &entries[i], &requests[i], 100 + i, sender, "act", uid), 0);
        ck_assert_int_eq(entries[i].state, POLKIT_QUEUED);
}

/* Removes everything left, as polkit_registry_free() does. */
static void remove_all(void) {
        while (q->entries)
                polkit_queue_remove(q, q->entries);
        ck_assert_uint_eq(q->n, 0);
        ck_assert_uint_eq(q->n_sent, 0);
}

/* Sends what polkit_queue_next() hands out, as polkit.c's start_queued()
 * does; returns how many. */
static unsigned send_queued(void) {
        struct polkit_queue_entry *e;
        unsigned n = 0;

        while ((e = polkit_queue_next(q))) {
                polkit_queue_sent(q, e);
                n++;
        }
        return n;
}

START_TEST(test_sent_oldest_first_within_the_bound) {
        const struct charge_bounds bounds = {
                .kind[CHARGE_AUTHORIZATIONS] = { .pool = 1024, .share = 8, .privileged_exempt = true },
        };

        /* Room to wait for ten uids (the fixture's pool is for the shares). */
        user_charges_done(&charges);
        user_charges_init(&charges, &bounds);
        polkit_queue_init(q, &charges, MAX_IN_FLIGHT);
        for (unsigned i = 0; i < 10; i++)
                add(i, plain_uid(i));
        ck_assert_uint_eq(q->n, 10);
        /* Each uid's first check goes while a slot is free: the oldest
         * eight; the others wait. */
        for (unsigned i = 0; i < MAX_IN_FLIGHT; i++) {
                ck_assert(polkit_queue_may_send(q));
                ck_assert_ptr_eq(polkit_queue_next(q), &entries[i]);
                polkit_queue_sent(q, &entries[i]);
                ck_assert_int_eq(entries[i].state, POLKIT_SENT);
        }
        ck_assert_uint_eq(q->n_sent, MAX_IN_FLIGHT);
        ck_assert(!polkit_queue_may_send(q));
        ck_assert_ptr_null(polkit_queue_next(q));
        /* An answer makes room for the oldest waiting one, not the newest. */
        polkit_queue_answered(q, &entries[1]);
        ck_assert_int_eq(entries[1].state, POLKIT_ANSWERED);
        ck_assert_uint_eq(q->n_sent, MAX_IN_FLIGHT - 1);
        ck_assert_ptr_eq(polkit_queue_next(q), &entries[8]);
        ck_assert_uint_eq(send_queued(), 1);
        ck_assert_int_eq(entries[8].state, POLKIT_SENT);
        ck_assert_ptr_null(polkit_queue_next(q));
        /* An answered check waiting for its re-run takes no room. */
        ck_assert_uint_eq(q->n, 10);
        ck_assert_uint_eq(q->n_sent, MAX_IN_FLIGHT);
        /* A sent check taken out (its sender left) makes room too. */
        polkit_queue_remove(q, &entries[0]);
        ck_assert_uint_eq(q->n, 9);
        ck_assert_ptr_eq(polkit_queue_next(q), &entries[9]);
        ck_assert_uint_eq(send_queued(), 1);
        ck_assert_ptr_eq(polkit_queue_next(q), NULL);
        remove_all();
}
END_TEST

/* One uid alone: its first check, then its part, half of the slots. */
START_TEST(test_one_uid_gets_half_the_slots) {
        for (unsigned i = 0; i < SHARE; i++)
                add(i, plain_uid(0));
        ck_assert_uint_eq(send_queued(), MAX_IN_FLIGHT / 2);
        ck_assert(polkit_queue_may_send(q));
        ck_assert(!polkit_queue_may_send_for(q, plain_uid(0)));
        ck_assert(polkit_queue_may_send_for(q, plain_uid(1)));
        remove_all();
}
END_TEST

/* Eight uids whose agents never answer, each with AuthorizationsPerUser=8
 * checks, hold less than the 64 slots: another uid's check goes at once. */
START_TEST(test_unanswering_uids_leave_slots) {
        const struct charge_bounds bounds = {
                .kind[CHARGE_AUTHORIZATIONS] = { .pool = 1024, .share = 8, .privileged_exempt = true },
        };
        unsigned i = 0;

        user_charges_done(&charges);
        user_charges_init(&charges, &bounds);
        polkit_queue_init(q, &charges, 64);
        for (unsigned u = 0; u < 8; u++)
                for (unsigned k = 0; k < 8; k++, i++)
                        add(i, plain_uid(u));
        send_queued();
        ck_assert_uint_lt(q->n_sent, 64);
        /* The first uid has its part; a newcomer has room, as polkit.c
         * asks before sending a new check at once. */
        ck_assert(!polkit_queue_may_send_for(q, plain_uid(0)));
        ck_assert(polkit_queue_may_send_for(q, plain_uid(100)));
        add(i, plain_uid(100));
        ck_assert_ptr_eq(polkit_queue_next(q), &entries[i]);
        ck_assert_uint_eq(send_queued(), 1);
        ck_assert_int_eq(entries[i].state, POLKIT_SENT);
        remove_all();
}
END_TEST

START_TEST(test_failure_to_send_is_an_answer) {
        for (unsigned i = 0; i < 2; i++)
                add(i, plain_uid(0));
        /* Could not be sent: answered with its error, never sent later,
         * and it took no room. */
        ck_assert_ptr_eq(polkit_queue_next(q), &entries[0]);
        polkit_queue_answered(q, &entries[0]);
        ck_assert_int_eq(entries[0].state, POLKIT_ANSWERED);
        ck_assert_uint_eq(q->n_sent, 0);
        ck_assert_ptr_eq(polkit_queue_next(q), &entries[1]);
        ck_assert_uint_eq(send_queued(), 1);
        ck_assert_ptr_null(polkit_queue_next(q));
        remove_all();
}
END_TEST

START_TEST(test_found_by_request_cookie_and_sender) {
        add(0, plain_uid(0));
        add(1, plain_uid(1));

        ck_assert_ptr_eq(polkit_queue_find(q, &requests[0], 100, ":1.0"), &entries[0]);
        ck_assert_ptr_eq(polkit_queue_find(q, &requests[1], 101, ":1.1"), &entries[1]);
        /* The same address for another call (another cookie, another
         * sender) is another call. */
        ck_assert_ptr_null(polkit_queue_find(q, &requests[0], 101, ":1.0"));
        ck_assert_ptr_null(polkit_queue_find(q, &requests[0], 100, ":1.1"));
        ck_assert_ptr_null(polkit_queue_find(q, &requests[2], 100, ":1.0"));
        /* Gone once removed. */
        polkit_queue_remove(q, &entries[0]);
        ck_assert_ptr_null(polkit_queue_find(q, &requests[0], 100, ":1.0"));
        ck_assert_ptr_eq(polkit_queue_find(q, &requests[1], 101, ":1.1"), &entries[1]);
        remove_all();
}
END_TEST

START_TEST(test_what_a_rerun_gets) {
        add(0, plain_uid(0));

        /* Not answered (queued or sent): the same action waits again,
         * another is refused. */
        ck_assert_int_eq(polkit_queue_match(&entries[0], "act"), POLKIT_MATCH_PENDING);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "other"), POLKIT_MATCH_CONFLICT);
        polkit_queue_sent(q, &entries[0]);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "act"), POLKIT_MATCH_PENDING);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "other"), POLKIT_MATCH_CONFLICT);
        /* Answered: the verdict is for that action only. */
        polkit_queue_answered(q, &entries[0]);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "act"), POLKIT_MATCH_VERDICT);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "other"), POLKIT_MATCH_STALE);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "ac"), POLKIT_MATCH_STALE);
        remove_all();
}
END_TEST

START_TEST(test_share_per_uid_and_pool) {
        uid_t a = plain_uid(0), b = plain_uid(1), c = plain_uid(2);
        struct polkit_queue_entry extra = {};
        unsigned i = 0;

        /* One uid: its share, then refused, nothing queued or charged. */
        for (; i < SHARE; i++)
                add(i, a);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[i], 1, ":1.99", "act", a), -EDQUOT);
        ck_assert_uint_eq(q->n, SHARE);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_AUTHORIZATIONS), SHARE);
        ck_assert_ptr_null(polkit_queue_find(q, &requests[i], 1, ":1.99"));

        /* Others are not held up by it: another gets its share... */
        for (; i < 2 * SHARE; i++)
                add(i, b);
        /* ...a third its part among the three of what is left (2 of 8)... */
        add(i++, c);
        add(i++, c);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[i], 1, ":1.99", "act", c), -EUSERS);
        ck_assert_uint_eq(q->n, 2 * SHARE + 2);
        /* ...and root the rest, until the pool is full for everyone. */
        while (q->n < POOL)
                add(i++, 0);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[i], 1, ":1.99", "act", c), -ENOSPC);
        ck_assert_uint_eq(charges.total[CHARGE_AUTHORIZATIONS], POOL);

        /* A removed check gives its uid's charge back: room again, once
         * root's are answered too (3 of 1 + 3 is more than a's part). */
        polkit_queue_remove(q, &entries[0]);
        ck_assert_uint_eq(user_charges_held(&charges, a, CHARGE_AUTHORIZATIONS), SHARE - 1);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[i], 1, ":1.99", "act", a), -EUSERS);
        /* Alone again: its share. */
        for (unsigned k = SHARE; k < i; k++)
                polkit_queue_remove(q, &entries[k]);
        add(0, a);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[i], 1, ":1.99", "act", a), -EDQUOT);
        remove_all();
}
END_TEST

START_TEST(test_privileged_bound_by_the_pool_only) {
        struct polkit_queue_entry extra = {};

        /* Root has no share (privileged_exempt), only the pool. */
        for (unsigned i = 0; i < POOL; i++)
                add(i, 0);
        ck_assert_int_eq(polkit_queue_add(q, &extra, &requests[POOL], 1, ":1.99", "act", 0), -ENOSPC);
        remove_all();
}
END_TEST

START_TEST(test_entry_owns_copies) {
        char sender[] = ":1.5", action[] = "org.uebroker1.record";

        ck_assert_int_eq(polkit_queue_add(q, &entries[0], &requests[0], 7, sender, action, plain_uid(0)), 0);
        /* The caller's strings may go: the entry has its own. */
        sender[3] = '6';
        action[0] = 'x';
        ck_assert_str_eq(entries[0].sender, ":1.5");
        ck_assert_str_eq(entries[0].action, "org.uebroker1.record");
        ck_assert_ptr_eq(polkit_queue_find(q, &requests[0], 7, ":1.5"), &entries[0]);
        ck_assert_int_eq(polkit_queue_match(&entries[0], "org.uebroker1.record"), POLKIT_MATCH_PENDING);
        polkit_queue_remove(q, &entries[0]);
        ck_assert_ptr_null(entries[0].sender);
        ck_assert_ptr_null(entries[0].action);
        ck_assert_uint_eq(q->n, 0);
}
END_TEST

static Suite *polkit_queue_suite(void) {
        Suite *s = suite_create("polkit-queue");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_sent_oldest_first_within_the_bound);
        tcase_add_test(tc, test_unanswering_uids_leave_slots);
        tcase_add_test(tc, test_one_uid_gets_half_the_slots);
        tcase_add_test(tc, test_failure_to_send_is_an_answer);
        tcase_add_test(tc, test_found_by_request_cookie_and_sender);
        tcase_add_test(tc, test_what_a_rerun_gets);
        tcase_add_test(tc, test_share_per_uid_and_pool);
        tcase_add_test(tc, test_privileged_bound_by_the_pool_only);
        tcase_add_test(tc, test_entry_owns_copies);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(polkit_queue_suite());
}
