/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-bus.h>

#include "broker-bus.h"
#include "bus-util.h"
#include "cleanup.h"
#include "event-def.h"
#include "fd-util.h"
#include "list.h"
#include "preload-files.h"
#include "status-text.h"
#include "user-events-abi.h"

/* libuebroker's bound on one call to the broker (client-internal.h). */
#define PRELOAD_CALL_TIMEOUT_USEC (3u * 1000000u)

struct enabler {
        uint64_t addr;
        uint8_t bit;
        uint8_t size;                   /* 4 or 8 */
        uint32_t status_index;
        bool set;                       /* what we last wrote */
        LIST_FIELDS(struct enabler, enablers);
};

/* Who registers on a file, learnt at its first DIAG_IOCSREG. */
enum file_mode {
        FILE_MODE_UNKNOWN,
        FILE_MODE_KERNEL,               /* the broker's Authorize, then the program's own ioctl (upstream) */
        FILE_MODE_BROKER,               /* the broker's Register (embedded, v1): enable words followed here */
};

struct preload_file {
        int fd;                         /* the program's */
        enum file_mode mode;            /* under call_lock */
        pid_t pid;                      /* of the process that opened it */
        pthread_mutex_t call_lock;      /* one broker call at a time */
        sd_bus *bus;                    /* private; under call_lock */
        bool has_data;                  /* the broker's data file is at fd */
        const uint8_t *status;          /* the status page, mapped read-only; NULL before */
        LIST_HEAD(struct enabler, enablers);    /* under files_lock */
        LIST_FIELDS(struct preload_file, files);
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static LIST_HEAD(struct preload_file, files);
static unsigned n_files;                /* written under files_lock, read without */
static bool sync_running;               /* under files_lock */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static __thread bool in_library;

/* Whether @path's last component is @name. */
static bool path_names(const char *path, const char *name) {
        size_t len, n = strlen(name);

        if (!path)
                return false;
        len = strlen(path);
        return len >= n && strcmp(path + len - n, name) == 0 && (len == n || path[len - n - 1] == '/');
}

bool preload_path_is_data_file(const char *path) {
        return path_names(path, "user_events_data");
}

bool preload_path_is_status_file(const char *path) {
        return path_names(path, "user_events_status");
}

static bool debug_enabled(void) {
        const char *e = secure_getenv("UEBROKER_DEBUG");

        return e && *e && strcmp(e, "0") != 0;
}

static void debug(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void debug(const char *format, ...) {
        va_list ap;

        if (!debug_enabled())
                return;
        va_start(ap, format);
        fputs("uebroker-preload: ", stderr);
        vfprintf(stderr, format, ap);
        fputc('\n', stderr);
        va_end(ap);
}

int preload_errno_from_bus(const char *method, const char *name, int fallback) {
        bool del = method && strcmp(method, "Delete") == 0;

        if (!name)
                return fallback;
        if (strcmp(name, BROKER_ERROR_INVALID_COMMAND) == 0)
                return EINVAL;
        if (strcmp(name, BROKER_ERROR_NAME_IN_USE) == 0)
                return EADDRINUSE;
        if (strcmp(name, SD_BUS_ERROR_ACCESS_DENIED) == 0)
                return del ? EPERM : EACCES;    /* polkit, or a reservation */
        if (strcmp(name, BROKER_ERROR_QUOTA_EXCEEDED) == 0)
                return ENOSPC;
        if (strcmp(name, BROKER_ERROR_BUSY) == 0)
                return del ? EBUSY : EAGAIN;
        if (strcmp(name, BROKER_ERROR_NO_SUCH_EVENT) == 0)
                return ENOENT;
        if (strcmp(name, BROKER_ERROR_NOT_SUPPORTED) == 0)
                return EOPNOTSUPP;
        if (strcmp(name, SD_BUS_ERROR_LIMITS_EXCEEDED) == 0)
                return EAGAIN;                  /* too many checks waiting */
        if (strcmp(name, SD_BUS_ERROR_SERVICE_UNKNOWN) == 0 || strcmp(name, SD_BUS_ERROR_NAME_HAS_NO_OWNER) == 0)
                return ENOENT;                  /* no broker: as no tracefs */
        if (strcmp(name, SD_BUS_ERROR_NO_REPLY) == 0 || strcmp(name, SD_BUS_ERROR_TIMEOUT) == 0)
                return ETIMEDOUT;
        if (strcmp(name, SD_BUS_ERROR_UNKNOWN_METHOD) == 0 && method && strcmp(method, "Authorize") == 0)
                return EOPNOTSUPP;              /* a broker older than Authorize: Register */
        return fallback;
}

/* The program's memory, read as the kernel reads it: EFAULT, never a
 * crash, for an address that is not there. */
static ssize_t read_own(void *to, uint64_t from, size_t len) {
        struct iovec local = { to, len }, remote = { (void *) (uintptr_t) from, len };

        return process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
}

static int write_own(uint64_t to, const void *from, size_t len) {
        struct iovec local = { (void *) from, len }, remote = { (void *) (uintptr_t) to, len };
        ssize_t n = process_vm_writev(getpid(), &local, 1, &remote, 1, 0);

        return n == (ssize_t) len ? 0 : -EFAULT;
}

/* A structure of the kernel interface at @from, led by its u32 size:
 * refused as the kernel refuses it (larger than a page, smaller than
 * @len); @len bytes of it read into @to. */
static int read_own_sized(void *to, uint64_t from, size_t len) {
        uint32_t size;

        if (read_own(&size, from, sizeof(size)) != sizeof(size))
                return -EFAULT;
        if (size > 4096)
                return -E2BIG;
        if (size < len)
                return -EINVAL;
        if (read_own(to, from, len) != (ssize_t) len)
                return -EFAULT;
        return 0;
}

/* A NUL-terminated string of at most @max bytes at @from. */
static int read_own_string(uint64_t from, char *buf, size_t max) {
        size_t done = 0;

        /* Page by page: the string may end just before an unmapped page. */
        while (done < max) {
                size_t chunk = 4096 - ((from + done) & 4095);
                ssize_t n;

                if (chunk > max - done)
                        chunk = max - done;
                n = read_own(buf + done, from + done, chunk);
                if (n <= 0)
                        return -EFAULT;
                if (memchr(buf + done, '\0', (size_t) n))
                        return 0;
                done += (size_t) n;
        }
        return -E2BIG;
}

/* Sets or clears @e's bit: atomically, the rest of the word untouched. */
static void enabler_write(struct enabler *e, bool on) {
        if (e->size == 8) {
                uint64_t mask = UINT64_C(1) << e->bit, *word = (uint64_t *) (uintptr_t) e->addr;

                if (on)
                        __atomic_fetch_or(word, mask, __ATOMIC_RELAXED);
                else
                        __atomic_fetch_and(word, ~mask, __ATOMIC_RELAXED);
        } else {
                uint32_t mask = UINT32_C(1) << e->bit, *word = (uint32_t *) (uintptr_t) e->addr;

                if (on)
                        __atomic_fetch_or(word, mask, __ATOMIC_RELAXED);
                else
                        __atomic_fetch_and(word, ~mask, __ATOMIC_RELAXED);
        }
        e->set = on;
}

/* The enable words follow the status bytes. Under files_lock. Returns
 * whether any word is left to follow. */
static bool sync_enablers(void) {
        pid_t self = getpid();
        bool any = false;

        LIST_FOREACH(files, f, files) {
                if (f->pid != self || !f->status)
                        continue;
                LIST_FOREACH(enablers, e, f->enablers) {
                        bool on = __atomic_load_n(&f->status[e->status_index], __ATOMIC_RELAXED) != 0;

                        if (on != e->set)
                                enabler_write(e, on);
                        any = true;
                }
        }
        return any;
}

static void *sync_thread(void *arg) {
        const struct timespec interval = { 0, PRELOAD_SYNC_INTERVAL_MSEC * 1000000L };

        (void) arg;
        for (;;) {
                bool more;

                (void) nanosleep(&interval, NULL);
                pthread_mutex_lock(&files_lock);
                more = sync_enablers();
                if (!more)
                        sync_running = false;   /* the next registration starts another */
                pthread_mutex_unlock(&files_lock);
                if (!more)
                        return NULL;
        }
}

/* Under files_lock. */
static int sync_start(void) {
        pthread_attr_t attr;
        pthread_t thread;
        sigset_t all, old;
        int r;

        if (sync_running)
                return 0;
        /* No signal of the program's lands on our thread. */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        r = pthread_create(&thread, &attr, sync_thread, NULL);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (r != 0)
                return -r;
        sync_running = true;
        return 0;
}

/* Fork: the table is consistent in the child; its copy of the sync thread
 * is gone, and files of the parent answer EAGAIN there. */
static void atfork_prepare(void) {
        pthread_mutex_lock(&files_lock);
}

static void atfork_parent(void) {
        pthread_mutex_unlock(&files_lock);
}

static void atfork_child(void) {
        pthread_mutex_init(&files_lock, NULL);
        sync_running = false;
}

static void atfork_register(void) {
        (void) pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static struct preload_file *file_find(int fd) {
        LIST_FOREACH(files, f, files)
                if (f->fd == fd)
                        return f;
        return NULL;
}

static struct preload_file *file_free(struct preload_file *f) {
        if (!f)
                return NULL;
        while (f->enablers) {
                struct enabler *e = f->enablers;

                LIST_REMOVE(enablers, f->enablers, e);
                free(e);
        }
        if (f->pid == getpid())
                sd_bus_flush_close_unref(f->bus);
        if (f->status)
                munmap((void *) f->status, STATUS_PAGE_SIZE);
        pthread_mutex_destroy(&f->call_lock);
        free(f);
        return NULL;
}

int preload_open(int flags) {
        struct preload_file *f;
        int fd;

        if (in_library)
                return -EAGAIN;
        pthread_once(&atfork_once, atfork_register);
        f = calloc(1, sizeof(*f));
        if (!f)
                return -ENOMEM;
        /* Until the first registration: writes go nowhere, as they would
         * with no write index of the kernel's file to name. */
        fd = open("/dev/null", O_WRONLY | (flags & O_CLOEXEC));
        if (fd < 0) {
                int r = -errno;

                free(f);
                return r;
        }
        f->fd = fd;
        f->pid = getpid();
        pthread_mutex_init(&f->call_lock, NULL);
        pthread_mutex_lock(&files_lock);
        LIST_PREPEND(files, files, f);
        __atomic_store_n(&n_files, n_files + 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&files_lock);
        debug("user_events_data opened as fd %d, through the broker", fd);
        return fd;
}

bool preload_owns(int fd) {
        bool owned;

        /* Every close() and ioctl() of the program asks: no lock while the
         * program has no data file open. */
        if (fd < 0 || __atomic_load_n(&n_files, __ATOMIC_ACQUIRE) == 0)
                return false;
        pthread_mutex_lock(&files_lock);
        owned = file_find(fd) != NULL;
        pthread_mutex_unlock(&files_lock);
        return owned;
}

void preload_forget(int fd) {
        struct preload_file *f;

        if (fd < 0)
                return;
        pthread_mutex_lock(&files_lock);
        f = file_find(fd);
        if (f) {
                LIST_REMOVE(files, files, f);
                __atomic_store_n(&n_files, n_files - 1, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&files_lock);
        if (!f)
                return;
        /* No call of another thread is using it: the program closes it. */
        pthread_mutex_lock(&f->call_lock);
        pthread_mutex_unlock(&f->call_lock);
        file_free(f);
}

/* A private connection to the broker's bus, never the program's. */
static int bus_connect(sd_bus **ret) {
        const char *address = secure_getenv("UEBROKER_BUS_ADDRESS");
        sd_bus *bus = NULL;
        int r;

        if (address && *address)
                r = bus_open_address(address, &bus);
        else
                r = sd_bus_open_system_with_description(&bus, "uebroker-preload");
        if (r < 0)
                return r;
        (void) sd_bus_set_method_call_timeout(bus, PRELOAD_CALL_TIMEOUT_USEC);
        *ret = bus;
        return 0;
}

static int file_connect(struct preload_file *f) {
        return f->bus ? 0 : bus_connect(&f->bus);
}

int preload_open_status(int flags) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        _cleanup_(sd_bus_flush_close_unrefp) sd_bus *bus = NULL;
        _cleanup_close_ int fd = -EBADF;
        const char *text;
        size_t len, done = 0;
        int r;

        if (in_library)
                return -EAGAIN;
        if ((flags & O_ACCMODE) != O_RDONLY)
                return -EACCES;         /* the kernel's file is read-only */
        in_library = true;
        r = bus_connect(&bus);
        if (r >= 0)
                r = sd_bus_call_method(bus, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE, "GetStatus",
                                       &error, &reply, NULL);
        if (r >= 0)
                r = sd_bus_message_read(reply, "s", &text);
        in_library = false;
        if (r < 0) {
                r = -preload_errno_from_bus("GetStatus", error.name, -r);
                debug("user_events_status: %s", error.message ?: strerror(-r));
                return r;
        }
        /* What the broker says now, as the kernel's file says it when read. */
        fd = memfd_create("user_events_status", MFD_CLOEXEC);
        if (fd < 0)
                return -errno;
        for (len = strlen(text); done < len;) {
                ssize_t n = write(fd, text + done, len - done);

                if (n < 0)
                        return -errno;
                done += (size_t) n;
        }
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        if (!(flags & O_CLOEXEC) && fcntl(fd, F_SETFD, 0) < 0)
                return -errno;
        debug("user_events_status opened as fd %d: the broker's status text", fd);
        return TAKE_FD(fd);
}

/* A call to the broker on @f's connection; a refusal becomes the kernel
 * interface's errno. Under f->call_lock. */
static int file_call(struct preload_file *f, const char *method, const char *what, sd_bus_message **reply,
                     const char *types, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        va_list ap;
        int r;

        r = file_connect(f);
        if (r < 0) {
                debug("%s %s: cannot connect to the bus: %s", method, what, strerror(-r));
                return r;
        }
        r = sd_bus_message_new_method_call(f->bus, &m, BROKER_BUS_NAME, BROKER_OBJECT_PATH, BROKER_INTERFACE,
                                           method);
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = sd_bus_call(f->bus, m, 0, &error, reply);
        if (r >= 0)
                return 0;
        r = -preload_errno_from_bus(method, error.name, -r);
        debug("%s %s: %s (%s), errno %s", method, what, error.message ?: strerror(-r), error.name ?: "no reply",
              strerrorname_np(-r) ?: "?");
        return r;
}

static int check_reg(const struct upstream_user_reg *reg) {
        if (reg->enable_size != 4 && reg->enable_size != 8)
                return -EINVAL;
        if (reg->enable_bit >= reg->enable_size * 8u)
                return -EINVAL;
        if (reg->enable_addr % reg->enable_size != 0)
                return -EINVAL;
        if (reg->flags >= (UPSTREAM_USER_EVENT_REG_MULTI_FORMAT << 1))
                return -EINVAL;
        /* Events are the broker's to keep or let go. */
        if (reg->flags & UPSTREAM_USER_EVENT_REG_PERSIST)
                return -EPERM;
        if (reg->flags & UPSTREAM_USER_EVENT_REG_MULTI_FORMAT)
                return -EOPNOTSUPP;
        return 0;
}

/* The broker's data file takes the placeholder's number, once. */
static int file_take_data(struct preload_file *f, int data_fd) {
        int cloexec;

        if (f->has_data)
                return 0;
        cloexec = fcntl(f->fd, F_GETFD);
        if (cloexec < 0 || dup3(data_fd, f->fd, cloexec & FD_CLOEXEC ? O_CLOEXEC : 0) < 0)
                return -errno;
        f->has_data = true;
        return 0;
}

/* The kernel's own ioctl on @f, the broker's data file. */
static int kernel_ioctl(struct preload_file *f, unsigned long request, uint64_t uaddr) {
        return syscall(SYS_ioctl, f->fd, request, (unsigned long) uaddr) < 0 ? -errno : 0;
}

/* Upstream: the broker says yes to @command (Authorize), then the program's
 * own DIAG_IOCSREG at @uaddr reaches the kernel, which writes the write
 * index and keeps the enable word. -EOPNOTSUPP with f->mode unchanged when
 * the broker's provider has no kernel file to register on. */
static int file_authorize(struct preload_file *f, const char *command, uint64_t uaddr) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int data_fd, r;

        r = file_call(f, "Authorize", command, &reply, "s", command);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "h", &data_fd);
        if (r < 0)
                return r;
        f->mode = FILE_MODE_KERNEL;
        r = file_take_data(f, data_fd);
        if (r < 0)
                return r;
        r = kernel_ioctl(f, UPSTREAM_DIAG_IOCSREG, uaddr);
        if (r < 0) {
                char name[EVENT_NAME_MAX + 1];

                /* The grant would hold the event, and count, for nothing. */
                snprintf(name, sizeof(name), "%.*s", (int) strcspn(command, " \t;:"), command);
                debug("'%s': the broker said yes, the kernel's DIAG_IOCSREG failed: %s", command, strerror(-r));
                (void) file_call(f, "Withdraw", name, NULL, "s", name);
        } else
                debug("registered '%s' on the kernel's file, as the broker granted it", command);
        return r;
}

static int file_register(struct preload_file *f, uint64_t uaddr) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        struct upstream_user_reg reg = {};
        char command[EVENT_COMMAND_MAX + 1];
        uint32_t status_index, write_index;
        int data_fd, status_fd, r;
        uint64_t word = 0;
        struct enabler *e;

        r = read_own_sized(&reg, uaddr, sizeof(reg));
        if (r < 0)
                return r;
        r = check_reg(&reg);
        if (r < 0)
                return r;
        if (read_own(&word, reg.enable_addr, reg.enable_size) != reg.enable_size)
                return -EFAULT;
        r = read_own_string(reg.name_args, command, sizeof(command));
        if (r == -E2BIG)
                return -EINVAL;         /* longer than any command the broker takes */
        if (r < 0)
                return r;
        if (f->mode != FILE_MODE_BROKER) {
                r = file_authorize(f, command, uaddr);
                if (r != -EOPNOTSUPP || f->mode == FILE_MODE_KERNEL)
                        return r;
                f->mode = FILE_MODE_BROKER;     /* the broker registers, and we follow the status bytes */
        }

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        r = file_call(f, "Register", command, &reply, "s", command);
        if (r >= 0)
                r = sd_bus_message_read(reply, "hhuu", &data_fd, &status_fd, &status_index, &write_index);
        if (r >= 0 && status_index >= STATUS_PAGE_SIZE)
                r = -EPROTO;
        if (r >= 0 && !f->status) {
                void *page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED, status_fd, 0);

                if (page == MAP_FAILED)
                        r = -errno;
                else
                        f->status = page;
        }
        if (r >= 0)
                r = file_take_data(f, data_fd);
        if (r >= 0)
                r = write_own(uaddr + offsetof(struct upstream_user_reg, write_index), &write_index,
                              sizeof(write_index));
        if (r < 0) {
                free(e);
                return r;
        }

        *e = (struct enabler) {
                .addr = reg.enable_addr,
                .bit = reg.enable_bit,
                .size = reg.enable_size,
                .status_index = status_index,
        };
        pthread_mutex_lock(&files_lock);
        LIST_PREPEND(enablers, f->enablers, e);
        /* As the kernel does at registration: the bit says now. */
        enabler_write(e, f->status[status_index] != 0);
        r = sync_start();
        pthread_mutex_unlock(&files_lock);
        if (r < 0)
                debug("cannot start following status bytes: %s", strerror(-r));
        debug("registered '%s': write index %u, status index %u", command, write_index, status_index);
        return 0;
}

static int file_unregister(struct preload_file *f, uint64_t uaddr) {
        struct upstream_user_unreg unreg = {};
        struct enabler *found = NULL;
        int r;

        r = read_own_sized(&unreg, uaddr, sizeof(unreg));
        if (r < 0)
                return r;
        if (unreg.reserved || unreg.reserved2)
                return -EINVAL;

        pthread_mutex_lock(&files_lock);
        LIST_FOREACH(enablers, e, f->enablers)
                if (e->addr == unreg.disable_addr && e->bit == unreg.disable_bit) {
                        found = e;
                        break;
                }
        if (found) {
                LIST_REMOVE(enablers, f->enablers, found);
                /* Cleared, and never written again once we return. */
                enabler_write(found, false);
        }
        pthread_mutex_unlock(&files_lock);
        if (!found)
                return -ENOENT;
        free(found);
        return 0;
}

static int file_delete(struct preload_file *f, uint64_t uaddr) {
        char name[EVENT_NAME_MAX + 1];
        int r;

        r = read_own_string(uaddr, name, sizeof(name));
        if (r == -E2BIG)
                return -EINVAL;
        if (r < 0)
                return r;
        return file_call(f, "Delete", name, NULL, "sb", name, 0);
}

int preload_ioctl(int fd, unsigned long request, void *arg) {
        struct preload_file *f;
        int r;

        if (in_library)
                return -EAGAIN;
        pthread_mutex_lock(&files_lock);
        f = file_find(fd);
        pthread_mutex_unlock(&files_lock);
        if (!f)
                return -EBADF;
        if (f->pid != getpid())
                return -EAGAIN;         /* the parent's connection */
        if (request != UPSTREAM_DIAG_IOCSREG && request != UPSTREAM_DIAG_IOCSUNREG &&
            request != UPSTREAM_DIAG_IOCSDEL)
                return -ENOTTY;

        in_library = true;
        pthread_mutex_lock(&f->call_lock);
        if (request == UPSTREAM_DIAG_IOCSREG)
                r = file_register(f, (uintptr_t) arg);
        else if (request == UPSTREAM_DIAG_IOCSUNREG && f->mode == FILE_MODE_KERNEL)
                r = kernel_ioctl(f, request, (uintptr_t) arg);  /* the kernel's enabler */
        else if (request == UPSTREAM_DIAG_IOCSUNREG)
                r = file_unregister(f, (uintptr_t) arg);
        else
                r = file_delete(f, (uintptr_t) arg);
        pthread_mutex_unlock(&f->call_lock);
        in_library = false;
        return r;
}
