/* SPDX-License-Identifier: MIT */
/*
 * mm_types.h - the page allocator's structures, named and shaped as in the
 * kernel's include/linux/{mm_types,mmzone,gfp,page-flags}.h: the build-time
 * constants, struct page and its flag helpers, struct zone with its free_area
 * and per-CPU page lists, and the kmem tracepoints' event fields.
 *
 *   struct zone
 *     .free_area[order].free_list[migratetype]  -> head pages of free blocks
 *     .pageblock_flags[]                        -> migratetype per 2 MiB
 *
 * Invariants (checked by pl_check_machine()):
 *  - a free block of order o starts at a pfn aligned to 2^o, lies inside one
 *    zone, and only its head page has PageBuddy set with private == o;
 *  - a free block sits on free_area[o].free_list[mt] where mt is the
 *    migratetype of its pageblock(s); free_area[o].nr_free counts the blocks;
 *  - NR_FREE_PAGES is the number of pages in free blocks outside isolated
 *    pageblocks;
 *  - free pages and the tail pages of allocations have _refcount 0; the head
 *    of an allocation has _refcount >= 1.
 * The machine that holds the zones (struct pl_machine) and the API are in mm.h.
 */
#ifndef PAGELAB_MM_TYPES_H
#define PAGELAB_MM_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base.h"
#include "gfp_types.h"
#include "list.h"

/* Fixed at build time, as the kernel's Kconfig fixes them on x86_64. */
#define PAGE_SHIFT		12
#define PAGE_SIZE		(1UL << PAGE_SHIFT)
#define MAX_PAGE_ORDER		10
#define NR_PAGE_ORDERS		(MAX_PAGE_ORDER + 1)
#define MAX_ORDER_NR_PAGES	(1UL << MAX_PAGE_ORDER)
#define pageblock_order		9
#define pageblock_nr_pages	(1UL << pageblock_order)
#define PAGE_ALLOC_COSTLY_ORDER	3
#define SECTION_SIZE_BITS	27 /* 128 MiB memory sections */
#define PFN_SECTION_SHIFT	(SECTION_SIZE_BITS - PAGE_SHIFT)
#define PAGES_PER_SECTION	(1UL << PFN_SECTION_SHIFT)

/* As a distro 6.18 kernel without CONFIG_CMA: five types, as /proc shows. */
enum migratetype {
	MIGRATE_UNMOVABLE,
	MIGRATE_MOVABLE,
	MIGRATE_RECLAIMABLE,
	MIGRATE_PCPTYPES,
	MIGRATE_HIGHATOMIC = MIGRATE_PCPTYPES,
	MIGRATE_ISOLATE,
	MIGRATE_TYPES
};

extern const char *const migratetype_names[MIGRATE_TYPES];

static inline bool is_migrate_isolate(int mt) { return mt == MIGRATE_ISOLATE; }
static inline bool migratetype_is_mergeable(int mt) { return mt < MIGRATE_PCPTYPES; }

enum zone_type { ZONE_DMA, ZONE_DMA32, ZONE_NORMAL, MAX_NR_ZONES };

enum zone_watermarks { WMARK_MIN, WMARK_LOW, WMARK_HIGH, WMARK_PROMO, NR_WMARK };

enum zone_stat_item { NR_FREE_PAGES, NR_FREE_PAGES_BLOCKS, NR_VM_ZONE_STAT_ITEMS };

/* ---- gfp ------------------------------------------------------------------ */

/*
 * As the kernel's: both bits at once is a caller's bug (its VM_WARN_ON) and
 * yields MIGRATE_HIGHATOMIC, which no allocation may ask for; every entry
 * point refuses such a mask (src/mm/validate.h: pl_gfp_bad()).
 */
static inline int gfp_migratetype(gfp_t gfp)
{
	return (int)((gfp & GFP_MOVABLE_MASK) >> GFP_MOVABLE_SHIFT);
}

/* ---- struct page ---------------------------------------------------------- */

/* page->flags: PG_* bits low; the zone and section numbers live high. */
enum pageflags {
	PG_reserved,
	PG_head,	/* head of a __GFP_COMP allocation */
	PG_movable,	/* allocated movable: stands in for PG_lru in claim decisions */
	PG_hwpoison,
	__NR_PAGEFLAGS
};
/*
 * The zone number lives in the top bits of page->flags, stored as
 * zone_idx ^ ZONE_NORMAL so that an untouched, all-zero struct page belongs
 * to ZONE_NORMAL: the memmap is committed lazily, and booting writes only
 * the struct pages below ZONE_NORMAL and the reserved ones (mm_init.c).
 * As with the kernel's SPARSEMEM_VMEMMAP, the section number is not stored
 * (page_to_section() computes it from the pfn).
 */
#define ZONES_PGSHIFT		60
#define ZONES_MASK		0x3UL
#define ZONES_FLAGS(zone_idx)	(((unsigned long)(zone_idx) ^ ZONE_NORMAL) << ZONES_PGSHIFT)

#define PGTY_buddy		0xf0u /* page_type of a free block's head page */
#define PGTY_pcpbuddy		0xf1u /* ... of a free chunk of a PCP-owned pageblock */

/**
 * struct page - one page frame's descriptor, at most 64 bytes.
 * @flags:        PG_* bits, zone number, section number.
 * @buddy_list:   linkage on a free list while PageBuddy (protected by zone->lock).
 * @pcp_list:     linkage on a per-CPU list (protected by that pcp->lock).
 * @compound_head: on tail pages of a compound page: the head's address | 1.
 * @private:      buddy order while PageBuddy.
 * @_refcount:    reference count (atomic); 0 while free.
 * @page_type:    PGTY_buddy on a free block's head.
 * @alloc_order:  the order this block was allocated with, kept on the head
 *                so that a free with the wrong order is refused (pagelab's
 *                addition; the kernel needs page_owner to tell).
 */
struct page {
	unsigned long flags;
	union {
		struct list_head buddy_list;
		struct list_head pcp_list;
		struct list_head lru;
		unsigned long compound_head;
	};
	unsigned long private;
	int _refcount;
	unsigned int page_type;
	unsigned char alloc_order;
	/*
	 * pcp_premerge (pagelab's own): a block at the head of a PCP list has
	 * pcp_cpu1 = its CPU + 1 (0: on no PCP list) and pcp_order = its order,
	 * so a drain can tell that a buddy sits on the same PCP. They live in
	 * what was padding: struct page stays 48 bytes. Protected by that
	 * CPU's pcp->lock; pcp_cpu1 is also read by other CPUs' drains
	 * looking at a buddy without its lock, so it is written with
	 * WRITE_ONCE and read there with READ_ONCE (pcp_order only once
	 * pcp_cpu1 names the reader's own CPU).
	 */
	unsigned char pcp_order;
	unsigned short pcp_cpu1;
};

/*
 * page->flags, page_type and private of a page are read by a CPU merging
 * with its buddy while the page's owner may be changing them, as in the
 * kernel: reads and writes are once-accesses. Flags of an allocated page
 * are written only by its owner, so set/clear need no atomic RMW.
 */
static inline bool PageBuddy(const struct page *page) { return READ_ONCE(page->page_type) == PGTY_buddy; }
static inline bool PagePCPBuddy(const struct page *page)
{
	return READ_ONCE(page->page_type) == PGTY_pcpbuddy;
}
static inline unsigned long page_flags(const struct page *page) { return READ_ONCE(page->flags); }
static inline bool PageHead(const struct page *page) { return page_flags(page) & (1UL << PG_head); }
static inline bool PageTail(const struct page *page) { return READ_ONCE(page->compound_head) & 1; }
static inline bool PageReserved(const struct page *page) { return page_flags(page) & (1UL << PG_reserved); }
static inline bool PageHWPoison(const struct page *page) { return page_flags(page) & (1UL << PG_hwpoison); }
static inline void SetPageFlag(struct page *page, int bit)
{
	WRITE_ONCE(page->flags, page->flags | (1UL << bit));
}
static inline void ClearPageFlag(struct page *page, int bit)
{
	WRITE_ONCE(page->flags, page->flags & ~(1UL << bit));
}
static inline unsigned int buddy_order(const struct page *page)
{
	return (unsigned int)READ_ONCE(page->private);
}
static inline int page_zonenum(const struct page *page)
{
	return (int)(((page_flags(page) >> ZONES_PGSHIFT) & ZONES_MASK) ^ ZONE_NORMAL);
}
static inline int page_ref_count(const struct page *page)
{
	return __atomic_load_n(&page->_refcount, __ATOMIC_RELAXED);
}
static inline void set_page_count(struct page *page, int v)
{
	__atomic_store_n(&page->_refcount, v, __ATOMIC_RELAXED);
}

/* ---- zones ---------------------------------------------------------------- */

/**
 * struct free_area - the free blocks of one order in one zone.
 * @free_list:  head pages per migratetype (protected by zone->lock).
 * @nr_free:    number of blocks on all lists (zone->lock; read racily).
 * @mt_nr_free: blocks per list, kept only with design mt_counts (seed 002);
 *              written under zone->lock with WRITE_ONCE, read lockless.
 */
struct free_area {
	struct list_head free_list[MIGRATE_TYPES];
	unsigned long nr_free;
	unsigned long mt_nr_free[MIGRATE_TYPES];
};

struct pl_machine;

/* Per-CPU page lists: orders 0..PAGE_ALLOC_COSTLY_ORDER per PCP type, plus THP. */
#define NR_LOWORDER_PCP_LISTS	(MIGRATE_PCPTYPES * (PAGE_ALLOC_COSTLY_ORDER + 1))
#define NR_PCP_THP		2
#define NR_PCP_LISTS		(NR_LOWORDER_PCP_LISTS + NR_PCP_THP)
#define HPAGE_PMD_ORDER		pageblock_order
#define PCP_BATCH_SCALE_MAX	5 /* CONFIG_PCP_BATCH_SCALE_MAX default */

/* pcp_allowed_order() - the orders a PCP holds: 0..3 and THP's. */
static inline bool pcp_allowed_order(unsigned int order)
{
	return order <= PAGE_ALLOC_COSTLY_ORDER || order == HPAGE_PMD_ORDER;
}

/*
 * order_to_pindex() - the PCP list of a block of @order (0..3, or
 * HPAGE_PMD_ORDER) and @migratetype (< MIGRATE_PCPTYPES): the kernel's
 * mapping, public so that trace inference (src/trace) names lists alike.
 */
static inline unsigned int order_to_pindex(int migratetype, unsigned int order)
{
	if (order > PAGE_ALLOC_COSTLY_ORDER)
		return NR_LOWORDER_PCP_LISTS + (migratetype == MIGRATE_MOVABLE);
	return MIGRATE_PCPTYPES * order + (unsigned int)migratetype;
}

/* pindex_to_order() - the order of the blocks on PCP list @pindex. */
static inline unsigned int pindex_to_order(unsigned int pindex)
{
	return pindex < NR_LOWORDER_PCP_LISTS ? pindex / MIGRATE_PCPTYPES : HPAGE_PMD_ORDER;
}

#define PCPF_PREV_FREE_HIGH_ORDER	0x01u
#define PCPF_FREE_HIGH_BATCH		0x02u

/**
 * struct per_cpu_pages - one vCPU's page cache for one zone.
 * @lock:         protects everything below; taken with trylock on the
 *                alloc/free fast paths, with spin_lock by drains (which may
 *                run on another CPU). Lock order: pcp->lock, then zone->lock.
 * @count:        pages on all lists, in 4 KiB units.
 * @high:         current auto-tuned limit, within [@high_min, @high_max].
 * @batch:        chunk size for refills and drains.
 * @flags:        PCPF_* bits.
 * @alloc_factor: refill scaling, grows on allocation, halves on free.
 * @free_count:   recent frees, halves on allocation.
 * @lists:        free pages by order_to_pindex(); refills go to the tail,
 *                frees to the head, drains take from the tail.
 *
 * With pcp_owner (seed 003) a pcp also owns whole pageblocks and runs a
 * small buddy allocator over their free chunks:
 * @owned_count:  pages in @owned_free (included in @count).
 * @owned:        the owned pageblocks (zone pageblock index and the
 *                migratetype their chunks are filed under), @nr_owned of
 *                @owned_cap.
 * @owned_free:   free chunks of owned blocks per migratetype and order;
 *                each head is PagePCPBuddy with private = order.
 */
struct pcp_owned_block {
	unsigned int idx;
	int migratetype;
};

struct per_cpu_pages {
	struct pl_spinlock lock;
	int count;
	int high;
	int high_min;
	int high_max;
	int batch;
	unsigned char flags;
	unsigned char alloc_factor;
	short free_count;
	struct list_head lists[NR_PCP_LISTS];
	int owned_count;
	int nr_owned;
	int owned_cap;
	struct pcp_owned_block *owned;
	struct list_head owned_free[MIGRATE_PCPTYPES][pageblock_order + 1];
} __cacheline_aligned;

/**
 * struct per_cpu_zonestat - one CPU's share of a zone's counters, as the
 * kernel's (include/linux/mmzone.h): @vm_stat_diff[] gathers this CPU's
 * changes to zone->vm_stat[] and is folded into it when its magnitude
 * passes @stat_threshold (__mod_zone_page_state()) and at each vmstat tick
 * (pl_vmstat_tick(), the kernel's refresh_cpu_vm_stats()). Written only by
 * the thread running that vCPU (the kernel: with preemption or interrupts
 * off), read racily by zone_page_state_snapshot(); @stat_threshold is set
 * by pl_refresh_zone_stat_thresholds() (calculate_normal_threshold()).
 */
struct per_cpu_zonestat {
	int8_t vm_stat_diff[NR_VM_ZONE_STAT_ITEMS];
	int8_t stat_threshold;
};

/* zone->pageblock_owner values besides a CPU number */
#define PB_OWNER_NONE		(-1)
#define PB_OWNER_FRAGMENT	(-2) /* released partially reassembled: recover first */

/*
 * zone->flags bits, as the kernel's (atomic bit operations):
 * ZONE_BOOSTED_WATERMARK: a fallback claim boosted the watermark; the next
 *      allocation with ALLOC_KSWAPD clears it and wakes kswapd.
 * ZONE_RECLAIM_ACTIVE: kswapd is in balance_pgdat() for this zone; PCP frees
 *      keep pcp lists short (nr_pcp_high()).
 * ZONE_BELOW_HIGH: the zone failed its high watermark; pcp->high shrinks.
 * ZONE_KSWAPD_PENDING: pagelab's, not the kernel's: kswapd was woken for the
 *      zone and has not run yet; it runs at the next pl_vmstat_tick() (see
 *      page_alloc_slowpath.c for why).
 */
enum zone_flags { ZONE_BOOSTED_WATERMARK, ZONE_RECLAIM_ACTIVE, ZONE_BELOW_HIGH,
		  ZONE_KSWAPD_PENDING };

/**
 * struct zone - a range of page frames with one buddy allocator.
 *
 * Fields from @lock down are written under zone->lock; the fields above it
 * are set at machine creation and read-mostly (the pageset_* values are
 * recomputed with the watermarks), except @watermark_boost, raised by
 * boost_watermark() and dropped by kswapd, both under zone->lock and read
 * racily by watermark checks, as in the kernel. @vm_stat is the kernel's
 * zone counter: each CPU's changes gather in its per_cpu_zonestats[] entry
 * and reach @vm_stat (atomically, with or without the lock) only when they
 * pass the CPU's stat_threshold or at its vmstat tick, so zone_page_state()
 * lags the free lists by up to nr_cpus * stat_threshold pages and
 * zone_page_state_snapshot() adds the diffs back. @percpu_drift_mark is
 * the kernel's: 0, or the free count below which zone_watermark_ok_safe()
 * takes the snapshot. @nr_reserved_highatomic (pages in
 * MIGRATE_HIGHATOMIC pageblocks) and @nr_free_highatomic (free pages on
 * the HIGHATOMIC lists, also counted in NR_FREE_PAGES) are written under
 * zone->lock and read racily. @pageblock_flags holds one byte per pageblock:
 * its migratetype, plus PB_migrate_isolate; written under zone->lock.
 */
struct zone {
	unsigned long _watermark[NR_WMARK];
	unsigned long watermark_boost;
	long lowmem_reserve[MAX_NR_ZONES];
	struct pl_machine *machine;
	unsigned long zone_start_pfn;
	unsigned long spanned_pages;
	unsigned long present_pages;
	unsigned long managed_pages;
	const char *name;
	enum zone_type zone_idx;
	bool vm_debug;		/* machine debug >= 1: PL_WARN_ON*() checks on */
	unsigned char *pageblock_flags;
	struct per_cpu_pages *per_cpu_pageset;	/* [nr_cpus] */
	struct per_cpu_zonestat *per_cpu_zonestats;	/* [nr_cpus] */
	unsigned long percpu_drift_mark;
	/*
	 * pcp_owner: owner CPU of each pageblock (or PB_OWNER_*), written
	 * under the owner's pcp->lock, read racily and re-checked under it;
	 * and per migratetype a stack of fragment pageblocks (zone->lock).
	 */
	int *pageblock_owner;
	unsigned int *fragment_stack[MIGRATE_PCPTYPES];
	unsigned long nr_fragments[MIGRATE_PCPTYPES];
	int pageset_high_min;
	int pageset_high_max;
	int pageset_batch;
	unsigned long flags;			/* ZONE_* bits, atomic */

	struct pl_spinlock lock __cacheline_aligned;
	struct free_area free_area[NR_PAGE_ORDERS];
	unsigned long nr_isolate_pageblock;
	unsigned long nr_reserved_highatomic;
	unsigned long nr_free_highatomic;
	long vm_stat[NR_VM_ZONE_STAT_ITEMS];
	/*
	 * mt_counts_blocks (pagelab's own extension beyond seed 002):
	 * pageblocks per migratetype, for an O(1) blockcount section.
	 */
	unsigned long nr_pageblocks_mt[MIGRATE_TYPES];
};

/*
 * A zone's compaction state (src/mm/compaction.c), kept in the machine
 * rather than in struct zone (whose size the hot paths' index arithmetic
 * sees): the kernel's zone->compact_* fields.
 */
struct pl_zone_compact {
	unsigned long compact_cached_free_pfn;
	unsigned long compact_cached_migrate_pfn[2];	/* [0] async, [1] sync */
	/*
	 * where the last skip-bit reset left the scanners: the lowest block
	 * with a migration source, the highest with a free page (0: no reset yet)
	 */
	unsigned long compact_init_migrate_pfn, compact_init_free_pfn;
	unsigned int compact_considered, compact_defer_shift;
	int compact_order_failed;
	bool compact_blockskip_flush;
};

/*
 * The node's kcompactd (src/mm/kcompactd.c): the kernel's pgdat->kcompactd_*
 * and its thread's loop state. @busy: a thread runs it (atomic); @woken: a
 * wakeup_kcompactd() waits to be served; @traced: a replay runs the
 * trace's own kcompactd wakes; @clock_ns: its clock at the vmstat tick;
 * @next_ns: when it next looks at the fragmentation score.
 */
struct pl_kcompactd {
	int max_order, highest_zoneidx;
	int busy;
	bool woken, traced;
	uint64_t clock_ns, next_ns, timeout_ns;
};

#define PB_migratetype_mask	0x07u
#define PB_migrate_isolate	0x08u
#define PB_migrate_skip		0x10u	/* compaction: nothing to do in this block */

static inline bool populated_zone(const struct zone *zone) { return zone->present_pages != 0; }
static inline unsigned long zone_end_pfn(const struct zone *zone)
{
	return zone->zone_start_pfn + zone->spanned_pages;
}
/* The first pfn of the zone's first pageblock (the zone may start inside it). */
static inline unsigned long zone_pageblock_base(const struct zone *zone)
{
	return zone->zone_start_pfn & ~(pageblock_nr_pages - 1);
}
/* Pageblocks that hold pages of the zone: the size of its per-block arrays. */
static inline unsigned long zone_nr_pageblocks(const struct zone *zone)
{
	return (zone_end_pfn(zone) - zone_pageblock_base(zone) + pageblock_nr_pages - 1) >>
	       pageblock_order;
}
static inline bool zone_spans_pfn(const struct zone *zone, unsigned long pfn)
{
	return pfn >= zone->zone_start_pfn && pfn < zone_end_pfn(zone);
}
static inline unsigned long wmark_pages(const struct zone *z, enum zone_watermarks w)
{
	return z->_watermark[w] + READ_ONCE(z->watermark_boost);
}
#define min_wmark_pages(z)  wmark_pages(z, WMARK_MIN)
#define low_wmark_pages(z)  wmark_pages(z, WMARK_LOW)
#define high_wmark_pages(z) wmark_pages(z, WMARK_HIGH)
/*
 * zone_page_state() - the zone's counter as the kernel reads it: the global
 * value only, without the CPUs' unfolded diffs, never below 0 (an SMP
 * kernel's clamp).
 */
static inline long zone_page_state(const struct zone *z, enum zone_stat_item item)
{
	long x = READ_ONCE(z->vm_stat[item]);

	return x < 0 ? 0 : x;
}
/*
 * zone_page_state_snapshot() - the counter plus every CPU's diff (racy
 * against concurrent updates, exact when the machine is quiet); never
 * below 0.
 */
long zone_page_state_snapshot(const struct zone *z, enum zone_stat_item item);


/* ---- tracepoints ---------------------------------------------------------- */

/*
 * The kmem tracepoints pagelab fires at the places the kernel fires them,
 * with the kernel's fields (include/trace/events/kmem.h), so that a replay
 * can print them as ftrace text and score them with the same code as a
 * kernel trace (src/trace).
 */
enum pl_tp {
	PL_TP_MM_PAGE_ALLOC,		/* pfn order migratetype gfp */
	PL_TP_MM_PAGE_FREE,		/* pfn order */
	PL_TP_MM_PAGE_FREE_BATCHED,	/* pfn (order 0) */
	PL_TP_MM_PAGE_ALLOC_ZONE_LOCKED,/* pfn order migratetype percpu_refill */
	PL_TP_MM_PAGE_PCPU_DRAIN,	/* pfn order migratetype */
	PL_TP_MM_PAGE_ALLOC_EXTFRAG,	/* pfn order=alloc_order fallback_order
					 * migratetype=alloc_migratetype
					 * fallback_migratetype change_ownership */
	NR_PL_TP
};

/*
 * The kmem page events' fields (include/trace/events/kmem.h), declared once
 * for the tracepoint a machine fires (struct pl_tp_event) and the event a
 * trace parser reads (struct pl_trace_event, trace.h): each embeds them as
 * PL_KMEM_FIELDS, reachable by name (ev.pfn) and as one struct (ev.kmem),
 * as the kernel's struct_group() does.
 * @pfn, @order, @migratetype, @gfp: as the kernel's fields (for extfrag,
 *          @order and @migratetype are alloc_order and alloc_migratetype).
 * @percpu_refill:        mm_page_alloc_zone_locked only.
 * @fallback_order, @fallback_migratetype, @change_ownership: extfrag only.
 */
#define PL_KMEM_FIELD_LIST		\
	unsigned long pfn;		\
	int order;			\
	int migratetype;		\
	gfp_t gfp;			\
	int percpu_refill;		\
	int fallback_order;		\
	int fallback_migratetype;	\
	int change_ownership;

struct pl_kmem_fields {
	PL_KMEM_FIELD_LIST
};

#define PL_KMEM_FIELDS union {			\
		struct { PL_KMEM_FIELD_LIST };	\
		struct pl_kmem_fields kmem;	\
	}

/**
 * struct pl_tp_event - one tracepoint hit.
 * @tp:         which tracepoint.
 * @cpu:        the vCPU that fired it.
 * and the kmem fields above (PL_KMEM_FIELDS).
 */
struct pl_tp_event {
	enum pl_tp tp;
	unsigned int cpu;
	PL_KMEM_FIELDS;
};

#endif /* PAGELAB_MM_TYPES_H */
