// SPDX-License-Identifier: MIT
/*
 * test_migratetype_fallback.c - migratetype fallback: claiming a whole free block of
 * another type, claiming a pageblock that is at least half free, refusing
 * when it is not, stealing without claiming, small movable requests never
 * claiming, and ALLOC_NOFRAGMENT preferring DMA32 to mixing Normal.
 */
#include "helpers.h"

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

static void test_claim_whole_block(void **state)
{
	struct pl_machine *m = test_machine("mt-counts+blocks");
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	struct page *page;

	(void)state;
	/*
	 * All memory is Movable at boot: an unmovable block claims a whole
	 * max-order block (order 4 bypasses the PCP, so the lists show it).
	 */
	page = alloc_pages(GFP_KERNEL, 4);
	assert_int_equal(get_pageblock_migratetype(page), MIGRATE_UNMOVABLE);
	assert_int_equal(get_pageblock_migratetype(page + pageblock_nr_pages), MIGRATE_UNMOVABLE);
	assert_int_equal(normal->nr_pageblocks_mt[MIGRATE_UNMOVABLE], 2);
	for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
		assert_int_equal(normal->free_area[o].mt_nr_free[MIGRATE_UNMOVABLE], o >= 4);
	assert_int_equal(event(m, PL_EV_FALLBACK_CLAIM), 2);
	assert_int_equal(pl_check_machine(m), 0);
	/* Freed, it merges back to order 10, still Unmovable (ownership sticks). */
	assert_int_equal(__free_pages(page, 4), 0);
	assert_int_equal(normal->free_area[MAX_PAGE_ORDER].mt_nr_free[MIGRATE_UNMOVABLE], 1);
	test_machine_done(m);
}

/* An 8 MiB DMA32-only machine filled with movable pages, then @nr_freed of
 * pageblock 1 freed: an unmovable request claims it only if half is free. */
static void claim_partial(unsigned long nr_freed, bool expect_claim)
{
	struct pl_machine *m = test_machine_cfg(8 * MiB, 8 * MiB, "mt-counts+blocks", 1);
	static struct page *pages[2048];
	unsigned long n = exhaust(GFP_HIGHUSER_MOVABLE, 0, pages, 2048);
	struct page *page;

	for (unsigned long i = 0; i < n; i++) {
		unsigned long pfn = page_to_pfn(pages[i]);

		if (pfn >= 512 && pfn < 512 + nr_freed) {
			assert_int_equal(__free_pages(pages[i], 0), 0);
			pages[i] = NULL;
		}
	}
	drain_all_pages(NULL); /* the freed pages sat on the PCP */
	page = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(page);
	if (expect_claim) {
		assert_int_equal(get_pageblock_migratetype(pfn_to_page(512)), MIGRATE_UNMOVABLE);
		assert_true(page_to_pfn(page) >= 512 && page_to_pfn(page) < 1024);
	} else {
		assert_int_equal(get_pageblock_migratetype(pfn_to_page(512)), MIGRATE_MOVABLE);
		assert_true(event(m, PL_EV_FALLBACK_STEAL) >= 1); /* one per refilled page */
		assert_int_equal(get_pageblock_migratetype(page), MIGRATE_MOVABLE);
	}
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(page, 0), 0);
	for (unsigned long i = 0; i < n; i++)
		if (pages[i])
			assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_claim_half_free_pageblock(void **state)
{
	(void)state;
	claim_partial(300, true);
}

static void test_no_claim_below_half(void **state)
{
	(void)state;
	claim_partial(200, false);
}

static void test_small_movable_steals(void **state)
{
	struct pl_machine *m = test_machine_cfg(8 * MiB, 8 * MiB, "v6.18", 1);
	static struct page *pages[2048];
	unsigned long n = exhaust(GFP_KERNEL, 0, pages, 2048), freed = 0;
	struct page *page, *last_freed = NULL;

	(void)state;
	/* Every pageblock is Unmovable now. Free every other page of block 2. */
	for (unsigned long i = 0; i < n; i++) {
		unsigned long pfn = page_to_pfn(pages[i]);

		assert_int_equal(get_pageblock_migratetype(pages[i]), MIGRATE_UNMOVABLE);
		if (pfn >= 1024 && pfn < 1536 && !(pfn & 1)) {
			assert_int_equal(__free_pages(pages[i], 0), 0);
			last_freed = pages[i];
			pages[i] = NULL;
			freed++;
		}
	}
	assert_int_equal(freed, 256);
	drain_all_pages(NULL); /* oldest first: the last freed ends up at the list head */
	page = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
	/* Order 0 movable never claims: it steals the most recently freed page. */
	assert_ptr_equal(page, last_freed);
	assert_int_equal(get_pageblock_migratetype(page), MIGRATE_UNMOVABLE);
	assert_true(event(m, PL_EV_FALLBACK_STEAL) >= 1);
	/* The exhaustion claimed all four pageblocks; this allocation claimed none. */
	assert_int_equal(event(m, PL_EV_FALLBACK_CLAIM), 4);
	assert_int_equal(__free_pages(page, 0), 0);
	for (unsigned long i = 0; i < n; i++)
		if (pages[i])
			assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_nofragment_prefers_dma32(void **state)
{
	struct pl_machine *m = test_machine("mt-counts+blocks");
	static struct page *pages[16384];
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	unsigned long n = 0;
	struct page *page;

	(void)state;
	/* Fill Normal with movable pages, leaving free only small movable blocks. */
	while (n < 16384) {
		page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0);
		if (!page || page_zonenum(page) != ZONE_NORMAL) {
			if (page)
				__free_pages(page, 0);
			break;
		}
		pages[n++] = page;
	}
	/* Every 4th page back: Normal is above its watermarks, but only in order-0 blocks. */
	for (unsigned long i = 0; i < n; i += 4)
		assert_int_equal(__free_pages(pages[i], 0), 0);
	drain_all_pages(NULL);
	assert_true((unsigned long)zone_page_state(normal, NR_FREE_PAGES) > high_wmark_pages(normal));
	/* An unmovable request would have to mix a Normal pageblock: DMA32 serves it. */
	page = alloc_pages(GFP_KERNEL, 0);
	assert_int_equal(page_zonenum(page), ZONE_DMA32);
	assert_int_equal(normal->nr_pageblocks_mt[MIGRATE_UNMOVABLE], 0);
	assert_int_equal(__free_pages(page, 0), 0);
	for (unsigned long i = 0; i < n; i++)
		if (i % 4)
			assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_claim_whole_block),
		cmocka_unit_test(test_claim_half_free_pageblock),
		cmocka_unit_test(test_no_claim_below_half),
		cmocka_unit_test(test_small_movable_steals),
		cmocka_unit_test(test_nofragment_prefers_dma32),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
