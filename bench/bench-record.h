/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* A Record consumer for the benches that flood the broker: Record on one
 * event, and a thread reading what arrives (record-stream.h: many records
 * per message), counting records and LOST notices. */

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "fd-util.h"
#include "record-stream.h"

struct bench_reader {
        int fd;
        volatile int stop;
        unsigned long long messages;
        unsigned long long records;
        unsigned long long lost;        /* sum of LOST notices */
};

/* Reads messages until stopped and drained. */
static inline void *bench_reader_main(void *userdata) {
        struct bench_reader *rd = userdata;
        static __thread uint8_t buf[UEB_RECORD_MESSAGE_MAX];

        for (;;) {
                struct pollfd p = { .fd = rd->fd, .events = POLLIN };
                struct record_view rec;
                size_t offset = 0;
                ssize_t n;

                if (poll(&p, 1, 100) == 0) {
                        if (rd->stop)
                                break;
                        continue;
                }
                n = recv(rd->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        break;
                if (n < 0)
                        continue;
                rd->messages++;
                while (record_stream_next(buf, (size_t) n, &offset, &rec) > 0) {
                        if (rec.header.flags & UEB_RECORD_FLAG_LOST)
                                rd->lost += rec.header.lost_count;
                        else
                                rd->records++;
                }
        }
        return NULL;
}

/* Record of @event_name: the record stream's fd (ours), or negative. */
static inline int bench_record_open(sd_bus *bus, const char *event_name) {
        sd_bus_error error = SD_BUS_ERROR_NULL;
        sd_bus_message *reply = NULL;
        int fd = -1;

        if (sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "Record", &error,
                               &reply, "as", 1, event_name) < 0)
                fprintf(stderr, "Record: %s\n", error.message ?: error.name);
        else if (sd_bus_message_read(reply, "h", &fd) > 0)
                fd = fd_dup_cloexec(fd);
        sd_bus_message_unref(reply);
        sd_bus_error_free(&error);
        return fd;
}
