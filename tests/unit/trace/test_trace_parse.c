// SPDX-License-Identifier: MIT
/*
 * test_trace_parse.c - the trace layer's readers: the three text
 * formats from real 6.18 captures (tests/fixtures/traces), gzip/zstd/xz
 * input and a stream cut short, malformed lines, lost-event accounting, and
 * the /proc snapshot reader (a NUMA machine's refused), and the check
 * that a before/after pair brackets its trace (pl_snapshot_gap()).
 */
#include <lzma.h>
#include <stdio.h>
#include <zlib.h>
#include <zstd.h>
#include "helpers.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "trace_fixtures.h"

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

/* Read every event of a reader; return the count, fill @by_type. */
static unsigned long drain_reader(struct pl_trace_reader *r, struct pl_trace_event *first,
				  struct pl_trace_event *all, size_t max)
{
	struct pl_trace_event ev;
	unsigned long n = 0;

	while (pl_trace_next(r, &ev) > 0) {
		if (!n && first)
			*first = ev;
		if (all && n < max)
			all[n] = ev;
		n++;
	}
	return n;
}

/*
 * Read every event of perf script fixture @name into @all: @want events,
 * perf's format, no malformed line. Return: the open reader (its stats).
 */
static struct pl_trace_reader *read_perf_fixture(const char *name, struct pl_trace_event *all,
						 size_t max, unsigned long want)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	const struct pl_trace_stats *st;

	assert_non_null(r);
	assert_int_equal(drain_reader(r, NULL, all, max), want);
	st = pl_trace_get_stats(r);
	assert_int_equal(st->format, PL_TRACE_FMT_PERF);
	assert_int_equal(st->warn[PL_TW_malformed_line], 0);
	return r;
}

static void test_ftrace_format(void **state)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path("ftrace-6.18.txt"));
	struct pl_trace_event all[128], first = { 0 };
	const struct pl_trace_stats *st;
	unsigned long n;
	bool saw_extfrag = false, saw_vmap = false, saw_purge = false;

	(void)state;
	assert_non_null(r);
	n = drain_reader(r, &first, all, 128);
	st = pl_trace_get_stats(r);
	assert_int_equal(st->format, PL_TRACE_FMT_FTRACE);
	assert_int_equal(st->entries_in_buffer, 65208);
	assert_int_equal(st->entries_written, 65208);
	assert_int_equal(st->lost_events, 0);
	assert_int_equal(st->warn[PL_TW_malformed_line], 0);
	assert_int_equal(st->events, n);
	/* the first event, field by field */
	assert_int_equal(first.type, PL_TRACE_PAGE_ALLOC);
	assert_int_equal(first.cpu, 0);
	assert_int_equal(first.pfn, 0x1300f1);
	assert_int_equal(first.order, 0);
	assert_int_equal(first.migratetype, MIGRATE_RECLAIMABLE);
	assert_true(first.gfp & __GFP_COMP);
	assert_true(first.ts_ns == 2253752622000ull);
	assert_int_equal(first.line, 13);
	for (unsigned long i = 0; i < n && i < 128; i++) {
		if (all[i].type == PL_TRACE_EXTFRAG) {
			saw_extfrag = true;
			assert_int_equal(all[i].fallback_order, 10);
			assert_int_equal(all[i].fragmenting, 0);
			assert_int_equal(all[i].change_ownership, 1);
		}
		if (all[i].type == PL_TRACE_ALLOC_VMAP_AREA) {
			saw_vmap = true;
			assert_true(all[i].va_start == 18446683600663445504ull ||
				    all[i].va_start == 18446683600663478272ull);
			assert_int_equal(all[i].size, 20480);
		}
		if (all[i].type == PL_TRACE_PURGE_VMAP_AREA) {
			saw_purge = true;
			assert_int_equal(all[i].npurged, 3277);
		}
	}
	assert_true(saw_extfrag && saw_vmap && saw_purge);
	assert_true(st->by_type[PL_TRACE_PERCPU] >= 1);
	assert_true(st->by_type[PL_TRACE_PCPU_DRAIN] == 4);
	assert_true(st->by_type[PL_TRACE_ZONE_LOCKED] == 5);
	pl_trace_close(r);
}

static void test_perf_format(void **state)
{
	struct pl_trace_event all[32];
	struct pl_trace_reader *r = read_perf_fixture("perf-script-6.18.txt", all, 32, 12);
	const struct pl_trace_stats *st = pl_trace_get_stats(r);

	(void)state;
	assert_int_equal(all[0].type, PL_TRACE_PAGE_ALLOC);
	assert_int_equal(all[0].pfn, 0x146dbe);
	assert_int_equal(all[0].cpu, 1);
	assert_int_equal(st->by_type[PL_TRACE_EXTFRAG], 2);
	for (int i = 0; i < 12; i++)
		if (all[i].type == PL_TRACE_EXTFRAG)	/* perf prints fragmenting=10 */
			assert_int_equal(all[i].fragmenting, all[i].fallback_order < pageblock_order);
	pl_trace_close(r);
}

/*
 * perf script of a perf record -g: each event's callchain frames follow it,
 * then a blank line. The frames are counted and skipped, not malformed.
 */
static void test_perf_callchains(void **state)
{
	struct pl_trace_event all[16];
	struct pl_trace_reader *r = read_perf_fixture("perf-script-callchain-6.18.txt", all, 16, 6);
	const struct pl_trace_stats *st = pl_trace_get_stats(r);

	(void)state;
	assert_int_equal(st->lines, 104);
	assert_int_equal(st->callchain_lines, 104 - 6 - 6);	/* less the events and blanks */
	assert_int_equal(st->by_type[PL_TRACE_PAGE_ALLOC], 2);
	assert_int_equal(st->by_type[PL_TRACE_PAGE_FREE], 2);
	assert_int_equal(st->by_type[PL_TRACE_ZONE_LOCKED], 2);
	assert_int_equal(all[4].pfn, 0x25e680);
	assert_int_equal(all[4].cpu, 0);
	assert_true(all[4].percpu_refill);
	pl_trace_close(r);

	/* a frame-like line that is no frame (no tab, no dso) is still malformed */
	static const char not_frame[] = "ffffffff8162184b __alloc_frozen_pages_noprof+0x26b\n";

	r = pl_trace_open_mem(not_frame, sizeof(not_frame) - 1);
	pl_warn_set_quiet(true);
	assert_int_equal(drain_reader(r, NULL, all, 16), 0);
	pl_warn_set_quiet(false);
	st = pl_trace_get_stats(r);
	assert_int_equal(st->warn[PL_TW_malformed_line], 1);
	assert_int_equal(st->callchain_lines, 0);
	pl_trace_close(r);
}

static void test_trace_cmd_format(void **state)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path("trace-cmd-report-6.18.txt"));
	struct pl_trace_event all[16];
	const struct pl_trace_stats *st;

	(void)state;
	assert_non_null(r);
	assert_int_equal(drain_reader(r, NULL, all, 16), 8);
	st = pl_trace_get_stats(r);
	assert_int_equal(st->format, PL_TRACE_FMT_TRACE_CMD);
	assert_int_equal(st->warn[PL_TW_malformed_line], 0);
	/* "CPU:0 [EVENTS DROPPED]": a lost-event marker of unknown size */
	assert_int_equal(st->warn[PL_TW_lost_events], 1);
	assert_int_equal(st->lost_events, 1);
	assert_int_equal(all[1].type, PL_TRACE_ZONE_LOCKED);
	assert_int_equal(all[1].order, 2);
	assert_int_equal(all[1].percpu_refill, 1);
	assert_int_equal(st->by_type[PL_TRACE_PAGE_FREE_BATCHED], 2);
	pl_trace_close(r);
}

static const char malformed[] =
	"# tracer: nop\n"
	"# entries-in-buffer/entries-written: 100/150   #P:2\n"
	"  a-1 [000] ..... 10.000001: mm_page_alloc: page=x pfn=0x10 order=0 migratetype=1 gfp_flags=GFP_KERNEL\n"
	"  a-1 [000] ..... 10.000002: mm_page_alloc: page=x pfn=0x11 order=zz\n"
	"garbage without a cpu\n"
	"  a-1 [001] ..... 10.000003: sched_switch: prev_comm=a\n"
	"CPU:1 [LOST 7 EVENTS]\n"
	"  a-1 [000] ..... 10.000004: mm_page_alloc: page=x pfn=0x12 order=11 migratetype=1\n"
	"  a-1 [001] ..... 10.000005: mm_page_free: page=x pfn=0x10 order=0";

static void test_malformed_lines(void **state)
{
	struct pl_trace_reader *r = pl_trace_open_mem(malformed, sizeof(malformed) - 1);
	struct pl_trace_event all[8];
	const struct pl_trace_stats *st;
	char last[256];

	(void)state;
	pl_warn_set_quiet(true);
	assert_int_equal(drain_reader(r, NULL, all, 8), 2);
	st = pl_trace_get_stats(r);
	/* lines 4, 5 and 8 are malformed; the good ones around them stand */
	assert_int_equal(st->warn[PL_TW_malformed_line], 3);
	assert_int_equal(st->warn[PL_TW_unknown_event], 1);
	assert_int_equal(st->lost_events, 50 + 7);
	assert_int_equal(st->lines, 9);
	assert_int_equal(all[0].pfn, 0x10);
	assert_int_equal(all[1].type, PL_TRACE_PAGE_FREE);
	assert_int_equal(all[1].line, 9);	/* the last line has no newline */
	pl_warn_last(last, sizeof(last));
	assert_non_null(strstr(last, "line 8"));
	pl_warn_set_quiet(false);
	pl_trace_close(r);
}

enum { GZIP, ZSTD, XZ, NR_COMP };

/* @text compressed as @fmt into @out (@cap bytes). Return: its length. */
static size_t compress_as(int fmt, const char *text, size_t len, unsigned char *out, size_t cap)
{
	z_stream zs = { 0 };
	size_t clen = 0;

	switch (fmt) {
	case GZIP:
		assert_int_equal(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY),
				 Z_OK);
		zs.next_in = (unsigned char *)text;
		zs.avail_in = (uInt)len;
		zs.next_out = out;
		zs.avail_out = (uInt)cap;
		assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
		clen = zs.total_out;
		deflateEnd(&zs);
		break;
	case ZSTD:
		clen = ZSTD_compress(out, cap, text, len, 3);
		assert_false(ZSTD_isError(clen));
		break;
	case XZ:
		assert_int_equal(lzma_easy_buffer_encode(6, LZMA_CHECK_CRC64, NULL, (const uint8_t *)text,
							 len, out, &clen, cap), LZMA_OK);
		break;
	}
	return clen;
}

/*
 * The same text through gzip, zstd and xz gives the same events; cut in
 * half, each gives the events before the cut, then -EIO (a cut file is an
 * error, never a silently shorter trace).
 */
static void test_compressed(void **state)
{
	size_t len, clen;
	char *text = slurp(fixture_path("ftrace-6.18.txt"), &len);
	unsigned char *out = malloc(len + 65536);
	struct pl_trace_reader *r = pl_trace_open_mem(text, len);
	unsigned long plain = drain_reader(r, NULL, NULL, 0);

	(void)state;
	pl_trace_close(r);
	assert_true(plain > 40);
	for (int fmt = 0; fmt < NR_COMP; fmt++) {
		struct pl_trace_event ev;
		int ret;

		clen = compress_as(fmt, text, len, out, len + 65536);
		r = pl_trace_open_mem(out, clen);
		assert_int_equal(drain_reader(r, NULL, NULL, 0), plain);
		assert_int_equal(pl_trace_get_stats(r)->warn[PL_TW_malformed_line], 0);
		assert_int_equal(pl_trace_next(r, &ev), 0);
		pl_trace_close(r);

		r = pl_trace_open_mem(out, clen / 2);
		pl_warn_set_quiet(true);
		while ((ret = pl_trace_next(r, &ev)) > 0)
			;
		pl_warn_set_quiet(false);
		assert_int_equal(ret, -EIO);
		assert_true(pl_trace_get_stats(r)->events < plain);
		pl_trace_close(r);
	}
	free(out);
	free(text);
}

static void test_open_missing(void **state)
{
	(void)state;
	errno = 0;
	assert_null(pl_trace_open("/nonexistent/trace.txt"));
	assert_int_equal(errno, ENOENT);
}

/*
 * A NUMA machine's /proc files list node 1's zones under the same names as
 * node 0's: refused as a whole (-EOPNOTSUPP), in each of the three files.
 */
static void test_snapshot_numa(void)
{
	static const char *const files[] = { "zoneinfo", "buddyinfo", "pagetypeinfo" };
	char dir[] = "/tmp/pagelab-numa-XXXXXX", path[4200], cmd[8600];
	struct pl_snapshot snap;

	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		unsigned long warns = pl_warn_count();

		/* a copy of the fixture, with a second node's Normal zone appended */
		snprintf(cmd, sizeof(cmd), "cp %s/* %s/ && grep -m1 '^Node 0, zone *Normal' %s/%s | "
			 "sed 's/^Node 0/Node 1/' >> %s/%s", fixture_path("snapshot-6.18"), dir, dir,
			 files[i], dir, files[i]);
		assert_int_equal(system(cmd), 0);
		pl_warn_set_quiet(true);
		assert_int_equal(pl_snapshot_read(dir, &snap), -EOPNOTSUPP);
		pl_warn_set_quiet(false);
		assert_int_equal(pl_warn_count(), warns + 1);
		snprintf(path, sizeof(path), "rm -f %s/*", dir);
		assert_int_equal(system(path), 0);
	}
	rmdir(dir);
}

/*
 * The vm sysctls the recorder copies next to the reports: read where present
 * (the boost factor's 0 is "off"), and where absent min_free_kbytes is the
 * kernel's from the zones' min watermarks (not their rounded-down sum, and
 * without the Movable zone's fixed 32) and watermark_scale_factor unknown. A
 * malformed file is one warning and -EINVAL.
 */
static void test_snapshot_sysctls(void)
{
	char dir[] = "/tmp/pagelab-sysctl-XXXXXX", cmd[8600];
	struct pl_snapshot snap;
	unsigned long warns;

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	/* THP's set_recommended_min_free_kbytes(): 11 pageblocks x 3 zones */
	assert_int_equal(snap.min_free_kbytes, 16896 * 4);
	assert_int_equal(snap.watermark_scale_factor, 0);
	assert_int_equal(snap.watermark_boost_factor, 0);
	assert_int_equal(snap.percpu_pagelist_high_fraction, 0);

	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s/* %s/ && echo 90112 > %s/min_free_kbytes && "
		 "echo 150 > %s/watermark_scale_factor && echo 0 > %s/watermark_boost_factor && "
		 "echo 16 > %s/percpu_pagelist_high_fraction", fixture_path("snapshot-6.18"), dir,
		 dir, dir, dir, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pl_snapshot_read(dir, &snap), 0);
	assert_int_equal(snap.min_free_kbytes, 90112);
	assert_int_equal(snap.watermark_scale_factor, 150);
	assert_int_equal(snap.watermark_boost_factor, PL_WMARK_BOOST_OFF);
	assert_int_equal(snap.percpu_pagelist_high_fraction, 16);
	{
		struct pl_config cfg;

		pl_config_default(&cfg);
		pl_snapshot_config(&snap, &cfg);
		assert_int_equal(cfg.min_free_kbytes, 90112);
		assert_int_equal(cfg.watermark_scale_factor, 150);
		assert_int_equal(cfg.watermark_boost_factor, PL_WMARK_BOOST_OFF);
		assert_int_equal(cfg.percpu_pagelist_high_fraction, 16);
	}
	{
		/* malformed, or outside the sysctl's own range: one warning, -EINVAL */
		static const char *const bad[] = {
			"watermark_scale_factor many", "watermark_scale_factor 3001",
			"watermark_scale_factor 0", "percpu_pagelist_high_fraction 7",
			"watermark_boost_factor 4294967296", "min_free_kbytes 999999999",
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			char file[64];

			snprintf(cmd, sizeof(cmd), "cp %s/* %s/", fixture_path("snapshot-6.18"), dir);
			assert_int_equal(system(cmd), 0);
			assert_int_equal(sscanf(bad[i], "%63s", file), 1);
			snprintf(cmd, sizeof(cmd), "echo %s > %s/%s", strchr(bad[i], ' ') + 1, dir, file);
			assert_int_equal(system(cmd), 0);
			warns = pl_warn_count();
			pl_warn_set_quiet(true);
			assert_int_equal(pl_snapshot_read(dir, &snap), -EINVAL);
			pl_warn_set_quiet(false);
			assert_int_equal(pl_warn_count(), warns + 1);
			snprintf(cmd, sizeof(cmd), "rm -f %s/*", dir);
			assert_int_equal(system(cmd), 0);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -f %s/*", dir);
	assert_int_equal(system(cmd), 0);
	rmdir(dir);
}

static void test_snapshot_read(void **state)
{
	struct pl_snapshot snap;

	(void)state;
	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	assert_int_equal(snap.nr_zones, 5);	/* DMA DMA32 Normal Movable Device */
	assert_string_equal(snap.zone[2].name, "Normal");
	assert_int_equal(snap.zone[2].managed, 1179648);
	assert_int_equal(snap.zone[2].nr_free[0], 913);
	assert_int_equal(snap.zone[2].free_mt[MIGRATE_RECLAIMABLE][0], 893);
	assert_int_equal(snap.zone[2].blocks_mt[MIGRATE_UNMOVABLE], 242);
	assert_int_equal(snap.zone[2].pcp_count[0], 46316);
	assert_int_equal(snap.zone[2].pcp_high[0], 64512);
	assert_int_equal(snap.zone[2].pcp_batch[0], 63);
	assert_int_equal(pl_snapshot_nr_cpus(&snap), 2);	/* cpu: 0 and 1 in every zone */
	assert_int_equal(snap.zone[1].wmark[WMARK_MIN], 6675);
	assert_int_equal(snap.zone[1].start_pfn, 4096);
	assert_true(snap.has_vmstat);
	assert_int_equal(pl_snapshot_read("/nonexistent", &snap), -ENOENT);
	test_snapshot_numa();
	test_snapshot_sysctls();
}

/* Write @vmstat's text as @dir's vmstat beside the fixture's other files; read it. */
static void snapshot_with_vmstat(const char *dir, const char *vmstat, struct pl_snapshot *snap)
{
	char cmd[8192];

	snprintf(cmd, sizeof(cmd), "cp %s/* %s/ && printf '%s' > %s/vmstat",
		 fixture_path("snapshot-6.18"), dir, vmstat, dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(pl_snapshot_read(dir, snap), 0);
}

/*
 * pl_snapshot_gap(): vmstat's pgalloc_* and pgfree between two snapshots
 * against the trace's pages. The trace here allocates 1 + 4 pages, a
 * vmalloc area of 4 pages plus its guard, and frees 4 pages (its _batched
 * twin not again).
 */
static void test_snapshot_gap(void **state)
{
	static const struct pl_trace_event evs[] = {
		{ .type = PL_TRACE_PAGE_ALLOC, .pfn = 0x1000, .order = 0 },
		{ .type = PL_TRACE_PAGE_ALLOC, .pfn = 0x2000, .order = 2 },
		{ .type = PL_TRACE_PAGE_ALLOC, .pfn = -1UL, .order = 3 },	/* failed */
		{ .type = PL_TRACE_ALLOC_VMAP_AREA, .size = 5 * PAGE_SIZE },
		{ .type = PL_TRACE_ALLOC_VMAP_AREA, .size = 9 * PAGE_SIZE, .failed = 1 },
		{ .type = PL_TRACE_PAGE_FREE, .pfn = 0x2000, .order = 2 },
		{ .type = PL_TRACE_PAGE_FREE_BATCHED, .pfn = 0x2000, .order = 0 },
	};
	static const struct {
		const char *after;	/* the after snapshot's counters; before: 1000 and 2000 */
		long alloc_gap, free_gap;
		bool stale;
	} cases[] = {
		/* as the trace: 9 pages allocated (5 traced + 4 in bulk), 4 freed */
		{ "pgalloc_dma32 9\\npgalloc_normal 1000\\npgfree 2004\\n", 0, 0, false },
		/* 5,000 pages allocated outside it (a perf ring buffer): stale */
		{ "pgalloc_dma32 9\\npgalloc_normal 6000\\npgfree 2004\\n", 5000, 0, true },
		/* freed outside it */
		{ "pgalloc_dma32 9\\npgalloc_normal 1000\\npgfree 7004\\n", 0, 5000, true },
		/* a large share but only 100 pages: a short trace's noise */
		{ "pgalloc_dma32 9\\npgalloc_normal 1100\\npgfree 2004\\n", 100, 0, false },
		/* the trace runs past its snapshots: fewer pages than it holds */
		{ "pgalloc_dma32 9\\npgalloc_normal 1000\\npgfree 1997\\n", 0, -7, false },
	};
	struct pl_snapshot *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	struct pl_snapshot_gap gap, untouched;
	struct pl_trace_score *score = malloc(sizeof(*score));
	char dir[] = "/tmp/pl-gap-XXXXXX", cmd[4200];
	unsigned long warns;

	(void)state;
	assert_non_null(before);
	assert_non_null(after);
	assert_non_null(score);
	pl_trace_score_init(score);
	for (size_t i = 0; i < ARRAY_SIZE(evs); i++)
		pl_trace_score_event(score, &evs[i]);
	assert_int_equal(score->alloc_pages, 5);
	assert_int_equal(score->free_pages, 4);
	assert_int_equal(score->vmalloc_area_pages, 4);

	/* the fixture's own counters are read: pgalloc_* summed over the zones */
	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), before), 0);
	assert_true(before->has_pgalloc);
	assert_int_equal(before->pgalloc, 13891290);
	assert_int_equal(before->pgfree, 14994375);

	assert_non_null(mkdtemp(dir));
	snapshot_with_vmstat(dir, "nr_free_pages 10\\npgalloc_normal 1000\\npgfree 2000\\n", before);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		snapshot_with_vmstat(dir, cases[i].after, after);
		assert_int_equal(pl_snapshot_gap(before, after, score, &gap), 0);
		assert_int_equal(gap.traced_alloc, 9);
		assert_int_equal(gap.traced_free, 4);
		assert_int_equal(gap.alloc_gap, cases[i].alloc_gap);
		assert_int_equal(gap.free_gap, cases[i].free_gap);
		assert_int_equal(gap.stale, cases[i].stale);
	}

	/* no counters in one of them: -ENODATA, no warning, @out untouched */
	snapshot_with_vmstat(dir, "nr_free_pages 10\\npgalloc_normal 1000\\n", after);
	assert_false(after->has_pgalloc);
	memset(&untouched, 0x5a, sizeof(untouched));
	gap = untouched;
	warns = pl_warn_count();
	assert_int_equal(pl_snapshot_gap(before, after, score, &gap), -ENODATA);
	assert_memory_equal(&gap, &untouched, sizeof(gap));
	/* bad input: -EINVAL and one warning each */
	pl_warn_set_quiet(true);
	assert_int_equal(pl_snapshot_gap(NULL, after, score, &gap), -EINVAL);
	assert_int_equal(pl_snapshot_gap(before, after, NULL, &gap), -EINVAL);
	assert_int_equal(pl_snapshot_gap(before, after, score, NULL), -EINVAL);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_warn_count(), warns + 3);
	assert_memory_equal(&gap, &untouched, sizeof(gap));

	snprintf(cmd, sizeof(cmd), "rm -f %s/*", dir);
	assert_int_equal(system(cmd), 0);
	rmdir(dir);
	free(before);
	free(after);
	free(score);
}

/*
 * The memory-pressure events in the three formats, from real 6.18 captures
 * of a manual compaction (echo 1 > /proc/sys/vm/compact_memory): every
 * field the score and the replay read, the same in each format.
 */
static void check_pressure_events(const char *name, enum pl_trace_format fmt)
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	struct pl_trace_event all[64];
	const struct pl_trace_stats *st;
	bool begin = false, end = false, iso_m = false, iso_f = false, mig = false, cmig = false,
	     start = false, fin = false;
	unsigned long n;

	assert_non_null(r);
	n = drain_reader(r, NULL, all, 64);
	st = pl_trace_get_stats(r);
	assert_true(n >= 8);
	assert_int_equal(st->format, fmt);
	assert_int_equal(st->warn[PL_TW_malformed_line], 0);
	assert_int_equal(st->warn[PL_TW_unknown_event], 0);
	for (unsigned long i = 0; i < n; i++) {
		const struct pl_trace_event *e = &all[i];

		assert_true(e->type >= PL_TRACE_PRESSURE_FIRST);
		assert_true(e->pid > 0);
		switch (e->type) {
		case PL_TRACE_COMPACT_BEGIN:
			if (e->zone_start == 0x1) {
				assert_int_equal(e->migrate_pfn, 0x1);
				assert_int_equal(e->free_pfn, 0xe00);
				assert_int_equal(e->zone_end, 0x1000);
				assert_int_equal(e->sync, 1);
				begin = true;
			}
			break;
		case PL_TRACE_COMPACT_END:
			assert_int_equal(e->status, PL_COMPACT_COMPLETE);
			assert_int_equal(e->sync, 1);
			end = true;
			break;
		case PL_TRACE_COMPACT_ISOLATE_MIGRATE:
			assert_true(e->end_pfn > e->start_pfn);
			assert_true(e->nr_taken <= e->nr_scanned);
			if (e->start_pfn == 0x103000) {
				assert_int_equal(e->end_pfn, 0x103022);
				assert_int_equal(e->nr_scanned, 34);
				assert_int_equal(e->nr_taken, 32);
			}
			iso_m |= e->nr_taken > 0;
			break;
		case PL_TRACE_COMPACT_ISOLATE_FREE:
			assert_true(e->end_pfn > e->start_pfn && e->nr_taken > 0);
			iso_f = true;
			break;
		case PL_TRACE_MIGRATE_PAGES_START:
			assert_int_equal(e->sync, 2);	/* MIGRATE_SYNC */
			assert_int_equal(e->reason, PL_MR_COMPACTION);
			start = true;
			break;
		case PL_TRACE_MIGRATE_PAGES:
			assert_true(e->nr_succeeded > 0);
			assert_int_equal(e->nr_failed, 0);
			assert_int_equal(e->reason, PL_MR_COMPACTION);
			mig = true;
			break;
		case PL_TRACE_COMPACT_MIGRATEPAGES:
			assert_true(e->nr_succeeded > 0);
			cmig = true;
			break;
		case PL_TRACE_COMPACT_FINISHED:
			assert_int_equal(e->order, -1);	/* proactive or manual: no order */
			assert_int_equal(e->status, PL_COMPACT_CONTINUE);
			fin = true;
			break;
		default:
			break;
		}
	}
	assert_true(begin && end && iso_m && iso_f && mig && cmig && start && fin);
	pl_trace_close(r);
}

static void test_pressure_formats(void **state)
{
	(void)state;
	check_pressure_events("pressure-ftrace-6.18.txt", PL_TRACE_FMT_FTRACE);
	check_pressure_events("pressure-perf-script-6.18.txt", PL_TRACE_FMT_PERF);
	check_pressure_events("pressure-trace-cmd-report-6.18.txt", PL_TRACE_FMT_TRACE_CMD);
}

/* One line through the parser. */
static int parse1(const char *line, struct pl_trace_event *ev)
{
	return pl_trace_parse_line(line, strlen(line), ev, NULL);
}

/*
 * The pressure score: a direct compaction that compacts is a stall; one
 * whose zones are all deferred is not; success comes from its own task's
 * compact_zone() ending status=success; kswapd's frees and failed
 * high-order allocations are counted.
 */
static void test_pressure_score(void **state)
{
	static const char *const lines[] = {
		/* task 100: deferred everywhere: COMPACT_SKIPPED, no stall */
		"a-100 [000] ..... 1.000001: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_HIGHUSER_MOVABLE|__GFP_RETRY_MAYFAIL priority=2",
		"a-100 [000] ..... 1.000002: mm_compaction_deferred: node=0 zone=Normal   order=9 "
		"order_failed=9 consider=1 limit=2",
		/* task 200: a stall that succeeds, while task 300's fails on the other CPU */
		"b-200 [000] ..... 1.000003: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_TRANSHUGE priority=1",
		"c-300 [001] ..... 1.000004: mm_compaction_try_to_compact_pages: order=9 "
		"gfp_mask=GFP_TRANSHUGE priority=1",
		"b-200 [000] ..... 1.000005: mm_compaction_begin: zone_start=0x100000 "
		"migrate_pfn=0x100000 free_pfn=0x3d7e00 zone_end=0x3d8000, mode=async",
		"c-300 [001] ..... 1.000006: mm_compaction_begin: zone_start=0x100000 "
		"migrate_pfn=0x100200 free_pfn=0x3d7c00 zone_end=0x3d8000, mode=async",
		"b-200 [000] ..... 1.000007: mm_compaction_isolate_migratepages: "
		"range=(0x100000 ~ 0x100200) nr_scanned=512 nr_taken=32",
		"b-200 [000] ..... 1.000008: mm_compaction_isolate_freepages: "
		"range=(0x3d7e00 ~ 0x3d8000) nr_scanned=512 nr_taken=32",
		"b-200 [000] ..... 1.000009: mm_compaction_migratepages: nr_migrated=30 nr_failed=2",
		"b-200 [000] ..... 1.000010: mm_compaction_end: zone_start=0x100000 "
		"migrate_pfn=0x100200 free_pfn=0x3d7e00 zone_end=0x3d8000, mode=async status=success",
		"c-300 [001] ..... 1.000011: mm_compaction_end: zone_start=0x100000 "
		"migrate_pfn=0x100400 free_pfn=0x3d7c00 zone_end=0x3d8000, mode=async status=complete",
		"kswapd0-90 [001] ..... 1.000012: mm_vmscan_kswapd_wake: nid=0 order=0",
		"kswapd0-90 [001] ..... 1.000013: mm_page_free: page=0000000000000000 pfn=0x2000 order=0",
		"kswapd0-90 [001] ..... 1.000014: mm_page_free: page=0000000000000000 pfn=0x2200 order=2",
		"d-400 [000] ..... 1.000015: mm_page_alloc: page=0000000000000000 pfn=0x0 order=9 "
		"migratetype=1 gfp_flags=GFP_TRANSHUGE",
		"d-400 [000] ..... 1.000016: mm_vmscan_direct_reclaim_begin: order=9 gfp_flags=GFP_TRANSHUGE",
		"d-400 [000] ..... 1.000017: mm_vmscan_direct_reclaim_end: nr_reclaimed=37",
	};
	struct pl_trace_score sc;
	struct pl_trace_event ev;

	(void)state;
	pl_trace_score_init(&sc);
	for (size_t i = 0; i < ARRAY_SIZE(lines); i++) {
		assert_int_equal(parse1(lines[i], &ev), 1);
		pl_trace_score_event(&sc, &ev);
	}
	pl_trace_score_pressure_finish(&sc);
	assert_int_equal(sc.pr.compact_stalls, 2);
	assert_int_equal(sc.pr.compact_successes, 1);
	assert_int_equal(sc.pr.compact_failures, 1);
	assert_int_equal(sc.pr.compact_deferred, 1);
	assert_int_equal(sc.pr.compact_runs, 2);
	assert_int_equal(sc.pr.compact_isolated_migrate, 32);
	assert_int_equal(sc.pr.compact_isolated_free, 32);
	assert_int_equal(sc.pr.compact_migrate_scanned, 512);
	assert_int_equal(sc.pr.compact_migrated, 30);
	assert_int_equal(sc.pr.compact_migrate_failed, 2);
	assert_int_equal(sc.pr.kswapd_wakes, 1);
	assert_int_equal(sc.pr.kswapd_freed_pages, 5);
	assert_int_equal(sc.pr.alloc_failures_high_order, 1);
	assert_int_equal(sc.pr.direct_reclaims, 1);
	assert_int_equal(sc.pr.direct_reclaimed, 37);
	/* the parser's fields of the events only this test shows */
	assert_int_equal(parse1(lines[0], &ev), 1);
	assert_int_equal(ev.priority, 2);
	assert_int_equal(ev.pid, 100);
	assert_true(ev.gfp & __GFP_RECLAIM);
	assert_int_equal(parse1(lines[1], &ev), 1);
	assert_int_equal(ev.order_failed, 9);
	assert_int_equal(ev.considered, 1);
	assert_int_equal(ev.defer_limit, 2);
}

/* A pressure event without what it needs, or with a cut range, is a malformed line. */
static void test_pressure_malformed(void **state)
{
	struct pl_trace_event ev;

	(void)state;
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_compaction_isolate_freepages: "
				"range=(0x10 ~ 0x20 nr_scanned=1 nr_taken=1", &ev), -1);
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_compaction_isolate_freepages: "
				"range=(0x10 ~ 0x20) nr_scanned=1", &ev), -1);
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_compaction_end: zone_start=0x1 "
				"migrate_pfn=0x1 free_pfn=0x2 zone_end=0x3, mode=sync status=bogus", &ev), -1);
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_compaction_finished: node=0 "
				"zone=DMA order=-2 ret=continue", &ev), -1);
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_vmscan_direct_reclaim_end: ", &ev), -1);
	/* an event of these systems pagelab does not read is skipped, not malformed */
	assert_int_equal(parse1("a-1 [000] ..... 1.0: mm_vmscan_lru_isolate: classzone=2 order=0",
				&ev), 0);
}

/* vmstat's pressure counters between two snapshots. */
static void test_pressure_vmstat(void **state)
{
	char d0[] = "/tmp/pl-vmstat0-XXXXXX", d1[] = "/tmp/pl-vmstat1-XXXXXX", path[64];
	struct pl_snapshot a, b;
	unsigned long out[NR_PL_VMSTAT_PRESSURE];
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(d0));
	assert_non_null(mkdtemp(d1));
	for (int i = 0; i < 2; i++) {	/* a snapshot needs buddyinfo or zoneinfo */
		snprintf(path, sizeof(path), "%s/buddyinfo", i ? d1 : d0);
		f = fopen(path, "w");
		fputs("Node 0, zone   Normal      1      0      0      0      0      0      0      0"
		      "      0      0      0 \n", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/vmstat", d0);
	f = fopen(path, "w");
	fputs("nr_free_pages 100\npgalloc_normal 5\npgfree 5\ncompact_stall 3\ncompact_success 1\n"
	      "pgmigrate_success 10\nallocstall_normal 2\nallocstall_dma32 1\npgsteal_kswapd 7\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/vmstat", d1);
	f = fopen(path, "w");
	fputs("nr_free_pages 90\npgalloc_normal 9\npgfree 6\ncompact_stall 8\ncompact_success 3\n"
	      "pgmigrate_success 110\nallocstall_normal 4\nallocstall_dma32 1\npgsteal_kswapd 7\n", f);
	fclose(f);
	assert_int_equal(pl_snapshot_read(d0, &a), 0);
	assert_int_equal(pl_snapshot_read(d1, &b), 0);
	assert_int_equal(pl_snapshot_pressure_delta(&a, &b, out), 0);
	assert_int_equal(out[PL_VP_compact_stall], 5);
	assert_int_equal(out[PL_VP_compact_success], 2);
	assert_int_equal(out[PL_VP_pgmigrate_success], 100);
	assert_int_equal(out[PL_VP_allocstall], 2);
	assert_int_equal(out[PL_VP_pgsteal_kswapd], 0);
	/* backwards (two boots): no delta */
	assert_int_equal(pl_snapshot_pressure_delta(&b, &a, out), -ENODATA);
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/vmstat", i ? d1 : d0);
		unlink(path);
		snprintf(path, sizeof(path), "%s/buddyinfo", i ? d1 : d0);
		unlink(path);
		rmdir(i ? d1 : d0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ftrace_format),
		cmocka_unit_test(test_perf_format),
		cmocka_unit_test(test_perf_callchains),
		cmocka_unit_test(test_trace_cmd_format),
		cmocka_unit_test(test_malformed_lines),
		cmocka_unit_test(test_compressed),
		cmocka_unit_test(test_open_missing),
		cmocka_unit_test(test_snapshot_read),
		cmocka_unit_test(test_snapshot_gap),
		cmocka_unit_test(test_pressure_formats),
		cmocka_unit_test(test_pressure_score),
		cmocka_unit_test(test_pressure_malformed),
		cmocka_unit_test(test_pressure_vmstat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
