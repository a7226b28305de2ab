/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How much the broker may have sent that the bus has not yet delivered:
 * the decision, apart from the bus (delivery.c does the sending and the
 * counting).
 *
 * dbus-daemon charges a message it has not yet delivered to its *sender's*
 * incoming counters, and stops reading the sender when they are full: 64
 * descriptors and 127 MB by default, shared by everything the broker sends
 * to everyone. A client that never reads could thus stop every reply of
 * the broker. So every reply is "pinned" from the moment it is sent until
 * the bus confirms it left (delivery.c), and a reply is sent only while
 * what is pinned stays within these bounds:
 *
 * - for all clients together, well below dbus-daemon's limits;
 * - per uid, a share of that (root and the daemon's uid exempt), so one
 *   user who reads nothing stalls only itself;
 * - a reply that does not fit waits in the broker, in a bounded queue per
 *   uid and in all, and goes out when it fits, or after a second its call
 *   is refused instead (Busy, naming who holds the room: delivery.c);
 *   beyond those queues the call is refused at once (Busy, no
 *   descriptors) or, when even that error would not fit, gets no reply at
 *   all: a client that does not read cannot read an error either.
 */

#include <stdbool.h>
#include <stdint.h>

struct delivery_cost {
        unsigned fds;
        uint64_t bytes;
};

struct delivery_limits {
        unsigned max_fds;               /* pinned descriptors, all clients */
        uint64_t max_bytes;             /* pinned bytes, all clients */
        unsigned fds_per_uid;
        uint64_t bytes_per_uid;
        unsigned held_per_uid;          /* replies waiting in the broker */
        unsigned max_held;
};

/* dbus-daemon's defaults are 64 descriptors and 127 MB: leave a message's
 * worth of descriptors (16, max_message_unix_fds) and most of the bytes
 * free; a quarter of each per uid. A Register reply carries 2 descriptors:
 * 24 in flight in all, 6 per uid, each for one round trip to the bus.
 * Held replies keep their descriptors in the broker: 256 in all, 16 per
 * uid, stay well within BROKER_FD_RESERVE. */
#define DELIVERY_LIMITS_DEFAULT                                 \
        ((struct delivery_limits) {                             \
                .max_fds = 48,                                  \
                .max_bytes = UINT64_C(32) << 20,                \
                .fds_per_uid = 12,                              \
                .bytes_per_uid = UINT64_C(8) << 20,             \
                .held_per_uid = 16,                             \
                .max_held = 256,                                \
        })

/* What is pinned and held, for all clients or for one uid. */
struct delivery_usage {
        struct delivery_cost pinned;
        unsigned held;
        /* In the usage of all clients, as one uid sees it: how many other
         * uids pin descriptors (.fds) and bytes (.bytes). */
        struct delivery_cost others;
};

enum delivery_verdict {
        DELIVERY_SEND,          /* send now and pin it */
        DELIVERY_HOLD,          /* keep it in the broker until it fits */
        DELIVERY_REFUSE,        /* neither: refuse the call */
};

/* The verdict for a reply of @cost to a client of a uid whose usage is
 * @user (@privileged: root or the daemon's uid, exempt from the shares),
 * with @all for everyone. A uid is bound by its fixed share and by its part
 * among the uids pinning replies (charge_within_part(): it shrinks as more
 * uids pin, so a few uids that read nothing cannot pin everything). A reply
 * bigger than a byte bound on its own goes when nothing else of its kind is
 * pinned, so it is never held forever. @may_hold false: a reply that
 * cannot go now is refused, not held. Pure; thread-safe. */
enum delivery_verdict delivery_decide(const struct delivery_limits *limits, const struct delivery_usage *all,
                                      const struct delivery_usage *user, bool privileged,
                                      struct delivery_cost cost, bool may_hold);

static inline void delivery_cost_add(struct delivery_cost *to, struct delivery_cost c) {
        to->fds += c.fds;
        to->bytes += c.bytes;
}

/* Saturating: what is released is never more than what was counted. */
static inline void delivery_cost_sub(struct delivery_cost *from, struct delivery_cost c) {
        from->fds = from->fds > c.fds ? from->fds - c.fds : 0;
        from->bytes = from->bytes > c.bytes ? from->bytes - c.bytes : 0;
}

static inline bool delivery_cost_is_zero(struct delivery_cost c) {
        return c.fds == 0 && c.bytes == 0;
}
