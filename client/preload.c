/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuebroker-preload.so (uebroker-run(1)): the libc calls a user_events
 * program makes, interposed with LD_PRELOAD. open(), open64(), openat(),
 * openat64(), __open_2(), __open64_2(), __openat_2(), __openat64_2(),
 * fopen() and fopen64() of a path ending in user_events_data give a file
 * of preload-files.c (of user_events_status, the broker's status text); ioctl() on such a file is answered through the
 * broker; close() and fclose() forget it (a descriptor closed another way,
 * by dup2() onto it or a raw system call, is not seen: its number stays
 * ours until closed with close()). Every other call goes to libc unchanged.
 * Writes are not interposed: they go to the broker's data file as the
 * program sends them.
 */

/* We define open() and open64() both: no header may rename one into the
 * other. */
#undef _FILE_OFFSET_BITS
#define _GNU_SOURCE 1

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "preload-files.h"

#define EXPORT __attribute__((visibility("default")))

#define REAL(name, ...)                                                                 \
        static __typeof__(name) *real_##name;                                           \
        if (!real_##name)                                                               \
                real_##name = (__typeof__(name) *) dlsym(RTLD_NEXT, #name);             \
        if (!real_##name) {                                                             \
                errno = ENOSYS;                                                         \
                return __VA_ARGS__;                                                     \
        }

static int opened(int r) {
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return r;
}

/* Whether @path is ours; then *@ret is what the call returns. */
static bool open_ours(const char *path, int flags, int *ret) {
        if (preload_path_is_data_file(path))
                *ret = opened(preload_open(flags));
        else if (preload_path_is_status_file(path))
                *ret = opened(preload_open_status(flags));
        else
                return false;
        return true;
}

/* open()'s third argument, which is there only when @flags ask for one. */
#define MODE_ARG(flags, mode)                                                           \
        do {                                                                            \
                va_list _ap;                                                            \
                va_start(_ap, flags);                                                   \
                mode = (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? va_arg(_ap, mode_t) : 0; \
                va_end(_ap);                                                            \
        } while (0)

/* One body per family: open() and open64(), openat() and openat64(), and
 * the _FORTIFY_SOURCE entry points without a mode. */
#define DEFINE_OPEN(name)                                                               \
        EXPORT int name(const char *path, int flags, ...) {                             \
                mode_t mode;                                                            \
                int fd;                                                                 \
                                                                                        \
                REAL(name, -1);                                                         \
                MODE_ARG(flags, mode);                                                  \
                if (open_ours(path, flags, &fd))                                        \
                        return fd;                                                      \
                return real_##name(path, flags, mode);                                  \
        }

#define DEFINE_OPENAT(name)                                                             \
        EXPORT int name(int dirfd, const char *path, int flags, ...) {                  \
                mode_t mode;                                                            \
                int fd;                                                                 \
                                                                                        \
                REAL(name, -1);                                                         \
                MODE_ARG(flags, mode);                                                  \
                if (open_ours(path, flags, &fd))                                        \
                        return fd;                                                      \
                return real_##name(dirfd, path, flags, mode);                           \
        }

#define DEFINE_OPEN_2(name)                                                             \
        EXPORT int name(const char *path, int flags) {                                  \
                int fd;                                                                 \
                                                                                        \
                REAL(name, -1);                                                         \
                if (open_ours(path, flags, &fd))                                        \
                        return fd;                                                      \
                return real_##name(path, flags);                                        \
        }

#define DEFINE_OPENAT_2(name)                                                           \
        EXPORT int name(int dirfd, const char *path, int flags) {                       \
                int fd;                                                                 \
                                                                                        \
                REAL(name, -1);                                                         \
                if (open_ours(path, flags, &fd))                                        \
                        return fd;                                                      \
                return real_##name(dirfd, path, flags);                                 \
        }

/* glibc's _FORTIFY_SOURCE names; no header declares them. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);

DEFINE_OPEN(open)
DEFINE_OPEN(open64)
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)
DEFINE_OPEN_2(__open_2)
DEFINE_OPEN_2(__open64_2)
DEFINE_OPENAT_2(__openat_2)
DEFINE_OPENAT_2(__openat64_2)

/* fopen()'s mode as open()'s flags: only "e" (close-on-exec) matters to
 * us; the file is written either way. */
static FILE *fopen_data_file(const char *mode) {
        int fd = preload_open(mode && strchr(mode, 'e') ? O_CLOEXEC : 0);
        FILE *f;

        if (fd < 0) {
                errno = -fd;
                return NULL;
        }
        f = fdopen(fd, "w");
        if (!f) {
                int saved = errno;

                preload_forget(fd);
                close(fd);
                errno = saved;
        }
        return f;
}

/* fopen() of user_events_status: read-only, as the kernel's file. */
static FILE *fopen_status_file(const char *mode) {
        bool write = mode && (strchr(mode, 'w') || strchr(mode, 'a') || strchr(mode, '+'));
        int fd = preload_open_status((write ? O_RDWR : O_RDONLY) | (mode && strchr(mode, 'e') ? O_CLOEXEC : 0));
        FILE *f;

        if (fd < 0) {
                errno = -fd;
                return NULL;
        }
        f = fdopen(fd, "r");
        if (!f) {
                int saved = errno;

                close(fd);
                errno = saved;
        }
        return f;
}

#define DEFINE_FOPEN(name)                                                              \
        EXPORT FILE *name(const char *path, const char *mode) {                         \
                REAL(name, NULL);                                                       \
                if (preload_path_is_data_file(path))                                    \
                        return fopen_data_file(mode);                                   \
                if (preload_path_is_status_file(path))                                  \
                        return fopen_status_file(mode);                                 \
                return real_##name(path, mode);                                         \
        }

DEFINE_FOPEN(fopen)
DEFINE_FOPEN(fopen64)

EXPORT int ioctl(int fd, unsigned long request, ...) {
        va_list ap;
        void *arg;
        int r;

        REAL(ioctl, -1);
        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!preload_owns(fd))
                return real_ioctl(fd, request, arg);
        r = preload_ioctl(fd, request, arg);
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return r;
}

EXPORT int close(int fd) {
        REAL(close, -1);
        if (preload_owns(fd))
                preload_forget(fd);
        return real_close(fd);
}

EXPORT int fclose(FILE *stream) {
        REAL(fclose, EOF);
        if (stream) {
                int fd = fileno(stream);

                if (preload_owns(fd))
                        preload_forget(fd);
        }
        return real_fclose(stream);
}
