// SPDX-License-Identifier: MIT
/*
 * test_vtime.c - virtual time: lock waits and trylock failures
 * in virtual time, the PCP's fallback to the zone when its trylock fails,
 * cache-line transfers by distance, the earliest-clock-first interleaver,
 * bit-identical clocks for the same seed (with either cost set), the cost
 * sets by name, the cache and TLB models' rules exactly, and a PCP drain's
 * and refill's per-block list work (a drain's inside zone->lock).
 */
#include "helpers.h"

/* A 64 MiB machine (16 MiB of it DMA32) of @nr_cpus vCPUs with the model on. */
static void vt_config(struct pl_config *cfg, unsigned int nr_cpus)
{
	pl_config_default(cfg);
	cfg->mem_bytes = 64 * MiB;
	cfg->dma32_bytes = 16 * MiB;
	cfg->nr_cpus = nr_cpus;
	cfg->vtime = true;
}

static struct pl_vtime *vt_new(unsigned int n)
{
	struct pl_topology t = { 2, 2, 2 };	/* vCPUs 0,1 one core; 2,3 another; 4.. socket 1 */
	struct pl_vt_params p;
	struct pl_vtime *vt;

	memset(&p, 0, sizeof(p));
	p.lock_ps = 10;
	p.handoff_ps = 5;
	p.xfer_ps[VT_SAME_CORE] = 100;
	p.xfer_ps[VT_SAME_SOCKET] = 1000;
	p.xfer_ps[VT_OTHER_SOCKET] = 10000;
	vt = pl_vtime_create(n, &t, &p);
	assert_non_null(vt);
	return vt;
}

/* A lock held until t: an earlier acquirer waits until t, counts a contention. */
static void test_lock_wait(void **state)
{
	struct pl_vtime *vt = vt_new(2);
	struct pl_spinlock lock;

	(void)state;
	pl_spin_init(&lock, false);
	pl_vt_enter(vt, 0);
	spin_lock(&lock);
	pl_vt_charge(1000);		/* held 1000 ps of work */
	spin_unlock(&lock);
	assert_int_equal(vt->cpu[0].now, 1010);
	assert_int_equal(lock.vt_free_at, 1010);

	pl_vt_enter(vt, 1);		/* vCPU 1 is still at 0 */
	vt->cpu[1].now = 200;
	spin_lock(&lock);
	/* waited 810, then the handoff (5) and the lock word from the same core (100) */
	assert_int_equal(vt->cpu[1].wait_ps, 810);
	assert_int_equal(vt->cpu[1].contentions, 1);
	assert_int_equal(vt->cpu[1].now, 1010 + 5 + 100 + 10);
	assert_int_equal(lock.stat.contentions, 1);
	spin_unlock(&lock);

	/* After the hold ended, no wait. */
	pl_vt_enter(vt, 0);
	vt->cpu[0].now = 5000;
	spin_lock(&lock);
	spin_unlock(&lock);
	assert_int_equal(vt->cpu[0].contentions, 0);
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
}

/* A trylock fails exactly while the lock is held at the caller's clock. */
static void test_trylock(void **state)
{
	struct pl_vtime *vt = vt_new(2);
	struct pl_spinlock lock;

	(void)state;
	pl_spin_init(&lock, false);
	pl_vt_enter(vt, 0);
	vt->cpu[0].now = 100;
	spin_lock(&lock);
	pl_vt_charge(1000);
	spin_unlock(&lock);		/* held [100, 1110) */

	pl_vt_enter(vt, 1);
	vt->cpu[1].now = 500;
	assert_false(spin_trylock(&lock));
	assert_int_equal(vt->cpu[1].trylock_fails, 1);
	assert_int_equal(READ_ONCE(lock.locked), 0);	/* the real lock was never taken */
	vt->cpu[1].now = 50;		/* before the hold began: free at that time */
	assert_true(spin_trylock(&lock));
	spin_unlock(&lock);
	vt->cpu[1].now = 2000;		/* after it */
	assert_true(spin_trylock(&lock));
	spin_unlock(&lock);
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
}

/* Transfers priced by distance; a line read again by the same vCPU is free. */
static void test_transfers(void **state)
{
	struct pl_vtime *vt = vt_new(8);
	static char line[64] __attribute__((aligned(64)));

	(void)state;
	pl_vt_enter(vt, 0);
	pl_vt_touch(line, true);
	assert_int_equal(vt->cpu[0].transfers, 0);
	pl_vt_enter(vt, 1);		/* same core */
	pl_vt_touch(line, false);
	assert_int_equal(vt->cpu[1].xfer_ps, 100);
	pl_vt_touch(line, false);	/* already has it */
	assert_int_equal(vt->cpu[1].transfers, 1);
	pl_vt_enter(vt, 2);		/* same socket, other core */
	pl_vt_touch(line, true);
	assert_int_equal(vt->cpu[2].xfer_ps, 1000);
	pl_vt_enter(vt, 5);		/* other socket */
	pl_vt_touch(line, true);
	assert_int_equal(vt->cpu[5].xfer_ps, 10000);
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
}

/*
 * The PCP's trylock fails while another vCPU holds pcp->lock in virtual
 * time (a drain from another CPU): alloc_pages() then takes the block
 * from the buddy under zone->lock (rmqueue_buddy) and a free goes to
 * free_one_page(), as 6.18 does.
 */
static void test_pcp_trylock_fallback(void **state)
{
	struct pl_config cfg;
	struct pl_machine *m;
	struct per_cpu_pages *pcp;
	struct zone *zone;
	unsigned long ev[NR_PL_VM_EVENTS], before[NR_PL_VM_EVENTS];
	struct page *page;
	struct pl_lock_stat zl0, zl1;

	(void)state;
	vt_config(&cfg, 2);
	m = test_machine_config(&cfg, "v6.18");
	assert_non_null(m->vt);
	/* Warm vCPU 0's PCP so that a hit would not need the zone. */
	page = alloc_pages(GFP_KERNEL, 0);
	assert_non_null(page);
	assert_int_equal(__free_pages(page, 0), 0);
	page = alloc_pages(GFP_KERNEL, 0);

	zone = page_zone(page);
	pcp = &zone->per_cpu_pageset[0];
	/* vCPU 1 holds vCPU 0's pcp->lock over [now, now + 1 us) */
	pcp->lock.vt_acq_at = m->vt->cpu[0].now;
	pcp->lock.vt_free_at = m->vt->cpu[0].now + 1000000;

	pl_events_sum(m, before);
	pl_lock_stat_read(&zone->lock, &zl0);
	assert_int_equal(__free_pages(page, 0), 0);	/* trylock fails: free_one_page() */
	page = alloc_pages(GFP_KERNEL, 0);		/* trylock fails: rmqueue_buddy() */
	assert_non_null(page);
	pl_lock_stat_read(&zone->lock, &zl1);
	pl_events_sum(m, ev);
	assert_int_equal(ev[PL_EV_PCP_TRYLOCK_FAIL] - before[PL_EV_PCP_TRYLOCK_FAIL], 2);
	assert_int_equal(ev[PL_EV_PCP_FREE], before[PL_EV_PCP_FREE]);
	assert_int_equal(ev[PL_EV_PCP_HIT], before[PL_EV_PCP_HIT]);
	assert_int_equal(zl1.acquisitions - zl0.acquisitions, 2);
	assert_true(page_zone(page)->lock.vt_free_at > 0);

	/* After the hold ends the PCP serves again. */
	m->vt->cpu[0].now = pcp->lock.vt_free_at;
	assert_int_equal(__free_pages(page, 0), 0);
	pl_events_sum(m, ev);
	assert_int_equal(ev[PL_EV_PCP_FREE], before[PL_EV_PCP_FREE] + 1);
	test_machine_done(m);
}

struct det_ctx {
	struct pl_machine *m;
	struct pl_rng rng[16];
	struct page *live[16][32];
	unsigned long steps[16];
};

static void det_enter(void *c, unsigned int v)
{
	pl_enter(((struct det_ctx *)c)->m, v);
}

/* Random allocs and frees, freeing into other vCPUs' slots too. */
static bool det_step(void *c, unsigned int v)
{
	struct det_ctx *x = c;
	unsigned int owner = (unsigned int)pl_rng_below(&x->rng[v], 16);
	unsigned int slot = (unsigned int)pl_rng_below(&x->rng[v], 32);

	if (x->steps[v]++ == 3000)
		return false;
	if (x->live[owner][slot]) {
		__free_pages(x->live[owner][slot], 0);
		x->live[owner][slot] = NULL;
	} else {
		x->live[owner][slot] = alloc_pages(GFP_KERNEL, 0);
	}
	return true;
}

static uint64_t det_misses;	/* the last det_run()'s cache + TLB misses */

static void det_run_costs(uint64_t seed, unsigned int costs, uint64_t clocks[16],
			  unsigned long ev[NR_PL_VM_EVENTS])
{
	static struct det_ctx x;
	struct pl_config cfg;
	struct pl_vcpu_run run = { .nr_vcpus = 16, .nr_threads = 1, .slice = 1,
				   .enter = det_enter, .step = det_step, .ctx = &x };

	memset(&x, 0, sizeof(x));
	vt_config(&cfg, 16);
	cfg.vt_costs = costs;
	x.m = pl_machine_create(&cfg);
	assert_non_null(x.m);
	for (unsigned int v = 0; v < 16; v++)
		pl_rng_seed(&x.rng[v], seed + v);
	run.vt = x.m->vt;
	assert_int_equal(pl_run_vcpus(&run), 0);
	det_misses = 0;
	for (unsigned int v = 0; v < 16; v++) {
		clocks[v] = x.m->vt->cpu[v].now;
		det_misses += x.m->vt->cpu[v].misses + x.m->vt->cpu[v].tlb_misses;
	}
	pl_events_sum(x.m, ev);
	pl_enter(x.m, 0);
	for (unsigned int v = 0; v < 16; v++)
		for (unsigned int s = 0; s < 32; s++)
			if (x.live[v][s])
				__free_pages(x.live[v][s], 0);
	test_machine_done(x.m);
}

static void det_run(uint64_t seed, uint64_t clocks[16], unsigned long ev[NR_PL_VM_EVENTS])
{
	det_run_costs(seed, PL_VT_COSTS_ANCHORS, clocks, ev);
}

/* Same seed: bit-identical clocks and counters; the order is earliest clock first. */
static void test_determinism(void **state)
{
	uint64_t c1[16], c2[16], c3[16];
	unsigned long e1[NR_PL_VM_EVENTS], e2[NR_PL_VM_EVENTS], e3[NR_PL_VM_EVENTS];

	(void)state;
	det_run(7, c1, e1);
	det_run(7, c2, e2);
	det_run(8, c3, e3);
	assert_memory_equal(c1, c2, sizeof(c1));
	assert_memory_equal(e1, e2, sizeof(e1));
	assert_memory_not_equal(c1, c3, sizeof(c1));
	for (unsigned int v = 0; v < 16; v++)
		assert_true(c1[v] > 0);
}

/*
 * The host cost set (cache and TLB models on) is as deterministic: the same
 * seed gives bit-identical clocks and counters, other clocks than the
 * anchors' set (and other trylock outcomes, so other counters), and
 * the models count misses; the anchors' set keeps both models off.
 */
static void test_determinism_host_costs(void **state)
{
	uint64_t c1[16], c2[16], c3[16];
	unsigned long e1[NR_PL_VM_EVENTS], e2[NR_PL_VM_EVENTS], e3[NR_PL_VM_EVENTS];
	uint64_t misses;

	(void)state;
	det_run_costs(7, PL_VT_COSTS_HOST, c1, e1);
	misses = det_misses;
	det_run_costs(7, PL_VT_COSTS_HOST, c2, e2);
	assert_memory_equal(c1, c2, sizeof(c1));
	assert_memory_equal(e1, e2, sizeof(e1));
	assert_int_equal(det_misses, misses);
	assert_true(misses > 0);
	det_run_costs(7, PL_VT_COSTS_ANCHORS, c3, e3);
	assert_memory_not_equal(c1, c3, sizeof(c1));	/* other costs, other clocks */
	assert_int_equal(det_misses, 0);
}

/*
 * Cost sets by name; an unknown one is refused by the config check, and so
 * is a topology that is not sockets x cores x threads of at least one each.
 */
static void test_cost_sets(void **state)
{
	struct pl_vt_params a, d, h;
	struct pl_machine *m;
	struct pl_config cfg;

	(void)state;
	assert_int_equal(pl_vt_costs_parse("anchors"), PL_VT_COSTS_ANCHORS);
	assert_int_equal(pl_vt_costs_parse("host"), PL_VT_COSTS_HOST);
	assert_int_equal(pl_vt_costs_parse("Host"), -1);
	assert_int_equal(pl_vt_costs_parse(""), -1);
	assert_int_equal(pl_vt_costs_parse(NULL), -1);
	pl_vt_params_costs(&a, PL_VT_COSTS_ANCHORS);
	pl_vt_params_default(&d);
	assert_memory_equal(&a, &d, sizeof(a));
	assert_int_equal(a.cache_lines, 0);	/* the anchors' tables do not move */
	assert_int_equal(a.tlb_entries, 0);
	assert_int_equal(a.llc_lines, 0);
	pl_vt_params_costs(&h, PL_VT_COSTS_HOST);
	assert_true(h.cache_lines > 0 && h.miss_ps > 0 && h.lock_ps > 0);
	assert_true(h.xfer_ps[VT_SAME_SOCKET] > 0);
	assert_memory_not_equal(&a, &h, sizeof(a));
	pl_vt_params_costs(&h, NR_PL_VT_COSTS);	/* out of range: the anchors', one warning */
	assert_memory_equal(&a, &h, sizeof(a));
	vt_config(&cfg, 1);
	cfg.vt_costs = NR_PL_VT_COSTS;
	assert_null(pl_machine_create(&cfg));
	/* a topology with a zero part, or more hardware threads than a machine has */
	cfg.vt_costs = PL_VT_COSTS_ANCHORS;
	{
		static const struct pl_cpu_topology bad[] = {
			{ 0, 1, 1, 0, 0 }, { 1, 0, 1, 0, 0 }, { 1, 1, 0, 0, 0 },
			{ 4096, 2, 1, 0, 0 }, { 1000000, 1000000, 1000000, 0, 0 },
		};

		for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
			unsigned long warns = pl_warn_count();

			cfg.topology = bad[i];
			pl_warn_set_quiet(true);
			assert_null(pl_machine_create(&cfg));
			pl_warn_set_quiet(false);
			assert_int_equal(pl_warn_count(), warns + 1);
		}
		cfg.topology = (struct pl_cpu_topology){ 1, 1, 1, 0, 0 };	/* the smallest */
		m = pl_machine_create(&cfg);
		assert_non_null(m);
		pl_machine_destroy(m);
	}
}

#define LINE(n) ((const void *)(uintptr_t)((1000UL + (n)) << 6))

/*
 * The cache model, exactly: a miss for a line outside the vCPU's last
 * cache_lines distinct lines unless the line before is inside; a line
 * another vCPU wrote is a transfer while in that vCPU's LRU, a remote miss
 * after; transfers and hits cost no miss.
 */
static void test_cache_model(void **state)
{
	struct pl_topology t = { 1, 2, 1 };
	struct pl_vt_params p;
	struct pl_vtime *vt;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.cache_lines = 2;
	p.miss_ps = 1000;
	p.remote_miss_ps = 3000;
	p.xfer_ps[VT_SAME_SOCKET] = 100;
	vt = pl_vtime_create(2, &t, &p);
	assert_non_null(vt);
	pl_vt_enter(vt, 0);
	pl_vt_touch(LINE(0), false);		/* first touch: a miss */
	assert_int_equal(vt->cpu[0].now, 1000);
	pl_vt_touch(LINE(0), true);		/* in the LRU: free */
	pl_vt_touch(LINE(1), false);		/* the line after one in it: prefetched */
	assert_int_equal(vt->cpu[0].now, 1000);
	pl_vt_touch(LINE(5), false);		/* LRU now {5, 1}: 0 left */
	assert_int_equal(vt->cpu[0].now, 2000);
	pl_vt_touch(LINE(1), false);		/* LRU {1, 5} */
	pl_vt_touch(LINE(0), false);		/* evicted, and line -1 was never touched */
	assert_int_equal(vt->cpu[0].now, 3000);
	assert_int_equal(vt->cpu[0].misses, 3);

	/* vCPU 1 writes line 20 (its own miss), vCPU 0 reads it while it is in 1's LRU. */
	pl_vt_enter(vt, 1);
	pl_vt_touch(LINE(20), true);
	assert_int_equal(vt->cpu[1].now, 1000);
	pl_vt_enter(vt, 0);
	pl_vt_touch(LINE(20), false);		/* a transfer, not a miss */
	assert_int_equal(vt->cpu[0].now, 3100);
	assert_int_equal(vt->cpu[0].transfers, 1);
	assert_int_equal(vt->cpu[0].misses, 3);

	/* vCPU 1 writes line 30, then touches two more: 30 leaves its LRU. */
	pl_vt_enter(vt, 1);
	pl_vt_touch(LINE(30), true);
	pl_vt_touch(LINE(40), false);
	pl_vt_touch(LINE(50), false);
	assert_int_equal(vt->cpu[1].misses, 4);
	pl_vt_enter(vt, 0);
	pl_vt_touch(LINE(30), false);		/* a remote miss */
	assert_int_equal(vt->cpu[0].now, 6100);
	assert_int_equal(vt->cpu[0].transfers, 1);
	assert_int_equal(vt->cpu[0].misses, 4);
	pl_vt_touch(LINE(30), false);		/* now cached here */
	assert_int_equal(vt->cpu[0].now, 6100);
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
}

/* The TLB model: a page outside the vCPU's last tlb_entries pages costs a TLB miss. */
static void test_tlb_model(void **state)
{
	struct pl_topology t = { 1, 1, 1 };
	struct pl_vt_params p;
	struct pl_vtime *vt;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.tlb_entries = 2;
	p.tlb_miss_ps = 500;
	vt = pl_vtime_create(1, &t, &p);
	assert_non_null(vt);
	pl_vt_enter(vt, 0);
	pl_vt_touch((const void *)(uintptr_t)0x100000, false);	/* page A: a miss */
	pl_vt_touch((const void *)(uintptr_t)0x100fc0, true);	/* page A again */
	pl_vt_touch((const void *)(uintptr_t)0x101000, false);	/* page B (no prefetch): a miss */
	assert_int_equal(vt->cpu[0].now, 1000);
	pl_vt_touch((const void *)(uintptr_t)0x105000, false);	/* page C: a miss, A leaves */
	pl_vt_touch((const void *)(uintptr_t)0x101040, false);	/* B: cached */
	pl_vt_touch((const void *)(uintptr_t)0x100000, false);	/* A: a miss */
	assert_int_equal(vt->cpu[0].now, 2000);
	assert_int_equal(vt->cpu[0].tlb_misses, 4);
	assert_int_equal(vt->cpu[0].misses, 0);		/* no cache model */
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
	p.tlb_entries = (1u << 24) + 1;			/* too large: refused */
	assert_null(pl_vtime_create(1, &t, &p));
}

/*
 * The LLC model: the vCPUs of a socket share one LRU of the lines they
 * missed on; a miss it does not hold costs llc_miss_ps on top of the miss.
 */
static void test_llc_model(void **state)
{
	struct pl_topology t = { 2, 2, 1 };	/* 2 sockets of 2 cores: vCPUs 0,1 | 2,3 */
	struct pl_vt_params p;
	struct pl_vtime *vt;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.cache_lines = 1;
	p.miss_ps = 1000;
	p.llc_lines = 2;
	p.llc_miss_ps = 10000;
	vt = pl_vtime_create(4, &t, &p);
	assert_non_null(vt);
	assert_int_equal(vt->nr_llc, 2);
	pl_vt_enter(vt, 0);
	pl_vt_touch(LINE(10), false);		/* cold: miss + memory */
	assert_int_equal(vt->cpu[0].now, 11000);
	pl_vt_touch(LINE(20), false);		/* cold; the LLC holds {20, 10} */
	pl_vt_touch(LINE(10), false);		/* left vCPU 0's cache, in the LLC */
	assert_int_equal(vt->cpu[0].now, 23000);
	assert_int_equal(vt->cpu[0].misses, 3);
	assert_int_equal(vt->cpu[0].llc_misses, 2);

	/* vCPU 1 shares socket 0's LLC: line 20 is there. */
	pl_vt_enter(vt, 1);
	pl_vt_touch(LINE(20), false);
	assert_int_equal(vt->cpu[1].now, 1000);
	assert_int_equal(vt->cpu[1].llc_misses, 0);
	/* vCPU 2 is on socket 1: its own LLC, empty. */
	pl_vt_enter(vt, 2);
	pl_vt_touch(LINE(20), false);
	assert_int_equal(vt->cpu[2].now, 11000);

	/* vCPU 1's misses push 10 and 20 out of socket 0's LLC (LRU {40, 30}). */
	pl_vt_enter(vt, 1);
	pl_vt_touch(LINE(30), false);
	pl_vt_touch(LINE(40), false);
	pl_vt_enter(vt, 0);
	pl_vt_touch(LINE(20), false);		/* not in 0's cache nor the LLC: memory */
	assert_int_equal(vt->cpu[0].llc_misses, 3);
	assert_int_equal(vt->cpu[0].now, 34000);
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);

	p.cache_lines = 0;			/* an LLC without a cache: refused */
	assert_null(pl_vtime_create(1, &t, &p));
	p.cache_lines = 1;
	p.llc_lines = (1u << 24) + 1;		/* too large: refused */
	assert_null(pl_vtime_create(1, &t, &p));
}

/*
 * list_neighbours: with it on, a list_del() touches the block's own list
 * neighbours. One vCPU frees every other page of a run in a scattered
 * order (no merges: each lands on the order-0 list with its buddy held, so
 * list neighbours are far apart in memory), then the rest, each merging
 * with a buddy deep in that list: with a small cache model, touching its
 * neighbours misses where the list's first block alone stays cached.
 */
static uint64_t list_run_misses(const char *spec)
{
	enum { N = 4096 };
	static struct page *pages[N];
	struct pl_machine *m;
	struct pl_config cfg;
	uint64_t misses;

	setenv("PAGELAB_VT_PARAMS", spec, 1);
	vt_config(&cfg, 1);
	cfg.vt_costs = PL_VT_COSTS_HOST;
	cfg.pcp_disabled = true;	/* every free straight to the buddy */
	m = test_machine_config(&cfg, "v6.18");
	unsetenv("PAGELAB_VT_PARAMS");
	for (unsigned int i = 0; i < N; i++)
		assert_non_null(pages[i] = alloc_pages(GFP_KERNEL, 0));
	for (unsigned int i = 0; i < N; i += 2)
		__free_pages(pages[(i * 37) % N], 0);		/* even pages, scattered */
	misses = m->vt->cpu[0].misses;
	for (unsigned int i = 1; i < N; i += 2)
		__free_pages(pages[(i * 53) % N], 0);		/* odd pages, scattered */
	misses = m->vt->cpu[0].misses - misses;
	test_machine_done(m);
	return misses;
}

static void test_list_neighbours(void **state)
{
	struct pl_vt_params a, h;
	uint64_t off, on;

	(void)state;
	pl_vt_params_costs(&a, PL_VT_COSTS_ANCHORS);
	pl_vt_params_costs(&h, PL_VT_COSTS_HOST);
	assert_int_equal(a.list_neighbours, 0);		/* the anchors' tables do not move */
	assert_int_equal(h.list_neighbours, 1);
	off = list_run_misses("LIST_NEIGHBOURS=0,CACHE_LINES=64,TLB_ENTRIES=0");
	on = list_run_misses("LIST_NEIGHBOURS=1,CACHE_LINES=64,TLB_ENTRIES=0");
	assert_true(on > off + off / 2);	/* 9,393 against 4,653 */
}

/* The interleaver picks the earliest clock; ties go to the lowest vCPU. */
static void test_pick(void **state)
{
	struct pl_vtime *vt = vt_new(4);
	bool done[4] = { false, false, false, false };

	(void)state;
	vt->cpu[0].now = 30;
	vt->cpu[1].now = 10;
	vt->cpu[2].now = 10;
	vt->cpu[3].now = 5;
	assert_int_equal(pl_vt_pick(vt, done, 4), 3);
	done[3] = true;
	assert_int_equal(pl_vt_pick(vt, done, 4), 1);
	assert_int_equal(pl_vt_pick(vt, done, 1), 0);	/* only vCPU 0 runs */
	done[0] = done[1] = done[2] = true;
	assert_int_equal(pl_vt_pick(vt, done, 4), 4);	/* all done */
	pl_vtime_destroy(vt);
}

/* One worker, the others poll until it is done (test_idle_polls). */
struct poll_ctx {
	struct pl_vtime *vt;
	unsigned long work_left, polls;
};

static void poll_enter(void *ctx, unsigned int vcpu)
{
	struct poll_ctx *p = ctx;

	pl_vt_enter(p->vt, vcpu);
}

static bool poll_step(void *ctx, unsigned int vcpu)
{
	struct poll_ctx *p = ctx;

	if (vcpu == 0) {
		pl_vt_charge(1000);	/* a step of real work */
		return --p->work_left > 0;
	}
	if (!p->work_left)
		return false;
	p->polls++;			/* polling changes no clock */
	return true;
}

/*
 * Pollers sleep until just after the next working vCPU's clock: each polls
 * about once per step of the worker, instead of leapfrogging each other
 * (with idle_ps 0, by 1 ps at a time: ~1000 polls each per work step).
 */
static void test_idle_polls(void **state)
{
	struct poll_ctx p = { .vt = vt_new(8), .work_left = 100 };
	struct pl_vcpu_run run = { .nr_vcpus = 8, .nr_threads = 1, .slice = 1,
				   .enter = poll_enter, .step = poll_step, .ctx = &p, .vt = p.vt };

	(void)state;
	assert_int_equal(pl_run_vcpus(&run), 0);
	pl_vt_enter(NULL, 0);
	assert_true(p.polls >= 7 * 99);
	assert_true(p.polls <= 7 * 101);
	assert_true(p.vt->cpu[0].now == 100 * 1000);
	pl_vtime_destroy(p.vt);
}

/*
 * Every vm event costs its own parameter, the last ones too (they once read
 * the path costs past a 64-slot array), and a split or merge under
 * pcp->lock costs what the zone's does.
 */
static void test_event_costs(void **state)
{
	struct pl_vtime *vt = vt_new(1);
	struct pl_cpu_events ev;
	struct pl_vt_params d;

	(void)state;
	memset(&ev, 0, sizeof(ev));
	for (int i = 0; i < NR_VT_PATHS; i++)
		vt->p.path_ps[i] = 1000;
	vt->p.event_ps[PL_EV_PCP_SPLIT] = 7;
	pl_vt_enter(vt, 0);
	for (int i = 0; i < NR_PL_VM_EVENTS; i++) {
		uint64_t t0 = vt->cpu[0].now;

		pl_count_events(&ev, (enum pl_vm_event)i, 2);
		assert_int_equal(vt->cpu[0].now - t0, 2 * vt->p.event_ps[i]);
		assert_int_equal(vt->p.event_ps[i], i == PL_EV_PCP_SPLIT ? 7 : 0);
	}
	pl_vt_enter(NULL, 0);
	pl_vtime_destroy(vt);
	pl_vt_params_default(&d);
	assert_true(d.event_ps[PL_EV_BUDDY_MERGE] > 0);
	assert_int_equal(d.event_ps[PL_EV_PCP_MERGE], d.event_ps[PL_EV_BUDDY_MERGE]);
	assert_int_equal(d.event_ps[PL_EV_PCP_SPLIT], d.event_ps[PL_EV_BUDDY_SPLIT]);
}

/*
 * A refill's list work (VT_P_PCP_REFILL) and a drain's (VT_P_PCP_DRAIN)
 * cost one unit per block, and a drain's is spent inside zone->lock's
 * hold: with every other cost 0, each drain holds zone->lock for exactly
 * its blocks x P_PCP_DRAIN, and the clock moves by nothing else.
 */
static void test_pcp_list_work(void **state)
{
	enum { N = 3000 };
	static struct page *pages[N];
	unsigned long ev0[NR_PL_VM_EVENTS], ev1[NR_PL_VM_EVENTS];
	unsigned long refilled, drains = 0;
	struct pl_config cfg;
	struct pl_machine *m;
	struct zone *zone;
	uint64_t t0;

	(void)state;
	vt_config(&cfg, 2);
	m = test_machine_config(&cfg, "v6.18");
	assert_non_null(m->vt);
	assert_true(m->vt->p.path_ps[VT_P_PCP_DRAIN] > 0);	/* the anchors' set prices both */
	assert_true(m->vt->p.path_ps[VT_P_PCP_REFILL] > 0);
	{
		struct pl_vt_params h;	/* the host's: inside its fitted costs */

		pl_vt_params_costs(&h, PL_VT_COSTS_HOST);
		assert_int_equal(h.path_ps[VT_P_PCP_DRAIN], 0);
		assert_int_equal(h.path_ps[VT_P_PCP_REFILL], 0);
	}
	memset(&m->vt->p, 0, sizeof(m->vt->p));
	m->vt->p.path_ps[VT_P_PCP_DRAIN] = 1000;
	m->vt->p.path_ps[VT_P_PCP_REFILL] = 7;

	pl_events_sum(m, ev0);
	t0 = m->vt->cpu[0].now;
	for (unsigned int i = 0; i < N; i++)
		assert_non_null(pages[i] = alloc_pages(GFP_KERNEL, 0));
	pl_events_sum(m, ev1);
	refilled = ev1[PL_EV_PCP_REFILL_PAGES] - ev0[PL_EV_PCP_REFILL_PAGES];
	assert_true(refilled >= N);
	assert_int_equal(m->vt->cpu[0].now - t0, refilled * 7);

	zone = page_zone(pages[0]);
	for (unsigned int i = 0; i < N; i++) {
		unsigned long d;

		pl_events_sum(m, ev0);
		t0 = m->vt->cpu[0].now;
		assert_int_equal(__free_pages(pages[i], 0), 0);
		pl_events_sum(m, ev1);
		d = ev1[PL_EV_PCP_DRAIN_PAGES] - ev0[PL_EV_PCP_DRAIN_PAGES];
		assert_int_equal(m->vt->cpu[0].now - t0, d * 1000);
		if (d) {
			assert_int_equal(zone->lock.vt_free_at - zone->lock.vt_acq_at, d * 1000);
			drains++;
		}
	}
	assert_true(drains > 0);
	test_machine_done(m);
}

/* Bad parameter overrides change nothing. */
static void test_params_override(void **state)
{
	struct pl_vt_params p, q;

	(void)state;
	pl_vt_params_default(&p);
	q = p;
	assert_int_equal(pl_vt_params_override(&p, "LOCK=5,NOSUCH=3"), -1);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_int_equal(pl_vt_params_override(&p, "LOCK=x"), -1);
	assert_memory_equal(&p, &q, sizeof(p));
	assert_int_equal(pl_vt_params_override(&p, "ZERO,LOCK=5"), 0);
	assert_int_equal(p.lock_ps, 5);
	assert_int_equal(p.event_ps[PL_EV_PCP_HIT], 0);
	assert_null(pl_vtime_create(0, &(struct pl_topology){ 1, 1, 1 }, &p));
	assert_null(pl_vtime_create(4, &(struct pl_topology){ 0, 1, 1 }, &p));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lock_wait),
		cmocka_unit_test(test_trylock),
		cmocka_unit_test(test_transfers),
		cmocka_unit_test(test_pcp_trylock_fallback),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_pick),
		cmocka_unit_test(test_params_override),
		cmocka_unit_test(test_event_costs),
		cmocka_unit_test(test_pcp_list_work),
		cmocka_unit_test(test_idle_polls),
		cmocka_unit_test(test_determinism_host_costs),
		cmocka_unit_test(test_cost_sets),
		cmocka_unit_test(test_cache_model),
		cmocka_unit_test(test_tlb_model),
		cmocka_unit_test(test_llc_model),
		cmocka_unit_test(test_list_neighbours),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
