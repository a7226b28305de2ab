/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "check-tap.h"
#include "status-text.h"
#include "event-def.h"

START_TEST(test_placeholder_parse_u32) {
        struct event_def *ev = NULL;
        ck_assert_int_eq(event_def_parse("t u32 a", 0, &ev, NULL), 0);
        ck_assert_uint_eq(ev->min_size, 4);
        event_def_free(ev);
}
END_TEST

int main(void) {
        Suite *s = suite_create("event-def");
        TCase *tc = tcase_create("parse");
        tcase_add_test(tc, test_placeholder_parse_u32);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
