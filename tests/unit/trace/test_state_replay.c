// SPDX-License-Identifier: MIT
/*
 * test_state_replay.c - the trace layer's state and replay: the
 * counts-level and positional state loaders (their /proc reports against
 * the snapshot's), onlined sections, replay determinism, pagelab's own tracepoints, and bad input to the replay, each
 * a counted warning. The readers (trace text, snapshots) are in
 * test_trace_parse.c, the vmstat tick in test_vmstat_tick.c.
 */
#include <stdio.h>
#include "helpers.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "trace_fixtures.h"

/* ---- snapshots and state ---------------------------------------------------- */

/* pl_show_buddyinfo()'s counts for zone @name, order by order. */
static void buddyinfo_counts(struct pl_machine *m, const char *name, unsigned long out[11])
{
	char *buf = malloc(1 << 16), *line;
	char pat[64];

	assert_true(pl_show_buddyinfo(m, buf, 1 << 16) > 0);
	snprintf(pat, sizeof(pat), "zone %8s", name);
	line = strstr(buf, pat);
	assert_non_null(line);
	line += strlen(pat);
	for (int o = 0; o < 11; o++)
		out[o] = strtoul(line, &line, 10);
	free(buf);
}

/* The loaded machine's /proc/buddyinfo and pagetypeinfo are the snapshot's. */
static void test_load_state_counts(void **state)
{
	struct pl_snapshot snap;
	struct pl_loaded_state *st;
	struct pl_machine *m = loaded_machine(&snap, &st, "v6.18");
	unsigned long dma[11], dma32[11], normal[11];
	struct zone *zn = &m->node_zones[ZONE_NORMAL];

	(void)state;
	buddyinfo_counts(m, "DMA", dma);
	buddyinfo_counts(m, "DMA32", dma32);
	buddyinfo_counts(m, "Normal", normal);
	for (int o = 0; o < 11; o++) {
		/* each of the kernel's zones is pagelab's zone of that name */
		assert_int_equal(dma[o], snap.zone[0].nr_free[o]);
		assert_int_equal(dma32[o], snap.zone[1].nr_free[o]);
		assert_int_equal(normal[o], snap.zone[2].nr_free[o]);
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
			struct list_head *head = &zn->free_area[o].free_list[mt], *p;
			unsigned long n = 0;

			for (p = head->next; p != head; p = p->next)
				n++;
			assert_int_equal(n, snap.zone[2].free_mt[mt][o]);
		}
	}
	/* pageblock types in the snapshot's proportions (within a pair) */
	{
		unsigned long pb[MIGRATE_TYPES] = { 0 };
		unsigned long nr = zn->spanned_pages >> pageblock_order;

		for (unsigned long i = 0; i < nr; i++)
			pb[zn->pageblock_flags[i] & PB_migratetype_mask]++;
		/* exact but for pair rounding; the slack's pageblocks are Movable */
		assert_true(labs((long)pb[MIGRATE_UNMOVABLE] -
				 (long)snap.zone[2].blocks_mt[MIGRATE_UNMOVABLE]) <= 1);
		assert_true(labs((long)pb[MIGRATE_RECLAIMABLE] -
				 (long)snap.zone[2].blocks_mt[MIGRATE_RECLAIMABLE]) <= 1);
		assert_true(pb[MIGRATE_MOVABLE] >= snap.zone[2].blocks_mt[MIGRATE_MOVABLE]);
	}
	/* lowmem_reserve from the managed pages: zoneinfo's protection lines */
	{
		FILE *f = fopen(fixture_path("snapshot-6.18/zoneinfo"), "r");
		char line[256];
		int zi = 0;

		assert_non_null(f);
		while (fgets(line, sizeof(line), f) && zi < MAX_NR_ZONES) {
			long p[3];

			if (sscanf(line, " protection: (%ld, %ld, %ld", &p[0], &p[1], &p[2]) != 3)
				continue;
			for (int j = 0; j < MAX_NR_ZONES; j++)
				assert_int_equal(m->node_zones[zi].lowmem_reserve[j], p[j]);
			zi++;
		}
		fclose(f);
		assert_int_equal(zi, MAX_NR_ZONES);
	}
	/* PCPs as reported: high (legal below high_min) and count */
	assert_int_equal(zn->per_cpu_pageset[0].high, snap.zone[2].pcp_high[0]);
	assert_int_equal(zn->per_cpu_pageset[1].count, snap.zone[2].pcp_count[1]);
	assert_int_equal(min_wmark_pages(zn), snap.zone[2].wmark[WMARK_MIN]);
	assert_int_equal(pl_check_machine(m), 0);
	pl_state_release(st);
	pl_machine_destroy(m);
}

/* A pcp->high below high_min, as a real kernel shows, is not a checker error. */
static void test_pcp_high_below_min_is_legal(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct zone *z = &m->node_zones[ZONE_NORMAL];

	(void)state;
	assert_int_equal(pl_pcp_set_high_batch(z, 0, z->per_cpu_pageset[0].high_min / 4, 7), 0);
	assert_int_equal(pl_check_machine(m), 0);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_pcp_set_high_batch(z, 5, 10, 1), -EINVAL);
	assert_int_equal(pl_pcp_set_high_batch(z, 0, -1, 1), -EINVAL);
	pl_warn_set_quiet(false);
	test_machine_done(m);
}

/*
 * A section of @m's Normal zone offline and back: pagetypeinfo's walk and
 * nr_pageblocks_mt[] drop its 64 pageblocks and take them back (the
 * checker recounts both); a pfn outside the zone is refused, nothing
 * changed.
 */
static void test_machine_offline_section(struct pl_machine *m)
{
	struct zone *z = &m->node_zones[ZONE_NORMAL];
	unsigned long pfn = zone_end_pfn(z) - PAGES_PER_SECTION, movable;

	movable = z->nr_pageblocks_mt[MIGRATE_MOVABLE];
	assert_int_equal(pl_zone_set_section_online(z, pfn, false), 0);
	assert_int_equal(z->nr_pageblocks_mt[MIGRATE_MOVABLE],
			 movable - PAGES_PER_SECTION / pageblock_nr_pages);
	assert_int_equal(pl_check_machine(m), 0);
	/* again: nothing to change */
	assert_int_equal(pl_zone_set_section_online(z, pfn, false), 0);
	assert_int_equal(z->nr_pageblocks_mt[MIGRATE_MOVABLE],
			 movable - PAGES_PER_SECTION / pageblock_nr_pages);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_zone_set_section_online(z, zone_end_pfn(z), true), -EINVAL);
	assert_int_equal(pl_zone_set_section_online(z, z->zone_start_pfn - 1, true), -EINVAL);
	pl_warn_set_quiet(false);
	assert_int_equal(z->nr_pageblocks_mt[MIGRATE_MOVABLE],
			 movable - PAGES_PER_SECTION / pageblock_nr_pages);
	assert_int_equal(pl_zone_set_section_online(z, pfn, true), 0);
	assert_int_equal(z->nr_pageblocks_mt[MIGRATE_MOVABLE], movable);
	assert_int_equal(pl_check_machine(m), 0);
}

/*
 * Memory hotplug's accounting: onlining grows managed_pages and sets the
 * watermarks and pageset limits again (as the boot set them for that many
 * pages), but leaves each pcp->high; bad input changes nothing.
 */
static void test_online_pages(void **state)
{
	struct pl_machine *m = test_machine_cfg(1024 * MiB, 256 * MiB, "v6.18", 2);
	struct zone *z = &m->node_zones[ZONE_NORMAL];
	unsigned long managed = z->managed_pages, wmark[NR_WMARK];
	int high_min = z->per_cpu_pageset[0].high_min, high_max = z->per_cpu_pageset[0].high_max;
	int set;

	(void)state;
	memcpy(wmark, z->_watermark, sizeof(wmark));
	assert_int_equal(pl_zone_set_managed(z, managed - 32768), 0);
	assert_true(z->per_cpu_pageset[0].high_max < high_max);
	set = z->per_cpu_pageset[0].high_max - 5;
	assert_int_equal(pl_pcp_set_high_batch(z, 0, set, z->per_cpu_pageset[0].batch), 0);
	for (int i = 0; i < 32; i++)
		assert_int_equal(pl_zone_online_pages(z, 1024), 0);
	assert_int_equal(z->managed_pages, managed);
	assert_memory_equal(z->_watermark, wmark, sizeof(wmark));
	assert_int_equal(z->per_cpu_pageset[0].high_min, high_min);
	assert_int_equal(z->per_cpu_pageset[0].high_max, high_max);
	/* pcp->high stays where it was: the next use clamps it */
	assert_int_equal(z->per_cpu_pageset[0].high, set);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_zone_online_pages(z, 0), -EINVAL);
	assert_int_equal(pl_zone_online_pages(z, z->spanned_pages), -EINVAL);
	pl_warn_set_quiet(false);
	assert_int_equal(z->managed_pages, managed);
	assert_int_equal(pl_check_machine(m), 0);
	test_machine_offline_section(m);
	test_machine_done(m);
}

/* ---- replay --------------------------------------------------------------- */

static void replay_fixture(const char *name, struct pl_machine *m, struct pl_loaded_state *st,
			   struct pl_trace_score *score, unsigned long warn[NR_PL_TRACE_WARN])
{
	struct pl_trace_reader *r = pl_trace_open(fixture_path(name));
	struct pl_replay *rp = pl_replay_create(m, st);
	struct pl_trace_event ev;

	assert_non_null(r);
	assert_non_null(rp);
	while (pl_trace_next(r, &ev) > 0)
		pl_replay_event(rp, &ev);
	*score = *pl_replay_score(rp);
	memcpy(warn, pl_replay_warnings(rp), sizeof(unsigned long) * NR_PL_TRACE_WARN);
	pl_replay_destroy(rp, true);
	pl_trace_close(r);
}

static void test_replay_deterministic(void **state)
{
	struct pl_trace_score a, b;
	unsigned long wa[NR_PL_TRACE_WARN], wb[NR_PL_TRACE_WARN];
	unsigned long fa[NR_PAGE_ORDERS], fb[NR_PAGE_ORDERS];
	struct pl_machine *m;

	(void)state;
	pl_warn_set_quiet(true);
	m = test_machine_cfg(256 * MiB, 64 * MiB, "v6.18", 1);
	replay_fixture("ftrace-6.18.txt", m, NULL, &a, wa);
	pl_free_pages_by_order(m, fa);
	assert_true(a.allocs > 10);
	test_machine_done(m);
	m = test_machine_cfg(256 * MiB, 64 * MiB, "v6.18", 1);
	replay_fixture("ftrace-6.18.txt", m, NULL, &b, wb);
	pl_free_pages_by_order(m, fb);
	test_machine_done(m);
	pl_warn_set_quiet(false);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_memory_equal(wa, wb, sizeof(wa));
	assert_memory_equal(fa, fb, sizeof(fa));
	/* pagelab's own refill: an order-0 allocation on an empty PCP */
	assert_true(a.pcp_refills >= 1);
}

static const char bad_events[] =
	"  a-1 [000] ..... 1.000000: mm_page_alloc: page=x pfn=0x100 order=0 migratetype=1 gfp_flags=GFP_KERNEL\n"
	"  a-1 [007] ..... 1.000001: mm_page_alloc: page=x pfn=0x101 order=0 migratetype=1 gfp_flags=GFP_KERNEL\n"
	"  a-1 [000] ..... 1.000002: mm_page_free: page=x pfn=0x5555 order=0\n"
	"  a-1 [000] ..... 1.000003: mm_page_alloc: page=x pfn=0x7fffffff order=0 migratetype=0 gfp_flags=GFP_KERNEL\n"
	"  a-1 [001] ..... 1.000004: mm_page_alloc: page=x pfn=0x200 order=3 migratetype=0 gfp_flags=GFP_KERNEL\n"
	"  a-1 [001] ..... 1.000005: mm_page_free: page=x pfn=0x202 order=1\n"
	"  a-1 [000] ..... 3.500000: mm_page_free: page=x pfn=0x100 order=0\n"
	"  a-1 [000] ..... 3.500001: mm_page_alloc: page=x pfn=0x300 order=0 migratetype=2 gfp_flags=GFP_KERNEL\n"
	"  a-1 [000] ..... 3.500002: mm_page_alloc: page=x pfn=0x300 order=0 migratetype=2 gfp_flags=GFP_KERNEL\n";

/* Bad input to a replay: each a counted warning, the machine consistent. */
static void test_replay_bad_input(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	struct pl_trace_reader *r = pl_trace_open_mem(bad_events, sizeof(bad_events) - 1);
	struct pl_replay *rp = pl_replay_create(m, NULL);
	struct pl_trace_event ev;
	const unsigned long *w;
	unsigned long free_before;

	(void)state;
	assert_int_equal(m->nr_cpus, 1);
	pl_leave();
	{
		/* two vCPUs for this test */
		struct pl_config cfg = m->config;

		pl_replay_destroy(rp, true);
		pl_machine_destroy(m);
		cfg.nr_cpus = 2;
		m = pl_machine_create(&cfg);
		assert_non_null(m);
		rp = pl_replay_create(m, NULL);
	}
	pl_replay_set_pfn_limit(rp, 0x100000);
	free_before = pl_nr_free_pages(m);
	pl_warn_set_quiet(true);
	while (pl_trace_next(r, &ev) > 0)
		pl_replay_event(rp, &ev);
	pl_warn_set_quiet(false);
	w = pl_replay_warnings(rp);
	assert_int_equal(w[PL_TW_cpu_out_of_range], 1);
	assert_int_equal(w[PL_TW_free_unallocated], 1);
	assert_int_equal(w[PL_TW_pfn_out_of_range], 1);
	assert_int_equal(w[PL_TW_realloc_unfreed], 1);
	/*
	 * pagelab's frees: the partial free split the order-3 block and freed
	 * 2 of its 8 pages, then pfn 0x100, then the unfreed 0x300 before its
	 * second allocation
	 */
	assert_int_equal(pl_replay_score(rp)->frees, 4);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);
	pl_enter(m, 0);
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m), free_before);
	pl_trace_close(r);
	test_machine_done(m);
}

/* A loaded state gives frees of pre-trace pages something to free. */
static void test_replay_pretrace_free(void **state)
{
	static const char text[] =
		"  a-1 [000] ..... 1.0: mm_page_free: page=x pfn=0x123456 order=0\n"
		"  a-1 [001] ..... 1.1: mm_page_free: page=x pfn=0x123460 order=2\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	unsigned long before;

	(void)state;
	loaded_replay_start(&lr, text, sizeof(text) - 1);
	before = pl_nr_free_pages(lr.m);
	while (pl_trace_next(lr.r, &ev) > 0)
		assert_int_equal(pl_replay_event(lr.rp, &ev), 0);
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_free_unallocated], 0);
	pl_enter(lr.m, 0);
	drain_all_pages(NULL);
	assert_true(pl_nr_free_pages(lr.m) >= before + 5);
	loaded_replay_end(&lr);
}

/*
 * A block the trace frees twice with no traced allocation between was
 * taken again without an mm_page_alloc event: the second free gives back
 * nothing of the loaded state's (a counted "refreed"), while a free of a
 * block the trace never showed before still does.
 */
static void test_replay_refreed(void **state)
{
	static const char text[] =
		"  a-1 [000] ..... 1.0: mm_page_alloc: page=x pfn=0x123450 order=1 migratetype=0 gfp_flags=GFP_KERNEL\n"
		"  a-1 [000] ..... 1.1: mm_page_free: page=x pfn=0x123450 order=1\n"
		"  a-1 [000] ..... 1.2: mm_page_free: page=x pfn=0x123450 order=1\n"
		"  a-1 [000] ..... 1.3: mm_page_free: page=x pfn=0x123451 order=0\n"
		"  a-1 [000] ..... 1.4: mm_page_free: page=x pfn=0x123470 order=0\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	unsigned long before;

	(void)state;
	loaded_replay_start_drained(&lr, text, sizeof(text) - 1);
	before = pl_nr_free_pages(lr.m);
	pl_warn_set_quiet(true);
	while (pl_trace_next(lr.r, &ev) > 0)
		pl_replay_event(lr.rp, &ev);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_refreed], 2);
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_free_unallocated], 0);
	pl_enter(lr.m, 0);
	drain_all_pages(NULL);
	/* only the never-seen pfn 0x123470 took a page of the loaded state */
	assert_int_equal(pl_nr_free_pages(lr.m), before + 1);
	loaded_replay_end(&lr);
}

/*
 * A drain on one CPU of a page another CPU's PCP holds is the kernel's
 * drain_all_pages() (it drains every CPU's PCP from the caller's): the
 * replay does one of its own, once per drain run. A drain of the CPU's own
 * page is not one.
 */
static void test_replay_remote_drain(void **state)
{
	static const char text[] =
		"  a-1 [001] ..... 1.0: mm_page_alloc: page=x pfn=0x123460 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  a-1 [001] ..... 1.1: mm_page_free: page=x pfn=0x123460 order=0\n"
		"  b-2 [000] ..... 1.2: mm_page_alloc: page=x pfn=0x123462 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  b-2 [000] ..... 1.3: mm_page_free: page=x pfn=0x123462 order=0\n"
		"  b-2 [000] ..... 1.4: mm_page_pcpu_drain: page=x pfn=0x123462 order=0 migratetype=1\n"
		"  b-2 [000] ..... 1.5: mm_page_free: page=x pfn=0x123470 order=0\n"
		"  b-2 [000] ..... 1.6: mm_page_pcpu_drain: page=x pfn=0x123460 order=0 migratetype=1\n"
		"  b-2 [000] ..... 1.6: mm_page_pcpu_drain: page=x pfn=0x123470 order=0 migratetype=1\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	int n = 0;

	(void)state;
	loaded_replay_start_drained(&lr, text, sizeof(text) - 1);
	pl_warn_set_quiet(true);
	while (pl_trace_next(lr.r, &ev) > 0) {
		pl_replay_event(lr.rp, &ev);
		if (++n == 5) {
			/* CPU 0 drained its own page: CPU 1's PCP still holds one */
			assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_drain_all_replayed], 0);
			assert_true(pcp_pages(lr.m, 1) > 0);
		}
	}
	pl_warn_set_quiet(false);
	/* CPU 0 drained CPU 1's page: every PCP emptied, once for the run */
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_drain_all_replayed], 1);
	assert_int_equal(pcp_pages(lr.m, 0), 0);
	assert_int_equal(pcp_pages(lr.m, 1), 0);
	loaded_replay_end(&lr);
}

/*
 * free_vmap_area_noflush's nr_lazy is the kernel's vmap_lazy_nr: the
 * replay stands in for the kernel's lazy backlog from before the trace and
 * for areas allocated before it, so pagelab purges where the kernel did
 * (lazy_max_pages() is 8192 pages at one CPU).
 */
static void test_replay_lazy_backlog(void **state)
{
	static const char text[] =
		"  a-1 [000] ..... 1.0: free_vmap_area_noflush: va_start=0xffffc90001300000 nr_lazy=8180 nr_lazy_max=8192\n"
		"  a-1 [000] ..... 1.1: free_vmap_area_noflush: va_start=0xffffc90001320000 nr_lazy=8185 nr_lazy_max=8192\n"
		"  a-1 [000] ..... 1.2: alloc_vmap_area: va_start: 18446683600596795392 size=20480 align=16384 "
		"vstart=0xffffc90000000000 vend=0xffffe8ffffffffff failed=0\n"
		"  a-1 [000] ..... 1.3: free_vmap_area_noflush: va_start=18446683600596795392 nr_lazy=8190 nr_lazy_max=8192\n"
		"  a-1 [000] ..... 1.4: alloc_vmap_area: va_start: 18446683600596762624 size=20480 align=16384 "
		"vstart=0xffffc90000000000 vend=0xffffe8ffffffffff failed=0\n"
		"  a-1 [000] ..... 1.5: free_vmap_area_noflush: va_start=18446683600596762624 nr_lazy=8195 nr_lazy_max=8192\n";
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_replay *rp = pl_replay_create(m, NULL);
	struct pl_trace_event ev;
	unsigned long ev_sum[NR_PL_VM_EVENTS];
	struct pl_vmalloc_stats vst;
	struct snapshot before;
	int n = 0;

	(void)state;
	drain_all_pages(NULL);
	take_snapshot(m, &before);
	while (pl_trace_next(r, &ev) > 0) {
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		pl_events_sum(m, ev_sum);
		/* no purge until the kernel's counter passed lazy_max_pages() */
		if (++n < 6)
			assert_int_equal(ev_sum[PL_EV_VMAP_PURGE], 0);
		/*
		 * A traced area maps nothing: its page-table pages are the
		 * trace's own mm_page_alloc events, not pagelab's to make again.
		 */
		pl_vmalloc_stats(m, &vst);
		assert_int_equal(vst.pgtable_pages, 0);
	}
	pl_events_sum(m, ev_sum);
	assert_int_equal(ev_sum[PL_EV_VMAP_PURGE], 1);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);	/* gives back the areas' bulk pages */
	pl_enter(m, 0);
	drain_all_pages(NULL);
	/* every page back (the bulk pages' GFP_KERNEL claimed a block: not byte-equal) */
	assert_int_equal(pl_nr_free_pages(m), before.free_pages);
	assert_int_equal(pl_check_machine(m), 0);
	pl_trace_close(r);
	test_machine_done(m);
}

/*
 * A vmalloc'ed area takes its pages (less the guard) in bulk with no event;
 * vfree()'s traced frees after the area's free give them back (not
 * "refreed"); an area whose pages no free gives back returns them when
 * another kind of event comes on its CPU.
 */
static void test_replay_vmalloc_bulk(void **state)
{
	static const char text[] =
		"  a-1 [000] ..... 1.0: mm_page_alloc: page=x pfn=0x1000 order=2 migratetype=0 gfp_flags=GFP_KERNEL\n"
		"  a-1 [000] ..... 1.1: mm_page_free: page=x pfn=0x1000 order=2\n"
		"  a-1 [000] ..... 1.2: alloc_vmap_area: va_start: 18446683600596795392 size=20480 align=16384 "
		"vstart=0xffffc90000000000 vend=0xffffe8ffffffffff failed=0\n"
		"  a-1 [000] ..... 1.3: free_vmap_area_noflush: va_start=18446683600596795392 nr_lazy=5 nr_lazy_max=8192\n"
		"  a-1 [000] ..... 1.4: mm_page_free: page=x pfn=0x1000 order=0\n"
		"  a-1 [000] ..... 1.5: mm_page_free: page=x pfn=0x1001 order=0\n"
		"  a-1 [000] ..... 1.6: mm_page_free: page=x pfn=0x1002 order=0\n"
		"  a-1 [000] ..... 1.7: mm_page_free: page=x pfn=0x1003 order=0\n"
		"  a-1 [000] ..... 1.8: alloc_vmap_area: va_start: 18446683600596762624 size=20480 align=16384 "
		"vstart=0xffffc90000000000 vend=0xffffe8ffffffffff failed=0\n"
		"  a-1 [000] ..... 1.9: free_vmap_area_noflush: va_start=18446683600596762624 nr_lazy=10 nr_lazy_max=8192\n"
		"  a-1 [000] ..... 2.0: mm_page_alloc: page=x pfn=0x2000 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n"
		"  a-1 [000] ..... 2.1: mm_page_free: page=x pfn=0x2000 order=0\n";
	/* pages taken (bulk, traced blocks) after each event */
	static const long held[] = { 4, 0, 4, 4, 3, 2, 1, 0, 4, 4, 1, 0 };
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_replay *rp = pl_replay_create(m, NULL);
	struct pl_trace_event ev;
	unsigned long before;
	int n = 0;

	(void)state;
	pl_enter(m, 0);
	drain_all_pages(NULL);
	before = pl_nr_free_pages(m);
	while (pl_trace_next(r, &ev) > 0) {
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		pl_enter(m, 0);
		drain_all_pages(NULL);
		assert_int_equal(before - pl_nr_free_pages(m), held[n]);
		n++;
	}
	assert_int_equal(n, 12);
	for (int w = 0; w < NR_PL_TRACE_WARN; w++)
		assert_int_equal(pl_replay_warnings(rp)[w], 0);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);
	pl_trace_close(r);
	test_machine_done(m);
}

/* Positional: each sighted block where the trace saw it at the start. */
/*
 * The "Number of blocks type" row of @zone in pl_show_pagetypeinfo(), summed
 * over the migratetypes; -1 if the row is missing.
 */
static long pagetypeinfo_blocks(struct pl_machine *m, const char *zone)
{
	static char buf[1 << 16];
	long n = -1;
	char *p;

	assert_true(pl_show_pagetypeinfo(m, buf, sizeof(buf)) > 0);
	p = strstr(buf, "Number of blocks type");
	assert_non_null(p);
	while ((p = strchr(p, '\n')) && *++p) {
		char name[16];
		unsigned long c[MIGRATE_TYPES];

		if (sscanf(p, "Node 0, zone %15s %lu %lu %lu %lu %lu", name, &c[0], &c[1], &c[2],
			   &c[3], &c[4]) == 6 && !strcmp(name, zone)) {
			n = 0;
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				n += (long)c[mt];
		}
	}
	return n;
}

static void test_load_state_positional(void **state)
{
	static const char text[] =
		"  a-1 [000] d..2. 1.0: mm_page_alloc_zone_locked: page=x pfn=0x150000 order=0 migratetype=1 percpu_refill=1\n"
		"  a-1 [000] ..... 1.1: mm_page_alloc: page=x pfn=0x150000 order=0 migratetype=1 gfp_flags=GFP_KERNEL\n"
		"  a-1 [001] ..... 1.2: mm_page_alloc: page=x pfn=0x160001 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n"
		"  a-1 [000] ..... 1.3: mm_page_free: page=x pfn=0x170004 order=2\n"
		"  a-1 [000] ..... 1.4: mm_page_free: page=x pfn=0x170005 order=0\n"
		/* hotplug onlines memory the snapshot did not count online */
		"  a-1 [000] ..... 1.45: mm_page_free: page=x pfn=0x300000 order=10\n"
		/*
		 * CPU 1 drains one order-0 Unmovable page and moves on to the
		 * order-3 Movable list: the first list was empty then, the second
		 * was not (zoneinfo reports 8115 pages on CPU 1)
		 */
		"  a-1 [001] d..2. 1.5: mm_page_pcpu_drain: page=x pfn=0x161000 order=0 migratetype=0\n"
		"  a-1 [001] d..2. 1.5: mm_page_pcpu_drain: page=x pfn=0x162000 order=3 migratetype=1\n";
	struct pl_positional pos = { 0 };
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_trace_event ev;
	struct pl_snapshot snap;
	struct pl_machine *m;
	struct pl_loaded_state *st;
	struct pl_replay *rp;
	struct per_cpu_pages *pcp;
	const unsigned long *pfn;
	const unsigned char *order;
	unsigned long managed, wmark_high, end;
	long nblocks[MAX_NR_ZONES] = { 0 };
	struct page *page;

	(void)state;
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(&pos, &ev), 0);
	pl_trace_close(r);
	/* six first sightings; the order-0 free inside the order-2 block is not one */
	assert_int_equal(pos.nr, 6);
	assert_int_equal(pos.by_kind[PL_SEEN_FREE], 1);
	assert_int_equal(pos.by_kind[PL_SEEN_PCP], 3);
	assert_int_equal(pos.by_kind[PL_SEEN_ALLOCATED], 2);
	/* the refill shows CPU 0's order-0 Movable list empty, the drain run CPU 1's Unmovable one */
	assert_int_equal(pos.pcp_emptied[0], 1u << order_to_pindex(MIGRATE_MOVABLE, 0));
	assert_int_equal(pos.pcp_emptied[1], 1u << order_to_pindex(MIGRATE_UNMOVABLE, 0));
	assert_int_equal(pos.pcp_seen[1][order_to_pindex(MIGRATE_UNMOVABLE, 0)], 2);
	assert_int_equal(pos.pcp_seen[1][order_to_pindex(MIGRATE_MOVABLE, 3)], 8);

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	m = positional_machine(&snap, &pos, &st);
	/* free at the start: inside a free buddy block */
	page = m->mem_map + 0x150000;
	assert_int_equal(page_ref_count(page), 0);
	/* on CPU 1's PCP: free, not in the buddy */
	page = m->mem_map + 0x160001;
	assert_int_equal(page_ref_count(page), 0);
	assert_false(PageBuddy(page));
	/*
	 * The rest of zoneinfo's 8115 pages on CPU 1, which no event shows,
	 * sat on the one list with sightings the trace never shows empty (the
	 * order-3 Movable one: 1013 blocks); the emptied list holds only its
	 * two sighted pages. CPU 0, with no PCP sighting, keeps zoneinfo's
	 * count (46316, up to pcp->high) on a list not shown empty (order-0
	 * Unmovable: its order-0 Movable list was refilled).
	 */
	pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[1];
	assert_int_equal(pcp->count, 2 + 8 + 1013 * 8);
	assert_int_equal(pcp_list_len(pcp, order_to_pindex(MIGRATE_UNMOVABLE, 0)), 2);
	assert_int_equal(pcp_list_len(pcp, order_to_pindex(MIGRATE_MOVABLE, 3)), 1 + 1013);
	pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[0];
	assert_true(pcp->count > 1000);
	assert_int_equal(pcp_list_len(pcp, order_to_pindex(MIGRATE_UNMOVABLE, 0)), pcp->count);
	/* allocated with order 2, handed to the replay at its own pfn */
	assert_int_equal(pl_state_pretrace(st, &pfn, &order), 2);
	assert_int_equal(pfn[0], 0x170004);
	assert_int_equal(order[0], 2);
	assert_int_equal(pfn[1], 0x300000);
	assert_int_equal(order[1], MAX_PAGE_ORDER);
	assert_int_equal(page_ref_count(m->mem_map + 0x170004), 1);
	assert_int_equal(pl_check_machine(m), 0);
	/*
	 * pagetypeinfo counts the online pageblocks only, as the snapshot's
	 * does: memory it counted offline is in pagelab's zone (the trace may
	 * online it) but not in the report. Each kernel zone is pagelab's of its name.
	 */
	for (int i = 0; i < snap.nr_zones; i++) {
		const char *name = snap.zone[i].name;
		int zi = !strcmp(name, "DMA") ? ZONE_DMA : !strcmp(name, "DMA32") ? ZONE_DMA32 : ZONE_NORMAL;

		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			nblocks[zi] += (long)snap.zone[i].blocks_mt[mt];
	}
	assert_int_equal(pagetypeinfo_blocks(m, "Normal"), nblocks[ZONE_NORMAL]);
	assert_int_equal(pagetypeinfo_blocks(m, "DMA32"), nblocks[ZONE_DMA32]);
	assert_int_equal(pagetypeinfo_blocks(m, "DMA"), nblocks[ZONE_DMA]);
	assert_true(m->node_zones[ZONE_NORMAL].spanned_pages >> pageblock_order >
		    (unsigned long)nblocks[ZONE_NORMAL]);
	rp = pl_replay_create(m, st);
	ev = (struct pl_trace_event){ .type = PL_TRACE_PAGE_FREE, .pfn = 0x170004, .order = 2 };
	assert_int_equal(pl_replay_event(rp, &ev), 0);
	assert_int_equal(page_ref_count(m->mem_map + 0x170004), 0);
	/*
	 * The onlining free grows Normal's managed pages and its watermarks,
	 * once: the block freed again (nothing allocated it) is a refree.
	 */
	managed = m->node_zones[ZONE_NORMAL].managed_pages;
	wmark_high = m->node_zones[ZONE_NORMAL]._watermark[WMARK_HIGH];
	ev = (struct pl_trace_event){ .type = PL_TRACE_PAGE_FREE, .pfn = 0x300000, .order = 10 };
	assert_int_equal(pl_replay_event(rp, &ev), 0);
	assert_int_equal(m->node_zones[ZONE_NORMAL].managed_pages, managed + 1024);
	assert_true(m->node_zones[ZONE_NORMAL]._watermark[WMARK_HIGH] > wmark_high);
	/*
	 * Its whole 128 MiB section came online: the pageblocks of the zone
	 * in it count now (the zone ends inside it, after this block).
	 */
	end = min(0x300000 + PAGES_PER_SECTION, zone_end_pfn(&m->node_zones[ZONE_NORMAL]));
	assert_true(end >= 0x300400);
	assert_int_equal(pagetypeinfo_blocks(m, "Normal"),
			 nblocks[ZONE_NORMAL] + (long)((end - 0x300000) >> pageblock_order));
	assert_int_equal(pl_check_machine(m), 0);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_replay_event(rp, &ev), PL_TW_refreed + 1);
	pl_warn_set_quiet(false);
	assert_int_equal(m->node_zones[ZONE_NORMAL].managed_pages, managed + 1024);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);
	pl_state_release(st);
	pl_positional_release(&pos);
	pl_machine_destroy(m);
}

/* Is the page at @pfn on the list @pindex of @pcp? */
static bool on_pcp_list(struct pl_machine *m, struct per_cpu_pages *pcp, unsigned int pindex,
			unsigned long pfn)
{
	for (struct list_head *p = pcp->lists[pindex].next; p != &pcp->lists[pindex]; p = p->next)
		if (list_entry(p, struct page, pcp_list) == m->mem_map + pfn)
			return true;
	return false;
}

/*
 * A trace that touches every 1024-page region leaves no untouched memory
 * for the snapshot's free blocks, which then go anywhere held. A page the
 * trace shows taken off CPU 0's PCP was on that PCP at the start, so no
 * free block may take it first: each lands on the list it was allocated
 * from (gitlog, a 15 s trace on a VM 76% free: 10.9 k such pages went into
 * free blocks, and the replay refilled the PCPs 15 k pages more).
 */
static void test_positional_pcp_sightings_kept(void **state)
{
	enum { REGIONS = 2304 / 2 };	/* snapshot-6.18's online Normal pageblocks, in pairs */
	char *text = malloc(REGIONS * 128);
	unsigned int pindex = order_to_pindex(MIGRATE_MOVABLE, 0);
	struct pl_positional pos = { 0 };
	struct pl_trace_reader *r;
	struct pl_trace_event ev;
	struct pl_snapshot snap;
	struct pl_loaded_state *st;
	struct per_cpu_pages *pcp;
	struct pl_machine *m;
	size_t n = 0;

	(void)state;
	assert_non_null(text);
	for (unsigned int i = 0; i < REGIONS; i++)
		n += (size_t)snprintf(text + n, 128, "  a-1 [000] ..... 1.%04u: mm_page_alloc: page=x "
				      "pfn=%#lx order=0 migratetype=1 gfp_flags=GFP_KERNEL\n", i,
				      0x100000UL + i * 1024UL + 517);
	r = pl_trace_open_mem(text, n);
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(&pos, &ev), 0);
	pl_trace_close(r);
	assert_int_equal(pos.by_kind[PL_SEEN_PCP], REGIONS);

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	m = positional_machine(&snap, &pos, &st);
	pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[0];
	for (unsigned int i = 0; i < REGIONS; i++)
		assert_true(on_pcp_list(m, pcp, pindex, 0x100000UL + i * 1024UL + 517));
	assert_int_equal(pl_check_machine(m), 0);
	pl_state_release(st);
	pl_positional_release(&pos);
	pl_machine_destroy(m);
	free(text);
}

/*
 * Positional pageblock types: a pageblock's type comes
 * from the first event that states it exactly, however late in the trace
 * (zone_locked: the free list's type; pcpu_drain: the pageblock's type at
 * the drain; extfrag: the type before the claim), not only from first
 * sightings (a free says nothing); the snapshot's counts hold exactly for
 * the online pageblocks; pageblocks beyond the online memory
 * (snapshot-6.18's Normal zone has 2304 pageblocks online from pfn
 * 0x100000, so up to 0x220000) are Movable, as hotplug onlines them.
 */
static void test_positional_pageblock_types(void **state)
{
	static const char text[] =
		/* first sighted freed, drained later from an Unmovable pageblock */
		"  a-1 [000] d..2. 1.0: mm_page_free: page=x pfn=0x150004 order=2\n"
		"  a-1 [000] d..2. 1.1: mm_page_pcpu_drain: page=x pfn=0x150004 order=2 migratetype=0\n"
		/* freed, then taken off the Reclaimable free list */
		"  a-1 [000] d..2. 1.2: mm_page_free: page=x pfn=0x158000 order=0\n"
		"  a-1 [000] d..2. 1.3: mm_page_alloc_zone_locked: page=x pfn=0x158000 order=0 migratetype=2 percpu_refill=1\n"
		/* an order-10 Reclaimable block claimed for Unmovable */
		"  a-1 [000] d..2. 1.4: mm_page_alloc_extfrag: page=x pfn=0x15a000 alloc_order=0 fallback_order=10 "
		"pageblock_order=9 alloc_migratetype=0 fallback_migratetype=2 fragmenting=0 change_ownership=1\n"
		"  a-1 [000] ..... 1.41: mm_page_alloc: page=x pfn=0x15a000 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n"
		/* two pages of a Movable order-10 block a refill cut into; the rest never seen */
		"  a-1 [000] d..2. 1.42: mm_page_alloc_zone_locked: page=x pfn=0x160000 order=0 migratetype=1 percpu_refill=1\n"
		"  a-1 [000] d..2. 1.43: mm_page_alloc_zone_locked: page=x pfn=0x1603ff order=0 migratetype=1 percpu_refill=1\n"
		/* hotplug onlining an order-10 block of memory offline at the snapshot */
		"  a-1 [001] d..1. 1.5: mm_page_free: page=x pfn=0x230000 order=10\n";
	struct pl_positional pos = { 0 };
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_trace_event ev;
	struct pl_snapshot snap;
	struct pl_machine *m;
	struct pl_loaded_state *st;
	struct zone *zone;
	unsigned long online[MIGRATE_TYPES] = { 0 }, offline_other = 0;

	(void)state;
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(&pos, &ev), 0);
	pl_trace_close(r);
	assert_int_equal(pos.pb_exact, 6);
	/* the claimed order-10 block was free at the start: a sighting, not the alloc after */
	assert_int_equal(pos.by_kind[PL_SEEN_FREE], 3);
	assert_int_equal(pos.by_kind[PL_SEEN_PCP], 0);
	assert_int_equal(pos.pb_type[0x150000 >> pageblock_order], MIGRATE_UNMOVABLE);
	assert_int_equal(pos.pb_type[0x158000 >> pageblock_order], MIGRATE_RECLAIMABLE);
	assert_int_equal(pos.pb_type[0x15a200 >> pageblock_order], MIGRATE_RECLAIMABLE);

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	m = positional_machine(&snap, &pos, &st);
	pl_enter(m, 0);
	assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x150004), MIGRATE_UNMOVABLE);
	assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x158000), MIGRATE_RECLAIMABLE);
	assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x15a000), MIGRATE_RECLAIMABLE);
	assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x15a200), MIGRATE_RECLAIMABLE);
	assert_true(PageBuddy(m->mem_map + 0x15a000));
	assert_int_equal(buddy_order(m->mem_map + 0x15a000), MAX_PAGE_ORDER);
	/*
	 * The snapshot has Movable order-10 blocks to place: the region the
	 * refill's pieces came from is one of them (the unseen rest was free).
	 */
	assert_true(PageBuddy(m->mem_map + 0x160000));
	assert_int_equal(buddy_order(m->mem_map + 0x160000), MAX_PAGE_ORDER);
	zone = &m->node_zones[ZONE_NORMAL];
	assert_int_equal(zone->zone_start_pfn, 0x100000);
	for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone);
	     pfn += pageblock_nr_pages) {
		int mt = get_pageblock_migratetype(m->mem_map + pfn);

		if (pfn < 0x220000)
			online[mt]++;
		else
			offline_other += mt != MIGRATE_MOVABLE;
	}
	/* the snapshot's "Number of blocks type" for Normal, exactly */
	assert_int_equal(online[MIGRATE_UNMOVABLE], 242);
	assert_int_equal(online[MIGRATE_MOVABLE], 1891);
	assert_int_equal(online[MIGRATE_RECLAIMABLE], 171);
	assert_int_equal(offline_other, 0);
	assert_int_equal(pl_check_machine(m), 0);
	pl_state_release(st);
	pl_positional_release(&pos);
	pl_machine_destroy(m);
}

/* pagelab's tracepoints printed as ftrace text parse back to the same events. */
static void test_emit_roundtrip(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct pl_replay *rp = pl_replay_create(m, NULL);
	struct pl_trace_event ev = { .type = PL_TRACE_PAGE_ALLOC, .pfn = 0x42, .order = 0,
				     .migratetype = MIGRATE_MOVABLE, .gfp = GFP_KERNEL };
	struct pl_trace_score rescored;
	struct pl_trace_reader *r;

	(void)state;
	pl_replay_set_emit(rp, f);
	assert_int_equal(pl_replay_event(rp, &ev), 0);
	ev.type = PL_TRACE_PAGE_FREE;
	assert_int_equal(pl_replay_event(rp, &ev), 0);
	fclose(f);
	assert_non_null(strstr(buf, "mm_page_alloc_zone_locked: "));
	assert_non_null(strstr(buf, "percpu_refill=1"));
	r = pl_trace_open_mem(buf, len);
	pl_trace_score_init(&rescored);
	while (pl_trace_next(r, &ev) > 0)
		pl_trace_score_event(&rescored, &ev);
	assert_int_equal(pl_trace_get_stats(r)->warn[PL_TW_malformed_line], 0);
	assert_int_equal(rescored.pcp_refills, pl_replay_score(rp)->pcp_refills);
	assert_int_equal(rescored.pcp_refill_pages, pl_replay_score(rp)->pcp_refill_pages);
	assert_int_equal(rescored.allocs, 1);
	assert_int_equal(rescored.frees, 1);
	pl_trace_close(r);
	pl_replay_destroy(rp, true);
	free(buf);
	test_machine_done(m);
}

/* The new mm counters: drain calls, fallback events, direct buddy paths. */
static void test_mm_counters(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	unsigned long ev[NR_PL_VM_EVENTS];
	struct page *p[64], *big;

	(void)state;
	for (int i = 0; i < 64; i++)
		p[i] = alloc_page(GFP_KERNEL | __GFP_MOVABLE);
	for (int i = 0; i < 64; i++)
		__free_page(p[i]);
	drain_local_pages(NULL);
	big = alloc_pages(GFP_KERNEL, 5);	/* not a PCP order: rmqueue_buddy */
	assert_non_null(big);
	__free_pages(big, 5);			/* free_one_page */
	big = alloc_page(GFP_KERNEL);		/* unmovable from a movable machine: a fallback */
	__free_page(big);
	pl_events_sum(m, ev);
	assert_true(ev[PL_EV_PCP_DRAIN_CALLS] >= 1);
	assert_int_equal(ev[PL_EV_BUDDY_DIRECT_ALLOC], 1);
	assert_int_equal(ev[PL_EV_BUDDY_DIRECT_FREE], 1);
	assert_true(ev[PL_EV_FALLBACK_EVENTS] >= 1);
	assert_true(ev[PL_EV_FALLBACK_CHANGE_OWNERSHIP] >= 1);
	assert_true(ev[PL_EV_FALLBACK_EVENTS] >= ev[PL_EV_FALLBACK_FRAGMENTING]);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_state_counts),
		cmocka_unit_test(test_pcp_high_below_min_is_legal),
		cmocka_unit_test(test_online_pages),
		cmocka_unit_test(test_replay_refreed),
		cmocka_unit_test(test_replay_remote_drain),
		cmocka_unit_test(test_replay_vmalloc_bulk),
		cmocka_unit_test(test_replay_lazy_backlog),
		cmocka_unit_test(test_load_state_positional),
		cmocka_unit_test(test_positional_pageblock_types),
		cmocka_unit_test(test_positional_pcp_sightings_kept),
		cmocka_unit_test(test_replay_deterministic),
		cmocka_unit_test(test_replay_bad_input),
		cmocka_unit_test(test_replay_pretrace_free),
		cmocka_unit_test(test_emit_roundtrip),
		cmocka_unit_test(test_mm_counters),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
