// SPDX-License-Identifier: MIT
/*
 * state.c - the supported ways to bring a machine from its boot state to a
 * real kernel's state (used by src/trace/state.c). pagelab's
 * own: the kernel gets there by running, pagelab by these steps:
 *
 *   pl_zone_take_all_free()      every free page becomes an allocated
 *                                order-0 page (as if split_page()d);
 *   pl_zone_set_pageblock_type() a pageblock's migratetype, free pages in
 *                                it moved to the matching lists;
 *   pl_zone_give_free_block()    2^order such pages back as one free block;
 *   pl_join_pages()              2^order such pages become one allocated
 *                                block (split_page()'s inverse), so a trace
 *                                can free it with its order;
 *   pl_zone_set_managed(), pl_zone_set_watermarks(),
 *   pl_pcp_set_high_batch()      values as reported;
 *   pl_zone_online_pages()       memory hotplug's accounting as a trace
 *                                onlines memory (online_pages());
 *   pl_zone_set_section_online() a memory section offline as the snapshot
 *                                had it, or online as hotplug makes it.
 *
 * Each keeps the checker's invariants: free lists, nr_free, NR_FREE_PAGES,
 * NR_FREE_PAGES_BLOCKS and (mt_counts) the per-type counts stay exact.
 * Context: each takes the locks it needs; no other thread may allocate on
 * the zone meanwhile (loading happens before a run).
 */
#include "internal.h"

/* An allocated order-0 page, as split_page() leaves one. */
static bool page_is_loose(const struct page *page)
{
	return !PageBuddy(page) && !PagePCPBuddy(page) && page_ref_count(page) == 1 &&
	       !page->alloc_order && !PageHead(page) && !PageTail(page) && !PageReserved(page);
}

/**
 * pl_zone_take_all_free() - take every free block of @zone off its free
 * list; each of its pages becomes an allocated order-0 page (_refcount 1).
 * PCP pages are not touched: drain first to take them too.
 * Return: the number of pages taken.
 */
unsigned long pl_zone_take_all_free(struct zone *zone)
{
	unsigned long taken = 0;

	spin_lock(&zone->lock);
	for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			struct list_head *list = &zone->free_area[order].free_list[mt];

			while (!list_empty(list)) {
				struct page *page = list_first_entry(list, struct page, buddy_list);

				del_page_from_free_list(page, zone, order, mt);
				for (unsigned long i = 0; i < (1UL << order); i++) {
					set_page_count(&page[i], 1);
					page[i].alloc_order = 0;
				}
				taken += 1UL << order;
			}
		}
	}
	spin_unlock(&zone->lock);
	return taken;
}

/**
 * pl_zone_set_pageblock_type() - make the pageblock holding @pfn of @zone
 * @mt (Unmovable, Movable or Reclaimable), moving the free blocks inside it
 * to the @mt lists as the kernel's move_freepages_block() does.
 * Return: 0, or -EINVAL (pfn outside the zone, bad type, isolated block).
 */
int pl_zone_set_pageblock_type(struct zone *zone, unsigned long pfn, int mt)
{
	unsigned long start = pfn & ~(pageblock_nr_pages - 1);
	int old_mt;

	if (!zone_spans_pfn(zone, pfn) || mt < 0 || mt >= MIGRATE_PCPTYPES) {
		pl_warn_ratelimited("pl_zone_set_pageblock_type: pfn %#lx or type %d invalid", pfn, mt);
		return -EINVAL;
	}
	spin_lock(&zone->lock);
	old_mt = get_pfnblock_migratetype(pfn_to_page(start), start);
	if (is_migrate_isolate(old_mt)) {
		spin_unlock(&zone->lock);
		return -EINVAL;
	}
	if (old_mt != mt) {
		__move_freepages_block(zone, start, old_mt, mt);
		set_pageblock_migratetype(pfn_to_page(start), mt);
	}
	spin_unlock(&zone->lock);
	return 0;
}

/**
 * pl_zone_give_free_block() - return the 2^@order pages from @pfn, each an
 * allocated order-0 page with _refcount 1, to the buddy as one block (it
 * merges with a free buddy as any free does). The block goes on the list
 * of its pageblock's type, at the tail (as memblock_free_all() frees).
 * Return: 0, or -EINVAL with nothing changed if a page is not such a page,
 * the range is misaligned or leaves the zone.
 */
int pl_zone_give_free_block(struct zone *zone, unsigned long pfn, unsigned int order)
{
	unsigned long nr = 1UL << order;
	struct page *page;

	if (order > MAX_PAGE_ORDER || !IS_ALIGNED(pfn, nr) || !zone_spans_pfn(zone, pfn) ||
	    !zone_spans_pfn(zone, pfn + nr - 1))
		goto bad;
	page = pfn_to_page(pfn);
	for (unsigned long i = 0; i < nr; i++)
		if (!page_is_loose(&page[i]))
			goto bad;
	for (unsigned long i = 0; i < nr; i++) {
		set_page_count(&page[i], 0);
		page[i].flags &= ~PAGE_FLAGS_RESET_AT_FREE;
	}
	/* larger than a pageblock: each pageblock with its own type, as split_large_buddy() */
	spin_lock(&zone->lock);
	for (unsigned long off = 0; off < nr; off += min(nr, pageblock_nr_pages)) {
		unsigned int o = order > pageblock_order ? pageblock_order : order;

		__free_one_page(page + off, pfn + off, zone, o,
				get_pfnblock_migratetype(page + off, pfn + off), FPI_TO_TAIL);
	}
	spin_unlock(&zone->lock);
	return 0;
bad:
	pl_warn_ratelimited("pl_zone_give_free_block: pfn %#lx order %u is not a range of "
			    "allocated order-0 pages of zone %s", pfn, order, zone->name);
	return -EINVAL;
}

/**
 * pl_join_pages() - make the 2^@order allocated order-0 pages from @page
 * (each _refcount 1, none compound) one allocated block of @order, as
 * alloc_pages(gfp, @order) without __GFP_COMP would have returned it: the
 * inverse of split_page(). pagelab's own, for loaded states.
 * Return: 0, or -EINVAL with nothing changed.
 */
int pl_join_pages(struct page *page, unsigned int order)
{
	struct pl_machine *m = current_machine();
	unsigned long nr = 1UL << order, pfn;

	if (!m || order > MAX_PAGE_ORDER || !pl_page_in_machine(m, page))
		goto bad;
	pfn = page_to_pfn(page);
	if (!IS_ALIGNED(pfn, nr) || pfn + nr > m->max_pfn)
		goto bad;
	for (unsigned long i = 0; i < nr; i++)
		if (!page_is_loose(&page[i]) || page_zonenum(&page[i]) != page_zonenum(page))
			goto bad;
	for (unsigned long i = 1; i < nr; i++)
		set_page_count(&page[i], 0);
	page->alloc_order = (unsigned char)order;
	return 0;
bad:
	pl_warn_ratelimited("pl_join_pages: %p order %u is not a run of allocated order-0 pages",
			    (const void *)page, order);
	return -EINVAL;
}

/**
 * pl_zone_set_watermarks() - set @zone's min/low/high/promo watermarks to
 * the values a kernel reported (zoneinfo), then recompute every zone's
 * pageset high_min/high_max from them as the kernel does.
 */
void pl_zone_set_watermarks(struct zone *zone, const unsigned long wmark[NR_WMARK])
{
	for (int w = 0; w < NR_WMARK; w++)
		zone->_watermark[w] = wmark[w];
	zone->watermark_boost = 0;
	pl_setup_zone_pagesets(zone->machine);
	pl_refresh_zone_stat_thresholds(zone->machine);
}

/**
 * pl_zone_set_managed() - @zone's managed_pages as a kernel reported them
 * (at most its spanned pages: the rest stays allocated, as reserved memory
 * does), then every zone's lowmem_reserve[] and the pagesets recomputed.
 * Watermarks are not: set them with pl_zone_set_watermarks().
 * Return: 0 or -EINVAL.
 */
int pl_zone_set_managed(struct zone *zone, unsigned long managed)
{
	if ((!zone || !managed || managed > zone->spanned_pages) &&
	    pl_arg_refused(__func__, "NULL zone, or managed pages not in 1..spanned"))
		return -EINVAL;
	zone->managed_pages = managed;
	zone->present_pages = max(zone->present_pages, managed);
	setup_per_zone_lowmem_reserve(zone->machine);
	pl_setup_zone_pagesets(zone->machine);
	pl_refresh_zone_stat_thresholds(zone->machine);
	return 0;
}

/**
 * pl_zone_online_pages() - memory hotplug's accounting of @nr_pages of
 * @zone coming online, as online_pages() does it: managed_pages grows, then
 * init_per_zone_wmark_min() sets every zone's watermarks and vmstat
 * thresholds (refresh_zone_stat_thresholds()) again (from the
 * machine's min_free_kbytes, which stays: on the traced VMs it is
 * khugepaged's recommended value, above the sqrt formula) and
 * zone_pcp_update() the pagesets' batch, high_min and high_max; each
 * pcp->high stays as it is. The pages themselves are the caller's to free
 * (a trace shows them as frees of MAX_PAGE_ORDER blocks).
 * Return: 0, or -EINVAL (none, or more than the zone spans) with a
 * rate-limited warning and nothing changed.
 */
int pl_zone_online_pages(struct zone *zone, unsigned long nr_pages)
{
	struct pl_machine *m = zone->machine;

	if (!nr_pages || zone->managed_pages + nr_pages > zone->spanned_pages) {
		pl_warn_ratelimited("pl_zone_online_pages: %lu pages: zone %s has %lu managed of %lu",
				    nr_pages, zone->name, zone->managed_pages, zone->spanned_pages);
		return -EINVAL;
	}
	zone->managed_pages += nr_pages;
	zone->present_pages = max(zone->present_pages, zone->managed_pages);
	pl_setup_per_zone_wmarks(m);
	pl_refresh_zone_stat_thresholds(m);	/* init_per_zone_wmark_min() does both */
	pl_zone_pcp_update(m);
	return 0;
}

/**
 * pl_zone_set_section_online() - mark the 128 MiB memory section holding
 * @pfn of @zone offline or online. pfn_to_online_page() fails on an offline
 * section, so pagetypeinfo's "Number of blocks" walk skips it, and so does
 * nr_pageblocks_mt[]: a real kernel's snapshot counts only the online
 * pageblocks, and hotplug adds a section's pageblocks as it onlines it.
 * Only the marking and the counts change: the caller keeps the section's
 * pages allocated while it is offline.
 * Return: 0 (also when nothing changes), or -EINVAL with a rate-limited
 * warning and nothing changed (@pfn outside @zone).
 * Context: takes zone->lock.
 */
int pl_zone_set_section_online(struct zone *zone, unsigned long pfn, bool online)
{
	struct pl_machine *m = zone->machine;
	unsigned long s = pfn >> PFN_SECTION_SHIFT, start, end;

	if (!zone_spans_pfn(zone, pfn) || s >= m->nr_sections) {
		pl_warn_ratelimited("pl_zone_set_section_online: pfn %#lx is not in zone %s", pfn,
				    zone->name);
		return -EINVAL;
	}
	if (pl_pfn_section_online(m, pfn) == online)
		return 0;
	/* the counts follow the walk: from zone_start_pfn, one per pageblock */
	start = zone->zone_start_pfn;
	if ((s << PFN_SECTION_SHIFT) > start)
		start += ((s << PFN_SECTION_SHIFT) - start + pageblock_nr_pages - 1) &
			 ~(pageblock_nr_pages - 1);
	end = min((s + 1) << PFN_SECTION_SHIFT, zone_end_pfn(zone));
	spin_lock(&zone->lock);
	for (unsigned long p = start; p < end; p += pageblock_nr_pages) {
		unsigned long *nr = &zone->nr_pageblocks_mt[get_pageblock_migratetype(pfn_to_page(p))];

		WRITE_ONCE(*nr, online ? *nr + 1 : *nr - 1);
	}
	if (online)
		m->section_online[s / 64] |= 1UL << (s % 64);
	else
		m->section_online[s / 64] &= ~(1UL << (s % 64));
	spin_unlock(&zone->lock);
	return 0;
}

/**
 * pl_pcp_set_high_batch() - CPU @cpu's pcp of @zone gets the reported
 * @high and @batch. @high may be below high_min (the kernel's snapshots
 * show it; auto-tuning moves it back) but not above high_max.
 * Return: 0 or -EINVAL (bad cpu, negative values, high above high_max).
 */
int pl_pcp_set_high_batch(struct zone *zone, unsigned int cpu, int high, int batch)
{
	struct per_cpu_pages *pcp;

	if (!zone && pl_arg_refused(__func__, "NULL zone"))
		return -EINVAL;
	if (!zone->per_cpu_pageset || cpu >= zone->machine->nr_cpus || high < 0 || batch < 1) {
		pl_warn_ratelimited("pl_pcp_set_high_batch: cpu %u high %d batch %d invalid", cpu,
				    high, batch);
		return -EINVAL;
	}
	pcp = &zone->per_cpu_pageset[cpu];
	spin_lock(&pcp->lock);
	if (high > pcp->high_max) {
		spin_unlock(&pcp->lock);
		return -EINVAL;
	}
	pcp->high = high;
	pcp->batch = batch;
	spin_unlock(&pcp->lock);
	return 0;
}
