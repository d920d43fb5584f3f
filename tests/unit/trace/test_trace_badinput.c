// SPDX-License-Identifier: MIT
/*
 * test_trace_badinput.c - untrusted traces: every number a line carries is
 * checked at the parser (no silent wrap: an order, CPU, pfn, migratetype,
 * timestamp or size a kernel cannot print makes the line malformed, counted
 * with its number), a timestamp that jumps more than PL_TRACE_MAX_GAP_S is
 * skipped, and the passes over the events (PCP-busy) keep memory by the
 * events they saw, never by the values in them. Snapshots: each /proc file
 * held to the kernel's format and the numbers to each other, refused in one
 * warning naming file, line and field with the caller's struct unchanged;
 * a snapshot larger than the machine refused with the machine unchanged.
 */
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>
#include "helpers.h"
#include "pagelab/pagelab.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "trace_fixtures.h"

#define PFX "  a-1 [000] ..... 10.000001: "

/* Lines no kernel prints: each one malformed, whatever the wrap would give. */
static const char *const bad_lines[] = {
	PFX "mm_page_alloc: page=x pfn=0x10 order=4294967299 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=0x10 order=-1 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=0x10 order=11 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=0x10 order=3abc migratetype=1",
	PFX "mm_page_alloc: page=x pfn=0x10 order=0 migratetype=4294967297",
	PFX "mm_page_alloc: page=x pfn=0x10 order=0 migratetype=6",
	PFX "mm_page_alloc: page=x pfn=0x10 order=0 migratetype=-3",
	PFX "mm_page_alloc: page=x pfn=0x10000000000 order=0 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=0x1fffffffffffffff0 order=0 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=99999999999999999999999 order=0 migratetype=1",
	PFX "mm_page_alloc: page=x pfn=-2 order=0 migratetype=1",
	"  a-1 [4294967296] ..... 10.000001: mm_page_free: page=x pfn=0x10 order=0",
	"  a-1 [8192] ..... 10.000001: mm_page_free: page=x pfn=0x10 order=0",
	"  a-1 [000] ..... 18446744074.000001: mm_page_free: page=x pfn=0x10 order=0",
	"  a-1 [000] ..... 99999999999999999999.000001: mm_page_free: page=x pfn=0x10 order=0",
	PFX "mm_page_alloc_extfrag: page=x pfn=0x10 alloc_order=0 fallback_order=99 "
	    "pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 "
	    "change_ownership=1",
	PFX "mm_page_alloc_extfrag: page=x pfn=0x10 alloc_order=0 fallback_order=3 "
	    "pageblock_order=9 alloc_migratetype=0 fallback_migratetype=1 fragmenting=1 "
	    "change_ownership=2",
	PFX "mm_page_alloc_zone_locked: page=x pfn=0x10 order=0 migratetype=1 percpu_refill=7",
	PFX "alloc_vmap_area: va_start: 18446744073709547520 size=8192 align=4096 "
	    "vstart=0x0 vend=0x0 failed=0",
	PFX "alloc_vmap_area: va_start: 4096 size=-8192 align=4096 vstart=0x0 vend=0x0 failed=0",
	PFX "alloc_vmap_area: va_start: 4096 size=8192 align=4096 vstart=0x0 vend=0x0 failed=9",
	PFX "free_vmap_area_noflush: va_start=0xffffc90000000000 nr_lazy=-5 nr_lazy_max=100",
	PFX "purge_vmap_area_lazy: start=0x0 end=0x0 num_purged=-1",
	/* the memory-pressure events: as strict as the page events */
	PFX "mm_compaction_try_to_compact_pages: order=9x gfp_mask=GFP_KERNEL priority=1",
	PFX "mm_compaction_try_to_compact_pages: order=4294967305 gfp_mask=GFP_KERNEL priority=1",
	PFX "mm_compaction_try_to_compact_pages: order=11 gfp_mask=GFP_KERNEL priority=1",
	PFX "mm_compaction_try_to_compact_pages: order=-2 gfp_mask=GFP_KERNEL priority=1",
	PFX "mm_compaction_try_to_compact_pages: order=9 gfp_mask=GFP_KERNEL priority=7",
	PFX "mm_compaction_deferred: node=0 zone=Normal   order=9 order_failed=12 consider=1 limit=2",
	PFX "mm_compaction_deferred: node=0 zone=Normal   order=9 order_failed=9 consider=65 limit=2",
	PFX "mm_compaction_deferred: node=0 zone=Normal   order=9 order_failed=9 consider=1 limit=0",
	PFX "mm_compaction_deferred: node=0 zone=Normal   order=9 order_failed=9 consider=-1 limit=2",
	PFX "mm_compaction_begin: zone_start=0x1 migrate_pfn=0x10000000001 free_pfn=0xe00 "
	    "zone_end=0x1000, mode=sync",
	PFX "mm_compaction_begin: zone_start=0x1 migrate_pfn=0x1 free_pfn=0x1fffffffffffffff0 "
	    "zone_end=0x1000, mode=sync",
	PFX "mm_compaction_begin: zone_start=0x1 migrate_pfn=0x1 free_pfn=0xe00 "
	    "zone_end=0x1000,, mode=sync",
	PFX "mm_compaction_begin: zone_start=0x1z migrate_pfn=0x1 free_pfn=0xe00 "
	    "zone_end=0x1000, mode=sync",
	PFX "mm_compaction_begin: zone_start=0x1 migrate_pfn=0x1 free_pfn=0xe00 "
	    "zone_end=0x1000, mode=sometimes",
	PFX "mm_compaction_end: zone_start=0x1 migrate_pfn=0xe00 free_pfn=0xe00 "
	    "zone_end=0x1000, mode=sync status=finished_early",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 ~ 0x200) nr_scanned=511x nr_taken=0",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 ~ 0x200) nr_scanned=-1 nr_taken=0",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 ~ 0x200) nr_scanned=1 "
	    "nr_taken=99999999999999999999999",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 ~ 0x10000000001) nr_scanned=1 nr_taken=0",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 ~ 0x200)x nr_scanned=1 nr_taken=0",
	PFX "mm_compaction_isolate_migratepages: range=(0x1 - 0x200) nr_scanned=1 nr_taken=0",
	PFX "mm_compaction_isolate_freepages: range=0x1 ~ 0x200) nr_scanned=1 nr_taken=0",
	PFX "mm_compaction_migratepages: nr_migrated=1 nr_failed=0x",
	PFX "mm_migrate_pages: nr_succeeded=1 nr_failed=0 nr_thp_succeeded=0 nr_thp_failed=0 "
	    "nr_thp_split=0 nr_split=0 mode=MIGRATE_SOMETIMES reason=compaction",
	PFX "mm_migrate_pages_start: mode=MIGRATE_SYNC reason=gardening",
	PFX "mm_compaction_suitable: node=0 zone=Normal   order=9 ret=maybe",
	PFX "mm_vmscan_direct_reclaim_end: nr_reclaimed=18446744073709551616",
	PFX "mm_vmscan_kswapd_wake: nid=0 order=4294967296",
};

static void test_numbers_out_of_range_are_malformed(void **state)
{
	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(bad_lines); i++) {
		struct pl_trace_event ev;
		int ret;

		memset(&ev, 0x5a, sizeof(ev));
		ret = pl_trace_parse_line(bad_lines[i], strlen(bad_lines[i]), &ev, NULL);
		if (ret != -1)
			fail_msg("line %zu parsed (%d): %s", i, ret, bad_lines[i]);
	}
}

/* The edges that kernels do print still parse, with their values. */
static void test_edges_parse(void **state)
{
	static const char alloc_fail[] =
		PFX "mm_page_alloc: page=0000000000000000 pfn=0xffffffffffffffff order=10 "
		    "migratetype=5 gfp_flags=GFP_KERNEL";
	static const char big_cpu[] = "  a-1 [8191] ..... 18446744072.999999999: mm_page_free: "
				      "page=x pfn=0xffffffffff order=0";
	struct pl_trace_event ev;

	(void)state;
	assert_int_equal(pl_trace_parse_line(alloc_fail, strlen(alloc_fail), &ev, NULL), 1);
	assert_true(ev.pfn == -1UL);
	assert_int_equal(ev.order, MAX_PAGE_ORDER);
	assert_int_equal(ev.migratetype, PL_TRACE_MAX_MIGRATETYPE);
	assert_int_equal(pl_trace_parse_line(big_cpu, strlen(big_cpu), &ev, NULL), 1);
	assert_int_equal(ev.cpu, PL_TRACE_MAX_CPUS - 1);
	assert_true(ev.pfn == PL_TRACE_PFN_LIMIT - 1);
	assert_true(ev.ts_ns == 18446744072999999999ull);
}

/* The pressure events' edges that kernels print parse, with their values. */
static void test_pressure_edges_parse(void **state)
{
	static const char finished[] =
		PFX "mm_compaction_finished: node=0 zone=DMA      order=-1 ret=continue";
	static const char deferred[] =
		PFX "mm_compaction_deferred: node=0 zone=Normal   order=10 order_failed=11 "
		    "consider=64 limit=64";
	static const char begin[] =
		PFX "mm_compaction_begin: zone_start=0x1 migrate_pfn=0x1 free_pfn=0xffffffffff "
		    "zone_end=0x10000000000, mode=sync";
	static const char isolate[] =
		PFX "mm_compaction_isolate_freepages: range=(0x3d7e00 ~ 0x3d8000) nr_scanned=512 "
		    "nr_taken=128";
	struct pl_trace_event ev;

	(void)state;
	assert_int_equal(pl_trace_parse_line(finished, strlen(finished), &ev, NULL), 1);
	assert_int_equal(ev.order, -1);
	assert_int_equal(pl_trace_parse_line(deferred, strlen(deferred), &ev, NULL), 1);
	assert_int_equal(ev.order_failed, MAX_PAGE_ORDER + 1);
	assert_int_equal(ev.considered, 64);
	assert_int_equal(ev.defer_limit, 64);
	assert_int_equal(pl_trace_parse_line(begin, strlen(begin), &ev, NULL), 1);
	assert_true(ev.free_pfn == PL_TRACE_PFN_LIMIT - 1);
	assert_true(ev.zone_end == PL_TRACE_PFN_LIMIT);
	assert_int_equal(ev.sync, 1);
	assert_int_equal(pl_trace_parse_line(isolate, strlen(isolate), &ev, NULL), 1);
	assert_int_equal(ev.start_pfn, 0x3d7e00);
	assert_int_equal(ev.end_pfn, 0x3d8000);
	assert_int_equal(ev.nr_taken, 128);
}

/* A timestamp that jumps by 10^9 s is skipped, counted with its line. */
static void test_time_gap(void **state)
{
	static const char trace[] =
		"  a-1 [000] ..... 10.000001: mm_page_alloc: page=x pfn=0x10 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1000000010.000001: mm_page_free: page=x pfn=0x10 order=0\n"
		"  a-1 [000] ..... 3600.000002: mm_page_free: page=x pfn=0x10 order=0\n";
	struct pl_trace_reader *r = pl_trace_open_mem(trace, sizeof(trace) - 1);
	struct pl_trace_event ev;
	char last[256];
	int n = 0;

	(void)state;
	pl_warn_set_quiet(true);
	while (pl_trace_next(r, &ev) > 0)
		n++;
	assert_int_equal(n, 2);	/* an hour's gap stands, a 30-year one does not */
	assert_int_equal(pl_trace_get_stats(r)->warn[PL_TW_malformed_line], 1);
	assert_true(pl_trace_get_stats(r)->last_ns == 3600000002000ull);
	pl_warn_last(last, sizeof(last));
	assert_non_null(strstr(last, "line 2"));
	pl_warn_set_quiet(false);
	pl_trace_close(r);
}

/*
 * The PCP-busy pass keeps one entry per free awaiting its next event:
 * pfns near 2^40 cost what pfns near 0 do.
 */
static void test_pcp_busy_memory_by_events(void **state)
{
	struct pl_pcp_busy b;
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_FREE, .order = 0, .line = 1 };

	(void)state;
	memset(&b, 0, sizeof(b));
	for (unsigned long i = 0; i < 5000; i++) {
		ev.pfn = PL_TRACE_PFN_LIMIT - 1 - i * 977;
		ev.line = i + 1;
		assert_int_equal(pl_pcp_busy_event(&b, &ev), 0);
	}
	assert_int_equal(b.pending_len, 5000);
	assert_true(b.pending_cap <= 16384);
	/* every other one is next taken from the buddy: a busy free */
	for (unsigned long i = 0; i < 5000; i += 2) {
		struct pl_trace_event z = { .type = PL_TRACE_ZONE_LOCKED, .order = 0, .line = 9000 + i,
					    .pfn = PL_TRACE_PFN_LIMIT - 1 - i * 977 };

		assert_int_equal(pl_pcp_busy_event(&b, &z), 0);
	}
	/* the rest are allocated from their PCP: not busy */
	for (unsigned long i = 1; i < 5000; i += 2) {
		struct pl_trace_event a = { .type = PL_TRACE_PAGE_ALLOC, .order = 0, .line = 20000 + i,
					    .pfn = PL_TRACE_PFN_LIMIT - 1 - i * 977 };

		assert_int_equal(pl_pcp_busy_event(&b, &a), 0);
	}
	assert_int_equal(b.pending_len, 0);
	pl_pcp_busy_finish(&b);
	assert_int_equal(b.nr, 2500);
	for (unsigned long i = 0; i < 5000; i++)
		assert_int_equal(pl_pcp_busy_has(&b, i + 1), !(i & 1));
	/* an order-10 block over pfns the pass never saw: nothing, and quickly */
	ev.type = PL_TRACE_ZONE_LOCKED;
	ev.order = MAX_PAGE_ORDER;
	ev.pfn = 0;
	assert_int_equal(pl_pcp_busy_event(&b, &ev), 0);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_pcp_busy_event(NULL, &ev), -EINVAL);
	assert_int_equal(pl_pcp_busy_event(&b, NULL), -EINVAL);
	pl_warn_set_quiet(false);
	pl_pcp_busy_release(&b);
	pl_pcp_busy_release(NULL);
}

/* ---- snapshots ---------------------------------------------------------- */

static const char *const snap_files[] = { "buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat" };

static char *slurp_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* One line of the fixture's @file: the first containing @find, replaced by @with. */
struct snap_case {
	const char *file, *find, *with;
	const char *warn;	/* in the one warning: the file, line and field */
};

static const struct snap_case snap_cases[] = {
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Normal     -5 1 2 3 4 5 6 7 8 9 10",
	  "buddyinfo line 3: nr_free" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Normal 1 2 3 4 5 6 7 8 9 10 11 12",
	  "buddyinfo line 3: nr_free" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Normal 1 2 3 4 5 6 7 8 9 10 "
	  "99999999999999999999999", "buddyinfo line 3: nr_free" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone      DMA 1 2 3 4 5 6 7 8 9 10 11",
	  "buddyinfo line 3: zone" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Banana 1 2 3 4 5 6 7 8 9 10 11",
	  "buddyinfo line 3: zone" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Normal 0 0 0 0 0 0 0 0 0 0 1099511627776",
	  "buddyinfo: zone Normal" },
	{ "buddyinfo", "zone   Normal", "Node 0, zone   Normal 0 0 0 0 0 0 0 0 0 0 2000",
	  "buddyinfo: zone Normal: more free pages" },
	{ "pagetypeinfo", "Page block order", "Page block order: 30", "Page block order" },
	{ "pagetypeinfo", "Pages per block", "Pages per block:  1024", "Pages per block" },
	{ "pagetypeinfo", "zone   Normal, type      Movable",
	  "Node    0, zone   Normal, type    Unmovable 0 0 0 0 0 0 0 0 0 0 0", "type" },
	{ "pagetypeinfo", "zone   Normal, type      Movable",
	  "Node    0, zone   Normal, type       Banana 0 0 0 0 0 0 0 0 0 0 0", "type" },
	{ "pagetypeinfo", "zone   Normal, type      Movable",
	  "Node    0, zone   Normal, type      Movable 0 0 0 0 0 0 0 0 0 0 -1", "free count" },
	{ "pagetypeinfo", "Node 0, zone   Normal", "Node 0, zone   Normal 242 1891 171 0 0 9",
	  "blocks" },
	{ "pagetypeinfo", "Node 0, zone   Normal", "Node 0, zone   Normal 242 999999 171 0 0",
	  "more pageblocks" },
	{ "zoneinfo", "managed  1179648", "        managed  9179648", "want managed <= present" },
	{ "zoneinfo", "present  782336", "        present  1782336", "want managed <= present" },
	{ "zoneinfo", "managed  1179648", "        managed  -4", "zoneinfo line" },
	{ "zoneinfo", "count:", "              count:    -3", "count" },
	{ "zoneinfo", "count:", "              count:    4294967297", "count" },
	{ "zoneinfo", "cpu:", "    cpu: 4294967296", "cpu" },
	{ "zoneinfo", "min      6675", "        min      9999999", "watermarks" },
	{ "zoneinfo", "start_pfn:           1048576", "  start_pfn:           1099511627000",
	  "start_pfn" },
	{ "zoneinfo", "zone   Normal", "Node 0, zone    DMA32", "zoneinfo line" },
	{ "vmstat", "nr_free_pages", "nr_free_pages -1", "vmstat line" },
	{ "vmstat", "pgfree", "pgfree 18446744073709551615", "pgfree" },
};

/* Fixture text with the first line containing @find replaced by @with. */
static char *mutate(const char *text, const char *find, const char *with)
{
	const char *at = strstr(text, find), *bol, *eol;
	char *out;

	assert_non_null(at);
	for (bol = at; bol > text && bol[-1] != '\n'; bol--)
		;
	eol = strchr(at, '\n');
	out = calloc(1, strlen(text) + strlen(with) + 2);
	assert_non_null(out);
	memcpy(out, text, (size_t)(bol - text));
	strcat(out, with);
	strcat(out, eol ? eol : "\n");
	return out;
}

static void test_snapshot_malformed_files(void **state)
{
	char dir[] = "/tmp/pl-badsnap-XXXXXX", src[4200], last[512];
	char *orig[ARRAY_SIZE(snap_files)];
	struct pl_snapshot *snap = malloc(sizeof(*snap)), *keep = malloc(sizeof(*keep));

	(void)state;
	assert_non_null(snap);
	assert_non_null(keep);
	assert_non_null(mkdtemp(dir));
	for (size_t i = 0; i < ARRAY_SIZE(snap_files); i++) {
		snprintf(src, sizeof(src), "%s/%s", fixture_path("snapshot-6.18"), snap_files[i]);
		orig[i] = slurp_file(src);
		write_file(dir, snap_files[i], orig[i]);
	}
	assert_int_equal(pl_snapshot_read(dir, snap), 0);	/* the fixture itself is good */
	pl_warn_set_quiet(true);
	for (size_t c = 0; c < ARRAY_SIZE(snap_cases); c++) {
		const struct snap_case *k = &snap_cases[c];
		size_t f = 0;
		char *bad;

		while (strcmp(snap_files[f], k->file))
			f++;
		bad = mutate(orig[f], k->find, k->with);
		write_file(dir, k->file, bad);
		memset(snap, 0xa5, sizeof(*snap));
		memcpy(keep, snap, sizeof(*snap));
		if (pl_snapshot_read(dir, snap) != -EINVAL)
			fail_msg("case %zu (%s: %s) was accepted", c, k->file, k->with);
		assert_memory_equal(snap, keep, sizeof(*snap));	/* nothing changed */
		pl_warn_last(last, sizeof(last));
		if (!strstr(last, k->warn) || strchr(last, '\n'))
			fail_msg("case %zu: warning \"%s\" lacks \"%s\"", c, last, k->warn);
		write_file(dir, k->file, orig[f]);
		free(bad);
	}
	pl_warn_set_quiet(false);
	for (size_t i = 0; i < ARRAY_SIZE(snap_files); i++) {
		snprintf(src, sizeof(src), "%s/%s", dir, snap_files[i]);
		unlink(src);
		free(orig[i]);
	}
	rmdir(dir);
	free(snap);
	free(keep);
}

/* What the machine shows: its /proc reports, concatenated. */
static char *reports(struct pl_machine *m)
{
	size_t cap = 1 << 20, n = 0;
	char *buf = malloc(cap);
	long (*show[])(struct pl_machine *, char *, size_t) = {
		pl_show_buddyinfo, pl_show_pagetypeinfo, pl_show_zoneinfo,
	};

	assert_non_null(buf);
	for (size_t i = 0; i < ARRAY_SIZE(show); i++) {
		long got = show[i](m, buf + n, cap - n);

		assert_true(got >= 0 && (size_t)got < cap - n);
		n += (size_t)got;
	}
	return buf;
}

/* A 24 GiB machine's snapshot on a 64 MiB machine: refused, nothing changed. */
static void test_load_state_larger_than_machine(void **state)
{
	struct pl_snapshot *snap = malloc(sizeof(*snap));
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 0);
	char *before, *after, last[512];

	(void)state;
	assert_non_null(snap);
	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), snap), 0);
	before = reports(m);
	pl_warn_set_quiet(true);
	assert_null(pl_machine_load_state(m, snap));
	pl_warn_last(last, sizeof(last));
	if (!strstr(last, "larger machine") && !strstr(last, "no such zone"))
		fail_msg("warning: %s", last);
	assert_null(pl_machine_load_state(NULL, snap));
	assert_null(pl_machine_load_state(m, NULL));
	pl_warn_set_quiet(false);
	after = reports(m);
	assert_string_equal(before, after);
	assert_int_equal(pl_check_machine(m), 0);
	free(before);
	free(after);
	free(snap);
	pl_machine_destroy(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_numbers_out_of_range_are_malformed),
		cmocka_unit_test(test_pressure_edges_parse),
		cmocka_unit_test(test_edges_parse),
		cmocka_unit_test(test_time_gap),
		cmocka_unit_test(test_pcp_busy_memory_by_events),
		cmocka_unit_test(test_snapshot_malformed_files),
		cmocka_unit_test(test_load_state_larger_than_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
