/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json-string.h"

#include <stdint.h>

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), 0 if the
 * bytes there are not one (overlong forms and surrogates included). */
static size_t utf8_sequence_length(const unsigned char *s, size_t n) {
        size_t len;
        uint32_t cp;

        if (s[0] < 0x80)
                return 1;
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
        return len;
}

void json_append_string(struct strbuf *sb, const char *s, size_t n) {
        const unsigned char *u = (const unsigned char *) s;

        strbuf_append_c(sb, '"');
        for (size_t i = 0; i < n;) {
                unsigned char c = u[i];
                size_t len;

                switch (c) {
                case '"':
                        strbuf_append(sb, "\\\"");
                        break;
                case '\\':
                        strbuf_append(sb, "\\\\");
                        break;
                case '\n':
                        strbuf_append(sb, "\\n");
                        break;
                case '\r':
                        strbuf_append(sb, "\\r");
                        break;
                case '\t':
                        strbuf_append(sb, "\\t");
                        break;
                default:
                        if (c < 0x20 || c == 0x7f) {
                                strbuf_printf(sb, "\\u%04x", c);
                                break;
                        }
                        len = utf8_sequence_length(u + i, n - i);
                        if (len == 0) {
                                strbuf_append(sb, "\\ufffd");
                                break;
                        }
                        strbuf_append_n(sb, s + i, len);
                        i += len;
                        continue;
                }
                i++;
        }
        strbuf_append_c(sb, '"');
}
