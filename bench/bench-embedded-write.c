/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * An enabled write through the embedded provider: ueb_write() with a
 * Record consumer attached (the broker reads, validates and forwards each
 * record) vs the direct path, the same writes with sendmsg() on a
 * SOCK_SEQPACKET socketpair read by a thread. Events/s, ns/event, drops.
 *   bench-embedded-write [EVENTS]   (default 1M; needs a broker: use the
 *   harness, see bench/README.md)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "broker-bus.h"
#include "bus-util.h"
#include "bench-record.h"
#include "bench-util.h"
#include "fd-util.h"
#include "uebroker.h"

#define BENCH_COMMAND "bench_write u64 seq; char[16] pad"

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 1000000ull), direct_drops = 0;
        struct { uint64_t seq; char pad[16]; } payload = { 0, "benchmark" };
        struct iovec iov = { &payload, sizeof(payload) };
        struct bench_reader consumer = {}, direct = {};
        pthread_t consumer_thread, direct_thread;
        struct ueb_client *c = NULL;
        struct ueb_event *e = NULL;
        struct ueb_stats stats;
        sd_bus *bus = NULL;
        uint64_t t0, t1, t2;
        int fds[2];

        if (ueb_open(&c) != 1 || ueb_register(c, BENCH_COMMAND, &e) != 1) {
                fprintf(stderr, "no broker: %s (run through tests/integration/broker-harness.sh)\n",
                        c ? ueb_last_error(c) : "");
                return 1;
        }
        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        consumer.fd = bench_record_open(bus, "bench_write");
        if (consumer.fd < 0 || !ueb_enabled(e)) {
                fprintf(stderr, "Record did not enable the event\n");
                return 1;
        }
        pthread_create(&consumer_thread, NULL, bench_reader_main, &consumer);

        t0 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++) {
                payload.seq = i;
                if (ueb_enabled(e))
                        (void) ueb_write(e, &iov, 1);
        }
        t1 = bench_now_ns();

        /* The direct path: the same record, straight into a socket. */
        if (socketpair_seqpacket(fds) < 0)
                return 1;
        direct.fd = fds[0];
        pthread_create(&direct_thread, NULL, bench_reader_main, &direct);
        t2 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++) {
                uint32_t write_index = 0;
                struct iovec v[2] = { { &write_index, 4 }, { &payload, sizeof(payload) } };
                struct msghdr mh = { .msg_iov = v, .msg_iovlen = 2 };

                payload.seq = i;
                if (sendmsg(fds[1], &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
                        direct_drops++;
        }
        uint64_t t3 = bench_now_ns();

        /* Let both readers drain what is in flight, then count. */
        sleep(1);
        consumer.stop = direct.stop = 1;
        close(consumer.fd);
        pthread_join(consumer_thread, NULL);
        close(fds[1]);
        pthread_join(direct_thread, NULL);
        close(fds[0]);

        ueb_event_stats(e, &stats);
        printf("%llu events of %zu payload bytes\n", n, sizeof(payload));
        bench_report("ueb_write (embedded)", (double) n * 1e9 / (double) (t1 - t0), "sendmsg socketpair",
                     (double) n * 1e9 / (double) (t3 - t2), "events/s");
        bench_report("ueb_write (embedded)", (double) (t1 - t0) / (double) n, "sendmsg socketpair",
                     (double) (t3 - t2) / (double) n, "ns/event");
        printf("ueb_write: %llu written, %llu dropped (broker busy), %llu failed; consumer received %llu\n",
               (unsigned long long) stats.written, (unsigned long long) stats.dropped,
               (unsigned long long) stats.failed, consumer.messages);
        printf("direct:    %llu written, %llu dropped (reader busy); reader received %llu\n", n - direct_drops,
               direct_drops, direct.messages);
        sd_bus_flush_close_unref(bus);
        ueb_close(c);
        return 0;
}
