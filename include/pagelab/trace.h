/* SPDX-License-Identifier: MIT */
/*
 * trace.h - real workloads (issue 13): read a kernel's page-allocator
 * trace, score it the way the kernel's tracepoints count, and replay it on
 * a pagelab machine.
 *
 *   pl_trace_open()  -> pl_trace_next() ... : a streaming parser of raw
 *       tracefs text, `trace-cmd report` text and `perf script` text, plain
 *       or gzip/zstd/xz compressed; memory bounded whatever the length.
 *   struct pl_trace_score : the kernel-side figures computed from a stream
 *       of events (refill runs, drain runs, fallbacks, a zone->lock
 *       estimate), fed with kernel events or with pagelab's own tracepoints.
 *   pl_replay_*() : the events of a trace replayed on a machine, one vCPU
 *       per trace CPU, pfns mapped to the blocks pagelab handed out.
 *
 * The layer sits above mm/ and vmalloc/ and below bench/; it changes a
 * machine only through the mm and vmalloc APIs.
 */
#ifndef PAGELAB_TRACE_H
#define PAGELAB_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "mm.h"

/* ---- events ----------------------------------------------------------------- */

enum pl_trace_type {
	PL_TRACE_PAGE_ALLOC,		/* kmem/mm_page_alloc */
	PL_TRACE_PAGE_FREE,		/* kmem/mm_page_free */
	PL_TRACE_PAGE_FREE_BATCHED,	/* kmem/mm_page_free_batched */
	PL_TRACE_ZONE_LOCKED,		/* kmem/mm_page_alloc_zone_locked */
	PL_TRACE_PCPU_DRAIN,		/* kmem/mm_page_pcpu_drain */
	PL_TRACE_EXTFRAG,		/* kmem/mm_page_alloc_extfrag */
	PL_TRACE_ALLOC_VMAP_AREA,	/* vmalloc/alloc_vmap_area */
	PL_TRACE_FREE_VMAP_AREA,	/* vmalloc/free_vmap_area_noflush */
	PL_TRACE_PURGE_VMAP_AREA,	/* vmalloc/purge_vmap_area_lazy */
	PL_TRACE_PERCPU,		/* percpu/<any>: parsed and counted */
	NR_PL_TRACE_TYPES
};

extern const char *const pl_trace_type_names[NR_PL_TRACE_TYPES];

/**
 * struct pl_trace_event - one parsed event.
 * @type:   which event.
 * @cpu:    the CPU column.
 * @ts_ns:  timestamp in nanoseconds.
 * @line:   input line number (1-based).
 * @pfn:    pfn (kmem events); -1UL for a failed mm_page_alloc.
 * @order:  order (alloc_order for extfrag).
 * @migratetype: migratetype (alloc_migratetype for extfrag).
 * @gfp:    mm_page_alloc's gfp_flags mapped onto pagelab's gfp_t bits.
 * @percpu_refill, @fallback_order, @fallback_migratetype, @fragmenting,
 * @change_ownership: the extfrag and zone_locked fields. @fragmenting is
 *          recomputed as fallback_order < pageblock_order (the tracepoint's
 *          own definition; perf prints a wrong value for it).
 * @va_start, @size: vmap area start and size (alloc/free_vmap_area);
 * @npurged: purge_vmap_area_lazy's num_purged. @failed: alloc_vmap_area.
 * @nr_lazy: free_vmap_area_noflush's nr_lazy, the kernel's vmap_lazy_nr
 *          (pages) after the free; -1 (or 0 from a zeroed struct) absent.
 * @kworker: the task column names a kworker (kworker/...): workqueue work,
 *          such as vmstat_update, ran the event.
 * @kswapd: the task column names kswapd (kswapd0, kswapd1...): its reclaim
 *          freed the page.
 */
struct pl_trace_event {
	enum pl_trace_type type;
	unsigned int cpu;
	uint64_t ts_ns;
	unsigned long line;
	unsigned long pfn;
	int order;
	int migratetype;
	gfp_t gfp;
	int percpu_refill;
	int fallback_order;
	int fallback_migratetype;
	int fragmenting;
	int change_ownership;
	int failed;
	unsigned long va_start;
	unsigned long size;
	unsigned long npurged;
	long nr_lazy;	/* free_vmap_area_noflush: the kernel's vmap_lazy_nr after it; -1 absent */
	bool kworker;
	bool kswapd;
};

/* ---- warnings ------------------------------------------------------------ */

#define PL_TRACE_WARNINGS(X)                                                    \
	X(malformed_line)                                                       \
	X(unknown_event)                                                        \
	X(lost_events)                                                          \
	X(pfn_out_of_range)                                                     \
	X(free_unallocated)                                                     \
	X(cpu_out_of_range)                                                     \
	X(alloc_failed)                                                         \
	X(realloc_unfreed)                                                      \
	X(order_mismatch)                                                       \
	X(refreed)                                                              \
	X(drain_all_replayed)

enum pl_trace_warn {
#define PL_TW_ENUM(name) PL_TW_##name,
	PL_TRACE_WARNINGS(PL_TW_ENUM)
#undef PL_TW_ENUM
	NR_PL_TRACE_WARN
};

extern const char *const pl_trace_warn_names[NR_PL_TRACE_WARN];

/* ---- the streaming parser (src/trace/parse.c) --------------------------- */

enum pl_trace_format { PL_TRACE_FMT_UNKNOWN, PL_TRACE_FMT_FTRACE, PL_TRACE_FMT_TRACE_CMD,
		       PL_TRACE_FMT_PERF };
extern const char *const pl_trace_format_names[];

/**
 * struct pl_trace_stats - what a reader has seen so far.
 * @lines:        input lines read.
 * @events:       events returned, @by_type per type.
 * @warn:         counted warnings by class (enum pl_trace_warn).
 * @lost_events:  sum of the per-CPU "[LOST N EVENTS]" markers plus
 *                entries-written - entries-in-buffer from the header.
 * @entries_in_buffer, @entries_written: the raw header's numbers (0 if absent).
 * @first_ns, @last_ns: timestamps of the first and last event.
 * @max_cpu:      highest CPU number seen (-1 before any event).
 * @format:       the text format, detected from the lines.
 * @callchain_lines: `perf script` callchain frames (perf record -g), skipped.
 */
struct pl_trace_stats {
	unsigned long lines;
	unsigned long events;
	unsigned long by_type[NR_PL_TRACE_TYPES];
	unsigned long warn[NR_PL_TRACE_WARN];
	unsigned long lost_events;
	unsigned long entries_in_buffer, entries_written;
	uint64_t first_ns, last_ns;
	int max_cpu;
	enum pl_trace_format format;
	unsigned long callchain_lines;
};

struct pl_trace_reader;

/**
 * pl_trace_open() - open a trace file for streaming; gzip, zstd and xz are
 * recognised by their magic bytes and decompressed on the fly.
 * Return: the reader, or NULL with errno set (ENOENT, EACCES, ENOMEM...).
 */
struct pl_trace_reader *pl_trace_open(const char *path);

/**
 * pl_trace_open_mem() - a reader over @len bytes at @buf (not copied; must
 * outlive the reader), compressed or not. Return: the reader or NULL.
 */
struct pl_trace_reader *pl_trace_open_mem(const void *buf, size_t len);

/**
 * pl_trace_next() - the next event. Header lines, comments and LOST
 * markers are consumed and accounted; a malformed line is a counted
 * warning naming its line number (rate-limited on stderr) and is skipped.
 * Return: 1 with *@ev filled, 0 at the end, -EIO on a read or
 * decompression error (one warning; the events before it stand).
 */
int pl_trace_next(struct pl_trace_reader *r, struct pl_trace_event *ev);

/** pl_trace_stats() - the reader's running statistics. */
const struct pl_trace_stats *pl_trace_get_stats(const struct pl_trace_reader *r);

/** pl_trace_close() - release the reader (NULL is fine). */
void pl_trace_close(struct pl_trace_reader *r);

/**
 * pl_trace_parse_line() - parse one line (no newline) into *@ev.
 * Return: 1 an event, 0 a line with no event (header, comment, LOST
 * marker, an event pagelab does not read: *@ev untouched), -1 malformed.
 * @stats is updated with header numbers and LOST markers (may be NULL).
 */
int pl_trace_parse_line(const char *line, size_t len, struct pl_trace_event *ev,
			struct pl_trace_stats *stats);

/* ---- scoring (src/trace/score.c) --------------------------------------- */

/**
 * struct pl_trace_score - the figures a stream of events gives, by the same
 * definitions for the kernel's trace and pagelab's own tracepoints:
 *
 * @pcp_refills:   runs of mm_page_alloc_zone_locked percpu_refill=1 on one
 *                 CPU: a run ends at any other event of that CPU or at an
 *                 order change (one rmqueue_bulk() is one run).
 * @pcp_refill_pages, @..._by_order: pages those runs moved.
 * @refills_by_order: runs by order.
 * @pcp_drain_calls: runs of mm_page_pcpu_drain on one CPU (one
 *                 free_pcppages_bulk()), @pcp_drained_pages their pages,
 *                 @drained_pages_by_order_mt per order and migratetype.
 * @fallback_*:    mm_page_alloc_extfrag: events, those with fallback_order
 *                 below pageblock_order, change_ownership=1, and pageblocks
 *                 claimed: 2^(fallback_order - pageblock_order) for a
 *                 fallback of a whole pageblock or more, 1 for a smaller
 *                 one that changed ownership.
 * @zone_lock_acquisitions: the estimate (see pl_trace_score_zone_lock()):
 *                 refill runs + drain runs + runs of zone_locked
 *                 percpu_refill=0 (rmqueue_buddy) + frees of orders that do
 *                 not go to a PCP (4..8, 10: free_one_page()).
 * @buddy_direct_allocs, @buddy_direct_frees: the last two terms.
 * @allocs, @frees: mm_page_alloc (successful) and mm_page_free(+_batched).
 * @alloc_pages, @free_pages: their pages (2^order each; _batched not again).
 * @vmalloc_area_pages: pages of successful alloc_vmap_area areas less one
 *                 guard page each: what vmalloc would take with
 *                 alloc_pages_bulk(), which fires no mm_page_alloc (an
 *                 ioremap or vm_map_ram area takes none: an upper bound).
 * @vmalloc_allocs, @vmalloc_purges: alloc_vmap_area (not failed) and
 *                 purge_vmap_area_lazy with num_purged > 0.
 */
#define PL_SCORE_MAX_CPUS 1024

struct pl_trace_score {
	unsigned long pcp_refills, pcp_refill_pages;
	unsigned long refills_by_order[NR_PAGE_ORDERS];
	unsigned long pcp_refill_pages_by_order[NR_PAGE_ORDERS];
	unsigned long pcp_drain_calls, pcp_drained_pages;
	unsigned long drained_pages_by_order_mt[NR_PAGE_ORDERS][MIGRATE_TYPES];
	unsigned long fallback_events, fallback_fragmenting, fallback_change_ownership;
	unsigned long fallback_pageblocks_claimed;
	unsigned long buddy_direct_allocs, buddy_direct_frees;
	unsigned long allocs, frees;
	unsigned long alloc_pages, free_pages, vmalloc_area_pages;
	unsigned long vmalloc_allocs, vmalloc_purges;
	/* per-CPU run state and refills, for the timeline */
	unsigned int nr_cpus;
	unsigned long refills_per_cpu[PL_SCORE_MAX_CPUS];
	signed char run[PL_SCORE_MAX_CPUS];	/* 0 none, 1 refill, 2 drain, 3 direct */
	signed char run_order[PL_SCORE_MAX_CPUS];
};

/** pl_trace_score_init() - zero @s. */
void pl_trace_score_init(struct pl_trace_score *s);
/** pl_trace_score_event() - account one event (CPUs >= PL_SCORE_MAX_CPUS are ignored). */
void pl_trace_score_event(struct pl_trace_score *s, const struct pl_trace_event *ev);
/** pl_trace_score_zone_lock() - the zone->lock acquisition estimate of @s. */
unsigned long pl_trace_score_zone_lock(const struct pl_trace_score *s);

/**
 * pl_tp_to_trace_event() - a pagelab tracepoint hit as a trace event (for
 * scoring and printing).
 */
void pl_tp_to_trace_event(const struct pl_tp_event *tp, uint64_t ts_ns,
			  struct pl_trace_event *ev);

/**
 * pl_trace_print_event() - print @ev as one raw tracefs line, the kernel's
 * event names and fields, so pagelab's own trace diffs against a kernel's.
 */
void pl_trace_print_event(FILE *f, const struct pl_trace_event *ev);

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
};

/**
 * pl_snapshot_read() - read the snapshot files of directory @dir (any of
 * buddyinfo, pagetypeinfo, zoneinfo, vmstat; buddyinfo or zoneinfo needed).
 * Return: 0, -ENOENT if none is there, -EINVAL if a file is malformed
 * (one warning naming file and line) or a sysctl file holds a value its
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
 * pl_state_onlining() - is the kernel's free of the MAX_PAGE_ORDER block at
 * @pfn memory hotplug onlining it? True once per block of memory the
 * snapshot did not count online (positional state; hotplug frees onlined
 * memory in such blocks), false otherwise and for any other @order.
 */
bool pl_state_onlining(struct pl_loaded_state *st, unsigned long pfn, unsigned int order);

/** pl_state_release() - free the handle; the pages it held stay allocated on the machine. */
void pl_state_release(struct pl_loaded_state *st);

/* ---- the kernel's vmstat tick phase (src/trace/tick.c) ---------------- */

#define PL_TICK_BINS		100	/* 10 ms each */
#define PL_TICK_MIN_RUNS	5	/* fewer kworker drain runs: phase unknown */

/**
 * struct pl_tick_phase - per CPU, the start times (modulo one second) of
 * the trace's kworker drain runs, in PL_TICK_BINS bins; zero it to start.
 */
struct pl_tick_phase {
	unsigned int nr_cpus;
	uint32_t (*bins)[PL_TICK_BINS];
	uint64_t (*sum_us)[PL_TICK_BINS];	/* offsets within the second, in us */
	bool *in_drain;				/* the CPU's last event was a drain */
	struct pl_tick_runs {			/* each kworker drain run's start, ns */
		uint64_t *start;
		size_t nr, cap;
	} *runs;
};

/** pl_tick_phase_event() - account one event, in trace order. Return: 0 or -ENOMEM. */
int pl_tick_phase_event(struct pl_tick_phase *tp, const struct pl_trace_event *ev);
/**
 * pl_tick_phase_ns() - when in each second (ns, 0..999,999,999 of the
 * trace clock) the kernel ran CPU @cpu's vmstat_update: from its own
 * kworker drains, or, with fewer than PL_TICK_MIN_RUNS of those, from all
 * CPUs' (their ticks share one grid); -1 when the trace has none.
 */
long pl_tick_phase_ns(const struct pl_tick_phase *tp, unsigned int cpu);
/**
 * pl_tick_phase_runs() - the start (ns, trace clock) of each kworker drain
 * run on @cpu, in trace order, in *@starts (valid until the release).
 * Return: how many (0 for a CPU without any).
 */
size_t pl_tick_phase_runs(const struct pl_tick_phase *tp, unsigned int cpu,
			  const uint64_t **starts);
/** pl_tick_phase_release() - free @tp's arrays (the struct is zeroed). */
void pl_tick_phase_release(struct pl_tick_phase *tp);

/*
 * Where a trace shows no phase (no kworker decay drain), a replay runs at
 * each of these phases (ms into the second) and reports the run
 * pl_tick_medoid() picks: the figures follow the phase, by a few percent
 * on most traces and several times over where a zone sits at its high
 * watermark (untar, a fresh VM onlining memory: drain calls 1,166 with the
 * tick 20-36 ms into the second, 106-181 elsewhere, the kernel's 158), so
 * one arbitrary phase is a lottery and the typical run is the estimate.
 */
#define PL_TICK_PROBES		4
#define PL_TICK_PROBE_MS	{ 0, 250, 500, 750 }
/*
 * Where the trace shows the phase, the kernel's own tick still lands tens
 * of ms either side of it, second by second (PL_TICK_WINDOW_NS), and in a
 * second without a decay drain the trace does not say where: a replay
 * runs at the phase plus each of these (ms) and reports the typical run
 * (git: drain calls 42-113 at one phase or another from 71 to 135 ms, the
 * kernel's 111).
 */
#define PL_TICK_JITTER_MS	{ -30, -10, 10, 30 }

/**
 * pl_tick_medoid() - the run whose scored figures (PCP refills, pages per
 * refill, drain calls, pages drained, zone->lock) sit nearest the median
 * of all @n: the least sum over the figures of |ln((x + 1) / (median + 1))|;
 * the earliest run on a tie. Return: its index, or -EINVAL (one warning)
 * for a NULL @runs or an @n outside 1..PL_TICK_PROBES.
 */
int pl_tick_medoid(const struct pl_trace_score *runs, size_t n);

/* ---- frees that found the PCP busy (src/trace/pcp_busy.c) -------------- */

/**
 * struct pl_pcp_busy - the frees of a trace that went straight to the buddy
 * because the freeing CPU's pcp->lock was held (pcp_spin_trylock() failed:
 * mostly a softirq's free while its CPU was inside a PCP refill or drain).
 * The trace shows them by what follows: a page freed at a PCP order and
 * next taken from the buddy (its zone_locked or extfrag event, or a larger
 * block's that covers it), with no drain between, never reached a PCP.
 * Zero it to start; one pass over the whole trace, then pl_pcp_busy_finish().
 * @pending: per kernel pfn, 1 + the line of its PCP-order free that no event
 *           has followed yet, else 0 (4 bytes per pfn up to the highest seen;
 *           pfns from 2^32 and lines from 2^32 - 1 are not followed).
 * @lines:   the busy frees' lines, sorted by pl_pcp_busy_finish().
 */
struct pl_pcp_busy {
	uint32_t *pending;
	size_t pending_len;
	unsigned long *lines;
	size_t nr, cap;
};

/** pl_pcp_busy_event() - account one event, in trace order. Return: 0 or -ENOMEM. */
int pl_pcp_busy_event(struct pl_pcp_busy *b, const struct pl_trace_event *ev);
/** pl_pcp_busy_finish() - sort the lines found (after the last event). */
void pl_pcp_busy_finish(struct pl_pcp_busy *b);
/** pl_pcp_busy_has() - is the free on trace line @line one that went to the buddy? */
bool pl_pcp_busy_has(const struct pl_pcp_busy *b, unsigned long line);
/** pl_pcp_busy_release() - free @b's arrays (the struct is zeroed). */
void pl_pcp_busy_release(struct pl_pcp_busy *b);

/* ---- positional inference (src/trace/positional.c) -------------------- */

enum { PL_SEEN_FREE, PL_SEEN_PCP, PL_SEEN_ALLOCATED, NR_PL_SEEN };

/** struct pl_sighting - a block's first sighting: where it was at trace start. */
struct pl_sighting {
	unsigned long pfn;
	unsigned char kind;	/* PL_SEEN_* */
	unsigned char order;
	unsigned char mt;	/* the list (free list or PCP list) it was on */
	unsigned short cpu;	/* PL_SEEN_PCP: whose PCP */
	unsigned char drained;	/* PL_SEEN_PCP: first seen drained, not allocated */
};

/* pl_positional.pb_type of a pageblock the trace says nothing exact about */
#define PL_PB_UNKNOWN 0xff

/**
 * struct pl_positional - the first sightings of a trace (zero it to start).
 * @rec: @nr records in trace order. @seen: a bitmap of kernel pfns seen
 * (@seen_words words). @max_pfn: one past the highest pfn seen.
 * @by_kind: records per PL_SEEN_* kind.
 * @pb_type: per pageblock of the kernel's pfns (@pb_nr of them), its
 *           migratetype at trace start where an event states it exactly:
 *           the first mm_page_alloc_zone_locked (taken off the free list of
 *           the pageblock's type), mm_page_pcpu_drain (the pageblock's type
 *           as it was drained) or mm_page_alloc_extfrag (fallback_migratetype,
 *           the type before a claim) that touches it; else PL_PB_UNKNOWN.
 * @pb_exact: pageblocks with a type in @pb_type.
 * @pb_from: per pageblock, PL_PB_UNKNOWN or the type it had at trace start
 *            if it was the pageblock a claim below pageblock order took
 *            (a candidate: see positional.c, claim_candidate()).
 * @claims_pending: [type][fallback type] claims below pageblock order not yet
 *            matched to a pageblock; @pb_claimed: pageblocks so matched.
 * @pcp_seen: per CPU and PCP list (order_to_pindex()), the pages of the
 *            blocks first sighted on that list (PL_SEEN_PCP records).
 * @pcp_emptied: per CPU, a bit per PCP list the trace shows empty at some
 *            point: a refill of it (rmqueue_bulk() runs only on an empty
 *            list), or a drain run that moved on from it to the next list
 *            (free_pcppages_bulk() leaves a list only once it is empty).
 *            Such a list's pages at trace start all left it by then, each
 *            with an event; a list never shown empty may hold pages no
 *            event ever shows.
 * @drain_run: per CPU, 1 + the list of the drain run in progress, 0 when
 *            that CPU's last event was not a drain.
 */
struct pl_positional {
	struct pl_sighting *rec;
	size_t nr, cap;
	uint64_t *seen;
	size_t seen_words;
	unsigned long max_pfn;
	unsigned long by_kind[NR_PL_SEEN];
	unsigned char *pb_type;
	unsigned char *pb_from;
	size_t pb_nr;
	unsigned long pb_exact;
	unsigned long claims_pending[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES];
	unsigned long pb_claimed;
	unsigned long pcp_seen[PL_SNAP_MAX_CPUS][NR_PCP_LISTS];
	uint16_t pcp_emptied[PL_SNAP_MAX_CPUS];
	unsigned char drain_run[PL_SNAP_MAX_CPUS];
};

/**
 * pl_positional_event() - account one event of the trace, in order: the
 * first event that touches a block records where the block was (taken
 * from the buddy: free; allocated or drained off a PCP without a refill:
 * on that PCP; freed: allocated with that order).
 * Return: 0 or -ENOMEM.
 */
int pl_positional_event(struct pl_positional *pos, const struct pl_trace_event *ev);
/**
 * pl_positional_pcp_owners() - whose PCP each PCP sighting in the kernel
 * pfns [@start_pfn, @end_pfn) (one zone) was on at trace start, given the
 * zone's reported per-CPU counts @count[0..@nr_cpus).
 *
 * A sighting says "the CPU that drained or allocated it", which is the
 * PCP's own CPU except for drain_all_pages(): its caller drains every
 * CPU's PCP itself (since 5.19), so another CPU's pages fire on the
 * caller's CPU. A CPU whose sighted pages exceed its reported count by
 * more than its @batch took the excess off other PCPs: its latest drained
 * sightings (allocations are always local) go to CPUs whose count has room
 * beyond their own sightings, the roomiest first, as far as the room goes.
 * @owner (@pos->nr entries, filled here for the zone's PCP sightings and
 * left alone elsewhere) receives each one's CPU.
 * Return: the pages moved to another CPU.
 */
unsigned long pl_positional_pcp_owners(const struct pl_positional *pos, unsigned long start_pfn,
				       unsigned long end_pfn, const int *count, const int *batch,
				       unsigned int nr_cpus, unsigned short *owner);
/** pl_positional_release() - free the records (the struct is zeroed). */
void pl_positional_release(struct pl_positional *pos);

/**
 * pl_snapshot_config_positional() - a machine config with the kernel's pfn
 * layout, so that a trace's pfns are pagelab's: DMA32 ends where the
 * kernel's does, Normal reaches the managed pages plus slack (or the
 * highest pfn seen). Otherwise as pl_snapshot_config().
 */
void pl_snapshot_config_positional(const struct pl_snapshot *snap, const struct pl_positional *pos,
				   struct pl_config *cfg);

/**
 * pl_machine_load_positional() - level POSITIONAL: the machine from
 * pl_snapshot_config_positional() gets each sighted block where the trace
 * says it was (free in the buddy, on a CPU's PCP, or allocated with its
 * order: handed to the replay through pl_state_pretrace()), pageblock
 * types from the sightings' lists (the rest in the snapshot's
 * proportions), then the rest of the snapshot's free blocks and PCP counts
 * in memory the trace never touches, as level COUNTS places them.
 * Return: the state handle, or NULL (no memory; the machine is unusable).
 */
struct pl_loaded_state *pl_machine_load_positional(struct pl_machine *m,
						   const struct pl_snapshot *snap,
						   const struct pl_positional *pos);

/**
 * pl_state_pretrace() - the blocks a positional state loaded as allocated
 * (pfn = the kernel's, identity), for the replay to free when the trace
 * does. Return: how many; *@pfn and *@order point into the state.
 */
size_t pl_state_pretrace(const struct pl_loaded_state *st, const unsigned long **pfn,
			 const unsigned char **order);

/**
 * pl_state_pcp_sighted() - the sighted blocks a positional state put on a
 * PCP (pfn = the kernel's) and whose PCP (pl_positional_pcp_owners()), for
 * the replay to follow the kernel's PCPs from the start.
 * Return: how many; *@pfn and *@cpu point into the state.
 */
size_t pl_state_pcp_sighted(const struct pl_loaded_state *st, const unsigned long **pfn,
			    const unsigned short **cpu);

/* ---- replay (src/trace/replay.c) -------------------------------------- */

/**
 * struct pl_replay_result - the pagelab side of a replay.
 * @score:     pagelab's own tracepoints scored as a kernel trace is.
 * @warn:      counted warnings by class (replay classes).
 * @events:    events replayed.
 * @free_pages_by_order: free pages per order at the end (buddy only).
 */
struct pl_replay;

/**
 * pl_replay_create() - a replay of a trace on @m (one vCPU per trace CPU:
 * CPUs >= m->nr_cpus are warned about and their events skipped).
 * @st: the loaded state, or NULL (frees of pre-trace pages are then
 *      warned about and skipped).
 * Return: the replay or NULL (no memory).
 */
struct pl_replay *pl_replay_create(struct pl_machine *m, struct pl_loaded_state *st);

/**
 * pl_replay_event() - replay one event: allocations and frees through the
 * mm API on vCPU @ev->cpu, pl_vmstat_tick() on every vCPU once per second
 * of trace time, vmap areas through the vmalloc layer; kernel-internal
 * events (refills, drains, extfrag) are not replayed, pagelab makes its own.
 * Return: 0, or a positive enum pl_trace_warn + 1 when the event was
 * skipped with a counted warning.
 */
int pl_replay_event(struct pl_replay *r, const struct pl_trace_event *ev);

/**
 * pl_replay_set_emit() - print pagelab's own tracepoints to @f as raw
 * tracefs text (NULL: off).
 */
void pl_replay_set_emit(struct pl_replay *r, FILE *f);

/**
 * pl_replay_set_pfn_limit() - kernel pfns at or above @limit (the end of
 * the traced machine's memory) are counted pfn_out_of_range and skipped.
 * 0: no limit.
 */
void pl_replay_set_pfn_limit(struct pl_replay *r, unsigned long limit);
/**
 * pl_replay_set_tick_phase() - tick vCPU @cpu at @phase_ns into each second
 * of the trace clock (pl_tick_phase_ns()), from before the first event;
 * by default every vCPU ticks one second after the first event, then every
 * second. Return: 0, or -EINVAL (no such vCPU, a phase outside a second,
 * or the replay already started) with nothing changed.
 */
int pl_replay_set_tick_phase(struct pl_replay *r, unsigned int cpu, long phase_ns);

/*
 * The kernel's vmstat tick on a CPU lands up to tens of ms either side of
 * its phase, second by second: round_jiffies() puts the expiry on the
 * whole-second jiffies grid and the timer wheel's granularity (8 jiffies
 * at that range: 32 ms at HZ=250) moves it on (git: decay drains at 82-142
 * ms into their seconds). A kworker drain run this near a vCPU's phase is
 * that second's tick.
 */
#define PL_TICK_WINDOW_NS	40000000L

/**
 * pl_replay_set_tick_times() - tick vCPU @cpu where the kernel's own tick
 * shows: in a second with a time of @times (ascending, trace clock ns; the
 * kernel's kworker drain runs, pl_tick_phase_runs()) within
 * PL_TICK_WINDOW_NS of the vCPU's phase, at that time rather than at the
 * phase. Needs a phase (pl_replay_set_tick_phase()) to act. @times is
 * copied. Return: 0, or -EINVAL (no such vCPU, @times out of order or
 * NULL with @n, the replay already started) or -ENOMEM, nothing changed.
 */
int pl_replay_set_tick_times(struct pl_replay *r, unsigned int cpu, const uint64_t *times,
			     size_t n);
/**
 * pl_replay_set_pcp_busy() - replay the frees @busy lists (finished, and
 * kept alive by the caller until the replay ends) as the kernel ran them:
 * straight to the buddy, pl_free_pages_pcp_busy(). NULL: every free of a
 * PCP order goes to its CPU's PCP.
 */
void pl_replay_set_pcp_busy(struct pl_replay *r, const struct pl_pcp_busy *busy);

/**
 * pl_replay_set_timeline() - call @fn(@ctx, t_seconds) once per second of
 * trace time, after the tick (for timelines).
 */
void pl_replay_set_timeline(struct pl_replay *r, void (*fn)(void *ctx, unsigned long t), void *ctx);

/** pl_replay_score() - pagelab's side so far (its tracepoints, scored). */
const struct pl_trace_score *pl_replay_score(const struct pl_replay *r);
/** pl_replay_warnings() - the replay's counted warnings by class. */
const unsigned long *pl_replay_warnings(const struct pl_replay *r);

/**
 * pl_replay_destroy() - end the replay. The blocks still mapped stay
 * allocated on the machine (they are the trace's live memory), unless
 * @free_live, which frees them.
 */
void pl_replay_destroy(struct pl_replay *r, bool free_live);

/** pl_free_pages_by_order() - free PAGES per order in @m's buddy, all zones. */
void pl_free_pages_by_order(struct pl_machine *m, unsigned long out[NR_PAGE_ORDERS]);

#endif /* PAGELAB_TRACE_H */
