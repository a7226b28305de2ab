/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The Record stream's layout: what the broker packs, a consumer reads back;
 * what a consumer must refuse. */
#include "check-tap.h"
#include "record-stream.h"

#include <errno.h>
#include <string.h>

static _Alignas(8) uint8_t buffer[UEB_RECORD_MESSAGE_MAX];

static struct record_batch batch_new(size_t capacity) {
        memset(buffer, 0xaa, sizeof(buffer));
        return (struct record_batch) { .data = buffer, .capacity = capacity };
}

START_TEST(test_round_trip) {
        struct record_batch b = batch_new(sizeof(buffer));
        const struct ueb_record_header h = { .pid = 42, .uid = 1000, .timestamp_ns = 7 };
        const struct ueb_record_header lost = { .flags = UEB_RECORD_FLAG_LOST, .lost_count = 5 };
        struct record_view v;
        size_t offset = 0;

        ck_assert_int_eq(record_batch_append(&b, &h, "tick", 4, "abc", 3), 0);
        ck_assert_uint_eq(b.len, 56);           /* 48 + 4 + 3 = 55, padded */
        ck_assert_uint_eq(buffer[55], 0);       /* padding is zero */
        ck_assert_int_eq(record_batch_append(&b, &lost, NULL, 0, NULL, 0), 0);
        ck_assert_int_eq(record_batch_append(&b, &h, "x", 1, NULL, 0), 0);
        ck_assert_uint_eq(b.len, 56 + 48 + 56);
        ck_assert_uint_eq(b.len % UEB_RECORD_ALIGN, 0);

        ck_assert_int_eq(record_stream_next(b.data, b.len, &offset, &v), 1);
        ck_assert_uint_eq(v.header.length, 55);
        ck_assert_uint_eq(v.header.name_len, 4);
        ck_assert_uint_eq(v.header.pid, 42);
        ck_assert_uint_eq(v.header.uid, 1000);
        ck_assert_mem_eq(v.name, "tick", 4);
        ck_assert_uint_eq(v.payload_len, 3);
        ck_assert_mem_eq(v.payload, "abc", 3);
        ck_assert_uint_eq(offset, 56);

        ck_assert_int_eq(record_stream_next(b.data, b.len, &offset, &v), 1);
        ck_assert_uint_eq(v.header.flags, UEB_RECORD_FLAG_LOST);
        ck_assert_uint_eq(v.header.lost_count, 5);
        ck_assert_uint_eq(v.payload_len, 0);

        ck_assert_int_eq(record_stream_next(b.data, b.len, &offset, &v), 1);
        ck_assert_mem_eq(v.name, "x", 1);
        ck_assert_uint_eq(v.payload_len, 0);
        ck_assert_int_eq(record_stream_next(b.data, b.len, &offset, &v), 0);
        ck_assert_uint_eq(offset, b.len);
}
END_TEST

START_TEST(test_full_batch) {
        struct record_batch b = batch_new(96);
        const struct ueb_record_header h = { 0 };

        ck_assert_int_eq(record_batch_append(&b, &h, "a", 1, "12345678", 8), 0);    /* 57 -> 64 */
        ck_assert_int_eq(record_batch_append(&b, &h, "a", 1, NULL, 0), -ENOBUFS);     /* 49 -> 56 */
        ck_assert_uint_eq(b.len, 64);
        b.len = 0;
        ck_assert_int_eq(record_batch_append(&b, &h, "a", 1, buffer, 96), -EMSGSIZE);
        ck_assert_int_eq(record_batch_append(&b, &h, "a", 1, NULL, 0), 0);
}
END_TEST

START_TEST(test_largest_record_fits) {
        struct record_batch b = batch_new(sizeof(buffer));
        static const char name[255] = "n";
        static uint8_t payload[65536];
        const struct ueb_record_header h = { 0 };

        ck_assert_int_eq(record_batch_append(&b, &h, name, sizeof(name), payload, sizeof(payload)), 0);
}
END_TEST

/* A last record without its padding is still read. */
START_TEST(test_unpadded_last) {
        struct record_batch b = batch_new(sizeof(buffer));
        const struct ueb_record_header h = { 0 };
        struct record_view v;
        size_t offset = 0;

        ck_assert_int_eq(record_batch_append(&b, &h, "abc", 3, NULL, 0), 0);
        ck_assert_int_eq(record_stream_next(b.data, 51, &offset, &v), 1);
        ck_assert_uint_eq(offset, 51);
        ck_assert_int_eq(record_stream_next(b.data, 51, &offset, &v), 0);
}
END_TEST

/* What a consumer refuses: each is -EBADMSG and leaves the offset alone. */
static void expect_bad(const struct ueb_record_header *h, size_t len) {
        struct record_view v;
        size_t offset = 0;

        memset(buffer, 0, sizeof(buffer));
        memcpy(buffer, h, sizeof(*h));
        ck_assert_int_eq(record_stream_next(buffer, len, &offset, &v), -EBADMSG);
        ck_assert_uint_eq(offset, 0);
}

START_TEST(test_malformed) {
        expect_bad(&(struct ueb_record_header) { .length = 48 }, 47);               /* shorter than a header */
        expect_bad(&(struct ueb_record_header) { .length = 47 }, 64);               /* length below the header */
        expect_bad(&(struct ueb_record_header) { .length = 65 }, 64);               /* beyond the message */
        expect_bad(&(struct ueb_record_header) { .length = 56, .name_len = 9 }, 64); /* name beyond the record */
        expect_bad(&(struct ueb_record_header) { .length = 56, .flags = UEB_RECORD_FLAG_LOST }, 64);
        expect_bad(&(struct ueb_record_header) { .length = UINT32_MAX, .name_len = UINT16_MAX }, 64);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("record-stream");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_round_trip);
        tcase_add_test(tc, test_full_batch);
        tcase_add_test(tc, test_largest_record_fits);
        tcase_add_test(tc, test_unpadded_last);
        tcase_add_test(tc, test_malformed);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(suite());
}
