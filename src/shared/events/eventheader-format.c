/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* EventHeader records as text and JSON (see eventheader-format.h). */
#include "eventheader-format.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "eventheader-decode.h"
#include "json-string.h"
#include "text-escape.h"

/* Arrays and structs open within each other: a struct level holds at most
 * an array and a struct, plus the top. */
#define NESTING_MAX (2 * (EVENTHEADER_DEPTH_MAX + 1) + 2)

/* Untrusted bytes (valid UTF-8 or not) escaped for the output at hand. */
static void append_escaped(struct strbuf *sb, const char *s, size_t n, bool json) {
        if (json)
                json_append_string(sb, s, n);
        else
                text_escape_append(sb, s, n, TEXT_ESCAPE_TERMINAL);
}

/* A code point as UTF-8; what no UTF can carry (surrogates, past
 * U+10FFFF) becomes U+FFFD. */
static void append_code_point(struct strbuf *sb, uint32_t cp) {
        if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
                cp = 0xfffd;
        if (cp < 0x80)
                strbuf_append_c(sb, (char) cp);
        else if (cp < 0x800) {
                strbuf_append_c(sb, (char) (0xc0 | cp >> 6));
                strbuf_append_c(sb, (char) (0x80 | (cp & 0x3f)));
        } else if (cp < 0x10000) {
                strbuf_append_c(sb, (char) (0xe0 | cp >> 12));
                strbuf_append_c(sb, (char) (0x80 | ((cp >> 6) & 0x3f)));
                strbuf_append_c(sb, (char) (0x80 | (cp & 0x3f)));
        } else {
                strbuf_append_c(sb, (char) (0xf0 | cp >> 18));
                strbuf_append_c(sb, (char) (0x80 | ((cp >> 12) & 0x3f)));
                strbuf_append_c(sb, (char) (0x80 | ((cp >> 6) & 0x3f)));
                strbuf_append_c(sb, (char) (0x80 | (cp & 0x3f)));
        }
}

/* UTF-16 or UTF-32 units to UTF-8; a unit left over at the end, or a
 * surrogate without its pair, becomes U+FFFD. */
static void transcode(struct strbuf *out, const uint8_t *p, size_t n, unsigned unit, bool big_endian) {
        size_t i = 0;

        for (; i + unit <= n; i += unit) {
                uint32_t cp = (uint32_t) eventheader_read_uint(p + i, unit, big_endian);

                if (unit == 2 && cp >= 0xd800 && cp <= 0xdbff && i + 2 * unit <= n) {
                        uint32_t low = (uint32_t) eventheader_read_uint(p + i + unit, unit, big_endian);

                        if (low >= 0xdc00 && low <= 0xdfff) {
                                cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
                                i += unit;
                        }
                }
                append_code_point(out, cp);
        }
        if (i < n)
                append_code_point(out, 0xfffd);
}

enum charset {
        CHARSET_LATIN1,
        CHARSET_UTF8,
        CHARSET_UTF16,
        CHARSET_UTF32,
};

static void append_string(struct strbuf *sb, const uint8_t *p, size_t n, enum charset cs, bool big_endian,
                          bool json) {
        struct strbuf tmp = STRBUF_INIT;

        switch (cs) {
        case CHARSET_UTF8:
                append_escaped(sb, (const char *) p, n, json);
                return;
        case CHARSET_LATIN1:
                for (size_t i = 0; i < n; i++)
                        append_code_point(&tmp, p[i]);
                break;
        case CHARSET_UTF16:
                transcode(&tmp, p, n, 2, big_endian);
                break;
        case CHARSET_UTF32:
                transcode(&tmp, p, n, 4, big_endian);
                break;
        }
        if (tmp.oom)
                sb->oom = true;
        append_escaped(sb, tmp.buf ?: "", tmp.len, json);
        strbuf_done(&tmp);
}

/* string_utf_bom, string_xml, string_json: a BOM at the start says which
 * UTF and byte order, else the unit size and the event's order do. */
static void append_string_bom(struct strbuf *sb, const uint8_t *p, size_t n, unsigned unit, bool big_endian,
                              bool json) {
        static const enum charset by_unit[] = { [1] = CHARSET_UTF8, [2] = CHARSET_UTF16, [4] = CHARSET_UTF32 };

        if (n >= 3 && memcmp(p, "\xef\xbb\xbf", 3) == 0)
                return append_string(sb, p + 3, n - 3, CHARSET_UTF8, big_endian, json);
        if (n >= 4 && memcmp(p, "\xff\xfe\0\0", 4) == 0)
                return append_string(sb, p + 4, n - 4, CHARSET_UTF32, false, json);
        if (n >= 4 && memcmp(p, "\0\0\xfe\xff", 4) == 0)
                return append_string(sb, p + 4, n - 4, CHARSET_UTF32, true, json);
        if (n >= 2 && memcmp(p, "\xff\xfe", 2) == 0)
                return append_string(sb, p + 2, n - 2, CHARSET_UTF16, false, json);
        if (n >= 2 && memcmp(p, "\xfe\xff", 2) == 0)
                return append_string(sb, p + 2, n - 2, CHARSET_UTF16, true, json);
        append_string(sb, p, n, by_unit[unit], big_endian, json);
}

static void append_hex_bytes(struct strbuf *sb, const uint8_t *p, size_t n, bool json) {
        static const char digits[] = "0123456789abcdef";

        strbuf_append(sb, json ? "\"" : "0x");
        for (size_t i = 0; i < n; i++) {
                if (json && i > 0)
                        strbuf_append_c(sb, ' ');
                strbuf_append_c(sb, digits[p[i] >> 4]);
                strbuf_append_c(sb, digits[p[i] & 0xf]);
        }
        if (json)
                strbuf_append_c(sb, '"');
}

/* Text that is a JSON string in JSON and bare in text (no escaping
 * needed: we wrote it). */
static void append_word(struct strbuf *sb, bool json, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void append_word(struct strbuf *sb, bool json, const char *fmt, ...) {
        va_list ap;

        if (json)
                strbuf_append_c(sb, '"');
        va_start(ap, fmt);
        strbuf_vprintf(sb, fmt, ap);
        va_end(ap);
        if (json)
                strbuf_append_c(sb, '"');
}

static void append_uuid(struct strbuf *sb, const uint8_t *u, bool json) {
        append_word(sb, json,
                    "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
                    u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13],
                    u[14], u[15]);
}

static void append_time(struct strbuf *sb, int64_t secs, bool json) {
        time_t t = (time_t) secs;
        struct tm tm;

        if ((int64_t) t == secs && gmtime_r(&t, &tm))
                append_word(sb, json, "%04lld-%02d-%02dT%02d:%02d:%02d", (long long) tm.tm_year + 1900,
                            tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
        else
                append_word(sb, json, "TIME(%" PRId64 ")", secs);
}

/* The shortest %g text that reads back as the same value; JSON has no
 * NaN or infinity, so those are strings there. */
static void append_float(struct strbuf *sb, const uint8_t *p, size_t size, bool big_endian, bool json) {
        uint64_t bits = eventheader_read_uint(p, size, big_endian);
        char text[64];
        double v;

        if (size == 4) {
                uint32_t b32 = (uint32_t) bits;
                float f;

                memcpy(&f, &b32, sizeof(f));
                v = f;
                for (int digits = 1; digits <= 9; digits++) {
                        snprintf(text, sizeof(text), "%.*g", digits, v);
                        if (strtof(text, NULL) == f)
                                break;
                }
        } else {
                memcpy(&v, &bits, sizeof(v));
                for (int digits = 1; digits <= 17; digits++) {
                        snprintf(text, sizeof(text), "%.*g", digits, v);
                        if (strtod(text, NULL) == v)
                                break;
                }
        }
        if (isfinite(v) || !json)
                strbuf_append(sb, text);
        else
                append_word(sb, json, "%s", text);
}

static void append_errno(struct strbuf *sb, int32_t e, bool json) {
        const char *name = e > 0 ? strerrorname_np(e) : NULL;

        if (name)
                append_word(sb, json, "%s(%" PRId32 ")", name, e);
        else
                append_word(sb, json, "ERRNO(%" PRId32 ")", e);
}

static int64_t sign_extend(uint64_t v, size_t size) {
        unsigned shift = (unsigned) (64 - 8 * size);

        return (int64_t) (v << shift) >> shift;
}

/* Whether a value of @size bytes can be shown in @format. */
static bool format_fits(uint8_t format, size_t size) {
        switch (format) {
        case EVENTHEADER_FMT_UNSIGNED_INT:
        case EVENTHEADER_FMT_SIGNED_INT:
        case EVENTHEADER_FMT_HEX_INT:
                return size == 1 || size == 2 || size == 4 || size == 8;
        case EVENTHEADER_FMT_ERRNO:
        case EVENTHEADER_FMT_PID:
                return size == 4;
        case EVENTHEADER_FMT_TIME:
        case EVENTHEADER_FMT_FLOAT:
                return size == 4 || size == 8;
        case EVENTHEADER_FMT_BOOLEAN:
                return size == 1 || size == 2 || size == 4;
        case EVENTHEADER_FMT_HEX_BYTES:
                return true;
        case EVENTHEADER_FMT_STRING8:
                return size == 1;
        case EVENTHEADER_FMT_STRING_UTF:
                return size == 2 || size == 4;
        case EVENTHEADER_FMT_UUID:
                return size == 16;
        case EVENTHEADER_FMT_PORT:
                return size == 2;
        case EVENTHEADER_FMT_IP_ADDRESS:
        case EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE:
                return size == 4 || size == 16;
        default:
                return false;
        }
}

/* A fixed-size value (1, 2, 4, 8 or 16 bytes) in a format that fits it. */
static void append_fixed(struct strbuf *sb, const uint8_t *p, size_t size, uint8_t format, bool big_endian,
                         bool json) {
        uint64_t u = size <= 8 ? eventheader_read_uint(p, size, big_endian) : 0;
        char addr[INET6_ADDRSTRLEN];

        switch (format) {
        case EVENTHEADER_FMT_SIGNED_INT:
                strbuf_append_i64(sb, sign_extend(u, size));
                break;
        case EVENTHEADER_FMT_HEX_INT:
                append_word(sb, json, "0x%" PRIX64, u);
                break;
        case EVENTHEADER_FMT_ERRNO:
                append_errno(sb, (int32_t) (uint32_t) u, json);
                break;
        case EVENTHEADER_FMT_PID:
                strbuf_append_i64(sb, (int32_t) (uint32_t) u);
                break;
        case EVENTHEADER_FMT_TIME:
                append_time(sb, sign_extend(u, size), json);
                break;
        case EVENTHEADER_FMT_BOOLEAN:
                /* Anything but 0 and 1 is shown as the number it is. */
                if (u <= 1)
                        strbuf_append(sb, u ? "true" : "false");
                else
                        strbuf_append_i64(sb, (int32_t) (uint32_t) u);
                break;
        case EVENTHEADER_FMT_FLOAT:
                append_float(sb, p, size, big_endian, json);
                break;
        case EVENTHEADER_FMT_HEX_BYTES:
                append_hex_bytes(sb, p, size, json);
                break;
        case EVENTHEADER_FMT_STRING8:
                append_string(sb, p, size, CHARSET_LATIN1, big_endian, json);
                break;
        case EVENTHEADER_FMT_STRING_UTF:
                append_string(sb, p, size, size == 2 ? CHARSET_UTF16 : CHARSET_UTF32, big_endian, json);
                break;
        case EVENTHEADER_FMT_UUID:
                append_uuid(sb, p, json);
                break;
        case EVENTHEADER_FMT_PORT:
                strbuf_append_u64(sb, (unsigned) p[0] << 8 | p[1]);
                break;
        case EVENTHEADER_FMT_IP_ADDRESS:
        case EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE:
                if (!inet_ntop(size == 4 ? AF_INET : AF_INET6, p, addr, sizeof(addr)))
                        return append_hex_bytes(sb, p, size, json);
                append_word(sb, json, "%s", addr);
                break;
        default:
                strbuf_append_u64(sb, u);
                break;
        }
}

static bool is_string_format(uint8_t format) {
        return format >= EVENTHEADER_FMT_STRING8 && format <= EVENTHEADER_FMT_STRING_JSON;
}

/* A VALUE item, its format chosen as eventheader.h says: the field's own
 * where it fits the encoding (and, for counted char8 data, the length),
 * else the encoding's default. */
static void append_value(struct strbuf *sb, const struct eventheader_item *it, bool json) {
        uint8_t format = it->format;
        size_t n = it->value_len;

        switch (it->encoding) {
        case EVENTHEADER_ENC_VALUE8:
        case EVENTHEADER_ENC_VALUE16:
        case EVENTHEADER_ENC_VALUE32:
        case EVENTHEADER_ENC_VALUE64:
        case EVENTHEADER_ENC_VALUE128:
                if (format == EVENTHEADER_FMT_DEFAULT || !format_fits(format, n))
                        format = n == 16 ? EVENTHEADER_FMT_HEX_BYTES : EVENTHEADER_FMT_UNSIGNED_INT;
                return append_fixed(sb, it->value, n, format, it->big_endian, json);
        case EVENTHEADER_ENC_STRING_LENGTH16_CHAR8:
        case EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8:
                /* Any format: a fixed-size one applies when the length is
                 * one of its sizes; length 0 is null. */
                if (format != EVENTHEADER_FMT_DEFAULT && format != EVENTHEADER_FMT_HEX_BYTES &&
                    !is_string_format(format) && format <= EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE) {
                        if (n == 0)
                                return strbuf_append(sb, "null");
                        if (format_fits(format, n))
                                return append_fixed(sb, it->value, n, format, it->big_endian, json);
                        format = EVENTHEADER_FMT_DEFAULT;
                }
                if (format == EVENTHEADER_FMT_DEFAULT || format > EVENTHEADER_FMT_IP_ADDRESS_OBSOLETE)
                        format = it->encoding == EVENTHEADER_ENC_BINARY_LENGTH16_CHAR8 ? EVENTHEADER_FMT_HEX_BYTES :
                                                                                          EVENTHEADER_FMT_STRING_UTF;
                break;
        default:
                /* Zero-terminated strings, and counted UTF-16/32 ones. */
                if (format != EVENTHEADER_FMT_HEX_BYTES && !is_string_format(format))
                        format = EVENTHEADER_FMT_STRING_UTF;
                if (format == EVENTHEADER_FMT_STRING8 && it->unit != 1)
                        format = EVENTHEADER_FMT_STRING_UTF;
                break;
        }

        switch (format) {
        case EVENTHEADER_FMT_HEX_BYTES:
                append_hex_bytes(sb, it->value, n, json);
                break;
        case EVENTHEADER_FMT_STRING8:
                append_string(sb, it->value, n, CHARSET_LATIN1, it->big_endian, json);
                break;
        case EVENTHEADER_FMT_STRING_UTF:
                append_string(sb, it->value, n,
                              it->unit == 1 ? CHARSET_UTF8 : it->unit == 2 ? CHARSET_UTF16 : CHARSET_UTF32,
                              it->big_endian, json);
                break;
        default:
                append_string_bom(sb, it->value, n, it->unit, it->big_endian, json);
                break;
        }
}

struct render {
        struct strbuf *sb;
        bool json;
        bool need_separator[NESTING_MAX];
        unsigned level;
};

static void append_name(struct render *r, const struct eventheader_item *it) {
        if (r->json) {
                struct strbuf name = STRBUF_INIT;

                strbuf_append_n(&name, it->name, it->name_len);
                if (it->tag)
                        strbuf_printf(&name, ";tag=0x%X", it->tag);
                if (name.oom)
                        r->sb->oom = true;
                json_append_string(r->sb, name.buf ?: "", name.len);
                strbuf_append_c(r->sb, ':');
                strbuf_done(&name);
        } else {
                text_escape_append(r->sb, it->name, it->name_len, TEXT_ESCAPE_TERMINAL);
                strbuf_append_c(r->sb, '=');
        }
}

static int render_item(const struct eventheader_item *it, void *userdata) {
        struct render *r = userdata;
        bool opens = it->kind == EVENTHEADER_ITEM_ARRAY_BEGIN || it->kind == EVENTHEADER_ITEM_STRUCT_BEGIN;

        if (it->kind == EVENTHEADER_ITEM_ARRAY_END || it->kind == EVENTHEADER_ITEM_STRUCT_END) {
                r->level--;
                strbuf_append_c(r->sb, it->kind == EVENTHEADER_ITEM_ARRAY_END ? ']' : '}');
                return 0;
        }
        if (r->need_separator[r->level])
                /* Text: fields apart by spaces, array elements by commas. */
                strbuf_append_c(r->sb, r->json || it->in_array ? ',' : ' ');
        r->need_separator[r->level] = true;
        if (!it->in_array)
                append_name(r, it);
        if (opens) {
                /* The decoder bounds the nesting; this only keeps us in
                 * our array if that ever changed. */
                if (r->level + 1 >= NESTING_MAX)
                        return -E2BIG;
                r->need_separator[++r->level] = false;
                strbuf_append_c(r->sb, it->kind == EVENTHEADER_ITEM_ARRAY_BEGIN ? '[' : '{');
                return 0;
        }
        append_value(r->sb, it, r->json);
        return 0;
}

/* Renders the fields into a buffer of its own, so that nothing of a
 * malformed event reaches @sb. */
static int render_fields(const struct eventheader_event *ev, bool json, struct strbuf *out, const char **reason) {
        struct render r = { .sb = out, .json = json };
        int ret;

        if (json)
                strbuf_append_c(out, '{');
        ret = eventheader_enumerate(ev, render_item, &r, reason);
        if (ret == -E2BIG && reason)
                *reason = "nested too deep";
        if (ret < 0)
                return ret;
        if (json)
                strbuf_append_c(out, '}');
        return 0;
}

static int finish(struct strbuf *tmp, struct strbuf *sb, const char **reason) {
        if (tmp->oom) {
                strbuf_done(tmp);
                if (reason)
                        *reason = "out of memory";
                return -ENOMEM;
        }
        strbuf_append_n(sb, tmp->buf ?: "", tmp->len);
        strbuf_done(tmp);
        return 0;
}

int eventheader_format_text(const char *name, size_t name_len, const void *payload, size_t len, struct strbuf *sb,
                            const char **reason) {
        struct strbuf tmp = STRBUF_INIT;
        struct eventheader_event ev;
        int r;

        r = eventheader_decode(name, name_len, payload, len, &ev, reason);
        if (r < 0)
                return r;

        text_escape_append(&tmp, ev.tracepoint.provider, ev.tracepoint.provider_len, TEXT_ESCAPE_TERMINAL);
        strbuf_append_c(&tmp, ':');
        if (ev.has_metadata)
                text_escape_append(&tmp, ev.name, ev.name_len, TEXT_ESCAPE_TERMINAL);
        else
                strbuf_append(&tmp, "(no metadata)");
        strbuf_printf(&tmp, " level=%u keyword=0x%" PRIx64, ev.level, ev.tracepoint.keyword);
        if (ev.tracepoint.group) {
                strbuf_append(&tmp, " group=");
                text_escape_append(&tmp, ev.tracepoint.group, ev.tracepoint.group_len, TEXT_ESCAPE_TERMINAL);
        }
        if (ev.opcode)
                strbuf_printf(&tmp, " opcode=%u", ev.opcode);
        if (ev.id || ev.version)
                strbuf_printf(&tmp, " id=%u version=%u", ev.id, ev.version);
        if (ev.tag)
                strbuf_printf(&tmp, " tag=0x%X", ev.tag);
        if (ev.has_activity_id) {
                strbuf_append(&tmp, " activity=");
                append_uuid(&tmp, ev.activity_id, false);
        }
        if (ev.has_related_id) {
                strbuf_append(&tmp, " related=");
                append_uuid(&tmp, ev.related_id, false);
        }
        if (!ev.has_metadata) {
                /* The fields are defined elsewhere (a manifest by id). */
                strbuf_append(&tmp, " data=");
                append_hex_bytes(&tmp, ev.data, ev.data_len, false);
        } else if (ev.metadata_len > 0) {
                strbuf_append_c(&tmp, ' ');
                r = render_fields(&ev, false, &tmp, reason);
                if (r < 0) {
                        strbuf_done(&tmp);
                        return r;
                }
        }
        return finish(&tmp, sb, reason);
}

int eventheader_format_json(const char *name, size_t name_len, const void *payload, size_t len, struct strbuf *sb,
                            const char **reason) {
        struct strbuf tmp = STRBUF_INIT;
        struct eventheader_event ev;
        int r;

        r = eventheader_decode(name, name_len, payload, len, &ev, reason);
        if (r < 0)
                return r;

        strbuf_append(&tmp, "\"fields\":");
        r = render_fields(&ev, true, &tmp, reason);
        if (r < 0) {
                strbuf_done(&tmp);
                return r;
        }
        strbuf_append(&tmp, ",\"eventheader\":{\"provider\":");
        json_append_string(&tmp, ev.tracepoint.provider, ev.tracepoint.provider_len);
        strbuf_append(&tmp, ",\"event\":");
        if (ev.has_metadata)
                json_append_string(&tmp, ev.name, ev.name_len);
        else
                strbuf_append(&tmp, "null");
        if (ev.tracepoint.group) {
                strbuf_append(&tmp, ",\"group\":");
                json_append_string(&tmp, ev.tracepoint.group, ev.tracepoint.group_len);
        }
        strbuf_append(&tmp, ",\"level\":");
        strbuf_append_u64(&tmp, ev.level);
        strbuf_printf(&tmp, ",\"keyword\":\"0x%" PRIx64 "\"", ev.tracepoint.keyword);
        strbuf_append(&tmp, ",\"opcode\":");
        strbuf_append_u64(&tmp, ev.opcode);
        strbuf_append(&tmp, ",\"tag\":");
        strbuf_append_u64(&tmp, ev.tag);
        strbuf_append(&tmp, ",\"id\":");
        strbuf_append_u64(&tmp, ev.id);
        strbuf_append(&tmp, ",\"version\":");
        strbuf_append_u64(&tmp, ev.version);
        strbuf_append(&tmp, ",\"flags\":");
        strbuf_append_u64(&tmp, ev.flags);
        if (ev.has_activity_id) {
                strbuf_append(&tmp, ",\"activity\":");
                append_uuid(&tmp, ev.activity_id, true);
        }
        if (ev.has_related_id) {
                strbuf_append(&tmp, ",\"related_activity\":");
                append_uuid(&tmp, ev.related_id, true);
        }
        if (!ev.has_metadata) {
                strbuf_append(&tmp, ",\"data\":");
                append_hex_bytes(&tmp, ev.data, ev.data_len, true);
        }
        strbuf_append_c(&tmp, '}');
        return finish(&tmp, sb, reason);
}
