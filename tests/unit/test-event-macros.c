/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* <uebroker-event.h>: the definition text UEB_EVENT() generates (parsed
 * by the broker's own parser), the values its calls build (encoded to
 * exact bytes by the encoder ueb_write_values() uses), and values refused
 * by a definition they do not match. */
#include "check-tap.h"
#include "event-def-assert.h"

#include "event-encode.h"
#include "uebroker-event.h"

UEB_EVENT(hello_tick,
          UEB_FIELD(u32, count),
          UEB_STRING(msg))

UEB_EVENT(every_kind,
          UEB_FIELD(u8, a),
          UEB_FIELD(u16, b),
          UEB_FIELD(u64, c),
          UEB_FIELD(s8, d),
          UEB_FIELD(s16, e),
          UEB_FIELD(s32, f),
          UEB_FIELD(s64, g),
          UEB_CHAR_ARRAY(tag, 4),
          UEB_REL_STRING(rel),
          UEB_ARRAY(u32, words),
          UEB_STRING(last))

UEB_EVENT(sixteen, UEB_FIELD(u8, f1), UEB_FIELD(u8, f2), UEB_FIELD(u8, f3), UEB_FIELD(u8, f4), UEB_FIELD(u8, f5),
          UEB_FIELD(u8, f6), UEB_FIELD(u8, f7), UEB_FIELD(u8, f8), UEB_FIELD(u8, f9), UEB_FIELD(u8, f10),
          UEB_FIELD(u8, f11), UEB_FIELD(u8, f12), UEB_FIELD(u8, f13), UEB_FIELD(u8, f14), UEB_FIELD(u8, f15),
          UEB_FIELD(u8, f16))

/* The definition parses, and the parser's canonical text is the same. */
static void check_definition(const char *definition, const char *expect, size_t n_fields) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(definition, 0);
        _cleanup_free_ char *canonical = event_def_canonical(ev);

        ck_assert_str_eq(definition, expect);
        ck_assert_uint_eq(ev->n_fields, n_fields);
        ck_assert_ptr_nonnull(canonical);
        ck_assert_str_eq(canonical + 2, expect);
}

START_TEST(test_definition_text) {
        check_definition(ueb_definition_hello_tick(), "hello_tick u32 count; __data_loc char[] msg",
                         ueb_n_fields_hello_tick);
        check_definition(ueb_definition_every_kind(),
                         "every_kind u8 a; u16 b; u64 c; s8 d; s16 e; s32 f; s64 g; char[4] tag; "
                         "__rel_loc char[] rel; __data_loc u32[] words; __data_loc char[] last",
                         ueb_n_fields_every_kind);
        check_definition(ueb_definition_sixteen(),
                         "sixteen u8 f1; u8 f2; u8 f3; u8 f4; u8 f5; u8 f6; u8 f7; u8 f8; u8 f9; u8 f10; "
                         "u8 f11; u8 f12; u8 f13; u8 f14; u8 f15; u8 f16",
                         ueb_n_fields_sixteen);
        ck_assert_int_eq(ueb_n_fields_hello_tick, 2);
        ck_assert_int_eq(ueb_n_fields_every_kind, 11);
        ck_assert_int_eq(ueb_n_fields_sixteen, 16);
}
END_TEST

/* Encodes @values against @definition; returns the payload (malloc()ed). */
static void *encode(const char *definition, const struct ueb_value *values, size_t n, size_t *ret_len) {
        _cleanup_event_def_ struct event_def *ev = parse_ok(definition, 0);
        struct event_error error = { 0 };
        void *payload = NULL;

        ck_assert_msg(event_encode_values_alloc(ev, values, n, &payload, ret_len, &error) == 0, "refused: %s",
                      error.message);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, *ret_len), 0);
        return payload;
}

START_TEST(test_hello_tick_bytes) {
        struct ueb_value v[ueb_n_fields_hello_tick];
        const uint8_t expect[] = { 42, 0, 0, 0, 16, 0, 3, 0, 'h', 'i', 0 };
        _cleanup_free_ void *payload = NULL;
        size_t len = 0;

        ueb_values_hello_tick(v, 42, "hi");
        payload = encode(ueb_definition_hello_tick(), v, ueb_n_fields_hello_tick, &len);
        ck_assert_uint_eq(len, sizeof(expect));
        ck_assert_mem_eq(payload, expect, sizeof(expect));
}
END_TEST

START_TEST(test_every_kind_bytes) {
        const uint32_t words[] = { 0x11223344, 1 };
        struct ueb_value v[ueb_n_fields_every_kind];
        /* Fixed: 1+2+8+1+2+4+8 = 26, tag 4 (30), rel (34), words (38), last (42). */
        const uint8_t expect[] = {
                0xff,                                           /* a */
                0x34, 0x12,                                     /* b */
                8, 7, 6, 5, 4, 3, 2, 1,                         /* c */
                0x80,                                           /* d */
                0xff, 0x7f,                                     /* e */
                0xfe, 0xff, 0xff, 0xff,                         /* f */
                1, 0, 0, 0, 0, 0, 0, 0x80,                      /* g */
                'a', 'b', 0, 0,                                 /* tag */
                42 - 34, 0, 2, 0,                               /* rel: "r" at 42 */
                44 + 8, 0, 8, 0,                                /* words at 44 */
                52 + 8, 0, 5, 0,                                /* last at 52 */
                'r', 0,
                0x44, 0x33, 0x22, 0x11, 1, 0, 0, 0,
                'l', 'a', 's', 't', 0,
        };
        _cleanup_free_ void *payload = NULL;
        size_t len = 0;

        ueb_values_every_kind(v, 0xff, 0x1234, 0x0102030405060708ull, INT8_MIN, INT16_MAX, -2, INT64_MIN + 1, "ab",
                              "r", words, 2, "last");
        payload = encode(ueb_definition_every_kind(), v, ueb_n_fields_every_kind, &len);
        ck_assert_uint_eq(len, sizeof(expect));
        ck_assert_mem_eq(payload, expect, sizeof(expect));
}
END_TEST

/* The generated values against a definition they were not made for: the
 * encoder (and so ueb_write_values()) refuses them. */
START_TEST(test_mismatch_refused) {
        struct ueb_value v[ueb_n_fields_hello_tick];
        const char *const others[] = {
                "hello_tick u64 count; __data_loc char[] msg",  /* wider integer */
                "hello_tick s32 count; __data_loc char[] msg",  /* signedness */
                "hello_tick u32 count; u32 msg",                /* string for an integer */
                "hello_tick u32 count; __data_loc u8[] msg",    /* string for bytes */
                "hello_tick u32 count",                         /* count */
                "hello_tick u32 count; __data_loc char[] msg; u8 more",
                "hello_tick u32 count; char[1] msg",            /* too long */
        };
        const int codes[] = { -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EINVAL, -EMSGSIZE };

        ueb_values_hello_tick(v, 1, "hi");
        for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
                _cleanup_event_def_ struct event_def *ev = parse_ok(others[i], 0);
                void *payload = NULL;
                size_t len = 0;

                ck_assert_msg(event_encode_values_alloc(ev, v, ueb_n_fields_hello_tick, &payload, &len, NULL) ==
                                      codes[i],
                              "%s was not refused", others[i]);
                ck_assert_ptr_null(payload);
        }
}
END_TEST

static Suite *macros_suite(void) {
        Suite *s = suite_create("event-macros");
        TCase *tc = tcase_create("macros");

        tcase_add_test(tc, test_definition_text);
        tcase_add_test(tc, test_hello_tick_bytes);
        tcase_add_test(tc, test_every_kind_bytes);
        tcase_add_test(tc, test_mismatch_refused);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(macros_suite());
}
