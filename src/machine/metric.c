// SPDX-License-Identifier: MIT
/*
 * metric.c - the metric registry (include/pagelab/metric.h): one row per
 * figure pagelab prints. pagelab-bench names the row in every JSON record
 * and lists the table in --list --json; the Python side reads it there.
 *
 * Adding a figure is one row here, then bench_emit(..., "ID", ...) in the
 * suite; a record that names no row is a programming error (bench aborts).
 *
 * Direction is the figure's own: a count of lock trips is a cost (lower), a
 * count of pages per lock trip or of free pageblocks is a gain (higher), the
 * workload's own counts (allocations, merges, pages drained) are neutral:
 * shown beside the judged figures, never judged. A time or rate keeps its
 * direction in the virtual-time mode; the instruction-count mode replaces it
 * by "instructions", a cost.
 *
 * Invariants: ids unique (tests/unit checks), the table ends with a NULL id.
 */
#include <stddef.h>
#include <string.h>
#include "pagelab/metric.h"

#define L PL_METRIC_LOWER
#define H PL_METRIC_HIGHER
#define N PL_METRIC_NEUTRAL

#define ROW(id, name, unit, dir, fam, meaning) \
	{ id, name, unit, dir, PL_METRIC_##fam, false, NULL, NULL, meaning }
/* a figure of a replay record: its counter (or counter/per), judged against the kernel or not */
#define REPLAY(id, name, unit, dir, fam, kernel, counter, per, meaning) \
	{ id, name, unit, dir, PL_METRIC_##fam, kernel, counter, per, meaning }

const struct pl_metric pl_metrics[] = {
	/* ---- speed: times and rates of measured regions ---- */
	ROW("op-ns", "time per operation", "ns", L, SPEED,
	    "one allocation or free (or one of a batch), wall, virtual or thread CPU time"),
	ROW("iteration-us", "time per loop iteration", "us", L, SPEED,
	    "one iteration of a kernel test loop (page_alloc_high_order: alloc, split, free)"),
	ROW("read-us", "time per /proc read", "us", L, SPEED,
	    "one read of /proc/pagetypeinfo"),
	ROW("pair-ns", "time per alloc+free pair", "ns/pair", L, SPEED,
	    "one allocation and its free (vmalloc/vfree, range allocators)"),
	ROW("vmalloc-test-usec", "test_vmalloc test time", "usec", L, SPEED,
	    "one lib/test_vmalloc.c test, as its Summary line prints it"),
	ROW("throughput", "page operations per second", "Mops/s", H, SPEED,
	    "page allocations plus frees per second of the workload"),
	ROW("contig-1g-us", "time per 1 GiB try", "us", L, SPEED,
	    "one alloc_contig_range() try on a 1 GiB-aligned range"),
	ROW("events-per-s", "trace events per second", "events/s", H, SPEED,
	    "events parsed, decoded or replayed per second"),
	ROW("instructions", "instructions of the measured region", "instructions", L, SPEED,
	    "callgrind's count of the region a timed figure measures (pagelab bench --mode instr)"),

	/* ---- lock traffic ---- */
	ROW("zone-lock-per-Mop", "zone->lock acquisitions per Mop", "acquisitions/Mop", L, LOCK,
	    "zone->lock acquisitions per million page operations"),
	ROW("pages-per-zone-lock", "pages per zone->lock", "pages", H, LOCK,
	    "pages moved per zone->lock acquisition: how well refills and drains batch"),
	ROW("zone-lock", "zone->lock acquisitions", "acquisitions", L, LOCK,
	    "zone->lock acquisitions over the run"),
	ROW("zone-lock-pages", "pages moved under zone->lock", "pages", N, LOCK,
	    "pages allocated from or freed to the buddy under zone->lock"),
	ROW("zone-lock-per-read", "zone->lock acquisitions per read", "acquisitions", L, LOCK,
	    "zone->lock acquisitions of one /proc/pagetypeinfo read"),
	ROW("merges-zone", "buddy merges in the zone", "merges", N, LOCK,
	    "buddy merges done by __free_one_page() under zone->lock"),
	ROW("merges-pcp", "buddy merges on PCPs", "merges", N, LOCK,
	    "buddy merges done under pcp->lock (pcp_owner, pcp_premerge)"),
	ROW("premerge", "pcp_premerge lookups", "lookups", N, LOCK,
	    "pcp_premerge's buddy lookups during the run, and why they failed"),
	ROW("contig-1g-zone-lock", "zone->lock acquisitions per 1 GiB try", "acquisitions", L, LOCK,
	    "zone->lock acquisitions of one alloc_contig_range() try on 1 GiB"),
	ROW("contig-1g-zone-lock-pages", "pages under zone->lock per 1 GiB try", "pages", N, LOCK,
	    "pages moved under zone->lock by one 1 GiB try"),

	/* ---- fragmentation ---- */
	ROW("free-pageblocks", "free pageblocks", "pageblocks", H, FRAG,
	    "wholly free pageblocks of the zone with the workload's live set allocated"),
	ROW("unusable-index-9", "unusable free index, order 9", "index", L, FRAG,
	    "the share of free memory unusable for an order-9 allocation (debugfs unusable_index)"),
	ROW("order9-allocs", "order-9 allocations won", "allocations", H, FRAG,
	    "order-9 allocations that succeed after the run"),
	ROW("contig-1g-tried", "1 GiB ranges tried", "ranges", N, FRAG,
	    "1 GiB-aligned ranges alloc_contig_range() tried"),
	ROW("contig-1g-won", "1 GiB ranges won", "ranges", H, FRAG,
	    "1 GiB ranges alloc_contig_range() got (a hugetlb gigantic page each)"),

	/* ---- recording: what pagelab trace record costs, who a trace's events are ---- */
	ROW("record-slowdown", "workload slowdown under recording", "x", L, SPEED,
	    "the workload's wall time under pagelab trace record over its untraced time, same run, interleaved"),
	ROW("record-drain-share", "drain after the workload", "fraction", L, SPEED,
	    "seconds from tracing off to the trace.dat written, over the workload's own seconds"),
	ROW("record-lost-events", "events lost while recording", "events", L, FIDELITY,
	    "events the ring buffer dropped (the per-CPU stats' overrun and the pages' missed-events marks)"),
	ROW("task-alloc-share", "share of the page allocations", "fraction", N, STATE,
	    "one task's (or the recorded command's tasks') successful mm_page_alloc over the trace's"),
	ROW("task-free-share", "share of the page frees", "fraction", N, STATE,
	    "one task's (or the recorded command's tasks') mm_page_free and _batched over the trace's"),

	/* ---- state: shown, never judged ---- */
	ROW("free-pages", "free pages", "pages", N, STATE,
	    "pages free in the machine (buddy and PCPs)"),
	ROW("managed-pages", "managed pages", "pages", N, STATE,
	    "a zone's managed_pages"),

	/* ---- replay: the kernel's counters and pagelab's, same keys ---- */
	REPLAY("pcp-refills", "PCP refills", "refills", L, LOCK, true, "pcp_refills", NULL,
	       "rmqueue_bulk() calls: each one zone->lock trip that fills a PCP"),
	REPLAY("pages-per-refill", "pages per refill", "pages", H, LOCK, true,
	       "pcp_refill_pages", "pcp_refills", "pages one refill brings to the PCP"),
	REPLAY("pcp-drain-calls", "PCP drain calls", "calls", L, LOCK, true, "pcp_drain_calls", NULL,
	       "free_pcppages_bulk() calls: each one zone->lock trip that empties part of a PCP"),
	REPLAY("pcp-drained-pages", "pages drained", "pages", N, LOCK, true, "pcp_drained_pages", NULL,
	       "pages PCP drains gave back to the buddy"),
	REPLAY("zone-lock-est", "zone->lock acquisitions", "acquisitions", L, LOCK, true,
	       "zone_lock_acquisitions", NULL,
	       "zone->lock trips as the trace shows them: refills + drains + buddy-direct allocs and frees (the estimator both sides share)"),
	REPLAY("zone-lock-actual", "zone->lock acquisitions (counted)", "acquisitions", L, LOCK, false,
	       "zone_lock_acquisitions_actual", NULL,
	       "the replay's own lock_stat count from the first replayed event (no kernel figure to compare)"),
	REPLAY("fallback-events", "fallback events", "events", L, FRAG, false, "fallback_events", NULL,
	       "allocations that fell back to another migratetype's free list"),
	REPLAY("fallback-fragmenting", "fragmenting fallbacks", "events", L, FRAG, false,
	       "fallback_fragmenting", NULL, "fallbacks that split a pageblock of another type"),
	REPLAY("fallback-change-ownership", "fallbacks changing ownership", "events", N, FRAG, false,
	       "fallback_change_ownership", NULL, "fallbacks that claimed the pageblock"),
	REPLAY("fallback-pageblocks-claimed", "pageblocks claimed", "pageblocks", N, FRAG, false,
	       "fallback_pageblocks_claimed", NULL, "pageblocks fallbacks claimed for their type"),
	REPLAY("buddy-direct-allocs", "buddy direct allocs", "allocs", N, LOCK, false,
	       "buddy_direct_allocs", NULL, "allocations served from the buddy without a PCP"),
	REPLAY("buddy-direct-frees", "buddy direct frees", "frees", N, LOCK, false,
	       "buddy_direct_frees", NULL, "frees going to the buddy without a PCP"),
	REPLAY("page-allocs", "page allocs", "allocs", N, STATE, false, "allocs", NULL,
	       "the trace's page allocations"),
	REPLAY("page-frees", "page frees", "frees", N, STATE, false, "frees", NULL,
	       "the trace's page frees"),
	REPLAY("free-pages-end", "free pages at end", "pages", N, STATE, false, "nr_free_pages_end",
	       NULL, "free pages at the end of the trace"),
	REPLAY("pcp-pages-end", "PCP pages at end", "pages", N, STATE, false, "pcp_pages_end", NULL,
	       "pages on PCP lists at the end of the trace"),
	REPLAY("vmalloc-allocs", "vmalloc allocs", "allocs", N, STATE, false, "vmalloc_allocs", NULL,
	       "the trace's vmalloc allocations"),
	REPLAY("vmalloc-purges", "vmalloc purges", "purges", N, STATE, false, "vmalloc_purges", NULL,
	       "lazy vmap area purges"),
	REPLAY("free-high-order-share", "free pages in order >= 9 blocks", "fraction", H, FRAG, false,
	       "free_pages_by_order_end", NULL,
	       "share of free pages in pageblock-sized blocks and up at the end"),
	REPLAY("buddyinfo-tvd", "buddyinfo TVD", "fraction", L, FIDELITY, true,
	       "free_pages_by_order_end", NULL,
	       "total variation distance of free pages by order at the end, against the kernel's"),
	/* ---- replay under memory pressure (the compaction/, migrate/, vmscan/ events) ---- */
	REPLAY("compact-stalls", "compaction stalls", "stalls", L, FRAG, true, "compact_stalls", NULL,
	       "direct compactions that compacted (vmstat compact_stall): an allocation waited"),
	REPLAY("compact-successes", "compaction successes", "stalls", H, FRAG, true,
	       "compact_successes", NULL,
	       "direct compactions that made the page the allocation wanted (compact_success)"),
	REPLAY("compact-failures", "compaction failures", "stalls", L, FRAG, false,
	       "compact_failures", NULL, "direct compactions that did not (compact_fail)"),
	REPLAY("compact-isolated-migrate", "pages isolated for migration", "pages", N, FRAG, false,
	       "compact_isolated_migrate", NULL, "compaction's migrate scanner: pages it isolated"),
	REPLAY("compact-isolated-free", "free pages isolated", "pages", N, FRAG, false,
	       "compact_isolated_free", NULL,
	       "compaction's free scanner: free pages it took off the buddy (no mm_page_alloc)"),
	REPLAY("compact-migrated", "pages migrated by compaction", "pages", N, FRAG, true,
	       "compact_migrated", NULL, "pages compaction moved (mm_compaction_migratepages)"),
	REPLAY("kswapd-wakes", "kswapd wakes", "wakes", N, FRAG, false, "kswapd_wakes", NULL,
	       "balance_pgdat() runs of kswapd (mm_vmscan_kswapd_wake)"),
	REPLAY("kswapd-freed-pages", "pages freed by kswapd", "pages", N, FRAG, false,
	       "kswapd_freed_pages", NULL, "pages of the frees kswapd's task made: its reclaim"),
	/*
	 * /proc/vmstat's compaction, migration and reclaim counters: the
	 * kernel's between the snapshots, pagelab's from its own counters
	 * (none for reclaim, which pagelab does not model); shown, not judged
	 */
	REPLAY("vmstat-compact-stall", "compact_stall", "stalls", L, FRAG, false,
	       "vmstat_compact_stall", NULL, "vmstat: direct compactions that compacted"),
	REPLAY("vmstat-compact-fail", "compact_fail", "stalls", L, FRAG, false,
	       "vmstat_compact_fail", NULL, "vmstat: direct compactions without the page"),
	REPLAY("vmstat-compact-success", "compact_success", "stalls", H, FRAG, false,
	       "vmstat_compact_success", NULL, "vmstat: direct compactions that made the page"),
	REPLAY("vmstat-compact-migrate-scanned", "compact_migrate_scanned", "pages", L, FRAG, false,
	       "vmstat_compact_migrate_scanned", NULL, "vmstat: pages the migrate scanners looked at"),
	REPLAY("vmstat-compact-free-scanned", "compact_free_scanned", "pages", L, FRAG, false,
	       "vmstat_compact_free_scanned", NULL, "vmstat: pages the free scanners looked at"),
	REPLAY("vmstat-compact-isolated", "compact_isolated", "pages", N, FRAG, false,
	       "vmstat_compact_isolated", NULL, "vmstat: pages both scanners isolated"),
	REPLAY("vmstat-compact-daemon-wake", "compact_daemon_wake", "wakes", N, FRAG, false,
	       "vmstat_compact_daemon_wake", NULL, "vmstat: kcompactd runs for a wakeup"),
	REPLAY("vmstat-compact-daemon-migrate-scanned", "compact_daemon_migrate_scanned", "pages", L,
	       FRAG, false, "vmstat_compact_daemon_migrate_scanned", NULL,
	       "vmstat: kcompactd's share of compact_migrate_scanned"),
	REPLAY("vmstat-compact-daemon-free-scanned", "compact_daemon_free_scanned", "pages", L, FRAG,
	       false, "vmstat_compact_daemon_free_scanned", NULL,
	       "vmstat: kcompactd's share of compact_free_scanned"),
	REPLAY("vmstat-pgmigrate-success", "pgmigrate_success", "pages", N, FRAG, false,
	       "vmstat_pgmigrate_success", NULL, "vmstat: pages migrated, every reason"),
	REPLAY("vmstat-pgmigrate-fail", "pgmigrate_fail", "pages", L, FRAG, false,
	       "vmstat_pgmigrate_fail", NULL, "vmstat: pages isolated for migration that stayed"),
	REPLAY("vmstat-pgsteal-kswapd", "pgsteal_kswapd", "pages", N, FRAG, false,
	       "vmstat_pgsteal_kswapd", NULL, "vmstat: pages kswapd reclaimed (the kernel's only)"),
	REPLAY("vmstat-pgsteal-direct", "pgsteal_direct", "pages", N, FRAG, false,
	       "vmstat_pgsteal_direct", NULL, "vmstat: pages direct reclaim freed (the kernel's only)"),
	REPLAY("vmstat-pageoutrun", "pageoutrun", "runs", N, FRAG, false, "vmstat_pageoutrun", NULL,
	       "vmstat: kswapd's balance_pgdat() runs (the kernel's only)"),
	REPLAY("direct-reclaims", "direct reclaims", "reclaims", L, FRAG, false, "direct_reclaims",
	       NULL, "allocations that reclaimed themselves (mm_vmscan_direct_reclaim_begin)"),
	REPLAY("alloc-failures", "failed allocations", "allocs", L, FIDELITY, true, "alloc_failures",
	       NULL, "allocations that failed: the kernel's, and in a replay pagelab's (a fidelity miss where the kernel's succeeded)"),
	{ NULL, NULL, NULL, N, PL_METRIC_STATE, false, NULL, NULL, NULL },
};

const struct pl_metric *pl_metric_find(const char *id)
{
	if (!id)
		return NULL;
	for (const struct pl_metric *m = pl_metrics; m->id; m++)
		if (!strcmp(m->id, id))
			return m;
	return NULL;
}

const char *pl_metric_direction_name(enum pl_metric_direction d)
{
	switch (d) {
	case PL_METRIC_LOWER: return "lower";
	case PL_METRIC_HIGHER: return "higher";
	default: return "neutral";
	}
}

const char *pl_metric_family_name(enum pl_metric_family f)
{
	static const char *const names[] = {
		[PL_METRIC_SPEED] = "speed", [PL_METRIC_LOCK] = "lock traffic",
		[PL_METRIC_FRAG] = "fragmentation", [PL_METRIC_FIDELITY] = "fidelity",
		[PL_METRIC_STATE] = "state",
	};

	return (unsigned int)f < sizeof(names) / sizeof(names[0]) ? names[f] : "state";
}
