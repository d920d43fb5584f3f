// SPDX-License-Identifier: MIT
/*
 * test_contig_migrate.c - alloc_contig_range() migrating the movable
 * allocations out of its range, as 6.18's __alloc_contig_migrate_range()
 * does: with a holder of movable pages the range is taken and each held
 * block (order 0, and a compound order-2 one) is elsewhere with its
 * contents and its holder told; without one, or with a page the holder
 * will not let go, or an unmovable page, the call fails with -EBUSY and
 * the range is isolated no more; alloc_contig_pages() with a holder takes
 * a range that holds movable pages.
 */
#include <string.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "mm/internal.h"

#define NR_HELD	1024

/* The holder: slot i's block has private = i + 1 and its first word holds i. */
struct holder {
	struct page *pages[NR_HELD];
	unsigned int order[NR_HELD];
	unsigned long nr, moved, refuse_pfn;	/* refuse_pfn: the block it will not let go (+ 1) */
};

static int h_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = page->private;

	(void)order;
	if (!i || i > h->nr || h->pages[i - 1] != page || page_to_pfn(page) + 1 == h->refuse_pfn)
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
	h->moved++;
}

static void h_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

static const struct pl_migrate_ops holder_ops = { h_isolate, h_migrate, h_putback };

static unsigned long ev(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long v[NR_PL_VM_EVENTS];

	pl_events_sum(m, v);
	return v[e];
}

/* @h holds NR_HELD - 1 movable order-0 pages and one compound order-2 block (the last slot). */
static void hold(struct holder *h)
{
	for (unsigned long i = NR_HELD; i-- > 0;) {	/* the compound block first */
		unsigned int order = i == NR_HELD - 1 ? 2 : 0;
		struct page *p = alloc_pages(GFP_HIGHUSER_MOVABLE | (order ? __GFP_COMP : 0), order);

		assert_non_null(p);
		h->pages[i] = p;
		h->order[i] = order;
		p->private = i + 1;
		*(unsigned long *)page_address(p) = i;
	}
	h->nr = NR_HELD;
	drain_all_pages(NULL);
}

static void release(struct holder *h)
{
	for (unsigned long i = 0; i < h->nr; i++) {
		h->pages[i]->private = 0;
		assert_int_equal(__free_pages(h->pages[i], h->order[i]), 0);
	}
}

/* The pageblock holding the compound block: a range with held pages of both kinds. */
static unsigned long held_range(struct holder *h)
{
	return ALIGN_DOWN(page_to_pfn(h->pages[NR_HELD - 1]), pageblock_nr_pages);
}

static unsigned long held_in(struct holder *h, unsigned long start, unsigned long end)
{
	unsigned long n = 0;

	for (unsigned long i = 0; i < h->nr; i++) {
		unsigned long pfn = page_to_pfn(h->pages[i]);

		n += pfn + (1UL << h->order[i]) > start && pfn < end;
	}
	return n;
}

static void test_contig_range_migrates(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	static struct holder h;
	unsigned long start, end, before, migrated;

	(void)state;
	memset(&h, 0, sizeof(h));
	hold(&h);
	start = held_range(&h);
	end = start + pageblock_nr_pages;
	before = held_in(&h, start, end);
	assert_true(before > 1);

	/* no holder: nothing is movable, the range is busy */
	assert_int_equal(alloc_contig_range(start, end, GFP_KERNEL), -EBUSY);
	assert_int_equal(held_in(&h, start, end), before);

	/* the holder refuses one block of the range: busy, the others moved out */
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	h.refuse_pfn = page_to_pfn(h.pages[NR_HELD - 1]) + 1;
	assert_int_equal(alloc_contig_range(start, end, GFP_KERNEL), -EBUSY);
	assert_int_equal(held_in(&h, start, end), 1);
	assert_int_equal(pl_check_machine(m), 0);

	/* the holder lets everything go: the range is the caller's */
	h.refuse_pfn = 0;
	migrated = ev(m, PL_EV_PGMIGRATE_SUCCESS);
	assert_int_equal(alloc_contig_range(start, end, GFP_KERNEL), 0);
	assert_int_equal(held_in(&h, start, end), 0);
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_SUCCESS) - migrated, 1UL << 2);
	assert_true(PageHead(h.pages[NR_HELD - 1]));
	for (unsigned long i = 0; i < h.nr; i++) {
		assert_int_equal(*(unsigned long *)page_address(h.pages[i]), i);
		assert_int_equal(h.pages[i]->private, i + 1);
	}
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(free_contig_range(start, pageblock_nr_pages), 0);

	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	release(&h);
	test_machine_done(m);
}

/* An unmovable page in the range: nobody can move it, -EBUSY whatever the holder. */
static void test_contig_range_unmovable_busy(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	static struct holder h;
	struct page *pinned = alloc_pages(GFP_KERNEL, 0);
	unsigned long start;

	(void)state;
	memset(&h, 0, sizeof(h));
	assert_non_null(pinned);
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	start = ALIGN_DOWN(page_to_pfn(pinned), pageblock_nr_pages);
	assert_int_equal(alloc_contig_range(start, start + pageblock_nr_pages, GFP_KERNEL), -EBUSY);
	assert_int_equal(get_pageblock_migratetype(pfn_to_page(start)) == MIGRATE_ISOLATE, 0);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	assert_int_equal(__free_pages(pinned, 0), 0);
	test_machine_done(m);
}

/*
 * alloc_contig_pages() with a holder: every pageblock holds one held page
 * (at its start), the rest is free. Without the holder no pageblock-sized
 * range is free; with it the first candidate is taken and its held page
 * moved out, as the kernel tries any range without a reserved page.
 */
static void test_contig_pages_migrate(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	static struct holder h;
	static struct page *all[65536];
	unsigned long n = 0, kept = 0;
	struct page *p;

	(void)state;
	memset(&h, 0, sizeof(h));
	while (n < ARRAY_SIZE(all) && (p = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0)))
		all[n++] = p;
	for (unsigned long i = 0; i < n; i++) {
		if (kept < NR_HELD && !(page_to_pfn(all[i]) & (pageblock_nr_pages - 1))) {
			h.pages[kept] = all[i];
			all[i]->private = kept + 1;
			*(unsigned long *)page_address(all[i]) = kept;
			h.order[kept++] = 0;
			continue;
		}
		assert_int_equal(__free_pages(all[i], 0), 0);
	}
	h.nr = kept;
	drain_all_pages(NULL);
	assert_true(kept > 8);
	assert_null(alloc_contig_pages(pageblock_nr_pages, GFP_KERNEL | __GFP_NOWARN));

	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	p = alloc_contig_pages(pageblock_nr_pages, GFP_KERNEL | __GFP_NOWARN);
	assert_non_null(p);
	assert_int_equal(held_in(&h, page_to_pfn(p), page_to_pfn(p) + pageblock_nr_pages), 0);
	assert_true(h.moved >= 1);
	for (unsigned long i = 0; i < h.nr; i++)
		assert_int_equal(*(unsigned long *)page_address(h.pages[i]), i);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(free_contig_range(page_to_pfn(p), pageblock_nr_pages), 0);
	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	release(&h);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contig_range_migrates),
		cmocka_unit_test(test_contig_range_unmovable_busy),
		cmocka_unit_test(test_contig_pages_migrate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
