/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What every file of the client library uses, below them all: the clock,
 * waiting for an answer, the last error, waking the background thread and
 * the status byte of an unregistered event. Calls nothing of the files
 * above it (libuebroker.c, client-monitor.c, client-session.c,
 * client-ring.c). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "client-internal.h"
#include "time-util.h"

/* What a status pointer points at while an event is not registered. */
const uint8_t ueb_zero_status = 0;

uint64_t ueb_now_usec(void) {
        return monotonic_usec();
}

bool ueb_client_wait(struct ueb_client *c, uint64_t deadline_usec) {
        struct timespec ts = {
                .tv_sec = (time_t) (deadline_usec / 1000000ull),
                .tv_nsec = (long) (deadline_usec % 1000000ull) * 1000L,
        };

        return pthread_cond_timedwait(&c->changed, &c->lock, &ts) != ETIMEDOUT;
}

int ueb_set_error(struct ueb_client *c, int error, const char *format, ...) {
        va_list ap;

        va_start(ap, format);
        vsnprintf(c->last_error, sizeof(c->last_error), format, ap);
        va_end(ap);
        return error;
}

void ueb_monitor_wake(struct ueb_client *c) {
        uint64_t one = 1;

        /* EAGAIN (counter full) still leaves it readable: fine. */
        if (c->wake_fd >= 0)
                (void) !write(c->wake_fd, &one, sizeof(one));
}
