/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * A tiny service exporting methods guarded by daemon/bus/polkit.c, so the
 * polkit path can be tested on a private bus without the broker:
 *
 *     polkit-test-service --system | --bus-address=ADDR
 *
 * Object /org/uebroker1/PolkitTest, interface org.uebroker1.PolkitTest:
 *     Check(s action, b interactive) -> (s)  "authorized ACTION" when polkit allows
 *     Abandon(s action) -> ()                asks polkit, then fails the re-run
 *                                            without taking the answer
 *     Queries() -> (u)                       polkit_registry_n_queries()
 *     Orphaned() -> (u)                      polkit_registry_n_orphaned()
 * Prints "ready" on stdout once the name is owned; exits on SIGTERM.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "bus-util.h"
#include "cleanup.h"
#include "bus-caller.h"
#include "bus-departures.h"
#include "log.h"
#include "polkit.h"
#include "user-charges.h"

#define SERVICE_NAME "org.uebroker1.PolkitTest"
#define SERVICE_OBJECT "/org/uebroker1/PolkitTest"
/* What test-polkit.py expects of one uid's waiting checks. */
#define POLKIT_TEST_MAX_PER_UID 16u

struct service {
        struct user_charges charges;    /* the waiting checks per uid, as the broker's */
        struct polkit_registry *polkit;
        sd_bus_slot *departures;
        sd_bus_message *abandoned;      /* the Abandon call seen once already */
};

/* As the broker does: the bus's credentials of the caller, then polkit. */
static int check(struct service *svc, sd_bus_message *m, const char *action, bool interactive, sd_bus_error *error) {
        uid_t uid;
        pid_t pid;
        int r;

        r = bus_caller_identify(m, &uid, &pid);
        if (r < 0)
                return sd_bus_error_set_errnof(error, r, "Cannot identify the caller: %m");
        return polkit_check(svc->polkit, m, action, interactive, uid, pid, error);
}

static void on_departure(const char *unique_name, void *userdata) {
        struct service *svc = userdata;

        polkit_registry_forget_sender(svc->polkit, unique_name);
}

static int method_check(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct service *svc = userdata;
        const char *action;
        int interactive, r;

        r = sd_bus_message_read(m, "sb", &action, &interactive);
        if (r < 0)
                return r;
        r = check(svc, m, action, interactive, error);
        if (r < 0)
                return r;
        if (r == 0)
                return 1;
        return sd_bus_reply_method_return(m, "s", "authorized");
}

static int method_abandon(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct service *svc = userdata;
        const char *action;
        int r;

        r = sd_bus_message_read(m, "s", &action);
        if (r < 0)
                return r;
        if (svc->abandoned == m) {
                /* The re-run: fail as a handler would whose state changed,
                 * leaving polkit's answer unclaimed. */
                svc->abandoned = sd_bus_message_unref(svc->abandoned);
                return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, "abandoned");
        }
        r = check(svc, m, action, false, error);
        if (r < 0)
                return r;
        if (r > 0)
                return sd_bus_error_set(error, SD_BUS_ERROR_FAILED, "authorized without asking polkit");
        sd_bus_message_unref(svc->abandoned);
        svc->abandoned = sd_bus_message_ref(m);
        return 1;
}

static int method_queries(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct service *svc = userdata;

        return sd_bus_reply_method_return(m, "u", (uint32_t) polkit_registry_n_queries(svc->polkit));
}

static int method_orphaned(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        struct service *svc = userdata;

        return sd_bus_reply_method_return(m, "u", (uint32_t) polkit_registry_n_orphaned(svc->polkit));
}

static const sd_bus_vtable service_vtable[] = {
        SD_BUS_VTABLE_START(0),
        SD_BUS_METHOD("Check", "sb", "s", method_check, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Abandon", "s", "", method_abandon, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Queries", "", "u", method_queries, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_METHOD("Orphaned", "", "u", method_orphaned, SD_BUS_VTABLE_UNPRIVILEGED),
        SD_BUS_VTABLE_END,
};

static int open_bus(const char *address, sd_bus **ret) {
        _cleanup_(sd_bus_unrefp) sd_bus *bus = NULL;
        int r;

        if (!address)
                return sd_bus_open_system(ret);
        r = bus_open_address(address, &bus);
        if (r < 0)
                return r;
        *ret = bus;
        bus = NULL;
        return 0;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "system", no_argument, NULL, 's' },
                { "bus-address", required_argument, NULL, 'a' },
                {}
        };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        struct service svc = { 0 };
        const char *address = NULL;
        sigset_t mask;
        int c, r;

        log_setup("polkit-test-service");
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 's':
                        address = NULL;
                        break;
                case 'a':
                        address = optarg;
                        break;
                default:
                        return EXIT_FAILURE;
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
        if (r < 0)
                return log_error_errno(r, "Cannot set up the event loop: %m"), EXIT_FAILURE;

        r = open_bus(address, &bus);
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the bus: %m"), EXIT_FAILURE;
        r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Cannot attach the bus: %m"), EXIT_FAILURE;

        user_charges_init(&svc.charges, &(struct charge_bounds) {
                .kind[CHARGE_AUTHORIZATIONS] = { .pool = POLKIT_MAX_PENDING, .share = POLKIT_TEST_MAX_PER_UID },
        });
        r = polkit_registry_new(bus, !address, &svc.charges, &svc.polkit);
        if (r < 0)
                return log_error_errno(r, "Cannot set up polkit checks: %m"), EXIT_FAILURE;
        r = bus_departures_watch(bus, on_departure, &svc, &svc.departures);
        if (r < 0)
                return log_error_errno(r, "Cannot watch for callers leaving: %m"), EXIT_FAILURE;

        r = sd_bus_add_object_vtable(bus, NULL, SERVICE_OBJECT, SERVICE_NAME, service_vtable, &svc);
        if (r >= 0)
                r = sd_bus_request_name(bus, SERVICE_NAME, 0);
        if (r < 0) {
                log_error_errno(r, "Cannot set up the service: %m");
                goto finish;
        }
        printf("ready\n");
        fflush(stdout);

        r = sd_event_loop(event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");

finish:
        sd_bus_message_unref(svc.abandoned);
        sd_bus_slot_unref(svc.departures);
        polkit_registry_free(svc.polkit);
        user_charges_done(&svc.charges);
        return r < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
