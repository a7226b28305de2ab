/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/core/event-change.c: the signals that bring a listener up to date. */
#include "check-tap.h"

#include "event-change.h"

static const struct event_presence absent = { .present = false };
static const struct event_presence a_by_1 = { .present = true, .fields = "u32 a", .owner = 1 };
static const struct event_presence a_by_2 = { .present = true, .fields = "u32 a", .owner = 2 };
static const struct event_presence b_by_1 = { .present = true, .fields = "u64 b", .owner = 1 };

START_TEST(test_unchanged_absent) {
        ck_assert_uint_eq(event_change_signals(&absent, &absent), 0);
}
END_TEST

START_TEST(test_added) {
        ck_assert_uint_eq(event_change_signals(&absent, &a_by_1), EVENT_SIGNAL_ADDED);
}
END_TEST

START_TEST(test_removed) {
        ck_assert_uint_eq(event_change_signals(&a_by_1, &absent), EVENT_SIGNAL_REMOVED);
}
END_TEST

START_TEST(test_recreated_the_same_is_silent) {
        struct event_presence same = { .present = true, .fields = "u32 a", .owner = 1 };

        /* Different storage, equal text: deleted and created again. */
        ck_assert_uint_eq(event_change_signals(&a_by_1, &same), 0);
}
END_TEST

START_TEST(test_recreated_otherwise) {
        ck_assert_uint_eq(event_change_signals(&a_by_1, &b_by_1), EVENT_SIGNAL_REMOVED | EVENT_SIGNAL_ADDED);
        ck_assert_uint_eq(event_change_signals(&a_by_1, &a_by_2), EVENT_SIGNAL_REMOVED | EVENT_SIGNAL_ADDED);
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-change");
        TCase *tc = tcase_create("event-change");

        tcase_add_test(tc, test_unchanged_absent);
        tcase_add_test(tc, test_added);
        tcase_add_test(tc, test_removed);
        tcase_add_test(tc, test_recreated_the_same_is_silent);
        tcase_add_test(tc, test_recreated_otherwise);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
