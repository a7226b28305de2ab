/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel's user_events calls the VM benches make directly (as root, on
 * the data file and on the patched 6.12 kernel's restricted handles), with
 * the layouts of src/shared/wire/user-events-abi.h. Each returns 0 (or a
 * descriptor) or a negative errno. */

#include <errno.h>
#include <stdint.h>
#include <sys/ioctl.h>

#include "user-events-abi.h"

#define BENCH_USER_EVENTS_DATA_FILE "/sys/kernel/tracing/user_events_data"

/* DIAG_IOCSREG of @def with one 32-bit enable word at @word (bit 0);
 * the write index in *@ret_index when it is not NULL. */
static inline int bench_ue_register(int fd, const char *def, uint32_t *word, uint32_t *ret_index) {
        struct upstream_user_reg r = {
                .size = sizeof(r),
                .enable_size = 4,
                .enable_addr = (uintptr_t) word,
                .name_args = (uintptr_t) def,
        };

        if (ioctl(fd, UPSTREAM_DIAG_IOCSREG, &r) < 0)
                return -errno;
        if (ret_index)
                *ret_index = r.write_index;
        return 0;
}

/* DIAG_IOCSUNREG of the enabler at @word. */
static inline int bench_ue_unregister(int fd, uint32_t *word) {
        struct upstream_user_unreg u = { .size = sizeof(u), .disable_addr = (uintptr_t) word };

        return ioctl(fd, UPSTREAM_DIAG_IOCSUNREG, &u) < 0 ? -errno : 0;
}

/* DIAG_IOCSHANDLE: a restricted handle (close-on-exec) derived from @fd;
 * -ENOTTY on a kernel without them. */
static inline int bench_ue_handle(int fd, uint32_t flags) {
        struct upstream_user_handle h = { .size = sizeof(h), .flags = flags | UPSTREAM_USER_HANDLE_CLOEXEC };
        int r = ioctl(fd, UPSTREAM_DIAG_IOCSHANDLE, &h);

        return r < 0 ? -errno : r;
}

/* DIAG_IOCSGRANT or DIAG_IOCSREVOKE (@cmd) of @def on the granting handle
 * @handle_fd. */
static inline int bench_ue_grant(int fd, unsigned long cmd, int handle_fd, const char *def) {
        struct upstream_user_grant g = { .size = sizeof(g), .handle_fd = handle_fd, .name_args = (uintptr_t) def };

        return ioctl(fd, cmd, &g) < 0 ? -errno : 0;
}
