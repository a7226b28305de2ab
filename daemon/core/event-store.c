/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "event-store.h"
#include "fd-util.h"
#include "log.h"
#include "strbuf.h"

/* Lines skipped that are logged one by one; the rest are counted. A file of
 * junk costs the journal a dozen lines, not a line per line. */
#define EVENT_STORE_WARNINGS_MAX 10u

struct store_parse {
        const char *origin;
        unsigned lineno;
        unsigned skipped;
};

/* true while skipped lines are still logged one by one. */
static bool skip_logged(struct store_parse *p) {
        return p->skipped++ < EVENT_STORE_WARNINGS_MAX;
}

/* Bounds the file read back: a full table of the longest commands. */
#define EVENT_STORE_FILE_MAX ((size_t) STATUS_INDEX_MAX * EVENT_STORE_LINE_MAX)

/* @ev's line, made on first use and kept with the event: neither its
 * owner, its index nor its definition ever changes. */
static const char *store_line(struct broker_event *ev) {
        _cleanup_free_ char *command = NULL;

        if (ev->store_line)
                return ev->store_line;
        command = event_def_canonical(ev->def);
        if (!command)
                return NULL;
        /* The canonical form names the group ("u:"); Register takes none. */
        if (asprintf(&ev->store_line, "%u:%u %s\n", (unsigned) ev->owner_uid, (unsigned) ev->status_index,
                     strncmp(command, "u:", 2) == 0 ? command + 2 : command) < 0) {
                ev->store_line = NULL;
                return NULL;
        }
        return ev->store_line;
}

char *event_store_format(struct event_registry *reg) {
        struct strbuf sb = STRBUF_INIT;

        assert(reg);

        for (uint32_t i = 1; i < STATUS_PAGE_SIZE; i++) {
                struct broker_event *ev = reg->by_index[i];
                const char *line;

                if (!ev)
                        continue;
                line = store_line(ev);
                if (!line) {
                        free(strbuf_steal(&sb));
                        return NULL;
                }
                strbuf_append_n(&sb, line, strlen(line));
        }
        return strbuf_steal(&sb);
}

/* Digits at @line[*i], at most @max of them; false when there are none. */
static bool parse_number(const char *line, size_t n, size_t *i, size_t max, unsigned long *ret) {
        size_t start = *i;
        unsigned long v = 0;

        while (*i < n && *i - start < max && line[*i] >= '0' && line[*i] <= '9')
                v = v * 10 + (unsigned long) (line[(*i)++] - '0');
        *ret = v;
        return *i > start;
}

/* One line without its newline. 1: added; 0: skipped (warned); -ENOMEM. */
static int parse_line(struct event_registry *reg, const char *line, size_t n, struct store_parse *p) {
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        struct event_error error = { 0 };
        struct broker_event *ev;
        unsigned long uid = 0, index = 0;
        size_t i = 0;
        bool ok;
        int r;

        /* "UID:INDEX COMMAND"; "UID COMMAND" from brokers that kept no index. */
        ok = parse_number(line, n, &i, 10, &uid) && uid < (uid_t) -1;
        if (ok && i < n && line[i] == ':') {
                i++;
                ok = parse_number(line, n, &i, 4, &index) && index >= 1 && index <= STATUS_INDEX_MAX;
        }
        if (!ok || i >= n || line[i] != ' ') {
                if (skip_logged(p))
                        log_warning("%s:%u: expected 'UID:INDEX COMMAND', skipping the line.", p->origin, p->lineno);
                return 0;
        }
        i++;
        r = event_def_parse_n(line + i, n - i, 0, &def, &error);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (skip_logged(p))
                        log_warning("%s:%u: %s, skipping the line.", p->origin, p->lineno, error.message);
                return 0;
        }
        r = event_registry_add_at(reg, def, (uid_t) uid, (uint32_t) index, &ev);
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                if (skip_logged(p))
                        log_warning_errno(r, "%s:%u: cannot restore event %s: %m", p->origin, p->lineno, def->name);
                return 0;
        }
        def = NULL;     /* the registry's now */
        return 1;
}

int event_store_parse(struct event_registry *reg, const char *text, size_t size, const char *origin) {
        struct store_parse p = { .origin = origin };
        const char *line = text, *end = text + size;
        int n = 0, r;

        assert(reg);

        while (line < end) {
                const char *nl = memchr(line, '\n', (size_t) (end - line));
                size_t len = (size_t) ((nl ?: end) - line);

                p.lineno++;
                if (len > EVENT_STORE_LINE_MAX || memchr(line, '\0', len)) {
                        if (skip_logged(&p))
                                log_warning("%s:%u: not a line this broker wrote, skipping it.", origin, p.lineno);
                } else if (len > 0) {
                        r = parse_line(reg, line, len, &p);
                        if (r < 0)
                                return r;
                        n += r;
                }
                line += len + (nl ? 1 : 0);
        }
        if (p.skipped > EVENT_STORE_WARNINGS_MAX)
                log_warning("%s: %u more lines skipped (%u in all), not logged one by one.", origin,
                            p.skipped - EVENT_STORE_WARNINGS_MAX, p.skipped);
        return n;
}

static int fsync_directory(const char *dir) {
        _cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

static char *store_path(const char *state_dir, const char *suffix) {
        char *path;

        if (asprintf(&path, "%s/" EVENT_STORE_FILE "%s", state_dir, suffix) < 0)
                return NULL;
        return path;
}

int event_store_save(struct event_registry *reg, const char *state_dir) {
        _cleanup_free_ char *text = NULL, *path = NULL, *tmp = NULL;
        _cleanup_close_ int fd = -EBADF;
        size_t size, done = 0;

        assert(reg);

        text = event_store_format(reg);
        path = store_path(state_dir, "");
        tmp = store_path(state_dir, ".tmp");
        if (!text || !path || !tmp)
                return -ENOMEM;
        size = strlen(text);

        fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (fd < 0)
                return -errno;
        while (done < size) {
                ssize_t k = write(fd, text + done, size - done);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        int r = -errno;

                        (void) unlink(tmp);
                        return r;
                }
                done += (size_t) k;
        }
        /* Durable once renamed: the data before the name, the name after
         * it (on tmpfs, /run, both cost nothing). */
        if (fsync(fd) < 0) {
                int r = -errno;

                (void) unlink(tmp);
                return r;
        }
        if (rename(tmp, path) < 0) {
                int r = -errno;

                (void) unlink(tmp);
                return r;
        }
        return fsync_directory(state_dir);
}

int event_store_load(struct event_registry *reg, const char *state_dir) {
        _cleanup_free_ char *path = NULL, *text = NULL;
        _cleanup_close_ int fd = -EBADF;
        struct stat st;
        size_t size = 0;

        assert(reg);

        path = store_path(state_dir, "");
        if (!path)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        /* Only what the broker itself wrote: root's regular file. */
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022))
                return log_warning_errno(-EPERM, "%s is not a file this broker wrote (owner, mode), ignoring it.",
                                         path);
        if ((size_t) st.st_size > EVENT_STORE_FILE_MAX)
                return log_warning_errno(-EFBIG, "%s is larger than %zu bytes, ignoring it.", path,
                                         EVENT_STORE_FILE_MAX);
        text = malloc((size_t) st.st_size + 1);
        if (!text)
                return -ENOMEM;
        while (size < (size_t) st.st_size) {
                ssize_t k = read(fd, text + size, (size_t) st.st_size - size);

                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        break;
                size += (size_t) k;
        }
        return event_store_parse(reg, text, size, path);
}
