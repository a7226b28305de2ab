/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The status file's text form (org.uebroker1(5), GetStatus). */
#include "check-tap.h"
#include "event-def-assert.h"
#include "status-text.h"

#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* One entry "1:test" with each status byte. */
static const struct {
        uint8_t status;
        const char *text;
} single_cases[] = {
        { 0, "1:test\n\nActive: 1\nBusy: 0\nMax: 4096\n" },
        { EVENT_STATUS_FTRACE, "1:test # Used by ftrace\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_PERF, "1:test # Used by perf\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_OTHER, "1:test # Used by other\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_FTRACE | EVENT_STATUS_PERF, "1:test # Used by ftrace perf\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_FTRACE | EVENT_STATUS_OTHER,
          "1:test # Used by ftrace other\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_PERF | EVENT_STATUS_OTHER, "1:test # Used by perf other\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { EVENT_STATUS_FTRACE | EVENT_STATUS_PERF | EVENT_STATUS_OTHER,
          "1:test # Used by ftrace perf other\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        /* Bits without a name still count as busy, as in the original. */
        { 1u << 2, "1:test # Used by\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
        { 0xff, "1:test # Used by ftrace perf other\n\nActive: 1\nBusy: 1\nMax: 4096\n" },
};

START_TEST(test_single) {
        const struct status_entry e = { .index = 1, .name = "test", .status = single_cases[_i].status };
        _cleanup_free_ char *text = status_text(&e, 1, STATUS_MAX_EVENTS);

        ck_assert_ptr_nonnull(text);
        ck_assert_str_eq(text, single_cases[_i].text);
}
END_TEST

START_TEST(test_bits) {
        ck_assert_uint_eq(EVENT_STATUS_FTRACE, 1);
        ck_assert_uint_eq(EVENT_STATUS_PERF, 2);
        ck_assert_uint_eq(EVENT_STATUS_OTHER, 128);
        ck_assert_uint_eq(STATUS_PAGE_SIZE, 4096);
        ck_assert_uint_eq(STATUS_INDEX_MAX, 4095);
        ck_assert_uint_eq(STATUS_MAX_EVENTS, 4096);
}
END_TEST

START_TEST(test_empty) {
        _cleanup_free_ char *text = status_text(NULL, 0, STATUS_MAX_EVENTS);
        _cleanup_free_ char *zero = status_text(NULL, 0, 0);

        ck_assert_str_eq(text, "\nActive: 0\nBusy: 0\nMax: 4096\n");
        ck_assert_str_eq(zero, "\nActive: 0\nBusy: 0\nMax: 0\n");
}
END_TEST

START_TEST(test_several_in_order) {
        const struct status_entry e[] = {
                { .index = 3, .name = "c", .status = 0 },
                { .index = 1, .name = "a-b_c", .status = EVENT_STATUS_PERF },
                { .index = 4095, .name = "last", .status = 0 },
                { .index = 2, .name = "x", .status = EVENT_STATUS_FTRACE | EVENT_STATUS_OTHER },
        };
        _cleanup_free_ char *text = status_text(e, ARRAY_SIZE(e), 10);

        ck_assert_str_eq(text, "3:c\n"
                               "1:a-b_c # Used by perf\n"
                               "4095:last\n"
                               "2:x # Used by ftrace other\n"
                               "\n"
                               "Active: 4\n"
                               "Busy: 2\n"
                               "Max: 10\n");
}
END_TEST

START_TEST(test_max_value) {
        const struct status_entry e = { .index = 7, .name = "e", .status = 0 };
        _cleanup_free_ char *big = status_text(&e, 1, UINT32_MAX);
        _cleanup_free_ char *one = status_text(&e, 1, 1);

        ck_assert_str_eq(big, "7:e\n\nActive: 1\nBusy: 0\nMax: 4294967295\n");
        ck_assert_str_eq(one, "7:e\n\nActive: 1\nBusy: 0\nMax: 1\n");
}
END_TEST

START_TEST(test_full_page) {
        /* 4095 events with 255-byte names: a large text, every line right. */
        static struct status_entry e[STATUS_INDEX_MAX];
        static char names[STATUS_INDEX_MAX][EVENT_NAME_MAX + 1];
        _cleanup_free_ char *text = NULL;
        const char *line;
        size_t busy = 0;

        for (size_t i = 0; i < STATUS_INDEX_MAX; i++) {
                memset(names[i], 'a' + (char) (i % 26), EVENT_NAME_MAX);
                names[i][EVENT_NAME_MAX] = '\0';
                e[i] = (struct status_entry) { .index = (uint32_t) i + 1, .name = names[i], .status = (uint8_t) i };
                busy += (uint8_t) i != 0;
        }
        text = status_text(e, STATUS_INDEX_MAX, STATUS_MAX_EVENTS);
        ck_assert_ptr_nonnull(text);

        line = text;
        for (size_t i = 0; i < STATUS_INDEX_MAX; i++) {
                char prefix[16];
                int n = snprintf(prefix, sizeof(prefix), "%zu:", i + 1);

                ck_assert(strncmp(line, prefix, (size_t) n) == 0);
                ck_assert(strncmp(line + n, names[i], EVENT_NAME_MAX) == 0);
                ck_assert_int_eq(line[n + EVENT_NAME_MAX], (uint8_t) i ? ' ' : '\n');
                line = strchr(line, '\n') + 1;
        }
        ck_assert_uint_eq(busy, 4095 - 16); /* i % 256 == 0 sixteen times */
        ck_assert_str_eq(line, "\nActive: 4095\nBusy: 4079\nMax: 4096\n");
}
END_TEST

int main(void) {
        Suite *s = suite_create("status-text");
        TCase *tc = tcase_create("status-text");

        tcase_add_loop_test(tc, test_single, 0, ARRAY_SIZE(single_cases));
        tcase_add_test(tc, test_bits);
        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_several_in_order);
        tcase_add_test(tc, test_max_value);
        tcase_add_test(tc, test_full_page);
        suite_add_tcase(s, tc);

        return check_tap_run(s);
}
