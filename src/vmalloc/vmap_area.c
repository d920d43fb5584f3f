// SPDX-License-Identifier: MIT
/*
 * vmap_area.c - managing the ranges of the vmalloc space, as mm/vmalloc.c
 * of Linux 6.18 does: alloc_vmap_area() (node pools first, then the free
 * index under free_vmap_area_lock, purging and retrying once when the
 * space is full), the busy areas sharded over vmap nodes by address, lazy
 * freeing (free_vmap_area_noflush) and the purge that returns lazy areas to
 * the pools or the free space after one TLB flush for all of them.
 *
 *   alloc:  pool[size] of this CPU's node --miss--> free index (va_clip)
 *           --> busy index of addr_to_node(addr)
 *   vfree:  busy --> lazy of the node (vmap_lazy_nr += pages)
 *           --> (vmap_lazy_nr > lazy_max_pages) purge:
 *               every node: decay 25% of its pools, steal its lazy list;
 *               one flush_tlb_kernel_range() over all of it;
 *               each lazy area goes back to its node's pool if its size
 *               has one (1..256 pages) and it came from a pool-aware
 *               allocation, else it merges into the free index.
 *
 * Locks: free.lock (free_vmap_area_lock), per node busy.lock, lazy.lock,
 * pool_lock; the purge mutex (vmap_purge_lock) above them all. None is
 * held while another of them is taken, except free.lock inside the purge.
 *
 * Where pagelab differs: the drain the kernel queues on a workqueue when
 * vmap_lazy_nr passes lazy_max_pages() runs on the freeing vCPU at once
 * (skipped if a purge is already running), and the purge's per-node work
 * runs inline rather than on helper CPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vmap_area.h"
#include "mm/validate.h"

/* ---- vmap_area objects --------------------------------------------------- */

struct vmap_area *va_cache_alloc(struct vmap_space *vs)
{
	return pl_objcache_alloc(vs->vmap_area_cachep, this_cpu_id());
}

void va_cache_free(struct vmap_space *vs, struct vmap_area *va)
{
	pl_objcache_free(vs->vmap_area_cachep, va, this_cpu_id());
}

/*
 * preload_this_cpu(): make sure this CPU holds a spare area before taking
 * free_vmap_area_lock, so an NE fit need not allocate under the lock.
 */
static void preload_this_cpu(struct vmap_space *vs)
{
	struct vmap_area **slot = &vs->ne_fit_preload[this_cpu_id()];

	if (!*slot)
		*slot = va_cache_alloc(vs);
}

struct vmap_area *ne_fit_spare(struct vmap_space *vs)
{
	struct vmap_area **slot = &vs->ne_fit_preload[this_cpu_id()];
	struct vmap_area *va = *slot;

	if (va) {
		*slot = NULL;
		return va;
	}
	return va_cache_alloc(vs);
}

unsigned long lazy_max_pages(const struct vmap_space *vs)
{
	unsigned int cpus = vs->m->nr_cpus, log = 0;

	while (cpus) {	/* fls() */
		log++;
		cpus >>= 1;
	}
	return log * (32UL * 1024 * 1024 / PAGE_SIZE);
}

/* ---- node pools ----------------------------------------------------------- */

static inline struct vmap_pool *size_to_va_pool(struct vmap_node *vn, unsigned long size)
{
	unsigned long idx = (size - 1) / PAGE_SIZE;

	return idx < MAX_VA_SIZE_PAGES ? &vn->pool[idx] : NULL;
}

static bool node_pool_add_va(struct vmap_node *vn, struct vmap_area *va)
{
	struct vmap_pool *vp = size_to_va_pool(vn, va_size(va));

	if (!vp)
		return false;
	spin_lock(&vn->pool_lock);
	list_add(&va->list, &vp->head);
	WRITE_ONCE(vp->len, vp->len + 1);
	spin_unlock(&vn->pool_lock);
	return true;
}

/*
 * node_pool_del_va() - the first area of the pool for @size if it is
 * aligned; a misaligned head is rotated to the tail and the caller falls
 * back to the free index.
 */
static struct vmap_area *node_pool_del_va(struct vmap_node *vn, unsigned long size,
					  unsigned long align, unsigned long vstart,
					  unsigned long vend)
{
	struct vmap_pool *vp = size_to_va_pool(vn, size);
	struct vmap_area *va = NULL;

	if (!vp || !READ_ONCE(vp->len))	/* racy peek, as the kernel's; rechecked locked */
		return NULL;
	spin_lock(&vn->pool_lock);
	if (!list_empty(&vp->head)) {
		va = list_first_entry(&vp->head, struct vmap_area, list);
		if (IS_ALIGNED(va->va_start, align)) {
			if (va_size(va) != size || va->va_start < vstart || va->va_end > vend) {
				pl_warn_ratelimited("vmalloc: pooled area [%#lx, %#lx) does not fit "
						    "its pool", va->va_start, va->va_end);
				va = NULL;
			} else {
				list_del(&va->list);
				WRITE_ONCE(vp->len, vp->len - 1);
			}
		} else {
			list_move_tail(&va->list, &vp->head);
			va = NULL;
		}
	}
	spin_unlock(&vn->pool_lock);
	return va;
}

/* node_alloc() - the per-node pool fast path; records the node id in @vn_id. */
static struct vmap_area *node_alloc(struct vmap_space *vs, unsigned long size, unsigned long align,
				    unsigned long vstart, unsigned long vend, unsigned long *vn_id)
{
	unsigned int id;
	struct vmap_area *va;

	*vn_id = 0;
	if (vstart != VMALLOC_START || vend != VMALLOC_END || vs->nr_vmap_nodes <= 1)
		return NULL;
	id = this_cpu_id() % vs->nr_vmap_nodes;
	va = node_pool_del_va(&vs->vmap_nodes[id], size, align, vstart, vend);
	*vn_id = encode_vn_id(id);
	if (va)
		vm_count(PL_EV_VMAP_POOL_HIT, 1);
	return va;
}

/* ---- allocation ------------------------------------------------------------ */

/*
 * __alloc_vmap_area() - carve [addr, addr + size) out of the free index.
 * Return: 0 with *@addr set, or -ENOENT (no fit), -ERANGE (the fit lies
 * past @vend), -ENOMEM (no spare object for an NE fit).
 */
static int __alloc_vmap_area(struct vmap_space *vs, unsigned long size, unsigned long align,
			     unsigned long vstart, unsigned long vend, unsigned long *addr)
{
	bool adjust = !(align <= PAGE_SIZE || vend - vstart == size);
	struct vmap_area *va;
	unsigned long nva_start;
	int ret;

	va = vs->ops->find_vmap_lowest_match(&vs->free, size, align, vstart, vend, adjust);
	if (!va)
		return -ENOENT;
	nva_start = va->va_start > vstart ? va->va_start : vstart;
	nva_start = (nva_start + align - 1) & ~(align - 1);
	if (nva_start + size > vend)
		return -ERANGE;
	ret = vs->ops->va_clip(vs, &vs->free, va, nva_start, size);
	if (ret) {
		pl_warn_ratelimited("vmalloc: va_clip of [%#lx, %#lx) failed (%d)", nva_start,
				    nva_start + size, ret);
		return ret;
	}
	*addr = nva_start;
	return 0;
}

static void reclaim_and_purge_vmap_areas(struct vmap_space *vs)
{
	vmap_bump_drain_all(vs);
	purge_fragmented_blocks_allcpus(vs);
	pthread_mutex_lock(&vs->purge_lock);
	__purge_vmap_area_lazy(vs, ULONG_MAX, 0, true);
	pthread_mutex_unlock(&vs->purge_lock);
	if (vs->ops->retry) {	/* areas the index had to park (maple: no nodes) */
		spin_lock(&vs->free.lock);
		vs->ops->retry(vs, &vs->free);
		spin_unlock(&vs->free.lock);
	}
}

struct vmap_area *alloc_vmap_area(unsigned long size, unsigned long align, unsigned long vstart,
				  unsigned long vend, int node, gfp_t gfp, unsigned long va_flags,
				  struct vm_struct *vm, int *err)
{
	struct vmap_space *vs = this_vmap();
	bool allow_block = gfp & __GFP_DIRECT_RECLAIM, purged = false;
	unsigned long addr = 0, vn_id;
	struct vmap_area *va;
	struct vmap_node *vn;
	int ret;

	(void)node;
	if (unlikely(!size || !IS_ALIGNED(size, PAGE_SIZE) || !align || (align & (align - 1)))) {
		*err = -EINVAL;
		return NULL;
	}
	if (vmap_bump_eligible(vs, size, align, vstart, vend, va_flags, vm)) {
		va = vmap_bump_alloc(vs, size, align, gfp, vm);
		if (va) {
			*err = 0;
			return va;
		}
	}
	va = node_alloc(vs, size, align, vstart, vend, &vn_id);
	if (va) {
		addr = va->va_start;
		goto insert;
	}
retry:
	va = va_cache_alloc(vs);
	if (unlikely(!va)) {
		*err = -ENOMEM;
		return NULL;
	}
	preload_this_cpu(vs);
	spin_lock(&vs->free.lock);
	pl_vt_touch(&vs->free.head, true);	/* the free-space tree's top */
	ret = __alloc_vmap_area(vs, size, align, vstart, vend, &addr);
	spin_unlock(&vs->free.lock);
	if (unlikely(ret)) {
		va_cache_free(vs, va);
		if (!allow_block) {
			*err = -EBUSY;
			return NULL;
		}
		if (!purged) {
			reclaim_and_purge_vmap_areas(vs);
			purged = true;
			goto retry;
		}
		if (!(gfp & __GFP_NOWARN)) {
			pl_warn_ratelimited("vmalloc_node_range for size %lu failed: Address range "
					    "restricted to %#lx - %#lx", size, vstart, vend);
			__atomic_fetch_add(&vs->range_warnings, 1, __ATOMIC_RELAXED);
		}
		*err = -EBUSY;
		return NULL;
	}
insert:
	va->va_start = addr;
	va->va_end = addr + size;
	va->vm = NULL;
	va->flags = va_flags | vn_id;
	if (vm) {
		vm->addr = addr;
		vm->size = size;
		va->vm = vm;
	}
	vn = addr_to_node(vs, addr);
	spin_lock(&vn->busy.lock);
	ret = vs->ops->insert(&vn->busy, va);
	spin_unlock(&vn->busy.lock);
	if (unlikely(ret)) {	/* cannot happen unless the indexes are corrupt */
		pl_warn_ratelimited("vmalloc: new area [%#lx, %#lx) overlaps a busy one", addr,
				    addr + size);
		*err = -EBUSY;
		return NULL;
	}
	*err = 0;
	return va;
}

/* Merge each area of @head (unlinked from anything else) into the free index. */
static void reclaim_list_global(struct vmap_space *vs, struct list_head *head)
{
	struct list_head *pos, *next;

	if (list_empty(head))
		return;
	spin_lock(&vs->free.lock);
	pl_vt_touch(&vs->free.head, true);
	if (vs->ops->merge_list) {
		vs->ops->merge_list(vs, &vs->free, head);
		spin_unlock(&vs->free.lock);
		return;
	}
	for (pos = head->next; pos != head; pos = next) {
		next = pos->next;
		vs->ops->merge_or_add(vs, &vs->free, list_entry(pos, struct vmap_area, list));
	}
	spin_unlock(&vs->free.lock);
}

/*
 * free_vmap_area() - give an area back at once (error paths; no mapping
 * ever became visible): out of its busy index, into the free index.
 */
void free_vmap_area(struct vmap_area *va)
{
	struct vmap_space *vs = this_vmap();
	struct vmap_node *vn = addr_to_node(vs, va->va_start);

	if (va->flags & VMAP_BUMP) {
		vmap_bump_free(vs, va);
		return;
	}

	spin_lock(&vn->busy.lock);
	vs->ops->unlink(&vn->busy, va);
	spin_unlock(&vn->busy.lock);
	spin_lock(&vs->free.lock);
	vs->ops->merge_or_add(vs, &vs->free, va);
	spin_unlock(&vs->free.lock);
}

/* ---- lookup ---------------------------------------------------------------- */

struct vmap_area *find_vmap_area(unsigned long addr)
{
	struct vmap_space *vs = this_vmap();
	unsigned int nr = vs->nr_vmap_nodes, i, j;
	struct vmap_area *va;

	vm_count(PL_EV_VMAP_BUSY_LOOKUP, 1);
	if (vs->bump && vmap_bump_find(vs, addr, &va, false, 0))
		return va;
	i = j = addr_to_node_id(vs, addr);
	do {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		spin_lock(&vn->busy.lock);
		va = vs->ops->find(&vn->busy, addr);
		spin_unlock(&vn->busy.lock);
		if (va)
			return va;
	} while ((i = (i + nr - 1) % nr) != j);
	return NULL;
}

/*
 * find_unlink_vmap_area() - find the busy area that starts at @addr and
 * take it out of its index, if it is what @want asks (VA_WANT_*: a
 * vm_struct, not a percpu chunk's, of some VM_* kind). Unlike the kernel,
 * an address inside an area does not free the area: it is refused (NULL),
 * nothing changed. One busy-index lookup (PL_EV_VMAP_BUSY_LOOKUP).
 */
struct vmap_area *find_unlink_vmap_area(unsigned long addr, unsigned long want)
{
	struct vmap_space *vs = this_vmap();
	unsigned int nr = vs->nr_vmap_nodes, i, j;
	struct vmap_area *bva;

	vm_count(PL_EV_VMAP_BUSY_LOOKUP, 1);
	if (vs->bump && vmap_bump_find(vs, addr, &bva, true, want))
		return bva == ERR_AREA ? NULL : bva;
	i = j = addr_to_node_id(vs, addr);
	do {
		struct vmap_node *vn = &vs->vmap_nodes[i];
		struct vmap_area *va;

		spin_lock(&vn->busy.lock);
		va = vs->ops->find_unlink(&vn->busy, addr, want);
		spin_unlock(&vn->busy.lock);
		if (va)
			return va == ERR_AREA ? NULL : va;
	} while ((i = (i + nr - 1) % nr) != j);
	return NULL;
}

/* ---- lazy free and purge --------------------------------------------------- */

static void drain_vmap_area_work(struct vmap_space *vs)
{
	if (pthread_mutex_trylock(&vs->purge_lock))
		return;	/* a purge is running: it will see our areas or the next one will */
	__purge_vmap_area_lazy(vs, ULONG_MAX, 0, false);
	pthread_mutex_unlock(&vs->purge_lock);
}

void free_vmap_area_noflush(struct vmap_area *va)
{
	struct vmap_space *vs = this_vmap();
	unsigned long nr_lazy_max = vs->lazy_max;
	unsigned int vn_id = decode_vn_id(vs, va->flags);
	struct vmap_node *vn;
	long nr_lazy;

	if (va->flags & VMAP_BUMP) {	/* its chunk goes lazily once all of it is free */
		vmap_bump_free(vs, va);
		return;
	}
	nr_lazy = __atomic_add_fetch(&vs->vmap_lazy_nr, (long)(va_size(va) >> PAGE_SHIFT),
				     __ATOMIC_RELAXED);
	vn = vn_id < vs->nr_vmap_nodes ? &vs->vmap_nodes[vn_id] : addr_to_node(vs, va->va_start);
	spin_lock(&vn->lazy.lock);
	vs->ops->insert(&vn->lazy, va);
	spin_unlock(&vn->lazy.lock);
	if (unlikely((unsigned long)nr_lazy > nr_lazy_max))
		drain_vmap_area_work(vs);
}

/*
 * decay_va_pool_node() - give back 25% of each pool (all of it with
 * @full_decay), taken from the head of the list; they merge among
 * themselves first, then into the free index in one lock hold.
 */
static void decay_va_pool_node(struct vmap_space *vs, struct vmap_node *vn, bool full_decay)
{
	struct rb_list decay;

	if (vs->ops->init(&decay, VMAP_SET_LOCAL)) {
		pl_warn_ratelimited("vmalloc: no memory to decay the pools of a vmap node");
		return;
	}
	INIT_LIST_HEAD(&decay.head);
	for (int i = 0; i < MAX_VA_SIZE_PAGES; i++) {
		struct vmap_pool *vp = &vn->pool[i];
		struct list_head tmp, *pos, *next;
		unsigned long pool_len, n_decay;

		if (!READ_ONCE(vp->len))	/* racy peek: pool_lock is taken below */
			continue;
		INIT_LIST_HEAD(&tmp);
		spin_lock(&vn->pool_lock);
		vlist_splice_tail_init(&vp->head, &tmp);
		pool_len = n_decay = vp->len;
		WRITE_ONCE(vp->len, 0);
		spin_unlock(&vn->pool_lock);

		if (!full_decay)
			n_decay >>= 2;
		pool_len -= n_decay;
		for (pos = tmp.next; pos != &tmp && n_decay; pos = next, n_decay--) {
			next = pos->next;
			list_del(pos);
			vs->ops->merge_or_add(vs, &decay, list_entry(pos, struct vmap_area, list));
		}
		if (!list_empty(&tmp)) {
			spin_lock(&vn->pool_lock);
			vlist_splice_tail_init(&tmp, &vp->head);
			WRITE_ONCE(vp->len, pool_len);
			spin_unlock(&vn->pool_lock);
		}
	}
	reclaim_list_global(vs, &decay.head);
	vs->ops->destroy(&decay);
}

/* purge_vmap_node() - recycle or free one node's stolen lazy areas. */
static void purge_vmap_node(struct vmap_space *vs, struct vmap_node *vn)
{
	unsigned long nr_purged_pages = 0;
	struct list_head local, *pos, *next;

	INIT_LIST_HEAD(&local);
	vn->nr_purged = 0;
	for (pos = vn->purge_list.next; pos != &vn->purge_list; pos = next) {
		struct vmap_area *va = list_entry(pos, struct vmap_area, list);
		unsigned int vn_id = decode_vn_id(vs, va->flags);

		next = pos->next;
		list_del(pos);
		nr_purged_pages += va_size(va) >> PAGE_SHIFT;
		vn->nr_purged++;
		if (vn_id < vs->nr_vmap_nodes && !vn->skip_populate && node_pool_add_va(vn, va))
			continue;
		list_add_tail(&va->list, &local);
	}
	__atomic_sub_fetch(&vs->vmap_lazy_nr, (long)nr_purged_pages, __ATOMIC_RELAXED);
	reclaim_list_global(vs, &local);
}

bool __purge_vmap_area_lazy(struct vmap_space *vs, unsigned long start, unsigned long end,
			    bool full_pool_decay)
{
	unsigned int nr_purge_nodes = 0;

	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		INIT_LIST_HEAD(&vn->purge_list);
		vn->skip_populate = full_pool_decay;
		decay_va_pool_node(vs, vn, full_pool_decay);
		if (list_empty(&vn->lazy.head))
			continue;
		spin_lock(&vn->lazy.lock);
		vs->ops->reset(&vn->lazy);
		vlist_splice_tail_init(&vn->lazy.head, &vn->purge_list);
		spin_unlock(&vn->lazy.lock);
		if (list_empty(&vn->purge_list))
			continue;
		start = min(start, list_first_entry(&vn->purge_list, struct vmap_area, list)->va_start);
		end = max(end, list_last_entry(&vn->purge_list, struct vmap_area, list)->va_end);
		nr_purge_nodes++;
	}
	if (!nr_purge_nodes)
		return false;

	/* One flush for every area of every node. */
	flush_tlb_kernel_range(start, end);
	vm_count(PL_EV_VMAP_PURGE, 1);
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		if (list_empty(&vn->purge_list))
			continue;
		purge_vmap_node(vs, vn);
		vm_count(PL_EV_VMAP_PURGE_AREAS, vn->nr_purged);
	}
	return true;
}

void purge_vmap_area_lazy(struct vmap_space *vs)
{
	pthread_mutex_lock(&vs->purge_lock);
	__purge_vmap_area_lazy(vs, ULONG_MAX, 0, false);
	pthread_mutex_unlock(&vs->purge_lock);
}

void pl_vmalloc_purge(struct pl_machine *m)
{
	if (pl_check_this_machine(__func__, m) || !m->vmap)
		return;
	pl_vmalloc_flush_deferred(m);
	reclaim_and_purge_vmap_areas(m->vmap);
}

/* ---- the space ------------------------------------------------------------- */

static int rb_list_init(struct vmap_space *vs, struct rb_list *rl, enum vmap_set_kind kind,
			bool timed)
{
	INIT_LIST_HEAD(&rl->head);
	pl_spin_init(&rl->lock, timed);
	pl_spin_set_class(&rl->lock, kind == VMAP_SET_FREE ? VT_LOCK_VMAP_FREE : VT_LOCK_VMAP_NODE);
	return vs->ops->init(rl, kind);
}

struct vmap_space *vmap_space_create(struct pl_machine *m)
{
	unsigned int n = m->nr_cpus < 1 ? 1 : m->nr_cpus > 128 ? 128 : m->nr_cpus;
	bool timed = m->config.lock_stat;
	struct vmap_space *vs = pl_zalloc_lines(sizeof(*vs));
	struct vmap_area *va;

	if (!vs)
		return NULL;
	vs->m = m;
	pl_fault_state_init(&vs->failslab);
	switch (m->config.design.vmap_index) {
	case VMAP_INDEX_RBTREE:
		vs->ops = &vmap_index_rbtree_ops;
		break;
	case VMAP_INDEX_MAPLE:
		vs->ops = &vmap_index_maple_ops;
		break;
	default:
		pl_warn_ratelimited("vmalloc: unknown vmap_index %d",
				    (int)m->config.design.vmap_index);
		pl_fault_state_destroy(&vs->failslab);
		free(vs);
		return NULL;
	}
	vs->vmap_zone_size = 16 * PAGE_SIZE;
	vs->vmap_nodes = pl_zalloc_lines(sizeof(struct vmap_node) * n);
	if (vs->vmap_nodes)	/* zeroed lists are what ops->destroy() may meet */
		vs->nr_vmap_nodes = n;
	if (rb_list_init(vs, &vs->free, VMAP_SET_FREE, timed))
		goto fail;
	vs->ne_fit_preload = calloc(m->nr_cpus, sizeof(*vs->ne_fit_preload));
	vs->vmap_area_cachep = pl_objcache_create("vmap_area", vs->ops->va_objsize, m->nr_cpus);
	vs->vm_struct_cachep = pl_objcache_create("vm_struct", sizeof(struct vm_struct), m->nr_cpus);
	vs->pgt.pgd = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
	if (!vs->vmap_nodes || !vs->ne_fit_preload || !vs->vmap_area_cachep ||
	    !vs->vm_struct_cachep || !vs->pgt.pgd || vmap_blocks_init(vs) || vmap_bump_init(vs))
		goto fail;
	/* failslab (fault_inject.h): both object caches ask the space's site */
	pl_objcache_set_fault(vs->vmap_area_cachep, &vs->failslab);
	pl_objcache_set_fault(vs->vm_struct_cachep, &vs->failslab);
	memset(vs->pgt.pgd, 0, PAGE_SIZE);
	pl_spin_init(&vs->pgt.lock, false);
	pl_spin_set_class(&vs->pgt.lock, VT_LOCK_VMAP_OTHER);
	for (unsigned int i = 0; i < n; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		for (int p = 0; p < MAX_VA_SIZE_PAGES; p++)
			INIT_LIST_HEAD(&vn->pool[p].head);
		pl_spin_init(&vn->pool_lock, timed);
		pl_spin_set_class(&vn->pool_lock, VT_LOCK_VMAP_NODE);
		if (rb_list_init(vs, &vn->busy, VMAP_SET_BUSY, timed) ||
		    rb_list_init(vs, &vn->lazy, VMAP_SET_LAZY, timed))
			goto fail;
		INIT_LIST_HEAD(&vn->purge_list);
	}
	pthread_mutex_init(&vs->purge_lock, NULL);
	vs->lazy_max = lazy_max_pages(vs);
	vs->tlb_flush_loops = m->config.tlb_flush_ns_per_cpu * tlb_calibrate_loops_per_us() / 1000;

	/* The whole window is one free area (the kernel's covers [1, ULONG_MAX)). */
	va = pl_objcache_alloc(vs->vmap_area_cachep, 0);
	if (!va)
		goto fail;
	va->va_start = VMALLOC_START;
	va->va_end = VMALLOC_END;
	va->flags = 0;
	{
		struct pl_this saved = pl_this;

		pl_enter(m, 0);
		m->vmap = vs;
		vs->ops->merge_or_add(vs, &vs->free, va);
		m->vmap = NULL;
		pl_this = saved;
	}
	return vs;
fail:
	vmap_space_destroy(vs);
	return NULL;
}

/* A live area's host-side page array, left by a caller that never freed it. */
static void free_live_pages_array(void *ctx, struct vmap_area *va)
{
	(void)ctx;
	if (va->vm && va->vm->pages) {
		free(va->vm->pages);
		va->vm->pages = NULL;
	}
}

/*
 * The machine goes with areas still live (never vfree'd, or waiting in a
 * kvfree_rcu or vfree_atomic queue): their page frames are the machine's
 * memory, but each page array is a host allocation.
 */
static void free_live_pages_arrays(struct vmap_space *vs)
{
	for (unsigned int i = 0; vs->vmap_nodes && i < vs->nr_vmap_nodes; i++) {
		struct list_head *pos;

		list_for_each(pos, &vs->vmap_nodes[i].busy.head) {
			struct vmap_area *va = list_entry(pos, struct vmap_area, list);

			if (va->flags & VMAP_BUMP_CHUNK)
				vmap_bump_for_each(vs, va, free_live_pages_array, NULL);
			else
				free_live_pages_array(NULL, va);
		}
	}
}

void vmap_space_destroy(struct vmap_space *vs)
{
	if (!vs)
		return;
	free_live_pages_arrays(vs);
	kvfree_rcu_destroy(vs);
	percpu_destroy(vs);
	vmap_blocks_destroy(vs);
	vmap_bump_destroy(vs);
	if (vs->pgt.pgd)
		pgtable_destroy(vs);
	if (vs->ops) {	/* the indexes; their areas go with the object cache */
		vs->ops->destroy(&vs->free);
		for (unsigned int i = 0; vs->vmap_nodes && i < vs->nr_vmap_nodes; i++) {
			vs->ops->destroy(&vs->vmap_nodes[i].busy);
			vs->ops->destroy(&vs->vmap_nodes[i].lazy);
		}
	}
	pl_objcache_destroy(vs->vmap_area_cachep);
	pl_objcache_destroy(vs->vm_struct_cachep);
	free(vs->ne_fit_preload);
	free(vs->vmap_nodes);
	if (vs->lazy_max)
		pthread_mutex_destroy(&vs->purge_lock);
	pl_fault_state_destroy(&vs->failslab);
	free(vs);
}
