// SPDX-License-Identifier: MIT
/*
 * pagealloc_micro.c - mmtests' pagealloc micro-benchmark (config-pagealloc-
 * micro): for each order in [order_min, order_max] and each batch 1, 2, 4,
 * ... while batch < (128 MiB / 4 KiB) >> order, allocate the batch, then
 * free it, `iterations` times; the cost per block of each phase is one
 * measurement, named alloc-odrO-B and free-odrO-B.
 *
 * mmtests allocates batch + 1 blocks and divides by batch; plus1=1 (the
 * default, so numbers compare with mmtests') does the same, plus1=0 divides
 * the cost of exactly batch blocks.
 *
 * monitor=1 adds seed 002's second experiment: every design is also run
 * with a reader thread beside it that produces /proc/pagetypeinfo every
 * monitor_ms (10 ms, as mmtests' proc-pagetypeinfo monitor). All
 * configurations live in one process and are interleaved per (order,
 * batch), so drift hits them alike. churn=1 measures after the
 * pagetypeinfo suite's fragmenting churn instead of on a fresh machine.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"

#define MAX_CONFIGS 8

struct config {
	char label[48];
	const char *design;
	struct pl_machine *m;
	struct pl_churn *churn;
	bool monitor;
	pthread_t reader;
};

static volatile int stop_readers;
static unsigned long monitor_ms = 10;

static void *reader_fn(void *arg)
{
	struct config *c = arg;
	char *buf = malloc(64 << 10);
	struct timespec ts = { .tv_sec = (time_t)(monitor_ms / 1000),
			       .tv_nsec = (long)(monitor_ms % 1000) * 1000000L };

	while (!__atomic_load_n(&stop_readers, __ATOMIC_RELAXED)) {
		if (pl_show_pagetypeinfo(c->m, buf, 64 << 10) < 0)
			abort();
		nanosleep(&ts, NULL);
	}
	free(buf);
	return NULL;
}

/* Run @iterations of one (order, batch) on @c; add the mean costs to @alloc/@freec. */
static void measure(struct bench *b, struct config *c, unsigned int order, unsigned long batch,
		    unsigned long iterations, bool plus1, struct page **pages, double *alloc,
		    double *freec)
{
	unsigned long n = batch + (plus1 ? 1 : 0);
	char name[64];

	unsigned long tick = 0;

	*alloc = *freec = 0;
	pl_enter(c->m, 0);
	for (unsigned long it = 0; it < iterations; it++) {
		uint64_t t0 = pl_now_ns(), t1, t2, v0 = pl_vt_now(), v1, v2;

		for (unsigned long i = 0; i < n; i++)
			pages[i] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		t1 = pl_now_ns();
		v1 = pl_vt_now();
		for (unsigned long i = 0; i < n; i++)
			if (pages[i])
				__free_pages(pages[i], order);
		t2 = pl_now_ns();
		v2 = pl_vt_now();
		bench_vmstat_tick(&tick);	/* outside the timed parts */
		*alloc += (double)(t1 - t0) / (double)batch / (double)iterations;
		*freec += (double)(t2 - t1) / (double)batch / (double)iterations;
		snprintf(name, sizeof(name), "alloc-odr%u-%lu", order, batch);
		bench_vt_set((double)(v1 - v0) / 1e3 / (double)batch);
		bench_emit(b, name, c->label, (int)it, (double)(t1 - t0) / (double)batch, "op-ns", NULL);
		snprintf(name, sizeof(name), "free-odr%u-%lu", order, batch);
		bench_vt_set((double)(v2 - v1) / 1e3 / (double)batch);
		bench_emit(b, name, c->label, (int)it, (double)(t2 - t1) / (double)batch, "op-ns", NULL);
	}
	pl_leave();
}

static int run(struct bench *b)
{
	const char *designs[MAX_CONFIGS];
	int nd = bench_designs(b, "v6.18,mt-counts,mt-counts+blocks", designs, MAX_CONFIGS), nc = 0;
	unsigned int omin = (unsigned int)param_ulong(b, "order_min", 0);
	unsigned int omax = (unsigned int)param_ulong(b, "order_max", 4);
	unsigned long iterations = param_ulong(b, "iterations", 10);
	bool plus1 = param_ulong(b, "plus1", 1) != 0, monitor = param_ulong(b, "monitor", 0) != 0;
	struct config cfgs[MAX_CONFIGS];
	struct page **pages;
	FILE *f = b->out;

	monitor_ms = param_ulong(b, "monitor_ms", 10);
	if (omin > omax || omax > MAX_PAGE_ORDER || !iterations || !monitor_ms) {
		fprintf(stderr, "pagelab-bench: need order_min <= order_max <= %d, iterations >= 1\n",
			MAX_PAGE_ORDER);
		return 2;
	}
	for (int d = 0; d < nd; d++) {
		for (int mon = 0; mon <= (int)monitor && nc < MAX_CONFIGS; mon++) {
			struct config *c = &cfgs[nc++];

			memset(c, 0, sizeof(*c));
			c->design = designs[d];
			c->monitor = mon;
			snprintf(c->label, sizeof(c->label), "%s%s", designs[d], mon ? "+monitor" : "");
			c->m = bench_machine(b, designs[d]);
			if (param_ulong(b, "churn", 0)) {
				struct pl_churn_result res;

				pl_enter(c->m, 0);
				c->churn = pl_churn_run(c->m, param_ulong(b, "seed", 1), c->m->max_pfn / 8, &res);
				pl_leave();
			}
		}
	}
	stop_readers = 0;
	for (int i = 0; i < nc; i++)
		if (cfgs[i].monitor)
			pthread_create(&cfgs[i].reader, NULL, reader_fn, &cfgs[i]);

	pages = malloc(sizeof(*pages) * ((128UL << 20) / PAGE_SIZE + 1));
	fprintf(f, "pagealloc_micro: orders %u..%u, %lu iterations, batch%s, ns per block (mean)\n",
		omin, omax, iterations, plus1 ? "+1 as mmtests" : " exactly");
	fprintf(f, "%-18s", "test");
	for (int i = 0; i < nc; i++)
		fprintf(f, " %24s", cfgs[i].label);
	fprintf(f, "\n");
	for (unsigned int order = omin; order <= omax; order++) {
		for (unsigned long batch = 1; batch < ((128UL << 20) / PAGE_SIZE) >> order; batch <<= 1) {
			double alloc[MAX_CONFIGS], freec[MAX_CONFIGS];

			for (int i = 0; i < nc; i++)
				measure(b, &cfgs[i], order, batch, iterations, plus1, pages, &alloc[i],
					&freec[i]);
			fprintf(f, "alloc-odr%u-%-8lu", order, batch);
			for (int i = 0; i < nc; i++)
				fprintf(f, " %24.1f", alloc[i]);
			fprintf(f, "\nfree-odr%u-%-9lu", order, batch);
			for (int i = 0; i < nc; i++)
				fprintf(f, " %24.1f", freec[i]);
			fprintf(f, "\n");
			fflush(f);
		}
	}
	__atomic_store_n(&stop_readers, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < nc; i++) {
		if (cfgs[i].monitor)
			pthread_join(cfgs[i].reader, NULL);
		if (cfgs[i].churn) {
			pl_enter(cfgs[i].m, 0);
			pl_churn_release(cfgs[i].churn);
			pl_leave();
		}
		bench_machine_destroy(cfgs[i].m);
	}
	free(pages);
	return 0;
}

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY_DEF("design", "v6.18,mt-counts"),
	{ "order_min", BK_NUM, 0, MAX_PAGE_ORDER, NULL, "0", "lowest order measured" },
	{ "order_max", BK_NUM, 0, MAX_PAGE_ORDER, NULL, "4", "highest order measured" },
	{ "iterations", BK_NUM, 1, 1000000UL, NULL, "10", "batches per order" },
	{ "plus1", BK_NUM, 0, 1, NULL, "1",
	  "allocate batch + 1 blocks and divide by batch, as mmtests does (0: divide by batch + "
	  "1)" },
	{ "monitor", BK_NUM, 0, 1, NULL, "0",
	  "also run with a thread reading /proc/pagetypeinfo (1 on)" },
	{ "monitor_ms", BK_NUM, 1, 1000, NULL, "10", "the reader's period in ms" },
	{ "churn", BK_NUM, 0, 1, NULL, "0", "fragment the machine first (1 on)" },
	BENCH_KEY("seed"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY("debug"),
	BENCH_KEY_END
};

const struct bench_suite suite_pagealloc_micro = {
	.name = "pagealloc_micro",
	.summary = "mmtests pagealloc micro: alloc/free batches per order, optional pagetypeinfo reader",
	.keys = keys,
	.run = run,
};
