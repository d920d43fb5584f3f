// SPDX-License-Identifier: MIT
/*
 * maple_tree.c - reads, writes and gap searches of the maple tree (see
 * include/pagelab/maple_tree.h for the node formats and the invariants).
 *
 * Reads descend from the root: in each node, the first pivot >= index names
 * the slot. No parent pointer is followed on the read side, so an RCU
 * reader that holds a node sees a consistent (if old) snapshot below it;
 * iteration that leaves a leaf walks again from the root.
 *
 * Writes (mt_wr_store) have three paths:
 *
 *  1. exact fit: [index, last] is exactly one slot's range - the entry is
 *     replaced with one pointer store (safe for RCU readers);
 *  2. leaf store: the new content of the one leaf holding [index, last] still
 *     fits it, between its minimum fill and 16 slots - the leaf is rewritten
 *     in place, or, in RCU mode, a copy is published with one pointer store;
 *  3. the general path, for splits, underfull nodes and stores that span
 *     leaves. The walk keeps two paths, one to index (left spine) and one to
 *     last (right spine). Bottom up, each level's new content - what the
 *     left spine node keeps left of the store, the nodes built for the level
 *     below, what the right spine node keeps right of it - is gathered in a
 *     "big node" and cut into 1..3 new nodes:
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
 */
#if !defined(__SANITIZE_THREAD__)
#define _LGPL_SOURCE	/* inline read-side primitives (TSan: the library's, uninstrumented) */
#endif
#include <errno.h>
#include <string.h>
#include "pagelab/rcu.h"
#include "maple_internal.h"

/* ---- reading ------------------------------------------------------------------ */

static inline unsigned int ma_offset(const unsigned long *piv, unsigned int np, unsigned long index)
{
	unsigned int off = 0;

	while (off < np && piv[off] < index)
		off++;
	return off;
}

/* Range of slot @off of a node covering [min, max]. */
static inline void ma_slot_range(const unsigned long *piv, unsigned int np, unsigned int off,
				 unsigned long min, unsigned long max,
				 unsigned long *smin, unsigned long *smax)
{
	*smin = off ? piv[off - 1] + 1 : min;
	*smax = (off < np && piv[off] != ULONG_MAX) ? piv[off] : max;
}

static inline bool ma_is_last(const unsigned long *piv, unsigned int np, unsigned int off)
{
	return off >= np || piv[off] == ULONG_MAX;
}

/*
 * Descend from @root to the leaf holding @index. Leaves @mas on that leaf
 * (node, node range in min/max, offset). Return: the entry.
 */
static void *mas_descend(struct ma_state *mas, struct maple_enode *enode, unsigned long index)
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

		if (ma_is_leaf(type)) {
			mas->node = enode;
			mas->min = min;
			mas->max = max;
			mas->offset = (unsigned char)off;
			mas->depth = (unsigned char)depth;
			mas->status = ma_active;
			return entry;
		}
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
	return mas_descend(mas, root, index);
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

/* Length of [lo, hi] (hi >= lo), saturating: [0, ULONG_MAX] counts ULONG_MAX. */
static inline unsigned long range_len(unsigned long lo, unsigned long hi)
{
	unsigned long n = hi - lo + 1;

	return n ? n : ULONG_MAX;
}

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
	} else if (!mas_awalk(root, min, max, size, rev, &fmin, &fmax)) {
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

/* ---- writing: state ------------------------------------------------------------------ */

#define MA_STATE_PREALLOC 1	/* @mas holds nodes from mas_preallocate() */

#define MT_BIG		64	/* entries a big node can hold */
#define MT_WR_NODES	192	/* new or replaced nodes one store may touch */
#define MT_WR_SUBTREES	(32 * MAPLE_HEIGHT_MAX)

/* A node's worth of content, possibly more than fits a node. */
struct mt_big {
	unsigned int n;
	unsigned long min;		/* first entry's minimum */
	unsigned long piv[MT_BIG];	/* each entry's maximum */
	void *slot[MT_BIG];
	unsigned long gap[MT_BIG];	/* internal: the child's largest gap */
	bool under[MT_BIG];		/* internal: a new child below the minimum fill */
};

struct mt_wr {
	struct maple_tree *mt;
	struct ma_state *mas;		/* preallocated nodes, may be NULL */
	enum maple_type itype;		/* type of internal nodes */
	bool alloc;			/* MT_FLAGS_ALLOC_RANGE */
	bool failed;
	bool warned;
	bool erase;			/* erase the range holding index (one walk) */
	unsigned long erased_min, erased_max;
	unsigned int height;
	/* The two spines, depth 0 (root) .. height - 1 (leaf). */
	struct maple_enode *l[MAPLE_HEIGHT_MAX], *r[MAPLE_HEIGHT_MAX];
	unsigned char loff[MAPLE_HEIGHT_MAX], roff[MAPLE_HEIGHT_MAX];
	unsigned long lmin[MAPLE_HEIGHT_MAX], lmax[MAPLE_HEIGHT_MAX];
	unsigned long rmin[MAPLE_HEIGHT_MAX], rmax[MAPLE_HEIGHT_MAX];
	unsigned int lca;		/* first depth where the spines part */
	unsigned int nr_new, nr_old, nr_sub;
	struct maple_node *new_nodes[MT_WR_NODES];
	unsigned char new_type[MT_WR_NODES];
	struct maple_node *old_nodes[MT_WR_NODES];
	struct maple_enode *subtrees[MT_WR_SUBTREES];
	struct mt_retire retire;
};

static struct maple_node *wr_alloc(struct mt_wr *wr, enum maple_type type)
{
	struct ma_state *mas = wr->mas;
	struct maple_node *node;

	if (wr->nr_new == MT_WR_NODES) {
		wr->failed = true;
		return NULL;
	}
	if (mas && mas->alloc) {
		node = mas->alloc;
		mas->alloc = *(struct maple_node **)node;
		mas->node_request--;
		memset(node, 0, sizeof(*node));
	} else {
		node = mt_node_alloc();
		if (!node) {
			wr->failed = true;
			return NULL;
		}
	}
	wr->new_type[wr->nr_new] = (unsigned char)type;
	wr->new_nodes[wr->nr_new++] = node;
	return node;
}

/* Nodes built and then merged away go back to @mas for the next wr_alloc(). */
static void wr_recycle(struct mt_wr *wr, struct maple_node *node)
{
	struct ma_state *mas = wr->mas;

	if (mas && (mas->mas_flags & MA_STATE_PREALLOC)) {
		*(struct maple_node **)node = mas->alloc;
		mas->alloc = node;
		mas->node_request++;
	} else {
		mt_node_free(node);
	}
}

/* Give back a node built by this store and never published. */
static void wr_drop_new(struct mt_wr *wr, struct maple_node *node)
{
	for (unsigned int i = 0; i < wr->nr_new; i++) {
		if (wr->new_nodes[i] == node) {
			wr->new_nodes[i] = NULL;
			wr_recycle(wr, node);
			return;
		}
	}
}

static bool wr_is_new(struct mt_wr *wr, struct maple_node *node)
{
	for (unsigned int i = 0; i < wr->nr_new; i++)
		if (wr->new_nodes[i] == node)
			return true;
	return false;
}

/* A node whose content was copied: retired after publishing (or dropped if new). */
static void wr_consume(struct mt_wr *wr, struct maple_enode *enode)
{
	struct maple_node *node = mte_to_node(enode);

	if (wr_is_new(wr, node)) {
		wr_drop_new(wr, node);
		return;
	}
	for (unsigned int i = 0; i < wr->nr_old; i++)
		if (wr->old_nodes[i] == node)
			return;
	if (wr->nr_old == MT_WR_NODES) {
		wr->failed = true;
		return;
	}
	wr->old_nodes[wr->nr_old++] = node;
}

static void wr_drop_subtree(struct mt_wr *wr, struct maple_enode *enode)
{
	if (wr->nr_sub == MT_WR_SUBTREES) {
		wr->failed = true;
		return;
	}
	wr->subtrees[wr->nr_sub++] = enode;
}

/* ---- writing: big nodes ------------------------------------------------------------ */

static inline void big_push(struct mt_big *b, unsigned long piv, void *slot, unsigned long gap,
			    bool under)
{
	b->piv[b->n] = piv;
	b->slot[b->n] = slot;
	b->gap[b->n] = gap;
	b->under[b->n] = under;
	b->n++;
}

/* Append slots [from, to] of @enode (covering [nmin, nmax]) to @b. */
static void big_append(struct mt_big *b, struct maple_enode *enode, unsigned long nmin,
		       unsigned long nmax, int from, int to)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);
	unsigned long *piv = ma_pivots(node, type);
	void **slots = ma_slots(node, type);
	unsigned long *gaps = ma_gaps(node, type);
	unsigned int np = mt_pivots[type];

	if (from > to)
		return;
	if (!b->n)
		b->min = from ? piv[from - 1] + 1 : nmin;
	for (int i = from; i <= to; i++) {
		unsigned long smax = ((unsigned int)i < np && piv[i] != ULONG_MAX) ? piv[i] : nmax;

		big_push(b, smax, slots[i], gaps ? gaps[i] : 0, false);
	}
}

static inline unsigned long big_entry_min(const struct mt_big *b, unsigned int i)
{
	return i ? b->piv[i - 1] + 1 : b->min;
}

/*
 * Write entries [s, e) of @b into @node (of @type), pivots, slots and gaps.
 * Return: the node's largest gap (allocation trees) or 0.
 */
static unsigned long big_fill_node(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
				   const struct mt_big *b, unsigned int s, unsigned int e)
{
	unsigned long *piv = ma_pivots(node, type);
	void **slots = ma_slots(node, type);
	unsigned int np = mt_pivots[type], ns = mt_slots[type];
	unsigned int cnt = e - s, i;
	unsigned long gap = 0;

	for (i = 0; i < cnt; i++) {
		slots[i] = b->slot[s + i];
		if (i < np)
			piv[i] = i + 1 < cnt ? b->piv[s + i] : ULONG_MAX;
	}
	for (; i < ns; i++) {
		slots[i] = NULL;
		if (i < np)
			piv[i] = ULONG_MAX;
	}
	if (!wr->alloc)
		return 0;
	if (type == maple_arange_64) {
		for (i = 0; i < ns; i++) {
			node->ma64.gap[i] = i < cnt ? b->gap[s + i] : 0;
			if (node->ma64.gap[i] > gap)
				gap = node->ma64.gap[i];
		}
		return gap;
	}
	for (i = s; i < e; i++) {
		unsigned long len;

		if (b->slot[i])
			continue;
		len = range_len(big_entry_min(b, i), b->piv[i]);
		if (len > gap)
			gap = len;
	}
	return gap;
}

/*
 * Cut @b (content of one level, entries of @type's level) into new nodes,
 * first merging any underfull new child with a neighbour. The new nodes go to
 * @out (as entries of the level above). Return: false on allocation failure.
 */
static bool big_build(struct mt_wr *wr, struct mt_big *b, enum maple_type type, struct mt_big *out)
{
	unsigned int cap = mt_slots[type], minfill = mt_min_slots[type];
	unsigned int k, per, extra, s;

	if (!ma_is_leaf(type)) {
		for (unsigned int i = 0; i < b->n && b->n > 1; i++) {
			struct mt_big tmp, sub;
			unsigned int j, lo;

			if (!b->under[i])
				continue;
			j = i ? i - 1 : i + 1;
			lo = min(i, j);
			tmp.n = 0;
			for (unsigned int c = lo; c <= lo + 1; c++) {
				struct maple_enode *child = b->slot[c];
				unsigned long *cp = ma_pivots(mte_to_node(child), mte_node_type(child));
				unsigned int end = ma_data_end(cp, mt_pivots[mte_node_type(child)]);

				big_append(&tmp, child, big_entry_min(b, c), b->piv[c], 0, (int)end);
			}
			/* A new child of theirs may be underfull too (a chain built below). */
			for (unsigned int c = 0; c < tmp.n; c++) {
				struct maple_enode *gc = tmp.slot[c];
				enum maple_type gt = mte_node_type(b->slot[i]);

				if (ma_is_leaf(gt) || !wr_is_new(wr, mte_to_node(gc)))
					continue;
				gt = mte_node_type(gc);
				tmp.under[c] = ma_data_end(ma_pivots(mte_to_node(gc), gt), mt_pivots[gt]) + 1 <
					       mt_min_slots[gt];
			}
			sub.n = 0;
			if (!big_build(wr, &tmp, mte_node_type(b->slot[i]), &sub))
				return false;
			wr_consume(wr, b->slot[lo]);
			wr_consume(wr, b->slot[lo + 1]);
			/* Replace entries lo, lo + 1 by sub's. */
			memmove(&b->piv[lo + sub.n], &b->piv[lo + 2], (b->n - lo - 2) * sizeof(b->piv[0]));
			memmove(&b->slot[lo + sub.n], &b->slot[lo + 2], (b->n - lo - 2) * sizeof(b->slot[0]));
			memmove(&b->gap[lo + sub.n], &b->gap[lo + 2], (b->n - lo - 2) * sizeof(b->gap[0]));
			memmove(&b->under[lo + sub.n], &b->under[lo + 2], (b->n - lo - 2) * sizeof(b->under[0]));
			for (unsigned int c = 0; c < sub.n; c++) {
				b->piv[lo + c] = sub.piv[c];
				b->slot[lo + c] = sub.slot[c];
				b->gap[lo + c] = sub.gap[c];
				b->under[lo + c] = sub.under[c];
			}
			b->n = b->n - 2 + sub.n;
			i = (unsigned int)-1;	/* rescan */
		}
	}

	k = (b->n + cap - 1) / cap;
	per = b->n / k;
	extra = b->n % k;
	s = 0;
	for (unsigned int i = 0; i < k; i++) {
		unsigned int cnt = per + (i < extra);
		struct maple_node *node = wr_alloc(wr, type);
		unsigned long gap;

		if (!node)
			return false;
		gap = big_fill_node(wr, node, type, b, s, s + cnt);
		if (!out->n)
			out->min = big_entry_min(b, s);
		big_push(out, b->piv[s + cnt - 1], mt_mk_node(node, type), gap, cnt < minfill);
		s += cnt;
	}
	return true;
}

/* ---- writing: the paths ---------------------------------------------------------------- */

/* The node on the left spine at @depth now has largest gap @gap: tell its ancestors. */
static void wr_update_gaps(struct mt_wr *wr, unsigned int depth, unsigned long gap)
{
	if (!wr->alloc)
		return;
	while (depth--) {
		struct maple_node *parent = mte_to_node(wr->l[depth]);
		unsigned long *g = &parent->ma64.gap[wr->loff[depth]];
		unsigned long old_max, new_max;

		if (*g == gap)
			return;
		old_max = ma_arange_max_gap(parent);
		ma_store_gap(g, gap);
		new_max = ma_arange_max_gap(parent);
		if (new_max == old_max)
			return;
		gap = new_max;
	}
}

/* Publish @enode as the child at @depth of the left spine (the root if @depth is 0). */
static void wr_publish(struct mt_wr *wr, unsigned int depth, struct maple_enode *enode)
{
	struct maple_node *node = mte_to_node(enode);

	if (!depth) {
		ma_set_parent(node, ma_mk_root_parent(wr->mt));
		ma_publish(&wr->mt->ma_root, enode);
		return;
	}
	struct maple_node *parent = mte_to_node(wr->l[depth - 1]);
	unsigned int off = wr->loff[depth - 1];

	ma_set_parent(node, ma_mk_parent(parent, off));
	ma_publish(&ma_slots(parent, mte_node_type(wr->l[depth - 1]))[off], enode);
}

/* After publishing: new internal nodes adopt their children. */
static void wr_adopt(struct mt_wr *wr)
{
	for (unsigned int i = 0; i < wr->nr_new; i++) {
		struct maple_node *node = wr->new_nodes[i];
		enum maple_type type;
		void **slots;
		unsigned int end;

		type = (enum maple_type)wr->new_type[i];
		if (!node || ma_is_leaf(type))
			continue;
		slots = ma_slots(node, type);
		end = ma_data_end(ma_pivots(node, type), mt_pivots[type]);
		for (unsigned int s = 0; s <= end; s++)
			ma_set_parent(mte_to_node(slots[s]), ma_mk_parent(node, s));
	}
}

static void wr_retire_subtree(struct mt_wr *wr, struct maple_enode *enode)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);

	if (!ma_is_leaf(type)) {
		void **slots = ma_slots(node, type);
		unsigned int end = ma_data_end(ma_pivots(node, type), mt_pivots[type]);

		for (unsigned int i = 0; i <= end; i++)
			wr_retire_subtree(wr, slots[i]);
	}
	mt_retire_node(&wr->retire, node);
}

/* The store is published: adopt, then retire what it replaced. */
static void wr_finish(struct mt_wr *wr)
{
	wr_adopt(wr);
	for (unsigned int i = 0; i < wr->nr_old; i++)
		mt_retire_node(&wr->retire, wr->old_nodes[i]);
	for (unsigned int i = 0; i < wr->nr_sub; i++)
		wr_retire_subtree(wr, wr->subtrees[i]);
	mt_retire_done(&wr->retire);
}

/* The store failed before publishing: free what it built. */
static int wr_abort(struct mt_wr *wr)
{
	for (unsigned int i = 0; i < wr->nr_new; i++)
		if (wr->new_nodes[i])
			wr_recycle(wr, wr->new_nodes[i]);
	wr->nr_new = 0;
	return -ENOMEM;
}

/* Descend both spines: to @L on the left, to @R on the right. */
static void wr_walk(struct mt_wr *wr, struct maple_enode *root, unsigned long L, unsigned long R)
{
	struct maple_enode *le = root, *re = root;
	unsigned long lmin = 0, lmax = ULONG_MAX, rmin = 0, rmax = ULONG_MAX;
	unsigned int h = wr->height;
	bool parted = false;

	wr->lca = h - 1;
	for (unsigned int d = 0; d < h; d++) {
		struct maple_node *ln = mte_to_node(le), *rn = mte_to_node(re);
		enum maple_type lt = mte_node_type(le), rt = mte_node_type(re);
		unsigned long *lp = ma_pivots(ln, lt), *rp = ma_pivots(rn, rt);
		unsigned int np = mt_pivots[lt];
		unsigned int lo = ma_offset(lp, np, L), ro;

		/* Most stores stay inside one slot per level: no second search. */
		if (le == re && (lo == np || lp[lo] == ULONG_MAX || R <= lp[lo]))
			ro = lo;
		else
			ro = ma_offset(rp, np, R);

		wr->l[d] = le;
		wr->r[d] = re;
		wr->lmin[d] = lmin;
		wr->lmax[d] = lmax;
		wr->rmin[d] = rmin;
		wr->rmax[d] = rmax;
		wr->loff[d] = (unsigned char)lo;
		wr->roff[d] = (unsigned char)ro;
		if (!parted && (le != re || lo != ro)) {
			parted = true;
			wr->lca = d;
		}
		if (d + 1 < h) {
			ma_slot_range(lp, np, lo, lmin, lmax, &lmin, &lmax);
			ma_slot_range(rp, np, ro, rmin, rmax, &rmin, &rmax);
			le = ma_slots(ln, lt)[lo];
			re = ma_slots(rn, rt)[ro];
		}
	}
}

/*
 * The root level's new content is @b (entries of @type's level): build and
 * publish the new root, growing or shrinking the tree.
 */
static bool wr_new_root(struct mt_wr *wr, struct mt_big *b, enum maple_type type)
{
	struct maple_tree *mt = wr->mt;
	unsigned int height = wr->height;
	struct maple_enode *root;
	struct mt_big mid;

	if (ma_is_leaf(type) && b->n == 1 && !b->slot[0]) {
		ma_publish(&mt->ma_root, NULL);
		mt_set_height(mt, 0);
		return true;
	}
	if (ma_is_leaf(type) || b->n > 1) {
		mid.n = 0;
		if (!big_build(wr, b, type, &mid))
			return false;
		while (mid.n > 1) {
			struct mt_big up = mid;

			mid.n = 0;
			if (!big_build(wr, &up, wr->itype, &mid))
				return false;
			height++;
		}
		root = mid.slot[0];
	} else {
		root = b->slot[0];
		height--;
	}
	/* A new internal root with one child: the child becomes the root, and so on. */
	for (;;) {
		struct maple_node *node = mte_to_node(root);
		enum maple_type t = mte_node_type(root);

		if (ma_is_leaf(t) || ma_data_end(ma_pivots(node, t), mt_pivots[t]) ||
		    !wr_is_new(wr, node))
			break;
		root = ma_slots(node, t)[0];
		wr_consume(wr, mt_mk_node(node, t));
		height--;
	}
	if (ma_is_leaf(mte_node_type(root)) && mte_to_node(root)->mr64.pivot[0] == ULONG_MAX &&
	    !mte_to_node(root)->mr64.slot[0]) {
		wr_consume(wr, root);
		root = NULL;
		height = 0;
	}
	if (root)
		ma_set_parent(mte_to_node(root), ma_mk_root_parent(mt));
	ma_publish(&mt->ma_root, root);
	mt_set_height(mt, height);
	return true;
}

/*
 * Store @entry over [*@Lp, *@Rp] (widened over NULL neighbours when @entry is
 * NULL; the final range is written back). *@oldp gets the entry that was at
 * *@Lp. Context: the tree's write lock.
 * Return: 0 or -ENOMEM (tree unchanged).
 */
static int mt_wr_store(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
		       void **oldp)
{
	struct maple_tree *mt = wr->mt;
	struct maple_enode *root = mt->ma_root;
	unsigned long L = *Lp, R = *Rp;
	unsigned long lsmin, lsmax, rsmin, rsmax;
	struct maple_node *lnode, *rnode;
	struct maple_enode *ll, *rl;
	unsigned int h, leaf, lo, ro;
	const unsigned int np = MAPLE_RANGE64_SLOTS - 1;
	bool first = true;
	struct mt_big b, mid;
	void *old = NULL;

	if (!root) {
		struct maple_node *node;

		*oldp = NULL;
		if (!entry)
			return 0;
		b.n = 0;
		b.min = 0;
		if (L)
			big_push(&b, L - 1, NULL, 0, false);
		big_push(&b, R, entry, 0, false);
		if (R != ULONG_MAX)
			big_push(&b, ULONG_MAX, NULL, 0, false);
		node = wr_alloc(wr, maple_leaf_64);
		if (!node)
			return wr_abort(wr);
		big_fill_node(wr, node, maple_leaf_64, &b, 0, b.n);
		wr->height = 1;
		mt_set_height(mt, 1);
		wr_publish(wr, 0, mt_mk_node(node, maple_leaf_64));
		return 0;
	}
again:
	h = mt_height(mt);
	wr->height = h;
	leaf = h - 1;
	wr_walk(wr, root, L, R);
	ll = wr->l[leaf];
	rl = wr->r[leaf];
	lnode = mte_to_node(ll);
	rnode = mte_to_node(rl);
	lo = wr->loff[leaf];
	ro = wr->roff[leaf];
widened:
	ma_slot_range(lnode->mr64.pivot, np, lo, wr->lmin[leaf], wr->lmax[leaf], &lsmin, &lsmax);
	ma_slot_range(rnode->mr64.pivot, np, ro, wr->rmin[leaf], wr->rmax[leaf], &rsmin, &rsmax);
	if (first) {
		old = lnode->mr64.slot[lo];
		first = false;
		if (wr->erase) {
			/* Erase: the whole range holding index, found by this walk. */
			*oldp = old;
			if (!old)
				return 0;
			wr->erased_min = L = lsmin;
			wr->erased_max = R = lsmax;
			ro = lo;
			rsmin = lsmin;
			rsmax = lsmax;
		}
	}

	if (!entry) {
		unsigned long nL = L, nR = R;

		if (!lnode->mr64.slot[lo]) {
			nL = lsmin;
		} else if (L == lsmin && L) {
			if (lo) {
				if (!lnode->mr64.slot[lo - 1])
					nL = lo >= 2 ? lnode->mr64.pivot[lo - 2] + 1 : wr->lmin[leaf];
			} else {
				MA_STATE(m, mt, L - 1, L - 1);

				if (!mas_walk(&m))
					nL = m.index;
			}
		}
		if (!rnode->mr64.slot[ro]) {
			nR = rsmax;
		} else if (R == rsmax && R != ULONG_MAX) {
			if (!ma_is_last(rnode->mr64.pivot, np, ro)) {
				if (!rnode->mr64.slot[ro + 1]) {
					unsigned long a, z;

					ma_slot_range(rnode->mr64.pivot, np, ro + 1, wr->rmin[leaf],
						      wr->rmax[leaf], &a, &z);
					nR = z;
				}
			} else {
				MA_STATE(m, mt, R + 1, R + 1);

				if (!mas_walk(&m))
					nR = m.last;
			}
		}
		if (nL != L || nR != R) {
			L = nL;
			R = nR;
			if (L >= wr->lmin[leaf] && R <= wr->rmax[leaf]) {
				lo = ma_offset(lnode->mr64.pivot, np, L);
				ro = ma_offset(rnode->mr64.pivot, np, R);
				goto widened;
			}
			goto again;
		}
	}
	*Lp = L;
	*Rp = R;
	*oldp = old;

	/* 1. Exact fit: one pointer store. */
	if (ll == rl && lo == ro && lsmin == L && lsmax == R) {
		void **slot = &lnode->mr64.slot[lo];
		void *cur = *slot;

		if (cur != entry) {
			if (!entry && h == 1 && L == 0 && R == ULONG_MAX) {
				/* The last entry goes: the tree is empty. */
				ma_publish(&mt->ma_root, NULL);
				mt_set_height(mt, 0);
				wr_consume(wr, ll);
				wr_finish(wr);
				return 0;
			}
			ma_publish(slot, entry);
			if (wr->alloc && !cur != !entry)
				wr_update_gaps(wr, leaf, ma_leaf_max_gap(lnode, wr->lmin[leaf],
									  wr->lmax[leaf]));
		}
		return 0;
	}

	/* The leaf level's new content. */
	b.n = 0;
	big_append(&b, ll, wr->lmin[leaf], wr->lmax[leaf], 0, (int)lo - 1);
	if (lsmin < L) {
		if (!b.n)
			b.min = lsmin;
		big_push(&b, L - 1, lnode->mr64.slot[lo], 0, false);
	}
	if (!b.n)
		b.min = L;
	big_push(&b, R, entry, 0, false);
	if (rsmax > R)
		big_push(&b, rsmax, rnode->mr64.slot[ro], 0, false);
	big_append(&b, rl, wr->rmin[leaf], wr->rmax[leaf], (int)ro + 1,
		   (int)ma_data_end(rnode->mr64.pivot, np));

	/* 2. The leaf still fits: rewrite it (or publish a copy in RCU mode). */
	if (ll == rl && b.n <= MAPLE_RANGE64_SLOTS &&
	    (b.n >= MAPLE_RANGE64_MIN || (h == 1 && (b.n > 1 || entry)))) {
		unsigned long gap;

		if (!wr->retire.rcu) {
			gap = big_fill_node(wr, lnode, maple_leaf_64, &b, 0, b.n);
			wr_update_gaps(wr, leaf, gap);
			return 0;
		}
		struct maple_node *node = wr_alloc(wr, maple_leaf_64);

		if (!node)
			return wr_abort(wr);
		gap = big_fill_node(wr, node, maple_leaf_64, &b, 0, b.n);
		wr_publish(wr, leaf, mt_mk_node(node, maple_leaf_64));
		wr_update_gaps(wr, leaf, gap);
		wr_consume(wr, ll);
		wr_finish(wr);
		return 0;
	}

	/* 3. The general path. */
	wr_consume(wr, ll);
	if (rl != ll)
		wr_consume(wr, rl);
	if (!h || leaf == 0) {
		if (!wr_new_root(wr, &b, maple_leaf_64) || wr->failed)
			return wr_abort(wr);
		wr_finish(wr);
		return 0;
	}
	mid.n = 0;
	if (!big_build(wr, &b, maple_leaf_64, &mid) || wr->failed)
		return wr_abort(wr);
	for (int d = (int)leaf - 1; d >= 0; d--) {
		struct maple_enode *pl = wr->l[d], *pr = wr->r[d];
		enum maple_type t = mte_node_type(pl);
		unsigned int lod = wr->loff[d], rod = wr->roff[d];
		unsigned int lend = ma_data_end(ma_pivots(mte_to_node(pl), t), mt_pivots[t]);
		unsigned int rend = ma_data_end(ma_pivots(mte_to_node(pr), t), mt_pivots[t]);

		if (pl == pr && lod == rod && mid.n == 1 && !mid.under[0]) {
			wr_publish(wr, (unsigned int)d + 1, mid.slot[0]);
			wr_update_gaps(wr, (unsigned int)d + 1, mid.gap[0]);
			wr_finish(wr);
			return 0;
		}
		b.n = 0;
		big_append(&b, pl, wr->lmin[d], wr->lmax[d], 0, (int)lod - 1);
		if (!b.n)
			b.min = mid.min;
		for (unsigned int i = 0; i < mid.n; i++)
			big_push(&b, mid.piv[i], mid.slot[i], mid.gap[i], mid.under[i]);
		big_append(&b, pr, wr->rmin[d], wr->rmax[d], (int)rod + 1, (int)rend);
		if (pl == pr) {
			for (unsigned int i = lod + 1; i < rod; i++)
				wr_drop_subtree(wr, ma_slots(mte_to_node(pl), t)[i]);
		} else {
			for (unsigned int i = lod + 1; i <= lend; i++)
				wr_drop_subtree(wr, ma_slots(mte_to_node(pl), t)[i]);
			for (unsigned int i = 0; i < rod; i++)
				wr_drop_subtree(wr, ma_slots(mte_to_node(pr), t)[i]);
		}
		wr_consume(wr, pl);
		if (pr != pl)
			wr_consume(wr, pr);
		if (d == 0) {
			if (!wr_new_root(wr, &b, t) || wr->failed)
				return wr_abort(wr);
			wr_finish(wr);
			return 0;
		}
		mid.n = 0;
		if (!big_build(wr, &b, t, &mid) || wr->failed)
			return wr_abort(wr);
	}
	return 0;	/* not reached: depth 0 always finishes */
}

static void wr_init(struct mt_wr *wr, struct maple_tree *mt, struct ma_state *mas)
{
	wr->mt = mt;
	wr->mas = mas;
	wr->itype = mt_internal_type(mt);
	wr->alloc = mt_is_alloc(mt);
	wr->failed = false;
	wr->warned = false;
	wr->erase = false;
	wr->nr_new = wr->nr_old = wr->nr_sub = 0;
	wr->retire.rcu = mt_in_rcu(mt);
	wr->retire.batch = NULL;
}

/* ---- writing: the API ------------------------------------------------------------------- */

static int mas_wr(struct ma_state *mas, void *entry, void **old)
{
	struct mt_wr wr;
	unsigned long L = mas->index, R = mas->last;
	int ret;

	*old = NULL;
	if (L > R) {
		mas->status = ma_error;
		mas->error = -EINVAL;
		return -EINVAL;
	}
	wr_init(&wr, mas->tree, mas);
	ret = mt_wr_store(&wr, &L, &R, entry, old);
	mas->node = NULL;
	if (ret) {
		mas->status = ma_error;
		mas->error = ret;
		*old = NULL;
		return ret;
	}
	mas->index = L;
	mas->last = R;
	mas->status = ma_start;
	return 0;
}

void *mas_store(struct ma_state *mas, void *entry)
{
	void *old;

	mas_wr(mas, entry, &old);
	return old;
}

int mas_store_gfp(struct ma_state *mas, void *entry, gfp_t gfp)
{
	void *old;

	(void)gfp;
	return mas_wr(mas, entry, &old);
}

/*
 * Nodes a store of [index, last] needs in the tree as it is: 0 (1 in RCU
 * mode) when the leaf is rewritten, 2 per split level + 1 for a split, and
 * a worst case otherwise.
 */
static unsigned long mas_prealloc_calc(struct ma_state *mas, void *entry)
{
	struct maple_tree *mt = mas->tree;
	struct maple_enode *enode = mt->ma_root;
	unsigned int h = mt_height(mt), counts[MAPLE_HEIGHT_MAX], d = 0;
	unsigned long min = 0, max = ULONG_MAX, worst = 5UL * h + 5;
	bool rcu = mt_in_rcu(mt);

	if (!enode)
		return entry ? 1 : 0;
	for (;;) {
		struct maple_node *node = mte_to_node(enode);
		enum maple_type t = mte_node_type(enode);
		unsigned long *piv = ma_pivots(node, t);
		unsigned int np = mt_pivots[t];
		unsigned int off = ma_offset(piv, np, mas->index);

		counts[d] = ma_data_end(piv, np) + 1;
		if (ma_is_leaf(t)) {
			unsigned int end = counts[d] - 1, ro, n;
			unsigned long smin, smax, rmin, rmax;

			if (mas->last > max)
				return worst;
			ro = ma_offset(piv, np, mas->last);
			ma_slot_range(piv, np, off, min, max, &smin, &smax);
			ma_slot_range(piv, np, ro, min, max, &rmin, &rmax);
			if (!entry && (mas->index <= min || mas->last >= max || !node->mr64.slot[off] ||
				       !node->mr64.slot[ro]))
				return worst;	/* NULL may widen beyond this leaf */
			if (entry && off == ro && smin == mas->index && smax == mas->last)
				return 0;	/* exact fit */
			n = off + (smin < mas->index) + 1 + (rmax > mas->last) + (end - ro);
			if (n <= MAPLE_RANGE64_SLOTS) {
				if (h == 1 || n >= MAPLE_RANGE64_MIN + (entry ? 0 : 2))
					return rcu ? 1 : 0;
				return worst;
			}
			/* A split: 2 nodes per full level, 1 for the level that takes it. */
			unsigned long need = 2;

			while (d--) {
				if (counts[d] < mt_slots[mt_internal_type(mt)])
					return need + 1;
				need += 2;
			}
			return need + 1;
		}
		ma_slot_range(piv, np, off, min, max, &min, &max);
		enode = ma_slots(node, t)[off];
		d++;
	}
}

int mas_preallocate(struct ma_state *mas, void *entry, gfp_t gfp)
{
	unsigned long need = mas_prealloc_calc(mas, entry);

	(void)gfp;
	while (mas->node_request < need) {
		struct maple_node *node = mt_node_alloc();

		if (!node) {
			mas_destroy(mas);
			return -ENOMEM;
		}
		*(struct maple_node **)node = mas->alloc;
		mas->alloc = node;
		mas->node_request++;
	}
	mas->mas_flags |= MA_STATE_PREALLOC;
	return 0;
}

void mas_store_prealloc(struct ma_state *mas, void *entry)
{
	struct mt_wr wr;
	unsigned long L = mas->index, R = mas->last;
	void *old;
	int ret;

	wr_init(&wr, mas->tree, mas);
	ret = mt_wr_store(&wr, &L, &R, entry, &old);
	if (ret) {
		pl_warn_ratelimited("maple: mas_store_prealloc of [%lu, %lu] ran out of nodes\n",
				    mas->index, mas->last);
		mas->status = ma_error;
		mas->error = ret;
	} else {
		mas->index = L;
		mas->last = R;
		mas->status = ma_start;
	}
	mas->node = NULL;
	mas_destroy(mas);
}

void mas_destroy(struct ma_state *mas)
{
	while (mas->alloc) {
		struct maple_node *node = mas->alloc;

		mas->alloc = *(struct maple_node **)node;
		mt_node_free(node);
	}
	mas->node_request = 0;
	mas->mas_flags &= (unsigned char)~MA_STATE_PREALLOC;
}

void *mas_erase(struct ma_state *mas)
{
	struct mt_wr wr;
	unsigned long L = mas->index, R = mas->index;
	void *old = NULL;
	int ret;

	wr_init(&wr, mas->tree, mas);
	wr.erase = true;
	ret = mt_wr_store(&wr, &L, &R, NULL, &old);
	mas->node = NULL;
	if (ret) {
		mas->status = ma_error;
		mas->error = ret;
		return NULL;
	}
	mas->status = ma_start;
	if (old) {
		mas->index = wr.erased_min;
		mas->last = wr.erased_max;
	}
	return old;
}

/* ---- the tree ------------------------------------------------------------------------- */

void mt_init_flags(struct maple_tree *mt, unsigned int flags)
{
	pl_spin_init(&mt->ma_lock, false);
	mt->ma_flags = flags & (MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU);
	mt->ma_root = NULL;
}

void __mt_destroy(struct maple_tree *mt)
{
	struct maple_enode *root = mt->ma_root;
	struct mt_wr wr;

	if (!root)
		return;
	wr_init(&wr, mt, NULL);
	ma_publish(&mt->ma_root, NULL);
	mt_set_height(mt, 0);
	wr_retire_subtree(&wr, root);
	mt_retire_done(&wr.retire);
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

void *mtree_erase(struct maple_tree *mt, unsigned long index)
{
	MA_STATE(mas, mt, index, index);
	void *entry;

	mtree_lock(mt);
	entry = mas_erase(&mas);
	mtree_unlock(mt);
	return entry;
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
