/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/core/event-store.c: the events-and-owners file, written and read back,
 * and what it does with lines it did not write. */
#include "charges-unbounded.h"
#include "check-tap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "cleanup.h"
#include "event-store.h"

static sd_event *event;
static struct provider_link provider_link;
static struct event_registry registry, *const reg = &registry;

static struct user_charges charges;

/* No bound of the charges' own: the test is about the registry. */
static void charges_init(void) {
        struct charge_bounds unbounded;

        charge_bounds_unbounded(&unbounded);
        user_charges_init(&charges, &unbounded);
}

static void setup(void) {
        ck_assert_int_eq(sd_event_new(&event), 0);
        ck_assert_int_eq(provider_link_start(&provider_link, event, &embedded_provider_ops, NULL), 0);
        charges_init();
        event_registry_init(reg, &provider_link, &charges);
}

static void teardown(void) {
        event_registry_done(reg);
        provider_link_stop(&provider_link);
        event = sd_event_unref(event);
}

static void add(const char *command, uid_t owner) {
        struct event_def *def = NULL;
        struct broker_event *ev;

        ck_assert_int_eq(event_def_parse(command, 0, &def, NULL), 0);
        ck_assert_int_eq(event_registry_add(reg, def, owner, &ev), 0);
}

static int parse(const char *text) {
        return event_store_parse(reg, text, strlen(text), "test");
}

START_TEST(test_format_is_uid_and_command_per_line) {
        _cleanup_free_ char *text = NULL;

        add("first u32 a; __data_loc char[] s", 1000);
        add("second:flag struct x y 8", 0);
        text = event_store_format(reg);
        ck_assert_str_eq(text, "1000:1 first u32 a; __data_loc char[] s\n0:2 second struct x y 8\n");
}
END_TEST

START_TEST(test_round_trip_restores_names_owners_fields) {
        _cleanup_free_ char *text = NULL, *again = NULL;
        struct broker_event *ev;

        add("rt_a u32 a", 1000);
        add("rt_b char[16] who; u64 n", 4294967294u);
        text = event_store_format(reg);
        event_registry_done(reg);
        charges_init();
        event_registry_init(reg, &provider_link, &charges);

        ck_assert_int_eq(parse(text), 2);
        ev = event_registry_find(reg, "rt_b");
        ck_assert_ptr_nonnull(ev);
        ck_assert_uint_eq(ev->owner_uid, 4294967294u);
        ck_assert_uint_eq(ev->n_registrations, 0);
        again = event_store_format(reg);
        ck_assert_str_eq(again, text);
}
END_TEST

START_TEST(test_restore_keeps_status_indexes) {
        /* A restarted broker gives each event the index it had, whatever
         * the order of the lines, so a client's status byte keeps its
         * address; a line without index (an older broker) takes a free one. */
        ck_assert_int_eq(parse("7:42 kept_a u32 a\n"
                               "7:3 kept_b u32 a\n"
                               "7 no_index u32 a\n"
                               "7:42 clash u32 a\n"),
                         4);
        ck_assert_uint_eq(event_registry_find(reg, "kept_a")->status_index, 42);
        ck_assert_uint_eq(event_registry_find(reg, "kept_b")->status_index, 3);
        ck_assert_uint_ne(event_registry_find(reg, "no_index")->status_index, 42);
        ck_assert_uint_ne(event_registry_find(reg, "no_index")->status_index, 3);
        /* Index taken already: the event still loads, elsewhere. */
        ck_assert_uint_ne(event_registry_find(reg, "clash")->status_index, 42);
        ck_assert_uint_ne(event_registry_find(reg, "clash")->status_index, 0);
}
END_TEST

START_TEST(test_bad_lines_are_skipped) {
        /* Each bad line is skipped; the good ones around it load. */
        ck_assert_int_eq(parse("1 ok_a u32 a\n"
                               "x bad_uid u32 a\n"
                               "4294967295 uid_invalid u32 a\n"
                               "12345678901 uid_too_long u32 a\n"
                               "1000\n"
                               "1000 \n"
                               "1000 bad field here\n"
                               "1000 ok_a u32 a\n"            /* a second of one name */
                               "1:0 zero_index u32 a\n"
                               "1:4096 index_too_large u32 a\n"
                               "1: no_index_digits u32 a\n"
                               "1:12345 index_too_long u32 a\n"
                               "\n"
                               "2 ok_b u32 b"),               /* no final newline */
                         2);
        ck_assert_ptr_nonnull(event_registry_find(reg, "ok_a"));
        ck_assert_ptr_nonnull(event_registry_find(reg, "ok_b"));
        ck_assert_uint_eq(reg->n_events, 2);
}
END_TEST

START_TEST(test_nul_and_overlong_lines_are_skipped) {
        char text[EVENT_STORE_LINE_MAX + 64];

        memset(text, 'a', sizeof(text));
        memcpy(text, "1 ", 2);
        text[sizeof(text) - 1] = '\n';
        ck_assert_int_eq(event_store_parse(reg, text, sizeof(text), "test"), 0);
        ck_assert_int_eq(event_store_parse(reg, "1 nul\0_ev u32 a\n", 16, "test"), 0);
        ck_assert_uint_eq(reg->n_events, 0);
}
END_TEST

/* A file of junk: a bounded number of lines in the log, then a count. */
START_TEST(test_junk_file_logs_a_bounded_number_of_lines) {
        size_t n = 100000, size = n * 2;
        char *text = malloc(size), line[4096];
        FILE *log;
        int saved = dup(STDERR_FILENO);
        unsigned lines = 0;

        ck_assert_ptr_nonnull(text);
        for (size_t i = 0; i < n; i++) {
                text[2 * i] = 'j';
                text[2 * i + 1] = '\n';
        }
        log = tmpfile();
        ck_assert_ptr_nonnull(log);
        ck_assert_int_ge(saved, 0);
        ck_assert_int_ge(dup2(fileno(log), STDERR_FILENO), 0);
        ck_assert_int_eq(event_store_parse(reg, text, size, "junk"), 0);
        fflush(stderr);
        ck_assert_int_ge(dup2(saved, STDERR_FILENO), 0);
        close(saved);
        rewind(log);
        while (fgets(line, sizeof(line), log))
                lines++;
        fclose(log);
        free(text);
        ck_assert_uint_le(lines, 12);
        ck_assert_uint_ge(lines, 2);
}
END_TEST

START_TEST(test_save_load_through_a_directory) {
        char dir[] = "/tmp/test-event-store.XXXXXX", path[64];
        struct stat st;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(event_store_load(reg, dir), 0);        /* nothing saved yet */
        add("saved u32 a", 7);
        ck_assert_int_eq(event_store_save(reg, dir), 0);
        snprintf(path, sizeof(path), "%s/" EVENT_STORE_FILE, dir);
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert_uint_eq(st.st_mode & 0777, 0600);
        event_registry_done(reg);
        charges_init();
        event_registry_init(reg, &provider_link, &charges);
        ck_assert_int_eq(event_store_load(reg, dir), 1);
        ck_assert_uint_eq(event_registry_find(reg, "saved")->owner_uid, 7);

        /* Writable by others: not the broker's file, not read. */
        ck_assert_int_eq(chmod(path, 0666), 0);
        event_registry_done(reg);
        charges_init();
        event_registry_init(reg, &provider_link, &charges);
        ck_assert_int_eq(event_store_load(reg, dir), -EPERM);
        ck_assert_uint_eq(reg->n_events, 0);
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *event_store_suite(void) {
        Suite *s = suite_create("event-store");
        TCase *tc = tcase_create("core");

        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, test_format_is_uid_and_command_per_line);
        tcase_add_test(tc, test_round_trip_restores_names_owners_fields);
        tcase_add_test(tc, test_restore_keeps_status_indexes);
        tcase_add_test(tc, test_bad_lines_are_skipped);
        tcase_add_test(tc, test_nul_and_overlong_lines_are_skipped);
        tcase_add_test(tc, test_junk_file_logs_a_bounded_number_of_lines);
        tcase_add_test(tc, test_save_load_through_a_directory);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(event_store_suite());
}
