// SPDX-License-Identifier: MIT
/*
 * snapshot.c - read a kernel's /proc/{buddyinfo,pagetypeinfo,zoneinfo,
 * vmstat} (as `pagelab trace record` copies them into before/ and after/)
 * into struct pl_snapshot.
 *
 * Zones are matched by name across the files, in the order zoneinfo or
 * buddyinfo lists them; a zone whose spanned size is 0 is kept (the kernel
 * lists it) and is skipped by the loader. A malformed file is one warning
 * naming the file and line and -EINVAL; the snapshot is then unusable.
 *
 * Next to the /proc reports the recorder copies the vm sysctls that shape
 * the watermarks and PCPs (min_free_kbytes, watermark_scale_factor,
 * watermark_boost_factor, percpu_pagelist_high_fraction), each a file of
 * that name. All are optional: an older recording lacks them, and then the
 * zones' watermarks stand in for the first two.
 *
 * pl_snapshot_gap() checks that a before/after pair brackets its trace:
 * vmstat's pgalloc_* and pgfree count every page allocated and freed, so
 * their growth between the snapshots must match the trace's pages. A
 * snapshot taken long before the trace began (by hand, before `perf record`
 * allocated its ring buffers) is a different starting state.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

static struct pl_snap_zone *zone_by_name(struct pl_snapshot *s, const char *name, bool add)
{
	for (int i = 0; i < s->nr_zones; i++)
		if (!strcmp(s->zone[i].name, name))
			return &s->zone[i];
	if (!add || s->nr_zones == PL_SNAP_MAX_ZONES)
		return NULL;
	snprintf(s->zone[s->nr_zones].name, sizeof(s->zone[0].name), "%s", name);
	return &s->zone[s->nr_zones++];
}

static FILE *open_in(const char *dir, const char *file)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return pl_fopen_input(path);	/* a regular file: no FIFO or device */
}

static int bad(const char *file, unsigned long line)
{
	pl_warn_ratelimited("snapshot: %s line %lu: malformed", file, line);
	return -EINVAL;
}

/* One line naming file, line and field: what a refused snapshot prints. */
static int bad_field(const char *file, unsigned long line, const char *field, const char *why)
{
	pl_warn_ratelimited("snapshot: %s line %lu: %s: %s", file, line, field, why);
	return -EINVAL;
}

static int bad_zone(const char *file, const char *zone, const char *why)
{
	pl_warn_ratelimited("snapshot: %s: zone %s: %s", file, zone, why);
	return -EINVAL;
}

/*
 * A decimal count as the kernel prints one (%lu): digits only, no sign,
 * no wrap past ULONG_MAX; blanks before it skipped, *@p past it.
 */
static bool scan_count(const char **p, unsigned long *v)
{
	const char *s = *p;
	unsigned long x = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return false;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned long d = (unsigned long)(*s - '0');

		if (x > (ULONG_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*p = s;
	*v = x;
	return true;
}

/* Nothing but blanks (and the newline) left at @s. */
static bool at_end(const char *s)
{
	return s[strspn(s, " \t\r\n")] == '\0';
}

/* Exactly @n counts then the end of the line: one more or one less is malformed. */
static bool scan_row(const char *s, unsigned long *v, int n)
{
	for (int i = 0; i < n; i++)
		if (!scan_count(&s, &v[i]))
			return false;
	return at_end(s);
}

/* The kernel's zones, in the order every /proc file lists them. */
static const char *const zone_order[] = { "DMA", "DMA32", "Normal", "HighMem", "Movable", "Device" };

static int zone_rank(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(zone_order); i++)
		if (!strcmp(name, zone_order[i]))
			return (int)i;
	return -1;
}

/*
 * Zones of one file's section must come in the kernel's order, each once:
 * @last is the rank of the previous one (-1 at the start).
 */
static int zone_in_order(const char *file, unsigned long ln, const char *name, int *last)
{
	int r = zone_rank(name);

	if (r < 0)
		return bad_field(file, ln, "zone", "not a kernel zone name");
	if (r <= *last)
		return bad_field(file, ln, "zone", "out of order or listed twice");
	*last = r;
	return 0;
}

/*
 * pagelab's machine is one node. A NUMA machine's zones of node 1 and up
 * carry the same names as node 0's, and read into them they would mix two
 * zones' counts into one: refuse them (-EOPNOTSUPP) instead.
 */
static int other_node(const char *file, unsigned long line, int node)
{
	if (!node)
		return 0;
	pl_warn_ratelimited("snapshot: %s line %lu: node %d: pagelab models one NUMA node", file,
			    line, node);
	return -EOPNOTSUPP;
}

/* "Node 0, zone   Normal  n0 n1 ... n10" */
static int read_buddyinfo(FILE *f, struct pl_snapshot *s)
{
	char line[1024], name[16];
	unsigned long ln = 0;
	int last = -1;

	while (fgets(line, sizeof(line), f)) {
		unsigned long v[NR_PAGE_ORDERS];
		struct pl_snap_zone *z;
		int node, n;

		ln++;
		if (sscanf(line, "Node %d, zone %15s%n", &node, name, &n) != 2)
			return bad("buddyinfo", ln);
		if (other_node("buddyinfo", ln, node))
			return -EOPNOTSUPP;
		if (zone_in_order("buddyinfo", ln, name, &last))
			return -EINVAL;
		if (!scan_row(line + n, v, NR_PAGE_ORDERS))
			return bad_field("buddyinfo", ln, "nr_free",
					 "want 11 counts (orders 0..10), each 0..ULONG_MAX");
		z = zone_by_name(s, name, true);
		if (!z)
			return bad("buddyinfo", ln);
		memcpy(z->nr_free, v, sizeof(v));
	}
	return 0;
}

static int mt_by_name(const char *n)
{
	for (int mt = 0; mt < MIGRATE_TYPES; mt++)
		if (!strcmp(n, migratetype_names[mt]))
			return mt;
	return -1;
}

static int read_pagetypeinfo(FILE *f, struct pl_snapshot *s)
{
	char line[1024], name[16], type[32];
	unsigned long ln = 0;
	bool counts = false;
	int last = -1, last_mt = -1, last_counts = -1;

	while (fgets(line, sizeof(line), f)) {
		unsigned long v[NR_PAGE_ORDERS];
		struct pl_snap_zone *z;
		int node, n, mt;
		const char *zn;

		ln++;
		if (!strncmp(line, "Number of blocks type", 21)) {
			counts = true;
			continue;
		}
		if (!strncmp(line, "Page block order:", 17) || !strncmp(line, "Pages per block:", 16)) {
			bool order = line[5] == 'b';
			const char *p = line + (order ? 17 : 16);
			unsigned long want = order ? pageblock_order : pageblock_nr_pages;

			if (!scan_count(&p, &v[0]) || !at_end(p) || v[0] != want)
				return bad_field("pagetypeinfo", ln, order ? "Page block order"
						 : "Pages per block", "not the kernel's x86-64 pageblock (9, 512)");
			continue;
		}
		if (strncmp(line, "Node", 4))
			continue;
		if (!counts) {
			if (sscanf(line, "Node %d, zone %15[^,], type %31s%n", &node, name, type, &n) != 3)
				return bad("pagetypeinfo", ln);
			if (other_node("pagetypeinfo", ln, node))
				return -EOPNOTSUPP;
			/* names are right-aligned: strip the padding */
			zn = name + strspn(name, " ");
			mt = mt_by_name(type);
			if (mt < 0)
				return bad_field("pagetypeinfo", ln, "type", "not a migratetype");
			if (zone_rank(zn) != last) {	/* a new zone starts */
				if (zone_in_order("pagetypeinfo", ln, zn, &last))
					return -EINVAL;
				last_mt = -1;
			}
			if (mt <= last_mt)
				return bad_field("pagetypeinfo", ln, "type", "out of order or listed twice");
			last_mt = mt;
			if (!scan_row(line + n, v, NR_PAGE_ORDERS))
				return bad_field("pagetypeinfo", ln, "free count",
						 "want 11 counts (orders 0..10), each 0..ULONG_MAX");
			z = zone_by_name(s, zn, true);
			if (!z)
				return bad("pagetypeinfo", ln);
			memcpy(z->free_mt[mt], v, sizeof(v));
			z->has_pagetypeinfo = true;
		} else {
			if (sscanf(line, "Node %d, zone %15s%n", &node, name, &n) != 2)
				return bad("pagetypeinfo", ln);
			if (other_node("pagetypeinfo", ln, node))
				return -EOPNOTSUPP;
			if (zone_in_order("pagetypeinfo", ln, name, &last_counts))
				return -EINVAL;
			if (!scan_row(line + n, v, MIGRATE_TYPES))
				return bad_field("pagetypeinfo", ln, "blocks",
						 "want a count per migratetype (5)");
			z = zone_by_name(s, name, true);
			if (!z)
				return bad("pagetypeinfo", ln);
			memcpy(z->blocks_mt, v, sizeof(unsigned long) * MIGRATE_TYPES);
		}
	}
	return 0;
}

static int read_zoneinfo(FILE *f, struct pl_snapshot *s)
{
	char line[1024], name[16], key[32];
	struct pl_snap_zone *z = NULL;
	unsigned long ln = 0;
	int cpu = -1, last = -1;

	while (fgets(line, sizeof(line), f)) {
		unsigned long v;
		int node, n = 0;

		ln++;
		if (sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			if (other_node("zoneinfo", ln, node))
				return -EOPNOTSUPP;
			if (zone_in_order("zoneinfo", ln, name, &last))
				return -EINVAL;
			z = zone_by_name(s, name, true);
			if (!z)
				return bad("zoneinfo", ln);
			cpu = -1;
			continue;
		}
		if (!z)
			continue;
		if (sscanf(line, " cpu: %n", &n) == 0 && n > 0) {
			const char *p = line + n;

			if (!scan_count(&p, &v) || !at_end(p) || v >= PL_SNAP_MAX_CPUS)
				return bad_field("zoneinfo", ln, "cpu", "not a CPU number 0..1023");
			cpu = (int)v;
			if ((unsigned int)cpu + 1 > z->nr_pcp_cpus)
				z->nr_pcp_cpus = (unsigned int)cpu + 1;
			continue;
		}
		if (sscanf(line, " pages free %lu", &v) == 1)
			continue;
		/* the fields pagelab reads: a strict count each, else the line is refused */
		n = 0;
		if (sscanf(line, " %31[a-z_]:%n", key, &n) == 1 && n > 0) {
			const char *p = line + n;
			bool pcp = cpu >= 0 && (!strcmp(key, "count") || !strcmp(key, "high") ||
						!strcmp(key, "batch"));

			if (!pcp && strcmp(key, "start_pfn"))
				continue;
			if (!scan_count(&p, &v) || !at_end(p) ||
			    v > (pcp ? (unsigned long)INT_MAX : PL_TRACE_PFN_LIMIT))
				return bad_field("zoneinfo", ln, key, pcp ? "not a count 0..INT_MAX"
									   : "not a pfn below 2^40");
			if (cpu >= 0 && !strcmp(key, "count"))
				z->pcp_count[cpu] = (int)v;
			else if (cpu >= 0 && !strcmp(key, "high"))
				z->pcp_high[cpu] = (int)v;
			else if (cpu >= 0 && !strcmp(key, "batch"))
				z->pcp_batch[cpu] = (int)v;
			else
				z->start_pfn = v;
			continue;
		}
		n = 0;
		if (sscanf(line, " %31[a-z_]%n", key, &n) == 1 && n > 0 &&
		    (!strcmp(key, "min") || !strcmp(key, "low") || (!strcmp(key, "high") && cpu < 0) ||
		     !strcmp(key, "promo") || !strcmp(key, "spanned") || !strcmp(key, "present") ||
		     !strcmp(key, "managed"))) {
			const char *p = line + n;

			if (!scan_count(&p, &v) || !at_end(p) || v > PL_TRACE_PFN_LIMIT)
				return bad_field("zoneinfo", ln, key, "not a page count below 2^40");
			if (!strcmp(key, "min"))
				z->wmark[WMARK_MIN] = v;
			else if (!strcmp(key, "low"))
				z->wmark[WMARK_LOW] = v;
			else if (!strcmp(key, "high") && cpu < 0)
				z->wmark[WMARK_HIGH] = v;
			else if (!strcmp(key, "promo"))
				z->wmark[WMARK_PROMO] = v;
			else if (!strcmp(key, "spanned"))
				z->spanned = v;
			else if (!strcmp(key, "present"))
				z->present = v;
			else if (!strcmp(key, "managed"))
				z->managed = v;
		}
	}
	return 0;
}

const char *const pl_vmstat_pressure_names[NR_PL_VMSTAT_PRESSURE] = {
#define PL_VP_NAME(name) #name,
	PL_VMSTAT_PRESSURE(PL_VP_NAME)
#undef PL_VP_NAME
};

int pl_snapshot_pressure_delta(const struct pl_snapshot *before, const struct pl_snapshot *after,
			       unsigned long out[NR_PL_VMSTAT_PRESSURE])
{
	if (!before || !after || !before->has_pressure || !after->has_pressure)
		return -ENODATA;
	for (int i = 0; i < NR_PL_VMSTAT_PRESSURE; i++)
		if (after->pressure[i] < before->pressure[i])
			return -ENODATA;
	for (int i = 0; i < NR_PL_VMSTAT_PRESSURE; i++)
		out[i] = after->pressure[i] - before->pressure[i];
	return 0;
}

/*
 * The vmstat counters a snapshot keeps: the page totals and the pressure
 * counters. Only these are checked as counts; a kernel's other lines pass.
 */
static bool vmstat_kept(const char *name)
{
	if (!strcmp(name, "nr_free_pages") || !strncmp(name, "pgalloc_", 8) ||
	    !strcmp(name, "pgfree") || !strncmp(name, "allocstall_", 11))
		return true;
	for (int i = 0; i < NR_PL_VMSTAT_PRESSURE; i++)
		if (i != PL_VP_allocstall && !strcmp(name, pl_vmstat_pressure_names[i]))
			return true;
	return false;
}

static int read_vmstat(FILE *f, struct pl_snapshot *s)
{
	char line[256];
	unsigned long v;

	bool has_pgfree = false, has_pgalloc = false;
	char name[64];

	unsigned long ln = 0;
	int n;

	while (fgets(line, sizeof(line), f)) {
		const char *p;

		ln++;
		if (sscanf(line, "%63s%n", name, &n) != 1)
			continue;
		if (!vmstat_kept(name))
			continue;
		p = line + n;
		/* pgalloc_* and allocstall_* summed below: each small enough that the sum cannot wrap */
		if (!scan_count(&p, &v) || !at_end(p) || v > ULONG_MAX / 8)
			return bad_field("vmstat", ln, name, "not a count");
		if (!strcmp(name, "nr_free_pages")) {
			s->nr_free_pages = v;
			s->has_vmstat = true;
		} else if (!strncmp(name, "pgalloc_", 8)) {	/* one per zone type */
			s->pgalloc += v;
			has_pgalloc = true;
		} else if (!strcmp(name, "pgfree")) {
			s->pgfree = v;
			has_pgfree = true;
		} else if (!strncmp(name, "allocstall_", 11)) {
			s->pressure[PL_VP_allocstall] += v;
		} else {
			for (int i = 0; i < NR_PL_VMSTAT_PRESSURE; i++)
				if (i != PL_VP_allocstall && !strcmp(name, pl_vmstat_pressure_names[i])) {
					s->pressure[i] = v;
					s->has_pressure |= i == PL_VP_compact_stall;
				}
		}
	}
	s->has_pgalloc = has_pgalloc && has_pgfree;
	return 0;
}

/*
 * The zones __setup_per_zone_wmarks() shares min_free_kbytes over: not
 * ZONE_MOVABLE or highmem (their min is a small fixed share of their own),
 * and ZONE_DEVICE has no memory of its own.
 */
static bool shares_min_free(const struct pl_snap_zone *z)
{
	return strcmp(z->name, "Movable") && strcmp(z->name, "HighMem") &&
	       strcmp(z->name, "Device");
}

/*
 * min_free_kbytes from the zones' min watermarks: each zone's min is
 * pages_min * managed / lowmem_pages rounded down, so their sum falls short
 * of pages_min by less than one page per zone. The pages_min in that range
 * that gives every zone's min exactly is the kernel's; if none does (a
 * boosted zone: zoneinfo prints min with the boost), the sum.
 */
static unsigned long min_free_kbytes_of_wmarks(const struct pl_snapshot *s)
{
	unsigned long lowmem = 0, sum = 0, nr = 0;

	for (int i = 0; i < s->nr_zones; i++) {
		if (!shares_min_free(&s->zone[i]))
			continue;
		lowmem += s->zone[i].managed;
		sum += s->zone[i].wmark[WMARK_MIN];
		nr++;
	}
	for (unsigned long p = sum; lowmem && p <= sum + nr; p++) {
		bool exact = true;

		for (int i = 0; i < s->nr_zones && exact; i++)
			exact = !shares_min_free(&s->zone[i]) ||
				p * s->zone[i].managed / lowmem == s->zone[i].wmark[WMARK_MIN];
		if (exact)
			return p << (PAGE_SHIFT - 10);
	}
	return sum << (PAGE_SHIFT - 10);
}

/*
 * watermark_scale_factor from the zones: low - min is max(min / 4,
 * managed * factor / 10000). A zone whose gap is more than min / 4 shows the
 * factor; 0 if no zone does.
 */
static unsigned long wmark_scale_factor_of_wmarks(const struct pl_snapshot *s)
{
	for (int i = 0; i < s->nr_zones; i++) {
		const struct pl_snap_zone *z = &s->zone[i];
		unsigned long gap = z->wmark[WMARK_LOW] - z->wmark[WMARK_MIN];

		if (!shares_min_free(z) || !z->managed || z->wmark[WMARK_LOW] < z->wmark[WMARK_MIN] ||
		    gap <= z->wmark[WMARK_MIN] / 4)
			continue;
		unsigned long guess = gap * 10000 / z->managed;

		for (unsigned long f = guess; f <= guess + 1; f++)
			if (f >= 1 && f <= PL_MAX_WMARK_SCALE_FACTOR && z->managed * f / 10000 == gap)
				return f;
	}
	return 0;
}

static int bad_value(const char *file, unsigned long v, const char *why)
{
	pl_warn_ratelimited("snapshot: %s %lu: %s", file, v, why);
	return -EINVAL;
}

/* One sysctl file of the snapshot: 1 read, 0 absent, -EINVAL malformed (warned). */
static int read_sysctl(const char *dir, const char *file, unsigned long *v)
{
	FILE *f = open_in(dir, file);
	int ret;

	if (!f)
		return 0;
	ret = fscanf(f, "%lu", v) == 1 ? 1 : bad(file, 1);
	fclose(f);
	return ret;
}

/*
 * The sysctls' own limits (the kernel refuses anything else), and a
 * min_free_kbytes the zones can hold (where zoneinfo gives their size): refused here, in one warning, rather
 * than by the machine built from them after a pass over the trace.
 */
static int check_sysctls(const struct pl_snapshot *s)
{
	struct pl_config cfg = {
		.watermark_scale_factor = s->watermark_scale_factor,
		.watermark_boost_factor = s->watermark_boost_factor,
		.percpu_pagelist_high_fraction = s->percpu_pagelist_high_fraction,
	};
	unsigned long managed = 0;

	for (int i = 0; i < s->nr_zones; i++)
		managed += s->zone[i].managed;
	if (managed && s->min_free_kbytes > managed << (PAGE_SHIFT - 10))
		return bad_value("min_free_kbytes", s->min_free_kbytes, "above the zones' managed memory");
	return pl_check_vm_sysctls("snapshot", &cfg);
}

static int read_sysctls(const char *dir, struct pl_snapshot *s)
{
	unsigned long v;
	int ret;

	ret = read_sysctl(dir, "min_free_kbytes", &s->min_free_kbytes);
	if (ret < 0)
		return ret;
	if (!ret)
		s->min_free_kbytes = min_free_kbytes_of_wmarks(s);
	ret = read_sysctl(dir, "watermark_scale_factor", &s->watermark_scale_factor);
	if (ret < 0)
		return ret;
	if (ret && !s->watermark_scale_factor)
		return bad_value("watermark_scale_factor", 0, "want 1..3000");
	if (!ret)
		s->watermark_scale_factor = wmark_scale_factor_of_wmarks(s);
	ret = read_sysctl(dir, "watermark_boost_factor", &v);
	if (ret < 0)
		return ret;
	if (ret)
		s->watermark_boost_factor = v ? v : PL_WMARK_BOOST_OFF;
	ret = read_sysctl(dir, "percpu_pagelist_high_fraction", &s->percpu_pagelist_high_fraction);
	if (ret < 0)
		return ret;
	return check_sysctls(s);
}

/*
 * The numbers against each other, as a kernel's always are: managed <=
 * present <= spanned, a zone inside the pfns a kernel can have, watermarks
 * min <= low <= high, the free pages of buddyinfo and of pagetypeinfo
 * within the zone's managed pages (and no count so large that the pages
 * wrap), pageblocks within the span, PCP counts within the zone.
 * Return: 0 or -EINVAL with one warning naming the file, zone and field.
 */
static int check_numbers(const struct pl_snapshot *s)
{
	for (int i = 0; i < s->nr_zones; i++) {
		const struct pl_snap_zone *z = &s->zone[i];
		unsigned long free = 0, free_mt = 0, blocks = 0, pcp = 0;
		bool sized = z->spanned || z->present || z->managed;

		if (sized && (z->managed > z->present || z->present > z->spanned))
			return bad_zone("zoneinfo", z->name, "want managed <= present <= spanned");
		if (z->start_pfn + z->spanned > PL_TRACE_PFN_LIMIT)
			return bad_zone("zoneinfo", z->name, "start_pfn + spanned past 2^40 pfns");
		if (z->wmark[WMARK_MIN] > z->wmark[WMARK_LOW] ||
		    z->wmark[WMARK_LOW] > z->wmark[WMARK_HIGH])
			return bad_zone("zoneinfo", z->name, "watermarks: want min <= low <= high");
		for (int o = 0; o < NR_PAGE_ORDERS; o++) {
			unsigned long mt_sum = 0;

			/* at most 2^40 pages: counts past that would wrap the sums */
			if (z->nr_free[o] > PL_TRACE_PFN_LIMIT >> o)
				return bad_zone("buddyinfo", z->name, "a free count past 2^40 pages");
			free += z->nr_free[o] << o;
			for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
				if (z->free_mt[mt][o] > PL_TRACE_PFN_LIMIT >> o)
					return bad_zone("pagetypeinfo", z->name,
							"a free count past 2^40 pages");
				mt_sum += z->free_mt[mt][o];
			}
			free_mt += mt_sum << o;
		}
		for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
			if (z->blocks_mt[mt] > PL_TRACE_PFN_LIMIT >> pageblock_order)
				return bad_zone("pagetypeinfo", z->name, "a block count past 2^40 pages");
			blocks += z->blocks_mt[mt];
		}
		for (unsigned int c = 0; c < z->nr_pcp_cpus; c++)
			pcp += (unsigned long)z->pcp_count[c];
		if (!sized)
			continue;	/* no zoneinfo: nothing to hold the counts against */
		if (free > z->managed)
			return bad_zone("buddyinfo", z->name, "more free pages than the zone manages");
		if (free_mt > z->managed)
			return bad_zone("pagetypeinfo", z->name, "more free pages than the zone manages");
		if (blocks > (z->spanned + pageblock_nr_pages - 1) / pageblock_nr_pages + 1)
			return bad_zone("pagetypeinfo", z->name, "more pageblocks than the zone spans");
		if (pcp > z->managed)
			return bad_zone("zoneinfo", z->name, "more PCP pages than the zone manages");
	}
	return 0;
}

static int read_into(const char *dir, struct pl_snapshot *s)
{
	static const struct {
		const char *file;
		int (*read)(FILE *f, struct pl_snapshot *s);
	} files[] = {
		{ "zoneinfo", read_zoneinfo }, { "buddyinfo", read_buddyinfo },
		{ "pagetypeinfo", read_pagetypeinfo }, { "vmstat", read_vmstat },
	};
	bool any = false;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		FILE *f = open_in(dir, files[i].file);
		int ret;

		if (!f)
			continue;
		ret = files[i].read(f, s);
		fclose(f);
		if (ret)
			return ret;
		any = true;
	}
	if (!any || !s->nr_zones) {
		pl_warn_ratelimited("snapshot: no buddyinfo or zoneinfo in %s", dir);
		return -ENOENT;
	}
	if (check_numbers(s))
		return -EINVAL;
	if (read_sysctls(dir, s))
		return -EINVAL;
	if (!s->has_vmstat) {
		unsigned long by_order[NR_PAGE_ORDERS], sum = 0;

		pl_snapshot_free_by_order(s, by_order);
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			sum += by_order[o];
		s->nr_free_pages = sum;
	}
	return 0;
}

int pl_snapshot_read(const char *dir, struct pl_snapshot *snap)
{
	struct pl_snapshot *s;
	int ret;

	if (!dir || !snap) {
		pl_warn_ratelimited("pl_snapshot_read: NULL %s", dir ? "snapshot" : "directory");
		return -EINVAL;
	}
	s = malloc(sizeof(*s));	/* read aside: a refused snapshot leaves *@snap as it was */
	if (!s)
		return -ENOMEM;
	ret = read_into(dir, s);
	if (!ret)
		*snap = *s;
	free(s);
	return ret;
}

unsigned int pl_snapshot_nr_cpus(const struct pl_snapshot *s)
{
	unsigned int n = 0;

	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	if (s->nr_zones < 0 || s->nr_zones > PL_SNAP_MAX_ZONES)
		return 0;	/* no snapshot pl_snapshot_read() makes */

	for (int i = 0; i < s->nr_zones; i++)
		n = max(n, s->zone[i].nr_pcp_cpus);
	return n;
}

int pl_snapshot_gap(const struct pl_snapshot *before, const struct pl_snapshot *after,
		    const struct pl_trace_score *score, struct pl_snapshot_gap *out)
{
	struct pl_snapshot_gap g = { 0 };
	double a, f;

	if (!before || !after || !score || !out) {
		pl_warn_ratelimited("pl_snapshot_gap: NULL argument");
		return -EINVAL;
	}
	if (!before->has_pgalloc || !after->has_pgalloc)
		return -ENODATA;
	/* signed: counters of another boot may have gone down */
	g.pgalloc = (long)(after->pgalloc - before->pgalloc);
	g.pgfree = (long)(after->pgfree - before->pgfree);
	g.traced_alloc = (long)(score->alloc_pages + score->vmalloc_area_pages);
	g.traced_free = (long)score->free_pages;
	g.alloc_gap = g.pgalloc - g.traced_alloc;
	g.free_gap = g.pgfree - g.traced_free;
	a = (double)labs(g.alloc_gap) / (double)max(labs(g.pgalloc), 1L);
	f = (double)labs(g.free_gap) / (double)max(labs(g.pgfree), 1L);
	g.share = max(a, f);
	g.stale = (a > PL_SNAPSHOT_GAP_SHARE && labs(g.alloc_gap) > PL_SNAPSHOT_GAP_PAGES) ||
		  (f > PL_SNAPSHOT_GAP_SHARE && labs(g.free_gap) > PL_SNAPSHOT_GAP_PAGES);
	*out = g;
	return 0;
}

void pl_snapshot_free_by_order(const struct pl_snapshot *s, unsigned long out[NR_PAGE_ORDERS])
{
	if ((!s || !out) && pl_arg_refused(__func__, "NULL argument"))
		return;
	if (s->nr_zones < 0 || s->nr_zones > PL_SNAP_MAX_ZONES) {
		memset(out, 0, NR_PAGE_ORDERS * sizeof(*out));
		return;
	}
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		out[o] = 0;
		for (int i = 0; i < s->nr_zones; i++)
			out[o] += s->zone[i].nr_free[o] << o;
	}
}
