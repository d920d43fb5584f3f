// SPDX-License-Identifier: MIT
/*
 * page_alloc_high_order.c - seed 001's benchmark loop,
 * page_alloc_high_order_test():
 *
 *	for (i = 0; i < test_loop_count; i++) {
 *		page = alloc_pages(GFP_KERNEL, order);
 *		split_page(page, order);
 *		free_contig_range(page_to_pfn(page), 1UL << order);
 *	}
 *
 * at each order of `order=` (default 3, 9 - the seed's HPAGE_PMD_ORDER -
 * and 10), 100,000 iterations as the seed, single-threaded on vCPU 0. The
 * designs run interleaved (A B A B ...) in one process, each run on a fresh
 * machine so that its counters in the JSON are that run's alone. Figures:
 * time per iteration (the seed's "Execution time" / loop count) and per
 * page; the table shows the best rep and the counters per iteration.
 *
 * Under each order, a "drops alone" row times what neither design can
 * avoid: 2^order locked refcount drops (put_page_testzero(), one atomic
 * read-modify-write per struct page), nothing else, in the same rep.
 * Its speedup column is the most any design keeping those drops can reach.
 * floor=0 leaves it out (for callgrind counts of the designs alone).
 * zero=1 allocates with __GFP_ZERO, so that the cost of clearing a block can
 * be compared across orders (it is per page, as the kernel's).
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_DESIGNS 8
#define MAX_ORDERS 11

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY_DEF("design", "v6.18,contig-batch"),
	{ "order", BK_NUMLIST, 0, MAX_PAGE_ORDER, NULL, "3,9,10", "comma-separated orders" },
	{ "test_loop_count", BK_NUM, 1, 1000000000UL, NULL, "100000", "alloc/free pairs per rep" },
	BENCH_KEY("reps"),
	BENCH_KEY("vcpus"),
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY("pcp"),
	{ "floor", BK_NUM, 0, 1, NULL, "1",
	  "also time the 2^order atomic refcount drops both designs pay, printed as the floor (0 "
	  "off)" },
	{ "zero", BK_NUM, 0, 1, NULL, "0", "allocate with __GFP_ZERO (1 on): the block is cleared "
	  "page by page" },
	BENCH_KEY_END
};

struct run {
	double ns;			/* whole loop */
	double vt_ns;			/* the same in virtual time (vtime=1) */
	unsigned long ev[NR_PL_VM_EVENTS];
	unsigned long zone_lock;	/* zone->lock acquisitions */
};

/* Parse "3,9,10" into orders. Return: how many, or -1 on junk. */
static int parse_orders(const char *s, unsigned int *orders)
{
	char buf[128], *end;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		unsigned long o = strtoul(tok, &end, 10);

		if (*end || end == tok || o > MAX_PAGE_ORDER || n == MAX_ORDERS)
			return -1;
		orders[n++] = (unsigned int)o;
	}
	return n;
}

static void one_run(struct bench *b, int slot, struct pl_machine *m, unsigned int order,
		    gfp_t gfp, unsigned long loops, struct run *r)
{
	unsigned long nr = 1UL << order, tick = 0;
	struct pl_lock_stat ls;

	pl_enter(m, 0);
	bench_vt_begin(m);
	bench_slot_clear(b, slot);
	bench_region_begin(b, slot);
	for (unsigned long i = 0; i < loops; i++) {
		struct page *page = alloc_pages(gfp, order);

		if (!page || split_page(page, order) ||
		    free_contig_range(page_to_pfn(page), nr) != 0) {
			fprintf(stderr, "pagelab-bench: page_alloc_high_order: order-%u iteration "
				"%lu failed\n", order, i);
			exit(1);
		}
		bench_vmstat_tick(&tick);
	}
	r->ns = (double)bench_region_end(b, slot);
	bench_use_slot(b, slot);
	bench_vt_end(m, (double)loops);
	r->vt_ns = bench_vt_ns();
	pl_events_sum(m, r->ev);
	bench_zone_lock_stat(m, &ls);
	r->zone_lock = ls.acquisitions;
	pl_leave();
}

/*
 * The floor under both designs: 2^order put_page_testzero()-style drops on
 * struct pages (48 bytes apart, as in mem_map), one atomic decrement each
 * with the kernel's full ordering (a lock-prefixed RMW on x86, which waits
 * for the previous one to leave the store buffer). Return: ns for @loops.
 */
static double atomic_drop_floor_ns(unsigned int order, unsigned long loops)
{
	unsigned long nr = 1UL << order, zero = 0;
	struct page *pages = calloc(nr, sizeof(*pages));
	uint64_t t0;
	double ns;

	if (!pages) {
		fprintf(stderr, "pagelab-bench: page_alloc_high_order: out of memory\n");
		exit(1);
	}
	for (unsigned long j = 0; j < nr; j++)
		pages[j]._refcount = (int)loops;
	t0 = pl_now_ns();
	for (unsigned long i = 0; i < loops; i++)
		for (unsigned long j = 0; j < nr; j++)
			zero += __atomic_sub_fetch(&pages[j]._refcount, 1, __ATOMIC_SEQ_CST) == 0;
	ns = (double)(pl_now_ns() - t0);
	if (zero != nr) {	/* each page reached zero exactly once, on the last loop */
		fprintf(stderr, "pagelab-bench: page_alloc_high_order: floor loop miscounted\n");
		exit(1);
	}
	free(pages);
	return ns;
}

static int run(struct bench *b)
{
	const char *names[MAX_DESIGNS];
	int n = bench_designs(b, "v6.18,contig-batch", names, MAX_DESIGNS);
	unsigned long loops = param_ulong(b, "test_loop_count", 100000);
	unsigned long reps = param_ulong(b, "reps", 3);
	unsigned int orders[MAX_ORDERS];
	int nr_orders = parse_orders(param_str(b, "order", "3,9,10"), orders);
	static struct run best[MAX_ORDERS][MAX_DESIGNS];
	double floor_ns[MAX_ORDERS];
	bool with_floor = param_ulong(b, "floor", 1) != 0;
	gfp_t gfp = GFP_KERNEL | (param_ulong(b, "zero", 0) ? __GFP_ZERO : 0);
	char test[64];

	if (nr_orders <= 0 || !loops || !reps) {
		fprintf(stderr, "pagelab-bench: page_alloc_high_order: need order=N[,N...] with "
			"N <= %d, test_loop_count >= 1, reps >= 1\n", MAX_PAGE_ORDER);
		return 2;
	}
	for (int o = 0; o < nr_orders; o++) {
		unsigned long mem = param_ulong(b, "mem", 16UL << 30);

		/* bad input, not an allocation failure: the block and its floor must fit */
		if ((PAGE_SIZE << orders[o]) * 4 > mem) {
			fprintf(stderr, "pagelab-bench: page_alloc_high_order: order=%u needs mem >= "
				"%lu KiB\n", orders[o], (PAGE_SIZE << orders[o]) * 4 >> 10);
			return 2;
		}
	}
	for (int o = 0; o < nr_orders; o++) {
		floor_ns[o] = 1e300;
		for (int d = 0; d < n; d++)
			best[o][d].ns = 1e300;
	}

	for (unsigned long rep = 0; rep < reps; rep++) {
		for (int o = 0; o < nr_orders; o++) {
			for (int d = 0; d < n; d++) {
				struct pl_machine *m = bench_machine(b, names[d]);
				double nr = (double)(1UL << orders[o]);
				struct run r;

				one_run(b, (o * n + d) % BENCH_MAX_SLOTS, m, orders[o], gfp, loops,
					&r);
				snprintf(test, sizeof(test), "odr%u-per-iteration", orders[o]);
				bench_vt_set(r.vt_ns / (double)loops / 1e3);
				bench_emit(b, test, names[d], (int)rep, r.ns / (double)loops / 1e3,
					   "iteration-us", m);
				snprintf(test, sizeof(test), "odr%u-per-page", orders[o]);
				bench_vt_set(r.vt_ns / (double)loops / nr);
				bench_emit(b, test, names[d], (int)rep, r.ns / (double)loops / nr,
					   "op-ns", m);
				if (r.ns < best[o][d].ns)
					best[o][d] = r;
				bench_machine_destroy(m);
			}
			if (with_floor)
				floor_ns[o] = min(floor_ns[o],
						  atomic_drop_floor_ns(orders[o], loops));
		}
	}

	fprintf(b->out, "page_alloc_high_order: %lu x (alloc_pages(GFP_KERNEL, order), split_page, "
		"free_contig_range), 1 thread, best of %lu\n", loops, reps);
	fprintf(b->out, "%5s %-14s %10s %9s %10s %8s %11s %11s %11s %11s\n", "order", "design",
		"us/iter", "ns/page", "total(s)", "speedup", "zlock/iter", "frees/iter",
		"merges/iter", "drained/it");
	for (int o = 0; o < nr_orders; o++) {
		for (int d = 0; d < n; d++) {
			const struct run *r = &best[o][d];
			double l = (double)loops;

			fprintf(b->out, "%5u %-14s %10.3f %9.2f %10.3f %7.2fx %11.2f %11.2f %11.2f "
				"%11.1f\n", orders[o], names[d], r->ns / l / 1e3,
				r->ns / l / (double)(1UL << orders[o]), r->ns / 1e9,
				best[o][0].ns / r->ns, (double)r->zone_lock / l,
				(double)r->ev[PL_EV_PGFREE] / l,
				(double)r->ev[PL_EV_BUDDY_MERGE] / l,
				(double)r->ev[PL_EV_PCP_DRAIN_PAGES] / l);
		}
		if (!with_floor)
			continue;
		fprintf(b->out, "%5u %-14s %10.3f %9.2f %10.3f %7.2fx %11s %11s %11s %11s\n",
			orders[o], "drops alone", floor_ns[o] / (double)loops / 1e3,
			floor_ns[o] / (double)loops / (double)(1UL << orders[o]), floor_ns[o] / 1e9,
			best[o][0].ns / floor_ns[o], "-", "-", "-", "-");
	}
	return 0;
}

const struct bench_suite suite_page_alloc_high_order = {
	.name = "page_alloc_high_order",
	.summary = "seed 001: alloc order N, split_page, free_contig_range, per design",
	.keys = keys,
	.run = run,
};
