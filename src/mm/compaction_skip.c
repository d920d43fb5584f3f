// SPDX-License-Identifier: MIT
/*
 * compaction_skip.c - what compaction remembers between runs, as
 * mm/compaction.c of Linux 6.18 keeps it, in pagelab's own code: deferral
 * (compact_considered, compact_defer_shift, compact_order_failed), the
 * pageblock skip bits with their reset, the scanners' cached positions,
 * and compaction_suitable() with the fragmentation index against
 * vm.extfrag_threshold. The scanners themselves are in compaction.c.
 *
 * The skip-bit reset (__reset_isolation_suitable()) runs only when a
 * direct compactor's scanners met since the last one
 * (compact_blockskip_flush), from kswapd going to sleep
 * (reset_isolation_suitable()) or from compact_zone() restarting after the
 * longest deferral. It does not clear every bit: it walks the zone from
 * both ends at once and clears a block's bit only if a sample of the
 * block (every 1 << PAGE_ALLOC_COSTLY_ORDER-th page) shows a migration
 * source (the migrate scanner's side, from the bottom) or a free page in
 * a MOVABLE block (the free scanner's side, from the top); the first such
 * block from each end becomes that scanner's restart point. A block that
 * is one compound allocation of a pageblock or more keeps its bit.
 *
 * pagelab's stand-in for the kernel's PageLRU(): an allocated page with
 * PG_movable (the head of a movable block; a tail page's flags are not
 * the head's, so a sample on the tail of a movable compound block of order
 * 1 or 2 misses it, where the kernel's would not; heads of order 3 and up
 * sit on a sample).
 *
 * Locking: none, as the kernel's: the bits are hints, read and written
 * racily (READ_ONCE/WRITE_ONCE); a sample reads only a page's flags,
 * page_type and a head's alloc_order, all once-accesses.
 */
#include "internal.h"
#include "validate.h"
#include "pagelab/compaction.h"

/* ---- deferral ------------------------------------------------------------ */

void defer_compaction(struct zone *zone, int order)
{
	zone_compact(zone)->compact_considered = 0;
	zone_compact(zone)->compact_defer_shift++;
	if (order < zone_compact(zone)->compact_order_failed)
		zone_compact(zone)->compact_order_failed = order;
	if (zone_compact(zone)->compact_defer_shift > COMPACT_MAX_DEFER_SHIFT)
		zone_compact(zone)->compact_defer_shift = COMPACT_MAX_DEFER_SHIFT;
	pl_count(PL_EV_COMPACT_DEFER, 1);
}

bool compaction_deferred(struct zone *zone, int order)
{
	unsigned long defer_limit = 1UL << zone_compact(zone)->compact_defer_shift;

	if (order < zone_compact(zone)->compact_order_failed)
		return false;
	/* Avoid possible overflow */
	if (++zone_compact(zone)->compact_considered >= defer_limit) {
		zone_compact(zone)->compact_considered = (unsigned int)defer_limit;
		return false;
	}
	pl_count(PL_EV_COMPACT_DEFERRED, 1);
	return true;
}

void compaction_defer_reset(struct zone *zone, int order, bool alloc_success)
{
	if (alloc_success) {
		zone_compact(zone)->compact_considered = 0;
		zone_compact(zone)->compact_defer_shift = 0;
	}
	if (order >= zone_compact(zone)->compact_order_failed)
		zone_compact(zone)->compact_order_failed = order + 1;
}

/**
 * compaction_restarting() - compaction of @order in @zone runs again after
 * deferring for the longest: its skip bits may be stale.
 * Return: true if so.
 */
bool compaction_restarting(const struct zone *zone, int order)
{
	if (order < zone_compact(zone)->compact_order_failed)
		return false;
	return zone_compact(zone)->compact_defer_shift == COMPACT_MAX_DEFER_SHIFT &&
	       zone_compact(zone)->compact_considered >= 1UL << zone_compact(zone)->compact_defer_shift;
}

/* ---- pageblock skip bits ---------------------------------------------------- */

static inline unsigned char *pb_flags(struct zone *zone, unsigned long pfn)
{
	return &zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)];
}

bool get_pageblock_skip(struct zone *zone, unsigned long pfn)
{
	return READ_ONCE(*pb_flags(zone, pfn)) & PB_migrate_skip;
}

/** set_pageblock_skip() - mark @pfn's pageblock: the scanners pass it until the reset. */
void set_pageblock_skip(struct zone *zone, unsigned long pfn)
{
	WRITE_ONCE(*pb_flags(zone, pfn), READ_ONCE(*pb_flags(zone, pfn)) | PB_migrate_skip);
}

static void clear_pageblock_skip(struct zone *zone, unsigned long pfn)
{
	WRITE_ONCE(*pb_flags(zone, pfn), READ_ONCE(*pb_flags(zone, pfn)) & ~PB_migrate_skip);
}

/**
 * reset_cached_positions() - the next compact_zone() of @zone starts its
 * migrate scanner at the zone's start and its free scanner at its last
 * pageblock (the scanners met).
 */
void reset_cached_positions(struct zone *zone)
{
	zone_compact(zone)->compact_cached_migrate_pfn[0] = zone->zone_start_pfn;
	zone_compact(zone)->compact_cached_migrate_pfn[1] = zone->zone_start_pfn;
	zone_compact(zone)->compact_cached_free_pfn = ALIGN_DOWN(zone_end_pfn(zone) - 1, pageblock_nr_pages);
}

/*
 * pageblock_skip_persistent(): @pfn lies in one compound allocation of
 * pageblock order or more (a THP, a hugetlb page): neither a source nor a
 * target, its block keeps its bit. Its head is at @pfn aligned down to its
 * size, so each possible size is looked at there.
 */
static bool pageblock_skip_persistent(unsigned long pfn)
{
	for (unsigned int o = pageblock_order; o <= MAX_PAGE_ORDER; o++) {
		struct page *head = pfn_to_page(ALIGN_DOWN(pfn, 1UL << o));

		if (PageHead(head) && READ_ONCE(head->alloc_order) >= o)
			return true;
	}
	return false;
}

/* The kernel's PageLRU() of a sample: an allocated movable block's head (file comment). */
static bool sample_is_source(const struct page *page)
{
	return page_flags(page) & (1UL << PG_movable);
}

/*
 * __reset_isolation_pfn(): clear the skip bit of @pfn's block if a sample
 * of it shows a migration source (@check_source) or a free page
 * (@check_target); a block looked at for the free scanner only must be
 * MOVABLE; with both checks a block whose bit is already clear counts
 * without a sample. Return: true if the block is now usable (cleared or
 * already clear on a both-sides check).
 */
static bool __reset_isolation_pfn(struct zone *zone, unsigned long pfn, bool check_source,
				  bool check_target)
{
	unsigned long block = ALIGN_DOWN(pfn, pageblock_nr_pages), start, last;

	if (!zone_spans_pfn(zone, pfn) || pageblock_skip_persistent(pfn))
		return false;
	if (check_source && check_target && !get_pageblock_skip(zone, pfn))
		return true;
	if (!check_source && check_target &&
	    get_pageblock_migratetype(pfn_to_page(pfn)) != MIGRATE_MOVABLE)
		return false;
	start = max(block, zone->zone_start_pfn);
	last = min(block + pageblock_nr_pages, zone_end_pfn(zone)) - 1;
	for (unsigned long p = start; p <= last; p += 1UL << PAGE_ALLOC_COSTLY_ORDER) {
		struct page *page = pfn_to_page(p);

		if ((check_source && sample_is_source(page)) || (check_target && PageBuddy(page))) {
			clear_pageblock_skip(zone, p);
			return true;
		}
	}
	return false;
}

void __reset_isolation_suitable(struct zone *zone)
{
	struct pl_zone_compact *zc = zone_compact(zone);
	unsigned long migrate_pfn = zone->zone_start_pfn, free_pfn = zone_end_pfn(zone) - 1;
	unsigned long reset_migrate = free_pfn, reset_free = migrate_pfn;
	bool source_set = false, free_set = false;

	/* only after a direct compactor's scanners met */
	if (!zc->compact_blockskip_flush)
		return;
	zc->compact_blockskip_flush = false;
	/*
	 * From both ends towards the middle: the first block from the bottom
	 * with a source is where the migrate scanner restarts, the first from
	 * the top with a free page where the free scanner does; past them a
	 * block with either is good for both.
	 */
	for (; migrate_pfn < free_pfn; migrate_pfn += pageblock_nr_pages, free_pfn -= pageblock_nr_pages) {
		if (__reset_isolation_pfn(zone, migrate_pfn, true, source_set) &&
		    migrate_pfn < reset_migrate) {
			source_set = true;
			reset_migrate = migrate_pfn;
			zc->compact_init_migrate_pfn = reset_migrate;
			zc->compact_cached_migrate_pfn[0] = reset_migrate;
			zc->compact_cached_migrate_pfn[1] = reset_migrate;
		}
		if (__reset_isolation_pfn(zone, free_pfn, free_set, true) && free_pfn > reset_free) {
			free_set = true;
			reset_free = free_pfn;
			zc->compact_init_free_pfn = reset_free;
			zc->compact_cached_free_pfn = reset_free;
		}
	}
	/* nothing worth scanning: leave the scanners met in the middle */
	if (reset_migrate >= reset_free) {
		zc->compact_cached_migrate_pfn[0] = migrate_pfn;
		zc->compact_cached_migrate_pfn[1] = migrate_pfn;
		zc->compact_cached_free_pfn = free_pfn;
	}
}

void reset_isolation_suitable(struct pl_machine *m)
{
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine"))
		return;
	for_each_populated_zone(zone, m)
		if (zone_compact(zone)->compact_blockskip_flush)
			__reset_isolation_suitable(zone);
}

/**
 * isolation_suitable() - may @cc's scanners use @pfn's pageblock (its skip
 * bit clear, or the run ignores the bits)?
 */
bool isolation_suitable(struct compact_control *cc, unsigned long pfn)
{
	if (cc->ignore_skip_hint)
		return true;
	return !get_pageblock_skip(cc->zone, pfn);
}

/**
 * update_pageblock_skip() - the free scanner went through the block at
 * @block: mark it, and restart the free scanner at @pfn (the block below)
 * next time if that is lower than where it would.
 */
void update_pageblock_skip(struct compact_control *cc, unsigned long block, unsigned long pfn)
{
	if (cc->no_set_skip_hint)
		return;
	set_pageblock_skip(cc->zone, block);
	if (pfn < zone_compact(cc->zone)->compact_cached_free_pfn)
		zone_compact(cc->zone)->compact_cached_free_pfn = pfn;
}

/* ---- suitability ------------------------------------------------------------------ */
unsigned int pl_extfrag_threshold(const struct pl_machine *m)
{
	if (pl_check_ptr(__func__, m, "machine"))
		return 0;
	return m->config.extfrag_threshold ? m->config.extfrag_threshold - 1 : 500;
}

/*
 * __compaction_suitable(): enough order-0 pages for the migration targets
 * (the min watermark, the low one for costly orders, plus compact_gap()),
 * and for a costly order, a failure that fragmentation explains: the index
 * above extfrag_threshold (a failure for lack of memory is reclaim's).
 */
bool compaction_suitable(struct zone *zone, int order, int highest_zoneidx)
{
	unsigned long watermark;
	bool ok;

	watermark = order > PAGE_ALLOC_COSTLY_ORDER ? low_wmark_pages(zone) : min_wmark_pages(zone);
	watermark += compact_gap((unsigned int)order);
	ok = zone_watermark_ok(zone, 0, watermark, highest_zoneidx, 0);
	if (ok && order > PAGE_ALLOC_COSTLY_ORDER) {
		int fragindex = fragmentation_index(zone, (unsigned int)order);

		if (fragindex >= 0 && fragindex <= (int)pl_extfrag_threshold(zone->machine))
			ok = false;
	}
	return ok;
}

/* compaction_suit_allocation_order(): already enough, not worth it, or go. */
enum pl_compact_result compaction_suit_allocation_order(struct zone *zone, int order,
							int highest_zoneidx, unsigned int alloc_flags)
{
	unsigned long watermark = wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK);

	if (zone_watermark_ok(zone, (unsigned int)order, watermark, highest_zoneidx, alloc_flags))
		return PL_COMPACT_SUCCESS;
	if (!compaction_suitable(zone, order, highest_zoneidx))
		return PL_COMPACT_SKIPPED;
	return PL_COMPACT_CONTINUE;
}
