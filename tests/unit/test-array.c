/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <stdint.h>
#include <stdlib.h>

#include "array.h"
#include "check-tap.h"

START_TEST(test_reserve_grows_by_doubling_and_keeps_content) {
        uint32_t *a = NULL;
        unsigned room = 0;

        ck_assert_int_eq(ARRAY_RESERVE(a, room, 0), 0);
        ck_assert_ptr_null(a);                  /* nothing needed, nothing done */
        ck_assert_int_eq(ARRAY_RESERVE(a, room, 1), 0);
        ck_assert_uint_eq(room, 8);
        for (uint32_t i = 0; i < 8; i++)
                a[i] = i;
        ck_assert_int_eq(ARRAY_RESERVE(a, room, 8), 0);
        ck_assert_uint_eq(room, 8);
        ck_assert_int_eq(ARRAY_RESERVE(a, room, 9), 0);
        ck_assert_uint_eq(room, 16);
        ck_assert_int_eq(ARRAY_RESERVE(a, room, 100), 0);
        ck_assert_uint_eq(room, 100);           /* more than twice: what is needed */
        for (uint32_t i = 0; i < 8; i++)
                ck_assert_uint_eq(a[i], i);
        ck_assert_int_eq(ARRAY_RESERVE(a, room, 3), 0);
        ck_assert_uint_eq(room, 100);           /* never shrinks */
        free(a);
}
END_TEST

/* An allocation too large returns NULL under ASan too, as it does
 * without (its default is to abort). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
        return "allocator_may_return_null=1";
}

START_TEST(test_reserve_failure_leaves_the_array) {
        volatile size_t too_many = SIZE_MAX / 16;       /* half the address space of uint64_t */
        uint64_t *a = NULL;
        size_t room = 0;

        ck_assert_int_eq(ARRAY_RESERVE(a, room, 4), 0);
        a[3] = 42;
        ck_assert_int_eq(ARRAY_RESERVE(a, room, too_many), -ENOMEM);
        ck_assert_ptr_nonnull(a);
        ck_assert_uint_eq(room, 8);
        ck_assert_uint_eq(a[3], 42);
        free(a);
}
END_TEST

int main(void) {
        Suite *s = suite_create("array");
        TCase *tc = tcase_create("array");

        tcase_add_test(tc, test_reserve_grows_by_doubling_and_keeps_content);
        tcase_add_test(tc, test_reserve_failure_leaves_the_array);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
