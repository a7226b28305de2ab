/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Whether a Register that needs a new event may create it, and which unused
 * event must make room: a pure decision over the registry and the limits,
 * so every quota and eviction case is unit-tested (tests/unit/test-admission.c).
 *
 * The rules keep names stable against other users: a caller at its own
 * EventsPerUser= limit may only make room among its own unused events; when
 * the table is full the caller's own unused events go first, and another
 * user's unused event goes only once it has been idle for
 * UnusedEventExpirySec=. Idle time is the event's own (last registered,
 * released or recorded): no call of another user can make it older.
 * An @exempt caller (user_charges_exempt(); none by default) has no
 * EventsPerUser= share; the table's bound and the eviction rules still
 * apply to it. A caller @over_part would own more than its part of the
 * table among the uids that own events (user_charges_check()'s -EUSERS:
 * its part shrinks as more uids own events, so a few uids cannot fill the
 * table for the others): like a caller at EventsPerUser=, it may only make
 * room among its own unused events.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "event-registry.h"

struct admission_limits {
        unsigned max_events;            /* Events= (capped by the status page) */
        unsigned events_per_user;       /* EventsPerUser= */
        uint64_t unused_expiry_usec;    /* UnusedEventExpirySec= */
};

enum admission {
        ADMISSION_ADMIT,        /* there is room */
        ADMISSION_EVICT,        /* there is room once *ret_victim is removed */
        ADMISSION_USER_FULL,    /* the caller owns events_per_user events, all in use */
        ADMISSION_TABLE_FULL,   /* max_events events, none the caller's and unused, none expired */
        ADMISSION_CROWDED,      /* the caller owns its part of the table, all in use */
};

/**
 * admission_for_new_event() - whether @uid may create a new event in @reg.
 *
 * @param reg: the registry
 * @param uid: the caller
 * @param exempt: no EventsPerUser= share for the caller
 * @param over_part: the caller owns its part of the table among the owners
 * @param now_usec: CLOCK_MONOTONIC, for the idle times
 * @param limits: the bounds
 * @param ret_victim: the event to evict first, for ADMISSION_EVICT
 *
 * Return: the verdict. Pure apart from reading @reg; single-threaded.
 */
enum admission admission_for_new_event(struct event_registry *reg, uid_t uid, bool exempt, bool over_part,
                                       uint64_t now_usec, const struct admission_limits *limits,
                                       struct broker_event **ret_victim);
