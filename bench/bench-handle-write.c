/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bench-handle-write [WRITES_PER_ROUND [ROUNDS]]
 *
 * On a kernel with the restricted handles of kernel/upstream-6.12 (as root
 * in the vm tier's guest: bench/run-vm-bench.sh): what a client's write
 * costs through the handle the broker gives it, against root's writev() on
 * the user_events_data file itself, for one enabled event (a u64 and a
 * char[16], 24 bytes, as the other benches write):
 *   file       writev() of the event's write index on the data file (the
 *              way a program with the file writes on a stock kernel)
 *   write-only writev() of the same index through DIAG_IOCSHANDLE's
 *              write-only handle of that file (what Register hands out)
 *   granting   writev() through a granting handle of the event registered
 *              on it after DIAG_IOCSGRANT (what Authorize hands out, and
 *              uebroker-run's programs write through)
 * Each round times WRITES_PER_ROUND (default 20000) writes on each path,
 * the paths in a rotating order, ROUNDS (default 15) rounds; the event is
 * enabled in the top tracing instance, so every write reaches the trace
 * buffer. Prints the median, fastest and slowest round per path in ns per
 * write, and each handle's median against the file's with the file's own
 * spread (slowest round / fastest round), which TCG makes wide. Exit 0 when
 * every write was accepted, 77 without the restricted handles.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <tracefs/tracefs.h>
#include <unistd.h>

#include "bench-user-events.h"
#include "bench-util.h"

#define ROUNDS_MAX 101

enum path { PATH_FILE, PATH_WRITE_ONLY, PATH_GRANTING, N_PATHS };

static const char *const path_names[N_PATHS] = { "file", "write-only handle", "granting handle" };

/* The kernel sets bit 0 of these while the event is enabled. */
static uint32_t enable_words[2];

/* @n writes of the event at @index on @fd; ns per write, 0 if one failed. */
static uint64_t time_writes(int fd, uint32_t index, unsigned n) {
        struct {
                uint64_t seq;
                char tag[16];
        } __attribute__((packed)) payload = { .tag = "bench-handle" };
        struct iovec iov[2] = {
                { .iov_base = &index, .iov_len = sizeof(index) },
                { .iov_base = &payload, .iov_len = sizeof(payload) },
        };
        uint64_t t0 = bench_now_ns();

        for (unsigned i = 0; i < n; i++) {
                payload.seq = i;
                if (writev(fd, iov, 2) != (ssize_t) (sizeof(index) + sizeof(payload))) {
                        fprintf(stderr, "bench-handle-write: write %u failed: %m\n", i);
                        return 0;
                }
        }
        return (bench_now_ns() - t0) / n;
}

int main(int argc, char *argv[]) {
        static const char def[] = "bench_handle_write u64 seq; char[16] tag";
        uint64_t took[N_PATHS][ROUNDS_MAX], sorted[ROUNDS_MAX], median[N_PATHS];
        unsigned writes = argc > 1 ? (unsigned) strtoul(argv[1], NULL, 10) : 20000;
        unsigned rounds = argc > 2 ? (unsigned) strtoul(argv[2], NULL, 10) : 15;
        uint32_t file_index, granted_index;
        int fd, fds[N_PATHS];
        uint32_t indexes[N_PATHS];
        int r;

        if (writes == 0 || rounds == 0 || rounds > ROUNDS_MAX) {
                fprintf(stderr, "usage: %s [WRITES_PER_ROUND [ROUNDS (1-%u)]]\n", argv[0], ROUNDS_MAX);
                return 2;
        }
        fd = open(BENCH_USER_EVENTS_DATA_FILE, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
                fprintf(stderr, "bench-handle-write: cannot open %s: %m\n", BENCH_USER_EVENTS_DATA_FILE);
                return 1;
        }
        r = bench_ue_register(fd, def, &enable_words[0], &file_index);
        if (r < 0) {
                fprintf(stderr, "bench-handle-write: DIAG_IOCSREG: %s\n", strerror(-r));
                return 1;
        }
        fds[PATH_FILE] = fd;
        indexes[PATH_FILE] = file_index;

        fds[PATH_WRITE_ONLY] = bench_ue_handle(fd, 0);
        if (fds[PATH_WRITE_ONLY] == -ENOTTY) {
                printf("no restricted handles on this kernel (DIAG_IOCSHANDLE: ENOTTY)\n");
                return 77;
        }
        fds[PATH_GRANTING] = bench_ue_handle(fd, UPSTREAM_USER_HANDLE_GRANTING);
        if (fds[PATH_WRITE_ONLY] < 0 || fds[PATH_GRANTING] < 0) {
                fprintf(stderr, "bench-handle-write: DIAG_IOCSHANDLE: %s\n",
                        strerror(-(fds[PATH_WRITE_ONLY] < 0 ? fds[PATH_WRITE_ONLY] : fds[PATH_GRANTING])));
                return 1;
        }
        indexes[PATH_WRITE_ONLY] = file_index;
        r = bench_ue_grant(fd, UPSTREAM_DIAG_IOCSGRANT, fds[PATH_GRANTING], def);
        if (r >= 0)
                r = bench_ue_register(fds[PATH_GRANTING], def, &enable_words[1], &granted_index);
        if (r < 0) {
                fprintf(stderr, "bench-handle-write: granting and registering through the handle: %s\n",
                        strerror(-r));
                return 1;
        }
        indexes[PATH_GRANTING] = granted_index;

        /* In the top instance, so every write reaches the trace buffer. */
        if (tracefs_event_enable(NULL, "user_events", "bench_handle_write") < 0 || !(enable_words[0] & 1) ||
            !(enable_words[1] & 1)) {
                fprintf(stderr, "bench-handle-write: cannot enable the event (enable bits %u %u)\n",
                        enable_words[0] & 1, enable_words[1] & 1);
                return 1;
        }

        /* One unmeasured round: page faults, caches, the trace buffer's pages. */
        for (unsigned p = 0; p < N_PATHS; p++)
                if (time_writes(fds[p], indexes[p], writes) == 0)
                        return 1;
        for (unsigned i = 0; i < rounds; i++)
                for (unsigned k = 0; k < N_PATHS; k++) {
                        unsigned p = (i + k) % N_PATHS;

                        took[p][i] = time_writes(fds[p], indexes[p], writes);
                        if (took[p][i] == 0)
                                return 1;
                }
        (void) tracefs_event_disable(NULL, "user_events", "bench_handle_write");

        printf("%u rounds of %u enabled writes of 24 payload bytes on each path, in turn, one event:\n", rounds,
               writes);
        for (unsigned p = 0; p < N_PATHS; p++) {
                memcpy(sorted, took[p], rounds * sizeof(sorted[0]));
                median[p] = bench_percentile(sorted, rounds, 50);
                printf("  %-20s median %6llu ns/write, rounds %llu-%llu\n", path_names[p],
                       (unsigned long long) median[p], (unsigned long long) sorted[0],
                       (unsigned long long) sorted[rounds - 1]);
                if (p == PATH_FILE)
                        printf("  %-20s its own spread: slowest round / fastest round %.2f\n", "",
                               (double) sorted[rounds - 1] / (double) sorted[0]);
        }
        bench_report("writev, write-only handle (median)", (double) median[PATH_WRITE_ONLY],
                     "writev, data file (median)", (double) median[PATH_FILE], "ns/write");
        bench_report("writev, granting handle (median)", (double) median[PATH_GRANTING],
                     "writev, data file (median)", (double) median[PATH_FILE], "ns/write");
        return 0;
}
