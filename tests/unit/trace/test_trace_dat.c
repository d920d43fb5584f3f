// SPDX-License-Identifier: MIT
/*
 * test_trace_dat.c - the trace.dat reader: a kmem + vmalloc capture made by
 * trace-cmd on a 6.18 kernel (tests/fixtures/traces/trace-cmd-6.18-*,
 * scripts/capture-tracedat-fixture.sh), read from its version 7 file (zstd
 * sections and chunks) and its version 6 file (inside xz), gives event for
 * event what its `trace-cmd report -t` text gives; the tasks (pid, comm)
 * and the recorded command's share agree too; and bad files (cut, corrupt
 * pages, a missing format, an unknown layout, another architecture or page
 * size, perf.data) are refused with one line naming what is wrong.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <lzma.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>
#include "helpers.h"
#include "pagelab/trace.h"
#include "trace_fixtures.h"

#define MAX_EV 20000
#define FX_V7 "trace-cmd-6.18-v7.dat"
#define FX_V6 "trace-cmd-6.18-v6.dat.xz"
#define FX_TEXT "trace-cmd-6.18-v7.report.txt.xz"
/* the recorded command: `sh -c` (bash forked it; it forked head, xz, ls) */
#define FX_COMMAND_PID 21569

static struct pl_trace_event *read_all(const char *name, unsigned long *n,
				       struct pl_trace_stats *st, int command)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	struct pl_trace_event *all = calloc(MAX_EV, sizeof(*all));
	int ret;

	assert_non_null(r);
	assert_non_null(all);
	if (command)
		assert_int_equal(pl_trace_set_command_pid(r, command), 0);
	*n = 0;
	while ((ret = pl_trace_next(r, &all[*n])) > 0)
		assert_true(++*n < MAX_EV);
	assert_int_equal(ret, 0);
	*st = *pl_trace_get_stats(r);
	pl_trace_close(r);
	return all;
}

static void assert_same_events(const struct pl_trace_event *a, const struct pl_trace_event *b,
			       unsigned long n)
{
	for (unsigned long i = 0; i < n; i++) {
		const struct pl_trace_event *x = &a[i], *y = &b[i];
		bool percpu = x->type == PL_TRACE_PERCPU;	/* counted only: no field read */

		if (x->type != y->type || x->cpu != y->cpu || x->ts_ns != y->ts_ns ||
		    x->pid != y->pid || strcmp(x->comm, y->comm) || x->command != y->command)
			goto differ;
		if (!percpu && (x->type != y->type || x->cpu != y->cpu || x->ts_ns != y->ts_ns ||
		    x->pfn != y->pfn || x->order != y->order || x->migratetype != y->migratetype ||
		    x->gfp != y->gfp || x->percpu_refill != y->percpu_refill ||
		    x->fallback_order != y->fallback_order || x->change_ownership != y->change_ownership ||
		    x->va_start != y->va_start || x->size != y->size || x->npurged != y->npurged ||
		    x->nr_lazy != y->nr_lazy || x->failed != y->failed || x->pid != y->pid ||
		    strcmp(x->comm, y->comm) || x->kworker != y->kworker || x->command != y->command))
			goto differ;
		continue;
differ:
		fail_msg("event %lu differs: %s cpu %u ts %llu pfn %#lx pid %d %s / "
				 "%s cpu %u ts %llu pfn %#lx pid %d %s", i,
				 pl_trace_type_names[x->type], x->cpu, (unsigned long long)x->ts_ns,
				 x->pfn, x->pid, x->comm, pl_trace_type_names[y->type], y->cpu,
				 (unsigned long long)y->ts_ns, y->pfn, y->pid, y->comm);
	}
}

/* Version 7 and version 6 read as their report text reads, event for event. */
static void test_dat_equals_report(void **state)
{
	struct pl_trace_stats s7, s6, st;
	unsigned long n7, n6, nt, own = 0;
	struct pl_trace_event *e7 = read_all(FX_V7, &n7, &s7, FX_COMMAND_PID);
	struct pl_trace_event *e6 = read_all(FX_V6, &n6, &s6, FX_COMMAND_PID);
	struct pl_trace_event *et = read_all(FX_TEXT, &nt, &st, FX_COMMAND_PID);

	(void)state;
	assert_int_equal(s7.format, PL_TRACE_FMT_TRACE_DAT);
	assert_int_equal(s7.dat_version, 7);
	assert_int_equal(s6.dat_version, 6);
	assert_int_equal(st.format, PL_TRACE_FMT_TRACE_CMD);
	assert_true(n7 > 10000);
	assert_int_equal(n7, nt);
	assert_int_equal(n6, nt);
	for (int t = 0; t < NR_PL_TRACE_TYPES; t++) {
		assert_int_equal(s7.by_type[t], st.by_type[t]);
		assert_int_equal(s6.by_type[t], st.by_type[t]);
	}
	assert_true(st.by_type[PL_TRACE_PAGE_ALLOC] > 1000);
	assert_true(st.by_type[PL_TRACE_ALLOC_VMAP_AREA] > 0);
	assert_true(st.by_type[PL_TRACE_PERCPU] > 0);
	assert_int_equal(s7.lost_events, st.lost_events);
	assert_int_equal(s7.warn[PL_TW_unknown_event], st.warn[PL_TW_unknown_event]);
	assert_int_equal(s7.warn[PL_TW_malformed_line], 0);
	assert_int_equal(st.warn[PL_TW_malformed_line], 0);
	assert_int_equal(s7.forks, st.forks);
	assert_true(st.forks > 3);
	assert_same_events(e7, et, nt);
	assert_same_events(e6, et, nt);
	/* the command's tasks: some of the events, not all (a shared host) */
	for (unsigned long i = 0; i < nt; i++)
		own += et[i].command;
	assert_true(own > 100 && own < nt);
	assert_string_equal(et[0].comm, "bash");
	assert_int_equal(et[0].pid, 21525);
	free(e7);
	free(e6);
	free(et);
}

/* The fixture's version 6 bytes (decompressed), to damage in memory. */
static unsigned char *v6_bytes(size_t *len)
{
	FILE *f = fopen(fixture_path(FX_V6), "rb");
	static unsigned char in[1 << 20];
	size_t inlen, cap = 8u << 20, inpos = 0, outpos = 0;
	unsigned char *out = malloc(cap);

	assert_non_null(f);
	assert_non_null(out);
	inlen = fread(in, 1, sizeof(in), f);
	fclose(f);
	assert_int_equal(lzma_stream_buffer_decode(&(uint64_t){ UINT64_MAX }, 0, NULL, in, &inpos,
						   inlen, out, &outpos, cap), LZMA_OK);
	*len = outpos;
	return out;
}

/* Open @buf; expect a refusal whose line contains @what. */
static void assert_refused(const unsigned char *buf, size_t len, const char *what)
{
	struct pl_trace_reader *r = pl_trace_open_mem(buf, len);

	if (r)
		fail_msg("opened, expected a refusal naming '%s'", what);
	assert_int_equal(errno, EINVAL);
	if (!strstr(pl_trace_open_error(), what))
		fail_msg("refusal '%s' does not name '%s'", pl_trace_open_error(), what);
	assert_null(strchr(pl_trace_open_error(), '\n'));
}

static unsigned char *find(unsigned char *buf, size_t len, const char *s)
{
	unsigned char *p = memmem(buf, len, s, strlen(s));

	assert_non_null(p);
	return p;
}

static void test_dat_bad_header(void **state)
{
	size_t len;
	unsigned char *b = v6_bytes(&len), *copy = malloc(len);

	(void)state;
	assert_non_null(copy);
	/* the file's own bytes read */
	{
		struct pl_trace_reader *r = pl_trace_open_mem(b, len);

		assert_non_null(r);
		pl_trace_close(r);
	}
	/* cut short: in the header, in the formats, before the data */
	assert_refused(b, 14, "truncated");
	assert_refused(b, 5000, "truncated");
	assert_refused(b, len / 2, "truncated");
	assert_refused(b, len - 100, "truncated");
	/* big-endian: another architecture */
	memcpy(copy, b, len);
	copy[12] = 1;
	assert_refused(copy, len, "big-endian");
	/* 64 KiB pages */
	memcpy(copy, b, len);
	copy[14] = 0;
	copy[15] = 0;
	copy[16] = 1;
	assert_refused(copy, len, "65536-byte pages");
	/* a version pagelab does not read */
	memcpy(copy, b, len);
	copy[10] = '8';
	assert_refused(copy, len, "version 8");
	/* an unknown layout: mm_page_alloc without its order field */
	memcpy(copy, b, len);
	{
		unsigned char *f = find(copy, len, "name: mm_page_alloc\n");
		unsigned char *o = find(f, len - (size_t)(f - copy), "int order;");

		memcpy(o, "int ordex;", 10);
	}
	assert_refused(copy, len, "kmem/mm_page_alloc has no field order");
	/* a field of a size pagelab cannot read */
	memcpy(copy, b, len);
	{
		unsigned char *f = find(copy, len, "name: mm_page_free\n");
		unsigned char *o = find(f, len - (size_t)(f - copy), "size:4;");

		o[5] = '3';
	}
	assert_refused(copy, len, "unknown event layout");
	/* a perf.data file */
	memcpy(copy, "PERFILE2\0\0\0\0\0\0\0\0", 16);
	assert_refused(copy, len, "perf script");
	free(copy);
	free(b);
}

/* Read @buf to its end; return the events and the last return value. */
static unsigned long read_mem(const unsigned char *buf, size_t len, int *last)
{
	struct pl_trace_reader *r = pl_trace_open_mem(buf, len);
	struct pl_trace_event ev;
	unsigned long n = 0;

	assert_non_null(r);
	pl_warn_set_quiet(true);
	while ((*last = pl_trace_next(r, &ev)) > 0)
		n++;
	pl_warn_set_quiet(false);
	pl_trace_close(r);
	return n;
}

static void test_dat_bad_data(void **state)
{
	size_t len;
	unsigned char *b = v6_bytes(&len), *copy = malloc(len), *fmt, *id;
	unsigned long all, n;
	int last;

	(void)state;
	assert_non_null(copy);
	all = read_mem(b, len, &last);
	assert_int_equal(last, 0);
	/* the format of mm_page_alloc missing (its ID changed): its first event ends the read */
	memcpy(copy, b, len);
	fmt = find(copy, len, "name: mm_page_alloc\nID: ");
	id = fmt + strlen("name: mm_page_alloc\nID: ");
	while (*id >= '0' && *id <= '9')
		*id++ = '9';
	n = read_mem(copy, len, &last);
	assert_int_equal(last, -EIO);
	assert_true(n < all);
	/* a page whose commit says more than a page: corrupt, the events before it stand */
	memcpy(copy, b, len);
	{
		/* the last page of the second CPU's data: the file's last 4096 bytes */
		unsigned char *pg = copy + len - 4096;

		pg[8] = 0xff;
		pg[9] = 0xff;
	}
	n = read_mem(copy, len, &last);
	assert_int_equal(last, -EIO);
	assert_true(n > 0 && n < all);
	/* an event header whose length overruns the page */
	memcpy(copy, b, len);
	{
		unsigned char *pg = copy + len - 4096;

		pg[16] = 0;		/* type_len 0: the length word follows */
		pg[20] = 0xff;
		pg[21] = 0xff;
	}
	n = read_mem(copy, len, &last);
	assert_int_equal(last, -EIO);
	assert_true(n < all);
	free(copy);
	free(b);
}

/* Replace the first @old in the format of @event with @new (same length). */
static void patch_format(unsigned char *buf, size_t len, const char *event, const char *old,
			 const char *new)
{
	char name[64];
	unsigned char *f, *o;

	snprintf(name, sizeof(name), "name: %s\n", event);
	f = find(buf, len, name);
	o = find(f, len - (size_t)(f - buf), old);
	assert_int_equal(strlen(old), strlen(new));
	memcpy(o, new, strlen(new));
}

/* Read @buf to its end: the events, the malformed count, the last return value. */
static unsigned long read_checked(const unsigned char *buf, size_t len, unsigned long *malformed,
				  int *last)
{
	struct pl_trace_reader *r = pl_trace_open_mem(buf, len);
	struct pl_trace_event ev;
	unsigned long n = 0;

	assert_non_null(r);
	pl_warn_set_quiet(true);
	while ((*last = pl_trace_next(r, &ev)) > 0) {
		/* nothing outside the kernel's ranges is handed on */
		assert_true(ev.cpu < PL_TRACE_MAX_CPUS);
		assert_true(ev.order >= 0 && ev.order <= MAX_PAGE_ORDER);
		assert_true(ev.pfn < PL_TRACE_PFN_LIMIT || ev.pfn == -1UL);
		assert_true(ev.migratetype >= 0 && ev.migratetype <= PL_TRACE_MAX_MIGRATETYPE);
		n++;
	}
	pl_warn_set_quiet(false);
	*malformed = pl_trace_get_stats(r)->warn[PL_TW_malformed_line];
	pl_trace_close(r);
	return n;
}

/*
 * Values outside what a kernel can write are malformed events, as in text:
 * counted and skipped, the rest of the file read. Here a field's offset is
 * moved onto bytes that hold something else (gfp_flags as an order or a
 * migratetype, the pid as a pfn's high bits).
 */
static void test_dat_fields_out_of_range(void **state)
{
	size_t len;
	unsigned char *b = v6_bytes(&len), *copy = malloc(len);
	unsigned long all, n, bad, bad0;
	int last;

	(void)state;
	assert_non_null(copy);
	all = read_checked(b, len, &bad0, &last);
	assert_int_equal(last, 0);
	assert_int_equal(bad0, 0);
	/* migratetype read from gfp_flags: GFP_KERNEL and the like are > 5 */
	memcpy(copy, b, len);
	patch_format(copy, len, "mm_page_alloc", "int migratetype;\toffset:32;",
		     "int migratetype;\toffset:24;");
	n = read_checked(copy, len, &bad, &last);
	assert_int_equal(last, 0);
	assert_true(bad > 100);
	assert_int_equal(n + bad, all);
	/* order read from gfp_flags */
	memcpy(copy, b, len);
	patch_format(copy, len, "mm_page_alloc", "unsigned int order;\toffset:16;",
		     "unsigned int order;\toffset:24;");
	n = read_checked(copy, len, &bad, &last);
	assert_int_equal(last, 0);
	assert_true(bad > 100);
	assert_int_equal(n + bad, all);
	/* a free's pfn over common_pid: pid << 32 is past 2^40 for pids from 256 */
	memcpy(copy, b, len);
	patch_format(copy, len, "mm_page_free", "unsigned long pfn;\toffset:8;",
		     "unsigned long pfn;\toffset:0;");
	n = read_checked(copy, len, &bad, &last);
	assert_int_equal(last, 0);
	assert_true(bad > 100);
	assert_int_equal(n + bad, all);
	free(copy);
	free(b);
}

/*
 * A page whose timestamp jumps two weeks: its events are more than
 * PL_TRACE_MAX_GAP_S after the ones before, skipped as a text trace's are.
 */
static void test_dat_time_gap(void **state)
{
	size_t len;
	unsigned char *b = v6_bytes(&len), *copy = malloc(len);
	unsigned long all, n, bad;
	uint64_t ts;
	int last;

	(void)state;
	assert_non_null(copy);
	all = read_checked(b, len, &bad, &last);
	memcpy(copy, b, len);
	/* the last page of the second CPU's data: the file's last 4096 bytes */
	memcpy(&ts, copy + len - 4096, 8);
	ts += 2 * 7 * 24 * 3600 * 1000000000ull;
	memcpy(copy + len - 4096, &ts, 8);
	n = read_checked(copy, len, &bad, &last);
	assert_int_equal(last, 0);
	assert_true(bad > 0);
	assert_int_equal(n + bad, all);
	free(copy);
	free(b);
}

/* A CPU count no kernel has (the text parser's limit) is refused at open. */
static void test_dat_cpu_limit(void **state)
{
	size_t len;
	unsigned char *b = v6_bytes(&len), *p;
	uint32_t cpus = PL_TRACE_MAX_CPUS;

	(void)state;
	/* version 6: the CPU count is the 4 bytes before "options  " */
	p = find(b, len, "options  ");
	memcpy(p - 4, &cpus, 4);
	assert_refused(b, len, "CPUs");
	free(b);
}

/*
 * A compressed trace.dat that unpacks past its limit (256 times its size,
 * at least 64 MiB) is refused at open in one line, its memory never past
 * the limit: a few KiB of zstd that would unpack to 96 MiB.
 */
static void test_dat_decompression_bomb(void **state)
{
	size_t big = 96u << 20, clen;
	unsigned char *raw = calloc(1, big), *z = malloc(ZSTD_compressBound(big));

	(void)state;
	assert_non_null(raw);
	assert_non_null(z);
	memcpy(raw, "\x17\x08\x44tracing6\0", 11);
	clen = ZSTD_compress(z, ZSTD_compressBound(big), raw, big, 1);
	assert_false(ZSTD_isError(clen));
	assert_true(clen < (64u << 10));
	assert_refused(z, clen, "unpacks past 64 MiB");
	free(raw);
	free(z);
}

/*
 * A trace.dat truncated while it is being read: the reader holds the bytes it
 * read at open, so the events keep coming, the same as from the intact file
 * (a mapped file would raise SIGBUS at the first page past the new end).
 */
static void test_dat_truncated_while_read(void **state)
{
	char path[] = "/tmp/pagelab-test-trunc-XXXXXX";
	struct pl_trace_event *want, ev;
	struct pl_trace_stats st;
	struct pl_trace_reader *r;
	unsigned long n_want, n = 0;
	FILE *src = fopen(fixture_path(FX_V7), "rb");
	unsigned char buf[65536];
	size_t got;
	int fd = mkstemp(path), ret;

	(void)state;
	assert_non_null(src);
	assert_true(fd >= 0);
	while ((got = fread(buf, 1, sizeof(buf), src)) > 0)
		assert_int_equal(write(fd, buf, got), (ssize_t)got);
	fclose(src);
	want = read_all(FX_V7, &n_want, &st, 0);
	assert_true(n_want > 100);
	r = pl_trace_open(path);
	assert_non_null(r);
	while (n < 10 && (ret = pl_trace_next(r, &ev)) > 0)
		n++;
	assert_int_equal(n, 10);
	assert_int_equal(ftruncate(fd, 4096), 0);	/* header only: every page gone */
	while ((ret = pl_trace_next(r, &ev)) > 0) {
		assert_true(n < n_want);
		assert_int_equal(ev.ts_ns, want[n].ts_ns);
		n++;
	}
	assert_int_equal(ret, 0);
	assert_int_equal(n, n_want);
	pl_trace_close(r);
	/* and opened after the cut: the shorter file, refused or cut short in one line */
	r = pl_trace_open(path);
	if (r) {
		while ((ret = pl_trace_next(r, &ev)) > 0)
			;
		pl_trace_close(r);
	}
	close(fd);
	unlink(path);
	free(want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dat_equals_report),
		cmocka_unit_test(test_dat_bad_header),
		cmocka_unit_test(test_dat_bad_data),
		cmocka_unit_test(test_dat_fields_out_of_range),
		cmocka_unit_test(test_dat_cpu_limit),
		cmocka_unit_test(test_dat_time_gap),
		cmocka_unit_test(test_dat_decompression_bomb),
		cmocka_unit_test(test_dat_truncated_while_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
