/* SPDX-License-Identifier: MIT */
/*
 * maple_tree.h - a B-tree of ranges with gap tracking, after the kernel's
 * lib/maple_tree.c (the names and the node formats are the kernel's; the
 * code is pagelab's own, see src/lib/maple_tree.c for how it works).
 *
 * A maple tree maps every index in [0, ULONG_MAX] to an entry; most of the
 * space maps to NULL. A store writes one entry over a whole range
 * [index, last]; a load returns the entry of the range holding an index.
 *
 * Nodes are 256 bytes, 256-byte aligned:
 *
 *   maple_range_64 / leaf:  parent | pivot[15] | slot[16]
 *   maple_arange_64:        parent | pivot[9]  | slot[10] | gap[10] | meta
 *
 * Slot i covers [pivot[i-1] + 1, pivot[i]]; slot 0 starts at the node's
 * minimum and the last used slot ends at the node's maximum (both implied by
 * the parent). Pivots after the last used slot are ULONG_MAX, so a node's
 * data end is the number of pivots below ULONG_MAX. With
 * MT_FLAGS_ALLOC_RANGE the internal nodes are maple_arange_64 and gap[i] is
 * the largest run of NULL indices in child i, which makes mas_empty_area()
 * one descent.
 *
 * Invariants (mt_validate() checks them all):
 *  - all leaves are at depth height - 1; pivots strictly increase inside
 *    [min, max); unused pivots are ULONG_MAX and unused slots NULL;
 *  - a non-root node holds at least MAPLE_RANGE64_MIN (range/leaf) or
 *    MAPLE_ARANGE64_MIN (arange) slots; an internal root at least 2;
 *  - every child's parent word names its parent and its slot;
 *  - no two adjacent ranges are both NULL, anywhere in the tree (stricter
 *    than the kernel, which only merges inside a node): a free run is then
 *    exactly one slot, and gap[] is exact;
 *  - gap[i] of an allocation node equals the largest NULL range in child i.
 *
 * Locking: writers hold mt->ma_lock (mtree_* take it; mas_* expect it held,
 * or an external lock). Readers either hold the lock, or, when the tree is in
 * RCU mode (MT_FLAGS_USE_RCU), hold only pl_rcu_read_lock(): in RCU mode a
 * writer never changes a node a reader can reach except for single-word
 * stores (an entry replaced in place, a gap); every other change is built in
 * new nodes and published with one pointer store, and replaced nodes are
 * freed after a grace period (liburcu call_rcu). A thread that writes to a
 * tree in RCU mode must be registered with liburcu (rcu_register_thread()).
 *
 * Node memory: stores never allocate under the lock when they were prepared
 * with mas_preallocate(); node allocation can be failed on purpose through
 * mt_fault_set() (a pl_fault_attr site), and a failed store leaves the tree
 * unchanged.
 */
#ifndef PAGELAB_MAPLE_TREE_H
#define PAGELAB_MAPLE_TREE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include "base.h"
#include "fault_inject.h"
#include "gfp_types.h"

#define MAPLE_NODE_SLOTS	31	/* dense nodes (not used by pagelab) */
#define MAPLE_RANGE64_SLOTS	16
#define MAPLE_ARANGE64_SLOTS	10
#define MAPLE_RANGE64_MIN	6	/* fewest slots in a non-root range/leaf node */
#define MAPLE_ARANGE64_MIN	4	/* fewest slots in a non-root arange node */
#define MAPLE_HEIGHT_MAX	31
#define MAPLE_NODE_SIZE		256

enum maple_type {
	maple_dense,
	maple_leaf_64,
	maple_range_64,
	maple_arange_64,
};

/* Encoded pointers: a node address with its type in bits 3..6. */
struct maple_enode;	/* a child pointer: node | type << 3 */
struct maple_pnode;	/* a parent word: parent | slot << 4, or tree | 1 */

struct maple_range_64 {
	struct maple_pnode *parent;
	unsigned long pivot[MAPLE_RANGE64_SLOTS - 1];
	void *slot[MAPLE_RANGE64_SLOTS];
};

struct maple_arange_64 {
	struct maple_pnode *parent;
	unsigned long pivot[MAPLE_ARANGE64_SLOTS - 1];
	void *slot[MAPLE_ARANGE64_SLOTS];
	unsigned long gap[MAPLE_ARANGE64_SLOTS];
	unsigned long meta[2];	/* unused by pagelab; keeps the node 256 bytes */
};

struct maple_node {
	union {
		struct {
			struct maple_pnode *parent;
			void *slot[MAPLE_NODE_SLOTS];
		};
		struct maple_range_64 mr64;
		struct maple_arange_64 ma64;
	};
} __attribute__((aligned(MAPLE_NODE_SIZE)));

_Static_assert(sizeof(struct maple_node) == MAPLE_NODE_SIZE, "maple node is 256 bytes");

#define MT_FLAGS_ALLOC_RANGE	0x01
#define MT_FLAGS_USE_RCU	0x02
#define MT_FLAGS_HEIGHT_OFFSET	0x02
#define MT_FLAGS_HEIGHT_MASK	0x7C

/**
 * struct maple_tree - the tree.
 * @ma_lock:  the writers' lock (lock_stat numbers included).
 * @ma_flags: MT_FLAGS_*; the height in bits 2..6. Written under @ma_lock.
 * @ma_root:  NULL (empty tree) or the encoded root node; read by RCU readers.
 */
struct maple_tree {
	struct pl_spinlock ma_lock;
	unsigned int ma_flags;
	void *ma_root;
};

enum maple_status {
	ma_active,	/* @node is the leaf holding @index */
	ma_start,	/* walk from the root on next use */
	ma_root,	/* unused: pagelab keeps no entry in the root pointer */
	ma_none,	/* the tree is empty */
	ma_pause,	/* the RCU lock was dropped: re-walk */
	ma_overflow,	/* iteration went past its limit */
	ma_underflow,
	ma_error,	/* @error holds -errno */
};

/**
 * struct ma_state - a position in a tree and the nodes set aside for a store.
 * @tree:   the tree.
 * @index, @last: the range being looked at or written.
 * @node:   the current leaf (encoded) when @status is ma_active.
 * @min, @max: the range of @node.
 * @alloc:  preallocated nodes, linked through their first word.
 * @node_request: how many nodes @alloc holds.
 * @status: enum maple_status.
 * @offset: slot of @index in @node.
 * @error:  -errno when @status is ma_error.
 */
struct ma_state {
	struct maple_tree *tree;
	unsigned long index;
	unsigned long last;
	struct maple_enode *node;
	unsigned long min;
	unsigned long max;
	struct maple_node *alloc;
	unsigned long node_request;
	enum maple_status status;
	unsigned char depth;
	unsigned char offset;
	unsigned char mas_flags;
	int error;
};

#define MA_STATE(name, mt, first, end)					\
	struct ma_state name = {					\
		.tree = (mt), .index = (first), .last = (end),		\
		.node = NULL, .min = 0, .max = ULONG_MAX,		\
		.alloc = NULL, .node_request = 0, .status = ma_start,	\
		.depth = 0, .offset = 0, .mas_flags = 0, .error = 0,	\
	}

#define MTREE_INIT(name, flags) { .ma_flags = (flags), .ma_root = NULL }

/* ---- the tree ----------------------------------------------------------- */

/** mt_init_flags() - an empty tree with MT_FLAGS_ALLOC_RANGE and/or MT_FLAGS_USE_RCU. */
void mt_init_flags(struct maple_tree *mt, unsigned int flags);
static inline void mt_init(struct maple_tree *mt) { mt_init_flags(mt, 0); }

/**
 * mtree_destroy() - free every node (after a grace period in RCU mode); the
 * tree is empty afterwards. Entries are the caller's. Context: takes the lock.
 */
void mtree_destroy(struct maple_tree *mt);
/** __mt_destroy() - mtree_destroy() with the lock already held. */
void __mt_destroy(struct maple_tree *mt);

static inline bool mt_empty(const struct maple_tree *mt)
{
	return __atomic_load_n(&mt->ma_root, __ATOMIC_RELAXED) == NULL;
}

/* @ma_flags is written under the lock and may be read without it (RCU readers). */
static inline unsigned int mt_flags(const struct maple_tree *mt)
{
	return __atomic_load_n(&mt->ma_flags, __ATOMIC_RELAXED);
}

static inline unsigned int mt_height(const struct maple_tree *mt)
{
	return (mt_flags(mt) & MT_FLAGS_HEIGHT_MASK) >> MT_FLAGS_HEIGHT_OFFSET;
}

static inline bool mt_is_alloc(const struct maple_tree *mt)
{
	return mt_flags(mt) & MT_FLAGS_ALLOC_RANGE;
}

static inline bool mt_in_rcu(const struct maple_tree *mt)
{
	return mt_flags(mt) & MT_FLAGS_USE_RCU;
}

static inline void mtree_lock(struct maple_tree *mt) { spin_lock(&mt->ma_lock); }
static inline void mtree_unlock(struct maple_tree *mt) { spin_unlock(&mt->ma_lock); }

/** mt_set_in_rcu() / mt_clear_in_rcu() - switch RCU mode. Context: takes the lock. */
void mt_set_in_rcu(struct maple_tree *mt);
void mt_clear_in_rcu(struct maple_tree *mt);

/* ---- whole-tree helpers (take the lock for writes) ----------------------- */

/** mtree_load() - the entry at @index. Context: the lock, or RCU in RCU mode. */
void *mtree_load(struct maple_tree *mt, unsigned long index);

/**
 * mtree_store_range() - store @entry over [@first, @last].
 * Return: 0, -EINVAL if @first > @last, -ENOMEM (tree unchanged).
 */
int mtree_store_range(struct maple_tree *mt, unsigned long first, unsigned long last,
		      void *entry, gfp_t gfp);
static inline int mtree_store(struct maple_tree *mt, unsigned long index, void *entry, gfp_t gfp)
{
	return mtree_store_range(mt, index, index, entry, gfp);
}

/**
 * mtree_insert_range() - store @entry over [@first, @last] only if that range
 * is all NULL. Return: 0, -EEXIST, -EINVAL (NULL entry or @first > @last), -ENOMEM.
 */
int mtree_insert_range(struct maple_tree *mt, unsigned long first, unsigned long last,
		       void *entry, gfp_t gfp);
static inline int mtree_insert(struct maple_tree *mt, unsigned long index, void *entry, gfp_t gfp)
{
	return mtree_insert_range(mt, index, index, entry, gfp);
}

/** mtree_erase() - erase the range holding @index. Return: the entry that was there. */
void *mtree_erase(struct maple_tree *mt, unsigned long index);

/**
 * mtree_alloc_range() / mtree_alloc_rrange() - find the lowest (highest) free
 * range of @size in [@min, @max], store @entry there, return its start in
 * @startp. Needs MT_FLAGS_ALLOC_RANGE.
 * Return: 0, -EINVAL, -EBUSY (no room), -ENOMEM.
 */
int mtree_alloc_range(struct maple_tree *mt, unsigned long *startp, void *entry,
		      unsigned long size, unsigned long min, unsigned long max, gfp_t gfp);
int mtree_alloc_rrange(struct maple_tree *mt, unsigned long *startp, void *entry,
		       unsigned long size, unsigned long min, unsigned long max, gfp_t gfp);

/**
 * mt_find() - the first entry in [*@index, @max]; *@index is moved past the
 * range that holds it (to its last + 1). Context: takes pl_rcu_read_lock().
 * Return: the entry or NULL.
 */
void *mt_find(struct maple_tree *mt, unsigned long *index, unsigned long max);
/** mt_find_after() - mt_find(), but stop if *@index wrapped to 0. */
void *mt_find_after(struct maple_tree *mt, unsigned long *index, unsigned long max);

#define mt_for_each(__tree, __entry, __index, __max)			\
	for (__entry = mt_find(__tree, &(__index), __max);		\
	     __entry; __entry = mt_find_after(__tree, &(__index), __max))

/* ---- the state API (caller holds the lock, or RCU for reads) ------------- */

static inline void mas_set_range(struct ma_state *mas, unsigned long start, unsigned long last)
{
	mas->index = start;
	mas->last = last;
	mas->status = ma_start;
	mas->node = NULL;
}

static inline void mas_set(struct ma_state *mas, unsigned long index)
{
	mas_set_range(mas, index, index);
}

static inline void mas_reset(struct ma_state *mas)
{
	mas->status = ma_start;
	mas->node = NULL;
}

/** mas_pause() - the caller drops the RCU/tree lock; the next call re-walks. */
static inline void mas_pause(struct ma_state *mas)
{
	if (mas->status == ma_active) {
		if (mas->last == ULONG_MAX) {
			mas->status = ma_overflow;
			return;
		}
		mas->index = mas->last + 1;
		mas->last = mas->index;
	}
	mas->status = ma_pause;
	mas->node = NULL;
}

static inline bool mas_is_err(const struct ma_state *mas)
{
	return mas->status == ma_error;
}

/**
 * mas_walk() - the entry at @mas->index; sets @mas->index/@last to the
 * range holding it (NULL ranges included).
 */
void *mas_walk(struct ma_state *mas);
/** mas_find() - the first entry at or after @mas->index (first call) or after the last found, up to @max. */
void *mas_find(struct ma_state *mas, unsigned long max);
/** mas_next() - the next entry after the current one, up to @max. */
void *mas_next(struct ma_state *mas, unsigned long max);
/** mas_prev() - the previous entry before the current one, down to @min. */
void *mas_prev(struct ma_state *mas, unsigned long min);

#define mas_for_each(__mas, __entry, __max)				\
	while (((__entry) = mas_find((__mas), (__max))) != NULL)

/**
 * mas_store() - store @entry over [@mas->index, @mas->last], allocating nodes
 * if needed (never sleeps).
 * Return: the entry that was at @mas->index; on allocation failure the tree
 * is unchanged and @mas is in ma_error with -ENOMEM.
 */
void *mas_store(struct ma_state *mas, void *entry);
/** mas_store_gfp() - mas_store() returning 0, -EINVAL or -ENOMEM. */
int mas_store_gfp(struct ma_state *mas, void *entry, gfp_t gfp);

/**
 * mas_preallocate() - set aside the nodes a store of @entry over
 * [@mas->index, @mas->last] needs in the tree as it is now, so that
 * mas_store_prealloc() does not allocate.
 * Return: 0 or -ENOMEM (nothing kept).
 */
int mas_preallocate(struct ma_state *mas, void *entry, gfp_t gfp);
/**
 * mas_store_prealloc() - store using the preallocated nodes, then release the
 * unused ones (mas_destroy()). If the tree changed since mas_preallocate() and
 * more nodes are needed, they are allocated (with a warning); should that
 * fail, the tree is unchanged and @mas is in ma_error.
 */
void mas_store_prealloc(struct ma_state *mas, void *entry);
/** mas_destroy() - release any preallocated nodes. */
void mas_destroy(struct ma_state *mas);

/**
 * mas_erase() - erase the range holding @mas->index.
 * Return: the entry erased; @mas->index/@last are set to its range.
 */
void *mas_erase(struct ma_state *mas);

/**
 * mas_empty_area() - the lowest index >= @min such that
 * [index, index + @size - 1] lies in [@min, @max] and is all NULL. Sets
 * @mas->index and @mas->last to that range (ready for mas_store()).
 * Return: 0, -EINVAL (@min > @max, @size 0, or @size > @max - @min + 1),
 * -EBUSY (no such range).
 */
int mas_empty_area(struct ma_state *mas, unsigned long min, unsigned long max,
		   unsigned long size);
/** mas_empty_area_rev() - the same, highest such range. */
int mas_empty_area_rev(struct ma_state *mas, unsigned long min, unsigned long max,
		       unsigned long size);

/* ---- debugging (maple_debug.c) ------------------------------------------ */

enum mt_dump_format { mt_dump_dec, mt_dump_hex };

/**
 * mt_validate() - check every invariant listed at the top of this file.
 * Prints each violation and a dump on stderr.
 * Return: the number of violations (0: the tree is valid).
 */
int mt_validate(struct maple_tree *mt);
/** mt_dump() - print the tree, one line per slot, on stderr. */
void mt_dump(const struct maple_tree *mt, enum mt_dump_format format);
/** mt_nr_nodes() - nodes reachable from the root. */
unsigned long mt_nr_nodes(const struct maple_tree *mt);

/* ---- node memory (maple_alloc.c) ------------------------------------------ */

/** mt_nr_allocated() - maple nodes allocated and not yet freed, all trees. */
long mt_nr_allocated(void);
/**
 * mt_fault_set() - fail maple node allocations as @attr says (the kernel's
 * failslab knobs; min-order and ignore-gfp-wait do not apply).
 * Return: 0 or -EINVAL.
 */
int mt_fault_set(const struct pl_fault_attr *attr);
/** mt_fault_get() - the knobs as counted down so far and the statistics. */
void mt_fault_get(struct pl_fault_attr *attr, struct pl_fault_stats *stats);
/**
 * mt_fault_state() - the maple node site's live state (process-wide), for a
 * machine to register as its PL_FAULT_MAPLE_NODE site.
 */
struct pl_fault_state *mt_fault_state(void);
/** mt_rcu_barrier() - wait until every node freed with RCU is freed. */
void mt_rcu_barrier(void);

#endif /* PAGELAB_MAPLE_TREE_H */
