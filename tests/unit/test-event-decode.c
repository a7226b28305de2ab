/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The payload decoder: ftrace-like text and JSON (src/shared/events/event-decode.h).
 * Payloads are what follows the u32 write index; __data_loc offsets count
 * from the record start, i.e. payload offset + 8. */
#include "check-tap.h"
#include "event-def-assert.h"

#include <stdint.h>

#include "event-decode.h"

static void put(uint8_t *payload, size_t at, const void *v, size_t n) {
        memcpy(payload + at, v, n);
}

static void put_u32(uint8_t *payload, size_t at, uint32_t v) {
        put(payload, at, &v, sizeof(v));
}

/* Decodes and compares both renderings; frees what it made. */
static void check_decode(const struct event_def *ev, const void *payload, size_t len, const char *text,
                         const char *json) {
        struct strbuf t = STRBUF_INIT, j = STRBUF_INIT;
        char *ts, *js;

        ck_assert_int_eq(event_decode_text(ev, payload, len, &t), 0);
        ck_assert_int_eq(event_decode_json(ev, payload, len, &j), 0);
        ts = strbuf_steal(&t);
        js = strbuf_steal(&j);
        ck_assert_ptr_nonnull(ts);
        ck_assert_ptr_nonnull(js);
        ck_assert_str_eq(ts, text);
        ck_assert_str_eq(js, json);
        free(ts);
        free(js);
}

START_TEST(test_scalars) {
        _cleanup_event_def_ struct event_def *ev =
                parse_ok("e u8 a; s8 b; u16 c; s16 d; u32 e; s32 f; u64 g; s64 h; char i; int j", 0);
        uint8_t p[64] = {};
        uint8_t u8 = 255;
        int8_t s8 = -1;
        uint16_t u16 = 65535;
        int16_t s16 = -32768;
        uint32_t u32 = 4294967295u;
        int32_t s32 = -2147483647 - 1;
        uint64_t u64 = UINT64_MAX;
        int64_t s64 = INT64_MIN;
        int8_t ch = -5;
        int32_t i32 = 42;

        put(p, 0, &u8, 1);
        put(p, 1, &s8, 1);
        put(p, 2, &u16, 2);
        put(p, 4, &s16, 2);
        put(p, 6, &u32, 4);
        put(p, 10, &s32, 4);
        put(p, 14, &u64, 8);
        put(p, 22, &s64, 8);
        put(p, 30, &ch, 1);
        put(p, 31, &i32, 4);
        ck_assert_uint_eq(ev->min_size, 35);

        check_decode(ev, p, 35,
                     "a=255 b=-1 c=65535 d=-32768 e=4294967295 f=-2147483648 g=18446744073709551615 "
                     "h=-9223372036854775808 i=-5 j=42",
                     "{\"a\":255,\"b\":-1,\"c\":65535,\"d\":-32768,\"e\":4294967295,\"f\":-2147483648,"
                     "\"g\":18446744073709551615,\"h\":-9223372036854775808,\"i\":-5,\"j\":42}");
}
END_TEST

START_TEST(test_char_arrays) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 a; char[8] b; unsigned char[4] c", 0);
        uint8_t p[16] = {};

        put_u32(p, 0, 1);
        put(p, 4, "hello\0zz", 8);      /* stops at the first NUL */
        put(p, 12, "full", 4);          /* no NUL: all N bytes */
        check_decode(ev, p, 16, "a=1 b=hello c=full", "{\"a\":1,\"b\":\"hello\",\"c\":\"full\"}");

        /* Empty string. */
        memset(p + 4, 0, 8);
        check_decode(ev, p, 16, "a=1 b= c=full", "{\"a\":1,\"b\":\"\",\"c\":\"full\"}");
}
END_TEST

START_TEST(test_escaping) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e char[16] s", 0);
        uint8_t p[16] = {};

        put(p, 0, "a\"b\\c\n\x01\x7f", 9);
        check_decode(ev, p, 16, "s=a\"b\\\\c\\x0a\\x01\\x7f", "{\"s\":\"a\\\"b\\\\c\\n\\u0001\\u007f\"}");

        /* Valid UTF-8 stays; a stray byte, a C1 control and a bidi override
         * are escaped (text-escape.h). */
        memset(p, 0, sizeof(p));
        put(p, 0, "\xc3\xa9-\xff\xc2\x9b\xe2\x80\xae", 9);
        check_decode(ev, p, 16, "s=\xc3\xa9-\\xff\\u{9b}\\u{202e}",
                     "{\"s\":\"\xc3\xa9-\\udcff\\u009b\\u202e\"}");
}
END_TEST

START_TEST(test_data_loc) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("hello_tick u32 count; __data_loc char[] msg", 0);
        uint8_t p[32] = {};

        /* count, then loc at payload 4, string at payload 8 = record 16. */
        put_u32(p, 0, 7);
        put_u32(p, 4, 6u << 16 | 16u);
        put(p, 8, "hello", 6);
        check_decode(ev, p, 14, "count=7 msg=hello", "{\"count\":7,\"msg\":\"hello\"}");
}
END_TEST

START_TEST(test_rel_loc) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __rel_loc char[] s; u16 n", 0);
        uint8_t p[32] = {};

        /* rel offset counts from the end of the 4-byte field: payload 4,
         * after the u16 at 4..5 the string starts at 6, i.e. rel 2. */
        put_u32(p, 0, 3u << 16 | 2u);
        p[4] = 9;
        put(p, 6, "hi", 3);
        check_decode(ev, p, 9, "s=hi n=9", "{\"s\":\"hi\",\"n\":9}");
}
END_TEST

START_TEST(test_binary_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e struct pt xy 3; __data_loc u8[] raw", 0);
        uint8_t p[16] = { 0x0a, 0xff, 0x00 };

        /* raw: 2 bytes at payload 7 = record 15. */
        put_u32(p, 3, 2u << 16 | 15u);
        p[7] = 0xde;
        p[8] = 0xad;
        check_decode(ev, p, 9, "xy=0x0aff00 raw=0xdead", "{\"xy\":\"0aff00\",\"raw\":\"dead\"}");
}
END_TEST

START_TEST(test_no_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e", 0);

        check_decode(ev, "", 0, "", "{}");
        check_decode(ev, "extra", 5, "", "{}");
}
END_TEST

START_TEST(test_invalid_payloads) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 a; __data_loc char[] s", 0);
        struct strbuf sb = STRBUF_INIT;
        uint8_t p[16] = {};

        strbuf_append(&sb, "keep");
        /* Too short. */
        ck_assert_int_eq(event_decode_text(ev, p, 7, &sb), -EINVAL);
        ck_assert_int_eq(event_decode_json(ev, p, 7, &sb), -EINVAL);
        /* Dynamic field pointing outside. */
        put_u32(p, 4, 100u << 16 | 16u);
        ck_assert_int_eq(event_decode_text(ev, p, 16, &sb), -EFAULT);
        /* Not NUL-terminated. */
        put_u32(p, 4, 2u << 16 | 16u);
        p[8] = 'a';
        p[9] = 'b';
        ck_assert_int_eq(event_decode_json(ev, p, 16, &sb), -EFAULT);
        ck_assert_str_eq(sb.buf, "keep");
        strbuf_done(&sb);
}
END_TEST

START_TEST(test_hex) {
        struct strbuf sb = STRBUF_INIT;
        char *s;

        event_decode_hex(&sb, "\x00\x01\xab\xff", 4);
        s = strbuf_steal(&sb);
        ck_assert_str_eq(s, "0001abff");
        free(s);
}
END_TEST

static Suite *decode_suite(void) {
        Suite *s = suite_create("event-decode");
        TCase *tc = tcase_create("decode");

        tcase_add_test(tc, test_scalars);
        tcase_add_test(tc, test_char_arrays);
        tcase_add_test(tc, test_escaping);
        tcase_add_test(tc, test_data_loc);
        tcase_add_test(tc, test_rel_loc);
        tcase_add_test(tc, test_binary_fields);
        tcase_add_test(tc, test_no_fields);
        tcase_add_test(tc, test_invalid_payloads);
        tcase_add_test(tc, test_hex);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(decode_suite());
}
