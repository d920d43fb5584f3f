/* SPDX-License-Identifier: MIT */
/*
 * vmap_area.h - vmalloc's internal types and the table of contents of
 * src/vmalloc (mm/vmalloc.c of Linux 6.18 split by concept).
 *
 *   struct vmap_space (machine->vmap)
 *     .free        free areas: the free index + address-ordered list,
 *                  under free_vmap_area_lock
 *     .vmap_nodes[nr_vmap_nodes]        (clamp(nr_cpus, 1, 128) nodes)
 *         .busy    allocated areas whose start falls in this node's 64 KiB
 *                  stripes (addr_to_node_id), each with its own lock
 *         .lazy    freed areas waiting for the purge's TLB flush
 *         .pool[i] pre-cut free areas of exactly i + 1 pages (guard
 *                  included), recycled by the purge, taken by node_alloc()
 *     .pgd         the simulated 4-level page tables (pgtable.c)
 *
 * The free, busy and lazy indexes sit behind struct vmap_index_ops, chosen
 * by the design's vmap_index: the augmented rbtree of 6.18
 * (vmap_index_rb.c) or seed 004's maple tree (vmap_index_maple.c). The
 * address-ordered lists beside the indexes are common to both (the maple
 * index keeps its lazy sets as unordered lists). With vmap_pcpu_bump,
 * small VM_ALLOC areas come from per-CPU chunks of the space instead
 * (vmap_bump.c); each chunk is one busy area flagged VMAP_BUMP_CHUNK.
 *
 * Invariants: see include/pagelab/vmalloc.h; besides, every vmap_area
 * object handed out by vmap_area_cachep is in exactly one of: the free
 * index, a busy index, a lazy index, a pool, a purge list in progress, a
 * CPU's NE-fit preload slot, or the hands of a running call.
 */
#ifndef PAGELAB_VMALLOC_VMAP_AREA_H
#define PAGELAB_VMALLOC_VMAP_AREA_H

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include "pagelab/mm.h"
#include "pagelab/vmalloc.h"
#include "pagelab/percpu.h"
#include "pagelab/kvfree_rcu.h"
#include "lib/objcache.h"
#include "lib/rbtree.h"

/**
 * struct vmap_area - a range [va_start, va_end) of the vmalloc space.
 * 48 bytes on 64-bit: what seed 004's maple index allocates. The rbtree
 * index (6.18) allocates a struct vmap_area_rb around it instead, 72 bytes
 * as the kernel's, with the rb_node the augmented tree needs.
 * @list:             linkage in the list beside the index holding it, a
 *                    pool, or a purge list; a bump area (VMAP_BUMP) is on
 *                    no list and its list.next names its chunk.
 * @subtree_max_size: while in an rbtree free index: the largest area's size
 *                    in its subtree (the augmented value).
 * @vm:               while busy: the area's contents (NULL for vm_map_ram).
 * @flags:            VMAP_RAM/VMAP_BLOCK, VMAP_UNINDEXED, the node id.
 */
struct vmap_area {
	unsigned long va_start;
	unsigned long va_end;
	struct list_head list;
	union {
		unsigned long subtree_max_size;
		struct vm_struct *vm;
	};
	unsigned long flags;
};

/**
 * struct vmap_area_rb - a vmap_area as the rbtree index allocates it.
 * @va:      the area.
 * @rb_node: linkage in the rbtree holding it.
 */
struct vmap_area_rb {
	struct vmap_area va;
	struct rb_node rb_node;
};

/*
 * A busy area the maple index could not store (node allocation failed):
 * on its set's list but not in its tree, found by a list walk until a later
 * insert re-publishes it (seed 004's retry queue). Above the node id bits.
 */
#define VMAP_UNINDEXED		(1UL << 62)
/* vmap_pcpu_bump (vmap_bump.c): an area bumped out of a chunk; a chunk. */
#define VMAP_BUMP		(1UL << 60)
#define VMAP_BUMP_CHUNK		(1UL << 61)
/* The node id bits of @flags (encode_vn_id), below the flags above. */
#define VMAP_VN_ID_MASK		(((1UL << 60) - 1) & ~0xffUL)

/* find_unlink()'s "an area holds the address but may not go" */
#define ERR_AREA ((struct vmap_area *)-1L)

/*
 * What find_unlink() may take out (@want): an area starting at the address,
 * and with VA_WANT_VM one with a vm_struct (not vm_map_ram's), with
 * VA_WANT_NOT_PCPU not a percpu chunk's, and with any VM_* bits in the low
 * bits one whose vm has one of them. Anything else is refused in place, so
 * that vfree() and vunmap() check and unlink in one lookup, as the kernel's
 * find_unlink_vmap_area() does.
 */
/*
 * vm->flags bit (pagelab's own, above VM_PCPU): the area is queued for a
 * deferred free by vfree_atomic() or kvfree_rcu(), set atomically by the one
 * call that queued it. Every other free of it is refused as a double free;
 * only the queue's own vfree_queued() frees it.
 */
#define VM_FREE_QUEUED		0x00400000UL
/* pagelab: a get_vm_area() area; its caller maps it, if at all (the checker counts what is mapped) */
#define VM_GET_AREA		0x00800000UL
#define VA_WANT_VM		(1UL << 63)
#define VA_WANT_NOT_PCPU	(1UL << 62)
#define VA_WANT_NOT_QUEUED	(1UL << 61)	/* not VM_FREE_QUEUED (pagelab's) */
#define VA_WANT_VM_FLAGS	((1UL << 61) - 1)

static inline bool va_unlink_refused(const struct vmap_area *va, unsigned long addr,
				     unsigned long want)
{
	unsigned long vm_flags = want & VA_WANT_VM_FLAGS;

	if (va->va_start != addr)
		return true;
	if (!va->vm)
		return (want & VA_WANT_VM) != 0;
	if ((want & VA_WANT_NOT_PCPU) && (va->vm->flags & VM_PCPU))
		return true;
	if ((want & VA_WANT_NOT_QUEUED) &&
	    (__atomic_load_n(&va->vm->flags, __ATOMIC_RELAXED) & VM_FREE_QUEUED))
		return true;
	return vm_flags && !(va->vm->flags & vm_flags);
}

static inline unsigned long va_size(const struct vmap_area *va)
{
	return va->va_end - va->va_start;
}

/**
 * struct rb_list - an address-ordered set of areas: an index and a list in
 * the same order (list neighbours in O(1) for merging and for reports).
 * The maple index keeps its lazy sets (and a purge's local merge list) as
 * lists only: @priv is NULL, and the list is in freeing order.
 * @root:  the rbtree index's root (@priv for another index implementation).
 * @head:  the list, ascending by address (see above for the exception).
 * @lock:  protects both (free_vmap_area_lock for the free space).
 */
struct rb_list {
	union {
		struct rb_root root;
		void *priv;
	};
	struct list_head head;
	struct pl_spinlock lock;
};

#define MAX_VA_SIZE_PAGES	256

struct vmap_pool {
	struct list_head head;
	unsigned long len;	/* under pool_lock, read racily */
};

/**
 * struct vmap_node - one shard of the busy and lazy areas, plus pools.
 * @pool:          pre-cut areas of 1..256 pages, under @pool_lock.
 * @skip_populate: set for a purge that must not refill the pools.
 * @busy, @lazy:   areas by address, each under its own lock.
 * @purge_list:    the lazy areas being purged (under vmap_purge_lock).
 */
struct vmap_node {
	struct vmap_pool pool[MAX_VA_SIZE_PAGES];
	struct pl_spinlock pool_lock;
	bool skip_populate;
	struct rb_list busy;
	struct rb_list lazy;
	struct list_head purge_list;
	unsigned long nr_purged;
} __cacheline_aligned;

/* classify_va_fit_type() results, as the kernel names them */
enum fit_type {
	NOTHING_FIT = 0,
	FL_FIT_TYPE = 1,	/* full fit: the whole free area goes */
	LE_FIT_TYPE = 2,	/* left edge: the free area keeps its right part */
	RE_FIT_TYPE = 3,	/* right edge: it keeps its left part */
	NE_FIT_TYPE = 4,	/* no edge: it splits in two, needing a spare area */
};

static inline enum fit_type classify_va_fit_type(const struct vmap_area *va,
						 unsigned long nva_start, unsigned long size)
{
	unsigned long nva_end = nva_start + size;

	if (nva_start < va->va_start || nva_end > va->va_end || nva_end < nva_start)
		return NOTHING_FIT;
	if (va->va_start == nva_start)
		return va->va_end == nva_end ? FL_FIT_TYPE : LE_FIT_TYPE;
	return va->va_end == nva_end ? RE_FIT_TYPE : NE_FIT_TYPE;
}

struct vmap_space;

/* What an rb_list holds, for vmap_index_ops.init(). */
enum vmap_set_kind {
	VMAP_SET_FREE,		/* the free space (vs->free) */
	VMAP_SET_BUSY,		/* a node's busy areas */
	VMAP_SET_LAZY,		/* a node's lazily freed areas */
	VMAP_SET_LOCAL,		/* free areas merged among themselves, then into vs->free */
};

/**
 * struct vmap_index_ops - the free/busy/lazy index, one implementation per
 * enum vmap_index. The caller holds the rb_list's lock (or owns it).
 * @find_vmap_lowest_match: the free area holding the lowest-addressed fit
 *                   of @size at @align at or above @vstart (with @adjust,
 *                   only areas of size + align - 1 or more are considered
 *                   for the descent, as the kernel does); NULL if none. The
 *                   rbtree ignores @vend (the caller checks the fit against
 *                   it); the maple index searches inside [@vstart, @vend).
 * @va_clip:         take [@nva_start, +@size) out of free area @va
 *                   (FL/LE/RE/NE); 0, or -ENOMEM without a spare for NE.
 * @merge_or_add:    put @va back into free set @fs, merging with its
 *                   neighbours; returns the area that now covers it, or
 *                   NULL (with a warning, @va untouched) on overlap.
 * @insert:          add @va to a busy/lazy set; -EEXIST on overlap.
 * @find:            the area of a busy/lazy set containing @addr, or NULL.
 * @unlink:          remove @va from the set it is in.
 * @find_unlink:     find the busy area holding @addr and remove it if it
 *                   starts at @addr and is what @want asks (VA_WANT_*):
 *                   the area; NULL if none holds @addr; ERR_AREA (nothing
 *                   changed) if one does but may not be removed.
 * @init:            make @rl's index empty for areas of @kind (before the
 *                   list is initialised); 0 or -ENOMEM.
 * @destroy:         free what @init allocated (the areas are the caller's).
 * @reset:           make the index of @rl empty, forgetting its areas
 *                   (the caller has taken them off the list).
 * @merge_list:      merge every area of @head (unlinked from anything
 *                   else) into free set @fs, or NULL: merge_or_add() each.
 * @retry:           merge what @parked holds while nodes can be had, or
 *                   NULL (free.lock held).
 * @parked:          free areas waiting outside the free index (the maple
 *                   index's retry queue), or NULL: for the checker.
 * @va_objsize:      bytes per vmap_area object this index needs.
 * @check_free:      verify the free index's structure and augmented
 *                   values; report through @report; return errors found.
 * @check_set:       the same for a busy/lazy set.
 */
struct vmap_index_ops {
	const char *name;
	struct vmap_area *(*find_vmap_lowest_match)(struct rb_list *fs, unsigned long size,
						    unsigned long align, unsigned long vstart,
						    unsigned long vend, bool adjust);
	int (*va_clip)(struct vmap_space *vs, struct rb_list *fs, struct vmap_area *va,
		       unsigned long nva_start, unsigned long size);
	struct vmap_area *(*merge_or_add)(struct vmap_space *vs, struct rb_list *fs,
					  struct vmap_area *va);
	int (*insert)(struct rb_list *set, struct vmap_area *va);
	struct vmap_area *(*find)(struct rb_list *set, unsigned long addr);
	void (*unlink)(struct rb_list *set, struct vmap_area *va);
	struct vmap_area *(*find_unlink)(struct rb_list *set, unsigned long addr,
					 unsigned long want);
	int (*init)(struct rb_list *rl, enum vmap_set_kind kind);
	void (*destroy)(struct rb_list *rl);
	void (*reset)(struct rb_list *rl);
	void (*retry)(struct vmap_space *vs, struct rb_list *fs);
	void (*merge_list)(struct vmap_space *vs, struct rb_list *fs, struct list_head *head);
	struct list_head *(*parked)(struct rb_list *fs);
	size_t va_objsize;
	int (*check_free)(struct rb_list *fs, void (*report)(void *ctx, const char *msg), void *ctx);
	int (*check_set)(struct rb_list *set, void (*report)(void *ctx, const char *msg), void *ctx);
};

extern const struct vmap_index_ops vmap_index_rbtree_ops;
extern const struct vmap_index_ops vmap_index_maple_ops;	/* vmap_index_maple.c */

/* 4-level page tables: the top level is host memory, as the kernel's
 * swapper_pg_dir is part of its image; lower levels come from alloc_pages. */
struct vmap_pgtable {
	uint64_t *pgd;			/* 512 entries */
	struct pl_spinlock lock;	/* populating table entries */
	long nr_table_pages;		/* atomic */
};

/**
 * struct vmap_space - one machine's vmalloc state (machine->vmap).
 * @free:           free areas (free_vmap_area_root/_list), under free.lock
 *                  (the kernel's free_vmap_area_lock).
 * @ne_fit_preload: per vCPU, one spare area for an NE fit (owner only).
 * @vmap_lazy_nr:   pages in lazy areas (atomic).
 * @purge_lock:     vmap_purge_lock: one purge at a time.
 * @deferred:       vfree_atomic()'s lockless list (addresses; the link is
 *                  stored in the area's first word, as the kernel does).
 * @tlb_flush_loops: busy-loop iterations one TLB flush costs per vCPU.
 * @failslab:       failslab for both object caches; the machine registers it
 *                  as its PL_FAULT_SLAB site (vmap_space_failslab()).
 */
struct vmap_space {
	struct pl_machine *m;
	const struct vmap_index_ops *ops;
	struct rb_list free;
	struct vmap_node *vmap_nodes;
	unsigned int nr_vmap_nodes;
	unsigned long vmap_zone_size;
	struct vmap_area **ne_fit_preload;
	long vmap_lazy_nr;
	unsigned long lazy_max;
	pthread_mutex_t purge_lock;
	struct pl_objcache *vmap_area_cachep;
	struct pl_objcache *vm_struct_cachep;
	struct pl_fault_state failslab;	/* the object caches' fault site */
	struct vmap_pgtable pgt;
	unsigned long tlb_flush_loops;
	unsigned long deferred;		/* atomic: head of the vfree_atomic list */
	long nr_vmalloc_pages;		/* atomic */
	struct vmap_block_queue *vmap_block_queue;	/* per CPU (vmap_block.c) */
	struct pcpu_space *percpu;		/* percpu.c, made on first use (atomic) */
	struct kvfree_rcu_space *krcp;		/* kvfree_rcu.c, made on first use (atomic) */
	struct vmap_bump *bump;			/* vmap_bump.c, with vmap_pcpu_bump */
	unsigned long range_warnings;	/* atomic: alloc_vmap_area()'s "Address range restricted" */
};

static inline struct vmap_space *this_vmap(void) { return pl_this.machine->vmap; }
static inline unsigned int this_cpu_id(void) { return pl_this.cpu->id; }

static inline void vm_count(enum pl_vm_event item, unsigned long delta)
{
	pl_count_events(&pl_this.cpu->events, item, delta);
}

/**
 * vmap_bad_input() - report bad input to the vmalloc layers (vmalloc, vm_map_ram,
 * percpu): count PL_EV_BAD_INPUT and warn, rate-limited, with the message.
 */
__printf(1, 2) void vmap_bad_input(const char *fmt, ...);

/* Move every entry of @list to the tail of @head; @list is left empty. */
static inline void vlist_splice_tail_init(struct list_head *list, struct list_head *head)
{
	if (list_empty(list))
		return;
	list->next->prev = head->prev;
	head->prev->next = list->next;
	list->prev->next = head;
	head->prev = list->prev;
	INIT_LIST_HEAD(list);
}

/* ---- vmap_area.c: areas, nodes, pools, lazy free and purge --------------- */

struct vmap_area *va_cache_alloc(struct vmap_space *vs);
void va_cache_free(struct vmap_space *vs, struct vmap_area *va);
/* The NE-fit spare: this CPU's preload, else a fresh object. */
struct vmap_area *ne_fit_spare(struct vmap_space *vs);

static inline unsigned int addr_to_node_id(const struct vmap_space *vs, unsigned long addr)
{
	return (unsigned int)((addr / vs->vmap_zone_size) % vs->nr_vmap_nodes);
}
static inline struct vmap_node *addr_to_node(const struct vmap_space *vs, unsigned long addr)
{
	return &vs->vmap_nodes[addr_to_node_id(vs, addr)];
}
static inline unsigned long encode_vn_id(unsigned int id) { return (unsigned long)(id + 1) << 8; }
static inline unsigned int decode_vn_id(const struct vmap_space *vs, unsigned long flags)
{
	unsigned long id = ((flags & VMAP_VN_ID_MASK) >> 8) - 1;

	return (flags & VMAP_VN_ID_MASK) && id < vs->nr_vmap_nodes ? (unsigned int)id
								     : vs->nr_vmap_nodes;
}

struct vmap_area *alloc_vmap_area(unsigned long size, unsigned long align, unsigned long vstart,
				  unsigned long vend, int node, gfp_t gfp, unsigned long va_flags,
				  struct vm_struct *vm, int *err);
void free_vmap_area(struct vmap_area *va);
void free_vmap_area_noflush(struct vmap_area *va);
struct vmap_area *find_vmap_area(unsigned long addr);
struct vmap_area *find_unlink_vmap_area(unsigned long addr, unsigned long want);
bool __purge_vmap_area_lazy(struct vmap_space *vs, unsigned long start, unsigned long end,
			    bool full_pool_decay);
void purge_vmap_area_lazy(struct vmap_space *vs);
unsigned long lazy_max_pages(const struct vmap_space *vs);
/**
 * vmap_space_create() - vmalloc_init(): @m's vmalloc space, one free area
 * over the whole window. Called by the machine once its memory is up.
 * Return: the space, or NULL (no memory; nothing left allocated).
 */
struct vmap_space *vmap_space_create(struct pl_machine *m);
/** vmap_space_destroy() - free @vs and everything it holds (NULL is fine). */
void vmap_space_destroy(struct vmap_space *vs);
/** vmap_space_failslab() - @vs's failslab site, for the machine to register. */
static inline struct pl_fault_state *vmap_space_failslab(struct vmap_space *vs)
{
	return &vs->failslab;
}

/* ---- pgtable.c: page tables and the TLB -------------------------------- */

int vmap_pages_range(unsigned long addr, unsigned long end, struct page **pages,
		     unsigned int page_shift);
void vunmap_range_noflush(unsigned long start, unsigned long end);
void flush_tlb_kernel_range(unsigned long start, unsigned long end);
/* The host address of the byte at vmalloc address @addr, or NULL. */
void *vmalloc_host_addr(struct vmap_space *vs, unsigned long addr);
/* Leaf mappings counted in 4 KiB pages, by walking every table. */
unsigned long pgtable_count_mapped(struct vmap_space *vs, unsigned long start, unsigned long end);
unsigned long pgtable_trim(struct vmap_space *vs);
void pgtable_destroy(struct vmap_space *vs);
unsigned long tlb_calibrate_loops_per_us(void);

/* ---- vmap_block.c: vm_map_ram's per-CPU blocks ---------------------------- */

int vmap_blocks_init(struct vmap_space *vs);
/* /proc/lock_stat: call @fn for each lock of the file, with its lockdep class name */
typedef void (*vmap_lock_fn)(void *ctx, const char *cls, const struct pl_spinlock *lock);
void vmap_blocks_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx);
void vmap_bump_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx);
void pcpu_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx);
void vmap_blocks_destroy(struct vmap_space *vs);
void purge_fragmented_blocks_allcpus(struct vmap_space *vs);
void _vm_unmap_aliases(struct vmap_space *vs);
unsigned long vmap_block_check(struct vmap_space *vs, struct vmap_area *va,
			       void (*report)(void *ctx, const char *msg), void *ctx, int *errors);
unsigned long vmap_blocks_count(struct vmap_space *vs);

/* ---- vmap_bump.c: seed 004's per-CPU bump chunks (vmap_pcpu_bump) -------- */

int vmap_bump_init(struct vmap_space *vs);
void vmap_bump_destroy(struct vmap_space *vs);
/* Whether an allocation is for the bump chunks: VM_ALLOC, align <= 64 KiB, small, whole space. */
bool vmap_bump_eligible(struct vmap_space *vs, unsigned long size, unsigned long align,
			unsigned long vstart, unsigned long vend, unsigned long va_flags,
			const struct vm_struct *vm);
/* An area of @size from this CPU's chunk (vm->addr/size set), or NULL: use the index. */
struct vmap_area *vmap_bump_alloc(struct vmap_space *vs, unsigned long size, unsigned long align,
				  gfp_t gfp, struct vm_struct *vm);
/*
 * vmap_bump_find() - 0 if @addr is in no chunk (ask the index); 1 if it is,
 * with the area holding it in *@vap (NULL: none). With @unlink, the area
 * must start at @addr and be what @want asks (VA_WANT_*) and is unlinked,
 * else *@vap is ERR_AREA.
 */
int vmap_bump_find(struct vmap_space *vs, unsigned long addr, struct vmap_area **vap,
		   bool unlink, unsigned long want);
/* Free a bump area (unlinked or not); returns its chunk when it was the last. */
void vmap_bump_free(struct vmap_space *vs, struct vmap_area *va);
/* Retire every CPU's current chunk; return the empty ones (purge path). */
void vmap_bump_drain_all(struct vmap_space *vs);
/* @fn on each live area of chunk @cva, in address order (vmallocinfo). */
void vmap_bump_for_each(struct vmap_space *vs, struct vmap_area *cva,
			void (*fn)(void *ctx, struct vmap_area *va), void *ctx);
/* Chunks reserved, and live areas in them (pl_vmalloc_stats). */
void vmap_bump_stats(struct vmap_space *vs, unsigned long *nr_chunks, unsigned long *nr_live);
/* Checker: @area on each live area of chunk @cva; Return: how many. */
unsigned long vmap_bump_check(struct vmap_space *vs, struct vmap_area *cva,
			      void (*area)(void *ctx, struct vmap_area *va),
			      void (*report)(void *ctx, const char *msg), void *ctx, int *errors);

/* ---- percpu.c, kvfree_rcu.c ------------------------------------------------ */

void percpu_destroy(struct vmap_space *vs);
void kvfree_rcu_destroy(struct vmap_space *vs);

/* ---- vmalloc.c ----------------------------------------------------------- */

void vfree_deferred_run(struct vmap_space *vs);
int vfree_queued(const void *addr);
/* Flags __vmalloc_node_range() and vmap() take from their callers. */
#define VMALLOC_CALLER_FLAGS	(VM_ALLOW_HUGE_VMAP | VM_USERMAP | VM_NO_GUARD | VM_FLUSH_RESET_PERMS)
#define VMAP_CALLER_FLAGS	(VM_MAP | VM_MAP_PUT_PAGES | VM_USERMAP | VM_IOREMAP | VM_DMA_COHERENT)

#endif /* PAGELAB_VMALLOC_VMAP_AREA_H */
