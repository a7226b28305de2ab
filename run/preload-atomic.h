/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The preload library's acquire/release atomics, written so that valgrind's
 * helgrind can follow them: it knows no atomics (on x86 an acquire load or a
 * release store is a plain move), so each one also tells it the
 * happens-before edge it makes, and the atomic objects themselves are left
 * out of its race checks (hg_atomic_object()). Without valgrind's headers,
 * or when not running under valgrind, the annotations cost a few no-op
 * instructions; they are async-signal-safe, as the calls they sit in must be.
 */

#include <stdbool.h>

#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#define hg_atomic_object(p) VALGRIND_HG_DISABLE_CHECKING((p), sizeof(*(p)))
#define hg_atomic_range(p, size) VALGRIND_HG_DISABLE_CHECKING((p), (size))
/* A fork()ed child: the parent's other threads are gone, their accesses
 * to @p..@p+@size with them. */
#define hg_forget_range(p, size) VALGRIND_HG_CLEAN_MEMORY((p), (size))
#else
#define ANNOTATE_HAPPENS_BEFORE(p) ((void) (p))
#define ANNOTATE_HAPPENS_AFTER(p) ((void) (p))
#define hg_atomic_object(p) ((void) (p))
#define hg_atomic_range(p, size) ((void) (p), (void) (size))
#define hg_forget_range(p, size) ((void) (p), (void) (size))
#endif

#define load_acquire(p)                                                         \
        __extension__({                                                         \
                __typeof__(*(p)) _v = __atomic_load_n((p), __ATOMIC_ACQUIRE);   \
                ANNOTATE_HAPPENS_AFTER(p);                                      \
                _v;                                                             \
        })

#define store_release(p, v)                                                     \
        do {                                                                    \
                ANNOTATE_HAPPENS_BEFORE(p);                                     \
                __atomic_store_n((p), (v), __ATOMIC_RELEASE);                   \
        } while (0)

/* Compare-and-swap, acquire-release on success, acquire on failure. */
#define cas_acq_rel(p, expected, desired, weak)                                 \
        __extension__({                                                         \
                bool _ok;                                                       \
                ANNOTATE_HAPPENS_BEFORE(p);                                     \
                _ok = __atomic_compare_exchange_n((p), (expected), (desired), (weak), \
                                                  __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); \
                ANNOTATE_HAPPENS_AFTER(p);                                      \
                _ok;                                                            \
        })

/* add_fetch_acq_rel(), sub_fetch_acq_rel(): the new value. */
#define op_fetch_acq_rel(op, p, n)                                              \
        __extension__({                                                         \
                __typeof__(*(p)) _v;                                            \
                ANNOTATE_HAPPENS_BEFORE(p);                                     \
                _v = __atomic_##op##_fetch((p), (n), __ATOMIC_ACQ_REL);         \
                ANNOTATE_HAPPENS_AFTER(p);                                      \
                _v;                                                             \
        })
#define add_fetch_acq_rel(p, n) op_fetch_acq_rel(add, p, n)
#define sub_fetch_acq_rel(p, n) op_fetch_acq_rel(sub, p, n)
