// SPDX-License-Identifier: MIT
/*
 * page_isolation.c - pageblock isolation for alloc_contig_range(), after
 * the kernel's mm/page_isolation.c: a range of pageblocks is marked
 * MIGRATE_ISOLATE (the PB_migrate_isolate bit on top of the real type, as
 * 6.17+ keeps it) and its free blocks move to the ISOLATE free lists, where
 * no allocation looks. Pages freed into an isolated pageblock go straight
 * to those lists (__free_frozen_pages() checks), so the range only ever
 * gains free pages until the isolation is undone.
 *
 *   real type lists  --start_isolate_page_range-->  free_list[MIGRATE_ISOLATE]
 *   real type lists  <--undo_isolate_page_range---  (re-freed, re-merged)
 *
 * Where pagelab differs: the kernel isolates just the pageblocks the range
 * touches and splits a free buddy that straddles the isolation boundary.
 * Here the caller isolates whole MAX_ORDER_NR_PAGES-aligned units (clipped
 * to the zone), as kernels before 6.0 did, so no free block can straddle
 * the boundary and none ever needs splitting.
 *
 * Invariants: zone->nr_isolate_pageblock is the number of pageblocks with
 * PB_migrate_isolate set (recounted by the checker); a free block of an
 * isolated pageblock is on free_list[MIGRATE_ISOLATE] and is not counted in
 * NR_FREE_PAGES or NR_FREE_PAGES_BLOCKS (account_freepages() skips ISOLATE).
 *
 * Locking: both functions take zone->lock for their whole work.
 */
#include "internal.h"

static inline int pageblock_real_mt(const struct zone *zone, unsigned long pfn)
{
	return (int)(zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)] & PB_migratetype_mask);
}

static inline bool pageblock_isolated(const struct zone *zone, unsigned long pfn)
{
	return zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)] & PB_migrate_isolate;
}

/**
 * start_isolate_page_range() - isolate the pageblocks of [@start_pfn, @end_pfn).
 * @zone: the zone that spans the whole range.
 * @start_pfn, @end_pfn: pageblock aligned; no free block may straddle
 *                       either end (the caller aligns to MAX_ORDER_NR_PAGES
 *                       or to the zone's ends).
 * Context: takes zone->lock.
 * Return: 0, or -EBUSY (nothing changed) if a pageblock is already
 * isolated, by another alloc_contig_range() in flight.
 */
int start_isolate_page_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn)
{
	unsigned long pfn;

	/* pcp_block_economy: most free pages are owned by PCPs; take them back. */
	if (design_block_economy(zone))
		economy_release_range(zone, start_pfn, end_pfn);

	spin_lock(&zone->lock);
	for (pfn = start_pfn; pfn < end_pfn; pfn += pageblock_nr_pages) {
		if (pageblock_isolated(zone, pfn)) {
			spin_unlock(&zone->lock);
			return -EBUSY;
		}
	}
	/*
	 * Mark every pageblock first: a free MAX_PAGE_ORDER block spans two
	 * of them and must land on the ISOLATE list only once both say so.
	 * It sits on its first pageblock's real-type list, which is the type
	 * __move_freepages_block() of that pageblock moves it from.
	 */
	for (pfn = start_pfn; pfn < end_pfn; pfn += pageblock_nr_pages) {
		set_pageblock_migratetype(pfn_to_page(pfn), MIGRATE_ISOLATE);
		zone->nr_isolate_pageblock++;
	}
	for (pfn = start_pfn; pfn < end_pfn; pfn += pageblock_nr_pages)
		__move_freepages_block(zone, pfn, pageblock_real_mt(zone, pfn), MIGRATE_ISOLATE);
	spin_unlock(&zone->lock);
	return 0;
}

/**
 * undo_isolate_page_range() - give the pageblocks of [@start_pfn, @end_pfn)
 * back their real migratetypes, and their free blocks back to the real
 * free lists.
 *
 * While isolated, blocks of pageblocks of different real types may have
 * merged (every isolated pageblock has the same type, ISOLATE). So rather
 * than moving blocks between lists, each free block is taken off the
 * ISOLATE list and freed again, one pageblock at a time when larger than
 * one (split_large_buddy()), merging as the real types allow.
 * Context: takes zone->lock.
 */
void undo_isolate_page_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn)
{
	struct list_head blocks;
	unsigned long pfn;
	struct page *page;
	unsigned int order;

	INIT_LIST_HEAD(&blocks);
	spin_lock(&zone->lock);
	/* Off the lists first, so that no re-free merges with a still-isolated buddy. */
	for_each_buddy_in_range(page, order, pfn, start_pfn, end_pfn) {
		del_page_from_free_list(page, zone, order, MIGRATE_ISOLATE);
		WRITE_ONCE(page->private, order);	/* not PageBuddy now: private is ours */
		list_add_tail(&page->buddy_list, &blocks);
	}
	for (pfn = start_pfn; pfn < end_pfn; pfn += pageblock_nr_pages) {
		set_pageblock_migratetype(pfn_to_page(pfn), pageblock_real_mt(zone, pfn));
		zone->nr_isolate_pageblock--;
	}
	while (!list_empty(&blocks)) {
		page = list_first_entry(&blocks, struct page, buddy_list);
		order = (unsigned int)page->private;
		list_del(&page->buddy_list);
		WRITE_ONCE(page->private, 0);
		split_large_buddy(zone, page, page_to_pfn(page), order, FPI_NONE);
	}
	spin_unlock(&zone->lock);
}
