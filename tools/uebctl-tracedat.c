/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record -o FILE.dat: a trace.dat file, version 6 (uebctl-tracedat.h).
 *
 * Records go to a spool file as they come, with an index of (time, spool
 * offset) in memory; finishing sorts the index and writes the file: the
 * header parts (trace-cmd.dat.v6(5), in its order), then the pages of the
 * one CPU at a page-aligned offset, which is written into the flyrecord
 * entry last. */
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

#include "cleanup.h"
#include "fd-util.h"
#include "tracedat-page.h"

/* What trace-cmd's TRACECMD_OPTION_* numbers mean (trace-cmd-private.h). */
#define TRACEDAT_OPTION_DONE 0
#define TRACEDAT_OPTION_DATE 1
#define TRACEDAT_OPTION_TRACECLOCK 4
/* Event IDs are the u16 common_type of each record. */
#define TRACEDAT_EVENT_ID_MAX UINT16_MAX
#define TRACEDAT_SYSTEM "user_events"

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
};

static int64_t realtime_minus_monotonic_us(void) {
        struct timespec rt, mono;

        clock_gettime(CLOCK_REALTIME, &rt);
        clock_gettime(CLOCK_MONOTONIC, &mono);
        return ((int64_t) rt.tv_sec - (int64_t) mono.tv_sec) * 1000000 + (rt.tv_nsec - mono.tv_nsec) / 1000;
}

static void tracedat_writer_free(struct tracedat_writer *w) {
        if (!w)
                return;
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
        free(w->path);
        free(w);
}

static void tracedat_writer_freep(struct tracedat_writer **w) {
        tracedat_writer_free(*w);
}

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
        w->page_size = (size_t) getpagesize();
        w->realtime_offset_ns = (uint64_t) realtime_minus_monotonic_us() * 1000u;
        *ret = TAKE_PTR(w);
        return 0;
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
        if (w->n_events == w->allocated_events) {
                size_t n = w->allocated_events ? w->allocated_events * 2 : 8;
                struct tracedat_event *grown = reallocarray(w->events, n, sizeof(*grown));

                if (!grown)
                        return 0;
                w->events = grown;
                w->allocated_events = n;
        }
        ev = &w->events[w->n_events];
        *ev = (struct tracedat_event) { .last_def = def };
        ev->format = event_def_format_text(def, (uint32_t) w->n_events + 1);
        if (!ev->format)
                return 0;
        ev->canonical = TAKE_PTR(canonical);
        return (uint32_t) ++w->n_events;
}

static int spool_append(struct tracedat_writer *w, const struct spooled *s, const uint8_t *payload) {
        static const uint8_t zeros[8];
        size_t padding = UEB_RECORD_ALIGN_UP(s->payload_len) - s->payload_len;

        if (w->n_index == w->allocated_index) {
                size_t n = w->allocated_index ? w->allocated_index * 2 : 1024;
                struct spool_index *grown = reallocarray(w->index, n, sizeof(*grown));

                if (!grown)
                        return -ENOMEM;
                w->index = grown;
                w->allocated_index = n;
        }
        if (fwrite(s, sizeof(*s), 1, w->spool) != 1 ||
            (s->payload_len && fwrite(payload, s->payload_len, 1, w->spool) != 1) ||
            (padding && fwrite(zeros, padding, 1, w->spool) != 1)) {
                if (!w->failed)
                        fprintf(stderr, "error: cannot write the spool of %s: %m\n", w->path);
                w->failed = true;
                return -EIO;
        }
        w->index[w->n_index++] = (struct spool_index) { .ts = s->ts, .offset = w->spool_size };
        w->spool_size += sizeof(*s) + s->payload_len + padding;
        return 0;
}

int tracedat_writer_add(struct tracedat_writer *w, const struct ueb_record_header *h, const char *name,
                        size_t name_len, const uint8_t *payload, size_t payload_len, const struct event_def *def) {
        struct spooled s;
        uint32_t id;
        int r;

        /* The record must be what the definition says, and fit a page
         * with its 8-byte common header, an 8-byte event header and
         * padding to 4 bytes. */
        if (!def || strlen(def->name) != name_len || memcmp(def->name, name, name_len) != 0 ||
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
        r = spool_append(w, &s, payload);
        if (r < 0)
                return r;
        if (s.ts > w->latest_ts)
                w->latest_ts = s.ts;
        w->written++;
        return 0;
}

int tracedat_writer_add_lost(struct tracedat_writer *w, const struct ueb_record_header *h) {
        /* After every record that came before it. */
        struct spooled s = { .ts = w->latest_ts, .lost = h->lost_count };
        int r = spool_append(w, &s, NULL);

        if (r >= 0)
                w->lost += h->lost_count;
        return r;
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

/* The header up to "flyrecord"; returns where the CPU's offset and size
 * go, or -1 when it could not be written. */
static off_t write_header(struct tracedat_writer *w) {
        static const uint8_t magic[] = { 0x17, 0x08, 0x44, 't', 'r', 'a', 'c', 'i', 'n', 'g' };
        _cleanup_free_ char *header_page = tracedat_header_page_text(w->page_size);
        char date[32];

        if (!header_page)
                return -1;
        put(w, magic, sizeof(magic));
        put_string(w, "6");
        put(w, &(uint8_t) { __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ }, 1);
        put(w, &(uint8_t) { sizeof(long) }, 1);
        put_u32(w, (uint32_t) w->page_size);

        put_string(w, "header_page");
        put_sized(w, header_page);
        put_string(w, "header_event");
        put_sized(w, tracedat_header_event_text());

        put_u32(w, 0);                  /* no ftrace events */
        /* One system, its events by ID. */
        put_u32(w, w->n_events > 0);
        if (w->n_events > 0) {
                put_string(w, TRACEDAT_SYSTEM);
                put_u32(w, (uint32_t) w->n_events);
                for (size_t i = 0; i < w->n_events; i++)
                        put_sized(w, w->events[i].format);
        }
        put_u32(w, 0);                  /* kallsyms: none (no kernel functions) */
        put_u32(w, 0);                  /* trace_printk formats: none */
        put_u64(w, 0);                  /* saved_cmdlines: the stream has no names */

        put_u32(w, 1);                  /* CPUs */
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

int tracedat_writer_finish(struct tracedat_writer *w) {
        _cleanup_(tracedat_writer_freep) struct tracedat_writer *owned = w;
        uint8_t *spool = NULL;
        uint64_t n_pages = 0;
        off_t cpu_entry, data_start;
        int r = 0;

        if (w->failed)
                return -EIO;
        if (fflush(w->spool) != 0) {
                fprintf(stderr, "error: cannot write the spool of %s: %m\n", w->path);
                return -EIO;
        }
        if (w->spool_size > 0) {
                spool = mmap(NULL, w->spool_size, PROT_READ, MAP_PRIVATE, fileno(w->spool), 0);
                if (spool == MAP_FAILED) {
                        r = -errno;
                        fprintf(stderr, "error: cannot map the spool of %s: %s\n", w->path, strerror(-r));
                        return r;
                }
        }

        cpu_entry = write_header(w);
        /* The CPU's pages start at a page boundary of the file. */
        data_start = cpu_entry < 0 ? -1 : (off_t) ((cpu_entry + 16 + w->page_size - 1) / w->page_size * w->page_size);
        if (data_start >= 0) {
                put_u64(w, (uint64_t) data_start);
                put_u64(w, 0);          /* the size, once known */
                for (off_t at = cpu_entry + 16; at < data_start; at++)
                        put(w, "", 1);
                r = write_pages(w, spool, &n_pages);
        }
        if (spool)
                munmap(spool, w->spool_size);
        if (r >= 0 && !w->failed && fseeko(w->out, cpu_entry + 8, SEEK_SET) == 0)
                put_u64(w, n_pages * w->page_size);
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
