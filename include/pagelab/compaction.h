/* SPDX-License-Identifier: MIT */
/*
 * compaction.h - memory pressure: the fragmentation measures of
 * mm/vmstat.c (debugfs extfrag/extfrag_index and extfrag/unusable_index,
 * fragmentation_index()) as Linux 6.18 computes and prints them.
 *
 * Both read a zone's free_area[].nr_free only (fill_contig_page_info()):
 * the pages on PCP lists are not free blocks to them, as in the kernel.
 */
#ifndef PAGELAB_COMPACTION_H
#define PAGELAB_COMPACTION_H

#include <stdio.h>
#include "mm.h"

/**
 * struct contig_page_info - fill_contig_page_info()'s figures of a zone
 * for one order.
 * @free_pages:          free pages in the buddy (sum of nr_free << order).
 * @free_blocks_total:   free blocks of every order.
 * @free_blocks_suitable: blocks of the asked order the free blocks of that
 *                       order and up could make.
 */
struct contig_page_info {
	unsigned long free_pages;
	unsigned long free_blocks_total;
	unsigned long free_blocks_suitable;
};

/**
 * fill_contig_page_info() - @zone's free blocks as @info for an allocation
 * of @suitable_order. Reads nr_free racily, as the kernel does.
 */
void fill_contig_page_info(const struct zone *zone, unsigned int suitable_order,
			   struct contig_page_info *info);

/**
 * fragmentation_index() - Gorman's index for an allocation of @order in
 * @zone, in thousandths: -1000 if a free block could serve it now; towards
 * 0 a failure would be for lack of memory (reclaim helps), towards 1000 for
 * fragmentation (compaction helps). 0 when the zone has no free block.
 */
int fragmentation_index(const struct zone *zone, unsigned int order);

/**
 * unusable_free_index() - the share of @zone's free pages, in thousandths,
 * in blocks too small for @order (0 when nothing is free).
 */
int unusable_free_index(const struct zone *zone, unsigned int order);

/**
 * pl_show_extfrag_index() - debugfs extfrag/extfrag_index: per populated
 * zone "Node 0, zone %8s " then "%2d.%03d " per order.
 * pl_show_unusable_index() - extfrag/unusable_index: "%d.%03d " per order.
 * Same contract as the pl_show_*() reports (mm.h): length, -ENOSPC, or
 * -EINVAL after one rate-limited warning for a NULL machine or buffer.
 */
long pl_show_extfrag_index(struct pl_machine *m, char *buf, size_t size);
long pl_show_unusable_index(struct pl_machine *m, char *buf, size_t size);
/** pl_show_extfrag_index_file(), pl_show_unusable_index_file() - the same to @f. */
long pl_show_extfrag_index_file(struct pl_machine *m, FILE *f);
long pl_show_unusable_index_file(struct pl_machine *m, FILE *f);

/* ---- compaction and migration (src/mm/compaction.c) -------------------------- */

/*
 * The kernel's enum compact_result, as mm_compaction_end prints it, with
 * the order of the kernel's values (try_to_compact_pages() keeps the max).
 */
enum pl_compact_result {
	PL_COMPACT_NOT_SUITABLE_ZONE, PL_COMPACT_SKIPPED, PL_COMPACT_DEFERRED,
	PL_COMPACT_NO_SUITABLE_PAGE, PL_COMPACT_CONTINUE, PL_COMPACT_COMPLETE,
	PL_COMPACT_PARTIAL_SKIPPED, PL_COMPACT_CONTENDED, PL_COMPACT_SUCCESS,
	NR_PL_COMPACT_RESULTS
};

/* The kernel's compaction priorities: lower is more thorough. */
enum compact_priority {
	COMPACT_PRIO_SYNC_FULL, COMPACT_PRIO_SYNC_LIGHT, COMPACT_PRIO_ASYNC,
};
#define MIN_COMPACT_PRIORITY		COMPACT_PRIO_SYNC_FULL
#define MIN_COMPACT_COSTLY_PRIORITY	COMPACT_PRIO_SYNC_LIGHT
#define DEF_COMPACT_PRIORITY		COMPACT_PRIO_SYNC_LIGHT
#define INIT_COMPACT_PRIORITY		COMPACT_PRIO_ASYNC
#define MAX_COMPACT_RETRIES		16
#define COMPACT_MAX_DEFER_SHIFT		6

/**
 * struct pl_migrate_ops - the holder of a machine's movable allocations,
 * which compaction may move (the kernel's movable_operations and
 * address_space migrate_folio, in one place).
 * @isolate: may the block at @page (@order, allocated movable) move? 0 yes
 *           (it is isolated until @migrate or @putback), else no.
 * @migrate: the block moved from @src to @dst (same order, contents
 *           copied); from now on the holder names @dst. @src is freed next.
 * @putback: the isolated block stays at @page after all.
 * Called on the compacting thread; the holder must not free or allocate
 * pages from them.
 */
struct pl_migrate_ops {
	int (*isolate)(void *ctx, struct page *page, unsigned int order);
	void (*migrate)(void *ctx, struct page *src, struct page *dst, unsigned int order);
	void (*putback)(void *ctx, struct page *page, unsigned int order);
};

/**
 * pl_set_migrate_ops() - register @ops (NULL: none) as the holder of @m's
 * movable allocations. Without a holder no allocation is movable and
 * compaction migrates nothing. Return: 0, or -EINVAL with one warning.
 */
int pl_set_migrate_ops(struct pl_machine *m, const struct pl_migrate_ops *ops, void *ctx);

/**
 * pl_compact_zone() - one compact_zone() of zone @zone_idx of @m for
 * @order (-1: the whole zone, as /proc/sys/vm/compact_memory), sync or
 * async; the calling thread must have entered @m. Return: the
 * enum pl_compact_result, or -EINVAL with one warning.
 */
long pl_compact_zone(struct pl_machine *m, int zone_idx, int order, bool sync);

/** get_pageblock_skip() - the compaction skip bit of @pfn's pageblock. */
bool get_pageblock_skip(struct zone *zone, unsigned long pfn);
/**
 * __reset_isolation_suitable() - clear the skip bits of @zone's usable blocks.
 *
 * Only if a direct compactor's scanners met in @zone since the last reset
 * (compact_blockskip_flush): the blocks whose sample shows a migration
 * source or a free page are cleared, and the scanners restart at the first
 * such blocks from each end.
 */
void __reset_isolation_suitable(struct zone *zone);
/** reset_isolation_suitable() - the same for every zone of @m (kswapd going to sleep). */
void reset_isolation_suitable(struct pl_machine *m);
/** compaction_suitable() - is compaction worth running for @order in @zone? */
bool compaction_suitable(struct zone *zone, int order, int highest_zoneidx);
/** defer_compaction(), compaction_deferred(), compaction_defer_reset(): the kernel's deferral. */
void defer_compaction(struct zone *zone, int order);
bool compaction_deferred(struct zone *zone, int order);
void compaction_defer_reset(struct zone *zone, int order, bool alloc_success);
/** pl_extfrag_threshold() - vm.extfrag_threshold of @m (default 500). */
unsigned int pl_extfrag_threshold(const struct pl_machine *m);

/* ---- kcompactd and proactive compaction (src/mm/kcompactd.c) -------------------- */

/* The kernel's: how often kcompactd looks at the fragmentation score, and for which order. */
#define HPAGE_FRAG_CHECK_INTERVAL_MSEC	500
#define COMPACTION_HPAGE_ORDER		9

/** pl_compaction_proactiveness() - vm.compaction_proactiveness of @m (0..100, default 20). */
unsigned int pl_compaction_proactiveness(const struct pl_machine *m);
/**
 * extfrag_for_order() - the share of @zone's free pages, in percent, in
 * blocks smaller than @order (mm/vmstat.c); 0 when nothing is free.
 */
unsigned int extfrag_for_order(const struct zone *zone, unsigned int order);
/** fragmentation_score_zone() - extfrag_for_order() for COMPACTION_HPAGE_ORDER. */
unsigned int fragmentation_score_zone(const struct zone *zone);
/** fragmentation_score_node() - the zones' scores weighted by their present pages (0..100). */
unsigned int fragmentation_score_node(struct pl_machine *m);
/**
 * fragmentation_score_wmark() - proactive compaction's marks: low is
 * max(100 - proactiveness, 5), high is low + 10 (at most 100).
 */
unsigned int fragmentation_score_wmark(const struct pl_machine *m, bool low);
/**
 * wakeup_kcompactd() - ask kcompactd for a block of @order in the zones up
 * to @highest_zoneidx (kswapd, going to sleep). Kept for the next run if
 * some zone is worth compacting for it; nothing during a replay that runs
 * the trace's own wakes.
 */
void wakeup_kcompactd(struct pl_machine *m, int order, int highest_zoneidx);
/**
 * pl_kcompactd_run() - kcompactd at time @now_ns: the asked work if woken,
 * else, each HPAGE_FRAG_CHECK_INTERVAL_MSEC, proactive compaction if the
 * node's fragmentation score is above its high mark and kswapd is not
 * running. Nothing without a migrate holder, or while another thread runs
 * it. Context: entered.
 */
void pl_kcompactd_run(struct pl_machine *m, uint64_t now_ns);
/**
 * pl_kcompactd_tick() - pl_kcompactd_run() from the vmstat tick, each call
 * a 1/nr_cpus-th of a second of the daemon's clock (none while traced).
 */
void pl_kcompactd_tick(struct pl_machine *m);
/**
 * pl_kcompactd_set_traced() - a replay that runs the trace's kcompactd
 * wakes (pl_kcompactd_traced_wake()) and its clock: kswapd's wakeups and
 * the tick stand aside.
 */
void pl_kcompactd_set_traced(struct pl_machine *m, bool traced);
/** pl_kcompactd_traced_wake() - the trace's kcompactd ran its work for @order at @now_ns. */
void pl_kcompactd_traced_wake(struct pl_machine *m, int order, uint64_t now_ns);

#endif /* PAGELAB_COMPACTION_H */
