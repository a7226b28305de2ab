/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuebroker-preload.so (uebroker-run(1)): the libc calls a user_events
 * program makes, interposed with LD_PRELOAD. open(), open64(), openat(),
 * openat64(), __open_2(), __open64_2(), __openat_2(), __openat64_2(),
 * fopen() and fopen64() of a path ending in user_events_data give a file
 * of preload-files.c (of user_events_status, the broker's status text);
 * ioctl() on such a file is answered through the broker. The library
 * follows every way a number stops being its file or becomes it through
 * libc: close(), fclose(), close_range(), closefrom(), dup2() and dup3()
 * onto it; dup(), dup2(), dup3(), fcntl(F_DUPFD, F_DUPFD_CLOEXEC) of it.
 * What it cannot see (a raw system call) ioctl() finds with fstat().
 * Every other call goes to libc unchanged. Writes are not interposed: they
 * go to the broker's data file as the program sends them.
 *
 * What libc lists as async-signal-safe stays so: the calls above, but for
 * fopen(), fclose(), ioctl() and an open() of user_events_status (a bus
 * call), take no lock and allocate nothing (preload-files.h), and the libc
 * functions they call on are looked up before main().
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
#include <linux/close_range.h>

#include "preload-files.h"

#define EXPORT __attribute__((visibility("default")))

/* The next definition of @name, libc's. Looked up by preload_init() before
 * any program code runs (dlsym() is no call for a signal handler); here
 * again only for a call from another library's constructor before ours. */
#define REAL(name, ...)                                                                 \
        __typeof__(name) *real_##name = real_lookup((void **) &real_ptr_##name, #name); \
        if (!real_##name) {                                                             \
                errno = ENOSYS;                                                         \
                return __VA_ARGS__;                                                     \
        }

static void *real_lookup(void **cache, const char *name) {
        void *p = __atomic_load_n(cache, __ATOMIC_ACQUIRE);

        if (!p) {
                p = dlsym(RTLD_NEXT, name);
                __atomic_store_n(cache, p, __ATOMIC_RELEASE);
        }
        return p;
}

/* glibc's _FORTIFY_SOURCE names; no header declares them. */
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
int fcntl64(int fd, int cmd, ...);

#define FOREACH_REAL(X)                                                                 \
        X(open) X(open64) X(openat) X(openat64)                                         \
        X(__open_2) X(__open64_2) X(__openat_2) X(__openat64_2)                         \
        X(fopen) X(fopen64) X(fclose) X(ioctl) X(close) X(close_range) X(closefrom)     \
        X(dup) X(dup2) X(dup3) X(fcntl) X(fcntl64)

#define DECLARE_REAL(name) static void *real_ptr_##name;
FOREACH_REAL(DECLARE_REAL)

__attribute__((constructor)) static void preload_init(void) {
#define LOOKUP_REAL(name) (void) real_lookup(&real_ptr_##name, #name);
        FOREACH_REAL(LOOKUP_REAL)
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

/* ioctl()'s third argument is one machine word whatever the request
 * means by it, as glibc's own wrapper reads it. */
EXPORT int ioctl(int fd, unsigned long request, ...) {
        va_list ap;
        void *arg;
        int r;

        REAL(ioctl, -1);
        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);
        if (!preload_ioctl(fd, request, arg, &r))
                return real_ioctl(fd, request, arg);
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return r;
}

/* The number stops being ours before it is closed: once closed, another
 * thread's open() may get it. */
EXPORT int close(int fd) {
        REAL(close, -1);
        preload_forget(fd);
        return real_close(fd);
}

EXPORT int fclose(FILE *stream) {
        REAL(fclose, EOF);
        if (stream)
                preload_forget(fileno(stream));
        return real_fclose(stream);
}

EXPORT int close_range(unsigned first, unsigned last, int flags) {
        REAL(close_range, -1);
        /* CLOSE_RANGE_CLOEXEC closes nothing; unknown flags and a reversed
         * range fail and close nothing either. */
        if (first <= last && (flags & ~(CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC)) == 0 &&
            !(flags & CLOSE_RANGE_CLOEXEC))
                preload_forget_range(first, last);
        return real_close_range(first, last, flags);
}

EXPORT void closefrom(int lowfd) {
        static void *real_ptr_closefrom_fallback;
        void (*real_closefrom)(int) = real_lookup(&real_ptr_closefrom, "closefrom");

        (void) real_ptr_closefrom_fallback;
        if (lowfd >= 0)
                preload_forget_range((unsigned) lowfd, ~0u);
        if (real_closefrom)
                real_closefrom(lowfd);
}

EXPORT int dup(int oldfd) {
        int fd;

        REAL(dup, -1);
        fd = real_dup(oldfd);
        if (fd >= 0)
                preload_dup(oldfd, fd);
        return fd;
}

EXPORT int dup2(int oldfd, int newfd) {
        int fd;

        REAL(dup2, -1);
        fd = real_dup2(oldfd, newfd);
        if (fd >= 0)
                preload_dup(oldfd, fd);
        return fd;
}

EXPORT int dup3(int oldfd, int newfd, int flags) {
        int fd;

        REAL(dup3, -1);
        fd = real_dup3(oldfd, newfd, flags);
        if (fd >= 0)
                preload_dup(oldfd, fd);
        return fd;
}

/* fcntl()'s third argument, a machine word read as glibc's wrapper reads
 * it: an int, a pointer or nothing, by @cmd. */
#define DEFINE_FCNTL(name)                                                              \
        EXPORT int name(int fd, int cmd, ...) {                                         \
                va_list ap;                                                             \
                void *arg;                                                              \
                int r;                                                                  \
                                                                                        \
                REAL(name, -1);                                                         \
                va_start(ap, cmd);                                                      \
                arg = va_arg(ap, void *);                                               \
                va_end(ap);                                                             \
                r = real_##name(fd, cmd, arg);                                          \
                if (r >= 0 && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC))               \
                        preload_dup(fd, r);                                             \
                return r;                                                               \
        }

DEFINE_FCNTL(fcntl)
DEFINE_FCNTL(fcntl64)
