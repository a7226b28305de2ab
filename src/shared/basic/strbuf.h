/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A growable NUL-terminated string. An allocation failure is sticky: the
 * builder remembers it and strbuf_steal() then returns NULL, so callers
 * check once at the end instead of after every append. */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
        char *buf;
        size_t len;
        size_t cap;
        bool oom;
};

#define STRBUF_INIT { NULL, 0, 0, false }

void strbuf_append(struct strbuf *sb, const char *s);
void strbuf_append_n(struct strbuf *sb, const char *s, size_t n);
void strbuf_append_c(struct strbuf *sb, char c);
/* Decimal, as printf's PRIu64 and PRId64 write them, without printf (the
 * decoders write several numbers per record). */
void strbuf_append_u64(struct strbuf *sb, uint64_t v);
void strbuf_append_i64(struct strbuf *sb, int64_t v);
void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vprintf(struct strbuf *sb, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Hands the string to the caller (never NULL unless out of memory) and
 * resets @sb. */
char *strbuf_steal(struct strbuf *sb);
void strbuf_done(struct strbuf *sb);
