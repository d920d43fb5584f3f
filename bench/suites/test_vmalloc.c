// SPDX-License-Identifier: MIT
/*
 * test_vmalloc.c - lib/test_vmalloc.c (v6.19) as a pagelab-bench suite:
 * every test by its mask bit, the module parameters by their names, the
 * workers as vCPUs, and the kernel's output lines:
 *
 *   Summary: fix_size_alloc_test passed: 1 failed: 0 xfailed: 0 repeat: 1 loops: 1000000 avg: 187654 usec
 *   All test took worker0=412345678 cycles
 *
 * Worker i runs on vCPU i of a machine with vcpus= (default nr_threads)
 * vCPUs. With at most as many workers as host threads (threads=, default
 * min(nr_threads, host CPUs)) each worker is a thread of its own; with
 * more, pl_run_vcpus() interleaves them `slice` iterations at a time, the
 * same sequence every run. Each worker shuffles the test order (Sattolo,
 * as the kernel) unless sequential_test_order=1, runs each selected test
 * test_repeat_count times and reports the average µs per repeat. Passed/
 * failed/xfailed as after "lib/test_vmalloc: remove xfail condition check":
 * passed if the test returned 0, xfailed if it failed and is marked xfail.
 *
 * template=performance|smoke|stress sets test_vmalloc.sh's values (the
 * explicit parameters win). --json: one record per worker and test, the
 * test named as Fastpath's rows ("fix_size_alloc_test: p:1, h:0,
 * l:500000"), value the avg in usec, with the machine's counters; the
 * exit status is 1 if any test failed (xfailed is fine).
 *
 * Where pagelab differs: the kernel times with ktime; here the host clock.
 * The cycles line reads the TSC on x86_64 (ns elsewhere).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "pagelab/kvfree_rcu.h"
#include "pagelab/percpu.h"

#define MAX_DESIGNS	8
#define NTESTS		12
#define THREAD_ALIGN	(16UL << 10)	/* x86_64 THREAD_SIZE without KASAN */
#define BITS_PER_LONG	64

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY("design"),
	{ "vcpus", BK_NUM, 0, PL_MAX_VCPUS, NULL, "nr_threads", "vCPUs of the machine" },
	BENCH_KEY_DOC("threads", "min(nr_threads, host CPUs)", "real threads running the workers"),
	{ "slice", BK_NUM, 1, 1000000000UL, NULL, "64",
	  "operations a worker runs before the next one's turn" },
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY("pcp"),
	BENCH_KEY("seed"),
	{ "nr_threads", BK_NUM, 0, PL_MAX_VCPUS, NULL, "1", "workers (test_vmalloc.ko's nr_threads)" },
	{ "test_loop_count", BK_NUM, 1, 1000000000UL, NULL, "1000000", "iterations of each test" },
	{ "test_repeat_count", BK_NUM, 1, 10000, NULL, "1", "repetitions of the whole run" },
	{ "run_test_mask", BK_NUM, 1, 4095, NULL, "7", "bitmask of the tests to run (test_vmalloc.ko's)" },
	{ "nr_pages", BK_NUM, 0, 1UL << 20, NULL, "0",
	  "pages for fix_size_alloc_test (0: one page, the module's default)" },
	{ "use_huge", BK_NUM, 0, 1, NULL, "0", "vmalloc_huge() in fix_size_alloc_test (1 on)" },
	{ "sequential_test_order", BK_NUM, 0, 1, NULL, "0", "run the tests in mask order (1 on)" },
	{ "nr_pcpu_objects", BK_NUM, 1, 10000000UL, NULL, "35000", "objects of pcpu_alloc_test" },
	{ "template", BK_NAME, 0, 0, "performance,smoke,stress", "(none)",
	  "test_vmalloc.sh's presets: performance, smoke or stress" },
	{ "warmup", BK_NUM, 0, 1000000000UL, NULL, "0",
	  "an untimed pass of every test with this test_loop_count first (0: none)" },
	BENCH_KEY_END
};

struct tv_params {
	unsigned int nr_threads, nr_pages, run_test_mask;
	unsigned long test_loop_count, nr_pcpu_objects;
	int test_repeat_count;
	bool use_huge, sequential;
};

struct tv_worker;

/*
 * One test: setup (may fail the repeat), iterations, teardown. An
 * iteration returning nonzero ends the repeat with failure, as the
 * kernel's early returns do. Setup and teardown go one step at a time
 * (w->sj counts them): each returns < 0 on failure, 0 when done, > 0 for
 * one more step. A step is one allocation or free (or a pair), like an
 * iteration, so with vtime=1 the workers' setups interleave in virtual time
 * as the kernel's threads run theirs side by side (the kernel times them
 * with the test). As one step each, a worker's whole setup (full_fit:
 * 81,920 vmallocs) ran at once, and the others then waited in virtual time
 * for every lock it had last held: the setups ran one after another.
 */
struct tv_test {
	const char *name;
	bool xfail;
	int (*setup)(struct tv_worker *w);
	unsigned long (*loops)(const struct tv_params *p);
	int (*iter)(struct tv_worker *w, unsigned long i);
	int (*teardown)(struct tv_worker *w);
};

struct tv_result {
	int passed, failed, xfailed;
	uint64_t time_us;
	double vt_us;	/* the same in virtual time (vtime=1) */
};

struct tv_worker {
	const struct tv_params *p;
	struct pl_rng rng;
	unsigned int order[NTESTS];
	unsigned int pos, repeat;
	int phase;		/* 0 start, 3 setup, 1 iterate, 2 teardown */
	unsigned long i, loops;
	unsigned long sj;	/* steps of the current setup or teardown done */
	int ret;
	uint64_t t_test, start, stop;
	uint64_t vt_test;	/* virtual clock at the test's start (vtime=1) */
	struct tv_result data[NTESTS];
	/* the tests' scratch */
	void **ptr, **junk;
	void *arr1, *arr2;
	unsigned long n;
	struct page **pages;
	unsigned long nr_allocated;
	unsigned long tick_next;	/* bench_vmstat_tick(): this vCPU's next second */
};

static inline uint64_t get_cycles(void)
{
#if defined(__x86_64__)
	return __builtin_ia32_rdtsc();
#else
	return pl_now_ns();
#endif
}

static inline uint32_t rand_inclusive(struct tv_worker *w, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)pl_rng_below(&w->rng, (uint64_t)hi - lo + 1);
}

static unsigned long loops_default(const struct tv_params *p) { return p->test_loop_count; }
static unsigned int pages_of(const struct tv_params *p) { return p->nr_pages ? p->nr_pages : 1; }

/* The byte write the tests do through the new mapping. */
static int touch(void *addr, unsigned char v)
{
	return vmalloc_write(addr, &v, 1) ? -1 : 0;
}

/* ---- the tests ------------------------------------------------------------------ */

static int fix_size_iter(struct tv_worker *w, unsigned long i)
{
	unsigned long size = (unsigned long)pages_of(w->p) * PAGE_SIZE;
	void *ptr = w->p->use_huge ? vmalloc_huge(size, GFP_KERNEL) : vmalloc(size);

	(void)i;
	if (!ptr || touch(ptr, 0))
		return -1;
	vfree(ptr);
	return 0;
}

static unsigned long fls_ul(unsigned long x) { return x ? 64 - (unsigned long)__builtin_clzl(x) : 0; }

/* Step 0: the arrays; 1..n: a ptr and a junk page; n+1..2n: free a junk page. */
static int full_fit_setup(struct tv_worker *w)
{
	unsigned long junk_length = fls_ul(current_machine()->nr_cpus) * (32UL << 20) / PAGE_SIZE;
	unsigned long j = w->sj++;

	if (!j) {
		w->n = junk_length;
		w->arr1 = vmalloc(junk_length * sizeof(void *));
		w->arr2 = vmalloc(junk_length * sizeof(void *));
		w->ptr = calloc(junk_length, sizeof(void *));
		w->junk = calloc(junk_length, sizeof(void *));
		return !w->arr1 || !w->arr2 || !w->ptr || !w->junk ? -1 : 1;
	}
	if (j <= junk_length) {
		w->ptr[j - 1] = vmalloc(PAGE_SIZE);
		w->junk[j - 1] = vmalloc(PAGE_SIZE);
		return !w->ptr[j - 1] || !w->junk[j - 1] ? -1 : 1;
	}
	vfree(w->junk[j - junk_length - 1]);
	w->junk[j - junk_length - 1] = NULL;
	return j < 2 * junk_length;
}

static int one_page_iter(struct tv_worker *w, unsigned long i)
{
	void *tmp = vmalloc(PAGE_SIZE);

	(void)w;
	(void)i;
	if (!tmp || touch(tmp, 1))
		return -1;
	vfree(tmp);
	return 0;
}

/* Free what a setup left (also after it failed midway), one pair a step. */
static int free_arrays(struct tv_worker *w)
{
	unsigned long i = w->sj++;

	if (i < w->n) {
		if (w->ptr)
			vfree(w->ptr[i]);
		if (w->junk)
			vfree(w->junk[i]);
		return 1;
	}
	free(w->ptr);
	free(w->junk);
	vfree(w->arr1);
	vfree(w->arr2);
	w->ptr = w->junk = NULL;
	w->arr1 = w->arr2 = NULL;
	w->n = 0;
	return 0;
}

/* Step 0: the arrays; 1..15000: one page each. */
static int long_busy_setup(struct tv_worker *w)
{
	unsigned long j = w->sj++;

	if (!j) {
		w->n = 15000;
		w->arr1 = vmalloc(w->n * sizeof(void *));
		w->ptr = calloc(w->n, sizeof(void *));
		return !w->arr1 || !w->ptr ? -1 : 1;
	}
	w->ptr[j - 1] = vmalloc(PAGE_SIZE);
	if (!w->ptr[j - 1])
		return -1;
	return j < w->n;
}

static int long_busy_iter(struct tv_worker *w, unsigned long i)
{
	void *p1, *p2;

	(void)w;
	(void)i;
	p1 = vmalloc(100 * PAGE_SIZE);
	if (!p1)
		return -1;
	p2 = vmalloc(PAGE_SIZE);
	if (!p2) {
		vfree(p1);
		return -1;
	}
	touch(p1, 0);
	touch(p2, 1);
	vfree(p1);
	vfree(p2);
	return 0;
}

static int random_size_iter(struct tv_worker *w, unsigned long i)
{
	unsigned int n = rand_inclusive(w, 1, 100);
	void *p = vmalloc((unsigned long)n * PAGE_SIZE);

	(void)i;
	if (!p || touch(p, 1))
		return -1;
	vfree(p);
	return 0;
}

static int fix_align_iter(struct tv_worker *w, unsigned long i)
{
	void *ptr = __vmalloc_node(5 * PAGE_SIZE, THREAD_ALIGN << 1, GFP_KERNEL | __GFP_ZERO, 0);

	(void)w;
	(void)i;
	if (!ptr)
		return -1;
	vfree(ptr);
	return 0;
}

static int random_size_align_iter(struct tv_worker *w, unsigned long i)
{
	unsigned int rnd = (unsigned int)(pl_rng_next(&w->rng) & 0xff);
	unsigned long align = 1UL << (rnd % 23), size = ((rnd % 10) + 1) * PAGE_SIZE;
	void *ptr = __vmalloc_node(size, align, GFP_KERNEL | __GFP_ZERO, 0);

	(void)i;
	if (!ptr)
		return -1;
	vfree(ptr);
	return 0;
}

static unsigned long align_shift_loops(const struct tv_params *p)
{
	(void)p;
	return BITS_PER_LONG;
}

static int align_shift_iter(struct tv_worker *w, unsigned long i)
{
	void *ptr = __vmalloc_node(PAGE_SIZE, 1UL << i, GFP_KERNEL | __GFP_ZERO, 0);

	(void)w;
	if (!ptr)
		return -1;
	vfree(ptr);
	return 0;
}

/* pcpu_alloc_test: nr_pcpu_objects allocations (iterations 0..N-1), then frees. */
static int pcpu_setup(struct tv_worker *w)
{
	w->n = w->p->nr_pcpu_objects;
	w->arr1 = vmalloc(w->n * sizeof(void *));
	w->ptr = calloc(w->n, sizeof(void *));
	return w->arr1 && w->ptr ? 0 : -1;
}

static unsigned long pcpu_loops(const struct tv_params *p) { return p->nr_pcpu_objects; }

static int pcpu_iter(struct tv_worker *w, unsigned long i)
{
	size_t size = rand_inclusive(w, 1, PAGE_SIZE / 4);
	size_t align = 1UL << rand_inclusive(w, 1, 11);

	w->ptr[i] = __alloc_percpu(size, align);
	if (!w->ptr[i])
		w->ret = -1;	/* keep going, as the kernel does */
	return 0;
}

/* One object freed a step, then the arrays. */
static int pcpu_teardown(struct tv_worker *w)
{
	unsigned long i = w->sj++;

	if (w->ptr && i < w->n) {
		free_percpu(w->ptr[i]);
		return 1;
	}
	free(w->ptr);
	vfree(w->arr1);
	w->ptr = NULL;
	w->arr1 = NULL;
	w->n = 0;
	return 0;
}

struct test_kvfree_rcu {
	struct callback_head rcu;
	unsigned char array[20];
};

static int kvfree_rcu_iter(struct tv_worker *w, bool two_args)
{
	struct test_kvfree_rcu *p = vmalloc(PAGE_SIZE);

	(void)w;
	if (!p || touch(&p->array[0], 'a'))
		return -1;
	if (two_args)
		kvfree_rcu(p, rcu);
	else
		kvfree_rcu_mightsleep(p);
	return 0;
}

static int kvfree_rcu_1_iter(struct tv_worker *w, unsigned long i)
{
	(void)i;
	return kvfree_rcu_iter(w, false);
}

static int kvfree_rcu_2_iter(struct tv_worker *w, unsigned long i)
{
	(void)i;
	return kvfree_rcu_iter(w, true);
}

static int vm_map_ram_setup(struct tv_worker *w)
{
	unsigned int n = pages_of(w->p);

	w->pages = calloc(n, sizeof(*w->pages));
	if (!w->pages)
		return -1;
	w->nr_allocated = alloc_pages_bulk(GFP_KERNEL, n, w->pages);
	if (w->nr_allocated != n)
		w->loops = 0;	/* skip the loop, fail at the end */
	return 0;
}

static int vm_map_ram_iter(struct tv_worker *w, unsigned long i)
{
	unsigned int n = pages_of(w->p);
	void *v = vm_map_ram(w->pages, n, NUMA_NO_NODE);

	(void)i;
	if (!v || touch(v, 'a'))
		return -1;
	vm_unmap_ram(v, n);
	return 0;
}

static int vm_map_ram_teardown(struct tv_worker *w)
{
	int ret = w->nr_allocated != pages_of(w->p) ? -1 : 0;

	for (unsigned long i = 0; w->pages && i < w->nr_allocated; i++)
		__free_page(w->pages[i]);
	free(w->pages);
	w->pages = NULL;
	return ret;
}

static int no_block_iter(struct tv_worker *w, unsigned long i)
{
	gfp_t gfp = (pl_rng_next(&w->rng) & 0xff) % 2 ? GFP_ATOMIC : GFP_NOWAIT;
	void *p = __vmalloc((unsigned long)pages_of(w->p) * PAGE_SIZE, gfp);

	(void)i;
	if (!p || touch(p, 0))
		return -1;
	vfree(p);
	return 0;
}

static const struct tv_test tests[NTESTS] = {
	{ "fix_size_alloc_test", false, NULL, loops_default, fix_size_iter, NULL },
	{ "full_fit_alloc_test", false, full_fit_setup, loops_default, one_page_iter, free_arrays },
	{ "long_busy_list_alloc_test", false, long_busy_setup, loops_default, long_busy_iter,
	  free_arrays },
	{ "random_size_alloc_test", false, NULL, loops_default, random_size_iter, NULL },
	{ "fix_align_alloc_test", false, NULL, loops_default, fix_align_iter, NULL },
	{ "random_size_align_alloc_test", false, NULL, loops_default, random_size_align_iter,
	  NULL },
	{ "align_shift_alloc_test", true, NULL, align_shift_loops, align_shift_iter, NULL },
	{ "pcpu_alloc_test", false, pcpu_setup, pcpu_loops, pcpu_iter, pcpu_teardown },
	{ "kvfree_rcu_1_arg_vmalloc_test", false, NULL, loops_default, kvfree_rcu_1_iter, NULL },
	{ "kvfree_rcu_2_arg_vmalloc_test", false, NULL, loops_default, kvfree_rcu_2_iter, NULL },
	{ "vm_map_ram_test", false, vm_map_ram_setup, loops_default, vm_map_ram_iter,
	  vm_map_ram_teardown },
	{ "no_block_alloc_test", true, NULL, loops_default, no_block_iter, NULL },
};

/* ---- the driver ------------------------------------------------------------------ */

struct tv_run {
	struct pl_machine *m;
	const struct tv_params *p;
	struct tv_worker *w;
};

static bool selected(const struct tv_params *p, unsigned int idx)
{
	return (p->run_test_mask >> idx) & 1;
}

/* The next selected test at or after w->pos; false when none is left. */
static bool next_test(struct tv_worker *w)
{
	while (w->pos < NTESTS && !selected(w->p, w->order[w->pos]))
		w->pos++;
	return w->pos < NTESTS;
}

static void finish_repeat(struct tv_worker *w, const struct tv_test *t, struct tv_result *d)
{
	(void)t;
	if (!w->ret)
		d->passed++;
	else if (t->xfail)
		d->xfailed++;
	else
		d->failed++;
}

/* One step of worker @v: a setup, one iteration, or a teardown. */
static bool tv_step(void *ctx, unsigned int v)
{
	struct tv_run *r = ctx;
	struct tv_worker *w = &r->w[v];
	const struct tv_test *t;
	struct tv_result *d;

	if (!next_test(w)) {
		if (!w->stop)
			w->stop = get_cycles();
		return false;
	}
	t = &tests[w->order[w->pos]];
	d = &w->data[w->order[w->pos]];
	switch (w->phase) {
	case 0:
		if (!w->repeat) {
			w->t_test = pl_now_ns();
			w->vt_test = pl_vt_now();
		}
		w->ret = 0;
		w->i = 0;
		w->sj = 0;
		w->loops = t->loops(w->p);
		w->phase = 3;
		fallthrough;
	case 3: {
		int rc = t->setup ? t->setup(w) : 0;

		if (rc > 0)
			return true;
		w->sj = 0;
		if (rc < 0) {
			w->ret = -1;
			w->phase = 2;
			return true;
		}
		w->phase = 1;
		return true;
	}
	case 1:
		if (w->i < w->loops) {
			if (t->iter(w, w->i++)) {
				w->ret = -1;
				w->phase = 2;
				w->sj = 0;
			}
			bench_vmstat_tick(&w->tick_next);
			return true;
		}
		w->phase = 2;
		w->sj = 0;
		fallthrough;
	default: {
		int rc = t->teardown ? t->teardown(w) : 0;

		if (rc > 0)
			return true;
		if (rc < 0)
			w->ret = -1;
		finish_repeat(w, t, d);
		w->phase = 0;
		if (++w->repeat < (unsigned int)w->p->test_repeat_count)
			return true;
		d->time_us = (pl_now_ns() - w->t_test) / 1000 / (uint64_t)w->p->test_repeat_count;
		d->vt_us = (double)(pl_vt_now() - w->vt_test) / 1e6 / w->p->test_repeat_count;
		w->repeat = 0;
		w->pos++;
		return true;
	}
	}
}

static void tv_enter(void *ctx, unsigned int v)
{
	struct tv_run *r = ctx;

	pl_enter(r->m, v);
}

static void worker_init(struct tv_worker *w, const struct tv_params *p, uint64_t seed,
			unsigned int id)
{
	memset(w, 0, sizeof(*w));
	w->p = p;
	pl_rng_seed(&w->rng, seed * 1000003 + id);
	for (unsigned int i = 0; i < NTESTS; i++)
		w->order[i] = i;
	if (!p->sequential) {
		/* Sattolo's shuffle, j < i, as the kernel's shuffle_array(). */
		for (unsigned int i = NTESTS - 1; i > 0; i--) {
			unsigned int j = (unsigned int)pl_rng_below(&w->rng, i), tmp = w->order[i];

			w->order[i] = w->order[j];
			w->order[j] = tmp;
		}
	}
	w->start = get_cycles();
}

static void set_default(struct bench *b, const char *key, const char *val)
{
	if (param_str(b, key, NULL) || b->nr_params == BENCH_MAX_PARAMS)
		return;
	b->keys[b->nr_params] = key;
	b->vals[b->nr_params++] = val;
}

/* test_vmalloc.sh's templates: defaults the explicit parameters override. */
static int apply_template(struct bench *b)
{
	static char ncpus[16];
	const char *t = param_str(b, "template", NULL);

	if (!t)
		return 0;
	if (!strcmp(t, "performance")) {
		set_default(b, "sequential_test_order", "1");
		set_default(b, "test_repeat_count", "3");
	} else if (!strcmp(t, "smoke")) {
		set_default(b, "test_loop_count", "10000");
		set_default(b, "test_repeat_count", "10");
	} else if (!strcmp(t, "stress")) {
		snprintf(ncpus, sizeof(ncpus), "%ld", sysconf(_SC_NPROCESSORS_ONLN));
		set_default(b, "nr_threads", ncpus);
		set_default(b, "test_repeat_count", "20");
	} else {
		fprintf(stderr, "pagelab-bench: test_vmalloc: template=%s: performance, smoke or "
			"stress\n", t);
		return -1;
	}
	return 0;
}

/* One pass of every worker through every selected test; exits on bad threads=/slice=. */
static void run_pass(struct tv_run *r, const struct tv_params *p, unsigned int threads,
		     unsigned long slice, uint64_t seed)
{
	struct pl_vcpu_run run;

	for (unsigned int v = 0; v < p->nr_threads; v++)
		worker_init(&r->w[v], p, seed, v);
	run = (struct pl_vcpu_run){
		.nr_vcpus = p->nr_threads,
		.nr_threads = threads,
		.slice = slice,
		.enter = tv_enter,
		.step = tv_step,
		.ctx = r,
		.vt = r->m->vt,
	};
	if (pl_run_vcpus(&run)) {
		fprintf(stderr, "pagelab-bench: test_vmalloc: bad threads/slice\n");
		exit(2);
	}
}

/*
 * One design: boot, an optional untimed warm-up pass (warmup= loops of each
 * selected test, so first touches of host memory and the PCP and vmap
 * caches' first fill happen before timing), then the measured pass inside
 * harness slot @slot.
 */
static int run_design(struct bench *b, const struct tv_params *p, const char *design,
		      unsigned int vcpus, uint64_t seed, int slot)
{
	long host = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned int threads = (unsigned int)param_ulong(b, "threads",
		(unsigned long)min((long)p->nr_threads, host > 0 ? host : 1));
	unsigned long warmup = param_ulong(b, "warmup", 0), slice;
	struct tv_run r = { .p = p };
	unsigned long ev0[NR_PL_VM_EVENTS], ev1[NR_PL_VM_EVENTS];
	int failed = 0;

	threads = min(threads, min(p->nr_threads, (unsigned int)PL_MAX_VCPU_THREADS));
	if (!threads)
		threads = 1;
	slice = threads == p->nr_threads ? ~0UL : param_ulong(b, "slice", 64);
	r.m = bench_machine(b, design);
	r.w = calloc(p->nr_threads, sizeof(*r.w));
	if (!r.w)
		exit(1);
	if (warmup) {
		struct tv_params wp = *p;

		wp.test_loop_count = warmup;
		wp.test_repeat_count = 1;
		r.p = &wp;
		run_pass(&r, &wp, threads, slice, seed + 7919);
		pl_enter(r.m, 0);
		kvfree_rcu_barrier();
		pl_leave();
		r.p = p;
	}
	pl_events_sum(r.m, ev0);
	bench_vt_begin(r.m);
	bench_region_begin(b, slot);
	run_pass(&r, p, threads, slice, seed);
	bench_region_end(b, slot);
	bench_use_slot(b, slot);
	pl_enter(r.m, 0);
	pl_events_sum(r.m, ev1);
	/* vtime=1: operations = vmalloc-layer calls and page allocations of the pass */
	bench_vt_end(r.m, (double)(ev1[PL_EV_VMALLOC] + ev1[PL_EV_VFREE] + ev1[PL_EV_VM_MAP_RAM] +
				   ev1[PL_EV_PCPU_POPULATE_PAGES] + ev1[PL_EV_PGALLOC] -
				   ev0[PL_EV_VMALLOC] - ev0[PL_EV_VFREE] - ev0[PL_EV_VM_MAP_RAM] -
				   ev0[PL_EV_PCPU_POPULATE_PAGES] - ev0[PL_EV_PGALLOC]));
	kvfree_rcu_barrier();	/* the kernel's module exit waits for these too */
	if (vcpus > p->nr_threads)
		fprintf(b->out, "design=%s vcpus=%u\n", design, vcpus);
	else
		fprintf(b->out, "design=%s\n", design);
	for (unsigned int v = 0; v < p->nr_threads; v++) {
		struct tv_worker *w = &r.w[v];

		for (unsigned int i = 0; i < NTESTS; i++) {
			struct tv_result *d = &w->data[i];
			char test[160];

			if (!selected(p, i))
				continue;
			fprintf(b->out, "Summary: %s passed: %d failed: %d xfailed: %d repeat: %d "
				"loops: %lu avg: %llu usec\n", tests[i].name, d->passed, d->failed,
				d->xfailed, p->test_repeat_count, p->test_loop_count,
				(unsigned long long)d->time_us);
			failed |= d->failed;
			/* Fastpath's row label: l is test_loop_count whatever the test loops on */
			snprintf(test, sizeof(test), "%s: p:%u, h:%d, l:%lu", tests[i].name,
				 pages_of(p), p->use_huge, p->test_loop_count);
			if (p->nr_threads > 1)
				snprintf(test + strlen(test), sizeof(test) - strlen(test), ", worker %u",
					 v);
			bench_vt_set(d->vt_us);
			bench_emit(b, test, design, 0, (double)d->time_us, "vmalloc-test-usec", r.m);
		}
		fprintf(b->out, "All test took worker%u=%llu cycles\n", v,
			(unsigned long long)(w->stop - w->start));
	}
	free(r.w);
	bench_machine_destroy(r.m);
	return failed;
}

static int run(struct bench *b)
{
	const char *designs[MAX_DESIGNS];
	struct tv_params p;
	unsigned int vcpus;
	uint64_t seed;
	int nd, failed = 0;
	char vbuf[16];

	if (apply_template(b))
		return 2;
	nd = bench_designs(b, "v6.18", designs, MAX_DESIGNS);
	p.nr_threads = (unsigned int)param_ulong(b, "nr_threads", 0);
	p.nr_threads = p.nr_threads < 1 ? 1 : min(p.nr_threads, 65535U);	/* clamp(1, USHRT_MAX) */
	p.test_loop_count = param_ulong(b, "test_loop_count", 1000000);
	p.test_repeat_count = (int)param_ulong(b, "test_repeat_count", 1);
	if (!p.test_loop_count)
		p.test_loop_count = 1;
	if (p.test_repeat_count <= 0)
		p.test_repeat_count = 1;
	p.run_test_mask = (unsigned int)param_ulong(b, "run_test_mask", 7);
	p.nr_pages = (unsigned int)param_ulong(b, "nr_pages", 0);
	p.use_huge = param_ulong(b, "use_huge", 0) != 0;
	p.sequential = param_ulong(b, "sequential_test_order", 0) != 0;
	p.nr_pcpu_objects = param_ulong(b, "nr_pcpu_objects", 35000);
	seed = param_ulong(b, "seed", 1);
	if (!p.nr_pcpu_objects)
		p.nr_pcpu_objects = 1;
	if (p.nr_pages > (1U << 20)) {
		fprintf(stderr, "pagelab-bench: test_vmalloc: nr_pages=%u is too large\n",
			p.nr_pages);
		return 2;
	}
	/* vCPUs: at least one per worker. */
	vcpus = (unsigned int)param_ulong(b, "vcpus", p.nr_threads);
	if (vcpus < p.nr_threads) {
		fprintf(stderr, "pagelab-bench: test_vmalloc: vcpus=%u < nr_threads=%u\n", vcpus,
			p.nr_threads);
		return 2;
	}
	snprintf(vbuf, sizeof(vbuf), "%u", vcpus);
	set_default(b, "vcpus", vbuf);
	for (int d = 0; d < nd; d++)
		failed |= run_design(b, &p, designs[d], vcpus, seed, d);
	return failed ? 1 : 0;
}

const struct bench_suite suite_test_vmalloc = {
	.name = "test_vmalloc",
	.summary = "lib/test_vmalloc.c: every test by run_test_mask, workers as vCPUs, Summary lines",
	.keys = keys,
	.run = run,
};
