// SPDX-License-Identifier: MIT
/*
 * test_pcp_owner.c - seed 003's pageblock ownership: a refill takes a whole
 * block, frees from other CPUs route to the owner and merge there, drains
 * give reassembled blocks back whole and partial ones as fragments that the
 * next refill recovers, small machines degrade to the baseline, random
 * multi-CPU traffic never loses or duplicates a page, and real threads
 * freeing each other's pages stay consistent.
 */
#include <pthread.h>
#include "helpers.h"

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

/* 1 GiB: Normal's pcp->high_min (~1266 pages) fits a 512-page block. */
static struct pl_machine *owner_machine(unsigned long mem, unsigned int nr_cpus, const char *design)
{
	struct pl_config cfg;

	pl_config_default(&cfg);
	cfg.mem_bytes = mem;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = nr_cpus;
	cfg.debug = 1;
	return test_machine_config(&cfg, design);
}

static int owner_of(struct page *page)
{
	struct zone *zone = page_zone(page);

	return zone->pageblock_owner[(page_to_pfn(page) - zone->zone_start_pfn) >> pageblock_order];
}

static void test_refill_owns_a_block(void **state)
{
	struct pl_machine *m = owner_machine(1024 * MiB, 2, "pcp-owner");
	struct per_cpu_pages *pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[0];
	struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);

	(void)state;
	assert_int_equal(event(m, PL_EV_PCP_OWN_BLOCK), 1);
	assert_int_equal(owner_of(page), 0);
	assert_int_equal(pcp->nr_owned, 1);
	assert_int_equal(pcp->owned_count, 511);
	assert_int_equal(pcp->count, 511);
	/* The split happened under pcp->lock: one order-k chunk per k < 9 is left. */
	for (unsigned int o = 0; o < pageblock_order; o++)
		assert_false(list_empty(&pcp->owned_free[MIGRATE_MOVABLE][o]));
	assert_int_equal(pl_check_machine(m), 0);

	/* Freed on CPU 1, it goes back to CPU 0 and the block reassembles. */
	pl_enter(m, 1);
	assert_int_equal(__free_pages(page, 0), 0);
	assert_int_equal(event(m, PL_EV_PCP_REMOTE_FREE), 1);
	assert_int_equal(event(m, PL_EV_PCP_MERGE), pageblock_order);
	assert_int_equal(pcp->owned_count, 512);
	assert_int_equal(m->node_zones[ZONE_NORMAL].per_cpu_pageset[1].count, 0);
	assert_int_equal(pl_check_machine(m), 0);

	drain_all_pages(NULL);
	assert_int_equal(event(m, PL_EV_PCP_RELEASE_BLOCK), 1);
	assert_int_equal(owner_of(page), PB_OWNER_NONE);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_fragment_released_and_recovered(void **state)
{
	struct pl_machine *m = owner_machine(1024 * MiB, 1, "pcp-owner");
	struct page *pages[8];
	int idx_owner;

	(void)state;
	for (int i = 0; i < 8; i++)
		pages[i] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
	drain_all_pages(NULL); /* 8 pages still out: the block goes back as a fragment */
	assert_int_equal(event(m, PL_EV_PCP_RELEASE_FRAGMENT), 1);
	assert_int_equal(owner_of(pages[0]), PB_OWNER_FRAGMENT);
	assert_int_equal(pl_check_machine(m), 0);

	/* The next refill recovers the fragment before taking a fresh block. */
	{
		struct page *p = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);

		assert_int_equal(event(m, PL_EV_PCP_RECOVER_FRAGMENT), 1);
		assert_int_equal(event(m, PL_EV_PCP_OWN_BLOCK), 1);
		idx_owner = owner_of(p);
		assert_int_equal(idx_owner, 0);
		assert_int_equal((page_to_pfn(p) ^ page_to_pfn(pages[0])) >> pageblock_order, 0);
		assert_int_equal(__free_pages(p, 0), 0);
	}
	for (int i = 0; i < 8; i++)
		assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

/*
 * 48 MiB Normal: high (~240) cannot take a 512-page block, so the refill
 * degrades. As the RFC says, it takes unowned chunks larger than the order
 * asked (as many pages as the baseline's refill) and splits them under
 * pcp->lock; pagelab's own pcp-owner+bulk takes the baseline's
 * rmqueue_bulk() blocks instead. Either way the pages are not owned and
 * free to the local PCP.
 */
static void test_small_machine_degrades(void **state)
{
	int count[2];

	(void)state;
	for (int bulk = 0; bulk <= 1; bulk++) {
		struct pl_machine *m = owner_machine(64 * MiB, 1, bulk ? "pcp-owner+bulk" : "pcp-owner");
		struct zone *normal = &m->node_zones[ZONE_NORMAL];
		uint64_t zlock = normal->lock.stat.acquisitions;
		struct page *page = alloc_pages(GFP_KERNEL, 0), *next;

		assert_int_equal(event(m, PL_EV_PCP_OWN_BLOCK), 0);
		assert_int_equal(event(m, PL_EV_PCP_DEGRADE), 1);
		assert_int_equal(normal->lock.stat.acquisitions - zlock, 1); /* one hold for the refill */
		if (bulk)
			assert_int_equal(event(m, PL_EV_PCP_DEGRADE_CHUNKS), 0);
		else
			assert_true(event(m, PL_EV_PCP_DEGRADE_CHUNKS) >= 1);
		count[bulk] = normal->per_cpu_pageset[0].count;
		assert_int_equal(owner_of(page), PB_OWNER_NONE);
		/* the next page comes off the same refill, without the zone */
		next = alloc_pages(GFP_KERNEL, 0);
		assert_int_equal(normal->lock.stat.acquisitions - zlock, 1);
		assert_int_equal(owner_of(next), PB_OWNER_NONE);
		assert_int_equal(__free_pages(page, 0), 0);
		assert_int_equal(__free_pages(next, 0), 0);
		assert_int_equal(event(m, PL_EV_PCP_REMOTE_FREE), 0);
		assert_int_equal(pl_check_machine(m), 0);
		drain_all_pages(NULL);
		assert_fully_coalesced(m);
		test_machine_done(m);
	}
	/* the same number of pages cached either way */
	assert_int_equal(count[0], count[1]);
}

static void test_double_free_of_owned_page(void **state)
{
	struct pl_machine *m = owner_machine(1024 * MiB, 1, "pcp-owner");
	struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE, 2);
	struct snapshot before;

	(void)state;
	assert_int_equal(__free_pages(page, 2), 0);
	take_snapshot(m, &before);
	pl_warn_set_quiet(true);
	assert_int_equal(__free_pages(page, 2), -EINVAL);
	assert_int_equal(__free_pages(page + 1, 0), -EINVAL);
	pl_warn_set_quiet(false);
	assert_unchanged(m, &before);
	assert_int_equal(m->node_zones[ZONE_NORMAL].per_cpu_pageset[0].owned_count, 512);
	test_machine_done(m);
}

/* Random traffic over 8 vCPUs on one thread; the checker every 1000 steps. */
static void random_traffic(const char *design, uint64_t seed)
{
	struct pl_machine *m = owner_machine(1024 * MiB, 8, design);
	static struct { struct page *page; unsigned int order; } live[20000];
	unsigned long nr_live = 0;
	struct pl_rng rng;

	pl_rng_seed(&rng, seed);
	for (int step = 0; step < 60000; step++) {
		pl_enter(m, (unsigned int)pl_rng_below(&rng, 8));
		if (nr_live < 20000 && (nr_live == 0 || pl_rng_below(&rng, 100) < 52)) {
			static const unsigned int orders[] = { 0, 0, 0, 0, 0, 1, 2, 3, 9 };
			unsigned int order = orders[pl_rng_below(&rng, ARRAY_SIZE(orders))];
			gfp_t gfp = pl_rng_below(&rng, 3) ? GFP_HIGHUSER_MOVABLE : GFP_KERNEL;
			struct page *page = alloc_pages(gfp | __GFP_NOWARN, order);

			if (page) {
				live[nr_live].page = page;
				live[nr_live++].order = order;
			}
		} else {
			unsigned long i = pl_rng_below(&rng, nr_live);

			assert_int_equal(__free_pages(live[i].page, live[i].order), 0);
			live[i] = live[--nr_live];
		}
		if (step % 1000 == 0) {
			if (step % 7000 == 0)
				drain_all_pages(NULL);
			assert_int_equal(pl_check_machine(m), 0);
		}
		if (step % 5000 == 0)
			pl_vmstat_tick();
	}
	while (nr_live) {
		nr_live--;
		assert_int_equal(__free_pages(live[nr_live].page, live[nr_live].order), 0);
	}
	if (!strcmp(design, "pcp-owner")) {
		assert_true(event(m, PL_EV_PCP_OWN_BLOCK) > 0);
		assert_true(event(m, PL_EV_PCP_REMOTE_FREE) > 0);
		assert_true(event(m, PL_EV_PCP_MERGE) > 0);
	}
	pl_enter(m, 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_random_traffic_never_loses_a_page(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 2; seed++) {
		random_traffic("pcp-owner", seed);
		random_traffic("all", seed);
	}
}

struct threads {
	struct pl_machine *m;
	pthread_mutex_t lock;
	struct page *slot[2][512];
	int n[2];
	int next_cpu;
};

static void *worker(void *arg)
{
	struct threads *t = arg;
	struct pl_rng rng;
	int me;

	pthread_mutex_lock(&t->lock);
	me = t->next_cpu++;
	pthread_mutex_unlock(&t->lock);
	pl_enter(t->m, (unsigned int)me);
	pl_rng_seed(&rng, (uint64_t)me + 11);
	for (int i = 0; i < 30000; i++) {
		struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_NOWARN, 0), *theirs = NULL;

		pthread_mutex_lock(&t->lock);
		if (page && t->n[!me] < 512) {
			t->slot[!me][t->n[!me]++] = page;
			page = NULL;
		}
		if (t->n[me] && pl_rng_below(&rng, 4))
			theirs = t->slot[me][--t->n[me]];
		pthread_mutex_unlock(&t->lock);
		if (page && __free_pages(page, 0))
			abort();
		if (theirs && __free_pages(theirs, 0))
			abort();
		if (i % 10000 == 0)
			drain_all_pages(NULL);
	}
	pl_leave();
	return NULL;
}

static void test_threads_route_to_owner(void **state)
{
	static struct threads t;
	pthread_t th[2];

	(void)state;
	t.m = owner_machine(1024 * MiB, 2, "pcp-owner");
	pthread_mutex_init(&t.lock, NULL);
	pl_leave();	/* the workers take vCPUs 0 and 1: one thread per vCPU */
	for (int i = 0; i < 2; i++)
		pthread_create(&th[i], NULL, worker, &t);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	pl_enter(t.m, 0);
	for (int s = 0; s < 2; s++)
		while (t.n[s])
			assert_int_equal(__free_pages(t.slot[s][--t.n[s]], 0), 0);
	assert_true(event(t.m, PL_EV_PCP_REMOTE_FREE) > 0);
	assert_fully_coalesced(t.m);
	test_machine_done(t.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refill_owns_a_block),
		cmocka_unit_test(test_fragment_released_and_recovered),
		cmocka_unit_test(test_small_machine_degrades),
		cmocka_unit_test(test_double_free_of_owned_page),
		cmocka_unit_test(test_random_traffic_never_loses_a_page),
		cmocka_unit_test(test_threads_route_to_owner),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
