// SPDX-License-Identifier: MIT
/*
 * page_alloc_api.c - the page allocator's public entry points, after the
 * kernel's mm/page_alloc.c and include/linux/mm.h (v6.18): alloc_pages(),
 * __get_free_pages(), get_zeroed_page(), __free_pages(), free_pages(),
 * free_frozen_pages(), get_page(), put_page() and virt_to_page().
 *
 * Each entry checks its arguments before it changes anything (pagelab's bad
 * input rule: an error code, one rate-limited warning, a counted
 * PL_EV_BAD_INPUT, no state touched), takes or drops the page's reference,
 * and then calls the core in page_alloc.c (get_page_from_freelist(),
 * __free_frozen_pages()) or the slow path (page_alloc_slowpath.c).
 *
 * Invariants: a page handed out has _refcount 1 and alloc_order set to its
 * order; a free never takes _refcount below zero (a second free is an
 * error, not a corruption); a block's pages go back to the core only when
 * the last reference is dropped.
 */
#include "page_alloc_hot.h"
#include "validate.h"

static bool no_machine(const char *fn)
{
	if (likely(pl_this.machine))
		return false;
	pl_warn_ratelimited("%s: the calling thread has not entered a machine (pl_enter)", fn);
	return true;
}

static int bad_input(const char *fn, const struct page *page, unsigned int order,
		     const char *why)
{
	struct pl_machine *m = pl_this.machine;

	pl_count(PL_EV_BAD_INPUT, 1);
	if (pl_page_in_machine(m, page))
		pl_warn_ratelimited("%s: pfn %#lx order %u: %s", fn, page_to_pfn(page), order, why);
	else
		pl_warn_ratelimited("%s: page %p order %u: %s", fn, (const void *)page, order, why);
	return -EINVAL;
}

/*
 * The checks every free entry makes before it changes anything: the page is
 * one of this machine's, the order is valid and the pfn aligned to it.
 */
static __always_inline int check_free_args(const char *fn, struct page *page, unsigned int order)
{
	struct pl_machine *m = pl_this.machine;

	if (no_machine(fn))
		return -EINVAL;
	if (unlikely(!page || !pl_page_in_machine(m, page)))
		return bad_input(fn, page, order, "page outside the machine (pfn out of range)");
	if (unlikely(order > MAX_PAGE_ORDER))
		return bad_input(fn, page, order, "order above MAX_PAGE_ORDER");
	if (unlikely(!IS_ALIGNED(page_to_pfn(page), 1UL << order)))
		return bad_input(fn, page, order, "pfn misaligned for its order");
	return 0;
}

/*
 * put_page_testzero() that refuses to go below zero: a free of a page with
 * no reference left is a double free (or a free of a never allocated page).
 */
static int put_page_testzero_checked(struct page *page, bool *zero)
{
	int old = __atomic_load_n(&page->_refcount, __ATOMIC_RELAXED);

	do {
		if (old <= 0)
			return -EINVAL;
	} while (!__atomic_compare_exchange_n(&page->_refcount, &old, old - 1, false,
					      __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
	*zero = old == 1;
	return 0;
}

/*
 * free_noncompound_block(): __free_pages() of a non-compound block of order
 * > 0. If another holder (compaction's scanner) has a reference to the
 * first page, the rest of the block is freed now, in halves, and the first
 * page is left to the last put_page(), which frees it as an order-0 page.
 * The order is cleared before the reference is dropped: after the drop the
 * page may already be freed and reused.
 */
static __attribute__((__noinline__)) int free_noncompound_block(const char *func,
								struct page *page,
								unsigned int order, fpi_t fpi)
{
	bool zero;

	WRITE_ONCE(page->alloc_order, 0);
	if (put_page_testzero_checked(page, &zero)) {
		WRITE_ONCE(page->alloc_order, order);
		return bad_input(func, page, order, "page is not allocated (double free?)");
	}
	if (zero) {
		__free_frozen_pages(page, order, fpi);
		return 0;
	}
	while (order-- > 0)
		__free_frozen_pages(page + (1UL << order), order, fpi);
	return 0;
}

/*
 * __free_pages() with @fpi for the last reference's free; inline in both
 * callers, each instantiating it three times: without the hooks when
 * pl_hooks_off() (page_alloc_hot.h), and out of line with only the design
 * switches' (pl_hooks_design_only()) or with every hook.
 */
static __always_inline int free_pages_fpi_h(const char *func, struct page *page,
					    unsigned int order, fpi_t fpi, const unsigned int hooks)
{
	bool zero;
	int err = check_free_args(func, page, order);

	if (err)
		return err;
	if (unlikely(PageTail(page)))
		return bad_input(func, page, order, "tail page of a compound page");
	if (unlikely(PageBuddy(page) || page_ref_count(page) <= 0))
		return bad_input(func, page, order, "page is not allocated (double free?)");
	if (unlikely(page->alloc_order != order))
		return bad_input(func, page, order, "order differs from the allocation's");

	if (unlikely(order && !PageHead(page)))
		err = free_noncompound_block(func, page, order, fpi);
	else if (put_page_testzero_checked(page, &zero))
		return bad_input(func, page, order, "page is not allocated (double free?)");
	else if (zero)
		__free_frozen_pages_h(page, order, fpi, hooks);
	if (err)
		return err;
	if (hooks & PL_HV_ALL)
		pl_debug_check(pl_this.machine, 3, func);
	return 0;
}

/* Not the baseline's variant: only the design switches' hooks, or every one. */
static __attribute__((__noinline__)) int free_pages_hooks(const char *func, struct page *page,
							  unsigned int order, fpi_t fpi)
{
	struct pl_machine *m = pl_this.machine;

	if (likely(m) && pl_hooks_design_only(m))
		return free_pages_fpi_h(func, page, order, fpi, PL_HV_DESIGN);
	return free_pages_fpi_h(func, page, order, fpi, PL_HV_ALL);
}

static __always_inline int free_pages_fpi(const char *func, struct page *page,
					  unsigned int order, fpi_t fpi)
{
	struct pl_machine *m = pl_this.machine;

	if (likely(m) && likely(pl_hooks_off(m)))
		return free_pages_fpi_h(func, page, order, fpi, 0);
	return free_pages_hooks(func, page, order, fpi);
}

int __free_pages(struct page *page, unsigned int order)
{
	return free_pages_fpi(__func__, page, order, FPI_NONE);
}

int pl_free_pages_pcp_busy(struct page *page, unsigned int order)
{
	return free_pages_fpi(__func__, page, order, FPI_PL_PCP_BUSY);
}

int free_frozen_pages(struct page *page, unsigned int order)
{
	int err = check_free_args(__func__, page, order);

	if (err)
		return err;
	if (unlikely(PageBuddy(page)))
		return bad_input(__func__, page, order, "page is not allocated (double free?)");
	if (unlikely(page_ref_count(page) != 0)) {
		bad_page(page, "nonzero _refcount: freed while a reference is still held");
		return -EBUSY;
	}
	err = pl_check_frozen_free(__func__, page, order);
	if (err)
		return err;
	__free_frozen_pages(page, order, FPI_NONE);
	pl_debug_check(pl_this.machine, 3, __func__);
	return 0;
}

void get_page(struct page *page)
{
	if (no_machine(__func__))
		return;
	if (!pl_page_in_machine(pl_this.machine, page)) {
		bad_input(__func__, page, 0, "page outside the machine (pfn out of range)");
		return;
	}
	if (PageTail(page))
		page = (struct page *)(page->compound_head - 1);
	if (PageBuddy(page) || page_ref_count(page) <= 0) {
		bad_input(__func__, page, 0, "page is not in use");
		return;
	}
	/* The kernel's page_ref overflow check: a wrapped count frees a live page. */
	if (unlikely(__atomic_add_fetch(&page->_refcount, 1, __ATOMIC_RELAXED) > PL_MAX_REFCOUNT)) {
		__atomic_fetch_sub(&page->_refcount, 1, __ATOMIC_RELAXED);
		bad_input(__func__, page, 0, "_refcount would overflow");
	}
}

int put_page(struct page *page)
{
	int err = check_free_args(__func__, page, 0);
	bool zero;

	if (err)
		return err;
	if (PageTail(page))
		page = (struct page *)(page->compound_head - 1);
	if (!PageHead(page) && page->alloc_order && page_ref_count(page) == 1)
		return bad_input(__func__, page, page->alloc_order,
				 "last put_page() of a non-compound high-order block: use __free_pages()");
	if (PageBuddy(page) || put_page_testzero_checked(page, &zero))
		return bad_input(__func__, page, 0, "page is not in use");
	if (zero)
		__free_frozen_pages(page, PageHead(page) ? page->alloc_order : 0, FPI_NONE);
	return 0;
}

static inline enum zone_type gfp_zone(gfp_t gfp)
{
	return (gfp & __GFP_DMA32) ? ZONE_DMA32 : ZONE_NORMAL;
}

/*
 * ALLOC_KSWAPD from __GFP_KSWAPD_RECLAIM (the same bit), and
 * ALLOC_NOFRAGMENT when the preferred zone is Normal and DMA32 is below it:
 * fall back to another zone before mixing migratetypes in a pageblock.
 */
static unsigned int alloc_flags_nofragment(const struct pl_machine *m, int highest_zoneidx,
					   gfp_t gfp)
{
	unsigned int alloc_flags = gfp & __GFP_KSWAPD_RECLAIM;
	int zi = highest_zoneidx;

	while (zi > 0 && !populated_zone(&m->node_zones[zi]))
		zi--;
	return alloc_flags | (zi == ZONE_NORMAL ? ALLOC_NOFRAGMENT : 0);
}

/*
 * alloc_pages() after its machine check, instantiated three times: without
 * the hooks when pl_hooks_off() (page_alloc_hot.h), and out of line with
 * only the design switches' (pl_hooks_design_only()) or with every hook.
 */
static __always_inline struct page *alloc_pages_h(struct pl_machine *m, gfp_t gfp,
						  unsigned int order, const unsigned int hooks)
{
	int highest_zoneidx = gfp_zone(gfp), migratetype = gfp_migratetype(gfp);
	struct page *page;

	/* One branch for every argument check (validate.h): free when they pass. */
	if (unlikely((order > MAX_PAGE_ORDER) | (migratetype == MIGRATE_PCPTYPES) |
		     !!(gfp & ~(gfp_t)PL_GFP_KNOWN))) {
		if (pl_gfp_bad(gfp)) {
			pl_bad_gfp("alloc_pages", gfp);
			return NULL;
		}
		pl_count(PL_EV_BAD_INPUT, 1);
		if (!(gfp & __GFP_NOWARN))
			pl_warn_ratelimited("alloc_pages: order %u above MAX_PAGE_ORDER", order);
		return NULL;
	}
	if ((hooks & PL_HV_ALL) && unlikely(should_fail_alloc_page(gfp, order)))
		return NULL;

	page = get_page_from_freelist_h(m, gfp, order,
					ALLOC_WMARK_LOW | alloc_flags_nofragment(m, highest_zoneidx, gfp),
					highest_zoneidx, migratetype, hooks);
	if (unlikely(!page)) {
		page = __alloc_pages_slowpath(m, gfp, order, highest_zoneidx, migratetype);
		if (!page) {
			pl_count(PL_EV_ALLOC_FAIL, 1);
			if (!(gfp & __GFP_NOWARN))
				pl_warn_ratelimited("page allocation failure: order:%u, mode:%#x",
						    order, gfp);
			return NULL;
		}
		pl_debug_check(m, 2, "alloc_pages slowpath");
	}
	/* with the kernel's __count_zid_vm_events(PGALLOC, page_zonenum(page), ...) */
	pl_count3_h(PL_EV_PGALLOC, 1, PL_EV_PGALLOC_PAGES, 1UL << order,
		    PL_EV_PGALLOC_DMA + page_zonenum(page), 1UL << order, hooks & PL_HV_ALL);
	if (hooks & PL_HV_ALL) {
		pl_trace(m, PL_TP_MM_PAGE_ALLOC,
			 (struct pl_tp_event){ .pfn = page_to_pfn(page), .order = (int)order,
					       .migratetype = migratetype, .gfp = gfp });
		pl_debug_check(m, 3, "alloc_pages");
	}
	return page;
}

/* Not the baseline's variant: only the design switches' hooks, or every one. */
static __attribute__((__noinline__)) struct page *alloc_pages_hooks(struct pl_machine *m,
								    gfp_t gfp, unsigned int order)
{
	if (pl_hooks_design_only(m))
		return alloc_pages_h(m, gfp, order, PL_HV_DESIGN);
	return alloc_pages_h(m, gfp, order, PL_HV_ALL);
}

struct page *alloc_pages(gfp_t gfp, unsigned int order)
{
	struct pl_machine *m = pl_this.machine;

	if (no_machine(__func__))
		return NULL;
	if (likely(pl_hooks_off(m)))
		return alloc_pages_h(m, gfp, order, 0);
	return alloc_pages_hooks(m, gfp, order);
}

unsigned long __get_free_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(gfp, order);

	return page ? (unsigned long)page_address(page) : 0;
}

unsigned long get_zeroed_page(gfp_t gfp)
{
	return __get_free_pages(gfp | __GFP_ZERO, 0);
}

struct page *virt_to_page(const void *addr)
{
	struct pl_machine *m = pl_this.machine;
	uintptr_t a = (uintptr_t)addr, base;

	if (!m)
		return NULL;
	base = (uintptr_t)m->mem_base;
	if (a < base || a >= base + (m->max_pfn << PAGE_SHIFT))
		return NULL;
	return m->mem_map + ((a - base) >> PAGE_SHIFT);
}

int free_pages(unsigned long addr, unsigned int order)
{
	struct page *page;

	if (addr == 0)
		return 0;
	if (no_machine(__func__))
		return -EINVAL;
	page = virt_to_page((const void *)addr);
	if (!page || !IS_ALIGNED(addr, PAGE_SIZE)) {
		pl_count(PL_EV_BAD_INPUT, 1);
		pl_warn_ratelimited("free_pages: address %#lx is not a page of this machine", addr);
		return -EINVAL;
	}
	return __free_pages(page, order);
}
