/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl: the command-line tool for people and scripts. */
#include "uebctl.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const struct uebctl_command commands[] = {
        { "list", "[--json]", "list the broker's events", uebctl_list },
        { "status", "", "print the status text (events and who listens)", uebctl_status },
        { "record", "[--json] [-n N] NAME...", "print records of events as they arrive, decoded", uebctl_record },
        { "emit", "'COMMAND' FIELD=VALUE...", "register an event and write one record if enabled", uebctl_emit },
        { "delete", "NAME...", "delete events nobody holds or listens to", uebctl_delete },
        { "format", "'COMMAND'", "print the tracefs format file an event would have", uebctl_format },
};

static void usage(FILE *out) {
        fprintf(out,
                "Usage: uebctl [OPTIONS] COMMAND [ARGS...]\n"
                "Publish and inspect user_events tracepoints through uebrokerd.\n\n"
                "Options (before the command):\n"
                "  -h --help             show this help\n"
                "     --version          show the version\n"
                "     --system           talk to the broker on the system bus (the default)\n"
                "     --session          talk to the broker on the session bus\n"
                "     --bus-address=ADDR talk to the broker on the bus at ADDR\n"
                "Without a bus option, $UEBROKER_BUS_ADDRESS is used when set.\n\n"
                "Commands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(out, "  %-7s %-26s %s\n", commands[i].name, commands[i].args, commands[i].help);
        fprintf(out,
                "\nrecord prints one line per record, \"[uid U pid P] NAME: FIELD=VALUE...\", with\n"
                "the writer's uid and pid as the kernel reported them. Strings come from\n"
                "the writer and are escaped: \\\\ for a backslash, \\xNN for control bytes\n"
                "(below 0x20, 0x7f) and for each byte that is not valid UTF-8 (NN >= 80),\n"
                "\\u{NN} for C1 controls (U+0080..U+009F) and \\u{NNNN} for bidi controls\n"
                "(U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069). With --json the\n"
                "same characters are \\uNNNN escapes and each invalid byte NN is \\udcNN\n"
                "(U+DC80 + byte, as Python's surrogateescape). Other UTF-8 is printed as is.\n"
                "\nstatus prints the status text of the original user_events_status file: one\n"
                "line per event (\"INDEX:NAME\", \" # Used by ...\" while someone listens), then\n"
                "Active (events), Busy (events someone listens to) and Max, the size of the\n"
                "status page in bytes (4096, one byte per event, as the original interface\n"
                "defines it). Index 0 is never handed out and the broker's Events= limit\n"
                "applies, so how many events fit is the MaxEvents property (at most 4095):\n"
                "  busctl get-property org.uebroker1 /org/uebroker1 org.uebroker1.Broker MaxEvents\n"
                "\nExamples:\n"
                "  uebctl emit 'hello u32 a; char[8] b' a=1 b=hi\n"
                "      creates hello and writes nothing: \"hello: not enabled, nothing written\"\n"
                "  uebctl record hello\n"
                "      (in another terminal) listens; the same emit now says \"hello: written\n"
                "      (12 bytes)\" and record prints: [uid 1000 pid 884] hello: a=1 b=hi\n");
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                { "system", no_argument, NULL, 'S' },
                { "session", no_argument, NULL, 'U' },
                { "bus-address", required_argument, NULL, 'A' },
                {},
        };
        int c;

        /* Options after the command belong to the command. */
        while ((c = getopt_long(argc, argv, "+h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        usage(stdout);
                        return EXIT_SUCCESS;
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
                default:
                        usage(stderr);
                        return 2;
                }

        if (optind >= argc) {
                usage(stderr);
                return 2;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[optind], commands[i].name) == 0) {
                        /* The command parses its own options from its argv. */
                        int n = argc - optind;

                        argv += optind;
                        optind = 0;     /* 0: glibc reinitializes getopt */
                        return commands[i].run(n, argv);
                }

        fprintf(stderr, "error: unknown command '%s' (see uebctl --help)\n", argv[optind]);
        return 2;
}
