/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The events the broker knows, by name and by status index. An event is
 * created by its first Register, owned by the uid that made that call, and
 * persists after its last registration (the original user_events semantics)
 * until Delete removes it, or until the broker evicts it to make room for a
 * new event while it is unused (broker_event_in_use(); admission.h says
 * which unused event may go). Status indexes run
 * 1..4095; 0 is never handed out; an index freed by Delete or eviction is
 * handed out again.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event-def.h"
#include "provider-link.h"
#include "status-text.h"
#include "user-charges.h"

struct broker_event {
        struct event_def *def;          /* owned; name is def->name */
        uid_t owner_uid;
        struct user_charge owner_charge;        /* CHARGE_EVENTS: 1 of owner_uid's */
        uint32_t status_index;
        unsigned n_registrations;       /* active session registrations */
        /* Sessions with a write index bound to it, active or not: a write
         * index is never reused for another event, so the event must
         * outlive every index bound to it. */
        unsigned n_bound_sessions;
        uint64_t last_used;             /* event_registry_touch() order */
        uint64_t last_used_usec;        /* ... and time, CLOCK_BOOTTIME */
        struct provider_event *provider_event;
        /* Its line of the event store, made once (event-store.c): the
         * store is rewritten before every reply that changes the set. */
        char *store_line;
};

struct event_registry {
        struct provider_link *link;
        struct user_charges *charges;   /* each event is charged to its owner (CHARGE_EVENTS) */
        void *by_name;                  /* tsearch() tree of struct broker_event */
        struct broker_event *by_index[STATUS_PAGE_SIZE];
        uint32_t n_events;
        uint32_t next_index_hint;
        uint64_t use_clock;
        /* CLOCK_BOOTTIME in µs; replaceable so tests control time. */
        uint64_t (*now_usec)(void);
        /* Told of each event once added and just before it is removed
         * (the broker's EventAdded/EventRemoved signals); may be NULL. */
        void (*on_change)(void *userdata, const struct broker_event *ev, bool added);
        void *on_change_userdata;
};

/* @charges (the broker's) must outlive the registry. */
void event_registry_init(struct event_registry *reg, struct provider_link *link, struct user_charges *charges);
/* Removes every event from the provider and frees it. */
void event_registry_done(struct event_registry *reg);

struct broker_event *event_registry_find(struct event_registry *reg, const char *name);

/* Creates an event from @def (taking ownership on success) for @owner.
 * -EEXIST when an event of that name exists, -ENOSPC when every status
 * index is taken. */
int event_registry_add(struct event_registry *reg, struct event_def *def, uid_t owner, struct broker_event **ret);
/* The same, giving the event status index @index when it is free (a broker
 * restoring its events keeps their indexes, so a client's status byte stays
 * at its address); any other index otherwise. 0: no preference. */
int event_registry_add_at(struct event_registry *reg, struct event_def *def, uid_t owner, uint32_t index,
                          struct broker_event **ret);

/* Removes @ev: no session may have a write index bound to it; the caller
 * has checked that nothing listens. */
void event_registry_remove(struct event_registry *reg, struct broker_event *ev);
/* The same, handing back the event's definition to the caller. */
struct event_def *event_registry_remove_keep_def(struct event_registry *reg, struct broker_event *ev);

uint8_t broker_event_status(struct event_registry *reg, struct broker_event *ev);

/* In use: a session has a write index bound to it (registered, or
 * unregistered on a connection still open). Only unused events may be
 * evicted. A listener does not pin an event: nobody can write to an event
 * without a registration, and a recorder matching everything (a stream
 * never read among them) would otherwise keep every owner from evicting
 * its own unused events, and fill the table for all (Delete still refuses
 * an event being listened to). */
bool broker_event_in_use(struct event_registry *reg, struct broker_event *ev);

/* Marks @ev as used now (registered, released or recorded), for eviction
 * in least recently used order. */
void event_registry_touch(struct event_registry *reg, struct broker_event *ev);

/* An event's use counters change here only (data sessions say what they
 * took and gave back): @bound write indexes or grants of a data session
 * bound to it (+1, -1 or 0), @registered active registrations (+1, -1 or
 * 0); it is touched. A count never goes below 0 (asserted). */
void event_registry_use(struct event_registry *reg, struct broker_event *ev, int bound, int registered);

/* The unused event used least recently among those owned by @owner (any
 * owner when @owner is UID_ANY) and last used at or before
 * @used_before_usec; NULL when there is none. */
#define UID_ANY ((uid_t) -1)
struct broker_event *event_registry_find_unused(struct event_registry *reg, uid_t owner, uint64_t used_before_usec);

/* How many events @owner owns, used or unused: its CHARGE_EVENTS. */
unsigned event_registry_count_owned(struct event_registry *reg, uid_t owner);
