/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "uebctl-filter.h"
#include "uebroker.h"

/* How machine-readable output is printed (--json=MODE). */
enum uebctl_json {
        UEBCTL_JSON_OFF,        /* tables and text lines */
        UEBCTL_JSON_SHORT,      /* one line per document */
        UEBCTL_JSON_PRETTY,     /* indented */
};

/* Options a command may accept (struct uebctl_command's accepts): every
 * option may stand before or after the command, as with systemctl; one a
 * command does nothing with is a usage error, not silently ignored. */
enum {
        UEBCTL_OPT_JSON = 1u << 0,
        UEBCTL_OPT_LEGEND = 1u << 1,    /* --no-legend */
        UEBCTL_OPT_PAGER = 1u << 2,     /* --no-pager */
        UEBCTL_OPT_COUNT = 1u << 3,     /* -n/--count=N */
        UEBCTL_OPT_ASK = 1u << 4,       /* --no-ask-password */
        UEBCTL_OPT_OUTPUT = 1u << 5,    /* -o/--output=PATH */
        UEBCTL_OPT_FORMAT = 1u << 6,    /* --format=ctf|tracedat */
        UEBCTL_OPT_FILTER = 1u << 7,    /* --provider, --level, --keyword, --keyword-all */
};

/* What record -o writes. */
enum uebctl_record_format {
        UEBCTL_FORMAT_AUTO,     /* by the name: *.dat a trace.dat file, else CTF */
        UEBCTL_FORMAT_CTF,      /* a CTF trace, a directory */
        UEBCTL_FORMAT_TRACEDAT, /* a trace.dat file (trace-cmd, KernelShark) */
};

/* The options given on the command line, wherever they stood. */
struct uebctl_options {
        enum uebctl_json json;
        bool legend;
        bool pager;
        bool ask_password;
        unsigned long long count;       /* 0: no limit */
        const char *output;             /* record -o PATH: a CTF trace or a trace.dat file */
        enum uebctl_record_format format;       /* --format */
        struct uebctl_filter filter;    /* record's EventHeader filters */
};
extern struct uebctl_options uebctl_opts;

/* A subcommand: argv[0] is its name, then its positional arguments (the
 * options are parsed already, into uebctl_opts); returns the process exit
 * status (0 ok, 1 failure, 2 usage). */
struct uebctl_command {
        const char *name;
        const char *args;
        const char *help;
        const char *details;    /* for "uebctl COMMAND --help" */
        unsigned accepts;       /* UEBCTL_OPT_* */
        int (*run)(int argc, char *argv[]);
};

/* The bus chosen by the global options (--system, --session,
 * --bus-address=ADDR); UEB_BUS_DEFAULT follows $UEBROKER_BUS_ADDRESS. */
extern enum ueb_bus uebctl_bus_kind;
extern const char *uebctl_bus_address;

/* Joins argv[first..argc) with single spaces, so a command may be given as
 * one quoted argument or as words. Returns malloc()ed text or NULL. */
char *uebctl_join_args(int argc, char *argv[], int first);

/* uebctl-bus.c: connects to the chosen bus; prints the reason and returns
 * a negative errno on failure. */
int uebctl_bus_open(sd_bus **ret);
/* Prints "error: METHOD: NAME: message" for a failed call; returns 1. */
int uebctl_call_failed(const char *method, int r, const sd_bus_error *error);

/* One entry of ListEvents. */
struct uebctl_event_info {
        char *name;
        char *fields;
        uint32_t owner_uid;
        uint32_t registrations;
        bool enabled;
};

/* Calls ListEvents; prints the failure and returns a negative errno. */
int uebctl_list_events(sd_bus *bus, struct uebctl_event_info **ret, size_t *ret_n);
void uebctl_event_info_free(struct uebctl_event_info *events, size_t n);

/* Room for one passwd entry (getpwuid_r); a few hundred bytes in practice. */
#define USER_BUF_SIZE 4096

struct strbuf;
/* uebctl-output.c: "name" of @uid from the user database, or NULL when it
 * has none (the number alone is shown then). Writes into @buf. */
const char *uebctl_user_name(uid_t uid, char *buf, size_t size);
/* Prints @json (compact JSON text, one document) in the chosen mode, with a
 * newline; returns 0 or 1 (out of memory, or stdout failed). */
int uebctl_print_json(const char *json);
/* One event as a JSON object: name, fields, owner_uid, owner (user name or
 * null), registrations, enabled. */
void uebctl_append_event_json(struct strbuf *sb, const struct uebctl_event_info *e);

/* uebctl-pager.c: with --no-pager absent and stdout a terminal, pipes
 * stdout into $UEBCTL_PAGER, else $PAGER, else less (LESS=FRSXMK unless
 * set), like systemd's tools; "" or "cat" means none. pager_close() waits
 * for it. */
void uebctl_pager_open(void);
void uebctl_pager_close(void);

int uebctl_format(int argc, char *argv[]);
int uebctl_list(int argc, char *argv[]);
int uebctl_status(int argc, char *argv[]);
int uebctl_record(int argc, char *argv[]);
int uebctl_delete(int argc, char *argv[]);
int uebctl_emit(int argc, char *argv[]);
