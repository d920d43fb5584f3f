/* SPDX-License-Identifier: MIT */
/*
 * vmalloc.h - the vmalloc API and its types, named and shaped as the
 * kernel's include/linux/vmalloc.h (Linux 6.18).
 *
 * The vmalloc space is simulated: addresses in [VMALLOC_START, VMALLOC_END)
 * (32 TiB at the x86_64 4-level base) are not host addresses and must not be
 * dereferenced. They are mapped by 4-level page tables whose table pages
 * come from the machine's page allocator; vmalloc_to_page() and
 * vmalloc_write()/vmalloc_read() walk them to reach the real page frames.
 *
 *   struct vmap_area   (src/vmalloc/vmap_area.h) one range of the space:
 *                      free, busy, lazy (freed, waiting for the TLB flush)
 *                      or pooled (pre-cut, in a node's pool);
 *   struct vm_struct   what a busy vmalloc/vmap area holds: its pages.
 *
 * Invariants (checked by pl_check_vmalloc()):
 *  - free, busy, lazy and pooled areas partition [VMALLOC_START,
 *    VMALLOC_END) exactly: no overlap, no hole; no two free areas touch;
 *  - a busy area with a vm_struct maps exactly vm->nr_pages pages (its
 *    guard page unmapped); lazy, pooled and free areas map nothing.
 */
#ifndef PAGELAB_VMALLOC_H
#define PAGELAB_VMALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include "list.h"
#include "mm.h"

/* x86_64 with 4-level page tables, no KASLR: the kernel's vmalloc window. */
#define VMALLOC_START		0xffffc90000000000UL
#define VMALLOC_SIZE		(32UL << 40)
#define VMALLOC_END		(VMALLOC_START + VMALLOC_SIZE)

#define PMD_SHIFT		21
#define PMD_SIZE		(1UL << PMD_SHIFT)
/* arm64 (4 KiB pages): 16 PTEs with the contiguous bit map 64 KiB */
#define CONT_PTE_SHIFT		16
#define CONT_PTE_SIZE		(1UL << CONT_PTE_SHIFT)
#define PUD_SHIFT		30
#define PGDIR_SHIFT		39

/* vm_struct flags (include/linux/vmalloc.h) */
#define VM_IOREMAP		0x00000001UL
#define VM_ALLOC		0x00000002UL
#define VM_MAP			0x00000004UL
#define VM_USERMAP		0x00000008UL
#define VM_DMA_COHERENT		0x00000010UL
#define VM_UNINITIALIZED	0x00000020UL
#define VM_NO_GUARD		0x00000040UL
#define VM_KASAN		0x00000080UL
#define VM_FLUSH_RESET_PERMS	0x00000100UL
#define VM_MAP_PUT_PAGES	0x00000200UL
#define VM_ALLOW_HUGE_VMAP	0x00000400UL
#define VM_SPARSE		0x00001000UL
#define VM_PCPU			0x00200000UL /* pagelab: a percpu chunk's area, populated on demand */

/* vmap_area->flags: low bits, and the encoded vmap node id from bit 8 */
#define VMAP_RAM		0x1UL
#define VMAP_BLOCK		0x2UL
#define VMAP_FLAGS_MASK		0x3UL

#define NUMA_NO_NODE		(-1)

/* Page protections: only the distinction mapped/unmapped is simulated. */
typedef unsigned long pgprot_t;
#define PAGE_KERNEL		0x163UL /* present, rw, accessed, dirty, global */

/**
 * struct vm_struct - a busy vmalloc/vmap area's contents.
 * @addr:           start of the area.
 * @size:           its size, guard page included (get_vm_area_size() excludes it).
 * @flags:          VM_* flags.
 * @pages:          one pointer per 4 KiB page (huge mappings too).
 * @page_order:     order of the mapping: 0, or 9 for PMD mappings.
 * @nr_pages:       pages in @pages.
 * @caller:         the caller's return address, for /proc/vmallocinfo.
 * @requested_size: the size asked for (vrealloc grows and shrinks within
 *                  the area).
 */
struct vm_struct {
	struct vm_struct *next;
	unsigned long addr;
	unsigned long size;
	unsigned long flags;
	struct page **pages;
	unsigned int page_order;
	unsigned int nr_pages;
	unsigned long phys_addr;
	const void *caller;
	unsigned long requested_size;
};

static inline unsigned long get_vm_area_size(const struct vm_struct *area)
{
	return (area->flags & VM_NO_GUARD) ? area->size : area->size - PAGE_SIZE;
}

/* ---- the allocation API (on the current machine and vCPU) ---------------- */

/** vmalloc() - @size bytes of virtually contiguous memory. Return: address or NULL. */
void *vmalloc(unsigned long size);
/** vzalloc() - vmalloc() of zeroed memory. */
void *vzalloc(unsigned long size);
/** vmalloc_node()/vzalloc_node(): the same on a node (one node: ignored). */
void *vmalloc_node(unsigned long size, int node);
/**
 * __vmalloc_node() - vmalloc with an alignment (a power of two) and gfp
 * (GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC, with __GFP_ZERO, __GFP_NOWARN).
 */
void *__vmalloc_node(unsigned long size, unsigned long align, gfp_t gfp, int node);
/** __vmalloc() - __vmalloc_node() with alignment 1 on any node. */
void *__vmalloc(unsigned long size, gfp_t gfp);
/**
 * __vmalloc_node_range() - the general form: an area inside [@start, @end)
 * of the vmalloc space, @vm_flags (VM_ALLOW_HUGE_VMAP, VM_NO_GUARD, ...).
 * Return: the address, or NULL with a rate-limited warning (unless
 * __GFP_NOWARN) and nothing left allocated.
 */
void *__vmalloc_node_range(unsigned long size, unsigned long align, unsigned long start,
			   unsigned long end, gfp_t gfp, pgprot_t prot, unsigned long vm_flags,
			   int node, const void *caller);
/** vmalloc_huge() - vmalloc mapped with 2 MiB PMDs where @size >= PMD_SIZE. */
void *vmalloc_huge(unsigned long size, gfp_t gfp);
/** vmalloc_user() - zeroed, SHMLBA aligned, VM_USERMAP. */
void *vmalloc_user(unsigned long size);

/**
 * vfree() - free a vmalloc area and its pages; the range itself is freed
 * lazily (purged with one TLB flush once lazy_max_pages() pages pile up).
 * Return: 0 (also for NULL), or -EINVAL after a rate-limited warning for an
 * address that is not the start of a live vmalloc/vmap area (unaligned,
 * unknown, already freed), with nothing changed.
 */
int vfree(const void *addr);
/**
 * vfree_atomic() - vfree() from a context that may not take the purge
 * mutex: queued on a per-machine lockless list, done by the next vmalloc
 * call, vfree, or pl_vmalloc_flush_deferred(). Return: 0 or -EINVAL.
 */
int vfree_atomic(const void *addr);
/** vrealloc() - grow or shrink in place when the area allows, else move. */
void *vrealloc(const void *p, unsigned long size, gfp_t gfp);

/**
 * vmap() - map @count pages (order-0, owned by the caller) at a new area.
 * @flags: VM_MAP, and VM_MAP_PUT_PAGES to hand the pages to vfree(), and
 *         with them @pages itself, which must then come from malloc() (the
 *         kernel's vfree() kvfree()s it likewise).
 */
void *vmap(struct page **pages, unsigned int count, unsigned long flags, pgprot_t prot);
/** vunmap() - unmap a vmap() area; the pages stay the caller's. Return: 0 or -EINVAL. */
int vunmap(const void *addr);

/**
 * get_vm_area() - reserve @size bytes (rounded up to pages, a guard page
 * after them) of the vmalloc space with nothing mapped and no page
 * allocated, as the kernel's get_vm_area(); the area is a vmap one
 * (VM_MAP, with @flags of vmap()'s but VM_MAP_PUT_PAGES).
 * Return: the area, or NULL (a rate-limited warning for bad input).
 */
struct vm_struct *get_vm_area(unsigned long size, unsigned long flags);
/**
 * free_vm_area() - give back an area of get_vm_area() (or vmap()): its
 * range is freed lazily like vunmap()'s, and @area itself is freed.
 * Return: 0, or -EINVAL after a rate-limited warning (NULL, or no live
 * area of that kind at @area->addr), with nothing changed.
 */
int free_vm_area(struct vm_struct *area);

/* vm_map_ram() mappings of up to VMAP_MAX_ALLOC pages come from per-CPU blocks. */
#define VMAP_MAX_ALLOC		64

/**
 * vm_map_ram() - map @count pages (order-0, the caller's) fast: up to
 * VMAP_MAX_ALLOC pages from this vCPU's vmap blocks, more as an area of
 * its own without a guard page. Unmap with vm_unmap_ram() and the same
 * @count; the range is flushed lazily (vm_unmap_aliases() forces it).
 * @node: NUMA_NO_NODE (one node: ignored).
 * Return: the address, or NULL (bad pages, no space: nothing changed).
 */
void *vm_map_ram(struct page **pages, unsigned int count, int node);
/**
 * vm_unmap_ram() - unmap a vm_map_ram() mapping of @count pages.
 * Return: 0, or -EINVAL after a rate-limited warning, nothing changed, for
 * an address that is not the start of a live mapping or the wrong @count.
 */
int vm_unmap_ram(const void *mem, unsigned int count);

/** is_vmalloc_addr() - @addr lies in [VMALLOC_START, VMALLOC_END). */
static inline bool is_vmalloc_addr(const void *addr)
{
	unsigned long a = (unsigned long)addr;

	return a >= VMALLOC_START && a < VMALLOC_END;
}

/** vmalloc_to_page() - the page mapped at @addr, by a page-table walk; NULL if none. */
struct page *vmalloc_to_page(const void *addr);
/** vmalloc_to_pfn() - page_to_pfn(vmalloc_to_page(@addr)). */
unsigned long vmalloc_to_pfn(const void *addr);
/**
 * vmalloc_write() / vmalloc_read() - copy to/from the simulated virtual
 * range [@addr, @addr + @len), walking the page tables page by page.
 * Return: 0, or -EFAULT (nothing copied) if any page is unmapped.
 */
int vmalloc_write(void *addr, const void *src, size_t len);
int vmalloc_read(void *dst, const void *addr, size_t len);
/** vmalloc_memset() - memset through the mappings. Return: 0 or -EFAULT. */
int vmalloc_memset(void *addr, int c, size_t len);

/** find_vm_area() - the vm_struct of the busy area starting at @addr, or NULL. */
struct vm_struct *find_vm_area(const void *addr);

/** vm_unmap_aliases() - purge every lazily freed area now (one TLB flush). */
void vm_unmap_aliases(void);

/* ---- reports, knobs and checks ------------------------------------------- */

/**
 * pl_show_vmallocinfo() - /proc/vmallocinfo in the kernel's format; NUL-
 * terminated, pl_show_vmallocinfo(m, NULL, 0) gives the length needed (the
 * pl_show_*() contract in mm.h).
 * Return: length, or -ENOSPC.
 */
long pl_show_vmallocinfo(struct pl_machine *m, char *buf, size_t size);

/** pl_show_vmallocinfo_file() - /proc/vmallocinfo to @f. Return: length, -ENOMEM or -EIO. */
long pl_show_vmallocinfo_file(struct pl_machine *m, FILE *f);

/**
 * pl_vmalloc_for_each_lock() - call @fn for every spinlock of @m's vmalloc
 * space with its lockdep class name (free_vmap_area_lock, &vn->busy.lock,
 * &vn->lazy.lock, &vn->pool_lock, &vbq->lock, pcpu_lock, and seed 004's
 * per-CPU bump locks), for /proc/lock_stat (pl_show_lock_stat()).
 * Context: reads the locks' numbers racily; the space must stay alive.
 */
void pl_vmalloc_for_each_lock(struct pl_machine *m,
			      void (*fn)(void *ctx, const char *cls, const struct pl_spinlock *lock),
			      void *ctx);

/**
 * pl_check_vmalloc() - the vmalloc checker: the partition of the space, the
 * free index's augmented values and order, the busy/lazy indexes per node,
 * the pools, the lazy page count, the vmap_area objects in use, and the
 * page tables against the busy areas. Prints each problem on stderr.
 * Context: no vmalloc call may run on @m concurrently.
 * Return: the number of inconsistencies (0 = clean).
 */
int pl_check_vmalloc(struct pl_machine *m);

/**
 * pl_vmalloc_purge() - purge lazy areas and decay every node pool fully,
 * as the allocation-failure path does. Context: a vCPU of @m.
 */
void pl_vmalloc_purge(struct pl_machine *m);

/**
 * pl_vmalloc_trim_pgtables() - free the page-table pages that map nothing.
 * The kernel keeps vmalloc's table pages forever; tests call this to see
 * the page allocator fully coalesced after freeing everything.
 * Context: a vCPU of @m, no concurrent vmalloc. Return: pages freed.
 */
unsigned long pl_vmalloc_trim_pgtables(struct pl_machine *m);

/** pl_vmalloc_flush_deferred() - run the vfree_atomic() queue now. */
void pl_vmalloc_flush_deferred(struct pl_machine *m);

/**
 * struct pl_vmalloc_stats - a snapshot of the vmalloc space's counters.
 * @nr_busy, @nr_lazy, @nr_pooled, @nr_free: areas in each state.
 * @lazy_pages:     vmap_lazy_nr; @lazy_max_pages: its purge threshold.
 * @vmalloc_pages:  nr_vmalloc_pages (pages held by vmalloc areas).
 * @pgtable_pages:  page-table pages taken from the page allocator.
 * @va_objects:     vmap_area objects allocated from their cache.
 * @va_objsize:     bytes per vmap_area object (72 for the rbtree index, 48
 *                  for the maple index: seed 004's shrink).
 */
struct pl_vmalloc_stats {
	unsigned long nr_busy, nr_lazy, nr_pooled, nr_free;
	unsigned long lazy_pages, lazy_max_pages;
	unsigned long vmalloc_pages;
	unsigned long pgtable_pages;
	unsigned long va_objects;
	unsigned long va_objsize;
	unsigned int nr_vmap_nodes;
};
void pl_vmalloc_stats(struct pl_machine *m, struct pl_vmalloc_stats *out);

#endif /* PAGELAB_VMALLOC_H */
