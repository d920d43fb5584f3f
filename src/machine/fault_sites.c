// SPDX-License-Identifier: MIT
/*
 * fault_sites.c - a machine's fault injection sites, reached by name: each
 * layer owns the state of its own sites and the composition root
 * (machine.c) registers them here when the machine is made:
 *
 *   PL_FAULT_PAGE_ALLOC  mm/fail_page_alloc.c (should_fail_alloc_page())
 *   PL_FAULT_SLAB        the vmalloc space's object caches (failslab)
 *   PL_FAULT_MAPLE_NODE  maple nodes (lib/maple_alloc.c): one process-wide
 *                        state, as the kernel's maple_node_cache is
 *                        system-wide, so every machine registers the same one
 *
 * No layer calls up into this file: the allocators test their own state
 * (a disabled site costs one relaxed load); this file only sets and reads it.
 *
 * Invariants: m->fault_sites[] is filled by pl_machine_create() before the
 * machine is returned and not changed afterwards; each state is protected by
 * its own mutex (fault_inject.h).
 */
#include <errno.h>
#include "pagelab/pagelab.h"

const char *const pl_fault_site_names[NR_PL_FAULT_SITES] = {
	[PL_FAULT_PAGE_ALLOC] = "fail_page_alloc",
	[PL_FAULT_SLAB] = "failslab",
	[PL_FAULT_MAPLE_NODE] = "fail_maple_node",
};

struct pl_fault_state *pl_fault_site_state(struct pl_machine *m, enum pl_fault_site site)
{
	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES)
		return NULL;
	return m->fault_sites[site];
}

int pl_fault_set(struct pl_machine *m, enum pl_fault_site site, const struct pl_fault_attr *attr)
{
	struct pl_fault_state *fs = pl_fault_site_state(m, site);
	int err;

	if (!fs || pl_fault_attr_valid(attr)) {
		pl_warn_ratelimited("fault injection: bad site or attributes");
		return -EINVAL;
	}
	/* armed before it is set, so that no call skips a site being armed */
	if (site == PL_FAULT_PAGE_ALLOC)
		__atomic_fetch_or(&m->hooks, PL_HOOK_FAULT, __ATOMIC_SEQ_CST);
	err = pl_fault_state_set(fs, attr);
	if (site == PL_FAULT_PAGE_ALLOC && !pl_fault_enabled(fs))
		__atomic_fetch_and(&m->hooks, ~PL_HOOK_FAULT, __ATOMIC_SEQ_CST);
	return err;
}

int pl_fault_get(struct pl_machine *m, enum pl_fault_site site, struct pl_fault_attr *attr,
		 struct pl_fault_stats *stats)
{
	struct pl_fault_state *fs = pl_fault_site_state(m, site);

	if (!fs)
		return -EINVAL;
	pl_fault_state_get(fs, attr, stats);
	return 0;
}
