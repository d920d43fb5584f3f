// SPDX-License-Identifier: MIT
/*
 * test_vmap_area_warn_sites.c - the PL_WARN_ON()s of the rbtree vmap_area
 * index at the kernel's WARN sites in mm/vmalloc.c: a busy area taken out
 * of its tree behind vmalloc's back and unlinked again is caught at the
 * unlink (__unlink_va()'s WARN_ON(RB_EMPTY_NODE())), which changes
 * nothing; an area inserted over one already there is caught at the
 * descent (find_va_links()'s "overlaps" WARN) and refused. Both are
 * WARN_ONs in the kernel, not VM_WARN_ONs: on at every debug level.
 */
#include <string.h>
#include "vmalloc_helpers.h"

/* A machine with the rbtree index whatever PAGELAB_VM_DESIGN says. */
static struct pl_machine *rb_machine(int debug)
{
	struct pl_config cfg;
	struct pl_machine *m;
	char err[128];

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = 1;
	cfg.debug = debug;
	cfg.tlb_flush_ns_per_cpu = 0;
	assert_int_equal(pl_design_parse("v6.18+vmap_index=rbtree", &cfg.design, err, sizeof(err)), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	assert_ptr_equal(m->vmap->ops, &vmap_index_rbtree_ops);
	return m;
}

static unsigned long nr_busy(struct pl_machine *m)
{
	struct pl_vmalloc_stats st;

	pl_vmalloc_stats(m, &st);
	return st.nr_busy;
}

/* The PL_WARN_ON()s that fired in ops->unlink() or ops->insert() of @va (quiet). */
static unsigned long unlink_warns(struct vmap_space *vs, struct rb_list *busy, struct vmap_area *va)
{
	unsigned long before = pl_warn_on_count();

	pl_warn_set_quiet(true);
	spin_lock(&busy->lock);
	vs->ops->unlink(busy, va);
	spin_unlock(&busy->lock);
	pl_warn_set_quiet(false);
	return pl_warn_on_count() - before;
}

static unsigned long insert_warns(struct vmap_space *vs, struct rb_list *busy, struct vmap_area *va,
				  int want)
{
	unsigned long before = pl_warn_on_count();

	pl_warn_set_quiet(true);
	spin_lock(&busy->lock);
	assert_int_equal(vs->ops->insert(busy, va), want);
	spin_unlock(&busy->lock);
	pl_warn_set_quiet(false);
	return pl_warn_on_count() - before;
}

static void corrupt_and_catch(int debug)
{
	struct pl_machine *m = rb_machine(debug);
	struct vmap_space *vs = m->vmap;
	void *p = vmalloc(4 * PAGE_SIZE), *q = vmalloc(PAGE_SIZE);
	struct vmap_area *va;
	struct rb_list *busy;
	unsigned long busy_before;
	char msg[256];

	assert_non_null(p);
	assert_non_null(q);
	va = find_vmap_area((unsigned long)p);
	assert_non_null(va);
	busy = &addr_to_node(vs, va->va_start)->busy;
	busy_before = nr_busy(m);

	/* the corruption: the area leaves its tree behind vmalloc's back */
	assert_int_equal(unlink_warns(vs, busy, va), 0);
	assert_int_equal(nr_busy(m), busy_before - 1);
	/* unlinking it again is caught at the unlink, and changes nothing */
	assert_int_equal(unlink_warns(vs, busy, va), 1);
	pl_warn_last(msg, sizeof(msg));
	assert_non_null(strstr(msg, "unlink_va"));
	assert_non_null(strstr(msg, "RB_EMPTY_NODE"));
	assert_int_equal(nr_busy(m), busy_before - 1);
	assert_ptr_equal(find_vmap_area((unsigned long)q)->va_start, (unsigned long)q);

	/* back in, once; inserting it over itself is caught at the descent and refused */
	assert_int_equal(insert_warns(vs, busy, va, 0), 0);
	assert_int_equal(insert_warns(vs, busy, va, -EEXIST), 1);
	pl_warn_last(msg, sizeof(msg));
	assert_non_null(strstr(msg, "find_va_links"));
	assert_int_equal(nr_busy(m), busy_before);

	/* the indexes are whole again: both areas free as usual, the checker clean */
	vfree(p);
	vfree(q);
	vm_test_done(m);
}

static void test_caught_at_debug_1(void **state)
{
	(void)state;
	corrupt_and_catch(1);
}

/* WARN_ON, not VM_WARN_ON: the same at debug 0. */
static void test_caught_at_debug_0(void **state)
{
	(void)state;
	corrupt_and_catch(0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_caught_at_debug_1),
		cmocka_unit_test(test_caught_at_debug_0),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
