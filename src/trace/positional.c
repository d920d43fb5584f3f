// SPDX-License-Identifier: MIT
/*
 * positional.c - where each page was when a trace started, inferred from
 * the first event that touches it (state=positional):
 *
 *   mm_page_alloc_zone_locked  the block was free in the buddy, on the list
 *                              of its migratetype;
 *   mm_page_alloc (no refill before it), mm_page_pcpu_drain
 *                              it sat on that CPU's PCP, with that order
 *                              and list;
 *   mm_page_free               it was allocated, with that order;
 *   mm_page_alloc_extfrag      of a claimed pageblock or more, or a stolen
 *                              block: that block of fallback_order was free
 *                              (no zone_locked event shows it).
 *
 * A block whose pages were partly seen before is ambiguous and not
 * recorded. One record per first sighting; a bitmap of seen pfns, grown as
 * higher pfns appear. The records are what the loader (state.c) places.
 *
 * Pageblock types, over the whole trace: in 6.18 a free list holds only
 * blocks of pageblocks of its type, so __rmqueue_smallest()'s
 * mm_page_alloc_zone_locked names the pageblock's type; free_pcppages_bulk()
 * traces mm_page_pcpu_drain with the pageblock's type as it frees the page;
 * mm_page_alloc_extfrag's fallback_migratetype is the type of the block
 * before a claim changed it. A pageblock's type changes only by such a
 * traced claim (or, untraced, a merge across pageblocks at order 10 and the
 * highatomic reserve), so the first of these events per pageblock gives its
 * type at trace start, however late in the trace it comes. A first sighting
 * of a page on a PCP (mm_page_alloc) names the list it was freed to, the
 * pageblock's type at that free: weaker, used only where nothing exact is
 * known (state.c's votes).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

/*
 * The pfns followed: below the caller's limit (the snapshot's span), or
 * PL_TRACE_DENSE_SPAN without one, so that the bitmap and pageblock arrays
 * are bounded by a machine's size, never by a pfn a trace names.
 */
static unsigned long pfn_end(const struct pl_positional *pos)
{
	return pos->pfn_limit && pos->pfn_limit < PL_TRACE_DENSE_SPAN ? pos->pfn_limit
								      : PL_TRACE_DENSE_SPAN;
}

/*
 * Does [@pfn, @pfn + @nr) lie below pfn_end()? Written so that no sum wraps:
 * a pfn of -1 (an event without one) or near it must not pass as a small end.
 */
static bool in_span(const struct pl_positional *pos, unsigned long pfn, unsigned long nr)
{
	unsigned long end = pfn_end(pos);

	return pfn < end && nr <= end - pfn;
}

static int grow_seen(struct pl_positional *pos, unsigned long end_pfn)
{
	size_t words = (end_pfn + 63) / 64, nw;
	uint64_t *n;

	if (words <= pos->seen_words)
		return 0;
	nw = max(words, pos->seen_words * 2);
	n = realloc(pos->seen, nw * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + pos->seen_words, 0, (nw - pos->seen_words) * sizeof(*n));
	pos->seen = n;
	pos->seen_words = nw;
	return 0;
}

static int add_rec(struct pl_positional *pos, const struct pl_trace_event *ev, int kind)
{
	struct pl_sighting *s;

	if (pos->nr == pos->cap) {
		size_t cap = pos->cap ? pos->cap * 2 : 4096;
		struct pl_sighting *n = realloc(pos->rec, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pos->rec = n;
		pos->cap = cap;
	}
	s = &pos->rec[pos->nr++];
	s->pfn = ev->pfn;
	s->kind = (unsigned char)kind;
	s->order = (unsigned char)ev->order;
	s->mt = (unsigned char)(ev->migratetype >= 0 && ev->migratetype < MIGRATE_PCPTYPES
				? ev->migratetype : MIGRATE_MOVABLE);
	s->cpu = (unsigned short)min(ev->cpu, 0xffffu);
	s->drained = ev->type == PL_TRACE_PCPU_DRAIN;
	pos->by_kind[kind]++;
	if (kind == PL_SEEN_PCP && ev->cpu < PL_SNAP_MAX_CPUS)
		pos->pcp_seen[ev->cpu][order_to_pindex(s->mt, s->order)] += 1UL << s->order;
	return 0;
}

/*
 * A claim below pageblock order (mm_page_alloc_extfrag with change_ownership)
 * names the page __rmqueue_smallest() returned, not the pageblock it claimed,
 * so that pageblock's first exact evidence is a later event of the claiming
 * type @mt. A fallback means @mt had no free block of that order or more in
 * the zone, so the claimed pageblock's pages, moved to @mt's lists, are the
 * first of @mt the zone hands out next: the first pageblock seen as @mt after
 * an unmatched claim is the claimed one's candidate, and the claim's
 * fallback type its candidate type at trace start (@pb_from). The loader
 * takes it where the snapshot says so (state.c, vote_types()).
 */
static int claim_candidate(struct pl_positional *pos, int mt)
{
	for (int from = 0; from < MIGRATE_PCPTYPES; from++)
		if (pos->claims_pending[mt][from]) {
			pos->claims_pending[mt][from]--;
			pos->pb_claimed++;
			return from;
		}
	return PL_PB_UNKNOWN;
}

/*
 * The first exact type of the pageblocks of [@pfn, @pfn + 2^@order);
 * @before_claim: @mt is the type before any claim (an extfrag's fallback type).
 */
static int note_type(struct pl_positional *pos, unsigned long pfn, int order, int mt,
		     bool before_claim)
{
	unsigned long pb = pfn >> pageblock_order, end;

	if (mt < 0 || mt >= MIGRATE_PCPTYPES || order < 0 || order > MAX_PAGE_ORDER ||
	    !in_span(pos, pfn, 1UL << order))
		return 0;
	end = (pfn + (1UL << order) - 1) >> pageblock_order;
	if (end >= pos->pb_nr) {
		size_t nn = max((size_t)end + 1, pos->pb_nr * 2);
		unsigned char *n = realloc(pos->pb_type, nn), *f;

		if (!n)
			return -ENOMEM;
		pos->pb_type = n;
		f = realloc(pos->pb_from, nn);
		if (!f)
			return -ENOMEM;
		pos->pb_from = f;
		memset(n + pos->pb_nr, PL_PB_UNKNOWN, nn - pos->pb_nr);
		memset(f + pos->pb_nr, PL_PB_UNKNOWN, nn - pos->pb_nr);
		pos->pb_nr = nn;
	}
	for (; pb <= end; pb++)
		if (pos->pb_type[pb] == PL_PB_UNKNOWN) {
			pos->pb_type[pb] = (unsigned char)mt;
			pos->pb_from[pb] = (unsigned char)(before_claim ? PL_PB_UNKNOWN
								: claim_candidate(pos, mt));
			pos->pb_exact++;
		}
	return 0;
}

/* Mark the block's pages seen; a block none of whose pages was seen is a first sighting. */
static int sight(struct pl_positional *pos, const struct pl_trace_event *ev, int kind)
{
	unsigned long nr, fresh = 0;

	nr = 1UL << ev->order;
	if (!in_span(pos, ev->pfn, nr)) {
		pos->out_of_range++;	/* not followed: no memory by the pfn's value */
		return 0;
	}
	if (grow_seen(pos, ev->pfn + nr))
		return -ENOMEM;
	for (unsigned long p = ev->pfn; p < ev->pfn + nr; p++) {
		uint64_t bit = 1ull << (p % 64);

		if (!(pos->seen[p / 64] & bit)) {
			pos->seen[p / 64] |= bit;
			fresh++;
		}
	}
	if (ev->pfn + nr > pos->max_pfn)
		pos->max_pfn = ev->pfn + nr;
	if (fresh != nr)	/* partly seen before: ambiguous */
		return 0;
	return add_rec(pos, ev, kind);
}

/* A block of @order and @mt belongs on a PCP list (order_to_pindex() takes it). */
static bool pcp_list_block(int order, int mt)
{
	return mt >= 0 && mt < MIGRATE_PCPTYPES && pcp_allowed_order((unsigned int)order);
}

/*
 * Which PCP lists the trace shows empty (@pcp_emptied): a refill of a list,
 * or a drain run on one CPU that moves from one list to the next. Any other
 * event of that CPU ends its run.
 */
static void note_emptied(struct pl_positional *pos, const struct pl_trace_event *ev)
{
	unsigned int cpu = ev->cpu;
	bool listed;
	unsigned int li;

	if (cpu >= PL_SNAP_MAX_CPUS)
		return;
	listed = pcp_list_block(ev->order, ev->migratetype);
	li = listed ? order_to_pindex(ev->migratetype, (unsigned int)ev->order) : 0;
	if (ev->type != PL_TRACE_PCPU_DRAIN) {
		pos->drain_run[cpu] = 0;
		if (ev->type == PL_TRACE_ZONE_LOCKED && ev->percpu_refill && listed)
			pos->pcp_emptied[cpu] |= (uint16_t)(1u << li);
		return;
	}
	if (!listed)
		return;
	if (pos->drain_run[cpu] && pos->drain_run[cpu] - 1u != li)
		pos->pcp_emptied[cpu] |= (uint16_t)(1u << (pos->drain_run[cpu] - 1u));
	pos->drain_run[cpu] = (unsigned char)(li + 1);
}

int pl_positional_event(struct pl_positional *pos, const struct pl_trace_event *ev)
{
	int kind;

	if ((!pos || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (ev->order < 0 || ev->order > MAX_PAGE_ORDER || ev->fallback_order < 0 ||
	    ev->fallback_order > MAX_PAGE_ORDER || ev->cpu >= PL_TRACE_MAX_CPUS)
		return 0;	/* what the parser never returns */
	note_emptied(pos, ev);
	switch (ev->type) {
	case PL_TRACE_ZONE_LOCKED:
	case PL_TRACE_PCPU_DRAIN:
		if (note_type(pos, ev->pfn, ev->order, ev->migratetype, false))
			return -ENOMEM;
		break;
	case PL_TRACE_EXTFRAG:
		if (ev->change_ownership && ev->fallback_order >= 0 &&
		    ev->fallback_order < pageblock_order &&
		    ev->migratetype >= 0 && ev->migratetype < MIGRATE_PCPTYPES &&
		    ev->fallback_migratetype >= 0 && ev->fallback_migratetype < MIGRATE_PCPTYPES)
			pos->claims_pending[ev->migratetype][ev->fallback_migratetype]++;
		/*
		 * The page lies in the fallback block (of fallback_order) when a
		 * pageblock or more was claimed or a block stolen; after a
		 * smaller claim it came from __rmqueue_smallest(), anywhere.
		 */
		if ((ev->fallback_order >= pageblock_order || !ev->change_ownership) &&
		    ev->fallback_order >= 0 && ev->fallback_order <= MAX_PAGE_ORDER) {
			struct pl_trace_event blk = *ev;

			/*
			 * That whole block was free, on the fallback type's list, and
			 * no zone_locked event shows it: a sighting of its own.
			 */
			blk.pfn = ev->pfn & ~((1UL << ev->fallback_order) - 1);
			blk.order = ev->fallback_order;
			blk.migratetype = ev->fallback_migratetype;
			if (note_type(pos, blk.pfn, blk.order, blk.migratetype, true))
				return -ENOMEM;
			return sight(pos, &blk, PL_SEEN_FREE);
		}
		return 0;
	default:
		break;
	}

	switch (ev->type) {
	case PL_TRACE_ZONE_LOCKED:
		kind = PL_SEEN_FREE;
		break;
	case PL_TRACE_PAGE_ALLOC:
		if (ev->pfn == -1UL)
			return 0;
		/* orders a PCP does not hold came from the buddy */
		kind = pcp_allowed_order((unsigned int)ev->order) ? PL_SEEN_PCP : PL_SEEN_FREE;
		break;
	case PL_TRACE_PCPU_DRAIN:
		kind = PL_SEEN_PCP;
		break;
	case PL_TRACE_PAGE_FREE:
		kind = PL_SEEN_ALLOCATED;
		break;
	default:
		return 0;
	}
	return sight(pos, ev, kind);
}

static bool pcp_sighting_in(const struct pl_sighting *r, unsigned long start, unsigned long end,
			    unsigned int nr_cpus)
{
	return r->kind == PL_SEEN_PCP && r->cpu < nr_cpus && r->pfn >= start &&
	       r->pfn + (1UL << r->order) <= end;
}

unsigned long pl_positional_pcp_owners(const struct pl_positional *pos, unsigned long start_pfn,
				       unsigned long end_pfn, const int *count, const int *batch,
				       unsigned int nr_cpus, unsigned short *owner)
{
	long *seen;
	unsigned long moved = 0;

	if ((!pos || !count || !batch || !owner || nr_cpus > PL_SNAP_MAX_CPUS) &&
	    pl_arg_refused(__func__, "NULL argument or too many CPUs"))
		return 0;
	seen = calloc(nr_cpus ? nr_cpus : 1, sizeof(*seen));
	if (!seen)
		return 0;	/* then every sighting stays with its CPU, as before */
	for (size_t i = 0; i < pos->nr; i++)
		if (pcp_sighting_in(&pos->rec[i], start_pfn, end_pfn, nr_cpus)) {
			owner[i] = pos->rec[i].cpu;
			seen[owner[i]] += 1L << pos->rec[i].order;
		}
	for (unsigned int c = 0; c < nr_cpus; c++) {
		/* latest first: a drain_all_pages() takes the CPUs in turn */
		for (size_t i = pos->nr; i-- > 0 && seen[c] - count[c] > max(batch[c], 0);) {
			const struct pl_sighting *r = &pos->rec[i];
			long pages = 1L << r->order;
			unsigned int to = c;

			if (!pcp_sighting_in(r, start_pfn, end_pfn, nr_cpus) || owner[i] != c ||
			    !r->drained)
				continue;
			for (unsigned int d = 0; d < nr_cpus; d++)
				if (d != c && count[d] - seen[d] >= pages &&
				    (to == c || count[d] - seen[d] > count[to] - seen[to]))
					to = d;
			if (to == c)
				break;	/* no room left anywhere */
			owner[i] = (unsigned short)to;
			seen[c] -= pages;
			seen[to] += pages;
			moved += (unsigned long)pages;
		}
	}
	free(seen);
	return moved;
}

void pl_positional_release(struct pl_positional *pos)
{
	if (!pos)
		return;
	free(pos->rec);
	free(pos->seen);
	free(pos->pb_type);
	free(pos->pb_from);
	memset(pos, 0, sizeof(*pos));
}
