// SPDX-License-Identifier: MIT
/*
 * test_pcp_designs.c - the designs seed 003's reviewers asked about
 * (pagelab's own switches): pcp_premerge merges buddies on one PCP under
 * pcp->lock before a drain takes zone->lock, and says why a lookup failed;
 * targeted_drain lets an allocation succeed by draining only the CPU that
 * holds what it needs; pcp_block_economy moves only whole pageblocks under
 * zone->lock (adopting a partly free unowned block whole when the zone has no
 * free one), steals a block from another CPU when the zone has none, counts
 * PCP-held pages for the watermarks, and gives owned blocks back to
 * isolation so alloc_contig_range() still succeeds; economy_batch takes
 * and gives back several whole blocks per zone->lock hold; economy_ramp's
 * refills double what the last one took, never past pcp->high - batch;
 * pcp_premerge beside the economy leaves it as it is.
 */
#include "helpers.h"
#include "mm/internal.h"

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

static struct pl_machine *cpus_machine(const char *design, unsigned int nr_cpus)
{
	struct pl_config cfg;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = nr_cpus;
	cfg.debug = 1;
	return test_machine_config(&cfg, design);
}

struct merges {
	unsigned long pcp, zone, zone_lock_pages;
};

/* Allocate @n pages on CPU 0, free them there, drain: count the merges. */
static struct merges alloc_free_drain(const char *design, unsigned int n)
{
	struct pl_machine *m = cpus_machine(design, 1);
	struct page *pages[256];
	struct merges r;

	assert_true(n <= 256);
	for (unsigned int i = 0; i < n; i++)
		assert_non_null(pages[i] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0));
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_int_equal(pl_check_machine(m), 0);	/* the tags agree with the lists */
	drain_all_pages(NULL);
	r.pcp = event(m, PL_EV_PCP_MERGE);
	r.zone = event(m, PL_EV_BUDDY_MERGE);
	r.zone_lock_pages = event(m, PL_EV_ZONE_LOCK_PAGES);
	assert_fully_coalesced(m);
	test_machine_done(m);
	return r;
}

static void test_premerge_moves_merges_out_of_zone_lock(void **state)
{
	struct merges base = alloc_free_drain("v6.18", 200);
	struct merges pre = alloc_free_drain("pcp-premerge", 200);

	(void)state;
	assert_int_equal(base.pcp, 0);
	assert_true(pre.pcp > 0);
	/* The same blocks end up coalesced: the merges only change lock. */
	assert_int_equal(pre.pcp + pre.zone, base.zone);
	assert_true(pre.zone < base.zone);
	/* A drain moves as many pages as the baseline's, in larger blocks. */
	assert_int_equal(pre.zone_lock_pages, base.zone_lock_pages);
}

/* A buddy freed through another CPU cannot merge: the reason is counted. */
static void test_premerge_counts_buddy_on_other_pcp(void **state)
{
	struct pl_machine *m = cpus_machine("pcp-premerge", 2);
	struct page *pages[8], *a = NULL;
	unsigned long tries, reasons;

	(void)state;
	for (int i = 0; i < 8; i++)
		assert_non_null(pages[i] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0));
	for (int i = 0; i < 8 && !a; i++)
		for (int j = 0; j < 8; j++)
			if (page_to_pfn(pages[j]) == (page_to_pfn(pages[i]) ^ 1) &&
			    !(page_to_pfn(pages[i]) & 1))
				a = pages[i];
	assert_non_null(a);
	assert_int_equal(__free_pages(a, 0), 0);	/* to CPU 0's PCP */
	assert_int_equal(pl_enter(m, 1), 0);
	assert_int_equal(__free_pages(pfn_to_page(page_to_pfn(a) + 1), 0), 0);
	assert_int_equal(pl_enter(m, 0), 0);
	drain_local_pages(NULL);
	assert_true(event(m, PL_EV_PCP_PREMERGE_OTHER_PCP) >= 1);
	tries = event(m, PL_EV_PCP_PREMERGE_TRY);
	reasons = event(m, PL_EV_PCP_MERGE) + event(m, PL_EV_PCP_PREMERGE_IN_USE) +
		  event(m, PL_EV_PCP_PREMERGE_OTHER_PCP) + event(m, PL_EV_PCP_PREMERGE_IN_ZONE) +
		  event(m, PL_EV_PCP_PREMERGE_ORDER) + event(m, PL_EV_PCP_PREMERGE_OTHER);
	assert_int_equal(tries, reasons);	/* every lookup has an outcome */
	assert_int_equal(pl_check_machine(m), 0);
	for (int i = 0; i < 8; i++)
		if (pages[i] != a && page_to_pfn(pages[i]) != page_to_pfn(a) + 1)
			assert_int_equal(__free_pages(pages[i], 0), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/*
 * Exhaust the machine on CPU 0, free @nr1 pages on CPU 1 and @nr2 on CPU 2
 * (they stay on those PCPs), then allocate @want pages back on CPU 0.
 * Return: how many came back; @pcp2 is what CPU 2's PCP holds at the end.
 */
static unsigned long stranded_pages(const char *design, struct pl_machine **out,
				    unsigned int nr1, unsigned int nr2, unsigned int want, int *pcp2)
{
	static struct page *pages[16384];
	struct pl_machine *m = cpus_machine(design, 3);
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	unsigned long n = exhaust(GFP_HIGHUSER_MOVABLE, 0, pages, 16384), got = 0;

	assert_true(n > nr1 + nr2);
	assert_int_equal(pl_enter(m, 1), 0);
	for (unsigned int i = 0; i < nr1; i++)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	assert_int_equal(pl_enter(m, 2), 0);
	for (unsigned int i = 0; i < nr2; i++)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	assert_int_equal(pl_enter(m, 0), 0);
	while (got < want) {
		struct page *p = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0);

		if (!p)
			break;
		pages[n++] = p;
		got++;
	}
	*pcp2 = normal->per_cpu_pageset[2].count + m->node_zones[ZONE_DMA32].per_cpu_pageset[2].count;
	assert_int_equal(pl_check_machine(m), 0);
	while (n)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	*out = m;
	return got;
}

static void test_targeted_drain_asks_only_the_cpu_that_has_pages(void **state)
{
	struct pl_machine *m;
	int pcp2;
	unsigned long got;

	(void)state;
	/* Every stranded page comes back, and no CPU is drained wholesale. */
	got = stranded_pages("targeted-drain", &m, 20, 4, 24, &pcp2);
	assert_int_equal(got, 24);
	assert_int_equal(pcp2, 0);
	assert_true(event(m, PL_EV_TARGETED_DRAIN_CPUS) >= 2);
	assert_int_equal(event(m, PL_EV_DRAIN_ALL_CPUS), 0);
	test_machine_done(m);

	/* CPU 1 holds 20 pages, CPU 2 holds 4: CPU 1 alone covers 8 allocations. */
	got = stranded_pages("targeted-drain", &m, 20, 4, 8, &pcp2);
	assert_int_equal(got, 8);
	assert_int_equal(pcp2, 4);
	test_machine_done(m);
}

/* Below a pageblock, the zone only ever hands out or takes back whole blocks. */
static void test_economy_moves_whole_blocks_only(void **state)
{
	struct pl_machine *m = cpus_machine("block-economy", 2);
	struct page *pages[64];
	unsigned int n = 0;

	(void)state;
	for (unsigned int order = 0; order < pageblock_order; order++) {
		assert_non_null(pages[n] = alloc_pages(GFP_HIGHUSER_MOVABLE, order));
		n++;
		assert_non_null(pages[n] = alloc_pages(GFP_KERNEL, order));
		n++;
	}
	assert_int_equal(event(m, PL_EV_ZONE_LOCK_PAGES) % pageblock_nr_pages, 0);
	assert_int_equal(pl_check_machine(m), 0);
	/* Freed through CPU 1, every page goes back to its owner, CPU 0. */
	assert_int_equal(pl_enter(m, 1), 0);
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(__free_pages(pages[i], i / 2), 0);
	assert_int_equal(event(m, PL_EV_PCP_REMOTE_FREE), n);
	assert_int_equal(m->node_zones[ZONE_NORMAL].per_cpu_pageset[1].count, 0);
	assert_int_equal(event(m, PL_EV_ZONE_LOCK_PAGES) % pageblock_nr_pages, 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/*
 * CPU 0 takes every block and frees its pages again (kept as owned free
 * pages, outside NR_FREE_PAGES): CPU 1 must steal a block, and the
 * watermark must count what the PCPs hold.
 */
static void test_economy_steals_when_the_zone_has_no_block(void **state)
{
	static struct page *pages[16384];
	struct pl_machine *m = cpus_machine("block-economy", 2);
	unsigned long n = exhaust(GFP_HIGHUSER_MOVABLE, 0, pages, 16384);
	struct page *p;

	(void)state;
	unsigned long kept = 0;

	assert_true(n > 1000);
	/* Keep the first page of each block: no block can come back whole. */
	for (unsigned long i = 0; i < n; i++) {
		if (page_to_pfn(pages[i]) % pageblock_nr_pages)
			assert_int_equal(__free_pages(pages[i], 0), 0);
		else
			pages[kept++] = pages[i];
	}
	n = kept;
	assert_int_equal(pl_enter(m, 1), 0);
	p = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
	assert_non_null(p);
	assert_true(event(m, PL_EV_ECONOMY_STEAL) >= 1);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(p, 0), 0);
	while (n)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/* zone->lock acquisitions, every zone (1 GiB is all ZONE_DMA32). */
static uint64_t zone_lock_holds(struct pl_machine *m)
{
	uint64_t n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += m->node_zones[z].lock.stat.acquisitions;
	return n;
}

struct economy_run {
	unsigned long alloc_holds, blocks, free_holds, released;
};

/*
 * CPU 0 allocates 8192 pages (16 blocks) in a stream, then frees them all
 * in a burst: zone->lock holds and blocks moved each way.
 */
static struct economy_run economy_stream(const char *design, bool premerge)
{
	static struct page *pages[8192];
	struct pl_config cfg;
	struct pl_machine *m;
	struct economy_run r;
	uint64_t z0;

	pl_config_default(&cfg);
	cfg.mem_bytes = 1024 * MiB;	/* batch 63, high_max a few thousand pages */
	cfg.nr_cpus = 2;
	cfg.debug = 1;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	cfg.design.pcp_premerge = premerge;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	z0 = zone_lock_holds(m);
	for (unsigned int i = 0; i < 8192; i++)
		assert_non_null(pages[i] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0));
	r.alloc_holds = zone_lock_holds(m) - z0;
	r.blocks = event(m, PL_EV_PCP_OWN_BLOCK);
	assert_int_equal(pl_check_machine(m), 0);
	z0 = zone_lock_holds(m);
	for (unsigned int i = 8192; i--;)
		assert_int_equal(__free_pages(pages[i], 0), 0);
	r.free_holds = zone_lock_holds(m) - z0;
	r.released = event(m, PL_EV_PCP_RELEASE_BLOCK);
	assert_int_equal(event(m, PL_EV_PCP_DRAIN_CALLS), r.free_holds);
	assert_int_equal(pl_check_machine(m), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
	return r;
}

/*
 * The block economy takes one block per zone->lock hold and gives one back
 * per hold; economy_batch sizes both as 6.18 sizes its batches (growing
 * with a stream of allocations or frees), in whole blocks.
 */
static void test_economy_batch_moves_several_blocks_per_hold(void **state)
{
	struct economy_run one = economy_stream("block-economy", false);
	struct economy_run batch = economy_stream("block-economy+batch", false);

	(void)state;
	assert_int_equal(one.alloc_holds, one.blocks);
	assert_true(one.blocks >= 16);
	assert_true(batch.blocks >= 16);
	assert_true(batch.alloc_holds * 2 <= batch.blocks);
	assert_true(one.released >= 8 && one.free_holds == one.released);
	/* pcp->high grew with the stream (6.18's auto-tuning): fewer go back */
	assert_true(batch.free_holds >= 1);
	assert_true(batch.free_holds * 2 <= batch.released);
}

/*
 * pcp_premerge beside the economy changes nothing: the economy keeps no
 * unowned page on a PCP list, so there is nothing to pre-merge, and its
 * drains give back whole blocks only. (A pre-merging drain first took
 * zone->lock on every free above pcp->high and gave back partial blocks.)
 */
static void test_economy_with_premerge_is_the_economy(void **state)
{
	struct economy_run plain = economy_stream("block-economy+batch", false);
	struct economy_run both = economy_stream("block-economy+batch", true);

	(void)state;
	assert_int_equal(both.alloc_holds, plain.alloc_holds);
	assert_int_equal(both.blocks, plain.blocks);
	assert_int_equal(both.free_holds, plain.free_holds);
	assert_int_equal(both.released, plain.released);
}

/* A machine for the economy's refill sizes: CPU 0's pcp in ZONE_NORMAL. */
static struct pl_machine *refill_machine(const char *design, struct per_cpu_pages **pcp)
{
	struct pl_config cfg;
	struct pl_machine *m;

	pl_config_default(&cfg);
	cfg.mem_bytes = 2048 * MiB;	/* batch 63, high_min 4 * batch at 8 CPUs */
	cfg.dma32_bytes = 512 * MiB;
	cfg.nr_cpus = 8;
	cfg.debug = 1;
	m = test_machine_config(&cfg, design);
	*pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[0];
	assert_int_equal((*pcp)->batch, 63);
	assert_int_equal((*pcp)->high_min, 63 << 2);
	return m;
}

/*
 * The blocks each of CPU 0's first four order-0 refills takes (one
 * zone->lock hold each) while it allocates without freeing.
 */
static void refill_sizes(const char *design, unsigned long blocks[4])
{
	static struct page *pages[6144];
	struct per_cpu_pages *pcp;
	struct pl_machine *m = refill_machine(design, &pcp);
	unsigned long before = event(m, PL_EV_PCP_OWN_BLOCK);
	int refill = 0, n = 0;

	while (refill < 4) {
		uint64_t z0 = zone_lock_holds(m);

		assert_true(n < 6144);
		assert_non_null(pages[n++] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0));
		if (zone_lock_holds(m) == z0)
			continue;
		assert_int_equal(zone_lock_holds(m) - z0, 1);
		blocks[refill++] = event(m, PL_EV_PCP_OWN_BLOCK) - before;
		before = event(m, PL_EV_PCP_OWN_BLOCK);
	}
	assert_int_equal(pl_check_machine(m), 0);
	while (n)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/*
 * 6.18 doubles the pages a refill takes while a CPU allocates without
 * freeing, one alloc_factor step per refill. economy_batch keeps the
 * steps, so its refills, rounded up to whole blocks, stay at one block
 * until the batch outgrows a block; economy_ramp doubles what the last
 * refill took (one block is already batch << 3): 1, 2, 4, 4 blocks.
 */
static void test_economy_ramp_refill_doubles_what_it_took(void **state)
{
	unsigned long batch[4], ramp[4];

	(void)state;
	refill_sizes("block-economy+batch", batch);
	refill_sizes("block-economy+ramp", ramp);
	for (int i = 0; i < 4; i++)
		assert_int_equal(batch[i], 1);
	assert_int_equal(ramp[0], 1);
	assert_int_equal(ramp[1], 2);
	assert_int_equal(ramp[2], 4);
	assert_int_equal(ramp[3], 4);	/* batch << PCP_BATCH_SCALE_MAX: 2016 pages */
}

/*
 * 6.18 never refills an order-0 list past pcp->high - batch. A CPU holding
 * a movable block's 511 free pages refills for an unmovable page: the
 * doubled batch (1008 pages) would round up to two blocks, past that
 * limit, so economy_ramp takes one.
 */
static void test_economy_ramp_refill_stays_under_high(void **state)
{
	struct per_cpu_pages *pcp;
	struct pl_machine *m = refill_machine("block-economy+ramp", &pcp);
	struct page *a, *b;
	unsigned long blocks;

	(void)state;
	assert_non_null(a = alloc_pages(GFP_HIGHUSER_MOVABLE, 0));
	assert_int_equal(pcp->count, 511);
	assert_int_equal(pcp->alloc_factor, 4);	/* 512 pages taken: batch << 3 */
	blocks = event(m, PL_EV_PCP_OWN_BLOCK);
	assert_non_null(b = alloc_pages(GFP_KERNEL, 0));
	assert_int_equal(event(m, PL_EV_PCP_OWN_BLOCK) - blocks, 1);
	assert_true(pcp->count <= pcp->high - pcp->batch);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(a, 0), 0);
	assert_int_equal(__free_pages(b, 0), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/*
 * Every block is allocated whole, then the second halves of four of them
 * are freed page by page: their pages go to the zone (the blocks have no
 * owner), so the zone has free pages but no whole free block, and no PCP
 * holds any. An order-0 allocation must adopt one of those blocks, not fail
 * (the fuzzer found vmalloc failing with 2,000 pages free).
 */
static void test_economy_adopts_a_partly_free_block(void **state)
{
	static struct page *pages[256];
	struct pl_machine *m;
	struct pl_config cfg;
	unsigned long n, idx;
	struct zone *zone;
	struct page *p;

	(void)state;
	/* one zone and a zero min watermark: exhaust() takes every block */
	pl_config_default(&cfg);
	cfg.mem_bytes = cfg.dma32_bytes = 64 * MiB;
	cfg.min_free_kbytes = 1;
	cfg.debug = 1;
	m = test_machine_config(&cfg, "block-economy");
	n = exhaust(GFP_HIGHUSER_MOVABLE, pageblock_order, pages, 256);
	assert_true(n >= 8);
	assert_null(alloc_pages(GFP_HIGHUSER_MOVABLE, pageblock_order));
	for (unsigned long b = 0; b < 4; b++) {
		assert_int_equal(split_page(pages[b], pageblock_order), 0);
		for (unsigned long i = pageblock_nr_pages / 2; i < pageblock_nr_pages; i++)
			assert_int_equal(__free_pages(pages[b] + i, 0), 0);
	}
	assert_int_equal(pl_check_machine(m), 0);
	p = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(p);
	zone = page_zone(p);
	idx = pfn_to_pageblock_idx(zone, page_to_pfn(p));
	assert_int_equal(zone->pageblock_owner[idx], 0);	/* adopted by CPU 0 */
	assert_int_equal(get_pageblock_migratetype(p), MIGRATE_UNMOVABLE);	/* claimed */
	assert_true(event(m, PL_EV_FALLBACK_CLAIM) >= 1);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(p, 0), 0);
	for (unsigned long b = 0; b < 4; b++)
		for (unsigned long i = 0; i < pageblock_nr_pages / 2; i++)
			assert_int_equal(__free_pages(pages[b] + i, 0), 0);
	while (n > 4)
		assert_int_equal(__free_pages(pages[--n], pageblock_order), 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/* Isolation takes owned blocks back: alloc_contig_range() still works. */
static void test_economy_contig_range_reaches_owned_blocks(void **state)
{
	struct pl_machine *m = cpus_machine("block-economy", 2);
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	struct page *a = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
	unsigned long start;

	(void)state;
	assert_non_null(a);
	/* a's block is owned by CPU 0 and its 511 other pages sit on CPU 0's PCP. */
	start = page_to_pfn(a) & ~(pageblock_nr_pages - 1);
	assert_int_equal(zone->pageblock_owner[pfn_to_pageblock_idx(zone, start)], 0);
	assert_int_equal(__free_pages(a, 0), 0);
	assert_int_equal(alloc_contig_range(start, start + pageblock_nr_pages, GFP_KERNEL), 0);
	assert_int_equal(pl_check_machine(m), 0);
	assert_true(free_contig_range(start, pageblock_nr_pages) >= 0);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_premerge_moves_merges_out_of_zone_lock),
		cmocka_unit_test(test_premerge_counts_buddy_on_other_pcp),
		cmocka_unit_test(test_targeted_drain_asks_only_the_cpu_that_has_pages),
		cmocka_unit_test(test_economy_moves_whole_blocks_only),
		cmocka_unit_test(test_economy_steals_when_the_zone_has_no_block),
		cmocka_unit_test(test_economy_contig_range_reaches_owned_blocks),
		cmocka_unit_test(test_economy_batch_moves_several_blocks_per_hold),
		cmocka_unit_test(test_economy_ramp_refill_doubles_what_it_took),
		cmocka_unit_test(test_economy_ramp_refill_stays_under_high),
		cmocka_unit_test(test_economy_with_premerge_is_the_economy),
		cmocka_unit_test(test_economy_adopts_a_partly_free_block),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
