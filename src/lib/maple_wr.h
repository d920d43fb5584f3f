/* SPDX-License-Identifier: MIT */
/*
 * maple_wr.h - the state of one store, shared by maple_write.c (the write
 * paths) and maple_write_api.c (mas_store, preallocation, mas_erase).
 * Context: the tree's write lock, for everything declared here.
 */
#ifndef PAGELAB_LIB_MAPLE_WR_H
#define PAGELAB_LIB_MAPLE_WR_H

#include "maple_internal.h"

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
	bool one_spine;			/* only l[], loff[] and depth height - 1 were walked */
	unsigned int nr_new, nr_old, nr_sub;
	struct maple_node *new_nodes[MT_WR_NODES];
	unsigned char new_type[MT_WR_NODES];
	struct maple_node *old_nodes[MT_WR_NODES];
	struct maple_enode *subtrees[MT_WR_SUBTREES];
	struct mt_retire retire;
};

/* Set up @wr for one store into @mt, with @mas's preallocated nodes (@mas may be NULL). */
static inline void wr_init(struct mt_wr *wr, struct maple_tree *mt, struct ma_state *mas)
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

/* mt_wr_store() compiled without virtual time, and with it (maple_write.c). */
int mt_wr_store_plain(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
		      void **oldp);
int mt_wr_store_vt(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
		   void **oldp);

/*
 * Store @entry over [*@Lp, *@Rp] (widened over NULL neighbours when @entry is
 * NULL; the final range is written back); *@oldp gets the entry that was at
 * *@Lp. Reads pl_vt_cur once: without virtual time on this thread, the store
 * runs a body with no virtual-time tests.
 * Return: 0 or -ENOMEM (tree unchanged).
 */
static inline int mt_wr_store(struct mt_wr *wr, unsigned long *Lp, unsigned long *Rp, void *entry,
			      void **oldp)
{
	if (mt_vt_on())
		return mt_wr_store_vt(wr, Lp, Rp, entry, oldp);
	return mt_wr_store_plain(wr, Lp, Rp, entry, oldp);
}

/* Retire @enode and everything below it (after a grace period in RCU mode). */
void wr_retire_subtree(struct mt_wr *wr, struct maple_enode *enode);

/* ---- shared by maple_write.c and maple_rebalance.c ---- */

/* Append one entry (its maximum, slot, child's gap, underfull flag) to @b. */
static inline void big_push(struct mt_big *b, unsigned long piv, void *slot, unsigned long gap,
			    bool under)
{
	b->piv[b->n] = piv;
	b->slot[b->n] = slot;
	b->gap[b->n] = gap;
	b->under[b->n] = under;
	b->n++;
}

/* A new node for this store (from @mas's preallocation if it has one); NULL sets wr->failed. */
struct maple_node *wr_alloc(struct mt_wr *wr, enum maple_type type);

/* Append slots [from, to] of @enode (covering [nmin, nmax]) to @b. */
void big_append(struct mt_big *b, struct maple_enode *enode, unsigned long nmin,
		unsigned long nmax, int from, int to);

/* Write entries [s, e) of @b into @node. Return: its largest gap (allocation trees) or 0. */
unsigned long big_fill_node(struct mt_wr *wr, struct maple_node *node, enum maple_type type,
			    const struct mt_big *b, unsigned int s, unsigned int e);

/* The node on the left spine at @depth now has largest gap @gap: tell its ancestors. */
void wr_update_gaps(struct mt_wr *wr, unsigned int depth, unsigned long gap);

/*
 * Outside RCU mode, the in-place alternatives to the general path
 * (maple_rebalance.c). Return: false, nothing changed, if the store has to
 * take the general path.
 */
bool wr_span_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b);
bool wr_push_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b);
bool wr_split_inplace(struct mt_wr *wr, unsigned int leaf, const struct mt_big *b, unsigned int at);

#endif /* PAGELAB_LIB_MAPLE_WR_H */
