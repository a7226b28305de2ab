/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int max_level = LOG_INFO;
static bool use_prefix = true;

void log_setup(void) {
        /* JOURNAL_STREAM means stderr is connected to journald: prefixes
         * become priorities. A terminal is for people: no prefixes. */
        use_prefix = getenv("JOURNAL_STREAM") || !isatty(STDERR_FILENO);
}

void log_set_max_level(int level) {
        max_level = level;
}

int log_get_max_level(void) {
        return max_level;
}

int log_full_errno(int level, int error, const char *format, ...) {
        int saved_errno = errno;
        char buf[2048];
        va_list ap;

        if (error < 0)
                error = -error;

        if (level > max_level) {
                errno = saved_errno;
                return -error;
        }

        /* Format into one buffer and emit with a single write so lines from
         * one process never interleave. */
        errno = error;
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);

        if (use_prefix)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else
                fprintf(stderr, "%s\n", buf);

        errno = saved_errno;
        return -error;
}

bool log_ratelimit_ok(struct log_ratelimit *rl, unsigned *ret_suppressed) {
        struct timespec ts;
        uint64_t now;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        now = (uint64_t) ts.tv_sec * 1000000u + (uint64_t) ts.tv_nsec / 1000u;

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
