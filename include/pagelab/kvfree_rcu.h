/* SPDX-License-Identifier: MIT */
/*
 * kvfree_rcu.h - kvfree_rcu() with one and two arguments, batched per vCPU
 * and freed after an RCU grace period (liburcu), as mm/slab_common.c of
 * Linux 6.18 does for vmalloc'ed objects.
 *
 * Objects live in the simulated vmalloc space, so the rcu_head of the
 * two-argument form is a simulated address too: kvfree_rcu(p, rcu) passes
 * the address of p->rcu computed from the host-side type, and the head is
 * written through the page tables when it is used.
 */
#ifndef PAGELAB_KVFREE_RCU_H
#define PAGELAB_KVFREE_RCU_H

#include <stddef.h>
#include "mm.h"

/* The kernel's struct callback_head (rcu_head), for objects in vmalloc space. */
struct callback_head {
	struct callback_head *next;
	void (*func)(struct callback_head *head);
};

/**
 * kvfree_call_rcu() - free vmalloc'ed @ptr after a grace period. @head is
 * the address of an rcu_head inside the object (two-argument form) or
 * NULL (headless form, which may sleep: it may wait for a grace period
 * inline when no batch page can be had).
 * Context: a thread that has pl_enter()ed a machine.
 * Return: 0, or -EINVAL after a rate-limited warning (not the start of a
 * live vmalloc area, or @head outside it), nothing changed.
 */
int kvfree_call_rcu(struct callback_head *head, void *ptr);

#define kvfree_rcu(ptr, rhf) \
	kvfree_call_rcu((struct callback_head *)(void *)((char *)(ptr) + \
		offsetof(__typeof__(*(ptr)), rhf)), (void *)(ptr))
#define kvfree_rcu_mightsleep(ptr) kvfree_call_rcu(NULL, (void *)(ptr))

/**
 * kvfree_rcu_barrier() - wait for a grace period and free everything
 * queued by any vCPU of the current machine. Context: a vCPU.
 */
void kvfree_rcu_barrier(void);

/**
 * kvfree_rcu_poll() - free this vCPU's batches whose grace period has
 * ended, without waiting (the kernel's monitor work). Return: objects freed.
 */
unsigned long kvfree_rcu_poll(void);

/** pl_kvfree_rcu_pending() - objects queued and not yet freed on @m. */
unsigned long pl_kvfree_rcu_pending(struct pl_machine *m);

#endif /* PAGELAB_KVFREE_RCU_H */
