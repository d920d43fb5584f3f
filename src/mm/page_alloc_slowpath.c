// SPDX-License-Identifier: MIT
/*
 * page_alloc_slowpath.c - what the kernel's page allocator does before it
 * fails a request (mm/page_alloc.c and mm/vmscan.c of v6.18), less reclaim,
 * compaction and the OOM killer, which pagelab does not model:
 *
 *  - __alloc_pages_slowpath(): the alloc_flags of gfp_to_alloc_flags()
 *    (the min watermark, less for __GFP_HIGH and non-blocking callers, and
 *    ALLOC_HIGHATOMIC for order > 0 non-blocking __GFP_HIGH requests, the
 *    rule since 6.16), kswapd woken, one more pass over the zones; then,
 *    for callers that may sleep (__GFP_DIRECT_RECLAIM), direct reclaim's
 *    drain: unreserve_highatomic_pageblock(ac, false) and drain_all_pages()
 *    then another pass, as __alloc_pages_direct_reclaim() does after
 *    reclaim; and before failing, should_reclaim_retry()'s last step:
 *    unreserve_highatomic_pageblock(ac, true), retrying while it frees a
 *    reserve.
 *  - Highatomic reserves: reserve_highatomic_pageblock() after an
 *    ALLOC_HIGHATOMIC success (at most ~1% of the zone, in pageblocks; none
 *    if 1% is less than a pageblock) and unreserve_highatomic_pageblock().
 *  - Watermark boost: boost_watermark() on a fallback claim of less than a
 *    pageblock (watermark_boost_factor 15000: up to 150% of the high
 *    watermark, a pageblock at a time; not for zones under 4 pageblocks).
 *  - kswapd: wakeup_kswapd() and a model of its run.
 *
 * Reclaim is not modelled, so two choices are pagelab's:
 *  1. Direct reclaim frees nothing but counts as progress once: the kernel
 *     drains only "if (did_some_progress)", and real reclaim nearly always
 *     finds some page cache, so the drain-and-retry is what a request
 *     meets when other CPUs' PCPs hold the pages it needs. Since nothing
 *     else can change between rounds, should_reclaim_retry()'s 16
 *     no-progress rounds are taken as run out at once, leaving its last
 *     step, the forced unreserve. Costly orders (> 3) fail after the one
 *     drain, as the kernel's do without __GFP_RETRY_MAYFAIL.
 *  2. kswapd runs at the next vmstat tick (pl_vmstat_tick(), one per
 *     simulated second of a vCPU) after it is woken, not at once: the
 *     kernel's kswapd is a thread that runs shortly after its wakeup, and
 *     until then the boosted watermarks apply; pagelab has no scheduler,
 *     and the tick is its periodic work. The run is balance_pgdat() with
 *     nothing to reclaim: the zones are ZONE_RECLAIM_ACTIVE while it runs
 *     (PCP frees see nr_pcp_high()'s cap only from other threads, since the
 *     run is short); a boosted run gives up at once ("reclaim made no
 *     progress for a boost") and, as every run ends, drops the boost it
 *     found (zone_boosts[]). The kernel's kswapd_failures (no wakeups after
 *     16 fruitless runs) is not modelled.
 *     A replay of a kernel trace drives kswapd from the trace instead
 *     (pl_kswapd_begin()/pl_kswapd_end(), while kswapd's own events
 *     stream): the zones are ZONE_RECLAIM_ACTIVE for the whole run, as in
 *     balance_pgdat(), and the tick's run stands aside. Between those
 *     runs a replay has the time the tick lacks: it runs a woken kswapd
 *     at its next event (src/trace/replay.c, follow_kswapd()).
 *
 * Locking: the highatomic counts and watermark_boost change under
 * zone->lock and are read racily (READ_ONCE), as in the kernel.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"

/*
 * vm.watermark_boost_factor, in 1/10000 of the high watermark: the
 * machine's (PL_WMARK_BOOST_OFF is the sysctl's 0), else the kernel's
 * default 15000.
 */
static unsigned long watermark_boost_factor(const struct pl_machine *m)
{
	unsigned long f = m->config.watermark_boost_factor;

	return f == PL_WMARK_BOOST_OFF ? 0 : f ? f : 15000;
}

_Static_assert(__GFP_HIGH == ALLOC_MIN_RESERVE, "__GFP_HIGH doubles as ALLOC_MIN_RESERVE");
_Static_assert(__GFP_KSWAPD_RECLAIM == ALLOC_KSWAPD, "__GFP_KSWAPD_RECLAIM doubles as ALLOC_KSWAPD");

static unsigned int gfp_to_alloc_flags(gfp_t gfp, unsigned int order)
{
	unsigned int alloc_flags = ALLOC_WMARK_MIN;

	alloc_flags |= gfp & (__GFP_HIGH | __GFP_KSWAPD_RECLAIM);
	if (!(gfp & __GFP_DIRECT_RECLAIM)) {
		/* pagelab has no __GFP_NOMEMALLOC: every such caller tries harder */
		alloc_flags |= ALLOC_NON_BLOCK;
		if (order > 0 && (alloc_flags & ALLOC_MIN_RESERVE))
			alloc_flags |= ALLOC_HIGHATOMIC;
	}
	return alloc_flags;
}

/* ---- highatomic reserves -------------------------------------------------- */

/**
 * reserve_highatomic_pageblock() - keep the pageblock(s) of a high-order
 * atomic allocation for such allocations: retag it MIGRATE_HIGHATOMIC and
 * move its free pages there, while the zone's reserve is under ~1%.
 * @page: the block just allocated; @order: its order; @zone: its zone.
 * Context: takes zone->lock.
 */
void reserve_highatomic_pageblock(struct page *page, unsigned int order, struct zone *zone)
{
	unsigned long max_managed;
	int mt;

	/* At least one pageblock, at most about 1% of the zone; none if 1% < a block. */
	if (zone->managed_pages / 100 < pageblock_nr_pages)
		return;
	max_managed = ALIGN_DOWN(zone->managed_pages / 100 + pageblock_nr_pages - 1,
				 pageblock_nr_pages);	/* the kernel's ALIGN() */
	if (READ_ONCE(zone->nr_reserved_highatomic) >= max_managed)
		return;

	spin_lock(&zone->lock);
	if (zone->nr_reserved_highatomic >= max_managed)
		goto out_unlock;
	/* Only normal pageblocks, which can merge with others. */
	mt = get_pageblock_migratetype(page);
	if (!migratetype_is_mergeable(mt))
		goto out_unlock;
	if (order < pageblock_order) {
		if (move_freepages_block(zone, page, mt, MIGRATE_HIGHATOMIC) == -1)
			goto out_unlock;
		WRITE_ONCE(zone->nr_reserved_highatomic,
			   zone->nr_reserved_highatomic + pageblock_nr_pages);
	} else {
		change_pageblock_range(page, order, MIGRATE_HIGHATOMIC);
		WRITE_ONCE(zone->nr_reserved_highatomic, zone->nr_reserved_highatomic + (1UL << order));
	}
	pl_count(PL_EV_HIGHATOMIC_RESERVE, 1);
out_unlock:
	spin_unlock(&zone->lock);
}

/*
 * unreserve_highatomic_pageblock() - give one highatomic reserve back to
 * @migratetype, the requester's type, bypassing the claim heuristics. Unless
 * @force, a zone keeps its last reserved pageblock.
 * Return: true if a reserve was released. Context: takes zone->lock.
 */
static bool unreserve_highatomic_pageblock(struct pl_machine *m, int highest_zoneidx,
					   int migratetype, bool force)
{
	for (int zi = highest_zoneidx; zi >= 0; zi--) {
		struct zone *zone = &m->node_zones[zi];

		if (!populated_zone(zone))
			continue;
		if (!force && READ_ONCE(zone->nr_reserved_highatomic) <= pageblock_nr_pages)
			continue;
		spin_lock(&zone->lock);
		for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
			struct page *page = get_page_from_free_area(&zone->free_area[order],
								    MIGRATE_HIGHATOMIC);
			unsigned long size;
			long ret;

			if (!page)
				continue;
			size = max(pageblock_nr_pages, 1UL << order);
			size = min(size, zone->nr_reserved_highatomic);
			WRITE_ONCE(zone->nr_reserved_highatomic, zone->nr_reserved_highatomic - size);
			if (order < pageblock_order) {
				ret = move_freepages_block(zone, page, MIGRATE_HIGHATOMIC, migratetype);
			} else {
				move_to_free_list(page, zone, order, MIGRATE_HIGHATOMIC, migratetype);
				change_pageblock_range(page, order, migratetype);
				ret = 1;
			}
			if (ret > 0) {
				spin_unlock(&zone->lock);
				pl_count(PL_EV_HIGHATOMIC_UNRESERVE, 1);
				return true;
			}
		}
		spin_unlock(&zone->lock);
	}
	return false;
}

/* ---- watermark boost and kswapd ------------------------------------------- */

/**
 * boost_watermark() - raise @zone's watermarks by a pageblock, up to
 * watermark_boost_factor of the high watermark, after a fallback that mixed
 * pageblock types. Return: true if boosted. Context: zone->lock.
 */
bool boost_watermark(struct zone *zone)
{
	unsigned long max_boost, factor = watermark_boost_factor(zone->machine);

	if (!factor)
		return false;
	/* Small zones: boosting could make an OOM at once. */
	if (pageblock_nr_pages * 4 > zone->managed_pages)
		return false;
	max_boost = zone->_watermark[WMARK_HIGH] * factor / 10000;
	if (!max_boost)
		return false;
	max_boost = max(pageblock_nr_pages, max_boost);
	WRITE_ONCE(zone->watermark_boost, min(zone->watermark_boost + pageblock_nr_pages, max_boost));
	pl_count(PL_EV_WMARK_BOOST, 1);
	return true;
}

/* pgdat_balanced(): some zone up to @highest_zoneidx is above its high watermark. */
static bool pgdat_balanced(struct pl_machine *m, unsigned int order, int highest_zoneidx)
{
	bool any = false;

	for (int zi = 0; zi <= highest_zoneidx; zi++) {
		struct zone *zone = &m->node_zones[zi];

		if (!populated_zone(zone))
			continue;
		any = true;
		if (zone_watermark_ok_safe(zone, order, high_wmark_pages(zone), highest_zoneidx))
			return true;
	}
	return !any;
}

static bool pgdat_watermark_boosted(struct pl_machine *m, int highest_zoneidx)
{
	for (int zi = highest_zoneidx; zi >= 0; zi--)
		if (READ_ONCE(m->node_zones[zi].watermark_boost))
			return true;
	return false;
}

/**
 * wakeup_kswapd() - wake kswapd for the zones up to @highest_zoneidx unless
 * the node is balanced and unboosted. pagelab's kswapd then runs at the
 * next vmstat tick (see the file comment).
 * @zone: a zone of the node; @order: the order wanted.
 */
void wakeup_kswapd(struct zone *zone, unsigned int order, int highest_zoneidx)
{
	struct pl_machine *m = zone->machine;
	bool woken = false;

	if (pgdat_balanced(m, order, highest_zoneidx) && !pgdat_watermark_boosted(m, highest_zoneidx))
		return;
	/* what kswapd then asks kcompactd for: the highest order and zone asked */
	if (READ_ONCE(m->kswapd_order) < (int)order)
		WRITE_ONCE(m->kswapd_order, (int)order);
	if (READ_ONCE(m->kswapd_highest_zoneidx) < highest_zoneidx + 1)
		WRITE_ONCE(m->kswapd_highest_zoneidx, highest_zoneidx + 1);
	for (int zi = 0; zi <= highest_zoneidx; zi++) {
		struct zone *z = &m->node_zones[zi];

		if (!populated_zone(z) || zone_test_flag(z, ZONE_KSWAPD_PENDING))
			continue;
		zone_set_flag(z, ZONE_KSWAPD_PENDING);
		woken = true;
	}
	if (woken)
		pl_count(PL_EV_KSWAPD_WAKE, 1);
}

static void wake_all_kswapds(struct pl_machine *m, unsigned int order, int highest_zoneidx)
{
	wakeup_kswapd(&m->node_zones[highest_zoneidx], order, highest_zoneidx);
}

/* A kswapd run starts on @zone: ZONE_RECLAIM_ACTIVE, and the boost it has noted in *@boost. */
static void kswapd_zone_begin(struct zone *zone, unsigned long *boost)
{
	*boost = READ_ONCE(zone->watermark_boost);
	zone_set_flag(zone, ZONE_RECLAIM_ACTIVE);
}

/* The run ends on @zone: it leaves ZONE_RECLAIM_ACTIVE and drops the @boost it had at the start. */
static void kswapd_zone_end(struct zone *zone, unsigned long boost)
{
	zone_clear_flag(zone, ZONE_RECLAIM_ACTIVE);
	if (!boost)
		return;
	spin_lock(&zone->lock);
	WRITE_ONCE(zone->watermark_boost, zone->watermark_boost - min(zone->watermark_boost, boost));
	spin_unlock(&zone->lock);
	pl_count(PL_EV_WMARK_BOOST_CLEAR, 1);
}

/*
 * kswapd_try_to_sleep(): the run is over; on a node balanced for order 0
 * (the kernel's kswapd drops a high order to 0 once it has reclaimed
 * compact_gap() pages, and leaves the order to compaction) it resets the
 * skip bits of the zones a direct compactor finished in
 * (reset_isolation_suitable(): memory was freed, blocks compaction gave up
 * on may be worth a look again) and wakes kcompactd for the order it was
 * woken for.
 */
static void kswapd_try_to_sleep(struct pl_machine *m)
{
	int order = READ_ONCE(m->kswapd_order);
	int highest = READ_ONCE(m->kswapd_highest_zoneidx) - 1;

	WRITE_ONCE(m->kswapd_order, 0);
	WRITE_ONCE(m->kswapd_highest_zoneidx, 0);
	if (highest < 0)
		highest = MAX_NR_ZONES - 1;
	if (pgdat_balanced(m, 0, highest)) {
		reset_isolation_suitable(m);
		wakeup_kcompactd(m, order, highest);
	}
}

/* pl_kswapd_run(): see include/pagelab/mm.h. */
void pl_kswapd_run(struct pl_machine *m)
{
	unsigned long boosts[MAX_NR_ZONES] = { 0 };
	bool run = false, woken[MAX_NR_ZONES] = { false };
	struct zone *zone;

	if (!m && pl_arg_refused(__func__, "NULL machine"))
		return;
	if (m->kswapd_traced)
		return;	/* a replay follows the kernel's kswapd (pl_kswapd_begin()) */
	for_each_populated_zone(zone, m)	/* the usual answer, before any set-up */
		if (zone_test_flag(zone, ZONE_KSWAPD_PENDING))
			goto pending;
	return;
pending:
	/*
	 * One of concurrent ticks takes each zone's wakeup. A plain read first:
	 * a replay calls this at every event, and most find no wakeup.
	 */
	for_each_populated_zone(zone, m) {
		if (!zone_test_flag(zone, ZONE_KSWAPD_PENDING) ||
		    !zone_test_and_clear_flag(zone, ZONE_KSWAPD_PENDING))
			continue;
		woken[zone->zone_idx] = true;
		kswapd_zone_begin(zone, &boosts[zone->zone_idx]);
		run = true;
	}
	if (!run)
		return;
	pl_count(PL_EV_KSWAPD_RUN, 1);
	/* shrink_node() would go here: pagelab has no LRU, so no progress. */
	for_each_populated_zone(zone, m)
		if (woken[zone->zone_idx])
			kswapd_zone_end(zone, boosts[zone->zone_idx]);
	kswapd_try_to_sleep(m);
}

/* ---- the slow path -------------------------------------------------------- */

/*
 * targeted_drain (pagelab's own, targeted_drain.c): instead of
 * drain_all_pages(), drain one CPU at a time, the one holding most of what
 * is needed, and retry after each; each zone the zonelist allows, highest
 * first. Return: the page, or NULL.
 */
static struct page *retry_after_targeted_drain(struct pl_machine *m, gfp_t gfp, unsigned int order,
					       unsigned int alloc_flags, int highest_zoneidx,
					       int migratetype)
{
	size_t longs = (m->nr_cpus + 8 * sizeof(long) - 1) / (8 * sizeof(long));
	unsigned long *asked = malloc(longs * sizeof(long));
	struct page *page = NULL;

	if (!asked)
		return NULL;
	for (int zi = highest_zoneidx; zi >= 0 && !page; zi--) {
		struct zone *zone = &m->node_zones[zi];

		if (!populated_zone(zone))
			continue;
		memset(asked, 0, longs * sizeof(long));
		while (!page && targeted_drain(zone, order, migratetype, asked))
			page = get_page_from_freelist(m, gfp, order, alloc_flags, highest_zoneidx,
						      migratetype);
	}
	free(asked);
	return page;
}

/*
 * __alloc_pages_direct_reclaim() after a reclaim that freed nothing but is
 * taken as progress (file comment, 1): pages may be pinned on per-CPU lists
 * or in highatomic reserves; release them and try again.
 */
static struct page *__alloc_pages_direct_reclaim(struct pl_machine *m, gfp_t gfp,
						 unsigned int order, unsigned int alloc_flags,
						 int highest_zoneidx, int migratetype)
{
	struct page *page;

	/* The kernel's first get_page_from_freelist() here would see what the last one saw. */
	unreserve_highatomic_pageblock(m, highest_zoneidx, migratetype, false);
	pl_count(PL_EV_DRAIN_RETRY, 1);
	if (m->config.design.targeted_drain) {
		page = retry_after_targeted_drain(m, gfp, order, alloc_flags, highest_zoneidx,
						  migratetype);
	} else {
		drain_all_pages(NULL);
		page = get_page_from_freelist(m, gfp, order, alloc_flags, highest_zoneidx,
					      migratetype);
	}
	if (page)
		pl_count(PL_EV_DRAIN_RETRY_OK, 1);
	return page;
}

/**
 * __alloc_pages_slowpath() - the fast path failed: wake kswapd, retry with
 * the slow path's alloc_flags, then (callers that may sleep) drain and
 * retry, then release highatomic reserves while that helps.
 * Return: the page, or NULL. Context: alloc_pages(); no pcp->lock held.
 */
struct page *__alloc_pages_slowpath(struct pl_machine *m, gfp_t gfp, unsigned int order,
				    int highest_zoneidx, int migratetype)
{
	bool can_direct_reclaim = gfp & __GFP_DIRECT_RECLAIM;
	bool costly = order > PAGE_ALLOC_COSTLY_ORDER;
	unsigned int alloc_flags = gfp_to_alloc_flags(gfp, order);
	enum compact_priority prio = DEF_COMPACT_PRIORITY;
	enum pl_compact_result compact_result = PL_COMPACT_SKIPPED;
	int compaction_retries = 0, rounds = 0;
	struct page *page;

	if (alloc_flags & ALLOC_KSWAPD)
		wake_all_kswapds(m, order, highest_zoneidx);
	page = get_page_from_freelist(m, gfp, order, alloc_flags, highest_zoneidx, migratetype);
	if (page || !can_direct_reclaim)
		return page;
	/* costly and unmovable high orders compact before reclaiming (async first) */
	if (costly || (order && migratetype != MIGRATE_MOVABLE)) {
		page = __alloc_pages_direct_compact(m, gfp, order, alloc_flags, highest_zoneidx,
						    migratetype, INIT_COMPACT_PRIORITY,
						    &compact_result);
		if (page)
			return page;
		if (costly && (gfp & __GFP_NORETRY)) {
			if (compact_result == PL_COMPACT_SKIPPED ||
			    compact_result == PL_COMPACT_DEFERRED)
				return NULL;
			prio = INIT_COMPACT_PRIORITY;
		}
	}
	for (;;) {
		page = __alloc_pages_direct_reclaim(m, gfp, order, alloc_flags, highest_zoneidx,
						    migratetype);
		if (page)
			return page;
		page = __alloc_pages_direct_compact(m, gfp, order, alloc_flags, highest_zoneidx,
						    migratetype, prio, &compact_result);
		if (page)
			return page;
		if (gfp & __GFP_NORETRY)
			return NULL;
		/* Costly orders give up here without __GFP_RETRY_MAYFAIL. */
		if (costly && !(gfp & __GFP_RETRY_MAYFAIL))
			return NULL;
		/*
		 * should_compact_retry(), bounded: reclaim frees nothing here, so
		 * a retry can only differ by compaction's priority or a race.
		 */
		if (++rounds <= MAX_COMPACT_RETRIES &&
		    should_compact_retry(m, order, highest_zoneidx, compact_result, &prio,
					 &compaction_retries))
			continue;
		if (costly)
			return NULL;
		/* should_reclaim_retry() out of rounds: before OOM, exhaust the reserves. */
		if (!unreserve_highatomic_pageblock(m, highest_zoneidx, migratetype, true))
			return NULL;
		if (alloc_flags & ALLOC_KSWAPD)
			wake_all_kswapds(m, order, highest_zoneidx);
		page = get_page_from_freelist(m, gfp, order, alloc_flags, highest_zoneidx,
					      migratetype);
		if (page)
			return page;
	}
}

void pl_kswapd_begin(struct pl_machine *m)
{
	struct zone *zone;

	if (!m && pl_arg_refused(__func__, "NULL machine"))
		return;
	if (m->kswapd_traced)
		return;
	m->kswapd_traced = true;
	pl_count(PL_EV_KSWAPD_RUN, 1);
	for_each_populated_zone(zone, m) {
		zone_clear_flag(zone, ZONE_KSWAPD_PENDING);	/* this run takes the wakeup */
		kswapd_zone_begin(zone, &m->kswapd_boost[zone->zone_idx]);
	}
}

void pl_kswapd_end(struct pl_machine *m)
{
	struct zone *zone;

	if (!m && pl_arg_refused(__func__, "NULL machine"))
		return;
	if (!m->kswapd_traced)
		return;
	for_each_populated_zone(zone, m) {
		kswapd_zone_end(zone, m->kswapd_boost[zone->zone_idx]);
		m->kswapd_boost[zone->zone_idx] = 0;
	}
	m->kswapd_traced = false;
	/* going to sleep on a balanced node: as kswapd_try_to_sleep() */
	if (pgdat_balanced(m, 0, MAX_NR_ZONES - 1))
		reset_isolation_suitable(m);
	/* the trace shows kcompactd's own wakes: the replay runs those */
	WRITE_ONCE(m->kswapd_order, 0);
	WRITE_ONCE(m->kswapd_highest_zoneidx, 0);
}
