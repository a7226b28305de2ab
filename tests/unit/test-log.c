/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* src/shared/basic/log.c: the journal fields of a record, and when stderr is the
 * journal. */
#include "check-tap.h"
#include "log.h"

#include <string.h>
#include <sys/stat.h>

/* The fields as "NAME=value\n" lines, in order. */
static char *joined(const struct log_fields *f) {
        static char out[sizeof(f->text) + LOG_FIELDS_MAX];
        size_t used = 0;

        for (size_t i = 0; i < f->n; i++) {
                ck_assert_uint_lt(used + f->iov[i].iov_len + 1, sizeof(out));
                memcpy(out + used, f->iov[i].iov_base, f->iov[i].iov_len);
                used += f->iov[i].iov_len;
                out[used++] = '\n';
        }
        out[used] = '\0';
        return out;
}

START_TEST(test_plain_record) {
        struct log_fields f;

        log_fields_build(&f, LOG_WARNING, "uebrokerd", NULL, "Cannot do it: No such file");
        ck_assert_str_eq(joined(&f), "MESSAGE=Cannot do it: No such file\nPRIORITY=4\nSYSLOG_IDENTIFIER=uebrokerd\n");
        log_fields_build(&f, LOG_DEBUG, NULL, NULL, "");
        ck_assert_str_eq(joined(&f), "MESSAGE=\nPRIORITY=7\n");
}
END_TEST

START_TEST(test_event_record) {
        const struct log_about about = {
                .message_id = "b7a0d51fd0b64accaeacf4326e0823ac",
                .event = "hello_tick",
                .uid = 1000,
                .pid = 4242,
        };
        struct log_fields f;

        log_fields_build(&f, LOG_INFO, "uebrokerd", &about, "Event hello_tick created by uid 1000 (pid 4242).");
        ck_assert_str_eq(joined(&f),
                         "MESSAGE=Event hello_tick created by uid 1000 (pid 4242).\n"
                         "PRIORITY=6\n"
                         "SYSLOG_IDENTIFIER=uebrokerd\n"
                         "MESSAGE_ID=b7a0d51fd0b64accaeacf4326e0823ac\n"
                         "UEB_EVENT=hello_tick\n"
                         "UEB_UID=1000\n"
                         "UEB_PID=4242\n");
        /* Each field is its own iovec, without a terminator. */
        ck_assert_uint_eq(f.n, 7);
        ck_assert_uint_eq(f.iov[4].iov_len, strlen("UEB_EVENT=hello_tick"));
}
END_TEST

START_TEST(test_uid_zero_and_unknown) {
        struct log_fields f;

        log_fields_build(&f, LOG_INFO, NULL, &(struct log_about) { .uid = 0 }, "m");
        ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=6\nUEB_UID=0\n");
        log_fields_build(&f, LOG_INFO, NULL, &(struct log_about) { .uid = LOG_UID_NONE, .pid = 0 }, "m");
        ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=6\n");
        log_fields_build(&f, LOG_INFO, NULL, &(struct log_about) { .uid = 4294967294u, .pid = -1 }, "m");
        ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=6\nUEB_UID=4294967294\n");
}
END_TEST

/* What a caller sent is never written as a field unless it is valid: a
 * refused Register's "name" may be anything. */
START_TEST(test_invalid_values_are_left_out) {
        static const char *const bad_events[] = { "", "1abc", "a b", "a\nMESSAGE=forged", "a=b", "caf\xc3\xa9" };
        static const char *const bad_ids[] = { "", "B7A0D51FD0B64ACCAEACF4326E0823AC", "b7a0d51fd0b64acc",
                                               "b7a0d51fd0b64accaeacf4326e0823ac0", "g7a0d51fd0b64accaeacf4326e0823ac" };
        struct log_fields f;

        for (size_t i = 0; i < sizeof(bad_events) / sizeof(bad_events[0]); i++) {
                log_fields_build(&f, LOG_INFO, NULL,
                                 &(struct log_about) { .event = bad_events[i], .uid = LOG_UID_NONE }, "m");
                ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=6\n");
        }
        for (size_t i = 0; i < sizeof(bad_ids) / sizeof(bad_ids[0]); i++) {
                log_fields_build(&f, LOG_INFO, NULL,
                                 &(struct log_about) { .message_id = bad_ids[i], .uid = LOG_UID_NONE }, "m");
                ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=6\n");
        }
        /* A 255-byte name is valid, 256 is not. */
        char name[257];
        memset(name, 'a', 256);
        name[256] = '\0';
        log_fields_build(&f, LOG_INFO, NULL, &(struct log_about) { .event = name, .uid = LOG_UID_NONE }, "m");
        ck_assert_uint_eq(f.n, 2);
        name[255] = '\0';
        log_fields_build(&f, LOG_INFO, NULL, &(struct log_about) { .event = name, .uid = LOG_UID_NONE }, "m");
        ck_assert_uint_eq(f.n, 3);
        ck_assert_uint_eq(f.iov[2].iov_len, strlen("UEB_EVENT=") + 255);
}
END_TEST

START_TEST(test_long_message_is_cut_and_fields_stay) {
        static char message[LOG_FIELD_VALUE_MAX * 2];
        const struct log_about about = { .message_id = "2570cd7e85584e59999940128f203305", .event = "e",
                                         .uid = 1, .pid = 2 };
        struct log_fields f;

        memset(message, 'x', sizeof(message) - 1);
        log_fields_build(&f, LOG_ERR, "uebrokerd", &about, message);
        ck_assert_uint_eq(f.n, 7);
        ck_assert_uint_eq(f.iov[0].iov_len, strlen("MESSAGE=") + LOG_FIELD_VALUE_MAX);
        ck_assert_int_eq(memcmp(f.iov[6].iov_base, "UEB_PID=2", 9), 0);
}
END_TEST

START_TEST(test_priority_ignores_facility) {
        struct log_fields f;

        log_fields_build(&f, LOG_DAEMON | LOG_NOTICE, NULL, NULL, "m");
        ck_assert_str_eq(joined(&f), "MESSAGE=m\nPRIORITY=5\n");
}
END_TEST

START_TEST(test_journal_stream) {
        ck_assert(log_journal_stream_matches("8:12345", 8, 12345));
        ck_assert(log_journal_stream_matches("64768:18446744073709551615", 64768, (ino_t) 18446744073709551615ull));
        ck_assert(!log_journal_stream_matches(NULL, 8, 12345));
        ck_assert(!log_journal_stream_matches("", 8, 12345));
        ck_assert(!log_journal_stream_matches("8:12346", 8, 12345));
        ck_assert(!log_journal_stream_matches("9:12345", 8, 12345));
        ck_assert(!log_journal_stream_matches("8:12345x", 8, 12345));
        ck_assert(!log_journal_stream_matches("8:12345 ", 8, 12345));
        ck_assert(!log_journal_stream_matches("-8:12345", (dev_t) -8, 12345));
        ck_assert(!log_journal_stream_matches("8", 8, 0));
        ck_assert(!log_journal_stream_matches(" 8:12345", 8, 12345));
}
END_TEST

/* Without JOURNAL_STREAM naming stderr, records go to stderr. */
START_TEST(test_setup_stays_on_stderr) {
        struct stat st;
        char env[64];

        unsetenv("JOURNAL_STREAM");
        log_setup("test-log");
        ck_assert(!log_to_journal());
        setenv("JOURNAL_STREAM", "1:1", 1);       /* inherited, names something else */
        log_setup("test-log");
        ck_assert(!log_to_journal());
        /* Naming stderr itself: the journal (where sd-journal is built in). */
        ck_assert_int_eq(fstat(2, &st), 0);
        snprintf(env, sizeof(env), "%llu:%llu", (unsigned long long) st.st_dev, (unsigned long long) st.st_ino);
        setenv("JOURNAL_STREAM", env, 1);
        log_setup("test-log");
        ck_assert(log_to_journal() == (HAVE_SD_JOURNAL != 0));
        unsetenv("JOURNAL_STREAM");
        log_setup("test-log");
}
END_TEST

int main(void) {
        Suite *s = suite_create("log");
        TCase *tc = tcase_create("fields");

        tcase_add_test(tc, test_plain_record);
        tcase_add_test(tc, test_event_record);
        tcase_add_test(tc, test_uid_zero_and_unknown);
        tcase_add_test(tc, test_invalid_values_are_left_out);
        tcase_add_test(tc, test_long_message_is_cut_and_fields_stay);
        tcase_add_test(tc, test_priority_ignores_facility);
        tcase_add_test(tc, test_journal_stream);
        tcase_add_test(tc, test_setup_stays_on_stderr);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
