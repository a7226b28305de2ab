/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if HAVE_SD_JOURNAL
#include <systemd/sd-journal.h>
#endif

#include "log.h"
#include "time-util.h"

static int max_level = LOG_INFO;
static bool use_prefix = true;
static bool use_journal = false;
static const char *syslog_identifier = NULL;

bool log_journal_stream_matches(const char *env, dev_t dev, ino_t ino) {
        unsigned long long d, i;
        int end = 0;

        if (!env || env[0] < '0' || env[0] > '9')
                return false;
        if (sscanf(env, "%llu:%llu%n", &d, &i, &end) != 2 || env[end] != '\0')
                return false;
        return d == (unsigned long long) dev && i == (unsigned long long) ino;
}

void log_setup(const char *identifier) {
        const char *stream = getenv("JOURNAL_STREAM");
        struct stat st;

        syslog_identifier = identifier;
        /* JOURNAL_STREAM may be inherited by a process whose stderr went
         * elsewhere: only a match with stderr itself counts (systemd.exec(5)). */
        use_journal = false;
#if HAVE_SD_JOURNAL
        use_journal = stream && fstat(STDERR_FILENO, &st) == 0 &&
                      log_journal_stream_matches(stream, st.st_dev, st.st_ino);
#else
        (void) st;
#endif
        /* Other non-terminals (a pipe to a logger): prefixes become
         * priorities. A terminal is for people: no prefixes. */
        use_prefix = stream || !isatty(STDERR_FILENO);
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

bool log_to_journal(void) {
        return use_journal;
}

static bool is_message_id(const char *id) {
        size_t n = 0;

        for (; id[n]; n++)
                if (!((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
                        return false;
        return n == 32;
}

/* An event's name as event names are (event-def.h, which this bottom file
 * does not include): 1..LOG_EVENT_NAME_MAX bytes of [A-Za-z0-9_-], starting
 * with a letter or '_'. Anything else is left out of the fields. */
static bool is_event_name(const char *name) {
        size_t n = 0;

        if (!((name[0] >= 'a' && name[0] <= 'z') || (name[0] >= 'A' && name[0] <= 'Z') || name[0] == '_'))
                return false;
        for (; name[n]; n++)
                if (!((name[n] >= '0' && name[n] <= '9') || (name[n] >= 'a' && name[n] <= 'z') ||
                      (name[n] >= 'A' && name[n] <= 'Z') || name[n] == '_' || name[n] == '-') ||
                    n >= LOG_EVENT_NAME_MAX)
                        return false;
        return n > 0;
}

/* Appends "NAME=value" (value cut to @max bytes) to @f as one iovec. */
static void add_field(struct log_fields *f, size_t *used, const char *name, const char *value, size_t max) {
        size_t room = sizeof(f->text) - *used, len = strlen(value);
        int n;

        if (f->n >= LOG_FIELDS_MAX)
                return;
        if (len > max)
                len = max;
        n = snprintf(f->text + *used, room, "%s=%.*s", name, (int) len, value);
        if (n < 0 || (size_t) n >= room)
                return;         /* no room: leave the field out, never cut a name */
        f->iov[f->n++] = (struct iovec) { .iov_base = f->text + *used, .iov_len = (size_t) n };
        *used += (size_t) n + 1;
}

void log_fields_build(struct log_fields *f, int level, const char *identifier, const struct log_about *about,
                      const char *message) {
        char number[32];
        size_t used = 0;

        f->n = 0;
        add_field(f, &used, "MESSAGE", message ?: "", LOG_FIELD_VALUE_MAX);
        snprintf(number, sizeof(number), "%d", level & LOG_PRIMASK);
        add_field(f, &used, "PRIORITY", number, sizeof(number));
        if (identifier && *identifier)
                add_field(f, &used, "SYSLOG_IDENTIFIER", identifier, 64);
        if (!about)
                return;
        if (about->message_id && is_message_id(about->message_id))
                add_field(f, &used, "MESSAGE_ID", about->message_id, 32);
        if (about->event && is_event_name(about->event))
                add_field(f, &used, "UEB_EVENT", about->event, LOG_EVENT_NAME_MAX);
        if (about->uid != LOG_UID_NONE) {
                snprintf(number, sizeof(number), "%" PRIu32, (uint32_t) about->uid);
                add_field(f, &used, "UEB_UID", number, sizeof(number));
        }
        if (about->pid > 0) {
                snprintf(number, sizeof(number), "%" PRId32, (int32_t) about->pid);
                add_field(f, &used, "UEB_PID", number, sizeof(number));
        }
}

static int log_message(int level, int error, const struct log_about *about, const char *format, va_list ap)
        __attribute__((format(printf, 4, 0)));
static int log_message(int level, int error, const struct log_about *about, const char *format, va_list ap) {
        int saved_errno = errno;
        char buf[LOG_FIELD_VALUE_MAX];

        if (error < 0)
                error = -error;
        if (level > max_level) {
                errno = saved_errno;
                return -error;
        }

        /* Format into one buffer and emit with a single write so lines from
         * one process never interleave. */
        errno = error;
        vsnprintf(buf, sizeof(buf), format, ap);

#if HAVE_SD_JOURNAL
        if (use_journal) {
                struct log_fields f;

                log_fields_build(&f, level, syslog_identifier, about, buf);
                if (sd_journal_sendv(f.iov, (int) f.n) >= 0) {
                        errno = saved_errno;
                        return -error;
                }
                /* The journal is gone (journald restarting): stderr still
                 * reaches it through the stream, without the fields. */
        }
#endif
        if (use_prefix)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else
                fprintf(stderr, "%s\n", buf);

        errno = saved_errno;
        return -error;
}

int log_struct_errno(int level, int error, const struct log_about *about, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_message(level, error, about, format, ap);
        va_end(ap);
        return r;
}

int log_full_errno(int level, int error, const char *format, ...) {
        va_list ap;
        int r;

        va_start(ap, format);
        r = log_message(level, error, NULL, format, ap);
        va_end(ap);
        return r;
}

bool log_ratelimit_ok(struct log_ratelimit *rl, unsigned *ret_suppressed) {
        uint64_t now = monotonic_usec();

        if (rl->begin_usec == 0 || now - rl->begin_usec >= rl->interval_usec) {
                if (ret_suppressed)
                        *ret_suppressed = rl->suppressed;
                rl->begin_usec = now;
                rl->shown = 1;
                rl->suppressed = 0;
                return true;
        }
        if (rl->shown < rl->burst) {
                rl->shown++;
                if (ret_suppressed)
                        *ret_suppressed = 0;
                return true;
        }
        rl->suppressed++;
        return false;
}
