/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What the preload library (uebroker-run) adds to the calls it intercepts
 * when a program uses them on files that are not user_events (a
 * program that never touches user_events should not notice it), in one
 * run: the same program measures each call in a child without the library
 * and in a child with LD_PRELOAD of it, rounds alternating, per call in ns
 * (mean and p99, the median round of each):
 *   open("/dev/null") + close(), openat() + close(), fopen() + fclose(),
 *   ioctl(FIONREAD) on a pipe, dup() + close(), dup2() onto a number in
 *   use, fcntl(F_GETFL), and fork() + _exit() + waitpid() (its atfork
 *   handlers), each with nothing of user_events open.
 *
 *   bench-preload-syscalls PRELOAD_LIBRARY [ITERATIONS]
 *
 * run-bench.sh passes the build's libuebroker-preload.so. No broker is
 * needed: the library connects to one only when user_events_data is opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define ROUNDS 3
#define CHILD_ENV "BENCH_PRELOAD_SYSCALLS_CHILD"

enum op {
        OP_OPEN_CLOSE,
        OP_OPENAT_CLOSE,
        OP_FOPEN_FCLOSE,
        OP_IOCTL,
        OP_DUP_CLOSE,
        OP_DUP2,
        OP_FCNTL,
        OP_FORK,
        N_OPS,
};

static const char *const op_names[N_OPS] = {
        [OP_OPEN_CLOSE] = "open + close",
        [OP_OPENAT_CLOSE] = "openat + close",
        [OP_FOPEN_FCLOSE] = "fopen + fclose",
        [OP_IOCTL] = "ioctl(FIONREAD) on a pipe",
        [OP_DUP_CLOSE] = "dup + close",
        [OP_DUP2] = "dup2 onto a number in use",
        [OP_FCNTL] = "fcntl(F_GETFL)",
        [OP_FORK] = "fork + _exit + waitpid",
};

/* fork() is slow: fewer of them. */
static unsigned long long iterations_of(enum op op, unsigned long long n) {
        return op == OP_FORK ? (n / 100 ?: 1) : n;
}

static int one_call(enum op op, int pipe_rd, int spare) {
        int fd, avail;
        FILE *f;
        pid_t pid;

        switch (op) {
        case OP_OPEN_CLOSE:
                fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                return fd < 0 ? -errno : close(fd);
        case OP_OPENAT_CLOSE:
                fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);
                return fd < 0 ? -errno : close(fd);
        case OP_FOPEN_FCLOSE:
                f = fopen("/dev/null", "re");
                return f ? fclose(f) : -errno;
        case OP_IOCTL:
                return ioctl(pipe_rd, FIONREAD, &avail);
        case OP_DUP_CLOSE:
                fd = dup(pipe_rd);
                return fd < 0 ? -errno : close(fd);
        case OP_DUP2:
                return dup2(pipe_rd, spare) < 0 ? -errno : 0;
        case OP_FCNTL:
                return fcntl(pipe_rd, F_GETFL) < 0 ? -errno : 0;
        case OP_FORK:
                pid = fork();
                if (pid == 0)
                        _exit(0);
                return pid < 0 ? -errno : (waitpid(pid, NULL, 0) < 0 ? -errno : 0);
        default:
                return -EINVAL;
        }
}

/* The child: every op, "OP mean_ns p99_ns" lines on stdout. */
static int child(unsigned long long n) {
        int pipefd[2], spare;
        uint64_t *samples;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return 1;
        spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
        samples = calloc(n, sizeof(*samples));
        if (spare < 0 || !samples)
                return 1;
        for (enum op op = 0; op < N_OPS; op++) {
                unsigned long long count = iterations_of(op, n);
                double sum = 0;

                /* warm up: the library's first calls resolve its symbols */
                for (int i = 0; i < 100; i++)
                        (void) one_call(op, pipefd[0], spare);
                for (unsigned long long i = 0; i < count; i++) {
                        uint64_t t0 = bench_now_ns(), t1;

                        if (one_call(op, pipefd[0], spare) < 0) {
                                fprintf(stderr, "bench-preload-syscalls: %s failed: %m\n", op_names[op]);
                                return 1;
                        }
                        t1 = bench_now_ns();
                        samples[i] = t1 - t0;
                        sum += (double) (t1 - t0);
                }
                printf("%d %.1f %.1f\n", (int) op, sum / (double) count,
                       bench_percentile_us(samples, count, 99) * 1000.0);
        }
        free(samples);
        return 0;
}

/* One child, with @preload or without; fills mean[op] and p99[op]. */
static int run_child(const char *self, const char *preload, unsigned long long n, double *mean, double *p99) {
        char count[32], line[128];
        int out[2], status;
        FILE *f;
        pid_t pid;

        snprintf(count, sizeof(count), "%llu", n);
        if (pipe(out) < 0)
                return -errno;
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                dup2(out[1], STDOUT_FILENO);
                close(out[0]);
                close(out[1]);
                setenv(CHILD_ENV, "1", 1);
                if (preload)
                        setenv("LD_PRELOAD", preload, 1);
                else
                        unsetenv("LD_PRELOAD");
                execl(self, self, "-", count, (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        f = fdopen(out[0], "r");
        while (f && fgets(line, sizeof(line), f)) {
                int op;
                double m, p;

                if (sscanf(line, "%d %lf %lf", &op, &m, &p) == 3 && op >= 0 && op < N_OPS) {
                        mean[op] = m;
                        p99[op] = p;
                }
        }
        if (f)
                fclose(f);
        if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                return -EIO;
        return 0;
}

static int compare_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double median3(double v[ROUNDS]) {
        double s[ROUNDS];

        memcpy(s, v, sizeof(s));
        qsort(s, ROUNDS, sizeof(double), compare_double);
        return s[ROUNDS / 2];
}

int main(int argc, char *argv[]) {
        double mean[2][ROUNDS][N_OPS] = { { { 0 } } }, p99[2][ROUNDS][N_OPS] = { { { 0 } } };
        unsigned long long n = 200000;
        char self[4096];
        ssize_t len;

        if (getenv(CHILD_ENV))
                return child(argc > 2 ? strtoull(argv[2], NULL, 10) : n);
        if (argc < 2 || argc > 3 || access(argv[1], R_OK) < 0) {
                fprintf(stderr, "usage: %s PRELOAD_LIBRARY [ITERATIONS]\n", argv[0]);
                return 2;
        }
        if (argc == 3) {
                n = strtoull(argv[2], NULL, 10);
                if (n < 100) {
                        fprintf(stderr, "bench-preload-syscalls: at least 100 iterations\n");
                        return 2;
                }
        }
        len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (len < 0)
                return 1;
        self[len] = '\0';

        for (int round = 0; round < ROUNDS; round++)
                /* each round starts with the other one */
                for (int k = 0; k < 2; k++) {
                        int with = (round + k) % 2;

                        if (run_child(self, with ? argv[1] : NULL, n, mean[with][round], p99[with][round]) < 0) {
                                fprintf(stderr, "bench-preload-syscalls: a child failed\n");
                                return 1;
                        }
                }

        printf("calls on files that are not user_events, without and with the preload library "
               "(%s), %llu each (fork: %llu), median of %d rounds, ns per call\n",
               argv[1], n, iterations_of(OP_FORK, n), ROUNDS);
        printf("%-28s %10s %10s | %10s %10s | %7s %7s\n", "call", "plain mean", "p99", "preload", "p99",
               "mean x", "p99 x");
        for (enum op op = 0; op < N_OPS; op++) {
                double m[2], p[2];

                for (int with = 0; with < 2; with++) {
                        double vm[ROUNDS], vp[ROUNDS];

                        for (int r = 0; r < ROUNDS; r++) {
                                vm[r] = mean[with][r][op];
                                vp[r] = p99[with][r][op];
                        }
                        m[with] = median3(vm);
                        p[with] = median3(vp);
                }
                printf("%-28s %10.1f %10.1f | %10.1f %10.1f | %7.2f %7.2f\n", op_names[op], m[0], p[0], m[1], p[1],
                       m[0] > 0 ? m[1] / m[0] : 0.0, p[0] > 0 ? p[1] / p[0] : 0.0);
        }
        return 0;
}
