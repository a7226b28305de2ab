/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>
#include <stdlib.h>

/* An invariant of the library: a violation is a finding, so abort() and
 * let libFuzzer keep the input. */
#define check(cond)                                                                                           \
        do {                                                                                                  \
                if (!(cond)) {                                                                                \
                        fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);             \
                        abort();                                                                              \
                }                                                                                             \
        } while (0)
