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
        if (!sb->oom && sb->len + 2 <= sb->cap) {
                sb->buf[sb->len++] = c;
                sb->buf[sb->len] = '\0';
                return;
        }
        strbuf_append_n(sb, &c, 1);
}

void strbuf_append_u64(struct strbuf *sb, uint64_t v) {
        char digits[20];
        size_t n = sizeof(digits);

        do {
                digits[--n] = (char) ('0' + v % 10);
                v /= 10;
        } while (v > 0);
        strbuf_append_n(sb, digits + n, sizeof(digits) - n);
}

void strbuf_append_i64(struct strbuf *sb, int64_t v) {
        if (v < 0) {
                strbuf_append_c(sb, '-');
                /* -(INT64_MIN) does not fit: negate as unsigned. */
                strbuf_append_u64(sb, -(uint64_t) v);
        } else
                strbuf_append_u64(sb, (uint64_t) v);
}

void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap) {
        size_t room;
        va_list aq;
        int n;

        /* Formatted once when it fits in the room left (the common case),
         * twice when the buffer must grow first. */
        if (!strbuf_reserve(sb, 0))
                return;
        room = sb->cap - sb->len;
        va_copy(aq, ap);
        n = vsnprintf(sb->buf + sb->len, room, fmt, aq);
        va_end(aq);
        if (n < 0) {
                sb->buf[sb->len] = '\0';
                sb->oom = true;
                return;
        }
        if ((size_t) n >= room) {
                sb->buf[sb->len] = '\0';
                if (!strbuf_reserve(sb, (size_t) n))
                        return;
                vsnprintf(sb->buf + sb->len, (size_t) n + 1, fmt, ap);
        }
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
