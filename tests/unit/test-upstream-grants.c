/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The upstream provider's sessions (daemon/providers/upstream.c) against a
 * kernel double: the test is linked with -Wl,--wrap=ioctl, and
 * __wrap_ioctl() answers the user_events requests on the fake tracefs's
 * data file as the restricted-handle series does (DIAG_IOCSHANDLE,
 * DIAG_IOCSGRANT, DIAG_IOCSREVOKE; kernel/upstream-6.12/) or as a stock
 * kernel does (ENOTTY). What a session grants, withdraws, registers and
 * unregisters is what reaches the kernel, so a provider that forgets to
 * withdraw a grant is caught here, without a kernel. */
#include "check-tap.h"
#include "cleanup.h"
#include "event-def.h"
#include "provider.h"
#include "tracefs-util.h"
#include "user-events-abi.h"
#include "write-indexes.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern const struct provider_ops upstream_provider_ops;

/* The kernel double's state. */
#define DOUBLE_MAX 16

struct grant {
        int handle_fd;
        char name_args[128];
};

static struct {
        bool handles;                   /* false: a stock kernel, ENOTTY */
        int handles_derived;
        uint32_t last_handle_flags;
        struct grant grants[DOUBLE_MAX];
        size_t n_grants;
        int revokes;
        int regs, unregs;
        uint32_t next_write_index;      /* what DIAG_IOCSREG answers */
        uint64_t last_unreg_addr;
        uint8_t last_unreg_bit;
} kernel;

int __real_ioctl(int fd, unsigned long request, ...);
int __wrap_ioctl(int fd, unsigned long request, ...);

static struct grant *grant_find(int handle_fd, const char *name_args) {
        for (size_t i = 0; i < kernel.n_grants; i++)
                if (kernel.grants[i].handle_fd == handle_fd && strcmp(kernel.grants[i].name_args, name_args) == 0)
                        return &kernel.grants[i];
        return NULL;
}

int __wrap_ioctl(int fd, unsigned long request, ...) {
        va_list ap;
        void *arg;

        va_start(ap, request);
        arg = va_arg(ap, void *);
        va_end(ap);

        switch (request) {
        case UPSTREAM_DIAG_IOCSHANDLE: {
                const struct upstream_user_handle *h = arg;

                if (!kernel.handles) {
                        errno = ENOTTY;
                        return -1;
                }
                kernel.handles_derived++;
                kernel.last_handle_flags = h->flags;
                return fcntl(fd, F_DUPFD_CLOEXEC, 3);
        }
        case UPSTREAM_DIAG_IOCSGRANT:
        case UPSTREAM_DIAG_IOCSREVOKE: {
                const struct upstream_user_grant *g = arg;
                const char *name = (const char *) (uintptr_t) g->name_args;
                struct grant *found;

                ck_assert(kernel.handles);
                ck_assert_uint_eq(g->size, sizeof(*g));
                found = grant_find(g->handle_fd, name);
                if (request == UPSTREAM_DIAG_IOCSGRANT) {
                        if (found)
                                return 0;
                        ck_assert_uint_lt(kernel.n_grants, DOUBLE_MAX);
                        found = &kernel.grants[kernel.n_grants++];
                        found->handle_fd = g->handle_fd;
                        ck_assert_uint_lt(strlen(name), sizeof(found->name_args));
                        strcpy(found->name_args, name);
                        return 0;
                }
                kernel.revokes++;
                if (!found) {
                        errno = ENOENT;
                        return -1;
                }
                *found = kernel.grants[--kernel.n_grants];
                return 0;
        }
        case UPSTREAM_DIAG_IOCSREG: {
                struct upstream_user_reg *reg = arg;

                kernel.regs++;
                reg->write_index = kernel.next_write_index;
                return 0;
        }
        case UPSTREAM_DIAG_IOCSUNREG: {
                const struct upstream_user_unreg *unreg = arg;

                kernel.unregs++;
                kernel.last_unreg_addr = unreg->disable_addr;
                kernel.last_unreg_bit = unreg->disable_bit;
                return 0;
        }
        case UPSTREAM_DIAG_IOCSDEL:
                errno = ENOENT;
                return -1;
        }
        return __real_ioctl(fd, request, arg);
}

/* A fake tracefs: user_events_data a regular file, user_events_status a
 * FIFO (not mappable, as on Linux 6.4+). */
struct fixture {
        char dir[64];
        sd_event *event;
        struct provider *provider;
        struct event_def *defs[2];
        struct provider_event *events[2];
        struct write_indexes indexes;
        struct provider_session *session;
};

static void fixture_path(const struct fixture *f, const char *name, char *buf, size_t n) {
        ck_assert_int_lt(snprintf(buf, n, "%s/%s", f->dir, name), (int) n);
}

static void fixture_init(struct fixture *f, bool handles) {
        static const char *const commands[] = { "grants_a u32 count", "grants_b char[16] text" };
        struct provider_settings settings = { .tracefs = f->dir };
        char path[128];
        int fd;

        memset(f, 0, sizeof(*f));
        memset(&kernel, 0, sizeof(kernel));
        kernel.handles = handles;

        strcpy(f->dir, "/tmp/test-upstream-grants.XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(f->dir));
        fixture_path(f, "user_events_data", path, sizeof(path));
        fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
        fixture_path(f, "user_events_status", path, sizeof(path));
        ck_assert_int_eq(mkfifo(path, 0600), 0);

        ck_assert_int_eq(sd_event_new(&f->event), 0);
        ck_assert_int_eq(upstream_provider_ops.new(f->event, &settings, &f->provider), 0);
        /* new() asked for a write-only handle once, to learn the kernel's
         * answer. */
        ck_assert_int_eq(kernel.handles_derived, handles ? 1 : 0);

        for (size_t i = 0; i < 2; i++) {
                uint32_t status_index = (uint32_t) i + 1;

                ck_assert_int_eq(event_def_parse(commands[i], 0, &f->defs[i], NULL), 0);
                ck_assert_int_eq(upstream_provider_ops.event_add(f->provider, f->defs[i], &status_index,
                                                                 &f->events[i]), 0);
                ck_assert_uint_eq(status_index, i + 1);
        }
        ck_assert_int_eq(upstream_provider_ops.session_new(f->provider,
                                                           &(struct provider_peer) { .bus_name = ":1.7" },
                                                           &f->indexes, &f->session), 0);
}

static void fixture_done(struct fixture *f) {
        char path[128];

        if (f->session)
                upstream_provider_ops.session_free(f->provider, f->session);
        for (size_t i = 0; i < 2; i++) {
                upstream_provider_ops.event_remove(f->provider, f->events[i]);
                event_def_free(f->defs[i]);
        }
        write_indexes_done(&f->indexes);
        ck_assert_ptr_null(upstream_provider_ops.free(f->provider));
        sd_event_unref(f->event);
        fixture_path(f, "user_events_data", path, sizeof(path));
        ck_assert_int_eq(unlink(path), 0);
        fixture_path(f, "user_events_status", path, sizeof(path));
        ck_assert_int_eq(unlink(path), 0);
        ck_assert_int_eq(rmdir(f->dir), 0);
}

/* The registration string the kernel was handed for event @i. */
static const char *name_args_of(const struct fixture *f, size_t i) {
        static char buf[128];
        _cleanup_free_ char *s = user_events_registration_string(f->defs[i]);

        ck_assert_ptr_nonnull(s);
        ck_assert_uint_lt(strlen(s), sizeof(buf));
        strcpy(buf, s);
        return buf;
}

START_TEST(test_write_only_handle) {
        struct fixture f;
        int fd;

        fixture_init(&f, true);
        /* The client gets a write-only handle, not the broker's file. */
        ck_assert_int_eq(kernel.handles_derived, 2);
        ck_assert_uint_eq(kernel.last_handle_flags, UPSTREAM_USER_HANDLE_CLOEXEC);
        fd = upstream_provider_ops.session_data_fd(f.session);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
        fixture_done(&f);
}
END_TEST

START_TEST(test_grant_and_withdraw) {
        struct fixture f;
        int handle;

        fixture_init(&f, true);
        ck_assert_int_eq(upstream_provider_ops.session_grant(f.provider, f.session, f.events[0]), 0);
        /* The first grant turns the session's handle into a granting one:
         * that is the descriptor the client holds from now on. */
        ck_assert_int_eq(kernel.handles_derived, 3);
        ck_assert_uint_eq(kernel.last_handle_flags, UPSTREAM_USER_HANDLE_CLOEXEC | UPSTREAM_USER_HANDLE_GRANTING);
        handle = upstream_provider_ops.session_data_fd(f.session);
        ck_assert_int_eq(upstream_provider_ops.session_grant(f.provider, f.session, f.events[1]), 0);
        ck_assert_int_eq(kernel.handles_derived, 3);
        ck_assert_int_eq(upstream_provider_ops.session_data_fd(f.session), handle);
        ck_assert_uint_eq(kernel.n_grants, 2);
        ck_assert_ptr_nonnull(grant_find(handle, name_args_of(&f, 0)));
        ck_assert_ptr_nonnull(grant_find(handle, name_args_of(&f, 1)));

        /* Withdrawing reaches the kernel, for that definition only. */
        ck_assert_int_eq(upstream_provider_ops.session_withdraw(f.provider, f.session, f.events[0]), 0);
        ck_assert_int_eq(kernel.revokes, 1);
        ck_assert_uint_eq(kernel.n_grants, 1);
        ck_assert_ptr_null(grant_find(handle, name_args_of(&f, 0)));
        ck_assert_ptr_nonnull(grant_find(handle, name_args_of(&f, 1)));

        /* A grant the kernel no longer has (ENOENT) is no error: the
         * broker's goes all the same. */
        ck_assert_int_eq(upstream_provider_ops.session_withdraw(f.provider, f.session, f.events[0]), 0);
        ck_assert_int_eq(kernel.revokes, 2);
        ck_assert_int_eq(upstream_provider_ops.session_withdraw(f.provider, f.session, f.events[1]), 0);
        ck_assert_uint_eq(kernel.n_grants, 0);
        fixture_done(&f);
}
END_TEST

START_TEST(test_stock_kernel_grants_nothing) {
        struct fixture f;

        fixture_init(&f, false);
        /* The client holds the data file itself: nothing to grant or
         * withdraw in the kernel. */
        ck_assert_int_eq(upstream_provider_ops.session_grant(f.provider, f.session, f.events[0]), 0);
        ck_assert_int_eq(upstream_provider_ops.session_withdraw(f.provider, f.session, f.events[0]), 0);
        ck_assert_uint_eq(kernel.n_grants, 0);
        ck_assert_int_eq(kernel.revokes, 0);
        fixture_done(&f);
}
END_TEST

START_TEST(test_register_and_session_end) {
        struct fixture f;
        uint64_t page_addr;
        uint32_t index;

        fixture_init(&f, true);
        ck_assert_int_eq(write_indexes_reserve(&f.indexes), 0);
        index = write_indexes_append(&f.indexes, NULL, f.events[1]);
        ck_assert_uint_eq(index, 0);

        /* The kernel numbering the file's events otherwise than the broker
         * means someone registered behind its back: refused, and the
         * enabler just made is removed. */
        kernel.next_write_index = 3;
        ck_assert_int_eq(upstream_provider_ops.session_register(f.provider, f.session, f.events[1], index),
                         -EPROTO);
        ck_assert_int_eq(kernel.regs, 1);
        ck_assert_int_eq(kernel.unregs, 1);

        kernel.next_write_index = 0;
        ck_assert_int_eq(upstream_provider_ops.session_register(f.provider, f.session, f.events[1], index), 0);
        write_indexes_set_active(&f.indexes, index, true);
        ck_assert_int_eq(kernel.regs, 2);

        /* The enabler is the event's byte on the session's page (status
         * index 2). Ending the session removes it before the page goes. */
        page_addr = kernel.last_unreg_addr;
        upstream_provider_ops.session_free(f.provider, f.session);
        f.session = NULL;
        ck_assert_int_eq(kernel.unregs, 2);
        ck_assert_uint_eq(kernel.last_unreg_addr, page_addr);
        ck_assert_uint_eq(kernel.last_unreg_bit, __BYTE_ORDER == __LITTLE_ENDIAN ? 16 : 8);
        fixture_done(&f);
}
END_TEST

int main(void) {
        Suite *s = suite_create("upstream-grants");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, test_write_only_handle);
        tcase_add_test(tc, test_grant_and_withdraw);
        tcase_add_test(tc, test_stock_kernel_grants_nothing);
        tcase_add_test(tc, test_register_and_session_end);
        suite_add_tcase(s, tc);
        return check_tap_run(s);
}
