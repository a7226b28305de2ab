/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdlib.h>

#include "array.h"
#include "macro.h"
#include "write-indexes.h"

int write_indexes_find(const struct write_indexes *t, const struct broker_event *ev) {
        assert(t);
        for (size_t i = 0; i < t->n; i++)
                if (t->entries[i].event == ev)
                        return (int) i;
        return -ENOENT;
}

int write_indexes_reserve(struct write_indexes *t) {
        assert(t);
        if (t->n >= WRITE_INDEXES_MAX)
                return -ENOSPC;
        /* Doubling from 8 reaches WRITE_INDEXES_MAX (a power of two) and
         * never passes it. */
        return ARRAY_RESERVE(t->entries, t->n_allocated, t->n + 1);
}

uint32_t write_indexes_append(struct write_indexes *t, struct broker_event *ev, struct provider_event *pev) {
        assert(t);
        t->entries[t->n] = (struct write_index) { .event = ev, .provider_event = pev };
        return (uint32_t) t->n++;
}

void write_indexes_set_active(struct write_indexes *t, uint32_t index, bool active) {
        struct write_index *w = &ASSERT_PTR(t)->entries[index];

        if (w->active == active)
                return;
        w->active = active;
        if (active)
                t->n_active++;
        else
                t->n_active--;
}

void write_indexes_done(struct write_indexes *t) {
        assert(t);
        free(t->entries);
        *t = (struct write_indexes) {};
}
