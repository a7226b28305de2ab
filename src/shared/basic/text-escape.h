/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Untrusted bytes (a writer's strings, names) made safe for a terminal or
 * for JSON. One classification for both forms, lossless in both:
 *
 *   bytes                                TEXT_ESCAPE_TERMINAL  TEXT_ESCAPE_JSON
 *   printable ASCII                      as is                 as is
 *   '\'                                  \\                    \\
 *   '"'                                  as is                 \"
 *   C0 controls (0x00-0x1f), DEL (0x7f)  \xNN                  \n \r \t, else \u00NN
 *   C1 controls (U+0080-U+009F)          \u{NN}                \u00NN
 *   Bidi_Control characters: U+061C,     \u{NNNN}              \uNNNN
 *     U+200E, U+200F, U+202A-U+202E,
 *     U+2066-U+2069
 *   other valid UTF-8                    as is                 as is
 *   each byte of invalid UTF-8 (stray,   \xNN (NN >= 80)       \udcNN (U+DC80 + byte,
 *     truncated, overlong, surrogate)                            PEP 383 "surrogateescape")
 *
 * Hex digits are lower case. Terminal form: \xNN with NN < 80 is that ASCII
 * byte, \xNN with NN >= 80 a byte that was not valid UTF-8 (valid UTF-8 is
 * never written as \x), \u{...} a code point written as UTF-8. JSON form: a
 * lone surrogate never comes from valid UTF-8, so \udcNN always means the
 * raw byte NN (Python: s.encode("utf-8", "surrogateescape") gives back the
 * bytes). See docs/DECISIONS.md.
 */

#include <stddef.h>

#include "strbuf.h"

enum text_escape_style {
        TEXT_ESCAPE_TERMINAL,
        TEXT_ESCAPE_JSON,       /* the inside of a JSON string, without quotes */
};

void text_escape_append(struct strbuf *sb, const char *s, size_t n, enum text_escape_style style);
