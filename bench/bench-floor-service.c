/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The floor for Register: a service on the same bus that answers a method
 * with two fds and does no work. The fds (a memfd and one end of a socket
 * pair, the kinds Register hands out) are made once; each reply carries
 * dups of them, as the broker's replies carry dups of a session's fds.
 *   bench-floor-service   (connects to $UEBROKER_BUS_ADDRESS, owns
 *   org.uebroker1.BenchFloor, runs until SIGTERM or SIGINT)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bench-floor.h"
#include "bus-util.h"
#include "fd-util.h"

struct floor {
        int memfd;
        int socket_fds[2];
};

static int method_reply(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct floor *f = userdata;
        const char *arg;
        int r;

        r = sd_bus_message_read(m, "s", &arg);
        if (r < 0)
                return r;
        return sd_bus_reply_method_return(m, "hhuu", f->socket_fds[1], f->memfd, 1u, 0u);
}

static const sd_bus_vtable floor_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD(BENCH_FLOOR_METHOD, "s", "hhuu", method_reply, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END
};

int main(void) {
        const char *address = getenv("UEBROKER_BUS_ADDRESS");
        struct floor f = { .memfd = -1, .socket_fds = { -1, -1 } };
        sd_event *event = NULL;
        sd_bus *bus = NULL;
        sigset_t mask;
        int r;

        f.memfd = memfd_new_sized("bench-floor", 4096);
        if (f.memfd < 0 || socketpair_seqpacket(f.socket_fds, 0) < 0) {
                fprintf(stderr, "bench-floor-service: cannot make the fds\n");
                return 1;
        }
        if (!address || bus_open_address(address, &bus) < 0) {
                fprintf(stderr, "bench-floor-service: cannot connect (set UEBROKER_BUS_ADDRESS)\n");
                return 1;
        }
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        r = sd_event_default(&event);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGTERM, NULL, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, NULL, NULL);
        if (r >= 0)
                r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r >= 0)
                r = sd_bus_add_object_vtable(bus, NULL, BENCH_FLOOR_OBJECT_PATH, BENCH_FLOOR_INTERFACE, floor_vtable,
                                             &f);
        if (r >= 0)
                r = sd_bus_request_name(bus, BENCH_FLOOR_BUS_NAME, 0);
        if (r < 0) {
                fprintf(stderr, "bench-floor-service: cannot serve %s: %s\n", BENCH_FLOOR_BUS_NAME, strerror(-r));
                return 1;
        }
        r = sd_event_loop(event);
        sd_bus_flush_close_unref(bus);
        sd_event_unref(event);
        safe_close(f.memfd);
        safe_close(f.socket_fds[0]);
        safe_close(f.socket_fds[1]);
        return r < 0 ? 1 : 0;
}
