/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Rendering a payload with its event's fields (see event-decode.h). */
#include "event-decode.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "json-string.h"
#include "text-escape.h"

enum render {
        RENDER_TEXT,
        RENDER_JSON,
};

void event_decode_hex(struct strbuf *sb, const void *data, size_t n) {
        static const char digits[] = "0123456789abcdef";
        const unsigned char *p = data;

        for (size_t i = 0; i < n; i++) {
                strbuf_append_c(sb, digits[p[i] >> 4]);
                strbuf_append_c(sb, digits[p[i] & 0xf]);
        }
}

static void append_bytes(struct strbuf *sb, const void *data, size_t n, enum render how) {
        if (how == RENDER_JSON) {
                strbuf_append_c(sb, '"');
                event_decode_hex(sb, data, n);
                strbuf_append_c(sb, '"');
        } else {
                strbuf_append(sb, "0x");
                event_decode_hex(sb, data, n);
        }
}

/* A C string of at most @n bytes: up to the first NUL. */
static void append_string(struct strbuf *sb, const char *s, size_t n, enum render how) {
        const char *nul = memchr(s, '\0', n);

        if (nul)
                n = (size_t) (nul - s);
        if (how == RENDER_JSON)
                json_append_string(sb, s, n);
        else
                text_escape_append(sb, s, n, TEXT_ESCAPE_TERMINAL);
}

static void append_scalar(struct strbuf *sb, const struct event_field *f, const unsigned char *p) {
        uint64_t u = 0;

        switch (f->size) {
        case 1: {
                uint8_t v;
                memcpy(&v, p, 1);
                u = f->is_signed ? (uint64_t) (int64_t) (int8_t) v : v;
                break;
        }
        case 2: {
                uint16_t v;
                memcpy(&v, p, 2);
                u = f->is_signed ? (uint64_t) (int64_t) (int16_t) v : v;
                break;
        }
        case 4: {
                uint32_t v;
                memcpy(&v, p, 4);
                u = f->is_signed ? (uint64_t) (int64_t) (int32_t) v : v;
                break;
        }
        default:
                memcpy(&u, p, 8);
                break;
        }
        if (f->is_signed)
                strbuf_printf(sb, "%" PRId64, (int64_t) u);
        else
                strbuf_printf(sb, "%" PRIu64, u);
}

static void append_field_value(struct strbuf *sb, const struct event_field *f, const unsigned char *payload,
                               size_t len, enum render how) {
        const unsigned char *p = payload + (f->offset - EVENT_COMMON_HEADER_SIZE);
        size_t off, size;

        switch (f->kind) {
        case EVENT_FIELD_SCALAR:
                append_scalar(sb, f, p);
                break;
        case EVENT_FIELD_ARRAY:
                if (f->is_char)
                        append_string(sb, (const char *) p, f->size, how);
                else
                        append_bytes(sb, p, f->size, how);
                break;
        case EVENT_FIELD_DATA_LOC:
        case EVENT_FIELD_REL_LOC:
                /* Validated by the caller: the span is inside the payload. */
                if (event_field_dynamic_span(f, payload, len, &off, &size) < 0)
                        size = 0, off = 0;
                if (f->is_char)
                        append_string(sb, (const char *) payload + off, size, how);
                else
                        append_bytes(sb, payload + off, size, how);
                break;
        case EVENT_FIELD_STRUCT:
                append_bytes(sb, p, f->size, how);
                break;
        }
}

static int decode(const struct event_def *ev, const void *payload, size_t len, struct strbuf *sb, enum render how) {
        int r;

        r = event_def_validate_payload(ev, payload, len);
        if (r < 0)
                return r;

        if (how == RENDER_JSON)
                strbuf_append_c(sb, '{');
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];

                if (how == RENDER_JSON) {
                        if (i > 0)
                                strbuf_append_c(sb, ',');
                        json_append_string(sb, f->name, strlen(f->name));
                        strbuf_append_c(sb, ':');
                } else {
                        if (i > 0)
                                strbuf_append_c(sb, ' ');
                        strbuf_printf(sb, "%s=", f->name);
                }
                append_field_value(sb, f, payload, len, how);
        }
        if (how == RENDER_JSON)
                strbuf_append_c(sb, '}');
        return 0;
}

int event_decode_text(const struct event_def *ev, const void *payload, size_t len, struct strbuf *sb) {
        return decode(ev, payload, len, sb, RENDER_TEXT);
}

int event_decode_json(const struct event_def *ev, const void *payload, size_t len, struct strbuf *sb) {
        return decode(ev, payload, len, sb, RENDER_JSON);
}
