// SPDX-License-Identifier: MIT
/*
 * vtime.c - virtual clocks, locks and cache lines (see vtime.h).
 *
 * Locks in virtual time: a lock remembers its last hold [vt_acq_at,
 * vt_free_at). spin_lock() at a clock before vt_free_at waits until then
 * (a contention, plus the handoff); spin_trylock() fails when the lock is
 * held at the caller's clock, and the caller's code takes its fallback
 * path exactly as in a concurrent kernel. Holds are granted in execution
 * order, and execution order is earliest clock first, so a lock serves its
 * waiters about FIFO in virtual time.
 *
 * Cache lines: a hash table of every line touched (open addressing, grown
 * as needed, never evicting), each with its last writer and the readers
 * since. A line's first touch is free (its cost is in the calibrated
 * per-path costs), unless the cache model is on (cache_lines > 0): then a
 * touch that pays no transfer and finds neither its line nor the one
 * before it in the vCPU's LRU (vtime_cache.c) pays a memory miss, first
 * touches included; a line another vCPU wrote is a transfer while it is in
 * that vCPU's LRU and a remote miss after it left; with the TLB model on,
 * a touch on a page outside the vCPU's LRU of pages pays a TLB miss; with
 * the LLC model on, a miss the socket's shared LRU does not hold pays
 * memory on top.
 * Everything is integer arithmetic on the one thread running the
 * vtime: the result is a pure function of the workload and the parameters.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/base.h"
#include "vtime_cache.h"

_Thread_local struct pl_vt_cpu *pl_vt_cur;

void pl_topology_default(struct pl_topology *t)
{
	t->nr_sockets = 2;
	t->cores_per_socket = 26;
	t->threads_per_core = 1;
}

struct pl_vtime *pl_vtime_create(unsigned int nr_cpus, const struct pl_topology *topo,
				 const struct pl_vt_params *p)
{
	struct pl_vtime *vt;
	struct pl_topology t;

	if ((!topo || !p || !nr_cpus || nr_cpus > PL_MAX_VCPUS) &&
	    pl_arg_refused(__func__, "NULL argument or vCPUs not in 1..4096"))
		return NULL;
	t = *topo;
	if (!nr_cpus || !t.nr_sockets || !t.cores_per_socket || !t.threads_per_core ||
	    p->cache_lines > (1u << 24) || p->tlb_entries > (1u << 24) ||
	    p->llc_lines > (1u << 24) || (p->llc_lines && !p->cache_lines))
		return NULL;
	vt = calloc(1, sizeof(*vt));
	if (!vt)
		return NULL;
	/* More vCPUs than hardware threads: grow the sockets' core counts. */
	if (nr_cpus > t.nr_sockets * t.cores_per_socket * t.threads_per_core)
		t.cores_per_socket = (nr_cpus + t.nr_sockets * t.threads_per_core - 1) /
				     (t.nr_sockets * t.threads_per_core);
	vt->nr_cpus = nr_cpus;
	vt->topo = t;
	vt->p = *p;
	vt->cpu = pl_zalloc_lines(sizeof(*vt->cpu) * nr_cpus);
	vt->nr_lines_cap = 1UL << PL_VT_LINE_BITS;
	vt->lines = calloc(vt->nr_lines_cap, sizeof(*vt->lines));
	if (!vt->cpu || !vt->lines) {
		vt->nr_cpus = 0;	/* no caches to free */
		pl_vtime_destroy(vt);
		return NULL;
	}
	memset(vt->cpu, 0, sizeof(*vt->cpu) * nr_cpus);
	for (unsigned int c = 0; c < nr_cpus; c++) {
		vt->cpu[c].id = c;
		vt->cpu[c].core = c / t.threads_per_core;
		vt->cpu[c].socket = vt->cpu[c].core / t.cores_per_socket;
		vt->cpu[c].vt = vt;
		if (p->cache_lines || p->tlb_entries) {
			vt->cpu[c].cache = p->cache_lines ? pl_vt_cache_create(p->cache_lines) : NULL;
			vt->cpu[c].tlb = p->tlb_entries ? pl_vt_cache_create(p->tlb_entries) : NULL;
			if (!!vt->cpu[c].cache != !!p->cache_lines ||
			    !!vt->cpu[c].tlb != !!p->tlb_entries) {
				pl_vt_cache_destroy(vt->cpu[c].cache);
				pl_vt_cache_destroy(vt->cpu[c].tlb);
				vt->nr_cpus = c;	/* destroy those made so far */
				pl_vtime_destroy(vt);
				return NULL;
			}
		}
	}
	if (p->llc_lines) {
		vt->nr_llc = vt->cpu[nr_cpus - 1].socket + 1;
		vt->llc = calloc(vt->nr_llc, sizeof(*vt->llc));
		for (unsigned int s = 0; vt->llc && s < vt->nr_llc; s++)
			vt->llc[s] = pl_vt_cache_create(p->llc_lines);
		for (unsigned int s = 0; s < vt->nr_llc; s++)
			if (!vt->llc || !vt->llc[s]) {
				pl_vtime_destroy(vt);
				return NULL;
			}
	}
	return vt;
}

void pl_vtime_destroy(struct pl_vtime *vt)
{
	if (!vt)
		return;
	if (pl_vt_cur && pl_vt_cur->vt == vt)
		pl_vt_cur = NULL;
	for (unsigned int c = 0; vt->cpu && c < vt->nr_cpus; c++) {
		pl_vt_cache_destroy(vt->cpu[c].cache);
		pl_vt_cache_destroy(vt->cpu[c].tlb);
	}
	for (unsigned int s = 0; vt->llc && s < vt->nr_llc; s++)
		pl_vt_cache_destroy(vt->llc[s]);
	free(vt->llc);
	free(vt->cpu);
	free(vt->lines);
	free(vt);
}

unsigned int pl_vt_pick(const struct pl_vtime *vt, const bool *done, unsigned int n)
{
	unsigned int best = n;

	if ((!vt || !done || n > vt->nr_cpus) && n && pl_arg_refused(__func__, "NULL argument or n"))
		return n;
	for (unsigned int c = 0; c < n; c++)
		if (!done[c] && (best == n || vt->cpu[c].now < vt->cpu[best].now))
			best = c;
	return best;
}

void __pl_vt_charge(uint64_t ps)
{
	pl_vt_cur->now += ps;
}

_Static_assert(NR_PL_VM_EVENTS <= PL_VT_MAX_EVENTS, "event_ps[] has a cost for every vm event");

void __pl_vt_event(unsigned int item, unsigned long delta)
{
	struct pl_vt_cpu *c = pl_vt_cur;

	c->now += c->vt->p.event_ps[item] * delta;
}

static enum pl_vt_dist vt_dist(const struct pl_vtime *vt, unsigned int a, unsigned int b)
{
	if (vt->cpu[a].core == vt->cpu[b].core)
		return VT_SAME_CORE;
	if (vt->cpu[a].socket == vt->cpu[b].socket)
		return VT_SAME_SOCKET;
	return VT_OTHER_SOCKET;
}

/*
 * The line of @line in the table: open addressing, linear probing, grown at
 * half full. Exact whatever the addresses (no eviction), so the result
 * does not depend on where the host's allocator placed the structures.
 */
static struct pl_vt_line *vt_line(struct pl_vtime *vt, uintptr_t line)
{
	size_t mask = vt->nr_lines_cap - 1;
	size_t i = (size_t)((line * 0x9e3779b97f4a7c15ULL) >> 20) & mask;

	for (;; i = (i + 1) & mask) {
		struct pl_vt_line *l = &vt->lines[i];

		if (l->tag == line)
			return l;
		if (!l->tag)
			break;
	}
	if (2 * (vt->nr_lines + 1) > vt->nr_lines_cap) {
		size_t cap = vt->nr_lines_cap * 2;
		struct pl_vt_line *old = vt->lines, *n = calloc(cap, sizeof(*n));

		if (!n)
			abort();	/* out of host memory in the model: nothing sane to do */
		for (size_t j = 0; j < vt->nr_lines_cap; j++) {
			size_t k;

			if (!old[j].tag)
				continue;
			k = (size_t)((old[j].tag * 0x9e3779b97f4a7c15ULL) >> 20) & (cap - 1);
			while (n[k].tag)
				k = (k + 1) & (cap - 1);
			n[k] = old[j];
		}
		free(old);
		vt->lines = n;
		vt->nr_lines_cap = cap;
		return vt_line(vt, line);
	}
	vt->nr_lines++;
	vt->lines[i] = (struct pl_vt_line){ .tag = line, .writer = -1, .readers = 0 };
	return &vt->lines[i];
}

/*
 * A miss of vCPU @c's own cache on @tag, served by the socket's LLC when
 * the LLC model holds it (or the line before it: the prefetch), by memory
 * otherwise (llc_miss_ps on top of the miss). Every miss enters the LLC:
 * the lines the socket's vCPUs missed on last are the ones it keeps.
 */
static void vt_llc_miss(struct pl_vtime *vt, struct pl_vt_cpu *c, uintptr_t tag)
{
	if (vt->llc && !pl_vt_cache_touch(vt->llc[c->socket], tag)) {
		c->now += vt->p.llc_miss_ps;
		c->llc_misses++;
	}
}

void __pl_vt_touch(const void *addr, bool write)
{
	struct pl_vt_cpu *c = pl_vt_cur;
	struct pl_vtime *vt = c->vt;
	uintptr_t tag = (uintptr_t)addr >> 6;
	struct pl_vt_line *l = vt_line(vt, tag);
	uint64_t bit = 1ULL << (c->id & 63);
	bool remote = l->writer >= 0 && (unsigned int)l->writer != c->id && !(l->readers & bit);

	if (c->tlb) {
		uintptr_t page = (uintptr_t)addr >> 12;

		if (!pl_vt_cache_has(c->tlb, page)) {
			c->now += vt->p.tlb_miss_ps;
			c->tlb_misses++;
		}
		pl_vt_cache_touch(c->tlb, page);
	}

	if (remote && c->cache && !pl_vt_cache_has(vt->cpu[l->writer].cache, tag)) {
		/*
		 * Written elsewhere, but long ago: from the writer's outer cache
		 * or memory, unless the next-line prefetch brought it.
		 */
		if (!pl_vt_cache_touch(c->cache, tag)) {
			c->now += vt->p.remote_miss_ps;
			c->misses++;
			vt_llc_miss(vt, c, tag);
		}
	} else if (remote) {
		uint64_t ps = vt->p.xfer_ps[vt_dist(vt, c->id, (unsigned int)l->writer)];

		c->now += ps;
		c->xfer_ps += ps;
		c->transfers++;
		if (c->cache)
			pl_vt_cache_touch(c->cache, tag);
	} else if (c->cache && !pl_vt_cache_touch(c->cache, tag)) {
		c->now += vt->p.miss_ps;
		c->misses++;
		vt_llc_miss(vt, c, tag);
	}
	if (write) {
		l->writer = (int)c->id;
		l->readers = 0;
	} else {
		l->readers |= bit;
	}
}

static void vt_acquire(struct pl_spinlock *lock, struct pl_vt_cpu *c, bool may_wait)
{
	const struct pl_vt_params *p = &c->vt->p;

	c->acquisitions++;
	if (may_wait && lock->vt_free_at > c->now) {
		uint64_t wait = lock->vt_free_at - c->now;

		c->wait_ps += wait;
		c->now = lock->vt_free_at + p->handoff_ps;
		c->contentions++;
		__atomic_fetch_add(&lock->stat.contentions, 1, __ATOMIC_RELAXED);
		if (lock->timed && lock->cpu != pl_lock_cpu)
			__atomic_fetch_add(&lock->stat.con_bounces, 1, __ATOMIC_RELAXED);
		pl_lock_stat_wait(lock, wait / 1000);
	}
	__pl_vt_touch(&lock->locked, true);
	lock->vt_acq_at = c->now;
	c->now += (lock->vt_class >= VT_LOCK_VMAP_FREE ? p->vmap_lock_ps : p->lock_ps) +
		  p->hold_ps[lock->vt_class];
}

void pl_vt_lock(struct pl_spinlock *lock)
{
	vt_acquire(lock, pl_vt_cur, true);
}

bool pl_vt_trylock(struct pl_spinlock *lock)
{
	struct pl_vt_cpu *c = pl_vt_cur;

	if (lock->vt_acq_at <= c->now && c->now < lock->vt_free_at) {
		c->trylock_fails++;
		__pl_vt_touch(&lock->locked, false);
		return false;
	}
	vt_acquire(lock, c, false);
	return true;
}

void pl_vt_unlock(struct pl_spinlock *lock)
{
	struct pl_vt_cpu *c = pl_vt_cur;

	if (c->now > lock->vt_free_at)
		lock->vt_free_at = c->now;
}

void pl_vt_snapshot(const struct pl_vtime *vt, struct pl_vt_snap *s)
{
	if ((!vt || !s) && pl_arg_refused(__func__, "NULL argument"))
		return;
	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < vt->nr_cpus; i++) {
		const struct pl_vt_cpu *c = &vt->cpu[i];

		s->now_max = max(s->now_max, c->now);
		s->busy += c->now;
		s->wait_ps += c->wait_ps;
		s->acquisitions += c->acquisitions;
		s->contentions += c->contentions;
		s->transfers += c->transfers;
		s->misses += c->misses;
		s->tlb_misses += c->tlb_misses;
		s->llc_misses += c->llc_misses;
	}
}

void pl_vt_sync(struct pl_vtime *vt)
{
	uint64_t t = 0;

	if (!vt && pl_arg_refused(__func__, "NULL argument"))
		return;

	for (unsigned int i = 0; i < vt->nr_cpus; i++)
		t = max(t, vt->cpu[i].now);
	for (unsigned int i = 0; i < vt->nr_cpus; i++)
		vt->cpu[i].now = t;
}
