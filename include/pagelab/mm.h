/* SPDX-License-Identifier: MIT */
/*
 * mm.h - the page allocator's API: the simulated machine (a pg_data_t and
 * more), the calling thread's vCPU, pfn <-> page <-> address, alloc_pages()
 * and friends, contiguous ranges, and loading a real kernel's state. The
 * structures are in mm_types.h, the machine configuration and the design
 * switches in config.h, the /proc reports in reports.h (included here).
 *
 *   struct pl_machine         one simulated computer (a pg_data_t and more)
 *     .mem_map[]  ----------> struct page, one per 4 KiB page frame
 *     .mem_base   ----------> the page frames themselves (real memory)
 *     .node_zones[DMA32, Normal]  (struct zone, mm_types.h)
 */
#ifndef PAGELAB_MM_H
#define PAGELAB_MM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "base.h"
#include "config.h"
#include "fault_inject.h"
#include "gfp_types.h"
#include "list.h"
#include "mm_types.h"

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
	/* the holder of movable allocations (pl_set_migrate_ops()), NULL: none movable */
	const struct pl_migrate_ops *migrate_ops;
	void *migrate_ctx;
	struct pl_zone_compact zone_compact[MAX_NR_ZONES];
	struct pl_kcompactd kcompactd;
	/*
	 * what kswapd was woken for (pgdat->kswapd_order, and
	 * kswapd_highest_zoneidx + 1, 0: none asked), relaxed atomics
	 */
	int kswapd_order, kswapd_highest_zoneidx;
	int compact_capturing;	/* direct compactors running (atomic): see task_capc() */
	/*
	 * PL_HOOK_* bits: what this machine's calls may have to do beyond the
	 * baseline's work (pl_hooks_off()). Set at creation for its switches
	 * and by the setters of the others (atomic); a bit may outlive its
	 * hook (the call then takes the general path, which tests each hook
	 * itself), never the reverse.
	 */
	unsigned int hooks;
};

/* m->hooks: a tracepoint sink, fail_page_alloc armed, debug checks, a design
 * switch on the page allocator's paths, lock_stat's timed locks */
enum {
	PL_HOOK_TRACE = 1u << 0,
	PL_HOOK_FAULT = 1u << 1,
	PL_HOOK_DEBUG = 1u << 2,
	PL_HOOK_DESIGN = 1u << 3,
	PL_HOOK_LOCKSTAT = 1u << 4,
};

/* zone_compact() - @zone's compaction state. */
static inline struct pl_zone_compact *zone_compact(const struct zone *zone)
{
	return &zone->machine->zone_compact[zone->zone_idx];
}

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
extern _Thread_local struct pl_this pl_this PL_TLS;

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
 * alloc_contig_pages() - find and allocate @nr_pages contiguous pages
 * (aligned to a power of two up to a pageblock), highest allowed zone first:
 * a free range, or, where the machine has a holder of movable pages
 * (pl_set_migrate_ops()), any range without a reserved page whose movable
 * allocations alloc_contig_range() can migrate out, as the kernel's.
 * Return: the first page, or NULL (what failed tries migrated stays moved).
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

/**
 * pl_pcp_design_batch() - the batch @zone's design computes for it when that
 * differs from 6.18's zone_batchsize(), else 0. A snapshot reports 6.18's
 * batch; a design that computes another (pcp_batch2x) gets its own after a
 * load, from the loaded zone, as the kernel under that design would have.
 */
int pl_pcp_design_batch(const struct zone *zone);

/* The /proc and debugfs reports of a machine (mm/vmstat.c): reports.h. */
#include "reports.h"

#endif /* PAGELAB_MM_H */
