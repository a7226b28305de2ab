/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuebroker never keeps its caller beyond the bounds uebroker.h states,
 * whatever the bus does. Run by broker-harness.sh:
 *   - a bus that accepts connections but never answers (a listening socket
 *     nobody serves): ueb_open() and ueb_register() return in time; then
 *     the address leads to the real bus and the client registers by itself;
 *   - the harness's dbus-daemon frozen with SIGSTOP after the client
 *     connected: ueb_register() (from two threads at once),
 *     ueb_unregister(), ueb_open() of a new client and ueb_close() return
 *     in time; after SIGCONT every client registers and a Record consumer
 *     enables the events.
 * The bounds checked are the header's, plus SCHEDULING_SLACK_MSEC for the
 * time the scheduler (or valgrind) takes to run us again.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bus-util.h"
#include "check-macros.h"
#include "uebroker.h"

static pid_t frozen_bus_pid;

#define SCHEDULING_SLACK_MSEC 1000
/* The library retries with backoff; after the bus is back this is plenty. */
#define RECOVERY_MSEC 30000


static uint64_t now_msec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000u + (uint64_t) ts.tv_nsec / 1000000u;
}

/* Runs @call, prints how long it took, and checks it against @bound_msec. */
#define CHECK_WITHIN(bound_msec, call)                                                      \
        ({                                                                                  \
                uint64_t _start = now_msec();                                               \
                __typeof__(call) _result = (call);                                          \
                uint64_t _took = now_msec() - _start;                                       \
                printf("%s took %llu ms (bound %d ms)\n", #call, (unsigned long long) _took, \
                       (int) (bound_msec));                                                 \
                CHECK(_took <= (uint64_t) (bound_msec) + SCHEDULING_SLACK_MSEC,             \
                      "%s took %llu ms", #call, (unsigned long long) _took);               \
                _result;                                                                    \
        })

/* Whatever happens to the test, the harness's bus must run again. */
static void bus_thaw(void) {
        if (frozen_bus_pid > 0)
                kill(frozen_bus_pid, SIGCONT);
        frozen_bus_pid = 0;
}

static void bus_freeze(pid_t pid) {
        REQUIRE(kill(pid, SIGSTOP) == 0, "SIGSTOP the bus: %m");
        frozen_bus_pid = pid;
}

static pid_t read_bus_pid(const char *dir) {
        char path[4096];
        FILE *f;
        int pid = 0;

        snprintf(path, sizeof(path), "%s/bus.pid", dir);
        f = fopen(path, "re");
        REQUIRE(f, "open %s: %m", path);
        REQUIRE(fscanf(f, "%d", &pid) == 1 && pid > 1, "bus pid in %s", path);
        fclose(f);
        return (pid_t) pid;
}

/* The socket path of a "unix:path=P,guid=..." address. */
static char *address_path(const char *address) {
        const char *p = strstr(address, "unix:path=");

        REQUIRE(p, "the harness's address '%s' has a unix path", address);
        p += strlen("unix:path=");
        return strndup(p, strcspn(p, ","));
}

/* A socket that accepts connections (the kernel queues them) and never says
 * a word: to a client, a bus that hangs in authentication. */
static int silent_bus_listen(const char *path) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

        REQUIRE(fd >= 0 && strlen(path) < sizeof(sa.sun_path), "socket for %s", path);
        strcpy(sa.sun_path, path);
        REQUIRE(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0, "bind %s: %m", path);
        REQUIRE(listen(fd, 64) == 0, "listen: %m");
        return fd;
}

static int record_open(sd_bus *bus, const char *name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1;

        if (sd_bus_call_method(bus, "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "Record", &error,
                               &reply, "as", 1, name) >= 0 &&
            sd_bus_message_read(reply, "h", &fd) > 0)
                fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        else
                printf("Record(%s) failed: %s\n", name, error.message ?: "");
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return fd;
}

static void test_silent_bus(const char *dir, const char *real_bus_path) {
        struct ueb_client *c = NULL;
        struct ueb_event *e = NULL;
        char path[4096];
        int listener, r;

        printf("# a bus that accepts but never answers\n");
        snprintf(path, sizeof(path), "%s/silent-bus", dir);
        listener = silent_bus_listen(path);

        {
                char address[4200];

                snprintf(address, sizeof(address), "unix:path=%s", path);
                r = CHECK_WITHIN(UEB_OPEN_WAIT_MAX_MSEC, ueb_open_bus(&c, UEB_BUS_ADDRESS, address));
        }
        CHECK(r == 0, "ueb_open_bus on a silent bus returned %d", r);
        REQUIRE(c, "the client exists anyway");
        r = CHECK_WITHIN(UEB_CALL_WAIT_MAX_MSEC, ueb_register(c, "fz_silent u32 a", &e));
        CHECK(r == 0 && e, "register on a silent bus is pending: %d (%s)", r, ueb_last_error(c));
        CHECK(e && !ueb_registered(e), "not registered");

        /* The same address now leads to the real bus: the library gives up
         * on the silent connection and finds the broker by itself. */
        close(listener);
        REQUIRE(unlink(path) == 0 && symlink(real_bus_path, path) == 0, "point %s at the real bus: %m", path);
        CHECK(e && WAIT_FOR(ueb_registered(e), RECOVERY_MSEC), "registered once the bus answers (%s)",
              ueb_last_error(c));
        CHECK_WITHIN(UEB_CLOSE_WAIT_MAX_MSEC, ueb_close(c));
}

struct register_thread {
        struct ueb_client *client;
        const char *command;
        struct ueb_event *event;
        int result;
        uint64_t took_msec;
};

static void *register_main(void *userdata) {
        struct register_thread *t = userdata;
        uint64_t start = now_msec();

        t->result = ueb_register(t->client, t->command, &t->event);
        t->took_msec = now_msec() - start;
        return NULL;
}

static void test_frozen_bus(const char *address, pid_t bus_pid) {
        struct ueb_client *c = NULL, *late = NULL, *closing = NULL;
        struct ueb_event *first = NULL, *dropped = NULL, *late_event = NULL, *closing_event = NULL;
        struct register_thread threads[2] = {
                { .command = "fz_one u32 a" },
                { .command = "fz_two u64 b" },
        };
        pthread_t tids[2];
        sd_bus *bus = NULL;
        int r, rec;

        printf("# the bus frozen (SIGSTOP) after the client connected\n");
        r = ueb_open(&c);
        REQUIRE(r == 1, "ueb_open on the running bus: %d (%s)", r, c ? ueb_last_error(c) : "");
        REQUIRE(ueb_register(c, "fz_first u8 x", &first) == 1, "register before the freeze: %s", ueb_last_error(c));
        REQUIRE(ueb_register(c, "fz_dropped u8 x", &dropped) == 1, "register before the freeze: %s",
                ueb_last_error(c));
        REQUIRE(ueb_open(&closing) == 1, "second client");
        REQUIRE(ueb_register(closing, "fz_closing u8 x", &closing_event) == 1, "its event");

        bus_freeze(bus_pid);

        /* Two host threads at once: neither waits for the other's call. */
        for (int i = 0; i < 2; i++) {
                threads[i].client = c;
                REQUIRE(pthread_create(&tids[i], NULL, register_main, &threads[i]) == 0, "thread");
        }
        for (int i = 0; i < 2; i++) {
                pthread_join(tids[i], NULL);
                printf("ueb_register(%s) from a thread took %llu ms (bound %d ms)\n", threads[i].command,
                       (unsigned long long) threads[i].took_msec, UEB_CALL_WAIT_MAX_MSEC);
                CHECK(threads[i].took_msec <= UEB_CALL_WAIT_MAX_MSEC + SCHEDULING_SLACK_MSEC,
                      "ueb_register from a thread took %llu ms", (unsigned long long) threads[i].took_msec);
                CHECK(threads[i].result == 0 && threads[i].event, "pending while the bus is frozen: %d",
                      threads[i].result);
        }

        r = CHECK_WITHIN(UEB_CALL_WAIT_MAX_MSEC, ueb_unregister(dropped));
        CHECK(r == -ETIMEDOUT, "unregister on a frozen bus: %d (%s)", r, ueb_last_error(c));
        CHECK(ueb_registered(first), "the other event keeps its registration");

        r = CHECK_WITHIN(UEB_OPEN_WAIT_MAX_MSEC, ueb_open(&late));
        CHECK(r == 0, "ueb_open on a frozen bus returned %d", r);
        REQUIRE(late, "the client exists anyway");
        r = CHECK_WITHIN(UEB_CALL_WAIT_MAX_MSEC, ueb_register(late, "fz_late u16 y", &late_event));
        CHECK(r == 0 && late_event, "register of a client that never got through: %d", r);

        CHECK_WITHIN(UEB_CLOSE_WAIT_MAX_MSEC, ueb_close(closing));

        printf("# the bus runs again\n");
        bus_thaw();
        for (int i = 0; i < 2; i++)
                CHECK(threads[i].event && WAIT_FOR(ueb_registered(threads[i].event), RECOVERY_MSEC),
                      "%s registered after the thaw (%s)", threads[i].command, ueb_last_error(c));
        CHECK(late_event && WAIT_FOR(ueb_registered(late_event), RECOVERY_MSEC),
              "the client opened during the freeze registered (%s)", ueb_last_error(late));
        CHECK(ueb_registered(first), "the first event is still registered");

        REQUIRE(bus_open_address(address, &bus) >= 0, "test connection");
        rec = record_open(bus, "fz_late");
        CHECK(rec >= 0 && late_event && WAIT_FOR(ueb_enabled(late_event), 5000), "a consumer enables fz_late");
        if (rec >= 0)
                close(rec);
        sd_bus_flush_close_unref(bus);

        CHECK(ueb_close(late) == NULL, "close");
        CHECK(ueb_close(c) == NULL, "close");
}

int main(void) {
        const char *address = getenv("UEBROKER_BUS_ADDRESS");
        const char *dir = getenv("UEBROKER_HARNESS_DIR");
        char *real_bus_path;

        setvbuf(stdout, NULL, _IOLBF, 0);
        REQUIRE(address && dir, "run me through broker-harness.sh");
        atexit(bus_thaw);
        real_bus_path = address_path(address);

        test_silent_bus(dir, real_bus_path);
        test_frozen_bus(address, read_bus_pid(dir));

        free(real_bus_path);
        printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
        return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
