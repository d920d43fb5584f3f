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
 * Invariant: @pending holds a pfn only while the pfn's latest event was a
 * PCP-order free; @lines holds each busy free's line once. Memory follows
 * the trace's events, never the values of its pfns.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/replay.h"
#include "pagelab/trace.h"

/*
 * @pending: kernel pfn -> 1 + line, open addressing with linear probing and
 * backward-shift deletion. A hash, not an array by pfn: its size follows
 * the frees awaiting their next event, never the highest pfn a trace names.
 */
static inline size_t slot_of(unsigned long pfn, size_t cap)
{
	return (size_t)((pfn * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1);
}

static struct pl_pcp_pending *lookup(const struct pl_pcp_busy *b, unsigned long pfn)
{
	if (!b->pending_cap)
		return NULL;
	for (size_t i = slot_of(pfn, b->pending_cap);; i = (i + 1) & (b->pending_cap - 1)) {
		struct pl_pcp_pending *e = &b->pending[i];

		if (!e->line)
			return NULL;
		if (e->pfn == pfn)
			return e;
	}
}

static void insert(struct pl_pcp_busy *b, unsigned long pfn, unsigned long line)
{
	size_t i = slot_of(pfn, b->pending_cap);

	while (b->pending[i].line)
		i = (i + 1) & (b->pending_cap - 1);
	b->pending[i].pfn = pfn;
	b->pending[i].line = line;
	b->pending_len++;
}

static int grow_pending(struct pl_pcp_busy *b)
{
	struct pl_pcp_pending *old = b->pending;
	size_t ocap = b->pending_cap, ncap = ocap ? ocap * 2 : 1024;

	b->pending = calloc(ncap, sizeof(*b->pending));
	if (!b->pending) {
		b->pending = old;
		return -ENOMEM;
	}
	b->pending_cap = ncap;
	b->pending_len = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].line)
			insert(b, old[i].pfn, old[i].line);
	free(old);
	return 0;
}

/* Remove @e, moving later entries of its probe run back into the hole. */
static void erase(struct pl_pcp_busy *b, struct pl_pcp_pending *e)
{
	size_t mask = b->pending_cap - 1, hole = (size_t)(e - b->pending);

	for (size_t j = (hole + 1) & mask; b->pending[j].line; j = (j + 1) & mask) {
		size_t home = slot_of(b->pending[j].pfn, b->pending_cap);

		/* move j into the hole unless its home lies cyclically in (hole, j] */
		if (((j - home) & mask) >= ((j - hole) & mask)) {
			b->pending[hole] = b->pending[j];
			hole = j;
		}
	}
	b->pending[hole].line = 0;
	b->pending_len--;
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
	unsigned long pfn, end;
	struct pl_pcp_pending *e;
	bool from_buddy;

	if (!b || !ev) {
		pl_warn_ratelimited("pl_pcp_busy_event: NULL argument");
		return -EINVAL;
	}
	pfn = ev->pfn;
	if (pfn >= PL_TRACE_PFN_LIMIT || ev->order < 0 || ev->order > MAX_PAGE_ORDER)
		return 0;
	switch (ev->type) {
	case PL_TRACE_PAGE_FREE:
		e = lookup(b, pfn);
		if (!pcp_allowed_order((unsigned int)ev->order) || ev->line >= UINT32_MAX - 1) {
			if (e)
				erase(b, e);
			return 0;
		}
		if (e) {
			e->line = ev->line + 1;
			return 0;
		}
		if ((b->pending_len + 1) * 2 > b->pending_cap && grow_pending(b))
			return -ENOMEM;
		insert(b, pfn, ev->line + 1);
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
	if (!b->pending_len)
		return 0;
	for (end = pfn + (1UL << ev->order); pfn < end; pfn++) {
		e = lookup(b, pfn);
		if (!e)
			continue;
		if (from_buddy && push_line(b, e->line - 1UL))
			return -ENOMEM;
		erase(b, e);
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
	if (b && b->nr)
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
	if (!b)
		return;
	free(b->pending);
	free(b->lines);
	memset(b, 0, sizeof(*b));
}
