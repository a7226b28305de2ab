/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* text_escape_append(): each class of byte, in both styles (text-escape.h). */
#include "check-tap.h"

#include <string.h>

#include "json-string.h"
#include "text-escape.h"

static void check_escape(const char *in, size_t n, const char *terminal, const char *json) {
        struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
        char *ts, *js;

        text_escape_append(&t, in, n, TEXT_ESCAPE_TERMINAL);
        text_escape_append(&j, in, n, TEXT_ESCAPE_JSON);
        ts = strbuf_steal(&t);
        js = strbuf_steal(&j);
        ck_assert_ptr_nonnull(ts);
        ck_assert_ptr_nonnull(js);
        ck_assert_str_eq(ts, terminal);
        ck_assert_str_eq(js, json);
        free(ts);
        free(js);
}

#define CHECK_ESCAPE(in, terminal, json) check_escape(in, sizeof(in) - 1, terminal, json)

START_TEST(test_printable_ascii) {
        CHECK_ESCAPE("hello, world ~!", "hello, world ~!", "hello, world ~!");
        CHECK_ESCAPE("", "", "");
}
END_TEST

START_TEST(test_backslash_and_quote) {
        CHECK_ESCAPE("a\\b\"c", "a\\\\b\"c", "a\\\\b\\\"c");
}
END_TEST

START_TEST(test_c0_controls) {
        CHECK_ESCAPE("\x1b[2J\n\r\t", "\\x1b[2J\\x0a\\x0d\\x09", "\\u001b[2J\\n\\r\\t");
        /* NUL inside the span is a byte like any other. */
        check_escape("a\0b", 3, "a\\x00b", "a\\u0000b");
        CHECK_ESCAPE("\x1f\x01", "\\x1f\\x01", "\\u001f\\u0001");
}
END_TEST

START_TEST(test_del) {
        CHECK_ESCAPE("\x7f", "\\x7f", "\\u007f");
}
END_TEST

START_TEST(test_c1_controls) {
        /* U+0080, U+009B (CSI), U+009F: two-byte UTF-8 C2 80..C2 9F. */
        CHECK_ESCAPE("\xc2\x80\xc2\x9b[31m\xc2\x9f", "\\u{80}\\u{9b}[31m\\u{9f}", "\\u0080\\u009b[31m\\u009f");
        /* U+00A0 is the first character after them: kept. */
        CHECK_ESCAPE("\xc2\xa0", "\xc2\xa0", "\xc2\xa0");
}
END_TEST

START_TEST(test_bidi_controls) {
        CHECK_ESCAPE("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae",
                     "\\u{202a}\\u{202b}\\u{202c}\\u{202d}\\u{202e}", "\\u202a\\u202b\\u202c\\u202d\\u202e");
        CHECK_ESCAPE("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\\u{2066}\\u{2067}\\u{2068}\\u{2069}",
                     "\\u2066\\u2067\\u2068\\u2069");
        /* The marks: U+200E, U+200F, U+061C. */
        CHECK_ESCAPE("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u{200e}\\u{200f}\\u{61c}", "\\u200e\\u200f\\u061c");
        /* Neighbours are ordinary characters: U+2029, U+202F, U+2065 (unassigned), U+206A. */
        CHECK_ESCAPE("\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa", "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa",
                     "\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa");
}
END_TEST

START_TEST(test_valid_utf8_kept) {
        /* é, €, 😀 (four bytes). */
        CHECK_ESCAPE("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
                     "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
}
END_TEST

START_TEST(test_invalid_utf8) {
        /* Bytes that never start a sequence. */
        CHECK_ESCAPE("\xff\xfe", "\\xff\\xfe", "\\udcff\\udcfe");
        /* A stray continuation byte. */
        CHECK_ESCAPE("a\x80z", "a\\x80z", "a\\udc80z");
        /* Truncated: a lead byte at the end, and one followed by ASCII. */
        CHECK_ESCAPE("\xe2\x80", "\\xe2\\x80", "\\udce2\\udc80");
        CHECK_ESCAPE("\xc3x", "\\xc3x", "\\udcc3x");
        /* Overlong '/' (C0 AF) and overlong U+0000 (E0 80 80). */
        CHECK_ESCAPE("\xc0\xaf", "\\xc0\\xaf", "\\udcc0\\udcaf");
        CHECK_ESCAPE("\xe0\x80\x80", "\\xe0\\x80\\x80", "\\udce0\\udc80\\udc80");
        /* An encoded surrogate (U+D800) and a code point above U+10FFFF. */
        CHECK_ESCAPE("\xed\xa0\x80", "\\xed\\xa0\\x80", "\\udced\\udca0\\udc80");
        CHECK_ESCAPE("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80", "\\udcf4\\udc90\\udc80\\udc80");
}
END_TEST

START_TEST(test_json_string_quotes) {
        struct strbuf sb = STRBUF_INIT;
        char *s;

        json_append_string(&sb, "x\xc2\x9b\xff", 4);
        s = strbuf_steal(&sb);
        ck_assert_str_eq(s, "\"x\\u009b\\udcff\"");
        free(s);
}
END_TEST

static Suite *text_escape_suite(void) {
        Suite *s = suite_create("text-escape");
        TCase *tc = tcase_create("classes");

        tcase_add_test(tc, test_printable_ascii);
        tcase_add_test(tc, test_backslash_and_quote);
        tcase_add_test(tc, test_c0_controls);
        tcase_add_test(tc, test_del);
        tcase_add_test(tc, test_c1_controls);
        tcase_add_test(tc, test_bidi_controls);
        tcase_add_test(tc, test_valid_utf8_kept);
        tcase_add_test(tc, test_invalid_utf8);
        tcase_add_test(tc, test_json_string_quotes);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(text_escape_suite());
}
