/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The LTTng-UST tracepoint bench-ring-write compares with: the same
 * payload as its ueb_write() (a u64 and 16 chars). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER uebroker_bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./bench-lttng-tp.h"

#if !defined(BENCH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define BENCH_LTTNG_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(uebroker_bench, write,
        LTTNG_UST_TP_ARGS(uint64_t, seq, const char *, pad),
        LTTNG_UST_TP_FIELDS(
                lttng_ust_field_integer(uint64_t, seq, seq)
                lttng_ust_field_array_text(char, pad, pad, 16)
        )
)

#endif

#include <lttng/tracepoint-event.h>
