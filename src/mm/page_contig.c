// SPDX-License-Identifier: MIT
/*
 * page_contig.c - contiguous ranges of pages: split_page(), free_contig_range()
 * in its two designs, free_pages_bulk(), and alloc_contig_range() /
 * alloc_contig_pages() (the CONTIG_ALLOC part of the kernel's mm/page_alloc.c).
 *
 * The two ways to free a range of order-0 pages sit side by side below:
 *
 *   free_contig_range_pages()    v6.18: __free_page() on every page; each
 *                                one goes to the order-0 PCP list (and on
 *                                to the buddy, merging, when the PCP drains).
 *   free_contig_range_chunked()  seed 001 (Ryan Roberts, Muhammad Usama Anjum,
 *                                "mm/page_alloc: Optimize free_contig_range()",
 *                                v3, March 2026), switch free_contig_batch:
 *                                drop each page's reference and run
 *                                free_pages_prepare() on it, then free each
 *                                run of pages that reached zero as the
 *                                largest naturally aligned power-of-two
 *                                chunks, up to MAX_PAGE_ORDER:
 *
 *      pfn  0x203 0x204       0x208               0x210    0x212
 *           |o0|  |---o2---|  |------o3------|    |-o1-|     (a run 0x203..0x211)
 *
 * A chunk goes to the PCP if its order is pcp_allowed_order() (0..3 and the
 * THP order 9), else to the buddy under zone->lock, as __free_frozen_pages()
 * decides. A page still referenced after the drop, or refused by
 * free_pages_prepare() (bad_page(), leaked as the kernel leaks it), ends the
 * run. A run also ends at a memory-section boundary (PAGES_PER_SECTION):
 * the kernel may not walk struct pages across one; pagelab's memmap is
 * contiguous, but the rule is kept so the chunks match the kernel's. And
 * at a zone boundary: zones are only pageblock-aligned here, so an
 * aligned order-10 chunk could otherwise span two zones.
 *
 * Invariants: before any page changes, every entry point checks every page
 * it was given (in the machine, allocated, order-0: not free, not
 * compound, not an unsplit high-order block) and refuses the whole call
 * with -EINVAL and a rate-limited warning otherwise; the only change after
 * that point is the kernel's (drop refcounts, free those reaching zero).
 * Both designs leave the same pages free, and after drain_all_pages() the
 * same buddy state (the differential test in tests/unit/mm/test_contig_range.c).
 *
 * alloc_contig_range() isolates the pageblocks (page_isolation.c), drains
 * the PCPs, migrates the movable allocations out of the range as 6.18's
 * __alloc_contig_migrate_range() does (compaction.c's migrate scanner, the
 * targets from the allocator, outside the isolated blocks; only where the
 * machine has a holder of movable pages, pl_set_migrate_ops()), drains
 * again, and takes the range only if every page of it is then free in the
 * buddy; otherwise -EBUSY (a page nobody can move) or -ENOMEM (no target),
 * the range isolated no more and the migrated blocks where they went.
 */
#include <string.h>
#include "internal.h"
#include "validate.h"

static bool contig_no_machine(const char *fn)
{
	if (likely(pl_this.machine))
		return false;
	pl_warn_ratelimited("%s: the calling thread has not entered a machine (pl_enter)", fn);
	return true;
}

static int contig_bad_input(const char *fn, unsigned long pfn, const char *why)
{
	pl_count(PL_EV_BAD_INPUT, 1);
	pl_warn_ratelimited("%s: pfn %#lx: %s", fn, pfn, why);
	return -EINVAL;
}

/*
 * Nonzero if @page cannot be one of a range of order-0 pages to free: no
 * reference (free, or a compound tail), the head of a compound page, or the
 * head of an unsplit high-order block. Three loads and one combined test,
 * as the kernel's page_expected_state(): a range is checked with no branch
 * per page. PageBuddy and PageTail need no loads of their own here: free
 * pages and compound tails have refcount 0 (the invariant in mm_types.h, which
 * pl_check_machine() verifies); contig_page_bad() tells them apart.
 */
static inline unsigned long contig_page_bad_bits(const struct page *page)
{
	unsigned int ref = (unsigned int)page_ref_count(page);

	/* ((ref - 1) | ref) has the sign bit set exactly when ref <= 0. */
	return (((ref - 1) | ref) >> 31) | page->alloc_order |
	       (page_flags(page) & (1UL << PG_head));
}

/* Why @page cannot be one of a range of order-0 pages to free, or NULL. */
static const char *contig_page_bad(const struct page *page)
{
	if (likely(!contig_page_bad_bits(page)))
		return NULL;
	if (PageTail(page))
		return "tail page of a compound page";
	if (PageBuddy(page) || page_ref_count(page) <= 0)
		return "page is not allocated (a free page in the range?)";
	if (PageHead(page))
		return "compound page: free it with put_page() or __free_pages()";
	return "high-order block not split: split_page() it first";
}

/* ---- split_page ------------------------------------------------------------ */

int split_page(struct page *page, unsigned int order)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long pfn, nr;
	bool movable;

	if (contig_no_machine(__func__))
		return -EINVAL;
	if (unlikely(!page || !pl_page_in_machine(m, page))) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: page %p outside the machine (pfn out of range)", __func__,
				    (const void *)page);
		return -EINVAL;
	}
	pfn = page_to_pfn(page);
	if (unlikely(order > MAX_PAGE_ORDER))
		return contig_bad_input(__func__, pfn, "order above MAX_PAGE_ORDER");
	if (unlikely(!IS_ALIGNED(pfn, 1UL << order)))
		return contig_bad_input(__func__, pfn, "pfn misaligned for its order");
	if (unlikely(PageHead(page) || PageTail(page)))
		return contig_bad_input(__func__, pfn, "compound page: split_page() takes "
					"non-compound blocks");
	if (unlikely(PageBuddy(page) || page_ref_count(page) <= 0))
		return contig_bad_input(__func__, pfn, "page is not allocated");
	if (unlikely(page->alloc_order != order))
		return contig_bad_input(__func__, pfn, "order differs from the allocation's");

	/* Each page becomes an allocation of its own: refcount 1, order 0. */
	nr = 1UL << order;
	movable = page->flags & (1UL << PG_movable);
	WRITE_ONCE(page->alloc_order, 0);
	for (unsigned long i = 1; i < nr; i++) {
		set_page_count(&page[i], 1);
		if (movable)
			SetPageFlag(&page[i], PG_movable);
	}
	return 0;
}

/* ---- freeing a range: the two designs ------------------------------------ */

/*
 * v6.18's free_contig_range() loop: every page through __free_page(), which
 * drops the reference and frees the page at zero as an order-0 block.
 * Return: pages whose refcount was not 1 (the kernel's warning count).
 */
static unsigned long free_contig_range_pages(unsigned long pfn, unsigned long nr_pages)
{
	unsigned long in_use = 0;

	for (; nr_pages--; pfn++) {
		struct page *page = pfn_to_page(pfn);

		in_use += page_ref_count(page) != 1;
		__free_page(page);
	}
	return in_use;
}

/*
 * put_page_testzero() that will not go below zero (a page listed twice in
 * free_pages_bulk()). Return: 1 if the count reached zero, 0 if still
 * held, -1 if there was no reference to drop.
 */
static inline int contig_put_testzero(struct page *page)
{
	int old = __atomic_load_n(&page->_refcount, __ATOMIC_RELAXED);

	do {
		if (unlikely(old <= 0))
			return -1;
	} while (!__atomic_compare_exchange_n(&page->_refcount, &old, old - 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	return old == 1;
}

/*
 * free_pages_prepare() of an order-0 page whose last reference this thread
 * has just dropped: its _refcount is 0 (nothing raises a zero count), so
 * of free_page_is_bad()'s tests only PageBuddy and the flags are left, and
 * one load of the flags serves them and the reset. Anything set goes to
 * free_pages_prepare() itself, which reports or resets it as ever.
 */
static __always_inline bool free_page_prepare_dropped(struct page *page)
{
	unsigned long flags = page_flags(page);

	if (likely(!(flags & (PAGE_FLAGS_CHECK_AT_FREE | PAGE_FLAGS_RESET_AT_FREE)) &&
		   READ_ONCE(page->page_type) != PGTY_buddy && !page->alloc_order))
		return true;
	return free_pages_prepare(page, 0);
}

/* The largest order a chunk at @pfn of at most @nr_pages pages may have. */
static inline unsigned int contig_chunk_order(unsigned long pfn, unsigned long nr_pages)
{
	unsigned int order = (unsigned int)(63 - __builtin_clzl(nr_pages));

	if (pfn) {
		unsigned int align = (unsigned int)__builtin_ctzl(pfn);

		order = min(order, align);
	}
	return min(order, (unsigned int)MAX_PAGE_ORDER);
}

/*
 * Seed 001's free_prepared_contig_range(): free [@pfn, @pfn + @nr_pages),
 * every page already prepared with refcount 0, as the largest naturally
 * aligned power-of-two chunks. __free_frozen_pages() then sends each chunk
 * to the PCP or to the buddy by its order, as for any other free.
 */
static void free_prepared_contig_range(struct page *page, unsigned long pfn,
				       unsigned long nr_pages)
{
	while (nr_pages) {
		unsigned int order = contig_chunk_order(pfn, nr_pages);

		__free_frozen_pages(page, order, FPI_PREPARED);
		page += 1UL << order;
		pfn += 1UL << order;
		nr_pages -= 1UL << order;
	}
}

/* Where a run starting at @pfn must end: the next section or the zone's end. */
static inline unsigned long contig_run_limit(const struct page *page, unsigned long pfn)
{
	unsigned long section_end = ALIGN_DOWN(pfn, PAGES_PER_SECTION) + PAGES_PER_SECTION;

	return min(section_end, zone_end_pfn(page_zone(page)));
}

/*
 * Seed 001's __free_contig_range() loop (with Zi Yan's simplification and
 * his suggestion to compare section numbers of pfns): one refcount drop
 * and one free_pages_prepare() per page, then one free per chunk.
 * Return: pages whose refcount was not 1.
 */
static __attribute__((noinline)) unsigned long free_contig_range_chunked(unsigned long pfn,
							unsigned long nr_pages)
{
	unsigned long end = pfn + nr_pages, in_use = 0;
	struct page *page = pfn_to_page(pfn);

	while (pfn < end) {
		/* Runs never pass a section boundary or the zone's end. */
		unsigned long seg_end = min(end, contig_run_limit(page, pfn)), run_pfn = pfn;
		struct page *run = page;

		for (; pfn < seg_end; pfn++, page++) {
			int zero = contig_put_testzero(page);

			if (likely(zero > 0 && free_page_prepare_dropped(page)))
				continue;
			/* Still referenced, or refused (and leaked): the run ends here. */
			if (zero <= 0) {
				in_use++;
				if (zero < 0)
					contig_bad_input("__free_contig_range", pfn,
							 "page is not allocated (double free?)");
			}
			if (pfn > run_pfn)
				free_prepared_contig_range(run, run_pfn, pfn - run_pfn);
			run_pfn = pfn + 1;
			run = page + 1;
		}
		if (pfn > run_pfn)
			free_prepared_contig_range(run, run_pfn, pfn - run_pfn);
	}
	return in_use;
}

/*
 * __free_contig_range() of a run of one page (every vfree() of a one-page
 * area under seed 000): one order-0 chunk, the same free as the chunked loop
 * makes of it, without the loop's run bookkeeping (run limits, chunk
 * orders, the callee-saved registers of the general loop). That bookkeeping
 * cost pagelab ~140 instructions per one-page run, against 11 now
 * (callgrind, fix_size p:1), where the kernel's loop does a refcount drop,
 * a section compare and one order computation; on seed 000's p:1 rows it
 * alone made a 4% regression in instructions that the seed's table does
 * not show.
 * Return: 1 if the page is still in use, else 0.
 */
static inline unsigned long free_contig_one(unsigned long pfn)
{
	struct page *page = pfn_to_page(pfn);
	int zero = contig_put_testzero(page);

	if (likely(zero > 0)) {
		if (likely(free_pages_prepare(page, 0)))
			__free_frozen_pages(page, 0, FPI_PREPARED);
		return 0;
	}
	if (zero < 0)
		contig_bad_input("__free_contig_range", pfn, "page is not allocated (double free?)");
	return 1;
}

/* Free a checked range the way the machine's design says. */
static inline unsigned long free_contig_range_checked(struct pl_machine *m, unsigned long pfn,
						      unsigned long nr_pages)
{
	if (!m->config.design.free_contig_batch)
		return free_contig_range_pages(pfn, nr_pages);
	if (nr_pages == 1)
		return free_contig_one(pfn);
	return free_contig_range_chunked(pfn, nr_pages);
}

/* Every page of [pfn, pfn + nr_pages) in the machine and an allocated order-0 page. */
static int check_contig_range(const char *fn, unsigned long pfn, unsigned long nr_pages)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long flags = 0, orders = 0;
	const struct page *page;
	unsigned int refs = 0;

	if (unlikely(pfn >= m->max_pfn || nr_pages > m->max_pfn - pfn)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: range [%#lx, %#lx + %#lx) outside the machine "
				    "(pfn out of range)", fn, pfn, pfn, nr_pages);
		return -EINVAL;
	}
	/*
	 * contig_page_bad_bits() of every page, with no branch per page and
	 * the fields ORed into their own accumulators (fewer operations per
	 * page than testing each); on a hit, a second pass finds the page.
	 */
	page = pfn_to_page(pfn);
#pragma GCC unroll 4
	for (unsigned long i = 0; i < nr_pages; i++) {
		unsigned int ref = (unsigned int)page_ref_count(page + i);

		refs |= (ref - 1) | ref;
		flags |= page_flags(page + i);
		orders |= page[i].alloc_order;
	}
	if (likely(!(refs >> 31) && !(flags & (1UL << PG_head)) && !orders))
		return 0;
	for (unsigned long i = 0; i < nr_pages; i++) {
		const char *why = contig_page_bad(page + i);

		if (why)
			return contig_bad_input(fn, pfn + i, why);
	}
	/* Not reached unless a racing caller changed a page in between. */
	return contig_bad_input(fn, pfn, "page state changed during the check (a racing free?)");
}

/* Both entries: check the whole range, then free it. Return: pages still in use, or -errno. */
static long free_contig_range_fn(const char *fn, unsigned long pfn, unsigned long nr_pages)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long in_use;
	int err;

	if (contig_no_machine(fn))
		return -EINVAL;
	err = check_contig_range(fn, pfn, nr_pages);
	if (err)
		return err;
	in_use = free_contig_range_checked(m, pfn, nr_pages);
	pl_debug_check(m, 3, fn);
	return (long)in_use;
}

long __free_contig_range(unsigned long pfn, unsigned long nr_pages)
{
	return free_contig_range_fn(__func__, pfn, nr_pages);
}

long free_contig_range(unsigned long pfn, unsigned long nr_pages)
{
	long in_use = free_contig_range_fn(__func__, pfn, nr_pages);

	if (unlikely(in_use > 0))
		pl_warn_ratelimited("free_contig_range: %ld pages are still in use!", in_use);
	return in_use;
}

long free_pages_bulk(unsigned long nr, struct page **pages)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long in_use = 0, start, n;

	if (contig_no_machine(__func__))
		return -EINVAL;
	if (!nr)
		return 0;
	if (unlikely(!pages)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: NULL page array", __func__);
		return -EINVAL;
	}
	for (unsigned long i = 0; i < nr; i++) {
		const char *why;

		if (unlikely(!pages[i] || !pl_page_in_machine(m, pages[i]))) {
			pl_count(PL_EV_BAD_INPUT, 1);
			pl_warn_ratelimited("%s: pages[%lu] = %p outside the machine (pfn out of range)",
					    __func__, i, (const void *)pages[i]);
			return -EINVAL;
		}
		why = contig_page_bad(pages[i]);
		if (unlikely(why))
			return contig_bad_input(__func__, page_to_pfn(pages[i]), why);
	}

	/* As vfree() does with seed 000: one __free_contig_range() per pfn run. */
	start = page_to_pfn(pages[0]);
	n = 1;
	for (unsigned long i = 1; i < nr; i++) {
		unsigned long pfn = page_to_pfn(pages[i]);

		if (pfn == start + n) {
			n++;
			continue;
		}
		in_use += free_contig_range_checked(m, start, n);
		start = pfn;
		n = 1;
	}
	in_use += free_contig_range_checked(m, start, n);
	pl_debug_check(m, 3, __func__);
	return (long)in_use;
}

/* ---- alloc_contig_range / alloc_contig_pages ---------------------------- */

#define CONTIG_GFP_ALLOWED                                                                \
	(__GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL | __GFP_HIGH | __GFP_NOWARN | \
	 __GFP_ZERO | __GFP_COMP | GFP_MOVABLE_MASK | __GFP_DMA32)

static inline unsigned long contig_align_up(unsigned long x, unsigned long a)
{
	return ALIGN_DOWN(x + a - 1, a);
}

/*
 * Walk the free blocks from @base (no free block straddles it) to @end.
 * With @owned_free (a candidate hint), a PCP-owned free chunk counts as
 * free: pcp_block_economy's drains keep partial blocks, and isolation takes
 * them back (economy_release_range()); seed 003's drains leave none.
 * Return: the first pfn of [@start, @end) not in a free block, or @end if
 * they all are. Context: zone->lock, or racy (a hint only).
 */
static unsigned long first_busy_pfn(unsigned long base, unsigned long start, unsigned long end,
				    bool owned_free)
{
	unsigned long pfn = base;

	while (pfn < end) {
		const struct page *page = pfn_to_page(pfn);

		if (PageBuddy(page) || (owned_free && PagePCPBuddy(page))) {
			unsigned int order = (unsigned int)READ_ONCE(page->private);

			if (unlikely(order > MAX_PAGE_ORDER))	/* racy read */
				return max(pfn, start);
			pfn += 1UL << order;
			continue;
		}
		if (pfn >= start)
			return pfn;
		pfn++;
	}
	return end;
}

/* Free [pfn, end) of an isolated range back to the ISOLATE lists. Context: zone->lock. */
static void contig_give_back(struct zone *zone, unsigned long pfn, unsigned long end)
{
	while (pfn < end) {
		unsigned int order = contig_chunk_order(pfn, end - pfn);

		__free_one_page(pfn_to_page(pfn), pfn, zone, order, MIGRATE_ISOLATE, FPI_NONE);
		pfn += 1UL << order;
	}
}

/*
 * Take [start, end) off the ISOLATE lists: every free block overlapping it
 * is removed whole, and its parts outside the range go back (the kernel's
 * isolate_freepages_range() plus the head/tail excess it frees).
 * Context: zone->lock; the range checked free.
 */
static void contig_take_range(struct zone *zone, unsigned long base, unsigned long start,
			      unsigned long end)
{
	unsigned long pfn;
	struct page *page;
	unsigned int order;

	for_each_buddy_in_range(page, order, pfn, base, end) {
		unsigned long block_end = pfn + (1UL << order);

		if (block_end <= start)
			continue;
		del_page_from_free_list(page, zone, order, MIGRATE_ISOLATE);
		if (pfn < start)
			contig_give_back(zone, pfn, start);
		if (block_end > end)
			contig_give_back(zone, end, block_end);
	}
}

static int check_contig_gfp(const char *fn, unsigned long start, unsigned long nr, gfp_t gfp)
{
	if (unlikely((gfp & GFP_MOVABLE_MASK) == GFP_MOVABLE_MASK))
		return pl_bad_gfp(fn, gfp);
	if (unlikely(gfp & ~CONTIG_GFP_ALLOWED)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: gfp %#x has flags alloc_contig does not take", fn, gfp);
		return -EINVAL;
	}
	if ((gfp & __GFP_COMP) &&
	    (nr & (nr - 1) || !IS_ALIGNED(start, nr) || nr > MAX_ORDER_NR_PAGES)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: __GFP_COMP needs a naturally aligned power-of-two range "
				    "of at most %lu pages, got [%#lx, +%#lx)", fn,
				    MAX_ORDER_NR_PAGES, start, nr);
		return -EINVAL;
	}
	return 0;
}

int alloc_contig_range(unsigned long start, unsigned long end, gfp_t gfp)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long iso_start, iso_end, nr, busy;
	int migratetype = gfp_migratetype(gfp);
	struct zone *zone;
	int err;

	if (contig_no_machine(__func__))
		return -EINVAL;
	if (unlikely(start >= end || end > m->max_pfn)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: range [%#lx, %#lx) empty or outside the machine "
				    "(pfn out of range)", __func__, start, end);
		return -EINVAL;
	}
	nr = end - start;
	zone = page_zone(pfn_to_page(start));
	if (unlikely(!zone_spans_pfn(zone, end - 1) ||
		     ((gfp & __GFP_DMA32) && zone->zone_idx != ZONE_DMA32))) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: range [%#lx, %#lx) is not inside one allowed zone",
				    __func__, start, end);
		return -EINVAL;
	}
	err = check_contig_gfp(__func__, start, nr, gfp);
	if (err)
		return err;

	/* Whole MAX_ORDER units, clipped to the zone: see page_isolation.c. */
	iso_start = max(ALIGN_DOWN(start, MAX_ORDER_NR_PAGES), zone->zone_start_pfn);
	iso_end = min(contig_align_up(end, MAX_ORDER_NR_PAGES), zone_end_pfn(zone));
	err = start_isolate_page_range(zone, iso_start, iso_end);
	if (err)
		return err;
	/* Pages of the range cached on a PCP come home to the ISOLATE lists. */
	drain_all_pages(zone);

	spin_lock(&zone->lock);
	busy = first_busy_pfn(iso_start, start, end, false);
	spin_unlock(&zone->lock);
	/* busy pages: move what is movable out, its sources come home to the ISOLATE lists */
	if (busy != end) {
		err = alloc_contig_migrate_range(zone, busy, end);
		if (err) {
			undo_isolate_page_range(zone, iso_start, iso_end);
			return err;
		}
		drain_all_pages(zone);
	}
	spin_lock(&zone->lock);
	busy = first_busy_pfn(iso_start, start, end, false);
	if (busy == end)
		contig_take_range(zone, iso_start, start, end);
	spin_unlock(&zone->lock);
	undo_isolate_page_range(zone, iso_start, iso_end);
	if (busy != end)
		return -EBUSY;

	if (gfp & __GFP_COMP) {
		prep_new_page(pfn_to_page(start), (unsigned int)__builtin_ctzl(nr), gfp,
			      migratetype);
		pl_count(PL_EV_PGALLOC, 1);
	} else {
		for (unsigned long pfn = start; pfn < end; pfn++)
			prep_new_page(pfn_to_page(pfn), 0, gfp, migratetype);
		pl_count(PL_EV_PGALLOC, nr);
	}
	pl_count(PL_EV_PGALLOC_PAGES, nr);
	pl_count(PL_EV_ZONE_LOCK_PAGES, nr);
	pl_debug_check(m, 2, __func__);
	return 0;
}

/*
 * pfn_range_valid_contig(): with a holder of movable pages, a candidate is
 * any range of the zone without a reserved page, as the kernel's (which
 * does not look at what is allocated): alloc_contig_range() migrates what
 * it can and fails on the rest. Return: the first reserved pfn, or @end.
 */
static unsigned long first_reserved_pfn(unsigned long pfn, unsigned long end)
{
	for (; pfn < end; pfn++)
		if (PageReserved(pfn_to_page(pfn)))
			return pfn;
	return end;
}

static unsigned long roundup_pow_of_two_ul(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << (64 - __builtin_clzl(n - 1));
}

struct page *alloc_contig_pages(unsigned long nr_pages, gfp_t gfp)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long align;

	if (contig_no_machine(__func__))
		return NULL;
	if (unlikely(!nr_pages || nr_pages > m->max_pfn)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("%s: %lu pages: none, or more than the machine has", __func__,
				    nr_pages);
		return NULL;
	}
	if (check_contig_gfp(__func__, 0, nr_pages, gfp))
		return NULL;
	/*
	 * A compound page must be naturally aligned (check_contig_gfp()); a
	 * range of order-0 pages needs no more than a pageblock. The kernel
	 * aligns every candidate to nr_pages itself.
	 */
	align = roundup_pow_of_two_ul(nr_pages);
	if (!(gfp & __GFP_COMP))
		align = min(align, pageblock_nr_pages);

	for (int zi = (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL; zi >= 0; zi--) {
		struct zone *zone = &m->node_zones[zi];
		unsigned long zend = zone_end_pfn(zone), pfn;

		if (!populated_zone(zone))
			continue;
		/* The candidate check reads the buddy only: bring the PCP pages home. */
		drain_all_pages(zone);
		pfn = contig_align_up(zone->zone_start_pfn, align);
		while (pfn + nr_pages <= zend) {
			unsigned long base = max(ALIGN_DOWN(pfn, MAX_ORDER_NR_PAGES),
						 zone->zone_start_pfn);
			unsigned long busy;

			if (m->migrate_ops) {
				/* every candidate without a reserved page is tried, the next one past it */
				busy = first_reserved_pfn(pfn, pfn + nr_pages);
				if (busy == pfn + nr_pages &&
				    !alloc_contig_range(pfn, pfn + nr_pages, gfp))
					return pfn_to_page(pfn);
				pfn = contig_align_up(busy == pfn + nr_pages ? busy : busy + 1, align);
				continue;
			}
			/* no holder: nothing moves, only a free range can be taken */
			busy = first_busy_pfn(base, pfn, pfn + nr_pages, true);

			if (busy == pfn + nr_pages) {
				if (!alloc_contig_range(pfn, pfn + nr_pages, gfp))
					return pfn_to_page(pfn);
				busy = pfn;
			}
			/* The next candidate that does not contain the busy page. */
			pfn = contig_align_up(busy + 1, align);
		}
	}
	pl_count(PL_EV_ALLOC_FAIL, 1);
	if (!(gfp & __GFP_NOWARN))
		pl_warn_ratelimited("alloc_contig_pages: no free range of %lu pages, mode:%#x",
				    nr_pages, gfp);
	return NULL;
}
