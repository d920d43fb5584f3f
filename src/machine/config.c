// SPDX-License-Identifier: MIT
/*
 * config.c - the machine's configuration and gfp flags from strings, for
 * front ends that have no C structs: the Python API (cffi over
 * libpagelab.so) and command lines. pl_config_set() takes the same keys as
 * pagelab-bench (mem, dma32, vcpus, design, ...); pl_gfp_parse() the
 * kernel's flag names joined by '|'.
 *
 * Invariants: a refused key or value leaves the config as it was, and the
 * reason is one line in the caller's buffer (no warning is printed: the
 * front end reports it once).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/pagelab.h"

struct pl_config *pl_config_new(void)
{
	struct pl_config *cfg = malloc(sizeof(*cfg));

	if (cfg)
		pl_config_default(cfg);
	return cfg;
}

void pl_config_free(struct pl_config *cfg)
{
	free(cfg);
}

/* A size or count: decimal or 0x hex, with an optional K/M/G (powers of 1024). */
static int parse_ulong(const char *v, unsigned long max, unsigned long *out)
{
	unsigned long long n;
	unsigned int shift = 0;
	char *end;

	if (!v || !*v || *v == '-')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 0);
	switch (*end) {
	case 'K': case 'k': shift = 10; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'G': case 'g': shift = 30; end++; break;
	default: break;
	}
	if (errno || *end || end == v || (shift && n > (max >> shift)) || (n << shift) > max)
		return -EINVAL;
	*out = (unsigned long)(n << shift);
	return 0;
}

enum cfg_field { F_MEM, F_DMA32, F_VCPUS, F_DEBUG, F_LOCK_STAT, F_PCP, F_MIN_FREE, F_TLB };

static const struct {
	const char *key;
	enum cfg_field field;
	unsigned long max;
} keys[] = {
	{ "mem", F_MEM, 1UL << 40 },
	{ "dma32", F_DMA32, 1UL << 40 },
	{ "vcpus", F_VCPUS, 4096 },
	{ "debug", F_DEBUG, 3 },
	{ "lock_stat", F_LOCK_STAT, 1 },
	{ "pcp", F_PCP, 1 },
	{ "min_free_kbytes", F_MIN_FREE, 1UL << 30 },
	{ "tlb_flush_ns", F_TLB, 1000000 },
};

int pl_config_set(struct pl_config *cfg, const char *key, const char *value, char *err,
		  size_t errsize)
{
	unsigned long v;

	if (!cfg || !key || !value) {
		pl_set_err(err, errsize, "no config, key or value");
		return -EINVAL;
	}
	if (!strcmp(key, "machine")) {
		/* a profile replaces the hardware; the design and knobs set so far stay */
		struct pl_config tmp;

		if (!pl_machine_profile_find(value)) {
			pl_set_err(err, errsize, "unknown machine profile '%s' (pagelab list machines)", value);
			return -EINVAL;
		}
		pl_machine_profile(value, &tmp);
		tmp.design = cfg->design;
		tmp.debug = cfg->debug;
		tmp.lock_stat = cfg->lock_stat;
		tmp.pcp_disabled = cfg->pcp_disabled;
		tmp.min_free_kbytes = cfg->min_free_kbytes;
		tmp.tlb_flush_ns_per_cpu = cfg->tlb_flush_ns_per_cpu;
		*cfg = tmp;
		return 0;
	}
	if (!strcmp(key, "design")) {
		struct pl_design d;
		char why[160];

		if (pl_design_parse(value, &d, why, sizeof(why))) {
			pl_set_err(err, errsize, "design '%s': %s", value, why);
			return -EINVAL;
		}
		cfg->design = d;
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		if (strcmp(keys[i].key, key))
			continue;
		if (parse_ulong(value, keys[i].max, &v)) {
			pl_set_err(err, errsize, "%s=%s: not a number from 0 to %lu", key, value,
				keys[i].max);
			return -EINVAL;
		}
		switch (keys[i].field) {
		case F_MEM: cfg->mem_bytes = v; break;
		case F_DMA32: cfg->dma32_bytes = v; break;
		case F_VCPUS: cfg->nr_cpus = (unsigned int)v; break;
		case F_DEBUG: cfg->debug = (int)v; break;
		case F_LOCK_STAT: cfg->lock_stat = v; break;
		case F_PCP: cfg->pcp_disabled = !v; break;
		case F_MIN_FREE: cfg->min_free_kbytes = v; break;
		case F_TLB: cfg->tlb_flush_ns_per_cpu = v; break;
		}
		return 0;
	}
	pl_set_err(err, errsize, "unknown config key '%s' (machine, mem, dma32, vcpus, design, debug, "
		"lock_stat, pcp, min_free_kbytes, tlb_flush_ns)", key);
	return -EINVAL;
}

static const struct {
	const char *name;
	gfp_t gfp;
} gfp_names[] = {
	{ "GFP_KERNEL", GFP_KERNEL }, { "GFP_ATOMIC", GFP_ATOMIC }, { "GFP_NOWAIT", GFP_NOWAIT },
	{ "GFP_USER", GFP_USER }, { "GFP_HIGHUSER_MOVABLE", GFP_HIGHUSER_MOVABLE },
	{ "GFP_DMA32", GFP_DMA32 }, { "GFP_KERNEL_ACCOUNT", GFP_KERNEL_ACCOUNT },
	{ "__GFP_DMA32", __GFP_DMA32 }, { "__GFP_MOVABLE", __GFP_MOVABLE },
	{ "__GFP_RECLAIMABLE", __GFP_RECLAIMABLE }, { "__GFP_HIGH", __GFP_HIGH },
	{ "__GFP_IO", __GFP_IO }, { "__GFP_FS", __GFP_FS }, { "__GFP_ZERO", __GFP_ZERO },
	{ "__GFP_DIRECT_RECLAIM", __GFP_DIRECT_RECLAIM },
	{ "__GFP_KSWAPD_RECLAIM", __GFP_KSWAPD_RECLAIM }, { "__GFP_RECLAIM", __GFP_RECLAIM },
	{ "__GFP_NOWARN", __GFP_NOWARN }, { "__GFP_COMP", __GFP_COMP },
	{ "__GFP_HARDWALL", __GFP_HARDWALL },
};

int pl_gfp_parse(const char *spec, gfp_t *out, char *err, size_t errsize)
{
	gfp_t gfp = 0;

	if (!spec || !*spec || !out) {
		pl_set_err(err, errsize, "empty gfp");
		return -EINVAL;
	}
	while (*spec) {
		const char *bar = strchr(spec, '|');
		size_t len = bar ? (size_t)(bar - spec) : strlen(spec);
		size_t i;

		while (len && spec[0] == ' ') {
			spec++;
			len--;
		}
		while (len && spec[len - 1] == ' ')
			len--;
		for (i = 0; i < ARRAY_SIZE(gfp_names); i++)
			if (strlen(gfp_names[i].name) == len && !strncmp(gfp_names[i].name, spec, len))
				break;
		if (i == ARRAY_SIZE(gfp_names)) {
			pl_set_err(err, errsize, "unknown gfp flag '%.*s'", (int)len, spec);
			return -EINVAL;
		}
		gfp |= gfp_names[i].gfp;
		spec = bar ? bar + 1 : spec + len;
		if (bar && !*spec) {
			pl_set_err(err, errsize, "gfp ends with '|'");
			return -EINVAL;
		}
	}
	*out = gfp;
	return 0;
}

unsigned long pl_page_pfn(const struct page *page)
{
	if (!page && pl_arg_refused(__func__, "NULL page"))
		return -1UL;
	return page_to_pfn(page);
}

unsigned int pl_vm_event_count(void)
{
	return NR_PL_VM_EVENTS;
}

unsigned long pl_machine_max_pfn(const struct pl_machine *m)
{
	return m ? m->max_pfn : 0;
}
