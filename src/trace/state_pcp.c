// SPDX-License-Identifier: MIT
/*
 * state_pcp.c - the per-CPU pagesets of a loaded state: high and batch as
 * zoneinfo reports them, then zoneinfo's count of pages. At level counts,
 * held pages up to that count; at level positional, first the blocks the
 * trace sighted on that CPU's PCP (the CPU pl_positional_pcp_owners()
 * names: another one's for pages drain_all_pages() took off it), noted for
 * the replay (pl_state_pcp_sighted()), then the unseen rest on the lists
 * the trace never shows empty (load_unseen()).
 *
 * Invariant (state_internal.h): a page leaves the held bitmap as it goes
 * on a PCP.
 */
#include <errno.h>
#include <stdlib.h>
#include "state_internal.h"

/* Put the held block of @order at @pfn on the current CPU's PCP. Return: done. */
static bool put_on_pcp(struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	if (order && pl_join_pages(pfn_to_page(pfn), order))
		return false;
	unhold(st, pfn, order);
	__free_pages(pfn_to_page(pfn), order);
	return true;
}

/*
 * Put up to @nr pages of held, untouched blocks of @order in pageblocks of
 * type @mt on the current CPU's PCP (list order_to_pindex(@mt, @order)).
 * First one block per 64-page word, at its start, so that the pages lie
 * apart as a running kernel's do; when the machine holds too few untouched
 * words for that (kbuild3: 4.9 M of 5.4 M pages free, and 32,212 pages on
 * CPU 1's lists of which 15,589 found a word), then the blocks of odd index
 * (pfn >> @order) in untouched words whose buddy stays held, so that none
 * of them merges with another when drained.
 * Return: the pages put there.
 */
static long fill_list(struct pl_loaded_state *st, struct zone *zone, const struct pl_positional *pos,
		      int mt, unsigned int order, long nr)
{
	unsigned long step = 1UL << order, stride = max(step, 64UL);
	unsigned long start = (zone->zone_start_pfn + stride - 1) & ~(stride - 1);
	long done = 0;

	for (unsigned long pfn = start; done + (long)step <= nr && pfn + step <= zone_end_pfn(zone);
	     pfn += stride) {
		if (!run_held(st, pfn, order) || touched(pos, pfn, stride) ||
		    get_pageblock_migratetype(pfn_to_page(pfn)) != mt)
			continue;
		done += put_on_pcp(st, pfn, order) ? (long)step : 0;
	}
	for (unsigned long pfn = start + step; done + (long)step <= nr &&
	     pfn + step <= zone_end_pfn(zone); pfn += 2 * step) {
		if (!run_held(st, pfn, order) || !run_held(st, pfn - step, order) ||
		    touched(pos, pfn & ~63UL, stride) ||
		    get_pageblock_migratetype(pfn_to_page(pfn)) != mt)
			continue;
		done += put_on_pcp(st, pfn, order) ? (long)step : 0;
	}
	return done;
}

/*
 * Positional: the part of zoneinfo's count no event shows. A list the trace
 * shows empty (@pcp_emptied) lost every page it held at the start with an
 * event, so those pages were sighted; the unseen rest sat on lists never
 * shown empty, behind their sighted pages (drains take the oldest first,
 * allocations the newest), for the whole trace. They weigh on pcp->count,
 * so on every drain decision: sort's CPUs reported 62,125 and 71,184 pages
 * of which the trace shows 30,411 and 52,040, the rest on the order-3 and
 * THP lists it drains from but never empties. They go on those lists in
 * proportion to the pages sighted there; with no sighting on any list not
 * shown empty, on the first such list (order-0 Movable first).
 */
static void load_unseen(struct pl_loaded_state *st, struct zone *zone, unsigned int cpu, long nr,
			const struct pl_positional *pos)
{
	unsigned int emptied = cpu < PL_SNAP_MAX_CPUS ? pos->pcp_emptied[cpu] : 0;
	unsigned long weight[NR_PCP_LISTS] = { 0 }, total = 0;

	for (unsigned int li = 0; li < NR_PCP_LISTS && cpu < PL_SNAP_MAX_CPUS; li++)
		if (!(emptied & (1u << li))) {
			weight[li] = pos->pcp_seen[cpu][li];
			total += weight[li];
		}
	if (!total) {
		unsigned int li = order_to_pindex(MIGRATE_MOVABLE, 0);

		if (emptied & (1u << li))
			for (li = 0; li < NR_PCP_LISTS && (emptied & (1u << li)); li++)
				;
		if (li == NR_PCP_LISTS)
			return;
		weight[li] = total = 1;
	}
	for (unsigned int li = 0, left = (unsigned int)nr; li < NR_PCP_LISTS && left; li++) {
		unsigned int order = pindex_to_order(li), share;
		int mt = li < NR_LOWORDER_PCP_LISTS ? (int)(li % MIGRATE_PCPTYPES)
			 : li == order_to_pindex(MIGRATE_MOVABLE, order) ? MIGRATE_MOVABLE
									  : MIGRATE_UNMOVABLE;

		if (!weight[li])
			continue;
		share = (unsigned int)min((double)left, (double)nr * (double)weight[li] / (double)total + 0.5);
		left -= (unsigned int)fill_list(st, zone, pos, mt, order, share);
	}
}

/* Note a PCP sighting placed on @cpu's PCP, for the replay. Return: 0 or -ENOMEM. */
static int note_pcp(struct pl_loaded_state *st, unsigned long pfn, unsigned int cpu)
{
	if (st->nr_pcp == st->cap_pcp) {
		size_t cap = st->cap_pcp ? st->cap_pcp * 2 : 1024;
		unsigned long *p = realloc(st->pcp_pfn, cap * sizeof(*p));
		unsigned short *c;

		if (!p)
			return -ENOMEM;
		st->pcp_pfn = p;
		c = realloc(st->pcp_cpu, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		st->pcp_cpu = c;
		st->cap_pcp = cap;
	}
	st->pcp_pfn[st->nr_pcp] = pfn;
	st->pcp_cpu[st->nr_pcp++] = (unsigned short)cpu;
	return 0;
}

/*
 * CPU @cpu's PCP of @zone: high and batch as reported (then batch as the
 * design computes it, when its rule differs from 6.18's); the blocks the
 * trace saw on it and the unseen rest of the reported count
 * (positional), or held pages up to the reported count.
 */
static void load_pcp(struct pl_loaded_state *st, struct zone *zone, unsigned int cpu, int high,
		     int batch, int count, const struct pl_positional *pos);

void pl_state_load_pcp(struct pl_loaded_state *st, struct zone *zone, unsigned int cpu, int high,
		       int batch, int count, const struct pl_positional *pos)
{
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
	int ours = pl_pcp_design_batch(zone);

	load_pcp(st, zone, cpu, high, batch, count, pos);
	/*
	 * The reported batch is what 6.18's rule gave the kernel's zone; a
	 * design with a rule of its own gets its batch for the loaded zone
	 * instead, as the kernel under it would have had (said once a zone).
	 * Only after the pages are in: pcp->count is what the kernel had, and
	 * the design's drain sizes must not drain them on the way in.
	 */
	if (batch > 0 && ours && !pl_pcp_set_high_batch(zone, cpu, pcp->high, ours) && !cpu)
		pl_state_note(st, "pcp->batch as the design computes it for the loaded zone: "
			      "%s %d -> %d (6.18 reported %d)", zone->name, batch, ours, batch);
}

static void load_pcp(struct pl_loaded_state *st, struct zone *zone, unsigned int cpu, int high,
		     int batch, int count, const struct pl_positional *pos)
{
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

	if (batch > 0 && pl_pcp_set_high_batch(zone, cpu, min(high, pcp->high_max), batch))
		return;
	pl_enter(st->m, cpu);
	for (size_t i = 0; pos && i < pos->nr; i++) {
		const struct pl_sighting *r = &pos->rec[i];

		if (r->kind != PL_SEEN_PCP || st->owner[i] != cpu || !zone_spans_pfn(zone, r->pfn) ||
		    !zone_spans_pfn(zone, r->pfn + (1UL << r->order) - 1) ||
		    !run_held(st, r->pfn, r->order))
			continue;
		if (r->order && pl_join_pages(pfn_to_page(r->pfn), r->order))
			continue;
		if (note_pcp(st, r->pfn, cpu))
			break;
		unhold(st, r->pfn, r->order);
		__free_pages(pfn_to_page(r->pfn), r->order);
		count -= 1 << r->order;
	}
	if (pos) {
		if (count > 0)
			load_unseen(st, zone, cpu, min(count, pcp->high - pcp->count), pos);
		return;
	}
	count = min(count, pcp->high - pcp->count);
	for (unsigned long pfn = zone->zone_start_pfn; count > 0 && pfn < zone_end_pfn(zone); pfn++) {
		if (!held(st, pfn))
			continue;
		set_held(st, pfn, false);
		st->nr_held--;
		__free_pages(pfn_to_page(pfn), 0);
		count--;
	}
}

size_t pl_state_pcp_sighted(const struct pl_loaded_state *st, const unsigned long **pfn,
			    const unsigned short **cpu)
{
	if ((!st || !pfn || !cpu) && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	*pfn = st->pcp_pfn;
	*cpu = st->pcp_cpu;
	return st->nr_pcp;
}

