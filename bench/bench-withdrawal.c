/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-withdrawal [MAX_ENABLERS]
 *
 * On a kernel with the restricted handles of kernel/upstream-6.12 (run as
 * root in the vm tier's guest: bench/run-vm-bench.sh): what withdrawing a
 * grant (DIAG_IOCSREVOKE) costs when the holder registered 1k, 10k and 100k
 * enablers of it (1000 per process: the holder and its forked children), and
 * what an unrelated process registering on a plain user_events_data file
 * meanwhile waits (a DIAG_IOCSREG and DIAG_IOCSUNREG pair: either can be
 * the call that waits). Both as ratios to the same pair measured alone in
 * the same run (TCG makes absolute times meaningless). Prints one line per
 * count; exit 0 when every step worked, 77 without the restricted handles.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench-user-events.h"

#define PER_PROCESS 1000
#define BYSTANDER_MAX 200000

static double now_us(void)
{
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
        double x = *(const double *)a, y = *(const double *)b;

        return (x > y) - (x < y);
}

/* Shared with the bystander: what it measured, and when to stop. */
struct bystander {
        volatile int stop;
        int count;
        double samples[BYSTANDER_MAX];
};

/*
 * The unrelated process: registers and unregisters one enabler on a plain
 * file until told to stop, timing each pair.
 */
static void bystander_run(struct bystander *b)
{
        static uint32_t word;
        int fd = open(BENCH_USER_EVENTS_DATA_FILE, O_RDWR | O_CLOEXEC);

        if (fd < 0)
                _exit(2);
        while (!b->stop && b->count < BYSTANDER_MAX) {
                double t0 = now_us();

                if (bench_ue_register(fd, "bw_bystander u32 a", &word, NULL) || bench_ue_unregister(fd, &word))
                        _exit(3);
                b->samples[b->count++] = now_us() - t0;
        }
        _exit(0);
}

/* Starts the bystander; it runs until b->stop. */
static pid_t bystander_start(struct bystander *b)
{
        pid_t pid;

        b->stop = 0;
        b->count = 0;
        pid = fork();
        if (pid == 0)
                bystander_run(b);
        return pid;
}

static bool bystander_stop(struct bystander *b, pid_t pid, double *mean, double *p99, double *max)
{
        int status = 0;
        double sum = 0;

        b->stop = 1;
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) || b->count == 0)
                return false;
        qsort(b->samples, b->count, sizeof(double), cmp_double);
        for (int i = 0; i < b->count; i++)
                sum += b->samples[i];
        *mean = sum / b->count;
        *p99 = b->samples[(int)(b->count * 0.99)];
        *max = b->samples[b->count - 1];
        return true;
}

/*
 * One count: the holder registers PER_PROCESS enablers of a grant and
 * forks processes - 1 children that keep them; the bystander runs while the
 * grant is withdrawn. Returns false when a step failed.
 */
static bool one_count(int processes, struct bystander *b, double plain_us)
{
        static uint32_t words[PER_PROCESS];
        const char *def = "bw_withdrawn u32 a";
        int fd = open(BENCH_USER_EVENTS_DATA_FILE, O_RDWR | O_CLOEXEC), g, to_kids[2], from_kids[2];
        double t0, t1, mean, p99, max;
        pid_t *kids = calloc(processes, sizeof(*kids)), by;
        int spawned = 0;
        bool ok = true;
        char c;

        if (fd < 0 || !kids || pipe(to_kids) || pipe(from_kids))
                return false;
        g = bench_ue_handle(fd, UPSTREAM_USER_HANDLE_GRANTING);
        if (g < 0 || bench_ue_grant(fd, UPSTREAM_DIAG_IOCSGRANT, g, def))
                return false;
        for (int i = 0; i < PER_PROCESS; i++)
                if (bench_ue_register(g, def, &words[i], NULL))
                        return false;
        for (; spawned < processes - 1; spawned++) {
                kids[spawned] = fork();
                if (kids[spawned] < 0)
                        break;
                if (kids[spawned] == 0) {
                        if (write(from_kids[1], "k", 1) != 1 || read(to_kids[0], &c, 1) != 1)
                                _exit(2);
                        _exit(0);
                }
        }
        for (int i = 0; i < spawned; i++)
                if (read(from_kids[0], &c, 1) != 1)
                        ok = false;
        ok = ok && spawned == processes - 1;

        by = bystander_start(b);
        usleep(20000);
        t0 = now_us();
        if (bench_ue_grant(fd, UPSTREAM_DIAG_IOCSREVOKE, g, def))
                ok = false;
        t1 = now_us();
        ok = bystander_stop(b, by, &mean, &p99, &max) && ok;

        for (int i = 0; i < spawned; i++)
                if (write(to_kids[1], "x", 1) != 1)
                        ok = false;
        for (int i = 0; i < spawned; i++)
                waitpid(kids[i], NULL, 0);
        if (ok)
                printf("%7d enablers in %3d processes: withdrawal %9.1f ms = %8.0f x a plain pair; "
                       "an unrelated pair meanwhile (%d pairs): mean %.1fx, p99 %.1fx, max %.1fx\n",
                       processes * PER_PROCESS, processes, (t1 - t0) / 1e3, (t1 - t0) / plain_us, b->count,
                       mean / plain_us, p99 / plain_us, max / plain_us);
        close(to_kids[0]);
        close(to_kids[1]);
        close(from_kids[0]);
        close(from_kids[1]);
        close(g);
        close(fd);
        free(kids);
        return ok;
}

int main(int argc, char **argv)
{
        int max = argc > 1 ? atoi(argv[1]) : 100000;
        struct bystander *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        double plain_mean, plain_p99, plain_max;
        int fd = open(BENCH_USER_EVENTS_DATA_FILE, O_RDWR | O_CLOEXEC);
        pid_t by;

        if (fd < 0 || b == MAP_FAILED) {
                fprintf(stderr, "bench-withdrawal: %s: %s\n", BENCH_USER_EVENTS_DATA_FILE, strerror(errno));
                return 1;
        }
        /* An unknown flag: EINVAL where handles exist, ENOTTY where not. */
        if (bench_ue_handle(fd, 1u << 31) == -ENOTTY) {
                printf("bench-withdrawal: this kernel has no restricted handles (kernel/upstream-6.12)\n");
                return 77;
        }
        close(fd);

        /* The unit: the bystander alone, nothing withdrawn meanwhile */
        by = bystander_start(b);
        usleep(500000);
        if (!bystander_stop(b, by, &plain_mean, &plain_p99, &plain_max)) {
                fprintf(stderr, "bench-withdrawal: the plain registrations failed\n");
                return 1;
        }
        printf("a plain DIAG_IOCSREG + DIAG_IOCSUNREG pair alone (%d pairs): mean %.1f us, p99 %.1f us, max %.1f us\n",
               b->count, plain_mean, plain_p99, plain_max);
        for (int n = PER_PROCESS; n <= max; n *= 10)
                if (!one_count(n / PER_PROCESS, b, plain_mean)) {
                        fprintf(stderr, "bench-withdrawal: the run with %d enablers failed\n", n);
                        return 1;
                }
        return 0;
}
