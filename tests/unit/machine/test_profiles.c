// SPDX-License-Identifier: MIT
/*
 * test_profiles.c - every machine profile (src/machine/profile.c)
 * booted and checked against the kernel's formulas, computed here
 * independently from the profile's description (RAM, CPUs, arch, cache):
 *  - the zone layout: spanned and present from the e820/arm64 memory map,
 *    managed = present - the boot reserve, recomputed (memmap per present
 *    section, first MiB, kernel image, alloc_large_system_hash() for the
 *    dentry and inode tables, the percpu first chunk);
 *  - min_free_kbytes (calculate_min_free_kbytes() and THP's
 *    set_recommended_min_free_kbytes()), the min/low watermarks and the
 *    lowmem reserves;
 *  - pcp->batch (zone_batchsize()), high_min/high_max (zone_highsize()) and
 *    PCPF_FREE_HIGH_BATCH (zone_pcp_update_cacheinfo());
 *  - this host's own /proc/zoneinfo for the firecracker-24g profile (DMA
 *    and DMA32, whose shape does not depend on deferred struct page init);
 *  - a 256 GiB profile boots, allocates, vmallocs and passes the checker
 *    while the host commits only a bounded amount of memory;
 *  - arm64's vmalloc_huge maps 64 KiB contiguous-PTE blocks below PMD size;
 *  - bad profile names and configs are refused without side effects.
 */
#include <stdio.h>
#include "helpers.h"

#define GiB (1UL << 30)
#define KiB (1UL << 10)

/* ---- the expected values, from the kernel's formulas ----------------------- */

struct expect {
	unsigned long spanned[MAX_NR_ZONES], present[MAX_NR_ZONES], reserved[MAX_NR_ZONES];
};

static unsigned long isqrt(unsigned long x)
{
	unsigned long r = 0;

	while ((r + 1) * (r + 1) <= x)
		r++;
	return r;
}

static unsigned long pow2_ceil(unsigned long x)
{
	unsigned long p = 1;

	while (p < x)
		p *= 2;
	return p;
}

/* alloc_large_system_hash(), 8-byte buckets, one per 2^scale bytes. */
static unsigned long hash_pages(unsigned long nr_kernel_pages, int scale)
{
	unsigned long n = (nr_kernel_pages + 255) / 256 * 256;	/* round up to 1 MiB */

	for (unsigned long adapt = (64UL << 30) / PAGE_SIZE; adapt < n; adapt *= 4)
		scale++;
	n /= 1UL << (scale - 12);
	n = pow2_ceil(n);
	if (n > (nr_kernel_pages * PAGE_SIZE / 16) / 8) {	/* 1/16 of memory */
		n = (nr_kernel_pages * PAGE_SIZE / 16) / 8;
		while (n & (n - 1))
			n &= n - 1;
	}
	return n * 8 / PAGE_SIZE;
}

/*
 * The profile's zones from its description: x86_64 RAM is [4K, 0x9f000) +
 * [1M, 3G) + [4G, ...), ZONE_DMA to 16 MiB, DMA32 to 4 GiB; arm64 RAM is
 * [base, base + ram), ZONE_DMA to 4 GiB, DMA32 empty. The reserve: first
 * MiB and kernel image low, everything else at the top of Normal.
 */
static void expected_layout(const struct pl_machine_profile *p, struct expect *e)
{
	const unsigned long image = (32470 * KiB + PAGE_SIZE - 1) / PAGE_SIZE;
	unsigned long present_total, sections, memmap, nr_kernel, top;

	memset(e, 0, sizeof(*e));
	if (p->arch == PL_ARCH_X86_64) {
		unsigned long low = p->ram_bytes > 3 * GiB ? 3 * GiB : p->ram_bytes;

		e->spanned[ZONE_DMA] = 4096 - 1;
		e->present[ZONE_DMA] = 4096 - 1 - (256 - 159);
		e->spanned[ZONE_DMA32] = (4 * GiB - 16 * MiB) / PAGE_SIZE;
		e->present[ZONE_DMA32] = (low - 16 * MiB) / PAGE_SIZE;
		e->spanned[ZONE_NORMAL] = (p->ram_bytes - low) / PAGE_SIZE;
		e->present[ZONE_NORMAL] = e->spanned[ZONE_NORMAL];
		e->reserved[ZONE_DMA] = 158;		/* pfns 1..158: the first MiB's RAM */
		e->reserved[ZONE_DMA32] = image;	/* at 16 MiB */
		/* sections with RAM: [0, 3G) and [4G, end) */
		sections = low / (128 * MiB) + (p->ram_bytes - low) / (128 * MiB);
	} else {
		e->spanned[ZONE_DMA] = (4 * GiB - p->ram_base) / PAGE_SIZE;
		e->present[ZONE_DMA] = e->spanned[ZONE_DMA];
		e->spanned[ZONE_NORMAL] = (p->ram_base + p->ram_bytes - 4 * GiB) / PAGE_SIZE;
		e->present[ZONE_NORMAL] = e->spanned[ZONE_NORMAL];
		e->reserved[ZONE_DMA] = image;		/* at the start of RAM */
		sections = p->ram_bytes / (128 * MiB);
	}
	present_total = e->present[0] + e->present[1] + e->present[2];
	memmap = sections * (128 * MiB / PAGE_SIZE) * 64 / PAGE_SIZE;
	nr_kernel = present_total - e->reserved[0] - e->reserved[1] - memmap;
	top = memmap + hash_pages(nr_kernel, 13) + hash_pages(nr_kernel, 14) + 53 * p->nr_cpus;
	e->reserved[ZONE_NORMAL] = top;
}

static int batchsize(unsigned long managed)
{
	long batch = (long)(managed / 1024 < 256 ? managed / 1024 : 256) / 4;
	long p = 1;

	if (batch < 1)
		batch = 1;
	while (p * 2 <= batch + batch / 2)
		p *= 2;
	return (int)(p - 1) < 1 ? 1 : (int)(p - 1);
}

static int highsize(unsigned long total, unsigned int cpus, int batch)
{
	long high = (long)(total / cpus);

	return high > batch * 4 ? (int)high : batch * 4;
}

static void check_profile(const struct pl_machine_profile *p)
{
	unsigned long managed_total = 0, kb, pages_min, nr_zones = 0, buffer = 0;
	struct pl_machine *m;
	struct pl_config cfg;
	struct expect e;

	assert_int_equal(pl_machine_profile(p->name, &cfg), 0);
	assert_string_equal(cfg.profile, p->name);
	assert_int_equal(cfg.nr_cpus, p->nr_cpus);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	expected_layout(p, &e);

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &m->node_zones[z];

		if (zone->spanned_pages != e.spanned[z] || zone->present_pages != e.present[z] ||
		    zone->managed_pages != e.present[z] - e.reserved[z])
			fail_msg("%s zone %s: spanned %lu present %lu managed %lu, expected %lu %lu %lu",
				 p->name, zone->name, zone->spanned_pages, zone->present_pages,
				 zone->managed_pages, e.spanned[z], e.present[z],
				 e.present[z] - e.reserved[z]);
		managed_total += zone->managed_pages;
		nr_zones += populated_zone(zone);
	}
	/* every present page is managed or in the boot reserve */
	{
		unsigned long reserved = 0;

		for (int k = 0; k < NR_PL_BOOT_RESERVE; k++)
			reserved += m->boot_reserved[k];
		assert_int_equal(managed_total + reserved, e.present[0] + e.present[1] + e.present[2]);
	}

	/* calculate_min_free_kbytes(), then THP's bump from the first high marks */
	kb = isqrt(managed_total * 4 * 16);
	kb = kb < 128 ? 128 : kb > 262144 ? 262144 : kb;
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		unsigned long man = m->node_zones[z].managed_pages;
		unsigned long wmin = (kb / 4) * man / managed_total;
		unsigned long tmp = man / 1000 > wmin / 4 ? man / 1000 : wmin / 4;

		buffer += man - (wmin + 2 * tmp);
	}
	{
		unsigned long rec = 11 * 512 * nr_zones;

		if (rec > buffer / 20)
			rec = buffer / 20;
		if (rec * 4 > kb)
			kb = rec * 4;
	}
	if (m->min_free_kbytes != kb)
		fail_msg("%s: min_free_kbytes %lu, expected %lu", p->name, m->min_free_kbytes, kb);
	pages_min = kb / 4;

	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &m->node_zones[z];
		unsigned long man = zone->managed_pages;
		unsigned long wmin = pages_min * man / managed_total;
		unsigned long tmp = man / 1000 > wmin / 4 ? man / 1000 : wmin / 4;
		unsigned long above = 0;
		int batch, high_min, high_max;
		bool fhb;

		assert_int_equal(min_wmark_pages(zone), wmin);
		assert_int_equal(low_wmark_pages(zone), wmin + tmp);
		assert_int_equal(high_wmark_pages(zone), wmin + 2 * tmp);
		for (int j = z + 1; j < MAX_NR_ZONES; j++) {
			above += m->node_zones[j].managed_pages;
			assert_int_equal(zone->lowmem_reserve[j], (long)(above / (z == ZONE_NORMAL ? 32 : 256)));
		}
		if (!populated_zone(zone))
			continue;
		batch = batchsize(man);
		high_min = highsize(wmin + tmp, p->nr_cpus, batch);
		high_max = highsize(man / 8, p->nr_cpus, batch);
		fhb = p->topology.llc_shared_cpus &&
		      (p->topology.llc_bytes / p->topology.llc_shared_cpus) / PAGE_SIZE >
			      3 * (unsigned long)batch;
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			const struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

			if (pcp->batch != batch || pcp->high_min != high_min ||
			    pcp->high_max != high_max || !!(pcp->flags & PCPF_FREE_HIGH_BATCH) != fhb)
				fail_msg("%s %s cpu %u: batch %d high_min %d high_max %d fhb %d, "
					 "expected %d %d %d %d", p->name, zone->name, cpu, pcp->batch,
					 pcp->high_min, pcp->high_max,
					 !!(pcp->flags & PCPF_FREE_HIGH_BATCH), batch, high_min, high_max,
					 fhb);
		}
	}
	if (p->ram_bytes <= 32 * GiB)	/* the 256 GiB one is checked in its own test */
		assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

static void test_every_profile_against_the_formulas(void **state)
{
	int n = 0;

	(void)state;
	for (const struct pl_machine_profile *p = pl_machine_profiles; p->name; p++, n++)
		if (p->ram_bytes <= 32 * GiB)	/* the large ones: their own tests below */
			check_profile(p);
	assert_true(n >= 9);
}

static void test_large_profiles_against_the_formulas(void **state)
{
	(void)state;
	check_profile(pl_machine_profile_find("xeon-5320-2s"));
	check_profile(pl_machine_profile_find("m7g.metal"));
}

/*
 * This build host's /proc/zoneinfo (Firecracker, 6.18, 24 GiB, 2 vCPUs):
 * DMA spanned 4095 present 3998 managed 3840; DMA32 spanned 1044480
 * present 782336; min_free_kbytes 67584 (THP madvise). Its Normal zone
 * is not comparable: the host defers struct page init (deferred_init=lazy).
 */
static void test_firecracker_matches_this_host(void **state)
{
	struct pl_machine *m;
	struct pl_config cfg;

	(void)state;
	assert_int_equal(pl_machine_profile("firecracker-24g", &cfg), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(m->node_zones[ZONE_DMA].zone_start_pfn, 1);
	assert_int_equal(m->node_zones[ZONE_DMA].spanned_pages, 4095);
	assert_int_equal(m->node_zones[ZONE_DMA].present_pages, 3998);
	assert_int_equal(m->node_zones[ZONE_DMA].managed_pages, 3840);
	assert_int_equal(m->node_zones[ZONE_DMA32].spanned_pages, 1044480);
	assert_int_equal(m->node_zones[ZONE_DMA32].present_pages, 782336);
	assert_int_equal(m->node_zones[ZONE_NORMAL].zone_start_pfn, 0x100000);
	assert_int_equal(m->min_free_kbytes, 67584);
	/* the DMA zone's pageblocks as the fixture's pagetypeinfo: 1 Unmovable, 7 Movable */
	{
		static char buf[1 << 16];
		long len = pl_show_pagetypeinfo(m, buf, sizeof(buf));

		assert_true(len > 0);
		assert_non_null(strstr(buf, "Node 0, zone      DMA            1            7"));
	}
	pl_machine_destroy(m);
}

static unsigned long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kib = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtoul(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

/*
 * 256 GiB on a 24 GiB host: the memmap (3 GiB of struct pages) and the page
 * frames are committed lazily, so booting m7g.metal and running on it
 * takes a bounded amount of host memory (booting writes the struct pages
 * below ZONE_NORMAL, of the reserves, and the head of every free 4 MiB
 * block: about 350 MiB).
 */
static void test_256g_machine_runs_in_bounded_rss(void **state)
{
	unsigned long before = rss_kib(), grown;
	struct page *pages[64];
	struct pl_machine *m;
	struct pl_config cfg;
	void *v;

	(void)state;
	assert_int_equal(pl_machine_profile("m7g.metal", &cfg), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 63), 0);
	for (int i = 0; i < 64; i++) {
		pages[i] = alloc_pages(GFP_KERNEL, (unsigned int)(i % 4));
		assert_non_null(pages[i]);
		memset(page_address(pages[i]), 0x5a, PAGE_SIZE);
	}
	v = vmalloc_huge(3 << 20, GFP_KERNEL);
	assert_non_null(v);
	assert_int_equal(vmalloc_memset(v, 1, 3 << 20), 0);
	assert_int_equal(vfree(v), 0);
	for (int i = 0; i < 64; i++)
		__free_pages(pages[i], (unsigned int)(i % 4));
	pl_leave();
	grown = rss_kib() - before;
	if (grown > 768 * 1024)
		fail_msg("a 256 GiB machine took %lu MiB of host memory", grown >> 10);
	assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

/* vmalloc_huge below PMD_SIZE: arm64 order-4 blocks, 64 KiB aligned; x86_64 small pages. */
static void contpte_case(const char *profile, bool arm64)
{
	struct pl_machine *m;
	struct pl_config cfg;
	struct vm_struct *vm;
	void *v;

	assert_int_equal(pl_machine_profile(profile, &cfg), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	v = vmalloc_huge(3 * 65536 + 4096, GFP_KERNEL);
	assert_non_null(v);
	vm = find_vm_area(v);
	assert_non_null(vm);
	if (arm64) {
		assert_int_equal(vm->page_order, 4);
		assert_int_equal((unsigned long)v % 65536, 0);
		assert_int_equal(vm->nr_pages, 4 * 16);	/* rounded up to 64 KiB */
		for (unsigned int i = 0; i < vm->nr_pages; i += 16) {
			unsigned long pfn = page_to_pfn(vm->pages[i]);

			assert_int_equal(pfn % 16, 0);
			for (unsigned int j = 1; j < 16; j++)
				assert_int_equal(page_to_pfn(vm->pages[i + j]), pfn + j);
		}
	} else {
		assert_int_equal(vm->page_order, 0);
		assert_int_equal(vm->nr_pages, 3 * 16 + 1);
	}
	assert_int_equal(vfree(v), 0);
	/* a small one stays small on both */
	v = vmalloc_huge(32768, GFP_KERNEL);
	assert_non_null(v);
	assert_int_equal(find_vm_area(v)->page_order, 0);
	assert_int_equal(vfree(v), 0);
	pl_leave();
	assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

static void test_arm64_vmalloc_huge_uses_contiguous_ptes(void **state)
{
	(void)state;
	contpte_case("tcg-a72-smp8", true);
	contpte_case("kvm-smp8", false);
}

/*
 * The vm sysctls in a config: watermark_scale_factor sets the gaps between
 * the watermarks (managed * factor / 10000 where that beats min / 4), and
 * percpu_pagelist_high_fraction fixes every pcp->high at the zone over the
 * fraction, split over the CPUs (high_min == high_max: no auto-tuning).
 */
static void test_vm_sysctls_shape_watermarks_and_pcps(void **state)
{
	struct pl_config cfg;
	struct pl_machine *m;

	(void)state;
	pl_config_default(&cfg);
	cfg.mem_bytes = 1024 * MiB;
	cfg.dma32_bytes = 256 * MiB;
	cfg.nr_cpus = 2;
	cfg.watermark_scale_factor = 200;
	cfg.percpu_pagelist_high_fraction = 16;
	m = test_machine_config(&cfg, "v6.18");
	for (int z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &m->node_zones[z];
		unsigned long man = zone->managed_pages, wmin = min_wmark_pages(zone);
		unsigned long tmp = man * 200 / 10000 > wmin / 4 ? man * 200 / 10000 : wmin / 4;
		int high;

		if (!populated_zone(zone))
			continue;
		assert_true(man * 200 / 10000 > wmin / 4);	/* the factor decides */
		assert_int_equal(low_wmark_pages(zone), wmin + tmp);
		assert_int_equal(high_wmark_pages(zone), wmin + 2 * tmp);
		high = highsize(man / 16, m->nr_cpus, batchsize(man));
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			assert_int_equal(zone->per_cpu_pageset[cpu].high_min, high);
			assert_int_equal(zone->per_cpu_pageset[cpu].high_max, high);
		}
	}
	assert_int_equal(pl_check_machine(m), 0);
	test_machine_done(m);
}

static void test_bad_profiles_and_layouts_are_refused(void **state)
{
	struct pl_config cfg, before;

	(void)state;
	memset(&cfg, 0x33, sizeof(cfg));
	before = cfg;
	assert_int_equal(pl_machine_profile("no-such-box", &cfg), -EINVAL);
	assert_memory_equal(&cfg, &before, sizeof(cfg));
	assert_null(pl_machine_profile_find(NULL));
	assert_int_equal(pl_machine_profile(NULL, &cfg), -EINVAL);

	/* overlapping holes, a hole past the end, an unaligned one, no RAM at all */
	assert_int_equal(pl_machine_profile("kvm-smp8", &cfg), 0);
	cfg.holes[cfg.nr_holes].start = 2 * GiB;
	cfg.holes[cfg.nr_holes].end = 3 * GiB + 4096;	/* overlaps the PCI hole */
	cfg.nr_holes++;
	assert_null(pl_machine_create(&cfg));
	assert_int_equal(pl_machine_profile("kvm-smp8", &cfg), 0);
	cfg.holes[0].end = 4097;
	assert_null(pl_machine_create(&cfg));
	assert_int_equal(pl_machine_profile("kvm-smp8", &cfg), 0);
	cfg.mem_bytes = 2 * GiB;	/* the profile's PCI hole lies past the end */
	assert_null(pl_machine_create(&cfg));
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.holes[0].start = 0;
	cfg.holes[0].end = 64 * MiB;
	cfg.nr_holes = 1;
	assert_null(pl_machine_create(&cfg));
	/* a reserve that cannot fit: a kernel image larger than the machine */
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.boot_reserve = true;
	cfg.kernel_image_bytes = 128 * MiB;
	assert_null(pl_machine_create(&cfg));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_profile_against_the_formulas),
		cmocka_unit_test(test_large_profiles_against_the_formulas),
		cmocka_unit_test(test_firecracker_matches_this_host),
		cmocka_unit_test(test_256g_machine_runs_in_bounded_rss),
		cmocka_unit_test(test_arm64_vmalloc_huge_uses_contiguous_ptes),
		cmocka_unit_test(test_vm_sysctls_shape_watermarks_and_pcps),
		cmocka_unit_test(test_bad_profiles_and_layouts_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
