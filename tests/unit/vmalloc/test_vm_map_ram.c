// SPDX-License-Identifier: MIT
/*
 * test_vm_map_ram.c - vm_map_ram()/vm_unmap_ram() and the per-CPU vmap
 * blocks: mappings bump-allocated from a 256-page block, 2^order pages of
 * it each; a block that is all dirty goes away lazily; large mappings get
 * an area of their own without a guard page; one vCPU's block is not
 * another's; vm_unmap_aliases() flushes dirty ranges; bad input (wrong
 * count, not the start, unknown address, double unmap, bad pages) warns,
 * fails and changes nothing. The checker runs after each step, and every
 * test ends with the space empty and the machine fully coalesced.
 */
#include <stdio.h>
#include "vmalloc_helpers.h"

#define BLOCK_PAGES 256UL

static struct page **get_pages(unsigned int n)
{
	struct page **pages = calloc(n, sizeof(*pages));

	assert_non_null(pages);
	assert_int_equal(alloc_pages_bulk(GFP_KERNEL, n, pages), n);
	return pages;
}

static void put_pages(struct page **pages, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		assert_int_equal(__free_page(pages[i]), 0);
	free(pages);
}

static struct vmap_area *busy_area(unsigned long addr)
{
	return find_vmap_area(addr);
}

static void test_map_write_unmap(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	struct page **pages = get_pages(3);
	struct pl_vmalloc_stats st;
	struct vmap_area *va;
	char buf[4096];
	char *p;

	(void)state;
	p = vm_map_ram(pages, 3, NUMA_NO_NODE);
	assert_non_null(p);
	assert_true(is_vmalloc_addr(p));
	for (int i = 0; i < 3; i++)
		assert_ptr_equal(vmalloc_to_page(p + i * PAGE_SIZE + 9), pages[i]);
	assert_null(vmalloc_to_page(p + 3 * PAGE_SIZE));	/* rounded up to 4, 3 mapped */
	assert_int_equal(vmalloc_write(p + PAGE_SIZE - 2, "abcd", 4), 0);
	assert_memory_equal((char *)page_address(pages[0]) + PAGE_SIZE - 2, "ab", 2);
	assert_memory_equal(page_address(pages[1]), "cd", 2);
	/* The block is one busy VMAP_RAM|VMAP_BLOCK area of 256 pages, 1 MiB aligned. */
	va = busy_area((unsigned long)p);
	assert_non_null(va);
	assert_null(va->vm);
	assert_int_equal(va->flags & VMAP_FLAGS_MASK, VMAP_RAM | VMAP_BLOCK);
	assert_int_equal(va_size(va), BLOCK_PAGES * PAGE_SIZE);
	assert_true(IS_ALIGNED(va->va_start, BLOCK_PAGES * PAGE_SIZE));
	assert_int_equal(pl_show_vmallocinfo(m, buf, sizeof(buf)) > 0, 1);
	assert_non_null(strstr(buf, " 1048576 vm_map_ram\n"));
	assert_int_equal(vm_event(m, PL_EV_VM_MAP_RAM), 1);
	assert_int_equal(vm_event(m, PL_EV_VMAP_BLOCK_NEW), 1);
	assert_int_equal(pl_check_vmalloc(m), 0);

	assert_int_equal(vm_unmap_ram(p, 3), 0);
	assert_null(vmalloc_to_page(p));
	/* The block stays: it still has free pages (bump allocation). */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 1);
	assert_int_equal(pl_check_vmalloc(m), 0);
	put_pages(pages, 3);
	vm_test_done(m);
}

static void test_bump_and_block_death(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct page **pages = get_pages(4);
	char *maps[BLOCK_PAGES / 4];
	struct pl_vmalloc_stats st;
	char *a, *b, *c;

	(void)state;
	/* Bump: 1 page, then 3 (takes 4), then 1 again: offsets 0, 1, 5. */
	a = vm_map_ram(pages, 1, NUMA_NO_NODE);
	b = vm_map_ram(pages, 3, NUMA_NO_NODE);
	c = vm_map_ram(pages, 1, NUMA_NO_NODE);
	assert_ptr_equal(b, a + PAGE_SIZE);
	assert_ptr_equal(c, a + 5 * PAGE_SIZE);
	/* Space freed in a block is not reused. */
	assert_int_equal(vm_unmap_ram(a, 1), 0);
	assert_ptr_equal(vm_map_ram(pages, 1, NUMA_NO_NODE), a + 6 * PAGE_SIZE);
	assert_int_equal(vm_unmap_ram(a + 6 * PAGE_SIZE, 1), 0);
	assert_int_equal(vm_unmap_ram(b, 3), 0);
	assert_int_equal(vm_unmap_ram(c, 1), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	/* No live mapping but free pages left: fragmented, freed by a forced purge. */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 1);
	pl_vmalloc_purge(m);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 0);
	assert_int_equal(pl_check_vmalloc(m), 0);

	/* A second block, filled exactly by 64 mappings of 4 pages. */
	for (unsigned int i = 0; i < BLOCK_PAGES / 4; i++) {
		maps[i] = vm_map_ram(pages, 4, NUMA_NO_NODE);
		assert_non_null(maps[i]);
		assert_int_equal(vmalloc_write(maps[i] + 3 * PAGE_SIZE, &i, sizeof(i)), 0);
	}
	assert_int_equal(vm_event(m, PL_EV_VMAP_BLOCK_NEW), 2);
	assert_true(IS_ALIGNED((unsigned long)maps[0], BLOCK_PAGES * PAGE_SIZE));
	assert_ptr_equal(maps[BLOCK_PAGES / 4 - 1], maps[0] + (BLOCK_PAGES - 4) * PAGE_SIZE);
	assert_int_equal(pl_check_vmalloc(m), 0);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 1);
	assert_int_equal(st.nr_lazy, 0);
	for (unsigned int i = 0; i < BLOCK_PAGES / 4; i++)
		assert_int_equal(vm_unmap_ram(maps[i], 4), 0);
	/* All dirty: the block's area went to the lazy list at once. */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 0);
	assert_int_equal(st.nr_lazy, 1);
	assert_int_equal(st.lazy_pages, BLOCK_PAGES);
	assert_int_equal(pl_check_vmalloc(m), 0);
	put_pages(pages, 4);
	vm_test_done(m);
}

static void test_large_mapping(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned int n = VMAP_MAX_ALLOC + 7;
	struct page **pages = get_pages(n);
	struct vmap_area *va;
	char *p;

	(void)state;
	p = vm_map_ram(pages, n, NUMA_NO_NODE);
	assert_non_null(p);
	va = busy_area((unsigned long)p);
	assert_int_equal(va->flags & VMAP_FLAGS_MASK, VMAP_RAM);
	assert_int_equal(va_size(va), (unsigned long)n * PAGE_SIZE);	/* no guard page */
	assert_ptr_equal(vmalloc_to_page(p + (n - 1) * PAGE_SIZE), pages[n - 1]);
	assert_int_equal(vm_event(m, PL_EV_VMAP_BLOCK_NEW), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	assert_int_equal(vm_unmap_ram(p, n), 0);
	assert_null(vmalloc_to_page(p));
	assert_int_equal(pl_check_vmalloc(m), 0);
	put_pages(pages, n);
	vm_test_done(m);
}

static void test_blocks_are_per_cpu(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	struct page **pages = get_pages(2);
	char *p0, *p1, *q0;

	(void)state;
	p0 = vm_map_ram(pages, 1, NUMA_NO_NODE);
	assert_int_equal(pl_enter(m, 1), 0);
	p1 = vm_map_ram(pages + 1, 1, NUMA_NO_NODE);
	assert_int_equal(pl_enter(m, 0), 0);
	q0 = vm_map_ram(pages + 1, 1, NUMA_NO_NODE);
	assert_int_equal(vm_event(m, PL_EV_VMAP_BLOCK_NEW), 2);
	assert_ptr_equal(q0, p0 + PAGE_SIZE);
	assert_true(busy_area((unsigned long)p0) != busy_area((unsigned long)p1));
	assert_int_equal(pl_check_vmalloc(m), 0);
	/* Any CPU may unmap any mapping. */
	assert_int_equal(vm_unmap_ram(p1, 1), 0);
	assert_int_equal(pl_enter(m, 1), 0);
	assert_int_equal(vm_unmap_ram(p0, 1), 0);
	assert_int_equal(vm_unmap_ram(q0, 1), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	put_pages(pages, 2);
	vm_test_done(m);
}

static void test_unmap_aliases_flushes(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct page **pages = get_pages(1);
	unsigned long flushes;
	char *p, *q;

	(void)state;
	p = vm_map_ram(pages, 1, NUMA_NO_NODE);
	q = vm_map_ram(pages, 1, NUMA_NO_NODE);
	assert_int_equal(vm_unmap_ram(p, 1), 0);
	flushes = vm_event(m, PL_EV_TLB_FLUSH);
	vm_unmap_aliases();	/* p's page is dirty: one flush */
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes + 1);
	vm_unmap_aliases();	/* nothing dirty, nothing lazy: none */
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes + 1);
	assert_ptr_equal(vmalloc_to_page(q), pages[0]);
	assert_int_equal(vm_unmap_ram(q, 1), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	put_pages(pages, 1);
	vm_test_done(m);
}

/* @ret is -EINVAL (or NULL: 0) with one warning saying @what, and nothing changed. */
#define REFUSED(m, s, ret, want, what)				\
	do {							\
		unsigned long w_ = pl_warn_count();		\
								\
		assert_int_equal((long)(ret), (long)(want));	\
		assert_warned(w_, what);			\
		vm_assert_unchanged(m, s);			\
	} while (0)

static void test_bad_input(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	unsigned int big = VMAP_MAX_ALLOC + 1;
	struct page **pages = get_pages(big);
	struct page *bad[2];
	struct vm_snap s;
	char *p, *q, *gone;

	(void)state;
	pl_warn_set_quiet(true);
	p = vm_map_ram(pages, 3, NUMA_NO_NODE);
	q = vm_map_ram(pages, big, NUMA_NO_NODE);
	gone = vm_map_ram(pages, 1, NUMA_NO_NODE);
	assert_int_equal(vm_unmap_ram(gone, 1), 0);
	drain_all_pages(NULL);
	vm_snap_take(m, &s);

	REFUSED(m, &s, vm_unmap_ram(p, 4), -EINVAL, "wrong count");	/* same order */
	REFUSED(m, &s, vm_unmap_ram(p, 1), -EINVAL, "wrong count");
	REFUSED(m, &s, vm_unmap_ram(p + PAGE_SIZE, 2), -EINVAL, "not the start");	/* inside */
	REFUSED(m, &s, vm_unmap_ram(gone, 1), -EINVAL, "not the start");	/* double unmap */
	REFUSED(m, &s, vm_unmap_ram(q, big + 1), -EINVAL, "wrong count");	/* large */
	REFUSED(m, &s, vm_unmap_ram(q, 2), -EINVAL, "not a vm_map_ram address");
	REFUSED(m, &s, vm_unmap_ram((void *)(VMALLOC_START + (1UL << 40)), 1), -EINVAL,
		"not a vm_map_ram address");
	REFUSED(m, &s, vm_unmap_ram(p + 1, 3), -EINVAL, "bad address");	/* unaligned */
	REFUSED(m, &s, vm_unmap_ram(p, 0), -EINVAL, "bad address");
	REFUSED(m, &s, vm_unmap_ram((void *)0x1000, 1), -EINVAL, "bad address");
	/* vfree() of a mapping, from a block or large: not a vmalloc area. */
	REFUSED(m, &s, vfree(p), -EINVAL, "nonexistent vm area");
	REFUSED(m, &s, vfree(q), -EINVAL, "nonexistent vm area");
	/* Pages that are not allocated pages of this machine. */
	bad[0] = pages[0];
	bad[1] = pfn_to_page(m->max_pfn - 1);	/* free */
	REFUSED(m, &s, vm_map_ram(bad, 2, NUMA_NO_NODE) != NULL, 0, "pages[1]");
	REFUSED(m, &s, vm_map_ram(pages, 0, NUMA_NO_NODE) != NULL, 0, "0 pages");
	/* The mappings still work and unmap normally. */
	assert_ptr_equal(vmalloc_to_page(p + 2 * PAGE_SIZE), pages[2]);
	assert_int_equal(vm_unmap_ram(p, 3), 0);
	assert_int_equal(vm_unmap_ram(q, big), 0);
	pl_warn_set_quiet(false);
	put_pages(pages, big);
	vm_test_done(m);
}

static void test_many_cycles_all_presets(void **state)
{
	(void)state;
	for (const char *const *d = pl_design_presets; *d; d++) {
		struct pl_machine *m = vm_test_machine(4, *d);
		struct page **pages = get_pages(VMAP_MAX_ALLOC);
		struct pl_rng rng;

		pl_rng_seed(&rng, 11);
		for (int i = 0; i < 3000; i++) {
			unsigned int n = 1 + (unsigned int)pl_rng_below(&rng, VMAP_MAX_ALLOC);
			char *p;

			assert_int_equal(pl_enter(m, (unsigned int)pl_rng_below(&rng, 4)), 0);
			p = vm_map_ram(pages, n, NUMA_NO_NODE);
			assert_non_null(p);
			assert_int_equal(vmalloc_write(p + (n - 1) * PAGE_SIZE, "x", 1), 0);
			assert_int_equal(vm_unmap_ram(p, n), 0);
		}
		assert_int_equal(pl_check_vmalloc(m), 0);
		assert_int_equal(pl_enter(m, 0), 0);
		put_pages(pages, VMAP_MAX_ALLOC);
		vm_test_done(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_map_write_unmap),
		cmocka_unit_test(test_bump_and_block_death),
		cmocka_unit_test(test_large_mapping),
		cmocka_unit_test(test_blocks_are_per_cpu),
		cmocka_unit_test(test_unmap_aliases_flushes),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_many_cycles_all_presets),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
