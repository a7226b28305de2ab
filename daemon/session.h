/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One session per client bus connection (unique name), created by its
 * first successful Register. Every Register of the connection returns the
 * session's one data file and status page, so write indexes stay consistent;
 * they run 0, 1, 2, ... in order of first registration, and the same event
 * registered again returns its index. A write index stays bound to its event
 * for the session's life, as in the kernel: Unregister only deactivates it
 * (writes to it are dropped), registering the event again reactivates the
 * same index, and no other event ever gets it, so a stale write cannot land
 * on another event. A bound index holds its event (n_bound_sessions): it is
 * neither deleted nor evicted while the connection lives. sd_bus_track
 * watches the connection: when it goes away (a crash included) every
 * registration and binding is released at once.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

struct broker;
struct broker_event;
struct provider_session;

/* Distinct events one session may bind write indexes to; a connection that
 * needs more reconnects. */
#define SESSION_SLOTS_MAX 4096u

struct session_slot {
        struct broker_event *event;     /* bound for the session's life */
        bool active;                    /* registered, not unregistered */
};

struct session {
        struct broker *broker;
        char *bus_name;
        uid_t uid;
        pid_t pid;
        sd_bus_track *track;
        struct provider_session *provider_session;
        struct session_slot *slots;     /* indexed by write index */
        size_t n_slots;
        size_t n_allocated;
        unsigned n_registrations;       /* active slots */
};

/* Creates the session of @bus_name and starts tracking the connection. */
int session_new(struct broker *b, const char *bus_name, uid_t uid, pid_t pid, struct session **ret);
/* Releases every registration and forgets the session. */
struct session *session_free(struct session *s);

struct session *session_find(struct broker *b, const char *bus_name);
unsigned session_count_for_uid(struct broker *b, uid_t uid);
void session_free_all(struct broker *b);

/* The write index of @ev if it is registered (active) in this session, or
 * -ENOENT. */
int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Registers @ev (the caller checked the quota); returns its write index:
 * the one already bound to @ev, or the next new one. -ENOSPC when the
 * session already has SESSION_SLOTS_MAX indexes. */
int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Deactivates @write_index; it stays bound to its event. -ENOENT when it is
 * not registered (active) in this session. */
int session_unregister(struct session *s, uint32_t write_index);
