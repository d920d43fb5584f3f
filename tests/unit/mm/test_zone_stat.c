// SPDX-License-Identifier: MIT
/*
 * test_zone_stat.c - the zone counters' per-CPU diffs (src/mm/zone_stat.c):
 * calculate_normal_threshold() against a real kernel's zoneinfo and on two
 * machine shapes, the lag of zone_page_state() behind the free lists until
 * a CPU's diff passes its threshold, the vmstat tick's fold, the
 * recomputation when memory comes online, and the checker's exact sum.
 */
#include <stdio.h>
#include "helpers.h"
#include "mm/internal.h"

static char buf[1 << 16];

static struct pl_machine *machine(unsigned long mem, unsigned int cpus)
{
	struct pl_config cfg;

	pl_config_default(&cfg);
	cfg.mem_bytes = mem;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 1;
	cfg.nr_cpus = cpus;
	return test_machine_config(&cfg, "v6.18");
}

static int threshold(const struct zone *zone, unsigned int cpu)
{
	return zone->per_cpu_zonestats[cpu].stat_threshold;
}

static long diff(const struct zone *zone, unsigned int cpu, enum zone_stat_item item)
{
	return zone->per_cpu_zonestats[cpu].vm_stat_diff[item];
}

/* The lists' count of free pages outside isolated blocks (what the checker sums). */
static long list_free(const struct zone *zone)
{
	long n = 0;

	for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			const struct list_head *pos;

			if (is_migrate_isolate(mt))
				continue;
			list_for_each(pos, &zone->free_area[o].free_list[mt])
				n += 1L << o;
		}
	return n;
}

/*
 * The formula against the "vm stats threshold" of a 2-CPU Linux 6.18 VM's
 * /proc/zoneinfo (tests/fixtures/traces/dd-xz.pltrace/before/zoneinfo: DMA
 * 3840 managed pages -> 4, DMA32 772915 -> 24, Normal 2195456 -> 32), and
 * at the cap.
 */
static void test_threshold_formula(void **state)
{
	(void)state;
	assert_int_equal(pl_calculate_normal_threshold(3840, 2), 4);
	assert_int_equal(pl_calculate_normal_threshold(772915, 2), 24);
	assert_int_equal(pl_calculate_normal_threshold(2195456, 2), 32);
	/* 1 CPU, under 128 MiB: 2 * 1 * (1 + 0) */
	assert_int_equal(pl_calculate_normal_threshold(12288, 1), 2);
	/* 8 CPUs, 1 GiB (mem 8, fls 4): 2 * 4 * 5 */
	assert_int_equal(pl_calculate_normal_threshold(1UL << 18, 8), 40);
	/* 64 CPUs, 16 GiB: 2 * 7 * 9 = 126, capped */
	assert_int_equal(pl_calculate_normal_threshold(1UL << 22, 64), 125);
}

/* Shape 1: 64 MiB, 1 CPU; shape 2: 1 GiB, 4 CPUs. Every CPU gets its zone's threshold. */
static void test_machine_thresholds(void **state)
{
	struct pl_machine *m1 = machine(64 * MiB, 1), *m4;
	struct zone *zone;

	(void)state;
	zone = &m1->node_zones[ZONE_NORMAL];
	assert_true(zone->managed_pages < 32768);	/* under 128 MiB */
	assert_int_equal(threshold(zone, 0), 2);
	assert_int_equal(threshold(&m1->node_zones[ZONE_DMA32], 0), 2);
	test_machine_done(m1);

	m4 = machine(1024 * MiB, 4);
	zone = &m4->node_zones[ZONE_NORMAL];
	/* 1008 MiB of Normal: mem = 7 units of 128 MiB, fls 3; fls(4) = 3: 2 * 3 * 4 */
	assert_int_equal(zone->managed_pages >> 15, 7);
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		assert_int_equal(threshold(zone, cpu), 24);
		assert_int_equal(threshold(&m4->node_zones[ZONE_DMA32], cpu),
				 pl_calculate_normal_threshold(m4->node_zones[ZONE_DMA32].managed_pages, 4));
	}
	/* the drift mark only where 4 CPUs' drift could pass low - min */
	if (4 * 24 > low_wmark_pages(zone) - min_wmark_pages(zone))
		assert_int_equal(zone->percpu_drift_mark, high_wmark_pages(zone) + 4 * 24);
	else
		assert_int_equal(zone->percpu_drift_mark, 0);
	/* zoneinfo shows it after each CPU's pageset */
	assert_true(pl_show_zoneinfo(m4, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "              high_max: "));
	assert_non_null(strstr(buf, "\n  vm stats threshold: 24\n"));
	test_machine_done(m4);
}

/*
 * Order-4 blocks come straight from the buddy (no PCP), 16 pages at a time:
 * with a threshold of 24, the first allocation stays in the CPU's diff
 * (the counter unchanged), the second makes |diff| 32 > 24 and both go to
 * the counter. Another CPU's diff adds to the lag; each CPU's tick folds
 * its own. zoneinfo prints the counter, the checker the exact sum.
 */
static void test_lag_fold_and_tick(void **state)
{
	struct pl_machine *m = machine(1024 * MiB, 4);
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	struct page *a, *b, *c;
	long before, blocks;
	char line[64];

	(void)state;
	pl_vmstat_tick();	/* whatever boot left on CPU 0 */
	before = zone_page_state(zone, NR_FREE_PAGES);
	blocks = zone_page_state(zone, NR_FREE_PAGES_BLOCKS);
	assert_int_equal(before, list_free(zone));
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), 0);

	a = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, 4);
	assert_non_null(a);
	assert_true(page_zone(a) == zone);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before);	/* lags */
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), -16);
	assert_int_equal(zone_page_state_snapshot(zone, NR_FREE_PAGES), before - 16);
	assert_int_equal(list_free(zone), before - 16);
	snprintf(line, sizeof(line), "  pages free     %ld\n", before);
	assert_true(pl_show_zoneinfo(m, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, line));	/* the counter, as the kernel prints */
	assert_int_equal(pl_check_machine(m), 0);	/* counter + diffs match the lists */

	b = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, 4);
	assert_non_null(b);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before - 32);	/* folded */
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), 0);
	assert_int_equal(pl_check_machine(m), 0);

	/* vCPU 1 frees one: +16 in its diff, the counter still lags */
	assert_int_equal(pl_enter(m, 1), 0);
	assert_int_equal(__free_pages(b, 4), 0);
	assert_int_equal(diff(zone, 1, NR_FREE_PAGES), 16);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before - 32);
	/* vCPU 0 allocates one more: -16 in its own diff */
	assert_int_equal(pl_enter(m, 0), 0);
	c = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, 4);
	assert_non_null(c);
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), -16);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before - 32);
	assert_int_equal(zone_page_state_snapshot(zone, NR_FREE_PAGES), before - 32);
	assert_int_equal(list_free(zone), before - 32);
	assert_int_equal(pl_check_machine(m), 0);

	/* vCPU 0's tick folds only vCPU 0's diff */
	pl_vmstat_tick();
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), 0);
	assert_int_equal(diff(zone, 1, NR_FREE_PAGES), 16);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before - 48);
	/* and vCPU 1's tick its own: the counter is exact again */
	assert_int_equal(pl_enter(m, 1), 0);
	pl_vmstat_tick();
	assert_int_equal(diff(zone, 1, NR_FREE_PAGES), 0);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before - 32);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), list_free(zone));
	assert_int_equal(pl_check_machine(m), 0);

	assert_int_equal(pl_enter(m, 0), 0);
	assert_int_equal(__free_pages(a, 4), 0);
	assert_int_equal(__free_pages(c, 4), 0);
	pl_vmstat_tick();
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES_BLOCKS), blocks);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/* The diff is kept only while |diff| <= threshold: a threshold of 2 (64 MiB, 1 CPU). */
static void test_small_threshold(void **state)
{
	struct pl_machine *m = machine(64 * MiB, 1);
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	long before;

	(void)state;
	pl_vmstat_tick();
	before = zone_page_state(zone, NR_FREE_PAGES);
	spin_lock(&zone->lock);
	__mod_zone_page_state(zone, NR_FREE_PAGES, 1);
	__mod_zone_page_state(zone, NR_FREE_PAGES, 1);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before);	/* |2| <= 2 */
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), 2);
	__mod_zone_page_state(zone, NR_FREE_PAGES, 1);
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before + 3);	/* |3| > 2 */
	assert_int_equal(diff(zone, 0, NR_FREE_PAGES), 0);
	__mod_zone_page_state(zone, NR_FREE_PAGES, -3);	/* back: the checker must agree */
	assert_int_equal(zone_page_state(zone, NR_FREE_PAGES), before);
	spin_unlock(&zone->lock);
	assert_int_equal(pl_check_machine(m), 0);

	/* the checker counts the diffs: one page too many in a diff is one report */
	zone->per_cpu_zonestats[0].vm_stat_diff[NR_FREE_PAGES] = 1;
	assert_int_equal(pl_check_machine(m), 1);
	zone->per_cpu_zonestats[0].vm_stat_diff[NR_FREE_PAGES] = 0;
	test_machine_done(m);
}

/*
 * Memory onlining recomputes the thresholds (init_per_zone_wmark_min()):
 * a Normal zone cut to under 128 MiB managed has 2 * fls(4) * 1 = 6; with
 * 896 MiB more online, 2 * 3 * (1 + fls(7)) = 24 again.
 */
static void test_threshold_follows_managed(void **state)
{
	struct pl_machine *m = machine(1024 * MiB, 4);
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	unsigned long managed = zone->managed_pages;

	(void)state;
	assert_int_equal(threshold(zone, 3), 24);
	assert_int_equal(pl_zone_set_managed(zone, 16384), 0);
	for (unsigned int cpu = 0; cpu < 4; cpu++)
		assert_int_equal(threshold(zone, cpu), 6);
	assert_int_equal(pl_zone_online_pages(zone, managed - 16384), 0);
	assert_int_equal(zone->managed_pages, managed);
	for (unsigned int cpu = 0; cpu < 4; cpu++)
		assert_int_equal(threshold(zone, cpu), 24);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_threshold_formula),
		cmocka_unit_test(test_machine_thresholds),
		cmocka_unit_test(test_lag_fold_and_tick),
		cmocka_unit_test(test_small_threshold),
		cmocka_unit_test(test_threshold_follows_managed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
