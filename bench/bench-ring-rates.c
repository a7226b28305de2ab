/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * In one run, the per-call cost of a write at the
 * rates programs write at, not in a tight loop. One writer thread, paced:
 * at 1k, 20k, 100k, 500k and 1M events/s each call is due at its time
 * (start + i / rate, a busy wait in between), for SECONDS_PER_RATE after a
 * quarter of that unmeasured, on each path in turn (each rate starting
 * with another path):
 *   ring          ueb_write() on a client with a ring ($UEBROKER_RING_KIB=1024)
 *   writev        ueb_write() on a client without ($UEBROKER_RING_KIB=0):
 *                 one writev to the data socket per call
 *   LTTng-UST     a tracepoint of the same payload (bench-lttng.h), recorded
 *                 by a session (run-bench.sh starts one), or why it is missing
 *   trace_marker  write() of as many bytes to a tracefs instance's
 *                 trace_marker (bench-trace-marker.h), or why it is missing
 * Each call is timed alone (CLOCK_MONOTONIC before and after; the cost of
 * that pair is printed): p50, mean and p99 in ns. A refused ueb_write()
 * (-EAGAIN: ring or socket full) is counted, not retried. Each ueb path's
 * event has a Record consumer of its own (its own stream), counting records
 * and LOST notices, so that every write handed over is checked to be
 * received or reported lost (written == received + lost). For the ring,
 * the consumer also takes each record's delivery latency: the time it
 * received the message (CLOCK_MONOTONIC) minus the record's
 * write_monotonic_ns, the writer's CLOCK_MONOTONIC at the write as the
 * ring carries it; and the part of it until the broker read the record:
 * the header's timestamp_ns (the broker's CLOCK_REALTIME when it read the
 * ring) brought to CLOCK_MONOTONIC with the offset between the two clocks
 * the consumer sees, minus the write time. Records of the data socket
 * carry no write time (the count of those that do is printed: 0).
 *
 * Then the idle test: 100 more clients, each its own ueb_client with a
 * ring (the default 64 KiB) and the idle event registered, a Record
 * consumer on that event, no writes for IDLE_SECONDS: the broker's CPU time
 * (utime + stime of /proc/$UEBROKERD_PID/stat) over that time, as % of one
 * CPU (the bound: 1%).
 *
 *   bench-ring-rates [IDLE_SECONDS [SECONDS_PER_RATE]]
 *       (defaults 60 and 1; needs a broker: run-bench.sh)
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-lttng.h"
#include "bench-record.h"
#include "bench-trace-marker.h"
#include "bench-util.h"
#include "broker-bus.h"
#include "bus-util.h"
#include "record-stream.h"
#include "ring.h"
#include "uebroker.h"

#define FIELDS " u64 seq; char[16] pad"
#define RING_EVENT "bench_rates_ring"
#define SOCKET_EVENT "bench_rates_writev"
#define IDLE_EVENT "bench_rates_idle"
#define IDLE_CLIENTS 100u
#define IDLE_RING_KIB 64u
#define DRAIN_WAIT_NSEC (5ull * 1000000000ull)

struct bench_payload {
        uint64_t seq;
        char pad[16];
};

/* The text written to trace_marker: as many bytes as the payload. */
static const char marker_text[sizeof(struct bench_payload)] = "benchmark 0123456789abc";

enum path { PATH_RING, PATH_SOCKET, PATH_LTTNG, PATH_MARKER, _PATH_MAX };

static const char *const path_names[_PATH_MAX] = {
        [PATH_RING] = "ueb_write, ring",
        [PATH_SOCKET] = "ueb_write, writev",
        [PATH_LTTNG] = "LTTng-UST tracepoint",
        [PATH_MARKER] = "trace_marker write()",
};

/* A Record consumer of one event's stream (bench-record.h's reader, with
 * the counters under a lock and the delivery latency of stamped records). */
struct consumer {
        int fd;
        volatile int stop;
        pthread_mutex_t lock;
        unsigned long long messages, records, lost, stamped;
        /* While @lat is set: the latency in ns of each record whose seq is
         * @lat_from or more, up to @lat_cap of them; in @pickup, the part
         * from the write until the broker read it (its timestamp_ns, on
         * CLOCK_MONOTONIC through the offset of the two clocks). */
        uint64_t *lat, *pickup;
        size_t lat_n, lat_cap;
        uint64_t lat_from;
        bool bad_stream;
};

static void *consumer_main(void *userdata) {
        struct consumer *c = userdata;
        static __thread uint8_t buf[UEB_RECORD_MESSAGE_MAX];

        for (;;) {
                struct pollfd p = { .fd = c->fd, .events = POLLIN };
                struct record_view rec;
                size_t offset = 0;
                struct timespec rt;
                int64_t realtime_minus_mono;
                uint64_t now;
                ssize_t n;
                int r;

                if (poll(&p, 1, 100) == 0) {
                        if (c->stop)
                                break;
                        continue;
                }
                n = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);
                now = bench_now_ns();
                clock_gettime(CLOCK_REALTIME, &rt);
                realtime_minus_mono = (int64_t) ((uint64_t) rt.tv_sec * 1000000000ull + (uint64_t) rt.tv_nsec) -
                                      (int64_t) now;
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        break;
                if (n < 0)
                        continue;
                pthread_mutex_lock(&c->lock);
                c->messages++;
                while ((r = record_stream_next(buf, (size_t) n, &offset, &rec)) > 0) {
                        struct bench_payload payload;

                        if (rec.header.flags & UEB_RECORD_FLAG_LOST) {
                                c->lost += rec.header.lost_count;
                                continue;
                        }
                        c->records++;
                        if (rec.header.write_monotonic_ns == 0)
                                continue;
                        c->stamped++;
                        if (!c->lat || c->lat_n >= c->lat_cap || rec.payload_len < sizeof(payload))
                                continue;
                        memcpy(&payload, rec.payload, sizeof(payload));
                        if (payload.seq >= c->lat_from) {
                                int64_t read_mono = (int64_t) rec.header.timestamp_ns - realtime_minus_mono;
                                int64_t w = (int64_t) rec.header.write_monotonic_ns;

                                c->lat[c->lat_n] = now > (uint64_t) w ? now - (uint64_t) w : 0;
                                c->pickup[c->lat_n] = read_mono > w ? (uint64_t) (read_mono - w) : 0;
                                c->lat_n++;
                        }
                }
                if (r < 0)
                        c->bad_stream = true;
                pthread_mutex_unlock(&c->lock);
        }
        return NULL;
}

static void consumer_counts(struct consumer *c, unsigned long long *records, unsigned long long *lost) {
        pthread_mutex_lock(&c->lock);
        *records = c->records;
        *lost = c->lost;
        pthread_mutex_unlock(&c->lock);
}

/* Waits until @c has received or been told lost @target records in all
 * (or DRAIN_WAIT_NSEC passed). */
static bool consumer_wait(struct consumer *c, unsigned long long target) {
        uint64_t deadline = bench_now_ns() + DRAIN_WAIT_NSEC;

        for (;;) {
                unsigned long long records, lost;

                consumer_counts(c, &records, &lost);
                if (records + lost >= target)
                        return true;
                if (bench_now_ns() > deadline)
                        return false;
                usleep(200);
        }
}

static int consumer_start(struct consumer *c, pthread_t *thread, sd_bus *bus, const char *event) {
        *c = (struct consumer) { .fd = bench_record_open(bus, event) };
        if (c->fd < 0)
                return -1;
        pthread_mutex_init(&c->lock, NULL);
        return pthread_create(thread, NULL, consumer_main, c) == 0 ? 0 : -1;
}

static void consumer_stop(struct consumer *c, pthread_t thread) {
        c->stop = 1;
        pthread_join(thread, NULL);
        close(c->fd);
}

static struct ueb_event *client_open(const char *ring_kib, const char *command, struct ueb_client **ret) {
        struct ueb_event *e = NULL;

        setenv("UEBROKER_RING_KIB", ring_kib, 1);
        if (ueb_open(ret) != 1 || ueb_register(*ret, command, &e) != 1) {
                fprintf(stderr, "no broker: %s (run through bench/run-bench.sh)\n", *ret ? ueb_last_error(*ret) : "");
                exit(1);
        }
        return e;
}

/* What the paths write to. */
struct targets {
        struct ueb_event *event[_PATH_MAX];     /* PATH_RING, PATH_SOCKET */
        struct consumer *consumer[_PATH_MAX];   /* the same */
        bool available[_PATH_MAX];
        const char *why[_PATH_MAX];             /* when not available */
        int marker_fd;
        const char *broker_pid;
};

struct stats {
        bool measured;
        unsigned long long calls;               /* timed calls (after the warm-up) */
        double achieved;                        /* timed calls per second */
        double p50, mean, p99;                  /* ns per call, timed calls */
        /* Over the whole run of the path, warm-up included: */
        unsigned long long written, refused, failed;
        /* ueb paths: what the consumer got for those writes. */
        unsigned long long received, lost;
        bool drained, accounted;
        /* ring: delivery latency of the timed calls' records, us. */
        size_t lat_n;
        double lat_p50, lat_p99, lat_max;
        double pickup_p50, pickup_p99, pickup_max;      /* of it, write -> broker read */
        /* CPU of what carries the events (the broker; LTTng's session and
         * consumer daemons) over the run, warm-up and drain included, per
         * event written, ns; < 0: not measured. */
        double carrier_ns_per_event;
};

/* The CPU of what carries @path's events, ns so far; -1: nothing to
 * measure (trace_marker: the kernel, in the writer's own time). */
static long long carrier_cpu_ns(enum path path, const struct targets *t) {
        switch (path) {
        case PATH_RING:
        case PATH_SOCKET:
                return bench_cpu_ns(t->broker_pid);
        case PATH_LTTNG:
                return bench_cpu_ns_of_comm("lttng-");
        default:
                return -1;
        }
}

/* @warm + @n calls on @path at @rate, call i due at start + i / rate,
 * only the last @n timed. */
static struct stats run_path(enum path path, struct targets *t, unsigned long long rate, unsigned long long warm,
                             unsigned long long n) {
        struct bench_payload payload = { 0, "paced" };
        struct iovec iov = { &payload, sizeof(payload) };
        struct ueb_event *e = t->event[path];
        struct consumer *c = t->consumer[path];
        uint64_t *cost = calloc(n, sizeof(*cost)), total = 0, start, timed_start = 0;
        unsigned long long records0 = 0, lost0 = 0;
        long long carrier0, carrier1;
        struct stats s = { .measured = true, .calls = n, .carrier_ns_per_event = -1 };

        if (!cost) {
                fprintf(stderr, "out of memory\n");
                exit(1);
        }
        if (c) {
                pthread_mutex_lock(&c->lock);
                records0 = c->records;
                lost0 = c->lost;
                if (path == PATH_RING) {
                        c->lat = calloc(n, sizeof(*c->lat));
                        c->pickup = calloc(n, sizeof(*c->pickup));
                        if (!c->lat || !c->pickup) {
                                fprintf(stderr, "out of memory\n");
                                exit(1);
                        }
                        c->lat_n = 0;
                        c->lat_cap = n;
                        c->lat_from = warm;
                }
                pthread_mutex_unlock(&c->lock);
        }

        carrier0 = carrier_cpu_ns(path, t);
        start = bench_now_ns();
        for (unsigned long long i = 0; i < warm + n; i++) {
                uint64_t t0, t1;
                int r;

                while (bench_now_ns() < start + i * 1000000000ull / rate)
                        ;
                payload.seq = i;
                t0 = bench_now_ns();
                switch (path) {
                case PATH_RING:
                case PATH_SOCKET:
                        r = ueb_enabled(e) ? ueb_write(e, &iov, 1) : -ENODATA;
                        break;
                case PATH_LTTNG:
                        bench_lttng_hit(i);
                        r = 0;
                        break;
                default:
                        r = write(t->marker_fd, marker_text, sizeof(marker_text)) == (ssize_t) sizeof(marker_text) ?
                                    0 : -errno;
                        break;
                }
                t1 = bench_now_ns();
                if (i == warm)
                        timed_start = t0;
                if (i >= warm) {
                        cost[i - warm] = t1 - t0;
                        total += t1 - t0;
                }
                if (r == 0)
                        s.written++;
                else if (r == -EAGAIN)
                        s.refused++;
                else
                        s.failed++;
        }
        s.achieved = (double) n * 1e9 / (double) (bench_now_ns() - timed_start);

        qsort(cost, n, sizeof(*cost), bench_compare_u64);
        s.p50 = (double) bench_rank(cost, n, 50);
        s.p99 = (double) bench_rank(cost, n, 99);
        s.mean = (double) total / (double) n;
        free(cost);

        if (c) {
                s.drained = consumer_wait(c, records0 + lost0 + s.written);
                pthread_mutex_lock(&c->lock);
                s.received = c->records - records0;
                s.lost = c->lost - lost0;
                s.accounted = s.received + s.lost == s.written;
                if (c->lat) {
                        qsort(c->lat, c->lat_n, sizeof(*c->lat), bench_compare_u64);
                        s.lat_n = c->lat_n;
                        s.lat_p50 = (double) bench_rank(c->lat, c->lat_n, 50) / 1000.0;
                        s.lat_p99 = (double) bench_rank(c->lat, c->lat_n, 99) / 1000.0;
                        s.lat_max = c->lat_n ? (double) c->lat[c->lat_n - 1] / 1000.0 : 0;
                        qsort(c->pickup, c->lat_n, sizeof(*c->pickup), bench_compare_u64);
                        s.pickup_p50 = (double) bench_rank(c->pickup, c->lat_n, 50) / 1000.0;
                        s.pickup_p99 = (double) bench_rank(c->pickup, c->lat_n, 99) / 1000.0;
                        s.pickup_max = c->lat_n ? (double) c->pickup[c->lat_n - 1] / 1000.0 : 0;
                        free(c->lat);
                        free(c->pickup);
                        c->lat = c->pickup = NULL;
                        c->lat_cap = c->lat_n = 0;
                }
                pthread_mutex_unlock(&c->lock);
        } else if (path == PATH_LTTNG)
                usleep(200000);         /* its consumer daemon reads sub-buffers on a timer */
        carrier1 = carrier_cpu_ns(path, t);
        if (carrier0 >= 0 && carrier1 >= carrier0 && s.written > 0)
                s.carrier_ns_per_event = (double) (carrier1 - carrier0) / (double) s.written;
        return s;
}

/* The cost of the timing itself: the p50 of an empty timed region. */
static double timer_overhead_ns(void) {
        enum { N = 100000 };
        static uint64_t v[N];

        for (unsigned i = 0; i < N; i++) {
                uint64_t t0 = bench_now_ns();

                v[i] = bench_now_ns() - t0;
        }
        qsort(v, N, sizeof(v[0]), bench_compare_u64);
        return (double) bench_rank(v, N, 50);
}

/* The broker's ring memory in use, all users (the Pools property), or -1. */
static long long ring_bytes_held(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        long long held = -1;
        const char *key;
        uint64_t total, pool, share;

        if (sd_bus_get_property(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Pools", &error, &reply,
                                "a(sttt)") < 0)
                goto out;
        if (sd_bus_message_enter_container(reply, 'a', "(sttt)") <= 0)
                goto out;
        while (sd_bus_message_read(reply, "(sttt)", &key, &total, &pool, &share) > 0)
                if (strcmp(key, "ring-bytes") == 0)
                        held = (long long) total;
out:
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return held;
}

static void print_row(enum path p, const struct targets *t, const struct stats *s) {
        if (!t->available[p]) {
                printf("  %-22s not measured (%s)\n", path_names[p], t->why[p]);
                return;
        }
        printf("  %-22s %9.0f %9.0f %9.0f %10.0f", path_names[p], s->p50, s->mean, s->p99, s->achieved);
        if (p == PATH_RING || p == PATH_SOCKET)
                printf(" %9llu %8llu %9llu %6llu  %s%s\n", s->written, s->refused, s->received, s->lost,
                       s->accounted ? "yes" : "NO", s->drained ? "" : " (timed out)");
        else if (p == PATH_LTTNG)
                printf(" %9llu hits while the session recorded\n", s->written);
        else
                printf(" %9llu written, %llu failed\n", s->written, s->failed);
        if (s->carrier_ns_per_event >= 0)
                printf("  %-22s carrier CPU %.0f ns per event written (%.1f ms per million: %s)\n", "",
                       s->carrier_ns_per_event, s->carrier_ns_per_event,
                       p == PATH_LTTNG ? "lttng-sessiond + lttng-consumerd" : "uebrokerd");
        if ((p == PATH_RING || p == PATH_SOCKET) && s->failed)
                printf("  %-22s %llu calls failed otherwise (event not enabled, or another error)\n", "", s->failed);
}

int main(int argc, char *argv[]) {
        static const unsigned long long rates[] = { 1000, 20000, 100000, 500000, 1000000 };
        enum { N_RATES = sizeof(rates) / sizeof(rates[0]) };
        double idle_seconds = argc > 1 ? atof(argv[1]) : 60.0;
        double seconds = argc > 2 ? atof(argv[2]) : 1.0;
        const char *broker_pid = getenv("UEBROKERD_PID"), *bus_pid = getenv("DBUS_DAEMON_PID");
        struct ueb_client *ring_client = NULL, *socket_client = NULL, *idle_clients[IDLE_CLIENTS] = {};
        struct ueb_event *idle_events[IDLE_CLIENTS] = {};
        struct consumer ring_consumer, socket_consumer, idle_consumer;
        pthread_t ring_thread, socket_thread, idle_thread;
        struct stats results[N_RATES][_PATH_MAX] = {};
        struct targets t = { .marker_fd = -1 };
        struct bench_trace_marker_result marker = { 0 };
        char marker_instance[1100];
        const char *lttng_why = NULL;
        bool all_accounted = true;
        sd_bus *bus = NULL;

        if (argc > 3 || idle_seconds <= 0 || idle_seconds > 3600 || seconds <= 0 || seconds > 60) {
                fprintf(stderr, "usage: %s [IDLE_SECONDS [SECONDS_PER_RATE]]\n", argv[0]);
                return 2;
        }
        if (!broker_pid) {
                fprintf(stderr, "UEBROKERD_PID is not set (run through bench/run-bench.sh)\n");
                return 2;
        }
        bench_raise_fd_limit();
        t.broker_pid = broker_pid;

        t.event[PATH_RING] = client_open("1024", RING_EVENT FIELDS, &ring_client);
        t.event[PATH_SOCKET] = client_open("0", SOCKET_EVENT FIELDS, &socket_client);
        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        if (consumer_start(&ring_consumer, &ring_thread, bus, RING_EVENT) < 0 ||
            consumer_start(&socket_consumer, &socket_thread, bus, SOCKET_EVENT) < 0)
                return 1;
        t.consumer[PATH_RING] = &ring_consumer;
        t.consumer[PATH_SOCKET] = &socket_consumer;
        if (!ueb_enabled(t.event[PATH_RING]) || !ueb_enabled(t.event[PATH_SOCKET])) {
                fprintf(stderr, "Record did not enable the events\n");
                return 1;
        }
        t.available[PATH_RING] = t.available[PATH_SOCKET] = true;
        t.available[PATH_LTTNG] = bench_lttng_ready(&lttng_why);
        t.why[PATH_LTTNG] = lttng_why;
        t.marker_fd = bench_trace_marker_open(&marker, marker_instance, sizeof(marker_instance));
        t.available[PATH_MARKER] = t.marker_fd >= 0;
        t.why[PATH_MARKER] = marker.why;

        printf("one writer thread, paced: each call due at its time (busy wait between), %zu payload bytes; "
               "%.2f s measured per rate and path after %.2f s unmeasured, each rate starting with another path\n",
               sizeof(struct bench_payload), seconds, seconds / 4);
        printf("ueb paths: a Record consumer per path (its own stream); a refused write (EAGAIN: ring or socket "
               "full) counted, not retried; written/refused/received/lost over the whole run of the path, "
               "warm-up included; accounted: written == received + lost\n");
        printf("per call in ns (CLOCK_MONOTONIC before and after each call; the pair alone costs %.0f ns, "
               "included)\n", timer_overhead_ns());

        for (size_t i = 0; i < N_RATES; i++) {
                unsigned long long n = (unsigned long long) ((double) rates[i] * seconds);
                unsigned long long warm = n / 4;
                struct stats *r = results[i];

                if (n == 0)
                        n = 1;
                for (unsigned j = 0; j < _PATH_MAX; j++) {
                        enum path p = (enum path) ((i + j) % _PATH_MAX);

                        if (t.available[p])
                                r[p] = run_path(p, &t, rates[i], warm, n);
                }

                printf("\n== %llu events/s: %llu calls timed per path\n", rates[i], n);
                printf("  %-22s %9s %9s %9s %10s %9s %8s %9s %6s  %s\n", "path", "p50", "mean", "p99", "achieved/s",
                       "written", "refused", "received", "lost", "accounted");
                for (enum path p = 0; p < _PATH_MAX; p++)
                        print_row(p, &t, &r[p]);
                for (enum path p = PATH_RING; p <= PATH_SOCKET; p++)
                        if (!r[p].accounted || !r[p].drained)
                                all_accounted = false;
                if (t.available[PATH_LTTNG]) {
                        bench_report("ueb_write, ring, mean", r[PATH_RING].mean, "LTTng-UST tracepoint, mean",
                                     r[PATH_LTTNG].mean, "ns/call");
                        bench_report("ueb_write, ring, p99", r[PATH_RING].p99, "LTTng-UST tracepoint, p99",
                                     r[PATH_LTTNG].p99, "ns/call");
                        bench_report("ueb_write, writev, mean", r[PATH_SOCKET].mean, "LTTng-UST tracepoint, mean",
                                     r[PATH_LTTNG].mean, "ns/call");
                        bench_report("ueb_write, writev, p99", r[PATH_SOCKET].p99, "LTTng-UST tracepoint, p99",
                                     r[PATH_LTTNG].p99, "ns/call");
                        if (t.available[PATH_MARKER]) {
                                bench_report("trace_marker write(), mean", r[PATH_MARKER].mean,
                                             "LTTng-UST tracepoint, mean", r[PATH_LTTNG].mean, "ns/call");
                                bench_report("trace_marker write(), p99", r[PATH_MARKER].p99,
                                             "LTTng-UST tracepoint, p99", r[PATH_LTTNG].p99, "ns/call");
                        }
                } else
                        printf("ratios vs LTTng-UST tracepoint: not measured (%s)\n", t.why[PATH_LTTNG]);
                printf("ring delivery latency (write -> recorder): p50 %.1f us, p99 %.1f us, max %.1f us "
                       "(%zu records of the timed calls)\n",
                       r[PATH_RING].lat_p50, r[PATH_RING].lat_p99, r[PATH_RING].lat_max, r[PATH_RING].lat_n);
                printf("  of which write -> broker read:      p50 %.1f us, p99 %.1f us, max %.1f us\n",
                       r[PATH_RING].pickup_p50, r[PATH_RING].pickup_p99, r[PATH_RING].pickup_max);
        }
        if (t.marker_fd >= 0)
                bench_trace_marker_close(t.marker_fd, marker_instance);
        {
                unsigned long long ring_stamped, ring_records, socket_stamped;

                pthread_mutex_lock(&ring_consumer.lock);
                ring_stamped = ring_consumer.stamped;
                ring_records = ring_consumer.records;
                pthread_mutex_unlock(&ring_consumer.lock);
                pthread_mutex_lock(&socket_consumer.lock);
                socket_stamped = socket_consumer.stamped;
                pthread_mutex_unlock(&socket_consumer.lock);
                printf("\nring records carrying the writer's time: %llu of %llu (%s)\n", ring_stamped, ring_records,
                       ring_stamped == ring_records ? "all went through the ring" :
                                                      "NOT all: the ring client wrote to its socket at times");
                printf("writev records carrying a write time: %llu (the data socket path has none: no delivery "
                       "latency for it)\n", socket_stamped);
        }

        /* The summary, one line per rate. */
        printf("\nsummary, ns per call p50 / mean / p99 (refused); ring latency us p50 / p99 / max\n");
        printf("| events/s | ueb ring | ueb writev | LTTng-UST | trace_marker | ring / LTTng mean, p99 | "
               "ring latency |\n|---|---|---|---|---|---|---|\n");
        for (size_t i = 0; i < N_RATES; i++) {
                const struct stats *r = results[i];

                printf("| %llu | %.0f / %.0f / %.0f (%llu) | %.0f / %.0f / %.0f (%llu) | ", rates[i], r[PATH_RING].p50,
                       r[PATH_RING].mean, r[PATH_RING].p99, r[PATH_RING].refused, r[PATH_SOCKET].p50,
                       r[PATH_SOCKET].mean, r[PATH_SOCKET].p99, r[PATH_SOCKET].refused);
                if (t.available[PATH_LTTNG])
                        printf("%.0f / %.0f / %.0f | ", r[PATH_LTTNG].p50, r[PATH_LTTNG].mean, r[PATH_LTTNG].p99);
                else
                        printf("not measured | ");
                if (t.available[PATH_MARKER])
                        printf("%.0f / %.0f / %.0f | ", r[PATH_MARKER].p50, r[PATH_MARKER].mean, r[PATH_MARKER].p99);
                else
                        printf("not measured | ");
                if (t.available[PATH_LTTNG])
                        printf("%.2f, %.2f | ", r[PATH_RING].mean / r[PATH_LTTNG].mean,
                               r[PATH_RING].p99 / r[PATH_LTTNG].p99);
                else
                        printf("not measured | ");
                printf("%.1f / %.1f / %.1f |\n", r[PATH_RING].lat_p50, r[PATH_RING].lat_p99, r[PATH_RING].lat_max);
        }

        /* The idle test: 100 ring clients, a recorder, no writes. */
        {
                long long held0 = ring_bytes_held(bus), held1, b0, b1, bus0 = -1, bus1 = -1, self0, self1;
                long ticks_per_s = sysconf(_SC_CLK_TCK);
                unsigned enabled = 0;
                uint64_t w0, w1;
                double wall, pct;

                printf("\n== idle: %u clients, each its own connection with a %u KiB ring and %s registered, a "
                       "Record consumer attached, no writes, %.0f s\n",
                       IDLE_CLIENTS, IDLE_RING_KIB, IDLE_EVENT, idle_seconds);
                for (unsigned i = 0; i < IDLE_CLIENTS; i++) {
                        char kib[16];

                        snprintf(kib, sizeof(kib), "%u", IDLE_RING_KIB);
                        idle_events[i] = client_open(kib, IDLE_EVENT FIELDS, &idle_clients[i]);
                }
                held1 = ring_bytes_held(bus);
                if (consumer_start(&idle_consumer, &idle_thread, bus, IDLE_EVENT) < 0)
                        return 1;
                /* Let the status bytes and the broker settle. */
                sleep(1);
                for (unsigned i = 0; i < IDLE_CLIENTS; i++)
                        enabled += ueb_enabled(idle_events[i]);
                printf("clients whose event the consumer enabled: %u of %u\n", enabled, IDLE_CLIENTS);
                if (held0 >= 0 && held1 >= 0)
                        printf("broker's ring memory: %lld KiB more held after they opened (%u rings of %u KiB and a "
                               "%u-byte header each would be %u KiB)\n",
                               (held1 - held0) / 1024, IDLE_CLIENTS, IDLE_RING_KIB, RING_HEADER_SIZE,
                               IDLE_CLIENTS * (IDLE_RING_KIB + RING_HEADER_SIZE / 1024));
                else
                        printf("broker's ring memory: the Pools property could not be read\n");

                b0 = bench_cpu_ticks(broker_pid);
                if (bus_pid)
                        bus0 = bench_cpu_ticks(bus_pid);
                self0 = bench_cpu_ticks("self");
                w0 = bench_now_ns();
                usleep((useconds_t) (idle_seconds * 1e6));
                w1 = bench_now_ns();
                b1 = bench_cpu_ticks(broker_pid);
                if (bus_pid)
                        bus1 = bench_cpu_ticks(bus_pid);
                self1 = bench_cpu_ticks("self");
                wall = (double) (w1 - w0) / 1e9;

                pthread_mutex_lock(&idle_consumer.lock);
                printf("idle consumer received %llu records, %llu lost (no writes: 0 expected)\n",
                       idle_consumer.records, idle_consumer.lost);
                pthread_mutex_unlock(&idle_consumer.lock);
                if (b0 < 0 || b1 < 0) {
                        printf("broker CPU: cannot read /proc/%s/stat\n", broker_pid);
                } else {
                        pct = (double) (b1 - b0) / (double) ticks_per_s / wall * 100.0;
                        printf("broker CPU over %.1f s idle: %lld ticks of 1/%ld s (utime+stime, /proc/%s/stat)\n",
                               wall, b1 - b0, ticks_per_s, broker_pid);
                        bench_report("broker CPU, 100 idle rings", pct, "bound", 1.0, "% CPU");
                }
                if (bus0 >= 0 && bus1 >= 0)
                        printf("dbus-daemon CPU meanwhile: %.3f %% of one CPU\n",
                               (double) (bus1 - bus0) / (double) ticks_per_s / wall * 100.0);
                if (self0 >= 0 && self1 >= 0)
                        printf("this process (the %u clients' threads, the consumers, LTTng-UST's) meanwhile: "
                               "%.3f %% of one CPU\n",
                               IDLE_CLIENTS, (double) (self1 - self0) / (double) ticks_per_s / wall * 100.0);
        }

        printf("\nevery write handed over received or reported lost, on both ueb paths at every rate: %s\n",
               all_accounted ? "yes" : "NO");
        consumer_stop(&idle_consumer, idle_thread);
        for (unsigned i = 0; i < IDLE_CLIENTS; i++)
                ueb_close(idle_clients[i]);
        consumer_stop(&ring_consumer, ring_thread);
        consumer_stop(&socket_consumer, socket_thread);
        sd_bus_flush_close_unref(bus);
        ueb_close(ring_client);
        ueb_close(socket_client);
        return all_accounted ? 0 : 1;
}
