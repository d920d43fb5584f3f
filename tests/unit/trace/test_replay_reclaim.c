// SPDX-License-Identifier: MIT
/*
 * test_replay_reclaim.c - a replay of a trace recorded under reclaim:
 * kswapd's runs where the kernel's kswapd ran (its own events start a run,
 * ZONE_RECLAIM_ACTIVE while it lasts, the boost it found dropped at its
 * end), the trace readers' kswapd mark, and whose PCP the positional
 * loader says a drained page was on when drain_all_pages() drained it
 * from another CPU (pl_positional_pcp_owners()).
 */
#include "helpers.h"
#include "mm/internal.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "trace_fixtures.h"

/* Every populated zone of @m has ZONE_RECLAIM_ACTIVE (@on) or none has. */
static void assert_reclaim_active(struct pl_machine *m, bool on)
{
	struct zone *zone;

	for_each_populated_zone(zone, m)
		assert_int_equal(zone_test_flag(zone, ZONE_RECLAIM_ACTIVE), on);
}

static unsigned long kswapd_runs(struct pl_machine *m)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[PL_EV_KSWAPD_RUN];
}

/* A loaded replay of @text whose Normal zone has a fallback claim's boost; returns Normal. */
static struct zone *boosted_replay_start(struct loaded_replay *lr, const char *text, size_t len)
{
	struct zone *normal;

	loaded_replay_start(lr, text, len);
	normal = &lr->m->node_zones[ZONE_NORMAL];
	normal->watermark_boost = pageblock_nr_pages;
	return normal;
}

/*
 * kswapd's own events (task kswapd0) start a run: the zones are
 * ZONE_RECLAIM_ACTIVE and keep their boost while it lasts, the vmstat
 * tick's kswapd model stands aside, and a millisecond without kswapd
 * events ends it, which drops the boost the zones had at its start.
 */
static void test_replay_kswapd_run(void **state)
{
	static const char text[] =
		"  cc1-1 [000] ..... 1.000000: mm_page_alloc: page=x pfn=0x123460 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  cc1-1 [000] ..... 1.000100: mm_page_alloc: page=x pfn=0x123461 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  kswapd0-80 [001] ..... 1.100000: mm_page_free: page=x pfn=0x123460 order=0\n"
		"  kswapd0-80 [001] ..... 1.100500: mm_page_free: page=x pfn=0x123461 order=0\n"
		"  cc1-1 [000] ..... 1.101000: mm_page_alloc: page=x pfn=0x123462 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  cc1-1 [000] ..... 1.102000: mm_page_alloc: page=x pfn=0x123463 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	struct zone *normal;
	int n = 0;

	(void)state;
	normal = boosted_replay_start(&lr, text, sizeof(text) - 1);
	while (pl_trace_next(lr.r, &ev) > 0) {
		assert_int_equal(ev.kswapd, n == 2 || n == 3);
		assert_int_equal(pl_replay_event(lr.rp, &ev), 0);
		switch (++n) {
		case 2:	/* other tasks' events: no run */
			assert_reclaim_active(lr.m, false);
			assert_int_equal(kswapd_runs(lr.m), 0);
			break;
		case 3:
			assert_reclaim_active(lr.m, true);
			assert_int_equal(kswapd_runs(lr.m), 1);
			pl_enter(lr.m, 1);
			pl_vmstat_tick();	/* the tick's kswapd waits for the traced run */
			assert_int_equal(normal->watermark_boost, pageblock_nr_pages);
			assert_reclaim_active(lr.m, true);
			break;
		case 5:	/* 0.5 ms after kswapd's last event: still running */
			assert_reclaim_active(lr.m, true);
			assert_int_equal(normal->watermark_boost, pageblock_nr_pages);
			break;
		case 6:	/* 1.5 ms: the run ended and took its boost */
			assert_reclaim_active(lr.m, false);
			assert_int_equal(normal->watermark_boost, 0);
			assert_int_equal(kswapd_runs(lr.m), 1);
			break;
		}
	}
	assert_int_equal(n, 6);
	loaded_replay_end(&lr);
}

/* A trace that ends inside a kswapd run leaves no zone reclaim-active. */
static void test_replay_kswapd_run_open_at_end(void **state)
{
	static const char text[] =
		"  kswapd0-80 [001] ..... 1.100000: mm_page_free: page=x pfn=0x123460 order=0\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;

	(void)state;
	loaded_replay_start(&lr, text, sizeof(text) - 1);
	pl_warn_set_quiet(true);
	while (pl_trace_next(lr.r, &ev) > 0)
		pl_replay_event(lr.rp, &ev);
	pl_warn_set_quiet(false);
	assert_reclaim_active(lr.m, true);
	pl_replay_destroy(lr.rp, true);
	lr.rp = NULL;
	assert_reclaim_active(lr.m, false);
	assert_false(lr.m->kswapd_traced);
	assert_int_equal(pl_check_machine(lr.m), 0);
	pl_trace_close(lr.r);
	pl_state_release(lr.st);
	pl_machine_destroy(lr.m);
}

/*
 * Between traced runs, a kswapd that pagelab woke runs at the replay's
 * next event and drops the boost it finds: the kernel's would have run
 * moments after its wakeup. Not woken, the boost stays.
 */
static void test_replay_kswapd_woken_between_runs(void **state)
{
	static const char text[] =
		"  cc1-1 [000] ..... 1.000000: mm_page_alloc: page=x pfn=0x123460 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  cc1-1 [000] ..... 1.000100: mm_page_alloc: page=x pfn=0x123461 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  cc1-1 [000] ..... 1.000200: mm_page_alloc: page=x pfn=0x123462 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	struct zone *normal;
	int n = 0;

	(void)state;
	normal = boosted_replay_start(&lr, text, sizeof(text) - 1);
	while (pl_trace_next(lr.r, &ev) > 0) {
		assert_int_equal(pl_replay_event(lr.rp, &ev), 0);
		switch (++n) {
		case 1:	/* boosted, but kswapd not woken: no run */
			assert_int_equal(normal->watermark_boost, pageblock_nr_pages);
			assert_int_equal(kswapd_runs(lr.m), 0);
			wakeup_kswapd(normal, 0, ZONE_NORMAL);	/* as rmqueue() does */
			assert_true(zone_test_flag(normal, ZONE_KSWAPD_PENDING));
			break;
		case 2:	/* the next event ran it, without waiting for the tick */
			assert_int_equal(kswapd_runs(lr.m), 1);
			assert_int_equal(normal->watermark_boost, 0);
			assert_false(zone_test_flag(normal, ZONE_KSWAPD_PENDING));
			assert_reclaim_active(lr.m, false);
			break;
		case 3:	/* once per wakeup */
			assert_int_equal(kswapd_runs(lr.m), 1);
			break;
		}
	}
	assert_int_equal(n, 3);
	loaded_replay_end(&lr);
}

/* The readers mark kswapd's task in each format; a lookalike is not it. */
static void test_kswapd_mark(void **state)
{
	static const struct {
		const char *line;
		bool kswapd;
	} cases[] = {
		{ "  kswapd0-80 [001] ..... 1.0: mm_page_free: page=x pfn=0x10 order=0\n", true },
		{ "  kswapd1-81 [000] d..1. 1.0: mm_page_free: page=x pfn=0x10 order=0\n", true },
		{ "  kswapd0-80  [001]  1.0: mm_page_free:        page=x pfn=0x10 order=0\n", true },
		{ "  kswapd0    80 [001]  1.0:   kmem:mm_page_free: page=0x10 pfn=0x10 order=0\n", true },
		{ "  kcompactd0-79 [001] ..... 1.0: mm_page_free: page=x pfn=0x10 order=0\n", false },
		{ "  kswap-12 [001] ..... 1.0: mm_page_free: page=x pfn=0x10 order=0\n", false },
		{ "  cc1-1 [001] ..... 1.0: mm_page_free: page=x pfn=0x10 order=0\n", false },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct pl_trace_reader *r = pl_trace_open_mem(cases[i].line, strlen(cases[i].line));
		struct pl_trace_event ev;

		assert_non_null(r);
		assert_int_equal(pl_trace_next(r, &ev), 1);
		assert_int_equal(ev.type, PL_TRACE_PAGE_FREE);
		assert_int_equal(ev.kswapd, cases[i].kswapd);
		pl_trace_close(r);
	}
}

/* The positional sightings of CPU 0 draining six pages, then allocating one. */
static void sight_drain_all(struct pl_positional *pos)
{
	static const char text[] =
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1000 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1001 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1002 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1003 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1004 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.0: mm_page_pcpu_drain: page=x pfn=0x1005 order=0 migratetype=1\n"
		"  a-1 [000] ..... 1.1: mm_page_alloc: page=x pfn=0x2000 order=0 migratetype=1 gfp_flags=GFP_KERNEL\n"
		"  a-1 [000] ..... 1.2: mm_page_pcpu_drain: page=x pfn=0x9000 order=0 migratetype=1\n";
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_trace_event ev;

	memset(pos, 0, sizeof(*pos));
	assert_non_null(r);
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(pos, &ev), 0);
	pl_trace_close(r);
	assert_int_equal(pos->nr, 8);
	assert_true(pos->rec[0].drained);
	assert_false(pos->rec[6].drained);	/* allocations are always local */
}

/*
 * CPU 0 sighted seven pages on its PCP where zoneinfo counted three: the
 * excess beyond its batch came off CPU 1's PCP (drain_all_pages()), the
 * latest drained first; its allocation stays. A pfn outside the zone
 * keeps its CPU; a small excess or no room moves nothing.
 */
static void test_pcp_owners(void **state)
{
	static const int batch1[2] = { 1, 1 }, batch4[2] = { 4, 4 };
	static const int room4[2] = { 3, 4 }, room1[2] = { 3, 1 };
	struct pl_positional pos;
	unsigned short owner[8];

	(void)state;
	sight_drain_all(&pos);
	memset(owner, 0xff, sizeof(owner));
	assert_int_equal(pl_positional_pcp_owners(&pos, 0x1000, 0x3000, room4, batch1, 2, owner), 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(owner[i], 0);
	for (int i = 3; i < 6; i++)
		assert_int_equal(owner[i], 1);
	assert_int_equal(owner[6], 0);
	assert_int_equal(owner[7], 0xffff);	/* outside [0x1000, 0x3000): not filled */

	/* an excess within the batch: the snapshot's moment, not another PCP */
	assert_int_equal(pl_positional_pcp_owners(&pos, 0x1000, 0x3000, room4, batch4, 2, owner), 0);
	for (int i = 0; i < 7; i++)
		assert_int_equal(owner[i], 0);

	/* room for one page on CPU 1: one moves */
	assert_int_equal(pl_positional_pcp_owners(&pos, 0x1000, 0x3000, room1, batch1, 2, owner), 1);
	assert_int_equal(owner[5], 1);
	assert_int_equal(owner[4], 0);

	/* one CPU: nowhere to move */
	assert_int_equal(pl_positional_pcp_owners(&pos, 0x1000, 0x3000, room4, batch1, 1, owner), 0);
	pl_positional_release(&pos);
}

/*
 * Loaded from a snapshot whose CPU 0 holds 2 pages on Normal's PCP and CPU 1
 * 200, a trace whose first events are CPU 0 draining 70 pages, then
 * allocating one off its PCP: 71 sighted, and the 6 beyond CPU 0's count
 * and a batch (the latest drained) were CPU 1's, drained from CPU 0 by
 * drain_all_pages(). The loader puts those 6 on CPU 1's PCP, and the
 * replay, knowing it, replays the run as one drain_all_pages().
 */
static void test_replay_drain_all_from_the_start(void **state)
{
	char dir[] = "/tmp/pagelab-owners-XXXXXX", cmd[8600];
	char *text = malloc(70 * 96 + 256);
	size_t len = 0;
	const unsigned long *pfn;
	const unsigned short *cpu;
	struct pl_positional pos;
	struct pl_snapshot snap;
	struct pl_loaded_state *st;
	struct pl_trace_reader *r;
	struct pl_replay *rp;
	struct pl_trace_event ev;
	struct pl_machine *m;
	size_t n, on1 = 0;

	(void)state;
	assert_non_null(text);
	assert_non_null(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd), "cp %s/* %s/ && sed -i 's/count:    46316/count:    2/; "
		 "s/count:    8115/count:    200/' %s/zoneinfo", fixture_path("snapshot-6.18"), dir, dir);
	assert_int_equal(system(cmd), 0);
	for (int i = 0; i < 70; i++)
		len += (size_t)sprintf(text + len, "  b-2 [000] ..... 1.0: mm_page_pcpu_drain: page=x "
				       "pfn=0x%x order=0 migratetype=1\n", 0x160000 + 2 * i);
	len += (size_t)sprintf(text + len, "  b-2 [000] ..... 1.1: mm_page_alloc: page=x pfn=0x170000 "
			       "order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n");

	memset(&pos, 0, sizeof(pos));
	r = pl_trace_open_mem(text, len);
	assert_non_null(r);
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(&pos, &ev), 0);
	pl_trace_close(r);
	assert_int_equal(pl_snapshot_read(dir, &snap), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
	m = positional_machine(&snap, &pos, &st);

	/* the last six drained pages went on CPU 1's PCP */
	n = pl_state_pcp_sighted(st, &pfn, &cpu);
	for (size_t i = 0; i < n; i++)
		if (cpu[i] == 1) {
			assert_true(pfn[i] >= 0x160000 + 2 * 64);
			on1++;
		}
	assert_int_equal(on1, 6);

	r = pl_trace_open_mem(text, len);
	rp = pl_replay_create(m, st);
	assert_non_null(rp);
	pl_warn_set_quiet(true);
	while (pl_trace_next(r, &ev) > 0)
		pl_replay_event(rp, &ev);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_replay_warnings(rp)[PL_TW_drain_all_replayed], 1);
	assert_int_equal(pl_check_machine(m), 0);
	pl_replay_destroy(rp, true);
	pl_trace_close(r);
	pl_state_release(st);
	pl_positional_release(&pos);
	pl_machine_destroy(m);
	free(text);
}

/*
 * A drain on CPU 0 of a page CPU 1's PCP got at another order is not a
 * drain_all_pages(): the kernel moved that page without an event the
 * replay follows, so the sighting is stale. At the order CPU 1 got it, it
 * is one.
 */
static void test_replay_remote_drain_needs_the_order(void **state)
{
	static const char text[] =
		"  a-1 [001] ..... 1.0: mm_page_alloc: page=x pfn=0x123460 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  a-1 [001] ..... 1.0: mm_page_alloc: page=x pfn=0x123461 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  a-1 [001] ..... 1.1: mm_page_free: page=x pfn=0x123460 order=0\n"
		"  a-1 [001] ..... 1.1: mm_page_free: page=x pfn=0x123461 order=0\n"
		"  b-2 [000] ..... 1.2: mm_page_pcpu_drain: page=x pfn=0x123460 order=2 migratetype=0\n"
		"  b-2 [000] ..... 1.3: mm_page_alloc: page=x pfn=0x123470 order=0 migratetype=1 gfp_flags=GFP_HIGHUSER_MOVABLE\n"
		"  b-2 [000] ..... 1.4: mm_page_pcpu_drain: page=x pfn=0x123461 order=0 migratetype=1\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	int n = 0, on_cpu1 = 0;

	(void)state;
	loaded_replay_start_drained(&lr, text, sizeof(text) - 1);
	pl_warn_set_quiet(true);
	while (pl_trace_next(lr.r, &ev) > 0) {
		pl_replay_event(lr.rp, &ev);
		if (++n == 4)	/* CPU 1's PCP: its refill's rest and the two frees */
			on_cpu1 = pcp_pages(lr.m, 1);
		if (n == 6) {
			assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_drain_all_replayed], 0);
			assert_int_equal(pcp_pages(lr.m, 1), on_cpu1);
		}
	}
	pl_warn_set_quiet(false);
	assert_int_equal(n, 7);
	assert_true(on_cpu1 >= 2);
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_drain_all_replayed], 1);
	assert_int_equal(pcp_pages(lr.m, 1), 0);
	loaded_replay_end(&lr);
}

/* CPU 1 allocates pfn 0x123460, then a softirq on CPU 1 frees it. */
#define SOFTIRQ_FREE_ON_CPU1 \
	"  a-1 [001] ..... 1.0: mm_page_alloc: page=x pfn=0x123460 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n" \
	"  a-1 [001] ..s2. 1.1: mm_page_free: page=x pfn=0x123460 order=0\n"

/*
 * A fallback steal fires mm_page_alloc_extfrag and no zone_locked event:
 * that is the only sign the page left the buddy for CPU 0's refill. A softirq
 * free on CPU 1 whose PCP trylock failed sent it to the buddy unseen, so the
 * drain on CPU 0 that follows the steal is CPU 0's own, not a
 * drain_all_pages() of CPU 1's PCP.
 */
static void test_replay_steal_moves_the_page(void **state)
{
	static const char text[] =
		SOFTIRQ_FREE_ON_CPU1
		"  b-2 [000] d..3. 1.2: mm_page_alloc_extfrag: page=x pfn=0x123460 alloc_order=0 fallback_order=0 "
		"pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=1 change_ownership=0\n"
		"  b-2 [000] d..3. 1.3: mm_page_pcpu_drain: page=x pfn=0x123460 order=0 migratetype=0\n";
	struct loaded_replay lr;
	struct pl_trace_event ev;
	int n = 0, on_cpu1 = 0;

	(void)state;
	loaded_replay_start_drained(&lr, text, sizeof(text) - 1);
	pl_warn_set_quiet(true);
	while (pl_trace_next(lr.r, &ev) > 0) {
		pl_replay_event(lr.rp, &ev);
		if (++n == 2)
			on_cpu1 = pcp_pages(lr.m, 1);
	}
	pl_warn_set_quiet(false);
	assert_int_equal(n, 4);
	assert_true(on_cpu1 >= 1);
	assert_int_equal(pl_replay_warnings(lr.rp)[PL_TW_drain_all_replayed], 0);
	assert_int_equal(pcp_pages(lr.m, 1), on_cpu1);
	loaded_replay_end(&lr);
}

/*
 * Which frees found their PCP busy, read off what follows each: taken from
 * the buddy next (its own zone_locked, a fallback's extfrag, or a larger
 * block's zone_locked that covers it) means it went there; an allocation
 * or a drain means it was on a PCP; a free of an order no PCP holds is not
 * a candidate.
 */
static void test_pcp_busy_inference(void **state)
{
	static const char text[] =
		"  a-1 [001] ..s2. 1.0: mm_page_free: page=x pfn=0x123460 order=0\n"		/* 1 busy */
		"  a-1 [001] ..s2. 1.0: mm_page_free: page=x pfn=0x123470 order=0\n"		/* 2 drained */
		"  a-1 [001] ..s2. 1.0: mm_page_free: page=x pfn=0x123481 order=0\n"		/* 3 busy */
		"  a-1 [001] ..... 1.0: mm_page_free: page=x pfn=0x123490 order=0\n"		/* 4 allocated */
		"  a-1 [001] ..... 1.0: mm_page_free: page=x pfn=0x1234a0 order=4\n"		/* 5 no PCP order */
		"  a-1 [001] ..s2. 1.0: mm_page_free: page=x pfn=0x1234c0 order=0\n"		/* 6 stolen */
		"  b-2 [000] d..2. 1.1: mm_page_alloc_zone_locked: page=x pfn=0x123460 order=0 migratetype=0 percpu_refill=1\n"
		"  a-1 [001] d..2. 1.1: mm_page_pcpu_drain: page=x pfn=0x123470 order=0 migratetype=0\n"
		"  b-2 [000] d..2. 1.2: mm_page_alloc_zone_locked: page=x pfn=0x123470 order=0 migratetype=0 percpu_refill=1\n"
		"  b-2 [000] d..2. 1.2: mm_page_alloc_zone_locked: page=x pfn=0x123480 order=1 migratetype=0 percpu_refill=1\n"
		"  a-1 [001] ..... 1.3: mm_page_alloc: page=x pfn=0x123490 order=0 migratetype=0 gfp_flags=GFP_KERNEL\n"
		"  b-2 [000] d..2. 1.3: mm_page_alloc_zone_locked: page=x pfn=0x123490 order=0 migratetype=0 percpu_refill=1\n"
		"  b-2 [000] d..2. 1.4: mm_page_alloc_zone_locked: page=x pfn=0x1234a0 order=4 migratetype=0 percpu_refill=0\n"
		"  b-2 [000] d..3. 1.5: mm_page_alloc_extfrag: page=x pfn=0x1234c0 alloc_order=0 fallback_order=0 "
		"pageblock_order=9 alloc_migratetype=1 fallback_migratetype=0 fragmenting=1 change_ownership=0\n";
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_pcp_busy busy = { 0 };
	struct pl_trace_event ev;
	unsigned long line[8];
	int n = 0;

	(void)state;
	while (pl_trace_next(r, &ev) > 0) {
		if (n < 6)
			line[n] = ev.line;
		n++;
		assert_int_equal(pl_pcp_busy_event(&busy, &ev), 0);
	}
	pl_trace_close(r);
	pl_pcp_busy_finish(&busy);
	assert_int_equal(busy.nr, 3);
	assert_true(pl_pcp_busy_has(&busy, line[0]));
	assert_false(pl_pcp_busy_has(&busy, line[1]));
	assert_true(pl_pcp_busy_has(&busy, line[2]));
	assert_false(pl_pcp_busy_has(&busy, line[3]));
	assert_false(pl_pcp_busy_has(&busy, line[4]));
	assert_true(pl_pcp_busy_has(&busy, line[5]));
	assert_false(pl_pcp_busy_has(NULL, line[0]));
	pl_pcp_busy_release(&busy);
	assert_int_equal(busy.nr, 0);
}

/*
 * A busy free replays as the kernel ran it: the block goes to the buddy,
 * not CPU 1's PCP, and counts a failed trylock; the same trace without the
 * busy list puts it on the PCP.
 */
static void test_replay_pcp_busy_free(void **state)
{
	static const char text[] =
		SOFTIRQ_FREE_ON_CPU1
		"  b-2 [000] d..2. 1.2: mm_page_alloc_zone_locked: page=x pfn=0x123460 order=0 migratetype=0 percpu_refill=1\n";

	(void)state;
	for (int follow = 0; follow < 2; follow++) {
		struct pl_pcp_busy busy = { 0 };
		struct loaded_replay lr;
		struct pl_trace_event ev;
		unsigned long ev_before[NR_PL_VM_EVENTS], ev_after[NR_PL_VM_EVENTS];
		int n = 0, on_cpu1 = 0;

		loaded_replay_start_drained(&lr, text, sizeof(text) - 1);
		if (follow) {
			struct pl_trace_reader *pre = pl_trace_open_mem(text, sizeof(text) - 1);

			while (pl_trace_next(pre, &ev) > 0)
				assert_int_equal(pl_pcp_busy_event(&busy, &ev), 0);
			pl_trace_close(pre);
			pl_pcp_busy_finish(&busy);
			assert_int_equal(busy.nr, 1);
			pl_replay_set_pcp_busy(lr.rp, &busy);
		}
		pl_warn_set_quiet(true);
		while (pl_trace_next(lr.r, &ev) > 0) {
			if (n == 1) {
				on_cpu1 = pcp_pages(lr.m, 1);
				pl_events_sum(lr.m, ev_before);
			}
			pl_replay_event(lr.rp, &ev);
			if (++n == 2)
				break;
		}
		pl_warn_set_quiet(false);
		pl_events_sum(lr.m, ev_after);
		assert_int_equal(pcp_pages(lr.m, 1), on_cpu1 + (follow ? 0 : 1));
		assert_int_equal(ev_after[PL_EV_PCP_TRYLOCK_FAIL] - ev_before[PL_EV_PCP_TRYLOCK_FAIL],
				 follow ? 1 : 0);
		loaded_replay_end(&lr);
		pl_pcp_busy_release(&busy);
	}
}

/*
 * A claim below pageblock order names the page __rmqueue_smallest()
 * returned, not the pageblock it took: the next pageblock first seen as
 * the claiming type is the claim's candidate (pb_from), once per claim.
 * The loader gives it its type before the claim only where the snapshot
 * has fewer free pages of the claiming type than the sightings put there.
 */
static void test_claimed_pageblock_type(void **state)
{
	static const char text[] =
		"  a-1 [000] d..2. 1.0: mm_page_alloc_zone_locked: page=x pfn=0x170000 order=0 migratetype=1 percpu_refill=1\n"
		"  a-1 [000] d..2. 1.1: mm_page_alloc_extfrag: page=x pfn=0x170010 alloc_order=0 fallback_order=4 "
		"pageblock_order=9 alloc_migratetype=1 fallback_migratetype=2 fragmenting=1 change_ownership=1\n"
		"  a-1 [000] d..2. 1.2: mm_page_alloc_zone_locked: page=x pfn=0x172000 order=0 migratetype=1 percpu_refill=1\n"
		"  a-1 [000] d..2. 1.3: mm_page_alloc_zone_locked: page=x pfn=0x174000 order=0 migratetype=1 percpu_refill=1\n";
	struct pl_positional pos = { 0 };
	struct pl_trace_reader *r = pl_trace_open_mem(text, sizeof(text) - 1);
	struct pl_trace_event ev;
	struct pl_snapshot snap;

	(void)state;
	while (pl_trace_next(r, &ev) > 0)
		assert_int_equal(pl_positional_event(&pos, &ev), 0);
	pl_trace_close(r);
	assert_int_equal(pos.pb_claimed, 1);
	assert_int_equal(pos.pb_type[0x172000 >> pageblock_order], MIGRATE_MOVABLE);
	assert_int_equal(pos.pb_from[0x170000 >> pageblock_order], PL_PB_UNKNOWN);	/* before it */
	assert_int_equal(pos.pb_from[0x172000 >> pageblock_order], MIGRATE_RECLAIMABLE);
	assert_int_equal(pos.pb_from[0x174000 >> pageblock_order], PL_PB_UNKNOWN);	/* one per claim */

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), &snap), 0);
	for (int pass = 0; pass < 2; pass++) {
		struct pl_loaded_state *st;
		struct pl_machine *m;

		if (pass)	/* a snapshot with no free Movable page in Normal */
			for (int o = 0; o < NR_PAGE_ORDERS; o++)
				snap.zone[2].free_mt[MIGRATE_MOVABLE][o] = 0;
		m = positional_machine(&snap, &pos, &st);
		pl_enter(m, 0);
		assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x172000),
				 pass ? MIGRATE_RECLAIMABLE : MIGRATE_MOVABLE);
		assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x170000), MIGRATE_MOVABLE);
		assert_int_equal(get_pageblock_migratetype(m->mem_map + 0x174000), MIGRATE_MOVABLE);
		assert_int_equal(pl_check_machine(m), 0);
		pl_state_release(st);
		pl_machine_destroy(m);
	}
	pl_positional_release(&pos);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replay_kswapd_run),
		cmocka_unit_test(test_replay_kswapd_run_open_at_end),
		cmocka_unit_test(test_replay_kswapd_woken_between_runs),
		cmocka_unit_test(test_kswapd_mark),
		cmocka_unit_test(test_pcp_owners),
		cmocka_unit_test(test_replay_drain_all_from_the_start),
		cmocka_unit_test(test_replay_remote_drain_needs_the_order),
		cmocka_unit_test(test_replay_steal_moves_the_page),
		cmocka_unit_test(test_pcp_busy_inference),
		cmocka_unit_test(test_replay_pcp_busy_free),
		cmocka_unit_test(test_claimed_pageblock_type),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
