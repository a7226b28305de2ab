/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Register round trips through the broker (validation, policy, provider)
 * vs the cheapest round trip to the same daemon, org.freedesktop.DBus.Peer.Ping,
 * on one connection, in one run. Calls/s.
 *   bench-register [CALLS]   (default 20000; needs a broker: use the harness)
 */
#include <stdio.h>
#include <stdlib.h>

#include "broker-bus.h"
#include "bus-util.h"
#include "bench-util.h"

static int call(sd_bus *bus, const char *interface, const char *member, const char *command) {
        return bench_call(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, interface, member, command);
}

int main(int argc, char *argv[]) {
        unsigned long long n = bench_count(argc, argv, 20000ull);
        const char *address = getenv("UEBROKER_BUS_ADDRESS");
        sd_bus *bus = NULL;
        uint64_t t0, t1, t2;

        if (!address || bus_open_address(address, &bus) < 0) {
                fprintf(stderr, "set UEBROKER_BUS_ADDRESS (run through tests/integration/broker-harness.sh)\n");
                return 1;
        }
        /* Warm up; the first Register creates the session and the event,
         * the rest return the same registration (what a re-registering
         * client costs). */
        if (call(bus, BROKER_INTERFACE, "Register", "bench_register u32 a; __data_loc char[] s") < 0 ||
            call(bus, "org.freedesktop.DBus.Peer", "Ping", NULL) < 0)
                return 1;

        t0 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++)
                if (call(bus, BROKER_INTERFACE, "Register", "bench_register u32 a; __data_loc char[] s") < 0)
                        return 1;
        t1 = bench_now_ns();
        for (unsigned long long i = 0; i < n; i++)
                if (call(bus, "org.freedesktop.DBus.Peer", "Ping", NULL) < 0)
                        return 1;
        t2 = bench_now_ns();

        printf("%llu calls each\n", n);
        bench_report("Register", (double) n * 1e9 / (double) (t1 - t0), "Peer.Ping", (double) n * 1e9 / (double) (t2 - t1),
                     "calls/s");
        bench_report("Register", (double) (t1 - t0) / (double) n / 1000.0, "Peer.Ping",
                     (double) (t2 - t1) / (double) n / 1000.0, "us/call");
        sd_bus_flush_close_unref(bus);
        return 0;
}
