// SPDX-License-Identifier: MIT
/*
 * fail_page_alloc.c - a machine's fault injection sites, and the page
 * allocator's: should_fail_alloc_page(), called first thing in
 * alloc_pages() (the kernel calls it from prepare_alloc_pages()).
 *
 * The sites live in one struct pl_fault_inject hanging off the machine,
 * allocated when a site is first set or hooked (the vmalloc space hooks
 * failslab into its object caches when it is made) and freed with the
 * machine; a disabled site costs its hook one relaxed load. failslab's hook
 * is in the object cache (src/lib/objcache.c); maple nodes have their own
 * process-wide state in src/lib/maple_alloc.c, which pl_fault_set() and
 * pl_fault_get() reach for PL_FAULT_MAPLE_NODE.
 *
 * Invariants: m->fault_inject goes from NULL to a fully initialised block
 * once (published with a release store under fault_inject_lock) and stays
 * until pl_machine_destroy(); an injected failure is decided before the
 * allocator reads or writes any of its state.
 */
#include <stdlib.h>
#include "pagelab/maple_tree.h"
#include "mm/internal.h"

struct pl_fault_inject {
	struct pl_fault_state site[NR_PL_FAULT_SITES];
};

const char *const pl_fault_site_names[NR_PL_FAULT_SITES] = {
	[PL_FAULT_PAGE_ALLOC] = "fail_page_alloc",
	[PL_FAULT_SLAB] = "failslab",
	[PL_FAULT_MAPLE_NODE] = "fail_maple_node",
};

static pthread_mutex_t fault_inject_lock = PTHREAD_MUTEX_INITIALIZER;

static struct pl_fault_inject *machine_faults(struct pl_machine *m)
{
	return __atomic_load_n(&m->fault_inject, __ATOMIC_ACQUIRE);
}

/* @m's sites, made on first use. Return: them, or NULL (no memory). */
static struct pl_fault_inject *machine_faults_get(struct pl_machine *m)
{
	struct pl_fault_inject *fi;

	pthread_mutex_lock(&fault_inject_lock);
	fi = machine_faults(m);
	if (!fi) {
		fi = calloc(1, sizeof(*fi));
		if (fi) {
			for (int i = 0; i < NR_PL_FAULT_SITES; i++)
				pl_fault_state_init(&fi->site[i]);
			__atomic_store_n(&m->fault_inject, fi, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&fault_inject_lock);
	return fi;
}

struct pl_fault_state *pl_fault_site_state(struct pl_machine *m, enum pl_fault_site site)
{
	struct pl_fault_inject *fi;

	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES || site == PL_FAULT_MAPLE_NODE)
		return NULL;
	fi = machine_faults_get(m);
	return fi ? &fi->site[site] : NULL;
}

int pl_fault_set(struct pl_machine *m, enum pl_fault_site site, const struct pl_fault_attr *attr)
{
	struct pl_fault_inject *fi;

	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES || pl_fault_attr_valid(attr)) {
		pl_warn_ratelimited("fault injection: bad site or attributes");
		return -EINVAL;
	}
	if (site == PL_FAULT_MAPLE_NODE)
		return mt_fault_set(attr);
	fi = machine_faults_get(m);
	if (!fi)
		return -ENOMEM;
	return pl_fault_state_set(&fi->site[site], attr);
}

int pl_fault_get(struct pl_machine *m, enum pl_fault_site site, struct pl_fault_attr *attr,
		 struct pl_fault_stats *stats)
{
	struct pl_fault_inject *fi;

	if (!m || (unsigned int)site >= NR_PL_FAULT_SITES)
		return -EINVAL;
	if (site == PL_FAULT_MAPLE_NODE) {
		mt_fault_get(attr, stats);
		return 0;
	}
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
