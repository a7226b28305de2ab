/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cost of an instrumentation site while nobody listens, in one run:
 *   warm  ns per check, in a tight loop: ueb_enabled() (two dependent
 *         loads), one load through ueb_enabled_address(), and a plain
 *         volatile byte load as baseline
 *   cold  the same with the caches flushed before every check (clflush of
 *         the handle's line, the status byte's line and the plain byte's,
 *         then mfence): what a site costs when it runs rarely. The loop
 *         with the flushes and no check is measured too and subtracted.
 *   bench-disabled-check [ITERATIONS]   (default 500M warm; cold: 1/100)
 * Works with or without a broker (an unregistered event checks the same
 * way, against a constant zero byte; it has no status address yet, so the
 * one-load lines then say they are missing); it says which it measured.
 */
#include <stdint.h>
#include <stdio.h>

#include "bench-util.h"
#include "uebroker.h"

#if defined(__x86_64__) || defined(__i386__)
#define HAVE_CLFLUSH 1
static inline void cache_flush(const volatile void *p) {
        __builtin_ia32_clflush((const void *) p);
}
static inline void memory_fence(void) {
        __builtin_ia32_mfence();
}
#else
#define HAVE_CLFLUSH 0
#endif

/* What each loop measures. */
enum check_kind { CHECK_NONE, CHECK_ENABLED, CHECK_ONE_LOAD, CHECK_PLAIN };

static volatile uint8_t plain_byte;

static inline unsigned check(enum check_kind kind, const struct ueb_event *e, const volatile uint8_t *one) {
        switch (kind) {
        case CHECK_ENABLED:
                return ueb_enabled(e);
        case CHECK_ONE_LOAD:
                return *one != 0;
        case CHECK_PLAIN:
                return plain_byte != 0;
        default:
                return 0;
        }
}

/* ns per iteration of @n checks of @kind; hits added to @hits. */
static double run_warm(enum check_kind kind, const struct ueb_event *e, const volatile uint8_t *one,
                       unsigned long long n, unsigned long long *hits) {
        uint64_t t0 = bench_now_ns();

        for (unsigned long long i = 0; i < n; i++)
                *hits += check(kind, e, one);
        return (double) (bench_now_ns() - t0) / (double) n;
}

#if HAVE_CLFLUSH
/* The same with every line a check may touch flushed first: the mfence
 * orders the flushes before the load, and the load before the next
 * iteration's flushes. */
static double run_cold(enum check_kind kind, const struct ueb_event *e, const volatile uint8_t *one,
                       unsigned long long n, unsigned long long *hits) {
        uint64_t t0 = bench_now_ns();

        for (unsigned long long i = 0; i < n; i++) {
                cache_flush(e);
                cache_flush(one);
                cache_flush(&plain_byte);
                memory_fence();
                *hits += check(kind, e, one);
        }
        return (double) (bench_now_ns() - t0) / (double) n;
}
#endif

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 500000000ull), cold_n = n / 100 ? n / 100 : 1, hits = 0;
        const volatile uint8_t *one = NULL;
        struct ueb_client *c = NULL;
        struct ueb_event *e = NULL;
        double enabled, one_load, plain;
        bool have_one;
        int r;

        ueb_open(&c);
        if (!c)
                return 1;
        r = ueb_register(c, "bench_disabled u32 x", &e);
        if (r < 0) {
                fprintf(stderr, "register: %s\n", ueb_last_error(c));
                return 1;
        }
        have_one = ueb_enabled_address(e, &one) == 0;
        printf("event %s; enabled now: %s; one-load address: %s\n",
               r == 1 ? "registered with a broker" : "pending (no broker)", ueb_enabled(e) ? "yes" : "no",
               have_one ? "yes" : "none (never registered)");
        if (!have_one)
                one = &plain_byte;      /* keeps the loops valid; not reported */

        /* Warm up every path. */
        for (enum check_kind k = CHECK_ENABLED; k <= CHECK_PLAIN; k++)
                (void) run_warm(k, e, one, 1000000, &hits);

        enabled = run_warm(CHECK_ENABLED, e, one, n, &hits);
        one_load = run_warm(CHECK_ONE_LOAD, e, one, n, &hits);
        plain = run_warm(CHECK_PLAIN, e, one, n, &hits);
        printf("warm: %llu checks each (enabled %llu times in all)\n", n, hits);
        bench_report("warm ueb_enabled()", enabled, "volatile byte load", plain, "ns/check");
        if (have_one) {
                bench_report("warm ueb_enabled()", enabled, "warm one load (enabled_address)", one_load,
                             "ns/check");
                bench_report("warm one load (enabled_address)", one_load, "volatile byte load", plain, "ns/check");
        }

#if HAVE_CLFLUSH
        {
                double flush_only;

                hits = 0;
                flush_only = run_cold(CHECK_NONE, e, one, cold_n, &hits);
                enabled = run_cold(CHECK_ENABLED, e, one, cold_n, &hits) - flush_only;
                one_load = run_cold(CHECK_ONE_LOAD, e, one, cold_n, &hits) - flush_only;
                plain = run_cold(CHECK_PLAIN, e, one, cold_n, &hits) - flush_only;
                printf("cold: %llu checks each, caches flushed before each; the flushes alone %.2f ns/iteration, "
                       "subtracted\n", cold_n, flush_only);
                bench_report("cold ueb_enabled()", enabled, "cold volatile byte load", plain, "ns/check");
                if (have_one)
                        bench_report("cold ueb_enabled()", enabled, "cold one load (enabled_address)", one_load,
                                     "ns/check");
        }
#else
        printf("cold: not measured (no clflush on this architecture)\n");
#endif
        if (!have_one)
                printf("one load: not measured (the event has no status index without a broker)\n");
        ueb_close(c);
        return 0;
}
