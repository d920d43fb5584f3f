// SPDX-License-Identifier: MIT
/*
 * test_vmalloc_badinput.c - misuse of the vmalloc API gets one rate-limited
 * warning naming the problem and an error, and changes nothing: the free
 * state of the page allocator, /proc/vmallocinfo (busy and unpurged areas)
 * and the vmalloc counters are identical before and after. And an
 * allocation that fails midway (the page allocator exhausted, or a
 * page-table page that cannot be had) leaves no pages or areas behind.
 */
#include "vmalloc_helpers.h"

#define P PAGE_SIZE

struct fixture {
	struct pl_machine *m;
	void *live;		/* a live 4-page area */
	void *freed;		/* a freed area, still unpurged */
	struct snapshot before;
	char info[8192];
	long info_len;
	struct pl_vmalloc_stats st;
	unsigned long warns, bad;
};

static void take(struct fixture *f)
{
	drain_all_pages(NULL);
	take_snapshot(f->m, &f->before);
	f->info_len = pl_show_vmallocinfo(f->m, f->info, sizeof(f->info));
	assert_true(f->info_len > 0);
	pl_vmalloc_stats(f->m, &f->st);
	f->warns = pl_warn_count();
	f->bad = vm_event(f->m, PL_EV_BAD_INPUT);
}

/* One warning saying @what, one bad-input event, and nothing else changed. */
static void assert_rejected(struct fixture *f, const char *what)
{
	static char info[8192];
	struct pl_vmalloc_stats st;
	long n;

	assert_warned(f->warns, what);
	assert_int_equal(vm_event(f->m, PL_EV_BAD_INPUT), f->bad + 1);
	drain_all_pages(NULL);
	assert_unchanged(f->m, &f->before);
	n = pl_show_vmallocinfo(f->m, info, sizeof(info));
	assert_int_equal(n, f->info_len);
	assert_memory_equal(info, f->info, (size_t)n);
	pl_vmalloc_stats(f->m, &st);
	assert_memory_equal(&st, &f->st, sizeof(st));
	f->warns = pl_warn_count();
	f->bad = vm_event(f->m, PL_EV_BAD_INPUT);
}

static int setup(void **state)
{
	static struct fixture f;

	f.m = vm_test_machine(1, "v6.18");
	f.live = vmalloc(4 * P);
	f.freed = vmalloc(2 * P);
	assert_int_equal(vfree(f.freed), 0);
	take(&f);
	pl_warn_set_quiet(true);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pl_warn_set_quiet(false);
	assert_int_equal(vfree(f->live), 0);
	vm_test_done(f->m);
	return 0;
}

static void test_vfree_unknown(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(vfree((void *)(VMALLOC_START + (1UL << 30))), -EINVAL);
	assert_rejected(f, "nonexistent vm area");
	assert_int_equal(vfree((void *)0x100000UL), -EINVAL);	/* not a vmalloc address */
	assert_rejected(f, "nonexistent vm area");
}

static void test_vfree_unaligned(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(vfree((char *)f->live + 8), -EINVAL);
	assert_rejected(f, "not page aligned");
}

static void test_vfree_inside_an_area(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(vfree((char *)f->live + P), -EINVAL);
	assert_rejected(f, "not the start of an area");
	assert_int_equal(vfree((char *)f->live + 4 * P), -EINVAL);	/* its guard page */
	assert_rejected(f, "not the start of an area");
}

static void test_vfree_twice(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(vfree(f->freed), -EINVAL);	/* freed in setup, still lazy */
	assert_rejected(f, "nonexistent vm area");
	assert_int_equal(vfree_atomic(f->freed), -EINVAL);
	assert_rejected(f, "nonexistent vm area");
	assert_int_equal(vunmap(f->freed), -EINVAL);
	assert_rejected(f, "nonexistent vm area");
	assert_null(vrealloc(f->freed, 10 * P, GFP_KERNEL));
	assert_rejected(f, "nonexistent vm area");
}

static void test_size_zero(void **state)
{
	struct fixture *f = *state;

	assert_null(vmalloc(0));
	assert_rejected(f, "size 0");
	assert_null(vzalloc(0));
	assert_rejected(f, "size 0");
}

static void test_size_overflow(void **state)
{
	struct fixture *f = *state;

	assert_null(vmalloc(ULONG_MAX));
	assert_rejected(f, "size overflow");
	assert_null(vmalloc(ULONG_MAX - P + 2));	/* PAGE_ALIGN would wrap */
	assert_rejected(f, "size overflow");
	assert_null(vmalloc(f->m->max_pfn * P + P));	/* more than the machine */
	assert_rejected(f, "exceeds total pages");
	assert_null(vmap((struct page *[]){ NULL }, 0, VM_MAP, PAGE_KERNEL));
	assert_rejected(f, "vmap: 0 pages");
}

static void test_alignment_bad(void **state)
{
	struct fixture *f = *state;

	assert_null(__vmalloc_node(P, 3 * P, GFP_KERNEL, NUMA_NO_NODE));
	assert_rejected(f, "not a power of two");
	assert_null(__vmalloc_node(P, 0, GFP_KERNEL, NUMA_NO_NODE));
	assert_rejected(f, "not a power of two");
	assert_null(__vmalloc_node(P, 1UL << 63, GFP_KERNEL, NUMA_NO_NODE));
	assert_rejected(f, "alignment overflow");
}

static void test_window_bad(void **state)
{
	struct fixture *f = *state;
	unsigned long s = VMALLOC_START + (1UL << 30);

	assert_null(__vmalloc_node_range(4 * P, 1, s, s + 2 * P, GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_rejected(f, "smaller than size");
	/* exactly the size but no room for the guard page */
	assert_null(__vmalloc_node_range(4 * P, 1, s, s + 4 * P, GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_rejected(f, "smaller than size");
	assert_null(__vmalloc_node_range(P, 1, 0x1000, 0x100000, GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_rejected(f, "window");
	assert_null(__vmalloc_node_range(P, 1, s + 5 * P, s, GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_rejected(f, "window");
}

static void test_vmap_bad_pages(void **state)
{
	struct fixture *f = *state;
	struct page *free_page_in_buddy = pfn_to_page(f->m->max_pfn - 1);
	struct page *pages[2] = { find_vm_area(f->live)->pages[0], free_page_in_buddy };

	assert_null(vmap(pages, 2, VM_MAP, PAGE_KERNEL));
	assert_rejected(f, "not an allocated page");
}

static void test_get_vm_area_bad(void **state)
{
	struct fixture *f = *state;

	assert_null(get_vm_area(0, 0));
	assert_rejected(f, "size");
	assert_null(get_vm_area(~0UL - PAGE_SIZE, 0));
	assert_rejected(f, "size");
	assert_null(get_vm_area(PAGE_SIZE, VM_MAP_PUT_PAGES));
	assert_rejected(f, "flags");
	assert_int_equal(free_vm_area(NULL), -EINVAL);
	assert_rejected(f, "NULL");
	/* a vmalloc area is not get_vm_area()'s: refused, still live */
	assert_int_equal(free_vm_area(find_vm_area(f->live)), -EINVAL);
	assert_rejected(f, "wrong kind");
}

/*
 * A window that is free but full: the failure is not bad input, yet changes
 * nothing, and warns once (or not at all under __GFP_NOWARN).
 */
static void test_window_full(void **state)
{
	struct fixture *f = *state;
	unsigned long s = VMALLOC_START + (1UL << 30);
	void *a = __vmalloc_node_range(3 * P, 1, s, s + 4 * P, GFP_KERNEL, PAGE_KERNEL, 0,
				       NUMA_NO_NODE, NULL);

	assert_int_equal((unsigned long)a, s);
	take(f);
	assert_null(__vmalloc_node_range(P, 1, s, s + 4 * P, GFP_KERNEL | __GFP_NOWARN,
					 PAGE_KERNEL, 0, NUMA_NO_NODE, NULL));
	assert_int_equal(pl_warn_count(), f->warns);
	/* without __GFP_NOWARN: one warning, the range's (the fuzzer found two) */
	assert_null(__vmalloc_node_range(P, 1, s, s + 4 * P, GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_warned(f->warns, "Address range restricted");
	assert_int_equal(pl_warn_count(), f->warns + 1);
	assert_int_equal(vfree(a), 0);
	pl_vmalloc_purge(f->m);	/* the setup's lazy area goes too: re-make it */
	f->freed = vmalloc(2 * P);
	assert_int_equal(vfree(f->freed), 0);
	take(f);
}

/* ---- failures midway ------------------------------------------------------ */

static void assert_nothing_left(struct pl_machine *m, unsigned long free_before,
				const struct pl_vmalloc_stats *before)
{
	struct pl_vmalloc_stats st;

	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, before->nr_busy);
	assert_int_equal(st.vmalloc_pages, before->vmalloc_pages);
	assert_int_equal(st.nr_lazy, before->nr_lazy);
	assert_int_equal(st.lazy_pages, before->lazy_pages);
	assert_int_equal(st.nr_free, before->nr_free);	/* objects: the checker */
	pl_vmalloc_trim_pgtables(m);
	drain_all_pages(NULL);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(pl_nr_free_pages(m) + st.pgtable_pages, free_before + before->pgtable_pages);
	assert_int_equal(pl_check_machine(m), 0);
}

/* The page allocator runs dry half way through the pages. */
static void test_fail_midway_exhausted(void **state)
{
	struct fixture *f = *state;
	struct pl_machine *m = f->m;
	unsigned long free_before, w, n = 0;
	struct pl_vmalloc_stats before;
	struct page *hold[8];

	/* hold 16 MiB so that "more than is free" is still less than the RAM */
	while (n < ARRAY_SIZE(hold))
		assert_non_null(hold[n++] = alloc_pages(GFP_KERNEL, 9));
	pl_vmalloc_trim_pgtables(m);
	drain_all_pages(NULL);
	free_before = pl_nr_free_pages(m);
	pl_vmalloc_stats(m, &before);
	w = pl_warn_count();
	assert_null(vmalloc((free_before + 64) * P));
	assert_warned(w, "failed to allocate pages");
	assert_nothing_left(m, free_before, &before);
	assert_int_equal(vm_event(m, PL_EV_BAD_INPUT), f->bad);
	/* and vmalloc_huge, with its fallback to small pages, likewise */
	w = pl_warn_count();
	assert_null(vmalloc_huge((free_before / 512 + 1) * PMD_SIZE, GFP_KERNEL));
	assert_warned(w, "failed to allocate pages");
	assert_nothing_left(m, free_before, &before);
	while (n)
		assert_int_equal(__free_pages(hold[--n], 9), 0);
	take(f);
}

/* A page-table page cannot be had: the mapping fails part way. */
static void test_fail_midway_pgtable(void **state)
{
	struct fixture *f = *state;
	struct pl_machine *m = f->m;
	struct pl_fault_attr attr;
	struct pl_fault_stats fst;
	unsigned long free_before, w;
	struct pl_vmalloc_stats before;

	/* a fresh 1 GiB region: every table level below the PGD must be made */
	unsigned long s = VMALLOC_START + (8UL << 30);

	pl_vmalloc_trim_pgtables(m);
	drain_all_pages(NULL);
	free_before = pl_nr_free_pages(m);
	pl_vmalloc_stats(m, &before);
	pl_fault_attr_default(&attr);
	attr.probability = 100;
	attr.times = 1;
	attr.min_order = 0;
	attr.ignore_gfp_reclaim = false;
	attr.verbose = 0;
	/* the data pages' bulk call and the PUD page are allowed, the PMD page fails */
	attr.space = 2 * P + 1;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	w = pl_warn_count();
	assert_null(__vmalloc_node_range(4 * P, 1, s, s + (1UL << 30), GFP_KERNEL, PAGE_KERNEL, 0,
					 NUMA_NO_NODE, NULL));
	assert_warned(w, "failed to map pages");
	assert_int_equal(pl_fault_get(m, PL_FAULT_PAGE_ALLOC, NULL, &fst), 0);
	assert_int_equal(fst.injected, 1);
	attr.probability = 0;
	assert_int_equal(pl_fail_page_alloc_set(m, &attr), 0);
	assert_nothing_left(m, free_before, &before);
	/* the same request now succeeds */
	{
		void *p = __vmalloc_node_range(4 * P, 1, s, s + (1UL << 30), GFP_KERNEL, PAGE_KERNEL,
					       0, NUMA_NO_NODE, NULL);

		assert_int_equal((unsigned long)p, s);
		assert_int_equal(vfree(p), 0);
	}
	pl_vmalloc_purge(m);
	f->freed = vmalloc(2 * P);
	assert_int_equal(vfree(f->freed), 0);
	take(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vfree_unknown),
		cmocka_unit_test(test_vfree_unaligned),
		cmocka_unit_test(test_vfree_inside_an_area),
		cmocka_unit_test(test_vfree_twice),
		cmocka_unit_test(test_size_zero),
		cmocka_unit_test(test_size_overflow),
		cmocka_unit_test(test_alignment_bad),
		cmocka_unit_test(test_window_bad),
		cmocka_unit_test(test_vmap_bad_pages),
		cmocka_unit_test(test_get_vm_area_bad),
		cmocka_unit_test(test_window_full),
		cmocka_unit_test(test_fail_midway_exhausted),
		cmocka_unit_test(test_fail_midway_pgtable),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
