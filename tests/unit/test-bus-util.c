/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/shared/basic/bus-util.c: bus_message_read_strv_bounded(). */
#include "check-tap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bus-util.h"

/* sd-bus makes messages only on an open bus, and a bus from sd_bus_new()
 * alone is not (-ENOTCONN). One end of a socket pair, started, is: it is
 * still authenticating, and nothing is ever sent. */
static sd_bus *bus;
static int peer_fd = -1;

static void bus_setup(void) {
        int fds[2];

        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds), 0);
        ck_assert_int_ge(sd_bus_new(&bus), 0);
        ck_assert_int_ge(sd_bus_set_fd(bus, fds[0], fds[0]), 0);
        ck_assert_int_ge(sd_bus_start(bus), 0);
        peer_fd = fds[1];
}

static void bus_teardown(void) {
        bus = sd_bus_close_unref(bus);
        close(peer_fd);
        peer_fd = -1;
}

/* A sealed call of ("as" @strings, "u" 7), its read position at the start:
 * as a handler gets it. */
static sd_bus_message *message_with(char **strings) {
        sd_bus_message *m = NULL;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.example", "/", "org.example", "M"), 0);
        ck_assert_int_ge(sd_bus_message_append_strv(m, strings), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "u", 7u), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        return m;
}

/* "s0", "s1", ... "s<n-1>", NULL-terminated; the caller frees each. */
static char **strings_new(size_t n) {
        char **l = calloc(n + 1, sizeof(*l));

        ck_assert_ptr_nonnull(l);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_ge(asprintf(&l[i], "s%zu", i), 0);
        return l;
}

static void strings_free(char **l) {
        for (size_t i = 0; l && l[i]; i++)
                free(l[i]);
        free(l);
}

static void assert_after_array(sd_bus_message *m) {
        uint32_t u = 0;

        ck_assert_int_gt(sd_bus_message_read(m, "u", &u), 0);
        ck_assert_uint_eq(u, 7);
}

START_TEST(test_reads_in_order) {
        /* Past the first growth of the array (8). */
        char **l = strings_new(20);
        sd_bus_message *m = message_with(l);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char **got = NULL;
        size_t n = 0;

        ck_assert_int_eq(bus_message_read_strv_bounded(m, 64, NULL, NULL, &e, &got, &n), 0);
        ck_assert_uint_eq(n, 20);
        for (size_t i = 0; i < n; i++)
                ck_assert_str_eq(got[i], l[i]);
        ck_assert(!sd_bus_error_is_set(&e));
        assert_after_array(m);
        free(got);
        sd_bus_message_unref(m);
        strings_free(l);
}
END_TEST

START_TEST(test_empty) {
        char *none[] = { NULL };
        sd_bus_message *m = message_with(none);
        const char **got = (const char **) none;
        size_t n = 99;

        ck_assert_int_eq(bus_message_read_strv_bounded(m, 64, NULL, NULL, NULL, &got, &n), 0);
        ck_assert_ptr_null(got);
        ck_assert_uint_eq(n, 0);
        assert_after_array(m);
        sd_bus_message_unref(m);
}
END_TEST

START_TEST(test_bound) {
        char **l = strings_new(5);
        sd_bus_message *m = message_with(l);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        const char **got = NULL;
        size_t n = 0;

        /* Exactly the bound is accepted; an array no larger than it. */
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 5, NULL, NULL, &e, &got, &n), 0);
        ck_assert_uint_eq(n, 5);
        ck_assert_str_eq(got[4], "s4");
        free(got);
        got = NULL;

        /* One more is -E2BIG, the caller's to word: nothing set, nothing
         * returned. */
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        n = 99;
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 4, NULL, NULL, &e, &got, &n), -E2BIG);
        ck_assert(!sd_bus_error_is_set(&e));
        ck_assert_ptr_null(got);
        ck_assert_uint_eq(n, 99);
        sd_bus_message_unref(m);
        strings_free(l);
}
END_TEST

struct seen {
        size_t calls;
        size_t refuse_at;       /* SIZE_MAX: none */
};

static int check_string(const char *s, size_t index, void *userdata, sd_bus_error *error) {
        struct seen *seen = userdata;
        char want[32];

        snprintf(want, sizeof(want), "s%zu", index);
        ck_assert_str_eq(s, want);
        ck_assert_uint_eq(index, seen->calls);
        seen->calls++;
        if (index == seen->refuse_at)
                return sd_bus_error_setf(error, SD_BUS_ERROR_INVALID_ARGS, "string %zu: no", index + 1);
        return 0;
}

START_TEST(test_check) {
        char **l = strings_new(6);
        sd_bus_message *m = message_with(l);
        sd_bus_error e = SD_BUS_ERROR_NULL;
        struct seen seen = { .refuse_at = SIZE_MAX };
        const char **got = NULL;
        size_t n = 0;

        /* Each string, in order, with its index. */
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 6, check_string, &seen, &e, &got, &n), 0);
        ck_assert_uint_eq(seen.calls, 6);
        ck_assert_uint_eq(n, 6);
        free(got);
        got = NULL;

        /* A refusal stops the read and is returned as it is. */
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        seen = (struct seen) { .refuse_at = 2 };
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 6, check_string, &seen, &e, &got, &n), -EINVAL);
        ck_assert_uint_eq(seen.calls, 3);
        ck_assert_str_eq(e.name, SD_BUS_ERROR_INVALID_ARGS);
        ck_assert_str_eq(e.message, "string 3: no");
        ck_assert_ptr_null(got);
        sd_bus_error_free(&e);

        /* A bad string within the bound is reported before "too many"... */
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        seen = (struct seen) { .refuse_at = 3 };
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 4, check_string, &seen, &e, &got, &n), -EINVAL);
        sd_bus_error_free(&e);

        /* ...and one beyond it is never looked at. */
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        seen = (struct seen) { .refuse_at = 4 };
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 4, check_string, &seen, &e, &got, &n), -E2BIG);
        ck_assert_uint_eq(seen.calls, 4);
        ck_assert(!sd_bus_error_is_set(&e));
        sd_bus_message_unref(m);
        strings_free(l);
}
END_TEST

START_TEST(test_not_an_array) {
        sd_bus_message *m = NULL;
        const char **got = NULL;
        size_t n = 0;

        ck_assert_int_ge(sd_bus_message_new_method_call(bus, &m, "org.example", "/", "org.example", "M"), 0);
        ck_assert_int_ge(sd_bus_message_append(m, "s", "x"), 0);
        ck_assert_int_ge(sd_bus_message_seal(m, 1, 0), 0);
        ck_assert_int_ge(sd_bus_message_rewind(m, true), 0);
        ck_assert_int_eq(bus_message_read_strv_bounded(m, 4, NULL, NULL, NULL, &got, &n), -ENXIO);
        ck_assert_ptr_null(got);
        sd_bus_message_unref(m);
}
END_TEST

static Suite *bus_util_suite(void) {
        Suite *s = suite_create("bus-util");
        TCase *tc = tcase_create("read-strv-bounded");

        tcase_add_checked_fixture(tc, bus_setup, bus_teardown);
        tcase_add_test(tc, test_reads_in_order);
        tcase_add_test(tc, test_empty);
        tcase_add_test(tc, test_bound);
        tcase_add_test(tc, test_check);
        tcase_add_test(tc, test_not_an_array);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(bus_util_suite());
}
