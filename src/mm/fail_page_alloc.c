// SPDX-License-Identifier: MIT
/*
 * fail_page_alloc.c - a machine's fault injection sites, and the page
 * allocator's: should_fail_alloc_page(), called first thing in
 * alloc_pages() (the kernel calls it from prepare_alloc_pages()).
 *
 * The sites live in one struct pl_fault_inject hanging off the machine,
 * allocated when a site is first set and freed with the machine, so a
 * machine that never injects pays one NULL test per allocation. Later
 * sites (vmap_area, maple node: the kernel's failslab) are new entries in
 * enum pl_fault_site and a hook of the same shape at their allocation.
 *
 * Invariants: m->fault_inject goes from NULL to a fully initialised block
 * once (published with a release store under fault_inject_lock) and stays
 * until pl_machine_destroy(); an injected failure is decided before the
 * allocator reads or writes any of its state.
 */
#include <stdlib.h>
#include "internal.h"

struct pl_fault_inject {
	struct pl_fault_state site[NR_PL_FAULT_SITES];
};

const char *const pl_fault_site_names[NR_PL_FAULT_SITES] = {
	[PL_FAULT_PAGE_ALLOC] = "fail_page_alloc",
};

static pthread_mutex_t fault_inject_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pl_fault_inject *machine_faults(struct pl_machine *m)
{
	return __atomic_load_n(&m->fault_inject, __ATOMIC_ACQUIRE);
}

int pl_fault_set(struct pl_machine *m, enum pl_fault_site site, const struct pl_fault_attr *attr)
{
	struct pl_fault_inject *fi;

	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES || pl_fault_attr_valid(attr)) {
		pl_warn_ratelimited("fault injection: bad site or attributes");
		return -EINVAL;
	}
	pthread_mutex_lock(&fault_inject_lock);
	fi = machine_faults(m);
	if (!fi) {
		fi = calloc(1, sizeof(*fi));
		if (!fi) {
			pthread_mutex_unlock(&fault_inject_lock);
			return -ENOMEM;
		}
		for (int i = 0; i < NR_PL_FAULT_SITES; i++)
			pl_fault_state_init(&fi->site[i]);
		__atomic_store_n(&m->fault_inject, fi, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&fault_inject_lock);
	return pl_fault_state_set(&fi->site[site], attr);
}

int pl_fault_get(struct pl_machine *m, enum pl_fault_site site, struct pl_fault_attr *attr,
		 struct pl_fault_stats *stats)
{
	struct pl_fault_inject *fi;

	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES)
		return -EINVAL;
	fi = machine_faults(m);
	if (!fi) {
		struct pl_fault_state off;

		pl_fault_state_init(&off);
		pl_fault_state_get(&off, attr, stats);
		pl_fault_state_destroy(&off);
		return 0;
	}
	pl_fault_state_get(&fi->site[site], attr, stats);
	return 0;
}

void pl_fault_inject_free(struct pl_machine *m)
{
	struct pl_fault_inject *fi = m->fault_inject;

	if (!fi)
		return;
	for (int i = 0; i < NR_PL_FAULT_SITES; i++)
		pl_fault_state_destroy(&fi->site[i]);
	free(fi);
	m->fault_inject = NULL;
}

/**
 * should_fail_alloc_page() - fail_page_alloc's hook at the top of alloc_pages().
 * @gfp:   the allocation's flags; __GFP_NOWARN silences the report, and with
 *         ignore-gfp-wait a call that may sleep (__GFP_DIRECT_RECLAIM) is
 *         never failed.
 * @order: orders below min-order are never failed.
 * Context: a thread that has entered a machine.
 * Return: true if this allocation must fail; it is then counted as an
 * allocation failure (PL_EV_ALLOC_FAIL) and nothing else is touched.
 */
bool should_fail_alloc_page(gfp_t gfp, unsigned int order)
{
	struct pl_fault_inject *fi = machine_faults(pl_this.machine);
	struct pl_fault_state *fs;
	int verbose = 0;

	if (likely(!fi))
		return false;
	fs = &fi->site[PL_FAULT_PAGE_ALLOC];
	if (!pl_fault_enabled(fs) ||
	    !__pl_should_fail(fs, PAGE_SIZE << order, order, gfp & __GFP_DIRECT_RECLAIM, &verbose))
		return false;
	pl_count(PL_EV_ALLOC_FAIL, 1);
	if (verbose && !(gfp & __GFP_NOWARN))
		pl_warn_ratelimited("FAULT_INJECTION: forcing a failure: fail_page_alloc order:%u mode:%#x",
				    order, gfp);
	return true;
}
