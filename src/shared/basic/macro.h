/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <assert.h>

/* MIN() and MAX() of two values of one type, each evaluated once. */
#define MIN(a, b)                                                       \
        __extension__({                                                 \
                __typeof__(a) _a = (a);                                 \
                __typeof__(b) _b = (b);                                 \
                _a < _b ? _a : _b;                                      \
        })
#define MAX(a, b)                                                       \
        __extension__({                                                 \
                __typeof__(a) _a = (a);                                 \
                __typeof__(b) _b = (b);                                 \
                _a > _b ? _a : _b;                                      \
        })

/* The number of elements of an array (not of a pointer). */
#define ELEMENTSOF(x)                                                   \
        (__builtin_choose_expr(                                         \
                !__builtin_types_compatible_p(__typeof__(x), __typeof__(&*(x))), \
                sizeof(x) / sizeof((x)[0]),                             \
                (void) 0))

/* A macro's value as a string literal, for messages built at compile time. */
#define STRINGIFY(x) STRINGIFY_(x)
#define STRINGIFY_(x) #x

/* @n divided by @d, rounded up; unsigned, @n evaluated once, no overflow. */
#define DIV_ROUND_UP(n, d)                                              \
        __extension__({                                                 \
                __typeof__(n) _n = (n);                                 \
                __typeof__(d) _d = (d);                                 \
                _n / _d + (_n % _d != 0);                               \
        })

/* @p, asserted non-NULL, once: a callback's userdata, a handler's object
 * (systemd's ASSERT_PTR()). */
#define ASSERT_PTR(p)                                                   \
        __extension__({                                                 \
                __typeof__(p) _p = (p);                                 \
                assert(_p);                                             \
                _p;                                                     \
        })
