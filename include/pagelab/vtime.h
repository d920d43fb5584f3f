/* SPDX-License-Identifier: MIT */
/*
 * vtime.h - virtual time: a deterministic model of how long the allocator's
 * work takes on N CPUs, and the cost mode of `vtime=1` runs.
 *
 * Each vCPU has a clock in picoseconds. pl_run_vcpus() with a vtime runs
 * the vCPU with the earliest clock next (ties: the lowest id), one step at
 * a time, on one thread: a discrete-event order that depends only on the
 * workload and the parameters, never on the host.
 *
 * What advances a clock:
 *  - every vm event counted (pl_count_events) costs event_ps[item] per unit,
 *    calibrated from single-thread runs on this machine (vtime_params.c);
 *  - a lock acquisition costs lock_ps plus the class's hold cost; a lock
 *    held (in virtual time) until t makes an acquirer wait until t (a
 *    contention) and pay handoff_ps; a trylock fails instead;
 *  - touching a cache line last written by another vCPU costs a transfer
 *    priced by distance (same core, same socket, other socket);
 *  - with a cache model (cache_lines > 0, off by default): touching a line
 *    that is not among the last cache_lines distinct lines this vCPU
 *    touched (nor the line just after one of them), costs a memory miss;
 *    a line another vCPU wrote is a transfer while it is still in that
 *    vCPU's cache, a remote miss once it has left it; with a TLB model
 *    (tlb_entries > 0, off by default), a touch on a 4 KiB page outside the
 *    vCPU's last tlb_entries pages costs a TLB miss; with a last-level
 *    cache model (llc_lines > 0, off by default), a miss on a line that the
 *    socket's shared LRU of llc_lines lines does not hold costs a memory
 *    access on top.
 *
 * Invariants:
 *  - pl_vt_cur is non-NULL only on a thread that has entered a machine
 *    created with vtime on; with it NULL every hook is one predictable
 *    branch, so the cost-free mode pays (almost) nothing;
 *  - all arithmetic is on integers: the same run gives bit-identical clocks
 *    on any host;
 *  - a vtime is used by one thread at a time (the interleaver runs every
 *    vCPU of a vtime machine on the calling thread).
 */
#ifndef PAGELAB_VTIME_H
#define PAGELAB_VTIME_H

#include <stdbool.h>
#include <stdint.h>
#include "compiler.h"

/**
 * struct pl_topology - the shape of the simulated host, for pricing cache
 * line transfers. vCPU v sits on hardware thread v (wrapping when there are
 * more vCPUs than threads): thread t of core t / threads_per_core of socket
 * (t / threads_per_core) / cores_per_socket.
 * @nr_sockets:       sockets (default 2).
 * @cores_per_socket: cores per socket (default 26).
 * @threads_per_core: SMT threads per core (default 1).
 * The defaults are the LLFree artifact's Xeon Gold 5320 (2 x 26, SMT off),
 * the machine the transfer costs were calibrated against.
 */
struct pl_topology {
	unsigned int nr_sockets;
	unsigned int cores_per_socket;
	unsigned int threads_per_core;
};

/* Distance between the vCPU touching a line and its last writer. */
enum pl_vt_dist { VT_SAME_CORE, VT_SAME_SOCKET, VT_OTHER_SOCKET, NR_VT_DIST };

/* Lock classes: each has its own calibrated hold cost (charged on acquire). */
enum pl_vt_lock_class {
	VT_LOCK_OTHER,
	VT_LOCK_ZONE,		/* zone->lock */
	VT_LOCK_PCP,		/* pcp->lock */
	VT_LOCK_VMAP_FREE,	/* free_vmap_area_lock: the free-space index */
	VT_LOCK_VMAP_NODE,	/* a vmap node's busy/lazy/pool lock */
	VT_LOCK_VMAP_OTHER,	/* the vmalloc layer's other locks (bump, block, pcpu, pgtable, objcache) */
	NR_VT_LOCK_CLASSES
};

/*
 * Paths with a cost of their own (not a vm event), charged where they run
 * (under the lock the caller holds, which they lengthen). VT_P_PCP_DRAIN
 * and VT_P_PCP_REFILL are the per-block list work of a drain
 * (free_pcppages_bulk(): the list walk, the pageblock's migratetype, the
 * counts) and of a refill (rmqueue_bulk(): the list add), outside
 * __free_one_page() and __rmqueue(); both run under zone->lock in the
 * kernel, and their cost is measured, not fitted (vtime_params.c).
 */
enum pl_vt_path {
	VT_P_RMQUEUE,	/* one __rmqueue(): take a block off the free lists */
	VT_P_FREE_ONE,	/* one __free_one_page(), merges aside (BUDDY_MERGE) */
	VT_P_LIST_ENTRY, /* one free-list entry walked by /proc/pagetypeinfo */
	VT_P_PAGEBLOCK,	/* one pageblock's migratetype read by its block count */
	VT_P_SEQ_LINE,	/* one line of a /proc report formatted */
	VT_P_RB_NODE,	/* one rbtree node visited or rewritten (vmalloc's index) */
	VT_P_MT_NODE,	/* one maple node visited or written (seed 004's index) */
	VT_P_PCP_DRAIN,	/* one block a drain takes off a PCP list for the buddy */
	VT_P_PCP_REFILL, /* one block a refill puts on a PCP list */
	NR_VT_PATHS
};

/**
 * struct pl_vt_params - the model's parameters, all in picoseconds.
 * @event_ps:    cost per unit of each vm event (indexed by enum pl_vm_event).
 * @path_ps:     cost per call (per tree node, for the P_*_NODE steps) of
 *               each enum pl_vt_path.
 * @lock_ps:     an uncontended acquire + release (the page allocator's
 *               locks and VT_LOCK_OTHER; see @vmap_lock_ps).
 * @vmap_lock_ps: the same for the vmalloc layer's lock classes
 *               (VT_LOCK_VMAP_*): fitted to the vmalloc rows alone, apart
 *               from @lock_ps, which carries the PCP fast path.
 * @hold_ps:     extra work per acquisition of each lock class that no event
 *               accounts for (the critical section's own bookkeeping).
 * @handoff_ps:  what a contended acquisition pays on top of its wait: the
 *               lock word comes from the releasing CPU.
 * @xfer_ps:     one cache line transfer by distance.
 * @idle_ps:     a step of the interleaver that did no allocator work (a
 *               vCPU polling for work): one pass of the workload's loop.
 * @miss_ps:     a memory miss of the cache model (see @cache_lines).
 * @cache_lines: the cache model: 0 off (every line costs only what the
 *               per-path costs and transfers say); K > 0: each vCPU keeps
 *               the last K distinct lines it touched (an exact LRU, so the
 *               result never depends on where the host placed anything), and
 *               a touch of a line outside them costs @miss_ps, unless the
 *               line before it is among them (a next-line prefetch: a
 *               sequential walk of struct pages misses only at its start)
 *               or the touch already paid a transfer (the line came from
 *               another CPU's cache). Not a time: a count of lines.
 * @remote_miss_ps: with the cache model, a line last written by another
 *               vCPU that has since left that vCPU's cache (its LRU) is not
 *               a transfer but this: a miss served from the writer's outer
 *               cache or memory (on a multi-die CPU dearer than a miss on
 *               one's own lines).
 * @tlb_entries: the TLB model: 0 off; E > 0: each vCPU keeps the last E
 *               distinct 4 KiB pages it touched (an exact LRU, like the
 *               cache's), and a touch on a page outside them costs
 *               @tlb_miss_ps (a page walk: a random walk over a memmap
 *               larger than the TLB's reach pays one almost every touch,
 *               one within it almost never).
 * @tlb_miss_ps: see @tlb_entries.
 * @llc_lines:   the last-level cache model (pagelab's own; 0 off, needs
 *               @cache_lines): the vCPUs of one socket share an exact LRU of
 *               the last K distinct lines that missed their own caches.
 *               @miss_ps (and @remote_miss_ps) is then a miss served by
 *               the LLC; a miss on a line the LLC does not hold (nor the
 *               line before it) pays @llc_miss_ps on top: memory. Why: the
 *               vCPUs of a socket compete for one LLC, so two CPUs freeing
 *               at random over one memmap miss more than one CPU does (the
 *               real-thread check, README). Not a time: a count of lines.
 * @llc_miss_ps: see @llc_lines.
 * @list_neighbours: 0 or 1 (pagelab's own; 0 in the anchors' set, 1 in
 *               the host's). 1: a free-list edit touches the neighbours the
 *               kernel's list operation writes (a list_del()'s prev and
 *               next: random struct pages when the list is long). 0: the
 *               list's first block stands for them, which understates a
 *               random free's lines (rand's cost then barely grows with its
 *               footprint) but is what the anchors' transfer costs were set
 *               against: with 1 their rand o0 grows 41.8x at 24 threads
 *               against the anchor's 14.1x (README).
 */
/* Room for the vm events (base.h's enum pl_vm_event, which includes this file). */
#define PL_VT_MAX_EVENTS 128

struct pl_vt_params {
	uint64_t event_ps[PL_VT_MAX_EVENTS];	/* >= NR_PL_VM_EVENTS, checked in vtime.c */
	uint64_t path_ps[NR_VT_PATHS];
	uint64_t lock_ps;
	uint64_t vmap_lock_ps;
	uint64_t hold_ps[NR_VT_LOCK_CLASSES];
	uint64_t handoff_ps;
	uint64_t xfer_ps[NR_VT_DIST];
	uint64_t idle_ps;
	uint64_t miss_ps;
	uint64_t cache_lines;
	uint64_t remote_miss_ps;
	uint64_t tlb_entries;
	uint64_t tlb_miss_ps;
	uint64_t llc_lines;
	uint64_t llc_miss_ps;
	uint64_t list_neighbours;
};

/**
 * enum pl_vt_costs - which calibrated cost set a vtime uses (vtime_params.c).
 * @PL_VT_COSTS_ANCHORS: the default: per-path costs in instructions scaled
 *                       to the LLFree anchor machine, transfers and handoff
 *                       set against the anchors' growth factors.
 * @PL_VT_COSTS_HOST:    this project's build host (the firecracker-24g VM,
 *                       AMD EPYC, 2 vCPUs): per-path and miss costs fitted to
 *                       timed single-thread runs there, transfer and handoff
 *                       measured there (scripts/vtime-calibrate.py --host).
 * The numbers are constants in the source: either set gives the same
 * predictions on any host.
 */
enum pl_vt_costs { PL_VT_COSTS_ANCHORS, PL_VT_COSTS_HOST, NR_PL_VT_COSTS };

/** pl_vt_costs_names - "anchors", "host": the names vt_costs= takes. */
extern const char *const pl_vt_costs_names[NR_PL_VT_COSTS];

/**
 * struct pl_vt_cpu - one vCPU's clock and counters (written only by the
 * thread running the vtime).
 */
struct pl_vt_cpu {
	uint64_t now;
	uint64_t wait_ps;
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t trylock_fails;
	uint64_t transfers;
	uint64_t xfer_ps;
	uint64_t misses;
	unsigned int id, core, socket;
	struct pl_vtime *vt;
	struct pl_vt_cache *cache;	/* the cache model's LRU, NULL when off */
	struct pl_vt_cache *tlb;	/* the TLB model's LRU of pages, NULL when off */
	uint64_t tlb_misses;
	uint64_t llc_misses;
} __cacheline_aligned;

/* A cache line: its address >> 6 (0: an empty slot), last writer, readers since. */
struct pl_vt_line {
	uintptr_t tag;
	int writer;
	uint64_t readers;	/* bit (vcpu % 64) for each reader since the write */
};

#define PL_VT_LINE_BITS 16	/* initial table: 2^16 slots, doubled at half full */

/**
 * struct pl_vtime - the virtual time of one machine.
 * @nr_cpus: vCPUs.
 * @cpu:     their clocks.
 * @p:       parameters.
 * @topo:    topology (cores_per_socket grown to fit nr_cpus).
 * @lines:   the line table, @nr_lines used of @nr_lines_cap (a power of 2).
 * @llc:     with the LLC model, one shared LRU per socket, @nr_llc of them
 *           (else NULL).
 * @steps:   steps pl_run_vcpus() has run on this vtime. Between two steps
 *           no vCPU is inside any allocator call (each is in a quiescent
 *           state, in RCU's terms), so a grace period requested during a
 *           step is over once @steps has moved past it: that is how
 *           kvfree_rcu ends its grace periods in virtual time, at a point
 *           of the run that never depends on the host.
 */
struct pl_vtime {
	unsigned int nr_cpus;
	struct pl_vt_cpu *cpu;
	struct pl_vt_params p;
	struct pl_topology topo;
	struct pl_vt_line *lines;
	size_t nr_lines, nr_lines_cap;
	struct pl_vt_cache **llc;
	unsigned int nr_llc;
	uint64_t steps;
};

extern _Thread_local struct pl_vt_cpu *pl_vt_cur PL_TLS;

/** pl_topology_default() - the defaults documented at struct pl_topology. */
void pl_topology_default(struct pl_topology *t);
/**
 * pl_vt_params_default() - the calibrated parameters (vtime_params.c),
 * then the overrides of the environment's PAGELAB_VT_PARAMS, if any.
 */
void pl_vt_params_default(struct pl_vt_params *p);
/**
 * pl_vt_params_costs() - cost set @set (enum pl_vt_costs), then the
 * environment's PAGELAB_VT_PARAMS overrides. An unknown @set gets the
 * anchors' set and one warning.
 */
void pl_vt_params_costs(struct pl_vt_params *p, unsigned int set);
/** pl_vt_costs_parse() - the set called @name, or -1 (no warning). */
int pl_vt_costs_parse(const char *name);
int pl_vt_params_override(struct pl_vt_params *p, const char *spec);

/**
 * pl_vtime_create() - clocks at 0 for @nr_cpus vCPUs on @topo, each with an
 * empty cache model of @p->cache_lines lines and TLB model of
 * @p->tlb_entries pages (none when 0), and per socket an empty LLC model
 * of @p->llc_lines lines (none when 0).
 * Return: the vtime, or NULL (no memory, nr_cpus == 0, cache_lines,
 * tlb_entries or llc_lines above 2^24, or llc_lines without cache_lines).
 */
struct pl_vtime *pl_vtime_create(unsigned int nr_cpus, const struct pl_topology *topo,
				 const struct pl_vt_params *p);
void pl_vtime_destroy(struct pl_vtime *vt);

/** pl_vt_enter() - make vCPU @cpu of @vt (or nothing, @vt NULL) current. */
static inline void pl_vt_enter(struct pl_vtime *vt, unsigned int cpu)
{
	pl_vt_cur = vt ? &vt->cpu[cpu] : NULL;
}

/**
 * pl_vt_pick() - the vCPU among 0..@n-1 not @done with the earliest clock
 * (ties: the lowest id). Return: its id, or @n if all are done.
 */
unsigned int pl_vt_pick(const struct pl_vtime *vt, const bool *done, unsigned int n);

/* Slow paths of the hooks (vtime.c). */
void __pl_vt_charge(uint64_t ps);
void __pl_vt_event(unsigned int item, unsigned long delta);
void __pl_vt_touch(const void *addr, bool write);

/** pl_vt_charge() - advance the current vCPU's clock by @ps. */
static inline void pl_vt_charge(uint64_t ps)
{
	if (unlikely(pl_vt_cur))
		pl_vt_cur->now += ps;
}

/** pl_vt_path() - charge one call of @path to the current vCPU. */
static inline void pl_vt_path(enum pl_vt_path path)
{
	if (unlikely(pl_vt_cur))
		__pl_vt_charge(pl_vt_cur->vt->p.path_ps[path]);
}

/** pl_vt_paths() - charge @n calls of @path. */
static inline void pl_vt_paths(enum pl_vt_path path, unsigned long n)
{
	if (unlikely(pl_vt_cur))
		__pl_vt_charge(pl_vt_cur->vt->p.path_ps[path] * n);
}

/**
 * pl_vt_step() - one step of a tree walk: the current vCPU visits (@write
 * false) or rewrites the node at @node, which costs @path's per-node cost
 * and a touch of the node's line (a transfer if another vCPU wrote it
 * last). The index searches charge their work this way, node by node,
 * under the lock their caller holds.
 */
static inline void pl_vt_step(enum pl_vt_path path, const void *node, bool write)
{
	if (unlikely(pl_vt_cur)) {
		__pl_vt_charge(pl_vt_cur->vt->p.path_ps[path]);
		__pl_vt_touch(node, write);
	}
}

/**
 * pl_vt_touch() - the current vCPU reads (@write false) or writes the cache
 * line of @addr; pays a transfer if another vCPU wrote it last.
 */
static inline void pl_vt_touch(const void *addr, bool write)
{
	if (unlikely(pl_vt_cur))
		__pl_vt_touch(addr, write);
}

/* pl_vt_touch() for a caller that knows whether virtual time may be on (@hooks). */
static __always_inline void pl_vt_touch_h(const void *addr, bool write, const bool hooks)
{
	if (hooks)
		pl_vt_touch(addr, write);
}

/** pl_vt_now() - the current vCPU's clock (0 without vtime). */
static inline uint64_t pl_vt_now(void)
{
	return pl_vt_cur ? pl_vt_cur->now : 0;
}

/**
 * struct pl_vt_region - a measured region: clocks and counters at its start.
 */
struct pl_vt_snap {
	uint64_t now_max, busy, wait_ps, acquisitions, contentions, transfers, misses;
	uint64_t tlb_misses, llc_misses;
};

/** pl_vt_snapshot() - sum/max over all vCPUs of @vt into @s. */
void pl_vt_snapshot(const struct pl_vtime *vt, struct pl_vt_snap *s);
/** pl_vt_sync() - set every clock to the latest one (a barrier). */
void pl_vt_sync(struct pl_vtime *vt);

#endif /* PAGELAB_VTIME_H */
