/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/providers/ring-read-shares.c: each uid's allowance to have its
 * rings read, refilled up to its own rate and, for all uids together, up
 * to the total, shared max-min fairly. */
#include "check-tap.h"

#include "ring-read-shares.h"

#define PER_MS (EMBEDDED_RING_READ_BYTES_PER_SEC / 1000)
#define TOTAL_MS (EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC / 1000)

static uint64_t sum(const uint64_t *bytes, size_t n) {
        uint64_t s = 0;

        for (size_t i = 0; i < n; i++)
                s += bytes[i];
        return s;
}

START_TEST(test_one_uid_at_its_own_rate) {
        uint64_t bytes[1] = { 0 };

        ck_assert_uint_eq(ring_read_shares_refill(bytes, 1, 0, 1000), UINT64_MAX);
        ck_assert_uint_eq(bytes[0], PER_MS);
        /* Up to the burst, however long the pause. */
        (void) ring_read_shares_refill(bytes, 1, 0, 3600 * UINT64_C(1000000));
        ck_assert_uint_eq(bytes[0], EMBEDDED_RING_READ_BURST);
        (void) ring_read_shares_refill(bytes, 1, 0, 1000);
        ck_assert_uint_eq(bytes[0], EMBEDDED_RING_READ_BURST);
}
END_TEST

START_TEST(test_no_uids_and_no_time) {
        uint64_t bytes[2] = { 0, 5 };

        ck_assert_uint_eq(ring_read_shares_refill(NULL, 0, 0, 1000), UINT64_MAX);
        ck_assert_uint_eq(ring_read_shares_refill(bytes, 2, 0, 0), UINT64_MAX);
        ck_assert_uint_eq(bytes[0], 0);
        ck_assert_uint_eq(bytes[1], 5);
}
END_TEST

START_TEST(test_a_pause_of_any_length_does_not_overflow) {
        /* A pause counts as a second: 64 empty allowances fill (a burst
         * each, 128 MiB in all, within a second's total) ... */
        static uint64_t bytes[512];

        ck_assert_uint_eq(ring_read_shares_refill(bytes, 64, 0, UINT64_MAX), UINT64_MAX);
        for (size_t i = 0; i < 64; i++)
                ck_assert_uint_eq(bytes[i], EMBEDDED_RING_READ_BURST);
        /* ... 512 would be 1 GiB: they share a second's total. */
        for (size_t i = 0; i < 512; i++)
                bytes[i] = 0;
        ck_assert_uint_eq(ring_read_shares_refill(bytes, 512, 0, UINT64_MAX),
                          EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC / 512);
        ck_assert_uint_le(sum(bytes, 512), EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC);
}
END_TEST

START_TEST(test_idle_uids_leave_a_heavy_one_its_rate) {
        /* Work-conserving: fifteen uids with full allowances (idle) take
         * nothing, so the one that reads gets its own rate, not a
         * sixteenth of the total. */
        uint64_t bytes[16];

        for (size_t i = 1; i < 16; i++)
                bytes[i] = EMBEDDED_RING_READ_BURST;
        bytes[0] = 0;
        ck_assert_uint_eq(ring_read_shares_refill(bytes, 16, 0, 1000), UINT64_MAX);
        ck_assert_uint_eq(bytes[0], PER_MS);
}
END_TEST

START_TEST(test_heavy_uids_share_the_total_evenly) {
        uint64_t bytes[8] = {};
        uint64_t level = ring_read_shares_refill(bytes, 8, 0, 1000);

        ck_assert_uint_le(sum(bytes, 8), TOTAL_MS);
        ck_assert_uint_ge(sum(bytes, 8), TOTAL_MS - 8);
        for (size_t i = 0; i < 8; i++)
                ck_assert_uint_eq(bytes[i], level);
        ck_assert_uint_eq(level, TOTAL_MS / 8);
}
END_TEST

START_TEST(test_two_uids_at_their_rate_fit) {
        uint64_t bytes[2] = {};

        ck_assert_uint_eq(ring_read_shares_refill(bytes, 2, 0, 1000), UINT64_MAX);
        ck_assert_uint_eq(bytes[0], PER_MS);
        ck_assert_uint_eq(bytes[1], PER_MS);
}
END_TEST

START_TEST(test_privileged_uids_are_outside_the_total) {
        /* Root's share (first) gains its own rate beside sixteen uids that
         * share the total: they cannot shrink it, nor does it shrink
         * theirs. */
        uint64_t bytes[17] = {};
        uint64_t level = ring_read_shares_refill(bytes, 17, 1, 1000);

        ck_assert_uint_eq(bytes[0], PER_MS);
        ck_assert_uint_eq(level, TOTAL_MS / 16);
        for (size_t i = 1; i < 17; i++)
                ck_assert_uint_eq(bytes[i], level);
        /* An exempt share fills to its burst, like any other. */
        (void) ring_read_shares_refill(bytes, 17, 1, UINT64_MAX);
        ck_assert_uint_eq(bytes[0], EMBEDDED_RING_READ_BURST);
}
END_TEST

START_TEST(test_light_uids_keep_what_they_use) {
        /* Three uids used 10 KiB each since the last refill, five used all
         * they had: the light ones are refilled in full, the heavy ones
         * share the rest. */
        uint64_t bytes[8];
        uint64_t level, heavy = (TOTAL_MS - 3 * 10240) / 5;

        for (size_t i = 0; i < 3; i++)
                bytes[i] = EMBEDDED_RING_READ_BURST - 10240;
        for (size_t i = 3; i < 8; i++)
                bytes[i] = 0;
        level = ring_read_shares_refill(bytes, 8, 0, 1000);
        ck_assert_uint_eq(level, heavy);
        for (size_t i = 0; i < 3; i++)
                ck_assert_uint_eq(bytes[i], EMBEDDED_RING_READ_BURST);
        for (size_t i = 3; i < 8; i++)
                ck_assert_uint_eq(bytes[i], heavy);
        ck_assert_uint_le(sum(bytes, 8) - 3 * (EMBEDDED_RING_READ_BURST - 10240), TOTAL_MS);
}
END_TEST

START_TEST(test_many_uids_do_not_buy_more_than_the_total) {
        /* A simulation of ten seconds in millisecond refills: one honest
         * uid reads all it may every millisecond; 255 attacking uids (a
         * user's subordinate uids) read all they may on alternate
         * milliseconds, to come back with full allowances. All together
         * read at most the total's worth (and the allowances they started
         * with, none: shares start empty); the honest uid gets at least
         * its even share. */
        enum { N = 256, STEPS = 10000 };
        static uint64_t bytes[N];
        uint64_t read_all = 0, read_honest = 0;

        for (unsigned step = 0; step < STEPS; step++) {
                (void) ring_read_shares_refill(bytes, N, 0, 1000);
                for (size_t i = 0; i < N; i++)
                        if (i == 0 || (step + i) % 2 == 0) {
                                read_all += bytes[i];
                                if (i == 0)
                                        read_honest += bytes[i];
                                bytes[i] = 0;
                        }
        }
        ck_assert_uint_le(read_all, (uint64_t) STEPS * TOTAL_MS);
        ck_assert_uint_ge(read_honest, (uint64_t) STEPS * (TOTAL_MS / N));
}
END_TEST

START_TEST(test_bisection_finds_the_highest_level) {
        /* Rooms of 1, 2, ..., 100 bytes below the burst... and three heavy
         * uids: the level is the highest that fits, exactly. */
        uint64_t bytes[103], before[103], level, gained = 0;

        for (size_t i = 0; i < 100; i++)
                bytes[i] = EMBEDDED_RING_READ_BURST - (i + 1) * 1000;
        for (size_t i = 100; i < 103; i++)
                bytes[i] = 0;
        for (size_t i = 0; i < 103; i++)
                before[i] = bytes[i];
        level = ring_read_shares_refill(bytes, 103, 0, 1000);
        ck_assert_uint_ne(level, UINT64_MAX);
        for (size_t i = 0; i < 103; i++) {
                uint64_t room = EMBEDDED_RING_READ_BURST - before[i];

                ck_assert_uint_eq(bytes[i] - before[i], room < level ? room : level);
                gained += bytes[i] - before[i];
        }
        ck_assert_uint_le(gained, TOTAL_MS);
        /* One more byte of level would not fit: every uid at the level
         * would gain one more. */
        {
                uint64_t at_level = 0;

                for (size_t i = 0; i < 103; i++)
                        if (EMBEDDED_RING_READ_BURST - before[i] > level)
                                at_level++;
                ck_assert_uint_gt(gained + at_level, TOTAL_MS);
        }
}
END_TEST

static Suite *ring_read_shares_suite(void) {
        Suite *s = suite_create("ring-read-shares");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_one_uid_at_its_own_rate);
        tcase_add_test(tc, test_no_uids_and_no_time);
        tcase_add_test(tc, test_a_pause_of_any_length_does_not_overflow);
        tcase_add_test(tc, test_idle_uids_leave_a_heavy_one_its_rate);
        tcase_add_test(tc, test_heavy_uids_share_the_total_evenly);
        tcase_add_test(tc, test_two_uids_at_their_rate_fit);
        tcase_add_test(tc, test_privileged_uids_are_outside_the_total);
        tcase_add_test(tc, test_light_uids_keep_what_they_use);
        tcase_add_test(tc, test_many_uids_do_not_buy_more_than_the_total);
        tcase_add_test(tc, test_bisection_finds_the_highest_level);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(ring_read_shares_suite());
}
