// SPDX-License-Identifier: MIT
/*
 * vmstat.c - /proc/buddyinfo, /proc/pagetypeinfo and the page-allocator
 * part of /proc/zoneinfo, byte for byte in the formats of mm/vmstat.c, so
 * that existing scripts parse them.
 *
 * pagetypeinfo's free-block section comes two ways. The baseline walks each
 * free list under zone->lock, stopping at 100000 entries and printing
 * ">100000", dropping and retaking the lock between orders as the kernel
 * does. With mt_counts (seed 002's patch 2, exactly) the counts come from
 * mt_nr_free[] without the lock. The "Number of blocks type" section walks
 * every pageblock under zone->lock in both, as the patch leaves it; only
 * pagelab's own extension mt_counts_blocks (not in seed 002) reads it from
 * nr_pageblocks_mt[] without the lock. All print the same text while every
 * count is below the cap.
 *
 * Every report NUL-terminates the caller's buffer (one byte is kept for it),
 * returns -ENOSPC with a terminated prefix when it does not fit, and with
 * buf NULL and size 0 returns the length it needs; the _file variants
 * measure, allocate and write.
 *
 * Numbers are formatted by hand (seq_put_num, base/seq.h) rather than with
 * printf: the mt_counts read is a few hundred numbers and printf would
 * dominate it. /proc/vmstat is in vmstat_show.c.
 */
#include <stdlib.h>
#include <string.h>
#include "internal.h"
#include "validate.h"
#include "base/seq.h"

#define PAGETYPEINFO_CAP 100000UL

long pl_show_to_file(struct pl_machine *m, long (*show)(struct pl_machine *, char *, size_t),
		     FILE *f)
{
	long need, n = -ENOSPC;
	char *buf = NULL;

	if (pl_check_ptr(__func__, f, "FILE"))
		return -EINVAL;
	need = show(m, NULL, 0);
	if (need < 0)	/* refused (and warned about) by the report */
		return need;

	/* The report may grow between the measure and the write: retry larger. */
	for (int tries = 0; n == -ENOSPC && need >= 0 && tries < 8; tries++) {
		size_t size = (size_t)need + 1 + ((size_t)need >> 3) + 256;
		char *nbuf = realloc(buf, size);

		if (!nbuf) {
			free(buf);
			return -ENOMEM;
		}
		buf = nbuf;
		n = show(m, buf, size);
		need = (long)size * 2;
	}
	if (n >= 0 && fwrite(buf, 1, (size_t)n, f) != (size_t)n)
		n = -EIO;
	free(buf);
	return n;
}

long pl_show_buddyinfo_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_buddyinfo, f);
}

long pl_show_pagetypeinfo_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_pagetypeinfo, f);
}

long pl_show_zoneinfo_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_zoneinfo, f);
}

long pl_show_buddyinfo(struct pl_machine *m, char *buf, size_t size)
{
	struct pl_seq s = { .buf = buf, .size = size };
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;

	for_each_populated_zone(zone, m) {
		spin_lock(&zone->lock);
		seq_puts(&s, "Node 0, zone ");
		seq_put_str(&s, zone->name, 8);
		seq_putc(&s, ' ');
		for (int order = 0; order < NR_PAGE_ORDERS; order++) {
			seq_put_num(&s, NULL, zone->free_area[order].nr_free, 6);
			seq_putc(&s, ' ');
		}
		seq_putc(&s, '\n');
		spin_unlock(&zone->lock);
	}
	return pl_seq_finish(&s);
}

/* The kernel's loop: count up to the cap, under zone->lock. */
static unsigned long walk_free_list(struct list_head *head, bool *overflow)
{
	unsigned long freecount = 0;
	struct list_head *curr;

	*overflow = false;
	list_for_each(curr, head) {
		if (++freecount >= PAGETYPEINFO_CAP) {
			*overflow = true;
			break;
		}
	}
	return freecount;
}

static void pagetypeinfo_showfree_print(struct pl_seq *s, struct zone *zone, bool mt_counts)
{
	for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
		pl_vt_path(VT_P_SEQ_LINE);
		seq_puts(s, "Node    0, zone ");
		seq_put_str(s, zone->name, 8);
		seq_puts(s, ", type ");
		seq_put_str(s, migratetype_names[mt], 12);
		seq_putc(s, ' ');
		for (int order = 0; order < NR_PAGE_ORDERS; order++) {
			struct free_area *area = &zone->free_area[order];
			unsigned long freecount;
			bool overflow;

			if (mt_counts) {
				freecount = READ_ONCE(area->mt_nr_free[mt]);
				overflow = freecount >= PAGETYPEINFO_CAP;
				if (overflow)
					freecount = PAGETYPEINFO_CAP;
			} else {
				freecount = walk_free_list(&area->free_list[mt], &overflow);
				pl_vt_paths(VT_P_LIST_ENTRY, freecount);
				/* The kernel drops the lock and reschedules between orders. */
				spin_unlock(&zone->lock);
				spin_lock(&zone->lock);
			}
			seq_put_num(s, overflow ? ">" : NULL, freecount, 6);
			seq_putc(s, ' ');
		}
		seq_putc(s, '\n');
	}
}

static void pagetypeinfo_showblockcount_print(struct pl_seq *s, struct zone *zone,
					      bool o1_blocks)
{
	unsigned long count[MIGRATE_TYPES] = { 0 };

	if (o1_blocks) {
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			count[mt] = READ_ONCE(zone->nr_pageblocks_mt[mt]);
	} else {
		/*
		 * get_pageblock_migratetype() of each block, read straight from
		 * the zone's flags (the pfns are the zone's own); the section's
		 * online bit (pfn_to_online_page()) is looked up once per section.
		 */
		unsigned long section = ~0UL;
		bool online = false;

		for (unsigned long pfn = zone->zone_start_pfn; pfn < zone_end_pfn(zone);
		     pfn += pageblock_nr_pages) {
			if (pfn >> PFN_SECTION_SHIFT != section) {
				section = pfn >> PFN_SECTION_SHIFT;
				online = pl_pfn_section_online(zone->machine, pfn);
			}
			if (online)
				count[pb_flags_to_mt(READ_ONCE(zone->pageblock_flags[
					pfn_to_pageblock_idx(zone, pfn)]))]++;
		}
		pl_vt_paths(VT_P_PAGEBLOCK, zone->spanned_pages >> pageblock_order);
	}
	seq_puts(s, "Node 0, zone ");
	seq_put_str(s, zone->name, 8);
	seq_putc(s, ' ');
	for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
		seq_put_num(s, NULL, count[mt], 12);
		seq_putc(s, ' ');
	}
	seq_putc(s, '\n');
}

long pl_show_pagetypeinfo(struct pl_machine *m, char *buf, size_t size)
{
	struct pl_seq s = { .buf = buf, .size = size };
	bool mt_counts, o1_blocks;
	struct pl_this saved = pl_this;
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;
	mt_counts = m->config.design.mt_counts;
	o1_blocks = m->config.design.mt_counts_blocks;

	pl_this.machine = m; /* pfn_to_page() below is relative to this machine */
	seq_puts(&s, "Page block order: ");
	seq_put_num(&s, NULL, pageblock_order, 0);
	seq_puts(&s, "\nPages per block:  ");
	seq_put_num(&s, NULL, pageblock_nr_pages, 0);
	seq_puts(&s, "\n\n");

	seq_put_str(&s, "Free pages count per migrate type at order", -43);
	seq_putc(&s, ' ');
	for (int order = 0; order < NR_PAGE_ORDERS; order++) {
		seq_put_num(&s, NULL, (unsigned long)order, 6);
		seq_putc(&s, ' ');
	}
	seq_putc(&s, '\n');
	for_each_populated_zone(zone, m) {
		if (mt_counts) {
			pagetypeinfo_showfree_print(&s, zone, true);
			continue;
		}
		spin_lock(&zone->lock);
		pagetypeinfo_showfree_print(&s, zone, false);
		spin_unlock(&zone->lock);
	}

	seq_putc(&s, '\n');
	seq_put_str(&s, "Number of blocks type ", -23);
	for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
		seq_put_str(&s, migratetype_names[mt], 12);
		seq_putc(&s, ' ');
	}
	seq_putc(&s, '\n');
	for_each_populated_zone(zone, m) {
		if (!o1_blocks)
			spin_lock(&zone->lock);
		pagetypeinfo_showblockcount_print(&s, zone, o1_blocks);
		if (!o1_blocks)
			spin_unlock(&zone->lock);
	}
	pl_this = saved;
	return pl_seq_finish(&s);
}

unsigned int pl_unusable_free_index(struct zone *zone, unsigned int order)
{
	unsigned long free_pages = 0, suitable = 0;

	if (pl_check_ptr(__func__, zone, "zone"))
		return 0;
	if (order > MAX_PAGE_ORDER) {
		pl_bad_arg(__func__, "order %u above MAX_PAGE_ORDER", order);
		return 0;
	}
	spin_lock(&zone->lock);
	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
		unsigned long nr = zone->free_area[o].nr_free;

		free_pages += nr << o;
		if (o >= order)
			suitable += nr << (o - order);
	}
	spin_unlock(&zone->lock);
	if (!free_pages)
		return 1000;
	return (unsigned int)((free_pages - (suitable << order)) * 1000 / free_pages);
}

unsigned long pl_free_pageblocks(struct zone *zone)
{
	unsigned long blocks = 0;

	if (pl_check_ptr(__func__, zone, "zone"))
		return 0;
	spin_lock(&zone->lock);
	for (unsigned int o = pageblock_order; o < NR_PAGE_ORDERS; o++)
		blocks += zone->free_area[o].nr_free << (o - pageblock_order);
	spin_unlock(&zone->lock);
	return blocks;
}

static void zoneinfo_line(struct pl_seq *s, const char *label, unsigned long v)
{
	seq_puts(s, label);
	seq_put_num(s, NULL, v, 0);
	seq_putc(s, '\n');
}

long pl_show_zoneinfo(struct pl_machine *m, char *buf, size_t size)
{
	static const char *const stat_names[NR_VM_ZONE_STAT_ITEMS] = {
		"nr_free_pages", "nr_free_pages_blocks",
	};
	struct pl_seq s = { .buf = buf, .size = size };
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;
	for_each_zone(zone, m) {
		seq_puts(&s, "Node 0, zone ");
		seq_put_str(&s, zone->name, 8);
		seq_putc(&s, '\n');
		zoneinfo_line(&s, "  pages free     ", (unsigned long)zone_page_state(zone, NR_FREE_PAGES));
		zoneinfo_line(&s, "        boost    ", zone->watermark_boost);
		zoneinfo_line(&s, "        min      ", min_wmark_pages(zone));
		zoneinfo_line(&s, "        low      ", low_wmark_pages(zone));
		zoneinfo_line(&s, "        high     ", high_wmark_pages(zone));
		zoneinfo_line(&s, "        promo    ", wmark_pages(zone, WMARK_PROMO));
		zoneinfo_line(&s, "        spanned  ", zone->spanned_pages);
		zoneinfo_line(&s, "        present  ", zone->present_pages);
		zoneinfo_line(&s, "        managed  ", zone->managed_pages);
		zoneinfo_line(&s, "        cma      ", 0);
		seq_puts(&s, "        protection: (");
		for (int i = 0; i < MAX_NR_ZONES; i++) {
			if (i)
				seq_puts(&s, ", ");
			seq_put_num(&s, NULL, (unsigned long)zone->lowmem_reserve[i], 0);
		}
		seq_puts(&s, ")\n");
		if (!populated_zone(zone))
			continue;
		for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++) {
			seq_puts(&s, "      ");
			seq_put_str(&s, stat_names[i], -12);
			seq_putc(&s, ' ');
			zoneinfo_line(&s, "", (unsigned long)zone_page_state(zone, i));
		}
		seq_puts(&s, "  pagesets\n");
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

			zoneinfo_line(&s, "    cpu: ", cpu);
			zoneinfo_line(&s, "              count:    ", (unsigned long)READ_ONCE(pcp->count));
			zoneinfo_line(&s, "              high:     ", (unsigned long)READ_ONCE(pcp->high));
			zoneinfo_line(&s, "              batch:    ", (unsigned long)READ_ONCE(pcp->batch));
			zoneinfo_line(&s, "              high_min: ", (unsigned long)READ_ONCE(pcp->high_min));
			zoneinfo_line(&s, "              high_max: ", (unsigned long)READ_ONCE(pcp->high_max));
			zoneinfo_line(&s, "  vm stats threshold: ",
				      (unsigned long)READ_ONCE(zone->per_cpu_zonestats[cpu].stat_threshold));
		}
		zoneinfo_line(&s, "  node_unreclaimable:  ", 0);
		zoneinfo_line(&s, "  start_pfn:           ", zone->zone_start_pfn);
	}
	return pl_seq_finish(&s);
}
