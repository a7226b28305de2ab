/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One session per client bus connection (unique name), created by the
 * connection's first call that needs to know who is calling. The bus is
 * asked for the caller's uid and pid once, asynchronously
 * (GetConnectionCredentials): the call waits, without blocking the loop,
 * and is re-run when the answer comes (session_identify()); later calls of
 * the connection use what the session recorded.
 *
 * The provider session (data file and status page) is opened by the first
 * successful Register. Every Register of the connection returns its one
 * data file and status page, so write indexes stay consistent; they run
 * 0, 1, 2, ... in order of first registration, and the same event
 * registered again returns its index. A write index stays bound to its
 * event for the session's life, as in the kernel: Unregister only
 * deactivates it (writes to it are dropped), registering the event again
 * reactivates the same index, and no other event ever gets it, so a stale
 * write cannot land on another event. A bound index holds its event
 * (n_bound_sessions): it is neither deleted nor evicted while the
 * connection lives.
 *
 * Departure is learned from the broker's one NameOwnerChanged subscription
 * (broker.c), never from a match per session: dbus-daemon allows 512 match
 * rules per connection and sd-bus drops a connection whose AddMatch fails.
 * session_gone() then releases every registration and binding at once.
 *
 * Once identified, every reply to the connection goes through its
 * delivery ledger (delivery.h), charged to its uid.
 *
 * tests/unit/test-session.c runs identification against a stand-in for
 * the bus, and every limit a session enforces.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "delivery.h"
#include "user-charges.h"
#include "providers/write-indexes.h"

struct broker_event;
struct broker_limit_origins;
struct delivery;
struct event_registry;
struct provider_link;
struct provider_session;
struct user_charges;

/* Calls of one connection that may wait for its identification; more are
 * refused with LimitsExceeded (each held call holds its message). As many
 * as a stock system bus lets one connection have pending (128), so an
 * honest burst at start-up is never refused. */
#define SESSION_WAITING_MAX 128u

/* Connections the bus has not yet identified, at most: a quarter of
 * Clients=, never fewer than 64. The bus answers in one round trip, so an
 * honest burst of new connections waits here only that long; every
 * identified connection is charged to its uid (CHARGE_CONNECTIONS). */
static inline unsigned session_unidentified_max(unsigned max) {
        return max / 4 > 64 ? max / 4 : 64;
}

/* Every session, by bus name, and what sessions need of the broker: owned
 * by the broker, which gives it the pieces (the registry never reaches
 * back into the broker). */
struct session_registry {
        sd_bus *bus;
        struct provider_link *link;
        struct event_registry *events;
        struct delivery *delivery;
        struct user_charges *charges;
        const char *config_name;        /* for messages naming Clients= */
        const struct broker_limit_origins *limit_origins;       /* the same; NULL: not known */
        void *by_bus_name;              /* tsearch() tree of struct session */
        unsigned n;
        unsigned max;                   /* Clients=, lowered to what the fd limit holds */
        /* Sessions the bus has not yet identified: charged to no uid, so
         * they share a small pool of their own (SESSION_UNIDENTIFIED_MAX). */
        unsigned n_unidentified;
};

struct session {
        struct session_registry *registry;
        char *bus_name;
        bool identified;
        uid_t uid;                      /* once identified */
        pid_t pid;
        sd_bus_slot *identify_slot;     /* GetConnectionCredentials in flight */
        sd_bus_message **waiting;       /* until identified */
        unsigned n_waiting;
        /* What it holds of the pools, from identification on (zeroed before). */
        struct user_charge connection_charge;   /* CHARGE_CONNECTIONS: 1 */
        struct user_charge client_charge;       /* CHARGE_CLIENTS: 1 while it has a provider session */
        struct user_charge ring_charge;         /* CHARGE_RING_BYTES: its ring's mapping; 0: no ring */
        struct provider_session *provider_session;      /* from the first Register */
        struct write_indexes indexes;   /* its provider session reads them */
        struct broker_event **granted;  /* Authorize: events it registers itself on its data file */
        unsigned n_granted;
        struct delivery_ledger ledger;  /* its replies the bus has not delivered (once identified) */
};

/* Every pointer is borrowed and must outlive the registry. */
void session_registry_init(struct session_registry *reg, sd_bus *bus, struct provider_link *link,
                           struct event_registry *events, struct delivery *delivery, struct user_charges *charges,
                           const char *config_name, unsigned max);
/* Frees every session (no replies: the broker stops). */
void session_registry_done(struct session_registry *reg);

/* The session of the caller of @m, identified. Returns 1 with *ret set; 0
 * when the bus was asked who the caller is: return 1 from the handler, it
 * is re-run with the same message when the answer comes; negative errno
 * with @error set when the caller cannot be served (no sender, not
 * identifiable, too many clients, too many waiting calls). */
int session_identify(struct session_registry *reg, sd_bus_message *m, sd_bus_error *error, struct session **ret);

/* Opens the provider session (data file, status page) if not yet open,
 * charging the connection to its uid: -EDQUOT beyond ClientsPerUser=. */
int session_open_provider(struct session *s);

/* The connection left the bus: forget it. */
void session_gone(struct session_registry *reg, const char *bus_name);

struct session *session_free(struct session *s);
struct session *session_find(struct session_registry *reg, const char *bus_name);

/* A shared-memory ring for the session's data (OpenRing) of about
 * @requested bytes, charged to its uid within RingMemory= and
 * RingMemoryPerUserKiB=: its memfd (the caller's) and the size granted;
 * -ENOENT without a registration, -EBUSY with a ring, -EDQUOT / -ENOSPC
 * when the uid's share / all the ring memory is used, -EOPNOTSUPP. */
int session_open_ring(struct session *s, uint32_t requested, uint32_t *ret_size);

/* The write index of @ev if it is registered (active) in this session, or
 * -ENOENT. */
int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Registers @ev (the caller checked the quota and opened the provider
 * session); returns its write index: the one already bound to @ev, or the
 * next new one. -ENOSPC when the session already has WRITE_INDEXES_MAX
 * indexes. */
int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Deactivates @write_index; it stays bound to its event. -ENOENT when it is
 * not registered (active) in this session. The last registration gone, the
 * ring goes too (it is charged while it is useful only). */
int session_unregister(struct session *s, uint32_t write_index);

/*
 * Grants (Authorize): on a provider whose data file is the kernel's own
 * (upstream), a client may register its events itself, with its own
 * DIAG_IOCSREG and enable word, once the broker said yes to each
 * definition. A grant holds its event as a bound write index does (counted
 * in n_registrations and n_bound_sessions: neither deleted nor evicted)
 * for the session's life, since the broker cannot see the client's own
 * DIAG_IOCSUNREG. A session either registers through the broker or
 * registers itself, never both: the kernel numbers one file's events, and
 * the broker's write indexes would no longer describe that file.
 */
static inline bool session_registers_itself(const struct session *s) {
        return s->n_granted > 0;
}
/* Registrations and grants together: what EventsPerClient= bounds. */
static inline unsigned session_n_events(const struct session *s) {
        return s->indexes.n_active + s->n_granted;
}
bool session_is_granted(const struct session *s, const struct broker_event *ev);
/* Grants @ev (the caller checked quota and opened the provider session),
 * in the kernel too where it enforces grants (provider_ops.session_grant).
 * 0, or negative errno with nothing changed: -ENOMEM, or the provider's. */
int session_grant(struct session *s, struct broker_event *ev);
/* Drops the grant of @ev (the client's own registration failed), in the
 * kernel too; -ENOENT when @ev is not granted on @s, the provider's error
 * (the grant kept) otherwise. */
int session_withdraw(struct session *s, struct broker_event *ev);
