// SPDX-License-Identifier: MIT
/*
 * vmalloc.c - the vmalloc API of Linux 6.18 over the simulated space:
 * vmalloc/vzalloc/__vmalloc_node/__vmalloc_node_range, vmalloc_huge,
 * vfree/vfree_atomic, vmap/vunmap, get_vm_area/free_vm_area, vrealloc, and
 * vm_area_alloc_pages().
 *
 *   __vmalloc_node_range(size)
 *     __get_vm_area_node: vm_struct + alloc_vmap_area(size + guard page)
 *     __vmalloc_area_node: pages[] <- vm_area_alloc_pages()
 *                          vmap_pages_range(): PTEs (or PMDs for huge)
 *   vfree(addr)
 *     remove_vm_area: unlink the busy area, clear its PTEs, queue it lazy
 *     free every page (__free_page each, or free_pages_bulk with
 *     vfree_batch), the array and the vm_struct
 *
 * Bad input (size 0, overflowing size or alignment, a window outside the
 * space or smaller than the request, vfree of an address that is not the
 * start of a live area) is refused with a rate-limited warning, counted as
 * PL_EV_BAD_INPUT, and changes nothing. A failed allocation gives back
 * every page and its area before returning NULL (the kernel defers that
 * cleanup to a worker; here it is done at once, and the area is returned
 * to the free space directly since nothing was ever reachable through it).
 *
 * Invariant: a live vm_struct's pages[0..nr_pages) are order-0 pages with
 * _refcount 1 owned by the area (VM_ALLOC, or VM_MAP_PUT_PAGES), mapped in
 * order from vm->addr; nr_vmalloc_pages counts the VM_ALLOC ones.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vmap_area.h"
#include "mm/validate.h"

/* ---- small helpers ------------------------------------------------------ */

/* The caller has entered a machine; run the vfree_atomic() queue unless @atomic. */
static bool __vmalloc_enter(const char *fn, bool atomic)
{
	struct pl_machine *m = pl_this.machine;

	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("%s: the calling thread has not entered a machine (pl_enter)", fn);
		return false;
	}
	if (unlikely(READ_ONCE(m->vmap->deferred)) && !atomic)
		vfree_deferred_run(m->vmap);
	return true;
}

static inline bool vmalloc_enter(const char *fn)
{
	return __vmalloc_enter(fn, false);
}

void vmap_bad_input(const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	vm_count(PL_EV_BAD_INPUT, 1);
	pl_warn_ratelimited("%s", msg);
}

static unsigned long totalram_pages(void)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += m->node_zones[z].managed_pages;
	return n;
}

static struct vm_struct *vm_struct_alloc(struct vmap_space *vs)
{
	struct vm_struct *vm = pl_objcache_alloc(vs->vm_struct_cachep, this_cpu_id());

	if (vm)
		memset(vm, 0, sizeof(*vm));
	return vm;
}

static void vm_struct_free(struct vmap_space *vs, struct vm_struct *vm)
{
	pl_objcache_free(vs->vm_struct_cachep, vm, this_cpu_id());
}

/*
 * Give @vm's pages back to the page allocator: every page is an order-0
 * page (high-order blocks were split at allocation, huge ones too).
 *
 *   v6.18, v6.19-rc1  __free_page() on each: every page lands on the
 *                     order-0 PCP list, whatever order it came from;
 *   vfree_batch       seed 000 (Ryan Roberts, "vmalloc: Optimize vfree",
 *                     2026): free_pages_bulk() hands each run of
 *                     contiguous pfns to __free_contig_range(), which with
 *                     free_contig_batch (seed 001) frees it as aligned
 *                     high-order chunks, so an order-3 block allocated by
 *                     a06157804399 goes back to the order-3 PCP list.
 */
static void vm_free_pages(struct vmap_space *vs, struct vm_struct *vm)
{
	if (vs->m->config.design.vfree_batch) {
		if (vm->nr_pages)
			free_pages_bulk(vm->nr_pages, vm->pages);
	} else {
		for (unsigned int i = 0; i < vm->nr_pages; i++)
			__free_page(vm->pages[i]);
	}
	if (!(vm->flags & VM_MAP_PUT_PAGES))
		__atomic_sub_fetch(&vs->nr_vmalloc_pages, (long)vm->nr_pages, __ATOMIC_RELAXED);
	vm->nr_pages = 0;
}

/* ---- areas ------------------------------------------------------------ */

static struct vm_struct *__get_vm_area_node(unsigned long size, unsigned long align,
					    unsigned int shift, unsigned long flags,
					    unsigned long start, unsigned long end, int node,
					    gfp_t gfp, const void *caller)
{
	struct vmap_space *vs = this_vmap();
	unsigned long requested_size = size;
	struct vm_struct *area;
	struct vmap_area *va;
	int err;

	size = (size + (1UL << shift) - 1) & ~((1UL << shift) - 1);
	if (unlikely(!size))
		return NULL;
	area = vm_struct_alloc(vs);
	if (unlikely(!area))
		return NULL;
	if (!(flags & VM_NO_GUARD))
		size += PAGE_SIZE;
	area->flags = flags;
	area->caller = caller;
	area->requested_size = requested_size;
	va = alloc_vmap_area(size, align, start, end, node, gfp, 0, area, &err);
	if (!va) {
		vm_struct_free(vs, area);
		return NULL;
	}
	return area;
}

/* Undo __get_vm_area_node() for an area nothing was ever mapped through. */
static void put_unused_vm_area(struct vmap_space *vs, struct vm_struct *area)
{
	struct vmap_area *va = find_unlink_vmap_area(area->addr, VA_WANT_VM);

	if (va) {
		vunmap_range_noflush(va->va_start, va->va_end);
		if (va->flags & VMAP_BUMP) {
			vmap_bump_free(vs, va);
		} else {
			va->subtree_max_size = 0;
			spin_lock(&vs->free.lock);
			vs->ops->merge_or_add(vs, &vs->free, va);
			spin_unlock(&vs->free.lock);
		}
	}
	free(area->pages);
	vm_struct_free(vs, area);
}

static inline unsigned int ilog2_u(unsigned int n)
{
	return 31U - (unsigned int)__builtin_clz(n);
}

/* Append the 2^@order pages of split block @page to @pages at @nr. */
static inline void vm_add_split_block(struct page **pages, unsigned int nr, struct page *page,
				      unsigned int order)
{
	if (order)
		split_page(page, order);
	for (unsigned int i = 0; i < (1U << order); i++)
		pages[nr + i] = page + i;
}

/*
 * vm_alloc_large_orders() - a06157804399's large-order phase (switch
 * vmalloc_high_order, v6.19-rc1): greedily the largest order that fits
 * what remains (at most MAX_PAGE_ORDER), without direct reclaim; a failed
 * order is never tried again, the next one down is. 100 pages come as
 * 64 + 32 + 4. Each block is split_page()d to order-0 pages.
 * Return: pages obtained.
 */
static unsigned int vm_alloc_large_orders(gfp_t gfp, unsigned int order, unsigned int nr_pages,
					  struct page **pages)
{
	gfp_t large_gfp = (gfp & ~__GFP_DIRECT_RECLAIM) | __GFP_NOWARN;
	unsigned int max_attempt_order = MAX_PAGE_ORDER, nr = 0, large_order;

	large_order = min(max_attempt_order, ilog2_u(nr_pages));
	while (large_order > order && nr < nr_pages) {
		struct page *page = alloc_pages(large_gfp, large_order);

		if (!page) {
			max_attempt_order = --large_order;
			continue;
		}
		vm_add_split_block(pages, nr, page, large_order);
		nr += 1U << large_order;
		if (nr < nr_pages)
			large_order = min(max_attempt_order, ilog2_u(nr_pages - nr));
	}
	return nr;
}

/*
 * vm_area_alloc_pages() - fill @pages with @nr_pages order-0 pages: with
 * vmalloc_high_order the large orders first; then for @order 0 in bulk,
 * at most 100 per alloc_pages_bulk() call as 6.18 does (to bound the time
 * with the pcp lock held), then one by one; for a higher @order (huge
 * mappings) one block of 2^@order pages at a time, split_page()d.
 * Return: the number of pages obtained.
 */
static unsigned int vm_area_alloc_pages(gfp_t gfp, int nid, unsigned int order,
					unsigned int nr_pages, struct page **pages)
{
	unsigned int nr_allocated = 0;

	(void)nid;
	if (pl_this.machine->config.design.vmalloc_high_order)
		nr_allocated = vm_alloc_large_orders(gfp, order, nr_pages, pages);
	if (!order) {
		while (nr_allocated < nr_pages) {
			unsigned int nr_request = min(100U, nr_pages - nr_allocated);
			unsigned long nr;

			nr = alloc_pages_bulk(gfp, nr_request, pages + nr_allocated);
			nr_allocated += (unsigned int)nr;
			if (nr != nr_request)
				break;
		}
	}
	while (nr_allocated < nr_pages) {
		struct page *page = alloc_pages(gfp, order);

		if (!page)
			break;
		vm_add_split_block(pages, nr_allocated, page, order);
		nr_allocated += 1U << order;
	}
	return nr_allocated;
}

static int __vmalloc_area_node(struct vm_struct *area, gfp_t gfp, unsigned int page_shift,
			       int node)
{
	struct vmap_space *vs = this_vmap();
	unsigned int page_order = page_shift - PAGE_SHIFT;
	unsigned long size = get_vm_area_size(area);
	unsigned int nr_small_pages = (unsigned int)(size >> PAGE_SHIFT);
	gfp_t page_gfp = gfp | __GFP_NOWARN;	/* vmalloc_gfp_adjust() */
	int ret;

	area->pages = calloc(nr_small_pages, sizeof(struct page *));
	if (!area->pages) {
		if (!(gfp & __GFP_NOWARN))
			pl_warn_ratelimited("vmalloc error: size %lu, page array allocation failed",
					    size);
		return -ENOMEM;
	}
	area->page_order = page_order;
	area->nr_pages = vm_area_alloc_pages(page_gfp, node, page_order, nr_small_pages,
					     area->pages);
	__atomic_add_fetch(&vs->nr_vmalloc_pages, (long)area->nr_pages, __ATOMIC_RELAXED);
	if (area->nr_pages != nr_small_pages) {
		if (!(gfp & __GFP_NOWARN) && !page_order)
			pl_warn_ratelimited("vmalloc error: size %lu, failed to allocate pages", size);
		return -ENOMEM;
	}
	ret = vmap_pages_range(area->addr, area->addr + size, area->pages, page_shift);
	if (ret) {
		if (!(gfp & __GFP_NOWARN))
			pl_warn_ratelimited("vmalloc error: size %lu, failed to map pages", size);
		return ret;
	}
	return 0;
}

/* Check the arguments; the warning names the problem. Return: 0 or -EINVAL. */
static int vmalloc_check_args(unsigned long size, unsigned long align, unsigned long start,
			      unsigned long end)
{
	unsigned long need;

	if (unlikely(!size)) {
		vmap_bad_input("vmalloc: size 0");
		return -EINVAL;
	}
	if (unlikely(!align || (align & (align - 1)))) {
		vmap_bad_input("vmalloc: alignment %#lx is not a power of two", align);
		return -EINVAL;
	}
	if (unlikely(size > ULONG_MAX - 2 * PAGE_SIZE ||
		     (size >> PAGE_SHIFT) > totalram_pages())) {
		vmap_bad_input("vmalloc error: size %lu, exceeds total pages (size overflow)",
				  size);
		return -EINVAL;
	}
	if (unlikely(start < VMALLOC_START || end > VMALLOC_END || start >= end ||
		     !IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(end, PAGE_SIZE))) {
		vmap_bad_input("vmalloc: window [%#lx, %#lx) is not a page-aligned part of "
				  "[%#lx, %#lx)", start, end, VMALLOC_START, VMALLOC_END);
		return -EINVAL;
	}
	need = ((size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1)) + PAGE_SIZE;
	if (unlikely(end - start < need)) {
		vmap_bad_input("vmalloc: window [%#lx, %#lx) smaller than size %lu + guard",
				  start, end, size);
		return -EINVAL;
	}
	if (unlikely(align > end - start)) {
		vmap_bad_input("vmalloc: alignment %#lx larger than the window (alignment "
				  "overflow)", align);
		return -EINVAL;
	}
	return 0;
}

void *__vmalloc_node_range(unsigned long size, unsigned long align, unsigned long start,
			   unsigned long end, gfp_t gfp, pgprot_t prot, unsigned long vm_flags,
			   int node, const void *caller)
{
	unsigned long real_size = size, real_align = align, warns;
	unsigned int shift = PAGE_SHIFT;
	struct vmap_space *vs;
	struct vm_struct *area;

	(void)prot;
	if (!vmalloc_enter(__func__))
		return NULL;
	if (vmalloc_check_args(size, align, start, end))
		return NULL;
	if (unlikely((vm_flags & ~VMALLOC_CALLER_FLAGS) || pl_gfp_bad(gfp))) {
		if (pl_gfp_bad(gfp))
			pl_bad_gfp("vmalloc", gfp);
		else
			vmap_bad_input("vmalloc: vm_flags %#lx: %#lx are not a caller's to give",
				       vm_flags, vm_flags & ~VMALLOC_CALLER_FLAGS);
		return NULL;
	}
	vs = this_vmap();
	if (vm_flags & VM_ALLOW_HUGE_VMAP) {
		/*
		 * PMDs from PMD_SIZE up; below it arch_vmap_pte_supported_shift():
		 * arm64 maps areas of 64 KiB and more with contiguous PTEs, so
		 * their pages come as order-4 blocks (past the PCP, whose largest
		 * order below THP is 3) and the area is 64 KiB aligned and
		 * rounded; x86_64 maps small pages.
		 */
		if (size >= PMD_SIZE)
			shift = PMD_SHIFT;
		else if (vs->m->config.arch == PL_ARCH_ARM64 && size >= CONT_PTE_SIZE)
			shift = CONT_PTE_SHIFT;
		if (shift > PAGE_SHIFT) {
			align = max(real_align, 1UL << shift);
			size = (real_size + (1UL << shift) - 1) & ~((1UL << shift) - 1);
		}
	}
again:
	warns = __atomic_load_n(&vs->range_warnings, __ATOMIC_RELAXED);
	area = __get_vm_area_node(real_size, align, shift,
				  VM_ALLOC | VM_UNINITIALIZED | vm_flags, start, end, node, gfp,
				  caller);
	if (!area) {
		/*
		 * One failure, one warning: the kernel prints this after
		 * alloc_vmap_area()'s "Address range restricted" under a
		 * second rate limit; pagelab's one warning per failed call
		 * keeps the first, which names the range. Other warnings on
		 * the way (a fault injection's) do not stand in for this one.
		 */
		if (!(gfp & __GFP_NOWARN) &&
		    __atomic_load_n(&vs->range_warnings, __ATOMIC_RELAXED) == warns)
			pl_warn_ratelimited("vmalloc error: size %lu, vm_struct allocation failed",
					    real_size);
		vm_count(PL_EV_ALLOC_FAIL, 1);
		return NULL;
	}
	if (__vmalloc_area_node(area, gfp, shift, node)) {
		vm_free_pages(vs, area);
		put_unused_vm_area(vs, area);
		if (shift > PAGE_SHIFT) {
			/* vmalloc_huge falls back to small pages */
			shift = PAGE_SHIFT;
			align = real_align;
			size = real_size;
			goto again;
		}
		vm_count(PL_EV_ALLOC_FAIL, 1);
		return NULL;
	}
	(void)size;
	__atomic_and_fetch(&area->flags, ~VM_UNINITIALIZED, __ATOMIC_RELEASE);
	vm_count(PL_EV_VMALLOC, 1);
	return (void *)area->addr;
}

void *__vmalloc_node(unsigned long size, unsigned long align, gfp_t gfp, int node)
{
	return __vmalloc_node_range(size, align, VMALLOC_START, VMALLOC_END, gfp, PAGE_KERNEL, 0,
				    node, __builtin_return_address(0));
}

void *__vmalloc(unsigned long size, gfp_t gfp)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, gfp, PAGE_KERNEL, 0,
				    NUMA_NO_NODE, __builtin_return_address(0));
}

void *vmalloc(unsigned long size)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, GFP_KERNEL, PAGE_KERNEL,
				    0, NUMA_NO_NODE, __builtin_return_address(0));
}

void *vzalloc(unsigned long size)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END,
				    GFP_KERNEL | __GFP_ZERO, PAGE_KERNEL, 0, NUMA_NO_NODE,
				    __builtin_return_address(0));
}

void *vmalloc_node(unsigned long size, int node)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, GFP_KERNEL, PAGE_KERNEL,
				    0, node, __builtin_return_address(0));
}

void *vmalloc_huge(unsigned long size, gfp_t gfp)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, gfp, PAGE_KERNEL,
				    VM_ALLOW_HUGE_VMAP, NUMA_NO_NODE, __builtin_return_address(0));
}

void *vmalloc_user(unsigned long size)
{
	return __vmalloc_node_range(size, PAGE_SIZE /* SHMLBA */, VMALLOC_START, VMALLOC_END,
				    GFP_KERNEL | __GFP_ZERO, PAGE_KERNEL, VM_USERMAP, NUMA_NO_NODE,
				    __builtin_return_address(0));
}

/* ---- freeing -------------------------------------------------------------- */

/* An address vfree/vunmap can act on: Return 0 or -EINVAL (warned). */
static __attribute__((always_inline)) inline int __check_free_addr(const char *fn, unsigned long addr, unsigned long need_flags,
			     bool from_queue, struct vm_struct **vmp)
{
	struct vmap_area *va;
	unsigned long flags;

	if (unlikely(!IS_ALIGNED(addr, PAGE_SIZE))) {
		vmap_bad_input("Trying to %s() bad address (%#lx): not page aligned", fn, addr);
		return -EINVAL;
	}
	va = find_vmap_area(addr);
	if (unlikely(!va || va->va_start != addr || !va->vm)) {
		vmap_bad_input("Trying to %s() nonexistent vm area (%#lx)%s", fn, addr,
				  va ? ": not the start of an area" : "");
		return -EINVAL;
	}
	/*
	 * A percpu chunk's area is the percpu allocator's: freeing it here
	 * would pull the pages from under every live percpu allocation. The
	 * kernel does not check (its vfree() would free the chunk); pagelab
	 * refuses, as for any address that is not a vmalloc/vmap area.
	 */
	flags = __atomic_load_n(&va->vm->flags, __ATOMIC_RELAXED);
	/* One branch for the three refusals below (validate.h: free when they pass). */
	if (unlikely((flags & (VM_PCPU | (from_queue ? 0 : VM_FREE_QUEUED))) ||
		     (need_flags && !(flags & need_flags)))) {
		if (flags & VM_PCPU)
			vmap_bad_input("Trying to %s() area %#lx of a percpu chunk", fn, addr);
		else if (need_flags && !(flags & need_flags))
			vmap_bad_input("Trying to %s() area %#lx of the wrong kind (flags %#lx)", fn,
				       addr, flags);
		else
			vmap_bad_input("Trying to %s() area %#lx already queued for freeing (double "
				       "free?)", fn, addr);
		return -EINVAL;
	}
	*vmp = va->vm;
	return 0;
}

static inline int check_free_addr(const char *fn, unsigned long addr, unsigned long need_flags,
				  struct vm_struct **vmp)
{
	return __check_free_addr(fn, addr, need_flags, false, vmp);
}

/*
 * remove_vm_area() - vfree()'s and vunmap()'s one busy-index lookup, as the
 * kernel's remove_vm_area() -> find_unlink_vmap_area(): unlink the area
 * starting at @addr if it is a vmalloc/vmap area (not a percpu chunk's) of
 * a kind in @need_flags (0: any), clear its PTEs and free its range lazily.
 * A refusal changes nothing; only then does a second lookup (on the error
 * path, in check_free_addr()) find the words for the warning.
 * Unless @from_queue, an area queued by vfree_atomic() or kvfree_rcu() is
 * refused too (VM_FREE_QUEUED): only the queue frees it.
 * Return: 0 with *@vmp set, or -EINVAL (warned).
 */
static __attribute__((always_inline)) inline int
remove_vm_area(const char *fn, unsigned long addr, unsigned long need_flags, bool from_queue,
	       struct vm_struct **vmp)
{
	struct vmap_area *va;

	if (unlikely(!IS_ALIGNED(addr, PAGE_SIZE))) {
		vmap_bad_input("Trying to %s() bad address (%#lx): not page aligned", fn, addr);
		return -EINVAL;
	}
	va = find_unlink_vmap_area(addr, VA_WANT_VM | VA_WANT_NOT_PCPU | need_flags |
					 (from_queue ? 0 : VA_WANT_NOT_QUEUED));
	if (unlikely(!va)) {
		if (!__check_free_addr(fn, addr, need_flags, from_queue, vmp))	/* raced */
			vmap_bad_input("Trying to %s() nonexistent vm area (%#lx)", fn, addr);
		return -EINVAL;
	}
	*vmp = va->vm;
	vunmap_range_noflush(va->va_start, va->va_end);	/* free_unmap_vmap_area() */
	free_vmap_area_noflush(va);
	return 0;
}

static __attribute__((always_inline)) inline int __vfree(const void *addr, bool from_queue)
{
	unsigned long a = (unsigned long)addr;
	struct vmap_space *vs;
	struct vm_struct *vm;

	if (!addr)
		return 0;
	if (!vmalloc_enter(__func__))
		return -EINVAL;
	if (remove_vm_area("vfree", a, 0, from_queue, &vm))
		return -EINVAL;
	vs = this_vmap();
	vm_free_pages(vs, vm);
	free(vm->pages);
	vm_struct_free(vs, vm);
	vm_count(PL_EV_VFREE, 1);
	return 0;
}

int vfree(const void *addr)
{
	return __vfree(addr, false);
}

/* The vfree_atomic() and kvfree_rcu() queues' free of an area they hold. */
int vfree_queued(const void *addr)
{
	return __vfree(addr, true);
}

/* Mark @vm queued; false (warned) when another call queued it first. */
static bool vm_mark_queued(const char *fn, struct vm_struct *vm)
{
	if (__atomic_fetch_or(&vm->flags, VM_FREE_QUEUED, __ATOMIC_ACQ_REL) & VM_FREE_QUEUED) {
		vmap_bad_input("Trying to %s() area %#lx already queued for freeing (double "
			       "free?)", fn, vm->addr);
		return false;
	}
	return true;
}

/*
 * vfree_atomic(): the kernel links the area into a per-CPU llist through
 * its own first word; here into one per-machine list, the link written
 * through the page tables.
 */
int vfree_atomic(const void *addr)
{
	unsigned long a = (unsigned long)addr, head;
	struct vmap_space *vs;
	struct vm_struct *vm;
	unsigned long *link;

	if (!addr)
		return 0;
	if (!__vmalloc_enter(__func__, true))
		return -EINVAL;
	if (check_free_addr("vfree_atomic", a, VM_ALLOC, &vm))
		return -EINVAL;
	vs = this_vmap();
	link = vmalloc_host_addr(vs, a);
	if (!link) {
		vmap_bad_input("Trying to vfree_atomic() an unmapped area (%#lx)", a);
		return -EINVAL;
	}
	if (!vm_mark_queued("vfree_atomic", vm))
		return -EINVAL;
	head = __atomic_load_n(&vs->deferred, __ATOMIC_RELAXED);
	do {
		*link = head;
	} while (!__atomic_compare_exchange_n(&vs->deferred, &head, a, false, __ATOMIC_RELEASE,
					      __ATOMIC_RELAXED));
	return 0;
}

void vfree_deferred_run(struct vmap_space *vs)
{
	unsigned long a = __atomic_exchange_n(&vs->deferred, 0, __ATOMIC_ACQUIRE);

	while (a) {
		unsigned long *link = vmalloc_host_addr(vs, a);
		unsigned long next = link ? *link : 0;

		vfree_queued((const void *)a);
		a = next;
	}
}

void pl_vmalloc_flush_deferred(struct pl_machine *m)
{
	if (pl_check_this_machine(__func__, m))
		return;
	if (m->vmap && READ_ONCE(m->vmap->deferred))
		vfree_deferred_run(m->vmap);
}

/* ---- vmap / vunmap -------------------------------------------------------- */

void *vmap(struct page **pages, unsigned int count, unsigned long flags, pgprot_t prot)
{
	struct pl_machine *m = pl_this.machine;
	struct vmap_space *vs;
	struct vm_struct *area;
	unsigned long size;

	(void)prot;
	if (!vmalloc_enter(__func__))
		return NULL;
	if (!count || !pages || count > totalram_pages()) {
		vmap_bad_input("vmap: %u pages (none, or more than the machine has)", count);
		return NULL;
	}
	if (unlikely(flags & ~VMAP_CALLER_FLAGS)) {
		vmap_bad_input("vmap: flags %#lx: %#lx are not vmap()'s", flags,
			       flags & ~VMAP_CALLER_FLAGS);
		return NULL;
	}
	for (unsigned int i = 0; i < count; i++) {
		struct page *p = pages[i];

		if (!p || p < m->mem_map || p >= m->mem_map + m->max_pfn ||
		    (uintptr_t)((char *)p - (char *)m->mem_map) % sizeof(struct page) ||
		    page_ref_count(p) <= 0) {
			vmap_bad_input("vmap: pages[%u] is not an allocated page of this machine",
					  i);
			return NULL;
		}
	}
	vs = this_vmap();
	size = (unsigned long)count << PAGE_SHIFT;
	area = __get_vm_area_node(size, 1, PAGE_SHIFT, flags | VM_MAP, VMALLOC_START, VMALLOC_END,
				  NUMA_NO_NODE, GFP_KERNEL, __builtin_return_address(0));
	if (!area)
		return NULL;
	if (vmap_pages_range(area->addr, area->addr + size, pages, PAGE_SHIFT)) {
		put_unused_vm_area(vs, area);
		return NULL;
	}
	if (flags & VM_MAP_PUT_PAGES) {
		area->pages = pages;
		area->nr_pages = count;
	}
	return (void *)area->addr;
}

int vunmap(const void *addr)
{
	unsigned long a = (unsigned long)addr;
	struct vmap_space *vs;
	struct vm_struct *vm;

	if (!addr)
		return 0;
	if (!vmalloc_enter(__func__))
		return -EINVAL;
	/* (a vmalloc area never has VM_MAP: __vmalloc_node_range() refuses it) */
	if (remove_vm_area("vunmap", a, VM_MAP, false, &vm))
		return -EINVAL;
	vs = this_vmap();
	vm_struct_free(vs, vm);
	return 0;
}

/* ---- reserved areas ------------------------------------------------------- */

struct vm_struct *get_vm_area(unsigned long size, unsigned long flags)
{
	if (!vmalloc_enter(__func__))
		return NULL;
	if (!size || size > VMALLOC_END - VMALLOC_START - PAGE_SIZE) {
		vmap_bad_input("get_vm_area: size %#lx (none, or more than the vmalloc space)", size);
		return NULL;
	}
	if (unlikely(flags & ~(VMAP_CALLER_FLAGS & ~VM_MAP_PUT_PAGES))) {
		vmap_bad_input("get_vm_area: flags %#lx: %#lx are not get_vm_area()'s", flags,
			       flags & ~(VMAP_CALLER_FLAGS & ~VM_MAP_PUT_PAGES));
		return NULL;
	}
	/* VM_MAP: the area is a vmap-kind one, for vunmap()/free_vm_area()'s lookup */
	return __get_vm_area_node(size, 1, PAGE_SHIFT, flags | VM_MAP | VM_GET_AREA, VMALLOC_START,
				  VMALLOC_END,
				  NUMA_NO_NODE, GFP_KERNEL, __builtin_return_address(0));
}

int free_vm_area(struct vm_struct *area)
{
	struct vm_struct *vm;

	if (!vmalloc_enter(__func__))
		return -EINVAL;
	if (!area) {
		vmap_bad_input("free_vm_area: NULL area");
		return -EINVAL;
	}
	if (remove_vm_area("free_vm_area", area->addr, VM_MAP, false, &vm))
		return -EINVAL;
	/* the lookup found the area at that address: it is @area itself */
	vm_struct_free(this_vmap(), vm);
	return 0;
}

/* ---- lookups -------------------------------------------------------------- */

struct vm_struct *find_vm_area(const void *addr)
{
	struct vmap_area *va;

	if (!pl_this.machine || !pl_this.machine->vmap)
		return NULL;
	va = find_vmap_area((unsigned long)addr);
	return va ? va->vm : NULL;
}

void vm_unmap_aliases(void)
{
	if (!vmalloc_enter(__func__))
		return;
	_vm_unmap_aliases(this_vmap());	/* vmap blocks' dirty ranges, lazy areas */
}

/* ---- vrealloc --------------------------------------------------------------- */

/* Copy @len bytes from the start of area @from to area @to, page by page. */
static void vm_copy(struct vm_struct *to, struct vm_struct *from, unsigned long len)
{
	for (unsigned long off = 0, i = 0; off < len; off += PAGE_SIZE, i++)
		memcpy(page_address(to->pages[i]), page_address(from->pages[i]),
		       min(PAGE_SIZE, len - off));
}

void *vrealloc(const void *p, unsigned long size, gfp_t gfp)
{
	unsigned long alloced_size, old_size;
	struct vm_struct *vm, *nvm;
	void *n;

	if (!p)
		return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, gfp, PAGE_KERNEL,
					    0, NUMA_NO_NODE, __builtin_return_address(0));
	if (!vmalloc_enter(__func__))
		return NULL;
	if (pl_check_gfp(__func__, gfp))
		return NULL;
	if (check_free_addr("vrealloc", (unsigned long)p, VM_ALLOC, &vm))
		return NULL;
	if (!size) {
		vfree(p);
		return NULL;
	}
	if (vm->flags & VM_UNINITIALIZED)
		return NULL;
	alloced_size = get_vm_area_size(vm);
	old_size = vm->requested_size;
	if (old_size > alloced_size) {
		pl_warn_ratelimited("vrealloc() has mismatched area vs requested sizes (%p)", p);
		return NULL;
	}
	if (size <= old_size) {
		/* Shrink in place; "freed" bytes are zeroed when asked to (__GFP_ZERO). */
		if (gfp & __GFP_ZERO)
			vmalloc_memset((char *)p + size, 0, old_size - size);
		vm->requested_size = size;
		return (void *)p;
	}
	if (size <= alloced_size) {
		/* The bytes are already there: grow in place. */
		if (gfp & __GFP_ZERO)
			vmalloc_memset((char *)p + old_size, 0, size - old_size);
		vm->requested_size = size;
		return (void *)p;
	}
	n = __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, gfp, PAGE_KERNEL, 0,
				 NUMA_NO_NODE, __builtin_return_address(0));
	if (!n)
		return NULL;
	nvm = find_vm_area(n);
	vm_copy(nvm, vm, old_size);
	vfree(p);
	return n;
}

/* ---- stats ------------------------------------------------------------------ */

static unsigned long count_list(struct list_head *head, struct pl_spinlock *lock)
{
	unsigned long n = 0;
	struct list_head *pos;

	spin_lock(lock);
	list_for_each(pos, head)
		n++;
	spin_unlock(lock);
	return n;
}

void pl_vmalloc_stats(struct pl_machine *m, struct pl_vmalloc_stats *out)
{
	struct vmap_space *vs;

	if (pl_check_ptr(__func__, m, "machine") || pl_check_ptr(__func__, out, "out"))
		return;
	vs = m->vmap;
	memset(out, 0, sizeof(*out));
	if (!vs)
		return;
	out->nr_vmap_nodes = vs->nr_vmap_nodes;
	out->va_objsize = vs->ops->va_objsize;
	out->nr_free = count_list(&vs->free.head, &vs->free.lock);
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		out->nr_busy += count_list(&vn->busy.head, &vn->busy.lock);
		out->nr_lazy += count_list(&vn->lazy.head, &vn->lazy.lock);
		for (int p = 0; p < MAX_VA_SIZE_PAGES; p++)
			out->nr_pooled += READ_ONCE(vn->pool[p].len);
	}
	{	/* bump chunks: their live areas are the busy ones, not they */
		unsigned long chunks, live;

		vmap_bump_stats(vs, &chunks, &live);
		out->nr_busy = out->nr_busy - chunks + live;
	}
	out->lazy_pages = (unsigned long)__atomic_load_n(&vs->vmap_lazy_nr, __ATOMIC_RELAXED);
	out->lazy_max_pages = vs->lazy_max;
	out->vmalloc_pages = (unsigned long)__atomic_load_n(&vs->nr_vmalloc_pages, __ATOMIC_RELAXED);
	out->pgtable_pages = (unsigned long)__atomic_load_n(&vs->pgt.nr_table_pages, __ATOMIC_RELAXED);
	out->va_objects = (unsigned long)pl_objcache_in_use(vs->vmap_area_cachep);
}
