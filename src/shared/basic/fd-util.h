/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* File-descriptor helpers shared by the daemon, the client library and the
 * tools: closing, flags, sealed memfd pages and socket pairs. All return a
 * negative errno on failure. */

#include <stdbool.h>
#include <stddef.h>

/* Closes @fd if it is valid; returns -EBADF so "fd = safe_close(fd);" works. */
int safe_close(int fd);

static inline void closep(int *fd) {
        *fd = safe_close(*fd);
}

#define _cleanup_close_ __attribute__((cleanup(closep)))

/* Returns a new descriptor (>= 3, O_CLOEXEC) for the same open file. */
int fd_dup_cloexec(int fd);

int fd_set_nonblock(int fd, bool nonblock);
int fd_set_cloexec(int fd, bool cloexec);

/* A memfd of @size bytes (MFD_CLOEXEC|MFD_ALLOW_SEALING), zero-filled. */
int memfd_new_sized(const char *name, size_t size);

/*
 * Seals @fd so its size is fixed and nobody can gain write access after
 * this point (F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_FUTURE_WRITE|F_SEAL_SEAL).
 * A writable mapping made earlier keeps working: the owner maps the page
 * read-write first, seals, then hands the fd out.
 */
int memfd_seal_read_only(int fd);

/* Seals @fd's size for good (F_SEAL_SHRINK|F_SEAL_GROW|F_SEAL_SEAL), write
 * access left as it is: memory shared read-write with a client that can
 * never truncate it under our mapping (SIGBUS). */
int memfd_seal_size(int fd);

/* A new O_RDONLY descriptor for the same file (through /proc/self/fd), so
 * the receiver cannot map it writable even without seals. */
int fd_reopen_read_only(int fd);

/* socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | @flags), @flags 0 or
 * SOCK_NONBLOCK (both ends: a system call less per end than setting it
 * afterwards). */
int socketpair_seqpacket(int fds[2], int flags);
