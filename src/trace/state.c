// SPDX-License-Identifier: MIT
/*
 * state.c - a machine brought to a real kernel's state from a /proc
 * snapshot (level "counts"), through the mm layer's loading functions.
 *
 * Zones: the kernel's DMA and DMA32 become pagelab's DMA32, Normal (and
 * Movable) its Normal, each sized to the managed pages (the only ones the
 * buddy ever sees) plus 2% (at least 128 MiB) of slack that stays
 * allocated, as the kernel's reserved pages and holes; managed_pages is
 * then set to the reported value, so watermarks and PCP limits match.
 *
 * Layout: every page is first taken (allocated); pageblocks get types in
 * pagetypeinfo's proportions, spread evenly over the zone in pairs (one
 * order-10 block's two pageblocks share a type); then each type's free
 * blocks are given back into its pageblocks, largest order first, packed
 * so that no two free buddies meet (a free block's buddy always keeps an
 * allocated page), which reproduces buddyinfo and pagetypeinfo exactly
 * when the zone has room. The rest stays allocated, held by the state's
 * bitmap: a trace's free of a page pagelab never handed out takes one of
 * those (pl_state_take()). PCP high and batch are set as reported and each
 * CPU's PCP is filled with its reported count of held pages.
 *
 * Positional (the kernel's pfn layout): pageblock types from the trace's
 * exact evidence, the snapshot's counts for the online pageblocks
 * (vote_types()); the sighted blocks where the trace saw them
 * (place_sightings(), and the PCPs' in state_pcp.c, with the rest of each
 * PCP's reported count); a free block the trace used only part of grown back whole where the snapshot
 * has blocks of its order to place (grow_free()); then the rest as above,
 * first into untouched memory. The MAX_PAGE_ORDER blocks of memory the
 * snapshot counted offline are remembered for the replay's onlining
 * (pl_state_onlining()).
 *
 * Invariant: a set bit in @held is an allocated order-0 page the state owns.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "state_internal.h"

const char *const pl_state_level_names[] = { "fresh", "counts", "positional" };

int pl_state_level_parse(const char *s)
{
	if (!s)
		return -EINVAL;
	for (int i = 0; i <= PL_STATE_POSITIONAL; i++)
		if (!strcmp(s, pl_state_level_names[i]))
			return i;
	return -EINVAL;
}

/*
 * Which pagelab zone a kernel zone is. DMA stays a zone of its own: its
 * free pages sit behind its lowmem_reserve (24,090 pages against Normal
 * requests on a 24 GiB box, 3,840 free), and folded into DMA32 they
 * counted in DMA32's watermark checks, which let pagelab's DMA32 serve
 * requests under memory pressure that the kernel's turned away.
 */
static int pl_zone_of(const char *name)
{
	if (!strcmp(name, "DMA"))
		return ZONE_DMA;
	return !strcmp(name, "DMA32") ? ZONE_DMA32 : ZONE_NORMAL;
}

static unsigned long zone_pages(const struct pl_snapshot *snap, int zi)
{
	unsigned long pages = 0;

	for (int i = 0; i < snap->nr_zones; i++)
		if (pl_zone_of(snap->zone[i].name) == zi)
			pages += snap->zone[i].managed ? snap->zone[i].managed
						       : snap->zone[i].present;
	/*
	 * Slack: the kernel's zones have holes and reserved pages between
	 * their free blocks; a zone exactly the managed size could not hold
	 * a nearly all-free state's small blocks without merging them.
	 */
	if (pages)
		pages += max(pages / 50, 32 * MAX_ORDER_NR_PAGES);
	return (pages + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
}

/*
 * The snapshot decides the memory layout: its zones already hold the kernel's
 * reserves and holes as allocated pages, so a machine profile's own ZONE_DMA,
 * holes and boot reserve (which the loader would find not allocated where the
 * snapshot needs free blocks) are dropped; the profile keeps its CPUs,
 * topology and architecture.
 */
static void snapshot_layout(struct pl_config *cfg)
{
	cfg->dma_bytes = 0;
	cfg->nr_holes = 0;
	cfg->boot_reserve = false;
	cfg->kernel_image_bytes = 0;
}

/* The snapshot's vm sysctls, as its kernel ran with them. */
static void snapshot_sysctls(const struct pl_snapshot *snap, struct pl_config *cfg)
{
	cfg->min_free_kbytes = snap->min_free_kbytes;
	cfg->watermark_scale_factor = snap->watermark_scale_factor;
	cfg->watermark_boost_factor = snap->watermark_boost_factor;
	cfg->percpu_pagelist_high_fraction = snap->percpu_pagelist_high_fraction;
}

void pl_snapshot_config(const struct pl_snapshot *snap, struct pl_config *cfg)
{
	unsigned long dma, dma32, normal;

	if ((!snap || !cfg || snap->nr_zones < 0 || snap->nr_zones > PL_SNAP_MAX_ZONES) &&
	    pl_arg_refused(__func__, "NULL argument or no snapshot of pl_snapshot_read()"))
		return;
	dma = zone_pages(snap, ZONE_DMA);
	dma32 = zone_pages(snap, ZONE_DMA32);
	normal = zone_pages(snap, ZONE_NORMAL);
	snapshot_layout(cfg);
	cfg->dma_bytes = dma << PAGE_SHIFT;
	cfg->dma32_bytes = (dma + dma32) << PAGE_SHIFT;
	cfg->mem_bytes = (dma + dma32 + normal) << PAGE_SHIFT;
	snapshot_sysctls(snap, cfg);
}

/* ---- placing free blocks ---------------------------------------------------------- */

struct fill {
	struct pl_loaded_state *st;
	struct zone *zone;
	/*
	 * Positional: a pfn the trace saw was where its first sighting says at
	 * trace start (a held one on a PCP, which gets it once the pagesets
	 * load), so no free block of the snapshot's counts takes it.
	 */
	const struct pl_positional *pos;
	unsigned long need[NR_PAGE_ORDERS];
};

/*
 * Fill the 2^@k region at @pfn: free it whole if a block of that order is
 * needed and @whole_ok, else recurse into its halves, never both wholly
 * free (they would merge). Return: true if the region went free whole.
 */
static bool fill_region(struct fill *f, unsigned long pfn, unsigned int k, bool whole_ok)
{
	bool left;

	if (whole_ok && f->need[k] && run_held(f->st, pfn, k) &&
	    !(f->pos && seen_in(f->pos, pfn, 1UL << k))) {
		if (pl_zone_give_free_block(f->zone, pfn, k))
			return false;
		f->need[k]--;
		for (unsigned long i = 0; i < (1UL << k); i++)
			set_held(f->st, pfn + i, false);
		f->st->nr_held -= 1UL << k;
		return true;
	}
	if (!k)
		return false;
	/* nothing smaller needed: leave it allocated */
	{
		bool any = false;

		for (unsigned int o = 0; o < k; o++)
			any |= f->need[o] != 0;
		if (!any)
			return false;
	}
	left = fill_region(f, pfn, k - 1, true);
	fill_region(f, pfn + (1UL << (k - 1)), k - 1, !left);
	return false;
}

/* Pageblock types in pairs, each type's share spread evenly (Bresenham). */
static void assign_types(struct zone *zone, const unsigned long want[MIGRATE_PCPTYPES],
			 unsigned char *types)
{
	unsigned long nr = zone->spanned_pages >> pageblock_order, pairs = (nr + 1) / 2;
	unsigned long wp[MIGRATE_PCPTYPES], gp[MIGRATE_PCPTYPES] = { 0 };

	for (int t = 0; t < MIGRATE_PCPTYPES; t++)
		wp[t] = (want[t] + 1) / 2;
	for (unsigned long p = 0; p < pairs; p++) {
		int mt = MIGRATE_MOVABLE;

		for (int t = 0; t < MIGRATE_PCPTYPES; t++) {
			if (t == MIGRATE_MOVABLE || (p + 1) * wp[t] / pairs <= gp[t])
				continue;
			mt = t;
			break;
		}
		gp[mt]++;
		types[2 * p] = (unsigned char)mt;
		if (2 * p + 1 < nr)
			types[2 * p + 1] = (unsigned char)mt;
	}
}

static unsigned long list_length(const struct list_head *head)
{
	unsigned long n = 0;

	for (const struct list_head *p = head->next; p != head; p = p->next)
		n++;
	return n;
}

/*
 * Was kernel pfn @pfn of pagelab zone @zi online when the snapshot was
 * taken? pagetypeinfo counts the pageblocks of online memory sections only
 * (pfn_to_online_page()); online memory is taken to be the lowest of each
 * zone's span, so a zone's blocks beyond start_pfn + its count were holes
 * or offline memory, which hotplug onlines later (with Movable pageblocks).
 * A zone without pagetypeinfo is online throughout.
 */
static bool pfn_online(const struct pl_snapshot *snap, int zi, unsigned long pfn)
{
	for (int i = 0; i < snap->nr_zones; i++) {
		const struct pl_snap_zone *sz = &snap->zone[i];
		unsigned long blocks = 0;

		if (pl_zone_of(sz->name) != zi || !sz->managed)
			continue;
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			blocks += sz->blocks_mt[mt];
		if (!sz->has_pagetypeinfo || !blocks)
			return true;
		if (pfn >= sz->start_pfn && pfn < sz->start_pfn + (blocks << pageblock_order))
			return true;
	}
	return false;
}

/*
 * Pageblocks a claim below pageblock order took during the trace carry the
 * claiming type as their first exact evidence; positional.c names each
 * claim's candidate (pos->pb_from, its type before the claim). The
 * snapshot decides: while the free pages sighted in pageblocks of a type
 * exceed the snapshot's free pages of that type in the zone, a candidate of
 * that type takes its type before the claim, and its sighted free pages go
 * with it. (lowmem4: every free page of Normal on Reclaimable lists in the
 * snapshot, and 21 + 9 claims for Movable and Unmovable whose pageblocks the
 * trace showed first as Movable and Unmovable.)
 */
static void retype_claimed(struct zone *zone, const struct pl_positional *pos,
			   const struct pl_snapshot *snap, unsigned char *types,
			   const unsigned char *state, unsigned long given[MIGRATE_PCPTYPES])
{
	unsigned long nr = zone->spanned_pages >> pageblock_order, first = zone->zone_start_pfn >> pageblock_order;
	unsigned long sighted[MIGRATE_PCPTYPES] = { 0 }, snap_free[MIGRATE_PCPTYPES] = { 0 };
	unsigned long *pb_free;

	if (!pos->pb_claimed || !pos->pb_from)
		return;
	pb_free = calloc(nr, sizeof(*pb_free));
	if (!pb_free)
		return;	/* then the trace's types stand, as before */
	for (int i = 0; i < snap->nr_zones; i++)
		if (pl_zone_of(snap->zone[i].name) == (int)zone->zone_idx && snap->zone[i].has_pagetypeinfo)
			for (int t = 0; t < MIGRATE_PCPTYPES; t++)
				for (int o = 0; o < NR_PAGE_ORDERS; o++)
					snap_free[t] += snap->zone[i].free_mt[t][o] << o;
	for (size_t i = 0; i < pos->nr; i++) {
		const struct pl_sighting *r = &pos->rec[i];
		unsigned long pb;

		if (r->kind != PL_SEEN_FREE || !zone_spans_pfn(zone, r->pfn))
			continue;
		pb = (r->pfn - zone->zone_start_pfn) >> pageblock_order;
		pb_free[pb] += 1UL << r->order;
		if (types[pb] < MIGRATE_PCPTYPES)
			sighted[types[pb]] += 1UL << r->order;
	}
	for (unsigned long pb = 0; pb < nr && first + pb < pos->pb_nr; pb++) {
		int from = pos->pb_from[first + pb], mt = types[pb];

		if (from == PL_PB_UNKNOWN || mt >= MIGRATE_PCPTYPES || from == mt ||
		    sighted[mt] <= snap_free[mt])
			continue;
		types[pb] = (unsigned char)from;
		sighted[mt] -= pb_free[pb];
		sighted[from] += pb_free[pb];
		if (state[pb]) {
			given[mt]--;
			given[from]++;
		}
	}
	free(pb_free);
}

/*
 * Positional pageblock types. A pageblock with an exact type from the
 * trace (pos->pb_type) keeps it. The snapshot's counts hold for the online
 * pageblocks: what the exact types leave of each type goes first to online
 * pageblocks whose first sightings on a PCP vote for it (the list a page
 * was freed to), then spread evenly (Bresenham) over the online pageblocks
 * nothing is known of, the second of such a pair taking the first's type
 * (so that order-10 blocks can be placed), then any count still short
 * taken off the last unknown Movable ones; the rest Movable. Offline
 * pageblocks nothing is known of are Movable, as hotplug onlines them.
 */
static void vote_types(struct zone *zone, const struct pl_positional *pos,
		       const struct pl_snapshot *snap, const unsigned long want[MIGRATE_PCPTYPES],
		       unsigned char *types)
{
	unsigned long nr = zone->spanned_pages >> pageblock_order, first = zone->zone_start_pfn >> pageblock_order;
	unsigned long left[MIGRATE_PCPTYPES], given[MIGRATE_PCPTYPES] = { 0 };
	unsigned long got[MIGRATE_PCPTYPES] = { 0 }, unknown = 0, done = 0;
	unsigned int (*votes)[MIGRATE_PCPTYPES] = calloc(nr, sizeof(*votes));
	/* 0 offline, 1 online (unknown), 2 online with a type */
	unsigned char *state = calloc(nr, 1);

	memset(types, PL_PB_UNKNOWN, nr);
	if (!votes || !state) {
		for (unsigned long pb = 0; pb < nr; pb++)
			types[pb] = MIGRATE_MOVABLE;
		goto out;
	}
	for (unsigned long pb = 0; pb < nr; pb++) {
		unsigned long pfn = zone->zone_start_pfn + (pb << pageblock_order);

		state[pb] = pfn_online(snap, (int)zone->zone_idx, pfn);
		if (first + pb < pos->pb_nr && pos->pb_type[first + pb] != PL_PB_UNKNOWN) {
			types[pb] = pos->pb_type[first + pb];
			if (state[pb]) {
				given[types[pb]]++;
				state[pb] = 2;
			}
		} else if (!state[pb]) {
			types[pb] = MIGRATE_MOVABLE;
		}
	}
	retype_claimed(zone, pos, snap, types, state, given);
	for (int t = 0; t < MIGRATE_PCPTYPES; t++)
		left[t] = want[t] > given[t] ? want[t] - given[t] : 0;
	/* the weaker evidence: PCP sightings */
	for (size_t i = 0; i < pos->nr; i++) {
		const struct pl_sighting *r = &pos->rec[i];

		if (r->kind != PL_SEEN_PCP || !zone_spans_pfn(zone, r->pfn))
			continue;
		votes[(r->pfn - zone->zone_start_pfn) >> pageblock_order][r->mt]++;
	}
	for (unsigned long pb = 0; pb < nr; pb++) {
		unsigned int best = 0;
		int bt = -1;

		if (state[pb] != 1)
			continue;
		for (int t = 0; t < MIGRATE_PCPTYPES; t++)
			if (votes[pb][t] > best) {
				best = votes[pb][t];
				bt = t;
			}
		if (bt < 0 || (bt != MIGRATE_MOVABLE && got[bt] >= left[bt]))
			continue;
		types[pb] = (unsigned char)bt;
		got[bt]++;
		state[pb] = 2;
	}
	for (unsigned long pb = 0; pb < nr; pb++)
		unknown += state[pb] == 1;
	for (unsigned long pb = 0; pb < nr; pb++) {
		int mt = MIGRATE_MOVABLE;
		long behind = 0;

		if (state[pb] != 1)
			continue;
		done++;
		if ((pb & 1) && state[pb - 1] == 1 &&
		    (types[pb - 1] == MIGRATE_MOVABLE || got[types[pb - 1]] < left[types[pb - 1]])) {
			mt = types[pb - 1];
		} else {
			for (int t = 0; t < MIGRATE_PCPTYPES; t++) {
				long b = (long)((left[t] * done + unknown / 2) / unknown) - (long)got[t];

				if (t == MIGRATE_MOVABLE || got[t] >= left[t] || b <= behind)
					continue;
				behind = b;
				mt = t;
			}
		}
		types[pb] = (unsigned char)mt;
		got[mt]++;
	}
	/* rounding: a count still short takes the last unknown Movable pageblocks */
	for (unsigned long pb = nr; pb-- > 0;) {
		if (state[pb] != 1 || types[pb] != MIGRATE_MOVABLE)
			continue;
		for (int t = 0; t < MIGRATE_PCPTYPES; t++)
			if (t != MIGRATE_MOVABLE && got[t] < left[t]) {
				types[pb] = (unsigned char)t;
				got[t]++;
				break;
			}
	}
out:
	free(votes);
	free(state);
}

static int pre_add(struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	if (st->nr_pre == st->cap_pre) {
		size_t cap = st->cap_pre ? st->cap_pre * 2 : 4096;
		unsigned long *p = realloc(st->pre_pfn, cap * sizeof(*p));
		unsigned char *o;

		if (!p)
			return -ENOMEM;
		st->pre_pfn = p;
		o = realloc(st->pre_order, cap);
		if (!o)
			return -ENOMEM;
		st->pre_order = o;
		st->cap_pre = cap;
	}
	st->pre_pfn[st->nr_pre] = pfn;
	st->pre_order[st->nr_pre++] = (unsigned char)order;
	return 0;
}

/* The zone's free and allocated sightings where the trace saw them. */
static int place_sightings(struct pl_loaded_state *st, struct zone *zone,
			   const struct pl_positional *pos)
{
	for (size_t i = 0; i < pos->nr; i++) {
		const struct pl_sighting *r = &pos->rec[i];
		unsigned long end = r->pfn + (1UL << r->order);

		if (r->kind == PL_SEEN_PCP || !zone_spans_pfn(zone, r->pfn) ||
		    !zone_spans_pfn(zone, end - 1) || !run_held(st, r->pfn, r->order))
			continue;
		if (r->kind == PL_SEEN_FREE) {
			if (!pl_zone_give_free_block(zone, r->pfn, r->order))
				unhold(st, r->pfn, r->order);
		} else {
			if (r->order && pl_join_pages(pfn_to_page(r->pfn), r->order))
				continue;
			if (pre_add(st, r->pfn, r->order))
				return -ENOMEM;
			unhold(st, r->pfn, r->order);
		}
	}
	return 0;
}

struct grow_cand {
	unsigned long pfn, free;
};

static int cmp_cand(const void *a, const void *b)
{
	const struct grow_cand *x = a, *y = b;

	if (x->free != y->free)
		return x->free < y->free ? 1 : -1;
	return x->pfn < y->pfn ? -1 : x->pfn > y->pfn;
}

/*
 * Free pages in the 2^@k region at @pfn if it can have been one free block
 * of order @k of type @mt at trace start: all its pageblocks of type @mt,
 * every page either free (placed by a free sighting) or never seen by the
 * trace and held, at least one free, no free block of order @k or more in
 * it, and its buddy no free block of order @k (they would merge). Else 0.
 */
static unsigned long grow_score(const struct pl_loaded_state *st, struct zone *zone,
				const struct pl_positional *pos, unsigned long pfn, unsigned int k,
				int mt)
{
	unsigned long end = pfn + (1UL << k), free = 0, buddy = pfn ^ (1UL << k);

	if (!zone_spans_pfn(zone, pfn) || !zone_spans_pfn(zone, end - 1))
		return 0;
	for (unsigned long p = pfn; p < end; p += pageblock_nr_pages)
		if (get_pageblock_migratetype(pfn_to_page(p)) != mt)
			return 0;
	for (unsigned long p = pfn; p < end;) {
		const struct page *page = pfn_to_page(p);

		if (PageBuddy(page)) {
			if (buddy_order(page) >= k)
				return 0;
			free += 1UL << buddy_order(page);
			p += 1UL << buddy_order(page);
			continue;
		}
		if (!held(st, p) || pfn_seen(pos, p))
			return 0;
		p++;
	}
	if (k < MAX_PAGE_ORDER && zone_spans_pfn(zone, buddy) && PageBuddy(pfn_to_page(buddy)) &&
	    buddy_order(pfn_to_page(buddy)) == k)
		return 0;
	return free;
}

/* Give every held page of [@pfn, @end) back, in the largest aligned runs. */
static void give_held(struct pl_loaded_state *st, struct zone *zone, unsigned long pfn,
		      unsigned long end)
{
	while (pfn < end) {
		unsigned int j = 0;

		if (!held(st, pfn)) {
			pfn++;
			continue;
		}
		while (j < MAX_PAGE_ORDER && IS_ALIGNED(pfn, 2UL << j) && pfn + (2UL << j) <= end &&
		       run_held(st, pfn, j + 1))
			j++;
		if (!pl_zone_give_free_block(zone, pfn, j))
			unhold(st, pfn, j);
		pfn += 1UL << j;
	}
}

/*
 * Positional: a free block the trace used only part of shows as the free
 * pieces it handed out; the rest of it, never seen, was free too. Where
 * the snapshot has more free blocks of order k and type @mt than the
 * sightings placed, the regions that can have been such a block (see
 * grow_score()), most free pages first, get their unseen pages back, which
 * merge with the pieces into one order-k block. Highest order first, so
 * the pieces a grown block absorbs no longer count at the lower orders.
 */
static int grow_free(struct pl_loaded_state *st, struct zone *zone,
		     const struct pl_positional *pos, int mt, const unsigned long need[NR_PAGE_ORDERS])
{
	for (int k = MAX_PAGE_ORDER; k >= 1; k--) {
		unsigned long have = list_length(&zone->free_area[k].free_list[mt]);
		unsigned long nr = 1UL << k, n = 0, cap = 0;
		struct grow_cand *c = NULL;

		if (have >= need[k])
			continue;
		for (unsigned long pfn = (zone->zone_start_pfn + nr - 1) & ~(nr - 1); pfn + nr <= zone_end_pfn(zone);
		     pfn += nr) {
			unsigned long nfree;

			if (nr >= 64 && !touched(pos, pfn, nr))
				continue;
			nfree = grow_score(st, zone, pos, pfn, (unsigned int)k, mt);
			if (!nfree)
				continue;
			if (n == cap) {
				struct grow_cand *g;

				cap = cap ? cap * 2 : 256;
				g = realloc(c, cap * sizeof(*c));
				if (!g) {
					free(c);
					return -ENOMEM;
				}
				c = g;
			}
			c[n++] = (struct grow_cand){ .pfn = pfn, .free = nfree };
		}
		if (n)
			qsort(c, n, sizeof(*c), cmp_cand);
		for (unsigned long i = 0; i < n && have < need[k]; i++) {
			/* an earlier growth may have merged next to it */
			if (!grow_score(st, zone, pos, c[i].pfn, (unsigned int)k, mt))
				continue;
			give_held(st, zone, c[i].pfn, c[i].pfn + nr);
			have++;
		}
		free(c);
	}
	return 0;
}

static int load_zone(struct pl_loaded_state *st, struct zone *zone, const struct pl_snapshot *snap,
		     const struct pl_positional *pos)
{
	unsigned long want_blocks[MIGRATE_PCPTYPES] = { 0 }, snap_blocks = 0;
	unsigned long nr_pb = zone->spanned_pages >> pageblock_order;
	unsigned long wmark[NR_WMARK] = { 0 };
	unsigned char *types;
	struct fill f = { .st = st, .zone = zone, .pos = pos };
	bool any_zone = false;
	unsigned long managed = 0;

	for (int i = 0; i < snap->nr_zones; i++) {
		const struct pl_snap_zone *sz = &snap->zone[i];

		/* an empty zone (Movable, Device) still reports watermarks */
		if (pl_zone_of(sz->name) != (int)zone->zone_idx || !sz->managed)
			continue;
		any_zone = true;
		managed += sz->managed;
		for (int w = 0; w < NR_WMARK; w++)
			wmark[w] += sz->wmark[w];
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
			want_blocks[mt] += sz->blocks_mt[mt];
			snap_blocks += sz->blocks_mt[mt];
		}
	}
	if (!any_zone || !nr_pb)
		return 0;
	if (managed)
		pl_zone_set_managed(zone, min(managed, zone->spanned_pages));
	if (wmark[WMARK_MIN])
		pl_zone_set_watermarks(zone, wmark);
	/* the snapshot's pageblock counts; the slack's pageblocks are Movable */
	if (!snap_blocks) {
		want_blocks[MIGRATE_MOVABLE] = nr_pb;
	} else {
		unsigned long sum = 0;

		/*
		 * counts: rounded, but a type the snapshot has keeps at least one
		 * pair; positional (the kernel's layout): exactly the snapshot's
		 */
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
			unsigned long had = want_blocks[mt];

			if (mt == MIGRATE_MOVABLE)
				continue;
			if (nr_pb < snap_blocks)
				want_blocks[mt] = (had * nr_pb + snap_blocks / 2) / snap_blocks;
			if (!pos && had && want_blocks[mt] < 2)
				want_blocks[mt] = 2;
			sum += want_blocks[mt];
		}
		want_blocks[MIGRATE_MOVABLE] = nr_pb > sum ? nr_pb - sum : 0;
	}
	types = calloc(nr_pb, 1);
	if (!types)
		return -ENOMEM;
	if (pos)
		vote_types(zone, pos, snap, want_blocks, types);
	else
		assign_types(zone, want_blocks, types);

	pl_zone_take_all_free(zone);
	for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone); pfn++)
		set_held(st, pfn, true);
	st->nr_held += zone->spanned_pages;
	for (unsigned long pb = 0; pb < nr_pb; pb++)
		pl_zone_set_pageblock_type(zone, zone->zone_start_pfn + (pb << pageblock_order),
					   types[pb]);
	if (pos && place_sightings(st, zone, pos)) {
		free(types);
		return -ENOMEM;
	}

	/* each type's free blocks into its own pageblocks */
	for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
		int into = mt < MIGRATE_PCPTYPES ? mt : MIGRATE_MOVABLE;

		memset(f.need, 0, sizeof(f.need));
		for (int i = 0; i < snap->nr_zones; i++) {
			const struct pl_snap_zone *sz = &snap->zone[i];

			if (pl_zone_of(sz->name) != (int)zone->zone_idx)
				continue;
			for (int o = 0; o < NR_PAGE_ORDERS; o++)
				f.need[o] += sz->has_pagetypeinfo ? sz->free_mt[mt][o]
								  : (mt == MIGRATE_MOVABLE ? sz->nr_free[o] : 0);
		}
		if (pos && mt < MIGRATE_PCPTYPES && grow_free(st, zone, pos, mt, f.need)) {
			free(types);
			return -ENOMEM;
		}
		/*
		 * What the sightings placed already counts. Sighted pieces merge
		 * back into the larger blocks they were cut from, so an order may
		 * hold more than the snapshot says while lower ones hold fewer:
		 * that surplus (in pages) is taken off the lower orders' need,
		 * largest first, so the free total stays the snapshot's.
		 */
		{
			unsigned long surplus = 0;

			for (int o = MAX_PAGE_ORDER; o >= 0; o--) {
				unsigned long have = list_length(&zone->free_area[o].free_list[mt]);
				unsigned long take;

				if (have >= f.need[o]) {
					surplus += (have - f.need[o]) << o;
					f.need[o] = 0;
					continue;
				}
				f.need[o] -= have;
				take = min(f.need[o], surplus >> o);
				f.need[o] -= take;
				surplus -= take << o;
			}
		}
		/*
		 * Positional: first into memory the trace never touched (a block
		 * there cannot merge with a sighted one), then anywhere.
		 */
		for (int pass = pos ? 0 : 1; pass < 2; pass++) {
			for (unsigned long pb = 0; pb < nr_pb; pb += 2) {
				unsigned long pfn = zone->zone_start_pfn + (pb << pageblock_order);

				if (!pass && touched(pos, pfn, MAX_ORDER_NR_PAGES))
					continue;
				/* an order-10 block needs both its pageblocks of one type */
				if (pb + 1 < nr_pb && types[pb] == into && types[pb + 1] == into) {
					fill_region(&f, pfn, MAX_PAGE_ORDER, true);
					continue;
				}
				for (unsigned long i = pb; i < pb + 2 && i < nr_pb; i++)
					if (types[i] == into)
						fill_region(&f, zone->zone_start_pfn +
								    (i << pageblock_order),
							    pageblock_order, true);
			}
		}
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			st->unplaced += f.need[o];
	}
	free(types);
	return 0;
}

/*
 * The sections of @zone whose every MAX_PAGE_ORDER block the snapshot
 * counted offline go offline (their pages stay held), so pagetypeinfo's
 * block counts are the snapshot's; the replay onlines each as the trace
 * frees its first block (pl_state_onlining()).
 */
static void offline_sections(struct pl_loaded_state *st, struct zone *zone)
{
	unsigned long first = zone->zone_start_pfn >> PFN_SECTION_SHIFT;
	unsigned long last = (zone_end_pfn(zone) - 1) >> PFN_SECTION_SHIFT;

	for (unsigned long sec = first; sec <= last; sec++) {
		unsigned long a = max(sec << PFN_SECTION_SHIFT, zone->zone_start_pfn);
		unsigned long b = min((sec + 1) << PFN_SECTION_SHIFT, zone_end_pfn(zone));
		bool online = false;

		for (unsigned long blk = a >> MAX_PAGE_ORDER; blk << MAX_PAGE_ORDER < b; blk++)
			online |= !(st->offline[blk / 64] & (1ull << (blk % 64)));
		if (!online)
			pl_zone_set_section_online(zone, a, false);
	}
}

/*
 * Does @snap fit @m? Each of its zones with pages must land in a populated
 * zone of the machine whose managed pages can hold the snapshot's free
 * pages (buddy and PCP): a snapshot of a larger machine is refused here,
 * before anything on @m changes. Return: 0 or -EINVAL with one warning.
 */
static int snapshot_fits(struct pl_machine *m, const struct pl_snapshot *snap)
{
	unsigned long free_in[MAX_NR_ZONES] = { 0 };

	if (snap->nr_zones < 0 || snap->nr_zones > PL_SNAP_MAX_ZONES)
		goto bad;
	for (int i = 0; i < snap->nr_zones; i++) {
		const struct pl_snap_zone *sz = &snap->zone[i];
		int z = pl_zone_of(sz->name);
		unsigned long pages = 0;

		if (z < 0 || z >= MAX_NR_ZONES || sz->nr_pcp_cpus > PL_SNAP_MAX_CPUS)
			goto bad;
		for (int o = 0; o < NR_PAGE_ORDERS; o++) {
			if (sz->nr_free[o] > (ULONG_MAX >> MAX_PAGE_ORDER) / NR_PAGE_ORDERS)
				goto bad;
			pages += sz->nr_free[o] << o;
		}
		for (unsigned int c = 0; c < sz->nr_pcp_cpus; c++)
			pages += sz->pcp_count[c] > 0 ? (unsigned long)sz->pcp_count[c] : 0;
		if (pages && !populated_zone(&m->node_zones[z])) {
			pl_warn_ratelimited("load_state: the snapshot's zone %s has free pages, the "
					    "machine has no such zone", sz->name);
			return -EINVAL;
		}
		free_in[z] += pages;
	}
	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (free_in[z] > m->node_zones[z].present_pages) {
			pl_warn_ratelimited("load_state: the snapshot has %lu free pages in zone %s, "
					    "the machine's zone has %lu pages: a snapshot of a larger "
					    "machine", free_in[z], m->node_zones[z].name,
					    m->node_zones[z].present_pages);
			return -EINVAL;
		}
	return 0;
bad:
	pl_warn_ratelimited("load_state: a malformed snapshot (pl_snapshot_read() gives none such)");
	return -EINVAL;
}

static struct pl_loaded_state *load(struct pl_machine *m, const struct pl_snapshot *snap,
				    const struct pl_positional *pos)
{
	struct pl_loaded_state *st;
	struct pl_this saved = pl_this;
	struct zone *zone;

	if (!m || !snap) {
		pl_warn_ratelimited("pl_machine_load_state: NULL %s", m ? "snapshot" : "machine");
		return NULL;
	}
	if (snapshot_fits(m, snap))
		return NULL;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	st->m = m;
	st->rng = 0x2545f4914f6cdd1dull;
	st->held = calloc((m->max_pfn + 63) / 64, sizeof(uint64_t));
	if (!st->held) {
		free(st);
		return NULL;
	}
	if (pos) {	/* memory the snapshot did not count online: a trace may online it */
		unsigned long nr = m->max_pfn >> MAX_PAGE_ORDER;

		st->offline = calloc((nr + 63) / 64, sizeof(uint64_t));
		st->owner = malloc((pos->nr ? pos->nr : 1) * sizeof(*st->owner));
		if (!st->offline || !st->owner) {
			pl_state_release(st);
			return NULL;
		}
		for (size_t i = 0; i < pos->nr; i++)
			st->owner[i] = pos->rec[i].cpu;
		for_each_populated_zone(zone, m)
			for (unsigned long b = zone->zone_start_pfn >> MAX_PAGE_ORDER;
			     b < nr && zone_spans_pfn(zone, b << MAX_PAGE_ORDER); b++)
				if (!pfn_online(snap, (int)zone->zone_idx, b << MAX_PAGE_ORDER))
					st->offline[b / 64] |= 1ull << (b % 64);
	}
	pl_enter(m, 0);
	drain_all_pages(NULL);
	for_each_populated_zone(zone, m)
		if (load_zone(st, zone, snap, pos)) {
			pl_warn_ratelimited("load_state: no memory for zone %s", zone->name);
			pl_this = saved;
			pl_state_release(st);
			return NULL;
		}
	for (int i = 0; i < snap->nr_zones; i++) {
		const struct pl_snap_zone *sz = &snap->zone[i];
		struct zone *z = &m->node_zones[pl_zone_of(sz->name)];

		if (!populated_zone(z) || !sz->managed || sz->managed < 4096)
			continue;	/* a small DMA zone's pagesets (empty, high 0) are left as they are */
		if (pos)	/* drain_all_pages() sightings back to their own CPU */
			pl_positional_pcp_owners(pos, z->zone_start_pfn, zone_end_pfn(z), sz->pcp_count,
						 sz->pcp_batch, min(sz->nr_pcp_cpus, m->nr_cpus),
						 st->owner);
		for (unsigned int cpu = 0; cpu < sz->nr_pcp_cpus && cpu < m->nr_cpus; cpu++)
			pl_state_load_pcp(st, z, cpu, sz->pcp_high[cpu], sz->pcp_batch[cpu],
					  sz->pcp_count[cpu], pos);
	}
	if (st->offline) {
		for_each_populated_zone(zone, m)
			offline_sections(st, zone);
	}
	if (st->unplaced)
		pl_warn_ratelimited("load_state: %lu free blocks found no room in their pageblocks",
				    st->unplaced);
	/*
	 * A rule the design changes that a loaded state cannot carry: a 6.18
	 * kernel's snapshot has no pageblock owners, so pcp_owner (and what
	 * implies it) starts with none; said, never dropped silently.
	 */
	if (m->config.design.pcp_owner)
		pl_state_note(st, "pcp_owner: the loaded PCP pages lie in no owned pageblock (a 6.18 "
			      "kernel's snapshot has no owners); ownership starts with the first "
			      "whole-block refill");
	pl_this = saved;
	return st;
}

struct pl_loaded_state *pl_machine_load_state(struct pl_machine *m, const struct pl_snapshot *snap)
{
	return load(m, snap, NULL);
}

struct pl_loaded_state *pl_machine_load_positional(struct pl_machine *m,
						   const struct pl_snapshot *snap,
						   const struct pl_positional *pos)
{
	return load(m, snap, pos);
}

size_t pl_state_pretrace(const struct pl_loaded_state *st, const unsigned long **pfn,
			 const unsigned char **order)
{
	if ((!st || !pfn || !order) && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	*pfn = st->pre_pfn;
	*order = st->pre_order;
	return st->nr_pre;
}

void pl_snapshot_config_positional(const struct pl_snapshot *snap, const struct pl_positional *pos,
				   struct pl_config *cfg)
{
	unsigned long dma_end = 0, dma32_end = 0, normal_end = 0;

	if ((!snap || !pos || !cfg || snap->nr_zones < 0 || snap->nr_zones > PL_SNAP_MAX_ZONES) &&
	    pl_arg_refused(__func__, "NULL argument or no snapshot of pl_snapshot_read()"))
		return;
	snapshot_layout(cfg);
	for (int i = 0; i < snap->nr_zones; i++) {
		const struct pl_snap_zone *sz = &snap->zone[i];

		if (!sz->managed)
			continue;
		if (pl_zone_of(sz->name) == ZONE_DMA)
			dma_end = max(dma_end, sz->start_pfn + sz->spanned);
		else if (pl_zone_of(sz->name) == ZONE_DMA32)
			dma32_end = max(dma32_end, sz->start_pfn + sz->spanned);
		else	/* the managed pages from the zone's start, and slack */
			normal_end = max(normal_end, sz->start_pfn + sz->managed +
						     max(sz->managed / 50, 32 * MAX_ORDER_NR_PAGES));
	}
	dma_end = (dma_end + pageblock_nr_pages - 1) & ~(pageblock_nr_pages - 1);
	dma32_end = (max(dma32_end, dma_end) + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
	cfg->dma_bytes = dma_end << PAGE_SHIFT;
	normal_end = max(normal_end, pos->max_pfn);
	normal_end = (max(normal_end, dma32_end) + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
	cfg->dma32_bytes = dma32_end << PAGE_SHIFT;
	cfg->mem_bytes = normal_end << PAGE_SHIFT;
	snapshot_sysctls(snap, cfg);
}

/* ---- giving pre-trace pages back ------------------------------------------------- */

static struct page *take_run(struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	struct page *page = pfn_to_page(pfn);

	if (order && pl_join_pages(page, order))
		return NULL;
	for (unsigned long i = 0; i < (1UL << order); i++)
		set_held(st, pfn + i, false);
	st->nr_held -= 1UL << order;
	return page;
}

struct page *pl_state_take(struct pl_loaded_state *st, unsigned int order, int mt)
{
	unsigned long nr, max;

	(void)mt;
	if ((!st || order > MAX_PAGE_ORDER) && pl_arg_refused(__func__, "NULL state or order"))
		return NULL;
	nr = 1UL << order;
	max = st->m->max_pfn;
	if (st->nr_held < nr)
		return NULL;
	/* scattered, as the kernel's long-lived pages are: random probes first */
	for (int i = 0; i < 32; i++) {
		unsigned long pfn;

		st->rng ^= st->rng << 13;
		st->rng ^= st->rng >> 7;
		st->rng ^= st->rng << 17;
		pfn = (unsigned long)(st->rng % max) & ~(nr - 1);
		if (run_held(st, pfn, order))
			return take_run(st, pfn, order);
	}
	for (unsigned long n = 0; n < max; n += nr) {
		unsigned long pfn = (st->cursor + n) % max & ~(nr - 1);

		if (run_held(st, pfn, order)) {
			st->cursor = pfn + nr;
			return take_run(st, pfn, order);
		}
	}
	return NULL;
}

bool pl_state_holds(const struct pl_loaded_state *st, unsigned long pfn)
{
	return st && pfn < st->m->max_pfn && held(st, pfn);
}

void pl_state_moved(struct pl_loaded_state *st, unsigned long src, unsigned long dst)
{
	if (!st && pl_arg_refused(__func__, "NULL state"))
		return;
	set_held(st, src, false);
	set_held(st, dst, true);
}

bool pl_state_onlining(struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	unsigned long b = pfn >> MAX_PAGE_ORDER;

	if (!st || !st->offline || order != MAX_PAGE_ORDER || b >= st->m->max_pfn >> MAX_PAGE_ORDER ||
	    !(st->offline[b / 64] & (1ull << (b % 64))))
		return false;
	st->offline[b / 64] &= ~(1ull << (b % 64));
	return true;
}

void pl_state_note(struct pl_loaded_state *st, const char *fmt, ...)
{
	va_list ap;

	if (st->nr_notes >= PL_STATE_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(st->notes[st->nr_notes++], PL_STATE_NOTE_LEN, fmt, ap);
	va_end(ap);
}

int pl_state_design_notes(const struct pl_loaded_state *st, const char *notes[PL_STATE_MAX_NOTES])
{
	int n = st ? st->nr_notes : 0;

	for (int i = 0; i < n; i++)
		notes[i] = st->notes[i];
	return n;
}

void pl_state_release(struct pl_loaded_state *st)
{
	if (!st)
		return;
	free(st->offline);
	free(st->owner);
	free(st->pcp_pfn);
	free(st->pcp_cpu);
	free(st->pre_pfn);
	free(st->pre_order);
	free(st->held);
	free(st);
}
