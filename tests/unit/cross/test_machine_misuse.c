// SPDX-License-Identifier: MIT
/*
 * test_machine_misuse.c - the page allocator, machine and vCPU defects:
 * each misuse is refused with its error and one warning, and the machine's
 * free state (buddyinfo, pagetypeinfo, free page count) is byte-identical
 * afterwards, the checker clean. The vmalloc, percpu, kvfree_rcu and maple
 * rows are in test_vmalloc_misuse.c.
 */
#include <limits.h>
#include <pthread.h>
#include "helpers.h"

/* One warning since @before, and it says @what. */
static void assert_one_warning(unsigned long before, const char *what)
{
	char last[256];

	assert_int_equal(pl_warn_count(), before + 1);
	pl_warn_last(last, sizeof(last));
	if (!strstr(last, what))
		fail_msg("warning '%s' does not say '%s'", last, what);
}

struct ctx {
	struct pl_machine *m;
	struct snapshot before;
	unsigned long warns;
};

static void begin(struct ctx *c)
{
	take_snapshot(c->m, &c->before);
	c->warns = pl_warn_count();
}

static void refused(struct ctx *c, const char *what)
{
	assert_one_warning(c->warns, what);
	assert_unchanged(c->m, &c->before);
	assert_int_equal(pl_check_machine(c->m), 0);
	c->warns = pl_warn_count();
}

/* ---- 1. free_frozen_pages() makes __free_pages()'s checks -------------------- */

static void test_free_frozen_checks(void **state)
{
	struct ctx c = { .m = test_machine("v6.18") };
	struct page *a3 = alloc_pages(GFP_KERNEL, 3);
	struct page *comp = alloc_pages(GFP_KERNEL | __GFP_COMP, 2);
	struct page *p0 = alloc_pages(GFP_KERNEL, 0);
	struct page *freed = alloc_pages(GFP_KERNEL, 0);
	struct page *last = pfn_to_page(c.m->max_pfn - 1);
	struct page *block = pfn_to_page((c.m->max_pfn - 1) & ~(MAX_ORDER_NR_PAGES - 1));

	(void)state;
	assert_int_equal(__free_pages(freed, 0), 0);	/* now on this vCPU's PCP list */
	assert_true(PageBuddy(block));			/* the last block is free */
	set_page_count(a3, 0);
	set_page_count(p0, 0);
	pl_warn_set_quiet(true);
	begin(&c);

	assert_int_equal(free_frozen_pages(comp + 1, 0), -EINVAL);
	refused(&c, "tail page");
	assert_int_equal(free_frozen_pages(a3, 2), -EINVAL);
	refused(&c, "order differs");
	assert_int_equal(free_frozen_pages(a3 + 1, 0), -EINVAL);
	refused(&c, "inside an allocated block");
	assert_int_equal(free_frozen_pages(a3 + 4, 0), -EINVAL);
	refused(&c, "inside an allocated block");
	assert_int_equal(free_frozen_pages(last, 0), -EINVAL);
	refused(&c, "inside a free block");
	assert_int_equal(free_frozen_pages(freed, 0), -EINVAL);
	refused(&c, "per-CPU list");
	pl_warn_set_quiet(false);

	/* the valid frees still work */
	assert_int_equal(free_frozen_pages(a3, 3), 0);
	assert_int_equal(free_frozen_pages(p0, 0), 0);
	assert_int_equal(__free_pages(comp, 2), 0);
	assert_fully_coalesced(c.m);
	test_machine_done(c.m);
}

/*
 * pl_free_pages_pcp_busy() makes __free_pages()'s checks, naming itself; a
 * valid call frees to the buddy, past this vCPU's PCP.
 */
static void test_free_pcp_busy_checks(void **state)
{
	struct ctx c = { .m = test_machine("v6.18") };
	struct page *a3 = alloc_pages(GFP_KERNEL, 3);
	struct page *p0 = alloc_pages(GFP_KERNEL, 0);
	struct per_cpu_pages *pcp = &page_zone(p0)->per_cpu_pageset[0];
	int count;

	(void)state;
	pl_warn_set_quiet(true);
	begin(&c);
	assert_int_equal(pl_free_pages_pcp_busy(a3, 2), -EINVAL);
	refused(&c, "pl_free_pages_pcp_busy");
	assert_int_equal(pl_free_pages_pcp_busy(a3 + 1, 0), -EINVAL);
	refused(&c, "pl_free_pages_pcp_busy");
	pl_warn_set_quiet(false);
	count = pcp->count;
	assert_int_equal(pl_free_pages_pcp_busy(p0, 0), 0);
	assert_int_equal(pcp->count, count);		/* not on the PCP */
	assert_true(PageBuddy(p0) || !page_ref_count(p0));
	pl_warn_set_quiet(true);
	begin(&c);
	assert_int_equal(pl_free_pages_pcp_busy(p0, 0), -EINVAL);	/* a double free */
	refused(&c, "double free");
	pl_warn_set_quiet(false);
	assert_int_equal(pl_free_pages_pcp_busy(a3, 3), 0);
	assert_fully_coalesced(c.m);
	test_machine_done(c.m);
}

/* ---- 2. one thread per vCPU ------------------------------------------------------ */

struct enter_arg {
	struct pl_machine *m;
	unsigned int cpu;
	int ret;
	bool leave;
};

static void *enter_thread(void *p)
{
	struct enter_arg *a = p;

	a->ret = pl_enter(a->m, a->cpu);
	if (a->leave)
		pl_leave();
	return NULL;	/* without pl_leave(): the exit gives the vCPU back */
}

static int enter_from_thread(struct pl_machine *m, unsigned int cpu, bool leave)
{
	struct enter_arg a = { m, cpu, 0, leave };
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, enter_thread, &a), 0);
	pthread_join(t, NULL);
	return a.ret;
}

static void test_double_enter_refused(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 1);
	unsigned long w = pl_warn_count();

	(void)state;
	pl_warn_set_quiet(true);
	assert_int_equal(enter_from_thread(m, 0, false), -EBUSY);
	assert_one_warning(w, "in use by another thread");
	assert_int_equal(pl_enter(m, 0), 0);	/* the owner may enter again */
	pl_leave();
	assert_int_equal(enter_from_thread(m, 0, false), 0);	/* free after pl_leave() */
	assert_int_equal(pl_enter(m, 0), 0);	/* and given back at the thread's exit */
	pl_warn_set_quiet(false);
	test_machine_done(m);
}

/* Switching vCPUs gives the old one back. */
static void test_enter_switch_releases(void **state)
{
	struct pl_config cfg;
	struct pl_machine *m;

	(void)state;
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = 2;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	assert_int_equal(pl_enter(m, 1), 0);
	assert_int_equal(enter_from_thread(m, 0, true), 0);
	pl_warn_set_quiet(true);
	assert_int_equal(enter_from_thread(m, 1, true), -EBUSY);
	pl_warn_set_quiet(false);
	test_machine_done(m);
}

/* ---- 6. calls that name another machine --------------------------------------- */

static void test_cross_machine_refused(void **state)
{
	struct pl_machine *b = test_machine("v6.18");
	struct ctx c = { .m = test_machine("v6.18") };	/* entered: c.m */
	struct snapshot bsnap;
	void *pc;

	(void)state;
	/* B has a percpu chunk with a free page list and pages on its PCPs */
	assert_int_equal(pl_enter(b, 0), 0);
	pc = __alloc_percpu(64, 8);
	assert_non_null(pc);
	assert_int_equal(free_percpu(pc), 0);
	assert_int_equal(__free_pages(alloc_pages(GFP_KERNEL, 0), 0), 0);
	take_snapshot(b, &bsnap);
	assert_int_equal(pl_enter(c.m, 0), 0);
	pl_warn_set_quiet(true);
	begin(&c);

	pl_percpu_reclaim(b);
	refused(&c, "not the one the calling thread entered");
	drain_all_pages(&b->node_zones[ZONE_NORMAL]);
	refused(&c, "not a zone of the machine");
	drain_local_pages(&b->node_zones[ZONE_DMA32]);
	refused(&c, "not a zone of the machine");
	pl_vmalloc_purge(b);
	refused(&c, "not the one the calling thread entered");
	pl_vmalloc_trim_pgtables(b);
	refused(&c, "not the one the calling thread entered");
	pl_vmalloc_flush_deferred(b);
	refused(&c, "not the one the calling thread entered");
	pl_warn_set_quiet(false);
	assert_unchanged(b, &bsnap);

	assert_int_equal(pl_enter(b, 0), 0);
	pl_percpu_reclaim(b);
	assert_int_equal(pl_check_machine(b), 0);
	test_machine_done(b);
	assert_int_equal(pl_enter(c.m, 0), 0);
	test_machine_done(c.m);
}

/* ---- 7. NULL handles and out-of-range indices -------------------------------- */

static bool step_never(void *ctx, unsigned int v)
{
	(void)ctx;
	(void)v;
	return false;
}

static void test_null_handles(void **state)
{
	struct ctx c = { .m = test_machine("v6.18") };
	struct zone *zone = &c.m->node_zones[ZONE_NORMAL];
	unsigned long ev[NR_PL_VM_EVENTS];
	struct pl_design d;
	char buf[16];

	(void)state;
	pl_warn_set_quiet(true);
	begin(&c);
	assert_null(pl_machine_create(NULL));
	refused(&c, "config is NULL");
	assert_true(pl_check_machine(NULL) < 0);
	refused(&c, "NULL");
	assert_int_equal(pl_run_vcpus(NULL), -EINVAL);
	refused(&c, "bad run");
	assert_int_equal(alloc_pages_bulk(GFP_KERNEL, 4, NULL), 0);
	refused(&c, "page_array is NULL");
	/* (NULL, 0) measures the report; NULL with a size is refused */
	assert_true(pl_show_buddyinfo(c.m, NULL, 0) > 0);
	assert_int_equal(pl_show_buddyinfo(c.m, NULL, 64), -EINVAL);
	refused(&c, "buf is NULL");
	assert_int_equal(pl_show_pagetypeinfo(c.m, NULL, 64), -EINVAL);
	refused(&c, "buf is NULL");
	assert_int_equal(pl_show_zoneinfo(c.m, NULL, 64), -EINVAL);
	refused(&c, "buf is NULL");
	assert_int_equal(pl_show_vmallocinfo(c.m, NULL, 64), -EINVAL);
	refused(&c, "buf is NULL");
	assert_int_equal(pl_show_buddyinfo(NULL, buf, sizeof(buf)), -EINVAL);
	refused(&c, "machine is NULL");
	assert_int_equal(pl_enter(NULL, 0), -EINVAL);
	refused(&c, "machine is NULL");
	assert_int_equal(pl_enter(c.m, 0), 0);
	pl_events_sum(NULL, ev);
	refused(&c, "machine is NULL");
	assert_int_equal(pl_nr_free_pages(NULL), 0);
	refused(&c, "machine is NULL");
	assert_int_equal(pl_design_preset(NULL, &d), -EINVAL);
	refused(&c, "name is NULL");
	assert_int_equal(pl_design_preset("v6.18", NULL), -EINVAL);
	refused(&c, "out is NULL");
	assert_int_equal(pl_kvfree_rcu_pending(NULL), 0);
	refused(&c, "machine is NULL");
	pl_vmalloc_stats(NULL, NULL);
	refused(&c, "machine is NULL");
	pl_percpu_stats(NULL, NULL);
	refused(&c, "machine is NULL");
	drain_all_pages((struct zone *)buf);
	refused(&c, "not a zone of the machine");

	/* indices out of range */
	assert_int_equal(pl_unusable_free_index(zone, 64), 0);
	refused(&c, "order 64");
	assert_true(free_area_empty(zone, &zone->free_area[0], 100));
	refused(&c, "migratetype 100");
	assert_true(free_area_empty(zone, &zone->free_area[0], -1));
	refused(&c, "migratetype -1");
	assert_null(per_cpu_ptr((void *)0x1000, UINT_MAX));
	refused(&c, "cpu 4294967295");
	assert_int_equal(get_pageblock_migratetype(NULL), -EINVAL);
	refused(&c, "not a page of the entered machine");

	/* a vCPU run too large to finish */
	{
		struct pl_vcpu_run r = { .nr_vcpus = UINT_MAX, .nr_threads = 1, .slice = 1,
					 .step = step_never };

		assert_int_equal(pl_run_vcpus(&r), -EINVAL);
		refused(&c, "bad run");
	}
	pl_warn_set_quiet(false);
	test_machine_done(c.m);
}

/* ---- 9. gfp bits ----------------------------------------------------------------- */

static void test_gfp_bits(void **state)
{
	struct ctx c = { .m = test_machine("v6.18") };
	struct page *arr[4] = { NULL };

	(void)state;
	pl_warn_set_quiet(true);
	begin(&c);
	assert_null(alloc_pages(GFP_KERNEL | 0x80000000u, 0));
	refused(&c, "unknown bits 0x80000000");
	assert_null(alloc_pages(GFP_KERNEL | 0x1u, 2));
	refused(&c, "unknown bits 0x1");
	assert_null(alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_RECLAIMABLE, 0));
	refused(&c, "both __GFP_MOVABLE and __GFP_RECLAIMABLE");
	assert_int_equal(__get_free_pages(GFP_KERNEL | 0x200u, 0), 0);
	refused(&c, "unknown bits 0x200");
	assert_int_equal(alloc_pages_bulk(GFP_KERNEL | 0x4000000u, 4, arr), 0);
	refused(&c, "unknown bits");
	assert_null(arr[0]);
	/* red team: alloc_contig_* took both migratetype bits silently too */
	assert_null(alloc_contig_pages(4, GFP_KERNEL | __GFP_MOVABLE | __GFP_RECLAIMABLE));
	refused(&c, "both __GFP_MOVABLE and __GFP_RECLAIMABLE");
	assert_int_equal(alloc_contig_range(512, 1024, GFP_KERNEL | __GFP_MOVABLE |
					    __GFP_RECLAIMABLE), -EINVAL);
	refused(&c, "both __GFP_MOVABLE and __GFP_RECLAIMABLE");
	pl_warn_set_quiet(false);
	test_machine_done(c.m);
}

/* ---- 10. absurd values ------------------------------------------------------------- */

static void test_absurd_config(void **state)
{
	struct pl_config cfg;
	unsigned long w;

	(void)state;
	pl_warn_set_quiet(true);
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB + PAGE_SIZE;	/* not a 2 MiB multiple */
	cfg.dma32_bytes = 16 * MiB;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "multiples of 2 MiB");
	cfg.mem_bytes = 64 * MiB + 1;		/* not even a page multiple */
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "multiples of 2 MiB");
	cfg.mem_bytes = 64 * MiB;
	cfg.min_free_kbytes = ULONG_MAX;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "min_free_kbytes");
	cfg.min_free_kbytes = 0;
	cfg.tlb_flush_ns_per_cpu = ULONG_MAX;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "tlb_flush_ns_per_cpu");
	cfg.tlb_flush_ns_per_cpu = 0;
	/* the vm sysctls' own limits */
	cfg.watermark_scale_factor = 3001;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "watermark_scale_factor");
	cfg.watermark_scale_factor = 0;
	cfg.percpu_pagelist_high_fraction = 7;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "percpu_pagelist_high_fraction");
	cfg.percpu_pagelist_high_fraction = 0;
	cfg.watermark_boost_factor = 1UL << 40;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "watermark_boost_factor");
	cfg.watermark_boost_factor = 0;
	cfg.nr_cpus = UINT_MAX;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "cpus");
	cfg.nr_cpus = 1;
	cfg.design.vmap_index = (enum vmap_index)7;
	w = pl_warn_count();
	assert_null(pl_machine_create(&cfg));
	assert_one_warning(w, "vmap_index");
	pl_warn_set_quiet(false);
}

static void test_refcount_wrap(void **state)
{
	struct ctx c = { .m = test_machine("v6.18") };
	struct page *page = alloc_pages(GFP_KERNEL, 0);

	(void)state;
	set_page_count(page, INT_MAX / 2);	/* as after 2^30 get_page() calls */
	pl_warn_set_quiet(true);
	begin(&c);
	get_page(page);
	refused(&c, "_refcount would overflow");
	assert_int_equal(page_ref_count(page), INT_MAX / 2);
	pl_warn_set_quiet(false);
	set_page_count(page, 1);
	assert_int_equal(__free_pages(page, 0), 0);
	test_machine_done(c.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_free_frozen_checks),
		cmocka_unit_test(test_free_pcp_busy_checks),
		cmocka_unit_test(test_double_enter_refused),
		cmocka_unit_test(test_enter_switch_releases),
		cmocka_unit_test(test_cross_machine_refused),
		cmocka_unit_test(test_null_handles),
		cmocka_unit_test(test_gfp_bits),
		cmocka_unit_test(test_absurd_config),
		cmocka_unit_test(test_refcount_wrap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
