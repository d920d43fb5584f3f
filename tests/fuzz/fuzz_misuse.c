// SPDX-License-Identifier: MIT
/*
 * fuzz_misuse.c - API misuse in the fuzzer's language.
 *
 * FZ_MISUSE picks one public entry point and calls it with arguments that
 * are invalid by construction - the argument bytes choose which invalid
 * value (a NULL or foreign handle, an index out of range, an unknown gfp
 * bit, a vm flag the caller may not give, a reversed maple range, a page
 * inside a free or allocated block, a double deferred free, a cross-machine
 * call, an absurd machine config) - and requires what bad_end() requires:
 * the error, exactly one warning, every report and counter unchanged.
 *
 * FZ_RAW_CALL calls an entry point with the raw, unsanitised argument bytes
 * (gfp masks, orders, sizes, alignments, windows, vm flags, CPU numbers,
 * indices): the call may be valid or not. A refused call must change
 * nothing and warn at most once; an accepted one is tracked (allocations
 * join the model's live set) or undone at once. Pointers are the one thing
 * not taken raw (a random host address cannot be dereferenced by anyone):
 * they are NULL, a foreign object, or a page/address of the machine chosen
 * by the bytes.
 *
 * After either, fz_run() runs the checker and the model comparison as after
 * every operation.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_internal.h"
#include "pagelab/kvfree_rcu.h"
#include "pagelab/maple_tree.h"

/* The test's own oracle of valid gfp bits and of get_page()'s refcount bound. */
#define FZ_GFP_KNOWN                                                                          \
	(__GFP_DMA32 | __GFP_MOVABLE | __GFP_RECLAIMABLE | __GFP_HIGH | __GFP_IO | __GFP_FS |  \
	 __GFP_ZERO | __GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM | __GFP_NOWARN | __GFP_COMP | \
	 __GFP_HARDWALL | __GFP_RETRY_MAYFAIL | __GFP_NORETRY)
#define PL_MAX_REFCOUNT_TEST	(INT_MAX / 2)

/* A second machine for the cross-machine cases, made once, never entered by others. */
static struct pl_machine *other;

static struct pl_machine *other_machine(void)
{
	struct pl_this saved = pl_this;
	struct pl_config cfg;

	if (other)
		return other;
	pl_config_default(&cfg);
	cfg.mem_bytes = 4UL << 20;
	cfg.dma32_bytes = 4UL << 20;
	other = pl_machine_create(&cfg);
	pl_this = saved;
	if (!other)
		abort();
	return other;
}

static uint64_t raw64(const uint8_t *a, unsigned int n)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)a[i] << (8 * i);
	return v;
}

/* A page whose pfn the model has free (on a free list or a PCP), or NULL. */
static struct page *free_page_at(struct fz *f, uint8_t lo, uint8_t hi)
{
	long pfn = find_free_pfn(f, ((unsigned long)hi << 8 | lo) % NR_PFNS);

	return pfn < 0 ? NULL : pfn_to_page((unsigned long)pfn);
}

static bool noop_step(void *ctx, unsigned int v)
{
	(void)ctx;
	(void)v;
	return false;
}

enum {
	MU_GFP_ALLOC, MU_GFP_BULK, MU_GFP_VMALLOC, MU_GFP_PERCPU, MU_VM_FLAGS, MU_VMAP_FLAGS,
	MU_FROZEN_FREE, MU_FROZEN_INTERIOR, MU_NULL_BULK, MU_NULL_SHOW, MU_NULL_MACHINE,
	MU_ORDER_INDEX, MU_MT_INDEX, MU_PCPU_CPU, MU_CROSS_RECLAIM, MU_CROSS_DRAIN,
	MU_CROSS_PURGE, MU_ENTER_RANGE, MU_RUN_VCPUS, MU_CONFIG, MU_MAPLE_REVERSED,
	MU_DOUBLE_KVFREE, MU_DOUBLE_VFREE_ATOMIC, MU_REFCOUNT_WRAP, MU_PAGEBLOCK_MT,
	NR_MU
};

/* Bits pagelab does not define, chosen by @b. */
static gfp_t unknown_gfp(gfp_t base, uint8_t b)
{
	static const gfp_t bits[] = { 0x1u, 0x2u, 0x200u, 0x1000u, 0x8000u,
				      0x20000u, 0x80000u, 0x200000u, 0x1000000u, 0x80000000u };

	if (b & 0x80)	/* the conflicting pair instead */
		return base | __GFP_MOVABLE | __GFP_RECLAIMABLE;
	return base | bits[b % ARRAY_SIZE(bits)];
}

void op_misuse(struct fz *f, const uint8_t *a)
{
	struct zone *zone = &f->m->node_zones[ZONE_NORMAL];
	unsigned int kind = a[0] % NR_MU;
	gfp_t base = gfp_class(a[1]) & ~(gfp_t)GFP_MOVABLE_MASK;
	struct bad_call bc;
	struct page *page;
	char buf[8];

	switch (kind) {
	case MU_GFP_ALLOC:
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)alloc_pages(unknown_gfp(base, a[2]),
							     a[3] % NR_PAGE_ORDERS), 0);
		break;
	case MU_GFP_BULK: {
		struct page *arr[4] = { NULL };

		bad_begin(f, &bc);
		bad_end(f, &bc, (long)alloc_pages_bulk(unknown_gfp(base, a[2]), 4, arr), 0);
		break;
	}
	case MU_GFP_VMALLOC:
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)__vmalloc(PAGE_SIZE * (1 + a[3] % 8),
							   unknown_gfp(base, a[2])), 0);
		break;
	case MU_GFP_PERCPU:
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)__alloc_percpu_gfp(8 + a[3] % 64, 8,
								    unknown_gfp(base, a[2])), 0);
		break;
	case MU_VM_FLAGS: {
		static const unsigned long bad[] = { VM_PCPU, VM_MAP_PUT_PAGES, VM_MAP, VM_ALLOC,
						     VM_UNINITIALIZED, VM_IOREMAP, VM_SPARSE,
						     VM_KASAN, 1UL << 30, 1UL << 50 };

		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)__vmalloc_node_range(
				PAGE_SIZE * (1 + a[3] % 4), 1, VMALLOC_START, VMALLOC_END, GFP_KERNEL,
				PAGE_KERNEL, bad[a[2] % ARRAY_SIZE(bad)], NUMA_NO_NODE, NULL), 0);
		break;
	}
	case MU_VMAP_FLAGS: {
		static const unsigned long bad[] = { VM_ALLOC, VM_PCPU, VM_UNINITIALIZED, VM_NO_GUARD,
						     VM_ALLOW_HUGE_VMAP, 1UL << 40 };
		struct live *l = pick_live(f, a[3]);

		if (!l)
			break;
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)vmap(&l->page, 1, bad[a[2] % ARRAY_SIZE(bad)],
						      PAGE_KERNEL), 0);
		break;
	}
	case MU_FROZEN_FREE:	/* a page free in the buddy or on a PCP list */
		page = free_page_at(f, a[2], a[3]);
		if (!page)
			break;
		bad_begin(f, &bc);
		bad_end(f, &bc, free_frozen_pages(page, 0), -EINVAL);
		break;
	case MU_FROZEN_INTERIOR: {	/* a frozen page inside another live block */
		struct live *l = pick_live(f, a[2]);
		int refs;

		if (!l || !l->order || l->compound)
			break;
		page = l->page + 1 + a[3] % ((1UL << l->order) - 1);
		refs = page_ref_count(l->page);
		bad_begin(f, &bc);
		bad_end(f, &bc, free_frozen_pages(page, 0), -EINVAL);
		FZ_ASSERT(f, page_ref_count(l->page) == refs);
		break;
	}
	case MU_NULL_BULK:
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)alloc_pages_bulk(GFP_KERNEL, 1 + a[2] % 8, NULL), 0);
		break;
	case MU_NULL_SHOW: {
		long (*const show[])(struct pl_machine *, char *, size_t) = {
			pl_show_buddyinfo, pl_show_pagetypeinfo, pl_show_zoneinfo, pl_show_vmallocinfo,
			pl_show_vmstat };

		/* A NULL buffer with a size (NULL, 0 is the size query, not misuse). */
		bad_begin(f, &bc);
		bad_end(f, &bc, show[a[2] % 5](a[3] & 1 ? NULL : f->m, a[3] & 1 ? buf : NULL,
					       a[3] & 1 ? sizeof(buf) : 1 + (size_t)a[4]), -EINVAL);
		break;
	}
	case MU_NULL_MACHINE: {
		unsigned long ev[NR_PL_VM_EVENTS];

		bad_begin(f, &bc);
		switch (a[2] % 6) {
		case 0: bad_end(f, &bc, pl_check_machine(NULL), -EINVAL); break;
		case 1: bad_end(f, &bc, (long)(uintptr_t)pl_machine_create(NULL), 0); break;
		case 2: bad_end(f, &bc, (long)pl_nr_free_pages(NULL), 0); break;
		case 3: pl_events_sum(NULL, ev); bad_end(f, &bc, 0, 0); break;
		case 4: bad_end(f, &bc, pl_run_vcpus(NULL), -EINVAL); break;
		default: bad_end(f, &bc, pl_design_preset(NULL, NULL), -EINVAL); break;
		}
		break;
	}
	case MU_ORDER_INDEX:
		bad_begin(f, &bc);
		bad_end(f, &bc, pl_unusable_free_index(zone, NR_PAGE_ORDERS + a[2]), 0);
		break;
	case MU_MT_INDEX:
		bad_begin(f, &bc);
		bad_end(f, &bc, free_area_empty(zone, &zone->free_area[a[3] % NR_PAGE_ORDERS],
						a[2] & 1 ? -1 - a[2] : MIGRATE_TYPES + a[2]), 1);
		break;
	case MU_PCPU_CPU:
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)per_cpu_ptr((void *)VMALLOC_START,
							     FZ_NR_CPUS + (unsigned int)raw64(a + 2, 4) % (UINT_MAX - FZ_NR_CPUS)), 0);
		break;
	case MU_CROSS_RECLAIM:
		other_machine();
		bad_begin(f, &bc);
		pl_percpu_reclaim(other);
		bad_end(f, &bc, 0, 0);
		break;
	case MU_CROSS_DRAIN:
		other_machine();
		bad_begin(f, &bc);
		if (a[2] & 1)
			drain_all_pages(&other->node_zones[a[3] % MAX_NR_ZONES]);
		else
			drain_local_pages(&other->node_zones[a[3] % MAX_NR_ZONES]);
		bad_end(f, &bc, 0, 0);
		break;
	case MU_CROSS_PURGE:
		other_machine();
		bad_begin(f, &bc);
		switch (a[2] % 3) {
		case 0: pl_vmalloc_purge(other); break;
		case 1: pl_vmalloc_trim_pgtables(other); break;
		default: pl_vmalloc_flush_deferred(other); break;
		}
		bad_end(f, &bc, 0, 0);
		break;
	case MU_ENTER_RANGE:
		bad_begin(f, &bc);
		bad_end(f, &bc, pl_enter(a[2] & 1 ? NULL : f->m,
					 FZ_NR_CPUS + (unsigned int)raw64(a + 3, 4) % (UINT_MAX - FZ_NR_CPUS)),
			-EINVAL);
		break;
	case MU_RUN_VCPUS: {
		struct pl_vcpu_run r = { .nr_vcpus = PL_MAX_VCPUS + 1 + (unsigned int)raw64(a + 2, 3),
					 .nr_threads = 1, .slice = 1, .step = noop_step };

		if (a[5] & 1)
			r.nr_threads = PL_MAX_VCPU_THREADS + 1 + a[6];
		bad_begin(f, &bc);
		bad_end(f, &bc, pl_run_vcpus(&r), -EINVAL);
		break;
	}
	case MU_CONFIG: {
		struct pl_config cfg;

		pl_config_default(&cfg);
		cfg.mem_bytes = 4UL << 20;
		cfg.dma32_bytes = 4UL << 20;
		switch (a[2] % 6) {
		case 0: cfg.mem_bytes += 1 + raw64(a + 3, 2) % ((2UL << 20) - 1); break;
		case 1: cfg.min_free_kbytes = (cfg.mem_bytes >> 10) + 1 + raw64(a + 3, 4); break;
		case 2: cfg.tlb_flush_ns_per_cpu = 1000000001UL + raw64(a + 3, 4); break;
		case 3: cfg.nr_cpus = PL_MAX_VCPUS + 1 + (unsigned int)raw64(a + 3, 3); break;
		case 4: cfg.debug = a[3] & 1 ? -1 - a[4] : 4 + a[4]; break;
		default: cfg.design.vmap_index = (enum vmap_index)(2 + a[3]); break;
		}
		bad_begin(f, &bc);
		bad_end(f, &bc, (long)(uintptr_t)pl_machine_create(&cfg), 0);
		break;
	}
	case MU_MAPLE_REVERSED: {
		struct maple_tree mt;
		unsigned long last = raw64(a + 2, 4), first = last + 1 + a[6];

		mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
		/* An armed PL_FAULT_MAPLE_NODE site may fail the setup store itself. */
		if (mtree_store_range(&mt, 10, 20, (void *)0x11, GFP_KERNEL)) {
			FZ_ASSERT(f, f->faults_on);
			FZ_ASSERT(f, mt_validate(&mt) == 0 && mtree_load(&mt, 15) == NULL);
			mtree_destroy(&mt);
			break;
		}
		{
			MA_STATE(mas, &mt, first, last);

			bad_begin(f, &bc);
			if (a[7] & 1) {
				bad_end(f, &bc, mas_preallocate(&mas, (void *)0x21, GFP_KERNEL), -EINVAL);
			} else {
				mas_store_prealloc(&mas, (void *)0x21);
				bad_end(f, &bc, mas.error, -EINVAL);
			}
		}
		FZ_ASSERT(f, mt_validate(&mt) == 0);
		FZ_ASSERT(f, mtree_load(&mt, 15) == (void *)0x11);
		mtree_destroy(&mt);
		break;
	}
	case MU_DOUBLE_KVFREE:
	case MU_DOUBLE_VFREE_ATOMIC: {
		/* An area of our own: queued once (accepted), then a second time. */
		void *p = vmalloc(PAGE_SIZE * (1 + a[2] % 4));

		if (!p)
			break;
		f->sys_op = true;
		FZ_ASSERT(f, (kind == MU_DOUBLE_KVFREE ? kvfree_rcu_mightsleep(p) : vfree_atomic(p)) == 0);
		/*
		 * The queue holds the area (and kvfree_rcu a block page the
		 * model does not count): bad_begin() would run the queue, so
		 * check the refusal, the one warning and the area still there.
		 */
		bc.warns = pl_warn_count();
		switch (a[3] % 4) {
		case 0: FZ_ASSERT(f, kvfree_rcu_mightsleep(p) == -EINVAL); break;
		case 1: FZ_ASSERT(f, vfree_atomic(p) == -EINVAL); break;
		case 2: FZ_ASSERT(f, vfree(p) == -EINVAL); break;
		default: FZ_ASSERT(f, vrealloc(p, PAGE_SIZE, GFP_KERNEL) == NULL); break;
		}
		FZ_ASSERT(f, pl_warn_count() == bc.warns + 1);
		/*
		 * vfree() and vrealloc() run the vfree_atomic() queue before
		 * refusing; a kvfree_rcu() batch is freed on liburcu's call_rcu
		 * thread once a grace period ends, which may already have been.
		 */
		FZ_ASSERT(f, find_vm_area(p) != NULL || kind == MU_DOUBLE_KVFREE || a[3] % 4 >= 2);
		if (kind == MU_DOUBLE_KVFREE)
			kvfree_rcu_barrier();
		else
			pl_vmalloc_flush_deferred(f->m);
		FZ_ASSERT(f, find_vm_area(p) == NULL);
		break;
	}
	case MU_REFCOUNT_WRAP: {
		struct live *l = pick_live(f, a[2]);
		int refs;

		if (!l)
			break;
		refs = page_ref_count(l->page);
		set_page_count(l->page, PL_MAX_REFCOUNT_TEST);
		bad_begin(f, &bc);
		get_page(l->page);
		bad_end(f, &bc, page_ref_count(l->page), PL_MAX_REFCOUNT_TEST);
		set_page_count(l->page, refs);
		break;
	}
	default:	/* MU_PAGEBLOCK_MT: a page outside the machine */
		bad_begin(f, &bc);
		bad_end(f, &bc, get_pageblock_migratetype(a[2] & 1 ? NULL :
				f->m->mem_map + NR_PFNS + raw64(a + 3, 2)), -EINVAL);
		break;
	}
}

/* ---- raw calls -------------------------------------------------------------- */

/* After a raw call: refused calls warn at most once and change nothing. */
static void raw_refused(struct fz *f, struct bad_call *bc)
{
	if (pl_warn_count() > bc->warns + 1)
		fz_fail(f, "a refused raw call gave %lu warnings", pl_warn_count() - bc->warns);
}

void op_raw_call(struct fz *f, const uint8_t *a)
{
	gfp_t gfp = (gfp_t)raw64(a + 1, 4);
	struct bad_call bc;

	f->sys_op = true;
	bc.warns = pl_warn_count();
	switch (a[0] % 8) {
	case 0: {	/* alloc_pages(raw gfp, raw order) */
		unsigned int order = a[5];
		struct page *page = alloc_pages(gfp, order);

		if (!page)
			return raw_refused(f, &bc);
		/* accepted: the arguments were valid after all */
		FZ_ASSERT(f, order <= MAX_PAGE_ORDER && !(gfp & ~(gfp_t)FZ_GFP_KNOWN) &&
			     (gfp & GFP_MOVABLE_MASK) != GFP_MOVABLE_MASK);
		add_live(f, page, order, (gfp & __GFP_COMP) && order);
		break;
	}
	case 1: {	/* __vmalloc_node_range(raw size, align, window, gfp, flags) */
		unsigned long size = raw64(a + 5, 3) << (a[7] % 8);
		unsigned long align = 1UL << (a[6] % 64);
		unsigned long start = VMALLOC_START + ((unsigned long)(a[7] & 0xf0) << 36);
		unsigned long end = a[0] & 0x80 ? VMALLOC_END : start + ((unsigned long)a[6] << 20);
		unsigned long flags = (unsigned long)a[5] << (a[0] >> 3 & 15);
		void *p = __vmalloc_node_range(size, align, start, end, gfp, PAGE_KERNEL, flags,
					       NUMA_NO_NODE, NULL);

		if (!p)
			return raw_refused(f, &bc);
		FZ_ASSERT(f, vfree(p) == 0);
		break;
	}
	case 2: {	/* __alloc_percpu_gfp(raw size, raw align, raw gfp) */
		void *p = __alloc_percpu_gfp(raw64(a + 5, 2), 1UL << (a[7] % 16), gfp);

		if (!p)
			return raw_refused(f, &bc);
		FZ_ASSERT(f, free_percpu(p) == 0);
		break;
	}
	case 3: {	/* reads with raw indices */
		struct zone *zone = a[5] % 3 == 2 ? NULL : &f->m->node_zones[a[5] % 3];

		(void)pl_unusable_free_index(zone, a[6]);
		if (zone)
			(void)free_area_empty(zone, &zone->free_area[a[7] % NR_PAGE_ORDERS],
					      (int)(int8_t)a[1]);
		(void)per_cpu_ptr((void *)VMALLOC_START, (unsigned int)raw64(a + 2, 4));
		(void)get_pageblock_migratetype(f->m->mem_map + raw64(a + 5, 2) % (2 * NR_PFNS));
		break;
	}
	case 4: {	/* frees of free pages with a raw order: always refused */
		struct page *page = free_page_at(f, a[5], a[6]);

		if (!page)
			return;
		bad_begin(f, &bc);
		if (a[7] & 1)
			bad_end(f, &bc, free_frozen_pages(page, a[1]), -EINVAL);
		else
			bad_end(f, &bc, __free_pages(page, a[1]), -EINVAL);
		break;
	}
	case 5: {	/* reports into a raw-sized buffer */
		static char buf[256];
		long (*const show[])(struct pl_machine *, char *, size_t) = {
			pl_show_buddyinfo, pl_show_pagetypeinfo, pl_show_zoneinfo, pl_show_vmallocinfo,
			pl_show_vmstat };
		long n = show[a[5] % 5](f->m, buf, a[6]);

		FZ_ASSERT(f, n == -ENOSPC || (n >= 0 && n <= a[6]) || n == -EINVAL);
		break;
	}
	case 6: {	/* pl_enter(raw cpu), then back */
		unsigned int cpu = (unsigned int)raw64(a + 1, 4);
		unsigned int here = pl_this.cpu->id;

		if (pl_enter(f->m, cpu))
			raw_refused(f, &bc);
		FZ_ASSERT(f, pl_enter(f->m, here) == 0);
		break;
	}
	default: {	/* pl_run_vcpus(raw counts) with a step that ends at once */
		struct pl_vcpu_run r = { .nr_vcpus = (unsigned int)raw64(a + 1, 2),
					 .nr_threads = a[5] % 4, .slice = a[6], .step = noop_step };

		if (pl_run_vcpus(&r))
			raw_refused(f, &bc);
		break;
	}
	}
}

void fz_misuse_end(void)
{
	if (other) {
		struct pl_this saved = pl_this;

		pl_machine_destroy(other);
		pl_this = saved;
		other = NULL;
	}
}
