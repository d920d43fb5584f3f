// SPDX-License-Identifier: MIT
/*
 * objcache.c - the fixed-size object cache (see objcache.h): a per-CPU
 * array in front of a shared free list in front of host slabs.
 */
#include <stdlib.h>
#include <string.h>
#include "objcache.h"

struct pl_objcache *pl_objcache_create(const char *name, size_t size, unsigned int nr_cpus)
{
	struct pl_objcache *c = pl_zalloc_lines(sizeof(*c));

	if (!c)
		return NULL;
	c->name = name;
	c->size = (size + 15) & ~(size_t)15;
	c->nr_cpus = nr_cpus;
	pl_spin_init(&c->lock, false);
	/* Only the vmalloc layer keeps object caches (vmap_area, vm_struct). */
	pl_spin_set_class(&c->lock, VT_LOCK_VMAP_OTHER);
	c->cpu = pl_zalloc_lines(sizeof(*c->cpu) * nr_cpus);
	if (!c->cpu) {
		free(c);
		return NULL;
	}
	return c;
}

void pl_objcache_destroy(struct pl_objcache *c)
{
	if (!c)
		return;
	for (unsigned long i = 0; i < c->nr_slabs; i++)
		free(c->slabs[i]);
	free(c->slabs);
	free(c->cpu);
	free(c);
}

/* A new slab onto the shared list. Called with c->lock held. */
static bool grow(struct pl_objcache *c)
{
	char *slab;

	if (c->nr_slabs == c->cap_slabs) {
		unsigned long cap = c->cap_slabs ? c->cap_slabs * 2 : 16;
		void **s = realloc(c->slabs, cap * sizeof(*s));

		if (!s)
			return false;
		c->slabs = s;
		c->cap_slabs = cap;
	}
	slab = aligned_alloc(64, (c->size * OBJCACHE_SLAB_OBJS + 63) & ~(size_t)63);
	if (!slab)
		return false;
	c->slabs[c->nr_slabs++] = slab;
	for (int i = OBJCACHE_SLAB_OBJS - 1; i >= 0; i--) {
		void *obj = slab + (size_t)i * c->size;

		*(void **)obj = c->freelist;
		c->freelist = obj;
	}
	c->nr_shared += OBJCACHE_SLAB_OBJS;
	return true;
}

/* failslab: should this allocation fail? (The kernel's should_failslab().) */
static bool objcache_should_fail(struct pl_objcache *c)
{
	int verbose = 0;

	if (!__pl_should_fail(c->fault, c->size, PL_FAULT_NO_ORDER, false, &verbose))
		return false;
	if (verbose)
		pl_warn_ratelimited("FAULT_INJECTION: forcing a failure: failslab cache %s", c->name);
	return true;
}

void *pl_objcache_alloc(struct pl_objcache *c, unsigned int cpu)
{
	struct pl_objcache_cpu *cc = &c->cpu[cpu];

	if (unlikely(c->fault) && pl_fault_enabled(c->fault) && objcache_should_fail(c))
		return NULL;

	if (unlikely(!cc->nr)) {
		spin_lock(&c->lock);
		while (cc->nr < OBJCACHE_BATCH) {
			if (!c->freelist && !grow(c))
				break;
			cc->objs[cc->nr++] = c->freelist;
			c->freelist = *(void **)c->freelist;
			c->nr_shared--;
		}
		spin_unlock(&c->lock);
		if (!cc->nr)
			return NULL;
	}
	WRITE_ONCE(cc->in_use, cc->in_use + 1);
	return cc->objs[--cc->nr];
}

void pl_objcache_free(struct pl_objcache *c, void *obj, unsigned int cpu)
{
	struct pl_objcache_cpu *cc = &c->cpu[cpu];

	if (unlikely(cc->nr == OBJCACHE_CPU_OBJS)) {
		spin_lock(&c->lock);
		while (cc->nr > OBJCACHE_CPU_OBJS - OBJCACHE_BATCH) {
			void *o = cc->objs[--cc->nr];

			*(void **)o = c->freelist;
			c->freelist = o;
			c->nr_shared++;
		}
		spin_unlock(&c->lock);
	}
	cc->objs[cc->nr++] = obj;
	WRITE_ONCE(cc->in_use, cc->in_use - 1);
}

long pl_objcache_in_use(const struct pl_objcache *c)
{
	long n = 0;

	for (unsigned int i = 0; i < c->nr_cpus; i++)
		n += READ_ONCE(c->cpu[i].in_use);
	return n;
}
