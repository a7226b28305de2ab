/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Learning that clients left the bus, with one subscription for all of
 * them: NameOwnerChanged with an empty new owner, filtered here to unique
 * names (never reused, so once gone, that client is gone). One match per
 * client would hit dbus-daemon's 512 match rules per connection, and sd-bus
 * drops a connection whose AddMatch is refused.
 *
 * The match is installed synchronously at start-up, before the service
 * takes calls: whoever calls afterwards is covered, and a refusal then is
 * a start-up error, not a client's doing.
 */

#include <systemd/sd-bus.h>

typedef void (*bus_departure_handler_t)(const char *unique_name, void *userdata);

/* On a direct connection (no bus daemon) there is nothing to watch:
 * returns 0 with *ret_slot NULL. */
int bus_departures_watch(sd_bus *bus, bus_departure_handler_t handler, void *userdata, sd_bus_slot **ret_slot);
