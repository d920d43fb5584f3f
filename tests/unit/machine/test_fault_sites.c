// SPDX-License-Identifier: MIT
/*
 * test_fault_sites.c - every allocation site of the vmalloc layers and the
 * maple tree, failed on purpose one call at a time (the kernel's
 * fail-nth style, with the fault_inject.h knobs probability=100,
 * interval=n, times=1): for n = 1, 2, ... the n-th eligible call of one
 * operation fails, until the operation makes fewer than n calls.
 *
 * Sites: fail_page_alloc (data pages, page-table pages, percpu population,
 * the large-order phase of v6.19-rc1), failslab (vmap_area and vm_struct
 * objects: vmalloc, vmap, vm_map_ram blocks and large mappings, percpu
 * chunks, the NE-fit spare) and the maple node cache.
 *
 * After each failed call: the call reported failure (NULL or -ENOMEM),
 * the checker is clean (it recounts the vmap_area/vm_struct objects in use
 * against the areas holding them), no busy or lazy area, vmalloc page,
 * percpu allocation or page frame is left behind. Then, with everything
 * freed and purged, the page allocator is fully coalesced and the vmalloc
 * space is one free area again - after every n, failed or not.
 * A failure the operation absorbs (the NE-fit preload, vmalloc_huge's
 * fallback to small pages, a large order of v6.19-rc1) may still succeed;
 * each sweep must see at least one failed call.
 */
#include "vmalloc_helpers.h"
#include "maple_helpers.h"

#define P PAGE_SIZE

struct ctx {
	struct pl_machine *m;
	struct page *pages[128];	/* the caller's pages for vmap/vm_map_ram */
	unsigned int nr_pages;
	void *old;			/* vrealloc's area */
};

/* An operation under test: do it (NULL: failed), undo a success. */
struct op {
	const char *name;
	unsigned int caller_pages;
	bool needs_old;
	void *(*run)(struct ctx *c);
	void (*undo)(struct ctx *c, void *obj);
};

static void *run_vmalloc_small(struct ctx *c) { (void)c; return vmalloc(5 * P); }
static void *run_vmalloc_bulk(struct ctx *c) { (void)c; return vmalloc(300 * P); }
static void *run_vzalloc(struct ctx *c) { (void)c; return vzalloc(3 * P + 17); }
static void *run_vmalloc_ne_fit(struct ctx *c)
{
	(void)c;
	return __vmalloc_node(16 * P, 1UL << 20, GFP_KERNEL, NUMA_NO_NODE);
}
static void *run_vmalloc_huge(struct ctx *c) { (void)c; return vmalloc_huge(PMD_SIZE + P, GFP_KERNEL); }
static void undo_vfree(struct ctx *c, void *p) { (void)c; assert_int_equal(vfree(p), 0); }

static void *run_vmap(struct ctx *c) { return vmap(c->pages, c->nr_pages, VM_MAP, PAGE_KERNEL); }
static void undo_vunmap(struct ctx *c, void *p) { (void)c; assert_int_equal(vunmap(p), 0); }

static void *run_vm_map_ram(struct ctx *c) { return vm_map_ram(c->pages, c->nr_pages, NUMA_NO_NODE); }
static void undo_vm_unmap_ram(struct ctx *c, void *p)
{
	assert_int_equal(vm_unmap_ram(p, c->nr_pages), 0);
}

static void *run_percpu(struct ctx *c) { (void)c; return __alloc_percpu(200, 8); }
static void undo_percpu(struct ctx *c, void *p) { (void)c; assert_int_equal(free_percpu(p), 0); }

static void *run_vrealloc(struct ctx *c)
{
	void *n = vrealloc(c->old, 40 * P, GFP_KERNEL);

	if (n) {
		c->old = NULL;	/* moved: the old area is gone */
		return n;
	}
	return NULL;
}

static const struct op ops[] = {
	{ "vmalloc 5 pages", 0, false, run_vmalloc_small, undo_vfree },
	{ "vmalloc 300 pages", 0, false, run_vmalloc_bulk, undo_vfree },
	{ "vzalloc", 0, false, run_vzalloc, undo_vfree },
	{ "vmalloc NE fit", 0, false, run_vmalloc_ne_fit, undo_vfree },
	{ "vmalloc_huge", 0, false, run_vmalloc_huge, undo_vfree },
	{ "vmap 4 pages", 4, false, run_vmap, undo_vunmap },
	{ "vm_map_ram 4 pages (block)", 4, false, run_vm_map_ram, undo_vm_unmap_ram },
	{ "vm_map_ram 80 pages (own area)", 80, false, run_vm_map_ram, undo_vm_unmap_ram },
	{ "__alloc_percpu", 0, false, run_percpu, undo_percpu },
	{ "vrealloc grow (move)", 0, true, run_vrealloc, undo_vfree },
};

/* Fail every @n-th eligible call of @site, @times times (-1: no limit); n == 0: off. */
static void set_every_nth(struct pl_machine *m, enum pl_fault_site site, unsigned long n,
			  int times)
{
	struct pl_fault_attr a;

	pl_fault_attr_default(&a);
	a.probability = n ? 100 : 0;
	a.interval = n ? n : 1;
	a.times = times;
	a.min_order = 0;
	a.ignore_gfp_reclaim = false;
	a.verbose = 0;
	assert_int_equal(pl_fault_set(m, site, &a), 0);
}

static unsigned long injected(struct pl_machine *m, enum pl_fault_site site)
{
	struct pl_fault_stats st;

	assert_int_equal(pl_fault_get(m, site, NULL, &st), 0);
	return st.injected;
}

/* What must be the same after a failed call. */
struct state {
	struct pl_vmalloc_stats vm;
	struct pl_percpu_stats pc;
	unsigned long frames;	/* free pages + page-table pages + percpu pages */
};

static void take_state(struct pl_machine *m, struct state *s)
{
	/*
	 * vmap_pcpu_bump: a call may retire a full chunk, which then goes to
	 * the lazy list as one area whatever the call's outcome: compare the
	 * spaces purged (the drain returns every empty chunk).
	 */
	if (m->config.design.vmap_pcpu_bump)
		pl_vmalloc_purge(m);
	drain_all_pages(NULL);
	pl_vmalloc_stats(m, &s->vm);
	pl_percpu_stats(m, &s->pc);
	s->frames = pl_nr_free_pages(m) + s->vm.pgtable_pages + s->pc.nr_populated * m->nr_cpus;
}

static void assert_same_state(struct pl_machine *m, const struct state *before)
{
	struct state now;

	assert_int_equal(pl_check_machine(m), 0);
	assert_int_equal(pl_check_percpu(m), 0);
	take_state(m, &now);
	assert_int_equal(now.vm.nr_busy, before->vm.nr_busy);
	assert_int_equal(now.vm.nr_lazy, before->vm.nr_lazy);
	assert_int_equal(now.vm.lazy_pages, before->vm.lazy_pages);
	assert_int_equal(now.vm.vmalloc_pages, before->vm.vmalloc_pages);
	assert_int_equal(now.pc.nr_alloc, before->pc.nr_alloc);
	assert_int_equal(now.pc.bytes_used, before->pc.bytes_used);
	assert_int_equal(now.frames, before->frames);
}

/* Everything freed: purge, reclaim, trim; one free area, fully coalesced. */
static void assert_whole(struct pl_machine *m)
{
	struct pl_percpu_stats ps;

	assert_int_equal(pl_check_machine(m), 0);
	pl_percpu_reclaim(m);
	pl_percpu_stats(m, &ps);
	assert_int_equal(ps.nr_chunks, 0);
	vm_assert_whole(m);
	assert_int_equal(pl_check_machine(m), 0);
}

/* Fail the @n-th eligible call of @site once; n == 0: off. */
static void set_nth(struct pl_machine *m, enum pl_fault_site site, unsigned long n)
{
	set_every_nth(m, site, n, 1);
}

/*
 * Sweep @op over @site on a machine of @design: every n-th call fails, at
 * most @times times (1: the n-th call only), for n = 1.. until the
 * operation makes fewer than n calls. Return: the calls that failed it.
 */
static unsigned long sweep(const char *design, const struct op *op, enum pl_fault_site site,
			   int times)
{
	struct pl_machine *m = vm_test_machine(2, design);
	unsigned long n, failed = 0;
	struct ctx c = { .m = m };

	pl_warn_set_quiet(true);
	for (n = 1;; n++) {
		void *background = vmalloc(3 * P), *obj;
		struct state before;
		unsigned long hit;

		assert_non_null(background);
		c.nr_pages = op->caller_pages;
		for (unsigned int i = 0; i < c.nr_pages; i++)
			assert_non_null(c.pages[i] = alloc_pages(GFP_KERNEL, 0));
		c.old = op->needs_old ? vmalloc(2 * P) : NULL;
		take_state(m, &before);
		set_every_nth(m, site, n, times);
		obj = op->run(&c);
		hit = injected(m, site);
		set_nth(m, site, 0);
		if (obj) {
			assert_int_equal(pl_check_machine(m), 0);
			op->undo(&c, obj);
		} else {
			assert_true(hit >= 1);	/* only an injected failure */
			assert_true(times < 0 || hit <= (unsigned long)times);
			assert_same_state(m, &before);
			failed++;
		}
		if (c.old)
			assert_int_equal(vfree(c.old), 0);
		for (unsigned int i = 0; i < c.nr_pages; i++)
			assert_int_equal(__free_pages(c.pages[i], 0), 0);
		assert_int_equal(vfree(background), 0);
		assert_whole(m);
		if (!hit)
			break;	/* fewer than n calls: every one has been failed */
		assert_true(n < 10000);
	}
	pl_warn_set_quiet(false);
	if (getenv("PAGELAB_TEST_VERBOSE"))
		fprintf(stderr, "%-32s %-16s %-16s %3lu calls, %3lu failed the operation\n",
			op->name, design, pl_fault_site_names[site], n - 1, failed);
	pl_machine_destroy(m);
	return failed;
}

/*
 * The page allocator, one n-th call at a time: vmalloc absorbs a failed
 * bulk call (the single-page fallback), so with times=1 only a failed
 * page-table page can fail it; every n-th call (times unlimited) reaches
 * the fallback's failures too.
 */
static void test_fail_page_alloc_each_call(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		sweep("v6.18", &ops[i], PL_FAULT_PAGE_ALLOC, 1);
		assert_true(sweep("v6.18", &ops[i], PL_FAULT_PAGE_ALLOC, -1) > 0 ||
			    ops[i].caller_pages);	/* vmap/vm_map_ram of an old table */
		sweep("v6.19-rc1+contig", &ops[i], PL_FAULT_PAGE_ALLOC, 1);
		sweep("v6.19-rc1+contig", &ops[i], PL_FAULT_PAGE_ALLOC, -1);
	}
}

static void test_failslab_each_call(void **state)
{
	(void)state;
	for (unsigned int i = 0; i < ARRAY_SIZE(ops); i++) {
		assert_true(sweep("v6.18", &ops[i], PL_FAULT_SLAB, 1) > 0);
		sweep("all", &ops[i], PL_FAULT_SLAB, 1);
	}
}

/* failslab's knobs are per machine, and verbose warns naming the cache. */
static void test_failslab_knobs(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct pl_machine *other = vm_test_machine(1, "v6.18");
	struct pl_fault_attr a, got;
	struct pl_fault_stats st;
	unsigned long w;
	char last[256];
	void *p;

	(void)state;
	pl_fault_attr_default(&a);
	assert_int_equal(pl_fault_attr_parse(&a, "probability=100,times=2,verbose=1"), 0);
	assert_int_equal(pl_fault_set(m, PL_FAULT_SLAB, &a), 0);
	pl_enter(other, 0);
	p = vmalloc(P);		/* the other machine does not fail */
	assert_non_null(p);
	assert_int_equal(vfree(p), 0);
	pl_enter(m, 0);
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_null(vmalloc(P));
	assert_true(pl_warn_count() > w);
	pl_warn_last(last, sizeof(last));
	assert_non_null(strstr(last, "vmalloc error"));
	assert_int_equal(pl_fault_get(m, PL_FAULT_SLAB, &got, &st), 0);
	assert_int_equal(st.injected, 1);	/* the vm_struct: refused before the area */
	assert_int_equal(got.times, 1);
	assert_null(vmalloc(P));
	assert_int_equal(pl_fault_get(m, PL_FAULT_SLAB, &got, &st), 0);
	assert_int_equal(st.injected, 2);
	assert_int_equal(got.times, 0);
	p = vmalloc(P);		/* times used up */
	assert_non_null(p);
	assert_int_equal(vfree(p), 0);
	pl_warn_set_quiet(false);
	vm_test_done(m);
	pl_enter(other, 0);
	vm_test_done(other);
}

/* The maple node cache through the same engine: pl_fault_set(PL_FAULT_MAPLE_NODE). */
static void test_maple_node_each_call(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	static struct mt_slot_rec a[4000], b[4000];
	long nodes_before = mt_nr_allocated();
	unsigned long failed = 0, calls = 0;
	struct maple_tree mt;

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	for (unsigned long i = 0; i < 600; i++)
		assert_int_equal(mtree_store_range(&mt, i * 10, i * 10 + 4, mk(i), GFP_KERNEL), 0);
	/* a spanning store, an insert that splits a leaf, an erase, an alloc_range */
	for (int kind = 0; kind < 4; kind++) {
		for (unsigned long n = 1;; n++) {
			unsigned long na = mt_snapshot(&mt, a, 4000), nb, start;
			long nodes = mt_nr_allocated();
			struct pl_fault_stats st;
			int ret;

			set_nth(m, PL_FAULT_MAPLE_NODE, n);
			switch (kind) {
			case 0: ret = mtree_store_range(&mt, 1003, 4507, mk(9999), GFP_KERNEL); break;
			case 1: ret = mtree_store_range(&mt, 2006, 2007, mk(9998), GFP_KERNEL); break;
			case 2: ret = mtree_store_range(&mt, 3000, 3999, NULL, GFP_KERNEL); break;
			default:
				ret = mtree_alloc_range(&mt, &start, mk(9997), 3, 0, ULONG_MAX, GFP_KERNEL);
				break;
			}
			assert_int_equal(pl_fault_get(m, PL_FAULT_MAPLE_NODE, NULL, &st), 0);
			set_nth(m, PL_FAULT_MAPLE_NODE, 0);
			calls++;
			check_valid(&mt);
			if (!st.injected) {
				assert_int_equal(ret, 0);
				break;
			}
			if (ret) {
				assert_int_equal(ret, -ENOMEM);
				nb = mt_snapshot(&mt, b, 4000);
				assert_int_equal(na, nb);
				assert_memory_equal(a, b, na * sizeof(a[0]));
				mt_rcu_barrier();
				assert_int_equal(mt_nr_allocated(), nodes);
				failed++;
			}
		}
	}
	assert_true(failed >= 3);
	assert_true(calls > failed);
	check_done(&mt, nodes_before);
	vm_test_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fail_page_alloc_each_call),
		cmocka_unit_test(test_failslab_each_call),
		cmocka_unit_test(test_failslab_knobs),
		cmocka_unit_test(test_maple_node_each_call),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
