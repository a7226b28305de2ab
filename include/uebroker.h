/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * libuebroker: publish user_events tracepoints through uebrokerd.
 *
 *     struct ueb_client *c;
 *     struct ueb_event *tick;
 *
 *     ueb_open(&c);                                    // never fails the host
 *     ueb_register(c, "tick u32 count; __data_loc char[] msg", &tick);
 *     ...
 *     if (tick && ueb_enabled(tick)) {                 // one byte load
 *             struct ueb_value v[] = { ueb_value_u32(n), ueb_value_string("hi") };
 *             ueb_write_values(tick, v, 2);            // one non-blocking write
 *     }
 *     ...
 *     ueb_close(c);
 *
 * ueb_write_values() builds the payload from the definition (see "Typed
 * writes" below); ueb_write() takes the payload as iovec elements, laid out
 * by the caller. <uebroker-event.h> declares an event once in C
 * (UEB_EVENT) and generates the register and typed write calls.
 *
 * The broker is asked once, at registration; from then on the program
 * checks its status byte and writes to the data file itself. The broker is
 * never on the data path.
 *
 * With the embedded provider the library also asks for a shared-memory
 * ring (once per connection; the first ueb_register() waits for that
 * answer too): ueb_write() then copies the record into memory the broker
 * reads, with no system call, stamped with the calling thread's id and
 * CLOCK_MONOTONIC. $UEBROKER_RING_KIB (read with secure_getenv()) sets
 * its size in KiB (default 64); 0 writes through the data socket only.
 * From a few hundred thousand records a second a 64 KiB ring refuses
 * writes (-EAGAIN) while the broker catches up; ask for 1024 there
 * (bench/README.md, "The ring's size at paced rates").
 *
 * Which bus: ueb_open() uses $UEBROKER_BUS_ADDRESS when it is set (read
 * with secure_getenv()), the system bus otherwise; ueb_open_bus() chooses.
 *
 * Robustness: no call here keeps its caller longer than the bound below,
 * whatever the bus or the broker do (absent, slow, frozen, restarting):
 *     ueb_open(), ueb_open_bus()        UEB_OPEN_WAIT_MAX_MSEC   (500 ms)
 *     ueb_register(), ueb_unregister()  UEB_CALL_WAIT_MAX_MSEC   (2000 ms)
 *     ueb_close()                       UEB_CLOSE_WAIT_MAX_MSEC  (500 ms)
 * (plus the time the scheduler takes to run the caller again); the other
 * calls never wait at all. Bus I/O happens only in the background thread or
 * as non-blocking sends, never while holding a lock a host thread waits
 * for; a call that runs out of time returns what it knows (0: "not yet")
 * and the background thread finishes the job. Nothing here raises a signal
 * or changes the host's signal dispositions. Every
 * descriptor is O_CLOEXEC. If the bus or the broker is absent, ueb_open() and
 * ueb_register() still hand out working objects that report "not enabled";
 * a background thread (one per client, all signals blocked) registers the
 * events as soon as the broker appears, and registers them again when the
 * broker restarts (it watches the broker's bus name and the data file), so
 * a host never has to notice. Attempts are rate-limited.
 *
 * Threads: ueb_enabled(), ueb_write(), ueb_write_values(), ueb_check_values(),
 * ueb_registered() and the statistics calls are safe from any thread at any
 * time, concurrently with each other and with re-registration.
 * ueb_register(), ueb_unregister() and ueb_enabled_address() are serialized
 * by a per-client mutex and may also be called from any thread.
 * ueb_last_error() takes no lock: it is meant for the thread whose call just
 * failed (see there). A handle must not be used after ueb_unregister() or
 * ueb_close() released it: the caller makes sure no other thread still uses
 * it. None of the calls is async-signal-safe. Each call below says who owns
 * what it returns, its errors and its threads.
 *
 * fork(): the child inherits the handles but not the background thread nor
 * a usable bus connection. The child may keep writing events that were
 * registered (they go to the parent's session), should not register, and
 * may call ueb_close() to release its copies.
 *
 * Return values: negative errno on failure, as documented per call.
 * Symbols are versioned: LIBUEBROKER_1, LIBUEBROKER_1.1 for
 * ueb_write_values() and ueb_check_values(), LIBUEBROKER_1.2 for
 * ueb_enabled_address().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ueb_client;
struct ueb_event;

/* The longest time each call may keep its caller, in milliseconds (see
 * "Robustness" above). */
#define UEB_OPEN_WAIT_MAX_MSEC 500
#define UEB_CALL_WAIT_MAX_MSEC 2000
#define UEB_CLOSE_WAIT_MAX_MSEC 500

/* Most iovec elements one ueb_write() takes (the write index is added in
 * front of them). */
#define UEB_WRITE_IOV_MAX 64

/* Which bus ueb_open_bus() connects to. */
enum ueb_bus {
        UEB_BUS_DEFAULT = 0,    /* $UEBROKER_BUS_ADDRESS if set, else the system bus */
        UEB_BUS_SYSTEM = 1,
        UEB_BUS_SESSION = 2,    /* the user bus, for demos */
        UEB_BUS_ADDRESS = 3,    /* the address given as argument */
};

/**
 * ueb_open() - create a client on $UEBROKER_BUS_ADDRESS or the system bus
 * @ret: set to the new client, the caller's until ueb_close(); NULL on failure
 *
 * ueb_open_bus(@ret, UEB_BUS_DEFAULT, NULL). The background thread connects;
 * ueb_open() waits for that at most UEB_OPEN_WAIT_MAX_MSEC. A program that
 * does not care may ignore the result apart from checking *@ret.
 *
 * Return: 1 when connected to the bus; 0 when the bus could not be reached
 * yet or did not answer in time (the client is still valid and keeps
 * retrying in the background; the reason, if known, is in ueb_last_error());
 * or a negative errno with *@ret NULL: -EINVAL (@ret is NULL), -ENOMEM, or
 * what mmap(), eventfd() or pthread_create() failed with (-EMFILE, -EAGAIN).
 * Threads: any thread; clients are independent of each other.
 */
int ueb_open(struct ueb_client **ret);

/**
 * ueb_open_bus() - create a client on the bus @bus names
 * @ret: set to the new client, the caller's until ueb_close(); NULL on failure
 * @bus: UEB_BUS_DEFAULT ($UEBROKER_BUS_ADDRESS if set, else the system bus),
 *       UEB_BUS_SYSTEM, UEB_BUS_SESSION or UEB_BUS_ADDRESS
 * @address: the D-Bus address with UEB_BUS_ADDRESS, NULL otherwise; copied
 *
 * Return: as ueb_open(); also -EINVAL when @bus is none of enum ueb_bus, or
 * @address is given without UEB_BUS_ADDRESS or missing with it.
 * Threads: any thread.
 */
int ueb_open_bus(struct ueb_client **ret, enum ueb_bus bus, const char *address);

/**
 * ueb_close() - release a client and every event handle it gave out
 * @c: the client, or NULL
 *
 * Stops the background thread, closes the bus connection without waiting
 * for the bus (the broker then releases every registration of this client)
 * and frees every event handle of the client and the status window behind
 * ueb_enabled_address(). Gives the broker up to 250 ms to read records still
 * queued on the data file; returns within UEB_CLOSE_WAIT_MAX_MSEC. In a
 * fork()ed child it frees the child's copies and leaves the parent's thread
 * alone.
 *
 * Return: NULL (for `c = ueb_close(c);`); it cannot fail.
 * Threads: any one thread, once no other thread uses @c or any of its
 * handles (ueb_enabled() included): they are freed.
 */
struct ueb_client *ueb_close(struct ueb_client *c);

/**
 * ueb_register() - register an event with the broker and get its handle
 * @c: the client
 * @command: "name[:flags] [type field[; type field...]]", the user_events
 *           grammar, at most 511 bytes; copied
 * @ret: set to the handle, which belongs to @c: ueb_unregister() or
 *       ueb_close() frees it (never free()); NULL on failure
 *
 * Waits for the broker's answer at most UEB_CALL_WAIT_MAX_MSEC; the first
 * registration of a connection also waits for its ring (see above).
 * Registering the same definition twice gives two handles on one event.
 *
 * Return: 1 when the broker registered the event now; 0 when the broker is
 * not reachable, is busy or has not answered in time (the handle is valid,
 * reports "not enabled", and the event is registered as soon as the broker
 * answers or appears; should a late answer be a refusal, the handle stays
 * "not enabled"); or a negative errno with *@ret NULL when the command is
 * refused (ueb_last_error() has the message):
 *   -EINVAL     malformed command (ueb_last_error() says what and where,
 *               e.g. "field 2: ..."), or @c, @command or @ret NULL
 *   -EADDRINUSE the name exists with other fields or belongs to another user
 *   -EDQUOT     a broker quota is exhausted
 *   -EACCES     not authorized
 *   -EOPNOTSUPP the broker's provider cannot do what the command asks
 *   -EPROTO     the broker answered with something unusable (an unknown
 *               error, a data file or status page it must not hand out)
 *   -ENOMEM
 * Another errno is possible when the bus answers with a standard D-Bus error
 * that carries one. A bus that cannot pass file descriptors is no refusal
 * either: 0, the client keeps trying, and ueb_last_error() says why.
 * Threads: any thread; serialized with the client's other registration
 * calls by its mutex, which is released while waiting.
 */
int ueb_register(struct ueb_client *c, const char *command, struct ueb_event **ret);

/**
 * ueb_unregister() - drop a registration and free its handle
 * @e: a handle from ueb_register(), or NULL
 *
 * Tells the broker only when no other handle of this client holds the same
 * event, and waits for its answer at most UEB_CALL_WAIT_MAX_MSEC. @e is freed
 * whatever the result; its counters stay in ueb_client_stats().
 *
 * Return: 0 (also for NULL, for an event not registered right now, and when
 * there is no bus to tell), or a negative errno if the broker could not be
 * told or did not confirm in time; the broker releases what is left when the
 * client closes:
 *   -ENOTCONN   the bus connection closed, or the broker went away
 *   -ETIMEDOUT  no answer within UEB_CALL_WAIT_MAX_MSEC
 *   -ENOENT, -EPROTO, ...  the broker refused (message in ueb_last_error()),
 *               or the call could not be queued (-ENOMEM)
 * Threads: any thread, serialized per client; no other thread may still use
 * @e (ueb_enabled() and writes included).
 */
int ueb_unregister(struct ueb_event *e);

/**
 * ueb_write() - write one record of an event, laid out by the caller
 * @e: a handle from ueb_register(), not NULL
 * @iov: the payload, the event's fields in order; read during the call only
 * @iovcnt: 0 to UEB_WRITE_IOV_MAX elements
 *
 * Writes the write index, then the iovec elements, as one record with one
 * system call (or none, into the ring), never blocking, never raising
 * SIGPIPE. It writes even while ueb_enabled() is false; callers check first
 * so that a disabled event costs nothing.
 *
 * Return: 0 when the record was handed over, or a negative errno; every
 * non-zero result is counted in the event's statistics:
 *   -EAGAIN     dropped: the receiver (socket or ring) is full, nobody
 *               listens, or the client is switching to a restarted broker
 *               right now (on the embedded provider, drops of a full data
 *               socket are also reported to the broker with the next record
 *               that goes through: `uebctl status` shows them)
 *   -ENOTCONN   the event is not registered (broker absent, or refused)
 *   -EPIPE, -ECONNRESET, -ECONNREFUSED  the broker went away;
 *               re-registration is on its way
 *   -EINVAL, -ENOENT, -EFAULT, -EMSGSIZE  the record was rejected (bad
 *               payload for the event's fields, bad @iovcnt: at most
 *               UEB_WRITE_IOV_MAX)
 * Threads: any thread, concurrently with every call but ueb_unregister(@e)
 * and ueb_close(); takes no lock it could wait for.
 */
int ueb_write(struct ueb_event *e, const struct iovec *iov, int iovcnt);

/*
 * Typed writes (LIBUEBROKER_1.1): the values of an event's fields, one
 * struct ueb_value per field in the order of the definition; the library
 * builds the payload from the definition given to ueb_register() (dynamic
 * fields' locations and their bytes included) and writes it like
 * ueb_write(). Declaring an event once with UEB_EVENT() (<uebroker-event.h>)
 * generates these calls with C types checked by the compiler.
 *
 * Which value a field takes (the field's type as ueb_register() got it):
 *   u8 u16 u32 u64 unsigned char/short/int
 *                          UEB_TYPE_U8..U64 of the field's size
 *   s8 s16 s32 s64 char short int
 *                          UEB_TYPE_S8..S64 of the field's size (a type
 *                          not starting with 'u' is signed, as in the
 *                          kernel's format files)
 *   char[N], unsigned char[N]
 *                          UEB_TYPE_STRING or UEB_TYPE_BYTES of at most N
 *                          bytes; the rest is zero
 *   __data_loc / __rel_loc char[] (or unsigned char[])
 *                          UEB_TYPE_STRING; the library appends the NUL
 *   __data_loc / __rel_loc T[] (other T)
 *                          UEB_TYPE_BYTES, a whole number of T (the caller's
 *                          array of T, in host byte order)
 *   struct TAG NAME SIZE   UEB_TYPE_BYTES of exactly SIZE bytes
 * Anything else is refused before a byte is written: the wrong number of
 * values, a value of another type or size, an integer outside its type, a
 * NULL pointer with a non-zero length, a dynamic array that is not a whole
 * number of elements.
 *
 * The enum values and the layout of struct ueb_value are ABI.
 */
enum ueb_type {
        UEB_TYPE_U8 = 1,
        UEB_TYPE_U16 = 2,
        UEB_TYPE_U32 = 3,
        UEB_TYPE_U64 = 4,
        UEB_TYPE_S8 = 5,
        UEB_TYPE_S16 = 6,
        UEB_TYPE_S32 = 7,
        UEB_TYPE_S64 = 8,
        UEB_TYPE_STRING = 9,    /* @len bytes at @p, no terminating NUL needed */
        UEB_TYPE_BYTES = 10,    /* @len bytes at @p */
};

struct ueb_value {
        uint32_t type;          /* enum ueb_type */
        uint32_t len;           /* STRING, BYTES: bytes at @p */
        union {
                uint64_t u;     /* UEB_TYPE_U* */
                int64_t s;      /* UEB_TYPE_S* */
                const void *p;  /* STRING, BYTES; read during the call only */
        };
};

/* The value constructors: each takes the C type of its ueb_type. */
#define UEB_VALUE_INTEGER_(suffix, ctype, tag, member)                                                        \
        static inline struct ueb_value ueb_value_##suffix(ctype v) {                                          \
                struct ueb_value r;                                                                           \
                r.type = tag;                                                                                 \
                r.len = 0;                                                                                    \
                r.member = v;                                                                                 \
                return r;                                                                                     \
        }
UEB_VALUE_INTEGER_(u8, uint8_t, UEB_TYPE_U8, u)
UEB_VALUE_INTEGER_(u16, uint16_t, UEB_TYPE_U16, u)
UEB_VALUE_INTEGER_(u32, uint32_t, UEB_TYPE_U32, u)
UEB_VALUE_INTEGER_(u64, uint64_t, UEB_TYPE_U64, u)
UEB_VALUE_INTEGER_(s8, int8_t, UEB_TYPE_S8, s)
UEB_VALUE_INTEGER_(s16, int16_t, UEB_TYPE_S16, s)
UEB_VALUE_INTEGER_(s32, int32_t, UEB_TYPE_S32, s)
UEB_VALUE_INTEGER_(s64, int64_t, UEB_TYPE_S64, s)
#undef UEB_VALUE_INTEGER_

static inline struct ueb_value ueb_value_pointer_(uint32_t type, const void *p, size_t n) {
        struct ueb_value r;

        r.type = type;
        /* Too long to be valid anyway: the write refuses it. */
        r.len = n > UINT32_MAX ? UINT32_MAX : (uint32_t) n;
        r.p = p;
        return r;
}

/* @n bytes at @s; they need no NUL. */
static inline struct ueb_value ueb_value_string_n(const char *s, size_t n) {
        return ueb_value_pointer_(UEB_TYPE_STRING, s, n);
}

/* A C string up to its NUL; NULL is "". */
static inline struct ueb_value ueb_value_string(const char *s) {
        return ueb_value_pointer_(UEB_TYPE_STRING, s ? s : "", s ? strlen(s) : 0);
}

/* @n bytes at @p: a struct, an array of integers. */
static inline struct ueb_value ueb_value_bytes(const void *p, size_t n) {
        return ueb_value_pointer_(UEB_TYPE_BYTES, p, n);
}

/**
 * ueb_write_values() - write one record of an event from typed values
 * @e: a handle from ueb_register(), not NULL
 * @values: one per field (see above); they and the bytes they point at are
 *          read during the call only
 * @n: how many
 *
 * Allocates nothing unless the fixed-size fields take more than
 * UEB_VALUES_STACK_MAX bytes. Like ueb_write(), it writes even while
 * ueb_enabled() is false.
 *
 * Return: what ueb_write() returns, and before anything is written:
 *   -EINVAL     @n is not the number of fields, or a value does not fit its
 *               field's type (wrong type or size, integer out of range,
 *               struct of another size, partial array element)
 *   -EMSGSIZE   a string or array longer than its field holds, or a payload
 *               beyond what a dynamic location addresses (64 KiB)
 *   -ENOMEM     the fixed-size part did not fit on the stack and malloc()
 *               failed
 * Refused values count as failed in the statistics.
 * Threads: as ueb_write().
 */
int ueb_write_values(struct ueb_event *e, const struct ueb_value *values, size_t n);

/* Fixed-size parts up to this many bytes are built on the stack. */
#define UEB_VALUES_STACK_MAX 512

/**
 * ueb_check_values() - check typed values against an event, write nothing
 * @e: a handle from ueb_register(), not NULL
 * @values: as for ueb_write_values(); read during the call only
 * @n: how many
 * @message: the caller's buffer for an explanation, or NULL
 * @size: bytes at @message
 *
 * For tests and debugging; it does not touch the statistics. Fills @message
 * (when not NULL and @size > 0) with a NUL-terminated explanation of at most
 * @size bytes ("field 2 (msg): __data_loc char[] takes a string, not u32"),
 * "" when the values are valid.
 *
 * Return: 0 when ueb_write_values() would accept them, else -EINVAL or
 * -EMSGSIZE as it would refuse them, or -ENOMEM (see UEB_VALUES_STACK_MAX).
 * Threads: any thread; it reads only @e's definition, fixed at registration.
 */
int ueb_check_values(const struct ueb_event *e, const struct ueb_value *values, size_t n, char *message,
                     size_t size);

/**
 * ueb_registered() - whether an event is registered with a running broker
 * @e: a handle, or NULL (false)
 *
 * Return: true while @e is registered with a running broker (its status
 * pointer is on the broker's page); no errors.
 * Threads: any thread; one atomic load, no lock.
 */
bool ueb_registered(const struct ueb_event *e);

/**
 * ueb_last_error() - the message of the last failure on a client
 * @c: the client, or NULL ("")
 *
 * The broker's (or the library's) message for the last failure of a
 * registration call on @c ("field 2: ...", "event x exists with other
 * fields: ...") or of the background thread's work for it (connecting, a
 * late answer). "" when there was none; ueb_register() clears it first.
 *
 * Return: never NULL; the client's own buffer, readable until ueb_close()
 * (do not free it). Its text is replaced by the next failure.
 * Threads: takes no lock, so read it right after the failed call, on the
 * thread that made it, and copy what you keep: another thread's
 * registration call or the background thread may rewrite it meanwhile.
 */
const char *ueb_last_error(struct ueb_client *c);

struct ueb_stats {
        uint64_t written;       /* records handed to the data file */
        uint64_t dropped;       /* -EAGAIN, -ENOTCONN and lost-broker results */
        uint64_t failed;        /* records the data file rejected */
        uint64_t registrations; /* successful registrations, re-registrations included */
};

/**
 * ueb_event_stats() - the counters of one event handle
 * @e: a handle from ueb_register(), not NULL
 * @ret: the caller's, filled in
 *
 * No errors. Each counter is read atomically, the four one after the
 * other: not a snapshot while other threads write.
 * Threads: any thread; no lock.
 */
void ueb_event_stats(const struct ueb_event *e, struct ueb_stats *ret);

/**
 * ueb_client_stats() - the counters of every event a client ever had
 * @c: the client, not NULL
 * @ret: the caller's, filled in: the sums over its handles, unregistered
 *       ones included
 *
 * No errors.
 * Threads: any thread; holds the client's mutex for the sum (bounded work,
 * never across a bus round trip).
 */
void ueb_client_stats(struct ueb_client *c, struct ueb_stats *ret);

/* Implementation detail, part of the ABI: the first member of every
 * struct ueb_event. @status always points at a readable byte: the event's
 * byte of the broker's status page while registered, a constant zero byte
 * otherwise; it is swapped atomically on (re-)registration. */
struct ueb_event_head_ {
        const uint8_t *status;
};

/**
 * ueb_enabled() - whether something listens to an event right now
 * @e: a handle from ueb_register(), not NULL
 *
 * One pointer load and one byte load, no call, no lock, no system call:
 * cheap enough to sit in front of every event site.
 *
 * Return: true while something listens; no errors.
 * Threads: any thread, at any time until ueb_unregister(@e) or ueb_close().
 */
static inline bool ueb_enabled(const struct ueb_event *e) {
        const struct ueb_event_head_ *h = (const struct ueb_event_head_ *) (const void *) e;

        return __atomic_load_n(__atomic_load_n(&h->status, __ATOMIC_RELAXED), __ATOMIC_RELAXED) != 0;
}

/**
 * ueb_enabled_address() - the address of an event's status byte
 * @e: a handle from ueb_register()
 * @ret: set to the address, which belongs to the client: read it, never
 *       write or unmap it
 *
 * One load (LIBUEBROKER_1.2): the address of @e's status byte, for a hot
 * loop that checks `if (*addr)` with a single byte load instead of
 * ueb_enabled()'s two dependent loads:
 *
 *     const volatile uint8_t *on;
 *     if (ueb_enabled_address(tick, &on) == 0)
 *             while (...) { if (*on) ueb_write_values(tick, v, 2); ... }
 *
 * The library maps the broker's status page at one address reserved for
 * the client's life and the byte is that window plus the event's status
 * index, so the kernel (or the embedded broker) drives it directly.
 * Guaranteed until ueb_close(): the address stays readable (never faults),
 * and reads 0 while the library holds no session with a broker. It
 * reads this event's byte whenever the event is registered under the same
 * status index, which holds across reconnections, and across broker
 * restarts when the broker keeps a state directory (the system broker's
 * default, /run/uebroker; --state-dir= otherwise): it stores each event's
 * index with it and a restarted broker gives it back. The index changes
 * only if the broker no longer knows the event when the library registers
 * it again (no state directory, or it was removed, or an administrator
 * deleted the event while no client held it); the address
 * then reads another byte, and ueb_enabled_address() returns the new one:
 * a program that must rule this out asks again when ueb_event_stats()'s
 * registrations counter grows.
 *
 * After fork() the child's copy of the address stays readable and shows the
 * page of the session the parent had at the fork (the parent's later
 * re-registrations remap only the parent's window).
 *
 * Return: 0 and sets *@ret, -EAGAIN while @e has never been registered (no
 * index yet: ask again once ueb_registered() is true), -EINVAL for NULL
 * arguments.
 * Threads: any thread; holds the client's mutex for one load (bounded work).
 */
int ueb_enabled_address(struct ueb_event *e, const volatile uint8_t **ret);

#ifdef __cplusplus
}
#endif
