/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * vm-grant: a client that takes the data file Authorize hands out and uses
 * it behind the broker's back, as a hostile program would (the vm tier's
 * scenario runs it as uid 1000). On a kernel with restricted handles
 * (kernel/upstream-6.12/) that descriptor is a granting handle and the
 * kernel holds the line; on a stock kernel it is the data file itself.
 *
 *   vm-grant NAME [leave|stay]
 *
 * Authorizes "NAME u32 a" and prints one line per step (flushed):
 *   "authorized"                          (else "authorize failed: MESSAGE", exit 1)
 *   "reg granted R index I"               its own DIAG_IOCSREG of the granted definition
 *   "reg other R"                         DIAG_IOCSREG of "NAME_other u32 a", never granted
 *   "del R"                               DIAG_IOCSDEL of NAME
 *   "enabled 0|1"                         after waiting up to 10 s for its enable word
 *   "withdrawn"                           Withdraw(NAME) answered, or with "leave":
 *   "left"                                it closed its bus connection, keeping the
 *                                         descriptor (the broker ends its session),
 *                                         or with "stay":
 *   "holding"                             then it waits up to 30 s for its enable word
 *                                         to clear (the scenario kills the broker)
 *   "word W write R"                      its enable word and a write to its index after
 *   "reg again R"                         with "stay": DIAG_IOCSREG of the granted
 *                                         definition once more
 * where R is 0 or -ERRNO (its name). Exit 0 once every step ran.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#include "user-events-abi.h"

#define BROKER "org.uebroker1", "/org/uebroker1", "org.uebroker1.Broker"

static volatile uint32_t words[2];

static const char *result(long r) {
        static char buf[64];

        if (r >= 0)
                return "0";
        snprintf(buf, sizeof(buf), "-%s", strerrorname_np((int) -r) ?: "?");
        return buf;
}

static long reg(int fd, const char *def, int word, uint32_t *ret_index) {
        struct upstream_user_reg r = {
                .size = sizeof(r),
                .enable_size = 4,
                .enable_addr = (uint64_t) (uintptr_t) &words[word],
                .name_args = (uint64_t) (uintptr_t) def,
        };

        if (ioctl(fd, UPSTREAM_DIAG_IOCSREG, &r) < 0)
                return -errno;
        if (ret_index)
                *ret_index = r.write_index;
        return 0;
}

int main(int argc, char *argv[]) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        char def[256], other[256];
        uint32_t index = 0, value = 7;
        sd_bus *bus = NULL;
        int fd, r;
        long rr;

        if (argc < 2 || argc > 3 || strlen(argv[1]) > 200 ||
            (argc == 3 && strcmp(argv[2], "leave") != 0 && strcmp(argv[2], "stay") != 0)) {
                fprintf(stderr, "usage: vm-grant NAME [leave|stay]\n");
                return 2;
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        snprintf(def, sizeof(def), "%s u32 a", argv[1]);
        snprintf(other, sizeof(other), "%s_other u32 a", argv[1]);

        r = sd_bus_open_system(&bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, BROKER, "Authorize", &error, &reply, "s", def);
        if (r >= 0)
                r = sd_bus_message_read(reply, "h", &fd);
        if (r < 0) {
                printf("authorize failed: %s\n", error.message ?: strerror(-r));
                return 1;
        }
        fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        printf("authorized\n");

        rr = reg(fd, def, 0, &index);
        printf("reg granted %s index %u\n", result(rr), index);
        printf("reg other %s\n", result(reg(fd, other, 1, NULL)));
        printf("del %s\n", result(ioctl(fd, UPSTREAM_DIAG_IOCSDEL, argv[1]) < 0 ? -errno : 0));

        for (int i = 0; i < 100 && !words[0]; i++)
                usleep(100000);
        printf("enabled %d\n", words[0] ? 1 : 0);

        sd_bus_message_unref(reply);
        reply = NULL;
        if (argc == 3 && strcmp(argv[2], "stay") == 0) {
                /* Session and descriptor kept; the broker goes away. */
                printf("holding\n");
                for (int i = 0; i < 300 && words[0]; i++)
                        usleep(100000);
        } else if (argc == 3) {
                /* The broker sees the connection go and ends the session;
                 * give it a moment to act on it. */
                bus = sd_bus_flush_close_unref(bus);
                for (int i = 0; i < 50 && words[0]; i++)
                        usleep(100000);
                printf("left\n");
        } else {
                r = sd_bus_call_method(bus, BROKER, "Withdraw", &error, &reply, "s", argv[1]);
                if (r < 0)
                        printf("withdraw failed: %s\n", error.message ?: strerror(-r));
                else
                        printf("withdrawn\n");
        }
        {
                int32_t idx = (int32_t) index;
                struct iovec io[2] = { { &idx, sizeof(idx) }, { &value, sizeof(value) } };

                rr = writev(fd, io, 2) < 0 ? -errno : 0;
        }
        printf("word %u write %s\n", words[0], result(rr));
        if (argc == 3 && strcmp(argv[2], "stay") == 0)
                printf("reg again %s\n", result(reg(fd, def, 1, NULL)));

        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        sd_bus_unref(bus);
        close(fd);
        return 0;
}
