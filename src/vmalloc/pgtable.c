// SPDX-License-Identifier: MIT
/*
 * pgtable.c - the simulated kernel page tables of the vmalloc space and
 * the TLB flush.
 *
 * x86_64 4-level layout: a virtual address indexes 512-entry tables with
 * bits 47..39 (PGD), 38..30 (PUD), 29..21 (PMD) and 20..12 (PTE):
 *
 *   pgd[512] (host memory, like swapper_pg_dir in the kernel image)
 *     -> pud page -> pmd page -> pte page -> page frame
 *                             \-> (PSE) a 2 MiB frame: vmalloc_huge
 *
 * Each entry is the next table's (or the frame's) pfn << 12 | flags, stored
 * in real memory: table pages below the PGD are order-0 pages from the
 * machine's page allocator (alloc_pages with __GFP_ZERO), as
 * pte_alloc_kernel() and friends take them. As in the kernel, unmapping
 * clears leaf entries only; table pages stay (pl_vmalloc_trim_pgtables()
 * frees the empty ones on request).
 *
 * Invariants: a present non-leaf entry points at a table page allocated
 * for that purpose; a leaf maps a page of the machine; an entry is
 * populated under pgt.lock and read with acquire loads, so a reader that
 * sees it sees the zeroed table behind it.
 *
 * The TLB is not simulated; flush_tlb_kernel_range() is counted
 * (PL_EV_TLB_FLUSH) and costs a calibrated busy loop of
 * tlb_flush_ns_per_cpu (struct pl_config) per vCPU of the machine: the
 * kernel's flush IPIs every online CPU and waits for all of them.
 */
#include <stdlib.h>
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define PL_HAVE_VALGRIND 1
#endif
#endif
#include <string.h>
#include "vmap_area.h"
#include "mm/validate.h"

#define PTRS_PER_TABLE	512
#define _PAGE_PRESENT	0x001ULL
#define _PAGE_RW	0x002ULL
#define _PAGE_PSE	0x080ULL
#define _PAGE_GLOBAL	0x100ULL
#define PTE_PFN_MASK	0x000ffffffffff000ULL
#define _PAGE_TABLE	(_PAGE_PRESENT | _PAGE_RW)
#define _PAGE_KERNEL	(_PAGE_PRESENT | _PAGE_RW | _PAGE_GLOBAL)

static inline unsigned int pgd_index(unsigned long a) { return (a >> PGDIR_SHIFT) & 511; }
static inline unsigned int pud_index(unsigned long a) { return (a >> PUD_SHIFT) & 511; }
static inline unsigned int pmd_index(unsigned long a) { return (a >> PMD_SHIFT) & 511; }
static inline unsigned int pte_index(unsigned long a) { return (a >> PAGE_SHIFT) & 511; }

static inline uint64_t entry_get(const uint64_t *e) { return __atomic_load_n(e, __ATOMIC_ACQUIRE); }
static inline void entry_set(uint64_t *e, uint64_t v) { __atomic_store_n(e, v, __ATOMIC_RELEASE); }

static inline unsigned long entry_pfn(uint64_t e) { return (unsigned long)((e & PTE_PFN_MASK) >> PAGE_SHIFT); }

static inline uint64_t *entry_table(uint64_t e)
{
	return (uint64_t *)page_address(pfn_to_page(entry_pfn(e)));
}

static inline uint64_t mk_entry(unsigned long pfn, uint64_t flags)
{
	return ((uint64_t)pfn << PAGE_SHIFT) | flags;
}

/*
 * The table below entry @e, allocating it if @alloc and absent.
 * Return: the table, or NULL (absent, or no memory for it).
 */
static uint64_t *table_below(struct vmap_space *vs, uint64_t *e, bool alloc)
{
	uint64_t v = entry_get(e);
	struct page *page;

	if (v & _PAGE_PRESENT)
		return entry_table(v);
	if (!alloc)
		return NULL;
	page = alloc_pages(GFP_KERNEL | __GFP_ZERO | __GFP_NOWARN, 0);
	if (!page)
		return NULL;
	spin_lock(&vs->pgt.lock);
	v = entry_get(e);
	if (v & _PAGE_PRESENT) {	/* someone populated it meanwhile */
		spin_unlock(&vs->pgt.lock);
		__free_page(page);
		return entry_table(v);
	}
	entry_set(e, mk_entry(page_to_pfn(page), _PAGE_TABLE));
	spin_unlock(&vs->pgt.lock);
	__atomic_add_fetch(&vs->pgt.nr_table_pages, 1, __ATOMIC_RELAXED);
	vm_count(PL_EV_VMAP_PGTABLE_ALLOC, 1);
	return (uint64_t *)page_address(page);
}

/* The PMD entry of @addr, with the tables above it populated if @alloc. */
static uint64_t *pmd_entry(struct vmap_space *vs, unsigned long addr, bool alloc)
{
	uint64_t *pud, *pmd;

	pud = table_below(vs, &vs->pgt.pgd[pgd_index(addr)], alloc);
	if (!pud)
		return NULL;
	pmd = table_below(vs, &pud[pud_index(addr)], alloc);
	return pmd ? &pmd[pmd_index(addr)] : NULL;
}

static bool table_empty(const uint64_t *t)
{
	for (int i = 0; i < PTRS_PER_TABLE; i++)
		if (entry_get(&t[i]))
			return false;
	return true;
}

/* Free the table page behind @e (which must be empty) and clear @e. */
static void free_table(struct vmap_space *vs, uint64_t *e)
{
	uint64_t v = entry_get(e);

	entry_set(e, 0);
	__free_page(pfn_to_page(entry_pfn(v)));
	__atomic_sub_fetch(&vs->pgt.nr_table_pages, 1, __ATOMIC_RELAXED);
}

/*
 * vmap_pages_range() - map @pages over [@addr, @end): one PTE per page, or
 * with @page_shift == PMD_SHIFT one PMD per 512 contiguous pages.
 * Return: 0, -ENOMEM (a table page could not be allocated) or -EBUSY (an
 * entry was already present). On error part of the range may be mapped:
 * the caller unmaps it.
 */
int vmap_pages_range(unsigned long addr, unsigned long end, struct page **pages,
		     unsigned int page_shift)
{
	struct vmap_space *vs = this_vmap();
	unsigned long i = 0;

	if (page_shift == PMD_SHIFT) {
		for (; addr < end; addr += PMD_SIZE, i += PTRS_PER_TABLE) {
			uint64_t *pmd = pmd_entry(vs, addr, true), v;

			if (!pmd)
				return -ENOMEM;
			v = entry_get(pmd);
			if (v & _PAGE_PRESENT) {
				/* pmd_free_pte_page(): an empty PTE table may go. */
				if ((v & _PAGE_PSE) || !table_empty(entry_table(v)))
					return -EBUSY;
				spin_lock(&vs->pgt.lock);
				free_table(vs, pmd);
				spin_unlock(&vs->pgt.lock);
			}
			entry_set(pmd, mk_entry(page_to_pfn(pages[i]), _PAGE_KERNEL | _PAGE_PSE));
		}
		return 0;
	}
	while (addr < end) {
		uint64_t *pmd = pmd_entry(vs, addr, true), *pte;
		unsigned long next = (addr | (PMD_SIZE - 1)) + 1;

		if (!pmd)
			return -ENOMEM;
		if (entry_get(pmd) & _PAGE_PSE)
			return -EBUSY;
		pte = table_below(vs, pmd, true);
		if (!pte)
			return -ENOMEM;
		if (next > end || next == 0)
			next = end;
		for (; addr < next; addr += PAGE_SIZE, i++) {
			uint64_t *e = &pte[pte_index(addr)];

			if (entry_get(e))
				return -EBUSY;
			entry_set(e, mk_entry(page_to_pfn(pages[i]), _PAGE_KERNEL));
		}
	}
	return 0;
}

/* vunmap_range_noflush() - clear the leaf entries of [@start, @end); no TLB flush. */
void vunmap_range_noflush(unsigned long start, unsigned long end)
{
	struct vmap_space *vs = this_vmap();
	unsigned long addr = start;

	while (addr < end) {
		unsigned long next = (addr | (PMD_SIZE - 1)) + 1;
		uint64_t *pmd = pmd_entry(vs, addr, false), v, *pte;

		if (next > end || next == 0)
			next = end;
		if (!pmd || !((v = entry_get(pmd)) & _PAGE_PRESENT)) {
			addr = next;
			continue;
		}
		if (v & _PAGE_PSE) {
			entry_set(pmd, 0);
			addr = next;
			continue;
		}
		pte = entry_table(v);
		for (; addr < next; addr += PAGE_SIZE)
			entry_set(&pte[pte_index(addr)], 0);
	}
}

static struct page *walk_to_page(struct vmap_space *vs, unsigned long addr)
{
	uint64_t *pmd, v, *pte;

	if (!is_vmalloc_addr((const void *)addr))
		return NULL;
	pmd = pmd_entry(vs, addr, false);
	if (!pmd || !((v = entry_get(pmd)) & _PAGE_PRESENT))
		return NULL;
	if (v & _PAGE_PSE)
		return pfn_to_page(entry_pfn(v) + pte_index(addr));
	pte = entry_table(v);
	v = entry_get(&pte[pte_index(addr)]);
	return (v & _PAGE_PRESENT) ? pfn_to_page(entry_pfn(v)) : NULL;
}

struct page *vmalloc_to_page(const void *addr)
{
	struct pl_machine *m = pl_this.machine;

	if (!m || !m->vmap)
		return NULL;
	return walk_to_page(m->vmap, (unsigned long)addr);
}

unsigned long vmalloc_to_pfn(const void *addr)
{
	struct page *page = vmalloc_to_page(addr);

	return page ? page_to_pfn(page) : 0;
}

void *vmalloc_host_addr(struct vmap_space *vs, unsigned long addr)
{
	struct page *page = walk_to_page(vs, addr);

	return page ? (char *)page_address(page) + (addr & (PAGE_SIZE - 1)) : NULL;
}

/* Copy page by page; @to_vm picks the direction. All pages are checked first. */
static int vmalloc_copy(void *vaddr, void *buf, size_t len, bool to_vm, int c)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long addr = (unsigned long)vaddr, a, end = addr + len;

	if (!m || !m->vmap || end < addr)
		return -EFAULT;
	for (a = addr & ~(PAGE_SIZE - 1); a < end; a += PAGE_SIZE)
		if (!walk_to_page(m->vmap, a))
			return -EFAULT;
	for (a = addr; a < end;) {
		size_t chunk = min(PAGE_SIZE - (a & (PAGE_SIZE - 1)), end - a);
		char *host = vmalloc_host_addr(m->vmap, a);

		if (!to_vm)
			memcpy(buf, host, chunk);
		else if (buf)
			memcpy(host, buf, chunk);
		else
			memset(host, c, chunk);
		if (buf)
			buf = (char *)buf + chunk;
		a += chunk;
	}
	return 0;
}

int vmalloc_write(void *addr, const void *src, size_t len)
{
	if (pl_check_ptr(__func__, src, "src"))	/* NULL would mean memset here */
		return -EINVAL;
	return vmalloc_copy(addr, (void *)src, len, true, 0);
}

int vmalloc_read(void *dst, const void *addr, size_t len)
{
	if (pl_check_ptr(__func__, dst, "dst"))
		return -EINVAL;
	return vmalloc_copy((void *)addr, dst, len, false, 0);
}

int vmalloc_memset(void *addr, int c, size_t len)
{
	return vmalloc_copy(addr, NULL, len, true, c);
}

/* Every present leaf in [@start, @end), in 4 KiB pages (checker). */
unsigned long pgtable_count_mapped(struct vmap_space *vs, unsigned long start, unsigned long end)
{
	unsigned long n = 0;

	for (unsigned int g = 0; g < PTRS_PER_TABLE; g++) {
		uint64_t gv = entry_get(&vs->pgt.pgd[g]), *pud;

		if (!(gv & _PAGE_PRESENT))
			continue;
		pud = entry_table(gv);
		for (unsigned int u = 0; u < PTRS_PER_TABLE; u++) {
			uint64_t uv = entry_get(&pud[u]), *pmd;

			if (!(uv & _PAGE_PRESENT))
				continue;
			pmd = entry_table(uv);
			for (unsigned int d = 0; d < PTRS_PER_TABLE; d++) {
				uint64_t dv = entry_get(&pmd[d]), *pte;
				unsigned long base = (g >= 256 ? 0xffff000000000000UL : 0) |
						     ((unsigned long)g << PGDIR_SHIFT) |
						     ((unsigned long)u << PUD_SHIFT) |
						     ((unsigned long)d << PMD_SHIFT);

				if (!(dv & _PAGE_PRESENT))
					continue;
				if (dv & _PAGE_PSE) {
					if (base >= start && base < end)
						n += PTRS_PER_TABLE;
					continue;
				}
				pte = entry_table(dv);
				for (unsigned int t = 0; t < PTRS_PER_TABLE; t++) {
					unsigned long a = base | ((unsigned long)t << PAGE_SHIFT);

					if ((entry_get(&pte[t]) & _PAGE_PRESENT) && a >= start && a < end)
						n++;
				}
			}
		}
	}
	return n;
}

unsigned long pgtable_trim(struct vmap_space *vs)
{
	unsigned long freed = 0;

	spin_lock(&vs->pgt.lock);
	for (unsigned int g = 0; g < PTRS_PER_TABLE; g++) {
		uint64_t gv = entry_get(&vs->pgt.pgd[g]), *pud;

		if (!(gv & _PAGE_PRESENT))
			continue;
		pud = entry_table(gv);
		for (unsigned int u = 0; u < PTRS_PER_TABLE; u++) {
			uint64_t uv = entry_get(&pud[u]), *pmd;

			if (!(uv & _PAGE_PRESENT))
				continue;
			pmd = entry_table(uv);
			for (unsigned int d = 0; d < PTRS_PER_TABLE; d++) {
				uint64_t dv = entry_get(&pmd[d]);

				if ((dv & _PAGE_PRESENT) && !(dv & _PAGE_PSE) &&
				    table_empty(entry_table(dv))) {
					free_table(vs, &pmd[d]);
					freed++;
				}
			}
			if (table_empty(pmd)) {
				free_table(vs, &pud[u]);
				freed++;
			}
		}
		if (table_empty(pud)) {
			free_table(vs, &vs->pgt.pgd[g]);
			freed++;
		}
	}
	spin_unlock(&vs->pgt.lock);
	return freed;
}

unsigned long pl_vmalloc_trim_pgtables(struct pl_machine *m)
{
	if (pl_check_this_machine(__func__, m) || !m->vmap)
		return 0;
	return pgtable_trim(m->vmap);
}

void pgtable_destroy(struct vmap_space *vs)
{
	/* Table pages are the machine's memory, released with it. */
	free(vs->pgt.pgd);
	vs->pgt.pgd = NULL;
}

/* ---- the TLB ------------------------------------------------------------- */

static unsigned long loops_per_us;
static pthread_once_t calibrate_once = PTHREAD_ONCE_INIT;

static void busy_loop(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		__asm__ volatile("" : "+r"(i));
}

static void calibrate(void)
{
	unsigned long n = 1UL << 20;
	uint64_t t0, dt;

#ifdef PL_HAVE_VALGRIND
	/*
	 * Under valgrind (pagelab's instruction-count mode) a timed calibration
	 * would make each emulated flush's instruction count follow the host's
	 * load; a fixed rate makes the same run count the same instructions.
	 */
	if (RUNNING_ON_VALGRIND) {
		loops_per_us = 1000;
		return;
	}
#endif
	busy_loop(n / 16);	/* warm up */
	t0 = pl_now_ns();
	busy_loop(n);
	dt = pl_now_ns() - t0;
	loops_per_us = dt ? n * 1000 / dt : n;
	if (!loops_per_us)
		loops_per_us = 1;
}

unsigned long tlb_calibrate_loops_per_us(void)
{
	pthread_once(&calibrate_once, calibrate);
	return loops_per_us;
}

void flush_tlb_kernel_range(unsigned long start, unsigned long end)
{
	struct vmap_space *vs = this_vmap();

	(void)start;
	(void)end;
	vm_count(PL_EV_TLB_FLUSH, 1);
	busy_loop(vs->tlb_flush_loops * vs->m->nr_cpus);
}
