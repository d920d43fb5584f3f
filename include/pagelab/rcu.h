/* SPDX-License-Identifier: MIT */
/*
 * rcu.h - RCU for pagelab: liburcu (the memb flavour, the one the kernel's
 * tools/testing harnesses use) plus the annotations ThreadSanitizer needs to
 * see RCU's ordering.
 *
 * liburcu is not built with TSan, so TSan cannot see that a grace period
 * orders every reader's critical section before a call_rcu() callback. We
 * tell it: a reader releases pl_rcu_gp_token just before leaving its read
 * side critical section, and a callback acquires it before it frees. In
 * builds without TSan the annotations are empty.
 *
 * Context: threads that read under pl_rcu_read_lock() or call call_rcu()
 * must be registered with rcu_register_thread() (liburcu's rule).
 */
#ifndef PAGELAB_RCU_H
#define PAGELAB_RCU_H

#include <urcu.h>

#if defined(__SANITIZE_THREAD__)
void __tsan_acquire(void *addr);
void __tsan_release(void *addr);
#define pl_tsan_acquire(addr) __tsan_acquire((void *)(addr))
#define pl_tsan_release(addr) __tsan_release((void *)(addr))
#else
#define pl_tsan_acquire(addr) ((void)(addr))
#define pl_tsan_release(addr) ((void)(addr))
#endif

/* The address readers release and RCU callbacks acquire (see above). */
extern char pl_rcu_gp_token;

static inline void pl_rcu_read_lock(void)
{
	rcu_read_lock();
}

static inline void pl_rcu_read_unlock(void)
{
	pl_tsan_release(&pl_rcu_gp_token);
	rcu_read_unlock();
}

#endif /* PAGELAB_RCU_H */
