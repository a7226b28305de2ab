/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl format: what tracefs would show as events/user_events/NAME/format. */
#include "uebctl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "event-def.h"
#include "strbuf.h"

char *uebctl_join_args(int argc, char *argv[], int first) {
        struct strbuf sb = STRBUF_INIT;

        for (int i = first; i < argc; i++) {
                if (i > first)
                        strbuf_append_c(&sb, ' ');
                strbuf_append(&sb, argv[i]);
        }
        return strbuf_steal(&sb);
}

int uebctl_format(int argc, char *argv[]) {
        __attribute__((cleanup(event_def_freep))) struct event_def *ev = NULL;
        struct event_error error;
        char *command, *text;
        int r;

        if (argc < 2) {
                fprintf(stderr, "usage: uebctl format 'NAME [type field; ...]'\n");
                return 2;
        }
        command = uebctl_join_args(argc, argv, 1);
        if (!command) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        r = event_def_parse_n(command, strlen(command), 0, &ev, &error);
        free(command);
        if (r < 0) {
                fprintf(stderr, "error: %s\n", error.message);
                return 1;
        }
        /* ID 0: the event is not registered anywhere. */
        text = event_def_format_text(ev, 0);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        fputs(text, stdout);
        free(text);
        return fflush(stdout) == 0 ? 0 : 1;
}
