/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Renders a record's payload (the bytes after the u32 write index) with its
 * event's fields, for people and for machines:
 *
 *   text:  "count=3 msg=hello flags=0x0a0b"   (ftrace-like, fields in order)
 *   JSON:  {"count":3,"msg":"hello","flags":"0a0b"}
 *
 * Integers print as numbers (signed per the field). char arrays and char
 * dynamic fields print as strings up to their first NUL; other dynamic
 * fields and structs print as hex bytes ("0x0a0b" in text, "0a0b" in JSON).
 * Strings are escaped as text-escape.h describes (controls, C1 and bidi
 * controls, invalid UTF-8), so a hostile payload cannot drive the terminal
 * and the JSON is always well-formed; both forms are lossless.
 */

#include <stddef.h>

#include "event-def.h"
#include "strbuf.h"

/* Append the rendering to @sb. The payload is validated first: -EINVAL
 * (shorter than the fields) or -EFAULT (a dynamic field out of bounds or
 * not NUL-terminated) leave @sb as it was. */
int event_decode_text(const struct event_def *ev, const void *payload, size_t len, struct strbuf *sb);
int event_decode_json(const struct event_def *ev, const void *payload, size_t len, struct strbuf *sb);

/* Lower-case hex of @n bytes, no prefix. */
void event_decode_hex(struct strbuf *sb, const void *data, size_t n);
