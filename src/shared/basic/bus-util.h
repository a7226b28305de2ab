/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* sd-bus helpers shared by the daemon, the client library, uebctl, tests
 * and benches. Built into libshared only when libsystemd is available. */

#include <stddef.h>
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

/* Judges one string of bus_message_read_strv_bounded()'s array: 0 to
 * accept it, or a negative errno (with @error set) to refuse the call. */
typedef int (*bus_string_check_t)(const char *s, size_t index, void *userdata, sd_bus_error *error);

/**
 * bus_message_read_strv_bounded() - read an "as" argument of a bounded number of strings
 * @m: the message, its read position at the array
 * @max_items: the most strings accepted
 * @check: called on each string in order, as it is read, before the next is
 *         counted (so a bad string is reported before "too many"); NULL: any
 * @userdata: passed to @check
 * @error: passed to @check; this function itself sets nothing in it
 * @ret: set to the strings, an array the caller free()s (NULL when the array
 *       is empty); the strings themselves are @m's, valid while @m is
 * @ret_n: set to how many
 *
 * Leaves the read position after the array.
 *
 * Return: 0; -E2BIG when the array has more than @max_items strings, @error
 * untouched so that the caller words the refusal (@check must therefore not
 * refuse with -E2BIG); what @check refused with; or sd-bus's negative errno
 * (-ENXIO: not an "as" there; -ENOMEM). On failure *@ret and *@ret_n are
 * untouched and nothing is left to free.
 * Threads: any thread, for a message no other thread uses meanwhile (sd-bus
 * objects are not thread-safe).
 */
int bus_message_read_strv_bounded(sd_bus_message *m, size_t max_items, bus_string_check_t check, void *userdata,
                                  sd_bus_error *error, const char ***ret, size_t *ret_n);
