// SPDX-License-Identifier: MIT
/*
 * fail_page_alloc.c - the page allocator's fault injection site:
 * should_fail_alloc_page(), called first thing in alloc_pages() (the kernel
 * calls it from prepare_alloc_pages()). Its state is the machine's
 * fail_page_alloc (made with the zones in mm_init.c); the machine registers
 * it as PL_FAULT_PAGE_ALLOC, and pl_fault_set() (src/machine/fault_sites.c)
 * sets its knobs.
 *
 * Invariant: an injected failure is decided before the allocator reads or
 * writes any of its state.
 */
#include "internal.h"

/**
 * __should_fail_alloc_page() - fail_page_alloc's hook at the top of
 * alloc_pages(), once should_fail_alloc_page() (internal.h) found the site
 * enabled.
 * @gfp:   the allocation's flags; __GFP_NOWARN silences the report, and with
 *         ignore-gfp-wait a call that may sleep (__GFP_DIRECT_RECLAIM) is
 *         never failed.
 * @order: orders below min-order are never failed.
 * Context: a thread that has entered a machine.
 * Return: true if this allocation must fail; it is then counted as an
 * allocation failure (PL_EV_ALLOC_FAIL) and nothing else is touched.
 */
bool __should_fail_alloc_page(gfp_t gfp, unsigned int order)
{
	struct pl_fault_state *fs = &pl_this.machine->fail_page_alloc;
	int verbose = 0;

	if (!__pl_should_fail(fs, PAGE_SIZE << order, order, gfp & __GFP_DIRECT_RECLAIM, &verbose))
		return false;
	pl_count(PL_EV_ALLOC_FAIL, 1);
	if (verbose && !(gfp & __GFP_NOWARN))
		pl_warn_ratelimited("FAULT_INJECTION: forcing a failure: fail_page_alloc order:%u mode:%#x",
				    order, gfp);
	return true;
}
