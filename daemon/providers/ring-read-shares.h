/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * How fast the broker reads the rings of each uid, and of all uids
 * together: the decision, apart from the reading (embedded-ring.c).
 *
 * Reading is charged by the payload bytes records claim (a writer that
 * does not use libuebroker can claim records it never writes), to the
 * writer's uid: an allowance per uid, refilled at
 * EMBEDDED_RING_READ_BYTES_PER_SEC up to EMBEDDED_RING_READ_BURST. That
 * bounds what one uid costs the broker, not what many do: eight uids
 * claiming flat out took eight times one's share of a core, and a user
 * with subordinate uids (newuidmap) is as many uids on the system bus. So
 * all refills together are at most EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC,
 * shared max-min fairly among the uids that want more (the same water
 * level as a fair queue's): each uid gains what it used, up to a level L
 * that the total allows, so a uid writing less than the others keeps its
 * rate whatever they do, the uids that want more share the rest evenly,
 * and while all together want less than the total nobody is cut (the
 * bound costs nothing until it is needed). Dividing the total by the number
 * of uids holding rings would instead let many idle uids shrink an honest
 * heavy writer's rate. Root and the daemon's uid are bound by their own
 * rate only, as by the shrinking shares of user-charges.h: many uids
 * could otherwise shrink root's part to nothing, and root could read
 * tracefs itself.
 *
 * No I/O, no clock: tests/unit/test-ring-read-shares.c covers it.
 */

#include <stddef.h>
#include <stdint.h>

#include "ring.h"

/* One uid's rings are read at most this fast, in payload bytes their
 * records claim: libuebroker's fastest single writer (4-byte payloads, 8
 * bytes a record charged) claims about 130 MB/s on the machines of
 * bench/README.md; a uid claiming the most costs the broker about a tenth
 * of a core (test-hostile's test_e2: 0.37-0.43 s of CPU in 3 s), and one
 * writing small records no one takes (RING_UNWANTED_CHARGE) about a
 * fifteenth (test_e5, test_e6). Records its recorders take are charged
 * their claims only: that is the closed loop's speed. */
#define EMBEDDED_RING_READ_BYTES_PER_SEC (UINT64_C(256) << 20)
/* What a uid may have read at once after a pause: two full rings. */
#define EMBEDDED_RING_READ_BURST (UINT64_C(2) * RING_DATA_MAX)
/* All uids' rings together: two uids at their bound, four of
 * libuebroker's fastest writers, about a fifth of a core at the costliest
 * claims (test_e2b: eight uids claiming flat out, 0.64-0.73 s of CPU in
 * 3.5 s; root beside them is outside it). */
#define EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC (2 * EMBEDDED_RING_READ_BYTES_PER_SEC)

/**
 * ring_read_shares_refill() - refills every uid's allowance for @elapsed_usec
 * @bytes: what each of @n uids may read now (at most
 *         EMBEDDED_RING_READ_BURST each); refilled in place
 * @n: the uids holding rings
 * @n_exempt: how many of them, the first, are privileged (root, the
 *            daemon's uid): each gains at its own rate, outside the total
 * @elapsed_usec: since the last refill; more than a second counts as one
 *
 * Each uid gains what it has room for below the burst, at most
 * EMBEDDED_RING_READ_BYTES_PER_SEC over @elapsed_usec; when that would
 * exceed EMBEDDED_RING_READ_TOTAL_BYTES_PER_SEC over @elapsed_usec for the
 * @n - @n_exempt others together, each of those gains min(its room, L), L
 * the highest level at which they fit. Over any interval the others thus
 * gain at most the total rate's worth, and one that wants more gains at
 * least 1/(@n - @n_exempt) of it.
 *
 * Returns L, or UINT64_MAX when nobody was cut. Pure: no allocation, no
 * state; safe from any thread on arrays of its own.
 */
uint64_t ring_read_shares_refill(uint64_t *bytes, size_t n, size_t n_exempt, uint64_t elapsed_usec);
