// SPDX-License-Identifier: MIT
/*
 * workload.c - built-in allocation patterns, in the library so that the
 * bench suites and the Python API (pagelab.Machine.run_workload) run the
 * same code.
 *
 * churn_run(): a kernel-build-like mix. 70% of blocks are order 0, 28% order
 * 1..3, 2% order 4 and one in a thousand a THP-sized movable block; 60% movable (page cache, anon), 25%
 * unmovable (slab, page tables), 15% reclaimable (dentries, inodes).
 * Memory is filled to 5% free, half of it released at random, and then
 * random blocks are replaced. The same seed gives the same machine state
 * under every design that does not change placement.
 */
#include <stdlib.h>
#include "pagelab/pagelab.h"

struct churn_block {
	struct page *page;
	unsigned int order;
};

struct pl_churn {
	struct churn_block *blocks;
	unsigned long nr, cap;
};

static void pick(struct pl_rng *rng, unsigned int *order, gfp_t *gfp)
{
	uint64_t r = pl_rng_below(rng, 1000), t = pl_rng_below(rng, 100);

	*order = r < 700 ? 0 : r < 820 ? 1 : r < 900 ? 2 : r < 980 ? 3 : r < 999 ? 4 : 9;
	if (*order == 9 || t < 60)
		*gfp = GFP_HIGHUSER_MOVABLE;
	else if (t < 85)
		*gfp = GFP_KERNEL;
	else
		*gfp = GFP_KERNEL | __GFP_RECLAIMABLE;
	*gfp |= __GFP_NOWARN;
}

static bool churn_alloc(struct pl_churn *st, struct pl_rng *rng)
{
	unsigned int order;
	struct page *page;
	gfp_t gfp;

	pick(rng, &order, &gfp);
	page = alloc_pages(gfp, order);
	if (!page && order) {
		/* Fragmented: a kernel caller would make do with a page. */
		order = 0;
		page = alloc_pages(gfp, 0);
	}
	if (!page)
		return false;
	if (st->nr == st->cap) {
		unsigned long cap = st->cap ? st->cap * 2 : 1 << 16;
		struct churn_block *nb = realloc(st->blocks, cap * sizeof(*st->blocks));

		if (!nb) {	/* host memory: stop the fill, nothing leaks */
			__free_pages(page, order);
			return false;
		}
		st->blocks = nb;
		st->cap = cap;
	}
	st->blocks[st->nr++] = (struct churn_block){ page, order };
	return true;
}

static void churn_free(struct pl_churn *st, unsigned long i)
{
	__free_pages(st->blocks[i].page, st->blocks[i].order);
	st->blocks[i] = st->blocks[--st->nr];
}

struct pl_churn *pl_churn_run(struct pl_machine *m, uint64_t seed, unsigned long rounds,
			      struct pl_churn_result *res)
{
	unsigned long floor = m->max_pfn / 20, tick = 0;
	struct pl_churn *st = calloc(1, sizeof(*st));
	struct pl_rng rng;
	struct zone *zone;

	if (!st)
		return NULL;
	pl_rng_seed(&rng, seed);
	*res = (struct pl_churn_result){ 0 };
	/* the vmstat tick once per simulated second (machine.h) throughout */
	while (pl_nr_free_pages(m) > floor && churn_alloc(st, &rng)) {
		res->allocs++;
		pl_vmstat_tick_due(&tick);
	}
	for (unsigned long i = st->nr; i-- > 0;) {
		if (pl_rng_next(&rng) & 1) {
			churn_free(st, i);
			res->frees++;
			pl_vmstat_tick_due(&tick);
		}
	}
	for (unsigned long r = 0; r < rounds && st->nr; r++) {
		churn_free(st, pl_rng_below(&rng, st->nr));
		res->frees++;
		if (churn_alloc(st, &rng))
			res->allocs++;
		pl_vmstat_tick_due(&tick);
	}
	res->live_blocks = st->nr;
	for_each_populated_zone(zone, m)
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			res->free_blocks += zone->free_area[o].nr_free;
	return st;
}

void pl_churn_release(struct pl_churn *st)
{
	if (!st)
		return;
	while (st->nr)
		churn_free(st, st->nr - 1);
	free(st->blocks);
	free(st);
}
