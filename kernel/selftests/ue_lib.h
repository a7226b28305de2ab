/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Helpers of the kernel provider's selftests: TAP output in the kselftest
 * manner (one "ok N - ..." per check, the plan at the end), tracefs files,
 * registration, writes, the status page and perf.
 */
#ifndef UE_LIB_H
#define UE_LIB_H

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/user_events.h>

#define TRACEFS "/sys/kernel/tracing"
#define DEBUGFS_TRACING "/sys/kernel/debug/tracing"
#define DATA_FILE TRACEFS "/user_events_data"
#define STATUS_FILE TRACEFS "/user_events_status"
#define DYN_FILE TRACEFS "/dynamic_events"

/* One TAP line; the checks keep going after a failure. */
bool ue_check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define CHECK(cond, ...) ue_check(!!(cond), __VA_ARGS__)
/* A check whose result is -errno or a value: EXPECT_RET(expr, want, "text") */
#define EXPECT_RET(expr, want, text)                                                         \
	do {                                                                                 \
		long _r = (long)(expr);                                                      \
		ue_check(_r == (long)(want), "%s (want %ld, got %ld%s%s)", text, (long)(want), \
			 _r, _r < 0 ? ": " : "", _r < 0 ? ue_errname(_r) : "");             \
	} while (0)
/* CALL fails (returns -1, or MAP_FAILED) with errno WANT. */
#define EXPECT_ERRNO(call, want, text)                                                            \
	do {                                                                                      \
		long _r;                                                                          \
		int _e;                                                                           \
		errno = 0;                                                                        \
		_r = (long)(call);                                                                \
		_e = errno;                                                                       \
		ue_check(_r == -1 && _e == (want), "%s (%s)", text, _r == -1 ? strerror(_e) : "succeeded"); \
	} while (0)
/* Prints the plan; the exit status (0 if every check passed). */
int ue_done(void);
void ue_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *ue_errname(long r);

int ue_open_data(void);
/* DIAG_IOCSREG: 0 or -errno; the indexes when not NULL. */
int ue_reg(int fd, const char *cmd, uint32_t *status_index, uint32_t *write_index);
int ue_del(int fd, const char *name);
/* Deletes NAME through a fresh data file (quietly; for cleanups). */
int ue_del_name(const char *name);
/* writev [write index][payload]: bytes written or -errno. */
ssize_t ue_write(int fd, int32_t index, const void *payload, size_t len);

/* Writes TEXT to a tracefs file (appending): 0 or -errno. */
int ue_file_write(const char *path, const char *text);
/* The whole file, NUL-terminated, malloc()ed; NULL with errno set. */
char *ue_file_read(const char *path);
bool ue_file_contains(const char *path, const char *needle);
/* Occurrences of NEEDLE in the file. */
int ue_file_count(const char *path, const char *needle);
bool ue_exists(const char *path);

int ue_event_id(const char *name);
int ue_enable(const char *name, bool on);
void ue_trace_clear(void);
/* "NAME: TEXT\n" in the trace */
bool ue_trace_has(const char *name, const char *text);
int ue_trace_count(const char *name);

/* The status page, mapped read-only; NULL on failure. */
const volatile uint8_t *ue_status_map(void);

/* perf_event_open on the tracepoint, PERF_SAMPLE_RAW, this process. */
int ue_perf_open(int id);

#endif
