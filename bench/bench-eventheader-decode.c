/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * EventHeader decoding per event: ours (src/shared/events/eventheader-*.c,
 * what uebctl record prints with --json) vs LinuxTracepoints' decoding
 * library (EventEnumerator + EventFormatter, what perf-decode prints), on
 * the same events: LinuxTracepoints' EventHeaderInterceptorLE64.dat (374
 * events of its test providers, every format) repeated COPIES times.
 *   bench-eventheader-decode OURS THEIRS DAT [COPIES [ROUNDS]]
 * OURS is tests/integration/eventheader-dat-json (one JSON object per
 * event), THEIRS LinuxTracepoints' eventheader-decode-dat-utest (one JSON
 * array), both built by meson with -Dlinuxtracepoints=PATH. Each reads
 * the whole file, decodes every event to JSON in memory and writes it to a
 * file; both are processes, so both figures include a process start (under
 * 1% at the default 100 copies). The median of ROUNDS (default 5) runs
 * each, alternating, of wall and CPU time (user + system) per event.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"

#define DAT_NAME "EventHeaderInterceptorLE64.dat"
#define ROUNDS_MAX 64

extern char **environ;

struct run_cost {
        uint64_t wall_ns, cpu_ns;
};

static uint64_t timeval_ns(struct timeval tv) {
        return (uint64_t) tv.tv_sec * 1000000000ull + (uint64_t) tv.tv_usec * 1000ull;
}

/* Runs @argv with stdout to @out; its wall and CPU time. Exit status
 * @ok_status or fails (their utest exits 1: its expected file is empty). */
static int run_timed(char *const argv[], const char *out, int ok_status, struct run_cost *ret) {
        posix_spawn_file_actions_t fa;
        struct rusage ru;
        uint64_t t0;
        pid_t pid;
        int status, r;

        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        t0 = bench_now_ns();
        r = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        if (r != 0) {
                fprintf(stderr, "bench-eventheader-decode: %s: %s\n", argv[0], strerror(r));
                return -r;
        }
        if (wait4(pid, &status, 0, &ru) < 0)
                return -errno;
        ret->wall_ns = bench_now_ns() - t0;
        ret->cpu_ns = timeval_ns(ru.ru_utime) + timeval_ns(ru.ru_stime);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != ok_status) {
                fprintf(stderr, "bench-eventheader-decode: %s exited with status %d\n", argv[0], status);
                return -EIO;
        }
        return 0;
}

/* The .dat repeated @copies times into @path (its records are
 * length-prefixed: a concatenation is a .dat of all of them). */
static int write_copies(const char *dat, const char *path, unsigned copies) {
        static char buf[1 << 20];
        size_t n;
        FILE *in = fopen(dat, "rbe"), *out;

        if (!in)
                return -errno;
        n = fread(buf, 1, sizeof(buf), in);
        fclose(in);
        if (n == 0 || n == sizeof(buf))
                return -EINVAL;
        out = fopen(path, "wbe");
        if (!out)
                return -errno;
        for (unsigned i = 0; i < copies; i++)
                fwrite(buf, 1, n, out);
        return fclose(out) == 0 ? 0 : -EIO;
}

static unsigned count_lines_with(const char *path, const char *needle) {
        char line[1 << 16];
        unsigned n = 0;
        FILE *f = fopen(path, "re");

        if (!f)
                return 0;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, needle))
                        n++;
        fclose(f);
        return n;
}

int main(int argc, char *argv[]) {
        char dir[] = "/tmp/bench-eventheader-decode.XXXXXX", dat[128], expected[160], ours_out[128], theirs_out[128];
        uint64_t ours_wall[ROUNDS_MAX], ours_cpu[ROUNDS_MAX], theirs_wall[ROUNDS_MAX], theirs_cpu[ROUNDS_MAX];
        unsigned copies = argc > 4 ? (unsigned) strtoul(argv[4], NULL, 10) : 100;
        unsigned rounds = argc > 5 ? (unsigned) strtoul(argv[5], NULL, 10) : 5;
        unsigned events, ours_events, theirs_events;
        FILE *f;
        int r;

        if (argc < 4 || copies == 0 || copies > 120 || rounds == 0 || rounds > ROUNDS_MAX) {
                fprintf(stderr, "usage: %s OURS THEIRS DAT [COPIES (1-120) [ROUNDS (1-%u)]]\n", argv[0], ROUNDS_MAX);
                return 2;
        }
        if (!mkdtemp(dir)) {
                perror("mkdtemp");
                return 1;
        }
        snprintf(dat, sizeof(dat), "%s/" DAT_NAME, dir);
        snprintf(expected, sizeof(expected), "%s/" DAT_NAME ".linux.json.expected", dir);
        snprintf(ours_out, sizeof(ours_out), "%s/ours.jsonl", dir);
        snprintf(theirs_out, sizeof(theirs_out), "%s/" DAT_NAME ".linux.json.actual", dir);
        r = write_copies(argv[3], dat, copies);
        f = fopen(expected, "we");       /* empty: their utest writes its JSON, then differs */
        if (r < 0 || !f) {
                fprintf(stderr, "bench-eventheader-decode: cannot write %s: %s\n", dat, strerror(r < 0 ? -r : errno));
                return 1;
        }
        fclose(f);

        for (unsigned i = 0; i < rounds; i++) {
                char *ours_argv[] = { argv[1], dat, NULL }, *theirs_argv[] = { argv[2], dir, NULL };
                struct run_cost ours, theirs;

                if (run_timed(ours_argv, ours_out, 0, &ours) < 0 ||
                    run_timed(theirs_argv, "/dev/null", 1, &theirs) < 0)
                        return 1;
                ours_wall[i] = ours.wall_ns;
                ours_cpu[i] = ours.cpu_ns;
                theirs_wall[i] = theirs.wall_ns;
                theirs_cpu[i] = theirs.cpu_ns;
        }
        /* Both decoded every event: ours writes a line per event, theirs
         * an object per event, each starting with "n" on its own line. */
        ours_events = count_lines_with(ours_out, "\"eventheader\":");
        theirs_events = count_lines_with(theirs_out, "{ \"n\": ");
        events = 374u * copies;
        printf("%u events (%u copies of %s), median of %u runs each; decoded: ours %u, theirs %u\n", events, copies,
               DAT_NAME, rounds, ours_events, theirs_events);
        if (ours_events != events || theirs_events != events) {
                fprintf(stderr, "bench-eventheader-decode: not every event was decoded\n");
                return 1;
        }
        bench_report("EventHeader to JSON, ours (wall)", (double) bench_percentile(ours_wall, rounds, 50) / events, "LinuxTracepoints' (wall)",
                     (double) bench_percentile(theirs_wall, rounds, 50) / events, "ns/event");
        bench_report("EventHeader to JSON, ours (CPU)", (double) bench_percentile(ours_cpu, rounds, 50) / events, "LinuxTracepoints' (CPU)",
                     (double) bench_percentile(theirs_cpu, rounds, 50) / events, "ns/event");
        unlink(dat);
        unlink(expected);
        unlink(ours_out);
        unlink(theirs_out);
        rmdir(dir);
        return 0;
}
