/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The embedded provider's shared-memory rings (OpenRing, ring.h): a
 * client that has one writes its records into memory it shares with us
 * and rings the data socket only when we sleep, so a record costs it no
 * system call.
 *
 * Waking: while anything records (writers write only then), the ring
 * timer reads every ring, at an interval between
 * EMBEDDED_RING_POLL_MIN_USEC and EMBEDDED_RING_POLL_MAX_USEC that halves
 * while a tick finds a ring a sixteenth full and doubles while every ring
 * holds less than a sixty-fourth (few wakeups at low rates, which would
 * only preempt the writers), and a writer rings the doorbell only when its
 * ring crosses the fill mark (a quarter of it): one system call per
 * crossing, none below it, whatever the rate. A ring the timer finds
 * empty for EMBEDDED_RING_SLEEP_TICKS ticks in a row sleeps: it asks for
 * the doorbell at its next record and costs the ticks nothing, and the
 * timer stops once every ring sleeps; the doorbell wakes it. While
 * nothing records the timer is off and a ring asks for the doorbell at the
 * next record (wake_bytes 0): an idle broker sleeps. Delivery takes at
 * most the poll interval plus a read.
 *
 * Memory: rings are mappings, not descriptors (the memfd is closed once
 * handed out), sized by the client within [RING_DATA_MIN, RING_DATA_MAX]
 * and within what the broker allows the client's uid (RingMemory= and
 * RingMemoryPerUser=, user-charges.h), so that thousands of clients keep
 * the daemon within its fd and memory budget; a client refused a ring
 * writes through its socket as before. A ring lives while its connection
 * holds a registration (the broker closes it at the last Unregister).
 *
 * Cost: a record costs the broker what it claims to carry whether or not
 * its writer wrote the payload, and a writer that does not use
 * libuebroker can claim records it never writes, so reading is charged by
 * the payload records claim, to their uid (struct ring_share): all of a uid's
 * rings together are read at most EMBEDDED_RING_READ_BYTES_PER_SEC, with
 * bursts of EMBEDDED_RING_READ_BURST, and all uids' together (but root's
 * and the daemon's) at most EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC, shared
 * fairly among those that want more (ring-read-shares.h); a uid over its
 * allowance waits for the next tick or doorbell, its writers find their
 * rings full, and no one else's records wait. Records of events no one
 * records are freed unread (not copied, not validated), and records read
 * after a hold and lost by every recorder go nowhere either: each costs
 * the uid at least RING_UNWANTED_CHARGE, since its fixed part, not its
 * claim, is what it costs us (4-byte records written flat out took most
 * of a core). The reads a bus call or the end of a session makes
 * (everything committed, so that records keep their order against the
 * call) are counted and never refused.
 *
 * Full recorders: once every recorder of a session's events waits for
 * its consumer (embedded_session_recorders_full()), a record read from the
 * session's ring would be lost by all of them, so the ring is left unread
 * (the read stops at the record that made the last one wait) until a
 * recorder comes, goes or has room again, for at most
 * EMBEDDED_RING_HOLD_MAX_USEC; its writers find the ring full meanwhile,
 * and one that retries loses nothing to a consumer that only fell behind.
 * A consumer that stopped reading holds its rings that long once; then
 * they are read, and it loses what does not fit, as before, until it has
 * room again. A recorder that does not read, beside one that reads
 * another event of the session or the same one, holds nothing back: it
 * loses its own records, as on the socket path. The look at the recorders
 * is taken at most once per ring between such changes.
 */

#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "embedded-internal.h"
#include "fd-util.h"
#include "list.h"
#include "macro.h"
#include "ring-read-shares.h"
#include "time-util.h"

/* Records read from one ring per round of a doorbell (four rounds at
 * most), and per tick: as much in one go either way, about 0.2 ms of the
 * broker's time. A tick that read a quarter of that kept a closed loop's
 * writer waiting on a full ring between ticks (bench-embedded-write's
 * ring rounds: 93 ns an event before, 86-88 since). */
#define EMBEDDED_RING_READS_PER_WAKEUP 1024u
#define EMBEDDED_RING_READS_PER_TICK (4u * EMBEDDED_RING_READS_PER_WAKEUP)
/* The poll interval while records come, and the most it backs off to
 * while few do: delivery within 50 ms at low rates (LTTng-UST's consumer
 * gets a sub-buffer once it is full, by default), each tick carrying fifty records at 1k
 * events/s instead of five: a fifth of the broker's CPU per event at 1k
 * and a third at 20k events/s (bench/README.md); 100 idle rings cost 20
 * cheap ticks a second. Faster writers cross the fill mark and ring. */
#define EMBEDDED_RING_POLL_MIN_USEC 1000u
#define EMBEDDED_RING_POLL_MAX_USEC 50000u
/* The longest a ring waits for its full recorders: twice the slowest tick.
 * A consumer descheduled for a while catches up within it (the closed loop
 * of bench-embedded-write loses nothing); one that has not read for this
 * long has stopped, and its writers' rings are read again for the others'
 * sake (its own loss is counted in its stream). */
#define EMBEDDED_RING_HOLD_MAX_USEC 100000u
/* Empty ticks before a ring sleeps: about 1.8 s at the slowest tick. */
#define EMBEDDED_RING_SLEEP_TICKS 40u
/* The most often the uids' allowances are refilled (ring-read-shares.h):
 * each refill is a pass over the uids with rings, a few dozen when
 * they want more than the total. */
#define EMBEDDED_RING_REFILL_USEC 1000u

static bool rings_polled(const struct provider *p) {
        return p->n_recorders > 0 && p->rings;
}

/* What a writer of @s's ring waits for before it rings. */
static uint32_t ring_wake_bytes(const struct provider_session *s) {
        return rings_polled(s->provider) && !s->ring_sleeping ? s->ring.size / 4 : 0;
}

static void ring_timer_start(struct provider *p) {
        p->ring_poll_usec = EMBEDDED_RING_POLL_MIN_USEC;
        (void) sd_event_source_set_time_relative(p->ring_timer, p->ring_poll_usec);
        (void) sd_event_source_set_enabled(p->ring_timer, SD_EVENT_ON);
}

/* The awake rings are read within @within_usec, never later than the
 * timer would have read them, and at the fast tick after that: when a
 * full recorder has room again (0: what the rings hold is read at once,
 * not after a backed-off tick), or a ring its uid's allowance left unread
 * (EMBEDDED_RING_POLL_MIN_USEC). */
static void ring_timer_pull_in(struct provider *p, uint64_t within_usec) {
        uint64_t now, next;

        if (!p->rings_polled || p->n_rings_awake == 0)
                return;
        p->ring_poll_usec = EMBEDDED_RING_POLL_MIN_USEC;
        if (sd_event_now(p->event, CLOCK_MONOTONIC, &now) < 0 ||
            sd_event_source_get_time(p->ring_timer, &next) < 0)
                return;
        if (next > now + within_usec)
                (void) sd_event_source_set_time(p->ring_timer, now + within_usec);
}

static void rings_read_soon(struct provider *p) {
        ring_timer_pull_in(p, 0);
}

/* Polled by the ticks again (a doorbell came, or polling starts). */
static void ring_wake(struct provider_session *s) {
        struct provider *p = s->provider;

        s->ring_empty_ticks = 0;
        if (!s->ring_sleeping)
                return;
        s->ring_sleeping = false;
        if (p->rings_polled && p->n_rings_awake++ == 0)
                ring_timer_start(p);
}

void embedded_rings_update(struct provider *p) {
        bool polled = rings_polled(ASSERT_PTR(p));

        if (polled == p->rings_polled)
                return;
        p->rings_polled = polled;
        p->n_rings_awake = 0;
        /* Every ring awake; writers learn the new mark from the header, and
         * what a ring already holds is read at the next tick or doorbell. */
        LIST_FOREACH(rings, s, p->rings) {
                s->ring_sleeping = false;
                s->ring_empty_ticks = 0;
                if (polled)
                        p->n_rings_awake++;
                (void) ring_reader_wait(&s->ring, ring_wake_bytes(s));
        }
        if (polled)
                ring_timer_start(p);
        else
                (void) sd_event_source_set_enabled(p->ring_timer, SD_EVENT_OFF);
}

/* @uid's share, one more ring counted in it; NULL when out of memory. A
 * new share starts empty: the refills give it its part of the total,
 * so that opening and closing rings buys no burst. The privileged shares
 * lead the list, as ring_read_shares_refill() takes them. */
static struct ring_share *ring_share_get(struct provider *p, uid_t uid, bool privileged) {
        struct ring_share *share;

        LIST_FOREACH(shares, i, p->ring_shares)
                if (i->uid == uid) {
                        i->n_rings++;
                        return i;
                }
        /* Room for every share's allowance in the refill's array. */
        if (ARRAY_RESERVE(p->ring_share_bytes, p->n_ring_share_bytes_allocated, p->n_ring_shares + 1) < 0)
                return NULL;
        share = malloc(sizeof(*share));
        if (!share)
                return NULL;
        *share = (struct ring_share) { .uid = uid, .privileged = privileged, .n_rings = 1 };
        if (privileged) {
                LIST_PREPEND(shares, p->ring_shares, share);
                p->n_ring_shares_exempt++;
        } else
                LIST_APPEND(shares, p->ring_shares, share);
        p->n_ring_shares++;
        return share;
}

static void ring_share_put(struct provider *p, struct ring_share *share) {
        if (--share->n_rings > 0)
                return;
        LIST_REMOVE(shares, p->ring_shares, share);
        p->n_ring_shares--;
        p->n_ring_shares_exempt -= share->privileged;
        free(share);
}

/* Refills every uid's allowance for the time since the last refill, at
 * most once per EMBEDDED_RING_REFILL_USEC. */
static void ring_shares_refill(struct provider *p) {
        uint64_t now = monotonic_usec();
        size_t n = 0;

        if (now - p->ring_refilled_usec < EMBEDDED_RING_REFILL_USEC)
                return;
        LIST_FOREACH(shares, i, p->ring_shares)
                p->ring_share_bytes[n++] = i->bytes;
        (void) ring_read_shares_refill(p->ring_share_bytes, n, p->n_ring_shares_exempt,
                                       now - p->ring_refilled_usec);
        n = 0;
        LIST_FOREACH(shares, i, p->ring_shares)
                i->bytes = p->ring_share_bytes[n++];
        p->ring_refilled_usec = now;
}

struct ring_batch {
        struct provider_session *session;
        const struct provider_event *event;     /* of the record want() took */
        uint64_t timestamp_ns;
        struct ring_budget *budget;             /* the read's: emptied to stop it */
};

static bool on_ring_want(const struct ring_record *rec, void *userdata) {
        struct ring_batch *b = ASSERT_PTR(userdata);

        /* No copy for what no one records: a lookup is all it costs. */
        b->event = embedded_session_record_accept(b->session, rec->write_index, rec->payload_len);
        return b->event && b->event->n_recorders > 0;
}

static bool on_ring_record(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        struct ring_batch *b = ASSERT_PTR(userdata);
        struct provider_session *s = b->session;
        struct provider *p = s->provider;

        /* Its recorders wait for their consumers now: if every recorder of
         * the session's events does, the next record would be lost by all,
         * so stop here (looked at once until the recorders change). */
        if (!embedded_session_record_deliver(s, b->event, rec->write_index, payload, rec->payload_len,
                                             b->timestamp_ns, rec->tid, rec->timestamp_ns))
                return true;
        if (s->ring_hold_generation == p->recorders_generation)
                /* Read after the hold while every recorder waits: lost by
                 * them all, but for the few the waiting message still had
                 * room for. Charged as a record no one wants (ring_read()),
                 * or a recorder that never reads let its writers' 4-byte
                 * records take the broker's core (test-hostile's
                 * test_e6). */
                return false;
        s->ring_hold_generation = p->recorders_generation;
        s->ring_held = embedded_session_recorders_full(s);
        if (s->ring_held) {
                s->ring_held_usec = monotonic_usec();
                b->budget->turns = 0;
        }
        return true;
}

static const struct ring_read_ops ring_ops = { .want = on_ring_want, .record = on_ring_record };

/* Reads up to @turns records, within what the uid may read now unless
 * @uncharged (it is counted then, never refused); returns how many, and
 * in @ret_starved (if not NULL) whether the uid's allowance stopped it;
 * -EAGAIN while the ring is held for its full recorders (nothing read;
 * never when @uncharged), or -EBADMSG (the ring is given up: logged
 * here). */
static int ring_read_some(struct provider_session *s, unsigned turns, bool uncharged, bool *ret_starved) {
        struct provider *p = s->provider;
        struct ring_share *share = s->ring_share;
        struct ring_budget budget;
        struct ring_batch b = { .session = s, .timestamp_ns = clock_ns(CLOCK_REALTIME), .budget = &budget };
        uint64_t allowed, read;
        int n;

        if (!uncharged && s->ring_held && s->ring_hold_generation == p->recorders_generation) {
                if (monotonic_usec() - s->ring_held_usec < EMBEDDED_RING_HOLD_MAX_USEC)
                        return -EAGAIN;
                s->ring_held = false;   /* read and lose, until the recorders change */
        }
        ring_shares_refill(p);
        allowed = share->bytes;
        budget = (struct ring_budget) { .turns = turns, .bytes = uncharged ? UINT64_MAX : allowed };
        n = ring_read(&s->ring, &budget, p->ring_scratch, &ring_ops, &b);
        if (ret_starved)
                *ret_starved = budget.starved;
        read = (uncharged ? UINT64_MAX : allowed) - budget.bytes;
        share->bytes = read >= share->bytes ? 0 : share->bytes - read;
        p->writer_dropped += ring_take_dropped(&s->ring);
        if (n == -EBADMSG) {
                unsigned suppressed = 0;

                if (log_ratelimit_ok(&p->ring_ratelimit, &suppressed))
                        log_warning("The ring of %s (pid %d, uid %u) holds what no writer writes; no longer reading "
                                    "it (its records are lost, no one else's).%s", s->bus_name, (int) s->pid,
                                    (unsigned) s->uid, suppressed ? " (More such rings were not logged.)" : "");
        }
        return n;
}

void embedded_session_ring_read(struct provider_session *s, bool all) {
        struct provider *p = ASSERT_PTR(s)->provider;
        unsigned total = 0;
        int n;

        if (!s->ring.header || s->ring.broken)
                return;
        ring_wake(s);
        if (all) {
                /* Everything committed now: at most a ring's worth. */
                (void) ring_read_some(s, s->ring.size / sizeof(struct ring_record) + 1, true, NULL);
                return;
        }
        for (unsigned round = 0; round < 4; round++) {
                bool starved;

                n = ring_read_some(s, EMBEDDED_RING_READS_PER_WAKEUP, false, &starved);
                if (n < 0)
                        break;
                total += (unsigned) n;
                if (starved) {
                        /* Out of allowance: not re-armed, or every record
                         * its writers commit would ring again for nothing;
                         * the tick reads on after the next refill. */
                        ring_timer_pull_in(p, EMBEDDED_RING_POLL_MIN_USEC);
                        break;
                }
                if (!ring_reader_wait(&s->ring, ring_wake_bytes(s)))
                        break;
        }
        /* The ring crossed its mark: records are coming, poll at once. */
        if (total > 0 && p->rings_polled)
                p->ring_poll_usec = EMBEDDED_RING_POLL_MIN_USEC;
}

static int ring_timer_fired(sd_event_source *source, uint64_t usec, void *userdata) {
        struct provider *p = ASSERT_PTR(userdata);
        uint64_t fullest = 0;           /* in 64ths of its ring: what one tick found */

        LIST_FOREACH(rings, s, p->rings) {
                uint64_t pending;
                int n = 0;

                if (s->ring_sleeping)
                        continue;
                if (s->ring.broken) {
                        /* Given up: read no more, and keep no tick for it. */
                        s->ring_sleeping = true;
                        p->n_rings_awake--;
                        continue;
                }
                /* An empty ring costs two loads: nothing read, nothing armed. */
                pending = ring_pending(&s->ring);
                if (pending > 0)
                        n = ring_read_some(s, EMBEDDED_RING_READS_PER_TICK, false, NULL);
                if (n < 0)
                        continue;
                /* How full it was, not how much one tick took: a ring left
                 * full (held for its recorders, or by a writer that rang
                 * once) is emptied at the fast tick, not 1024 records a
                 * slow one. */
                fullest = MAX(fullest, pending * 64 / s->ring.size);
                if (n == 0 && ++s->ring_empty_ticks >= EMBEDDED_RING_SLEEP_TICKS) {
                        s->ring_sleeping = true;
                        p->n_rings_awake--;
                        /* A record committed meanwhile: awake for the next tick. */
                        if (ring_reader_wait(&s->ring, 0))
                                ring_wake(s);
                        continue;
                }
                if (n > 0)
                        s->ring_empty_ticks = 0;
                /* Re-armed after a read, or after a writer rang (it
                 * cleared the flag). */
                if (n > 0 || !__atomic_load_n(&s->ring.header->waiting, __ATOMIC_RELAXED))
                        (void) ring_reader_wait(&s->ring, ring_wake_bytes(s));
        }
        embedded_recorders_flush(p);
        if (p->n_rings_awake == 0) {
                /* Every ring sleeps: so do we, until a doorbell. */
                (void) sd_event_source_set_enabled(source, SD_EVENT_OFF);
                return 0;
        }
        if (fullest >= 4)
                p->ring_poll_usec = MAX(p->ring_poll_usec / 2, (uint64_t) EMBEDDED_RING_POLL_MIN_USEC);
        else if (fullest == 0)
                p->ring_poll_usec = MIN(p->ring_poll_usec * 2, (uint64_t) EMBEDDED_RING_POLL_MAX_USEC);
        (void) sd_event_source_set_time_relative(source, p->ring_poll_usec);
        return 0;
}

int embedded_session_ring(struct provider *p, struct provider_session *s, uint32_t requested, uint64_t max_bytes,
                          uint32_t *ret_size, uint64_t *ret_mapped) {
        _cleanup_close_ int fd = -EBADF;
        uint32_t size = RING_DATA_MIN;
        struct ring_header *h;
        void *map;
        int r;

        assert(p);
        if (s->ring.header)
                return -EBUSY;
        while (size < requested && size < RING_DATA_MAX)
                size *= 2;
        /* Within what the uid may have, smaller rather than none. */
        while (RING_HEADER_SIZE + size > max_bytes && size > RING_DATA_MIN)
                size /= 2;
        if (RING_HEADER_SIZE + size > max_bytes)
                return -ENOSPC;

        fd = memfd_new_sized("uebroker-ring", RING_HEADER_SIZE + size);
        if (fd < 0)
                return fd;
        r = memfd_seal_size(fd);
        if (r < 0)
                return r;
        map = mmap(NULL, RING_HEADER_SIZE + size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED)
                return -errno;
        s->ring_share = ring_share_get(p, s->uid, s->privileged);
        if (!s->ring_share) {
                munmap(map, RING_HEADER_SIZE + size);
                return -ENOMEM;
        }

        h = map;
        *h = (struct ring_header) { .magic = RING_MAGIC, .version = RING_VERSION, .data_size = size, .waiting = 1 };
        s->ring = (struct ring_reader) { .header = h, .data = (uint8_t *) map + RING_HEADER_SIZE, .size = size };
        s->ring_map_size = RING_HEADER_SIZE + size;
        p->ring_bytes += s->ring_map_size;
        LIST_PREPEND(rings, p->rings, s);
        if (p->rings_polled && p->n_rings_awake++ == 0)
                ring_timer_start(p);
        h->wake_bytes = ring_wake_bytes(s);
        embedded_rings_update(p);
        *ret_size = size;
        *ret_mapped = s->ring_map_size;
        return TAKE_FD(fd);
}

void embedded_session_ring_close(struct provider *p, struct provider_session *s) {
        assert(s->provider == p);
        if (!s->ring.header)
                return;
        embedded_session_ring_read(s, true);
        embedded_recorders_flush(p);
        embedded_ring_unmap(s);
}

void embedded_ring_unmap(struct provider_session *s) {
        assert(s);
        if (!s->ring.header)
                return;
        LIST_REMOVE(rings, s->provider->rings, s);
        if (s->provider->rings_polled && !s->ring_sleeping)
                s->provider->n_rings_awake--;
        s->provider->ring_bytes -= s->ring_map_size;
        ring_share_put(s->provider, s->ring_share);
        s->ring_share = NULL;
        munmap(s->ring.header, s->ring_map_size);
        s->ring = (struct ring_reader) {};
        embedded_rings_update(s->provider);
}

int embedded_ring_init(struct provider *p) {
        int r;

        assert(p);
        p->ring_scratch = malloc(RING_DATA_MAX);
        if (!p->ring_scratch)
                return -ENOMEM;
        p->ring_refilled_usec = monotonic_usec();
        /* Accuracy 1 µs: 0 would mean sd-event's default of 250 ms, which
         * held records for up to a second (bench-ring-rates). */
        r = sd_event_add_time_relative(p->event, &p->ring_timer, CLOCK_MONOTONIC, EMBEDDED_RING_POLL_MIN_USEC, 1,
                                       ring_timer_fired, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->ring_timer, SD_EVENT_OFF);
        (void) sd_event_source_set_priority(p->ring_timer, EMBEDDED_DATA_PRIORITY);
        (void) sd_event_source_set_description(p->ring_timer, "embedded-ring-poll");
        p->recorders_changed = embedded_rings_update;
        p->recorder_drained = rings_read_soon;
        return 0;
}

void embedded_ring_done(struct provider *p) {
        assert(p);
        p->ring_timer = sd_event_source_disable_unref(p->ring_timer);
        free(p->ring_scratch);
        p->ring_scratch = NULL;
        free(p->ring_share_bytes);
        p->ring_share_bytes = NULL;
        p->n_ring_share_bytes_allocated = 0;
}
