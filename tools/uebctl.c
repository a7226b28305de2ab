/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl: the command-line tool for people and scripts. */
#include "uebctl.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

static const struct uebctl_command commands[] = {
        { "format", "'COMMAND'", "print the tracefs format file an event would have", uebctl_format },
};

static void usage(FILE *out) {
        fprintf(out,
                "Usage: uebctl [OPTIONS] COMMAND [ARGS...]\n"
                "Publish and inspect user_events tracepoints through uebrokerd.\n\n"
                "Options:\n"
                "  -h --help       show this help\n"
                "     --version    show the version\n\n"
                "Commands:\n");
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                fprintf(out, "  %-7s %-22s %s\n", commands[i].name, commands[i].args, commands[i].help);
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
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
                default:
                        usage(stderr);
                        return 2;
                }

        if (optind >= argc) {
                usage(stderr);
                return 2;
        }
        for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
                if (strcmp(argv[optind], commands[i].name) == 0)
                        return commands[i].run(argc - optind, argv + optind);

        fprintf(stderr, "error: unknown command '%s' (see uebctl --help)\n", argv[optind]);
        return 2;
}
