// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf: perf_event_open on the event's id with PERF_SAMPLE_RAW; each write
 * gives one sample whose raw data holds the fields at the offsets the
 * format file states, dynamic ones included.
 */
#include "ue_lib.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGES 8

/* offset: and size: of FIELD in the event's format file; -1 if absent. */
static int format_offset(const char *name, const char *field, int *size)
{
	char path[256], needle[128], *text, *p;
	int off = -1;

	snprintf(path, sizeof(path), TRACEFS "/events/user_events/%s/format", name);
	snprintf(needle, sizeof(needle), " %s;\toffset:", field);
	text = ue_file_read(path);
	if (text && (p = strstr(text, needle)) && sscanf(p + strlen(needle), "%d;\tsize:%d;", &off, size) != 2)
		off = -1;
	free(text);
	return off;
}

/* The raw data of the next sample in the ring, copied to RAW; its size or -1. */
static int next_sample(struct perf_event_mmap_page *meta, uint8_t *raw, size_t cap, uint64_t *tail)
{
	uint8_t *data = (uint8_t *)meta + 4096;
	uint64_t size = meta->data_size, head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);

	while (*tail < head) {
		struct perf_event_header h;
		uint8_t rec[16384];

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(*tail + i) % size];
		if (h.size > sizeof(rec))
			return -1;
		for (size_t i = 0; i < h.size; i++)
			rec[i] = data[(*tail + i) % size];
		*tail += h.size;
		__atomic_store_n(&meta->data_tail, *tail, __ATOMIC_RELEASE);
		if (h.type == PERF_RECORD_SAMPLE) {
			uint32_t n;

			memcpy(&n, rec + sizeof(h), 4);
			if (n > cap)
				return -1;
			memcpy(raw, rec + sizeof(h) + 4, n);
			return (int)n;
		}
	}
	return -1;
}

int main(void)
{
	struct {
		uint64_t a;
		uint32_t s;
		int16_t b;
		char c[6];
		char str[8];
	} __attribute__((packed)) p = { 0x1122334455667788ULL, DYN_LOC(8 + 20, 8), -300, "abcde", "dynamic" };
	const char *cmd = "pf_ev u64 a; __data_loc char[] s; s16 b; char[6] c";
	struct perf_event_mmap_page *meta;
	uint8_t raw[9000];
	uint64_t tail = 0;
	uint32_t w, loc, st;
	int fd = ue_open_data(), id, perf, n, off, size;
	const volatile uint8_t *page = ue_status_map();

	EXPECT_RET(ue_reg(fd, cmd, &st, &w), 0, "register pf_ev");
	id = ue_event_id("pf_ev");
	CHECK(id > 0, "pf_ev has an id (%d)", id);
	perf = ue_perf_open(id);
	CHECK(perf >= 0, "perf_event_open(PERF_TYPE_TRACEPOINT, config=%d, PERF_SAMPLE_RAW) (%s)", id,
	      perf < 0 ? ue_errname(perf) : "ok");
	if (perf < 0)
		return ue_done();
	CHECK(page && page[st] == EVENT_STATUS_PERF, "the status byte says perf (0x%x)", page ? page[st] : 0);
	meta = mmap(NULL, (PAGES + 1) * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, perf, 0);
	CHECK(meta != MAP_FAILED, "the perf ring is mapped");
	if (meta == MAP_FAILED)
		return ue_done();

	EXPECT_RET(ue_write(fd, w, &p, sizeof(p)), sizeof(p) + 4, "write a record");
	n = next_sample(meta, raw, sizeof(raw), &tail);
	CHECK(n >= 8 + (int)sizeof(p), "one sample with %d raw bytes (at least header + payload, %zu)", n, 8 + sizeof(p));
	if (n > 0) {
		uint16_t type;

		memcpy(&type, raw, 2);
		CHECK(type == id, "common_type is the event's id (%u)", type);
		off = format_offset("pf_ev", "a", &size);
		CHECK(off == 8 && size == 8 && !memcmp(raw + off, &p.a, 8), "u64 a at format offset %d: 0x%llx", off,
		      off >= 0 ? *(unsigned long long *)(raw + off) : 0ULL);
		off = format_offset("pf_ev", "b", &size);
		CHECK(off == 20 && size == 2 && !memcmp(raw + off, &p.b, 2), "s16 b at format offset %d", off);
		off = format_offset("pf_ev", "c[6]", &size);
		CHECK(off == 22 && size == 6 && !strcmp((char *)raw + off, "abcde"), "char[6] c at format offset %d: %s",
		      off, off >= 0 ? (char *)raw + off : "");
		off = format_offset("pf_ev", "s", &size);
		if (off == 16) {
			memcpy(&loc, raw + off, 4);
			CHECK((loc & 0xffff) + (loc >> 16) <= (uint32_t)n &&
			      !strcmp((char *)raw + (loc & 0xffff), "dynamic"),
			      "__data_loc s at format offset 16 points at 'dynamic' in the record (loc 0x%x)", loc);
		} else {
			CHECK(false, "__data_loc s at format offset 16 (got %d)", off);
		}
	}
	p.a = 5;
	ue_write(fd, w, &p, sizeof(p));
	ue_write(fd, w, &p, sizeof(p));
	CHECK(next_sample(meta, raw, sizeof(raw), &tail) > 0 && next_sample(meta, raw, sizeof(raw), &tail) > 0,
	      "each write is one sample");
	CHECK(next_sample(meta, raw, sizeof(raw), &tail) < 0, "and no more");
	EXPECT_RET(ue_write(fd, w, &p, 3), -EINVAL, "a short payload gives no sample");
	p.s = DYN_LOC(8 + 20, 40);
	EXPECT_RET(ue_write(fd, w, &p, sizeof(p)), -EFAULT, "an invalid __data_loc gives EFAULT");
	CHECK(next_sample(meta, raw, sizeof(raw), &tail) < 0, "and no sample");
	munmap(meta, (PAGES + 1) * 4096);
	close(perf);
	CHECK(page && page[st] == 0, "perf closed: status byte 0");
	close(fd);
	EXPECT_RET(ue_del_name("pf_ev"), 0, "delete pf_ev");
	return ue_done();
}
