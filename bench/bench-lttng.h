/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The LTTng-UST side of bench-ring-write and bench-ring-rates:
 * bench-lttng.c when the build found lttng-ust, a stub saying so
 * otherwise. */

#include <stdbool.h>
#include <stdint.h>

struct bench_lttng_result {
        bool available;
        const char *why;        /* when not available */
        double ns_per_call;
};

/* @n enabled tracepoints in bursts of @burst, only the bursts timed (the
 * same loop as the ueb_write() figures). */
struct bench_lttng_result bench_lttng_run(unsigned long long n, unsigned burst);

/* Whether a session records the tracepoint (waiting up to 3 s for the
 * program's registration with the session daemon); if not, *@why says
 * why. */
bool bench_lttng_ready(const char **why);

/* One tracepoint of the payload bench_lttng_run() writes (@seq and 16
 * chars), for a caller timing each call itself. */
void bench_lttng_hit(uint64_t seq);
