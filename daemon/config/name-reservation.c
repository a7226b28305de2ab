/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Event-name reservations: lookup and the allow decision are pure; only
 * user_groups() at the end touches the user database.
 */

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cleanup.h"
#include "macro.h"
#include "name-reservation.h"

void name_reservation_done(struct name_reservation *res) {
        if (!res)
                return;
        free(res->pattern);
        free(res->who);
        free(res->origin);
        *res = (struct name_reservation) {};
}

void name_reservations_done(struct name_reservations *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n; i++)
                name_reservation_done(&r->items[i]);
        free(r->items);
        *r = (struct name_reservations) {};
}

struct name_reservation *name_reservations_get(struct name_reservations *r, const char *pattern, bool is_prefix) {
        assert(r);
        for (size_t i = 0; i < r->n; i++)
                if (r->items[i].is_prefix == is_prefix && strcmp(r->items[i].pattern, pattern) == 0)
                        return &r->items[i];
        return NULL;
}

int name_reservations_add(struct name_reservations *r, struct name_reservation *res) {
        assert(r);
        /* The array holds 8, 16, 32, ... entries: full when n is 0, or 8 or
         * more and a power of two. */
        bool full = r->n == 0 || (r->n >= 8 && (r->n & (r->n - 1)) == 0);

        if (full) {
                size_t cap = r->n == 0 ? 8 : r->n * 2;
                struct name_reservation *grown;

                if (cap > SIZE_MAX / sizeof(*grown))
                        return -ENOMEM;
                grown = realloc(r->items, cap * sizeof(*grown));
                if (!grown)
                        return -ENOMEM;
                r->items = grown;
        }
        r->items[r->n++] = *res;
        *res = (struct name_reservation) {};
        return 0;
}

const struct name_reservation *name_reservations_find(const struct name_reservations *r, const char *event_name) {
        const struct name_reservation *best = NULL;
        size_t best_len = 0, name_len;

        if (!r || !event_name)
                return NULL;
        name_len = strlen(event_name);
        for (size_t i = 0; i < r->n; i++) {
                const struct name_reservation *res = &r->items[i];
                size_t len = strlen(res->pattern);

                if (!res->is_prefix) {
                        if (len == name_len && memcmp(res->pattern, event_name, len) == 0)
                                return res;     /* an exact name beats every prefix */
                        continue;
                }
                if (len > name_len || memcmp(res->pattern, event_name, len) != 0)
                        continue;
                if (!best || len > best_len) {
                        best = res;
                        best_len = len;
                }
        }
        return best;
}

bool name_reservation_allows(const struct name_reservation *res, uid_t uid, const gid_t *gids, size_t n_gids) {
        if (!res || uid == 0)
                return true;
        if (!res->resolved)
                return false;
        if (!res->is_group)
                return uid == (uid_t) res->id;
        for (size_t i = 0; i < n_gids; i++)
                if (gids[i] == (gid_t) res->id)
                        return true;
        return false;
}

/* ---- Not pure: the user database. ---- */

/* Bound on the getpwuid_r() buffer: an entry is a few hundred bytes. */
#define PASSWD_BUFFER_MAX (1024u * 1024u)

int user_groups(uid_t uid, gid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ gid_t *groups = NULL;
        struct passwd pw, *result = NULL;
        size_t buf_size = 1024;
        int r, n;

        if (!ret || !ret_n)
                return -EINVAL;
        for (;;) {
                free(buf);
                buf = malloc(buf_size);
                if (!buf)
                        return -ENOMEM;
                r = getpwuid_r(uid, &pw, buf, buf_size, &result);
                if (r != ERANGE)
                        break;
                if (buf_size >= PASSWD_BUFFER_MAX)
                        return -E2BIG;
                buf_size *= 2;
        }
        if (r == 0 && !result)
                return -ESRCH;
        if (r == ENOENT || r == ESRCH || r == EBADF || r == EPERM)
                return -ESRCH;  /* what getpwuid_r(3) lists for "not found" */
        if (r != 0)
                return -r;

        n = 64;
        for (;;) {
                int want = n;

                free(groups);
                groups = malloc((size_t) n * sizeof(gid_t));
                if (!groups)
                        return -ENOMEM;
                if (getgrouplist(pw.pw_name, pw.pw_gid, groups, &n) >= 0)
                        break;
                /* n is now the number needed (glibc); grow at least twofold otherwise. */
                if (n <= want)
                        n = want * 2;
                if ((unsigned) n > USER_GROUPS_MAX)
                        return -E2BIG;
        }
        *ret = TAKE_PTR(groups);
        *ret_n = (size_t) n;
        return 0;
}
