/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A program of the kernel interface through uebroker-run vs libuebroker, in
 * one run, on the embedded provider: the same event, enabled by a Record
 * consumer, written
 *   - as a user_events program writes it: open("/sys/kernel/tracing/
 *     user_events_data"), DIAG_IOCSREG with an enable word of its own, then
 *     writev({&write_index, 4}, payload) while the word's bit is set: the
 *     preload library answered the open and the ioctl, the writes go to the
 *     broker's data socket unchanged;
 *   - with ueb_write() on a libuebroker client without a ring
 *     (UEBROKER_RING_KIB=0: the same data socket path), and with one (the
 *     default ring).
 * Paced at 1k, 20k, 100k, 500k and 1M events/s (each write due at its
 * time), the three in turn (each rate starting with another), a refused write (EAGAIN: the socket is
 * full) counted and not retried; per-call cost in ns, mean and p99.
 *   uebroker-run bench-preload-write [SECONDS_PER_RATE]   (run-bench.sh)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "bus-util.h"
#include "uebroker.h"
#include "user-events-abi.h"

#define BENCH_EVENT "bench_preload"
#define BENCH_COMMAND BENCH_EVENT " u64 seq; char[16] pad"

struct bench_payload {
        uint64_t seq;
        char pad[16];
};

/* The program's side, as libtracepoint does it. */
struct kernel_style {
        int fd;
        uint32_t write_index;
        uint32_t enabled;               /* the enable word, bit 0 */
};

static bool preloaded(void) {
        char line[512];
        bool found = false;
        FILE *maps = fopen("/proc/self/maps", "re");

        if (!maps)
                return false;
        while (!found && fgets(line, sizeof(line), maps))
                found = strstr(line, "libuebroker-preload.so") != NULL;
        fclose(maps);
        return found;
}

static int kernel_style_open(struct kernel_style *k) {
        struct upstream_user_reg reg = {
                .size = sizeof(reg),
                .enable_bit = 0,
                .enable_size = sizeof(k->enabled),
                .enable_addr = (uintptr_t) &k->enabled,
                .name_args = (uintptr_t) BENCH_COMMAND,
        };

        k->fd = open("/sys/kernel/tracing/user_events_data", O_WRONLY | O_CLOEXEC);
        if (k->fd < 0)
                return -errno;
        if (ioctl(k->fd, UPSTREAM_DIAG_IOCSREG, &reg) < 0)
                return -errno;
        k->write_index = reg.write_index;
        return 0;
}

static struct ueb_event *client_open(const char *ring_kib, struct ueb_client **ret) {
        struct ueb_event *ev = NULL;

        setenv("UEBROKER_RING_KIB", ring_kib, 1);
        if (ueb_open(ret) < 0 || ueb_register(*ret, BENCH_COMMAND, &ev) < 0) {
                fprintf(stderr, "libuebroker: cannot register %s\n", BENCH_COMMAND);
                exit(1);
        }
        return ev;
}

enum path { PATH_PRELOAD, PATH_UEB_SOCKET, PATH_UEB_RING, _PATH_MAX };

static const char *const path_names[_PATH_MAX] = {
        [PATH_PRELOAD] = "uebroker-run writev",
        [PATH_UEB_SOCKET] = "ueb_write, no ring",
        [PATH_UEB_RING] = "ueb_write, ring",
};

struct paced {
        unsigned long long written, refused;
        double mean_ns, p99_ns;
};

static struct paced run_paced(enum path path, struct kernel_style *k, struct ueb_event *const *events,
                              unsigned long long rate, double seconds) {
        unsigned long long n = (unsigned long long) ((double) rate * seconds);
        uint64_t *cost = calloc(n, sizeof(*cost)), total = 0, start;
        struct bench_payload payload = { 0, "paced" };
        struct paced res = { 0 };

        if (!cost)
                exit(1);
        start = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++) {
                uint64_t t0;
                int r;

                while (bench_now_ns() < start + i * 1000000000ull / rate)
                        ;
                payload.seq = i;
                t0 = bench_now_ns();
                if (path == PATH_PRELOAD) {
                        struct iovec iov[2] = {
                                { &k->write_index, sizeof(k->write_index) },
                                { &payload, sizeof(payload) },
                        };

                        r = __atomic_load_n(&k->enabled, __ATOMIC_RELAXED) & 1u ?
                                (writev(k->fd, iov, 2) < 0 ? -errno : 0) : -ENODATA;
                } else {
                        struct iovec iov = { &payload, sizeof(payload) };

                        r = ueb_write(events[path], &iov, 1);
                }
                cost[i] = bench_now_ns() - t0;
                total += cost[i];
                if (r == 0)
                        res.written++;
                else
                        res.refused++;
        }
        res.mean_ns = n ? (double) total / (double) n : 0;
        res.p99_ns = bench_percentile_us(cost, n, 99.0) * 1000.0;
        free(cost);
        return res;
}

int main(int argc, char *argv[]) {
        static const unsigned long long rates[] = { 1000, 20000, 100000, 500000, 1000000 };
        double seconds = argc > 1 ? atof(argv[1]) : 0.5;
        struct ueb_event *events[_PATH_MAX] = {};
        struct ueb_client *socket_client = NULL, *ring_client = NULL;
        struct bench_reader consumer = { 0 };
        struct kernel_style k = { .fd = -1 };
        pthread_t consumer_thread;
        sd_bus *bus = NULL;
        int r;

        if (!preloaded()) {
                fprintf(stderr, "bench-preload-write: run it through uebroker-run (run-bench.sh does)\n");
                return 2;
        }
        if (seconds <= 0 || seconds > 60) {
                fprintf(stderr, "usage: uebroker-run %s [SECONDS_PER_RATE]\n", argv[0]);
                return 2;
        }
        r = kernel_style_open(&k);
        if (r < 0) {
                fprintf(stderr, "open/DIAG_IOCSREG through the preload library: %s\n", strerror(-r));
                return 1;
        }
        events[PATH_UEB_SOCKET] = client_open("0", &socket_client);
        events[PATH_UEB_RING] = client_open("1024", &ring_client);

        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        consumer.fd = bench_record_open(bus, BENCH_EVENT);
        if (consumer.fd < 0)
                return 1;
        pthread_create(&consumer_thread, NULL, bench_reader_main, &consumer);
        /* The preload library follows the status byte every 20 ms. */
        for (int i = 0; i < 100 && !(__atomic_load_n(&k.enabled, __ATOMIC_RELAXED) & 1u); i++)
                usleep(10000);
        if (!(k.enabled & 1u) || !ueb_enabled(events[PATH_UEB_SOCKET])) {
                fprintf(stderr, "Record did not enable the event on every path\n");
                return 1;
        }

        if (!(fcntl(k.fd, F_GETFL) & O_NONBLOCK))
                printf("note: the data file is blocking: a full socket blocks the program's writev()\n");
        printf("%zu payload bytes per write, paced, %.2f s per rate and path, a Record consumer attached; "
               "a refused write (socket or ring full) is counted, not retried\n", sizeof(struct bench_payload),
               seconds);
        for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
                struct paced res[_PATH_MAX];

                /* Unmeasured first: the broker settles to the new rate.
                 * Then each rate starts with another path. */
                (void) run_paced(PATH_UEB_SOCKET, &k, events, rates[i], seconds / 4);
                for (unsigned j = 0; j < _PATH_MAX; j++) {
                        enum path p = (enum path) ((i + j) % _PATH_MAX);

                        res[p] = run_paced(p, &k, events, rates[i], seconds);
                }
                for (enum path p = 0; p < _PATH_MAX; p++)
                        printf("%8llu/s %-22s mean %9.0f ns  p99 %9.0f ns  written %llu refused %llu\n", rates[i],
                               path_names[p], res[p].mean_ns, res[p].p99_ns, res[p].written, res[p].refused);
                bench_report("  uebroker-run writev, mean", res[PATH_PRELOAD].mean_ns, "ueb_write no ring, mean",
                             res[PATH_UEB_SOCKET].mean_ns, "ns/call");
                bench_report("  uebroker-run writev, p99", res[PATH_PRELOAD].p99_ns, "ueb_write no ring, p99",
                             res[PATH_UEB_SOCKET].p99_ns, "ns/call");
        }

        consumer.stop = 1;
        pthread_join(consumer_thread, NULL);
        printf("consumer: %llu records, %llu lost (slow consumer)\n", consumer.records, consumer.lost);
        ueb_close(ring_client);
        ueb_close(socket_client);
        sd_bus_flush_close_unref(bus);
        close(k.fd);
        return 0;
}
