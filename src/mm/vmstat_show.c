// SPDX-License-Identifier: MIT
/*
 * vmstat_show.c - /proc/vmstat in the kernel's format: one "name value"
 * line per item, names and order as mm/vmstat.c's vmstat_text[] of Linux
 * 6.18, for the items pagelab keeps. An item pagelab does not model (the
 * LRU and reclaim, page cache, slab, swap, NUMA, THP, CMA, ZONE_MOVABLE,
 * ...) is left out rather than printed as 0: a 0 would claim a measurement.
 *
 * The items, in vmstat_text[] order:
 *   nr_free_pages, nr_free_pages_blocks   zone_stat_item, summed over zones
 *   nr_memmap_boot_pages                  vm_stat_item: the memmap memblock
 *                                         allocated at boot (only when the
 *                                         boot reserve is modelled)
 *   pgalloc_dma, pgalloc_dma32, pgalloc_normal
 *                                         vm_event_item, pages, counted where
 *                                         the kernel counts them: rmqueue()
 *                                         and the bulk allocator (not
 *                                         alloc_contig_range())
 *   pgfree                                pages freed, boot's
 *                                         memblock_free_all() included
 *                                         (__free_pages_core() goes through
 *                                         free_one_page(), which counts them)
 *   pgmigrate_success, pgmigrate_fail     pages compaction migrated, or
 *                                         isolated and could not
 *   compact_migrate_scanned ... compact_daemon_free_scanned
 *                                         compaction's (compaction.c,
 *                                         kcompactd.c), counted where the
 *                                         kernel counts them; the
 *                                         compact_daemon_* are kcompactd's
 *                                         share (thp_migration_* between
 *                                         them is left out)
 *
 * Invariant: the event lines are sums over every vCPU's counters, read
 * without stopping them, as all_vm_events() reads the per-CPU ones.
 */
#include "internal.h"
#include "validate.h"
#include "base/seq.h"

_Static_assert(PL_EV_PGALLOC_DMA32 - PL_EV_PGALLOC_DMA == ZONE_DMA32 - ZONE_DMA &&
		       PL_EV_PGALLOC_NORMAL - PL_EV_PGALLOC_DMA == ZONE_NORMAL - ZONE_DMA,
	       "pgalloc events are indexed by zone, as the kernel's PGALLOC_* are");

/* The migration and compaction items, in vmstat_text[] order, and pagelab's counter of each. */
static const struct {
	const char *name;
	enum pl_vm_event ev;
} compaction_lines[] = {
	{ "pgmigrate_success", PL_EV_PGMIGRATE_SUCCESS },
	{ "pgmigrate_fail", PL_EV_PGMIGRATE_FAIL },
	{ "compact_migrate_scanned", PL_EV_COMPACT_MIGRATE_SCANNED },
	{ "compact_free_scanned", PL_EV_COMPACT_FREE_SCANNED },
	{ "compact_isolated", PL_EV_COMPACT_ISOLATED },
	{ "compact_stall", PL_EV_COMPACT_STALL },
	{ "compact_fail", PL_EV_COMPACT_FAIL },
	{ "compact_success", PL_EV_COMPACT_SUCCESS },
	{ "compact_daemon_wake", PL_EV_COMPACT_DAEMON_WAKE },
	{ "compact_daemon_migrate_scanned", PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED },
	{ "compact_daemon_free_scanned", PL_EV_COMPACT_DAEMON_FREE_SCANNED },
};

static void vmstat_line(struct pl_seq *s, const char *name, unsigned long v)
{
	/* vmstat_show(): seq_puts(name), seq_put_decimal_ull(" ", v), '\n' */
	seq_puts(s, name);
	seq_put_num(s, " ", v, 0);
	seq_putc(s, '\n');
}

long pl_show_vmstat(struct pl_machine *m, char *buf, size_t size)
{
	static const char *const pgalloc[] = { "pgalloc_dma", "pgalloc_dma32", "pgalloc_normal" };
	struct pl_seq s = { .buf = buf, .size = size };
	unsigned long ev[NR_PL_VM_EVENTS];
	long nr_free = 0, nr_free_blocks = 0;
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;
	/* global_zone_page_state(): every zone's counter, populated or not */
	for_each_zone(zone, m) {
		nr_free += zone_page_state(zone, NR_FREE_PAGES);
		nr_free_blocks += zone_page_state(zone, NR_FREE_PAGES_BLOCKS);
	}
	pl_events_sum(m, ev);

	vmstat_line(&s, "nr_free_pages", (unsigned long)max(nr_free, 0L));
	vmstat_line(&s, "nr_free_pages_blocks", (unsigned long)max(nr_free_blocks, 0L));
	if (m->config.boot_reserve)
		vmstat_line(&s, "nr_memmap_boot_pages", m->boot_reserved[PL_RESERVE_MEMMAP]);
	for (int z = ZONE_DMA; z <= ZONE_NORMAL; z++)
		vmstat_line(&s, pgalloc[z - ZONE_DMA], ev[PL_EV_PGALLOC_DMA + z - ZONE_DMA]);
	vmstat_line(&s, "pgfree", m->boot_freed_pages + ev[PL_EV_PGFREE_PAGES]);
	for (unsigned int i = 0; i < ARRAY_SIZE(compaction_lines); i++)
		vmstat_line(&s, compaction_lines[i].name, ev[compaction_lines[i].ev]);
	return pl_seq_finish(&s);
}

long pl_show_vmstat_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_vmstat, f);
}
