/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CHECK and REQUIRE for the C integration tests: each prints "ok: COND" or
 * "FAIL (FILE:LINE): COND: why" and counts failures, which the test's
 * exit status reports. One test program per binary: the counter is its.
 * And WAIT_FOR, the bounded poll they share. */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int failures;

/* Evaluates @cond once; true if it held. */
#define CHECK(cond, ...)                                                                    \
        ({                                                                                  \
                bool _held = (cond);                                                        \
                if (_held)                                                                  \
                        printf("ok: %s\n", #cond);                                          \
                else {                                                                      \
                        failures++;                                                         \
                        printf("FAIL (%s:%d): %s: ", __FILE__, __LINE__, #cond);            \
                        printf(__VA_ARGS__);                                                \
                        printf("\n");                                                       \
                }                                                                           \
                _held;                                                                      \
        })

#define REQUIRE(cond, ...)                                                                  \
        do {                                                                                \
                if (!CHECK(cond, __VA_ARGS__))                                              \
                        exit(EXIT_FAILURE);                                                 \
        } while (0)

static inline void sleep_ms(unsigned ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };

        nanosleep(&ts, NULL);
}

/* Waits up to @ms for @cond, polling every 10 ms; true if it came true. */
#define WAIT_FOR(cond, ms)                                                                  \
        ({                                                                                  \
                bool _ok = false;                                                           \
                for (unsigned _i = 0; _i < (ms) / 10; _i++) {                               \
                        if (cond) {                                                         \
                                _ok = true;                                                 \
                                break;                                                      \
                        }                                                                   \
                        sleep_ms(10);                                                       \
                }                                                                           \
                _ok || (cond);                                                              \
        })
