/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-perf: what perf sees of a user_events event, for the vm tier.
 *
 *   vm-perf ID SECONDS COUNT
 *
 * Opens a perf event on tracepoint ID (events/user_events/NAME/id) for
 * every CPU, PERF_SAMPLE_RAW | PERF_SAMPLE_TID, and prints each sample as
 * it arrives, flushed: "sample pid P tid T raw HEX", HEX being the raw
 * record after the 8-byte common fields (the payload as written). Prints
 * "open" once listening. Exits 0 after COUNT samples, 1 after SECONDS
 * without them, 2 if the event cannot be opened.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 64
#define RING_PAGES 8    /* data pages per CPU, a power of two */

struct ring {
        int fd;
        struct perf_event_mmap_page *meta;
        uint8_t *data;
        size_t size;
};

static void print_sample(const uint8_t *rec, size_t len) {
        /* PERF_SAMPLE_TID: u32 pid, u32 tid; PERF_SAMPLE_RAW: u32 size, data */
        uint32_t pid, tid, raw_size;

        if (len < 12)
                return;
        memcpy(&pid, rec, 4);
        memcpy(&tid, rec + 4, 4);
        memcpy(&raw_size, rec + 8, 4);
        if (raw_size > len - 12 || raw_size < 8)
                return;
        printf("sample pid %u tid %u raw ", pid, tid);
        for (uint32_t i = 8; i < raw_size; i++)
                printf("%02x", rec[12 + i]);
        printf("\n");
        fflush(stdout);
}

/* Reads what the ring holds; returns the samples seen. */
static int drain(struct ring *r) {
        uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
        uint64_t tail = r->meta->data_tail;
        int samples = 0;

        while (tail < head) {
                struct perf_event_header h;
                uint8_t buf[UINT16_MAX + 1];

                for (size_t i = 0; i < sizeof(h); i++)
                        ((uint8_t *) &h)[i] = r->data[(tail + i) % r->size];
                if (h.size < sizeof(h))
                        break;
                for (size_t i = 0; i < h.size; i++)
                        buf[i] = r->data[(tail + i) % r->size];
                if (h.type == PERF_RECORD_SAMPLE) {
                        print_sample(buf + sizeof(h), h.size - sizeof(h));
                        samples++;
                }
                tail += h.size;
        }
        __atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
        return samples;
}

int main(int argc, char *argv[]) {
        struct ring rings[MAX_CPUS];
        struct pollfd pfds[MAX_CPUS];
        long page = sysconf(_SC_PAGESIZE), n_cpus = sysconf(_SC_NPROCESSORS_ONLN);
        int n = 0, want, seen = 0;
        struct timespec start, now;

        if (argc != 4) {
                fprintf(stderr, "usage: vm-perf ID SECONDS COUNT\n");
                return 2;
        }
        want = atoi(argv[3]);
        if (n_cpus > MAX_CPUS)
                n_cpus = MAX_CPUS;
        for (long cpu = 0; cpu < n_cpus; cpu++) {
                struct perf_event_attr attr = {
                        .type = PERF_TYPE_TRACEPOINT,
                        .size = sizeof(attr),
                        .config = strtoull(argv[1], NULL, 10),
                        .sample_period = 1,
                        .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_RAW,
                        .wakeup_events = 1,
                };
                int fd = (int) syscall(SYS_perf_event_open, &attr, -1, (int) cpu, -1, PERF_FLAG_FD_CLOEXEC);
                void *m;

                if (fd < 0) {
                        fprintf(stderr, "vm-perf: perf_event_open(tracepoint %s, cpu %ld): %s\n", argv[1], cpu,
                                strerror(errno));
                        return 2;
                }
                m = mmap(NULL, (size_t) page * (RING_PAGES + 1), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (m == MAP_FAILED) {
                        fprintf(stderr, "vm-perf: mmap: %s\n", strerror(errno));
                        return 2;
                }
                rings[n] = (struct ring) {
                        .fd = fd, .meta = m, .data = (uint8_t *) m + page, .size = (size_t) page * RING_PAGES,
                };
                pfds[n] = (struct pollfd) { .fd = fd, .events = POLLIN };
                n++;
        }
        printf("open\n");
        fflush(stdout);

        clock_gettime(CLOCK_MONOTONIC, &start);
        while (seen < want) {
                clock_gettime(CLOCK_MONOTONIC, &now);
                if (now.tv_sec - start.tv_sec >= atoi(argv[2]))
                        return 1;
                (void) poll(pfds, (nfds_t) n, 100);
                for (int i = 0; i < n; i++)
                        seen += drain(&rings[i]);
        }
        return 0;
}
