/* SPDX-License-Identifier: MIT */
/*
 * mm.h - the page allocator's types, named and shaped as in the kernel's
 * include/linux/{mm_types,mmzone,gfp}.h.
 *
 *   struct pl_machine         one simulated computer (a pg_data_t and more)
 *     .mem_map[]  ----------> struct page, one per 4 KiB page frame
 *     .mem_base   ----------> the page frames themselves (real memory)
 *     .node_zones[DMA32, Normal]
 *         .free_area[order].free_list[migratetype]  -> head pages of free blocks
 *         .pageblock_flags[]                        -> migratetype per 2 MiB
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
 */
#ifndef PAGELAB_MM_H
#define PAGELAB_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base.h"
#include "fault_inject.h"
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

#define PB_migratetype_mask	0x07u
#define PB_migrate_isolate	0x08u

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

/* ---- designs and the machine ---------------------------------------------- */

/**
 * struct pl_design - run-time switches for the designs of the seed series.
 * Fixed when a machine is created; see pl_design_preset() for the presets.
 * @name:      the preset's name, for reports.
 * @mt_counts: seed 002 (patches 1-3, exactly), per-migratetype free block
 *             counts; pagetypeinfo's free-block section reads them without
 *             zone->lock; "Number of blocks type" still walks every
 *             pageblock under zone->lock, as the patch leaves it.
 * @mt_counts_blocks: pagelab's own extension beyond seed 002 (not in any
 *             patch): per-migratetype pageblock counts, so that the
 *             "Number of blocks type" section is O(1) and lock-free too.
 * @pcp_owner: seed 003, PCPs take whole pageblocks, own them, and frees
 *             route back to the owner where buddies merge under pcp->lock;
 *             when no whole block fits pcp->high or none is free, a refill
 *             takes unowned chunks larger than the order asked and splits
 *             them under pcp->lock (the RFC's degraded mode).
 * @pcp_owner_bulk_fallback: pagelab's own option beyond seed 003 (not the
 *             RFC): pcp_owner's degraded refill is the baseline's
 *             rmqueue_bulk() instead of the RFC's chunks.
 * @free_contig_batch: seed 001, __free_contig_range() frees a range of
 *             order-0 pages as the largest aligned power-of-two chunks.
 * @vmalloc_high_order: a06157804399 (v6.19-rc1), vm_area_alloc_pages()
 *             asks the buddy for the largest orders first and split_page()s
 *             them.
 * @vfree_batch: seed 000, vfree() frees an area's pages with
 *             free_pages_bulk() (contiguous pfn runs) instead of one by one.
 * @vmap_index: how vmalloc indexes its free/busy/lazy areas (enum vmap_index).
 * @vmap_pcpu_bump: seed 004 (patches 10-12), short-lived page-aligned
 *             vmalloc areas come from per-CPU bump chunks reserved from the
 *             space, found again in O(1) through the chunk's back-pointers.
 * @vmap_bump_wide_align: pagelab's own extension beyond seed 004 (not in
 *             the series): the bump chunks also serve alignments up to
 *             64 KiB (vmalloc'd stacks), not only page-aligned areas.
 * @pcp_premerge: pagelab's own, from Zi Yan's review of seed 003: a PCP
 *             drain merges blocks with buddies on the same PCP under
 *             pcp->lock before it takes zone->lock (per-page CPU field).
 * @pcp_block_economy: pagelab's own, from the seed 003 thread: the zone
 *             buddy deals in whole pageblocks only; all splitting and
 *             merging below a block happens under pcp->lock; a CPU with no
 *             block steals one from another CPU. Implies pcp_owner.
 * @economy_batch: pagelab's own, on the block economy: 6.18's batch sizes
 *             in whole blocks. A refill takes the blocks that hold
 *             nr_pcp_alloc()'s pages under one zone->lock hold (at least
 *             one); a drain gives back the whole free blocks that fit in
 *             nr_pcp_free()'s pages, or at least enough to bring the PCP
 *             back to pcp->high. Implies pcp_block_economy.
 * @economy_ramp: pagelab's own, on economy_batch: alloc_factor follows
 *             the pages a refill took (6.18 doubles the pages of each
 *             refill while a CPU allocates without freeing; one block is
 *             already batch << 3), and an order-0 refill rounds down to
 *             whole blocks where rounding up would fill the PCP past
 *             pcp->high - batch (nr_pcp_alloc()'s limit). Implies
 *             economy_batch.
 * @targeted_drain: pagelab's own, from the seed 003 thread: when an
 *             allocation fails, drain only the CPUs that hold pages of the
 *             needed migratetype, most first, retrying after each, instead
 *             of drain_all_pages().
 */
enum vmap_index {
	VMAP_INDEX_RBTREE,	/* the augmented rbtree of 6.18 */
	VMAP_INDEX_MAPLE,	/* seed 004: maple trees, vmap_index=maple */
};

struct pl_design {
	const char *name;
	bool mt_counts;
	bool mt_counts_blocks;	/* pagelab's own extension, see above */
	bool pcp_owner;
	bool pcp_owner_bulk_fallback;	/* pagelab's own option, see above */
	bool free_contig_batch;
	bool vmalloc_high_order;
	bool vfree_batch;
	enum vmap_index vmap_index;
	bool vmap_pcpu_bump;
	bool pcp_premerge;
	bool targeted_drain;
	bool pcp_block_economy;
	bool economy_batch;		/* pagelab's own, see above */
	bool economy_ramp;		/* pagelab's own, see above */
	bool vmap_bump_wide_align;	/* pagelab's own extension, see above */
};

/* The architectures whose boot-time memory shapes pagelab models. */
enum pl_arch { PL_ARCH_X86_64, PL_ARCH_ARM64 };

/** struct pl_mem_range - a physical address range [@start, @end), in bytes. */
struct pl_mem_range {
	unsigned long start;
	unsigned long end;
};

#define PL_MAX_HOLES 8

/**
 * struct pl_cpu_topology - the CPUs of a machine profile, for the layers that
 * price or size things by them (PCPF_FREE_HIGH_BATCH here, virtual time).
 * @nr_sockets:       packages.
 * @cores_per_socket: cores in one package.
 * @threads_per_core: SMT threads (1: no SMT).
 * @llc_bytes:        the size of one last-level cache (data or unified).
 * @llc_shared_cpus:  CPUs that share one last-level cache (the kernel's
 *                    cpumask_weight(&llc->shared_cpu_map)).
 * All zero: unknown (a bare configuration); nothing is derived from it.
 * nr_sockets * cores_per_socket * threads_per_core may exceed the number of
 * CPUs on hybrid parts (the i7-12700's E-cores have no SMT).
 */
struct pl_cpu_topology {
	unsigned int nr_sockets;
	unsigned int cores_per_socket;
	unsigned int threads_per_core;
	unsigned long llc_bytes;
	unsigned int llc_shared_cpus;
};

/**
 * struct pl_config - what a machine is made of.
 * @mem_bytes:       end of physical memory (max_pfn), a multiple of 2 MiB
 *                   (default 16 GiB); RAM is [0, @mem_bytes) less @holes.
 * @dma_bytes:       end of ZONE_DMA (0: ZONE_DMA is empty, as on a bare
 *                   config; 16 MiB on x86_64 profiles), a multiple of 2 MiB.
 * @dma32_bytes:     end of ZONE_DMA32 (default 4 GiB, clipped to memory).
 * @holes:           up to PL_MAX_HOLES page-aligned ranges that are not RAM
 *                   (the e820 holes: no struct page is free there, and they
 *                   count in a zone's spanned but not its present pages).
 * @nr_holes:        entries used in @holes.
 * @arch:            the architecture whose boot-time reserve to model.
 * @boot_reserve:    reserve what the kernel's boot keeps out of the buddy
 *                   allocator, so that managed < present (mm_init.c): the
 *                   memmap, x86_64's first MiB, the kernel image, the dentry
 *                   and inode hash tables and the percpu first chunk.
 * @kernel_image_bytes: the kernel image's text, data and bss (with
 *                   @boot_reserve).
 * @thp:             transparent hugepages are enabled: khugepaged's
 *                   set_recommended_min_free_kbytes() may raise min_free_kbytes.
 * @topology:        the CPUs' shape and last-level cache (profiles set it).
 * @profile:         the name of the profile this config came from, or NULL.
 * @nr_cpus:         number of virtual CPUs (default 1).
 * @design:          the design switches (default v6.18).
 * @debug:           0..3: how often the allocator runs the checker itself
 *                   (0 never, 1 on machine teardown, 2 after every slow-path
 *                   event, 3 after every alloc and free).
 * @lock_stat:       time lock holds and waits (costs a clock read per edge).
 * @min_free_kbytes: 0 to compute as the kernel does.
 * @pcp_disabled:    no per-CPU page lists: every allocation and free goes
 *                   to the buddy under zone->lock (to measure the buddy alone).
 * @tlb_flush_ns_per_cpu: what one kernel TLB flush costs per vCPU, spent
 *                   in a calibrated busy loop (default 1000; 0: free).
 * @vtime:           keep virtual time (issue 15, include/pagelab/vtime.h):
 *                   per-vCPU clocks, locks and cache lines in virtual time;
 *                   @topology prices its cache line transfers (all zero:
 *                   pl_topology_default(), 2 sockets x 26 cores, no SMT).
 * @pcp_no_autotune: pagelab's own switch, not a kernel option: pcp->high
 *                   stays fixed at high_min and refills take a plain batch, as Linux 6.0's PCP had no
 *                   auto-tuning (to compare with the 6.0 scaling anchors).
 * @vt_costs:        with @vtime, the calibrated cost set (enum pl_vt_costs,
 *                   vtime.h): 0 the anchors' (default), 1 this build host's.
 * @watermark_scale_factor: vm.watermark_scale_factor, 1..3000 (the gap
 *                   between watermarks in 1/10000 of a zone's managed
 *                   pages); 0 for the kernel's default, 10.
 * @watermark_boost_factor: vm.watermark_boost_factor, in 1/10000 of the
 *                   high watermark; 0 for the kernel's default, 15000, and
 *                   PL_WMARK_BOOST_OFF for the sysctl's 0 (no boosting).
 * @percpu_pagelist_high_fraction: vm.percpu_pagelist_high_fraction: 0 (the
 *                   default: pcp->high auto-tuned between high_min and
 *                   high_max), or 8 and up: pcp->high fixed at the zone's
 *                   managed pages over the fraction, split over the CPUs.
 */
struct pl_config {
	unsigned long mem_bytes;
	unsigned long dma_bytes;
	unsigned long dma32_bytes;
	struct pl_mem_range holes[PL_MAX_HOLES];
	unsigned int nr_holes;
	enum pl_arch arch;
	bool boot_reserve;
	unsigned long kernel_image_bytes;
	bool thp;
	struct pl_cpu_topology topology;
	const char *profile;
	unsigned int nr_cpus;
	struct pl_design design;
	int debug;
	bool lock_stat;
	unsigned long min_free_kbytes;
	bool pcp_disabled;
	unsigned long tlb_flush_ns_per_cpu;
	bool vtime;
	bool pcp_no_autotune;
	unsigned int vt_costs;
	unsigned long watermark_scale_factor;
	unsigned long watermark_boost_factor;
	unsigned long percpu_pagelist_high_fraction;
};

/* pl_config.watermark_boost_factor: the sysctl's 0, boosting off. */
#define PL_WMARK_BOOST_OFF		(~0UL)
/* The sysctls' limits (mm/page_alloc.c's sysctl table). */
#define PL_MAX_WMARK_SCALE_FACTOR	3000UL
#define PL_MIN_PCP_HIGH_FRACTION	8UL

/**
 * pl_check_vm_sysctls() - are @cfg's vm sysctl fields (watermark_scale_factor,
 * watermark_boost_factor, percpu_pagelist_high_fraction, in pl_config's
 * terms) within the limits the kernel's sysctls set? Machine creation and
 * the snapshot reader both ask.
 * Return: 0, or -EINVAL after one rate-limited warning "@who: NAME VALUE:
 * want RANGE".
 */
int pl_check_vm_sysctls(const char *who, const struct pl_config *cfg);

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

/**
 * struct pl_tp_event - one tracepoint hit.
 * @tp:         which tracepoint.
 * @cpu:        the vCPU that fired it.
 * @pfn, @order, @migratetype, @gfp: as the kernel's fields.
 * @percpu_refill:        mm_page_alloc_zone_locked only.
 * @fallback_order, @fallback_migratetype, @change_ownership: extfrag only.
 */
struct pl_tp_event {
	enum pl_tp tp;
	unsigned int cpu;
	unsigned long pfn;
	int order;
	int migratetype;
	gfp_t gfp;
	int percpu_refill;
	int fallback_order;
	int fallback_migratetype;
	int change_ownership;
};

/**
 * pl_set_tracepoint_sink() - call @fn(@ctx, ev) on every tracepoint hit of
 * @m, on the thread that fired it (so @fn must be thread-safe if several
 * threads run @m). @fn NULL turns tracing off. Set it while no thread runs
 * on @m.
 */
void pl_set_tracepoint_sink(struct pl_machine *m,
			    void (*fn)(void *ctx, const struct pl_tp_event *ev), void *ctx);

/** struct pl_cpu - one virtual CPU's private data. */
struct pl_cpu {
	struct pl_cpu_events events;
	unsigned int id;
	void *owner;	/* the thread using this vCPU (src/mm/validate.c); atomic */
};

/**
 * struct pl_machine - one simulated computer.
 * @config:   as created.
 * @mem_map:  struct page for every pfn in [0, max_pfn).
 * @mem_base: page frame memory; page_address(pfn) = mem_base + pfn * PAGE_SIZE.
 * @cpus:     nr_cpus vCPUs.
 * @fail_page_alloc: the page allocator's fault site (fault_inject.h).
 * @fault_sites: every layer's fault sites, registered by pl_machine_create().
 * @checkers: every layer's checker, run in order by pl_check_machine().
 * @vt:       virtual time (config.vtime), NULL otherwise.
 */
/* What the boot keeps out of the buddy allocator (pl_config.boot_reserve). */
enum pl_boot_reserve {
	PL_RESERVE_MEMMAP,	/* struct pages: 64 bytes per page of each present section */
	PL_RESERVE_LOW_1M,	/* x86_64: the first MiB */
	PL_RESERVE_KERNEL,	/* the kernel image */
	PL_RESERVE_HASHES,	/* the dentry and inode hash tables */
	PL_RESERVE_PERCPU,	/* the percpu first chunk */
	NR_PL_BOOT_RESERVE
};
extern const char *const pl_boot_reserve_names[NR_PL_BOOT_RESERVE];
/* m->unavailable_kind[] of a hole (the others are enum pl_boot_reserve) */
#define PL_UNAVAILABLE_HOLE	NR_PL_BOOT_RESERVE
#define PL_MAX_UNAVAILABLE	(PL_MAX_HOLES + 2 * NR_PL_BOOT_RESERVE + 8)
/* The largest machine: 4 TiB. */
#define PL_MAX_MEM_BYTES	(1UL << 42)

#define PL_MACHINE_MAX_CHECKERS 8

/**
 * struct pl_machine_checker - one layer's consistency checker.
 * @name:  what it checks ("zones", "vmalloc").
 * @check: returns the number of inconsistencies it printed.
 */
struct pl_machine_checker {
	const char *name;
	int (*check)(struct pl_machine *m);
};

struct pl_machine {
	struct pl_config config;
	struct page *mem_map;
	char *mem_base;
	unsigned long max_pfn;
	struct zone node_zones[MAX_NR_ZONES];
	struct pl_cpu *cpus;
	unsigned int nr_cpus;
	unsigned long min_free_kbytes;
	/* the physical layout (mm_init.c), fixed at creation */
	unsigned long dma_pfn, dma32_pfn;		/* zone boundaries */
	unsigned long node_start_pfn, node_end_pfn;	/* first RAM pfn, last + 1 */
	unsigned long boot_reserved[NR_PL_BOOT_RESERVE];	/* pages, by kind */
	/* pages memblock_free_all() gave the buddy: the kernel's pgfree counts them */
	unsigned long boot_freed_pages;
	struct pl_mem_range unavailable[PL_MAX_UNAVAILABLE];	/* pfns, sorted */
	signed char unavailable_kind[PL_MAX_UNAVAILABLE];	/* pl_boot_reserve or hole */
	unsigned int nr_unavailable;
	unsigned long *section_online;		/* bitmap: sections with RAM */
	unsigned long nr_sections;
	bool fail_page_alloc_ready;
	int debug;
	struct pl_fault_state fail_page_alloc;	/* mm/fail_page_alloc.c */
	struct vmap_space *vmap;	/* the vmalloc space (src/vmalloc) */
	/* the registries of the composition root (src/machine), fixed at creation */
	struct pl_fault_state *fault_sites[NR_PL_FAULT_SITES];
	struct pl_machine_checker checkers[PL_MACHINE_MAX_CHECKERS];
	unsigned int nr_checkers;
	/* tracepoint sink (pl_set_tracepoint_sink()), NULL when off */
	void (*tp_fn)(void *ctx, const struct pl_tp_event *ev);
	void *tp_ctx;
	struct pl_vtime *vt;		/* virtual time, NULL unless config.vtime */
	/*
	 * a kswapd run the replay follows (pl_kswapd_begin()/end()) and the
	 * boost each zone had at its start; written by the replay's thread only
	 */
	bool kswapd_traced;
	unsigned long kswapd_boost[MAX_NR_ZONES];
};

#define for_each_zone(z, m) \
	for ((z) = (m)->node_zones; (z) < (m)->node_zones + MAX_NR_ZONES; (z)++)
#define for_each_populated_zone(z, m) \
	for_each_zone(z, m) if (!populated_zone(z)) {} else

/**
 * pl_enter() - make the calling thread vCPU @cpu of @m; the kernel-style calls
 * below then act on that machine and CPU.
 * Return: 0, or -EINVAL if @cpu is out of range.
 */
int pl_enter(struct pl_machine *m, unsigned int cpu);
/** pl_leave() - detach the calling thread from its machine. */
void pl_leave(void);

struct pl_this {
	struct pl_machine *machine;
	struct pl_cpu *cpu;
};
extern _Thread_local struct pl_this pl_this;

static inline struct pl_machine *current_machine(void) { return pl_this.machine; }

/* ---- pfn <-> page <-> address (on the current machine) -------------------- */

static inline struct page *pfn_to_page(unsigned long pfn) { return pl_this.machine->mem_map + pfn; }
static inline unsigned long page_to_pfn(const struct page *page)
{
	return (unsigned long)(page - pl_this.machine->mem_map);
}
static inline void *page_address(const struct page *page)
{
	return pl_this.machine->mem_base + (page_to_pfn(page) << PAGE_SHIFT);
}
static inline bool pfn_valid(unsigned long pfn) { return pfn < pl_this.machine->max_pfn; }
static inline unsigned long page_to_section(const struct page *page)
{
	return page_to_pfn(page) >> PFN_SECTION_SHIFT;
}
static inline struct zone *page_zone(const struct page *page)
{
	return &pl_this.machine->node_zones[page_zonenum(page)];
}
/** virt_to_page() - page of a page_address(); NULL if outside the machine. */
struct page *virt_to_page(const void *addr);

/* ---- the allocation API --------------------------------------------------- */

/**
 * alloc_pages() - allocate 2^@order contiguous pages.
 * @gfp:   GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT, ... with __GFP_ZERO, __GFP_COMP,
 *         __GFP_MOVABLE/__GFP_RECLAIMABLE (migratetype), __GFP_NOWARN.
 * @order: 0..MAX_PAGE_ORDER.
 * Context: a thread that has pl_enter()ed a machine.
 * Return: the head page with _refcount 1, or NULL (the machine unchanged).
 */
struct page *alloc_pages(gfp_t gfp, unsigned int order);

static inline struct page *alloc_page(gfp_t gfp) { return alloc_pages(gfp, 0); }

/**
 * __free_pages() - drop a reference on a block from alloc_pages(); free it
 * when it was the last.
 * Return: 0, or -EINVAL for bad input (not allocated, wrong order, outside
 * the machine, misaligned) after a rate-limited warning, with nothing changed.
 */
int __free_pages(struct page *page, unsigned int order);
static inline int __free_page(struct page *page) { return __free_pages(page, 0); }

/**
 * pl_free_pages_pcp_busy() - pagelab's own: __free_pages() as it runs when
 * this CPU's pcp->lock is held and pcp_spin_trylock() fails (an interrupt's
 * free while the CPU was inside a PCP operation, or a remote drain holding
 * it): the block goes straight to the buddy, free_one_page() under
 * zone->lock, and PCP_TRYLOCK_FAIL counts it. A trace replay uses it for
 * the frees the kernel's own trace shows went that way.
 * Return: as __free_pages().
 */
int pl_free_pages_pcp_busy(struct page *page, unsigned int order);

/**
 * free_frozen_pages() - free a block whose refcount the caller already
 * dropped to zero (mm/internal.h).
 * Return: 0; -EBUSY if the refcount is still held (the page is reported
 * and left allocated); -EINVAL for bad input.
 */
int free_frozen_pages(struct page *page, unsigned int order);

/** __get_free_pages() - alloc_pages() returning page_address(), 0 on failure. */
unsigned long __get_free_pages(gfp_t gfp, unsigned int order);
/** get_zeroed_page() - one zeroed page's address, 0 on failure. */
unsigned long get_zeroed_page(gfp_t gfp);
/** free_pages() - __free_pages() by address. Return: as __free_pages(). */
int free_pages(unsigned long addr, unsigned int order);
static inline int free_page(unsigned long addr) { return free_pages(addr, 0); }

/** get_page() - take a reference on an allocated page. */
void get_page(struct page *page);
/**
 * put_page() - drop a reference; frees an order-0 page, or a whole compound
 * page through its head, at zero.
 * Return: 0 or -EINVAL (page not in use).
 */
int put_page(struct page *page);

/**
 * alloc_pages_bulk() - fill the NULL slots of @page_array (up to @nr_pages)
 * with order-0 pages, from the local PCP under one pcp->lock hold.
 * Return: the number of populated slots (leading ones included).
 */
unsigned long alloc_pages_bulk(gfp_t gfp, unsigned long nr_pages, struct page **page_array);

/** drain_local_pages() - empty this vCPU's PCPs (of @zone, or all if NULL). */
void drain_local_pages(struct zone *zone);
/**
 * drain_all_pages() - empty every vCPU's PCPs (of @zone, or all if NULL)
 * into the buddy. Context: takes each pcp->lock, then zone->lock.
 */
void drain_all_pages(struct zone *zone);
/**
 * pl_vmstat_tick() - this vCPU's periodic vmstat work (the kernel's
 * refresh_cpu_vm_stats every sysctl_stat_interval, one second): on each
 * zone, this vCPU's zone counter diffs folded into the counters, then
 * decay_pcp_high(); then, if kswapd was woken since the last
 * tick of any vCPU, its run (pagelab's kswapd model: see
 * src/mm/page_alloc_slowpath.c). Benchmarks call it once per simulated
 * second of each vCPU.
 * Return: non-zero while there is more to decay.
 */
int pl_vmstat_tick(void);
/**
 * pl_kswapd_begin() - the kernel's kswapd started a run (balance_pgdat()):
 * for a replay that sees kswapd's own events. Takes any pending wakeup,
 * notes each zone's watermark_boost and makes every populated zone
 * ZONE_RECLAIM_ACTIVE (which caps the PCPs, nr_pcp_high()) until
 * pl_kswapd_end(); pagelab's own runs at the tick stand aside meanwhile.
 * Context: the replay's thread.
 */
void pl_kswapd_begin(struct pl_machine *m);
/**
 * pl_kswapd_end() - the traced kswapd run ended: the zones leave
 * ZONE_RECLAIM_ACTIVE and drop the boost they had at its start, as
 * balance_pgdat() does as it returns. Context: takes each zone->lock.
 */
void pl_kswapd_end(struct pl_machine *m);
/**
 * pl_kswapd_run() - pagelab's kswapd model: if kswapd was woken since its
 * last run, balance_pgdat() for the zones it was woken for, with nothing
 * to reclaim: ZONE_RECLAIM_ACTIVE for the run, which gives up at once,
 * and the boost each zone had when it began dropped. Nothing if it was
 * not woken, or while a traced run is open (pl_kswapd_begin()).
 * pl_vmstat_tick() calls it; a replay calls it at each event between
 * kswapd's traced runs.
 * Context: takes each zone->lock.
 */
void pl_kswapd_run(struct pl_machine *m);

/* ---- contiguous ranges (mm/page_contig.c) --------------------------------- */

/**
 * split_page() - turn a non-compound order-@order block into 2^@order
 * order-0 pages, each with _refcount 1, each freeable on its own.
 * @page:  head of a block from alloc_pages() without __GFP_COMP.
 * @order: the order it was allocated with.
 * Context: a thread that has pl_enter()ed a machine.
 * Return: 0, or -EINVAL after a rate-limited warning (compound page, wrong
 * order, not allocated, outside the machine) with nothing changed.
 */
int split_page(struct page *page, unsigned int order);

/**
 * free_contig_range() - drop a reference on each of @nr_pages order-0
 * pages from @pfn and free those that reach zero. The baseline frees page
 * by page; with free_contig_batch (seed 001) the freed pages go back as
 * the largest naturally aligned power-of-two chunks.
 * @pfn:      first page frame.
 * @nr_pages: number of pages.
 * Context: a thread that has pl_enter()ed a machine.
 * Return: the number of pages whose refcount was not 1 (still in use after
 * the drop; warned about, as the kernel does), or -EINVAL after a
 * rate-limited warning with nothing changed: range outside the machine,
 * a free page, a compound page or an unsplit high-order block in it.
 */
long free_contig_range(unsigned long pfn, unsigned long nr_pages);

/**
 * __free_contig_range() - free_contig_range() without the in-use warning:
 * put a reference on each page of the range, free those that reach zero.
 * Return: pages still in use, or -EINVAL (nothing changed).
 */
long __free_contig_range(unsigned long pfn, unsigned long nr_pages);

/**
 * free_pages_bulk() - drop a reference on each of @nr order-0 pages of
 * @pages (any order, e.g. a vmalloc area's), coalescing runs of contiguous
 * pfns into __free_contig_range() calls.
 * Context: a thread that has pl_enter()ed a machine.
 * Return: pages still in use, or -EINVAL if an entry is not an allocated
 * order-0 page of this machine (nothing changed). A page listed twice is
 * a double free: its second entry is warned about and skipped.
 */
long free_pages_bulk(unsigned long nr, struct page **pages);

/**
 * alloc_contig_range() - allocate exactly the pfns [@start, @end) of one
 * zone: isolate their pageblocks, drain the PCPs, take the free pages and
 * give back the excess of the buddy blocks they were part of. There is no
 * migration: a busy page fails the whole call.
 * @gfp: __GFP_ZERO, __GFP_NOWARN, __GFP_COMP (a naturally aligned
 *       power-of-two range up to MAX_PAGE_ORDER), migratetype and reclaim
 *       bits (accepted, unused).
 * Return: 0 with every page allocated as an order-0 page with _refcount 1
 * (free with free_contig_range()), or one compound page with __GFP_COMP;
 * -EBUSY if a page is in use or a pageblock is already isolated; -EINVAL
 * for a bad range or gfp. On failure the machine is as before.
 */
int alloc_contig_range(unsigned long start, unsigned long end, gfp_t gfp);

/**
 * alloc_contig_pages() - find and allocate @nr_pages contiguous free pages
 * (aligned to a power of two up to a pageblock), highest allowed zone first.
 * Return: the first page, or NULL (the machine unchanged).
 */
struct page *alloc_contig_pages(unsigned long nr_pages, gfp_t gfp);

/** free_area_empty() - true if no block of this order and type is free. */
bool free_area_empty(const struct zone *zone, const struct free_area *area, int mt);

/** get_pageblock_migratetype() - migratetype of @page's pageblock (ISOLATE if isolated). */
int get_pageblock_migratetype(const struct page *page);

/**
 * pl_nr_free_pages() - free pages in all zones of @m (outside the PCPs and
 * isolated blocks): every zone's NR_FREE_PAGES with the CPUs' unfolded
 * diffs (zone_page_state_snapshot()), so exact when @m is quiet; the
 * kernel's nr_free_pages() reads the counters alone.
 */
unsigned long pl_nr_free_pages(const struct pl_machine *m);

/** pl_events_sum() - merge every vCPU's event counters into @out. */
void pl_events_sum(const struct pl_machine *m, unsigned long out[NR_PL_VM_EVENTS]);

/* ---- reports (mm/vmstat.c) ------------------------------------------------ */

/* struct pl_seq and pl_seq_finish(): base.h. */

/*
 * The pl_show_*() reports share one contract: the text goes into @buf and is
 * always NUL-terminated (size > 0); the return is its length without the
 * NUL, or -ENOSPC if @size was too small (a terminated prefix is left).
 * pl_show_X(m, NULL, 0) returns the length needed, so a buffer of that
 * plus one fits (unless the machine changes in between). The _file
 * variants do that and write the report to @f: they return its length,
 * -ENOMEM or -EIO.
 */

/** pl_show_buddyinfo() - /proc/buddyinfo. Return: length or -ENOSPC (see above). */
long pl_show_buddyinfo(struct pl_machine *m, char *buf, size_t size);
/**
 * pl_show_pagetypeinfo() - /proc/pagetypeinfo: the baseline walks the free
 * lists under zone->lock (capped at 100000 per list); mt_counts reads counts
 * for that section. "Number of blocks type" walks the pageblocks under
 * zone->lock unless mt_counts_blocks (pagelab's extension).
 * Return: length or -ENOSPC.
 */
long pl_show_pagetypeinfo(struct pl_machine *m, char *buf, size_t size);
/** pl_show_zoneinfo() - the page-allocator part of /proc/zoneinfo. Return: length or -ENOSPC. */
long pl_show_zoneinfo(struct pl_machine *m, char *buf, size_t size);
/**
 * pl_show_vmstat() - /proc/vmstat: "name value" lines in the kernel's order
 * (mm/vmstat.c's vmstat_text), only for the items pagelab keeps:
 * nr_free_pages, nr_free_pages_blocks, nr_memmap_boot_pages (with the boot
 * reserve modelled), pgalloc_dma, pgalloc_dma32, pgalloc_normal and pgfree
 * (boot's frees included, as __free_pages_core() counts them). Items pagelab
 * does not model are left out, not printed as 0 (README "/proc/vmstat").
 * @m:    the machine.
 * @buf:  where the text goes (NUL-terminated), or NULL with @size 0.
 * @size: bytes at @buf.
 * Context: any thread; reads the vCPUs' counters racily, as the kernel does.
 * Return: length, -ENOSPC (see above), or -EINVAL after a rate-limited
 * warning for a NULL machine or a NULL buffer with a size.
 */
long pl_show_vmstat(struct pl_machine *m, char *buf, size_t size);

/** pl_show_buddyinfo_file() - /proc/buddyinfo to @f. Return: length, -ENOMEM or -EIO. */
long pl_show_buddyinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_pagetypeinfo_file() - /proc/pagetypeinfo to @f. */
long pl_show_pagetypeinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_zoneinfo_file() - /proc/zoneinfo (page-allocator part) to @f. */
long pl_show_zoneinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_vmstat_file() - /proc/vmstat to @f. Return: length, -EINVAL, -ENOMEM or -EIO. */
long pl_show_vmstat_file(struct pl_machine *m, FILE *f);

/**
 * pl_show_to_file() - run report @show into a buffer of the size it needs
 * and write it to @f. Return: the length written, -ENOMEM or -EIO.
 */
long pl_show_to_file(struct pl_machine *m, long (*show)(struct pl_machine *, char *, size_t),
		     FILE *f);

/**
 * pl_unusable_free_index() - the kernel's unusable free space index of
 * @zone for @order (debugfs extfrag/unusable_index), in thousandths: the
 * share of free memory in blocks too small for an order-@order request.
 * 1000 when nothing is free. PCP pages are not counted: drain first.
 * Context: takes zone->lock.
 */
unsigned int pl_unusable_free_index(struct zone *zone, unsigned int order);
/** pl_free_pageblocks() - pageblocks of @zone wholly free in the buddy (zone->lock). */
unsigned long pl_free_pageblocks(struct zone *zone);

/* ---- loading a real kernel's state (mm/state.c; pagelab's own) ------------ */

/** pl_zone_take_all_free() - every free page of @zone becomes an allocated order-0 page. Return: pages. */
unsigned long pl_zone_take_all_free(struct zone *zone);
/** pl_zone_set_pageblock_type() - set a pageblock's migratetype, moving its free blocks. Return: 0 or -EINVAL. */
int pl_zone_set_pageblock_type(struct zone *zone, unsigned long pfn, int mt);
/** pl_zone_give_free_block() - 2^@order allocated order-0 pages back as one free block. Return: 0 or -EINVAL. */
int pl_zone_give_free_block(struct zone *zone, unsigned long pfn, unsigned int order);
/** pl_join_pages() - split_page()'s inverse: 2^@order order-0 pages become one block. Return: 0 or -EINVAL. */
int pl_join_pages(struct page *page, unsigned int order);
/** pl_zone_set_watermarks() - watermarks as a kernel reported them; pagesets recomputed. */
void pl_zone_set_watermarks(struct zone *zone, const unsigned long wmark[NR_WMARK]);
/** pl_zone_set_managed() - managed_pages as reported (<= spanned); pagesets recomputed. Return: 0 or -EINVAL. */
int pl_zone_set_managed(struct zone *zone, unsigned long managed);
/**
 * pl_zone_online_pages() - memory hotplug onlines @nr_pages of @zone:
 * managed_pages grows, watermarks and pageset limits are set again
 * (pcp->high stays). Return: 0 or -EINVAL.
 */
int pl_zone_online_pages(struct zone *zone, unsigned long nr_pages);
/**
 * pl_zone_set_section_online() - the memory section holding @pfn goes
 * offline or online: pagetypeinfo's block counts skip offline sections
 * (pfn_to_online_page()). Return: 0 or -EINVAL (@pfn outside @zone).
 */
int pl_zone_set_section_online(struct zone *zone, unsigned long pfn, bool online);
/** pl_pcp_set_high_batch() - a pcp's high and batch as reported (high may be below high_min). */
int pl_pcp_set_high_batch(struct zone *zone, unsigned int cpu, int high, int batch);

/* ---- debug checker (mm/debug.c) ------------------------------------------- */


#endif /* PAGELAB_MM_H */
