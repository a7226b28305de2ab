/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the payload validator and the dynamic-field decoder.
 * The first input byte picks one of a fixed set of events, the rest is the
 * payload. Both functions are compared with a plain model of uebroker-event-command(7)
 * section 3 written with 64-bit arithmetic. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-def.h"
#include "fuzz-check.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const definitions[] = {
        "e u32 a",
        "e",
        "e __data_loc char[] msg;u32 x",
        "e __rel_loc char[] s",
        "e u32 x;__rel_loc char[] s",
        "e __data_loc u8[] b;__rel_loc u32[] w",
        "t_dl __data_loc char[] msg;__rel_loc char[] rmsg;__data_loc u8[] bytes;__rel_loc u32[] words",
        "e u8 pad;__data_loc char[] s;char[3] c;__rel_loc unsigned char[] u",
        "e struct s x 20;__data_loc char y",
        "e __data_loc unsigned char[] a;__data_loc char b;__rel_loc s64[] c;u16 d",
};
#define N_DEFINITIONS (sizeof(definitions) / sizeof(definitions[0]))

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

/* What uebroker-event-command(7), RECORDS says about one dynamic field: 0 with its span,
 * -EINVAL if the payload does not even hold the field, else -EFAULT. */
static int model_span(const struct event_field *f, const uint8_t *p, size_t len, uint64_t *ret_start,
                      uint64_t *ret_size) {
        uint64_t at = f->offset - EVENT_COMMON_HEADER_SIZE, start, size;
        uint32_t loc;

        if (at + 4 > len)
                return -EINVAL;
        memcpy(&loc, p + at, sizeof(loc)); /* host order, as the kernel reads it */
        size = loc >> 16;
        if (f->kind == EVENT_FIELD_DATA_LOC) {
                /* Counts from the record start; the common header is not the writer's. */
                if ((loc & 0xffff) < EVENT_COMMON_HEADER_SIZE)
                        return -EFAULT;
                start = (loc & 0xffff) - EVENT_COMMON_HEADER_SIZE;
        } else
                start = at + 4 + (loc & 0xffff);
        if (start + size > len)
                return -EFAULT;
        if (f->is_char && (size == 0 || p[start + size - 1] != 0))
                return -EFAULT;
        *ret_start = start;
        *ret_size = size;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const struct event_def *ev;
        const uint8_t *payload;
        size_t len;
        int r, expect = 0;

        if (size < 1)
                return 0;
        ev = events[data[0] % N_DEFINITIONS];
        payload = data + 1;
        len = size - 1;

        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];
                uint64_t m_start = 0, m_size = 0;
                size_t start = SIZE_MAX, span = SIZE_MAX;
                int m;

                if (f->kind != EVENT_FIELD_DATA_LOC && f->kind != EVENT_FIELD_REL_LOC)
                        continue;
                m = model_span(f, payload, len, &m_start, &m_size);
                r = event_field_dynamic_span(f, payload, len, &start, &span);
                check(r == m);
                if (r == 0) {
                        check(start == m_start && span == m_size);
                        check(start <= len && span <= len - start);
                        if (f->is_char)
                                check(span > 0 && payload[start + span - 1] == 0);
                } else
                        check(start == SIZE_MAX && span == SIZE_MAX);
                if (m < 0 && expect == 0)
                        expect = -EFAULT;
        }
        if (len < ev->min_size)
                expect = -EINVAL;

        r = event_def_validate_payload(ev, payload, len);
        check(r == expect);

        /* A valid payload stays valid with bytes appended: nothing is
         * measured from its end. */
        if (r == 0 && len < 4096) {
                uint8_t *longer = malloc(len + 16);

                if (longer) {
                        memcpy(longer, payload, len);
                        memset(longer + len, 0xa5, 16);
                        check(event_def_validate_payload(ev, longer, len + 16) == 0);
                        free(longer);
                }
        }
        return 0;
}
