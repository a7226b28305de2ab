/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-client: a libuebroker client the vm tier's scenario drives from the
 * shell. It registers one event on the system bus and runs the steps given
 * on the command line in order, printing one line per step (flushed):
 *
 *   vm-client 'COMMAND' STEP...
 *
 *   fds                 "fd N -> TARGET" for each open descriptor above 2
 *   enabled             "enabled 0|1"
 *   wait-enabled SECS   waits until the event is enabled: "enabled 1", or
 *                       "enabled 0" after SECS seconds
 *   write F=V...        encodes the assignments (as uebctl emit) and writes
 *                       one record: "write 0" or "write -ERRNO STRERROR"
 *   burst N F=V...      writes that record N times as fast as it can:
 *                       "burst N written W" (W writes succeeded)
 *   typed F=V...        the same values as typed values, written with
 *                       ueb_write_values(): "typed 0" or "typed -ERRNO ..."
 *   raw HEX             writes HEX ("" for none) as the payload, unchecked:
 *                       "raw 0" or "raw -ERRNO STRERROR"
 *   wait-lost SECS      waits until the library has let go of the
 *                       registration (the broker left): "lost 1", or
 *                       "lost 0" after SECS seconds; then "enabled 0|1"
 *   wait-registered SECS
 *                       waits until it is registered again (a broker came
 *                       back): "registered 1", or "registered 0"
 *   ioctls              on each open user_events_data or restricted handle (the data fd the
 *                       broker handed out), as a hostile client would: its
 *                       own DIAG_IOCSREG of "NAME_evil u32 x" and
 *                       DIAG_IOCSDEL of NAME: "ioctls fd N reg R del R",
 *                       R being 0 or -ERRNONAME
 *   hold                "holding", then waits for a signal (to be killed)
 *
 * First line: "registered" or "register failed: MESSAGE" (exit 1).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "cleanup.h"
#include "event-def.h"
#include "event-encode.h"
#include "uebroker.h"
#include "user-events-abi.h"

/* Calls @fn for each open descriptor above 2 with what it links to. */
static void for_each_fd(void (*fn)(int fd, const char *target, const void *userdata), const void *userdata) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;

        if (!d) {
                printf("fds: %s\n", strerror(errno));
                return;
        }
        while ((de = readdir(d))) {
                char path[PATH_MAX], target[PATH_MAX];
                int fd = atoi(de->d_name);
                ssize_t n;

                if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                        continue;
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
                n = readlink(path, target, sizeof(target) - 1);
                if (n < 0)
                        continue;
                target[n] = 0;
                fn(fd, target, userdata);
        }
        closedir(d);
}

static void print_fd(int fd, const char *target, const void *userdata) {
        printf("fd %d -> %s\n", fd, target);
}

static const char *result(int r) {
        static char buf[64];

        if (r >= 0)
                return "0";
        snprintf(buf, sizeof(buf), "-%s", strerrorname_np(-r) ?: "?");
        return buf;
}

/* What a client could do with the data fd behind the broker's back: on
 * each open user_events_data or restricted handle, its own DIAG_IOCSREG
 * and DIAG_IOCSDEL. */
static void try_ioctls_on(int fd, const char *target, const void *userdata) {
        static uint32_t word;
        const char *name = userdata;
        char evil[EVENT_NAME_MAX + 16];
        size_t len = strlen(target);
        struct upstream_user_reg reg = {
                .size = sizeof(reg),
                .enable_size = 4,
                .enable_addr = (uint64_t) (uintptr_t) &word,
                .name_args = (uint64_t) (uintptr_t) evil,
        };
        int rr, rd;

        if ((len < 17 || strcmp(target + len - 17, "/user_events_data") != 0) &&
            strcmp(target, "anon_inode:[user_events_handle]") != 0)
                return;
        snprintf(evil, sizeof(evil), "%s_evil u32 x", name);
        rr = ioctl(fd, UPSTREAM_DIAG_IOCSREG, &reg) < 0 ? -errno : 0;
        printf("ioctls fd %d reg %s", fd, result(rr));
        rd = ioctl(fd, UPSTREAM_DIAG_IOCSDEL, name) < 0 ? -errno : 0;
        printf(" del %s\n", result(rd));
}

static int hex_decode(const char *s, unsigned char *buf, size_t max, size_t *len) {
        size_t n = strlen(s);

        if (n % 2 || n / 2 > max)
                return -EINVAL;
        for (size_t i = 0; i < n / 2; i++) {
                unsigned v;

                if (sscanf(s + 2 * i, "%2x", &v) != 1)
                        return -EINVAL;
                buf[i] = (unsigned char) v;
        }
        *len = n / 2;
        return 0;
}

static void print_result(const char *what, int r) {
        if (r == 0)
                printf("%s 0\n", what);
        else
                printf("%s %d %s\n", what, r, strerror(-r));
}

int main(int argc, char *argv[]) {
        struct ueb_client *client = NULL;
        struct ueb_event *event = NULL;
        struct event_def *def = NULL;
        struct event_error error = { 0 };
        int r;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (argc < 2) {
                fprintf(stderr, "usage: vm-client 'COMMAND' STEP...\n");
                return 2;
        }
        r = event_def_parse(argv[1], 0, &def, &error);
        if (r < 0) {
                fprintf(stderr, "bad command: %s\n", r == -EINVAL ? error.message : strerror(-r));
                return 2;
        }

        r = ueb_open_bus(&client, UEB_BUS_SYSTEM, NULL);
        if (r <= 0) {
                printf("register failed: no bus: %s\n", client ? ueb_last_error(client) : strerror(-r));
                return 1;
        }
        r = ueb_register(client, argv[1], &event);
        if (r <= 0) {
                printf("register failed: %s\n", *ueb_last_error(client) ? ueb_last_error(client) :
                       r < 0 ? strerror(-r) : "broker not reachable");
                return 1;
        }
        printf("registered\n");

        for (int i = 2; i < argc; i++) {
                const char *step = argv[i];

                if (strcmp(step, "fds") == 0)
                        for_each_fd(print_fd, NULL);
                else if (strcmp(step, "ioctls") == 0)
                        for_each_fd(try_ioctls_on, def->name);
                else if (strcmp(step, "enabled") == 0)
                        printf("enabled %d\n", ueb_enabled(event));
                else if (strcmp(step, "wait-enabled") == 0 && i + 1 < argc) {
                        int tenths = atoi(argv[++i]) * 10;

                        while (!ueb_enabled(event) && tenths-- > 0)
                                nanosleep(&(struct timespec) { 0, 100 * 1000 * 1000 }, NULL);
                        printf("enabled %d\n", ueb_enabled(event));
                } else if ((strcmp(step, "wait-lost") == 0 || strcmp(step, "wait-registered") == 0) &&
                           i + 1 < argc) {
                        bool want = strcmp(step, "wait-registered") == 0;
                        int tenths = atoi(argv[++i]) * 10;

                        while (ueb_registered(event) != want && tenths-- > 0)
                                nanosleep(&(struct timespec) { 0, 100 * 1000 * 1000 }, NULL);
                        if (want)
                                printf("registered %d\n", ueb_registered(event));
                        else
                                printf("lost %d\nenabled %d\n", !ueb_registered(event), ueb_enabled(event));
                } else if (strcmp(step, "write") == 0) {
                        int first = i + 1, n = 0;
                        void *payload = NULL;
                        size_t len = 0;

                        while (first + n < argc && strchr(argv[first + n], '='))
                                n++;
                        i += n;
                        r = event_encode_payload(def, argv + first, (size_t) n, &payload, &len, &error);
                        if (r < 0) {
                                printf("write: cannot encode: %s\n", r == -EINVAL ? error.message : strerror(-r));
                                continue;
                        }
                        r = ueb_write(event, &(struct iovec) { payload, len }, 1);
                        free(payload);
                        print_result("write", r);
                } else if (strcmp(step, "burst") == 0 && i + 1 < argc) {
                        unsigned long count = strtoul(argv[++i], NULL, 10), written = 0;
                        int first = i + 1, n = 0;
                        void *payload = NULL;
                        size_t len = 0;

                        while (first + n < argc && strchr(argv[first + n], '='))
                                n++;
                        i += n;
                        r = event_encode_payload(def, argv + first, (size_t) n, &payload, &len, &error);
                        if (r < 0) {
                                printf("burst: cannot encode: %s\n", r == -EINVAL ? error.message : strerror(-r));
                                continue;
                        }
                        for (unsigned long k = 0; k < count; k++)
                                written += ueb_write(event, &(struct iovec) { payload, len }, 1) >= 0;
                        free(payload);
                        printf("burst %lu written %lu\n", count, written);
                } else if (strcmp(step, "typed") == 0) {
                        _cleanup_(event_text_values_done) struct event_text_values values = {};
                        int first = i + 1, n = 0;

                        while (first + n < argc && strchr(argv[first + n], '='))
                                n++;
                        i += n;
                        r = event_values_from_text(def, argv + first, (size_t) n, &values, &error);
                        if (r < 0) {
                                printf("typed: cannot parse: %s\n", r == -EINVAL ? error.message : strerror(-r));
                                continue;
                        }
                        r = ueb_write_values(event, values.values, values.n_values);
                        print_result("typed", r);
                } else if (strcmp(step, "raw") == 0 && i + 1 < argc) {
                        unsigned char buf[4096];
                        size_t len;

                        if (hex_decode(argv[++i], buf, sizeof(buf), &len) < 0) {
                                printf("raw: bad hex\n");
                                continue;
                        }
                        r = ueb_write(event, &(struct iovec) { buf, len }, 1);
                        print_result("raw", r);
                } else if (strcmp(step, "hold") == 0) {
                        printf("holding\n");
                        for (;;)
                                pause();
                } else {
                        fprintf(stderr, "unknown step '%s'\n", step);
                        return 2;
                }
        }

        ueb_unregister(event);
        ueb_close(client);
        event_def_free(def);
        return 0;
}
