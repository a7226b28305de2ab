/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
#include "preload-atomic.h"
#include "preload-files.h"
#include "status-text.h"
#include "user-events-abi.h"

/* libuebroker's bound on one call to the broker. */
#define PRELOAD_CALL_TIMEOUT_USEC BROKER_CALL_TIMEOUT_USEC

/* Records and numbers live in chunks that are mapped once and never
 * unmapped: close() and the other calls a signal handler may make read
 * them with atomics alone, so a pointer they hold never dangles. */
#define FILES_PER_CHUNK 64u
#define FILE_CHUNKS_MAX 1024u           /* 65536 files open at once */
#define NUMBERS_PER_CHUNK 512u
#define NUMBER_CHUNKS_MAX 256u          /* 131072 descriptor numbers */

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

enum file_state {
        FILE_FREE,                      /* zero: what a new chunk holds */
        FILE_OPENING,                   /* claimed by preload_open() */
        FILE_OPEN,
        FILE_CLOSED,                    /* no number, no user: its memory and connection wait for file_reap() */
};

struct preload_file {
        unsigned state;                 /* atomic: enum file_state */
        unsigned refs;                  /* atomic: the numbers naming it, and each call using it */
        unsigned calls;                 /* under files_lock: the calls among refs (a forked child drops them) */
        pid_t pid;                      /* of the process that opened it */
        bool has_data;                  /* atomic: the broker's data file is at the numbers */
        uint64_t placeholder_dev, placeholder_ino;
        uint64_t data_dev, data_ino;    /* set before has_data */
        pthread_mutex_t call_lock;      /* one registration at a time */
        enum file_mode mode;            /* under call_lock */
        /* Its data session on the process's connection (OpenSession), under
         * connection.lock: 0 before; valid while session_generation is the
         * connection's. Closed by file_reap() once the file is. */
        uint64_t session_id;
        unsigned session_generation;
        const uint8_t *status;          /* the status page, mapped read-only; NULL before */
        LIST_HEAD(struct enabler, enablers);    /* under files_lock */
};

/*
 * The process's one connection to the broker, whatever it opens: every file
 * is a data session on it (OpenSession), since a connection per file would
 * use up the bus's connections per uid (256 on a stock system bus) and stop
 * the uid's other bus programs. A forked child never uses its parent's
 * (atfork_child() closes its copy of the socket); a program that closes the
 * socket behind our back (closefrom(), close_range()) gets a new one, and
 * its files new data sessions at their next call.
 */
static struct {
        pthread_mutex_t *lock;          /* one call at a time; taken after a file's call_lock and files_lock */
        unsigned lock_slot;             /* connection_locks[] */
        sd_bus *bus;                    /* private; under lock */
        int fd;                         /* atomic: its socket, -1 before */
        uint64_t dev, ino;              /* the socket at fd, to tell when the program closed it */
        unsigned generation;            /* under lock: bumped at each new connection */
} connection = { .fd = -1 };

/* A forked child takes the next slot for its lock rather than initializing
 * the one a thread of the parent may hold: the same for glibc, but
 * valgrind's helgrind would go on seeing it held by a thread the child does
 * not have. A chain of more forks than slots reuses them, which only such a
 * tool would notice. */
#define CONNECTION_LOCK_SLOTS 64u
static pthread_mutex_t connection_locks[CONNECTION_LOCK_SLOTS] = {
        [0 ... CONNECTION_LOCK_SLOTS - 1] = PTHREAD_MUTEX_INITIALIZER,
};

/* Whether the connection still has its socket: a program's closefrom()
 * or close_range() closes it with the rest, and its number may hold
 * another file since. */
static bool connection_intact(void) {
        struct stat st;
        int fd = load_acquire(&connection.fd);

        return fd >= 0 && fstat(fd, &st) >= 0 && (uint64_t) st.st_dev == connection.dev &&
                (uint64_t) st.st_ino == connection.ino;
}

/* A connection whose socket the program closed, or a parent's: sd-bus
 * would close its number again, perhaps the program's file by then, and
 * must not be used in a forked child, so the object is left alone (a few
 * kilobytes). */
static void connection_abandon(void) {
        connection.bus = NULL;
        store_release(&connection.fd, -1);
}

/* Taken only by the library's own threads outside any signal handler: by
 * ioctl() (which a handler interrupting the library gets EAGAIN from
 * before it), the sync thread (all signals blocked) and fork(). Never by
 * open(), close(), dup*(), fcntl() or close_range(). */
static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct preload_file *file_chunks[FILE_CHUNKS_MAX];      /* atomic */
static uint64_t *number_chunks[NUMBER_CHUNKS_MAX];             /* atomic; entries number_entry() */
static unsigned n_numbers;              /* atomic: entries in use; 0: every lookup is one load */
static unsigned n_closed;               /* atomic: records FILE_CLOSED */
static pid_t table_pid;                 /* atomic: whose table this is (fork() changes it, vfork() not) */
static bool sync_running;               /* under files_lock */
/* Authorize answered NotSupported: the broker's provider has no kernel
 * file to register on, and every file's registrations go through Register
 * (a provider does not change under a running program). */
static bool broker_registers;           /* atomic */
static bool debug_on;
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

/* A line on stderr with --debug. open() calls it, and open() may be called
 * from a signal handler: formatted on the stack and written with write(),
 * no stdio lock. */
static void debug(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void debug(const char *format, ...) {
        char line[512];
        va_list ap;
        int n;

        if (!debug_on)
                return;
        n = snprintf(line, sizeof(line), "uebroker-preload: ");
        va_start(ap, format);
        n += vsnprintf(line + n, sizeof(line) - (size_t) n - 1, format, ap);
        va_end(ap);
        if (n > (int) sizeof(line) - 2)
                n = (int) sizeof(line) - 2;
        line[n++] = '\n';
        (void) !write(STDERR_FILENO, line, (size_t) n);
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

/* One atomic operation (@op with @oparg) on the 32-bit half of an enable
 * word that holds @bit, done by the kernel: FUTEX_WAKE_OP applies @op to its second
 * address and wakes nobody. A word that is read-only or not mapped answers
 * EFAULT where a store of ours would be a SIGSEGV, and the other bits of
 * the word (other registrations', the program's own) are left as they are,
 * atomically even against the program's own atomics on the same word, as
 * the kernel's set_bit() on the program's page. */
static int word_op(uint64_t addr, unsigned size, unsigned bit, int op, int oparg) {
        static uint32_t nobody;         /* the futex it wakes: no waiter ever */
        uint32_t *half = (uint32_t *) (uintptr_t) addr;

        if (size == 8) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
                half += bit / 32;
#else
                half += 1 - bit / 32;
#endif
        }
        if (syscall(SYS_futex, &nobody, FUTEX_WAKE_OP | FUTEX_PRIVATE_FLAG, 0, (unsigned long) 0, half,
                    /* FUTEX_OP(), unsigned: the header's shifts overflow int. */
                    ((unsigned) op & 0xfu) << 28 | ((unsigned) FUTEX_OP_CMP_EQ & 0xfu) << 24 |
                    ((unsigned) oparg & 0xfffu) << 12) < 0)
                return -errno;
        return 0;
}

/* Whether the word at @addr can be written, as the kernel checks it at
 * registration: an atomic "or 0", which changes nothing. */
static int word_writable(uint64_t addr, unsigned size) {
        return word_op(addr, size, 0, FUTEX_OP_OR, 0);
}

/* Sets or clears @e's bit. A word that went away since (unmapped, made
 * read-only) is skipped, as the kernel skips it, and tried again the next
 * round. Under files_lock: the only writer of these bits. */
static void enabler_write(struct enabler *e, bool on) {
        if (word_op(e->addr, e->size, e->bit, (on ? FUTEX_OP_OR : FUTEX_OP_ANDN) | FUTEX_OP_OPARG_SHIFT,
                    e->bit % 32) >= 0)
                e->set = on;
}

/* The chunk @i of @chunks, mapped (zeroed) when @create and not yet
 * there. mmap() rather than malloc(): a signal handler's open() or dup()
 * may be the one that needs it. */
static void *chunk_get(void **chunks, unsigned i, size_t size, bool create, void (*fresh)(void *chunk)) {
        void *c = load_acquire(&chunks[i]), *expected = NULL;

        if (c || !create)
                return c;
        c = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (c == MAP_FAILED)
                return NULL;
        fresh(c);
        if (cas_acq_rel(&chunks[i], &expected, c, false))
                return c;
        munmap(c, size);                /* another thread's came first */
        return expected;
}

/* The atomic fields of a new chunk's records, for helgrind. */
static void file_chunk_fresh(void *chunk) {
        for (struct preload_file *f = chunk; f < (struct preload_file *) chunk + FILES_PER_CHUNK; f++) {
                hg_atomic_object(&f->state);
                hg_atomic_object(&f->refs);
                hg_atomic_object(&f->has_data);
        }
}

static void number_chunk_fresh(void *chunk) {
        hg_atomic_range(chunk, NUMBERS_PER_CHUNK * sizeof(uint64_t));
}

static struct preload_file *file_chunk(unsigned i, bool create) {
        return chunk_get((void **) file_chunks, i, FILES_PER_CHUNK * sizeof(struct preload_file), create,
                         file_chunk_fresh);
}

static uint64_t *number_chunk(unsigned i, bool create) {
        return chunk_get((void **) number_chunks, i, NUMBERS_PER_CHUNK * sizeof(uint64_t), create,
                         number_chunk_fresh);
}

static struct preload_file *file_at(uint32_t index) {
        struct preload_file *chunk = file_chunk(index / FILES_PER_CHUNK, false);

        return chunk ? &chunk[index % FILES_PER_CHUNK] : NULL;
}

/* A number entry: the descriptor and its file's index in one word, so that
 * one compare-and-swap makes or ends the link; 0 is a free slot. */
static uint64_t number_entry(int fd, uint32_t index) {
        return ((uint64_t) (uint32_t) fd + 1) << 32 | index;
}

static int entry_fd(uint64_t entry) {
        return (int) ((entry >> 32) - 1);
}

#define FOREACH_NUMBER(slot)                                                            \
        for (unsigned _c = 0; _c < NUMBER_CHUNKS_MAX; _c++)                             \
                for (uint64_t *_chunk = number_chunk(_c, false); _chunk; _chunk = NULL) \
                        for (uint64_t *slot = _chunk; slot < _chunk + NUMBERS_PER_CHUNK; slot++)

/* The slot naming @fd; with its entry as read. */
static uint64_t *number_find(int fd, uint64_t *ret_entry) {
        if (fd < 0 || load_acquire(&n_numbers) == 0)
                return NULL;
        FOREACH_NUMBER(slot) {
                uint64_t entry = load_acquire(slot);

                if (entry && entry_fd(entry) == fd) {
                        *ret_entry = entry;
                        return slot;
                }
        }
        return NULL;
}

static bool file_get(struct preload_file *f) {
        unsigned refs = load_acquire(&f->refs);

        do
                if (refs == 0)
                        return false;
        while (!cas_acq_rel(&f->refs, &refs, refs + 1, true));
        return true;
}

/* Drops a reference. At the last the record waits for file_reap(),
 * which only runs where malloc() and sd-bus may, to end its data session
 * and free its memory: the process's next call into the library, or the
 * thread following enable words. */
static void file_put(struct preload_file *f) {
        if (sub_fetch_acq_rel(&f->refs, 1) > 0)
                return;
        add_fetch_acq_rel(&n_closed, 1);
        store_release(&f->state, FILE_CLOSED);
}

/* The file @entry names, with a reference, if @slot still holds it. */
static struct preload_file *number_file(uint64_t *slot, uint64_t entry) {
        struct preload_file *f = file_at((uint32_t) entry);

        if (!f || !file_get(f))
                return NULL;
        if (load_acquire(slot) != entry) {
                file_put(f);
                return NULL;
        }
        return f;
}

/* Ends the link @slot holds as @entry, if it still does. */
static void number_drop(uint64_t *slot, uint64_t entry) {
        if (!cas_acq_rel(slot, &entry, 0, false))
                return;
        sub_fetch_acq_rel(&n_numbers, 1);
        file_put(file_at((uint32_t) entry));
}

/* @fd names the file @index (which the caller holds a reference of, now
 * the number's). */
static int number_add(int fd, uint32_t index) {
        uint64_t entry = number_entry(fd, index);

        for (unsigned c = 0; c < NUMBER_CHUNKS_MAX; c++) {
                uint64_t *chunk = number_chunk(c, true);

                if (!chunk)
                        return -ENOMEM;
                for (uint64_t *slot = chunk; slot < chunk + NUMBERS_PER_CHUNK; slot++) {
                        uint64_t expected = 0;

                        if (cas_acq_rel(slot, &expected, entry, false)) {
                                add_fetch_acq_rel(&n_numbers, 1);
                                return 0;
                        }
                }
        }
        return -EMFILE;
}

/* Whether the table is this process's to change: a vfork() child shares
 * the parent's memory, and its close() or dup2() before exec changes the
 * child's descriptors, never the parent's. */
static bool table_is_ours(void) {
        return load_acquire(&table_pid) == getpid();
}

/* Data sessions of closed files to end (Close). file_reap() queues them
 * under files_lock; whoever next holds connection.lock sends them, before
 * its own call (connection_send_closes()): a bus send may wait for the
 * broker, and fork() and every ioctl() need files_lock, and a call must not
 * reach the broker ahead of a Close reaped before it (the uid's share of
 * data sessions would still look full: CI14's many-files case, when the
 * sync thread had reaped but not yet sent). The queue's own lock is a leaf,
 * held for a copy only; atfork_prepare() takes it too. */
#define CLOSING_MAX 256u
static struct {
        pthread_mutex_t lock;
        uint64_t id[CLOSING_MAX];
        unsigned generation[CLOSING_MAX];
        unsigned n;
} closing = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void connection_send_closes(void);

/* Whether file_reap() queued data sessions to end. */
static bool closes_pending(void) {
        bool any;

        pthread_mutex_lock(&closing.lock);
        any = closing.n > 0;
        pthread_mutex_unlock(&closing.lock);
        return any;
}

/* Sends what file_reap() queued now, if anything: the caller holds
 * neither lock. */
static void closes_flush(void) {
        if (!closes_pending())
                return;
        pthread_mutex_lock(connection.lock);
        connection_send_closes();
        pthread_mutex_unlock(connection.lock);
}

/* The records' memory, their enablers and data sessions, once nothing uses
 * them; the data sessions to end go to the closing queue (a file whose
 * session finds it full waits for the next call). Under files_lock, never
 * in a signal handler. */
static void file_reap(void) {
        pid_t self = getpid();

        if (load_acquire(&n_closed) == 0)
                return;
        pthread_mutex_lock(&closing.lock);
        for (unsigned c = 0; c < FILE_CHUNKS_MAX; c++) {
                struct preload_file *chunk = file_chunk(c, false);

                if (!chunk)
                        break;
                for (struct preload_file *f = chunk; f < chunk + FILES_PER_CHUNK; f++) {
                        if (load_acquire(&f->state) != FILE_CLOSED)
                                continue;
                        if (f->session_id && f->pid == self && closing.n == CLOSING_MAX)
                                continue;
                        while (f->enablers) {
                                struct enabler *e = f->enablers;

                                LIST_REMOVE(enablers, f->enablers, e);
                                free(e);
                        }
                        if (f->session_id && f->pid == self) {
                                closing.id[closing.n] = f->session_id;
                                closing.generation[closing.n++] = f->session_generation;
                        }
                        f->session_id = 0;
                        if (f->status)
                                munmap((void *) f->status, STATUS_PAGE_SIZE);
                        f->status = NULL;
                        sub_fetch_acq_rel(&n_closed, 1);
                        store_release(&f->state, FILE_FREE);
                }
        }
        pthread_mutex_unlock(&closing.lock);
}

#define FOREACH_FILE(f)                                                                 \
        for (unsigned _c = 0; _c < FILE_CHUNKS_MAX; _c++)                               \
                for (struct preload_file *_chunk = file_chunk(_c, false); _chunk; _chunk = NULL) \
                        for (struct preload_file *f = _chunk; f < _chunk + FILES_PER_CHUNK; f++)

/* The enable words follow the status bytes. Under files_lock, which
 * file_reap() needs too: a record closed meanwhile keeps its enablers
 * until we let go. Returns whether any word is left to follow. */
static bool sync_enablers(void) {
        pid_t self = getpid();
        bool any = false;

        FOREACH_FILE(f) {
                if (load_acquire(&f->state) != FILE_OPEN || f->pid != self || !f->status)
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
                file_reap();
                more = sync_enablers();
                if (!more)
                        sync_running = false;   /* the next registration starts another */
                pthread_mutex_unlock(&files_lock);
                closes_flush();
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

/* Fork: files_lock is held across it, so the child finds the table whole
 * and every count under the lock exact. Every lock of the library is usable
 * in the child: files_lock is released by the thread that took it (the
 * child's), each file's call_lock (perhaps held by a thread of the parent
 * that is not in the child) starts afresh. The child
 * never calls the broker on its parent's files (EAGAIN), its copy of the
 * sync thread is gone, and the parent's calls in flight hold no reference
 * there. */
static void atfork_prepare(void) {
        pthread_mutex_lock(&files_lock);
        pthread_mutex_lock(&closing.lock);
}

static void atfork_parent(void) {
        pthread_mutex_unlock(&closing.lock);
        pthread_mutex_unlock(&files_lock);
}

static void atfork_child(void) {
        store_release(&table_pid, getpid());
        /* The parent's connection: our copy of its socket goes, so that
         * the broker sees the parent leave when it does; the lock starts
         * afresh (a thread of the parent's may have held it). */
        hg_forget_range(&connection, sizeof(connection));     /* what the parent's threads did is past */
        hg_atomic_object(&connection.fd);
        connection.lock_slot = (connection.lock_slot + 1) % CONNECTION_LOCK_SLOTS;
        connection.lock = &connection_locks[connection.lock_slot];
        pthread_mutex_init(connection.lock, NULL);
        if (connection_intact())
                (void) syscall(SYS_close, load_acquire(&connection.fd));
        connection_abandon();
        /* The parent's sessions are the parent's to end. Ours since
         * atfork_prepare(): this thread is the child's. */
        closing.n = 0;
        pthread_mutex_unlock(&closing.lock);
        pthread_mutex_unlock(&files_lock);
        sync_running = false;
        for (unsigned c = 0; c < FILE_CHUNKS_MAX; c++) {
                struct preload_file *chunk = file_chunk(c, false);

                if (!chunk)
                        break;
                hg_forget_range(chunk, FILES_PER_CHUNK * sizeof(struct preload_file));
                file_chunk_fresh(chunk);
        }
        FOREACH_FILE(f) {
                unsigned state = load_acquire(&f->state);

                if (state == FILE_FREE)
                        continue;
                pthread_mutex_init(&f->call_lock, NULL);
                if (state != FILE_OPEN || f->calls == 0)
                        continue;
                sub_fetch_acq_rel(&f->refs, f->calls - 1);
                f->calls = 0;
                file_put(f);    /* the last of the parent's calls: perhaps the last reference */
        }
}

__attribute__((constructor)) static void preload_files_init(void) {
        const char *e = secure_getenv("UEBROKER_DEBUG");

        debug_on = e && *e && strcmp(e, "0") != 0;
        hg_atomic_object(&file_chunks);
        hg_atomic_object(&number_chunks);
        hg_atomic_object(&n_numbers);
        hg_atomic_object(&n_closed);
        hg_atomic_object(&table_pid);
        hg_atomic_object(&connection.fd);
        hg_atomic_object(&broker_registers);
        connection.lock = &connection_locks[0];
        store_release(&table_pid, getpid());
        (void) pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* A free record, claimed (FILE_OPENING); its index in *@ret_index. */
static struct preload_file *file_claim(uint32_t *ret_index) {
        for (unsigned c = 0; c < FILE_CHUNKS_MAX; c++) {
                struct preload_file *chunk = file_chunk(c, true);

                if (!chunk)
                        return NULL;
                for (unsigned i = 0; i < FILES_PER_CHUNK; i++) {
                        unsigned expected = FILE_FREE;

                        if (cas_acq_rel(&chunk[i].state, &expected, FILE_OPENING, false)) {
                                *ret_index = c * FILES_PER_CHUNK + i;
                                return &chunk[i];
                        }
                }
        }
        return NULL;
}

/* Async-signal-safe, as the open() it answers: no lock, no malloc(). */
int preload_open(int flags) {
        struct preload_file *f;
        struct stat st;
        uint32_t index;
        int fd, r;

        f = file_claim(&index);
        if (!f)
                return -ENFILE;
        /* Until the first registration: writes go nowhere, as they would
         * with no write index of the kernel's file to name. The system call
         * itself: open() is preload.c's, above this file. */
        fd = (int) syscall(SYS_openat, AT_FDCWD, "/dev/null", O_WRONLY | (flags & O_CLOEXEC));
        if (fd < 0 || fstat(fd, &st) < 0) {
                r = -errno;
                if (fd >= 0)
                        (void) syscall(SYS_close, fd);
                store_release(&f->state, FILE_FREE);
                return r;
        }
        f->pid = getpid();
        f->calls = 0;
        f->has_data = false;
        f->placeholder_dev = st.st_dev;
        f->placeholder_ino = st.st_ino;
        f->mode = FILE_MODE_UNKNOWN;
        f->session_id = 0;
        f->status = NULL;
        f->enablers = NULL;
        pthread_mutex_init(&f->call_lock, NULL);
        store_release(&f->refs, 1);
        store_release(&f->state, FILE_OPEN);
        /* A number left from a raw close() is stale: it is ours now. */
        preload_forget(fd);
        r = number_add(fd, index);
        if (r < 0) {
                (void) syscall(SYS_close, fd);
                file_put(f);
                return r;
        }
        debug("user_events_data opened as fd %d, through the broker", fd);
        return fd;
}

void preload_forget(int fd) {
        uint64_t entry, *slot = number_find(fd, &entry);

        if (slot && table_is_ours())
                number_drop(slot, entry);
}

void preload_forget_range(unsigned first, unsigned last) {
        if (load_acquire(&n_numbers) == 0 || !table_is_ours())
                return;
        FOREACH_NUMBER(slot) {
                uint64_t entry = load_acquire(slot);

                if (entry && (unsigned) entry_fd(entry) >= first && (unsigned) entry_fd(entry) <= last)
                        number_drop(slot, entry);
        }
}

void preload_dup(int oldfd, int newfd) {
        uint64_t entry, *slot;
        struct preload_file *f;

        if (oldfd == newfd || newfd < 0 || !table_is_ours())
                return;
        preload_forget(newfd);          /* what was there is closed */
        slot = number_find(oldfd, &entry);
        if (!slot)
                return;
        f = number_file(slot, entry);
        if (f && number_add(newfd, (uint32_t) entry) < 0)
                file_put(f);            /* not followed: the number answers as the file it holds */
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

/* Under connection.lock. */
static int connection_get(void) {
        struct stat st;
        sd_bus *bus = NULL;
        int r;

        if (connection.bus && connection_intact())
                return 0;
        if (connection.bus)
                connection_abandon();
        r = bus_connect(&bus);
        if (r < 0)
                return r;
        if (fstat(sd_bus_get_fd(bus), &st) < 0) {
                r = -errno;
                sd_bus_flush_close_unref(bus);
                return r;
        }
        connection.dev = st.st_dev;
        connection.ino = st.st_ino;
        store_release(&connection.fd, sd_bus_get_fd(bus));
        connection.bus = bus;
        connection.generation++;        /* every data session was the old connection's */
        return 0;
}

/* Ends a closed file's data session, if it is on this connection: no reply
 * awaited (the broker's answer changes nothing here). Under
 * connection.lock. */
static void connection_close_session(uint64_t id, unsigned generation) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char path[sizeof(BROKER_SESSION_PATH_PREFIX) + 21];
        int r;

        if (connection.bus && generation == connection.generation && connection_intact()) {
                snprintf(path, sizeof(path), "%s/%" PRIu64, BROKER_SESSION_PATH_PREFIX, id);
                r = sd_bus_message_new_method_call(connection.bus, &m, BROKER_BUS_NAME, path,
                                                   BROKER_SESSION_INTERFACE, "Close");
                if (r >= 0)
                        r = sd_bus_message_set_expect_reply(m, 0);
                if (r >= 0)
                        r = sd_bus_send(connection.bus, m, NULL);
                if (r >= 0)
                        r = sd_bus_flush(connection.bus);
                if (r < 0)
                        debug("cannot end the data session %s: %s", path, strerror(-r));
        }
}

/* Ends the data sessions file_reap() queued, before the caller's own call
 * on the connection. Under connection.lock, without files_lock. */
static void connection_send_closes(void) {
        uint64_t id[CLOSING_MAX];
        unsigned generation[CLOSING_MAX], n;

        pthread_mutex_lock(&closing.lock);
        n = closing.n;
        memcpy(id, closing.id, n * sizeof(id[0]));
        memcpy(generation, closing.generation, n * sizeof(generation[0]));
        closing.n = 0;
        pthread_mutex_unlock(&closing.lock);
        for (unsigned i = 0; i < n; i++)
                connection_close_session(id[i], generation[i]);
}

/* Reads the data session path OpenSession returned into *@ret_id. */
static int read_session_id(sd_bus_message *reply, uint64_t *ret_id) {
        const size_t prefix = strlen(BROKER_SESSION_PATH_PREFIX);
        const char *path;
        char *end;
        int r;

        r = sd_bus_message_read(reply, "o", &path);
        if (r < 0)
                return r;
        if (strncmp(path, BROKER_SESSION_PATH_PREFIX "/", prefix + 1) != 0)
                return -EPROTO;
        errno = 0;
        *ret_id = strtoull(path + prefix + 1, &end, 10);
        if (errno || *end || *ret_id == 0)
                return -EPROTO;
        return 0;
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
        if (!(flags & O_CLOEXEC) && syscall(SYS_fcntl, fd, F_SETFD, 0) < 0)
                return -errno;
        debug("user_events_status opened as fd %d: the broker's status text", fd);
        return TAKE_FD(fd);
}

static int call_done(sd_bus_message *m, void *userdata, sd_bus_error *ret_error) {
        *(sd_bus_message **) userdata = sd_bus_message_ref(m);
        return 1;
}

/* sd_bus_call(), but a signal that interrupts the wait (a handler of the
 * program's, without SA_RESTART) does not end the call: the kernel's
 * ioctl() is not interrupted by one either. Bounded by the connection's
 * method call timeout (PRELOAD_CALL_TIMEOUT_USEC), as sd_bus_call(). */
static int call_restarting(sd_bus *bus, sd_bus_message *m, sd_bus_error *error, sd_bus_message **ret_reply) {
        _cleanup_(sd_bus_slot_unrefp) sd_bus_slot *slot = NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int r;

        r = sd_bus_call_async(bus, &slot, m, call_done, &reply, 0);
        if (r < 0)
                return r;
        while (!reply) {
                r = sd_bus_process(bus, NULL);
                if (r < 0)
                        return r;
                if (r > 0)
                        continue;
                r = sd_bus_wait(bus, UINT64_MAX);
                if (r < 0 && r != -EINTR)
                        return r;
        }
        if (sd_bus_message_is_method_error(reply, NULL)) {
                r = sd_bus_error_copy(error, sd_bus_message_get_error(reply));
                return r < 0 ? r : -EIO;
        }
        if (ret_reply)
                *ret_reply = TAKE_PTR(reply);
        return 0;
}

/* A call to the broker for @f, on the process's connection: @method of
 * f's data session (opened first if it has none on this connection), or of
 * the broker's object for Delete. A refusal becomes the kernel interface's
 * errno. Under f->call_lock; takes connection.lock. */
static int file_call(struct preload_file *f, const char *method, const char *what, sd_bus_message **reply,
                     const char *types, ...) {
        _cleanup_(sd_bus_error_free) sd_bus_error error = SD_BUS_ERROR_NULL;
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *m = NULL;
        char path[sizeof(BROKER_SESSION_PATH_PREFIX) + 21];
        bool on_session = strcmp(method, "Delete") != 0;
        const char *failed = method;
        va_list ap;
        int r;

        pthread_mutex_lock(connection.lock);
        r = connection_get();
        if (r < 0) {
                pthread_mutex_unlock(connection.lock);
                debug("%s %s: cannot connect to the bus: %s", method, what, strerror(-r));
                return r;
        }
        /* A Close reaped before this call reaches the broker first. */
        connection_send_closes();
        if (on_session && (f->session_id == 0 || f->session_generation != connection.generation)) {
                _cleanup_(sd_bus_message_unrefp) sd_bus_message *opened = NULL;

                failed = "OpenSession";
                r = sd_bus_message_new_method_call(connection.bus, &m, BROKER_BUS_NAME, BROKER_OBJECT_PATH,
                                                   BROKER_INTERFACE, "OpenSession");
                if (r >= 0)
                        r = call_restarting(connection.bus, m, &error, &opened);
                if (r >= 0)
                        r = read_session_id(opened, &f->session_id);
                if (r >= 0)
                        f->session_generation = connection.generation;
                m = sd_bus_message_unref(m);
        }
        if (r >= 0) {
                failed = method;
                if (on_session)
                        snprintf(path, sizeof(path), "%s/%" PRIu64, BROKER_SESSION_PATH_PREFIX, f->session_id);
                r = sd_bus_message_new_method_call(connection.bus, &m, BROKER_BUS_NAME,
                                                   on_session ? path : BROKER_OBJECT_PATH,
                                                   on_session ? BROKER_SESSION_INTERFACE : BROKER_INTERFACE, method);
        }
        if (r >= 0) {
                va_start(ap, types);
                r = sd_bus_message_appendv(m, types, ap);
                va_end(ap);
        }
        if (r >= 0)
                r = call_restarting(connection.bus, m, &error, reply);
        pthread_mutex_unlock(connection.lock);
        if (r >= 0)
                return 0;
        r = -preload_errno_from_bus(failed, error.name, -r);
        debug("%s %s: %s (%s), errno %s", failed, what, error.message ?: strerror(-r), error.name ?: "no reply",
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

/* Signals blocked, so that no handler of this thread closes or reuses a
 * number between our look and our use of it (another thread doing so
 * under a call of ours is the program's race, as with the kernel's file). */
static void signals_block(sigset_t *old) {
        sigset_t all;

        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, old);
}

static void signals_restore(const sigset_t *old) {
        pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* The broker's data file takes the placeholder's place, once, at every
 * number of @f (a dup() of it is the same file). Raw system calls: our
 * own dup3() would make the number the data file's, not @f's. -EBADF when
 * the program closed all of them meanwhile. */
static int file_take_data(struct preload_file *f, uint32_t index, int data_fd) {
        unsigned taken = 0;
        struct stat st;
        sigset_t old;
        int r = 0;

        if (load_acquire(&f->has_data))
                return 0;
        if (fstat(data_fd, &st) < 0)
                return -errno;
        f->data_dev = st.st_dev;
        f->data_ino = st.st_ino;
        signals_block(&old);
        FOREACH_NUMBER(slot) {
                uint64_t entry = load_acquire(slot);
                int fd = entry_fd(entry), flags;

                if (!entry || (uint32_t) entry != index)
                        continue;
                flags = (int) syscall(SYS_fcntl, fd, F_GETFD);
                if (flags < 0 || syscall(SYS_dup3, data_fd, fd, flags & FD_CLOEXEC ? O_CLOEXEC : 0) < 0) {
                        r = -errno;
                        break;
                }
                taken++;
        }
        if (r >= 0 && taken == 0)
                r = -EBADF;
        if (r >= 0)
                store_release(&f->has_data, true);
        signals_restore(&old);
        return r;
}

/* Whether @fd holds @f's file: the number may have been closed and reused
 * by a raw system call the library never saw. */
static bool file_is_at(struct preload_file *f, int fd) {
        struct stat st;

        if (fstat(fd, &st) < 0)
                return false;
        if ((uint64_t) st.st_dev == f->placeholder_dev && (uint64_t) st.st_ino == f->placeholder_ino)
                return true;
        return load_acquire(&f->has_data) && (uint64_t) st.st_dev == f->data_dev &&
                (uint64_t) st.st_ino == f->data_ino;
}

/* The kernel's own ioctl on @f, the broker's data file, at @fd if it still
 * is @f's. */
static int kernel_ioctl(struct preload_file *f, uint32_t index, int fd, unsigned long request, uint64_t uaddr) {
        uint64_t entry, *slot;
        sigset_t old;
        int r;

        signals_block(&old);
        slot = number_find(fd, &entry);
        if (!slot || (uint32_t) entry != index || !file_is_at(f, fd))
                r = -EBADF;
        else
                r = syscall(SYS_ioctl, fd, request, (unsigned long) uaddr) < 0 ? -errno : 0;
        signals_restore(&old);
        return r;
}

/* Upstream: the broker says yes to @command (Authorize), then the program's
 * own DIAG_IOCSREG at @uaddr reaches the kernel, which writes the write
 * index and keeps the enable word. -EOPNOTSUPP with f->mode unchanged when
 * the broker's provider has no kernel file to register on. */
static int file_authorize(struct preload_file *f, uint32_t index, int fd, const char *command, uint64_t uaddr) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        int data_fd, r;

        r = file_call(f, "Authorize", command, &reply, "s", command);
        if (r < 0)
                return r;
        r = sd_bus_message_read(reply, "h", &data_fd);
        if (r < 0)
                return r;
        f->mode = FILE_MODE_KERNEL;
        r = file_take_data(f, index, data_fd);
        if (r < 0)
                return r;
        r = kernel_ioctl(f, index, fd, UPSTREAM_DIAG_IOCSREG, uaddr);
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

/* Whether a file of this process still open has an enabler at @addr and
 * @bit: the kernel refuses a second one in a process (EADDRINUSE,
 * current_user_event_enabler_exists()), whatever the event or file. It
 * also keeps a closed file's enablers, which we do not follow. Under
 * files_lock. */
static bool enabler_exists(uint64_t addr, uint8_t bit) {
        pid_t self = getpid();

        FOREACH_FILE(f) {
                if (load_acquire(&f->state) != FILE_OPEN || f->pid != self)
                        continue;
                LIST_FOREACH(enablers, e, f->enablers)
                        if (e->addr == addr && e->bit == bit)
                                return true;
        }
        return false;
}

/* The program's struct user_reg at @uaddr and the command it names,
 * checked as the kernel checks them, with the kernel's errors. */
static int read_registration(uint64_t uaddr, struct upstream_user_reg *reg, char *command, size_t size) {
        int r;

        r = read_own_sized(reg, uaddr, sizeof(*reg));
        if (r < 0)
                return r;
        r = check_reg(reg);
        if (r < 0)
                return r;
        /* The word must take a write, as the kernel checks it: 6.12's
         * user_event_enabler_create() fails and user_events_ioctl_reg()
         * answers ENOMEM for that, read-only or unmapped alike. */
        r = word_writable(reg->enable_addr, reg->enable_size);
        if (r == -EFAULT)
                return -ENOMEM;
        if (r < 0)
                return r;
        r = read_own_string(reg->name_args, command, size);
        if (r == -E2BIG)
                return -EINVAL;         /* longer than any command the broker takes */
        return r < 0 ? r : 0;
}

/* Maps @f's status page from @status_fd if it has none yet. */
static int file_map_status(struct preload_file *f, int status_fd) {
        void *page;

        if (f->status)
                return 0;
        page = mmap(NULL, STATUS_PAGE_SIZE, PROT_READ, MAP_SHARED, status_fd, 0);
        if (page == MAP_FAILED)
                return -errno;
        /* The sync thread reads it under files_lock. */
        pthread_mutex_lock(&files_lock);
        f->status = page;
        pthread_mutex_unlock(&files_lock);
        return 0;
}

static int file_register(struct preload_file *f, uint32_t index, int fd, uint64_t uaddr) {
        _cleanup_(sd_bus_message_unrefp) sd_bus_message *reply = NULL;
        struct upstream_user_reg reg = {};
        char command[EVENT_COMMAND_MAX + 1];
        uint32_t status_index, write_index;
        int data_fd, status_fd, r;
        struct enabler *e;

        r = read_registration(uaddr, &reg, command, sizeof(command));
        if (r < 0)
                return r;
        if (f->mode == FILE_MODE_UNKNOWN && load_acquire(&broker_registers))
                f->mode = FILE_MODE_BROKER;
        if (f->mode != FILE_MODE_BROKER) {
                r = file_authorize(f, index, fd, command, uaddr);
                if (r != -EOPNOTSUPP || f->mode == FILE_MODE_KERNEL)
                        return r;
                f->mode = FILE_MODE_BROKER;     /* the broker registers, and we follow the status bytes */
                store_release(&broker_registers, true);
        }
        pthread_mutex_lock(&files_lock);
        r = enabler_exists(reg.enable_addr, reg.enable_bit) ? -EADDRINUSE : 0;
        pthread_mutex_unlock(&files_lock);
        if (r < 0)
                return r;

        e = calloc(1, sizeof(*e));
        if (!e)
                return -ENOMEM;
        r = file_call(f, "Register", command, &reply, "s", command);
        if (r >= 0)
                r = sd_bus_message_read(reply, "hhuu", &data_fd, &status_fd, &status_index, &write_index);
        if (r >= 0 && status_index >= STATUS_PAGE_SIZE)
                r = -EPROTO;
        if (r >= 0)
                r = file_map_status(f, status_fd);
        if (r >= 0)
                r = file_take_data(f, index, data_fd);
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

bool preload_ioctl(int fd, unsigned long request, void *arg, int *ret) {
        struct preload_file *f;
        uint64_t entry, *slot;
        int r;

        slot = number_find(fd, &entry);
        if (!slot)
                return false;
        if (in_library) {
                *ret = -EAGAIN;         /* a signal handler that interrupted the library */
                return true;
        }
        in_library = true;
        pthread_mutex_lock(&files_lock);
        file_reap();
        f = number_file(slot, entry);
        if (f)
                f->calls++;
        pthread_mutex_unlock(&files_lock);
        closes_flush();
        if (!f) {
                in_library = false;
                return false;           /* closed meanwhile: the number is someone else's */
        }

        if (!file_is_at(f, fd)) {
                /* A raw system call put another file at the number: not
                 * ours to answer for, nor to follow any longer. */
                if (table_is_ours())
                        number_drop(slot, entry);
                r = 1;
        } else if (f->pid != getpid())
                r = -EAGAIN;            /* the parent's connection */
        else if (request != UPSTREAM_DIAG_IOCSREG && request != UPSTREAM_DIAG_IOCSUNREG &&
                 request != UPSTREAM_DIAG_IOCSDEL)
                r = -ENOTTY;
        else {
                pthread_mutex_lock(&f->call_lock);
                if (request == UPSTREAM_DIAG_IOCSREG)
                        r = file_register(f, (uint32_t) entry, fd, (uintptr_t) arg);
                else if (request == UPSTREAM_DIAG_IOCSUNREG && f->mode == FILE_MODE_KERNEL)
                        r = kernel_ioctl(f, (uint32_t) entry, fd, request, (uintptr_t) arg);   /* the kernel's enabler */
                else if (request == UPSTREAM_DIAG_IOCSUNREG)
                        r = file_unregister(f, (uintptr_t) arg);
                else
                        r = file_delete(f, (uintptr_t) arg);
                pthread_mutex_unlock(&f->call_lock);
        }

        pthread_mutex_lock(&files_lock);
        f->calls--;
        file_put(f);
        pthread_mutex_unlock(&files_lock);
        in_library = false;
        if (r > 0)
                return false;
        *ret = r;
        return true;
}
