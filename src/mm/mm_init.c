// SPDX-License-Identifier: MIT
/*
 * mm_init.c - the page allocator's part of booting a machine, as the
 * kernel's mm/mm_init.c and mm/page_alloc.c: the memmap over real memory,
 * the zones, the watermarks and lowmem reserves (__setup_per_zone_wmarks,
 * setup_per_zone_lowmem_reserve), the per-CPU pagesets, and the release of
 * all memory into the buddy allocator (memblock_free_all). Also the
 * calling thread's machine and CPU (pl_this, pl_enter).
 *
 * The machine itself (its allocation, its vCPUs, the vmalloc space, the
 * checkers and fault sites) is put together above, in src/machine/.
 *
 * Layout (free_area_init): RAM is [0, max_pfn) less the configured holes;
 * the node spans from its first to its last RAM page; ZONE_DMA is
 * [0, dma_pfn), ZONE_DMA32 [dma_pfn, dma32_pfn), ZONE_NORMAL the rest, each
 * clipped to the node, so a zone may start inside a pageblock (x86_64's DMA
 * starts at pfn 1) and may be empty. spanned counts the zone's pfns, present
 * its RAM pages, managed the pages that reached the buddy allocator:
 * present less the boot reserve (memblock's reservations, modelled in
 * boot_reserve() below). The memmap is rounded up to a multiple of
 * MAX_ORDER_NR_PAGES with reserved, zone-less pages, so that a buddy pfn
 * computed at the end of memory always has a struct page to look at.
 *
 * The memmap and the page frames are MAP_NORESERVE mappings: a page of
 * either is committed by the host only when first touched. Booting writes
 * only the struct pages below ZONE_NORMAL, those of holes and reserves, and
 * the heads of the blocks it frees (ZONES_FLAGS() in mm_types.h makes an all-zero
 * struct page a ZONE_NORMAL one), so a 256 GiB machine boots in a few
 * hundred MiB of host memory; a memmap up to 1 GiB is committed up front
 * (populate_memmap()).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"
#include "validate.h"

_Thread_local struct pl_this pl_this;

/* The zone number given to the padding pages past max_pfn: matches no zone. */
#define ZONE_NONE 3UL

const char *const migratetype_names[MIGRATE_TYPES] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "Isolate",
};

static const char *const zone_names[MAX_NR_ZONES] = { "DMA", "DMA32", "Normal" };

/* sysctl_lowmem_reserve_ratio for DMA, DMA32 and Normal */
static const unsigned long lowmem_reserve_ratio[MAX_NR_ZONES] = { 256, 256, 32 };

/* vm.watermark_scale_factor: the machine's, else the kernel's default 10. */
static unsigned long watermark_scale_factor(const struct pl_machine *m)
{
	return m->config.watermark_scale_factor ? m->config.watermark_scale_factor : 10;
}

const char *const pl_boot_reserve_names[NR_PL_BOOT_RESERVE] = {
	[PL_RESERVE_MEMMAP] = "memmap",
	[PL_RESERVE_LOW_1M] = "first MiB",
	[PL_RESERVE_KERNEL] = "kernel image",
	[PL_RESERVE_HASHES] = "dentry+inode hashes",
	[PL_RESERVE_PERCPU] = "percpu first chunk",
};

/* The kernel's sizeof(struct page) on 64-bit: what its memmap costs per page. */
#define KERNEL_STRUCT_PAGE_SIZE	64UL
/* Pages of the percpu first chunk per CPU ("percpu: Embedded 53 pages/cpu", 6.18 x86_64). */
#define PCPU_FIRST_CHUNK_PAGES	53UL
/* x86_64 reserves the first MiB (reserve_real_mode, "always reserve the first 1M"). */
#define X86_LOW_RESERVE_PFN	((1UL << 20) >> PAGE_SHIFT)
/* x86_64 loads the kernel at CONFIG_PHYSICAL_START, 16 MiB. */
#define X86_PHYSICAL_START_PFN	((16UL << 20) >> PAGE_SHIFT)
/* alloc_large_system_hash(): one more scale step per 4x above 64 GiB. */
#define ADAPT_SCALE_NPAGES	((64UL << 30) >> PAGE_SHIFT)

static unsigned long int_sqrt(unsigned long x)
{
	unsigned long r = 0, bit = 1UL << 62;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
		bit >>= 2;
	}
	return r;
}

static bool test_bit_ul(const unsigned long *map, unsigned long bit)
{
	return map[bit / 64] & (1UL << (bit % 64));
}

static unsigned long roundup_pow_of_two_ul(unsigned long x)
{
	unsigned long p = 1;

	while (p < x)
		p <<= 1;
	return p;
}

/*
 * nr_free_buffer_pages(): what GFP_USER may use above the high watermarks,
 * summed over the zones up to gfp_zone(GFP_USER) (all of pagelab's).
 */
static unsigned long nr_free_buffer_pages(const struct pl_machine *m)
{
	unsigned long sum = 0;

	for (int i = 0; i < MAX_NR_ZONES; i++) {
		const struct zone *zone = &m->node_zones[i];
		unsigned long high = zone->_watermark[WMARK_HIGH];

		if (zone->managed_pages > high)
			sum += zone->managed_pages - high;
	}
	return sum;
}

/* __setup_per_zone_wmarks() + setup_per_zone_lowmem_reserve() for m->min_free_kbytes. */
static void setup_zone_wmarks(struct pl_machine *m)
{
	unsigned long lowmem_pages = 0, pages_min = m->min_free_kbytes >> (PAGE_SHIFT - 10);
	struct zone *zone;

	for_each_zone(zone, m)
		lowmem_pages += zone->managed_pages;

	for_each_zone(zone, m) {
		unsigned long wmin = lowmem_pages ? pages_min * zone->managed_pages / lowmem_pages : 0;
		unsigned long tmp = zone->managed_pages * watermark_scale_factor(m) / 10000;

		if (tmp < wmin >> 2)
			tmp = wmin >> 2;
		zone->_watermark[WMARK_MIN] = wmin;
		zone->_watermark[WMARK_LOW] = wmin + tmp;
		zone->_watermark[WMARK_HIGH] = wmin + 2 * tmp;
		zone->_watermark[WMARK_PROMO] = wmin + 3 * tmp;
		zone->watermark_boost = 0;
	}
	setup_per_zone_lowmem_reserve(m);
}

/**
 * setup_per_zone_lowmem_reserve() - each zone's lowmem_reserve[] (zoneinfo's
 * "protection"): for a request whose highest zone is j, zone i keeps back
 * the managed pages of zones i+1..j over its lowmem_reserve_ratio, as the
 * kernel computes it whenever managed pages change.
 */
void setup_per_zone_lowmem_reserve(struct pl_machine *m)
{
	for (int i = 0; i < MAX_NR_ZONES; i++) {
		unsigned long managed = 0;

		m->node_zones[i].lowmem_reserve[i] = 0;
		for (int j = i + 1; j < MAX_NR_ZONES; j++) {
			managed += m->node_zones[j].managed_pages;
			m->node_zones[i].lowmem_reserve[j] =
				(long)(managed / lowmem_reserve_ratio[i]);
		}
	}
}

/*
 * The boot's watermark setup, in the kernel's order: init_per_zone_wmark_min()
 * computes min_free_kbytes = clamp(int_sqrt(lowmem_kbytes * 16), 128, 262144)
 * from nr_free_buffer_pages() (the watermarks are still zero, so that is
 * every managed page) and sets the watermarks; then, with THP enabled,
 * khugepaged's set_recommended_min_free_kbytes() raises min_free_kbytes to
 * 2 + MIGRATE_PCPTYPES^2 = 11 pageblocks per populated zone, at most 5% of
 * nr_free_buffer_pages() (now above the first high watermarks), and sets
 * the watermarks again. A configured min_free_kbytes (the sysctl) wins.
 */
void pl_setup_per_zone_wmarks(struct pl_machine *m)
{
	struct zone *zone;

	if (m->config.min_free_kbytes) {
		m->min_free_kbytes = m->config.min_free_kbytes;
		setup_zone_wmarks(m);
		return;
	}
	for_each_zone(zone, m)
		zone->_watermark[WMARK_HIGH] = 0;
	{
		unsigned long kb = int_sqrt(nr_free_buffer_pages(m) * (PAGE_SIZE >> 10) * 16);

		m->min_free_kbytes = kb < 128 ? 128 : kb > 262144 ? 262144 : kb;
	}
	setup_zone_wmarks(m);
	if (m->config.thp) {
		unsigned long nr_zones = 0, recommended;

		for_each_populated_zone(zone, m)
			nr_zones++;
		recommended = pageblock_nr_pages * nr_zones * 2 +
			      pageblock_nr_pages * nr_zones * MIGRATE_PCPTYPES * MIGRATE_PCPTYPES;
		if (recommended > nr_free_buffer_pages(m) / 20)
			recommended = nr_free_buffer_pages(m) / 20;
		recommended <<= PAGE_SHIFT - 10;
		if (recommended > m->min_free_kbytes) {
			m->min_free_kbytes = recommended;
			setup_zone_wmarks(m);
		}
	}
}

/* ---- the physical layout -------------------------------------------------- */

static unsigned long overlap(unsigned long a0, unsigned long a1, unsigned long b0, unsigned long b1)
{
	unsigned long lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;

	return hi > lo ? hi - lo : 0;
}

/* Pages of [start, end) that fall in m->unavailable entries of @kind (-1: any). */
static unsigned long unavailable_pages(const struct pl_machine *m, unsigned long start,
				       unsigned long end, int kind)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < m->nr_unavailable; i++)
		if (kind < 0 || m->unavailable_kind[i] == kind)
			n += overlap(start, end, m->unavailable[i].start, m->unavailable[i].end);
	return n;
}

static unsigned long hole_pages(const struct pl_machine *m, unsigned long start, unsigned long end)
{
	return unavailable_pages(m, start, end, PL_UNAVAILABLE_HOLE);
}

/* Add [start, end) (pfns) to the unavailable ranges, kept sorted by start. */
static int add_unavailable(struct pl_machine *m, unsigned long start, unsigned long end, int kind)
{
	unsigned int i = m->nr_unavailable;

	if (start >= end)
		return 0;
	if (i == PL_MAX_UNAVAILABLE)
		return -EINVAL;
	while (i > 0 && m->unavailable[i - 1].start > start) {
		m->unavailable[i] = m->unavailable[i - 1];
		m->unavailable_kind[i] = m->unavailable_kind[i - 1];
		i--;
	}
	m->unavailable[i].start = start;
	m->unavailable[i].end = end;
	m->unavailable_kind[i] = (signed char)kind;
	m->nr_unavailable++;
	return 0;
}

/*
 * memblock_alloc() top-down: the highest @nr free RAM pages (not in a hole,
 * not already reserved) below the node's end, as one range, and reserve them.
 * Return: 0, or -ENOMEM if no gap is big enough.
 */
static int reserve_top_down(struct pl_machine *m, unsigned long nr, int kind)
{
	unsigned long hi = m->node_end_pfn;

	if (!nr)
		return 0;
	for (int i = (int)m->nr_unavailable - 1; i >= -1; i--) {
		unsigned long lo = i >= 0 ? m->unavailable[i].end : m->node_start_pfn;

		if (lo < hi && hi - lo >= nr && lo >= m->node_start_pfn) {
			m->boot_reserved[kind] += nr;
			return add_unavailable(m, hi - nr, hi, kind);
		}
		if (i >= 0 && m->unavailable[i].start < hi)
			hi = m->unavailable[i].start;
	}
	return -ENOMEM;
}

/* Reserve the present pages of [start, end) as @kind (a fixed placement). */
static int reserve_fixed(struct pl_machine *m, unsigned long start, unsigned long end, int kind)
{
	if (end > m->node_end_pfn)
		return -EINVAL;	/* does not fit in RAM */
	if (start >= end)
		return 0;
	if (unavailable_pages(m, start, end, -1) != hole_pages(m, start, end))
		return -EINVAL;	/* overlaps another reserve */
	m->boot_reserved[kind] += (end - start) - hole_pages(m, start, end);
	/* holes inside stay holes: record only the RAM runs */
	for (unsigned long pfn = start; pfn < end;) {
		unsigned long run = pfn;

		while (run < end && !hole_pages(m, run, run + 1))
			run++;
		if (run > pfn && add_unavailable(m, pfn, run, kind))
			return -EINVAL;
		while (run < end && hole_pages(m, run, run + 1))
			run++;
		pfn = run;
	}
	return 0;
}

/* alloc_large_system_hash(bucketsize 8, scale) for the dentry and inode caches. */
static unsigned long large_system_hash_pages(unsigned long nr_kernel_pages,
					     unsigned long nr_all_pages, int scale)
{
	const unsigned long bucketsize = 8;
	unsigned long numentries = (nr_kernel_pages + (1UL << (20 - PAGE_SHIFT)) - 1) &
				   ~((1UL << (20 - PAGE_SHIFT)) - 1);
	unsigned long max = ((nr_all_pages << PAGE_SHIFT) >> 4) / bucketsize;
	unsigned long bytes;

	for (unsigned long adapt = ADAPT_SCALE_NPAGES; adapt < numentries; adapt <<= 2)
		scale++;
	numentries >>= scale - PAGE_SHIFT;
	if (numentries * bucketsize < PAGE_SIZE)
		numentries = PAGE_SIZE / bucketsize;
	numentries = roundup_pow_of_two_ul(numentries);
	if (max > 0x80000000UL)
		max = 0x80000000UL;
	if (numentries > max)
		numentries = max;
	while (numentries & (numentries - 1))	/* ilog2 */
		numentries &= numentries - 1;
	bytes = bucketsize * numentries;
	return (bytes + PAGE_SIZE - 1) >> PAGE_SHIFT;
}

/*
 * What the kernel's boot keeps out of the buddy allocator, placed as
 * memblock places it: x86_64's first MiB, the kernel image (x86_64: at
 * 16 MiB; arm64: at the start of RAM, 2 MiB aligned), then top-down from
 * the end of the node the memmap (sparse_init: 64 bytes per page of every
 * present 128 MiB section), the dentry and inode hash tables (sized from
 * nr_kernel_pages, what memblock had free after the memmap) and the percpu
 * first chunk. Boot's smaller allocations (page tables, ACPI, the initrd,
 * freed later) are not modelled.
 */
static int boot_reserve(struct pl_machine *m)
{
	const struct pl_config *cfg = &m->config;
	unsigned long sections = 0, nr_kernel;
	unsigned long image = (cfg->kernel_image_bytes + PAGE_SIZE - 1) >> PAGE_SHIFT;
	int err = 0;

	if (cfg->arch == PL_ARCH_X86_64) {
		err |= reserve_fixed(m, 0, X86_LOW_RESERVE_PFN, PL_RESERVE_LOW_1M);
		err |= reserve_fixed(m, X86_PHYSICAL_START_PFN, X86_PHYSICAL_START_PFN + image,
				     PL_RESERVE_KERNEL);
	} else {
		unsigned long base = (m->node_start_pfn + pageblock_nr_pages - 1) &
				     ~(pageblock_nr_pages - 1);

		err |= reserve_fixed(m, base, base + image, PL_RESERVE_KERNEL);
	}
	for (unsigned long s = 0; s < m->nr_sections; s++)
		if (test_bit_ul(m->section_online, s))
			sections++;
	err |= reserve_top_down(m, sections * (PAGES_PER_SECTION * KERNEL_STRUCT_PAGE_SIZE / PAGE_SIZE),
				PL_RESERVE_MEMMAP);
	nr_kernel = (m->node_end_pfn - m->node_start_pfn) -
		    unavailable_pages(m, m->node_start_pfn, m->node_end_pfn, -1);
	err |= reserve_top_down(m, large_system_hash_pages(nr_kernel, nr_kernel, 13),
				PL_RESERVE_HASHES);	/* Dentry cache */
	err |= reserve_top_down(m, large_system_hash_pages(nr_kernel, nr_kernel, 14),
				PL_RESERVE_HASHES);	/* Inode-cache */
	err |= reserve_top_down(m, PCPU_FIRST_CHUNK_PAGES * m->nr_cpus, PL_RESERVE_PERCPU);
	return err ? -EINVAL : 0;
}

bool pl_pfn_section_online(const struct pl_machine *m, unsigned long pfn)
{
	unsigned long s = pfn >> PFN_SECTION_SHIFT;

	return s < m->nr_sections && test_bit_ul(m->section_online, s);
}

static enum zone_type pfn_zone_idx(const struct pl_machine *m, unsigned long pfn)
{
	if (pfn < m->dma_pfn)
		return ZONE_DMA;
	return pfn < m->dma32_pfn ? ZONE_DMA32 : ZONE_NORMAL;
}

/*
 * The machine's fixed hooks (m->hooks): debug checks, lock_stat's timed
 * locks, and the design switches that change the page allocator's per-call
 * paths: the PCP designs, and seed 002's counts, which every free-list add
 * and delete keeps. (A machine without PCPs is no hook: the paths test it.)
 */
static unsigned int mm_hooks_at_creation(const struct pl_machine *m)
{
	const struct pl_design *d = &m->config.design;
	unsigned int hooks = 0;

	if (m->debug)
		hooks |= PL_HOOK_DEBUG;
	if (m->config.lock_stat)
		hooks |= PL_HOOK_LOCKSTAT;
	if (d->pcp_owner || d->pcp_block_economy || d->economy_batch || d->economy_ramp ||
	    d->pcp_premerge || d->mt_counts || d->mt_counts_blocks)
		hooks |= PL_HOOK_DESIGN;
	return hooks;
}

static void init_zone(struct pl_machine *m, enum zone_type idx, unsigned long start,
		      unsigned long end)
{
	struct zone *zone = &m->node_zones[idx];

	zone->machine = m;
	zone->vm_debug = m->debug >= 1;
	zone->name = zone_names[idx];
	zone->zone_idx = idx;
	pl_spin_init(&zone->lock, m->config.lock_stat);
	pl_spin_set_class(&zone->lock, VT_LOCK_ZONE);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
	if (start < m->node_start_pfn)
		start = m->node_start_pfn;
	if (end > m->node_end_pfn)
		end = m->node_end_pfn;
	if (end <= start) {	/* an empty zone: spans nothing */
		zone->zone_start_pfn = 0;
		return;
	}
	zone->zone_start_pfn = start;
	zone->spanned_pages = end - start;
	zone->present_pages = zone->spanned_pages - hole_pages(m, start, end);
	zone->managed_pages = zone->present_pages -
			      (unavailable_pages(m, start, end, -1) - hole_pages(m, start, end));
}

/*
 * memmap_init(): every pageblock whose first pfn is RAM starts MOVABLE
 * (one in a hole stays 0, Unmovable, as in the kernel); the mt_counts
 * per-type block counts start from the same walk pagetypeinfo makes.
 */
static int init_zone_pageblocks(struct pl_machine *m, struct zone *zone)
{
	unsigned long nr_blocks = zone_nr_pageblocks(zone), base = zone_pageblock_base(zone);

	zone->pageblock_flags = calloc(nr_blocks, 1);
	if (!zone->pageblock_flags)
		return -ENOMEM;
	for (unsigned long b = 0; b < nr_blocks; b++) {
		unsigned long pfn = base + (b << pageblock_order);

		if (!hole_pages(m, pfn, pfn + 1))
			zone->pageblock_flags[b] = MIGRATE_MOVABLE;
		if (pl_pfn_section_online(m, pfn > zone->zone_start_pfn ? pfn : zone->zone_start_pfn))
			zone->nr_pageblocks_mt[zone->pageblock_flags[b]]++;
	}
	return 0;
}

/*
 * The struct pages that must say something an all-zero one does not: the
 * zone number below ZONE_NORMAL, PG_reserved on holes and reserves.
 */
static void init_memmap(struct pl_machine *m, unsigned long map_pages)
{
	unsigned long normal = m->dma32_pfn;

	for (unsigned long pfn = 0; pfn < normal && pfn < m->max_pfn; pfn++)
		m->mem_map[pfn].flags = ZONES_FLAGS(pfn_zone_idx(m, pfn));
	for (unsigned int i = 0; i < m->nr_unavailable; i++)
		for (unsigned long pfn = m->unavailable[i].start; pfn < m->unavailable[i].end; pfn++)
			m->mem_map[pfn].flags = ZONES_FLAGS(pfn_zone_idx(m, pfn)) |
						(1UL << PG_reserved);
	for (unsigned long pfn = m->max_pfn; pfn < map_pages; pfn++)
		m->mem_map[pfn].flags = (1UL << PG_reserved) | ZONES_FLAGS(ZONE_NONE);
}

/*
 * memblock_free_all(): hand every RAM page that is not reserved to the buddy
 * allocator, each free range in naturally aligned blocks of up to
 * MAX_PAGE_ORDER, into its pageblock's free list.
 */
void pl_mm_free_all_bootmem(struct pl_machine *m)
{
	struct zone *zone;

	for_each_populated_zone(zone, m) {
		unsigned long pfn = zone->zone_start_pfn, end = zone_end_pfn(zone);
		unsigned int i = 0;

		spin_lock(&zone->lock);
		while (pfn < end) {
			unsigned long stop = end;

			/* skip to the first unavailable range that ends after pfn */
			while (i < m->nr_unavailable && m->unavailable[i].end <= pfn)
				i++;
			if (i < m->nr_unavailable && m->unavailable[i].start <= pfn) {
				pfn = m->unavailable[i].end;
				continue;
			}
			if (i < m->nr_unavailable && m->unavailable[i].start < stop)
				stop = m->unavailable[i].start;
			while (pfn < stop) {
				unsigned int order = MAX_PAGE_ORDER;
				struct page *page = &m->mem_map[pfn];

				while (!IS_ALIGNED(pfn, 1UL << order) || pfn + (1UL << order) > stop)
					order--;
				__free_one_page(page, pfn, zone, order,
						get_pfnblock_migratetype(page, pfn), FPI_TO_TAIL);
				m->boot_freed_pages += 1UL << order;
				pfn += 1UL << order;
			}
		}
		spin_unlock(&zone->lock);
	}
	/* the vmstat thresholds come after the boot memory is in (vmstat_late_init()) */
	pl_refresh_zone_stat_thresholds(m);
}

static unsigned long memmap_pages(unsigned long max_pfn)
{
	return (max_pfn + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
}

int pl_mm_check_config(const struct pl_config *cfg)
{
	unsigned long max_pfn = cfg->mem_bytes >> PAGE_SHIFT;

	if (!max_pfn || !IS_ALIGNED(max_pfn, pageblock_nr_pages) ||
	    !IS_ALIGNED(cfg->dma_bytes >> PAGE_SHIFT, pageblock_nr_pages) ||
	    !IS_ALIGNED(cfg->dma32_bytes >> PAGE_SHIFT, pageblock_nr_pages) ||
	    cfg->mem_bytes > PL_MAX_MEM_BYTES || cfg->nr_holes > PL_MAX_HOLES ||
	    (cfg->arch != PL_ARCH_X86_64 && cfg->arch != PL_ARCH_ARM64))
		return -EINVAL;
	for (unsigned int i = 0; i < cfg->nr_holes; i++) {
		const struct pl_mem_range *h = &cfg->holes[i];

		if (h->start >= h->end || !IS_ALIGNED(h->start, PAGE_SIZE) ||
		    !IS_ALIGNED(h->end, PAGE_SIZE) || h->end > cfg->mem_bytes)
			return -EINVAL;
		for (unsigned int j = 0; j < i; j++)
			if (overlap(h->start, h->end, cfg->holes[j].start, cfg->holes[j].end))
				return -EINVAL;
	}
	return 0;
}

/*
 * A memmap of up to MEMMAP_EAGER_BYTES is committed at boot (one write per
 * host page), so that a benchmark's first touch of a struct page does not
 * pay a host page fault inside its measured region (the kernel's memmap is
 * resident). A larger one (a 256 GiB profile's is 3 GiB) stays lazy, so it
 * fits on a small host; its first touches are host faults, which the bench
 * harness counts.
 */
#define MEMMAP_EAGER_BYTES	(1UL << 30)

static void populate_memmap(struct pl_machine *m, unsigned long map_pages)
{
	unsigned long bytes = map_pages * sizeof(struct page);
	volatile char *p = (volatile char *)m->mem_map;

	if (bytes > MEMMAP_EAGER_BYTES)
		return;
	for (unsigned long off = 0; off < bytes; off += 4096)
		p[off] = 0;
}

/* Holes, node span, sections, boot reserve: everything the zones are cut from. */
static int init_layout(struct pl_machine *m)
{
	const struct pl_config *cfg = &m->config;
	unsigned long dma_pfn = cfg->dma_bytes >> PAGE_SHIFT, dma32_pfn = cfg->dma32_bytes >> PAGE_SHIFT;

	m->max_pfn = cfg->mem_bytes >> PAGE_SHIFT;
	m->dma_pfn = dma_pfn < m->max_pfn ? dma_pfn : m->max_pfn;
	m->dma32_pfn = dma32_pfn < m->dma_pfn ? m->dma_pfn : dma32_pfn < m->max_pfn ? dma32_pfn : m->max_pfn;
	for (unsigned int i = 0; i < cfg->nr_holes; i++)
		if (add_unavailable(m, cfg->holes[i].start >> PAGE_SHIFT,
				    cfg->holes[i].end >> PAGE_SHIFT, PL_UNAVAILABLE_HOLE))
			return -EINVAL;
	m->node_start_pfn = 0;
	m->node_end_pfn = m->max_pfn;
	while (m->node_start_pfn < m->max_pfn && hole_pages(m, m->node_start_pfn, m->node_start_pfn + 1))
		m->node_start_pfn++;
	while (m->node_end_pfn > m->node_start_pfn && hole_pages(m, m->node_end_pfn - 1, m->node_end_pfn))
		m->node_end_pfn--;
	if (m->node_end_pfn <= m->node_start_pfn)
		return -EINVAL;	/* no RAM at all */
	m->nr_sections = (m->max_pfn + PAGES_PER_SECTION - 1) >> PFN_SECTION_SHIFT;
	m->section_online = calloc((m->nr_sections + 63) / 64, sizeof(unsigned long));
	if (!m->section_online)
		return -ENOMEM;
	for (unsigned long s = 0; s < m->nr_sections; s++) {
		unsigned long a = s << PFN_SECTION_SHIFT, b = a + PAGES_PER_SECTION;

		if (b > m->max_pfn)
			b = m->max_pfn;
		if (hole_pages(m, a, b) < b - a)
			m->section_online[s / 64] |= 1UL << (s % 64);
	}
	return cfg->boot_reserve ? boot_reserve(m) : 0;
}

int pl_mm_init(struct pl_machine *m)
{
	const struct pl_config *cfg = &m->config;
	unsigned long map_pages;
	struct zone *zone;
	int err = init_layout(m);

	if (err) {
		pl_warn_ratelimited("machine: the holes and boot reserves of %lu bytes do not fit",
				    cfg->mem_bytes);
		free(m->section_online);
		m->section_online = NULL;
		return err;
	}
	map_pages = memmap_pages(m->max_pfn);
	m->mem_map = mmap(NULL, map_pages * sizeof(struct page), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	m->mem_base = mmap(NULL, cfg->mem_bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m->mem_map == MAP_FAILED || m->mem_base == MAP_FAILED) {
		pl_warn_ratelimited("machine: cannot map %lu bytes of memory", cfg->mem_bytes);
		if (m->mem_map != MAP_FAILED)
			munmap(m->mem_map, map_pages * sizeof(struct page));
		if (m->mem_base != MAP_FAILED)
			munmap(m->mem_base, cfg->mem_bytes);
		m->mem_map = NULL;
		m->mem_base = NULL;
		free(m->section_online);
		m->section_online = NULL;
		return -ENOMEM;
	}
	populate_memmap(m, map_pages);
	init_zone(m, ZONE_DMA, 0, m->dma_pfn);
	init_zone(m, ZONE_DMA32, m->dma_pfn, m->dma32_pfn);
	init_zone(m, ZONE_NORMAL, m->dma32_pfn, m->max_pfn);
	init_memmap(m, map_pages);
	for_each_populated_zone(zone, m) {
		if (init_zone_pageblocks(m, zone)) {
			pl_mm_exit(m);
			return -ENOMEM;
		}
	}
	pl_setup_per_zone_wmarks(m);
	pl_setup_zone_pagesets(m);
	pl_kcompactd_init(m);
	pl_fault_state_init(&m->fail_page_alloc);
	m->fail_page_alloc_ready = true;
	m->hooks = mm_hooks_at_creation(m);
	return 0;
}

void pl_mm_exit(struct pl_machine *m)
{
	struct zone *zone;

	if (!m->mem_map)
		return;
	for_each_zone(zone, m) {
		free(zone->pageblock_flags);
		zone->pageblock_flags = NULL;
	}
	if (m->fail_page_alloc_ready) {
		pl_free_zone_pagesets(m);
		pl_fault_state_destroy(&m->fail_page_alloc);
		m->fail_page_alloc_ready = false;
	}
	munmap(m->mem_map, memmap_pages(m->max_pfn) * sizeof(struct page));
	munmap(m->mem_base, m->config.mem_bytes);
	free(m->section_online);
	m->section_online = NULL;
	m->mem_map = NULL;
	m->mem_base = NULL;
}

int pl_enter(struct pl_machine *m, unsigned int cpu)
{
	int err;

	if (!m)
		return pl_bad_arg(__func__, "machine is NULL");
	if (cpu >= m->nr_cpus) {
		pl_warn_ratelimited("pl_enter: cpu %u out of range", cpu);
		return -EINVAL;
	}
	err = pl_vcpu_claim(m, cpu);
	if (err)
		return err;
	pl_this.machine = m;
	pl_this.cpu = &m->cpus[cpu];
	pl_lock_cpu = cpu;	/* lock_stat's bounces */
	pl_vt_enter(m->vt, cpu);
	return 0;
}

void pl_leave(void)
{
	pl_vcpu_release();
	pl_this.machine = NULL;
	pl_this.cpu = NULL;
	pl_vt_cur = NULL;
}

void pl_events_sum(const struct pl_machine *m, unsigned long out[NR_PL_VM_EVENTS])
{
	if (pl_check_ptr(__func__, m, "machine") || pl_check_ptr(__func__, out, "out"))
		return;
	memset(out, 0, sizeof(unsigned long) * NR_PL_VM_EVENTS);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		for (int i = 0; i < NR_PL_VM_EVENTS; i++)
			out[i] += READ_ONCE(m->cpus[c].events.ev[i]);
}

unsigned long pl_nr_free_pages(const struct pl_machine *m)
{
	long sum = 0;

	if (pl_check_ptr(__func__, m, "machine"))
		return 0;
	for (int i = 0; i < MAX_NR_ZONES; i++)
		sum += zone_page_state_snapshot(&m->node_zones[i], NR_FREE_PAGES);
	return sum > 0 ? (unsigned long)sum : 0;
}

void pl_set_tracepoint_sink(struct pl_machine *m,
			    void (*fn)(void *ctx, const struct pl_tp_event *ev), void *ctx)
{
	m->tp_ctx = ctx;
	m->tp_fn = fn;
	if (fn)
		__atomic_fetch_or(&m->hooks, PL_HOOK_TRACE, __ATOMIC_RELAXED);
	else
		__atomic_fetch_and(&m->hooks, ~PL_HOOK_TRACE, __ATOMIC_RELAXED);
}
