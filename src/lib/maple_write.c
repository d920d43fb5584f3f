// SPDX-License-Identifier: MIT
/*
 * maple_write.c - stores into the maple tree: the write paths described at
 * the top of maple_tree.c (exact fit; leaf rewrite; outside RCU mode the
 * in-place two-leaf rebalance, sibling push and split; the general
 * big-node path). The API on top of them (mas_store, preallocation,
 * mas_erase) is in maple_write_api.c, the in-place rebalance, push and
 * split in maple_rebalance.c.
 */
#include <errno.h>
#include <string.h>
#include "maple_wr.h"

struct maple_node *wr_alloc(struct mt_wr *wr, enum maple_type type)
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

/*
 * Append slots [from, to] of @enode (covering [nmin, nmax]) to @b; @vt:
 * virtual time may be on (mt_vt_on()).
 */
static __always_inline void big_append_t(struct mt_big *b, struct maple_enode *enode,
					 unsigned long nmin, unsigned long nmax, int from, int to,
					 const bool vt)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);
	unsigned long *piv = ma_pivots(node, type);
	void **slots = ma_slots(node, type);
	unsigned long *gaps = ma_gaps(node, type);
	unsigned int np = mt_pivots[type];

	if (from > to)
		return;
	mt_vt_step(vt, node, false);
	if (!b->n)
		b->min = from ? piv[from - 1] + 1 : nmin;
	for (int i = from; i <= to; i++) {
		unsigned long smax = ((unsigned int)i < np && piv[i] != ULONG_MAX) ? piv[i] : nmax;

		big_push(b, smax, slots[i], gaps ? gaps[i] : 0, false);
	}
}

void big_append(struct mt_big *b, struct maple_enode *enode, unsigned long nmin,
		unsigned long nmax, int from, int to)
{
	if (mt_vt_on())
		big_append_t(b, enode, nmin, nmax, from, to, true);
	else
		big_append_t(b, enode, nmin, nmax, from, to, false);
}

static inline unsigned long big_entry_min(const struct mt_big *b, unsigned int i)
{
	return i ? b->piv[i - 1] + 1 : b->min;
}

/*
 * Write entries [s, e) of @b into @node (of @type), pivots, slots and gaps;
 * @vt: virtual time may be on (mt_vt_on()).
 * Return: the node's largest gap (allocation trees) or 0.
 */
static __always_inline unsigned long
big_fill_node_t(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
		const struct mt_big *b, unsigned int s, unsigned int e, const bool vt)
{
	unsigned long *piv = ma_pivots(node, type);
	void **slots = ma_slots(node, type);
	unsigned int np = mt_pivots[type], ns = mt_slots[type];
	unsigned int cnt = e - s, i;
	unsigned long gap = 0;

	mt_vt_step(vt, node, true);
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

static __attribute__((noinline)) unsigned long
big_fill_node_plain(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
		    const struct mt_big *b, unsigned int s, unsigned int e)
{
	return big_fill_node_t(wr, node, type, b, s, e, false);
}

unsigned long big_fill_node(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
			    const struct mt_big *b, unsigned int s, unsigned int e)
{
	if (mt_vt_on())
		return big_fill_node_t(wr, node, type, b, s, e, true);
	return big_fill_node_plain(wr, node, type, b, s, e);
}

/* big_fill_node() for a caller that read mt_vt_on() already (@vt). */
static __always_inline unsigned long
big_fill_node_h(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
		const struct mt_big *b, unsigned int s, unsigned int e, const bool vt)
{
	return vt ? big_fill_node(wr, node, type, b, s, e) :
		    big_fill_node_plain(wr, node, type, b, s, e);
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

/*
 * The node on the left spine at @depth now has largest gap @gap: tell its
 * ancestors. A parent's own largest gap is what the grandparent's gap[] holds
 * for it, so a parent's ten gaps are only scanned again when its largest one
 * shrank; the walk up stops at the first level whose largest gap is unchanged.
 * @vt: virtual time may be on (mt_vt_on()). Only for allocation trees.
 */
static __always_inline void wr_update_gaps_t(struct mt_wr *wr, unsigned int depth,
					     unsigned long gap, const bool vt)
{
	while (depth--) {
		struct maple_node *parent = mte_to_node(wr->l[depth]);
		unsigned long *g = &parent->ma64.gap[wr->loff[depth]];
		unsigned long was = *g, old_max, new_max;

		if (was == gap)
			return;
		mt_vt_step(vt, parent, true);
		ma_store_gap(g, gap);
		if (!depth)
			return;		/* the root: no gap above it */
		old_max = mte_to_node(wr->l[depth - 1])->ma64.gap[wr->loff[depth - 1]];
		if (gap >= old_max)
			new_max = gap;
		else if (was < old_max)
			new_max = old_max;	/* the largest was another slot's, still there */
		else
			new_max = ma_arange_max_gap(parent);	/* the largest shrank */
		if (new_max == old_max)
			return;
		gap = new_max;
	}
}

static __attribute__((noinline)) void wr_update_gaps_plain(struct mt_wr *wr, unsigned int depth,
							  unsigned long gap)
{
	wr_update_gaps_t(wr, depth, gap, false);
}

static __attribute__((noinline)) void wr_update_gaps_vt(struct mt_wr *wr, unsigned int depth,
						       unsigned long gap)
{
	wr_update_gaps_t(wr, depth, gap, true);
}

void wr_update_gaps(struct mt_wr *wr, unsigned int depth, unsigned long gap)
{
	if (!wr->alloc)
		return;
	if (mt_vt_on())
		wr_update_gaps_vt(wr, depth, gap);
	else
		wr_update_gaps_plain(wr, depth, gap);
}

/* wr_update_gaps() for a caller that read mt_vt_on() already (@vt). */
static __always_inline void wr_update_gaps_h(struct mt_wr *wr, unsigned int depth,
					     unsigned long gap, const bool vt)
{
	if (!wr->alloc)
		return;
	if (vt)
		wr_update_gaps_vt(wr, depth, gap);
	else
		wr_update_gaps_plain(wr, depth, gap);
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

void wr_retire_subtree(struct mt_wr *wr, struct maple_enode *enode)
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

/*
 * Descend both spines: to @L on the left, to @R on the right. Until they
 * part, the two are one path, walked once. @vt: virtual time may be on.
 */
static __always_inline void wr_walk_t(struct mt_wr *wr, struct maple_enode *root,
				      unsigned long L, unsigned long R, const bool vt)
{
	struct maple_enode *le = root, *re = root;
	unsigned long lmin = 0, lmax = ULONG_MAX, rmin = 0, rmax = ULONG_MAX;
	unsigned int h = wr->height, d = 0;

	wr->lca = h - 1;
	for (; d < h; d++) {
		struct maple_node *ln = mte_to_node(le);
		enum maple_type lt = mte_node_type(le);
		unsigned long *lp = ma_pivots(ln, lt);
		unsigned int np = mt_pivots[lt];
		unsigned int lo = ma_offset(lp, np, L), ro = lo;

		mt_vt_step(vt, ln, false);
		/* Most stores stay inside one slot per level: no second search. */
		if (lo < np && lp[lo] != ULONG_MAX && R > lp[lo])
			ro = ma_offset(lp, np, R);
		wr->l[d] = wr->r[d] = le;
		wr->lmin[d] = wr->rmin[d] = lmin;
		wr->lmax[d] = wr->rmax[d] = lmax;
		wr->loff[d] = (unsigned char)lo;
		wr->roff[d] = (unsigned char)ro;
		if (lo != ro) {
			wr->lca = d;
			if (d + 1 < h) {
				ma_slot_range(lp, np, ro, lmin, lmax, &rmin, &rmax);
				ma_slot_range(lp, np, lo, lmin, lmax, &lmin, &lmax);
				re = ma_slots(ln, lt)[ro];
				le = ma_slots(ln, lt)[lo];
			}
			d++;
			break;
		}
		if (d + 1 < h) {
			le = re = ma_slots(ln, lt)[lo];
			ma_prefetch_node(le);
			ma_slot_range(lp, np, lo, lmin, lmax, &lmin, &lmax);
		}
	}
	for (; d < h; d++) {
		struct maple_node *ln = mte_to_node(le), *rn = mte_to_node(re);
		enum maple_type lt = mte_node_type(le), rt = mte_node_type(re);
		unsigned long *lp = ma_pivots(ln, lt), *rp = ma_pivots(rn, rt);
		unsigned int np = mt_pivots[lt];
		unsigned int lo = ma_offset(lp, np, L), ro = ma_offset(rp, np, R);

		mt_vt_step(vt, ln, false);
		if (vt && rn != ln)
			mt_vt_step(vt, rn, false);
		wr->l[d] = le;
		wr->r[d] = re;
		wr->lmin[d] = lmin;
		wr->lmax[d] = lmax;
		wr->rmin[d] = rmin;
		wr->rmax[d] = rmax;
		wr->loff[d] = (unsigned char)lo;
		wr->roff[d] = (unsigned char)ro;
		if (d + 1 < h) {
			ma_slot_range(lp, np, lo, lmin, lmax, &lmin, &lmax);
			ma_slot_range(rp, np, ro, rmin, rmax, &rmin, &rmax);
			le = ma_slots(ln, lt)[lo];
			re = ma_slots(rn, rt)[ro];
		}
	}
}

static __attribute__((noinline)) void wr_walk_plain(struct mt_wr *wr, struct maple_enode *root,
						   unsigned long L, unsigned long R)
{
	wr_walk_t(wr, root, L, R, false);
}

static __attribute__((noinline)) void wr_walk_vt(struct mt_wr *wr, struct maple_enode *root,
						unsigned long L, unsigned long R)
{
	wr_walk_t(wr, root, L, R, true);
}

static __always_inline void wr_walk(struct mt_wr *wr, struct maple_enode *root, unsigned long L,
				    unsigned long R, const bool vt)
{
	if (vt)
		wr_walk_vt(wr, root, L, R);
	else
		wr_walk_plain(wr, root, L, R);
}

/*
 * The walk of the common store: [L, R] inside one slot at every internal
 * level, so one path, recording only what paths 1 and 2 and the in-place
 * split read (l[], loff[], and both spines' fields at the leaf). The node
 * types are fixed per level (@itype above, leaves below), which lets the
 * compiler unroll each offset search. Sets wr->one_spine. @vt: virtual
 * time may be on.
 * Return: false if [L, R] leaves a slot at some internal level: wr_walk()
 * then.
 */
static __attribute__((always_inline)) inline bool
wr_walk_one_t(struct mt_wr *wr, struct maple_enode *e, unsigned long L, unsigned long R,
	      const enum maple_type itype, const bool vt)
{
	const unsigned int np = mt_pivots[itype], lnp = MAPLE_RANGE64_SLOTS - 1;
	unsigned long min = 0, max = ULONG_MAX, *piv;
	unsigned int leaf = wr->height - 1, lo, ro;

	for (unsigned int d = 0; d < leaf; d++) {
		struct maple_node *node = mte_to_node(e);
		unsigned int off;
		unsigned long smax;

		mt_vt_step(vt, node, false);
		piv = ma_pivots(node, itype);
		off = ma_offset(piv, np, L);
		smax = off < np && piv[off] != ULONG_MAX ? piv[off] : max;
		if (R > smax)
			return false;
		wr->l[d] = e;
		wr->lmin[d] = min;
		wr->lmax[d] = max;
		wr->loff[d] = (unsigned char)off;
		min = off ? piv[off - 1] + 1 : min;
		max = smax;
		e = ma_slots(node, itype)[off];
		ma_prefetch_node(e);
	}
	mt_vt_step(vt, mte_to_node(e), false);
	piv = mte_to_node(e)->mr64.pivot;
	lo = ro = ma_offset(piv, lnp, L);
	if (lo < lnp && piv[lo] != ULONG_MAX && R > piv[lo])
		ro = ma_offset(piv, lnp, R);
	wr->l[leaf] = wr->r[leaf] = e;
	wr->loff[leaf] = (unsigned char)lo;
	wr->roff[leaf] = (unsigned char)ro;
	wr->lmin[leaf] = wr->rmin[leaf] = min;
	wr->lmax[leaf] = wr->rmax[leaf] = max;
	wr->lca = leaf;
	wr->one_spine = true;
	return true;
}

static __always_inline bool wr_walk_one(struct mt_wr *wr, struct maple_enode *root,
					unsigned long L, unsigned long R, const bool vt)
{
	if (wr->itype == maple_arange_64)
		return wr_walk_one_t(wr, root, L, R, maple_arange_64, vt);
	return wr_walk_one_t(wr, root, L, R, maple_range_64, vt);
}

/*
 * A NULL store widens over a NULL range in the leaf before (after) the one
 * it is in. When that leaf is a sibling, the parent is on the walk already:
 * look at its last (first) slot directly instead of walking from the root.
 * Return: false if the leaf beside is not a sibling (walk then); true with
 * *@edge moved to that NULL range's start (end) if there is one, unchanged
 * if not.
 */
static bool wr_sibling_edge(struct mt_wr *wr, unsigned int leaf, bool right, unsigned long *edge)
{
	const unsigned int lnp = MAPLE_RANGE64_SLOTS - 1;
	bool r = right && !wr->one_spine;
	struct maple_enode *pe;
	struct maple_node *sib;
	unsigned long *ppiv, *spiv;
	unsigned int off, np, end;

	if (!leaf)
		return false;
	pe = r ? wr->r[leaf - 1] : wr->l[leaf - 1];
	off = r ? wr->roff[leaf - 1] : wr->loff[leaf - 1];
	ppiv = ma_pivots(mte_to_node(pe), mte_node_type(pe));
	np = mt_pivots[mte_node_type(pe)];
	if (right ? ma_is_last(ppiv, np, off) : !off)
		return false;
	sib = mte_to_node(ma_slots(mte_to_node(pe), mte_node_type(pe))[right ? off + 1 : off - 1]);
	spiv = sib->mr64.pivot;
	end = ma_data_end(spiv, lnp);
	if (!end)
		return false;		/* a one-slot leaf: its range is the parent's to tell */
	if (right && !sib->mr64.slot[0])
		*edge = spiv[0];
	else if (!right && !sib->mr64.slot[end])
		*edge = spiv[end - 1] + 1;
	return true;
}

/*
 * Paths 1 and 2 outside RCU mode (the kernel's mas_wr_slot_store and
 * mas_wr_node_store in place): write [@L, @R] = @entry into the leaf on the
 * left spine by shifting its slots, when the result keeps the leaf between
 * its minimum fill and 16 slots. Outside RCU mode every reader holds the
 * lock, so nobody sees the leaf half-written, and no node is allocated or
 * freed. @lo..@ro are the slots [@L, @R] touches; [@lsmin, @L) stays
 * slot @lo's entry and (@R, @rsmax] slot @ro's. The leaf's largest gap is
 * derived from its old one (the parent's gap[] holds it) unless a NULL range
 * as large as that one was shortened. @vt: virtual time may be on.
 * Return: false (nothing changed) if the leaf has to be rebuilt instead.
 */
static __always_inline bool wr_leaf_inplace(struct mt_wr *wr, unsigned int leaf, unsigned int lo,
					    unsigned int ro, unsigned long lsmin, unsigned long rsmax,
					    unsigned long L, unsigned long R, void *entry,
					    const bool vt)
{
	const unsigned int np = MAPLE_RANGE64_SLOTS - 1;
	struct maple_node *node = mte_to_node(wr->l[leaf]);
	unsigned long *piv = node->mr64.pivot;
	void **sl = node->mr64.slot;
	unsigned int end = ma_data_end(piv, np);
	unsigned int lsplit = lsmin < L, rsplit = rsmax > R;
	unsigned int nn = lo + lsplit + 1 + rsplit + (end - ro), p, i;
	void *lval = sl[lo], *rval = sl[ro];
	bool gaps = wr->alloc && leaf, rescan = false;
	unsigned long gap = 0;
	int shift;

	if (nn > MAPLE_RANGE64_SLOTS || (leaf ? nn < MAPLE_RANGE64_MIN : nn == 1 && !entry))
		return false;
	if (gaps) {
		gap = mte_to_node(wr->l[leaf - 1])->ma64.gap[wr->loff[leaf - 1]];
		if (!entry) {
			gap = max(gap, range_len(L, R));	/* the NULL run only grew */
		} else {
			for (i = lo; i <= ro && !rescan; i++) {
				unsigned long smin, smax;

				if (sl[i])
					continue;
				ma_slot_range(piv, np, i, wr->lmin[leaf], wr->lmax[leaf], &smin, &smax);
				rescan = range_len(smin, smax) >= gap;
			}
		}
	}
	mt_vt_step(vt, node, true);
	/*
	 * Move the slots right of @ro, then write the middle. A leaf's last used
	 * slot has the pivot ULONG_MAX (its end is the node's), and slot 15 has
	 * no pivot: so pivots move only up to index 14, and a slot 15 moving
	 * left takes ULONG_MAX with it.
	 */
	shift = (int)nn - (int)(end + 1);
	if (shift > 0) {
		unsigned int d = ro + 1 + (unsigned int)shift;
		unsigned int dend = min(end + (unsigned int)shift, np - 1);

		memmove(&sl[d], &sl[ro + 1], (end - ro) * sizeof(*sl));
		if (dend >= d)
			memmove(&piv[d], &piv[ro + 1], (dend - d + 1) * sizeof(*piv));
	} else if (shift < 0) {
		unsigned int k = (unsigned int)-shift, send = min(end, np - 1);

		memmove(&sl[ro + 1 - k], &sl[ro + 1], (end - ro) * sizeof(*sl));
		if (send > ro)
			memmove(&piv[ro + 1 - k], &piv[ro + 1], (send - ro) * sizeof(*piv));
		if (end == np)
			piv[np - k] = ULONG_MAX;
		for (i = nn; i <= end; i++) {
			sl[i] = NULL;
			if (i < np)
				piv[i] = ULONG_MAX;
		}
	}
	p = lo;
	if (lsplit) {
		piv[p] = L - 1;
		sl[p++] = lval;
	}
	sl[p] = entry;
	if (p < np)
		piv[p] = p + 1 < nn ? R : ULONG_MAX;
	if (rsplit) {
		p++;
		sl[p] = rval;
		if (p < np)
			piv[p] = p + 1 < nn ? rsmax : ULONG_MAX;
	}
	if (gaps) {
		if (rescan)
			gap = ma_leaf_max_gap(node, wr->lmin[leaf], wr->lmax[leaf]);
		wr_update_gaps_h(wr, leaf, gap, vt);
	}
	return true;
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
 * *@Lp. @vt: virtual time may be on (mt_vt_on()); the common paths take it
 * as a constant, the rare ones (rebalance, split, the general path) test it
 * themselves. Context: the tree's write lock.
 * Return: 0 or -ENOMEM (tree unchanged).
 */
static __always_inline int mt_wr_store_t(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp,
					 void *entry, void **oldp, const bool vt)
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
	wr->one_spine = false;
	if (!wr_walk_one(wr, root, L, R, vt))
		wr_walk(wr, root, L, R, vt);
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
			} else if (!wr_sibling_edge(wr, leaf, false, &nL)) {
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
			} else if (!wr_sibling_edge(wr, leaf, true, &nR)) {
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

	/* 1 and 2 outside RCU mode: in place. */
	if (ll == rl && !wr->retire.rcu &&
	    wr_leaf_inplace(wr, leaf, lo, ro, lsmin, rsmax, L, R, entry, vt))
		return 0;

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
				wr_update_gaps_h(wr, leaf, ma_leaf_max_gap(lnode, wr->lmin[leaf],
									    wr->lmax[leaf]), vt);
		}
		return 0;
	}

	/* The leaf level's new content. */
	b.n = 0;
	big_append_t(&b, ll, wr->lmin[leaf], wr->lmax[leaf], 0, (int)lo - 1, vt);
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
	big_append_t(&b, rl, wr->rmin[leaf], wr->rmax[leaf], (int)ro + 1,
		     (int)ma_data_end(rnode->mr64.pivot, np), vt);

	/* 2. The leaf still fits: rewrite it (or publish a copy in RCU mode). */
	if (ll == rl && b.n <= MAPLE_RANGE64_SLOTS &&
	    (b.n >= MAPLE_RANGE64_MIN || (h == 1 && (b.n > 1 || entry)))) {
		unsigned long gap;

		if (!wr->retire.rcu) {
			gap = big_fill_node_h(wr, lnode, maple_leaf_64, &b, 0, b.n, vt);
			wr_update_gaps_h(wr, leaf, gap, vt);
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

	/* Outside RCU mode: one leaf shared with a sibling or split, or two rebalanced, in place. */
	if (ll == rl && b.n > MAPLE_RANGE64_SLOTS &&
	    (wr_push_inplace(wr, leaf, &b) || wr_split_inplace(wr, leaf, &b, lo + (lsmin < L))))
		return 0;
	if (wr->one_spine) {
		/* What follows reads both spines at every level. */
		wr_walk(wr, root, L, R, vt);
		wr->one_spine = false;
	}
	if (ll != rl && wr_span_inplace(wr, leaf, &b))
		return 0;

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

int mt_wr_store_plain(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
		      void **oldp)
{
	return mt_wr_store_t(wr, Lp, Rp, entry, oldp, false);
}

int mt_wr_store_vt(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
		   void **oldp)
{
	return mt_wr_store_t(wr, Lp, Rp, entry, oldp, true);
}
