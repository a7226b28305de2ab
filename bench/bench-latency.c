/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Register latency, p50 and p99 from per-call times, each beside its
 * baseline measured in the same run:
 *   1. on one connection (re-registering the same definition) vs the
 *      no-work stand-in bench-floor-service answering two fds on the same
 *      bus, with the same client code (bench_call());
 *   1b. Peer.Ping of the broker vs Peer.Ping of the stand-in, interleaved
 *      call by call on one connection;
 *   2. the first call of a fresh connection (connect, Hello, call) to the
 *      broker (Register) vs to the stand-in;
 *   3. Register and Peer.Ping to the broker while a record flood goes
 *      through it (one ueb_write() loop, a Record consumer attached) vs the
 *      same calls idle, and Peer.Ping of the stand-in beside them: what the
 *      flood costs any call on this machine (the writer and the consumer
 *      take CPU from the bus and the caller too) against what it costs the
 *      broker's.
 * The caller is whoever runs it (run-bench.sh: root); lines say which.
 *   bench-latency [CALLS]   (default 20000 calls each on one connection;
 *   CALLS/40 fresh connections each; CALLS/4 calls each idle and flooded.
 *   Needs $UEBROKER_BUS_ADDRESS with uebrokerd and bench-floor-service on
 *   it: run bench/run-bench.sh)
 */
#include <pthread.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench-floor.h"
#include "bench-record.h"
#include "bench-util.h"
#include "broker-bus.h"
#include "bus-util.h"
#include "uebroker.h"

#define REGISTER_COMMAND "bench_latency u32 a; __data_loc char[] s"
#define FLOOD_EVENT "bench_flood"
#define FLOOD_COMMAND FLOOD_EVENT " u64 seq; char[16] pad"

struct target {
        const char *destination, *path, *interface, *member, *arg;
};

static const struct target target_register = {
        BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Register", REGISTER_COMMAND
};
static const struct target target_floor = {
        BENCH_FLOOR_BUS_NAME, BENCH_FLOOR_OBJECT_PATH, BENCH_FLOOR_INTERFACE, BENCH_FLOOR_METHOD, REGISTER_COMMAND
};
static const struct target target_ping = {
        BROKER_BUS_NAME, BROKER_OBJECT_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL
};

static const struct target target_floor_ping = {
        BENCH_FLOOR_BUS_NAME, BENCH_FLOOR_OBJECT_PATH, "org.freedesktop.DBus.Peer", "Ping", NULL
};

static char caller[64];

static int timed_call(sd_bus *bus, const struct target *t, uint64_t *ret_ns) {
        uint64_t t0 = bench_now_ns();
        int r = bench_call(bus, t->destination, t->path, t->interface, t->member, t->arg);

        *ret_ns = bench_now_ns() - t0;
        return r;
}

/* Connect (socket, auth, Hello) and the first call, timed together; the
 * close is not timed, and the pause after it lets the service finish
 * with the departure before the next sample. */
static int timed_fresh_call(const char *address, const struct target *t, uint64_t *ret_ns) {
        uint64_t t0 = bench_now_ns();
        sd_bus *bus = NULL;
        int r;

        r = bus_open_address(address, &bus);
        if (r < 0) {
                fprintf(stderr, "cannot connect: %s\n", strerror(-r));
                return r;
        }
        r = bench_call(bus, t->destination, t->path, t->interface, t->member, t->arg);
        *ret_ns = bench_now_ns() - t0;
        sd_bus_flush_close_unref(bus);
        usleep(1000);
        return r;
}

/* p50 and p99 lines of @a against @b, named "@what pNN (@caller@where)". */
static void report_pair(const char *what, uint64_t *a, const char *baseline, uint64_t *b, size_t n,
                        const char *where) {
        char name[128], base_name[128];

        for (int i = 0; i < 2; i++) {
                double p = i == 0 ? 50.0 : 99.0;

                snprintf(name, sizeof(name), "%s p%.0f (%s%s)", what, p, caller, where);
                snprintf(base_name, sizeof(base_name), "%s p%.0f", baseline, p);
                bench_report(name, bench_percentile_us(a, n, p), base_name, bench_percentile_us(b, n, p), "us");
        }
}

/* The flood: one writer looping on ueb_write() and a Record consumer. */
struct flood {
        struct ueb_client *client;
        struct ueb_event *event;
        sd_bus *consumer_bus;
        struct bench_reader consumer;
        pthread_t consumer_thread, writer_thread;
        volatile int stop;
        unsigned long long attempts;
};

static void *flood_writer_main(void *userdata) {
        struct flood *f = userdata;
        struct { uint64_t seq; char pad[16]; } payload = { 0, "flood" };
        struct iovec iov = { &payload, sizeof(payload) };

        while (!f->stop) {
                payload.seq++;
                if (ueb_enabled(f->event))
                        (void) ueb_write(f->event, &iov, 1);
        }
        f->attempts = payload.seq;
        return NULL;
}

static int flood_start(struct flood *f, const char *address) {
        if (ueb_open(&f->client) != 1 || ueb_register(f->client, FLOOD_COMMAND, &f->event) != 1) {
                fprintf(stderr, "flood: cannot register: %s\n", f->client ? ueb_last_error(f->client) : "");
                return -1;
        }
        if (bus_open_address(address, &f->consumer_bus) < 0)
                return -1;
        f->consumer.fd = bench_record_open(f->consumer_bus, FLOOD_EVENT);
        if (f->consumer.fd < 0 || !ueb_enabled(f->event)) {
                fprintf(stderr, "flood: Record did not enable the event\n");
                return -1;
        }
        pthread_create(&f->consumer_thread, NULL, bench_reader_main, &f->consumer);
        pthread_create(&f->writer_thread, NULL, flood_writer_main, f);
        usleep(200000);         /* let it reach its steady state */
        return 0;
}

static void flood_stop(struct flood *f) {
        struct ueb_stats stats;

        f->stop = 1;
        pthread_join(f->writer_thread, NULL);
        usleep(200000);
        f->consumer.stop = 1;
        pthread_join(f->consumer_thread, NULL);
        safe_close(f->consumer.fd);
        ueb_event_stats(f->event, &stats);
        printf("  flood: %llu ueb_write() calls, %llu written, %llu dropped (broker busy); consumer received %llu "
               "(%llu lost)\n",
               f->attempts, (unsigned long long) stats.written, (unsigned long long) stats.dropped,
               f->consumer.records, f->consumer.lost);
        sd_bus_flush_close_unref(f->consumer_bus);
        ueb_close(f->client);
}

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 20000ull);
        size_t n_fresh = n / 40 ?: 1, n_flood = n / 4 ?: 1;
        const char *address = getenv("UEBROKER_BUS_ADDRESS");
        uint64_t *a = calloc(n, sizeof(uint64_t)), *b = calloc(n, sizeof(uint64_t));
        uint64_t *c = calloc(n, sizeof(uint64_t)), *d = calloc(n, sizeof(uint64_t));
        uint64_t *e = calloc(n, sizeof(uint64_t)), *f = calloc(n, sizeof(uint64_t));
        struct passwd *pw = getpwuid(geteuid());
        struct flood flood = {};
        sd_bus *bus = NULL;

        snprintf(caller, sizeof(caller), "%s", pw ? pw->pw_name : "uid ?");
        if (!a || !b || !c || !d || !e || !f)
                return 1;
        if (!address || bus_open_address(address, &bus) < 0) {
                fprintf(stderr, "set UEBROKER_BUS_ADDRESS (run bench/run-bench.sh)\n");
                return 1;
        }
        /* Warm up: the first Register creates the session and the event;
         * the rest return the same registration. */
        for (int i = 0; i < 100; i++)
                if (timed_call(bus, &target_register, &a[0]) < 0 || timed_call(bus, &target_floor, &b[0]) < 0 ||
                    timed_call(bus, &target_ping, &c[0]) < 0)
                        return 1;

        /* 1. One connection, interleaved so that both see the same machine. */
        for (size_t i = 0; i < n; i++)
                if (timed_call(bus, &target_register, &a[i]) < 0 || timed_call(bus, &target_floor, &b[i]) < 0)
                        return 1;
        printf("one connection, %llu calls each, caller %s:\n", n, caller);
        report_pair("Register", a, "floor: 2-fd no-work reply", b, n, ", 1 conn");

        /* 1b. Ping: what the broker adds to a call it does no work for. */
        for (size_t i = 0; i < n; i++)
                if (timed_call(bus, &target_ping, &a[i]) < 0 || timed_call(bus, &target_floor_ping, &b[i]) < 0)
                        return 1;
        report_pair("Peer.Ping", a, "floor: Peer.Ping", b, n, ", 1 conn");

        /* 2. Fresh connections. */
        for (size_t i = 0; i < n_fresh; i++)
                if (timed_fresh_call(address, &target_register, &a[i]) < 0 ||
                    timed_fresh_call(address, &target_floor, &b[i]) < 0)
                        return 1;
        printf("fresh connection (connect + Hello + first call), %zu connections each, caller %s:\n", n_fresh,
               caller);
        report_pair("1st Register", a, "floor: 1st 2-fd reply", b, n_fresh, ", fresh");

        /* 3. Idle, then during a flood. */
        for (size_t i = 0; i < n_flood; i++)
                if (timed_call(bus, &target_register, &a[i]) < 0 || timed_call(bus, &target_ping, &b[i]) < 0 ||
                    timed_call(bus, &target_floor_ping, &e[i]) < 0)
                        return 1;
        if (flood_start(&flood, address) < 0)
                return 1;
        for (size_t i = 0; i < n_flood; i++)
                if (timed_call(bus, &target_register, &c[i]) < 0 || timed_call(bus, &target_ping, &d[i]) < 0 ||
                    timed_call(bus, &target_floor_ping, &f[i]) < 0)
                        return 1;
        printf("during a record flood vs idle, %zu calls each, caller %s:\n", n_flood, caller);
        report_pair("Register flood", c, "Register idle", a, n_flood, "");
        report_pair("Peer.Ping flood", d, "Peer.Ping idle", b, n_flood, "");
        report_pair("floor: Peer.Ping flood", f, "floor: Peer.Ping idle", e, n_flood, "");
        report_pair("Peer.Ping flood", d, "floor: Peer.Ping flood", f, n_flood, "");
        flood_stop(&flood);

        sd_bus_flush_close_unref(bus);
        free(a);
        free(b);
        free(c);
        free(d);
        free(e);
        free(f);
        return 0;
}
