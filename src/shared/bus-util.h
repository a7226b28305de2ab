/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sd-bus helpers shared by the daemon, the client library, uebctl, tests
 * and benches. Built into libshared only when libsystemd is available. */

#include <systemd/sd-bus.h>

/* Connects, as a bus client able to pass fds, to the bus at @address
 * (a D-Bus address such as "unix:path=/run/x"). Returns 0 and the started
 * connection in *@ret, or a negative errno. */
int bus_open_address(const char *address, sd_bus **ret);
