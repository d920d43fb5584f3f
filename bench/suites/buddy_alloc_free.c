// SPDX-License-Identifier: MIT
/*
 * buddy_alloc_free.c - the cost of alloc_pages() + __free_pages(), through
 * the per-CPU lists or (pcp=0) straight from the buddy lists: back-to-back
 * pairs, and batches of `batch` allocations followed by their frees. With
 * threads=T, T real threads run the same loop at once, each as its own
 * vCPU of one machine; the figure is then ns per block per thread, and the
 * aggregate rate shows how the design scales from 1 to T threads. Designs
 * are interleaved by rep; the best rep is printed, every rep is in the JSON.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_DESIGNS 8
#define MAX_THREADS 16

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY("design"),
	BENCH_KEY("order"),
	{ "nr", BK_NUM, 1, 100000000000UL, NULL, "1000000", "blocks per measurement and thread" },
	{ "batch", BK_NUM, 1, 1000000UL, NULL, "512",
	  "blocks allocated before they are freed (the batch column)" },
	BENCH_KEY("reps"),
	{ "threads", BK_NUM, 1, 16, NULL, NULL, NULL },
	BENCH_KEY_DOC("vcpus", "threads", "vCPUs (at least threads)"),
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY("pcp"),
	BENCH_KEY_END
};

struct worker {
	struct pl_machine *m;
	pthread_barrier_t *start;
	unsigned int cpu, order;
	unsigned long nr, batch;
	double pair_ns, batch_ns;
};

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct page **pages = malloc(sizeof(*pages) * w->batch);
	unsigned long done = 0, tick = 0;
	uint64_t t0;

	pl_enter(w->m, w->cpu);
	pl_vt_enter(NULL, 0);	/* real threads: wall time only, never the vtime */
	pthread_barrier_wait(w->start);
	t0 = pl_now_ns();
	for (unsigned long i = 0; i < w->nr; i++) {
		__free_pages(alloc_pages(GFP_KERNEL, w->order), w->order);
		bench_vmstat_tick(&tick);
	}
	w->pair_ns = (double)(pl_now_ns() - t0) / (double)w->nr;

	pthread_barrier_wait(w->start);
	t0 = pl_now_ns();
	while (done < w->nr) {
		for (unsigned long i = 0; i < w->batch; i++)
			pages[i] = alloc_pages(GFP_KERNEL, w->order);
		for (unsigned long i = 0; i < w->batch; i++)
			__free_pages(pages[i], w->order);
		done += w->batch;
		bench_vmstat_tick(&tick);
	}
	w->batch_ns = (double)(pl_now_ns() - t0) / (double)done;
	pl_leave();
	free(pages);
	return NULL;
}

/*
 * vtime=1: the same two loops on @threads vCPUs interleaved in virtual
 * time, one step a pair or a batch; a barrier (clock sync) between loops.
 */
struct vt_loop {
	struct pl_machine *m;
	struct page **pages;
	unsigned long nr, batch, done[MAX_THREADS];
	unsigned int order;
	bool batched;
};

static void vt_loop_enter(void *ctx, unsigned int v)
{
	pl_enter(((struct vt_loop *)ctx)->m, v);
}

static bool vt_loop_step(void *ctx, unsigned int v)
{
	struct vt_loop *l = ctx;

	if (l->done[v] >= l->nr)
		return false;
	if (!l->batched) {
		__free_pages(alloc_pages(GFP_KERNEL, l->order), l->order);
		l->done[v]++;
		return true;
	}
	for (unsigned long i = 0; i < l->batch; i++)
		l->pages[i] = alloc_pages(GFP_KERNEL, l->order);
	for (unsigned long i = 0; i < l->batch; i++)
		__free_pages(l->pages[i], l->order);
	l->done[v] += l->batch;
	return true;
}

/* Mean over the vCPUs of each one's virtual ns per block in the region. */
static double vt_loop_run(struct vt_loop *l, unsigned int threads)
{
	struct pl_vcpu_run run = { .nr_vcpus = threads, .nr_threads = 1, .slice = 1,
				   .enter = vt_loop_enter, .step = vt_loop_step, .ctx = l,
				   .vt = l->m->vt };
	double sum = 0;

	pl_vt_sync(l->m->vt);
	memset(l->done, 0, sizeof(l->done));
	unsigned long per = l->batched ? (l->nr + l->batch - 1) / l->batch * l->batch : l->nr;

	bench_vt_begin(l->m);
	pl_run_vcpus(&run);
	bench_vt_end(l->m, (double)per * threads);	/* blocks allocated and freed */
	for (unsigned int t = 0; t < threads; t++)
		sum += bench_vt_cpu_ns(t) / (double)l->done[t];
	return sum / threads;
}

static void vt_rep(struct pl_machine *m, unsigned int threads, unsigned int order,
		   unsigned long nr, unsigned long batch, double *pair, double *bat)
{
	struct vt_loop l = { .m = m, .nr = nr, .batch = batch, .order = order };

	l.pages = malloc(sizeof(*l.pages) * batch);
	*pair = vt_loop_run(&l, threads);
	l.batched = true;
	*bat = vt_loop_run(&l, threads);
	free(l.pages);
	pl_leave();
}

/* One rep on @m with @threads threads; the per-thread means of both loops. */
static void one_rep(struct pl_machine *m, unsigned int threads, unsigned int order,
		    unsigned long nr, unsigned long batch, double *pair, double *bat)
{
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t start;

	pthread_barrier_init(&start, NULL, threads);
	for (unsigned int t = 0; t < threads; t++) {
		w[t] = (struct worker){ m, &start, t, order, nr, batch, 0, 0 };
		if (t)
			pthread_create(&tid[t], NULL, worker_fn, &w[t]);
	}
	worker_fn(&w[0]);
	*pair = w[0].pair_ns;
	*bat = w[0].batch_ns;
	for (unsigned int t = 1; t < threads; t++) {
		pthread_join(tid[t], NULL);
		*pair += w[t].pair_ns;
		*bat += w[t].batch_ns;
	}
	*pair /= threads;
	*bat /= threads;
	pthread_barrier_destroy(&start);
}

static int run(struct bench *b)
{
	const char *names[MAX_DESIGNS];
	int n = bench_designs(b, "v6.18", names, MAX_DESIGNS);
	unsigned int order = (unsigned int)param_ulong(b, "order", 0);
	unsigned int threads = (unsigned int)param_ulong(b, "threads", 1);
	unsigned long nr = param_ulong(b, "nr", 1000000), batch = param_ulong(b, "batch", 512);
	unsigned long reps = param_ulong(b, "reps", 3);
	struct pl_machine *m[MAX_DESIGNS] = { NULL };
	double best_pair[MAX_DESIGNS], best_batch[MAX_DESIGNS];
	char test[64], tsuffix[16];

	if (order > MAX_PAGE_ORDER || !batch || !nr || !threads || threads > MAX_THREADS) {
		fprintf(stderr, "pagelab-bench: need order <= %d, batch >= 1, nr >= 1, "
			"1 <= threads <= %d\n", MAX_PAGE_ORDER, MAX_THREADS);
		return 2;
	}
	if (param_ulong(b, "vcpus", threads) < threads) {
		fprintf(stderr, "pagelab-bench: threads=%u needs vcpus >= %u\n", threads, threads);
		return 2;
	}
	for (int i = 0; i < n; i++) {
		struct bench mb = *b;
		char vc[16];

		snprintf(vc, sizeof(vc), "%u", threads);
		if (!param_str(b, "vcpus", NULL)) {
			mb.keys[mb.nr_params] = "vcpus";
			mb.vals[mb.nr_params++] = vc;
		}
		m[i] = bench_machine(&mb, names[i]);
		best_pair[i] = best_batch[i] = 1e18;
	}
	for (unsigned long r = 0; r < reps; r++) {
		for (int i = 0; i < n; i++) {
			double p, q;

			double vp = 0, vq = 0;

			if (m[i]->vt)
				vt_rep(m[i], threads, order, nr, batch, &vp, &vq);
			one_rep(m[i], threads, order, nr, batch, &p, &q);
			/* Names carry the thread count only when there is more than one. */
			tsuffix[0] = '\0';
			if (threads > 1)
				snprintf(tsuffix, sizeof(tsuffix), "-t%u", threads);
			snprintf(test, sizeof(test), "pair-odr%u%s", order, tsuffix);
			bench_vt_set(vp);
			bench_emit(b, test, names[i], (int)r, p, "op-ns", m[i]);
			snprintf(test, sizeof(test), "batch-odr%u-%lu%s", order, batch, tsuffix);
			bench_vt_set(vq);
			bench_emit(b, test, names[i], (int)r, q, "op-ns", m[i]);
			best_pair[i] = min(best_pair[i], p);
			best_batch[i] = min(best_batch[i], q);
		}
	}
	fprintf(b->out, "order-%u alloc_pages + __free_pages %s, %u thread(s), best of %lu "
		"(ns per block per thread; Mops/s all threads)\n", order,
		param_ulong(b, "pcp", 1) == 0 ? "straight from the buddy lists (pcp=0)"
					      : "through the per-CPU lists",
		threads, reps);
	snprintf(test, sizeof(test), "batch of %lu", batch);
	fprintf(b->out, "%-12s %10s %10s %14s %10s\n", "design", "pair", "Mops/s", test, "Mops/s");
	for (int i = 0; i < n; i++) {
		fprintf(b->out, "%-12s %10.1f %10.1f %14.1f %10.1f\n", names[i], best_pair[i],
			threads * 1e3 / best_pair[i], best_batch[i], threads * 1e3 / best_batch[i]);
		bench_machine_destroy(m[i]);
	}
	return 0;
}

const struct bench_suite suite_buddy_alloc_free = {
	.name = "buddy_alloc_free",
	.summary = "order-N alloc_pages + __free_pages, PCP or buddy only, 1..T threads",
	.keys = keys,
	.run = run,
};
