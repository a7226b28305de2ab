/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracedat-page.h: pages read back by libtraceevent's kbuffer, the parser
 * trace-cmd and KernelShark use, and the header text parsed by
 * libtraceevent. */
#include "check-tap.h"

#include <errno.h>
#include <string.h>
#include <traceevent/event-parse.h>
#include <traceevent/kbuffer.h>

#include "tracedat-page.h"

#define PAGE 4096u

static struct kbuffer *load(const uint8_t *page) {
        struct kbuffer *kbuf = kbuffer_alloc(sizeof(long) == 8 ? KBUFFER_LSIZE_8 : KBUFFER_LSIZE_4,
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                                             KBUFFER_ENDIAN_LITTLE
#else
                                             KBUFFER_ENDIAN_BIG
#endif
        );

        ck_assert_ptr_nonnull(kbuf);
        ck_assert_int_eq(kbuffer_load_subbuffer(kbuf, (void *) page), 0);
        return kbuf;
}

static void fill(uint8_t *buf, size_t n, uint8_t seed) {
        for (size_t i = 0; i < n; i++)
                buf[i] = (uint8_t) (seed + i);
}

/* Events of every size class and a delta beyond 27 bits: each read back
 * with its bytes and its time. */
START_TEST(test_events_read_back) {
        static const size_t sizes[] = { 1, 8, 111, 112, 113, 500, 2000 };
        const uint64_t base = 1733390000123456789ull;
        const uint64_t ts[] = { base, base + 1, base + 1, base + (1ull << 27), base + (1ull << 40) + 7,
                                base + (1ull << 40) + 8, base + (3ull << 40) };
        struct tracedat_page p;
        uint8_t head[8], body[2000];
        unsigned long long got_ts;
        struct kbuffer *kbuf;
        void *data;
        size_t i = 0;

        ck_assert_int_eq(tracedat_page_init(&p, PAGE), 0);
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
                size_t head_len = sizes[k] < 8 ? sizes[k] : 8;

                fill(head, sizeof(head), (uint8_t) k);
                fill(body, sizeof(body), (uint8_t) (100 + k));
                ck_assert_int_eq(tracedat_page_add(&p, ts[k], head, head_len, body, sizes[k] - head_len), 0);
        }
        kbuf = load(tracedat_page_finish(&p));
        ck_assert_int_eq(kbuffer_missed_events(kbuf), 0);
        for (data = kbuffer_read_event(kbuf, &got_ts); data; data = kbuffer_next_event(kbuf, &got_ts), i++) {
                size_t head_len = sizes[i] < 8 ? sizes[i] : 8;
                uint8_t want[2008];

                ck_assert_uint_lt(i, sizeof(sizes) / sizeof(sizes[0]));
                ck_assert_uint_eq(got_ts, ts[i]);
                /* kbuffer gives the size padded to 4 bytes, as the kernel's. */
                ck_assert_int_eq(kbuffer_event_size(kbuf), (int) ((sizes[i] + 3) & ~3u));
                fill(want, 8, (uint8_t) i);
                fill(want + head_len, sizes[i] - head_len, (uint8_t) (100 + i));
                ck_assert_mem_eq(data, want, sizes[i]);
        }
        ck_assert_uint_eq(i, sizeof(sizes) / sizeof(sizes[0]));
        kbuffer_free(kbuf);
        tracedat_page_done(&p);
}
END_TEST

/* A full page says so, and the next one starts where it stopped. */
START_TEST(test_page_full_and_limits) {
        struct tracedat_page p;
        uint8_t body[4096] = { 0 };
        size_t n = 0;
        int r;

        ck_assert_int_eq(tracedat_page_init(&p, PAGE), 0);
        while ((r = tracedat_page_add(&p, 1000 + n, body, 8, body, 92)) == 0)
                n++;
        ck_assert_int_eq(r, -ENOSPC);
        /* 104 bytes per event (4 + 100): as many as fit in 4080. */
        ck_assert_uint_eq(n, (PAGE - TRACEDAT_PAGE_HEADER_SIZE) / 104);
        ck_assert_uint_eq(p.n_events, n);
        ck_assert_int_eq(tracedat_page_add(&p, 1, body, 8, NULL, 0), -ERANGE);
        tracedat_page_reset(&p);
        ck_assert_uint_eq(p.n_events, 0);
        ck_assert_int_eq(tracedat_page_add(&p, 1, body, 8, NULL, 0), 0);
        /* Never fits a page of 4096. */
        ck_assert_int_eq(tracedat_page_add(&p, 2, body, 8, body, 4090), -EMSGSIZE);
        ck_assert_int_eq(tracedat_page_add(&p, 2, NULL, 0, NULL, 0), -EMSGSIZE);
        tracedat_page_done(&p);

        ck_assert_int_eq(tracedat_page_init(&p, 16), -EINVAL);
}
END_TEST

/* Records lost before a page: the count kbuffer reads, as trace-cmd
 * reports "[N EVENTS DROPPED]"; an unknown count reads as -1. */
START_TEST(test_missed_events) {
        struct tracedat_page p;
        uint8_t entry[16] = { 1 };
        unsigned long long ts;
        struct kbuffer *kbuf;
        size_t n = 0;

        ck_assert_int_eq(tracedat_page_init(&p, PAGE), 0);
        ck_assert_int_eq(tracedat_page_add_missed(&p, 5), 0);
        ck_assert_int_eq(tracedat_page_add_missed(&p, 7), 0);
        /* Fill the page: the stored count keeps its room. */
        while (tracedat_page_add(&p, 10 + n, entry, sizeof(entry), NULL, 0) == 0)
                n++;
        ck_assert_int_eq(tracedat_page_add_missed(&p, 1), -EBUSY);
        kbuf = load(tracedat_page_finish(&p));
        ck_assert_int_eq(kbuffer_missed_events(kbuf), 12);
        ck_assert_ptr_nonnull(kbuffer_read_event(kbuf, &ts));
        ck_assert_uint_eq(ts, 10);
        while (kbuffer_next_event(kbuf, &ts))
                n--;
        ck_assert_uint_eq(n, 1);
        kbuffer_free(kbuf);

        /* Filled to the last byte by the smallest events (8 bytes each, a
         * multiple of the room): the count still has its own 8 bytes
         * inside the page, after the events. */
        tracedat_page_reset(&p);
        ck_assert_int_eq(tracedat_page_add_missed(&p, 4), 0);
        n = 0;
        while (tracedat_page_add(&p, 10 + n, entry, 1, NULL, 0) == 0)
                n++;
        ck_assert_uint_le(p.used + sizeof(long), p.page_size - TRACEDAT_PAGE_HEADER_SIZE);
        ck_assert_uint_eq(p.used, (p.page_size - TRACEDAT_PAGE_HEADER_SIZE - sizeof(long)) / 8 * 8);
        kbuf = load(tracedat_page_finish(&p));
        ck_assert_int_eq(kbuffer_missed_events(kbuf), 4);
        ck_assert_ptr_nonnull(kbuffer_read_event(kbuf, &ts));
        while (kbuffer_next_event(kbuf, &ts))
                n--;
        ck_assert_uint_eq(n, 1);
        kbuffer_free(kbuf);

        tracedat_page_reset(&p);
        ck_assert_int_eq(tracedat_page_add_missed(&p, 3), 0);
        ck_assert_int_eq(tracedat_page_add_missed(&p, 0), 0);
        ck_assert_int_eq(tracedat_page_add(&p, 99, entry, sizeof(entry), NULL, 0), 0);
        kbuf = load(tracedat_page_finish(&p));
        ck_assert_int_eq(kbuffer_missed_events(kbuf), -1);
        kbuffer_free(kbuf);

        tracedat_page_reset(&p);
        ck_assert_int_eq(tracedat_page_add(&p, 99, entry, sizeof(entry), NULL, 0), 0);
        kbuf = load(tracedat_page_finish(&p));
        ck_assert_int_eq(kbuffer_missed_events(kbuf), 0);
        kbuffer_free(kbuf);
        tracedat_page_done(&p);
}
END_TEST

/* libtraceevent reads our header_page as a kernel's: the commit field is a
 * long of this host. */
START_TEST(test_header_page_parses) {
        struct tep_handle *tep = tep_alloc();
        char *text = tracedat_header_page_text(PAGE);

        ck_assert_ptr_nonnull(tep);
        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(tep_parse_header_page(tep, text, strlen(text), (int) sizeof(long)), 0);
        ck_assert_int_eq(tep_get_header_page_size(tep), (int) sizeof(long));
        ck_assert_ptr_nonnull(strstr(text, "field: char data;\toffset:16;\tsize:4080;"));
        ck_assert_ptr_nonnull(strstr(tracedat_header_event_text(), "time_extend : type == 30"));
        free(text);
        tep_free(tep);
}
END_TEST

static Suite *tracedat_page_suite(void) {
        Suite *s = suite_create("tracedat-page");
        TCase *tc = tcase_create("pages");

        tcase_add_test(tc, test_events_read_back);
        tcase_add_test(tc, test_page_full_and_limits);
        tcase_add_test(tc, test_missed_events);
        tcase_add_test(tc, test_header_page_parses);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(tracedat_page_suite());
}
