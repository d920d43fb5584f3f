// SPDX-License-Identifier: MIT
/*
 * debug.c - the checker: walks every free list and every pageblock of a
 * machine and recounts every counter the allocator keeps, under each
 * zone->lock in turn. It trusts nothing it recounts: a pfn seen on two
 * lists, a block outside its zone, a count off by one are all reported.
 *
 * Checked per zone:
 *  - each listed block: head in the zone and the machine, pfn aligned to its
 *    order, PageBuddy with private == order, _refcount 0, pageblock type equal
 *    to the list's type, no page already seen on another list, tail pages
 *    not PageBuddy;
 *  - free_area[o].nr_free, mt_nr_free[] (mt_counts), NR_FREE_PAGES,
 *    NR_FREE_PAGES_BLOCKS, nr_pageblocks_mt[] (mt_counts_blocks),
 *    nr_free_highatomic (the HighAtomic lists), nr_reserved_highatomic
 *    (a pageblock's pages per HighAtomic pageblock), nr_isolate_pageblock;
 *  - each PCP list: blocks of the list's order, aligned, in the zone,
 *    _refcount 0, not PageBuddy, on no other list; pcp->count the sum;
 *  - pcp_owner: each owned chunk PagePCPBuddy with its list's order, in a
 *    block owned by that CPU; owned_count the sum; pageblock_owner[] and
 *    every pcp->owned[] agree; no PagePCPBuddy page outside an owned list;
 *  - pcp_block_economy: no page on an ordinary PCP list (owned lists only);
 *  - pcp_premerge: each PCP list head tagged with its CPU and order, and no
 *    tagged page anywhere else;
 *  - every PageBuddy page of the zone is a listed head;
 *  - no two free buddies were left unmerged where the kernel would merge.
 */
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"

#define MAX_REPORTS 20

struct checker {
	struct pl_machine *m;
	unsigned long *seen;	/* one bit per pfn that belongs to a free block */
	int errors;
	bool unreserved;	/* a highatomic reserve was ever given back */
};

static __printf(2, 3) void report(struct checker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ >= MAX_REPORTS)
		return;
	fprintf(stderr, "pl_check: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static bool test_and_set_seen(struct checker *c, unsigned long pfn)
{
	unsigned long bit = 1UL << (pfn % 64);
	bool was = c->seen[pfn / 64] & bit;

	c->seen[pfn / 64] |= bit;
	return was;
}

static int block_mt(const struct zone *zone, unsigned long pfn)
{
	unsigned int f = zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)];

	return (f & PB_migrate_isolate) ? MIGRATE_ISOLATE : (int)(f & PB_migratetype_mask);
}

static void check_block(struct checker *c, struct zone *zone, struct page *page,
			unsigned int order, int mt)
{
	struct pl_machine *m = c->m;
	unsigned long pfn, nr = 1UL << order;

	if (!pl_page_in_machine(m, page)) {
		report(c, "zone %s order %u type %s: listed page %p outside the memmap", zone->name,
		       order, migratetype_names[mt], (void *)page);
		return;
	}
	pfn = (unsigned long)(page - m->mem_map);
	if (!IS_ALIGNED(pfn, nr) || pfn < zone->zone_start_pfn || pfn + nr > zone_end_pfn(zone))
		report(c, "pfn %#lx order %u: misaligned or outside zone %s", pfn, order, zone->name);
	if (!PageBuddy(page) || buddy_order(page) != order)
		report(c, "pfn %#lx on order-%u list: PageBuddy=%d private=%lu", pfn, order,
		       PageBuddy(page), page->private);
	if (page_ref_count(page) != 0)
		report(c, "free pfn %#lx has refcount %d", pfn, page_ref_count(page));
	for (unsigned long p = pfn; p < pfn + nr && p < zone_end_pfn(zone);
	     p += pageblock_nr_pages) {
		if (block_mt(zone, p) != mt)
			report(c, "pfn %#lx order %u on %s list, pageblock type %s", pfn, order,
			       migratetype_names[mt], migratetype_names[block_mt(zone, p)]);
		if (order < pageblock_order)
			break;
	}
	for (unsigned long i = 0; i < nr && pfn + i < m->max_pfn; i++) {
		if (test_and_set_seen(c, pfn + i)) {
			report(c, "pfn %#lx (block %#lx order %u) is on two free lists", pfn + i,
			       pfn, order);
			break;
		}
		if (i && PageBuddy(&m->mem_map[pfn + i]))
			report(c, "tail pfn %#lx of free block %#lx is PageBuddy", pfn + i, pfn);
	}
}

/* Two free buddies of one order the kernel would have merged. */
static void check_merged(struct checker *c, struct zone *zone, unsigned long pfn,
			 unsigned int order)
{
	struct pl_machine *m = c->m;
	unsigned long buddy_pfn = pfn ^ (1UL << order);
	struct page *buddy;
	int mt, bmt;

	if (order >= MAX_PAGE_ORDER || buddy_pfn < pfn || !zone_spans_pfn(zone, buddy_pfn))
		return;
	buddy = &m->mem_map[buddy_pfn];
	if (!PageBuddy(buddy) || buddy_order(buddy) != order)
		return;
	mt = block_mt(zone, pfn);
	bmt = block_mt(zone, buddy_pfn);
	if (order >= pageblock_order && mt != bmt &&
	    (!migratetype_is_mergeable(mt) || !migratetype_is_mergeable(bmt)))
		return;
	/*
	 * Across pageblocks the kernel's merge depends on history too: a
	 * wholly free highatomic pageblock given back by
	 * unreserve_highatomic_pageblock() is retagged where it lies, not
	 * merged with a free buddy block (nor is it in the kernel).
	 */
	if (order >= pageblock_order && c->unreserved)
		return;
	report(c, "free buddies %#lx and %#lx of order %u were not merged", pfn, buddy_pfn, order);
}

/* pcp_owner's owned blocks of one CPU. Return: pages on its owned lists. */
static long check_owned(struct checker *c, struct zone *zone, unsigned int cpu)
{
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
	struct pl_machine *m = c->m;
	long pages = 0;

	/* Records naming another owner are stale (pcp_owner.c): the chunk checks
	 * below make sure they hold nothing. */
	if (pcp->nr_owned && !zone->pageblock_owner)
		report(c, "cpu %u owns pageblocks of %s without pcp_owner", cpu, zone->name);
	for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++) {
		for (unsigned int order = 0; order <= pageblock_order; order++) {
			struct list_head *pos;

			list_for_each(pos, &pcp->owned_free[mt][order]) {
				struct page *page = list_entry(pos, struct page, pcp_list);
				unsigned long pfn = (unsigned long)(page - m->mem_map), idx;

				if (!pl_page_in_machine(m, page) || !zone_spans_pfn(zone, pfn)) {
					report(c, "cpu %u owned chunk %p outside zone %s", cpu,
					       (void *)page, zone->name);
					break;
				}
				idx = pfn_to_pageblock_idx(zone, pfn);
				if (!PagePCPBuddy(page) || page->private != order ||
				    !IS_ALIGNED(pfn, 1UL << order) || page_ref_count(page))
					report(c, "cpu %u owned chunk pfn %#lx order %u: type %#x "
						  "private %lu refcount %d", cpu, pfn, order,
					       page->page_type, page->private, page_ref_count(page));
				if (!zone->pageblock_owner || zone->pageblock_owner[idx] != (int)cpu)
					report(c, "cpu %u owned chunk pfn %#lx in a block it does not own",
					       cpu, pfn);
				for (unsigned long i = 0; i < (1UL << order); i++)
					if (test_and_set_seen(c, pfn + i)) {
						report(c, "owned chunk pfn %#lx is also on another list",
						       pfn + i);
						break;
					}
				pages += 1L << order;
			}
		}
	}
	if (pages != pcp->owned_count)
		report(c, "cpu %u zone %s: owned_count %d, owned lists hold %ld", cpu, zone->name,
		       pcp->owned_count, pages);
	return pages;
}

static void check_pcp(struct checker *c, struct zone *zone, unsigned int cpu)
{
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];
	struct pl_machine *m = c->m;
	long count = 0;

	for (unsigned int pindex = 0; pindex < NR_PCP_LISTS; pindex++) {
		unsigned int order = pindex_to_order(pindex);
		unsigned long n = 0;
		struct list_head *pos;

		list_for_each(pos, &pcp->lists[pindex]) {
			struct page *page = list_entry(pos, struct page, pcp_list);
			unsigned long pfn;

			if (!pl_page_in_machine(m, page)) {
				report(c, "cpu %u zone %s pcp list %u: page %p outside the memmap",
				       cpu, zone->name, pindex, (void *)page);
				break;
			}
			pfn = (unsigned long)(page - m->mem_map);
			if (!IS_ALIGNED(pfn, 1UL << order) || !zone_spans_pfn(zone, pfn))
				report(c, "cpu %u pcp pfn %#lx order %u: misaligned or outside %s",
				       cpu, pfn, order, zone->name);
			if (PageBuddy(page) || page_ref_count(page) != 0)
				report(c, "cpu %u pcp pfn %#lx: PageBuddy=%d refcount=%d", cpu, pfn,
				       PageBuddy(page), page_ref_count(page));
			if (m->config.design.pcp_premerge &&
			    (page->pcp_cpu1 != cpu + 1 || page->pcp_order != order))
				report(c, "cpu %u pcp pfn %#lx order %u: pcp_premerge tag cpu+1=%u order %u",
				       cpu, pfn, order, page->pcp_cpu1, page->pcp_order);
			for (unsigned long i = 0; i < (1UL << order) && pfn + i < m->max_pfn; i++) {
				if (test_and_set_seen(c, pfn + i)) {
					report(c, "cpu %u pcp pfn %#lx is also on another list", cpu,
					       pfn + i);
					break;
				}
			}
			count += 1L << order;
			if (++n > m->max_pfn) {
				report(c, "cpu %u pcp list %u loops", cpu, pindex);
				break;
			}
		}
	}
	if ((m->config.design.pcp_block_economy || m->config.design.economy_batch ||
	     m->config.design.economy_ramp) && count)
		report(c, "cpu %u zone %s: %ld unowned pages on PCP lists under pcp_block_economy",
		       cpu, zone->name, count);
	count += check_owned(c, zone, cpu);
	if (count != pcp->count)
		report(c, "cpu %u zone %s: pcp->count %d, lists hold %ld", cpu, zone->name,
		       pcp->count, count);
	/*
	 * pcp->high below high_min is legal: the kernel's own snapshots show
	 * it (a loaded state keeps them), and nr_pcp_high() clamps on use.
	 * Above high_max too where a PCP owns blocks (seed 003, the block
	 * economy): decay_pcp_high() sets it from pcp->count, which owned
	 * blocks can take past high_max; it is clamped again on use.
	 */
	if (pcp->high < 0 ||
	    (pcp->high > pcp->high_max && !m->config.design.pcp_owner &&
	     !m->config.design.pcp_block_economy && !m->config.design.economy_batch &&
	     !m->config.design.economy_ramp))
		report(c, "cpu %u zone %s: pcp->high %d outside [0, %d]", cpu, zone->name,
		       pcp->high, pcp->high_max);
}

static bool pcp_owns(const struct per_cpu_pages *pcp, unsigned long idx)
{
	for (int i = 0; i < pcp->nr_owned; i++)
		if (pcp->owned[i].idx == idx)
			return true;
	return false;
}

/*
 * A zone counter as the free lists must match it: the counter plus every
 * CPU's diff (not clamped at 0, unlike zone_page_state_snapshot()). No
 * diff may pass 125, the largest threshold (one may pass its CPU's own
 * for a while after the thresholds were lowered, as in the kernel).
 */
static long zone_stat_exact(struct checker *c, const struct zone *zone, enum zone_stat_item item)
{
	long x = zone->vm_stat[item];

	if (!zone->per_cpu_zonestats)
		return x;
	for (unsigned int cpu = 0; cpu < c->m->nr_cpus; cpu++) {
		const struct per_cpu_zonestat *pz = &zone->per_cpu_zonestats[cpu];

		if (abs(pz->vm_stat_diff[item]) > 125)
			report(c, "zone %s cpu %u: vm_stat_diff[%d] %d beyond any stat_threshold",
			       zone->name, cpu, (int)item, pz->vm_stat_diff[item]);
		x += pz->vm_stat_diff[item];
	}
	return x;
}

static void check_zone(struct checker *c, struct zone *zone)
{
	struct pl_machine *m = c->m;
	bool mt_counts = m->config.design.mt_counts;
	unsigned long free_pages = 0, block_pages = 0, heads = 0, buddies = 0, ha_free = 0;
	unsigned long pb_count[MIGRATE_TYPES] = { 0 }, ha_blocks = 0;

	for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
		struct free_area *area = &zone->free_area[order];
		unsigned long total = 0;

		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			unsigned long count = 0;
			struct list_head *pos;

			list_for_each(pos, &area->free_list[mt]) {
				struct page *page = list_entry(pos, struct page, buddy_list);

				check_block(c, zone, page, order, mt);
				count++;
				if (mt == MIGRATE_HIGHATOMIC)
					ha_free += 1UL << order;
				if (!is_migrate_isolate(mt)) {
					free_pages += 1UL << order;
					if (order >= pageblock_order)
						block_pages += 1UL << order;
				}
				if (count > m->max_pfn) {
					report(c, "zone %s order %u type %s: list loops", zone->name,
					       order, migratetype_names[mt]);
					break;
				}
			}
			if (mt_counts && area->mt_nr_free[mt] != count)
				report(c, "zone %s order %u: mt_nr_free[%s] %lu, list holds %lu",
				       zone->name, order, migratetype_names[mt], area->mt_nr_free[mt],
				       count);
			total += count;
		}
		if (area->nr_free != total)
			report(c, "zone %s order %u: nr_free %lu, lists hold %lu", zone->name, order,
			       area->nr_free, total);
		heads += total;
	}
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		check_pcp(c, zone, cpu);
	if (zone_stat_exact(c, zone, NR_FREE_PAGES) != (long)free_pages)
		report(c, "zone %s: NR_FREE_PAGES %ld (counter %ld + CPU diffs), lists hold %lu",
		       zone->name, zone_stat_exact(c, zone, NR_FREE_PAGES),
		       zone->vm_stat[NR_FREE_PAGES], free_pages);
	if (zone_stat_exact(c, zone, NR_FREE_PAGES_BLOCKS) != (long)block_pages)
		report(c, "zone %s: NR_FREE_PAGES_BLOCKS %ld (counter %ld + CPU diffs), lists hold %lu",
		       zone->name, zone_stat_exact(c, zone, NR_FREE_PAGES_BLOCKS),
		       zone->vm_stat[NR_FREE_PAGES_BLOCKS], block_pages);

	for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone); pfn++) {
		struct page *page = &m->mem_map[pfn];

		if (page_zonenum(page) != (int)zone->zone_idx)
			report(c, "pfn %#lx in zone %s has zone number %d", pfn, zone->name,
			       page_zonenum(page));
		/* pagetypeinfo's walk: from the zone's first pfn, one per pageblock */
		if (((pfn - zone->zone_start_pfn) & (pageblock_nr_pages - 1)) == 0 &&
		    pl_pfn_section_online(m, pfn)) {
			pb_count[block_mt(zone, pfn)]++;
			/* the type under an isolate bit counts for the reserve */
			ha_blocks += (zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)] &
				      PB_migratetype_mask) == MIGRATE_HIGHATOMIC;
		}
		if (PagePCPBuddy(page) && !(c->seen[pfn / 64] & (1UL << (pfn % 64))))
			report(c, "PagePCPBuddy pfn %#lx is on no owned list", pfn);
		if (page->pcp_cpu1 && (PageBuddy(page) || !(c->seen[pfn / 64] & (1UL << (pfn % 64)))))
			report(c, "pfn %#lx carries pcp_premerge tag cpu+1=%u but is on no PCP list",
			       pfn, page->pcp_cpu1);
		if (zone->pageblock_owner && (pfn & (pageblock_nr_pages - 1)) == 0) {
			int owner = zone->pageblock_owner[pfn_to_pageblock_idx(zone, pfn)];

			if (owner >= (int)m->nr_cpus || owner < PB_OWNER_FRAGMENT ||
			    (owner >= 0 && !pcp_owns(&zone->per_cpu_pageset[owner],
						     pfn_to_pageblock_idx(zone, pfn))))
				report(c, "pageblock at pfn %#lx names owner %d, who does not own it",
				       pfn, owner);
		}
		if (!PageBuddy(page))
			continue;
		buddies++;
		if (!(c->seen[pfn / 64] & (1UL << (pfn % 64))) || page_ref_count(page))
			report(c, "PageBuddy pfn %#lx is on no free list or has a refcount", pfn);
		check_merged(c, zone, pfn, buddy_order(page));
	}
	if (buddies != heads)
		report(c, "zone %s: %lu PageBuddy pages, %lu listed blocks", zone->name, buddies,
		       heads);
	for (int mt = 0; m->config.design.mt_counts_blocks && mt < MIGRATE_TYPES; mt++)
		if (zone->nr_pageblocks_mt[mt] != pb_count[mt])
			report(c, "zone %s: nr_pageblocks_mt[%s] %lu, pageblocks say %lu",
			       zone->name, migratetype_names[mt], zone->nr_pageblocks_mt[mt],
			       pb_count[mt]);
	if (zone->nr_free_highatomic != ha_free)
		report(c, "zone %s: nr_free_highatomic %lu, HighAtomic lists hold %lu", zone->name,
		       zone->nr_free_highatomic, ha_free);
	if (zone->nr_reserved_highatomic != ha_blocks * pageblock_nr_pages)
		report(c, "zone %s: nr_reserved_highatomic %lu, %lu HighAtomic pageblocks",
		       zone->name, zone->nr_reserved_highatomic, ha_blocks);
	if (zone->nr_isolate_pageblock != pb_count[MIGRATE_ISOLATE])
		report(c, "zone %s: nr_isolate_pageblock %lu, %lu pageblocks isolated", zone->name,
		       zone->nr_isolate_pageblock, pb_count[MIGRATE_ISOLATE]);
}

int pl_check_zones(struct pl_machine *m)
{
	struct checker c = { .m = m };
	unsigned long ev[NR_PL_VM_EVENTS];
	struct zone *zone;

	pl_events_sum(m, ev);
	c.unreserved = ev[PL_EV_HIGHATOMIC_UNRESERVE] != 0;
	c.seen = calloc((m->max_pfn + 63) / 64, sizeof(unsigned long));
	if (!c.seen) {
		fprintf(stderr, "pl_check: out of memory\n");
		return 1;
	}
	/* Lock order as everywhere: every pcp->lock of the zone, then zone->lock. */
	for_each_populated_zone(zone, m) {
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			spin_lock(&zone->per_cpu_pageset[cpu].lock);
		spin_lock(&zone->lock);
		check_zone(&c, zone);
		spin_unlock(&zone->lock);
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			spin_unlock(&zone->per_cpu_pageset[cpu].lock);
	}
	free(c.seen);
	if (c.errors > MAX_REPORTS)
		fprintf(stderr, "pl_check: %d more\n", c.errors - MAX_REPORTS);
	return c.errors;
}

void __pl_debug_check(struct pl_machine *m, const char *where)
{
	int errors = pl_check_zones(m);

	if (errors) {
		fprintf(stderr, "pl_check: %d inconsistencies after %s\n", errors, where);
		abort();
	}
}

/*
 * PL_WARN_ON_PAGE() fired (base.h): the kernel's dump_page() in one line
 * (pfn, the order a free head records, flags, page type, refcount, the
 * pageblock's migratetype) with the rule the check site expects.
 */
void pl_warn_on_page_fail(const struct page *page, const char *rule, const char *file, int line,
			  const char *func, const char *cond)
{
	unsigned long pfn = page_to_pfn(page);
	char what[256];

	snprintf(what, sizeof(what), "VM_BUG_ON_PAGE(%s): %s; page pfn %#lx order %u flags %#lx "
		 "type %#x refcount %d pageblock migratetype %d", cond, rule, pfn, buddy_order(page),
		 page_flags(page), (unsigned int)READ_ONCE(page->page_type), page_ref_count(page),
		 pfn_valid(pfn) ? get_pfnblock_migratetype(page, pfn) : -1);
	pl_warn_on_fail(file, line, func, what);
}
