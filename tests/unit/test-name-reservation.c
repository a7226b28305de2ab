/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/config/name-reservation.c: which reservation covers a name, and who it allows. */
#include "check-tap.h"
#include "cleanup.h"
#include "daemon/config/name-reservation.h"

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>

/* Appends a reservation of @pattern (a prefix when it ends in '*'). */
static void add(struct name_reservations *r, const char *pattern, bool is_group, bool resolved, uint32_t id) {
        size_t n = strlen(pattern);
        struct name_reservation res = {
                .is_prefix = n > 0 && pattern[n - 1] == '*',
                .is_group = is_group,
                .resolved = resolved,
                .id = id,
        };

        res.pattern = strndup(pattern, n - (res.is_prefix ? 1 : 0));
        ck_assert_int_ge(asprintf(&res.who, "%s:%u", is_group ? "group" : "user", id), 0);
        ck_assert_int_ge(asprintf(&res.origin, "test:%zu", r->n + 1), 0);
        ck_assert_ptr_nonnull(res.pattern);
        ck_assert_int_eq(name_reservations_add(r, &res), 0);
        /* Taken over. */
        ck_assert_ptr_null(res.pattern);
        ck_assert_ptr_null(res.who);
        ck_assert_ptr_null(res.origin);
}

/* The pattern of the reservation covering @name, with a '*' for a prefix; "" for none. */
static const char *covering(const struct name_reservations *r, const char *name) {
        static char buf[300];
        const struct name_reservation *res = name_reservations_find(r, name);

        if (!res)
                return "";
        snprintf(buf, sizeof(buf), "%s%s", res->pattern, res->is_prefix ? "*" : "");
        return buf;
}

START_TEST(test_find) {
        struct name_reservations r = {};

        ck_assert_ptr_null(name_reservations_find(&r, "anything"));
        ck_assert_ptr_null(name_reservations_find(NULL, "anything"));

        add(&r, "my*", false, true, 1);
        add(&r, "myapp_tick", false, true, 2);
        add(&r, "myapp_*", false, true, 3);
        add(&r, "myapp_net_*", true, true, 4);
        add(&r, "hello_tick", false, true, 5);
        add(&r, "sys_*", false, true, 0);

        /* Exact. */
        ck_assert_str_eq(covering(&r, "hello_tick"), "hello_tick");
        ck_assert_str_eq(covering(&r, "hello_tic"), "");
        ck_assert_str_eq(covering(&r, "hello_tick2"), "");
        ck_assert_str_eq(covering(&r, "Hello_tick"), "");
        /* Prefix, also of the name equal to it. */
        ck_assert_str_eq(covering(&r, "sys_x"), "sys_*");
        ck_assert_str_eq(covering(&r, "sys_"), "sys_*");
        ck_assert_str_eq(covering(&r, "sys"), "");
        ck_assert_str_eq(covering(&r, "system"), "");
        ck_assert_str_eq(covering(&r, "mything"), "my*");
        /* The longest prefix wins, whatever the order they were given in. */
        ck_assert_str_eq(covering(&r, "myapp_x"), "myapp_*");
        ck_assert_str_eq(covering(&r, "myapp_net_rx"), "myapp_net_*");
        ck_assert_str_eq(covering(&r, "myapp_ne"), "myapp_*");
        /* An exact name beats every prefix covering it. */
        ck_assert_str_eq(covering(&r, "myapp_tick"), "myapp_tick");
        ck_assert_str_eq(covering(&r, "myapp_tick_"), "myapp_*");
        ck_assert_str_eq(covering(&r, ""), "");
        ck_assert_ptr_null(name_reservations_find(&r, NULL));

        name_reservations_done(&r);
        ck_assert_ptr_null(r.items);
        ck_assert_uint_eq(r.n, 0);
        name_reservations_done(&r);
        name_reservations_done(NULL);
}
END_TEST

START_TEST(test_exact_beats_prefix_added_later) {
        struct name_reservations r = {};

        add(&r, "a_b", false, true, 1);
        add(&r, "a_*", false, true, 2);
        add(&r, "a_b*", false, true, 3);
        ck_assert_str_eq(covering(&r, "a_b"), "a_b");
        ck_assert_uint_eq(name_reservations_find(&r, "a_b")->id, 1);
        ck_assert_uint_eq(name_reservations_find(&r, "a_bc")->id, 3);
        ck_assert_uint_eq(name_reservations_find(&r, "a_c")->id, 2);
        name_reservations_done(&r);
}
END_TEST

START_TEST(test_get_and_growth) {
        struct name_reservations r = {};
        char name[32];

        for (unsigned i = 0; i < 100; i++) {
                snprintf(name, sizeof(name), "n%u%s", i, i % 2 ? "*" : "");
                add(&r, name, false, true, i);
        }
        ck_assert_uint_eq(r.n, 100);
        for (unsigned i = 0; i < 100; i++) {
                struct name_reservation *res;

                snprintf(name, sizeof(name), "n%u", i);
                res = name_reservations_get(&r, name, i % 2);
                ck_assert_ptr_nonnull(res);
                ck_assert_uint_eq(res->id, i);
                ck_assert_ptr_null(name_reservations_get(&r, name, !(i % 2)));
        }
        ck_assert_ptr_null(name_reservations_get(&r, "n100", false));

        /* name_reservation_done() frees and zeroes one entry. */
        name_reservation_done(&r.items[99]);
        ck_assert_ptr_null(r.items[99].pattern);
        ck_assert_ptr_null(r.items[99].who);
        ck_assert_ptr_null(r.items[99].origin);
        name_reservation_done(NULL);
        name_reservations_done(&r);
}
END_TEST

static struct name_reservation make(bool is_group, bool resolved, uint32_t id) {
        return (struct name_reservation) {
                .pattern = (char *) "x",
                .is_group = is_group,
                .resolved = resolved,
                .id = id,
                .who = (char *) "test",
                .origin = (char *) "test:1",
        };
}

START_TEST(test_allows_user) {
        struct name_reservation res = make(false, true, 1000);
        const gid_t groups[] = { 1000, 1001 };

        ck_assert(name_reservation_allows(&res, 1000, NULL, 0));
        ck_assert(name_reservation_allows(&res, 1000, groups, 2));
        ck_assert(!name_reservation_allows(&res, 1001, groups, 2));    /* gid 1000 is not uid 1000 */
        ck_assert(!name_reservation_allows(&res, 999, NULL, 0));
        ck_assert(!name_reservation_allows(&res, (uid_t) -1, NULL, 0));
        ck_assert(name_reservation_allows(&res, 0, NULL, 0));

        res = make(false, true, 0);
        ck_assert(name_reservation_allows(&res, 0, NULL, 0));
        ck_assert(!name_reservation_allows(&res, 1000, groups, 2));
}
END_TEST

START_TEST(test_allows_group) {
        struct name_reservation res = make(true, true, 1001);
        const gid_t groups[] = { 1000, 1001, 1002 };
        const gid_t other[] = { 1000, 1002 };

        ck_assert(name_reservation_allows(&res, 1000, groups, 3));
        ck_assert(name_reservation_allows(&res, 1000, groups + 1, 1));
        ck_assert(!name_reservation_allows(&res, 1000, other, 2));
        ck_assert(!name_reservation_allows(&res, 1001, other, 2));     /* uid 1001 is not gid 1001 */
        ck_assert(!name_reservation_allows(&res, 1000, groups, 1));     /* only n_gids count */
        ck_assert(!name_reservation_allows(&res, 1000, NULL, 0));
        ck_assert(name_reservation_allows(&res, 0, NULL, 0));
}
END_TEST

START_TEST(test_allows_unresolved_only_root) {
        const gid_t groups[] = { 0, 1000 };
        struct name_reservation user = make(false, false, 0);
        struct name_reservation group = make(true, false, 0);

        /* id is meaningless when unresolved: 0 must not grant anything. */
        ck_assert(!name_reservation_allows(&user, 1000, groups, 2));
        ck_assert(!name_reservation_allows(&group, 1000, groups, 2));
        ck_assert(!name_reservation_allows(&user, 65534, NULL, 0));
        ck_assert(name_reservation_allows(&user, 0, NULL, 0));
        ck_assert(name_reservation_allows(&group, 0, NULL, 0));
}
END_TEST

START_TEST(test_allows_unreserved) {
        ck_assert(name_reservation_allows(NULL, 1000, NULL, 0));
        ck_assert(name_reservation_allows(NULL, 0, NULL, 0));
}
END_TEST

/* The one function that asks the user database. */
START_TEST(test_user_groups) {
        _cleanup_free_ gid_t *gids = NULL;
        size_t n = 0;
        bool has_zero = false;
        uid_t missing = 2147483646;

        ck_assert_int_eq(user_groups(0, &gids, &n), 0);
        ck_assert_uint_ge(n, 1);
        for (size_t i = 0; i < n; i++)
                has_zero = has_zero || gids[i] == 0;
        ck_assert(has_zero);    /* root's primary group */

        ck_assert_int_eq(user_groups(0, NULL, &n), -EINVAL);
        if (!getpwuid(missing)) {
                gid_t *none = (gid_t *) 1;

                ck_assert_int_eq(user_groups(missing, &none, &n), -ESRCH);
                ck_assert_ptr_eq(none, (gid_t *) 1);
        }
}
END_TEST

static Suite *name_reservation_suite(void) {
        Suite *s = suite_create("name-reservation");
        TCase *tc = tcase_create("find");

        tcase_add_test(tc, test_find);
        tcase_add_test(tc, test_exact_beats_prefix_added_later);
        tcase_add_test(tc, test_get_and_growth);
        suite_add_tcase(s, tc);

        tc = tcase_create("allows");
        tcase_add_test(tc, test_allows_user);
        tcase_add_test(tc, test_allows_group);
        tcase_add_test(tc, test_allows_unresolved_only_root);
        tcase_add_test(tc, test_allows_unreserved);
        tcase_add_test(tc, test_user_groups);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(name_reservation_suite());
}
