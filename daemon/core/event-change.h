/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Which signals tell a listener how an event changed between the state it
 * was last told (announced) and the state now: a pure decision, so the
 * coalescing in event-signals.c is unit-tested
 * (tests/unit/test-event-change.c). Whatever happened in between (created
 * and deleted ten times) collapses into at most one EventRemoved followed
 * by one EventAdded.
 */

#include <stdbool.h>
#include <sys/types.h>

/* An event as a listener sees it: what EventAdded carries. */
struct event_presence {
        bool present;
        const char *fields;     /* when present */
        uid_t owner;            /* when present */
};

enum {
        EVENT_SIGNAL_REMOVED = 1u << 0,
        EVENT_SIGNAL_ADDED = 1u << 1,   /* sent after REMOVED when both */
};

/* EVENT_SIGNAL_* bits to send; 0 when the listener's view is still true
 * (nothing changed, or it changed and changed back). */
unsigned event_change_signals(const struct event_presence *announced, const struct event_presence *now);
