// SPDX-License-Identifier: MIT
/*
 * lock.c - spinlock slow path and lock_stat bookkeeping, plus the clock.
 *
 * The fast paths are inline in base.h. A waiter spins on a plain load (so
 * the cache line stays shared while the lock is held) and retries the
 * exchange only when the lock looks free. Contentions and wait time are
 * added with atomics because several waiters may account at once.
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

void pl_spin_init(struct pl_spinlock *lock, bool timed)
{
	memset(lock, 0, sizeof(*lock));
	lock->timed = timed;
}

void pl_spin_lock_slow(struct pl_spinlock *lock)
{
	uint64_t t0 = lock->timed ? pl_now_ns() : 0;

	__atomic_fetch_add(&lock->stat.contentions, 1, __ATOMIC_RELAXED);
	do {
		while (READ_ONCE(lock->locked))
			cpu_relax();
	} while (__atomic_exchange_n(&lock->locked, 1, __ATOMIC_ACQUIRE));
	if (lock->timed)
		__atomic_fetch_add(&lock->stat.wait_ns, pl_now_ns() - t0, __ATOMIC_RELAXED);
	pl_spin_acquired(lock);
}

void pl_lock_stat_read(const struct pl_spinlock *lock, struct pl_lock_stat *out)
{
	out->acquisitions = READ_ONCE(lock->stat.acquisitions);
	out->contentions = READ_ONCE(lock->stat.contentions);
	out->wait_ns = READ_ONCE(lock->stat.wait_ns);
	out->hold_ns = READ_ONCE(lock->stat.hold_ns);
	out->hold_max_ns = READ_ONCE(lock->stat.hold_max_ns);
}

void pl_lock_stat_reset(struct pl_spinlock *lock)
{
	WRITE_ONCE(lock->stat.acquisitions, 0);
	WRITE_ONCE(lock->stat.contentions, 0);
	WRITE_ONCE(lock->stat.wait_ns, 0);
	WRITE_ONCE(lock->stat.hold_ns, 0);
	WRITE_ONCE(lock->stat.hold_max_ns, 0);
}
