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
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "delivery.h"
#include "providers/write-indexes.h"

struct broker;
struct broker_event;
struct provider_session;

/* Calls of one connection that may wait for its identification; more are
 * refused with LimitsExceeded (each held call holds its message). As many
 * as a stock system bus lets one connection have pending (128), so an
 * honest burst at start-up is never refused. */
#define SESSION_WAITING_MAX 128u

struct session {
        struct broker *broker;
        char *bus_name;
        bool identified;
        uid_t uid;                      /* once identified */
        pid_t pid;
        sd_bus_slot *identify_slot;     /* GetConnectionCredentials in flight */
        sd_bus_message **waiting;       /* until identified */
        unsigned n_waiting;
        struct provider_session *provider_session;      /* from the first Register */
        struct write_indexes indexes;   /* its provider session reads them */
        struct delivery_ledger ledger;  /* its replies the bus has not delivered (once identified) */
};

/* The session of the caller of @m, identified. Returns 1 with *ret set; 0
 * when the bus was asked who the caller is: return 1 from the handler, it
 * is re-run with the same message when the answer comes; negative errno
 * with @error set when the caller cannot be served (no sender, not
 * identifiable, too many clients, too many waiting calls). */
int session_identify(struct broker *b, sd_bus_message *m, sd_bus_error *error, struct session **ret);

/* Opens the provider session (data file, status page) if not yet open. */
int session_open_provider(struct session *s);

/* The connection left the bus: forget it. */
void session_gone(struct broker *b, const char *bus_name);

struct session *session_free(struct session *s);
struct session *session_find(struct broker *b, const char *bus_name);
/* Sessions of @uid holding a provider session (ClientsPerUser=). */
unsigned session_count_for_uid(struct broker *b, uid_t uid);
void session_free_all(struct broker *b);

/* The write index of @ev if it is registered (active) in this session, or
 * -ENOENT. */
int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Registers @ev (the caller checked the quota and opened the provider
 * session); returns its write index: the one already bound to @ev, or the
 * next new one. -ENOSPC when the session already has WRITE_INDEXES_MAX
 * indexes. */
int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Deactivates @write_index; it stays bound to its event. -ENOENT when it is
 * not registered (active) in this session. */
int session_unregister(struct session *s, uint32_t write_index);
