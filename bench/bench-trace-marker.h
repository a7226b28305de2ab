/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* The kernel's own user-space marker as a baseline for the writer: write()
 * of a payload to trace_marker, per call. In a tracefs instance of our own
 * (its own buffer, removed afterwards), so the host's global trace buffer
 * is left alone. tracefs is found in $UEB_BENCH_TRACEFS (run-bench.sh
 * mounts one when none is) or the first tracefs in /proc/mounts. */

#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench-util.h"

struct bench_trace_marker_result {
        bool available;
        double ns_per_call;
        unsigned long long written, failed;
        char why[1400];                 /* when not available */
};

static inline bool bench_tracefs_find(char *path, size_t size) {
        const char *env = getenv("UEB_BENCH_TRACEFS");
        struct mntent *m;
        FILE *f;
        bool found = false;

        if (env && *env) {
                snprintf(path, size, "%s", env);
                return true;
        }
        f = setmntent("/proc/mounts", "re");
        if (!f)
                return false;
        while (!found && (m = getmntent(f)))
                if (strcmp(m->mnt_type, "tracefs") == 0) {
                        snprintf(path, size, "%s", m->mnt_dir);
                        found = true;
                }
        endmntent(f);
        return found;
}

/* Opens trace_marker in a new tracefs instance (its path in @instance):
 * the fd, or -1 with @res->why set. */
static inline int bench_trace_marker_open(struct bench_trace_marker_result *res, char *instance, size_t size) {
        char tracefs[1024], marker[1200];
        int fd;

        if (!bench_tracefs_find(tracefs, sizeof(tracefs))) {
                snprintf(res->why, sizeof(res->why), "no tracefs mounted");
                return -1;
        }
        snprintf(instance, size, "%s/instances/uebroker-bench-%d", tracefs, (int) getpid());
        if (mkdir(instance, 0700) < 0) {
                snprintf(res->why, sizeof(res->why), "cannot create the tracefs instance %s: %s", instance,
                         strerror(errno));
                return -1;
        }
        snprintf(marker, sizeof(marker), "%s/trace_marker", instance);
        fd = open(marker, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                snprintf(res->why, sizeof(res->why), "%s is not writable: %s", marker, strerror(errno));
                (void) rmdir(instance);
                return -1;
        }
        return fd;
}

/* Closes @fd and removes its @instance. */
static inline void bench_trace_marker_close(int fd, const char *instance) {
        close(fd);
        (void) rmdir(instance);
}

/* @n writes of @len bytes from @payload. */
static inline struct bench_trace_marker_result bench_trace_marker_run(const void *payload, size_t len,
                                                                      unsigned long long n) {
        struct bench_trace_marker_result res = { 0 };
        char instance[1100];
        uint64_t t0;
        int fd;

        fd = bench_trace_marker_open(&res, instance, sizeof(instance));
        if (fd < 0)
                return res;
        /* Warm up; a marker that refuses writes here is not measured. */
        for (unsigned i = 0; i < 10000; i++) {
                ssize_t k = write(fd, payload, len);

                if (k != (ssize_t) len) {
                        snprintf(res.why, sizeof(res.why), "trace_marker took %zd of %zu bytes while warming up%s%s",
                                 k, len, k < 0 ? ": " : "", k < 0 ? strerror(errno) : "");
                        bench_trace_marker_close(fd, instance);
                        return res;
                }
        }
        t0 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++) {
                if (write(fd, payload, len) == (ssize_t) len)
                        res.written++;
                else
                        res.failed++;
        }
        res.ns_per_call = (double) (bench_now_ns() - t0) / (double) n;
        res.available = true;
        bench_trace_marker_close(fd, instance);
        return res;
}
