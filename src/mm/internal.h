/* SPDX-License-Identifier: MIT */
/*
 * internal.h - declarations shared between the files of src/mm, grouped by
 * the file that defines them (the kernel's mm/internal.h).
 */
#ifndef PAGELAB_MM_INTERNAL_H
#define PAGELAB_MM_INTERNAL_H

#include <errno.h>
#include "pagelab/compaction.h"
#include "pagelab/mm.h"

/* alloc_flags, as mm/internal.h */
#define ALLOC_WMARK_MIN		WMARK_MIN
#define ALLOC_WMARK_LOW		WMARK_LOW
#define ALLOC_WMARK_HIGH	WMARK_HIGH
#define ALLOC_NO_WATERMARKS	0x04
#define ALLOC_WMARK_MASK	(ALLOC_NO_WATERMARKS - 1)
#define ALLOC_OOM		0x08
#define ALLOC_NON_BLOCK		0x10
#define ALLOC_MIN_RESERVE	0x20
#define ALLOC_NOFRAGMENT	0x100
#define ALLOC_HIGHATOMIC	0x200
#define ALLOC_KSWAPD		0x800
#define ALLOC_RESERVES		(ALLOC_NON_BLOCK | ALLOC_MIN_RESERVE | ALLOC_HIGHATOMIC | ALLOC_OOM)

/* fpi_t: free page internal flags */
typedef unsigned int fpi_t;
#define FPI_NONE	0x0u
#define FPI_TO_TAIL	0x2u
#define FPI_PREPARED	0x4u	/* free_pages_prepare() already ran (page_contig.c) */
/* pagelab's own: this CPU's pcp->lock is held, as pcp_spin_trylock() finds it */
#define FPI_PL_PCP_BUSY	0x8u

static inline void pl_count(enum pl_vm_event item, unsigned long delta)
{
	pl_count_events(&pl_this.cpu->events, item, delta);
}

/*
 * pl_hooks_off() - this call does only the baseline's work: no virtual time
 * on the calling thread and none of @m's hooks (m->hooks) on. One load of
 * each, read once per call by the entry points, which then run the
 * page_alloc_hot.h templates without their hooks.
 */
static __always_inline bool pl_hooks_off(const struct pl_machine *m)
{
	return !((uintptr_t)pl_vt_cur | READ_ONCE(m->hooks));
}

/*
 * The page_alloc_hot.h templates' constant @hooks: false (0) runs the
 * baseline's path with every hook compiled out; true (PL_HV_ALL) has every
 * hook testing itself; PL_HV_DESIGN is for a machine whose only hooks are
 * design switches (pl_hooks_design_only()): the switches' tests stay (they
 * read "hooks && design_...()"), while virtual time, tracepoints, fault
 * injection, debug checks and lock_stat compile away as in the baseline's
 * variant (they read "hooks & PL_HV_ALL"). A template that takes @hooks as
 * a bool treats PL_HV_DESIGN as true: slower, never wrong.
 */
#define PL_HV_ALL	1u
#define PL_HV_DESIGN	2u

/*
 * pl_hooks_design_only() - after pl_hooks_off() said no: this call's only
 * hooks are @m's design switches (no virtual time on this thread: a vCPU
 * pointer is never the bit alone).
 */
static __always_inline bool pl_hooks_design_only(const struct pl_machine *m)
{
	return ((uintptr_t)pl_vt_cur | READ_ONCE(m->hooks)) == PL_HOOK_DESIGN;
}

/* pl_count() with its virtual-time hook as a parameter (spin_lock_h()). */
static __always_inline void pl_count_h(enum pl_vm_event item, unsigned long delta,
				       const bool hooks)
{
	pl_count_events_h(&pl_this.cpu->events, item, delta, hooks);
}

/*
 * A loop's counter in two halves: pl_count_vt() charges each event to
 * virtual time where it happens (the clock must advance in order), and
 * pl_count_only() adds the loop's total to the counter once after it.
 */
static inline void pl_count_vt(enum pl_vm_event item, unsigned long delta)
{
	if (unlikely(pl_vt_cur))
		__pl_vt_event((unsigned int)item, delta);
}

static inline void pl_count_only(enum pl_vm_event item, unsigned long delta)
{
	struct pl_cpu_events *e = &pl_this.cpu->events;

	WRITE_ONCE(e->ev[item], READ_ONCE(e->ev[item]) + delta);
}

/* pl_count2() - two counters at once, as pl_count3(). */
static __always_inline void pl_count2_h(enum pl_vm_event a, unsigned long da, enum pl_vm_event b,
					unsigned long db, const bool hooks)
{
	struct pl_cpu_events *e = &pl_this.cpu->events;

	if (hooks && unlikely(pl_vt_cur)) {
		__pl_vt_event((unsigned int)a, da);
		__pl_vt_event((unsigned int)b, db);
	}
	WRITE_ONCE(e->ev[a], READ_ONCE(e->ev[a]) + da);
	WRITE_ONCE(e->ev[b], READ_ONCE(e->ev[b]) + db);
}

static inline void pl_count2(enum pl_vm_event a, unsigned long da, enum pl_vm_event b,
			     unsigned long db)
{
	pl_count2_h(a, da, b, db, true);
}

/*
 * pl_count3() - three counters at once (the hot paths' block, pages and
 * zone counts): one test of the virtual-time hook and one load of the
 * vCPU instead of three of each.
 */
static __always_inline void pl_count3_h(enum pl_vm_event a, unsigned long da,
					enum pl_vm_event b, unsigned long db,
					enum pl_vm_event c, unsigned long dc, const bool hooks)
{
	struct pl_cpu_events *e = &pl_this.cpu->events;

	if (hooks && unlikely(pl_vt_cur)) {
		__pl_vt_event((unsigned int)a, da);
		__pl_vt_event((unsigned int)b, db);
		__pl_vt_event((unsigned int)c, dc);
	}
	WRITE_ONCE(e->ev[a], READ_ONCE(e->ev[a]) + da);
	WRITE_ONCE(e->ev[b], READ_ONCE(e->ev[b]) + db);
	WRITE_ONCE(e->ev[c], READ_ONCE(e->ev[c]) + dc);
}

static inline void pl_count3(enum pl_vm_event a, unsigned long da, enum pl_vm_event b,
			     unsigned long db, enum pl_vm_event c, unsigned long dc)
{
	pl_count3_h(a, da, b, db, c, dc, true);
}

static inline unsigned long pfn_to_pageblock_idx(const struct zone *zone, unsigned long pfn)
{
	return (pfn - zone_pageblock_base(zone)) >> pageblock_order;
}

/* zone_page_state_add(): into the zone's counter itself (atomic: folds run without zone->lock). */
static inline void zone_page_state_add(long x, struct zone *zone, enum zone_stat_item item)
{
	__atomic_fetch_add(&zone->vm_stat[item], x, __ATOMIC_RELAXED);
}

/* mm/zone_stat.c: the counters' per-CPU diffs (see its comment) */

/**
 * __mod_zone_page_state() - add @delta to this vCPU's diff of @item in
 * @zone; the diff goes to the counter when it passes stat_threshold.
 * Context: the caller's vCPU only (usually under zone->lock); without a
 * vCPU of the zone's machine, straight to the counter.
 */
void __mod_zone_page_state_slow(struct zone *zone, enum zone_stat_item item, long delta);

static inline void __mod_zone_page_state(struct zone *zone, enum zone_stat_item item, long delta)
{
	struct per_cpu_zonestat *pz;
	long x;

	/* inline: it runs on every free-list add and delete under zone->lock */
	if (unlikely(!pl_this.cpu || pl_this.machine != zone->machine || !zone->per_cpu_zonestats)) {
		__mod_zone_page_state_slow(zone, item, delta);
		return;
	}
	pz = &zone->per_cpu_zonestats[pl_this.cpu->id];
	x = delta + pz->vm_stat_diff[item];
	if (unlikely(x > pz->stat_threshold || -x > pz->stat_threshold)) {
		zone_page_state_add(x, zone, item);
		x = 0;
	}
	WRITE_ONCE(pz->vm_stat_diff[item], (int8_t)x);
}
/** pl_calculate_normal_threshold() - calculate_normal_threshold() for a zone of @managed_pages. */
int pl_calculate_normal_threshold(unsigned long managed_pages, unsigned int nr_cpus);
/**
 * pl_refresh_zone_stat_thresholds() - refresh_zone_stat_thresholds(): every
 * CPU's stat_threshold and the zones' percpu_drift_mark, from the managed
 * pages and watermarks. Context: no allocation running on @m.
 */
void pl_refresh_zone_stat_thresholds(struct pl_machine *m);
/**
 * pl_refresh_cpu_vm_stats() - fold this vCPU's diffs of @zone into its
 * counters (refresh_cpu_vm_stats()'s part for one zone).
 * Return: the number of counters changed.
 */
int pl_refresh_cpu_vm_stats(struct zone *zone);

enum rmqueue_mode { RMQUEUE_NORMAL, RMQUEUE_CLAIM, RMQUEUE_STEAL };

/* pcp_allowed_order(), and the machine has per-CPU lists at all. */
static inline bool pcp_use(const struct zone *zone, unsigned int order)
{
	return pcp_allowed_order(order) && !zone->machine->config.pcp_disabled;
}

static inline struct per_cpu_pages *this_cpu_pcp(const struct zone *zone)
{
	return &zone->per_cpu_pageset[pl_this.cpu->id];
}

static inline bool zone_test_flag(const struct zone *zone, enum zone_flags bit)
{
	return READ_ONCE(zone->flags) & (1UL << bit);
}

static inline void zone_set_flag(struct zone *zone, enum zone_flags bit)
{
	__atomic_fetch_or(&zone->flags, 1UL << bit, __ATOMIC_RELAXED);
}

static inline void zone_clear_flag(struct zone *zone, enum zone_flags bit)
{
	__atomic_fetch_and(&zone->flags, ~(1UL << bit), __ATOMIC_RELAXED);
}

/* Clear @bit; return whether it was set (one of concurrent callers wins). */
static inline bool zone_test_and_clear_flag(struct zone *zone, enum zone_flags bit)
{
	return __atomic_fetch_and(&zone->flags, ~(1UL << bit), __ATOMIC_RELAXED) & (1UL << bit);
}

/*
 * pl_trace() - fire tracepoint @tp with the fields of the event (a
 * compound literal, the rest of the arguments) when a sink is set. A macro
 * so that the event is built only then: off, the cost is one load and a
 * predicted branch, as a static key.
 */
#define pl_trace(m, tp, ...)							\
	do {									\
		const struct pl_machine *__tm = (m);				\
										\
		if (unlikely(__tm->tp_fn))					\
			__pl_trace(__tm, (tp), __VA_ARGS__);			\
	} while (0)

static inline void __pl_trace(const struct pl_machine *m, enum pl_tp tp, struct pl_tp_event ev)
{
	ev.tp = tp;
	ev.cpu = pl_this.cpu->id;
	m->tp_fn(m->tp_ctx, &ev);
}

/* A pageblock's flags byte as its migratetype (the isolate bit wins). */
static inline int pb_flags_to_mt(unsigned int flags)
{
	return (flags & PB_migrate_isolate) ? MIGRATE_ISOLATE : (int)(flags & PB_migratetype_mask);
}

/* get_pfnblock_migratetype() of a pfn of @zone, inline. */
static inline int get_pfnblock_migratetype_zone(const struct zone *zone, unsigned long pfn)
{
	return pb_flags_to_mt(READ_ONCE(zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)]));
}

/* mm/page_alloc.c */
void set_pageblock_migratetype(struct page *page, int migratetype);
int get_pfnblock_migratetype(const struct page *page, unsigned long pfn);
void __free_one_page(struct page *page, unsigned long pfn, struct zone *zone,
		     unsigned int order, int migratetype, fpi_t fpi_flags);
void free_one_page(struct zone *zone, struct page *page, unsigned long pfn,
		   unsigned int order, fpi_t fpi_flags);
void del_page_from_free_list(struct page *page, struct zone *zone, unsigned int order,
			     int migratetype);
struct page *__rmqueue(struct zone *zone, unsigned int order, int migratetype,
		       unsigned int alloc_flags, enum rmqueue_mode *mode);
bool check_new_page_bad(struct page *page);
bool zone_watermark_ok(const struct zone *z, unsigned int order, unsigned long mark,
		       int highest_zoneidx, unsigned int alloc_flags);
/*
 * zone_watermark_ok_safe() - zone_watermark_ok() for kswapd's balance
 * checks: below percpu_drift_mark, with the CPUs' unfolded diffs counted
 * (zone_page_state_snapshot()).
 */
bool zone_watermark_ok_safe(const struct zone *z, unsigned int order, unsigned long mark,
			    int highest_zoneidx);

/* @page is a struct page of @m's memmap (bad-input checks of every entry). */
static inline bool pl_page_in_machine(const struct pl_machine *m, const struct page *page)
{
	uintptr_t off = (uintptr_t)page - (uintptr_t)m->mem_map;

	return (uintptr_t)page >= (uintptr_t)m->mem_map && off % sizeof(struct page) == 0 &&
	       off / sizeof(struct page) < m->max_pfn;
}

void bad_page(struct page *page, const char *reason);
void free_page_is_bad_report(struct page *page);
bool free_pages_prepare_tails(struct page *page, unsigned int order);
void __free_frozen_pages(struct page *page, unsigned int order, fpi_t fpi_flags);
void split_large_buddy(struct zone *zone, struct page *page, unsigned long pfn,
		       unsigned int order, fpi_t fpi);
unsigned long __move_freepages_block(struct zone *zone, unsigned long start_pfn,
				     int old_mt, int new_mt);
long move_freepages_block(struct zone *zone, struct page *page, int old_mt, int new_mt);
void move_to_free_list(struct page *page, struct zone *zone, unsigned int order, int old_mt,
		       int new_mt);
void change_pageblock_range(struct page *page, unsigned int order, int migratetype);
struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int migratetype);
struct page *get_page_from_freelist(struct pl_machine *m, gfp_t gfp, unsigned int order,
				    unsigned int alloc_flags, int highest_zoneidx, int migratetype);
struct page *zonelist_walk(struct pl_machine *m, gfp_t gfp, unsigned int order,
			   unsigned int alloc_flags, int highest_zoneidx, int migratetype,
			   int zi_start);
struct page *rmqueue_buddy(struct zone *zone, unsigned int order, unsigned int alloc_flags,
			   int migratetype);
/* rmqueue_buddy() and free_one_page() for the variants without hooks (page_alloc_hot.h) */
struct page *rmqueue_buddy_nohooks(struct zone *zone, unsigned int order,
				   unsigned int alloc_flags, int migratetype);
void free_one_page_nohooks(struct zone *zone, struct page *page, unsigned long pfn,
			   unsigned int order, fpi_t fpi_flags);

/*
 * next_buddy_in_range() - the first free block (PageBuddy head) at or after
 * *@pfn and below @end, with its order in *@order; *@pfn is left at it.
 * Return: the head page, or NULL if there is none.
 */
static inline struct page *next_buddy_in_range(unsigned long *pfn, unsigned long end,
					       unsigned int *order)
{
	for (; *pfn < end; (*pfn)++) {
		struct page *page = pfn_to_page(*pfn);

		if (PageBuddy(page)) {
			*order = buddy_order(page);
			return page;
		}
	}
	return NULL;
}

/*
 * for_each_buddy_in_range() - each free block whose head lies in [@start,
 * @end), lowest first, as the kernel's pageblock walks step: a free block
 * is passed whole (2^order pages), any other page one at a time. The order
 * is read before the body runs, so the body may take the block off its
 * free list.
 */
#define for_each_buddy_in_range(page, order, pfn, start, end)				\
	for ((pfn) = (start); ((page) = next_buddy_in_range(&(pfn), (end), &(order)));	\
	     (pfn) += 1UL << (order))

static inline struct page *get_page_from_free_area(struct free_area *area, int migratetype)
{
	return list_first_entry_or_null(&area->free_list[migratetype], struct page, buddy_list);
}

/* mm/page_alloc_slowpath.c */
struct page *__alloc_pages_slowpath(struct pl_machine *m, gfp_t gfp, unsigned int order,
				    int highest_zoneidx, int migratetype);
void reserve_highatomic_pageblock(struct page *page, unsigned int order, struct zone *zone);
bool boost_watermark(struct zone *zone);
void wakeup_kswapd(struct zone *zone, unsigned int order, int highest_zoneidx);

/* mm/compaction.c */
#define COMPACT_CLUSTER_MAX	32	/* SWAP_CLUSTER_MAX: blocks isolated per round */
enum migrate_mode { MIGRATE_ASYNC, MIGRATE_SYNC_LIGHT, MIGRATE_SYNC };

/*
 * struct compact_control - one compact_zone() run, as the kernel's: the
 * scanners' positions, what they isolated (free blocks by order; movable
 * blocks and their orders), the request and the run's switches.
 */
struct compact_control {
	struct list_head freepages[NR_PAGE_ORDERS];
	struct page *migratepages[COMPACT_CLUSTER_MAX];
	unsigned int migrate_order[COMPACT_CLUSTER_MAX];
	unsigned long nr_freepages;
	unsigned int nr_migratepages;
	unsigned long free_pfn, migrate_pfn;
	struct zone *zone;
	unsigned long total_migrate_scanned, total_free_scanned;
	unsigned long nr_migrate_pages_isolated;
	gfp_t gfp_mask;
	int order, migratetype;
	unsigned int alloc_flags;
	int highest_zoneidx;
	enum migrate_mode mode;
	/* the free-list searches: failures in a row, the order to search from, the restart pfn */
	unsigned int fast_search_fail;
	int search_order;
	unsigned long fast_start_pfn;
	bool ignore_skip_hint, no_set_skip_hint, ignore_block_suitable;
	bool direct_compaction, whole_zone;
	bool finish_pageblock;		/* rescan the block the last migration left */
	bool proactive_compaction;	/* kcompactd's: stop at the fragmentation score's low mark */
};

/* The direct compactor's wish: a block of its order freed while it runs. */
struct capture_control {
	struct compact_control *cc;
	struct page *page;
};

/* The calling thread's capture control (the kernel's current->capture_control). */
extern _Thread_local struct capture_control *pl_capture_control PL_TLS;

/* task_capc(): the running direct compactor's capture control for @zone, or NULL. */
static inline struct capture_control *task_capc(const struct zone *zone)
{
	struct capture_control *capc = pl_capture_control;

	return unlikely(capc) && capc->cc->zone == zone ? capc : NULL;
}

/* compaction_skip.c: deferral, skip bits and cached positions, shared with the scanners */
bool compaction_restarting(const struct zone *zone, int order);
void set_pageblock_skip(struct zone *zone, unsigned long pfn);
void reset_cached_positions(struct zone *zone);
bool isolation_suitable(struct compact_control *cc, unsigned long pfn);
void update_pageblock_skip(struct compact_control *cc, unsigned long block, unsigned long pfn);

int alloc_contig_migrate_range(struct zone *zone, unsigned long start, unsigned long end);
bool compaction_capture(struct capture_control *capc, struct page *page, unsigned int order,
			int migratetype);
enum pl_compact_result compact_zone(struct compact_control *cc, struct capture_control *capc);
enum pl_compact_result try_to_compact_pages(struct pl_machine *m, gfp_t gfp, unsigned int order,
					    unsigned int alloc_flags, int highest_zoneidx,
					    enum compact_priority prio, struct page **capture);
struct page *__alloc_pages_direct_compact(struct pl_machine *m, gfp_t gfp, unsigned int order,
					  unsigned int alloc_flags, int highest_zoneidx,
					  int migratetype, enum compact_priority prio,
					  enum pl_compact_result *result);
bool should_compact_retry(struct pl_machine *m, unsigned int order, int highest_zoneidx,
			  enum pl_compact_result result, enum compact_priority *prio, int *retries);
enum pl_compact_result compaction_suit_allocation_order(struct zone *zone, int order,
							int highest_zoneidx, unsigned int alloc_flags);
/* kswapd_is_running(): a kswapd run (traced or pagelab's) is in progress */
bool kswapd_is_running(struct pl_machine *m);
/* pl_kcompactd_init(): the daemon's state at machine creation (kcompactd()'s start) */
void pl_kcompactd_init(struct pl_machine *m);
/* compact_gap(): free pages compaction wants beyond the watermark for its targets */
static inline unsigned long compact_gap(unsigned int order) { return 2UL << order; }
static inline bool is_migrate_movable(int mt) { return mt == MIGRATE_MOVABLE; }

#define PAGE_FLAGS_CHECK_AT_FREE ((1UL << PG_reserved) | (1UL << PG_hwpoison))
/* check_new_page() - a page taken off a free list must be clean; a bad one is reported and skipped. */
static inline bool check_new_page(struct page *page)
{
	if (unlikely(page_ref_count(page) != 0 || (page->flags & PAGE_FLAGS_CHECK_AT_FREE)))
		return check_new_page_bad(page);
	return false;
}

/* Allocation state free_pages_prepare() resets (the kernel's ..._CHECK_AT_PREP). */
#define PAGE_FLAGS_RESET_AT_FREE ((1UL << PG_head) | (1UL << PG_movable))

/*
 * free_page_is_bad() - the kernel's page_expected_state() test: the
 * refcount, PageBuddy and the flags that must be clear, loaded and
 * combined into one test, with the report out of line.
 */
static inline bool free_page_is_bad(struct page *page)
{
	unsigned long bad = (unsigned long)(unsigned int)page_ref_count(page) |
			    (unsigned long)(READ_ONCE(page->page_type) == PGTY_buddy) |
			    (page_flags(page) & PAGE_FLAGS_CHECK_AT_FREE);

	if (likely(!bad))
		return false;
	free_page_is_bad_report(page);
	return true;
}

/**
 * free_pages_prepare() - the checks and resets before a block returns to
 * the buddy. A bad page is reported and the block leaked, never reused.
 * The head is checked before anything is reset, so a refused block is left
 * exactly as it was. Inline, as the kernel's __always_inline one: it runs
 * once per page in __free_contig_range().
 * @page:  the head, refcount already zero.
 * @order: the block's order.
 * Return: true if the block may be freed.
 */
static inline bool free_pages_prepare(struct page *page, unsigned int order)
{
	unsigned long flags;

	if (unlikely(free_page_is_bad(page)))
		return false;
	if (order && !free_pages_prepare_tails(page, order))
		return false;
	/*
	 * The kernel clears these unconditionally. Here a store is made only
	 * when something is set: in __free_contig_range() the next page's
	 * locked refcount drop would otherwise wait for it to drain from the
	 * store buffer, and split pages usually have nothing to clear.
	 */
	flags = page_flags(page);
	if (unlikely(flags & PAGE_FLAGS_RESET_AT_FREE))
		WRITE_ONCE(page->flags, flags & ~PAGE_FLAGS_RESET_AT_FREE);
	if (unlikely(page->alloc_order))
		WRITE_ONCE(page->alloc_order, 0);
	return true;
}

/* mm/page_isolation.c (for page_contig.c) */
int start_isolate_page_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn);
void undo_isolate_page_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn);

/* mm/pcp.c */
void pl_setup_zone_pagesets(struct pl_machine *m);
void pl_zone_pcp_update(struct pl_machine *m);
void pl_free_zone_pagesets(struct pl_machine *m);
struct page *rmqueue_pcplist(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags);
void free_frozen_page_pcp(struct zone *zone, struct page *page, unsigned long pfn,
			  unsigned int order, int migratetype, fpi_t fpi_flags);
/* the out-of-line parts of the PCP's per-call paths (page_alloc_hot.h) */
bool pcp_refill(struct zone *zone, unsigned int order, int migratetype, unsigned int alloc_flags,
		struct per_cpu_pages *pcp, struct list_head *list, struct page **page);
void pcp_free_overflow(struct zone *zone, struct per_cpu_pages *pcp, int batch, int high,
		       bool free_high, unsigned int pindex, unsigned int order);
bool free_frozen_page_owned(struct zone *zone, struct page *page, unsigned long pfn,
			    unsigned int order, int migratetype, fpi_t fpi_flags);

/*
 * pcp_next_list() - free_pcppages_bulk()'s round robin: the next non-empty
 * list after *@pindex, narrowing [*@min_pindex, *@max_pindex] past empty
 * ends. At least one list must be non-empty. Context: pcp->lock.
 */
static inline struct list_head *pcp_next_list(struct per_cpu_pages *pcp, int *pindex,
					      int *min_pindex, int *max_pindex)
{
	for (;;) {
		struct list_head *list;

		if (++*pindex > *max_pindex)
			*pindex = *min_pindex;
		list = &pcp->lists[*pindex];
		if (!list_empty(list))
			return list;
		if (*pindex == *max_pindex)
			(*max_pindex)--;
		if (*pindex == *min_pindex)
			(*min_pindex)++;
	}
}

static inline bool design_pcp_premerge(const struct zone *zone)
{
	return zone->machine->config.design.pcp_premerge;
}

void pcp_drain_finish(struct zone *zone, struct per_cpu_pages *pcp, int count, int moved);

/* mm/pcp_premerge.c (pagelab's own); under the pcp's lock */
void pcp_premerge_tag(struct per_cpu_pages *pcp, struct zone *zone, struct page *page,
		      unsigned int order);
void pcp_premerge_free_bulk(struct zone *zone, int count, struct per_cpu_pages *pcp, int pindex);

/* mm/targeted_drain.c (pagelab's own) */
unsigned long targeted_drain(struct zone *zone, unsigned int order, int migratetype,
			     unsigned long *asked);

/* mm/pcp_owner.c (seed 003); all under the pcp's lock */
struct page *pcp_owner_rmqueue(struct zone *zone, struct per_cpu_pages *pcp, unsigned int order,
			       int mt, unsigned int alloc_flags);
int pcp_owner_rmqueue_chunks(struct zone *zone, unsigned int order, int count,
			     struct list_head *list, int mt, unsigned int alloc_flags);
void pcp_owner_free_chunk(struct zone *zone, struct per_cpu_pages *pcp, struct page *page,
			  unsigned long pfn, unsigned int order);
int pcp_owner_release(struct zone *zone, struct per_cpu_pages *pcp, int count);
void pcp_owner_setup_zone(struct zone *zone, unsigned int nr_cpus);
void pcp_owner_free_zone(struct zone *zone, unsigned int nr_cpus);

/* pcp_block_economy builds on seed 003's ownership: it implies pcp_owner. */
static inline bool design_pcp_owner(const struct zone *zone)
{
	return zone->machine->config.design.pcp_owner ||
	       zone->machine->config.design.pcp_block_economy ||
	       zone->machine->config.design.economy_batch ||
	       zone->machine->config.design.economy_ramp;
}

static inline bool design_block_economy(const struct zone *zone)
{
	return zone->machine->config.design.pcp_block_economy ||
	       zone->machine->config.design.economy_batch ||
	       zone->machine->config.design.economy_ramp;
}

/* economy_batch (pagelab's own) sizes the block economy's refills and drains. */
static inline bool design_economy_batch(const struct zone *zone)
{
	return zone->machine->config.design.economy_batch ||
	       zone->machine->config.design.economy_ramp;
}

/* economy_ramp (pagelab's own): economy_batch's refills double what they took. */
static inline bool design_economy_ramp(const struct zone *zone)
{
	return zone->machine->config.design.economy_ramp;
}

/* pcp_owner.c: the block economy (pagelab's own) */
unsigned long economy_free_pages(struct zone *zone);
void economy_free_bulk(struct zone *zone, struct per_cpu_pages *pcp, int count, bool all);
void economy_release_range(struct zone *zone, unsigned long start_pfn, unsigned long end_pfn);
/* pcp.c */
int economy_refill_blocks(struct zone *zone, struct per_cpu_pages *pcp, unsigned int order);
void economy_refill_taken(struct per_cpu_pages *pcp, int pages);
struct page *economy_rmqueue(struct zone *zone, unsigned int order, int migratetype,
			     unsigned int alloc_flags);

/* mm/mm_init.c: the page allocator's part of a machine, for src/machine */

/* setup_per_zone_lowmem_reserve(): see mm_init.c (pl_zone_set_managed() calls it too). */
void setup_per_zone_lowmem_reserve(struct pl_machine *m);
/** pl_mm_check_config() - is @cfg's memory layout one mm can build? Return: 0 or -EINVAL. */
int pl_mm_check_config(const struct pl_config *cfg);
/**
 * pl_mm_init() - map the memmap and the page frames, set up the zones, their
 * watermarks and pagesets, and the fail_page_alloc site, for @m->config.
 * Nothing is freed into the buddy yet. Return: 0, or -ENOMEM (nothing left
 * to undo).
 */
int pl_mm_init(struct pl_machine *m);
/** pl_mm_free_all_bootmem() - memblock_free_all(): every page to the buddy; on a vCPU of @m. */
void pl_mm_free_all_bootmem(struct pl_machine *m);
/** pl_mm_exit() - undo pl_mm_init() (safe after a failed one). */
void pl_mm_exit(struct pl_machine *m);
void pl_setup_per_zone_wmarks(struct pl_machine *m);
/**
 * pl_pfn_section_online() - does @pfn's 128 MiB section hold any RAM? (The
 * kernel's pfn_to_online_page() != NULL: the walks over a zone's pageblocks
 * skip sections that are wholly a hole.)
 */
bool pl_pfn_section_online(const struct pl_machine *m, unsigned long pfn);

/* mm/debug.c */
void __pl_debug_check(struct pl_machine *m, const char *where);
/**
 * pl_check_zones() - the zones' checker (registered by the machine as "zones").
 * Context: takes every pcp->lock and zone->lock in turn.
 * Return: the number of inconsistencies printed.
 */
int pl_check_zones(struct pl_machine *m);

/*
 * clear_page() / kernel_init_pages(): __GFP_ZERO clears a new block one page
 * at a time, as the kernel's post_alloc_hook() does (kernel_init_pages()
 * runs clear_highpage() on each of the 2^order pages). One fixed-size clear
 * per page keeps the cost of zeroing a page the same whatever the order of
 * its block: a single memset() of the whole block is a call with a run-time
 * size, which glibc serves by a byte-wise "rep stosb" that callgrind counts
 * per byte, eight times the count of the word-wise clear the compiler inlines
 * for one page; an order-2 block then cost ~16,400 instructions to zero where
 * its four pages cost ~2,050.
 */
static __always_inline void clear_page(void *addr)
{
	memset(addr, 0, PAGE_SIZE);
}

static __always_inline void kernel_init_pages(struct page *page, unsigned long numpages)
{
	for (unsigned long i = 0; i < numpages; i++) {
		clear_page(page_address(page + i));
		/* One clear per page: the compiler may not fuse them into one memset(). */
		__asm__ __volatile__("" ::: "memory");
	}
}

/* prep_new_page(): the new block's struct page as its caller gets it; inline, on every allocation. */
static __always_inline void prep_new_page_h(struct page *page, unsigned int order, gfp_t gfp,
					    int migratetype, const unsigned int hooks)
{
	pl_vt_touch_h(page, true, hooks & PL_HV_ALL);
	WRITE_ONCE(page->private, 0);
	WRITE_ONCE(page->alloc_order, (unsigned char)order);
	if (migratetype == MIGRATE_MOVABLE)
		SetPageFlag(page, PG_movable);
	if (gfp & __GFP_ZERO)
		kernel_init_pages(page, 1UL << order);
	if (order && (gfp & __GFP_COMP)) {
		SetPageFlag(page, PG_head);
		for (unsigned long i = 1; i < (1UL << order); i++)
			page[i].compound_head = (unsigned long)page | 1;
	}
	/*
	 * The reference last, a release: compaction's speculative
	 * page_try_get() that sees it sees the page as set up above.
	 */
	__atomic_store_n(&page->_refcount, 1, __ATOMIC_RELEASE);
}

/*
 * page_try_get() - folio_try_get(): a reference on @page unless it has
 * none (free, on a PCP, a tail or the rest of a block: not an
 * allocation's head). Acquire: pairs with prep_new_page()'s release.
 */
static inline bool page_try_get(struct page *page)
{
	int old = __atomic_load_n(&page->_refcount, __ATOMIC_RELAXED);

	do {
		if (old <= 0)
			return false;
	} while (!__atomic_compare_exchange_n(&page->_refcount, &old, old + 1, false,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	return true;
}

static inline void prep_new_page(struct page *page, unsigned int order, gfp_t gfp, int migratetype)
{
	prep_new_page_h(page, order, gfp, migratetype, true);
}

/* mm/fail_page_alloc.c */
bool __should_fail_alloc_page(gfp_t gfp, unsigned int order);

/* should_fail_alloc_page(): the site's enabled test inline, the rest out of line. */
static inline bool should_fail_alloc_page(gfp_t gfp, unsigned int order)
{
	return pl_fault_enabled(&pl_this.machine->fail_page_alloc) &&
	       __should_fail_alloc_page(gfp, order);
}

/* Run the checker when the machine's debug level is at least @level. */
static inline void pl_debug_check(struct pl_machine *m, int level, const char *where)
{
	if (unlikely(m->debug >= level))
		__pl_debug_check(m, where);
}

#endif /* PAGELAB_MM_INTERNAL_H */
