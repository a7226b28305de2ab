/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* uebctl's output helpers: user names and JSON in the chosen mode. */
#include "uebctl.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json-pretty.h"
#include "json-string.h"
#include "strbuf.h"

const char *uebctl_user_name(uid_t uid, char *buf, size_t size) {
        struct passwd pw, *result = NULL;

        if (getpwuid_r(uid, &pw, buf, size, &result) != 0 || !result || !pw.pw_name || !*pw.pw_name)
                return NULL;
        /* pw_name points into @buf. */
        return pw.pw_name;
}

int uebctl_print_json(const char *json) {
        struct strbuf sb = STRBUF_INIT;
        char *text;

        if (uebctl_opts.json == UEBCTL_JSON_PRETTY)
                json_append_pretty(&sb, json);
        else
                strbuf_append(&sb, json);
        strbuf_append_c(&sb, '\n');
        text = strbuf_steal(&sb);
        if (!text) {
                fprintf(stderr, "error: out of memory\n");
                return 1;
        }
        fputs(text, stdout);
        free(text);
        return ferror(stdout) ? 1 : 0;
}

void uebctl_append_event_json(struct strbuf *sb, const struct uebctl_event_info *e) {
        char user_buf[USER_BUF_SIZE];
        const char *user = uebctl_user_name(e->owner_uid, user_buf, sizeof(user_buf));

        strbuf_append(sb, "{\"name\":");
        json_append_string(sb, e->name, strlen(e->name));
        strbuf_append(sb, ",\"fields\":");
        json_append_string(sb, e->fields, strlen(e->fields));
        strbuf_printf(sb, ",\"owner_uid\":%u,\"owner\":", e->owner_uid);
        if (user)
                json_append_string(sb, user, strlen(user));
        else
                strbuf_append(sb, "null");
        strbuf_printf(sb, ",\"registrations\":%u,\"enabled\":%s}", e->registrations, e->enabled ? "true" : "false");
}
