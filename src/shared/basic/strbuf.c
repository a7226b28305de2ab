/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool strbuf_reserve(struct strbuf *sb, size_t extra) {
        size_t need, cap;
        char *p;

        if (sb->oom)
                return false;
        if (extra > SIZE_MAX - sb->len - 1)
                goto oom;
        need = sb->len + extra + 1;
        if (need <= sb->cap)
                return true;
        cap = sb->cap ? sb->cap : 64;
        while (cap < need)
                cap = cap > SIZE_MAX / 2 ? need : cap * 2;
        p = realloc(sb->buf, cap);
        if (!p)
                goto oom;
        sb->buf = p;
        sb->cap = cap;
        return true;
oom:
        sb->oom = true;
        return false;
}

void strbuf_append_n(struct strbuf *sb, const char *s, size_t n) {
        if (!strbuf_reserve(sb, n))
                return;
        memcpy(sb->buf + sb->len, s, n);
        sb->len += n;
        sb->buf[sb->len] = '\0';
}

void strbuf_append(struct strbuf *sb, const char *s) {
        strbuf_append_n(sb, s, strlen(s));
}

void strbuf_append_c(struct strbuf *sb, char c) {
        strbuf_append_n(sb, &c, 1);
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap) {
        va_list aq;
        int n;

        va_copy(aq, ap);
        n = vsnprintf(NULL, 0, fmt, aq);
        va_end(aq);
        if (n < 0) {
                sb->oom = true;
                return;
        }
        if (!strbuf_reserve(sb, (size_t) n))
                return;
        vsnprintf(sb->buf + sb->len, (size_t) n + 1, fmt, ap);
        sb->len += (size_t) n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        strbuf_vprintf(sb, fmt, ap);
        va_end(ap);
}

char *strbuf_steal(struct strbuf *sb) {
        char *s = NULL;

        /* Reserving makes a buffer for a builder nothing was appended to;
         * it fails on an earlier allocation failure too. */
        if (strbuf_reserve(sb, 0)) {
                s = sb->buf;
                s[sb->len] = '\0';
        } else
                free(sb->buf);
        *sb = (struct strbuf) STRBUF_INIT;
        return s;
}

void strbuf_done(struct strbuf *sb) {
        free(sb->buf);
        *sb = (struct strbuf) STRBUF_INIT;
}
