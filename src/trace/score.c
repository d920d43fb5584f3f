// SPDX-License-Identifier: MIT
/*
 * score.c - the figures of a stream of page-allocator events, one
 * definition for the kernel's trace and for pagelab's own tracepoints, and
 * the printing of an event as the kernel's ftrace text.
 *
 * Runs: the kernel does not trace "a refill started" or "a drain started",
 * only each block moved. One rmqueue_bulk() fires its zone_locked events
 * back to back on one CPU with the pcp lock held, so nothing else of that
 * CPU can come between them; the same for one free_pcppages_bulk()'s
 * pcpu_drain events. A run is therefore a maximal sequence of one kind on
 * one CPU (and, for refills, one order), ended by any other event of that
 * CPU. Two bulk calls back to back with nothing between on that CPU count
 * as one run: the estimate's one known undercount.
 */
#include <stddef.h>
#include <string.h>
#include "pagelab/trace.h"

enum { RUN_NONE, RUN_REFILL, RUN_DRAIN, RUN_DIRECT };

void pl_trace_score_init(struct pl_trace_score *s)
{
	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return;
	memset(s, 0, sizeof(*s));
}

/* The task slot of @ev's pid, claimed for it. */
static signed char *task_state(struct pl_trace_pressure *p, const struct pl_trace_event *ev)
{
	unsigned int i = (unsigned int)ev->pid % PL_SCORE_TASKS;

	if (p->task_pid[i] != ev->pid) {
		p->task_pid[i] = ev->pid;
		p->task_state[i] = 0;
	}
	return &p->task_state[i];
}

/* Finish a task's open direct compaction: a stall either succeeded or failed. */
static void task_close(struct pl_trace_pressure *p, signed char *st)
{
	if (*st == 2)
		p->compact_failures++;
	*st = 0;
}

static void score_pressure(struct pl_trace_pressure *p, const struct pl_trace_event *ev)
{
	signed char *st;

	switch (ev->type) {
	case PL_TRACE_COMPACT_TRY:
		st = task_state(p, ev);
		task_close(p, st);
		*st = 1;
		break;
	case PL_TRACE_COMPACT_BEGIN:
		p->compact_runs++;
		st = task_state(p, ev);
		if (*st == 1) {
			p->compact_stalls++;
			*st = 2;
		}
		break;
	case PL_TRACE_COMPACT_END:
		p->compact_runs_success += ev->status == PL_COMPACT_SUCCESS;
		st = task_state(p, ev);
		if (*st == 2 && ev->status == PL_COMPACT_SUCCESS) {
			p->compact_successes++;
			*st = 3;
		}
		break;
	case PL_TRACE_COMPACT_ISOLATE_MIGRATE:
		p->compact_migrate_scanned += ev->nr_scanned;
		p->compact_isolated_migrate += ev->nr_taken;
		break;
	case PL_TRACE_COMPACT_ISOLATE_FREE:
	case PL_TRACE_COMPACT_FAST_ISOLATE_FREE:
		p->compact_free_scanned += ev->nr_scanned;
		p->compact_isolated_free += ev->nr_taken;
		break;
	case PL_TRACE_COMPACT_MIGRATEPAGES:
		p->compact_migrated += ev->nr_succeeded;
		p->compact_migrate_failed += ev->nr_failed;
		break;
	case PL_TRACE_MIGRATE_PAGES:
		p->pgmigrate_success += ev->nr_succeeded;
		p->pgmigrate_fail += ev->nr_failed;
		if (ev->reason == PL_MR_CONTIG_RANGE)
			p->contig_migrated += ev->nr_succeeded;
		break;
	case PL_TRACE_COMPACT_DEFERRED:
		p->compact_deferred++;
		break;
	case PL_TRACE_KCOMPACTD_WAKE:
		p->kcompactd_wakes++;
		break;
	case PL_TRACE_WAKEUP_KCOMPACTD:
		p->wakeup_kcompactd++;
		break;
	case PL_TRACE_KSWAPD_WAKE:
		p->kswapd_wakes++;
		break;
	case PL_TRACE_WAKEUP_KSWAPD:
		p->wakeup_kswapd++;
		break;
	case PL_TRACE_DIRECT_RECLAIM_BEGIN:
		p->direct_reclaims++;
		break;
	case PL_TRACE_DIRECT_RECLAIM_END:
		p->direct_reclaimed += ev->nr_reclaimed;
		break;
	default:
		break;
	}
}

void pl_trace_score_pressure_finish(struct pl_trace_score *s)
{
	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return;
	for (int i = 0; i < PL_SCORE_TASKS; i++)
		task_close(&s->pr, &s->pr.task_state[i]);
}

void pl_trace_score_event(struct pl_trace_score *s, const struct pl_trace_event *ev)
{
	unsigned int cpu;
	int kind = RUN_NONE;

	if ((!s || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return;
	cpu = ev->cpu;
	/*
	 * What the parser never returns: no such type, or a page event's order or
	 * migratetype out of range (a pressure event's order may be -1: whole-zone
	 * compaction; score_pressure() indexes nothing by it).
	 */
	if ((unsigned int)ev->type >= NR_PL_TRACE_TYPES)
		return;
	if (ev->type < PL_TRACE_PRESSURE_FIRST &&
	    (ev->order < 0 || ev->order > MAX_PAGE_ORDER || ev->fallback_order < 0 ||
	     ev->fallback_order > MAX_PAGE_ORDER))
		return;
	if (cpu >= PL_SCORE_MAX_CPUS)
		return;
	if (cpu >= s->nr_cpus)
		s->nr_cpus = cpu + 1;
	switch (ev->type) {
	case PL_TRACE_ZONE_LOCKED:
		kind = ev->percpu_refill ? RUN_REFILL : RUN_DIRECT;
		if (s->run[cpu] != kind || s->run_order[cpu] != ev->order) {
			if (kind == RUN_REFILL) {
				s->pcp_refills++;
				s->refills_by_order[ev->order]++;
				s->refills_per_cpu[cpu]++;
			} else {
				s->buddy_direct_allocs++;
			}
		}
		if (kind == RUN_REFILL) {
			s->pcp_refill_pages += 1UL << ev->order;
			s->pcp_refill_pages_by_order[ev->order] += 1UL << ev->order;
		}
		break;
	case PL_TRACE_PCPU_DRAIN:
		kind = RUN_DRAIN;
		if (s->run[cpu] != RUN_DRAIN)
			s->pcp_drain_calls++;
		s->pcp_drained_pages += 1UL << ev->order;
		if (ev->migratetype >= 0 && ev->migratetype < MIGRATE_TYPES)
			s->drained_pages_by_order_mt[ev->order][ev->migratetype] += 1UL << ev->order;
		break;
	case PL_TRACE_EXTFRAG:
		/* inside a refill: the claim happens in the middle of rmqueue_bulk */
		kind = s->run[cpu];
		s->fallback_events++;
		s->fallback_fragmenting += ev->fragmenting;
		s->fallback_change_ownership += ev->change_ownership != 0;
		if (ev->fallback_order >= pageblock_order)
			s->fallback_pageblocks_claimed += 1UL << (ev->fallback_order - pageblock_order);
		else if (ev->change_ownership)
			s->fallback_pageblocks_claimed++;
		return;
	case PL_TRACE_PAGE_ALLOC:
		if (ev->pfn != -1UL) {
			s->allocs++;
			s->alloc_pages += 1UL << ev->order;
		} else {
			s->pr.alloc_failures++;
			s->pr.alloc_failures_high_order += ev->order > 0;
		}
		break;
	case PL_TRACE_PAGE_FREE:	/* _batched repeats a page mm_page_free reported */
		s->frees++;
		s->free_pages += 1UL << ev->order;
		if (ev->kswapd)
			s->pr.kswapd_freed_pages += 1UL << ev->order;
		/* orders a PCP does not take go to free_one_page() under zone->lock */
		if (!pcp_allowed_order((unsigned int)ev->order))
			s->buddy_direct_frees++;
		break;
	case PL_TRACE_ALLOC_VMAP_AREA:
		s->vmalloc_allocs += !ev->failed;
		if (!ev->failed && ev->size > PAGE_SIZE)	/* less the guard page */
			s->vmalloc_area_pages += ev->size / PAGE_SIZE - 1;
		break;
	case PL_TRACE_PURGE_VMAP_AREA:
		s->vmalloc_purges += ev->npurged > 0;
		break;
	default:
		if (ev->type >= PL_TRACE_PRESSURE_FIRST)
			score_pressure(&s->pr, ev);
		break;
	}
	s->run[cpu] = (signed char)kind;
	s->run_order[cpu] = (signed char)ev->order;
}

unsigned long pl_trace_score_zone_lock(const struct pl_trace_score *s)
{
	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	return s->pcp_refills + s->pcp_drain_calls + s->buddy_direct_allocs + s->buddy_direct_frees;
}

void pl_tp_to_trace_event(const struct pl_tp_event *tp, uint64_t ts_ns, struct pl_trace_event *ev)
{
	static const enum pl_trace_type type[NR_PL_TP] = {
		[PL_TP_MM_PAGE_ALLOC] = PL_TRACE_PAGE_ALLOC,
		[PL_TP_MM_PAGE_FREE] = PL_TRACE_PAGE_FREE,
		[PL_TP_MM_PAGE_FREE_BATCHED] = PL_TRACE_PAGE_FREE_BATCHED,
		[PL_TP_MM_PAGE_ALLOC_ZONE_LOCKED] = PL_TRACE_ZONE_LOCKED,
		[PL_TP_MM_PAGE_PCPU_DRAIN] = PL_TRACE_PCPU_DRAIN,
		[PL_TP_MM_PAGE_ALLOC_EXTFRAG] = PL_TRACE_EXTFRAG,
	};

	if ((!tp || !ev || (unsigned int)tp->tp >= NR_PL_TP) &&
	    pl_arg_refused(__func__, "NULL argument or no such tracepoint"))
		return;
	/* a page event: the pressure fields (from @start_pfn on) are not its own */
	memset(ev, 0, offsetof(struct pl_trace_event, start_pfn));
	ev->type = type[tp->tp];
	ev->cpu = tp->cpu;
	ev->ts_ns = ts_ns;
	ev->kmem = tp->kmem;
	ev->fragmenting = tp->fallback_order < pageblock_order;
}

/* gfp_flags as the kernel's show_gfp_flags() prints the bits pagelab has. */
void pl_trace_print_gfp(FILE *f, gfp_t gfp)
{
	static const struct { gfp_t bits; const char *name; } names[] = {
		{ GFP_KERNEL, "GFP_KERNEL" }, { GFP_ATOMIC, "GFP_ATOMIC" },
		{ GFP_NOWAIT, "GFP_NOWAIT" }, { __GFP_HIGH, "__GFP_HIGH" },
		{ __GFP_DMA32, "GFP_DMA32" }, { __GFP_MOVABLE, "__GFP_MOVABLE" },
		{ __GFP_RECLAIMABLE, "__GFP_RECLAIMABLE" }, { __GFP_ZERO, "__GFP_ZERO" },
		{ __GFP_NOWARN, "__GFP_NOWARN" }, { __GFP_COMP, "__GFP_COMP" },
		{ __GFP_KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM" },
	};
	bool first = true;

	if (!gfp) {
		fputs("none", f);
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		if ((gfp & names[i].bits) != names[i].bits)
			continue;
		fprintf(f, "%s%s", first ? "" : "|", names[i].name);
		gfp &= ~names[i].bits;
		first = false;
	}
}

void pl_trace_print_event(FILE *f, const struct pl_trace_event *ev)
{
	if ((!f || !ev || (unsigned int)ev->type >= NR_PL_TRACE_TYPES) &&
	    pl_arg_refused(__func__, "NULL argument or no such event type"))
		return;
	fprintf(f, "          pagelab-0     [%03u] .....  %llu.%06llu: %s: ", ev->cpu,
		(unsigned long long)(ev->ts_ns / 1000000000ull),
		(unsigned long long)(ev->ts_ns % 1000000000ull / 1000), pl_trace_type_names[ev->type]);
	switch (ev->type) {
	case PL_TRACE_PAGE_ALLOC:
		fprintf(f, "page=%016lx pfn=0x%lx order=%d migratetype=%d gfp_flags=", ev->pfn,
			ev->pfn, ev->order, ev->migratetype);
		pl_trace_print_gfp(f, ev->gfp);
		break;
	case PL_TRACE_PAGE_FREE:
	case PL_TRACE_PAGE_FREE_BATCHED:
		fprintf(f, "page=%016lx pfn=0x%lx order=%d", ev->pfn, ev->pfn, ev->order);
		break;
	case PL_TRACE_ZONE_LOCKED:
		fprintf(f, "page=%016lx pfn=0x%lx order=%d migratetype=%d percpu_refill=%d", ev->pfn,
			ev->pfn, ev->order, ev->migratetype, ev->percpu_refill);
		break;
	case PL_TRACE_PCPU_DRAIN:
		fprintf(f, "page=%016lx pfn=0x%lx order=%d migratetype=%d", ev->pfn, ev->pfn,
			ev->order, ev->migratetype);
		break;
	case PL_TRACE_EXTFRAG:
		fprintf(f, "page=%016lx pfn=0x%lx alloc_order=%d fallback_order=%d pageblock_order=%d "
			"alloc_migratetype=%d fallback_migratetype=%d fragmenting=%d "
			"change_ownership=%d", ev->pfn, ev->pfn, ev->order, ev->fallback_order,
			pageblock_order, ev->migratetype, ev->fallback_migratetype, ev->fragmenting,
			ev->change_ownership);
		break;
	default:
		break;
	}
	fputc('\n', f);
}
