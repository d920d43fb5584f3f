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
 * Layout: pfn 0 .. max_pfn-1 are present; ZONE_DMA32 spans [0, dma32_pfn),
 * ZONE_NORMAL [dma32_pfn, max_pfn). The memmap is rounded up to a multiple
 * of MAX_ORDER_NR_PAGES with reserved, zone-less pages, so that a buddy pfn
 * computed at the end of memory always has a struct page to look at. The
 * memmap and the page frames are MAP_NORESERVE mappings: a page of either
 * is committed by the host only when first touched.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "internal.h"

_Thread_local struct pl_this pl_this;

/* The zone number given to the padding pages past max_pfn: matches no zone. */
#define ZONE_NONE 3UL

const char *const migratetype_names[MIGRATE_TYPES] = {
	"Unmovable", "Movable", "Reclaimable", "HighAtomic", "Isolate",
};

static const char *const zone_names[MAX_NR_ZONES] = { "DMA32", "Normal" };

/* sysctl_lowmem_reserve_ratio for DMA32 and Normal */
static const unsigned long lowmem_reserve_ratio[MAX_NR_ZONES] = { 256, 32 };

/* vm.watermark_scale_factor default */
static const unsigned long watermark_scale_factor = 10;

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

/*
 * calculate_min_free_kbytes() + __setup_per_zone_wmarks() +
 * setup_per_zone_lowmem_reserve(). Without THP's khugepaged there is no
 * set_recommended_min_free_kbytes() raising min_free_kbytes further.
 */
void pl_setup_per_zone_wmarks(struct pl_machine *m)
{
	unsigned long lowmem_pages = 0, pages_min;
	struct zone *zone;

	for_each_zone(zone, m)
		lowmem_pages += zone->managed_pages;

	if (!m->config.min_free_kbytes) {
		unsigned long kb = int_sqrt(lowmem_pages * (PAGE_SIZE >> 10) * 16);

		m->min_free_kbytes = kb < 128 ? 128 : kb > 262144 ? 262144 : kb;
	} else {
		m->min_free_kbytes = m->config.min_free_kbytes;
	}
	pages_min = m->min_free_kbytes >> (PAGE_SHIFT - 10);

	for_each_zone(zone, m) {
		unsigned long wmin = lowmem_pages ? pages_min * zone->managed_pages / lowmem_pages : 0;
		unsigned long tmp = zone->managed_pages * watermark_scale_factor / 10000;

		if (tmp < wmin >> 2)
			tmp = wmin >> 2;
		zone->_watermark[WMARK_MIN] = wmin;
		zone->_watermark[WMARK_LOW] = wmin + tmp;
		zone->_watermark[WMARK_HIGH] = wmin + 2 * tmp;
		zone->_watermark[WMARK_PROMO] = wmin + 3 * tmp;
		zone->watermark_boost = 0;
	}

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

static void init_zone(struct pl_machine *m, enum zone_type idx, unsigned long start,
		      unsigned long end)
{
	struct zone *zone = &m->node_zones[idx];

	zone->machine = m;
	zone->name = zone_names[idx];
	zone->zone_idx = idx;
	zone->zone_start_pfn = start;
	zone->spanned_pages = end - start;
	zone->present_pages = end - start;
	zone->managed_pages = end - start;
	pl_spin_init(&zone->lock, m->config.lock_stat);
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++)
			INIT_LIST_HEAD(&zone->free_area[o].free_list[mt]);
	if (end > start) {
		unsigned long nr_blocks = (end - start) >> pageblock_order;

		zone->pageblock_flags = calloc(nr_blocks, 1);
		memset(zone->pageblock_flags, MIGRATE_MOVABLE, nr_blocks);
		zone->nr_pageblocks_mt[MIGRATE_MOVABLE] = nr_blocks;
	}
	for (unsigned long pfn = start; pfn < end; pfn++)
		m->mem_map[pfn].flags = ((unsigned long)idx << ZONES_PGSHIFT) |
					((pfn >> PFN_SECTION_SHIFT) << SECTIONS_PGSHIFT);
}

/* memblock_free_all(): hand every zone's pages to the buddy allocator. */
void pl_mm_free_all_bootmem(struct pl_machine *m)
{
	struct zone *zone;

	for_each_populated_zone(zone, m) {
		unsigned long pfn = zone->zone_start_pfn, end = zone_end_pfn(zone);

		spin_lock(&zone->lock);
		while (pfn < end) {
			unsigned int order = MAX_PAGE_ORDER;

			while (!IS_ALIGNED(pfn, 1UL << order) || pfn + (1UL << order) > end)
				order--;
			__free_one_page(&m->mem_map[pfn], pfn, zone, order, MIGRATE_MOVABLE,
					FPI_TO_TAIL);
			pfn += 1UL << order;
		}
		spin_unlock(&zone->lock);
	}
}

static unsigned long memmap_pages(unsigned long max_pfn)
{
	return (max_pfn + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
}

int pl_mm_check_config(const struct pl_config *cfg)
{
	unsigned long max_pfn = cfg->mem_bytes >> PAGE_SHIFT;
	unsigned long dma32_pfn = cfg->dma32_bytes >> PAGE_SHIFT;

	if (!max_pfn || !IS_ALIGNED(max_pfn, pageblock_nr_pages) ||
	    !IS_ALIGNED(dma32_pfn, pageblock_nr_pages) ||
	    (max_pfn >> PFN_SECTION_SHIFT) > SECTIONS_MASK)
		return -EINVAL;
	return 0;
}

int pl_mm_init(struct pl_machine *m)
{
	const struct pl_config *cfg = &m->config;
	unsigned long max_pfn = cfg->mem_bytes >> PAGE_SHIFT;
	unsigned long dma32_pfn = cfg->dma32_bytes >> PAGE_SHIFT;
	unsigned long map_pages = memmap_pages(max_pfn);

	if (dma32_pfn > max_pfn)
		dma32_pfn = max_pfn;
	m->max_pfn = max_pfn;
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
		return -ENOMEM;
	}
	for (unsigned long pfn = max_pfn; pfn < map_pages; pfn++)
		m->mem_map[pfn].flags = (1UL << PG_reserved) | (ZONE_NONE << ZONES_PGSHIFT);

	init_zone(m, ZONE_DMA32, 0, dma32_pfn);
	init_zone(m, ZONE_NORMAL, dma32_pfn, max_pfn);
	pl_setup_per_zone_wmarks(m);
	pl_setup_zone_pagesets(m);
	pl_fault_state_init(&m->fail_page_alloc);
	return 0;
}

void pl_mm_exit(struct pl_machine *m)
{
	struct zone *zone;

	if (!m->mem_map)
		return;
	for_each_zone(zone, m)
		free(zone->pageblock_flags);
	pl_free_zone_pagesets(m);
	pl_fault_state_destroy(&m->fail_page_alloc);
	munmap(m->mem_map, memmap_pages(m->max_pfn) * sizeof(struct page));
	munmap(m->mem_base, m->config.mem_bytes);
	m->mem_map = NULL;
	m->mem_base = NULL;
}

int pl_enter(struct pl_machine *m, unsigned int cpu)
{
	if (!m || cpu >= m->nr_cpus) {
		pl_warn_ratelimited("pl_enter: cpu %u out of range", cpu);
		return -EINVAL;
	}
	pl_this.machine = m;
	pl_this.cpu = &m->cpus[cpu];
	return 0;
}

void pl_leave(void)
{
	pl_this.machine = NULL;
	pl_this.cpu = NULL;
}

void pl_events_sum(const struct pl_machine *m, unsigned long out[NR_PL_VM_EVENTS])
{
	memset(out, 0, sizeof(unsigned long) * NR_PL_VM_EVENTS);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		for (int i = 0; i < NR_PL_VM_EVENTS; i++)
			out[i] += READ_ONCE(m->cpus[c].events.ev[i]);
}

unsigned long pl_nr_free_pages(const struct pl_machine *m)
{
	long sum = 0;

	for (int i = 0; i < MAX_NR_ZONES; i++)
		sum += zone_page_state(&m->node_zones[i], NR_FREE_PAGES);
	return sum > 0 ? (unsigned long)sum : 0;
}
