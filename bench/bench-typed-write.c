/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Typed writes against raw ones, in one run: ns per call of the
 * UEB_EVENT()-generated write (ueb_write_values()) and of ueb_write() with
 * a hand-built iovec, for a fixed-size event and for one with a string,
 * through the embedded provider with a Record consumer attached (as
 * bench-embedded-write). The two paths alternate in rounds so that both
 * see the same broker load; drops are counted per path. Then the encoding
 * alone, without the system call: event_encode_values() against filling
 * the packed struct the raw path sends.
 *   bench-typed-write [CALLS]   (default 1M per path; needs a broker: use
 *   run-bench.sh or the harness, see bench/README.md)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "bus-util.h"
#include "event-encode.h"
#include "uebroker-event.h"

#define ROUNDS 10

UEB_EVENT(bench_typed_fixed,
          UEB_FIELD(u64, seq),
          UEB_FIELD(u32, a),
          UEB_FIELD(s16, b),
          UEB_CHAR_ARRAY(pad, 16))

UEB_EVENT(bench_typed_string,
          UEB_FIELD(u32, count),
          UEB_STRING(msg))

/* What the raw path sends for bench_typed_fixed: the fields packed. */
struct __attribute__((packed)) fixed_payload {
        uint64_t seq;
        uint32_t a;
        int16_t b;
        char pad[16];
};

static const char message[] = "hello from bench-typed-write";

static int raw_fixed(struct ueb_event *e, uint64_t i) {
        struct fixed_payload p = { .seq = i, .a = 7, .b = -1, .pad = "benchmark" };
        struct iovec iov = { &p, sizeof(p) };

        return ueb_write(e, &iov, 1);
}

static int typed_fixed(struct ueb_event *e, uint64_t i) {
        return ueb_write_bench_typed_fixed(e, i, 7, -1, "benchmark");
}

/* By hand: the __data_loc word counts from the record start, whose 8-byte
 * common header comes before the two u32 fields. */
static int raw_string(struct ueb_event *e, uint64_t i) {
        uint32_t count = (uint32_t) i, len = sizeof(message), loc = len << 16 | (8 + 2 * sizeof(uint32_t));
        struct iovec iov[] = { { &count, 4 }, { &loc, 4 }, { (void *) message, len } };

        return ueb_write(e, iov, 3);
}

static int typed_string(struct ueb_event *e, uint64_t i) {
        return ueb_write_bench_typed_string(e, (uint32_t) i, message);
}

struct path {
        const char *name;
        int (*write)(struct ueb_event *e, uint64_t i);
        uint64_t ns, calls, written, dropped, failed;
};

/* @calls calls of @p, their time and outcome added to @p. */
static void run_path(struct ueb_event *e, struct path *p, uint64_t calls) {
        struct ueb_stats before, after;
        uint64_t t0, t1;

        ueb_event_stats(e, &before);
        t0 = bench_now_ns();
        for (uint64_t i = 0; i < calls; i++)
                if (ueb_enabled(e))
                        (void) p->write(e, i);
        t1 = bench_now_ns();
        ueb_event_stats(e, &after);
        p->ns += t1 - t0;
        p->calls += calls;
        p->written += after.written - before.written;
        p->dropped += after.dropped - before.dropped;
        p->failed += after.failed - before.failed;
}

/* Alternates raw and typed in ROUNDS rounds (each starts with the other
 * than the last), then reports. */
static void compare(struct ueb_event *e, const char *what, struct path *raw, struct path *typed, uint64_t n) {
        char label[64];

        for (int r = 0; r < ROUNDS; r++) {
                run_path(e, r % 2 ? typed : raw, n / ROUNDS);
                run_path(e, r % 2 ? raw : typed, n / ROUNDS);
        }
        snprintf(label, sizeof(label), "%s typed", what);
        bench_report(label, (double) typed->ns / (double) typed->calls, "raw iovec ueb_write",
                     (double) raw->ns / (double) raw->calls, "ns/call");
        for (struct path *p = raw; p; p = p == raw ? typed : NULL)
                printf("  %-6s %llu calls: %llu written, %llu dropped (broker busy), %llu failed\n", p->name,
                       (unsigned long long) p->calls, (unsigned long long) p->written,
                       (unsigned long long) p->dropped, (unsigned long long) p->failed);
}

/* The encoding alone, no system call. */
static void compare_encoding(uint64_t n) {
        struct event_def *ev = NULL;
        struct event_encode_span spans[EVENT_DYNAMIC_FIELDS_MAX];
        struct ueb_value v[ueb_n_fields_bench_typed_fixed];
        uint8_t fixed[sizeof(struct fixed_payload)];
        volatile uint8_t sink = 0;
        size_t n_spans, len;
        uint64_t t0, t1, t2;

        if (event_def_parse(ueb_definition_bench_typed_fixed(), 0, &ev, NULL) < 0 ||
            ev->min_size != sizeof(fixed)) {
                fprintf(stderr, "the definition does not parse to %zu bytes\n", sizeof(fixed));
                exit(1);
        }
        t0 = bench_now_ns();
        for (uint64_t i = 0; i < n; i++) {
                ueb_values_bench_typed_fixed(v, i, 7, -1, "benchmark");
                if (event_encode_values(ev, v, ueb_n_fields_bench_typed_fixed, fixed, spans, &n_spans, &len,
                                        NULL) < 0)
                        exit(1);
                sink = sink + fixed[i % sizeof(fixed)];
        }
        t1 = bench_now_ns();
        for (uint64_t i = 0; i < n; i++) {
                struct fixed_payload p = { .seq = i, .a = 7, .b = -1, .pad = "benchmark" };

                memcpy(fixed, &p, sizeof(p));
                __asm__ volatile("" : : "r"(fixed) : "memory"); /* keep the copy */
                sink = sink + fixed[i % sizeof(fixed)];
        }
        t2 = bench_now_ns();
        bench_report("encode fixed (values + layout)", (double) (t1 - t0) / (double) n, "fill the packed struct",
                     (double) (t2 - t1) / (double) n, "ns/call");
        event_def_free(ev);
}

int main(int argc, char *argv[]) {
        uint64_t n = bench_count(argc, argv, 1000000ull);
        struct path raw_f = { "raw", raw_fixed }, typed_f = { "typed", typed_fixed };
        struct path raw_s = { "raw", raw_string }, typed_s = { "typed", typed_string };
        struct bench_reader readers[2] = {};
        pthread_t threads[2];
        struct ueb_client *c = NULL;
        struct ueb_event *fixed = NULL, *string = NULL;
        sd_bus *bus = NULL;

        if (ueb_open(&c) != 1 || ueb_register_bench_typed_fixed(c, &fixed) != 1 ||
            ueb_register_bench_typed_string(c, &string) != 1) {
                fprintf(stderr, "no broker: %s (run through bench/run-bench.sh)\n", c ? ueb_last_error(c) : "");
                return 1;
        }
        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        readers[0].fd = bench_record_open(bus, "bench_typed_fixed");
        readers[1].fd = bench_record_open(bus, "bench_typed_string");
        if (readers[0].fd < 0 || readers[1].fd < 0 || !ueb_enabled(fixed) || !ueb_enabled(string)) {
                fprintf(stderr, "Record did not enable the events\n");
                return 1;
        }
        for (int i = 0; i < 2; i++)
                pthread_create(&threads[i], NULL, bench_reader_main, &readers[i]);

        printf("%llu calls per path in %d alternating rounds; fixed: %zu payload bytes, string: %zu bytes of text\n",
               (unsigned long long) n, ROUNDS, sizeof(struct fixed_payload), sizeof(message));
        compare(fixed, "fixed (u64 u32 s16 char[16])", &raw_f, &typed_f, n);
        compare(string, "string (u32, __data_loc char[])", &raw_s, &typed_s, n);
        compare_encoding(n);

        sleep(1);
        for (int i = 0; i < 2; i++) {
                readers[i].stop = 1;
                close(readers[i].fd);
                pthread_join(threads[i], NULL);
        }
        printf("consumers received %llu and %llu records\n", readers[0].messages, readers[1].messages);
        sd_bus_flush_close_unref(bus);
        ueb_close(c);
        return 0;
}
