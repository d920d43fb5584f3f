// SPDX-License-Identifier: MIT
/*
 * test_contig_range.c - split_page(), free_contig_range() in both designs (the
 * v6.18 per-page loop and seed 001's chunks), free_pages_bulk() and
 * alloc_contig_range()/alloc_contig_pages().
 *
 * The machine for most tests is 256 MiB with DMA32 ending at 66 MiB:
 * the 128 MiB memory-section boundary (pfn 0x8000) lies inside ZONE_NORMAL,
 * and the zone boundary (pfn 0x4200) is not MAX_ORDER aligned, so an
 * aligned order-10 chunk there would span two zones.
 *
 * The differential test runs one seeded sequence of range allocations,
 * extra references and range frees on a v6.18 machine and on the seed 001
 * designs, and requires the same return values and, after
 * drain_all_pages(), byte-identical buddyinfo + pagetypeinfo.
 */
#include "helpers.h"
#include "mm/internal.h"

#define CONTIG_MEM	(256 * MiB)
#define CONTIG_DMA32	(66 * MiB)
#define SECTION_PFN	PAGES_PER_SECTION		/* 0x8000, 128 MiB */
#define ZONE_PFN	((66 * MiB) >> PAGE_SHIFT)	/* 0x4200 */

/* The free state of a fresh contig_machine(), to compare the end state with. */
static struct snapshot fresh;

static struct pl_machine *contig_machine(const char *design)
{
	struct pl_machine *m = test_machine_cfg(CONTIG_MEM, CONTIG_DMA32, design, 1);

	take_snapshot(m, &fresh);
	return m;
}

/*
 * assert_fully_coalesced() for this layout: DMA32's last and Normal's first
 * 512 pages stay order-9 blocks, so compare with the fresh machine instead.
 */
static void assert_all_free(struct pl_machine *m)
{
	drain_all_pages(NULL);
	for (int z = 0; z < MAX_NR_ZONES; z++)
		assert_int_equal(m->node_zones[z].per_cpu_pageset[0].count, 0);
	assert_int_equal(pl_nr_free_pages(m), CONTIG_MEM >> PAGE_SHIFT);
	assert_unchanged(m, &fresh);
}

static unsigned long ev(struct pl_machine *m, enum pl_vm_event item)
{
	unsigned long e[NR_PL_VM_EVENTS];

	pl_events_sum(m, e);
	return e[item];
}

/* Allocate [start, end) as order-0 pages, across zones if need be. */
static int alloc_range(unsigned long start, unsigned long end)
{
	if (start < ZONE_PFN && end > ZONE_PFN) {
		int err = alloc_contig_range(start, ZONE_PFN, GFP_KERNEL);

		if (err)
			return err;
		err = alloc_contig_range(ZONE_PFN, end, GFP_KERNEL);
		if (err)
			assert_int_equal(free_contig_range(start, ZONE_PFN - start), 0);
		return err;
	}
	return alloc_contig_range(start, end, GFP_KERNEL);
}

/* ---- split_page ------------------------------------------------------------ */

static void test_split_page(void **state)
{
	struct pl_machine *m = contig_machine("v6.18");
	struct page *page = alloc_pages(GFP_HIGHUSER_MOVABLE, 4);

	(void)state;
	assert_non_null(page);
	assert_int_equal(split_page(page, 4), 0);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(page_ref_count(&page[i]), 1);
		assert_int_equal(page[i].alloc_order, 0);
		assert_true(page[i].flags & (1UL << PG_movable));
	}
	/* Each page is now an allocation of its own. */
	for (int i = 15; i >= 0; i--)
		assert_int_equal(__free_page(&page[i]), 0);
	assert_all_free(m);
	test_machine_done(m);
}

static void test_split_page_bad(void **state)
{
	struct pl_machine *m = contig_machine("contig-batch");
	struct page *comp = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_COMP, 2);
	struct page *block = alloc_pages(GFP_HIGHUSER_MOVABLE, 3);
	struct snapshot before;
	unsigned long warns;
	char last[256];
	struct {
		struct page *page;
		unsigned int order;
		const char *what;
	} cases[] = {
		{ comp, 2, "compound" },
		{ comp + 1, 0, "compound" },
		{ block, 2, "order differs" },
		{ block, 11, "MAX_PAGE_ORDER" },
		{ block + 1, 1, "misaligned" },
		{ pfn_to_page(m->max_pfn - 8), 3, "not allocated" },
		{ m->mem_map + m->max_pfn + 4096, 0, "outside the machine" },
	};

	(void)state;
	pl_warn_set_quiet(true);
	take_snapshot(m, &before);
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		warns = pl_warn_count();
		assert_int_equal(split_page(cases[i].page, cases[i].order), -EINVAL);
		assert_int_equal(pl_warn_count(), warns + 1);
		pl_warn_last(last, sizeof(last));
		if (!strstr(last, cases[i].what))
			fail_msg("case %zu: warning '%s' does not say '%s'", i, last, cases[i].what);
		assert_unchanged(m, &before);
	}
	/* Nothing was split: the block is still one order-3 allocation. */
	assert_int_equal(block->alloc_order, 3);
	for (int i = 1; i < 8; i++)
		assert_int_equal(page_ref_count(&block[i]), 0);
	pl_warn_set_quiet(false);
	assert_int_equal(__free_pages(comp, 2), 0);
	assert_int_equal(__free_pages(block, 3), 0);
	assert_all_free(m);
	test_machine_done(m);
}

/* ---- the chunks of seed 001 ----------------------------------------------- */

/*
 * [0x4203, 0x4212) goes back as o0 at 0x4203, o2 at 0x4204, o3 at 0x4208
 * and o1 at 0x4210: four frees, each onto its order's PCP list. The
 * baseline makes fifteen order-0 frees.
 */
static void test_chunks(void **state)
{
	const char *designs[] = { "v6.18", "contig-batch" };

	(void)state;
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		struct per_cpu_pages *pcp = &m->node_zones[ZONE_NORMAL].per_cpu_pageset[0];
		unsigned long start = ZONE_PFN + 3, nr = 15, frees;
		int mt = MIGRATE_MOVABLE;

		assert_int_equal(alloc_contig_range(start, start + nr, GFP_KERNEL), 0);
		drain_all_pages(NULL);
		frees = ev(m, PL_EV_PGFREE);
		assert_int_equal(free_contig_range(start, nr), 0);
		assert_int_equal(pcp->count, 15);
		if (d == 0) {
			assert_int_equal(ev(m, PL_EV_PGFREE) - frees, 15);
			assert_int_equal(pcp_list_len(pcp, MIGRATE_PCPTYPES * 0 + mt), 15);
		} else {
			assert_int_equal(ev(m, PL_EV_PGFREE) - frees, 4);
			for (unsigned int o = 0; o <= 3; o++)
				assert_int_equal(pcp_list_len(pcp, MIGRATE_PCPTYPES * o + mt), 1);
			assert_int_equal(page_to_pfn(list_first_entry(&pcp->lists[MIGRATE_PCPTYPES * 2 + mt],
								      struct page, pcp_list)),
					 start + 1);
		}
		assert_all_free(m);
		test_machine_done(m);
	}
}

/*
 * An aligned order-10 block across the DMA32/Normal boundary: the chunked
 * free must stop at the zone's end (two order-9 chunks, one per zone),
 * where an order-10 chunk would put Normal pages on DMA32's lists.
 */
static void test_chunks_zone_boundary(void **state)
{
	struct pl_machine *m = contig_machine("contig-batch");
	unsigned long start = ALIGN_DOWN(ZONE_PFN, MAX_ORDER_NR_PAGES), frees;

	(void)state;
	assert_int_not_equal(start, ZONE_PFN);
	assert_int_equal(alloc_range(start, start + MAX_ORDER_NR_PAGES), 0);
	frees = ev(m, PL_EV_PGFREE);
	assert_int_equal(free_contig_range(start, MAX_ORDER_NR_PAGES), 0);
	assert_int_equal(ev(m, PL_EV_PGFREE) - frees, 2);
	assert_int_equal(pl_check_machine(m), 0);
	assert_all_free(m);
	test_machine_done(m);
}

/* ---- refcounts and bad pages -------------------------------------------- */

/*
 * Pages with an extra reference survive the free with refcount 1 and are
 * counted; a page free_pages_prepare() refuses (hwpoison) is reported and
 * leaked, as the kernel leaks it; both designs agree.
 */
static void test_mixed_refcounts(void **state)
{
	const char *designs[] = { "v6.18", "contig-batch" };
	struct snapshot snap[2];

	(void)state;
	pl_warn_set_quiet(true);
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		unsigned long start = SECTION_PFN - 700, nr = 1401;
		unsigned long held[] = { start, start + 5, SECTION_PFN - 1, SECTION_PFN, start + nr - 1 };
		unsigned long poisoned = SECTION_PFN + 300, bad = ev(m, PL_EV_BAD_PAGE);
		struct page *pp = pfn_to_page(poisoned);

		assert_int_equal(alloc_range(start, start + nr), 0);
		for (size_t i = 0; i < ARRAY_SIZE(held); i++)
			get_page(pfn_to_page(held[i]));
		SetPageFlag(pp, PG_hwpoison);
		assert_int_equal(free_contig_range(start, nr), (long)ARRAY_SIZE(held));
		assert_int_equal(ev(m, PL_EV_BAD_PAGE) - bad, 1);
		for (size_t i = 0; i < ARRAY_SIZE(held); i++)
			assert_int_equal(page_ref_count(pfn_to_page(held[i])), 1);
		assert_int_equal(page_ref_count(pp), 0);
		assert_false(PageBuddy(pp));
		drain_all_pages(NULL);
		assert_int_equal(pl_check_machine(m), 0);
		take_snapshot(m, &snap[d]);
		assert_int_equal(pl_nr_free_pages(m),
				 (CONTIG_MEM >> PAGE_SHIFT) - ARRAY_SIZE(held) - 1);

		/* Unpoison the leaked page and give everything back. */
		ClearPageFlag(pp, PG_hwpoison);
		set_page_count(pp, 1);
		assert_int_equal(__free_page(pp), 0);
		for (size_t i = 0; i < ARRAY_SIZE(held); i++)
			assert_int_equal(free_contig_range(held[i], 1), 0);
		assert_all_free(m);
		test_machine_done(m);
	}
	pl_warn_set_quiet(false);
	assert_int_equal(snap[0].len, snap[1].len);
	assert_memory_equal(snap[0].text, snap[1].text, (size_t)snap[0].len);
}

/* ---- the differential test ------------------------------------------------ */

#define DIFF_DESIGNS	3
#define DIFF_ROUNDS	400
#define MAX_LIVE	64
#define MAX_HELD	512

struct diff {
	struct pl_machine *m[DIFF_DESIGNS];
	struct pl_rng rng;
	unsigned long live_start[MAX_LIVE], live_end[MAX_LIVE];
	int nr_live;
	unsigned long held[MAX_HELD];
	int nr_held;
};

static const char *const diff_designs[DIFF_DESIGNS] = { "v6.18", "contig-batch", "all" };

static void diff_compare(struct diff *x)
{
	static struct snapshot s[DIFF_DESIGNS];

	for (int d = 0; d < DIFF_DESIGNS; d++) {
		pl_enter(x->m[d], 0);
		drain_all_pages(NULL);
		take_snapshot(x->m[d], &s[d]);
		assert_int_equal(pl_check_machine(x->m[d]), 0);
	}
	for (int d = 1; d < DIFF_DESIGNS; d++) {
		assert_int_equal(s[d].free_pages, s[0].free_pages);
		assert_int_equal(s[d].len, s[0].len);
		assert_memory_equal(s[d].text, s[0].text, (size_t)s[0].len);
	}
}

/* A random range: odd lengths, unaligned starts, often across a boundary. */
static void diff_pick(struct diff *x, unsigned long *start, unsigned long *end)
{
	unsigned long len = 1 + pl_rng_below(&x->rng, 3000), max_pfn = CONTIG_MEM >> PAGE_SHIFT;
	unsigned long s;

	switch (pl_rng_below(&x->rng, 4)) {
	case 0:
		s = SECTION_PFN - 1 - pl_rng_below(&x->rng, len);
		break;
	case 1:
		s = ZONE_PFN - 1 - pl_rng_below(&x->rng, len);
		break;
	default:
		s = pl_rng_below(&x->rng, max_pfn - len);
		break;
	}
	*start = s;
	*end = min(s + len, max_pfn);
}

/* Free a live range in 1..3 pieces, in random order, on every machine. */
static void diff_free(struct diff *x, int i)
{
	unsigned long s = x->live_start[i], e = x->live_end[i], cut[4];
	int pieces = 1 + (int)pl_rng_below(&x->rng, 3), order[3] = { 0, 1, 2 };

	cut[0] = s;
	cut[pieces] = e;
	for (int p = 1; p < pieces; p++)
		cut[p] = cut[p - 1] + (e - cut[p - 1] > 1 ? 1 + pl_rng_below(&x->rng, e - cut[p - 1] - 1)
							     : 0);
	for (int p = pieces - 1; p > 0; p--) {
		int j = (int)pl_rng_below(&x->rng, (uint64_t)p + 1), t = order[p];

		order[p] = order[j];
		order[j] = t;
	}
	for (int p = 0; p < pieces; p++) {
		unsigned long a = cut[order[p]], b = cut[order[p] + 1];
		long in_use[DIFF_DESIGNS];

		if (a == b)
			continue;
		for (int d = 0; d < DIFF_DESIGNS; d++) {
			pl_enter(x->m[d], 0);
			in_use[d] = free_contig_range(a, b - a);
			assert_true(in_use[d] >= 0);
		}
		for (int d = 1; d < DIFF_DESIGNS; d++)
			assert_int_equal(in_use[d], in_use[0]);
	}
	x->live_start[i] = x->live_start[--x->nr_live];
	x->live_end[i] = x->live_end[x->nr_live];
}

static void diff_round(struct diff *x)
{
	unsigned long s, e;
	int err[DIFF_DESIGNS];

	diff_pick(x, &s, &e);
	for (int d = 0; d < DIFF_DESIGNS; d++) {
		pl_enter(x->m[d], 0);
		err[d] = alloc_range(s, e);
	}
	for (int d = 1; d < DIFF_DESIGNS; d++)
		assert_int_equal(err[d], err[0]);
	if (!err[0] && x->nr_live < MAX_LIVE) {
		/* Extra references on a few pages: they outlive the range's free. */
		for (unsigned long pfn = s; pfn < e && x->nr_held < MAX_HELD; pfn++) {
			if (pl_rng_below(&x->rng, 200))
				continue;
			for (int d = 0; d < DIFF_DESIGNS; d++) {
				pl_enter(x->m[d], 0);
				get_page(pfn_to_page(pfn));
			}
			x->held[x->nr_held++] = pfn;
		}
		x->live_start[x->nr_live] = s;
		x->live_end[x->nr_live++] = e;
	} else {
		assert_true(err[0] == -EBUSY || err[0] == 0);
		if (!err[0]) {
			x->live_start[x->nr_live] = s;
			x->live_end[x->nr_live++] = e;
			diff_free(x, x->nr_live - 1);
		}
	}
	if (x->nr_live && pl_rng_below(&x->rng, 3))
		diff_free(x, (int)pl_rng_below(&x->rng, (uint64_t)x->nr_live));
}

static void test_differential(void **state)
{
	static struct diff x;

	(void)state;
	memset(&x, 0, sizeof(x));
	pl_rng_seed(&x.rng, 0x5eed001);
	pl_warn_set_quiet(true);
	for (int d = 0; d < DIFF_DESIGNS; d++)
		x.m[d] = contig_machine(diff_designs[d]);
	for (int r = 0; r < DIFF_ROUNDS; r++) {
		diff_round(&x);
		if (r % 25 == 24)
			diff_compare(&x);
	}
	while (x.nr_live)
		diff_free(&x, x.nr_live - 1);
	diff_compare(&x);
	/* The chunks really were bigger: far fewer frees for the same pages. */
	assert_true(ev(x.m[1], PL_EV_PGFREE) * 4 < ev(x.m[0], PL_EV_PGFREE));
	for (int i = 0; i < x.nr_held; i++) {
		for (int d = 0; d < DIFF_DESIGNS; d++) {
			pl_enter(x.m[d], 0);
			assert_int_equal(free_contig_range(x.held[i], 1), 0);
		}
	}
	pl_warn_set_quiet(false);
	for (int d = 0; d < DIFF_DESIGNS; d++) {
		pl_enter(x.m[d], 0);
		assert_all_free(x.m[d]);
		test_machine_done(x.m[d]);
	}
}

/* ---- bad input -------------------------------------------------------------- */

static void assert_refused(struct pl_machine *m, long ret, unsigned long warns,
			   const struct snapshot *before, const char *what)
{
	char last[256];

	assert_int_equal(ret, -EINVAL);
	assert_int_equal(pl_warn_count(), warns + 1);
	pl_warn_last(last, sizeof(last));
	if (!strstr(last, what))
		fail_msg("warning '%s' does not say '%s'", last, what);
	assert_unchanged(m, before);
}

static void test_free_bad_input(void **state)
{
	const char *designs[] = { "v6.18", "contig-batch" };

	(void)state;
	pl_warn_set_quiet(true);
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		unsigned long max_pfn = m->max_pfn, start = SECTION_PFN - 4;
		struct page *comp = alloc_pages(GFP_HIGHUSER_MOVABLE | __GFP_COMP, 2);
		struct page *block = alloc_pages(GFP_HIGHUSER_MOVABLE, 2);
		struct page *pages[3];
		struct snapshot before;
		unsigned long w;

		assert_int_equal(alloc_range(start, start + 8), 0);
		/* A free page inside the range: freed first, then the range is refused. */
		assert_int_equal(free_contig_range(start + 5, 1), 0);
		drain_all_pages(NULL);
		take_snapshot(m, &before);

		w = pl_warn_count();
		assert_refused(m, free_contig_range(max_pfn, 1), w, &before, "outside the machine");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(max_pfn - 2, 3), w, &before, "outside the machine");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(1, ~0UL), w, &before, "outside the machine");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(start, 8), w, &before, "not allocated");
		w = pl_warn_count();
		assert_refused(m, __free_contig_range(start, 8), w, &before, "not allocated");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(page_to_pfn(comp), 4), w, &before, "compound");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(page_to_pfn(comp) + 1, 3), w, &before,
			       "tail page of a compound");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(page_to_pfn(block) + 1, 3), w, &before,
			       "not allocated");
		w = pl_warn_count();
		assert_refused(m, free_contig_range(page_to_pfn(block), 4), w, &before, "not split");
		pages[0] = pfn_to_page(start);
		pages[1] = pfn_to_page(start + 5);
		pages[2] = pfn_to_page(start + 6);
		w = pl_warn_count();
		assert_refused(m, free_pages_bulk(3, pages), w, &before, "not allocated");
		pages[1] = NULL;
		w = pl_warn_count();
		assert_refused(m, free_pages_bulk(3, pages), w, &before, "outside the machine");
		/* Refused calls dropped no reference. */
		for (unsigned long pfn = start; pfn < start + 8; pfn++)
			assert_int_equal(page_ref_count(pfn_to_page(pfn)), pfn == start + 5 ? 0 : 1);

		assert_int_equal(free_contig_range(start, 5), 0);
		assert_int_equal(free_contig_range(start + 6, 2), 0);
		assert_int_equal(__free_pages(comp, 2), 0);
		assert_int_equal(__free_pages(block, 2), 0);
		assert_all_free(m);
		test_machine_done(m);
	}
	pl_warn_set_quiet(false);
}

/* ---- free_pages_bulk ------------------------------------------------------ */

/* Pages of split blocks in shuffled runs, as a vmalloc area may hold them. */
static void test_free_pages_bulk(void **state)
{
	const char *designs[] = { "v6.18", "contig-batch" };
	unsigned long frees[2];

	(void)state;
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		static struct page *pages[8 * 64 + 1];
		unsigned long nr = 0, f;
		struct page *blocks[8];

		for (int b = 0; b < 8; b++) {
			blocks[b] = alloc_pages(GFP_HIGHUSER_MOVABLE, 6);
			assert_non_null(blocks[b]);
			assert_int_equal(split_page(blocks[b], 6), 0);
		}
		/* Blocks in the order 3 1 4 0 6 2 7 5, each as two runs swapped. */
		for (int k = 0, perm[8] = { 3, 1, 4, 0, 6, 2, 7, 5 }; k < 8; k++) {
			for (int i = 32; i < 64; i++)
				pages[nr++] = blocks[perm[k]] + i;
			for (int i = 0; i < 32; i++)
				pages[nr++] = blocks[perm[k]] + i;
		}
		f = ev(m, PL_EV_PGFREE);
		assert_int_equal(free_pages_bulk(nr, pages), 0);
		frees[d] = ev(m, PL_EV_PGFREE) - f;
		assert_all_free(m);

		/* A page listed twice: the second entry is a double free, warned and skipped. */
		blocks[0] = alloc_pages(GFP_HIGHUSER_MOVABLE, 1);
		assert_int_equal(split_page(blocks[0], 1), 0);
		pages[0] = blocks[0];
		pages[1] = blocks[0] + 1;
		pages[2] = blocks[0];
		pl_warn_set_quiet(true);
		f = pl_warn_count();
		assert_int_equal(free_pages_bulk(3, pages), 1);
		assert_true(pl_warn_count() > f);
		pl_warn_set_quiet(false);
		assert_all_free(m);
		test_machine_done(m);
	}
	assert_int_equal(frees[0], 512);
	assert_int_equal(frees[1], 16);	/* one order-5 chunk per run */
}

/*
 * One-page runs (seed 000's vfree() of a one-page area) take their own
 * short path under seed 001's chunks: the same outcome as v6.18's
 * __free_page() in every case the chunked loop handles: a free page to
 * the order-0 PCP, a held page kept and counted, a poisoned page leaked.
 */
static void test_free_contig_one_page(void **state)
{
	const char *designs[] = { "v6.18", "contig-batch" };
	struct snapshot snap[2];
	int pcp_count[2];

	(void)state;
	pl_warn_set_quiet(true);
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		struct page *p[3];
		unsigned long bad = ev(m, PL_EV_BAD_PAGE), frees;
		struct per_cpu_pages *pcp;

		for (int i = 0; i < 3; i++) {
			p[i] = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
			assert_non_null(p[i]);
		}
		pcp = &page_zone(p[0])->per_cpu_pageset[0];
		pcp_count[d] = pcp->count;
		frees = ev(m, PL_EV_PGFREE);
		get_page(p[1]);
		SetPageFlag(p[2], PG_hwpoison);
		assert_int_equal(free_pages_bulk(1, &p[0]), 0);
		assert_int_equal(free_pages_bulk(1, &p[1]), 1);
		assert_int_equal(page_ref_count(p[1]), 1);
		assert_int_equal(free_pages_bulk(1, &p[2]), 0);
		assert_int_equal(ev(m, PL_EV_BAD_PAGE) - bad, 1);
		assert_int_equal(ev(m, PL_EV_PGFREE) - frees, 1);
		pcp_count[d] = pcp->count - pcp_count[d];
		/* A page no longer allocated is refused whole, and nothing changes. */
		assert_int_equal(free_pages_bulk(1, &p[0]), -EINVAL);
		assert_int_equal(pl_check_machine(m), 0);
		drain_all_pages(NULL);
		take_snapshot(m, &snap[d]);

		ClearPageFlag(p[2], PG_hwpoison);
		set_page_count(p[2], 1);
		assert_int_equal(__free_page(p[2]), 0);
		assert_int_equal(__free_page(p[1]), 0);
		assert_all_free(m);
		test_machine_done(m);
	}
	pl_warn_set_quiet(false);
	assert_int_equal(pcp_count[0], 1);
	assert_int_equal(pcp_count[1], 1);
	assert_int_equal(snap[0].len, snap[1].len);
	assert_memory_equal(snap[0].text, snap[1].text, (size_t)snap[0].len);
}

/* ---- alloc_contig_range / alloc_contig_pages ------------------------------ */

static void test_alloc_contig_range(void **state)
{
	struct pl_machine *m = contig_machine("v6.18");
	unsigned long start = SECTION_PFN - 1234, end = SECTION_PFN + 2345;
	struct snapshot before;
	struct page *cached = pfn_to_page(start + 100);

	(void)state;
	take_snapshot(m, &before);
	/* A page of the range cached on the PCP: the call's drain brings it home. */
	assert_int_equal(alloc_contig_range(start + 100, start + 101, GFP_KERNEL), 0);
	assert_int_equal(__free_page(cached), 0);
	assert_int_equal(m->node_zones[ZONE_NORMAL].per_cpu_pageset[0].count, 1);
	memset(page_address(pfn_to_page(start)), 0xaa, PAGE_SIZE);

	assert_int_equal(alloc_contig_range(start, end, GFP_KERNEL | __GFP_ZERO), 0);
	assert_int_equal(m->node_zones[ZONE_NORMAL].nr_isolate_pageblock, 0);
	assert_int_equal(pl_check_machine(m), 0);
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m), before.free_pages - (end - start));
	for (unsigned long pfn = start; pfn < end; pfn++) {
		struct page *page = pfn_to_page(pfn);

		assert_int_equal(page_ref_count(page), 1);
		assert_int_equal(page->alloc_order, 0);
		assert_false(PageBuddy(page));
	}
	assert_int_equal(((unsigned char *)page_address(pfn_to_page(start)))[17], 0);
	/* The pages are taken: a second call over part of the range is busy. */
	assert_int_equal(alloc_contig_range(end - 1, end + 1, GFP_KERNEL), -EBUSY);
	assert_int_equal(free_contig_range(start, end - start), 0);
	drain_all_pages(NULL);
	assert_unchanged(m, &before);
	assert_all_free(m);
	test_machine_done(m);
}

/* One busy page fails the whole call, leaving the free state as it was. */
static void test_alloc_contig_range_busy(void **state)
{
	const char *designs[] = { "v6.18", "all" };

	(void)state;
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = contig_machine(designs[d]);
		struct page *busy = alloc_pages(GFP_HIGHUSER_MOVABLE, 0);
		unsigned long pfn = page_to_pfn(busy);
		struct snapshot before;

		drain_all_pages(NULL);
		take_snapshot(m, &before);
		assert_int_equal(alloc_contig_range(max(pfn - 777, page_zone(busy)->zone_start_pfn),
						    min(pfn + 1000, zone_end_pfn(page_zone(busy))),
						    GFP_KERNEL), -EBUSY);
		assert_unchanged(m, &before);
		assert_int_equal(page_ref_count(busy), 1);
		/* An already isolated pageblock is busy too. */
		assert_int_equal(start_isolate_page_range(page_zone(busy),
							  ALIGN_DOWN(pfn, pageblock_nr_pages),
							  ALIGN_DOWN(pfn, pageblock_nr_pages) +
								  pageblock_nr_pages), 0);
		assert_int_equal(page_zone(busy)->nr_isolate_pageblock, 1);
		assert_int_equal(pl_check_machine(m), 0);
		assert_int_equal(alloc_contig_range(pfn + 1, pfn + 2, GFP_KERNEL), -EBUSY);
		undo_isolate_page_range(page_zone(busy), ALIGN_DOWN(pfn, pageblock_nr_pages),
					ALIGN_DOWN(pfn, pageblock_nr_pages) + pageblock_nr_pages);
		assert_unchanged(m, &before);
		assert_int_equal(__free_page(busy), 0);
		assert_all_free(m);
		test_machine_done(m);
	}
}

static void test_alloc_contig_bad_input(void **state)
{
	struct pl_machine *m = contig_machine("contig-batch");
	struct snapshot before;
	unsigned long w, max_pfn = m->max_pfn;

	(void)state;
	pl_warn_set_quiet(true);
	take_snapshot(m, &before);
	w = pl_warn_count();
	assert_refused(m, alloc_contig_range(100, 100, GFP_KERNEL), w, &before, "empty");
	w = pl_warn_count();
	assert_refused(m, alloc_contig_range(max_pfn - 1, max_pfn + 1, GFP_KERNEL), w, &before,
		       "outside the machine");
	w = pl_warn_count();
	assert_refused(m, alloc_contig_range(ZONE_PFN - 1, ZONE_PFN + 1, GFP_KERNEL), w, &before,
		       "one allowed zone");
	w = pl_warn_count();
	assert_refused(m, alloc_contig_range(SECTION_PFN, SECTION_PFN + 3, GFP_KERNEL | __GFP_COMP),
		       w, &before, "power-of-two");
	w = pl_warn_count();
	assert_refused(m, alloc_contig_range(SECTION_PFN, SECTION_PFN + 4, 0x80000000u), w, &before,
		       "gfp");
	w = pl_warn_count();
	assert_null(alloc_contig_pages(0, GFP_KERNEL));
	assert_int_equal(pl_warn_count(), w + 1);
	assert_unchanged(m, &before);
	pl_warn_set_quiet(false);
	test_machine_done(m);
}

static void test_alloc_contig_pages(void **state)
{
	struct pl_machine *m = contig_machine("contig-batch");
	struct page *page, *comp, *dma;
	struct snapshot before;

	(void)state;
	page = alloc_contig_pages(1000, GFP_KERNEL);
	assert_non_null(page);
	assert_int_equal(page_to_pfn(page), ZONE_PFN);	/* the first candidate */
	assert_int_equal(page_zonenum(page), ZONE_NORMAL);
	assert_int_equal(page_to_pfn(page) % 512, 0);
	comp = alloc_contig_pages(512, GFP_KERNEL | __GFP_COMP);
	assert_non_null(comp);
	assert_true(PageHead(comp));
	dma = alloc_contig_pages(3, GFP_KERNEL | __GFP_DMA32);
	assert_non_null(dma);
	assert_int_equal(page_zonenum(dma), ZONE_DMA32);
	assert_int_equal(pl_check_machine(m), 0);

	/*
	 * 48000 pages fit in Normal (48640) only from a start at or below
	 * 0x4480, where the 1000 pages above are busy: NULL, nothing changed.
	 */
	drain_all_pages(NULL);
	take_snapshot(m, &before);
	pl_warn_set_quiet(true);
	assert_null(alloc_contig_pages(48000, GFP_KERNEL));
	pl_warn_set_quiet(false);
	assert_unchanged(m, &before);

	assert_int_equal(free_contig_range(page_to_pfn(page), 1000), 0);
	assert_int_equal(__free_pages(comp, 9), 0);
	assert_int_equal(free_contig_range(page_to_pfn(dma), 3), 0);
	assert_all_free(m);
	test_machine_done(m);
}

/*
 * Regression (found by fuzz_ops): a compound range larger than a pageblock
 * was looked for at pageblock-aligned candidates, and the first one that
 * was not naturally aligned failed alloc_contig_range() with a bad-input
 * warning. ZONE_NORMAL starts at 0x4200: 512- but not 1024-aligned.
 */
static void test_alloc_contig_pages_compound_aligned(void **state)
{
	struct pl_machine *m = contig_machine("v6.18");
	unsigned long w = pl_warn_count();
	struct page *comp;

	(void)state;
	comp = alloc_contig_pages(1024, GFP_KERNEL | __GFP_COMP);
	assert_non_null(comp);
	assert_true(PageHead(comp));
	assert_int_equal(page_to_pfn(comp), ZONE_PFN + 512);	/* 0x4400: the first aligned one */
	assert_int_equal(pl_warn_count(), w);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(__free_pages(comp, 10), 0);
	assert_all_free(m);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_page),
		cmocka_unit_test(test_split_page_bad),
		cmocka_unit_test(test_chunks),
		cmocka_unit_test(test_chunks_zone_boundary),
		cmocka_unit_test(test_mixed_refcounts),
		cmocka_unit_test(test_differential),
		cmocka_unit_test(test_free_bad_input),
		cmocka_unit_test(test_free_pages_bulk),
		cmocka_unit_test(test_free_contig_one_page),
		cmocka_unit_test(test_alloc_contig_range),
		cmocka_unit_test(test_alloc_contig_range_busy),
		cmocka_unit_test(test_alloc_contig_bad_input),
		cmocka_unit_test(test_alloc_contig_pages),
		cmocka_unit_test(test_alloc_contig_pages_compound_aligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
