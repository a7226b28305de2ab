/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* JSON string literals from untrusted bytes. */

#include <stddef.h>

#include "strbuf.h"

/* Appends @n bytes at @s as a quoted JSON string, escaped as
 * text-escape.h describes (TEXT_ESCAPE_JSON): controls, C1 and bidi
 * controls as \uXXXX, valid UTF-8 kept, each invalid byte as \udcNN. */
void json_append_string(struct strbuf *sb, const char *s, size_t n);
