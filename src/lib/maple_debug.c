// SPDX-License-Identifier: MIT
/*
 * maple_debug.c - mt_validate() and mt_dump(), after the kernel's
 * CONFIG_DEBUG_MAPLE_TREE checks.
 *
 * mt_validate() walks every node depth first and checks: the root's parent
 * word names the tree; no node is dead; each child's parent word names its
 * parent and slot; every leaf sits at depth height - 1 and internal nodes
 * have the tree's internal type; pivots strictly increase inside [min, max),
 * unused pivots are ULONG_MAX and unused slots NULL; fill limits (minimum for
 * non-root nodes, 2 for an internal root); in allocation trees gap[i] equals
 * the largest NULL range of child i and unused gaps are 0; and across all
 * leaves, the ranges cover [0, ULONG_MAX] in order with no two adjacent NULL
 * ranges. Context: the tree's lock (or no concurrent writer).
 */
#include <inttypes.h>
#include <stdio.h>
#include "maple_internal.h"

struct mt_vstate {
	struct maple_tree *mt;
	unsigned int height;
	int errors;
	bool have_prev;
	void *prev_entry;
	unsigned long prev_max;
};

#define MT_BAD(v, ...)							\
	do {								\
		(v)->errors++;						\
		fprintf(stderr, "mt_validate: " __VA_ARGS__);		\
	} while (0)

static unsigned long mt_vnode(struct mt_vstate *v, struct maple_enode *enode, unsigned long min,
			      unsigned long max, unsigned int depth, struct maple_node *parent,
			      unsigned int poff)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);
	struct maple_pnode *want;
	unsigned long *piv, *gaps, gap = 0;
	void **slots;
	unsigned int np, ns, end, count;
	bool leaf;

	if (type != maple_leaf_64 && type != maple_range_64 && type != maple_arange_64) {
		MT_BAD(v, "node %p has type %d\n", (void *)node, type);
		return 0;
	}
	leaf = ma_is_leaf(type);
	piv = ma_pivots(node, type);
	slots = ma_slots(node, type);
	gaps = ma_gaps(node, type);
	np = mt_pivots[type];
	ns = mt_slots[type];
	end = ma_data_end_scan(piv, np);
	count = end + 1;

	if (ma_dead_node(node))
		MT_BAD(v, "node %p is dead\n", (void *)node);
	want = depth ? ma_mk_parent(parent, poff) : ma_mk_root_parent(v->mt);
	if (ma_get_parent(node) != want)
		MT_BAD(v, "node %p [%lu, %lu] parent word %p, want %p\n", (void *)node, min, max,
		       (void *)ma_get_parent(node), (void *)want);
	if (leaf != (depth == v->height - 1))
		MT_BAD(v, "node %p at depth %u of %u is %s\n", (void *)node, depth, v->height,
		       leaf ? "a leaf" : "internal");
	if (!leaf && type != mt_internal_type(v->mt))
		MT_BAD(v, "internal node %p has type %d\n", (void *)node, type);
	if (depth && count < mt_min_slots[type])
		MT_BAD(v, "node %p [%lu, %lu] holds %u slots, minimum %u\n", (void *)node, min, max,
		       count, mt_min_slots[type]);
	if (!depth && !leaf && count < 2)
		MT_BAD(v, "internal root %p holds one slot\n", (void *)node);

	for (unsigned int i = 0; i < np; i++) {
		if (i < end) {
			unsigned long lo = i ? piv[i - 1] + 1 : min;

			if (piv[i] < lo || piv[i] >= max)
				MT_BAD(v, "node %p [%lu, %lu] pivot %u = %lu out of order\n",
				       (void *)node, min, max, i, piv[i]);
		} else if (piv[i] != ULONG_MAX) {
			MT_BAD(v, "node %p pivot %u = %lu beyond the end %u\n", (void *)node, i,
			       piv[i], end);
		}
	}
	for (unsigned int i = count; i < ns; i++) {
		if (slots[i])
			MT_BAD(v, "node %p slot %u beyond the end %u is %p\n", (void *)node, i, end,
			       slots[i]);
		if (gaps && gaps[i])
			MT_BAD(v, "node %p gap %u beyond the end is %lu\n", (void *)node, i, gaps[i]);
	}

	for (unsigned int i = 0; i <= end; i++) {
		unsigned long smin = i ? piv[i - 1] + 1 : min;
		unsigned long smax = i < end ? piv[i] : max;

		if (leaf) {
			void *entry = slots[i];

			if (v->have_prev && v->prev_max + 1 != smin)
				MT_BAD(v, "leaf %p slot %u starts at %lu after %lu\n", (void *)node, i,
				       smin, v->prev_max);
			if (!v->have_prev && smin != 0)
				MT_BAD(v, "the first range starts at %lu\n", smin);
			if (v->have_prev && !v->prev_entry && !entry)
				MT_BAD(v, "leaf %p slot %u [%lu, %lu]: two adjacent NULL ranges\n",
				       (void *)node, i, smin, smax);
			if (!entry) {
				unsigned long len = smax - smin + 1;

				if (!len)
					len = ULONG_MAX;
				if (len > gap)
					gap = len;
			}
			v->have_prev = true;
			v->prev_entry = entry;
			v->prev_max = smax;
		} else {
			unsigned long cg;

			if (!slots[i]) {
				MT_BAD(v, "internal node %p slot %u is NULL\n", (void *)node, i);
				continue;
			}
			cg = mt_vnode(v, slots[i], smin, smax, depth + 1, node, i);
			if (gaps && gaps[i] != cg)
				MT_BAD(v, "node %p [%lu, %lu] gap %u = %lu, child's largest gap %lu\n",
				       (void *)node, min, max, i, gaps[i], cg);
			if (cg > gap)
				gap = cg;
		}
	}
	return gap;
}

int mt_validate(struct maple_tree *mt)
{
	struct mt_vstate v = { .mt = mt, .height = mt_height(mt) };
	struct maple_enode *root = mt->ma_root;

	if (!root) {
		if (v.height)
			MT_BAD(&v, "empty tree of height %u\n", v.height);
		return v.errors;
	}
	if (!v.height || v.height > MAPLE_HEIGHT_MAX) {
		MT_BAD(&v, "height %u\n", v.height);
		return v.errors;
	}
	mt_vnode(&v, root, 0, ULONG_MAX, 0, NULL, 0);
	if (v.have_prev && v.prev_max != ULONG_MAX)
		MT_BAD(&v, "the last range ends at %lu\n", v.prev_max);
	if (v.errors)
		mt_dump(mt, mt_dump_hex);
	return v.errors;
}

static void mt_dump_node(struct maple_enode *enode, unsigned long min, unsigned long max,
			 unsigned int depth, enum mt_dump_format format)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);
	unsigned long *piv = ma_pivots(node, type), *gaps = ma_gaps(node, type);
	void **slots = ma_slots(node, type);
	unsigned int end = ma_data_end_scan(piv, mt_pivots[type]);
	static const char *const names[] = { "dense", "leaf_64", "range_64", "arange_64" };
	const char *fmt = format == mt_dump_hex ? "%*s%lx-%lx: " : "%*s%lu-%lu: ";

	fprintf(stderr, fmt, (int)depth * 2, "", min, max);
	fprintf(stderr, "node %p %s depth %u\n", (void *)node, names[type], depth);
	for (unsigned int i = 0; i <= end; i++) {
		unsigned long smin = i ? piv[i - 1] + 1 : min;
		unsigned long smax = i < end ? piv[i] : max;

		if (ma_is_leaf(type)) {
			fprintf(stderr, fmt, (int)depth * 2 + 2, "", smin, smax);
			fprintf(stderr, "%p\n", slots[i]);
		} else {
			if (gaps)
				fprintf(stderr, "%*sgap[%u] %lu\n", (int)depth * 2 + 2, "", i, gaps[i]);
			mt_dump_node(slots[i], smin, smax, depth + 1, format);
		}
	}
}

void mt_dump(const struct maple_tree *mt, enum mt_dump_format format)
{
	struct maple_enode *root = mt->ma_root;

	fprintf(stderr, "maple_tree(%p) flags %x, height %u, root %p\n", (void *)mt, mt->ma_flags,
		mt_height(mt), (void *)root);
	if (root)
		mt_dump_node(root, 0, ULONG_MAX, 0, format);
}

static unsigned long mt_count_nodes(struct maple_enode *enode)
{
	struct maple_node *node = mte_to_node(enode);
	enum maple_type type = mte_node_type(enode);
	unsigned long n = 1;

	if (!ma_is_leaf(type)) {
		unsigned int end = ma_data_end_scan(ma_pivots(node, type), mt_pivots[type]);

		for (unsigned int i = 0; i <= end; i++)
			n += mt_count_nodes(ma_slots(node, type)[i]);
	}
	return n;
}

unsigned long mt_nr_nodes(const struct maple_tree *mt)
{
	struct maple_enode *root = mt->ma_root;

	return root ? mt_count_nodes(root) : 0;
}
