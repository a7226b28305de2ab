/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fd-util.h"

int safe_close(int fd) {
        if (fd >= 0) {
                int saved_errno = errno;

                /* close() always releases the descriptor on Linux, even on
                 * EINTR: never retry. */
                (void) close(fd);
                errno = saved_errno;
        }
        return -EBADF;
}

int fd_dup_cloexec(int fd) {
        int r = fcntl(fd, F_DUPFD_CLOEXEC, 3);

        return r < 0 ? -errno : r;
}

static int fd_update_flag(int fd, int get, int set, int flag, bool on) {
        int flags = fcntl(fd, get);

        if (flags < 0)
                return -errno;
        if (!!(flags & flag) == on)
                return 0;
        flags = on ? (flags | flag) : (flags & ~flag);
        if (fcntl(fd, set, flags) < 0)
                return -errno;
        return 0;
}

int fd_set_nonblock(int fd, bool nonblock) {
        return fd_update_flag(fd, F_GETFL, F_SETFL, O_NONBLOCK, nonblock);
}

int fd_set_cloexec(int fd, bool cloexec) {
        return fd_update_flag(fd, F_GETFD, F_SETFD, FD_CLOEXEC, cloexec);
}

int memfd_new_sized(const char *name, size_t size) {
        int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);

        if (fd < 0)
                return -errno;
        if (ftruncate(fd, (off_t) size) < 0) {
                int r = -errno;

                safe_close(fd);
                return r;
        }
        return fd;
}

int memfd_seal_read_only(int fd) {
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0)
                return -errno;
        return 0;
}

int memfd_seal_size(int fd) {
        if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0)
                return -errno;
        return 0;
}

int fd_reopen_read_only(int fd) {
        char path[sizeof("/proc/self/fd/") + 12];
        int r;

        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        r = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        return r < 0 ? -errno : r;
}

int socketpair_seqpacket(int fds[2], int flags) {
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | flags, 0, fds) < 0)
                return -errno;
        return 0;
}
