/* SPDX-License-Identifier: MIT */
/*
 * base.h - the services mm/ code takes from the "kernel": spinlocks with
 * lock_stat numbers, per-CPU event counters, rate-limited warnings, a clock
 * and a seeded PRNG.
 *
 * Invariants:
 *  - a pl_spinlock is held by at most one thread; its stats are written only
 *    by the holder (hold time, acquisitions) or with atomics (contentions,
 *    wait time), so readers may sample them at any time;
 *  - per-CPU event counters are written only by the thread that has entered
 *    that vCPU and read by anyone, with relaxed atomics (this_cpu_inc).
 */
#ifndef PAGELAB_BASE_H
#define PAGELAB_BASE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "compiler.h"
#include "vtime.h"

/* ---- time ---------------------------------------------------------------- */

/**
 * pl_now_ns() - monotonic clock in nanoseconds.
 * Return: CLOCK_MONOTONIC in ns.
 */
uint64_t pl_now_ns(void);

/* ---- spinlock with lock_stat -------------------------------------------- */

/**
 * struct pl_lock_stat - lock_stat numbers of one lock (see lockstat.rst).
 * @acquisitions: successful acquisitions, trylocks included (written by holder).
 * @contentions:  acquisitions that found the lock taken and had to wait (atomic).
 * @wait_ns:      total time spent waiting (atomic).
 * @hold_ns:      total time held (written by holder; only with timing on).
 * @hold_max_ns:  longest hold (written by holder).
 * The rest only with timing on (lock_stat=1), as CONFIG_LOCK_STAT keeps them:
 * @wait_min_ns, @wait_max_ns: shortest and longest wait (atomic; the min is
 *                UINT64_MAX in the lock until a wait, 0 once read).
 * @hold_min_ns:  shortest hold (written by holder; UINT64_MAX until one).
 * @con_bounces:  contentions where the lock was last taken on another vCPU
 *                (the kernel's bounce_contended; atomic).
 * @acq_bounces:  spin_lock() acquisitions where it was last taken on another
 *                vCPU (bounce_acquired; trylocks are not counted, as in the
 *                kernel, whose trylock does not call lock_acquired()).
 */
struct pl_lock_stat {
	uint64_t acquisitions;
	uint64_t contentions;
	uint64_t wait_ns;
	uint64_t hold_ns;
	uint64_t hold_max_ns;
	uint64_t wait_min_ns;
	uint64_t wait_max_ns;
	uint64_t hold_min_ns;
	uint64_t con_bounces;
	uint64_t acq_bounces;
};

/*
 * The vCPU the calling thread runs, for lock_stat's bounces (pl_enter()
 * sets it; 0 on a thread that entered none). Thread-local.
 */
extern _Thread_local unsigned int pl_lock_cpu PL_TLS;

/**
 * struct pl_spinlock - test-and-test-and-set spinlock.
 * @locked: 0 or 1 (atomic).
 * @timed:  measure wait and hold times (costs two clock reads per hold).
 * @t_acquired: clock at acquisition, valid while held (holder only).
 * @stat:   lock_stat numbers.
 * @vt_class:   lock class for virtual time (enum pl_vt_lock_class).
 * @vt_acq_at, @vt_free_at: virtual times of the last hold; the lock is
 *              held at t when vt_acq_at <= t < vt_free_at (vtime only,
 *              written by the one thread running the vtime).
 */
struct pl_spinlock {
	int locked;
	bool timed;
	unsigned char vt_class;
	unsigned short cpu;	/* vCPU of the last spin_lock() (timed; the kernel's lock->cpu), < PL_MAX_VCPUS */
	uint64_t t_acquired;
	struct pl_lock_stat stat;
	uint64_t vt_acq_at, vt_free_at;
};

void pl_spin_init(struct pl_spinlock *lock, bool timed);
void pl_spin_lock_slow(struct pl_spinlock *lock);
/** pl_spin_set_class() - the lock's class in virtual time (default OTHER). */
static inline void pl_spin_set_class(struct pl_spinlock *lock, enum pl_vt_lock_class c)
{
	lock->vt_class = (unsigned char)c;
}
/* Virtual-time edges of a lock (vtime.c); only called with pl_vt_cur set. */
void pl_vt_lock(struct pl_spinlock *lock);
bool pl_vt_trylock(struct pl_spinlock *lock);
void pl_vt_unlock(struct pl_spinlock *lock);

static inline void pl_spin_acquired(struct pl_spinlock *lock)
{
	WRITE_ONCE(lock->stat.acquisitions, lock->stat.acquisitions + 1);
	if (lock->timed)
		lock->t_acquired = pl_now_ns();
}

/* lock_stat's acq-bounces: the kernel's __lock_acquired() (not on trylocks). */
static inline void pl_spin_acquired_cpu(struct pl_spinlock *lock)
{
	if (lock->timed && lock->cpu != pl_lock_cpu) {
		WRITE_ONCE(lock->stat.acq_bounces, lock->stat.acq_bounces + 1);
		WRITE_ONCE(lock->cpu, (unsigned short)pl_lock_cpu);
	}
}

/*
 * The lock calls with their hooks as a parameter: @hooks false is a caller
 * that knows virtual time is off on this thread and the lock untimed (its
 * machine has no lock_stat: pl_hooks_off()), so the tests of both compile
 * away; the lock's state and acquisitions are the same either way.
 */
static __always_inline void spin_lock_h(struct pl_spinlock *lock, const bool hooks)
{
	if (hooks && unlikely(pl_vt_cur))
		pl_vt_lock(lock);
	if (likely(!__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE))) {
		WRITE_ONCE(lock->stat.acquisitions, lock->stat.acquisitions + 1);
		if (hooks) {
			if (lock->timed)
				lock->t_acquired = pl_now_ns();
			pl_spin_acquired_cpu(lock);
		}
	} else {
		pl_spin_lock_slow(lock);
	}
}

static __always_inline bool spin_trylock_h(struct pl_spinlock *lock, const bool hooks)
{
	if (hooks && unlikely(pl_vt_cur) && !pl_vt_trylock(lock))
		return false;
	if (READ_ONCE(lock->locked) ||
	    __atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE))
		return false;
	WRITE_ONCE(lock->stat.acquisitions, lock->stat.acquisitions + 1);
	if (hooks && lock->timed)
		lock->t_acquired = pl_now_ns();
	return true;
}

static __always_inline void spin_unlock_h(struct pl_spinlock *lock, const bool hooks)
{
	if (hooks && unlikely(pl_vt_cur))
		pl_vt_unlock(lock);
	if (hooks && lock->timed) {
		uint64_t held = pl_now_ns() - lock->t_acquired;

		WRITE_ONCE(lock->stat.hold_ns, lock->stat.hold_ns + held);
		if (held > lock->stat.hold_max_ns)
			WRITE_ONCE(lock->stat.hold_max_ns, held);
		if (held < lock->stat.hold_min_ns)
			WRITE_ONCE(lock->stat.hold_min_ns, held);
	}
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

/** spin_lock() - take @lock, spinning; counts a contention if it had to wait. */
static inline void spin_lock(struct pl_spinlock *lock)
{
	spin_lock_h(lock, true);
}

/** spin_trylock() - take @lock if free. Return: true if taken. */
static inline bool spin_trylock(struct pl_spinlock *lock)
{
	return spin_trylock_h(lock, true);
}

/** spin_unlock() - release @lock, accounting the hold time. */
static inline void spin_unlock(struct pl_spinlock *lock)
{
	spin_unlock_h(lock, true);
}

/** pl_lock_stat_read() - snapshot @lock's numbers into @out. */
void pl_lock_stat_read(const struct pl_spinlock *lock, struct pl_lock_stat *out);
void pl_lock_stat_reset(struct pl_spinlock *lock);
/*
 * pl_lock_stat_wait() - account one contended acquisition's wait of @ns
 * (the kernel's lock_time_inc() on the wait time; vtime.c passes virtual ns).
 */
void pl_lock_stat_wait(struct pl_spinlock *lock, uint64_t ns);

/**
 * struct pl_lock_saved - a lock's lock_stat numbers and last CPU, as an
 * observer saves them before using the lock and puts them back after
 * (bench/runner/snapshot.c), so that its reports leave no trace in the figures.
 */
struct pl_lock_saved {
	struct pl_lock_stat stat;
	unsigned int cpu;
};
/*
 * pl_lock_stat_save(), pl_lock_stat_put_back() - copy them out and back,
 * each while holding the lock word without any accounting (so no holder
 * updates them meanwhile). A waiter's contention that lands between the
 * two is lost with the rest: observe when no vCPU runs.
 */
void pl_lock_stat_save(struct pl_spinlock *lock, struct pl_lock_saved *out);
void pl_lock_stat_put_back(struct pl_spinlock *lock, const struct pl_lock_saved *in);

/**
 * pl_zalloc_lines() - @size zeroed bytes of host memory that start on a
 * 64-byte line and fill whole lines. Virtual time keys cache lines by host
 * address, so a host structure whose lines it touches (a pl_spinlock, a
 * list head) must not be placed at malloc()'s 16-byte alignment: then its
 * fields' split into lines, and which lines it shares with its heap
 * neighbours, would change with whatever the host allocated before it.
 * Free with free().
 * Return: the memory, or NULL.
 */
static inline void *pl_zalloc_lines(size_t size)
{
	size_t whole = size ? (size + 63) & ~(size_t)63 : 64;
	void *p = aligned_alloc(64, whole);

	if (p)
		memset(p, 0, whole);
	return p;
}

/* ---- seq_file over a caller's buffer (the pl_show_*() reports) ------------- */

/**
 * struct pl_seq - a seq_file over a caller's buffer; @overflow if it filled.
 * With @buf NULL it only counts (to learn the size a report needs).
 */
struct pl_seq {
	char *buf;
	size_t size;
	size_t count;
	bool overflow;
};

/**
 * pl_seq_finish() - end a report: NUL-terminate the buffer (when there is
 * one of size > 0). Return: the length (without the NUL), -ENOSPC if it
 * did not fit (the buffer then holds a terminated prefix); with no buffer,
 * the length the report needs.
 */
long pl_seq_finish(struct pl_seq *s);

/* ---- /proc/lock_stat (lock_stat.c) ----------------------------------------- */

/**
 * struct pl_lock_class_stat - one lock class of /proc/lock_stat: the numbers
 * of every lock of the class summed, as lockdep keeps them per class (the
 * min and max are taken over the locks, the rest summed).
 * @name:     the class name as lockdep derives it from the init expression
 *            ("&zone->lock").
 * @nr_locks: locks folded in.
 */
struct pl_lock_class_stat {
	const char *name;
	unsigned long nr_locks;
	struct pl_lock_stat st;
};

/** pl_lock_class_add() - fold @lock's numbers into class @c. */
void pl_lock_class_add(struct pl_lock_class_stat *c, const struct pl_spinlock *lock);

/**
 * pl_lock_stat_print() - /proc/lock_stat's text for @nr classes into @s:
 * the "lock_stat version 0.4" header, the column line between dashed rules,
 * then one line per class, most contended first (ties keep @classes' order),
 * times in microseconds with two decimals. Classes with no acquisition are
 * left out, as lockdep lists only classes in use. @classes is reordered.
 */
void pl_lock_stat_print(struct pl_seq *s, struct pl_lock_class_stat *classes, unsigned int nr);

/* ---- per-CPU event counters ---------------------------------------------- */

/*
 * The vm events pagelab counts, defined once. X(name, description).
 * The struct, the names table and the JSON emitter are generated from it.
 */
#define PL_VM_EVENTS(X)                                                        \
	X(PGALLOC, "blocks allocated")                                         \
	X(PGALLOC_PAGES, "pages allocated")                                    \
	X(PGFREE, "blocks freed")                                              \
	X(PGFREE_PAGES, "pages freed")                                         \
	X(ALLOC_FAIL, "allocations that returned NULL")                       \
	X(BUDDY_MERGE, "buddy merges in __free_one_page (under zone->lock)")  \
	X(BUDDY_SPLIT, "halvings in expand()")                                 \
	X(ZONE_LOCK_PAGES, "pages moved to or from the buddy under zone->lock") \
	X(FALLBACK_CLAIM, "pageblocks claimed by a fallback allocation")       \
	X(FALLBACK_STEAL, "blocks stolen without claiming the pageblock")     \
	X(BAD_PAGE, "pages reported by bad_page() and leaked")                 \
	X(BAD_INPUT, "calls rejected for bad arguments")                       \
	X(PCP_HIT, "allocations served from a PCP list without a refill")     \
	X(PCP_MISS, "allocations that refilled a PCP list")                    \
	X(PCP_REFILL_PAGES, "pages moved buddy -> PCP by rmqueue_bulk")       \
	X(PCP_FREE, "frees that went onto a PCP list")                         \
	X(PCP_DRAIN_PAGES, "pages moved PCP -> buddy by free_pcppages_bulk")  \
	X(PCP_TRYLOCK_FAIL, "pcp->lock trylocks that fell back to the zone")  \
	X(PCP_MERGE, "buddy merges done under pcp->lock (pcp_owner)")        \
	X(PCP_OWN_BLOCK, "whole pageblocks taken by a PCP refill (pcp_owner)") \
	X(PCP_RECOVER_FRAGMENT, "fragment pageblocks recovered by a refill")   \
	X(PCP_RELEASE_BLOCK, "owned pageblocks returned whole to the zone")    \
	X(PCP_RELEASE_FRAGMENT, "owned pageblocks returned partially free")    \
	X(PCP_REMOTE_FREE, "frees routed to another CPU's PCP (the owner)")   \
	X(PCP_DEGRADE, "refills without a whole block to own (pcp_owner's degraded mode)") \
	X(PCP_DEGRADE_CHUNKS, "unowned chunks a degraded refill split under pcp->lock") \
	X(VMALLOC, "vmalloc areas allocated")                                  \
	X(VFREE, "vmalloc areas freed by vfree")                               \
	X(VMAP_POOL_HIT, "vmap areas taken from a vmap node's pool")           \
	X(VMAP_PURGE, "lazy purges (__purge_vmap_area_lazy with work)")        \
	X(VMAP_PURGE_AREAS, "lazily freed vmap areas purged")                  \
	X(VMAP_PGTABLE_ALLOC, "page-table pages allocated for vmalloc")       \
	X(TLB_FLUSH, "kernel TLB flushes (flush_tlb_kernel_range)")              \
	X(PCP_OVERFLOW_O0, "order-0 frees that found the PCP at high and drained it") \
	X(VM_MAP_RAM, "vm_map_ram mappings made")                               \
	X(VMAP_BLOCK_NEW, "vmap blocks created for vm_map_ram")                 \
	X(PCPU_CHUNK_NEW, "percpu chunks created (pcpu_get_vm_areas)")          \
	X(PCPU_POPULATE_PAGES, "pages mapped into percpu chunks")               \
	X(KVFREE_RCU_BATCH, "kvfree_rcu batches freed after a grace period")   \
	X(VMAP_MT_PARKED, "vmap areas parked: no maple nodes (vmap_index=maple)") \
	X(VMAP_BUMP_ALLOC, "vmalloc areas bump-allocated from a per-CPU chunk") \
	X(VMAP_BUMP_CHUNK_NEW, "per-CPU bump chunks reserved (vmap_pcpu_bump)") \
	X(VMAP_BUMP_CHUNK_FREE, "per-CPU bump chunks drained and returned") \
	X(VMAP_BUSY_LOOKUP, "busy vmap_area lookups (find_vmap_area, find_unlink_vmap_area)") \
	X(DRAIN_RETRY, "slow-path drain_all_pages() + retries after (no-op) direct reclaim") \
	X(DRAIN_RETRY_OK, "allocations that the slow path's drain-and-retry served") \
	X(HIGHATOMIC_RESERVE, "pageblocks reserved by reserve_highatomic_pageblock()") \
	X(HIGHATOMIC_UNRESERVE, "reserves released by unreserve_highatomic_pageblock()") \
	X(WMARK_BOOST, "watermark boosts by boost_watermark() on fallback claims") \
	X(WMARK_BOOST_CLEAR, "zone watermark boosts dropped by a kswapd run") \
	X(KSWAPD_WAKE, "kswapd wakeups (slow path, boosted watermark)") \
	X(KSWAPD_RUN, "kswapd runs (at a vmstat tick after a wakeup)") \
	X(PCP_DRAIN_CALLS, "free_pcppages_bulk calls that moved pages")        \
	X(FALLBACK_EVENTS, "fallback allocations (one per mm_page_alloc_extfrag)") \
	X(FALLBACK_FRAGMENTING, "fallbacks from below pageblock_order")        \
	X(FALLBACK_CHANGE_OWNERSHIP, "fallbacks whose pageblock changed type") \
	X(BUDDY_DIRECT_ALLOC, "allocations served by rmqueue_buddy (no PCP)")  \
	X(BUDDY_DIRECT_FREE, "frees straight to the buddy by free_one_page") \
	X(PCP_PREMERGE_TRY, "buddy lookups by a pcp_premerge drain")             \
	X(PCP_PREMERGE_IN_USE, "pcp_premerge: buddy allocated or inside a block") \
	X(PCP_PREMERGE_OTHER_PCP, "pcp_premerge: buddy on another CPU's PCP")   \
	X(PCP_PREMERGE_IN_ZONE, "pcp_premerge: buddy free in the zone buddy")   \
	X(PCP_PREMERGE_ORDER, "pcp_premerge: buddy on this PCP at another order") \
	X(PCP_PREMERGE_OTHER, "pcp_premerge: buddy owned (pcp_owner) or outside the zone") \
	X(TARGETED_DRAIN_CPUS, "CPUs drained by targeted_drain")                \
	X(DRAIN_ALL_CPUS, "CPUs drained by drain_all_pages")                    \
	X(ECONOMY_STEAL, "pageblocks stolen from another CPU (pcp_block_economy)") \
	X(PGALLOC_DMA, "pages allocated from ZONE_DMA (the kernel's pgalloc_dma)") \
	X(PGALLOC_DMA32, "pages allocated from ZONE_DMA32 (pgalloc_dma32)")   \
	X(PGALLOC_NORMAL, "pages allocated from ZONE_NORMAL (pgalloc_normal)") \
	X(PCP_SPLIT, "halvings of owned chunks under pcp->lock (pcp_owner)") \
	X(COMPACT_RUN, "compact_zone() runs (mm_compaction_begin)")            \
	X(COMPACT_STALL, "direct compactions that compacted (compact_stall)")  \
	X(COMPACT_SUCCESS, "direct compactions that made the page (compact_success)") \
	X(COMPACT_FAIL, "direct compactions that did not (compact_fail)")      \
	X(COMPACT_MIGRATE_SCANNED, "pages the migrate scanner looked at (compact_migrate_scanned)") \
	X(COMPACT_FREE_SCANNED, "pages the free scanner looked at (compact_free_scanned)") \
	X(COMPACT_ISOLATED, "pages compaction isolated, both scanners (compact_isolated)") \
	X(COMPACT_ISOLATED_FREE, "free pages the free scanner isolated")         \
	X(COMPACT_DEFER, "zones deferred after a failed compaction (defer_compaction)") \
	X(COMPACT_DEFERRED, "compactions skipped for deferral (compaction_deferred)") \
	X(COMPACT_CAPTURE, "blocks a direct compactor captured as they merged")  \
	X(COMPACT_DAEMON_WAKE, "kcompactd runs for a wakeup (compact_daemon_wake)") \
	X(COMPACT_DAEMON_MIGRATE_SCANNED, "pages kcompactd's migrate scanner looked at (compact_daemon_migrate_scanned)") \
	X(COMPACT_DAEMON_FREE_SCANNED, "pages kcompactd's free scanner looked at (compact_daemon_free_scanned)") \
	X(KCOMPACTD_WAKEUP, "wakeup_kcompactd() calls that woke it (mm_compaction_wakeup_kcompactd)") \
	X(COMPACT_PROACTIVE, "proactive compaction passes over the node (fragmentation score above its high mark)") \
	X(PGMIGRATE_SUCCESS, "pages migrated (pgmigrate_success)")              \
	X(PGMIGRATE_FAIL, "isolated pages not migrated (pgmigrate_fail)")

enum pl_vm_event {
#define PL_EV_ENUM(name, desc) PL_EV_##name,
	PL_VM_EVENTS(PL_EV_ENUM)
#undef PL_EV_ENUM
	NR_PL_VM_EVENTS
};

extern const char *const pl_vm_event_names[NR_PL_VM_EVENTS];

/**
 * struct pl_cpu_events - one vCPU's event counters, written only by the
 * thread that has entered the vCPU (relaxed atomics), merged on read.
 */
struct pl_cpu_events {
	unsigned long ev[NR_PL_VM_EVENTS];
} __cacheline_aligned;

/* pl_count_events() with its virtual-time hook as a parameter (see spin_lock_h()). */
static __always_inline void pl_count_events_h(struct pl_cpu_events *e, enum pl_vm_event item,
					      unsigned long delta, const bool hooks)
{
	if (hooks && unlikely(pl_vt_cur))
		__pl_vt_event((unsigned int)item, delta);
	WRITE_ONCE(e->ev[item], READ_ONCE(e->ev[item]) + delta);
}

static inline void pl_count_events(struct pl_cpu_events *e, enum pl_vm_event item,
				   unsigned long delta)
{
	pl_count_events_h(e, item, delta, true);
}

/* ---- untrusted files (src/base/file.c) ------------------------------------ */

/*
 * Every file pagelab reads on a user's word (traces, snapshots, manifests)
 * and every file it writes goes through these: an input is a regular file
 * (or a directory where one is asked for), never a FIFO, socket or device,
 * which could block a reader forever or never end; an output is a regular
 * file or a new path, never a device node, FIFO, socket or directory.
 * Opening is O_NONBLOCK so a FIFO cannot block before it is refused.
 */

/**
 * pl_open_input() - open @path for reading as an untrusted input.
 * @path:   the file; "" is refused.
 * @dir_ok: a directory is accepted too (opened O_DIRECTORY).
 * Return: a blocking O_CLOEXEC descriptor of a regular file (or directory),
 * or -1 with errno: the open's own (ENOENT, EACCES...), EINVAL for a NULL
 * or empty @path or a file that is neither (FIFO, socket, device), EISDIR
 * for a directory without @dir_ok.
 */
int pl_open_input(const char *path, bool dir_ok);

/**
 * pl_read_input() - read the whole of regular file @path, at most @max bytes.
 * @path, @max: the file and the cap (EFBIG past it).
 * @len:    receives the length (may be NULL); the buffer is NUL-terminated.
 * Return: a malloc'ed buffer, or NULL with errno (pl_open_input()'s, EFBIG,
 * ENOMEM, EIO).
 */
char *pl_read_input(const char *path, size_t max, size_t *len);

/**
 * pl_open_output() - open @path for writing: truncated (or appended to with
 * @append), created 0644 when new.
 * Return: a descriptor, or -1 with errno: EINVAL for a NULL or empty @path or
 * an existing path that is not a regular file (device, FIFO, socket),
 * EISDIR for a directory, or the open's own.
 */
int pl_open_output(const char *path, bool append);

/**
 * pl_file_strerror() - why pl_open_input()/pl_open_output() refused, in
 * words: "not a regular file" for EINVAL, else strerror(@err).
 */
const char *pl_file_strerror(int err);

/** pl_fopen_input() - pl_open_input() of a regular file as a stream ("r"). */
FILE *pl_fopen_input(const char *path);
/** pl_fopen_output() - pl_open_output() as a stream ("w", or "a" with @append). */
FILE *pl_fopen_output(const char *path, bool append);

/* ---- warnings ------------------------------------------------------------- */

/**
 * pl_warn_ratelimited() - report a misuse or a bad page on stderr, at most
 * 10 messages per 5 s (the kernel's DEFAULT_RATELIMIT_BURST/INTERVAL).
 * Every call is counted, printed or not, and the last message is kept, so
 * that tests can assert on it.
 */
void pl_warn_ratelimited(const char *fmt, ...) __printf(1, 2);

/** pl_warn_count() - warnings issued so far, printed or suppressed. */
unsigned long pl_warn_count(void);
/** pl_warn_last() - copy of the last warning's text (thread-safe copy). */
void pl_warn_last(char *buf, size_t len);
/** pl_warn_set_quiet() - stop printing (tests of bad input); still counted. */
void pl_warn_set_quiet(bool quiet);
/**
 * pl_set_err() - format a refusal's reason into a caller's @err buffer of
 * @errsize bytes (the string parsers' "why not"); nothing when @err is NULL
 * or @errsize 0.
 */
void pl_set_err(char *err, size_t errsize, const char *fmt, ...) __printf(3, 4);

/* ---- assertions at the kernel's check sites -------------------------------- */

/*
 * PL_WARN_ON(on, cond) - where the kernel has VM_WARN_ON()/VM_BUG_ON(): when
 * @on (a machine's debug level >= 1, a flag its caller has at hand) and
 * @cond holds, one rate-limited warning naming the rule (@cond's text) and
 * the place; evaluates to whether it fired. With @on false @cond is not
 * evaluated: the cost is one test of an already loaded flag.
 * PL_WARN_ON_PAGE(on, cond, page, rule) - the same for VM_BUG_ON_PAGE() /
 * VM_WARN_ON_ONCE_PAGE(): the warning also reports @page (pfn, order,
 * flags, page type, pageblock migratetype; mm/debug.c) and @rule, a
 * sentence saying what the kernel's check expects.
 * pagelab never stops on one (the kernel's VM_BUG_ON would): the caller
 * goes on as the kernel without CONFIG_DEBUG_VM would, and the machine's
 * checker reports what follows.
 */
struct page;
void pl_warn_on_fail(const char *file, int line, const char *func, const char *what);
void pl_warn_on_page_fail(const struct page *page, const char *rule, const char *file, int line,
			  const char *func, const char *cond);
/** pl_warn_on_count() - PL_WARN_ON*() that fired so far (the fuzzers stop on one). */
unsigned long pl_warn_on_count(void);

#define PL_WARN_ON(on, cond) ({						\
	bool __pl_fired = unlikely(on) && unlikely(!!(cond));		\
	if (__pl_fired)							\
		pl_warn_on_fail(__FILE__, __LINE__, __func__, "VM_WARN_ON(" #cond ")"); \
	__pl_fired;							\
})

#define PL_WARN_ON_PAGE(on, cond, page, rule) ({			\
	bool __pl_fired = unlikely(on) && unlikely(!!(cond));		\
	if (__pl_fired)							\
		pl_warn_on_page_fail((page), (rule), __FILE__, __LINE__, __func__, #cond); \
	__pl_fired;							\
})

/*
 * pl_arg_refused() - the one rate-limited warning of an entry point refusing a
 * NULL or out-of-range argument: "FUNCTION: WHAT". Evaluates to true, for
 * "if (!p && pl_arg_refused(__func__, "NULL")) return -EINVAL;".
 */
#define pl_arg_refused(fn, what) (pl_warn_ratelimited("%s: %s", (fn), (what)), true)

/* ---- many vCPUs on few threads (vcpu.c) ------------------------------------ */

#define PL_MAX_VCPU_THREADS 64
/* The most vCPUs one machine or one pl_run_vcpus() has (pagelab's bound). */
#define PL_MAX_VCPUS 4096U

/**
 * struct pl_vcpu_run - a workload to run on @nr_vcpus vCPUs over @nr_threads
 * threads, interleaved deterministically on each thread.
 * @slice: steps a vCPU runs per turn.
 * @enter: called on the thread before each turn of vCPU @vcpu (typically
 *         pl_enter(machine, vcpu)).
 * @step:  one operation of vCPU @vcpu; false when that vCPU is finished.
 * @vt:    virtual time (or NULL): then every vCPU runs on the calling
 *         thread, one step at a time, the one with the earliest clock
 *         first; @nr_threads and @slice are ignored.
 */
struct pl_vcpu_run {
	unsigned int nr_vcpus;
	unsigned int nr_threads;
	unsigned long slice;
	void (*enter)(void *ctx, unsigned int vcpu);
	bool (*step)(void *ctx, unsigned int vcpu);
	void *ctx;
	struct pl_vtime *vt;
};

/**
 * pl_run_vcpus() - run @r to completion. With one thread the order of
 * steps is a pure function of the workload: same seed, same result.
 * Return: 0, or -EINVAL for an empty or inconsistent @r.
 */
int pl_run_vcpus(const struct pl_vcpu_run *r);

/* ---- seeded PRNG (xoshiro256**, seeded through splitmix64) --------------- */

struct pl_rng {
	uint64_t s[4];
};

static inline uint64_t pl_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline void pl_rng_seed(struct pl_rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = pl_splitmix64(&seed);
}

static inline uint64_t pl_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t pl_rng_next(struct pl_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = pl_rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = pl_rotl(s[3], 45);
	return result;
}

/** pl_rng_below() - uniform value in [0, n), n > 0 (Lemire's method). */
static inline uint64_t pl_rng_below(struct pl_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)pl_rng_next(r) * n) >> 64);
}

#endif /* PAGELAB_BASE_H */
