// SPDX-License-Identifier: MIT
/*
 * extfrag_show.c - the fragmentation measures of mm/vmstat.c (Linux 6.18):
 * fill_contig_page_info(), the fragmentation index (used by
 * compaction_suitable() against vm.extfrag_threshold) and the unusable
 * free space index, and debugfs extfrag/extfrag_index and
 * extfrag/unusable_index printed byte for byte as the kernel does.
 *
 * Invariant: a report reads each zone's nr_free under zone->lock, one
 * zone at a time (the kernel reads them racily; the lock only makes
 * pagelab's report a consistent snapshot per zone).
 */
#include <stdio.h>
#include "internal.h"
#include "validate.h"
#include "base/seq.h"
#include "pagelab/compaction.h"

void fill_contig_page_info(const struct zone *zone, unsigned int suitable_order,
			   struct contig_page_info *info)
{
	info->free_pages = 0;
	info->free_blocks_total = 0;
	info->free_blocks_suitable = 0;
	for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
		unsigned long blocks = READ_ONCE(zone->free_area[order].nr_free);

		info->free_blocks_total += blocks;
		info->free_pages += blocks << order;
		if (order >= suitable_order)
			info->free_blocks_suitable += blocks << (order - suitable_order);
	}
}

/* __fragmentation_index(): the kernel's integer arithmetic, thousandths. */
static int __fragmentation_index(unsigned int order, const struct contig_page_info *info)
{
	unsigned long requested = 1UL << order;

	if (!info->free_blocks_total)
		return 0;
	if (info->free_blocks_suitable)
		return -1000;
	return (int)(1000 - (1000 + info->free_pages * 1000UL / requested) / info->free_blocks_total);
}

int fragmentation_index(const struct zone *zone, unsigned int order)
{
	struct contig_page_info info;

	fill_contig_page_info(zone, order, &info);
	return __fragmentation_index(order, &info);
}

static int __unusable_free_index(unsigned int order, const struct contig_page_info *info)
{
	if (!info->free_pages)
		return 0;
	return (int)((info->free_pages - (info->free_blocks_suitable << order)) * 1000UL /
		     info->free_pages);
}

int unusable_free_index(const struct zone *zone, unsigned int order)
{
	struct contig_page_info info;

	fill_contig_page_info(zone, order, &info);
	return __unusable_free_index(order, &info);
}

static long show_index(struct pl_machine *m, char *buf, size_t size, bool extfrag)
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
		for (unsigned int order = 0; order < NR_PAGE_ORDERS; order++) {
			struct contig_page_info info;
			char tmp[32];
			int index, n;

			fill_contig_page_info(zone, order, &info);
			index = extfrag ? __fragmentation_index(order, &info) :
					  __unusable_free_index(order, &info);
			/* extfrag_show_print(): "%2d.%03d ", unusable_show_print(): "%d.%03d " */
			n = snprintf(tmp, sizeof(tmp), extfrag ? "%2d.%03d " : "%d.%03d ",
				     index / 1000, index % 1000 < 0 ? -(index % 1000) : index % 1000);
			seq_write(&s, tmp, (size_t)n);
		}
		seq_putc(&s, '\n');
		spin_unlock(&zone->lock);
	}
	return pl_seq_finish(&s);
}

long pl_show_extfrag_index(struct pl_machine *m, char *buf, size_t size)
{
	return show_index(m, buf, size, true);
}

long pl_show_unusable_index(struct pl_machine *m, char *buf, size_t size)
{
	return show_index(m, buf, size, false);
}

long pl_show_extfrag_index_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_extfrag_index, f);
}

long pl_show_unusable_index_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_unusable_index, f);
}
