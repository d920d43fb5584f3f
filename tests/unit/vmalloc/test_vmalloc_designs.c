// SPDX-License-Identifier: MIT
/*
 * test_vmalloc_designs.c - the vmalloc design switches: v6.18 takes
 * order-0 pages in bulk; vmalloc_high_order (a06157804399, "v6.19-rc1")
 * takes the largest orders first and splits them, 100 pages as 64+32+4;
 * every vfree frees order-0 pages one by one, except with vfree_batch
 * (seed 000, "v6.19-rc1+contig") where each contiguous run goes back as
 * aligned high-order chunks; vmalloc_huge's order-9 blocks are split and
 * freed like the rest. Counted through PGFREE (blocks freed) and
 * PGFREE_PAGES.
 */
#include <stdio.h>
#include "vmalloc_helpers.h"

/* Runs of contiguous pfns in @vm's pages, in order; their sizes into @runs. */
static unsigned int pfn_runs(struct vm_struct *vm, unsigned int *runs, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < vm->nr_pages; i++) {
		if (i && page_to_pfn(vm->pages[i]) == page_to_pfn(vm->pages[i - 1]) + 1) {
			runs[n - 1]++;
			continue;
		}
		assert_true(n < max);
		runs[n++] = 1;
	}
	return n;
}

static void test_high_order_allocation(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.19-rc1");
	unsigned int runs[16], n;
	struct vm_struct *vm;
	void *p;

	(void)state;
	p = vmalloc(100 * PAGE_SIZE);
	vm = find_vm_area(p);
	n = pfn_runs(vm, runs, 16);
	/* 64 + 32 + 4 blocks, each naturally aligned; they may abut. */
	assert_int_equal(vm->nr_pages, 100);
	assert_true(IS_ALIGNED(page_to_pfn(vm->pages[0]), 64));
	assert_true(IS_ALIGNED(page_to_pfn(vm->pages[64]), 32));
	assert_true(IS_ALIGNED(page_to_pfn(vm->pages[96]), 4));
	assert_true(n <= 3);
	for (unsigned int i = 0; i < 100; i++) {
		assert_int_equal(page_ref_count(vm->pages[i]), 1);	/* split */
		assert_int_equal(vm->pages[i]->alloc_order, 0);
	}
	assert_int_equal(pl_check_vmalloc(m), 0);
	/* v6.19-rc1 frees them one by one. */
	{
		unsigned long f = vm_event(m, PL_EV_PGFREE);

		assert_int_equal(vfree(p), 0);
		assert_int_equal(vm_event(m, PL_EV_PGFREE) - f, 100);
	}
	vm_test_done(m);
}

static void test_v618_is_order0(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned long a = vm_event(m, PL_EV_PGALLOC), f;
	void *p = vmalloc(16 * PAGE_SIZE);

	(void)state;
	assert_int_equal(vm_event(m, PL_EV_PGALLOC) - a, 16 + 3);	/* + pud, pmd, pte tables */
	f = vm_event(m, PL_EV_PGFREE);
	assert_int_equal(vfree(p), 0);
	assert_int_equal(vm_event(m, PL_EV_PGFREE) - f, 16);
	vm_test_done(m);
}

static void test_vfree_batch_frees_chunks(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.19-rc1+contig");
	unsigned long f, fp;
	void *p, *q;

	(void)state;
	/* 5 pages: an order-2 block and one page; freed as 2 chunks at most. */
	p = vmalloc(5 * PAGE_SIZE);
	f = vm_event(m, PL_EV_PGFREE);
	fp = vm_event(m, PL_EV_PGFREE_PAGES);
	assert_int_equal(vfree(p), 0);
	assert_true(vm_event(m, PL_EV_PGFREE) - f <= 2);
	assert_int_equal(vm_event(m, PL_EV_PGFREE_PAGES) - fp, 5);
	/* The order-2 chunk went to the order-2 PCP list: the next one reuses it. */
	q = vmalloc(4 * PAGE_SIZE);
	assert_ptr_equal(find_vm_area(q)->pages[0], vmalloc_to_page(q));
	f = vm_event(m, PL_EV_PGFREE);
	assert_int_equal(vfree(q), 0);
	assert_int_equal(vm_event(m, PL_EV_PGFREE) - f, 1);
	assert_int_equal(pl_check_vmalloc(m), 0);
	vm_test_done(m);
}

static void test_huge_is_split(void **state)
{
	static const char *const designs[] = { "v6.18", "v6.19-rc1+contig" };

	(void)state;
	for (int d = 0; d < 2; d++) {
		struct pl_machine *m = vm_test_machine(1, designs[d]);
		void *p = vmalloc_huge(PMD_SIZE, GFP_KERNEL);
		struct vm_struct *vm = find_vm_area(p);
		unsigned long f;

		assert_int_equal(vm->page_order, 9);
		assert_int_equal(vm->nr_pages, 512);
		for (unsigned int i = 0; i < 512; i += 37)
			assert_int_equal(page_ref_count(vm->pages[i]), 1);
		assert_ptr_equal(vmalloc_to_page((char *)p + 300 * PAGE_SIZE), vm->pages[300]);
		assert_int_equal(pl_check_vmalloc(m), 0);
		f = vm_event(m, PL_EV_PGFREE);
		assert_int_equal(vfree(p), 0);
		/* one by one (v6.18), or the whole order-9 chunk at once */
		assert_int_equal(vm_event(m, PL_EV_PGFREE) - f, d ? 1 : 512);
		vm_test_done(m);
	}
}

/* A failure midway under each preset leaves nothing behind. */
static void test_exhaustion_every_preset(void **state)
{
	(void)state;
	for (const char *const *d = pl_design_presets; *d; d++) {
		struct pl_machine *m = vm_test_machine(1, *d);
		void *p;

		drain_all_pages(NULL);
		pl_warn_set_quiet(true);
		/* more than the machine has free: fails midway through the pages */
		p = vmalloc((pl_nr_free_pages(m) + 10) * PAGE_SIZE);
		pl_warn_set_quiet(false);
		assert_null(p);
		assert_int_equal(pl_check_vmalloc(m), 0);
		p = vmalloc(300 * PAGE_SIZE);
		assert_non_null(p);
		assert_int_equal(vfree(p), 0);
		vm_test_done(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_high_order_allocation),
		cmocka_unit_test(test_v618_is_order0),
		cmocka_unit_test(test_vfree_batch_frees_chunks),
		cmocka_unit_test(test_huge_is_split),
		cmocka_unit_test(test_exhaustion_every_preset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
