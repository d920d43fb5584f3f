// SPDX-License-Identifier: MIT
/*
 * buddy_alloc_free.c - the cost of alloc_pages() + __free_pages() on one
 * vCPU, through the per-CPU lists or (pcp=0) straight from the buddy lists:
 * back-to-back pairs, and batches of `batch` allocations followed by their
 * frees. Designs interleaved by rep.
 */
#include <stdlib.h>
#include "bench.h"

#define MAX_DESIGNS 8

static const char *const keys[] = { "mem", "dma32", "design", "order", "nr", "batch", "reps",
				    "debug", "lock_stat", "pcp", NULL };

static double pairs(unsigned int order, unsigned long nr)
{
	uint64_t t0 = pl_now_ns();

	for (unsigned long i = 0; i < nr; i++)
		__free_pages(alloc_pages(GFP_KERNEL, order), order);
	return (double)(pl_now_ns() - t0) / (double)nr;
}

static double batches(unsigned int order, unsigned long nr, unsigned long batch,
		      struct page **pages)
{
	unsigned long done = 0;
	uint64_t t0 = pl_now_ns();

	while (done < nr) {
		for (unsigned long i = 0; i < batch; i++)
			pages[i] = alloc_pages(GFP_KERNEL, order);
		for (unsigned long i = 0; i < batch; i++)
			__free_pages(pages[i], order);
		done += batch;
	}
	return (double)(pl_now_ns() - t0) / (double)done;
}

static int run(struct bench *b)
{
	const char *names[MAX_DESIGNS];
	int n = bench_designs(b, "v6.18", names, MAX_DESIGNS);
	unsigned int order = (unsigned int)param_ulong(b, "order", 0);
	unsigned long nr = param_ulong(b, "nr", 1000000), batch = param_ulong(b, "batch", 512);
	unsigned long reps = param_ulong(b, "reps", 3);
	struct pl_machine *m[MAX_DESIGNS] = { NULL };
	double best_pair[MAX_DESIGNS], best_batch[MAX_DESIGNS];
	struct page **pages = malloc(sizeof(*pages) * (batch ? batch : 1));
	char test[64];

	if (order > MAX_PAGE_ORDER || !batch || !nr) {
		fprintf(stderr, "pagelab-bench: need order <= %d, batch >= 1, nr >= 1\n",
			MAX_PAGE_ORDER);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		m[i] = bench_machine(b, names[i]);
		best_pair[i] = best_batch[i] = 1e18;
	}
	for (unsigned long r = 0; r < reps; r++) {
		for (int i = 0; i < n; i++) {
			double p, q;

			pl_enter(m[i], 0);
			p = pairs(order, nr);
			q = batches(order, nr, batch, pages);
			pl_leave();
			snprintf(test, sizeof(test), "pair-odr%u", order);
			bench_emit(b, test, names[i], (int)r, p, "ns", m[i]);
			snprintf(test, sizeof(test), "batch-odr%u-%lu", order, batch);
			bench_emit(b, test, names[i], (int)r, q, "ns", m[i]);
			best_pair[i] = min(best_pair[i], p);
			best_batch[i] = min(best_batch[i], q);
		}
	}
	fprintf(b->out, "order-%u alloc_pages + __free_pages %s, best of %lu (ns per block)\n", order,
		param_ulong(b, "pcp", 1) == 0 ? "straight from the buddy lists (pcp=0)"
					  : "through the per-CPU lists",
		reps);
	snprintf(test, sizeof(test), "batch of %lu", batch);
	fprintf(b->out, "%-12s %12s %16s\n", "design", "pair", test);
	for (int i = 0; i < n; i++) {
		fprintf(b->out, "%-12s %12.1f %16.1f\n", names[i], best_pair[i], best_batch[i]);
		pl_machine_destroy(m[i]);
	}
	free(pages);
	return 0;
}

const struct bench_suite suite_buddy_alloc_free = {
	.name = "buddy_alloc_free",
	.summary = "order-N alloc_pages + __free_pages straight from the buddy lists",
	.keys = keys,
	.run = run,
};
