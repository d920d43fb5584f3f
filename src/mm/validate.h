/* SPDX-License-Identifier: MIT */
/*
 * validate.h - pagelab's argument-validation layer (pagelab's own; the
 * kernel trusts its callers and has VM_WARN_ONs at best).
 *
 * Every public entry point checks its arguments here before it changes
 * anything: handles (NULL machine, zone, buffer, array), vCPU ownership (one
 * thread per vCPU), the calling thread's machine against the one a call
 * names (no cross-machine calls), index ranges (orders, migratetypes, CPU
 * numbers), gfp bits and vm flags. A refused call returns its error after
 * one rate-limited warning and counts PL_EV_BAD_INPUT on the caller's vCPU
 * when it has one.
 *
 * Cost on the hot path: the inline predicates below are a mask-and-compare
 * each and are folded into the branch an entry point already takes for its
 * existing checks; the out-of-line pl_bad_*() reporters run only once a
 * check failed.
 */
#ifndef PAGELAB_MM_VALIDATE_H
#define PAGELAB_MM_VALIDATE_H

#include <errno.h>
#include <limits.h>
#include "pagelab/base.h"
#include "pagelab/mm.h"

/* Every gfp bit pagelab defines (include/pagelab/mm_types.h). */
#define PL_GFP_KNOWN                                                                          \
	(__GFP_DMA32 | __GFP_MOVABLE | __GFP_RECLAIMABLE | __GFP_HIGH | __GFP_IO | __GFP_FS |  \
	 __GFP_ZERO | __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_COMP | \
	 __GFP_HARDWALL | __GFP_RETRY_MAYFAIL | __GFP_NORETRY)

/*
 * A gfp mask pagelab refuses: bits it does not know, or both migratetype
 * bits at once (the kernel's gfp_migratetype() VM_WARN_ON; silently
 * becoming Movable hides the caller's bug).
 */
static inline bool pl_gfp_bad(gfp_t gfp)
{
	return (gfp & ~(gfp_t)PL_GFP_KNOWN) || (gfp & GFP_MOVABLE_MASK) == GFP_MOVABLE_MASK;
}

/** pl_bad_arg() - warn about a refused call and count it. Return: -EINVAL. */
int pl_bad_arg(const char *fn, const char *fmt, ...) __printf(2, 3);

/** pl_bad_gfp() - the warning for a gfp mask pl_gfp_bad() refused. Return: -EINVAL. */
int pl_bad_gfp(const char *fn, gfp_t gfp);

/** pl_check_gfp() - 0, or -EINVAL (warned) for a mask pl_gfp_bad() refuses. */
static inline int pl_check_gfp(const char *fn, gfp_t gfp)
{
	return unlikely(pl_gfp_bad(gfp)) ? pl_bad_gfp(fn, gfp) : 0;
}

/** pl_check_ptr() - 0, or -EINVAL (warned) when @p, the argument @what, is NULL. */
static inline int pl_check_ptr(const char *fn, const void *p, const char *what)
{
	return unlikely(!p) ? pl_bad_arg(fn, "%s is NULL", what) : 0;
}

/**
 * pl_check_this_machine() - a call that changes machine @m must run on a
 * vCPU of @m: its pages and counters go through the caller's vCPU.
 * Return: 0, or -EINVAL (warned) for NULL, no machine entered, or another one.
 */
int pl_check_this_machine(const char *fn, const struct pl_machine *m);

/**
 * pl_check_zone() - @zone is a populated-or-empty zone of the machine the
 * caller entered (drains of another machine's zone are refused); NULL is
 * accepted when @null_ok (drain_*_pages(NULL) means all zones).
 */
int pl_check_zone(const char *fn, const struct zone *zone, bool null_ok);

/**
 * pl_vcpu_claim() - make the calling thread the one user of vCPU @cpu of
 * @m, giving back the vCPU it held before. A vCPU another live thread holds
 * is refused: two threads on one vCPU race on its per-CPU lists, caches
 * and vmap blocks, which are unlocked by design. A thread's vCPU is given
 * back by pl_leave() or when the thread exits.
 * Return: 0 or -EBUSY.
 */
int pl_vcpu_claim(struct pl_machine *m, unsigned int cpu);
/** pl_vcpu_release() - give back the calling thread's vCPU, if any. */
void pl_vcpu_release(void);

/**
 * pl_check_frozen_free() - the checks free_frozen_pages() makes beyond the
 * range/order/alignment ones: not a tail page, the allocation's order, and
 * not a page inside a free block, on a per-CPU list, or inside another
 * allocated block. A slow path: it walks the aligned blocks around @page
 * under zone->lock and the per-CPU lists under their locks.
 * Return: 0 or -EINVAL (warned).
 */
int pl_check_frozen_free(const char *fn, struct page *page, unsigned int order);

/** pl_check_config() - 0, or -EINVAL (warned) for a config no machine can have. */
int pl_check_config(const struct pl_config *cfg);

/* The registry of live machines (for the thread-exit release of a vCPU). */
void pl_machine_register(struct pl_machine *m);
void pl_machine_unregister(struct pl_machine *m);

/* Bounds of pagelab's own for values that would otherwise wrap or hang. */
#define PL_MAX_NR_CPUS		PL_MAX_VCPUS	/* vCPUs of one machine */
#define PL_MAX_TLB_FLUSH_NS	1000000000UL	/* 1 s per vCPU and flush */
#define PL_MAX_REFCOUNT		(INT_MAX / 2)	/* get_page() refuses beyond (the kernel's
						 * page_ref overflow WARN) */

#endif /* PAGELAB_MM_VALIDATE_H */
