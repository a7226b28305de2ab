/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* LTTng-UST's enabled tracepoint, timed like ueb_write() in
 * bench-ring-write.c. Built only when meson finds lttng-ust. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "bench-lttng-tp.h"

#include <stdint.h>
#include <unistd.h>

#include "bench-lttng.h"
#include "bench-util.h"

static const char pad[16] = "benchmark";

bool bench_lttng_ready(const char **why) {
        /* The app registers with the session daemon in the background. */
        for (unsigned i = 0; i < 300 && !lttng_ust_tracepoint_enabled(uebroker_bench, write); i++)
                usleep(10000);
        if (!lttng_ust_tracepoint_enabled(uebroker_bench, write)) {
                *why = "no LTTng session records uebroker_bench:write (run-bench.sh starts one when lttng-tools "
                       "is installed)";
                return false;
        }
        return true;
}

void bench_lttng_hit(uint64_t seq) {
        lttng_ust_tracepoint(uebroker_bench, write, seq, pad);
}

struct bench_lttng_result bench_lttng_run(unsigned long long n, unsigned burst) {
        struct bench_lttng_result res = { 0 };
        uint64_t timed = 0;

        if (!bench_lttng_ready(&res.why))
                return res;
        for (unsigned long long done = 0; done < n;) {
                unsigned k = n - done < burst ? (unsigned) (n - done) : burst;
                uint64_t t0 = bench_now_ns();

                for (unsigned i = 0; i < k; i++)
                        lttng_ust_tracepoint(uebroker_bench, write, done + i, pad);
                timed += bench_now_ns() - t0;
                done += k;
                /* Let the consumer daemon catch up, as our consumer does. */
                usleep(2000);
        }
        res.available = true;
        res.ns_per_call = (double) timed / (double) n;
        return res;
}
