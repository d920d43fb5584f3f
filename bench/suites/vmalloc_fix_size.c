// SPDX-License-Identifier: MIT
/*
 * vmalloc_fix_size.c - lib/test_vmalloc.c's fix_size_alloc_test on one
 * vCPU: test_loop_count times vmalloc(nr_pages pages) (vmalloc_huge with
 * use_huge=1), write its first byte through the page tables, vfree it.
 * Reports ns per vmalloc+vfree pair, best of `reps`, designs interleaved
 * by rep; every rep is in the JSON. A first measurement of the vmalloc
 * path: the whole test_vmalloc suite is a separate piece of work.
 */
#include <stdlib.h>
#include "bench.h"

#define MAX_DESIGNS 8

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY("design"),
	{ "nr_pages", BK_NUM, 1, 1UL << 20, NULL, "1", "pages per vmalloc" },
	{ "use_huge", BK_NUM, 0, 1, NULL, "0", "vmalloc_huge() instead of vmalloc() (1 on)" },
	{ "test_loop_count", BK_NUM, 1, 1000000000UL, NULL, "1000000", "vmalloc/vfree pairs per rep" },
	BENCH_KEY("reps"),
	BENCH_KEY("vcpus"),
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY("pcp"),
	BENCH_KEY_END
};
/* vtime=1: one_rep() leaves the record's vtime value set (bench_vt_set). */

static double one_rep(struct bench *b, int slot, struct pl_machine *m, unsigned long nr_pages,
		      bool huge, unsigned long loops)
{
	unsigned long size = nr_pages * PAGE_SIZE, tick = 0;

	pl_enter(m, 0);
	bench_slot_clear(b, slot);
	bench_vt_begin(m);
	bench_region_begin(b, slot);
	for (unsigned long i = 0; i < loops; i++) {
		unsigned char zero = 0;
		void *p = huge ? vmalloc_huge(size, GFP_KERNEL) : vmalloc(size);

		if (!p || vmalloc_write(p, &zero, 1)) {
			fprintf(stderr, "vmalloc_fix_size: allocation %lu failed\n", i);
			exit(1);
		}
		vfree(p);
		bench_vmstat_tick(&tick);
	}
	{
		double ns = (double)bench_region_end(b, slot) / (double)loops;

		bench_vt_end(m, (double)loops);
		bench_vt_set(bench_vt_ns() / (double)loops);
		return ns;
	}
}

static int run(struct bench *b)
{
	const char *designs[MAX_DESIGNS];
	int nd = bench_designs(b, "v6.18", designs, MAX_DESIGNS);
	unsigned long nr_pages = param_ulong(b, "nr_pages", 1);
	bool huge = param_ulong(b, "use_huge", 0) != 0;
	unsigned long loops = param_ulong(b, "test_loop_count", 1000000);
	int reps = (int)param_ulong(b, "reps", 3);
	struct pl_machine *m[MAX_DESIGNS];
	double best[MAX_DESIGNS];
	char test[96];

	if (!nr_pages || !loops || reps < 1) {
		fprintf(stderr, "vmalloc_fix_size: nr_pages, test_loop_count and reps must be > 0\n");
		return 2;
	}
	snprintf(test, sizeof(test), "fix_size_alloc_test: p:%lu, h:%d, l:%lu", nr_pages, huge,
		 loops);
	for (int d = 0; d < nd; d++) {
		m[d] = bench_machine(b, designs[d]);
		best[d] = 0;
		if (nr_pages >= m[d]->max_pfn) {	/* bad input, not an allocation failure */
			fprintf(stderr, "vmalloc_fix_size: nr_pages=%lu does not fit a machine of "
				"%lu pages\n", nr_pages, m[d]->max_pfn);
			exit(2);
		}
	}
	for (int r = 0; r < reps; r++) {
		for (int d = 0; d < nd; d++) {
			double ns = one_rep(b, d, m[d], nr_pages, huge, loops);

			if (!r || ns < best[d])
				best[d] = ns;
			bench_use_slot(b, d);
			bench_emit(b, test, designs[d], r, ns, "pair-ns", m[d]);
		}
	}
	fprintf(b->out, "%s, vmalloc+vfree, best of %d (ns per pair)\n", test, reps);
	for (int d = 0; d < nd; d++) {
		fprintf(b->out, "  %-18s %8.1f\n", designs[d], best[d]);
		bench_machine_destroy(m[d]);
	}
	return 0;
}

const struct bench_suite suite_vmalloc_fix_size = {
	.name = "vmalloc_fix_size",
	.summary = "test_vmalloc's fix_size_alloc_test on one vCPU: ns per vmalloc+vfree pair",
	.keys = keys,
	.run = run,
};
