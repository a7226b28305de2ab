/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * EventAdded(s name, s fields, u owner_uid) and EventRemoved(s name) on
 * /org/uebroker1, org.uebroker1.Broker, so monitors follow the broker
 * without polling ListEvents; and PropertiesChanged for ActiveEvents.
 *
 * Coalesced: a change is sent at once when the last batch went out at
 * least one interval ago, else with the next batch one interval after the
 * last. A batch compares each changed event's state with the one last
 * announced (event-change.h): per event and interval at most one
 * EventRemoved and one EventAdded, nothing when it changed back, and a
 * Register of a known event changes nothing. A batch carries at most
 * EVENT_SIGNALS_BATCH_MAX changed events, the rest go with the next one.
 * The signals carry what
 * ListEvents shows every caller (docs/DECISIONS.md, "Signals").
 */

#include <stdint.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "event-registry.h"

#define EVENT_SIGNALS_INTERVAL_USEC (200u * 1000u)
/* Changed events per batch (each at most an EventRemoved and an
 * EventAdded); more wait for the next batch, so the signals of all users
 * together stay within 2 * 64 per 200 ms. */
#define EVENT_SIGNALS_BATCH_MAX 64u

struct event_signals;

/* Watches @reg from now on (its on_change hook); @bus and @event must
 * outlive the result, @reg too until event_signals_free(). */
int event_signals_new(sd_event *event, sd_bus *bus, struct event_registry *reg, uint64_t interval_usec,
                      struct event_signals **ret);
/* Stops watching; changes not sent yet are dropped. */
struct event_signals *event_signals_free(struct event_signals *s);
