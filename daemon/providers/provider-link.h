/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The broker's one link to its provider: every call into the provider goes
 * through here (the event registry, sessions and the bus methods use these
 * functions, never the ops table), so what the broker expects of a provider
 * (provider.h) is enforced in one place: write indexes in the session's
 * table (write-indexes.h), a provider breaking the index rules refused, its
 * errors logged once.
 */

#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#include "provider.h"
#include "write-indexes.h"

struct provider_link {
        const struct provider_ops *ops;
        struct provider *provider;
};

int provider_link_start(struct provider_link *l, sd_event *event, const struct provider_ops *ops,
                        const struct provider_settings *settings);
void provider_link_stop(struct provider_link *l);

const char *provider_link_name(const struct provider_link *l);
unsigned provider_link_fds_per_session(const struct provider_link *l);
/* provider_ops.self_registration: whether Authorize can work. */
bool provider_link_self_registration(const struct provider_link *l);

/* Events: provider_ops.event_add/event_remove/event_status. */
int provider_link_event_add(struct provider_link *l, const struct event_def *def, uint32_t *io_status_index,
                            struct provider_event **ret);
void provider_link_event_remove(struct provider_link *l, struct provider_event *ev);
uint8_t provider_link_event_status(struct provider_link *l, struct provider_event *ev);

/* Sessions. @indexes is the session's table; the provider session reads it
 * until provider_link_session_close(). */
int provider_link_session_open(struct provider_link *l, const struct provider_peer *peer,
                               const struct write_indexes *indexes, struct provider_session **ret);
void provider_link_session_close(struct provider_link *l, struct provider_session *s);
/* Borrowed: the caller dups what it sends. */
int provider_link_session_data_fd(struct provider_link *l, struct provider_session *s);
int provider_link_session_status_fd(struct provider_link *l, struct provider_session *s);
/* provider_ops.session_grant / session_withdraw; 0 for a provider without
 * them (the kernel has nothing to enforce). */
int provider_link_grant(struct provider_link *l, struct provider_session *s, struct provider_event *ev);
int provider_link_withdraw(struct provider_link *l, struct provider_session *s, struct provider_event *ev);

/* Registers @ev (@pev to the provider) on the session: the index already
 * bound to it (reactivated if it was unregistered), else the next one.
 * Returns 1 when the index is newly bound, 0 when it was bound before;
 * -ENOSPC when the session has WRITE_INDEXES_MAX indexes; -EPROTO when
 * the provider broke the index rules. */
int provider_link_register(struct provider_link *l, struct provider_session *s, struct write_indexes *indexes,
                           struct broker_event *ev, struct provider_event *pev, uint32_t *ret_write_index);
/* Deactivates @write_index; -ENOENT when it is not active. */
int provider_link_unregister(struct provider_link *l, struct provider_session *s, struct write_indexes *indexes,
                             uint32_t write_index);

/* A record stream of @events (uebroker-record.h), or -EOPNOTSUPP; @owner
 * told when it goes (provider_ops.record). */
int provider_link_record(struct provider_link *l, struct provider_event *const *events, size_t n_events,
                         const struct provider_stream_owner *owner);
/* Streams the provider serves at most at once (the pool RecordStreams= is
 * capped to). */
unsigned provider_link_max_record_streams(const struct provider_link *l);

/* The data path's counters: false (and nothing in *@ret) when the provider
 * has none. */
bool provider_link_counters(struct provider_link *l, struct provider_counters *ret);

/* provider_ops.session_ring, -EOPNOTSUPP without one. */
int provider_link_session_ring(struct provider_link *l, struct provider_session *s, uint32_t requested,
                               uint64_t max_bytes, uint32_t *ret_size, uint64_t *ret_mapped);
/* provider_ops.session_ring_close; nothing without rings. */
void provider_link_session_ring_close(struct provider_link *l, struct provider_session *s);
/* A record stream of @events and of the events added later that match
 * @patterns; -EOPNOTSUPP when the provider cannot follow new events. */
int provider_link_record_matching(struct provider_link *l, struct provider_event *const *events, size_t n_events,
                                  const char *const *patterns, size_t n_patterns,
                                  const struct provider_stream_owner *owner);
/* As provider_link_record_matching(), the kernel's pages as they are
 * (provider_ops.record_kernel_pages); -EOPNOTSUPP without a kernel ring. */
int provider_link_record_kernel_pages(struct provider_link *l, struct provider_event *const *events,
                                      size_t n_events, const char *const *patterns, size_t n_patterns,
                                      const struct provider_stream_owner *owner);
