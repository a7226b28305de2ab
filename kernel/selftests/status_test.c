// SPDX-License-Identifier: GPL-2.0-only
/*
 * The status page: mapped read-only (never writable), one page, byte
 * status_index carries EVENT_STATUS_FTRACE while ftrace has the event
 * enabled and EVENT_STATUS_PERF while a perf event is open on it; the
 * text of user_events_status.
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void mapping(void)
{
	int fd = open(STATUS_FILE, O_RDWR);
	void *p;

	CHECK(fd >= 0, "open user_events_status read-write (root)");
	EXPECT_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), EPERM,
		     "a writable shared mapping is refused with EPERM");
	EXPECT_ERRNO(mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0), EINVAL, "two pages: EINVAL");
	EXPECT_ERRNO(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 4096), EINVAL, "offset 4096: EINVAL");
	p = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "one page, read-only, shared");
	if (p != MAP_FAILED) {
		EXPECT_ERRNO(mprotect(p, 4096, PROT_READ | PROT_WRITE), EACCES, "mprotect() cannot make it writable");
		CHECK(((const uint8_t *)p)[0] == 0, "byte 0 is 0");
		munmap(p, 4096);
	}
	close(fd);
}

static void bits(void)
{
	const volatile uint8_t *page = ue_status_map();
	uint32_t s = 0, w = 0;
	int fd = ue_open_data(), id, perf;
	char line[128];

	CHECK(page != NULL, "the original programs' mapping: open O_RDONLY, mmap PROT_READ MAP_SHARED");
	EXPECT_RET(ue_reg(fd, "st_ev u32 a", &s, &w), 0, "register st_ev");
	if (!page || s == 0 || s >= 4096) {
		CHECK(false, "cannot go on without the page and an index");
		return;
	}
	CHECK(page[s] == 0, "nobody listens: byte %u is 0", s);
	snprintf(line, sizeof(line), "%u:st_ev\n", s);
	CHECK(ue_file_contains(STATUS_FILE, line), "status text has '%u:st_ev' without a comment", s);

	EXPECT_RET(ue_enable("st_ev", true), 0, "enable st_ev in ftrace");
	CHECK(page[s] == EVENT_STATUS_FTRACE, "byte is EVENT_STATUS_FTRACE (0x%x)", page[s]);
	snprintf(line, sizeof(line), "%u:st_ev # Used by ftrace\n", s);
	CHECK(ue_file_contains(STATUS_FILE, line), "status text: '%u:st_ev # Used by ftrace'", s);
	CHECK(ue_file_contains(STATUS_FILE, "\nBusy: 1\n"), "status text: Busy: 1");

	id = ue_event_id("st_ev");
	perf = ue_perf_open(id);
	CHECK(perf >= 0, "perf_event_open on id %d (%s)", id, perf < 0 ? ue_errname(perf) : "ok");
	CHECK(page[s] == (EVENT_STATUS_FTRACE | EVENT_STATUS_PERF), "with perf too: FTRACE|PERF (0x%x)", page[s]);
	snprintf(line, sizeof(line), "%u:st_ev # Used by ftrace perf\n", s);
	CHECK(ue_file_contains(STATUS_FILE, line), "status text: '# Used by ftrace perf'");

	EXPECT_RET(ue_enable("st_ev", false), 0, "disable st_ev in ftrace");
	CHECK(page[s] == EVENT_STATUS_PERF, "perf alone: EVENT_STATUS_PERF (0x%x)", page[s]);
	snprintf(line, sizeof(line), "%u:st_ev # Used by perf\n", s);
	CHECK(ue_file_contains(STATUS_FILE, line), "status text: '# Used by perf'");
	if (perf >= 0)
		close(perf);
	CHECK(page[s] == 0, "perf closed: byte is 0 again (0x%x)", page[s]);
	CHECK(ue_file_contains(STATUS_FILE, "\nMax: 4096\n"), "status text ends with Max: 4096");
	CHECK(page[0] == 0, "byte 0 stays 0");
	close(fd);
	EXPECT_RET(ue_del_name("st_ev"), 0, "delete st_ev");
	CHECK(page[s] == 0, "after the delete its byte is 0");
	snprintf(line, sizeof(line), "%u:st_ev", s);
	CHECK(!ue_file_contains(STATUS_FILE, line), "and the status text no longer lists it");
}

int main(void)
{
	mapping();
	bits();
	return ue_done();
}
