// SPDX-License-Identifier: GPL-2.0-only
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static int checks, failures;

bool ue_check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%sok %d - ", ok ? "" : "not ", checks);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	return ok;
}

void ue_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int ue_done(void)
{
	printf("1..%d\n", checks);
	fflush(stdout);
	return failures ? 1 : 0;
}

const char *ue_errname(long r)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "%s", strerror((int)-r));
	return buf;
}

int ue_open_data(void)
{
	return open(DATA_FILE, O_RDWR | O_CLOEXEC);
}

int ue_reg(int fd, const char *cmd, uint32_t *status_index, uint32_t *write_index)
{
	struct user_reg reg = { .size = sizeof(reg), .name_args = (uintptr_t)cmd };

	if (ioctl(fd, DIAG_IOCSREG, &reg) < 0)
		return -errno;
	if (status_index)
		*status_index = reg.status_index;
	if (write_index)
		*write_index = reg.write_index;
	return 0;
}

int ue_del(int fd, const char *name)
{
	return ioctl(fd, DIAG_IOCSDEL, name) < 0 ? -errno : 0;
}

int ue_del_name(const char *name)
{
	int fd = ue_open_data(), r;

	if (fd < 0)
		return -errno;
	r = ue_del(fd, name);
	close(fd);
	return r;
}

ssize_t ue_write(int fd, int32_t index, const void *payload, size_t len)
{
	struct iovec io[2] = {
		{ .iov_base = &index, .iov_len = sizeof(index) },
		{ .iov_base = (void *)payload, .iov_len = len },
	};
	ssize_t n = writev(fd, io, len ? 2 : 1);

	return n < 0 ? -errno : n;
}

int ue_file_write(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC), r = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = -errno;
	close(fd);
	return r;
}

char *ue_file_read(const char *path)
{
	size_t size = 0, cap = 4096;
	char *buf = malloc(cap + 1), *n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (fd < 0 || !buf) {
		free(buf);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	for (;;) {
		if (size == cap) {
			cap *= 2;
			n = realloc(buf, cap + 1);
			if (!n)
				break;
			buf = n;
		}
		r = read(fd, buf + size, cap - size);
		if (r <= 0)
			break;
		size += (size_t)r;
	}
	close(fd);
	buf[size] = '\0';
	return buf;
}

bool ue_file_contains(const char *path, const char *needle)
{
	char *s = ue_file_read(path);
	bool r = s && strstr(s, needle);

	free(s);
	return r;
}

int ue_file_count(const char *path, const char *needle)
{
	char *s = ue_file_read(path);
	int n = 0;

	for (char *p = s; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	free(s);
	return n;
}

bool ue_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

int ue_event_id(const char *name)
{
	char path[512], *s;
	int id;

	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/id", name);
	s = ue_file_read(path);
	if (!s)
		return -errno;
	id = atoi(s);
	free(s);
	return id;
}

int ue_enable(const char *name, bool on)
{
	char path[512];
	int fd, r = 0;

	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/enable", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, on ? "1" : "0", 1) != 1)
		r = -errno;
	close(fd);
	return r;
}

void ue_trace_clear(void)
{
	int fd = open(TRACEFS "/trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
}

static char *trace_needle(const char *name, const char *text)
{
	char *s;

	if (asprintf(&s, " %s: %s\n", name, text) < 0)
		return NULL;
	return s;
}

bool ue_trace_has(const char *name, const char *text)
{
	char *needle = trace_needle(name, text);
	bool r = needle && ue_file_contains(TRACEFS "/trace", needle);

	free(needle);
	return r;
}

int ue_trace_count(const char *name)
{
	char needle[300];

	snprintf(needle, sizeof(needle), " %s:", name);
	return ue_file_count(TRACEFS "/trace", needle);
}

const volatile uint8_t *ue_status_map(void)
{
	int fd = open(STATUS_FILE, O_RDONLY | O_CLOEXEC);
	void *p;

	if (fd < 0)
		return NULL;
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

int ue_perf_open(int id)
{
	struct perf_event_attr pe = {
		.type = PERF_TYPE_TRACEPOINT,
		.size = sizeof(pe),
		.config = (uint64_t)id,
		.sample_type = PERF_SAMPLE_RAW,
		.sample_period = 1,
		.wakeup_events = 1,
	};
	int fd = (int)syscall(__NR_perf_event_open, &pe, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}
