/* SPDX-License-Identifier: LGPL-2.1-or-later */
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
        tcase_add_test(tc, test_done_releases);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
