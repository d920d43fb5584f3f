/* SPDX-License-Identifier: MIT */
/*
 * maple_internal.h - what maple_tree.c, maple_alloc.c and maple_debug.c
 * share: encoded pointers, per-type tables, node accessors and the node
 * allocator's internal calls.
 */
#ifndef PAGELAB_LIB_MAPLE_INTERNAL_H
#define PAGELAB_LIB_MAPLE_INTERNAL_H

#include <stdint.h>
#if defined(__SSE2__) && !defined(__SANITIZE_THREAD__)
#define MA_SSE2_MASK 1
#include <emmintrin.h>
#endif
#include "pagelab/maple_tree.h"
#include "pagelab/base.h"	/* vtime.h: the tree walks charge virtual time */

/*
 * Virtual time in the walks and stores: each entry point reads the thread's
 * pl_vt_cur once (mt_vt_on()) and runs a body compiled with @vt constant,
 * so with virtual time off no node a walk visits or a store writes tests it
 * (mt_vt_step() compiles away). With @vt true every step is pl_vt_step(),
 * which charges the node only while virtual time is on.
 */
static __always_inline bool mt_vt_on(void)
{
	return unlikely(pl_vt_cur != NULL);
}

static __always_inline void mt_vt_step(const bool vt, const void *node, bool write)
{
	if (vt)
		pl_vt_step(VT_P_MT_NODE, node, write);
}

#define MAPLE_NODE_MASK		255UL
#define MAPLE_NODE_TYPE_SHIFT	3
#define MAPLE_NODE_TYPE_MASK	0x0F
#define MAPLE_PARENT_ROOT	1UL	/* parent word of the root: tree | 1 */
#define MAPLE_PARENT_SLOT_SHIFT	4

/* Slots, pivots and minimum fill per type: {dense, leaf_64, range_64, arange_64}. */
static const unsigned char mt_slots[] = { MAPLE_NODE_SLOTS, MAPLE_RANGE64_SLOTS,
					  MAPLE_RANGE64_SLOTS, MAPLE_ARANGE64_SLOTS };
static const unsigned char mt_pivots[] = { 0, MAPLE_RANGE64_SLOTS - 1, MAPLE_RANGE64_SLOTS - 1,
					   MAPLE_ARANGE64_SLOTS - 1 };
static const unsigned char mt_min_slots[] = { MAPLE_NODE_SLOTS / 2, MAPLE_RANGE64_MIN,
					      MAPLE_RANGE64_MIN, MAPLE_ARANGE64_MIN };

static inline struct maple_node *mte_to_node(const struct maple_enode *enode)
{
	return (struct maple_node *)((uintptr_t)enode & ~MAPLE_NODE_MASK);
}

static inline enum maple_type mte_node_type(const struct maple_enode *enode)
{
	return (enum maple_type)(((uintptr_t)enode >> MAPLE_NODE_TYPE_SHIFT) & MAPLE_NODE_TYPE_MASK);
}

static inline struct maple_enode *mt_mk_node(const struct maple_node *node, enum maple_type type)
{
	return (struct maple_enode *)((uintptr_t)node | ((uintptr_t)type << MAPLE_NODE_TYPE_SHIFT));
}

static inline bool ma_is_leaf(enum maple_type type)
{
	return type < maple_range_64;
}

static inline unsigned long *ma_pivots(struct maple_node *node, enum maple_type type)
{
	return type == maple_arange_64 ? node->ma64.pivot : node->mr64.pivot;
}

static inline void **ma_slots(struct maple_node *node, enum maple_type type)
{
	return type == maple_arange_64 ? node->ma64.slot : node->mr64.slot;
}

static inline unsigned long *ma_gaps(struct maple_node *node, enum maple_type type)
{
	return type == maple_arange_64 ? node->ma64.gap : NULL;
}

/*
 * Number of used slots - 1: the pivots below ULONG_MAX are the used ones,
 * i.e. ma_offset(ULONG_MAX), which counts them without a branch.
 */
static inline unsigned int ma_offset(const unsigned long *piv, unsigned int np, unsigned long index);
static inline unsigned int ma_data_end(const unsigned long *pivots, unsigned int nr_pivots)
{
	return ma_offset(pivots, nr_pivots, ULONG_MAX);
}

/* ma_data_end() by a plain scan: for the validator, which must not trust the order. */
static inline unsigned int ma_data_end_scan(const unsigned long *pivots, unsigned int nr_pivots)
{
	unsigned int end = 0;

	while (end < nr_pivots && pivots[end] != ULONG_MAX)
		end++;
	return end;
}

/* The type of internal nodes in @mt. */
static inline enum maple_type mt_internal_type(const struct maple_tree *mt)
{
	return mt_is_alloc(mt) ? maple_arange_64 : maple_range_64;
}

/*
 * Ask for all four cache lines of the node @enode names at once. A descent
 * reads a pivot in the second line, then one in the first or second, then a
 * slot (or gap) in the third or fourth: without this the misses of a cold
 * node come one after the other.
 */
static inline void ma_prefetch_node(const struct maple_enode *enode)
{
	const char *p = (const char *)mte_to_node(enode);

	__builtin_prefetch(p);
	__builtin_prefetch(p + 64);
	__builtin_prefetch(p + 128);
	__builtin_prefetch(p + 192);
}

/* Parent words. */
static inline struct maple_pnode *ma_mk_parent(const struct maple_node *parent, unsigned int slot)
{
	return (struct maple_pnode *)((uintptr_t)parent | ((uintptr_t)slot << MAPLE_PARENT_SLOT_SHIFT));
}

static inline struct maple_pnode *ma_mk_root_parent(const struct maple_tree *mt)
{
	return (struct maple_pnode *)((uintptr_t)mt | MAPLE_PARENT_ROOT);
}

static inline void ma_set_parent(struct maple_node *node, struct maple_pnode *p)
{
	__atomic_store_n(&node->parent, p, __ATOMIC_RELAXED);
}

static inline struct maple_pnode *ma_get_parent(struct maple_node *node)
{
	return __atomic_load_n(&node->parent, __ATOMIC_RELAXED);
}

/* A dead node's parent word points at itself (set when it is retired). */
static inline bool ma_dead_node(struct maple_node *node)
{
	return (struct maple_node *)((uintptr_t)ma_get_parent(node) & ~MAPLE_NODE_MASK) == node;
}

/* RCU-published loads and stores of slots, gaps and the root. */
static inline void *ma_load_slot(void **slot)
{
	return __atomic_load_n(slot, __ATOMIC_ACQUIRE);
}

static inline void ma_publish(void **slot, void *val)
{
	__atomic_store_n(slot, val, __ATOMIC_RELEASE);
}

static inline unsigned long ma_load_gap(unsigned long *gap)
{
	return __atomic_load_n(gap, __ATOMIC_RELAXED);
}

static inline void ma_store_gap(unsigned long *gap, unsigned long val)
{
	__atomic_store_n(gap, val, __ATOMIC_RELAXED);
}

/*
 * Bit i set when slot i of a leaf is NULL. With SSE2 (every x86-64) two
 * slots per step: a pointer is NULL when both of its 32-bit halves compare
 * equal to 0. An RCU reader may run this beside a writer: each aligned
 * 8-byte half of the 16-byte load is read whole, as READ_ONCE() of each slot
 * would be (the kernel's readers rely on the same), but ThreadSanitizer
 * cannot tell, so its build takes the per-slot atomic loads.
 */
static inline unsigned int ma_leaf_null_mask(void *const *slots)
{
	unsigned int mask = 0;
#ifdef MA_SSE2_MASK
	const __m128i zero = _mm_setzero_si128();

	for (unsigned int i = 0; i < MAPLE_RANGE64_SLOTS; i += 2) {
		__m128i e = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)&slots[i]), zero);

		e = _mm_and_si128(e, _mm_shuffle_epi32(e, _MM_SHUFFLE(2, 3, 0, 1)));
		mask |= (unsigned int)_mm_movemask_pd(_mm_castsi128_pd(e)) << i;
	}
#else
	for (unsigned int i = 0; i < MAPLE_RANGE64_SLOTS; i++)
		mask |= (unsigned int)(ma_load_slot((void **)&slots[i]) == NULL) << i;
#endif
	return mask;
}

static inline void mt_set_height(struct maple_tree *mt, unsigned int height)
{
	unsigned int flags = mt->ma_flags & ~MT_FLAGS_HEIGHT_MASK;

	WRITE_ONCE(mt->ma_flags, flags | (height << MT_FLAGS_HEIGHT_OFFSET));
}

/* Largest NULL range in a leaf with range [min, max]. */
static inline unsigned long ma_leaf_max_gap(struct maple_node *node, unsigned long min,
					    unsigned long max)
{
	unsigned long *piv = node->mr64.pivot;
	void **slots = node->mr64.slot;
	unsigned int end = ma_data_end(piv, MAPLE_RANGE64_SLOTS - 1);
	unsigned long gap = 0, start = min;

	/* One pass over the used slots, with conditional moves for the maximum. */
	for (unsigned int i = 0; i <= end; i++) {
		unsigned long last = i < end ? piv[i] : max;
		unsigned long len = slots[i] ? 0 : last - start + 1;

		gap = len > gap ? len : gap;
		start = last + 1;
	}
	return gap;
}

static inline unsigned long ma_arange_max_gap(struct maple_node *node)
{
	unsigned long gap = 0;

	for (unsigned int i = 0; i < MAPLE_ARANGE64_SLOTS; i++)
		if (node->ma64.gap[i] > gap)
			gap = node->ma64.gap[i];
	return gap;
}

/* Slot lookups shared by the read and write sides. */
/*
 * The first slot whose pivot is >= @index: pivots increase and the unused
 * ones are ULONG_MAX, so this is the number of pivots below @index. The
 * kernel scans linearly; that exit mispredicts once per level, so this is a
 * branchless binary search instead: 15 pivots (range/leaf) are 2^4 - 1, four
 * halvings; 9 (arange) are 5 + 4, one split and then 4 = 2 + 2. The compiler
 * turns each step into a conditional move.
 */
static inline unsigned int ma_offset(const unsigned long *piv, unsigned int np, unsigned long index)
{
	unsigned int off;

	if (np == MAPLE_RANGE64_SLOTS - 1) {
		off = piv[7] < index ? 8 : 0;
		off += piv[off + 3] < index ? 4 : 0;
	} else {
		off = piv[4] < index ? 5 : 0;
	}
	off += piv[off + 1] < index ? 2 : 0;
	off += piv[off] < index;
	if (np != MAPLE_RANGE64_SLOTS - 1)
		off += piv[off] < index;	/* the second of the last two */
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

/* Length of [lo, hi] (hi >= lo), saturating: [0, ULONG_MAX] counts ULONG_MAX. */
static inline unsigned long range_len(unsigned long lo, unsigned long hi)
{
	unsigned long n = hi - lo + 1;

	return n ? n : ULONG_MAX;
}

/* ---- maple_alloc.c ------------------------------------------------------ */

struct maple_node *mt_node_alloc(void);
void mt_node_free(struct maple_node *node);

/**
 * struct mt_retire - nodes to free once the store is published: at once, or
 * after a grace period for a tree in RCU mode.
 */
#define MT_RETIRE_BATCH 29
struct mt_rcu_batch;
struct mt_retire {
	bool rcu;
	struct mt_rcu_batch *batch;
};

void mt_retire_node(struct mt_retire *r, struct maple_node *node);
void mt_retire_done(struct mt_retire *r);

#endif /* PAGELAB_LIB_MAPLE_INTERNAL_H */
