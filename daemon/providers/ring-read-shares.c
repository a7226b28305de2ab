/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The water level of ring_read_shares_refill(), found by bisection: the
 * sum of min(room, L) grows with L, and bisecting up to the most one uid
 * can gain (its gain, at most the burst: 2^21 bytes) takes at most 21
 * passes over the uids (19 for the millisecond between the provider's
 * refills), with no sorted copy to allocate.
 */

#include "macro.h"
#include "ring-read-shares.h"

#define USEC_PER_SEC_U64 UINT64_C(1000000)

/* What @bytes has room for, at most @gain. */
static uint64_t room(uint64_t bytes, uint64_t gain) {
        return bytes >= EMBEDDED_RING_READ_BURST ? 0 : MIN(EMBEDDED_RING_READ_BURST - bytes, gain);
}

/* What all gain at level @level. */
static uint64_t gained_at(const uint64_t *bytes, size_t n, uint64_t gain, uint64_t level) {
        uint64_t sum = 0;

        for (size_t i = 0; i < n; i++)
                sum += MIN(room(bytes[i], gain), level);
        return sum;
}

uint64_t ring_read_shares_refill(uint64_t *bytes, size_t n, size_t n_exempt, uint64_t elapsed_usec) {
        uint64_t gain, total, level = UINT64_MAX;

        elapsed_usec = MIN(elapsed_usec, USEC_PER_SEC_U64);
        gain = elapsed_usec * EMBEDDED_RING_READ_BYTES_PER_SEC / USEC_PER_SEC_U64;
        total = elapsed_usec * EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC / USEC_PER_SEC_U64;

        if (n_exempt > 0 && n > 0) {
                n_exempt = MIN(n_exempt, n);
                for (size_t i = 0; i < n_exempt; i++)
                        bytes[i] += room(bytes[i], gain);
                bytes += n_exempt;
                n -= n_exempt;
        }

        /* Each room is at most the burst (2 MiB): the sum fits for any
         * number of uids memory could hold. */
        if (gained_at(bytes, n, gain, gain) > total) {
                /* gained_at(fits) <= total < gained_at(over) */
                uint64_t fits = 0, over = MIN(gain, EMBEDDED_RING_READ_BURST);

                while (over - fits > 1) {
                        uint64_t mid = fits + (over - fits) / 2;

                        if (gained_at(bytes, n, gain, mid) <= total)
                                fits = mid;
                        else
                                over = mid;
                }
                level = fits;
        }
        for (size_t i = 0; i < n; i++)
                bytes[i] += MIN(room(bytes[i], gain), level);
        return level;
}
