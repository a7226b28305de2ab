/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Escaping untrusted bytes for terminals and JSON (see text-escape.h). */
#include "text-escape.h"

#include <stdbool.h>
#include <stdint.h>

/* Length of the valid UTF-8 sequence at @s (at most @n bytes) and its code
 * point in *@ret; 0 if the bytes there are not one (overlong forms and
 * surrogates included). */
static size_t utf8_decode(const unsigned char *s, size_t n, uint32_t *ret) {
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80) {
                *ret = s[0];
                return 1;
        }
        if (s[0] >= 0xc2 && s[0] <= 0xdf) {
                len = 2;
                cp = s[0] & 0x1f;
        } else if (s[0] >= 0xe0 && s[0] <= 0xef) {
                len = 3;
                cp = s[0] & 0x0f;
        } else if (s[0] >= 0xf0 && s[0] <= 0xf4) {
                len = 4;
                cp = s[0] & 0x07;
        } else
                return 0;
        if (len > n)
                return 0;
        for (size_t i = 1; i < len; i++) {
                if ((s[i] & 0xc0) != 0x80)
                        return 0;
                cp = cp << 6 | (s[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;
        *ret = cp;
        return len;
}

static bool is_c1_control(uint32_t cp) {
        return cp >= 0x80 && cp <= 0x9f;
}

/* Unicode's Bidi_Control property: invisible, and they reorder what a
 * terminal shows (CVE-2021-42574, "Trojan Source"). */
static bool is_bidi_control(uint32_t cp) {
        return cp == 0x061c || cp == 0x200e || cp == 0x200f || (cp >= 0x202a && cp <= 0x202e) ||
               (cp >= 0x2066 && cp <= 0x2069);
}

static void append_ascii(struct strbuf *sb, unsigned char c, enum text_escape_style style) {
        if (style == TEXT_ESCAPE_JSON) {
                switch (c) {
                case '"':
                        strbuf_append(sb, "\\\"");
                        return;
                case '\\':
                        strbuf_append(sb, "\\\\");
                        return;
                case '\n':
                        strbuf_append(sb, "\\n");
                        return;
                case '\r':
                        strbuf_append(sb, "\\r");
                        return;
                case '\t':
                        strbuf_append(sb, "\\t");
                        return;
                }
                if (c < 0x20 || c == 0x7f)
                        strbuf_printf(sb, "\\u%04x", c);
                else
                        strbuf_append_c(sb, (char) c);
                return;
        }
        if (c == '\\')
                strbuf_append(sb, "\\\\");
        else if (c < 0x20 || c == 0x7f)
                strbuf_printf(sb, "\\x%02x", c);
        else
                strbuf_append_c(sb, (char) c);
}

/* Printable ASCII that neither style escapes: copied in runs. */
static bool is_plain(unsigned char c) {
        return c >= 0x20 && c < 0x7f && c != '\\' && c != '"';
}

void text_escape_append(struct strbuf *sb, const char *s, size_t n, enum text_escape_style style) {
        const unsigned char *u = (const unsigned char *) s;

        for (size_t i = 0; i < n;) {
                uint32_t cp;
                size_t len;

                for (len = 0; i + len < n && is_plain(u[i + len]); len++)
                        ;
                if (len > 0) {
                        strbuf_append_n(sb, s + i, len);
                        i += len;
                        continue;
                }
                len = utf8_decode(u + i, n - i, &cp);
                if (len == 0) {
                        if (style == TEXT_ESCAPE_JSON)
                                strbuf_printf(sb, "\\udc%02x", u[i]);
                        else
                                strbuf_printf(sb, "\\x%02x", u[i]);
                        len = 1;
                } else if (len == 1)
                        append_ascii(sb, u[i], style);
                else if (is_c1_control(cp) || is_bidi_control(cp)) {
                        if (style == TEXT_ESCAPE_JSON)
                                strbuf_printf(sb, "\\u%04x", (unsigned) cp);
                        else
                                strbuf_printf(sb, "\\u{%x}", (unsigned) cp);
                } else
                        strbuf_append_n(sb, s + i, len);
                i += len;
        }
}
