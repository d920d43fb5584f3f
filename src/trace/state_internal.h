/* SPDX-License-Identifier: MIT */
/*
 * state_internal.h - the loaded state shared by state.c (zones, free
 * blocks, pageblock types, sightings) and state_pcp.c (the PCPs).
 *
 * Invariant: a set bit in @held is an allocated order-0 page the state owns.
 * Single-threaded: the loader and the replay's pl_state_take() run on one
 * thread.
 */
#ifndef PAGELAB_TRACE_STATE_INTERNAL_H
#define PAGELAB_TRACE_STATE_INTERNAL_H

#include "pagelab/replay.h"
#include "pagelab/snapshot.h"

struct pl_loaded_state {
	struct pl_machine *m;
	uint64_t *held;			/* one bit per pfn */
	unsigned long nr_held;
	unsigned long cursor;
	uint64_t rng;
	unsigned long unplaced;		/* free blocks that found no room */
	unsigned long *pre_pfn;		/* positional: blocks loaded allocated */
	unsigned char *pre_order;
	size_t nr_pre, cap_pre;
	uint64_t *offline;		/* positional: per MAX_PAGE_ORDER block, offline and not yet onlined */
	unsigned short *owner;		/* positional: per sighting, whose PCP (PCP sightings) */
	unsigned long *pcp_pfn;		/* positional: PCP sightings placed, and on whose PCP */
	unsigned short *pcp_cpu;
	size_t nr_pcp, cap_pcp;
	/* what the design changed after the load, or could not: one line each */
	char notes[PL_STATE_MAX_NOTES][PL_STATE_NOTE_LEN];
	int nr_notes;
};

void pl_state_note(struct pl_loaded_state *st, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline bool held(const struct pl_loaded_state *st, unsigned long pfn)
{
	return st->held[pfn / 64] >> (pfn % 64) & 1;
}

static inline void set_held(struct pl_loaded_state *st, unsigned long pfn, bool on)
{
	if (on)
		st->held[pfn / 64] |= 1ull << (pfn % 64);
	else
		st->held[pfn / 64] &= ~(1ull << (pfn % 64));
}

static inline bool run_held(const struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	unsigned long nr = 1UL << order;

	if (pfn + nr > st->m->max_pfn)
		return false;
	if (order >= 6) {
		for (unsigned long w = pfn / 64; w < (pfn + nr) / 64; w++)
			if (st->held[w] != ~0ull)
				return false;
		return true;
	}
	for (unsigned long i = 0; i < nr; i++)
		if (!held(st, pfn + i))
			return false;
	return true;
}

/* Did the trace see any pfn of [@pfn, @pfn + @nr)? (@nr a multiple of 64) */
static inline bool touched(const struct pl_positional *pos, unsigned long pfn, unsigned long nr)
{
	for (unsigned long w = pfn / 64; w < (pfn + nr) / 64; w++)
		if (w < pos->seen_words && pos->seen[w])
			return true;
	return false;
}

static inline bool pfn_seen(const struct pl_positional *pos, unsigned long pfn)
{
	return pfn / 64 < pos->seen_words && (pos->seen[pfn / 64] >> (pfn % 64) & 1);
}

/* Did the trace see a pfn of [@pfn, @pfn + @nr)? Exact, where touched() goes by words. */
static inline bool seen_in(const struct pl_positional *pos, unsigned long pfn, unsigned long nr)
{
	unsigned long end = pfn + nr;

	while (pfn < end) {
		if (!(pfn % 64) && end - pfn >= 64) {
			if (touched(pos, pfn, 64))
				return true;
			pfn += 64;
		} else if (pfn_seen(pos, pfn++)) {
			return true;
		}
	}
	return false;
}

static inline void unhold(struct pl_loaded_state *st, unsigned long pfn, unsigned int order)
{
	for (unsigned long i = 0; i < (1UL << order); i++)
		set_held(st, pfn + i, false);
	st->nr_held -= 1UL << order;
}

/*
 * pl_state_load_pcp() - CPU @cpu's PCP of @zone from zoneinfo's @high,
 * @batch and @count; with @pos (positional) the blocks the trace sighted on
 * it (pl_positional_pcp_owners()'s owner in @st->owner) first.
 */
void pl_state_load_pcp(struct pl_loaded_state *st, struct zone *zone, unsigned int cpu, int high,
		       int batch, int count, const struct pl_positional *pos);

#endif
