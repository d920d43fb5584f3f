// SPDX-License-Identifier: MIT
/*
 * pcp_owner.c - seed 003 (Johannes Weiner's RFC, April 2026): per-CPU page
 * caches that take whole pageblocks and own them. Switch: pcp_owner.
 *
 * A refill that finds the PCP list empty first looks for a "fragment"
 * pageblock (one an earlier drain had to give back partially reassembled)
 * and pulls its free chunks off the zone lists; failing that it takes a
 * whole free pageblock of the migratetype (exact type or claimed, never
 * stolen) with one __rmqueue() of pageblock order. Either way the block is
 * marked as owned by this CPU and its free chunks go into the pcp's own
 * little buddy allocator (pcp->owned_free[mt][order]); allocations split
 * chunks there, under pcp->lock only. A free of a page in an owned block is
 * routed to the owner's pcp (pcp.c), where it merges with free buddies
 * before zone->lock is ever involved. When the pcp drains, fully
 * reassembled blocks go back to the zone whole; partial ones are released
 * with their chunks queued at the tail of the zone lists and remembered as
 * fragments, to be recovered first by the next refill.
 *
 * If a whole block does not fit under pcp->high, or none can be had, the
 * refill degrades as the RFC says ("the refill grabs smaller chunks that
 * aren't marked for ownership"; "the PCP can still grab chunks larger than
 * the requested order from the zone->lock freelists, and dole them out on
 * its own time"): pcp_owner_rmqueue_chunks() takes chunks of a higher order
 * under zone->lock, as many pages as the baseline's refill would, and
 * splits them into blocks of the order asked on the PCP list under
 * pcp->lock only. Their pages are not owned: frees use the local PCP as
 * before. (pagelab's own option pcp_owner_bulk_fallback degrades to the
 * baseline's rmqueue_bulk() instead; the caller does that.)
 * Where the RFC leaves a choice open:
 *  - the fit test uses pcp->high as nr_pcp_alloc() has just grown it, so a
 *    CPU that allocates steadily soon qualifies even with a small high_min;
 *  - a whole block is taken only without stealing (ALLOC_NOFRAGMENT), so an
 *    owned block's chunks all belong to one migratetype list;
 *  - the owner's pcp->lock is taken with spin_lock on a routed free: a
 *    trylock failure could not fall back to the zone without putting a
 *    page of an owned block on the zone lists;
 *  - a degraded chunk is as large as the refill (its pages rounded down to
 *    a power of two), at most half a pageblock; a chunk order with no free
 *    block is tried one order lower, down to the order asked itself, so
 *    that a fragmented zone still serves as the baseline would.
 *
 * Invariants (checked by debug.c): a PagePCPBuddy page heads a free chunk of
 * order private in an owned block, on its owner's owned_free list;
 * pcp->owned_count is the pages on those lists; a block whose
 * zone->pageblock_owner[i] names a CPU is in that CPU's pcp->owned[].
 *
 * A free page of an owned block may still sit on the zone lists or on
 * another PCP's lists: pages a CPU had cached before the block became owned
 * drain to the zone later (free_pcppages_bulk holds zone->lock and cannot
 * take the owner's pcp->lock), and allocations of orders 4..8 bypass the
 * PCP both ways. Such pages merge when the block is released. If they
 * reassemble the whole block in the zone while its owner holds no chunk of
 * it, another CPU may take it: the old owner's record is then stale, holds
 * no chunks, and is dropped when met (release_block).
 *
 * Locking: everything here runs under the pcp's lock; functions that touch
 * the zone lists say so and take zone->lock inside it (pcp, then zone).
 */
#include <stdlib.h>
#include "internal.h"

/* A degraded refill takes at most this many chunks under one zone->lock hold. */
#define MAX_DEGRADE_CHUNKS	256

static bool economy_steal(struct zone *zone, struct per_cpu_pages *pcp, int mt);

static unsigned long block_start_pfn(const struct zone *zone, unsigned int idx)
{
	return zone_pageblock_base(zone) + ((unsigned long)idx << pageblock_order);
}

static struct pcp_owned_block *find_owned(struct per_cpu_pages *pcp, unsigned int idx)
{
	for (int i = 0; i < pcp->nr_owned; i++)
		if (pcp->owned[i].idx == idx)
			return &pcp->owned[i];
	return NULL;
}

static void add_chunk(struct per_cpu_pages *pcp, struct page *page, unsigned int order, int mt)
{
	WRITE_ONCE(page->page_type, PGTY_pcpbuddy);
	WRITE_ONCE(page->private, order);
	list_add(&page->pcp_list, &pcp->owned_free[mt][order]);
}

static void del_chunk(struct page *page)
{
	list_del(&page->pcp_list);
	WRITE_ONCE(page->page_type, 0);
	WRITE_ONCE(page->private, 0);
}

/*
 * The next owned free chunk (PagePCPBuddy head) in [*@pfn, @end), or NULL;
 * *@pfn moves past it and *@order is its order. Context: the owner's lock.
 */
static struct page *next_owned_chunk(unsigned long *pfn, unsigned long end, unsigned int *order)
{
	while (*pfn < end) {
		struct page *page = pfn_to_page(*pfn);

		if (PagePCPBuddy(page)) {
			*order = (unsigned int)page->private;
			*pfn += 1UL << *order;
			return page;
		}
		(*pfn)++;
	}
	return NULL;
}

static void take_ownership(struct zone *zone, struct per_cpu_pages *pcp, unsigned int idx, int mt)
{
	if (pcp->nr_owned == pcp->owned_cap) {
		pcp->owned_cap = pcp->owned_cap ? pcp->owned_cap * 2 : 8;
		pcp->owned = realloc(pcp->owned, sizeof(*pcp->owned) * (size_t)pcp->owned_cap);
		if (!pcp->owned)
			abort();
	}
	pcp->owned[pcp->nr_owned++] = (struct pcp_owned_block){ idx, mt };
	WRITE_ONCE(zone->pageblock_owner[idx], (int)(pcp - zone->per_cpu_pageset));
}

/* Split the smallest owned chunk that fits. Context: pcp->lock. */
static struct page *owned_rmqueue_smallest(struct per_cpu_pages *pcp, unsigned int order, int mt)
{
	for (unsigned int o = order; o <= pageblock_order; o++) {
		struct list_head *list = &pcp->owned_free[mt][o];
		struct page *page;

		if (list_empty(list))
			continue;
		page = list_first_entry(list, struct page, pcp_list);
		del_chunk(page);
		while (o > order) {
			o--;
			add_chunk(pcp, page + (1UL << o), o, mt);
			pl_count(PL_EV_PCP_SPLIT, 1);	/* expand()'s work, under pcp->lock */
		}
		pcp->owned_count -= 1 << order;
		return page;
	}
	return NULL;
}

/*
 * Pull a fragment block's free chunks off the zone lists. Return: pages
 * recovered (0 if the block turned out not to be worth it).
 * Context: pcp->lock and zone->lock.
 */
static int recover_fragment(struct zone *zone, struct per_cpu_pages *pcp, unsigned int idx, int mt)
{
	unsigned long start = block_start_pfn(zone, idx), pfn;
	struct page *page;
	unsigned int order;
	int recovered = 0;

	/* A chunk above pageblock order would span blocks: leave it to the whole-block path. */
	for_each_buddy_in_range(page, order, pfn, start, start + pageblock_nr_pages)
		if (order > pageblock_order)
			return 0;
	take_ownership(zone, pcp, idx, mt);
	for_each_buddy_in_range(page, order, pfn, start, start + pageblock_nr_pages) {
		del_page_from_free_list(page, zone, order, mt);
		add_chunk(pcp, page, order, mt);
		recovered += 1 << order;
	}
	return recovered;
}

static int pop_fragment(struct zone *zone, int mt)
{
	while (zone->nr_fragments[mt]) {
		unsigned int idx = zone->fragment_stack[mt][--zone->nr_fragments[mt]];
		unsigned long start = block_start_pfn(zone, idx);

		if (zone->pageblock_owner[idx] == PB_OWNER_FRAGMENT &&
		    get_pfnblock_migratetype(pfn_to_page(start), start) == mt) {
			WRITE_ONCE(zone->pageblock_owner[idx], PB_OWNER_NONE);
			return (int)idx;
		}
	}
	return -1;
}

/*
 * The block economy's refill when the zone has no whole free block: adopt an
 * unowned block that has free chunks below pageblock order in the zone (left
 * by isolation, alloc_contig_range()/free_contig_range(), or a block given
 * back while partly allocated), the block whose largest free chunk is
 * largest; the migratetype's own blocks first, then another type's, claimed
 * for @mt as the kernel's fallback claims a pageblock. The zone still hands
 * out whole blocks: every free chunk of the adopted block moves to the PCP.
 * Return: pages adopted, 0 if the zone has no free chunk in an unowned block.
 * Context: pcp->lock and zone->lock.
 */
static int economy_adopt(struct zone *zone, struct per_cpu_pages *pcp, int mt)
{
	for (int any = 0; any < 2; any++) {
		for (int order = (int)pageblock_order - 1; order >= 0; order--) {
			for (int t = 0; t < MIGRATE_PCPTYPES; t++) {
				struct list_head *pos, *head = &zone->free_area[order].free_list[t];

				if ((t == mt) == any)
					continue;
				list_for_each(pos, head) {
					struct page *page = list_entry(pos, struct page, buddy_list);
					unsigned int idx = (unsigned int)pfn_to_pageblock_idx(
						zone, page_to_pfn(page));

					if (zone->pageblock_owner[idx] >= 0)
						continue;	/* owned blocks keep their pages on PCPs */
					if (t != mt) {
						if (move_freepages_block(zone, page, t, mt) < 0)
							continue;	/* straddles the zone's edge */
						pl_count(PL_EV_FALLBACK_CLAIM, 1);
					}
					WRITE_ONCE(zone->pageblock_owner[idx], PB_OWNER_NONE);
					return recover_fragment(zone, pcp, idx, mt);
				}
			}
		}
	}
	return 0;
}

/*
 * Give this pcp another owned block: a fragment first, else a whole free
 * pageblock (the block economy: else a partly free unowned one);
 * economy_batch then takes more whole blocks under the same hold, up to
 * @nr_blocks. Return: false if neither fits or exists (degrade to
 * baseline). Context: pcp->lock; takes zone->lock.
 */
static bool pcp_owner_refill(struct zone *zone, struct per_cpu_pages *pcp, int mt,
			     unsigned int alloc_flags, int nr_blocks)
{
	enum rmqueue_mode mode = RMQUEUE_NORMAL;
	int got = 0, idx;
	struct page *page;

	if (mt >= MIGRATE_PCPTYPES)
		return false;
	/* The block economy has no degraded mode: it always deals in blocks. */
	if (!design_block_economy(zone) && pcp->count + (int)pageblock_nr_pages > pcp->high)
		return false;
	spin_lock(&zone->lock);
	while (!got && (idx = pop_fragment(zone, mt)) >= 0)
		got = recover_fragment(zone, pcp, (unsigned int)idx, mt);
	if (got) {
		pl_count(PL_EV_PCP_RECOVER_FRAGMENT, 1);
	} else {
		page = __rmqueue(zone, pageblock_order, mt, alloc_flags | ALLOC_NOFRAGMENT, &mode);
		if (page) {
			take_ownership(zone, pcp, (unsigned int)pfn_to_pageblock_idx(zone, page_to_pfn(page)), mt);
			add_chunk(pcp, page, pageblock_order, mt);
			got = (int)pageblock_nr_pages;
			pl_count(PL_EV_PCP_OWN_BLOCK, 1);
		}
	}
	/* economy_batch: the rest of the batch, whole free blocks only */
	for (int n = 1; got && n < nr_blocks; n++) {
		page = __rmqueue(zone, pageblock_order, mt, alloc_flags | ALLOC_NOFRAGMENT, &mode);
		if (!page)
			break;
		take_ownership(zone, pcp, (unsigned int)pfn_to_pageblock_idx(zone, page_to_pfn(page)), mt);
		add_chunk(pcp, page, pageblock_order, mt);
		got += (int)pageblock_nr_pages;
		pl_count(PL_EV_PCP_OWN_BLOCK, 1);
	}
	if (!got && design_block_economy(zone))
		got = economy_adopt(zone, pcp, mt);
	spin_unlock(&zone->lock);
	if (!got && design_block_economy(zone))
		return economy_steal(zone, pcp, mt);
	if (!got)
		return false;
	pl_count(PL_EV_ZONE_LOCK_PAGES, (unsigned long)got);
	pl_count(PL_EV_PCP_REFILL_PAGES, (unsigned long)got);
	pcp->owned_count += got;
	pcp->count += got;
	return true;
}

struct page *pcp_owner_rmqueue(struct zone *zone, struct per_cpu_pages *pcp, unsigned int order,
			       int mt, unsigned int alloc_flags)
{
	struct page *page;

	if (mt >= MIGRATE_PCPTYPES)
		return NULL;
	page = owned_rmqueue_smallest(pcp, order, mt);
	if (page) {
		pl_count(PL_EV_PCP_HIT, 1);
		return page;
	}
	if (design_economy_batch(zone)) {
		int factor = pcp->alloc_factor, count = pcp->count;

		if (!pcp_owner_refill(zone, pcp, mt, alloc_flags,
				      economy_refill_blocks(zone, pcp, order)))
			return NULL;
		/* economy_ramp: nr_pcp_alloc() doubled the batch; double what was taken */
		if (design_economy_ramp(zone) && pcp->alloc_factor > factor)
			economy_refill_taken(pcp, pcp->count - count);
	} else if (!pcp_owner_refill(zone, pcp, mt, alloc_flags, 1)) {
		return NULL;
	}
	pl_count(PL_EV_PCP_MISS, 1);
	return owned_rmqueue_smallest(pcp, order, mt);
}

/**
 * pcp_owner_rmqueue_chunks() - the RFC's degraded refill: take unowned
 * chunks of a higher order than @order under one zone->lock hold, then
 * split them into order-@order blocks appended to @list (physical order),
 * under pcp->lock only.
 * @count: blocks of @order wanted (nr_pcp_alloc()'s batch).
 * Return: blocks added to @list. Context: pcp->lock; takes zone->lock.
 */
int pcp_owner_rmqueue_chunks(struct zone *zone, unsigned int order, int count,
			     struct list_head *list, int mt, unsigned int alloc_flags)
{
	enum rmqueue_mode rmqm = RMQUEUE_NORMAL;
	unsigned int chunk_order = order, max_chunk = pageblock_order - 1;
	struct page *chunks[MAX_DEGRADE_CHUNKS];
	unsigned char chunk_orders[MAX_DEGRADE_CHUNKS];
	int nr_chunks = 0, added = 0, want = count;

	/* the largest chunk not above the refill, at most half a pageblock */
	while (chunk_order < max_chunk && (2 << (chunk_order - order)) <= count)
		chunk_order++;
	spin_lock(&zone->lock);
	while (want > 0 && nr_chunks < MAX_DEGRADE_CHUNKS) {
		struct page *page;

		/* never more than the refill asked for */
		while (chunk_order > order && (1 << (chunk_order - order)) > want)
			chunk_order--;
		page = __rmqueue(zone, chunk_order, mt, alloc_flags, &rmqm);
		if (!page) {
			if (chunk_order == order)
				break;
			chunk_order--;	/* none that large: a smaller chunk */
			continue;
		}
		chunks[nr_chunks] = page;
		chunk_orders[nr_chunks++] = (unsigned char)chunk_order;
		want -= 1 << (chunk_order - order);
	}
	spin_unlock(&zone->lock);

	/* Outside zone->lock: dole the chunks out as blocks of @order. */
	for (int i = 0; i < nr_chunks; i++) {
		unsigned long nr = 1UL << (chunk_orders[i] - order);

		for (unsigned long j = 0; j < nr; j++) {
			pl_vt_path(VT_P_PCP_REFILL);	/* rmqueue_bulk()'s list add, out of the lock */
			list_add_tail(&chunks[i][j << order].pcp_list, list);
		}
		added += (int)nr;
		if (chunk_orders[i] > order)
			pl_count(PL_EV_PCP_DEGRADE_CHUNKS, 1);
	}
	pl_count(PL_EV_ZONE_LOCK_PAGES, (unsigned long)added << order);
	pl_count(PL_EV_PCP_REFILL_PAGES, (unsigned long)added << order);
	return added;
}

void pcp_owner_free_chunk(struct zone *zone, struct per_cpu_pages *pcp, struct page *page,
			  unsigned long pfn, unsigned int order)
{
	struct pcp_owned_block *rec = find_owned(pcp, (unsigned int)pfn_to_pageblock_idx(zone, pfn));

	pcp->owned_count += 1 << order;
	while (order < pageblock_order) {
		unsigned long buddy_pfn = pfn ^ (1UL << order), combined;
		struct page *buddy = page + ((long)buddy_pfn - (long)pfn);

		if (!PagePCPBuddy(buddy) || READ_ONCE(buddy->private) != order)
			break;
		del_chunk(buddy);
		pl_count(PL_EV_PCP_MERGE, 1);
		combined = pfn & buddy_pfn;
		page -= pfn - combined;	/* combined <= pfn: no unsigned wrap */
		pfn = combined;
		order++;
	}
	add_chunk(pcp, page, order, rec->migratetype);
}

/*
 * Return owned block @i to the zone. A fully reassembled block goes back
 * whole; a partial one becomes a fragment, its chunks at the list tails.
 * Return: pages released. Context: pcp->lock and zone->lock.
 */
static int release_block(struct zone *zone, struct per_cpu_pages *pcp, int i)
{
	unsigned int idx = pcp->owned[i].idx;
	unsigned long start = block_start_pfn(zone, idx), pfn = start;
	struct page *head = pfn_to_page(start), *page;
	bool whole = PagePCPBuddy(head) && head->private == pageblock_order;
	int mt = get_pfnblock_migratetype(head, start), released = 0;
	unsigned int order;

	/* A stale record: the block changed hands (see the file comment). */
	if (zone->pageblock_owner[idx] != (int)(pcp - zone->per_cpu_pageset)) {
		pcp->owned[i] = pcp->owned[--pcp->nr_owned];
		return 0;
	}

	while ((page = next_owned_chunk(&pfn, start + pageblock_nr_pages, &order))) {
		unsigned long chunk_pfn = page_to_pfn(page);

		del_chunk(page);
		__free_one_page(page, chunk_pfn, zone, order,
				get_pfnblock_migratetype(page, chunk_pfn),
				whole ? FPI_NONE : FPI_TO_TAIL);
		released += 1 << order;
	}
	if (whole || mt >= MIGRATE_PCPTYPES) {
		WRITE_ONCE(zone->pageblock_owner[idx], PB_OWNER_NONE);
	} else {
		WRITE_ONCE(zone->pageblock_owner[idx], PB_OWNER_FRAGMENT);
		if (zone->nr_fragments[mt] < zone_nr_pageblocks(zone))
			zone->fragment_stack[mt][zone->nr_fragments[mt]++] = idx;
	}
	pl_count(whole ? PL_EV_PCP_RELEASE_BLOCK : PL_EV_PCP_RELEASE_FRAGMENT, 1);
	pcp->owned[i] = pcp->owned[--pcp->nr_owned];
	pcp->owned_count -= released;
	return released;
}

int pcp_owner_release(struct zone *zone, struct per_cpu_pages *pcp, int count)
{
	int released = 0;

	/* Whole blocks first: they cost one merge-free insert each. */
	for (int i = pcp->nr_owned - 1; i >= 0 && released < count; i--) {
		struct page *head = pfn_to_page(block_start_pfn(zone, pcp->owned[i].idx));

		if (PagePCPBuddy(head) && head->private == pageblock_order)
			released += release_block(zone, pcp, i);
	}
	/* Then the oldest partial blocks; the block economy keeps them. */
	while (released < count && pcp->nr_owned && !design_block_economy(zone))
		released += release_block(zone, pcp, 0);
	return released;
}

void pcp_owner_setup_zone(struct zone *zone, unsigned int nr_cpus)
{
	unsigned long nr_blocks = zone_nr_pageblocks(zone);

	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			for (unsigned int o = 0; o <= pageblock_order; o++)
				INIT_LIST_HEAD(&pcp->owned_free[mt][o]);
	}
	if (!design_pcp_owner(zone) || zone->pageblock_owner || !nr_blocks)
		return;
	zone->pageblock_owner = malloc(sizeof(int) * nr_blocks);
	for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
		zone->fragment_stack[mt] = malloc(sizeof(unsigned int) * nr_blocks);
	if (!zone->pageblock_owner || !zone->fragment_stack[0] || !zone->fragment_stack[1] ||
	    !zone->fragment_stack[2])
		abort();
	for (unsigned long i = 0; i < nr_blocks; i++)
		zone->pageblock_owner[i] = PB_OWNER_NONE;
}

void pcp_owner_free_zone(struct zone *zone, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; zone->per_cpu_pageset && cpu < nr_cpus; cpu++)
		free(zone->per_cpu_pageset[cpu].owned);
	free(zone->pageblock_owner);
	zone->pageblock_owner = NULL;
	for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
		free(zone->fragment_stack[mt]);
		zone->fragment_stack[mt] = NULL;
	}
}

/* ---- pcp_block_economy (pagelab's own, from the seed 003 thread) ---------- */

/*
 * The zone buddy as "a pure block economy" (Zi Yan's idea, Johannes
 * Weiner's conditions): a PCP refill always takes a whole pageblock (no
 * degraded rmqueue_bulk), drains give back only whole free blocks, every
 * order below pageblock_order is split and merged under pcp->lock
 * (rmqueue()/__free_frozen_pages() route orders 4..8 here too), frees go
 * to the block's nominal owner, free pages are counted per CPU and summed
 * for the watermarks, and isolation takes owned blocks back first.
 *
 * When the zone has no free block left, a CPU steals one from another
 * CPU. The stealing order:
 *  1. CPUs holding free pages of the migratetype first: stealing anything
 *     else mixes types; only when no CPU has any, a block of another type
 *     (this CPU's own first), claimed for the type as the kernel's fallback
 *     claims a whole pageblock (counted as FALLBACK_CLAIM);
 *  2. the nearest CPU first (by CPU number: pagelab's vCPUs have no NUMA
 *     distance, and neighbouring numbers share a core or an LLC on the
 *     machine profiles' topologies), so the cache lines that move stay
 *     close;
 *  3. from that CPU, the owned block with the most free pages of the type,
 *     so one steal lasts longest and the victim keeps its denser blocks.
 * The victim's lock is only tried (the thief holds its own pcp->lock: two
 * CPUs stealing from each other must not deadlock); a busy victim is
 * skipped. The stolen block's free chunks move to the thief whole, and its
 * allocated pages route to the thief when freed.
 */

/* Free pages of block @idx on @pcp's owned lists. Context: pcp->lock. */
static unsigned long block_free_pages(struct zone *zone, unsigned int idx)
{
	unsigned long start = block_start_pfn(zone, idx), pfn = start, pages = 0;
	unsigned int order;

	while (next_owned_chunk(&pfn, start + pageblock_nr_pages, &order))
		pages += 1UL << order;
	return pages;
}

/* Move owned block @i of @from to @to with its free chunks. Context: both locks. */
static int transfer_block(struct zone *zone, struct per_cpu_pages *from, int i,
			  struct per_cpu_pages *to, int new_mt)
{
	struct pcp_owned_block rec = from->owned[i];
	unsigned long start = block_start_pfn(zone, rec.idx), pfn = start;
	struct page *page;
	unsigned int order;
	int moved = 0;

	from->owned[i] = from->owned[--from->nr_owned];
	if (new_mt != rec.migratetype) {
		/* a claim across types, as the kernel's fallback claims a block */
		spin_lock(&zone->lock);
		set_pageblock_migratetype(pfn_to_page(start), new_mt);
		spin_unlock(&zone->lock);
		pl_count(PL_EV_FALLBACK_CLAIM, 1);
	}
	take_ownership(zone, to, rec.idx, new_mt);
	while ((page = next_owned_chunk(&pfn, start + pageblock_nr_pages, &order))) {
		del_chunk(page);
		add_chunk(to, page, order, new_mt);
		moved += 1 << order;
	}
	from->owned_count -= moved;
	from->count -= moved;
	to->owned_count += moved;
	to->count += moved;
	return moved;
}

/*
 * Steal a block of type @mt for @pcp (see the stealing order above).
 * Return: true if @pcp now has free pages of @mt. Context: pcp->lock.
 */
static bool economy_steal(struct zone *zone, struct per_cpu_pages *pcp, int mt)
{
	unsigned int self = (unsigned int)(pcp - zone->per_cpu_pageset);
	unsigned int nr_cpus = zone->machine->nr_cpus;

	/* Pass 0: blocks of @mt on other CPUs; pass 1: any type, this CPU first. */
	for (int any = 0; any < 2; any++) {
		for (unsigned int d = any ? 0 : 1; d < nr_cpus; d++) {
			unsigned int cand[2] = { (self + d) % nr_cpus,
						 (self + nr_cpus - d) % nr_cpus };

			for (int k = 0; k < (cand[0] == cand[1] ? 1 : 2); k++) {
				struct per_cpu_pages *victim = &zone->per_cpu_pageset[cand[k]];
				unsigned long best_pages = 0;
				int best = -1;

				/* the thief holds its own lock; a busy victim is skipped */
				if (victim != pcp && !spin_trylock(&victim->lock))
					continue;
				for (int i = 0; i < victim->nr_owned; i++) {
					unsigned long pages;

					if ((victim->owned[i].migratetype == mt) == any ||
					    zone->pageblock_owner[victim->owned[i].idx] !=
						    (int)cand[k])
						continue;
					pages = block_free_pages(zone, victim->owned[i].idx);
					if (pages > best_pages) {
						best_pages = pages;
						best = i;
					}
				}
				if (best >= 0) {
					transfer_block(zone, victim, best, pcp, mt);
					pl_count(PL_EV_ECONOMY_STEAL, 1);
				}
				if (victim != pcp)
					spin_unlock(&victim->lock);
				if (best >= 0)
					return true;
			}
		}
	}
	return false;
}

/* Does @pcp own a block of owned[@i]'s migratetype besides owned[@i]? */
static bool owns_another_of_type(const struct per_cpu_pages *pcp, int i)
{
	for (int j = 0; j < pcp->nr_owned; j++)
		if (j != i && pcp->owned[j].migratetype == pcp->owned[i].migratetype)
			return true;
	return false;
}

/**
 * economy_free_bulk() - the block economy's drain: give back whole free
 * blocks while the PCP stays at pcp->high without them, and keeps one block
 * of each migratetype it uses (every whole block if @all: drain_all_pages());
 * partial blocks stay. A block is 512 pages, more than pcp->high on most
 * machines: releasing the last block of a type as soon as the PCP is over
 * high hands it back to take it again on the next refill (measured: kbuild
 * at 128 vCPUs locked the zone 35k times per Mop that way).
 * economy_batch also gives back the whole blocks that fit in @count, the
 * pages nr_pcp_free() asked for (it grows over a stream of frees, as in
 * 6.18), so that a burst of frees returns its blocks in few holds.
 * zone->lock is taken only when a block goes. Context: pcp->lock.
 */
void economy_free_bulk(struct zone *zone, struct per_cpu_pages *pcp, int count, bool all)
{
	int released = 0, batch = design_economy_batch(zone) ? count : 0;

	for (int i = pcp->nr_owned - 1; i >= 0; i--) {
		struct page *head = pfn_to_page(block_start_pfn(zone, pcp->owned[i].idx));

		if (!all && pcp->count - released - (int)pageblock_nr_pages < pcp->high &&
		    released + (int)pageblock_nr_pages > batch)
			break;
		if (!PagePCPBuddy(head) || head->private != pageblock_order)
			continue;
		if (!all && !owns_another_of_type(pcp, i))
			continue;
		if (!released)
			spin_lock(&zone->lock);
		released += release_block(zone, pcp, i);
	}
	if (!released)
		return;
	pcp->count -= released;
	pcp_drain_finish(zone, pcp, 0, released);
}

/**
 * economy_free_pages() - the free pages held by @zone's PCPs, summed for
 * the watermarks (the block economy's per-CPU free accounting). Takes each
 * pcp->lock in turn; called only when the zone's own count fails a check.
 */
unsigned long economy_free_pages(struct zone *zone)
{
	unsigned long pages = 0;

	for (unsigned int cpu = 0; cpu < zone->machine->nr_cpus; cpu++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

		spin_lock(&pcp->lock);
		pages += (unsigned long)pcp->owned_count;
		spin_unlock(&pcp->lock);
	}
	return pages;
}

/**
 * economy_release_range() - before isolating [@start_pfn, @end_pfn), take
 * back every owned block that overlaps it: its free chunks go to the zone
 * lists and it has no owner, so later frees of its pages go to the zone.
 * Context: no locks held; takes each owner's pcp->lock, then zone->lock.
 */
void economy_release_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn)
{
	unsigned long pfn = start_pfn & ~(pageblock_nr_pages - 1);

	for (; pfn < end_pfn; pfn += pageblock_nr_pages) {
		struct per_cpu_pages *pcp;
		unsigned int idx;
		int owner;

		if (!zone_spans_pfn(zone, pfn))
			continue;
		idx = (unsigned int)pfn_to_pageblock_idx(zone, pfn);
retry:
		owner = READ_ONCE(zone->pageblock_owner[idx]);
		if (owner < 0)
			continue;
		pcp = &zone->per_cpu_pageset[owner];
		spin_lock(&pcp->lock);
		spin_lock(&zone->lock);
		for (int i = 0; i < pcp->nr_owned; i++) {
			if (pcp->owned[i].idx != idx)
				continue;
			pcp->count -= release_block(zone, pcp, i);
			break;
		}
		/*
		 * A partial block is not a fragment to recover: it is being
		 * isolated. Under the same zone->lock hold, or another CPU's
		 * refill could recover it in between and own it unrecorded.
		 */
		if (zone->pageblock_owner[idx] == PB_OWNER_FRAGMENT)
			WRITE_ONCE(zone->pageblock_owner[idx], PB_OWNER_NONE);
		spin_unlock(&zone->lock);
		spin_unlock(&pcp->lock);
		/* stolen by another CPU meanwhile: take it back from the thief */
		if (READ_ONCE(zone->pageblock_owner[idx]) >= 0)
			goto retry;
	}
}
