/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The v1 provider: the original user_events interface as the project's
 * kernel provider implements it (kernel/, CONFIG_USER_EVENTS_V1, Linux
 * 6.1).
 *
 * Events live in the kernel, where ftrace and perf see them; the broker
 * only registers. The kernel's status page is global and read-only: every
 * client maps user_events_status itself (one descriptor, shared). Per
 * session (bus connection):
 *   - a user_events_data file opened here, on which the broker registers
 *     the client's events (the kernel numbers them 0, 1, 2, ... per file,
 *     as the broker's table does);
 *   - a write-only handle made from it (DIAG_IOCGWRITER): the client gets
 *     only that, so it can write the events the broker registered for it
 *     (those registered later too) and can neither register nor delete.
 * v1 events persist until deleted: event_add creates the event through a
 * file opened only for that and closed at once, event_remove deletes it.
 */

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "provider.h"
#include "status-text.h"
#include "tracefs-record.h"
#include "tracefs-util.h"

static const char *const tracefs_candidates[] = {
        "/sys/kernel/tracing",
        "/sys/kernel/debug/tracing",
        NULL,
};

struct provider_event {
        const struct event_def *def;
        char *reg_string;       /* name_args of DIAG_IOCSREG */
        uint32_t status_index;  /* the kernel's */
};

struct provider_session {
        struct provider *provider;      /* for session_freep() */
        int data_fd;            /* ours: the client's events are registered here */
        int writer_fd;          /* DIAG_IOCGWRITER of data_fd: what the client gets */
        int status_fd;          /* the provider's, borrowed */
        char *bus_name;
};

struct provider {
        struct tracefs_recordings recordings;   /* first: the record operations are tracefs-record.c's */
        sd_event *event;
        char *tracefs;
        char *data_path;
        int control_fd;         /* a data file that never registers: DIAG_IOCSDEL */
        int status_fd;          /* user_events_status, read-only: every client's page */
        const volatile uint8_t *page;
};

/* A v1 kernel that has the write-only handle: tracefs speaks the original
 * interface and DIAG_IOCGWRITER works. Nothing is registered. */
static int probe_tracefs(const struct provider_settings *settings, char **ret_tracefs, char **ret_reason) {
        _cleanup_free_ char *tracefs = NULL, *data_path = NULL;
        _cleanup_close_ int fd = -EBADF, writer = -EBADF;
        int r;

        r = tracefs_find(settings ? settings->tracefs : NULL, tracefs_candidates, "/proc/mounts", &tracefs);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (ret_reason)
                        *ret_reason = strdup("tracefs is not mounted (/sys/kernel/tracing, "
                                             "/sys/kernel/debug/tracing, /proc/mounts; --tracefs=PATH to name it)");
                return 0;
        }
        r = user_events_detect_interface(tracefs, NULL);
        if (r < 0)
                return r;
        if (r != USER_EVENTS_IFACE_ORIGINAL) {
                if (ret_reason && asprintf(ret_reason, "%s does not speak the original user_events interface (%s)",
                                           tracefs, user_events_interface_name(r)) < 0)
                        *ret_reason = NULL;
                return 0;
        }
        if (asprintf(&data_path, "%s/user_events_data", tracefs) < 0)
                return -ENOMEM;
        fd = open(data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (ret_reason && asprintf(ret_reason, "cannot open %s: %s", data_path, strerror(errno)) < 0)
                        *ret_reason = NULL;
                return 0;
        }
        writer = ioctl(fd, V1_DIAG_IOCGWRITER, 0);
        if (writer < 0) {
                if (ret_reason && asprintf(ret_reason,
                                           "%s has the original interface without DIAG_IOCGWRITER (%s): "
                                           "not the kernel provider of kernel/", tracefs, strerror(errno)) < 0)
                        *ret_reason = NULL;
                return 0;
        }
        *ret_tracefs = TAKE_PTR(tracefs);
        return 1;
}

static int v1_probe(const struct provider_settings *settings, char **ret_reason) {
        _cleanup_free_ char *tracefs = NULL;

        return probe_tracefs(settings, &tracefs, ret_reason);
}

static struct provider *v1_free(struct provider *p) {
        if (!p)
                return NULL;
        tracefs_recordings_done(&p->recordings);
        if (p->page)
                munmap((void *) p->page, STATUS_PAGE_SIZE);
        safe_close(p->control_fd);
        safe_close(p->status_fd);
        free(p->tracefs);
        free(p->data_path);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct provider *, v1_free);

/* The events persist: a recording registers nothing (no reg_string). */
static struct tracefs_record_event record_event_of(const struct provider_event *ev) {
        return (struct tracefs_record_event) { .name = ev->def->name };
}

_Static_assert(offsetof(struct provider, recordings) == 0, "tracefs_provider_record() finds the recordings first");

static int v1_new(sd_event *event, const struct provider_settings *settings, struct provider **ret) {
        _cleanup_(v1_freep) struct provider *p = NULL;
        _cleanup_free_ char *reason = NULL, *status_path = NULL;
        void *page;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->control_fd = p->status_fd = -EBADF;
        p->event = sd_event_ref(event);

        r = probe_tracefs(settings, &p->tracefs, &reason);
        if (r < 0)
                return r;
        if (r == 0)
                return log_error_errno(-ENODEV, "The v1 provider cannot run: %s", reason ?: "unknown reason");
        if (asprintf(&p->data_path, "%s/user_events_data", p->tracefs) < 0 ||
            asprintf(&status_path, "%s/user_events_status", p->tracefs) < 0)
                return -ENOMEM;

        p->control_fd = open(p->data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (p->control_fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", p->data_path);
        p->status_fd = open(status_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (p->status_fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", status_path);
        page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED, p->status_fd, 0);
        if (page == MAP_FAILED)
                return log_error_errno(errno, "Cannot map %s: %m", status_path);
        p->page = page;
        /* Events persist until deleted: recordings register nothing. */
        r = tracefs_recordings_init(&p->recordings, p->event, p->tracefs, NULL, record_event_of);
        if (r < 0)
                return r;

        log_info("v1 provider: the original user_events interface in %s.", p->tracefs);
        *ret = TAKE_PTR(p);
        return 0;
}

/* Events */

/* DIAG_IOCSREG with the original struct user_reg. */
static int register_on(int fd, const char *reg_string, uint32_t *ret_status_index, uint32_t *ret_write_index) {
        struct v1_user_reg reg = {
                .size = sizeof(reg),
                .name_args = (uint64_t) (uintptr_t) reg_string,
        };

        if (ioctl(fd, V1_DIAG_IOCSREG, &reg) < 0)
                /* EADDRINUSE: the name exists with other fields; EMFILE:
                 * the page is full; EINVAL: refused by the kernel.
                 * broker-errors.h names them. */
                return -errno;
        if (ret_status_index)
                *ret_status_index = reg.status_index;
        if (ret_write_index)
                *ret_write_index = reg.write_index;
        return 0;
}

static int v1_event_add(struct provider *p, const struct event_def *def, uint32_t *io_status_index,
                        struct provider_event **ret) {
        _cleanup_free_ struct provider_event *ev = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->def = def;
        ev->reg_string = user_events_registration_string(def);
        if (!ev->reg_string)
                return -ENOMEM;

        /* Created through a file of its own, closed at once: the event
         * persists and only the sessions' files hold it from then on. */
        fd = open(p->data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                r = -errno;
        else
                r = register_on(fd, ev->reg_string, &ev->status_index, NULL);
        if (r < 0) {
                free(ev->reg_string);
                return r;
        }
        if (ev->status_index == 0 || ev->status_index > STATUS_INDEX_MAX) {
                free(ev->reg_string);
                return log_error_errno(-EPROTO, "v1: the kernel gave %s status index %u", def->name,
                                       ev->status_index);
        }
        *io_status_index = ev->status_index;
        tracefs_recordings_follow(&p->recordings, &(struct tracefs_record_event) { .name = def->name });
        *ret = TAKE_PTR(ev);
        return 0;
}

static void v1_event_remove(struct provider *p, struct provider_event *ev) {
        if (!ev)
                return;
        /* Only an undone event_add that a recording's pattern matched is
         * removed while recorded. */
        tracefs_recordings_forget(&p->recordings, ev->def->name);
        /* No session of ours binds it (provider.h). EBUSY: a client still
         * holds a write-only handle of a closed session, or ftrace or perf
         * has it; the broker forgets it now, the kernel keeps it until it
         * is deleted by hand (DIAG_IOCSDEL, dynamic_events). */
        kernel_event_delete(p->control_fd, "v1", ev->def->name,
                            "a client's handle, ftrace or perf; it stays there until deleted by hand");
        free(ev->reg_string);
        free(ev);
}

/* The kernel's own byte: FTRACE, PERF and OTHER bits as they are. */
static uint8_t v1_event_status(struct provider *p, struct provider_event *ev) {
        return p->page[ev->status_index];
}

/* Sessions */

static void v1_session_free(struct provider *p, struct provider_session *s) {
        if (!s)
                return;
        /* The registrations go with the last of the data file and the
         * client's copies of its handle. */
        safe_close(s->writer_fd);
        safe_close(s->data_fd);
        free(s->bus_name);
        free(s);
}

static void session_freep(struct provider_session **s) {
        if (*s)
                v1_session_free((*s)->provider, *s);
}

static int v1_session_new(struct provider *p, const struct provider_peer *peer, const struct write_indexes *indexes,
                          struct provider_session **ret) {
        _cleanup_(session_freep) struct provider_session *s = NULL;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->provider = p;
        s->data_fd = s->writer_fd = -EBADF;
        s->status_fd = p->status_fd;
        s->bus_name = strdup(peer->bus_name ?: "?");
        if (!s->bus_name)
                return -ENOMEM;
        s->data_fd = open(p->data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (s->data_fd < 0)
                return log_error_errno(errno, "Cannot open %s for %s: %m", p->data_path, s->bus_name);
        s->writer_fd = ioctl(s->data_fd, V1_DIAG_IOCGWRITER, 0);
        if (s->writer_fd < 0)
                return log_error_errno(errno, "Cannot make a write-only handle for %s: %m", s->bus_name);
        *ret = TAKE_PTR(s);
        return 0;
}

static int v1_session_data_fd(struct provider_session *s) {
        return s->writer_fd;
}

static int v1_session_status_fd(struct provider_session *s) {
        return s->status_fd;
}

static int v1_session_register(struct provider *p, struct provider_session *s, struct provider_event *ev,
                               uint32_t write_index) {
        uint32_t got = 0;
        int r;

        r = register_on(s->data_fd, ev->reg_string, NULL, &got);
        if (r < 0)
                return r;
        if (got != write_index)
                /* Only the broker registers on this file (the client has a
                 * write-only handle), so this is a broker bug. */
                return log_error_errno(-EPROTO, "v1: the kernel gave %s write index %u for %s where %u was due",
                                       s->bus_name, got, ev->def->name, write_index);
        return 0;
}

static int v1_session_unregister(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                 uint32_t write_index) {
        /* The original interface has no unregistration: the index stays
         * bound in the kernel and writes to it still reach the event until
         * the session ends. */
        return 0;
}

const struct provider_ops v1_provider_ops = {
        .name = "v1",
        .fds_per_session = 2,   /* the data file and its write-only handle (the status page is shared) */
        .max_record_streams = TRACEFS_RECORDINGS_MAX,
        .probe = v1_probe,
        .new = v1_new,
        .free = v1_free,
        .event_add = v1_event_add,
        .event_remove = v1_event_remove,
        .event_status = v1_event_status,
        .session_new = v1_session_new,
        .session_free = v1_session_free,
        .session_data_fd = v1_session_data_fd,
        .session_status_fd = v1_session_status_fd,
        .session_register = v1_session_register,
        .session_unregister = v1_session_unregister,
        .record = tracefs_provider_record,
        .record_matching = tracefs_provider_record_matching,
        .record_kernel_pages = tracefs_provider_record_kernel_pages,
};
