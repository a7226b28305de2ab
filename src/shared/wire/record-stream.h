/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Reading and packing record stream messages (the layout is public:
 * include/uebroker-record.h): a message holds one or more records, each
 * 8-byte aligned. The broker packs with record_batch_append(); consumers
 * in the tree read with record_stream_next().
 */

#include <stddef.h>
#include <stdint.h>

#include "uebroker-record.h"

/* One record of a received message; name and payload point into it. */
struct record_view {
        struct ueb_record_header header;
        const char *name;
        const uint8_t *payload;
        size_t payload_len;
};

/* The record at *@offset of the message @msg (@len bytes): 1 with *@ret
 * filled and *@offset moved to the next record, 0 at the end of the
 * message, -EBADMSG when what is left is not a record (the rest of the
 * message is unusable; *@offset is left alone). A last record without its
 * padding is accepted. */
int record_stream_next(const uint8_t *msg, size_t len, size_t *offset, struct record_view *ret);

/* A message being packed (the broker's side). */
struct record_batch {
        uint8_t *data;          /* 8-byte aligned, as records are */
        size_t len;
        size_t capacity;        /* at most UEB_RECORD_MESSAGE_MAX */
};

/* Appends a record made of @h (its length and name_len are set here),
 * @name and @payload, padded. -ENOBUFS when it does not fit in what is
 * left (send the batch first), -EMSGSIZE when it could never fit. */
int record_batch_append(struct record_batch *b, const struct ueb_record_header *h, const char *name, size_t name_len,
                        const void *payload, size_t payload_len);
