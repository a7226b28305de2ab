/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>

#include "log.h"
#include "macro.h"
#include "provider-link.h"

int provider_link_start(struct provider_link *l, sd_event *event, const struct provider_ops *ops,
                        const struct provider_settings *settings) {
        int r;

        assert(l);
        *l = (struct provider_link) { .ops = ops };
        r = ops->new(event, settings, &l->provider);
        if (r < 0)
                return log_error_errno(r, "Cannot start the %s provider: %m", ops->name);
        return 0;
}

void provider_link_stop(struct provider_link *l) {
        assert(l);
        if (l->provider)
                l->provider = l->ops->free(l->provider);
}

const char *provider_link_name(const struct provider_link *l) {
        assert(l);
        return l->ops->name;
}

bool provider_link_self_registration(const struct provider_link *l) {
        assert(l);
        return l->ops->self_registration;
}

unsigned provider_link_fds_per_session(const struct provider_link *l) {
        assert(l);
        return l->ops->fds_per_session;
}

int provider_link_event_add(struct provider_link *l, const struct event_def *def, uint32_t *io_status_index,
                            struct provider_event **ret) {
        assert(l);
        return l->ops->event_add(l->provider, def, io_status_index, ret);
}

void provider_link_event_remove(struct provider_link *l, struct provider_event *ev) {
        assert(l);
        l->ops->event_remove(l->provider, ev);
}

uint8_t provider_link_event_status(struct provider_link *l, struct provider_event *ev) {
        assert(l);
        return l->ops->event_status(l->provider, ev);
}

int provider_link_session_open(struct provider_link *l, const struct provider_peer *peer,
                               const struct write_indexes *indexes, struct provider_session **ret) {
        assert(l);
        return l->ops->session_new(l->provider, peer, indexes, ret);
}

void provider_link_session_close(struct provider_link *l, struct provider_session *s) {
        assert(l);
        if (s)
                l->ops->session_free(l->provider, s);
}

int provider_link_session_data_fd(struct provider_link *l, struct provider_session *s) {
        assert(l);
        return l->ops->session_data_fd(s);
}

int provider_link_grant(struct provider_link *l, struct provider_session *s, struct provider_event *ev) {
        assert(l);
        return l->ops->session_grant ? l->ops->session_grant(l->provider, s, ev) : 0;
}

int provider_link_withdraw(struct provider_link *l, struct provider_session *s, struct provider_event *ev) {
        assert(l);
        return l->ops->session_withdraw ? l->ops->session_withdraw(l->provider, s, ev) : 0;
}

int provider_link_session_status_fd(struct provider_link *l, struct provider_session *s) {
        assert(l);
        return l->ops->session_status_fd(s);
}

int provider_link_register(struct provider_link *l, struct provider_session *s, struct write_indexes *indexes,
                           struct broker_event *ev, struct provider_event *pev, uint32_t *ret_write_index) {
        int bound = write_indexes_find(indexes, ev), r;
        uint32_t index;

        assert(l);
        if (bound >= 0 && indexes->entries[bound].active) {
                *ret_write_index = (uint32_t) bound;
                return 0;
        }
        if (bound < 0) {
                /* Room first: once the provider has bound the index it must
                 * be in the table, or the event could go while the
                 * provider still points to it. */
                r = write_indexes_reserve(indexes);
                if (r < 0)
                        return r;
                index = (uint32_t) indexes->n;
        } else
                index = (uint32_t) bound;

        /* A kernel provider that gets another index from its kernel
         * refuses with -EPROTO (and says why): the table would no longer
         * describe the file. */
        r = l->ops->session_register(l->provider, s, pev, index);
        if (r < 0)
                return r;
        if (bound < 0)
                (void) write_indexes_append(indexes, ev, pev);
        write_indexes_set_active(indexes, index, true);
        *ret_write_index = index;
        return bound < 0;
}

int provider_link_unregister(struct provider_link *l, struct provider_session *s, struct write_indexes *indexes,
                             uint32_t write_index) {
        int r;

        assert(l);
        if (!write_indexes_active_event(indexes, write_index))
                return -ENOENT;
        r = l->ops->session_unregister(l->provider, s, indexes->entries[write_index].provider_event, write_index);
        if (r < 0)
                return r;
        write_indexes_set_active(indexes, write_index, false);
        return 0;
}

int provider_link_record(struct provider_link *l, struct provider_event *const *events, size_t n_events,
                         const struct provider_stream_owner *owner) {
        assert(l);
        return l->ops->record(l->provider, events, n_events, owner);
}

unsigned provider_link_max_record_streams(const struct provider_link *l) {
        assert(l);
        return l->ops->max_record_streams;
}

bool provider_link_counters(struct provider_link *l, struct provider_counters *ret) {
        assert(l);
        if (!l->ops->counters)
                return false;
        l->ops->counters(l->provider, ret);
        return true;
}

int provider_link_session_ring(struct provider_link *l, struct provider_session *s, uint32_t requested,
                               uint64_t max_bytes, uint32_t *ret_size, uint64_t *ret_mapped) {
        assert(l);
        if (!l->ops->session_ring)
                return -EOPNOTSUPP;
        return l->ops->session_ring(l->provider, s, requested, max_bytes, ret_size, ret_mapped);
}

void provider_link_session_ring_close(struct provider_link *l, struct provider_session *s) {
        assert(l);
        if (l->ops->session_ring_close)
                l->ops->session_ring_close(l->provider, s);
}

int provider_link_record_matching(struct provider_link *l, struct provider_event *const *events, size_t n_events,
                                  const char *const *patterns, size_t n_patterns,
                                  const struct provider_stream_owner *owner) {
        assert(l);
        if (!l->ops->record_matching)
                return -EOPNOTSUPP;
        return l->ops->record_matching(l->provider, events, n_events, patterns, n_patterns, owner);
}

int provider_link_record_kernel_pages(struct provider_link *l, struct provider_event *const *events,
                                      size_t n_events, const char *const *patterns, size_t n_patterns,
                                      const struct provider_stream_owner *owner) {
        assert(l);
        if (!l->ops->record_kernel_pages)
                return -EOPNOTSUPP;
        return l->ops->record_kernel_pages(l->provider, events, n_events, patterns, n_patterns, owner);
}
