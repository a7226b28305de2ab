/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The background thread of a client: reconnects to the bus, watches the
 * broker's name and the data file, and registers pending events, so that a
 * broker that starts late or restarts is picked up without the host doing
 * anything. It sleeps in poll() between events, with c->lock released;
 * its work with the lock held never waits for the bus (see
 * client-session.c), and after each round it wakes host threads that wait
 * for an answer.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "client-internal.h"
#include "fd-util.h"
#include "macro.h"

static int timeout_ms(uint64_t deadline, uint64_t now) {
        uint64_t ms;

        if (deadline == UINT64_MAX)
                return -1;
        if (deadline <= now)
                return 0;
        ms = (deadline - now + 999) / 1000;
        return ms > INT_MAX ? INT_MAX : (int) ms;
}

static void *monitor_main(void *userdata) {
        struct ueb_client *c = ASSERT_PTR(userdata);

        pthread_mutex_lock(&c->lock);
        while (!c->stopping) {
                struct pollfd p[3];
                nfds_t n = 0;
                int data_slot = -1;
                unsigned generation;
                uint64_t now = ueb_now_usec(), deadline = UINT64_MAX, t;

                if (__atomic_exchange_n(&c->session_broken, 0, __ATOMIC_ACQ_REL))
                        ueb_session_check_data_file(c);
                if (!c->bus && now >= c->next_connect_usec)
                        (void) ueb_session_connect(c);
                ueb_session_process(c);
                if (c->bus_ready && ueb_session_has_pending(c) && ueb_now_usec() >= c->next_register_usec)
                        ueb_session_register_pending(c);
                /* Registration may have queued bus messages: run them now. */
                ueb_session_process(c);
                pthread_cond_broadcast(&c->changed);

                p[n++] = (struct pollfd) { .fd = c->wake_fd, .events = POLLIN };
                if (c->bus) {
                        int events = sd_bus_get_events(c->bus);

                        p[n++] = (struct pollfd) { .fd = sd_bus_get_fd(c->bus), .events = (short) (events > 0 ? events : 0) };
                        if (sd_bus_get_timeout(c->bus, &t) > 0 && t < deadline)
                                deadline = t;
                        if (!c->bus_ready && c->connect_deadline_usec < deadline)
                                deadline = c->connect_deadline_usec;
                        if (c->bus_ready && ueb_session_has_pending(c) && c->next_register_usec < deadline)
                                deadline = c->next_register_usec;
                } else if (c->next_connect_usec < deadline)
                        deadline = c->next_connect_usec;
                if (c->data_fd >= 0) {
                        /* No events asked for: poll() reports only a hangup
                         * (the broker closed its end) or an error. */
                        data_slot = (int) n;
                        p[n++] = (struct pollfd) { .fd = c->data_fd, .events = 0 };
                }
                generation = c->session_generation;
                now = ueb_now_usec();

                pthread_mutex_unlock(&c->lock);
                (void) poll(p, n, timeout_ms(deadline, now));
                if (p[0].revents & POLLIN) {
                        uint64_t counter;

                        (void) !read(c->wake_fd, &counter, sizeof(counter));
                }
                pthread_mutex_lock(&c->lock);

                /* Only if the descriptor we polled is still the session's. */
                if (data_slot >= 0 && (p[data_slot].revents & (POLLHUP | POLLERR)) &&
                    generation == c->session_generation)
                        ueb_session_lose(c);
        }
        pthread_mutex_unlock(&c->lock);
        return NULL;
}

int ueb_monitor_start(struct ueb_client *c) {
        sigset_t all, saved;
        int r;

        c->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (c->wake_fd < 0)
                return -errno;

        /* The thread inherits the mask: with every signal blocked it never
         * runs the host's handlers. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &saved);
        r = pthread_create(&c->thread, NULL, monitor_main, c);
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (r != 0)
                return -r;
        c->thread_started = true;
        return 0;
}

void ueb_monitor_stop(struct ueb_client *c) {
        if (!c->thread_started)
                return;
        c->thread_started = false;
        if (ueb_client_forked(c))
                return;

        pthread_mutex_lock(&c->lock);
        c->stopping = true;
        pthread_mutex_unlock(&c->lock);
        ueb_monitor_wake(c);
        pthread_join(c->thread, NULL);
}
