// SPDX-License-Identifier: GPL-2.0-only
/*
 * DIAG_IOCGWRITER: a write-only handle sharing the data file's write
 * indexes (those registered later too), refusing every ioctl; only a data
 * file opened for writing gives one, it cannot be reopened through /proc
 * into a data file, and it is cut off (EPERM) when the data file is
 * released, its events then deletable with the handle still open.
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <termios.h>
#include <unistd.h>

static int ioctl_err(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) < 0 ? -errno : 0;
}

int main(void)
{
	struct user_reg reg = { .size = sizeof(reg), .name_args = (uintptr_t)"wr_three u32 c" };
	uint32_t w1, w2, w3, v = 11;
	int fd = ue_open_data(), wr, flags;
	char buf[64];

	EXPECT_RET(ue_reg(fd, "wr_one u32 a", NULL, &w1), 0, "register wr_one on the data file");
	{
		int ro = open(DATA_FILE, O_RDONLY | O_CLOEXEC);

		CHECK(ro >= 0, "open the data file read-only");
		EXPECT_RET(ioctl_err(ro, DIAG_IOCGWRITER, NULL), -EBADF,
			   "DIAG_IOCGWRITER on a data file opened read-only: EBADF");
		if (ro >= 0)
			close(ro);
	}
	wr = ioctl(fd, DIAG_IOCGWRITER, 0);
	CHECK(wr >= 0, "DIAG_IOCGWRITER returns a descriptor (%d)", wr);
	if (wr < 0)
		return ue_done();
	flags = fcntl(wr, F_GETFL);
	CHECK((flags & O_ACCMODE) == O_WRONLY, "it is O_WRONLY");
	CHECK(fcntl(wr, F_GETFD) & FD_CLOEXEC, "it is close-on-exec");
	{
		char path[64], link[256] = "";

		int again;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", wr);
		if (readlink(path, link, sizeof(link) - 1) < 0)
			link[0] = '\0';
		CHECK(!strcmp(link, "anon_inode:[user_events_writer]"), "it is a file of its own kind (%s)", link);
		again = open(path, O_RDWR | O_CLOEXEC);
		CHECK(again < 0 && errno == ENXIO, "reopening it O_RDWR through /proc fails with ENXIO (%d)", again);
		if (again >= 0)
			close(again);
		again = open(path, O_WRONLY | O_CLOEXEC);
		CHECK(again < 0 && errno == ENXIO, "reopening it O_WRONLY fails too (%d)", again);
		if (again >= 0)
			close(again);
	}
	EXPECT_RET(ue_reg(fd, "wr_two u32 b", NULL, &w2), 0, "register wr_two on the data file after");
	ue_enable("wr_one", true);
	ue_enable("wr_two", true);
	ue_trace_clear();
	EXPECT_RET(ue_write(wr, w1, &v, 4), 8, "write wr_one through the handle");
	v = 22;
	EXPECT_RET(ue_write(wr, w2, &v, 4), 8, "write wr_two (registered after the handle was made) through it");
	CHECK(ue_trace_has("wr_one", "a=11") && ue_trace_has("wr_two", "b=22"), "both records are in the trace");
	EXPECT_RET(ue_write(wr, w2 + 1, &v, 4), -ENOENT, "an index not registered: ENOENT");
	EXPECT_RET(ue_write(wr, w1, &v, 2), -EINVAL, "a short payload: EINVAL");

	EXPECT_RET(ioctl_err(wr, DIAG_IOCSREG, &reg), -EPERM, "DIAG_IOCSREG on the handle: EPERM");
	CHECK(!ue_exists(TRACEFS "/events/user_events/wr_three"), "and nothing was registered");
	EXPECT_RET(ioctl_err(wr, DIAG_IOCSDEL, "wr_one"), -EPERM, "DIAG_IOCSDEL on the handle: EPERM");
	EXPECT_RET(ioctl_err(wr, DIAG_IOCGWRITER, NULL), -EPERM, "DIAG_IOCGWRITER on the handle: EPERM");
	EXPECT_RET(ioctl_err(wr, _IO(DIAG_IOC_MAGIC, 2), NULL), -ENOTTY, "any other ioctl ('*', 2): ENOTTY");
	EXPECT_RET(ioctl_err(wr, TCGETS, buf), -ENOTTY, "TCGETS: ENOTTY");
	EXPECT_RET(read(wr, buf, sizeof(buf)) < 0 ? -errno : 0, -EBADF, "read(): EBADF");
	EXPECT_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, wr, 0), EACCES, "mmap() of the write-only handle: EACCES");
	CHECK(ue_del_name("wr_one") == -EBUSY, "the events stay busy while registered");

	close(fd);
	v = 33;
	EXPECT_RET(ue_write(wr, w1, &v, 4), -EPERM, "once the data file is closed, the handle's writes: EPERM");
	EXPECT_RET(ue_write(wr, w2 + 1, &v, 4), -EPERM, "whatever the index");
	ue_enable("wr_one", false);
	ue_enable("wr_two", false);
	{
		int r = -EBUSY;

		/* the data file's counts go a grace period after its release */
		for (int i = 0; i < 100 && (r = ue_del_name("wr_one")) == -EBUSY; i++)
			usleep(20000);
		EXPECT_RET(r, 0, "wr_one can be deleted with the handle still open");
	}
	EXPECT_RET(ue_del_name("wr_two"), 0, "and wr_two");
	close(wr);
	(void)w3;
	return ue_done();
}
