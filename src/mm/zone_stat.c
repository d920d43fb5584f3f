// SPDX-License-Identifier: MIT
/*
 * zone_stat.c - the zone counters' per-CPU differentials, as mm/vmstat.c
 * keeps them (the watermark checks read a lagging NR_FREE_PAGES).
 *
 * Each CPU gathers its changes to a zone counter in its own small signed
 * diff (struct per_cpu_zonestat) and adds the diff to the zone's counter
 * only when its magnitude passes the CPU's stat_threshold; then the diff
 * starts again from 0. The vmstat tick (pl_vmstat_tick(), the kernel's
 * refresh_cpu_vm_stats()) folds what is left once a simulated second. So
 * zone_page_state(), which the watermark checks read, is behind the free
 * lists by up to nr_cpus * stat_threshold pages per counter;
 * zone_page_state_snapshot() adds the diffs (zone_watermark_ok_safe(), the
 * checker).
 *
 * The threshold is calculate_normal_threshold()'s: with mem the zone's
 * managed memory in 128 MiB units, 2 * fls(nr_cpus) * (1 + fls(mem)),
 * at most 125. It is set for every CPU by pl_refresh_zone_stat_thresholds()
 * (refresh_zone_stat_thresholds()), which the kernel runs from
 * init_per_zone_wmark_min() (boot, after the boot memory reached the buddy,
 * and memory hotplug) and on CPU hotplug (pagelab has none); before the
 * first run every threshold is 0 and each change reaches the counter at
 * once, as during the kernel's boot. The same function sets
 * percpu_drift_mark. kswapd's lower "pressure" threshold
 * (set_pgdat_percpu_threshold() while kswapd is awake) is not modelled:
 * pagelab's kswapd run is instantaneous (page_alloc_slowpath.c).
 *
 * A change made by a thread that has not entered a vCPU of the zone's
 * machine (setup, state loading) goes straight to the counter.
 */
#include <stdlib.h>
#include "internal.h"

static int fls_ul(unsigned long x)
{
	return x ? 64 - __builtin_clzl(x) : 0;
}

int pl_calculate_normal_threshold(unsigned long managed_pages, unsigned int nr_cpus)
{
	unsigned long mem = managed_pages >> (27 - PAGE_SHIFT);	/* 128 MiB units */
	int threshold = 2 * fls_ul(nr_cpus) * (1 + fls_ul(mem));

	return threshold < 125 ? threshold : 125;
}

void pl_refresh_zone_stat_thresholds(struct pl_machine *m)
{
	struct zone *zone;

	for_each_populated_zone(zone, m) {
		int threshold = pl_calculate_normal_threshold(zone->managed_pages, m->nr_cpus);
		unsigned long max_drift, tolerate_drift;

		if (!zone->per_cpu_zonestats)
			continue;
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			WRITE_ONCE(zone->per_cpu_zonestats[cpu].stat_threshold, (int8_t)threshold);
		/* only where the drift could hide a breach of the min watermark */
		tolerate_drift = low_wmark_pages(zone) - min_wmark_pages(zone);
		max_drift = (unsigned long)m->nr_cpus * (unsigned long)threshold;
		if (max_drift > tolerate_drift)
			WRITE_ONCE(zone->percpu_drift_mark, high_wmark_pages(zone) + max_drift);
	}
}

/* __mod_zone_page_state() (internal.h) without a vCPU of the zone's machine: straight to the counter. */
void __mod_zone_page_state_slow(struct zone *zone, enum zone_stat_item item, long delta)
{
	zone_page_state_add(delta, zone, item);
}

long zone_page_state_snapshot(const struct zone *z, enum zone_stat_item item)
{
	long x = READ_ONCE(z->vm_stat[item]);

	if (z->per_cpu_zonestats)
		for (unsigned int cpu = 0; cpu < z->machine->nr_cpus; cpu++)
			x += READ_ONCE(z->per_cpu_zonestats[cpu].vm_stat_diff[item]);
	return x < 0 ? 0 : x;
}

/* One CPU's diffs of @zone into the counter; by that CPU. */
static int fold_cpu_zone(struct zone *zone, unsigned int cpu)
{
	struct per_cpu_zonestat *pz = &zone->per_cpu_zonestats[cpu];
	int changes = 0;

	for (int i = 0; i < NR_VM_ZONE_STAT_ITEMS; i++) {
		int v = READ_ONCE(pz->vm_stat_diff[i]);

		if (v) {
			WRITE_ONCE(pz->vm_stat_diff[i], 0);
			zone_page_state_add(v, zone, (enum zone_stat_item)i);
			changes++;
		}
	}
	return changes;
}

int pl_refresh_cpu_vm_stats(struct zone *zone)
{
	if (!pl_this.cpu || pl_this.machine != zone->machine || !zone->per_cpu_zonestats)
		return 0;
	return fold_cpu_zone(zone, pl_this.cpu->id);
}
