/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <tracefs/tracefs.h>
#include <traceevent/kbuffer.h>

#include "array.h"
#include "cleanup.h"
#include "event-pattern.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "status-text.h"
#include "tracedat-page.h"
#include "tracefs-record.h"
#include "tracefs-util.h"
#include "time-util.h"

/* Sub-buffers read from one CPU per wakeup: a busy CPU cannot keep the
 * loop (and the bus) waiting. */
#define RECORDER_READS_PER_WAKEUP 16
/* Every ftrace record starts with struct trace_entry: u16 type, u8 flags,
 * u8 preempt_count, s32 pid; the writer's payload follows. */
#define TRACE_ENTRY_SIZE 8u

struct recorded_event {
        int id;                         /* events/user_events/NAME/id */
        char *name;
        uint16_t name_len;
        uint32_t slot;                  /* its enabler's byte on our page (1..) */
        bool registered;                /* that enabler is there */
        bool format_pending;            /* kernel pages: its format not sent yet */
};

struct recorder_cpu {
        struct tracefs_recorder *recorder;
        int cpu;
        struct tracefs_cpu *tcpu;       /* owns the trace_pipe_raw fd */
        sd_event_source *io;
};

struct tracefs_recorder {
        struct record_sink *sink;
        struct tracefs_instance *instance;
        int data_fd;                    /* our own user_events_data */
        uint8_t *page;                  /* where our enablers point */
        struct recorded_event *events;  /* sorted by id once enabled */
        size_t n_events;
        size_t n_allocated;
        uint32_t next_slot;             /* for the next enabler on our page */
        struct recorder_cpu *cpus;
        size_t n_cpus;
        struct kbuffer *kbuf;
        void *subbuf;
        int subbuf_size;
        bool kernel_pages;              /* RecordKernelPages: the sub-buffers as they are */
        unsigned headers_pending;       /* bit i: kernel_headers[i] not sent yet */
        size_t formats_pending;
        void (*on_gone)(void *userdata);
        void *userdata;
};

static unsigned recorder_counter;

static int compare_by_id(const void *a, const void *b) {
        const struct recorded_event *x = a, *y = b;

        return x->id < y->id ? -1 : x->id > y->id;
}

/* Removes our enabler for event @i. */
static void event_unregister(struct tracefs_recorder *r, size_t i) {
        struct upstream_user_unreg unreg = { .size = sizeof(unreg) };
        uint64_t addr;

        upstream_enable_location(r->events[i].slot, (uint64_t) (uintptr_t) r->page, &addr, &unreg.disable_bit);
        unreg.disable_addr = addr;
        if (ioctl(r->data_fd, UPSTREAM_DIAG_IOCSUNREG, &unreg) < 0 && errno != ENOENT)
                log_warning_errno(errno, "Recorder: cannot unregister %s: %m", r->events[i].name);
        else
                r->events[i].registered = false;
}

static struct tracefs_recorder *tracefs_recorder_free(struct tracefs_recorder *r) {
        bool keep_page = false;

        if (!r)
                return NULL;

        for (size_t i = 0; i < r->n_cpus; i++) {
                sd_event_source_disable_unref(r->cpus[i].io);
                if (r->cpus[i].tcpu)
                        tracefs_cpu_close(r->cpus[i].tcpu);
        }
        free(r->cpus);
        if (r->instance) {
                /* Removing the instance disables its events. */
                if (tracefs_instance_destroy(r->instance) < 0)
                        log_warning_errno(errno, "Recorder: cannot remove tracefs instance %s: %m",
                                          tracefs_instance_get_name(r->instance));
                tracefs_instance_free(r->instance);
        }
        for (size_t i = 0; i < r->n_events; i++) {
                if (r->events[i].registered)
                        event_unregister(r, i);
                /* Still registered: the kernel may write into the page. */
                keep_page |= r->events[i].registered;
                free(r->events[i].name);
        }
        free(r->events);
        if (r->page && !keep_page)
                munmap(r->page, STATUS_PAGE_SIZE);
        safe_close(r->data_fd);
        if (r->kbuf)
                kbuffer_free(r->kbuf);
        free(r->subbuf);
        record_sink_free(r->sink);
        free(r);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct tracefs_recorder *, tracefs_recorder_free);

static const struct recorded_event *find_event(const struct tracefs_recorder *r, int id) {
        struct recorded_event key = { .id = id };

        return bsearch(&key, r->events, r->n_events, sizeof(*r->events), compare_by_id);
}

static void send_subbuffer(struct tracefs_recorder *r, int cpu, int64_t offset) {
        unsigned long long ts;
        int missed = kbuffer_missed_events(r->kbuf);

        /* -1: the kernel lost records here but does not say how many. */
        if (missed != 0)
                record_sink_count_lost(r->sink, missed > 0 ? (uint64_t) missed : 1);

        for (void *data = kbuffer_read_event(r->kbuf, &ts); data; data = kbuffer_next_event(r->kbuf, &ts)) {
                int size = kbuffer_event_size(r->kbuf);
                const struct recorded_event *ev;
                struct ueb_record_header h;
                uint16_t type;
                int32_t pid;

                if (size < (int) TRACE_ENTRY_SIZE)
                        continue;
                memcpy(&type, data, sizeof(type));
                memcpy(&pid, (uint8_t *) data + 4, sizeof(pid));
                ev = find_event(r, type);
                if (!ev)
                        continue;
                h = (struct ueb_record_header) {
                        .flags = UEB_RECORD_FLAG_KERNEL_TRACE,
                        .pid = (uint32_t) pid,
                        .uid = UEB_RECORD_UID_UNKNOWN,
                        .timestamp_ns = (uint64_t) ((int64_t) ts + offset),
                        .tid = (uint32_t) pid,
                        .cpu = (uint32_t) cpu,
                        .write_monotonic_ns = ts,
                };
                (void) record_sink_send(r->sink, &h, ev->name, ev->name_len, (uint8_t *) data + TRACE_ENTRY_SIZE,
                                        (size_t) size - TRACE_ENTRY_SIZE);
        }
}

/* What a page stream starts with (uebroker-record.h). */
static const char *const kernel_headers[] = { "header_page", "header_event" };

/* One description record (uebroker-record.h) of the tracefs file @file
 * of our instance: 0 sent, -EAGAIN no room now, else it cannot be read. */
static int send_file(struct tracefs_recorder *r, uint16_t flags, const char *name, const char *file) {
        _cleanup_free_ char *text = NULL;
        struct ueb_record_header h = { .flags = flags };
        int size = 0;

        text = tracefs_instance_file_read(r->instance, file, &size);
        if (!text || size <= 0)
                return log_debug_errno(errno ? -errno : -EIO, "Recorder: cannot read %s: %m", file);
        return record_sink_send_description(r->sink, &h, name, strlen(name), text, (size_t) size);
}

/* Sends the header and format files the consumer has not had yet, as far
 * as it has room. A file that cannot be read is left out (said in the
 * log): its consumer cannot decode that event, the others can. */
static void send_descriptions(struct tracefs_recorder *r) {
        if (!r->kernel_pages || !r->sink)
                return;
        for (size_t i = 0; r->headers_pending && i < ELEMENTSOF(kernel_headers); i++) {
                _cleanup_free_ char *file = NULL;

                if (!(r->headers_pending & (1u << i)))
                        continue;
                if (asprintf(&file, "events/%s", kernel_headers[i]) < 0)
                        return;
                if (send_file(r, UEB_RECORD_FLAG_KERNEL_HEADER, kernel_headers[i], file) == -EAGAIN)
                        return;
                r->headers_pending &= ~(1u << i);
        }
        for (size_t i = 0; r->formats_pending > 0 && i < r->n_events; i++) {
                struct recorded_event *ev = &r->events[i];
                _cleanup_free_ char *file = NULL;

                if (!ev->format_pending)
                        continue;
                if (asprintf(&file, "events/user_events/%s/format", ev->name) < 0)
                        return;
                if (send_file(r, UEB_RECORD_FLAG_KERNEL_FORMAT, ev->name, file) == -EAGAIN)
                        return;
                ev->format_pending = false;
                r->formats_pending--;
        }
}

/* A sub-buffer as it is; lost (counted) while what describes it could not
 * be sent, so that no page comes before its events' formats. */
static void send_page(struct tracefs_recorder *r, int cpu, int size) {
        unsigned long commit;
        size_t used;
        struct ueb_record_header h = {
                .flags = UEB_RECORD_FLAG_KERNEL_PAGE,
                .uid = UEB_RECORD_UID_UNKNOWN,
                .cpu = (uint32_t) cpu,
        };

        if (r->headers_pending || r->formats_pending > 0) {
                record_sink_count_lost(r->sink, 1);
                return;
        }
        if ((size_t) size < TRACEDAT_PAGE_HEADER_SIZE)
                return;
        /* The page's own time stamp: where its first event's delta starts. */
        memcpy(&h.write_monotonic_ns, r->subbuf, sizeof(h.write_monotonic_ns));
        /* The consumer gets the events (and the stored count of those
         * missed), not what else the rest of the page held. */
        memcpy(&commit, (uint8_t *) r->subbuf + 8, sizeof(commit));
        used = TRACEDAT_PAGE_HEADER_SIZE + (commit & ~(TRACEDAT_MISSED_EVENTS | TRACEDAT_MISSED_STORED)) +
               (commit & TRACEDAT_MISSED_STORED ? sizeof(long) : 0);
        if (used < (size_t) size)
                memset((uint8_t *) r->subbuf + used, 0, (size_t) size - used);
        (void) record_sink_send(r->sink, &h, NULL, 0, r->subbuf, (size_t) size);
}

static int cpu_io(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        struct recorder_cpu *c = ASSERT_PTR(userdata);
        struct tracefs_recorder *r = c->recorder;
        /* The instance's clock is "mono": records carry the time of the
         * write; the stream's timestamps are CLOCK_REALTIME
         * (uebroker-record.h). */
        int64_t offset = realtime_minus_monotonic_ns();

        send_descriptions(r);
        for (int i = 0; i < RECORDER_READS_PER_WAKEUP; i++) {
                int n = tracefs_cpu_read(c->tcpu, r->subbuf, true);

                if (n <= 0)
                        break;
                if (r->kernel_pages) {
                        send_page(r, c->cpu, n);
                        continue;
                }
                if (kbuffer_load_subbuffer(r->kbuf, r->subbuf) < 0)
                        break;
                send_subbuffer(r, c->cpu, offset);
        }
        (void) record_sink_flush(r->sink);
        return 0;
}

static void sink_gone(void *userdata) {
        struct tracefs_recorder *r = ASSERT_PTR(userdata);

        r->on_gone(r->userdata);
}

/* The consumer reads again: what it could not take before goes now. */
static void sink_drained(void *userdata) {
        send_descriptions(userdata);
}

/* Registers @ev on our own file so it exists in the kernel while we
 * record, as the broker's definition (EADDRINUSE: the name exists there
 * with other fields). */
static int event_register(struct tracefs_recorder *r, struct recorded_event *ev, const char *reg_string) {
        struct upstream_user_reg reg = {
                .size = sizeof(reg),
                .enable_size = UPSTREAM_ENABLE_SIZE,
                .name_args = (uint64_t) (uintptr_t) reg_string,
        };
        uint64_t addr;

        if (!reg_string || r->data_fd < 0)
                return 0;       /* v1: the event exists until deleted */

        if (r->next_slot > STATUS_INDEX_MAX)
                return -ENOSPC;
        ev->slot = r->next_slot++;
        upstream_enable_location(ev->slot, (uint64_t) (uintptr_t) r->page, &addr, &reg.enable_bit);
        reg.enable_addr = addr;
        if (ioctl(r->data_fd, UPSTREAM_DIAG_IOCSREG, &reg) < 0)
                return log_debug_errno(errno, "Recorder: cannot register %s: %m", ev->name);
        ev->registered = true;
        return 0;
}

static int instance_write(struct tracefs_instance *instance, const char *file, const char *value) {
        if (tracefs_instance_file_write(instance, file, value) < 0)
                return log_debug_errno(errno ? -errno : -EIO, "Recorder: cannot write %s to %s: %m",
                                       value, file);
        return 0;
}

static int instance_setup(struct tracefs_recorder *r) {
        char buffer_kb[16];
        int k;

        snprintf(buffer_kb, sizeof(buffer_kb), "%u", TRACEFS_RECORDER_BUFFER_KB);
        /* Small rings; readers woken by any record, not at half full; the
         * time of each write in CLOCK_MONOTONIC. */
        if ((k = instance_write(r->instance, "buffer_size_kb", buffer_kb)) < 0 ||
            (k = instance_write(r->instance, "buffer_percent", "0")) < 0 ||
            (k = instance_write(r->instance, "trace_clock", "mono")) < 0)
                return k;
        return 0;
}

/* Enables @ev in our instance and learns its id. */
static int event_enable(struct tracefs_recorder *r, struct recorded_event *ev) {
        _cleanup_free_ char *id = NULL;
        int size = 0;

        if (tracefs_event_enable(r->instance, "user_events", ev->name) < 0)
                return log_debug_errno(errno ? -errno : -ENOENT, "Recorder: cannot enable %s: %m", ev->name);
        id = tracefs_event_file_read(r->instance, "user_events", ev->name, "id", &size);
        if (!id || sscanf(id, "%d", &ev->id) != 1)
                return log_debug_errno(-EIO, "Recorder: cannot read the id of %s", ev->name);
        return 0;
}

static int events_reserve(struct tracefs_recorder *r, size_t n) {
        return ARRAY_RESERVE(r->events, r->n_allocated, n);
}

/* Takes event @i out: disabled in the instance, our enabler removed. */
static void event_stop(struct tracefs_recorder *r, size_t i) {
        struct recorded_event *ev = &r->events[i];

        if (tracefs_event_disable(r->instance, "user_events", ev->name) < 0)
                log_debug_errno(errno, "Recorder: cannot disable %s: %m", ev->name);
        if (ev->registered)
                event_unregister(r, i);
        if (ev->registered)
                return;         /* its enabler stays: so must the entry */
        if (ev->format_pending)
                r->formats_pending--;
        free(ev->name);
        memmove(ev, ev + 1, (r->n_events - i - 1) * sizeof(*ev));
        r->n_events--;
}

/* Registers, enables and lists @event (the list sorted by id again). */
static int event_start(struct tracefs_recorder *r, const struct tracefs_record_event *event) {
        struct recorded_event *ev;
        int k;

        k = events_reserve(r, r->n_events + 1);
        if (k < 0)
                return k;
        ev = &r->events[r->n_events];
        *ev = (struct recorded_event) { .name = strdup(event->name) };
        if (!ev->name)
                return -ENOMEM;
        ev->name_len = (uint16_t) strlen(ev->name);
        r->n_events++;  /* listed now, so that event_stop() undoes what follows */
        k = event_register(r, ev, event->reg_string);
        if (k >= 0)
                k = event_enable(r, ev);
        if (k < 0) {
                event_stop(r, r->n_events - 1);
                return k;
        }
        if (r->kernel_pages) {
                ev->format_pending = true;
                r->formats_pending++;
        }
        qsort(r->events, r->n_events, sizeof(*r->events), compare_by_id);
        send_descriptions(r);
        return 0;
}

static int tracefs_recorder_add_event(struct tracefs_recorder *r, const struct tracefs_record_event *event) {
        for (size_t i = 0; i < r->n_events; i++)
                if (strcmp(r->events[i].name, event->name) == 0)
                        return 0;
        return event_start(r, event);
}

static void tracefs_recorder_remove_event(struct tracefs_recorder *r, const char *name) {
        for (size_t i = 0; i < r->n_events; i++)
                if (strcmp(r->events[i].name, name) == 0) {
                        event_stop(r, i);
                        return;
                }
}

static int open_cpus(struct tracefs_recorder *r, sd_event *event, int64_t priority) {
        long n = sysconf(_SC_NPROCESSORS_CONF);

        if (n < 1)
                n = 1;
        r->cpus = calloc((size_t) n, sizeof(*r->cpus));
        if (!r->cpus)
                return -ENOMEM;
        for (long cpu = 0; cpu < n; cpu++) {
                struct recorder_cpu *c = &r->cpus[r->n_cpus];
                char file[64];
                int fd, k;

                snprintf(file, sizeof(file), "per_cpu/cpu%ld/trace_pipe_raw", cpu);
                fd = tracefs_instance_file_open(r->instance, file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
                if (fd < 0)
                        continue;       /* a possible CPU that is not there */
                c->tcpu = tracefs_cpu_alloc_fd(fd, r->subbuf_size, true);
                if (!c->tcpu) {
                        safe_close(fd);
                        return -ENOMEM;
                }
                c->recorder = r;
                c->cpu = (int) cpu;
                r->n_cpus++;
                k = sd_event_add_io(event, &c->io, fd, EPOLLIN, cpu_io, c);
                if (k < 0)
                        return k;
                (void) sd_event_source_set_description(c->io, "tracefs-recorder");
                (void) sd_event_source_set_priority(c->io, priority);
        }
        return r->n_cpus > 0 ? 0 : log_debug_errno(-ENOENT, "Recorder: no per-CPU trace_pipe_raw");
}

static int tracefs_recorder_new(sd_event *event, int64_t priority, const char *data_path, bool kernel_pages,
                          const struct tracefs_record_event *events, size_t n_events,
                          void (*on_gone)(void *userdata), void *userdata,
                          struct tracefs_recorder **ret, int *ret_consumer_fd) {
        _cleanup_(tracefs_recorder_freep) struct tracefs_recorder *r = NULL;
        _cleanup_close_ int consumer_fd = -EBADF;
        char name[64];
        void *page;
        int k;

        if (n_events > STATUS_INDEX_MAX)
                return -EINVAL;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->data_fd = -EBADF;
        r->next_slot = 1;
        r->on_gone = on_gone;
        r->userdata = userdata;
        r->kernel_pages = kernel_pages;
        r->headers_pending = kernel_pages ? (1u << ELEMENTSOF(kernel_headers)) - 1 : 0;

        r->subbuf_size = getpagesize();
        r->subbuf = malloc((size_t) r->subbuf_size);
        r->kbuf = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
        if (!r->subbuf || !r->kbuf)
                return -ENOMEM;

        if (data_path) {
                r->data_fd = open(data_path, O_RDWR | O_CLOEXEC | O_NOCTTY);
                if (r->data_fd < 0)
                        return log_debug_errno(errno, "Recorder: cannot open %s: %m", data_path);
                page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
                if (page == MAP_FAILED)
                        return -errno;
                r->page = page;
        }

        snprintf(name, sizeof(name), TRACEFS_RECORDER_INSTANCE_PREFIX "%d-%u", (int) getpid(), recorder_counter++);
        r->instance = tracefs_instance_create(name);
        if (!r->instance)
                return log_debug_errno(errno ? -errno : -EIO, "Recorder: cannot create tracefs instance %s: %m",
                                       name);
        k = instance_setup(r);
        if (k < 0)
                return k;
        k = events_reserve(r, n_events);
        if (k < 0)
                return k;
        for (size_t i = 0; i < n_events; i++) {
                k = tracefs_recorder_add_event(r, &events[i]);
                if (k < 0)
                        return k;
        }
        k = open_cpus(r, event, priority);
        if (k < 0)
                return k;

        k = record_sink_new(event, priority, "tracefs-record-stream", sink_gone, r, &r->sink, &consumer_fd);
        if (k < 0)
                return k;
        record_sink_on_drained(r->sink, sink_drained);
        send_descriptions(r);
        (void) record_sink_flush(r->sink);

        *ret = TAKE_PTR(r);
        *ret_consumer_fd = TAKE_FD(consumer_fd);
        return 0;
}

static int remove_stale_instances(const char *tracefs) {
        _cleanup_free_ char *path = NULL;
        char own[32];
        DIR *d;
        struct dirent *de;
        int n = 0;

        if (asprintf(&path, "%s/instances", tracefs) < 0)
                return -ENOMEM;
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        snprintf(own, sizeof(own), TRACEFS_RECORDER_INSTANCE_PREFIX "%d-", (int) getpid());
        while ((de = readdir(d))) {
                if (strncmp(de->d_name, TRACEFS_RECORDER_INSTANCE_PREFIX,
                            strlen(TRACEFS_RECORDER_INSTANCE_PREFIX)) != 0 ||
                    strncmp(de->d_name, own, strlen(own)) == 0)
                        continue;
                if (unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
                        n++;
                else
                        log_warning_errno(errno, "Cannot remove the tracefs instance %s/%s a previous broker left: %m",
                                          path, de->d_name);
        }
        closedir(d);
        return n;
}

/* The recordings of one provider */

struct tracefs_recording {
        struct tracefs_recordings *set;
        struct tracefs_recorder *recorder;
        char **patterns;        /* RecordMatching: events added later join */
        size_t n_patterns;
        char **names;           /* Record: join again when created again */
        size_t n_names;
        struct provider_stream_owner owner;
        LIST_FIELDS(struct tracefs_recording, recordings);
};

static void recording_free(struct tracefs_recording *r) {
        struct tracefs_recordings *set = r->set;

        LIST_REMOVE(recordings, set->list, r);
        set->n--;
        tracefs_recorder_free(r->recorder);
        event_patterns_free(r->patterns, r->n_patterns);
        event_patterns_free(r->names, r->n_names);
        provider_stream_owner_closed(&r->owner);
        free(r);
}

static void recording_gone(void *userdata) {
        log_debug("A record stream's consumer left, removing its tracefs instance.");
        recording_free(userdata);
}

int tracefs_recordings_init(struct tracefs_recordings *set, sd_event *event, const char *tracefs,
                            const char *data_path, tracefs_record_describe_fn describe) {
        int r;

        assert(set);
        *set = (struct tracefs_recordings) { .event = event, .describe = describe };
        if (data_path) {
                set->data_path = strdup(data_path);
                if (!set->data_path)
                        return -ENOMEM;
        }
        /* libtracefs creates the recorders' instances here. */
        if (tracefs_set_tracing_dir((char *) tracefs) < 0)
                return log_error_errno(errno ? -errno : -EIO, "Cannot use %s with libtracefs: %m", tracefs);
        r = remove_stale_instances(tracefs);
        if (r > 0)
                log_info("Removed %d tracefs instances a previous broker left.", r);
        return 0;
}

void tracefs_recordings_done(struct tracefs_recordings *set) {
        assert(set);
        while (set->list) {
                /* recording_free() unlinks it; its sink must not call back. */
                recording_free(set->list);
        }
        free(set->data_path);
        set->data_path = NULL;
}

/* A new recording of @events (maybe none) and of each event added later
 * whose name matches one of @patterns (maybe none; not both none). */
static int recordings_open(struct tracefs_recordings *set, const struct tracefs_record_event *events,
                           size_t n_events, const char *const *patterns, size_t n_patterns, bool kernel_pages,
                           const struct provider_stream_owner *owner) {
        struct tracefs_recording *r;
        int fd = -EBADF, k;

        if (n_events > STATUS_INDEX_MAX || n_patterns > EVENT_PATTERNS_MAX || (n_events == 0 && n_patterns == 0))
                return -EINVAL;
        if (set->n >= TRACEFS_RECORDINGS_MAX)
                return -EUSERS;

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->set = set;
        if (n_patterns > 0) {
                r->patterns = event_patterns_copy(patterns, n_patterns);
                if (!r->patterns) {
                        free(r);
                        return -ENOMEM;
                }
                r->n_patterns = n_patterns;
        }
        if (n_events > 0) {
                _cleanup_free_ const char **names = calloc(n_events, sizeof(*names));

                if (names)
                        for (size_t i = 0; i < n_events; i++)
                                names[i] = events[i].name;
                r->names = names ? event_patterns_copy(names, n_events) : NULL;
                if (!r->names) {
                        event_patterns_free(r->patterns, r->n_patterns);
                        free(r);
                        return -ENOMEM;
                }
                r->n_names = n_events;
        }
        k = tracefs_recorder_new(set->event, TRACEFS_RECORD_PRIORITY, set->data_path, kernel_pages, events, n_events,
                                 recording_gone, r, &r->recorder, &fd);
        if (k < 0) {
                event_patterns_free(r->patterns, r->n_patterns);
                event_patterns_free(r->names, r->n_names);
                free(r);
                return k;
        }
        LIST_PREPEND(recordings, set->list, r);
        set->n++;
        if (owner)
                r->owner = *owner;
        return fd;
}

static int recordings_open_described(struct tracefs_recordings *set, struct provider_event *const *events,
                                     size_t n_events, const char *const *patterns, size_t n_patterns,
                                     bool kernel_pages, const struct provider_stream_owner *owner) {
        _cleanup_free_ struct tracefs_record_event *wanted = NULL;

        if (n_events > STATUS_INDEX_MAX)
                return -EINVAL;
        wanted = calloc(n_events ?: 1, sizeof(*wanted));
        if (!wanted)
                return -ENOMEM;
        for (size_t i = 0; i < n_events; i++)
                wanted[i] = set->describe(events[i]);
        return recordings_open(set, wanted, n_events, patterns, n_patterns, kernel_pages, owner);
}

/* The recordings a kernel provider's struct begins with. */
static struct tracefs_recordings *recordings_of(struct provider *p) {
        return (struct tracefs_recordings *) p;
}

int tracefs_provider_record(struct provider *p, struct provider_event *const *events, size_t n_events,
                            const struct provider_stream_owner *owner) {
        assert(p);
        if (n_events == 0)
                return -EINVAL;
        return recordings_open_described(recordings_of(p), events, n_events, NULL, 0, false, owner);
}

int tracefs_provider_record_matching(struct provider *p, struct provider_event *const *events, size_t n_events,
                                     const char *const *patterns, size_t n_patterns,
                                     const struct provider_stream_owner *owner) {
        assert(p);
        if (n_patterns == 0)
                return -EINVAL;
        return recordings_open_described(recordings_of(p), events, n_events, patterns, n_patterns, false, owner);
}

int tracefs_provider_record_kernel_pages(struct provider *p, struct provider_event *const *events, size_t n_events,
                                         const char *const *patterns, size_t n_patterns,
                                         const struct provider_stream_owner *owner) {
        assert(p);
        if (n_patterns == 0)
                return -EINVAL;
        return recordings_open_described(recordings_of(p), events, n_events, patterns, n_patterns, true, owner);
}

void tracefs_recordings_follow(struct tracefs_recordings *set, const struct tracefs_record_event *event) {
        assert(set);
        LIST_FOREACH(recordings, r, set->list) {
                int k;

                if (!event_patterns_match((const char *const *) r->patterns, r->n_patterns, event->name) &&
                    !event_patterns_match((const char *const *) r->names, r->n_names, event->name))
                        continue;
                k = tracefs_recorder_add_event(r->recorder, event);
                if (k < 0)
                        log_warning_errno(k, "New event %s is not recorded by a recording matching it: %m",
                                          event->name);
        }
}

void tracefs_recordings_forget(struct tracefs_recordings *set, const char *name) {
        assert(set);
        LIST_FOREACH(recordings, r, set->list)
                tracefs_recorder_remove_event(r->recorder, name);
}
