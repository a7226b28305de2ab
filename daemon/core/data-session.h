/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * A data session: one data file and status page of the provider, the write
 * indexes bound on that file, the grants made for it, its ring. It knows
 * its owner (uid, pid, bus name) and the daemon parts it uses, not the bus:
 * a bus connection (struct peer, bus/peer.h) has its own data session, which the
 * methods of /org/uebroker1 act on, and may open more (OpenSession): each
 * at its own object path, BROKER_SESSION_PATH_PREFIX/<id>, whose
 * org.uebroker1.Session methods act on it alone. A program with many data
 * files (a preloaded one opening user_events_data again and again) then
 * needs one connection, not one per file: the bus counts connections per
 * uid (256 on a stock system bus), and the program's others would fail.
 *
 * The provider session is opened by the first successful Register or
 * Authorize. Every Register of the data session returns its one data file
 * and status page, so write indexes stay consistent; they run 0, 1, 2, ...
 * in order of first registration, and the same event registered again
 * returns its index. A write index stays bound to its event for the data
 * session's life, as in the kernel: Unregister only deactivates it (writes
 * to it are dropped), registering the event again reactivates the same
 * index, and no other event ever gets it, so a stale write cannot land on
 * another event. A bound index holds its event (n_bound_sessions): it is
 * neither deleted nor evicted while the data session lives.
 *
 * Charges, all to the connection's uid and each remembering what it took:
 * CHARGE_CLIENTS 1 while the data session holds a provider session (the
 * connection's own), or from OpenSession on (one it opened, so that empty
 * sessions are bounded by ClientsPerUser= too); CHARGE_RING_BYTES its
 * ring's mapping.
 *
 * Not thread-safe: the broker's event loop only.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "broker-bus.h"
#include "list.h"
#include "user-charges.h"
#include "write-indexes.h"

struct broker_event;
struct event_registry;
struct provider_link;
struct provider_session;

/* The daemon's parts every data session uses; borrowed, they outlive the
 * sessions. */
struct data_session_context {
        struct provider_link *link;
        struct event_registry *events;
        struct user_charges *charges;
};

/* Whom a data session serves: an identified connection. */
struct data_session_owner {
        uid_t uid;
        pid_t pid;
        const char *bus_name;   /* borrowed: the connection outlives its sessions */
};

/* Data sessions one connection may open beside its own: a bound on what a
 * connection's list holds, far above ClientsPerUser='s default, which
 * charges them first. */
#define PEER_SESSIONS_MAX 4096u

struct data_session {
        const struct data_session_context *context;
        struct data_session_owner owner;
        uint64_t id;                    /* 0: the connection's own; else its path's last element */
        LIST_FIELDS(struct data_session, sessions);     /* the peer's opened ones */
        struct user_charge client_charge;       /* CHARGE_CLIENTS */
        struct user_charge ring_charge;         /* CHARGE_RING_BYTES: its ring's mapping; 0: no ring */
        struct provider_session *provider_session;      /* from the first Register or Authorize */
        struct write_indexes indexes;   /* its provider session reads them */
        struct broker_event **granted;  /* Authorize: events the client registers itself on its data file */
        unsigned n_granted;
        unsigned n_granted_allocated;
};

/**
 * data_session_path_id() - the id a data session's object path names: 0
 * for BROKER_OBJECT_PATH (a connection's own), the number after
 * BROKER_SESSION_PATH_PREFIX "/" (decimal, no leading zero, not 0);
 * -EINVAL for any other path or NULL.
 */
int data_session_path_id(const char *path, uint64_t *ret_id);

/* "/org/uebroker1/session/" and 20 digits. */
#define DATA_SESSION_PATH_MAX (sizeof(BROKER_SESSION_PATH_PREFIX) + 21u)
/** data_session_path() - @ds's object path, in @buf. */
const char *data_session_path(const struct data_session *ds, char buf[static DATA_SESSION_PATH_MAX]);

/** data_session_init() - @ds, empty, for @owner, as @id; @context is borrowed. */
void data_session_init(struct data_session *ds, const struct data_session_context *context,
                       const struct data_session_owner *owner, uint64_t id);

/**
 * data_session_done() - releases everything @ds holds: grants withdrawn in
 * the kernel too (the client may keep its data fd, and must not go on
 * registering or writing on it), the provider session closed after the
 * provider read what was queued, every binding and charge dropped. @ds may
 * be initialized again.
 */
void data_session_done(struct data_session *ds);

/**
 * data_session_open_provider() - opens the provider session (data file,
 * status page) if not yet open, charging CHARGE_CLIENTS unless already
 * charged: -EDQUOT / -EUSERS / -ENOSPC beyond the uid's share / its part /
 * Clients=, the provider's errno otherwise; nothing changed on failure.
 */
int data_session_open_provider(struct data_session *ds);

/**
 * data_session_data_fd() - the data file the client writes to, and
 * data_session_status_fd() - its status page, read-only: descriptors of
 * the open provider session, borrowed (the caller dups what it sends).
 */
int data_session_data_fd(const struct data_session *ds);
int data_session_status_fd(const struct data_session *ds);

/**
 * data_session_open_ring() - a shared-memory ring (OpenRing) of about
 * @requested bytes, charged within RingMemory= and RingMemoryPerUserKiB=:
 * its memfd (the caller's) and the size granted in *@ret_size; -ENOENT
 * without a registration, -EBUSY with a ring, -EDQUOT / -ENOSPC / -EUSERS
 * when the uid's share / all the ring memory / the uid's part is used,
 * -EOPNOTSUPP.
 */
int data_session_open_ring(struct data_session *ds, uint32_t requested, uint32_t *ret_size);

/** data_session_find_registration() - the write index of @ev if it is
 * registered (active) in @ds, or -ENOENT. */
int data_session_find_registration(struct data_session *ds, struct broker_event *ev, uint32_t *ret_write_index);

/**
 * data_session_register() - registers @ev (the caller checked the quota and
 * opened the provider session); returns its write index: the one already
 * bound to @ev, or the next new one. -ENOSPC when the data session already
 * has WRITE_INDEXES_MAX indexes; the provider's errno.
 */
int data_session_register(struct data_session *ds, struct broker_event *ev, uint32_t *ret_write_index);

/**
 * data_session_unregister() - deactivates @write_index; it stays bound to
 * its event. -ENOENT when it is not registered (active) in @ds. The last
 * registration gone, the ring goes too (charged while it is useful only).
 */
int data_session_unregister(struct data_session *ds, uint32_t write_index);

/*
 * Grants (Authorize): on a provider whose data file is the kernel's own
 * (upstream), a client may register its events itself, with its own
 * DIAG_IOCSREG and enable word, once the broker said yes to each
 * definition. A grant holds its event as a bound write index does (counted
 * in n_registrations and n_bound_sessions: neither deleted nor evicted)
 * for the data session's life, since the broker cannot see the client's
 * own DIAG_IOCSUNREG. A data session either registers through the broker
 * or registers itself, never both: the kernel numbers one file's events,
 * and the broker's write indexes would no longer describe that file.
 */
static inline bool data_session_registers_itself(const struct data_session *ds) {
        return ds->n_granted > 0;
}

/* Registrations and grants together: what EventsPerClient= bounds. */
static inline unsigned data_session_n_events(const struct data_session *ds) {
        return ds->indexes.n_active + ds->n_granted;
}

/** data_session_is_granted() - whether @ev is granted on @ds. */
bool data_session_is_granted(const struct data_session *ds, const struct broker_event *ev);

/**
 * data_session_grant() - grants @ev (the caller checked quota and opened the
 * provider session), in the kernel too where it enforces grants
 * (provider_ops.session_grant). 0, or negative errno with nothing changed:
 * -ENOMEM, or the provider's.
 */
int data_session_grant(struct data_session *ds, struct broker_event *ev);

/**
 * data_session_withdraw() - drops the grant of @ev (the client's own
 * registration failed), in the kernel too; -ENOENT when @ev is not granted
 * on @ds, the provider's error (the grant kept) otherwise.
 */
int data_session_withdraw(struct data_session *ds, struct broker_event *ev);
