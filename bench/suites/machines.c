// SPDX-License-Identifier: MIT
/*
 * machines.c - `pagelab-bench machines [machine=NAME]`: the machine
 * profiles (src/machine/profile.c) as booted machines. Each profile is
 * created and its zones printed as /proc/zoneinfo would give them (spanned,
 * present, managed, watermarks, the PCP batch, high_min and high_max, and
 * whether PCPF_FREE_HIGH_BATCH is set), with min_free_kbytes. With one
 * machine= it also prints what the boot reserved, by kind, and the host
 * memory the booted machine takes (VmRSS), which shows that the memmap of a
 * large machine is committed lazily. With --json: one record per zone.
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static const struct bench_key keys[] = {
	BENCH_KEY("debug"),
	BENCH_KEY_END
};

static unsigned long host_rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long kib = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtoul(line + 6, NULL, 10);
	fclose(f);
	return kib;
}

static void fmt_bytes(char *buf, size_t size, unsigned long bytes)
{
	if (bytes >= (1UL << 30) && !(bytes & ((1UL << 30) - 1)))
		snprintf(buf, size, "%luG", bytes >> 30);
	else
		snprintf(buf, size, "%luM", bytes >> 20);
}

static int show_profile(struct bench *b, const struct pl_machine_profile *p, bool detail)
{
	unsigned long rss_before = host_rss_kib();
	struct pl_config cfg;
	struct pl_machine *m;
	struct zone *zone;
	char mem[32];

	pl_machine_profile(p->name, &cfg);
	cfg.debug = (int)param_ulong(b, "debug", 0);
	m = pl_machine_create(&cfg);
	if (!m) {
		fprintf(stderr, "pagelab-bench: machines: cannot create '%s'\n", p->name);
		return 1;
	}
	bench_snap_machine(m, "v6.18");
	fmt_bytes(mem, sizeof(mem), p->ram_bytes);
	for_each_zone(zone, m) {
		const struct per_cpu_pages *pcp = &zone->per_cpu_pageset[0];
		char test[96];

		fprintf(b->out, "%-16s %-6s %4u %5s %8lu  %-6s %9lu %9lu %9lu %7lu %7lu %5d %8d %8d %3s\n",
			p->name, p->arch == PL_ARCH_ARM64 ? "arm64" : "x86_64", p->nr_cpus, mem,
			m->min_free_kbytes, zone->name, zone->spanned_pages, zone->present_pages,
			zone->managed_pages, min_wmark_pages(zone), low_wmark_pages(zone),
			populated_zone(zone) ? pcp->batch : 0, populated_zone(zone) ? pcp->high_min : 0,
			populated_zone(zone) ? pcp->high_max : 0,
			!populated_zone(zone) ? "-" : (pcp->flags & PCPF_FREE_HIGH_BATCH) ? "yes" : "no");
		snprintf(test, sizeof(test), "%s/%s", p->name, zone->name);
		bench_emit(b, test, "v6.18", 0, (double)zone->managed_pages, "managed-pages", NULL);
	}
	if (detail) {
		unsigned long total = 0;

		fprintf(b->out, "\n%s: %s\n  %s\n  boot reserve:", p->name, p->summary, p->hardware);
		for (int k = 0; k < NR_PL_BOOT_RESERVE; k++) {
			fprintf(b->out, "%s %s %lu KiB", k ? "," : "", pl_boot_reserve_names[k],
				m->boot_reserved[k] << (PAGE_SHIFT - 10));
			total += m->boot_reserved[k];
		}
		fprintf(b->out, " (%lu KiB)\n  host memory taken by the booted machine (VmRSS): "
			"%lu MiB\n", total << (PAGE_SHIFT - 10),
			(host_rss_kib() - (rss_before < host_rss_kib() ? rss_before : 0)) >> 10);
	}
	bench_machine_destroy(m);
	return 0;
}

static int run(struct bench *b)
{
	const char *only = param_str(b, "machine", NULL);
	int ret = 0;

	fprintf(b->out, "%-16s %-6s %4s %5s %8s  %-6s %9s %9s %9s %7s %7s %5s %8s %8s %3s\n",
		"profile", "arch", "cpus", "RAM", "min_free", "zone", "spanned", "present", "managed",
		"min", "low", "batch", "high_min", "high_max", "fhb");
	for (const struct pl_machine_profile *p = pl_machine_profiles; p->name; p++)
		if (!only || !strcmp(only, p->name))
			ret |= show_profile(b, p, only != NULL);
	if (!only)
		fprintf(b->out, "(min_free: min_free_kbytes; batch, high_min, high_max: CPU 0's "
			"pcp; fhb: PCPF_FREE_HIGH_BATCH)\n");
	return ret;
}

const struct bench_suite suite_machines = {
	.name = "machines",
	.summary = "the machine profiles booted: zones, watermarks, PCP batch/high (machine=NAME: "
		   "one, with its boot reserve and host RSS)",
	.keys = keys,
	.no_machine = true,
	.run = run,
};
