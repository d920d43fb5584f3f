/* SPDX-License-Identifier: MIT */
/*
 * trace.h - real workloads: read a kernel's page-allocator trace and score
 * it the way the kernel's tracepoints count.
 *
 *   pl_trace_open()  -> pl_trace_next() ... : a streaming parser of raw
 *       tracefs text, `trace-cmd report` text and `perf script` text, plain
 *       or gzip/zstd/xz compressed; memory bounded whatever the length.
 *   struct pl_trace_score : the kernel-side figures computed from a stream
 *       of events (refill runs, drain runs, fallbacks, a zone->lock
 *       estimate), fed with kernel events or with pagelab's own tracepoints.
 *
 * The kernel's /proc state read next to a trace is in snapshot.h; the events
 * replayed on a machine in replay.h. The layer sits above mm/ and vmalloc/
 * and below bench/; it changes a machine only through the mm and vmalloc APIs.
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

#endif /* PAGELAB_TRACE_H */
