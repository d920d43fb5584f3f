// SPDX-License-Identifier: MIT
/*
 * test_percpu.c - __alloc_percpu()/free_percpu(): every vCPU's copy is
 * zeroed and its own, allocations are aligned and do not overlap, chunks
 * come from pcpu_get_vm_areas() at the top of the space and go when
 * empty, pages are populated per unit on demand; bad input (sizes,
 * alignments, a foreign pointer, a double free, a pointer inside an
 * allocation) warns, fails and changes nothing. Checkers after each step;
 * every test ends with the space empty and the machine fully coalesced.
 */
#include <stdio.h>
#include "vmalloc_helpers.h"

static void percpu_done(struct pl_machine *m)
{
	struct pl_percpu_stats ps;

	assert_int_equal(pl_check_percpu(m), 0);
	pl_percpu_reclaim(m);
	pl_percpu_stats(m, &ps);
	assert_int_equal(ps.nr_chunks, 0);
	assert_int_equal(ps.nr_alloc, 0);
	vm_test_done(m);
}

static void test_alloc_write_free(void **state)
{
	struct pl_machine *m = vm_test_machine(4, "v6.18");
	struct pl_percpu_stats ps;
	struct vm_struct *vm;
	unsigned int v;
	char *p, *q;

	(void)state;
	p = __alloc_percpu(100, 8);
	assert_non_null(p);
	assert_true(is_vmalloc_addr(p));
	assert_true(IS_ALIGNED((unsigned long)p, 8));
	/* Each CPU's copy is zeroed and separate. */
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		v = 0xdead;
		assert_int_equal(vmalloc_read(&v, per_cpu_ptr(p, cpu) + 96, 4), 0);
		assert_int_equal(v, 0);
		v = cpu + 1;
		assert_int_equal(vmalloc_write(per_cpu_ptr(p, cpu), &v, 4), 0);
	}
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		assert_int_equal(vmalloc_read(&v, per_cpu_ptr(p, cpu), 4), 0);
		assert_int_equal(v, cpu + 1);
	}
	/* The chunk: a busy percpu area, high in the space, 4 units. */
	vm = find_vm_area(p);
	assert_non_null(vm);
	assert_true(vm->flags & VM_PCPU);
	assert_int_equal(vm->size, 4 * PCPU_UNIT_SIZE);
	assert_true(vm->addr > VMALLOC_START + VMALLOC_SIZE / 2);
	pl_percpu_stats(m, &ps);
	assert_int_equal(ps.nr_chunks, 1);
	assert_int_equal(ps.nr_populated, 1);
	assert_int_equal(vm_event(m, PL_EV_PCPU_POPULATE_PAGES), 4);
	assert_int_equal(pl_check_machine(m), 0);

	/* A second allocation does not overlap the first. */
	q = __alloc_percpu(4, 4);
	assert_true(q >= p + 100 || q + 4 <= p);
	assert_int_equal(free_percpu(p), 0);
	assert_int_equal(free_percpu(q), 0);
	assert_int_equal(free_percpu(NULL), 0);
	pl_percpu_stats(m, &ps);
	assert_int_equal(ps.nr_alloc, 0);
	assert_int_equal(ps.bytes_used, 0);
	assert_int_equal(pl_check_machine(m), 0);
	percpu_done(m);
}

static void test_many_random(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	enum { N = 4000 };
	static char *ptr[N];
	static size_t sz[N];
	struct pl_percpu_stats ps;
	struct pl_rng rng;

	(void)state;
	pl_rng_seed(&rng, 5);
	for (int i = 0; i < N; i++) {
		size_t align = 1UL << (1 + pl_rng_below(&rng, 11));

		sz[i] = 1 + pl_rng_below(&rng, PAGE_SIZE / 4);
		ptr[i] = __alloc_percpu(sz[i], align);
		assert_non_null(ptr[i]);
		assert_true(IS_ALIGNED((unsigned long)ptr[i], align));
		assert_int_equal(vmalloc_write(per_cpu_ptr(ptr[i], 1) + sz[i] - 1, "z", 1), 0);
		if (i % 3 == 2) {	/* free some on the way */
			assert_int_equal(free_percpu(ptr[i - 1]), 0);
			ptr[i - 1] = NULL;
		}
	}
	pl_percpu_stats(m, &ps);
	assert_true(ps.nr_chunks > 1);
	assert_int_equal(ps.nr_alloc, N - N / 3);
	assert_int_equal(pl_check_machine(m), 0);
	for (int i = 0; i < N; i++)
		assert_int_equal(free_percpu(ptr[i]), 0);
	/* Empty chunks go, one stays. */
	pl_percpu_stats(m, &ps);
	assert_int_equal(ps.nr_chunks, 1);
	assert_int_equal(pl_check_machine(m), 0);
	percpu_done(m);
}

/* One warning saying @what since @w, and nothing changed since @before; the checker is clean. */
static void pcpu_refused(struct pl_machine *m, unsigned long w, const char *what,
			 const struct vm_snap *before)
{
	assert_warned(w, what);
	vm_assert_unchanged(m, before);
}

static void test_bad_input(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	static struct vm_snap s;
	unsigned long w;
	char *p, *v;

	(void)state;
	pl_warn_set_quiet(true);
	p = __alloc_percpu(64, 16);
	v = vmalloc(PAGE_SIZE);
	drain_all_pages(NULL);
	vm_snap_take(m, &s);

	w = pl_warn_count();
	assert_int_equal(free_percpu(v), -EINVAL);		/* a vmalloc address */
	pcpu_refused(m, w, "not a percpu pointer", &s);
	w = pl_warn_count();
	assert_int_equal(free_percpu((void *)&w), -EINVAL);	/* a host pointer */
	pcpu_refused(m, w, "not a percpu pointer", &s);
	w = pl_warn_count();
	assert_int_equal(free_percpu(p + 16), -EINVAL);	/* inside an allocation */
	pcpu_refused(m, w, "not the start", &s);
	w = pl_warn_count();
	assert_int_equal(free_percpu(p + PCPU_UNIT_SIZE), -EINVAL);	/* CPU 1's copy */
	pcpu_refused(m, w, "not a percpu pointer", &s);
	w = pl_warn_count();
	assert_null(__alloc_percpu(0, 4));
	pcpu_refused(m, w, "illegal size", &s);
	w = pl_warn_count();
	assert_null(__alloc_percpu(PCPU_MIN_UNIT_SIZE + 1, 4));
	pcpu_refused(m, w, "illegal size", &s);
	w = pl_warn_count();
	assert_null(__alloc_percpu(8, 12));
	pcpu_refused(m, w, "illegal size", &s);
	w = pl_warn_count();
	assert_null(__alloc_percpu(8, 2 * PAGE_SIZE));
	pcpu_refused(m, w, "illegal size", &s);

	assert_int_equal(free_percpu(p), 0);
	drain_all_pages(NULL);
	vm_snap_take(m, &s);
	w = pl_warn_count();
	assert_int_equal(free_percpu(p), -EINVAL);		/* double free */
	pcpu_refused(m, w, "not the start", &s);
	pl_warn_set_quiet(false);
	assert_int_equal(vfree(v), 0);
	percpu_done(m);
}

/*
 * Regression (found by fuzz_ops): vfree() and friends of a percpu pointer at
 * the start of its chunk used to free the chunk's area from under it.
 */
static void test_vfree_of_a_chunk(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	struct pl_percpu_stats before, after;
	struct pl_vmalloc_stats vbefore, vafter;
	unsigned long w, free_pages;
	static char info[2][8192];
	long n;
	char *p;

	(void)state;
	pl_warn_set_quiet(true);
	p = __alloc_percpu(64, 8);
	assert_non_null(p);
	assert_non_null(find_vm_area(p));	/* the first allocation: the chunk's start */
	drain_all_pages(NULL);
	pl_percpu_stats(m, &before);
	pl_vmalloc_stats(m, &vbefore);
	free_pages = pl_nr_free_pages(m);
	n = pl_show_vmallocinfo(m, info[0], sizeof(info[0]));

	w = pl_warn_count();
	assert_int_equal(vfree(p), -EINVAL);
	assert_warned(w, "percpu chunk");
	w = pl_warn_count();
	assert_int_equal(vfree_atomic(p), -EINVAL);
	assert_warned(w, "percpu chunk");
	w = pl_warn_count();
	assert_null(vrealloc(p, 2 * PAGE_SIZE, GFP_KERNEL));
	assert_warned(w, "percpu chunk");
	w = pl_warn_count();
	assert_int_equal(vfree(per_cpu_ptr(p, 1)), -EINVAL);	/* CPU 1's unit: inside the area */
	assert_warned(w, "not the start");
	pl_vmalloc_flush_deferred(m);

	pl_percpu_stats(m, &after);
	assert_memory_equal(&before, &after, sizeof(before));
	pl_vmalloc_stats(m, &vafter);
	assert_memory_equal(&vbefore, &vafter, sizeof(vbefore));
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m), free_pages);
	assert_int_equal(pl_show_vmallocinfo(m, info[1], sizeof(info[1])), n);
	assert_memory_equal(info[0], info[1], (size_t)n);
	assert_int_equal(pl_check_machine(m), 0);
	pl_warn_set_quiet(false);
	assert_int_equal(free_percpu(p), 0);
	percpu_done(m);
}

/*
 * Regression (found by fuzz_ops): an allocation spanning several pages in
 * a new chunk, whose population failed after the first pages, used to
 * discard the chunk with those pages still mapped and never freed. Fail
 * each page allocation of the call in turn: every failure leaves nothing.
 */
static void test_populate_fails_midway(void **state)
{
	unsigned int failures = 0;

	(void)state;
	for (unsigned int nth = 1; nth <= 16; nth++) {
		struct pl_machine *m = vm_test_machine(2, "v6.18");
		struct pl_percpu_stats ps;
		struct pl_fault_attr a;
		unsigned long free_pages;
		void *p;

		drain_all_pages(NULL);
		free_pages = pl_nr_free_pages(m);
		pl_fault_attr_default(&a);
		a.probability = 100;
		a.interval = nth;
		a.times = 1;
		a.min_order = 0;
		a.ignore_gfp_reclaim = false;
		a.verbose = 0;
		assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
		p = __alloc_percpu_gfp(3 * PAGE_SIZE, PAGE_SIZE, GFP_KERNEL | __GFP_NOWARN);
		a.probability = 0;
		assert_int_equal(pl_fail_page_alloc_set(m, &a), 0);
		assert_int_equal(pl_check_machine(m), 0);
		pl_percpu_stats(m, &ps);
		if (!p) {
			failures++;
			assert_int_equal(ps.nr_alloc, 0);
			assert_int_equal(ps.nr_populated, 0);
			pl_vmalloc_trim_pgtables(m);
			drain_all_pages(NULL);
			assert_int_equal(pl_nr_free_pages(m), free_pages);
		} else {
			assert_int_equal(ps.nr_populated, 3);
			assert_int_equal(free_percpu(p), 0);
		}
		percpu_done(m);
	}
	assert_true(failures >= 6);	/* each of the 2 x 3 pages, and page tables */
}

static void test_every_preset(void **state)
{
	(void)state;
	for (const char *const *d = pl_design_presets; *d; d++) {
		struct pl_machine *m = vm_test_machine(3, *d);
		void *ptr[300];

		for (int i = 0; i < 300; i++)
			assert_non_null(ptr[i] = __alloc_percpu((size_t)(i % 1024) + 1, 8));
		for (int i = 299; i >= 0; i--)
			assert_int_equal(free_percpu(ptr[i]), 0);
		percpu_done(m);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_write_free),
		cmocka_unit_test(test_many_random),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_vfree_of_a_chunk),
		cmocka_unit_test(test_populate_fails_midway),
		cmocka_unit_test(test_every_preset),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
