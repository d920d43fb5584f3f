// SPDX-License-Identifier: MIT
/*
 * targeted_drain.c - pagelab's own design from the seed 003 thread. Switch:
 * targeted_drain (preset targeted-drain).
 *
 * Johannes Weiner: "if a CPU needs something another CPU might have, we ask
 * EVERY CPU in the system to drain ... simultaneously ... All other CPUs are
 * now cache cold". Zi Yan: "ask the other CPUs to drain the minimal amount
 * ... I do not have a good idea on how to do that yet". This is one answer:
 *
 *  - whom to ask: the CPU whose PCP holds the most pages of the migratetype
 *    the allocation needs (the per-CPU counts per order and migratetype are
 *    read off the lists under each pcp->lock; a kernel would keep them as
 *    counters, the slow path here can afford to count), ties to the CPU
 *    nearest by number. If no CPU holds pages of that type, any type, since
 *    the fallback may steal them.
 *  - how much: that CPU's pages of the type, coldest first, up to what the
 *    allocation needs: for order 0, the zone's shortfall against its min
 *    watermark plus the page itself; for a higher order every page of the
 *    type, since only merging in the zone can make the block.
 *  - then retry; ask the next CPU only if the retry fails.
 *
 * drain_all_pages() is the baseline this replaces in the slow path
 * (alloc_pages()); both count the CPUs they drain (TARGETED_DRAIN_CPUS,
 * DRAIN_ALL_CPUS), which is the "cache cold" cost the thread names.
 *
 * Locking: one pcp->lock at a time to count, then that pcp->lock and
 * zone->lock inside it to free, as free_pcppages_bulk().
 */
#include "internal.h"

#define BITS_PER_LONG (8 * sizeof(long))

/* The PCP lists that hold @mt's pages: orders 0..3, then the THP list. */
static bool pindex_is_type(unsigned int pindex, int mt)
{
	if (pindex < NR_LOWORDER_PCP_LISTS)
		return (int)(pindex % MIGRATE_PCPTYPES) == mt;
	return (pindex - NR_LOWORDER_PCP_LISTS == 1) == (mt == MIGRATE_MOVABLE);
}

/* Pages on @pcp's lists of type @mt (any type if @mt < 0). Context: pcp->lock. */
static unsigned long pcp_pages_of_type(const struct per_cpu_pages *pcp, int mt)
{
	unsigned long pages = 0;

	for (unsigned int pindex = 0; pindex < NR_PCP_LISTS; pindex++) {
		const struct list_head *pos;

		if (mt >= 0 && !pindex_is_type(pindex, mt))
			continue;
		list_for_each(pos, &pcp->lists[pindex])
			pages += 1UL << pindex_to_order(pindex);
	}
	return pages;
}

/* Free up to @need pages of type @mt (any if < 0) from @pcp, coldest first. */
static unsigned long drain_type(struct zone *zone, struct per_cpu_pages *pcp, int mt,
				unsigned long need)
{
	unsigned long moved = 0;

	spin_lock(&zone->lock);
	for (unsigned int pindex = 0; pindex < NR_PCP_LISTS && moved < need; pindex++) {
		struct list_head *list = &pcp->lists[pindex];
		unsigned int order = pindex_to_order(pindex);

		if (mt >= 0 && !pindex_is_type(pindex, mt))
			continue;
		while (!list_empty(list) && moved < need) {
			struct page *page = list_last_entry(list, struct page, pcp_list);
			unsigned long pfn = page_to_pfn(page);

			list_del(&page->pcp_list);
			WRITE_ONCE(page->pcp_cpu1, 0);	/* pcp_premerge's tag, if any */
			pcp->count -= 1 << order;
			moved += 1UL << order;
			__free_one_page(page, pfn, zone, order,
					get_pfnblock_migratetype(page, pfn), FPI_NONE);
		}
	}
	pcp_drain_finish(zone, pcp, 0, (int)moved);
	return moved;
}

/* What an allocation of @order needs drained from one CPU (see the file comment). */
static unsigned long drain_need(const struct zone *zone, unsigned int order)
{
	long free = zone_page_state(zone, NR_FREE_PAGES);
	long want = (long)min_wmark_pages(zone) + (1L << order);

	if (order)
		return ~0UL;
	return want > free ? (unsigned long)(want - free) : 1;
}

/**
 * targeted_drain() - drain the one CPU, not yet set in @asked, that holds
 * the most pages of @migratetype in @zone, as much as an allocation of
 * @order needs. @asked has a bit per CPU; the caller zeroes it once per
 * allocation and retries after each call.
 * Return: pages drained; 0 when no CPU left holds any page.
 */
unsigned long targeted_drain(struct zone *zone, unsigned int order, int migratetype,
			     unsigned long *asked)
{
	struct pl_machine *m = zone->machine;
	unsigned int self = pl_this.cpu ? pl_this.cpu->id : 0;

	for (int mt = migratetype; ; mt = -1) {
		unsigned long best_pages = 0;
		unsigned int best = 0;

		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
			unsigned long pages;

			if (asked[cpu / BITS_PER_LONG] & (1UL << (cpu % BITS_PER_LONG)))
				continue;
			spin_lock(&pcp->lock);
			pages = pcp_pages_of_type(pcp, mt);
			spin_unlock(&pcp->lock);
			/* most pages first; among equals, the nearest CPU */
			if (pages > best_pages ||
			    (pages && pages == best_pages &&
			     (cpu > self ? cpu - self : self - cpu) <
			     (best > self ? best - self : self - best))) {
				best_pages = pages;
				best = cpu;
			}
		}
		if (best_pages) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[best];
			unsigned long moved;

			asked[best / BITS_PER_LONG] |= 1UL << (best % BITS_PER_LONG);
			pl_count(PL_EV_TARGETED_DRAIN_CPUS, 1);
			spin_lock(&pcp->lock);
			moved = drain_type(zone, pcp, mt, drain_need(zone, order));
			spin_unlock(&pcp->lock);
			return moved;
		}
		if (mt < 0)
			return 0;
	}
}
