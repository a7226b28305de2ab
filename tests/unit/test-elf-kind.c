/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run/elf-kind.c: what uebroker-run must know of a program, on the real
 * programs of this machine and on hostile copies of them. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check-tap.h"

#include "elf-kind.h"

/* A copy of @from's first @len bytes (all when 0) with @mode. */
static char *copy_of(const char *from, size_t len, mode_t mode) {
        static char path[] = "/tmp/test-elf-kind.XXXXXX";
        char *copy = strdup(path), buf[65536];
        int in = open(from, O_RDONLY), out = mkstemp(copy);
        size_t done = 0;
        ssize_t n;

        ck_assert_int_ge(in, 0);
        ck_assert_int_ge(out, 0);
        while ((n = read(in, buf, sizeof(buf))) > 0 && (len == 0 || done < len)) {
                size_t k = len && done + (size_t) n > len ? len - done : (size_t) n;

                ck_assert_int_eq(write(out, buf, k), (ssize_t) k);
                done += k;
        }
        ck_assert_int_eq(fchmod(out, mode), 0);
        close(in);
        close(out);
        return copy;
}

START_TEST(test_dynamic_program) {
        struct elf_kind k;

        ck_assert_int_eq(elf_kind_of("/bin/true", &k), 0);
        ck_assert(k.elf && k.dynamic && !k.go && !k.setid);
}
END_TEST

START_TEST(test_static_program) {
        struct elf_kind k;

        /* busybox-static: what install-deps.sh installs for the vm tier. */
        if (access("/bin/busybox", R_OK) != 0)
                return;
        ck_assert_int_eq(elf_kind_of("/bin/busybox", &k), 0);
        ck_assert(k.elf && !k.dynamic && !k.go);
}
END_TEST

START_TEST(test_setuid_copy) {
        char *copy = copy_of("/bin/true", 0, 04755);
        struct elf_kind k;

        ck_assert_int_eq(elf_kind_of(copy, &k), 0);
        ck_assert(k.elf && k.dynamic && k.setid);
        unlink(copy);
        free(copy);
}
END_TEST

START_TEST(test_truncated_and_not_elf) {
        struct elf_kind k;
        char *copy;

        /* Cut in the ELF header, then in the program headers: what could be
         * read, no crash. */
        copy = copy_of("/bin/true", 40, 0755);
        ck_assert_int_eq(elf_kind_of(copy, &k), 0);
        ck_assert(!k.elf);
        unlink(copy);
        free(copy);
        copy = copy_of("/bin/true", 100, 0755);
        ck_assert_int_eq(elf_kind_of(copy, &k), 0);
        ck_assert(k.elf && !k.go);
        unlink(copy);
        free(copy);

        copy = copy_of("/etc/hostname", 0, 0755);
        ck_assert_int_eq(elf_kind_of(copy, &k), 0);
        ck_assert(!k.elf && !k.dynamic);
        unlink(copy);
        free(copy);

        ck_assert_int_eq(elf_kind_of("/nonexistent/program", &k), -ENOENT);
        ck_assert_int_eq(elf_kind_of("/tmp", &k), -EACCES);
}
END_TEST

static Suite *elf_kind_suite(void) {
        Suite *s = suite_create("elf-kind");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_dynamic_program);
        tcase_add_test(tc, test_static_program);
        tcase_add_test(tc, test_setuid_copy);
        tcase_add_test(tc, test_truncated_and_not_elf);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(elf_kind_suite());
}
