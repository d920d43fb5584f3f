// SPDX-License-Identifier: MIT
/*
 * compaction_direct.c - direct compaction, as mm/compaction.c and
 * mm/page_alloc.c of Linux 6.18 run it for an allocation in the slow path,
 * in pagelab's own code: try_to_compact_pages() over the zonelist with
 * deferral, compact_zone_order() with capture (compaction_capture(): a
 * block of the wanted order that forms in __free_one_page() on the
 * compactor's thread goes to it), __alloc_pages_direct_compact() and the
 * priorities and retries of should_compact_retry().
 *
 * Invariants: a direct compactor's capture control is its thread's
 * (pl_capture_control) for the duration of its compact_zone(), and
 * m->compact_capturing counts the running ones (task_capc() looks only
 * when it is non-zero). Without a migrate holder nothing is movable, and
 * direct compaction is skipped.
 */
#include "internal.h"
#include "pagelab/compaction.h"

/* compaction_capture(): see __free_one_page(). */
bool compaction_capture(struct capture_control *capc, struct page *page, unsigned int order,
			int migratetype)
{
	if ((int)order != capc->cc->order || is_migrate_isolate(migratetype))
		return false;
	/* a smaller order must not pollute a movable block unless it wants movable */
	if (order < pageblock_order && migratetype == MIGRATE_MOVABLE &&
	    capc->cc->migratetype != MIGRATE_MOVABLE)
		return false;
	capc->page = page;
	pl_count(PL_EV_COMPACT_CAPTURE, 1);
	return true;
}

/* compact_zone_order(): one direct compaction of @zone at @prio, with capture. */
static enum pl_compact_result compact_zone_order(struct zone *zone, int order, gfp_t gfp,
						 enum compact_priority prio,
						 unsigned int alloc_flags, int highest_zoneidx,
						 struct page **capture)
{
	struct compact_control cc = {
		.order = order, .search_order = order, .gfp_mask = gfp, .zone = zone,
		.mode = prio == COMPACT_PRIO_ASYNC ? MIGRATE_ASYNC : MIGRATE_SYNC_LIGHT,
		.alloc_flags = alloc_flags, .highest_zoneidx = highest_zoneidx,
		.direct_compaction = true, .whole_zone = prio == MIN_COMPACT_PRIORITY,
		.ignore_skip_hint = prio == MIN_COMPACT_PRIORITY,
		.ignore_block_suitable = prio == MIN_COMPACT_PRIORITY,
	};
	struct capture_control capc = { .cc = &cc, .page = NULL };
	enum pl_compact_result ret;

	WRITE_ONCE(pl_capture_control, &capc);
	__atomic_add_fetch(&zone->machine->compact_capturing, 1, __ATOMIC_RELAXED);
	ret = compact_zone(&cc, &capc);
	__atomic_sub_fetch(&zone->machine->compact_capturing, 1, __ATOMIC_RELAXED);
	WRITE_ONCE(pl_capture_control, NULL);
	*capture = capc.page;
	if (*capture)
		ret = PL_COMPACT_SUCCESS;
	return ret;
}

enum pl_compact_result try_to_compact_pages(struct pl_machine *m, gfp_t gfp, unsigned int order,
					    unsigned int alloc_flags, int highest_zoneidx,
					    enum compact_priority prio, struct page **capture)
{
	enum pl_compact_result rc = PL_COMPACT_SKIPPED;

	*capture = NULL;
	if (!(gfp & __GFP_DIRECT_RECLAIM) || !order)
		return PL_COMPACT_SKIPPED;
	/*
	 * Without a holder nothing is movable, so no compaction run could free
	 * a block. Skipping it also keeps the migrate scanner's lockless reads
	 * of other CPUs' struct pages (which the kernel tolerates) away from
	 * machines driven by several real threads, where they are C data races.
	 */
	if (!m->migrate_ops)
		return PL_COMPACT_SKIPPED;
	for (int zi = highest_zoneidx; zi >= 0; zi--) {
		struct zone *zone = &m->node_zones[zi];
		enum pl_compact_result status;

		if (!populated_zone(zone))
			continue;
		if (prio > MIN_COMPACT_PRIORITY && compaction_deferred(zone, (int)order)) {
			rc = max(rc, PL_COMPACT_DEFERRED);
			continue;
		}
		status = compact_zone_order(zone, (int)order, gfp, prio, alloc_flags,
					    highest_zoneidx, capture);
		rc = max(status, rc);
		if (status == PL_COMPACT_SUCCESS) {
			/* not yet allocated: the caller resets the deferral on success */
			compaction_defer_reset(zone, (int)order, false);
			break;
		}
		if (prio != COMPACT_PRIO_ASYNC &&
		    (status == PL_COMPACT_COMPLETE || status == PL_COMPACT_PARTIAL_SKIPPED))
			defer_compaction(zone, (int)order);
	}
	return rc;
}

/* ---- direct compaction in the slow path (mm/page_alloc.c) --------------------------- */

struct page *__alloc_pages_direct_compact(struct pl_machine *m, gfp_t gfp, unsigned int order,
					  unsigned int alloc_flags, int highest_zoneidx,
					  int migratetype, enum compact_priority prio,
					  enum pl_compact_result *result)
{
	struct page *page = NULL;

	if (!order)
		return NULL;
	*result = try_to_compact_pages(m, gfp, order, alloc_flags, highest_zoneidx, prio, &page);
	if (*result == PL_COMPACT_SKIPPED)
		return NULL;
	pl_count(PL_EV_COMPACT_STALL, 1);
	if (page)
		prep_new_page(page, order, gfp, migratetype);
	else
		page = get_page_from_freelist(m, gfp, order, alloc_flags, highest_zoneidx,
					      migratetype);
	if (page) {
		compaction_defer_reset(page_zone(page), (int)order, true);
		pl_count(PL_EV_COMPACT_SUCCESS, 1);
		return page;
	}
	pl_count(PL_EV_COMPACT_FAIL, 1);
	return NULL;
}

/* compaction_zonelist_suitable(): would compaction run anywhere after reclaim? */
static bool compaction_zonelist_suitable(struct pl_machine *m, unsigned int order,
					 int highest_zoneidx)
{
	for (int zi = highest_zoneidx; zi >= 0; zi--) {
		struct zone *zone = &m->node_zones[zi];

		if (populated_zone(zone) && compaction_suitable(zone, (int)order, highest_zoneidx))
			return true;
	}
	return false;
}

bool should_compact_retry(struct pl_machine *m, unsigned int order, int highest_zoneidx,
			  enum pl_compact_result result, enum compact_priority *prio, int *retries)
{
	int max_retries = MAX_COMPACT_RETRIES;
	enum compact_priority min_priority;

	if (!order)
		return false;
	/* skipped for want of free order-0 targets: only if reclaim could help */
	if (result == PL_COMPACT_SKIPPED)
		return compaction_zonelist_suitable(m, order, highest_zoneidx);
	/* compaction made a block but another allocation took it: retry a few */
	if (result == PL_COMPACT_SUCCESS) {
		if (order > PAGE_ALLOC_COSTLY_ORDER)
			max_retries /= 4;
		if (++*retries <= max_retries)
			return true;
	}
	/* failed: retry with more effort, down to the minimum priority */
	min_priority = order > PAGE_ALLOC_COSTLY_ORDER ? MIN_COMPACT_COSTLY_PRIORITY :
							 MIN_COMPACT_PRIORITY;
	if (*prio > min_priority) {
		(*prio)--;
		*retries = 0;
		return true;
	}
	return false;
}
