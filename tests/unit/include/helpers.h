/* SPDX-License-Identifier: MIT */
/*
 * helpers.h - shared setup for the cmocka unit tests: small machines,
 * state snapshots for "nothing changed" assertions, and the end-of-test
 * checker run every test goes through.
 */
#ifndef PAGELAB_TEST_HELPERS_H
#define PAGELAB_TEST_HELPERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "pagelab/pagelab.h"

#define MiB (1UL << 20)

/* A machine from @cfg with @design's switches, entered as vCPU 0. */
static inline struct pl_machine *test_machine_config(struct pl_config *cfg, const char *design)
{
	struct pl_machine *m;

	assert_int_equal(pl_design_preset(design, &cfg->design), 0);
	m = pl_machine_create(cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	return m;
}

static inline struct pl_machine *test_machine_cfg(unsigned long mem, unsigned long dma32,
						  const char *design, int debug)
{
	struct pl_config cfg;

	pl_config_default(&cfg);
	cfg.mem_bytes = mem;
	cfg.dma32_bytes = dma32;
	cfg.debug = debug;
	return test_machine_config(&cfg, design);
}

/* 64 MiB: a 16 MiB DMA32 zone and a 48 MiB Normal zone. */
static inline struct pl_machine *test_machine(const char *design)
{
	return test_machine_cfg(64 * MiB, 16 * MiB, design, 1);
}

/* Every test ends here: the checker must find nothing. */
static inline void test_machine_done(struct pl_machine *m)
{
	assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

static inline unsigned long total_nr_free(struct pl_machine *m, unsigned int order)
{
	unsigned long n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += m->node_zones[z].free_area[order].nr_free;
	return n;
}

/*
 * All free memory back in MAX_PAGE_ORDER blocks, every page free, once
 * drain_all_pages() has emptied the per-CPU lists.
 */
static inline void assert_fully_coalesced(struct pl_machine *m)
{
	unsigned long present = 0;

	drain_all_pages(NULL);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			assert_int_equal(m->node_zones[z].per_cpu_pageset[cpu].count, 0);

	for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
		assert_int_equal(total_nr_free(m, o), 0);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		present += m->node_zones[z].present_pages;
	assert_int_equal(pl_nr_free_pages(m), present);
	assert_int_equal(total_nr_free(m, MAX_PAGE_ORDER) << MAX_PAGE_ORDER, present);
}

/* A byte-exact picture of the free state: buddyinfo + pagetypeinfo. */
struct snapshot {
	char text[16384];
	long len;
	unsigned long free_pages;
};

static inline void take_snapshot(struct pl_machine *m, struct snapshot *s)
{
	long a = pl_show_buddyinfo(m, s->text, sizeof(s->text));

	assert_true(a > 0);
	s->len = a + pl_show_pagetypeinfo(m, s->text + a, sizeof(s->text) - (size_t)a);
	assert_true(s->len > a);
	s->free_pages = pl_nr_free_pages(m);
}

static inline void assert_unchanged(struct pl_machine *m, const struct snapshot *before)
{
	static struct snapshot now;

	take_snapshot(m, &now);
	assert_int_equal(now.free_pages, before->free_pages);
	assert_int_equal(now.len, before->len);
	assert_memory_equal(now.text, before->text, (size_t)now.len);
	assert_int_equal(pl_check_machine(m), 0);
}

/* Allocate until failure; returns the count, blocks stored in @pages. */
static inline unsigned long exhaust(gfp_t gfp, unsigned int order, struct page **pages,
				    unsigned long max)
{
	unsigned long n = 0;

	while (n < max) {
		struct page *p = alloc_pages(gfp | __GFP_NOWARN, order);

		if (!p)
			break;
		pages[n++] = p;
	}
	return n;
}

/* The blocks on PCP list @pindex of @pcp. */
static inline int pcp_list_len(struct per_cpu_pages *pcp, unsigned int pindex)
{
	int n = 0;

	for (struct list_head *pos = pcp->lists[pindex].next; pos != &pcp->lists[pindex];
	     pos = pos->next)
		n++;
	return n;
}

#endif /* PAGELAB_TEST_HELPERS_H */
