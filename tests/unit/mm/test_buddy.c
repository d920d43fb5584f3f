// SPDX-License-Identifier: MIT
/*
 * test_buddy.c - boot state, split (expand), merge, compound pages,
 * refcounts, zeroing, zone selection, watermarks, exhaustion and full
 * coalescing.
 */
#include "helpers.h"

static void test_boot_state(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct zone *dma32 = &m->node_zones[ZONE_DMA32], *normal = &m->node_zones[ZONE_NORMAL];

	(void)state;
	assert_int_equal(dma32->present_pages, 4096);
	assert_int_equal(normal->zone_start_pfn, 4096);
	assert_int_equal(normal->present_pages, 12288);
	assert_int_equal(dma32->free_area[MAX_PAGE_ORDER].nr_free, 4);
	assert_int_equal(normal->free_area[MAX_PAGE_ORDER].nr_free, 12);
	assert_int_equal(zone_page_state(normal, NR_FREE_PAGES), 12288);
	assert_int_equal(zone_page_state(normal, NR_FREE_PAGES_BLOCKS), 12288);
	assert_true(min_wmark_pages(normal) < low_wmark_pages(normal));
	assert_true(low_wmark_pages(normal) < high_wmark_pages(normal));
	assert_int_equal(dma32->lowmem_reserve[ZONE_NORMAL], 12288 / 256);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_split_and_merge(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	struct page *page;

	(void)state;
	/* Order 4 is above the PCP orders: straight from the buddy lists. */
	page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, 4);
	assert_non_null(page);
	/* Normal is preferred; expand() keeps the lowest block of the split. */
	assert_int_equal(page_to_pfn(page), normal->zone_start_pfn);
	assert_int_equal(page_ref_count(page), 1);
	for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
		assert_int_equal(normal->free_area[o].nr_free, o >= 4 ? 1 : 0);
	assert_int_equal(normal->free_area[MAX_PAGE_ORDER].nr_free, 11);
	assert_int_equal(zone_page_state(normal, NR_FREE_PAGES), 12288 - 16);
	assert_int_equal(pl_check_machine(m), 0);

	assert_int_equal(__free_pages(page, 4), 0);
	assert_int_equal(page_ref_count(page), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_every_order(void **state)
{
	struct pl_machine *m = test_machine("mt-counts");
	struct page *pages[NR_PAGE_ORDERS];

	(void)state;
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
		pages[o] = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, o);
		assert_non_null(pages[o]);
		assert_true(IS_ALIGNED(page_to_pfn(pages[o]), 1UL << o));
		assert_int_equal(pl_check_machine(m), 0);
	}
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++)
		assert_int_equal(__free_pages(pages[o], o), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_memory_is_real_and_zeroed(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *page = alloc_pages(GFP_KERNEL, 2);
	unsigned char *p;

	(void)state;
	p = page_address(page);
	memset(p, 0xa5, 4 * PAGE_SIZE);
	assert_ptr_equal(virt_to_page(p + 3 * PAGE_SIZE), page + 3);
	assert_int_equal(__free_pages(page, 2), 0);
	page = alloc_pages(GFP_KERNEL | __GFP_ZERO, 2);
	p = page_address(page);
	for (size_t i = 0; i < 4 * PAGE_SIZE; i++)
		assert_int_equal(p[i], 0);
	assert_int_equal(free_pages((unsigned long)p, 2), 0);
	assert_int_equal(get_zeroed_page(GFP_KERNEL) != 0, 1);
	test_machine_done(m);
}

static void test_dma32_zone(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_DMA32, 3);

	(void)state;
	assert_int_equal(page_zonenum(page), ZONE_DMA32);
	assert_true(page_to_pfn(page) < 4096);
	assert_int_equal(__free_pages(page, 3), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_compound_and_refcounts(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *page = alloc_pages(GFP_KERNEL | __GFP_COMP, 3);

	(void)state;
	assert_true(PageHead(page));
	assert_true(PageTail(page + 5));
	get_page(page + 5); /* a tail reference pins the head */
	assert_int_equal(page_ref_count(page), 2);
	assert_int_equal(put_page(page + 7), 0);
	assert_int_equal(put_page(page), 0); /* last reference frees all 8 */
	assert_false(PageTail(page + 5));
	assert_fully_coalesced(m);

	/* A non-compound block whose first page is still referenced. */
	page = alloc_pages(GFP_KERNEL, 2);
	get_page(page);
	assert_int_equal(__free_pages(page, 2), 0);
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m), 16384 - 1); /* pages 1..3 went back */
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(put_page(page), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_watermarks_and_exhaustion(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	static struct page *pages[16384];
	unsigned long n, atomic_extra;
	struct zone *normal = &m->node_zones[ZONE_NORMAL];

	(void)state;
	n = exhaust(GFP_KERNEL, 0, pages, 16384);
	assert_true(n > 0);
	/* A normal request stops at the min watermark of each zone. */
	assert_true((unsigned long)zone_page_state(normal, NR_FREE_PAGES) <= min_wmark_pages(normal) + 1);
	assert_true((unsigned long)zone_page_state(normal, NR_FREE_PAGES) >= min_wmark_pages(normal) / 2);
	assert_null(alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0));
	/* GFP_ATOMIC may dig into the reserve below min. */
	atomic_extra = exhaust(GFP_ATOMIC, 0, pages + n, 16384 - n);
	assert_true(atomic_extra > 0);
	n += atomic_extra;
	assert_int_equal(pl_check_machine(m), 0);
	while (n)
		assert_int_equal(__free_pages(pages[--n], 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_exhaust_every_order(void **state)
{
	struct pl_machine *m = test_machine("mt-counts");
	static struct page *pages[16384];
	static unsigned int orders[16384];
	unsigned long n = 0;

	(void)state;
	for (int o = MAX_PAGE_ORDER; o >= 0; o--) {
		unsigned long got = exhaust(GFP_ATOMIC, (unsigned int)o, pages + n, 16384 - n);

		for (unsigned long i = 0; i < got; i++)
			orders[n + i] = (unsigned int)o;
		n += got;
	}
	assert_int_equal(pl_check_machine(m), 0);
	assert_true(pl_nr_free_pages(m) < 16384 / 8);
	while (n) {
		n--;
		assert_int_equal(__free_pages(pages[n], orders[n]), 0);
	}
	assert_fully_coalesced(m);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_boot_state),
		cmocka_unit_test(test_split_and_merge),
		cmocka_unit_test(test_every_order),
		cmocka_unit_test(test_memory_is_real_and_zeroed),
		cmocka_unit_test(test_dma32_zone),
		cmocka_unit_test(test_compound_and_refcounts),
		cmocka_unit_test(test_watermarks_and_exhaustion),
		cmocka_unit_test(test_exhaust_every_order),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
