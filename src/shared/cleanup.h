/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Scope-bound release:
 *     _cleanup_free_ char *text = strdup(...);
 *     _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;  */

#include <stdlib.h>

static inline void freep(void *p) {
        free(*(void **) p);
}

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ __attribute__((cleanup(freep)))
