// SPDX-License-Identifier: MIT
/*
 * test_vmstat_tick.c - the replay's vmstat tick: the kernel's
 * phase read off a trace's kworker drains (tick.c), the typical run of
 * several phases (pl_tick_medoid()), and a replay ticking at its phase or
 * where the kernel's own ticks show, with bad phases and times refused.
 */
#include <stdio.h>
#include "helpers.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

/*
 * The kernel's vmstat tick phase per CPU: the start of each kworker drain
 * run modulo one second (here 0.730 s on CPU 0, and around the second's
 * wrap on CPU 1); drains of other tasks and a kworker's second drain event
 * of one run do not count; too few runs leave the phase unknown.
 */
static void test_tick_phase(void **state)
{
	char text[8192];
	size_t n = 0;
	struct pl_trace_reader *r;
	struct pl_trace_event ev;
	struct pl_tick_phase tp = { 0 };
	long p1, p2;

	(void)state;
#define LINE(...) (n += (size_t)snprintf(text + n, sizeof(text) - n, __VA_ARGS__))
	for (int s = 10; s < 16; s++) {
		if (s % 2)
			LINE("kworker/1:0-56 [001] d..2. %d.005000: mm_page_pcpu_drain: page=x pfn=0x200 order=0 migratetype=1\n", s);
		LINE("  cc1-77 [000] d..2. %d.100000: mm_page_pcpu_drain: page=x pfn=0x102 order=0 migratetype=1\n", s);
		LINE("  cc1-77 [000] ..... %d.200000: mm_page_free: page=x pfn=0x300 order=0\n", s);
		LINE("kworker/0:1-55 [000] d..2. %d.730100: mm_page_pcpu_drain: page=x pfn=0x100 order=0 migratetype=1\n", s);
		LINE("kworker/0:1-55 [000] d..2. %d.730200: mm_page_pcpu_drain: page=x pfn=0x101 order=0 migratetype=1\n", s);
		if (!(s % 2))
			LINE("kworker/1:0-56 [001] d..2. %d.995000: mm_page_pcpu_drain: page=x pfn=0x200 order=0 migratetype=1\n", s);
		LINE("  cc1-77 [001] ..... %d.999999: mm_page_free: page=x pfn=0x300 order=0\n", s);
		LINE("  cc1-77 [000] ..... %d.999999: mm_page_free: page=x pfn=0x300 order=0\n", s);
	}
	LINE("kworker/2:0-57 [002] d..2. 20.5: mm_page_pcpu_drain: page=x pfn=0x400 order=0 migratetype=1\n");
#undef LINE
	r = pl_trace_open_mem(text, n);
	while (pl_trace_next(r, &ev) > 0) {
		assert_int_equal(ev.kworker, ev.type == PL_TRACE_PCPU_DRAIN && ev.pfn != 0x102);
		assert_int_equal(pl_tick_phase_event(&tp, &ev), 0);
	}
	pl_trace_close(r);
	/* the run's start, not its second event; cc1's drains at .100 left out */
	assert_true(labs(pl_tick_phase_ns(&tp, 0) - 730100000L) < 1000);
	/* each kworker run's start, in order, for pl_replay_set_tick_times() */
	{
		const uint64_t *starts;

		assert_int_equal(pl_tick_phase_runs(&tp, 0, &starts), 6);
		for (int i = 0; i < 6; i++)
			assert_true(starts[i] == (10ull + (unsigned)i) * 1000000000ull + 730100000ull);
		assert_int_equal(pl_tick_phase_runs(&tp, 1, &starts), 6);
		assert_int_equal(pl_tick_phase_runs(&tp, 40, &starts), 0);
		assert_null(starts);
	}
	/* .995 and .005: 0 ms, not 500 */
	p1 = pl_tick_phase_ns(&tp, 1);
	assert_true(p1 < 5000000L || p1 > 995000000L);
	/*
	 * CPU 2's one run is too few of its own, and CPU 9 has none: both take
	 * the phase of all CPUs' runs together (the ticks share one grid), which
	 * is CPU 0's or CPU 1's, not CPU 2's lone run at .5.
	 */
	p2 = pl_tick_phase_ns(&tp, 2);
	assert_int_equal(pl_tick_phase_ns(&tp, 9), p2);
	assert_true(labs(p2 - 730100000L) < 10000000L || p2 < 10000000L || p2 > 990000000L);
	pl_tick_phase_release(&tp);

	/* a short trace: one kworker drain on CPU 0 gives every CPU its phase */
	n = (size_t)snprintf(text, sizeof(text), "kworker/0:1-55 [000] d..2. 7.110000: "
			     "mm_page_pcpu_drain: page=x pfn=0x100 order=0 migratetype=1\n");
	r = pl_trace_open_mem(text, n);
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_tick_phase_event(&tp, &ev), 0);
	pl_trace_close(r);
	assert_true(labs(pl_tick_phase_ns(&tp, 0) - 110000000L) < 1000);
	assert_int_equal(pl_tick_phase_ns(&tp, 1), pl_tick_phase_ns(&tp, 0));
	pl_tick_phase_release(&tp);
	/* no kworker drain at all: no phase */
	assert_int_equal(pl_tick_phase_ns(&tp, 0), -1);
}

/* Four runs' figures: the given drain calls and what follows from them. */
static void medoid_runs(struct pl_trace_score runs[4], const unsigned long drains[4])
{
	memset(runs, 0, 4 * sizeof(runs[0]));
	for (int i = 0; i < 4; i++) {
		runs[i].pcp_refills = 8100;
		runs[i].pcp_refill_pages = 8100 * 65;
		runs[i].pcp_drain_calls = drains[i];
		runs[i].pcp_drained_pages = drains[i] * 270;
		runs[i].buddy_direct_allocs = 800;
	}
}

/*
 * With no phase in the trace a replay runs at four and reports the
 * typical one: the run nearest the median of all four, not the outlier
 * (untar's tick at 20-36 ms: 1,166 drain calls against 106-181), nor the
 * first; the earliest of equals. Bad input: -EINVAL and one warning.
 */
static void test_tick_medoid(void **state)
{
	struct pl_trace_score runs[4];
	unsigned long w;

	(void)state;
	/* the middle two are as near on drains; run 2's refills are off */
	medoid_runs(runs, (const unsigned long[4]){ 1166, 106, 177, 172 });
	runs[2].pcp_refills = 8300;
	assert_int_equal(pl_tick_medoid(runs, 4), 3);
	medoid_runs(runs, (const unsigned long[4]){ 172, 106, 177, 1166 });
	runs[2].pcp_refills = 8300;
	assert_int_equal(pl_tick_medoid(runs, 4), 0);
	/* every figure counts: the same drains, but run 0 refilled far more */
	medoid_runs(runs, (const unsigned long[4]){ 150, 150, 150, 150 });
	runs[0].pcp_refills = 20000;
	assert_int_equal(pl_tick_medoid(runs, 4), 1);
	/* one run is its own median; three take the middle one */
	assert_int_equal(pl_tick_medoid(runs, 1), 0);
	medoid_runs(runs, (const unsigned long[4]){ 300, 10, 150, 0 });
	assert_int_equal(pl_tick_medoid(runs, 3), 2);
	/* all alike: the earliest */
	medoid_runs(runs, (const unsigned long[4]){ 0, 0, 0, 0 });
	assert_int_equal(pl_tick_medoid(runs, 4), 0);

	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_int_equal(pl_tick_medoid(NULL, 4), -EINVAL);
	assert_int_equal(pl_tick_medoid(runs, 0), -EINVAL);
	assert_int_equal(pl_tick_medoid(runs, PL_TICK_PROBES + 1), -EINVAL);
	assert_int_equal(pl_warn_count(), w + 3);
	pl_warn_set_quiet(false);
}

/*
 * A vCPU ticks at its phase: pcp->high above high_min decays by an eighth
 * at the tick, at 10.4 s with a phase of 400 ms, at 11.0 s by default. A
 * bad phase, or one set once the replay has started, changes nothing.
 */
static void test_replay_tick_phase(void **state)
{
	for (int phased = 0; phased <= 1; phased++) {
		struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
		struct zone *zone = &m->node_zones[ZONE_NORMAL];
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[0];
		struct pl_replay *rp = pl_replay_create(m, NULL);
		struct pl_trace_event ev = { .type = PL_TRACE_PURGE_VMAP_AREA };
		unsigned long w;
		int high;

		(void)state;
		assert_int_equal(pl_pcp_set_high_batch(zone, 0, pcp->high_max, pcp->batch), 0);
		high = pcp->high;
		assert_true(high > pcp->high_min);
		pl_warn_set_quiet(true);
		w = pl_warn_count();
		assert_int_equal(pl_replay_set_tick_phase(rp, 1, 0), -EINVAL);	/* no vCPU 1 */
		assert_int_equal(pl_replay_set_tick_phase(rp, 0, 1000000000L), -EINVAL);
		assert_int_equal(pl_replay_set_tick_phase(rp, 0, -5), -EINVAL);
		assert_int_equal(pl_warn_count(), w + 3);
		if (phased)
			assert_int_equal(pl_replay_set_tick_phase(rp, 0, 400000000L), 0);
		ev.ts_ns = 10000000000ull;
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		assert_int_equal(pl_replay_set_tick_phase(rp, 0, 0), -EINVAL);	/* started */
		pl_warn_set_quiet(false);
		ev.ts_ns = 10500000000ull;
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		assert_int_equal(pcp->high, phased ? high - (high >> 3) : high);
		ev.ts_ns = 11000000000ull;
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		assert_int_equal(pcp->high, high - (high >> 3));
		assert_int_equal(pl_check_machine(m), 0);
		pl_replay_destroy(rp, true);
		test_machine_done(m);
	}
}

/*
 * Where the kernel's kworker drains show its tick, a vCPU ticks there: a
 * time within PL_TICK_WINDOW_NS of the phase (400 ms) moves that second's
 * tick to it, earlier (10.37 s) or later (12.43 s); one further off (11.47
 * s) is not that tick. Bad times change nothing.
 */
static void test_replay_tick_times(void **state)
{
	static const uint64_t times[] = { 10370000000ull, 11470000000ull, 12430000000ull };
	static const uint64_t backwards[] = { 2, 1 };
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	struct per_cpu_pages *pcp = &zone->per_cpu_pageset[0];
	struct pl_replay *rp = pl_replay_create(m, NULL);
	struct pl_trace_event ev = { .type = PL_TRACE_PURGE_VMAP_AREA };
	/* the high after each tick, and the events (ms) and how many ticks they see */
	static const struct { uint64_t ms; int ticks; } at[] = {
		{ 10000, 0 }, { 10360, 0 }, { 10370, 1 }, { 11399, 1 }, { 11400, 2 }, { 11470, 2 },
		{ 12420, 2 }, { 12429, 2 }, { 12430, 3 }, { 13400, 4 },
	};
	int high[5];
	unsigned long w;

	(void)state;
	assert_int_equal(pl_pcp_set_high_batch(zone, 0, pcp->high_max, pcp->batch), 0);
	high[0] = pcp->high;
	for (int i = 1; i < 5; i++)
		high[i] = max(high[i - 1] - (high[i - 1] >> 3), pcp->high_min);
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_int_equal(pl_replay_set_tick_times(rp, 1, times, 3), -EINVAL);	/* no vCPU 1 */
	assert_int_equal(pl_replay_set_tick_times(rp, 0, backwards, 2), -EINVAL);
	assert_int_equal(pl_replay_set_tick_times(rp, 0, NULL, 2), -EINVAL);
	assert_int_equal(pl_warn_count(), w + 3);
	assert_int_equal(pl_replay_set_tick_phase(rp, 0, 400000000L), 0);
	assert_int_equal(pl_replay_set_tick_times(rp, 0, times, 3), 0);
	for (size_t i = 0; i < ARRAY_SIZE(at); i++) {
		ev.ts_ns = at[i].ms * 1000000ull;
		assert_int_equal(pl_replay_event(rp, &ev), 0);
		assert_int_equal(pcp->high, high[at[i].ticks]);
		if (!i)		/* started */
			assert_int_equal(pl_replay_set_tick_times(rp, 0, times, 3), -EINVAL);
	}
	assert_int_equal(pl_warn_count(), w + 4);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_tick_phase),
		cmocka_unit_test(test_tick_medoid),
		cmocka_unit_test(test_replay_tick_phase),
		cmocka_unit_test(test_replay_tick_times),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
