/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared-memory ring (ring.h): what writers put in, the reader takes
 * out, in order, with every record either read or counted as dropped;
 * the wakeup protocol; a reader that gives up on impossible contents. */
#include "check-tap.h"
#include "ring.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define DATA_SIZE RING_DATA_MIN

static struct ring_header header;
static uint8_t *data;
static uint8_t scratch[RING_DATA_MAX];
static struct ring_writer writer;
static struct ring_reader reader;

static void setup(void) {
        memset(&header, 0, sizeof(header));
        header.waiting = 0;
        data = calloc(1, DATA_SIZE);
        ck_assert_ptr_nonnull(data);
        writer = (struct ring_writer) { .header = &header, .data = data, .size = DATA_SIZE };
        reader = (struct ring_reader) { .header = &header, .data = data, .size = DATA_SIZE };
}

static void teardown(void) {
        free(data);
}

/* ring_read() of at most @turns records and paddings, every record wanted,
 * bytes unbounded. */
static int read_turns(unsigned turns, bool (*fn)(const struct ring_record *, const uint8_t *, void *),
                      void *userdata) {
        struct ring_budget budget = { .turns = turns, .bytes = UINT64_MAX };
        const struct ring_read_ops ops = { .record = fn };

        return ring_read(&reader, &budget, scratch, &ops, userdata);
}

static int write_u64(uint32_t index, uint32_t tid, uint64_t value, bool *wake) {
        struct iovec iov = { &value, sizeof(value) };

        return ring_write(&writer, index, tid, 1000 + value, &iov, 1, sizeof(value), wake);
}

/* What the reader hands out, collected. */
struct collected {
        unsigned n;
        struct ring_record recs[4096];
        uint64_t values[4096];
};

static bool collect(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        struct collected *c = userdata;

        ck_assert_uint_lt(c->n, 4096);
        c->recs[c->n] = *rec;
        memcpy(&c->values[c->n], payload, rec->payload_len < 8 ? rec->payload_len : 8);
        c->n++;
        return true;
}

START_TEST(test_round_trip_and_wrap) {
        static struct collected got;
        bool wake;
        uint64_t next = 0;

        /* 32-byte records (24 + 8): many times around the ring, read in
         * batches of 100 so the writer keeps wrapping mid-ring. */
        for (unsigned round = 0; round < 50; round++) {
                unsigned written = 0;

                while (written < 100 && write_u64(3, 77, next + written, &wake) == 0)
                        written++;
                memset(&got, 0, sizeof(got));
                ck_assert_int_eq(read_turns(1000, collect, &got), (int) got.n);
                for (unsigned i = 0; i < got.n; i++) {
                        ck_assert_uint_eq(got.values[i], next + i);
                        ck_assert_uint_eq(got.recs[i].write_index, 3);
                        ck_assert_uint_eq(got.recs[i].tid, 77);
                        ck_assert_uint_eq(got.recs[i].payload_len, 8);
                        ck_assert_uint_eq(got.recs[i].timestamp_ns, 1000 + next + i);
                }
                next += got.n;
                ck_assert_uint_eq(header.head, reader.head);
        }
        ck_assert_uint_gt(reader.head, 4 * DATA_SIZE);
        ck_assert(!reader.broken);
}
END_TEST

/* A record that does not fit at the end of the area goes to its start,
 * behind a padding record the reader skips. */
START_TEST(test_padding) {
        static struct collected got;
        uint8_t big[200] = { 0 };
        struct iovec iov = { big, sizeof(big) };
        bool wake;

        header.tail = header.head = reader.head = DATA_SIZE - 32;
        ck_assert_int_eq(ring_write(&writer, 1, 2, 3, &iov, 1, sizeof(big), &wake), 0);
        ck_assert_uint_eq(header.tail, DATA_SIZE - 32 + 32 + 224);
        ck_assert_int_eq(read_turns(10, collect, &got), 1);
        ck_assert_uint_eq(got.recs[0].payload_len, sizeof(big));
        ck_assert_uint_eq(reader.head, header.tail);
        /* Read space is zero again. */
        for (unsigned i = 0; i < DATA_SIZE; i++)
                ck_assert_uint_eq(data[i], 0);
}
END_TEST

START_TEST(test_full_and_too_large) {
        static struct collected got;
        uint8_t big[DATA_SIZE / 4] = { 0 };
        struct iovec iov = { big, sizeof(big) };
        unsigned written = 0;
        bool wake;

        ck_assert_int_eq(ring_write(&writer, 1, 2, 3, &iov, 1, sizeof(big), &wake), -EMSGSIZE);
        while (write_u64(0, 1, written, &wake) == 0)
                written++;
        ck_assert_uint_eq(written, DATA_SIZE / 32);
        ck_assert_int_eq(write_u64(0, 1, 0, &wake), -EAGAIN);
        ck_assert_uint_eq(header.dropped, 2);
        ck_assert_uint_eq(ring_take_dropped(&reader), 2);
        ck_assert_uint_eq(ring_take_dropped(&reader), 0);
        ck_assert_int_eq(read_turns(100000, collect, &got), (int) written);
        ck_assert_int_eq(write_u64(0, 1, 0, &wake), 0);
        /* A count going backwards (a lying client) counts nothing. */
        header.dropped = 1;
        ck_assert_uint_eq(ring_take_dropped(&reader), 0);
}
END_TEST

START_TEST(test_budget) {
        static struct collected got;
        bool wake;

        for (unsigned i = 0; i < 10; i++)
                ck_assert_int_eq(write_u64(0, 1, i, &wake), 0);
        ck_assert_int_eq(read_turns(3, collect, &got), 3);
        ck_assert_uint_eq(ring_pending(&reader), 7 * 32);
        ck_assert_int_eq(read_turns(100, collect, &got), 7);
        ck_assert_uint_eq(got.values[9], 9);
}
END_TEST

START_TEST(test_wakeup) {
        static struct collected got;
        bool wake;

        /* The broker sleeps, to be woken at the next record: the first
         * write wakes it, once. */
        ck_assert(!ring_reader_wait(&reader, 0));
        ck_assert_int_eq(write_u64(0, 1, 0, &wake), 0);
        ck_assert(wake);
        ck_assert_int_eq(write_u64(0, 1, 1, &wake), 0);
        ck_assert(!wake);
        /* Something is there already: the reader must not sleep. */
        ck_assert(ring_reader_wait(&reader, 0));
        ck_assert_int_eq(read_turns(100, collect, &got), 2);
        /* Busy: woken only once 256 bytes (8 records) are pending. */
        ck_assert(!ring_reader_wait(&reader, 256));
        for (unsigned i = 0; i < 7; i++) {
                ck_assert_int_eq(write_u64(0, 1, i, &wake), 0);
                ck_assert(!wake);
        }
        ck_assert_int_eq(write_u64(0, 1, 7, &wake), 0);
        ck_assert(wake);
}
END_TEST

/* Impossible contents: the reader gives the ring up, reads nothing more. */
START_TEST(test_hostile) {
        static struct collected got;
        uint32_t word;
        bool wake;

        ck_assert_int_eq(write_u64(0, 1, 0, &wake), 0);
        word = 12u | RING_COMMITTED;            /* shorter than a record */
        memcpy(data, &word, 4);
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        ck_assert(reader.broken);
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        ck_assert_uint_eq(got.n, 0);
        ck_assert_uint_eq(ring_pending(&reader), 0);
        ck_assert(!ring_reader_wait(&reader, 0));
}
END_TEST

START_TEST(test_hostile_tail) {
        static struct collected got;

        header.tail = DATA_SIZE + 8;            /* more than a ring ahead */
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        teardown();
        setup();
        header.tail = (uint64_t) -8;            /* behind the head */
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        teardown();
        setup();
        /* A committed word longer than what was reserved. */
        header.tail = 32;
        memcpy(data, &(uint32_t) { 64u | RING_COMMITTED }, 4);
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
}
END_TEST

/* Paddings cost a turn of the budget as records do: a ring of 8-byte
 * paddings is read no faster than one of records. */
START_TEST(test_paddings_count_against_budget) {
        static struct collected got;
        uint32_t word = 8u | RING_PADDING | RING_COMMITTED;

        for (unsigned i = 0; i < 100; i++)
                memcpy(data + 8 * i, &word, 4);
        header.tail = 800;
        ck_assert_int_eq(read_turns(10, collect, &got), 0);
        ck_assert_uint_eq(reader.head, 80);
        ck_assert_uint_eq(header.head, 80);
        ck_assert_int_eq(read_turns(1000, collect, &got), 0);
        ck_assert_uint_eq(reader.head, 800);
}
END_TEST

/* A committed record that runs past the end of the data area (records
 * never wrap): the reader must not copy past the mapping. */
START_TEST(test_record_past_the_end) {
        static struct collected got;
        struct ring_record rec = { .word = 32u | RING_COMMITTED, .payload_len = 8 };

        reader.head = header.head = DATA_SIZE - 16;
        header.tail = DATA_SIZE + 16;           /* 32 bytes pending: plausible */
        memcpy(data + DATA_SIZE - 16, &rec, 16);
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        ck_assert_uint_eq(got.n, 0);
}
END_TEST

/* payload_len beyond what the record holds: not even by a byte (the rest
 * would come from the scratch buffer, another session's data). */
START_TEST(test_payload_len_beyond_the_record) {
        static const uint32_t claims[] = { 9, 16, 24, 32 };

        for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
                static struct collected got;
                struct ring_record rec = { .word = 32u | RING_COMMITTED, .payload_len = claims[i] };

                teardown();
                setup();
                memset(&got, 0, sizeof(got));
                memcpy(data, &rec, sizeof(rec));
                header.tail = 32;
                ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
                ck_assert_uint_eq(got.n, 0);
        }
}
END_TEST

/* A record claims no more than its payload makes it, and no payload is
 * longer than the broker takes: checked before anything is copied (records claiming the rest of the ring, never written, cost their
 * writer nothing and the broker a copy of a ring each). */
START_TEST(test_claims_checked_before_copying) {
        static const struct { uint32_t len, payload_len; } claims[] = {
                { 64, 8 },                      /* longer than its payload */
                { DATA_SIZE, DATA_SIZE - 24 },  /* the whole ring */
        };

        for (size_t i = 0; i < sizeof(claims) / sizeof(claims[0]); i++) {
                static struct collected got;
                struct ring_record rec = { .word = claims[i].len | RING_COMMITTED,
                                           .payload_len = claims[i].payload_len };

                teardown();
                setup();
                memset(&got, 0, sizeof(got));
                memset(scratch, 0xa5, 64);
                memcpy(data, &rec, sizeof(rec));
                header.tail = claims[i].len;
                ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
                ck_assert_uint_eq(got.n, 0);
                ck_assert_uint_eq(scratch[0], 0xa5);            /* nothing copied */
        }
}
END_TEST

START_TEST(test_payload_over_the_broker_limit) {
        static struct collected got;
        static uint8_t big[DATA_PAYLOAD_MAX + 8];
        uint8_t *area = calloc(1, 1u << 20);
        struct ring_record rec = { .word = (uint32_t) RING_ALIGN_UP(24 + DATA_PAYLOAD_MAX + 8) | RING_COMMITTED,
                                   .payload_len = DATA_PAYLOAD_MAX + 8 };
        struct iovec iov = { big, sizeof(big) };
        bool wake;

        ck_assert_ptr_nonnull(area);
        /* A ring large enough for it: libuebroker still refuses to write it. */
        writer = (struct ring_writer) { .header = &header, .data = area, .size = 1u << 20 };
        reader = (struct ring_reader) { .header = &header, .data = area, .size = 1u << 20 };
        ck_assert_int_eq(ring_write(&writer, 1, 2, 3, &iov, 1, sizeof(big), &wake), -EMSGSIZE);
        iov.iov_len = DATA_PAYLOAD_MAX;
        ck_assert_int_eq(ring_write(&writer, 1, 2, 3, &iov, 1, DATA_PAYLOAD_MAX, &wake), 0);
        ck_assert_int_eq(read_turns(10, collect, &got), 1);
        ck_assert_uint_eq(got.recs[0].payload_len, DATA_PAYLOAD_MAX);
        /* Written by hand, the reader gives the ring up. */
        memcpy(area + reader.head, &rec, sizeof(rec));
        header.tail = reader.head + (rec.word & RING_SIZE_MASK);
        ck_assert_int_eq(read_turns(10, collect, &got), -EBADMSG);
        ck_assert_uint_eq(got.n, 1);
        free(area);
}
END_TEST

static bool want_odd_values(const struct ring_record *rec, void *userdata) {
        return rec->write_index % 2 == 1;
}

/* Records cost the payload they claim, and one the reader does not want
 * at least RING_UNWANTED_CHARGE: the byte budget stops the reader before a
 * record it does not cover; unwanted records are freed (zeroed) without
 * reaching the callback, and counted. */
START_TEST(test_byte_budget_and_unwanted) {
        static struct collected got;
        const struct ring_read_ops ops = { .want = want_odd_values, .record = collect };
        struct ring_budget budget = { .turns = 100, .bytes = RING_UNWANTED_CHARGE + 8 + 7 };
        bool wake;

        for (unsigned i = 0; i < 6; i++)
                ck_assert_int_eq(write_u64(i, 1, i, &wake), 0);
        ck_assert_int_eq(ring_read(&reader, &budget, scratch, &ops, &got), 2);
        ck_assert_uint_eq(budget.bytes, 7);           /* 256 unwanted, then 8: its payload */
        ck_assert_uint_eq(budget.turns, 98);
        ck_assert(budget.starved);                      /* the third's 8 > 7 */
        ck_assert_uint_eq(reader.head, 64);
        ck_assert_uint_eq(got.n, 1);                    /* index 1 only */
        ck_assert_uint_eq(got.recs[0].write_index, 1);
        for (unsigned i = 0; i < 64; i++)
                ck_assert_uint_eq(data[i], 0);
        /* An unwanted record whose claim is covered goes, and takes what
         * is left of the rest of its charge. */
        budget.bytes = 8 + 8 + 7;
        ck_assert_int_eq(ring_read(&reader, &budget, scratch, &ops, &got), 1);
        ck_assert_uint_eq(budget.bytes, 0);
        ck_assert_uint_eq(reader.head, 96);
        ck_assert_uint_eq(got.n, 1);
        budget = (struct ring_budget) { .turns = 100, .bytes = UINT64_MAX };
        ck_assert_int_eq(ring_read(&reader, &budget, scratch, &ops, &got), 3);
        ck_assert(!budget.starved);                     /* emptied, not stopped */
        ck_assert_uint_eq(got.n, 3);
        ck_assert_uint_eq(got.recs[2].write_index, 5);
}
END_TEST

/* Copies the record, then says it went nowhere (every taker lost it). */
static bool collect_then_lose(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        collect(rec, payload, userdata);
        return false;
}

/* A wanted record that went nowhere after all is charged as an unwanted
 * one: RING_UNWANTED_CHARGE, not its claim. */
START_TEST(test_lost_record_charged_as_unwanted) {
        static struct collected got;
        const struct ring_read_ops ops = { .record = collect_then_lose };
        struct ring_budget budget = { .turns = 100, .bytes = RING_UNWANTED_CHARGE + 8 + 7 };
        bool wake;

        for (unsigned i = 0; i < 3; i++)
                ck_assert_int_eq(write_u64(i, 1, i, &wake), 0);
        ck_assert_int_eq(ring_read(&reader, &budget, scratch, &ops, &got), 2);
        ck_assert_uint_eq(got.n, 2);                    /* both copied and handed out */
        ck_assert_uint_eq(budget.bytes, 0);             /* 256, then 8 and what was left */
        ck_assert_uint_eq(budget.turns, 98);
        ck_assert_uint_eq(reader.head, 64);
        /* Taken records cost their claim only. */
        budget.bytes = 8;
        ck_assert_int_eq(read_turns(100, collect, &got), 1);
        ck_assert_uint_eq(got.n, 3);
}
END_TEST

/* Threads of one process writing at once: each thread's records arrive in
 * its order, and every record was either read or counted as dropped. */
#define THREADS 4
#define PER_THREAD 200000u

static unsigned long long written_by[THREADS];
static int writers_done;

static void *writer_main(void *userdata) {
        uint32_t tid = (uint32_t) (uintptr_t) userdata;
        bool wake;

        for (uint64_t i = 0; i < PER_THREAD; i++)
                if (write_u64(tid, tid, i, &wake) == 0)
                        written_by[tid]++;
        __atomic_fetch_add(&writers_done, 1, __ATOMIC_RELEASE);
        return NULL;
}

struct ordered {
        uint64_t next[THREADS];
        unsigned long long received, out_of_order;
};

static bool check_order(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        struct ordered *o = userdata;
        uint64_t value;

        memcpy(&value, payload, sizeof(value));
        if (rec->tid >= THREADS || rec->write_index != rec->tid || value < o->next[rec->tid]) {
                o->out_of_order++;
                return true;
        }
        o->next[rec->tid] = value + 1;
        o->received++;
        return true;
}

START_TEST(test_threads) {
        static struct ordered o;
        pthread_t threads[THREADS];
        unsigned long long written = 0;

        memset(&o, 0, sizeof(o));
        writers_done = 0;
        for (uintptr_t t = 0; t < THREADS; t++) {
                written_by[t] = 0;
                ck_assert_int_eq(pthread_create(&threads[t], NULL, writer_main, (void *) t), 0);
        }
        /* Read while they write; then what is left. */
        while (__atomic_load_n(&writers_done, __ATOMIC_ACQUIRE) < THREADS)
                ck_assert_int_ge(read_turns(512, check_order, &o), 0);
        for (unsigned t = 0; t < THREADS; t++)
                pthread_join(threads[t], NULL);
        ck_assert_int_ge(read_turns(1u << 30, check_order, &o), 0);
        for (unsigned t = 0; t < THREADS; t++)
                written += written_by[t];
        ck_assert_uint_eq(o.out_of_order, 0);
        ck_assert_uint_eq(o.received, written);
        ck_assert_uint_eq(written + header.dropped, (unsigned long long) THREADS * PER_THREAD);
        ck_assert(!reader.broken);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("ring");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_round_trip_and_wrap);
        tcase_add_test(tc, test_padding);
        tcase_add_test(tc, test_full_and_too_large);
        tcase_add_test(tc, test_budget);
        tcase_add_test(tc, test_wakeup);
        tcase_add_test(tc, test_hostile);
        tcase_add_test(tc, test_hostile_tail);
        tcase_add_test(tc, test_paddings_count_against_budget);
        tcase_add_test(tc, test_record_past_the_end);
        tcase_add_test(tc, test_payload_len_beyond_the_record);
        tcase_add_test(tc, test_claims_checked_before_copying);
        tcase_add_test(tc, test_payload_over_the_broker_limit);
        tcase_add_test(tc, test_byte_budget_and_unwanted);
        tcase_add_test(tc, test_lost_record_charged_as_unwanted);
        tcase_add_test(tc, test_threads);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(suite());
}
