/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record's EventHeader filters (tools/uebctl-filter.c): the
 * patterns the providers and level make, and the verdict on each record's
 * tracepoint name. */
#include "check-tap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "uebctl-filter.h"

static bool match(const struct uebctl_filter *f, const char *name) {
        return uebctl_filter_match(f, name, strlen(name));
}

START_TEST(test_patterns) {
        struct uebctl_filter f = { .providers = { "Prov", "Other" }, .n_providers = 2, .level = 3 };
        char *patterns[64] = { "given*" };
        size_t n = 1;

        ck_assert_int_eq(uebctl_filter_patterns(&f, patterns, &n, 64), 0);
        ck_assert_uint_eq(n, 7);
        ck_assert_str_eq(patterns[0], "given*");
        ck_assert_str_eq(patterns[1], "Prov_L1K*");
        ck_assert_str_eq(patterns[3], "Prov_L3K*");
        ck_assert_str_eq(patterns[4], "Other_L1K*");
        ck_assert_str_eq(patterns[6], "Other_L3K*");
        for (size_t i = 1; i < n; i++)
                free(patterns[i]);

        /* No level: every level of the provider. */
        f.level = 0;
        n = 0;
        ck_assert_int_eq(uebctl_filter_patterns(&f, patterns, &n, 64), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(patterns[0], "Prov_L*");
        ck_assert_str_eq(patterns[1], "Other_L*");
        for (size_t i = 0; i < n; i++)
                free(patterns[i]);

        /* Levels that do not fit: one pattern per provider, the level left
         * to the verdict. */
        f.level = 40;
        n = 0;
        ck_assert_int_eq(uebctl_filter_patterns(&f, patterns, &n, 64), 0);
        ck_assert_uint_eq(n, 2);
        ck_assert_str_eq(patterns[0], "Prov_L*");
        for (size_t i = 0; i < n; i++)
                free(patterns[i]);

        /* Not even that. */
        n = 63;
        ck_assert_int_eq(uebctl_filter_patterns(&f, patterns, &n, 64), -E2BIG);
        ck_assert_uint_eq(n, 64);
        free(patterns[63]);
}
END_TEST

START_TEST(test_match) {
        struct uebctl_filter none = { 0 };
        struct uebctl_filter f = { .providers = { "Prov" }, .n_providers = 1, .level = 3 };

        /* No filter: everything, EventHeader or not. */
        ck_assert(!uebctl_filter_active(&none));
        ck_assert(match(&none, "plain_event"));
        ck_assert(uebctl_filter_active(&f));

        /* Levels 1..N, 1 being critical. */
        ck_assert(match(&f, "Prov_L1K1"));
        ck_assert(match(&f, "Prov_L3K0"));
        ck_assert(!match(&f, "Prov_L4K1"));
        ck_assert(!match(&f, "Prov_L30K1"));
        /* The provider, exactly; options after the keyword are allowed. */
        ck_assert(match(&f, "Prov_L2K1Ggroup"));
        ck_assert(!match(&f, "Provx_L2K1"));
        ck_assert(!match(&f, "Pro_L2K1"));
        /* Not of the EventHeader form: not shown once a filter is given. */
        ck_assert(!match(&f, "Prov_something"));
        ck_assert(!match(&f, "plain_event"));

        /* Keywords: any bit of the mask, or every bit. */
        f.has_keyword_any = true;
        f.keyword_any = 0x5;
        ck_assert(match(&f, "Prov_L1K1"));
        ck_assert(match(&f, "Prov_L1K4"));
        ck_assert(match(&f, "Prov_L1Kff"));
        ck_assert(!match(&f, "Prov_L1K2"));
        ck_assert(!match(&f, "Prov_L1K0"));
        f.has_keyword_any = false;
        f.has_keyword_all = true;
        f.keyword_all = 0x5;
        ck_assert(match(&f, "Prov_L1K5"));
        ck_assert(match(&f, "Prov_L1K7"));
        ck_assert(!match(&f, "Prov_L1K4"));

        /* Without a provider: every provider, the other filters kept. */
        f.n_providers = 0;
        ck_assert(match(&f, "Anyone_L2Kd"));
        ck_assert(!match(&f, "Anyone_L2K1"));
}
END_TEST

START_TEST(test_arguments) {
        uint64_t mask;

        ck_assert_int_eq(uebctl_filter_parse_keyword("0x10", &mask), 0);
        ck_assert_uint_eq(mask, 16);
        ck_assert_int_eq(uebctl_filter_parse_keyword("010", &mask), 0);
        ck_assert_uint_eq(mask, 10);            /* decimal, not octal */
        ck_assert_int_eq(uebctl_filter_parse_keyword("0xffffffffffffffff", &mask), 0);
        ck_assert_uint_eq(mask, UINT64_MAX);
        ck_assert_int_eq(uebctl_filter_parse_keyword("0", &mask), -EINVAL);
        ck_assert_int_eq(uebctl_filter_parse_keyword("0x", &mask), -EINVAL);
        ck_assert_int_eq(uebctl_filter_parse_keyword("-1", &mask), -EINVAL);
        ck_assert_int_eq(uebctl_filter_parse_keyword("0x1g", &mask), -EINVAL);
        ck_assert_int_eq(uebctl_filter_parse_keyword("0x10000000000000000", &mask), -EINVAL);
        ck_assert_int_eq(uebctl_filter_parse_keyword("", &mask), -EINVAL);

        ck_assert(uebctl_filter_valid_provider("MyProvider_1"));
        ck_assert(!uebctl_filter_valid_provider(""));
        ck_assert(!uebctl_filter_valid_provider("My*"));
        ck_assert(!uebctl_filter_valid_provider("My-Provider"));
        ck_assert(!uebctl_filter_valid_provider("a b"));
}
END_TEST

static Suite *filter_suite(void) {
        Suite *s = suite_create("uebctl-filter");
        TCase *tc = tcase_create("filter");

        tcase_add_test(tc, test_patterns);
        tcase_add_test(tc, test_match);
        tcase_add_test(tc, test_arguments);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(filter_suite());
}
