/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the payload encoder. The first input byte picks one of
 * a fixed set of events and the path:
 *   typed (bit 7 clear): the following bytes make struct ueb_value's (type,
 *     length, integer, NULL or not) pointing into the rest of the input;
 *     event_encode_values_alloc() must accept exactly what a plain model of
 *     the rules in <uebroker.h> accepts, and an accepted payload must pass
 *     the validator and give every value back;
 *   text (bit 7 set): the rest is NUL-separated "field=value" assignments
 *     for event_encode_payload(); an accepted payload must pass the
 *     validator. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-def.h"
#include "event-encode.h"
#include "fuzz-check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const definitions[] = {
        "e u32 a",
        "e",
        "e __data_loc char[] msg;u32 x",
        "e __rel_loc char[] s",
        "e u8 a;s16 b;u64 c;int d;char e",
        "e __data_loc u8[] b;__rel_loc u32[] w",
        "e u8 pad;__data_loc char[] s;char[3] c;__rel_loc unsigned char[] u",
        "e struct s x 5;__data_loc s64[] y",
        "e unsigned char[4] a;__data_loc unsigned char[] b;__rel_loc u16[] c;s8 d",
};
#define N_DEFINITIONS (sizeof(definitions) / sizeof(definitions[0]))
#define VALUE_BYTES 12 /* type, flags, length (2), integer (8) */
#define VALUES_MAX 16

static struct event_def *events[N_DEFINITIONS];

int LLVMFuzzerInitialize(int *argc, char ***argv) {
        for (size_t i = 0; i < N_DEFINITIONS; i++) {
                struct event_error error;

                if (event_def_parse(definitions[i], 0, &events[i], &error) < 0) {
                        fprintf(stderr, "definition '%s': %s\n", definitions[i], error.message);
                        abort();
                }
        }
        return 0;
}

/* The rules of <uebroker.h>, written out plainly. */
static bool model_integer_fits(const struct event_field *f, const struct ueb_value *v) {
        static const struct { uint32_t size; bool is_signed; } types[] = {
                [UEB_TYPE_U8] = { 1, false }, [UEB_TYPE_U16] = { 2, false }, [UEB_TYPE_U32] = { 4, false },
                [UEB_TYPE_U64] = { 8, false }, [UEB_TYPE_S8] = { 1, true },   [UEB_TYPE_S16] = { 2, true },
                [UEB_TYPE_S32] = { 4, true },  [UEB_TYPE_S64] = { 8, true },
        };

        if (v->type < UEB_TYPE_U8 || v->type > UEB_TYPE_S64)
                return false;
        if (types[v->type].size != f->size || types[v->type].is_signed != f->is_signed)
                return false;
        switch (v->type) {
        case UEB_TYPE_U8: return v->u <= UINT8_MAX;
        case UEB_TYPE_U16: return v->u <= UINT16_MAX;
        case UEB_TYPE_U32: return v->u <= UINT32_MAX;
        case UEB_TYPE_S8: return v->s >= INT8_MIN && v->s <= INT8_MAX;
        case UEB_TYPE_S16: return v->s >= INT16_MIN && v->s <= INT16_MAX;
        case UEB_TYPE_S32: return v->s >= INT32_MIN && v->s <= INT32_MAX;
        default: return true;
        }
}

static bool model_accepts(const struct event_def *ev, const struct ueb_value *v, size_t n) {
        uint64_t total = ev->min_size;

        if (n != ev->n_fields)
                return false;
        for (size_t i = 0; i < n; i++) {
                const struct event_field *f = &ev->fields[i];
                bool pointer = v[i].type == UEB_TYPE_STRING || v[i].type == UEB_TYPE_BYTES;

                if (pointer && !v[i].p && v[i].len > 0)
                        return false;
                switch (f->kind) {
                case EVENT_FIELD_SCALAR:
                        if (!model_integer_fits(f, &v[i]))
                                return false;
                        break;
                case EVENT_FIELD_ARRAY:
                        if (!pointer || v[i].len > f->size)
                                return false;
                        break;
                case EVENT_FIELD_STRUCT:
                        if (v[i].type != UEB_TYPE_BYTES || v[i].len != f->size)
                                return false;
                        break;
                default:
                        if (f->is_char) {
                                if (v[i].type != UEB_TYPE_STRING)
                                        return false;
                                total += (uint64_t) v[i].len + 1;
                        } else {
                                if (v[i].type != UEB_TYPE_BYTES || v[i].len % f->element_size != 0)
                                        return false;
                                total += v[i].len;
                        }
                        break;
                }
        }
        return total + EVENT_COMMON_HEADER_SIZE <= 0xffff;
}

/* Every value comes back out of an accepted payload. */
static void check_values_back(const struct event_def *ev, const struct ueb_value *v, const uint8_t *p, size_t len) {
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];
                const uint8_t *at = p + f->offset - EVENT_COMMON_HEADER_SIZE;
                size_t start = 0, span = 0;
                uint64_t u = 0;

                switch (f->kind) {
                case EVENT_FIELD_SCALAR:
                        memcpy(&u, at, f->size); /* little endian: the low bytes */
                        check(f->size == 8 ? u == v[i].u : u == (v[i].u & ((1ull << (f->size * 8)) - 1)));
                        break;
                case EVENT_FIELD_ARRAY:
                        check(v[i].len == 0 || memcmp(at, v[i].p, v[i].len) == 0);
                        for (size_t k = v[i].len; k < f->size; k++)
                                check(at[k] == 0);
                        break;
                case EVENT_FIELD_STRUCT:
                        check(memcmp(at, v[i].p, f->size) == 0);
                        break;
                default:
                        check(event_field_dynamic_span(f, p, len, &start, &span) == 0);
                        check(span == v[i].len + (f->is_char ? 1 : 0));
                        check(v[i].len == 0 || memcmp(p + start, v[i].p, v[i].len) == 0);
                        if (f->is_char)
                                check(p[start + v[i].len] == 0);
                        break;
                }
        }
}

static void fuzz_typed(const struct event_def *ev, const uint8_t *data, size_t size) {
        struct ueb_value values[VALUES_MAX + 1];
        const uint8_t *pool;
        size_t n, pool_size, needed;
        void *payload = NULL;
        size_t len = 0;
        int r;

        if (size < 1)
                return;
        /* One fewer, as many, or one more values than fields. */
        n = ev->n_fields + data[0] % 3;
        n = n == 0 ? 0 : n - 1;
        if (n > VALUES_MAX)
                return;
        data++;
        size--;
        needed = n * VALUE_BYTES;
        if (size < needed)
                return;
        pool = data + needed;
        pool_size = size - needed;

        for (size_t i = 0; i < n; i++) {
                const uint8_t *d = data + i * VALUE_BYTES;
                uint16_t declared;

                memcpy(&declared, d + 2, 2);
                values[i] = (struct ueb_value) { .type = d[0] % 12 }; /* 0 and 11 are no type */
                if (values[i].type == UEB_TYPE_STRING || values[i].type == UEB_TYPE_BYTES) {
                        /* Within the input, or NULL (allowed only with no bytes). */
                        values[i].len = (uint32_t) (declared % (pool_size + 1));
                        values[i].p = d[1] & 1 ? NULL : pool;
                } else
                        memcpy(&values[i].u, d + 4, 8);
        }

        r = event_encode_values_alloc(ev, values, n, &payload, &len, NULL);
        check(r == 0 || r == -EINVAL || r == -EMSGSIZE);
        check((r == 0) == model_accepts(ev, values, n));
        if (r < 0) {
                check(!payload);
                return;
        }
        check(len >= ev->min_size);
        check(event_def_validate_payload(ev, payload, len) == 0);
        check_values_back(ev, values, payload, len);
        free(payload);
}

static void fuzz_text(const struct event_def *ev, const uint8_t *data, size_t size) {
        char *copy = malloc(size + 1), *assignments[VALUES_MAX];
        size_t n = 0;
        void *payload = NULL;
        size_t len = 0;
        int r;

        if (!copy)
                return;
        memcpy(copy, data, size);
        copy[size] = '\0';
        for (char *p = copy; p < copy + size + 1 && n < VALUES_MAX; p += strlen(p) + 1)
                assignments[n++] = p;

        r = event_encode_payload(ev, assignments, n, &payload, &len, NULL);
        check(r == 0 || r == -EINVAL);
        if (r == 0) {
                check(event_def_validate_payload(ev, payload, len) == 0);
                free(payload);
        } else
                check(!payload);
        free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct event_def *ev;

        if (size < 1)
                return 0;
        ev = events[(data[0] & 0x7f) % N_DEFINITIONS];
        if (data[0] & 0x80)
                fuzz_text(ev, data + 1, size - 1);
        else
                fuzz_typed(ev, data + 1, size - 1);
        return 0;
}
