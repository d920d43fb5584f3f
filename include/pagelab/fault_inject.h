/* SPDX-License-Identifier: MIT */
/*
 * fault_inject.h - fault injection in the style of the kernel's
 * fail_page_alloc and failslab (Documentation/fault-injection): a machine
 * can be told to fail a share of its allocations, deterministically from a
 * seed, so that every failure path can be driven and checked.
 *
 * Knobs (struct pl_fault_attr), with the kernel's debugfs names:
 *   probability      percent of eligible calls that fail (0 = off, 100 = all)
 *   interval         only every interval-th eligible call may fail (>= 1)
 *   times            failures left; -1 = no limit; 0 = no more failures
 *   space            a budget in bytes consumed by eligible calls before
 *                    any failure is injected (0 = none)
 *   min-order        (page allocator) orders below this never fail
 *   ignore-gfp-wait  never fail calls that may sleep (__GFP_DIRECT_RECLAIM)
 *   verbose          0 silent; 1 or 2: one rate-limited warning per injected
 *                    failure (suppressed by __GFP_NOWARN)
 *   seed             seeds the PRNG behind probability
 * The defaults (pl_fault_attr_default()) are the kernel's for
 * fail_page_alloc: probability 0, interval 1, times 1, space 0,
 * min-order 1, ignore-gfp-wait Y, verbose 2. ignore-gfp-highmem has no
 * meaning here (no highmem zone) and is not modelled.
 *
 * Invariants:
 *  - an injected failure happens before the allocator touches anything: the
 *    call returns NULL (or -ENOMEM) and the machine is unchanged;
 *  - with one thread, the sequence of injected failures is a pure function
 *    of the attributes (seed included) and the sequence of calls;
 *  - the state of a site is protected by its own mutex; the "is it enabled"
 *    test on the allocation fast path is a single relaxed load.
 */
#ifndef PAGELAB_FAULT_INJECT_H
#define PAGELAB_FAULT_INJECT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base.h"

/**
 * struct pl_fault_attr - the knobs of one fault injection site.
 * @probability:        percent, 0..100.
 * @interval:           >= 1.
 * @times:              failures left, -1 for no limit.
 * @space:              bytes of eligible calls to let through first.
 * @min_order:          page allocator only: lowest order that may fail.
 * @ignore_gfp_reclaim: the kernel's ignore-gfp-wait.
 * @verbose:            0..2.
 * @seed:               PRNG seed for @probability.
 */
struct pl_fault_attr {
	unsigned int probability;
	unsigned long interval;
	long times;
	long space;
	unsigned int min_order;
	bool ignore_gfp_reclaim;
	int verbose;
	uint64_t seed;
};

/**
 * struct pl_fault_stats - what a site has done since it was last set.
 * @calls:    eligible calls seen (past the order/gfp filters).
 * @injected: failures injected.
 */
struct pl_fault_stats {
	unsigned long calls;
	unsigned long injected;
};

/*
 * The sites a machine can fail, each with its own knobs:
 *   PL_FAULT_PAGE_ALLOC  fail_page_alloc: alloc_pages() and what is built on
 *                        it (bulk, vmalloc's pages, page-table pages, percpu
 *                        population).
 *   PL_FAULT_SLAB        failslab: the machine's object caches, the vmap_area
 *                        and vm_struct objects of the vmalloc space (vmalloc,
 *                        vmap, vm_map_ram blocks and large mappings, percpu
 *                        chunks). They take no gfp: ignore-gfp-wait and
 *                        min-order do not apply.
 *   PL_FAULT_MAPLE_NODE  maple node allocation (mt_fault_set()). Maple nodes
 *                        come from one process-wide cache, as the kernel's
 *                        maple_node_cache is system-wide: setting this site on
 *                        any machine sets it for every maple tree.
 */
enum pl_fault_site {
	PL_FAULT_PAGE_ALLOC,
	PL_FAULT_SLAB,
	PL_FAULT_MAPLE_NODE,
	NR_PL_FAULT_SITES
};

extern const char *const pl_fault_site_names[NR_PL_FAULT_SITES];

/**
 * pl_fault_attr_default() - fill @attr with the kernel's fail_page_alloc
 * defaults (injection off: probability 0).
 */
void pl_fault_attr_default(struct pl_fault_attr *attr);

/**
 * pl_fault_attr_parse() - update @attr from "key=value,key=value": keys are
 * the knob names above ('-' or '_'), booleans Y/N/1/0.
 * Return: 0, or -EINVAL (with a warning) for an unknown key or a bad value;
 * @attr is then left as it was.
 */
int pl_fault_attr_parse(struct pl_fault_attr *attr, const char *spec);

/**
 * pl_fault_attr_valid() - check the ranges: probability <= 100,
 * interval >= 1, times >= -1, space >= 0, verbose 0..2.
 * Return: 0 or -EINVAL.
 */
int pl_fault_attr_valid(const struct pl_fault_attr *attr);

/* ---- the engine (fault_inject.c), used by the sites in src/ ------------- */

/**
 * struct pl_fault_state - one site's live state. @attr.times and
 * @attr.space count down as failures are injected and budget is used.
 * @enabled is read without @lock on the fast path; the rest under it.
 */
struct pl_fault_state {
	pthread_mutex_t lock;
	bool enabled;
	struct pl_fault_attr attr;
	unsigned long count;
	struct pl_fault_stats stats;
	struct pl_rng rng;
};

/** pl_fault_state_init() - a disabled site with default attributes. */
void pl_fault_state_init(struct pl_fault_state *fs);
/** pl_fault_state_destroy() - release @fs's mutex. */
void pl_fault_state_destroy(struct pl_fault_state *fs);

/**
 * pl_fault_state_set() - replace @fs's attributes, reseed its PRNG and zero
 * its interval counter and statistics.
 * Return: 0, or -EINVAL for invalid @attr (nothing changed).
 */
int pl_fault_state_set(struct pl_fault_state *fs, const struct pl_fault_attr *attr);

/** pl_fault_state_get() - copy the current attributes and statistics. */
void pl_fault_state_get(struct pl_fault_state *fs, struct pl_fault_attr *attr,
			struct pl_fault_stats *stats);

/* @order for sites whose allocations have none: min-order never filters. */
#define PL_FAULT_NO_ORDER (~0u)

/**
 * __pl_should_fail() - decide whether the call about to allocate @size bytes
 * fails. First the filters: @order below min-order, or @may_sleep with
 * ignore-gfp-wait, never fail and are not counted. Then the kernel's
 * should_fail() order of tests (times, space, interval, probability).
 * @verbose receives the site's verbosity when a failure is injected (the
 * caller prints, knowing the context). The caller has checked
 * pl_fault_enabled() first. Context: any thread.
 * Return: true to inject a failure (the caller then returns its failure
 * value with nothing changed).
 */
bool __pl_should_fail(struct pl_fault_state *fs, size_t size, unsigned int order, bool may_sleep,
		      int *verbose);

static inline bool pl_fault_enabled(struct pl_fault_state *fs)
{
	return unlikely(READ_ONCE(fs->enabled));
}

/* The sites of a machine (pl_fault_set(), ...) are in machine.h. */

#endif /* PAGELAB_FAULT_INJECT_H */
