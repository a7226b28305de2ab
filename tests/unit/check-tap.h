/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Runs a Check suite with TAP output for meson (protocol: 'tap'). */

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static inline int check_tap_run(Suite *s) {
        SRunner *sr = srunner_create(s);
        int failed;

        setvbuf(stdout, NULL, _IONBF, 0);
        srunner_set_tap(sr, "-");
        srunner_run_all(sr, CK_SILENT);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
