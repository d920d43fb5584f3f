// SPDX-License-Identifier: MIT
/*
 * rbtree.c - red-black tree rebalancing, plain and augmented (see rbtree.h
 * for the API and the invariants).
 *
 * Insertion and erasure follow the textbook algorithms (insert: recolour
 * while the uncle is red, then at most two rotations; erase: splice out the
 * node or its in-order successor, then fix a missing black with at most
 * three rotations). Every rotation reports itself to the augment callbacks,
 * and erase recomputes the values on the path from the spliced position to
 * the root, so an augmented tree stays exact.
 *
 * Virtual time (vtime.h): each rotation, each step of a fixup loop and
 * each node of the successor search is one VT_P_RB_NODE step on the node
 * it rewrites or reads; the augmented callbacks charge their own.
 *
 * Colour and parent share __rb_parent_color: bit 0 is the colour (0 red,
 * 1 black), the rest the parent's address. Child pointers are stored with
 * WRITE_ONCE so a lockless reader never sees a torn pointer (it may still
 * see a tree mid-rotation: readers need the tree's lock for a right answer).
 */
#include "rbtree.h"

static inline void rb_set_parent(struct rb_node *n, struct rb_node *p)
{
	n->__rb_parent_color = rb_color(n) | (unsigned long)p;
}

static inline void rb_set_parent_color(struct rb_node *n, struct rb_node *p, unsigned long color)
{
	n->__rb_parent_color = (unsigned long)p | color;
}

static inline void rb_set_color(struct rb_node *n, unsigned long color)
{
	n->__rb_parent_color = (n->__rb_parent_color & ~1UL) | color;
}

static inline bool node_is_black(const struct rb_node *n) { return !n || rb_is_black(n); }

/* In @parent (or at the root if NULL), replace child @old by @new. */
static inline void change_child(struct rb_node *old, struct rb_node *new, struct rb_node *parent,
				struct rb_root *root)
{
	if (!parent)
		WRITE_ONCE(root->rb_node, new);
	else if (parent->rb_left == old)
		WRITE_ONCE(parent->rb_left, new);
	else
		WRITE_ONCE(parent->rb_right, new);
}

static void noop_propagate(struct rb_node *node, struct rb_node *stop)
{
	(void)node;
	(void)stop;
}

static void noop_pair(struct rb_node *old, struct rb_node *new)
{
	(void)old;
	(void)new;
}

static const struct rb_augment_callbacks noop_callbacks = {
	.propagate = noop_propagate,
	.copy = noop_pair,
	.rotate = noop_pair,
};

/*
 *      x                y
 *     / \              / \
 *    a   y    ==>     x   c
 *       / \          / \
 *      b   c        a   b
 */
static void rotate_left(struct rb_node *x, struct rb_root *root,
			const struct rb_augment_callbacks *aug)
{
	struct rb_node *y = x->rb_right, *p = rb_parent(x);

	pl_vt_step(VT_P_RB_NODE, x, true);
	pl_vt_step(VT_P_RB_NODE, y, true);
	WRITE_ONCE(x->rb_right, y->rb_left);
	if (y->rb_left)
		rb_set_parent(y->rb_left, x);
	rb_set_parent(y, p);
	change_child(x, y, p, root);
	WRITE_ONCE(y->rb_left, x);
	rb_set_parent(x, y);
	aug->rotate(x, y);
}

/* The mirror image of rotate_left(). */
static void rotate_right(struct rb_node *x, struct rb_root *root,
			 const struct rb_augment_callbacks *aug)
{
	struct rb_node *y = x->rb_left, *p = rb_parent(x);

	pl_vt_step(VT_P_RB_NODE, x, true);
	pl_vt_step(VT_P_RB_NODE, y, true);
	WRITE_ONCE(x->rb_left, y->rb_right);
	if (y->rb_right)
		rb_set_parent(y->rb_right, x);
	rb_set_parent(y, p);
	change_child(x, y, p, root);
	WRITE_ONCE(y->rb_right, x);
	rb_set_parent(x, y);
	aug->rotate(x, y);
}

static void insert_fixup(struct rb_node *node, struct rb_root *root,
			 const struct rb_augment_callbacks *aug)
{
	for (;;) {
		struct rb_node *parent = rb_parent(node), *gparent, *uncle;

		pl_vt_step(VT_P_RB_NODE, node, true);

		if (!parent) {
			rb_set_color(node, RB_BLACK);
			return;
		}
		if (rb_is_black(parent))
			return;
		gparent = rb_parent(parent); /* a red parent is never the root */
		if (parent == gparent->rb_left) {
			uncle = gparent->rb_right;
			if (uncle && rb_is_red(uncle)) {
				rb_set_color(parent, RB_BLACK);
				rb_set_color(uncle, RB_BLACK);
				rb_set_color(gparent, RB_RED);
				node = gparent;
				continue;
			}
			if (node == parent->rb_right) {
				rotate_left(parent, root, aug);
				parent = node;
			}
			rotate_right(gparent, root, aug);
		} else {
			uncle = gparent->rb_left;
			if (uncle && rb_is_red(uncle)) {
				rb_set_color(parent, RB_BLACK);
				rb_set_color(uncle, RB_BLACK);
				rb_set_color(gparent, RB_RED);
				node = gparent;
				continue;
			}
			if (node == parent->rb_left) {
				rotate_right(parent, root, aug);
				parent = node;
			}
			rotate_left(gparent, root, aug);
		}
		rb_set_color(parent, RB_BLACK);
		rb_set_color(gparent, RB_RED);
		return;
	}
}

void rb_insert_color(struct rb_node *node, struct rb_root *root)
{
	insert_fixup(node, root, &noop_callbacks);
}

void rb_insert_augmented(struct rb_node *node, struct rb_root *root,
			 const struct rb_augment_callbacks *augment)
{
	insert_fixup(node, root, augment);
}

/* A black was removed above @x (possibly NULL), a child of @parent. */
static void erase_fixup(struct rb_node *x, struct rb_node *parent, struct rb_root *root,
			const struct rb_augment_callbacks *aug)
{
	while (parent && node_is_black(x)) {
		struct rb_node *w;

		pl_vt_step(VT_P_RB_NODE, parent, true);

		if (x == parent->rb_left) {
			w = parent->rb_right;
			if (rb_is_red(w)) {
				rb_set_color(w, RB_BLACK);
				rb_set_color(parent, RB_RED);
				rotate_left(parent, root, aug);
				w = parent->rb_right;
			}
			if (node_is_black(w->rb_left) && node_is_black(w->rb_right)) {
				rb_set_color(w, RB_RED);
				x = parent;
				parent = rb_parent(x);
				continue;
			}
			if (node_is_black(w->rb_right)) {
				rb_set_color(w->rb_left, RB_BLACK);
				rb_set_color(w, RB_RED);
				rotate_right(w, root, aug);
				w = parent->rb_right;
			}
			rb_set_color(w, rb_color(parent));
			rb_set_color(parent, RB_BLACK);
			rb_set_color(w->rb_right, RB_BLACK);
			rotate_left(parent, root, aug);
		} else {
			w = parent->rb_left;
			if (rb_is_red(w)) {
				rb_set_color(w, RB_BLACK);
				rb_set_color(parent, RB_RED);
				rotate_right(parent, root, aug);
				w = parent->rb_left;
			}
			if (node_is_black(w->rb_left) && node_is_black(w->rb_right)) {
				rb_set_color(w, RB_RED);
				x = parent;
				parent = rb_parent(x);
				continue;
			}
			if (node_is_black(w->rb_left)) {
				rb_set_color(w->rb_right, RB_BLACK);
				rb_set_color(w, RB_RED);
				rotate_left(w, root, aug);
				w = parent->rb_left;
			}
			rb_set_color(w, rb_color(parent));
			rb_set_color(parent, RB_BLACK);
			rb_set_color(w->rb_left, RB_BLACK);
			rotate_right(parent, root, aug);
		}
		x = root->rb_node;
		break;
	}
	if (x)
		rb_set_color(x, RB_BLACK);
}

static void erase(struct rb_node *z, struct rb_root *root, const struct rb_augment_callbacks *aug)
{
	struct rb_node *x, *xparent, *zparent = rb_parent(z);
	unsigned long removed_color;

	pl_vt_step(VT_P_RB_NODE, z, true);
	if (!z->rb_left || !z->rb_right) {
		/* Splice @z out: its only child (or nothing) takes its place. */
		x = z->rb_left ? z->rb_left : z->rb_right;
		removed_color = rb_color(z);
		xparent = zparent;
		if (x)
			rb_set_parent(x, xparent);
		change_child(z, x, zparent, root);
		if (xparent)
			aug->propagate(xparent, NULL);
	} else {
		/* Splice out the successor @y and put it where @z was. */
		struct rb_node *y = z->rb_right;

		while (y->rb_left) {
			pl_vt_step(VT_P_RB_NODE, y, false);
			y = y->rb_left;
		}
		pl_vt_step(VT_P_RB_NODE, y, true);
		removed_color = rb_color(y);
		x = y->rb_right;
		if (rb_parent(y) == z) {
			xparent = y;
		} else {
			xparent = rb_parent(y);
			WRITE_ONCE(xparent->rb_left, x);
			if (x)
				rb_set_parent(x, xparent);
			WRITE_ONCE(y->rb_right, z->rb_right);
			rb_set_parent(z->rb_right, y);
		}
		WRITE_ONCE(y->rb_left, z->rb_left);
		rb_set_parent(z->rb_left, y);
		rb_set_parent_color(y, zparent, rb_color(z));
		change_child(z, y, zparent, root);
		aug->copy(z, y);
		/*
		 * Below @y only @xparent's subtree lost a node; @y holds @z's old
		 * value, which its recomputation corrects (and, if unchanged,
		 * nothing above it changed either).
		 */
		if (xparent != y)
			aug->propagate(xparent, y);
		aug->propagate(y, NULL);
	}
	RB_CLEAR_NODE(z);
	if (removed_color == RB_BLACK)
		erase_fixup(x, xparent, root, aug);
}

void rb_erase(struct rb_node *node, struct rb_root *root)
{
	erase(node, root, &noop_callbacks);
}

void rb_erase_augmented(struct rb_node *node, struct rb_root *root,
			const struct rb_augment_callbacks *augment)
{
	erase(node, root, augment);
}

struct rb_node *rb_first(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_left)
		n = n->rb_left;
	return n;
}

struct rb_node *rb_last(const struct rb_root *root)
{
	struct rb_node *n = root->rb_node;

	if (!n)
		return NULL;
	while (n->rb_right)
		n = n->rb_right;
	return n;
}

struct rb_node *rb_next(const struct rb_node *node)
{
	struct rb_node *parent;

	if (node->rb_right) {
		node = node->rb_right;
		while (node->rb_left)
			node = node->rb_left;
		return (struct rb_node *)node;
	}
	while ((parent = rb_parent(node)) && node == parent->rb_right)
		node = parent;
	return parent;
}

struct rb_node *rb_prev(const struct rb_node *node)
{
	struct rb_node *parent;

	if (node->rb_left) {
		node = node->rb_left;
		while (node->rb_right)
			node = node->rb_right;
		return (struct rb_node *)node;
	}
	while ((parent = rb_parent(node)) && node == parent->rb_left)
		node = parent;
	return parent;
}

static int check_subtree(const struct rb_node *n, const struct rb_node *parent)
{
	int l, r;

	if (!n)
		return 1;
	if (rb_parent(n) != parent)
		return -1;
	if (rb_is_red(n) && ((n->rb_left && rb_is_red(n->rb_left)) ||
			     (n->rb_right && rb_is_red(n->rb_right))))
		return -1;
	l = check_subtree(n->rb_left, n);
	r = check_subtree(n->rb_right, n);
	if (l < 0 || r < 0 || l != r)
		return -1;
	return l + (rb_is_black(n) ? 1 : 0);
}

int rb_check(const struct rb_root *root)
{
	if (root->rb_node && rb_is_red(root->rb_node))
		return -1;
	return check_subtree(root->rb_node, NULL);
}
