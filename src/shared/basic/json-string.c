/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json-string.h"

#include "text-escape.h"

void json_append_string(struct strbuf *sb, const char *s, size_t n) {
        strbuf_append_c(sb, '"');
        text_escape_append(sb, s, n, TEXT_ESCAPE_JSON);
        strbuf_append_c(sb, '"');
}
