/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * Logging to stderr. When stderr goes to the journal or any non-terminal
 * (JOURNAL_STREAM set, or not a tty) each line starts with the syslog
 * priority prefix "<N>", which journald and systemd's stream logger turn
 * into the record's priority. On a terminal lines are plain.
 *
 * The *_errno() variants set errno to the error for "%m" and return the
 * negative errno, so "return log_error_errno(r, "...: %m");" works.
 */

#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

/* Decides the prefix mode from the environment; call once at startup. */
void log_setup(void);
void log_set_max_level(int level);
int log_get_max_level(void);

int log_full_errno(int level, int error, const char *format, ...) __attribute__((format(printf, 3, 4)));

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
