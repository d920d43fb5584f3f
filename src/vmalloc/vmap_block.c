// SPDX-License-Identifier: MIT
/*
 * vmap_block.c - vm_map_ram()/vm_unmap_ram() with per-CPU vmap blocks, as
 * mm/vmalloc.c of Linux 6.18 does.
 *
 * Small mappings (up to VMAP_MAX_ALLOC pages) are cut out of per-CPU
 * blocks of VMAP_BBMAP_BITS pages, so that a map/unmap pair costs no
 * vmap_area allocation and no busy-tree insertion:
 *
 *   vmap_block (one busy vmap_area of VMAP_BLOCK_SIZE, VMAP_RAM|VMAP_BLOCK)
 *     used_map  |##|####|#|........................|   bump: the next
 *                ^ allocations, 2^order pages each  ^ pages_off = BITS - free
 *     free      pages never handed out (the tail past the bump)
 *     dirty     pages handed out and unmapped again, TLB not yet flushed
 *               (dirty_min..dirty_max: the range to flush)
 *
 *   vm_map_ram(count <= 64)  -> vb_alloc: this CPU's queue, first block with
 *                               free >= 2^order, else new_vmap_block()
 *   vm_unmap_ram(count <= 64) -> vb_free: clear the bits, unmap, dirty +=
 *                               2^order; a block that is all dirty goes
 *                               away (its area freed lazily, as any other)
 *   larger counts            -> a plain VMAP_RAM area, no guard page
 *
 * Space freed inside a block is never reused: the block is a bump
 * allocator and dies when all of it is dirty. A block whose live
 * allocations are all gone but which still has free pages is a
 * "fragmented" block; purge_fragmented_blocks_allcpus() (allocation
 * failure, pl_vmalloc_purge()) frees those, vm_unmap_aliases() those with
 * less than VMAP_PURGE_THRESHOLD free pages, and flushes the dirty ranges
 * of the others.
 *
 * Constants: VMAP_BBMAP_BITS is computed as the kernel does from
 * VMALLOC_SPACE (128 GiB) and the compile-time NR_CPUS, taken as a distro
 * x86_64 kernel's 8192: 256 pages (1 MiB blocks).
 *
 * Where pagelab differs: the kernel walks a CPU's free list under RCU and
 * finds a block by address in a per-CPU xarray used as a hash; here the
 * walk holds the queue's lock, and the lookup is a chained hash per queue
 * (same queue choice: block index modulo the number of CPUs). Each
 * allocation also records its exact page count (the kernel only knows
 * the order), so vm_unmap_ram() with the wrong count or an address that
 * is not the start of a mapping is refused with a warning and changes
 * nothing, where the kernel would BUG or unmap the wrong pages.
 *
 * Locks: vbq->lock (a queue's free list and hash) before vb->lock. A block
 * is freed only after it left the hash under vbq->lock, and a lookup takes
 * vb->lock while holding vbq->lock, so a block found is still there.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vmap_area.h"

#define VMALLOC_SPACE_GUESS	(128UL << 30)	/* the kernel's VMALLOC_SPACE on 64-bit */
#define VMALLOC_PAGES_GUESS	(VMALLOC_SPACE_GUESS / PAGE_SIZE)
#define CONFIG_NR_CPUS		8192UL		/* a distro kernel's NR_CPUS */
#define VMAP_BBMAP_BITS_MIN	128UL
#define VMAP_BBMAP_BITS_MAX	1024UL
#define VMAP_BBMAP_BITS \
	min(VMAP_BBMAP_BITS_MAX, max(VMAP_BBMAP_BITS_MIN, VMALLOC_PAGES_GUESS / CONFIG_NR_CPUS / 16))
#define VMAP_BLOCK_SIZE		(VMAP_BBMAP_BITS * PAGE_SIZE)
#define VMAP_PURGE_THRESHOLD	(VMAP_BBMAP_BITS / 4)
#define VB_MAP_LONGS		(VMAP_BBMAP_BITS_MAX / 64)
#define VBQ_HASH_BUCKETS	64

_Static_assert(VMAP_BBMAP_BITS == 256, "NR_CPUS 8192 gives 256-page blocks");

/**
 * struct vmap_block - one block of VMAP_BBMAP_BITS pages of one CPU.
 * @lock:      protects the fields below it.
 * @va:        the block's busy area.
 * @free:      pages past the bump pointer.
 * @dirty:     pages unmapped and not yet flushed.
 * @dirty_min, @dirty_max: the dirty range, in pages (min > max: none).
 * @used_map:  one bit per page handed out (2^order per allocation).
 * @nr:        at an allocation's first page, its exact page count.
 * @dead:      set once the block is being freed.
 * @free_list: on the owner CPU's queue while @free > 0 (under vbq->lock).
 * @hash:      chain in the hash of the queue its address selects.
 */
struct vmap_block {
	struct pl_spinlock lock;
	struct vmap_area *va;
	unsigned long free, dirty;
	unsigned long dirty_min, dirty_max;
	unsigned long used_map[VB_MAP_LONGS];
	unsigned char nr[VMAP_BBMAP_BITS_MAX];
	bool dead, on_free_list;
	unsigned int cpu;
	struct list_head free_list;
	struct list_head purge;
	struct vmap_block *hash_next;
};

/**
 * struct vmap_block_queue - per CPU: blocks with free space, and the hash
 * of the blocks whose index selects this queue.
 */
struct vmap_block_queue {
	struct pl_spinlock lock;
	struct list_head free;
	struct vmap_block *hash[VBQ_HASH_BUCKETS];
	unsigned long nr_blocks;
} __cacheline_aligned;

static inline unsigned long addr_to_vb_idx(unsigned long addr)
{
	return (addr - VMALLOC_START) / VMAP_BLOCK_SIZE;
}

static inline struct vmap_block_queue *addr_to_vbq(struct vmap_space *vs, unsigned long addr)
{
	return &vs->vmap_block_queue[addr_to_vb_idx(addr) % vs->m->nr_cpus];
}


/* The chain a block of index @idx hangs on in its queue's hash. */
static inline struct vmap_block **vb_bucket(struct vmap_space *vs, struct vmap_block_queue *vbq,
					    unsigned long idx)
{
	return &vbq->hash[(idx / vs->m->nr_cpus) % VBQ_HASH_BUCKETS];
}

/* Context: vbq->lock. */
static struct vmap_block *vb_lookup(struct vmap_space *vs, struct vmap_block_queue *vbq,
				    unsigned long addr)
{
	unsigned long idx = addr_to_vb_idx(addr);
	struct vmap_block *vb = *vb_bucket(vs, vbq, idx);

	while (vb && addr_to_vb_idx(vb->va->va_start) != idx)
		vb = vb->hash_next;
	return vb;
}

static void vb_hash_del(struct vmap_space *vs, struct vmap_block *vb)
{
	unsigned long addr = vb->va->va_start;
	struct vmap_block_queue *vbq = addr_to_vbq(vs, addr);
	struct vmap_block **pp;

	spin_lock(&vbq->lock);
	for (pp = vb_bucket(vs, vbq, addr_to_vb_idx(addr)); *pp; pp = &(*pp)->hash_next) {
		if (*pp == vb) {
			*pp = vb->hash_next;
			vbq->nr_blocks--;
			break;
		}
	}
	spin_unlock(&vbq->lock);
}

/* ---- bitmap helpers ---------------------------------------------------------- */

static inline bool vb_test(const unsigned long *map, unsigned long bit)
{
	return map[bit / 64] & (1UL << (bit % 64));
}

static void vb_set_range(unsigned long *map, unsigned long start, unsigned long n, bool set)
{
	for (unsigned long b = start; b < start + n; b++) {
		if (set)
			map[b / 64] |= 1UL << (b % 64);
		else
			map[b / 64] &= ~(1UL << (b % 64));
	}
}

/* The smallest order with 2^order >= @count (get_order() of count pages). */
static inline unsigned int pages_order(unsigned int count)
{
	return count <= 1 ? 0 : (unsigned int)(32 - __builtin_clz(count - 1));
}

/* ---- blocks -------------------------------------------------------------------- */

/*
 * new_vmap_block() - a fresh block for this CPU whose first 2^@order pages
 * go to the caller's mapping of @count pages. Return: its address, or 0.
 */
static unsigned long new_vmap_block(struct vmap_space *vs, unsigned int order, unsigned int count,
				    int node)
{
	struct vmap_block_queue *vbq = &vs->vmap_block_queue[this_cpu_id()], *hq;
	struct vmap_block *vb = pl_zalloc_lines(sizeof(*vb));
	struct vmap_area *va;
	unsigned long addr;
	int err;

	if (!vb)
		return 0;
	va = alloc_vmap_area(VMAP_BLOCK_SIZE, VMAP_BLOCK_SIZE, VMALLOC_START, VMALLOC_END, node,
			     GFP_KERNEL, VMAP_RAM | VMAP_BLOCK, NULL, &err);
	if (!va) {
		free(vb);
		return 0;
	}
	addr = va->va_start;
	pl_spin_init(&vb->lock, false);
	pl_spin_set_class(&vb->lock, VT_LOCK_VMAP_OTHER);
	vb->va = va;
	vb->free = VMAP_BBMAP_BITS - (1UL << order);
	vb->dirty = 0;
	vb->dirty_min = VMAP_BBMAP_BITS;
	vb->dirty_max = 0;
	vb_set_range(vb->used_map, 0, 1UL << order, true);
	vb->nr[0] = (unsigned char)count;
	vb->cpu = this_cpu_id();
	INIT_LIST_HEAD(&vb->free_list);
	INIT_LIST_HEAD(&vb->purge);

	hq = addr_to_vbq(vs, addr);
	spin_lock(&hq->lock);
	vb->hash_next = *vb_bucket(vs, hq, addr_to_vb_idx(addr));
	*vb_bucket(vs, hq, addr_to_vb_idx(addr)) = vb;
	hq->nr_blocks++;
	spin_unlock(&hq->lock);

	spin_lock(&vbq->lock);
	list_add_tail(&vb->free_list, &vbq->free);
	vb->on_free_list = true;
	spin_unlock(&vbq->lock);
	vm_count(PL_EV_VMAP_BLOCK_NEW, 1);
	return addr;
}

/*
 * free_vmap_block() - a dead block (off every free list): out of its hash,
 * its area out of the busy index and freed lazily, the block itself freed.
 */
static void free_vmap_block(struct vmap_space *vs, struct vmap_block *vb)
{
	struct vmap_area *va;

	vb_hash_del(vs, vb);
	va = find_unlink_vmap_area(vb->va->va_start, 0);
	if (likely(va == vb->va))
		free_vmap_area_noflush(va);
	else
		pl_warn_ratelimited("vmap_block %#lx: its area is not busy", vb->va->va_start);
	free(vb);
}

/* vb_alloc() - @count pages (2^order of bitmap) from this CPU's blocks. Return: address or 0. */
static unsigned long vb_alloc(struct vmap_space *vs, unsigned int count, int node)
{
	struct vmap_block_queue *vbq = &vs->vmap_block_queue[this_cpu_id()];
	unsigned int order = pages_order(count);
	struct list_head *pos;

	spin_lock(&vbq->lock);
	list_for_each(pos, &vbq->free) {
		struct vmap_block *vb = list_entry(pos, struct vmap_block, free_list);
		unsigned long pages_off, addr;

		spin_lock(&vb->lock);
		if (vb->free < (1UL << order)) {
			spin_unlock(&vb->lock);
			continue;
		}
		pages_off = VMAP_BBMAP_BITS - vb->free;
		vb_set_range(vb->used_map, pages_off, 1UL << order, true);
		vb->nr[pages_off] = (unsigned char)count;
		vb->free -= 1UL << order;
		if (!vb->free) {
			list_del(&vb->free_list);
			vb->on_free_list = false;
		}
		addr = vb->va->va_start + (pages_off << PAGE_SHIFT);
		spin_unlock(&vb->lock);
		spin_unlock(&vbq->lock);
		return addr;
	}
	spin_unlock(&vbq->lock);
	return new_vmap_block(vs, order, count, node);
}

/*
 * vb_free() - unmap the @count pages at @addr of a block and mark them
 * dirty; the block goes when all of it is dirty.
 * Return: 0, or -EINVAL (warned, nothing changed).
 */
static int vb_free(struct vmap_space *vs, unsigned long addr, unsigned int count)
{
	struct vmap_block_queue *vbq = addr_to_vbq(vs, addr);
	unsigned long offset, n;
	struct vmap_block *vb;
	unsigned int order;

	spin_lock(&vbq->lock);
	vb = vb_lookup(vs, vbq, addr);
	if (!vb) {
		spin_unlock(&vbq->lock);
		vmap_bad_input("vm_unmap_ram: %#lx (%u pages) is not a vm_map_ram address", addr, count);
		return -EINVAL;
	}
	spin_lock(&vb->lock);
	spin_unlock(&vbq->lock);
	offset = (addr - vb->va->va_start) >> PAGE_SHIFT;
	if (vb->dead || !vb_test(vb->used_map, offset) || !vb->nr[offset]) {
		spin_unlock(&vb->lock);
		vmap_bad_input("vm_unmap_ram: %#lx is not the start of a live vm_map_ram mapping", addr);
		return -EINVAL;
	}
	if (vb->nr[offset] != count) {
		n = vb->nr[offset];
		spin_unlock(&vb->lock);
		vmap_bad_input("vm_unmap_ram: %#lx maps %lu pages, not %u (wrong count)", addr, n, count);
		return -EINVAL;
	}
	order = pages_order(count);
	vb_set_range(vb->used_map, offset, 1UL << order, false);
	vb->nr[offset] = 0;
	vunmap_range_noflush(addr, addr + ((unsigned long)count << PAGE_SHIFT));
	vb->dirty_min = min(vb->dirty_min, offset);
	vb->dirty_max = max(vb->dirty_max, offset + (1UL << order));
	vb->dirty += 1UL << order;
	if (vb->dirty == VMAP_BBMAP_BITS) {
		vb->dead = true;	/* free == 0: it is on no free list */
		spin_unlock(&vb->lock);
		free_vmap_block(vs, vb);
		return 0;
	}
	spin_unlock(&vb->lock);
	return 0;
}

/*
 * purge_fragmented_block() - a block with no live mapping left (free +
 * dirty == BITS, not all dirty) is marked all dirty, taken off the free
 * list and put on @purge; unless @force, only if less than
 * VMAP_PURGE_THRESHOLD pages are still free. Context: vbq->lock, vb->lock.
 */
static bool purge_fragmented_block(struct vmap_block *vb, struct list_head *purge, bool force)
{
	if (vb->free + vb->dirty != VMAP_BBMAP_BITS || vb->dirty == VMAP_BBMAP_BITS)
		return false;
	if (!force && vb->free >= VMAP_PURGE_THRESHOLD)
		return false;
	vb->free = 0;
	vb->dirty = VMAP_BBMAP_BITS;
	vb->dirty_min = 0;
	vb->dirty_max = VMAP_BBMAP_BITS;
	vb->dead = true;
	list_del(&vb->free_list);
	vb->on_free_list = false;
	list_add_tail(&vb->purge, purge);
	return true;
}

static void free_purged_blocks(struct vmap_space *vs, struct list_head *purge)
{
	while (!list_empty(purge)) {
		struct vmap_block *vb = list_first_entry(purge, struct vmap_block, purge);

		list_del(&vb->purge);
		free_vmap_block(vs, vb);
	}
}

void purge_fragmented_blocks_allcpus(struct vmap_space *vs)
{
	for (unsigned int cpu = 0; cpu < vs->m->nr_cpus; cpu++) {
		struct vmap_block_queue *vbq = &vs->vmap_block_queue[cpu];
		struct list_head purge, *pos, *next;

		if (list_empty(&vbq->free))
			continue;
		INIT_LIST_HEAD(&purge);
		spin_lock(&vbq->lock);
		for (pos = vbq->free.next; pos != &vbq->free; pos = next) {
			struct vmap_block *vb = list_entry(pos, struct vmap_block, free_list);

			next = pos->next;
			spin_lock(&vb->lock);
			purge_fragmented_block(vb, &purge, true);
			spin_unlock(&vb->lock);
		}
		spin_unlock(&vbq->lock);
		free_purged_blocks(vs, &purge);
	}
}

/*
 * _vm_unmap_aliases() - free the nearly used-up fragmented blocks, collect
 * every other block's dirty range, and purge the lazy areas; one TLB flush
 * covers it all (a flush of its own if the purge had nothing to do).
 */
void _vm_unmap_aliases(struct vmap_space *vs)
{
	unsigned long start = ULONG_MAX, end = 0;
	bool flush = false;

	for (unsigned int cpu = 0; cpu < vs->m->nr_cpus; cpu++) {
		struct vmap_block_queue *vbq = &vs->vmap_block_queue[cpu];
		struct list_head purge, *pos, *next;

		INIT_LIST_HEAD(&purge);
		spin_lock(&vbq->lock);
		for (pos = vbq->free.next; pos != &vbq->free; pos = next) {
			struct vmap_block *vb = list_entry(pos, struct vmap_block, free_list);

			next = pos->next;
			spin_lock(&vb->lock);
			if (!purge_fragmented_block(vb, &purge, false) && vb->dirty_max &&
			    vb->dirty != VMAP_BBMAP_BITS) {
				start = min(start, vb->va->va_start + (vb->dirty_min << PAGE_SHIFT));
				end = max(end, vb->va->va_start + (vb->dirty_max << PAGE_SHIFT));
				vb->dirty_min = VMAP_BBMAP_BITS;
				vb->dirty_max = 0;
				flush = true;
			}
			spin_unlock(&vb->lock);
		}
		spin_unlock(&vbq->lock);
		free_purged_blocks(vs, &purge);
	}
	pthread_mutex_lock(&vs->purge_lock);
	if (!__purge_vmap_area_lazy(vs, start, end, false) && flush)
		flush_tlb_kernel_range(start, end);
	pthread_mutex_unlock(&vs->purge_lock);
}

/* ---- the API ------------------------------------------------------------------ */

/* Every page an allocated page of this machine (as vmap() checks them). */
static bool vm_map_ram_pages_ok(struct page **pages, unsigned int count)
{
	struct pl_machine *m = pl_this.machine;

	for (unsigned int i = 0; i < count; i++) {
		struct page *p = pages[i];

		if (!p || p < m->mem_map || p >= m->mem_map + m->max_pfn ||
		    (uintptr_t)((char *)p - (char *)m->mem_map) % sizeof(struct page) ||
		    page_ref_count(p) <= 0) {
			vmap_bad_input("vm_map_ram: pages[%u] is not an allocated page of this machine",
				     i);
			return false;
		}
	}
	return true;
}

void *vm_map_ram(struct page **pages, unsigned int count, int node)
{
	unsigned long size = (unsigned long)count << PAGE_SHIFT, addr;
	struct pl_machine *m = pl_this.machine;
	struct vmap_space *vs;

	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("vm_map_ram: the calling thread has not entered a machine");
		return NULL;
	}
	vs = m->vmap;
	if (unlikely(!count || !pages || count > m->max_pfn)) {
		vmap_bad_input("vm_map_ram: %u pages (none, or more than the machine has)", count);
		return NULL;
	}
	if (!vm_map_ram_pages_ok(pages, count))
		return NULL;
	if (likely(count <= VMAP_MAX_ALLOC)) {
		addr = vb_alloc(vs, count, node);
		if (!addr)
			return NULL;
	} else {
		struct vmap_area *va;
		int err;

		va = alloc_vmap_area(size, PAGE_SIZE, VMALLOC_START, VMALLOC_END, node, GFP_KERNEL,
				     VMAP_RAM, NULL, &err);
		if (!va)
			return NULL;
		addr = va->va_start;
	}
	if (vmap_pages_range(addr, addr + size, pages, PAGE_SHIFT)) {
		vm_unmap_ram((void *)addr, count);
		return NULL;
	}
	vm_count(PL_EV_VM_MAP_RAM, 1);
	return (void *)addr;
}

int vm_unmap_ram(const void *mem, unsigned int count)
{
	unsigned long addr = (unsigned long)mem, size = (unsigned long)count << PAGE_SHIFT;
	struct pl_machine *m = pl_this.machine;
	struct vmap_space *vs;
	struct vmap_area *va;

	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("vm_unmap_ram: the calling thread has not entered a machine");
		return -EINVAL;
	}
	vs = m->vmap;
	if (unlikely(!count || !IS_ALIGNED(addr, PAGE_SIZE) || addr < VMALLOC_START ||
		     addr >= VMALLOC_END || size > VMALLOC_END - addr)) {
		vmap_bad_input("vm_unmap_ram: bad address %#lx or count %u", addr, count);
		return -EINVAL;
	}
	if (likely(count <= VMAP_MAX_ALLOC))
		return vb_free(vs, addr, count);

	va = find_vmap_area(addr);
	if (unlikely(!va || va->va_start != addr || va->vm || !(va->flags & VMAP_RAM) ||
		     (va->flags & VMAP_BLOCK) || va_size(va) != size)) {
		vmap_bad_input("vm_unmap_ram: %#lx is not a vm_map_ram mapping of %u pages%s", addr,
			     count, va && (va->flags & VMAP_RAM) && va->va_start == addr &&
			     !(va->flags & VMAP_BLOCK) ? " (wrong count)" : "");
		return -EINVAL;
	}
	va = find_unlink_vmap_area(addr, 0);
	if (unlikely(!va)) {	/* lost a race with another unmap of it */
		vmap_bad_input("vm_unmap_ram: %#lx is not a vm_map_ram mapping", addr);
		return -EINVAL;
	}
	vunmap_range_noflush(va->va_start, va->va_end);
	free_vmap_area_noflush(va);
	return 0;
}

/* ---- setup, teardown, the checker -------------------------------------------- */

int vmap_blocks_init(struct vmap_space *vs)
{
	unsigned int n = vs->m->nr_cpus;

	vs->vmap_block_queue = pl_zalloc_lines(sizeof(struct vmap_block_queue) * n);
	if (!vs->vmap_block_queue)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		pl_spin_init(&vs->vmap_block_queue[i].lock, vs->m->config.lock_stat);
		pl_spin_set_class(&vs->vmap_block_queue[i].lock, VT_LOCK_VMAP_OTHER);
		INIT_LIST_HEAD(&vs->vmap_block_queue[i].free);
	}
	return 0;
}

void vmap_blocks_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx)
{
	for (unsigned int i = 0; vs->vmap_block_queue && i < vs->m->nr_cpus; i++)
		fn(ctx, "&vbq->lock", &vs->vmap_block_queue[i].lock);
}

/* Free the block structures left (their areas go with the space). */
void vmap_blocks_destroy(struct vmap_space *vs)
{
	if (!vs->vmap_block_queue)
		return;
	for (unsigned int i = 0; i < vs->m->nr_cpus; i++) {
		struct vmap_block_queue *vbq = &vs->vmap_block_queue[i];

		for (int b = 0; b < VBQ_HASH_BUCKETS; b++) {
			while (vbq->hash[b]) {
				struct vmap_block *vb = vbq->hash[b];

				vbq->hash[b] = vb->hash_next;
				free(vb);
			}
		}
	}
	free(vs->vmap_block_queue);
	vs->vmap_block_queue = NULL;
}

/*
 * vmap_block_check() - check the block of busy area @va: in its hash,
 * its counts against its bitmap, each live mapping mapped and the rest of
 * the block not. Return: the pages it maps. Context: the checker's.
 */
unsigned long vmap_block_check(struct vmap_space *vs, struct vmap_area *va,
			       void (*report)(void *ctx, const char *msg), void *ctx, int *errors)
{
	struct vmap_block_queue *vbq = addr_to_vbq(vs, va->va_start);
	unsigned long used = 0, mapped = 0;
	struct vmap_block *vb;
	char msg[160];

#define VB_REPORT(...) do { snprintf(msg, sizeof(msg), __VA_ARGS__); report(ctx, msg); \
			    (*errors)++; } while (0)
	spin_lock(&vbq->lock);
	vb = vb_lookup(vs, vbq, va->va_start);
	spin_unlock(&vbq->lock);
	if (!vb || vb->va != va) {
		VB_REPORT("vmap block area %#lx: no block in the hash", va->va_start);
		return 0;
	}
	if (va_size(va) != VMAP_BLOCK_SIZE || !IS_ALIGNED(va->va_start, VMAP_BLOCK_SIZE))
		VB_REPORT("vmap block %#lx: area of %#lx bytes", va->va_start, va_size(va));
	for (unsigned long b = 0; b < VMAP_BBMAP_BITS; b++) {
		unsigned long a = va->va_start + (b << PAGE_SHIFT);

		if (vb->nr[b]) {
			unsigned long n = vb->nr[b], span = 1UL << pages_order((unsigned int)n);

			for (unsigned long k = 0; k < span && b + k < VMAP_BBMAP_BITS; k++) {
				bool want = k < n;

				if (!vb_test(vb->used_map, b + k))
					VB_REPORT("vmap block %#lx: page %lu of a mapping not in used_map",
						  va->va_start, b + k);
				if ((vmalloc_host_addr(vs, a + (k << PAGE_SHIFT)) != NULL) != want)
					VB_REPORT("vmap block %#lx: page %lu %smapped", va->va_start,
						  b + k, want ? "not " : "");
				mapped += want;
			}
			used += span;
			b += span - 1;
			continue;
		}
		if (vb_test(vb->used_map, b))
			VB_REPORT("vmap block %#lx: page %lu used outside any mapping", va->va_start, b);
		if (vmalloc_host_addr(vs, a))
			VB_REPORT("vmap block %#lx: page %lu mapped outside any mapping",
				  va->va_start, b);
	}
	if (used + vb->free + vb->dirty != VMAP_BBMAP_BITS || vb->dead)
		VB_REPORT("vmap block %#lx: used %lu + free %lu + dirty %lu != %lu%s", va->va_start,
			  used, vb->free, vb->dirty, (unsigned long)VMAP_BBMAP_BITS,
			  vb->dead ? " (dead)" : "");
	if (vb->on_free_list != (vb->free > 0))
		VB_REPORT("vmap block %#lx: free %lu but %son the free list", va->va_start,
			  vb->free, vb->on_free_list ? "" : "not ");
#undef VB_REPORT
	return mapped;
}

/* vmap_blocks_count() - blocks in every hash (the checker compares with busy areas). */
unsigned long vmap_blocks_count(struct vmap_space *vs)
{
	unsigned long n = 0;

	for (unsigned int i = 0; i < vs->m->nr_cpus; i++)
		n += vs->vmap_block_queue[i].nr_blocks;
	return n;
}
