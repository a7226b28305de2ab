/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/shared/wire/broker-errors.c: the one map of error names and errnos. */
#include "check-tap.h"

#include <errno.h>

#include "broker-errors.h"

START_TEST(test_names_to_errnos) {
        static const struct { const char *name; int error; } cases[] = {
                { BROKER_ERROR_INVALID_COMMAND, -EINVAL },
                { BROKER_ERROR_NAME_IN_USE, -EADDRINUSE },
                { BROKER_ERROR_QUOTA_EXCEEDED, -EDQUOT },
                { BROKER_ERROR_NO_SUCH_EVENT, -ENOENT },
                { BROKER_ERROR_BUSY, -EBUSY },
                { BROKER_ERROR_NOT_SUPPORTED, -EOPNOTSUPP },
                { SD_BUS_ERROR_ACCESS_DENIED, 0 },              /* not the contract's own */
                { "org.uebroker1.Error.FromTheFuture", 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                sd_bus_error e = SD_BUS_ERROR_MAKE_CONST(cases[i].name, "x");

                ck_assert_int_eq(broker_error_contract_errno(&e), cases[i].error);
        }
        ck_assert_int_eq(broker_error_contract_errno(NULL), 0);
}
END_TEST

START_TEST(test_errnos_to_names) {
        ck_assert_str_eq(broker_error_name_for_errno(-EMFILE), BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_str_eq(broker_error_name_for_errno(-ENFILE), BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_str_eq(broker_error_name_for_errno(-EUSERS), BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_str_eq(broker_error_name_for_errno(-EEXIST), BROKER_ERROR_NAME_IN_USE);
        ck_assert_str_eq(broker_error_name_for_errno(-EBUSY), BROKER_ERROR_BUSY);
        ck_assert_ptr_null(broker_error_name_for_errno(-ENOMEM));
        ck_assert_ptr_null(broker_error_name_for_errno(-EIO));
}
END_TEST

START_TEST(test_set_errnof) {
        sd_bus_error e = SD_BUS_ERROR_NULL;

        ck_assert_int_eq(broker_error_set_errnof(&e, -EMFILE, "cannot open %s: %m", "it"), -EMFILE);
        ck_assert_str_eq(e.name, BROKER_ERROR_QUOTA_EXCEEDED);
        ck_assert_str_eq(e.message, "cannot open it: Too many open files");
        sd_bus_error_free(&e);

        ck_assert_int_eq(broker_error_set_errnof(&e, -ENOMEM, "cannot %s: %m", "grow"), -ENOMEM);
        ck_assert_str_eq(e.name, SD_BUS_ERROR_NO_MEMORY);
        ck_assert_str_eq(e.message, "cannot grow: Cannot allocate memory");
        sd_bus_error_free(&e);
}
END_TEST

static Suite *broker_errors_suite(void) {
        Suite *s = suite_create("broker-errors");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_names_to_errnos);
        tcase_add_test(tc, test_errnos_to_names);
        tcase_add_test(tc, test_set_errnof);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(broker_errors_suite());
}
