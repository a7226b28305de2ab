/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The payload validator and the dynamic-field decoder (uebroker-event-command(7), RECORDS).
 * A payload is what follows the u32 write index; the record the kernel
 * builds is the 8-byte common header followed by the payload, and
 * __data_loc offsets count from the start of that record. */
#include "check-tap.h"
#include "event-def-assert.h"

#include <stdint.h>

static uint32_t dyn_loc(uint32_t offset, uint32_t size) {
        return size << 16 | offset;
}

static void put_u32(uint8_t *payload, size_t at, uint32_t v) {
        memcpy(payload + at, &v, sizeof(v));
}

/* Asserts the span of dynamic field @field_no of @ev in @payload. */
#define assert_span(ev, field_no, payload, len, expect_offset, expect_size)                                  \
        do {                                                                                                  \
                size_t _off = SIZE_MAX, _size = SIZE_MAX;                                                     \
                ck_assert_int_eq(event_field_dynamic_span(&(ev)->fields[field_no], (payload), (len), &_off,  \
                                                          &_size),                                            \
                                 0);                                                                          \
                ck_assert_uint_eq(_off, (expect_offset));                                                     \
                ck_assert_uint_eq(_size, (expect_size));                                                      \
        } while (0)

#define assert_span_fails(ev, field_no, payload, len, expect_r)                                               \
        do {                                                                                                  \
                size_t _off = 12345, _size = 54321;                                                           \
                ck_assert_int_eq(event_field_dynamic_span(&(ev)->fields[field_no], (payload), (len), &_off,  \
                                                          &_size),                                            \
                                 (expect_r));                                                                 \
                ck_assert_uint_eq(_off, 12345);                                                               \
                ck_assert_uint_eq(_size, 54321);                                                              \
        } while (0)

START_TEST(test_min_size) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 a", 0);
        _cleanup_event_def_ struct event_def *st = parse_ok("e struct s x 100;u8 y", 0);
        _cleanup_event_def_ struct event_def *none = parse_ok("e", 0);
        uint8_t payload[200] = {};

        ck_assert_int_eq(event_def_validate_payload(ev, payload, 0), -EINVAL);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 3), -EINVAL);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 4), 0);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 8), 0);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 200), 0);

        ck_assert_uint_eq(st->min_size, 101);
        ck_assert_int_eq(event_def_validate_payload(st, payload, 100), -EINVAL);
        ck_assert_int_eq(event_def_validate_payload(st, payload, 101), 0);

        ck_assert_int_eq(event_def_validate_payload(none, NULL, 0), 0);
        ck_assert_int_eq(event_def_validate_payload(none, payload, 5), 0);
}
END_TEST

START_TEST(test_fixed_fields_unchecked) {
        /* Only dynamic fields are checked: a char[4] needs no NUL. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e char[4] s;char c", 0);
        uint8_t payload[5] = { 'a', 'b', 'c', 'd', 'e' };

        ck_assert_int_eq(event_def_validate_payload(ev, payload, 5), 0);
}
END_TEST

START_TEST(test_data_loc_in_bounds) {
        /* msg at payload 0, x at 4, string data from payload 8 (record 16). */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] msg;u32 x", 0);
        uint8_t payload[14] = {};

        ck_assert_uint_eq(ev->min_size, 8);
        put_u32(payload, 0, dyn_loc(16, 6));
        memcpy(payload + 8, "hello", 6);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), 0);
        assert_span(ev, 0, payload, 14, 8, 6);

        /* Ends one byte past the payload. */
        put_u32(payload, 0, dyn_loc(17, 6));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        assert_span_fails(ev, 0, payload, 14, -EFAULT);

        /* Ends exactly at the end, on a NUL. */
        put_u32(payload, 0, dyn_loc(19, 3));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), 0);
        assert_span(ev, 0, payload, 14, 11, 3);

        /* Starts exactly at the end. */
        put_u32(payload, 0, dyn_loc(22, 1));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
}
END_TEST

START_TEST(test_data_loc_out_of_bounds) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] msg;u32 x", 0);
        uint8_t payload[14] = {};

        put_u32(payload, 0, dyn_loc(100, 6));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        put_u32(payload, 0, dyn_loc(16, 100));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        put_u32(payload, 0, dyn_loc(0xffff, 0xffff));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        put_u32(payload, 0, dyn_loc(16, 0xffff));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        put_u32(payload, 0, dyn_loc(0xffff, 1));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), -EFAULT);
        assert_span_fails(ev, 0, payload, 14, -EFAULT);
}
END_TEST

START_TEST(test_data_loc_into_header) {
        /* The 8-byte common header is not the writer's: refused, whatever
         * the type and size. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] msg;u32 x", 0);
        _cleanup_event_def_ struct event_def *bytes = parse_ok("e __data_loc u8[] b;u32 x", 0);
        uint8_t payload[8] = {};

        for (uint32_t off = 0; off < 8; off++) {
                put_u32(payload, 0, dyn_loc(off, 8 - off));
                ck_assert_int_eq(event_def_validate_payload(ev, payload, 8), -EFAULT);
                ck_assert_int_eq(event_def_validate_payload(bytes, payload, 8), -EFAULT);
                put_u32(payload, 0, dyn_loc(off, 0));
                ck_assert_int_eq(event_def_validate_payload(bytes, payload, 8), -EFAULT);
                assert_span_fails(bytes, 0, payload, 8, -EFAULT);
        }
        /* An all-zero location points at the header too. */
        put_u32(payload, 0, 0);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 8), -EFAULT);
        /* Offset 8 is the first payload byte: allowed. */
        put_u32(payload, 0, dyn_loc(8, 0));
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 8), 0);
        assert_span(bytes, 0, payload, 8, 0, 0);
}
END_TEST

START_TEST(test_char_needs_nul) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] msg", 0);
        _cleanup_event_def_ struct event_def *uchar = parse_ok("e __data_loc unsigned char[] msg", 0);
        _cleanup_event_def_ struct event_def *plain = parse_ok("e __data_loc char msg", 0);
        uint8_t payload[10] = {};

        put_u32(payload, 0, dyn_loc(12, 6));
        memcpy(payload + 4, "hellox", 6);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 10), -EFAULT);
        ck_assert_int_eq(event_def_validate_payload(uchar, payload, 10), -EFAULT);
        ck_assert_int_eq(event_def_validate_payload(plain, payload, 10), -EFAULT);
        assert_span_fails(ev, 0, payload, 10, -EFAULT);

        /* A NUL inside the string does not help: the last byte counts. */
        payload[5] = '\0';
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 10), -EFAULT);

        payload[9] = '\0';
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 10), 0);
        ck_assert_int_eq(event_def_validate_payload(uchar, payload, 10), 0);
        ck_assert_int_eq(event_def_validate_payload(plain, payload, 10), 0);
        assert_span(ev, 0, payload, 10, 4, 6);
}
END_TEST

START_TEST(test_char_size_zero) {
        /* An empty char field cannot end in NUL: -EFAULT, even in bounds
         * and after a NUL byte. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] msg", 0);
        _cleanup_event_def_ struct event_def *rel = parse_ok("e __rel_loc char[] msg", 0);
        uint8_t payload[8] = {};

        put_u32(payload, 0, dyn_loc(12, 0));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 8), -EFAULT);
        assert_span_fails(ev, 0, payload, 8, -EFAULT);
        put_u32(payload, 0, dyn_loc(0, 0));
        ck_assert_int_eq(event_def_validate_payload(rel, payload, 8), -EFAULT);
        assert_span_fails(rel, 0, payload, 8, -EFAULT);
}
END_TEST

START_TEST(test_non_char_no_nul) {
        _cleanup_event_def_ struct event_def *bytes = parse_ok("e __data_loc u8[] b", 0);
        _cleanup_event_def_ struct event_def *words = parse_ok("e __rel_loc u32[] w", 0);
        uint8_t payload[12] = {};

        put_u32(payload, 0, dyn_loc(12, 3));
        memset(payload + 4, 0xff, 8);
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 12), 0);
        assert_span(bytes, 0, payload, 12, 4, 3);

        /* Size 0 is fine without a NUL to check, even at the very end. */
        put_u32(payload, 0, dyn_loc(20, 0));
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 12), 0);
        assert_span(bytes, 0, payload, 12, 12, 0);
        put_u32(payload, 0, dyn_loc(21, 0));
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 12), -EFAULT);

        put_u32(payload, 0, dyn_loc(0, 8));
        ck_assert_int_eq(event_def_validate_payload(words, payload, 12), 0);
        assert_span(words, 0, payload, 12, 4, 8);
        put_u32(payload, 0, dyn_loc(0, 9));
        ck_assert_int_eq(event_def_validate_payload(words, payload, 12), -EFAULT);
}
END_TEST

START_TEST(test_rel_loc_from_field_end) {
        /* s sits at payload 4..8: its offset counts from payload 8. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u32 x;__rel_loc char[] s", 0);
        _cleanup_event_def_ struct event_def *dl = parse_ok("e u32 x;__data_loc char[] s", 0);
        uint8_t payload[16] = {};

        ck_assert_uint_eq(ev->fields[1].offset, 12);
        memcpy(payload + 8, "hi", 3);
        put_u32(payload, 4, dyn_loc(0, 3));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 11), 0);
        assert_span(ev, 1, payload, 11, 8, 3);
        /* The same location means something else for __data_loc. */
        ck_assert_int_eq(event_def_validate_payload(dl, payload, 11), -EFAULT);
        put_u32(payload, 4, dyn_loc(16, 3));
        ck_assert_int_eq(event_def_validate_payload(dl, payload, 11), 0);
        assert_span(dl, 1, payload, 11, 8, 3);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 11), -EFAULT);

        /* Offset 2 from the field end. */
        memcpy(payload + 10, "abc", 4);
        put_u32(payload, 4, dyn_loc(2, 4));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 14), 0);
        assert_span(ev, 1, payload, 14, 10, 4);
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 13), -EFAULT);

        /* Far outside. */
        put_u32(payload, 4, dyn_loc(200, 1));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 16), -EFAULT);
        put_u32(payload, 4, dyn_loc(0xffff, 0xffff));
        ck_assert_int_eq(event_def_validate_payload(ev, payload, 16), -EFAULT);
        assert_span_fails(ev, 1, payload, 16, -EFAULT);
}
END_TEST

START_TEST(test_huge_offsets) {
        /* 16-bit offsets and sizes at their maximum, with payloads just
         * large enough to hold them. */
        const size_t dl_len = 0xffff - 8 + 0xffff;  /* __data_loc: from the record start */
        const size_t rel_len = 4 + 0xffff + 0xffff; /* __rel_loc: from the end of the field */
        _cleanup_free_ uint8_t *payload = calloc(1, rel_len);
        _cleanup_event_def_ struct event_def *bytes = parse_ok("e __data_loc u8[] b", 0);
        _cleanup_event_def_ struct event_def *str = parse_ok("e __data_loc char[] s", 0);
        _cleanup_event_def_ struct event_def *rel = parse_ok("e __rel_loc char[] s", 0);

        ck_assert_ptr_nonnull(payload);
        put_u32(payload, 0, dyn_loc(0xffff, 0xffff));
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, dl_len), 0);
        assert_span(bytes, 0, payload, dl_len, 0xffff - 8, 0xffff);
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, dl_len - 1), -EFAULT);
        ck_assert_int_eq(event_def_validate_payload(str, payload, dl_len), 0);
        payload[dl_len - 1] = 'x';
        ck_assert_int_eq(event_def_validate_payload(str, payload, dl_len), -EFAULT);

        ck_assert_int_eq(event_def_validate_payload(rel, payload, dl_len), -EFAULT);
        ck_assert_int_eq(event_def_validate_payload(rel, payload, rel_len - 1), -EFAULT);
        ck_assert_int_eq(event_def_validate_payload(rel, payload, rel_len), 0);
        assert_span(rel, 0, payload, rel_len, 4 + 0xffff, 0xffff);
        payload[rel_len - 1] = 'x';
        ck_assert_int_eq(event_def_validate_payload(rel, payload, rel_len), -EFAULT);
}
END_TEST

START_TEST(test_exactly_min_size) {
        /* u8[] at payload 0..4, pointing at the end of the payload. */
        _cleanup_event_def_ struct event_def *bytes = parse_ok("e __data_loc u8[] b", 0);
        _cleanup_event_def_ struct event_def *str = parse_ok("e __data_loc char[] s", 0);
        uint8_t payload[4];

        put_u32(payload, 0, dyn_loc(12, 0));
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 4), 0);
        assert_span(bytes, 0, payload, 4, 4, 0);
        ck_assert_int_eq(event_def_validate_payload(bytes, payload, 3), -EINVAL);
        /* Too short for the field itself: the decoder says -EINVAL too. */
        assert_span_fails(bytes, 0, payload, 3, -EINVAL);
        assert_span_fails(bytes, 0, payload, 0, -EINVAL);

        /* A char field of a minimum-size payload can only point into its
         * own location word; it is valid if that ends in a 0 byte. */
        put_u32(payload, 0, dyn_loc(8, 4));
        ck_assert_int_eq(event_def_validate_payload(str, payload, 4), payload[3] == 0 ? 0 : -EFAULT);
        put_u32(payload, 0, dyn_loc(8, 1));
        ck_assert_int_eq(event_def_validate_payload(str, payload, 4), payload[0] == 0 ? 0 : -EFAULT);
}
END_TEST

/* Linux 6.12 ground truth, t_dl with a 37-byte payload:
 * msg @0 (data_loc char), rmsg @4 (rel_loc char), bytes @8 (data_loc u8),
 * words @12 (rel_loc u32), then "hello\0" "rel\0" 01 02 03 and 8 word bytes. */
static void t_dl_payload(uint8_t p[37]) {
        static const uint8_t data[21] = { 'h', 'e', 'l', 'l', 'o', 0, 'r', 'e', 'l', 0, 1, 2, 3,
                                          0xdd, 0xcc, 0xbb, 0xaa, 7, 0, 0, 0 };

        put_u32(p, 0, dyn_loc(8 + 16, 6));
        put_u32(p, 4, dyn_loc(22 - 8, 4));
        put_u32(p, 8, dyn_loc(8 + 26, 3));
        put_u32(p, 12, dyn_loc(29 - 16, 8));
        memcpy(p + 16, data, sizeof(data));
}

START_TEST(test_ground_truth_t_dl) {
        _cleanup_event_def_ struct event_def *ev =
                parse_ok("t_dl __data_loc char[] msg;__rel_loc char[] rmsg;__data_loc u8[] bytes;__rel_loc u32[] words", 0);
        uint8_t p[37];

        ck_assert_uint_eq(ev->min_size, 16);
        t_dl_payload(p);
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), 0);
        assert_span(ev, 0, p, 37, 16, 6);
        assert_span(ev, 1, p, 37, 22, 4);
        assert_span(ev, 2, p, 37, 26, 3);
        assert_span(ev, 3, p, 37, 29, 8);
        ck_assert_int_eq(event_def_validate_payload(ev, p, 15), -EINVAL);

        /* The kernel's answers, case by case. */
        put_u32(p, 0, dyn_loc(100, 6)); /* outside */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        put_u32(p, 0, dyn_loc(40, 6)); /* ends one past the record */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        put_u32(p, 0, dyn_loc(39, 6)); /* ends at the end, on a NUL */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), 0);
        t_dl_payload(p);
        p[21] = 'x'; /* "hellox" */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        t_dl_payload(p);
        p[25] = 'x'; /* "relx" */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        t_dl_payload(p);
        p[28] = 0xff; /* bytes need no NUL */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), 0);
        t_dl_payload(p);
        put_u32(p, 4, dyn_loc(200, 4)); /* rel outside */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        t_dl_payload(p);
        put_u32(p, 12, dyn_loc(29 - 16, 9)); /* words one past the end */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);

        /* Stricter than 6.12, which accepts these (uebroker-event-command(7): the header is
         * not part of the payload; a char field must end in NUL). */
        t_dl_payload(p);
        put_u32(p, 0, dyn_loc(0, 8));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        t_dl_payload(p);
        put_u32(p, 8, dyn_loc(0, 3));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        t_dl_payload(p);
        put_u32(p, 0, dyn_loc(30, 0));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 37), -EFAULT);
        memset(p, 0, 16);
        ck_assert_int_eq(event_def_validate_payload(ev, p, 16), -EFAULT);
}
END_TEST

START_TEST(test_every_dynamic_field_checked) {
        _cleanup_event_def_ struct event_def *ev = parse_ok("e __data_loc char[] a;__rel_loc char[] b;u16 c", 0);
        uint8_t p[16] = {};

        ck_assert_uint_eq(ev->min_size, 10);
        memcpy(p + 10, "x", 2);
        memcpy(p + 12, "yz", 3);
        put_u32(p, 0, dyn_loc(8 + 10, 2));
        put_u32(p, 4, dyn_loc(12 - 8, 3));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 15), 0);
        assert_span(ev, 0, p, 15, 10, 2);
        assert_span(ev, 1, p, 15, 12, 3);

        /* First good, second bad; then first bad, second good. */
        put_u32(p, 4, dyn_loc(12 - 8, 4));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 15), -EFAULT);
        put_u32(p, 4, dyn_loc(12 - 8, 3));
        put_u32(p, 0, dyn_loc(8 + 10, 1));
        ck_assert_int_eq(event_def_validate_payload(ev, p, 15), -EFAULT);
        /* Shorter than the minimum wins over bad locations. */
        ck_assert_int_eq(event_def_validate_payload(ev, p, 9), -EINVAL);
}
END_TEST

START_TEST(test_unaligned_payload) {
        /* Payloads come straight from a message: no alignment promised. */
        _cleanup_event_def_ struct event_def *ev = parse_ok("e u8 pad;__data_loc char[] s", 0);
        uint8_t buf[16] = {};
        uint8_t *p = buf + 1;

        put_u32(p, 1, dyn_loc(8 + 5, 3));
        memcpy(p + 5, "ok", 3);
        ck_assert_int_eq(event_def_validate_payload(ev, p, 8), 0);
        assert_span(ev, 1, p, 8, 5, 3);
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-validate");
        TCase *tc = tcase_create("validate");

        tcase_add_test(tc, test_min_size);
        tcase_add_test(tc, test_fixed_fields_unchecked);
        tcase_add_test(tc, test_data_loc_in_bounds);
        tcase_add_test(tc, test_data_loc_out_of_bounds);
        tcase_add_test(tc, test_data_loc_into_header);
        tcase_add_test(tc, test_char_needs_nul);
        tcase_add_test(tc, test_char_size_zero);
        tcase_add_test(tc, test_non_char_no_nul);
        tcase_add_test(tc, test_rel_loc_from_field_end);
        tcase_add_test(tc, test_huge_offsets);
        tcase_add_test(tc, test_exactly_min_size);
        tcase_add_test(tc, test_ground_truth_t_dl);
        tcase_add_test(tc, test_every_dynamic_field_checked);
        tcase_add_test(tc, test_unaligned_payload);
        suite_add_tcase(s, tc);

        return check_tap_run(s);
}
