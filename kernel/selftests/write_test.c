// SPDX-License-Identifier: GPL-2.0-only
/*
 * Writes: records in the ftrace buffer with their values, the write index
 * never in the trace, every error code, the __data_loc / __rel_loc
 * validators (a refused record never reaches the trace), a payload in a
 * file-backed MAP_SHARED page dropped with MADV_DONTNEED, and the
 * proposal's own example program.
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

static void basic(void)
{
	struct {
		uint32_t a;
		char b[8];
		int16_t c;
		uint64_t d;
		int8_t e;
	} __attribute__((packed)) p = { 42, "hello", -5, 1234567890123ULL, -1 };
	const char *cmd = "w_basic u32 a; char[8] b; s16 c; u64 d; s8 e";
	uint32_t s, w;
	int fd = ue_open_data();
	char big[8200] = {};

	EXPECT_RET(ue_reg(fd, cmd, &s, &w), 0, "register w_basic");
	ue_trace_clear();
	EXPECT_RET(ue_write(fd, w, &p, sizeof(p)), sizeof(p) + 4, "disabled: a valid write returns its full length");
	EXPECT_RET(ue_write(fd, w + 5, &p, sizeof(p)), -ENOENT, "disabled: an unknown write index is ENOENT");
	EXPECT_RET(ue_write(fd, w, &p, sizeof(p) - 1), -EINVAL, "disabled: a short payload is EINVAL");
	CHECK(ue_trace_count("w_basic") == 0, "nothing written while disabled reached the trace");

	EXPECT_RET(ue_enable("w_basic", true), 0, "enable w_basic");
	EXPECT_RET(ue_write(fd, w, &p, sizeof(p)), sizeof(p) + 4, "enabled: the write returns its full length, index included");
	CHECK(ue_trace_has("w_basic", "a=42 b=hello c=-5 d=1234567890123 e=-1"),
	      "the trace shows 'w_basic: a=42 b=hello c=-5 d=1234567890123 e=-1'");
	{
		char one[sizeof(p) + 4];
		uint32_t idx = w;

		memcpy(one, &idx, 4);
		p.a = 43;
		memcpy(one + 4, &p, sizeof(p));
		CHECK(write(fd, one, sizeof(one)) == (ssize_t)sizeof(one), "a single write() of index and payload");
		CHECK(ue_trace_has("w_basic", "a=43 b=hello c=-5 d=1234567890123 e=-1"), "its record is in the trace");
	}
	/* a longer payload is fine: the fields are a minimum */
	memcpy(big, &p, sizeof(p));
	EXPECT_RET(ue_write(fd, w, big, 100), 104, "a payload longer than the fields");
	EXPECT_RET(ue_write(fd, w, big, 8177), -E2BIG, "a payload above 8176 bytes: E2BIG");
	EXPECT_RET(ue_write(fd, w, big, 8176), 8180, "a payload of 8176 bytes");

	/* errors */
	EXPECT_RET(ue_write(fd, 99, &p, sizeof(p)), -ENOENT, "write index not registered on this file: ENOENT");
	EXPECT_RET(ue_write(fd, -1, &p, sizeof(p)), -ENOENT, "write index -1: ENOENT");
	EXPECT_RET(ue_write(fd, w, &p, 3), -EINVAL, "payload shorter than the fields: EINVAL");
	EXPECT_RET(ue_write(fd, w, (void *)8, sizeof(p)), -EFAULT, "payload that cannot be read: EFAULT");
	EXPECT_RET(write(fd, "ab", 2) < 0 ? -errno : 0, -EFAULT, "less than a write index: EFAULT");
	EXPECT_RET(pwrite(fd, big, 40, 8) < 0 ? -errno : 0, -EFAULT, "a write at offset 8: EFAULT");
	{
		int other = ue_open_data();

		EXPECT_RET(ue_write(other, w, &p, sizeof(p)), -ENOENT, "a write index is valid only on its own file: ENOENT");
		close(other);
	}
	/* 8176 bytes are more than a ring-buffer event holds: perf only */
	CHECK(ue_trace_count("w_basic") == 3, "three records in the trace (%d)", ue_trace_count("w_basic"));
	ue_enable("w_basic", false);
	close(fd);
	ue_del_name("w_basic");
}

/* [s: __data_loc char[]][r: __rel_loc char[]][n: u32][bytes...] */
struct dyn_payload {
	uint32_t s, r, n;
	char data[64];
} __attribute__((packed));

#define HDR 8	/* the common header before the payload in a record */

static size_t make_dyn(struct dyn_payload *p, const char *s, const char *r, uint32_t n)
{
	size_t ls = strlen(s) + 1, lr = strlen(r) + 1;

	memset(p, 0, sizeof(*p));
	memcpy(p->data, s, ls);
	memcpy(p->data + ls, r, lr);
	p->s = DYN_LOC(HDR + 12, ls);                    /* from the record start */
	p->r = DYN_LOC(12 + ls - 8, lr);                  /* from the end of the field (offset 8) */
	p->n = n;
	return 12 + ls + lr;
}

static void validators(void)
{
	struct dyn_payload p;
	uint32_t w;
	size_t len;
	int fd = ue_open_data(), before;

	EXPECT_RET(ue_reg(fd, "w_dyn __data_loc char[] s; __rel_loc char[] r; u32 n", NULL, &w), 0, "register w_dyn");
	ue_enable("w_dyn", true);
	ue_trace_clear();
	len = make_dyn(&p, "hello", "world", 7);
	EXPECT_RET(ue_write(fd, w, &p, len), len + 4, "valid __data_loc and __rel_loc strings");
	CHECK(ue_trace_has("w_dyn", "s=hello r=world n=7"), "the trace shows 's=hello r=world n=7'");
	before = ue_trace_count("w_dyn");

	len = make_dyn(&p, "hello", "world", 8);
	p.s = DYN_LOC(HDR + 12, 60);
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__data_loc size beyond the payload: EFAULT");
	len = make_dyn(&p, "hello", "world", 9);
	p.s = DYN_LOC(4, 6);
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__data_loc pointing into the common header: EFAULT");
	len = make_dyn(&p, "hello", "world", 10);
	p.s = DYN_LOC(HDR + 12 + 200, 6);
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__data_loc offset beyond the payload: EFAULT");
	len = make_dyn(&p, "hello", "world", 11);
	p.data[5] = 'X';
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__data_loc string without its NUL: EFAULT");
	len = make_dyn(&p, "hello", "world", 12);
	p.s = DYN_LOC(HDR + 12, 0);
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__data_loc char of size 0: EFAULT");
	len = make_dyn(&p, "hello", "world", 13);
	p.r = DYN_LOC(12 + 6 - 8, 40);
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__rel_loc size beyond the payload: EFAULT");
	len = make_dyn(&p, "hello", "world", 14);
	p.data[11] = 'X';
	EXPECT_RET(ue_write(fd, w, &p, len), -EFAULT, "__rel_loc string without its NUL: EFAULT");
	len = make_dyn(&p, "hello", "world", 15);
	EXPECT_RET(ue_write(fd, w, &p, 12 + 6), -EFAULT, "__rel_loc pointing past a truncated payload: EFAULT");
	CHECK(ue_trace_count("w_dyn") == before, "no refused record reached the trace (%d, want %d)",
	      ue_trace_count("w_dyn"), before);
	len = make_dyn(&p, "", "x", 16);
	EXPECT_RET(ue_write(fd, w, &p, len), len + 4, "an empty string (just its NUL) is valid");
	CHECK(ue_trace_has("w_dyn", "s= r=x n=16"), "the trace shows 's= r=x n=16'");
	ue_enable("w_dyn", false);
	close(fd);
	ue_del_name("w_dyn");
}

/* A payload in a page that is not present at write time. */
static void dropped_page(void)
{
	const char *path = "/tmp/ue-madv";
	uint32_t vals[4] = { 0xdead, 0xbeef, 7, 99 };
	uint32_t w, *map;
	int fd = ue_open_data(), f;

	f = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	CHECK(f >= 0 && ftruncate(f, 4096) == 0 && pwrite(f, vals, sizeof(vals), 0) == sizeof(vals),
	      "a file holding the payload");
	map = mmap(NULL, 4096, PROT_READ, MAP_SHARED, f, 0);
	CHECK(map != MAP_FAILED, "mapped MAP_SHARED");
	EXPECT_RET(ue_reg(fd, "w_madv u32 a; u32 b; u32 c; u32 d", NULL, &w), 0, "register w_madv");
	ue_enable("w_madv", true);
	ue_trace_clear();
	CHECK(madvise(map, 4096, MADV_DONTNEED) == 0, "MADV_DONTNEED drops the page from the mapping");
	EXPECT_RET(ue_write(fd, w, map, sizeof(vals)), sizeof(vals) + 4, "writev from the dropped page succeeds");
	CHECK(ue_trace_has("w_madv", "a=57005 b=48879 c=7 d=99"), "its values (not zeros) are in the trace");
	munmap(map, 4096);
	close(f);
	unlink(path);
	ue_enable("w_madv", false);
	close(fd);
	ue_del_name("w_madv");
}

/* The proposal's cover letter, as written there (debugfs path). */
static void proposal_example(void)
{
	struct user_reg reg;
	int payload = 1234;

	int page_fd = open(DEBUGFS_TRACING "/user_events_status", O_RDWR);
	char *page_data = mmap(NULL, 4096, PROT_READ, MAP_SHARED, page_fd, 0);
	close(page_fd);

	int data_fd = open(DEBUGFS_TRACING "/user_events_data", O_RDWR);

	reg.size = sizeof(reg);
	reg.name_args = (__u64)(uintptr_t)"test int payload";

	CHECK(ioctl(data_fd, DIAG_IOCSREG, &reg) == 0, "the proposal's example registers 'test'");
	int status_id = reg.status_index;
	int write_id = reg.write_index;

	struct iovec io[2];
	io[0].iov_base = &write_id;
	io[0].iov_len = sizeof(write_id);
	io[1].iov_base = &payload;
	io[1].iov_len = sizeof(payload);

	CHECK(page_data != MAP_FAILED && page_data[status_id] == 0, "its status byte is 0 while nobody listens");
	ue_enable("test", true);
	ue_trace_clear();
	CHECK(page_data != MAP_FAILED && page_data[status_id] != 0, "enabled: its status byte is set");
	CHECK(page_data != MAP_FAILED && page_data[status_id] &&
	      writev(data_fd, io, 2) == (ssize_t)(io[0].iov_len + io[1].iov_len),
	      "writev() of the index and payload writes them whole");
	CHECK(ue_trace_has("test", "payload=1234"), "its record reaches the trace: 'test: payload=1234'");
	CHECK(ue_file_contains(DEBUGFS_TRACING "/dynamic_events", "u:test int payload\n"),
	      "dynamic_events lists 'u:test int payload'");
	ue_enable("test", false);
	close(data_fd);
	ue_del_name("test");
}

int main(void)
{
	basic();
	validators();
	dropped_page();
	proposal_example();
	return ue_done();
}
