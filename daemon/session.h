/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * One session per client bus connection (unique name), created by its
 * first successful Register. Every Register of the connection returns the
 * session's one data file and status page, so write indexes stay consistent;
 * they run 0, 1, 2, ... in order of first registration, and the same event
 * registered again returns its index. sd_bus_track watches the connection:
 * when it goes away (a crash included) every registration is released at
 * once.
 */

#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

struct broker;
struct broker_event;
struct provider_session;

struct session {
        struct broker *broker;
        char *bus_name;
        uid_t uid;
        pid_t pid;
        sd_bus_track *track;
        struct provider_session *provider_session;
        struct broker_event **registrations;    /* write index -> event, NULL if free */
        size_t n_slots;
        unsigned n_registrations;
};

/* Creates the session of @bus_name and starts tracking the connection. */
int session_new(struct broker *b, const char *bus_name, uid_t uid, pid_t pid, struct session **ret);
/* Releases every registration and forgets the session. */
struct session *session_free(struct session *s);

struct session *session_find(struct broker *b, const char *bus_name);
unsigned session_count_for_uid(struct broker *b, uid_t uid);
void session_free_all(struct broker *b);

/* The write index of @ev in this session, or -ENOENT. */
int session_find_registration(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* Registers @ev (the caller checked the quota); returns its write index. */
int session_register(struct session *s, struct broker_event *ev, uint32_t *ret_write_index);
/* -ENOENT when @write_index is not registered in this session. */
int session_unregister(struct session *s, uint32_t write_index);
