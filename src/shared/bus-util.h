/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sd-bus helpers shared by the daemon, the client library, uebctl, tests
 * and benches. Built into libshared only when libsystemd is available. */

#include <stdint.h>
#include <systemd/sd-bus.h>

/* Connects, as a bus client able to pass fds, to the bus at @address
 * (a D-Bus address such as "unix:path=/run/x"). Returns 0 and the started
 * connection in *@ret, or a negative errno. */
int bus_open_address(const char *address, sd_bus **ret);

/* Reads an a{sv} dictionary of the bus driver's (GetConnectionCredentials,
 * GetConnectionStats): the u32 value of each of the @n_keys @keys into
 * @values[i], and bit i of *@ret_found set for each key present. Other keys
 * are skipped. Returns 0, or a negative errno (a key of another type
 * included). At most 32 keys. */
int bus_read_u32_dict(sd_bus_message *m, const char *const *keys, unsigned n_keys, uint32_t *values,
                      uint32_t *ret_found);
