/* SPDX-License-Identifier: MIT */
/*
 * rbtree.h - red-black trees with optional augmentation, with the kernel's
 * names and calling conventions (include/linux/rbtree{,_augmented}.h), our
 * own implementation (src/lib/rbtree.c).
 *
 * The tree is intrusive: embed a struct rb_node in your object, walk down
 * yourself to find the link (rb_link_node), then rebalance
 * (rb_insert_color, or rb_insert_augmented). The node's parent pointer and
 * colour share one word (nodes are at least 4-byte aligned), so a node is
 * three words, as in the kernel.
 *
 * Invariants (checked by rb_check() in tests):
 *  - the root is black; a red node has no red child;
 *  - every path from a node down to a NULL link passes the same number of
 *    black nodes;
 *  - each child's parent pointer points back at its parent.
 *
 * Augmented trees: each node caches a value computed from itself and its
 * children's cached values (e.g. the maximum of a field over the subtree).
 * The three callbacks keep it right:
 *  - propagate(node, stop): recompute from @node upward, stopping before
 *    @stop or as soon as a node's value comes out unchanged;
 *  - copy(old, new): @new takes @old's value (@new replaces @old in place);
 *  - rotate(old, new): @new became the root of @old's subtree: it takes
 *    @old's value, and @old's is recomputed.
 * Insertion: the caller makes the values on the path to the new leaf
 * include the new node before rb_insert_augmented() (for a maximum: raise
 * the ancestors). Erasure: rb_erase_augmented() does all the work.
 */
#ifndef PAGELAB_LIB_RBTREE_H
#define PAGELAB_LIB_RBTREE_H

#include <stdbool.h>
#include <stddef.h>
#include "pagelab/compiler.h"
#include "pagelab/base.h"	/* vtime.h: the tree walks charge virtual time */

#define RB_RED		0UL
#define RB_BLACK	1UL

struct rb_node {
	unsigned long __rb_parent_color;
	struct rb_node *rb_right;
	struct rb_node *rb_left;
} __attribute__((aligned(sizeof(long))));

struct rb_root {
	struct rb_node *rb_node;
};

#define RB_ROOT ((struct rb_root){ NULL })

#define rb_entry(ptr, type, member) container_of(ptr, type, member)
#define rb_entry_safe(ptr, type, member) \
	({ __typeof__(ptr) ____p = (ptr); ____p ? rb_entry(____p, type, member) : NULL; })

static inline struct rb_node *rb_parent(const struct rb_node *n)
{
	return (struct rb_node *)(n->__rb_parent_color & ~3UL);
}

static inline unsigned long rb_color(const struct rb_node *n) { return n->__rb_parent_color & 1UL; }
static inline bool rb_is_red(const struct rb_node *n) { return rb_color(n) == RB_RED; }
static inline bool rb_is_black(const struct rb_node *n) { return rb_color(n) == RB_BLACK; }

#define RB_EMPTY_ROOT(root) (READ_ONCE((root)->rb_node) == NULL)
/* A node not in any tree points at itself (RB_CLEAR_NODE). */
#define RB_EMPTY_NODE(node) ((node)->__rb_parent_color == (unsigned long)(node))
#define RB_CLEAR_NODE(node) ((node)->__rb_parent_color = (unsigned long)(node))

/**
 * rb_link_node() - hang @node, red and childless, at @rb_link under @parent.
 * Follow with rb_insert_color() or rb_insert_augmented().
 */
static inline void rb_link_node(struct rb_node *node, struct rb_node *parent,
				struct rb_node **rb_link)
{
	node->__rb_parent_color = (unsigned long)parent; /* red */
	node->rb_left = node->rb_right = NULL;
	WRITE_ONCE(*rb_link, node);
}

struct rb_augment_callbacks {
	void (*propagate)(struct rb_node *node, struct rb_node *stop);
	void (*copy)(struct rb_node *old, struct rb_node *new);
	void (*rotate)(struct rb_node *old, struct rb_node *new);
};

/** rb_insert_color() - rebalance after rb_link_node(). */
void rb_insert_color(struct rb_node *node, struct rb_root *root);
/** rb_erase() - unlink @node and rebalance. @node is left RB_CLEAR_NODE'd. */
void rb_erase(struct rb_node *node, struct rb_root *root);
/** rb_insert_augmented() - rb_insert_color() keeping augmented values. */
void rb_insert_augmented(struct rb_node *node, struct rb_root *root,
			 const struct rb_augment_callbacks *augment);
/** rb_erase_augmented() - rb_erase() keeping augmented values. */
void rb_erase_augmented(struct rb_node *node, struct rb_root *root,
			const struct rb_augment_callbacks *augment);

struct rb_node *rb_first(const struct rb_root *root);
struct rb_node *rb_last(const struct rb_root *root);
struct rb_node *rb_next(const struct rb_node *node);
struct rb_node *rb_prev(const struct rb_node *node);

/**
 * rb_check() - verify the red-black invariants of @root (not the order of
 * keys or augmented values: the user checks those).
 * Return: the black height (>= 1), or -1 if an invariant is broken.
 */
int rb_check(const struct rb_root *root);

/*
 * RB_DECLARE_CALLBACKS_MAX() - callbacks for "@augmented = maximum of
 * @compute(node) over the subtree", the kernel's macro of the same name:
 * declares @rbname (struct rb_augment_callbacks) and @rbname##_compute_max().
 */
#define RB_DECLARE_CALLBACKS_MAX(rbstatic, rbname, rbstruct, rbfield, rbtype, rbaugmented,	\
				 rbcompute)						\
static inline bool rbname##_compute_max(rbstruct *node, bool exit)			\
{											\
	rbtype m = rbcompute(node);							\
	pl_vt_step(VT_P_RB_NODE, &node->rbfield, false);				\
	if (node->rbfield.rb_left) {							\
		rbstruct *c = rb_entry(node->rbfield.rb_left, rbstruct, rbfield);	\
		if (c->rbaugmented > m)							\
			m = c->rbaugmented;						\
	}										\
	if (node->rbfield.rb_right) {							\
		rbstruct *c = rb_entry(node->rbfield.rb_right, rbstruct, rbfield);	\
		if (c->rbaugmented > m)							\
			m = c->rbaugmented;						\
	}										\
	if (exit && node->rbaugmented == m)						\
		return true;								\
	pl_vt_touch(node, true);							\
	node->rbaugmented = m;								\
	return false;									\
}											\
static void rbname##_propagate(struct rb_node *rb, struct rb_node *stop)		\
{											\
	while (rb != stop) {								\
		rbstruct *node = rb_entry(rb, rbstruct, rbfield);			\
		if (rbname##_compute_max(node, true))					\
			break;								\
		rb = rb_parent(&node->rbfield);						\
	}										\
}											\
static void rbname##_copy(struct rb_node *rb_old, struct rb_node *rb_new)		\
{											\
	rb_entry(rb_new, rbstruct, rbfield)->rbaugmented =				\
		rb_entry(rb_old, rbstruct, rbfield)->rbaugmented;			\
}											\
static void rbname##_rotate(struct rb_node *rb_old, struct rb_node *rb_new)		\
{											\
	rbstruct *old = rb_entry(rb_old, rbstruct, rbfield);				\
	rbstruct *new = rb_entry(rb_new, rbstruct, rbfield);				\
	new->rbaugmented = old->rbaugmented;						\
	rbname##_compute_max(old, false);						\
}											\
rbstatic const struct rb_augment_callbacks rbname = {					\
	.propagate = rbname##_propagate,						\
	.copy = rbname##_copy,								\
	.rotate = rbname##_rotate							\
}

#endif /* PAGELAB_LIB_RBTREE_H */
