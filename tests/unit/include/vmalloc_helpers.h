/* SPDX-License-Identifier: MIT */
/*
 * vmalloc_helpers.h - shared pieces of the test_vmalloc_* tests: machines,
 * the end-of-test sequence (everything freed, purged, page tables trimmed:
 * the space is one free area again, the checker is clean and the page
 * allocator fully coalesced), and warning assertions.
 */
#ifndef PAGELAB_TEST_VMALLOC_HELPERS_H
#define PAGELAB_TEST_VMALLOC_HELPERS_H

#include "helpers.h"
#include "vmalloc/vmap_area.h"

/*
 * A 64 MiB machine with @cpus vCPUs; TLB flushes cost nothing. With
 * PAGELAB_VM_DESIGN set (CTest runs every vmalloc test again with
 * PAGELAB_VM_DESIGN=maple), "v6.18" means that preset instead.
 */
static inline struct pl_machine *vm_test_machine(unsigned int cpus, const char *design)
{
	const char *over = getenv("PAGELAB_VM_DESIGN");
	struct pl_config cfg;
	struct pl_machine *m;

	if (over && *over && !strcmp(design, "v6.18"))
		design = over;
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = cpus;
	cfg.debug = 1;
	cfg.tlb_flush_ns_per_cpu = 0;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	return m;
}

/*
 * A vmalloc of @size the vmap_area index serves, for tests of its lazy
 * freeing and pools: with vmap_pcpu_bump, small page-aligned vmallocs come
 * from the CPU's bump chunk instead, so ask for 128 KiB alignment there (past what the chunks serve).
 */
static inline void *vm_index_vmalloc(struct pl_machine *m, unsigned long size)
{
	if (m->config.design.vmap_pcpu_bump)
		return __vmalloc_node(size, 32 * PAGE_SIZE, GFP_KERNEL, NUMA_NO_NODE);
	return vmalloc(size);
}

static inline unsigned long vm_event(struct pl_machine *m, enum pl_vm_event e)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[e];
}

/* Call after freeing everything: the space and the page allocator are as at boot. */
/*
 * Everything is freed: purge and trim; then the space is one free area with
 * no pages or tables, and the page allocator is fully coalesced.
 */
static inline void vm_assert_whole(struct pl_machine *m)
{
	struct pl_vmalloc_stats st;

	pl_vmalloc_purge(m);
	pl_vmalloc_trim_pgtables(m);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 0);
	assert_int_equal(st.nr_lazy, 0);
	assert_int_equal(st.nr_pooled, 0);
	assert_int_equal(st.nr_free, 1);
	assert_int_equal(st.lazy_pages, 0);
	assert_int_equal(st.vmalloc_pages, 0);
	assert_int_equal(st.pgtable_pages, 0);
	assert_fully_coalesced(m);
}

static inline void vm_test_done(struct pl_machine *m)
{
	assert_int_equal(pl_enter(m, 0), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	vm_assert_whole(m);
	test_machine_done(m);	/* pl_check_machine(): zones + vmalloc */
}

/* What bad input must not change: vmalloc and percpu counters, free pages, vmallocinfo. */
struct vm_snap {
	struct pl_vmalloc_stats st;
	struct pl_percpu_stats ps;
	unsigned long free_pages;
	char info[8192];
};

static inline void vm_snap_take(struct pl_machine *m, struct vm_snap *s)
{
	memset(s, 0, sizeof(*s));
	pl_vmalloc_stats(m, &s->st);
	pl_percpu_stats(m, &s->ps);
	s->free_pages = pl_nr_free_pages(m);
	assert_true(pl_show_vmallocinfo(m, s->info, sizeof(s->info)) >= 0);
}

/* Nothing in @before changed, and the checker (zones, vmalloc, percpu) is clean. */
static inline void vm_assert_unchanged(struct pl_machine *m, const struct vm_snap *before)
{
	static struct vm_snap now;

	vm_snap_take(m, &now);
	assert_memory_equal(&now.st, &before->st, sizeof(now.st));
	assert_memory_equal(&now.ps, &before->ps, sizeof(now.ps));
	assert_int_equal(now.free_pages, before->free_pages);
	assert_string_equal(now.info, before->info);
	assert_int_equal(pl_check_machine(m), 0);
}

/* Exactly one warning since @before, and it says @what. */
static inline void assert_warned(unsigned long before, const char *what)
{
	char last[256];

	assert_int_equal(pl_warn_count(), before + 1);
	pl_warn_last(last, sizeof(last));
	if (!strstr(last, what))
		fail_msg("warning '%s' does not say '%s'", last, what);
}

#endif /* PAGELAB_TEST_VMALLOC_HELPERS_H */
