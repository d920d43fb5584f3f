// SPDX-License-Identifier: MIT
/*
 * vmap_index_maple.c - seed 004's maple-tree implementation of the vmap_area
 * index (enum vmap_index VMAP_INDEX_MAPLE, design switch vmap_index=maple).
 *
 * The free space is indexed by what is in use, as the seed's "in-use range
 * index": one allocation-range maple tree (MT_FLAGS_ALLOC_RANGE) over
 * [0, ULONG_MAX] in which every free area is a NULL range and every maximal
 * run of space that is not free (busy, lazy, pooled, parked, or outside
 * [VMALLOC_START, VMALLOC_END)) is one entry: the free area that follows the
 * run (VMT_END after the last one):
 *
 *   [0, VMALLOC_START)  gap A   run   gap B   run ........ [VMALLOC_END, ~0]
 *      entry = A        NULL   = B    NULL   = VMT_END        (one run)
 *
 * The free vmap_area objects stay on the address-ordered list beside the
 * tree (seed 004 keeps "ordered list neighbour traversal where coalescing
 * semantics require it"), so:
 *  - the lowest fit is mas_empty_area() over [vstart, vend): one descent
 *    pruned by the tree's gap[]; the run before the gap names its area;
 *  - va_clip() is one store that moves a run's edge over the allocated
 *    range (an NE fit adds a run, then re-points the left run in place);
 *  - freeing stores NULL over the area: the tree merges it with the free
 *    ranges on either side; list neighbours give the area objects to merge.
 *
 * Busy sets: a plain maple tree per node mapping each area's range to it,
 * plus the address-ordered list (vmallocinfo, the checker). Lookup and
 * unlink on the free path are one mas_erase(). Lazy sets and the purge's
 * local merge lists are lists only (seed 004: the lazy queue is drained in
 * bulk and never looked up by address).
 *
 * Node memory: every store under a set's spinlock first tops up the set's
 * reserve of maple nodes with mas_preallocate() (GFP_NOWAIT, as the kernel
 * does under a spinlock), then stores without allocating; nodes left over
 * stay in the reserve for the next store instead of being freed (the
 * kernel's mas_store_prealloc() frees them). When preallocation fails:
 *  - an allocation (va_clip) fails cleanly, the tree unchanged;
 *  - a freed area is parked on the free set's retry queue (VMAP_UNINDEXED):
 *    still in use in the tree, so never handed out twice, and merged by the
 *    next free, search or purge;
 *  - a new busy area stays on its list, flagged VMAP_UNINDEXED, and is
 *    found by a list walk until a later insert re-publishes it;
 *  - a busy erase becomes an in-place store of VMT_HOLE over the area's
 *    exact slot (that never allocates); holes count as empty.
 *
 * Invariants (check_free / check_set): mt_validate(); free tree ranges
 * alternate run/gap, the gaps are exactly the free list's areas in order,
 * each run's entry is the free area after it (VMT_END after the last), no
 * hole; busy tree entries (holes aside) are exactly the list's indexed
 * areas, each stored over [va_start, va_end - 1]; nr_unindexed counts the
 * flagged ones.
 */
#include <stdio.h>
#include <stdlib.h>
#include "pagelab/maple_tree.h"
#include "vmap_area.h"

_Static_assert(sizeof(struct vmap_area) <= 48, "seed 004: struct vmap_area is at most 48 bytes");

/* Entries that are not areas (aligned like any pointer the tree stores). */
static const unsigned long vmt_end_token, vmt_hole_token;
#define VMT_END		((void *)&vmt_end_token)	/* the run after the last free area */
#define VMT_HOLE	((void *)&vmt_hole_token)	/* a busy area erased without nodes */

/* How many misaligned gaps the search looks past before asking for size + align - 1. */
#define VMT_ALIGN_TRIES	2
#define VMT_PROBE_MAX_ALIGN	(16 * PAGE_SIZE)

/**
 * struct vmap_mt - an rb_list's index (rl->priv) for the free and busy sets.
 * Everything here is protected by the rb_list's lock.
 * @mt:           the tree.
 * @reserve:      preallocated nodes not used by the last store (@alloc and
 *                @node_request only).
 * @kind:         VMAP_SET_FREE or VMAP_SET_BUSY.
 * @retry:        free: areas whose NULL store failed (VMAP_UNINDEXED).
 * @nr_unindexed: busy: areas on the list but not in the tree.
 * @hint_va, @hint_run: free: the area the last search returned and the
 *                start of the run before it; cleared by every change.
 */
struct vmap_mt {
	struct maple_tree mt;
	struct ma_state reserve;
	enum vmap_set_kind kind;
	struct list_head retry;
	unsigned long nr_unindexed;
	struct vmap_area *hint_va;
	unsigned long hint_run;
};

static inline struct vmap_mt *vmt(struct rb_list *rl)
{
	return rl->priv;
}

static inline struct vmap_area *list_va(struct list_head *pos)
{
	return list_entry(pos, struct vmap_area, list);
}

/* ---- stores with preallocated nodes ---------------------------------------- */

static void vmt_take_reserve(struct vmap_mt *t, struct ma_state *mas)
{
	mas->alloc = t->reserve.alloc;
	mas->node_request = t->reserve.node_request;
	t->reserve.alloc = NULL;
	t->reserve.node_request = 0;
}

static void vmt_keep_reserve(struct vmap_mt *t, struct ma_state *mas)
{
	t->reserve.alloc = mas->alloc;
	t->reserve.node_request = mas->node_request;
	mas->alloc = NULL;
	mas->node_request = 0;
}

/*
 * The most nodes mas_preallocate() asks for any store into a tree of height
 * @h (maple_write.c: 5 per level + 5). A reserve that holds as many needs no
 * top-up, so the walk that sizes one is skipped: that walk was a fifth of
 * the maple index's instructions (callgrind, full_fit_alloc_test).
 */
static inline unsigned long vmt_worst_nodes(struct vmap_mt *t)
{
	return 5UL * mt_height(&t->mt) + 5;
}

/*
 * vmt_prealloc() - make @mas (holding the reserve) hold what a store of
 * @entry over its range needs. Return: 0 or -ENOMEM (reserve gone).
 */
static inline int vmt_prealloc(struct vmap_mt *t, struct ma_state *mas, void *entry)
{
	unsigned long first = mas->index, last = mas->last;
	int ret;

	(void)entry;
	if (mas->node_request >= vmt_worst_nodes(t))
		return 0;
	/*
	 * Top the reserve up to the worst case at once, so that the next
	 * stores need no top-up: a NULL store at index 0 (the tree's left
	 * edge) is what mas_preallocate() sizes for the worst case.
	 */
	mas_set_range(mas, 0, 0);
	ret = mas_preallocate(mas, NULL, GFP_NOWAIT);
	mas_set_range(mas, first, last);
	return ret;
}

/*
 * vmt_store() - store @entry over [@first, @last]: mas_preallocate() tops
 * the reserve up to what the store needs, the store takes its nodes from
 * there. Return: 0, or -ENOMEM with the tree unchanged.
 */
static int vmt_store(struct vmap_mt *t, unsigned long first, unsigned long last, void *entry)
{
	MA_STATE(mas, &t->mt, first, last);
	int ret = 0;

	vmt_take_reserve(t, &mas);
	if (vmt_prealloc(t, &mas, entry))
		return -ENOMEM;		/* the reserve went with it */
	mas_store(&mas, entry);
	if (mas_is_err(&mas))
		ret = mas.error;
	vmt_keep_reserve(t, &mas);
	return ret;
}

/*
 * vmt_store_exact() - replace the entry of the one slot that is exactly
 * [@first, @last]: an in-place store, which needs no node (no top-up, so it
 * cannot fail for want of one).
 */
static void vmt_store_exact(struct vmap_mt *t, unsigned long first, unsigned long last,
			    void *entry)
{
	MA_STATE(mas, &t->mt, first, last);

	vmt_take_reserve(t, &mas);
	mas_store(&mas, entry);
	if (mas_is_err(&mas))
		pl_warn_ratelimited("vmalloc: maple: in-place store over [%#lx, %#lx] failed (%d)",
				    first, last, mas.error);
	vmt_keep_reserve(t, &mas);
}

/*
 * vmt_erase() - erase the range holding @addr, with preallocated nodes.
 * Return: the entry erased (its range in *@first..*@last), NULL if @addr
 * was in a NULL range; *@err is -ENOMEM (tree unchanged) if no nodes.
 */
static void *vmt_erase(struct vmap_mt *t, unsigned long addr, int *err)
{
	MA_STATE(mas, &t->mt, addr, addr);
	void *entry;

	*err = 0;
	vmt_take_reserve(t, &mas);
	if (vmt_prealloc(t, &mas, NULL)) {
		*err = -ENOMEM;
		return NULL;
	}
	entry = mas_erase(&mas);
	if (mas_is_err(&mas)) {
		*err = mas.error;
		entry = NULL;
	}
	vmt_keep_reserve(t, &mas);
	return entry;
}

/* ---- the free space --------------------------------------------------------- */

/* Start of the run that ends just below free area @va. */
static unsigned long vmt_run_before(struct vmap_mt *t, struct vmap_area *va)
{
	MA_STATE(mas, &t->mt, va->va_start - 1, va->va_start - 1);

	mas_walk(&mas);
	return mas.index;
}

/* The run that starts at @va's end: its entry, and its last index in *@last. */
static void *vmt_run_after(struct vmap_mt *t, struct vmap_area *va, unsigned long *last)
{
	MA_STATE(mas, &t->mt, va->va_end, va->va_end);
	void *entry = mas_walk(&mas);

	*last = mas.last;
	return entry;
}

/*
 * vmt_merge() - the free path proper: @va ([s, e), in use in the tree)
 * becomes free. Return: 0 with the area now covering it in *@out,
 * -EEXIST (some of it is free already, nothing changed), -ENOMEM (no
 * nodes, nothing changed).
 */
static int vmt_merge(struct vmap_space *vs, struct rb_list *fs, struct vmap_area *va,
		     struct vmap_area **out)
{
	struct vmap_mt *t = vmt(fs);
	unsigned long s = va->va_start, e = va->va_end, ms, me;
	struct vmap_area *prev = NULL, *next;
	MA_STATE(mas, &t->mt, s, s);
	void *nf;
	int ret;

	if (s < VMALLOC_START || e > VMALLOC_END || s >= e)
		return -EEXIST;
	nf = mas_walk(&mas);
	ms = mas.index;
	me = mas.last;
	if (!nf || nf == VMT_HOLE || me < e - 1)
		return -EEXIST;
	next = nf == VMT_END ? NULL : nf;
	if (s == ms) {
		/* Below the run is a free area: the one before @next on the list. */
		struct list_head *p = next ? next->list.prev : fs->head.prev;

		prev = p != &fs->head ? list_va(p) : NULL;
		if (!prev || prev->va_end != s)
			return -EEXIST;	/* not the tree the list describes */
	}
	if (e - 1 != me)
		next = NULL;		/* the run goes on above @va: nothing to merge there */

	t->hint_va = NULL;
	ret = vmt_store(t, s, e - 1, NULL);	/* merges with the free ranges around it */
	if (ret)
		return ret;
	va->flags &= ~VMAP_UNINDEXED;
	if (prev && next) {
		/*   | prev |<- va ->| next |   one area: prev grows over both */
		prev->va_end = next->va_end;
		list_del(&next->list);
		va_cache_free(vs, next);
		va_cache_free(vs, va);
		*out = prev;
	} else if (prev) {
		prev->va_end = e;
		va_cache_free(vs, va);
		*out = prev;
	} else if (next) {
		next->va_start = s;
		va_cache_free(vs, va);
		*out = next;
	} else {
		/*
		 * A new free area inside the run: the run's left part now ends
		 * below @va and names it. That part is exactly one slot: an
		 * in-place store, no node needed.
		 */
		vmt_store_exact(t, ms, s - 1, va);
		list_add_tail(&va->list, nf == VMT_END ? &fs->head : &((struct vmap_area *)nf)->list);
		*out = va;
	}
	return 0;
}

/* Merge parked areas while nodes can be had. Context: free.lock. */
static void vmt_retry_parked(struct vmap_space *vs, struct rb_list *fs)
{
	struct vmap_mt *t = vmt(fs);

	while (!list_empty(&t->retry)) {
		struct vmap_area *va = list_first_entry(&t->retry, struct vmap_area, list), *out;
		int ret;

		list_del(&va->list);
		ret = vmt_merge(vs, fs, va, &out);
		if (ret == -ENOMEM) {
			list_add(&va->list, &t->retry);
			return;
		}
		if (ret)	/* cannot happen unless the tree is corrupt: keep it parked */
			pl_warn_ratelimited("vmalloc: maple: parked area [%#lx, %#lx) overlaps a free one",
					    va->va_start, va->va_end);
		if (ret) {
			list_add_tail(&va->list, &t->retry);
			return;
		}
	}
}

static struct vmap_area *vmt_ops_merge_or_add(struct vmap_space *vs, struct rb_list *fs,
					 struct vmap_area *va)
{
	struct vmap_mt *t = vmt(fs);
	struct vmap_area *out = NULL;
	int ret;

	if (!t) {
		/* A purge's local list: merged when it goes into the free tree. */
		list_add_tail(&va->list, &fs->head);
		return va;
	}
	if (unlikely(!list_empty(&t->retry)))
		vmt_retry_parked(vs, fs);
	ret = vmt_merge(vs, fs, va, &out);
	if (likely(!ret))
		return out;
	if (ret == -ENOMEM) {
		/* Park it: still in use in the tree, merged by a later call. */
		va->flags |= VMAP_UNINDEXED;
		list_add_tail(&va->list, &t->retry);
		vm_count(PL_EV_VMAP_MT_PARKED, 1);
		return va;
	}
	pl_warn_ratelimited("vmalloc: freed area [%#lx, %#lx) overlaps a free area", va->va_start,
			    va->va_end);
	return NULL;
}

/*
 * vmt_ops_find_vmap_lowest_match() - mas_empty_area() for @size in [vstart,
 * vend); the gap found is checked against @align, and up to
 * VMT_ALIGN_TRIES (2) misaligned gaps are passed over before the search asks
 * for size + align - 1, which any gap of that length satisfies (the kernel
 * asks for that at once when align > PAGE_SIZE; the lowest fit is found
 * more often this way); past 16 pages of alignment it asks for that at once.
 */
static struct vmap_area *vmt_ops_find_vmap_lowest_match(struct rb_list *fs, unsigned long size,
						   unsigned long align, unsigned long vstart,
						   unsigned long vend, bool adjust)
{
	struct vmap_mt *t = vmt(fs);
	unsigned long length = size, lo = vstart;
	int tries = 0;

	/*
	 * Beyond 16 pages of alignment a gap of the bare size rarely holds an
	 * aligned fit: ask for size + align - 1 at once, as the kernel does
	 * (@adjust: not for a window exactly the size of the request).
	 */
	bool shortcut = adjust && align > VMT_PROBE_MAX_ALIGN && size + align - 1 > size;

	if (shortcut)
		length = size + align - 1;
	if (unlikely(!list_empty(&t->retry)))
		vmt_retry_parked(this_vmap(), fs);
	if (vend <= vstart)
		return NULL;
	for (;;) {
		MA_STATE(mas, &t->mt, lo, lo);
		unsigned long gs, ge, nva;
		struct vmap_area *va;

		if (mas_empty_area(&mas, lo, vend - 1, length)) {
			/*
			 * No gap of size + align - 1 in the window: an aligned
			 * fit may still end before vend. Probe every gap.
			 */
			if (!shortcut)
				return NULL;
			shortcut = false;
			length = size;
			lo = vstart;
			tries = INT_MIN;
			continue;
		}
		gs = mas.index;
		/*
		 * The run just below the gap names its free area, which knows
		 * the gap's extent: one walk. Only when the search was clipped
		 * at @lo inside a gap is the gap walked first.
		 */
		mas_set(&mas, gs - 1);
		va = mas_walk(&mas);
		if (!va) {
			mas_set(&mas, gs);
			mas_walk(&mas);
			va = mas_prev(&mas, 0);
		}
		if (!va || va == VMT_END || va == VMT_HOLE || va->va_start > gs ||
		    va->va_end <= gs)
			goto corrupt;
		gs = va->va_start;
		ge = va->va_end - 1;
		nva = gs > vstart ? gs : vstart;
		nva = (nva + align - 1) & ~(align - 1);
		if (nva >= gs && nva + size > nva && nva + size - 1 <= ge) {
			t->hint_va = va;
			t->hint_run = mas.index;
			return va;
		}
		if (ge >= vend - 1)
			return NULL;
		lo = ge + 1;
		if (length == size && ++tries >= VMT_ALIGN_TRIES) {
			length = size + align - 1;
			if (length < size)
				return NULL;
		}
	}
corrupt:
	pl_warn_ratelimited("vmalloc: maple: the free tree and the free list disagree");
	return NULL;
}

static int vmt_ops_va_clip(struct vmap_space *vs, struct rb_list *fs, struct vmap_area *va,
		      unsigned long nva_start, unsigned long size)
{
	struct vmap_mt *t = vmt(fs);
	unsigned long nva_end = nva_start + size, run, re;
	struct vmap_area *lva;
	void *nf;
	int ret;

	run = t->hint_va == va ? t->hint_run : vmt_run_before(t, va);
	t->hint_va = NULL;
	switch (classify_va_fit_type(va, nva_start, size)) {
	case FL_FIT_TYPE:
		/* run | va | run  ->  one run, naming the area after it */
		nf = vmt_run_after(t, va, &re);
		ret = vmt_store(t, run, re, nf);
		if (ret)
			return ret;
		list_del(&va->list);
		va_cache_free(vs, va);
		return 0;
	case LE_FIT_TYPE:
		/* the run before grows up over the new area; it still names va */
		ret = vmt_store(t, run, nva_end - 1, va);
		if (ret)
			return ret;
		va->va_start = nva_end;
		return 0;
	case RE_FIT_TYPE:
		/* the run after grows down over the new area */
		nf = vmt_run_after(t, va, &re);
		ret = vmt_store(t, nva_start, re, nf);
		if (ret)
			return ret;
		va->va_end = nva_start;
		return 0;
	case NE_FIT_TYPE:
		/* run | lva | new run (names va) | va | ... */
		lva = ne_fit_spare(vs);
		if (!lva)
			return -ENOMEM;
		ret = vmt_store(t, nva_start, nva_end - 1, va);
		if (ret) {
			va_cache_free(vs, lva);
			return ret;
		}
		lva->va_start = va->va_start;
		lva->va_end = nva_start;
		lva->flags = 0;
		va->va_start = nva_end;
		/* the run before is one slot: re-pointed in place */
		vmt_store_exact(t, run, lva->va_start - 1, lva);
		list_add_tail(&lva->list, &va->list);
		return 0;
	default:
		return -EINVAL;
	}
}

/* Merge two address-sorted NULL-terminated chains (linked through list.next). */
static struct list_head *vmt_sorted_merge(struct list_head *a, struct list_head *b)
{
	struct list_head head, *tail = &head;

	while (a && b) {
		if (list_va(a)->va_start <= list_va(b)->va_start) {
			tail->next = a;
			a = a->next;
		} else {
			tail->next = b;
			b = b->next;
		}
		tail = tail->next;
	}
	tail->next = a ? a : b;
	return head.next;
}

/*
 * vmt_ops_merge_list() - the purge's areas into the free tree: sorted by
 * address (a natural merge sort: lazy lists are mostly ascending already)
 * and coalesced where they touch, so that a run of areas freed together
 * costs one NULL store, not one per area. The rbtree merges them one by
 * one (merge_or_add); the result is the same free space.
 */
static void vmt_ops_merge_list(struct vmap_space *vs, struct rb_list *fs, struct list_head *head)
{
	struct list_head *runs[64], *pos, *chain = NULL;
	unsigned int nr_runs = 0;

	if (list_empty(head))
		return;
	/* cut the list into ascending runs, merging them like a binary counter */
	head->prev->next = NULL;
	pos = head->next;
	while (pos) {
		struct list_head *run = pos, *next;
		unsigned int k;

		while (pos->next && list_va(pos->next)->va_start >= list_va(pos)->va_start)
			pos = pos->next;
		next = pos->next;
		pos->next = NULL;
		for (k = 0; k < nr_runs && runs[k]; k++) {
			run = vmt_sorted_merge(runs[k], run);
			runs[k] = NULL;
		}
		if (k == nr_runs) {
			if (nr_runs == ARRAY_SIZE(runs)) {	/* cannot happen: 2^64 runs */
				run = vmt_sorted_merge(runs[--nr_runs], run);
				k = nr_runs;
			}
			nr_runs++;
		}
		runs[k] = run;
		pos = next;
	}
	for (unsigned int k = 0; k < nr_runs; k++)
		if (runs[k])
			chain = chain ? vmt_sorted_merge(runs[k], chain) : runs[k];
	INIT_LIST_HEAD(head);
	while (chain) {
		struct vmap_area *va = list_va(chain);

		chain = chain->next;
		/* absorb the areas that start where this one ends */
		while (chain && list_va(chain)->va_start == va->va_end) {
			struct vmap_area *next = list_va(chain);

			chain = chain->next;
			va->va_end = next->va_end;
			va_cache_free(vs, next);
		}
		vmt_ops_merge_or_add(vs, fs, va);
	}
}

static void vmt_ops_retry(struct vmap_space *vs, struct rb_list *fs)
{
	if (vmt(fs) && !list_empty(&vmt(fs)->retry))
		vmt_retry_parked(vs, fs);
}

static struct list_head *vmt_ops_parked(struct rb_list *fs)
{
	return vmt(fs) ? &vmt(fs)->retry : NULL;
}

/* ---- busy sets (and lazy ones: lists only) ----------------------------------- */

/* Store the busy areas a failed insert left unindexed, while nodes can be had. */
static void vmt_republish(struct rb_list *set, struct vmap_mt *t)
{
	struct list_head *pos;

	list_for_each(pos, &set->head) {
		struct vmap_area *va = list_va(pos);

		if (!(va->flags & VMAP_UNINDEXED))
			continue;
		if (vmt_store(t, va->va_start, va->va_end - 1, va))
			return;
		va->flags &= ~VMAP_UNINDEXED;
		if (!--t->nr_unindexed)
			return;
	}
}

static struct vmap_area *vmt_find_unindexed(struct rb_list *set, unsigned long addr)
{
	struct list_head *pos;

	list_for_each(pos, &set->head) {
		struct vmap_area *va = list_va(pos);

		if ((va->flags & VMAP_UNINDEXED) && va->va_start <= addr && addr < va->va_end)
			return va;
	}
	return NULL;
}

static int vmt_ops_set_insert(struct rb_list *set, struct vmap_area *va)
{
	struct vmap_mt *t = vmt(set);
	unsigned long s = va->va_start, e = va->va_end, last;
	struct list_head *pos;
	struct vmap_area *prev;
	MA_STATE(mas, NULL, s, s);
	void *entry;

	if (!t) {	/* lazy: freeing order */
		list_add_tail(&va->list, &set->head);
		return 0;
	}
	if (unlikely(t->nr_unindexed)) {
		vmt_republish(set, t);
		if (t->nr_unindexed && vmt_find_unindexed(set, s))
			return -EEXIST;
	}
	mas.tree = &t->mt;
	entry = mas_walk(&mas);
	if (entry && entry != VMT_HOLE)
		return -EEXIST;
	last = mas.last;
	if (unlikely(last < e - 1)) {
		/* holes next to NULL ranges: every range up to e - 1 must be empty */
		MA_STATE(m2, &t->mt, last + 1, last + 1);

		while (last < e - 1) {
			mas_set(&m2, last + 1);
			entry = mas_walk(&m2);
			if (entry && entry != VMT_HOLE)
				return -EEXIST;
			last = m2.last;
		}
	}
	/* The list position: after the busy area before it (maple-assisted). */
	do {
		prev = mas_prev(&mas, 0);
	} while (prev == (void *)VMT_HOLE);
	pos = prev ? &prev->list : &set->head;
	while (unlikely(t->nr_unindexed) && pos->next != &set->head &&
	       list_va(pos->next)->va_start < s)
		pos = pos->next;
	if (vmt_store(t, s, e - 1, va)) {
		va->flags |= VMAP_UNINDEXED;
		t->nr_unindexed++;
		vm_count(PL_EV_VMAP_MT_PARKED, 1);
	} else {
		va->flags &= ~VMAP_UNINDEXED;
	}
	list_add(&va->list, pos);
	return 0;
}

static struct vmap_area *vmt_ops_set_find(struct rb_list *set, unsigned long addr)
{
	struct vmap_mt *t = vmt(set);
	struct vmap_area *va;

	if (!t) {
		struct list_head *pos;

		list_for_each(pos, &set->head) {
			va = list_va(pos);
			if (va->va_start <= addr && addr < va->va_end)
				return va;
		}
		return NULL;
	}
	va = mtree_load(&t->mt, addr);
	if (va && va != (void *)VMT_HOLE)
		return va;
	return unlikely(t->nr_unindexed) ? vmt_find_unindexed(set, addr) : NULL;
}

/* Take @va (indexed, in the tree) out of the tree; a hole if no nodes. */
static void vmt_unindex(struct vmap_mt *t, struct vmap_area *va)
{
	void *old;
	int err;

	old = vmt_erase(t, va->va_start, &err);
	if (err) {
		vmt_store_exact(t, va->va_start, va->va_end - 1, VMT_HOLE);
		return;
	}
	if (old != va)
		pl_warn_ratelimited("vmalloc: maple: busy area [%#lx, %#lx) was not in its tree",
				    va->va_start, va->va_end);
}

static void vmt_ops_set_unlink(struct rb_list *set, struct vmap_area *va)
{
	struct vmap_mt *t = vmt(set);

	if (t && (va->flags & VMAP_UNINDEXED)) {
		va->flags &= ~VMAP_UNINDEXED;
		t->nr_unindexed--;
	} else if (t) {
		vmt_unindex(t, va);
	}
	list_del(&va->list);
}


/* One mas_erase() finds and unlinks; a refused area is stored back. */
static struct vmap_area *vmt_ops_set_find_unlink(struct rb_list *set, unsigned long addr,
						 unsigned long want)
{
	struct vmap_mt *t = vmt(set);
	struct vmap_area *va;
	int err;

	if (!t || unlikely(t->nr_unindexed)) {
		va = t ? vmt_find_unindexed(set, addr) : vmt_ops_set_find(set, addr);
		if (va) {
			if (va_unlink_refused(va, addr, want))
				return ERR_AREA;
			vmt_ops_set_unlink(set, va);
			return va;
		}
		if (!t)
			return NULL;
	}
	va = vmt_erase(t, addr, &err);
	if (unlikely(err)) {
		/* no nodes for an erase: look, then leave a hole */
		va = vmt_ops_set_find(set, addr);
		if (!va)
			return NULL;
		if (va_unlink_refused(va, addr, want))
			return ERR_AREA;
		vmt_ops_set_unlink(set, va);
		return va;
	}
	if (!va || va == (void *)VMT_HOLE)
		return NULL;	/* a hole erased is a hole cleaned up */
	if (unlikely(va_unlink_refused(va, addr, want))) {
		if (vmt_store(t, va->va_start, va->va_end - 1, va)) {
			va->flags |= VMAP_UNINDEXED;
			t->nr_unindexed++;
		}
		return ERR_AREA;
	}
	list_del(&va->list);
	return va;
}

/* ---- sets ----------------------------------------------------------------- */

static int vmt_ops_init(struct rb_list *rl, enum vmap_set_kind kind)
{
	struct vmap_mt *t;

	rl->priv = NULL;
	if (kind == VMAP_SET_LAZY || kind == VMAP_SET_LOCAL)
		return 0;
	t = pl_zalloc_lines(sizeof(*t));
	if (!t)
		return -ENOMEM;
	mt_init_flags(&t->mt, kind == VMAP_SET_FREE ? MT_FLAGS_ALLOC_RANGE : 0);
	t->reserve = (struct ma_state){ .tree = &t->mt, .status = ma_start };
	t->kind = kind;
	INIT_LIST_HEAD(&t->retry);
	/* The free space starts with nothing free: one run to the end. */
	if (kind == VMAP_SET_FREE && vmt_store(t, 0, ULONG_MAX, VMT_END)) {
		free(t);
		return -ENOMEM;
	}
	rl->priv = t;
	return 0;
}

static void vmt_ops_destroy(struct rb_list *rl)
{
	struct vmap_mt *t = vmt(rl);

	if (!t)
		return;
	mas_destroy(&t->reserve);
	__mt_destroy(&t->mt);
	free(t);
	rl->priv = NULL;
}

static void vmt_ops_reset(struct rb_list *rl)
{
	struct vmap_mt *t = vmt(rl);

	if (!t)
		return;		/* a list: the caller took its areas */
	__mt_destroy(&t->mt);
	t->nr_unindexed = 0;
	t->hint_va = NULL;
	INIT_LIST_HEAD(&t->retry);
}

/* ---- checks ------------------------------------------------------------------ */

static int vmt_ops_check_free(struct rb_list *fs, void (*report)(void *ctx, const char *msg), void *ctx)
{
	struct vmap_mt *t = vmt(fs);
	struct list_head *pos = fs->head.next;
	unsigned long index = 0;
	bool was_gap = true;
	char msg[200];
	int errors;

	if (!t) {
		report(ctx, "maple: the free set has no tree");
		return 1;
	}
	errors = mt_validate(&t->mt);
	if (errors)
		report(ctx, "maple: mt_validate() failed on the free tree");
	for (;;) {
		MA_STATE(mas, &t->mt, index, index);
		void *entry = mas_walk(&mas);
		struct vmap_area *want = pos != &fs->head ? list_va(pos) : NULL;

		if (!entry == was_gap) {
			snprintf(msg, sizeof(msg), "maple: free tree range [%#lx, %#lx] follows a "
				 "range of its kind", mas.index, mas.last);
			report(ctx, msg);
			return errors + 1;
		}
		was_gap = !entry;
		if (!entry) {
			if (!want || want->va_start != mas.index || want->va_end - 1 != mas.last ||
			    (want->flags & VMAP_UNINDEXED)) {
				snprintf(msg, sizeof(msg), "maple: free range [%#lx, %#lx] is not the "
					 "free list's next area", mas.index, mas.last);
				report(ctx, msg);
				return errors + 1;
			}
			pos = pos->next;
		} else if (entry != (want ? (void *)want : VMT_END)) {
			snprintf(msg, sizeof(msg), "maple: in-use run [%#lx, %#lx] names %s, not the "
				 "free area after it", mas.index, mas.last,
				 entry == VMT_HOLE ? "a hole" : entry == VMT_END ? "the end" : "an area");
			report(ctx, msg);
			return errors + 1;
		}
		if (mas.last == ULONG_MAX)
			break;
		index = mas.last + 1;
	}
	if (pos != &fs->head) {
		report(ctx, "maple: the free list holds areas the tree does not");
		errors++;
	}
	list_for_each(pos, &t->retry) {
		if (!(list_va(pos)->flags & VMAP_UNINDEXED)) {
			report(ctx, "maple: a parked free area is not flagged VMAP_UNINDEXED");
			errors++;
		}
	}
	return errors;
}

static int vmt_ops_check_set(struct rb_list *set, void (*report)(void *ctx, const char *msg), void *ctx)
{
	struct vmap_mt *t = vmt(set);
	struct list_head *pos;
	struct vmap_area *va, *prev = NULL;
	unsigned long unindexed = 0;
	char msg[200];
	int errors = 0;
	void *entry;

	list_for_each(pos, &set->head) {
		va = list_va(pos);
		if (va->va_start >= va->va_end ||
		    (t && prev && prev->va_end > va->va_start)) {
			snprintf(msg, sizeof(msg), "maple: set area [%#lx, %#lx) empty or out of "
				 "order", va->va_start, va->va_end);
			report(ctx, msg);
			errors++;
		}
		if (va->flags & VMAP_UNINDEXED)
			unindexed++;
		prev = va;
	}
	if (!t) {
		if (unindexed) {
			report(ctx, "maple: a lazy area is flagged VMAP_UNINDEXED");
			errors++;
		}
		return errors;
	}
	if (unindexed != t->nr_unindexed) {
		snprintf(msg, sizeof(msg), "maple: %lu unindexed busy areas, counted %lu", unindexed,
			 t->nr_unindexed);
		report(ctx, msg);
		errors++;
	}
	if (mt_validate(&t->mt)) {
		report(ctx, "maple: mt_validate() failed on a busy tree");
		errors++;
	}
	{
		MA_STATE(mas, &t->mt, 0, 0);

		pos = set->head.next;
		mas_for_each(&mas, entry, ULONG_MAX) {
			if (entry == VMT_HOLE)
				continue;
			while (pos != &set->head && (list_va(pos)->flags & VMAP_UNINDEXED))
				pos = pos->next;
			va = pos != &set->head ? list_va(pos) : NULL;
			if (va != entry || mas.index != va->va_start || mas.last != va->va_end - 1) {
				snprintf(msg, sizeof(msg), "maple: busy tree range [%#lx, %#lx] is not "
					 "the list's next area", mas.index, mas.last);
				report(ctx, msg);
				return errors + 1;
			}
			pos = pos->next;
		}
		while (pos != &set->head && (list_va(pos)->flags & VMAP_UNINDEXED))
			pos = pos->next;
		if (pos != &set->head) {
			report(ctx, "maple: the busy list holds areas the tree does not");
			errors++;
		}
	}
	return errors;
}

const struct vmap_index_ops vmap_index_maple_ops = {
	.name = "maple",
	.find_vmap_lowest_match = vmt_ops_find_vmap_lowest_match,
	.va_clip = vmt_ops_va_clip,
	.merge_or_add = vmt_ops_merge_or_add,
	.insert = vmt_ops_set_insert,
	.find = vmt_ops_set_find,
	.unlink = vmt_ops_set_unlink,
	.find_unlink = vmt_ops_set_find_unlink,
	.init = vmt_ops_init,
	.destroy = vmt_ops_destroy,
	.reset = vmt_ops_reset,
	.retry = vmt_ops_retry,
	.merge_list = vmt_ops_merge_list,
	.parked = vmt_ops_parked,
	.va_objsize = sizeof(struct vmap_area),
	.check_free = vmt_ops_check_free,
	.check_set = vmt_ops_check_set,
};
