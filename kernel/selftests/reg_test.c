// SPDX-License-Identifier: GPL-2.0-only
/*
 * Registration: indexes per data file, status index never 0, the same
 * event again, redefinition, the command grammar, struct user_reg's size
 * rules, DIAG_IOCSDEL, and the 4096-event limit.
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static void indexes(void)
{
	uint32_t s1, w1, s2, w2, s3, w3, s4, w4;
	int a = ue_open_data(), b = ue_open_data();

	CHECK(a >= 0 && b >= 0, "open user_events_data twice");
	EXPECT_RET(ue_reg(a, "r_one u32 a", &s1, &w1), 0, "register r_one");
	CHECK(s1 != 0 && s1 < 4096, "status index %u is in 1..4095", s1);
	CHECK(w1 == 0, "first write index on a file is 0 (got %u)", w1);
	EXPECT_RET(ue_reg(a, "r_two u64 b; char[4] c", &s2, &w2), 0, "register r_two");
	CHECK(w2 == 1 && s2 != s1 && s2 != 0, "second event: write index 1 (got %u), its own status index (%u)", w2, s2);
	EXPECT_RET(ue_reg(a, "r_one u32 a", &s3, &w3), 0, "register r_one again on the same file");
	CHECK(s3 == s1 && w3 == w1, "same event, same file: same indexes (%u/%u)", s3, w3);
	EXPECT_RET(ue_reg(b, "r_two u64 b; char[4] c", &s4, &w4), 0, "register r_two on another file");
	CHECK(s4 == s2 && w4 == 0, "another file: same status index %u, its own write index 0 (got %u)", s4, w4);
	EXPECT_RET(ue_reg(a, "r_one u32 a;", NULL, NULL), 0, "a trailing ';' is the same definition");
	EXPECT_RET(ue_reg(a, "r_one u64 a", NULL, NULL), -EADDRINUSE, "same name, other fields: EADDRINUSE");
	EXPECT_RET(ue_reg(b, "r_one", NULL, NULL), -EADDRINUSE, "same name, no fields: EADDRINUSE");
	CHECK(ue_exists(TRACEFS "/events/user_events/r_one/format"), "events/user_events/r_one/format exists");
	EXPECT_RET(ue_del(b, "r_one"), -EBUSY, "delete while a file holds a registration: EBUSY");
	close(a);
	close(b);
	EXPECT_RET(ue_del_name("r_one"), 0, "delete r_one once its files are closed");
	EXPECT_RET(ue_del_name("r_one"), -ENOENT, "delete it again: ENOENT");
	CHECK(!ue_exists(TRACEFS "/events/user_events/r_one"), "events/user_events/r_one is gone");
	EXPECT_RET(ue_del_name("r_two"), 0, "delete r_two");
	EXPECT_RET(ue_del_name("no_such_event"), -ENOENT, "delete an unknown event: ENOENT");
}

static void grammar(void)
{
	static const char *const bad[] = {
		"", " u32 a", "1abc u32 a", "bad!name u32 a", "t_bad long x", "t_bad unsigned long x",
		"t_bad u32", "t_bad u32 a 4", "t_bad struct foo x", "t_bad struct foo x 0",
		"t_bad struct 1foo x 4", "t_bad char[0] x", "t_bad char[1025] x",
		"t_bad char[0x0000001] x", "t_bad char[+4] x", "t_bad char[12a] x", "t_bad char[4]x y",
		"t_bad u32 a; u32 a", "t_bad u32  a", "t_bad u32 a b c", "t_bad u32 common_pid",
		"t_bad u32 1a", "t_bad:bad-flag u32 a", "t_bad:,x u32 a", "t_bad __data_loc foo[] x",
		"t_bad float x",
	};
	static const char *const good[][2] = {
		{ "g_flags:FLAG1,flag_2 u32 a", "g_flags" },
		{ "g_hex char[0x10] a; char[010] b; unsigned char[3] c", "g_hex" },
		{ "g_lead    u32 a;   u8 b;", "g_lead" },
		{ "g_struct struct foo x 20; __data_loc char[] s; __rel_loc u8[] r", "g_struct" },
		{ "g_none", "g_none" },
		{ "g-dash_9 s8 a", "g-dash_9" },
		{ "g_seven char[0x00001] a", "g_seven" },	/* 7 characters in the brackets */
	};
	char cmd[600];
	int fd = ue_open_data();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(cmd, sizeof(cmd), "refuses '%s' with EINVAL", bad[i]);
		EXPECT_RET(ue_reg(fd, bad[i], NULL, NULL), -EINVAL, cmd);
	}
	CHECK(!ue_exists(TRACEFS "/events/user_events/t_bad"), "no refused command left an event");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(cmd, sizeof(cmd), "accepts '%s'", good[i][0]);
		EXPECT_RET(ue_reg(fd, good[i][0], NULL, NULL), 0, cmd);
	}

	/* 511 characters is the longest command; 512 is EINVAL */
	memset(cmd, ' ', sizeof(cmd));
	memcpy(cmd, "g_len", 5);
	memcpy(cmd + 511 - 5, "u32 a", 5);
	cmd[511] = '\0';
	EXPECT_RET(ue_reg(fd, cmd, NULL, NULL), 0, "a command of 511 characters");
	memcpy(cmd + 512 - 5, "u32 a", 5);
	cmd[512] = '\0';
	memcpy(cmd, "g_lon", 5);
	EXPECT_RET(ue_reg(fd, cmd, NULL, NULL), -EINVAL, "a command of 512 characters: EINVAL");
	/* names: at most 255 bytes */
	memset(cmd, 'n', 256);
	cmd[256] = '\0';
	EXPECT_RET(ue_reg(fd, cmd, NULL, NULL), -EINVAL, "a 256-byte name: EINVAL");
	cmd[255] = '\0';
	EXPECT_RET(ue_reg(fd, cmd, NULL, NULL), 0, "a 255-byte name");
	close(fd);
	EXPECT_RET(ue_del_name(cmd), 0, "delete the 255-byte name");
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ue_del_name(good[i][1]);
	ue_del_name("g_len");
}

/* struct user_reg with another size, as the caller's header may have it */
struct reg_big {
	struct user_reg reg;
	uint64_t extra[2];
};

static void struct_size(void)
{
	struct reg_big big = {};
	int fd = ue_open_data();
	const char *cmd = "s_size u32 a";

	big.reg.name_args = (uintptr_t)cmd;
	big.reg.size = sizeof(big);
	CHECK(ioctl(fd, DIAG_IOCSREG, &big) == 0 && big.reg.status_index != 0,
	      "a larger struct with zeroes beyond struct user_reg is accepted (status %u)", big.reg.status_index);
	big.extra[1] = 1;
	EXPECT_ERRNO(ioctl(fd, DIAG_IOCSREG, &big), E2BIG, "a larger struct with a non-zero byte beyond: E2BIG");
	big.extra[1] = 0;
	big.reg.size = 4097;
	EXPECT_ERRNO(ioctl(fd, DIAG_IOCSREG, &big), E2BIG, "size larger than a page: E2BIG");
	/* 16 bytes: size and name_args, the outputs left out */
	big = (struct reg_big){ .reg = { .size = 16, .name_args = (uintptr_t)cmd, .status_index = 77, .write_index = 77 } };
	CHECK(ioctl(fd, DIAG_IOCSREG, &big) == 0 && big.reg.status_index == 77 && big.reg.write_index == 77,
	      "a 16-byte struct (no outputs) registers, nothing written beyond its size");
	big.reg.size = 20;
	CHECK(ioctl(fd, DIAG_IOCSREG, &big) == 0 && big.reg.status_index != 77 && big.reg.write_index == 77,
	      "a 20-byte struct gets status_index only");
	big.reg.size = 8;
	EXPECT_ERRNO(ioctl(fd, DIAG_IOCSREG, &big), EINVAL, "an 8-byte struct (no name_args): EINVAL");
	big = (struct reg_big){ .reg = { .size = sizeof(struct user_reg), .name_args = 8 } };
	EXPECT_ERRNO(ioctl(fd, DIAG_IOCSREG, &big), EFAULT, "an unreadable name_args: EFAULT");
	EXPECT_ERRNO(ioctl(fd, DIAG_IOCSREG, (void *)8), EFAULT, "an unreadable struct: EFAULT");
	EXPECT_ERRNO(ioctl(fd, _IO(DIAG_IOC_MAGIC, 9), 0), ENOTTY, "an unknown ioctl: ENOTTY");
	close(fd);
	ue_del_name("s_size");
}

/* The original documents' path: tracefs under debugfs. */
static void debugfs_path(void)
{
	struct user_reg reg = { .size = sizeof(reg), .name_args = (uintptr_t)"p_debugfs u32 a" };
	int fd = open(DEBUGFS_TRACING "/user_events_data", O_RDWR);

	CHECK(fd >= 0, "open " DEBUGFS_TRACING "/user_events_data");
	CHECK(fd >= 0 && ioctl(fd, DIAG_IOCSREG, &reg) == 0, "register through the debugfs path");
	CHECK(ue_exists(DEBUGFS_TRACING "/events/user_events/p_debugfs/enable"), "the event is under the debugfs path too");
	if (fd >= 0)
		close(fd);
	ue_del_name("p_debugfs");
}

static void limit(void)
{
	char name[32], *text;
	uint32_t s = 0, w = 0;
	int fd = ue_open_data(), n = 0, r = 0, deleted = 0;
	bool zero = false;

	for (;;) {
		snprintf(name, sizeof(name), "lim_%d", n);
		r = ue_reg(fd, name, &s, &w);
		if (r < 0)
			break;
		zero |= s == 0;
		n++;
		if (n > 5000)
			break;
	}
	text = ue_file_read(STATUS_FILE);
	ue_diag("registered %d events before %s", n, ue_errname(r));
	CHECK(r == -EMFILE, "registration beyond the status page's 4095 indexes: EMFILE (got %s)", ue_errname(r));
	CHECK(text && strstr(text, "\nActive: 4095\n") && strstr(text, "\nMax: 4096\n"),
	      "user_events_status says Active: 4095, Max: 4096");
	CHECK(!zero, "status index 0 was never handed out");
	CHECK(w == (uint32_t)n - 1, "write indexes went 0..%d on one file (last %u)", n - 1, w);
	free(text);
	close(fd);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "lim_%d", i);
		deleted += ue_del_name(name) == 0;
	}
	CHECK(deleted == n, "deleted all %d again (%d)", n, deleted);
	CHECK(ue_reg(fd = ue_open_data(), "lim_after u32 a", NULL, NULL) == 0, "registering works again after the deletes");
	close(fd);
	ue_del_name("lim_after");
}

int main(void)
{
	indexes();
	grammar();
	struct_size();
	debugfs_path();
	limit();
	return ue_done();
}
