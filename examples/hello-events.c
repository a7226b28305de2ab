/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * hello-events: a small program instrumented with libuebroker.
 *
 * It declares hello_tick once with UEB_EVENT() (<uebroker-event.h>), which
 * gives the definition "hello_tick u32 count; __data_loc char[] msg" and a
 * typed write call, registers it and, every interval, writes one event --
 * but only while someone listens: the check is one byte load, so the
 * instrumentation costs nothing otherwise. Run
 * `uebctl record hello_tick` to see the events; at the end it prints how
 * many ticks were written and how many skipped.
 *
 *   hello-events [--count=N] [--interval=MS] [--message=TEXT]
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "uebroker-event.h"

/* The library lays out the payload, __data_loc location included. */
UEB_EVENT(hello_tick,
          UEB_FIELD(u32, count),
          UEB_STRING(msg))

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
        stop = 1;
}

static int parse_number(const char *s, unsigned long *ret) {
        char *end;

        errno = 0;
        *ret = strtoul(s, &end, 10);
        return errno || !*s || *end ? -EINVAL : 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "count", required_argument, NULL, 'c' },
                { "interval", required_argument, NULL, 'i' },
                { "message", required_argument, NULL, 'm' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        unsigned long count = 50, interval_ms = 100, written = 0, skipped = 0, failed = 0;
        char own_message[64];
        const char *message = own_message;
        struct ueb_client *client = NULL;
        struct ueb_event *tick = NULL;
        struct ueb_stats stats;
        int c, r;

        /* Names the pid the broker records as the writer's. */
        snprintf(own_message, sizeof(own_message), "hello from pid %d", (int) getpid());
        while ((c = getopt_long(argc, argv, "c:i:m:h", options, NULL)) >= 0)
                switch (c) {
                case 'c':
                        if (parse_number(optarg, &count) < 0) {
                                fprintf(stderr, "--count takes a number (0: until interrupted)\n");
                                return 2;
                        }
                        break;
                case 'i':
                        if (parse_number(optarg, &interval_ms) < 0) {
                                fprintf(stderr, "--interval takes milliseconds\n");
                                return 2;
                        }
                        break;
                case 'm':
                        if (strlen(optarg) > 1000) {
                                fprintf(stderr, "--message is limited to 1000 bytes\n");
                                return 2;
                        }
                        message = optarg;
                        break;
                case 'h':
                        printf("Usage: %s [--count=N] [--interval=MS] [--message=TEXT]\n"
                               "Writes a hello_tick event every interval while someone listens.\n",
                               argv[0]);
                        return 0;
                default:
                        return 2;
                }

        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);

        /* Neither call fails the program when no broker runs: the library
         * keeps trying in the background and the event stays disabled. */
        r = ueb_open(&client);
        if (!client) {
                fprintf(stderr, "cannot create the uebroker client: %s\n", strerror(-r));
                return 1;
        }
        if (r == 0)
                fprintf(stderr, "no bus yet (%s); continuing without events\n", ueb_last_error(client));
        r = ueb_register_hello_tick(client, &tick);
        if (r < 0)
                fprintf(stderr, "cannot register hello_tick: %s\n", ueb_last_error(client));
        else if (r == 0)
                fprintf(stderr, "broker not reachable yet; hello_tick will be registered when it appears\n");
        else
                fprintf(stderr, "hello_tick registered; run: uebctl record hello_tick\n");

        for (unsigned long i = 0; !stop && (count == 0 || i < count); i++) {
                struct timespec ts = { interval_ms / 1000, (long) (interval_ms % 1000) * 1000000L };

                if (tick && ueb_enabled(tick)) {
                        if (ueb_write_hello_tick(tick, (uint32_t) i, message) == 0)
                                written++;
                        else
                                failed++;
                } else
                        skipped++;
                nanosleep(&ts, NULL);
        }

        ueb_client_stats(client, &stats);
        printf("hello-events: %lu written, %lu skipped (nobody listening), %lu failed; library: %llu written, %llu dropped, %llu registrations\n",
               written, skipped, failed, (unsigned long long) stats.written, (unsigned long long) stats.dropped,
               (unsigned long long) stats.registrations);
        ueb_close(client);
        return 0;
}
