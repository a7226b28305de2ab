/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Delivery through the embedded provider, end to end, closed loop: a
 * writer calls ueb_write() for N events, retrying each on -EAGAIN (so every
 * event is offered until it is taken), the broker reads and forwards them,
 * and a Record consumer checks that every sequence number arrives, in
 * order, and counts what the broker reports lost. The rate is N over the
 * time from the first write to the last event received. Two clients of
 * the same event, one per path:
 *   ring     a client with a 1 MiB ring ($UEBROKER_RING_KIB=1024): the
 *            writer fills the ring, the broker drains it
 *   writev   a client without ($UEBROKER_RING_KIB=0): one sendmsg() per
 *            event on the data socket
 * And the ring path again beside CROWD other recordings open (of an event
 * no one writes): what other users' streams cost every record's delivery.
 * Baseline, in the same run: one hop, the same writer loop with sendmsg()
 * on a SOCK_SEQPACKET socketpair (the send buffer the broker gives a data
 * socket) and a thread receiving and checking each message. Five rounds of
 * each, in turn; the medians are compared, and each path's slowest round
 * against its median. Each round also says what it cost in CPU per event
 * received: the writing thread's, the reading thread's and the broker's
 * (every thread of $UEBROKERD_PID, schedstat), to tell which of them the
 * rate waits for.
 *   bench-embedded-write [EVENTS]   (default 1M; needs a broker: run-bench.sh)
 */
#include <pthread.h>
#include <sched.h>
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
#include "macro.h"
#include "record-stream.h"
#include "time-util.h"
#include "uebroker.h"

#define BENCH_COMMAND "bench_write u64 seq; char[16] pad"
#define CROWD_COMMAND "bench_crowd u32 x"
#define ROUNDS 5
/* Other recordings beside the ring's: the broker's 64 streams less ours
 * and a margin for streams the broker has yet to see closed. */
#define CROWD 48

struct bench_payload {
        uint64_t seq;
        char pad[16];
};

/* A reader that checks the sequence numbers. */
struct seq_reader {
        int fd;
        bool stream;                    /* a Record stream; else one-hop messages */
        unsigned long long expected;    /* events to wait for */
        unsigned long long received, out_of_order, lost, messages;
        uint64_t done_ns;               /* when the last one arrived */
        uint64_t cpu_ns;                /* the reading thread's CPU time */
};

static void seq_check(struct seq_reader *rd, const uint8_t *payload, size_t len) {
        uint64_t seq;

        if (len < sizeof(seq)) {
                rd->out_of_order++;
                return;
        }
        memcpy(&seq, payload, sizeof(seq));
        /* What the broker reported lost went missing before this one. */
        if (seq != rd->received + rd->lost)
                rd->out_of_order++;
        rd->received++;
}

static void *seq_reader_main(void *userdata) {
        struct seq_reader *rd = userdata;
        static __thread uint8_t buf[UEB_RECORD_MESSAGE_MAX];
        uint64_t cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);

        while (rd->received + rd->lost < rd->expected) {
                struct pollfd p = { .fd = rd->fd, .events = POLLIN };
                struct record_view rec;
                size_t offset = 0;
                ssize_t n;

                /* Nothing for 2 s: the rest is not coming. */
                if (poll(&p, 1, 2000) == 0)
                        break;
                n = recv(rd->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        break;
                if (n < 0)
                        continue;
                rd->messages++;
                if (!rd->stream) {
                        seq_check(rd, buf + sizeof(uint32_t), (size_t) n - sizeof(uint32_t));
                        continue;
                }
                while (record_stream_next(buf, (size_t) n, &offset, &rec) > 0) {
                        if (rec.header.flags & UEB_RECORD_FLAG_LOST)
                                rd->lost += rec.header.lost_count;
                        else
                                seq_check(rd, rec.payload, rec.payload_len);
                }
        }
        rd->done_ns = bench_now_ns();
        rd->cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0;
        return NULL;
}

struct round {
        double rate;                    /* events/s delivered */
        unsigned long long retries;     /* EAGAIN, retried */
        struct seq_reader reader;
        /* CPU time per event received: the writing thread's, and the
         * broker's (-1 on the one hop, or when /proc cannot tell). */
        double writer_cpu_ns, broker_cpu_ns;
        /* Other recordings run_beside_crowd() could not open: the round
         * did not measure what it says, and fails the run. */
        unsigned crowd_missing;
};

static void round_report(const char *what, const struct round *r) {
        double per = r->reader.received ? (double) r->reader.received : 1;

        printf("  %-22s %10.0f events/s, %llu EAGAIN retried; reader: %llu received in %llu messages, %llu out of order, %llu lost\n",
               what, r->rate, r->retries, r->reader.received, r->reader.messages, r->reader.out_of_order,
               r->reader.lost);
        printf("  %-22s CPU per event: writer %.1f ns, reader %.1f ns", "", r->writer_cpu_ns,
               (double) r->reader.cpu_ns / per);
        if (r->broker_cpu_ns >= 0)
                printf(", broker %.1f ns", r->broker_cpu_ns);
        printf("\n");
        if (r->crowd_missing > 0)
                printf("  %-22s %u of the %u other recordings could not be opened\n", "", r->crowd_missing, CROWD);
}

/* The broker's CPU time (every thread), -1 when /proc cannot tell. */
static long long broker_cpu_ns(void) {
        const char *pid = getenv("UEBROKERD_PID");

        return pid && *pid ? bench_cpu_ns(pid) : -1;
}

static struct round run_end_to_end(struct ueb_event *e, int stream, unsigned long long n) {
        struct bench_payload payload = { 0, "benchmark" };
        struct iovec iov = { &payload, sizeof(payload) };
        struct round r = { .reader = { .fd = stream, .stream = true, .expected = n } };
        long long broker0, broker1;
        pthread_t thread;
        uint64_t t0, cpu0;

        broker0 = broker_cpu_ns();
        pthread_create(&thread, NULL, seq_reader_main, &r.reader);
        t0 = bench_now_ns();
        cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (unsigned long long i = 0; i < n; i++) {
                payload.seq = i;
                if (!ueb_enabled(e))
                        continue;
                while (ueb_write(e, &iov, 1) == -EAGAIN) {
                        r.retries++;
                        sched_yield();
                }
        }
        r.writer_cpu_ns = (double) (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0);
        pthread_join(thread, NULL);
        broker1 = broker_cpu_ns();
        r.rate = (double) r.reader.received * 1e9 / (double) (r.reader.done_ns - t0);
        if (r.reader.received > 0) {
                r.writer_cpu_ns /= (double) r.reader.received;
                r.broker_cpu_ns = broker0 >= 0 && broker1 >= 0 ?
                        (double) (broker1 - broker0) / (double) r.reader.received : -1;
        }
        return r;
}

static struct round run_one_hop(int sndbuf, unsigned long long n) {
        struct bench_payload payload = { 0, "benchmark" };
        uint32_t write_index = 0;
        struct iovec v[2] = { { &write_index, 4 }, { &payload, sizeof(payload) } };
        struct msghdr mh = { .msg_iov = v, .msg_iovlen = 2 };
        struct round r = { 0 };
        pthread_t thread;
        int fds[2], half = sndbuf / 2;
        uint64_t t0, cpu0;

        if (socketpair_seqpacket(fds, 0) < 0)
                return r;
        /* The kernel doubles what is asked; ask for half of the broker's. */
        (void) setsockopt(fds[1], SOL_SOCKET, SO_SNDBUF, &half, sizeof(half));
        r.reader = (struct seq_reader) { .fd = fds[0], .expected = n };
        r.broker_cpu_ns = -1;
        pthread_create(&thread, NULL, seq_reader_main, &r.reader);
        t0 = bench_now_ns();
        cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
        for (unsigned long long i = 0; i < n; i++) {
                payload.seq = i;
                while (sendmsg(fds[1], &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0 && errno == EAGAIN) {
                        r.retries++;
                        sched_yield();
                }
        }
        r.writer_cpu_ns = (double) (clock_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0) / (double) n;
        pthread_join(thread, NULL);
        r.rate = (double) r.reader.received * 1e9 / (double) (r.reader.done_ns - t0);
        close(fds[0]);
        close(fds[1]);
        return r;
}

/* run_end_to_end() while CROWD other recordings of an event no one writes
 * are open: each record's delivery beside other users' streams. */
static struct round run_beside_crowd(sd_bus *bus, struct ueb_event *e, int stream, unsigned long long n) {
        int others[CROWD];
        struct round r;

        for (unsigned i = 0; i < CROWD; i++)
                others[i] = bench_record_open(bus, "bench_crowd");
        r = run_end_to_end(e, stream, n);
        for (unsigned i = 0; i < CROWD; i++)
                if (others[i] >= 0)
                        close(others[i]);
                else
                        r.crowd_missing++;
        return r;
}

/* The send buffer of a data socket as the broker sets it up: from a
 * Register of our own on @bus. */
static int data_socket_sndbuf(sd_bus *bus) {
        sd_bus_message *reply = NULL;
        int data_fd, status_fd, sndbuf = -1;
        socklen_t len = sizeof(sndbuf);
        uint32_t status_index, write_index;

        if (sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Register", NULL, &reply,
                               "s", BENCH_COMMAND) >= 0 &&
            sd_bus_message_read(reply, "hhuu", &data_fd, &status_fd, &status_index, &write_index) > 0)
                (void) getsockopt(data_fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len);
        sd_bus_message_unref(reply);
        return sndbuf;
}

static int compare_rounds(const void *a, const void *b) {
        double x = ((const struct round *) a)->rate, y = ((const struct round *) b)->rate;

        return x < y ? -1 : x > y;
}

/* A client of its own with @ring_kib of ring (0: none), and the event. */
static int open_client(const char *ring_kib, struct ueb_client **ret_client, struct ueb_event **ret_event) {
        setenv("UEBROKER_RING_KIB", ring_kib, 1);
        if (ueb_open(ret_client) != 1 || ueb_register(*ret_client, BENCH_COMMAND, ret_event) != 1) {
                fprintf(stderr, "no broker: %s (run through bench/run-bench.sh)\n",
                        *ret_client ? ueb_last_error(*ret_client) : "");
                return -1;
        }
        return 0;
}

/* Sorts @r by rate; its median's ns/event, and the slowest round's
 * ns/event over it. */
static double summarize(struct round *r, double *ret_slowest) {
        qsort(r, ROUNDS, sizeof(*r), compare_rounds);
        *ret_slowest = r[ROUNDS / 2].rate / r[0].rate;
        return 1e9 / r[ROUNDS / 2].rate;
}

static bool round_complete(const struct round *r, unsigned long long n) {
        return r->reader.received == n && r->reader.out_of_order == 0 && r->reader.lost == 0 &&
               r->crowd_missing == 0;
}

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 1000000ull), lost_ring = 0;
        struct round ring[ROUNDS], crowd[ROUNDS], e2e[ROUNDS], hop[ROUNDS];
        struct ueb_client *c = NULL, *ring_client = NULL;
        struct ueb_event *e = NULL, *ring_event = NULL, *crowd_event = NULL;
        double ring_ns, crowd_ns, e2e_ns, hop_ns, ring_slowest, crowd_slowest, e2e_slowest, hop_slowest;
        struct ueb_stats stats, ring_stats;
        sd_bus *bus = NULL;
        bool complete = true;
        int sndbuf;

        if (open_client("1024", &ring_client, &ring_event) < 0 || open_client("0", &c, &e) < 0)
                return 1;
        if (ueb_register(c, CROWD_COMMAND, &crowd_event) != 1) {
                fprintf(stderr, "cannot register %s: %s\n", CROWD_COMMAND, ueb_last_error(c));
                return 1;
        }
        if (bus_open_address(getenv("UEBROKER_BUS_ADDRESS"), &bus) < 0) {
                fprintf(stderr, "cannot connect the consumer (UEBROKER_BUS_ADDRESS must be set)\n");
                return 1;
        }
        sndbuf = data_socket_sndbuf(bus);
        if (sndbuf <= 0) {
                fprintf(stderr, "cannot learn the data socket's send buffer\n");
                return 1;
        }

        printf("%llu events of %zu payload bytes a round through a 1 MiB ring and through the data socket (no ring), "
               "writer retrying on EAGAIN, reader checking every sequence number; data socket send buffer %d bytes\n",
               n, sizeof(struct bench_payload), sndbuf);
        for (unsigned i = 0; i < ROUNDS; i++) {
                int stream = bench_record_open(bus, "bench_write");

                if (stream < 0 || !ueb_enabled(e) || !ueb_enabled(ring_event)) {
                        fprintf(stderr, "Record did not enable the event\n");
                        return 1;
                }
                hop[i] = run_one_hop(sndbuf, n);
                round_report("one hop (socketpair)", &hop[i]);
                ring[i] = run_end_to_end(ring_event, stream, n);
                round_report("end to end (ring)", &ring[i]);
                crowd[i] = run_beside_crowd(bus, ring_event, stream, n);
                round_report("end to end (ring), " STRINGIFY(CROWD) " other recordings", &crowd[i]);
                e2e[i] = run_end_to_end(e, stream, n);
                round_report("end to end (writev)", &e2e[i]);
                close(stream);
                lost_ring += ring[i].reader.lost;
                lost_ring += crowd[i].reader.lost;
                complete = complete && round_complete(&ring[i], n) && round_complete(&crowd[i], n) &&
                           round_complete(&e2e[i], n) && round_complete(&hop[i], n);
                /* Let the broker notice the consumer left before the next
                 * Record (at most 64 streams). */
                usleep(100000);
        }
        ring_ns = summarize(ring, &ring_slowest);
        crowd_ns = summarize(crowd, &crowd_slowest);
        e2e_ns = summarize(e2e, &e2e_slowest);
        hop_ns = summarize(hop, &hop_slowest);
        bench_report("end to end (ring), median", ring_ns, "one hop, median", hop_ns, "ns/event");
        bench_report("end to end (ring), median", ring_ns, "end to end (writev), median", e2e_ns, "ns/event");
        bench_report("ring, " STRINGIFY(CROWD) " other recordings, median", crowd_ns, "end to end (ring), median",
                     ring_ns, "ns/event");
        bench_report("end to end (writev), median", e2e_ns, "one hop, median", hop_ns, "ns/event");
        printf("slowest round over the median: ring %.2f, ring beside others %.2f, writev %.2f, one hop %.2f\n",
               ring_slowest, crowd_slowest, e2e_slowest, hop_slowest);
        ueb_event_stats(ring_event, &ring_stats);
        ueb_event_stats(e, &stats);
        printf("ueb_write, ring: %llu written, %llu EAGAIN (all retried), %llu failed; %llu reported lost to the "
               "recorder\n", (unsigned long long) ring_stats.written, (unsigned long long) ring_stats.dropped,
               (unsigned long long) ring_stats.failed, lost_ring);
        printf("ueb_write, writev: %llu written, %llu EAGAIN (all retried), %llu failed\n",
               (unsigned long long) stats.written, (unsigned long long) stats.dropped,
               (unsigned long long) stats.failed);
        printf("every event delivered in order on every path: %s\n", complete ? "yes" : "NO");
        sd_bus_flush_close_unref(bus);
        ueb_close(c);
        ueb_close(ring_client);
        return complete ? 0 : 1;
}
