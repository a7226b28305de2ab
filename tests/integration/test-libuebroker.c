/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * libuebroker end to end, run by broker-harness.sh against a real uebrokerd
 * (embedded provider) on a private bus:
 *   register; the status byte flips when a Record consumer attaches and
 *   back when it leaves; ueb_write arrives intact and decodes; bad commands
 *   and NameInUse give the messages via ueb_last_error; unregister and
 *   shared handles; every descriptor O_CLOEXEC; a client without a bus;
 *   the broker killed and a new one started (under $UEBROKERD_WRAPPER, as
 *   the harness starts its own) while a thread keeps checking and writing:
 *   the client re-registers by itself (pending events too) and keeps
 *   working, without SIGPIPE or a crash; every record carries our pid and
 *   uid. One load: ueb_enabled_address() gives a byte that flips with a
 *   consumer, reads 0 while no broker runs and keeps its address across
 *   the restart (the broker, with a state directory, keeps the event's
 *   status index even past a hole left by a deleted event).
 * Plain C with its own checks (sd-bus and Check's fork-per-test do not mix).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <systemd/sd-bus.h>
#include <time.h>
#include <unistd.h>

#include "bus-util.h"
#include "check-macros.h"
#include "cleanup.h"
#include "event-decode.h"
#include "event-def.h"
#include "record-stream.h"
#include "uebroker.h"

#define TICK "lt_tick u32 count; __data_loc char[] msg"


static sd_bus *test_bus_open(const char *address) {
        sd_bus *bus = NULL;

        REQUIRE(bus_open_address(address, &bus) >= 0, "connect to %s", address);
        return bus;
}

/* Record(@name) on our own connection: the consumer's end of the stream. */
static int record_open(sd_bus *bus, const char *name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1, r;

        r = sd_bus_call_method(bus, "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "Record", &error,
                               &reply, "as", 1, name);
        if (r < 0) {
                printf("Record(%s) failed: %s %s\n", name, error.name ?: "", error.message ?: strerror(-r));
        } else if (sd_bus_message_read(reply, "h", &fd) > 0)
                fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return fd;
}

/* Registrations of @name per ListEvents, -1 if there is no such event. */
static int list_registrations(sd_bus *bus, const char *name) {
        sd_bus_message *reply = NULL;
        const char *n, *fields;
        uint32_t uid, regs;
        int enabled, result = -1;

        if (sd_bus_call_method(bus, "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "ListEvents", NULL,
                               &reply, NULL) < 0)
                return -2;
        if (sd_bus_message_enter_container(reply, 'a', "(ssuub)") >= 0)
                while (sd_bus_message_read(reply, "(ssuub)", &n, &fields, &uid, &regs, &enabled) > 0)
                        if (strcmp(n, name) == 0)
                                result = (int) regs;
        sd_bus_message_unref(reply);
        return result;
}

/* One of the broker's RecordCounters, or UINT64_MAX. */
static uint64_t record_counter(sd_bus *bus, const char *name) {
        sd_bus_message *reply = NULL;
        const char *key;
        uint64_t value, result = UINT64_MAX;

        if (sd_bus_get_property(bus, "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "RecordCounters",
                                NULL, &reply, "a{st}") < 0)
                return UINT64_MAX;
        if (sd_bus_message_enter_container(reply, 'a', "{st}") >= 0)
                while (sd_bus_message_read(reply, "{st}", &key, &value) > 0)
                        if (strcmp(key, name) == 0)
                                result = value;
        sd_bus_message_unref(reply);
        return result;
}

/* Delete(@name) on our own connection: 0 or a negative errno. */
static int event_delete(sd_bus *bus, const char *name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        int r;

        r = sd_bus_call_method(bus, "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker", "Delete", &error, NULL,
                               "sb", name, 0);
        if (r < 0)
                printf("Delete(%s) failed: %s %s\n", name, error.name ?: "", error.message ?: strerror(-r));
        sd_bus_error_free(&error);
        return r < 0 ? r : 0;
}

static int write_tick(struct ueb_event *e, uint32_t count, const char *msg) {
        uint32_t len = (uint32_t) strlen(msg) + 1, loc = len << 16 | (8 + 8);
        struct iovec iov[] = { { &count, 4 }, { &loc, 4 }, { (void *) msg, len } };

        return ueb_write(e, iov, 3);
}

/* write_tick() gathered from UEB_WRITE_IOV_MAX iovecs: the two words a
 * byte each, the message a byte each, the rest empty. */
static int write_tick_scattered(struct ueb_event *e, uint32_t count, const char *msg) {
        uint32_t len = (uint32_t) strlen(msg) + 1, loc = len << 16 | (8 + 8);
        struct iovec iov[UEB_WRITE_IOV_MAX] = {};
        int n = 0;

        REQUIRE(8 + len <= UEB_WRITE_IOV_MAX, "message short enough to scatter");
        for (int i = 0; i < 4; i++)
                iov[n++] = (struct iovec) { (uint8_t *) &count + i, 1 };
        for (int i = 0; i < 4; i++)
                iov[n++] = (struct iovec) { (uint8_t *) &loc + i, 1 };
        for (uint32_t i = 0; i < len; i++)
                iov[n++] = (struct iovec) { (void *) (msg + i), 1 };
        return ueb_write(e, iov, UEB_WRITE_IOV_MAX);
}

/* The record stream being read: a message holds several records, and what
 * record_read() has not returned yet waits here. One stream at a time. */
static uint8_t record_buf[UEB_RECORD_MESSAGE_MAX];
static size_t record_len, record_offset;
/* The last record's header, for what the text does not show. */
static struct ueb_record_header record_last;

/* Closes a stream and forgets what was left of it. */
static void record_close(int fd) {
        record_len = record_offset = 0;
        close(fd);
}

/* Reads one record (waiting up to 5 s) and returns its decoded text
 * "NAME: fields", or NULL. */
static char *record_read(int fd, struct event_def *def) {
        uint8_t *buf = record_buf;
        size_t *len = &record_len, *offset = &record_offset;
        struct pollfd p = { .fd = fd, .events = POLLIN };
        struct record_view rec;
        struct strbuf sb = STRBUF_INIT;
        ssize_t n;
        int r;

        for (;;) {
                r = record_stream_next(buf, *len, offset, &rec);
                if (r < 0)
                        return NULL;
                if (r > 0) {
                        if (rec.header.flags & UEB_RECORD_FLAG_LOST)
                                continue;
                        break;
                }
                if (poll(&p, 1, 5000) <= 0)
                        return NULL;
                n = recv(fd, buf, sizeof(record_buf), MSG_DONTWAIT);
                if (n <= 0)
                        return NULL;
                *len = (size_t) n;
                *offset = 0;
        }
        record_last = rec.header;
        /* Every record read here was written by this process (the
         * hammer is a thread of it). Each wrong one is a failure; the
         * hammer's records are many, so only the first few are shown. */
        if ((pid_t) rec.header.pid != getpid() || (uid_t) rec.header.uid != getuid()) {
                static unsigned shown;

                failures++;
                if (shown++ < 3)
                        printf("FAIL (%s:%d): record pid %u uid %u, ours %d %u\n", __FILE__, __LINE__,
                               rec.header.pid, rec.header.uid, (int) getpid(), (unsigned) getuid());
        }
        strbuf_append_n(&sb, rec.name, rec.header.name_len);
        strbuf_append(&sb, ": ");
        if (event_decode_text(def, rec.payload, rec.payload_len, &sb) < 0)
                strbuf_append(&sb, "(undecodable)");
        return strbuf_steal(&sb);
}

static bool all_fds_cloexec(void) {
        DIR *d = opendir("/proc/self/fd");
        struct dirent *de;
        bool ok = true;

        if (!d)
                return false;
        while ((de = readdir(d))) {
                int fd = atoi(de->d_name);
                int flags;

                if (de->d_name[0] == '.' || fd <= 2 || fd == dirfd(d))
                        continue;
                flags = fcntl(fd, F_GETFD);
                if (flags >= 0 && !(flags & FD_CLOEXEC)) {
                        printf("fd %d lacks FD_CLOEXEC\n", fd);
                        ok = false;
                }
        }
        closedir(d);
        return ok;
}

/* A host thread that checks and writes as fast as it can, throughout. */
struct hammer {
        struct ueb_event *event;
        volatile int stop;
        unsigned long checks, writes;
};

static void *hammer_main(void *userdata) {
        struct hammer *h = userdata;

        while (!h->stop) {
                h->checks++;
                if (ueb_enabled(h->event)) {
                        (void) write_tick(h->event, 0xffffffffu, "hammer");
                        h->writes++;
                }
        }
        return NULL;
}

/* Starts a broker as broker-harness.sh does: under $UEBROKERD_WRAPPER
 * (e.g. valgrind, whose error exit status the caller checks) with
 * $UEBROKERD_ARGS, both split into words by the shell, which then execs:
 * the pid is the broker's. */
static pid_t broker_start(const char *address) {
        const char *binary = getenv("UEBROKERD");
        const char *state = getenv("UEBROKER_STATE_DIR");
        char arg[4096], state_arg[4096];
        pid_t pid;

        REQUIRE(binary && *binary, "UEBROKERD must name the broker binary");
        snprintf(arg, sizeof(arg), "--bus-address=%s", address);
        /* The harness's state directory, if it gave its broker one. */
        snprintf(state_arg, sizeof(state_arg), "--state-dir=%s", state ?: "");
        pid = fork();
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", "exec ${UEBROKERD_WRAPPER:-} \"$0\" \"$@\" ${UEBROKERD_ARGS:-}", binary,
                      arg, "--provider=embedded", state ? state_arg : (char *) NULL, (char *) NULL);
                _exit(127);
        }
        REQUIRE(pid > 0, "fork");
        return pid;
}

/* Says what a broker restored after a restart when an event's status byte
 * moved: the index it moved by, and the saved table in the harness's state
 * directory, as TAP comments. */
static void dump_restored_table(const volatile uint8_t *now, const volatile uint8_t *before) {
        const char *state = getenv("UEBROKER_STATE_DIR");
        char line[512];
        DIR *d;

        printf("# status index moved by %td\n", now && before ? (const uint8_t *) now - (const uint8_t *) before : 0);
        d = state ? opendir(state) : NULL;
        for (struct dirent *e; d && (e = readdir(d));) {
                char path[4096];
                FILE *f;

                if (e->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", state, e->d_name);
                f = fopen(path, "re");
                printf("# %s:\n", path);
                while (f && fgets(line, sizeof(line), f))
                        printf("#   %s", line);
                if (f)
                        fclose(f);
        }
        if (d)
                closedir(d);
}

static void test_no_bus(void) {
        struct ueb_client *c = NULL;
        struct ueb_event *e = NULL;
        int r;

        printf("# a client with no bus behind its address\n");
        r = ueb_open_bus(&c, UEB_BUS_ADDRESS, "unix:path=/nonexistent/uebroker-test-bus");
        CHECK(r == 0, "ueb_open_bus without a bus returned %d", r);
        REQUIRE(c != NULL, "the client exists anyway");
        CHECK(strstr(ueb_last_error(c), "cannot connect") != NULL, "last error '%s'", ueb_last_error(c));
        r = ueb_register(c, TICK, &e);
        CHECK(r == 0, "register without a bus returned %d (pending expected)", r);
        REQUIRE(e != NULL, "pending handle");
        CHECK(!ueb_enabled(e), "not enabled");
        {
                const volatile uint8_t *addr = NULL;

                CHECK(ueb_enabled_address(e, &addr) == -EAGAIN && !addr, "no status address before a registration");
                CHECK(ueb_enabled_address(NULL, &addr) == -EINVAL, "NULL handle");
        }
        CHECK(!ueb_registered(e), "not registered");
        r = write_tick(e, 1, "x");
        CHECK(r == -ENOTCONN, "write on a pending event returned %d", r);
        r = ueb_register(c, "bad u32 a; x y", &e);
        CHECK(r == -EINVAL && e == NULL, "bad command without a bus: %d", r);
        CHECK(strstr(ueb_last_error(c), "field 2") != NULL, "parser message '%s'", ueb_last_error(c));
        CHECK(ueb_close(c) == NULL, "close");
}

int main(void) {
        const char *address = getenv("UEBROKER_BUS_ADDRESS");
        const char *old_pid_text = getenv("UEBROKERD_PID");
        _cleanup_(event_def_freep) struct event_def *def = NULL;
        struct ueb_client *c = NULL;
        struct ueb_event *tick = NULL, *tick2 = NULL, *other = NULL, *late = NULL, *oneload = NULL;
        const volatile uint8_t *one = NULL, *tick_one = NULL;
        int rec_one;
        struct ueb_stats stats;
        struct hammer hammer = {};
        pthread_t hammer_thread;
        sd_bus *bus;
        char *text;
        int rec, r, status;
        pid_t new_broker;

        setvbuf(stdout, NULL, _IOLBF, 0);
        /* A SIGPIPE would kill us: the library must never raise one. */
        signal(SIGPIPE, SIG_DFL);
        REQUIRE(address && old_pid_text, "run me through broker-harness.sh");
        REQUIRE(event_def_parse(TICK, 0, &def, NULL) == 0, "parse TICK");

        test_no_bus();

        printf("# register\n");
        bus = test_bus_open(address);
        r = ueb_open(&c);
        CHECK(r == 1, "ueb_open on the harness bus returned %d (%s)", r, c ? ueb_last_error(c) : "");
        REQUIRE(c != NULL, "client");
        r = ueb_register(c, TICK, &tick);
        REQUIRE(r == 1, "register returned %d: %s", r, ueb_last_error(c));
        CHECK(ueb_registered(tick), "registered");
        CHECK(!ueb_enabled(tick), "disabled while nobody records");
        CHECK(list_registrations(bus, "lt_tick") == 1, "ListEvents shows 1 registration");
        CHECK(all_fds_cloexec(), "every descriptor is O_CLOEXEC");

        printf("# errors\n");
        r = ueb_register(c, "lt_bad u32 a; x y", &other);
        CHECK(r == -EINVAL && other == NULL, "bad command: %d", r);
        CHECK(strstr(ueb_last_error(c), "field 2") && strstr(ueb_last_error(c), "'x'"), "message '%s'",
              ueb_last_error(c));
        r = ueb_register(c, "lt_tick u64 count", &other);
        CHECK(r == -EADDRINUSE && other == NULL, "other fields: %d", r);
        CHECK(strstr(ueb_last_error(c), "exists with other fields") != NULL, "broker's message '%s'",
              ueb_last_error(c));
        CHECK(ueb_register(c, "", &other) == -EINVAL, "empty command");

        printf("# enabled flips with a Record consumer; records arrive intact\n");
        rec = record_open(bus, "lt_tick");
        REQUIRE(rec >= 0, "Record(lt_tick)");
        CHECK(ueb_enabled(tick), "enabled while recorded");
        {
                struct timespec before, after;

                clock_gettime(CLOCK_MONOTONIC, &before);
                r = write_tick(tick, 7, "hello");
                clock_gettime(CLOCK_MONOTONIC, &after);
                CHECK(r == 0, "write returned %d", r);
                text = record_read(rec, def);
                CHECK(text && strcmp(text, "lt_tick: count=7 msg=hello") == 0, "decoded '%s'", text ?: "(nothing)");
                free(text);
                /* Through the ring: the writing thread and the time of the
                 * write come along. */
                CHECK(record_last.tid == (uint32_t) gettid(), "record tid %u, ours %d", record_last.tid, (int) gettid());
                CHECK(record_last.write_monotonic_ns >= (uint64_t) before.tv_sec * 1000000000ull + (uint64_t) before.tv_nsec &&
                      record_last.write_monotonic_ns <= (uint64_t) after.tv_sec * 1000000000ull + (uint64_t) after.tv_nsec,
                      "stamped at the write (CLOCK_MONOTONIC)");
        }
        /* A write the broker rejects (payload shorter than the fields) is
         * dropped by it, not delivered. */
        {
                uint16_t shorty = 1;
                struct iovec iov = { &shorty, 2 };

                CHECK(ueb_write(tick, &iov, 1) == 0, "short payload handed over");
                CHECK(ueb_write(tick, &iov, UEB_WRITE_IOV_MAX + 1) == -EINVAL, "too many iovecs refused");
        }
        CHECK(write_tick(tick, 8, "second") == 0, "second write");
        text = record_read(rec, def);
        CHECK(text && strcmp(text, "lt_tick: count=8 msg=second") == 0, "next record '%s' (short one dropped)",
              text ?: "(nothing)");
        free(text);
        /* The most iovecs a write takes, through the ring and through the
         * data socket (a client without a ring). */
        CHECK(write_tick_scattered(tick, 9, "scattered") == 0, "write of UEB_WRITE_IOV_MAX iovecs, ring");
        text = record_read(rec, def);
        CHECK(text && strcmp(text, "lt_tick: count=9 msg=scattered") == 0, "scattered through the ring '%s'",
              text ?: "(nothing)");
        free(text);
        {
                struct ueb_client *socket_only = NULL;
                struct ueb_event *tick_socket = NULL;

                setenv("UEBROKER_RING_KIB", "0", 1);
                r = ueb_open(&socket_only);
                unsetenv("UEBROKER_RING_KIB");
                REQUIRE(r == 1 && ueb_register(socket_only, TICK, &tick_socket) == 1, "a client without a ring");
                CHECK(write_tick_scattered(tick_socket, 10, "scattered") == 0,
                      "write of UEB_WRITE_IOV_MAX iovecs, data socket");
                text = record_read(rec, def);
                CHECK(text && strcmp(text, "lt_tick: count=10 msg=scattered") == 0,
                      "scattered through the data socket '%s'", text ?: "(nothing)");
                CHECK(record_last.tid == 0, "no ring: no writer tid");
                free(text);
                ueb_close(socket_only);
        }
        record_close(rec);
        CHECK(WAIT_FOR(!ueb_enabled(tick), 3000), "disabled again when the consumer leaves");

        printf("# shared handles and unregister\n");
        r = ueb_register(c, TICK, &tick2);
        CHECK(r == 1, "same definition again: %d", r);
        CHECK(ueb_unregister(tick2) == 0, "unregister the second handle");
        CHECK(list_registrations(bus, "lt_tick") == 1, "the first handle keeps the registration");
        rec = record_open(bus, "lt_tick");
        CHECK(rec >= 0 && ueb_enabled(tick), "first handle still enabled");
        CHECK(write_tick(tick, 9, "still") == 0, "first handle still writes");
        text = record_read(rec, def);
        CHECK(text && strcmp(text, "lt_tick: count=9 msg=still") == 0, "record '%s'", text ?: "(nothing)");
        free(text);
        r = ueb_register(c, "lt_other u8 x", &other);
        CHECK(r == 1, "second event: %d", r);
        CHECK(ueb_unregister(other) == 0, "unregister it");
        CHECK(list_registrations(bus, "lt_other") == 0, "the broker dropped that registration");

        printf("# records a full data socket refused reach the broker's counters\n");
        {
                struct ueb_event *drops = NULL;
                struct ueb_stats before, after;
                uint64_t reported = record_counter(bus, "writer-dropped"), refused = 0;
                uint8_t x = 1;
                struct iovec iov = { &x, 1 };
                pid_t broker = (pid_t) atoi(old_pid_text);

                r = ueb_register(c, "lt_drops u8 x", &drops);
                REQUIRE(r == 1, "register lt_drops: %d", r);
                ueb_event_stats(drops, &before);
                /* The broker stopped: the socket fills, then refuses. */
                REQUIRE(kill(broker, SIGSTOP) == 0, "SIGSTOP the broker");
                for (unsigned i = 0; i < 100000 && refused < 10; i++)
                        if (ueb_write(drops, &iov, 1) == -EAGAIN)
                                refused++;
                REQUIRE(kill(broker, SIGCONT) == 0, "SIGCONT the broker");
                CHECK(refused == 10, "the full socket refused %llu writes", (unsigned long long) refused);
                /* The next write that goes through carries the report. */
                r = -EAGAIN;
                for (unsigned i = 0; i < 500 && r == -EAGAIN; i++) {
                        r = ueb_write(drops, &iov, 1);
                        if (r == -EAGAIN) {
                                refused++;
                                sleep_ms(10);
                        }
                }
                CHECK(r == 0, "a write after the broker resumed: %d", r);
                ueb_event_stats(drops, &after);
                CHECK(after.dropped - before.dropped == refused, "the writer counted %llu drops, refused %llu",
                      (unsigned long long) (after.dropped - before.dropped), (unsigned long long) refused);
                CHECK(WAIT_FOR(record_counter(bus, "writer-dropped") - reported == refused, 3000),
                      "the broker counts the %llu drops as the writer's (counter moved by %llu)",
                      (unsigned long long) refused,
                      (unsigned long long) (record_counter(bus, "writer-dropped") - reported));
                CHECK(ueb_unregister(drops) == 0, "unregister lt_drops");
        }

        printf("# one load: the status byte's own address\n");
        {
                struct ueb_client *c2 = NULL;
                struct ueb_event *gap = NULL;

                /* An event registered before lt_oneload and deleted: a hole
                 * below its index that a restarted broker must not close. */
                REQUIRE(ueb_open(&c2) == 1, "second client");
                REQUIRE(ueb_register(c2, "lt_gap u8 x", &gap) == 1, "register lt_gap: %s", ueb_last_error(c2));
                r = ueb_register(c, "lt_oneload u8 x", &oneload);
                REQUIRE(r == 1, "register lt_oneload: %d", r);
                ueb_close(c2);
                CHECK(WAIT_FOR(event_delete(bus, "lt_gap") == 0, 3000), "lt_gap deleted once its client left");
        }
        CHECK(ueb_enabled_address(oneload, &one) == 0 && one, "lt_oneload has a status address");
        CHECK(ueb_enabled_address(tick, &tick_one) == 0 && tick_one, "lt_tick has a status address");
        CHECK(one && *one == 0, "the byte reads 0 while nobody records");
        rec_one = record_open(bus, "lt_oneload");
        REQUIRE(rec_one >= 0, "Record(lt_oneload)");
        CHECK(one && *one != 0 && ueb_enabled(oneload), "the byte reads non-zero while recorded");
        record_close(rec_one);
        CHECK(one && WAIT_FOR(*one == 0, 3000), "and 0 again when the consumer leaves");

        printf("# broker restart under a busy client\n");
        hammer.event = tick;
        REQUIRE(pthread_create(&hammer_thread, NULL, hammer_main, &hammer) == 0, "hammer thread");
        sleep_ms(100);
        REQUIRE(kill((pid_t) atoi(old_pid_text), SIGTERM) == 0, "SIGTERM the harness's broker");
        CHECK(WAIT_FOR(!ueb_registered(tick), 10000), "the client noticed the broker leaving");
        CHECK(!ueb_enabled(tick), "disabled while no broker runs");
        CHECK(one && *one == 0 && *tick_one == 0, "the one-load bytes read 0 while no broker runs");
        record_close(rec);

        r = ueb_register(c, "lt_late u16 y", &late);
        CHECK(r == 0 && late, "register while no broker runs is pending: %d (%s)", r, ueb_last_error(c));
        CHECK(late && !ueb_registered(late), "pending");

        new_broker = broker_start(address);
        CHECK(WAIT_FOR(ueb_registered(tick), 15000), "re-registered with the new broker");
        CHECK(late && WAIT_FOR(ueb_registered(late), 15000), "the pending event got registered too");
        CHECK(!ueb_enabled(tick), "fresh broker: nobody records");
        CHECK(list_registrations(bus, "lt_tick") == 1, "the new broker knows lt_tick with 1 registration");
        CHECK(WAIT_FOR(ueb_registered(oneload), 15000), "lt_oneload re-registered");
        {
                const volatile uint8_t *again = NULL;

                CHECK(ueb_enabled_address(oneload, &again) == 0 && again == one,
                      "lt_oneload's address survived the restart (%p, was %p)", (const void *) again,
                      (const void *) one);
                if (again != one)
                        /* Once in 50 runs, before eefdf37: what the new broker
                         * restored, so that a failure says why. */
                        dump_restored_table(again, one);
                CHECK(ueb_enabled_address(tick, &again) == 0 && again == tick_one, "so did lt_tick's");
        }
        CHECK(one && *one == 0, "fresh broker: lt_oneload's byte reads 0");
        rec_one = record_open(bus, "lt_oneload");
        REQUIRE(rec_one >= 0, "Record(lt_oneload) on the new broker");
        CHECK(one && *one != 0, "the address held across the restart reads the new broker's byte");
        record_close(rec_one);
        CHECK(one && WAIT_FOR(*one == 0, 3000), "and 0 when that consumer leaves");

        rec = record_open(bus, "lt_tick");
        REQUIRE(rec >= 0, "Record on the new broker");
        CHECK(WAIT_FOR(hammer.writes > 0, 1000) && ueb_enabled(tick), "enabled through the new status page");
        hammer.stop = 1;
        pthread_join(hammer_thread, NULL);
        printf("hammer: %lu checks, %lu writes\n", hammer.checks, hammer.writes);
        /* The hammer may have filled the data socket: a full queue is a
         * drop (-EAGAIN), never a wait, so retry until the broker drained
         * it. Then skip what the hammer wrote; ours must arrive. */
        r = -EAGAIN;
        for (unsigned i = 0; i < 500 && r == -EAGAIN; i++) {
                r = write_tick(tick, 10, "after restart");
                if (r == -EAGAIN)
                        sleep_ms(10);
        }
        CHECK(r == 0, "write after restart: %d", r);
        for (unsigned i = 0; i < 1000000; i++) {
                text = record_read(rec, def);
                if (!text || strstr(text, "count=4294967295") == NULL)
                        break;
                free(text);
        }
        CHECK(text && strcmp(text, "lt_tick: count=10 msg=after restart") == 0, "record '%s'",
              text ?: "(nothing)");
        free(text);
        record_close(rec);

        ueb_event_stats(tick, &stats);
        CHECK(stats.registrations == 2, "two registrations of lt_tick: %llu", (unsigned long long) stats.registrations);
        CHECK(stats.written >= 5, "written %llu", (unsigned long long) stats.written);
        CHECK(all_fds_cloexec(), "still every descriptor O_CLOEXEC");

        CHECK(ueb_close(c) == NULL, "close");
        CHECK(WAIT_FOR(list_registrations(bus, "lt_tick") == 0, 3000), "the broker released the client's registrations");
        sd_bus_flush_close_unref(bus);

        kill(new_broker, SIGTERM);
        REQUIRE(waitpid(new_broker, &status, 0) == new_broker, "wait for our broker");
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "our broker exited cleanly (status 0x%x)", status);

        printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
        return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
