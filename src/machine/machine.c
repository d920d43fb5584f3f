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
 * in reverse. Also the default configuration (the design presets and
 * switches are in design.c).
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
#include "mm/validate.h"
#include "vmalloc/vmap_area.h"

void pl_config_default(struct pl_config *cfg)
{
	if (!cfg && pl_arg_refused(__func__, "NULL argument"))
		return;
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

/*
 * Virtual time starts after boot, clocks at 0 when the workload
 * begins; the machine's topology (a profile's, else the 2 x 26 anchor
 * machine's) prices cache line transfers, at the config's cost set.
 */
static int create_vtime(struct pl_machine *m)
{
	const struct pl_cpu_topology *ct = &m->config.topology;
	struct pl_topology t;
	struct pl_vt_params p;

	pl_topology_default(&t);
	if (ct->nr_sockets && ct->cores_per_socket && ct->threads_per_core)
		t = (struct pl_topology){ ct->nr_sockets, ct->cores_per_socket,
					  ct->threads_per_core };
	pl_vt_params_costs(&p, m->config.vt_costs);
	/* One kernel TLB flush: the configured cost for each vCPU it reaches. */
	p.event_ps[PL_EV_TLB_FLUSH] = m->config.tlb_flush_ns_per_cpu * m->nr_cpus * 1000;
	m->vt = pl_vtime_create(m->nr_cpus, &t, &p);
	if (!m->vt) {
		pl_warn_ratelimited("pl_machine_create: no memory for virtual time");
		return -ENOMEM;
	}
	return 0;
}

struct pl_machine *pl_machine_create(const struct pl_config *cfg)
{
	struct pl_machine *m;

	if (pl_check_config(cfg))	/* mm/validate.c: one warning naming the problem */
		return NULL;
	if (pl_mm_check_config(cfg)) {
		pl_warn_ratelimited("machine: bad config (memory %lu bytes, DMA32 end %lu, %u cpus): "
				    "sizes must be non-zero multiples of 2 MiB, holes page-aligned, "
				    "disjoint and inside memory",
				    cfg ? cfg->mem_bytes : 0, cfg ? cfg->dma32_bytes : 0,
				    cfg ? cfg->nr_cpus : 0);
		return NULL;
	}
	/*
	 * Aligned as its zones' cacheline-aligned fields (zone->lock) ask:
	 * calloc() gives 16 bytes, and the virtual-time model, which keys
	 * cache lines by address, then saw zone->lock share a line with other
	 * fields or not as the heap happened to place the machine.
	 */
	m = pl_zalloc_lines(sizeof(*m));
	if (!m)
		return NULL;
	m->config = *cfg;
	m->debug = cfg->debug;
	m->nr_cpus = cfg->nr_cpus;
	m->cpus = pl_zalloc_lines(sizeof(struct pl_cpu) * m->nr_cpus);
	if (!m->cpus || pl_mm_init(m)) {
		free(m->cpus);
		free(m);
		return NULL;
	}
	memset(m->cpus, 0, sizeof(struct pl_cpu) * m->nr_cpus);
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		m->cpus[c].id = c;

	/*
	 * Boot runs on CPU 0 of this machine, then restores the caller's
	 * context; no other thread can see the machine yet, so CPU 0 is not
	 * claimed (pl_vcpu_claim()).
	 */
	struct pl_this saved = pl_this;
	struct pl_vt_cpu *saved_vt = pl_vt_cur;

	pl_this.machine = m;
	pl_this.cpu = &m->cpus[0];
	pl_mm_free_all_bootmem(m);
	m->vmap = vmap_space_create(m);	/* vmalloc_init() */
	pl_this = saved;
	pl_vt_cur = saved_vt;
	if (!m->vmap || register_layers(m) || (m->config.vtime && create_vtime(m))) {
		pl_machine_destroy(m);
		return NULL;
	}
	pl_machine_register(m);
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
	pl_machine_unregister(m);
	pl_vtime_destroy(m->vt);
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

	if (pl_check_ptr(__func__, m, "machine"))
		return -EINVAL;

	for (unsigned int i = 0; i < m->nr_checkers; i++)
		errors += m->checkers[i].check(m);
	return errors;
}
