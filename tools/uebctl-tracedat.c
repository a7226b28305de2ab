/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record -o FILE.dat: a trace.dat file, version 6 (uebctl-tracedat.h).
 *
 * Records go to a spool file as they come, with an index of (time, spool
 * offset) in memory; finishing sorts the index and writes the file: the
 * header parts (trace-cmd.dat.v6(5), in its order), then the pages of the
 * one CPU at a page-aligned offset, which is written into the flyrecord
 * entry last. Kernel pages go to the spool as they are, with an index of
 * (CPU, spool offset); finishing writes each CPU's in the order they came. */
#include "uebctl-tracedat.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <traceevent/kbuffer.h>

#include "array.h"
#include "cleanup.h"
#include "fd-util.h"
#include "tracedat-page.h"
#include "time-util.h"

/* What trace-cmd's TRACECMD_OPTION_* numbers mean (trace-cmd-private.h). */
#define TRACEDAT_OPTION_DONE 0
#define TRACEDAT_OPTION_DATE 1
#define TRACEDAT_OPTION_TRACECLOCK 4
/* Event IDs are the u16 common_type of each record. */
#define TRACEDAT_EVENT_ID_MAX UINT16_MAX
#define TRACEDAT_SYSTEM "user_events"
/* Bounds on what a stream may make us keep. */
#define TRACEDAT_KERNEL_PAGE_MAX (1u << 20)
#define TRACEDAT_CPU_MAX 4096u
#define TRACEDAT_COMMS_MAX 65536u
/* TASK_COMM_LEN */
#define TRACEDAT_COMM_MAX 16u

/* A spooled record; its payload follows, padded to 8 bytes. id 0: a LOST
 * notice of lost records. */
struct spooled {
        uint64_t ts;
        uint64_t lost;
        uint32_t id;
        uint32_t pid;
        uint32_t payload_len;
        uint32_t reserved;
};

struct spool_index {
        uint64_t ts;
        uint64_t offset;        /* in the spool; the order of arrival */
};

/* An event of the file: one per name and definition. */
struct tracedat_event {
        char *canonical;        /* event_def_canonical(): the key */
        const struct event_def *last_def;      /* the last definition that matched: no compare */
        char *format;           /* its format file, with its ID */
};

/* A kernel format file, by event name. */
struct kernel_format {
        char *name;
        char *text;
};

/* A spooled kernel page. */
struct kernel_page {
        uint64_t offset;        /* in the spool */
        uint32_t cpu;
        bool missed;            /* a LOST notice came before it */
};

/* A writer's name, for saved_cmdlines. */
struct comm {
        uint32_t pid;
        char name[TRACEDAT_COMM_MAX];   /* "" when it could not be read */
};

struct tracedat_writer {
        char *path;
        FILE *out;
        FILE *spool;
        uint64_t spool_size;
        struct spool_index *index;
        size_t n_index;
        size_t allocated_index;
        struct tracedat_event *events;  /* ID i + 1 is events[i] */
        size_t n_events;
        size_t allocated_events;
        uint64_t realtime_offset_ns;    /* CLOCK_REALTIME - CLOCK_MONOTONIC, whole us */
        uint64_t latest_ts;             /* where a LOST notice stands */
        size_t page_size;
        uint64_t written;
        uint64_t skipped;
        uint64_t lost;
        bool failed;

        /* From a RecordKernelPages stream: set by its first description or page. */
        bool kernel;
        char *kernel_header_page;
        char *kernel_header_event;
        struct kernel_format *formats;
        size_t n_formats;
        size_t allocated_formats;
        struct kernel_page *pages;
        size_t n_pages;
        size_t allocated_pages;
        size_t kernel_page_size;        /* of the first page */
        unsigned n_cpus;                /* the highest CPU seen + 1 */
        uint8_t *missed_next;           /* per CPU (TRACEDAT_CPU_MAX): a LOST notice for its next page */
        struct kbuffer *kbuf;
        uint8_t *scratch;

        struct comm *comms;             /* sorted by pid */
        size_t n_comms;
        size_t allocated_comms;
};

static struct tracedat_writer *tracedat_writer_free(struct tracedat_writer *w) {
        if (!w)
                return NULL;
        if (w->out)
                fclose(w->out);
        if (w->spool)
                fclose(w->spool);
        for (size_t i = 0; i < w->n_events; i++) {
                free(w->events[i].canonical);
                free(w->events[i].format);
        }
        free(w->events);
        free(w->index);
        free(w->kernel_header_page);
        free(w->kernel_header_event);
        for (size_t i = 0; i < w->n_formats; i++) {
                free(w->formats[i].name);
                free(w->formats[i].text);
        }
        free(w->formats);
        free(w->pages);
        free(w->missed_next);
        if (w->kbuf)
                kbuffer_free(w->kbuf);
        free(w->scratch);
        free(w->comms);
        free(w->path);
        free(w);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(struct tracedat_writer *, tracedat_writer_free);

/* An unlinked file in the directory of @path (O_TMPFILE, or a named one
 * removed at once where the file system lacks it). */
static FILE *spool_open(const char *path) {
        _cleanup_free_ char *copy = strdup(path), *template = NULL;
        const char *dir;
        FILE *f;
        int fd;

        if (!copy)
                return NULL;
        dir = dirname(copy);
        fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0) {
                if (asprintf(&template, "%s/.uebctl-spool-XXXXXX", dir) < 0) {
                        template = NULL;
                        return NULL;
                }
                fd = mkostemp(template, O_CLOEXEC);
                if (fd < 0)
                        return NULL;
                (void) unlink(template);
        }
        f = fdopen(fd, "w+");
        if (!f)
                safe_close(fd);
        return f;
}

int tracedat_writer_new(const char *path, struct tracedat_writer **ret) {
        _cleanup_(tracedat_writer_freep) struct tracedat_writer *w = calloc(1, sizeof(*w));
        int fd, r;

        if (!w || !(w->path = strdup(path))) {
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
        if (fd < 0) {
                r = -errno;
                fprintf(stderr, "error: cannot create %s: %s\n", path, strerror(-r));
                return r;
        }
        w->out = fdopen(fd, "w");
        if (!w->out) {
                safe_close(fd);
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        w->spool = spool_open(path);
        if (!w->spool) {
                r = errno ? -errno : -ENOMEM;
                fprintf(stderr, "error: cannot create a spool file beside %s: %s\n", path, strerror(-r));
                return r;
        }
        w->missed_next = calloc(TRACEDAT_CPU_MAX, 1);
        if (!w->missed_next) {
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        w->page_size = (size_t) getpagesize();
        w->realtime_offset_ns = (uint64_t) (realtime_minus_monotonic_ns() / 1000) * 1000u;
        *ret = TAKE_PTR(w);
        return 0;
}

/* @def's format file in the trace.dat, as event @id. libtraceevent reads
 * an event's name as one word of letters, digits and '_': a name with '-'
 * (which the broker allows) made trace-cmd report show its records as
 * [UNKNOWN EVENT]. Such a name is written with '_' in its place, and said
 * once on stderr (two names differing only there read alike). */
static char *tracedat_format_text(const struct event_def *def, uint32_t id) {
        _cleanup_free_ char *name = NULL;
        struct event_def shown;

        if (!strchr(def->name, '-'))
                return event_def_format_text(def, id);
        name = strdup(def->name);
        if (!name)
                return NULL;
        for (char *c = name; (c = strchr(c, '-')); c++)
                *c = '_';
        fprintf(stderr, "note: event %s is named %s in the trace.dat file: trace-cmd reads no '-' in an event "
                "name\n", def->name, name);
        shown = *def;
        shown.name = name;
        return event_def_format_text(&shown, id);
}

/* The ID of @def's event in the file (1..), made on its first record;
 * 0 when there can be no more. */
static uint32_t event_id(struct tracedat_writer *w, const struct event_def *def) {
        _cleanup_free_ char *canonical = NULL;
        struct tracedat_event *ev;

        for (size_t i = 0; i < w->n_events; i++)
                if (w->events[i].last_def == def)
                        return (uint32_t) i + 1;
        canonical = event_def_canonical(def);
        if (!canonical)
                return 0;
        for (size_t i = 0; i < w->n_events; i++)
                if (strcmp(w->events[i].canonical, canonical) == 0) {
                        w->events[i].last_def = def;
                        return (uint32_t) i + 1;
                }
        if (w->n_events >= TRACEDAT_EVENT_ID_MAX)
                return 0;
        if (ARRAY_RESERVE(w->events, w->allocated_events, w->n_events + 1) < 0)
                return 0;
        ev = &w->events[w->n_events];
        *ev = (struct tracedat_event) { .last_def = def };
        ev->format = tracedat_format_text(def, (uint32_t) w->n_events + 1);
        if (!ev->format)
                return 0;
        ev->canonical = TAKE_PTR(canonical);
        return (uint32_t) ++w->n_events;
}

/* Appends @len bytes of @data to the spool: 0, or -EIO with the reason
 * printed once (the writer is failed from then on). */
static int spool_put(struct tracedat_writer *w, const void *data, size_t len) {
        if (len > 0 && fwrite(data, len, 1, w->spool) != 1) {
                if (!w->failed)
                        fprintf(stderr, "error: cannot write the spool of %s: %m\n", w->path);
                w->failed = true;
                return -EIO;
        }
        w->spool_size += len;
        return 0;
}

/* Appends the record @s and notes where it starts; its payload, if it has
 * one, follows through spool_append_payload(). A record without payload
 * (a loss) never passes a payload pointer, so none can be NULL. */
static int spool_append(struct tracedat_writer *w, const struct spooled *s) {
        if (ARRAY_RESERVE(w->index, w->allocated_index, w->n_index + 1) < 0)
                return -ENOMEM;
        w->index[w->n_index++] = (struct spool_index) { .ts = s->ts, .offset = w->spool_size };
        return spool_put(w, s, sizeof(*s));
}

/* The @len bytes of @payload after their record, padded to 8 bytes. */
static int spool_append_payload(struct tracedat_writer *w, const uint8_t *payload, size_t len) {
        static const uint8_t zeros[8];
        int r;

        r = spool_put(w, payload, len);
        if (r < 0)
                return r;
        return spool_put(w, zeros, UEB_RECORD_ALIGN_UP(len) - len);
}

static int compare_comm(const void *a, const void *b) {
        const struct comm *x = a, *y = b;

        return x->pid < y->pid ? -1 : x->pid > y->pid;
}

/* Learns @pid's name from /proc, once: a writer names itself (prctl), so
 * what is not printable becomes '?' (trace-cmd report prints it as it is). */
static void comm_note(struct tracedat_writer *w, uint32_t pid) {
        struct comm key = { .pid = pid }, *at;
        char path[32];
        size_t i;
        ssize_t n;
        int fd;

        if (pid == 0 || (w->n_comms > 0 && bsearch(&key, w->comms, w->n_comms, sizeof(key), compare_comm)) ||
            w->n_comms >= TRACEDAT_COMMS_MAX)
                return;
        if (ARRAY_RESERVE(w->comms, w->allocated_comms, w->n_comms + 1) < 0)
                return;         /* unnamed: the file is still right */
        snprintf(path, sizeof(path), "/proc/%" PRIu32 "/comm", pid);
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        n = fd < 0 ? -1 : read(fd, key.name, sizeof(key.name) - 1);
        safe_close(fd);
        key.name[n > 0 ? n : 0] = '\0';
        key.name[strcspn(key.name, "\n")] = '\0';
        for (char *c = key.name; *c; c++)
                if ((unsigned char) *c < 0x20 || (unsigned char) *c >= 0x7f)
                        *c = '?';
        for (i = w->n_comms; i > 0 && w->comms[i - 1].pid > pid; i--)
                ;
        at = &w->comms[i];
        memmove(at + 1, at, (w->n_comms - i) * sizeof(*at));
        *at = key;
        w->n_comms++;
}

/* saved_cmdlines: "PID COMM" lines, as the kernel's file. */
static char *comms_text(const struct tracedat_writer *w) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        if (!f)
                return NULL;
        for (size_t i = 0; i < w->n_comms; i++)
                if (w->comms[i].name[0])
                        fprintf(f, "%" PRIu32 " %s\n", w->comms[i].pid, w->comms[i].name);
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

int tracedat_writer_add(struct tracedat_writer *w, const struct ueb_record_header *h, const char *name,
                        size_t name_len, const uint8_t *payload, size_t payload_len, const struct event_def *def) {
        struct spooled s;
        uint32_t id;
        int r;

        /* The record must be what the definition says, and fit a page
         * with its 8-byte common header, an 8-byte event header and
         * padding to 4 bytes. */
        if (w->kernel || !def || strlen(def->name) != name_len || memcmp(def->name, name, name_len) != 0 ||
            event_def_validate_payload(def, payload, payload_len) < 0 ||
            EVENT_COMMON_HEADER_SIZE + payload_len + 11u > w->page_size - TRACEDAT_PAGE_HEADER_SIZE - sizeof(long) ||
            (id = event_id(w, def)) == 0) {
                w->skipped++;
                return 0;
        }
        s = (struct spooled) {
                .id = id,
                .pid = h->pid,
                .payload_len = (uint32_t) payload_len,
                /* The kernel's stamp where there is one, else the
                 * broker's receive time on the file's clock. */
                .ts = h->flags & UEB_RECORD_FLAG_KERNEL_TRACE     ? h->write_monotonic_ns :
                      h->timestamp_ns >= w->realtime_offset_ns ? h->timestamp_ns - w->realtime_offset_ns :
                                                                 0,
        };
        r = spool_append(w, &s);
        if (r >= 0)
                r = spool_append_payload(w, payload, payload_len);
        if (r < 0)
                return r;
        comm_note(w, s.pid);
        if (s.ts > w->latest_ts)
                w->latest_ts = s.ts;
        w->written++;
        return 0;
}

int tracedat_writer_add_lost(struct tracedat_writer *w, const struct ueb_record_header *h) {
        /* After every record that came before it. */
        struct spooled s = { .ts = w->latest_ts, .lost = h->lost_count };
        int r;

        if (w->kernel) {
                /* Pages of any CPU may be what went missing. */
                memset(w->missed_next, 1, TRACEDAT_CPU_MAX);
                w->lost += h->lost_count;
                return 0;
        }
        r = spool_append(w, &s);

        if (r >= 0)
                w->lost += h->lost_count;
        return r;
}

/* The first description or page makes the file the kernel's; after
 * records were spooled, they stay what it holds. */
static bool kernel_mode(struct tracedat_writer *w) {
        if (w->kernel)
                return true;
        if (w->n_index > 0)
                return false;
        w->kernel = true;
        return true;
}

/* The event ID a format file states ("ID: N"), or -1. */
static int format_id(const char *text) {
        const char *line = strstr(text, "\nID: ");
        unsigned id;

        if (strncmp(text, "ID: ", 4) == 0)
                line = text - 1;
        if (!line || sscanf(line + 5, "%u", &id) != 1 || id == 0 || id > TRACEDAT_EVENT_ID_MAX)
                return -1;
        return (int) id;
}

int tracedat_writer_add_kernel_file(struct tracedat_writer *w, uint16_t flags, const char *name, size_t name_len,
                                    const char *text, size_t text_len) {
        _cleanup_free_ char *copy = NULL, *key = NULL;
        char **slot = NULL;

        if (!kernel_mode(w)) {
                w->skipped++;
                return 0;
        }
        copy = strndup(text, text_len);
        key = strndup(name, name_len);
        if (!copy || !key)
                return -ENOMEM;
        if (flags & UEB_RECORD_FLAG_KERNEL_HEADER) {
                if (strcmp(key, "header_page") == 0)
                        slot = &w->kernel_header_page;
                else if (strcmp(key, "header_event") == 0)
                        slot = &w->kernel_header_event;
                if (!slot)
                        return 0;       /* a header we do not know */
                free(*slot);
                *slot = TAKE_PTR(copy);
                return 0;
        }
        if (format_id(copy) < 0 || strchr(key, '/')) {
                fprintf(stderr, "warning: the broker's format file of %s has no event ID: its records stay "
                                "undecoded\n", key);
                return 0;
        }
        for (size_t i = 0; i < w->n_formats; i++)
                if (strcmp(w->formats[i].name, key) == 0) {
                        free(w->formats[i].text);
                        w->formats[i].text = TAKE_PTR(copy);
                        return 0;
                }
        if (w->n_formats >= TRACEDAT_EVENT_ID_MAX)
                return 0;
        if (ARRAY_RESERVE(w->formats, w->allocated_formats, w->n_formats + 1) < 0)
                return -ENOMEM;
        w->formats[w->n_formats++] = (struct kernel_format) { .name = TAKE_PTR(key), .text = TAKE_PTR(copy) };
        return 0;
}

/* Counts the events of the sub-buffer in w->scratch and notes their
 * writers. -EINVAL when its header says more than it holds. */
static int kernel_page_events(struct tracedat_writer *w, size_t len) {
        unsigned long commit = 0;
        unsigned long long ts;
        int n = 0;

        if (len < TRACEDAT_PAGE_HEADER_SIZE)
                return -EINVAL;
        memcpy(&commit, w->scratch + 8, sizeof(long));
        commit &= ~(TRACEDAT_MISSED_EVENTS | TRACEDAT_MISSED_STORED);
        if (commit > len - TRACEDAT_PAGE_HEADER_SIZE || kbuffer_load_subbuffer(w->kbuf, w->scratch) < 0)
                return -EINVAL;
        for (void *data = kbuffer_read_event(w->kbuf, &ts); data; data = kbuffer_next_event(w->kbuf, &ts)) {
                int32_t pid;

                if (kbuffer_event_size(w->kbuf) >= (int) EVENT_COMMON_HEADER_SIZE) {
                        memcpy(&pid, (uint8_t *) data + 4, sizeof(pid));
                        comm_note(w, (uint32_t) pid);
                }
                n++;
        }
        return n;
}

int tracedat_writer_add_kernel_page(struct tracedat_writer *w, const struct ueb_record_header *h,
                                    const uint8_t *page, size_t len) {
        struct kernel_page *p;
        int n, r;

        if (!kernel_mode(w) || len == 0 || len > TRACEDAT_KERNEL_PAGE_MAX || h->cpu >= TRACEDAT_CPU_MAX ||
            (w->kernel_page_size && len != w->kernel_page_size)) {
                w->skipped++;
                return -EINVAL;
        }
        if (!w->kernel_page_size) {
                w->kernel_page_size = len;
                w->scratch = malloc(len);
                w->kbuf = kbuffer_alloc(KBUFFER_LSIZE_SAME_AS_HOST, KBUFFER_ENDIAN_SAME_AS_HOST);
                if (!w->scratch || !w->kbuf)
                        return -ENOMEM;
        }
        if (ARRAY_RESERVE(w->pages, w->allocated_pages, w->n_pages + 1) < 0)
                return -ENOMEM;
        memcpy(w->scratch, page, len);
        n = kernel_page_events(w, len);
        if (n < 0) {
                w->skipped++;
                return n;
        }
        p = &w->pages[w->n_pages];
        *p = (struct kernel_page) { .offset = w->spool_size, .cpu = h->cpu, .missed = w->missed_next[h->cpu] };
        r = spool_put(w, page, len);
        if (r < 0)
                return r;
        w->missed_next[h->cpu] = 0;
        w->n_pages++;
        if (h->cpu >= w->n_cpus)
                w->n_cpus = h->cpu + 1;
        w->written += (uint64_t) n;
        return n;
}

uint64_t tracedat_writer_kernel_pages(const struct tracedat_writer *w) {
        return w->n_pages;
}

unsigned tracedat_writer_kernel_cpus(const struct tracedat_writer *w) {
        return w->n_cpus;
}

uint64_t tracedat_writer_written(const struct tracedat_writer *w) {
        return w->written;
}

uint64_t tracedat_writer_skipped(const struct tracedat_writer *w) {
        return w->skipped;
}

uint64_t tracedat_writer_lost(const struct tracedat_writer *w) {
        return w->lost;
}

/* The file's numbers: host byte order, as its header says. */
static void put(struct tracedat_writer *w, const void *data, size_t n) {
        if (n && fwrite(data, n, 1, w->out) != 1)
                w->failed = true;
}

static void put_u16(struct tracedat_writer *w, uint16_t v) {
        put(w, &v, sizeof(v));
}

static void put_u32(struct tracedat_writer *w, uint32_t v) {
        put(w, &v, sizeof(v));
}

static void put_u64(struct tracedat_writer *w, uint64_t v) {
        put(w, &v, sizeof(v));
}

/* A string with its terminating NUL. */
static void put_string(struct tracedat_writer *w, const char *s) {
        put(w, s, strlen(s) + 1);
}

/* A section of the header: its size as a u64, then its bytes. */
static void put_sized(struct tracedat_writer *w, const char *text) {
        put_u64(w, strlen(text));
        put(w, text, strlen(text));
}

static void put_option(struct tracedat_writer *w, uint16_t option, const char *value) {
        put_u16(w, option);
        put_u32(w, (uint32_t) strlen(value) + 1);
        put_string(w, value);
}

/* The header up to "flyrecord" for @n_cpus CPUs of @page_size pages;
 * returns where the CPUs' offsets and sizes go, or -1 when it could not be
 * written. */
static off_t write_header(struct tracedat_writer *w, unsigned n_cpus, size_t page_size) {
        static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
        _cleanup_free_ char *built_header_page = NULL, *cmdlines = comms_text(w);
        const char *header_page = w->kernel_header_page;
        size_t n_formats = w->kernel ? w->n_formats : w->n_events;
        char date[32];

        if (!header_page)
                header_page = built_header_page = tracedat_header_page_text(page_size);
        if (!header_page || !cmdlines)
                return -1;
        put(w, magic, sizeof(magic));
        put_string(w, "6");
        put(w, &(uint8_t) { __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ }, 1);
        put(w, &(uint8_t) { sizeof(long) }, 1);
        put_u32(w, (uint32_t) page_size);

        put_string(w, "header_page");
        put_sized(w, header_page);
        put_string(w, "header_event");
        put_sized(w, w->kernel_header_event ?: tracedat_header_event_text());

        put_u32(w, 0);                  /* no ftrace events */
        /* One system, its events' format files. */
        put_u32(w, n_formats > 0);
        if (n_formats > 0) {
                put_string(w, TRACEDAT_SYSTEM);
                put_u32(w, (uint32_t) n_formats);
                for (size_t i = 0; i < n_formats; i++)
                        put_sized(w, w->kernel ? w->formats[i].text : w->events[i].format);
        }
        put_u32(w, 0);                  /* kallsyms: none (no kernel functions) */
        put_u32(w, 0);                  /* trace_printk formats: none */
        put_sized(w, cmdlines);         /* saved_cmdlines */

        put_u32(w, n_cpus);
        put(w, "options  ", 10);
        /* DATE: what to add to the clock for CLOCK_REALTIME, in
         * microseconds, as trace-cmd record --date writes it. */
        snprintf(date, sizeof(date), "0x%" PRIx64, w->realtime_offset_ns / 1000u);
        put_option(w, TRACEDAT_OPTION_DATE, date);
        put_option(w, TRACEDAT_OPTION_TRACECLOCK, "[mono]\n");
        put_u16(w, TRACEDAT_OPTION_DONE);
        put(w, "flyrecord", 10);
        if (w->failed)
                return -1;
        return ftello(w->out);
}

static int compare_index(const void *a, const void *b) {
        const struct spool_index *x = a, *y = b;

        if (x->ts != y->ts)
                return x->ts < y->ts ? -1 : 1;
        return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Writes the page and empties it. */
static void flush_page(struct tracedat_writer *w, struct tracedat_page *page, uint64_t *n_pages) {
        put(w, tracedat_page_finish(page), page->page_size);
        tracedat_page_reset(page);
        (*n_pages)++;
}

/* The pages of every spooled record, in time order. */
static int write_pages(struct tracedat_writer *w, const uint8_t *spool, uint64_t *ret_pages) {
        struct tracedat_page page;
        uint64_t n_pages = 0;
        int r;

        r = tracedat_page_init(&page, w->page_size);
        if (r < 0)
                return r;
        qsort(w->index, w->n_index, sizeof(*w->index), compare_index);
        for (size_t i = 0; i < w->n_index && !w->failed; i++) {
                struct spooled s;
                uint8_t entry[EVENT_COMMON_HEADER_SIZE];
                uint16_t type;
                int32_t pid;

                memcpy(&s, spool + w->index[i].offset, sizeof(s));
                if (s.id == 0) {
                        /* Lost before what follows: the next page says so. */
                        if (page.n_events > 0)
                                flush_page(w, &page, &n_pages);
                        (void) tracedat_page_add_missed(&page, s.lost);
                        continue;
                }
                /* struct trace_entry: type, flags, preempt_count, pid. */
                type = (uint16_t) s.id;
                pid = (int32_t) s.pid;
                memset(entry, 0, sizeof(entry));
                memcpy(entry, &type, sizeof(type));
                memcpy(entry + 4, &pid, sizeof(pid));
                r = tracedat_page_add(&page, s.ts, entry, sizeof(entry), spool + w->index[i].offset + sizeof(s),
                                      s.payload_len);
                if (r == -ENOSPC) {
                        flush_page(w, &page, &n_pages);
                        r = tracedat_page_add(&page, s.ts, entry, sizeof(entry),
                                              spool + w->index[i].offset + sizeof(s), s.payload_len);
                }
                if (r < 0) {
                        /* Sorted and sized when added: cannot happen. */
                        fprintf(stderr, "error: a record does not fit its page: %s\n", strerror(-r));
                        w->failed = true;
                }
        }
        if (page.n_events > 0)
                flush_page(w, &page, &n_pages);
        tracedat_page_done(&page);
        *ret_pages = n_pages;
        return w->failed ? -EIO : 0;
}

/* Moves the time extensions a kernel page starts with into its time stamp.
 * kbuffer reports a page's dropped events only with an event at its very
 * start, and a page the kernel copied out partly read (trace_pipe_raw
 * before the page filled) may start with one: trace-cmd report would then
 * not show the drop. The events move up by 8 bytes (with the stored
 * count after them); their times stay what they were. */
static void page_time_extend_into_stamp(uint8_t *page, size_t page_size) {
        const unsigned long flags = TRACEDAT_MISSED_EVENTS | TRACEDAT_MISSED_STORED;
        uint8_t *data = page + TRACEDAT_PAGE_HEADER_SIZE;
        size_t room = page_size - TRACEDAT_PAGE_HEADER_SIZE;
        unsigned long commit;
        uint32_t head, extension;
        uint64_t ts;

        for (;;) {
                memcpy(&ts, page, sizeof(ts));
                memcpy(&commit, page + 8, sizeof(commit));
                if ((commit & ~flags) < 8 || (commit & ~flags) > room)
                        return;
                memcpy(&head, data, sizeof(head));
                if ((head & 0x1f) != TRACEDAT_TYPE_TIME_EXTEND)
                        return;
                memcpy(&extension, data + 4, sizeof(extension));
                ts += (head >> 5) + ((uint64_t) extension << TRACEDAT_TIME_DELTA_BITS);
                commit -= 8;
                memmove(data, data + 8, room - 8);
                memset(data + room - 8, 0, 8);
                memcpy(page, &ts, sizeof(ts));
                memcpy(page + 8, &commit, sizeof(commit));
        }
}

/* The pages of CPU @cpu as they came, a LOST notice before one marked on
 * it (kbuffer and trace-cmd read RB_MISSED_EVENTS without a count as
 * "events dropped"). */
static uint64_t write_kernel_pages(struct tracedat_writer *w, const uint8_t *spool, unsigned cpu) {
        uint64_t n = 0;

        for (size_t i = 0; i < w->n_pages && !w->failed; i++) {
                const struct kernel_page *p = &w->pages[i];

                if (p->cpu != cpu)
                        continue;
                unsigned long commit;

                memcpy(w->scratch, spool + p->offset, w->kernel_page_size);
                memcpy(&commit, w->scratch + 8, sizeof(commit));
                if (p->missed) {
                        commit |= TRACEDAT_MISSED_EVENTS;
                        memcpy(w->scratch + 8, &commit, sizeof(commit));
                }
                /* Ours or the kernel's: the drop shows on the page's first event. */
                if (commit & TRACEDAT_MISSED_EVENTS)
                        page_time_extend_into_stamp(w->scratch, w->kernel_page_size);
                put(w, w->scratch, w->kernel_page_size);
                n++;
        }
        return n;
}

int tracedat_writer_finish(struct tracedat_writer *writer) {
        /* Ours from here, freed on every return. */
        _cleanup_(tracedat_writer_freep) struct tracedat_writer *w = writer;
        _cleanup_free_ uint64_t *entries = NULL;
        bool kernel_pages = w->kernel && w->n_pages > 0;
        size_t page_size = kernel_pages ? w->kernel_page_size : w->page_size;
        unsigned n_cpus = kernel_pages ? w->n_cpus : 1;
        uint8_t *spool = NULL;
        off_t cpu_entry, data_start;
        int r = 0;

        if (w->failed)
                return -EIO;
        if (fflush(w->spool) != 0) {
                fprintf(stderr, "error: cannot write the spool of %s: %m\n", w->path);
                return -EIO;
        }
        /* Each CPU's offset and size in the file. */
        entries = calloc(n_cpus, 2 * sizeof(*entries));
        if (!entries) {
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        if (w->spool_size > 0) {
                spool = mmap(NULL, w->spool_size, PROT_READ, MAP_PRIVATE, fileno(w->spool), 0);
                if (spool == MAP_FAILED) {
                        r = -errno;
                        fprintf(stderr, "error: cannot map the spool of %s: %s\n", w->path, strerror(-r));
                        return r;
                }
        }

        cpu_entry = write_header(w, n_cpus, page_size);
        /* The CPUs' pages start at a page boundary of the file, one after
         * another. */
        data_start = cpu_entry < 0 ? -1 :
                                     (off_t) ((cpu_entry + 16 * n_cpus + page_size - 1) / page_size * page_size);
        if (data_start >= 0) {
                for (off_t at = cpu_entry; at < data_start; at++)
                        put(w, "", 1);
                for (unsigned cpu = 0; cpu < n_cpus && r >= 0 && !w->failed; cpu++) {
                        uint64_t n_pages = 0;

                        entries[2 * cpu] = (uint64_t) ftello(w->out);
                        if (kernel_pages)
                                n_pages = write_kernel_pages(w, spool, cpu);
                        else
                                r = write_pages(w, spool, &n_pages);
                        entries[2 * cpu + 1] = n_pages * page_size;
                }
        }
        if (spool)
                munmap(spool, w->spool_size);
        if (r >= 0 && !w->failed && fseeko(w->out, cpu_entry, SEEK_SET) == 0)
                put(w, entries, n_cpus * 2 * sizeof(*entries));
        else
                w->failed = true;
        if (fclose(TAKE_PTR(w->out)) != 0)
                w->failed = true;
        if (w->failed) {
                fprintf(stderr, "error: cannot write %s: %m\n", w->path);
                return r < 0 ? r : -EIO;
        }
        return 0;
}
