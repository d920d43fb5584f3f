// SPDX-License-Identifier: MIT
/*
 * test_buddy_differential.c - random alloc/free sequences (orders 0..10, the three
 * allocatable migratetypes, both zones) against a reference model that is
 * just a bitmap of free pfns. After every step the buddy free lists and the
 * per-CPU lists together must describe exactly the model's free set. The same sequence under v6.18 and mt-counts
 * must hand out the same pages.
 */
#include "helpers.h"

#define NR_PAGES (64 * MiB / PAGE_SIZE)
#define STEPS 4000

struct live {
	struct page *page;
	unsigned int order;
};

static unsigned char model_free[NR_PAGES];
static unsigned char lists_free[NR_PAGES];

static void lists_to_bitmap(struct pl_machine *m)
{
	struct zone *zone;

	memset(lists_free, 0, sizeof(lists_free));
	for_each_populated_zone(zone, m) {
		for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
			for (int mt = 0; mt < MIGRATE_TYPES; mt++) {
				struct list_head *pos;

				list_for_each(pos, &zone->free_area[o].free_list[mt]) {
					unsigned long pfn = page_to_pfn(
						list_entry(pos, struct page, buddy_list));

					memset(lists_free + pfn, 1, 1UL << o);
				}
			}
		}
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

			for (unsigned int i = 0; i < NR_PCP_LISTS; i++) {
				struct list_head *pos;
				unsigned int order = i < NR_LOWORDER_PCP_LISTS ? i / MIGRATE_PCPTYPES
									       : HPAGE_PMD_ORDER;

				list_for_each(pos, &pcp->lists[i]) {
					unsigned long pfn = page_to_pfn(
						list_entry(pos, struct page, pcp_list));

					memset(lists_free + pfn, 1, 1UL << order);
				}
			}
		}
	}
}

/* Run the sequence; record the pfn of every allocation in @trace. */
static void run(const char *design, uint64_t seed, unsigned long *trace)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_ATOMIC,
				      GFP_KERNEL | __GFP_DMA32 };
	struct pl_machine *m = test_machine(design);
	static struct live live[STEPS];
	unsigned long nr_live = 0;
	struct pl_rng rng;

	pl_rng_seed(&rng, seed);
	memset(model_free, 1, sizeof(model_free));
	for (int step = 0; step < STEPS; step++) {
		bool do_alloc = nr_live == 0 || pl_rng_below(&rng, 100) < 55;

		trace[step] = ~0UL;
		if (do_alloc) {
			/* Mostly small orders, now and then anything up to MAX. */
			unsigned int order = pl_rng_below(&rng, 8) ? (unsigned int)pl_rng_below(&rng, 4)
								  : (unsigned int)pl_rng_below(&rng, 11);
			gfp_t gfp = gfps[pl_rng_below(&rng, ARRAY_SIZE(gfps))] | __GFP_NOWARN;
			struct page *page = alloc_pages(gfp, order);
			unsigned long pfn;

			if (!page)
				continue;
			pfn = page_to_pfn(page);
			trace[step] = pfn;
			assert_true(IS_ALIGNED(pfn, 1UL << order));
			for (unsigned long i = 0; i < (1UL << order); i++) {
				if (!model_free[pfn + i])
					fail_msg("step %d: pfn %#lx handed out twice", step, pfn + i);
				model_free[pfn + i] = 0;
			}
			live[nr_live++] = (struct live){ page, order };
		} else {
			unsigned long i = pl_rng_below(&rng, nr_live);
			unsigned long pfn = page_to_pfn(live[i].page);

			assert_int_equal(__free_pages(live[i].page, live[i].order), 0);
			memset(model_free + pfn, 1, 1UL << live[i].order);
			live[i] = live[--nr_live];
		}
		lists_to_bitmap(m);
		if (memcmp(model_free, lists_free, NR_PAGES))
			fail_msg("step %d: free lists and model differ", step);
		if (step % 500 == 0)
			assert_int_equal(pl_check_machine(m), 0);
	}
	while (nr_live) {
		nr_live--;
		assert_int_equal(__free_pages(live[nr_live].page, live[nr_live].order), 0);
	}
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_against_model(void **state)
{
	static unsigned long base[STEPS], counted[STEPS];

	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		run("v6.18", seed, base);
		run("mt-counts", seed, counted);
		assert_memory_equal(base, counted, sizeof(base));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_model),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
