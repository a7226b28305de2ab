/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A session's write indexes: the one table, owned by the session
 * (data-session.c), read by its provider session (the embedded provider routes
 * each record by it; the kernel providers unregister what is active).
 * It lives in providers/ because it is part of the provider contract
 * (provider.h); only daemon/ changes it (provider-link.c, data-session.c).
 *
 * Indexes run 0, 1, 2, ... in order of first registration, as a kernel
 * numbers the events of one open data file. An index stays bound to its
 * event for the session's life: unregistering only deactivates it, and the
 * same event registered again gets it back, so a stale write can never land
 * on another event.
 */

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct broker_event;
struct provider_event;

/* Distinct events one session may bind write indexes to; a connection that
 * needs more reconnects. */
#define WRITE_INDEXES_MAX 4096u

struct write_index {
        struct broker_event *event;             /* bound for the session's life */
        struct provider_event *provider_event;  /* the same event, as the provider knows it */
        bool active;                            /* registered, not unregistered */
};

struct write_indexes {
        struct write_index *entries;            /* indexed by write index */
        size_t n;
        size_t n_allocated;
        unsigned n_active;
};

/* The index bound to @ev, or -ENOENT. */
int write_indexes_find(const struct write_indexes *t, const struct broker_event *ev);

/* Room for one more index, so that binding after the provider has agreed
 * cannot fail. -ENOSPC at WRITE_INDEXES_MAX. */
int write_indexes_reserve(struct write_indexes *t);

/* Binds the next index (t->n) to @ev, inactive; write_indexes_reserve()
 * made room. Returns the index. */
uint32_t write_indexes_append(struct write_indexes *t, struct broker_event *ev, struct provider_event *pev);

void write_indexes_set_active(struct write_indexes *t, uint32_t index, bool active);

/* The provider event @index is active for, NULL if it is not an active
 * index (the data path: an untrusted number from a writer). */
static inline struct provider_event *write_indexes_active_event(const struct write_indexes *t, uint32_t index) {
        if (index >= t->n || !t->entries[index].active)
                return NULL;
        return t->entries[index].provider_event;
}

void write_indexes_done(struct write_indexes *t);
