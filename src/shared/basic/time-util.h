/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The clocks, read one way everywhere. Thread-safe. */

#include <stdint.h>
#include <time.h>

/* @clock (CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME) in nanoseconds. */
static inline uint64_t clock_ns(clockid_t clock) {
        struct timespec ts;

        clock_gettime(clock, &ts);
        return (uint64_t) ts.tv_sec * 1000000000u + (uint64_t) ts.tv_nsec;
}

/* CLOCK_MONOTONIC in microseconds: the clock of every timeout, rate and
 * back-off in the daemon and the library. */
static inline uint64_t monotonic_usec(void) {
        return clock_ns(CLOCK_MONOTONIC) / 1000u;
}

/* CLOCK_REALTIME minus CLOCK_MONOTONIC now, in nanoseconds: what turns the
 * kernel's monotonic trace clock into the wall-clock time of records. */
static inline int64_t realtime_minus_monotonic_ns(void) {
        uint64_t mono = clock_ns(CLOCK_MONOTONIC);

        return (int64_t) (clock_ns(CLOCK_REALTIME) - mono);
}
