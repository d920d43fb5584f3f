// SPDX-License-Identifier: MIT
/*
 * test_vmalloc_misuse.c - the vmalloc, kvfree_rcu, percpu and maple
 * tree defects: vm flags a caller may not give, double deferred frees, gfp
 * bits, what a machine leaves behind at teardown, and a reversed maple range
 * given to the preallocated store. Each refused call: its error, one
 * warning, the vmalloc/percpu counters, free pages and /proc/vmallocinfo
 * unchanged, the checker clean.
 */
#include "vmalloc_helpers.h"
#include "maple_helpers.h"
#include "pagelab/kvfree_rcu.h"

#define P PAGE_SIZE

static void *vmalloc_flags(unsigned long size, unsigned long vm_flags)
{
	return __vmalloc_node_range(size, 1, VMALLOC_START, VMALLOC_END, GFP_KERNEL, PAGE_KERNEL,
				    vm_flags, NUMA_NO_NODE, NULL);
}

/* ---- 4. vm flags ------------------------------------------------------------------ */

static void test_vmalloc_flags_refused(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct page *page = alloc_pages(GFP_KERNEL, 0);
	static struct vm_snap before;
	void *v = vmalloc(2 * P);
	unsigned long w;

	(void)state;
	vm_snap_take(m, &before);
	pl_warn_set_quiet(true);
	static const unsigned long bad[] = { VM_PCPU, VM_MAP_PUT_PAGES, VM_MAP, VM_ALLOC,
					     VM_UNINITIALIZED, VM_IOREMAP, 1UL << 40 };
	for (unsigned int i = 0; i < ARRAY_SIZE(bad); i++) {
		w = pl_warn_count();
		assert_null(vmalloc_flags(P, bad[i]));
		assert_warned(w, "not a caller's to give");
		vm_assert_unchanged(m, &before);
	}
	static const unsigned long bad_vmap[] = { VM_ALLOC, VM_PCPU, VM_UNINITIALIZED,
						  VM_NO_GUARD, 1UL << 33 };
	for (unsigned int i = 0; i < ARRAY_SIZE(bad_vmap); i++) {
		w = pl_warn_count();
		assert_null(vmap(&page, 1, bad_vmap[i], PAGE_KERNEL));
		assert_warned(w, "are not vmap()'s");
		vm_assert_unchanged(m, &before);
	}
	w = pl_warn_count();
	assert_int_equal(vunmap(v), -EINVAL);	/* a vmalloc area: vfree() it */
	assert_warned(w, "wrong kind");
	vm_assert_unchanged(m, &before);
	pl_warn_set_quiet(false);

	/* the flags a caller may give still work */
	void *u = vmalloc_flags(P, VM_USERMAP | VM_FLUSH_RESET_PERMS);
	void *mp = vmap(&page, 1, VM_MAP | VM_IOREMAP, PAGE_KERNEL);

	assert_non_null(u);
	assert_non_null(mp);
	assert_int_equal(vfree(u), 0);
	assert_int_equal(vunmap(mp), 0);
	assert_int_equal(vfree(v), 0);
	assert_int_equal(__free_pages(page, 0), 0);
	vm_test_done(m);
}

/* ---- 5. double deferred frees -------------------------------------------------------- */

static void test_double_kvfree_rcu(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	static struct vm_snap before;
	void *p = vmalloc(3 * P);
	unsigned long w;

	(void)state;
	assert_non_null(p);
	assert_int_equal(kvfree_rcu_mightsleep(p), 0);
	vm_snap_take(m, &before);
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_int_equal(kvfree_rcu_mightsleep(p), -EINVAL);
	assert_warned(w, "already queued for freeing");
	vm_assert_unchanged(m, &before);
	w = pl_warn_count();
	assert_int_equal(vfree(p), -EINVAL);
	assert_warned(w, "already queued for freeing");
	w = pl_warn_count();
	assert_int_equal(vfree_atomic(p), -EINVAL);
	assert_warned(w, "already queued for freeing");
	w = pl_warn_count();
	assert_null(vrealloc(p, 8 * P, GFP_KERNEL));
	assert_warned(w, "already queued for freeing");
	vm_assert_unchanged(m, &before);
	pl_warn_set_quiet(false);
	kvfree_rcu_barrier();
	assert_int_equal(pl_kvfree_rcu_pending(m), 0);
	assert_null(find_vm_area(p));
	vm_test_done(m);
}

static void test_double_vfree_atomic(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	static struct vm_snap before;
	void *p = vmalloc(P);
	unsigned long w, frees;

	(void)state;
	assert_int_equal(vfree_atomic(p), 0);
	vm_snap_take(m, &before);
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_int_equal(vfree_atomic(p), -EINVAL);
	assert_warned(w, "already queued for freeing");
	vm_assert_unchanged(m, &before);
	w = pl_warn_count();
	assert_int_equal(kvfree_rcu_mightsleep(p), -EINVAL);
	assert_warned(w, "already queued for freeing");
	vm_assert_unchanged(m, &before);
	pl_warn_set_quiet(false);
	frees = vm_event(m, PL_EV_VFREE);
	w = pl_warn_count();
	pl_vmalloc_flush_deferred(m);
	assert_int_equal(vm_event(m, PL_EV_VFREE), frees + 1);
	assert_int_equal(pl_warn_count(), w);	/* the queue runs without a warning */
	vm_test_done(m);
}

/* ---- 9. gfp bits (vmalloc, percpu) ------------------------------------------------------ */

static void test_vm_gfp_bits(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	static struct vm_snap before;
	void *v = vmalloc(P);
	unsigned long w;

	(void)state;
	vm_snap_take(m, &before);
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_null(__vmalloc(P, GFP_KERNEL | 0x40000000u));
	assert_warned(w, "unknown bits");
	w = pl_warn_count();
	assert_null(__vmalloc(P, GFP_KERNEL | __GFP_MOVABLE | __GFP_RECLAIMABLE));
	assert_warned(w, "both __GFP_MOVABLE");
	w = pl_warn_count();
	assert_null(vrealloc(v, P / 2, GFP_KERNEL | 0x2u));
	assert_warned(w, "unknown bits");
	w = pl_warn_count();
	assert_null(__alloc_percpu_gfp(16, 8, GFP_KERNEL | 0x8000000u));
	assert_warned(w, "unknown bits");
	/* red team: a NULL buffer was a memcpy(NULL) (read) or a silent memset (write) */
	w = pl_warn_count();
	assert_int_equal(vmalloc_read(NULL, v, 8), -EINVAL);
	assert_warned(w, "dst is NULL");
	w = pl_warn_count();
	assert_int_equal(vmalloc_write(v, NULL, 8), -EINVAL);
	assert_warned(w, "src is NULL");
	vm_assert_unchanged(m, &before);
	pl_warn_set_quiet(false);
	assert_int_equal(vfree(v), 0);
	vm_test_done(m);
}

/* ---- 8. teardown with live areas (LeakSanitizer fails this test on a leak) ----------- */

static void test_destroy_with_live_areas(void **state)
{
	static const char *const designs[] = { "v6.18", "maple", "all" };

	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(designs); i++) {
		struct pl_machine *m = vm_test_machine(2, designs[i]);
		struct page *pages_for_vmap = alloc_pages(GFP_KERNEL, 0);
		struct page **arr = malloc(sizeof(*arr));
		void *pc = __alloc_percpu(32, 8);

		assert_non_null(pc);
		assert_non_null(vmalloc(5 * P));
		assert_non_null(vmalloc(64 * 1024));
		assert_non_null(vzalloc(P));
		assert_int_equal(kvfree_rcu_mightsleep(vmalloc(2 * P)), 0);	/* pending */
		assert_int_equal(vfree_atomic(vmalloc(P)), 0);			/* queued */
		arr[0] = pages_for_vmap;
		assert_non_null(vmap(arr, 1, VM_MAP | VM_MAP_PUT_PAGES, PAGE_KERNEL));
		assert_int_equal(pl_check_machine(m), 0);
		pl_machine_destroy(m);
	}
}

/* ---- 3. mas_store_prealloc() with index > last ------------------------------------------ */

static void test_maple_prealloc_reversed(void **state)
{
	static struct mt_slot_rec before[128], after[128];
	long nodes = mt_nr_allocated();
	unsigned long n, w;
	struct maple_tree mt;

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	for (unsigned long i = 0; i < 40; i++)
		assert_int_equal(mtree_store_range(&mt, i * 10, i * 10 + 4, mk(i), GFP_KERNEL), 0);
	n = mt_snapshot(&mt, before, 128);
	pl_warn_set_quiet(true);
	{
		MA_STATE(mas, &mt, 200, 150);

		w = pl_warn_count();
		assert_int_equal(mas_preallocate(&mas, mk(99), GFP_KERNEL), -EINVAL);
		assert_int_equal(pl_warn_count(), w + 1);
		mas.index = 200;
		mas.last = 150;
		mas.status = ma_start;
		w = pl_warn_count();
		mas_store_prealloc(&mas, mk(99));
		assert_int_equal(pl_warn_count(), w + 1);
		assert_true(mas_is_err(&mas));
	}
	pl_warn_set_quiet(false);
	check_valid(&mt);
	assert_int_equal(mt_snapshot(&mt, after, 128), n);
	assert_memory_equal(before, after, n * sizeof(before[0]));
	check_done(&mt, nodes);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmalloc_flags_refused),
		cmocka_unit_test(test_double_kvfree_rcu),
		cmocka_unit_test(test_double_vfree_atomic),
		cmocka_unit_test(test_vm_gfp_bits),
		cmocka_unit_test(test_destroy_with_live_areas),
		cmocka_unit_test(test_maple_prealloc_reversed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
