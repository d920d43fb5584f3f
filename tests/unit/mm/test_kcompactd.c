// SPDX-License-Identifier: MIT
/*
 * test_kcompactd.c - kcompactd as mm/compaction.c of 6.18 runs it: woken
 * by kswapd going to sleep, it compacts for the order kswapd was woken for
 * and defers a zone where the scanners met without a block; proactive
 * compaction runs when the node's fragmentation score is above the high
 * mark of vm.compaction_proactiveness (not with kswapd running, not at 0),
 * stops at the low mark, and waits 64 intervals after a pass that did not
 * lower the score. Without a migrate holder it does nothing.
 */
#include <stdio.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "mm/internal.h"

/* A holder of movable pages: slot i's page has private = i + 1. */
struct holder {
	struct page **pages;
	unsigned long nr, moved;
	bool refuse;
};

static int h_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = page->private;

	(void)order;
	if (h->refuse || !i || i > h->nr || h->pages[i - 1] != page)
		return -1;
	return 0;
}

static void h_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	struct holder *h = ctx;
	unsigned long i = src->private;

	(void)order;
	h->pages[i - 1] = dst;
	dst->private = i;
	h->moved++;
}

static void h_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

static const struct pl_migrate_ops holder_ops = { h_isolate, h_migrate, h_putback };

static struct zone *normal(struct pl_machine *m) { return &m->node_zones[ZONE_NORMAL]; }

static unsigned long ev(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long v[NR_PL_VM_EVENTS];

	pl_events_sum(m, v);
	return v[e];
}

/* Movable order-0 pages in all memory, every other one freed again: all free memory in single pages. */
static struct pl_machine *fragmented(struct holder *h, unsigned int proactiveness)
{
	struct pl_config cfg;
	struct pl_machine *m;
	unsigned long n = 0;
	struct page *p;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 1;
	cfg.compaction_proactiveness = proactiveness + 1;
	m = test_machine_config(&cfg, "v6.18");
	memset(h, 0, sizeof(*h));
	h->pages = calloc(m->max_pfn, sizeof(*h->pages));
	while ((p = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, 0)) != NULL) {
		h->pages[n] = p;
		p->private = ++n;
	}
	h->nr = n;
	for (unsigned long i = 0; i < n; i += 2) {
		h->pages[i]->private = 0;
		__free_pages(h->pages[i], 0);
		h->pages[i] = NULL;
	}
	drain_all_pages(NULL);
	return m;
}

static void release(struct pl_machine *m, struct holder *h)
{
	assert_int_equal(pl_set_migrate_ops(m, NULL, NULL), 0);
	for (unsigned long i = 0; i < h->nr; i++)
		if (h->pages[i]) {
			h->pages[i]->private = 0;
			__free_pages(h->pages[i], 0);
		}
	free(h->pages);
	test_machine_done(m);
}

static unsigned long free_blocks_from(struct pl_machine *m, unsigned int order)
{
	unsigned long n = 0;

	for (unsigned int o = order; o < NR_PAGE_ORDERS; o++)
		n += total_nr_free(m, o);
	return n;
}

/*
 * kswapd woken for order 9 runs at the tick; on the balanced node it
 * wakes kcompactd, which compacts in the same tick and makes order-9
 * blocks (proactive compaction is off here, so the wakeup did it).
 */
static void test_woken_after_kswapd(void **state)
{
	struct holder h;
	struct pl_machine *m = fragmented(&h, 0);

	(void)state;
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	assert_int_equal(free_blocks_from(m, 9), 0);
	/* an order-0 wakeup asks kcompactd for nothing */
	wakeup_kswapd(normal(m), 0, ZONE_NORMAL);
	pl_vmstat_tick();
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 0);
	wakeup_kswapd(normal(m), 9, ZONE_NORMAL);
	assert_true(zone_test_flag(normal(m), ZONE_KSWAPD_PENDING));
	pl_vmstat_tick();
	assert_false(zone_test_flag(normal(m), ZONE_KSWAPD_PENDING));
	assert_int_equal(ev(m, PL_EV_KCOMPACTD_WAKEUP), 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 1);
	assert_true(ev(m, PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED) > 0);
	assert_true(h.moved > 0);
	assert_int_equal(ev(m, PL_EV_COMPACT_STALL), 0);	/* no direct compaction */
	assert_true(free_blocks_from(m, 9) > 0);
	/* the work is done: the next tick does nothing */
	pl_vmstat_tick();
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 1);
	release(m, &h);
}

/* Without a holder nothing is movable: kcompactd does nothing. */
static void test_no_holder(void **state)
{
	struct holder h;
	struct pl_machine *m = fragmented(&h, 20);

	(void)state;
	wakeup_kswapd(normal(m), 9, ZONE_NORMAL);
	pl_vmstat_tick();
	pl_kcompactd_run(m, 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 0);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 0);
	assert_int_equal(ev(m, PL_EV_PGMIGRATE_SUCCESS), 0);
	release(m, &h);
}

/*
 * A run whose scanners meet without a block (the holder lets nothing go)
 * defers the zone as sync compaction does; the deferred zone is skipped
 * by the next wakeup's run.
 */
static void test_kcompactd_defers(void **state)
{
	struct holder h;
	struct pl_machine *m = fragmented(&h, 0);
	unsigned long scanned;

	(void)state;
	h.refuse = true;
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	wakeup_kcompactd(m, 9, ZONE_NORMAL);
	pl_kcompactd_run(m, 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 1);
	assert_int_equal(zone_compact(normal(m))->compact_defer_shift, 1);
	scanned = ev(m, PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED);
	wakeup_kcompactd(m, 9, ZONE_NORMAL);
	pl_kcompactd_run(m, 2);
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 2);
	/* Normal deferred; DMA32 (not deferred) may scan, Normal's pages not */
	assert_int_equal(zone_compact(normal(m))->compact_defer_shift, 1);
	assert_true(ev(m, PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED) - scanned <
		    normal(m)->spanned_pages / 2);
	release(m, &h);
}

/* The fragmentation score and its marks, as the kernel computes them. */
static void test_fragmentation_score(void **state)
{
	struct holder h;
	struct pl_machine *m = test_machine("v6.18");
	struct zone *z;

	(void)state;
	/* fresh: all free memory in order-9 and larger blocks */
	assert_int_equal(fragmentation_score_node(m), 0);
	assert_int_equal(fragmentation_score_wmark(m, true), 80);
	assert_int_equal(fragmentation_score_wmark(m, false), 90);
	m->config.compaction_proactiveness = 100 + 1;
	assert_int_equal(fragmentation_score_wmark(m, true), 5);	/* capped */
	assert_int_equal(fragmentation_score_wmark(m, false), 15);
	test_machine_done(m);

	m = fragmented(&h, 20);
	z = normal(m);
	assert_int_equal(fragmentation_score_zone(z), 100);
	/* weighted by present pages: the node's score is below 100 by the zones' share of the node */
	assert_true(fragmentation_score_node(m) >= 98 && fragmentation_score_node(m) <= 100);
	assert_int_equal(extfrag_for_order(z, 0), 0);
	release(m, &h);
}

/*
 * Proactive compaction: a fragmented node (score near 100, above the
 * default high mark 90) is compacted at kcompactd's first look, each zone
 * until its score is at most the low mark 80: less than compact_memory
 * would do. The next look is an interval later; a pass that did not lower
 * the score puts the next look 64 intervals away.
 */
static void test_proactive(void **state)
{
	struct holder h;
	struct pl_machine *m = fragmented(&h, 20);
	uint64_t interval = HPAGE_FRAG_CHECK_INTERVAL_MSEC * 1000000ULL;
	unsigned long moved;

	(void)state;
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	/* kswapd running: no proactive compaction */
	zone_set_flag(normal(m), ZONE_RECLAIM_ACTIVE);
	pl_kcompactd_run(m, 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 0);
	zone_clear_flag(normal(m), ZONE_RECLAIM_ACTIVE);
	pl_kcompactd_run(m, 1 + interval);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_DAEMON_WAKE), 0);	/* not a wakeup */
	assert_true(h.moved > 0);
	assert_true(fragmentation_score_zone(normal(m)) <= 80);
	assert_true(fragmentation_score_zone(normal(m)) > 0);
	/* within the interval: no look */
	moved = h.moved;
	pl_kcompactd_run(m, 1 + interval + interval / 2);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 1);
	/* the score is below the high mark now: the next look compacts nothing */
	pl_kcompactd_run(m, 1 + 3 * interval);
	assert_int_equal(h.moved, moved);
	/* compact_memory would have moved more */
	pl_compact_zone(m, ZONE_NORMAL, -1, true);
	assert_true(h.moved > moved);
	release(m, &h);

	/* a pass that cannot lower the score (nothing may move): the next look 64 intervals on */
	m = fragmented(&h, 20);
	h.refuse = true;
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	pl_kcompactd_run(m, 1);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 1);
	pl_kcompactd_run(m, 1 + 63 * interval);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 1);
	pl_kcompactd_run(m, 1 + 64 * interval);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 2);
	release(m, &h);

	/* vm.compaction_proactiveness 0: never */
	m = fragmented(&h, 0);
	assert_int_equal(pl_set_migrate_ops(m, &holder_ops, &h), 0);
	pl_kcompactd_run(m, 1);
	pl_kcompactd_run(m, 100 * interval);
	assert_int_equal(ev(m, PL_EV_COMPACT_PROACTIVE), 0);
	assert_int_equal(h.moved, 0);
	release(m, &h);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_woken_after_kswapd),
		cmocka_unit_test(test_no_holder),
		cmocka_unit_test(test_kcompactd_defers),
		cmocka_unit_test(test_fragmentation_score),
		cmocka_unit_test(test_proactive),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
