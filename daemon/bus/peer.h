/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One peer per client bus connection (unique name), created by the
 * connection's first call that needs to know who is calling. The bus is
 * asked for the caller's uid and pid once, asynchronously
 * (GetConnectionCredentials): the call waits, without blocking the loop,
 * and is re-run when the answer comes (peer_identify()); later calls of
 * the connection use what the peer recorded.
 *
 * A peer has its own data session (data-session.h), which the methods of
 * /org/uebroker1 act on, and the ones it opened with OpenSession.
 *
 * Departure is learned from the broker's one NameOwnerChanged subscription
 * (broker.c), never from a match per peer: dbus-daemon allows 512 match
 * rules per connection and sd-bus drops a connection whose AddMatch fails.
 * peer_gone() then releases every data session at once.
 *
 * Once identified, every reply to the connection goes through its
 * delivery ledger (delivery.h), charged to its uid.
 *
 * tests/unit/test-peer.c runs identification against a stand-in for
 * the bus, and every limit a peer and its data sessions enforce.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "delivery.h"
#include "user-charges.h"
#include "data-session.h"
#include "list.h"

struct broker_limit_origins;
struct delivery;
struct event_registry;
struct provider_link;
struct user_charges;

/* Calls of one connection that may wait for its identification; more are
 * refused with LimitsExceeded (each held call holds its message). As many
 * as a stock system bus lets one connection have pending (128), so an
 * honest burst at start-up is never refused. */
#define PEER_WAITING_MAX 128u

/* Connections the bus has not yet identified, at most: a quarter of
 * Clients=, never fewer than 64. The bus answers in one round trip, so an
 * honest burst of new connections waits here only that long; every
 * identified connection is charged to its uid (CHARGE_CONNECTIONS). */
static inline unsigned peer_unidentified_max(unsigned max) {
        return max / 4 > 64 ? max / 4 : 64;
}

/* Every peer, by bus name, and what peers and their data sessions need of
 * the broker: owned by the broker, which gives it the pieces (the registry
 * never reaches back into the broker). */
struct peer_registry {
        sd_bus *bus;
        struct data_session_context sessions;   /* link, events, charges */
        struct delivery *delivery;
        const char *config_name;        /* for messages naming Clients= */
        const struct broker_limit_origins *limit_origins;       /* the same; NULL: not known */
        void *by_bus_name;              /* tsearch() tree of struct peer */
        unsigned n;
        unsigned max;                   /* Clients=, lowered to what the fd limit holds */
        /* Peers the bus has not yet identified: charged to no uid, so
         * they share a small pool of their own (peer_unidentified_max()). */
        unsigned n_unidentified;
        uint64_t last_session_id;       /* OpenSession's: never reused, so a stale path names nothing */
};

struct peer {
        struct peer_registry *registry;
        char *bus_name;
        bool identified;
        uid_t uid;                      /* once identified */
        pid_t pid;
        sd_bus_slot *identify_slot;     /* GetConnectionCredentials in flight */
        sd_bus_message **waiting;       /* until identified */
        unsigned n_waiting;
        struct user_charge connection_charge;   /* CHARGE_CONNECTIONS: 1, from identification on */
        struct delivery_ledger ledger;  /* its replies the bus has not delivered (once identified) */
        struct data_session own;        /* once identified: the methods of /org/uebroker1 */
        LIST_HEAD(struct data_session, sessions);       /* opened with OpenSession */
        unsigned n_sessions;
};

/* Every pointer is borrowed and must outlive the registry. */
void peer_registry_init(struct peer_registry *reg, sd_bus *bus, struct provider_link *link,
                        struct event_registry *events, struct delivery *delivery, struct user_charges *charges,
                        const char *config_name, unsigned max);
/* Frees every peer (no replies: the broker stops). */
void peer_registry_done(struct peer_registry *reg);

/**
 * peer_identify() - the peer of the caller of @m, identified. Returns 1
 * with *@ret set; 0 when the bus was asked who the caller is: return 1
 * from the handler, it is re-run with the same message when the answer
 * comes; negative errno with @error set when the caller cannot be served
 * (no sender, not identifiable, too many clients, too many waiting calls).
 */
int peer_identify(struct peer_registry *reg, sd_bus_message *m, sd_bus_error *error, struct peer **ret);

/* The connection left the bus: forget it and all its data sessions. */
void peer_gone(struct peer_registry *reg, const char *bus_name);

struct peer *peer_free(struct peer *p);
struct peer *peer_find(struct peer_registry *reg, const char *bus_name);

/**
 * peer_open_session() - a new data session of @p (identified), charged to
 * its uid at once (CHARGE_CLIENTS); its id is the last element of its
 * object path. -EDQUOT / -EUSERS / -ENOSPC when the uid's share / part /
 * Clients= is used, -EMFILE beyond PEER_SESSIONS_MAX, -ENOMEM.
 */
int peer_open_session(struct peer *p, struct data_session **ret);

/** peer_session() - @p's data session @id (0: its own), or NULL. */
struct data_session *peer_session(struct peer *p, uint64_t id);

/** peer_close_session() - releases and frees @ds, one peer_open_session()
 * made. */
void peer_close_session(struct peer *p, struct data_session *ds);
