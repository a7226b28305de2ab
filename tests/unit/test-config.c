/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* daemon/config/broker-config.c: the configuration file, read as hostile input. */
#include "check-tap.h"
#include "cleanup.h"
#include "daemon/config/broker-config.h"

#include <errno.h>
#include <ftw.h>
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

static const struct broker_limits sentinel_limits = { 7, 7, 7, 7, 7, 7, 7, 7, 7 };

/* What the parser must leave alone on failure. */
static struct broker_config sentinel(void) {
        return (struct broker_config) { .limits = sentinel_limits };
}

static void assert_untouched(const struct broker_config *c) {
        ck_assert_mem_eq(&c->limits, &sentinel_limits, sizeof(c->limits));
        ck_assert_ptr_null(c->reservations.items);
        ck_assert_uint_eq(c->reservations.n, 0);
}

/* The documented defaults, written out (not taken from the code under test). */
static struct broker_limits defaults(void) {
        return (struct broker_limits) {
                .events_per_client = 256,
                .clients_per_user = 64,
                .events = 4095,
                .command_length = 511,
                .events_per_user = 256,
                .clients = 8192,
                .authorizations_per_user = 8,
                .unused_event_expiry_sec = 21600,
                .outgoing_queue = 1024,
                .ring_memory_kib = 32768,
                .record_streams = 64,
                .new_events_per_user_per_minute = 60,
        };
}

static void assert_limits(const struct broker_limits *l, const struct broker_limits *want) {
        ck_assert_uint_eq(l->events_per_client, want->events_per_client);
        ck_assert_uint_eq(l->clients_per_user, want->clients_per_user);
        ck_assert_uint_eq(l->events, want->events);
        ck_assert_uint_eq(l->command_length, want->command_length);
        ck_assert_uint_eq(l->events_per_user, want->events_per_user);
        ck_assert_uint_eq(l->clients, want->clients);
        ck_assert_uint_eq(l->authorizations_per_user, want->authorizations_per_user);
        ck_assert_uint_eq(l->unused_event_expiry_sec, want->unused_event_expiry_sec);
        ck_assert_uint_eq(l->outgoing_queue, want->outgoing_queue);
        ck_assert_uint_eq(l->ring_memory_kib, want->ring_memory_kib);
        ck_assert_uint_eq(l->ring_memory_per_user_kib, want->ring_memory_per_user_kib);
        ck_assert_uint_eq(l->record_streams, want->record_streams);
        ck_assert_uint_eq(l->record_streams_per_user, want->record_streams_per_user);
        ck_assert_uint_eq(l->new_events_per_user_per_minute, want->new_events_per_user_per_minute);
}

/* Parses @path, which must fail with @error and exactly @message (NULL:
 * none); asserts that @c is untouched. */
static void assert_path_fails(const char *path, int error, const char *message) {
        struct broker_config c = sentinel();
        _cleanup_free_ char *got = NULL;

        ck_assert_int_eq(broker_config_parse(path, NULL, &c, NULL, &got), error);
        if (message) {
                ck_assert_ptr_nonnull(got);
                ck_assert_str_eq(got, message);
        } else
                ck_assert_ptr_null(got);
        assert_untouched(&c);
}

/* Parses @text; asserts the error, the exact message (the path, then
 * @suffix) and that the configuration is untouched. */
static void assert_parse_fails(const char *text, size_t len, int error, const char *suffix) {
        _cleanup_free_ char *path = write_temp_n(text, len);
        _cleanup_free_ char *want = expected(path, suffix);

        assert_path_fails(path, error, want);
        unlink(path);
}

/* Parses @path, which must succeed; returns the warnings. */
static char **parse_path_ok(const char *path, struct broker_config *c) {
        char **warnings = (char **) 1;
        char *message = (char *) 1;

        ck_assert_int_eq(broker_config_parse(path, NULL, c, &warnings, &message), 0);
        ck_assert_ptr_null(message);
        return warnings;
}

/* Parses @text, which must succeed; returns the warnings. */
static char **parse_ok(const char *text, struct broker_config *c, char **ret_path) {
        char *path = write_temp(text);
        char **warnings = parse_path_ok(path, c);

        unlink(path);
        if (ret_path)
                *ret_path = path;
        else
                free(path);
        return warnings;
}

/* Parses @text, which must succeed without warnings; asserts the limits
 * and that there are no reservations. */
static void assert_parses_to(const char *text, const struct broker_limits *want) {
        struct broker_config c = sentinel();
        char **w = parse_ok(text, &c, NULL);

        ck_assert_ptr_null(w);
        assert_limits(&c.limits, want);
        ck_assert_uint_eq(c.reservations.n, 0);
        broker_config_done(&c);
}

/* Asserts the NULL-terminated @w is exactly @n strings: @path then each suffix. */
static void assert_warnings(char **w, const char *path, size_t n, const char *const *suffixes) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *want = expected(path, suffixes[i]);

                ck_assert_ptr_nonnull(w);
                ck_assert_ptr_nonnull(w[i]);
                ck_assert_str_eq(w[i], want);
        }
        if (n > 0)
                ck_assert_ptr_null(w[n]);
        else
                ck_assert_ptr_null(w);
        broker_config_warnings_free(w);
}

START_TEST(test_defaults) {
        struct broker_limits l, want = defaults();
        struct broker_config c = sentinel();

        broker_limits_init_default(&l);
        assert_limits(&l, &want);
        /* The numbers as documented, once, spelled out. */
        ck_assert_uint_eq(l.events_per_user, 256);
        ck_assert_uint_eq(l.clients, 8192);
        ck_assert_uint_eq(l.authorizations_per_user, 8);
        ck_assert_uint_eq(l.unused_event_expiry_sec, 6 * 3600);
        ck_assert_uint_eq(l.outgoing_queue, 1024);

        broker_config_init_default(&c);
        assert_limits(&c.limits, &want);
        ck_assert_ptr_null(c.reservations.items);
        ck_assert_uint_eq(c.reservations.n, 0);
        broker_config_done(&c);
        broker_config_done(&c);         /* idempotent */
        broker_config_done(NULL);
}
END_TEST

START_TEST(test_all_keys) {
        struct broker_limits want = { 3, 4, 5, 6, 7, 8, 9, 100, 17, 20, 19, 18, 2, 21 };

        assert_parses_to("[Limits]\nEventsPerClient=3\nClientsPerUser=4\nEvents=5\nCommandLength=6\n"
                         "EventsPerUser=7\nClients=8\nAuthorizationsPerUser=9\nUnusedEventExpirySec=100\n"
                         "OutgoingQueue=17\nRingMemoryKiB=20\nRingMemoryPerUserKiB=19\nRecordStreams=18\n"
                         "RecordStreamsPerUser=2\nNewEventsPerUserPerMinute=21\n", &want);
}
END_TEST

START_TEST(test_unset_keys_get_defaults) {
        struct broker_limits want = defaults();

        assert_parses_to("", &want);
        want.events = 100;
        assert_parses_to("[Limits]\nEvents=100\n", &want);
        want = defaults();
        want.unused_event_expiry_sec = 3600;
        assert_parses_to("[Limits]\nUnusedEventExpirySec=3600\n", &want);
        want = defaults();
        want.new_events_per_user_per_minute = 5;
        want.record_streams_per_user = 3;
        assert_parses_to("[Limits]\nNewEventsPerUserPerMinute=5\nRecordStreamsPerUser=3\n", &want);
}
END_TEST

START_TEST(test_comments_whitespace_crlf) {
        struct broker_limits want = defaults();

        want.events_per_client = 12;
        want.clients_per_user = 13;
        want.events = 14;
        want.command_length = 15;
        want.events_per_user = 16;
        want.outgoing_queue = 17;
        assert_parses_to("# comment\r\n"
                         "; another = comment\n"
                         "\n"
                         "   \t\n"
                         "  [Limits]  \r\n"
                         "  # EventsPerClient=1\n"
                         "\tEventsPerClient  =  12\t\r\n"
                         "ClientsPerUser=\t13\n"
                         "Events =14\n"
                         " EventsPerUser = 16 \n"
                         "OutgoingQueue = 17\r\n"
                         "CommandLength= 015", /* no final newline; leading zero is still decimal */
                         &want);
}
END_TEST

START_TEST(test_duplicates_override) {
        struct broker_limits want = defaults();

        want.events = 30;
        want.command_length = 40;
        want.clients = 2;
        assert_parses_to("[Limits]\nEvents=10\nClients=1\nEvents=20\n[Reservations]\n[Limits]\nEvents=30\n"
                         "CommandLength=40\nClients=2\n", &want);
}
END_TEST

START_TEST(test_range_edges) {
        struct broker_limits max = { 65536, 65536, 4095, 511, 4095, 65536, 1024, 31536000, 65536,
                                     1048576, 1048576, 1024, 1024, 65536 };
        struct broker_limits min = { 1, 1, 1, 1, 1, 1, 1, 60, 16, 16, 16, 1, 1, 1 };

        assert_parses_to("[Limits]\nEventsPerClient=65536\nClientsPerUser=65536\nEvents=4095\nCommandLength=511\n"
                         "EventsPerUser=4095\nClients=65536\nAuthorizationsPerUser=1024\n"
                         "UnusedEventExpirySec=31536000\nOutgoingQueue=65536\nRingMemoryKiB=1048576\n"
                         "RingMemoryPerUserKiB=1048576\nRecordStreams=1024\nRecordStreamsPerUser=1024\n"
                         "NewEventsPerUserPerMinute=65536\n", &max);
        assert_parses_to("[Limits]\nEventsPerClient=1\nClientsPerUser=1\nEvents=1\nCommandLength=1\nEventsPerUser=1\n"
                         "Clients=1\nAuthorizationsPerUser=1\nUnusedEventExpirySec=60\nOutgoingQueue=16\n"
                         "RingMemoryKiB=16\nRingMemoryPerUserKiB=16\nRecordStreams=1\nRecordStreamsPerUser=1\n"
                         "NewEventsPerUserPerMinute=1\n", &min);
        ck_assert_uint_eq(BROKER_CONFIG_EXPIRY_MAX, 31536000);
}
END_TEST

static const struct {
        const char *line;
        int error;
        const char *message;    /* after "PATH:2: " */
} bad_values[] = {
        { "EventsPerClient=0", -ERANGE, "EventsPerClient=0 is out of range (1..65536)" },
        { "NewEventsPerUserPerMinute=0", -ERANGE, "NewEventsPerUserPerMinute=0 is out of range (1..65536)" },
        { "RingMemoryKiB=15", -ERANGE, "RingMemoryKiB=15 is out of range (16..1048576)" },
        { "RecordStreamsPerUser=1025", -ERANGE, "RecordStreamsPerUser=1025 is out of range (1..1024)" },
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
        { "Clients=0", -ERANGE, "Clients=0 is out of range (1..65536)" },
        { "Clients=65537", -ERANGE, "Clients=65537 is out of range (1..65536)" },
        { "Clients=", -EINVAL, "Clients= needs a value (1..65536)" },
        { "AuthorizationsPerUser=0", -ERANGE, "AuthorizationsPerUser=0 is out of range (1..1024)" },
        { "AuthorizationsPerUser=1025", -ERANGE, "AuthorizationsPerUser=1025 is out of range (1..1024)" },
        { "AuthorizationsPerUser=8s", -EINVAL, "AuthorizationsPerUser=8s is not a decimal number (1..1024)" },
        { "UnusedEventExpirySec=0", -ERANGE, "UnusedEventExpirySec=0 is out of range (60..31536000)" },
        { "UnusedEventExpirySec=59", -ERANGE, "UnusedEventExpirySec=59 is out of range (60..31536000)" },
        { "UnusedEventExpirySec=31536001", -ERANGE,
          "UnusedEventExpirySec=31536001 is out of range (60..31536000)" },
        { "UnusedEventExpirySec=4294967356", -ERANGE,       /* 2^32 + 60: no wrap-around */
          "UnusedEventExpirySec=4294967356 is out of range (60..31536000)" },
        { "UnusedEventExpirySec=6h", -EINVAL, "UnusedEventExpirySec=6h is not a decimal number (60..31536000)" },
        { "OutgoingQueue=0", -ERANGE, "OutgoingQueue=0 is out of range (16..65536)" },
        { "OutgoingQueue=15", -ERANGE, "OutgoingQueue=15 is out of range (16..65536)" },
        { "OutgoingQueue=65537", -ERANGE, "OutgoingQueue=65537 is out of range (16..65536)" },
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
        { "[Limits", -EINVAL, "malformed section header [Limits (expected [Limits] or [Reservations])" },
        { "[]", -EINVAL, "malformed section header [] (expected [Limits] or [Reservations])" },
        { "[", -EINVAL, "malformed section header [ (expected [Limits] or [Reservations])" },
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
                           ":1: Events= outside of a section (expected [Limits] or [Reservations] before it)");
        assert_parse_fails("# comment\n  Foo = 3\n", 20, -EINVAL,
                           ":2: Foo= outside of a section (expected [Limits] or [Reservations] before it)");
}
END_TEST

START_TEST(test_unknown_key_warns) {
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        _cleanup_free_ char *path = NULL;
        char **w = parse_ok("[Limits]\nEvents=9\nEventsPerUid=3\nFo\x01o = bar\n", &c, &path);

        assert_warnings(w, path, 2, (const char *const[]) {
                ":3: unknown key EventsPerUid in [Limits], ignoring it",
                ":4: unknown key Fo?o in [Limits], ignoring it",
        });
        want.events = 9;
        assert_limits(&c.limits, &want);
        broker_config_done(&c);
}
END_TEST

START_TEST(test_unknown_section_warns_once_and_is_skipped) {
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        _cleanup_free_ char *path = NULL;
        char **w = parse_ok("[Other]\nEvents=not even a number\nAnything=1\n[Limits]\nEvents=8\n", &c, &path);

        assert_warnings(w, path, 1, (const char *const[]) { ":1: unknown section [Other], ignoring it" });
        want.events = 8;
        assert_limits(&c.limits, &want);
        broker_config_done(&c);
}
END_TEST

START_TEST(test_warnings_are_capped) {
        char text[4096] = "[Limits]\n";
        struct broker_config c = sentinel();
        _cleanup_free_ char *path = NULL, *last = NULL, *first = NULL;
        char **w;
        size_t n = 0;

        for (int i = 0; i < 40; i++)
                snprintf(text + strlen(text), sizeof(text) - strlen(text), "Unknown%d=1\n", i);
        w = parse_ok(text, &c, &path);
        ck_assert_ptr_nonnull(w);
        while (w[n])
                n++;
        ck_assert_uint_eq(n, BROKER_CONFIG_WARNINGS_MAX + 1);
        first = expected(path, ":2: unknown key Unknown0 in [Limits], ignoring it");
        last = expected(path, ": 8 more warnings not shown");
        ck_assert_str_eq(w[0], first);
        ck_assert_str_eq(w[BROKER_CONFIG_WARNINGS_MAX], last);
        broker_config_warnings_free(w);
        broker_config_done(&c);
}
END_TEST

START_TEST(test_line_length_bound) {
        /* A comment of exactly BROKER_CONFIG_LINE_MAX bytes is fine, one more is not. */
        size_t len = 9 + BROKER_CONFIG_LINE_MAX + 1 + 9;
        _cleanup_free_ char *text = malloc(len + 2);
        struct broker_limits want = defaults();

        ck_assert_ptr_nonnull(text);
        memcpy(text, "[Limits]\n", 9);
        memset(text + 9, '#', BROKER_CONFIG_LINE_MAX);
        memcpy(text + 9 + BROKER_CONFIG_LINE_MAX, "\nEvents=7\n", 11);
        want.events = 7;
        assert_parses_to(text, &want);

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
        struct broker_config c = sentinel();
        char *message = (char *) 1;
        char **warnings = (char **) 1;

        ck_assert_int_eq(broker_config_parse("/nonexistent/uebrokerd.conf", NULL, &c, &warnings, &message), -ENOENT);
        ck_assert_ptr_null(message);
        ck_assert_ptr_null(warnings);
        assert_untouched(&c);
        message = (char *) 1;
        ck_assert_int_eq(broker_config_load("/nonexistent/uebrokerd.conf", NULL, &c, &message), -ENOENT);
        ck_assert_ptr_null(message);
        assert_untouched(&c);
}
END_TEST

START_TEST(test_not_a_regular_file) {
        char dir[] = "/tmp/test-config-dir.XXXXXX";
        _cleanup_free_ char *fifo = NULL, *message = NULL, *want = NULL;
        struct broker_config c = sentinel();

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(broker_config_load(dir, NULL, &c, &message), -EINVAL);
        want = expected(dir, ": not a regular file");
        ck_assert_str_eq(message, want);
        free(message);
        free(want);

        /* A FIFO must not block the daemon's start. */
        ck_assert_int_ge(asprintf(&fifo, "%s/fifo", dir), 0);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);
        message = NULL;
        ck_assert_int_eq(broker_config_load(fifo, NULL, &c, &message), -EINVAL);
        want = expected(fifo, ": not a regular file");
        ck_assert_str_eq(message, want);
        assert_untouched(&c);
        unlink(fifo);
        rmdir(dir);
}
END_TEST

START_TEST(test_load_logs_and_succeeds) {
        _cleanup_free_ char *path = write_temp("[Limits]\nUnknown=1\nEventsPerClient=5\n[Reservations]\na=user:7\n");
        char *message = (char *) 1;
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();

        ck_assert_int_eq(broker_config_load(path, NULL, &c, &message), 0);
        ck_assert_ptr_null(message);
        want.events_per_client = 5;
        assert_limits(&c.limits, &want);
        ck_assert_uint_eq(c.reservations.n, 1);

        /* Loading again replaces (and frees) what @c held. */
        ck_assert_int_eq(broker_config_load(path, NULL, &c, &message), 0);
        ck_assert_uint_eq(c.reservations.n, 1);
        broker_config_done(&c);
        unlink(path);
}
END_TEST

/* ---- [Reservations] ---- */

static void assert_reservation(const struct name_reservation *res, const char *pattern, bool is_prefix,
                               bool is_group, bool resolved, uint32_t id, const char *who, const char *origin) {
        ck_assert_ptr_nonnull(res);
        ck_assert_str_eq(res->pattern, pattern);
        ck_assert(res->is_prefix == is_prefix);
        ck_assert(res->is_group == is_group);
        ck_assert(res->resolved == resolved);
        if (resolved)
                ck_assert_uint_eq(res->id, id);
        ck_assert_str_eq(res->who, who);
        ck_assert_str_eq(res->origin, origin);
}

START_TEST(test_reservations) {
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        _cleanup_free_ char *path = NULL, *o3 = NULL, *o4 = NULL, *o5 = NULL, *o6 = NULL, *o7 = NULL, *o11 = NULL, *o12 = NULL;
        char **w = parse_ok("# the examples of config.h\n"
                            "[Reservations]\n"
                            "hello_tick=user:0\n"
                            " myapp_* = group:4242 \n"
                            "sys_*=user:0\n"
                            "root_only=user:root\n"
                            "wheel-ish*=group:root\n"
                            "[Limits]\n"
                            "Events=5\n"
                            "[Reservations]\n"
                            "big=user:4294967294\n"
                            "zeros=group:007\n",
                            &c, &path);

        ck_assert_ptr_null(w);
        want.events = 5;
        assert_limits(&c.limits, &want);
        o3 = expected(path, ":3");
        o4 = expected(path, ":4");
        o5 = expected(path, ":5");
        o6 = expected(path, ":6");
        o7 = expected(path, ":7");
        o11 = expected(path, ":11");
        o12 = expected(path, ":12");
        ck_assert_uint_eq(c.reservations.n, 7);
        assert_reservation(&c.reservations.items[0], "hello_tick", false, false, true, 0, "user:0", o3);
        assert_reservation(&c.reservations.items[1], "myapp_", true, true, true, 4242, "group:4242", o4);
        assert_reservation(&c.reservations.items[2], "sys_", true, false, true, 0, "user:0", o5);
        assert_reservation(&c.reservations.items[3], "root_only", false, false, true, 0, "user:root", o6);
        assert_reservation(&c.reservations.items[4], "wheel-ish", true, true, true, 0, "group:root", o7);
        assert_reservation(&c.reservations.items[5], "big", false, false, true, 4294967294u, "user:4294967294", o11);
        assert_reservation(&c.reservations.items[6], "zeros", false, true, true, 7, "group:007", o12);

        /* Lookups through the parsed table. */
        ck_assert_ptr_eq(name_reservations_find(&c.reservations, "myapp_x"), &c.reservations.items[1]);
        ck_assert_ptr_eq(name_reservations_find(&c.reservations, "hello_tick"), &c.reservations.items[0]);
        ck_assert_ptr_null(name_reservations_find(&c.reservations, "hello_tock"));
        broker_config_done(&c);
        ck_assert_ptr_null(c.reservations.items);
        ck_assert_uint_eq(c.reservations.n, 0);
}
END_TEST

START_TEST(test_reservation_unknown_account_fails_closed) {
        struct broker_config c = sentinel();
        _cleanup_free_ char *path = NULL;
        const struct name_reservation *res;
        const gid_t groups[] = { 1000, 0 };
        char **w = parse_ok("[Reservations]\n"
                            "hello_tick=user:uebroker-test-no-such-user\n"
                            "app_*=group:uebroker-test-no-such-group\n",
                            &c, &path);

        assert_warnings(w, path, 2, (const char *const[]) {
                ":2: hello_tick=user:uebroker-test-no-such-user: no such user; "
                "the reservation allows nobody but root",
                ":3: app_*=group:uebroker-test-no-such-group: no such group; "
                "the reservation allows nobody but root",
        });
        ck_assert_uint_eq(c.reservations.n, 2);
        res = name_reservations_find(&c.reservations, "hello_tick");
        ck_assert_ptr_nonnull(res);
        ck_assert(!res->resolved);
        ck_assert_str_eq(res->who, "user:uebroker-test-no-such-user");
        ck_assert(!name_reservation_allows(res, 1000, groups, 2));
        ck_assert(!name_reservation_allows(res, 65534, NULL, 0));
        ck_assert(name_reservation_allows(res, 0, NULL, 0));
        res = name_reservations_find(&c.reservations, "app_1");
        ck_assert_ptr_nonnull(res);
        ck_assert(!res->resolved);
        ck_assert(res->is_group);
        ck_assert(!name_reservation_allows(res, 1000, groups, 2));     /* gid 0 included: still no */
        ck_assert(name_reservation_allows(res, 0, NULL, 0));
        broker_config_done(&c);
}
END_TEST

START_TEST(test_reservation_last_wins) {
        struct broker_config c = sentinel();
        _cleanup_free_ char *path = NULL, *origin = NULL, *w0 = NULL, *w1 = NULL;
        char **w = parse_ok("[Reservations]\n"
                            "a=user:1\n"
                            "a*=user:5\n"
                            "a = group:2\n"
                            "a=user:3\n",
                            &c, &path);

        ck_assert_ptr_nonnull(w);
        ck_assert_int_ge(asprintf(&w0, "%s:4: a= set again, replacing user:1 from %s:2", path, path), 0);
        ck_assert_int_ge(asprintf(&w1, "%s:5: a= set again, replacing group:2 from %s:4", path, path), 0);
        ck_assert_str_eq(w[0], w0);
        ck_assert_str_eq(w[1], w1);
        ck_assert_ptr_null(w[2]);
        broker_config_warnings_free(w);

        /* "a" and "a*" are different keys. */
        ck_assert_uint_eq(c.reservations.n, 2);
        origin = expected(path, ":5");
        assert_reservation(&c.reservations.items[0], "a", false, false, true, 3, "user:3", origin);
        ck_assert_str_eq(c.reservations.items[1].pattern, "a");
        ck_assert(c.reservations.items[1].is_prefix);
        ck_assert_uint_eq(c.reservations.items[1].id, 5);
        broker_config_done(&c);
}
END_TEST

static const struct {
        const char *line;
        int error;
        const char *message;    /* after "PATH:2: " */
} bad_reservations[] = {
        { "*=user:0", -EINVAL, "*= would reserve every event name; write a prefix before the '*'" },
        { "1abc=user:0", -EINVAL,
          "1abc= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "-a*=user:0", -EINVAL,
          "-a*= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "a*b=user:0", -EINVAL,
          "a*b= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "a**=user:0", -EINVAL,
          "a**= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "a.b=user:0", -EINVAL,
          "a.b= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "a b=user:0", -EINVAL,
          "a b= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "caf\xc3\xa9=user:0", -EINVAL,
          "caf?" "?= is not an event name or a prefix of one followed by '*' "
          "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')" },
        { "a=", -EINVAL, "a= needs a value (user:NAME, user:UID, group:NAME or group:GID)" },
        { "a=alice", -EINVAL, "a=alice: expected user:NAME, user:UID, group:NAME or group:GID" },
        { "a=user:", -EINVAL, "a=user:: expected user:NAME, user:UID, group:NAME or group:GID" },
        { "a=group:", -EINVAL, "a=group:: expected user:NAME, user:UID, group:NAME or group:GID" },
        { "a=User:alice", -EINVAL, "a=User:alice: expected user:NAME, user:UID, group:NAME or group:GID" },
        { "a=uid:0", -EINVAL, "a=uid:0: expected user:NAME, user:UID, group:NAME or group:GID" },
        { "a=user:4294967295", -ERANGE, "a=user:4294967295: uid out of range (0..4294967294)" },
        { "a=group:99999999999999999999999", -ERANGE,
          "a=group:99999999999999999999999: gid out of range (0..4294967294)" },
        { "a=user: alice", -EINVAL,
          "a=user: alice: not a valid user name (1..255 printable ASCII characters, no spaces, ':' or '/')" },
        { "a=user:al:ice", -EINVAL,
          "a=user:al:ice: not a valid user name (1..255 printable ASCII characters, no spaces, ':' or '/')" },
        { "a=group:a/b", -EINVAL,
          "a=group:a/b: not a valid group name (1..255 printable ASCII characters, no spaces, ':' or '/')" },
        { "a=user:\xc3\xa9", -EINVAL,
          "a=user:??: not a valid user name (1..255 printable ASCII characters, no spaces, ':' or '/')" },
};

START_TEST(test_bad_reservation) {
        _cleanup_free_ char *text = NULL, *format = NULL;

        ck_assert_int_ge(asprintf(&text, "[Reservations]\n%s\nb=user:0\n", bad_reservations[_i].line), 0);
        ck_assert_int_ge(asprintf(&format, ":2: %s", bad_reservations[_i].message), 0);
        assert_parse_fails(text, strlen(text), bad_reservations[_i].error, format);
}
END_TEST

/* Event names up to EVENT_NAME_MAX bytes, prefixes too; account names up to 255. */
START_TEST(test_reservation_lengths) {
        char name[300], text[700], want[300];
        struct broker_config c = sentinel();
        char **w;

        memset(name, 'n', sizeof(name));
        snprintf(text, sizeof(text), "[Reservations]\n%.255s=user:1\n%.255s*=user:2\n", name, name);
        w = parse_ok(text, &c, NULL);
        ck_assert_ptr_null(w);
        ck_assert_uint_eq(c.reservations.n, 2);
        ck_assert_uint_eq(strlen(c.reservations.items[0].pattern), 255);
        ck_assert_uint_eq(strlen(c.reservations.items[1].pattern), 255);
        broker_config_done(&c);

        snprintf(text, sizeof(text), "[Reservations]\n%.256s=user:1\n", name);
        snprintf(want, sizeof(want), ":2: %.64s...= is not an event name or a prefix of one followed by '*' "
                 "(1..255 of A-Z a-z 0-9 _ -, starting with a letter or '_')", name);
        assert_parse_fails(text, strlen(text), -EINVAL, want);
        snprintf(text, sizeof(text), "[Reservations]\n%.256s*=user:1\n", name);
        assert_parse_fails(text, strlen(text), -EINVAL, want);

        /* A 255-byte user name is looked up (and is unknown); 256 bytes is refused. */
        snprintf(text, sizeof(text), "[Reservations]\na=user:%.255s\n", name);
        c = sentinel();
        w = parse_ok(text, &c, NULL);
        ck_assert_ptr_nonnull(w);
        ck_assert_ptr_nonnull(strstr(w[0], ": no such user; the reservation allows nobody but root"));
        ck_assert_ptr_null(w[1]);
        broker_config_warnings_free(w);
        ck_assert(!c.reservations.items[0].resolved);
        broker_config_done(&c);
        snprintf(text, sizeof(text), "[Reservations]\na=user:%.256s\n", name);
        snprintf(want, sizeof(want), ":2: a=user:%.59s...: not a valid user name (1..255 printable ASCII "
                 "characters, no spaces, ':' or '/')", name);
        assert_parse_fails(text, strlen(text), -EINVAL, want);
}
END_TEST

START_TEST(test_reservations_bound) {
        size_t size = (BROKER_CONFIG_RESERVATIONS_MAX + 2) * 24 + 64;
        _cleanup_free_ char *text = malloc(size), *want = NULL;
        struct broker_config c = sentinel();
        size_t len;
        char **w;

        ck_assert_ptr_nonnull(text);
        len = (size_t) snprintf(text, size, "[Reservations]\n");
        for (unsigned i = 0; i < BROKER_CONFIG_RESERVATIONS_MAX; i++)
                len += (size_t) snprintf(text + len, size - len, "n%u=user:%u\n", i, i);
        /* Replacing one at the bound adds none. */
        len += (size_t) snprintf(text + len, size - len, "n0=user:1\n");
        w = parse_ok(text, &c, NULL);
        ck_assert_ptr_nonnull(w);
        ck_assert_ptr_nonnull(strstr(w[0], ": n0= set again, replacing user:0 from "));
        ck_assert_ptr_null(w[1]);
        broker_config_warnings_free(w);
        ck_assert_uint_eq(c.reservations.n, BROKER_CONFIG_RESERVATIONS_MAX);
        ck_assert_uint_eq(c.reservations.items[0].id, 1);
        ck_assert_uint_eq(c.reservations.items[4095].id, 4095);
        ck_assert_ptr_eq(name_reservations_find(&c.reservations, "n4095"), &c.reservations.items[4095]);
        broker_config_done(&c);

        snprintf(text + len, size - len, "n%u=user:0\n", BROKER_CONFIG_RESERVATIONS_MAX);
        ck_assert_int_ge(asprintf(&want, ":%u: more than 4096 reservations", BROKER_CONFIG_RESERVATIONS_MAX + 3), 0);
        assert_parse_fails(text, strlen(text), -E2BIG, want);
}
END_TEST

/* ---- Drop-ins ---- */

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        return remove(path);
}

static void rm_rf(const char *path) {
        ck_assert_int_eq(nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
}

/* A new temporary directory holding nothing; the path is malloc()ed. */
static char *make_temp_dir(void) {
        char *dir = strdup("/tmp/test-config-dir.XXXXXX");

        ck_assert_ptr_nonnull(dir);
        ck_assert_ptr_nonnull(mkdtemp(dir));
        return dir;
}

/* Writes @text to @dir/@name; returns the malloc()ed path. */
static char *write_in(const char *dir, const char *name, const char *text) {
        char *path;
        FILE *f;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        ck_assert_int_ge(fputs(text, f), 0);
        ck_assert_int_eq(fclose(f), 0);
        return path;
}

static char *make_subdir(const char *dir, const char *name) {
        char *path;

        ck_assert_int_ge(asprintf(&path, "%s/%s", dir, name), 0);
        ck_assert_int_eq(mkdir(path, 0700), 0);
        return path;
}

START_TEST(test_dropins_order_and_override) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL, *w0 = NULL, *f = NULL;
        _cleanup_free_ char *fifo = NULL, *link = NULL, *dangling = NULL, *o9 = NULL;
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        const struct name_reservation *res;
        char **w;

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nEvents=10\nClients=5\n[Reservations]\na=user:1\n");
        d = make_subdir(dir, "uebrokerd.conf.d");
        free(write_in(d, "20-b.conf", "[Limits]\nEvents=30\n[Reservations]\na=user:3\n"));
        free(write_in(d, "10-a.conf", "[Limits]\nEvents=20\nEventsPerUser=9\n[Reservations]\nb*=group:4\n"));
        /* Byte order, not numeric: 9.conf comes after 20-b.conf. */
        free(write_in(d, "9.conf", "[Limits]\nEvents=40\nOutgoingQueue=99\n"));
        /* Not drop-ins: all of these would fail if read. */
        free(write_in(d, "README", "garbage\n"));
        free(write_in(d, "30-x.conf.bak", "garbage\n"));
        free(write_in(d, "30-x.conf~", "garbage\n"));
        free(write_in(d, ".hidden.conf", "garbage\n"));
        free(write_in(d, ".conf", "garbage\n"));
        free(make_subdir(d, "40-dir.conf"));
        ck_assert_int_ge(asprintf(&fifo, "%s/50-fifo.conf", d), 0);
        ck_assert_int_eq(mkfifo(fifo, 0600), 0);                /* must not block */
        ck_assert_int_ge(asprintf(&link, "%s/60-masked.conf", d), 0);
        ck_assert_int_eq(symlink("/dev/null", link), 0);        /* a character device */
        ck_assert_int_ge(asprintf(&dangling, "%s/70-dangling.conf", d), 0);
        ck_assert_int_eq(symlink("nonexistent", dangling), 0);

        w = parse_path_ok(conf, &c);
        ck_assert_ptr_nonnull(w);
        ck_assert_int_ge(asprintf(&w0, "%s/20-b.conf:4: a= set again, replacing user:1 from %s:5", d, conf), 0);
        ck_assert_str_eq(w[0], w0);
        ck_assert_ptr_null(w[1]);
        broker_config_warnings_free(w);

        want.events = 40;
        want.clients = 5;
        want.events_per_user = 9;
        want.outgoing_queue = 99;
        assert_limits(&c.limits, &want);
        ck_assert_uint_eq(c.reservations.n, 2);
        res = name_reservations_find(&c.reservations, "a");
        ck_assert_int_ge(asprintf(&o9, "%s/20-b.conf:4", d), 0);
        assert_reservation(res, "a", false, false, true, 3, "user:3", o9);
        res = name_reservations_find(&c.reservations, "bee");
        ck_assert_int_ge(asprintf(&f, "%s/10-a.conf:5", d), 0);
        assert_reservation(res, "b", true, true, true, 4, "group:4", f);
        broker_config_done(&c);
        rm_rf(dir);
}
END_TEST

/* Each limit remembers the file and line that set it last, for refusals. */
START_TEST(test_limit_origins) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL, *want = NULL;
        struct broker_config c = sentinel();
        char buf[BROKER_LIMIT_WHERE_MAX];

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nClientsPerUser=5\n\nEvents=10\n");
        d = make_subdir(dir, "uebrokerd.conf.d");
        free(write_in(d, "50-site.conf", "# the site's\n[Limits]\nEvents=30\n"));
        broker_config_warnings_free(parse_path_ok(conf, &c));

        ck_assert_int_ge(asprintf(&want, "%s:2", conf), 0);
        ck_assert_str_eq(broker_limit_origin(&c.origins, "ClientsPerUser"), want);
        free(want);
        ck_assert_int_ge(asprintf(&want, "%s/50-site.conf:3", d), 0);
        ck_assert_str_eq(broker_limit_origin(&c.origins, "Events"), want);
        ck_assert_ptr_null(broker_limit_origin(&c.origins, "EventsPerUser"));       /* the default */
        ck_assert_ptr_null(broker_limit_origin(&c.origins, "NoSuchKey"));
        ck_assert_ptr_null(broker_limit_origin(NULL, "Events"));
        free(want);

        ck_assert_int_ge(asprintf(&want, " in %s/50-site.conf:3", d), 0);
        ck_assert_str_eq(broker_limit_where_text(&c.origins, conf, "Events", buf), want);
        free(want);
        ck_assert_int_ge(asprintf(&want, ", the default; set it in %s", conf), 0);
        ck_assert_str_eq(broker_limit_where_text(&c.origins, conf, "EventsPerUser", buf), want);
        broker_config_done(&c);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropins_each_file_starts_outside_a_section) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL, *want = NULL;

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nEvents=10\n");
        d = make_subdir(dir, "uebrokerd.conf.d");
        free(write_in(d, "10-a.conf", "# no section\nEvents=3\n"));
        ck_assert_int_ge(asprintf(&want, "%s/10-a.conf:2: Events= outside of a section (expected [Limits] or "
                                  "[Reservations] before it)", d), 0);
        assert_path_fails(conf, -EINVAL, want);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropin_errors_name_the_dropin) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL, *want = NULL;

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nEvents=10\n[Reservations]\na=user:1\n");
        d = make_subdir(dir, "uebrokerd.conf.d");
        free(write_in(d, "10-a.conf", "[Limits]\nEvents=11\n"));
        free(write_in(d, "20-b.conf", "[Reservations]\nb=user:2\n\n[Limits]\nClients=0\n"));
        ck_assert_int_ge(asprintf(&want, "%s/20-b.conf:5: Clients=0 is out of range (1..65536)", d), 0);
        assert_path_fails(conf, -ERANGE, want);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropins_missing_dir) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL;
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nEvents=10\n");
        ck_assert_ptr_null(parse_path_ok(conf, &c));
        want.events = 10;
        assert_limits(&c.limits, &want);
        broker_config_done(&c);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropins_without_main_file) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL;
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        char *message = (char *) 1;
        char **warnings = (char **) 1;

        ck_assert_int_ge(asprintf(&conf, "%s/uebrokerd.conf", dir), 0);
        d = make_subdir(dir, "uebrokerd.conf.d");

        /* An empty directory, or one without drop-ins: nothing exists. */
        free(write_in(d, "README", "garbage\n"));
        ck_assert_int_eq(broker_config_parse(conf, NULL, &c, &warnings, &message), -ENOENT);
        ck_assert_ptr_null(message);
        ck_assert_ptr_null(warnings);
        assert_untouched(&c);

        free(write_in(d, "10-a.conf", "[Limits]\nAuthorizationsPerUser=2\n"));
        ck_assert_ptr_null(parse_path_ok(conf, &c));
        want.authorizations_per_user = 2;
        assert_limits(&c.limits, &want);
        broker_config_done(&c);

        /* An empty drop-in is a mask, as in systemd: nothing is read. */
        c = sentinel();
        free(write_in(d, "10-a.conf", ""));
        ck_assert_int_eq(broker_config_parse(conf, NULL, &c, &warnings, &message), -ENOENT);
        assert_untouched(&c);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropin_dir_not_a_directory) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *want = NULL;

        conf = write_in(dir, "uebrokerd.conf", "[Limits]\nEvents=10\n");
        free(write_in(dir, "uebrokerd.conf.d", "[Limits]\nEvents=11\n"));
        ck_assert_int_ge(asprintf(&want, "%s.d: cannot open the drop-in directory: Not a directory", conf), 0);
        assert_path_fails(conf, -ENOTDIR, want);
        rm_rf(dir);
}
END_TEST

START_TEST(test_dropins_bound) {
        _cleanup_free_ char *dir = make_temp_dir(), *conf = NULL, *d = NULL, *want = NULL;
        struct broker_config c = sentinel();

        conf = write_in(dir, "uebrokerd.conf", "");
        d = make_subdir(dir, "uebrokerd.conf.d");
        for (unsigned i = 0; i < BROKER_CONFIG_DROPINS_MAX; i++) {
                char name[32], text[64];

                snprintf(name, sizeof(name), "%03u.conf", i);
                snprintf(text, sizeof(text), "[Limits]\nClients=%u\n", i + 1);
                free(write_in(d, name, text));
        }
        /* Skipped entries do not count. */
        free(write_in(d, "notes.txt", ""));
        free(make_subdir(d, "dir.conf"));
        ck_assert_ptr_null(parse_path_ok(conf, &c));
        ck_assert_uint_eq(c.limits.clients, BROKER_CONFIG_DROPINS_MAX);
        broker_config_done(&c);

        free(write_in(d, "999.conf", ""));
        ck_assert_int_ge(asprintf(&want, "%s: more than 256 drop-in files", d), 0);
        assert_path_fails(conf, -E2BIG, want);
        rm_rf(dir);
}
END_TEST

/* systemd's search: /etc, /run, /usr/local/lib, /usr/lib stand-ins. The
 * same name in an earlier directory hides later ones (also as a mask); the
 * rest is read in name order across directories. */
START_TEST(test_dropins_across_directories) {
        _cleanup_free_ char *root = make_temp_dir(), *conf = NULL, *etc = NULL, *run = NULL, *local = NULL;
        _cleanup_free_ char *usr = NULL, *masked = NULL, *want = NULL;
        struct broker_config c = sentinel();
        struct broker_limits limits = defaults();
        char **w;

        conf = write_in(root, "uebrokerd.conf", "[Limits]\nEvents=10\n");
        etc = make_subdir(root, "etc.d");
        run = make_subdir(root, "run.d");
        local = make_subdir(root, "local.d");
        usr = make_subdir(root, "usr.d");
        const char *dirs[] = { etc, run, local, usr, NULL };

        /* usr: the vendor's; 10 is overridden by etc's 10, 30 by run's 30;
         * 40 is masked in local by a link to /dev/null; 50 is read. */
        free(write_in(usr, "10-vendor.conf", "garbage, hidden by etc/10-vendor.conf\n"));
        free(write_in(usr, "30-x.conf", "garbage, hidden by run/30-x.conf\n"));
        free(write_in(usr, "40-masked.conf", "garbage, masked in local\n"));
        free(write_in(usr, "50-vendor.conf", "[Limits]\nEvents=50\nClients=50\n"));
        free(write_in(etc, "10-vendor.conf", "[Limits]\nEventsPerUser=11\n"));
        free(write_in(run, "30-x.conf", "[Limits]\nOutgoingQueue=30\n"));
        free(write_in(run, "60-run.conf", "[Limits]\nClients=60\n"));
        ck_assert_int_ge(asprintf(&masked, "%s/40-masked.conf", local), 0);
        ck_assert_int_eq(symlink("/dev/null", masked), 0);
        /* etc's 20 is read between usr's 10 (hidden) and run's 30. */
        free(write_in(etc, "20-etc.conf", "[Limits]\nEvents=20\nOutgoingQueue=20\n"));

        ck_assert_int_eq(broker_config_parse(conf, dirs, &c, &w, NULL), 0);
        ck_assert_ptr_null(w);
        limits.events_per_user = 11;
        limits.outgoing_queue = 30;     /* 30-x.conf after 20-etc.conf */
        limits.events = 50;             /* 50-vendor.conf after both */
        limits.clients = 60;
        assert_limits(&c.limits, &limits);
        broker_config_done(&c);

        /* An empty file masks too: 50-vendor.conf is no longer read. */
        free(write_in(etc, "50-vendor.conf", ""));
        c = sentinel();
        ck_assert_int_eq(broker_config_parse(conf, dirs, &c, NULL, NULL), 0);
        limits.events = 20;
        assert_limits(&c.limits, &limits);
        broker_config_done(&c);

        /* An error names the file in the directory it was read from. */
        free(write_in(local, "45-bad.conf", "[Limits]\nClients=x\n"));
        ck_assert_int_ge(asprintf(&want, "%s/45-bad.conf:2: Clients=x is not a decimal number (1..65536)", local), 0);
        c = sentinel();
        _cleanup_free_ char *got = NULL;
        ck_assert_int_eq(broker_config_parse(conf, dirs, &c, NULL, &got), -EINVAL);
        ck_assert_str_eq(got, want);
        assert_untouched(&c);
        rm_rf(root);
}
END_TEST

/* The daemon's default search path, in systemd's order. */
START_TEST(test_default_dropin_dirs) {
        const char *const *d = broker_config_default_dropin_dirs;

        ck_assert_str_eq(d[0], UEBROKER_CONFIG_FILE ".d");
        ck_assert_str_eq(d[1], "/run/uebroker/uebrokerd.conf.d");
        ck_assert_str_eq(d[2], "/usr/local/lib/uebroker/uebrokerd.conf.d");
        ck_assert_str_eq(d[3], "/usr/lib/uebroker/uebrokerd.conf.d");
        ck_assert_ptr_null(d[4]);
}
END_TEST

/* The shipped example: valid as is, and every commented-out key, once
 * uncommented, is the documented default. Its reservation examples,
 * uncommented too, are valid (their accounts need not exist). */
START_TEST(test_example_file) {
        struct broker_config c = sentinel();
        struct broker_limits want = defaults();
        FILE *f = fopen(EXAMPLE_CONFIG, "re");
        char line[512], uncommented[8192] = "", all[8192] = "";
        unsigned keys = 0, reservations = 0;
        char **w;

        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(broker_config_parse(EXAMPLE_CONFIG, NULL, &c, &w, NULL), 0);
        ck_assert_ptr_null(w);
        assert_limits(&c.limits, &want);
        ck_assert_uint_eq(c.reservations.n, 0);

        while (fgets(line, sizeof(line), f)) {
                const char *p = line, *q = line;

                if (line[0] == '#' && line[1] >= 'A' && line[1] <= 'Z' && strchr(line, '=')) {
                        p++;
                        q++;
                        keys++;
                } else if (line[0] == '#' && ((line[1] >= 'a' && line[1] <= 'z') || line[1] == '_') &&
                           strchr(line, '=')) {
                        q++;
                        reservations++;
                }
                ck_assert_uint_lt(strlen(uncommented) + strlen(p), sizeof(uncommented));
                strcat(uncommented, p);
                ck_assert_uint_lt(strlen(all) + strlen(q), sizeof(all));
                strcat(all, q);
        }
        fclose(f);
        ck_assert_uint_eq(keys, 14);
        ck_assert_uint_eq(reservations, 3);

        /* The shares are written out as what "a quarter" gives. */
        want.ring_memory_per_user_kib = 8192;
        want.record_streams_per_user = 16;
        c = sentinel();
        assert_parses_to(uncommented, &want);

        w = parse_ok(all, &c, NULL);
        broker_config_warnings_free(w);         /* alice and myapp may not exist here */
        assert_limits(&c.limits, &want);
        ck_assert_uint_eq(c.reservations.n, 3);
        broker_config_done(&c);
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

        tc = tcase_create("reservations");
        tcase_add_test(tc, test_reservations);
        tcase_add_test(tc, test_reservation_unknown_account_fails_closed);
        tcase_add_test(tc, test_reservation_last_wins);
        tcase_add_loop_test(tc, test_bad_reservation, 0, sizeof(bad_reservations) / sizeof(bad_reservations[0]));
        tcase_add_test(tc, test_reservation_lengths);
        tcase_add_test(tc, test_reservations_bound);
        suite_add_tcase(s, tc);

        tc = tcase_create("drop-ins");
        tcase_add_test(tc, test_dropins_order_and_override);
        tcase_add_test(tc, test_limit_origins);
        tcase_add_test(tc, test_dropins_each_file_starts_outside_a_section);
        tcase_add_test(tc, test_dropin_errors_name_the_dropin);
        tcase_add_test(tc, test_dropins_missing_dir);
        tcase_add_test(tc, test_dropins_without_main_file);
        tcase_add_test(tc, test_dropin_dir_not_a_directory);
        tcase_add_test(tc, test_dropins_bound);
        tcase_add_test(tc, test_dropins_across_directories);
        tcase_add_test(tc, test_default_dropin_dirs);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(config_suite());
}
