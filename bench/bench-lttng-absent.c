/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bench-ring-write without lttng-ust: says so. */
#include "bench-lttng.h"

struct bench_lttng_result bench_lttng_run(unsigned long long n, unsigned burst) {
        return (struct bench_lttng_result) { .why = "built without lttng-ust (Debian: liblttng-ust-dev)" };
}
