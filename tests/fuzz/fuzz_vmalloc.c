// SPDX-License-Identifier: MIT
/*
 * fuzz_vmalloc.c - the fuzzer's vmalloc operations: vmalloc and its
 * variants (vzalloc, aligned, huge, inside a window, vmalloc_user), vfree
 * and vfree_atomic, vm_map_ram/vm_unmap_ram, purges, and their bad input
 * (double vfree, vfree of an unknown, unaligned or interior address, of a
 * vm_map_ram mapping or a percpu pointer; vm_unmap_ram with the wrong
 * count, twice, inside a mapping; size 0, size or alignment overflow, a
 * window smaller than the size).
 *
 * The model: the live areas and mappings [addr, addr + size), which must
 * never overlap each other or the percpu allocations' copies; each page of
 * each is stamped through the page tables (vmalloc_write) with a word the
 * fuzzer reads back (vmalloc_read) before freeing, and a vm_map_ram page is
 * read back through the host address of the very page the fuzzer passed.
 * A new area's pages must be pages the pfn model gives the vmalloc layer
 * (FZ_PFN_SYS), never free ones or the fuzzer's.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_internal.h"

#define VA_MAX		64
#define MAP_MAX		32
#define MAP_PAGES_MAX	80	/* beyond VMAP_MAX_ALLOC: large mappings too */
#define VGRAVE_MAX	16
#define WINDOW_BASE	(VMALLOC_START + (1UL << 40))
#define WINDOW_STRIDE	(64UL << 20)

struct varea {
	unsigned long addr, nr_pages;
	uint64_t seed;
};

struct vmapping {
	unsigned long addr;
	unsigned int count;
	uint64_t seed;
	struct page *pages[MAP_PAGES_MAX];
};

struct vgrave {
	unsigned long addr;
	unsigned int count;
};

static struct {
	struct varea areas[VA_MAX];
	unsigned int nr_areas;
	struct vmapping maps[MAP_MAX];
	unsigned int nr_maps;
	struct vgrave graves[VGRAVE_MAX], map_graves[VGRAVE_MAX];
	unsigned int nr_graves, grave_next, nr_map_graves, map_grave_next;
	int new_area;
} vm;

void fz_vm_begin(struct fz *f)
{
	(void)f;
	memset(&vm, 0, sizeof(vm));
	vm.new_area = -1;
}

static void vbury(struct vgrave *g, unsigned int *nr, unsigned int *next, unsigned long addr,
		  unsigned int count)
{
	g[*next] = (struct vgrave){ addr, count };
	*next = (*next + 1) % VGRAVE_MAX;
	if (*nr < VGRAVE_MAX)
		(*nr)++;
}

static uint64_t page_word(uint64_t seed, unsigned long i)
{
	return seed ^ (i * 0x9e3779b97f4a7c15ULL);
}

static void stamp_pages(struct fz *f, unsigned long addr, unsigned long nr, uint64_t seed)
{
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t w = page_word(seed, i);

		if (vmalloc_write((void *)(addr + i * PAGE_SIZE), &w, sizeof(w)))
			fz_fail(f, "vmalloc_write() at %#lx: not mapped", addr + i * PAGE_SIZE);
	}
}

static void check_pages(struct fz *f, unsigned long addr, unsigned long nr, uint64_t seed)
{
	for (unsigned long i = 0; i < nr; i++) {
		uint64_t w;

		if (vmalloc_read(&w, (void *)(addr + i * PAGE_SIZE), sizeof(w)))
			fz_fail(f, "vmalloc_read() at %#lx: not mapped", addr + i * PAGE_SIZE);
		if (w != page_word(seed, i))
			fz_fail(f, "%#lx: contents changed while mapped", addr + i * PAGE_SIZE);
	}
}

static void check_zeroed(struct fz *f, unsigned long addr, unsigned long size)
{
	uint64_t w[2];

	for (unsigned long off = 0; off < size; off += PAGE_SIZE) {
		unsigned long len = min(size - off, (unsigned long)sizeof(w));

		w[0] = w[1] = 1;
		if (vmalloc_read(w, (void *)(addr + off), len) || w[0] ||
		    (len > sizeof(w[0]) && w[1]))
			fz_fail(f, "%#lx: zeroed vmalloc memory is not zero", addr + off);
	}
}

static int cmp_range(const void *a, const void *b)
{
	const struct fz_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

void fz_vm_check_overlaps(struct fz *f, const struct fz_range *extra, unsigned int nr_extra)
{
	static struct fz_range r[VA_MAX + MAP_MAX + 8 * FZ_NR_CPUS * 64];
	unsigned int n = 0;

	for (unsigned int i = 0; i < vm.nr_areas; i++)
		r[n++] = (struct fz_range){ vm.areas[i].addr,
					    vm.areas[i].addr + vm.areas[i].nr_pages * PAGE_SIZE,
					    "vmalloc area" };
	for (unsigned int i = 0; i < vm.nr_maps; i++)
		r[n++] = (struct fz_range){ vm.maps[i].addr,
					    vm.maps[i].addr + vm.maps[i].count * PAGE_SIZE,
					    "vm_map_ram mapping" };
	n += fz_pcpu_ranges(r + n, (unsigned int)(ARRAY_SIZE(r) - n - nr_extra));
	for (unsigned int i = 0; i < nr_extra; i++)
		r[n++] = extra[i];
	qsort(r, n, sizeof(r[0]), cmp_range);
	for (unsigned int i = 0; i < n; i++) {
		if (r[i].start < VMALLOC_START || r[i].end > VMALLOC_END || r[i].start >= r[i].end)
			fz_fail(f, "%s [%#lx, %#lx) outside the vmalloc space", r[i].what, r[i].start,
				r[i].end);
		if (i + 1 < n && r[i].end > r[i + 1].start)
			fz_fail(f, "%s [%#lx, %#lx) overlaps %s [%#lx, %#lx)", r[i].what, r[i].start,
				r[i].end, r[i + 1].what, r[i + 1].start, r[i + 1].end);
	}
}

/* The flags byte: bits 0-1 GFP_KERNEL/NOWAIT/ATOMIC, 2 __GFP_ZERO, 3 __GFP_NOWARN, 5-7 kind. */
static gfp_t vm_gfp(uint8_t c)
{
	static const gfp_t base[] = { GFP_KERNEL, GFP_KERNEL, GFP_NOWAIT, GFP_ATOMIC };
	gfp_t gfp = base[c & 3];

	if (c & 0x04)
		gfp |= __GFP_ZERO;
	if (c & 0x08)
		gfp |= __GFP_NOWARN;
	return gfp;
}

void op_vmalloc(struct fz *f, const uint8_t *a)
{
	static const unsigned long classes[4] = { 16, 256, 1024, 1024 };
	unsigned long pages = 1 + a[0] % classes[a[1] & 3], size, align = PAGE_SIZE, w0 = 0, w1 = 0;
	gfp_t gfp = vm_gfp(a[3]);
	bool zeroed = false;	/* set below for the calls that take @gfp or zero */
	struct vm_struct *area;
	struct varea *v;
	void *p;

	if ((a[1] & 3) == 3)
		pages = 512 * (1 + a[0] % 2);	/* PMD-sized: vmalloc_huge maps 2 MiB */
	size = pages * PAGE_SIZE - ((a[1] & 4) ? (a[0] * 37UL) % PAGE_SIZE : 0);
	switch ((a[3] >> 5) % 6) {
	case 0:
		p = vmalloc(size);
		break;
	case 1:
		p = vzalloc(size);
		zeroed = true;
		break;
	case 2:
		align = 1UL << (a[2] % 23);
		p = __vmalloc_node(size, align, gfp, NUMA_NO_NODE);
		zeroed = gfp & __GFP_ZERO;
		break;
	case 3:
		p = vmalloc_huge(size, gfp);
		zeroed = gfp & __GFP_ZERO;
		break;
	case 4:
		/* A window of its own for up to four such areas: it fills up. */
		w0 = WINDOW_BASE + (a[2] % 4) * WINDOW_STRIDE;
		w1 = w0 + (1 + (a[2] >> 2) % 4) * (pages + 1) * PAGE_SIZE;
		p = __vmalloc_node_range(size, 1, w0, w1, gfp, PAGE_KERNEL, 0, NUMA_NO_NODE, NULL);
		zeroed = gfp & __GFP_ZERO;
		break;
	default:
		p = vmalloc_user(size);
		zeroed = true;
		break;
	}
	if (!p) {
		/*
		 * Injected faults, a full window, or memory: a GFP_KERNEL call
		 * without the first two, with pages to spare above every
		 * watermark, must not fail.
		 */
		unsigned int kind = (a[3] >> 5) % 6;

		if (!f->faults_on && kind != 3 && kind != 4 && (kind != 2 || (a[3] & 3) < 2) &&
		    fz_nr_model_free(f) > pages + FZ_SPARE_PAGES + fz_watermark_pages(f))
			fz_fail(f, "vmalloc of %lu pages failed with %lu pages free", pages,
				fz_nr_model_free(f));
		return;
	}
	if (!IS_ALIGNED((unsigned long)p, max(align, PAGE_SIZE)) || !is_vmalloc_addr(p) ||
	    (w1 && ((unsigned long)p < w0 || (unsigned long)p + size > w1)))
		fz_fail(f, "vmalloc(%lu) returned %p: misaligned or outside its window", size, p);
	area = find_vm_area(p);
	if (!area || area->addr != (unsigned long)p || area->nr_pages * PAGE_SIZE < size ||
	    get_vm_area_size(area) < area->nr_pages * PAGE_SIZE)
		fz_fail(f, "vmalloc(%lu) = %p: its vm_struct is wrong", size, p);
	if (zeroed)
		check_zeroed(f, (unsigned long)p, size);
	if (vm.nr_areas == VA_MAX) {
		FZ_ASSERT(f, vfree(p) == 0);
		return;
	}
	v = &vm.areas[vm.nr_areas++];
	*v = (struct varea){ (unsigned long)p, area->nr_pages, ++f->stamps };
	stamp_pages(f, v->addr, v->nr_pages, v->seed);
	vm.new_area = (int)(vm.nr_areas - 1);
	fz_vm_check_overlaps(f, NULL, 0);
}

static struct varea *pick_area(uint8_t idx)
{
	return vm.nr_areas ? &vm.areas[idx % vm.nr_areas] : NULL;
}

void op_vfree(struct fz *f, const uint8_t *a)
{
	struct varea *v = pick_area(a[0]);

	if (!v)
		return;
	check_pages(f, v->addr, v->nr_pages, v->seed);
	if (a[1] & 1) {
		FZ_ASSERT(f, vfree_atomic((void *)v->addr) == 0);
		if (a[1] & 2)
			pl_vmalloc_flush_deferred(f->m);
	} else {
		FZ_ASSERT(f, vfree((void *)v->addr) == 0);
	}
	vbury(vm.graves, &vm.nr_graves, &vm.grave_next, v->addr, (unsigned int)v->nr_pages);
	*v = vm.areas[--vm.nr_areas];
}

void op_vcheck(struct fz *f, const uint8_t *a)
{
	struct varea *v = pick_area(a[0]);

	if (v) {
		check_pages(f, v->addr, v->nr_pages, v->seed);
		for (unsigned long i = 0; i < v->nr_pages; i += 1 + a[0] % 7) {
			struct page *page = vmalloc_to_page((void *)(v->addr + i * PAGE_SIZE));

			FZ_ASSERT(f, page && f->model[page_to_pfn(page)] == FZ_PFN_SYS);
		}
	}
	for (unsigned int i = 0; i < vm.nr_maps; i++)
		check_pages(f, vm.maps[i].addr, vm.maps[i].count, vm.maps[i].seed);
}

void op_vm_map_ram(struct fz *f, const uint8_t *a)
{
	unsigned int count = 1 + a[0] % MAP_PAGES_MAX;
	struct vmapping *mp;
	unsigned int got = 0;
	void *p;

	if (vm.nr_maps == MAP_MAX)
		return;
	mp = &vm.maps[vm.nr_maps];
	for (; got < count; got++) {
		mp->pages[got] = alloc_pages(GFP_KERNEL | __GFP_NOWARN, 0);
		if (!mp->pages[got])
			break;
		model_alloc(f, mp->pages[got], 0);
	}
	p = got == count ? vm_map_ram(mp->pages, count, NUMA_NO_NODE) : NULL;
	if (!p && got == count && !f->faults_on && fz_nr_model_free(f) >
	    FZ_SPARE_PAGES + fz_watermark_pages(f))
		fz_fail(f, "vm_map_ram() of %u pages failed with %lu pages free", count,
			fz_nr_model_free(f));
	if (!p) {
		while (got--) {
			FZ_ASSERT(f, __free_pages(mp->pages[got], 0) == 0);
			model_free(f, page_to_pfn(mp->pages[got]), 1);
		}
		return;
	}
	mp->addr = (unsigned long)p;
	mp->count = count;
	mp->seed = ++f->stamps;
	if (!IS_ALIGNED(mp->addr, PAGE_SIZE) || !is_vmalloc_addr(p))
		fz_fail(f, "vm_map_ram() returned %p", p);
	stamp_pages(f, mp->addr, count, mp->seed);
	for (unsigned int i = 0; i < count; i++) {
		if (vmalloc_to_page((void *)(mp->addr + i * PAGE_SIZE)) != mp->pages[i] ||
		    *(uint64_t *)page_address(mp->pages[i]) != page_word(mp->seed, i))
			fz_fail(f, "vm_map_ram() at %p: page %u is not the one passed", p, i);
	}
	vm.nr_maps++;
	fz_vm_check_overlaps(f, NULL, 0);
}

static void unmap_one(struct fz *f, struct vmapping *mp)
{
	check_pages(f, mp->addr, mp->count, mp->seed);
	FZ_ASSERT(f, vm_unmap_ram((void *)mp->addr, mp->count) == 0);
	for (unsigned int i = 0; i < mp->count; i++)
		if (vmalloc_to_page((void *)(mp->addr + i * PAGE_SIZE)))
			fz_fail(f, "%#lx still mapped after vm_unmap_ram()", mp->addr + i * PAGE_SIZE);
	for (unsigned int i = 0; i < mp->count; i++) {
		FZ_ASSERT(f, __free_pages(mp->pages[i], 0) == 0);
		model_free(f, page_to_pfn(mp->pages[i]), 1);
	}
	vbury(vm.map_graves, &vm.nr_map_graves, &vm.map_grave_next, mp->addr, mp->count);
	*mp = vm.maps[--vm.nr_maps];
}

void op_vm_unmap_ram(struct fz *f, const uint8_t *a)
{
	if (vm.nr_maps)
		unmap_one(f, &vm.maps[a[0] % vm.nr_maps]);
}

void op_vpurge(struct fz *f, const uint8_t *a)
{
	switch (a[0] % 4) {
	case 0: vm_unmap_aliases(); break;
	case 1: pl_vmalloc_purge(f->m); break;
	case 2: pl_percpu_reclaim(f->m); break;
	default: pl_vmalloc_flush_deferred(f->m); pl_vmalloc_trim_pgtables(f->m); break;
	}
}

/* Is @addr the start of something live the fuzzer knows of? */
static bool live_start(unsigned long addr)
{
	for (unsigned int i = 0; i < vm.nr_areas; i++)
		if (vm.areas[i].addr == addr)
			return true;
	for (unsigned int i = 0; i < vm.nr_maps; i++)
		if (vm.maps[i].addr == addr)
			return true;
	return false;
}

void op_bad_vfree(struct fz *f, const uint8_t *a)
{
	struct varea *v = pick_area(a[1]);
	struct bad_call bc;
	unsigned long addr;
	size_t size;
	void *pcpu;

	switch (a[0] % 8) {
	case 0: /* double vfree */
		if (!vm.nr_graves)
			return;
		addr = vm.graves[a[1] % vm.nr_graves].addr;
		break;
	case 1: /* unaligned */
		if (!v)
			return;
		addr = v->addr + 1 + (a[2] * 17UL) % (PAGE_SIZE - 1);
		break;
	case 2: /* a page inside an area, or its guard page */
		if (!v)
			return;
		addr = v->addr + PAGE_SIZE * (1 + a[2] % v->nr_pages);
		break;
	case 3: /* nothing there */
		addr = VMALLOC_START + (1UL << 42) + a[2] * PAGE_SIZE;
		break;
	case 4: /* a vm_map_ram mapping */
		if (!vm.nr_maps)
			return;
		addr = vm.maps[a[1] % vm.nr_maps].addr;
		break;
	case 5: /* a percpu pointer, or another CPU's copy of it */
		pcpu = fz_pcpu_any(a[1], &size);
		if (!pcpu)
			return;
		addr = (unsigned long)per_cpu_ptr(pcpu, a[2] % FZ_NR_CPUS);
		break;
	case 6: /* not in the vmalloc space */
		addr = PAGE_SIZE * (1 + a[2]);
		break;
	default: /* vfree_atomic() twice */
		if (!vm.nr_graves)
			return;
		addr = vm.graves[a[1] % vm.nr_graves].addr;
		if (live_start(addr))
			return;
		bad_begin(f, &bc);
		bad_end(f, &bc, vfree_atomic((void *)addr), -EINVAL);
		return;
	}
	if (live_start(addr) && a[0] % 8 != 4)
		return;	/* reused since: a vfree would be legitimate */
	bad_begin(f, &bc);
	bad_end(f, &bc, vfree((void *)addr), -EINVAL);
}

void op_bad_vm_unmap_ram(struct fz *f, const uint8_t *a)
{
	struct vmapping *mp = vm.nr_maps ? &vm.maps[a[1] % vm.nr_maps] : NULL;
	struct varea *v = pick_area(a[1]);
	struct bad_call bc;
	unsigned long addr;
	unsigned int count;

	switch (a[0] % 5) {
	case 0: /* the wrong count */
		if (!mp)
			return;
		addr = mp->addr;
		count = (a[2] & 1) && mp->count > 1 ? mp->count - 1 - a[2] % (mp->count - 1)
						    : mp->count + 1 + a[2] % 4;
		break;
	case 1: /* unmapped twice */
		if (!vm.nr_map_graves)
			return;
		addr = vm.map_graves[a[1] % vm.nr_map_graves].addr;
		count = vm.map_graves[a[1] % vm.nr_map_graves].count;
		if (live_start(addr))
			return;
		break;
	case 2: /* inside a mapping */
		if (!mp || mp->count < 2)
			return;
		addr = mp->addr + PAGE_SIZE * (1 + a[2] % (mp->count - 1));
		count = 1;
		break;
	case 3: /* a vmalloc area */
		if (!v)
			return;
		addr = v->addr;
		count = (unsigned int)v->nr_pages;
		break;
	default: /* count 0, or an unaligned address */
		addr = mp ? mp->addr + (a[2] & 1) : VMALLOC_START + 1;
		count = (a[2] & 1) ? (mp ? mp->count : 1) : 0;
		break;
	}
	bad_begin(f, &bc);
	bad_end(f, &bc, vm_unmap_ram((void *)addr, count), -EINVAL);
}

void op_bad_vmalloc(struct fz *f, const uint8_t *a)
{
	unsigned long s = WINDOW_BASE + 4 * WINDOW_STRIDE + a[1] * PAGE_SIZE;
	struct page *page = NULL;
	struct bad_call bc;
	void *p;

	bad_begin(f, &bc);
	switch (a[0] % 7) {
	case 0: p = (a[1] & 1) ? vzalloc(0) : vmalloc(0); break;
	case 1: p = vmalloc(ULONG_MAX - a[1]); break;
	case 2: p = vmalloc((unsigned long)NR_PFNS * PAGE_SIZE + PAGE_SIZE * (1 + a[1])); break;
	case 3: p = __vmalloc_node(PAGE_SIZE, 3UL << (a[1] % 20), GFP_KERNEL, NUMA_NO_NODE); break;
	case 4: /* larger than the whole space */
		p = __vmalloc_node(PAGE_SIZE, 1UL << (46 + a[1] % 18), GFP_KERNEL, NUMA_NO_NODE);
		break;
	case 5: /* a window smaller than the size (guard page included) */
		p = __vmalloc_node_range((2 + a[1] % 4) * PAGE_SIZE, 1, s, s + (1 + a[1] % 4) * PAGE_SIZE,
					 GFP_KERNEL, PAGE_KERNEL, 0, NUMA_NO_NODE, NULL);
		break;
	default:
		p = vm_map_ram(&page, 0, NUMA_NO_NODE);
		break;
	}
	bad_end(f, &bc, p != NULL, 0);
}

void fz_vm_after_op(struct fz *f)
{
	struct varea *v;

	if (vm.new_area < 0)
		return;
	/* The new area's pages: the vmalloc layer's, once the model has re-read them. */
	v = &vm.areas[vm.new_area];
	vm.new_area = -1;
	for (unsigned long i = 0; i < v->nr_pages; i++) {
		struct page *page = vmalloc_to_page((void *)(v->addr + i * PAGE_SIZE));

		if (!page || page_to_pfn(page) >= NR_PFNS ||
		    f->model[page_to_pfn(page)] != FZ_PFN_SYS)
			fz_fail(f, "vmalloc area %#lx page %lu: pfn %#lx is not vmalloc's", v->addr, i,
				page ? page_to_pfn(page) : 0UL);
	}
}

void fz_vm_free_all(struct fz *f)
{
	while (vm.nr_areas) {
		struct varea *v = &vm.areas[vm.nr_areas - 1];

		check_pages(f, v->addr, v->nr_pages, v->seed);
		FZ_ASSERT(f, vfree((void *)v->addr) == 0);
		vm.nr_areas--;
	}
	while (vm.nr_maps)
		unmap_one(f, &vm.maps[vm.nr_maps - 1]);
}

bool fz_vm_settle_if_empty(struct fz *f)
{
	struct pl_vmalloc_stats st;
	struct pl_percpu_stats ps;
	bool sys_op = f->sys_op;

	if (vm.nr_areas || vm.nr_maps || fz_pcpu_nr_live())
		return false;
	/* Chunks first: a destroyed chunk's area is freed lazily, as any other. */
	pl_percpu_reclaim(f->m);
	pl_vmalloc_flush_deferred(f->m);
	vm_unmap_aliases();
	pl_vmalloc_purge(f->m);
	pl_vmalloc_trim_pgtables(f->m);
	pl_vmalloc_stats(f->m, &st);
	pl_percpu_stats(f->m, &ps);
	if (st.nr_busy || st.nr_lazy || st.nr_pooled || st.nr_free != 1 || st.lazy_pages ||
	    st.vmalloc_pages || st.pgtable_pages || ps.nr_chunks || ps.nr_alloc)
		fz_fail(f, "nothing live, yet the vmalloc space has %lu busy, %lu lazy, %lu pooled, "
			"%lu free areas, %lu vmalloc and %lu page-table pages, %lu percpu chunks",
			st.nr_busy, st.nr_lazy, st.nr_pooled, st.nr_free, st.vmalloc_pages,
			st.pgtable_pages, ps.nr_chunks);
	f->sys_op = true;
	compare_with_model(f);
	f->sys_op = sys_op;
	return true;
}
