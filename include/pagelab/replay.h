/* SPDX-License-Identifier: MIT */
/*
 * replay.h - a kernel trace replayed on a pagelab machine: one vCPU per
 * trace CPU, pfns mapped to the blocks pagelab handed out; with it the
 * kernel's vmstat tick phase, the frees that found the PCP busy, and the
 * positional inference that places a snapshot's free blocks at pfns.
 */
#ifndef PAGELAB_REPLAY_H
#define PAGELAB_REPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "mm.h"
#include "snapshot.h"
#include "trace.h"

/* ---- the kernel's vmstat tick phase (src/trace/tick.c) ---------------- */

#define PL_TICK_BINS		100	/* 10 ms each */
#define PL_TICK_MIN_RUNS	5	/* fewer kworker drain runs: phase unknown */

/**
 * struct pl_tick_phase - per CPU, the start times (modulo one second) of
 * the trace's kworker drain runs, in PL_TICK_BINS bins; zero it to start.
 */
struct pl_tick_phase {
	unsigned int nr_cpus;
	uint32_t (*bins)[PL_TICK_BINS];
	uint64_t (*sum_us)[PL_TICK_BINS];	/* offsets within the second, in us */
	bool *in_drain;				/* the CPU's last event was a drain */
	struct pl_tick_runs {			/* each kworker drain run's start, ns */
		uint64_t *start;
		size_t nr, cap;
	} *runs;
};

/** pl_tick_phase_event() - account one event, in trace order. Return: 0 or -ENOMEM. */
int pl_tick_phase_event(struct pl_tick_phase *tp, const struct pl_trace_event *ev);
/**
 * pl_tick_phase_ns() - when in each second (ns, 0..999,999,999 of the
 * trace clock) the kernel ran CPU @cpu's vmstat_update: from its own
 * kworker drains, or, with fewer than PL_TICK_MIN_RUNS of those, from all
 * CPUs' (their ticks share one grid); -1 when the trace has none.
 */
long pl_tick_phase_ns(const struct pl_tick_phase *tp, unsigned int cpu);
/**
 * pl_tick_phase_runs() - the start (ns, trace clock) of each kworker drain
 * run on @cpu, in trace order, in *@starts (valid until the release).
 * Return: how many (0 for a CPU without any).
 */
size_t pl_tick_phase_runs(const struct pl_tick_phase *tp, unsigned int cpu,
			  const uint64_t **starts);
/** pl_tick_phase_release() - free @tp's arrays (the struct is zeroed). */
void pl_tick_phase_release(struct pl_tick_phase *tp);

/*
 * Where a trace shows no phase (no kworker decay drain), a replay runs at
 * each of these phases (ms into the second) and reports the run
 * pl_tick_medoid() picks: the figures follow the phase, by a few percent
 * on most traces and several times over where a zone sits at its high
 * watermark (untar, a fresh VM onlining memory: drain calls 1,166 with the
 * tick 20-36 ms into the second, 106-181 elsewhere, the kernel's 158), so
 * one arbitrary phase is a lottery and the typical run is the estimate.
 */
#define PL_TICK_PROBES		4
#define PL_TICK_PROBE_MS	{ 0, 250, 500, 750 }
/*
 * Where the trace shows the phase, the kernel's own tick still lands tens
 * of ms either side of it, second by second (PL_TICK_WINDOW_NS), and in a
 * second without a decay drain the trace does not say where: a replay
 * runs at the phase plus each of these (ms) and reports the typical run
 * (git: drain calls 42-113 at one phase or another from 71 to 135 ms, the
 * kernel's 111).
 */
#define PL_TICK_JITTER_MS	{ -30, -10, 10, 30 }

/**
 * pl_tick_medoid() - the run whose scored figures (PCP refills, pages per
 * refill, drain calls, pages drained, zone->lock) sit nearest the median
 * of all @n: the least sum over the figures of |ln((x + 1) / (median + 1))|;
 * the earliest run on a tie. Return: its index, or -EINVAL (one warning)
 * for a NULL @runs or an @n outside 1..PL_TICK_PROBES.
 */
int pl_tick_medoid(const struct pl_trace_score *runs, size_t n);

/* ---- frees that found the PCP busy (src/trace/pcp_busy.c) -------------- */

/**
 * struct pl_pcp_busy - the frees of a trace that went straight to the buddy
 * because the freeing CPU's pcp->lock was held (pcp_spin_trylock() failed:
 * mostly a softirq's free while its CPU was inside a PCP refill or drain).
 * The trace shows them by what follows: a page freed at a PCP order and
 * next taken from the buddy (its zone_locked or extfrag event, or a larger
 * block's that covers it), with no drain between, never reached a PCP.
 * Zero it to start; one pass over the whole trace, then pl_pcp_busy_finish().
 * @pending: kernel pfn -> 1 + the line of its PCP-order free that no event
 *           has followed yet (a hash of @pending_len entries in
 *           @pending_cap slots: memory follows the frees awaiting an event,
 *           not the pfns' values; lines from 2^32 - 1 are not followed).
 * @lines:   the busy frees' lines, sorted by pl_pcp_busy_finish().
 */
struct pl_pcp_pending {
	unsigned long pfn;
	unsigned long line;	/* 1 + the free's line; 0: an empty slot */
};

struct pl_pcp_busy {
	struct pl_pcp_pending *pending;
	size_t pending_len, pending_cap;
	unsigned long *lines;
	size_t nr, cap;
};

/** pl_pcp_busy_event() - account one event, in trace order. Return: 0, -ENOMEM, -EINVAL (NULL). */
int pl_pcp_busy_event(struct pl_pcp_busy *b, const struct pl_trace_event *ev);
/** pl_pcp_busy_finish() - sort the lines found (after the last event). */
void pl_pcp_busy_finish(struct pl_pcp_busy *b);
/** pl_pcp_busy_has() - is the free on trace line @line one that went to the buddy? */
bool pl_pcp_busy_has(const struct pl_pcp_busy *b, unsigned long line);
/** pl_pcp_busy_release() - free @b's arrays (the struct is zeroed). */
void pl_pcp_busy_release(struct pl_pcp_busy *b);

/* ---- positional inference (src/trace/positional.c) -------------------- */

enum { PL_SEEN_FREE, PL_SEEN_PCP, PL_SEEN_ALLOCATED, NR_PL_SEEN };

/** struct pl_sighting - a block's first sighting: where it was at trace start. */
struct pl_sighting {
	unsigned long pfn;
	unsigned char kind;	/* PL_SEEN_* */
	unsigned char order;
	unsigned char mt;	/* the list (free list or PCP list) it was on */
	unsigned short cpu;	/* PL_SEEN_PCP: whose PCP */
	unsigned char drained;	/* PL_SEEN_PCP: first seen drained, not allocated */
};

/* pl_positional.pb_type of a pageblock the trace says nothing exact about */
#define PL_PB_UNKNOWN 0xff

/**
 * struct pl_positional - the first sightings of a trace (zero it to start).
 * @rec: @nr records in trace order. @seen: a bitmap of kernel pfns seen
 * (@seen_words words). @max_pfn: one past the highest pfn seen.
 * @by_kind: records per PL_SEEN_* kind.
 * @pb_type: per pageblock of the kernel's pfns (@pb_nr of them), its
 *           migratetype at trace start where an event states it exactly:
 *           the first mm_page_alloc_zone_locked (taken off the free list of
 *           the pageblock's type), mm_page_pcpu_drain (the pageblock's type
 *           as it was drained) or mm_page_alloc_extfrag (fallback_migratetype,
 *           the type before a claim) that touches it; else PL_PB_UNKNOWN.
 * @pb_exact: pageblocks with a type in @pb_type.
 * @pb_from: per pageblock, PL_PB_UNKNOWN or the type it had at trace start
 *            if it was the pageblock a claim below pageblock order took
 *            (a candidate: see positional.c, claim_candidate()).
 * @claims_pending: [type][fallback type] claims below pageblock order not yet
 *            matched to a pageblock; @pb_claimed: pageblocks so matched.
 * @pcp_seen: per CPU and PCP list (order_to_pindex()), the pages of the
 *            blocks first sighted on that list (PL_SEEN_PCP records).
 * @pcp_emptied: per CPU, a bit per PCP list the trace shows empty at some
 *            point: a refill of it (rmqueue_bulk() runs only on an empty
 *            list), or a drain run that moved on from it to the next list
 *            (free_pcppages_bulk() leaves a list only once it is empty).
 *            Such a list's pages at trace start all left it by then, each
 *            with an event; a list never shown empty may hold pages no
 *            event ever shows.
 * @drain_run: per CPU, 1 + the list of the drain run in progress, 0 when
 *            that CPU's last event was not a drain.
 * @pfn_limit: set by the caller before the first event: kernel pfns at or
 *            above it (the snapshot's span) are not followed; 0 or above
 *            PL_TRACE_DENSE_SPAN: PL_TRACE_DENSE_SPAN. @out_of_range: events
 *            not followed for that.
 */
struct pl_positional {
	struct pl_sighting *rec;
	size_t nr, cap;
	uint64_t *seen;
	size_t seen_words;
	unsigned long max_pfn;
	unsigned long by_kind[NR_PL_SEEN];
	unsigned char *pb_type;
	unsigned char *pb_from;
	size_t pb_nr;
	unsigned long pb_exact;
	unsigned long claims_pending[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES];
	unsigned long pb_claimed;
	unsigned long pcp_seen[PL_SNAP_MAX_CPUS][NR_PCP_LISTS];
	uint16_t pcp_emptied[PL_SNAP_MAX_CPUS];
	unsigned char drain_run[PL_SNAP_MAX_CPUS];
	unsigned long pfn_limit;
	unsigned long out_of_range;
};

/**
 * pl_positional_event() - account one event of the trace, in order: the
 * first event that touches a block records where the block was (taken
 * from the buddy: free; allocated or drained off a PCP without a refill:
 * on that PCP; freed: allocated with that order).
 * Return: 0 or -ENOMEM.
 */
int pl_positional_event(struct pl_positional *pos, const struct pl_trace_event *ev);
/**
 * pl_positional_pcp_owners() - whose PCP each PCP sighting in the kernel
 * pfns [@start_pfn, @end_pfn) (one zone) was on at trace start, given the
 * zone's reported per-CPU counts @count[0..@nr_cpus).
 *
 * A sighting says "the CPU that drained or allocated it", which is the
 * PCP's own CPU except for drain_all_pages(): its caller drains every
 * CPU's PCP itself (since 5.19), so another CPU's pages fire on the
 * caller's CPU. A CPU whose sighted pages exceed its reported count by
 * more than its @batch took the excess off other PCPs: its latest drained
 * sightings (allocations are always local) go to CPUs whose count has room
 * beyond their own sightings, the roomiest first, as far as the room goes.
 * @owner (@pos->nr entries, filled here for the zone's PCP sightings and
 * left alone elsewhere) receives each one's CPU.
 * Return: the pages moved to another CPU.
 */
unsigned long pl_positional_pcp_owners(const struct pl_positional *pos, unsigned long start_pfn,
				       unsigned long end_pfn, const int *count, const int *batch,
				       unsigned int nr_cpus, unsigned short *owner);
/** pl_positional_release() - free the records (the struct is zeroed). */
void pl_positional_release(struct pl_positional *pos);

/**
 * pl_snapshot_config_positional() - a machine config with the kernel's pfn
 * layout, so that a trace's pfns are pagelab's: DMA32 ends where the
 * kernel's does, Normal reaches the managed pages plus slack (or the
 * highest pfn seen). Otherwise as pl_snapshot_config().
 */
void pl_snapshot_config_positional(const struct pl_snapshot *snap, const struct pl_positional *pos,
				   struct pl_config *cfg);

/**
 * pl_machine_load_positional() - level POSITIONAL: the machine from
 * pl_snapshot_config_positional() gets each sighted block where the trace
 * says it was (free in the buddy, on a CPU's PCP, or allocated with its
 * order: handed to the replay through pl_state_pretrace()), pageblock
 * types from the sightings' lists (the rest in the snapshot's
 * proportions), then the rest of the snapshot's free blocks and PCP counts
 * in memory the trace never touches, as level COUNTS places them.
 * Return: the state handle, or NULL (no memory; the machine is unusable).
 */
struct pl_loaded_state *pl_machine_load_positional(struct pl_machine *m,
						   const struct pl_snapshot *snap,
						   const struct pl_positional *pos);

/**
 * pl_state_pretrace() - the blocks a positional state loaded as allocated
 * (pfn = the kernel's, identity), for the replay to free when the trace
 * does. Return: how many; *@pfn and *@order point into the state.
 */
size_t pl_state_pretrace(const struct pl_loaded_state *st, const unsigned long **pfn,
			 const unsigned char **order);

/**
 * pl_state_pcp_sighted() - the sighted blocks a positional state put on a
 * PCP (pfn = the kernel's) and whose PCP (pl_positional_pcp_owners()), for
 * the replay to follow the kernel's PCPs from the start.
 * Return: how many; *@pfn and *@cpu point into the state.
 */
size_t pl_state_pcp_sighted(const struct pl_loaded_state *st, const unsigned long **pfn,
			    const unsigned short **cpu);

/* ---- replay (src/trace/replay.c) -------------------------------------- */

/**
 * struct pl_replay_result - the pagelab side of a replay.
 * @score:     pagelab's own tracepoints scored as a kernel trace is.
 * @warn:      counted warnings by class (replay classes).
 * @events:    events replayed.
 * @free_pages_by_order: free pages per order at the end (buddy only).
 */
struct pl_replay;

/**
 * pl_replay_create() - a replay of a trace on @m (one vCPU per trace CPU:
 * CPUs >= m->nr_cpus are warned about and their events skipped).
 * @st: the loaded state, or NULL (frees of pre-trace pages are then
 *      warned about and skipped).
 * Return: the replay or NULL (no memory).
 */
struct pl_replay *pl_replay_create(struct pl_machine *m, struct pl_loaded_state *st);

/**
 * pl_replay_event() - replay one event: allocations and frees through the
 * mm API on vCPU @ev->cpu, pl_vmstat_tick() on every vCPU once per second
 * of trace time, vmap areas through the vmalloc layer; kernel-internal
 * events (refills, drains, extfrag) are not replayed, pagelab makes its own.
 * Return: 0, or a positive enum pl_trace_warn + 1 when the event was
 * skipped with a counted warning.
 */
int pl_replay_event(struct pl_replay *r, const struct pl_trace_event *ev);

/**
 * pl_replay_set_emit() - print pagelab's own tracepoints to @f as raw
 * tracefs text (NULL: off).
 */
void pl_replay_set_emit(struct pl_replay *r, FILE *f);

/**
 * pl_replay_set_pfn_limit() - kernel pfns at or above @limit (the end of
 * the traced machine's memory) are counted pfn_out_of_range and skipped.
 * 0: no limit.
 */
void pl_replay_set_pfn_limit(struct pl_replay *r, unsigned long limit);
/**
 * pl_replay_set_tick_phase() - tick vCPU @cpu at @phase_ns into each second
 * of the trace clock (pl_tick_phase_ns()), from before the first event;
 * by default every vCPU ticks one second after the first event, then every
 * second. Return: 0, or -EINVAL (no such vCPU, a phase outside a second,
 * or the replay already started) with nothing changed.
 */
int pl_replay_set_tick_phase(struct pl_replay *r, unsigned int cpu, long phase_ns);

/*
 * The kernel's vmstat tick on a CPU lands up to tens of ms either side of
 * its phase, second by second: round_jiffies() puts the expiry on the
 * whole-second jiffies grid and the timer wheel's granularity (8 jiffies
 * at that range: 32 ms at HZ=250) moves it on (git: decay drains at 82-142
 * ms into their seconds). A kworker drain run this near a vCPU's phase is
 * that second's tick.
 */
#define PL_TICK_WINDOW_NS	40000000L

/**
 * pl_replay_set_tick_times() - tick vCPU @cpu where the kernel's own tick
 * shows: in a second with a time of @times (ascending, trace clock ns; the
 * kernel's kworker drain runs, pl_tick_phase_runs()) within
 * PL_TICK_WINDOW_NS of the vCPU's phase, at that time rather than at the
 * phase. Needs a phase (pl_replay_set_tick_phase()) to act. @times is
 * copied. Return: 0, or -EINVAL (no such vCPU, @times out of order or
 * NULL with @n, the replay already started) or -ENOMEM, nothing changed.
 */
int pl_replay_set_tick_times(struct pl_replay *r, unsigned int cpu, const uint64_t *times,
			     size_t n);
/**
 * pl_replay_set_pcp_busy() - replay the frees @busy lists (finished, and
 * kept alive by the caller until the replay ends) as the kernel ran them:
 * straight to the buddy, pl_free_pages_pcp_busy(). NULL: every free of a
 * PCP order goes to its CPU's PCP.
 */
void pl_replay_set_pcp_busy(struct pl_replay *r, const struct pl_pcp_busy *busy);

/**
 * pl_replay_set_timeline() - call @fn(@ctx, t_seconds) once per second of
 * trace time, after the tick (for timelines).
 */
void pl_replay_set_timeline(struct pl_replay *r, void (*fn)(void *ctx, unsigned long t), void *ctx);

/** pl_replay_score() - pagelab's side so far (its tracepoints, scored). */
const struct pl_trace_score *pl_replay_score(const struct pl_replay *r);
/** pl_replay_warnings() - the replay's counted warnings by class. */
const unsigned long *pl_replay_warnings(const struct pl_replay *r);

/**
 * pl_replay_destroy() - end the replay. The blocks still mapped stay
 * allocated on the machine (they are the trace's live memory), unless
 * @free_live, which frees them.
 */
void pl_replay_destroy(struct pl_replay *r, bool free_live);

/** pl_free_pages_by_order() - free PAGES per order in @m's buddy, all zones. */
void pl_free_pages_by_order(struct pl_machine *m, unsigned long out[NR_PAGE_ORDERS]);

#endif /* PAGELAB_REPLAY_H */
