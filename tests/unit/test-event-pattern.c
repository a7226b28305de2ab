/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/shared/events/event-pattern.c: which patterns are accepted, what they match. */
#include <errno.h>
#include <string.h>

#include "check-tap.h"
#include "event-pattern.h"

static void assert_invalid(const char *pattern, const char *message_part) {
        struct event_error error = { 0 };

        ck_assert_int_eq(event_pattern_validate(pattern, &error), -EINVAL);
        ck_assert_msg(strstr(error.message, message_part), "'%s': message '%s' lacks '%s'", pattern, error.message,
                      message_part);
}

START_TEST(test_valid) {
        static const char *const valid[] = {
                "app_ev", "app_*", "*", "?x", "a[bc]d", "a[!b]*", "a[^b]", "x-y_z9", "[a-c]*",
        };

        for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++)
                ck_assert_msg(event_pattern_validate(valid[i], NULL) == 0, "'%s' refused", valid[i]);
}
END_TEST

START_TEST(test_invalid) {
        char longest[EVENT_PATTERN_MAX + 2];

        assert_invalid("", "empty");
        assert_invalid("a b", "column 2: byte 0x20");
        assert_invalid("a\\*", "column 2: '\\'");
        assert_invalid("a[bc", "without its ']'");
        assert_invalid("a]", "column 2: ']'");
        assert_invalid("a!", "column 2: '!'");
        assert_invalid("a\x1b", "byte 0x1b");
        assert_invalid("a\xff", "byte 0xff");
        memset(longest, 'a', sizeof(longest) - 1);
        longest[sizeof(longest) - 1] = '\0';
        assert_invalid(longest, "longer than 255");
        longest[sizeof(longest) - 2] = '\0';
        ck_assert_int_eq(event_pattern_validate(longest, NULL), 0);
}
END_TEST

START_TEST(test_match) {
        static const char *const p[] = { "app_*", "db_[rw]?" };

        ck_assert(event_patterns_match(p, 2, "app_start"));
        ck_assert(event_patterns_match(p, 2, "app_"));
        ck_assert(event_patterns_match(p, 2, "db_rx"));
        ck_assert(!event_patterns_match(p, 2, "db_x1"));
        ck_assert(!event_patterns_match(p, 2, "xapp_start"));
        ck_assert(!event_patterns_match(p, 0, "app_start"));
        ck_assert(event_pattern_is_glob("a*"));
        ck_assert(event_pattern_is_glob("a[b]"));
        ck_assert(!event_pattern_is_glob("plain_name"));
}
END_TEST

START_TEST(test_copy) {
        const char *const p[] = { "app_*", "db_?x" };
        char **copy = event_patterns_copy(p, 2);

        ck_assert_ptr_nonnull(copy);
        ck_assert_ptr_ne(copy[0], p[0]);
        ck_assert_str_eq(copy[0], "app_*");
        ck_assert_str_eq(copy[1], "db_?x");
        ck_assert(event_patterns_match((const char *const *) copy, 2, "db_rx"));
        ck_assert_ptr_null(event_patterns_free(copy, 2));
        ck_assert_ptr_null(event_patterns_copy(p, 0));
        ck_assert_ptr_null(event_patterns_free(NULL, 0));
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-pattern");
        TCase *tc = tcase_create("event-pattern");

        tcase_add_test(tc, test_valid);
        tcase_add_test(tc, test_invalid);
        tcase_add_test(tc, test_match);
        tcase_add_test(tc, test_copy);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
