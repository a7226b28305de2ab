/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Scope-bound release:
 *     _cleanup_free_ char *text = strdup(...);
 *     _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;  */

#include <errno.h>
#include <stdlib.h>

static inline void freep(void *p) {
        free(*(void **) p);
}

#define _cleanup_(f) __attribute__((cleanup(f)))

/* NAMEp() for _cleanup_(NAMEp): calls NAME(), a *_free() that takes NULL
 * and returns NULL, on the variable and stores what it returns:
 *     DEFINE_TRIVIAL_CLEANUP_FUNC(struct broker *, broker_free);  */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                 \
        static inline void func##p(type *p) {                   \
                if (*p)                                         \
                        *p = func(*p);                          \
        }
#define _cleanup_free_ __attribute__((cleanup(freep)))

/* Moves ownership out of a variable whose cleanup would release it:
 *     *ret = TAKE_PTR(b);         return TAKE_FD(fd);  */
#define TAKE_PTR(p)                                     \
        ({                                              \
                __typeof__(p) _taken = (p);             \
                (p) = NULL;                             \
                _taken;                                 \
        })
#define TAKE_FD(fd)                                     \
        ({                                              \
                int _taken_fd = (fd);                   \
                (fd) = -EBADF;                          \
                _taken_fd;                              \
        })
