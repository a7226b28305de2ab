/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* uebrokerd: registers user_events on behalf of unprivileged clients over
 * D-Bus. Options, the event loop and the bus connection live here; the bus
 * object is broker.c. */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "bus-util.h"
#include "broker.h"
#include "cleanup.h"
#include "time-util.h"
#include "broker-config.h"
#include "config.h"
#include "log.h"
#include "macro.h"

enum bus_kind { BUS_SYSTEM, BUS_SESSION, BUS_ADDRESS };

struct options {
        enum bus_kind bus_kind;
        const char *bus_address;
        const char *provider;
        const char *config_path;        /* NULL: the default path, which may be missing */
        const char *introspect_path;
        const char *state_dir;          /* NULL: the default for the bus kind */
        const char *tracefs;            /* NULL: the upstream provider looks for it */
        bool debug;
};

/* Where names and owners are kept across restarts on the system bus
 * (RuntimeDirectory=uebroker, preserved by the unit). */
#define BROKER_STATE_DIR_DEFAULT "/run/uebroker"

static void help(void) {
        printf("uebrokerd [OPTIONS...]\n\n"
               "Registers user_events tracepoints for unprivileged programs over D-Bus\n"
               "(bus name " BROKER_BUS_NAME ").\n\n"
               "  -h --help                 Show this help\n"
               "     --version              Show the version\n"
               "     --system               Serve on the system bus (default)\n"
               "     --session              Serve on the session bus\n"
               "     --bus-address=ADDRESS  Serve on the bus at ADDRESS\n"
               "     --provider=NAME        One of: %s (default auto: the first\n"
               "                            usable one in that order)\n"
               "     --tracefs=PATH         tracefs mount point for the upstream provider\n"
               "                            (default /sys/kernel/tracing, /sys/kernel/debug/tracing,\n"
               "                            else the tracefs line of /proc/mounts)\n"
               "     --config=FILE          Read limits and reservations from FILE and FILE.d/*.conf\n"
               "                            (default %s and the drop-ins\n"
               "                            uebrokerd.conf.d/*.conf in its directory, /run/uebroker,\n"
               "                            /usr/local/lib/uebroker and /usr/lib/uebroker);\n"
               "                            SIGHUP rereads them\n"
               "     --state-dir=DIR        Keep events and their owners across restarts in DIR\n"
               "                            (default " BROKER_STATE_DIR_DEFAULT " on the system bus,\n"
               "                            none otherwise; \"\" for none)\n"
               "     --bus-introspect=PATH  Write the introspection XML of %s to PATH\n"
               "                            (\"-\" for stdout) and exit\n"
               "     --debug                Log at debug level\n",
               provider_names(), BROKER_CONFIG_DEFAULT_PATH, BROKER_OBJECT_PATH);
}

/* 1: run; 0: exit successfully; negative: error. */
static int parse_argv(int argc, char *argv[], struct options *o) {
        enum {
                ARG_VERSION = 0x100,
                ARG_SYSTEM,
                ARG_SESSION,
                ARG_BUS_ADDRESS,
                ARG_PROVIDER,
                ARG_CONFIG,
                ARG_BUS_INTROSPECT,
                ARG_STATE_DIR,
                ARG_TRACEFS,
                ARG_DEBUG,
        };
        static const struct option long_options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, ARG_VERSION },
                { "system", no_argument, NULL, ARG_SYSTEM },
                { "session", no_argument, NULL, ARG_SESSION },
                { "bus-address", required_argument, NULL, ARG_BUS_ADDRESS },
                { "provider", required_argument, NULL, ARG_PROVIDER },
                { "config", required_argument, NULL, ARG_CONFIG },
                { "bus-introspect", required_argument, NULL, ARG_BUS_INTROSPECT },
                { "state-dir", required_argument, NULL, ARG_STATE_DIR },
                { "tracefs", required_argument, NULL, ARG_TRACEFS },
                { "debug", no_argument, NULL, ARG_DEBUG },
                {}
        };
        int c;

        while ((c = getopt_long(argc, argv, "h", long_options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help();
                        return 0;
                case ARG_VERSION:
                        printf("uebrokerd %s\n", PACKAGE_VERSION);
                        return 0;
                case ARG_SYSTEM:
                        o->bus_kind = BUS_SYSTEM;
                        break;
                case ARG_SESSION:
                        o->bus_kind = BUS_SESSION;
                        break;
                case ARG_BUS_ADDRESS:
                        o->bus_kind = BUS_ADDRESS;
                        o->bus_address = optarg;
                        break;
                case ARG_PROVIDER:
                        if (strcmp(optarg, "auto") != 0 && !provider_find(optarg)) {
                                log_error("Unknown provider '%s'; known: %s.", optarg, provider_names());
                                return -EINVAL;
                        }
                        o->provider = optarg;
                        break;
                case ARG_CONFIG:
                        o->config_path = optarg;
                        break;
                case ARG_BUS_INTROSPECT:
                        o->introspect_path = optarg;
                        break;
                case ARG_STATE_DIR:
                        o->state_dir = optarg;
                        break;
                case ARG_TRACEFS:
                        if (!*optarg) {
                                log_error("--tracefs= needs a path.");
                                return -EINVAL;
                        }
                        o->tracefs = optarg;
                        break;
                case ARG_DEBUG:
                        o->debug = true;
                        break;
                default:        /* '?': getopt_long() has said what is wrong */
                        return -EINVAL;
                }

        if (optind < argc) {
                log_error("Unexpected argument '%s'.", argv[optind]);
                return -EINVAL;
        }
        return 1;
}

static int write_introspection(const char *path) {
        _cleanup_free_ char *xml = NULL;
        FILE *f;
        int r;

        r = broker_introspect(&xml);
        if (r < 0)
                return log_error_errno(r, "Cannot generate the introspection data: %m");

        if (strcmp(path, "-") == 0)
                f = stdout;
        else {
                f = fopen(path, "we");
                if (!f)
                        return log_error_errno(errno, "Cannot open %s: %m", path);
        }
        fputs(xml, f);
        if (f == stdout)
                r = fflush(f) == 0 ? 0 : -errno;
        else
                r = fclose(f) == 0 ? 0 : -errno;
        if (r < 0)
                return log_error_errno(r, "Cannot write %s: %m", path);
        return 0;
}

/* The drop-in directories: FILE.d for --config=FILE, else systemd's search
 * path (broker-config.h). */
static const char *const *config_dropin_dirs(const struct options *o) {
        return o->config_path ? NULL : broker_config_default_dropin_dirs;
}

/* Loads the configuration into @config. Without --config, no file at all
 * means the defaults. On error @config is untouched and *ret_message says
 * why. */
static int load_config(const struct options *o, struct broker_config *config, char **ret_message) {
        _cleanup_free_ char *message = NULL;
        const char *path = o->config_path ?: BROKER_CONFIG_DEFAULT_PATH;
        const struct broker_limits *l = &config->limits;
        int r;

        r = broker_config_load(path, config_dropin_dirs(o), config, &message);
        if (r == -ENOENT && !o->config_path) {
                log_debug("No configuration file %s nor drop-ins, using the default limits.", path);
                broker_config_done(config);
                broker_config_init_default(config);
                return 0;
        }
        if (r == -ENOENT)
                return asprintf(ret_message, "configuration file %s does not exist", path) < 0 ? -ENOMEM : r;
        if (r < 0) {
                *ret_message = message ?: strdup(path);
                message = NULL;
                return r;
        }
        log_debug("Limits from %s: EventsPerClient=%u ClientsPerUser=%u Events=%u CommandLength=%u EventsPerUser=%u "
                  "Clients=%u AuthorizationsPerUser=%u UnusedEventExpirySec=%u OutgoingQueue=%u RingMemoryKiB=%u "
                  "RingMemoryPerUserKiB=%u RecordStreams=%u RecordStreamsPerUser=%u (0: a quarter) "
                  "NewEventsPerUserPerMinute=%u; %zu reservations",
                  path, l->events_per_client, l->clients_per_user, l->events, l->command_length, l->events_per_user,
                  l->clients, l->authorizations_per_user, l->unused_event_expiry_sec, l->outgoing_queue,
                  l->ring_memory_kib, l->ring_memory_per_user_kib, l->record_streams, l->record_streams_per_user,
                  l->new_events_per_user_per_minute, config->reservations.n);
        return 0;
}

/* What SIGHUP needs. */
struct reload_context {
        const struct options *options;
        struct broker_config *config;
        struct broker *broker;
};

/* systemctl reload (ExecReload= sends SIGHUP): tell the service manager,
 * reread the configuration and apply it, or keep the one in force and log
 * why; then ready again either way (systemd 252's reload protocol for
 * Type=notify: RELOADING=1 with MONOTONIC_USEC, then READY=1). */
static int on_reload(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        struct reload_context *ctx = ASSERT_PTR(userdata);
        _cleanup_free_ char *message = NULL;
        int r;

        (void) sd_notifyf(false, "RELOADING=1\nSTATUS=Reloading the configuration\nMONOTONIC_USEC=%" PRIu64,
                          monotonic_usec());

        r = load_config(ctx->options, ctx->config, &message);
        if (r < 0)
                log_error_errno(r, "Reloading failed, keeping the configuration in force: %s",
                                message ?: "out of memory");
        else {
                broker_reconfigure(ctx->broker, &ctx->config->limits, &ctx->config->origins,
                                   &ctx->config->reservations);
                log_info("Reloaded the configuration: new limits and reservations apply to calls from now on.");
        }
        (void) sd_notify(false, "READY=1\nSTATUS=Serving " BROKER_BUS_NAME);
        return 0;
}

static int connect_bus(const struct options *o, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        switch (o->bus_kind) {
        case BUS_SYSTEM:
                r = sd_bus_open_system_with_description(&bus, "uebrokerd");
                break;
        case BUS_SESSION:
                r = sd_bus_open_user_with_description(&bus, "uebrokerd");
                break;
        case BUS_ADDRESS:
                r = bus_open_address(o->bus_address, &bus);
                if (r >= 0)
                        (void) sd_bus_set_description(bus, "uebrokerd");
                break;
        default:
                r = -EINVAL;
        }
        if (r < 0)
                return log_error_errno(r, "Cannot connect to the %s bus%s%s: %m",
                                       o->bus_kind == BUS_SYSTEM ? "system" :
                                       o->bus_kind == BUS_SESSION ? "session" : "given",
                                       o->bus_address ? " at " : "", o->bus_address ?: "");

        /* The broker passes descriptors in every Register reply. */
        if (sd_bus_can_send(bus, SD_BUS_TYPE_UNIX_FD) <= 0)
                return log_error_errno(-EOPNOTSUPP, "The bus connection cannot carry file descriptors.");

        *ret = TAKE_PTR(bus);
        return 0;
}

/* Sessions hold descriptors: take the hard limit (the unit sets
 * LimitNOFILE=); broker_new() sizes Clients= against what we get. */
static void raise_fd_limit(void) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= rl.rlim_max)
                return;
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
                log_warning_errno(errno, "Cannot raise the fd limit to %llu: %m", (unsigned long long) rl.rlim_max);
}

/* The state directory in use, created if missing; NULL for none. */
static const char *state_dir(const struct options *o) {
        const char *dir = o->state_dir ?: (o->bus_kind == BUS_SYSTEM ? BROKER_STATE_DIR_DEFAULT : NULL);

        if (!dir || !*dir)
                return NULL;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                log_warning_errno(errno, "Cannot create %s, event owners will not survive a restart: %m", dir);
                return NULL;
        }
        return dir;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        log_info("Received %s, exiting.", strsignal((int) si->ssi_signo));
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* The event loop, with SIGTERM and SIGINT ending it (SIGHUP is the
 * broker's, once it exists) and the service manager's watchdog. */
static int event_loop_new(sd_event **ret) {
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        sigset_t mask;
        int r;

        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        if (sigprocmask(SIG_BLOCK, &mask, NULL) < 0)
                return log_error_errno(errno, "Cannot block signals: %m");

        r = sd_event_default(&event);
        if (r < 0)
                return log_error_errno(r, "Cannot create the event loop: %m");
        r = sd_event_add_signal(event, NULL, SIGTERM, on_signal, NULL);
        if (r >= 0)
                r = sd_event_add_signal(event, NULL, SIGINT, on_signal, NULL);
        if (r < 0)
                return log_error_errno(r, "Cannot watch signals: %m");
        /* Pings the service manager if it asked for it (WATCHDOG_USEC). */
        r = sd_event_set_watchdog(event, true);
        if (r < 0)
                log_warning_errno(r, "Cannot enable the watchdog, continuing: %m");
        *ret = TAKE_PTR(event);
        return 0;
}

/* The bus of @o, attached to @event; the daemon exits when it goes. */
static int bus_attach(const struct options *o, sd_event *event, sd_bus **ret) {
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        int r;

        r = connect_bus(o, &bus);
        if (r < 0)
                return r;
        r = sd_bus_attach_event(bus, event, SD_EVENT_PRIORITY_NORMAL);
        if (r < 0)
                return log_error_errno(r, "Cannot attach the bus to the event loop: %m");
        /* The broker is useless without its bus: leave when it goes. */
        r = sd_bus_set_exit_on_disconnect(bus, true);
        if (r < 0)
                return log_error_errno(r, "Cannot set exit-on-disconnect: %m");
        *ret = TAKE_PTR(bus);
        return 0;
}

/* Takes the bus name, restores the previous broker's table and serves
 * until a signal or the bus ends the loop. */
static int serve(struct broker *broker, sd_bus *bus, sd_event *event, const struct provider_ops *ops) {
        int r;

        r = sd_bus_request_name(bus, BROKER_BUS_NAME, 0);
        if (r == -EEXIST)
                return log_error_errno(r, "The bus name " BROKER_BUS_NAME " is already taken: another broker "
                                          "runs on this bus.");
        if (r < 0)
                return log_error_errno(r, "Cannot acquire the bus name " BROKER_BUS_NAME ": %m");

        /* Not before: the previous broker saved its table before each reply
         * that changed it, and held the name until it stopped serving. No
         * call is served before the loop runs. */
        broker_restore(broker);
        log_info("uebrokerd %s serving " BROKER_BUS_NAME " with the %s provider.", PACKAGE_VERSION, ops->name);
        (void) sd_notify(false, "READY=1\nSTATUS=Serving " BROKER_BUS_NAME);

        r = sd_event_loop(event);
        if (r < 0)
                log_error_errno(r, "Event loop failed: %m");
        else if (r > 0)
                /* Only the bus going away exits with a non-zero code. */
                r = log_error_errno(-ECONNRESET, "Lost the bus connection.");
        (void) sd_notify(false, "STOPPING=1");
        return r;
}

static int run(int argc, char *argv[]) {
        struct options o = { .bus_kind = BUS_SYSTEM, .provider = "auto" };
        _cleanup_(sd_event_unrefp) sd_event *event = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        const struct provider_ops *ops;
        struct provider_settings provider_settings;
        _cleanup_(broker_config_done) struct broker_config config = {};
        struct broker_settings settings;
        _cleanup_free_ char *config_message = NULL;
        struct broker *broker = NULL;
        struct reload_context reload;
        int r;

        log_setup("uebrokerd");
        r = parse_argv(argc, argv, &o);
        if (r <= 0)
                return r;
        if (o.debug)
                log_set_max_level(LOG_DEBUG);

        if (o.introspect_path)
                return write_introspection(o.introspect_path);

        broker_config_init_default(&config);
        r = load_config(&o, &config, &config_message);
        if (r < 0)
                return log_error_errno(r, "Bad configuration: %s", config_message ?: "out of memory");

        provider_settings = (struct provider_settings) { .tracefs = o.tracefs };
        if (strcmp(o.provider, "auto") == 0) {
                r = provider_choose_auto(&provider_settings, &ops);
                if (r < 0)
                        return r;
        } else
                ops = provider_find(o.provider);

        r = event_loop_new(&event);
        if (r < 0)
                return r;
        r = bus_attach(&o, event, &bus);
        if (r < 0)
                return r;

        raise_fd_limit();
        settings = (struct broker_settings) {
                .bus_is_system = o.bus_kind == BUS_SYSTEM,
                .limits = &config.limits,
                .reservations = &config.reservations,
                .limit_origins = &config.origins,
                .config_path = o.config_path,
                .state_dir = state_dir(&o),
                .provider = &provider_settings,
        };
        r = broker_new(event, bus, ops, &settings, &broker);
        if (r < 0)
                return r;

        reload = (struct reload_context) { .options = &o, .config = &config, .broker = broker };
        r = sd_event_add_signal(event, NULL, SIGHUP, on_reload, &reload);
        if (r < 0)
                log_error_errno(r, "Cannot watch SIGHUP: %m");
        else
                r = serve(broker, bus, event, ops);

        /* The name first: no call reaches a broker being freed. */
        (void) sd_bus_release_name(bus, BROKER_BUS_NAME);
        broker_free(broker);
        return r;
}

int main(int argc, char *argv[]) {
        return run(argc, argv) < 0 ? EXIT_FAILURE : EXIT_SUCCESS;
}
