/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The client's shared-memory ring (ring.h, OpenRing in DESIGN.md): asked
 * for once a session has a data socket, mapped when the broker grants it,
 * dropped with the session. While it is there ueb_write() puts records
 * into it without a system call, and rings the data socket only when the
 * broker sleeps. A broker that refuses (another provider, rings' memory
 * used up, an older broker without OpenRing) leaves the socket path as it
 * was. Like the other session functions these run with c->lock held.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "broker-bus.h"
#include "client-internal.h"
#include "time-util.h"
#include "data-message.h"
#include "fd-util.h"
#include "macro.h"

/* The thread id, cached per thread; a fork() makes every cache stale (the
 * child's thread has another id). */
static unsigned fork_generation = 1;
static __thread unsigned tid_generation;
static __thread uint32_t tid_cached;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void on_fork_child(void) {
        __atomic_fetch_add(&fork_generation, 1, __ATOMIC_RELAXED);
}

static void atfork_register(void) {
        (void) pthread_atfork(NULL, NULL, on_fork_child);
}

void ueb_ring_init_once(void) {
        (void) pthread_once(&atfork_once, atfork_register);
}

uint32_t ueb_thread_id(void) {
        unsigned generation = __atomic_load_n(&fork_generation, __ATOMIC_RELAXED);

        if (tid_generation != generation) {
                tid_cached = (uint32_t) gettid();
                tid_generation = generation;
        }
        return tid_cached;
}

void ueb_ring_doorbell(struct ueb_client *c) {
        const uint32_t index = DATA_RING_DOORBELL_INDEX;

        /* A full socket wakes the broker by itself. */
        (void) send(c->data_fd, &index, sizeof(index), MSG_DONTWAIT | MSG_NOSIGNAL);
}

/* One record into the ring, stamped with the thread and CLOCK_MONOTONIC;
 * swap_lock held for reading. 0, -EAGAIN (full: counted in the ring for
 * the broker), or -EMSGSIZE (too large for it). */
int ueb_ring_write(struct ueb_client *c, uint32_t write_index, const struct iovec *iov, int iovcnt) {
        size_t len = 0;
        bool wake;
        int r;

        for (int i = 0; i < iovcnt; i++) {
                if (iov[i].iov_len > RING_DATA_MAX)
                        return -EMSGSIZE;
                len += iov[i].iov_len;
        }
        r = ring_write(&c->ring, write_index, ueb_thread_id(), clock_ns(CLOCK_MONOTONIC), iov, iovcnt, len, &wake);
        if (r == 0 && wake)
                ueb_ring_doorbell(c);
        return r;
}

/* The granted ring, checked before we trust it with our writes: a sealed
 * memfd of exactly a header page and @size bytes, and a header that says
 * so. */
static int ring_map(struct ueb_client *c, int fd, uint32_t size, void **ret) {
        struct ring_header *h;
        struct stat st;
        int seals;
        void *map;

        if (size < RING_DATA_MIN || size > RING_DATA_MAX || (size & (size - 1)) != 0)
                return ueb_set_error(c, -EPROTO, "OpenRing: a ring of %u bytes is not one", size);
        seals = fcntl(fd, F_GET_SEALS);
        if (fstat(fd, &st) < 0 || seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW) ||
            st.st_size != (off_t) (RING_HEADER_SIZE + size))
                return ueb_set_error(c, -EPROTO, "OpenRing: the ring is not a sealed memfd of its size");
        /* Populated now: a page first touched by a write would cost that
         * write a page fault (the p99 of a slow writer, bench-ring-rates). */
        map = mmap(NULL, RING_HEADER_SIZE + size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
        if (map == MAP_FAILED)
                return ueb_set_error(c, -errno, "OpenRing: cannot map the ring: %m");
        h = map;
        if (h->magic != RING_MAGIC || h->version != RING_VERSION || h->data_size != size) {
                munmap(map, RING_HEADER_SIZE + size);
                return ueb_set_error(c, -EPROTO, "OpenRing: the ring's header is not one we know");
        }
        *ret = map;
        return 0;
}

static int on_ring_answer(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        struct ueb_client *c = ASSERT_PTR(userdata);
        uint32_t size;
        void *map = NULL;
        int fd;

        c->ring_call = sd_bus_slot_unref(c->ring_call);
        /* Refused: the socket path stays, for this session. */
        if (sd_bus_message_is_method_error(reply, NULL) || sd_bus_message_read(reply, "hu", &fd, &size) <= 0 ||
            c->data_fd < 0 || c->ring.header)
                return 0;
        if (ring_map(c, fd, size, &map) < 0)
                return 0;

        pthread_rwlock_wrlock(&c->swap_lock);
        c->ring = (struct ring_writer) { .header = map, .data = (uint8_t *) map + RING_HEADER_SIZE, .size = size };
        pthread_rwlock_unlock(&c->swap_lock);
        return 0;
}

void ueb_ring_open_start(struct ueb_client *c) {
        int r;

        if (c->ring_request == 0 || c->ring.header || c->ring_call || !c->bus_ready || !c->data_is_socket)
                return;
        r = sd_bus_call_method_async(c->bus, &c->ring_call, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE,
                                     "OpenRing", on_ring_answer, c, "u", c->ring_request);
        if (r < 0)
                ueb_set_error(c, r, "OpenRing: %s", strerror(-r));
}

void ueb_ring_drop(struct ueb_client *c) {
        struct ring_writer old;

        c->ring_call = sd_bus_slot_unref(c->ring_call);
        if (!c->ring.header)
                return;
        /* Writers hold the read lock while they use the ring. */
        pthread_rwlock_wrlock(&c->swap_lock);
        old = c->ring;
        c->ring = (struct ring_writer) {};
        pthread_rwlock_unlock(&c->swap_lock);
        munmap(old.header, RING_HEADER_SIZE + old.size);
}
