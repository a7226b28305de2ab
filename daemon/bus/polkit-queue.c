/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "macro.h"
#include "polkit-queue.h"
#include "user-charges.h"

void polkit_queue_init(struct polkit_queue *q, struct user_charges *charges, size_t max_in_flight) {
        assert(q);
        *q = (struct polkit_queue) { .charges = charges, .max_in_flight = max_in_flight };
}

int polkit_queue_add(struct polkit_queue *q, struct polkit_queue_entry *e, const void *request, uint64_t cookie,
                     const char *sender, const char *action, uid_t uid) {
        int r;

        assert(q);
        *e = (struct polkit_queue_entry) { .request = request, .cookie = cookie, .uid = uid, .state = POLKIT_QUEUED };
        /* One user's flood waits behind its own share, never in front of
         * another user's check. */
        user_charge_init(&e->charge, q->charges, uid, CHARGE_AUTHORIZATIONS);
        r = user_charge_take(&e->charge, 1);
        if (r < 0)
                return r;
        e->sender = strdup(sender);
        e->action = strdup(action);
        if (!e->sender || !e->action) {
                free(e->sender);
                free(e->action);
                user_charge_deinit(&e->charge);
                *e = (struct polkit_queue_entry) {};
                return -ENOMEM;
        }
        LIST_PREPEND(entries, q->entries, e);
        q->n++;
        return 0;
}

void polkit_queue_remove(struct polkit_queue *q, struct polkit_queue_entry *e) {
        assert(q);
        LIST_REMOVE(entries, q->entries, e);
        q->n--;
        if (e->state == POLKIT_SENT)
                q->n_sent--;
        user_charge_deinit(&e->charge);
        free(e->sender);
        free(e->action);
        e->sender = e->action = NULL;
}

struct polkit_queue_entry *polkit_queue_find(const struct polkit_queue *q, const void *request, uint64_t cookie,
                                             const char *sender) {
        assert(q);
        LIST_FOREACH(entries, e, q->entries)
                if (e->request == request && e->cookie == cookie && strcmp(e->sender, sender) == 0)
                        return e;
        return NULL;
}

enum polkit_queue_match polkit_queue_match(const struct polkit_queue_entry *e, const char *action) {
        bool same = strcmp(ASSERT_PTR(e)->action, action) == 0;

        if (e->state != POLKIT_ANSWERED)
                return same ? POLKIT_MATCH_PENDING : POLKIT_MATCH_CONFLICT;
        /* Another action now (the state changed while polkit was asked):
         * that answer does not apply. */
        return same ? POLKIT_MATCH_VERDICT : POLKIT_MATCH_STALE;
}

bool polkit_queue_may_send(const struct polkit_queue *q) {
        assert(q);
        return q->n_sent < q->max_in_flight;
}

/* The uids with checks in flight and how many each has. */
struct sent_by_uid {
        uid_t uid;
        size_t n;
};

static size_t tally_sent(const struct polkit_queue *q, struct sent_by_uid *tally) {
        size_t n_uids = 0;

        LIST_FOREACH(entries, e, q->entries) {
                size_t i = 0;

                if (e->state != POLKIT_SENT)
                        continue;
                while (i < n_uids && tally[i].uid != e->uid)
                        i++;
                if (i == n_uids)
                        tally[n_uids++] = (struct sent_by_uid) { .uid = e->uid };
                tally[i].n++;
        }
        return n_uids;
}

/* Whether @uid, with the checks in flight counted in @tally, may send one
 * more: its first while any slot is free, more only within its part of the
 * slots among the uids that have some (charge_within_part()), so uids
 * whose agents never answer cannot hold every slot, and a newcomer is
 * never starved by the parts of many (a part of what is left shrinks with
 * the square of their number). */
static bool within_part(const struct polkit_queue *q, const struct sent_by_uid *tally, size_t n_uids, uid_t uid) {
        size_t i = 0;

        while (i < n_uids && tally[i].uid != uid)
                i++;
        if (i == n_uids)
                return q->n_sent < q->max_in_flight;
        return charge_within_part(q->max_in_flight, q->n_sent, tally[i].n, 1, n_uids - 1);
}

bool polkit_queue_may_send_for(const struct polkit_queue *q, uid_t uid) {
        _cleanup_free_ struct sent_by_uid *tally = NULL;

        assert(q);
        if (!polkit_queue_may_send(q))
                return false;
        tally = calloc(q->n_sent + 1, sizeof(*tally));
        return tally && within_part(q, tally, tally_sent(q, tally), uid);
}

struct polkit_queue_entry *polkit_queue_next(const struct polkit_queue *q) {
        _cleanup_free_ struct sent_by_uid *tally = NULL;
        struct polkit_queue_entry *oldest = NULL;
        size_t n_uids;

        assert(q);
        if (!polkit_queue_may_send(q))
                return NULL;
        tally = calloc(q->n_sent + 1, sizeof(*tally));
        if (!tally)
                return NULL;    /* tried again with the next answer or check */
        n_uids = tally_sent(q, tally);
        /* The list is newest first: the last one that may go is the
         * oldest. */
        LIST_FOREACH(entries, e, q->entries)
                if (e->state == POLKIT_QUEUED && within_part(q, tally, n_uids, e->uid))
                        oldest = e;
        return oldest;
}

void polkit_queue_sent(struct polkit_queue *q, struct polkit_queue_entry *e) {
        assert(e->state == POLKIT_QUEUED);
        e->state = POLKIT_SENT;
        q->n_sent++;
}

void polkit_queue_answered(struct polkit_queue *q, struct polkit_queue_entry *e) {
        assert(q);
        if (e->state == POLKIT_SENT)
                q->n_sent--;
        e->state = POLKIT_ANSWERED;
}
