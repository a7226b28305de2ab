/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record [--json=MODE] [--count=N] [-o PATH] PATTERN...: prints the records of
 * the events whose names match (fnmatch), now or once registered later
 * (RecordMatching), decoded with each event's fields, naming the writer and
 * the time, labelled with what the time is:
 *     [received 2026-12-03T10:00:00.000001Z uid 1000 pid 884] NAME: a=1 b=hello
 *     [written 2026-12-03T10:00:00.000001Z tid 884] NAME: a=1 b=hello
 *     {"name":"NAME","pid":884,"uid":1000,"time_source":"received","timestamp_ns":...,"timestamp":"...","fields":{...}}
 * "received": the embedded provider, uid and pid from the data socket's peer
 * credentials (not from the writer), the time the broker read the record.
 * "written": the kernel's trace (UEB_RECORD_FLAG_KERNEL_TRACE), the writing
 * thread and the time of the write.
 * The writer's bytes are escaped (text-escape.h): a writer cannot drive the
 * reader's terminal. Ends on SIGINT/SIGTERM, when the stream closes, or
 * after N records. With -o the records go to a file instead: a CTF trace
 * (uebctl-ctf.h) or a trace.dat file (uebctl-tracedat.h). */
#include "uebctl.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cleanup.h"
#include "event-decode.h"
#include "event-def.h"
#include "event-pattern.h"
#include "eventheader-decode.h"
#include "eventheader-format.h"
#include "fd-util.h"
#include "macro.h"
#include "json-string.h"
#include "record-stream.h"
#include "strbuf.h"
#include "text-escape.h"
#include "uebctl-tracedat.h"
#if HAVE_BABELTRACE2
#include "uebctl-ctf.h"
#endif

/* What we know of the events records arrive for: their definitions from
 * ListEvents, asked again when a record names an event we have not seen
 * (registered after we started). def is NULL for a name ListEvents did
 * not know either, so that it is asked once per name. */
struct known_event {
        char *name;
        struct event_def *def;
};

struct known_events {
        struct known_event *events;
        size_t n;
        size_t allocated;
};

static void known_events_done(struct known_events *k) {
        for (size_t i = 0; i < k->n; i++) {
                free(k->events[i].name);
                event_def_free(k->events[i].def);
        }
        free(k->events);
        *k = (struct known_events) {};
}

static struct known_event *known_find(struct known_events *k, const char *name, size_t name_len) {
        for (size_t i = 0; i < k->n; i++)
                if (strlen(k->events[i].name) == name_len && memcmp(k->events[i].name, name, name_len) == 0)
                        return &k->events[i];
        return NULL;
}

/* Adds @name (of @name_len bytes) with @def (taken, may be NULL). */
static int known_add(struct known_events *k, const char *name, size_t name_len, struct event_def *def) {
        if (ARRAY_RESERVE(k->events, k->allocated, k->n + 1) < 0) {
                event_def_free(def);
                return -ENOMEM;
        }
        k->events[k->n].name = strndup(name, name_len);
        if (!k->events[k->n].name) {
                event_def_free(def);
                return -ENOMEM;
        }
        k->events[k->n++].def = def;
        return 0;
}

/* Learns the definitions of the events ListEvents shows that we do not
 * know yet (or knew only as unknown). */
static int known_refresh(struct known_events *k, sd_bus *bus) {
        struct uebctl_event_info *info = NULL;
        size_t n_info = 0;
        int r;

        r = uebctl_list_events(bus, &info, &n_info);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n_info && r >= 0; i++) {
                struct known_event *known = known_find(k, info[i].name, strlen(info[i].name));
                struct event_error error = { 0 };
                _cleanup_free_ char *command = NULL;
                struct event_def *def = NULL;

                if (known && known->def)
                        continue;
                if (asprintf(&command, "%s %s", info[i].name, info[i].fields) < 0) {
                        command = NULL;
                        r = -ENOMEM;
                        break;
                }
                if (event_def_parse(command, 0, &def, &error) < 0) {
                        fprintf(stderr, "warning: cannot parse the definition of %s from the broker: %s\n",
                                info[i].name, error.message);
                        continue;
                }
                if (known)
                        known->def = def;
                else
                        r = known_add(k, info[i].name, strlen(info[i].name), def);
        }
        uebctl_event_info_free(info, n_info);
        return r;
}

/* The definition for a record of @name, asking the broker once for a name
 * not seen before. */
static const struct event_def *known_lookup(struct known_events *k, sd_bus *bus, const char *name, size_t name_len) {
        struct known_event *known = known_find(k, name, name_len);

        if (known)
                return known->def;
        (void) known_refresh(k, bus);
        known = known_find(k, name, name_len);
        if (known)
                return known->def;
        (void) known_add(k, name, name_len, NULL);
        return NULL;
}

/* "2026-12-03T10:00:00.000001Z", or "" if the time cannot be shown. */
static void append_time(struct strbuf *sb, uint64_t ns, unsigned digits) {
        time_t secs = (time_t) (ns / 1000000000ull);
        uint64_t fraction = ns % 1000000000ull;
        struct tm tm;
        char text[64];

        if (!gmtime_r(&secs, &tm) || strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                return;
        for (unsigned i = digits; i < 9; i++)
                fraction /= 10;
        strbuf_printf(sb, "%s.%0*" PRIu64 "Z", text, (int) digits, fraction);
}

/* Registered with EventHeader's fields ("u8 eventheader_flags; u8 version;
 * u16 id; u16 tag; u8 opcode; u8 level"): its records are decoded as
 * EventHeader events (eventheader-format.h), whatever provider they come
 * from. */
static bool def_is_eventheader(const struct event_def *def) {
        static const struct {
                const char *name;
                uint32_t size;
        } want[] = {
                { "eventheader_flags", 1 }, { "version", 1 }, { "id", 2 },
                { "tag", 2 },               { "opcode", 1 },  { "level", 1 },
        };

        if (!def || def->n_fields != ELEMENTSOF(want))
                return false;
        for (size_t i = 0; i < ELEMENTSOF(want); i++)
                if (def->fields[i].kind != EVENT_FIELD_SCALAR || def->fields[i].size != want[i].size ||
                    def->fields[i].is_signed || strcmp(def->fields[i].name, want[i].name) != 0)
                        return false;
        return true;
}

/* The record's header as JSON members, up to and including the
 * "timestamp" one and its comma. */
static void format_json_header(const struct record_view *v, bool kernel, struct strbuf *sb) {
        const struct ueb_record_header *h = &v->header;

        strbuf_append(sb, "{\"name\":");
        json_append_string(sb, v->name, h->name_len);
        strbuf_printf(sb, kernel ? ",\"tid\":%" PRIu32 : ",\"pid\":%" PRIu32, h->pid);
        if (h->uid != UEB_RECORD_UID_UNKNOWN)
                strbuf_printf(sb, ",\"uid\":%" PRIu32, h->uid);
        /* From a ring: the thread and the time of the write, as the writer
         * claims them. */
        if (!kernel && h->tid != 0)
                strbuf_printf(sb, ",\"tid\":%" PRIu32, h->tid);
        if (h->flags & UEB_RECORD_FLAG_WRITER_CLAIMED)
                strbuf_append(sb, ",\"writer_claimed\":[\"tid\",\"write_monotonic_ns\"]");
        if (h->write_monotonic_ns != 0)
                strbuf_printf(sb, ",\"write_monotonic_ns\":%" PRIu64, h->write_monotonic_ns);
        strbuf_printf(sb, ",\"time_source\":\"%s\",\"timestamp_ns\":%" PRIu64 ",\"timestamp\":\"",
                      kernel ? "written" : "received", h->timestamp_ns);
        append_time(sb, h->timestamp_ns, 9);
        strbuf_append(sb, "\",");
}

static void format_json_raw(const struct record_view *v, struct strbuf *sb) {
        strbuf_append(sb, ",\"raw\":\"");
        event_decode_hex(sb, v->payload, v->payload_len);
        strbuf_append_c(sb, '"');
}

/* One compact JSON document, no newline. */
static void format_record_json(const struct event_def *def, const struct record_view *v, struct strbuf *sb) {
        bool eventheader = def_is_eventheader(def);
        const char *reason = NULL;
        int r;

        format_json_header(v, v->header.flags & UEB_RECORD_FLAG_KERNEL_TRACE, sb);
        /* EventHeader: the event's own fields and its header's meaning; if
         * it does not hold together, the raw header fields as for any
         * event, and why. */
        if (eventheader &&
            eventheader_format_json(v->name, v->header.name_len, v->payload, v->payload_len, sb, &reason) >= 0) {
                strbuf_append_c(sb, '}');
                return;
        }
        strbuf_append(sb, "\"fields\":");
        r = def ? event_decode_json(def, v->payload, v->payload_len, sb) : -ENOENT;
        if (r < 0) {
                /* Not decodable with the definition we know (the event was
                 * re-created with other fields?). */
                strbuf_append(sb, "null");
                format_json_raw(v, sb);
        }
        if (eventheader && reason) {
                strbuf_append(sb, ",\"eventheader_error\":");
                json_append_string(sb, reason, strlen(reason));
                /* The bytes past the header fields, for whoever wants to
                 * look. */
                if (r >= 0)
                        format_json_raw(v, sb);
        }
        strbuf_append_c(sb, '}');
}

/* One line. */
static void format_record_text(const struct event_def *def, const struct record_view *v, struct strbuf *sb) {
        const struct ueb_record_header *h = &v->header;
        bool kernel = h->flags & UEB_RECORD_FLAG_KERNEL_TRACE;
        bool eventheader = def_is_eventheader(def);
        const char *reason = NULL;
        int r;

        /* The time says what it is: the broker's reading or the kernel's
         * stamp of the write. */
        strbuf_append(sb, kernel ? "[written " : "[received ");
        append_time(sb, h->timestamp_ns, 6);
        if (kernel)
                strbuf_printf(sb, " tid %" PRIu32, h->pid);
        if (h->uid != UEB_RECORD_UID_UNKNOWN)
                strbuf_printf(sb, " uid %" PRIu32, h->uid);
        if (!kernel)
                strbuf_printf(sb, " pid %" PRIu32, h->pid);
        strbuf_append(sb, "] ");
        /* The name is a validated identifier, but print it safely. */
        text_escape_append(sb, v->name, h->name_len, TEXT_ESCAPE_TERMINAL);
        strbuf_append(sb, ": ");
        if (eventheader &&
            eventheader_format_text(v->name, h->name_len, v->payload, v->payload_len, sb, &reason) >= 0) {
                strbuf_append_c(sb, '\n');
                return;
        }
        r = def ? event_decode_text(def, v->payload, v->payload_len, sb) : -ENOENT;
        if (r < 0) {
                strbuf_printf(sb, "(%zu bytes not decodable: ", v->payload_len);
                event_decode_hex(sb, v->payload, v->payload_len);
                strbuf_append_c(sb, ')');
        }
        if (eventheader && reason) {
                /* Then the rest of the payload, undecoded. */
                strbuf_printf(sb, " (not a valid EventHeader event: %s; %zu bytes: ", reason, v->payload_len);
                event_decode_hex(sb, v->payload, v->payload_len);
                strbuf_append_c(sb, ')');
        }
        strbuf_append_c(sb, '\n');
}

/* Calls @method with the @n strings @args (counted: no NULL needed);
 * returns our own (O_CLOEXEC) descriptor of the stream, or a negative
 * errno with the bus error in @error. */
static int call_record(sd_bus *bus, const char *method, char *const *args, size_t n, sd_bus_error *error) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        int fd, r;

        r = sd_bus_message_new_method_call(bus, &call, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, method);
        if (r >= 0)
                r = sd_bus_message_open_container(call, 'a', "s");
        for (size_t i = 0; r >= 0 && i < n; i++)
                r = sd_bus_message_append_basic(call, 's', args[i]);
        if (r >= 0)
                r = sd_bus_message_close_container(call);
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(call, isatty(STDIN_FILENO));
        if (r >= 0)
                r = sd_bus_call(bus, call, 0, error, &reply);
        if (r < 0)
                return r;
        if (sd_bus_message_read(reply, "h", &fd) <= 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_INCONSISTENT_MESSAGE, "unexpected reply");
        /* The reply owns @fd and closes it with the message. */
        return fd_dup_cloexec(fd);
}

/* RecordMatching(@patterns); a provider that cannot follow new events
 * (NotSupported) still records plain names that exist, through Record.
 * With @kernel_pages (a trace.dat file), RecordKernelPages first: the
 * kernel's own pages where the provider has them. */
static int open_stream(sd_bus *bus, char **patterns, size_t n, bool kernel_pages) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        const char *method = "RecordMatching";
        bool globs = false;
        int fd;

        if (kernel_pages) {
                fd = call_record(bus, "RecordKernelPages", patterns, n, &error);
                if (fd >= 0)
                        return fd;
                if (!sd_bus_error_has_names(&error, BROKER_ERROR_NOT_SUPPORTED, SD_BUS_ERROR_UNKNOWN_METHOD)) {
                        uebctl_call_failed("RecordKernelPages", fd, &error);
                        return fd;
                }
                fprintf(stderr, "note: %s; building the file's pages from the records\n", error.message);
                sd_bus_error_free(&error);
        }
        for (size_t i = 0; i < n; i++)
                globs = globs || event_pattern_is_glob(patterns[i]);
        fd = call_record(bus, method, patterns, n, &error);
        if (fd < 0 && !globs && sd_bus_error_has_name(&error, BROKER_ERROR_NOT_SUPPORTED)) {
                fprintf(stderr, "note: %s; recording the events that exist now\n", error.message);
                sd_bus_error_free(&error);
                method = "Record";
                fd = call_record(bus, method, patterns, n, &error);
        }
        if (fd < 0)
                uebctl_call_failed(method, fd, &error);
        return fd;
}

/* Patterns checked here first, for a message before any bus traffic. */
static int check_patterns(char **patterns, size_t n) {
        if (n > EVENT_PATTERNS_MAX) {
                fprintf(stderr, "error: %zu patterns, at most %u (one pattern may match many events)\n", n,
                        EVENT_PATTERNS_MAX);
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                struct event_error error = { 0 };
                struct strbuf sb = STRBUF_INIT;
                char *shown;

                if (event_pattern_validate(patterns[i], &error) == 0)
                        continue;
                text_escape_append(&sb, patterns[i], strlen(patterns[i]), TEXT_ESCAPE_TERMINAL);
                shown = strbuf_steal(&sb);
                fprintf(stderr, "error: '%s': %s\n", shown ?: "?", error.message);
                free(shown);
                return -EINVAL;
        }
        return 0;
}

/* The patterns record made itself (--provider): patterns[first..end). */
struct owned_patterns {
        char **patterns;
        size_t first, end;
};

static void patterns_freep(struct owned_patterns *o) {
        for (size_t i = o->first; o->patterns && i < o->end; i++)
                free(o->patterns[i]);
}

/* Tells which plain names do not exist yet: they are recorded once
 * registered, but a typo should not wait silently. */
static size_t report_matches(const struct known_events *k, char **patterns, size_t n) {
        size_t matched = 0;

        for (size_t i = 0; i < k->n; i++)
                if (k->events[i].def &&
                    event_patterns_match((const char *const *) patterns, n, k->events[i].name))
                        matched++;
        for (size_t i = 0; i < n; i++) {
                bool found = false;

                if (event_pattern_is_glob(patterns[i]))
                        continue;
                for (size_t j = 0; j < k->n && !found; j++)
                        found = strcmp(k->events[j].name, patterns[i]) == 0;
                if (!found)
                        fprintf(stderr, "note: no event is called %s yet; recording it once it is registered\n",
                                patterns[i]);
        }
        return matched;
}

/* Where records go: lines on stdout, a CTF trace or a trace.dat file (-o). */
struct record_output {
        bool json;
#if HAVE_BABELTRACE2
        struct ctf_writer *ctf;
#endif
        struct tracedat_writer *dat;
};

/* Prints or writes one checked record; 0, or 1 when output failed. */
static int output_record(struct record_output *out, const struct event_def *def, const struct record_view *rec) {
        struct strbuf sb = STRBUF_INIT;
        char *text;
        int status;

#if HAVE_BABELTRACE2
        if (out->ctf)
                return ctf_writer_add(out->ctf, &rec->header, rec->name, rec->header.name_len, rec->payload,
                                      rec->payload_len, def) < 0;
#endif
        if (out->dat)
                return tracedat_writer_add(out->dat, &rec->header, rec->name, rec->header.name_len, rec->payload,
                                           rec->payload_len, def) < 0;
        /* JSON: one compact document, no newline. */
        if (out->json)
                format_record_json(def, rec, &sb);
        else
                format_record_text(def, rec, &sb);
        text = strbuf_steal(&sb);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        status = out->json ? uebctl_print_json(text) : fputs(text, stdout) < 0;
        free(text);
        /* One record at a time, for pipes. */
        return status != 0 || fflush(stdout) != 0;
}

enum {
        READ_MORE,              /* handled (or skipped) one message */
        READ_NOTHING,           /* nothing queued */
        READ_DONE,              /* end of stream or --count reached: exit 0 */
        READ_FAILED,            /* exit 1 */
};

/* A LOST notice: said, and written where the records are missing. */
static int output_lost(struct record_output *out, const struct ueb_record_header *h) {
        fprintf(stderr, "warning: %" PRIu64 " records lost (the consumer was too slow)\n", h->lost_count);
#if HAVE_BABELTRACE2
        if (out->ctf && ctf_writer_add_lost(out->ctf, h) < 0)
                return -EIO;
#endif
        if (out->dat && tracedat_writer_add_lost(out->dat, h) < 0)
                return -EIO;
        return 0;
}

/* A kernel page stream's header_page or format file, for trace.dat. */
static int output_kernel_file(struct record_output *out, const struct record_view *rec) {
        if (!out->dat) {
                fprintf(stderr, "warning: skipped a kernel page stream's description\n");
                return 0;
        }
        if (tracedat_writer_add_kernel_file(out->dat, rec->header.flags, rec->name, rec->header.name_len,
                                            (const char *) rec->payload, rec->payload_len) < 0) {
                fprintf(stderr, "error: out of memory\n");
                return -ENOMEM;
        }
        return 0;
}

/* A kernel page, for trace.dat: READ_MORE, READ_DONE at --count (the page
 * that holds the Nth record is the last) or READ_FAILED. */
static int output_kernel_page(struct record_output *out, const struct record_view *rec, unsigned long long *seen) {
        int events = out->dat ? tracedat_writer_add_kernel_page(out->dat, &rec->header, rec->payload,
                                                                rec->payload_len) :
                                -EINVAL;

        if (events == -EINVAL)
                fprintf(stderr, "warning: skipped a malformed kernel page of %zu bytes\n", rec->payload_len);
        else if (events < 0)
                return READ_FAILED;
        *seen += events > 0 ? (unsigned) events : 0;
        if (uebctl_opts.count && *seen >= uebctl_opts.count)
                return READ_DONE;
        return READ_MORE;
}

/* Reads and handles one message of the stream (one or more records,
 * uebroker-record.h), without waiting. */
static int read_one(int stream, uint8_t *buffer, sd_bus *bus, struct known_events *known, struct record_output *out,
                    unsigned long long *seen) {
        struct record_view rec;
        size_t offset = 0;
        ssize_t n;
        int r;

        n = recv(stream, buffer, UEB_RECORD_MESSAGE_MAX, MSG_DONTWAIT | MSG_TRUNC);
        if (n < 0) {
                if (errno == EAGAIN || errno == EINTR)
                        return READ_NOTHING;
                fprintf(stderr, "error: reading the record stream: %m\n");
                return READ_FAILED;
        }
        if (n == 0) {
                fprintf(stderr, "The broker closed the record stream.\n");
                return READ_DONE;
        }
        if ((size_t) n > UEB_RECORD_MESSAGE_MAX) {
                fprintf(stderr, "warning: skipped a malformed message of %zd bytes\n", n);
                return READ_MORE;
        }
        while ((r = record_stream_next(buffer, (size_t) n, &offset, &rec)) > 0) {
                const struct ueb_record_header *h = &rec.header;
                const struct event_def *def;

                if (h->flags & UEB_RECORD_FLAG_LOST) {
                        if (output_lost(out, h) < 0)
                                return READ_FAILED;
                        continue;
                }
                if (h->flags & (UEB_RECORD_FLAG_KERNEL_HEADER | UEB_RECORD_FLAG_KERNEL_FORMAT)) {
                        if (output_kernel_file(out, &rec) < 0)
                                return READ_FAILED;
                        continue;
                }
                if (h->flags & UEB_RECORD_FLAG_KERNEL_PAGE) {
                        r = output_kernel_page(out, &rec, seen);
                        if (r != READ_MORE)
                                return r;
                        continue;
                }
                if (h->name_len == 0 || h->name_len > EVENT_NAME_MAX) {
                        fprintf(stderr, "warning: skipped a malformed record of %" PRIu32 " bytes\n", h->length);
                        continue;
                }
                /* --provider/--level/--keyword: not counted when left out */
                if (!uebctl_filter_match(&uebctl_opts.filter, rec.name, h->name_len))
                        continue;
                def = known_lookup(known, bus, rec.name, h->name_len);
                if (output_record(out, def, &rec) != 0)
                        return READ_FAILED;
                if (uebctl_opts.count && ++*seen >= uebctl_opts.count)
                        return READ_DONE;
        }
        if (r < 0)
                fprintf(stderr, "warning: skipped the malformed rest of a message of %zd bytes\n", n);
        return READ_MORE;
}

/* Reads the stream until a signal, its end, or --count records; returns
 * the exit status. On a signal, what is queued already is read first: the
 * records the broker sent before it are kept. */
static int record_loop(int stream, int sigfd, sd_bus *bus, struct known_events *known, struct record_output *out) {
        _cleanup_free_ uint8_t *buffer = malloc(UEB_RECORD_MESSAGE_MAX);
        unsigned long long seen = 0;

        if (!buffer) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        for (;;) {
                struct pollfd p[2] = {
                        { .fd = stream, .events = POLLIN },
                        { .fd = sigfd, .events = POLLIN },
                };
                bool signalled;
                int r;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "error: poll: %m\n");
                        return 1;
                }
                signalled = p[1].revents & POLLIN;
                if (!signalled && !(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;
                do
                        r = read_one(stream, buffer, bus, known, out, &seen);
                while (signalled && r == READ_MORE);
                if (r == READ_DONE || (signalled && r == READ_NOTHING))
                        return 0;
                if (r == READ_FAILED)
                        return 1;
        }
}

/* What -o writes: --format, else by the name; a negative exit status on a
 * usage error. */
static int output_format(void) {
        enum uebctl_record_format format = uebctl_opts.format;
        size_t len;

        if (!uebctl_opts.output) {
                if (format != UEBCTL_FORMAT_AUTO) {
                        fprintf(stderr, "error: --format says what -o writes: give -o PATH too\n");
                        return -2;
                }
                return UEBCTL_FORMAT_AUTO;
        }
        len = strlen(uebctl_opts.output);
        if (format == UEBCTL_FORMAT_AUTO)
                format = len > 4 && strcmp(uebctl_opts.output + len - 4, ".dat") == 0 ? UEBCTL_FORMAT_TRACEDAT :
                                                                                     UEBCTL_FORMAT_CTF;
#if !HAVE_BABELTRACE2
        if (format == UEBCTL_FORMAT_CTF) {
                fprintf(stderr, "error: this uebctl was built without libbabeltrace2: no CTF traces "
                                "(-o FILE.dat writes a trace.dat file)\n");
                return -1;
        }
#endif
        return format;
}

/* Writes the trace.dat file and says what is in it. */
static int finish_tracedat(struct tracedat_writer *dat) {
        uint64_t written = tracedat_writer_written(dat), skipped = tracedat_writer_skipped(dat);
        uint64_t lost = tracedat_writer_lost(dat), pages = tracedat_writer_kernel_pages(dat);
        unsigned cpus = tracedat_writer_kernel_cpus(dat);

        if (tracedat_writer_finish(dat) < 0)
                return -EIO;
        fprintf(stderr, "Wrote %" PRIu64 " record%s to the trace.dat file %s", written, written == 1 ? "" : "s",
                uebctl_opts.output);
        if (pages) {
                fprintf(stderr, " in the kernel's pages (%" PRIu64 " page%s of %u CPU%s)", pages,
                        pages == 1 ? "" : "s", cpus, cpus == 1 ? "" : "s");
                if (skipped)
                        fprintf(stderr, " (%" PRIu64 " malformed skipped)", skipped);
                if (lost)
                        fprintf(stderr, "; %" PRIu64 " pages lost, marked as dropped events on each CPU's next page",
                                lost);
        } else {
                if (skipped)
                        fprintf(stderr, " (%" PRIu64 " skipped: no definition, not valid, or larger than a page)",
                                skipped);
                if (lost)
                        fprintf(stderr, "; %" PRIu64 " lost, marked as dropped events on the page after them", lost);
        }
        fputc('\n', stderr);
        return 0;
}

#if HAVE_BABELTRACE2
/* Closes the CTF trace and says what went into it. */
static int finish_ctf(struct ctf_writer *ctf) {
        uint64_t written = ctf_writer_written(ctf), skipped = ctf_writer_skipped(ctf), lost = ctf_writer_lost(ctf);

        if (ctf_writer_finish(ctf) < 0)
                return -EIO;
        fprintf(stderr, "Wrote %" PRIu64 " record%s to the CTF trace %s", written, written == 1 ? "" : "s",
                uebctl_opts.output);
        if (skipped)
                fprintf(stderr, " (%" PRIu64 " skipped: no definition or not decodable)", skipped);
        if (lost)
                fprintf(stderr, "; %" PRIu64 " lost, written as " CTF_LOST_EVENT_NAME " events", lost);
        fputc('\n', stderr);
        return 0;
}
#endif

/* The patterns of the command line (argv[1..]) and of the --provider
 * filters into @patterns (*@n of them, EVENT_PATTERNS_MAX room); the ones
 * made here are @owned's to free. 0, or the exit status. */
static int record_patterns(int argc, char *argv[], char **patterns, size_t *n, struct owned_patterns *owned) {
        int r;

        *n = (size_t) (argc - 1);
        if (argc < 2 && uebctl_opts.filter.n_providers == 0) {
                fprintf(stderr, "usage: uebctl record [--json=MODE] [--count=N] [-o PATH] [--format=FORMAT] "
                                "[--provider=NAME [--level=N] [--keyword=MASK]] [PATTERN...]\n");
                return 2;
        }
        if (check_patterns(argv + 1, *n) < 0)
                return 2;
        memcpy(patterns, argv + 1, *n * sizeof(char *));
        /* The providers' patterns, the level in them when they fit. */
        owned->first = *n;
        r = uebctl_filter_patterns(&uebctl_opts.filter, patterns, n, EVENT_PATTERNS_MAX);
        owned->patterns = patterns;
        owned->end = *n;
        if (r == -E2BIG) {
                fprintf(stderr, "error: %zu patterns and %zu providers, at most %u in all\n", (size_t) (argc - 1),
                        uebctl_opts.filter.n_providers, EVENT_PATTERNS_MAX);
                return 2;
        }
        if (r < 0) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        return 0;
}

int uebctl_record(int argc, char *argv[]) {
        _cleanup_(known_events_done) struct known_events known = {};
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int stream = -EBADF, sigfd = -EBADF;
        struct record_output out = { .json = uebctl_opts.json != UEBCTL_JSON_OFF };
        _cleanup_(patterns_freep) struct owned_patterns owned = {};
        char *patterns[EVENT_PATTERNS_MAX];
        sigset_t mask;
        size_t n_patterns, matched;
        int format, status;

        status = record_patterns(argc, argv, patterns, &n_patterns, &owned);
        if (status != 0)
                return status;
        format = output_format();
        if (format < 0)
                return -format;
        if (uebctl_opts.output && out.json) {
                fprintf(stderr, "error: --json and --output exclude each other: -o writes a %s\n",
                        format == UEBCTL_FORMAT_TRACEDAT ? "trace.dat file" : "CTF trace");
                return 2;
        }

        /* Signals arrive through a descriptor: no handler racing recv(). */
        sigemptyset(&mask);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGTERM);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sigfd < 0) {
                fprintf(stderr, "error: signalfd: %m\n");
                return 1;
        }

        /* The bus stays open: definitions of events registered later. */
        if (uebctl_bus_open(&bus) < 0)
                return 1;
        if (known_refresh(&known, bus) < 0)
                return 1;
        if (format == UEBCTL_FORMAT_TRACEDAT && tracedat_writer_new(uebctl_opts.output, &out.dat) < 0)
                return 1;
#if HAVE_BABELTRACE2
        if (format == UEBCTL_FORMAT_CTF && ctf_writer_new(uebctl_opts.output, &out.ctf) < 0)
                return 1;
#endif
        stream = open_stream(bus, patterns, n_patterns, format == UEBCTL_FORMAT_TRACEDAT);
        if (stream >= 0) {
                matched = report_matches(&known, patterns, n_patterns);
                /* Tell scripts we are attached (the status bytes are set now). */
                fprintf(stderr, "Recording events matching %zu pattern%s (%zu event%s now)%s%s; Ctrl-C to stop.\n",
                        n_patterns, n_patterns == 1 ? "" : "s", matched, matched == 1 ? "" : "s",
                        !uebctl_opts.output                 ? "" :
                        format == UEBCTL_FORMAT_TRACEDAT ? " into the trace.dat file " :
                                                           " into the CTF trace ",
                        uebctl_opts.output ?: "");
                status = record_loop(stream, sigfd, bus, &known, &out);
        } else
                status = 1;

#if HAVE_BABELTRACE2
        if (out.ctf && finish_ctf(out.ctf) < 0)
                return 1;
#endif
        if (out.dat && finish_tracedat(out.dat) < 0)
                return 1;
        return status;
}
