/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of an instrumentation site while nobody listens: ns per
 * ueb_enabled() check vs a plain volatile byte load, in one run.
 *   bench-disabled-check [ITERATIONS]   (default 500M)
 * Works with or without a broker (an unregistered event checks the same
 * way, against a constant zero byte); it says which it measured.
 */
#include <stdint.h>
#include <stdio.h>

#include "bench-util.h"
#include "uebroker.h"

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 500000000ull), hits = 0, base_hits = 0;
        static volatile uint8_t plain_byte;
        struct ueb_client *c = NULL;
        struct ueb_event *e = NULL;
        uint64_t t0, t1, t2;
        int r;

        ueb_open(&c);
        if (!c)
                return 1;
        r = ueb_register(c, "bench_disabled u32 x", &e);
        if (r < 0) {
                fprintf(stderr, "register: %s\n", ueb_last_error(c));
                return 1;
        }
        printf("event %s; enabled now: %s\n", r == 1 ? "registered with a broker" : "pending (no broker)",
               ueb_enabled(e) ? "yes" : "no");

        /* Warm up both paths. */
        for (unsigned i = 0; i < 1000000; i++) {
                hits += ueb_enabled(e);
                base_hits += plain_byte != 0;
        }

        t0 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++)
                hits += ueb_enabled(e);
        t1 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++)
                base_hits += plain_byte != 0;
        t2 = bench_now_ns();

        printf("%llu iterations (enabled %llu times, baseline %llu)\n", n, hits, base_hits);
        bench_report("ueb_enabled()", (double) (t1 - t0) / (double) n, "volatile byte load", (double) (t2 - t1) / (double) n,
                     "ns/check");
        ueb_close(c);
        return 0;
}
