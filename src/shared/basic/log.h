/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The one logging module. Under systemd, where stderr is the journal's
 * stream (JOURNAL_STREAM names stderr's device and inode, as systemd.exec(5)
 * says to check), records go to the journal through sd-journal with their
 * fields: MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER=, and for the broker's
 * events MESSAGE_ID= and UEB_EVENT=, UEB_UID=, UEB_PID= (log_struct()), so
 * `journalctl -u uebrokerd UEB_EVENT=name` finds an event's history.
 * Otherwise lines go to stderr: with the syslog priority prefix "<N>" when
 * stderr is not a terminal (journald and systemd's stream logger turn it
 * into the priority), plain on a terminal; the fields are not written there.
 *
 * The *_errno() variants set errno to the error for "%m" and return the
 * negative errno, so "return log_error_errno(r, "...: %m");" works.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <syslog.h>

/* Decides where records go from the environment; call once at startup.
 * @identifier is SYSLOG_IDENTIFIER= (the program's name). */
void log_setup(const char *identifier);
void log_set_max_level(int level);
int log_get_max_level(void);
/* True when records go to the journal with their fields. */
bool log_to_journal(void);

/* What a record is about: all optional (NULL, LOG_UID_NONE, 0). */
/* The longest event name a UEB_EVENT= field carries: EVENT_NAME_MAX
 * (event-def-parse.c checks that they agree). */
#define LOG_EVENT_NAME_MAX 255

struct log_about {
        const char *message_id;         /* 32 lowercase hex digits, see daemon/bus/message-ids.h */
        const char *event;              /* an event name */
        uid_t uid;
        pid_t pid;
};
#define LOG_UID_NONE ((uid_t) -1)

int log_struct_errno(int level, int error, const struct log_about *about, const char *format, ...)
        __attribute__((format(printf, 4, 5)));
int log_full_errno(int level, int error, const char *format, ...) __attribute__((format(printf, 3, 4)));

#define log_struct(level, ...) ((void) log_struct_errno((level), 0, __VA_ARGS__))
#define log_full(level, ...) ((void) log_full_errno((level), 0, __VA_ARGS__))

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

#define log_debug_errno(e, ...) log_full_errno(LOG_DEBUG, (e), __VA_ARGS__)
#define log_info_errno(e, ...) log_full_errno(LOG_INFO, (e), __VA_ARGS__)
#define log_warning_errno(e, ...) log_full_errno(LOG_WARNING, (e), __VA_ARGS__)
#define log_error_errno(e, ...) log_full_errno(LOG_ERR, (e), __VA_ARGS__)

/* True when $JOURNAL_STREAM (@env, "DEVICE:INODE" in decimal, may be NULL)
 * names the file with @dev and @ino: stderr is connected to the journal.
 * Pure. */
bool log_journal_stream_matches(const char *env, dev_t dev, ino_t ino);

/* A record's journal fields, "NAME=value" each, pointing into @text. */
#define LOG_FIELDS_MAX 8
#define LOG_FIELD_VALUE_MAX 2048        /* MESSAGE= is cut there */
struct log_fields {
        struct iovec iov[LOG_FIELDS_MAX];
        size_t n;
        char text[LOG_FIELD_VALUE_MAX + 512];
};

/* Fills @f with MESSAGE=@message, PRIORITY=@level, SYSLOG_IDENTIFIER=
 * @identifier (if not NULL) and what @about gives: MESSAGE_ID= (only a
 * valid id: 32 hex digits), UEB_EVENT= (only a valid event name),
 * UEB_UID=, UEB_PID=. A field that would not be valid is left out rather
 * than written wrong. Pure; never fails (MESSAGE= is cut at
 * LOG_FIELD_VALUE_MAX bytes). */
void log_fields_build(struct log_fields *f, int level, const char *identifier, const struct log_about *about,
                      const char *message);

/* At most @burst messages per @interval_usec; counts what it suppressed so
 * the next allowed message can say so. Zero-initialise with the limits. */
struct log_ratelimit {
        uint64_t interval_usec;
        unsigned burst;
        uint64_t begin_usec;
        unsigned shown;
        unsigned suppressed;
};

#define LOG_RATELIMIT_INIT(interval, b) { .interval_usec = (interval), .burst = (b) }

/* True if a message may be logged now; when it returns true after a
 * suppressed stretch, *ret_suppressed (if not NULL) tells how many. */
bool log_ratelimit_ok(struct log_ratelimit *rl, unsigned *ret_suppressed);
