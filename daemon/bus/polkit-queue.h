/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The polkit checks waiting for an answer (polkit.c), as pure decisions:
 * which call a stored check belongs to, what a re-run of that call gets,
 * which check is sent to polkit next, and what each uid is charged for
 * the checks it has waiting. No bus and no I/O: polkit.c sends and
 * receives, tests/unit/test-polkit-queue.c covers every rule here.
 *
 * A check is queued, then sent (at most @max_in_flight at once), then
 * answered; checks are sent oldest first. Each is charged to its uid
 * (CHARGE_AUTHORIZATIONS) from polkit_queue_add() to polkit_queue_remove().
 * Single-threaded, like the event loop that calls it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "list.h"
#include "user-charges.h"

enum polkit_queue_state {
        POLKIT_QUEUED,                  /* waiting for room to be sent */
        POLKIT_SENT,                    /* asked, no answer yet */
        POLKIT_ANSWERED,                /* the verdict is in, the re-run has not taken it */
};

/* One check, embedded in its caller's record (polkit.c's query). */
struct polkit_queue_entry {
        LIST_FIELDS(struct polkit_queue_entry, entries);
        /* The key: the suspended call (compared by address; the caller
         * keeps it referenced, so the address stays unique), its cookie
         * and its sender. */
        const void *request;
        uint64_t cookie;
        char *sender;
        char *action;
        uid_t uid;
        struct user_charge charge;      /* CHARGE_AUTHORIZATIONS: 1 of uid's */
        enum polkit_queue_state state;
};

struct polkit_queue {
        LIST_HEAD(struct polkit_queue_entry, entries);  /* newest first */
        size_t n;                       /* all entries */
        size_t n_sent;                  /* POLKIT_SENT */
        size_t max_in_flight;
        struct user_charges *charges;   /* borrowed */
};

/* What a re-run of a call with a stored check gets, asking for @action. */
enum polkit_queue_match {
        POLKIT_MATCH_PENDING,           /* the same check is not answered yet: suspend again */
        POLKIT_MATCH_CONFLICT,          /* a check of another action is not answered yet: refuse */
        POLKIT_MATCH_VERDICT,           /* answered for this action: take the verdict */
        POLKIT_MATCH_STALE,             /* answered for another action: drop it, ask anew */
};

/**
 * polkit_queue_init() - an empty queue sending at most @max_in_flight
 * checks at once, charging @charges (borrowed; must outlive the queue).
 */
void polkit_queue_init(struct polkit_queue *q, struct user_charges *charges, size_t max_in_flight);

/**
 * polkit_queue_add() - queues @e, the newest, as POLKIT_QUEUED, charging
 * one CHARGE_AUTHORIZATIONS to @uid.
 *
 * @e is the caller's (zeroed or not; every field is set); @request is
 * borrowed, @sender and @action are copied. Returns 0; -EDQUOT when @uid
 * has its share waiting, -ENOSPC when the pool is full, -ENOMEM: then
 * nothing is charged or queued and @e owns nothing.
 */
int polkit_queue_add(struct polkit_queue *q, struct polkit_queue_entry *e, const void *request, uint64_t cookie,
                     const char *sender, const char *action, uid_t uid);

/**
 * polkit_queue_remove() - takes @e out, in whatever state, releasing its
 * charge and what it copied; @e itself stays the caller's. A sent check
 * removed leaves room for another (see polkit_queue_next()).
 */
void polkit_queue_remove(struct polkit_queue *q, struct polkit_queue_entry *e);

/**
 * polkit_queue_find() - the entry of the call @request with @cookie from
 * @sender, or NULL. A request address reused for another call (another
 * cookie or sender) does not match.
 */
struct polkit_queue_entry *polkit_queue_find(const struct polkit_queue *q, const void *request, uint64_t cookie,
                                             const char *sender);

/** polkit_queue_match() - what a re-run asking for @action gets of @e. Pure. */
enum polkit_queue_match polkit_queue_match(const struct polkit_queue_entry *e, const char *action);

/** polkit_queue_may_send() - whether fewer than max_in_flight checks are sent and unanswered. */
bool polkit_queue_may_send(const struct polkit_queue *q);

/**
 * polkit_queue_may_send_for() - whether a check of @uid may be sent now:
 * polkit_queue_may_send() and within the uid's part of the slots (see
 * polkit_queue_next()). False when out of memory.
 */
bool polkit_queue_may_send_for(const struct polkit_queue *q, uid_t uid);

/**
 * polkit_queue_next() - the oldest POLKIT_QUEUED entry that may be sent
 * now, else NULL (none queued, max_in_flight out, or out of memory).
 *
 * @param q: the queue
 *
 * A uid's first check goes while any slot is free; more only while the
 * uid has no more than its part of the checks in flight among the uids
 * that have some (charge_within_part(): alone, half of max_in_flight), so
 * uids whose polkit agents never answer cannot hold every slot, and a
 * newcomer gets its first check out.
 *
 * Return: the entry, borrowed.
 */
struct polkit_queue_entry *polkit_queue_next(const struct polkit_queue *q);

/** polkit_queue_sent() - @e (POLKIT_QUEUED) was sent: POLKIT_SENT. */
void polkit_queue_sent(struct polkit_queue *q, struct polkit_queue_entry *e);

/**
 * polkit_queue_answered() - @e has its verdict (a reply, or a failure to
 * send it): POLKIT_ANSWERED; a sent one leaves room for another.
 */
void polkit_queue_answered(struct polkit_queue *q, struct polkit_queue_entry *e);
