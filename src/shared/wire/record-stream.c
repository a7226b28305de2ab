/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The record stream's layout (uebroker-record.h): packing and reading. */
#include "record-stream.h"

#include <errno.h>
#include <string.h>

int record_stream_next(const uint8_t *msg, size_t len, size_t *offset, struct record_view *ret) {
        struct ueb_record_header h;
        size_t at = *offset, left;

        if (at >= len)
                return 0;
        left = len - at;
        if (left < sizeof(h))
                return -EBADMSG;
        memcpy(&h, msg + at, sizeof(h));
        if (h.length < sizeof(h) || h.length > left || h.length - sizeof(h) < h.name_len)
                return -EBADMSG;
        if ((h.flags & UEB_RECORD_FLAG_LOST) && h.length != sizeof(h))
                return -EBADMSG;

        *ret = (struct record_view) {
                .header = h,
                .name = (const char *) msg + at + sizeof(h),
                .payload = msg + at + sizeof(h) + h.name_len,
                .payload_len = h.length - sizeof(h) - h.name_len,
        };
        /* The last record's padding may be missing. */
        *offset = UEB_RECORD_ALIGN_UP((size_t) h.length) >= left ? len : at + UEB_RECORD_ALIGN_UP((size_t) h.length);
        return 1;
}

int record_batch_append(struct record_batch *b, const struct ueb_record_header *h, const char *name, size_t name_len,
                        const void *payload, size_t payload_len) {
        size_t length = sizeof(*h) + name_len + payload_len, padded;
        struct ueb_record_header *out;
        uint8_t *p;

        if (name_len > UINT16_MAX || length > b->capacity || UEB_RECORD_ALIGN_UP(length) > b->capacity)
                return -EMSGSIZE;
        padded = UEB_RECORD_ALIGN_UP(length);
        if (padded > b->capacity - b->len)
                return -ENOBUFS;

        /* Straight into the message: a copy on the stack first cost a
         * store-forwarding stall per record (perf annotate of
         * bench-embedded-write's closed loop). */
        p = b->data + b->len;
        out = (struct ueb_record_header *) p;
        *out = *h;
        out->length = (uint32_t) length;
        out->name_len = (uint16_t) name_len;
        if (name_len > 0)
                memcpy(p + sizeof(*out), name, name_len);
        if (payload_len > 0)
                memcpy(p + sizeof(*out) + name_len, payload, payload_len);
        memset(p + length, 0, padded - length);
        b->len += padded;
        return 0;
}
