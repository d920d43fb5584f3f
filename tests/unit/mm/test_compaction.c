// SPDX-License-Identifier: MIT
/*
 * test_compaction.c - compaction as mm/compaction.c of 6.18 runs it: the
 * scanners meet and a fragmented zone regains high-order blocks, moving
 * only movable blocks whose holder lets them go (and telling it where);
 * pageblock skip bits set on a fruitless block and cleared by the reset;
 * deferral; capture of the block a direct compactor wants;
 * compaction_suitable() with the fragmentation index; direct compaction in
 * the slow path making an order-9 allocation succeed.
 */
#include <stdio.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "mm/internal.h"

/* A holder of movable pages: slot i's page has private = i + 1 and its memory holds i. */
struct holder {
	struct page **pages;
	unsigned int *order;
	unsigned long nr, moved, refuse_from;
	unsigned long first_src, first_dst;	/* pfns of the first migration, + 1 (0: none) */
};

static int h_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = page->private;

	(void)order;
	if (!i || i > h->nr || h->pages[i - 1] != page || i - 1 >= h->refuse_from)
		return -1;
	return 0;
}

static void h_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = src->private;

	assert_int_equal(h->order[i - 1], order);
	h->pages[i - 1] = dst;
	dst->private = i;
	if (!h->moved++) {
		h->first_src = page_to_pfn(src) + 1;
		h->first_dst = page_to_pfn(dst) + 1;
	}
}

static void h_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

static const struct pl_migrate_ops holder_ops = { h_isolate, h_migrate, h_putback };

static struct pl_machine *machine(void)
{
	return test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
}

static struct zone *normal(struct pl_machine *m) { return &m->node_zones[ZONE_NORMAL]; }

static unsigned long ev(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long v[NR_PL_VM_EVENTS];

	pl_events_sum(m, v);
	return v[e];
}

/*
 * Fill the machine with order-0 pages (movable ones held by @h, or
 * unmovable), then free every other one: free memory in single pages.
 */
static void fragment(struct pl_machine *m, struct holder *h, gfp_t gfp)
{
	unsigned long cap = m->max_pfn, n = 0;
	struct page *p;

	h->pages = calloc(cap, sizeof(*h->pages));
	h->order = calloc(cap, sizeof(*h->order));
	while ((p = alloc_pages(gfp | __GFP_NOWARN, 0)) != NULL) {
		h->pages[n] = p;
		p->private = n + 1;
		*(unsigned long *)page_address(p) = n;
		n++;
	}
	h->nr = n;
	h->refuse_from = n;
	for (unsigned long i = 0; i < n; i += 2) {
		h->pages[i]->private = 0;
		__free_pages(h->pages[i], 0);
		h->pages[i] = NULL;
	}
	drain_all_pages(NULL);
}

static void release(struct holder *h)
{
	for (unsigned long i = 0; i < h->nr; i++)
		if (h->pages[i]) {
			h->pages[i]->private = 0;
			__free_pages(h->pages[i], h->order[i]);
		}
	free(h->pages);
	free(h->order);
}

/* Every held page still holds its index: migration copied it and told us. */
static void check_held(struct holder *h)
{
	for (unsigned long i = 0; i < h->nr; i++)
		if (h->pages[i]) {
			assert_int_equal(*(unsigned long *)page_address(h->pages[i]), i);
			assert_int_equal(h->pages[i]->private, i + 1);
		}
}

static void test_scanners_meet(void **state)
{
	struct pl_machine *m = machine();
	struct holder h = { 0 };
	long ret;

	(void)state;
	fragment(m, &h, GFP_KERNEL | __GFP_MOVABLE);
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	assert_int_equal(normal(m)->free_area[pageblock_order].nr_free, 0);
	ret = pl_compact_zone(m, ZONE_NORMAL, -1, true);
	/* compact_memory runs until the scanners meet: the whole zone, complete */
	assert_int_equal(ret, PL_COMPACT_COMPLETE);
	assert_int_equal(zone_compact(normal(m))->compact_cached_migrate_pfn[1], normal(m)->zone_start_pfn);
	assert_true(h.moved > 0);
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_SUCCESS), h.moved);
	drain_all_pages(NULL);
	/* the held half now sits low in the zone, the free half high, in whole blocks */
	assert_true(normal(m)->free_area[pageblock_order].nr_free +
		    normal(m)->free_area[MAX_PAGE_ORDER].nr_free > 0);
	check_held(&h);
	assert_int_equal(pl_check_machine(m), 0);
	release(&h);
	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	test_machine_done(m);
}

/* Unmovable pages, or movable ones without a willing holder, never move. */
static void test_unmovable_never_moved(void **state)
{
	struct pl_machine *m = machine();
	struct holder h = { 0 };

	(void)state;
	fragment(m, &h, GFP_KERNEL);	/* unmovable, though the holder would let them go */
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, -1, true), PL_COMPACT_COMPLETE);
	assert_int_equal(h.moved, 0);
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_SUCCESS), 0);
	release(&h);
	test_machine_done(m);
}

/*
 * Skip bits: a pageblock the migrate scanner found nothing to isolate in
 * is marked and skipped by the next run; the reset clears the marks.
 */
static void test_skip_bits(void **state)
{
	struct pl_machine *m = machine();
	struct zone *z;
	struct holder h = { 0 };
	unsigned long scanned, nr_skip = 0, pfn;

	(void)state;
	fragment(m, &h, GFP_KERNEL | __GFP_MOVABLE);
	z = normal(m);
	h.refuse_from = 0;		/* the holder refuses every page */
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	scanned = ev(m, PL_EV_COMPACT_MIGRATE_SCANNED);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, 9, false), PL_COMPACT_COMPLETE);
	scanned = ev(m, PL_EV_COMPACT_MIGRATE_SCANNED) - scanned;
	assert_true(scanned > 0);
	for (pfn = zone_pageblock_base(z); pfn < zone_end_pfn(z); pfn += pageblock_nr_pages)
		nr_skip += get_pageblock_skip(z, max(pfn, z->zone_start_pfn));
	assert_true(nr_skip > 0);
	/*
	 * the next run skips them: it scans no page of a block, only the
	 * entries fast_find_migrateblock() looks at on the free lists
	 */
	scanned = ev(m, PL_EV_COMPACT_MIGRATE_SCANNED);
	pl_compact_zone(m, ZONE_NORMAL, 9, false);
	assert_true(ev(m, PL_EV_COMPACT_MIGRATE_SCANNED) - scanned <= COMPACT_CLUSTER_MAX + 1);
	/* a skip bit survives a migratetype change, as the kernel's separate bit */
	pfn = max(zone_pageblock_base(z), z->zone_start_pfn);
	if (get_pageblock_skip(z, pfn)) {
		spin_lock(&z->lock);
		set_pageblock_migratetype(pfn_to_page(pfn), MIGRATE_MOVABLE);
		spin_unlock(&z->lock);
		assert_true(get_pageblock_skip(z, pfn));
	}
	/* the reset runs after a direct compactor's scanners met */
	zone_compact(z)->compact_blockskip_flush = true;
	__reset_isolation_suitable(z);
	/* the blocks whose samples show a held (movable) page or a free one are cleared */
	nr_skip = 0;
	for (pfn = zone_pageblock_base(z); pfn < zone_end_pfn(z); pfn += pageblock_nr_pages)
		nr_skip += !get_pageblock_skip(z, max(pfn, z->zone_start_pfn));
	assert_true(nr_skip > 0);
	scanned = ev(m, PL_EV_COMPACT_MIGRATE_SCANNED);
	pl_compact_zone(m, ZONE_NORMAL, 9, false);
	assert_true(ev(m, PL_EV_COMPACT_MIGRATE_SCANNED) > scanned);
	release(&h);
	test_machine_done(m);
}

/* Deferral: after a failure, 1, 2, 4 ... 64 attempts are skipped; success resets. */
static void test_deferral(void **state)
{
	struct pl_machine *m = machine();
	struct zone *z = normal(m);
	int skipped;

	(void)state;
	assert_false(compaction_deferred(z, 9));	/* never failed */
	compaction_defer_reset(z, 9, true);		/* order 9 worked once */
	assert_int_equal(zone_compact(z)->compact_order_failed, 10);
	defer_compaction(z, 9);
	assert_int_equal(zone_compact(z)->compact_order_failed, 9);
	assert_int_equal(zone_compact(z)->compact_defer_shift, 1);
	/* limit 2: one attempt deferred, the next goes ahead */
	assert_true(compaction_deferred(z, 9));
	assert_false(compaction_deferred(z, 9));
	assert_false(compaction_deferred(z, 8));	/* below the failed order */
	for (int i = 0; i < 10; i++)
		defer_compaction(z, 9);
	assert_int_equal(zone_compact(z)->compact_defer_shift, COMPACT_MAX_DEFER_SHIFT);
	for (skipped = 0; compaction_deferred(z, 9); skipped++)
		;
	assert_int_equal(skipped, (1 << COMPACT_MAX_DEFER_SHIFT) - 1);
	compaction_defer_reset(z, 9, true);
	assert_int_equal(zone_compact(z)->compact_defer_shift, 0);
	assert_int_equal(zone_compact(z)->compact_order_failed, 10);
	assert_false(compaction_deferred(z, 9));
	test_machine_done(m);
}

/* compaction_capture(): the order the compactor wants, not polluting movable blocks. */
static void test_capture_rules(void **state)
{
	struct pl_machine *m = machine();
	struct compact_control cc = { .order = 9, .migratetype = MIGRATE_MOVABLE, .zone = normal(m) };
	struct capture_control capc = { .cc = &cc };
	struct page *p = pfn_to_page(normal(m)->zone_start_pfn);

	(void)state;
	assert_false(compaction_capture(&capc, p, 8, MIGRATE_MOVABLE));	/* wrong order */
	assert_false(compaction_capture(&capc, p, 9, MIGRATE_ISOLATE));
	assert_null(capc.page);
	cc.order = 3;
	cc.migratetype = MIGRATE_UNMOVABLE;
	assert_false(compaction_capture(&capc, p, 3, MIGRATE_MOVABLE));	/* movable block */
	assert_true(compaction_capture(&capc, p, 3, MIGRATE_UNMOVABLE));
	assert_ptr_equal(capc.page, p);
	test_machine_done(m);
}

/*
 * Direct compaction in the slow path: an order-9 allocation with no free
 * order-9 block compacts (a stall), and succeeds with a block that
 * compaction made, here captured as the migrated pages' frees merged.
 */
static void test_direct_compaction_captures(void **state)
{
	struct pl_machine *m = machine();
	struct holder h = { 0 };
	struct page *p;

	(void)state;
	fragment(m, &h, GFP_KERNEL | __GFP_MOVABLE);
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	for (int zi = 0; zi < MAX_NR_ZONES; zi++)
		for (int o = pageblock_order; o < NR_PAGE_ORDERS; o++)
			assert_int_equal(m->node_zones[zi].free_area[o].nr_free, 0);
	p = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_COMP | __GFP_RETRY_MAYFAIL, 9);
	assert_non_null(p);
	assert_true(ev(m, PL_EV_COMPACT_STALL) >= 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_SUCCESS), 1);
	assert_true(ev(m, PL_EV_COMPACT_CAPTURE) + ev(m, PL_EV_COMPACT_SUCCESS) >= 1);
	check_held(&h);
	__free_pages(p, 9);
	assert_int_equal(pl_check_machine(m), 0);
	/* without a holder nothing is movable: direct compaction is skipped and the allocation fails */
	release(&h);
	test_machine_done(m);

	m = machine();
	memset(&h, 0, sizeof(h));
	fragment(m, &h, GFP_KERNEL | __GFP_MOVABLE);
	assert_null(alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN | __GFP_RETRY_MAYFAIL, 9));
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_SUCCESS), 0);
	assert_int_equal(ev(m, PL_EV_COMPACT_STALL), 0);
	release(&h);
	test_machine_done(m);
}

/*
 * compaction_suitable(): enough order-0 pages above the watermark for the
 * targets, and for a costly order a fragmentation index above
 * extfrag_threshold (a failure for lack of memory is reclaim's).
 */
static void test_suitable(void **state)
{
	struct pl_machine *m = machine();
	struct zone *z = normal(m);
	unsigned long saved[NR_PAGE_ORDERS];

	(void)state;
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		saved[o] = z->free_area[o].nr_free;
	/* fresh: free memory is in big blocks, the index is -1000: suitable */
	assert_true(compaction_suitable(z, 9, ZONE_NORMAL));
	/* fragmented: all free memory in single pages: the index near 1000 */
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		z->free_area[o].nr_free = 0;
	z->free_area[0].nr_free = (unsigned long)zone_page_state(z, NR_FREE_PAGES);
	assert_true(fragmentation_index(z, 9) > 500);
	assert_true(compaction_suitable(z, 9, ZONE_NORMAL));
	/* a few order-8 blocks only: a lack of memory, index <= 500: unsuitable */
	z->free_area[0].nr_free = 0;
	z->free_area[8].nr_free = 4;
	assert_true(fragmentation_index(z, 9) <= 500);
	assert_false(compaction_suitable(z, 9, ZONE_NORMAL));
	/* ... unless vm.extfrag_threshold is lower */
	m->config.extfrag_threshold = 200 + 1;
	assert_true(compaction_suitable(z, 9, ZONE_NORMAL));
	m->config.extfrag_threshold = 0;
	/* not costly: no index test */
	assert_true(compaction_suitable(z, 3, ZONE_NORMAL));
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		z->free_area[o].nr_free = saved[o];
	test_machine_done(m);
}

/* Below its watermark plus compact_gap() a zone is unsuitable whatever the index. */
static void test_unsuitable_low_memory(void **state)
{
	struct pl_machine *m = machine();
	struct page *pages[16384];
	unsigned int n = 0;

	(void)state;
	while (n < ARRAY_SIZE(pages) &&
	       (pages[n] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0)) != NULL)
		n++;
	assert_false(compaction_suitable(normal(m), 9, ZONE_NORMAL));
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, 9, true), PL_COMPACT_SKIPPED);
	while (n)
		__free_pages(pages[--n], 0);
	test_machine_done(m);
}

/*
 * The free-list searches. Normal (pfns 0x1000-0x4000) is full of held
 * movable pages; every other page of its lower half is free (single pages,
 * the migration sources' blocks), a 16-page block is free at 0x1810, an
 * 8-page block at 0x3a08, and single pages in the last block 0x3e00.
 */
#define FAST_SRC_BLOCK	0x1800UL	/* holds the free order-4 block */
#define FAST_DST_BLOCK	0x3a00UL	/* holds the free order-3 block */
#define FAST_LAST_BLOCK	0x3e00UL

static void free_held(struct holder *h, const unsigned long *slot, unsigned long pfn)
{
	unsigned long i = slot[pfn];

	assert_true(i && h->pages[i - 1]);
	h->pages[i - 1]->private = 0;
	__free_pages(h->pages[i - 1], 0);
	h->pages[i - 1] = NULL;
}

static void fast_search_machine(struct pl_machine *m, struct holder *h)
{
	unsigned long *slot = calloc(m->max_pfn, sizeof(*slot)), n = 0, pfn;
	struct zone *z = normal(m);
	unsigned long wmark[NR_WMARK];
	struct page *p;

	h->pages = calloc(m->max_pfn, sizeof(*h->pages));
	h->order = calloc(m->max_pfn, sizeof(*h->order));
	/* every page of the zone taken: no free block left but those made below */
	memcpy(wmark, z->_watermark, sizeof(wmark));
	memset(z->_watermark, 0, sizeof(wmark));
	while ((p = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, 0)) != NULL) {
		h->pages[n] = p;
		p->private = n + 1;
		*(unsigned long *)page_address(p) = n;
		slot[page_to_pfn(p)] = ++n;
	}
	memcpy(z->_watermark, wmark, sizeof(wmark));
	drain_all_pages(NULL);
	for (unsigned int o = 2; o < NR_PAGE_ORDERS; o++)	/* a page or two may stay */
		assert_int_equal(z->free_area[o].nr_free, 0);
	h->nr = h->refuse_from = n;
	assert_int_equal(z->zone_start_pfn, 0x1000);
	assert_int_equal(zone_end_pfn(z), 0x4000);
	for (pfn = 0x1000; pfn < 0x2600; pfn += 2)
		if (pfn < FAST_SRC_BLOCK || pfn >= FAST_SRC_BLOCK + pageblock_nr_pages)
			free_held(h, slot, pfn);
	for (pfn = FAST_SRC_BLOCK + 0x10; pfn < FAST_SRC_BLOCK + 0x20; pfn++)
		free_held(h, slot, pfn);
	for (pfn = FAST_DST_BLOCK + 8; pfn < FAST_DST_BLOCK + 16; pfn++)
		free_held(h, slot, pfn);
	for (pfn = FAST_LAST_BLOCK + 1; pfn < FAST_LAST_BLOCK + 64; pfn += 2)
		free_held(h, slot, pfn);
	drain_all_pages(NULL);
	free(slot);
	/* the two blocks are on the MOVABLE lists of their orders, nothing else above order 0 */
	assert_int_equal(z->free_area[4].nr_free, 1);
	assert_int_equal(z->free_area[3].nr_free, 1);
	assert_int_equal(page_to_pfn(list_first_entry(&z->free_area[4].free_list[MIGRATE_MOVABLE],
						      struct page, buddy_list)), FAST_SRC_BLOCK + 0x10);
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, h), 0);
}

/*
 * fast_find_migrateblock(): an order-9 compaction's migrate scanner starts
 * in the pageblock whose order-4 block is free (low in the zone, from the
 * MOVABLE free list), not at the zone's first block, whose pages are
 * movable too. compact_memory scans linearly.
 */
static void test_fast_find_migrateblock(void **state)
{
	struct pl_machine *m = machine();
	struct holder h = { 0 };

	(void)state;
	fast_search_machine(m, &h);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, 9, true), PL_COMPACT_SUCCESS);
	assert_true(h.moved > 0);
	assert_int_equal(ALIGN_DOWN(h.first_src - 1, pageblock_nr_pages), FAST_SRC_BLOCK);
	check_held(&h);
	release(&h);
	test_machine_done(m);

	/* compact_memory (ignoring the skip bits) scans linearly from the zone's start */
	m = machine();
	memset(&h, 0, sizeof(h));
	fast_search_machine(m, &h);
	pl_compact_zone(m, ZONE_NORMAL, -1, true);
	assert_true(h.moved > 0);
	assert_int_equal(ALIGN_DOWN(h.first_src - 1, pageblock_nr_pages), 0x1000);
	release(&h);
	test_machine_done(m);
}

/*
 * fast_isolate_freepages(): the first migration target is the free order-3
 * block in the top quarter between the scanners, found on the MOVABLE
 * list, then the free pages around it; not the last block's single pages,
 * where the linear free scanner starts. The list it read is rotated: the
 * entry it took was the tail, the next search starts elsewhere.
 */
static void test_fast_isolate_freepages(void **state)
{
	struct pl_machine *m = machine();
	struct holder h = { 0 };

	(void)state;
	fast_search_machine(m, &h);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, 9, true), PL_COMPACT_SUCCESS);
	assert_true(h.moved > 0);
	assert_int_equal(h.first_dst - 1, FAST_DST_BLOCK + 8);
	check_held(&h);
	assert_int_equal(pl_check_machine(m), 0);
	release(&h);
	test_machine_done(m);
}

static void test_bad_input(void **state)
{
	struct pl_machine *m = machine();
	static const struct pl_migrate_ops half = { h_isolate, NULL, h_putback };

	(void)state;
	assert_int_equal(pl_set_migrate_ops(NULL, &holder_ops, NULL), -EINVAL);
	assert_int_equal(pl_set_migrate_ops(m, &half, NULL), -EINVAL);
	assert_null(m->migrate_ops);
	assert_int_equal(pl_compact_zone(m, 7, 9, true), -EINVAL);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, 11, true), -EINVAL);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, -2, true), -EINVAL);
	assert_int_equal(pl_compact_zone(NULL, ZONE_NORMAL, 9, true), -EINVAL);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_scanners_meet),
		cmocka_unit_test(test_unmovable_never_moved),
		cmocka_unit_test(test_skip_bits),
		cmocka_unit_test(test_deferral),
		cmocka_unit_test(test_capture_rules),
		cmocka_unit_test(test_direct_compaction_captures),
		cmocka_unit_test(test_suitable),
		cmocka_unit_test(test_unsuitable_low_memory),
		cmocka_unit_test(test_fast_find_migrateblock),
		cmocka_unit_test(test_fast_isolate_freepages),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
