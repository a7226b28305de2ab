/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The broker's footprint per client: its VmRSS and open descriptors at 1,
 * 1000 and N clients, each client its own bus connection holding one
 * registration and asking for a 64 KiB ring as libuebroker does (OpenRing;
 * the broker grants what its ring memory allows; helper processes open
 * them, many connections each), then
 * the time from when they all leave (SIGKILL of the helpers) until the
 * broker is idle: ListEvents shows no registration of the bench event any
 * more AND the broker's CPU time (utime+stime, /proc/PID/stat) does not
 * advance over 100 ms. Each figure beside the 1-client figure, or beside
 * the bound.
 * With $DBUS_DAEMON_PID set, it also says how much CPU the broker and the
 * bus daemon used while the clients left, to tell which one was busy.
 *   bench-clients [N]   (default 5000; needs $UEBROKER_BUS_ADDRESS and
 *   $UEBROKERD_PID: run bench/run-bench.sh; the bus and the broker must
 *   admit N connections of the caller's uid)
 */
#include <dirent.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench-util.h"
#include "broker-bus.h"
#include "bus-util.h"

#define CLIENT_EVENT "bench_clients"
#define CLIENT_COMMAND CLIENT_EVENT " u32 a"
#define CONNECTIONS_PER_HELPER 625u
#define HELPERS_MAX 64u
#define QUIET_WINDOW_USEC 100000u
#define LEAVE_TIMEOUT_NS (60ull * 1000000000ull)

/* The bounds bench/README.md states for many clients. */
#define BOUND_RSS_MIB 64.0
#define BOUND_IDLE_MS 1000.0

static pid_t helpers[HELPERS_MAX];
static int helper_pipes[HELPERS_MAX];
static unsigned n_helpers;

/* OpenRing as libuebroker asks: 1 granted, 0 refused (QuotaExceeded). */
static int open_ring(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "OpenRing", NULL, &reply,
                               "u", 65536u);
        sd_bus_message_unref(reply);    /* the client's copy of the ring goes; the broker's mapping stays */
        return r >= 0;
}

/* Opens @n connections, each registering CLIENT_COMMAND and asking for a
 * ring; writes how many registered and got rings to @fd and waits to be
 * killed. */
static void __attribute__((noreturn)) helper_main(const char *address, unsigned n, int fd) {
        unsigned ok[2] = { 0, 0 };

        bench_raise_fd_limit();
        for (unsigned i = 0; i < n; i++) {
                sd_bus *bus = NULL;

                if (bus_open_address(address, &bus) < 0) {
                        fprintf(stderr, "helper: cannot open connection %u\n", i);
                        break;
                }
                if (bench_call(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Register",
                               CLIENT_COMMAND) < 0)
                        break;
                ok[0]++;        /* the connection stays open, holding the registration */
                ok[1] += (unsigned) open_ring(bus);
        }
        if (write(fd, &ok, sizeof(ok)) != sizeof(ok))
                _exit(1);
        for (;;)
                pause();
}

static int spawn_helper(const char *address, unsigned n) {
        int p[2];
        pid_t pid;

        if (n_helpers >= HELPERS_MAX || pipe(p) < 0)
                return -1;
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -1;
        if (pid == 0) {
                close(p[0]);
                helper_main(address, n, p[1]);
        }
        close(p[1]);
        helpers[n_helpers] = pid;
        helper_pipes[n_helpers++] = p[0];
        return 0;
}

static unsigned rings_granted;

/* Helpers for @n more clients, in parallel; the number that registered
 * (those granted a ring are added to rings_granted). */
static unsigned add_clients(const char *address, unsigned n) {
        unsigned first = n_helpers, total = 0;

        while (n > 0) {
                unsigned k = n < CONNECTIONS_PER_HELPER ? n : CONNECTIONS_PER_HELPER;

                if (spawn_helper(address, k) < 0)
                        break;
                n -= k;
        }
        for (unsigned i = first; i < n_helpers; i++) {
                unsigned ok[2] = { 0, 0 };

                if (read(helper_pipes[i], ok, sizeof(ok)) == sizeof(ok)) {
                        total += ok[0];
                        rings_granted += ok[1];
                }
        }
        return total;
}

static double rss_mib(pid_t pid) {
        char path[64], line[256];
        double kib = -1;
        FILE *f;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %lf kB", &kib) == 1)
                        break;
        fclose(f);
        return kib / 1024.0;
}

static double open_fds(pid_t pid) {
        char path[64];
        struct dirent *de;
        unsigned n = 0;
        DIR *d;

        snprintf(path, sizeof(path), "/proc/%d/fd", (int) pid);
        d = opendir(path);
        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (de->d_name[0] != '.')
                        n++;
        closedir(d);
        return n;
}

/* utime + stime of @pid, in clock ticks (0 when unknown). */
static unsigned long long cpu_ticks(pid_t pid) {
        char id[32];
        long long t;

        snprintf(id, sizeof(id), "%d", (int) pid);
        t = bench_cpu_ticks(id);
        return t < 0 ? 0 : (unsigned long long) t;
}

/* Waits until @pid's CPU time stands still over QUIET_WINDOW_USEC; returns
 * when that window began (or now, after 60 s of windows with CPU use). */
static uint64_t wait_cpu_quiet(pid_t pid) {
        for (unsigned i = 0; i < 600; i++) {
                unsigned long long before = cpu_ticks(pid);
                uint64_t t = bench_now_ns();

                usleep(QUIET_WINDOW_USEC);
                if (cpu_ticks(pid) == before)
                        return t;
        }
        fprintf(stderr, "warning: pid %d did not stay idle for 100 ms within 60 s\n", (int) pid);
        return bench_now_ns();
}

/* Registrations of CLIENT_EVENT as ListEvents shows them, or -1. */
static long registrations(sd_bus *bus) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        const char *name, *fields;
        uint32_t owner, n_registrations;
        int listened, r;
        long found = 0;

        r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "ListEvents", &error,
                               &reply, NULL);
        if (r < 0) {
                fprintf(stderr, "ListEvents: %s\n", error.message ?: error.name ?: strerror(-r));
                sd_bus_error_free(&error);
                return -1;
        }
        r = sd_bus_message_enter_container(reply, 'a', "(ssuub)");
        while (r >= 0 && (r = sd_bus_message_read(reply, "(ssuub)", &name, &fields, &owner, &n_registrations,
                                                  &listened)) > 0)
                if (strcmp(name, CLIENT_EVENT) == 0)
                        found = n_registrations;
        sd_bus_message_unref(reply);
        return r < 0 ? -1 : found;
}

int main(int argc, char *argv[]) {
        unsigned max = (unsigned) bench_count(argc, argv, 5000ull);
        unsigned stages[] = { 1, 1000, max }, have = 0;
        const char *address = getenv("UEBROKER_BUS_ADDRESS"), *pid_text = getenv("UEBROKERD_PID");
        const char *bus_pid_text = getenv("DBUS_DAEMON_PID");
        pid_t bus_daemon = bus_pid_text ? (pid_t) atoi(bus_pid_text) : 0;
        unsigned long long broker_ticks, bus_ticks = 0;
        struct passwd *pw = getpwuid(geteuid());
        const char *caller = pw ? pw->pw_name : "uid ?";
        double rss_one = 0, fds_one = 0, rss_max = 0;
        uint64_t t_leave, t_zero, t_idle;
        sd_bus *bus = NULL;
        pid_t broker;
        char name[128];
        long left;

        if (!address || !pid_text || (broker = (pid_t) atoi(pid_text)) <= 0) {
                fprintf(stderr, "set UEBROKER_BUS_ADDRESS and UEBROKERD_PID (run bench/run-bench.sh)\n");
                return 1;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        bench_raise_fd_limit();
        if (bus_open_address(address, &bus) < 0) {
                fprintf(stderr, "cannot connect to %s\n", address);
                return 1;
        }

        printf("broker footprint, each client (%s) its own connection holding one registration and asking for a "
               "ring:\n", caller);
        for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
                double rss, fds;
                long regs;

                if (stages[i] <= have)
                        continue;
                have += add_clients(address, stages[i] - have);
                (void) wait_cpu_quiet(broker);
                rss = rss_mib(broker);
                fds = open_fds(broker);
                regs = registrations(bus);
                if (regs != (long) have || have != stages[i])
                        fprintf(stderr, "warning: %u of %u clients registered, ListEvents shows %ld\n", have,
                                stages[i], regs);
                if (stages[i] == 1) {
                        rss_one = rss;
                        fds_one = fds;
                        printf("%-36s %10.2f %-8s\n%-36s %10.0f %-8s\n", "broker VmRSS, 1 client", rss, "MiB",
                               "broker open fds, 1 client", fds, "fds");
                        continue;
                }
                snprintf(name, sizeof(name), "broker VmRSS, %u clients (%s)", have, caller);
                bench_report(name, rss, "broker VmRSS, 1 client", rss_one, "MiB");
                snprintf(name, sizeof(name), "broker open fds, %u clients (%s)", have, caller);
                bench_report(name, fds, "broker open fds, 1 client", fds_one, "fds");
                printf("rings granted to %u clients: %u (the rest were refused: ring memory used up)\n", have,
                       rings_granted);
                rss_max = rss;
        }
        snprintf(name, sizeof(name), "broker VmRSS, %u clients (%s)", have, caller);
        bench_report(name, rss_max, "bound", BOUND_RSS_MIB, "MiB");

        /* All leave at once. */
        broker_ticks = cpu_ticks(broker);
        if (bus_daemon > 0)
                bus_ticks = cpu_ticks(bus_daemon);
        t_leave = bench_now_ns();
        for (unsigned i = 0; i < n_helpers; i++)
                kill(helpers[i], SIGKILL);
        for (;;) {
                left = registrations(bus);
                if (left <= 0 || bench_now_ns() - t_leave > LEAVE_TIMEOUT_NS)
                        break;
                usleep(2000);
        }
        t_zero = bench_now_ns();
        t_idle = wait_cpu_quiet(broker);
        broker_ticks = cpu_ticks(broker) - broker_ticks;
        if (bus_daemon > 0)
                bus_ticks = cpu_ticks(bus_daemon) - bus_ticks;
        for (unsigned i = 0; i < n_helpers; i++) {
                waitpid(helpers[i], NULL, 0);
                close(helper_pipes[i]);
        }
        if (left != 0)
                fprintf(stderr, "warning: ListEvents still shows %ld registrations\n", left);
        printf("after all %u clients (%s) left (SIGKILL of their processes):\n", have, caller);
        snprintf(name, sizeof(name), "ListEvents at 0, %u left (%s)", have, caller);
        bench_report(name, (double) (t_zero - t_leave) / 1e6, "bound (idle)", BOUND_IDLE_MS, "ms");
        snprintf(name, sizeof(name), "broker idle, %u left (%s)", have, caller);
        bench_report(name, (double) (t_idle - t_leave) / 1e6, "bound (idle)", BOUND_IDLE_MS, "ms");
        printf("CPU time used from the leave until idle: broker %.0f ms", broker_ticks * 1000.0 / sysconf(_SC_CLK_TCK));
        if (bus_daemon > 0)
                printf(", dbus-daemon %.0f ms", bus_ticks * 1000.0 / sysconf(_SC_CLK_TCK));
        printf("\n");
        printf("%-36s %10.2f %-8s\n%-36s %10.0f %-8s\n", "broker VmRSS after they left", rss_mib(broker), "MiB",
               "broker open fds after they left", open_fds(broker), "fds");
        sd_bus_flush_close_unref(bus);
        return 0;
}
