// SPDX-License-Identifier: MIT
/*
 * test_vmap_index_maple.c - seed 004's maple index for vmap areas
 * (vmap_index=maple): the object size, the four fit types as tree stores,
 * windows and alignment (the lowest aligned fit, which the rbtree's
 * size + align - 1 descent may skip), the busy erase refusing a mid-area
 * address, and the retry queue under maple node fault injection
 * (PL_FAULT_MAPLE_NODE): parked free areas and unindexed busy areas are
 * never lost, never handed out twice, counted by the checker, and merged
 * once nodes can be had again. Every test ends with the space as at boot.
 */
#include "vmalloc_helpers.h"

#define S VMALLOC_START
#define P PAGE_SIZE

static struct vmap_area *area(unsigned long size, unsigned long align, unsigned long vstart,
			      unsigned long vend)
{
	int err;

	return alloc_vmap_area(size, align, vstart, vend, NUMA_NO_NODE, GFP_KERNEL | __GFP_NOWARN,
			       0, NULL, &err);
}

static unsigned long nr_free_areas(struct vmap_space *vs)
{
	struct list_head *pos;
	unsigned long n = 0;

	list_for_each(pos, &vs->free.head)
		n++;
	return n;
}

static struct vmap_area *free_area_at(struct vmap_space *vs, unsigned long i)
{
	struct list_head *pos = vs->free.head.next;

	while (i--)
		pos = pos->next;
	return list_entry(pos, struct vmap_area, list);
}

static void set_maple_faults(struct pl_machine *m, unsigned int probability, unsigned long interval)
{
	struct pl_fault_attr a;

	pl_fault_attr_default(&a);
	a.probability = probability;
	a.interval = interval ? interval : 1;
	a.times = -1;
	a.verbose = 0;
	assert_int_equal(pl_fault_set(m, PL_FAULT_MAPLE_NODE, &a), 0);
}

static void test_size_and_ops(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");

	(void)state;
	assert_true(sizeof(struct vmap_area) <= 48);
	assert_ptr_equal(m->vmap->ops, &vmap_index_maple_ops);
	assert_int_equal(m->vmap->ops->va_objsize, sizeof(struct vmap_area));
	assert_true(vmap_index_rbtree_ops.va_objsize >= 72);
	vm_test_done(m);
}

/* FL, LE, RE and NE on the tree, the free list following each. */
static void test_fit_types(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *le, *ne, *re, *fl;

	(void)state;
	le = area(4 * P, P, S, VMALLOC_END);			/* LE */
	assert_int_equal(le->va_start, S);
	assert_int_equal(free_area_at(vs, 0)->va_start, S + 4 * P);
	ne = area(2 * P, P, S + 16 * P, VMALLOC_END);		/* NE: two free areas */
	assert_int_equal(ne->va_start, S + 16 * P);
	assert_int_equal(nr_free_areas(vs), 2);
	assert_int_equal(free_area_at(vs, 0)->va_end, S + 16 * P);
	assert_int_equal(free_area_at(vs, 1)->va_start, S + 18 * P);
	re = area(3 * P, P, S + 13 * P, S + 16 * P);		/* RE */
	assert_int_equal(re->va_start, S + 13 * P);
	assert_int_equal(free_area_at(vs, 0)->va_end, S + 13 * P);
	fl = area(9 * P, P, S, VMALLOC_END);			/* FL: the low area goes */
	assert_int_equal(fl->va_start, S + 4 * P);
	assert_int_equal(nr_free_areas(vs), 1);
	assert_int_equal(pl_check_vmalloc(m), 0);

	/* frees: new area inside a run, grow up, grow down, merge both ways */
	free_vmap_area(re);
	assert_int_equal(nr_free_areas(vs), 2);
	free_vmap_area(le);
	assert_int_equal(nr_free_areas(vs), 3);
	free_vmap_area(fl);
	assert_int_equal(nr_free_areas(vs), 2);
	assert_int_equal(pl_check_vmalloc(m), 0);
	free_vmap_area(ne);
	assert_int_equal(nr_free_areas(vs), 1);
	vm_test_done(m);
}

/*
 * Windows: the search stays inside [vstart, vend), takes the lowest fit
 * there even inside a free area that began below vstart, and fails
 * without changing anything when the window holds no fit.
 */
static void test_windows(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *a, *b, *c;

	(void)state;
	a = area(8 * P, P, S + 100 * P, S + 200 * P);
	assert_int_equal(a->va_start, S + 100 * P);
	/* [S+100P, S+108P) is busy: a window over it gets the first page past it */
	b = area(4 * P, P, S + 104 * P, S + 120 * P);
	assert_int_equal(b->va_start, S + 108 * P);
	/* a window that only the busy areas cover: no fit, nothing changed */
	assert_null(area(P, P, S + 100 * P, S + 112 * P));
	assert_int_equal(nr_free_areas(vs), 2);
	/* a window exactly as large as a free gap between busy areas */
	c = area(12 * P, P, S + 112 * P, S + 124 * P);
	assert_int_equal(c->va_start, S + 112 * P);
	assert_null(area(2 * P, P, S + 123 * P, S + 125 * P)); /* straddles c's end */
	assert_int_equal(pl_check_vmalloc(m), 0);
	free_vmap_area(b);
	free_vmap_area(a);
	free_vmap_area(c);
	vm_test_done(m);
}

/*
 * Alignment: below an aligned fit in a large area lie gaps too small for
 * size + align - 1 but holding an aligned fit; the maple search takes the
 * lowest of them.
 */
static void test_lowest_aligned_fit(void **state)
{
	const unsigned long A = 16 * P;
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_area *a, *t1, *b, *t2, *c, *x;

	(void)state;
	assert_true(IS_ALIGNED(S, A));
	/*
	 *   S        S+8P  S+12P       S+32P  S+36P     S+48P
	 *   | busy a | gap | busy b     | gap  | busy c  | free ...
	 * A 4-page request aligned to 16 pages does not fit the first gap
	 * (S+16P is past its end), fits the second exactly; the rbtree's
	 * size + align - 1 descent would skip both and take S+48P.
	 */
	a = area(8 * P, P, S, VMALLOC_END);
	t1 = area(4 * P, P, S, VMALLOC_END);
	b = area(20 * P, P, S, VMALLOC_END);
	t2 = area(4 * P, P, S, VMALLOC_END);
	c = area(12 * P, P, S, VMALLOC_END);
	assert_int_equal(t1->va_start, S + 8 * P);
	assert_int_equal(t2->va_start, S + 32 * P);
	assert_int_equal(c->va_end, S + 48 * P);
	free_vmap_area(t1);
	free_vmap_area(t2);
	x = area(4 * P, A, S, VMALLOC_END);
	assert_non_null(x);
	assert_int_equal(x->va_start, S + 32 * P);
	/* the same request again: now the lowest aligned fit is past c */
	t2 = area(4 * P, A, S, VMALLOC_END);
	assert_int_equal(t2->va_start, S + 48 * P);
	assert_int_equal(pl_check_vmalloc(m), 0);
	free_vmap_area(x);
	free_vmap_area(t2);
	free_vmap_area(a);
	free_vmap_area(b);
	free_vmap_area(c);
	vm_test_done(m);
}

/* The one-erase vfree path refuses an address inside an area and keeps it. */
static void test_busy_erase_refuses_inside(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_area *a = area(4 * P, P, S, VMALLOC_END), *got;

	(void)state;
	assert_null(find_unlink_vmap_area(a->va_start + P, false));
	assert_ptr_equal(find_vmap_area(a->va_start + 2 * P), a);
	assert_int_equal(pl_check_vmalloc(m), 0);
	got = find_unlink_vmap_area(a->va_start, false);
	assert_ptr_equal(got, a);
	assert_null(find_vmap_area(a->va_start));
	spin_lock(&m->vmap->free.lock);
	m->vmap->ops->merge_or_add(m->vmap, &m->vmap->free, got);
	spin_unlock(&m->vmap->free.lock);
	vm_test_done(m);
}

/*
 * The retry queue: with every maple node allocation failing, frees park
 * their areas (or merge when the reserve suffices), allocations either
 * succeed or fail cleanly, new busy areas may stay unindexed and are still
 * found; the checker's partition holds at every step. Once nodes come back
 * the purge merges what was parked: one free area again.
 */
static void test_retry_queue_under_node_faults(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *live[400];
	unsigned long parked_before, unindexed = 0;
	int nr = 0;
	struct pl_rng rng;

	(void)state;
	pl_warn_set_quiet(true);
	pl_rng_seed(&rng, 7);
	for (nr = 0; nr < 400; nr++) {
		live[nr] = area((1 + pl_rng_below(&rng, 8)) * P, P, S, VMALLOC_END);
		assert_non_null(live[nr]);
	}
	/* punch holes so that frees create new free areas inside runs */
	for (int i = 0; i < 400; i += 2) {
		free_vmap_area(live[i]);
		live[i] = NULL;
	}
	parked_before = vm_event(m, PL_EV_VMAP_MT_PARKED);
	set_maple_faults(m, 100, 1);
	for (int step = 0; step < 600; step++) {
		int i = (int)pl_rng_below(&rng, 400);

		if (live[i]) {
			free_vmap_area(live[i]);
			live[i] = NULL;
		} else {
			live[i] = area((1 + pl_rng_below(&rng, 8)) * P, P, S, VMALLOC_END);
			if (live[i] && (live[i]->flags & VMAP_UNINDEXED)) {
				unindexed++;
				/* not in the tree, still found (list walk) */
				assert_ptr_equal(find_vmap_area(live[i]->va_start + P / 2), live[i]);
			}
		}
		if (step % 50 == 0)
			assert_int_equal(pl_check_vmalloc(m), 0);
	}
	assert_true(vm_event(m, PL_EV_VMAP_MT_PARKED) > parked_before);
	assert_false(list_empty(vs->ops->parked(&vs->free)) && unindexed == 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	set_maple_faults(m, 0, 1);
	for (int i = 0; i < 400; i++)
		if (live[i])
			free_vmap_area(live[i]);
	pl_vmalloc_purge(m);
	assert_true(list_empty(vs->ops->parked(&vs->free)));
	pl_warn_set_quiet(false);
	vm_test_done(m);
}

/* Every n-th node allocation fails, over a random workload: never a lost area. */
static void test_every_nth_node_fault(void **state)
{
	(void)state;
	pl_warn_set_quiet(true);
	for (unsigned long n = 1; n <= 7; n += 3) {
		struct pl_machine *m = vm_test_machine(2, "maple");
		struct vmap_area *live[128] = { 0 };
		struct pl_rng rng;

		pl_rng_seed(&rng, n);
		set_maple_faults(m, 100, n);
		for (int step = 0; step < 3000; step++) {
			int i = (int)pl_rng_below(&rng, 128);
			unsigned long align = pl_rng_below(&rng, 4) ? P : 8 * P;

			pl_enter(m, (unsigned int)pl_rng_below(&rng, 2));
			if (live[i]) {
				if (pl_rng_below(&rng, 2)) {
					free_vmap_area(live[i]);
				} else {
					struct vmap_area *va = find_unlink_vmap_area(live[i]->va_start,
										     false);

					assert_ptr_equal(va, live[i]);
					free_vmap_area_noflush(va);
				}
				live[i] = NULL;
			} else {
				live[i] = area((1 + pl_rng_below(&rng, 16)) * P, align, S, VMALLOC_END);
			}
			if (step % 300 == 0)
				assert_int_equal(pl_check_vmalloc(m), 0);
		}
		set_maple_faults(m, 0, 1);
		pl_enter(m, 0);
		for (int i = 0; i < 128; i++)
			if (live[i])
				free_vmap_area(live[i]);
		vm_test_done(m);
	}
	pl_warn_set_quiet(false);
}

/*
 * The purge hands the maple index its lazy areas as one list: sorted and
 * coalesced first (shuffled here, with gaps and with touching neighbours),
 * the free space ends up exactly as merging them one by one would leave it.
 */
static void test_purge_merge_list(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *v[300];
	struct pl_rng rng;

	(void)state;
	pl_rng_seed(&rng, 3);
	for (int i = 0; i < 300; i++)
		v[i] = area((1 + pl_rng_below(&rng, 4)) * P, P, S, VMALLOC_END);
	for (int i = 299; i > 0; i--) {		/* shuffle */
		int j = (int)pl_rng_below(&rng, (uint64_t)i + 1);
		struct vmap_area *t = v[i];

		v[i] = v[j];
		v[j] = t;
	}
	/* every third one stays busy: the rest go lazily, out of order */
	for (int i = 0; i < 300; i++) {
		if (i % 3 == 0)
			continue;
		spin_lock(&addr_to_node(vs, v[i]->va_start)->busy.lock);
		vs->ops->unlink(&addr_to_node(vs, v[i]->va_start)->busy, v[i]);
		spin_unlock(&addr_to_node(vs, v[i]->va_start)->busy.lock);
		free_vmap_area_noflush(v[i]);
	}
	purge_vmap_area_lazy(vs);
	assert_int_equal(pl_check_vmalloc(m), 0);
	assert_true(nr_free_areas(vs) <= 101);
	for (int i = 0; i < 300; i += 3)
		free_vmap_area(v[i]);
	vm_test_done(m);
}

/* ---- vmap_pcpu_bump ------------------------------------------------------ */

/* A machine large enough to fill a 64 MiB chunk with one-page vmallocs. */
static struct pl_machine *bump_machine(unsigned int cpus)
{
	struct pl_config cfg;
	struct pl_machine *m;

	pl_config_default(&cfg);
	cfg.mem_bytes = 256 * MiB;
	cfg.dma32_bytes = 64 * MiB;
	cfg.nr_cpus = cpus;
	cfg.debug = 1;
	cfg.tlb_flush_ns_per_cpu = 0;
	assert_int_equal(pl_design_preset("maple", &cfg.design), 0);
	assert_true(cfg.design.vmap_pcpu_bump);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	assert_int_equal(pl_enter(m, 0), 0);
	return m;
}

/*
 * Bump areas: found from any address inside them (back-pointers), refused
 * when freed from the middle, gone once freed; an aligned vmalloc still
 * goes to the index and is found through the fast reject's fallback.
 */
static void test_bump_lookup(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "maple");
	char *a, *b, *c, *a3;
	unsigned long allocs = vm_event(m, PL_EV_VMAP_BUMP_ALLOC);
	struct pl_vmalloc_stats st;

	(void)state;
	pl_warn_set_quiet(true);
	a = vmalloc(3 * P);
	b = vmalloc(P);
	c = __vmalloc_node(P, 32 * P, GFP_KERNEL, NUMA_NO_NODE);	/* not for the bump */
	assert_non_null(a);
	assert_non_null(b);
	assert_non_null(c);
	assert_int_equal(vm_event(m, PL_EV_VMAP_BUMP_ALLOC), allocs + 2);
	assert_int_equal((unsigned long)b, (unsigned long)a + 4 * P);	/* bumped: a, guard, b */
	assert_ptr_equal(find_vm_area(a + 2 * P + 17)->addr, a);
	assert_ptr_equal(find_vm_area(b)->addr, b);
	assert_ptr_equal(find_vm_area(c)->addr, c);
	assert_null(find_vm_area(b + 2 * P));		/* past b and its guard: nothing yet */
	assert_int_equal(vfree(a + P), -EINVAL);	/* the middle of an area */
	assert_non_null(find_vm_area(a));
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 3);		/* the chunk is not an area of its own */
	assert_int_equal(pl_check_vmalloc(m), 0);
	{	/* the checker sees a bump area grown past its back-pointers */
		struct vmap_area *va = find_vmap_area((unsigned long)b);

		assert_true(va->flags & VMAP_BUMP);
		va->va_end += P;
		assert_true(pl_check_vmalloc(m) > 0);
		va->va_end -= P;
		assert_int_equal(pl_check_vmalloc(m), 0);
	}
	/* allocated on CPU 1, freed on CPU 0 */
	a3 = a;
	assert_int_equal(pl_enter(m, 1), 0);
	a = vmalloc(P);
	assert_int_equal(pl_enter(m, 0), 0);
	assert_int_equal(vfree(a), 0);
	assert_int_equal(vfree(b), 0);
	assert_null(find_vm_area(b));
	assert_int_equal(vfree(b), -EINVAL);		/* twice */
	assert_int_equal(vfree(c), 0);
	/* seed 004's overlay is for page-aligned areas: 32 KiB goes to the index */
	c = __vmalloc_node(5 * P, 8 * P, GFP_KERNEL, NUMA_NO_NODE);
	assert_true(IS_ALIGNED((unsigned long)c, 8 * P));
	assert_false(find_vmap_area((unsigned long)c)->flags & VMAP_BUMP);
	assert_int_equal(vfree(c), 0);
	assert_int_equal(vfree(a3), 0);
	pl_warn_set_quiet(false);
	vm_test_done(m);
}

/*
 * pagelab's own vmap_bump_wide_align (preset maple+wide-align) bumps
 * alignments up to 64 KiB, aligned; beyond that the index serves.
 */
static void test_bump_wide_align(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "maple+wide-align");
	char *c, *d;

	(void)state;
	c = __vmalloc_node(5 * P, 8 * P, GFP_KERNEL, NUMA_NO_NODE);
	d = __vmalloc_node(P, 32 * P, GFP_KERNEL, NUMA_NO_NODE);
	assert_true(IS_ALIGNED((unsigned long)c, 8 * P));
	assert_true(find_vmap_area((unsigned long)c)->flags & VMAP_BUMP);
	assert_false(find_vmap_area((unsigned long)d)->flags & VMAP_BUMP);
	assert_int_equal(pl_check_vmalloc(m), 0);
	assert_int_equal(vfree(c), 0);
	assert_int_equal(vfree(d), 0);
	assert_int_equal(pl_check_vmalloc(m), 0);
	vm_test_done(m);
}

/*
 * vfree() and vunmap() look the busy index up once, as the kernel's
 * find_unlink_vmap_area() does, under every index; a refused free looks
 * again only to word its warning, and changes nothing.
 */
static void test_vfree_one_lookup(void **state)
{
	static const char *const designs[] = { "v6.18", "maple-index", "maple" };

	(void)state;
	for (size_t i = 0; i < sizeof(designs) / sizeof(designs[0]); i++) {
		struct pl_machine *m = vm_test_machine(1, designs[i]);
		struct page *pg = alloc_page(GFP_KERNEL);
		char *a = vmalloc(P), *b = vmalloc(16 * P);
		void *v = vmap(&pg, 1, VM_MAP, PAGE_KERNEL);
		unsigned long before = vm_event(m, PL_EV_VMAP_BUSY_LOOKUP);

		assert_int_equal(vfree(a), 0);
		assert_int_equal(vfree(b), 0);
		assert_int_equal(vunmap(v), 0);
		assert_int_equal(vm_event(m, PL_EV_VMAP_BUSY_LOOKUP) - before, 3);
		pl_warn_set_quiet(true);
		b = vmalloc(2 * P);
		assert_int_equal(vfree(b + P), -EINVAL);	/* refused in place */
		assert_ptr_equal(find_vm_area(b)->addr, b);
		pl_warn_set_quiet(false);
		assert_int_equal(vfree(b), 0);
		assert_int_equal(__free_pages(pg, 0), 0);
		vm_test_done(m);
	}
}

/*
 * A chunk fills: the next area retires it and reserves another; freeing
 * everything returns both chunks (lazily, then purged) and the space is
 * one free area again. The checker's partition holds throughout.
 */
static void test_bump_chunk_fill_and_return(void **state)
{
	const unsigned long per_chunk = (64UL << 20) / (2 * P);	/* one page + guard */
	struct pl_machine *m = bump_machine(1);
	void **p = calloc(per_chunk + 1, sizeof(*p));
	unsigned long chunks = vm_event(m, PL_EV_VMAP_BUMP_CHUNK_NEW);

	(void)state;
	assert_non_null(p);
	for (unsigned long i = 0; i <= per_chunk; i++) {
		p[i] = vmalloc(P);
		assert_non_null(p[i]);
	}
	assert_int_equal(vm_event(m, PL_EV_VMAP_BUMP_CHUNK_NEW), chunks + 2);
	assert_int_equal((unsigned long)p[per_chunk] % (64UL << 20), 0);	/* a new chunk */
	assert_int_equal(pl_check_vmalloc(m), 0);
	for (unsigned long i = 0; i < per_chunk; i++)
		assert_int_equal(vfree(p[i]), 0);
	/* the full chunk's last area went: it went back */
	assert_int_equal(vm_event(m, PL_EV_VMAP_BUMP_CHUNK_FREE), 1);
	assert_null(find_vm_area(p[0]));
	assert_int_equal(pl_check_vmalloc(m), 0);
	assert_int_equal(vfree(p[per_chunk]), 0);
	free(p);
	vm_test_done(m);	/* the purge drains the current chunk: one free area */
	(void)chunks;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_and_ops),
		cmocka_unit_test(test_fit_types),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_lowest_aligned_fit),
		cmocka_unit_test(test_bump_wide_align),
		cmocka_unit_test(test_vfree_one_lookup),
		cmocka_unit_test(test_busy_erase_refuses_inside),
		cmocka_unit_test(test_retry_queue_under_node_faults),
		cmocka_unit_test(test_every_nth_node_fault),
		cmocka_unit_test(test_purge_merge_list),
		cmocka_unit_test(test_bump_lookup),
		cmocka_unit_test(test_bump_chunk_fill_and_return),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
