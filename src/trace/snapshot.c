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
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	return fopen(path, "r");
}

static int bad(const char *file, unsigned long line)
{
	pl_warn_ratelimited("snapshot: %s line %lu: malformed", file, line);
	return -EINVAL;
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

	while (fgets(line, sizeof(line), f)) {
		unsigned long v[NR_PAGE_ORDERS];
		struct pl_snap_zone *z;
		int node, n;

		ln++;
		if (sscanf(line, "Node %d, zone %15s%n", &node, name, &n) != 2)
			return bad("buddyinfo", ln);
		if (other_node("buddyinfo", ln, node))
			return -EOPNOTSUPP;
		if (sscanf(line + n, "%lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu", &v[0], &v[1],
			   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10]) != 11)
			return bad("buddyinfo", ln);
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

	while (fgets(line, sizeof(line), f)) {
		unsigned long v[NR_PAGE_ORDERS];
		struct pl_snap_zone *z;
		int node, n, mt;

		ln++;
		if (!strncmp(line, "Number of blocks type", 21)) {
			counts = true;
			continue;
		}
		if (strncmp(line, "Node", 4))
			continue;
		if (!counts) {
			if (sscanf(line, "Node %d, zone %15[^,], type %31s%n", &node, name, type, &n) != 3)
				return bad("pagetypeinfo", ln);
			if (other_node("pagetypeinfo", ln, node))
				return -EOPNOTSUPP;
			mt = mt_by_name(type);
			if (mt < 0 || sscanf(line + n, "%lu %lu %lu %lu %lu %lu %lu %lu %lu %lu %lu",
					     &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
					     &v[8], &v[9], &v[10]) != 11)
				return bad("pagetypeinfo", ln);
			/* names are right-aligned: strip the padding */
			z = zone_by_name(s, name + strspn(name, " "), true);
			if (!z)
				return bad("pagetypeinfo", ln);
			memcpy(z->free_mt[mt], v, sizeof(v));
			z->has_pagetypeinfo = true;
		} else {
			if (sscanf(line, "Node %d, zone %15s%n", &node, name, &n) != 2 ||
			    sscanf(line + n, "%lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3],
				   &v[4]) != 5)
				return bad("pagetypeinfo", ln);
			if (other_node("pagetypeinfo", ln, node))
				return -EOPNOTSUPP;
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
	int cpu = -1;

	while (fgets(line, sizeof(line), f)) {
		unsigned long v;
		int node;

		ln++;
		if (sscanf(line, "Node %d, zone %15s", &node, name) == 2) {
			if (other_node("zoneinfo", ln, node))
				return -EOPNOTSUPP;
			z = zone_by_name(s, name, true);
			if (!z)
				return bad("zoneinfo", ln);
			cpu = -1;
			continue;
		}
		if (!z)
			continue;
		if (sscanf(line, " cpu: %d", &cpu) == 1) {
			if (cpu < 0 || cpu >= PL_SNAP_MAX_CPUS)
				return bad("zoneinfo", ln);
			if ((unsigned int)cpu + 1 > z->nr_pcp_cpus)
				z->nr_pcp_cpus = (unsigned int)cpu + 1;
			continue;
		}
		if (sscanf(line, " pages free %lu", &v) == 1)
			continue;
		if (sscanf(line, " %31[a-z_]: %lu", key, &v) == 2) {
			if (cpu >= 0 && !strcmp(key, "count"))
				z->pcp_count[cpu] = (int)v;
			else if (cpu >= 0 && !strcmp(key, "high"))
				z->pcp_high[cpu] = (int)v;
			else if (cpu >= 0 && !strcmp(key, "batch"))
				z->pcp_batch[cpu] = (int)v;
			else if (!strcmp(key, "start_pfn"))
				z->start_pfn = v;
			continue;
		}
		if (sscanf(line, " %31[a-z_] %lu", key, &v) == 2) {
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

static int read_vmstat(FILE *f, struct pl_snapshot *s)
{
	char line[256];
	unsigned long v;

	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "nr_free_pages %lu", &v) == 1) {
			s->nr_free_pages = v;
			s->has_vmstat = true;
		}
	return 0;
}

int pl_snapshot_read(const char *dir, struct pl_snapshot *s)
{
	static const struct {
		const char *file;
		int (*read)(FILE *f, struct pl_snapshot *s);
	} files[] = {
		{ "zoneinfo", read_zoneinfo }, { "buddyinfo", read_buddyinfo },
		{ "pagetypeinfo", read_pagetypeinfo }, { "vmstat", read_vmstat },
	};
	bool any = false;
	FILE *f;

	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
		int ret;

		f = open_in(dir, files[i].file);
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
	f = open_in(dir, "min_free_kbytes");
	if (!f || fscanf(f, "%lu", &s->min_free_kbytes) != 1) {
		unsigned long min = 0;

		for (int i = 0; i < s->nr_zones; i++)
			min += s->zone[i].wmark[WMARK_MIN];
		s->min_free_kbytes = min << (PAGE_SHIFT - 10);
	}
	if (f)
		fclose(f);
	if (!s->has_vmstat) {
		unsigned long by_order[NR_PAGE_ORDERS], sum = 0;

		pl_snapshot_free_by_order(s, by_order);
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			sum += by_order[o];
		s->nr_free_pages = sum;
	}
	return 0;
}

unsigned int pl_snapshot_nr_cpus(const struct pl_snapshot *s)
{
	unsigned int n = 0;

	for (int i = 0; i < s->nr_zones; i++)
		n = max(n, s->zone[i].nr_pcp_cpus);
	return n;
}

void pl_snapshot_free_by_order(const struct pl_snapshot *s, unsigned long out[NR_PAGE_ORDERS])
{
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		out[o] = 0;
		for (int i = 0; i < s->nr_zones; i++)
			out[o] += s->zone[i].nr_free[o] << o;
	}
}
