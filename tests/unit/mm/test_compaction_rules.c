// SPDX-License-Identifier: MIT
/*
 * test_compaction_rules.c - the rules of 6.18's compaction that decide
 * where the scanners look, each failing without its rule:
 * __reset_isolation_suitable() clearing a skip bit only where a sample of
 * the block shows a migration source or a free page (and only after a
 * direct compactor's scanners met, from kswapd going to sleep); the async
 * free scanner's stride; a migration finding no target ending the run as
 * COMPACT_CONTENDED while the scanners are apart.
 *
 * The machine: Normal is pfns 0x1000-0x4000 (24 pageblocks), every page
 * of it held movable by the test's holder unless a test frees some.
 */
#include <stdio.h>
#include <string.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "mm/internal.h"

#define NORMAL_START	0x1000UL
#define NORMAL_END	0x4000UL
#define TOP_BLOCK	0x3e00UL

/* The holder: slot i's page has private = i + 1; pfn -> slot + 1 in @slot. */
struct holder {
	struct page **pages;
	unsigned long *slot;
	unsigned long nr, moved;
	unsigned long first_dst;	/* pfn of the first migration's target */
};

static int h_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = page->private;

	(void)order;
	return i && i <= h->nr && h->pages[i - 1] == page ? 0 : -1;
}

static void h_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = src->private;

	(void)order;
	h->pages[i - 1] = dst;
	dst->private = i;
	if (!h->moved++)
		h->first_dst = page_to_pfn(dst);
}

static void h_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

static const struct pl_migrate_ops holder_ops = { h_isolate, h_migrate, h_putback };

static struct zone *normal(struct pl_machine *m) { return &m->node_zones[ZONE_NORMAL]; }

static unsigned long ev(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long v[NR_PL_VM_EVENTS];

	pl_events_sum(m, v);
	return v[e];
}

/* Every page of the machine held movable (the watermarks lowered while it fills). */
static struct pl_machine *full_machine(struct holder *h)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	struct zone *z = normal(m);
	unsigned long wmark[NR_WMARK], n = 0;
	struct page *p;

	assert_int_equal(z->zone_start_pfn, NORMAL_START);
	assert_int_equal(zone_end_pfn(z), NORMAL_END);
	h->pages = calloc(m->max_pfn, sizeof(*h->pages));
	h->slot = calloc(m->max_pfn, sizeof(*h->slot));
	memcpy(wmark, z->_watermark, sizeof(wmark));
	memset(z->_watermark, 0, sizeof(wmark));
	while ((p = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, 0)) != NULL) {
		h->pages[n] = p;
		p->private = n + 1;
		h->slot[page_to_pfn(p)] = ++n;
	}
	memcpy(z->_watermark, wmark, sizeof(wmark));
	drain_all_pages(NULL);
	h->nr = n;
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, h), 0);
	return m;
}

/* The holder lets the page at @pfn go (the test frees it; it then sits on a PCP). */
static void free_held(struct holder *h, unsigned long pfn)
{
	unsigned long i = h->slot[pfn];

	if (!(i && h->pages[i - 1] && page_to_pfn(h->pages[i - 1]) == pfn))
		fprintf(stderr, "pfn %#lx slot %lu buddy %d\n", pfn, i, PageBuddy(pfn_to_page(pfn)));
	assert_true(i && h->pages[i - 1] && page_to_pfn(h->pages[i - 1]) == pfn);
	h->pages[i - 1]->private = 0;
	__free_pages(h->pages[i - 1], 0);
	h->pages[i - 1] = NULL;
}

static void release(struct pl_machine *m, struct holder *h)
{
	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	for (unsigned long i = 0; i < h->nr; i++)
		if (h->pages[i]) {
			h->pages[i]->private = 0;
			__free_pages(h->pages[i], 0);
		}
	free(h->pages);
	free(h->slot);
	test_machine_done(m);
}

static void skip_all(struct zone *z)
{
	for (unsigned long pfn = NORMAL_START; pfn < NORMAL_END; pfn += pageblock_nr_pages)
		set_pageblock_skip(z, pfn);
}

/*
 * The reset samples. Normal is full of movable pages; block 0x3a00 has a
 * free page on a sample (its first pfn), block 0x3c00 one off the samples
 * (0x3c01), block 0x3e00 none, block 0x2a00 is one order-9 compound
 * allocation. Walking from both ends: every block of the lower half shows
 * a source and is cleared, the migrate scanner restarts at the zone's
 * start; from the top, 0x3e00 and 0x3c00 show no free page and stay
 * marked, 0x3a00 is cleared and is where the free scanner restarts, and
 * below it any source or free page will do (all cleared) but for the
 * compound block, whose mark persists. Without a direct compactor's
 * scanners having met (compact_blockskip_flush) nothing is reset.
 */
static void test_reset_samples_blocks(void **state)
{
	struct holder h = { 0 };
	struct pl_machine *m = full_machine(&h);
	struct zone *z = normal(m);
	unsigned long wmark[NR_WMARK], pfn;
	struct page *thp;

	(void)state;
	for (pfn = 0x2a00; pfn < 0x2c00; pfn++)
		free_held(&h, pfn);
	free_held(&h, 0x3a00);
	free_held(&h, 0x3c01);
	drain_all_pages(NULL);
	memcpy(wmark, z->_watermark, sizeof(wmark));
	memset(z->_watermark, 0, sizeof(wmark));
	thp = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_COMP | __GFP_NOWARN, pageblock_order);
	memcpy(z->_watermark, wmark, sizeof(wmark));
	assert_non_null(thp);
	assert_int_equal(page_to_pfn(thp), 0x2a00);
	assert_true(PageBuddy(pfn_to_page(0x3a00)) && PageBuddy(pfn_to_page(0x3c01)));

	skip_all(z);
	zone_compact(z)->compact_blockskip_flush = false;
	__reset_isolation_suitable(z);
	reset_isolation_suitable(m);
	for (pfn = NORMAL_START; pfn < NORMAL_END; pfn += pageblock_nr_pages)
		assert_true(get_pageblock_skip(z, pfn));

	zone_compact(z)->compact_blockskip_flush = true;
	__reset_isolation_suitable(z);
	assert_false(zone_compact(z)->compact_blockskip_flush);
	for (pfn = NORMAL_START; pfn < NORMAL_END; pfn += pageblock_nr_pages) {
		bool kept = pfn == 0x3e00 || pfn == 0x3c00 || pfn == 0x2a00;

		if (get_pageblock_skip(z, pfn) != kept)
			fprintf(stderr, "block %#lx skip %d\n", pfn, get_pageblock_skip(z, pfn));
		assert_int_equal(get_pageblock_skip(z, pfn), kept);
	}
	assert_int_equal(zone_compact(z)->compact_cached_migrate_pfn[0], NORMAL_START);
	assert_int_equal(zone_compact(z)->compact_cached_migrate_pfn[1], NORMAL_START);
	assert_int_equal(zone_compact(z)->compact_init_migrate_pfn, NORMAL_START);
	/* the free side stands on the last pfn of the block it found */
	assert_int_equal(zone_compact(z)->compact_cached_free_pfn, 0x3bff);
	assert_int_equal(zone_compact(z)->compact_init_free_pfn, 0x3bff);

	__free_pages(thp, pageblock_order);
	release(m, &h);
}

/*
 * kswapd going to sleep on a balanced node resets the skip bits of the
 * zones a direct compactor's scanners met in (reset_isolation_suitable()),
 * in pagelab's own kswapd run and in a replay's traced one; a zone not
 * flagged keeps its bits.
 */
static void test_kswapd_sleep_resets(void **state)
{
	(void)state;
	for (int traced = 0; traced <= 1; traced++) {
		struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
		struct zone *z = normal(m);
		struct zone *dma32 = &m->node_zones[ZONE_DMA32];
		unsigned long d32 = dma32->zone_start_pfn + pageblock_nr_pages, pfn;

		skip_all(z);
		set_pageblock_skip(dma32, d32);
		zone_compact(z)->compact_blockskip_flush = true;
		if (traced) {
			pl_kswapd_begin(m);
			pl_kswapd_end(m);
		} else {
			zone_set_flag(z, ZONE_KSWAPD_PENDING);
			pl_kswapd_run(m);
			assert_int_equal(ev(m, PL_EV_KSWAPD_RUN), 1);
		}
		/*
		 * all free, in order-10 blocks, nothing allocated: the free
		 * scanner's side clears the highest pageblock with a free
		 * block's head on a sample (a pageblock inside a free
		 * order-10 block shows no PageBuddy page); no block shows a
		 * migration source, so the scanners are left met
		 */
		pfn = NORMAL_END - pageblock_nr_pages;
		while (!PageBuddy(pfn_to_page(pfn)))
			pfn -= pageblock_nr_pages;
		assert_false(get_pageblock_skip(z, pfn));
		assert_true(zone_compact(z)->compact_cached_free_pfn >> pageblock_order <=
			    zone_compact(z)->compact_cached_migrate_pfn[0] >> pageblock_order);
		assert_true(get_pageblock_skip(z, NORMAL_END - pageblock_nr_pages) ==
			    (pfn != NORMAL_END - pageblock_nr_pages));
		assert_false(zone_compact(z)->compact_blockskip_flush);
		assert_true(get_pageblock_skip(dma32, d32));
		test_machine_done(m);
	}
}

/*
 * The free scanner's stride: async compaction looks at one pfn in
 * COMPACT_CLUSTER_MAX of its first block, sync compaction at each (then
 * both double the stride after each block that gave nothing). The top
 * block's free pages are its odd pfns: sync compaction takes its first
 * target there, async compaction passes them and finds its targets low in
 * the zone (the even pages of the two lowest blocks).
 */
static void test_free_scanner_async_stride(void **state)
{
	(void)state;
	for (int sync = 0; sync <= 1; sync++) {
		struct holder h = { 0 };
		struct pl_machine *m = full_machine(&h);
		unsigned long wmark[NR_WMARK], pfn;

		for (pfn = NORMAL_START; pfn < NORMAL_START + 2 * pageblock_nr_pages; pfn += 2)
			free_held(&h, pfn);
		for (pfn = TOP_BLOCK + 1; pfn < NORMAL_END - 2; pfn += 2)
			free_held(&h, pfn);
		drain_all_pages(NULL);
		/* no watermark in the way: the targets are all there is */
		memcpy(wmark, normal(m)->_watermark, sizeof(wmark));
		memset(normal(m)->_watermark, 0, sizeof(wmark));
		assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, -1, sync), PL_COMPACT_COMPLETE);
		memcpy(normal(m)->_watermark, wmark, sizeof(wmark));
		assert_true(h.moved > 0);
		if (sync) {
			assert_int_equal(ALIGN_DOWN(h.first_dst, pageblock_nr_pages), TOP_BLOCK);
		} else {
			assert_true(h.first_dst < NORMAL_START + 2 * pageblock_nr_pages);
			assert_int_equal(h.first_dst % 2, 0);
			assert_true(PageBuddy(pfn_to_page(TOP_BLOCK + 1)));
		}
		assert_int_equal(pl_check_machine(m), 0);
		release(m, &h);
	}
}

/*
 * A migration that finds no target while the scanners are still apart
 * ends the run: COMPACT_CONTENDED, the isolated block back with its
 * holder, one pgmigrate_fail, the scanners' positions kept for the next
 * run. Here the only free pages (the top block's odd ones) may not be
 * taken: the zone's min watermark is above its free pages.
 */
static void test_no_target_contended(void **state)
{
	struct holder h = { 0 };
	struct pl_machine *m = full_machine(&h);
	struct zone *z = normal(m);
	unsigned long fail = ev(m, PL_EV_PGMIGRATE_FAIL);
	long ret;

	(void)state;
	for (unsigned long pfn = TOP_BLOCK + 1; pfn < NORMAL_END - 2; pfn += 2)
		free_held(&h, pfn);
	drain_all_pages(NULL);
	z->_watermark[WMARK_MIN] = zone_page_state(z, NR_FREE_PAGES) + 64;
	ret = pl_compact_zone(m, ZONE_NORMAL, -1, true);
	assert_int_equal(ret, PL_COMPACT_CONTENDED);
	assert_int_equal(h.moved, 0);
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_FAIL) - fail, 1);
	assert_true(zone_compact(z)->compact_cached_free_pfn >> pageblock_order >
		    zone_compact(z)->compact_cached_migrate_pfn[0] >> pageblock_order);
	z->_watermark[WMARK_MIN] = 0;
	assert_int_equal(pl_check_machine(m), 0);
	release(m, &h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reset_samples_blocks),
		cmocka_unit_test(test_kswapd_sleep_resets),
		cmocka_unit_test(test_free_scanner_async_stride),
		cmocka_unit_test(test_no_target_contended),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
