// SPDX-License-Identifier: MIT
/*
 * maple_rebalance.c - outside RCU mode, the stores that would otherwise
 * rebuild leaves and their parent as new nodes are done where the nodes are
 * (see the write paths at the top of maple_tree.c):
 *  - wr_span_inplace: a store over two adjacent leaves rewrites both and
 *    moves the one pivot that separates them;
 *  - wr_push_inplace: a leaf one or two slots too full shares with a sibling
 *    that has room;
 *  - wr_split_inplace: else it splits into one new leaf, opened beside it in
 *    the parent when the parent has room.
 * Invariants kept: every leaf between its minimum fill and 16 slots, no two
 * adjacent NULL ranges, gap[] exact up to the root, parent words naming the
 * slot. Each function changes nothing when it returns false.
 * Context: the tree's write lock, and no RCU reader (mt_in_rcu() is false).
 */
#include "maple_wr.h"

/*
 * Write @c into two leaves: @ln its first @k entries, @rn the rest.
 * Return: the pivot between them; their largest gaps in *@gl and *@gr.
 */
static unsigned long cut_into_leaves(struct mt_wr *wr, const struct mt_big *c, unsigned int k,
				     struct maple_node *ln, struct maple_node *rn,
				     unsigned long *gl, unsigned long *gr)
{
	*gl = big_fill_node(wr, ln, maple_leaf_64, c, 0, k);
	*gr = big_fill_node(wr, rn, maple_leaf_64, c, k, c->n);
	return c->piv[k - 1];
}

/*
 * Slots @i and @i + 1 of the left-spine node at @depth now hold children
 * whose largest gaps are @gl and @gr: store them and tell the ancestors.
 */
static void wr_pair_gaps(struct mt_wr *wr, unsigned int depth, unsigned int i, unsigned long gl,
			 unsigned long gr)
{
	struct maple_node *pn = mte_to_node(wr->l[depth]);

	if (!wr->alloc)
		return;
	pl_vt_step(VT_P_MT_NODE, pn, true);
	ma_store_gap(&pn->ma64.gap[i], gl);
	ma_store_gap(&pn->ma64.gap[i + 1], gr);
	wr_update_gaps(wr, depth, ma_arange_max_gap(pn));
}

/*
 * Outside RCU mode, the leaf level's new content @b, for a store over two
 * adjacent leaves (an erase widened over a NULL neighbour across the leaf
 * boundary), is written back into the same two leaves, cut in the middle:
 * only the pivot that separates them moves, at the depth where the spines
 * part. Every node on the left spine below that depth ends in the slot on
 * the spine, and every one on the right spine starts in it, so their edges
 * are implied by that pivot. The halving also rebalances the two leaves
 * (the kernel's mas_rebalance() moves entries between neighbours the same
 * way). Nothing is allocated, freed or re-parented.
 * Return: false (nothing changed) if this store has to take the general path.
 */
bool wr_span_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b)
{
	unsigned int lca = wr->lca;
	struct maple_enode *pe = wr->l[lca];
	unsigned long gl, gr, pivot;

	if (wr->retire.rcu || lca >= leaf || wr->roff[lca] != wr->loff[lca] + 1 ||
	    wr->lmax[leaf] + 1 != wr->rmin[leaf] ||
	    b->n < 2 * MAPLE_RANGE64_MIN || b->n > 2 * MAPLE_RANGE64_SLOTS ||
	    b->min != wr->lmin[leaf] || b->piv[b->n - 1] != wr->rmax[leaf])
		return false;
	pivot = cut_into_leaves(wr, b, b->n / 2, mte_to_node(wr->l[leaf]), mte_to_node(wr->r[leaf]),
				&gl, &gr);
	ma_pivots(mte_to_node(pe), mte_node_type(pe))[wr->loff[lca]] = pivot;
	/* Each spine below the parting node ends (starts) in its slot: its gap is the child's. */
	for (unsigned int d = leaf - 1; wr->alloc && d > lca; d--) {
		struct maple_node *l = mte_to_node(wr->l[d]), *r = mte_to_node(wr->r[d]);

		ma_store_gap(&l->ma64.gap[wr->loff[d]], gl);
		ma_store_gap(&r->ma64.gap[wr->roff[d]], gr);
		gl = ma_arange_max_gap(l);
		gr = ma_arange_max_gap(r);
	}
	wr_pair_gaps(wr, lca, wr->loff[lca], gl, gr);
	return true;
}

/*
 * Outside RCU mode, a leaf whose new content @b is one or two entries too
 * many first tries to share with a sibling that has room, as the kernel's
 * mas_push_data() does before splitting: the two leaves' entries are cut in
 * the middle and only the pivot between them in the parent moves. The left
 * sibling is tried first. Keeps leaves fuller than splitting would, and
 * allocates nothing.
 * Return: false (nothing changed) if neither sibling has room.
 */
bool wr_push_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b)
{
	struct maple_node *ln = mte_to_node(wr->l[leaf]), *pn, *sn;
	struct maple_enode *sib;
	enum maple_type pt;
	unsigned long *ppiv, smin, smax, gl, gr;
	unsigned int off, np, send;
	struct mt_big c;
	bool left;

	if (wr->retire.rcu || !leaf || b->min != wr->lmin[leaf] || b->piv[b->n - 1] != wr->lmax[leaf])
		return false;
	pn = mte_to_node(wr->l[leaf - 1]);
	pt = mte_node_type(wr->l[leaf - 1]);
	np = mt_pivots[pt];
	ppiv = ma_pivots(pn, pt);
	off = wr->loff[leaf - 1];
	for (int side = 0; side < 2; side++) {
		left = !side;
		if (left ? !off : ma_is_last(ppiv, np, off))
			continue;
		sib = ma_slots(pn, pt)[left ? off - 1 : off + 1];
		send = ma_data_end(mte_to_node(sib)->mr64.pivot, MAPLE_RANGE64_SLOTS - 1);
		if (send + 1 + b->n > 2 * MAPLE_RANGE64_SLOTS - 2)
			continue;
		ma_slot_range(ppiv, np, left ? off - 1 : off + 1, wr->lmin[leaf - 1],
			      wr->lmax[leaf - 1], &smin, &smax);
		c.n = 0;
		if (left)
			big_append(&c, sib, smin, smax, 0, (int)send);
		else
			c.min = b->min;
		for (unsigned int i = 0; i < b->n; i++)
			big_push(&c, b->piv[i], b->slot[i], 0, false);
		if (!left)
			big_append(&c, sib, smin, smax, 0, (int)send);
		sn = mte_to_node(sib);
		ppiv[left ? off - 1 : off] = cut_into_leaves(wr, &c, c.n / 2, left ? sn : ln,
							     left ? ln : sn, &gl, &gr);
		wr_pair_gaps(wr, leaf - 1, left ? off - 1 : off, gl, gr);
		return true;
	}
	return false;
}

/*
 * Outside RCU mode, a leaf whose new content @b is one or two entries too
 * many is split in place: it keeps the first half, a new leaf takes the rest
 * and goes into the parent right after it, if the parent has room. The
 * children moved one slot right get their parent words (which hold the slot)
 * again. One node is allocated, none is replaced.
 * Return: false (nothing changed) if this store has to take the general path.
 */
bool wr_split_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b,
			     unsigned int at)
{
	struct maple_node *ln = mte_to_node(wr->l[leaf]), *pn, *node;
	enum maple_type pt;
	unsigned int off, end, np, k = at + 3 >= b->n ? b->n - MAPLE_RANGE64_MIN : b->n / 2;
	unsigned long *piv, *gaps, gl, gr;
	void **slots;

	if (wr->retire.rcu || !leaf || b->n > 2 * MAPLE_RANGE64_SLOTS ||
	    b->min != wr->lmin[leaf] || b->piv[b->n - 1] != wr->lmax[leaf])
		return false;
	pn = mte_to_node(wr->l[leaf - 1]);
	pt = mte_node_type(wr->l[leaf - 1]);
	np = mt_pivots[pt];
	piv = ma_pivots(pn, pt);
	end = ma_data_end(piv, np);
	if (end + 1 >= mt_slots[pt])
		return false;		/* the parent is full: the general path splits it too */
	node = wr_alloc(wr, maple_leaf_64);
	if (!node)
		return false;
	/* Open slot off + 1 in the parent; its old last pivot (ULONG_MAX) moves along. */
	slots = ma_slots(pn, pt);
	gaps = ma_gaps(pn, pt);
	off = wr->loff[leaf - 1];
	for (unsigned int i = end; i > off; i--) {
		slots[i + 1] = slots[i];
		if (i + 1 < np)
			piv[i + 1] = piv[i];
		if (gaps)
			gaps[i + 1] = gaps[i];
		ma_set_parent(mte_to_node(slots[i + 1]), ma_mk_parent(pn, i + 1));
	}
	if (off + 1 < np)
		piv[off + 1] = piv[off];
	piv[off] = cut_into_leaves(wr, b, k, ln, node, &gl, &gr);
	ma_set_parent(node, ma_mk_parent(pn, off + 1));
	slots[off + 1] = mt_mk_node(node, maple_leaf_64);
	wr_pair_gaps(wr, leaf - 1, off, gl, gr);
	return true;
}
