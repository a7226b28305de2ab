/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * The original user_events interface (the v10 proposal of January 2022),
 * as implemented by uebroker's kernel provider (CONFIG_USER_EVENTS_V1).
 *
 * The names below are the proposal's, so programs written against it build
 * unchanged. One addition: DIAG_IOCGWRITER.
 *
 * Linux 6.1 also carries a later revision of this interface as
 * include/linux/user_events.h; the include guard here differs from that
 * file's on purpose so the two never hide each other.
 */
#ifndef _UAPI_LINUX_USER_EVENTS_V1_H
#define _UAPI_LINUX_USER_EVENTS_V1_H

#include <linux/types.h>
#include <linux/ioctl.h>

/* struct iovec, for the writev() of a record, as in the proposal */
#ifdef __KERNEL__
#include <linux/uio.h>
#else
#include <sys/uio.h>
#endif

#define USER_EVENTS_SYSTEM "user_events"
#define USER_EVENTS_PREFIX "u:"

/* Bits of an event's byte in the status page: 0-6 known probes, 7 others. */
#define EVENT_BIT_FTRACE 0
#define EVENT_BIT_PERF 1
#define EVENT_BIT_OTHER 7

#define EVENT_STATUS_FTRACE (1 << EVENT_BIT_FTRACE)
#define EVENT_STATUS_PERF (1 << EVENT_BIT_PERF)
#define EVENT_STATUS_OTHER (1 << EVENT_BIT_OTHER)

/* A __data_loc / __rel_loc value: size in the high 16 bits. */
#define DYN_LOC(offset, size) ((size) << 16 | (offset))

/*
 * Describes an event registration and receives its result; the argument
 * of DIAG_IOCSREG. Callers set size and name_args.
 */
struct user_reg {
	/* Input: size of this structure as the caller knows it */
	__u32 size;

	/* Input: pointer to the command "name[:flags] [field;...]" */
	__u64 name_args;

	/* Output: byte of the status page that tells whether anyone listens */
	__u32 status_index;

	/* Output: index to put first in each write() to the same file */
	__u32 write_index;
};

#define DIAG_IOC_MAGIC '*'

/* Registers (or finds) an event; argument: struct user_reg * */
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg*)

/* Deletes an unused event; argument: its name (char *) */
#define DIAG_IOCSDEL _IOW(DIAG_IOC_MAGIC, 1, char*)

/*
 * Not in the proposal. On a data file opened for writing, returns a new
 * file descriptor (an anonymous inode of its own, O_WRONLY, close on exec)
 * that shares the data file's write indexes, including those of events
 * registered on the data file later. Only write() and writev() work on it:
 * every ioctl fails with EPERM, so whoever receives it can write the events
 * it was given and nothing else. Once the data file is released its writes
 * fail with EPERM. No argument.
 */
#define DIAG_IOCGWRITER _IO(DIAG_IOC_MAGIC, 0x40)

#endif /* _UAPI_LINUX_USER_EVENTS_V1_H */
