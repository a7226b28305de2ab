// SPDX-License-Identifier: GPL-2.0-only
/*
 * user_events, the original interface: user processes register trace
 * events by name and field list and write records of them.
 *
 * tracefs files:
 *   user_events_data    DIAG_IOCSREG / DIAG_IOCSDEL / DIAG_IOCGWRITER
 *                       ioctls; write()/writev() of [u32 write index][payload]
 *   user_events_status  mmap()able read-only page: byte N tells who listens
 *                       to the event with status index N; read() gives text
 * Events live under events/user_events/NAME/ and in dynamic_events as
 * "u:NAME fields".
 *
 * Written for uebroker (its uebroker-event-command(7) and kernel/README.md
 * describe the behaviour; kernel/README.md says how it differs from the
 * proposal and from today's upstream user_events).
 *
 * Locking: event_mutex guards the event table, the status-index bitmap,
 * each event's users count and every data file's registration table. The
 * write path takes no lock: a file's table is an RCU-published array that
 * only grows, and each event in it is pinned by the file's registration.
 * A write-only handle (DIAG_IOCGWRITER) shares its data file's table; when
 * the data file is released the handles are cut off (EPERM), the table is
 * unpublished and its counts dropped after a grace period, and a write
 * through a handle counts itself as a user of its event meanwhile.
 */

#define pr_fmt(fmt) "user_events_v1: " fmt

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/bitmap.h>
#include <linux/ctype.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/init.h>
#include <linux/kref.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tracefs.h>
#include <linux/types.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <uapi/linux/user_events.h>

#include <asm/unaligned.h>

#include "trace.h"
#include "trace_dynevent.h"
#include "trace_output.h"

/* Bytes of the status page; index 0 is never handed out. */
#define UE_MAX_EVENTS		4096
/* MAX_EVENT_DESC: a command with its terminating NUL. */
#define UE_MAX_COMMAND		512
#define UE_MAX_NAME		255
#define UE_MAX_ARRAY		1024
#define UE_MAX_ARRAY_TEXT	7
/* A dynamic field's offset has 16 bits: a larger struct is useless. */
#define UE_MAX_STRUCT		65535
/*
 * The largest payload a perf raw sample can carry (PERF_MAX_TRACE_SIZE
 * less the common header and the sample's alignment slack).
 */
#define UE_MAX_PAYLOAD		(8192 - 16)
/* Payloads up to this size are copied on the stack, larger ones to the heap. */
#define UE_STACK_PAYLOAD	256

enum ue_kind {
	UE_SCALAR,	/* u32, int, unsigned char, ... */
	UE_ARRAY,	/* char[N], unsigned char[N] */
	UE_DATA_LOC,	/* u32 size << 16 | offset from the record start */
	UE_REL_LOC,	/* u32 size << 16 | offset from the end of the field */
	UE_STRUCT,	/* struct TAG name SIZE */
};

struct ue_field {
	char *type;		/* as tracefs shows it: "u32", "char[20]", ... */
	char *name;
	u32 offset;		/* from the record start, common header included */
	u32 size;
	enum ue_kind kind;
	bool is_signed;		/* the type does not start with 'u' */
	bool is_char;
	bool size_given;	/* false only for a struct in a match spec */
};

struct ue_event {
	struct trace_event_class class;
	struct trace_event_call call;
	struct tracepoint tp;
	struct dyn_event devent;
	struct hlist_node node;		/* in ue_names */
	char *name;
	struct ue_field *fields;
	int n_fields;
	u32 min_size;			/* sum of the field sizes */
	u32 index;			/* status index, 1..UE_MAX_EVENTS-1 */
	/* data files holding a registration, plus ftrace/perf registrations */
	atomic_t users;
};

/* A data file's registrations: events[write_index]. Only grows. */
struct ue_refs {
	struct rcu_head rcu;		/* freed when superseded */
	struct rcu_work drop;		/* or dropped, when the data file goes */
	u32 count;
	struct ue_event *events[];
};

/* What a data file and the write-only handles made from it share. */
struct ue_group {
	struct kref kref;
	struct ue_refs __rcu *refs;
	bool cut;			/* the data file is released */
};

typedef void (*ue_probe_t)(struct ue_event *ev, const void *payload, u32 len,
			   void *tpdata);

static DEFINE_HASHTABLE(ue_names, 8);
static struct ue_event *ue_by_index[UE_MAX_EVENTS];
static DECLARE_BITMAP(ue_index_map, UE_MAX_EVENTS);
static u8 *ue_status_page;

static int ue_dyn_create(const char *raw_command);
static int ue_dyn_show(struct seq_file *m, struct dyn_event *dev);
static bool ue_dyn_is_busy(struct dyn_event *dev);
static int ue_dyn_free(struct dyn_event *dev);
static bool ue_dyn_match(const char *system, const char *event, int argc,
			 const char **argv, struct dyn_event *dev);

static struct dyn_event_operations ue_dyn_ops = {
	.create = ue_dyn_create,
	.show = ue_dyn_show,
	.is_busy = ue_dyn_is_busy,
	.free = ue_dyn_free,
	.match = ue_dyn_match,
};

/* ---- the command parser ------------------------------------------------ */

/* ASCII only: the kernel's ctype counts Latin-1 letters as alphabetic. */
static bool ue_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool ue_ident_char(char c)
{
	return ue_ident_start(c) || (c >= '0' && c <= '9');
}

static bool ue_is_identifier(const char *s, size_t n)
{
	size_t i;

	if (!n || !ue_ident_start(s[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!ue_ident_char(s[i]))
			return false;
	return true;
}

/* Event names: [A-Za-z_][A-Za-z0-9_-]*, tracefs and perf safe. */
static bool ue_name_valid(const char *s, size_t n)
{
	size_t i;

	if (!n || n > UE_MAX_NAME || !ue_ident_start(s[0]))
		return false;
	for (i = 1; i < n; i++)
		if (!ue_ident_char(s[i]) && s[i] != '-')
			return false;
	return true;
}

static bool ue_has_prefix(const char *s, size_t n, const char *prefix,
			  size_t *plen)
{
	size_t l = strlen(prefix);

	if (n < l || memcmp(s, prefix, l))
		return false;
	*plen = l;
	return true;
}

static const struct {
	const char *name;
	u32 size;
} ue_scalars[] = {
	{ "s64", 8 }, { "u64", 8 },
	{ "s32", 4 }, { "u32", 4 }, { "int", 4 }, { "unsigned int", 4 },
	{ "s16", 2 }, { "u16", 2 }, { "short", 2 }, { "unsigned short", 2 },
	{ "s8", 1 }, { "u8", 1 }, { "char", 1 }, { "unsigned char", 1 },
};

static int ue_find_scalar(const char *s, size_t n)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ue_scalars); i++)
		if (strlen(ue_scalars[i].name) == n &&
		    !memcmp(ue_scalars[i].name, s, n))
			return i;
	return -1;
}

/* N of char[N]: decimal, 0x hex or 0 octal, at most 7 characters, 1..1024. */
static int ue_parse_array_size(const char *s, size_t n, u32 *ret)
{
	char buf[UE_MAX_ARRAY_TEXT + 1];
	unsigned int v;

	/* digits only: kstrtouint() would also take a '+' */
	if (!n || n > UE_MAX_ARRAY_TEXT || !isdigit(s[0]))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (kstrtouint(buf, 0, &v) || !v || v > UE_MAX_ARRAY)
		return -EINVAL;
	*ret = v;
	return 0;
}

static int ue_parse_type(const char *t, size_t n, struct ue_field *f)
{
	const char *inner;
	size_t plen, ilen;
	int s;

	f->is_signed = t[0] != 'u';

	s = ue_find_scalar(t, n);
	if (s >= 0) {
		f->kind = UE_SCALAR;
		f->size = ue_scalars[s].size;
		f->is_char = strstr(ue_scalars[s].name, "char");
		return 0;
	}

	if (ue_has_prefix(t, n, "__data_loc ", &plen) ||
	    ue_has_prefix(t, n, "__rel_loc ", &plen)) {
		inner = t + plen;
		ilen = n - plen;
		f->kind = t[2] == 'd' ? UE_DATA_LOC : UE_REL_LOC;
		f->size = sizeof(u32);
		if (ilen >= 2 && !memcmp(inner + ilen - 2, "[]", 2))
			ilen -= 2;
		s = ue_find_scalar(inner, ilen);
		if (s < 0)
			return -EINVAL;
		f->is_char = strstr(ue_scalars[s].name, "char");
		return 0;
	}

	if (ue_has_prefix(t, n, "struct ", &plen)) {
		if (!ue_is_identifier(t + plen, n - plen))
			return -EINVAL;
		f->kind = UE_STRUCT;
		return 0;	/* the size is the third word */
	}

	if (ue_has_prefix(t, n, "char[", &plen) ||
	    ue_has_prefix(t, n, "unsigned char[", &plen)) {
		/* the only ']' is the last character */
		if (t[n - 1] != ']' || memchr(t + plen, ']', n - 1 - plen))
			return -EINVAL;
		f->kind = UE_ARRAY;
		f->is_char = true;
		return ue_parse_array_size(t + plen, n - 1 - plen, &f->size);
	}

	/* long and everything else: sizes differ between user and kernel */
	return -EINVAL;
}

static int ue_parse_struct_size(const char *s, size_t n, u32 *ret)
{
	u32 v = 0;
	size_t i;

	if (!n)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		if (!isdigit(s[i]))
			return -EINVAL;
		v = v * 10 + (s[i] - '0');
		if (v > UE_MAX_STRUCT)
			return -EINVAL;
	}
	if (!v)
		return -EINVAL;
	*ret = v;
	return 0;
}

static void ue_fields_free(struct ue_field *fields, int n)
{
	int i;

	if (!fields)
		return;
	for (i = 0; i < n; i++) {
		kfree(fields[i].type);
		kfree(fields[i].name);
	}
	kfree(fields);
}

/* Types that hold a space, tried before splitting a field at spaces. */
static const char *const ue_spaced_types[] = {
	"unsigned ", "struct ", "__data_loc unsigned ", "__data_loc ",
	"__rel_loc unsigned ", "__rel_loc ",
};

/*
 * Parses one field, "type name [size]" (words separated by exactly one
 * space), and appends it to @ev.
 */
static int ue_parse_field(struct ue_event *ev, const char *s, size_t n,
			  bool match)
{
	struct ue_field f = {};
	const char *words[3], *sp;
	size_t lens[3], nwords = 0, type_end = 0, i, plen, wlen;
	int j, ret;

	for (j = 0; j < ARRAY_SIZE(ue_spaced_types); j++) {
		if (ue_has_prefix(s, n, ue_spaced_types[j], &plen)) {
			sp = memchr(s + plen, ' ', n - plen);
			if (!sp)
				return -EINVAL;
			type_end = sp - s;
			break;
		}
	}
	if (!type_end) {
		sp = memchr(s, ' ', n);
		type_end = sp ? sp - s : n;
	}
	words[nwords] = s;
	lens[nwords++] = type_end;

	for (i = type_end; i < n; i += wlen) {
		i++;	/* the separating space */
		sp = memchr(s + i, ' ', n - i);
		wlen = sp ? sp - (s + i) : n - i;
		if (!wlen || nwords == 3)
			return -EINVAL;
		words[nwords] = s + i;
		lens[nwords++] = wlen;
	}
	if (nwords < 2)
		return -EINVAL;

	ret = ue_parse_type(words[0], lens[0], &f);
	if (ret)
		return ret;

	if (lens[1] > UE_MAX_NAME || !ue_is_identifier(words[1], lens[1]))
		return -EINVAL;
	if (lens[1] >= 7 && !memcmp(words[1], "common_", 7))
		return -EINVAL;
	for (j = 0; j < ev->n_fields; j++)
		if (strlen(ev->fields[j].name) == lens[1] &&
		    !memcmp(ev->fields[j].name, words[1], lens[1]))
			return -EINVAL;

	if (f.kind != UE_STRUCT) {
		/* a size is only allowed, and needed, after a struct */
		if (nwords == 3)
			return -EINVAL;
		f.size_given = true;
	} else if (nwords == 3) {
		ret = ue_parse_struct_size(words[2], lens[2], &f.size);
		if (ret)
			return ret;
		f.size_given = true;
	} else if (!match) {
		return -EINVAL;
	}

	f.offset = sizeof(struct trace_entry) + ev->min_size;
	f.type = kstrndup(words[0], lens[0], GFP_KERNEL);
	f.name = kstrndup(words[1], lens[1], GFP_KERNEL);
	if (!f.type || !f.name) {
		kfree(f.type);
		kfree(f.name);
		return -ENOMEM;
	}
	ev->fields[ev->n_fields++] = f;
	/* bounded: 511 bytes of command, each field at most 65535 */
	ev->min_size += f.size;
	return 0;
}

static void ue_event_free(struct ue_event *ev)
{
	if (!ev)
		return;
	ue_fields_free(ev->fields, ev->n_fields);
	kfree(ev->call.print_fmt);
	kfree(ev->name);
	kfree(ev);
}

/**
 * ue_parse - parse a registration command
 * @cmd: "name[:flag[,flag...]] [type name[;type name...]]", NUL-terminated
 * @match: parse a delete specification (a struct's size may be left out)
 * @ret: the parsed, not yet registered event
 *
 * Flags are checked for form and otherwise ignored, as the proposal did.
 *
 * Return: 0, -EINVAL for anything malformed, or -ENOMEM.
 */
static int ue_parse(const char *cmd, bool match, struct ue_event **ret)
{
	const char *name_end, *colon, *args, *semi, *p;
	size_t len, name_len, n, flen, skip, max_fields;
	struct ue_event *ev;
	int err;

	len = strnlen(cmd, UE_MAX_COMMAND);
	if (!len || len >= UE_MAX_COMMAND)
		return -EINVAL;

	name_end = strchr(cmd, ' ');
	name_len = name_end ? name_end - cmd : len;
	colon = memchr(cmd, ':', name_len);
	n = colon ? colon - cmd : name_len;
	if (!ue_name_valid(cmd, n))
		return -EINVAL;
	if (colon) {
		/* flag[,flag...]: words of [A-Za-z0-9_] */
		flen = 0;
		for (p = colon + 1; p <= cmd + name_len; p++) {
			if (p == cmd + name_len || *p == ',') {
				if (!flen)
					return -EINVAL;
				flen = 0;
				continue;
			}
			if (!ue_ident_char(*p))
				return -EINVAL;
			flen++;
		}
	}

	ev = kzalloc(sizeof(*ev), GFP_KERNEL);
	if (!ev)
		return -ENOMEM;
	ev->name = kstrndup(cmd, n, GFP_KERNEL);
	max_fields = 1;
	for (p = cmd; *p; p++)
		max_fields += *p == ';';
	ev->fields = kcalloc(max_fields, sizeof(*ev->fields), GFP_KERNEL);
	if (!ev->name || !ev->fields) {
		ue_event_free(ev);
		return -ENOMEM;
	}

	/* Fields: ';' separated, leading spaces skipped, empty ones ignored. */
	args = name_end ? name_end + 1 : NULL;
	while (args) {
		semi = strchr(args, ';');
		flen = semi ? semi - args : strlen(args);
		for (skip = 0; skip < flen && args[skip] == ' '; skip++)
			;
		if (skip < flen) {
			err = ue_parse_field(ev, args + skip, flen - skip,
					     match);
			if (err) {
				ue_event_free(ev);
				return err;
			}
		}
		args = semi ? semi + 1 : NULL;
	}

	*ret = ev;
	return 0;
}

static bool ue_field_same(const struct ue_field *a, const struct ue_field *b,
			  bool size_optional)
{
	if (strcmp(a->type, b->type) || strcmp(a->name, b->name))
		return false;
	if (size_optional && !b->size_given)
		return true;
	return a->size == b->size;
}

/* Same fields in the same order: the rule for registering a name again. */
static bool ue_fields_equal(const struct ue_event *a, const struct ue_event *b)
{
	int i;

	if (a->n_fields != b->n_fields)
		return false;
	for (i = 0; i < a->n_fields; i++)
		if (!ue_field_same(&a->fields[i], &b->fields[i], false))
			return false;
	return true;
}

/* The delete rule: no fields match any; else the same, struct sizes optional. */
static bool ue_matches(const struct ue_event *ev, const struct ue_event *spec)
{
	int i;

	if (strcmp(ev->name, spec->name))
		return false;
	if (!spec->n_fields)
		return true;
	if (ev->n_fields != spec->n_fields)
		return false;
	for (i = 0; i < ev->n_fields; i++)
		if (!ue_field_same(&ev->fields[i], &spec->fields[i], true))
			return false;
	return true;
}

/* ---- print fmt and trace output ---------------------------------------- */

static const char *ue_field_print_format(const struct ue_field *f)
{
	static const struct {
		const char *type;
		const char *fmt;
	} formats[] = {
		{ "s64", "%lld" }, { "u64", "%llu" }, { "s32", "%d" },
		{ "u32", "%u" }, { "int", "%d" }, { "unsigned int", "%u" },
		{ "s16", "%d" }, { "u16", "%u" }, { "short", "%d" },
		{ "unsigned short", "%u" }, { "s8", "%d" }, { "u8", "%u" },
		{ "char", "%d" }, { "unsigned char", "%u" },
	};
	int i;

	if (f->kind == UE_SCALAR)
		for (i = 0; i < ARRAY_SIZE(formats); i++)
			if (!strcmp(f->type, formats[i].type))
				return formats[i].fmt;
	if (f->is_char)
		return "%s";
	/* struct and non-char dynamic fields */
	return "%llu";
}

/*
 * "\"a=%u b=%s\", REC->a, REC->b": one name=%fmt per field, then the
 * arguments; dynamic char fields as __get_str() / __get_rel_str().
 */
static int ue_build_print_fmt(struct ue_event *ev)
{
	size_t size = 3, pos = 0;
	const struct ue_field *f;
	char *buf;
	int i;

	for (i = 0; i < ev->n_fields; i++)
		size += 2 * strlen(ev->fields[i].name) + 32;
	buf = kmalloc(size, GFP_KERNEL);
	if (!buf)
		return -ENOMEM;

	pos += scnprintf(buf + pos, size - pos, "\"");
	for (i = 0; i < ev->n_fields; i++) {
		f = &ev->fields[i];
		pos += scnprintf(buf + pos, size - pos, "%s%s=%s",
				 i ? " " : "", f->name,
				 ue_field_print_format(f));
	}
	pos += scnprintf(buf + pos, size - pos, "\"");
	for (i = 0; i < ev->n_fields; i++) {
		f = &ev->fields[i];
		if (f->kind == UE_DATA_LOC && f->is_char)
			pos += scnprintf(buf + pos, size - pos,
					 ", __get_str(%s)", f->name);
		else if (f->kind == UE_REL_LOC && f->is_char)
			pos += scnprintf(buf + pos, size - pos,
					 ", __get_rel_str(%s)", f->name);
		else
			pos += scnprintf(buf + pos, size - pos, ", REC->%s",
					 f->name);
	}
	ev->call.print_fmt = buf;
	return 0;
}

/*
 * Where a valid dynamic field's bytes are in @payload (the record without
 * its common header): -EFAULT when they lie outside it, or when a char
 * field is empty or does not end in NUL.
 */
static int ue_dynamic_span(const struct ue_field *f, const u8 *payload,
			   u32 len, u32 *ret_start, u32 *ret_size)
{
	u32 at = f->offset - sizeof(struct trace_entry);
	u32 loc, start, size;

	if (at > len || len - at < sizeof(loc))
		return -EFAULT;
	memcpy(&loc, payload + at, sizeof(loc));
	size = loc >> 16;
	if (f->kind == UE_DATA_LOC) {
		/* from the record start: the header is not the writer's */
		if ((loc & 0xffff) < sizeof(struct trace_entry))
			return -EFAULT;
		start = (loc & 0xffff) - sizeof(struct trace_entry);
	} else {
		start = at + sizeof(loc) + (loc & 0xffff);
	}
	if (start > len || size > len - start)
		return -EFAULT;
	if (f->is_char && (!size || payload[start + size - 1]))
		return -EFAULT;
	*ret_start = start;
	*ret_size = size;
	return 0;
}

static int ue_validate(const struct ue_event *ev, const u8 *payload, u32 len)
{
	u32 start, size;
	int i, ret;

	for (i = 0; i < ev->n_fields; i++) {
		const struct ue_field *f = &ev->fields[i];

		if (f->kind != UE_DATA_LOC && f->kind != UE_REL_LOC)
			continue;
		ret = ue_dynamic_span(f, payload, len, &start, &size);
		if (ret)
			return ret;
	}
	return 0;
}

static void ue_print_bytes(struct trace_seq *s, const u8 *p, u32 n)
{
	u32 i;

	trace_seq_putc(s, '{');
	for (i = 0; i < n; i++)
		trace_seq_printf(s, i ? " %02x" : "%02x", p[i]);
	trace_seq_putc(s, '}');
}

static void ue_print_string(struct trace_seq *s, const u8 *p, u32 n)
{
	trace_seq_printf(s, "%.*s", (int)strnlen((const char *)p, n), p);
}

static void ue_print_field(struct trace_seq *s, const struct ue_field *f,
			   const u8 *payload, u32 len)
{
	u32 at = f->offset - sizeof(struct trace_entry);
	u32 start, size;
	const u8 *p;

	if (at > len || len - at < f->size) {
		trace_seq_puts(s, "<truncated>");
		return;
	}
	p = payload + at;
	switch (f->kind) {
	case UE_SCALAR:
		switch (f->size) {
		case 1:
			if (f->is_signed)
				trace_seq_printf(s, "%d", *(s8 *)p);
			else
				trace_seq_printf(s, "%u", *p);
			break;
		case 2:
			if (f->is_signed)
				trace_seq_printf(s, "%d", get_unaligned((s16 *)p));
			else
				trace_seq_printf(s, "%u", get_unaligned((u16 *)p));
			break;
		case 4:
			if (f->is_signed)
				trace_seq_printf(s, "%d", get_unaligned((s32 *)p));
			else
				trace_seq_printf(s, "%u", get_unaligned((u32 *)p));
			break;
		default:
			if (f->is_signed)
				trace_seq_printf(s, "%lld", get_unaligned((s64 *)p));
			else
				trace_seq_printf(s, "%llu", get_unaligned((u64 *)p));
			break;
		}
		break;
	case UE_ARRAY:
		ue_print_string(s, p, f->size);
		break;
	case UE_DATA_LOC:
	case UE_REL_LOC:
		if (ue_dynamic_span(f, payload, len, &start, &size)) {
			trace_seq_puts(s, "<invalid>");
			break;
		}
		if (f->is_char)
			ue_print_string(s, payload + start, size);
		else
			ue_print_bytes(s, payload + start, size);
		break;
	case UE_STRUCT:
		ue_print_bytes(s, p, f->size);
		break;
	}
}

/* "NAME: a=42 b=text": the fields decoded, never the writer's print fmt. */
static enum print_line_t ue_print_trace(struct trace_iterator *iter, int flags,
					struct trace_event *event)
{
	struct ue_event *ev = container_of(event, struct ue_event, call.event);
	struct trace_seq *s = &iter->seq;
	const u8 *payload = (const u8 *)(iter->ent + 1);
	u32 len = iter->ent_size > sizeof(struct trace_entry) ?
		  iter->ent_size - sizeof(struct trace_entry) : 0;
	int i;

	trace_seq_printf(s, "%s:", ev->name);
	for (i = 0; i < ev->n_fields; i++) {
		trace_seq_printf(s, " %s=", ev->fields[i].name);
		ue_print_field(s, &ev->fields[i], payload, len);
	}
	trace_seq_putc(s, '\n');
	return trace_handle_return(s);
}

static struct trace_event_functions ue_event_funcs = {
	.trace = ue_print_trace,
};

static int ue_define_fields(struct trace_event_call *call)
{
	struct ue_event *ev = call->data;
	const struct ue_field *f;
	int i, ret;

	for (i = 0; i < ev->n_fields; i++) {
		f = &ev->fields[i];
		ret = trace_define_field(call, f->type, f->name, f->offset,
					 f->size, f->is_signed, FILTER_OTHER);
		if (ret)
			return ret;
		/*
		 * The format file shows "char[N] x" as "char x[N]" only when
		 * the field's len is set (else "x[]"); the field just defined
		 * is first in the list.
		 */
		if (f->kind == UE_ARRAY)
			list_first_entry(trace_get_fields(call),
					 struct ftrace_event_field,
					 link)->len = f->size;
	}
	return 0;
}

static struct trace_event_fields ue_fields_array[] = {
	{ .type = TRACE_FUNCTION_TYPE, .define_fields = ue_define_fields },
	{}
};

/* ---- probes and the status page --------------------------------------- */

static void ue_probe_ftrace(struct ue_event *ev, const void *payload, u32 len,
			    void *tpdata)
{
	struct trace_event_file *file = tpdata;
	struct trace_event_buffer fbuffer;
	struct trace_entry *entry;

	if (!file || !(file->flags & EVENT_FILE_FL_ENABLED) ||
	    trace_trigger_soft_disabled(file))
		return;
	entry = trace_event_buffer_reserve(&fbuffer, file,
					   sizeof(*entry) + len);
	if (!entry)
		return;
	memcpy(entry + 1, payload, len);
	trace_event_buffer_commit(&fbuffer);
}

#ifdef CONFIG_PERF_EVENTS
static void ue_probe_perf(struct ue_event *ev, const void *payload, u32 len,
			  void *tpdata)
{
	struct hlist_head *head = this_cpu_ptr(ev->call.perf_events);
	struct trace_entry *entry;
	struct pt_regs *regs;
	int size, rctx;

	if (hlist_empty(head))
		return;
	/* perf appends a u32 size; the whole sample is u64 aligned */
	size = ALIGN(sizeof(*entry) + len + sizeof(u32), sizeof(u64)) -
	       sizeof(u32);
	entry = perf_trace_buf_alloc(size, &regs, &rctx);
	if (!entry)
		return;
	memcpy(entry + 1, payload, len);
	perf_fetch_caller_regs(regs);
	perf_trace_buf_submit(entry, size, rctx, ev->call.event.type, 1, regs,
			      head, NULL);
}
#endif

/* Byte ev->index of the status page: who is attached to the tracepoint. */
static void ue_status_update(struct ue_event *ev)
{
	struct tracepoint_func *f;
	u8 bits = 0;

	rcu_read_lock_sched();
	f = rcu_dereference_sched(ev->tp.funcs);
	for (; f && f->func; f++) {
		if (f->func == ue_probe_ftrace)
			bits |= EVENT_STATUS_FTRACE;
#ifdef CONFIG_PERF_EVENTS
		else if (f->func == ue_probe_perf)
			bits |= EVENT_STATUS_PERF;
#endif
		else
			bits |= EVENT_STATUS_OTHER;
	}
	rcu_read_unlock_sched();
	WRITE_ONCE(ue_status_page[ev->index], bits);
}

/* Called with event_mutex held by ftrace (enable files) and perf. */
static int ue_reg(struct trace_event_call *call, enum trace_reg type,
		  void *data)
{
	struct ue_event *ev = call->data;
	int ret = 0;

	switch (type) {
	case TRACE_REG_REGISTER:
		ret = tracepoint_probe_register(call->tp, call->class->probe,
						data);
		if (!ret)
			atomic_inc(&ev->users);
		break;
	case TRACE_REG_UNREGISTER:
		tracepoint_probe_unregister(call->tp, call->class->probe, data);
		atomic_dec(&ev->users);
		break;
#ifdef CONFIG_PERF_EVENTS
	case TRACE_REG_PERF_REGISTER:
		ret = tracepoint_probe_register(call->tp,
						call->class->perf_probe, call);
		if (!ret)
			atomic_inc(&ev->users);
		break;
	case TRACE_REG_PERF_UNREGISTER:
		tracepoint_probe_unregister(call->tp, call->class->perf_probe,
					    call);
		atomic_dec(&ev->users);
		break;
	case TRACE_REG_PERF_OPEN:
	case TRACE_REG_PERF_CLOSE:
	case TRACE_REG_PERF_ADD:
	case TRACE_REG_PERF_DEL:
		return 0;
#endif
	}
	ue_status_update(ev);
	return ret;
}

/* ---- the event table ---------------------------------------------------- */

static struct ue_event *ue_find(const char *name)
{
	struct ue_event *ev;

	lockdep_assert_held(&event_mutex);
	hash_for_each_possible(ue_names, ev, node, full_name_hash(NULL, name,
								strlen(name)))
		if (!strcmp(ev->name, name))
			return ev;
	return NULL;
}

static bool ue_busy(struct ue_event *ev)
{
	return atomic_read(&ev->users) || trace_event_dyn_busy(&ev->call);
}

/* Makes a parsed event live: status index, tracefs, dynamic_events. */
static int ue_add(struct ue_event *ev)
{
	struct trace_event_call *call = &ev->call;
	unsigned long index;
	int ret;

	lockdep_assert_held(&event_mutex);

	index = find_first_zero_bit(ue_index_map, UE_MAX_EVENTS);
	if (index >= UE_MAX_EVENTS)
		return -EMFILE;

	ret = ue_build_print_fmt(ev);
	if (ret)
		return ret;

	ev->index = index;
	ev->tp.name = ev->name;
	ev->class.system = USER_EVENTS_SYSTEM;
	ev->class.fields_array = ue_fields_array;
	INIT_LIST_HEAD(&ev->class.fields);
	ev->class.reg = ue_reg;
	ev->class.probe = ue_probe_ftrace;
#ifdef CONFIG_PERF_EVENTS
	ev->class.perf_probe = ue_probe_perf;
#endif
	call->class = &ev->class;
	call->tp = &ev->tp;
	call->flags = TRACE_EVENT_FL_TRACEPOINT;
	call->data = ev;
	call->event.funcs = &ue_event_funcs;

	if (!register_trace_event(&call->event))
		return -ENODEV;
	ret = trace_add_event_call(call);
	if (ret) {
		unregister_trace_event(&call->event);
		return ret;
	}
	dyn_event_init(&ev->devent, &ue_dyn_ops);
	dyn_event_add(&ev->devent, call);

	set_bit(index, ue_index_map);
	ue_by_index[index] = ev;
	WRITE_ONCE(ue_status_page[index], 0);
	hash_add(ue_names, &ev->node, full_name_hash(NULL, ev->name,
						     strlen(ev->name)));
	return 0;
}

/* Deletes an event nobody uses; frees it. */
static int ue_remove(struct ue_event *ev)
{
	int ret;

	lockdep_assert_held(&event_mutex);

	if (ue_busy(ev))
		return -EBUSY;
	ret = trace_remove_event_call(&ev->call);
	if (ret)
		return ret;
	dyn_event_remove(&ev->devent);
	hash_del(&ev->node);
	ue_by_index[ev->index] = NULL;
	WRITE_ONCE(ue_status_page[ev->index], 0);
	clear_bit(ev->index, ue_index_map);
	ue_event_free(ev);
	return 0;
}

/*
 * The event @cmd describes: the existing one of that name if its fields
 * are the same (-EADDRINUSE if not), else a new one.
 */
static int ue_find_or_add(const char *cmd, struct ue_event **ret)
{
	struct ue_event *ev, *old;
	int err;

	lockdep_assert_held(&event_mutex);

	err = ue_parse(cmd, false, &ev);
	if (err)
		return err;
	old = ue_find(ev->name);
	if (old) {
		err = ue_fields_equal(old, ev) ? 0 : -EADDRINUSE;
		ue_event_free(ev);
		if (!err)
			*ret = old;
		return err;
	}
	err = ue_add(ev);
	if (err) {
		ue_event_free(ev);
		return err;
	}
	*ret = ev;
	return 0;
}

/* ---- dynamic_events ---------------------------------------------------- */

static int ue_dyn_create(const char *raw_command)
{
	struct ue_event *ev;
	int ret;

	if (!str_has_prefix(raw_command, USER_EVENTS_PREFIX))
		return -ECANCELED;
	mutex_lock(&event_mutex);
	ret = ue_find_or_add(raw_command + strlen(USER_EVENTS_PREFIX), &ev);
	mutex_unlock(&event_mutex);
	return ret;
}

static int ue_dyn_show(struct seq_file *m, struct dyn_event *dev)
{
	struct ue_event *ev = container_of(dev, struct ue_event, devent);
	const struct ue_field *f;
	int i;

	seq_printf(m, "%s%s", USER_EVENTS_PREFIX, ev->name);
	for (i = 0; i < ev->n_fields; i++) {
		f = &ev->fields[i];
		seq_printf(m, "%s%s %s", i ? "; " : " ", f->type, f->name);
		if (f->kind == UE_STRUCT)
			seq_printf(m, " %u", f->size);
	}
	seq_putc(m, '\n');
	return 0;
}

static bool ue_dyn_is_busy(struct dyn_event *dev)
{
	return ue_busy(container_of(dev, struct ue_event, devent));
}

static int ue_dyn_free(struct dyn_event *dev)
{
	return ue_remove(container_of(dev, struct ue_event, devent));
}

/* "!u:NAME [fields]": argv holds the fields split at spaces. */
static bool ue_dyn_match(const char *system, const char *event, int argc,
			 const char **argv, struct dyn_event *dev)
{
	struct ue_event *ev = container_of(dev, struct ue_event, devent);
	struct ue_event *spec = NULL;
	size_t size, pos;
	bool match;
	char *cmd;
	int i;

	if (system && strcmp(system, USER_EVENTS_SYSTEM))
		return false;
	if (strcmp(event, ev->name))
		return false;
	if (!argc)
		return true;

	size = strlen(event) + 1;
	for (i = 0; i < argc; i++)
		size += strlen(argv[i]) + 1;
	if (size > UE_MAX_COMMAND)
		return false;
	cmd = kmalloc(size, GFP_KERNEL);
	if (!cmd)
		return false;
	pos = scnprintf(cmd, size, "%s", event);
	for (i = 0; i < argc; i++)
		pos += scnprintf(cmd + pos, size - pos, " %s", argv[i]);
	match = !ue_parse(cmd, true, &spec) && ue_matches(ev, spec);
	ue_event_free(spec);
	kfree(cmd);
	return match;
}

/* ---- user_events_data and its write-only handles ------------------------ */

static void ue_group_release(struct kref *kref)
{
	struct ue_group *group = container_of(kref, struct ue_group, kref);
	struct ue_refs *refs = rcu_dereference_protected(group->refs, true);
	u32 i;

	if (refs) {
		for (i = 0; i < refs->count; i++)
			atomic_dec(&refs->events[i]->users);
		kfree(refs);
	}
	kfree(group);
}

static int ue_data_open(struct inode *inode, struct file *file)
{
	struct ue_group *group;
	int ret;

	ret = tracing_check_open_get_tr(NULL);
	if (ret)
		return ret;
	group = kzalloc(sizeof(*group), GFP_KERNEL);
	if (!group)
		return -ENOMEM;
	kref_init(&group->kref);
	file->private_data = group;
	return 0;
}

static void ue_refs_drop_work(struct work_struct *work)
{
	struct ue_refs *refs = container_of(to_rcu_work(work), struct ue_refs,
					    drop);
	u32 i;

	mutex_lock(&event_mutex);
	for (i = 0; i < refs->count; i++)
		atomic_dec(&refs->events[i]->users);
	mutex_unlock(&event_mutex);
	kfree(refs);
}

/*
 * The data file's release cuts off the write-only handles made from it:
 * their writes are EPERM from now on, and the events they could write no
 * longer count them as users once no write can still be looking them up
 * (a grace period: a handle's write counts itself inside the RCU read
 * section that finds its event). A broker that restarts can then delete
 * what its predecessor's clients used.
 */
static int ue_data_release(struct inode *inode, struct file *file)
{
	struct ue_group *group = file->private_data;
	struct ue_refs *refs = NULL;

	/* event_mutex: deletes see a consistent users count */
	mutex_lock(&event_mutex);
	WRITE_ONCE(group->cut, true);
	if (kref_read(&group->kref) > 1) {
		refs = rcu_dereference_protected(group->refs,
						 lockdep_is_held(&event_mutex));
		rcu_assign_pointer(group->refs, NULL);
	}
	kref_put(&group->kref, ue_group_release);
	mutex_unlock(&event_mutex);
	if (refs) {
		INIT_RCU_WORK(&refs->drop, ue_refs_drop_work);
		queue_rcu_work(system_wq, &refs->drop);
	}
	return 0;
}

/* The write index of @ev in @group, adding it if it is not there yet. */
static int ue_group_add(struct ue_group *group, struct ue_event *ev)
{
	struct ue_refs *refs, *new;
	u32 i, count;

	lockdep_assert_held(&event_mutex);

	refs = rcu_dereference_protected(group->refs,
					 lockdep_is_held(&event_mutex));
	count = refs ? refs->count : 0;
	for (i = 0; i < count; i++)
		if (refs->events[i] == ev)
			return i;

	new = kmalloc(struct_size(new, events, count + 1), GFP_KERNEL);
	if (!new)
		return -ENOMEM;
	if (count)
		memcpy(new->events, refs->events, count * sizeof(ev));
	new->events[count] = ev;
	new->count = count + 1;
	atomic_inc(&ev->users);
	rcu_assign_pointer(group->refs, new);
	if (refs)
		kfree_rcu(refs, rcu);
	return count;
}

static long ue_ioctl_reg(struct ue_group *group, struct user_reg __user *ureg)
{
	struct user_reg reg;
	struct ue_event *ev;
	char *cmd;
	u32 size;
	long ret;
	int index;

	if (get_user(size, &ureg->size))
		return -EFAULT;
	if (size > PAGE_SIZE)
		return -E2BIG;
	if (size < offsetofend(struct user_reg, name_args))
		return -EINVAL;
	ret = copy_struct_from_user(&reg, sizeof(reg), ureg, size);
	if (ret)
		return ret;

	cmd = kmalloc(UE_MAX_COMMAND, GFP_KERNEL);
	if (!cmd)
		return -ENOMEM;
	ret = strncpy_from_user(cmd, u64_to_user_ptr(reg.name_args),
				UE_MAX_COMMAND);
	if (ret < 0)
		goto out;
	if (ret == UE_MAX_COMMAND) {
		ret = -EINVAL;
		goto out;
	}

	mutex_lock(&event_mutex);
	ret = ue_find_or_add(cmd, &ev);
	if (!ret) {
		index = ue_group_add(group, ev);
		if (index < 0) {
			ret = index;
		} else {
			reg.status_index = ev->index;
			reg.write_index = index;
		}
	}
	mutex_unlock(&event_mutex);
	if (ret)
		goto out;

	/* only the outputs the caller's struct has room for */
	if (size >= offsetofend(struct user_reg, status_index) &&
	    put_user(reg.status_index, &ureg->status_index))
		ret = -EFAULT;
	else if (size >= offsetofend(struct user_reg, write_index) &&
		 put_user(reg.write_index, &ureg->write_index))
		ret = -EFAULT;
out:
	kfree(cmd);
	return ret;
}

static long ue_ioctl_del(char __user *uname)
{
	struct ue_event *ev;
	char *name;
	long ret;

	name = kmalloc(UE_MAX_COMMAND, GFP_KERNEL);
	if (!name)
		return -ENOMEM;
	ret = strncpy_from_user(name, uname, UE_MAX_COMMAND);
	if (ret < 0)
		goto out;
	if (ret == UE_MAX_COMMAND) {
		ret = -EINVAL;
		goto out;
	}
	mutex_lock(&event_mutex);
	ev = ue_find(name);
	ret = ev ? ue_remove(ev) : -ENOENT;
	mutex_unlock(&event_mutex);
out:
	kfree(name);
	return ret;
}

static const struct file_operations ue_writer_fops;

/*
 * A write-only handle: a file of its own kind on an anonymous inode of its
 * own ("anon_inode:[user_events_writer]"), so reopening it through /proc
 * cannot give a data file, with the data file's group. Only a data file
 * opened for writing gives one: it carries the right to write.
 */
static long ue_ioctl_writer(struct file *file, struct ue_group *group)
{
	struct file *writer;
	int fd;

	if (!(file->f_mode & FMODE_WRITE))
		return -EBADF;
	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	writer = anon_inode_getfile_secure("[user_events_writer]",
					   &ue_writer_fops, group, O_WRONLY,
					   NULL);
	if (IS_ERR(writer)) {
		put_unused_fd(fd);
		return PTR_ERR(writer);
	}
	mutex_lock(&event_mutex);
	kref_get(&group->kref);
	mutex_unlock(&event_mutex);
	fd_install(fd, writer);
	return fd;
}

static long ue_data_ioctl(struct file *file, unsigned int cmd,
			  unsigned long arg)
{
	struct ue_group *group = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case DIAG_IOCSREG:
		return ue_ioctl_reg(group, uarg);
	case DIAG_IOCSDEL:
		return ue_ioctl_del(uarg);
	case DIAG_IOCGWRITER:
		return ue_ioctl_writer(file, group);
	}
	return -ENOTTY;
}

/* A write-only handle: the data file's indexes, no ioctl at all. */
static long ue_writer_ioctl(struct file *file, unsigned int cmd,
			    unsigned long arg)
{
	switch (cmd) {
	case DIAG_IOCSREG:
	case DIAG_IOCSDEL:
	case DIAG_IOCGWRITER:
		return -EPERM;
	}
	return -ENOTTY;
}

/* Hands a valid payload to every probe attached to the event. */
static void ue_emit(struct ue_event *ev, const void *payload, u32 len)
{
	struct tracepoint_func *f;

	rcu_read_lock_sched();
	f = rcu_dereference_sched(ev->tp.funcs);
	for (; f && f->func; f++)
		((ue_probe_t)f->func)(ev, payload, len, f->data);
	rcu_read_unlock_sched();
}

/*
 * [u32 write index][payload], by write() or writev(). The payload is copied
 * once, in process context where page faults are served (so a page dropped
 * with MADV_DONTNEED is read back in, not lost), validated, and only then
 * handed to the probes: they never touch user memory, and what they record
 * is exactly what was validated.
 */
static ssize_t ue_write_event(struct ue_event *ev, struct iov_iter *i,
			      size_t total)
{
	u8 stack_buf[UE_STACK_PAYLOAD];
	u8 *buf = stack_buf;
	ssize_t ret;
	u32 len;

	len = total - sizeof(u32);
	if (len < ev->min_size)
		return -EINVAL;
	if (len > UE_MAX_PAYLOAD)
		return -E2BIG;
	if (!static_key_enabled(&ev->tp.key))
		return total;

	if (len > sizeof(stack_buf)) {
		buf = kmalloc(len, GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	if (!copy_from_iter_full(buf, len, i)) {
		ret = -EFAULT;
	} else {
		ret = ue_validate(ev, buf, len);
		if (!ret) {
			ue_emit(ev, buf, len);
			ret = total;
		}
	}
	if (buf != stack_buf)
		kfree(buf);
	return ret;
}

static ssize_t ue_write_iter(struct kiocb *kp, struct iov_iter *i)
{
	struct ue_group *group = kp->ki_filp->private_data;
	bool handle = kp->ki_filp->f_op == &ue_writer_fops;
	size_t total = iov_iter_count(i);
	struct ue_refs *refs;
	struct ue_event *ev;
	ssize_t ret;
	int idx;

	if (kp->ki_pos != 0)
		return -EFAULT;
	if (copy_from_iter(&idx, sizeof(idx), i) != sizeof(idx))
		return -EFAULT;

	rcu_read_lock();
	if (handle && READ_ONCE(group->cut)) {
		rcu_read_unlock();
		return -EPERM;
	}
	refs = rcu_dereference(group->refs);
	/*
	 * Pinned by the data file's registration while the data file is
	 * open; a handle's write counts itself, as the data file's release
	 * drops its counts a grace period after unpublishing them.
	 */
	ev = refs && idx >= 0 && idx < refs->count ? refs->events[idx] : NULL;
	if (ev && handle)
		atomic_inc(&ev->users);
	rcu_read_unlock();
	if (!ev)
		return handle && READ_ONCE(group->cut) ? -EPERM : -ENOENT;

	ret = ue_write_event(ev, i, total);
	if (handle)
		atomic_dec(&ev->users);
	return ret;
}

static const struct file_operations ue_data_fops = {
	.open = ue_data_open,
	.release = ue_data_release,
	.write_iter = ue_write_iter,
	.unlocked_ioctl = ue_data_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

static int ue_writer_release(struct inode *inode, struct file *file)
{
	struct ue_group *group = file->private_data;

	mutex_lock(&event_mutex);
	kref_put(&group->kref, ue_group_release);
	mutex_unlock(&event_mutex);
	return 0;
}

static const struct file_operations ue_writer_fops = {
	.release = ue_writer_release,
	.write_iter = ue_write_iter,
	.unlocked_ioctl = ue_writer_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
	.llseek = no_llseek,
};

/* ---- user_events_status -------------------------------------------------- */

/* The page itself, read-only: no PROT_WRITE now or through mprotect later. */
static int ue_status_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_end - vma->vm_start != PAGE_SIZE || vma->vm_pgoff)
		return -EINVAL;
	if (vma->vm_flags & VM_WRITE)
		return -EPERM;
	vma->vm_flags &= ~VM_MAYWRITE;
	vma->vm_flags |= VM_DONTEXPAND | VM_DONTDUMP;
	return remap_pfn_range(vma, vma->vm_start,
			       virt_to_phys(ue_status_page) >> PAGE_SHIFT,
			       PAGE_SIZE, vma->vm_page_prot);
}

/* "1:name # Used by ftrace perf" lines, then the totals. */
static int ue_status_show(struct seq_file *m, void *unused)
{
	unsigned long index;
	u32 active = 0, busy = 0;
	u8 bits;

	mutex_lock(&event_mutex);
	for_each_set_bit(index, ue_index_map, UE_MAX_EVENTS) {
		if (!ue_by_index[index])
			continue;
		active++;
		seq_printf(m, "%lu:%s", index, ue_by_index[index]->name);
		bits = READ_ONCE(ue_status_page[index]);
		if (bits) {
			busy++;
			seq_puts(m, " # Used by");
			if (bits & EVENT_STATUS_FTRACE)
				seq_puts(m, " ftrace");
			if (bits & EVENT_STATUS_PERF)
				seq_puts(m, " perf");
			if (bits & EVENT_STATUS_OTHER)
				seq_puts(m, " other");
		}
		seq_putc(m, '\n');
	}
	mutex_unlock(&event_mutex);
	seq_printf(m, "\nActive: %u\nBusy: %u\nMax: %u\n", active, busy,
		   UE_MAX_EVENTS);
	return 0;
}

static int ue_status_open(struct inode *inode, struct file *file)
{
	int ret;

	ret = tracing_check_open_get_tr(NULL);
	if (ret)
		return ret;
	return single_open(file, ue_status_show, NULL);
}

static const struct file_operations ue_status_fops = {
	.open = ue_status_open,
	.mmap = ue_status_mmap,
	.read = seq_read,
	.llseek = seq_lseek,
	.release = single_release,
};

static int __init ue_init(void)
{
	struct dentry *data, *status;
	int ret;

	ue_status_page = (u8 *)get_zeroed_page(GFP_KERNEL);
	if (!ue_status_page)
		return -ENOMEM;
	/* index 0 is never handed out: callers keep it for "not registered" */
	set_bit(0, ue_index_map);

	ret = dyn_event_register(&ue_dyn_ops);
	if (ret) {
		pr_warn("cannot register dynamic_events ops: %d\n", ret);
		return ret;
	}
	data = tracefs_create_file("user_events_data", TRACE_MODE_WRITE, NULL,
				   NULL, &ue_data_fops);
	status = tracefs_create_file("user_events_status", TRACE_MODE_WRITE,
				     NULL, NULL, &ue_status_fops);
	if (IS_ERR_OR_NULL(data) || IS_ERR_OR_NULL(status)) {
		pr_warn("cannot create the tracefs files\n");
		return -ENODEV;
	}
	return 0;
}

fs_initcall(ue_init);
