// SPDX-License-Identifier: MIT
/*
 * maple_tree.c - reads, gap searches and the whole-tree API of the maple
 * tree (see include/pagelab/maple_tree.h for the node formats and the
 * invariants; the write paths below live in maple_write.c).
 *
 * Reads descend from the root: in each node, the first pivot >= index names
 * the slot. No parent pointer is followed on the read side, so an RCU
 * reader that holds a node sees a consistent (if old) snapshot below it;
 * iteration that leaves a leaf walks again from the root.
 *
 * Writes (mt_wr_store, maple_write.c) take one of these paths:
 *
 *  1. exact fit: [index, last] is exactly one slot's range - the entry is
 *     replaced with one pointer store (safe for RCU readers);
 *  2. leaf store: the new content of the one leaf holding [index, last] still
 *     fits it, between its minimum fill and 16 slots - outside RCU mode the
 *     slots are shifted in place (wr_leaf_inplace, also taking path 1), and
 *     the leaf's largest gap is derived from its old one; in RCU mode a copy
 *     is published with one pointer store;
 *  2b. outside RCU mode, also in place: a store across two adjacent leaves
 *     rewrites both and moves the pivot between them (wr_span_inplace); a
 *     leaf one or two slots too full shares with a sibling that has room
 *     (wr_push_inplace, the kernel's mas_push_data()) or splits into one
 *     new leaf opened beside it in the parent (wr_split_inplace);
 *  3. the general path, for splits, underfull nodes and stores that span
 *     leaves, and for all of those in RCU mode. The walk keeps two paths,
 *     one to index (left spine) and one to last (right spine); the paths
 *     above walk only the left one when the store stays in one leaf. Bottom
 *     up, each level's new content - what the left spine node keeps left of
 *     the store, the nodes built for the level below, what the right spine
 *     node keeps right of it - is gathered in a "big node" and cut into 1..3
 *     new nodes:
 *
 *         level k:   [ l kept | mid(k+1) ... | r kept ]   -> 1..3 new nodes
 *
 *     Everything strictly between the spines is dropped whole. A new node
 *     below the minimum fill is merged with a neighbour in the level above
 *     (recursively, since its own children may then need a neighbour too).
 *     Once a level's result is one full-enough node replacing one node, it
 *     is published with one pointer store; if the root itself was rebuilt,
 *     the new root is published (the tree grows or shrinks by a level).
 *     Nothing reachable is changed before that store, so an allocation
 *     failure simply frees the new nodes; after it, children of new nodes
 *     get their parent words and the replaced nodes are retired (freed now,
 *     or after a grace period in RCU mode).
 *
 * Storing NULL first widens [index, last] over NULL neighbours (even in
 * other leaves), which keeps "no two adjacent NULL ranges" and makes every
 * free run exactly one slot, so gap[] is exact and mas_empty_area() is one
 * descent that only backtracks at the edges of its [min, max] window.
 *
 * Virtual time (vtime.h): every node a read, a gap search or a write's walk
 * enters is one VT_P_MT_NODE step on the node's first line; every node a
 * store fills or rewrites in place, and every gap[] it updates, is one
 * more, written. vmalloc's index is the tree's only user under vtime.
 */
#if !defined(__SANITIZE_THREAD__)
#define _LGPL_SOURCE	/* inline read-side primitives (TSan: the library's, uninstrumented) */
#endif
#include <errno.h>
#include <string.h>
#include "pagelab/rcu.h"
#include "maple_internal.h"

/* ---- reading ------------------------------------------------------------------ */

/*
 * Descend from @root to the leaf holding @index. Leaves @mas on that leaf
 * (node, node range in min/max, offset). @vt: virtual time may be on
 * (mt_vt_on()). Return: the entry.
 */
static __always_inline void *mas_descend_t(struct ma_state *mas, struct maple_enode *enode,
					   unsigned long index, const bool vt)
{
	unsigned long min = 0, max = ULONG_MAX;
	unsigned int depth = 0;

	for (;;) {
		struct maple_node *node = mte_to_node(enode);
		enum maple_type type = mte_node_type(enode);
		unsigned long *piv = ma_pivots(node, type);
		unsigned int np = mt_pivots[type];
		unsigned int off = ma_offset(piv, np, index);
		void *entry = ma_load_slot(&ma_slots(node, type)[off]);

		mt_vt_step(vt, node, false);

		if (ma_is_leaf(type)) {
			mas->node = enode;
			mas->min = min;
			mas->max = max;
			mas->offset = (unsigned char)off;
			mas->depth = (unsigned char)depth;
			mas->status = ma_active;
			return entry;
		}
		ma_prefetch_node(entry);
		ma_slot_range(piv, np, off, min, max, &min, &max);
		enode = entry;
		depth++;
	}
}

/* Walk to @index; Return: the entry, with @mas on its leaf, or NULL and ma_none. */
static void *mas_start_walk(struct ma_state *mas, unsigned long index)
{
	struct maple_enode *root = ma_load_slot(&mas->tree->ma_root);

	if (!root) {
		mas->status = ma_none;
		mas->node = NULL;
		mas->min = 0;
		mas->max = ULONG_MAX;
		return NULL;
	}
	if (mt_vt_on())
		return mas_descend_t(mas, root, index, true);
	return mas_descend_t(mas, root, index, false);
}

/* Range of the slot @mas is on. */
static void mas_cur_range(const struct ma_state *mas, unsigned long *smin, unsigned long *smax)
{
	struct maple_node *node = mte_to_node(mas->node);

	ma_slot_range(node->mr64.pivot, MAPLE_RANGE64_SLOTS - 1, mas->offset, mas->min, mas->max,
		      smin, smax);
}

static void *mas_cur_entry(const struct ma_state *mas)
{
	return ma_load_slot(&mte_to_node(mas->node)->mr64.slot[mas->offset]);
}

void *mtree_load(struct maple_tree *mt, unsigned long index)
{
	MA_STATE(mas, mt, index, index);
	bool rcu = mt_in_rcu(mt);
	void *entry;

	if (rcu)
		pl_rcu_read_lock();
	entry = mas_start_walk(&mas, index);
	if (rcu)
		pl_rcu_read_unlock();
	return entry;
}

void *mas_walk(struct ma_state *mas)
{
	void *entry = mas_start_walk(mas, mas->index);

	if (mas->status == ma_none) {
		mas->index = 0;
		mas->last = ULONG_MAX;
		return NULL;
	}
	mas_cur_range(mas, &mas->index, &mas->last);
	return entry;
}

/*
 * Step @mas to the next slot (re-walking from the root past the end of the
 * leaf). Return: false when there is none (@mas is then ma_overflow).
 */
static bool mas_step_next(struct ma_state *mas)
{
	struct maple_node *node = mte_to_node(mas->node);
	unsigned long next;

	if (!ma_is_last(node->mr64.pivot, MAPLE_RANGE64_SLOTS - 1, mas->offset)) {
		mas->offset++;
		return true;
	}
	if (mas->max == ULONG_MAX) {
		mas->status = ma_overflow;
		return false;
	}
	next = mas->max + 1;
	mas_start_walk(mas, next);
	return mas->status == ma_active;
}

static bool mas_step_prev(struct ma_state *mas)
{
	if (mas->offset) {
		mas->offset--;
		return true;
	}
	if (mas->min == 0) {
		mas->status = ma_underflow;
		return false;
	}
	mas_start_walk(mas, mas->min - 1);
	return mas->status == ma_active;
}

/*
 * Find the first entry from the slot @mas is on (included) up to @max,
 * reporting nothing below @floor: after a re-walk into a changed tree (RCU),
 * the next slot may start before the end of the last range reported.
 */
static void *mas_scan_next(struct ma_state *mas, unsigned long max, unsigned long floor)
{
	for (;;) {
		unsigned long smin, smax;
		void *entry;

		mas_cur_range(mas, &smin, &smax);
		if (smin > max) {
			mas->status = ma_overflow;
			return NULL;
		}
		entry = mas_cur_entry(mas);
		if (entry && smax >= floor) {
			mas->index = max(smin, floor);
			mas->last = smax;
			return entry;
		}
		if (!mas_step_next(mas))
			return NULL;
	}
}

void *mas_find(struct ma_state *mas, unsigned long max)
{
	unsigned long floor = mas->index;

	switch (mas->status) {
	case ma_active:
		if (mas->last == ULONG_MAX || !mas_step_next(mas))
			return NULL;
		floor = mas->last + 1;
		break;
	case ma_none:
	case ma_overflow:
	case ma_underflow:
	case ma_error:
		return NULL;
	default:
		if (mas->index > max)
			return NULL;
		mas_start_walk(mas, mas->index);
		if (mas->status != ma_active)
			return NULL;
		break;
	}
	return mas_scan_next(mas, max, floor);
}

void *mas_next(struct ma_state *mas, unsigned long max)
{
	unsigned long floor;

	if (mas->status != ma_active) {
		if (mas->status == ma_none || mas->status == ma_overflow || mas->status == ma_error)
			return NULL;
		mas_start_walk(mas, mas->index);
		if (mas->status != ma_active)
			return NULL;
		mas_cur_range(mas, &mas->index, &mas->last);
	}
	if (mas->last == ULONG_MAX || !mas_step_next(mas))
		return NULL;
	floor = mas->last + 1;
	return mas_scan_next(mas, max, floor);
}

void *mas_prev(struct ma_state *mas, unsigned long min)
{
	if (mas->status != ma_active) {
		if (mas->status == ma_none || mas->status == ma_underflow || mas->status == ma_error)
			return NULL;
		mas_start_walk(mas, mas->index);
		if (mas->status != ma_active)
			return NULL;
	}
	for (;;) {
		unsigned long smin, smax;
		void *entry;

		if (!mas_step_prev(mas))
			return NULL;
		mas_cur_range(mas, &smin, &smax);
		if (smax < min) {
			mas->status = ma_underflow;
			return NULL;
		}
		entry = mas_cur_entry(mas);
		if (entry) {
			mas->index = smin;
			mas->last = smax;
			return entry;
		}
	}
}

void *mt_find(struct maple_tree *mt, unsigned long *index, unsigned long max)
{
	MA_STATE(mas, mt, *index, *index);
	bool rcu = mt_in_rcu(mt);
	void *entry;

	if (*index > max)
		return NULL;
	if (rcu)
		pl_rcu_read_lock();
	entry = mas_find(&mas, max);
	if (entry)
		*index = mas.last + 1;	/* wraps to 0 after ULONG_MAX: mt_find_after stops */
	if (rcu)
		pl_rcu_read_unlock();
	return entry;
}

void *mt_find_after(struct maple_tree *mt, unsigned long *index, unsigned long max)
{
	if (!*index)
		return NULL;
	return mt_find(mt, index, max);
}

/* ---- gap search ------------------------------------------------------------------ */

struct awalk_frame {
	struct maple_enode *enode;
	unsigned long min, max;
	int off;
};

/*
 * Depth-first search for a NULL range of @size inside [@lo, @hi], lowest
 * first (or highest with @rev), pruned by gap[] in allocation trees.
 * Return: true with the NULL slot's clipped range in *@fmin..*@fmax.
 */
static bool mas_awalk(struct maple_enode *root, unsigned long lo, unsigned long hi,
		      unsigned long size, bool rev, unsigned long *fmin, unsigned long *fmax)
{
	const bool vt = mt_vt_on();
	struct awalk_frame st[MAPLE_HEIGHT_MAX + 1];
	int sp = 0;

	st[0].enode = root;
	st[0].min = 0;
	st[0].max = ULONG_MAX;
	st[0].off = -1;
	while (sp >= 0) {
		struct awalk_frame *f = &st[sp];
		struct maple_node *node = mte_to_node(f->enode);
		enum maple_type type = mte_node_type(f->enode);
		unsigned long *piv = ma_pivots(node, type);
		void **slots = ma_slots(node, type);
		unsigned long *gaps = ma_gaps(node, type);
		unsigned int np = mt_pivots[type];
		int ns = mt_slots[type], step = rev ? -1 : 1;
		bool leaf = ma_is_leaf(type);
		int off = f->off;
		bool descended = false;

		mt_vt_step(vt, node, false);

		/* First visit: start at the slot holding lo (hi when reversed). */
		if (off < 0)
			off = (int)ma_offset(piv, np, rev ? hi : lo);
		else
			off += step;
		for (; off >= 0 && off < ns; off += step) {
			unsigned long smin, smax, cmin, cmax;
			void *entry = NULL;

			if (off && piv[off - 1] == ULONG_MAX)
				break;		/* past the last used slot (forward only) */
			/* Cheap rejections first: a gap too small, a busy slot. */
			if (gaps) {
				if (ma_load_gap(&gaps[off]) < size)
					continue;
			} else if (leaf) {
				entry = ma_load_slot(&slots[off]);
				if (entry)
					continue;
			}
			ma_slot_range(piv, np, (unsigned int)off, f->min, f->max, &smin, &smax);
			if (rev ? smax < lo : smin > hi)
				break;
			cmin = max(smin, lo);
			cmax = min(smax, hi);
			if (range_len(cmin, cmax) < size)
				continue;
			if (leaf) {
				*fmin = cmin;
				*fmax = cmax;
				return true;
			}
			f->off = off;
			sp++;
			st[sp].enode = ma_load_slot(&slots[off]);
			st[sp].min = smin;
			st[sp].max = smax;
			st[sp].off = -1;
			descended = true;
			break;
		}
		if (!descended)
			sp--;
	}
	return false;
}

/*
 * Take candidate slots from @mask (bit 0 is slot *@off, of a node covering
 * [@min, @max]) until one whose range, clipped to [@lo, @hi], holds @size.
 * Unused slots may be candidates (NULL slots, zero gaps): the first slot
 * past the last used one ends the search, as does one starting past @hi.
 * Return: true with *@off and the slot's unclipped range in *@smin, *@smax.
 */
static __attribute__((always_inline)) inline bool
awalk_pick(unsigned int mask, int *off, const unsigned long *piv, unsigned int np,
	   unsigned long min, unsigned long max, unsigned long lo, unsigned long hi,
	   unsigned long size, unsigned long *smin, unsigned long *smax)
{
	int o = *off;

	while (mask) {
		unsigned int z = (unsigned int)__builtin_ctz(mask);

		o += (int)z;
		mask >>= z;
		mask >>= 1;
		if (o && piv[o - 1] == ULONG_MAX)
			return false;	/* past the last used slot */
		ma_slot_range(piv, np, (unsigned int)o, min, max, smin, smax);
		if (*smin > hi)
			return false;
		if (range_len(max(*smin, lo), min(*smax, hi)) >= size) {
			*off = o;
			return true;
		}
		o++;
	}
	return false;
}

/*
 * mas_awalk() for the common case, lowest first in an allocation tree: the
 * same depth-first search with the node types known, so each level is a
 * tight scan - of gap[] in internal nodes, of the slots for a NULL one in
 * leaves - and ranges are computed only for the candidates. @vt: virtual
 * time may be on (mt_vt_on()). Return: as mas_awalk().
 */
static __always_inline bool mas_awalk_fwd_t(struct maple_enode *root, unsigned long lo,
					    unsigned long hi, unsigned long size,
					    unsigned long *fmin, unsigned long *fmax, const bool vt)
{
	struct awalk_frame st[MAPLE_HEIGHT_MAX + 1];
	struct maple_enode *enode = root;
	unsigned long min = 0, max = ULONG_MAX;
	int sp = 0, off = -1;

	for (;;) {
		struct maple_node *node = mte_to_node(enode);
		unsigned long smin, smax;

		mt_vt_step(vt, node, false);
		if (mte_node_type(enode) == maple_arange_64) {
			const unsigned int np = MAPLE_ARANGE64_SLOTS - 1;
			unsigned long *piv = node->ma64.pivot, *gaps = node->ma64.gap;
			unsigned int mask = 0;

			/* Candidates as a bit mask: no branch per slot to mispredict. */
#pragma GCC unroll 10
			for (unsigned int i = 0; i < MAPLE_ARANGE64_SLOTS; i++)
				mask |= (unsigned int)(ma_load_gap(&gaps[i]) >= size) << i;
			off = off < 0 ? (min >= lo ? 0 : (int)ma_offset(piv, np, lo)) : off + 1;
			if (awalk_pick(mask >> off, &off, piv, np, min, max, lo, hi, size, &smin,
				       &smax)) {
				st[sp].enode = enode;
				st[sp].min = min;
				st[sp].max = max;
				st[sp].off = off;
				sp++;
				enode = ma_load_slot(&node->ma64.slot[off]);
				ma_prefetch_node(enode);
				min = smin;
				max = smax;
				off = -1;
				continue;
			}
		} else {
			const unsigned int np = MAPLE_RANGE64_SLOTS - 1;
			unsigned long *piv = node->mr64.pivot;
			void **slots = node->mr64.slot;
			/* Leaves are only entered from above: always a first visit. */
			unsigned int mask = ma_leaf_null_mask(slots);

			off = min >= lo ? 0 : (int)ma_offset(piv, np, lo);
			if (awalk_pick(mask >> off, &off, piv, np, min, max, lo, hi, size, &smin,
				       &smax)) {
				*fmin = max(smin, lo);
				*fmax = min(smax, hi);
				return true;
			}
		}
		/* Nothing here: back to the parent's next slot. */
		if (!sp)
			return false;
		sp--;
		enode = st[sp].enode;
		min = st[sp].min;
		max = st[sp].max;
		off = st[sp].off;
	}
}

/* mas_awalk_fwd_t() without virtual time (the common case) and with it. */
static bool mas_awalk_fwd(struct maple_enode *root, unsigned long lo, unsigned long hi,
			  unsigned long size, unsigned long *fmin, unsigned long *fmax)
{
	return mas_awalk_fwd_t(root, lo, hi, size, fmin, fmax, false);
}

static __attribute__((noinline)) bool
mas_awalk_fwd_vt(struct maple_enode *root, unsigned long lo, unsigned long hi, unsigned long size,
		 unsigned long *fmin, unsigned long *fmax)
{
	return mas_awalk_fwd_t(root, lo, hi, size, fmin, fmax, true);
}

static int mas_empty_area_common(struct ma_state *mas, unsigned long min, unsigned long max,
				 unsigned long size, bool rev)
{
	struct maple_enode *root;
	unsigned long fmin, fmax;

	if (min > max || size == 0 || max - min < size - 1)
		return -EINVAL;
	root = ma_load_slot(&mas->tree->ma_root);
	if (!root) {
		fmin = min;
		fmax = max;
	} else if (!(!rev && mt_is_alloc(mas->tree) ?
		     (unlikely(mt_vt_on()) ? mas_awalk_fwd_vt(root, min, max, size, &fmin, &fmax) :
		      mas_awalk_fwd(root, min, max, size, &fmin, &fmax)) :
		     mas_awalk(root, min, max, size, rev, &fmin, &fmax))) {
		mas->status = ma_none;
		return -EBUSY;
	}
	if (rev) {
		mas->last = fmax;
		mas->index = fmax - size + 1;
	} else {
		mas->index = fmin;
		mas->last = fmin + size - 1;
	}
	mas->status = ma_start;
	mas->node = NULL;
	return 0;
}

int mas_empty_area(struct ma_state *mas, unsigned long min, unsigned long max, unsigned long size)
{
	return mas_empty_area_common(mas, min, max, size, false);
}

int mas_empty_area_rev(struct ma_state *mas, unsigned long min, unsigned long max,
		       unsigned long size)
{
	return mas_empty_area_common(mas, min, max, size, true);
}

/* ---- the tree ------------------------------------------------------------------------- */

void mt_init_flags(struct maple_tree *mt, unsigned int flags)
{
	pl_spin_init(&mt->ma_lock, false);
	mt->ma_flags = flags & (MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU);
	mt->ma_root = NULL;
}

void mtree_destroy(struct maple_tree *mt)
{
	mtree_lock(mt);
	__mt_destroy(mt);
	mtree_unlock(mt);
}

void mt_set_in_rcu(struct maple_tree *mt)
{
	mtree_lock(mt);
	WRITE_ONCE(mt->ma_flags, mt->ma_flags | MT_FLAGS_USE_RCU);
	mtree_unlock(mt);
}

void mt_clear_in_rcu(struct maple_tree *mt)
{
	mtree_lock(mt);
	WRITE_ONCE(mt->ma_flags, mt->ma_flags & ~MT_FLAGS_USE_RCU);
	mtree_unlock(mt);
}

int mtree_store_range(struct maple_tree *mt, unsigned long first, unsigned long last, void *entry,
		      gfp_t gfp)
{
	MA_STATE(mas, mt, first, last);
	int ret;

	if (first > last)
		return -EINVAL;
	mtree_lock(mt);
	ret = mas_store_gfp(&mas, entry, gfp);
	mtree_unlock(mt);
	return ret;
}

int mtree_insert_range(struct maple_tree *mt, unsigned long first, unsigned long last, void *entry,
		       gfp_t gfp)
{
	MA_STATE(mas, mt, first, last);
	int ret;

	if (first > last || !entry)
		return -EINVAL;
	mtree_lock(mt);
	if (mas_find(&mas, last)) {
		ret = -EEXIST;
	} else {
		mas_set_range(&mas, first, last);
		ret = mas_store_gfp(&mas, entry, gfp);
	}
	mtree_unlock(mt);
	return ret;
}

static int mtree_alloc_common(struct maple_tree *mt, unsigned long *startp, void *entry,
			      unsigned long size, unsigned long min, unsigned long max, gfp_t gfp,
			      bool rev)
{
	MA_STATE(mas, mt, 0, 0);
	int ret;

	if (!mt_is_alloc(mt) || !entry)
		return -EINVAL;
	mtree_lock(mt);
	ret = rev ? mas_empty_area_rev(&mas, min, max, size) : mas_empty_area(&mas, min, max, size);
	if (!ret) {
		ret = mas_store_gfp(&mas, entry, gfp);
		if (!ret)
			*startp = mas.index;
	}
	mtree_unlock(mt);
	return ret;
}

int mtree_alloc_range(struct maple_tree *mt, unsigned long *startp, void *entry,
		      unsigned long size, unsigned long min, unsigned long max, gfp_t gfp)
{
	return mtree_alloc_common(mt, startp, entry, size, min, max, gfp, false);
}

int mtree_alloc_rrange(struct maple_tree *mt, unsigned long *startp, void *entry,
		       unsigned long size, unsigned long min, unsigned long max, gfp_t gfp)
{
	return mtree_alloc_common(mt, startp, entry, size, min, max, gfp, true);
}
