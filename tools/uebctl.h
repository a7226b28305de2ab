/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/* A subcommand: argv[0] is its name; returns the process exit status
 * (0 ok, 1 failure, 2 usage). */
struct uebctl_command {
        const char *name;
        const char *args;
        const char *help;
        int (*run)(int argc, char *argv[]);
};

/* Joins argv[first..argc) with single spaces, so a command may be given as
 * one quoted argument or as words. Returns malloc()ed text or NULL. */
char *uebctl_join_args(int argc, char *argv[], int first);

int uebctl_format(int argc, char *argv[]);
