// SPDX-License-Identifier: MIT
/*
 * test_slowpath.c - the allocator's slow path before failing
 * (src/mm/page_alloc_slowpath.c): drain_all_pages() and retry, highatomic
 * reserves made and released, the watermark boost raised by a fallback
 * claim and dropped by kswapd's run at the vmstat tick, kswapd woken by
 * an allocation under the low watermark (not on a balanced node) and
 * going back to sleep, and the reclaim-active PCP cap.
 */
#include "helpers.h"
#include "mm/internal.h"

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

/* A one-zone (DMA32) machine of @mem with @cpus vCPUs, entered as CPU 0. */
/* ... with vm.watermark_boost_factor @boost_factor (pl_config's terms) */
static struct pl_machine *one_zone_machine_boost(unsigned long mem, unsigned int cpus,
						 unsigned long min_free_kbytes,
						 unsigned long boost_factor)
{
	struct pl_config cfg;
	struct pl_machine *m;

	pl_config_default(&cfg);
	cfg.mem_bytes = mem;
	cfg.dma32_bytes = mem;
	cfg.nr_cpus = cpus;
	cfg.debug = 1;
	cfg.min_free_kbytes = min_free_kbytes;
	cfg.watermark_boost_factor = boost_factor;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	return m;
}

static struct pl_machine *one_zone_machine(unsigned long mem, unsigned int cpus,
					   unsigned long min_free_kbytes)
{
	return one_zone_machine_boost(mem, cpus, min_free_kbytes, 0);
}

static void free_all(struct page **pages, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		if (pages[i])
			assert_int_equal(__free_pages(pages[i], 0), 0);
}

/*
 * Pages sit on CPU 1's PCP while CPU 0 has used up the zone: an atomic
 * request fails (it may not drain, as in the kernel), a GFP_KERNEL one
 * drains every CPU's lists and succeeds, as __alloc_pages_direct_reclaim()
 * does after reclaim. Before the slow path had the drain, it failed too.
 */
static void test_drain_and_retry(void **state)
{
	struct pl_machine *m = one_zone_machine(64 * MiB, 2, 128);
	struct zone *zone = &m->node_zones[ZONE_DMA32];
	static struct page *pages[16384], *mine[512];
	unsigned long n, on_cpu1;
	struct page *page;

	(void)state;
	/* CPU 1 allocates and frees 512 pages: its PCP keeps a share of them. */
	assert_int_equal(pl_enter(m, 1), 0);
	assert_int_equal(exhaust(GFP_HIGHUSER_MOVABLE, 0, mine, 512), 512);
	free_all(mine, 512);
	on_cpu1 = (unsigned long)zone->per_cpu_pageset[1].count;
	assert_true(on_cpu1 > 2 * min_wmark_pages(zone));
	/* CPU 0 takes everything the buddy has, down to the atomic reserve. */
	assert_int_equal(pl_enter(m, 0), 0);
	n = exhaust(GFP_ATOMIC | __GFP_MOVABLE, 0, pages, 16384);
	assert_true(n > 0 && n < 16384);
	assert_null(alloc_pages(GFP_ATOMIC | __GFP_MOVABLE | __GFP_NOWARN, 0));
	assert_int_equal(zone->per_cpu_pageset[1].count, (int)on_cpu1);
	assert_int_equal(event(m, PL_EV_DRAIN_RETRY), 0);
	/* A caller that may sleep drains CPU 1 and is served. */
	page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0);
	assert_non_null(page);
	assert_int_equal(event(m, PL_EV_DRAIN_RETRY), 1);
	assert_int_equal(event(m, PL_EV_DRAIN_RETRY_OK), 1);
	assert_true(zone->per_cpu_pageset[1].count < (int)on_cpu1);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(page, 0), 0);
	free_all(pages, n);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/* Pages of @n in pageblock @pb, freed in pfn order up to @count of them. */
static unsigned long free_in_block(struct page **pages, unsigned long n, unsigned long pb,
				   unsigned long count)
{
	unsigned long freed = 0;

	for (unsigned long want = pb * pageblock_nr_pages; freed < count; want++)
		for (unsigned long i = 0; i < n; i++)
			if (pages[i] && page_to_pfn(pages[i]) == want) {
				assert_int_equal(__free_pages(pages[i], 0), 0);
				pages[i] = NULL;
				freed++;
				break;
			}
	return freed;
}

/*
 * Fill a one-zone machine down to the atomic reserve, then give back pages
 * of one pageblock (in pfn order, so they merge) until the zone's free
 * pages sit halfway between its min and low watermarks. Return: that
 * pageblock; *@n: the pages still held in @pages.
 */
static unsigned long fill_between_min_and_low(struct zone *zone, struct page **pages,
					      unsigned long max, unsigned long *n)
{
	unsigned long pb, target = (min_wmark_pages(zone) + low_wmark_pages(zone)) / 2, nr_free;

	*n = exhaust(GFP_ATOMIC | __GFP_MOVABLE, 0, pages, max);
	drain_local_pages(NULL);
	nr_free = (unsigned long)zone_page_state(zone, NR_FREE_PAGES);
	assert_true(nr_free < target && target - nr_free < pageblock_nr_pages);
	pb = page_to_pfn(pages[*n / 2]) >> pageblock_order;
	assert_int_equal(free_in_block(pages, *n, pb, target - nr_free), target - nr_free);
	drain_local_pages(NULL);
	nr_free = (unsigned long)zone_page_state(zone, NR_FREE_PAGES);
	assert_true(nr_free > min_wmark_pages(zone) && nr_free < low_wmark_pages(zone));
	return pb;
}

/*
 * A high-order GFP_ATOMIC request in the slow path reserves its pageblock
 * as MIGRATE_HIGHATOMIC (the zone's 1% allows two pageblocks); ordinary
 * requests may not count those pages, so a GFP_KERNEL request short of
 * them is served only after the slow path gives the reserve back
 * (unreserve_highatomic_pageblock(ac, true), the zone's last block). The
 * claim on the way boosts the watermark, which kswapd's run at the tick
 * drops.
 */
static void test_highatomic_reserve_unreserve(void **state)
{
	struct pl_machine *m = one_zone_machine(256 * MiB, 1, 2048);
	struct zone *zone = &m->node_zones[ZONE_DMA32];
	static struct page *pages[65536];
	struct page *atomic, *page;
	unsigned long n, pb;

	(void)state;
	assert_int_equal(min_wmark_pages(zone), 512);
	assert_int_equal(low_wmark_pages(zone), 640);
	pb = fill_between_min_and_low(zone, pages, 65536, &n);

	/* The fast path fails (below low); the slow path serves and reserves. */
	atomic = alloc_pages(GFP_ATOMIC, 1);
	assert_non_null(atomic);
	assert_int_equal(page_to_pfn(atomic) >> pageblock_order, pb);
	assert_int_equal(event(m, PL_EV_HIGHATOMIC_RESERVE), 1);
	assert_int_equal(get_pageblock_migratetype(atomic), MIGRATE_HIGHATOMIC);
	assert_int_equal(zone->nr_reserved_highatomic, pageblock_nr_pages);
	assert_true(zone->nr_free_highatomic > 0);
	/* Claiming that block for an unmovable request boosted the watermark. */
	assert_int_equal(event(m, PL_EV_WMARK_BOOST), 1);
	assert_int_equal(zone->watermark_boost, pageblock_nr_pages);
	assert_int_equal(pl_check_machine(m), 0);

	/* kswapd, woken, runs at the tick: nothing to reclaim, the boost goes. */
	pl_vmstat_tick();
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 1);
	assert_int_equal(zone->watermark_boost, 0);

	/* An ordinary request: short without the reserve, served after its release. */
	assert_true((unsigned long)zone_page_state(zone, NR_FREE_PAGES) - zone->nr_free_highatomic <
		    min_wmark_pages(zone));
	page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0);
	assert_non_null(page);
	assert_int_equal(event(m, PL_EV_DRAIN_RETRY), 1);
	assert_int_equal(event(m, PL_EV_HIGHATOMIC_UNRESERVE), 1);
	assert_int_equal(zone->nr_reserved_highatomic, 0);
	assert_int_equal(zone->nr_free_highatomic, 0);
	assert_int_equal(get_pageblock_migratetype(atomic), MIGRATE_MOVABLE);
	assert_int_equal(pl_check_machine(m), 0);

	assert_int_equal(__free_pages(page, 0), 0);
	assert_int_equal(__free_pages(atomic, 1), 0);
	free_all(pages, n);
	test_machine_done(m);
}

/*
 * Without ALLOC_HIGHATOMIC nothing is reserved: an order-1 GFP_NOWAIT
 * request (no __GFP_HIGH, the 6.16+ rule) or an order-0 GFP_ATOMIC one, in
 * the same state.
 */
static void test_highatomic_needs_high_order_gfp_high(void **state)
{
	struct pl_machine *m = one_zone_machine(256 * MiB, 1, 2048);
	static struct page *pages[65536];
	struct page *a, *b;
	unsigned long n;

	(void)state;
	fill_between_min_and_low(&m->node_zones[ZONE_DMA32], pages, 65536, &n);
	b = alloc_pages(GFP_NOWAIT, 1);
	/* b's claim boosted min: order-0 __GFP_HIGH ignores the boost at min */
	a = alloc_pages(GFP_ATOMIC, 0);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(event(m, PL_EV_HIGHATOMIC_RESERVE), 0);
	assert_int_equal(m->node_zones[ZONE_DMA32].nr_reserved_highatomic, 0);
	assert_int_equal(__free_pages(a, 0), 0);
	assert_int_equal(__free_pages(b, 1), 0);
	free_all(pages, n);
	test_machine_done(m);
}

/*
 * A machine whose Movable pageblock in the middle has 300 free pages, and an
 * unmovable allocation that claims it (a fallback of less than a pageblock).
 */
static struct page *claim_part_of_a_pageblock(struct pl_machine *m, struct page **pages,
					      unsigned long *n)
{
	struct page *page;

	*n = exhaust(GFP_HIGHUSER_MOVABLE, 0, pages, 16384);
	assert_int_equal(free_in_block(pages, *n, page_to_pfn(pages[*n / 2]) >> pageblock_order,
				       300), 300);
	drain_local_pages(NULL);
	assert_int_equal(m->node_zones[ZONE_DMA32].watermark_boost, 0);
	page = alloc_pages(GFP_KERNEL, 0);	/* unmovable: claims the movable block */
	assert_non_null(page);
	assert_int_equal(get_pageblock_migratetype(page), MIGRATE_UNMOVABLE);
	return page;
}

/*
 * A fallback that claims part of a pageblock boosts the zone's watermarks
 * by a pageblock and wakes kswapd (the request had __GFP_KSWAPD_RECLAIM);
 * the watermarks include the boost until kswapd's run at the next vmstat
 * tick drops it.
 */
static void test_boost_raise_and_clear(void **state)
{
	struct pl_machine *m = one_zone_machine(64 * MiB, 1, 0);
	struct zone *zone = &m->node_zones[ZONE_DMA32];
	static struct page *pages[16384];
	unsigned long n, high = zone->_watermark[WMARK_HIGH];
	struct page *page;
	char *out = malloc(65536);

	(void)state;
	page = claim_part_of_a_pageblock(m, pages, &n);
	assert_int_equal(event(m, PL_EV_WMARK_BOOST), 1);
	assert_int_equal(zone->watermark_boost, pageblock_nr_pages);
	assert_int_equal(high_wmark_pages(zone), high + pageblock_nr_pages);
	assert_true(pl_show_zoneinfo(m, out, 65536) > 0);
	assert_non_null(strstr(out, "        boost    512\n"));
	assert_int_equal(event(m, PL_EV_KSWAPD_WAKE), 1);
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 0);
	/* the tick: kswapd runs once and drops the boost */
	pl_vmstat_tick();
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 1);
	assert_int_equal(event(m, PL_EV_WMARK_BOOST_CLEAR), 1);
	assert_int_equal(zone->watermark_boost, 0);
	assert_int_equal(high_wmark_pages(zone), high);
	pl_vmstat_tick();
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 1);	/* not woken again */
	assert_int_equal(__free_pages(page, 0), 0);
	free_all(pages, n);
	free(out);
	test_machine_done(m);
}

/*
 * vm.watermark_boost_factor = 0 turns boosting off: the same claim leaves
 * the watermarks alone and marks no boost for kswapd.
 */
static void test_boost_off(void **state)
{
	struct pl_machine *m = one_zone_machine_boost(64 * MiB, 1, 0, PL_WMARK_BOOST_OFF);
	struct zone *zone = &m->node_zones[ZONE_DMA32];
	static struct page *pages[16384];
	unsigned long n, high = zone->_watermark[WMARK_HIGH];
	struct page *page;

	(void)state;
	page = claim_part_of_a_pageblock(m, pages, &n);
	assert_int_equal(event(m, PL_EV_WMARK_BOOST), 0);
	assert_int_equal(zone->watermark_boost, 0);
	assert_int_equal(high_wmark_pages(zone), high);
	assert_false(zone->flags & (1UL << ZONE_BOOSTED_WATERMARK));
	assert_int_equal(__free_pages(page, 0), 0);
	free_all(pages, n);
	test_machine_done(m);
}

/*
 * kswapd's wake and sleep: wakeup_kswapd() on a balanced, unboosted node
 * wakes nothing; allocations that take the zone under its low watermark
 * go to the slow path, which wakes it for the zone (ZONE_KSWAPD_PENDING);
 * its run at the next tick takes the wakeup and leaves no zone
 * reclaim-active; once memory is back above the high watermark nothing
 * wakes it again.
 */
static void test_kswapd_wake_and_sleep(void **state)
{
	struct pl_machine *m = one_zone_machine(64 * MiB, 1, 0);
	struct zone *zone = &m->node_zones[ZONE_DMA32];
	static struct page *pages[16384];
	unsigned long n = 0;

	(void)state;
	wakeup_kswapd(zone, 0, ZONE_DMA32);
	assert_int_equal(event(m, PL_EV_KSWAPD_WAKE), 0);
	assert_false(zone_test_flag(zone, ZONE_KSWAPD_PENDING));
	/* allocate until the zone is under its low watermark */
	while (n < ARRAY_SIZE(pages) && zone_page_state(zone, NR_FREE_PAGES) >= (long)low_wmark_pages(zone)) {
		pages[n] = alloc_pages(GFP_KERNEL, 0);
		assert_non_null(pages[n]);
		n++;
	}
	assert_true(n < ARRAY_SIZE(pages));
	/* the next allocation fails the fast path's low watermark and wakes kswapd */
	pages[n] = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(pages[n++]);
	assert_int_equal(event(m, PL_EV_KSWAPD_WAKE), 1);
	assert_true(zone_test_flag(zone, ZONE_KSWAPD_PENDING));
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 0);
	pl_vmstat_tick();
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 1);
	assert_false(zone_test_flag(zone, ZONE_KSWAPD_PENDING));
	assert_false(zone_test_flag(zone, ZONE_RECLAIM_ACTIVE));
	free_all(pages, n);
	drain_all_pages(NULL);
	wakeup_kswapd(zone, 0, ZONE_DMA32);
	pl_vmstat_tick();
	assert_int_equal(event(m, PL_EV_KSWAPD_WAKE), 1);
	assert_int_equal(event(m, PL_EV_KSWAPD_RUN), 1);
	test_machine_done(m);
}

/*
 * While kswapd reclaims (ZONE_RECLAIM_ACTIVE), nr_pcp_high() caps a PCP at
 * batch * 4 pages so that freed pages reach the buddy; without it the PCP
 * keeps more.
 */
static void test_reclaim_active_pcp_cap(void **state)
{
	static struct page *pages[256];

	(void)state;
	for (int active = 0; active <= 1; active++) {
		struct pl_machine *m = one_zone_machine(64 * MiB, 1, 0);
		struct zone *zone = &m->node_zones[ZONE_DMA32];
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[0];

		assert_int_equal(exhaust(GFP_KERNEL, 0, pages, 256), 256);
		if (active)
			__atomic_fetch_or(&zone->flags, 1UL << ZONE_RECLAIM_ACTIVE, __ATOMIC_RELAXED);
		free_all(pages, 256);
		if (active)
			assert_true(pcp->count <= pcp->batch << 2);
		else
			assert_true(pcp->count > pcp->batch << 2);
		__atomic_fetch_and(&zone->flags, ~(1UL << ZONE_RECLAIM_ACTIVE), __ATOMIC_RELAXED);
		test_machine_done(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain_and_retry),
		cmocka_unit_test(test_highatomic_reserve_unreserve),
		cmocka_unit_test(test_highatomic_needs_high_order_gfp_high),
		cmocka_unit_test(test_boost_raise_and_clear),
		cmocka_unit_test(test_boost_off),
		cmocka_unit_test(test_kswapd_wake_and_sleep),
		cmocka_unit_test(test_reclaim_active_pcp_cap),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
