/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "dropin-order.h"
#include "macro.h"

/* Every entry of every directory, tagged with its directory, sorted by
 * name and then by precedence: the first of each run of equal names wins. */
struct candidate {
        size_t dir;
        const struct dropin_entry *entry;
};

static int compare_candidates(const void *a, const void *b) {
        const struct candidate *x = a, *y = b;
        int c = strcmp(x->entry->name, y->entry->name);

        if (c != 0)
                return c;
        return x->dir < y->dir ? -1 : x->dir > y->dir ? 1 : 0;
}

int dropins_choose(const struct dropin_dir *dirs, size_t n_dirs, struct dropin_choice **ret, size_t *ret_n) {
        struct candidate *all = NULL;
        struct dropin_choice *chosen;
        size_t n_all = 0, n = 0;

        assert(dirs);
        *ret = NULL;
        *ret_n = 0;
        for (size_t d = 0; d < n_dirs; d++)
                n_all += dirs[d].n_entries;
        if (n_all == 0)
                return 0;

        all = calloc(n_all, sizeof(*all));
        chosen = calloc(n_all, sizeof(*chosen));
        if (!all || !chosen) {
                free(all);
                free(chosen);
                return -ENOMEM;
        }
        n_all = 0;
        for (size_t d = 0; d < n_dirs; d++)
                for (size_t i = 0; i < dirs[d].n_entries; i++)
                        all[n_all++] = (struct candidate) { .dir = d, .entry = &dirs[d].entries[i] };
        qsort(all, n_all, sizeof(*all), compare_candidates);

        for (size_t i = 0; i < n_all; i++) {
                bool hidden = i > 0 && strcmp(all[i - 1].entry->name, all[i].entry->name) == 0;

                if (hidden || all[i].entry->kind != DROPIN_FILE)
                        continue;
                chosen[n++] = (struct dropin_choice) { .dir = all[i].dir, .name = all[i].entry->name };
        }
        free(all);
        if (n == 0) {
                free(chosen);
                return 0;
        }
        *ret = chosen;
        *ret_n = n;
        return 0;
}
