/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "strbuf.h"

/* Appends @json (one compact JSON document, as our writers produce: no
 * whitespace outside strings) to @sb indented like Python's
 * json.dumps(indent=2): one member or element per line, "key": value,
 * empty containers as [] and {}. Strings are copied byte for byte (their
 * escapes stay). Whitespace outside strings in the input is dropped. */
void json_append_pretty(struct strbuf *sb, const char *json);
