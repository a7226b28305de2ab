/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Builds payloads (the bytes after the u32 write index) for an event.
 *
 * From typed values (libuebroker's ueb_write_values(), struct ueb_value of
 * <uebroker.h>, whose rules are documented there): event_encode_values()
 * checks them against the definition and lays out the payload without
 * allocating; event_encode_values_alloc() returns it in one buffer.
 *
 * From "field=value" text (`uebctl emit`): event_encode_payload() turns each
 * assignment into a typed value and encodes that, so both paths share one
 * layout and one set of checks:
 *
 *   integers   decimal, 0x hex or 0 octal, range-checked for the field's
 *              size and signedness
 *   char[N]    a string of at most N bytes, NUL padded
 *   __data_loc / __rel_loc char[]
 *              a string (no NUL inside), stored NUL-terminated after the
 *              fixed fields
 *   struct, other dynamic arrays
 *              hex bytes ("0a0bff"); a struct is zero padded to its size,
 *              a dynamic array takes whole elements
 *
 * Fields not assigned are zero (dynamic strings: ""). Either way the result
 * passes event_def_validate_payload().
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "event-def.h"
#include "uebroker.h"

/* The most dynamic fields a definition can hold: the shortest one is
 * "__rel_loc u8 a;" (15 bytes) of at most EVENT_COMMAND_MAX. */
#define EVENT_DYNAMIC_FIELDS_MAX ((EVENT_COMMAND_MAX + 1) / 15 + 1)

/* The bytes of one dynamic field, which go after the fixed part, in field
 * order: @len bytes at @data, then one NUL when @nul is set. */
struct event_encode_span {
        const void *data;
        size_t len;
        bool nul;
};

/*
 * Checks @n @values (one per field, in field order) against @ev and lays
 * out the payload: the fixed part (ev->min_size bytes, every byte written)
 * into @fixed, whose dynamic locations point where the spans land when
 * appended in order right after it. @spans has room for
 * EVENT_DYNAMIC_FIELDS_MAX; *ret_n_spans says how many were used, *ret_len
 * the whole payload's length. No allocation. Returns 0, -EINVAL (wrong
 * count, type, size or range) or -EMSGSIZE (longer than the field, or than
 * a record can be), with a message in @error if not NULL. On failure
 * @fixed may be partly written.
 */
int event_encode_values(const struct event_def *ev, const struct ueb_value *values, size_t n, uint8_t *fixed,
                        struct event_encode_span *spans, size_t *ret_n_spans, size_t *ret_len,
                        struct event_error *error);

/* The same, as one malloc()ed payload in *ret (free()); -ENOMEM too. */
int event_encode_values_alloc(const struct event_def *ev, const struct ueb_value *values, size_t n, void **ret,
                              size_t *ret_len, struct event_error *error);

/* The typed values of "field=value" text: one per field, in field order
 * (what is not assigned is zero or empty). They point into @assignments
 * and into @bytes (hex-decoded), which live until event_text_values_done(). */
struct event_text_values {
        struct ueb_value *values;
        size_t n_values;
        uint8_t *bytes;
};

/* Parses @n assignments into *@ret: 0, or -EINVAL with a message in @error
 * (if not NULL) naming the assignment at fault (a value too long for its
 * field is found by the encoder, later), or -ENOMEM. */
int event_values_from_text(const struct event_def *ev, char *const *assignments, size_t n,
                           struct event_text_values *ret, struct event_error *error);
void event_text_values_done(struct event_text_values *v);

/* @assignments: @n strings "name=value". Returns 0 with a malloc()ed
 * payload in *ret (free()) and its length, or -EINVAL with a message in
 * @error (if not NULL) naming the assignment at fault, or -ENOMEM. */
int event_encode_payload(const struct event_def *ev, char *const *assignments, size_t n, void **ret,
                         size_t *ret_len, struct event_error *error);
