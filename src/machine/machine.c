// SPDX-License-Identifier: MIT
/*
 * machine.c - the composition root: a machine is put together here from
 * the layers below, which know nothing of each other's insides and nothing
 * of this file. Creation runs, in the kernel's boot order:
 *
 *   pl_mm_init()              memmap, zones, watermarks, pagesets (mm/)
 *   pl_mm_free_all_bootmem()  every page into the buddy (memblock_free_all)
 *   vmap_space_create()       the vmalloc space (vmalloc_init, vmalloc/)
 *
 * and then registers each layer's checker (run by pl_check_machine()) and
 * fault sites (set by pl_fault_set(), fault_sites.c). Destruction undoes it
 * in reverse. Also the design presets and the default configuration.
 *
 * Invariants: the registries are filled before pl_machine_create() returns
 * and not changed afterwards, so they are read without a lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/pagelab.h"
#include "pagelab/maple_tree.h"
#include "mm/internal.h"
#include "vmalloc/vmap_area.h"

const char *const pl_design_presets[] = { "v6.18", "mt-counts", "pcp-owner", "contig-batch",
					  "v6.19-rc1", "v6.19-rc1+contig", "all", "maple", "maple-index",
					  "mt-counts+blocks", "maple+wide-align", "pcp-owner+bulk",
					  "pcp-premerge", "targeted-drain", "block-economy",
					  "pcp-owner+targeted-drain", NULL };

int pl_design_preset(const char *name, struct pl_design *out)
{
	memset(out, 0, sizeof(*out));
	if (!strcmp(name, "v6.18")) {
		out->name = "v6.18";
	} else if (!strcmp(name, "mt-counts")) {
		out->name = "mt-counts";
		out->mt_counts = true;
	} else if (!strcmp(name, "mt-counts+blocks")) {
		/* seed 002 plus pagelab's own O(1) "Number of blocks type" */
		out->name = "mt-counts+blocks";
		out->mt_counts = true;
		out->mt_counts_blocks = true;
	} else if (!strcmp(name, "pcp-owner")) {
		out->name = "pcp-owner";
		out->pcp_owner = true;
	} else if (!strcmp(name, "pcp-owner+bulk")) {
		/* seed 003, degrading to rmqueue_bulk() as before: pagelab's own option */
		out->name = "pcp-owner+bulk";
		out->pcp_owner = true;
		out->pcp_owner_bulk_fallback = true;
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
	} else if (!strcmp(name, "maple+wide-align")) {
		/* seed 004 plus pagelab's own: bump chunks serve up to 64 KiB alignment */
		out->name = "maple+wide-align";
		out->vmap_index = VMAP_INDEX_MAPLE;
		out->vmap_pcpu_bump = true;
		out->vmap_bump_wide_align = true;
	} else if (!strcmp(name, "maple-index")) {
		/* the maple index alone, to measure it against the rbtree */
		out->name = "maple-index";
		out->vmap_index = VMAP_INDEX_MAPLE;
	} else if (!strcmp(name, "pcp-premerge")) {
		/* pagelab's own (seed 003's review), not a patch */
		out->name = "pcp-premerge";
		out->pcp_premerge = true;
	} else if (!strcmp(name, "block-economy")) {
		/* pagelab's own (seed 003's review), not a patch */
		out->name = "block-economy";
		out->pcp_owner = true;
		out->pcp_block_economy = true;
	} else if (!strcmp(name, "targeted-drain")) {
		/* pagelab's own (seed 003's review), not a patch */
		out->name = "targeted-drain";
		out->targeted_drain = true;
	} else if (!strcmp(name, "pcp-owner+targeted-drain")) {
		/* seed 003 with pagelab's own targeted_drain in its slow path */
		out->name = "pcp-owner+targeted-drain";
		out->pcp_owner = true;
		out->targeted_drain = true;
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
	pl_design_preset("v6.18", &cfg->design);
}


int pl_machine_register_checker(struct pl_machine *m, const char *name,
				int (*check)(struct pl_machine *m))
{
	if (!m || !name || !check || m->nr_checkers >= PL_MACHINE_MAX_CHECKERS) {
		pl_warn_ratelimited("machine: cannot register checker %s", name ? name : "(null)");
		return -EINVAL;
	}
	m->checkers[m->nr_checkers].name = name;
	m->checkers[m->nr_checkers].check = check;
	m->nr_checkers++;
	return 0;
}

int pl_machine_register_fault_site(struct pl_machine *m, enum pl_fault_site site,
				   struct pl_fault_state *fs)
{
	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES || !fs || m->fault_sites[site]) {
		pl_warn_ratelimited("machine: cannot register fault site %d", (int)site);
		return -EINVAL;
	}
	m->fault_sites[site] = fs;
	return 0;
}

/* Every layer's checker and fault sites, in layer order. */
static int register_layers(struct pl_machine *m)
{
	int err = 0;

	err |= pl_machine_register_checker(m, "zones", pl_check_zones);
	err |= pl_machine_register_checker(m, "vmalloc", pl_check_vmalloc);
	err |= pl_machine_register_fault_site(m, PL_FAULT_PAGE_ALLOC, &m->fail_page_alloc);
	err |= pl_machine_register_fault_site(m, PL_FAULT_SLAB, vmap_space_failslab(m->vmap));
	err |= pl_machine_register_fault_site(m, PL_FAULT_MAPLE_NODE, mt_fault_state());
	return err ? -EINVAL : 0;
}

struct pl_machine *pl_machine_create(const struct pl_config *cfg)
{
	struct pl_machine *m;

	if (!cfg || pl_mm_check_config(cfg) || !cfg->nr_cpus || cfg->debug < 0 || cfg->debug > 3) {
		pl_warn_ratelimited("machine: bad config (memory %lu bytes, DMA32 end %lu, %u cpus): "
				    "sizes must be non-zero multiples of 2 MiB, holes page-aligned, "
				    "disjoint and inside memory",
				    cfg ? cfg->mem_bytes : 0, cfg ? cfg->dma32_bytes : 0,
				    cfg ? cfg->nr_cpus : 0);
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->config = *cfg;
	m->debug = cfg->debug;
	m->nr_cpus = cfg->nr_cpus;
	m->cpus = aligned_alloc(64, sizeof(struct pl_cpu) * m->nr_cpus);
	if (!m->cpus || pl_mm_init(m)) {
		free(m->cpus);
		free(m);
		return NULL;
	}
	memset(m->cpus, 0, sizeof(struct pl_cpu) * m->nr_cpus);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		m->cpus[c].id = c;

	/* Boot runs on CPU 0 of this machine, then restores the caller's context. */
	struct pl_this saved = pl_this;

	pl_enter(m, 0);
	pl_mm_free_all_bootmem(m);
	m->vmap = vmap_space_create(m);	/* vmalloc_init() */
	pl_this = saved;
	if (!m->vmap || register_layers(m)) {
		pl_machine_destroy(m);
		return NULL;
	}
	return m;
}

void pl_machine_destroy(struct pl_machine *m)
{
	if (!m)
		return;
	if (m->debug >= 1)
		pl_debug_check(m, 1, "machine teardown");
	if (pl_this.machine == m)
		pl_leave();
	vmap_space_destroy(m->vmap);
	pl_mm_exit(m);
	free(m->cpus);
	free(m);
}

/*
 * Each registered checker in turn: the zones, then the vmalloc space. The
 * debug hooks inside the allocator (pl_debug_check()) check the zones only:
 * they run in the middle of vmalloc calls, when an area may be between its
 * indexes.
 */
int pl_check_machine(struct pl_machine *m)
{
	int errors = 0;

	for (unsigned int i = 0; i < m->nr_checkers; i++)
		errors += m->checkers[i].check(m);
	return errors;
}
