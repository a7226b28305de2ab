/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Event-name reservations, as D-Bus policy reserves bus names: the
 * configuration's [Reservations] section ties an event name, or every name
 * starting with a prefix, to one user or to the members of one group.
 *
 *     [Reservations]
 *     hello_tick=user:alice        the name hello_tick
 *     myapp_*=group:myapp          every name starting with myapp_
 *     sys_*=user:0                 (uids and gids may be numeric)
 *
 * A name no reservation covers is free for everyone. Root (uid 0) may
 * always use a reserved name. A user or group that did not resolve when the
 * configuration was loaded leaves its reservation in force allowing nobody
 * but root (fail closed), so a typo or a missing account never frees a name.
 *
 * Everything here is pure except user_groups(), which asks the user
 * database.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct name_reservation {
        char *pattern;          /* event name, or prefix (without '*') when is_prefix */
        bool is_prefix;
        bool is_group;
        bool resolved;          /* false: names nobody (user/group unknown at load) */
        uint32_t id;            /* uid or gid when resolved */
        char *who;              /* as written, e.g. "user:alice", for messages */
        char *origin;           /* "FILE:LINE" where it was set */
};

struct name_reservations {
        struct name_reservation *items;
        size_t n;
};

/* Frees the strings of @res and zeroes it. */
void name_reservation_done(struct name_reservation *res);

/* Frees every reservation and the array; @r is empty afterwards. */
void name_reservations_done(struct name_reservations *r);

/* The entry written with exactly @pattern and @is_prefix, NULL if none. */
struct name_reservation *name_reservations_get(struct name_reservations *r, const char *pattern, bool is_prefix);

/* Appends @res and takes over its strings (*res is zeroed). Returns 0 or
 * -ENOMEM, which leaves @r and @res as they were. Does not look for an
 * entry with the same pattern: see name_reservations_get(). */
int name_reservations_add(struct name_reservations *r, struct name_reservation *res);

/* The reservation covering @event_name: an exact name wins over prefixes, a
 * longer prefix over a shorter; NULL if none. A prefix covers the name equal
 * to it too ("foo*" covers "foo"). */
const struct name_reservation *name_reservations_find(const struct name_reservations *r, const char *event_name);

/* Whether a caller with @uid and groups @gids[0..n) may use a name under
 * @res (root, uid 0, always may; everyone may when @res is NULL, i.e. the
 * name is not reserved). An unresolved reservation allows only root. */
bool name_reservation_allows(const struct name_reservation *res, uid_t uid, const gid_t *gids, size_t n_gids);

/* Bound on the groups user_groups() returns (the kernel's NGROUPS_MAX). */
#define USER_GROUPS_MAX 65536u

/* The groups of @uid from the user database (primary and supplementary,
 * getpwuid_r + getgrouplist), malloc()ed into *ret, their number in
 * *ret_n. Returns 0, -ESRCH when @uid has no user database entry, -ENOMEM,
 * -E2BIG beyond USER_GROUPS_MAX groups, or another negative errno from the
 * lookup. Not pure: this one asks NSS. */
int user_groups(uid_t uid, gid_t **ret, size_t *ret_n);
