// SPDX-License-Identifier: MIT
/*
 * pcp_workloads.c - seed 003's workloads on many vCPUs:
 *
 *  alloc_many_free_few  jemalloc/tcmalloc: most vCPUs fault pages in and
 *                       hand them to a shared cache; a few purger vCPUs
 *                       (one in eight) give them back in batches.
 *  exit_avalanche       vCPU 0 builds a process of exit_pages pages and
 *                       frees it all at once, over and over, while the
 *                       other vCPUs churn small working sets.
 *  kbuild               every vCPU allocates order-0..3 blocks of all three
 *                       types with random lifetimes (most short, some long);
 *                       whoever runs when a lifetime ends frees the block.
 *  alloc_one_free_many  the seed 003 thread's worst case for
 *                       ownership: vCPU 0 allocates every page and hands
 *                       them round-robin to all the other vCPUs, which free
 *                       them (under pcp_owner every free routes to vCPU 0).
 *  hugetlb_1g           kbuild's churn on every vCPU until `ops`,
 *                       then, while vCPUs 1.. keep churning, vCPU 0 tries
 *                       alloc_contig_range() on every 1 GiB-aligned range
 *                       of the zones, as a hugetlb 1 GiB allocation does
 *                       (alloc_contig_pages()); the ranges it gets stay
 *                       allocated (the hugetlb pool) until the run ends.
 *
 * Each runs for `ops` page operations (allocated + freed pages) on every
 * vCPU count of `vcpus` and every design of `design`, on `threads` threads
 * (1: deterministic interleaving, see src/base/vcpu.c). Reported per run:
 * throughput, zone->lock acquisitions per million page operations, pages
 * moved per acquisition, lock hold time (lock_stat), PCP hit rate, frees of
 * pages another vCPU allocated, merges under zone->lock and under
 * pcp->lock, and fragmentation at the end (after drain_all_pages, with the
 * workload's live blocks still allocated): wholly free pageblocks, the
 * unusable free space index for pageblock order, how many order-9
 * allocations then succeed (allocated until one fails, then freed), and
 * what 1 GiB alloc_contig_range() gets (every aligned range tried once;
 * hugetlb_1g reports its own attempts during the churn instead): ranges
 * won, wall time per attempt, zone->lock acquisitions and pages moved under
 * zone->lock per attempt. gig_probe=N tries only the first N ranges after
 * the run (0: none; hugetlb_1g ignores it).
 *
 * Simulated time: each vCPU runs its vmstat tick (pl_vmstat_tick():
 * decay_pcp_high(), and kswapd's run if it was woken) every `tick_ops`
 * page operations of its own (default 100,000; 0: never), the kernel's
 * once-a-second refresh_cpu_vm_stats at 100,000 page allocations and
 * frees per CPU-second, the order of a parallel kernel build's rate
 * (pgalloc + pgfree per CPU per second). pcp->high then decays as it does
 * in the kernel between bursts.
 */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_RUNS 8

struct blk {
	struct page *page;
	unsigned char order;
	unsigned short cpu;	/* who allocated it */
};

struct blkvec {
	struct blk *v;
	unsigned long n, cap;
};

static void vec_push(struct blkvec *q, struct blk b)
{
	if (q->n == q->cap) {
		q->cap = q->cap ? q->cap * 2 : 64;
		q->v = realloc(q->v, q->cap * sizeof(*q->v));
		if (!q->v)
			abort();
	}
	q->v[q->n++] = b;
}

enum wl_kind { WL_AMFF, WL_EXIT, WL_KBUILD, WL_A1FM, WL_HUGETLB };

/* 1 GiB in pages: a hugetlb gigantic page */
#define GIG_PAGES	((1UL << 30) >> PAGE_SHIFT)

/* What 1 GiB alloc_contig_range() attempts got and cost. */
struct contig_stats {
	unsigned long tried, won, ns, zlock, zlock_pages;
};

struct wl {
	enum wl_kind kind;
	struct pl_machine *m;
	unsigned int nr_vcpus, nr_purgers, purge_batch;
	unsigned long target, exit_pages;
	pthread_mutex_t lock;		/* protects everything below with threads > 1 */
	unsigned long ops, cross_frees, tick;
	unsigned long tick_ops;		/* vmstat tick every tick_ops page ops of a vCPU */
	unsigned long *vcpu_ops;	/* [nr_vcpus]: page ops since its last tick */
	struct pl_rng *rng;		/* [nr_vcpus], each vCPU's own */
	struct blkvec shared;		/* alloc_many_free_few's cache (FIFO via head) */
	unsigned long shared_head;
	struct blkvec *own;		/* [nr_vcpus]: exit/kbuild working sets */
	struct blkvec *wheel;		/* kbuild: blocks by expiry tick */
	unsigned long wheel_size;
	bool exiting;			/* exit_avalanche: vCPU 0 is freeing */
	unsigned long a1fm_next;	/* alloc_one_free_many: next freer to hand to */
	/* hugetlb_1g: the next range to try, the ranges won, what they cost */
	unsigned long contig_pfn;
	int contig_zone;		/* zone index being scanned, -1: done */
	unsigned long *gigs;		/* first pfns of the 1 GiB ranges won */
	struct contig_stats contig;
};

static void wl_free(struct wl *w, struct blk b, unsigned int vcpu)
{
	if (__free_pages(b.page, b.order))
		abort();
	w->ops += 1UL << b.order;
	w->cross_frees += b.cpu != vcpu;
}

static bool wl_alloc(struct wl *w, unsigned int vcpu, gfp_t gfp, unsigned int order, struct blk *out)
{
	struct page *page = alloc_pages(gfp | __GFP_NOWARN, order);

	if (!page)
		return false;
	w->ops += 1UL << order;
	*out = (struct blk){ page, (unsigned char)order, (unsigned short)vcpu };
	return true;
}

static bool step_amff(struct wl *w, unsigned int vcpu)
{
	struct blk b;

	if (vcpu < w->nr_vcpus - w->nr_purgers) {
		if (w->ops >= w->target)
			return false;
		/* Bounded cache: an allocator waits while the purgers catch up. */
		if (w->shared.n - w->shared_head < (1UL << 16) &&
		    wl_alloc(w, vcpu, GFP_HIGHUSER_MOVABLE, 0, &b))
			vec_push(&w->shared, b);
		return true;
	}
	/* A purger returns its share of what the allocators produced. */
	for (unsigned int i = 0; i < w->purge_batch; i++) {
		if (w->shared_head == w->shared.n)
			return w->ops < w->target;
		wl_free(w, w->shared.v[w->shared_head++], vcpu);
	}
	if (w->shared_head == w->shared.n) {
		w->shared.n = w->shared_head = 0;
	}
	return true;
}

static bool step_exit(struct wl *w, unsigned int vcpu)
{
	struct blkvec *own = &w->own[vcpu];
	struct blk b;

	if (w->ops >= w->target) {
		while (own->n)
			wl_free(w, own->v[--own->n], vcpu);
		return false;
	}
	if (vcpu == 0) {
		/*
		 * Grow to exit_pages; a machine too small for that ends the
		 * growth early (the OOM killer's exit), else nothing would
		 * ever be freed and the run would never reach its target.
		 */
		if (own->n < w->exit_pages && wl_alloc(w, vcpu, GFP_HIGHUSER_MOVABLE, 0, &b)) {
			vec_push(own, b);
		} else {
			/* exit: the whole address space goes in one go */
			while (own->n)
				wl_free(w, own->v[--own->n], vcpu);
		}
		return true;
	}
	if (own->n >= 64) {
		wl_free(w, own->v[0], vcpu);
		memmove(own->v, own->v + 1, --own->n * sizeof(*own->v));
	}
	if (wl_alloc(w, vcpu, GFP_HIGHUSER_MOVABLE, 0, &b))
		vec_push(own, b);
	return true;
}

static bool step_kbuild(struct wl *w, unsigned int vcpu)
{
	struct pl_rng *rng = &w->rng[vcpu];
	struct blkvec *due;
	unsigned long life;
	uint64_t r = pl_rng_below(rng, 100), t = pl_rng_below(rng, 100);
	unsigned int order = r < 70 ? 0 : r < 85 ? 1 : r < 95 ? 2 : 3;
	gfp_t gfp = t < 60 ? GFP_HIGHUSER_MOVABLE : t < 90 ? GFP_KERNEL : GFP_KERNEL | __GFP_RECLAIMABLE;
	struct blk b;

	if (w->ops >= w->target)
		return false;
	w->tick++;
	due = &w->wheel[w->tick % w->wheel_size];
	while (due->n)
		wl_free(w, due->v[--due->n], vcpu);
	life = pl_rng_below(rng, 100) < 80 ? 1 + pl_rng_below(rng, 256)
					   : 256 + pl_rng_below(rng, w->wheel_size - 256);
	if (wl_alloc(w, vcpu, gfp, order, &b))
		vec_push(&w->wheel[(w->tick + life) % w->wheel_size], b);
	return true;
}

/*
 * alloc_one_free_many: vCPU 0 allocates one page for each other vCPU per
 * step and queues it on that vCPU's list; a freer frees its whole queue
 * when it runs. The allocator waits while a freer is 64 pages behind.
 */
static bool step_a1fm(struct wl *w, unsigned int vcpu)
{
	struct blkvec *own = &w->own[vcpu];
	struct blk b;

	if (vcpu == 0) {
		if (w->ops >= w->target)
			return false;
		if (w->nr_vcpus == 1) {	/* nobody to hand to: free it here */
			if (wl_alloc(w, 0, GFP_HIGHUSER_MOVABLE, 0, &b))
				wl_free(w, b, 0);
			return true;
		}
		for (unsigned int i = 1; i < w->nr_vcpus; i++) {
			unsigned int to = 1 + (unsigned int)(w->a1fm_next++ % (w->nr_vcpus - 1));

			if (w->own[to].n >= 64)
				break;
			if (!wl_alloc(w, 0, GFP_HIGHUSER_MOVABLE, 0, &b))
				break;
			vec_push(&w->own[to], b);
		}
		return true;
	}
	while (own->n)
		wl_free(w, own->v[--own->n], vcpu);
	return w->ops < w->target;
}

/*
 * One hugetlb 1 GiB allocation: alloc_contig_range() on [@pfn, @pfn + 1 GiB),
 * timed, with the zone->lock acquisitions and pages moved under it that it
 * cost. Context: @m entered; nothing else runs on it (the caller's lock).
 */
static bool try_gig(struct pl_machine *m, unsigned long pfn, struct contig_stats *cs)
{
	unsigned long ev0[NR_PL_VM_EVENTS], ev1[NR_PL_VM_EVENTS];
	struct pl_lock_stat ls0, ls1;
	uint64_t t0;
	int ret;

	pl_events_sum(m, ev0);
	bench_zone_lock_stat(m, &ls0);
	t0 = pl_now_ns();
	ret = alloc_contig_range(pfn, pfn + GIG_PAGES, GFP_HIGHUSER_MOVABLE | __GFP_NOWARN);
	cs->ns += pl_now_ns() - t0;
	pl_events_sum(m, ev1);
	bench_zone_lock_stat(m, &ls1);
	cs->tried++;
	cs->zlock += ls1.acquisitions - ls0.acquisitions;
	cs->zlock_pages += ev1[PL_EV_ZONE_LOCK_PAGES] - ev0[PL_EV_ZONE_LOCK_PAGES];
	if (ret)
		return false;
	cs->won++;
	return true;
}

/*
 * The next 1 GiB-aligned range wholly inside a zone at or after
 * @w->contig_pfn, highest zone first (as the zonelist of a movable
 * allocation). Return: false when every range has been handed out.
 */
static bool next_gig(struct wl *w, unsigned long *pfn)
{
	for (; w->contig_zone >= 0; w->contig_zone--) {
		struct zone *zone = &w->m->node_zones[w->contig_zone];
		unsigned long start;

		if (!populated_zone(zone))
			continue;
		start = (max(w->contig_pfn, zone->zone_start_pfn) + GIG_PAGES - 1) & ~(GIG_PAGES - 1);
		if (start + GIG_PAGES <= zone_end_pfn(zone)) {
			*pfn = start;
			w->contig_pfn = start + GIG_PAGES;
			return true;
		}
		w->contig_pfn = 0;
	}
	return false;
}

/*
 * hugetlb_1g: kbuild's churn on every vCPU; once `ops` page operations are
 * done, vCPU 0 tries one 1 GiB range per step while the others go on.
 */
static bool step_hugetlb(struct wl *w, unsigned int vcpu)
{
	unsigned long pfn;

	if (w->contig_zone < 0)
		return false;
	if (vcpu != 0 || w->ops < w->target) {
		unsigned long target = w->target;
		bool more;

		w->target = ~0UL;	/* the background churn outlasts the attempts */
		more = step_kbuild(w, vcpu);
		w->target = target;
		return more;
	}
	if (!next_gig(w, &pfn)) {
		w->contig_zone = -1;
		return false;
	}
	if (try_gig(w->m, pfn, &w->contig))
		w->gigs[w->contig.won - 1] = pfn;
	return true;
}

static void wl_enter(void *ctx, unsigned int vcpu)
{
	struct wl *w = ctx;

	pl_enter(w->m, vcpu);
}

static bool wl_step(void *ctx, unsigned int vcpu)
{
	struct wl *w = ctx;
	bool more;

	unsigned long before;

	pthread_mutex_lock(&w->lock);
	before = w->ops;
	switch (w->kind) {
	case WL_AMFF:
		more = step_amff(w, vcpu);
		break;
	case WL_EXIT:
		more = step_exit(w, vcpu);
		break;
	case WL_A1FM:
		more = step_a1fm(w, vcpu);
		break;
	case WL_HUGETLB:
		more = step_hugetlb(w, vcpu);
		break;
	default:
		more = step_kbuild(w, vcpu);
		break;
	}
	/* this vCPU's simulated second is over: its vmstat tick */
	w->vcpu_ops[vcpu] += w->ops - before;
	if (w->tick_ops && w->vcpu_ops[vcpu] >= w->tick_ops) {
		w->vcpu_ops[vcpu] -= w->tick_ops;
		pl_vmstat_tick();
	}
	pthread_mutex_unlock(&w->lock);
	return more;
}

struct wl_result {
	double mops, zlock_per_mop, pages_per_zlock, hold_ns_per_op, pcp_hit_pct;
	unsigned long cross_frees, merge_zone, merge_pcp, free_blocks, remote_frees;
	unsigned long zlock, zlock_pages, order9_ok;
	unsigned long premerge[6];	/* pcp_premerge's lookups and why they failed */
	unsigned int unusable9;
	struct contig_stats contig;
};

/*
 * After the run: order-9 allocations until one fails (a THP's order; each
 * may take the slow path's drain and fallback as in use), then all freed
 * and the PCPs drained. Return: how many succeeded. Context: @m entered.
 */
static unsigned long probe_order9(struct pl_machine *m)
{
	struct blkvec got = { 0 };
	struct blk b;
	unsigned long n;

	for (;;) {
		struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, pageblock_order);

		if (!page)
			break;
		b = (struct blk){ page, (unsigned char)pageblock_order, 0 };
		vec_push(&got, b);
	}
	n = got.n;
	while (got.n)
		if (__free_pages(got.v[--got.n].page, pageblock_order))
			abort();
	free(got.v);
	drain_all_pages(NULL);
	(void)m;
	return n;
}

static void set_param(struct bench *b, const char *key, const char *val)
{
	for (int i = 0; i < b->nr_params; i++) {
		if (!strcmp(b->keys[i], key)) {
			b->vals[i] = val;
			return;
		}
	}
	b->keys[b->nr_params] = key;
	b->vals[b->nr_params++] = val;
}

static void run_one(struct bench *b, enum wl_kind kind, const char *design, unsigned int nr_vcpus,
		    struct wl_result *res)
{
	struct bench vb = *b;
	char vc[16];
	struct pl_machine *m;
	struct wl w = { .kind = kind, .nr_vcpus = nr_vcpus };
	struct pl_vcpu_run run;
	unsigned long ev[NR_PL_VM_EVENTS], page_ops;
	struct pl_lock_stat ls;
	uint64_t seed = param_ulong(b, "seed", 1), ns;
	struct zone *zone;

	/* The machine gets this run's vCPU count; lock_stat is on unless asked off. */
	snprintf(vc, sizeof(vc), "%u", nr_vcpus);
	set_param(&vb, "vcpus", vc);
	set_param(&vb, "lock_stat", param_str(b, "lock_stat", "1"));
	m = bench_machine(&vb, design);
	w.m = m;
	w.target = param_ulong(b, "ops", 2000000);
	w.exit_pages = param_ulong(b, "exit_pages", 32768);
	w.nr_purgers = nr_vcpus >= 8 ? nr_vcpus / 8 : 1;
	w.purge_batch = (nr_vcpus - w.nr_purgers + w.nr_purgers - 1) / w.nr_purgers;
	if (!w.purge_batch)
		w.purge_batch = 1;
	w.wheel_size = 4096;
	w.tick_ops = param_ulong(b, "tick_ops", 100000);
	w.vcpu_ops = calloc(nr_vcpus, sizeof(*w.vcpu_ops));
	pthread_mutex_init(&w.lock, NULL);
	w.rng = calloc(nr_vcpus, sizeof(*w.rng));
	w.own = calloc(nr_vcpus, sizeof(*w.own));
	w.wheel = calloc(w.wheel_size, sizeof(*w.wheel));
	w.contig_zone = ZONE_NORMAL;
	w.gigs = calloc(m->max_pfn / GIG_PAGES + 1, sizeof(*w.gigs));
	if (!w.vcpu_ops || !w.rng || !w.own || !w.wheel || !w.gigs)
		abort();
	for (unsigned int v = 0; v < nr_vcpus; v++)
		pl_rng_seed(&w.rng[v], seed * 1000003 + v);

	run = (struct pl_vcpu_run){
		.nr_vcpus = nr_vcpus,
		.nr_threads = (unsigned int)min(param_ulong(b, "threads", 1), nr_vcpus),
		.slice = param_ulong(b, "slice", 32),
		.enter = wl_enter,
		.step = wl_step,
		.ctx = &w,
		.vt = m->vt,	/* vtime=1: earliest virtual clock first, one thread */
	};
	bench_vt_begin(m);
	bench_slot_clear(&vb, 0);
	bench_region_begin(&vb, 0);
	if (pl_run_vcpus(&run)) {
		fprintf(stderr, "pagelab-bench: bad threads/slice\n");
		exit(2);
	}
	ns = bench_region_end(&vb, 0);
	/* back to the caller's run: the next design's dump gets a new generation */
	b->minflt_in = vb.minflt_in;
	b->slots[0] = vb.slots[0];

	pl_enter(m, 0);
	pl_events_sum(m, ev);
	bench_zone_lock_stat(m, &ls);
	page_ops = ev[PL_EV_PGALLOC_PAGES] + ev[PL_EV_PGFREE_PAGES];
	bench_vt_end(m, (double)page_ops);
	res->mops = (double)page_ops / ((double)ns / 1e9) / 1e6;
	res->zlock_per_mop = (double)ls.acquisitions * 1e6 / (double)page_ops;
	res->pages_per_zlock = ls.acquisitions ? (double)ev[PL_EV_ZONE_LOCK_PAGES] / (double)ls.acquisitions : 0;
	res->hold_ns_per_op = (double)ls.hold_ns / (double)page_ops;
	res->pcp_hit_pct = 100.0 * (double)ev[PL_EV_PCP_HIT] /
			   (double)max(1UL, ev[PL_EV_PCP_HIT] + ev[PL_EV_PCP_MISS] + ev[PL_EV_PCP_DEGRADE]);
	res->cross_frees = w.cross_frees;
	res->remote_frees = ev[PL_EV_PCP_REMOTE_FREE];
	res->merge_zone = ev[PL_EV_BUDDY_MERGE];
	res->merge_pcp = ev[PL_EV_PCP_MERGE];
	res->zlock = ls.acquisitions;
	for (int i = 0; i < 6; i++)
		res->premerge[i] = ev[PL_EV_PCP_PREMERGE_TRY + i];
	res->zlock_pages = ev[PL_EV_ZONE_LOCK_PAGES];

	/* Fragmentation with the live set still allocated. */
	drain_all_pages(NULL);
	zone = &m->node_zones[ZONE_NORMAL];
	if (!populated_zone(zone))
		zone = &m->node_zones[ZONE_DMA32];
	res->free_blocks = pl_free_pageblocks(zone);
	res->unusable9 = pl_unusable_free_index(zone, pageblock_order);
	res->order9_ok = probe_order9(m);
	/* 1 GiB ranges: hugetlb_1g has tried them under churn; the others now. */
	if (kind != WL_HUGETLB) {
		unsigned long pfn, left = param_ulong(b, "gig_probe", ~0UL);

		w.contig_zone = ZONE_NORMAL;
		w.contig_pfn = 0;
		while (left-- && next_gig(&w, &pfn))
			if (try_gig(m, pfn, &w.contig))
				w.gigs[w.contig.won - 1] = pfn;
	}
	res->contig = w.contig;
	for (unsigned long i = 0; i < w.contig.won; i++)
		if (free_contig_range(w.gigs[i], GIG_PAGES))
			abort();
	free(w.gigs);

	/* One record per figure, the vCPU count in the name and in params. */
	{
		static const char *const names[] = {
			"throughput", "zone-lock-per-Mop", "pages-per-zone-lock", "free-pageblocks",
			"unusable-index-9", "zone-lock", "zone-lock-pages", "merges-zone",
			"merges-pcp", "order9-allocs", "contig-1g-tried", "contig-1g-won",
			"contig-1g-us", "contig-1g-zone-lock", "contig-1g-zone-lock-pages" };
		/* the registry's metric of each (src/machine/metric.c) */
		static const char *const metrics[] = {
			"throughput", "zone-lock-per-Mop", "pages-per-zone-lock", "free-pageblocks",
			"unusable-index-9", "zone-lock", "zone-lock-pages", "merges-zone",
			"merges-pcp", "order9-allocs", "contig-1g-tried", "contig-1g-won",
			"contig-1g-us", "contig-1g-zone-lock", "contig-1g-zone-lock-pages" };
		const struct contig_stats *cs = &res->contig;
		bool design_premerge = m->config.design.pcp_premerge;
		double vals[] = { res->mops, res->zlock_per_mop, res->pages_per_zlock,
				  (double)res->free_blocks, res->unusable9 / 1000.0,
				  (double)res->zlock, (double)res->zlock_pages,
				  (double)res->merge_zone, (double)res->merge_pcp,
				  (double)res->order9_ok, (double)cs->tried, (double)cs->won,
				  cs->tried ? (double)cs->ns / 1e3 / (double)cs->tried : 0,
				  cs->tried ? (double)cs->zlock / (double)cs->tried : 0,
				  cs->tried ? (double)cs->zlock_pages / (double)cs->tried : 0 };
		char test[64];

		for (size_t i = 0; i < ARRAY_SIZE(vals); i++) {
			/* the 1 GiB tries' wall time has no virtual-time model here */
			if (bench_vt_on(b) && !strcmp(names[i], "contig-1g-us"))
				continue;
			if (i == 0 && bench_vt_ns() > 0)	/* throughput in virtual time */
				bench_vt_set((double)page_ops / bench_vt_ns() * 1e3);
			snprintf(test, sizeof(test), "%s-v%u", names[i], nr_vcpus);
			bench_use_slot(&vb, i == 0 ? 0 : -1);	/* only throughput is timed */
			bench_emit(&vb, test, design, 0, vals[i], metrics[i], m);
		}
		/* pcp_premerge's buddy lookups during the run and why they failed */
		for (int i = 0; design_premerge && i < 6; i++) {
			static const char *const why[] = { "try", "in-use", "other-pcp", "in-zone",
							   "order", "other" };

			snprintf(test, sizeof(test), "premerge-%s-v%u", why[i], nr_vcpus);
			bench_emit(&vb, test, design, 0, (double)res->premerge[i], "premerge", m);
		}
	}

	for (unsigned long i = 0; i < w.wheel_size; i++) {
		while (w.wheel[i].n)
			wl_free(&w, w.wheel[i].v[--w.wheel[i].n], 0);
		free(w.wheel[i].v);
	}
	for (unsigned int v = 0; v < nr_vcpus; v++) {
		while (w.own[v].n)
			wl_free(&w, w.own[v].v[--w.own[v].n], 0);
		free(w.own[v].v);
	}
	while (w.shared_head < w.shared.n)
		wl_free(&w, w.shared.v[w.shared_head++], 0);
	free(w.shared.v);
	free(w.own);
	free(w.wheel);
	free(w.rng);
	free(w.vcpu_ops);
	if (pl_check_machine(m)) {
		fprintf(stderr, "pagelab-bench: the checker found the machine inconsistent\n");
		exit(1);
	}
	bench_machine_destroy(m);
}

static int parse_list(const char *s, unsigned int *out, int max)
{
	char buf[128], *tok;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok(buf, ","); tok && n < max; tok = strtok(NULL, ","))
		out[n++] = (unsigned int)strtoul(tok, NULL, 10);
	return n;
}

static int run_kind(struct bench *b, enum wl_kind kind)
{
	const char *designs[MAX_RUNS];
	unsigned int vcpus[MAX_RUNS];
	int nd = bench_designs(b, "v6.18,pcp-owner", designs, MAX_RUNS);
	int nv = parse_list(param_str(b, "vcpus", "8,32,128"), vcpus, MAX_RUNS);
	FILE *f = b->out;

	param_ulong(b, "gig_probe", 0);	/* junk exits 2 here, before any output */
	fprintf(f, "%s: %lu page operations per run, %lu thread(s), lock_stat %s\n", b->suite,
		param_ulong(b, "ops", 2000000), param_ulong(b, "threads", 1),
		param_ulong(b, "lock_stat", 1) ? "on" : "off");
	fprintf(f, "%5s %-14s %8s %10s %8s %8s %6s %9s %9s %9s %9s %7s %6s %7s %9s %8s %8s\n",
		"vcpus", "design", "Mops/s", "zlock/Mop", "pg/zlock", "hold/op", "hit%",
		"xcpu-free", "routed", "merge-z", "merge-pcp", "freepb", "unus9", "o9-ok", "1G-won",
		"1G-us", "1G-zlock");
	for (int v = 0; v < nv; v++) {
		if (!vcpus[v]) {
			fprintf(stderr, "pagelab-bench: vcpus must be at least 1\n");
			return 2;
		}
		for (int d = 0; d < nd; d++) {
			struct wl_result r;
			const struct contig_stats *cs = &r.contig;
			char won[24];

			run_one(b, kind, designs[d], vcpus[v], &r);
			snprintf(won, sizeof(won), "%lu/%lu", cs->won, cs->tried);
			fprintf(f, "%5u %-14s %8.2f %10.0f %8.1f %6.1fns %6.1f %9lu %9lu %9lu %9lu %7lu %6.3f %7lu %9s %8.0f %8.1f\n",
				vcpus[v], designs[d], r.mops, r.zlock_per_mop, r.pages_per_zlock,
				r.hold_ns_per_op, r.pcp_hit_pct, r.cross_frees, r.remote_frees,
				r.merge_zone, r.merge_pcp, r.free_blocks, r.unusable9 / 1000.0,
				r.order9_ok, won,
				cs->tried ? (double)cs->ns / 1e3 / (double)cs->tried : 0,
				cs->tried ? (double)cs->zlock / (double)cs->tried : 0);
			fflush(f);
		}
	}
	return 0;
}

static int run_amff(struct bench *b) { return run_kind(b, WL_AMFF); }
static int run_exit(struct bench *b) { return run_kind(b, WL_EXIT); }
static int run_kbuild(struct bench *b) { return run_kind(b, WL_KBUILD); }
static int run_a1fm(struct bench *b) { return run_kind(b, WL_A1FM); }
static int run_hugetlb(struct bench *b) { return run_kind(b, WL_HUGETLB); }

/*
 * The five workloads' keys, declared once: what differs between them is
 * an argument (alloc_many_free_few needs a purger beside its allocators,
 * so at least 2 vCPUs; hugetlb_1g's churn and 1 GiB tries).
 */
#define OPS_RUN "page operations per run"
#define EXIT_PAGES "pages an exiting task frees (exit_avalanche)"
#define GIG_PROBE "1 GiB ranges alloc_contig_range() tries after the run (all: every aligned " \
		  "range; 0: none)"
#define PCP_KEYS(vcpus_min, ops, exit_pages, gig_probe) {					\
	BENCH_KEY("mem"),									\
	BENCH_KEY("dma32"),									\
	BENCH_KEY_DEF("design", "v6.18,pcp-owner"),						\
	{ "vcpus", BK_NUMLIST, (vcpus_min), PL_MAX_VCPUS, NULL, "8,32,128",			\
	  "comma-separated vCPU counts to sweep" },						\
	{ "ops", BK_NUM, 1, 100000000000UL, NULL, "2000000", (ops) },				\
	BENCH_KEY("threads"),									\
	{ "slice", BK_NUM, 1, 1000000000UL, NULL, "32",						\
	  "operations a vCPU runs before the next one's turn" },				\
	BENCH_KEY("seed"),									\
	{ "exit_pages", BK_NUM, 1, 1000000000UL, NULL, "32768", (exit_pages) },			\
	BENCH_KEY_DOC("lock_stat", "1", "time lock holds and waits"),				\
	BENCH_KEY("debug"),									\
	{ "tick_ops", BK_NUM, 1, 100000000000UL, NULL, "100000",				\
	  "a vCPU's vmstat tick every this many of its page operations (0: none)" },		\
	{ "gig_probe", BK_NUM, 0, ULONG_MAX, NULL, "all", (gig_probe) },			\
	BENCH_KEY_END										\
}

static const struct bench_key amff_keys[] = PCP_KEYS(2, OPS_RUN, EXIT_PAGES, GIG_PROBE);
static const struct bench_key exit_keys[] = PCP_KEYS(1, OPS_RUN, "pages an exiting task frees",
						     GIG_PROBE);
static const struct bench_key kbuild_keys[] = PCP_KEYS(1, OPS_RUN, EXIT_PAGES, GIG_PROBE);
static const struct bench_key a1fm_keys[] = PCP_KEYS(1, OPS_RUN, EXIT_PAGES, GIG_PROBE);
static const struct bench_key hugetlb_keys[] = PCP_KEYS(1,
	"page operations of churn before the 1 GiB tries", EXIT_PAGES,
	"unused: hugetlb_1g tries every aligned 1 GiB range during its churn");

const struct bench_suite suite_alloc_many_free_few = {
	.name = "alloc_many_free_few",
	.summary = "seed 003: allocate on many vCPUs, free from a few purgers",
	.keys = amff_keys,
	.run = run_amff,
};

const struct bench_suite suite_exit_avalanche = {
	.name = "exit_avalanche",
	.summary = "seed 003: one vCPU frees a whole process at once while others churn",
	.keys = exit_keys,
	.run = run_exit,
};

const struct bench_suite suite_kbuild = {
	.name = "kbuild",
	.summary = "seed 003: order-0..3 blocks with random lifetimes across vCPUs",
	.keys = kbuild_keys,
	.run = run_kbuild,
};

const struct bench_suite suite_alloc_one_free_many = {
	.name = "alloc_one_free_many",
	.summary = "one vCPU allocates, every other vCPU frees (seed 003's worst case)",
	.keys = a1fm_keys,
	.run = run_a1fm,
};

const struct bench_suite suite_hugetlb_1g = {
	.name = "hugetlb_1g",
	.summary = "1 GiB alloc_contig_range() on every aligned range under kbuild churn",
	.keys = hugetlb_keys,
	.run = run_hugetlb,
};
