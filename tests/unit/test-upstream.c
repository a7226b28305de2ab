/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The pure parts of the upstream provider (daemon/providers/tracefs-util.c):
 * tracefs and interface detection on fake directory trees, the registration
 * string, the enable bit of a status byte, user_events_status lines. */
#include "check-tap.h"
#include "cleanup.h"
#include "event-def.h"
#include "status-text.h"
#include "tracefs-util.h"

#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A temporary directory standing for tracefs; removed by tree_done(). */
struct tree {
        char dir[64];
};

static void tree_init(struct tree *t) {
        strcpy(t->dir, "/tmp/test-upstream.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(t->dir));
}

static void tree_path(const struct tree *t, const char *name, char *buf, size_t n) {
        ck_assert_int_lt(snprintf(buf, n, "%s/%s", t->dir, name), (int) n);
}

static void tree_file(const struct tree *t, const char *name, const char *content) {
        char path[128];
        FILE *f;

        tree_path(t, name, path, sizeof(path));
        f = fopen(path, "we");
        ck_assert_ptr_nonnull(f);
        fputs(content, f);
        ck_assert_int_eq(fclose(f), 0);
}

/* A FIFO cannot be mmap()ed (ENODEV), like the upstream status file. */
static void tree_fifo(const struct tree *t, const char *name) {
        char path[128];

        tree_path(t, name, path, sizeof(path));
        ck_assert_int_eq(mkfifo(path, 0600), 0);
}

static void tree_done(struct tree *t) {
        static const char *const names[] = { "user_events_data", "user_events_status", "trace", "mounts" };
        char path[128];

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                tree_path(t, names[i], path, sizeof(path));
                (void) unlink(path);
        }
        ck_assert_int_eq(rmdir(t->dir), 0);
}

static int detect(const struct tree *t, char **reason) {
        return user_events_detect_interface(t->dir, reason);
}

START_TEST(test_detect_upstream) {
        _cleanup_free_ char *reason = NULL;
        struct tree t;

        tree_init(&t);
        tree_file(&t, "user_events_data", "");
        tree_fifo(&t, "user_events_status");
        ck_assert_int_eq(detect(&t, &reason), USER_EVENTS_IFACE_UPSTREAM);
        ck_assert_ptr_null(reason);
        tree_done(&t);
}
END_TEST

START_TEST(test_detect_none) {
        _cleanup_free_ char *reason = NULL, *reason2 = NULL;
        struct tree t;

        tree_init(&t);
        ck_assert_int_eq(detect(&t, &reason), USER_EVENTS_IFACE_NONE);
        ck_assert_ptr_nonnull(reason);
        ck_assert_ptr_nonnull(strstr(reason, "CONFIG_USER_EVENTS"));

        /* A status file alone is no interface. */
        tree_fifo(&t, "user_events_status");
        ck_assert_int_eq(detect(&t, &reason2), USER_EVENTS_IFACE_NONE);
        ck_assert_ptr_nonnull(strstr(reason2, "no user_events_data"));
        tree_done(&t);

        ck_assert_int_eq(user_events_detect_interface("/nonexistent/tracefs", NULL), USER_EVENTS_IFACE_NONE);
}
END_TEST

/* A regular file can be mapped: one of the older interfaces, told apart by
 * the "Max:" line of its text. */
START_TEST(test_detect_original) {
        _cleanup_free_ char *reason = NULL;
        struct tree t;

        tree_init(&t);
        tree_file(&t, "user_events_data", "");
        tree_file(&t, "user_events_status", "1:foo # Used by ftrace\n\nActive: 1\nBusy: 1\nMax: 4096\n");
        ck_assert_int_eq(detect(&t, &reason), USER_EVENTS_IFACE_ORIGINAL);
        ck_assert_ptr_nonnull(strstr(reason, "original"));
        tree_done(&t);
}
END_TEST

START_TEST(test_detect_bitmap) {
        _cleanup_free_ char *reason = NULL;
        struct tree t;

        tree_init(&t);
        tree_file(&t, "user_events_data", "");
        tree_file(&t, "user_events_status", "0:foo\n\nActive: 1\nBusy: 0\nMax: 32768\n");
        ck_assert_int_eq(detect(&t, &reason), USER_EVENTS_IFACE_BITMAP);
        ck_assert_ptr_nonnull(strstr(reason, "5.18-6.3"));
        ck_assert_ptr_nonnull(strstr(reason, "not supported"));
        tree_done(&t);
}
END_TEST

/* Mappable but with a text we cannot read a Max: from: refused as older. */
START_TEST(test_detect_mappable_unknown) {
        _cleanup_free_ char *reason = NULL;
        struct tree t;

        tree_init(&t);
        tree_file(&t, "user_events_data", "");
        tree_file(&t, "user_events_status", "");
        ck_assert_int_eq(detect(&t, &reason), USER_EVENTS_IFACE_ORIGINAL);
        ck_assert_ptr_nonnull(strstr(reason, "older than Linux 6.4"));
        tree_done(&t);
}
END_TEST

START_TEST(test_find_tracefs) {
        _cleanup_free_ char *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        struct tree empty, mounted;
        char mounts[128], text[512];
        const char *candidates[3];

        tree_init(&empty);
        tree_init(&mounted);
        tree_file(&mounted, "trace", "");

        /* The override wins, as given. */
        ck_assert_int_eq(tracefs_find("/x/y", NULL, NULL, &a), 0);
        ck_assert_str_eq(a, "/x/y");

        /* An empty candidate (not mounted) is skipped. */
        candidates[0] = empty.dir;
        candidates[1] = mounted.dir;
        candidates[2] = NULL;
        ck_assert_int_eq(tracefs_find(NULL, candidates, NULL, &b), 0);
        ck_assert_str_eq(b, mounted.dir);

        /* None mounted: the mounts file's tracefs line. */
        candidates[1] = NULL;
        snprintf(text, sizeof(text),
                 "proc /proc proc rw 0 0\n"
                 "none /weird\\040dir tracefs rw 0 0\n"
                 "tracefs /srv/my-tracing tracefs rw,nosuid 0 0\n"
                 "tracefs /later tracefs rw 0 0\n");
        tree_file(&empty, "mounts", text);
        tree_path(&empty, "mounts", mounts, sizeof(mounts));
        ck_assert_int_eq(tracefs_find(NULL, candidates, mounts, &c), 0);
        ck_assert_str_eq(c, "/srv/my-tracing");

        /* Nothing anywhere. */
        tree_file(&empty, "mounts", "proc /proc proc rw 0 0\n");
        ck_assert_int_eq(tracefs_find(NULL, candidates, mounts, &d), -ENOENT);
        ck_assert_int_eq(tracefs_find(NULL, candidates, "/nonexistent/mounts", &d), -ENOENT);
        ck_assert_ptr_null(d);

        tree_done(&empty);
        tree_done(&mounted);
}
END_TEST

static const struct {
        const char *command;
        const char *expected;
} registration_cases[] = {
        { "foo", "foo" },
        { "foo u32 a", "foo u32 a" },
        /* Flags are dropped: upstream refuses them. */
        { "foo:BPF_ITER,x u32 a;u64 b", "foo u32 a; u64 b" },
        { "foo:f", "foo" },
        /* Array sizes in decimal, whatever the base written. */
        { "foo char[0x10] s", "foo char[16] s" },
        { "foo unsigned char[010] s", "foo unsigned char[8] s" },
        { "foo char[0x00001] s", "foo char[1] s" },
        { "foo char[1024] s", "foo char[1024] s" },
        /* Dynamic and struct fields as written; the struct keeps its size. */
        { "foo __data_loc char[] s; __rel_loc u8[] r", "foo __data_loc char[] s; __rel_loc u8[] r" },
        { "foo struct bar b 24; s8 c", "foo struct bar b 24; s8 c" },
        /* Leading spaces and empty fields are not carried over. */
        { "foo  u32 a;;  int b;", "foo u32 a; int b" },
};

START_TEST(test_registration_string) {
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        _cleanup_free_ char *s = NULL;
        struct event_error error;

        ck_assert_msg(event_def_parse(registration_cases[_i].command, 0, &def, &error) == 0, "%s: %s",
                      registration_cases[_i].command, error.message);
        s = user_events_registration_string(def);
        ck_assert_ptr_nonnull(s);
        ck_assert_str_eq(s, registration_cases[_i].expected);
}
END_TEST

START_TEST(test_enable_location) {
        const uint64_t page = 0x7f0000001000ull;
        uint64_t addr;
        uint8_t bit;

        for (uint32_t idx = 1; idx <= STATUS_INDEX_MAX; idx++) {
                uint32_t word = 0;
                uint8_t bytes[4];

                upstream_enable_location(idx, page, &addr, &bit);
                /* Aligned to enable_size, inside the page, on idx's word. */
                ck_assert_uint_eq(addr % UPSTREAM_ENABLE_SIZE, 0);
                ck_assert_uint_ge(addr, page);
                ck_assert_uint_lt(addr, page + STATUS_PAGE_SIZE);
                ck_assert_uint_eq(addr, page + (idx & ~3u));
                ck_assert_uint_lt(bit, 32);
                /* The kernel's bit lands in byte idx, whatever the
                 * machine's byte order. */
                word = 1u << bit;
                memcpy(bytes, &word, sizeof(bytes));
                for (uint32_t b = 0; b < 4; b++)
                        ck_assert_uint_eq(bytes[b], b == (idx & 3u) ? 1 : 0);
        }
#if __BYTE_ORDER == __LITTLE_ENDIAN
        upstream_enable_location(1, page, &addr, &bit);
        ck_assert_uint_eq(addr, page);
        ck_assert_uint_eq(bit, 8);
        upstream_enable_location(4, page, &addr, &bit);
        ck_assert_uint_eq(addr, page + 4);
        ck_assert_uint_eq(bit, 0);
        upstream_enable_location(4095, page, &addr, &bit);
        ck_assert_uint_eq(addr, page + 4092);
        ck_assert_uint_eq(bit, 24);
#endif
}
END_TEST

START_TEST(test_status_lines) {
        static const struct {
                const char *line;
                int result;
                const char *name;
                uint8_t status;
        } cases[] = {
                { "foo", 1, "foo", 0 },
                { "foo\n", 1, "foo", 0 },
                { "foo # Used by ftrace", 1, "foo", EVENT_STATUS_FTRACE },
                { "foo # Used by perf", 1, "foo", EVENT_STATUS_PERF },
                { "bar_1 # Used by ftrace perf other\n", 1, "bar_1", 0x83 },
                { "foo # Used by other", 1, "foo", EVENT_STATUS_OTHER },
                /* A user this code does not know still counts. */
                { "foo # Used by bpf ftrace", 1, "foo", EVENT_STATUS_OTHER | EVENT_STATUS_FTRACE },
                { "", 0, NULL, 0 },
                { "\n", 0, NULL, 0 },
                { "Active: 3", 0, NULL, 0 },
                { "Busy: 1", 0, NULL, 0 },
                { "Max: 4096", 0, NULL, 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *name = NULL;
                size_t name_len = 0;
                uint8_t status = 0xff;
                int r = upstream_status_line_parse(cases[i].line, strlen(cases[i].line), &name, &name_len, &status);

                ck_assert_msg(r == cases[i].result, "'%s': %d", cases[i].line, r);
                if (r == 0)
                        continue;
                ck_assert_uint_eq(name_len, strlen(cases[i].name));
                ck_assert(memcmp(name, cases[i].name, name_len) == 0);
                ck_assert_msg(status == cases[i].status, "'%s': status %#x", cases[i].line, status);
        }
}
END_TEST

START_TEST(test_abi_numbers) {
        /* include/uapi/linux/user_events.h, Documentation/trace/user_events.rst. */
        ck_assert_uint_eq(UPSTREAM_DIAG_IOCSREG, 0xc0082a00u);
        ck_assert_uint_eq(UPSTREAM_DIAG_IOCSDEL, 0x40082a01u);
        ck_assert_uint_eq(UPSTREAM_DIAG_IOCSUNREG, 0x40082a02u);
        ck_assert_uint_eq(offsetof(struct upstream_user_reg, enable_addr), 8);
        ck_assert_uint_eq(offsetof(struct upstream_user_reg, name_args), 16);
        ck_assert_uint_eq(offsetof(struct upstream_user_reg, write_index), 24);
        ck_assert_uint_eq(offsetof(struct upstream_user_unreg, disable_addr), 8);
        ck_assert_str_eq(user_events_interface_name(USER_EVENTS_IFACE_UPSTREAM), "upstream");
        ck_assert_str_eq(user_events_interface_name(USER_EVENTS_IFACE_ORIGINAL), "original");
}
END_TEST

static Suite *upstream_suite(void) {
        Suite *s = suite_create("upstream");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_detect_upstream);
        tcase_add_test(tc, test_detect_none);
        tcase_add_test(tc, test_detect_original);
        tcase_add_test(tc, test_detect_bitmap);
        tcase_add_test(tc, test_detect_mappable_unknown);
        tcase_add_test(tc, test_find_tracefs);
        tcase_add_loop_test(tc, test_registration_string, 0,
                            (int) (sizeof(registration_cases) / sizeof(registration_cases[0])));
        tcase_add_test(tc, test_enable_location);
        tcase_add_test(tc, test_status_lines);
        tcase_add_test(tc, test_abi_numbers);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(upstream_suite());
}
