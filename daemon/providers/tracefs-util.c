/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cleanup.h"
#include "fd-util.h"
#include "log.h"
#include "macro.h"
#include "status-text.h"
#include "strbuf.h"
#include "tracefs-util.h"

const char *user_events_interface_name(enum user_events_interface i) {
        switch (i) {
        case USER_EVENTS_IFACE_NONE:
                return "none";
        case USER_EVENTS_IFACE_UPSTREAM:
                return "upstream";
        case USER_EVENTS_IFACE_ORIGINAL:
                return "original";
        case USER_EVENTS_IFACE_BITMAP:
                return "bitmap";
        }
        return "?";
}

static bool file_exists_in(const char *dir, const char *name) {
        _cleanup_free_ char *path = NULL;

        if (asprintf(&path, "%s/%s", dir, name) < 0)
                return false;
        return access(path, F_OK) == 0;
}

static void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

/* The mount point of the first tracefs line of a mounts file. Mount points
 * with spaces are octal-escaped there ("\040"); tracefs never lives at one
 * in practice, so such a line is skipped rather than unescaped. */
static int tracefs_from_mounts(const char *mounts_path, char **ret) {
        _cleanup_(fclosep) FILE *f = NULL;
        _cleanup_free_ char *line = NULL;
        size_t n = 0;

        f = fopen(mounts_path, "re");
        if (!f)
                return -errno;
        while (getline(&line, &n, f) > 0) {
                char *src, *where, *type, *save = NULL;

                src = strtok_r(line, " \t\n", &save);
                where = src ? strtok_r(NULL, " \t\n", &save) : NULL;
                type = where ? strtok_r(NULL, " \t\n", &save) : NULL;
                if (!type || strcmp(type, "tracefs") != 0 || strchr(where, '\\'))
                        continue;
                *ret = strdup(where);
                return *ret ? 0 : -ENOMEM;
        }
        return -ENOENT;
}

int tracefs_find(const char *override, const char *const *candidates, const char *mounts_path,
                          char **ret) {
        if (override) {
                *ret = strdup(override);
                return *ret ? 0 : -ENOMEM;
        }
        /* An unmounted /sys/kernel/tracing is an empty directory: look for
         * a file every tracefs has. */
        for (size_t i = 0; candidates && candidates[i]; i++)
                if (file_exists_in(candidates[i], "trace") || file_exists_in(candidates[i], "user_events_data")) {
                        *ret = strdup(candidates[i]);
                        return *ret ? 0 : -ENOMEM;
                }
        if (!mounts_path)
                return -ENOENT;
        return tracefs_from_mounts(mounts_path, ret);
}

/* "Max: N" of a status text read from @fd, 0 when there is none. */
static long status_text_max(int fd) {
        char buf[65536];
        size_t len = 0;
        const char *p;

        /* The summary is at the end; the original interface has at most
         * 4096 short lines, so read all of it, bounded. */
        for (;;) {
                ssize_t k = read(fd, buf + len, sizeof(buf) - 1 - len);

                if (k <= 0)
                        break;
                len += (size_t) k;
                if (len == sizeof(buf) - 1)
                        break;
        }
        buf[len] = '\0';
        for (p = buf; (p = strstr(p, "Max: ")); p++)
                if (p == buf || p[-1] == '\n')
                        return strtol(p + 5, NULL, 10);
        return 0;
}

static int reason(char **ret_reason, const char *format, ...) __attribute__((format(printf, 2, 3)));
static int reason(char **ret_reason, const char *format, ...) {
        va_list ap;
        int r;

        if (!ret_reason)
                return 0;
        va_start(ap, format);
        r = vasprintf(ret_reason, format, ap);
        va_end(ap);
        if (r < 0) {
                *ret_reason = NULL;
                return -ENOMEM;
        }
        return 0;
}

int user_events_detect_interface(const char *tracefs, char **ret_reason) {
        _cleanup_free_ char *status_path = NULL;
        _cleanup_close_ int fd = -EBADF;
        bool have_data;
        void *m;
        long max;
        int r;

        assert(tracefs);
        if (ret_reason)
                *ret_reason = NULL;
        if (asprintf(&status_path, "%s/user_events_status", tracefs) < 0)
                return -ENOMEM;
        have_data = file_exists_in(tracefs, "user_events_data");

        /* O_NONBLOCK: opening must never wait (a fake tree's FIFO stands for
         * a file that cannot be mapped). */
        fd = open(status_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0 && errno == ENOENT) {
                r = reason(ret_reason, "%s has no user_events files (kernel without CONFIG_USER_EVENTS)",
                           tracefs);
                return r < 0 ? r : USER_EVENTS_IFACE_NONE;
        }
        if (fd < 0) {
                r = reason(ret_reason, "cannot open %s: %s", status_path, strerror(errno));
                return r < 0 ? r : USER_EVENTS_IFACE_NONE;
        }
        if (!have_data) {
                r = reason(ret_reason, "%s has user_events_status but no user_events_data", tracefs);
                return r < 0 ? r : USER_EVENTS_IFACE_NONE;
        }

        /* The one observable difference that needs no registration: only
         * the older interfaces let user_events_status be mapped. A
         * read-only mapping, dropped at once, changes nothing. */
        m = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
                return USER_EVENTS_IFACE_UPSTREAM;
        munmap(m, STATUS_PAGE_SIZE);

        /* Both older interfaces print "Max: N" under their events: the
         * original had one byte per event (Max: 4096, kernel/README.md),
         * 5.18-6.3's bitmap one bit per event (Max: PAGE_SIZE * 8 = 32768).
         * That is what tells them apart; their struct user_reg differs
         * (status_index vs status_bit) though the ioctl number is the same. */
        max = status_text_max(fd);
        if (max == STATUS_MAX_EVENTS) {
                r = reason(ret_reason,
                           "%s speaks the original user_events interface (mappable status page, Max: %ld): "
                           "not the upstream one", tracefs, max);
                return r < 0 ? r : USER_EVENTS_IFACE_ORIGINAL;
        }
        if (max > STATUS_MAX_EVENTS) {
                r = reason(ret_reason,
                           "%s speaks the 5.18-6.3 user_events interface (status bitmap, Max: %ld; "
                           "CONFIG_USER_EVENTS depended on BROKEN then): not supported", tracefs, max);
                return r < 0 ? r : USER_EVENTS_IFACE_BITMAP;
        }
        r = reason(ret_reason,
                   "%s has a mappable user_events_status (an interface older than Linux 6.4) whose "
                   "text gives no Max: line: not the upstream one", tracefs);
        return r < 0 ? r : USER_EVENTS_IFACE_ORIGINAL;
}

char *user_events_registration_string(const struct event_def *def) {
        struct strbuf sb = STRBUF_INIT;

        assert(def);
        strbuf_append(&sb, def->name);
        for (size_t i = 0; i < def->n_fields; i++) {
                const struct event_field *f = &def->fields[i];

                strbuf_append(&sb, i == 0 ? " " : "; ");
                if (f->kind == EVENT_FIELD_ARRAY) {
                        /* "char[0x10]" -> "char[16]": both array types
                         * have one-byte elements, so size is the count. */
                        const char *bracket = strchr(f->type, '[');
                        size_t base = bracket ? (size_t) (bracket - f->type) : strlen(f->type);

                        strbuf_append_n(&sb, f->type, base);
                        strbuf_printf(&sb, "[%u] %s", f->size, f->name);
                } else if (f->kind == EVENT_FIELD_STRUCT)
                        strbuf_printf(&sb, "%s %s %u", f->type, f->name, f->size);
                else
                        strbuf_printf(&sb, "%s %s", f->type, f->name);
        }
        return strbuf_steal(&sb);
}

void upstream_enable_location(uint32_t status_index, uint64_t page_addr, uint64_t *ret_addr, uint8_t *ret_bit) {
        uint32_t byte = status_index & (UPSTREAM_ENABLE_SIZE - 1);

        *ret_addr = page_addr + (status_index & ~(UPSTREAM_ENABLE_SIZE - 1));
        /* Bit numbers count from the u32's least significant bit, which
         * is its first byte only on little-endian machines. */
#if __BYTE_ORDER == __LITTLE_ENDIAN
        *ret_bit = (uint8_t) (byte * 8);
#else
        *ret_bit = (uint8_t) ((UPSTREAM_ENABLE_SIZE - 1 - byte) * 8);
#endif
}

int upstream_status_line_parse(const char *line, size_t len, const char **ret_name, size_t *ret_name_len,
                               uint8_t *ret_status) {
        assert(line);
        static const struct {
                const char *word;
                uint8_t bit;
        } users[] = {
                { " ftrace", EVENT_STATUS_FTRACE },
                { " perf", EVENT_STATUS_PERF },
                { " other", EVENT_STATUS_OTHER },
        };
        const char *end = line + len, *name_end, *p;
        uint8_t status = 0;

        while (end > line && (end[-1] == '\n' || end[-1] == '\r'))
                end--;
        name_end = memchr(line, ' ', (size_t) (end - line)) ?: end;
        /* "Active: 1" and "Busy: 0": event names have no ':'. */
        if (name_end == line || memchr(line, ':', (size_t) (name_end - line)))
                return 0;

        p = name_end;
        if (end - p >= 10 && memcmp(p, " # Used by", 10) == 0) {
                p += 10;
                while (p < end) {
                        size_t i;

                        for (i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
                                size_t n = strlen(users[i].word);

                                if ((size_t) (end - p) >= n && memcmp(p, users[i].word, n) == 0 &&
                                    (p + n == end || p[n] == ' ')) {
                                        status |= users[i].bit;
                                        p += n;
                                        break;
                                }
                        }
                        if (i == sizeof(users) / sizeof(users[0])) {
                                /* A user this code does not know: someone
                                 * listens all the same. */
                                status |= EVENT_STATUS_OTHER;
                                p = memchr(p + 1, ' ', (size_t) (end - p - 1)) ?: end;
                        }
                }
        }
        *ret_name = line;
        *ret_name_len = (size_t) (name_end - line);
        *ret_status = status;
        return 1;
}

void kernel_event_delete(int control_fd, const char *provider, const char *name, const char *busy_note) {
        if (ioctl(control_fd, UPSTREAM_DIAG_IOCSDEL, name) == 0)
                log_debug("%s: deleted %s from the kernel.", provider, name);
        else if (errno == ENOENT)
                log_debug("%s: %s was already gone from the kernel.", provider, name);
        else if (errno == EBUSY)
                log_info("%s: %s is still in use in the kernel (%s).", provider, name, busy_note);
        else
                log_warning_errno(errno, "%s: cannot delete %s from the kernel: %m", provider, name);
}
