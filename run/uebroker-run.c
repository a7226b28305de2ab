/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * uebroker-run PROGRAM [ARGS...]: runs an existing user_events program as
 * it is, with libuebroker-preload.so preloaded, so that its
 * user_events_data is the broker's and its registrations go through the
 * broker (run/preload-files.h). Says so when the program is one the
 * preload cannot reach (set-user-ID, statically linked, Go).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "build-paths.h"
#include "config.h"
#include "elf-kind.h"

static void help(void) {
        printf("uebroker-run [OPTIONS] PROGRAM [ARGS...]\n\n"
               "Runs an unmodified user_events program with its user_events_data\n"
               "file and registrations through uebrokerd.\n\n"
               "  -d --debug    a line on stderr for every registration (UEBROKER_DEBUG=1)\n"
               "  -h --help     this text\n"
               "     --version  the version\n\n"
               "UEBROKER_PRELOAD names another preload library; UEBROKER_BUS_ADDRESS another bus.\n"
               "See uebroker-run(1).\n");
}

/* Where execvp() will find @name: the path to inspect. */
static int find_program(const char *name, char *buf, size_t size) {
        const char *path = getenv("PATH");

        if (strchr(name, '/'))
                return snprintf(buf, size, "%s", name) < (int) size ? 0 : -ENAMETOOLONG;
        for (const char *p = path ?: "/usr/local/bin:/usr/bin:/bin"; p && *p;) {
                const char *end = strchr(p, ':');
                size_t len = end ? (size_t) (end - p) : strlen(p);

                if (snprintf(buf, size, "%.*s/%s", (int) len, len ? p : ".", name) < (int) size &&
                    access(buf, X_OK) == 0)
                        return 0;
                p = end ? end + 1 : NULL;
        }
        return -ENOENT;
}

static void warn_unreachable(const char *program) {
        struct elf_kind kind;
        char path[PATH_MAX];

        if (find_program(program, path, sizeof(path)) < 0 || elf_kind_of(path, &kind) < 0)
                return;         /* execvp() says what is wrong */
        if (kind.setid)
                fprintf(stderr, "uebroker-run: %s is set-user-ID or set-group-ID: the dynamic loader ignores "
                        "LD_PRELOAD for it, so its user_events do not go through the broker.\n", path);
        else if (kind.elf && !kind.dynamic)
                fprintf(stderr, "uebroker-run: %s is statically linked: nothing can be preloaded into it, so "
                        "its user_events do not go through the broker.\n", path);
        else if (kind.go)
                fprintf(stderr, "uebroker-run: %s is a Go program: it makes its system calls itself, past "
                        "libc, so its user_events do not go through the broker.\n", path);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "debug", no_argument, NULL, 'd' },
                { "help", no_argument, NULL, 'h' },
                { "version", no_argument, NULL, 'V' },
                {},
        };
        const char *library, *old;
        char *preload;
        int c;

        /* Options end at PROGRAM: its own are its own. */
        while ((c = getopt_long(argc, argv, "+dh", options, NULL)) >= 0)
                switch (c) {
                case 'd':
                        if (setenv("UEBROKER_DEBUG", "1", 1) < 0)
                                return 1;
                        break;
                case 'h':
                        help();
                        return 0;
                case 'V':
                        printf("uebroker-run %s\n", PACKAGE_VERSION);
                        return 0;
                default:
                        return 2;
                }
        if (optind >= argc) {
                fprintf(stderr, "uebroker-run: which program? (uebroker-run PROGRAM [ARGS...])\n");
                return 2;
        }

        library = getenv("UEBROKER_PRELOAD");
        if (!library || !*library)
                library = UEBROKER_PRELOAD_LIBRARY;
        if (access(library, R_OK) < 0) {
                fprintf(stderr, "uebroker-run: cannot read the preload library %s: %s\n", library, strerror(errno));
                return 1;
        }
        warn_unreachable(argv[optind]);

        old = getenv("LD_PRELOAD");
        if (old && *old) {
                if (asprintf(&preload, "%s:%s", library, old) < 0)
                        return 1;
        } else if (!(preload = strdup(library)))
                return 1;
        if (setenv("LD_PRELOAD", preload, 1) < 0) {
                fprintf(stderr, "uebroker-run: cannot set LD_PRELOAD: %s\n", strerror(errno));
                return 1;
        }
        free(preload);

        execvp(argv[optind], argv + optind);
        fprintf(stderr, "uebroker-run: cannot run %s: %s\n", argv[optind], strerror(errno));
        return errno == ENOENT ? 127 : 126;
}
