// SPDX-License-Identifier: MIT
/*
 * machine.c - building a simulated machine: the memmap over real memory,
 * the zones, the watermarks and lowmem reserves (as mm/page_alloc.c's
 * __setup_per_zone_wmarks and setup_per_zone_lowmem_reserve), the boot-time
 * release of all memory into the buddy allocator, the vCPUs, and the design
 * presets.
 *
 * Layout: pfn 0 .. max_pfn-1 are present; ZONE_DMA32 spans [0, dma32_pfn),
 * ZONE_NORMAL [dma32_pfn, max_pfn). The memmap is rounded up to a multiple
 * of MAX_ORDER_NR_PAGES with reserved, zone-less pages, so that a buddy pfn
 * computed at the end of memory always has a struct page to look at.
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

const char *const pl_design_presets[] = { "v6.18", "mt-counts", "pcp-owner", "contig-batch",
					  "v6.19-rc1", "v6.19-rc1+contig", "all", "maple", "maple-index",
					  NULL };

int pl_design_preset(const char *name, struct pl_design *out)
{
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "v6.18")) {
		out->name = "v6.18";
	} else if (!strcmp(name, "mt-counts")) {
		out->name = "mt-counts";
		out->mt_counts = true;
	} else if (!strcmp(name, "pcp-owner")) {
		out->name = "pcp-owner";
		out->pcp_owner = true;
	} else if (!strcmp(name, "contig-batch")) {
		out->name = "contig-batch";
		out->free_contig_batch = true;
	} else if (!strcmp(name, "v6.19-rc1")) {
		out->name = "v6.19-rc1";
		out->vmalloc_high_order = true;
	} else if (!strcmp(name, "v6.19-rc1+contig")) {
		out->name = "v6.19-rc1+contig";
		out->vmalloc_high_order = true;
		out->free_contig_batch = true;
		out->vfree_batch = true;
	} else if (!strcmp(name, "maple")) {
		out->name = "maple";
		out->vmap_index = VMAP_INDEX_MAPLE;
		out->vmap_pcpu_bump = true;
	} else if (!strcmp(name, "maple-index")) {
		/* the maple index alone, to measure it against the rbtree */
		out->name = "maple-index";
		out->vmap_index = VMAP_INDEX_MAPLE;
	} else if (!strcmp(name, "all")) {
		out->name = "all";
		out->mt_counts = true;
		out->pcp_owner = true;
		out->free_contig_batch = true;
		out->vmalloc_high_order = true;
		out->vfree_batch = true;
		out->vmap_index = VMAP_INDEX_MAPLE;
		out->vmap_pcpu_bump = true;
	} else {
		return -EINVAL;
	}
	return 0;
}

void pl_config_default(struct pl_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mem_bytes = 16UL << 30;
	cfg->dma32_bytes = 4UL << 30;
	cfg->nr_cpus = 1;
	cfg->tlb_flush_ns_per_cpu = 1000;
	pl_topology_default(&cfg->topology);
	pl_design_preset("v6.18", &cfg->design);
}

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
	pl_spin_set_class(&zone->lock, VT_LOCK_ZONE);
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
static void free_all_bootmem(struct pl_machine *m)
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

struct pl_machine *pl_machine_create(const struct pl_config *cfg)
{
	unsigned long max_pfn = cfg->mem_bytes >> PAGE_SHIFT;
	unsigned long dma32_pfn = cfg->dma32_bytes >> PAGE_SHIFT;
	unsigned long map_pages;
	struct pl_machine *m;

	if (!max_pfn || !IS_ALIGNED(max_pfn, pageblock_nr_pages) ||
	    !IS_ALIGNED(dma32_pfn, pageblock_nr_pages) || !cfg->nr_cpus ||
	    cfg->debug < 0 || cfg->debug > 3 || (max_pfn >> PFN_SECTION_SHIFT) > SECTIONS_MASK) {
		pl_warn_ratelimited("machine: bad config (memory %lu bytes, DMA32 end %lu, %u cpus): "
				    "sizes must be non-zero multiples of 2 MiB",
				    cfg->mem_bytes, cfg->dma32_bytes, cfg->nr_cpus);
		return NULL;
	}
	if (dma32_pfn > max_pfn)
		dma32_pfn = max_pfn;

	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->config = *cfg;
	m->debug = cfg->debug;
	m->max_pfn = max_pfn;
	m->nr_cpus = cfg->nr_cpus;
	map_pages = (max_pfn + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
	m->mem_map = mmap(NULL, map_pages * sizeof(struct page), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	m->mem_base = mmap(NULL, cfg->mem_bytes, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	m->cpus = aligned_alloc(64, sizeof(struct pl_cpu) * m->nr_cpus);
	if (m->mem_map == MAP_FAILED || m->mem_base == MAP_FAILED || !m->cpus) {
		pl_warn_ratelimited("machine: cannot map %lu bytes of memory", cfg->mem_bytes);
		if (m->mem_map != MAP_FAILED)
			munmap(m->mem_map, map_pages * sizeof(struct page));
		if (m->mem_base != MAP_FAILED)
			munmap(m->mem_base, cfg->mem_bytes);
		free(m->cpus);
		free(m);
		return NULL;
	}
	memset(m->cpus, 0, sizeof(struct pl_cpu) * m->nr_cpus);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		m->cpus[c].id = c;
	for (unsigned long pfn = max_pfn; pfn < map_pages; pfn++)
		m->mem_map[pfn].flags = (1UL << PG_reserved) | (ZONE_NONE << ZONES_PGSHIFT);

	init_zone(m, ZONE_DMA32, 0, dma32_pfn);
	init_zone(m, ZONE_NORMAL, dma32_pfn, max_pfn);
	pl_setup_per_zone_wmarks(m);
	pl_setup_zone_pagesets(m);

	/* Boot runs on CPU 0 of this machine, then restores the caller's context. */
	struct pl_this saved = pl_this;
	struct pl_vt_cpu *saved_vt = pl_vt_cur;

	pl_enter(m, 0);
	free_all_bootmem(m);
	m->vmap = vmap_space_create(m);	/* vmalloc_init() */
	pl_this = saved;
	pl_vt_cur = saved_vt;
	if (!m->vmap) {
		pl_machine_destroy(m);
		return NULL;
	}
	/* Virtual time starts after boot: clocks at 0 when the workload begins. */
	if (m->config.vtime) {
		struct pl_vt_params p;

		pl_vt_params_default(&p);
		/* One kernel TLB flush: the configured cost for each vCPU it reaches. */
		p.event_ps[PL_EV_TLB_FLUSH] = m->config.tlb_flush_ns_per_cpu * m->nr_cpus * 1000;
		/* The free-space search under free_vmap_area_lock: per index design. */
		p.hold_ps[VT_LOCK_VMAP_FREE] +=
			p.vmalloc_ps[m->config.design.vmap_index == VMAP_INDEX_MAPLE];
		m->vt = pl_vtime_create(m->nr_cpus, &m->config.topology, &p);
		if (!m->vt) {
			pl_warn_ratelimited("pl_machine_create: bad topology or no memory for vtime");
			pl_machine_destroy(m);
			return NULL;
		}
	}
	return m;
}

void pl_machine_destroy(struct pl_machine *m)
{
	struct zone *zone;
	unsigned long map_pages;

	if (!m)
		return;
	if (m->debug >= 1)
		pl_debug_check(m, 1, "machine teardown");
	if (pl_this.machine == m)
		pl_leave();
	pl_vtime_destroy(m->vt);
	map_pages = (m->max_pfn + MAX_ORDER_NR_PAGES - 1) & ~(MAX_ORDER_NR_PAGES - 1);
	for_each_zone(zone, m)
		free(zone->pageblock_flags);
	pl_free_zone_pagesets(m);
	vmap_space_destroy(m->vmap);
	pl_fault_inject_free(m);
	munmap(m->mem_map, map_pages * sizeof(struct page));
	munmap(m->mem_base, m->config.mem_bytes);
	free(m->cpus);
	free(m);
}

int pl_enter(struct pl_machine *m, unsigned int cpu)
{
	if (!m || cpu >= m->nr_cpus) {
		pl_warn_ratelimited("pl_enter: cpu %u out of range", cpu);
		return -EINVAL;
	}
	pl_this.machine = m;
	pl_this.cpu = &m->cpus[cpu];
	pl_vt_enter(m->vt, cpu);
	return 0;
}

void pl_leave(void)
{
	pl_this.machine = NULL;
	pl_this.cpu = NULL;
	pl_vt_cur = NULL;
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
