// SPDX-License-Identifier: MIT
/*
 * maple_write_api.c - the store API of the maple tree on top of
 * mt_wr_store() (maple_write.c): mas_store(), mas_store_gfp(), node
 * preallocation (mas_preallocate(), mas_store_prealloc(), mas_destroy()),
 * mas_erase(), mtree_erase() and __mt_destroy().
 *
 * Invariant: a store prepared with mas_preallocate() takes its nodes from
 * @mas->alloc only; MA_STATE_PREALLOC marks that they are there.
 */
#include <errno.h>
#include <string.h>
#include "maple_wr.h"

/* ---- writing: the API ------------------------------------------------------------------- */

/*
 * One store through mt_wr_store() for @mas (@erase: of the whole range
 * holding mas->index). On success @mas is ma_start with [index, last] the
 * range written - for an erase, the erased entry's range, if there was
 * one; on failure ma_error, with *@old NULL.
 * Return: 0 or -ENOMEM.
 */
static __attribute__((always_inline)) inline int
mas_wr_run(struct ma_state *mas, void *entry, bool erase, void **old)
{
	struct mt_wr wr;
	unsigned long L = mas->index, R = erase ? mas->index : mas->last;
	int ret;

	wr_init(&wr, mas->tree, mas);
	wr.erase = erase;
	ret = mt_wr_store(&wr, &L, &R, entry, old);
	mas->node = NULL;
	if (ret) {
		mas->status = ma_error;
		mas->error = ret;
		*old = NULL;
		return ret;
	}
	mas->status = ma_start;
	if (!erase) {
		mas->index = L;
		mas->last = R;
	} else if (*old) {
		mas->index = wr.erased_min;
		mas->last = wr.erased_max;
	}
	return 0;
}

/* A store's range must not be reversed: the walk would cut a negative range. */
static int mas_bad_range(const char *fn, struct ma_state *mas)
{
	pl_warn_ratelimited("maple: %s: range [%lu, %lu] is reversed", fn, mas->index, mas->last);
	mas->status = ma_error;
	mas->error = -EINVAL;
	return -EINVAL;
}

static __always_inline int mas_wr(struct ma_state *mas, void *entry, void **old)
{
	*old = NULL;
	if (unlikely(mas->index > mas->last))
		return mas_bad_range("mas_store", mas);
	return mas_wr_run(mas, entry, false, old);
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
	unsigned long need;

	(void)gfp;
	if (unlikely(mas->index > mas->last))
		return mas_bad_range(__func__, mas);
	need = mas_prealloc_calc(mas, entry);
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
	void *old;

	if (unlikely(mas->index > mas->last)) {
		mas_bad_range(__func__, mas);
		mas_destroy(mas);
		return;
	}
	if (mas_wr_run(mas, entry, false, &old))
		pl_warn_ratelimited("maple: mas_store_prealloc of [%lu, %lu] ran out of nodes\n",
				    mas->index, mas->last);
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
	void *old = NULL;

	mas_wr_run(mas, NULL, true, &old);
	return old;
}

/* Here rather than with the tree's other calls: the store runs inline in it. */
void *mtree_erase(struct maple_tree *mt, unsigned long index)
{
	MA_STATE(mas, mt, index, index);
	void *old = NULL;

	mtree_lock(mt);
	mas_wr_run(&mas, NULL, true, &old);
	mtree_unlock(mt);
	return old;
}

/* ---- the tree ---------------------------------------------------------------------- */

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
