/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Payloads from "field=value" text (src/shared/event-encode.h), checked by
 * decoding them back and by their exact bytes. */
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
        check_refused("e char[8] b", longs, 1, "9 bytes do not fit");
        check_refused("e struct t p 4", odd, 1, "pairs");
        check_refused("e struct t p 4", big, 1, "5 bytes do not fit in 4");
        check_refused("e u8 a", empty, 1, "empty");
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
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(encode_suite());
}
