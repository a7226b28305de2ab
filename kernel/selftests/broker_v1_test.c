// SPDX-License-Identifier: GPL-2.0-only
/*
 * The broker on this kernel (daemon/providers/v1.c): uebrokerd --system,
 * started by the guest's /init with provider auto, must pick v1; a
 * Register gives the kernel's read-only status page and a write-only
 * handle, on which the record reaches the trace and every ioctl of the
 * interface is refused; Unregister, the bus connection's end and Delete
 * remove the event from the kernel.
 */
#include "ue_lib.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <systemd/sd-bus.h>
#include <unistd.h>

#define DEST "org.uebroker1"
#define PATH "/org/uebroker1"
#define IFACE "org.uebroker1.Broker"

int main(void)
{
	sd_bus_error error = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	struct user_reg reg = { .size = sizeof(reg), .name_args = (uintptr_t)"bv1_evil u32 a" };
	char *provider = NULL, link[256] = "", path[64];
	uint32_t status_index = 0, write_index = 0, v = 1234;
	const volatile uint8_t *page = MAP_FAILED;
	int data = -1, status = -1, r;
	sd_bus *bus = NULL;

	r = sd_bus_open_system(&bus);
	CHECK(r >= 0, "connect to the system bus (%s)", r < 0 ? strerror(-r) : "ok");
	if (r < 0)
		return ue_done();
	r = sd_bus_get_property_string(bus, DEST, PATH, IFACE, "Provider", &error, &provider);
	CHECK(r >= 0 && provider && !strcmp(provider, "v1"), "uebrokerd chose the v1 provider (Provider=%s)",
	      provider ? provider : error.message);
	sd_bus_error_free(&error);

	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Register", &error, &reply, "s", "bv1 u32 a");
	CHECK(r >= 0, "Register 'bv1 u32 a' (%s)", r < 0 ? error.message : "ok");
	if (r >= 0 && sd_bus_message_read(reply, "hhuu", &data, &status, &status_index, &write_index) >= 0) {
		data = fcntl(data, F_DUPFD_CLOEXEC, 3);
		status = fcntl(status, F_DUPFD_CLOEXEC, 3);
	}
	sd_bus_message_unref(reply);
	sd_bus_error_free(&error);
	CHECK(data >= 0 && status >= 0 && status_index > 0, "two descriptors and status index %u, write index %u",
	      status_index, write_index);
	if (data < 0 || status < 0)
		return ue_done();

	snprintf(path, sizeof(path), "/proc/self/fd/%d", data);
	if (readlink(path, link, sizeof(link) - 1) < 0)
		link[0] = '\0';
	CHECK(!strcmp(link, "anon_inode:[user_events_writer]"), "the data descriptor is a write-only handle (%s)", link);
	CHECK((fcntl(data, F_GETFL) & O_ACCMODE) == O_WRONLY, "opened write-only (the handle, not the broker's file)");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", status);
	memset(link, 0, sizeof(link));
	if (readlink(path, link, sizeof(link) - 1) < 0)
		link[0] = '\0';
	CHECK(strstr(link, "user_events_status") != NULL, "the status descriptor is the kernel's page (%s)", link);
	CHECK((fcntl(status, F_GETFL) & O_ACCMODE) == O_RDONLY, "opened read-only");
	EXPECT_ERRNO(mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, status, 0), EACCES,
		     "it cannot be mapped writable (a read-only descriptor): EACCES");
	page = mmap(NULL, 4096, PROT_READ, MAP_SHARED, status, 0);
	CHECK(page != MAP_FAILED, "it maps read-only");
	if (page == MAP_FAILED)
		return ue_done();

	EXPECT_ERRNO(ioctl(data, DIAG_IOCSREG, &reg), EPERM, "DIAG_IOCSREG on the handle: EPERM");
	CHECK(!ue_exists(TRACEFS "/events/user_events/bv1_evil"), "nothing was registered behind the broker");
	EXPECT_ERRNO(ioctl(data, DIAG_IOCSDEL, "bv1"), EPERM, "DIAG_IOCSDEL on the handle: EPERM");
	EXPECT_ERRNO(ioctl(data, DIAG_IOCGWRITER, 0), EPERM, "DIAG_IOCGWRITER on the handle: EPERM");

	CHECK(page[status_index] == 0, "nobody listens: status byte 0");
	EXPECT_RET(ue_enable("bv1", true), 0, "enable bv1 in ftrace");
	CHECK(page[status_index] == EVENT_STATUS_FTRACE, "the client's page shows ftrace (0x%x)", page[status_index]);
	ue_trace_clear();
	EXPECT_RET(ue_write(data, (int32_t)write_index, &v, 4), 8, "the client writes through its handle");
	CHECK(ue_trace_has("bv1", "a=1234"), "the record is in the trace: 'bv1: a=1234'");
	EXPECT_RET(ue_enable("bv1", false), 0, "disable bv1");
	CHECK(page[status_index] == 0, "status byte 0 again");

	r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Unregister", &error, NULL, "u", write_index);
	CHECK(r >= 0, "Unregister (%s)", r < 0 ? error.message : "ok");
	sd_bus_error_free(&error);
	close(data);
	sd_bus_flush_close_unref(bus);
	bus = NULL;

	r = sd_bus_open_system(&bus);
	/* the broker sees the first connection leave asynchronously: Busy
	 * until it has */
	for (int i = 0; r >= 0 && i < 50; i++) {
		sd_bus_error_free(&error);
		r = sd_bus_call_method(bus, DEST, PATH, IFACE, "Delete", &error, NULL, "sb", "bv1", 0);
		if (r >= 0 || !sd_bus_error_has_name(&error, "org.uebroker1.Error.Busy"))
			break;
		usleep(100000);
	}
	CHECK(r >= 0, "Delete bv1 once its client left (%s)", r < 0 ? error.message : "ok");
	sd_bus_error_free(&error);
	for (int i = 0; i < 50 && ue_exists(TRACEFS "/events/user_events/bv1"); i++)
		usleep(100000);
	CHECK(!ue_exists(TRACEFS "/events/user_events/bv1"), "bv1 is gone from the kernel");
	sd_bus_flush_close_unref(bus);
	close(status);
	free(provider);
	return ue_done();
}
