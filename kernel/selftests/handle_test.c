// SPDX-License-Identifier: GPL-2.0-only
/*
 * Restricted user_events handles on Linux 6.12 with the series of
 * kernel/upstream-6.12/ (DIAG_IOCSHANDLE, DIAG_IOCSGRANT, DIAG_IOCSREVOKE):
 * a write-only handle shares its file's write indexes and refuses every
 * ioctl; a granting handle lets its holder register what it was granted,
 * into its own memory, and nothing else; withdrawing a grant makes the
 * holder's write index EPERM and clears its enable bit for good. Then a
 * hostile holder tries every ioctl number and write index on both kinds,
 * and the boundary's side doors: a file opened read-only, a handle
 * reopened through /proc, the owner's file closed (a broker's crash).
 * The withdrawal's races and bounds against a hostile holder (fork during
 * a withdrawal, 150k enablers, a fault-stalled holder) are the series' own
 * kselftest (kernel/upstream-6.12/0005-*.patch), which the vm tier runs
 * beside this.
 *
 *   handle_test            on the patched kernel
 *   handle_test --stock    on a stock kernel: the three requests are ENOTTY,
 *                          which is how a program tells the kernels apart
 *
 * TAP on stdout, one line per check, the plan at the end; exit 0 when every
 * check passed. Built against the patched <linux/user_events.h>.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/user_events.h>

#define TRACEFS "/sys/kernel/tracing"
#define DATA_FILE TRACEFS "/user_events_data"
#define EVENTS_DIR TRACEFS "/events/user_events"
#define MULTI_DIR TRACEFS "/events/user_events_multi"
#define HANDLE_LINK "anon_inode:[user_events_handle]"

/* One layout on 32-bit and 64-bit: the u64 naturally aligned */
_Static_assert(sizeof(struct user_handle) == 8, "struct user_handle is 8 bytes");
_Static_assert(sizeof(struct user_grant) == 24, "struct user_grant is 24 bytes");
_Static_assert(offsetof(struct user_grant, name_args) == 16, "name_args at offset 16");

static int n_checks, n_failed;

static bool __attribute__((format(printf, 2, 3))) check(bool ok, const char *fmt, ...)
{
	va_list ap;

	n_checks++;
	if (!ok)
		n_failed++;
	printf("%s %d - ", ok ? "ok" : "not ok", n_checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return ok;
}

static const char *errname(long r)
{
	return r < 0 ? strerror((int)-r) : "success";
}

#define EXPECT(expr, want, text)                                              \
	do {                                                                  \
		long _r = (long)(expr);                                       \
		check(_r == (long)(want), "%s (want %ld, got %ld: %s)", text, \
		      (long)(want), _r, errname(_r));                         \
	} while (0)

static long ioctl_err(int fd, unsigned long cmd, void *arg)
{
	long r = ioctl(fd, cmd, arg);

	return r < 0 ? -errno : r;
}

static int open_data(void)
{
	int fd = open(DATA_FILE, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("Bail out! cannot open %s: %s\n", DATA_FILE, strerror(errno));
		exit(1);
	}
	return fd;
}

/* Enable words, one per registration: the kernel writes its bits here. */
static uint32_t words[64];

static long reg_flags(int fd, const char *def, int word, uint16_t flags,
		      uint32_t *write_index)
{
	struct user_reg reg = {
		.size = sizeof(reg),
		.enable_bit = 0,
		.enable_size = 4,
		.flags = flags,
		.enable_addr = (uintptr_t)&words[word],
		.name_args = (uintptr_t)def,
	};
	long r = ioctl_err(fd, DIAG_IOCSREG, &reg);

	if (r == 0 && write_index)
		*write_index = reg.write_index;
	return r;
}

static long reg(int fd, const char *def, int word, uint32_t *write_index)
{
	return reg_flags(fd, def, word, 0, write_index);
}

static long unreg(int fd, int word)
{
	struct user_unreg unreg = {
		.size = sizeof(unreg),
		.disable_bit = 0,
		.disable_addr = (uintptr_t)&words[word],
	};

	return ioctl_err(fd, DIAG_IOCSUNREG, &unreg);
}

static long derive(int fd, uint32_t flags)
{
	struct user_handle h = { .size = sizeof(h), .flags = flags };

	return ioctl_err(fd, DIAG_IOCSHANDLE, &h);
}

static long grant_req(int fd, unsigned long cmd, int handle_fd,
		      const char *def, uint32_t flags)
{
	struct user_grant g = {
		.size = sizeof(g),
		.handle_fd = handle_fd,
		.flags = flags,
		.name_args = (uintptr_t)def,
	};

	return ioctl_err(fd, cmd, &g);
}

/* DIAG_IOCSREVOKE without a definition: cuts the handle off */
static long cut_off(int fd, int handle_fd)
{
	struct user_grant g = { .size = sizeof(g), .handle_fd = handle_fd };

	return ioctl_err(fd, DIAG_IOCSREVOKE, &g);
}

static long grant_def(int fd, int handle_fd, const char *def)
{
	return grant_req(fd, DIAG_IOCSGRANT, handle_fd, def, 0);
}

static long revoke_grant(int fd, int handle_fd, const char *def)
{
	return grant_req(fd, DIAG_IOCSREVOKE, handle_fd, def, 0);
}

static long write_event(int fd, int32_t index, uint32_t value)
{
	struct iovec io[2] = {
		{ &index, sizeof(index) },
		{ &value, sizeof(value) },
	};
	ssize_t r = writev(fd, io, 2);

	return r < 0 ? -errno : r;
}

/*
 * Waits up to two seconds for the 32-bit word at @w to read @value: a
 * withdrawn grant's bit in a page that must be faulted in first (one
 * shared copy-on-write with a parent or child) is cleared by the
 * enablers' fault worker, not by the withdrawal itself.
 */
static bool word_becomes(volatile uint32_t *w, uint32_t value)
{
	for (int i = 0; i < 200 && *w != value; i++)
		usleep(10000);
	return *w == value;
}

static int file_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	int r = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		r = -errno;
	close(fd);
	return r;
}

static bool event_exists(const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), EVENTS_DIR "/%s", name);
	return access(path, F_OK) == 0;
}

/* Non-persistent events go asynchronously once unused: wait a little. */
static bool event_gone(const char *name)
{
	for (int i = 0; i < 100; i++) {
		if (!event_exists(name))
			return true;
		usleep(20000);
	}
	return false;
}

/* A multi-format event: "NAME.<id>" in the multi system */
static bool multi_exists(const char *name)
{
	size_t len = strlen(name);
	struct dirent *de;
	bool found = false;
	DIR *d = opendir(MULTI_DIR);

	if (!d)
		return false;
	while (!found && (de = readdir(d)))
		found = !strncmp(de->d_name, name, len) && de->d_name[len] == '.';
	closedir(d);
	return found;
}

static int enable(const char *name, bool on)
{
	char path[256];

	snprintf(path, sizeof(path), EVENTS_DIR "/%s/enable", name);
	return file_write(path, on ? "1" : "0");
}

static void trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

/*
 * "NAME: FIELD=VALUE" in the trace; 6.12 prints an unsigned field as
 * "FIELD=0xHEX (VALUE)".
 */
static bool trace_has(const char *name, const char *field, unsigned int value)
{
	char needle[256], needle_hex[256], buf[1 << 16];
	ssize_t n, len = 0;
	int fd = open(TRACEFS "/trace", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = '\0';
	snprintf(needle, sizeof(needle), "%s: %s=%u\n", name, field, value);
	snprintf(needle_hex, sizeof(needle_hex), "%s: %s=0x%x (%u)\n", name, field, value, value);
	return strstr(buf, needle) || strstr(buf, needle_hex);
}

static const char *fd_link(int fd, char *buf, size_t size)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, size - 1);
	buf[n < 0 ? 0 : n] = '\0';
	return buf;
}

static void stock(void)
{
	int fd = open_data();

	EXPECT(derive(fd, 0), -ENOTTY, "stock kernel: DIAG_IOCSHANDLE is ENOTTY");
	EXPECT(derive(fd, USER_HANDLE_GRANTING), -ENOTTY,
	       "stock kernel: DIAG_IOCSHANDLE (granting) is ENOTTY");
	EXPECT(grant_def(fd, fd, "h_stock u32 a"), -ENOTTY, "stock kernel: DIAG_IOCSGRANT is ENOTTY");
	EXPECT(revoke_grant(fd, fd, "h_stock u32 a"), -ENOTTY, "stock kernel: DIAG_IOCSREVOKE is ENOTTY");
	check(!event_exists("h_stock"), "stock kernel: and nothing was registered");
	close(fd);
}

static void derive_rules(void)
{
	struct {
		struct user_handle h;
		uint8_t tail[8];
	} big = { { .size = sizeof(big), .flags = 0 }, { 1 } };
	struct user_handle h = { .size = 4 };
	int fd = open_data();

	EXPECT(derive(fd, 1u << 5), -EINVAL, "DIAG_IOCSHANDLE with an unknown flag: EINVAL");
	EXPECT(ioctl_err(fd, DIAG_IOCSHANDLE, &h), -EINVAL, "DIAG_IOCSHANDLE with size 4: EINVAL");
	h.size = 8192;
	EXPECT(ioctl_err(fd, DIAG_IOCSHANDLE, &h), -E2BIG, "DIAG_IOCSHANDLE with size above a page: E2BIG");
	EXPECT(ioctl_err(fd, DIAG_IOCSHANDLE, &big), -E2BIG,
	       "DIAG_IOCSHANDLE with a larger struct, non-zero beyond: E2BIG");
	EXPECT(ioctl_err(fd, DIAG_IOCSHANDLE, (void *)8), -EFAULT, "DIAG_IOCSHANDLE with a bad pointer: EFAULT");
	close(fd);
}

static void write_only(void)
{
	int fd = open_data(), wo, other;
	uint32_t w1 = 0, w2 = 0;
	char link[256];
	long r;

	EXPECT(reg(fd, "h_wo_one u32 a", 0, &w1), 0, "register h_wo_one on a plain file");
	wo = derive(fd, 0);
	if (!check(wo >= 0, "DIAG_IOCSHANDLE returns a write-only handle (%d: %s)", wo, errname(wo)))
		return;
	check((fcntl(wo, F_GETFL) & O_ACCMODE) == O_WRONLY, "the handle is O_WRONLY");
	check(!(fcntl(wo, F_GETFD) & FD_CLOEXEC), "without USER_HANDLE_CLOEXEC it is not close-on-exec");
	check(!strcmp(fd_link(wo, link, sizeof(link)), HANDLE_LINK),
	      "the handle is a file of its own kind (%s)", link);
	{
		long c = derive(fd, USER_HANDLE_CLOEXEC);

		check(c >= 0 && (fcntl(c, F_GETFD) & FD_CLOEXEC), "with USER_HANDLE_CLOEXEC it is close-on-exec");
		if (c >= 0)
			close(c);
	}
	EXPECT(reg(fd, "h_wo_two u32 b", 1, &w2), 0, "register h_wo_two on the file after the handle was made");

	EXPECT(write_event(wo, w1, 1), -EBADF, "a write while nobody listens: EBADF, as upstream");
	enable("h_wo_one", true);
	enable("h_wo_two", true);
	check(words[0] == 1 && words[1] == 1, "the file's enable bits are set (%u %u)", words[0], words[1]);
	trace_clear();
	EXPECT(write_event(wo, w1, 11), 8, "write h_wo_one through the handle");
	EXPECT(write_event(wo, w2, 22), 8, "write h_wo_two (registered later) through the handle");
	check(trace_has("h_wo_one", "a", 11) && trace_has("h_wo_two", "b", 22), "both records are in the trace");
	EXPECT(write_event(wo, w2 + 1, 1), -ENOENT, "an index the file has not registered: ENOENT");
	EXPECT(write_event(wo, -1, 1), -EINVAL, "a negative index: EINVAL");
	{
		int32_t idx = w1;
		uint16_t half = 1;
		struct iovec io[2] = { { &idx, 4 }, { &half, 2 } };

		r = writev(wo, io, 2);
		EXPECT(r < 0 ? -errno : r, -EINVAL, "a short payload: EINVAL");
	}
	{
		char c;

		r = read(wo, &c, 1);
		EXPECT(r < 0 ? -errno : r, -EBADF, "read() on the write-only handle: EBADF");
	}

	EXPECT(reg(wo, "h_wo_three u32 c", 2, NULL), -EPERM, "DIAG_IOCSREG on the handle: EPERM");
	check(!event_exists("h_wo_three"), "and nothing was registered");
	EXPECT(ioctl_err(wo, DIAG_IOCSDEL, "h_wo_one"), -EPERM, "DIAG_IOCSDEL on the handle: EPERM");
	check(event_exists("h_wo_one"), "and the event is still there");
	EXPECT(unreg(wo, 0), -EPERM, "DIAG_IOCSUNREG on the handle: EPERM");
	check(words[0] == 1, "and the file's enable bit still follows the event");
	EXPECT(derive(wo, 0), -EPERM, "DIAG_IOCSHANDLE on the handle: EPERM");
	EXPECT(grant_def(wo, wo, "h_wo_one u32 a"), -EPERM, "DIAG_IOCSGRANT on the handle: EPERM");
	EXPECT(revoke_grant(wo, wo, "h_wo_one u32 a"), -EPERM, "DIAG_IOCSREVOKE on the handle: EPERM");
	EXPECT(ioctl_err(wo, TCGETS, NULL), -ENOTTY, "another ioctl on the handle: ENOTTY");

	/* Cut off by DIAG_IOCSREVOKE without a definition: the file and
	 * another handle of it go on writing. */
	{
		int wo2 = derive(fd, 0);

		EXPECT(cut_off(fd, wo2), 0, "DIAG_IOCSREVOKE without a definition cuts a write-only handle off");
		EXPECT(write_event(wo2, w1, 1), -EPERM, "its writes: EPERM");
		EXPECT(cut_off(fd, wo2), -EINVAL, "cutting it off again: EINVAL (the file no longer knows it)");
		EXPECT(grant_req(fd, DIAG_IOCSREVOKE, wo, NULL, 1), -EINVAL,
		       "DIAG_IOCSREVOKE without a definition but with flags: EINVAL");
		EXPECT(write_event(wo, w1, 2), 8, "the other handle still writes");
		EXPECT(write_event(fd, w1, 3), 8, "and the file too");
		close(wo2);
	}

	/* The file's release cuts its handles off and drops its references:
	 * the events go while the handle is still open. */
	close(fd);
	EXPECT(write_event(wo, w1, 33), -EPERM, "once the file it came from is closed, the handle's writes: EPERM");
	EXPECT(write_event(wo, w2 + 1, 33), -EPERM, "whatever the index");
	enable("h_wo_one", false);
	enable("h_wo_two", false);
	/* enablers are the process's: unregistered through any file */
	other = open_data();
	unreg(other, 0);
	unreg(other, 1);
	check(event_gone("h_wo_one") && event_gone("h_wo_two"),
	      "both events go once the file is closed, the handle still open");
	close(wo);
	close(other);
}

static void granting(void)
{
	int fd = open_data(), g, wo, other, devnull, keeper;
	uint32_t wg = 0, wg2 = 0, wm = 0, w_plain = 0, again = 0;
	long r;

	g = derive(fd, USER_HANDLE_GRANTING | USER_HANDLE_CLOEXEC);
	if (!check(g >= 0, "DIAG_IOCSHANDLE (USER_HANDLE_GRANTING) returns a handle (%d: %s)", g, errname(g)))
		return;
	check((fcntl(g, F_GETFL) & O_ACCMODE) == O_WRONLY && (fcntl(g, F_GETFD) & FD_CLOEXEC),
	      "the granting handle is O_WRONLY and close-on-exec");

	EXPECT(reg(g, "h_g_one u32 a", 10, NULL), -EPERM, "DIAG_IOCSREG of a definition not granted: EPERM");
	check(!event_exists("h_g_one"), "and no event was created");

	/* The grant's own rules */
	other = open_data();
	wo = derive(fd, 0);
	devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	EXPECT(grant_def(other, g, "h_g_one u32 a"), -EINVAL,
	       "DIAG_IOCSGRANT on a file the handle was not derived from: EINVAL");
	EXPECT(grant_def(fd, wo, "h_g_one u32 a"), -EINVAL, "DIAG_IOCSGRANT naming a write-only handle: EINVAL");
	EXPECT(grant_def(fd, fd, "h_g_one u32 a"), -EINVAL, "DIAG_IOCSGRANT naming a plain data file: EINVAL");
	EXPECT(grant_def(fd, devnull, "h_g_one u32 a"), -EINVAL, "DIAG_IOCSGRANT naming /dev/null: EINVAL");
	EXPECT(grant_def(fd, 9999, "h_g_one u32 a"), -EBADF, "DIAG_IOCSGRANT naming a closed descriptor: EBADF");
	EXPECT(grant_req(fd, DIAG_IOCSGRANT, g, "h_g_one u32 a", USER_EVENT_REG_PERSIST), -EINVAL,
	       "DIAG_IOCSGRANT of a persistent event: EINVAL");
	EXPECT(grant_req(fd, DIAG_IOCSGRANT, g, "h_g_one u32 a", 1u << 9), -EINVAL,
	       "DIAG_IOCSGRANT with an unknown flag: EINVAL");
	{
		struct user_grant bad = { .size = sizeof(bad), .handle_fd = g, .__reserved = 1,
					  .name_args = (uintptr_t)"h_g_one u32 a" };

		EXPECT(ioctl_err(fd, DIAG_IOCSGRANT, &bad), -EINVAL, "DIAG_IOCSGRANT with a reserved field set: EINVAL");
		bad.__reserved = 0;
		bad.size = 12;
		EXPECT(ioctl_err(fd, DIAG_IOCSGRANT, &bad), -EINVAL, "DIAG_IOCSGRANT with size 12: EINVAL");
	}
	EXPECT(grant_def(fd, g, "h_g_bad u32"), -EINVAL, "DIAG_IOCSGRANT of an invalid definition: EINVAL");
	check(!event_exists("h_g_one"), "none of those created the event");
	close(devnull);
	close(wo);

	EXPECT(grant_def(fd, g, "h_g_one u32 a"), 0, "DIAG_IOCSGRANT h_g_one to the handle");
	check(event_exists("h_g_one"), "the granted event exists");
	EXPECT(grant_def(fd, g, "h_g_one u32 a"), 0, "granting it again is no error");
	EXPECT(reg(fd, "h_g_taken u32 x", 11, &w_plain), 0, "register h_g_taken on the plain file");
	EXPECT(grant_def(fd, g, "h_g_taken u64 x"), -EADDRINUSE,
	       "DIAG_IOCSGRANT of a name that exists with other fields: EADDRINUSE");

	EXPECT(reg(g, "h_g_one u32 a", 10, &wg), 0, "the holder's own DIAG_IOCSREG of the granted definition");
	check(wg == 0, "its write index is the handle's own: 0 (%u)", wg);
	EXPECT(reg(g, "h_g_one u64 a", 12, NULL), -EPERM, "the same name with other fields: EPERM");
	EXPECT(reg(g, "h_g_other u32 a", 12, NULL), -EPERM, "another name: EPERM");
	check(!event_exists("h_g_other"), "and no event was created");
	EXPECT(reg(g, "h_g_taken u32 x", 12, NULL), -EPERM,
	       "an event that exists but was not granted to the handle: EPERM");
	EXPECT(reg_flags(g, "h_g_one u32 a", 12, USER_EVENT_REG_PERSIST, NULL), -EPERM,
	       "the granted definition with USER_EVENT_REG_PERSIST: EPERM");
	EXPECT(reg_flags(g, "h_g_one u32 a", 12, USER_EVENT_REG_MULTI_FORMAT, NULL), -EPERM,
	       "the granted definition with USER_EVENT_REG_MULTI_FORMAT (granted without): EPERM");
	EXPECT(reg(g, "h_g_one:BPF u32 a", 12, NULL), -EINVAL, "a definition with text flags: EINVAL");
	EXPECT(reg(g, "h_g_one u32 a", 10, NULL), -EADDRINUSE,
	       "the same enable address and bit again: EADDRINUSE, as upstream");

	/* Enabled by ftrace: the holder's own word follows */
	enable("h_g_one", true);
	check(words[10] == 1, "ftrace enables it: the holder's enable bit is set (%u)", words[10]);
	trace_clear();
	EXPECT(write_event(g, wg, 42), 8, "write h_g_one through the granting handle");
	check(trace_has("h_g_one", "a", 42), "and the record is in the trace");
	EXPECT(write_event(fd, wg + 5, 1), -ENOENT, "the plain file does not have the handle's indexes");

	/* Granted later: a definition granted after the holder's first one */
	EXPECT(grant_def(fd, g, "h_g_two u32 b"), 0, "DIAG_IOCSGRANT h_g_two later");
	EXPECT(reg(g, "h_g_two u32 b", 13, &wg2), 0, "the holder registers h_g_two");
	check(wg2 == wg + 1, "with the next index of the handle (%u)", wg2);

	/* Multi-format grants */
	EXPECT(grant_req(fd, DIAG_IOCSGRANT, g, "h_g_multi u32 a", USER_EVENT_REG_MULTI_FORMAT), 0,
	       "DIAG_IOCSGRANT of a multi-format definition");
	EXPECT(reg(g, "h_g_multi u32 a", 14, NULL), -EPERM,
	       "registering it without USER_EVENT_REG_MULTI_FORMAT: EPERM");
	EXPECT(reg_flags(g, "h_g_multi u64 a", 14, USER_EVENT_REG_MULTI_FORMAT, NULL), -EPERM,
	       "another format of the same name: EPERM (a grant is one format)");
	EXPECT(reg_flags(g, "h_g_multi u32 a", 14, USER_EVENT_REG_MULTI_FORMAT, &wm), 0,
	       "registering it with USER_EVENT_REG_MULTI_FORMAT");
	check(multi_exists("h_g_multi"), "the multi-format event exists (in " MULTI_DIR ")");

	/* The holder's own requests */
	EXPECT(ioctl_err(g, DIAG_IOCSDEL, "h_g_taken"), -EPERM, "DIAG_IOCSDEL on the granting handle: EPERM");
	check(event_exists("h_g_taken"), "and the event is still there");
	EXPECT(derive(g, USER_HANDLE_GRANTING), -EPERM, "DIAG_IOCSHANDLE on the granting handle: EPERM");
	EXPECT(grant_def(g, g, "h_g_other u32 a"), -EPERM, "the holder granting itself (DIAG_IOCSGRANT on it): EPERM");
	EXPECT(revoke_grant(g, g, "h_g_one u32 a"), -EPERM, "DIAG_IOCSREVOKE on the granting handle: EPERM");
	EXPECT(unreg(g, 13), 0, "DIAG_IOCSUNREG of the holder's own enabler: 0, as upstream");
	EXPECT(unreg(g, 13), -ENOENT, "DIAG_IOCSUNREG of it again: ENOENT, as upstream");

	/*
	 * A grant to another handle holds the event across the withdrawal, so
	 * that what follows finds the same event whatever the timing (alone,
	 * it would go once the withdrawn index's reference is dropped).
	 */
	keeper = derive(fd, USER_HANDLE_GRANTING);
	EXPECT(grant_def(fd, keeper, "h_g_one u32 a"), 0, "h_g_one granted to a second handle too");

	/* Withdrawing: a forked child shares the enabler and sees it cleared */
	{
		int to_child[2], to_parent[2];
		pid_t pid;
		char c = 0;

		if (pipe(to_child) || pipe(to_parent))
			return;
		pid = fork();
		if (pid == 0) {
			/* inherited enabler: the bit is set in our copy too */
			char ok = words[10] == 1 ? '1' : '0';

			if (write(to_parent[1], &ok, 1) != 1 || read(to_child[0], &c, 1) != 1)
				_exit(2);
			_exit(word_becomes(&words[10], 0) ? 0 : 1);
		}
		if (read(to_parent[0], &c, 1) == 1)
			check(c == '1', "a forked child sees the enable bit in its copy");
		EXPECT(revoke_grant(fd, g, "h_g_one u32 a"), 0, "DIAG_IOCSREVOKE h_g_one");
		check(word_becomes(&words[10], 0), "the holder's enable bit is cleared (%u)", words[10]);
		if (write(to_child[1], "x", 1) == 1) {
			int status = 0;

			waitpid(pid, &status, 0);
			check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			      "and the child's copy too (exit %d)", WEXITSTATUS(status));
		}
	}
	EXPECT(write_event(g, wg, 43), -EPERM, "a write to the withdrawn index: EPERM");
	enable("h_g_one", false);
	enable("h_g_one", true);
	check(words[10] == 0, "ftrace enabling it again does not set the bit");
	EXPECT(unreg(g, 10), -ENOENT, "the withdrawn enabler is gone: DIAG_IOCSUNREG is ENOENT");
	EXPECT(reg(g, "h_g_one u32 a", 15, NULL), -EPERM, "registering the withdrawn definition: EPERM");
	EXPECT(revoke_grant(fd, g, "h_g_one u32 a"), -ENOENT, "withdrawing it again: ENOENT");
	EXPECT(revoke_grant(fd, g, "h_g_nothing u32 a"), -ENOENT, "withdrawing what was never granted: ENOENT");
	EXPECT(write_event(g, wg2, 7), -EBADF,
	       "the other grant's index still reaches its event (EBADF: nobody listens)");

	/* Granted again: a new index, the old one stays withdrawn */
	EXPECT(grant_def(fd, g, "h_g_one u32 a"), 0, "DIAG_IOCSGRANT h_g_one again");
	{
		EXPECT(reg(g, "h_g_one u32 a", 10, &again), 0, "the holder registers it again");
		check(again != wg, "with a new write index (%u, was %u)", again, wg);
		check(words[10] == 1, "its enable bit follows ftrace again (%u)", words[10]);
		trace_clear();
		EXPECT(write_event(g, again, 44), 8, "a write to the new index");
		check(trace_has("h_g_one", "a", 44), "and the record is in the trace");
		EXPECT(write_event(g, wg, 45), -EPERM, "the old index stays withdrawn: EPERM");
		unreg(g, 10);
	}
	enable("h_g_one", false);
	close(keeper);

	/* The hostile holder: every ioctl number and many write indexes */
	{
		static const unsigned int dirs[] = { _IOC_NONE, _IOC_READ, _IOC_WRITE, _IOC_READ | _IOC_WRITE };
		int unexpected = 0, refused = 0;
		uint8_t junk[64];

		memset(junk, 0, sizeof(junk));
		for (unsigned int d = 0; d < 4; d++) {
			for (unsigned int nr = 0; nr < 256; nr++) {
				unsigned long cmd = _IOC(dirs[d], DIAG_IOC_MAGIC, nr, sizeof(void *));
				int kinds[2] = { g, -1 };

				kinds[1] = derive(fd, 0);
				for (int k = 0; k < 2; k++) {
					bool known = cmd == DIAG_IOCSREG || cmd == DIAG_IOCSDEL || cmd == DIAG_IOCSUNREG ||
						     cmd == DIAG_IOCSHANDLE || cmd == DIAG_IOCSGRANT ||
						     cmd == DIAG_IOCSREVOKE;
					long want = known ? -EPERM : -ENOTTY;

					/* on the granting handle the two that work are tested above */
					if (k == 0 && (cmd == DIAG_IOCSREG || cmd == DIAG_IOCSUNREG))
						continue;
					r = ioctl_err(kinds[k], cmd, junk);
					if (r != want)
						unexpected++;
					else if (r == -EPERM)
						refused++;
				}
				close(kinds[1]);
			}
		}
		check(unexpected == 0 && refused == 4 + 6,
		      "every ioctl number of the interface on both handles: EPERM for the known ones, ENOTTY for the rest (%d unexpected, %d refused)",
		      unexpected, refused);
		unexpected = 0;
		for (int32_t idx = -3; idx < 4096; idx++) {
			r = write_event(g, idx, 1);
			if (idx < 0 ? r != -EINVAL :
			    idx == (int32_t)wg ? r != -EPERM :
			    idx == (int32_t)wg2 || idx == (int32_t)wm || idx == (int32_t)again ? r != -EBADF :
			    r != -ENOENT)
				unexpected++;
		}
		EXPECT(write_event(g, INT32_MAX, 1), -ENOENT, "write index INT32_MAX on the granting handle: ENOENT");
		check(unexpected == 0, "write indexes -3..4095 on the granting handle: only its own reach an event (%d unexpected)",
		      unexpected);
		wo = derive(fd, 0);
		unexpected = 0;
		for (int32_t idx = -3; idx < 4096; idx++) {
			r = write_event(wo, idx, 1);
			if (idx < 0 ? r != -EINVAL : idx == (int32_t)w_plain ? r != -EBADF : r != -ENOENT)
				unexpected++;
		}
		check(unexpected == 0, "write indexes -3..4095 on a write-only handle: only the file's reach an event (%d unexpected)",
		      unexpected);
		close(wo);
	}

	/* Closing: the grants' events go once nothing holds them (our
	 * enablers hold them too: the process's, not the file's) */
	unreg(other, 11);
	unreg(other, 14);
	close(g);
	close(fd);
	close(other);
	check(event_gone("h_g_one") && event_gone("h_g_two") && event_gone("h_g_taken"),
	      "the granted events go once the handle and the file are closed");
	for (int i = 0; i < 100 && multi_exists("h_g_multi"); i++)
		usleep(20000);
	check(!multi_exists("h_g_multi"), "the multi-format one too");
}

/* Whether a reopen of @fd through /proc with @flags fails; its errno in *err */
static bool reopen_fails(int fd, int flags, int *err)
{
	char path[64];
	int r;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = open(path, flags | O_CLOEXEC);
	*err = r < 0 ? errno : 0;
	if (r >= 0)
		close(r);
	return r < 0;
}

/*
 * The boundary's side doors: a file opened read-only gives no writer, a
 * handle cannot be reopened into more than it is, and the owner's file
 * closing (a broker that exits or crashes) cuts off what it handed out and
 * leaves its events deletable.
 */
static void holes(void)
{
	int ro, fd, wo, g, g2, other, err = 0;
	uint32_t w = 0, wg = 0;
	struct stat st_data, st_wo, st_g;

	/* A file opened read-only */
	ro = open(DATA_FILE, O_RDONLY | O_CLOEXEC);
	if (!check(ro >= 0, "holes: open user_events_data read-only"))
		return;
	fd = open_data();
	g = derive(fd, USER_HANDLE_GRANTING);
	EXPECT(derive(ro, 0), -EBADF, "holes: DIAG_IOCSHANDLE on a file opened read-only: EBADF");
	EXPECT(derive(ro, USER_HANDLE_GRANTING), -EBADF,
	       "holes: DIAG_IOCSHANDLE (granting) on a file opened read-only: EBADF");
	EXPECT(grant_def(ro, g, "h_hole_ro u32 a"), -EBADF, "holes: DIAG_IOCSGRANT on a file opened read-only: EBADF");
	EXPECT(revoke_grant(ro, g, "h_hole_ro u32 a"), -EBADF,
	       "holes: DIAG_IOCSREVOKE on a file opened read-only: EBADF");
	check(!event_exists("h_hole_ro"), "holes: and nothing was created");
	close(ro);

	/* A handle reopened through /proc */
	wo = derive(fd, 0);
	check(stat(DATA_FILE, &st_data) == 0 && fstat(wo, &st_wo) == 0 && fstat(g, &st_g) == 0 &&
	      st_wo.st_ino != st_data.st_ino && st_g.st_ino != st_wo.st_ino,
	      "holes: each handle has an inode of its own, not user_events_data's");
	{
		static const struct {
			const char *what;
			int flags;
			bool granting;
		} cases[] = {
			{ "a write-only handle O_RDWR", O_RDWR, false },
			{ "a write-only handle O_WRONLY", O_WRONLY, false },
			{ "a granting handle O_RDWR", O_RDWR, true },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			bool failed = reopen_fails(cases[i].granting ? g : wo, cases[i].flags, &err);

			check(failed && err == ENXIO, "holes: reopening %s through /proc fails with ENXIO (%s)",
			      cases[i].what, failed ? strerror(err) : "it opened");
		}
	}

	/* The owner's file closed: its handles are cut off */
	EXPECT(grant_def(fd, g, "h_hole_owner u32 a"), 0, "holes: grant h_hole_owner");
	EXPECT(reg(g, "h_hole_owner u32 a", 20, &wg), 0, "holes: the holder registers it");
	EXPECT(reg(fd, "h_hole_wo u32 a", 21, &w), 0, "holes: the owner registers h_hole_wo for the write-only handle");
	enable("h_hole_owner", true);
	enable("h_hole_wo", true);
	check(words[20] == 1, "holes: the holder's bit follows ftrace (%u)", words[20]);
	EXPECT(write_event(g, wg, 1), 8, "holes: the holder writes");
	EXPECT(write_event(wo, w, 1), 8, "holes: the write-only handle writes");
	g2 = derive(fd, USER_HANDLE_GRANTING);
	other = open_data();
	close(fd);
	check(words[20] == 0, "holes: the owner's file closed, the holder's bit is cleared (%u)", words[20]);
	EXPECT(write_event(g, wg, 2), -EPERM, "holes: the holder's write: EPERM");
	EXPECT(write_event(wo, w, 2), -EPERM, "holes: the write-only handle's write: EPERM");
	EXPECT(reg(g, "h_hole_owner u32 a", 22, NULL), -EPERM, "holes: the holder's DIAG_IOCSREG: EPERM");
	EXPECT(unreg(g, 20), -ENOENT, "holes: its enabler is gone (DIAG_IOCSUNREG: ENOENT)");
	enable("h_hole_owner", false);
	enable("h_hole_owner", true);
	check(words[20] == 0, "holes: ftrace enabling it again does not set the bit");
	enable("h_hole_owner", false);
	enable("h_hole_wo", false);
	/* the owner's own enabler is the process's, as upstream */
	unreg(other, 21);
	EXPECT(grant_def(other, g2, "h_hole_owner u32 a"), -EINVAL,
	       "holes: another file granting to a handle of the closed one: EINVAL");
	EXPECT(cut_off(other, g), -EINVAL, "holes: or cutting it off: EINVAL");
	/* A restarted broker deletes what its predecessor's clients used */
	{
		long r = -EBUSY;

		for (int i = 0; i < 100 && event_exists("h_hole_owner") && r == -EBUSY; i++) {
			r = ioctl_err(other, DIAG_IOCSDEL, "h_hole_owner");
			if (r == -EBUSY)
				usleep(20000);
		}
		check(!event_exists("h_hole_owner"),
		      "holes: the granted event goes (or is deleted) while the cut-off handle is open (%s)", errname(r));
	}
	check(event_gone("h_hole_wo"), "holes: and the write-only handle's event too");
	close(other);
	close(g2);
	close(g);
	close(wo);
}

/* Registers @n enablers of @def through @g, at @bits[0..n); returns how many took. */
static int reg_many(int g, const char *def, uint32_t *bits, int n)
{
	int regs = 0;

	for (int i = 0; i < n; i++) {
		struct user_reg reg = {
			.size = sizeof(reg),
			.enable_size = 4,
			.enable_addr = (uintptr_t)&bits[i],
			.name_args = (uintptr_t)def,
		};

		regs += ioctl_err(g, DIAG_IOCSREG, &reg) == 0;
	}
	return regs;
}

/*
 * Withdrawing a grant whose holder registered many enablers, beside as
 * many of another grant registered after them (the kernel lists a
 * process's newest enablers first, so those are in the way of a search
 * for the withdrawn ones): each withdrawn one is removed and its bit
 * cleared, the others stay. The time of each withdrawal is printed (a
 * comment, not a check) for two counts: four times the enablers should
 * take about four times as long, not sixteen.
 */
static void many_enablers(void)
{
	static const int counts[] = { 512, 2048 };

	for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int n = counts[c], fd = open_data(), g, set = 0, cleared = 0, kept = 0, regs;
		uint32_t *bits = calloc(2 * n, sizeof(*bits));
		struct timespec t0, t1;
		long r;

		if (fd < 0 || !bits) {
			check(false, "many enablers: a data file and memory");
			free(bits);
			return;
		}
		g = derive(fd, USER_HANDLE_GRANTING);
		EXPECT(grant_def(fd, g, "h_many u32 a"), 0, "many enablers: DIAG_IOCSGRANT h_many");
		EXPECT(grant_def(fd, g, "h_many_kept u32 a"), 0, "many enablers: DIAG_IOCSGRANT h_many_kept");
		regs = reg_many(g, "h_many u32 a", bits, n);
		regs += reg_many(g, "h_many_kept u32 a", bits + n, n);
		check(regs == 2 * n, "many enablers: the holder registers %d enablers of h_many, then %d of h_many_kept (%d)",
		      n, n, regs);
		enable("h_many", true);
		enable("h_many_kept", true);
		for (int i = 0; i < 2 * n; i++)
			set += bits[i] == 1;
		check(set == 2 * n, "many enablers: enabling sets all %d bits (%d set)", 2 * n, set);
		clock_gettime(CLOCK_MONOTONIC, &t0);
		r = revoke_grant(fd, g, "h_many u32 a");
		clock_gettime(CLOCK_MONOTONIC, &t1);
		EXPECT(r, 0, "many enablers: DIAG_IOCSREVOKE h_many");
		printf("# DIAG_IOCSREVOKE of %d enablers (beside %d others) took %.3f ms\n", n, n,
		       (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6);
		for (int i = 0; i < n; i++) {
			cleared += bits[i] == 0;
			kept += bits[n + i] == 1;
		}
		check(cleared == n, "many enablers: all %d bits of the withdrawn grant are cleared (%d)", n, cleared);
		check(kept == n, "many enablers: the other grant's %d bits stay set (%d)", n, kept);
		enable("h_many", false);
		enable("h_many", true);
		cleared = 0;
		for (int i = 0; i < n; i++)
			cleared += bits[i] == 0;
		check(cleared == n, "many enablers: enabling again sets none of them (%d clear)", cleared);
		enable("h_many", false);
		/* Closing the handle cuts it off: h_many_kept's enablers go too */
		close(g);
		cleared = 0;
		for (int i = 0; i < n; i++)
			cleared += bits[n + i] == 0;
		check(cleared == n, "many enablers: closing the handle clears h_many_kept's %d bits (%d)", n, cleared);
		enable("h_many_kept", false);
		close(fd);
		{
			int data = open_data(), gone = 0;

			for (int i = 0; data >= 0 && i < n; i++) {
				struct user_unreg unreg = {
					.size = sizeof(unreg),
					.disable_addr = (uintptr_t)&bits[n + i],
				};

				gone += ioctl_err(data, DIAG_IOCSUNREG, &unreg) == -ENOENT;
			}
			if (data >= 0)
				close(data);
			check(gone == n, "many enablers: and removes them (DIAG_IOCSUNREG: ENOENT for %d of %d)", gone, n);
		}
		check(event_gone("h_many") && event_gone("h_many_kept"), "many enablers: both events go at the end");
		free(bits);
	}
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--stock")) {
		stock();
	} else {
		derive_rules();
		write_only();
		granting();
		holes();
		many_enablers();
	}
	printf("1..%d\n", n_checks);
	return n_failed ? 1 : 0;
}
