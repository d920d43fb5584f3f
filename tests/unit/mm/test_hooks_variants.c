// SPDX-License-Identifier: MIT
/*
 * test_hooks_variants.c - the entry points' variants (page_alloc_hot.h)
 * change a machine identically: the same random alloc/free sequence runs on
 * a machine with no hook on (the variant without hooks) and on one with a
 * tracepoint sink that only counts (every call takes the variant with
 * hooks), with PCPs and without, alloc_pages_bulk() among the calls; the
 * pages handed out, every event counter, the free lists' counts and every
 * PCP's state must agree. The
 * same for the seed designs whose switches are hooks (mt-counts,
 * pcp-owner, pcp-premerge): alone, their calls take the variant with only
 * the design's tests (PL_HV_DESIGN), with the sink the general one. And
 * m->hooks follows its setters: a hook that is on is never missed.
 */
#include "helpers.h"

#define STEPS 6000

struct outcome {
	unsigned long pfn[STEPS];
	unsigned long events[NR_PL_VM_EVENTS];
	unsigned long nr_free[MAX_NR_ZONES][NR_PAGE_ORDERS];
	long free_pages[MAX_NR_ZONES];
	int pcp[MAX_NR_ZONES][6];
	unsigned long hits;
};

static void count_hit(void *ctx, const struct pl_tp_event *ev)
{
	(void)ev;
	(*(unsigned long *)ctx)++;
}

static void run(const char *design, bool sink, bool with_pcp, uint64_t seed, struct outcome *out)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_ATOMIC,
				      GFP_KERNEL | __GFP_DMA32, GFP_KERNEL | __GFP_ZERO };
	static struct page *live[STEPS];
	static unsigned int live_order[STEPS];
	unsigned long nr_live = 0;
	struct pl_machine *m;
	struct pl_config cfg;
	struct pl_rng rng;
	struct zone *zone;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 0;
	cfg.pcp_disabled = !with_pcp;	/* the buddy's own paths, no PCP in front */
	m = test_machine_config(&cfg, design);
	memset(out, 0, sizeof(*out));
	if (sink) {
		pl_set_tracepoint_sink(m, count_hit, &out->hits);
		assert_true(m->hooks & PL_HOOK_TRACE);
	} else {
		assert_int_equal(m->hooks, strcmp(design, "v6.18") ? PL_HOOK_DESIGN : 0);
	}
	pl_rng_seed(&rng, seed);
	for (int step = 0; step < STEPS; step++) {
		out->pfn[step] = ~0UL;
		if (nr_live + 8 <= STEPS && pl_rng_below(&rng, 40) == 0) {
			/* alloc_pages_bulk(): its variants as alloc_pages()'s */
			struct page *bulk[8] = { NULL };
			unsigned long n = 2 + pl_rng_below(&rng, 7), got;

			got = alloc_pages_bulk(gfps[pl_rng_below(&rng, 3)], n, bulk);
			assert_true(got <= n);
			out->pfn[step] = got;
			for (unsigned long i = 0; i < got; i++) {
				out->pfn[step] = out->pfn[step] * 31 + page_to_pfn(bulk[i]);
				live_order[nr_live] = 0;
				live[nr_live++] = bulk[i];
			}
		} else if (nr_live == 0 || pl_rng_below(&rng, 100) < 52) {
			unsigned int order = pl_rng_below(&rng, 10) ? (unsigned int)pl_rng_below(&rng, 4)
								   : (unsigned int)pl_rng_below(&rng, 11);
			gfp_t gfp = gfps[pl_rng_below(&rng, ARRAY_SIZE(gfps))] | __GFP_NOWARN;
			struct page *page = alloc_pages(gfp, order);

			if (!page)
				continue;
			out->pfn[step] = page_to_pfn(page);
			live_order[nr_live] = order;
			live[nr_live++] = page;
		} else {
			unsigned long i = pl_rng_below(&rng, nr_live);

			/* now and then a free whose PCP trylock "failed", as a replay makes */
			if (pl_rng_below(&rng, 20) == 0)
				assert_int_equal(pl_free_pages_pcp_busy(live[i], live_order[i]), 0);
			else
				assert_int_equal(__free_pages(live[i], live_order[i]), 0);
			live[i] = live[--nr_live];
			live_order[i] = live_order[nr_live];
		}
	}
	/* bad input takes the same way in both */
	assert_null(alloc_pages(GFP_KERNEL | __GFP_NOWARN, MAX_PAGE_ORDER + 1));
	if (nr_live)
		assert_int_equal(__free_pages(live[0], live_order[0] + 1), -EINVAL);
	pl_events_sum(m, out->events);
	for_each_zone(zone, m) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[0];
		int z = zone->zone_idx;

		for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
			out->nr_free[z][o] = zone->free_area[o].nr_free;
		out->free_pages[z] = zone_page_state_snapshot(zone, NR_FREE_PAGES);
		out->pcp[z][0] = pcp->count;
		out->pcp[z][1] = pcp->high;
		out->pcp[z][2] = pcp->free_count;
		out->pcp[z][3] = pcp->alloc_factor;
		out->pcp[z][4] = pcp->flags;
		out->pcp[z][5] = (int)pcp->lock.stat.acquisitions;
	}
	while (nr_live) {
		nr_live--;
		assert_int_equal(__free_pages(live[nr_live], live_order[nr_live]), 0);
	}
	pl_set_tracepoint_sink(m, NULL, NULL);
	test_machine_done(m);
}

static void same_machine_either_way(const char *design)
{
	static struct outcome plain, hooked;

	for (uint64_t seed = 1; seed <= 4; seed++) {
		bool pcp = seed != 4;

		run(design, false, pcp, seed, &plain);
		run(design, true, pcp, seed, &hooked);
		assert_true(hooked.hits > 0);
		assert_memory_equal(plain.pfn, hooked.pfn, sizeof(plain.pfn));
		assert_memory_equal(plain.events, hooked.events, sizeof(plain.events));
		assert_memory_equal(plain.nr_free, hooked.nr_free, sizeof(plain.nr_free));
		assert_memory_equal(plain.free_pages, hooked.free_pages, sizeof(plain.free_pages));
		assert_memory_equal(plain.pcp, hooked.pcp, sizeof(plain.pcp));
	}
}

static void test_same_machine_either_way(void **state)
{
	(void)state;
	same_machine_either_way("v6.18");
}

static void test_designs_same_either_way(void **state)
{
	(void)state;
	same_machine_either_way("mt-counts");
	same_machine_either_way("pcp-owner");
	same_machine_either_way("pcp-premerge");
}

static void test_hooks_follow_their_setters(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 0);
	struct pl_fault_attr attr;
	unsigned long hits = 0;
	struct pl_config cfg;
	struct page *page;

	(void)state;
	assert_int_equal(m->hooks, 0);
	pl_set_tracepoint_sink(m, count_hit, &hits);
	assert_int_equal(m->hooks, PL_HOOK_TRACE);
	page = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(page);
	assert_true(hits > 0);
	hits = 0;
	assert_int_equal(__free_pages(page, 0), 0);
	assert_int_equal(hits, 1);	/* mm_page_free */
	pl_set_tracepoint_sink(m, NULL, NULL);
	assert_int_equal(m->hooks, 0);

	/* an armed fail_page_alloc fails the very next call */
	pl_fault_attr_default(&attr);
	attr.probability = 100;
	attr.times = 1;
	attr.ignore_gfp_reclaim = false;
	attr.min_order = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	assert_int_equal(m->hooks, PL_HOOK_FAULT);
	assert_null(alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0));
	attr.probability = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	assert_int_equal(m->hooks, 0);
	test_machine_done(m);

	m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	assert_int_equal(m->hooks, PL_HOOK_DEBUG);
	test_machine_done(m);
	m = test_machine_cfg(64 * MiB, 16 * MiB, "pcp-owner", 0);
	assert_int_equal(m->hooks, PL_HOOK_DESIGN);
	test_machine_done(m);
	m = test_machine_cfg(64 * MiB, 16 * MiB, "mt-counts", 0);
	assert_int_equal(m->hooks, PL_HOOK_DESIGN);
	test_machine_done(m);

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 0;
	cfg.lock_stat = true;
	m = test_machine_config(&cfg, "v6.18");
	assert_int_equal(m->hooks, PL_HOOK_LOCKSTAT);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_machine_either_way),
		cmocka_unit_test(test_designs_same_either_way),
		cmocka_unit_test(test_hooks_follow_their_setters),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
