// SPDX-License-Identifier: MIT
/*
 * test_stress.c - concurrency stress: real threads, each entering the same
 * machine as its own vCPU, allocate and free blocks of mixed orders,
 * migratetypes and zones, vmalloc areas and percpu allocations, hand a
 * share of them to the other thread through a locked queue (so they are
 * freed on another CPU: its PCP, or the owner's with pcp_owner; another
 * vmap node; another CPU's percpu call), and now and then drain every
 * CPU's lists, purge the lazily freed vmalloc areas, decay pcp->high or
 * take and drop extra references, with allocations failed at random by
 * fault injection. The same work also runs as 64 vCPUs interleaved on 2
 * threads. Built under TSan by `make test` (build-tsan).
 *
 * What must hold:
 *  - no pfn is handed out twice at once: an atomic shadow bitmap of
 *    allocated pfns, set on allocation and cleared before the free (the
 *    pages under each vmalloc area included);
 *  - contents survive until the free: each block, area and percpu copy is
 *    stamped with a sequence number on allocation, checked when freed;
 *  - afterwards, with everything freed, purged and reclaimed: as many
 *    pages freed as allocated, the checker is clean, all memory is back in
 *    MAX_PAGE_ORDER blocks and the vmalloc space is one free area.
 *
 * PAGELAB_STRESS_OPS sets the operations per thread (default 1000000, 50000
 * under sanitizers), PAGELAB_STRESS_SECONDS a time cap per run
 * (default 20), PAGELAB_STRESS_SEED the seed (default 1).
 */
#include <pthread.h>
#include <stdio.h>
#include "helpers.h"

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

#define MEM (64 * MiB)
#define NR_PFNS (MEM / PAGE_SIZE)
#define LIVE 256
#define QUEUE 1024
#define NR_VCPUS_INTERLEAVED 64
#define MAX_WORKERS NR_VCPUS_INTERLEAVED

enum block_kind { BLOCK_PAGES, BLOCK_VMALLOC, BLOCK_PERCPU };

/* A page block (@page, @order), a vmalloc area (@addr, @order pages) or a percpu one (@addr, @order bytes). */
struct block {
	struct page *page;
	void *addr;
	enum block_kind kind;
	unsigned int order;
	uint64_t seq;
};

/* Blocks in flight from one thread to the other, under a mutex. */
struct handover {
	pthread_mutex_t lock;
	struct block q[QUEUE];
	unsigned int head, count;
};

struct worker {
	struct stress *s;
	unsigned int cpu;
	struct pl_rng rng;
	struct block live[LIVE];
	unsigned int nr_live;
	uint64_t seq;
	unsigned long ops, allocs, failed, frees, handed, taken, drains;
	unsigned long vallocs, pallocs, purges;
};

struct stress {
	struct pl_machine *m;
	struct handover hq;
	uint64_t *shadow;	/* one bit per pfn, set while allocated (atomics) */
	unsigned long max_ops;
	uint64_t deadline_ns;
	struct worker w[MAX_WORKERS];
};

static unsigned long env_ul(const char *name, unsigned long def)
{
	const char *v = getenv(name);

	return v && *v ? strtoul(v, NULL, 0) : def;
}

static void shadow_set(struct stress *s, unsigned long pfn, unsigned int order)
{
	for (unsigned long p = pfn; p < pfn + (1UL << order); p++) {
		uint64_t bit = 1ULL << (p % 64);

		if (__atomic_fetch_or(&s->shadow[p / 64], bit, __ATOMIC_RELAXED) & bit) {
			fprintf(stderr, "stress: pfn %#lx handed out twice\n", p);
			abort();
		}
	}
}

static void shadow_clear(struct stress *s, unsigned long pfn, unsigned int order)
{
	for (unsigned long p = pfn; p < pfn + (1UL << order); p++)
		__atomic_fetch_and(&s->shadow[p / 64], ~(1ULL << (p % 64)), __ATOMIC_RELAXED);
}

/* First and last words of the block: its pfn and sequence number. */
static void stamp(struct block *b)
{
	uint64_t *first = page_address(b->page);
	uint64_t *last = (uint64_t *)((char *)first + (PAGE_SIZE << b->order)) - 1;

	first[0] = page_to_pfn(b->page);
	first[1] = b->seq;
	*last = b->seq ^ 0x5a5a5a5a5a5a5a5aULL;
}

static void check_stamp(const struct block *b)
{
	const uint64_t *first = page_address(b->page);
	const uint64_t *last = (const uint64_t *)((const char *)first + (PAGE_SIZE << b->order)) - 1;

	if (first[0] != page_to_pfn(b->page) || first[1] != b->seq ||
	    *last != (b->seq ^ 0x5a5a5a5a5a5a5a5aULL)) {
		fprintf(stderr, "stress: pfn %#lx order %u: contents overwritten while allocated\n",
			page_to_pfn(b->page), b->order);
		abort();
	}
}

/*
 * The word at @off of a vmalloc area (through the page tables), or of
 * CPU @cpu's copy of a percpu allocation: written, or compared with @want.
 */
static void vword(void *addr, unsigned long off, uint64_t want, bool check)
{
	uint64_t got;

	if (!check) {
		if (vmalloc_write((char *)addr + off, &want, sizeof(want)))
			abort();
		return;
	}
	if (vmalloc_read(&got, (char *)addr + off, sizeof(got)) || got != want) {
		fprintf(stderr, "stress: %p + %#lx: contents overwritten while allocated\n", addr, off);
		abort();
	}
}

/* A vmalloc area: its first and last words. A percpu one: CPU 0's and the last CPU's copy. */
static void vstamp(struct stress *s, const struct block *b, bool check)
{
	if (b->kind == BLOCK_VMALLOC) {
		vword(b->addr, 0, b->seq, check);
		vword(b->addr, b->order * PAGE_SIZE - 8, ~b->seq, check);
		return;
	}
	vword(per_cpu_ptr(b->addr, 0), 0, b->seq, check);
	vword(per_cpu_ptr(b->addr, s->m->nr_cpus - 1), b->order - 8, ~b->seq, check);
}

/* The pages under a vmalloc area in the shadow bitmap. */
static void shadow_vmalloc(struct stress *s, const struct block *b, bool set)
{
	for (unsigned int i = 0; i < b->order; i++) {
		struct page *page = vmalloc_to_page((char *)b->addr + i * PAGE_SIZE);

		if (!page)
			abort();
		if (set)
			shadow_set(s, page_to_pfn(page), 0);
		else
			shadow_clear(s, page_to_pfn(page), 0);
	}
}

static void free_block(struct stress *s, struct worker *w, const struct block *b)
{
	switch (b->kind) {
	case BLOCK_VMALLOC:
		vstamp(s, b, true);
		shadow_vmalloc(s, b, false);
		if (vfree(b->addr))
			abort();
		break;
	case BLOCK_PERCPU:
		vstamp(s, b, true);
		if (free_percpu(b->addr))
			abort();
		break;
	default:
		check_stamp(b);
		shadow_clear(s, page_to_pfn(b->page), b->order);
		if (__free_pages(b->page, b->order))
			abort();
		break;
	}
	w->frees++;
}

/* Keep @b: in a free live slot, or in place of a random one, freed. */
static void keep_block(struct stress *s, struct worker *w, const struct block *b)
{
	if (w->nr_live == LIVE) {
		unsigned int i = (unsigned int)pl_rng_below(&w->rng, LIVE);

		free_block(s, w, &w->live[i]);
		w->live[i] = *b;
	} else {
		w->live[w->nr_live++] = *b;
	}
}

/* A vmalloc area of 1-16 pages, or a percpu allocation of 8-512 bytes. */
static void alloc_virtual(struct stress *s, struct worker *w, bool percpu)
{
	struct block b = { .kind = percpu ? BLOCK_PERCPU : BLOCK_VMALLOC, .seq = ++w->seq };

	if (percpu) {
		b.order = 8 * (1 + (unsigned int)pl_rng_below(&w->rng, 64));
		b.addr = __alloc_percpu_gfp(b.order, 8, GFP_KERNEL | __GFP_NOWARN);
	} else {
		b.order = 1 + (unsigned int)pl_rng_below(&w->rng, 16);
		b.addr = __vmalloc(b.order * PAGE_SIZE, GFP_KERNEL | __GFP_NOWARN);
	}
	if (!b.addr) {
		w->failed++;
		return;
	}
	if (percpu) {
		w->pallocs++;
	} else {
		shadow_vmalloc(s, &b, true);
		w->vallocs++;
	}
	vstamp(s, &b, false);
	w->allocs++;
	keep_block(s, w, &b);
}

static void alloc_block(struct stress *s, struct worker *w)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_ATOMIC, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_DMA32,
				      GFP_KERNEL | __GFP_COMP, GFP_NOWAIT | __GFP_ZERO };
	unsigned int order = pl_rng_below(&w->rng, 8) ? (unsigned int)pl_rng_below(&w->rng, 4)
						      : (unsigned int)pl_rng_below(&w->rng, 11);
	gfp_t gfp = gfps[pl_rng_below(&w->rng, ARRAY_SIZE(gfps))] | __GFP_NOWARN;
	struct block b = { .page = alloc_pages(gfp, order), .order = order, .seq = ++w->seq };

	if (!b.page) {
		w->failed++;
		return;
	}
	shadow_set(s, page_to_pfn(b.page), order);
	if (gfp & __GFP_ZERO) {
		const uint64_t *p = page_address(b.page);

		for (size_t i = 0; i < (PAGE_SIZE << order) / sizeof(*p); i += 61)
			if (p[i])
				abort();
	}
	stamp(&b);
	w->allocs++;
	keep_block(s, w, &b);
}

static bool handover_push(struct handover *h, const struct block *b)
{
	bool ok;

	pthread_mutex_lock(&h->lock);
	ok = h->count < QUEUE;
	if (ok)
		h->q[(h->head + h->count++) % QUEUE] = *b;
	pthread_mutex_unlock(&h->lock);
	return ok;
}

static bool handover_pop(struct handover *h, struct block *b)
{
	bool ok;

	pthread_mutex_lock(&h->lock);
	ok = h->count > 0;
	if (ok) {
		*b = h->q[h->head];
		h->head = (h->head + 1) % QUEUE;
		h->count--;
	}
	pthread_mutex_unlock(&h->lock);
	return ok;
}

/* One operation of @w, on the vCPU the calling thread has entered. */
static void do_op(struct stress *s, struct worker *w)
{
	unsigned int r = (unsigned int)pl_rng_below(&w->rng, 1000);
	struct block b;

	w->ops++;
	if (r < 40) {
		alloc_virtual(s, w, false);
	} else if (r < 55) {
		alloc_virtual(s, w, true);
	} else if (r < 450 || !w->nr_live) {
		alloc_block(s, w);
	} else if (r < 800) {
		unsigned int i = (unsigned int)pl_rng_below(&w->rng, w->nr_live);

		free_block(s, w, &w->live[i]);
		w->live[i] = w->live[--w->nr_live];
	} else if (r < 900) {
		/* Hand the block to whoever pops it: freed on another CPU. */
		unsigned int i = (unsigned int)pl_rng_below(&w->rng, w->nr_live);

		if (handover_push(&s->hq, &w->live[i])) {
			w->live[i] = w->live[--w->nr_live];
			w->handed++;
		}
	} else if (r < 990) {
		if (handover_pop(&s->hq, &b)) {
			free_block(s, w, &b);
			w->taken++;
		}
	} else if (r < 994) {
		/* An extra reference taken and dropped: the block stays ours. */
		struct block *l = &w->live[pl_rng_below(&w->rng, w->nr_live)];

		if (l->kind == BLOCK_PAGES) {
			get_page(l->page);
			if (put_page(l->page))
				abort();
		}
	} else if (r < 995) {
		vm_unmap_aliases();	/* purge the lazy areas: every CPU's vfrees, one flush */
		w->purges++;
	} else if (r < 997) {
		pl_vmstat_tick();
	} else if (r < 999) {
		drain_local_pages(NULL);
	} else {
		drain_all_pages(NULL); /* every CPU's lists, under their locks */
		w->drains++;
	}
}

static void worker_free_all(struct stress *s, struct worker *w)
{
	while (w->nr_live)
		free_block(s, w, &w->live[--w->nr_live]);
}

static bool out_of_time(const struct stress *s)
{
	return pl_now_ns() > s->deadline_ns;
}

static void *thread_fn(void *arg)
{
	struct worker *w = arg;
	struct stress *s = w->s;

	if (pl_enter(s->m, w->cpu))
		abort();
	for (unsigned long i = 0; i < s->max_ops; i++) {
		do_op(s, w);
		if (i % 1024 == 0 && out_of_time(s))
			break;
	}
	worker_free_all(s, w);
	pl_leave();
	return NULL;
}

static void vcpu_enter(void *ctx, unsigned int vcpu)
{
	pl_enter(((struct stress *)ctx)->m, vcpu);
}

static bool vcpu_step(void *ctx, unsigned int vcpu)
{
	struct stress *s = ctx;
	struct worker *w = &s->w[vcpu];

	if (w->ops >= s->max_ops || (w->ops % 256 == 0 && out_of_time(s))) {
		worker_free_all(s, w);
		return false;
	}
	do_op(s, w);
	return true;
}

/*
 * Run @threads real threads (interleaved: @vcpus vCPUs over them) on a
 * fresh machine of @design, then free everything and check the machine.
 */
static void run(const char *design, bool pcp_disabled, unsigned int vcpus, unsigned int threads,
		unsigned int fail_probability)
{
	static struct stress s;
	unsigned long ev[NR_PL_VM_EVENTS], ops = 0, allocs = 0, failed = 0, frees = 0,
		handed = 0, taken = 0, drains = 0, vallocs = 0, pallocs = 0, purges = 0;
	struct pl_vmalloc_stats vst;
	struct pl_percpu_stats pst;
	struct pl_config cfg;
	struct block b;
	uint64_t t0 = pl_now_ns(), seed = env_ul("PAGELAB_STRESS_SEED", 1);

	memset(&s, 0, sizeof(s));
	pthread_mutex_init(&s.hq.lock, NULL);
	s.shadow = calloc(NR_PFNS / 64, sizeof(uint64_t));
	assert_non_null(s.shadow);
	s.max_ops = env_ul("PAGELAB_STRESS_OPS", SANITIZED ? 50000 : 1000000);
	if (vcpus > threads)
		s.max_ops = s.max_ops * threads / vcpus;
	s.deadline_ns = t0 + env_ul("PAGELAB_STRESS_SECONDS", 20) * 1000000000ull;

	pl_config_default(&cfg);
	cfg.mem_bytes = MEM;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = vcpus;
	cfg.pcp_disabled = pcp_disabled;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	s.m = pl_machine_create(&cfg);
	assert_non_null(s.m);
	if (fail_probability) {
		struct pl_fault_attr a;

		pl_fault_attr_default(&a);
		a.probability = fail_probability;
		a.times = -1;
		a.min_order = 0;
		a.ignore_gfp_reclaim = false;
		a.verbose = 0;
		a.seed = seed;
		assert_int_equal(pl_fail_page_alloc_set(s.m, &a), 0);
	}
	for (unsigned int c = 0; c < vcpus; c++) {
		s.w[c].s = &s;
		s.w[c].cpu = c;
		pl_rng_seed(&s.w[c].rng, seed * 1000 + c);
	}

	if (vcpus == threads) {
		pthread_t tid[MAX_WORKERS];

		for (unsigned int t = 0; t < threads; t++)
			assert_int_equal(pthread_create(&tid[t], NULL, thread_fn, &s.w[t]), 0);
		for (unsigned int t = 0; t < threads; t++)
			pthread_join(tid[t], NULL);
	} else {
		struct pl_vcpu_run r = { .nr_vcpus = vcpus, .nr_threads = threads, .slice = 5,
					 .enter = vcpu_enter, .step = vcpu_step, .ctx = &s };

		assert_int_equal(pl_run_vcpus(&r), 0);
	}

	pl_enter(s.m, 0);
	while (handover_pop(&s.hq, &b))
		free_block(&s, &s.w[0], &b);
	for (unsigned int c = 0; c < vcpus; c++) {
		ops += s.w[c].ops;
		allocs += s.w[c].allocs;
		failed += s.w[c].failed;
		frees += s.w[c].frees;
		handed += s.w[c].handed;
		taken += s.w[c].taken;
		drains += s.w[c].drains;
		vallocs += s.w[c].vallocs;
		pallocs += s.w[c].pallocs;
		purges += s.w[c].purges;
	}
	printf("stress %-9s%s %2u vCPUs on %u threads: %lu ops in %.2f s: %lu allocs (%lu vmalloc, "
	       "%lu percpu, %lu failed), %lu frees, %lu handed over, %lu freed by the other side, "
	       "%lu drain_all_pages, %lu purges\n",
	       design, pcp_disabled ? " pcp=0" : "", vcpus, threads, ops,
	       (double)(pl_now_ns() - t0) / 1e9, allocs, vallocs, pallocs, failed, frees, handed,
	       taken, drains, purges);
	assert_true(allocs > 0 && taken > 0 && vallocs > 0 && pallocs > 0);
	assert_int_equal(allocs, frees);
	for (unsigned long i = 0; i < NR_PFNS / 64; i++)
		assert_int_equal(s.shadow[i], 0);
	assert_int_equal(pl_check_machine(s.m), 0);

	/* Empty chunks go, lazy areas are purged, empty page tables trimmed. */
	pl_percpu_reclaim(s.m);
	vm_unmap_aliases();
	pl_vmalloc_purge(s.m);
	pl_vmalloc_trim_pgtables(s.m);
	pl_vmalloc_stats(s.m, &vst);
	pl_percpu_stats(s.m, &pst);
	assert_int_equal(pst.nr_chunks, 0);
	assert_int_equal(vst.nr_busy + vst.nr_lazy + vst.nr_pooled, 0);
	assert_int_equal(vst.nr_free, 1);	/* the space is one free area again */
	assert_int_equal(vst.vmalloc_pages + vst.pgtable_pages, 0);
	pl_events_sum(s.m, ev);
	assert_int_equal(ev[PL_EV_PGALLOC_PAGES], ev[PL_EV_PGFREE_PAGES]);
	assert_int_equal(pl_check_machine(s.m), 0);
	assert_fully_coalesced(s.m);
	test_machine_done(s.m);
	free(s.shadow);
	pthread_mutex_destroy(&s.hq.lock);
}

static void test_two_threads_baseline(void **state)
{
	(void)state;
	run("v6.18", false, 2, 2, 0);
}

static void test_two_threads_pcp_owner(void **state)
{
	(void)state;
	run("pcp-owner", false, 2, 2, 0);
}

static void test_two_threads_all_with_failures(void **state)
{
	(void)state;
	run("all", false, 2, 2, 5);
}

static void test_two_threads_no_pcp(void **state)
{
	(void)state;
	run("mt-counts", true, 2, 2, 0);
}

/* The pagelab-own designs (pagelab's own switches), one at a time and composed. */
static void test_two_threads_reviewers_designs(void **state)
{
	(void)state;
	run("pcp-premerge", false, 2, 2, 0);
	run("targeted-drain", false, 2, 2, 5);
	run("block-economy", false, 2, 2, 5);
	run("block-economy+batch", false, 2, 2, 5);
	run("block-economy+ramp", false, 2, 2, 5);
	run("pcp-owner+targeted-drain", false, 2, 2, 0);
}

static void test_interleaved_64_vcpus(void **state)
{
	(void)state;
	run("v6.18", false, NR_VCPUS_INTERLEAVED, 2, 0);
	run("pcp-owner", false, NR_VCPUS_INTERLEAVED, 2, 5);
	/* many owners: the block economy steals between vCPUs on two threads */
	run("block-economy", false, NR_VCPUS_INTERLEAVED, 2, 0);
	run("block-economy+batch", false, NR_VCPUS_INTERLEAVED, 2, 0);
	run("block-economy+ramp", false, NR_VCPUS_INTERLEAVED, 2, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_threads_baseline),
		cmocka_unit_test(test_two_threads_pcp_owner),
		cmocka_unit_test(test_two_threads_all_with_failures),
		cmocka_unit_test(test_two_threads_no_pcp),
		cmocka_unit_test(test_two_threads_reviewers_designs),
		cmocka_unit_test(test_interleaved_64_vcpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
