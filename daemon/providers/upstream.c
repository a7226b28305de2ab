/* SPDX-License-Identifier: LGPL-2.1-or-later */

/*
 * The upstream provider: Linux 6.4+ user_events (Documentation/trace/user_events.rst).
 *
 * Events live in the kernel, where ftrace and perf see them; the broker
 * only registers. Per session (bus connection):
 *   - a user_events_data file opened here; the client gets a copy and
 *     writes [u32 write_index][payload] to it itself, the kernel checks
 *     the payload. Write indexes are the kernel's, per open file.
 *   - a 4096-byte memfd status page, mapped read-write here and sealed;
 *     the client maps a read-only reopen. Each DIAG_IOCSREG names a bit of
 *     this mapping (upstream_enable_location()): the kernel writes the
 *     enable bit into the broker's memory, the client sees it through its
 *     own mapping of the same memfd. Status indexes are the broker's
 *     (global), so each event has its own byte on every page.
 * Enablers belong to the broker's mm, not to the file: before a page is
 * unmapped each of its enablers is unregistered, or the kernel would keep
 * writing into whatever is mapped there later. An enabler is the u32 at
 * page + (status_index & ~3), bit (status_index & 3) * 8 (on little-endian
 * the lowest bit of byte status_index: the byte is non-zero while the
 * event is enabled, as on a v1 page); the kernel's remote writes land in
 * the broker's mapping of the memfd, which the client sees through its own.
 *
 * Events are not PERSIST (that needs CAP_PERFMON and would outlive the
 * broker): an event exists in the kernel from its first registration until
 * its last reference goes, which includes the copies of data files the
 * clients hold. event_add therefore touches nothing in the kernel.
 *
 * Restricted handles (kernel/upstream-6.12/, a patch not upstream yet):
 * when the kernel has DIAG_IOCSHANDLE, the client never gets the data file
 * itself. A session that Registers gets a write-only handle of it (it
 * writes the indexes the broker registered on the file, later ones too, and
 * every ioctl is EPERM); a session that registers itself (Authorize) gets a
 * granting handle, on which the kernel lets it register exactly the
 * definitions the broker granted (DIAG_IOCSGRANT) and withdraws them with
 * the grant (DIAG_IOCSREVOKE). On a stock kernel the client gets a copy of
 * the data file, and Authorize is the broker's word only.
 */

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <tracefs/tracefs.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "list.h"
#include "log.h"
#include "provider.h"
#include "status-text.h"
#include "tracefs-record.h"
#include "tracefs-util.h"

/* user_events_status holds at most user_events_max (32768 by default)
 * lines of at most ~280 bytes; anything beyond this is not read. */
#define UPSTREAM_STATUS_TEXT_MAX (16u * 1024u * 1024u)

static const char *const tracefs_candidates[] = {
        "/sys/kernel/tracing",
        "/sys/kernel/debug/tracing",
        NULL,
};

struct provider_event {
        const struct event_def *def;
        char *reg_string;       /* name_args of DIAG_IOCSREG */
        uint32_t status_index;
        unsigned n_bound;       /* sessions whose data file has a write index for it */
        unsigned n_active;      /* sessions with an enabler for it */
        /* From the last read of user_events_status (status_generation). */
        uint8_t status;
        uint64_t status_generation;
};

struct provider_session {
        struct provider *provider;
        int data_fd;            /* user_events_data, ours: we register on it */
        /* With restricted handles: what the client gets instead of
         * data_fd, a write-only handle of it or, once the session is
         * granted something, a granting handle. -EBADF on stock kernels. */
        int handle_fd;
        bool granting;
        int page_ro_fd;         /* read-only descriptor handed to the client */
        uint8_t *page;          /* read-write, ours: the kernel's enable bits land here */
        /* The broker's table (write-indexes.h), the same numbers as the
         * kernel's for this file; an active index has an enabler. */
        const struct write_indexes *indexes;
        char *bus_name;
        LIST_FIELDS(struct provider_session, sessions);
};

struct provider {
        struct tracefs_recordings recordings;   /* first: the record operations are tracefs-record.c's */
        sd_event *event;
        char *tracefs;
        char *status_path;      /* tracefs/user_events_status */
        char *data_path;        /* tracefs/user_events_data */
        int control_fd;         /* our own data file, for DIAG_IOCSDEL only */
        bool handles;           /* the kernel has restricted handles (DIAG_IOCSHANDLE) */
        void *by_name;          /* tsearch() tree of struct provider_event */
        LIST_HEAD(struct provider_session, sessions);

        /* user_events_status is read at most once per event-loop
         * iteration (sd_event_now() as the key): GetStatus asks for every
         * event in one call. */
        uint64_t status_generation;
        uint64_t status_read_usec;
        bool status_unreadable_logged;
};

static int compare_by_name(const void *a, const void *b) {
        const struct provider_event *x = a, *y = b;

        return strcmp(x->def->name, y->def->name);
}

/* For tdestroy(): the tree's nodes go, the events are the broker's to
 * remove (it removes them all before freeing the provider). */
static void event_forget(void *ev) {
}

/* A restricted handle of @data_fd (DIAG_IOCSHANDLE): write-only, or
 * @granting. Returns it, or -ENOTTY on a kernel without them. */
static int handle_derive(int data_fd, bool granting) {
        struct upstream_user_handle h = {
                .size = sizeof(h),
                .flags = UPSTREAM_USER_HANDLE_CLOEXEC | (granting ? UPSTREAM_USER_HANDLE_GRANTING : 0),
        };
        int fd;

        fd = ioctl(data_fd, UPSTREAM_DIAG_IOCSHANDLE, &h);
        return fd < 0 ? -errno : fd;
}

static int probe_tracefs(const struct provider_settings *settings, char **ret_tracefs, char **ret_reason) {
        _cleanup_free_ char *tracefs = NULL, *data_path = NULL;
        _cleanup_close_ int fd = -EBADF;
        int r;

        r = tracefs_find(settings ? settings->tracefs : NULL, tracefs_candidates, "/proc/mounts",
                                  &tracefs);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (ret_reason)
                        *ret_reason = strdup("tracefs is not mounted (/sys/kernel/tracing, "
                                             "/sys/kernel/debug/tracing, /proc/mounts; --tracefs=PATH to name it)");
                return 0;
        }

        r = user_events_detect_interface(tracefs, ret_reason);
        if (r < 0)
                return r;
        if (r != USER_EVENTS_IFACE_UPSTREAM)
                return 0;

        /* Opening is no registration: it only tells whether we may. */
        if (asprintf(&data_path, "%s/user_events_data", tracefs) < 0)
                return -ENOMEM;
        fd = open(data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (fd < 0) {
                if (ret_reason && asprintf(ret_reason, "cannot open %s: %s", data_path, strerror(errno)) < 0)
                        *ret_reason = NULL;
                return 0;
        }
        *ret_tracefs = TAKE_PTR(tracefs);
        return 1;
}

static int upstream_probe(const struct provider_settings *settings, char **ret_reason) {
        _cleanup_free_ char *tracefs = NULL;

        return probe_tracefs(settings, &tracefs, ret_reason);
}

static struct provider *upstream_free(struct provider *p) {
        if (!p)
                return NULL;
        tracefs_recordings_done(&p->recordings);
        /* The broker frees sessions and events first; the tree is empty. */
        tdestroy(p->by_name, event_forget);
        safe_close(p->control_fd);
        free(p->tracefs);
        free(p->status_path);
        free(p->data_path);
        sd_event_unref(p->event);
        free(p);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct provider *, upstream_free);

/* A recording registers the event on its own file: it needs the
 * registration string too. */
static struct tracefs_record_event record_event_of(const struct provider_event *ev) {
        return (struct tracefs_record_event) { .name = ev->def->name, .reg_string = ev->reg_string };
}

_Static_assert(offsetof(struct provider, recordings) == 0, "tracefs_provider_record() finds the recordings first");

static int upstream_new(sd_event *event, const struct provider_settings *settings, struct provider **ret) {
        _cleanup_(upstream_freep) struct provider *p = NULL;
        _cleanup_free_ char *reason = NULL;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->event = sd_event_ref(event);
        p->control_fd = -EBADF;

        r = probe_tracefs(settings, &p->tracefs, &reason);
        if (r < 0)
                return r;
        if (r == 0)
                return log_error_errno(-ENODEV, "The upstream provider cannot run: %s", reason ?: "unknown reason");

        if (asprintf(&p->status_path, "%s/user_events_status", p->tracefs) < 0 ||
            asprintf(&p->data_path, "%s/user_events_data", p->tracefs) < 0)
                return -ENOMEM;

        p->control_fd = open(p->data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (p->control_fd < 0)
                return log_error_errno(errno, "Cannot open %s: %m", p->data_path);

        r = tracefs_recordings_init(&p->recordings, p->event, p->tracefs, p->data_path, record_event_of);
        if (r < 0)
                return r;

        r = handle_derive(p->control_fd, false);
        if (r >= 0) {
                p->handles = true;
                safe_close(r);
        } else if (r != -ENOTTY)
                log_warning_errno(r, "Cannot tell whether the kernel has restricted user_events handles, "
                                     "giving clients the data file: %m");

        log_info("Upstream provider: user_events in %s, %s.", p->tracefs,
                 p->handles ? "clients get restricted handles (DIAG_IOCSHANDLE)" :
                              "clients get the data file (this kernel has no restricted handles)");
        *ret = TAKE_PTR(p);
        return 0;
}

/* Events */

static int upstream_event_add(struct provider *p, const struct event_def *def, uint32_t *io_status_index,
                              struct provider_event **ret) {
        _cleanup_free_ struct provider_event *ev = NULL;

        if (*io_status_index == 0 || *io_status_index > STATUS_INDEX_MAX)
                return -EINVAL;

        ev = calloc(1, sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        ev->def = def;
        ev->status_index = *io_status_index;
        ev->reg_string = user_events_registration_string(def);
        if (!ev->reg_string)
                return -ENOMEM;
        if (!tsearch(ev, &p->by_name, compare_by_name)) {
                free(ev->reg_string);
                return -ENOMEM;
        }
        /* A recording whose pattern matches registers it on its file, so
         * it exists in the kernel from now on. */
        tracefs_recordings_follow(&p->recordings, &(struct tracefs_record_event) {
                .name = def->name,
                .reg_string = ev->reg_string,
        });
        *ret = TAKE_PTR(ev);
        return 0;
}

static void upstream_event_remove(struct provider *p, struct provider_event *ev) {
        if (!ev)
                return;

        /* Only an undone event_add that a recording's pattern matched is
         * removed while recorded (the broker removes unused events). */
        tracefs_recordings_forget(&p->recordings, ev->def->name);

        /* No session of ours binds it (provider.h), so our files hold no
         * reference. A non-PERSIST event goes with its last reference by
         * itself (ENOENT: already gone); EBUSY means a client still has a
         * copy of a data file that registered it, or someone registered
         * the name outside the broker: the kernel removes it when they
         * close. Either way the broker forgets it now. */
        kernel_event_delete(p->control_fd, "Upstream", ev->def->name,
                            "a client's open data file, or a registration outside the broker; it goes when that closes");

        tdelete(ev, &p->by_name, compare_by_name);
        free(ev->reg_string);
        free(ev);
}

/* Reads user_events_status into each known event's status. */
static int status_refresh(struct provider *p) {
        _cleanup_close_ int fd = -EBADF;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 0;
        const char *line, *end;

        fd = open(p->status_path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        for (;;) {
                ssize_t n;

                if (cap - len < 4096) {
                        char *b;

                        if (cap >= UPSTREAM_STATUS_TEXT_MAX)
                                break;
                        cap = cap ? cap * 2 : 16384;
                        b = realloc(buf, cap);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = read(fd, buf + len, cap - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }

        p->status_generation++;
        for (line = buf, end = buf + len; line && line < end;) {
                const char *nl = memchr(line, '\n', (size_t) (end - line)), *name;
                size_t line_len = nl ? (size_t) (nl - line) : (size_t) (end - line), name_len;
                uint8_t status;

                if (upstream_status_line_parse(line, line_len, &name, &name_len, &status) > 0 &&
                    name_len <= EVENT_NAME_MAX) {
                        char key_name[EVENT_NAME_MAX + 1];
                        struct event_def key_def = { .name = key_name };
                        struct provider_event key = { .def = &key_def };
                        void *found;

                        memcpy(key_name, name, name_len);
                        key_name[name_len] = '\0';
                        found = tfind(&key, &p->by_name, compare_by_name);
                        if (found) {
                                struct provider_event *ev = *(struct provider_event **) found;

                                ev->status = status;
                                ev->status_generation = p->status_generation;
                        }
                }
                line = nl ? nl + 1 : NULL;
        }
        return 0;
}

/* Our enable bit for @ev on any page: someone listens, the kernel does not
 * say who here. */
static uint8_t status_from_pages(struct provider *p, struct provider_event *ev) {
        LIST_FOREACH(sessions, s, p->sessions)
                for (size_t i = 0; i < s->indexes->n; i++)
                        if (s->indexes->entries[i].provider_event == ev && s->indexes->entries[i].active)
                                return s->page[ev->status_index] ? EVENT_STATUS_OTHER : 0;
        return 0;
}

/*
 * Who listens, as EVENT_STATUS_* bits. The session pages only carry one
 * enable bit ("someone listens"), so the kernel's user_events_status text
 * is the source: its "Used by ftrace perf other" are exactly these bits. It
 * is read at most once per event-loop iteration, and asked of every event:
 * one no session binds may still be registered by a client itself
 * (Authorize) or by a recording; one the kernel no longer has is not in the
 * text: 0. Only when the text cannot be read do the pages answer, as
 * "other".
 */
static uint8_t upstream_event_status(struct provider *p, struct provider_event *ev) {
        uint64_t now = 0;
        int r;

        if (sd_event_now(p->event, CLOCK_MONOTONIC, &now) < 0 || now != p->status_read_usec ||
            p->status_generation == 0) {
                r = status_refresh(p);
                if (r < 0) {
                        if (!p->status_unreadable_logged)
                                log_warning_errno(r, "Cannot read %s, status from the enable bits only: %m",
                                                  p->status_path);
                        p->status_unreadable_logged = true;
                        return status_from_pages(p, ev);
                }
                p->status_read_usec = now;
        }
        return ev->status_generation == p->status_generation ? ev->status : 0;
}

/* Sessions */

/* DIAG_IOCSGRANT or DIAG_IOCSREVOKE of @ev's definition on the session's
 * granting handle. */
static int grant_request(struct provider_session *s, unsigned long request, struct provider_event *ev) {
        struct upstream_user_grant g = {
                .size = sizeof(g),
                .handle_fd = s->handle_fd,
                .name_args = (uint64_t) (uintptr_t) ev->reg_string,
        };

        return ioctl(s->data_fd, request, &g) < 0 ? -errno : 0;
}

/* Removes the enabler of @ev on this session's page from our mm. */
static int enabler_unregister(struct provider_session *s, struct provider_event *ev) {
        struct upstream_user_unreg unreg = { .size = sizeof(unreg) };
        uint64_t addr;

        upstream_enable_location(ev->status_index, (uint64_t) (uintptr_t) s->page, &addr, &unreg.disable_bit);
        unreg.disable_addr = addr;
        /* ENOENT: no enabler at that address and bit; there is nothing
         * left to stop (the kernel has dropped it already). */
        if (ioctl(s->data_fd, UPSTREAM_DIAG_IOCSUNREG, &unreg) < 0 && errno != ENOENT)
                return -errno;
        return 0;
}

static void upstream_session_free(struct provider *p, struct provider_session *s) {
        bool keep_page = false;

        if (!s)
                return;

        /* The broker's table is intact until we return. */
        for (size_t i = 0; s->indexes && i < s->indexes->n; i++) {
                struct provider_event *ev = s->indexes->entries[i].provider_event;

                if (s->indexes->entries[i].active) {
                        int r = enabler_unregister(s, ev);

                        if (r < 0) {
                                /* The kernel may still write there: a page
                                 * reused at that address would be
                                 * corrupted. Leak the mapping instead. */
                                log_error_errno(r, "Cannot unregister %s of %s, keeping its status page mapped: %m",
                                                ev->def->name, s->bus_name);
                                keep_page = true;
                        }
                        ev->n_active--;
                }
                ev->n_bound--;
        }
        if (s->page && !keep_page)
                munmap(s->page, STATUS_PAGE_SIZE);

        LIST_REMOVE(sessions, p->sessions, s);

        /* On a stock kernel the events stay while the client keeps its
         * copy of the data file open. With restricted handles, closing our
         * file cuts the client's handle off (kernel/upstream-6.12/): its
         * writes and registrations are EPERM, the enablers registered
         * through it are removed, and the events can be deleted; a broker
         * that crashes gets the same from the kernel. */
        safe_close(s->handle_fd);
        safe_close(s->data_fd);
        safe_close(s->page_ro_fd);
        free(s->bus_name);
        free(s);
}

static void session_freep(struct provider_session **s) {
        if (*s)
                upstream_session_free((*s)->provider, *s);
}

static int upstream_session_new(struct provider *p, const struct provider_peer *peer, const struct write_indexes *indexes,
                                struct provider_session **ret) {
        _cleanup_(session_freep) struct provider_session *s = NULL;
        _cleanup_close_ int page_fd = -EBADF;
        void *page;
        int r;

        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->provider = p;
        s->indexes = indexes;
        s->data_fd = s->handle_fd = s->page_ro_fd = -EBADF;
        s->bus_name = strdup(peer->bus_name ?: "?");
        if (!s->bus_name)
                return -ENOMEM;

        /* Each session its own file: write indexes are per file, and a
         * client that misuses its copy only disturbs its own session. */
        s->data_fd = open(p->data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (s->data_fd < 0)
                return log_error_errno(errno, "Cannot open %s for %s: %m", p->data_path, s->bus_name);
        if (p->handles) {
                s->handle_fd = handle_derive(s->data_fd, false);
                if (s->handle_fd < 0)
                        return log_error_errno(s->handle_fd, "Cannot derive a write-only handle for %s: %m",
                                               s->bus_name);
        }

        page_fd = memfd_new_sized("uebroker-status", STATUS_PAGE_SIZE);
        if (page_fd < 0)
                return log_error_errno(page_fd, "Cannot create a status page memfd: %m");
        /* Map writable before sealing: F_SEAL_FUTURE_WRITE keeps this
         * mapping (the kernel's enable bits are written through it) and
         * refuses every later writable one. */
        page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, page_fd, 0);
        if (page == MAP_FAILED)
                return log_error_errno(errno, "Cannot map a status page: %m");
        s->page = page;
        r = memfd_seal_read_only(page_fd);
        if (r < 0)
                return log_error_errno(r, "Cannot seal a status page: %m");
        /* As the embedded provider: an O_RDONLY reopen, or the sealed memfd
         * itself without /proc. The read-write descriptor is not needed
         * once mapped: one descriptor less per session. */
        s->page_ro_fd = fd_reopen_read_only(page_fd);
        if (s->page_ro_fd < 0) {
                log_debug_errno(s->page_ro_fd, "Cannot reopen a status page read-only, handing out the sealed memfd: %m");
                s->page_ro_fd = page_fd;
                page_fd = -EBADF;
        }

        LIST_PREPEND(sessions, p->sessions, s);
        *ret = TAKE_PTR(s);
        return 0;
}

static int upstream_session_data_fd(struct provider_session *s) {
        return s->handle_fd >= 0 ? s->handle_fd : s->data_fd;
}

static int upstream_session_status_fd(struct provider_session *s) {
        return s->page_ro_fd;
}

/* Registers @ev with an enabler on this session's page; the kernel answers
 * with the write index. */
static int enabler_register(struct provider_session *s, struct provider_event *ev, uint32_t *ret_write_index) {
        struct upstream_user_reg reg = {
                .size = sizeof(reg),
                .enable_size = UPSTREAM_ENABLE_SIZE,
                .name_args = (uint64_t) (uintptr_t) ev->reg_string,
        };
        uint64_t addr;

        upstream_enable_location(ev->status_index, (uint64_t) (uintptr_t) s->page, &addr, &reg.enable_bit);
        reg.enable_addr = addr;
        if (ioctl(s->data_fd, UPSTREAM_DIAG_IOCSREG, &reg) < 0)
                /* EADDRINUSE: the name exists with other fields; EMFILE:
                 * user_events_max; EINVAL: a definition the kernel
                 * refuses. broker-errors.h names them. */
                return -errno;
        *ret_write_index = reg.write_index;
        return 0;
}

static int upstream_session_register(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                     uint32_t write_index) {
        bool is_new = write_index >= s->indexes->n;
        uint32_t got = 0;
        int r;

        /* A new enabler; for an index bound before, the kernel answers
         * with the number its file already has for the event. */
        r = enabler_register(s, ev, &got);
        if (r < 0)
                return r;
        if (got != write_index) {
                /* The kernel numbers a file's events 0, 1, 2, ... and
                 * keeps an event's number; anything else means someone
                 * registered on this file behind our back (the client holds
                 * a copy). Remove the enabler we just made and refuse: our
                 * indexes no longer describe the file. */
                (void) enabler_unregister(s, ev);
                return log_error_errno(-EPROTO,
                                       "Upstream: the kernel gave %s write index %u for %s where %u was due "
                                       "(events registered on its data file outside the broker?)",
                                       s->bus_name, got, ev->def->name, write_index);
        }
        if (is_new)
                ev->n_bound++;
        ev->n_active++;
        return 0;
}

static int upstream_session_unregister(struct provider *p, struct provider_session *s, struct provider_event *ev,
                                       uint32_t write_index) {
        int r;

        /* The kernel clears the bit and stops updating it. It cannot switch
         * the write index off: writes to it still reach the event. */
        r = enabler_unregister(s, ev);
        if (r < 0)
                return r;
        ev->n_active--;
        return 0;
}

static int upstream_session_grant(struct provider *p, struct provider_session *s, struct provider_event *ev) {
        int r;

        if (!p->handles)
                return 0;       /* the client holds the data file: nothing to enforce */
        if (!s->granting) {
                /* The session registers itself from now on (the broker
                 * refuses Register on it): its handle becomes a granting
                 * one. No copy of the write-only one was handed out. */
                r = handle_derive(s->data_fd, true);
                if (r < 0)
                        return log_error_errno(r, "Cannot derive a granting handle for %s: %m", s->bus_name);
                safe_close(s->handle_fd);
                s->handle_fd = r;
                s->granting = true;
        }
        /* EADDRINUSE: the kernel has the name with other fields; EMFILE:
         * user_events_max; the grant creates the event if needed. */
        return grant_request(s, UPSTREAM_DIAG_IOCSGRANT, ev);
}

static int upstream_session_withdraw(struct provider *p, struct provider_session *s, struct provider_event *ev) {
        int r;

        if (!p->handles)
                return 0;
        r = grant_request(s, UPSTREAM_DIAG_IOCSREVOKE, ev);
        /* ENOENT: the kernel has no such grant; the broker's is dropped
         * all the same. */
        if (r < 0 && r != -ENOENT)
                return log_error_errno(r, "Cannot withdraw %s from %s: %m", ev->def->name, s->bus_name);
        return 0;
}

const struct provider_ops upstream_provider_ops = {
        .name = "upstream",
        .fds_per_session = 3,   /* the data file, its restricted handle (patched kernels) and the read-only
                                 * page descriptor (plus one mapping) */
        .max_record_streams = TRACEFS_RECORDINGS_MAX,
        .self_registration = true,
        .probe = upstream_probe,
        .new = upstream_new,
        .free = upstream_free,
        .event_add = upstream_event_add,
        .event_remove = upstream_event_remove,
        .event_status = upstream_event_status,
        .session_new = upstream_session_new,
        .session_free = upstream_session_free,
        .session_data_fd = upstream_session_data_fd,
        .session_status_fd = upstream_session_status_fd,
        .session_register = upstream_session_register,
        .session_unregister = upstream_session_unregister,
        .session_grant = upstream_session_grant,
        .session_withdraw = upstream_session_withdraw,
        .record = tracefs_provider_record,
        .record_matching = tracefs_provider_record_matching,
        .record_kernel_pages = tracefs_provider_record_kernel_pages,
};
