/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Payload validation, as the kernel does before a record is committed. */
#include "event-def.h"

#include <errno.h>
#include <string.h>

int event_field_dynamic_span(const struct event_field *f, const void *payload, size_t len, size_t *ret_offset,
                             size_t *ret_size) {
        /* Field offsets count the common header; the payload does not. */
        size_t at = f->offset - EVENT_COMMON_HEADER_SIZE;
        uint32_t loc;
        size_t start, size;

        if (at > len || len - at < sizeof(loc))
                return -EINVAL;
        memcpy(&loc, (const char *) payload + at, sizeof(loc));
        size = loc >> 16;
        if (f->kind == EVENT_FIELD_DATA_LOC) {
                /* Offset from the record start: the header is not ours to point at. */
                if ((loc & 0xffff) < EVENT_COMMON_HEADER_SIZE)
                        return -EFAULT;
                start = (loc & 0xffff) - EVENT_COMMON_HEADER_SIZE;
        } else
                start = at + sizeof(loc) + (loc & 0xffff);

        if (start > len || size > len - start)
                return -EFAULT;
        if (f->is_char && (size == 0 || ((const char *) payload)[start + size - 1] != '\0'))
                return -EFAULT;
        *ret_offset = start;
        *ret_size = size;
        return 0;
}

int event_def_validate_payload(const struct event_def *ev, const void *payload, size_t len) {
        if (len < ev->min_size)
                return -EINVAL;
        for (size_t i = 0; i < ev->n_fields; i++) {
                const struct event_field *f = &ev->fields[i];
                size_t off, size;
                int r;

                if (!event_field_is_dynamic(f))
                        continue;
                r = event_field_dynamic_span(f, payload, len, &off, &size);
                if (r < 0)
                        return r;
        }
        return 0;
}
