// SPDX-License-Identifier: MIT
/*
 * pcp_premerge.c - pagelab's own design from Zi Yan's review of seed 003:
 * "let PCP do the free page merging before holding zone->lock". Switch:
 * pcp_premerge (preset pcp-premerge). No ownership, no routing: every CPU
 * frees to its own PCP as in 6.18.
 *
 * Johannes Weiner's reply names what it needs: a drain can merge a block
 * with its buddy only if it knows the buddy is on the same PCP, "something
 * like PagePCPBuddy() and page->pcp_cpu". Userspace can afford that field:
 * struct page carries pcp_cpu1 (CPU + 1, 0 for none) and pcp_order for the
 * head of every block on a PCP list. A drain (free_pcppages_bulk) then works
 * in two phases:
 *  1. under pcp->lock only: take the blocks to free in the baseline's
 *     round-robin order; for each, while its buddy is on this PCP at the
 *     same order, pull the buddy off its list and merge, up to
 *     pageblock_order (the zone merges beyond it, where migratetypes and
 *     isolation decide);
 *  2. under zone->lock: __free_one_page() for each merged block.
 * The buddies pulled count against the drain's budget, so a drain moves as
 * many pages as in the baseline, in fewer, larger blocks.
 *
 * Each lookup that cannot merge is counted with its reason, which answers
 * the thread's question of how often merging buddies are freed through the
 * same CPU: the buddy is allocated (or inside a larger block), on another
 * CPU's PCP, already free in the zone, on this PCP at another order, or
 * owned by pcp_owner / outside the zone.
 *
 * Invariants (checked by debug.c): a page has pcp_cpu1 != 0 exactly when it
 * heads a block on that CPU's PCP lists, and then pcp_order is the list's
 * order. Locking: pcp->lock throughout; zone->lock inside it for phase 2.
 */
#include "internal.h"

static unsigned short pcp_cpu1(const struct zone *zone, const struct per_cpu_pages *pcp)
{
	return (unsigned short)(pcp - zone->per_cpu_pageset + 1);
}

/**
 * pcp_premerge_tag() - mark @page as the head of an @order block on @pcp's
 * lists. Context: pcp->lock.
 */
void pcp_premerge_tag(struct per_cpu_pages *pcp, struct zone *zone, struct page *page,
		      unsigned int order)
{
	page->pcp_order = (unsigned char)order;
	WRITE_ONCE(page->pcp_cpu1, pcp_cpu1(zone, pcp));
}

/* Count why @buddy could not merge with a block of @order on @cpu1's PCP. */
static void count_miss(const struct zone *zone, const struct page *buddy, unsigned short cpu1,
		       bool in_zone)
{
	unsigned short tag = READ_ONCE(buddy->pcp_cpu1);

	if (!in_zone || PagePCPBuddy(buddy))
		pl_count(PL_EV_PCP_PREMERGE_OTHER, 1);
	else if (tag == cpu1)
		pl_count(PL_EV_PCP_PREMERGE_ORDER, 1);
	else if (tag)
		pl_count(PL_EV_PCP_PREMERGE_OTHER_PCP, 1);
	else if (PageBuddy(buddy))
		pl_count(PL_EV_PCP_PREMERGE_IN_ZONE, 1);
	else
		pl_count(PL_EV_PCP_PREMERGE_IN_USE, 1);
	(void)zone;
}

/*
 * Merge the block at @*pfn of @order with buddies on the same PCP while
 * there are any. Return: the merged order; @*pfn its first pfn; @*pulled
 * grows by the pages taken off the lists. Context: pcp->lock.
 */
static unsigned int premerge(struct zone *zone, struct per_cpu_pages *pcp, unsigned long *pfn,
			     unsigned int order, int *pulled)
{
	unsigned short cpu1 = pcp_cpu1(zone, pcp);

	while (order < pageblock_order) {
		unsigned long buddy_pfn = *pfn ^ (1UL << order);
		struct page *buddy = pfn_to_page(buddy_pfn);
		bool in_zone = zone_spans_pfn(zone, buddy_pfn);

		pl_count(PL_EV_PCP_PREMERGE_TRY, 1);
		if (!in_zone || READ_ONCE(buddy->pcp_cpu1) != cpu1 || buddy->pcp_order != order) {
			count_miss(zone, buddy, cpu1, in_zone);
			break;
		}
		list_del(&buddy->pcp_list);
		WRITE_ONCE(buddy->pcp_cpu1, 0);
		*pulled += 1 << order;
		pl_count(PL_EV_PCP_MERGE, 1);
		*pfn &= ~(1UL << order);
		order++;
	}
	return order;
}

/**
 * pcp_premerge_free_bulk() - free_pcppages_bulk() with pre-merging: return
 * about @count pages from @pcp, starting with list @pindex, merged under
 * pcp->lock first, then freed to the buddy in one zone->lock hold.
 * Context: pcp->lock.
 */
void pcp_premerge_free_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp, int pindex)
{
	int min_pindex = 0, max_pindex = NR_PCP_LISTS - 1, moved = 0;
	int listed = pcp->count - pcp->owned_count;
	struct list_head batch, *pos, *n;

	INIT_LIST_HEAD(&batch);
	count = min(pcp->count, count);
	pindex = pindex - 1;	/* the requested list is drained first */
	while (count > 0 && listed > 0) {
		struct list_head *list = pcp_next_list(pcp, &pindex, &min_pindex, &max_pindex);
		unsigned int order = pindex_to_order((unsigned int)pindex);

		do {
			struct page *page = list_last_entry(list, struct page, pcp_list);
			unsigned long pfn = page_to_pfn(page);
			int pages = 1 << order;
			unsigned int merged;

			list_del(&page->pcp_list);
			WRITE_ONCE(page->pcp_cpu1, 0);
			merged = premerge(zone, pcp, &pfn, order, &pages);
			page = pfn_to_page(pfn);
			page->pcp_order = (unsigned char)merged;	/* for phase 2 */
			list_add_tail(&page->pcp_list, &batch);
			count -= pages;
			listed -= pages;
			pcp->count -= pages;
			moved += pages;
		} while (count > 0 && !list_empty(list));
	}

	spin_lock(&zone->lock);
	for (pos = batch.next, n = pos->next; pos != &batch; pos = n, n = pos->next) {
		struct page *page = list_entry(pos, struct page, pcp_list);
		unsigned long pfn = page_to_pfn(page);
		unsigned int order = page->pcp_order;

		list_del(&page->pcp_list);
		page->pcp_order = 0;
		pl_vt_path(VT_P_PCP_DRAIN);	/* the loop's share, as free_pcppages_bulk()'s */
		__free_one_page(page, pfn, zone, order, get_pfnblock_migratetype(page, pfn),
				FPI_NONE);
	}
	pcp_drain_finish(zone, pcp, count, moved);	/* pcp_owner's blocks beside it */
}
