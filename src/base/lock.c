// SPDX-License-Identifier: MIT
/*
 * lock.c - spinlock slow path and lock_stat bookkeeping, plus the clock.
 *
 * The fast paths are inline in base.h. A waiter spins on a plain load (so
 * the cache line stays shared while the lock is held) and retries the
 * exchange only when the lock looks free. Contentions, wait times and
 * contended bounces are added with atomics because several waiters may
 * account at once; the minimum and maximum wait with compare-and-swap.
 * The "min" fields hold UINT64_MAX until the first sample (so that a
 * zero-length sample still counts), and read as 0 before it.
 */
#include <string.h>
#include <time.h>
#include "pagelab/base.h"

uint64_t pl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

_Thread_local unsigned int pl_lock_cpu;

void pl_spin_init(struct pl_spinlock *lock, bool timed)
{
	memset(lock, 0, sizeof(*lock));
	lock->timed = timed;
	/* lockdep_init_map() starts lock->cpu at the initialising CPU */
	lock->cpu = (unsigned short)pl_lock_cpu;
	lock->stat.wait_min_ns = UINT64_MAX;
	lock->stat.hold_min_ns = UINT64_MAX;
}

static void atomic_min_u64(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

static void atomic_max_u64(uint64_t *p, uint64_t v)
{
	uint64_t cur = __atomic_load_n(p, __ATOMIC_RELAXED);

	while (v > cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED,
						       __ATOMIC_RELAXED))
		;
}

void pl_lock_stat_wait(struct pl_spinlock *lock, uint64_t ns)
{
	__atomic_fetch_add(&lock->stat.wait_ns, ns, __ATOMIC_RELAXED);
	atomic_min_u64(&lock->stat.wait_min_ns, ns);
	atomic_max_u64(&lock->stat.wait_max_ns, ns);
}

void pl_spin_lock_slow(struct pl_spinlock *lock)
{
	uint64_t t0 = lock->timed ? pl_now_ns() : 0;

	__atomic_fetch_add(&lock->stat.contentions, 1, __ATOMIC_RELAXED);
	/* the kernel's __lock_contended(): a bounce if last taken elsewhere */
	if (lock->timed && __atomic_load_n(&lock->cpu, __ATOMIC_RELAXED) != pl_lock_cpu)
		__atomic_fetch_add(&lock->stat.con_bounces, 1, __ATOMIC_RELAXED);
	do {
		while (READ_ONCE(lock->locked))
			cpu_relax();
	} while (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE));
	if (lock->timed)
		pl_lock_stat_wait(lock, pl_now_ns() - t0);
	pl_spin_acquired(lock);
	pl_spin_acquired_cpu(lock);
}

static uint64_t read_min(const uint64_t *p)
{
	uint64_t v = __atomic_load_n(p, __ATOMIC_RELAXED);

	return v == UINT64_MAX ? 0 : v;
}

void pl_lock_stat_read(const struct pl_spinlock *lock, struct pl_lock_stat *out)
{
	out->acquisitions = READ_ONCE(lock->stat.acquisitions);
	out->contentions = READ_ONCE(lock->stat.contentions);
	out->wait_ns = READ_ONCE(lock->stat.wait_ns);
	out->hold_ns = READ_ONCE(lock->stat.hold_ns);
	out->hold_max_ns = READ_ONCE(lock->stat.hold_max_ns);
	out->wait_min_ns = read_min(&lock->stat.wait_min_ns);
	out->wait_max_ns = __atomic_load_n(&lock->stat.wait_max_ns, __ATOMIC_RELAXED);
	out->hold_min_ns = read_min(&lock->stat.hold_min_ns);
	out->con_bounces = __atomic_load_n(&lock->stat.con_bounces, __ATOMIC_RELAXED);
	out->acq_bounces = READ_ONCE(lock->stat.acq_bounces);
}

void pl_lock_stat_reset(struct pl_spinlock *lock)
{
	WRITE_ONCE(lock->stat.acquisitions, 0);
	WRITE_ONCE(lock->stat.contentions, 0);
	WRITE_ONCE(lock->stat.wait_ns, 0);
	WRITE_ONCE(lock->stat.hold_ns, 0);
	WRITE_ONCE(lock->stat.hold_max_ns, 0);
	WRITE_ONCE(lock->stat.wait_min_ns, UINT64_MAX);
	WRITE_ONCE(lock->stat.wait_max_ns, 0);
	WRITE_ONCE(lock->stat.hold_min_ns, UINT64_MAX);
	WRITE_ONCE(lock->stat.con_bounces, 0);
	WRITE_ONCE(lock->stat.acq_bounces, 0);
}

/* The lock word alone: no lock_stat, no virtual time (an observer's). */
static void raw_lock(struct pl_spinlock *lock)
{
	while (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE))
		while (READ_ONCE(lock->locked))
			cpu_relax();
}

static void raw_unlock(struct pl_spinlock *lock)
{
	__atomic_store_n(&lock->locked, 0, __ATOMIC_RELEASE);
}

#define STAT_FIELDS(X) X(acquisitions) X(contentions) X(wait_ns) X(hold_ns) X(hold_max_ns) \
	X(wait_min_ns) X(wait_max_ns) X(hold_min_ns) X(con_bounces) X(acq_bounces)

void pl_lock_stat_save(struct pl_spinlock *lock, struct pl_lock_saved *out)
{
	raw_lock(lock);
#define COPY_OUT(f) out->stat.f = __atomic_load_n(&lock->stat.f, __ATOMIC_RELAXED);
	STAT_FIELDS(COPY_OUT)
#undef COPY_OUT
	out->cpu = __atomic_load_n(&lock->cpu, __ATOMIC_RELAXED);
	raw_unlock(lock);
}

void pl_lock_stat_put_back(struct pl_spinlock *lock, const struct pl_lock_saved *in)
{
	raw_lock(lock);
#define COPY_IN(f) __atomic_store_n(&lock->stat.f, in->stat.f, __ATOMIC_RELAXED);
	STAT_FIELDS(COPY_IN)
#undef COPY_IN
	__atomic_store_n(&lock->cpu, (unsigned short)in->cpu, __ATOMIC_RELAXED);
	raw_unlock(lock);
}
