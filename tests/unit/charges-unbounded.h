/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "user-charges.h"

/* Charges with no bound of their own, for tests about something else: every
 * pool and share unlimited, every rate unlimited. */
static inline void charge_bounds_unbounded(struct charge_bounds *ret) {
        *ret = (struct charge_bounds) {};
        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                ret->kind[k] = (struct charge_bound) { .pool = UINT64_MAX, .share = UINT64_MAX };
        for (unsigned k = 0; k < _RATE_KIND_MAX; k++)
                ret->rate[k] = (struct rate_bound) { .burst = UINT64_MAX, .per_minute = UINT64_MAX };
}
