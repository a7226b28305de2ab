/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ring-write and bench-ring-rates without lttng-ust: say so. */
#include "bench-lttng.h"

#define WHY_ABSENT "built without lttng-ust (Debian: liblttng-ust-dev)"

struct bench_lttng_result bench_lttng_run(unsigned long long n, unsigned burst) {
        return (struct bench_lttng_result) { .why = WHY_ABSENT };
}

bool bench_lttng_ready(const char **why) {
        *why = WHY_ABSENT;
        return false;
}

void bench_lttng_hit(uint64_t seq) {
}
