/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by the benchmark programs. */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t bench_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* A positive count from argv[1] or @fallback. */
static inline unsigned long long bench_count(int argc, char *argv[], unsigned long long fallback) {
        char *end;
        unsigned long long n;

        if (argc < 2)
                return fallback;
        n = strtoull(argv[1], &end, 10);
        if (*end || n == 0) {
                fprintf(stderr, "usage: %s [ITERATIONS]\n", argv[0]);
                exit(2);
        }
        return n;
}

/* "name: value unit   baseline: value unit   ratio: x" */
static inline void bench_report(const char *what, double value, const char *baseline, double base_value,
                                const char *unit) {
        printf("%-28s %12.2f %-9s | %-28s %12.2f %-9s | ratio %.2f\n", what, value, unit, baseline, base_value, unit,
               base_value > 0 ? value / base_value : 0.0);
}
