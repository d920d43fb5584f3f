// SPDX-License-Identifier: MIT
/*
 * vmap_index_rb.c - the augmented-rbtree implementation of the vmap_area
 * index (enum vmap_index VMAP_INDEX_RBTREE), as mm/vmalloc.c of 6.18 keeps
 * it.
 *
 * Free space: an rbtree keyed by address whose nodes cache
 * subtree_max_size = max(va_size(node), subtree_max_size(left),
 * subtree_max_size(right)), so the lowest free area that can hold a request
 * is found in one descent:
 *
 *                 [A: 16 | max 64]
 *                 /               \
 *       [B: 8 | max 8]      [C: 4 | max 64]
 *                                 \
 *                           [D: 64 | max 64]
 *
 * A request of 32 pages skips B's subtree (max 8), rejects A and C
 * themselves (16 and 4 pages) and ends in D. Beside the tree an
 * address-ordered list gives each area's neighbours in O(1), which is how
 * a freed area merges with the free areas on either side.
 *
 * Busy and lazy sets: plain rbtrees by address plus their lists.
 *
 * Virtual time: every node a search, a descent to a link or a maximum's
 * propagation visits is one VT_P_RB_NODE step on that node's line (read,
 * or written where the value changes), under the lock the caller holds;
 * rbtree.c charges the rotations and fixups. The hold time of
 * free_vmap_area_lock is then the search the tree's shape asks for.
 *
 * Invariants (check_free / check_set): rbtree colours and black height;
 * in-order walk strictly ascending with no overlap, equal to the list;
 * every subtree_max_size exact; in the free space no two areas touch.
 */
#include <stdio.h>
#include "vmap_area.h"

static inline struct vmap_area *rb_va(struct rb_node *n)
{
	return n ? &rb_entry(n, struct vmap_area_rb, rb_node)->va : NULL;
}

/* The rb_node of @va: the rbtree index allocates struct vmap_area_rb. */
static inline struct rb_node *va_rb(struct vmap_area *va)
{
	return &container_of(va, struct vmap_area_rb, va)->rb_node;
}

static inline unsigned long va_rb_size(struct vmap_area_rb *v)
{
	return va_size(&v->va);
}

static inline unsigned long get_subtree_max_size(struct rb_node *node)
{
	return node ? rb_va(node)->subtree_max_size : 0;
}

RB_DECLARE_CALLBACKS_MAX(static, free_vmap_area_rb_augment_cb, struct vmap_area_rb, rb_node,
			 unsigned long, va.subtree_max_size, va_rb_size);

/*
 * find_va_links() - the link where @va goes in @rl's tree, and its parent.
 * An overlap is the kernel's WARN "vmalloc bug: ... overlaps with ...":
 * the indexes are corrupt, and the caller refuses the insert. A WARN, not
 * a VM_WARN: checked at every debug level (one compare on a path that
 * has already failed).
 * Return: the link, or NULL if @va overlaps an area already there.
 */
static struct rb_node **find_va_links(struct vmap_area *va, struct rb_list *rl,
				      struct rb_node **parent)
{
	struct rb_node **link = &rl->root.rb_node, *p = NULL;

	*parent = NULL;
	while (*link) {
		struct vmap_area *tmp = rb_va(*link);

		pl_vt_step(VT_P_RB_NODE, tmp, false);
		p = *link;
		if (va->va_end <= tmp->va_start)
			link = &p->rb_left;
		else if (va->va_start >= tmp->va_end)
			link = &p->rb_right;
		else {
			PL_WARN_ON(true, va->va_end > tmp->va_start &&
						 va->va_start < tmp->va_end);
			return NULL;
		}
	}
	*parent = p;
	return link;
}

/* The list position @va takes: before its in-order successor. */
static struct list_head *get_va_next_sibling(struct rb_node *parent, struct rb_node **link,
					     struct list_head *head)
{
	struct rb_node *next;

	if (!parent)
		return head;	/* empty tree: the list's end */
	if (link == &parent->rb_right) {
		next = rb_next(parent);
		if (next)
			pl_vt_step(VT_P_RB_NODE, rb_va(next), false);
		return next ? &rb_va(next)->list : head;
	}
	return &rb_va(parent)->list;
}

static void link_va(struct vmap_area *va, struct rb_list *rl, struct rb_node *parent,
		    struct rb_node **link, bool augment)
{
	struct list_head *next = get_va_next_sibling(parent, link, &rl->head);

	if (augment) {
		/*
		 * Make the path to the new leaf include it first (raising a
		 * maximum stops at the first ancestor already as large), then
		 * rebalance: the rotations keep every value exact.
		 */
		unsigned long size = va_size(va);

		va->subtree_max_size = size;
		for (struct rb_node *n = parent; n && rb_va(n)->subtree_max_size < size;
		     n = rb_parent(n)) {
			pl_vt_step(VT_P_RB_NODE, rb_va(n), true);
			rb_va(n)->subtree_max_size = size;
		}
		rb_link_node(va_rb(va), parent, link);
		rb_insert_augmented(va_rb(va), &rl->root, &free_vmap_area_rb_augment_cb);
	} else {
		rb_link_node(va_rb(va), parent, link);
		rb_insert_color(va_rb(va), &rl->root);
	}
	pl_vt_touch(va, true);
	list_add_tail(&va->list, next);	/* i.e. just before @next */
}

/*
 * unlink_va() - take @va out of @rl's tree and list. An area in no tree
 * (already unlinked: its node RB_CLEAR_NODE'd by the erase) is the
 * kernel's WARN_ON(RB_EMPTY_NODE()) in __unlink_va(): nothing is changed.
 * A WARN_ON, not a VM_WARN_ON: checked at every debug level.
 */
static void unlink_va(struct vmap_area *va, struct rb_list *rl, bool augment)
{
	if (PL_WARN_ON(true, RB_EMPTY_NODE(va_rb(va))))
		return;
	if (augment)
		rb_erase_augmented(va_rb(va), &rl->root, &free_vmap_area_rb_augment_cb);
	else
		rb_erase(va_rb(va), &rl->root);
	list_del(&va->list);
}

/* A free area's size changed: recompute the path to the root. */
static inline void augment_tree_propagate_from(struct vmap_area *va)
{
	free_vmap_area_rb_augment_cb.propagate(va_rb(va), NULL);
}

/* ---- busy and lazy sets -------------------------------------------------- */

static int rb_set_insert(struct rb_list *set, struct vmap_area *va)
{
	struct rb_node *parent;
	struct rb_node **link = find_va_links(va, set, &parent);

	if (!link)
		return -EEXIST;
	link_va(va, set, parent, link, false);
	return 0;
}

static struct vmap_area *rb_set_find(struct rb_list *set, unsigned long addr)
{
	struct rb_node *n = set->root.rb_node;

	while (n) {
		struct vmap_area *va = rb_va(n);

		pl_vt_step(VT_P_RB_NODE, va, false);
		if (addr < va->va_start)
			n = n->rb_left;
		else if (addr >= va->va_end)
			n = n->rb_right;
		else
			return va;
	}
	return NULL;
}

static void rb_set_unlink(struct rb_list *set, struct vmap_area *va)
{
	unlink_va(va, set, false);
}

static struct vmap_area *rb_set_find_unlink(struct rb_list *set, unsigned long addr,
					    unsigned long want)
{
	struct vmap_area *va = rb_set_find(set, addr);

	if (va && va_unlink_refused(va, addr, want))
		return ERR_AREA;
	if (va)
		unlink_va(va, set, false);
	return va;
}

static void rb_reset(struct rb_list *rl)
{
	WRITE_ONCE(rl->root.rb_node, NULL);
}

static int rb_init(struct rb_list *rl, enum vmap_set_kind kind)
{
	(void)kind;
	rb_reset(rl);
	return 0;
}

static void rb_destroy(struct rb_list *rl)
{
	(void)rl;
}

/* ---- the free space ------------------------------------------------------ */

/*
 * is_within_this_va() - can [ALIGN(max(va_start, vstart), align), +size)
 * be carved out of @va?
 */
static inline bool is_within_this_va(struct vmap_area *va, unsigned long size,
				     unsigned long align, unsigned long vstart)
{
	unsigned long nva_start = va->va_start > vstart ? va->va_start : vstart;

	nva_start = (nva_start + align - 1) & ~(align - 1);
	if (nva_start < vstart || nva_start + size < nva_start)
		return false;	/* the alignment or the size wrapped around */
	return nva_start + size <= va->va_end;
}

/*
 * find_vmap_lowest_match() - the lowest free area that can hold the
 * request. Descend left while the left subtree is big enough and may hold
 * addresses at or above @vstart; otherwise try the node, then its right
 * subtree; when a subtree is exhausted climb back, trying each parent and
 * its right subtree (raising @vstart past the parent so the subtree just
 * searched is not entered again).
 */
static struct vmap_area *rb_find_vmap_lowest_match(struct rb_list *fs, unsigned long size,
						   unsigned long align, unsigned long vstart,
						   unsigned long vend, bool adjust)
{
	unsigned long length = adjust ? size + align - 1 : size;
	struct rb_node *node = fs->root.rb_node;

	(void)vend;
	if (adjust && length < size)
		return NULL;	/* size + align overflows: nothing can hold it */
	while (node) {
		struct vmap_area *va = rb_va(node);

		pl_vt_step(VT_P_RB_NODE, va, false);
		if (get_subtree_max_size(node->rb_left) >= length && vstart < va->va_start) {
			node = node->rb_left;
			continue;
		}
		if (is_within_this_va(va, size, align, vstart))
			return va;
		if (get_subtree_max_size(node->rb_right) >= length) {
			node = node->rb_right;
			continue;
		}
		/* Climb: every node here is either rejected or searched. */
		while ((node = rb_parent(node))) {
			va = rb_va(node);
			pl_vt_step(VT_P_RB_NODE, va, false);
			if (is_within_this_va(va, size, align, vstart))
				return va;
			if (get_subtree_max_size(node->rb_right) >= length &&
			    vstart <= va->va_start) {
				vstart = va->va_start + 1;
				node = node->rb_right;
				break;
			}
		}
	}
	return NULL;
}

static int rb_va_clip(struct vmap_space *vs, struct rb_list *fs, struct vmap_area *va,
		      unsigned long nva_start, unsigned long size)
{
	struct vmap_area *lva;

	pl_vt_touch(va, true);
	switch (classify_va_fit_type(va, nva_start, size)) {
	case FL_FIT_TYPE:
		/*
		 * No free space is left in @va: drop it.
		 *   |<----- va ----->|
		 *   |<---- nva ----->|
		 */
		unlink_va(va, fs, true);
		va_cache_free(vs, va);
		return 0;
	case LE_FIT_TYPE:
		/*   |<----- va ----->|
		 *   |<- nva ->|          va keeps the right part */
		va->va_start += size;
		break;
	case RE_FIT_TYPE:
		/*   |<----- va ----->|
		 *            |<- nva ->| va keeps the left part */
		va->va_end = nva_start;
		break;
	case NE_FIT_TYPE:
		/*   |<------- va ------->|
		 *   | lva |<- nva ->|  va |   a second area for the left part */
		lva = ne_fit_spare(vs);
		if (!lva)
			return -ENOMEM;
		lva->va_start = va->va_start;
		lva->va_end = nva_start;
		va->va_start = nva_start + size;
		augment_tree_propagate_from(va);
		{
			struct rb_node *parent;
			struct rb_node **link = find_va_links(lva, fs, &parent);

			if (!link) {	/* the kernel's insert_vmap_area_augment(): no insert */
				va_cache_free(vs, lva);
				return -EINVAL;
			}
			link_va(lva, fs, parent, link, true);
		}
		return 0;
	default:
		return -EINVAL;
	}
	augment_tree_propagate_from(va);
	return 0;
}

static struct vmap_area *rb_merge_or_add(struct vmap_space *vs, struct rb_list *fs,
					 struct vmap_area *va)
{
	struct rb_node *parent, **link;
	struct list_head *next_pos;
	struct vmap_area *sibling;
	bool merged = false;

	if (va->va_start >= va->va_end)
		return NULL;
	link = find_va_links(va, fs, &parent);
	if (!link) {
		pl_warn_ratelimited("vmalloc: freed area [%#lx, %#lx) overlaps a free area",
				    va->va_start, va->va_end);
		return NULL;
	}
	next_pos = get_va_next_sibling(parent, link, &fs->head);

	/* The next free area starts where @va ends: it grows down over @va. */
	if (next_pos != &fs->head) {
		sibling = list_entry(next_pos, struct vmap_area, list);
		pl_vt_touch(sibling, false);
		if (sibling->va_start == va->va_end) {
			pl_vt_touch(sibling, true);
			sibling->va_start = va->va_start;
			va_cache_free(vs, va);
			va = sibling;
			merged = true;
		}
	}
	/* The previous one ends where @va starts: it grows up over @va. */
	if (next_pos->prev != &fs->head) {
		sibling = list_entry(next_pos->prev, struct vmap_area, list);
		pl_vt_touch(sibling, false);
		if (sibling->va_end == va->va_start) {
			pl_vt_touch(sibling, true);
			/*
			 * If @va already merged with the next area, that area
			 * goes: unlink it before the previous one changes.
			 */
			if (merged)
				unlink_va(va, fs, true);
			sibling->va_end = va->va_end;
			va_cache_free(vs, va);
			va = sibling;
			merged = true;
		}
	}
	if (!merged)
		link_va(va, fs, parent, link, true);
	else
		augment_tree_propagate_from(va);
	return va;
}

/* ---- checks ----------------------------------------------------------------- */

static int check_rb_list(struct rb_list *rl, bool augment,
			 void (*report)(void *ctx, const char *msg), void *ctx)
{
	struct list_head *pos = rl->head.next;
	struct vmap_area *prev = NULL;
	char msg[160];
	int errors = 0;

	if (rb_check(&rl->root) < 0) {
		report(ctx, "rbtree colours or black height broken");
		errors++;
	}
	for (struct rb_node *n = rb_first(&rl->root); n; n = rb_next(n)) {
		struct vmap_area *va = rb_va(n);

		if (pos == &rl->head || pos != &va->list) {
			snprintf(msg, sizeof(msg), "list and tree disagree at [%#lx, %#lx)",
				 va->va_start, va->va_end);
			report(ctx, msg);
			return errors + 1;
		}
		pos = pos->next;
		if (va->va_start >= va->va_end || (prev && prev->va_end > va->va_start) ||
		    (augment && prev && prev->va_end == va->va_start)) {
			snprintf(msg, sizeof(msg), "area [%#lx, %#lx) empty, overlapping or touching "
				 "its predecessor", va->va_start, va->va_end);
			report(ctx, msg);
			errors++;
		}
		if (augment) {
			unsigned long m = va_size(va);

			if (get_subtree_max_size(n->rb_left) > m)
				m = get_subtree_max_size(n->rb_left);
			if (get_subtree_max_size(n->rb_right) > m)
				m = get_subtree_max_size(n->rb_right);
			if (va->subtree_max_size != m) {
				snprintf(msg, sizeof(msg), "free area [%#lx, %#lx): subtree_max_size "
					 "%#lx, should be %#lx", va->va_start, va->va_end,
					 va->subtree_max_size, m);
				report(ctx, msg);
				errors++;
			}
		}
		prev = va;
	}
	if (pos != &rl->head) {
		report(ctx, "list holds areas the tree does not");
		errors++;
	}
	return errors;
}

static int rb_check_free(struct rb_list *fs, void (*report)(void *ctx, const char *msg), void *ctx)
{
	return check_rb_list(fs, true, report, ctx);
}

static int rb_check_set(struct rb_list *set, void (*report)(void *ctx, const char *msg), void *ctx)
{
	return check_rb_list(set, false, report, ctx);
}

const struct vmap_index_ops vmap_index_rbtree_ops = {
	.name = "rbtree",
	.find_vmap_lowest_match = rb_find_vmap_lowest_match,
	.va_clip = rb_va_clip,
	.merge_or_add = rb_merge_or_add,
	.insert = rb_set_insert,
	.find = rb_set_find,
	.unlink = rb_set_unlink,
	.find_unlink = rb_set_find_unlink,
	.init = rb_init,
	.destroy = rb_destroy,
	.reset = rb_reset,
	.retry = NULL,
	.merge_list = NULL,
	.parked = NULL,
	.va_objsize = sizeof(struct vmap_area_rb),
	.check_free = rb_check_free,
	.check_set = rb_check_set,
};
