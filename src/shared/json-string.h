/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* JSON string literals from untrusted bytes. */

#include <stddef.h>

#include "strbuf.h"

/* Appends @n bytes at @s as a quoted JSON string: '"' and '\' and control
 * characters escaped, valid UTF-8 kept, each byte of an invalid sequence
 * replaced by U+FFFD, so the result is always valid JSON. */
void json_append_string(struct strbuf *sb, const char *s, size_t n);
