/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check-tap.h"
#include "strbuf.h"

START_TEST(test_steal_empty_is_terminated) {
        struct strbuf sb = STRBUF_INIT;
        char *s = strbuf_steal(&sb);

        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(s, "");
        ck_assert_ptr_null(sb.buf);
        free(s);
}
END_TEST

START_TEST(test_append_and_printf) {
        struct strbuf sb = STRBUF_INIT;
        char *s;

        strbuf_append(&sb, "u:");
        strbuf_append_n(&sb, "name-ignored", 4);
        strbuf_append_c(&sb, ' ');
        strbuf_printf(&sb, "%s %u", "u32", 7u);
        ck_assert_uint_eq(sb.len, 12);
        s = strbuf_steal(&sb);
        ck_assert_str_eq(s, "u:name u32 7");
        free(s);
}
END_TEST

START_TEST(test_growth_keeps_content) {
        struct strbuf sb = STRBUF_INIT;
        char *s;

        for (int i = 0; i < 10000; i++)
                strbuf_printf(&sb, "%04d", i % 10000);
        ck_assert_uint_eq(sb.len, 40000);
        s = strbuf_steal(&sb);
        ck_assert_int_eq(strncmp(s, "000000010002", 12), 0);
        ck_assert_str_eq(s + 39996, "9999");
        free(s);
}
END_TEST

/* Each printf that does not fit the room left is formatted again after
 * growing: the text must be whole, and what came before it untouched. */
START_TEST(test_printf_past_the_room) {
        struct strbuf sb = STRBUF_INIT;
        char big[300];
        char *s;

        memset(big, 'b', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        strbuf_append(&sb, "head ");
        ck_assert_uint_lt(sb.cap, sizeof(big));
        strbuf_printf(&sb, "[%s]", big);
        strbuf_printf(&sb, "%d", 42);
        ck_assert_uint_eq(sb.len, 5 + 1 + 299 + 1 + 2);
        s = strbuf_steal(&sb);
        ck_assert_int_eq(strncmp(s, "head [bbb", 9), 0);
        ck_assert_str_eq(s + 5 + 1 + 299, "]42");
        free(s);
}
END_TEST

START_TEST(test_append_integers) {
        static const struct {
                int64_t i;
                const char *text;
        } signed_cases[] = {
                { 0, "0" }, { 7, "7" }, { -1, "-1" }, { 1234567890, "1234567890" },
                { INT64_MAX, "9223372036854775807" }, { INT64_MIN, "-9223372036854775808" },
        };
        struct strbuf sb = STRBUF_INIT;

        for (size_t i = 0; i < sizeof(signed_cases) / sizeof(signed_cases[0]); i++) {
                sb.len = 0;
                strbuf_append_i64(&sb, signed_cases[i].i);
                ck_assert_str_eq(sb.buf, signed_cases[i].text);
        }
        sb.len = 0;
        strbuf_append_u64(&sb, UINT64_MAX);
        strbuf_append_c(&sb, ' ');
        strbuf_append_u64(&sb, 0);
        strbuf_append_c(&sb, ' ');
        strbuf_append_u64(&sb, 10);
        ck_assert_str_eq(sb.buf, "18446744073709551615 0 10");
        strbuf_done(&sb);
}
END_TEST

START_TEST(test_done_releases) {
        struct strbuf sb = STRBUF_INIT;

        strbuf_append(&sb, "x");
        strbuf_done(&sb);
        ck_assert_ptr_null(sb.buf);
        ck_assert_uint_eq(sb.len, 0);
}
END_TEST

int main(void) {
        Suite *s = suite_create("strbuf");
        TCase *tc = tcase_create("strbuf");

        tcase_add_test(tc, test_steal_empty_is_terminated);
        tcase_add_test(tc, test_append_and_printf);
        tcase_add_test(tc, test_growth_keeps_content);
        tcase_add_test(tc, test_printf_past_the_room);
        tcase_add_test(tc, test_append_integers);
        tcase_add_test(tc, test_done_releases);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
