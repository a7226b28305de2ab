/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Payloads from typed values and from "field=value" text
 * (src/shared/events/event-encode.h), checked by their exact bytes, by the
 * validator and by decoding them back; refusals by code and message. */
#include "check-tap.h"
#include "event-def-assert.h"

#include <stdint.h>

#include "event-decode.h"
#include "event-encode.h"

/* Encodes @argv for @command and returns the decoded text (malloc()ed). */
static char *round_trip(const char *command, char **argv, size_t n) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(command, 0);
        struct strbuf sb = STRBUF_INIT;
        struct event_error error = { 0 };
        void *payload = NULL;
        size_t len = 0;
        int r;

        r = event_encode_payload(ev, argv, n, &payload, &len, &error);
        ck_assert_msg(r == 0, "encoding failed: %s", error.message);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, len), 0);
        ck_assert_int_eq(event_decode_text(ev, payload, len, &sb), 0);
        free(payload);
        return strbuf_steal(&sb);
}

static void check_refused(const char *command, char **argv, size_t n, const char *needle) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(command, 0);
        struct event_error error = { 0 };
        void *payload = (void *) 1;
        size_t len = 12345;

        ck_assert_int_eq(event_encode_payload(ev, argv, n, &payload, &len, &error), -EINVAL);
        ck_assert_ptr_eq(payload, (void *) 1);
        ck_assert_uint_eq(len, 12345);
        ck_assert_msg(strstr(error.message, needle), "'%s' lacks '%s'", error.message, needle);
}

START_TEST(test_round_trip) {
        char *a[] = { "a=1", "b=hello", "s=-3", "msg=hi there", "big=0xffffffffffffffff" };
        _cleanup_free_ char *t =
                round_trip("e u32 a; char[8] b; s16 s; __data_loc char[] msg; u64 big", a, 5);

        ck_assert_str_eq(t, "a=1 b=hello s=-3 msg=hi there big=18446744073709551615");
}
END_TEST

START_TEST(test_defaults_and_rel_loc) {
        char *a[] = { "z=zz" };
        _cleanup_free_ char *t = round_trip("e __rel_loc char[] r; u8 n; __data_loc char[] d; __rel_loc char[] z", a, 1);

        ck_assert_str_eq(t, "r= n=0 d= z=zz");
}
END_TEST

START_TEST(test_hex_fields) {
        char *a[] = { "p=0a0b", "raw=0xdeadbeef" };
        _cleanup_free_ char *t = round_trip("e struct pt p 4; __data_loc u8[] raw", a, 2);

        ck_assert_str_eq(t, "p=0x0a0b0000 raw=0xdeadbeef");
}
END_TEST

START_TEST(test_exact_bytes) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u16 a; __data_loc char[] s", 0);
        char *a[] = { "s=ab", "a=258" };
        const uint8_t expect[] = { 0x02, 0x01, 14, 0, 3, 0, 'a', 'b', 0 };
        void *payload = NULL;
        size_t len = 0;

        ck_assert_int_eq(event_encode_payload(ev, a, 2, &payload, &len, NULL), 0);
        ck_assert_uint_eq(len, sizeof(expect));
        ck_assert_mem_eq(payload, expect, sizeof(expect));
        free(payload);
}
END_TEST

START_TEST(test_refusals) {
        char *range[] = { "a=256" }, *neg[] = { "a=-1" }, *snum[] = { "s=-129" }, *text[] = { "a=x1" },
             *unknown[] = { "q=1" }, *twice[] = { "a=1", "a=2" }, *noeq[] = { "a" }, *longs[] = { "b=123456789" },
             *odd[] = { "p=abc" }, *big[] = { "p=0102030405" }, *empty[] = { "a=" };

        check_refused("e u8 a", range, 1, "outside 0..255");
        check_refused("e u8 a", neg, 1, "negative");
        check_refused("e s8 s", snum, 1, "outside -128..127");
        check_refused("e u8 a", text, 1, "not an integer");
        check_refused("e u8 a", unknown, 1, "no field 'q'");
        check_refused("e u8 a", twice, 2, "twice");
        check_refused("e u8 a", noeq, 1, "FIELD=VALUE");
        check_refused("e char[8] b", longs, 1, "b: 9 bytes do not fit in char[8]");
        check_refused("e struct t p 4", odd, 1, "pairs");
        check_refused("e struct t p 4", big, 1, "5 bytes do not fit in 4");
        check_refused("e u8 a", empty, 1, "empty");
}
END_TEST


/* Typed values: every kind of field, the exact bytes. */
START_TEST(test_typed_exact_bytes) {
        _cleanup_event_def_ struct event_def *ev =
                parse_ok("e u8 a; s16 b; char[4] c; struct pt p 3; __data_loc char[] s; __rel_loc char[] r; "
                         "__data_loc u16[] w; int i",
                         0);
        const uint16_t w[] = { 0x0102, 0x0304 };
        const uint8_t pt[] = { 0xaa, 0xbb, 0xcc };
        const struct ueb_value v[] = {
                ueb_value_u8(0xfe), ueb_value_s16(-2),           ueb_value_string("xy"),
                ueb_value_bytes(pt, 3), ueb_value_string("str"), ueb_value_string_n("rel!!", 3),
                ueb_value_bytes(w, 4),  ueb_value_s32(-1),
        };
        /* Fixed part: a(1) b(2) c(4) p(3) s(4) r(4) w(4) i(4) = 26 bytes;
         * then "str\0" at 26, "rel\0" at 30, w at 34. */
        const uint8_t expect[] = {
                0xfe, 0xfe, 0xff, 'x', 'y', 0, 0, 0xaa, 0xbb, 0xcc,
                26 + 8, 0, 4, 0,                /* __data_loc: offset from the record start */
                30 - 18, 0, 4, 0,               /* __rel_loc: from the end of the field (14 + 4) */
                34 + 8, 0, 4, 0,                /* __data_loc u16[]: 4 bytes */
                0xff, 0xff, 0xff, 0xff,
                's', 't', 'r', 0, 'r', 'e', 'l', 0, 0x02, 0x01, 0x04, 0x03,
        };
        struct strbuf sb = STRBUF_INIT;
        void *payload = NULL;
        size_t len = 0;

        ck_assert_int_eq(event_encode_values_alloc(ev, v, 8, &payload, &len, NULL), 0);
        ck_assert_uint_eq(len, sizeof(expect));
        ck_assert_mem_eq(payload, expect, sizeof(expect));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, len), 0);
        ck_assert_int_eq(event_decode_text(ev, payload, len, &sb), 0);
        ck_assert_str_eq(sb.buf, "a=254 b=-2 c=xy p=0xaabbcc s=str r=rel w=0x02010403 i=-1");
        strbuf_done(&sb);
        free(payload);
}
END_TEST

/* The layout without allocation: the fixed part and the spans that follow. */
START_TEST(test_typed_spans) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 n; __data_loc char[] s; __data_loc u8[] b", 0);
        struct event_encode_span spans[EVENT_DYNAMIC_FIELDS_MAX];
        const struct ueb_value v[] = { ueb_value_u32(7), ueb_value_string("hello"), ueb_value_bytes("\x01\x02", 2) };
        const uint8_t expect_fixed[] = { 7, 0, 0, 0, 20, 0, 6, 0, 26, 0, 2, 0 };
        uint8_t fixed[12];
        size_t n_spans = 0, len = 0;

        ck_assert_int_eq(event_encode_values(ev, v, 3, fixed, spans, &n_spans, &len, NULL), 0);
        ck_assert_mem_eq(fixed, expect_fixed, sizeof(fixed));
        ck_assert_uint_eq(n_spans, 2);
        ck_assert_ptr_eq(spans[0].data, v[1].p);
        ck_assert_uint_eq(spans[0].len, 5);
        ck_assert(spans[0].nul);
        ck_assert_uint_eq(spans[1].len, 2);
        ck_assert(!spans[1].nul);
        ck_assert_uint_eq(len, 12 + 6 + 2);
}
END_TEST

/* The text path and the typed path give the same bytes. */
START_TEST(test_typed_matches_text) {
        static const char command[] = "e u64 a; s8 b; char[6] c; __rel_loc char[] d; struct s e 2; __data_loc s32[] f";
        _cleanup_event_def_ struct event_def *ev = parse_ok(command, 0);
        char *text[] = { "a=0x1122334455667788", "b=-128", "c=abc", "d=dyn", "e=beef", "f=ffffffff01000000" };
        const int32_t f[] = { -1, 1 };
        const struct ueb_value v[] = {
                ueb_value_u64(0x1122334455667788ull), ueb_value_s8(-128), ueb_value_string("abc"),
                ueb_value_string("dyn"), ueb_value_bytes("\xbe\xef", 2), ueb_value_bytes(f, sizeof(f)),
        };
        void *a = NULL, *b = NULL;
        size_t alen = 0, blen = 0;

        ck_assert_int_eq(event_encode_payload(ev, text, 6, &a, &alen, NULL), 0);
        ck_assert_int_eq(event_encode_values_alloc(ev, v, 6, &b, &blen, NULL), 0);
        ck_assert_uint_eq(alen, blen);
        ck_assert_mem_eq(a, b, alen);
        free(a);
        free(b);
}
END_TEST

static void check_typed_refused(const char *command, const struct ueb_value *v, size_t n, int code,
                                const char *needle) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(command, 0);
        struct event_error error = { 0 };
        void *payload = (void *) 1;
        size_t len = 12345;

        ck_assert_int_eq(event_encode_values_alloc(ev, v, n, &payload, &len, &error), code);
        ck_assert_int_eq(error.code, code);
        ck_assert_ptr_eq(payload, (void *) 1);
        ck_assert_uint_eq(len, 12345);
        ck_assert_msg(strstr(error.message, needle), "'%s' lacks '%s'", error.message, needle);
        /* The same without a message. */
        ck_assert_int_eq(event_encode_values_alloc(ev, v, n, &payload, &len, NULL), code);
}

START_TEST(test_typed_refusals) {
        static char big[70000];
        const struct ueb_value one_u8[] = { ueb_value_u8(1) };
        const struct ueb_value u8_s8[] = { ueb_value_s8(1) };
        const struct ueb_value u32_for_u8[] = { ueb_value_u32(1) };
        const struct ueb_value string_for_u8[] = { ueb_value_string("1") };
        const struct ueb_value u32_for_string[] = { ueb_value_u32(1), ueb_value_u32(2) };
        const struct ueb_value bytes_for_string[] = { ueb_value_u32(1), ueb_value_bytes("a", 1) };
        const struct ueb_value long_chars[] = { ueb_value_string("123456789") };
        const struct ueb_value short_struct[] = { ueb_value_bytes("abc", 3) };
        const struct ueb_value string_struct[] = { ueb_value_string("abcd") };
        const struct ueb_value partial[] = { ueb_value_bytes("abc", 3) };
        const struct ueb_value string_array[] = { ueb_value_string("ab") };
        const struct ueb_value null_bytes[] = { ueb_value_bytes(NULL, 4) };
        const struct ueb_value hand_built[] = { { .type = UEB_TYPE_U8, .u = 256 } };
        const struct ueb_value hand_built_signed[] = { { .type = UEB_TYPE_S8, .s = -129 } };
        const struct ueb_value unknown[] = { { .type = 99, .u = 1 } };
        const struct ueb_value zero_type[] = { { .type = 0 } };
        struct ueb_value too_long[] = { ueb_value_string_n(big, sizeof(big)) };
        struct ueb_value sum_too_long[] = { ueb_value_string_n(big, 40000), ueb_value_string_n(big, 30000) };

        memset(big, 'x', sizeof(big));
        check_typed_refused("e u8 a", one_u8, 0, -EINVAL, "event e has 1 field, 0 values given");
        check_typed_refused("e u8 a", NULL, 1, -EINVAL, "1 value at NULL");
        check_typed_refused("e u8 a", (struct ueb_value[]) { ueb_value_u8(1), ueb_value_u8(2) }, 2, -EINVAL,
                            "1 field, 2 values");
        check_typed_refused("e u8 a", u8_s8, 1, -EINVAL, "field 1 (a): u8 takes u8, not s8");
        check_typed_refused("e int a", (struct ueb_value[]) { ueb_value_u32(1) }, 1, -EINVAL, "int takes s32, not u32");
        check_typed_refused("e u8 a", u32_for_u8, 1, -EINVAL, "takes u8, not u32");
        check_typed_refused("e u8 a", string_for_u8, 1, -EINVAL, "not a string");
        check_typed_refused("e u32 n; __data_loc char[] s", u32_for_string, 2, -EINVAL,
                            "field 2 (s): __data_loc char[] takes a string, not u32");
        check_typed_refused("e u32 n; __rel_loc char[] s", bytes_for_string, 2, -EINVAL, "takes a string, not bytes");
        check_typed_refused("e char[8] c", long_chars, 1, -EMSGSIZE, "9 bytes do not fit in char[8]");
        check_typed_refused("e struct t p 4", short_struct, 1, -EINVAL, "struct t is 4 bytes, not 3");
        check_typed_refused("e struct t p 4", string_struct, 1, -EINVAL, "takes bytes, not a string");
        check_typed_refused("e __data_loc u16[] w", partial, 1, -EINVAL, "3 bytes are not a whole number of 2-byte");
        check_typed_refused("e __data_loc u16[] w", string_array, 1, -EINVAL, "takes bytes, not a string");
        check_typed_refused("e __data_loc u8[] w", null_bytes, 1, -EINVAL, "4 bytes at NULL");
        check_typed_refused("e u8 a", hand_built, 1, -EINVAL, "outside u8");
        check_typed_refused("e s8 a", hand_built_signed, 1, -EINVAL, "outside s8");
        check_typed_refused("e u8 a", unknown, 1, -EINVAL, "not an unknown type");
        check_typed_refused("e char[4] a", zero_type, 1, -EINVAL, "not an unknown type");
        check_typed_refused("e __data_loc char[] s", too_long, 1, -EMSGSIZE, "longer than 65527 bytes");
        check_typed_refused("e __data_loc char[] s; __rel_loc char[] t", sum_too_long, 2, -EMSGSIZE,
                            "field 2 (t): 30001 bytes make the payload longer");
}
END_TEST

/* Edges that are fine: empty strings and arrays, NULL with no bytes, the
 * extreme integers, a string filling char[N] without a NUL. */
START_TEST(test_typed_edges) {
        _cleanup_event_def_ struct event_def *ev =
                parse_ok("e char[3] c; __data_loc char[] s; __data_loc u8[] b; s64 lo; u64 hi; s8 m", 0);
        const struct ueb_value v[] = {
                ueb_value_string("abc"), ueb_value_string(NULL), ueb_value_bytes(NULL, 0),
                ueb_value_s64(INT64_MIN), ueb_value_u64(UINT64_MAX), ueb_value_s8(INT8_MIN),
        };
        struct strbuf sb = STRBUF_INIT;
        void *payload = NULL;
        size_t len = 0;

        ck_assert_int_eq(event_encode_values_alloc(ev, v, 6, &payload, &len, NULL), 0);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, len), 0);
        ck_assert_int_eq(event_decode_text(ev, payload, len, &sb), 0);
        ck_assert_str_eq(sb.buf, "c=abc s= b=0x lo=-9223372036854775808 hi=18446744073709551615 m=-128");
        strbuf_done(&sb);
        free(payload);
}
END_TEST

static Suite *encode_suite(void) {
        Suite *s = suite_create("event-encode");
        TCase *tc = tcase_create("encode");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_defaults_and_rel_loc);
        tcase_add_test(tc, test_hex_fields);
        tcase_add_test(tc, test_exact_bytes);
        tcase_add_test(tc, test_refusals);
        tcase_add_test(tc, test_typed_exact_bytes);
        tcase_add_test(tc, test_typed_spans);
        tcase_add_test(tc, test_typed_matches_text);
        tcase_add_test(tc, test_typed_refusals);
        tcase_add_test(tc, test_typed_edges);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(encode_suite());
}
