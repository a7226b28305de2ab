/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Intrusive doubly linked lists, in systemd's LIST_* shape:
 *
 *     struct item { LIST_FIELDS(struct item, by_owner); };
 *     LIST_HEAD(struct item, items);
 *     LIST_APPEND(by_owner, items, item);
 *     LIST_REMOVE(by_owner, items, item);
 *     LIST_FOREACH_SAFE(by_owner, i, next, items) ...
 *
 * An item may sit in several lists, one pair of fields each. Removing an
 * item leaves its fields NULL, so removing twice is harmless only for an
 * item that is not the head: callers track membership themselves.
 */

#define LIST_HEAD(t, name) t *name

#define LIST_FIELDS(t, name) t *name##_next, *name##_prev

#define LIST_INIT(name, item) \
        do { (item)->name##_next = (item)->name##_prev = NULL; } while (0)

#define LIST_PREPEND(name, head, item)                                  \
        do {                                                            \
                __typeof__(*(head)) **_head = &(head), *_item = (item); \
                _item->name##_prev = NULL;                              \
                _item->name##_next = *_head;                            \
                if (*_head)                                             \
                        (*_head)->name##_prev = _item;                  \
                *_head = _item;                                         \
        } while (0)

/* O(n): walks to the tail. Lists that need a fast append keep a tail. */
#define LIST_APPEND(name, head, item)                                   \
        do {                                                            \
                __typeof__(*(head)) **_head = &(head), *_item = (item), *_tail = *_head; \
                _item->name##_next = NULL;                              \
                if (!_tail) {                                           \
                        _item->name##_prev = NULL;                      \
                        *_head = _item;                                 \
                        break;                                          \
                }                                                       \
                while (_tail->name##_next)                              \
                        _tail = _tail->name##_next;                     \
                _tail->name##_next = _item;                             \
                _item->name##_prev = _tail;                             \
        } while (0)

#define LIST_REMOVE(name, head, item)                                   \
        do {                                                            \
                __typeof__(*(head)) **_head = &(head), *_item = (item); \
                if (_item->name##_next)                                 \
                        _item->name##_next->name##_prev = _item->name##_prev; \
                if (_item->name##_prev)                                 \
                        _item->name##_prev->name##_next = _item->name##_next; \
                else if (*_head == _item)                               \
                        *_head = _item->name##_next;                    \
                _item->name##_next = _item->name##_prev = NULL;         \
        } while (0)

#define LIST_FOREACH(name, i, head) \
        for (__typeof__(*(head)) *i = (head); i; i = i->name##_next)

#define LIST_FOREACH_SAFE(name, i, n, head) \
        for (__typeof__(*(head)) *i = (head), *n = i ? i->name##_next : NULL; i; \
             i = n, n = i ? i->name##_next : NULL)
