// SPDX-License-Identifier: MIT
/*
 * positional.c - where each page was when a trace started, inferred from
 * the first event that touches it (issue 13, state=positional):
 *
 *   mm_page_alloc_zone_locked  the block was free in the buddy, on the list
 *                              of its migratetype;
 *   mm_page_alloc (no refill before it), mm_page_pcpu_drain
 *                              it sat on that CPU's PCP, with that order
 *                              and list;
 *   mm_page_free               it was allocated, with that order.
 *
 * A block whose pages were partly seen before is ambiguous and not
 * recorded. One record per first sighting; a bitmap of seen pfns, grown as
 * higher pfns appear. The records are what the loader (state.c) places.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/trace.h"

static int grow_seen(struct pl_positional *pos, unsigned long end_pfn)
{
	size_t words = (end_pfn + 63) / 64, nw;
	uint64_t *n;

	if (words <= pos->seen_words)
		return 0;
	nw = max(words, pos->seen_words * 2);
	n = realloc(pos->seen, nw * sizeof(*n));
	if (!n)
		return -ENOMEM;
	memset(n + pos->seen_words, 0, (nw - pos->seen_words) * sizeof(*n));
	pos->seen = n;
	pos->seen_words = nw;
	return 0;
}

static int add_rec(struct pl_positional *pos, const struct pl_trace_event *ev, int kind)
{
	struct pl_sighting *s;

	if (pos->nr == pos->cap) {
		size_t cap = pos->cap ? pos->cap * 2 : 4096;
		struct pl_sighting *n = realloc(pos->rec, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pos->rec = n;
		pos->cap = cap;
	}
	s = &pos->rec[pos->nr++];
	s->pfn = ev->pfn;
	s->kind = (unsigned char)kind;
	s->order = (unsigned char)ev->order;
	s->mt = (unsigned char)(ev->migratetype >= 0 && ev->migratetype < MIGRATE_PCPTYPES
				? ev->migratetype : MIGRATE_MOVABLE);
	s->cpu = (unsigned short)min(ev->cpu, 0xffffu);
	pos->by_kind[kind]++;
	return 0;
}

int pl_positional_event(struct pl_positional *pos, const struct pl_trace_event *ev)
{
	unsigned long nr, fresh = 0;
	int kind;

	switch (ev->type) {
	case PL_TRACE_ZONE_LOCKED:
		kind = PL_SEEN_FREE;
		break;
	case PL_TRACE_PAGE_ALLOC:
		if (ev->pfn == -1UL)
			return 0;
		/* orders a PCP does not hold came from the buddy */
		kind = (ev->order <= PAGE_ALLOC_COSTLY_ORDER || ev->order == HPAGE_PMD_ORDER)
			       ? PL_SEEN_PCP : PL_SEEN_FREE;
		break;
	case PL_TRACE_PCPU_DRAIN:
		kind = PL_SEEN_PCP;
		break;
	case PL_TRACE_PAGE_FREE:
		kind = PL_SEEN_ALLOCATED;
		break;
	default:
		return 0;
	}
	nr = 1UL << ev->order;
	if (ev->pfn + nr > (1UL << 40) || grow_seen(pos, ev->pfn + nr))
		return -ENOMEM;
	for (unsigned long p = ev->pfn; p < ev->pfn + nr; p++) {
		uint64_t bit = 1ull << (p % 64);

		if (!(pos->seen[p / 64] & bit)) {
			pos->seen[p / 64] |= bit;
			fresh++;
		}
	}
	if (ev->pfn + nr > pos->max_pfn)
		pos->max_pfn = ev->pfn + nr;
	if (fresh != nr)	/* partly seen before: ambiguous */
		return 0;
	return add_rec(pos, ev, kind);
}

void pl_positional_release(struct pl_positional *pos)
{
	free(pos->rec);
	free(pos->seen);
	memset(pos, 0, sizeof(*pos));
}
