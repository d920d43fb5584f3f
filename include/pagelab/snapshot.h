/* SPDX-License-Identifier: MIT */
/*
 * snapshot.h - a real kernel's page-allocator state as /proc shows it
 * (buddyinfo, pagetypeinfo, zoneinfo, vmstat), read into struct pl_snapshot,
 * the gap between two snapshots against a trace's score, and the machine
 * state levels a replay starts from (fresh, counts, positional).
 * Invariant: a snapshot is read whole before anything is built from it.
 */
#ifndef PAGELAB_SNAPSHOT_H
#define PAGELAB_SNAPSHOT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "mm.h"
#include "trace.h"

/* ---- snapshots (src/trace/snapshot.c) --------------------------------- */

#define PL_SNAP_MAX_ZONES 5
#define PL_SNAP_MAX_CPUS 1024

/**
 * struct pl_snap_zone - one zone of a /proc snapshot.
 * @name:             "DMA", "DMA32", "Normal", "Movable"...
 * @spanned, @present, @managed: zoneinfo's page counts.
 * @start_pfn:        zoneinfo's start_pfn.
 * @wmark:            min, low, high, promo as reported.
 * @nr_free:          free blocks per order (buddyinfo).
 * @free_mt:          free blocks per migratetype and order (pagetypeinfo).
 * @blocks_mt:        pageblocks per migratetype (pagetypeinfo).
 * @pcp_count, @pcp_high, @pcp_batch: zoneinfo's pagesets, per CPU.
 * @nr_pcp_cpus:      CPUs with a pageset listed.
 */
struct pl_snap_zone {
	char name[16];
	unsigned long spanned, present, managed, start_pfn;
	unsigned long wmark[NR_WMARK];
	unsigned long nr_free[NR_PAGE_ORDERS];
	unsigned long free_mt[MIGRATE_TYPES][NR_PAGE_ORDERS];
	unsigned long blocks_mt[MIGRATE_TYPES];
	int pcp_count[PL_SNAP_MAX_CPUS], pcp_high[PL_SNAP_MAX_CPUS], pcp_batch[PL_SNAP_MAX_CPUS];
	unsigned int nr_pcp_cpus;
	bool has_pagetypeinfo;
};

/*
 * /proc/vmstat's memory-pressure counters a snapshot keeps (allocstall is
 * the sum of allocstall_<zone>).
 */
#define PL_VMSTAT_PRESSURE(X)                                                   \
	X(compact_stall) X(compact_success) X(compact_fail)                    \
	X(compact_migrate_scanned) X(compact_free_scanned) X(compact_isolated) \
	X(compact_daemon_wake) X(compact_daemon_migrate_scanned)               \
	X(compact_daemon_free_scanned) X(pgmigrate_success) X(pgmigrate_fail)  \
	X(pgscan_kswapd) X(pgscan_direct) X(pgsteal_kswapd) X(pgsteal_direct)  \
	X(kswapd_low_wmark_hit_quickly) X(kswapd_high_wmark_hit_quickly)       \
	X(pageoutrun) X(allocstall) X(thp_fault_alloc) X(thp_fault_fallback)

enum pl_vmstat_pressure {
#define PL_VP_ENUM(name) PL_VP_##name,
	PL_VMSTAT_PRESSURE(PL_VP_ENUM)
#undef PL_VP_ENUM
	NR_PL_VMSTAT_PRESSURE
};
extern const char *const pl_vmstat_pressure_names[NR_PL_VMSTAT_PRESSURE];

/**
 * struct pl_snapshot - a kernel's /proc/{buddyinfo,pagetypeinfo,zoneinfo,
 * vmstat} as read by pl_snapshot_read().
 * @min_free_kbytes: from /proc/sys/vm/min_free_kbytes when the directory
 *                   has it, else the value whose share of the zones' managed
 *                   pages gives each zone's min watermark (the sum of the
 *                   min watermarks, less the kernel's rounding down).
 * @watermark_scale_factor: from the directory's watermark_scale_factor, else
 *                   from a zone whose low - min gap is its managed pages'
 *                   share rather than min / 4; 0 if neither tells (the
 *                   kernel's default 10 then applies).
 * @watermark_boost_factor: from the directory's file, in pl_config's terms
 *                   (0 unknown, the default; PL_WMARK_BOOST_OFF for 0).
 * @percpu_pagelist_high_fraction: from the directory's file; 0 if absent.
 * @nr_free_pages:   vmstat nr_free_pages (or the buddyinfo sum).
 * @pgalloc, @pgfree: vmstat's pgalloc_* summed over zones, and pgfree: pages
 *                   allocated and freed since boot; @has_pgalloc if vmstat
 *                   had both.
 * @pressure:        vmstat's PL_VMSTAT_PRESSURE counters since boot;
 *                   @has_pressure if vmstat had compact_stall (a kernel
 *                   without CONFIG_COMPACTION has none of them).
 */
struct pl_snapshot {
	struct pl_snap_zone zone[PL_SNAP_MAX_ZONES];
	int nr_zones;
	unsigned long min_free_kbytes;
	unsigned long watermark_scale_factor;
	unsigned long watermark_boost_factor;
	unsigned long percpu_pagelist_high_fraction;
	unsigned long nr_free_pages;
	bool has_vmstat;
	unsigned long pgalloc, pgfree;
	bool has_pgalloc;
	unsigned long pressure[NR_PL_VMSTAT_PRESSURE];
	bool has_pressure;
};

/**
 * pl_snapshot_pressure_delta() - @after's pressure counters less @before's.
 * Return: 0, or -ENODATA (@out untouched) if either lacks them (an old
 * snapshot) or a counter went backwards (two boots).
 */
int pl_snapshot_pressure_delta(const struct pl_snapshot *before, const struct pl_snapshot *after,
			       unsigned long out[NR_PL_VMSTAT_PRESSURE]);


/**
 * pl_snapshot_read() - read the snapshot files of directory @dir (any of
 * buddyinfo, pagetypeinfo, zoneinfo, vmstat; buddyinfo or zoneinfo needed).
 * Each file is held to the kernel's format (strict counts: no sign, no
 * wrap; 11 orders; zones in the kernel's order, each once; migratetypes
 * in order; pageblock order 9) and the numbers to each other (managed <=
 * present <= spanned, free and PCP pages within managed, watermarks in
 * order, pageblocks within the span).
 * Return: 0, -ENOENT if none is there, -EINVAL if a file is malformed
 * (one warning naming file, line and field; *@snap unchanged) or a sysctl file holds a value its
 * sysctl refuses (one warning naming it), -EOPNOTSUPP if the files list zones
 * of a NUMA node other than 0 (pagelab's machine is one node).
 */
int pl_snapshot_read(const char *dir, struct pl_snapshot *snap);

/**
 * pl_snapshot_nr_cpus() - the CPUs of the snapshot's machine: the most
 * pagesets any zone lists (zoneinfo shows one per possible CPU); 0 if none.
 */
unsigned int pl_snapshot_nr_cpus(const struct pl_snapshot *snap);

/** pl_snapshot_free_by_order() - free PAGES per order summed over zones. */
void pl_snapshot_free_by_order(const struct pl_snapshot *snap, unsigned long out[NR_PAGE_ORDERS]);

/*
 * A snapshot pair is stale when the pages vmstat saw allocated or freed
 * between them differ from the trace's by more than this share of vmstat's
 * figure and by more than this many pages (16 MiB): recordings made with
 * `pagelab trace record` differ by 0.0-0.2%; a perf capture whose snapshots
 * were taken outside `perf record`, which allocates its ring buffers in
 * between, by 22-31%.
 */
#define PL_SNAPSHOT_GAP_SHARE	0.10
#define PL_SNAPSHOT_GAP_PAGES	4096L

/**
 * struct pl_snapshot_gap - the page traffic between two snapshots against
 * the trace recorded between them (pl_snapshot_gap()).
 * @pgalloc, @pgfree: after - before of vmstat's pgalloc_* and pgfree.
 * @traced_alloc:     pages of the trace's successful mm_page_alloc events
 *                    plus its vmalloc areas' bulk pages (alloc_pages_bulk()
 *                    fires no event; pl_trace_score.vmalloc_area_pages).
 * @traced_free:      pages of its mm_page_free events.
 * @alloc_gap, @free_gap: @pgalloc - @traced_alloc, @pgfree - @traced_free.
 *                    Positive: the kernel allocated or freed pages the trace
 *                    missed (a snapshot taken well before the trace began or
 *                    well after it ended, or a cut trace); negative: the
 *                    trace runs past its snapshots (or they are of two boots).
 * @share:            the larger |gap| over its vmstat figure.
 * @stale:            @share > PL_SNAPSHOT_GAP_SHARE and that gap's pages >
 *                    PL_SNAPSHOT_GAP_PAGES: the before snapshot is not the
 *                    state the trace started from, nor the after one the
 *                    state it ended in, and every figure is suspect.
 */
struct pl_snapshot_gap {
	long pgalloc, pgfree;
	long traced_alloc, traced_free;
	long alloc_gap, free_gap;
	double share;
	bool stale;
};

/**
 * pl_snapshot_gap() - check that @before and @after bracket the trace
 * scored in @score: compare the page allocations and frees vmstat counted
 * between them with the trace's.
 * @before, @after: the snapshots (pl_snapshot_read()).
 * @score:  the kernel's side of the trace (pl_trace_score_event() on every event).
 * @out:    the figures.
 * Return: 0; -ENODATA (no warning: old or partial snapshots have no
 * counters) if either snapshot's vmstat lacks pgalloc or pgfree; -EINVAL
 * with one warning on a NULL argument. @out is written only on 0.
 */
int pl_snapshot_gap(const struct pl_snapshot *before, const struct pl_snapshot *after,
		    const struct pl_trace_score *score, struct pl_snapshot_gap *out);

/* ---- machine state (src/trace/state.c) -------------------------------- */

enum pl_state_level { PL_STATE_FRESH, PL_STATE_COUNTS, PL_STATE_POSITIONAL };
extern const char *const pl_state_level_names[];
/** pl_state_level_parse() - "fresh", "counts", "positional". Return: level or -EINVAL. */
int pl_state_level_parse(const char *s);

/**
 * pl_snapshot_config() - a machine config the size of @snap: memory the
 * sum of the zones' present pages rounded up to pageblocks, each of the
 * kernel's DMA, DMA32 and Normal zones pagelab's zone of that name (any
 * other, Movable or Device, folds into Normal), min_free_kbytes and the
 * other watermark and PCP sysctls as the snapshot has them; a machine profile's own ZONE_DMA, holes and boot reserve are
 * dropped (the snapshot's zones hold the kernel's own). Leaves @cfg's
 * other fields (design, CPUs, topology) as they are.
 */
void pl_snapshot_config(const struct pl_snapshot *snap, struct pl_config *cfg);

/**
 * pl_machine_load_state() - bring a machine made with pl_snapshot_config()
 * from its boot state to @snap's state (level COUNTS): watermarks as
 * reported; the pageblocks' migratetypes in pagetypeinfo's proportions;
 * exactly pagetypeinfo's free blocks per order and migratetype left free
 * (everything else allocated and kept by the returned handle, so that
 * frees of pre-trace pages can give it back); PCP high and batch per CPU.
 * Context: no thread runs on @m.
 * Return: a handle for pl_state_take()/pl_state_release(), or NULL with a
 * warning (snapshot larger than the machine, no memory); on failure the
 * machine is as it was.
 */
struct pl_loaded_state;
struct pl_loaded_state *pl_machine_load_state(struct pl_machine *m, const struct pl_snapshot *snap);

/**
 * pl_state_take() - a pre-trace allocated block of @order for a free the
 * trace makes of a page pagelab never handed out, preferring pageblocks
 * of @mt. Context: a thread that has entered @m. Return: the block's head
 * (an allocated block of exactly @order, split from a larger one when
 * needed) or NULL when the loaded state has none left.
 */
struct page *pl_state_take(struct pl_loaded_state *st, unsigned int order, int mt);

/**
 * pl_state_holds() - is @pfn a page the state holds (allocated before the
 * trace, not yet given back)? pl_state_moved() - compaction moved the held
 * page at @src to @dst: the state holds @dst instead.
 */
bool pl_state_holds(const struct pl_loaded_state *st, unsigned long pfn);
void pl_state_moved(struct pl_loaded_state *st, unsigned long src, unsigned long dst);

/**
 * pl_state_onlining() - is the kernel's free of the MAX_PAGE_ORDER block at
 * @pfn memory hotplug onlining it? True once per block of memory the
 * snapshot did not count online (positional state; hotplug frees onlined
 * memory in such blocks), false otherwise and for any other @order.
 */
bool pl_state_onlining(struct pl_loaded_state *st, unsigned long pfn, unsigned int order);

/** pl_state_release() - free the handle; the pages it held stay allocated on the machine. */
void pl_state_release(struct pl_loaded_state *st);

#define PL_STATE_MAX_NOTES 4
#define PL_STATE_NOTE_LEN 200

/**
 * pl_state_design_notes() - what the machine's design changed in the loaded
 * state, or could not apply to it: one line each (a design's batch rule
 * re-applied to the loaded zone; pcp_owner's pageblock ownership, which a
 * 6.18 kernel's snapshot cannot have). Every output prints them.
 * Return: the number of lines, each at @notes[i].
 */
int pl_state_design_notes(const struct pl_loaded_state *st, const char *notes[PL_STATE_MAX_NOTES]);

#endif /* PAGELAB_SNAPSHOT_H */
