// SPDX-License-Identifier: MIT
/*
 * llfree_anchors.c - the LLFree artifact's bulk, repeat and rand workloads
 * (its kernel module alloc.c; LLFree, Wrenger et al., USENIX ATC 2023), to
 * compare pagelab's virtual time with the published in-kernel buddy
 * curves.
 *
 * Per thread, all threads starting together (a barrier before each timed
 * phase):
 *  - bulk:   allocate `allocs` blocks of the order into an array (timed:
 *            get = time / allocs), barrier, free them all in allocation
 *            order (timed: put);
 *  - repeat: `allocs` times allocate one block and free it at once;
 *  - rand:   allocate `allocs` blocks (untimed), thread 0 shuffles all
 *            threads' arrays together (each thread frees blocks other CPUs
 *            allocated), barrier, each thread frees its array (timed).
 * A value is the mean over threads of each thread's ns per operation.
 *
 * With vtime=1 the threads are vCPUs in virtual time (deterministic); with
 * vtime=0 each is a real thread (threads <= host CPUs makes sense) and the
 * values are wall time, or each thread's CPU time with clock=thread (warmup=1 runs an untimed bulk pass first, so that
 * first touches of the memmap stay out of the timed phases). allocs defaults are smaller than the artifact's
 * (1,290,555 at order 0, 2,520 at order 9) to fit pagelab's memory; the
 * cost per operation is what is compared.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"

static const struct bench_key keys[] = {
	BENCH_KEY_DOC("mem", "the profile's, else 16G", "machine memory (machine= gives its own)"),
	BENCH_KEY("dma32"),
	BENCH_KEY("design"),
	{ "threads", BK_NUM, 1, 1024, NULL, "1",
	  "threads (vtime=1: vCPUs in virtual time) running the workload" },
	BENCH_KEY("order"),
	{ "allocs", BK_NUM, 1, 100000000UL, NULL, "20000 (order 0), 64", "blocks per thread" },
	{ "workload", BK_NAMES, 0, 0, "bulk,repeat,rand", "bulk,repeat,rand",
	  "which of the LLFree artifact's workloads" },
	BENCH_KEY("seed"),
	BENCH_KEY("debug"),
	BENCH_KEY("pcp"),
	{ "pcp_autotune", BK_NUM, 0, 1, NULL, "1",
	  "0: pagelab's own switch, a fixed pcp->high as Linux 6.0 (no auto-tuning)" },
	BENCH_KEY_DOC("vcpus", "the profile's CPUs (at least threads), else threads",
	  "the machine's vCPUs, of which threads run"),
	{ "topology", BK_TEXT, 0, 0, NULL, "the profile's, else 2x26x1",
	  "SOCKETSxCORESxTHREADS pricing cache line transfers" },
	{ "warmup", BK_NUM, 0, 1, NULL, "0",
	  "1: an untimed bulk pass first (first touches out of the timed phases)" },
	{ "clock", BK_NAME, 0, 0, "wall,thread", "wall",
	  "real threads' clock: wall, or thread (each thread's CPU time: a loaded host's waits "
	  "left out)" },
	BENCH_KEY_END
};

enum phase { PH_ALLOC, PH_FREE, PH_REPEAT };

struct an_cpu {
	struct page **pages;
	unsigned long n, i;
	uint64_t t0, t1;	/* first and last step, wall or virtual (ps or ns) */
	bool started;
};

struct an {
	struct pl_machine *m;
	struct an_cpu *cpu;
	unsigned int threads, order;
	unsigned long allocs;
	enum phase phase;
	bool virt;
	bool thread_clock;	/* clock=thread: each thread's CPU time, not wall time */
};

/*
 * Now in ps: virtual time, wall time, or (clock=thread) the calling thread's
 * CPU time, which leaves out the time a loaded host keeps the thread off a
 * CPU (and still counts any spinning on a lock).
 */
static uint64_t an_now(const struct an *a)
{
	struct timespec ts;

	if (a->virt)
		return pl_vt_now();
	if (!a->thread_clock)
		return pl_now_ns() * 1000;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) * 1000;
}

static void an_enter(void *ctx, unsigned int v)
{
	pl_enter(((struct an *)ctx)->m, v);
}

static bool an_step(void *ctx, unsigned int v)
{
	struct an *a = ctx;
	struct an_cpu *c = &a->cpu[v];

	if (!c->started) {
		c->started = true;
		c->t0 = an_now(a);
	}
	if (c->i >= (a->phase == PH_FREE ? c->n : a->allocs)) {
		c->t1 = an_now(a);
		return false;
	}
	switch (a->phase) {
	case PH_ALLOC:
		c->pages[c->n] = alloc_pages(GFP_KERNEL, a->order);
		if (!c->pages[c->n]) {
			fprintf(stderr, "pagelab-bench: llfree_anchors: out of memory\n");
			exit(1);
		}
		c->n++;
		break;
	case PH_FREE:
		__free_pages(c->pages[c->i], a->order);
		break;
	case PH_REPEAT:
		__free_pages(alloc_pages(GFP_KERNEL, a->order), a->order);
		break;
	}
	c->i++;
	return true;
}

/* Run one phase on all threads; the mean of each thread's ns per operation. */
static double an_phase(struct an *a, enum phase ph)
{
	struct pl_vcpu_run run = { .nr_vcpus = a->threads, .enter = an_enter, .step = an_step,
				   .ctx = a, .vt = a->m->vt };
	double sum = 0, ops = 0;

	run.nr_threads = a->virt ? 1 : a->threads;
	run.slice = a->virt ? 1 : ~0UL;
	a->phase = ph;
	for (unsigned int t = 0; t < a->threads; t++) {
		a->cpu[t].i = 0;
		a->cpu[t].started = false;
		if (ph == PH_ALLOC)
			a->cpu[t].n = 0;
	}
	if (a->virt)
		pl_vt_sync(a->m->vt);	/* the barrier */
	bench_vt_begin(a->m);
	if (pl_run_vcpus(&run)) {
		fprintf(stderr, "pagelab-bench: llfree_anchors: bad threads\n");
		exit(2);
	}
	for (unsigned int t = 0; t < a->threads; t++) {
		struct an_cpu *c = &a->cpu[t];
		unsigned long n = ph == PH_FREE ? c->n : a->allocs;

		sum += (double)(c->t1 - c->t0) / 1000.0 / (double)n;
		ops += (double)n;
	}
	bench_vt_end(a->m, ops);
	pl_leave();
	return sum / a->threads;
}

/* Thread 0 shuffles all threads' arrays together (Fisher-Yates over the concatenation). */
static void an_shuffle(struct an *a, uint64_t seed)
{
	unsigned long total = 0, k = 0;
	struct page **all;
	struct pl_rng rng;

	for (unsigned int t = 0; t < a->threads; t++)
		total += a->cpu[t].n;
	all = malloc(sizeof(*all) * (total ? total : 1));
	if (!all)
		exit(1);
	for (unsigned int t = 0; t < a->threads; t++)
		for (unsigned long i = 0; i < a->cpu[t].n; i++)
			all[k++] = a->cpu[t].pages[i];
	pl_rng_seed(&rng, seed);
	for (unsigned long i = total; i > 1; i--) {
		unsigned long j = pl_rng_below(&rng, i);
		struct page *tmp = all[i - 1];

		all[i - 1] = all[j];
		all[j] = tmp;
	}
	k = 0;
	for (unsigned int t = 0; t < a->threads; t++)
		for (unsigned long i = 0; i < a->cpu[t].n; i++)
			a->cpu[t].pages[i] = all[k++];
	free(all);
}

static void emit(struct bench *b, struct an *a, const char *design, const char *wl,
		 const char *what, double ns)
{
	char test[64];

	snprintf(test, sizeof(test), "%s-o%u-%s-t%u", wl, a->order, what, a->threads);
	if (a->virt)
		bench_vt_set(ns);
	bench_emit(b, test, design, 0, ns, "op-ns", a->m);
	fprintf(b->out, "%-10s %-24s %10.1f ns/op%s\n", design, test, ns,
		a->virt ? " (virtual time)" : a->thread_clock ? " (thread CPU time)" : " (wall)");
}

static int run(struct bench *b)
{
	const char *names[8];
	int nd = bench_designs(b, "v6.18", names, 8);
	unsigned int threads = (unsigned int)param_ulong(b, "threads", 1);
	unsigned int order = (unsigned int)param_ulong(b, "order", 0);
	unsigned long allocs = param_ulong(b, "allocs", order ? 64 : 20000);
	const char *wl = param_str(b, "workload", "bulk,repeat,rand");
	uint64_t seed = param_ulong(b, "seed", 1);
	const struct pl_machine_profile *prof = param_str(b, "machine", NULL) ?
		pl_machine_profile_find(param_str(b, "machine", NULL)) : NULL;

	if (!threads || threads > 1024 || order > MAX_PAGE_ORDER || !allocs) {
		fprintf(stderr, "pagelab-bench: llfree_anchors: need 1 <= threads <= 1024, "
			"order <= %d, allocs >= 1\n", MAX_PAGE_ORDER);
		return 2;
	}
	for (int d = 0; d < nd; d++) {
		struct bench mb = *b;
		char vc[16];
		struct an a = { .threads = threads, .order = order, .allocs = allocs,
				.thread_clock = !strcmp(param_str(b, "clock", "wall"), "thread") };

		/*
		 * The machine's vCPUs, of which `threads` run. With a profile
		 * (the anchor machine: machine=xeon-5320-2s, 52 CPUs, 128 GiB)
		 * its CPUs and memory: pcp->high_min is the low watermark split
		 * over every CPU, running or not, as on the real machine, so a
		 * run of 1 thread has the PCP of a run of 24. Without one, a
		 * machine of `threads` vCPUs and 16 GiB.
		 */
		snprintf(vc, sizeof(vc), "%u", threads);
		if (param_ulong(b, "vcpus", threads) < threads) {
			fprintf(stderr, "pagelab-bench: llfree_anchors: vcpus < threads\n");
			return 2;
		}
		if (!param_str(b, "vcpus", NULL) && (!prof || prof->nr_cpus < threads)) {
			mb.keys[mb.nr_params] = "vcpus";
			mb.vals[mb.nr_params++] = vc;
		}
		if (!param_str(b, "mem", NULL) && !prof) {
			mb.keys[mb.nr_params] = "mem";
			mb.vals[mb.nr_params++] = "16G";
		}
		a.m = bench_machine(&mb, names[d]);
		a.virt = a.m->vt != NULL;
		a.cpu = calloc(threads, sizeof(*a.cpu));
		for (unsigned int t = 0; t < threads; t++)
			a.cpu[t].pages = malloc(sizeof(struct page *) * allocs);
		/*
		 * warmup=1: one untimed bulk pass first, so that the struct pages
		 * and the arrays are touched (host page faults) and the PCPs are in
		 * their steady state before anything is timed; for real threads.
		 */
		if (param_ulong(b, "warmup", 0)) {
			an_phase(&a, PH_ALLOC);
			an_phase(&a, PH_FREE);
		}
		if (strstr(wl, "bulk")) {
			emit(b, &a, names[d], "bulk", "get", an_phase(&a, PH_ALLOC));
			emit(b, &a, names[d], "bulk", "put", an_phase(&a, PH_FREE));
		}
		if (strstr(wl, "repeat"))
			emit(b, &a, names[d], "repeat", "getput", an_phase(&a, PH_REPEAT));
		if (strstr(wl, "rand")) {
			an_phase(&a, PH_ALLOC);
			an_shuffle(&a, seed);
			emit(b, &a, names[d], "rand", "put", an_phase(&a, PH_FREE));
		}
		for (unsigned int t = 0; t < threads; t++)
			free(a.cpu[t].pages);
		free(a.cpu);
		bench_machine_destroy(a.m);
	}
	return 0;
}

const struct bench_suite suite_llfree_anchors = {
	.name = "llfree_anchors",
	.summary = "the LLFree artifact's bulk/repeat/rand workloads on N threads",
	.keys = keys,
	.run = run,
};
