/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What reading a ring costs the broker, against what writing it cost the
 * writer: for each writer below, SECONDS of writing into a
 * 1 MiB ring of an event a consumer records, the broker's CPU time
 * (utime + stime of /proc/$UEBROKERD_PID/stat) beside the writer's own
 * (its thread's CPU clock), and what the consumer received.
 *   honest    ueb_write() of a 4-byte payload, as fast as it goes
 *   claims    a writer that does not use libuebroker: each lap of the ring
 *             it commits records that claim the most the broker takes
 *             (DATA_PAYLOAD_MAX, a payload it never writes), then rings
 *             the doorbell and waits for the broker to free the ring
 *   rest      the same with records that claim the rest of the ring (what
 *             the broker took before it checked a record's claim)
 *   bells     doorbells only, over an empty ring, as fast as it goes
 * The hostile writers wait for the broker in 20 µs sleeps, so their CPU
 * time is the work of attacking, not of spinning.
 *
 *   bench-ring-spin [SECONDS]      (default 3; needs a broker: run-bench.sh)
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bench-record.h"
#include "bench-util.h"
#include "broker-bus.h"
#include "data-message.h"
#include "ring.h"
#include "uebroker.h"

#define RING_BYTES (1024u * 1024u)

static double thread_cpu_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A hand-made client: Register and OpenRing on its own connection. */
struct raw_client {
        sd_bus *bus;
        int data_fd;
        uint32_t write_index;
        struct ring_header *header;
        uint8_t *data;
        uint32_t size;
};

static int raw_client_open(struct raw_client *c, const char *address, const char *command) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int data_fd, status_fd, ring_fd, r;
        uint32_t size, status_index;
        void *map;

        *c = (struct raw_client) { .data_fd = -1 };
        r = sd_bus_new(&c->bus);
        if (r >= 0)
                r = sd_bus_set_address(c->bus, address);
        if (r >= 0)
                r = sd_bus_set_bus_client(c->bus, true);
        if (r >= 0)
                r = sd_bus_negotiate_fds(c->bus, true);
        if (r >= 0)
                r = sd_bus_start(c->bus);
        if (r < 0) {
                fprintf(stderr, "bus %s: %s\n", address, strerror(-r));
                return r;
        }
        r = sd_bus_call_method(c->bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Register", &error,
                               &reply, "s", command);
        if (r >= 0)
                r = sd_bus_message_read(reply, "hhuu", &data_fd, &status_fd, &status_index, &c->write_index);
        if (r < 0) {
                fprintf(stderr, "Register: %s\n", error.message ?: strerror(-r));
                goto out;
        }
        c->data_fd = dup(data_fd);
        reply = sd_bus_message_unref(reply);
        r = sd_bus_call_method(c->bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "OpenRing", &error,
                               &reply, "u", RING_BYTES);
        if (r >= 0)
                r = sd_bus_message_read(reply, "hu", &ring_fd, &size);
        if (r < 0) {
                fprintf(stderr, "OpenRing: %s\n", error.message ?: strerror(-r));
                goto out;
        }
        map = mmap(NULL, RING_HEADER_SIZE + size, PROT_READ | PROT_WRITE, MAP_SHARED, ring_fd, 0);
        if (map == MAP_FAILED) {
                r = -errno;
                goto out;
        }
        c->header = map;
        c->data = (uint8_t *) map + RING_HEADER_SIZE;
        c->size = size;
out:
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return r < 0 ? r : 0;
}

static void raw_client_close(struct raw_client *c) {
        if (c->header)
                munmap(c->header, RING_HEADER_SIZE + c->size);
        if (c->data_fd >= 0)
                close(c->data_fd);
        sd_bus_flush_close_unref(c->bus);
}

static void doorbell(struct raw_client *c) {
        uint32_t index = DATA_RING_DOORBELL_INDEX;

        (void) send(c->data_fd, &index, sizeof(index), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* Claims a record of @payload_len bytes at the tail without writing its
 * payload: only its header words. */
static void claim(struct raw_client *c, uint64_t *tail, uint32_t need, uint32_t payload_len) {
        uint8_t *p = c->data + (*tail & (c->size - 1));
        struct ring_record rec = { .write_index = c->write_index, .payload_len = payload_len };

        memcpy(p + 4, (uint8_t *) &rec + 4, sizeof(rec) - 4);
        __atomic_store_n((uint32_t *) (void *) p, need | RING_COMMITTED, __ATOMIC_RELEASE);
        *tail += need;
        __atomic_store_n(&c->header->tail, *tail, __ATOMIC_RELEASE);
}

enum attack { HONEST, CLAIMS, REST, BELLS };

struct run {
        enum attack attack;
        double seconds;
        const char *address;
        struct ueb_event *event;        /* HONEST */
        struct raw_client *raw;         /* the others */
        /* Out. */
        double cpu_s;
        unsigned long long written;
};

static void *writer_main(void *userdata) {
        struct run *w = userdata;
        uint64_t end = bench_now_ns() + (uint64_t) (w->seconds * 1e9);
        double cpu0 = thread_cpu_s();
        uint32_t value = 0;
        uint64_t tail = 0;

        while (bench_now_ns() < end) {
                struct raw_client *c = w->raw;

                if (w->attack == HONEST) {
                        struct iovec v = { &value, sizeof(value) };

                        for (unsigned i = 0; i < 1024; i++, value++)
                                if (ueb_write(w->event, &v, 1) == 0)
                                        w->written++;
                        continue;
                }
                if (w->attack == BELLS) {
                        doorbell(c);
                        w->written++;
                        continue;
                }
                /* Wait for the broker to free the ring, then fill it. */
                while (__atomic_load_n(&c->header->head, __ATOMIC_ACQUIRE) != tail && bench_now_ns() < end)
                        nanosleep(&(struct timespec) { 0, 20000 }, NULL);
                if (w->attack == CLAIMS) {
                        const uint32_t need = (uint32_t) RING_ALIGN_UP(sizeof(struct ring_record) + DATA_PAYLOAD_MAX);

                        while ((tail & (c->size - 1)) + need <= c->size && tail + need - c->header->head <= c->size) {
                                claim(c, &tail, need, DATA_PAYLOAD_MAX);
                                w->written++;
                        }
                        /* The end of the data area: a padding. */
                        if (tail & (c->size - 1)) {
                                uint32_t pad = c->size - (uint32_t) (tail & (c->size - 1));

                                __atomic_store_n((uint32_t *) (void *) (c->data + (tail & (c->size - 1))),
                                                 pad | RING_PADDING | RING_COMMITTED, __ATOMIC_RELEASE);
                                tail += pad;
                                __atomic_store_n(&c->header->tail, tail, __ATOMIC_RELEASE);
                        }
                } else {
                        claim(c, &tail, c->size, c->size - (uint32_t) sizeof(struct ring_record));
                        w->written++;
                }
                doorbell(c);
        }
        w->cpu_s = thread_cpu_s() - cpu0;
        return NULL;
}

static const char *const attack_names[] = { "honest", "claims", "rest", "bells" };

static int run_one(enum attack attack, double seconds, const char *address, const char *broker_pid) {
        char name[64], command[96];
        struct ueb_client *client = NULL;
        struct raw_client raw = { .data_fd = -1 };
        struct bench_reader reader = { .fd = -1 };
        struct run w = { .attack = attack, .seconds = seconds, .address = address };
        sd_bus *bus = NULL;
        pthread_t writer, reading;
        long long b0, b1;
        int r;

        snprintf(name, sizeof(name), "ring_spin_%s_%d", attack_names[attack], (int) getpid());
        snprintf(command, sizeof(command), "%s u32 value", name);
        if (attack == HONEST) {
                setenv("UEBROKER_RING_KIB", "1024", 1);
                r = ueb_open(&client);
                if (r >= 0)
                        r = ueb_register(client, command, &w.event);
        } else {
                r = raw_client_open(&raw, address, command);
                w.raw = &raw;
        }
        if (r < 0) {
                fprintf(stderr, "%s: cannot set up the writer: %s\n", attack_names[attack], strerror(-r));
                goto out;
        }
        r = sd_bus_open_system(&bus);
        if (r >= 0)
                reader.fd = bench_record_open(bus, name);
        if (reader.fd < 0) {
                r = -EIO;
                goto out;
        }
        pthread_create(&reading, NULL, bench_reader_main, &reader);
        /* The broker polls rings once a consumer records: let it notice. */
        usleep(200000);

        b0 = bench_cpu_ticks(broker_pid);
        pthread_create(&writer, NULL, writer_main, &w);
        pthread_join(writer, NULL);
        b1 = bench_cpu_ticks(broker_pid);
        usleep(300000);
        reader.stop = 1;
        pthread_join(reading, NULL);

        printf("%-7s writer CPU %6.3f s   broker CPU %6.3f s (%5.1f%% of a core)   broker/writer %6.2f   "
               "written %llu, received %llu, lost %llu\n",
               attack_names[attack], w.cpu_s, (double) (b1 - b0) / (double) sysconf(_SC_CLK_TCK),
               100.0 * (double) (b1 - b0) / (double) sysconf(_SC_CLK_TCK) / seconds,
               w.cpu_s > 0 ? (double) (b1 - b0) / (double) sysconf(_SC_CLK_TCK) / w.cpu_s : 0.0,
               w.written, reader.records, reader.lost);
        r = 0;
out:
        if (reader.fd >= 0)
                close(reader.fd);
        sd_bus_flush_close_unref(bus);
        raw_client_close(&raw);
        ueb_close(client);
        return r;
}

int main(int argc, char *argv[]) {
        const char *address = getenv("UEBROKER_BUS_ADDRESS"), *broker_pid = getenv("UEBROKERD_PID");
        double seconds = argc > 1 ? atof(argv[1]) : 3.0;
        int r = 0;

        if (!address || !broker_pid) {
                fprintf(stderr, "UEBROKER_BUS_ADDRESS and UEBROKERD_PID are not set (run through bench/run-bench.sh)\n");
                return 77;
        }
        printf("A 1 MiB ring of a recorded event, %.1f s per writer; CPU from the thread's clock and "
               "/proc/%s/stat\n", seconds, broker_pid);
        for (enum attack a = HONEST; a <= BELLS; a++)
                if (run_one(a, seconds, address, broker_pid) < 0)
                        r = 1;
        return r;
}
