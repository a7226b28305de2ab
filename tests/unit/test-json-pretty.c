/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "check-tap.h"
#include "json-pretty.h"

static char *pretty(const char *json) {
        struct strbuf sb = STRBUF_INIT;

        json_append_pretty(&sb, json);
        return strbuf_steal(&sb);
}

START_TEST(test_nested) {
        char *s = pretty("[{\"name\":\"a\",\"n\":1,\"ok\":true,\"f\":{\"x\":null}},{\"e\":[]}]");

        ck_assert_str_eq(s,
                         "[\n"
                         "  {\n"
                         "    \"name\": \"a\",\n"
                         "    \"n\": 1,\n"
                         "    \"ok\": true,\n"
                         "    \"f\": {\n"
                         "      \"x\": null\n"
                         "    }\n"
                         "  },\n"
                         "  {\n"
                         "    \"e\": []\n"
                         "  }\n"
                         "]");
        free(s);
}
END_TEST

START_TEST(test_strings_untouched) {
        /* Structural characters and escaped quotes inside strings. */
        char *s = pretty("{\"a,b\":\"x\\\"}{[:\",\"c\":\"\\\\\"}");

        ck_assert_str_eq(s, "{\n  \"a,b\": \"x\\\"}{[:\",\n  \"c\": \"\\\\\"\n}");
        free(s);
}
END_TEST

START_TEST(test_empty_and_whitespace) {
        char *s = pretty(" [ ] ");

        ck_assert_str_eq(s, "[]");
        free(s);
        s = pretty("{}");
        ck_assert_str_eq(s, "{}");
        free(s);
        s = pretty("[\n {\"a\":1},\n {\"b\":2}\n]\n");
        ck_assert_str_eq(s, "[\n  {\n    \"a\": 1\n  },\n  {\n    \"b\": 2\n  }\n]");
        free(s);
}
END_TEST

START_TEST(test_truncated_input_is_bounded) {
        /* Not our writers' output, but it must not read past the end. */
        char *s = pretty("{\"a\":\"unterminated\\");

        ck_assert_str_eq(s, "{\n  \"a\": \"unterminated\\");
        free(s);
        s = pretty("]]}");
        ck_assert_ptr_nonnull(s);
        free(s);
}
END_TEST

int main(void) {
        Suite *s = suite_create("json-pretty");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_nested);
        tcase_add_test(tc, test_strings_untouched);
        tcase_add_test(tc, test_empty_and_whitespace);
        tcase_add_test(tc, test_truncated_input_is_bounded);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
