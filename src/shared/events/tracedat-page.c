/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "tracedat-page.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN4(n) (((n) + 3u) & ~(size_t) 3u)

int tracedat_page_init(struct tracedat_page *p, size_t page_size) {
        if (page_size < 64 || page_size > (1u << TRACEDAT_TIME_DELTA_BITS))
                return -EINVAL;
        *p = (struct tracedat_page) { .page_size = page_size };
        p->data = calloc(1, page_size);
        return p->data ? 0 : -ENOMEM;
}

void tracedat_page_done(struct tracedat_page *p) {
        free(p->data);
        *p = (struct tracedat_page) {};
}

void tracedat_page_reset(struct tracedat_page *p) {
        memset(p->data, 0, p->page_size);
        p->used = 0;
        p->last_ts = 0;
        p->missed = 0;
        p->has_missed = false;
        p->n_events = 0;
}

int tracedat_page_add_missed(struct tracedat_page *p, uint64_t n) {
        if (p->n_events > 0)
                return -EBUSY;
        /* 0 means "some, how many unknown", and stays so. */
        if (!p->has_missed)
                p->missed = n;
        else if (p->missed != 0)
                p->missed = n == 0 ? 0 : p->missed + n;
        p->has_missed = true;
        return 0;
}

/* An event header word: type_len in the low 5 bits on little-endian, the
 * high 5 on big-endian (the kernel's bitfield order). */
static uint32_t event_header(uint32_t type_len, uint32_t time_delta) {
        time_delta &= (1u << TRACEDAT_TIME_DELTA_BITS) - 1u;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return type_len | time_delta << 5;
#else
        return type_len << TRACEDAT_TIME_DELTA_BITS | time_delta;
#endif
}

/* Room for events: the page minus its header, minus the stored missed
 * count when there is one. */
static size_t capacity(const struct tracedat_page *p) {
        return p->page_size - TRACEDAT_PAGE_HEADER_SIZE - (p->has_missed ? sizeof(long) : 0);
}

/* Bytes an event of @len data bytes takes: as the kernel's
 * rb_calculate_event_length() on a machine without forced 8-byte alignment. */
static size_t event_bytes(size_t len) {
        size_t aligned = ALIGN4(len);

        return aligned <= TRACEDAT_TYPE_LEN_DATA_MAX * 4u ? 4u + aligned : 8u + aligned;
}

int tracedat_page_add(struct tracedat_page *p, uint64_t ts, const void *head, size_t head_len, const void *body,
                      size_t body_len) {
        size_t len = head_len + body_len, need, aligned;
        uint64_t delta = 0;
        uint8_t *at;
        uint32_t word;

        if (len == 0 || len > p->page_size || event_bytes(len) > p->page_size - TRACEDAT_PAGE_HEADER_SIZE - sizeof(long))
                return -EMSGSIZE;
        if (p->n_events > 0) {
                if (ts < p->last_ts)
                        return -ERANGE;
                delta = ts - p->last_ts;
        }
        need = event_bytes(len);
        if (delta >> TRACEDAT_TIME_DELTA_BITS)
                need += 8;      /* a time extension first */
        if (need > capacity(p) - p->used)
                return -ENOSPC;

        at = p->data + TRACEDAT_PAGE_HEADER_SIZE + p->used;
        if (p->n_events == 0)
                memcpy(p->data, &ts, sizeof(ts));       /* the page's stamp: its first event's */
        else if (delta >> TRACEDAT_TIME_DELTA_BITS) {
                /* time_delta holds the low 27 bits, array[0] the rest. */
                uint32_t high = (uint32_t) (delta >> TRACEDAT_TIME_DELTA_BITS);

                word = event_header(TRACEDAT_TYPE_TIME_EXTEND, (uint32_t) delta);
                memcpy(at, &word, 4);
                memcpy(at + 4, &high, 4);
                at += 8;
                delta = 0;
        }
        aligned = ALIGN4(len);
        if (aligned <= TRACEDAT_TYPE_LEN_DATA_MAX * 4u) {
                word = event_header((uint32_t) (aligned / 4u), (uint32_t) delta);
                memcpy(at, &word, 4);
                at += 4;
        } else {
                /* type_len 0: array[0] holds the data's size plus its own 4. */
                uint32_t size = (uint32_t) aligned + 4u;

                word = event_header(0, (uint32_t) delta);
                memcpy(at, &word, 4);
                memcpy(at + 4, &size, 4);
                at += 8;
        }
        if (head_len)
                memcpy(at, head, head_len);
        if (body_len)
                memcpy(at + head_len, body, body_len);
        memset(at + len, 0, aligned - len);

        p->used += need;
        p->last_ts = ts;
        p->n_events++;
        return 0;
}

const uint8_t *tracedat_page_finish(struct tracedat_page *p) {
        unsigned long commit = (unsigned long) p->used;

        if (p->has_missed) {
                /* The count goes after the events, as ring_buffer_read_page()
                 * stores it; an unknown count is the flag alone. */
                if (p->missed != 0) {
                        long stored = p->missed > (uint64_t) LONG_MAX ? LONG_MAX : (long) p->missed;

                        memcpy(p->data + TRACEDAT_PAGE_HEADER_SIZE + p->used, &stored, sizeof(stored));
                        commit |= TRACEDAT_MISSED_STORED;
                }
                commit |= TRACEDAT_MISSED_EVENTS;
        }
        memcpy(p->data + 8, &commit, sizeof(commit));
        return p->data;
}

char *tracedat_header_page_text(size_t page_size) {
        char *text;

        /* ring_buffer_print_page_header()'s lines. */
        if (asprintf(&text,
                     "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
                     "\tfield: local_t commit;\toffset:8;\tsize:%zu;\tsigned:1;\n"
                     "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
                     "\tfield: char data;\toffset:%u;\tsize:%zu;\tsigned:0;\n",
                     sizeof(long), TRACEDAT_PAGE_HEADER_SIZE, page_size - TRACEDAT_PAGE_HEADER_SIZE) < 0)
                return NULL;
        return text;
}

const char *tracedat_header_event_text(void) {
        /* ring_buffer_print_entry_header()'s lines. */
        return "# compressed entry header\n"
               "\ttype_len    :    5 bits\n"
               "\ttime_delta  :   27 bits\n"
               "\tarray       :   32 bits\n"
               "\n"
               "\tpadding     : type == 29\n"
               "\ttime_extend : type == 30\n"
               "\ttime_stamp : type == 31\n"
               "\tdata max type_len  == 28\n";
}
