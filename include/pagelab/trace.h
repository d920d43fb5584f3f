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
#include "compaction.h"

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
	/* memory pressure: compaction/, migrate/ and vmscan/ (PL_TRACE_PRESSURE_FIRST on) */
	PL_TRACE_COMPACT_TRY,		/* mm_compaction_try_to_compact_pages: direct compaction */
	PL_TRACE_COMPACT_BEGIN,		/* mm_compaction_begin: compact_zone() starts */
	PL_TRACE_COMPACT_END,		/* mm_compaction_end: ... and ends (status) */
	PL_TRACE_COMPACT_ISOLATE_MIGRATE, /* mm_compaction_isolate_migratepages */
	PL_TRACE_COMPACT_ISOLATE_FREE,	/* mm_compaction_isolate_freepages */
	PL_TRACE_COMPACT_FAST_ISOLATE_FREE, /* mm_compaction_fast_isolate_freepages */
	PL_TRACE_COMPACT_MIGRATEPAGES,	/* mm_compaction_migratepages: one migrate_pages() */
	PL_TRACE_COMPACT_SUITABLE,	/* mm_compaction_suitable */
	PL_TRACE_COMPACT_FINISHED,	/* mm_compaction_finished */
	PL_TRACE_COMPACT_DEFERRED,	/* mm_compaction_deferred */
	PL_TRACE_COMPACT_DEFER,		/* mm_compaction_defer_compaction */
	PL_TRACE_COMPACT_DEFER_RESET,	/* mm_compaction_defer_reset */
	PL_TRACE_WAKEUP_KCOMPACTD,	/* mm_compaction_wakeup_kcompactd */
	PL_TRACE_KCOMPACTD_WAKE,	/* mm_compaction_kcompactd_wake */
	PL_TRACE_KCOMPACTD_SLEEP,	/* mm_compaction_kcompactd_sleep */
	PL_TRACE_MIGRATE_PAGES,		/* migrate/mm_migrate_pages */
	PL_TRACE_MIGRATE_PAGES_START,	/* migrate/mm_migrate_pages_start */
	PL_TRACE_WAKEUP_KSWAPD,		/* vmscan/mm_vmscan_wakeup_kswapd */
	PL_TRACE_KSWAPD_WAKE,		/* vmscan/mm_vmscan_kswapd_wake */
	PL_TRACE_KSWAPD_SLEEP,		/* vmscan/mm_vmscan_kswapd_sleep */
	PL_TRACE_DIRECT_RECLAIM_BEGIN,	/* vmscan/mm_vmscan_direct_reclaim_begin */
	PL_TRACE_DIRECT_RECLAIM_END,	/* vmscan/mm_vmscan_direct_reclaim_end */
	NR_PL_TRACE_TYPES
};

#define PL_TRACE_PRESSURE_FIRST PL_TRACE_COMPACT_TRY

/* enum pl_compact_result (compaction.h): mm_compaction_end's status=, _suitable's ret= */
extern const char *const pl_compact_result_names[NR_PL_COMPACT_RESULTS];

/* The kernel's enum migrate_reason, as mm_migrate_pages prints it (reason=). */
enum pl_migrate_reason {
	PL_MR_COMPACTION, PL_MR_MEMORY_FAILURE, PL_MR_MEMORY_HOTPLUG, PL_MR_SYSCALL,
	PL_MR_MEMPOLICY_MBIND, PL_MR_NUMA_MISPLACED, PL_MR_CONTIG_RANGE, PL_MR_LONGTERM_PIN,
	PL_MR_DEMOTION, PL_MR_DAMON, NR_PL_MR_REASONS
};
extern const char *const pl_migrate_reason_names[NR_PL_MR_REASONS];

extern const char *const pl_trace_type_names[NR_PL_TRACE_TYPES];

extern const char *const pl_trace_type_names[NR_PL_TRACE_TYPES];

/**
 * struct pl_trace_event - one parsed event.
 * @type:   which event.
 * @cpu:    the CPU column.
 * @ts_ns:  timestamp in nanoseconds.
 * @line:   input line number (1-based).
 * @pfn ... @change_ownership: the kmem fields (PL_KMEM_FIELDS, mm_types.h);
 *          @pfn is -1UL for a failed mm_page_alloc, @gfp mm_page_alloc's
 *          gfp_flags mapped onto pagelab's gfp_t bits.
 * @fragmenting: extfrag's, recomputed as fallback_order < pageblock_order
 *          (the tracepoint's own definition; perf prints a wrong value for it).
 * @va_start, @size: vmap area start and size (alloc/free_vmap_area);
 * @npurged: purge_vmap_area_lazy's num_purged. @failed: alloc_vmap_area.
 * @nr_lazy: free_vmap_area_noflush's nr_lazy, the kernel's vmap_lazy_nr
 *          (pages) after the free; -1 (or 0 from a zeroed struct) absent.
 * @kworker: the task column names a kworker (kworker/...): workqueue work,
 *          such as vmstat_update, ran the event.
 * @kswapd: the task column names kswapd (kswapd0, kswapd1...): its reclaim
 *          freed the page.
 * @pid, @comm: the task that ran the event (the task column of a text
 *          trace; common_pid and the saved command lines of a trace.dat;
 *          "<...>" where the trace does not name it, -1 where a text line
 *          has no pid).
 * @command: the task is the recorded command or a descendant of it (set
 *          only after pl_trace_set_command_pid(); the reader follows the
 *          trace's sched_process_fork events).
 * The memory-pressure events (types from PL_TRACE_PRESSURE_FIRST) also fill
 * these, from @start_pfn on; the parser writes them for those events only (a
 * page event leaves them as they were; direct compaction and reclaim are a
 * task's, @pid, which may change CPU):
 * @start_pfn, @end_pfn, @nr_scanned, @nr_taken: an isolate event's range
 *          and counts (for a freepages event, pages taken off the buddy).
 * @migrate_pfn, @free_pfn, @zone_start, @zone_end: compact_zone()'s
 *          scanners at mm_compaction_begin/_end.
 * @sync:   compaction's mode=sync (1) or async (0); migrate events' mode
 *          (MIGRATE_ASYNC 0, _SYNC_LIGHT 1, _SYNC 2).
 * @status: mm_compaction_end's status, _suitable's and _finished's ret
 *          (enum pl_compact_result).
 * @priority: mm_compaction_try_to_compact_pages's priority.
 * @nr_succeeded, @nr_failed: mm_migrate_pages's nr_succeeded/nr_failed
 *          and mm_compaction_migratepages's nr_migrated/nr_failed.
 * @reason: mm_migrate_pages(_start)'s reason (enum pl_migrate_reason).
 * @order_failed, @considered, @defer_limit: the deferral events' fields.
 * @nr_reclaimed: mm_vmscan_direct_reclaim_end's nr_reclaimed.
 * @order also holds the order of the pressure events that print one
 * (-1: proactive compaction's mm_compaction_finished).
 */
struct pl_trace_event {
	enum pl_trace_type type;
	unsigned int cpu;
	uint64_t ts_ns;
	unsigned long line;
	PL_KMEM_FIELDS;		/* pfn ... change_ownership (mm_types.h) */
	int fragmenting;
	int failed;
	unsigned long va_start;
	unsigned long size;
	unsigned long npurged;
	long nr_lazy;	/* free_vmap_area_noflush: the kernel's vmap_lazy_nr after it; -1 absent */
	bool kworker;
	bool kswapd;
	bool command;
	int pid;
	char comm[16];
	unsigned long start_pfn, end_pfn, nr_scanned, nr_taken;
	unsigned long migrate_pfn, free_pfn, zone_start, zone_end;
	int sync, status, priority, reason, order_failed;
	unsigned int considered;
	unsigned long defer_limit;
	unsigned long nr_succeeded, nr_failed, nr_reclaimed;
};

/*
 * What a kernel can print, checked at the parser (a line outside is a
 * malformed line, counted with its number): pfns below 2^40 (52 physical
 * address bits, 4 KiB pages) or -1 (a failed allocation); CPUs below the
 * kernel's largest NR_CPUS (CONFIG_MAXSMP); migratetypes below the
 * kernel's MIGRATE_TYPES with CONFIG_CMA; orders up to MAX_PAGE_ORDER;
 * timestamps whose nanoseconds fit 64 bits; and no event more than
 * PL_TRACE_MAX_GAP_S after the one before it (a trace that idles longer
 * is two traces, or its clock jumped).
 */
#define PL_TRACE_PFN_LIMIT		(1UL << 40)
#define PL_TRACE_MAX_CPUS		8192
#define PL_TRACE_MAX_MIGRATETYPE	5
#define PL_TRACE_MAX_GAP_S		(7UL * 24 * 3600)
/*
 * Arrays indexed by kernel pfn (the positional pass's, the replay's) cover
 * the snapshot's span, and at most this many pfns (1 TiB of 4 KiB pages)
 * without one: their memory follows a machine's size, never a pfn's value.
 */
#define PL_TRACE_DENSE_SPAN		(1UL << 28)

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

/* ---- the streaming reader (src/trace/reader.c, parse.c) ------------------ */

enum pl_trace_format { PL_TRACE_FMT_UNKNOWN, PL_TRACE_FMT_FTRACE, PL_TRACE_FMT_TRACE_CMD,
		       PL_TRACE_FMT_PERF, PL_TRACE_FMT_TRACE_DAT };
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
 * @forks:        sched_process_fork events read (followed, not returned).
 * @dat_version:  a trace.dat's file version (6 or 7), else 0.
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
	unsigned long forks;
	int dat_version;
};

struct pl_trace_reader;

/**
 * pl_trace_open() - open a trace file for streaming; gzip, zstd and xz are
 * recognised by their magic bytes and decompressed on the fly. A trace-cmd
 * trace.dat (versions 6 and 7; plain, or whole inside gzip/zstd/xz) is
 * recognised by its magic and read in binary (src/trace/tracedat.c).
 * Return: the reader, or NULL with errno set (ENOENT, EACCES, ENOMEM, or
 * EINVAL for a trace.dat pagelab cannot read: pl_trace_open_error() says
 * why in one line).
 */
struct pl_trace_reader *pl_trace_open(const char *path);

/**
 * pl_trace_open_error() - why this thread's last pl_trace_open() or
 * pl_trace_open_mem() failed, one line ("" when it was not the file's
 * content: see errno).
 */
const char *pl_trace_open_error(void);

/**
 * pl_trace_set_command_pid() - mark the events of task @pid and of every
 * task the trace shows it forking (transitively) with ev->command; call
 * before the first pl_trace_next(). Return: 0 or -ENOMEM.
 */
int pl_trace_set_command_pid(struct pl_trace_reader *r, int pid);

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
 * marker, an event pagelab does not read: *@ev untouched), 2 a
 * sched_process_fork (only @ev->pid, the parent, and @ev->size, the
 * child's pid, are set), -1 malformed.
 * @stats is updated with header numbers and LOST markers (may be NULL).
 */
int pl_trace_parse_line(const char *line, size_t len, struct pl_trace_event *ev,
			struct pl_trace_stats *stats);

/* ---- who allocated (src/trace/tasks.c) -------------------------------- */

/**
 * struct pl_task_stat - one task's page events in a trace.
 * @pid, @comm:  the task (the comm of its latest event).
 * @command:     a task of the recorded command (ev->command).
 * @allocs, @frees: successful mm_page_alloc, and mm_page_free(+_batched).
 * @alloc_pages, @free_pages: their pages (2^order each).
 */
struct pl_task_stat {
	int pid;
	char comm[16];
	bool command;
	unsigned long allocs, frees, alloc_pages, free_pages;
};

/**
 * struct pl_task_table - page allocations and frees by task (zero it to
 * start). @total sums every task, @command the recorded command's tasks.
 */
struct pl_task_table {
	struct pl_task_stat *t;
	size_t nr, cap;
	int32_t *slot;		/* open addressing by pid: index + 1 */
	size_t mask;
	struct pl_task_stat total, command;
};

/** pl_task_table_event() - account one event. Return: 0 or -ENOMEM. */
int pl_task_table_event(struct pl_task_table *tt, const struct pl_trace_event *ev);
/**
 * pl_task_table_sort() - order @tt->t by allocations plus frees, most
 * first (pid on a tie); the pid index is rebuilt.
 */
void pl_task_table_sort(struct pl_task_table *tt);
/** pl_task_table_release() - free @tt's arrays (the struct is zeroed). */
void pl_task_table_release(struct pl_task_table *tt);

/**
 * pl_task_match() - is @ev's task one of @spec: a comma-separated list of
 * pids, comms (exact) and the word "command" (the recorded command's
 * tasks)? Return: false for a NULL or empty @spec.
 */
bool pl_task_match(const char *spec, const struct pl_trace_event *ev);

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
 * @pr:            memory pressure (struct pl_trace_pressure).
 */
#define PL_SCORE_MAX_CPUS 1024

/*
 * Direct compaction and reclaim are a task's; a small table keyed by pid
 * follows each task's open try_to_compact_pages() (pid % size; a collision
 * of two tasks compacting at once costs one stall's attribution).
 */
#define PL_SCORE_TASKS 256

/**
 * struct pl_trace_pressure - what a trace shows of compaction, migration
 * and reclaim, by the kernel's vmstat definitions where it can:
 * @compact_stalls: __alloc_pages_direct_compact() calls that compacted
 *                 (COMPACTSTALL): a try_to_compact_pages event whose task
 *                 then begins a compact_zone() (all zones skipped or
 *                 deferred is COMPACT_SKIPPED, not a stall).
 * @compact_successes: stalls in which a compact_zone() of that task ended
 *                 status=success (COMPACTSUCCESS, less the rare page
 *                 another task takes first); @compact_failures the rest.
 * @compact_runs:  compact_zone() runs (mm_compaction_begin), direct, by
 *                 kcompactd and proactive; @compact_runs_success their
 *                 mm_compaction_end status=success.
 * @compact_migrate_scanned, @compact_free_scanned: nr_scanned of the
 *                 isolate_migratepages and (fast_)isolate_freepages events.
 * @compact_isolated_migrate, @compact_isolated_free: their nr_taken; the
 *                 sum is vmstat's compact_isolated.
 * @compact_migrated, @compact_migrate_failed: mm_compaction_migratepages.
 * @pgmigrate_success, @pgmigrate_fail: mm_migrate_pages, every reason
 *                 (vmstat's pgmigrate_*); @contig_migrated: reason
 *                 contig_range's successes.
 * @compact_deferred: mm_compaction_deferred (a zone skipped for deferral).
 * @kcompactd_wakes: mm_compaction_kcompactd_wake; @wakeup_kcompactd its
 *                 wakeups.
 * @kswapd_wakes:  mm_vmscan_kswapd_wake (a balance_pgdat() run);
 *                 @wakeup_kswapd: mm_vmscan_wakeup_kswapd.
 * @kswapd_freed_pages: pages of the mm_page_free events of kswapd's task:
 *                 what its reclaim freed (vmstat's pgsteal_kswapd, less
 *                 pages freed later, e.g. by a pagevec).
 * @direct_reclaims, @direct_reclaimed: mm_vmscan_direct_reclaim_begin and
 *                 the nr_reclaimed of _end (vmstat's pgsteal_direct).
 * @alloc_failures, @alloc_failures_high_order: failed mm_page_alloc, and
 *                 those of order > 0.
 */
struct pl_trace_pressure {
	unsigned long compact_stalls, compact_successes, compact_failures;
	unsigned long compact_runs, compact_runs_success;
	unsigned long compact_migrate_scanned, compact_free_scanned;
	unsigned long compact_isolated_migrate, compact_isolated_free;
	unsigned long compact_migrated, compact_migrate_failed;
	unsigned long pgmigrate_success, pgmigrate_fail, contig_migrated;
	unsigned long compact_deferred, kcompactd_wakes, wakeup_kcompactd;
	unsigned long kswapd_wakes, wakeup_kswapd, kswapd_freed_pages;
	unsigned long direct_reclaims, direct_reclaimed;
	unsigned long alloc_failures, alloc_failures_high_order;
	/* per task: 0 none, 1 try_to_compact_pages seen, 2 a stall, 3 a stall that succeeded */
	int task_pid[PL_SCORE_TASKS];
	signed char task_state[PL_SCORE_TASKS];
};

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
	struct pl_trace_pressure pr;
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
/**
 * pl_trace_score_pressure_finish() - at the end of the stream: the direct
 * compactions still open count as failed or succeeded by what they showed.
 */
void pl_trace_score_pressure_finish(struct pl_trace_score *s);
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

/** pl_trace_print_gfp() - @gfp as the kernel prints gfp_flags (names joined by |). */
void pl_trace_print_gfp(FILE *f, gfp_t gfp);

#endif /* PAGELAB_TRACE_H */
