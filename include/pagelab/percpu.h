/* SPDX-License-Identifier: MIT */
/*
 * percpu.h - the dynamic percpu allocator (mm/percpu.c, mm/percpu-vm.c of
 * Linux 6.18), enough for __alloc_percpu()/free_percpu().
 *
 * A percpu pointer is an offset into every vCPU's copy: per_cpu_ptr(p,
 * cpu) is a vmalloc address (simulated: reach it with vmalloc_write()/
 * vmalloc_read()). Memory comes in chunks of one unit per vCPU, each unit
 * PCPU_UNIT_SIZE bytes; a chunk's units are congruent vmalloc areas
 * from pcpu_get_vm_areas(), populated page by page on demand.
 *
 * Where pagelab differs: no first chunk (static percpu data and the
 * reserved module area do not exist here); every chunk is a vmalloc-backed
 * dynamic chunk, and populated pages stay until the chunk goes.
 */
#ifndef PAGELAB_PERCPU_H
#define PAGELAB_PERCPU_H

#include <stddef.h>
#include "mm.h"

#define PCPU_MIN_ALLOC_SIZE	4		/* one bitmap bit */
#define PCPU_MIN_UNIT_SIZE	(32UL << 10)	/* also the largest allocation */
#define PCPU_UNIT_SIZE		(256UL << 10)	/* x86_64's usual "u262144" */

/**
 * __alloc_percpu() - @size bytes (1..PCPU_MIN_UNIT_SIZE) at @align (a
 * power of two, at most PAGE_SIZE) in every vCPU's unit, zeroed.
 * Context: a thread that has pl_enter()ed a machine.
 * Return: the percpu pointer, or NULL (bad arguments are warned about).
 */
void *__alloc_percpu(size_t size, size_t align);
/** __alloc_percpu_gfp() - the same with @gfp (GFP_NOWAIT/GFP_ATOMIC: no new chunk). */
void *__alloc_percpu_gfp(size_t size, size_t align, gfp_t gfp);

/**
 * free_percpu() - free a percpu pointer; NULL is a no-op.
 * Return: 0, or -EINVAL after a rate-limited warning, nothing changed,
 * for a pointer that is not a live allocation's start.
 */
int free_percpu(void *ptr);

/** per_cpu_ptr() - the vmalloc address of @cpu's copy of @ptr. */
void *per_cpu_ptr(void *ptr, unsigned int cpu);

/**
 * struct pl_percpu_stats - the percpu allocator's state.
 * @nr_chunks:     chunks alive; @nr_populated: pages populated per unit, summed.
 * @nr_alloc:      live allocations; @bytes_used: their bytes (rounded to 4).
 */
struct pl_percpu_stats {
	unsigned long nr_chunks, nr_populated, nr_alloc, bytes_used;
};
void pl_percpu_stats(struct pl_machine *m, struct pl_percpu_stats *out);

/**
 * pl_percpu_reclaim() - destroy every chunk with no allocation left (the
 * balance work keeps one). Context: a vCPU of @m.
 */
void pl_percpu_reclaim(struct pl_machine *m);

/**
 * pl_check_percpu() - each chunk's bitmaps against its counts and hints,
 * its areas and mappings against the vmalloc space. Return: problems found.
 */
int pl_check_percpu(struct pl_machine *m);

#endif /* PAGELAB_PERCPU_H */
