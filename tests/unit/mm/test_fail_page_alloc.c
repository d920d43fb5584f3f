// SPDX-License-Identifier: MIT
/*
 * test_fail_page_alloc.c - fault injection (fail_page_alloc): each knob
 * (probability, interval, times, space, min-order, ignore-gfp-wait,
 * verbose/__GFP_NOWARN, seed) does what the kernel's documentation says,
 * the knob parser accepts the kernel's names and refuses the rest, and no
 * failure leaves partial state: an injected failure leaves the machine
 * byte-identical (buddyinfo, pagetypeinfo, zoneinfo with every PCP count),
 * a genuine one leaves the checker clean, and after freeing everything the
 * machine is fully coalesced with allocations and frees balanced.
 */
#include "helpers.h"

/* Injection on every eligible call: probability 100, no limit, silent. */
static void attr_always(struct pl_fault_attr *a)
{
	pl_fault_attr_default(a);
	a->probability = 100;
	a->times = -1;
	a->min_order = 0;
	a->ignore_gfp_reclaim = false;
	a->verbose = 0;
}

static unsigned long event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

static unsigned long injected(struct pl_machine *m)
{
	struct pl_fault_stats st;

	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, NULL, &st), 0);
	return st.injected;
}

/* The whole visible state, PCPs included. */
struct full_snapshot {
	char text[32768];
	long len;
};

static void take_full(struct pl_machine *m, struct full_snapshot *s)
{
	long a = pl_show_buddyinfo(m, s->text, sizeof(s->text));
	long b, c;

	assert_true(a > 0);
	b = pl_show_pagetypeinfo(m, s->text + a, sizeof(s->text) - (size_t)a);
	assert_true(b > 0);
	c = pl_show_zoneinfo(m, s->text + a + b, sizeof(s->text) - (size_t)(a + b));
	assert_true(c > 0);
	s->len = a + b + c;
}

static void assert_full_unchanged(struct pl_machine *m, const struct full_snapshot *before)
{
	static struct full_snapshot now;

	take_full(m, &now);
	assert_int_equal(now.len, before->len);
	assert_memory_equal(now.text, before->text, (size_t)now.len);
}

static void test_default_is_off(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct pl_fault_attr a;

	(void)state;
	pl_fault_attr_default(&a);
	assert_int_equal(a.probability, 0);
	assert_int_equal(a.interval, 1);
	assert_int_equal(a.times, 1);
	assert_int_equal(a.min_order, 1);
	assert_true(a.ignore_gfp_reclaim);
	a.ignore_gfp_reclaim = false;
	a.min_order = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	for (unsigned int i = 0; i < 200; i++) {
		struct page *p = alloc_pages(GFP_ATOMIC, i % 4);

		assert_non_null(p);
		assert_int_equal(__free_pages(p, i % 4), 0);
	}
	assert_int_equal(injected(m), 0);
	test_machine_done(m);
}

/* Every order and gfp class fails, the machine unchanged, NULL each time. */
static void test_always_fails_cleanly(void **state)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_DMA32,
				      GFP_KERNEL | __GFP_COMP | __GFP_ZERO };
	static struct full_snapshot before;
	struct pl_machine *m = test_machine("all");
	struct page *keep = alloc_pages(GFP_KERNEL, 0); /* a PCP with pages on it */
	unsigned long fails = event(m, PL_EV_ALLOC_FAIL), allocs = event(m, PL_EV_PGALLOC);
	unsigned long warns = pl_warn_count(), n = 0;
	struct pl_fault_attr a;

	(void)state;
	attr_always(&a);
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	take_full(m, &before);
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++) {
		for (unsigned int g = 0; g < ARRAY_SIZE(gfps); g++, n++)
			assert_null(alloc_pages(gfps[g], o));
		assert_int_equal(__get_free_pages(GFP_KERNEL, o), 0);
		n++;
	}
	assert_int_equal(get_zeroed_page(GFP_KERNEL), 0);
	n++;
	assert_full_unchanged(m, &before);
	assert_int_equal(injected(m), n);
	assert_int_equal(event(m, PL_EV_ALLOC_FAIL), fails + n);
	assert_int_equal(event(m, PL_EV_PGALLOC), allocs);
	assert_int_equal(pl_warn_count(), warns); /* verbose 0 */
	assert_int_equal(pl_check_machine(m), 0);

	/* Bad input is still refused as bad input, not as an injected failure. */
	pl_warn_set_quiet(true);
	assert_null(alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1));
	pl_warn_set_quiet(false);
	assert_int_equal(injected(m), n);

	a.probability = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(__free_pages(keep, 0), 0);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_verbose_honours_nowarn(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct pl_fault_attr a;
	unsigned long warns;
	char last[256];

	(void)state;
	attr_always(&a);
	a.verbose = 1;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	pl_warn_set_quiet(true);
	warns = pl_warn_count();
	assert_null(alloc_pages(GFP_KERNEL | __GFP_NOWARN, 2));
	assert_int_equal(pl_warn_count(), warns);
	assert_null(alloc_pages(GFP_KERNEL, 2));
	assert_int_equal(pl_warn_count(), warns + 1);
	pl_warn_last(last, sizeof(last));
	pl_warn_set_quiet(false);
	if (!strstr(last, "FAULT_INJECTION") || !strstr(last, "order:2"))
		fail_msg("warning '%s'", last);
	test_machine_done(m);
}

/* Run @n order-@order allocations; bit i of the result: call i failed. */
static uint64_t fail_pattern(unsigned int n, unsigned int order, gfp_t gfp)
{
	uint64_t bits = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct page *p = alloc_pages(gfp | __GFP_NOWARN, order);

		if (!p)
			bits |= 1ULL << i;
		else
			assert_int_equal(__free_pages(p, order), 0);
	}
	return bits;
}

static void test_interval_times_space(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct pl_fault_attr a, now;
	struct pl_fault_stats st;

	(void)state;
	/* interval 4: exactly the 4th, 8th, ... eligible calls fail. */
	attr_always(&a);
	a.interval = 4;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(fail_pattern(20, 0, GFP_KERNEL), 0x88888);

	/* times 3: the first three fail, then never again; times counts down. */
	attr_always(&a);
	a.times = 3;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(fail_pattern(10, 1, GFP_KERNEL), 0x7);
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, &now, &st), 0);
	assert_int_equal(now.times, 0);
	assert_int_equal(st.injected, 3);

	/* space 10 pages: calls pass while the budget exceeds their size. */
	attr_always(&a);
	a.space = 10 * PAGE_SIZE;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(fail_pattern(12, 0, GFP_KERNEL), 0xe00);
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, &now, NULL), 0);
	assert_int_equal(now.space, PAGE_SIZE);

	/* Order-2 calls use the budget four pages at a time. */
	a.space = 10 * PAGE_SIZE;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(fail_pattern(4, 2, GFP_KERNEL), 0xc);
	test_machine_done(m);
}

static void test_filters(void **state)
{
	struct pl_machine *m = test_machine("pcp-owner");
	struct pl_fault_attr a;
	struct pl_fault_stats st;

	(void)state;
	/* min-order 3: orders 0..2 never fail, 3..MAX always. */
	attr_always(&a);
	a.min_order = 3;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	for (unsigned int o = 0; o <= MAX_PAGE_ORDER; o++)
		assert_int_equal(fail_pattern(3, o, GFP_KERNEL), o < 3 ? 0 : 7);

	/* ignore-gfp-wait: calls that may sleep pass and are not counted. */
	attr_always(&a);
	a.ignore_gfp_reclaim = true;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	assert_int_equal(fail_pattern(8, 0, GFP_KERNEL), 0);
	assert_int_equal(fail_pattern(8, 0, GFP_HIGHUSER_MOVABLE), 0);
	assert_int_equal(fail_pattern(8, 0, GFP_ATOMIC), 0xff);
	assert_int_equal(fail_pattern(8, 0, GFP_NOWAIT), 0xff);
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, NULL, &st), 0);
	assert_int_equal(st.calls, 16);
	assert_int_equal(st.injected, 16);
	test_machine_done(m);
}

/* probability: seeded, repeatable, about the asked share. */
static void test_probability_is_seeded(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct pl_fault_attr a;
	uint64_t p1, p2, p3;

	(void)state;
	attr_always(&a);
	a.probability = 30;
	a.seed = 7;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	p1 = fail_pattern(64, 0, GFP_KERNEL);
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	p2 = fail_pattern(64, 0, GFP_KERNEL);
	a.seed = 8;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	p3 = fail_pattern(64, 0, GFP_KERNEL);
	assert_int_equal(p1, p2);
	assert_int_not_equal(p1, p3);
	/* 64 draws at 30%: 19 expected; [6, 34] is beyond 4 standard deviations. */
	assert_in_range(__builtin_popcountll(p1), 6, 34);
	assert_in_range(__builtin_popcountll(p3), 6, 34);
	test_machine_done(m);
}

static void test_parse_and_validate(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct pl_fault_attr a, before;

	(void)state;
	pl_fault_attr_default(&a);
	assert_int_equal(pl_fault_attr_parse(&a, "probability=25,interval=3,times=-1,space=4096,"
					     "min-order=2,ignore-gfp-wait=N,verbose=0,seed=0x10"),
			 0);
	assert_int_equal(a.probability, 25);
	assert_int_equal(a.interval, 3);
	assert_int_equal(a.times, -1);
	assert_int_equal(a.space, 4096);
	assert_int_equal(a.min_order, 2);
	assert_false(a.ignore_gfp_reclaim);
	assert_int_equal(a.verbose, 0);
	assert_int_equal(a.seed, 16);
	assert_int_equal(pl_fault_attr_parse(&a, "min_order=4,ignore_gfp_wait=Y"), 0);
	assert_int_equal(a.min_order, 4);
	assert_true(a.ignore_gfp_reclaim);

	pl_warn_set_quiet(true);
	before = a;
	static const char *const bad[] = {
		"probability=101", "interval=0",   "times=-2",	  "space=-1", "verbose=3",
		"ignore-gfp-wait=maybe", "nosuch=1", "probability", "times=1x", "seed=-1",
	};
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		if (pl_fault_attr_parse(&a, bad[i]) != -EINVAL)
			fail_msg("'%s' accepted", bad[i]);
		assert_memory_equal(&a, &before, sizeof(a));
	}
	/* An invalid attribute set is refused and changes nothing. */
	a.probability = 200;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), -EINVAL);
	a = before;
	a.interval = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), -EINVAL);
	assert_int_equal(pl_fault_set(m, NR_PL_FAULT_SITES, &before), -EINVAL);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, &a, NULL), 0);
	assert_int_equal(a.probability, 0);
	test_machine_done(m);
}

#define LIVE_MAX 20000

struct live {
	struct page *page;
	unsigned int order;
};

/*
 * A random workload with a quarter of the calls failed by injection, run
 * until memory is exhausted, then everything freed: every injected failure
 * leaves the machine byte-identical, genuine ones leave the checker clean,
 * and at the end allocations and frees balance and memory is whole again.
 */
static void run_no_partial_state(const char *design, bool pcp_disabled, uint64_t seed)
{
	static const gfp_t gfps[] = { GFP_KERNEL, GFP_ATOMIC, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_DMA32,
				      GFP_KERNEL | __GFP_COMP | __GFP_ZERO };
	static struct live live[LIVE_MAX];
	static struct full_snapshot before;
	unsigned long nr_live = 0, allocs = 0, inj = 0, genuine = 0, fail0, pgalloc0, pgfree0;
	struct pl_fault_attr a;
	struct pl_machine *m;
	struct pl_config cfg;
	struct pl_rng rng;

	pl_config_default(&cfg);
	cfg.mem_bytes = 32 * MiB;
	cfg.dma32_bytes = 8 * MiB;
	cfg.nr_cpus = 2;
	cfg.pcp_disabled = pcp_disabled;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	pl_enter(m, 0);
	fail0 = event(m, PL_EV_ALLOC_FAIL);
	pgalloc0 = event(m, PL_EV_PGALLOC);
	pgfree0 = event(m, PL_EV_PGFREE);
	attr_always(&a);
	a.probability = 25;
	a.seed = seed;
	assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
	pl_rng_seed(&rng, seed);

	for (unsigned long step = 0; nr_live < LIVE_MAX; step++) {
		bool fill = step > 3000; /* then allocate only, until memory runs out */
		unsigned int order = pl_rng_below(&rng, 6) ? (unsigned int)pl_rng_below(&rng, 4)
							     : (unsigned int)pl_rng_below(&rng, 11);
		gfp_t gfp = gfps[pl_rng_below(&rng, ARRAY_SIZE(gfps))] | __GFP_NOWARN;
		unsigned long inj_before = injected(m);
		struct page *p;

		/* Both vCPUs: frees cross to the other one's PCP. */
		pl_enter(m, (unsigned int)pl_rng_below(&rng, 2));
		if (!fill && nr_live && pl_rng_below(&rng, 100) < 45) {
			unsigned long i = pl_rng_below(&rng, nr_live);

			assert_int_equal(__free_pages(live[i].page, live[i].order), 0);
			live[i] = live[--nr_live];
			continue;
		}
		take_full(m, &before);
		p = alloc_pages(gfp, order);
		if (p) {
			live[nr_live++] = (struct live){ p, order };
			allocs++;
			continue;
		}
		if (injected(m) == inj_before + 1) {
			inj++;
			assert_full_unchanged(m, &before);
		} else {
			assert_int_equal(injected(m), inj_before);
			genuine++;
			assert_int_equal(pl_check_machine(m), 0);
			if (fill && order == 0)
				break; /* not even a page: memory is exhausted */
		}
		if (step % 512 == 0)
			assert_int_equal(pl_check_machine(m), 0);
	}
	assert_true(inj > 100);
	assert_true(genuine > 0);
	assert_int_equal(event(m, PL_EV_ALLOC_FAIL) - fail0, inj + genuine);
	assert_int_equal(event(m, PL_EV_PGALLOC) - pgalloc0, allocs);
	assert_int_equal(pl_check_machine(m), 0);

	while (nr_live) {
		nr_live--;
		pl_enter(m, (unsigned int)(nr_live % 2));
		assert_int_equal(__free_pages(live[nr_live].page, live[nr_live].order), 0);
	}
	assert_int_equal(event(m, PL_EV_PGFREE) - pgfree0, allocs);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

static void test_no_partial_state(void **state)
{
	(void)state;
	run_no_partial_state("v6.18", false, 1);
	run_no_partial_state("pcp-owner", false, 2);
	run_no_partial_state("all", false, 3);
	run_no_partial_state("mt-counts", true, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_default_is_off),
		cmocka_unit_test(test_always_fails_cleanly),
		cmocka_unit_test(test_verbose_honours_nowarn),
		cmocka_unit_test(test_interval_times_space),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_probability_is_seeded),
		cmocka_unit_test(test_parse_and_validate),
		cmocka_unit_test(test_no_partial_state),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
