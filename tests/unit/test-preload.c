/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* run/preload-files.c without a broker: which paths are the data file,
 * the errnos a kernel program gets for the broker's refusals, and every
 * ioctl the library refuses before it asks the broker (bad structures,
 * addresses that are not there, flags it does not serve). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "check-tap.h"

#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "preload-files.h"
#include "user-events-abi.h"

START_TEST(test_data_file_paths) {
        ck_assert(preload_path_is_data_file("/sys/kernel/tracing/user_events_data"));
        ck_assert(preload_path_is_data_file("/sys/kernel/debug/tracing/user_events_data"));
        ck_assert(preload_path_is_data_file("user_events_data"));
        ck_assert(!preload_path_is_data_file("/sys/kernel/tracing/user_events_status"));
        ck_assert(!preload_path_is_data_file("/tmp/my_user_events_data"));
        ck_assert(!preload_path_is_data_file("/sys/kernel/tracing/user_events_data/"));
        ck_assert(!preload_path_is_data_file("ser_events_data"));
        ck_assert(!preload_path_is_data_file(""));
        ck_assert(!preload_path_is_data_file(NULL));
}
END_TEST

START_TEST(test_errnos_of_refusals) {
        ck_assert_int_eq(preload_errno_from_bus("Register", BROKER_ERROR_INVALID_COMMAND, EIO), EINVAL);
        ck_assert_int_eq(preload_errno_from_bus("Register", BROKER_ERROR_NAME_IN_USE, EIO), EADDRINUSE);
        ck_assert_int_eq(preload_errno_from_bus("Register", SD_BUS_ERROR_ACCESS_DENIED, EIO), EACCES);
        ck_assert_int_eq(preload_errno_from_bus("Delete", SD_BUS_ERROR_ACCESS_DENIED, EIO), EPERM);
        ck_assert_int_eq(preload_errno_from_bus("Register", BROKER_ERROR_QUOTA_EXCEEDED, EIO), ENOSPC);
        ck_assert_int_eq(preload_errno_from_bus("Delete", BROKER_ERROR_BUSY, EIO), EBUSY);
        ck_assert_int_eq(preload_errno_from_bus("Register", BROKER_ERROR_BUSY, EIO), EAGAIN);
        ck_assert_int_eq(preload_errno_from_bus("Delete", BROKER_ERROR_NO_SUCH_EVENT, EIO), ENOENT);
        ck_assert_int_eq(preload_errno_from_bus("Register", BROKER_ERROR_NOT_SUPPORTED, EIO), EOPNOTSUPP);
        ck_assert_int_eq(preload_errno_from_bus("Register", SD_BUS_ERROR_LIMITS_EXCEEDED, EIO), EAGAIN);
        ck_assert_int_eq(preload_errno_from_bus("Register", SD_BUS_ERROR_SERVICE_UNKNOWN, EIO), ENOENT);
        ck_assert_int_eq(preload_errno_from_bus("Register", SD_BUS_ERROR_NO_REPLY, EIO), ETIMEDOUT);
        ck_assert_int_eq(preload_errno_from_bus("Register", "org.example.Other", EIO), EIO);
        ck_assert_int_eq(preload_errno_from_bus("Register", NULL, ECONNREFUSED), ECONNREFUSED);
}
END_TEST

static uint32_t enable_word;
/* 8-aligned: its second half is an address aligned to 4, not to 8. */
static uint64_t enable_pair[2];

static struct upstream_user_reg good_reg(const char *command) {
        return (struct upstream_user_reg) {
                .size = sizeof(struct upstream_user_reg),
                .enable_bit = 31,
                .enable_size = 4,
                .enable_addr = (uintptr_t) &enable_word,
                .name_args = (uintptr_t) command,
        };
}

/* preload_ioctl()'s answer on @fd; -1000 when @fd is not the library's. */
static int ioc(int fd, unsigned long request, void *arg) {
        int r;

        return preload_ioctl(fd, request, arg, &r) ? r : -1000;
}

START_TEST(test_refused_before_the_broker) {
        void *hole;
        struct upstream_user_reg reg;
        struct upstream_user_unreg unreg = { .size = sizeof(unreg), .disable_addr = (uintptr_t) &enable_word };
        int fd;

        void *read_only = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        ck_assert_ptr_ne(read_only, MAP_FAILED);
        fd = preload_open(O_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        /* An address that is certainly not mapped (after the library's
         * tables are). */
        hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(hole, MAP_FAILED);
        ck_assert_int_eq(munmap(hole, 4096), 0);
        ck_assert_int_eq(ioc(fd + 1000, 0x1234, NULL), -1000);

        ck_assert_int_eq(ioc(fd, 0x1234, &reg), -ENOTTY);
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, hole), -EFAULT);
        reg = good_reg("ev u32 a");
        reg.size = 20;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        reg.size = 8192;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -E2BIG);
        reg = good_reg("ev u32 a");
        reg.enable_size = 3;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        reg = good_reg("ev u32 a");
        reg.enable_bit = 32;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        reg = good_reg("ev u32 a");
        reg.enable_addr += 2;                           /* not aligned */
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        /* An 8-byte word 4-aligned only: the futex that writes it would
         * take it, the kernel does not. Refused on the structure, before
         * the name is read (the kernel's user_reg_get() order), so never
         * asked of a broker. */
        reg = good_reg("ev u32 a");
        reg.enable_size = 8;
        reg.enable_addr = (uintptr_t) enable_pair + 4;
        reg.name_args = (uintptr_t) hole;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        reg.name_args = (uintptr_t) "ev u32 a";
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        reg = good_reg("ev u32 a");
        reg.enable_addr = (uintptr_t) hole;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -ENOMEM);      /* as 6.12 */
        reg.enable_addr = (uintptr_t) read_only;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -ENOMEM);
        reg = good_reg("ev u32 a");
        reg.name_args = (uintptr_t) hole;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EFAULT);
        reg = good_reg("ev u32 a");
        reg.flags = UPSTREAM_USER_EVENT_REG_PERSIST;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EPERM);
        reg.flags = UPSTREAM_USER_EVENT_REG_MULTI_FORMAT;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EOPNOTSUPP);
        reg.flags = 1u << 2;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);

        /* A command longer than any the broker takes, unterminated for
         * 4 KiB: refused without reading past it. */
        {
                static char long_command[8192];

                memset(long_command, 'x', sizeof(long_command));
                reg = good_reg(long_command);
                ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -EINVAL);
        }

        /* Nothing registered: nothing to unregister. */
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSUNREG, &unreg), -ENOENT);
        unreg.reserved = 1;
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSUNREG, &unreg), -EINVAL);
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSUNREG, hole), -EFAULT);
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSDEL, hole), -EFAULT);
        ck_assert_uint_eq(enable_word, 0);

        preload_forget(fd);
        ck_assert_int_eq(ioc(fd, UPSTREAM_DIAG_IOCSREG, &reg), -1000);
        close(fd);
        ck_assert_int_eq(munmap(read_only, 4096), 0);
}
END_TEST

/* The numbers of a file: followed through dups, forgotten when closed or
 * replaced, checked against what is really there. */
START_TEST(test_numbers) {
        int fd, fd2, p[2];

        fd = preload_open(0);
        ck_assert_int_ge(fd, 0);
        fd2 = fcntl(fd, F_DUPFD, 200);
        ck_assert_int_eq(fd2, 200);
        preload_dup(fd, fd2);
        ck_assert_int_eq(ioc(fd2, 0x1234, NULL), -ENOTTY);
        preload_forget(fd);
        ck_assert_int_eq(close(fd), 0);
        ck_assert_int_eq(ioc(fd, 0x1234, NULL), -1000);
        ck_assert_int_eq(ioc(fd2, 0x1234, NULL), -ENOTTY);

        /* Something else at the number, unseen: fstat() tells. */
        ck_assert_int_eq(pipe(p), 0);
        ck_assert_int_eq(dup2(p[0], fd2), fd2);
        ck_assert_int_eq(ioc(fd2, 0x1234, NULL), -1000);
        ck_assert_int_eq(close(fd2), 0);

        /* A range. */
        fd = preload_open(0);
        fd2 = fcntl(fd, F_DUPFD, 300);
        preload_dup(fd, fd2);
        preload_forget_range(250, 400);
        ck_assert_int_eq(ioc(fd, 0x1234, NULL), -ENOTTY);
        ck_assert_int_eq(ioc(fd2, 0x1234, NULL), -1000);
        preload_forget_range(0, ~0u);
        ck_assert_int_eq(ioc(fd, 0x1234, NULL), -1000);
        close(fd);
        close(fd2);
        close(p[0]);
        close(p[1]);
}
END_TEST

static Suite *preload_suite(void) {
        Suite *s = suite_create("preload");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_data_file_paths);
        tcase_add_test(tc, test_errnos_of_refusals);
        tcase_add_test(tc, test_refused_before_the_broker);
        tcase_add_test(tc, test_numbers);
        suite_add_tcase(s, tc);
        return s;
}

int main(void) {
        return check_tap_run(preload_suite());
}
