/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* tracedat-kernel-pages FILE.dat: feeds uebctl's trace.dat writer
 * (tools/uebctl-tracedat.c) what a RecordKernelPages stream carries
 * (uebroker-record.h), with pages as the kernel fills them
 * (tracedat-page.h) on CPUs 0 and 2, and writes FILE.dat. What a kernel
 * gives in the VM, this machine's kernel cannot: test-tracedat-kernel-pages.sh
 * reads the file back with libtracecmd and trace-cmd report.
 *
 * What it sends, in order (the shell test checks each):
 *   header_page, header_event; formats of kp_a (ID 700) and kp_b (ID 701)
 *   CPU 0 page 1: kp_a a=1 (t=1000), kp_b b=2 (t=2000)     pid: ours
 *   CPU 2 page 1: kp_a a=3 (t=1500)                          pid: 999999 (no such process)
 *   a LOST notice (1 page)
 *   CPU 0 page 2: kp_a a=4 (t=3000)   marked: events dropped before it
 *   CPU 2 page 2: kp_b b=5 (t=3500)   marked too; the page stamped 3000 and
 *                 starting with a time extension of 500, as a page the
 *                 kernel copied out partly read may (the writer moves it
 *                 into the stamp, or trace-cmd would not show the drop)
 *   hostile: a page whose commit exceeds it, a page of another size, a
 *   page of CPU 5000, a format without an ID: all skipped
 * and prints "pid N" (ours) on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "event-def.h"
#include "tracedat-page.h"
#include "uebctl-tracedat.h"

#define PAGE_SIZE_USED 4096u

static int failed;

#define CHECK(expr)                                                                     \
        do {                                                                            \
                if (!(expr)) {                                                          \
                        fprintf(stderr, "tracedat-kernel-pages: %s:%d: %s\n", __FILE__, \
                                __LINE__, #expr);                                       \
                        failed = 1;                                                     \
                }                                                                       \
        } while (0)

static void send_file(struct tracedat_writer *w, uint16_t flags, const char *name, const char *text) {
        CHECK(tracedat_writer_add_kernel_file(w, flags, name, strlen(name), text, strlen(text)) == 0);
}

/* One event: struct trace_entry (type, flags, preempt_count, pid), then a u32. */
static void add_event(struct tracedat_page *p, uint64_t ts, uint16_t type, int32_t pid, uint32_t value) {
        uint8_t entry[8] = { 0 };

        memcpy(entry, &type, sizeof(type));
        memcpy(entry + 4, &pid, sizeof(pid));
        CHECK(tracedat_page_add(p, ts, entry, sizeof(entry), &value, sizeof(value)) == 0);
}

static int send_page(struct tracedat_writer *w, struct tracedat_page *p, uint32_t cpu, size_t len) {
        struct ueb_record_header h = { .flags = UEB_RECORD_FLAG_KERNEL_PAGE, .cpu = cpu };
        const uint8_t *data = tracedat_page_finish(p);
        int r = tracedat_writer_add_kernel_page(w, &h, data, len);

        tracedat_page_reset(p);
        return r;
}

int main(int argc, char *argv[]) {
        struct event_def *a = NULL, *b = NULL;
        struct ueb_record_header lost = { .flags = UEB_RECORD_FLAG_LOST, .lost_count = 1 };
        struct tracedat_writer *w = NULL;
        struct tracedat_page page;
        char *header_page, *format_a, *format_b;
        int32_t pid = (int32_t) getpid();
        uint8_t bad[PAGE_SIZE_USED];
        unsigned long commit;

        if (argc != 2) {
                fprintf(stderr, "usage: tracedat-kernel-pages FILE.dat\n");
                return 2;
        }
        if (event_def_parse("kp_a u32 a", 0, &a, NULL) < 0 || event_def_parse("kp_b u32 b", 0, &b, NULL) < 0 ||
            tracedat_page_init(&page, PAGE_SIZE_USED) < 0 || tracedat_writer_new(argv[1], &w) < 0)
                return 1;
        header_page = tracedat_header_page_text(PAGE_SIZE_USED);
        format_a = event_def_format_text(a, 700);
        format_b = event_def_format_text(b, 701);
        CHECK(header_page && format_a && format_b);

        send_file(w, UEB_RECORD_FLAG_KERNEL_HEADER, "header_page", header_page);
        send_file(w, UEB_RECORD_FLAG_KERNEL_HEADER, "header_event", tracedat_header_event_text());
        send_file(w, UEB_RECORD_FLAG_KERNEL_FORMAT, "kp_a", format_a);
        send_file(w, UEB_RECORD_FLAG_KERNEL_FORMAT, "kp_b", format_b);
        /* No "ID:" line: skipped, said on stderr. */
        send_file(w, UEB_RECORD_FLAG_KERNEL_FORMAT, "kp_c", "name: kp_c\nformat:\n");

        add_event(&page, 1000, 700, pid, 1);
        add_event(&page, 2000, 701, pid, 2);
        CHECK(send_page(w, &page, 0, PAGE_SIZE_USED) == 2);
        add_event(&page, 1500, 700, 999999, 3);
        CHECK(send_page(w, &page, 2, PAGE_SIZE_USED) == 1);
        CHECK(tracedat_writer_add_lost(w, &lost) == 0);
        add_event(&page, 3000, 700, pid, 4);
        CHECK(send_page(w, &page, 0, PAGE_SIZE_USED) == 1);
        add_event(&page, 3500, 701, pid, 5);
        {
                uint32_t extend[2] = { TRACEDAT_TYPE_TIME_EXTEND | (500u << 5), 0 };
                uint64_t stamp = 3000;
                const uint8_t *built = tracedat_page_finish(&page);

                memcpy(bad, built, sizeof(bad));
                memcpy(&commit, bad + 8, sizeof(commit));
                memmove(bad + TRACEDAT_PAGE_HEADER_SIZE + 8, bad + TRACEDAT_PAGE_HEADER_SIZE,
                        sizeof(bad) - TRACEDAT_PAGE_HEADER_SIZE - 8);
                memcpy(bad + TRACEDAT_PAGE_HEADER_SIZE, extend, sizeof(extend));
                commit += 8;
                memcpy(bad + 8, &commit, sizeof(commit));
                memcpy(bad, &stamp, sizeof(stamp));
                tracedat_page_reset(&page);
                CHECK(tracedat_writer_add_kernel_page(
                              w, &(struct ueb_record_header) { .flags = UEB_RECORD_FLAG_KERNEL_PAGE, .cpu = 2 },
                              bad, sizeof(bad)) == 1);
        }

        /* Hostile pages: each skipped, nothing else changes. */
        add_event(&page, 4000, 700, pid, 6);
        memcpy(bad, tracedat_page_finish(&page), sizeof(bad));
        commit = PAGE_SIZE_USED;        /* more than the page holds after its header */
        memcpy(bad + 8, &commit, sizeof(commit));
        CHECK(tracedat_writer_add_kernel_page(w, &(struct ueb_record_header) { .cpu = 0 }, bad, sizeof(bad)) ==
              -EINVAL);
        add_event(&page, 4000, 700, pid, 7);
        CHECK(send_page(w, &page, 0, PAGE_SIZE_USED / 2) == -EINVAL);
        add_event(&page, 4000, 700, pid, 8);
        CHECK(send_page(w, &page, 5000, PAGE_SIZE_USED) == -EINVAL);

        CHECK(tracedat_writer_written(w) == 5);
        CHECK(tracedat_writer_skipped(w) == 3);
        CHECK(tracedat_writer_lost(w) == 1);
        CHECK(tracedat_writer_kernel_pages(w) == 4);
        CHECK(tracedat_writer_kernel_cpus(w) == 3);
        CHECK(tracedat_writer_finish(w) == 0);

        printf("pid %d\n", (int) pid);
        free(header_page);
        free(format_a);
        free(format_b);
        tracedat_page_done(&page);
        event_def_free(a);
        event_def_free(b);
        return failed;
}
