/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The kernel's user_events ioctl structures, our own copies
 * (Documentation/trace/user_events.rst): the build machines' <linux/user_events.h> may
 * be the 6.1 one, whose struct user_reg is the 5.18-6.3 layout under the
 * same name and ioctl number. The upstream provider speaks them to the
 * kernel, the preload library (run/preload*.c) answers programs that
 * speak them.
 */

#include <stdint.h>
#include <sys/ioctl.h>

struct upstream_user_reg {
        uint32_t size;
        uint8_t enable_bit;
        uint8_t enable_size;
        uint16_t flags;
        uint64_t enable_addr;
        uint64_t name_args;
        uint32_t write_index;
} __attribute__((__packed__));

struct upstream_user_unreg {
        uint32_t size;
        uint8_t disable_bit;
        uint8_t reserved;
        uint16_t reserved2;
        uint64_t disable_addr;
} __attribute__((__packed__));

_Static_assert(sizeof(struct upstream_user_reg) == 28, "struct user_reg is 28 bytes");
_Static_assert(sizeof(struct upstream_user_unreg) == 16, "struct user_unreg is 16 bytes");

/* The kernel declares these with pointer types: the size in the number is
 * sizeof(pointer), not of the struct. */
#define UPSTREAM_DIAG_IOC_MAGIC '*'
#define UPSTREAM_DIAG_IOCSREG _IOWR(UPSTREAM_DIAG_IOC_MAGIC, 0, struct upstream_user_reg *)
#define UPSTREAM_DIAG_IOCSDEL _IOW(UPSTREAM_DIAG_IOC_MAGIC, 1, char *)
#define UPSTREAM_DIAG_IOCSUNREG _IOW(UPSTREAM_DIAG_IOC_MAGIC, 2, struct upstream_user_unreg *)

/* The original interface (kernel/README.md) as the kernel provider of
 * kernel/ speaks it (kernel/include/uapi/linux/user_events.h; copied here
 * for the same reason): providers/v1.c. */
struct v1_user_reg {
        uint32_t size;
        uint64_t name_args;
        uint32_t status_index;
        uint32_t write_index;
};

_Static_assert(sizeof(struct v1_user_reg) == 24, "the original struct user_reg is 24 bytes");

#define V1_DIAG_IOCSREG _IOWR(UPSTREAM_DIAG_IOC_MAGIC, 0, struct v1_user_reg *)
#define V1_DIAG_IOCSDEL UPSTREAM_DIAG_IOCSDEL
/* kernel/'s addition: a write-only handle on a data file's events */
#define V1_DIAG_IOCGWRITER _IO(UPSTREAM_DIAG_IOC_MAGIC, 0x40)

/* struct user_reg.flags (Linux 6.4+) */
#define UPSTREAM_USER_EVENT_REG_PERSIST (1u << 0)
#define UPSTREAM_USER_EVENT_REG_MULTI_FORMAT (1u << 1)

/* Restricted handles: the series of kernel/upstream-6.12/ (not upstream
 * yet). A stock kernel answers DIAG_IOCSHANDLE with ENOTTY. A handle is an
 * anonymous inode of its own ("anon_inode:[user_events_handle]"); the
 * release of the file it came from cuts it off, as DIAG_IOCSREVOKE without
 * a definition does. */
struct upstream_user_handle {
        uint32_t size;
        uint32_t flags;
} __attribute__((__packed__));

struct upstream_user_grant {
        uint32_t size;
        int32_t handle_fd;
        uint32_t flags;
        uint32_t reserved;
        uint64_t name_args;
} __attribute__((__packed__));

_Static_assert(sizeof(struct upstream_user_handle) == 8, "struct user_handle is 8 bytes");
_Static_assert(sizeof(struct upstream_user_grant) == 24, "struct user_grant is 24 bytes");

#define UPSTREAM_USER_HANDLE_GRANTING (1u << 0)
#define UPSTREAM_USER_HANDLE_CLOEXEC (1u << 1)
#define UPSTREAM_DIAG_IOCSHANDLE _IOW(UPSTREAM_DIAG_IOC_MAGIC, 3, struct upstream_user_handle *)
#define UPSTREAM_DIAG_IOCSGRANT _IOW(UPSTREAM_DIAG_IOC_MAGIC, 4, struct upstream_user_grant *)
#define UPSTREAM_DIAG_IOCSREVOKE _IOW(UPSTREAM_DIAG_IOC_MAGIC, 5, struct upstream_user_grant *)
