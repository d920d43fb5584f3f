// SPDX-License-Identifier: MIT
/*
 * kcompactd.c - the node's compaction daemon as mm/compaction.c of Linux
 * 6.18 runs it, in pagelab's own code:
 *
 *  - wakeup_kcompactd(): kswapd, going to sleep on a balanced node, asks
 *    for a block of the order it was woken for; the wakeup is kept
 *    (kcompactd_max_order, kcompactd_highest_zoneidx) and taken only if a
 *    zone is worth compacting for it (kcompactd_node_suitable()).
 *  - kcompactd_do_work(): sync-light compaction of each zone not deferred
 *    and suitable for the order, without capture; a run that ends with the
 *    scanners met drains the PCPs and defers the zone, as sync direct
 *    compaction does.
 *  - Proactive compaction: while no work is asked for, every
 *    HPAGE_FRAG_CHECK_INTERVAL_MSEC kcompactd compares the node's
 *    fragmentation score (each zone's share of free pages outside order-9
 *    blocks, weighted by its size) with the high mark of
 *    vm.compaction_proactiveness (default 20: marks 80 and 90); above it,
 *    and with kswapd asleep, it compacts every zone whole until the zone's
 *    score is at most the low mark. A pass that did not lower the node's
 *    score waits 64 intervals before the next look.
 *
 * Time: pagelab has no scheduler. The daemon runs when pl_kcompactd_run()
 * is called, with the caller's clock: the vmstat tick (pl_vmstat_tick(),
 * each vCPU's tick a 1/nr_cpus-th of a second to the one daemon) right
 * after kswapd's run, and a replay at each event with the trace's time.
 * A replay runs the kernel's own kcompactd wakes where the trace shows
 * them (pl_kcompactd_traced_wake()); kswapd's wakeups then change nothing.
 *
 * Without a migrate holder nothing is movable: the daemon does nothing.
 *
 * Locking: the daemon's state is one per machine; a run is taken by one
 * thread (m->kcompactd.busy, compare-and-swap), wakeups write the wanted
 * order and zone with relaxed atomics, as the kernel's plain stores.
 */
#include "internal.h"
#include "validate.h"
#include "pagelab/compaction.h"

#define NSEC_PER_MSEC_PL	1000000ULL
#define NSEC_PER_SEC_PL		1000000000ULL

/* vm.compaction_proactiveness: 0..100, default 20 */
unsigned int pl_compaction_proactiveness(const struct pl_machine *m)
{
	if (pl_check_ptr(__func__, m, "machine"))
		return 0;
	return m->config.compaction_proactiveness ? m->config.compaction_proactiveness - 1 : 20;
}

unsigned int extfrag_for_order(const struct zone *zone, unsigned int order)
{
	struct contig_page_info info;

	fill_contig_page_info(zone, order, &info);
	if (!info.free_pages)
		return 0;
	return (unsigned int)((info.free_pages - (info.free_blocks_suitable << order)) * 100 /
			      info.free_pages);
}

unsigned int fragmentation_score_zone(const struct zone *zone)
{
	return extfrag_for_order(zone, COMPACTION_HPAGE_ORDER);
}

/* A zone's score in the node's: weighted by its share of the node's present pages. */
static unsigned int fragmentation_score_zone_weighted(const struct zone *zone,
						      unsigned long node_present)
{
	return (unsigned int)(zone->present_pages * fragmentation_score_zone(zone) /
			      (node_present + 1));
}

unsigned int fragmentation_score_node(struct pl_machine *m)
{
	unsigned long present = 0;
	unsigned int score = 0;
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine"))
		return 0;
	for_each_populated_zone(zone, m)
		present += zone->present_pages;
	for_each_populated_zone(zone, m)
		score += fragmentation_score_zone_weighted(zone, present);
	return score;
}

unsigned int fragmentation_score_wmark(const struct pl_machine *m, bool low)
{
	/* the low mark is capped: a proactiveness near 100 must not compact forever */
	unsigned int wmark_low;

	if (pl_check_ptr(__func__, m, "machine"))
		return 0;
	wmark_low = max(100u - pl_compaction_proactiveness(m), 5u);

	return low ? wmark_low : min(wmark_low + 10, 100u);
}

/* kswapd_is_running(): a traced kswapd run, or pagelab's own in progress. */
bool kswapd_is_running(struct pl_machine *m)
{
	struct zone *zone;

	if (READ_ONCE(m->kswapd_traced))
		return true;
	for_each_populated_zone(zone, m)
		if (zone_test_flag(zone, ZONE_RECLAIM_ACTIVE))
			return true;
	return false;
}

static bool should_proactive_compact_node(struct pl_machine *m)
{
	if (!pl_compaction_proactiveness(m) || kswapd_is_running(m))
		return false;
	return fragmentation_score_node(m) > fragmentation_score_wmark(m, false);
}

/* kcompactd_node_suitable(): some zone up to the wanted one is worth compacting. */
static bool kcompactd_node_suitable(struct pl_machine *m)
{
	int highest = READ_ONCE(m->kcompactd.highest_zoneidx);
	int order = READ_ONCE(m->kcompactd.max_order);

	for (int zi = 0; zi <= highest; zi++) {
		struct zone *zone = &m->node_zones[zi];

		if (populated_zone(zone) &&
		    compaction_suit_allocation_order(zone, order, highest, ALLOC_WMARK_MIN) ==
		    PL_COMPACT_CONTINUE)
			return true;
	}
	return false;
}

void pl_kcompactd_init(struct pl_machine *m)
{
	m->kcompactd.max_order = 0;
	m->kcompactd.highest_zoneidx = MAX_NR_ZONES - 1;
	m->kcompactd.timeout_ns = HPAGE_FRAG_CHECK_INTERVAL_MSEC * NSEC_PER_MSEC_PL;
}

void wakeup_kcompactd(struct pl_machine *m, int order, int highest_zoneidx)
{
	if (pl_check_ptr(__func__, m, "machine"))
		return;
	if (order > MAX_PAGE_ORDER || highest_zoneidx < 0 || highest_zoneidx >= MAX_NR_ZONES) {
		pl_bad_arg(__func__, "order %d highest_zoneidx %d", order, highest_zoneidx);
		return;
	}
	if (order <= 0 || READ_ONCE(m->kcompactd.traced))
		return;
	if (READ_ONCE(m->kcompactd.max_order) < order)
		WRITE_ONCE(m->kcompactd.max_order, order);
	if (READ_ONCE(m->kcompactd.highest_zoneidx) > highest_zoneidx)
		WRITE_ONCE(m->kcompactd.highest_zoneidx, highest_zoneidx);
	if (!kcompactd_node_suitable(m))
		return;
	WRITE_ONCE(m->kcompactd.woken, true);
	pl_count(PL_EV_KCOMPACTD_WAKEUP, 1);
}

/* kcompactd_do_work(): compact each zone for the wanted order. */
static void kcompactd_do_work(struct pl_machine *m)
{
	struct compact_control cc = {
		.order = READ_ONCE(m->kcompactd.max_order),
		.search_order = READ_ONCE(m->kcompactd.max_order),
		.highest_zoneidx = READ_ONCE(m->kcompactd.highest_zoneidx),
		.mode = MIGRATE_SYNC_LIGHT, .gfp_mask = GFP_KERNEL,
		.alloc_flags = ALLOC_WMARK_MIN,
	};

	pl_count(PL_EV_COMPACT_DAEMON_WAKE, 1);
	for (int zi = 0; zi <= cc.highest_zoneidx; zi++) {
		struct zone *zone = &m->node_zones[zi];
		enum pl_compact_result status;

		if (!populated_zone(zone) || compaction_deferred(zone, cc.order))
			continue;
		if (compaction_suit_allocation_order(zone, cc.order, zi, ALLOC_WMARK_MIN) !=
		    PL_COMPACT_CONTINUE)
			continue;
		cc.zone = zone;
		cc.total_migrate_scanned = cc.total_free_scanned = 0;
		cc.whole_zone = false;
		status = compact_zone(&cc, NULL);
		if (status == PL_COMPACT_SUCCESS) {
			compaction_defer_reset(zone, cc.order, false);
		} else if (status == PL_COMPACT_PARTIAL_SKIPPED || status == PL_COMPACT_COMPLETE) {
			/* freed pages stranded on the PCPs could merge; the deferral limits this */
			drain_all_pages(zone);
			defer_compaction(zone, cc.order);
		}
		pl_count(PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED, cc.total_migrate_scanned);
		pl_count(PL_EV_COMPACT_DAEMON_FREE_SCANNED, cc.total_free_scanned);
	}
	/* done until woken again; a wakeup meanwhile for more is kept */
	if (READ_ONCE(m->kcompactd.max_order) <= cc.order)
		WRITE_ONCE(m->kcompactd.max_order, 0);
	if (READ_ONCE(m->kcompactd.highest_zoneidx) >= cc.highest_zoneidx)
		WRITE_ONCE(m->kcompactd.highest_zoneidx, MAX_NR_ZONES - 1);
}

/* compact_node(proactive): every zone whole, sync-light, until its score is low enough. */
static void compact_node_proactive(struct pl_machine *m)
{
	struct zone *zone;

	pl_count(PL_EV_COMPACT_PROACTIVE, 1);
	for_each_populated_zone(zone, m) {
		struct compact_control cc = {
			.order = -1, .search_order = -1, .mode = MIGRATE_SYNC_LIGHT,
			.ignore_skip_hint = true, .whole_zone = true, .gfp_mask = GFP_KERNEL,
			.proactive_compaction = true, .zone = zone,
			.highest_zoneidx = zone->zone_idx,
		};

		compact_zone(&cc, NULL);
		pl_count(PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED, cc.total_migrate_scanned);
		pl_count(PL_EV_COMPACT_DAEMON_FREE_SCANNED, cc.total_free_scanned);
	}
}

/* One pass of kcompactd()'s loop at @now_ns. Context: the daemon is taken (busy). */
static void kcompactd_step(struct pl_machine *m, uint64_t now_ns)
{
	uint64_t interval = HPAGE_FRAG_CHECK_INTERVAL_MSEC * NSEC_PER_MSEC_PL;
	unsigned int prev, score;

	if (READ_ONCE(m->kcompactd.woken)) {
		WRITE_ONCE(m->kcompactd.woken, false);
		kcompactd_do_work(m);
		/* work done: the proactive look comes an interval later */
		m->kcompactd.timeout_ns = interval;
		m->kcompactd.next_ns = now_ns + interval;
		return;
	}
	if (!pl_compaction_proactiveness(m) || now_ns < m->kcompactd.next_ns)
		return;
	m->kcompactd.timeout_ns = interval;
	if (should_proactive_compact_node(m)) {
		prev = fragmentation_score_node(m);
		compact_node_proactive(m);
		score = fragmentation_score_node(m);
		/* no progress: look again only after the longest deferral */
		if (score >= prev)
			m->kcompactd.timeout_ns = interval << COMPACT_MAX_DEFER_SHIFT;
	}
	m->kcompactd.next_ns = now_ns + m->kcompactd.timeout_ns;
}

void pl_kcompactd_run(struct pl_machine *m, uint64_t now_ns)
{
	int idle = 0;

	if (pl_check_ptr(__func__, m, "machine"))
		return;
	if (!m->migrate_ops)
		return;
	if (!__atomic_compare_exchange_n(&m->kcompactd.busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;		/* another thread runs the daemon */
	kcompactd_step(m, now_ns);
	__atomic_store_n(&m->kcompactd.busy, 0, __ATOMIC_RELEASE);
}

void pl_kcompactd_tick(struct pl_machine *m)
{
	uint64_t now;

	if (pl_check_ptr(__func__, m, "machine"))
		return;
	if (!m->migrate_ops || READ_ONCE(m->kcompactd.traced))
		return;
	/* each vCPU ticks once a simulated second: one daemon sees nr_cpus ticks a second */
	now = __atomic_add_fetch(&m->kcompactd.clock_ns, NSEC_PER_SEC_PL / m->nr_cpus,
				 __ATOMIC_RELAXED);
	pl_kcompactd_run(m, now);
}

void pl_kcompactd_traced_wake(struct pl_machine *m, int order, uint64_t now_ns)
{
	int idle = 0;

	if (pl_check_ptr(__func__, m, "machine"))
		return;
	if (order > MAX_PAGE_ORDER) {
		pl_bad_arg(__func__, "order %d", order);
		return;
	}
	if (!m->migrate_ops || order <= 0)
		return;
	if (!__atomic_compare_exchange_n(&m->kcompactd.busy, &idle, 1, false, __ATOMIC_ACQUIRE,
					 __ATOMIC_RELAXED))
		return;
	if (m->kcompactd.max_order < order)
		m->kcompactd.max_order = order;
	m->kcompactd.woken = true;
	kcompactd_step(m, now_ns);
	__atomic_store_n(&m->kcompactd.busy, 0, __ATOMIC_RELEASE);
}

void pl_kcompactd_set_traced(struct pl_machine *m, bool traced)
{
	if (pl_check_ptr(__func__, m, "machine"))
		return;
	WRITE_ONCE(m->kcompactd.traced, traced);
}
