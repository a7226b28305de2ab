/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What saving the event table costs the Register that creates an event
 * (and the Delete that removes one): the broker rewrites STATE_DIR/events
 * whole, fsync()s and renames it before such a reply goes (daemon/bus/broker.c),
 * so that a crash right after cannot take back what the caller was told.
 *
 * For 100, 1000 and 4095 events (the table's bound), with short commands
 * and with the longest the grammar allows, on a tmpfs (/dev/shm, as /run,
 * the default state directory, is) and on /var/tmp (a disk, for a site
 * that moves it there):
 * median and p99 of 50 saves each, in microseconds.
 *
 *     bench-state-save
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-event.h>
#include <unistd.h>

#include "bench-util.h"
#include "event-registry.h"
#include "event-store.h"
#include "provider-link.h"
#include "user-charges.h"

#define ROUNDS 50

/* Adds @n events with commands of about @long_fields; 0 or -errno. */
static int fill(struct event_registry *reg, unsigned n, bool long_fields) {
        char command[600];

        for (unsigned i = 0; i < n; i++) {
                struct event_def *def = NULL;
                struct broker_event *ev;
                int r;

                if (long_fields) {
                        int at = snprintf(command, sizeof(command), "bench_state_%04u_%s", i,
                                          "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
                        for (unsigned j = 0; j < 16 && at < 480; j++)
                                at += snprintf(command + at, sizeof(command) - (size_t) at, "%su32 field_name_%02u",
                                               j ? "; " : " ", j);
                } else
                        snprintf(command, sizeof(command), "bench_state_%04u u32 count; char[32] msg", i);
                r = event_def_parse(command, 0, &def, NULL);
                if (r < 0)
                        return r;
                r = event_registry_add(reg, def, 1000 + i % 16, &ev);
                if (r < 0) {
                        event_def_free(def);
                        return r;
                }
        }
        return 0;
}

/* Median and p99 of ROUNDS saves into @dir, in microseconds; false when
 * @dir cannot be written. */
static bool measure(struct event_registry *reg, const char *dir, double *ret_median, double *ret_p99) {
        uint64_t took[ROUNDS];

        for (unsigned i = 0; i < ROUNDS; i++) {
                uint64_t t0 = bench_now_ns();

                if (event_store_save(reg, dir) < 0)
                        return false;
                took[i] = bench_now_ns() - t0;
        }
        qsort(took, ROUNDS, sizeof(took[0]), bench_compare_u64);
        *ret_median = (double) bench_rank(took, ROUNDS, 50) / 1000.0;
        *ret_p99 = (double) bench_rank(took, ROUNDS, 99) / 1000.0;
        return true;
}

int main(void) {
        static const unsigned sizes[] = { 100, 1000, 4095 };
        char tmpfs_dir[] = "/dev/shm/uebroker-bench-XXXXXX", disk_dir[] = "/var/tmp/uebroker-bench-XXXXXX";
        struct charge_bounds bounds = {};
        sd_event *event = NULL;
        int r = 0;

        for (unsigned k = 0; k < _CHARGE_KIND_MAX; k++)
                bounds.kind[k] = (struct charge_bound) { .pool = UINT64_MAX, .share = UINT64_MAX };
        if (!mkdtemp(tmpfs_dir) || !mkdtemp(disk_dir)) {
                fprintf(stderr, "bench-state-save: cannot make a directory in /dev/shm and /var/tmp: %m\n");
                return 1;
        }
        if (sd_event_new(&event) < 0)
                return 1;
        printf("%-30s %14s %14s | %14s %14s\n", "events saved before a reply", "tmpfs p50 us", "p99 us",
               "disk p50 us", "p99 us");
        for (unsigned s = 0; s < 2 && r >= 0; s++)
                for (unsigned i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && r >= 0; i++) {
                        struct provider_link link = {};
                        struct user_charges charges;
                        struct event_registry reg;
                        double p50, p99, disk_p50, disk_p99;
                        char what[64];

                        user_charges_init(&charges, &bounds);
                        r = provider_link_start(&link, event, &embedded_provider_ops, NULL);
                        if (r < 0)
                                break;
                        event_registry_init(&reg, &link, &charges);
                        r = fill(&reg, sizes[i], s == 1);
                        if (r >= 0 && measure(&reg, tmpfs_dir, &p50, &p99) &&
                            measure(&reg, disk_dir, &disk_p50, &disk_p99)) {
                                snprintf(what, sizeof(what), "%u, %s commands", sizes[i], s ? "511-byte" : "short");
                                printf("%-30s %14.1f %14.1f | %14.1f %14.1f\n", what, p50, p99, disk_p50, disk_p99);
                        } else if (r >= 0)
                                r = -EIO;
                        event_registry_done(&reg);
                        provider_link_stop(&link);
                        user_charges_done(&charges);
                }
        if (r < 0)
                fprintf(stderr, "bench-state-save: %s\n", strerror(-r));
        for (const char *dir = tmpfs_dir; dir; dir = dir == tmpfs_dir ? disk_dir : NULL) {
                char path[128];

                snprintf(path, sizeof(path), "%s/%s", dir, EVENT_STORE_FILE);
                if (unlink(path) < 0 && errno != ENOENT)
                        fprintf(stderr, "bench-state-save: cannot remove %s: %m\n", path);
                if (rmdir(dir) < 0)
                        fprintf(stderr, "bench-state-save: cannot remove %s: %m\n", dir);
        }
        sd_event_unref(event);
        return r < 0;
}
