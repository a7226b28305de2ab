/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The shared-memory ring (ring.h): the client's writer, the broker's
 * bounded, distrustful reader. */
#include "ring.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "macro.h"

static uint32_t *word_at(uint8_t *data, uint64_t pos) {
        return (uint32_t *) (void *) (data + pos);
}

int ring_write(struct ring_writer *w, uint32_t write_index, uint32_t tid, uint64_t timestamp_ns,
               const struct iovec *iov, int iovcnt, size_t payload_len, bool *ret_wake) {
        struct ring_header *h = w->header;
        const uint64_t size = w->size, mask = size - 1;
        const uint64_t need = RING_ALIGN_UP(sizeof(struct ring_record) + payload_len);
        uint64_t tail, head, pos, pad;
        struct ring_record rec;
        uint8_t *p;

        *ret_wake = false;
        if (need > size / 4 || payload_len > DATA_PAYLOAD_MAX)
                return -EMSGSIZE;

        /* Reserve: [tail, tail + pad + need), pad filling the end of the
         * data area when the record would wrap. */
        tail = __atomic_load_n(&h->tail, __ATOMIC_RELAXED);
        do {
                head = __atomic_load_n(&w->head_seen, __ATOMIC_RELAXED);
                pos = tail & mask;
                pad = pos + need > size ? size - pos : 0;
                if (tail + pad + need - head > size) {
                        /* Full as far as we knew: ask the broker's line. */
                        head = __atomic_load_n(&h->head, __ATOMIC_ACQUIRE);
                        __atomic_store_n(&w->head_seen, head, __ATOMIC_RELAXED);
                }
                if (tail + pad + need - head > size) {
                        __atomic_fetch_add(&h->dropped, 1, __ATOMIC_RELAXED);
                        return -EAGAIN;
                }
        } while (!__atomic_compare_exchange_n(&h->tail, &tail, tail + pad + need, true, __ATOMIC_RELAXED,
                                              __ATOMIC_RELAXED));

        if (pad > 0)
                __atomic_store_n(word_at(w->data, pos), (uint32_t) pad | RING_PADDING | RING_COMMITTED,
                                 __ATOMIC_RELEASE);
        p = w->data + ((tail + pad) & mask);
        rec = (struct ring_record) {
                .write_index = write_index,
                .tid = tid,
                .payload_len = (uint32_t) payload_len,
                .timestamp_ns = timestamp_ns,
        };
        memcpy(p + sizeof(rec.word), (const uint8_t *) &rec + sizeof(rec.word), sizeof(rec) - sizeof(rec.word));
        p += sizeof(rec);
        for (int i = 0; i < iovcnt; i++) {
                /* writev() takes an empty iovec without a base; memcpy()
                 * may not be given one. */
                if (iov[i].iov_len == 0)
                        continue;
                memcpy(p, iov[i].iov_base, iov[i].iov_len);
                p += iov[i].iov_len;
        }

        /* Commit, then look whether the broker sleeps: both sequentially
         * consistent, against the broker's store of @waiting and its look
         * at the ring (ring_reader's side), so no wakeup is lost. */
        __atomic_store_n(word_at(w->data, (tail + pad) & mask), (uint32_t) need | RING_COMMITTED, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&h->waiting, __ATOMIC_SEQ_CST) &&
            tail + pad + need - __atomic_load_n(&h->head, __ATOMIC_RELAXED) >=
                    __atomic_load_n(&h->wake_bytes, __ATOMIC_RELAXED) &&
            __atomic_exchange_n(&h->waiting, 0, __ATOMIC_SEQ_CST) != 0)
                *ret_wake = true;
        return 0;
}

/* The longest record ring_write() writes, and so the longest padding
 * (one fills the end of the area a record did not fit in). */
#define RING_RECORD_MAX RING_ALIGN_UP(sizeof(struct ring_record) + DATA_PAYLOAD_MAX)

int ring_read(struct ring_reader *r, struct ring_budget *budget, uint8_t *scratch, const struct ring_read_ops *ops,
              void *userdata) {
        struct ring_header *h = r->header;
        const uint64_t size = r->size, mask = size - 1;
        uint64_t tail;
        unsigned n = 0;

        if (r->broken)
                return -EBADMSG;
        tail = __atomic_load_n(&h->tail, __ATOMIC_ACQUIRE);
        /* Unsigned: a tail behind our head is as impossible as one more
         * than a ring ahead. */
        if (tail - r->head > size)
                goto broken;

        /* Each turn consumes at least 8 bytes of at most one ring. Paddings
         * count against the budget as records do: a ring of 8-byte
         * paddings costs no more per call than one of records, and a record
         * costs what it claims, copied or not (records claiming
         * the most they may, never written, cost their writer nothing). */
        while (budget->turns > 0 && r->head != tail) {
                uint64_t pos = r->head & mask;
                uint32_t word = __atomic_load_n(word_at(r->data, pos), __ATOMIC_ACQUIRE);
                uint32_t len = word & RING_SIZE_MASK, charge;
                bool copy = false;
                struct ring_record rec;

                if (!(word & RING_COMMITTED))
                        break;          /* still being written */
                /* A writer writes no more than a quarter of the ring at
                 * once (ring_write()), nor a padding longer than that. */
                if (len < 8 || len % 8 || len > size - pos || len > tail - r->head || len > size / 4 ||
                    len > RING_RECORD_MAX)
                        goto broken;
                /* What it costs beyond a record's fixed part: the bytes
                 * it claims to carry. */
                charge = word & RING_PADDING ? len : len - (uint32_t) sizeof(rec);
                if (charge > budget->bytes) {
                        budget->starved = true;         /* the rest another time */
                        break;
                }
                if (!(word & RING_PADDING)) {
                        if (len < sizeof(rec))
                                goto broken;
                        /* Checked before anything is copied: the length
                         * must be the one its payload makes. */
                        memcpy(&rec, r->data + pos, sizeof(rec));
                        if (rec.payload_len > DATA_PAYLOAD_MAX ||
                            len != RING_ALIGN_UP(sizeof(rec) + rec.payload_len))
                                goto broken;
                        copy = !ops->want || ops->want(&rec, userdata);
                }
                if (copy) {
                        /* A private copy: the client may keep writing. */
                        memcpy(scratch, r->data + pos, len);
                        memcpy(&rec, scratch, sizeof(rec));
                        if (rec.payload_len > len - sizeof(rec))
                                goto broken;
                }
                /* Zero what was read, so that stale bytes never pass for a
                 * committed word; then it is free. */
                memset(r->data + pos, 0, len);
                r->head += len;
                budget->turns--;
                budget->bytes -= charge;
                if (word & RING_PADDING)
                        continue;
                n++;
                /* Known only now, by want() or record(): the rest of the
                 * charge of a record that went nowhere, as much of it as
                 * is left (the next record waits for the refill). */
                if (!(copy && ops->record(&rec, scratch + sizeof(rec), userdata)) && charge < RING_UNWANTED_CHARGE)
                        budget->bytes -= MIN(budget->bytes, (uint64_t) (RING_UNWANTED_CHARGE - charge));
        }
        __atomic_store_n(&h->head, r->head, __ATOMIC_RELEASE);
        return (int) n;

broken:
        r->broken = true;
        return -EBADMSG;
}

uint64_t ring_pending(const struct ring_reader *r) {
        uint64_t tail = __atomic_load_n(&r->header->tail, __ATOMIC_ACQUIRE);

        return r->broken || tail - r->head > r->size ? 0 : tail - r->head;
}

uint64_t ring_take_dropped(struct ring_reader *r) {
        uint64_t now = __atomic_load_n(&r->header->dropped, __ATOMIC_RELAXED), n;

        /* A client can only lie about its own drops; a count going
         * backwards counts nothing. */
        n = now > r->dropped_seen ? now - r->dropped_seen : 0;
        r->dropped_seen = now;
        return n;
}

bool ring_reader_wait(struct ring_reader *r, uint32_t wake_bytes) {
        struct ring_header *h = r->header;
        uint32_t word;

        if (r->broken)
                return false;
        /* Stored only when changed (the line is the writers' to read). A
         * waiting still 1 was set by an earlier call and only a writer that
         * rings clears it, so a writer committing after our look below
         * sees it: the fence orders our look after that load, as the store
         * would. */
        if (__atomic_load_n(&h->wake_bytes, __ATOMIC_RELAXED) != wake_bytes)
                __atomic_store_n(&h->wake_bytes, wake_bytes, __ATOMIC_RELAXED);
        if (__atomic_load_n(&h->waiting, __ATOMIC_SEQ_CST) != 1)
                __atomic_store_n(&h->waiting, 1, __ATOMIC_SEQ_CST);
        else
                __atomic_thread_fence(__ATOMIC_SEQ_CST);
        word = __atomic_load_n(word_at(r->data, r->head & (r->size - 1)), __ATOMIC_SEQ_CST);
        return (word & RING_COMMITTED) && ring_pending(r) >= (wake_bytes ?: 1);
}
