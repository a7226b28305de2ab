/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* What an enabled write through the ring is made of, each part timed
 * alone in the same bursts as ueb_write() (bench-ring-write.c), so that
 * the difference between the parts and the whole is visible:
 *   clock      clock_gettime(CLOCK_MONOTONIC), the record's timestamp
 *   copy       the record (24-byte header and the payload) into a 1 MiB
 *              area, at successive 8-byte aligned places, as the ring does
 *   commit     a release store of the record's first word
 *   limit      the three in one loop: what a single-threaded writer with
 *              nothing to coordinate would pay
 *   ring_write ring.c's writer on a private ring nobody reads (its head
 *              moved on between bursts): the reservation (compare and
 *              swap), the sequentially consistent commit and the look at
 *              the broker's waiting word, without the library around it
 *              (the clock read included, as ueb_write() passes it)
 *   lock       pthread_rwlock_tryrdlock() and unlock: ueb_write() holds
 *              its client's swap lock for reading while it writes
 *   counter    a relaxed atomic increment: ueb_write() counts each write
 *              in its event's statistics
 * The caller prints them beside ueb_write()'s own figure. */

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "bench-util.h"
#include "ring.h"
#include "time-util.h"

struct bench_writer_parts {
        double clock_ns, copy_ns, commit_ns, limit_ns, ring_write_ns, lock_ns, counter_ns;
        unsigned long long ring_write_failed;   /* must be 0 */
};

/* Keeps the compiler from dropping a loop whose results nobody reads. */
static volatile uint64_t bench_writer_parts_sink;

/* @n calls in bursts of @burst of one part, @part(i) each; ns per call. */
#define BENCH_WRITER_PART(n, burst, part)                                               \
        ({                                                                              \
                uint64_t _timed = 0;                                                    \
                for (unsigned long long _done = 0; _done < (n);) {                      \
                        unsigned long long _k = (n) - _done < (burst) ? (n) - _done : (burst); \
                        uint64_t _t0 = bench_now_ns();                                  \
                        for (unsigned long long i = _done; i < _done + _k; i++)         \
                                part;                                                   \
                        _timed += bench_now_ns() - _t0;                                 \
                        _done += _k;                                                    \
                }                                                                       \
                (double) _timed / (double) (n);                                         \
        })

/* The parts of writes of @payload_len bytes from @payload, @n of each.
 * false when memory for the private ring is missing. */
static inline bool bench_writer_parts_run(const void *payload, size_t payload_len, unsigned long long n,
                                          unsigned burst, struct bench_writer_parts *ret) {
        const size_t size = RING_DATA_MAX, need = RING_ALIGN_UP(sizeof(struct ring_record) + payload_len);
        const size_t mask = size - 1;
        struct ring_header *header = aligned_alloc(4096, RING_HEADER_SIZE);
        uint8_t *data = aligned_alloc(4096, size);
        pthread_rwlock_t lock = PTHREAD_RWLOCK_INITIALIZER;
        struct ring_writer w;
        uint64_t sum = 0, counter = 0;

        if (!header || !data) {
                free(header);
                free(data);
                return false;
        }
        memset(header, 0, RING_HEADER_SIZE);
        memset(data, 0, size);

        ret->clock_ns = BENCH_WRITER_PART(n, burst, sum += clock_ns(CLOCK_MONOTONIC));
        ret->copy_ns = BENCH_WRITER_PART(n, burst, ({
                uint8_t *p = data + ((i * need) & mask);
                struct ring_record rec = { .write_index = 1, .tid = 2, .payload_len = (uint32_t) payload_len,
                                           .timestamp_ns = i };
                memcpy(p + 4, (const uint8_t *) &rec + 4, sizeof(rec) - 4);
                memcpy(p + sizeof(rec), payload, payload_len);
        }));
        ret->commit_ns = BENCH_WRITER_PART(n, burst,
                __atomic_store_n((uint32_t *) (data + ((i * need) & mask)), (uint32_t) need | RING_COMMITTED,
                                 __ATOMIC_RELEASE));
        ret->limit_ns = BENCH_WRITER_PART(n, burst, ({
                uint8_t *p = data + ((i * need) & mask);
                struct ring_record rec = { .write_index = 1, .tid = 2, .payload_len = (uint32_t) payload_len,
                                           .timestamp_ns = clock_ns(CLOCK_MONOTONIC) };
                memcpy(p + 4, (const uint8_t *) &rec + 4, sizeof(rec) - 4);
                memcpy(p + sizeof(rec), payload, payload_len);
                __atomic_store_n((uint32_t *) p, (uint32_t) need | RING_COMMITTED, __ATOMIC_RELEASE);
        }));

        /* ring_write() on the private ring: between bursts (untimed) the
         * head is moved to the tail, as a reader that took everything
         * would. A burst fits a 1 MiB ring when burst * need does. */
        memset(header, 0, RING_HEADER_SIZE);
        w = (struct ring_writer) { .header = header, .data = data, .size = (uint32_t) size };
        {
                struct iovec iov = { (void *) payload, payload_len };
                uint64_t timed = 0;
                bool wake;

                ret->ring_write_failed = 0;
                for (unsigned long long done = 0; done < n;) {
                        unsigned long long k = n - done < burst ? n - done : burst;
                        uint64_t t0;

                        header->head = header->tail;
                        t0 = bench_now_ns();
                        for (unsigned long long i = 0; i < k; i++)
                                if (ring_write(&w, 1, 2, clock_ns(CLOCK_MONOTONIC), &iov, 1, payload_len, &wake) < 0)
                                        ret->ring_write_failed++;
                        timed += bench_now_ns() - t0;
                        done += k;
                }
                ret->ring_write_ns = (double) timed / (double) n;
        }
        ret->lock_ns = BENCH_WRITER_PART(n, burst, ({
                if (pthread_rwlock_tryrdlock(&lock) == 0)
                        pthread_rwlock_unlock(&lock);
        }));
        ret->counter_ns = BENCH_WRITER_PART(n, burst, __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
        sum += counter;
        bench_writer_parts_sink = sum;
        free(header);
        free(data);
        return true;
}
