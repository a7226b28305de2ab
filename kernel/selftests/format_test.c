// SPDX-License-Identifier: GPL-2.0-only
/*
 * The format file of every type, byte for byte what the project's
 * `uebctl format` prints for the same command (with the real ID), and the
 * print fmt lines uebroker-event-command(7) gives as examples.
 */
#include "ue_lib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *uebctl_format(const char *cmd, int id)
{
	char shell[700], *out = NULL, *fixed = NULL, *p;
	size_t cap = 0, len = 0;
	char buf[4096];
	FILE *f;
	size_t n;

	snprintf(shell, sizeof(shell), "uebctl format '%s'", cmd);
	f = popen(shell, "r");
	if (!f)
		return NULL;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		if (len + n + 1 > cap) {
			cap = (len + n + 1) * 2;
			out = realloc(out, cap);
		}
		memcpy(out + len, buf, n);
		len += n;
	}
	if (pclose(f) != 0 || !out) {
		free(out);
		return NULL;
	}
	out[len] = '\0';
	/* uebctl knows no ID: "ID: 0" */
	p = strstr(out, "\nID: 0\n");
	if (p && asprintf(&fixed, "%.*s\nID: %d\n%s", (int)(p - out), out, id, p + 7) < 0)
		fixed = NULL;
	free(out);
	return fixed;
}

/*
 * DECIMAL: the array size as the kernel writes it in the format file
 * ("x[16]" for char[0x10]); uebctl prints it as written ("x[0x10]"), so
 * for a hex or octal size the two differ in that bracket alone
 * (kernel/README.md). NULL for every other command.
 */
static void same_as_uebctl_but(const char *cmd, const char *name, const char *written, const char *decimal)
{
	char path[300], *kernel, *tool;
	int fd = ue_open_data(), id;

	if (ue_reg(fd, cmd, NULL, NULL) < 0) {
		CHECK(false, "register '%s'", cmd);
		close(fd);
		return;
	}
	id = ue_event_id(name);
	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/format", name);
	kernel = ue_file_read(path);
	tool = uebctl_format(cmd, id);
	if (tool && written) {
		char *at = strstr(tool, written), *fixed = NULL;

		if (at && asprintf(&fixed, "%.*s%s%s", (int)(at - tool), tool, decimal, at + strlen(written)) > 0) {
			free(tool);
			tool = fixed;
		}
	}
	CHECK(kernel && tool && !strcmp(kernel, tool), "format of '%s' is what uebctl format prints%s%s%s%s", cmd,
	      written ? " (size in decimal: " : "", written ? written : "", written ? " as " : "",
	      written ? decimal : "");
	if (kernel && tool && strcmp(kernel, tool))
		ue_diag("kernel:\n%s# uebctl:\n%s", kernel, tool);
	free(kernel);
	free(tool);
	close(fd);
	ue_del_name(name);
}

static void same_as_uebctl(const char *cmd, const char *name)
{
	same_as_uebctl_but(cmd, name, NULL, NULL);
}

static void print_fmt(const char *cmd, const char *name, const char *want)
{
	char path[300], line[600];
	int fd = ue_open_data();

	ue_reg(fd, cmd, NULL, NULL);
	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/format", name);
	snprintf(line, sizeof(line), "\nprint fmt: %s\n", want);
	CHECK(ue_file_contains(path, line), "'%s': print fmt: %s", cmd, want);
	close(fd);
	ue_del_name(name);
}

int main(void)
{
	static const char *const types[] = {
		"s64", "u64", "s32", "u32", "int", "unsigned int", "s16", "u16", "short", "unsigned short",
		"s8", "u8", "char", "unsigned char", "char[4]", "unsigned char[4]", "char[1024]",
		"__data_loc char[]", "__rel_loc char[]", "__data_loc unsigned char[]", "__rel_loc u8[]",
		"__data_loc u32[]", "__data_loc char",
	};
	char cmd[200], name[32];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		snprintf(name, sizeof(name), "fmt_%zu", i);
		snprintf(cmd, sizeof(cmd), "%s %s x", name, types[i]);
		same_as_uebctl(cmd, name);
	}
	same_as_uebctl_but("fmt_hex char[0x10] x", "fmt_hex", "x[0x10]", "x[16]");
	same_as_uebctl_but("fmt_oct unsigned char[010] x", "fmt_oct", "x[010]", "x[8]");
	same_as_uebctl("fmt_struct struct foo x 12", "fmt_struct");
	same_as_uebctl("fmt_none", "fmt_none");
	same_as_uebctl("fmt_many u32 a; char[8] b; __data_loc char[] c; __rel_loc char[] d; struct s e 3; s64 f; u8 g",
		       "fmt_many");

	print_fmt("pf_a u32 a; char[8] b", "pf_a", "\"a=%u b=%s\", REC->a, REC->b");
	print_fmt("pf_b __data_loc char[] data", "pf_b", "\"data=%s\", __get_str(data)");
	print_fmt("pf_c __rel_loc char[] data", "pf_c", "\"data=%s\", __get_rel_str(data)");
	print_fmt("pf_d s64 data", "pf_d", "\"data=%lld\", REC->data");
	print_fmt("pf_e char[4] data", "pf_e", "\"data=%s\", REC->data");
	print_fmt("pf_f", "pf_f", "\"\"");
	return ue_done();
}
