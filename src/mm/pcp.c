// SPDX-License-Identifier: MIT
/*
 * pcp.c - per-CPU page lists (struct per_cpu_pages), after the PCP part of
 * the kernel's mm/page_alloc.c (v6.18).
 *
 * Each vCPU has one per_cpu_pages per zone, with a list per (order <= 3,
 * PCP migratetype) and two THP lists. Allocation takes the first page of
 * its list, refilling the list from the buddy (rmqueue_bulk, one zone->lock
 * hold for `batch` blocks) when empty. Freeing puts the page at the head of
 * its list and, once pcp->count reaches the auto-tuned high, drains a
 * chunk from the list tails to the buddy (free_pcppages_bulk, one
 * zone->lock hold). batch and high are computed as zone_batchsize() and
 * zone_highsize() do; high grows while a CPU allocates and shrinks when it
 * frees high-order pages in a stream, when the zone is below its high
 * watermark, or periodically in decay_pcp_high().
 *
 * Locking: pcp->lock protects a pcp and its lists. Fast paths only trylock
 * it and fall back to the zone (the kernel's pcp_spin_trylock); drains
 * take it outright and may work on another CPU's pcp. Lock order:
 * pcp->lock, then zone->lock.
 *
 * Invariants (checked by debug.c): a page on lists[pindex] is a free block
 * of order pindex_to_order(pindex) with _refcount 0, not PageBuddy, inside
 * the zone; pcp->count is the sum of 1 << order over all lists. PCP pages
 * are not counted in NR_FREE_PAGES, as in the kernel.
 */
#include <stdlib.h>
#include <string.h>
#include "page_alloc_hot.h"
#include "validate.h"

/* 1 in the kernel's UP case; here every machine is SMP. */
#define MIN_PERCPU_PAGELIST_HIGH_FRACTION 8

/* ---- batch and high ------------------------------------------------------ */

static int rounddown_pow_of_two(int n)
{
	int p = 1;

	while (p * 2 <= n)
		p *= 2;
	return p;
}

/* About a quarter of a megabyte per batch, less for small zones; 2^n - 1. */
static int zone_batchsize(const struct zone *zone)
{
	int batch = (int)min(zone->managed_pages >> 10, (1UL << 20) / PAGE_SIZE) / 4;

	if (batch < 1)
		batch = 1;
	return rounddown_pow_of_two(batch + batch / 2) - 1;
}

/*
 * The design's batch: 6.18's, or for pcp_batch2x (pagelab's own what-if)
 * twice that, still of the form 2^n - 1.
 */
static int design_batchsize(const struct zone *zone)
{
	int batch = max(1, zone_batchsize(zone));

	if (zone->machine->config.design.pcp_batch2x)
		batch = 2 * batch + 1;
	return batch;
}

int pl_pcp_design_batch(const struct zone *zone)
{
	int ours;

	if (!zone && pl_arg_refused(__func__, "NULL zone"))
		return 0;
	ours = design_batchsize(zone);

	return ours != max(1, zone_batchsize(zone)) ? ours : 0;
}

static int zone_highsize(const struct zone *zone, int batch, int nr_cpus, int fraction)
{
	unsigned long total = fraction ? zone->managed_pages / (unsigned long)fraction
				       : low_wmark_pages(zone);
	int high = (int)(total / (unsigned long)nr_cpus);

	return max(high, batch << 2);
}

/*
 * zone_set_pageset_high_and_batch(): high_min from the low watermark, high_max
 * from an eighth of the zone, both split over the CPUs; auto-tuning moves
 * pcp->high between them. A set vm.percpu_pagelist_high_fraction is a
 * manual pcp->high: high_min = high_max = the zone over the fraction, split
 * over the CPUs, and nothing auto-tunes.
 */
static void zone_set_pageset_high_and_batch(struct zone *zone, unsigned int nr_cpus, bool boot)
{
	int batch = design_batchsize(zone);
	int fraction = (int)zone->machine->config.percpu_pagelist_high_fraction;
	int high_min = zone_highsize(zone, batch, (int)nr_cpus, fraction);
	int high_max = fraction ? high_min
				: zone_highsize(zone, batch, (int)nr_cpus,
						MIN_PERCPU_PAGELIST_HIGH_FRACTION);

	/*
	 * pcp_no_autotune (pagelab's own switch): Linux 6.0 had one fixed
	 * pcp->high (the low-watermark share, today's high_min) and refilled
	 * a plain batch; with high_max == high_min nothing auto-tunes.
	 */
	if (zone->machine->config.pcp_no_autotune)
		high_max = high_min;

	zone->pageset_batch = batch;
	zone->pageset_high_min = high_min;
	zone->pageset_high_max = high_max;
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

		spin_lock(&pcp->lock);
		WRITE_ONCE(pcp->batch, batch);
		WRITE_ONCE(pcp->high_min, high_min);
		WRITE_ONCE(pcp->high_max, high_max);
		/*
		 * At boot the kernel's pcp->high is 0 until its first use clamps
		 * it to high_min; a later update (zone_pcp_update() after memory
		 * hotplug) leaves pcp->high alone, for the next use to clamp.
		 */
		if (boot)
			pcp->high = high_min;
		spin_unlock(&pcp->lock);
	}
}

/*
 * zone_pcp_update_cacheinfo(): a CPU whose slice of the last-level cache
 * (the kernel's per_cpu_data_slice_size: LLC size / CPUs sharing it) holds
 * more than 3 * batch pages keeps batch pages on its PCP through a run of
 * high-order frees (PCPF_FREE_HIGH_BATCH, see free_frozen_page_commit()).
 * Without a topology (a bare configuration) the slice is unknown and the flag
 * stays clear, as on a kernel without cacheinfo.
 */
static void zone_pcp_update_cacheinfo(struct zone *zone, unsigned int nr_cpus)
{
	const struct pl_cpu_topology *t = &zone->machine->config.topology;
	unsigned long slice = t->llc_shared_cpus ? t->llc_bytes / t->llc_shared_cpus : 0;

	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

		spin_lock(&pcp->lock);
		if ((slice >> PAGE_SHIFT) > 3 * (unsigned long)pcp->batch)
			pcp->flags |= PCPF_FREE_HIGH_BATCH;
		else
			pcp->flags &= (unsigned char)~PCPF_FREE_HIGH_BATCH;
		spin_unlock(&pcp->lock);
	}
}

void pl_setup_zone_pagesets(struct pl_machine *m)
{
	struct zone *zone;

	for_each_zone(zone, m) {
		if (!zone->per_cpu_pageset) {
			size_t size = sizeof(struct per_cpu_pages) * m->nr_cpus;

			zone->per_cpu_pageset = pl_zalloc_lines(size);
			if (!zone->per_cpu_pageset)
				abort();
			for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
				struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

				pl_spin_init(&pcp->lock, m->config.lock_stat);
				pl_spin_set_class(&pcp->lock, VT_LOCK_PCP);
				for (int i = 0; i < NR_PCP_LISTS; i++)
					INIT_LIST_HEAD(&pcp->lists[i]);
			}
			pcp_owner_setup_zone(zone, m->nr_cpus);
		}
		if (!zone->per_cpu_zonestats) {
			/* thresholds 0 until pl_refresh_zone_stat_thresholds(), as at boot */
			zone->per_cpu_zonestats = calloc(m->nr_cpus, sizeof(struct per_cpu_zonestat));
			if (!zone->per_cpu_zonestats)
				abort();
		}
		if (populated_zone(zone)) {
			zone_set_pageset_high_and_batch(zone, m->nr_cpus, true);
			zone_pcp_update_cacheinfo(zone, m->nr_cpus);
		}
	}
}

/*
 * zone_pcp_update() for every populated zone: batch, high_min and high_max
 * from the current watermarks and managed pages; each pcp->high stays.
 */
void pl_zone_pcp_update(struct pl_machine *m)
{
	struct zone *zone;

	for_each_populated_zone(zone, m)
		zone_set_pageset_high_and_batch(zone, m->nr_cpus, false);
}

void pl_free_zone_pagesets(struct pl_machine *m)
{
	struct zone *zone;

	for_each_zone(zone, m) {
		pcp_owner_free_zone(zone, m->nr_cpus);
		free(zone->per_cpu_pageset);
		zone->per_cpu_pageset = NULL;
		free(zone->per_cpu_zonestats);
		zone->per_cpu_zonestats = NULL;
	}
}

/* ---- allocation ------------------------------------------------------------ */

/* How many blocks a refill takes: grows with consecutive order-0 refills. */
static int nr_pcp_alloc(struct per_cpu_pages *pcp, const struct zone *zone, unsigned int order)
{
	int base_batch = pcp->batch, high_min = pcp->high_min, high_max = pcp->high_max;
	int high, batch;

	high = pcp->high = clamp_int(pcp->high, high_min, high_max);
	if (unlikely(high < base_batch))
		return 1;
	batch = order || zone->machine->config.pcp_no_autotune ? base_batch
							     : base_batch << pcp->alloc_factor;
	/* A CPU that keeps allocating earns a larger cache. */
	if (high_min != high_max && !zone_test_flag(zone, ZONE_BELOW_HIGH))
		high = pcp->high = min(high + batch, high_max);
	if (!order) {
		int max_nr_alloc = max(high - pcp->count - base_batch, base_batch);

		if (batch <= max_nr_alloc && pcp->alloc_factor < PCP_BATCH_SCALE_MAX)
			pcp->alloc_factor++;
		batch = min(batch, max_nr_alloc);
	}
	if (batch > 1)
		batch = max(batch >> order, 2);
	return batch;
}

/*
 * rmqueue_bulk() - take up to @count blocks of @order from the buddy in one
 * zone->lock hold, appended to @list in the order found (keeping physical
 * order). Each block's list add is VT_P_PCP_REFILL under the lock, as the
 * kernel's loop runs it. Return: blocks taken.
 */
static int rmqueue_bulk(struct zone *zone, unsigned int order, int count, struct list_head *list,
			int migratetype, unsigned int alloc_flags)
{
	enum rmqueue_mode rmqm = RMQUEUE_NORMAL;
	int i;

	spin_lock(&zone->lock);
	for (i = 0; i < count; i++) {
		struct page *page = __rmqueue(zone, order, migratetype, alloc_flags, &rmqm);

		if (unlikely(!page))
			break;
		pl_vt_path(VT_P_PCP_REFILL);
		PL_WARN_ON_PAGE(zone->vm_debug, PageBuddy(page), page,
				"a block refilled onto a PCP list has left the buddy's free lists");
		list_add_tail(&page->pcp_list, list);
	}
	spin_unlock(&zone->lock);
	pl_count(PL_EV_ZONE_LOCK_PAGES, (unsigned long)i << order);
	pl_count(PL_EV_PCP_REFILL_PAGES, (unsigned long)i << order);
	return i;
}

/*
 * pcp_refill() - __rmqueue_pcplist()'s empty-list case, out of line so that
 * a hit stays a few instructions: fill @list from the buddy (or, under
 * pcp_owner, from owned blocks). Return: false when the request must fail
 * (nothing taken), with @*page set when pcp_owner served it directly.
 * Context: pcp->lock.
 */
__attribute__((__noinline__)) bool pcp_refill(struct zone *zone, unsigned int order,
					      int migratetype, unsigned int alloc_flags,
					      struct per_cpu_pages *pcp,
					      struct list_head *list, struct page **page)
{
	int batch = nr_pcp_alloc(pcp, zone, order);
	int alloced;

	*page = NULL;
	if (design_pcp_owner(zone)) {
		*page = pcp_owner_rmqueue(zone, pcp, order, migratetype, alloc_flags);
		if (*page)
			return true;
		/* The block economy keeps no unowned pages on a PCP list. */
		if (design_block_economy(zone))
			return false;
		pl_count(PL_EV_PCP_DEGRADE, 1);
	}
	/* seed 003's degraded refill: unowned chunks split under pcp->lock */
	if (design_pcp_owner(zone) && order < pageblock_order &&
	    !zone->machine->config.design.pcp_owner_bulk_fallback)
		alloced = pcp_owner_rmqueue_chunks(zone, order, batch, list, migratetype,
						   alloc_flags);
	else
		alloced = rmqueue_bulk(zone, order, batch, list, migratetype, alloc_flags);
	pcp->count += alloced << order;
	pl_count(PL_EV_PCP_MISS, 1);
	if (unlikely(list_empty(list)))
		return false;
	if (design_pcp_premerge(zone)) {
		/* rmqueue_bulk() appended the new blocks at the tail */
		struct page *p = list_last_entry(list, struct page, pcp_list);

		for (int i = 0; i < alloced; i++) {
			pcp_premerge_tag(pcp, zone, p, order);
			p = list_prev_entry(p, pcp_list);
		}
	}
	return true;
}

struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags)
{
	return rmqueue_pcplist_h(zone, order, migratetype, alloc_flags, true);
}

/**
 * economy_refill_blocks() - economy_batch's refill size: the whole blocks
 * that hold nr_pcp_alloc()'s batch of @order (which grows pcp->high and
 * alloc_factor for a CPU that keeps allocating, as in 6.18), at least one.
 * economy_ramp: an order-0 batch never fills the PCP past pcp->high - batch
 * in 6.18 (nr_pcp_alloc()'s max_nr_alloc); where rounding up to whole
 * blocks would, the batch is rounded down instead (still at least one
 * block, the economy's unit). Context: pcp->lock.
 */
int economy_refill_blocks(struct zone *zone, struct per_cpu_pages *pcp, unsigned int order)
{
	long pages = (long)nr_pcp_alloc(pcp, zone, order) << order;
	long blocks = (pages + (long)pageblock_nr_pages - 1) / (long)pageblock_nr_pages;

	if (design_economy_ramp(zone) && !order && blocks > 1 &&
	    pcp->count + blocks * (long)pageblock_nr_pages > pcp->high - pcp->batch)
		blocks = pages / (long)pageblock_nr_pages;
	return (int)max(1L, blocks);
}

/**
 * economy_refill_taken() - economy_ramp: alloc_factor after an order-0
 * refill that took @pages. 6.18's nr_pcp_alloc() "double[s] the number of
 * pages allocated each time there is subsequent allocation of order-0 pages
 * without any freeing" by adding one to alloc_factor, since its refill
 * takes exactly batch << alloc_factor pages. A refill in whole blocks takes
 * more (one block is batch << 3 and a bit when batch is 63), so one step
 * per refill would ask, three refills running, for less than the last one
 * took. Here the factor becomes what the kernel's doubling reaches after a
 * refill of @pages: one past the largest f with batch << f <= @pages, at
 * most PCP_BATCH_SCALE_MAX, never lower than it is. The caller calls it
 * only when nr_pcp_alloc() grew the factor for this refill (an order-0
 * batch that fit under pcp->high), the only case the kernel grows it.
 * Context: pcp->lock.
 */
void economy_refill_taken(struct per_cpu_pages *pcp, int pages)
{
	int f = 0;

	if (pcp->batch > pages)
		return;
	while (f < PCP_BATCH_SCALE_MAX && (pcp->batch << (f + 1)) <= pages)
		f++;
	if (f + 1 > pcp->alloc_factor)
		pcp->alloc_factor = (unsigned char)min(f + 1, PCP_BATCH_SCALE_MAX);
}

/**
 * economy_rmqueue() - pcp_block_economy's allocation of @order below a
 * pageblock: from this CPU's owned blocks, refilled with a whole block or
 * stolen (pcp_owner.c). The lock is taken, not tried: there is no zone
 * path to fall back to. Return: the page, or NULL.
 */
struct page *economy_rmqueue(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	struct page *page;

	spin_lock(&pcp->lock);
	pcp->free_count >>= 1;
	page = pcp_owner_rmqueue(zone, pcp, order, migratetype, alloc_flags);
	if (page)
		pcp->count -= 1 << order;
	spin_unlock(&pcp->lock);
	return page;
}

/* ---- freeing --------------------------------------------------------------- */

/*
 * free_pcppages_bulk() - return @count pages from @pcp to the buddy in one
 * zone->lock hold, round-robin over the non-empty lists starting with
 * @pindex, coldest (tail) pages first. Each page's migratetype is read from
 * its pageblock at this moment. In virtual time each block's share of the
 * loop (the list walk, that read, the counts: everything but
 * __free_one_page()) is one VT_P_PCP_DRAIN, inside zone->lock's hold as in
 * the kernel: without it a drain held zone->lock only for the merges, and
 * bulk put grew a third slower with threads than the in-kernel buddy's
 * (README, "The anchors"). Context: pcp->lock.
 */
static void free_pcppages_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp,
			       int pindex)
{
	int min_pindex = 0, max_pindex = NR_PCP_LISTS - 1, moved = 0, listed;

	count = min(pcp->count, count);
	if (count <= 0)
		return;
	/*
	 * The economy first: it keeps no unowned page on a PCP list, so a
	 * pre-merging drain would find nothing to merge, take zone->lock for
	 * nothing and give owned blocks back by seed 003's rule, partial ones
	 * too, where the zone deals in whole blocks only.
	 */
	if (design_block_economy(zone)) {
		economy_free_bulk(zone, pcp, count, false);
		return;
	}
	if (design_pcp_premerge(zone)) {
		pcp_premerge_free_bulk(zone, count, pcp, pindex);
		return;
	}
	listed = pcp->count - pcp->owned_count;
	pindex = pindex - 1;	/* the requested list is drained first */
	spin_lock(&zone->lock);
	while (count > 0 && listed > 0) {
		struct list_head *list = pcp_next_list(pcp, &pindex, &min_pindex, &max_pindex);
		unsigned int order = pindex_to_order((unsigned int)pindex);

		do {
			struct page *page = list_last_entry(list, struct page, pcp_list);
			unsigned long pfn = page_to_pfn(page);
			int mt = get_pfnblock_migratetype(page, pfn);

			pl_trace(zone->machine, PL_TP_MM_PAGE_PCPU_DRAIN,
				 (struct pl_tp_event){ .pfn = pfn, .order = (int)order,
						       .migratetype = mt });
			PL_WARN_ON_PAGE(zone->vm_debug, PageBuddy(page), page,
					"a block drained from a PCP list is not on a buddy free list");
			list_del(&page->pcp_list);
			pl_vt_path(VT_P_PCP_DRAIN);
			count -= 1 << order;
			listed -= 1 << order;
			pcp->count -= 1 << order;
			moved += 1 << order;
			__free_one_page(page, pfn, zone, order, mt, FPI_NONE);
		} while (count > 0 && !list_empty(list));
	}
	pcp_drain_finish(zone, pcp, count, moved);
}

/**
 * pcp_drain_finish() - the end of every drain of @pcp under zone->lock:
 * pcp_owner's owned blocks for the @count pages still to go (whole ones
 * first, then partial), zone->lock released, and the drain counted (pages
 * moved, pages drained, one drain call if any moved). @moved: pages the
 * caller has already given back. Context: pcp->lock and zone->lock.
 */
void pcp_drain_finish(struct zone *zone, struct per_cpu_pages *pcp, int count, int moved)
{
	if (count > 0 && pcp->owned_count) {
		int released = pcp_owner_release(zone, pcp, count);

		pcp->count -= released;
		moved += released;
	}
	spin_unlock(&zone->lock);
	pl_count(PL_EV_ZONE_LOCK_PAGES, (unsigned long)moved);
	pl_count(PL_EV_PCP_DRAIN_PAGES, (unsigned long)moved);
	pl_count(PL_EV_PCP_DRAIN_CALLS, moved > 0);
}

/* How much to drain: at least batch, more after a stream of frees. */
static int nr_pcp_free(const struct per_cpu_pages *pcp, int batch, int high, bool free_high)
{
	if (unlikely(free_high))
		return min(pcp->count, batch << PCP_BATCH_SCALE_MAX);
	if (unlikely(high < batch))
		return 1;
	return clamp_int(pcp->free_count, batch, high - batch);
}

/*
 * pcp_free_overflow() - free_frozen_page_commit()'s drain, out of line:
 * @pcp reached @high; a chunk goes back to the buddy, and the zone's
 * below-high flag is cleared when the drain took it back above the high
 * watermark. Context: pcp->lock.
 */
__attribute__((__noinline__)) void pcp_free_overflow(struct zone *zone, struct per_cpu_pages *pcp,
						     int batch, int high, bool free_high,
						     unsigned int pindex, unsigned int order)
{
	if (!order)
		pl_count(PL_EV_PCP_OVERFLOW_O0, 1);
	free_pcppages_bulk(zone, nr_pcp_free(pcp, batch, high, free_high), pcp, (int)pindex);
	if (zone_test_flag(zone, ZONE_BELOW_HIGH) &&
	    zone_watermark_ok(zone, 0, high_wmark_pages(zone), MAX_NR_ZONES - 1, 0))
		zone_clear_flag(zone, ZONE_BELOW_HIGH);
}

/*
 * free_frozen_page_owned() - pcp_owner (seed 003): a page of an owned block
 * goes back to its owner, whatever CPU frees it. The owner is read racily
 * and checked again under its lock, since ownership changes only under it.
 * Out of line: the baseline's free path only tests the switch.
 * Return: true if the page was freed here.
 */
__attribute__((__noinline__)) bool free_frozen_page_owned(struct zone *zone, struct page *page,
							   unsigned long pfn, unsigned int order,
							   int migratetype, fpi_t fpi_flags)
{
	struct per_cpu_pages *pcp = this_cpu_pcp(zone);
	unsigned long idx = pfn_to_pageblock_idx(zone, pfn);
	int owner;

	/*
	 * pcp_block_economy moves an owned block from one owner to
	 * another (a steal): when the owner changed under us, ask the
	 * new one, or the page would land on the zone lists inside an
	 * owned block. Under seed 003 alone a block only loses its owner.
	 */
	while ((owner = READ_ONCE(zone->pageblock_owner[idx])) >= 0) {
		struct per_cpu_pages *opcp = &zone->per_cpu_pageset[owner];

		spin_lock(&opcp->lock);
		if (READ_ONCE(zone->pageblock_owner[idx]) == owner) {
			if (opcp != pcp)
				pl_count(PL_EV_PCP_REMOTE_FREE, 1);
			free_frozen_page_commit_h(zone, opcp, page, pfn, migratetype, order, true,
						  true);
			spin_unlock(&opcp->lock);
			return true;
		}
		spin_unlock(&opcp->lock);
		if (!design_block_economy(zone))
			break;
	}
	/* The block economy: an unowned block's pages go to the zone. */
	if (design_block_economy(zone)) {
		free_one_page(zone, page, pfn, order, fpi_flags);
		return true;
	}
	return false;
}

void free_frozen_page_pcp(struct zone *zone, struct page *page, unsigned long pfn,
			  unsigned int order, int migratetype, fpi_t fpi_flags)
{
	free_frozen_page_pcp_h(zone, page, pfn, order, migratetype, fpi_flags, true);
}

/* ---- drains and decay ------------------------------------------------------ */

/* Empty one CPU's pcp for @zone, a bounded chunk per lock hold. */
static void drain_pages_zone(unsigned int cpu, struct zone *zone)
{
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
	int count;

	/* The block economy gives back whole blocks only; partial ones stay. */
	if (design_block_economy(zone)) {
		spin_lock(&pcp->lock);
		economy_free_bulk(zone, pcp, 0, true);
		spin_unlock(&pcp->lock);
		return;
	}
	do {
		spin_lock(&pcp->lock);
		count = pcp->count;
		if (count) {
			int to_drain = min(count, pcp->batch << PCP_BATCH_SCALE_MAX);

			free_pcppages_bulk(zone, to_drain, pcp, 0);
			count -= to_drain;
		}
		spin_unlock(&pcp->lock);
	} while (count);
}

static void drain_pages(struct pl_machine *m, unsigned int cpu, struct zone *only)
{
	struct zone *zone;

	for_each_populated_zone(zone, m)
		if (!only || only == zone)
			drain_pages_zone(cpu, zone);
}

void drain_local_pages(struct zone *zone)
{
	if (!pl_check_zone(__func__, zone, true))
		drain_pages(pl_this.machine, pl_this.cpu->id, zone);
}

/*
 * The kernel asks every CPU with pages to drain itself, serialised by
 * pcpu_drain_mutex; here the caller drains each remote pcp directly under
 * its lock, which is what those works do.
 */
void drain_all_pages(struct zone *zone)
{
	struct pl_machine *m = pl_this.machine;

	if (pl_check_zone(__func__, zone, true))
		return;
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
		pl_count(PL_EV_DRAIN_ALL_CPUS, 1);
		drain_pages(m, cpu, zone);
	}
}

/* Shrink an idle pcp's high by an eighth per tick and drain down to it. */
static int decay_pcp_high(struct zone *zone, struct per_cpu_pages *pcp)
{
	int todo = 0, to_drain;

	spin_lock(&pcp->lock);
	if (pcp->high > pcp->high_min) {
		int a = pcp->count - (pcp->batch << PCP_BATCH_SCALE_MAX);
		int b = pcp->high - (pcp->high >> 3);

		pcp->high = max(max(a, b), pcp->high_min);
		if (pcp->high > pcp->high_min)
			todo++;
	}
	to_drain = pcp->count - pcp->high;
	if (to_drain > 0) {
		free_pcppages_bulk(zone, to_drain, pcp, 0);
		todo++;
	}
	spin_unlock(&pcp->lock);
	return todo;
}

int pl_vmstat_tick(void)
{
	struct pl_machine *m = pl_this.machine;
	struct zone *zone;
	int todo = 0;

	if (!m)
		return 0;
	for_each_populated_zone(zone, m) {
		pl_refresh_cpu_vm_stats(zone);	/* refresh_cpu_vm_stats(): the diffs first */
		todo += decay_pcp_high(zone, this_cpu_pcp(zone));
	}
	pl_kswapd_run(m);	/* if woken since the last tick (page_alloc_slowpath.c) */
	pl_kcompactd_tick(m);	/* woken by that run, or its proactive look (kcompactd.c) */
	return todo;
}

/* ---- alloc_pages_bulk ---------------------------------------------------- */

/*
 * alloc_pages_bulk() after its checks, with @hooks constant as the
 * page_alloc_hot.h templates take it: instantiated without hooks when
 * pl_hooks_off(), with only the design switches' when
 * pl_hooks_design_only(), and with every hook otherwise.
 */
static __always_inline unsigned long alloc_pages_bulk_h(struct pl_machine *m, gfp_t gfp,
							unsigned long nr_pages,
							struct page **page_array,
							unsigned long nr_populated,
							const unsigned int hooks)
{
	int migratetype = gfp_migratetype(gfp);
	unsigned long nr_account = 0;
	struct per_cpu_pages *pcp;
	struct zone *zone = NULL;
	struct list_head *list;
	struct page *page;

	if (nr_pages - nr_populated == 1)
		goto failed;
	/* prepare_alloc_pages(): fail_page_alloc ends the whole call at once */
	if ((hooks & PL_HV_ALL) && unlikely(should_fail_alloc_page(gfp, 0)))
		return nr_populated;

	/* The first zone that has room for all of them above its low mark. */
	for (int zi = (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL; zi >= 0; zi--) {
		struct zone *z = &m->node_zones[zi];

		if (populated_zone(z) &&
		    zone_watermark_ok(z, 0, low_wmark_pages(z) + nr_pages,
				      (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL, 0)) {
			zone = z;
			break;
		}
	}
	if (!zone)
		goto failed;

	pcp = this_cpu_pcp(zone);
	if (!spin_trylock_h(&pcp->lock, hooks & PL_HV_ALL)) {
		pl_count_h(PL_EV_PCP_TRYLOCK_FAIL, 1, hooks & PL_HV_ALL);
		goto failed;
	}
	list = &pcp->lists[order_to_pindex(migratetype, 0)];
	while (nr_populated < nr_pages) {
		if (page_array[nr_populated]) {
			nr_populated++;
			continue;
		}
		page = __rmqueue_pcplist_h(zone, 0, migratetype, ALLOC_WMARK_LOW, pcp, list, hooks);
		if (unlikely(!page)) {
			if (!nr_account) {
				spin_unlock_h(&pcp->lock, hooks & PL_HV_ALL);
				goto failed;
			}
			break;
		}
		nr_account++;
		prep_new_page_h(page, 0, gfp, migratetype, hooks);
		page_array[nr_populated++] = page;
	}
	spin_unlock_h(&pcp->lock, hooks & PL_HV_ALL);
	pl_count3_h(PL_EV_PGALLOC, nr_account, PL_EV_PGALLOC_PAGES, nr_account,
		    PL_EV_PGALLOC_DMA + zone->zone_idx, nr_account, hooks & PL_HV_ALL);
	return nr_populated;

failed:
	page = alloc_pages(gfp, 0);
	if (page)
		page_array[nr_populated++] = page;
	return nr_populated;
}

static __attribute__((__noinline__)) unsigned long
alloc_pages_bulk_hooks(struct pl_machine *m, gfp_t gfp, unsigned long nr_pages,
		       struct page **page_array, unsigned long nr_populated)
{
	if (pl_hooks_design_only(m))
		return alloc_pages_bulk_h(m, gfp, nr_pages, page_array, nr_populated,
					  PL_HV_DESIGN);
	return alloc_pages_bulk_h(m, gfp, nr_pages, page_array, nr_populated, PL_HV_ALL);
}

unsigned long alloc_pages_bulk(gfp_t gfp, unsigned long nr_pages, struct page **page_array)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long nr_populated = 0;

	if (!m) {
		pl_warn_ratelimited("alloc_pages_bulk: the calling thread has not entered a machine");
		return 0;
	}
	if (pl_check_ptr(__func__, page_array, "page_array") || pl_check_gfp(__func__, gfp))
		return 0;
	while (nr_populated < nr_pages && page_array[nr_populated])
		nr_populated++;
	if (nr_populated == nr_pages)
		return nr_populated;
	if (likely(pl_hooks_off(m)))
		return alloc_pages_bulk_h(m, gfp, nr_pages, page_array, nr_populated, 0);
	return alloc_pages_bulk_hooks(m, gfp, nr_pages, page_array, nr_populated);
}
