/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Payloads from "field=value" text (see event-encode.h). */
#include "event-encode.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"

/* The dynamic-location offset and size are 16-bit each. */
#define DYNAMIC_MAX 0xffffu

static int encode_fail(struct event_error *error, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int encode_fail(struct event_error *error, const char *format, ...) {
        va_list ap;

        if (error) {
                error->code = -EINVAL;
                va_start(ap, format);
                vsnprintf(error->message, sizeof(error->message), format, ap);
                va_end(ap);
        }
        return -EINVAL;
}

static int parse_integer(const struct event_field *f, const char *value, uint64_t *ret, struct event_error *error) {
        char *end;

        if (!*value)
                return encode_fail(error, "%s: empty value", f->name);
        errno = 0;
        if (f->is_signed) {
                long long v = strtoll(value, &end, 0);
                long long min = f->size == 8 ? INT64_MIN : -(1ll << (f->size * 8 - 1));
                long long max = f->size == 8 ? INT64_MAX : (1ll << (f->size * 8 - 1)) - 1;

                if (*end || errno == EINVAL)
                        return encode_fail(error, "%s: '%s' is not an integer", f->name, value);
                if (errno == ERANGE || v < min || v > max)
                        return encode_fail(error, "%s: %s is outside %lld..%lld (%s)", f->name, value, min, max,
                                           f->type);
                *ret = (uint64_t) v;
        } else {
                unsigned long long v, max = f->size == 8 ? UINT64_MAX : (1ull << (f->size * 8)) - 1;
                const char *p = value;

                while (*p == ' ')
                        p++;
                if (*p == '-')
                        return encode_fail(error, "%s: %s is negative, %s is unsigned", f->name, value, f->type);
                v = strtoull(value, &end, 0);
                if (*end || errno == EINVAL)
                        return encode_fail(error, "%s: '%s' is not an integer", f->name, value);
                if (errno == ERANGE || v > max)
                        return encode_fail(error, "%s: %s is outside 0..%llu (%s)", f->name, value, max, f->type);
                *ret = v;
        }
        return 0;
}

static void store_integer(uint8_t *at, uint32_t size, uint64_t v) {
        uint8_t u8 = (uint8_t) v;
        uint16_t u16 = (uint16_t) v;
        uint32_t u32 = (uint32_t) v;

        switch (size) {
        case 1:
                memcpy(at, &u8, 1);
                break;
        case 2:
                memcpy(at, &u16, 2);
                break;
        case 4:
                memcpy(at, &u32, 4);
                break;
        default:
                memcpy(at, &v, 8);
                break;
        }
}

static int hex_value(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Decodes hex text into @out (room for @max bytes); returns the byte count. */
static int parse_hex(const struct event_field *f, const char *value, uint8_t *out, size_t max, size_t *ret_len,
                     struct event_error *error) {
        size_t n = strlen(value);

        if (n >= 2 && value[0] == '0' && (value[1] == 'x' || value[1] == 'X')) {
                value += 2;
                n -= 2;
        }
        if (n % 2)
                return encode_fail(error, "%s: hex bytes come in pairs of digits", f->name);
        if (n / 2 > max)
                return encode_fail(error, "%s: %zu bytes do not fit in %zu", f->name, n / 2, max);
        for (size_t i = 0; i < n / 2; i++) {
                int hi = hex_value(value[2 * i]), lo = hex_value(value[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return encode_fail(error, "%s: '%s' is not hex", f->name, value);
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        *ret_len = n / 2;
        return 0;
}

int event_encode_payload(const struct event_def *ev, char *const *assignments, size_t n, void **ret,
                         size_t *ret_len, struct event_error *error) {
        _cleanup_free_ const char **values = NULL;
        _cleanup_free_ uint8_t *payload = NULL;
        size_t len, dynamic_room = 0;

        values = calloc(ev->n_fields ?: 1, sizeof(*values));
        if (!values)
                return -ENOMEM;

        /* Match assignments to fields. */
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(assignments[i], '=');
                const struct event_field *f;
                char name[EVENT_FIELD_NAME_MAX + 1];
                size_t name_len;

                if (!eq)
                        return encode_fail(error, "'%s' is not FIELD=VALUE", assignments[i]);
                name_len = (size_t) (eq - assignments[i]);
                if (name_len == 0 || name_len > EVENT_FIELD_NAME_MAX)
                        return encode_fail(error, "'%s' does not start with a field name", assignments[i]);
                memcpy(name, assignments[i], name_len);
                name[name_len] = '\0';
                f = event_def_find_field(ev, name);
                if (!f)
                        return encode_fail(error, "event %s has no field '%s'", ev->name, name);
                if (values[f - ev->fields])
                        return encode_fail(error, "%s is assigned twice", name);
                values[f - ev->fields] = eq + 1;
                if (event_field_is_dynamic(f)) {
                        size_t vlen = strlen(eq + 1);

                        /* Upper bound: a string and its NUL, or hex. */
                        if (vlen + 1 > DYNAMIC_MAX)
                                return encode_fail(error, "%s: %zu bytes are more than a dynamic field holds",
                                                   name, vlen);
                        dynamic_room += vlen + 1;
                }
        }
        for (size_t i = 0; i < ev->n_fields; i++)
                if (event_field_is_dynamic(&ev->fields[i]) && !values[i])
                        dynamic_room += 1;

        if (ev->min_size + dynamic_room + EVENT_COMMON_HEADER_SIZE > DYNAMIC_MAX)
                return encode_fail(error, "the payload would be longer than %u bytes", DYNAMIC_MAX);
        payload = calloc(1, ev->min_size + dynamic_room + 1);
        if (!payload)
                return -ENOMEM;
        len = ev->min_size;

        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];
                const char *value = values[i];
                size_t at = f->offset - EVENT_COMMON_HEADER_SIZE, vlen, dyn_len;
                uint32_t loc, offset;
                uint64_t v = 0;
                int r;

                switch (f->kind) {
                case EVENT_FIELD_SCALAR:
                        if (!value)
                                break;
                        r = parse_integer(f, value, &v, error);
                        if (r < 0)
                                return r;
                        store_integer(payload + at, f->size, v);
                        break;
                case EVENT_FIELD_ARRAY:
                        if (!value)
                                break;
                        vlen = strlen(value);
                        if (vlen > f->size)
                                return encode_fail(error, "%s: %zu bytes do not fit in %s", f->name, vlen, f->type);
                        memcpy(payload + at, value, vlen);
                        break;
                case EVENT_FIELD_STRUCT:
                        if (!value)
                                break;
                        r = parse_hex(f, value, payload + at, f->size, &vlen, error);
                        if (r < 0)
                                return r;
                        break;
                case EVENT_FIELD_DATA_LOC:
                case EVENT_FIELD_REL_LOC:
                        if (f->is_char) {
                                vlen = value ? strlen(value) : 0;
                                memcpy(payload + len, value ?: "", vlen);
                                payload[len + vlen] = '\0';
                                dyn_len = vlen + 1;
                        } else if (value) {
                                r = parse_hex(f, value, payload + len, dynamic_room, &dyn_len, error);
                                if (r < 0)
                                        return r;
                        } else
                                dyn_len = 0;
                        /* __data_loc counts from the record start (header
                         * included), __rel_loc from the end of the field. */
                        offset = f->kind == EVENT_FIELD_DATA_LOC ? (uint32_t) (len + EVENT_COMMON_HEADER_SIZE) :
                                                                   (uint32_t) (len - at - sizeof(uint32_t));
                        loc = (uint32_t) dyn_len << 16 | offset;
                        memcpy(payload + at, &loc, sizeof(loc));
                        len += dyn_len;
                        break;
                }
        }

        *ret = payload;
        payload = NULL;
        *ret_len = len;
        return 0;
}
