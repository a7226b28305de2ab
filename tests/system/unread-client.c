/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A client that sends and never reads, for the system tier's
 * guest, where there is no Python: on CONNS connections to the system bus,
 * N calls of METHOD each (Register with COMMAND, or ListEvents), flushed,
 * and never a reply read. Prints "sent TOTAL" and holds the connections
 * until stdin closes.
 *
 *     unread-client CONNS N Register COMMAND
 *     unread-client CONNS N ListEvents
 *
 * Built by run-system.sh against the host's libsystemd (the guest has the
 * same bookworm library).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

int main(int argc, char *argv[]) {
        sd_bus **conns;
        unsigned n_conns, n, sent = 0;
        const char *method;
        char buf[64];
        int r;

        if (argc < 4 || (strcmp(argv[3], "Register") == 0 && argc < 5)) {
                fprintf(stderr, "usage: unread-client CONNS N Register COMMAND | CONNS N ListEvents\n");
                return 2;
        }
        n_conns = (unsigned) strtoul(argv[1], NULL, 10);
        n = (unsigned) strtoul(argv[2], NULL, 10);
        method = argv[3];
        conns = calloc(n_conns, sizeof(*conns));
        if (!conns)
                return 1;
        for (unsigned c = 0; c < n_conns; c++) {
                r = sd_bus_open_system(&conns[c]);
                if (r < 0) {
                        fprintf(stderr, "unread-client: cannot connect: %s\n", strerror(-r));
                        return 1;
                }
                for (unsigned i = 0; i < n; i++) {
                        sd_bus_message *m = NULL;

                        r = sd_bus_message_new_method_call(conns[c], &m, "org.uebroker1", "/org/uebroker1",
                                                           "org.uebroker1.Broker", method);
                        if (r >= 0 && strcmp(method, "Register") == 0)
                                r = sd_bus_message_append(m, "s", argv[4]);
                        if (r >= 0)
                                r = sd_bus_send(conns[c], m, NULL);
                        sd_bus_message_unref(m);
                        if (r < 0) {
                                fprintf(stderr, "unread-client: cannot send: %s\n", strerror(-r));
                                break;
                        }
                        sent++;
                }
                r = sd_bus_flush(conns[c]);
                if (r < 0)
                        fprintf(stderr, "unread-client: cannot flush: %s\n", strerror(-r));
        }
        printf("sent %u\n", sent);
        fflush(stdout);
        while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
                ;
        for (unsigned c = 0; c < n_conns; c++)
                sd_bus_close_unref(conns[c]);
        free(conns);
        return 0;
}
