/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of an enabled ueb_write() on each path, with a Record consumer
 * attached and every event delivered:
 *   ring    a client with a ring (OpenRing; $UEBROKER_RING_KIB=1024 here)
 *   writev  a client without ($UEBROKER_RING_KIB=0): one sendmsg() each
 *   lttng   an LTTng-UST tracepoint of the same payload, when built with
 *           lttng-ust and a session records it (run-bench.sh sets one up);
 *           otherwise the line says why it is missing
 *   trace_marker  write() of as many bytes to a tracefs instance's
 *           trace_marker (bench-trace-marker.h), or why it is missing
 *   parts   what a write through the ring is made of, each timed alone
 *           (bench-writer-parts.h): the limit, and how close ueb_write()
 *           gets to it
 * Writes go in bursts that fit the path's buffer (the ring, the socket);
 * only the bursts are timed, and between bursts the consumer catches up,
 * so the figure is the cost of a write that is delivered, not of one that
 * is refused. Then delivery at a paced 1M events/s through the ring for a
 * second: how many the consumer received. Then the writev path paced at
 * rising rates, half a second each, a refused write counted as lost:
 * the highest rate at which the consumer received every event.
 *   bench-ring-write [EVENTS]   (default 1M; needs a broker: run-bench.sh)
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-lttng.h"
#include "bench-record.h"
#include "bench-trace-marker.h"
#include "bench-util.h"
#include "bench-writer-parts.h"
#include "bus-util.h"
#include "uebroker.h"

#define BENCH_COMMAND "bench_ring u64 seq; char[16] pad"
#define PACED_RATE 1000000ull

struct bench_payload {
        uint64_t seq;
        char pad[16];
};

static struct ueb_event *open_client(const char *ring_kib, struct ueb_client **ret) {
        struct ueb_event *e = NULL;

        setenv("UEBROKER_RING_KIB", ring_kib, 1);
        if (ueb_open(ret) != 1 || ueb_register(*ret, BENCH_COMMAND, &e) != 1) {
                fprintf(stderr, "no broker: %s (run through bench/run-bench.sh)\n", *ret ? ueb_last_error(*ret) : "");
                exit(1);
        }
        return e;
}

/* Waits until the consumer has @target records (or 5 s passed). */
static bool wait_received(struct bench_reader *rd, unsigned long long target) {
        for (unsigned i = 0; i < 50000; i++) {
                if (__atomic_load_n(&rd->records, __ATOMIC_RELAXED) + __atomic_load_n(&rd->lost, __ATOMIC_RELAXED) >=
                    target)
                        return true;
                usleep(100);
        }
        return false;
}

struct burst_result {
        double ns_per_call;
        unsigned long long written, refused;
        bool delivered;
};

/* @n writes in bursts of @burst through @e, timing only the bursts. */
static struct burst_result run_bursts(struct ueb_event *e, struct bench_reader *rd, unsigned long long n,
                                      unsigned burst) {
        struct bench_payload payload = { 0, "benchmark" };
        struct iovec iov = { &payload, sizeof(payload) };
        struct burst_result res = { 0 };
        unsigned long long base = __atomic_load_n(&rd->records, __ATOMIC_RELAXED) + rd->lost;
        uint64_t timed = 0;

        res.delivered = true;
        for (unsigned long long done = 0; done < n;) {
                unsigned k = n - done < burst ? (unsigned) (n - done) : burst;
                uint64_t t0 = bench_now_ns();

                for (unsigned i = 0; i < k; i++) {
                        payload.seq = done + i;
                        if (ueb_enabled(e) && ueb_write(e, &iov, 1) == 0)
                                res.written++;
                        else
                                res.refused++;
                }
                timed += bench_now_ns() - t0;
                done += k;
                if (!wait_received(rd, base + res.written))
                        res.delivered = false;
        }
        res.ns_per_call = (double) timed / (double) n;
        return res;
}

struct paced_result {
        unsigned long long written, refused, received, lost;
        bool complete;
};

/* @rate events/s through @e for @seconds, each event due at its time (a
 * busy wait), a refused write not retried. */
static struct paced_result run_paced(struct ueb_event *e, struct bench_reader *rd, unsigned long long rate,
                                     double seconds) {
        struct bench_payload payload = { 0, "paced" };
        struct iovec iov = { &payload, sizeof(payload) };
        unsigned long long n = (unsigned long long) ((double) rate * seconds);
        unsigned long long records = rd->records, lost = rd->lost;
        struct paced_result res = { 0 };
        uint64_t start = bench_now_ns();

        for (unsigned long long i = 0; i < n; i++) {
                while (bench_now_ns() < start + i * 1000000000ull / rate)
                        ;
                payload.seq = i;
                if (ueb_write(e, &iov, 1) == 0)
                        res.written++;
                else
                        res.refused++;
        }
        (void) wait_received(rd, records + lost + res.written);
        res.received = rd->records - records;
        res.lost = rd->lost - lost;
        res.complete = res.refused == 0 && res.lost == 0 && res.received == n;
        return res;
}

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 1000000ull), paced_written = 0, paced_refused = 0;
        struct bench_reader consumer = { 0 };
        struct ueb_client *ring_client = NULL, *plain_client = NULL;
        struct ueb_event *ring_event, *plain_event;
        struct burst_result ring, plain;
        struct bench_lttng_result lttng;
        struct bench_trace_marker_result marker;
        struct bench_writer_parts parts;
        bool have_parts;
        /* As many bytes as a record's payload, as text. */
        static const char marker_text[sizeof(struct bench_payload)] = "benchmark 0123456789abc";
        pthread_t consumer_thread;
        sd_bus *bus = NULL;
        unsigned long long before, records_before, lost_before;
        bool all;

        ring_event = open_client("1024", &ring_client);
        plain_event = open_client("0", &plain_client);
        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        consumer.fd = bench_record_open(bus, "bench_ring");
        if (consumer.fd < 0 || !ueb_enabled(ring_event)) {
                fprintf(stderr, "Record did not enable the event\n");
                return 1;
        }
        pthread_create(&consumer_thread, NULL, bench_reader_main, &consumer);

        printf("%llu enabled writes of %zu payload bytes on each path, a Record consumer attached; bursts that fit "
               "the path's buffer, timed, then the consumer catches up\n",
               n, sizeof(struct bench_payload));
        /* A 1 MiB ring holds 21845 such records; a socket about 278. */
        ring = run_bursts(ring_event, &consumer, n, 8192);
        plain = run_bursts(plain_event, &consumer, n, 200);
        lttng = bench_lttng_run(n, 8192);
        marker = bench_trace_marker_run(marker_text, sizeof(marker_text), n);
        {
                struct bench_payload payload = { 0, "benchmark" };

                have_parts = bench_writer_parts_run(&payload, sizeof(payload), n, 8192, &parts);
        }

        bench_report("ueb_write, ring", ring.ns_per_call, "ueb_write, writev", plain.ns_per_call, "ns/call");
        if (lttng.available)
                bench_report("ueb_write, ring", ring.ns_per_call, "LTTng-UST tracepoint", lttng.ns_per_call,
                             "ns/call");
        else
                printf("LTTng-UST tracepoint: not measured (%s)\n", lttng.why);
        if (marker.available) {
                bench_report("ueb_write, ring", ring.ns_per_call, "trace_marker write()", marker.ns_per_call,
                             "ns/call");
                bench_report("ueb_write, writev", plain.ns_per_call, "trace_marker write()", marker.ns_per_call,
                             "ns/call");
                printf("trace_marker: %llu written, %llu failed (a tracefs instance of our own)\n", marker.written,
                       marker.failed);
        } else
                printf("trace_marker write(): not measured (%s)\n", marker.why);
        if (have_parts) {
                printf("the parts of a write through the ring, each alone, ns/call: clock read %.2f, copy of "
                       "the record %.2f, release store of its word %.2f; the three in one loop %.2f; lock and "
                       "unlock of a rwlock %.2f; relaxed atomic increment %.2f\n",
                       parts.clock_ns, parts.copy_ns, parts.commit_ns, parts.limit_ns, parts.lock_ns,
                       parts.counter_ns);
                bench_report("ueb_write, ring", ring.ns_per_call, "clock + copy + release store", parts.limit_ns,
                             "ns/call");
                bench_report("ueb_write, ring", ring.ns_per_call, "ring_write() alone, clock read in",
                             parts.ring_write_ns, "ns/call");
                if (parts.ring_write_failed)
                        printf("ring_write() alone: %llu writes FAILED (the figure is not one of writes)\n",
                               parts.ring_write_failed);
        } else
                printf("the parts of a write: not measured (no memory for a private ring)\n");
        printf("ring:   %llu written, %llu refused (ring full), all delivered: %s\n", ring.written, ring.refused,
               ring.delivered ? "yes" : "NO");
        printf("writev: %llu written, %llu refused (socket full), all delivered: %s\n", plain.written, plain.refused,
               plain.delivered ? "yes" : "NO");
        if (lttng.available)
                printf("lttng:  %llu tracepoints hit while the session recorded\n", n);

        /* Delivery: 1M events/s through the ring for a second, paced per
         * millisecond. */
        records_before = consumer.records;
        lost_before = consumer.lost;
        before = records_before + lost_before;
        {
                struct bench_payload payload = { 0, "paced" };
                struct iovec iov = { &payload, sizeof(payload) };
                uint64_t start = bench_now_ns();

                for (unsigned long long i = 0; i < PACED_RATE; i++) {
                        /* Event i is due at start + i us. */
                        while (bench_now_ns() < start + i * (1000000000ull / PACED_RATE))
                                ;
                        payload.seq = i;
                        if (ueb_write(ring_event, &iov, 1) == 0)
                                paced_written++;
                        else
                                paced_refused++;
                }
                all = wait_received(&consumer, before + paced_written);
                printf("paced %llu events/s for %.2f s through the ring: %llu written, %llu refused (ring full); "
                       "consumer received %llu, lost %llu%s\n",
                       PACED_RATE, (double) (bench_now_ns() - start) / 1e9, paced_written, paced_refused,
                       consumer.records - records_before, consumer.lost - lost_before, all ? "" : " (timed out)");
        }

        /* The writev path: the highest paced rate with every event
         * delivered, stopping at the first rate that loses any. */
        {
                static const unsigned long long rates[] = { 10000, 25000, 50000, 75000, 100000, 150000,
                                                            200000, 300000, 400000, 600000, 800000, 1000000 };
                unsigned long long best = 0;

                for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
                        struct paced_result p = run_paced(plain_event, &consumer, rates[i], 0.5);

                        printf("writev paced %7llu events/s for 0.5 s: %llu written, %llu refused (socket full), "
                               "consumer received %llu, lost %llu: %s\n",
                               rates[i], p.written, p.refused, p.received, p.lost,
                               p.complete ? "all delivered" : "NOT all delivered");
                        if (!p.complete)
                                break;
                        best = rates[i];
                }
                printf("writev path: highest paced rate with 100%% delivery %llu events/s (of the rates tried)\n",
                       best);
        }

        consumer.stop = 1;
        pthread_join(consumer_thread, NULL);
        sd_bus_flush_close_unref(bus);
        ueb_close(ring_client);
        ueb_close(plain_client);
        return ring.delivered && plain.delivered && paced_refused == 0 ? 0 : 1;
}
