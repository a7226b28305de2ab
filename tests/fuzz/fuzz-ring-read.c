/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: the broker's ring reader on a ring a hostile client
 * filled. Input: u64 head (the broker's), u64 tail, u8 turns, u16 bytes
 * (the budget; 0xffff: unbounded), then the data area (RING_DATA_MIN
 * bytes, the rest zero). The data area is a heap block of exactly that
 * size, so ASan catches any read outside it. Records of odd write indexes
 * are not wanted. Checks: the reader returns, reads within its budget,
 * stays within the ring, asks before it copies and hands out only what it
 * was told it is wanted, payloads that fit the record, frees what it read
 * (zeroed) and reads nothing once it gave the ring up. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-check.h"
#include "ring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seen {
        unsigned asked;                 /* want() calls */
        unsigned wanted;                /* ... that said yes */
        unsigned records;               /* handed out */
        size_t payload_bytes;
        bool pending_yes;               /* the last want() said yes, not yet handed out */
};

static uint8_t scratch[RING_DATA_MAX];

static bool want(const struct ring_record *rec, void *userdata) {
        struct seen *seen = userdata;

        check(!seen->pending_yes);
        check(rec->payload_len <= DATA_PAYLOAD_MAX);
        seen->asked++;
        seen->pending_yes = rec->write_index % 2 == 0;
        seen->wanted += seen->pending_yes;
        return seen->pending_yes;
}

static bool on_record(const struct ring_record *rec, const uint8_t *payload, void *userdata) {
        struct seen *seen = userdata;

        /* Only right after a want() that said yes, and for its index. */
        check(seen->pending_yes && rec->write_index % 2 == 0);
        seen->pending_yes = false;
        check(payload == scratch + sizeof(*rec));
        check(rec->payload_len <= RING_DATA_MIN - sizeof(*rec));
        /* Touch every byte handed out: ASan checks they are ours. */
        for (uint32_t i = 0; i < rec->payload_len; i++)
                seen->payload_bytes += payload[i] == 0xa5;
        seen->records++;
        /* Some go nowhere after all: charged as unwanted. */
        return rec->tid % 2 == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        struct ring_header header = { 0 };
        struct ring_reader r = { 0 };
        struct seen seen = { 0 };
        const struct ring_read_ops ops = { .want = want, .record = on_record };
        struct ring_budget budget, given;
        uint64_t head, tail, pending_before;
        uint16_t bytes;
        uint8_t *area;
        int n;

        if (size < 19)
                return 0;
        memcpy(&head, data, 8);
        memcpy(&tail, data + 8, 8);
        memcpy(&bytes, data + 17, 2);
        given = (struct ring_budget) { .turns = data[16], .bytes = bytes == 0xffff ? UINT64_MAX : bytes };
        data += 19;
        size -= 19;

        area = calloc(1, RING_DATA_MIN);
        check(area);
        memcpy(area, data, size < RING_DATA_MIN ? size : RING_DATA_MIN);
        header.tail = tail;
        header.head = head;
        r = (struct ring_reader) { .header = &header, .data = area, .size = RING_DATA_MIN, .head = head };

        pending_before = ring_pending(&r);
        budget = given;
        n = ring_read(&r, &budget, scratch, &ops, &seen);
        if (n >= 0) {
                check((unsigned) n == seen.asked);
                check(seen.records == seen.wanted && !seen.pending_yes);
                check(budget.turns <= given.turns && seen.asked <= given.turns - budget.turns);
                check(budget.bytes <= given.bytes);
                /* Never past the tail, never backwards. */
                check(r.head - head <= pending_before);
                check(header.head == r.head);
                /* What was read is zero again. */
                for (uint64_t at = head; at != r.head; at++)
                        check(area[at & (RING_DATA_MIN - 1)] == 0);
        } else {
                check(n == -EBADMSG && r.broken);
                budget = given;
                check(ring_read(&r, &budget, scratch, &ops, &seen) == -EBADMSG);
                check(ring_pending(&r) == 0);
        }
        /* Waiting is harmless whatever the ring holds. */
        (void) ring_reader_wait(&r, 0);
        free(area);
        return 0;
}
