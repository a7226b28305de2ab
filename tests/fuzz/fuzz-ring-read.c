/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the broker's ring reader on a ring a hostile client
 * filled. Input: u64 head (the broker's), u64 tail, u8 budget, then the
 * data area (RING_DATA_MIN bytes, the rest zero). The data area is a heap
 * block of exactly that size, so ASan catches any read outside it. Checks:
 * the reader returns, reads at most its budget, stays within the ring,
 * hands out payloads that fit the record, frees what it read (zeroed) and
 * reads nothing once it gave the ring up. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
        unsigned records;
        size_t payload_bytes;
};

static uint8_t scratch[RING_DATA_MAX];

static void on_record(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        struct seen *seen = userdata;

        check(payload == scratch + sizeof(*rec));
        check(rec->payload_len <= RING_DATA_MIN - sizeof(*rec));
        /* Touch every byte handed out: ASan checks they are ours. */
        for (uint32_t i = 0; i < rec->payload_len; i++)
                seen->payload_bytes += payload[i] == 0xa5;
        seen->records++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct ring_header header = { 0 };
        struct ring_reader r = { 0 };
        struct seen seen = { 0 };
        uint64_t head, tail, pending_before;
        uint8_t budget, *area;
        int n;

        if (size < 17)
                return 0;
        memcpy(&head, data, 8);
        memcpy(&tail, data + 8, 8);
        budget = data[16];
        data += 17;
        size -= 17;

        area = calloc(1, RING_DATA_MIN);
        check(area);
        memcpy(area, data, size < RING_DATA_MIN ? size : RING_DATA_MIN);
        header.tail = tail;
        header.head = head;
        r = (struct ring_reader) { .header = &header, .data = area, .size = RING_DATA_MIN, .head = head };

        pending_before = ring_pending(&r);
        n = ring_read(&r, budget, scratch, on_record, &seen);
        if (n >= 0) {
                check((unsigned) n == seen.records);
                check(seen.records <= budget);
                /* Never past the tail, never backwards. */
                check(r.head - head <= pending_before);
                check(header.head == r.head);
                /* What was read is zero again. */
                for (uint64_t at = head; at != r.head; at++)
                        check(area[at & (RING_DATA_MIN - 1)] == 0);
        } else {
                check(n == -EBADMSG && r.broken);
                check(ring_read(&r, budget, scratch, on_record, &seen) == -EBADMSG);
                check(ring_pending(&r) == 0);
        }
        /* Waiting is harmless whatever the ring holds. */
        (void) ring_reader_wait(&r, 0);
        free(area);
        return 0;
}
