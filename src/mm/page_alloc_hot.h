/* SPDX-License-Identifier: MIT */
/*
 * page_alloc_hot.h - the page allocator's per-call work on its usual paths,
 * as always-inline templates with one constant parameter, @hooks:
 * get_page_from_freelist()'s first zone with rmqueue() and the PCP's hit,
 * and __free_frozen_pages() to the PCP.
 *
 * With @hooks true they are the general code (page_alloc.c and pcp.c
 * instantiate them so): each hook tests itself, as everywhere else. With
 * @hooks false every test of a hook compiles away: the entry points
 * (page_alloc_api.c) instantiate them so when pl_hooks_off() says, once
 * per call, that none is on: no virtual time on this thread, no tracepoint
 * sink, fail_page_alloc not armed, no debug checks, no lock_stat, no design
 * switch on these paths. What is not hooks is the same code in both
 * variants, so they change the machine identically; everything off the
 * usual path (a refill, a drain, the buddy, the zonelist walk) is one
 * out-of-line call, shared.
 *
 * With @hooks PL_HV_DESIGN (internal.h) the entry points run them for a
 * machine whose only hooks are design switches (pl_hooks_design_only()):
 * the switches' own tests stay, every other hook compiles away, and what
 * leaves the usual path takes the general out-of-line code.
 *
 * Invariant: a @hooks false caller has checked pl_hooks_off() on this call,
 * a PL_HV_DESIGN caller pl_hooks_design_only(); only the hooks those cover
 * are skipped.
 */
#ifndef PAGELAB_MM_PAGE_ALLOC_HOT_H
#define PAGELAB_MM_PAGE_ALLOC_HOT_H

#include "internal.h"

/* ---- PCP (pcp.c) ------------------------------------------------------------ */

static inline int clamp_int(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* The limit above which a free drains: auto-tuned, see pcp.c's comment. */
static __always_inline int nr_pcp_high(struct per_cpu_pages *pcp, const struct zone *zone,
				       int batch, bool free_high)
{
	int high_min = pcp->high_min, high_max = pcp->high_max;
	int high = pcp->high = clamp_int(pcp->high, high_min, high_max);

	if (unlikely(!high))
		return 0;
	if (unlikely(free_high)) {
		pcp->high = max(high - (batch << PCP_BATCH_SCALE_MAX), high_min);
		return 0;
	}
	/* kswapd is reclaiming: keep the lists short so reclaimed pages reach the buddy. */
	if (zone_test_flag(zone, ZONE_RECLAIM_ACTIVE)) {
		pcp->high = max(high - max((int)pcp->free_count, batch), high_min);
		return min(batch << 2, pcp->high);
	}
	if (high_min == high_max)
		return high;
	if (zone_test_flag(zone, ZONE_BELOW_HIGH)) {
		pcp->high = max(high - max((int)pcp->free_count, batch), high_min);
		return max(pcp->count, high_min);
	}
	if (pcp->count >= high && pcp->high < pcp->free_count + batch)
		pcp->high = clamp_int(pcp->free_count + batch, high_min, high_max);
	return high;
}

/*
 * free_frozen_page_commit() - queue a freed block on @pcp and drain if it
 * overflows. A stream of high-order (1..3) frees without allocations sets
 * free_high and drains harder, since such pages fragment if cached.
 * PCPF_FREE_HIGH_BATCH is set from the profile's last-level cache as
 * zone_pcp_update_cacheinfo() does. @owned (pcp_owner) needs @hooks.
 * Context: pcp->lock.
 */
static __always_inline void free_frozen_page_commit_h(struct zone *zone,
						      struct per_cpu_pages *pcp, struct page *page,
						      unsigned long pfn, int migratetype,
						      unsigned int order, bool owned,
						      const unsigned int hooks)
{
	unsigned int pindex = order_to_pindex(migratetype, order);
	int batch = pcp->batch, high;
	bool free_high = false;

	pcp->alloc_factor >>= 1;
	if (hooks && owned)
		pcp_owner_free_chunk(zone, pcp, page, pfn, order);
	else
		list_add(&page->pcp_list, &pcp->lists[pindex]);
	pl_vt_touch_h(&pcp->lists[pindex], true, hooks & PL_HV_ALL);
	if (hooks && !owned && design_pcp_premerge(zone))
		pcp_premerge_tag(pcp, zone, page, order);
	pcp->count += 1 << order;
	pl_count_h(PL_EV_PCP_FREE, 1, hooks & PL_HV_ALL);

	if (order && order <= PAGE_ALLOC_COSTLY_ORDER) {
		free_high = pcp->free_count >= batch + pcp->high_min / 2 &&
			    (pcp->flags & PCPF_PREV_FREE_HIGH_ORDER) &&
			    (!(pcp->flags & PCPF_FREE_HIGH_BATCH) || pcp->count >= batch);
		pcp->flags |= PCPF_PREV_FREE_HIGH_ORDER;
	} else if (pcp->flags & PCPF_PREV_FREE_HIGH_ORDER) {
		pcp->flags &= (unsigned char)~PCPF_PREV_FREE_HIGH_ORDER;
	}
	if (pcp->free_count < (batch << PCP_BATCH_SCALE_MAX))
		pcp->free_count = (short)(pcp->free_count + (1 << order));

	high = nr_pcp_high(pcp, zone, batch, free_high);
	if (pcp->count >= high)
		pcp_free_overflow(zone, pcp, batch, high, free_high, pindex, order);
}

/*
 * free_frozen_page_pcp() - a freed block of a PCP order to this CPU's PCP,
 * or to the zone when pcp->lock is busy.
 */
static __always_inline void free_frozen_page_pcp_h(struct zone *zone, struct page *page,
						   unsigned long pfn, unsigned int order,
						   int migratetype, fpi_t fpi_flags, const unsigned int hooks)
{
	struct per_cpu_pages *pcp;

	if (hooks && unlikely(design_pcp_owner(zone)) &&
	    free_frozen_page_owned(zone, page, pfn, order, migratetype, fpi_flags))
		return;
	pcp = this_cpu_pcp(zone);
	/* FPI_PL_PCP_BUSY: a replayed free whose kernel trylock failed (pl_free_pages_pcp_busy()) */
	if (unlikely(fpi_flags & FPI_PL_PCP_BUSY) || !spin_trylock_h(&pcp->lock, hooks & PL_HV_ALL)) {
		pl_count_h(PL_EV_PCP_TRYLOCK_FAIL, 1, hooks & PL_HV_ALL);
		free_one_page(zone, page, pfn, order, fpi_flags & ~FPI_PL_PCP_BUSY);
		return;
	}
	free_frozen_page_commit_h(zone, pcp, page, pfn, migratetype, order, false, hooks);
	spin_unlock_h(&pcp->lock, hooks & PL_HV_ALL);
}

static __always_inline struct page *__rmqueue_pcplist_h(struct zone *zone, unsigned int order,
							int migratetype, unsigned int alloc_flags,
							struct per_cpu_pages *pcp,
							struct list_head *list, const unsigned int hooks)
{
	struct page *page;

	do {
		if (unlikely(list_empty(list))) {
			if (!pcp_refill(zone, order, migratetype, alloc_flags, pcp, list, &page))
				return NULL;
			if (page) {		/* pcp_owner served it from an owned block */
				pcp->count -= 1 << order;
				continue;
			}
		} else {
			pl_count_h(PL_EV_PCP_HIT, 1, hooks & PL_HV_ALL);
		}
		page = list_first_entry(list, struct page, pcp_list);
		pl_vt_touch_h(list, true, hooks & PL_HV_ALL);	/* the PCP list head and the page */
		pl_vt_touch_h(page, true, hooks & PL_HV_ALL);
		list_del(&page->pcp_list);
		if (hooks && design_pcp_premerge(zone))
			WRITE_ONCE(page->pcp_cpu1, 0);
		pcp->count -= 1 << order;
	} while (check_new_page(page));
	return page;
}

static __always_inline struct page *rmqueue_pcplist_h(struct zone *zone, unsigned int order,
						      int migratetype, unsigned int alloc_flags,
						      const unsigned int hooks)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	struct page *page;

	if (!spin_trylock_h(&pcp->lock, hooks & PL_HV_ALL)) {
		pl_count_h(PL_EV_PCP_TRYLOCK_FAIL, 1, hooks & PL_HV_ALL);
		return NULL;
	}
	pcp->free_count >>= 1;
	page = __rmqueue_pcplist_h(zone, order, migratetype, alloc_flags, pcp,
				   &pcp->lists[order_to_pindex(migratetype, order)], hooks);
	spin_unlock_h(&pcp->lock, hooks & PL_HV_ALL);
	return page;
}

/* ---- page_alloc.c ------------------------------------------------------------ */

static __always_inline struct page *rmqueue_h(struct zone *zone, unsigned int order,
					      unsigned int alloc_flags, int migratetype,
					      const unsigned int hooks)
{
	struct page *page = NULL;

	/*
	 * pcp_block_economy: below a block, only the PCPs split (pcp_owner.c);
	 * whole blocks and the highatomic reserve come from the zone, never
	 * through a PCP list, which the economy's drains would not empty.
	 */
	if (hooks && design_block_economy(zone)) {
		if (order < pageblock_order && migratetype < MIGRATE_PCPTYPES)
			page = economy_rmqueue(zone, order, migratetype, alloc_flags);
		else
			page = rmqueue_buddy(zone, order, alloc_flags, migratetype);
	} else {
		if (likely(pcp_use(zone, order)))
			page = rmqueue_pcplist_h(zone, order, migratetype, alloc_flags, hooks);
		if (!page)
			page = hooks ? rmqueue_buddy(zone, order, alloc_flags, migratetype)
				     : rmqueue_buddy_nohooks(zone, order, alloc_flags, migratetype);
	}
	/* A fallback claim boosted the watermark: wake kswapd (test, then clear). */
	if ((alloc_flags & ALLOC_KSWAPD) &&
	    unlikely(zone_test_flag(zone, ZONE_BOOSTED_WATERMARK))) {
		zone_clear_flag(zone, ZONE_BOOSTED_WATERMARK);
		wakeup_kswapd(zone, 0, zone->zone_idx);
	}
	return page;
}

/* Free pages a request may not count: its own size, and the highatomic reserve. */
static inline long __zone_watermark_unusable_free(const struct zone *z, unsigned int order,
						  unsigned int alloc_flags)
{
	long unusable_free = (1L << order) - 1;

	if (likely(!(alloc_flags & ALLOC_RESERVES)))
		unusable_free += (long)READ_ONCE(z->nr_free_highatomic);
	return unusable_free;
}

/*
 * get_page_from_freelist() - the zonelist walk, with its usual first step
 * inline: an order-0 request whose preferred zone is populated and above its
 * high watermark (zone_watermark_fast()'s order-0 test, which has no side
 * effect) goes straight to rmqueue(). Anything else, and a failed rmqueue(),
 * continues in zonelist_walk() exactly where the walk would be.
 */
static __always_inline struct page *get_page_from_freelist_h(struct pl_machine *m, gfp_t gfp,
							     unsigned int order,
							     unsigned int alloc_flags,
							     int highest_zoneidx, int migratetype,
							     const unsigned int hooks)
{
	struct zone *zone = &m->node_zones[highest_zoneidx];
	struct page *page;
	long free_pages;

	if (order || !populated_zone(zone) || zone_test_flag(zone, ZONE_BELOW_HIGH))
		return zonelist_walk(m, gfp, order, alloc_flags, highest_zoneidx, migratetype,
				     highest_zoneidx);
	free_pages = zone_page_state(zone, NR_FREE_PAGES);
	free_pages -= min(free_pages, __zone_watermark_unusable_free(zone, 0, alloc_flags));
	if (free_pages <= (long)high_wmark_pages(zone) + zone->lowmem_reserve[highest_zoneidx])
		return zonelist_walk(m, gfp, order, alloc_flags, highest_zoneidx, migratetype,
				     highest_zoneidx);
	page = rmqueue_h(zone, 0, alloc_flags, migratetype, hooks);
	if (unlikely(!page))
		return zonelist_walk(m, gfp, order, alloc_flags, highest_zoneidx, migratetype,
				     highest_zoneidx - 1);
	prep_new_page_h(page, 0, gfp, migratetype, hooks);
	if (unlikely(alloc_flags & ALLOC_HIGHATOMIC))
		reserve_highatomic_pageblock(page, 0, zone);
	return page;
}

/*
 * __free_frozen_pages() - a block whose last reference went: prepared for
 * the buddy, then to the PCP (its orders) or the zone.
 */
static __always_inline void __free_frozen_pages_h(struct page *page, unsigned int order,
						  fpi_t fpi_flags, const unsigned int hooks)
{
	unsigned long pfn = page_to_pfn(page);
	struct zone *zone = page_zone(page);
	int migratetype;

	if (!(fpi_flags & FPI_PREPARED) && !free_pages_prepare(page, order))
		return;
	pl_vt_touch_h(page, true, hooks & PL_HV_ALL);	/* the freeing CPU writes the struct page */
	pl_count2_h(PL_EV_PGFREE, 1, PL_EV_PGFREE_PAGES, 1UL << order,
		    hooks & PL_HV_ALL);
	if (hooks & PL_HV_ALL)
		pl_trace(zone->machine, PL_TP_MM_PAGE_FREE,
			 (struct pl_tp_event){ .pfn = pfn, .order = (int)order });
	if (!pcp_use(zone, order) &&
	    !(hooks && design_block_economy(zone) && order < pageblock_order)) {
		if (hooks)
			free_one_page(zone, page, pfn, order, fpi_flags);
		else
			free_one_page_nohooks(zone, page, pfn, order, fpi_flags);
		return;
	}
	/*
	 * Isolated pageblocks go straight back to the buddy; highatomic
	 * pages use the movable list, as the kernel does.
	 */
	migratetype = get_pfnblock_migratetype_zone(zone, pfn);
	if (unlikely(migratetype >= MIGRATE_PCPTYPES)) {
		if (is_migrate_isolate(migratetype)) {
			free_one_page(zone, page, pfn, order, fpi_flags);
			return;
		}
		migratetype = MIGRATE_MOVABLE;
	}
	free_frozen_page_pcp_h(zone, page, pfn, order, migratetype, fpi_flags, hooks);
}

#endif /* PAGELAB_MM_PAGE_ALLOC_HOT_H */
