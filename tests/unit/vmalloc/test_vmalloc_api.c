// SPDX-License-Identifier: MIT
/*
 * test_vmalloc_api.c - the vmalloc API over the simulated space: areas
 * with their guard page, pages mapped in order (vmalloc_to_page), writes
 * and reads through the page tables, vzalloc, alignment, vmalloc_huge's
 * PMD mappings and its fallback, vrealloc in place and moving, vmap and
 * vunmap, vfree_atomic, /proc/vmallocinfo, and lazy purge through vfree.
 */
#include <stdio.h>
#include "vmalloc_helpers.h"

static void test_vmalloc_basic(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned long free_before;
	char *p;
	struct vm_struct *vm;
	struct pl_vmalloc_stats st;

	(void)state;
	drain_all_pages(NULL);
	free_before = pl_nr_free_pages(m);
	p = vmalloc(3 * PAGE_SIZE + 100);
	assert_non_null(p);
	assert_true(is_vmalloc_addr(p));
	assert_true(IS_ALIGNED((unsigned long)p, PAGE_SIZE));
	vm = find_vm_area(p);
	assert_non_null(vm);
	assert_int_equal(vm->nr_pages, 4);
	assert_int_equal(vm->size, 5 * PAGE_SIZE);	/* guard page included */
	assert_int_equal(get_vm_area_size(vm), 4 * PAGE_SIZE);
	assert_true(vm->flags & VM_ALLOC);
	assert_false(vm->flags & VM_UNINITIALIZED);
	for (unsigned int i = 0; i < 4; i++) {
		assert_ptr_equal(vmalloc_to_page(p + i * PAGE_SIZE + 7), vm->pages[i]);
		assert_int_equal(page_ref_count(vm->pages[i]), 1);
	}
	assert_null(vmalloc_to_page(p + 4 * PAGE_SIZE));	/* the guard page */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.vmalloc_pages, 4);
	assert_true(st.pgtable_pages >= 3);	/* pud, pmd, pte pages */
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m) + 4 + st.pgtable_pages, free_before);
	assert_int_equal(pl_check_machine(m), 0);

	assert_int_equal(vfree(p), 0);
	assert_null(vmalloc_to_page(p));
	assert_null(find_vm_area(p));
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.vmalloc_pages, 0);
	if (m->config.design.vmap_pcpu_bump) {
		/* a bump area: its chunk goes lazily once all of it is free */
		assert_int_equal(st.nr_lazy, 0);
		assert_int_equal(st.nr_busy, 0);
	} else {
		assert_int_equal(st.nr_lazy, 1);	/* the range waits for the purge */
		assert_int_equal(st.lazy_pages, 5);
	}
	assert_int_equal(vfree(NULL), 0);
	vm_test_done(m);
}

static void test_write_read_through_mappings(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned long size = 10 * PAGE_SIZE + 123;
	unsigned char *buf = malloc(size), *back = malloc(size);
	char *p = vmalloc(size);
	struct vm_struct *vm = find_vm_area(p);

	(void)state;
	for (unsigned long i = 0; i < size; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	assert_int_equal(vmalloc_write(p, buf, size), 0);
	/* Each byte landed in the right frame at the right offset. */
	for (unsigned long i = 0; i < size; i += 611)
		assert_int_equal(((unsigned char *)page_address(vm->pages[i / PAGE_SIZE]))[i % PAGE_SIZE],
				 buf[i]);
	memset(back, 0, size);
	assert_int_equal(vmalloc_read(back, p, size), 0);
	assert_memory_equal(back, buf, size);
	/* An unaligned window crossing pages. */
	assert_int_equal(vmalloc_read(back, p + PAGE_SIZE - 5, 10), 0);
	assert_memory_equal(back, buf + PAGE_SIZE - 5, 10);
	/* Past the end: the guard page is not mapped, nothing is copied. */
	assert_int_equal(vmalloc_write(p + 11 * PAGE_SIZE - 4, buf, 8), -EFAULT);
	assert_int_equal(vmalloc_memset(p, 0xab, 5), 0);
	assert_int_equal(vmalloc_read(back, p, 6), 0);
	assert_int_equal(back[4], 0xab);
	assert_int_equal(back[5], buf[5]);
	assert_int_equal(vfree(p), 0);
	assert_int_equal(vmalloc_read(back, p, 1), -EFAULT);
	free(buf);
	free(back);
	vm_test_done(m);
}

static void test_vzalloc_zeroes(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned char chunk[256];
	char *p;

	(void)state;
	/* Dirty some pages, free them, then vzalloc must hand back zeroes. */
	p = vmalloc(64 * PAGE_SIZE);
	assert_int_equal(vmalloc_memset(p, 0x5a, 64 * PAGE_SIZE), 0);
	assert_int_equal(vfree(p), 0);
	p = vzalloc(64 * PAGE_SIZE);
	for (unsigned long off = 0; off < 64 * PAGE_SIZE; off += 1021) {
		assert_int_equal(vmalloc_read(chunk, p + off, 1), 0);
		assert_int_equal(chunk[0], 0);
	}
	assert_int_equal(vfree(p), 0);
	vm_test_done(m);
}

static void test_many_sizes_and_alignments(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	void *ptrs[64];
	struct pl_rng rng;

	(void)state;
	pl_rng_seed(&rng, 7);
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 64; i++) {
			unsigned long size = 1 + pl_rng_below(&rng, 200 * PAGE_SIZE);
			unsigned long align = PAGE_SIZE << pl_rng_below(&rng, 10);

			ptrs[i] = __vmalloc_node(size, align, GFP_KERNEL, NUMA_NO_NODE);
			assert_non_null(ptrs[i]);
			assert_true(IS_ALIGNED((unsigned long)ptrs[i], align));
			assert_int_equal(vmalloc_write(ptrs[i], &i, sizeof(i)), 0);
		}
		assert_int_equal(pl_check_machine(m), 0);
		for (int i = 0; i < 64; i++) {
			int v = -1;

			assert_int_equal(vmalloc_read(&v, ptrs[i], sizeof(v)), 0);
			assert_int_equal(v, i);
			assert_int_equal(vfree(ptrs[i]), 0);
		}
	}
	vm_test_done(m);
}

static void test_vmalloc_huge(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned long size = 2 * PMD_SIZE + 5 * PAGE_SIZE;	/* rounded up to 3 PMDs */
	char *p = vmalloc_huge(size, GFP_KERNEL);
	struct vm_struct *vm = find_vm_area(p);
	char *small;

	(void)state;
	assert_non_null(p);
	assert_true(IS_ALIGNED((unsigned long)p, PMD_SIZE));
	assert_int_equal(vm->page_order, 9);
	assert_int_equal(vm->nr_pages, 3 * 512);
	assert_int_equal(get_vm_area_size(vm), 3 * PMD_SIZE);
	/* PMD mappings: the 512 pages of each 2 MiB are one aligned block. */
	for (unsigned int i = 0; i < 3 * 512; i += 97) {
		assert_ptr_equal(vmalloc_to_page(p + (unsigned long)i * PAGE_SIZE), vm->pages[i]);
		assert_int_equal(page_to_pfn(vm->pages[i]) % 512, i % 512);
	}
	assert_int_equal(vmalloc_write(p + PMD_SIZE - 2, "abcd", 4), 0);
	{
		char b[4];

		assert_int_equal(vmalloc_read(b, p + PMD_SIZE - 2, 4), 0);
		assert_memory_equal(b, "abcd", 4);
	}
	assert_int_equal(pl_check_machine(m), 0);
	/* Below PMD_SIZE vmalloc_huge maps small pages. */
	small = vmalloc_huge(PMD_SIZE - PAGE_SIZE, GFP_KERNEL);
	assert_int_equal(find_vm_area(small)->page_order, 0);
	assert_int_equal(vfree(small), 0);
	assert_int_equal(vfree(p), 0);
	vm_test_done(m);
}

/* With no 2 MiB block to be had, vmalloc_huge falls back to 4 KiB pages. */
static void test_vmalloc_huge_fallback(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct pl_fault_attr attr;
	struct pl_fault_stats fst;
	char *p;

	(void)state;
	pl_fault_attr_default(&attr);	/* every allocation of order >= 9 fails */
	attr.probability = 100;
	attr.times = -1;
	attr.min_order = 9;
	attr.ignore_gfp_reclaim = false;
	attr.verbose = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	p = vmalloc_huge(PMD_SIZE, GFP_KERNEL);
	assert_non_null(p);
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, NULL, &fst), 0);
	assert_int_equal(fst.injected, 1);
	assert_int_equal(find_vm_area(p)->page_order, 0);
	assert_int_equal(find_vm_area(p)->nr_pages, 512);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(vfree(p), 0);
	attr.probability = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	vm_test_done(m);
}

static void test_vrealloc(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	char data[64], back[64];
	char *p, *q;

	(void)state;
	for (int i = 0; i < 64; i++)
		data[i] = (char)(i + 1);
	p = vrealloc(NULL, 100, GFP_KERNEL);	/* vmalloc */
	assert_non_null(p);
	assert_int_equal(vmalloc_write(p, data, 64), 0);
	/* grow within the allocated page: in place */
	q = vrealloc(p, 2000, GFP_KERNEL | __GFP_ZERO);
	assert_ptr_equal(q, p);
	assert_int_equal(find_vm_area(p)->requested_size, 2000);
	/* shrink: in place, the tail zeroed with __GFP_ZERO */
	q = vrealloc(p, 10, GFP_KERNEL | __GFP_ZERO);
	assert_ptr_equal(q, p);
	assert_int_equal(vmalloc_read(back, p, 64), 0);
	assert_memory_equal(back, data, 10);
	assert_int_equal(back[10], 0);
	assert_int_equal(vmalloc_write(p, data, 64), 0);
	q = vrealloc(p, 64, GFP_KERNEL);
	/* grow past the area: moves, keeps the old bytes, frees the old area */
	q = vrealloc(p, 5 * PAGE_SIZE, GFP_KERNEL);
	assert_non_null(q);
	assert_ptr_not_equal(q, p);
	assert_null(find_vm_area(p));
	assert_int_equal(vmalloc_read(back, q, 64), 0);
	assert_memory_equal(back, data, 64);
	assert_int_equal(find_vm_area(q)->nr_pages, 5);
	/* size 0 frees */
	assert_null(vrealloc(q, 0, GFP_KERNEL));
	assert_null(find_vm_area(q));
	vm_test_done(m);
}

static void test_vmap_vunmap(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct page *pages[5];
	char *p;

	(void)state;
	for (int i = 0; i < 5; i++) {
		pages[i] = alloc_pages(GFP_KERNEL, 0);
		memset(page_address(pages[i]), 'a' + i, PAGE_SIZE);
	}
	p = vmap(pages, 5, VM_MAP, PAGE_KERNEL);
	assert_non_null(p);
	for (int i = 0; i < 5; i++) {
		char c;

		assert_ptr_equal(vmalloc_to_page(p + i * PAGE_SIZE), pages[i]);
		assert_int_equal(vmalloc_read(&c, p + i * PAGE_SIZE + 9, 1), 0);
		assert_int_equal(c, 'a' + i);
	}
	assert_int_equal(pl_check_machine(m), 0);
	/* vfree of a vmap area would not free these pages; vunmap leaves them */
	pl_warn_set_quiet(true);
	{
		unsigned long w = pl_warn_count();

		assert_int_equal(vunmap(vmalloc(PAGE_SIZE) /* leaks nothing: refused */), -EINVAL);
		assert_warned(w, "wrong kind");
	}
	pl_warn_set_quiet(false);
	assert_int_equal(vunmap(p), 0);
	assert_null(vmalloc_to_page(p));
	for (int i = 0; i < 5; i++)
		assert_int_equal(page_ref_count(pages[i]), 1);
	/* VM_MAP_PUT_PAGES: vfree takes the pages and the (malloc'ed) array */
	{
		struct page **owned = malloc(sizeof(pages));

		memcpy(owned, pages, sizeof(pages));
		p = vmap(owned, 5, VM_MAP | VM_MAP_PUT_PAGES, PAGE_KERNEL);
	}
	assert_non_null(p);
	assert_int_equal(vfree(p), 0);
	/* the vmalloc area refused by vunmap above is still live: find and free it */
	{
		struct vmap_space *vs = m->vmap;
		struct list_head *pos;
		void *left = NULL;

		for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++)
			list_for_each(pos, &vs->vmap_nodes[i].busy.head)
				left = (void *)list_entry(pos, struct vmap_area, list)->va_start;
		assert_non_null(left);
		assert_int_equal(vfree(left), 0);
	}
	vm_test_done(m);
}

/*
 * get_vm_area() reserves a range and maps nothing: no page and no
 * page-table page is taken (the trace replay relies on it), and
 * free_vm_area() frees the range lazily, as vunmap() would.
 */
static void test_get_vm_area(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct pl_vmalloc_stats st0, st;
	struct snapshot before;
	struct vm_struct *area;

	(void)state;
	drain_all_pages(NULL);
	take_snapshot(m, &before);
	pl_vmalloc_stats(m, &st0);
	area = get_vm_area(5 * PAGE_SIZE - 100, 0);	/* rounded up to 5 pages, plus the guard */
	assert_non_null(area);
	assert_int_equal(area->size, 6 * PAGE_SIZE);
	assert_int_equal(get_vm_area_size(area), 5 * PAGE_SIZE);
	assert_ptr_equal(find_vm_area((void *)area->addr), area);
	assert_null(vmalloc_to_page((void *)area->addr));
	drain_all_pages(NULL);
	assert_unchanged(m, &before);	/* every free list as it was */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, st0.nr_busy + 1);
	assert_int_equal(st.pgtable_pages, st0.pgtable_pages);
	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(free_vm_area(area), 0);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, st0.nr_busy);
	assert_int_equal(st.lazy_pages, st0.lazy_pages + 6);
	assert_int_equal(pl_check_machine(m), 0);
	vm_test_done(m);
}

static void test_vfree_atomic(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	void *a = vmalloc(PAGE_SIZE), *b = vmalloc(3 * PAGE_SIZE);
	struct pl_vmalloc_stats st;

	(void)state;
	assert_int_equal(vfree_atomic(a), 0);
	assert_int_equal(vfree_atomic(b), 0);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 2);	/* queued, not yet done */
	pl_vmalloc_flush_deferred(m);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 0);
	assert_int_equal(st.vmalloc_pages, 0);
	/* The queue also runs on the next vmalloc call. */
	a = vmalloc(PAGE_SIZE);
	assert_int_equal(vfree_atomic(a), 0);
	b = vmalloc(PAGE_SIZE);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 1);
	assert_int_equal(vfree(b), 0);
	vm_test_done(m);
}

static void test_vmallocinfo(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	char buf[4096], expect[256];
	void *a = vm_index_vmalloc(m, 2 * PAGE_SIZE), *b = vzalloc(PAGE_SIZE);
	struct vm_struct *va = find_vm_area(a), *vb = find_vm_area(b);
	long n;

	(void)state;
	n = pl_show_vmallocinfo(m, buf, sizeof(buf));
	assert_true(n > 0);
	snprintf(expect, sizeof(expect),
		 "0x%016lx-0x%016lx   12288 0x%016lx pages=2 vmalloc N0=2\n"
		 "0x%016lx-0x%016lx    8192 0x%016lx pages=1 vmalloc N0=1\n",
		 (unsigned long)a, (unsigned long)a + 3 * PAGE_SIZE, (unsigned long)va->caller,
		 (unsigned long)b, (unsigned long)b + 2 * PAGE_SIZE, (unsigned long)vb->caller);
	assert_int_equal(n, (long)strlen(expect));
	assert_string_equal(buf, expect);
	assert_int_equal(vfree(a), 0);
	n = pl_show_vmallocinfo(m, buf, sizeof(buf));
	snprintf(expect, sizeof(expect),
		 "0x%016lx-0x%016lx    8192 0x%016lx pages=1 vmalloc N0=1\n"
		 "0x%016lx-0x%016lx   12288 unpurged vm_area\n",
		 (unsigned long)b, (unsigned long)b + 2 * PAGE_SIZE, (unsigned long)vb->caller,
		 (unsigned long)a, (unsigned long)a + 3 * PAGE_SIZE);
	assert_string_equal(buf, expect);
	assert_int_equal(pl_show_vmallocinfo(m, buf, 10), -ENOSPC);
	assert_int_equal(vfree(b), 0);
	vm_test_done(m);
}

/* vfree piles lazy areas up; crossing lazy_max_pages purges with one TLB flush. */
static void test_vfree_lazy_purge(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned long flushes = vm_event(m, PL_EV_TLB_FLUSH), pairs = 0;
	struct pl_vmalloc_stats st;

	(void)state;
	pl_vmalloc_stats(m, &st);
	/* each pair leaves 2 lazy pages (page + guard) */
	while ((pairs + 1) * 2 <= st.lazy_max_pages) {
		assert_int_equal(vfree(vm_index_vmalloc(m, PAGE_SIZE)), 0);
		pairs++;
	}
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.lazy_pages, pairs * 2);
	assert_int_equal(vfree(vm_index_vmalloc(m, PAGE_SIZE)), 0);
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes + 1);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.lazy_pages, 0);
	assert_int_equal(st.nr_free, 1);
	vm_test_done(m);
}

/* Several vCPUs: areas come from and go back to each CPU's node pool. */
static void test_multi_cpu_pools(void **state)
{
	struct pl_machine *m = vm_test_machine(4, "v6.18");
	void *p[4][8];

	(void)state;
	for (int round = 0; round < 3; round++) {
		for (unsigned int cpu = 0; cpu < 4; cpu++) {
			assert_int_equal(pl_enter(m, cpu), 0);
			for (int i = 0; i < 8; i++)
				p[cpu][i] = vm_index_vmalloc(m, (unsigned long)(i + 1) * PAGE_SIZE);
		}
		for (unsigned int cpu = 0; cpu < 4; cpu++) {
			assert_int_equal(pl_enter(m, cpu), 0);
			for (int i = 0; i < 8; i++)
				assert_int_equal(vfree(p[cpu][i]), 0);
		}
		assert_int_equal(pl_enter(m, 0), 0);
		vm_unmap_aliases();
		assert_int_equal(pl_check_machine(m), 0);
	}
	assert_true(vm_event(m, PL_EV_VMAP_POOL_HIT) > 0);
	vm_test_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmalloc_basic),
		cmocka_unit_test(test_write_read_through_mappings),
		cmocka_unit_test(test_vzalloc_zeroes),
		cmocka_unit_test(test_many_sizes_and_alignments),
		cmocka_unit_test(test_vmalloc_huge),
		cmocka_unit_test(test_vmalloc_huge_fallback),
		cmocka_unit_test(test_vrealloc),
		cmocka_unit_test(test_vmap_vunmap),
		cmocka_unit_test(test_get_vm_area),
		cmocka_unit_test(test_vfree_atomic),
		cmocka_unit_test(test_vmallocinfo),
		cmocka_unit_test(test_vfree_lazy_purge),
		cmocka_unit_test(test_multi_cpu_pools),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
