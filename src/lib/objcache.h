/* SPDX-License-Identifier: MIT */
/*
 * objcache.h - a small slab-like cache of fixed-size objects (the role of
 * the kernel's kmem_cache for vmap_area and vm_struct objects).
 *
 * Objects come from host memory in slabs of OBJCACHE_SLAB_OBJS; they go
 * back to the cache, never to the host, until the cache is destroyed. Each
 * CPU keeps a small array of free objects that only that CPU touches (the
 * per-CPU fast path, no lock); it refills from and spills to a shared free
 * list under the cache's lock, OBJCACHE_BATCH objects at a time.
 *
 * Fault injection (failslab): a cache given a pl_fault_state with
 * pl_objcache_set_fault() asks it before every allocation; an injected
 * failure returns NULL before the cache changes.
 *
 * Invariants:
 *  - an object is in exactly one place: handed out, in one CPU's array, or
 *    on the shared list;
 *  - pl_objcache_in_use() = objects handed out and not yet freed
 *    (sum of the per-CPU alloc - free counts).
 */
#ifndef PAGELAB_LIB_OBJCACHE_H
#define PAGELAB_LIB_OBJCACHE_H

#include <stddef.h>
#include "pagelab/base.h"
#include "pagelab/fault_inject.h"

#define OBJCACHE_CPU_OBJS	32
#define OBJCACHE_BATCH		16
#define OBJCACHE_SLAB_OBJS	64

struct pl_objcache_cpu {
	unsigned int nr;
	long in_use;	/* allocs - frees done on this CPU (owner writes, anyone reads) */
	void *objs[OBJCACHE_CPU_OBJS];
} __cacheline_aligned;

/**
 * struct pl_objcache - a cache of @size-byte objects.
 * @lock:     protects @freelist, @nr_shared, @slabs, @nr_slabs.
 * @freelist: shared free objects, linked through their first word.
 * @slabs:    the host allocations, freed by pl_objcache_destroy().
 * @fault:    the failslab site to ask, or NULL (set before first use).
 */
struct pl_objcache {
	const char *name;
	size_t size;
	unsigned int nr_cpus;
	struct pl_spinlock lock;
	void *freelist;
	unsigned long nr_shared;
	void **slabs;
	unsigned long nr_slabs, cap_slabs;
	struct pl_objcache_cpu *cpu;
	struct pl_fault_state *fault;
};

/** pl_objcache_create() - a cache of @size-byte objects for @nr_cpus CPUs. NULL on ENOMEM. */
struct pl_objcache *pl_objcache_create(const char *name, size_t size, unsigned int nr_cpus);
void pl_objcache_destroy(struct pl_objcache *c);
/** pl_objcache_set_fault() - fail allocations as @fs says (NULL: never). */
static inline void pl_objcache_set_fault(struct pl_objcache *c, struct pl_fault_state *fs)
{
	c->fault = fs;
}
/** pl_objcache_alloc() - an object (contents undefined) for CPU @cpu; NULL on ENOMEM or an injected failure. */
void *pl_objcache_alloc(struct pl_objcache *c, unsigned int cpu);
/** pl_objcache_free() - give @obj back, on CPU @cpu. */
void pl_objcache_free(struct pl_objcache *c, void *obj, unsigned int cpu);
/** pl_objcache_in_use() - objects handed out (racy unless quiescent). */
long pl_objcache_in_use(const struct pl_objcache *c);

#endif /* PAGELAB_LIB_OBJCACHE_H */
