/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Small helpers shared by the benchmark programs. */

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-bus.h>
#include <time.h>

static inline uint64_t bench_now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

/* A positive count from argv[1] or @fallback. */
static inline unsigned long long bench_count(int argc, char *argv[], unsigned long long fallback) {
        char *end;
        unsigned long long n;

        if (argc < 2)
                return fallback;
        n = strtoull(argv[1], &end, 10);
        if (*end || n == 0) {
                fprintf(stderr, "usage: %s [ITERATIONS]\n", argv[0]);
                exit(2);
        }
        return n;
}

/* "name value unit | baseline value unit | ratio x" */
static inline void bench_report(const char *what, double value, const char *baseline, double base_value,
                                const char *unit) {
        printf("%-36s %10.2f %-8s | %-36s %10.2f %-8s | ratio %.2f\n", what, value, unit, baseline, base_value, unit,
               base_value > 0 ? value / base_value : 0.0);
}

static int bench_compare_u64(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

        return x < y ? -1 : x > y;
}

/* The @p-th percentile (0 < p <= 100, nearest rank) of @n samples sorted
 * in ascending order; 0 for none. */
static inline uint64_t bench_rank(const uint64_t *sorted, size_t n, double p) {
        size_t rank = (size_t) ((p / 100.0) * (double) n + 0.999999);

        if (n == 0)
                return 0;
        if (rank < 1)
                rank = 1;
        return sorted[(rank > n ? n : rank) - 1];
}

/* The @p-th percentile of @n samples in any order; sorts @v in place. */
static inline uint64_t bench_percentile(uint64_t *v, size_t n, double p) {
        qsort(v, n, sizeof(*v), bench_compare_u64);
        return bench_rank(v, n, p);
}

/* The same of samples in nanoseconds, in microseconds. */
static inline double bench_percentile_us(uint64_t *v, size_t n, double p) {
        return (double) bench_percentile(v, n, p) / 1000.0;
}

/* utime + stime of process @pid ("self", or a number) in clock ticks
 * (sysconf(_SC_CLK_TCK) a second), or -1 when /proc cannot tell. */
static inline long long bench_cpu_ticks(const char *pid) {
        char path[64], line[2048], *p;
        unsigned long long utime, stime;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%s/stat", pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        /* The command name may hold spaces and parentheses: after the last ")". */
        p = fgets(line, sizeof(line), f) ? strrchr(line, ')') : NULL;
        fclose(f);
        /* After "pid (comm)": state is field 3, utime 14, stime 15. */
        if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime, &stime) != 2)
                return -1;
        return (long long) (utime + stime);
}

/* CPU time in ns of every thread of process @pid ("self", or a number):
 * the sum of the first field of /proc/PID/task/TID/schedstat (the
 * scheduler's run time, finer than clock ticks); -1 when /proc cannot
 * tell. */
static inline long long bench_cpu_ns(const char *pid) {
        char path[600];
        long long sum = 0;
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%s/task", pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((de = readdir(d))) {
                unsigned long long ns;
                FILE *f;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/task/%s/schedstat", pid, de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;       /* the thread ended */
                if (fscanf(f, "%llu", &ns) == 1)
                        sum += (long long) ns;
                fclose(f);
        }
        closedir(d);
        return sum;
}

/* bench_cpu_ns() summed over every process whose comm starts with @prefix
 * (the LTTng daemons: lttng-sessiond and the lttng-consumerd it spawns);
 * 0 when there is none. */
static inline long long bench_cpu_ns_of_comm(const char *prefix) {
        long long sum = 0;
        struct dirent *de;
        DIR *d = opendir("/proc");

        if (!d)
                return -1;
        while ((de = readdir(d))) {
                char path[300], comm[64] = "";
                long long ns;
                FILE *f;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                snprintf(path, sizeof(path), "/proc/%s/comm", de->d_name);
                f = fopen(path, "re");
                if (!f)
                        continue;
                if (!fgets(comm, sizeof(comm), f))
                        comm[0] = 0;
                fclose(f);
                if (strncmp(comm, prefix, strlen(prefix)) != 0)
                        continue;
                ns = bench_cpu_ns(de->d_name);
                if (ns > 0)
                        sum += ns;
        }
        closedir(d);
        return sum;
}

/* Soft fd limit up to the hard one: a bench holding many connections
 * needs more than the usual 1024. */
static inline void bench_raise_fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                        perror("setrlimit(RLIMIT_NOFILE)");
        }
}

/* One blocking method call taking one string (or nothing when @arg is
 * NULL); the reply is read and dropped (its fds closed). 0, or a negative
 * errno after printing the error. The same code path for the broker and
 * for its baselines. */
static inline int bench_call(sd_bus *bus, const char *destination, const char *path, const char *interface,
                             const char *member, const char *arg) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int r;

        if (arg)
                r = sd_bus_call_method(bus, destination, path, interface, member, &error, &reply, "s", arg);
        else
                r = sd_bus_call_method(bus, destination, path, interface, member, &error, &reply, NULL);
        if (r < 0)
                fprintf(stderr, "%s.%s: %s\n", interface, member, error.message ?: error.name ?: strerror(-r));
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return r < 0 ? r : 0;
}
