/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl: the command-line tool for people and scripts. Options go before
 * or after the command, as with systemctl and busctl; "uebctl COMMAND
 * --help" describes one command. */
#include "uebctl.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"

static const struct uebctl_command commands[] = {
        { "list", "", "list the broker's events with owner, registrations, state",
          "Prints one line per event: NAME, UID, OWNER (the uid's user name, or - when\n"
          "the user database has none), REGS (registrations), ENABLED (someone records\n"
          "or traces it) and FIELDS. With --json, an array of objects with the keys\n"
          "name, fields, owner_uid, owner (null without a user name), registrations and\n"
          "enabled.\n",
          UEBCTL_OPT_JSON | UEBCTL_OPT_LEGEND | UEBCTL_OPT_PAGER, uebctl_list },
        { "status", "[NAME...]", "the status text, or the state of the named events",
          "Without names: the broker's status text (one line per event, \"INDEX:NAME\",\n"
          "\"# Used by ...\" while someone listens, then Active:, Busy: and Max:, the\n"
          "status page's size as user_events defines it). With names: each event's\n"
          "fields, owner (user name and uid), registrations and whether it is enabled.\n"
          "Max: is the size of the status page in bytes, 4096, one byte per event, as\n"
          "the original user_events interface prints it. How many events fit is the\n"
          "broker's MaxEvents property (at most 4095: index 0 is never handed out;\n"
          "fewer when Events= in uebrokerd.conf is lower):\n"
          "  busctl get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker MaxEvents\n",
          UEBCTL_OPT_JSON | UEBCTL_OPT_PAGER, uebctl_status },
        { "record", "[-n N] [-o PATH] [--provider=NAME [--level=N] [--keyword=MASK]] [PATTERN...]",
          "print records of events as they arrive, decoded",
          "PATTERN is an event name or a shell pattern (fnmatch: * ? [...]) and also\n"
          "matches events registered after the recording started. One line per record:\n"
          "  [received TIME uid U pid P] NAME: FIELD=VALUE...\n"
          "TIME (UTC) is when the broker received the record, not when it was written;\n"
          "uid and pid are the writer's, as the kernel reported them. Strings come from\n"
          "the writer and are escaped: \\\\ for a backslash, \\xNN for control bytes\n"
          "(below 0x20, 0x7f) and for each byte that is not valid UTF-8 (NN >= 80),\n"
          "\\u{NN} for C1 controls (U+0080..U+009F) and \\u{NNNN} for bidi controls\n"
          "(U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069). With --json the\n"
          "same characters are \\uNNNN escapes and each invalid byte NN is \\udcNN\n"
          "(U+DC80 + byte, as Python's surrogateescape); the object's time_source is\n"
          "\"received\" (\"written\" from the kernel's trace). Other UTF-8 is printed as\n"
          "is. Ends on SIGINT or SIGTERM, when the broker closes the stream, or after N\n"
          "records (-n N).\n"
          "With -o DIR the records go to a CTF trace in the directory DIR instead (for\n"
          "babeltrace2 and Trace Compass: babeltrace2 DIR): a 1 GHz clock counting from\n"
          "the epoch, each event with the context { pid, uid } and its fields.\n"
          "With -o FILE.dat (or --format=tracedat) they go to a trace.dat file, for\n"
          "trace-cmd report FILE.dat and KernelShark: one CPU, the records' pages\n"
          "written in time order when the recording ends, clock mono with the date\n"
          "offset, so trace-cmd report shows the same UTC seconds as this command;\n"
          "records lost on the way are marked on the next page (trace-cmd report:\n"
          "\"CPU:0 [N EVENTS DROPPED]\").\n"
          "EventHeader events (OpenTelemetry's user_events, tracepoints named\n"
          "PROVIDER_L<level>K<keyword>...) are filtered as EventHeader sessions do:\n"
          "--provider=NAME (repeatable) records that provider's events, now and\n"
          "registered later; --level=N only levels 1..N (1 critical .. 5 verbose),\n"
          "asked of the broker by pattern, so higher levels stay disabled in the\n"
          "writers; --keyword=MASK only events with any bit of MASK, --keyword-all=MASK\n"
          "with every bit of it (0x hex or decimal), applied to the records received.\n"
          "With any of them, records of events not of the EventHeader form are not\n"
          "shown.\n",
          UEBCTL_OPT_JSON | UEBCTL_OPT_COUNT | UEBCTL_OPT_OUTPUT | UEBCTL_OPT_FORMAT | UEBCTL_OPT_FILTER,
          uebctl_record },
        { "emit", "'COMMAND' FIELD=VALUE...", "register an event and write one record if enabled",
          "Registers the event COMMAND (NAME followed by its fields, as Register takes\n"
          "it) and, when someone listens, writes one record with the given values.\n"
          "Fields not given are zero (strings empty). With nobody listening it writes\n"
          "nothing and says \"NAME: not enabled, nothing written\": start the recorder\n"
          "first (uebctl record NAME, or a pattern before the event exists).\n",
          0, uebctl_emit },
        { "delete", "NAME...", "delete events nobody holds or listens to",
          "Deletes each named event; asks polkit, which may ask for a password unless\n"
          "--no-ask-password is given or stdin is not a terminal.\n",
          UEBCTL_OPT_ASK, uebctl_delete },
        { "format", "'COMMAND'", "print the tracefs format file an event would have",
          "Needs no broker: prints what events/user_events/NAME/format would show.\n",
          0, uebctl_format },
};

static const struct {
        unsigned bit;
        const char *name;
} option_names[] = {
        { UEBCTL_OPT_JSON, "--json" },
        { UEBCTL_OPT_LEGEND, "--no-legend" },
        { UEBCTL_OPT_PAGER, "--no-pager" },
        { UEBCTL_OPT_COUNT, "--count" },
        { UEBCTL_OPT_ASK, "--no-ask-password" },
        { UEBCTL_OPT_OUTPUT, "--output" },
        { UEBCTL_OPT_FORMAT, "--format" },
        { UEBCTL_OPT_FILTER, "--provider, --level, --keyword or --keyword-all" },
};

static void usage(FILE *out) {
        fprintf(out,
                "Usage: uebctl [OPTIONS] COMMAND [ARGS...] [OPTIONS]\n"
                "Publish and inspect user_events tracepoints through uebrokerd.\n\n"
                "Options (before or after the command):\n"
                "  -h --help             show this help, or the command's with a command\n"
                "     --version          show the version\n"
                "     --system           talk to the broker on the system bus (the default)\n"
                "     --session          talk to the broker on the session bus\n"
                "     --bus-address=ADDR talk to the broker on the bus at ADDR\n"
                "  -j                    JSON: pretty on a terminal, short otherwise\n"
                "     --json=MODE        JSON: pretty, short (one line each) or off\n"
                "     --no-legend        no column headers and no summary line\n"
                "     --no-pager         do not pipe the output into a pager\n"
                "  -n --count=N          record: stop after N records\n"
                "  -o --output=PATH      record: write a CTF trace in the directory PATH, or\n"
                "                        a trace.dat file when PATH ends in .dat\n"
                "     --format=FORMAT    record -o: ctf or tracedat, whatever the name\n"
                "     --no-ask-password  delete: polkit may not ask for a password\n"
                "Without a bus option, $UEBROKER_BUS_ADDRESS is used when set. On a terminal\n"
                "list and status page through $UEBCTL_PAGER, $PAGER or less.\n\n"
                "Commands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(out, "  %-7s %-26s %s\n", commands[i].name, commands[i].args, commands[i].help);
        fprintf(out,
                "\nSee \"uebctl COMMAND --help\" for one command.\n"
                "\nExamples:\n"
                "  uebctl record 'hello*'         then, in another shell:\n"
                "  uebctl emit 'hello u32 a; char[8] b' a=1 b=hi\n"
                "  the recorder prints: [received 2026-12-03T10:00:00.000001Z uid 1000 pid 884] hello: a=1 b=hi\n");
}

static void command_usage(const struct uebctl_command *c, FILE *out) {
        fprintf(out, "Usage: uebctl %s %s\n%s.\n\n%s", c->name, c->args, c->help, c->details);
        if (c->accepts) {
                fprintf(out, "\nOptions besides the global ones (uebctl --help):");
                for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
                        if (c->accepts & option_names[i].bit)
                                fprintf(out, " %s", option_names[i].name);
                fputc('\n', out);
        }
}

static int parse_json_mode(const char *arg, enum uebctl_json *ret) {
        if (!arg)       /* -j, --json: as busctl -j */
                *ret = isatty(STDOUT_FILENO) ? UEBCTL_JSON_PRETTY : UEBCTL_JSON_SHORT;
        else if (strcmp(arg, "pretty") == 0)
                *ret = UEBCTL_JSON_PRETTY;
        else if (strcmp(arg, "short") == 0)
                *ret = UEBCTL_JSON_SHORT;
        else if (strcmp(arg, "off") == 0)
                *ret = UEBCTL_JSON_OFF;
        else
                return -EINVAL;
        return 0;
}

static const struct uebctl_command *find_command(const char *name) {
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(name, commands[i].name) == 0)
                        return &commands[i];
        return NULL;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "system", no_argument, NULL, 'S' },
                { "session", no_argument, NULL, 'U' },
                { "bus-address", required_argument, NULL, 'A' },
                { "json", optional_argument, NULL, 'J' },
                { "no-legend", no_argument, NULL, 'L' },
                { "no-pager", no_argument, NULL, 'P' },
                { "count", required_argument, NULL, 'n' },
                { "no-ask-password", no_argument, NULL, 'K' },
                { "output", required_argument, NULL, 'o' },
                { "format", required_argument, NULL, 'F' },
                { "provider", required_argument, NULL, 'R' },
                { "level", required_argument, NULL, 'l' },
                { "keyword", required_argument, NULL, 'k' },
                { "keyword-all", required_argument, NULL, 'a' },
                {},
        };
        const struct uebctl_command *command;
        unsigned given = 0;
        bool help = false;
        char *end;
        int c, status;

        /* Permuting getopt: options anywhere; "--" ends them. */
        while ((c = getopt_long(argc, argv, "hjn:o:", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        help = true;
                        break;
                case 'V':
                        printf("uebctl %s\n", PACKAGE_VERSION);
                        return EXIT_SUCCESS;
                case 'S':
                        uebctl_bus_kind = UEB_BUS_SYSTEM;
                        uebctl_bus_address = NULL;
                        break;
                case 'U':
                        uebctl_bus_kind = UEB_BUS_SESSION;
                        uebctl_bus_address = NULL;
                        break;
                case 'A':
                        uebctl_bus_kind = UEB_BUS_ADDRESS;
                        uebctl_bus_address = optarg;
                        break;
                case 'j':
                case 'J':
                        if (parse_json_mode(c == 'J' ? optarg : NULL, &uebctl_opts.json) < 0) {
                                fprintf(stderr, "error: --json takes pretty, short or off, not '%s'\n", optarg);
                                return 2;
                        }
                        given |= UEBCTL_OPT_JSON;
                        break;
                case 'L':
                        uebctl_opts.legend = false;
                        given |= UEBCTL_OPT_LEGEND;
                        break;
                case 'P':
                        uebctl_opts.pager = false;
                        given |= UEBCTL_OPT_PAGER;
                        break;
                case 'n':
                        errno = 0;
                        uebctl_opts.count = strtoull(optarg, &end, 10);
                        if (errno || *end || !*optarg || *optarg == '-' || uebctl_opts.count == 0) {
                                fprintf(stderr, "error: --count takes a positive number, not '%s'\n", optarg);
                                return 2;
                        }
                        given |= UEBCTL_OPT_COUNT;
                        break;
                case 'K':
                        uebctl_opts.ask_password = false;
                        given |= UEBCTL_OPT_ASK;
                        break;
                case 'o':
                        if (!*optarg) {
                                fprintf(stderr, "error: --output takes a directory or a FILE.dat\n");
                                return 2;
                        }
                        uebctl_opts.output = optarg;
                        given |= UEBCTL_OPT_OUTPUT;
                        break;
                case 'F':
                        if (strcmp(optarg, "ctf") == 0)
                                uebctl_opts.format = UEBCTL_FORMAT_CTF;
                        else if (strcmp(optarg, "tracedat") == 0)
                                uebctl_opts.format = UEBCTL_FORMAT_TRACEDAT;
                        else {
                                fprintf(stderr, "error: --format takes ctf or tracedat, not '%s'\n", optarg);
                                return 2;
                        }
                        given |= UEBCTL_OPT_FORMAT;
                        break;
                case 'R':
                        if (!uebctl_filter_valid_provider(optarg)) {
                                fprintf(stderr, "error: --provider takes an EventHeader provider name "
                                                "(1 to 200 of A-Z a-z 0-9 _), not '%s'\n", optarg);
                                return 2;
                        }
                        if (uebctl_opts.filter.n_providers >= UEBCTL_PROVIDERS_MAX) {
                                fprintf(stderr, "error: at most %u --provider\n", UEBCTL_PROVIDERS_MAX);
                                return 2;
                        }
                        uebctl_opts.filter.providers[uebctl_opts.filter.n_providers++] = optarg;
                        given |= UEBCTL_OPT_FILTER;
                        break;
                case 'l': {
                        unsigned long level;

                        errno = 0;
                        level = strtoul(optarg, &end, 10);
                        if (errno || *end || !*optarg || *optarg == '-' || level < 1 || level > 255) {
                                fprintf(stderr, "error: --level takes 1 to 255 (1 critical .. 5 verbose), not '%s'\n",
                                        optarg);
                                return 2;
                        }
                        uebctl_opts.filter.level = (unsigned) level;
                        given |= UEBCTL_OPT_FILTER;
                        break;
                }
                case 'k':
                case 'a': {
                        uint64_t mask;

                        if (uebctl_filter_parse_keyword(optarg, &mask) < 0) {
                                fprintf(stderr, "error: --%s takes a non-zero mask, 0x hex or decimal, not '%s'\n",
                                        c == 'k' ? "keyword" : "keyword-all", optarg);
                                return 2;
                        }
                        if (c == 'k') {
                                uebctl_opts.filter.keyword_any = mask;
                                uebctl_opts.filter.has_keyword_any = true;
                        } else {
                                uebctl_opts.filter.keyword_all = mask;
                                uebctl_opts.filter.has_keyword_all = true;
                        }
                        given |= UEBCTL_OPT_FILTER;
                        break;
                }
                default:
                        fprintf(stderr, "See uebctl --help.\n");
                        return 2;
                }

        if (optind >= argc) {
                usage(help ? stdout : stderr);
                return help ? EXIT_SUCCESS : 2;
        }
        command = find_command(argv[optind]);
        if (!command) {
                fprintf(stderr, "error: unknown command '%s' (see uebctl --help)\n", argv[optind]);
                return 2;
        }
        if (help) {
                command_usage(command, stdout);
                return EXIT_SUCCESS;
        }
        for (size_t i = 0; i < sizeof(option_names) / sizeof(option_names[0]); i++)
                if ((given & option_names[i].bit) && !(command->accepts & option_names[i].bit)) {
                        fprintf(stderr, "error: %s does nothing for uebctl %s (see uebctl %s --help)\n",
                                option_names[i].name, command->name, command->name);
                        return 2;
                }

        status = command->run(argc - optind, argv + optind);
        uebctl_pager_close();
        return status;
}
