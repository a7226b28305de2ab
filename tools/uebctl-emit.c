/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl emit 'COMMAND' field=value...: publishes one event from a shell
 * script, through libuebroker like any other program. */
#include "uebctl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "event-def.h"
#include "event-encode.h"

int uebctl_emit(int argc, char *argv[]) {
        _cleanup_(event_def_freep) struct event_def *ev = NULL;
        struct event_error error = { 0 };
        struct ueb_client *client = NULL;
        struct ueb_event *event = NULL;
        void *payload = NULL;
        size_t len = 0;
        int r, status = 1;

        if (argc < 2) {
                fprintf(stderr, "usage: uebctl emit 'NAME [type field; ...]' [FIELD=VALUE...]\n");
                return 2;
        }

        /* Check everything we can before talking to anyone. */
        r = event_def_parse(argv[1], 0, &ev, &error);
        if (r < 0) {
                fprintf(stderr, "error: %s\n", r == -EINVAL ? error.message : strerror(-r));
                return 1;
        }
        r = event_encode_payload(ev, argv + 2, (size_t) (argc - 2), &payload, &len, &error);
        if (r < 0) {
                fprintf(stderr, "error: %s\n", r == -EINVAL ? error.message : strerror(-r));
                return 1;
        }

        r = ueb_open_bus(&client, uebctl_bus_kind, uebctl_bus_address);
        if (r < 0) {
                fprintf(stderr, "error: cannot create a client: %s\n", strerror(-r));
                goto out;
        }
        /* 0 (pending) is a failure too: one record cannot wait for a broker. */
        r = ueb_register(client, argv[1], &event);
        if (r <= 0) {
                fprintf(stderr, "error: Register: %s\n",
                        *ueb_last_error(client) ? ueb_last_error(client) :
                        r < 0 ? strerror(-r) : "the broker is not reachable");
                goto out;
        }

        if (!ueb_enabled(event)) {
                printf("%s: not enabled, nothing written\n", ev->name);
                status = 0;
                goto out;
        }
        struct iovec iov = { payload, len };
        r = ueb_write(event, &iov, 1);
        if (r < 0) {
                fprintf(stderr, "error: %s: write failed: %s\n", ev->name, strerror(-r));
                goto out;
        }
        printf("%s: written (%zu bytes)\n", ev->name, len);
        status = 0;
out:
        ueb_unregister(event);
        ueb_close(client);
        free(payload);
        return fflush(stdout) == 0 ? status : 1;
}
