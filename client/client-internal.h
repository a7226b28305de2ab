/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libuebroker's internals, shared by its files:
 *   libuebroker.c     the public calls
 *   client-session.c  the bus connection, Register/Unregister, adopting and
 *                     losing the broker's session (data file + status page)
 *   client-monitor.c  the background thread that reconnects and re-registers
 *   client-ring.c     the shared-memory ring the data path prefers
 *
 * Locks:
 *   lock       (mutex) everything but the data path: the bus, the event list,
 *              the session, timers. Held only for bounded work: sd-bus is
 *              used only through calls that never wait for the bus
 *              (sd_bus_process, *_async, sd_bus_close_unref), so a stuck bus
 *              can never keep a host thread waiting for this lock. A host
 *              call that needs an answer waits on @changed with the lock
 *              released, until its own deadline.
 *   changed    (condvar on lock, CLOCK_MONOTONIC) broadcast by the background
 *              thread after each round of bus work.
 *   swap_lock  (rwlock) the data path's view: data_fd, data_is_socket,
 *              the ring and each event's registered/write_index. Writers take it shared
 *              with trylock (never wait); the session code takes it
 *              exclusively only for the moment of a swap, never across a
 *              round trip. Taken inside lock, never the other way round.
 * Status bytes need no lock: ueb_event.head.status always points at a
 * readable byte (see status_window below) and is swapped atomically.
 */

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "event-def.h"
#include "list.h"
#include "ring.h"
#include "uebroker.h"

#define UEB_ERROR_MAX 512
/* A method call on the bus times out after this long (the host does not wait
 * that long: see UEB_CALL_WAIT_MAX_MSEC). */
#define UEB_BUS_CALL_TIMEOUT_USEC BROKER_CALL_TIMEOUT_USEC
/* A connection that has not finished authentication and Hello by then is
 * dropped and tried again (a bus that accepts but never answers). */
#define UEB_CONNECT_TIMEOUT_USEC (3 * 1000000ull)
/* While the broker is absent: how often to try Register anyway (the name
 * watch normally makes it immediate). */
#define UEB_REGISTER_RETRY_USEC (5 * 1000000ull)
/* After Busy (the bus has not yet delivered the broker's earlier replies to
 * this uid, or the broker's queue is full): soon, it clears in round trips. */
#define UEB_REGISTER_BUSY_RETRY_USEC (250 * 1000ull)
/* Minimum gap between two registration rounds, so a broker that restarts in
 * a loop cannot make us spin. */
#define UEB_REGISTER_MIN_GAP_USEC (100 * 1000ull)
/* Reconnecting to the bus: exponential from the first value up to the second. */
#define UEB_CONNECT_RETRY_MIN_USEC (500 * 1000ull)
#define UEB_CONNECT_RETRY_MAX_USEC (30 * 1000000ull)
/* ueb_close() waits at most this long for the broker to read what is left. */
#define UEB_CLOSE_DRAIN_MSEC 250
/* The ring asked for unless $UEBROKER_RING_KIB says otherwise. */
#define UEB_RING_DEFAULT_KIB 64

enum ueb_event_state {
        UEB_EVENT_PENDING,      /* waiting for a broker */
        UEB_EVENT_REGISTERED,
        UEB_EVENT_REFUSED,      /* the broker said no; retried when a new broker appears */
};

struct ueb_event {
        struct ueb_event_head_ head;    /* first: ueb_enabled() reads it */
        struct ueb_client *client;
        char *command;
        struct event_def *def;          /* parsed @command: the layout of typed writes */
        enum ueb_event_state state;     /* under lock */
        sd_bus_slot *register_call;     /* the Register in flight, under lock */
        unsigned answers;               /* Register attempts concluded, under lock */
        int refusal;                    /* negative errno of the last refusal */
        /* The data path's copy, under swap_lock. */
        bool registered;
        uint32_t write_index;
        uint32_t status_index;          /* under lock */
        /* Statistics, atomics. */
        uint64_t written, dropped, failed, registrations;
        LIST_FIELDS(struct ueb_event, events);
};

struct ueb_client {
        pthread_mutex_t lock;
        pthread_rwlock_t swap_lock;

        enum ueb_bus bus_kind;
        char *address;                  /* UEB_BUS_ADDRESS */
        pthread_cond_t changed;

        /* The bus: only touched with lock held, only with calls that do not
         * wait for the bus. */
        sd_bus *bus;
        bool bus_ready;                 /* Hello answered, fd passing checked */
        uint64_t connect_deadline_usec; /* while !bus_ready */
        unsigned connect_attempts;      /* concluded, successful or not */
        unsigned bus_generation;        /* bumped whenever bus is dropped */
        sd_bus_slot *owner_watch;
        char *broker_owner;             /* unique name of the broker holding our session */
        bool broker_absent;             /* the last attempt found no broker */

        /* The session: one data file and one status page per connection. */
        int data_fd;                    /* -1 when there is none */
        bool data_is_socket;
        dev_t data_dev;
        ino_t data_ino;
        unsigned session_generation;    /* bumped whenever data_fd changes */
        /* The session's ring, when the broker granted one (header NULL:
         * none); asked for with OpenRing once the session has a data
         * socket, dropped with the session. */
        struct ring_writer ring;
        sd_bus_slot *ring_call;         /* OpenRing in flight, under lock */
        uint32_t ring_request;          /* data bytes to ask for; 0: never ($UEBROKER_RING_KIB=0) */
        /* A page reserved at open for the client's life: the broker's status
         * page is mapped over it with MAP_FIXED, and a zero page is mapped
         * over that when the session is lost, so a pointer into it stays
         * readable whatever happens. */
        uint8_t *status_window;
        bool window_holds_page;

        LIST_HEAD(struct ueb_event, events);

        /* Timers, CLOCK_MONOTONIC µs. */
        uint64_t next_connect_usec;
        uint64_t connect_backoff_usec;
        uint64_t next_register_usec;
        uint64_t last_register_round_usec;

        char last_error[UEB_ERROR_MAX];

        /* Background thread. */
        pid_t owner_pid;
        pthread_t thread;
        bool thread_started;
        bool stopping;                  /* under lock */
        int wake_fd;                    /* eventfd */
        int session_broken;             /* atomic: a writer saw the broker gone */
        /* Atomic: records a full data socket refused, not yet reported to
         * the broker (data-message.h). */
        uint64_t unreported_drops;

        /* Totals of events already freed. */
        struct ueb_stats retired;
};

/* client-common.c: below every other file of the library. */
uint64_t ueb_now_usec(void);

/* Statistics counters: bumped by any thread, without a lock. */
static inline void ueb_counter_add(uint64_t *counter) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* After fork() the child holds copies: the bus connection and the thread
 * belong to the parent. */
static inline bool ueb_client_forked(const struct ueb_client *c) {
        return getpid() != c->owner_pid;
}

/* Errors: formats into c->last_error, returns @error (negative errno). */
int ueb_set_error(struct ueb_client *c, int error, const char *format, ...) __attribute__((format(printf, 3, 4)));
/* Waits on c->changed until @deadline_usec (CLOCK_MONOTONIC). false when the
 * deadline passed. */
bool ueb_client_wait(struct ueb_client *c, uint64_t deadline_usec);
/* Wakes the background thread (client-monitor.c) to look at the client. */
void ueb_monitor_wake(struct ueb_client *c);
/* What a status pointer points at while an event is not registered. */
extern const uint8_t ueb_zero_status;

/* client-session.c; all called with c->lock held, none waits for the bus. */
/* Starts a connection; it becomes usable (bus_ready) in ueb_session_process(). */
int ueb_session_connect(struct ueb_client *c);
void ueb_session_disconnect(struct ueb_client *c);
/* Sends Register for @e; the answer is applied in ueb_session_process()
 * (state, refusal, answers++). 1: sent; 0: nothing sent (no usable bus, or
 * one is in flight already). */
int ueb_session_register_event_start(struct ueb_client *c, struct ueb_event *e);
/* Drops the Register in flight for @e, if any: its answer is ignored. */
void ueb_session_register_event_cancel(struct ueb_event *e);
/* Sends Register for every pending event, rate-limited. */
void ueb_session_register_pending(struct ueb_client *c);
/* Pending events with no Register in flight. */
bool ueb_session_has_pending(const struct ueb_client *c);
/* Unregisters @e; waits for the answer at most until @deadline_usec with
 * the lock released (other threads run meanwhile). */
int ueb_session_unregister_event(struct ueb_client *c, struct ueb_event *e, uint64_t deadline_usec);
/* The broker or its data file is gone: every event back to pending, status
 * pointers to zero, data file closed. */
void ueb_session_lose(struct ueb_client *c);
/* Runs the bus without waiting: finishes connecting (or gives up after
 * UEB_CONNECT_TIMEOUT_USEC), dispatches answers and the name watch, notices
 * a dead connection. */
void ueb_session_process(struct ueb_client *c);
/* A writer saw EPIPE or alike: loses the session if its data file is
 * really closed. */
void ueb_session_check_data_file(struct ueb_client *c);

/* client-monitor.c */
int ueb_monitor_start(struct ueb_client *c);
void ueb_monitor_stop(struct ueb_client *c);

/* client-ring.c */
/* Once per process: thread ids stay right across fork(). */
void ueb_ring_init_once(void);
/* The calling thread's id, cached. */
uint32_t ueb_thread_id(void);
/* Asks for a ring if the session may have one and has none (lock held). */
void ueb_ring_open_start(struct ueb_client *c);
/* Forgets the ring (lock held; takes swap_lock). */
void ueb_ring_drop(struct ueb_client *c);
/* Wakes the broker (swap_lock held for reading). */
void ueb_ring_doorbell(struct ueb_client *c);
/* One record into the ring, stamped with the thread and CLOCK_MONOTONIC;
 * swap_lock held for reading. 0, -EAGAIN (full: counted in the ring for
 * the broker), or -EMSGSIZE (too large for it). */
int ueb_ring_write(struct ueb_client *c, uint32_t write_index, const struct iovec *iov, int iovcnt);

