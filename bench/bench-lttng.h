/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The LTTng-UST side of bench-ring-write: bench-lttng.c when the build
 * found lttng-ust, a stub saying so otherwise. */

#include <stdbool.h>

struct bench_lttng_result {
        bool available;
        const char *why;        /* when not available */
        double ns_per_call;
};

/* @n enabled tracepoints in bursts of @burst, only the bursts timed (the
 * same loop as the ueb_write() figures). */
struct bench_lttng_result bench_lttng_run(unsigned long long n, unsigned burst);
