/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * preload-cases CASE: what real programs do with user_events_data, for
 * test-uebroker-run.py to run with and without uebroker-run.
 * Without the preload the file cannot be opened (no tracefs, or no
 * permission): the program then uses /dev/null as a stand-in, skips what
 * needs registrations, and must still pass; with it, registrations work.
 * Prints "registered N" (N registrations that succeeded) and "ok", exits
 * 0; any other exit, or none within the test's bound, is a failure.
 *
 *   signal-close  a SIGALRM handler close()s, dup2()s and write()s the data
 *                 file while the interrupted thread is inside its ioctl()
 *   fork          fork() while another thread registers; each child
 *                 closes the parent's file and registers on its own
 *   recycle       close_range(), closefrom(), dup2(), dup3() and raw
 *                 system calls onto the library's numbers; dup() and
 *                 F_DUPFD followed; a number after exec with O_CLOEXEC
 *   enable-word   read-only and unmapped enable words; a word shared with
 *                 the program's own bit; a word unmapped after
 *                 registration while a recorder starts (stdin: a line
 *                 once recording)
 *   many-files    300 files, one registration each, held together (stdin:
 *                 a line once the test has counted the process's bus
 *                 connections), then closed; a new file registers again
 *                 (stdin: a line once the test has counted registrations)
 */
#define _GNU_SOURCE 1

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#else
#define VALGRIND_HG_DISABLE_CHECKING(addr, len) ((void) (addr), (void) (len))
#endif
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/close_range.h>
#include "user-events-abi.h"

#define DATA_PATH "/sys/kernel/tracing/user_events_data"

/* Set and counted by every thread (the fork case's two): relaxed atomics,
 * which helgrind is told not to check (main()). */
static bool have_data;                  /* the real file, or the preload's */
static unsigned registered;

#define CHECK(expr)                                                                     \
        do {                                                                            \
                if (!(expr)) {                                                          \
                        fprintf(stderr, "%s:%d: check failed: %s (errno %s)\n",         \
                                __FILE__, __LINE__, #expr, strerrorname_np(errno) ?: "0"); \
                        exit(1);                                                        \
                }                                                                       \
        } while (0)

/* The data file, or /dev/null when there is none to open. */
static int open_data(int flags) {
        int fd = open(DATA_PATH, O_RDWR | flags);

        if (fd >= 0) {
                __atomic_store_n(&have_data, true, __ATOMIC_RELAXED);
                return fd;
        }
        CHECK(!have_data);              /* it opened before: it must again */
        fd = open("/dev/null", O_RDWR | flags);
        CHECK(fd >= 0);
        return fd;
}

static int reg(int fd, const char *command, void *word, unsigned size, unsigned bit, uint32_t *write_index) {
        struct upstream_user_reg r = {
                .size = sizeof(r),
                .enable_bit = bit,
                .enable_size = size,
                .enable_addr = (uintptr_t) word,
                .name_args = (uintptr_t) command,
        };

        if (ioctl(fd, UPSTREAM_DIAG_IOCSREG, &r) < 0)
                return -errno;
        if (write_index)
                *write_index = r.write_index;
        __atomic_add_fetch(&registered, 1, __ATOMIC_RELAXED);
        return 0;
}

static int unreg(int fd, void *word, unsigned bit) {
        struct upstream_user_unreg u = { .size = sizeof(u), .disable_bit = bit, .disable_addr = (uintptr_t) word };

        return ioctl(fd, UPSTREAM_DIAG_IOCSUNREG, &u) < 0 ? -errno : 0;
}

static void msleep(unsigned ms) {
        struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static void done(void) {
        printf("registered %u\nok\n", registered);
        fflush(stdout);
}

/* A word and bit no registration of this process used before. The kernel
 * keeps a process's enabler past close() (it is the mm's) and refuses the
 * same address and bit again (EADDRINUSE): a registration the program
 * leaves to close() takes a fresh one, as a correct program does. */
static uint32_t fresh_words[64];
static unsigned fresh_next;

static uint32_t *fresh_bit(unsigned *ret_bit) {
        unsigned n = fresh_next++;

        CHECK(n < 64 * 32);
        *ret_bit = n % 32;
        return &fresh_words[n / 32];
}

/* signal-close */

static volatile sig_atomic_t target = -1, fired;
static int sig_pipe[2];

static void on_alarm(int sig) {
        int saved = errno;

        (void) sig;
        if (target >= 0) {
                /* What a handler may do: all async-signal-safe. */
                CHECK(dup2(sig_pipe[1], 1000) == 1000);
                CHECK(close(1000) == 0);
                CHECK(write(sig_pipe[1], "x", 1) == 1);
                CHECK(close(target) == 0);
                target = -1;
        }
        fired = 1;
        errno = saved;
}

static int case_signal_close(void) {
        struct sigaction sa = { .sa_handler = on_alarm };
        char buf[64];

        CHECK(pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) == 0);
        CHECK(sigaction(SIGALRM, &sa, NULL) == 0);
        for (unsigned i = 0; i < 300; i++) {
                /* Spread over the ioctl: its first call connects to the
                 * bus (milliseconds), later ones are a round trip. */
                struct itimerval it = { .it_value = { 0, 100 + (i * 37) % 4000 } };
                int fd = open_data(0);

                fired = 0;
                target = fd;
                CHECK(setitimer(ITIMER_REAL, &it, NULL) == 0);
                for (unsigned j = 0; j < 3 && !fired; j++) {
                        unsigned bit;
                        uint32_t *word = fresh_bit(&bit);
                        int r = reg(fd, "preload_signal_close u32 n", word, 4, bit, NULL);

                        /* Closed under it: EBADF is the kernel's answer too
                         * for a call that starts after the close. */
                        CHECK(r == 0 || !have_data || r == -EBADF);
                }
                while (!fired)
                        msleep(1);
                if (target >= 0) {
                        target = -1;
                        CHECK(close(fd) == 0);
                }
                while (read(sig_pipe[0], buf, sizeof(buf)) > 0)
                        ;
        }
        done();
        return 0;
}

/* fork */

static int current_fd = -1;             /* the registering thread's file */
static bool stop;

static void *register_loop(void *arg) {
        uint32_t word = 0;

        (void) arg;
        while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
                int fd = open_data(O_CLOEXEC);

                __atomic_store_n(&current_fd, fd, __ATOMIC_RELAXED);
                CHECK(reg(fd, "preload_fork u32 n", &word, 4, 0, NULL) == 0 || !have_data);
                __atomic_store_n(&current_fd, -1, __ATOMIC_RELAXED);
                /* The same word again next time: unregistered first, as
                 * the kernel requires. */
                CHECK(unreg(fd, &word, 0) == 0 || !have_data);
                CHECK(close(fd) == 0);
        }
        return NULL;
}

static int case_fork(void) {
        pthread_t thread;
        uint32_t word = 0;

        /* The test's own flags are C11 atomics, which helgrind does not
         * know as such: what it checks is the library's locking. */
        VALGRIND_HG_DISABLE_CHECKING(&current_fd, sizeof(current_fd));
        VALGRIND_HG_DISABLE_CHECKING(&stop, sizeof(stop));
        /* Whether there is a file at all, before the thread races. */
        CHECK(close(open_data(O_CLOEXEC)) == 0);
        CHECK(pthread_create(&thread, NULL, register_loop, NULL) == 0);
        for (unsigned i = 0; i < 60; i++) {
                int status;
                pid_t pid;

                msleep(i % 4);
                pid = fork();
                CHECK(pid >= 0);
                if (pid == 0) {
                        int fd = __atomic_load_n(&current_fd, __ATOMIC_RELAXED);

                        /* The parent's file, perhaps mid-registration there. */
                        if (fd >= 0)
                                (void) close(fd);
                        fd = open_data(O_CLOEXEC);
                        if (reg(fd, "preload_fork u32 n", &word, 4, 1, NULL) < 0 && have_data)
                                _exit(3);
                        if (unreg(fd, &word, 1) < 0 && have_data)
                                _exit(4);
                        _exit(close(fd) == 0 ? 0 : 5);
                }
                /* A child that hangs is the failure: 10 s, then say so. */
                for (unsigned ms = 0;; ms++) {
                        pid_t r = waitpid(pid, &status, WNOHANG);

                        CHECK(r >= 0);
                        if (r == pid)
                                break;
                        if (ms == 10000) {
                                fprintf(stderr, "child %d of fork %u hangs\n", (int) pid, i);
                                kill(pid, SIGKILL);
                                exit(1);
                        }
                        msleep(1);
                }
                if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                        fprintf(stderr, "child of fork %u: status 0x%x\n", i, (unsigned) status);
                        exit(1);
                }
        }
        __atomic_store_n(&stop, true, __ATOMIC_RELAXED);
        CHECK(pthread_join(thread, NULL) == 0);
        done();
        return 0;
}

/* recycle */

static int pipe_fds[2];

/* @fd is the pipe now (3 bytes queued): FIONREAD is the pipe's answer. */
static void check_pipe_at(int fd, const char *how) {
        int n = -1;

        if (ioctl(fd, FIONREAD, &n) < 0 || n != 3) {
                fprintf(stderr, "%s: FIONREAD on fd %d: %s, %d\n", how, fd, strerrorname_np(errno) ?: "0", n);
                exit(1);
        }
}

/* A file with a registration (when there is a file), at some number; the
 * enable word and bit it took in *@ret_word, *@ret_bit if asked. */
static int registered_file(uint32_t **ret_word, unsigned *ret_bit) {
        int fd = open_data(0);
        unsigned bit;
        uint32_t *word = fresh_bit(&bit);

        CHECK(reg(fd, "preload_recycle u32 n", word, 4, bit, NULL) == 0 || !have_data);
        if (ret_word)
                *ret_word = word;
        if (ret_bit)
                *ret_bit = bit;
        return fd;
}

static int case_recycle(const char *self) {
        uint32_t word = 0;
        int fd, fd2, fd3;

        CHECK(pipe(pipe_fds) == 0);
        CHECK(write(pipe_fds[1], "abc", 3) == 3);

        /* close_range(), then the number comes back as the pipe. */
        fd = registered_file(NULL, NULL);
        CHECK(close_range(fd, fd, 0) == 0);
        CHECK(fcntl(pipe_fds[0], F_DUPFD, fd) == fd);
        check_pipe_at(fd, "close_range");
        CHECK(close(fd) == 0);

        /* close_range() with CLOSE_RANGE_CLOEXEC closes nothing. */
        {
                uint32_t *w;
                unsigned bit;

                fd = registered_file(&w, &bit);
                CHECK(close_range(fd, fd, CLOSE_RANGE_CLOEXEC) == 0);
                CHECK(unreg(fd, w, bit) == 0 || !have_data);
        }
        CHECK(close(fd) == 0);

        /* dup2() and dup3() onto the number, before and after a
         * registration. */
        fd = open_data(0);
        CHECK(dup2(pipe_fds[0], fd) == fd);
        check_pipe_at(fd, "dup2 onto a fresh file");
        CHECK(close(fd) == 0);
        fd = registered_file(NULL, NULL);
        CHECK(dup2(pipe_fds[0], fd) == fd);
        check_pipe_at(fd, "dup2 onto a registered file");
        CHECK(close(fd) == 0);
        fd = registered_file(NULL, NULL);
        CHECK(dup3(pipe_fds[0], fd, O_CLOEXEC) == fd);
        check_pipe_at(fd, "dup3");
        CHECK(close(fd) == 0);

        /* A raw system call the library cannot see. */
        fd = open_data(0);
        CHECK(syscall(SYS_dup3, pipe_fds[0], fd, 0) == fd);
        check_pipe_at(fd, "raw dup3 onto a fresh file");
        CHECK(close(fd) == 0);
        fd = registered_file(NULL, NULL);
        CHECK(syscall(SYS_close, fd) == 0);
        CHECK(fcntl(pipe_fds[0], F_DUPFD, fd) == fd);
        check_pipe_at(fd, "raw close");
        CHECK(close(fd) == 0);

        /* closefrom(). */
        fd = registered_file(NULL, NULL);
        closefrom(fd);
        CHECK(fcntl(pipe_fds[0], F_DUPFD, fd) == fd);
        check_pipe_at(fd, "closefrom");
        CHECK(close(fd) == 0);

        /* dup() and F_DUPFD_CLOEXEC: the same file under more numbers. */
        fd = open_data(0);
        fd2 = dup(fd);
        fd3 = fcntl(fd, F_DUPFD_CLOEXEC, 100);
        CHECK(fd2 >= 0 && fd3 >= 100);
        CHECK(reg(fd2, "preload_recycle u32 n", &word, 4, 1, NULL) == 0 || !have_data);
        if (have_data) {
                uint32_t index;
                struct iovec iov[2] = { { &index, sizeof(index) }, { &word, sizeof(uint32_t) } };

                /* The first registration (on fd2) made fd3 the data file too. */
                CHECK(reg(fd3, "preload_recycle u32 n", &word, 4, 2, &index) == 0);
                /* EBADF: the kernel's answer while nobody records it */
                CHECK(writev(fd3, iov, 2) == (ssize_t) (sizeof(index) + sizeof(uint32_t)) || errno == EBADF);
        }
        CHECK(close(fd) == 0);
        CHECK(unreg(fd3, &word, 1) == 0 || !have_data);
        CHECK(close(fd3) == 0);
        CHECK(unreg(fd2, &word, 2) == 0 || !have_data);
        CHECK(close(fd2) == 0);

        /* exec with O_CLOEXEC: the number is the next program's to reuse. */
        fflush(stdout);
        fd = open_data(O_CLOEXEC);
        {
                char arg[16], reg_arg[16];

                snprintf(arg, sizeof(arg), "%d", fd);
                snprintf(reg_arg, sizeof(reg_arg), "%u", registered);
                execl(self, self, "recycle-after-exec", arg, reg_arg, (char *) NULL);
        }
        perror("exec");
        return 1;
}

static int case_recycle_after_exec(const char *fd_arg, const char *registered_arg) {
        int fd = atoi(fd_arg);

        registered = (unsigned) atoi(registered_arg);
        CHECK(fcntl(fd, F_GETFD) < 0 && errno == EBADF);
        {
                int p[2];

                CHECK(pipe(p) == 0);
                CHECK(write(p[1], "abc", 3) == 3);
                CHECK(dup2(p[0], fd) == fd);
                check_pipe_at(fd, "exec");
        }
        done();
        return 0;
}

/* enable-word */

static int case_enable_word(void) {
        long page = sysconf(_SC_PAGESIZE);
        uint32_t *ro, *gone, *shared, *later;
        int fd = open_data(0), r;
        char line[64];

        ro = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        /* Unmapped for sure: inside the first page, below any
         * vm.mmap_min_addr (a page of our own, unmapped, is where the next
         * mapping anyone makes may land, as ASan's allocator did). */
        gone = (uint32_t *) (uintptr_t) 1024;
        shared = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        later = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        CHECK(ro != MAP_FAILED && shared != MAP_FAILED && later != MAP_FAILED);

        /* Upstream 6.12 answers ENOMEM when it cannot write the word at
         * registration (user_event_enabler_create() fails, and
         * user_events_ioctl_reg() says -ENOMEM for that). */
        r = reg(fd, "preload_word_ro u32 n", ro, 4, 0, NULL);
        CHECK(r == -ENOMEM || !have_data);
        r = reg(fd, "preload_word_gone u32 n", gone, 4, 0, NULL);
        CHECK(r == -ENOMEM || !have_data);

        /* Bits 0 and 1 ours to follow, 31 the program's own; an 8-byte
         * word with its bit in the upper half. */
        *shared = UINT32_C(1) << 31;
        CHECK(reg(fd, "preload_word_a u32 n", shared, 4, 0, NULL) == 0 || !have_data);
        CHECK(reg(fd, "preload_word_b u32 n", shared, 4, 1, NULL) == 0 || !have_data);
        CHECK(reg(fd, "preload_word_a u32 n", shared + 2, 8, 40, NULL) == 0 || !have_data);
        /* The same address and bit again, on this file or another: the
         * kernel's EADDRINUSE (an enabler is the process's). */
        CHECK(reg(fd, "preload_word_b u32 n", shared, 4, 1, NULL) == -EADDRINUSE || !have_data);
        {
                int other = open_data(0);

                CHECK(reg(other, "preload_word_a u32 n", shared, 4, 0, NULL) == -EADDRINUSE || !have_data);
                CHECK(close(other) == 0);
        }
        /* A word that goes away while registered: the kernel ignores it. */
        CHECK(reg(fd, "preload_word_later u32 n", later, 4, 3, NULL) == 0 || !have_data);
        CHECK(munmap(later, page) == 0);
        printf("ready\n");
        fflush(stdout);

        /* The test starts recorders of preload_word_a and
         * preload_word_later, then writes a line. */
        CHECK(fgets(line, sizeof(line), stdin) != NULL);
        if (have_data) {
                uint64_t wide;

                for (unsigned ms = 0; ms < 5000 && !(__atomic_load_n(shared, __ATOMIC_RELAXED) & 1); ms++)
                        msleep(1);
                msleep(100);    /* a few of the library's 20 ms rounds */
                CHECK(__atomic_load_n(shared, __ATOMIC_RELAXED) == ((UINT32_C(1) << 31) | 1));
                memcpy(&wide, shared + 2, sizeof(wide));
                CHECK(wide == UINT64_C(1) << 40);
                CHECK(unreg(fd, shared, 0) == 0);
                CHECK(__atomic_load_n(shared, __ATOMIC_RELAXED) == UINT32_C(1) << 31);
        }
        CHECK(close(fd) == 0);
        done();
        return 0;
}

/* many-files */

#define MANY_FILES 300u

static int case_many_files(void) {
        unsigned ok = 0, refused = 0, bit;
        int fds[MANY_FILES], fd, r;
        uint32_t *word;
        char line[64];

        for (unsigned i = 0; i < MANY_FILES; i++) {
                fds[i] = open_data(O_CLOEXEC);
                word = fresh_bit(&bit);
                r = reg(fds[i], "preload_many u32 n", word, 4, bit, NULL);
                if (r == 0)
                        ok++;
                else {
                        /* Past the uid's share of data files (the broker's
                         * ClientsPerUser=): the kernel's own answer when
                         * it runs out of room. */
                        CHECK(r == -ENOSPC || !have_data);
                        refused++;
                }
        }
        printf("ready %u %u\n", ok, refused);
        fflush(stdout);
        CHECK(fgets(line, sizeof(line), stdin) != NULL);

        for (unsigned i = 0; i < MANY_FILES; i++)
                CHECK(close(fds[i]) == 0);
        /* The closed files' data sessions end before this one opens, so
         * the share is the uid's again. */
        fd = open_data(O_CLOEXEC);
        word = fresh_bit(&bit);
        CHECK(reg(fd, "preload_many u32 n", word, 4, bit, NULL) == 0 || !have_data);
        printf("again\n");
        fflush(stdout);
        CHECK(fgets(line, sizeof(line), stdin) != NULL);
        CHECK(close(fd) == 0);
        done();
        return 0;
}

int main(int argc, char **argv) {
        VALGRIND_HG_DISABLE_CHECKING(&have_data, sizeof(have_data));
        VALGRIND_HG_DISABLE_CHECKING(&registered, sizeof(registered));
        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc == 2 && strcmp(argv[1], "signal-close") == 0)
                return case_signal_close();
        if (argc == 2 && strcmp(argv[1], "fork") == 0)
                return case_fork();
        if (argc == 2 && strcmp(argv[1], "recycle") == 0)
                return case_recycle("/proc/self/exe");
        if (argc == 4 && strcmp(argv[1], "recycle-after-exec") == 0)
                return case_recycle_after_exec(argv[2], argv[3]);
        if (argc == 2 && strcmp(argv[1], "enable-word") == 0)
                return case_enable_word();
        if (argc == 2 && strcmp(argv[1], "many-files") == 0)
                return case_many_files();
        fprintf(stderr, "usage: preload-cases signal-close|fork|recycle|enable-word|many-files\n");
        return 2;
}
