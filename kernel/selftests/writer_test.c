// SPDX-License-Identifier: GPL-2.0-only
/*
 * DIAG_IOCGWRITER: a write-only handle sharing the data file's write
 * indexes (those registered later too), refusing every ioctl, keeping its
 * events registered after the data file is closed.
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
	wr = ioctl(fd, DIAG_IOCGWRITER, 0);
	CHECK(wr >= 0, "DIAG_IOCGWRITER returns a descriptor (%d)", wr);
	if (wr < 0)
		return ue_done();
	flags = fcntl(wr, F_GETFL);
	CHECK((flags & O_ACCMODE) == O_WRONLY, "it is O_WRONLY");
	CHECK(fcntl(wr, F_GETFD) & FD_CLOEXEC, "it is close-on-exec");
	{
		char path[64], link[256] = "";

		snprintf(path, sizeof(path), "/proc/self/fd/%d", wr);
		if (readlink(path, link, sizeof(link) - 1) < 0)
			link[0] = '\0';
		CHECK(!strcmp(link, DATA_FILE), "it is another open file of user_events_data (%s)", link);
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
	EXPECT_RET(ue_write(wr, w1, &v, 4), 8, "the handle still writes after the data file is closed");
	CHECK(ue_trace_has("wr_one", "a=33"), "that record is in the trace");
	ue_enable("wr_one", false);
	ue_enable("wr_two", false);
	EXPECT_RET(ue_del_name("wr_one"), -EBUSY, "the handle keeps wr_one registered: delete is EBUSY");
	close(wr);
	EXPECT_RET(ue_del_name("wr_one"), 0, "once the handle is closed, wr_one can be deleted");
	EXPECT_RET(ue_del_name("wr_two"), 0, "and wr_two");
	(void)w3;
	return ue_done();
}
