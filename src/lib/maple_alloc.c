// SPDX-License-Identifier: MIT
/*
 * maple_alloc.c - memory for maple nodes: the "maple_node" kmem_cache of the
 * kernel, with failslab-style fault injection and RCU-deferred freeing.
 *
 * Nodes are 256 bytes, 256-byte aligned. Each thread keeps a small array of
 * free nodes (no lock); it refills from and spills to a shared free list
 * under a mutex, MT_CACHE_BATCH at a time; the shared list grows by slabs of
 * MT_SLAB_NODES nodes and never shrinks (as a kmem_cache without shrinking).
 * A thread's array goes back to the shared list when the thread exits.
 * Sanitizer builds skip the caches and use aligned_alloc()/free() per node, so
 * that ASan sees use-after-free of a node and TSan sees every free.
 *
 * Retired nodes (replaced by a store) are freed at once, or - for a tree in
 * RCU mode - gathered into batches of MT_RETIRE_BATCH handed to call_rcu().
 * If a batch cannot be allocated, the writer waits for a grace period
 * (synchronize_rcu()) and frees directly: slow, but never wrong.
 *
 * Invariants:
 *  - mt_nr_allocated() = nodes handed out and not yet freed (atomic);
 *  - an injected failure returns NULL before anything is taken.
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/rcu.h"
#include "maple_internal.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define MT_NODE_CACHE 0
#else
#define MT_NODE_CACHE 1
#endif

#define MT_CACHE_NODES	64
#define MT_CACHE_BATCH	32
#define MT_SLAB_NODES	64

char pl_rcu_gp_token;

static long mt_allocated;	/* atomic */

static struct pl_fault_state mt_fail_node;
static pthread_once_t mt_fail_once = PTHREAD_ONCE_INIT;

static void mt_fail_init(void)
{
	pl_fault_state_init(&mt_fail_node);
}

/* ---- the shared list and the per-thread arrays ---------------------------- */

struct mt_free_node {
	struct mt_free_node *next;
};

static pthread_mutex_t mt_pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mt_free_node *mt_pool;	/* protected by mt_pool_lock */
static void **mt_slabs;			/* protected by mt_pool_lock */
static unsigned long mt_nr_slabs, mt_cap_slabs;

struct mt_cache {
	unsigned int nr;
	bool registered;
	void *objs[MT_CACHE_NODES];
};

static __thread struct mt_cache mt_cache;
static pthread_key_t mt_cache_key;
static pthread_once_t mt_cache_once = PTHREAD_ONCE_INIT;

/* Give @n nodes from @objs back to the shared list. */
static void mt_pool_put(void **objs, unsigned int n)
{
	pthread_mutex_lock(&mt_pool_lock);
	for (unsigned int i = 0; i < n; i++) {
		struct mt_free_node *f = objs[i];

		f->next = mt_pool;
		mt_pool = f;
	}
	pthread_mutex_unlock(&mt_pool_lock);
}

static void mt_cache_exit(void *arg)
{
	struct mt_cache *c = arg;

	mt_pool_put(c->objs, c->nr);
	c->nr = 0;
}

static void mt_cache_key_init(void)
{
	pthread_key_create(&mt_cache_key, mt_cache_exit);
}

/* Make sure this thread's array goes back to the shared list at exit. */
static void mt_cache_register(struct mt_cache *c)
{
	pthread_once(&mt_cache_once, mt_cache_key_init);
	pthread_setspecific(mt_cache_key, c);
	c->registered = true;
}

/* Refill this thread's array with up to MT_CACHE_BATCH nodes. */
static bool mt_cache_refill(struct mt_cache *c)
{
	if (!c->registered)
		mt_cache_register(c);
	pthread_mutex_lock(&mt_pool_lock);
	if (!mt_pool) {
		char *slab;

		if (mt_nr_slabs == mt_cap_slabs) {
			unsigned long cap = mt_cap_slabs ? mt_cap_slabs * 2 : 64;
			void **s = realloc(mt_slabs, cap * sizeof(*s));

			if (!s)
				goto fail;
			mt_slabs = s;
			mt_cap_slabs = cap;
		}
		slab = aligned_alloc(MAPLE_NODE_SIZE, (size_t)MT_SLAB_NODES * MAPLE_NODE_SIZE);
		if (!slab)
			goto fail;
		mt_slabs[mt_nr_slabs++] = slab;
		for (int i = MT_SLAB_NODES - 1; i >= 0; i--) {
			struct mt_free_node *f = (void *)(slab + (size_t)i * MAPLE_NODE_SIZE);

			f->next = mt_pool;
			mt_pool = f;
		}
	}
	while (mt_pool && c->nr < MT_CACHE_BATCH) {
		c->objs[c->nr++] = mt_pool;
		mt_pool = mt_pool->next;
	}
	pthread_mutex_unlock(&mt_pool_lock);
	return true;
fail:
	pthread_mutex_unlock(&mt_pool_lock);
	return false;
}

/* ---- allocation and freeing ------------------------------------------------ */

/**
 * mt_node_alloc() - a zeroed node, or NULL (injected failure or no memory).
 * Context: any thread; never sleeps on I/O.
 */
struct maple_node *mt_node_alloc(void)
{
	struct maple_node *node;

	pthread_once(&mt_fail_once, mt_fail_init);
	if (pl_fault_enabled(&mt_fail_node)) {
		int verbose = 0;

		if (__pl_should_fail(&mt_fail_node, MAPLE_NODE_SIZE, PL_FAULT_NO_ORDER, false,
				     &verbose)) {
			if (verbose)
				pl_warn_ratelimited("FAULT_INJECTION: forcing a maple node allocation failure\n");
			return NULL;
		}
	}
	if (MT_NODE_CACHE) {
		struct mt_cache *c = &mt_cache;

		if (unlikely(!c->nr) && !mt_cache_refill(c))
			return NULL;
		node = c->objs[--c->nr];
	} else {
		node = aligned_alloc(MAPLE_NODE_SIZE, MAPLE_NODE_SIZE);
		if (!node)
			return NULL;
	}
	memset(node, 0, sizeof(*node));
	__atomic_fetch_add(&mt_allocated, 1, __ATOMIC_RELAXED);
	return node;
}

/** mt_node_free() - free @node now. Context: no reader can reach it. */
void mt_node_free(struct maple_node *node)
{
	__atomic_fetch_sub(&mt_allocated, 1, __ATOMIC_RELAXED);
	if (MT_NODE_CACHE) {
		struct mt_cache *c = &mt_cache;

		if (unlikely(!c->registered))
			mt_cache_register(c);
		if (unlikely(c->nr == MT_CACHE_NODES)) {
			mt_pool_put(&c->objs[MT_CACHE_NODES - MT_CACHE_BATCH], MT_CACHE_BATCH);
			c->nr -= MT_CACHE_BATCH;
		}
		c->objs[c->nr++] = node;
	} else {
		free(node);
	}
}

long mt_nr_allocated(void)
{
	return __atomic_load_n(&mt_allocated, __ATOMIC_RELAXED);
}

struct pl_fault_state *mt_fault_state(void)
{
	pthread_once(&mt_fail_once, mt_fail_init);
	return &mt_fail_node;
}

int mt_fault_set(const struct pl_fault_attr *attr)
{
	pthread_once(&mt_fail_once, mt_fail_init);
	return pl_fault_state_set(&mt_fail_node, attr);
}

void mt_fault_get(struct pl_fault_attr *attr, struct pl_fault_stats *stats)
{
	pthread_once(&mt_fail_once, mt_fail_init);
	pl_fault_state_get(&mt_fail_node, attr, stats);
}

/* ---- retiring nodes ---------------------------------------------------------- */

struct mt_rcu_batch {
	struct rcu_head rcu;
	unsigned int nr;
	struct maple_node *nodes[MT_RETIRE_BATCH];
};

static void mt_rcu_batch_free(struct rcu_head *head)
{
	struct mt_rcu_batch *b = container_of(head, struct mt_rcu_batch, rcu);

	pl_tsan_acquire(b);
	pl_tsan_acquire(&pl_rcu_gp_token);
	for (unsigned int i = 0; i < b->nr; i++)
		mt_node_free(b->nodes[i]);
	free(b);
}

static void mt_retire_flush(struct mt_retire *r)
{
	struct mt_rcu_batch *b = r->batch;

	if (!b)
		return;
	r->batch = NULL;
	pl_tsan_release(b);
	call_rcu(&b->rcu, mt_rcu_batch_free);
}

/**
 * mt_retire_node() - @node was unlinked by the store being finished; free it
 * now, or after a grace period if readers may still see it.
 */
void mt_retire_node(struct mt_retire *r, struct maple_node *node)
{
	if (!r->rcu) {
		mt_node_free(node);
		return;
	}
	/* Dead: its parent word points at itself (mt_validate() looks). */
	ma_set_parent(node, (struct maple_pnode *)node);
	if (r->batch && r->batch->nr == MT_RETIRE_BATCH)
		mt_retire_flush(r);
	if (!r->batch) {
		r->batch = malloc(sizeof(*r->batch));
		if (!r->batch) {
			synchronize_rcu();
			mt_node_free(node);
			return;
		}
		r->batch->nr = 0;
	}
	r->batch->nodes[r->batch->nr++] = node;
}

void mt_retire_done(struct mt_retire *r)
{
	if (r->rcu)
		mt_retire_flush(r);
}

#if defined(__SANITIZE_THREAD__)
/*
 * Under TSan, rcu_barrier()'s own bookkeeping (allocated here, freed by the
 * call_rcu thread, ordered by liburcu's uninstrumented code) is reported as a
 * race. The default call_rcu worker runs callbacks in order, so waiting for
 * one more callback of our own is the same barrier, in terms TSan sees.
 */
struct mt_rcu_sentinel {
	struct rcu_head rcu;
	int done;
};

static void mt_rcu_sentinel_cb(struct rcu_head *head)
{
	struct mt_rcu_sentinel *s = container_of(head, struct mt_rcu_sentinel, rcu);

	pl_tsan_acquire(s);
	__atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
}

void mt_rcu_barrier(void)
{
	struct mt_rcu_sentinel s = { .done = 0 };

	pl_tsan_release(&s);
	call_rcu(&s.rcu, mt_rcu_sentinel_cb);
	while (!__atomic_load_n(&s.done, __ATOMIC_ACQUIRE))
		sched_yield();
}
#else
void mt_rcu_barrier(void)
{
	rcu_barrier();
}
#endif
