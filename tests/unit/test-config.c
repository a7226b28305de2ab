/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/config.c: the configuration file, read as hostile input. */
#include "check-tap.h"
#include "cleanup.h"
#include "daemon/config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A temporary file with @len bytes of @text; the path is malloc()ed. */
static char *write_temp_n(const char *text, size_t len) {
        char *path = strdup("/tmp/test-config.XXXXXX");
        int fd;

        ck_assert_ptr_nonnull(path);
        fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, len), (ssize_t) len);
        close(fd);
        return path;
}

static char *write_temp(const char *text) {
        return write_temp_n(text, strlen(text));
}

/* @path followed by @suffix (":LINE: message"). */
static char *expected(const char *path, const char *suffix) {
        char *s;

        ck_assert_int_ge(asprintf(&s, "%s%s", path, suffix), 0);
        return s;
}

static const struct broker_limits sentinel = { 7, 7, 7, 7, 7 };

/* Parses @text; asserts the error, the exact message (the path, then
 * @suffix) and that the limits are untouched. */
static void assert_parse_fails(const char *text, size_t len, int error, const char *suffix) {
        _cleanup_free_ char *path = write_temp_n(text, len);
        _cleanup_free_ char *message = NULL;
        _cleanup_free_ char *want = expected(path, suffix);
        struct broker_limits limits = sentinel;

        ck_assert_int_eq(broker_config_parse(path, &limits, NULL, &message), error);
        ck_assert_ptr_nonnull(message);
        ck_assert_str_eq(message, want);
        ck_assert_mem_eq(&limits, &sentinel, sizeof(limits));
        unlink(path);
}

static void assert_limits(const struct broker_limits *l, unsigned events_per_client, unsigned clients_per_user,
                          unsigned events, unsigned command_length, unsigned events_per_user) {
        ck_assert_uint_eq(l->events_per_client, events_per_client);
        ck_assert_uint_eq(l->clients_per_user, clients_per_user);
        ck_assert_uint_eq(l->events, events);
        ck_assert_uint_eq(l->command_length, command_length);
        ck_assert_uint_eq(l->events_per_user, events_per_user);
}

/* Parses @text, which must succeed; returns the warnings. */
static char **parse_ok(const char *text, struct broker_limits *limits, char **ret_path) {
        char *path = write_temp(text);
        char **warnings = (char **) 1;
        char *message = (char *) 1;

        ck_assert_int_eq(broker_config_parse(path, limits, &warnings, &message), 0);
        ck_assert_ptr_null(message);
        unlink(path);
        if (ret_path)
                *ret_path = path;
        else
                free(path);
        return warnings;
}

START_TEST(test_defaults) {
        struct broker_limits l;

        broker_limits_init_default(&l);
        assert_limits(&l, 256, 64, 4095, 511, 1024);
}
END_TEST

START_TEST(test_all_keys) {
        struct broker_limits l = sentinel;
        char **w = parse_ok("[Limits]\nEventsPerClient=3\nClientsPerUser=4\nEvents=5\nCommandLength=6\n"
                            "EventsPerUser=7\n", &l, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&l, 3, 4, 5, 6, 7);
}
END_TEST

START_TEST(test_unset_keys_get_defaults) {
        struct broker_limits l = sentinel;
        char **w = parse_ok("[Limits]\nEvents=100\n", &l, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&l, 256, 64, 100, 511, 1024);

        l = sentinel;
        w = parse_ok("", &l, NULL);
        ck_assert_ptr_null(w);
        assert_limits(&l, 256, 64, 4095, 511, 1024);
}
END_TEST

START_TEST(test_comments_whitespace_crlf) {
        struct broker_limits l = sentinel;
        char **w = parse_ok("# comment\r\n"
                            "; another = comment\n"
                            "\n"
                            "   \t\n"
                            "  [Limits]  \r\n"
                            "  # EventsPerClient=1\n"
                            "\tEventsPerClient  =  12\t\r\n"
                            "ClientsPerUser=\t13\n"
                            "Events =14\n"
                            " EventsPerUser = 16 \n"
                            "CommandLength= 015", /* no final newline; leading zero is still decimal */
                            &l, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&l, 12, 13, 14, 15, 16);
}
END_TEST

START_TEST(test_duplicates_override) {
        struct broker_limits l = sentinel;
        char **w = parse_ok("[Limits]\nEvents=10\nEvents=20\n[Limits]\nEvents=30\nCommandLength=40\n", &l, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&l, 256, 64, 30, 40, 1024);
}
END_TEST

START_TEST(test_range_edges) {
        struct broker_limits l = sentinel;
        char **w = parse_ok("[Limits]\nEventsPerClient=65536\nClientsPerUser=1\nEvents=4095\nCommandLength=511\n"
                            "EventsPerUser=4095\n", &l, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&l, 65536, 1, 4095, 511, 4095);
        w = parse_ok("[Limits]\nEventsPerClient=1\nClientsPerUser=65536\nEvents=1\nCommandLength=1\nEventsPerUser=1\n",
                     &l, NULL);
        ck_assert_ptr_null(w);
        assert_limits(&l, 1, 65536, 1, 1, 1);
}
END_TEST

static const struct {
        const char *line;
        int error;
        const char *message;    /* after "PATH:2: " */
} bad_values[] = {
        { "EventsPerClient=0", -ERANGE, "EventsPerClient=0 is out of range (1..65536)" },
        { "EventsPerClient=65537", -ERANGE, "EventsPerClient=65537 is out of range (1..65536)" },
        { "ClientsPerUser=0", -ERANGE, "ClientsPerUser=0 is out of range (1..65536)" },
        { "ClientsPerUser=100000", -ERANGE, "ClientsPerUser=100000 is out of range (1..65536)" },
        { "Events=0", -ERANGE, "Events=0 is out of range (1..4095)" },
        { "Events=4096", -ERANGE, "Events=4096 is out of range (1..4095)" },
        { "EventsPerUser=0", -ERANGE, "EventsPerUser=0 is out of range (1..4095)" },
        { "EventsPerUser=4096", -ERANGE, "EventsPerUser=4096 is out of range (1..4095)" },
        { "EventsPerUser=x", -EINVAL, "EventsPerUser=x is not a decimal number (1..4095)" },
        { "CommandLength=512", -ERANGE, "CommandLength=512 is out of range (1..511)" },
        { "CommandLength=0000", -ERANGE, "CommandLength=0000 is out of range (1..511)" },
        { "Events=99999999999999999999999999999", -ERANGE,
          "Events=99999999999999999999999999999 is out of range (1..4095)" },
        { "Events=", -EINVAL, "Events= needs a value (1..4095)" },
        { "Events=   ", -EINVAL, "Events= needs a value (1..4095)" },
        { "Events=-1", -EINVAL, "Events=-1 is not a decimal number (1..4095)" },
        { "Events=+5", -EINVAL, "Events=+5 is not a decimal number (1..4095)" },
        { "Events=0x10", -EINVAL, "Events=0x10 is not a decimal number (1..4095)" },
        { "Events=1e3", -EINVAL, "Events=1e3 is not a decimal number (1..4095)" },
        { "Events=1 2", -EINVAL, "Events=1 2 is not a decimal number (1..4095)" },
        { "Events=12 # inline comments are not comments", -EINVAL,
          "Events=12 # inline comments are not comments is not a decimal number (1..4095)" },
        { "Events=\x1b[31m9", -EINVAL, "Events=?[31m9 is not a decimal number (1..4095)" },
        { "Events=\xc3\xa9", -EINVAL, "Events=?? is not a decimal number (1..4095)" },
        { "garbage", -EINVAL, "expected KEY=VALUE, [Section] or a comment, not garbage" },
        { "=5", -EINVAL, "missing key before '='" },
        { "  = 5", -EINVAL, "missing key before '='" },
        { "[Limits", -EINVAL, "malformed section header [Limits (expected [Limits])" },
        { "[]", -EINVAL, "malformed section header [] (expected [Limits])" },
        { "[", -EINVAL, "malformed section header [ (expected [Limits])" },
};

START_TEST(test_bad_value) {
        _cleanup_free_ char *text = NULL, *format = NULL;

        ck_assert_int_ge(asprintf(&text, "[Limits]\n%s\nEvents=3\n", bad_values[_i].line), 0);
        ck_assert_int_ge(asprintf(&format, ":2: %s", bad_values[_i].message), 0);
        assert_parse_fails(text, strlen(text), bad_values[_i].error, format);
}
END_TEST

START_TEST(test_long_value_is_shortened_in_messages) {
        char text[200], want[200];

        snprintf(text, sizeof(text), "[Limits]\nEvents=%s\n",
                 "1111111111222222222233333333334444444444555555555566666666667777777777");
        snprintf(want, sizeof(want), ":2: Events=%s... is out of range (1..4095)",
                 "1111111111222222222233333333334444444444555555555566666666667777");
        assert_parse_fails(text, strlen(text), -ERANGE, want);
}
END_TEST

START_TEST(test_key_outside_section) {
        assert_parse_fails("Events=3\n[Limits]\n", 18, -EINVAL,
                           ":1: Events= outside of a section (expected [Limits] before it)");
        assert_parse_fails("# comment\n  Foo = 3\n", 20, -EINVAL,
                           ":2: Foo= outside of a section (expected [Limits] before it)");
}
END_TEST

START_TEST(test_unknown_key_warns) {
        struct broker_limits l = sentinel;
        _cleanup_free_ char *path = NULL, *w0 = NULL, *w1 = NULL;
        char **w = parse_ok("[Limits]\nEvents=9\nEventsPerUid=3\nFo\x01o = bar\n", &l, &path);

        ck_assert_ptr_nonnull(w);
        w0 = expected(path, ":3: unknown key EventsPerUid in [Limits], ignoring it");
        w1 = expected(path, ":4: unknown key Fo?o in [Limits], ignoring it");
        ck_assert_str_eq(w[0], w0);
        ck_assert_str_eq(w[1], w1);
        ck_assert_ptr_null(w[2]);
        assert_limits(&l, 256, 64, 9, 511, 1024);
        broker_config_warnings_free(w);
}
END_TEST

START_TEST(test_unknown_section_warns_once_and_is_skipped) {
        struct broker_limits l = sentinel;
        _cleanup_free_ char *path = NULL, *w0 = NULL;
        char **w = parse_ok("[Other]\nEvents=not even a number\nAnything=1\n[Limits]\nEvents=8\n", &l, &path);

        ck_assert_ptr_nonnull(w);
        w0 = expected(path, ":1: unknown section [Other], ignoring it");
        ck_assert_str_eq(w[0], w0);
        ck_assert_ptr_null(w[1]);
        assert_limits(&l, 256, 64, 8, 511, 1024);
        broker_config_warnings_free(w);
}
END_TEST

START_TEST(test_warnings_are_capped) {
        char text[4096] = "[Limits]\n";
        struct broker_limits l = sentinel;
        _cleanup_free_ char *path = NULL, *last = NULL, *first = NULL;
        char **w;
        size_t n = 0;

        for (int i = 0; i < 40; i++)
                snprintf(text + strlen(text), sizeof(text) - strlen(text), "Unknown%d=1\n", i);
        w = parse_ok(text, &l, &path);
        ck_assert_ptr_nonnull(w);
        while (w[n])
                n++;
        ck_assert_uint_eq(n, BROKER_CONFIG_WARNINGS_MAX + 1);
        first = expected(path, ":2: unknown key Unknown0 in [Limits], ignoring it");
        last = expected(path, ": 8 more warnings not shown");
        ck_assert_str_eq(w[0], first);
        ck_assert_str_eq(w[BROKER_CONFIG_WARNINGS_MAX], last);
        broker_config_warnings_free(w);
}
END_TEST

START_TEST(test_line_length_bound) {
        /* A comment of exactly BROKER_CONFIG_LINE_MAX bytes is fine, one more is not. */
        size_t len = 9 + BROKER_CONFIG_LINE_MAX + 1 + 9;
        _cleanup_free_ char *text = malloc(len + 2);
        struct broker_limits l = sentinel;
        char **w;

        ck_assert_ptr_nonnull(text);
        memcpy(text, "[Limits]\n", 9);
        memset(text + 9, '#', BROKER_CONFIG_LINE_MAX);
        memcpy(text + 9 + BROKER_CONFIG_LINE_MAX, "\nEvents=7\n", 11);
        w = parse_ok(text, &l, NULL);
        ck_assert_ptr_null(w);
        assert_limits(&l, 256, 64, 7, 511, 1024);

        memset(text + 9, '#', BROKER_CONFIG_LINE_MAX + 1);
        memcpy(text + 9 + BROKER_CONFIG_LINE_MAX + 1, "\nEvents=7\n", 11);
        assert_parse_fails(text, strlen(text), -EINVAL, ":2: line is longer than 4096 bytes");
}
END_TEST

START_TEST(test_nul_byte) {
        assert_parse_fails("[Limits]\nEvents=1\0\n", 19, -EINVAL, ":2: line contains a NUL byte");
}
END_TEST

START_TEST(test_file_size_bound) {
        size_t len = BROKER_CONFIG_FILE_MAX + 1;
        _cleanup_free_ char *text = malloc(len);

        ck_assert_ptr_nonnull(text);
        memset(text, '\n', len);
        assert_parse_fails(text, len, -EFBIG, ": file is larger than 1048576 bytes");
}
END_TEST

START_TEST(test_missing_file) {
        struct broker_limits l = sentinel;
        char *message = (char *) 1;
        char **warnings = (char **) 1;

        ck_assert_int_eq(broker_config_parse("/nonexistent/uebrokerd.conf", &l, &warnings, &message), -ENOENT);
        ck_assert_ptr_null(message);
        ck_assert_ptr_null(warnings);
        ck_assert_mem_eq(&l, &sentinel, sizeof(l));
        message = (char *) 1;
        ck_assert_int_eq(broker_config_load("/nonexistent/uebrokerd.conf", &l, &message), -ENOENT);
        ck_assert_ptr_null(message);
}
END_TEST

START_TEST(test_not_a_regular_file) {
        char dir[] = "/tmp/test-config-dir.XXXXXX";
        _cleanup_free_ char *fifo = NULL, *message = NULL, *want = NULL;
        struct broker_limits l = sentinel;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(broker_config_load(dir, &l, &message), -EINVAL);
        want = expected(dir, ": not a regular file");
        ck_assert_str_eq(message, want);
        free(message);
        free(want);

        /* A FIFO must not block the daemon's start. */
        ck_assert_int_ge(asprintf(&fifo, "%s/fifo", dir), 0);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        message = NULL;
        ck_assert_int_eq(broker_config_load(fifo, &l, &message), -EINVAL);
        want = expected(fifo, ": not a regular file");
        ck_assert_str_eq(message, want);
        ck_assert_mem_eq(&l, &sentinel, sizeof(l));
        unlink(fifo);
        rmdir(dir);
}
END_TEST

START_TEST(test_load_logs_and_succeeds) {
        _cleanup_free_ char *path = write_temp("[Limits]\nUnknown=1\nEventsPerClient=5\n");
        char *message = (char *) 1;
        struct broker_limits l = sentinel;

        ck_assert_int_eq(broker_config_load(path, &l, &message), 0);
        ck_assert_ptr_null(message);
        assert_limits(&l, 5, 64, 4095, 511, 1024);
        unlink(path);
}
END_TEST

/* The shipped example: valid as is, and every commented-out key, once
 * uncommented, is the documented default. */
START_TEST(test_example_file) {
        struct broker_limits l = sentinel, defaults;
        FILE *f = fopen(EXAMPLE_CONFIG, "re");
        char line[512], uncommented[4096] = "";
        unsigned keys = 0;
        char **w;

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(broker_config_parse(EXAMPLE_CONFIG, &l, &w, NULL), 0);
        ck_assert_ptr_null(w);
        broker_limits_init_default(&defaults);
        ck_assert_mem_eq(&l, &defaults, sizeof(l));

        while (fgets(line, sizeof(line), f)) {
                const char *p = line;

                if (line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z' && strchr(line, '=')) {
                        p++;
                        keys++;
                }
                ck_assert_uint_lt(strlen(uncommented) + strlen(p), sizeof(uncommented));
                strcat(uncommented, p);
        }
        fclose(f);
        ck_assert_uint_eq(keys, 5);

        l = sentinel;
        w = parse_ok(uncommented, &l, NULL);
        ck_assert_ptr_null(w);
        ck_assert_mem_eq(&l, &defaults, sizeof(l));
}
END_TEST

static Suite *config_suite(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, test_defaults);
        tcase_add_test(tc, test_all_keys);
        tcase_add_test(tc, test_unset_keys_get_defaults);
        tcase_add_test(tc, test_comments_whitespace_crlf);
        tcase_add_test(tc, test_duplicates_override);
        tcase_add_test(tc, test_range_edges);
        tcase_add_loop_test(tc, test_bad_value, 0, sizeof(bad_values) / sizeof(bad_values[0]));
        tcase_add_test(tc, test_long_value_is_shortened_in_messages);
        tcase_add_test(tc, test_key_outside_section);
        tcase_add_test(tc, test_unknown_key_warns);
        tcase_add_test(tc, test_unknown_section_warns_once_and_is_skipped);
        tcase_add_test(tc, test_warnings_are_capped);
        tcase_add_test(tc, test_line_length_bound);
        tcase_add_test(tc, test_nul_byte);
        tcase_add_test(tc, test_file_size_bound);
        tcase_add_test(tc, test_missing_file);
        tcase_add_test(tc, test_not_a_regular_file);
        tcase_add_test(tc, test_load_logs_and_succeeds);
        tcase_add_test(tc, test_example_file);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(config_suite());
}
