/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/config/dropin-order.c: which drop-ins are read, in which order. */
#include "check-tap.h"
#include "cleanup.h"
#include "dropin-order.h"

#include <stdlib.h>
#include <string.h>

#define F(n) { .name = (n), .kind = DROPIN_FILE }
#define M(n) { .name = (n), .kind = DROPIN_MASK }
#define DIR_OF(a) { .entries = (a), .n_entries = sizeof(a) / sizeof((a)[0]) }

/* Asserts the choices, written "DIR:NAME" in order. */
static void assert_chosen(const struct dropin_dir *dirs, size_t n_dirs, const char *const *want, size_t n_want) {
        _cleanup_free_ struct dropin_choice *got = NULL;
        size_t n = 99;

        ck_assert_int_eq(dropins_choose(dirs, n_dirs, &got, &n), 0);
        ck_assert_uint_eq(n, n_want);
        if (n_want == 0)
                ck_assert_ptr_null(got);
        for (size_t i = 0; i < n_want; i++) {
                char text[64];

                snprintf(text, sizeof(text), "%zu:%s", got[i].dir, got[i].name);
                ck_assert_str_eq(text, want[i]);
        }
}

START_TEST(test_nothing) {
        static const struct dropin_entry none[1];
        const struct dropin_dir dirs[] = { { .entries = none, .n_entries = 0 } };

        assert_chosen(dirs, 0, NULL, 0);
        assert_chosen(dirs, 1, NULL, 0);
}
END_TEST

START_TEST(test_one_dir_sorted_by_bytes) {
        /* Listed in readdir() order; read in byte order: "9" after "20". */
        static const struct dropin_entry etc[] = { F("9.conf"), F("20-b.conf"), F("10-a.conf"), F("A.conf"),
                                                   F("a.conf") };
        const struct dropin_dir dirs[] = { DIR_OF(etc) };
        static const char *const want[] = { "0:10-a.conf", "0:20-b.conf", "0:9.conf", "0:A.conf", "0:a.conf" };

        assert_chosen(dirs, 1, want, 5);
}
END_TEST

START_TEST(test_earlier_dir_hides_later) {
        /* etc, run, /usr/local/lib, /usr/lib as systemd orders them. */
        static const struct dropin_entry etc[] = { F("50-x.conf") };
        static const struct dropin_entry run[] = { F("50-x.conf"), F("60-run.conf") };
        static const struct dropin_entry local[] = { F("60-run.conf"), F("10-local.conf") };
        static const struct dropin_entry usr[] = { F("50-x.conf"), F("10-local.conf"), F("05-vendor.conf"),
                                                   F("99-vendor.conf") };
        const struct dropin_dir dirs[] = { DIR_OF(etc), DIR_OF(run), DIR_OF(local), DIR_OF(usr) };
        static const char *const want[] = { "3:05-vendor.conf", "2:10-local.conf", "0:50-x.conf", "1:60-run.conf",
                                            "3:99-vendor.conf" };

        assert_chosen(dirs, 4, want, 5);
}
END_TEST

START_TEST(test_mask_hides_and_is_not_read) {
        static const struct dropin_entry etc[] = { M("50-vendor.conf"), F("10-etc.conf") };
        static const struct dropin_entry run[] = { M("10-etc.conf") };       /* later: etc's file wins */
        static const struct dropin_entry usr[] = { F("50-vendor.conf"), M("70-alone.conf"), F("80-vendor.conf") };
        const struct dropin_dir dirs[] = { DIR_OF(etc), DIR_OF(run), DIR_OF(usr) };
        static const char *const want[] = { "0:10-etc.conf", "2:80-vendor.conf" };

        assert_chosen(dirs, 3, want, 2);
}
END_TEST

START_TEST(test_only_masks) {
        static const struct dropin_entry etc[] = { M("a.conf"), M("b.conf") };
        const struct dropin_dir dirs[] = { DIR_OF(etc) };

        assert_chosen(dirs, 1, NULL, 0);
}
END_TEST

START_TEST(test_names_point_into_entries) {
        static const struct dropin_entry run[] = { F("x.conf") };
        const struct dropin_dir dirs[] = { { .entries = NULL, .n_entries = 0 }, DIR_OF(run) };
        _cleanup_free_ struct dropin_choice *got = NULL;
        size_t n = 0;

        ck_assert_int_eq(dropins_choose(dirs, 2, &got, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_ptr_eq(got[0].name, run[0].name);
        ck_assert_uint_eq(got[0].dir, 1);
}
END_TEST

static Suite *dropin_order_suite(void) {
        Suite *s = suite_create("dropin-order");
        TCase *tc = tcase_create("choose");

        tcase_add_test(tc, test_nothing);
        tcase_add_test(tc, test_one_dir_sorted_by_bytes);
        tcase_add_test(tc, test_earlier_dir_hides_later);
        tcase_add_test(tc, test_mask_hides_and_is_not_read);
        tcase_add_test(tc, test_only_masks);
        tcase_add_test(tc, test_names_point_into_entries);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(dropin_order_suite());
}
