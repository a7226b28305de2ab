/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl record [--json] [--count=N] NAME...: prints the records of events,
 * decoded with each event's fields, naming the writer. Embedded provider:
 * uid and pid from the data socket's peer credentials, not from the writer;
 * kernel providers: the thread id in the kernel's trace:
 *     [uid 1000 pid 884] NAME: a=1 b=hello
 *     [tid 884] NAME: a=1 b=hello
 *     {"name":"NAME","pid":884,"uid":1000,"timestamp_ns":...,"timestamp":"...","fields":{"a":1,"b":"hello"}}
 *     {"name":"NAME","tid":884,"timestamp_ns":...,"timestamp":"...","fields":{"a":1,"b":"hello"}}
 * The writer's bytes are escaped (text-escape.h): a writer cannot drive the
 * reader's terminal. Ends on SIGINT/SIGTERM, when the stream closes, or
 * after N records. */
#include "uebctl.h"

#include <errno.h>
#include <getopt.h>
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

#include "cleanup.h"
#include "event-decode.h"
#include "event-def.h"
#include "fd-util.h"
#include "json-string.h"
#include "record-stream.h"
#include "strbuf.h"
#include "text-escape.h"

#define RECORD_MESSAGE_MAX (sizeof(struct record_header) + EVENT_NAME_MAX + 65536 + 16)

struct recorded_event {
        char *name;
        struct event_def *def;
};

static void recorded_events_free(struct recorded_event *events, size_t n) {
        if (!events)
                return;
        for (size_t i = 0; i < n; i++) {
                free(events[i].name);
                event_def_free(events[i].def);
        }
        free(events);
}

static const struct recorded_event *find_event(const struct recorded_event *events, size_t n, const char *name,
                                               size_t name_len) {
        for (size_t i = 0; i < n; i++)
                if (strlen(events[i].name) == name_len && memcmp(events[i].name, name, name_len) == 0)
                        return &events[i];
        return NULL;
}

/* The definitions of @names, from ListEvents. */
static int load_definitions(sd_bus *bus, char **names, size_t n_names, struct recorded_event **ret) {
        struct uebctl_event_info *info = NULL;
        struct recorded_event *events;
        size_t n_info = 0;
        int r;

        r = uebctl_list_events(bus, &info, &n_info);
        if (r < 0)
                return r;
        events = calloc(n_names, sizeof(*events));
        if (!events) {
                uebctl_event_info_free(info, n_info);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n_names; i++) {
                const struct uebctl_event_info *found = NULL;
                struct event_error error = { 0 };
                _cleanup_free_ char *command = NULL;

                for (size_t j = 0; j < n_info && !found; j++)
                        if (strcmp(info[j].name, names[i]) == 0)
                                found = &info[j];
                if (!found) {
                        fprintf(stderr, "error: no event is called %s (see uebctl list)\n", names[i]);
                        r = -ENOENT;
                        goto fail;
                }
                if (asprintf(&command, "%s %s", found->name, found->fields) < 0) {
                        command = NULL;
                        r = -ENOMEM;
                        goto fail;
                }
                events[i].name = strdup(names[i]);
                if (!events[i].name) {
                        r = -ENOMEM;
                        goto fail;
                }
                r = event_def_parse(command, 0, &events[i].def, &error);
                if (r < 0) {
                        fprintf(stderr, "error: cannot parse the definition of %s from the broker: %s\n", names[i],
                                error.message);
                        goto fail;
                }
        }
        uebctl_event_info_free(info, n_info);
        *ret = events;
        return 0;

fail:
        uebctl_event_info_free(info, n_info);
        recorded_events_free(events, n_names);
        return r;
}

static void append_timestamp(struct strbuf *sb, uint64_t ns) {
        time_t secs = (time_t) (ns / 1000000000ull);
        struct tm tm;
        char text[64];

        if (!gmtime_r(&secs, &tm) || strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm) == 0)
                strbuf_append(sb, "\"\"");
        else
                strbuf_printf(sb, "\"%s.%09" PRIu64 "Z\"", text, (uint64_t) (ns % 1000000000ull));
}

/* Formats one record into @sb; false if the message is malformed. */
static bool format_record(const struct recorded_event *events, size_t n_events, const uint8_t *msg, size_t len,
                          bool json, struct strbuf *sb) {
        struct record_header h;
        const struct recorded_event *ev;
        const char *name;
        const uint8_t *payload;
        size_t payload_len;
        int r;

        memcpy(&h, msg, sizeof(h));
        if (h.length != len || h.name_len == 0 || h.name_len > EVENT_NAME_MAX ||
            len - sizeof(h) < h.name_len)
                return false;
        name = (const char *) msg + sizeof(h);
        payload = msg + sizeof(h) + h.name_len;
        payload_len = len - sizeof(h) - h.name_len;
        ev = find_event(events, n_events, name, h.name_len);

        if (json) {
                strbuf_append(sb, "{\"name\":");
                json_append_string(sb, name, h.name_len);
                if (h.flags & RECORD_FLAG_KERNEL_TRACE)
                        strbuf_printf(sb, ",\"tid\":%" PRIu32, h.pid);
                else
                        strbuf_printf(sb, ",\"pid\":%" PRIu32, h.pid);
                if (h.uid != RECORD_UID_UNKNOWN)
                        strbuf_printf(sb, ",\"uid\":%" PRIu32, h.uid);
                strbuf_printf(sb, ",\"timestamp_ns\":%" PRIu64 ",\"timestamp\":", h.timestamp_ns);
                append_timestamp(sb, h.timestamp_ns);
                strbuf_append(sb, ",\"fields\":");
                r = ev ? event_decode_json(ev->def, payload, payload_len, sb) : -ENOENT;
                if (r < 0) {
                        /* Not decodable with the definition we know (the
                         * event was re-created with other fields?). */
                        strbuf_append(sb, "null,\"raw\":\"");
                        event_decode_hex(sb, payload, payload_len);
                        strbuf_append_c(sb, '"');
                }
                strbuf_append(sb, "}\n");
        } else {
                if (h.flags & RECORD_FLAG_KERNEL_TRACE)
                        /* The kernel's trace: the thread, at the write. */
                        strbuf_printf(sb, "[tid %" PRIu32 "] ", h.pid);
                else
                        strbuf_printf(sb, "[uid %" PRIu32 " pid %" PRIu32 "] ", h.uid, h.pid);
                /* The name is a validated identifier, but print it safely. */
                text_escape_append(sb, name, h.name_len, TEXT_ESCAPE_TERMINAL);
                strbuf_append(sb, ": ");
                r = ev ? event_decode_text(ev->def, payload, payload_len, sb) : -ENOENT;
                if (r < 0) {
                        strbuf_printf(sb, "(%zu bytes not decodable: ", payload_len);
                        event_decode_hex(sb, payload, payload_len);
                        strbuf_append_c(sb, ')');
                }
                strbuf_append_c(sb, '\n');
        }
        return true;
}

/* Calls Record; returns our own (O_CLOEXEC) descriptor of the stream. */
static int open_stream(sd_bus *bus, char **names) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *call = NULL, *reply = NULL;
        int fd, r;

        r = sd_bus_message_new_method_call(bus, &call, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE,
                                           "Record");
        if (r >= 0)
                r = sd_bus_message_append_strv(call, names);
        if (r >= 0)
                r = sd_bus_message_set_allow_interactive_authorization(call, isatty(STDIN_FILENO));
        if (r < 0) {
                fprintf(stderr, "error: Record: %s\n", strerror(-r));
                return r;
        }
        r = sd_bus_call(bus, call, 0, &error, &reply);
        if (r < 0) {
                uebctl_call_failed("Record", r, &error);
                return r;
        }
        if (sd_bus_message_read(reply, "h", &fd) <= 0) {
                fprintf(stderr, "error: Record: unexpected reply\n");
                return -EPROTO;
        }
        /* The reply owns @fd and closes it with the message. */
        r = fd_dup_cloexec(fd);
        if (r < 0)
                fprintf(stderr, "error: Record: %s\n", strerror(-r));
        return r;
}

int uebctl_record(int argc, char *argv[]) {
        static const struct option options[] = {
                { "json", no_argument, NULL, 'j' },
                { "count", required_argument, NULL, 'n' },
                {},
        };
        struct recorded_event *events = NULL;
        _cleanup_free_ uint8_t *buffer = NULL;
        _cleanup_close_ int stream = -1, sigfd = -1;
        sd_bus *bus = NULL;
        sigset_t mask;
        bool json = false;
        unsigned long long count = 0, seen = 0;
        size_t n_names;
        char **names, *end;
        int c, r, status = 1;

        while ((c = getopt_long(argc, argv, "jn:", options, NULL)) >= 0)
                switch (c) {
                case 'j':
                        json = true;
                        break;
                case 'n':
                        errno = 0;
                        count = strtoull(optarg, &end, 10);
                        if (errno || *end || !*optarg || count == 0) {
                                fprintf(stderr, "error: --count takes a positive number\n");
                                return 2;
                        }
                        break;
                default:
                        return 2;
                }
        if (optind >= argc) {
                fprintf(stderr, "usage: uebctl record [--json] [--count=N] NAME...\n");
                return 2;
        }
        names = argv + optind;
        n_names = (size_t) (argc - optind);

        buffer = malloc(RECORD_MESSAGE_MAX);
        if (!buffer) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
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

        if (uebctl_bus_open(&bus) < 0)
                return 1;
        r = load_definitions(bus, names, n_names, &events);
        if (r >= 0)
                stream = open_stream(bus, names);
        /* The stream lives on without the bus connection. */
        sd_bus_flush_close_unref(bus);
        if (r < 0 || stream < 0)
                goto out;

        /* Tell scripts we are attached (the status bytes are set now). */
        fprintf(stderr, "Recording %zu event%s; Ctrl-C to stop.\n", n_names, n_names == 1 ? "" : "s");

        for (;;) {
                struct pollfd p[2] = {
                        { .fd = stream, .events = POLLIN },
                        { .fd = sigfd, .events = POLLIN },
                };
                struct strbuf sb = STRBUF_INIT;
                struct record_header h;
                char *text;
                ssize_t n;

                if (poll(p, 2, -1) < 0) {
                        if (errno == EINTR)
                                continue;
                        fprintf(stderr, "error: poll: %m\n");
                        goto out;
                }
                if (p[1].revents & POLLIN) {
                        status = 0;
                        goto out;
                }
                if (!(p[0].revents & (POLLIN | POLLHUP | POLLERR)))
                        continue;

                n = recv(stream, buffer, RECORD_MESSAGE_MAX, MSG_DONTWAIT | MSG_TRUNC);
                if (n < 0) {
                        if (errno == EAGAIN || errno == EINTR)
                                continue;
                        fprintf(stderr, "error: reading the record stream: %m\n");
                        goto out;
                }
                if (n == 0) {
                        fprintf(stderr, "The broker closed the record stream.\n");
                        status = 0;
                        goto out;
                }
                if ((size_t) n > RECORD_MESSAGE_MAX || (size_t) n < sizeof(h)) {
                        fprintf(stderr, "warning: skipped a malformed record of %zd bytes\n", n);
                        continue;
                }
                memcpy(&h, buffer, sizeof(h));
                if (h.flags & RECORD_FLAG_LOST) {
                        fprintf(stderr, "warning: %" PRIu64 " records lost (the consumer was too slow)\n",
                                h.lost_count);
                        continue;
                }
                if (!format_record(events, n_names, buffer, (size_t) n, json, &sb)) {
                        strbuf_done(&sb);
                        fprintf(stderr, "warning: skipped a malformed record of %zd bytes\n", n);
                        continue;
                }
                text = strbuf_steal(&sb);
                if (!text) {
                        fprintf(stderr, "error: out of memory\n");
                        goto out;
                }
                fputs(text, stdout);
                free(text);
                /* One line at a time, for pipes. */
                if (fflush(stdout) != 0)
                        goto out;
                if (count && ++seen >= count) {
                        status = 0;
                        goto out;
                }
        }
out:
        recorded_events_free(events, n_names);
        return status;
}
