/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json-pretty.h"

#include <stdbool.h>

static void newline(struct strbuf *sb, unsigned depth) {
        strbuf_append_c(sb, '\n');
        for (unsigned i = 0; i < depth; i++)
                strbuf_append(sb, "  ");
}

/* The next character that is not whitespace, from @p. */
static const char *skip_space(const char *p) {
        while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
                p++;
        return p;
}

void json_append_pretty(struct strbuf *sb, const char *json) {
        unsigned depth = 0;

        for (const char *p = skip_space(json); *p; p = skip_space(p)) {
                char c = *p;

                if (c == '"') {
                        const char *start = p++;

                        /* A string ends at the first quote not escaped. */
                        while (*p && *p != '"')
                                p += p[0] == '\\' && p[1] ? 2 : 1;
                        if (*p)
                                p++;
                        strbuf_append_n(sb, start, (size_t) (p - start));
                        continue;
                }
                p++;
                switch (c) {
                case '{':
                case '[':
                        strbuf_append_c(sb, c);
                        if (*skip_space(p) == (c == '{' ? '}' : ']')) {
                                strbuf_append_c(sb, c == '{' ? '}' : ']');
                                p = skip_space(p) + 1;
                                break;
                        }
                        newline(sb, ++depth);
                        break;
                case '}':
                case ']':
                        newline(sb, depth ? --depth : 0);
                        strbuf_append_c(sb, c);
                        break;
                case ',':
                        strbuf_append_c(sb, ',');
                        newline(sb, depth);
                        break;
                case ':':
                        strbuf_append(sb, ": ");
                        break;
                default:
                        strbuf_append_c(sb, c);
                        break;
                }
        }
}
