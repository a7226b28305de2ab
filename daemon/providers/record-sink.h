/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One consumer's end of a Record stream (uebroker-record.h), for every
 * provider: a non-blocking SOCK_SEQPACKET socket the broker writes and
 * never reads. Records are packed into the next message, which goes out
 * when it is full or when the owner flushes (after each batch it read). A
 * message the consumer has no room for waits for EPOLLOUT; a record that
 * finds that message full too is counted as lost and reported to the
 * consumer as a UEB_RECORD_FLAG_LOST record where it went missing; the broker
 * never waits for a consumer. When the consumer closes its end, the owner
 * is told (on_gone) and frees the sink.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "record-stream.h"

/* A larger buffer absorbs bursts; the kernel caps it at wmem_max, which an
 * unprivileged socket cannot exceed. A stream starts with a small one
 * (room for one message and a half: the kernel doubles what is set) and
 * gets the large one once its consumer is seen reading, so that streams
 * nobody reads hold little of the kernel's memory (64 unread
 * streams held 138.7 MB of send buffers). */
#define RECORD_SINK_SNDBUF (1024 * 1024)
#define RECORD_SINK_SNDBUF_UNREAD (96 * 1024)

struct record_sink;

/* Creates the stream; *ret_consumer_fd is the consumer's end (the caller
 * owns it). @on_gone is called from the event loop when the consumer has
 * closed it. */
int record_sink_new(sd_event *event, int64_t priority, const char *description,
                    void (*on_gone)(void *userdata), void *userdata, struct record_sink **ret, int *ret_consumer_fd);
struct record_sink *record_sink_free(struct record_sink *s);

/* Called (with the sink's userdata) when a message that had to wait for
 * room went out: the consumer reads again. */
void record_sink_on_drained(struct record_sink *s, void (*on_drained)(void *userdata));

/* Packs one record: @h (but for its length and name_len: those of the
 * packed record), the name, the payload. Returns true if packed, false if
 * counted as lost. */
bool record_sink_send(struct record_sink *s, const struct ueb_record_header *h, const char *name, size_t name_len,
                      const void *payload, size_t payload_len);

/* Packs a record that describes the others (uebroker-record.h: a kernel
 * header or format) and must not be lost: -EAGAIN, and nothing counted,
 * when the consumer has no room now (the caller tries again later, e.g.
 * when on_drained is called); -EMSGSIZE when it could never fit. Not
 * counted as a record sent. */
int record_sink_send_description(struct record_sink *s, const struct ueb_record_header *h, const char *name,
                                 size_t name_len, const void *payload, size_t payload_len);

/* Sends what is packed: 0 (or nothing to send), -EAGAIN while the consumer
 * has no room (the message waits for EPOLLOUT), another negative errno
 * when the consumer is gone (the message's records are lost). */
int record_sink_flush(struct record_sink *s);

/* @n records were lost before reaching the sink (a kernel ring buffer
 * overran): counted and reported like the sink's own. */
void record_sink_count_lost(struct record_sink *s, uint64_t n);

/* Whether a message waits for the consumer to make room (what is packed
 * meanwhile is kept until the next message is full, then lost). */
bool record_sink_waiting(const struct record_sink *s);

/* Records sent, and lost to a slow consumer, over the sink's life. */
uint64_t record_sink_sent(const struct record_sink *s);
uint64_t record_sink_lost(const struct record_sink *s);
/* Records packed, not sent yet (lost if the sink is freed now). */
uint64_t record_sink_unsent(const struct record_sink *s);
