// SPDX-License-Identifier: MIT
/*
 * test_pcp.c - per-CPU page lists: refill and hit, LIFO reuse, batch/high
 * as the kernel computes them, auto-tuning up and decay down, the THP list,
 * alloc_pages_bulk, drain_all_pages after cross-CPU frees, real threads
 * freeing each other's pages, and a double free of a page on a PCP list.
 */
#include <pthread.h>
#include "helpers.h"

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

static struct per_cpu_pages *pcp_of(struct pl_machine *m, enum zone_type z, unsigned int cpu)
{
	return &m->node_zones[z].per_cpu_pageset[cpu];
}

static void test_refill_hit_and_lifo(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct per_cpu_pages *pcp = pcp_of(m, ZONE_NORMAL, 0);
	struct page *a, *b;

	(void)state;
	assert_int_equal(pcp->batch, 3); /* 48 MiB zone: (12/4 -> 3) + 1 -> 4 -> 2^2 - 1 */
	a = alloc_pages(GFP_KERNEL, 0);
	assert_int_equal(event(m, PL_EV_PCP_MISS), 1);
	assert_int_equal(pcp->count, (int)event(m, PL_EV_PCP_REFILL_PAGES) - 1);
	b = alloc_pages(GFP_KERNEL, 0);
	assert_int_equal(event(m, PL_EV_PCP_HIT), 1);
	assert_int_equal(page_to_pfn(b), page_to_pfn(a) + 1); /* refills keep physical order */
	assert_int_equal(__free_pages(a, 0), 0);
	assert_int_equal(event(m, PL_EV_PCP_FREE), 1);
	/* The hottest page comes back first. */
	assert_ptr_equal(alloc_pages(GFP_KERNEL, 0), a);
	assert_int_equal(__free_pages(a, 0), 0);
	assert_int_equal(__free_pages(b, 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_batch_and_high_default_machine(void **state)
{
	struct pl_config cfg;
	struct pl_machine *m;
	struct zone *normal, *dma32;

	(void)state;
	pl_config_default(&cfg);
	cfg.nr_cpus = 2;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	normal = &m->node_zones[ZONE_NORMAL];
	dma32 = &m->node_zones[ZONE_DMA32];
	/* The kernel's 63 for any zone over 1 GiB. */
	assert_int_equal(normal->pageset_batch, 63);
	assert_int_equal(dma32->pageset_batch, 63);
	/* high_min: low watermark over the CPUs; high_max: an eighth of the zone over them. */
	assert_int_equal(normal->pageset_high_min, (int)(low_wmark_pages(normal) / 2));
	assert_int_equal(normal->pageset_high_max, (int)(normal->managed_pages / 8 / 2));
	assert_int_equal(pcp_of(m, ZONE_NORMAL, 1)->high, normal->pageset_high_min);
	assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

static void test_high_grows_and_decays(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct per_cpu_pages *pcp = pcp_of(m, ZONE_NORMAL, 0);
	static struct page *pages[4096];
	int high0 = pcp->high, peak;

	(void)state;
	for (int i = 0; i < 4096; i++)
		pages[i] = alloc_pages(GFP_KERNEL, 0);
	assert_true(pcp->high > high0); /* allocation pressure grew the cache */
	assert_true(pcp->alloc_factor > 0);
	for (int i = 0; i < 4096; i++) {
		assert_int_equal(__free_pages(pages[i], 0), 0);
		assert_true(pcp->count <= max(pcp->high, pcp->high_min) + 1);
	}
	peak = pcp->high;
	assert_true(peak > pcp->high_min);
	while (pl_vmstat_tick())
		;
	assert_int_equal(pcp->high, pcp->high_min);
	assert_true(pcp->count <= pcp->high);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_thp_list_and_costly_orders(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct per_cpu_pages *pcp = pcp_of(m, ZONE_NORMAL, 0);
	struct page *thp = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_COMP, HPAGE_PMD_ORDER);
	struct page *big = alloc_pages(GFP_KERNEL, 4);

	(void)state;
	assert_int_equal(__free_pages(thp, HPAGE_PMD_ORDER), 0);
	/* THP-sized blocks are cached on the movable THP list ... */
	assert_false(list_empty(&pcp->lists[NR_LOWORDER_PCP_LISTS + 1]));
	assert_int_equal(__free_pages(big, 4), 0);
	/* ... orders 4..8 never are. */
	assert_int_equal(pcp->count, 512);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_alloc_pages_bulk(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *pages[100] = { NULL };
	struct page *keep = alloc_pages(GFP_KERNEL, 0);

	(void)state;
	pages[0] = keep;
	pages[50] = keep;
	assert_int_equal(alloc_pages_bulk(GFP_KERNEL, 100, pages), 100);
	/* Populated slots are kept; the rest are new, distinct, referenced pages. */
	assert_ptr_equal(pages[0], keep);
	assert_ptr_equal(pages[50], keep);
	for (int i = 1; i < 100; i++) {
		if (i == 50)
			continue;
		assert_int_equal(page_ref_count(pages[i]), 1);
		for (int j = i + 1; j < 100; j++)
			assert_ptr_not_equal(pages[i], pages[j]);
		assert_ptr_not_equal(pages[i], keep);
	}
	for (int i = 1; i < 100; i++)
		if (i != 50)
			assert_int_equal(__free_pages(pages[i], 0), 0);
	assert_int_equal(__free_pages(keep, 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static struct pl_machine *smp_machine(unsigned int nr_cpus)
{
	struct pl_config cfg;
	struct pl_machine *m;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = nr_cpus;
	cfg.debug = 1;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	return m;
}

static void test_cross_cpu_free_and_drain_all(void **state)
{
	struct pl_machine *m = smp_machine(4);
	static struct page *pages[2000];

	(void)state;
	pl_enter(m, 0);
	for (int i = 0; i < 2000; i++)
		pages[i] = alloc_pages(GFP_KERNEL, (unsigned int)(i % 4));
	for (int i = 0; i < 2000; i++) {
		pl_enter(m, 1 + (unsigned int)(i % 3)); /* freed on other CPUs */
		assert_int_equal(__free_pages(pages[i], (unsigned int)(i % 4)), 0);
	}
	pl_enter(m, 0);
	assert_true(pcp_of(m, ZONE_NORMAL, 2)->count > 0);
	assert_int_equal(pl_check_machine(m), 0);
	assert_fully_coalesced(m); /* drain_all_pages from CPU 0 empties everyone */
	test_machine_done(m);
}

static void test_double_free_on_pcp_list(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *page = alloc_pages(GFP_KERNEL, 1);
	struct snapshot before;

	(void)state;
	assert_int_equal(__free_pages(page, 1), 0);
	assert_true(pcp_of(m, ZONE_NORMAL, 0)->count >= 2); /* it sits on the PCP */
	take_snapshot(m, &before);
	pl_warn_set_quiet(true);
	assert_int_equal(__free_pages(page, 1), -EINVAL);
	pl_warn_set_quiet(false);
	assert_unchanged(m, &before);
	test_machine_done(m);
}

/* Two real threads, two vCPUs, each freeing the pages the other allocated. */
struct handoff {
	struct pl_machine *m;
	pthread_mutex_t lock;		/* protects everything below */
	struct page *slot[2][256];	/* pages for vCPU i to free */
	unsigned int order[2][256];
	int n[2];
	int next_cpu;
};

static void *worker(void *arg)
{
	struct handoff *h = arg;
	int me, other;
	struct pl_rng rng;

	pthread_mutex_lock(&h->lock);
	me = h->next_cpu++;
	pthread_mutex_unlock(&h->lock);
	other = !me;
	pl_enter(h->m, (unsigned int)me);
	pl_rng_seed(&rng, (uint64_t)me + 7);
	for (int i = 0; i < 20000; i++) {
		unsigned int order = (unsigned int)pl_rng_below(&rng, 4);
		struct page *page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
		struct page *theirs = NULL;
		unsigned int their_order = 0;

		pthread_mutex_lock(&h->lock);
		if (page && h->n[other] < 256) {
			h->order[other][h->n[other]] = order;
			h->slot[other][h->n[other]++] = page;
			page = NULL;
		}
		if (h->n[me]) {
			h->n[me]--;
			theirs = h->slot[me][h->n[me]];
			their_order = h->order[me][h->n[me]];
		}
		pthread_mutex_unlock(&h->lock);
		if (page)
			__free_pages(page, order);
		if (theirs && __free_pages(theirs, their_order))
			abort();
	}
	pl_leave();
	return NULL;
}

static void test_threads_cross_free(void **state)
{
	static struct handoff h;
	pthread_t t[2];

	(void)state;
	h.m = smp_machine(2);
	pthread_mutex_init(&h.lock, NULL);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, &h);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pl_enter(h.m, 0);
	for (int s = 0; s < 2; s++)
		while (h.n[s]) {
			h.n[s]--;
			assert_int_equal(__free_pages(h.slot[s][h.n[s]], h.order[s][h.n[s]]), 0);
		}
	assert_true(event(h.m, PL_EV_PGALLOC) >= 40000);
	assert_fully_coalesced(h.m);
	test_machine_done(h.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refill_hit_and_lifo),
		cmocka_unit_test(test_batch_and_high_default_machine),
		cmocka_unit_test(test_high_grows_and_decays),
		cmocka_unit_test(test_thp_list_and_costly_orders),
		cmocka_unit_test(test_alloc_pages_bulk),
		cmocka_unit_test(test_cross_cpu_free_and_drain_all),
		cmocka_unit_test(test_double_free_on_pcp_list),
		cmocka_unit_test(test_threads_cross_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
