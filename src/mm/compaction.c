// SPDX-License-Identifier: MIT
/*
 * compaction.c - memory compaction as mm/compaction.c of Linux 6.18 runs
 * it, in pagelab's own code: compact_zone() with its two scanners, the
 * migrate scanner walking up from the zone's start isolating movable
 * allocated blocks (isolate_migratepages_block()), the free scanner walking
 * down from its end taking free blocks off the buddy with no allocation
 * event (isolate_freepages_block(), __isolate_free_page()); migration of
 * each isolated block into an isolated free one; the pageblock skip bits
 * (compaction_skip.c keeps them, their reset, the deferral and
 * compaction_suitable()). Direct compaction
 * (try_to_compact_pages(), compaction_capture()) is in compaction_direct.c,
 * kcompactd and proactive compaction in kcompactd.c, both on compact_zone().
 *
 * Migration needs a holder: a movable allocated block is moved only if the
 * machine has migrate operations (pl_set_migrate_ops()): the holder says
 * whether it will let the block go and is told its new page, so that the
 * next free names the new block. Without them no page is movable, as a
 * kernel page that is on no LRU and has no movable_ops. Unmovable and
 * reclaimable allocations are never moved (PG_movable is set only for
 * MIGRATE_MOVABLE allocations).
 *
 * The free-list searches that pick where the scanners work:
 * fast_isolate_freepages() (a free block high in the zone, from the
 * MOVABLE lists' tails) and fast_find_migrateblock() (a partly free block
 * low in the zone, for costly orders), each rotating the list it read so
 * that the next search sees other entries.
 *
 * The free scanner of async compaction samples: it looks at every
 * COMPACT_CLUSTER_MAX-th pfn of a block, back to every pfn after a block
 * it took pages from and doubling again after each fruitless one; a block
 * it went through is skipped afterwards. A migration that finds no target
 * (the kernel's -ENOMEM, pagelab's only migration failure: a holder
 * refuses at isolation, never later) ends the run as COMPACT_CONTENDED
 * unless the scanners met; otherwise async and sync-light compaction
 * finish the pageblock they were in (finish_pageblock) before moving on.
 *
 * Not modelled (named so that no figure claims it): lru_add_drain(), async
 * compaction's contention aborts, the migrate scanner's skip_on_failure
 * (async direct compaction giving up an order-aligned block at its first
 * page that will not isolate).
 *
 * Locking: the free scanner takes zone->lock per pageblock (the kernel's
 * compact_lock_irqsave() per block, without its need_resched() drops) and
 * reads free pages' orders only under it; the migrate scanner reads an
 * allocated page's state only while it holds a speculative reference
 * (page_try_get(), as the kernel's folio_try_get()), and the holder
 * decides under its own lock; migration runs unlocked on the compacting
 * vCPU, as migrate_pages().
 * The capture control is the calling thread's (the kernel's
 * current->capture_control): a direct compactor runs inside one allocation.
 */
#include <limits.h>

#include <string.h>
#include "internal.h"
#include "validate.h"
#include "pagelab/compaction.h"

/* ALIGN(): round @x up to a multiple of the power of two @a */
#define ALIGN_UP_PL(x, a) ALIGN_DOWN((x) + (a) - 1, (a))

_Thread_local struct capture_control *pl_capture_control;

/* ---- the free scanner ---------------------------------------------------------------- */

/*
 * __isolate_free_page(): take a free block off the buddy for compaction,
 * if the zone stays above its min watermark. No allocation event fires.
 */
static bool __isolate_free_page(struct zone *zone, struct page *page, unsigned int order)
{
	int mt = get_pageblock_migratetype(page);

	if (!is_migrate_isolate(mt)) {
		unsigned long watermark = zone->_watermark[WMARK_MIN] + (1UL << order);

		if (!zone_watermark_ok(zone, 0, watermark, 0, 0))
			return false;
	}
	del_page_from_free_list(page, zone, order, mt);
	return true;
}

/*
 * Free pages of one pageblock [*@start, @end) onto cc->freepages, looking
 * at every @stride-th pfn (past a free block taken, from its end); *@start
 * is left where the scan stopped (@end when it went through the block).
 * Return: pages taken.
 */
static unsigned long isolate_freepages_block(struct compact_control *cc, unsigned long *start,
					     unsigned long end, unsigned int stride)
{
	struct zone *zone = cc->zone;
	unsigned long pfn, nr_scanned = 0, total = 0;

	spin_lock(&zone->lock);
	for (pfn = *start; pfn < end; pfn += stride) {
		struct page *page = pfn_to_page(pfn);
		unsigned int order;

		nr_scanned++;
		if (!PageBuddy(page))
			continue;
		order = buddy_order(page);
		if (pfn + (1UL << order) > end || !__isolate_free_page(zone, page, order))
			break;
		WRITE_ONCE(page->private, order);
		list_add_tail(&page->lru, &cc->freepages[order]);
		cc->nr_freepages += 1UL << order;
		total += 1UL << order;
		nr_scanned += (1UL << order) - 1;
		if (cc->nr_freepages >= cc->nr_migratepages) {
			pfn += 1UL << order;
			break;
		}
		pfn += (1UL << order) - 1;
	}
	spin_unlock(&zone->lock);
	*start = min(pfn, end);
	cc->total_free_scanned += nr_scanned;
	pl_count(PL_EV_COMPACT_ISOLATED, total);
	pl_count(PL_EV_COMPACT_ISOLATED_FREE, total);
	return total;
}

/* suitable_migration_target(): a block the free scanner may take pages from. */
static bool suitable_migration_target(struct compact_control *cc, unsigned long pfn)
{
	struct page *page = pfn_to_page(pfn);
	bool whole_free;

	/*
	 * a free block of the request's order (a pageblock for
	 * compact_memory) is better left for the allocation; its order is
	 * read under zone->lock (other threads allocate from it)
	 */
	spin_lock(&cc->zone->lock);
	whole_free = PageBuddy(page) &&
		     buddy_order(page) >= (cc->order > 0 ? (unsigned int)cc->order : pageblock_order);
	spin_unlock(&cc->zone->lock);
	if (whole_free)
		return false;
	if (cc->ignore_block_suitable)
		return true;
	return is_migrate_movable(get_pageblock_migratetype(page));
}

/* ---- the free-list searches (6.18's fast_isolate_freepages(), fast_find_migrateblock()) ---- */

/*
 * freelist_scan_limit(): how many free-list entries a search may look at;
 * it shrinks as searches fail in a row.
 */
static unsigned int freelist_scan_limit(const struct compact_control *cc)
{
	unsigned int shift = min(cc->fast_search_fail, 31u);

	return (COMPACT_CLUSTER_MAX >> shift) + 1;
}

/*
 * move_freelist_head(): @freepage becomes the first entry of @freelist,
 * those before it go to the tail (the free scanner's search reads from
 * the tail: the next one skips what this one saw). move_freelist_tail():
 * @freepage and those before it go to the tail (the migrate search reads
 * from the head). Both rotate the list around its head. Context: zone->lock.
 */
static void move_freelist_head(struct list_head *freelist, struct page *freepage)
{
	if (freelist->next != &freepage->buddy_list)
		list_move_tail(freelist, &freepage->buddy_list);
}

static void move_freelist_tail(struct list_head *freelist, struct page *freepage)
{
	if (freelist->prev != &freepage->buddy_list)
		list_move(freelist, &freepage->buddy_list);
}

/*
 * next_search_order(): the order below @order, wrapping to cc->order - 1;
 * -1 once the search is back where it began (then the next search begins
 * an order lower).
 */
static int next_search_order(struct compact_control *cc, int order)
{
	if (--order < 0)
		order = cc->order - 1;
	if (order == cc->search_order) {
		if (--cc->search_order < 0)
			cc->search_order = cc->order - 1;
		return -1;
	}
	return order;
}

/*
 * fast_isolate_around(): after a free-list hit at @pfn, take the rest of
 * its pageblock's free pages too (not for async direct compaction), and
 * skip the block later if the scan went through it.
 */
static void fast_isolate_around(struct compact_control *cc, unsigned long pfn)
{
	struct zone *zone = cc->zone;
	unsigned long start, end;

	if (cc->nr_freepages >= cc->nr_migratepages)
		return;
	if (cc->direct_compaction && cc->mode == MIGRATE_ASYNC)
		return;
	start = max(ALIGN_DOWN(pfn, pageblock_nr_pages), zone->zone_start_pfn);
	end = min(ALIGN_DOWN(pfn, pageblock_nr_pages) + pageblock_nr_pages, zone_end_pfn(zone));
	isolate_freepages_block(cc, &start, end, 1);
	if (start == end && !cc->no_set_skip_hint)
		set_pageblock_skip(zone, pfn);
}

/*
 * fast_isolate_freepages(): before the linear free scan, search the
 * MOVABLE free lists below cc->order, from their tails, for a block in the
 * top quarter of the space between the scanners (the top half will do if
 * the quarter has none), isolate it and the free pages around it. A search
 * starting the free scanner's pass looks deeper and, finding nothing, moves
 * the free scanner to the highest free block it saw (or, for a direct
 * compactor, to the top half's lower bound). Costly or not, it needs
 * cc->order > 0: compact_memory has nothing to search for.
 */
static void fast_isolate_freepages(struct compact_control *cc)
{
	struct zone *zone = cc->zone;
	unsigned int limit = max(1u, freelist_scan_limit(cc) >> 1);
	unsigned long nr_scanned = 0, low_pfn, min_pfn, highest = 0, distance;
	struct page *page = NULL;
	bool scan_start = false;
	int order;

	if (cc->order <= 0)
		return;
	if (cc->free_pfn >= zone_compact(zone)->compact_init_free_pfn) {
		limit = pageblock_nr_pages >> 1;
		scan_start = true;
	}
	distance = cc->free_pfn - cc->migrate_pfn;
	low_pfn = ALIGN_DOWN(cc->free_pfn - (distance >> 2), pageblock_nr_pages);
	min_pfn = ALIGN_DOWN(cc->free_pfn - (distance >> 1), pageblock_nr_pages);
	if (min_pfn > low_pfn)
		low_pfn = min_pfn;
	/* from the order the last search isolated at, or the next after a failure */
	cc->search_order = min(cc->order - 1, cc->search_order);

	for (order = cc->search_order; !page && order >= 0; order = next_search_order(cc, order)) {
		struct free_area *area = &zone->free_area[order];
		struct list_head *freelist = &area->free_list[MIGRATE_MOVABLE], *pos;
		struct page *last = NULL;
		unsigned int order_scanned = 0;
		unsigned long high_pfn = 0;

		if (!READ_ONCE(area->nr_free))
			continue;
		spin_lock(&zone->lock);
		for (pos = freelist->prev; pos != freelist; pos = pos->prev) {
			struct page *freepage = list_entry(pos, struct page, buddy_list);
			unsigned long pfn = page_to_pfn(freepage);

			last = freepage;
			order_scanned++;
			nr_scanned++;
			if (pfn >= highest)
				highest = max(ALIGN_DOWN(pfn, pageblock_nr_pages), zone->zone_start_pfn);
			if (pfn >= low_pfn) {
				cc->fast_search_fail = 0;
				cc->search_order = order;
				page = freepage;
				break;
			}
			if (pfn >= min_pfn && pfn > high_pfn) {
				high_pfn = pfn;
				limit >>= 1;	/* a candidate: a shorter search will do */
			}
			if (order_scanned >= limit)
				break;
		}
		/* the top half's best when the quarter had none */
		if (!page && high_pfn)
			last = page = pfn_to_page(high_pfn);
		/* rotate the list: the next search starts below what this one saw */
		if (last)
			move_freelist_head(freelist, last);
		if (page) {
			if (__isolate_free_page(zone, page, (unsigned int)order)) {
				unsigned long n = 1UL << order;

				WRITE_ONCE(page->private, (unsigned long)order);
				list_add_tail(&page->lru, &cc->freepages[order]);
				nr_scanned += n - 1;
				cc->nr_freepages += n;
				pl_count(PL_EV_COMPACT_ISOLATED, n);
				pl_count(PL_EV_COMPACT_ISOLATED_FREE, n);
			} else {
				/* under the min watermark: give the search up */
				order = cc->search_order + 1;
				page = NULL;
			}
		}
		spin_unlock(&zone->lock);
		if (cc->nr_freepages >= cc->nr_migratepages)
			break;
		/* a smaller look at the next order, so the total stays near the limit */
		if (order_scanned >= limit)
			limit = max(1u, limit >> 1);
	}

	if (!page) {
		cc->fast_search_fail++;
		if (scan_start) {
			if (highest >= min_pfn) {
				page = pfn_to_page(highest);
				cc->free_pfn = highest;
			} else if (cc->direct_compaction && zone_spans_pfn(zone, min_pfn)) {
				page = pfn_to_page(max(min_pfn, zone->zone_start_pfn));
				if (!suitable_migration_target(cc, page_to_pfn(page)))
					page = NULL;
				cc->free_pfn = min_pfn;
			}
		}
	}
	if (highest && highest >= zone_compact(zone)->compact_cached_free_pfn) {
		highest -= pageblock_nr_pages;
		zone_compact(zone)->compact_cached_free_pfn = highest;
	}
	cc->total_free_scanned += nr_scanned;
	if (page)
		fast_isolate_around(cc, page_to_pfn(page));
}

/*
 * isolate_freepages(): the free-list search, then the free scanner down
 * from cc->free_pfn until enough targets, a block at a time: async
 * compaction samples each block at a stride (COMPACT_CLUSTER_MAX at
 * first, 1 after a block that gave pages, doubled after one that gave
 * none); a block scanned to its end is marked skip. It stops early where
 * a block could not be scanned through (the min watermark).
 */
static void isolate_freepages(struct compact_control *cc)
{
	struct zone *zone = cc->zone;
	unsigned long block_start, block_end, low_pfn, isolate_start;
	unsigned int stride = cc->mode == MIGRATE_ASYNC ? COMPACT_CLUSTER_MAX : 1;

	fast_isolate_freepages(cc);
	if (cc->nr_freepages)
		return;
	isolate_start = cc->free_pfn;
	block_start = ALIGN_DOWN(isolate_start, pageblock_nr_pages);
	block_end = min(block_start + pageblock_nr_pages, zone_end_pfn(zone));
	low_pfn = ALIGN_UP_PL(cc->migrate_pfn + 1, pageblock_nr_pages);
	for (; block_start >= low_pfn; block_end = block_start, block_start -= pageblock_nr_pages,
	     isolate_start = block_start) {
		unsigned long start = max(block_start, zone->zone_start_pfn), nr_isolated;

		if (!suitable_migration_target(cc, start) || !isolation_suitable(cc, start))
			continue;
		isolate_start = max(isolate_start, start);
		nr_isolated = isolate_freepages_block(cc, &isolate_start, block_end, stride);
		if (isolate_start == block_end)
			update_pageblock_skip(cc, start, block_start - pageblock_nr_pages);
		if (cc->nr_freepages >= cc->nr_migratepages) {
			/* the block is used up: start below it next time */
			if (isolate_start >= block_end)
				isolate_start = block_start - pageblock_nr_pages;
			break;
		} else if (isolate_start < block_end) {
			break;	/* could not go through the block: no use going on */
		}
		stride = nr_isolated ? 1 : min(COMPACT_CLUSTER_MAX, stride << 1);
	}
	cc->free_pfn = isolate_start;
}

/* ---- the migrate scanner --------------------------------------------------------------- */

/* suitable_migration_source(): async direct compaction migrates only blocks of its type. */
static bool suitable_migration_source(struct compact_control *cc, unsigned long pfn)
{
	int block_mt;

	if (cc->mode != MIGRATE_ASYNC || !cc->direct_compaction)
		return true;
	block_mt = get_pageblock_migratetype(pfn_to_page(pfn));
	if (cc->migratetype == MIGRATE_MOVABLE)
		return is_migrate_movable(block_mt);
	return block_mt == cc->migratetype;
}

/*
 * compaction_put_page(): drop the scanner's reference; if the owner freed
 * the page meanwhile, the page is the scanner's to free, as folio_put():
 * a compound block whole, else its first page (the owner's
 * __free_pages() freed the rest).
 */
static void compaction_put_page(struct page *page)
{
	if (__atomic_sub_fetch(&page->_refcount, 1, __ATOMIC_ACQ_REL))
		return;
	__free_frozen_pages(page, PageHead(page) ? READ_ONCE(page->alloc_order) : 0, FPI_NONE);
}

/*
 * isolate_movable(): the block at @page if it is a movable allocation the
 * holder lets go (its head page, its order in *@order), else NULL with
 * *@order the pages to skip past a compound block (0: just this page).
 *
 * The pages it looks at are other threads' to allocate and free, so it
 * reads nothing of a page before it holds a reference on it
 * (page_try_get(), the kernel's folio_try_get()): a free page, a tail or
 * the rest of a block has none and is passed over. With the reference the
 * owner's free cannot take the page back to the buddy, and the flags and
 * order it reads are the allocation's; the holder's isolate() then
 * decides under its own lock, and keeps the page until migrate() or
 * putback(). A compound block of the request's order or more is not
 * isolated (skip_isolation_on_order()): moving it would make no bigger
 * block.
 */
static struct page *isolate_movable(struct compact_control *cc, struct page *page,
				    unsigned int *order)
{
	struct pl_machine *m = cc->zone->machine;
	const struct pl_migrate_ops *ops = m->migrate_ops;
	unsigned int o;
	bool movable;

	*order = 0;
	if (!ops || !page_try_get(page))
		return NULL;
	o = READ_ONCE(page->alloc_order);
	/* the holder's reference and this one: nobody else holds it */
	movable = (page_flags(page) & (1UL << PG_movable)) && page_ref_count(page) == 2;
	if (PageHead(page) && cc->order > 0 && o >= (unsigned int)cc->order) {
		*order = o;
		movable = false;
	}
	if (movable && !ops->isolate(m->migrate_ctx, page, o)) {
		/* isolated: the holder keeps it until migrate() or putback() */
		__atomic_sub_fetch(&page->_refcount, 1, __ATOMIC_RELEASE);
		*order = o;
		return page;
	}
	compaction_put_page(page);
	return NULL;
}

/*
 * isolate_migratepages_block(): movable blocks of [@low, @end) onto
 * cc->migratepages, up to COMPACT_CLUSTER_MAX. Return: the pfn scanning
 * stopped at.
 */
static unsigned long isolate_migratepages_block(struct compact_control *cc, unsigned long low,
						unsigned long end)
{
	unsigned long pfn, nr_scanned = 0, nr_isolated = 0;
	bool skip_updated = false;

	for (pfn = low; pfn < end; pfn++) {
		struct page *page = pfn_to_page(pfn), *head;
		unsigned int order;

		nr_scanned++;
		/* a free block's pages are passed one by one: its order is not read unlocked */
		head = isolate_movable(cc, page, &order);
		if (!head) {
			if (order && order <= MAX_PAGE_ORDER) {
				pfn += (1UL << order) - 1;
				nr_scanned += (1UL << order) - 1;
			}
			continue;
		}
		/*
		 * test_and_set_skip(): the first isolation marks the block, so
		 * that the free-list search and other compactors pass it; a
		 * block already marked is given up unless this is the rescan
		 * of the block the last round left (finish_pageblock).
		 */
		if (!skip_updated && !cc->ignore_skip_hint) {
			unsigned long base = max(ALIGN_DOWN(pfn, pageblock_nr_pages), cc->zone->zone_start_pfn);
			bool skip = get_pageblock_skip(cc->zone, base);

			skip_updated = true;
			if (!skip && !cc->no_set_skip_hint)
				set_pageblock_skip(cc->zone, base);
			if (skip && !cc->finish_pageblock) {
				cc->zone->machine->migrate_ops->putback(cc->zone->machine->migrate_ctx,
									head, order);
				pfn = end;
				break;
			}
		}
		cc->migratepages[cc->nr_migratepages] = head;
		cc->migrate_order[cc->nr_migratepages++] = order;
		nr_isolated += 1UL << order;
		pfn += (1UL << order) - 1;
		nr_scanned += (1UL << order) - 1;
		if (cc->nr_migratepages == COMPACT_CLUSTER_MAX) {
			pfn++;
			break;
		}
	}
	if (pfn > end)
		pfn = end;
	cc->total_migrate_scanned += nr_scanned;
	cc->nr_migrate_pages_isolated += nr_isolated;
	pl_count(PL_EV_COMPACT_ISOLATED, nr_isolated);
	/*
	 * scanned to the block's end for nothing, or finishing it after a
	 * failed migration: skip the block next time (unless the first
	 * isolation marked it already)
	 */
	if (pfn == end && (!nr_isolated || cc->finish_pageblock) && !skip_updated &&
	    !cc->no_set_skip_hint)
		set_pageblock_skip(cc->zone, max(ALIGN_DOWN(low, pageblock_nr_pages), cc->zone->zone_start_pfn));
	return pfn;
}

/* update_fast_start_pfn(): the lowest block a migrate search found, for a linear restart. */
static void update_fast_start_pfn(struct compact_control *cc, unsigned long pfn)
{
	if (cc->fast_start_pfn == ULONG_MAX)
		return;
	if (!cc->fast_start_pfn || pfn < cc->fast_start_pfn)
		cc->fast_start_pfn = pfn;
}

/* reinit_migrate_pfn(): after a failed search, scan on linearly from that block (once). */
static unsigned long reinit_migrate_pfn(struct compact_control *cc)
{
	if (!cc->fast_start_pfn || cc->fast_start_pfn == ULONG_MAX)
		return cc->migrate_pfn;
	cc->migrate_pfn = cc->fast_start_pfn;
	cc->fast_start_pfn = ULONG_MAX;
	return cc->migrate_pfn;
}

/*
 * fast_find_migrateblock(): where the migrate scanner goes next. At a
 * pageblock start of a costly request (kcompactd's, or a direct one for a
 * movable page), search the MOVABLE free lists from order cc->order - 1
 * down to PAGE_ALLOC_COSTLY_ORDER, from their heads, for a free block low
 * in the zone (the first half of the space between the scanners on the
 * first pass, the first eighth later) whose pageblock is not skipped:
 * migrating the rest of a block that is already partly free is the
 * cheapest way to a free block of the order. Without one, scan on from the
 * lowest block an earlier search found (reinit_migrate_pfn()).
 * Return: the pfn to scan from.
 */
static unsigned long fast_find_migrateblock(struct compact_control *cc)
{
	struct zone *zone = cc->zone;
	unsigned int limit = freelist_scan_limit(cc), nr_scanned = 0;
	unsigned long pfn = cc->migrate_pfn, distance, high_pfn;
	bool found = false;

	if (cc->ignore_skip_hint || cc->finish_pageblock)
		return pfn;
	/* inside a block: the continuation of a COMPACT_CLUSTER_MAX round */
	if (pfn != zone->zone_start_pfn && pfn != ALIGN_DOWN(pfn, pageblock_nr_pages))
		return pfn;
	/* small orders: few pages to migrate, a linear scan does */
	if (cc->order <= PAGE_ALLOC_COSTLY_ORDER)
		return pfn;
	/* emptying a movable block for a non-movable request would mix types */
	if (cc->direct_compaction && cc->migratetype != MIGRATE_MOVABLE)
		return pfn;
	distance = (cc->free_pfn - cc->migrate_pfn) >> 1;
	if (cc->migrate_pfn != zone->zone_start_pfn)
		distance >>= 2;
	high_pfn = ALIGN_DOWN(cc->migrate_pfn + distance, pageblock_nr_pages);

	for (int order = cc->order - 1; order >= PAGE_ALLOC_COSTLY_ORDER && !found &&
	     nr_scanned < limit; order--) {
		struct free_area *area = &zone->free_area[order];
		struct list_head *freelist = &area->free_list[MIGRATE_MOVABLE], *pos;

		if (!READ_ONCE(area->nr_free))
			continue;
		spin_lock(&zone->lock);
		for (pos = freelist->next; pos != freelist; pos = pos->next) {
			struct page *freepage = list_entry(pos, struct page, buddy_list);
			unsigned long free_pfn;

			if (nr_scanned++ >= limit) {
				move_freelist_tail(freelist, freepage);
				break;
			}
			free_pfn = page_to_pfn(freepage);
			if (free_pfn >= high_pfn || get_pageblock_skip(zone, free_pfn))
				continue;
			/* the next search starts after this entry */
			move_freelist_tail(freelist, freepage);
			update_fast_start_pfn(cc, free_pfn);
			pfn = max(ALIGN_DOWN(free_pfn, pageblock_nr_pages), zone->zone_start_pfn);
			cc->fast_search_fail = 0;
			found = true;
			break;
		}
		spin_unlock(&zone->lock);
	}
	cc->total_migrate_scanned += nr_scanned;
	if (!found) {
		cc->fast_search_fail++;
		pfn = reinit_migrate_pfn(cc);
	}
	return pfn;
}

enum isolate_migrate { ISOLATE_NONE, ISOLATE_SUCCESS };

/*
 * isolate_migratepages(): from where fast_find_migrateblock() says, the
 * next pageblock worth scanning (not skipped, a suitable source), scanned
 * once: ISOLATE_NONE if it gave nothing, and compact_zone() decides.
 */
static enum isolate_migrate isolate_migratepages(struct compact_control *cc)
{
	struct zone *zone = cc->zone;
	unsigned long low_pfn = fast_find_migrateblock(cc);
	unsigned long block_end = ALIGN_DOWN(low_pfn, pageblock_nr_pages) + pageblock_nr_pages;
	/* the search checked the skip bit of the block it found */
	bool fast_find_block = low_pfn != cc->migrate_pfn && !cc->fast_search_fail;

	for (; block_end <= cc->free_pfn; fast_find_block = false,
	     cc->migrate_pfn = low_pfn = block_end, block_end += pageblock_nr_pages) {
		unsigned long end = min(block_end, zone_end_pfn(zone));

		/* a block's skip bit is checked once, at its start */
		if ((low_pfn == ALIGN_DOWN(low_pfn, pageblock_nr_pages) ||
		     low_pfn == zone->zone_start_pfn) && !fast_find_block &&
		    !isolation_suitable(cc, low_pfn))
			continue;
		if (!suitable_migration_source(cc, low_pfn))
			continue;
		low_pfn = isolate_migratepages_block(cc, low_pfn, end);
		cc->migrate_pfn = min(low_pfn, cc->free_pfn);
		break;
	}
	return cc->nr_migratepages ? ISOLATE_SUCCESS : ISOLATE_NONE;
}

/* ---- migration ------------------------------------------------------------------------ */

/* compaction_alloc(): a target of @order from the isolated free pages, split down. */
static struct page *compaction_alloc(struct compact_control *cc, unsigned int order)
{
	unsigned int start;
	struct page *page;
	bool isolated = false;

again:
	for (start = order; start < NR_PAGE_ORDERS; start++)
		if (!list_empty(&cc->freepages[start]))
			break;
	if (start == NR_PAGE_ORDERS) {
		if (isolated)
			return NULL;
		isolate_freepages(cc);
		isolated = true;
		goto again;
	}
	page = list_first_entry(&cc->freepages[start], struct page, lru);
	list_del(&page->lru);
	while (start > order) {
		unsigned long size = 1UL << --start;

		WRITE_ONCE(page[size].private, start);
		list_add(&page[size].lru, &cc->freepages[start]);
	}
	cc->nr_freepages -= 1UL << order;
	return page;
}

/* The isolated free pages go back to the buddy. Return: the highest pfn freed. */
static unsigned long release_freepages(struct compact_control *cc)
{
	unsigned long high = 0;

	for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
		while (!list_empty(&cc->freepages[order])) {
			struct page *page = list_first_entry(&cc->freepages[order], struct page, lru);
			unsigned long pfn = page_to_pfn(page);

			list_del(&page->lru);
			free_one_page(cc->zone, page, pfn, order, FPI_NONE);
			high = max(high, pfn);
		}
	}
	cc->nr_freepages = 0;
	return high;
}

/*
 * migrate_pages(): each isolated block's contents and holder move to the
 * target @new_target gives (the kernel's get_new_folio callback); the
 * source is freed (through the PCP, as a folio_put()). At the first block
 * no target can be found for, it stops as the kernel's does on -ENOMEM:
 * that block (counted in pgmigrate_fail) and the rest go back to their
 * holder where they are.
 * Return: 0, or -ENOMEM.
 */
static int migrate_pages(struct compact_control *cc,
			 struct page *(*new_target)(struct compact_control *cc, struct page *src,
						    unsigned int order))
{
	struct pl_machine *m = cc->zone->machine;
	const struct pl_migrate_ops *ops = m->migrate_ops;
	int err = 0;

	for (unsigned int i = 0; i < cc->nr_migratepages; i++) {
		struct page *src = cc->migratepages[i];
		unsigned int order = cc->migrate_order[i];
		struct page *dst = err ? NULL : new_target(cc, src, order);

		if (!dst) {
			ops->putback(m->migrate_ctx, src, order);
			if (!err)
				pl_count(PL_EV_PGMIGRATE_FAIL, 1UL << order);
			err = -ENOMEM;
			continue;
		}
		memcpy(page_address(dst), page_address(src), PAGE_SIZE << order);
		ops->migrate(m->migrate_ctx, src, dst, order);
		__free_pages(src, order);
		pl_count(PL_EV_PGMIGRATE_SUCCESS, 1UL << order);
	}
	cc->nr_migratepages = 0;
	return err;
}

/* compaction's target: a block from the free scanner's list, prepared as an allocation */
static struct page *compaction_target(struct compact_control *cc, struct page *src,
				      unsigned int order)
{
	struct page *dst = compaction_alloc(cc, order);

	if (dst)
		prep_new_page(dst, order, PageHead(src) ? __GFP_COMP : 0, MIGRATE_MOVABLE);
	return dst;
}

/* ---- the end of a run ------------------------------------------------------------------------ */

static bool compact_scanners_met(const struct compact_control *cc)
{
	return (cc->free_pfn >> pageblock_order) <= (cc->migrate_pfn >> pageblock_order);
}

/* __compact_finished(): the scanners met, or a block of the order is free. */
static enum pl_compact_result compact_finished(struct compact_control *cc)
{
	struct zone *zone = cc->zone;

	if (compact_scanners_met(cc)) {
		reset_cached_positions(zone);
		if (cc->direct_compaction)
			zone_compact(zone)->compact_blockskip_flush = true;
		return cc->whole_zone ? PL_COMPACT_COMPLETE : PL_COMPACT_PARTIAL_SKIPPED;
	}
	/* proactive: until the zone's score is down to the low mark, kswapd asleep */
	if (cc->proactive_compaction) {
		if (kswapd_is_running(zone->machine))
			return PL_COMPACT_PARTIAL_SKIPPED;
		return fragmentation_score_zone(zone) > fragmentation_score_wmark(zone->machine, true) ?
		       PL_COMPACT_CONTINUE : PL_COMPACT_SUCCESS;
	}
	if (cc->order < 0)	/* compact_memory: the whole zone */
		return PL_COMPACT_CONTINUE;
	/* finish the pageblock: fewer fallbacks later */
	if (cc->migrate_pfn & (pageblock_nr_pages - 1))
		return PL_COMPACT_CONTINUE;
	for (unsigned int order = (unsigned int)cc->order; order < NR_PAGE_ORDERS; order++) {
		struct free_area *area = &zone->free_area[order];

		if (!free_area_empty(zone, area, cc->migratetype))
			return PL_COMPACT_SUCCESS;
		/* an allocation could take the block from another type's list */
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			if (mt != cc->migratetype && order >= pageblock_order &&
			    !free_area_empty(zone, area, mt))
				return PL_COMPACT_SUCCESS;
	}
	return PL_COMPACT_CONTINUE;
}

enum pl_compact_result compact_zone(struct compact_control *cc, struct capture_control *capc)
{
	struct zone *zone = cc->zone;
	bool sync = cc->mode != MIGRATE_ASYNC;
	enum pl_compact_result ret;
	unsigned long last_migrated_pfn = 0;

	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
		INIT_LIST_HEAD(&cc->freepages[o]);
	cc->nr_freepages = cc->nr_migratepages = 0;
	cc->migratetype = gfp_migratetype(cc->gfp_mask);
	if (cc->order > 0) {
		ret = compaction_suit_allocation_order(zone, cc->order, cc->highest_zoneidx,
						       cc->alloc_flags);
		if (ret != PL_COMPACT_CONTINUE)
			return ret;
	}
	if (compaction_restarting(zone, cc->order))
		__reset_isolation_suitable(zone);
	cc->fast_start_pfn = 0;
	if (cc->whole_zone) {
		cc->migrate_pfn = zone->zone_start_pfn;
		cc->free_pfn = ALIGN_DOWN(zone_end_pfn(zone) - 1, pageblock_nr_pages);
	} else {
		cc->migrate_pfn = zone_compact(zone)->compact_cached_migrate_pfn[sync];
		cc->free_pfn = zone_compact(zone)->compact_cached_free_pfn;
		if (!zone_spans_pfn(zone, cc->free_pfn) || cc->free_pfn == 0)
			cc->free_pfn = ALIGN_DOWN(zone_end_pfn(zone) - 1, pageblock_nr_pages);
		if (!zone_spans_pfn(zone, cc->migrate_pfn))
			cc->migrate_pfn = zone->zone_start_pfn;
		/* from where the last skip-bit reset put it: the whole zone */
		if (cc->migrate_pfn <= zone_compact(zone)->compact_init_migrate_pfn)
			cc->whole_zone = true;
	}
	pl_count(PL_EV_COMPACT_RUN, 1);

	while ((ret = compact_finished(cc)) == PL_COMPACT_CONTINUE) {
		/* the block the last migration left: finish it, no search elsewhere */
		cc->finish_pageblock = ALIGN_DOWN(last_migrated_pfn, pageblock_nr_pages) ==
			ALIGN_DOWN(cc->migrate_pfn, pageblock_nr_pages);
rescan:
		if (isolate_migratepages(cc) == ISOLATE_NONE)
			goto check_drain;
		last_migrated_pfn = max(zone->zone_start_pfn,
					ALIGN_DOWN(cc->migrate_pfn - 1, pageblock_nr_pages));
		if (migrate_pages(cc, compaction_target)) {
			/* no target left while the scanners are apart: give up for now */
			if (!compact_scanners_met(cc)) {
				ret = PL_COMPACT_CONTENDED;
				goto out;
			}
			/*
			 * async and sync-light: scan the rest of the pageblock
			 * now, so that it is marked skip and a free-list search
			 * does not bring the migrate scanner back into it
			 */
			if ((cc->migrate_pfn & (pageblock_nr_pages - 1)) && !cc->ignore_skip_hint &&
			    !cc->finish_pageblock && cc->mode < MIGRATE_SYNC) {
				cc->finish_pageblock = true;
				/* draining will not make the order-9 block whole */
				if (cc->order == COMPACTION_HPAGE_ORDER)
					last_migrated_pfn = 0;
				goto rescan;
			}
		}
		if (capc && capc->page) {
			ret = PL_COMPACT_SUCCESS;
			break;
		}
check_drain:
		/*
		 * The migrate scanner left the cc->order block it migrated
		 * from: flush this CPU's freed pages so they can merge (and be
		 * captured) now.
		 */
		if (cc->order > 0 && last_migrated_pfn &&
		    last_migrated_pfn < ALIGN_DOWN(cc->migrate_pfn, 1UL << cc->order)) {
			drain_local_pages(zone);
			last_migrated_pfn = 0;
		}
	}
out:
	if (cc->nr_freepages) {
		unsigned long free_pfn = release_freepages(cc);

		/* restart the free scanner where pages went back */
		if (free_pfn > zone_compact(zone)->compact_cached_free_pfn)
			zone_compact(zone)->compact_cached_free_pfn = ALIGN_DOWN(free_pfn, pageblock_nr_pages);
	}
	if (!compact_scanners_met(cc)) {
		zone_compact(zone)->compact_cached_migrate_pfn[sync] = cc->migrate_pfn;
		if (!sync)
			zone_compact(zone)->compact_cached_migrate_pfn[1] = max(zone_compact(zone)->compact_cached_migrate_pfn[1],
								  cc->migrate_pfn);
		zone_compact(zone)->compact_cached_free_pfn = min(zone_compact(zone)->compact_cached_free_pfn ?
						    zone_compact(zone)->compact_cached_free_pfn : cc->free_pfn,
						    cc->free_pfn);
	}
	pl_count(PL_EV_COMPACT_MIGRATE_SCANNED, cc->total_migrate_scanned);
	pl_count(PL_EV_COMPACT_FREE_SCANNED, cc->total_free_scanned);
	return ret;
}

/* ---- alloc_contig_range()'s migration ------------------------------------------------- */

/*
 * alloc_migration_target(): alloc_contig_range()'s target, a page the
 * allocator gives (movable, so never in an isolated pageblock;
 * __GFP_RETRY_MAYFAIL: reclaim and compaction may run for it).
 */
static struct page *alloc_migration_target(struct compact_control *cc, struct page *src,
					   unsigned int order)
{
	gfp_t gfp = GFP_USER | __GFP_MOVABLE | __GFP_RETRY_MAYFAIL | __GFP_NOWARN;

	(void)cc;
	return alloc_pages(gfp | (PageHead(src) ? __GFP_COMP : 0), order);
}

/**
 * alloc_contig_migrate_range() - __alloc_contig_migrate_range(): move the
 * movable allocated blocks of [@start, @end) of @zone out of the range,
 * whose pageblocks the caller has isolated: the migrate scanner's
 * isolation (sync, skip bits ignored and left alone), COMPACT_CLUSTER_MAX
 * blocks at a time, each into a page the allocator gives. A block whose
 * holder will not let it go stays (the caller then finds the range busy);
 * a block starting before @start is not looked at.
 * Return: 0, or -ENOMEM when the allocator had no target.
 * Context: a vCPU of @zone's machine; no lock held.
 */
int alloc_contig_migrate_range(struct zone *zone, unsigned long start, unsigned long end)
{
	struct compact_control cc = { .zone = zone, .order = -1, .mode = MIGRATE_SYNC,
				      .ignore_skip_hint = true, .no_set_skip_hint = true,
				      .gfp_mask = GFP_USER | __GFP_MOVABLE };
	unsigned long pfn = start;
	int err = 0;

	while (pfn < end && !err) {
		unsigned long block_end = min(ALIGN_DOWN(pfn, pageblock_nr_pages) + pageblock_nr_pages, end);

		pfn = isolate_migratepages_block(&cc, pfn, block_end);
		if (cc.nr_migratepages)
			err = migrate_pages(&cc, alloc_migration_target);
	}
	return err;
}

int pl_set_migrate_ops(struct pl_machine *m, const struct pl_migrate_ops *ops, void *ctx)
{
	if (pl_check_ptr(__func__, m, "machine"))
		return -EINVAL;
	if (ops && (!ops->isolate || !ops->migrate || !ops->putback)) {
		pl_bad_arg(__func__, "migrate ops need isolate, migrate and putback");
		return -EINVAL;
	}
	m->migrate_ops = ops;
	m->migrate_ctx = ctx;
	return 0;
}

long pl_compact_zone(struct pl_machine *m, int zone_idx, int order, bool sync)
{
	struct compact_control cc = { .order = order, .search_order = order,
				      .gfp_mask = GFP_KERNEL | __GFP_MOVABLE,
				      .mode = sync ? MIGRATE_SYNC : MIGRATE_ASYNC,
				      .whole_zone = true, .ignore_skip_hint = order < 0,
				      .alloc_flags = ALLOC_WMARK_MIN };
	enum pl_compact_result ret;

	if (pl_check_ptr(__func__, m, "machine"))
		return -EINVAL;
	if (zone_idx < 0 || zone_idx >= MAX_NR_ZONES || !populated_zone(&m->node_zones[zone_idx]) ||
	    order < -1 || order > MAX_PAGE_ORDER) {
		pl_bad_arg(__func__, "zone %d order %d", zone_idx, order);
		return -EINVAL;
	}
	cc.zone = &m->node_zones[zone_idx];
	cc.highest_zoneidx = zone_idx;
	ret = compact_zone(&cc, NULL);
	return ret;
}
