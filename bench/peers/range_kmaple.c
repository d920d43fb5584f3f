// SPDX-License-Identifier: MIT
/*
 * range_kmaple.c - the range workload (bench/suites/range_workload.h) over the
 * kernel's own maple tree: lib/maple_tree.c from Debian's linux-source-6.12,
 * built in tools/testing/radix-tree with its userspace shims, -O2, without
 * CONFIG_DEBUG_MAPLE_TREE. scripts/build-peers.sh compiles this file there;
 * no kernel source is kept in pagelab.
 *
 * Driven like ours: under the tree lock, mas_empty_area() for
 * size + align - 1, round up, mas_store_gfp(); free with mtree_erase().
 * The shim's kmem_cache fails allocations without __GFP_DIRECT_RECLAIM
 * unless told otherwise; we tell it to let them all through, as a kernel
 * slab would (otherwise every store would fail once and retry).
 */
#include "test.h"
#include <linux/init.h>

#define module_init(x)
#define module_exit(x)
#define MODULE_AUTHOR(x)
#define MODULE_DESCRIPTION(X)
#define MODULE_LICENSE(x)
#define dump_stack()	assert(0)

#include "../../../lib/maple_tree.c"

extern void kmem_cache_set_non_kernel(struct kmem_cache *, unsigned int);

struct rw_area {
	unsigned long start, size;
};

static unsigned long rw_lo, rw_hi;
static struct maple_tree rw_tree;

static void *rw_init(unsigned long start, unsigned long end)
{
	static bool once;

	if (!once) {
		maple_tree_init();
		rcu_register_thread();
		once = true;
	}
	kmem_cache_set_non_kernel(maple_node_cache, UINT_MAX);
	mt_init_flags(&rw_tree, MT_FLAGS_ALLOC_RANGE);
	if (mtree_store_range(&rw_tree, 0, start - 1, XA_ZERO_ENTRY, GFP_KERNEL) ||
	    mtree_store_range(&rw_tree, end + 1, ULONG_MAX, XA_ZERO_ENTRY, GFP_KERNEL))
		return NULL;
	rw_lo = start;
	rw_hi = end;
	return &rw_tree;
}

static int rw_alloc(void *be, struct rw_area *a, unsigned long size, unsigned long align)
{
	struct maple_tree *mt = be;
	MA_STATE(mas, mt, 0, 0);
	int ret;

	mtree_lock(mt);
	ret = mas_empty_area(&mas, rw_lo, rw_hi, size + align - 1);
	if (!ret) {
		unsigned long s = ALIGN(mas.index, align);

		mas_set_range(&mas, s, s + size - 1);
		ret = mas_store_gfp(&mas, a, GFP_KERNEL);
		a->start = s;
	}
	mtree_unlock(mt);
	return ret;
}

static void rw_free(void *be, struct rw_area *a)
{
	mtree_erase(be, a->start);
}

static void rw_fini(void *be)
{
	mtree_destroy(be);
}

#include "range_workload.h"

RW_PEER_MAIN("linux-6.12 maple_tree")
