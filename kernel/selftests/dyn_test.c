// SPDX-License-Identifier: GPL-2.0-only
/*
 * dynamic_events: "u:NAME fields" creates, "!u:NAME [fields]" deletes by
 * the match rule, the file lists the events; and the delete rules while an
 * event is busy (a data file's registration, ftrace, perf).
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EV(name) TRACEFS "/events/user_events/" name

static void grammar(void)
{
	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_one u32 a; char[8] b\n"), 0, "create 'u:d_one u32 a; char[8] b'");
	CHECK(ue_file_contains(DYN_FILE, "u:d_one u32 a; char[8] b\n"), "dynamic_events lists 'u:d_one u32 a; char[8] b'");
	CHECK(ue_exists(EV("d_one/format")) && ue_exists(EV("d_one/id")) && ue_exists(EV("d_one/enable")) &&
	      ue_exists(EV("d_one/filter")) && ue_exists(EV("d_one/trigger")),
	      "events/user_events/d_one has format, id, enable, filter, trigger");
	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_one u32 a; char[8] b\n"), 0, "creating the same definition again is fine");
	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_one u32 a\n"), -EADDRINUSE, "another definition of d_one: EADDRINUSE");
	EXPECT_RET(ue_file_write(DYN_FILE, "u:bad!name u32 a\n"), -EINVAL, "a bad name: EINVAL");
	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_bad u32\n"), -EINVAL, "a field without a name: EINVAL");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_one u32 a\n"), -ENOENT, "'!u:d_one u32 a' does not match two fields: ENOENT");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_one u32 b; char[8] b\n"), -ENOENT, "other field names do not match");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_one u32 a; char[4] b\n"), -ENOENT, "other array sizes do not match");
	CHECK(ue_exists(EV("d_one")), "d_one is still there");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_one u32 a;char[8] b;\n"), 0,
		   "'!u:d_one u32 a;char[8] b;' matches (spacing, trailing ';')");
	CHECK(!ue_exists(EV("d_one")) && !ue_file_contains(DYN_FILE, "u:d_one"), "d_one is gone from tracefs and the list");

	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_struct struct foo x 16; u32 y\n"), 0, "create a struct field");
	CHECK(ue_file_contains(DYN_FILE, "u:d_struct struct foo x 16; u32 y\n"), "listed with the struct's size");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_struct struct foo x 8; u32 y\n"), -ENOENT, "another struct size does not match");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_struct struct foo x; u32 y\n"), 0, "the struct size may be left out");
	CHECK(!ue_exists(EV("d_struct")), "d_struct is gone");

	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_name\n"), 0, "create an event without fields");
	CHECK(ue_file_contains(DYN_FILE, "u:d_name\n"), "listed as 'u:d_name'");
	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_flags:SOMEFLAG s64 v\n"), 0, "flags are accepted and ignored");
	CHECK(ue_file_contains(DYN_FILE, "u:d_flags s64 v\n"), "listed without them");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_name\n"), 0, "'!u:d_name' deletes by name alone");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:user_events/d_flags\n"), 0, "'!u:user_events/d_flags' names the system too");
	CHECK(!ue_exists(EV("d_name")) && !ue_exists(EV("d_flags")), "both are gone");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_none\n"), -ENOENT, "deleting an unknown event: ENOENT");
}

static void busy(void)
{
	int fd, other, perf;

	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_busy u32 a\n"), 0, "create d_busy");
	fd = ue_open_data();
	other = ue_open_data();
	EXPECT_RET(ue_reg(fd, "d_busy u32 a", NULL, NULL), 0, "a data file registers d_busy");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_busy\n"), -EBUSY, "dynamic_events delete while registered: EBUSY");
	EXPECT_RET(ue_del(other, "d_busy"), -EBUSY, "DIAG_IOCSDEL while registered: EBUSY");
	CHECK(ue_file_contains(STATUS_FILE, ":d_busy\n"), "status text lists d_busy");
	close(fd);
	EXPECT_RET(ue_enable("d_busy", true), 0, "enable d_busy in ftrace");
	EXPECT_RET(ue_del(other, "d_busy"), -EBUSY, "DIAG_IOCSDEL while ftrace has it: EBUSY");
	EXPECT_RET(ue_enable("d_busy", false), 0, "disable it");
	perf = ue_perf_open(ue_event_id("d_busy"));
	CHECK(perf >= 0, "perf_event_open on d_busy");
	EXPECT_RET(ue_del(other, "d_busy"), -EBUSY, "DIAG_IOCSDEL while perf has it: EBUSY");
	EXPECT_RET(ue_file_write(DYN_FILE, "!u:d_busy u32 a\n"), -EBUSY, "dynamic_events delete while perf has it: EBUSY");
	if (perf >= 0)
		close(perf);
	EXPECT_RET(ue_del(other, "d_busy"), 0, "unused: DIAG_IOCSDEL succeeds");
	CHECK(!ue_exists(EV("d_busy")) && !ue_file_contains(STATUS_FILE, ":d_busy\n"),
	      "d_busy left tracefs and the status text");
	close(other);

	EXPECT_RET(ue_file_write(DYN_FILE, "u:d_all1 u8 a\nu:d_all2 u8 b\n"), 0, "two lines create two events");
	fd = ue_open_data();
	ue_reg(fd, "d_all2 u8 b", NULL, NULL);
	{
		int t;

		errno = 0;
		t = open(DYN_FILE, O_WRONLY | O_TRUNC);
		CHECK(t < 0 && errno == EBUSY, "truncating dynamic_events with one busy: EBUSY (%s)",
		      t < 0 ? ue_errname(-errno) : "opened");
		if (t >= 0)
			close(t);
	}
	close(fd);
	{
		int t = open(DYN_FILE, O_WRONLY | O_TRUNC);

		CHECK(t >= 0, "truncating dynamic_events with none busy works");
		if (t >= 0)
			close(t);
	}
	CHECK(!ue_exists(EV("d_all1")) && !ue_exists(EV("d_all2")), "and removed them all");
}

int main(void)
{
	grammar();
	busy();
	return ue_done();
}
