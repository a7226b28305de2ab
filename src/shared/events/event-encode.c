/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Payloads from typed values and from "field=value" text (see event-encode.h). */
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

static int encode_failv(struct event_error *error, int code, const char *prefix, const char *format, va_list ap)
        __attribute__((format(printf, 4, 0)));
static int encode_failv(struct event_error *error, int code, const char *prefix, const char *format, va_list ap) {
        if (error) {
                size_t n = (size_t) snprintf(error->message, sizeof(error->message), "%s", prefix);

                error->code = code;
                if (n < sizeof(error->message))
                        vsnprintf(error->message + n, sizeof(error->message) - n, format, ap);
        }
        return code;
}

static int encode_fail(struct event_error *error, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int encode_fail(struct event_error *error, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        encode_failv(error, -EINVAL, "", format, ap);
        va_end(ap);
        return -EINVAL;
}

/* How a refused value is named: typed values come in field order ("field 2
 * (msg): ..."), text assignments by name ("msg: ...", as the caller wrote). */
enum value_naming {
        NAMED_BY_POSITION,
        NAMED_BY_NAME,
};

struct encode_error {
        struct event_error *error;
        enum value_naming naming;
};

static int field_fail(const struct encode_error *e, int code, const struct event_def *ev,
                      const struct event_field *f, const char *format, ...) __attribute__((format(printf, 5, 6)));
static int field_fail(const struct encode_error *e, int code, const struct event_def *ev,
                      const struct event_field *f, const char *format, ...) {
        char prefix[EVENT_FIELD_NAME_MAX + 32];
        va_list ap;

        if (!e->error)
                return code;
        if (e->naming == NAMED_BY_POSITION)
                snprintf(prefix, sizeof(prefix), "field %zu (%s): ", (size_t) (f - ev->fields) + 1, f->name);
        else
                snprintf(prefix, sizeof(prefix), "%s: ", f->name);
        va_start(ap, format);
        encode_failv(e->error, code, prefix, format, ap);
        va_end(ap);
        return code;
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


static bool value_is_integer(uint32_t type) {
        return type >= UEB_TYPE_U8 && type <= UEB_TYPE_S64;
}

static bool value_is_pointer(uint32_t type) {
        return type == UEB_TYPE_STRING || type == UEB_TYPE_BYTES;
}

/* UEB_TYPE_U8..U64 then S8..S64: the size doubles within each group. */
static uint32_t integer_size(uint32_t type) {
        return 1u << ((type - UEB_TYPE_U8) % 4);
}

static bool integer_is_signed(uint32_t type) {
        return type >= UEB_TYPE_S8;
}

static uint32_t integer_type(uint32_t size, bool is_signed) {
        uint32_t log2 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;

        return (is_signed ? UEB_TYPE_S8 : UEB_TYPE_U8) + log2;
}

static const char *value_type_name(uint32_t type) {
        static const char *const names[] = {
                [UEB_TYPE_U8] = "u8",   [UEB_TYPE_U16] = "u16", [UEB_TYPE_U32] = "u32",
                [UEB_TYPE_U64] = "u64", [UEB_TYPE_S8] = "s8",   [UEB_TYPE_S16] = "s16",
                [UEB_TYPE_S32] = "s32", [UEB_TYPE_S64] = "s64", [UEB_TYPE_STRING] = "a string",
                [UEB_TYPE_BYTES] = "bytes",
        };

        return type < sizeof(names) / sizeof(names[0]) && names[type] ? names[type] : "an unknown type";
}

/* Whether the value fits the type it claims (a hand-built value may not). */
static bool integer_in_range(const struct ueb_value *v) {
        uint32_t bits = integer_size(v->type) * 8;

        if (bits == 64)
                return true;
        if (integer_is_signed(v->type))
                return v->s >= -(INT64_C(1) << (bits - 1)) && v->s < (INT64_C(1) << (bits - 1));
        return v->u >> bits == 0;
}

/* A value of a fixed-size field (scalar, array, struct) into its bytes at
 * @at. */
static int encode_fixed(const struct event_def *ev, const struct event_field *f, const struct ueb_value *v,
                        uint8_t *at, const struct encode_error *error) {
        switch (f->kind) {
        case EVENT_FIELD_SCALAR:
                if (!value_is_integer(v->type) || integer_size(v->type) != f->size ||
                    integer_is_signed(v->type) != f->is_signed)
                        return field_fail(error, -EINVAL, ev, f, "%s takes %s, not %s", f->type,
                                          value_type_name(integer_type(f->size, f->is_signed)),
                                          value_type_name(v->type));
                if (!integer_in_range(v))
                        return field_fail(error, -EINVAL, ev, f, "the value is outside %s", value_type_name(v->type));
                store_integer(at, f->size, v->u);
                return 0;
        case EVENT_FIELD_ARRAY:
                if (!value_is_pointer(v->type))
                        return field_fail(error, -EINVAL, ev, f, "%s takes a string or bytes, not %s", f->type,
                                          value_type_name(v->type));
                if (v->len > f->size)
                        return field_fail(error, -EMSGSIZE, ev, f, "%u bytes do not fit in %s", v->len, f->type);
                if (v->len > 0)
                        memcpy(at, v->p, v->len);
                memset(at + v->len, 0, f->size - v->len);
                return 0;
        case EVENT_FIELD_STRUCT:
                if (v->type != UEB_TYPE_BYTES)
                        return field_fail(error, -EINVAL, ev, f, "%s takes bytes, not %s", f->type,
                                          value_type_name(v->type));
                if (v->len != f->size)
                        return field_fail(error, -EINVAL, ev, f, "%s is %u bytes, not %u", f->type, f->size, v->len);
                memcpy(at, v->p, v->len);
                return 0;
        default:
                return field_fail(error, -EINVAL, ev, f, "not a fixed-size field");
        }
}

/* The length a dynamic field's value takes in the payload (a string's
 * with its NUL). */
static int dynamic_length(const struct event_def *ev, const struct event_field *f, const struct ueb_value *v,
                          size_t *ret, const struct encode_error *error) {
        if (f->is_char) {
                if (v->type != UEB_TYPE_STRING)
                        return field_fail(error, -EINVAL, ev, f, "%s takes a string, not %s", f->type,
                                          value_type_name(v->type));
                *ret = (size_t) v->len + 1;
                return 0;
        }
        if (v->type != UEB_TYPE_BYTES)
                return field_fail(error, -EINVAL, ev, f, "%s takes bytes, not %s", f->type, value_type_name(v->type));
        if (f->element_size > 1 && v->len % f->element_size != 0)
                return field_fail(error, -EINVAL, ev, f, "%u bytes are not a whole number of %u-byte elements",
                                  v->len, f->element_size);
        *ret = v->len;
        return 0;
}

/* A __data_loc or __rel_loc field: its location word at @fixed + @at, its
 * bytes a span after the *@len bytes of payload so far (@len grows). */
static int encode_dynamic(const struct event_def *ev, const struct event_field *f, const struct ueb_value *v,
                          uint8_t *fixed, size_t at, size_t *len, struct event_encode_span *spans,
                          size_t *n_spans, const struct encode_error *error) {
        uint32_t loc, offset;
        size_t dyn_len = 0;
        int r;

        r = dynamic_length(ev, f, v, &dyn_len, error);
        if (r < 0)
                return r;
        if (dyn_len > DYNAMIC_MAX || *len + dyn_len + EVENT_COMMON_HEADER_SIZE > DYNAMIC_MAX)
                return field_fail(error, -EMSGSIZE, ev, f, "%zu bytes make the payload longer than %u bytes",
                                  dyn_len, DYNAMIC_MAX - EVENT_COMMON_HEADER_SIZE);
        if (*n_spans == EVENT_DYNAMIC_FIELDS_MAX)
                return field_fail(error, -EMSGSIZE, ev, f, "more than %d dynamic fields", EVENT_DYNAMIC_FIELDS_MAX);
        /* __data_loc counts from the record start (header included),
         * __rel_loc from the end of the field. */
        offset = f->kind == EVENT_FIELD_DATA_LOC ? (uint32_t) (*len + EVENT_COMMON_HEADER_SIZE) :
                                                   (uint32_t) (*len - at - sizeof(uint32_t));
        loc = (uint32_t) dyn_len << 16 | offset;
        memcpy(fixed + at, &loc, sizeof(loc));
        spans[(*n_spans)++] = (struct event_encode_span) { v->p, v->len, f->is_char };
        *len += dyn_len;
        return 0;
}

static int encode_values(const struct event_def *ev, const struct ueb_value *values, size_t n, uint8_t *fixed,
                         struct event_encode_span *spans, size_t *ret_n_spans, size_t *ret_len,
                         const struct encode_error *error) {
        size_t len = ev->min_size, n_spans = 0;
        int r;

        if (n > 0 && !values)
                return encode_fail(error->error, "%zu value%s at NULL", n, n == 1 ? "" : "s");
        if (n != ev->n_fields)
                return encode_fail(error->error, "event %s has %zu field%s, %zu value%s given", ev->name, ev->n_fields,
                                   ev->n_fields == 1 ? "" : "s", n, n == 1 ? "" : "s");

        for (size_t i = 0; i < n; i++) {
                const struct event_field *f = &ev->fields[i];
                const struct ueb_value *v = &values[i];
                size_t at = f->offset - EVENT_COMMON_HEADER_SIZE;

                if (value_is_pointer(v->type) && !v->p && v->len > 0)
                        return field_fail(error, -EINVAL, ev, f, "%u bytes at NULL", v->len);
                if (f->kind == EVENT_FIELD_DATA_LOC || f->kind == EVENT_FIELD_REL_LOC)
                        r = encode_dynamic(ev, f, v, fixed, at, &len, spans, &n_spans, error);
                else
                        r = encode_fixed(ev, f, v, fixed + at, error);
                if (r < 0)
                        return r;
        }
        if (len + EVENT_COMMON_HEADER_SIZE > DYNAMIC_MAX)
                return encode_fail(error->error, "the payload would be longer than %u bytes", DYNAMIC_MAX);

        *ret_n_spans = n_spans;
        *ret_len = len;
        return 0;
}

int event_encode_values(const struct event_def *ev, const struct ueb_value *values, size_t n, uint8_t *fixed,
                        struct event_encode_span *spans, size_t *ret_n_spans, size_t *ret_len,
                        struct event_error *error) {
        const struct encode_error e = { error, NAMED_BY_POSITION };

        return encode_values(ev, values, n, fixed, spans, ret_n_spans, ret_len, &e);
}

static int encode_values_alloc(const struct event_def *ev, const struct ueb_value *values, size_t n, void **ret,
                               size_t *ret_len, const struct encode_error *error) {
        struct event_encode_span spans[EVENT_DYNAMIC_FIELDS_MAX];
        _cleanup_free_ uint8_t *payload = NULL;
        size_t n_spans, len, at;
        uint8_t *grown;
        int r;

        payload = malloc(ev->min_size ?: 1);
        if (!payload)
                return -ENOMEM;
        r = encode_values(ev, values, n, payload, spans, &n_spans, &len, error);
        if (r < 0)
                return r;
        /* The spans point into @values, not into the payload. */
        grown = realloc(payload, len ?: 1);
        if (!grown)
                return -ENOMEM;
        payload = grown;
        at = ev->min_size;
        for (size_t i = 0; i < n_spans; i++) {
                if (spans[i].len > 0)
                        memcpy(payload + at, spans[i].data, spans[i].len);
                at += spans[i].len;
                if (spans[i].nul)
                        payload[at++] = '\0';
        }

        *ret = TAKE_PTR(payload);
        *ret_len = len;
        return 0;
}

int event_encode_values_alloc(const struct event_def *ev, const struct ueb_value *values, size_t n, void **ret,
                              size_t *ret_len, struct event_error *error) {
        const struct encode_error e = { error, NAMED_BY_POSITION };

        return encode_values_alloc(ev, values, n, ret, ret_len, &e);
}

/* Room for the bytes of hex-valued fields: a struct's size whether assigned
 * or not, a dynamic array's bytes. */
static size_t hex_room(const struct event_field *f, const char *value) {
        if (f->kind == EVENT_FIELD_STRUCT)
                return f->size;
        if (event_field_is_dynamic(f) && !f->is_char && value)
                return strlen(value) / 2 + 1;
        return 0;
}

void event_text_values_done(struct event_text_values *v) {
        free(v->values);
        free(v->bytes);
        *v = (struct event_text_values) {};
}

/* The text of each field (@texts, indexed like ev->fields, NULL when not
 * assigned) from the FIELD=VALUE @assignments. */
static int match_assignments(const struct event_def *ev, char *const *assignments, size_t n, const char **texts,
                             struct event_error *error) {
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
                if (texts[f - ev->fields])
                        return encode_fail(error, "%s is assigned twice", name);
                texts[f - ev->fields] = eq + 1;
        }
        return 0;
}

/* The typed value of field @f from @text (NULL: not assigned, zero or
 * empty); bytes of structs and byte arrays go to @hex at *@hex_used
 * (@hex_size in all), which grows. */
static int value_from_text(const struct event_field *f, const char *text, uint8_t *hex, size_t hex_size,
                           size_t *hex_used, struct ueb_value *ret, struct event_error *error) {
        uint64_t v = 0;
        size_t got = 0;
        int r;

        if (f->kind == EVENT_FIELD_SCALAR) {
                if (text) {
                        r = parse_integer(f, text, &v, error);
                        if (r < 0)
                                return r;
                }
                *ret = (struct ueb_value) { .type = integer_type(f->size, f->is_signed), .u = v };
        } else if (f->kind == EVENT_FIELD_STRUCT) {
                /* Zero padded to the struct's size. */
                if (text) {
                        r = parse_hex(f, text, hex + *hex_used, f->size, &got, error);
                        if (r < 0)
                                return r;
                }
                *ret = ueb_value_bytes(hex + *hex_used, f->size);
                *hex_used += f->size;
        } else if (event_field_is_dynamic(f) && !f->is_char) {
                if (text) {
                        r = parse_hex(f, text, hex + *hex_used, hex_size - *hex_used, &got, error);
                        if (r < 0)
                                return r;
                }
                *ret = ueb_value_bytes(hex + *hex_used, got);
                *hex_used += got;
        } else
                *ret = ueb_value_string(text ?: "");
        return 0;
}

int event_values_from_text(const struct event_def *ev, char *const *assignments, size_t n,
                           struct event_text_values *ret, struct event_error *error) {
        _cleanup_free_ const char **texts = NULL;
        _cleanup_free_ struct ueb_value *values = NULL;
        _cleanup_free_ uint8_t *hex = NULL;
        size_t hex_size = 0, hex_used = 0;
        int r;

        texts = calloc(ev->n_fields ?: 1, sizeof(*texts));
        values = calloc(ev->n_fields ?: 1, sizeof(*values));
        if (!texts || !values)
                return -ENOMEM;
        r = match_assignments(ev, assignments, n, texts, error);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ev->n_fields; i++)
                hex_size += hex_room(&ev->fields[i], texts[i]);
        hex = calloc(hex_size ?: 1, 1);
        if (!hex)
                return -ENOMEM;
        for (size_t i = 0; i < ev->n_fields; i++) {
                r = value_from_text(&ev->fields[i], texts[i], hex, hex_size, &hex_used, &values[i], error);
                if (r < 0)
                        return r;
        }

        *ret = (struct event_text_values) { .values = TAKE_PTR(values), .n_values = ev->n_fields,
                                            .bytes = TAKE_PTR(hex) };
        return 0;
}

int event_encode_payload(const struct event_def *ev, char *const *assignments, size_t n, void **ret,
                         size_t *ret_len, struct event_error *error) {
        _cleanup_(event_text_values_done) struct event_text_values v = {};
        int r;

        r = event_values_from_text(ev, assignments, n, &v, error);
        if (r < 0)
                return r;
        r = encode_values_alloc(ev, v.values, v.n_values, ret, ret_len,
                                &(const struct encode_error) { error, NAMED_BY_NAME });
        /* One code for any assignment refused, whatever the reason. */
        if (r == -EMSGSIZE) {
                if (error)
                        error->code = -EINVAL;
                r = -EINVAL;
        }
        return r;
}
