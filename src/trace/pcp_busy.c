// SPDX-License-Identifier: MIT
/*
 * pcp_busy.c - which of a trace's frees found their CPU's PCP busy and went
 * straight to the buddy, so that a replay frees them the same way.
 *
 * free_frozen_pages() and free_unref_folios() only trylock the CPU's
 * pcp->lock: since 6.0 the lock does not keep interrupts out, so a softirq
 * that frees a page (RCU callbacks freeing page tables and slabs) while its
 * CPU is inside a PCP refill or drain finds it held and calls
 * free_one_page(). mm_page_free has fired by then, and nothing else does:
 * the event looks like any PCP free. What the trace does show is the page's
 * next event. A page on a PCP leaves it by mm_page_alloc or
 * mm_page_pcpu_drain; a page taken from the buddy fires
 * mm_page_alloc_zone_locked or, for a fallback steal, only
 * mm_page_alloc_extfrag, and a block merged from it fires those for its
 * head. So a PCP-order free whose page next appears taken from the buddy,
 * alone or inside a larger block, with no drain or allocation between,
 * went to the buddy at the free (any other way there fires a drain).
 *
 * Invariant: @pending[pfn] is nonzero only while the pfn's latest event
 * was a PCP-order free; @lines holds each busy free's line once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/replay.h"
#include "pagelab/trace.h"

static int grow_pending(struct pl_pcp_busy *b, unsigned long end)
{
	size_t n = max((size_t)end, b->pending_len * 2);
	uint32_t *p = realloc(b->pending, n * sizeof(*p));

	if (!p)
		return -ENOMEM;
	memset(p + b->pending_len, 0, (n - b->pending_len) * sizeof(*p));
	b->pending = p;
	b->pending_len = n;
	return 0;
}

static int push_line(struct pl_pcp_busy *b, unsigned long line)
{
	if (b->nr == b->cap) {
		size_t n = b->cap ? b->cap * 2 : 1024;
		unsigned long *l = realloc(b->lines, n * sizeof(*l));

		if (!l)
			return -ENOMEM;
		b->lines = l;
		b->cap = n;
	}
	b->lines[b->nr++] = line;
	return 0;
}

int pl_pcp_busy_event(struct pl_pcp_busy *b, const struct pl_trace_event *ev)
{
	unsigned long pfn = ev->pfn, end;
	bool from_buddy;

	if (pfn == -1UL || pfn >= (1UL << 32) || ev->order < 0 || ev->order > MAX_PAGE_ORDER)
		return 0;
	switch (ev->type) {
	case PL_TRACE_PAGE_FREE:
		if (pfn >= b->pending_len && grow_pending(b, pfn + 1))
			return -ENOMEM;
		b->pending[pfn] = pcp_allowed_order((unsigned int)ev->order) &&
					  ev->line < UINT32_MAX - 1 ? (uint32_t)ev->line + 1 : 0;
		return 0;
	case PL_TRACE_ZONE_LOCKED:
	case PL_TRACE_EXTFRAG:
		from_buddy = true;
		break;
	case PL_TRACE_PAGE_ALLOC:
	case PL_TRACE_PCPU_DRAIN:
		from_buddy = false;
		break;
	default:
		return 0;
	}
	end = min(pfn + (1UL << ev->order), (unsigned long)b->pending_len);
	for (; pfn < end; pfn++) {
		if (!b->pending[pfn])
			continue;
		if (from_buddy && push_line(b, b->pending[pfn] - 1UL))
			return -ENOMEM;
		b->pending[pfn] = 0;
	}
	return 0;
}

static int cmp_line(const void *a, const void *b)
{
	unsigned long x = *(const unsigned long *)a, y = *(const unsigned long *)b;

	return x < y ? -1 : x > y;
}

void pl_pcp_busy_finish(struct pl_pcp_busy *b)
{
	if (b->nr)
		qsort(b->lines, b->nr, sizeof(*b->lines), cmp_line);
}

bool pl_pcp_busy_has(const struct pl_pcp_busy *b, unsigned long line)
{
	size_t lo = 0, hi = b ? b->nr : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (b->lines[mid] == line)
			return true;
		if (b->lines[mid] < line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

void pl_pcp_busy_release(struct pl_pcp_busy *b)
{
	free(b->pending);
	free(b->lines);
	memset(b, 0, sizeof(*b));
}
