/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* CHECK and REQUIRE for the C integration tests: each prints "ok: COND" or
 * "FAIL (FILE:LINE): COND: why" and counts failures, which the test's
 * exit status reports. One test program per binary: the counter is its. */

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

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
