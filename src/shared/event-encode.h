/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Builds a payload (the bytes after the u32 write index) for an event from
 * "field=value" text, e.g. for `uebctl emit`:
 *
 *   integers   decimal, 0x hex or 0 octal, range-checked for the field's
 *              size and signedness
 *   char[N]    a string of at most N bytes, NUL padded
 *   __data_loc / __rel_loc char[]
 *              a string (no NUL inside), stored NUL-terminated after the
 *              fixed fields
 *   struct, other dynamic arrays
 *              hex bytes ("0a0bff"); a struct is zero padded to its size
 *
 * Fields not assigned are zero (dynamic strings: ""). The result always
 * passes event_def_validate_payload().
 */

#include <stddef.h>

#include "event-def.h"

/* @assignments: @n strings "name=value". Returns 0 with a malloc()ed
 * payload in *ret (free()) and its length, or -EINVAL with a message in
 * @error (if not NULL) naming the assignment at fault, or -ENOMEM. */
int event_encode_payload(const struct event_def *ev, char *const *assignments, size_t n, void **ret,
                         size_t *ret_len, struct event_error *error);
