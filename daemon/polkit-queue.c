/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "polkit-queue.h"
#include "user-charges.h"

void polkit_queue_init(struct polkit_queue *q, struct user_charges *charges, size_t max_in_flight) {
        *q = (struct polkit_queue) { .charges = charges, .max_in_flight = max_in_flight };
}

int polkit_queue_add(struct polkit_queue *q, struct polkit_queue_entry *e, const void *request, uint64_t cookie,
                     const char *sender, const char *action, uid_t uid) {
        int r;

        *e = (struct polkit_queue_entry) { .request = request, .cookie = cookie, .uid = uid, .state = POLKIT_QUEUED };
        /* One user's flood waits behind its own share, never in front of
         * another user's check. */
        r = user_charges_take(q->charges, uid, CHARGE_AUTHORIZATIONS, 1);
        if (r < 0)
                return r;
        e->sender = strdup(sender);
        e->action = strdup(action);
        if (!e->sender || !e->action) {
                free(e->sender);
                free(e->action);
                *e = (struct polkit_queue_entry) {};
                user_charges_release(q->charges, uid, CHARGE_AUTHORIZATIONS, 1);
                return -ENOMEM;
        }
        LIST_PREPEND(entries, q->entries, e);
        q->n++;
        return 0;
}

void polkit_queue_remove(struct polkit_queue *q, struct polkit_queue_entry *e) {
        LIST_REMOVE(entries, q->entries, e);
        q->n--;
        if (e->state == POLKIT_SENT)
                q->n_sent--;
        user_charges_release(q->charges, e->uid, CHARGE_AUTHORIZATIONS, 1);
        free(e->sender);
        free(e->action);
        e->sender = e->action = NULL;
}

struct polkit_queue_entry *polkit_queue_find(const struct polkit_queue *q, const void *request, uint64_t cookie,
                                             const char *sender) {
        LIST_FOREACH(entries, e, q->entries)
                if (e->request == request && e->cookie == cookie && strcmp(e->sender, sender) == 0)
                        return e;
        return NULL;
}

enum polkit_queue_match polkit_queue_match(const struct polkit_queue_entry *e, const char *action) {
        bool same = strcmp(e->action, action) == 0;

        if (e->state != POLKIT_ANSWERED)
                return same ? POLKIT_MATCH_PENDING : POLKIT_MATCH_CONFLICT;
        /* Another action now (the state changed while polkit was asked):
         * that answer does not apply. */
        return same ? POLKIT_MATCH_VERDICT : POLKIT_MATCH_STALE;
}

bool polkit_queue_may_send(const struct polkit_queue *q) {
        return q->n_sent < q->max_in_flight;
}

struct polkit_queue_entry *polkit_queue_next(const struct polkit_queue *q) {
        struct polkit_queue_entry *oldest = NULL;

        if (!polkit_queue_may_send(q))
                return NULL;
        LIST_FOREACH(entries, e, q->entries)
                if (e->state == POLKIT_QUEUED)
                        oldest = e;     /* the list is newest first */
        return oldest;
}

void polkit_queue_sent(struct polkit_queue *q, struct polkit_queue_entry *e) {
        assert(e->state == POLKIT_QUEUED);
        e->state = POLKIT_SENT;
        q->n_sent++;
}

void polkit_queue_answered(struct polkit_queue *q, struct polkit_queue_entry *e) {
        if (e->state == POLKIT_SENT)
                q->n_sent--;
        e->state = POLKIT_ANSWERED;
}
