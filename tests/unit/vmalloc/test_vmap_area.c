// SPDX-License-Identifier: MIT
/*
 * test_vmap_area.c - vmap_area management: the four fit types, alignment
 * and window edge cases, a random differential run against a simple model
 * of the address space (a sorted array of free ranges), lazy freeing and
 * the purge, the per-node pools and the sharding of busy areas. Every test
 * ends with the space partition checked and the machine as at boot.
 */
#include "vmalloc_helpers.h"

#define S VMALLOC_START
#define P PAGE_SIZE

/* ---- the reference model ------------------------------------------------- */

#define MODEL_MAX 8192

struct range {
	unsigned long start, end;
};

static struct range model[MODEL_MAX];
static int nr_model;

static void model_init(void)
{
	model[0] = (struct range){ VMALLOC_START, VMALLOC_END };
	nr_model = 1;
}

static unsigned long align_up(unsigned long x, unsigned long a)
{
	return (x + a - 1) & ~(a - 1);
}

/* The lowest fit in a free range of at least @min_len bytes (0: any). */
static bool model_find(unsigned long size, unsigned long align, unsigned long vstart,
		       unsigned long vend, unsigned long min_len, unsigned long *addr)
{
	for (int i = 0; i < nr_model; i++) {
		unsigned long a = align_up(max(model[i].start, vstart), align);

		if (model[i].end - model[i].start < min_len)
			continue;
		if (a >= vstart && a + size <= model[i].end && a + size <= vend) {
			*addr = a;
			return true;
		}
		if (a + size > vend)
			break;
	}
	return false;
}

static void model_take(unsigned long start, unsigned long size)
{
	for (int i = 0; i < nr_model; i++) {
		struct range r = model[i];

		if (start < r.start || start + size > r.end)
			continue;
		if (r.start == start && r.end == start + size) {
			memmove(&model[i], &model[i + 1], sizeof(model[0]) * (size_t)(nr_model - i - 1));
			nr_model--;
		} else if (r.start == start) {
			model[i].start += size;
		} else if (r.end == start + size) {
			model[i].end = start;
		} else {
			assert_true(nr_model < MODEL_MAX);
			memmove(&model[i + 1], &model[i], sizeof(model[0]) * (size_t)(nr_model - i));
			nr_model++;
			model[i].end = start;
			model[i + 1].start = start + size;
		}
		return;
	}
	fail_msg("model: [%#lx, +%#lx) is not free", start, size);
}

static void model_give(unsigned long start, unsigned long size)
{
	int i = 0;

	while (i < nr_model && model[i].start < start)
		i++;
	assert_true(nr_model < MODEL_MAX);
	memmove(&model[i + 1], &model[i], sizeof(model[0]) * (size_t)(nr_model - i));
	nr_model++;
	model[i] = (struct range){ start, start + size };
	if (i + 1 < nr_model && model[i].end == model[i + 1].start) {
		model[i].end = model[i + 1].end;
		memmove(&model[i + 1], &model[i + 2], sizeof(model[0]) * (size_t)(nr_model - i - 2));
		nr_model--;
	}
	if (i > 0 && model[i - 1].end == model[i].start) {
		model[i - 1].end = model[i].end;
		memmove(&model[i], &model[i + 1], sizeof(model[0]) * (size_t)(nr_model - i - 1));
		nr_model--;
	}
}

/* The free list of the real space equals the model's free ranges. */
static void assert_free_matches_model(struct pl_machine *m)
{
	struct vmap_space *vs = m->vmap;
	struct list_head *pos;
	int i = 0;

	list_for_each(pos, &vs->free.head) {
		struct vmap_area *va = list_entry(pos, struct vmap_area, list);

		assert_true(i < nr_model);
		assert_int_equal(va->va_start, model[i].start);
		assert_int_equal(va->va_end, model[i].end);
		i++;
	}
	assert_int_equal(i, nr_model);
}

static struct vmap_area *area(unsigned long size, unsigned long align, unsigned long vstart,
			      unsigned long vend)
{
	int err;

	return alloc_vmap_area(size, align, vstart, vend, NUMA_NO_NODE, GFP_KERNEL | __GFP_NOWARN,
			       0, NULL, &err);
}

/* ---- fit types ------------------------------------------------------------ */

static void test_classify(void **state)
{
	struct vmap_area va = { .va_start = 10 * P, .va_end = 20 * P };

	(void)state;
	assert_int_equal(classify_va_fit_type(&va, 10 * P, 10 * P), FL_FIT_TYPE);
	assert_int_equal(classify_va_fit_type(&va, 10 * P, 3 * P), LE_FIT_TYPE);
	assert_int_equal(classify_va_fit_type(&va, 17 * P, 3 * P), RE_FIT_TYPE);
	assert_int_equal(classify_va_fit_type(&va, 12 * P, 3 * P), NE_FIT_TYPE);
	assert_int_equal(classify_va_fit_type(&va, 9 * P, 3 * P), NOTHING_FIT);
	assert_int_equal(classify_va_fit_type(&va, 18 * P, 3 * P), NOTHING_FIT);
	assert_int_equal(classify_va_fit_type(&va, 12 * P, ~0UL), NOTHING_FIT); /* wraps */
}

static void test_fit_types(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *le, *ne, *re, *fl, *first;
	long objs;

	(void)state;
	model_init();
	/* LE: from the bottom of the one big free area */
	le = area(4 * P, P, S, VMALLOC_END);
	assert_non_null(le);
	assert_int_equal(le->va_start, S);
	model_take(S, 4 * P);
	assert_free_matches_model(m);

	/* NE: in the middle of it; a second free area appears */
	ne = area(2 * P, P, S + 16 * P, VMALLOC_END);
	assert_int_equal(ne->va_start, S + 16 * P);
	model_take(S + 16 * P, 2 * P);
	assert_free_matches_model(m);
	assert_int_equal(nr_model, 2);

	/* RE: a window on the top of the low free area [S+4P, S+16P) */
	re = area(3 * P, P, S + 13 * P, S + 16 * P);
	assert_int_equal(re->va_start, S + 13 * P);
	model_take(S + 13 * P, 3 * P);
	assert_free_matches_model(m);

	/* FL: exactly what is left of it, [S+4P, S+13P): the free area goes */
	objs = pl_objcache_in_use(vs->vmap_area_cachep);
	fl = area(9 * P, P, S, VMALLOC_END);
	assert_int_equal(fl->va_start, S + 4 * P);
	model_take(S + 4 * P, 9 * P);
	assert_free_matches_model(m);
	assert_int_equal(nr_model, 1);
	/* one object for the new busy area, one freed with the free area */
	assert_int_equal(pl_objcache_in_use(vs->vmap_area_cachep), objs);
	assert_int_equal(pl_check_vmalloc(m), 0);

	/* Freeing merges: NE's hole, then the rest, back to one area. */
	first = le;
	free_vmap_area(re);
	model_give(S + 13 * P, 3 * P);
	free_vmap_area(first);
	model_give(S, 4 * P);
	assert_free_matches_model(m);
	free_vmap_area(fl);	/* merges with both neighbours */
	model_give(S + 4 * P, 9 * P);
	assert_free_matches_model(m);
	assert_int_equal(nr_model, 2);
	free_vmap_area(ne);
	model_give(S + 16 * P, 2 * P);
	assert_free_matches_model(m);
	assert_int_equal(nr_model, 1);
	vm_test_done(m);
}

/* ---- alignment and windows ------------------------------------------------- */

static void test_alignment_edges(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct vmap_area *a, *b, *c, *d;
	int err;

	(void)state;
	/* 2 MiB alignment past a small busy area: the gap before stays free */
	a = area(P, P, S, VMALLOC_END);
	b = area(3 * P, PMD_SIZE, S, VMALLOC_END);
	assert_int_equal(b->va_start, S + PMD_SIZE);
	/* 1 GiB alignment */
	c = area(P, 1UL << 30, S, VMALLOC_END);
	assert_int_equal(c->va_start, S + (1UL << 30));
	/* a window exactly the size, with a big alignment: no search widening */
	d = area(PMD_SIZE, PMD_SIZE, S + 4 * PMD_SIZE, S + 5 * PMD_SIZE);
	assert_non_null(d);
	assert_int_equal(d->va_start, S + 4 * PMD_SIZE);
	/* the same window again is taken: fails, nothing changes */
	assert_null(area(PMD_SIZE, PMD_SIZE, S + 4 * PMD_SIZE, S + 5 * PMD_SIZE));
	/* alignment pushing the start past the window */
	assert_null(area(P, PMD_SIZE, S + PMD_SIZE + 4 * P, S + 2 * PMD_SIZE));
	/* the window's last page */
	assert_non_null(c);
	{
		struct vmap_area *e = area(P, P, VMALLOC_END - P, VMALLOC_END);

		assert_int_equal(e->va_start, VMALLOC_END - P);
		free_vmap_area(e);
	}
	/* a misfit size or alignment is refused by alloc_vmap_area */
	assert_null(alloc_vmap_area(P + 1, P, S, VMALLOC_END, NUMA_NO_NODE, GFP_KERNEL, 0, NULL,
				    &err));
	assert_int_equal(err, -EINVAL);
	assert_null(alloc_vmap_area(P, 3 * P, S, VMALLOC_END, NUMA_NO_NODE, GFP_KERNEL, 0, NULL,
				    &err));
	assert_int_equal(err, -EINVAL);
	/* an alignment so large the aligned start wraps around */
	assert_null(area(P, 1UL << 63, S + P, VMALLOC_END));
	assert_int_equal(pl_check_vmalloc(m), 0);
	free_vmap_area(a);
	free_vmap_area(b);
	free_vmap_area(c);
	free_vmap_area(d);
	vm_test_done(m);
}

/* ---- random differential --------------------------------------------------- */

#define MAX_LIVE 512

static void test_random_against_model(void **state)
{
	static const unsigned long aligns[] = { P, P, P, P, 2 * P, 16 * P, PMD_SIZE };
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct vmap_area *live[MAX_LIVE];
	int nr_live = 0;
	struct pl_rng rng;

	(void)state;
	model_init();
	pl_rng_seed(&rng, 42);
	for (int step = 0; step < 6000; step++) {
		bool do_alloc = nr_live == 0 || (nr_live < MAX_LIVE && pl_rng_below(&rng, 100) < 55);

		if (do_alloc) {
			unsigned long size = (1 + pl_rng_below(&rng, 64)) * P;
			unsigned long align = aligns[pl_rng_below(&rng, ARRAY_SIZE(aligns))];
			unsigned long vstart = S, vend = VMALLOC_END, exact, adjusted;
			bool has_exact, has_adjusted, adjust;
			struct vmap_area *va;

			if (pl_rng_below(&rng, 2)) {
				vstart = S + pl_rng_below(&rng, 4096) * P;
				vend = vstart + size + pl_rng_below(&rng, 256) * P;
			}
			adjust = !(align <= P || vend - vstart == size);
			has_exact = model_find(size, align, vstart, vend, 0, &exact);
			has_adjusted = model_find(size, align, vstart, vend, size + align - 1, &adjusted);
			va = area(size, align, vstart, vend);
			if (!adjust) {
				if (!has_exact) {
					assert_null(va);
					continue;
				}
				assert_non_null(va);
				assert_int_equal(va->va_start, exact);
			} else {
				/* kernel trade-off: a small fitting block may be skipped */
				if (!va) {
					assert_false(has_adjusted);
					continue;
				}
				assert_true(has_exact);
				assert_true(va->va_start >= exact);
				if (has_adjusted)
					assert_true(va->va_start <= adjusted);
			}
			assert_true(IS_ALIGNED(va->va_start, align));
			assert_true(va->va_start >= vstart && va->va_end <= vend);
			assert_int_equal(va_size(va), size);
			model_take(va->va_start, size);
			live[nr_live++] = va;
		} else {
			int i = (int)pl_rng_below(&rng, (uint64_t)nr_live);

			model_give(live[i]->va_start, va_size(live[i]));
			free_vmap_area(live[i]);
			live[i] = live[--nr_live];
		}
		if (step % 97 == 0) {
			assert_free_matches_model(m);
			assert_int_equal(pl_check_vmalloc(m), 0);
		}
	}
	assert_free_matches_model(m);
	while (nr_live)
		free_vmap_area(live[--nr_live]);
	vm_test_done(m);
}

/* ---- lazy free and purge ----------------------------------------------------- */

static void test_lazy_purge(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct vmap_space *vs = m->vmap;
	unsigned long per = 64, max_pages = lazy_max_pages(vs), freed = 0;
	unsigned long flushes = vm_event(m, PL_EV_TLB_FLUSH);
	struct pl_vmalloc_stats st;

	(void)state;
	assert_int_equal(max_pages, 8192);	/* fls(1) * 32 MiB / 4 KiB */
	/* Free lazily until just at the threshold: nothing is purged. */
	while (freed + per <= max_pages) {
		struct vmap_area *va = area(per * P, P, S, VMALLOC_END);
		struct vmap_node *vn = addr_to_node(vs, va->va_start);

		spin_lock(&vn->busy.lock);
		vs->ops->unlink(&vn->busy, va);
		spin_unlock(&vn->busy.lock);
		free_vmap_area_noflush(va);
		freed += per;
	}
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.lazy_pages, freed);
	assert_int_equal(st.nr_lazy, freed / per);
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes);
	assert_int_equal(pl_check_vmalloc(m), 0);
	{
		char buf[1 << 16];
		long n = pl_show_vmallocinfo(m, buf, sizeof(buf));

		assert_true(n > 0);
		assert_non_null(strstr(buf, "unpurged vm_area"));
	}
	/* One more crosses lazy_max_pages: one purge, one TLB flush, all merged. */
	{
		struct vmap_area *va = area(per * P, P, S, VMALLOC_END);
		struct vmap_node *vn = addr_to_node(vs, va->va_start);

		spin_lock(&vn->busy.lock);
		vs->ops->unlink(&vn->busy, va);
		spin_unlock(&vn->busy.lock);
		free_vmap_area_noflush(va);
	}
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.lazy_pages, 0);
	assert_int_equal(st.nr_lazy, 0);
	assert_int_equal(st.nr_free, 1);
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes + 1);
	assert_int_equal(vm_event(m, PL_EV_VMAP_PURGE_AREAS), freed / per + 1);
	/* An empty purge flushes nothing. */
	pl_vmalloc_purge(m);
	assert_int_equal(vm_event(m, PL_EV_TLB_FLUSH), flushes + 1);
	vm_test_done(m);
}

/* ---- pools and nodes ------------------------------------------------------------ */

static struct vmap_area *take_busy(struct vmap_space *vs, struct vmap_area *va)
{
	struct vmap_node *vn = addr_to_node(vs, va->va_start);

	spin_lock(&vn->busy.lock);
	vs->ops->unlink(&vn->busy, va);
	spin_unlock(&vn->busy.lock);
	return va;
}

static void test_pools_and_nodes(void **state)
{
	struct pl_machine *m = vm_test_machine(4, "v6.18");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *va, *again, *other;
	unsigned long addr, hits;
	struct pl_vmalloc_stats st;

	(void)state;
	assert_int_equal(vs->nr_vmap_nodes, 4);
	assert_int_equal(lazy_max_pages(vs), 3 * 8192);	/* fls(4) = 3 */

	/* CPU 1 allocates 5 pages, frees them lazily; the purge pools them. */
	assert_int_equal(pl_enter(m, 1), 0);
	va = area(5 * P, P, S, VMALLOC_END);
	addr = va->va_start;
	assert_int_equal(decode_vn_id(vs, va->flags), 1);
	free_vmap_area_noflush(take_busy(vs, va));
	purge_vmap_area_lazy(vs);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_pooled, 1);
	assert_int_equal(vs->vmap_nodes[1].pool[4].len, 1);
	assert_int_equal(pl_check_vmalloc(m), 0);

	/* CPU 2 (node 2) does not see node 1's pool. */
	assert_int_equal(pl_enter(m, 2), 0);
	other = area(5 * P, P, S, VMALLOC_END);
	assert_true(other->va_start != addr);
	/* CPU 1 gets the same range back from its pool. */
	assert_int_equal(pl_enter(m, 1), 0);
	hits = vm_event(m, PL_EV_VMAP_POOL_HIT);
	again = area(5 * P, P, S, VMALLOC_END);
	assert_int_equal(again->va_start, addr);
	assert_int_equal(vm_event(m, PL_EV_VMAP_POOL_HIT), hits + 1);
	/* A restricted window never uses the pools. */
	{
		struct vmap_area *w = area(5 * P, P, S, S + (1UL << 30));

		assert_int_equal(decode_vn_id(vs, w->flags), vs->nr_vmap_nodes);
		free_vmap_area(w);
	}
	/* Busy areas are sharded by address over 64 KiB stripes. */
	for (int i = 0; i < 64; i++) {
		struct vmap_area *x = area(P, P, S, VMALLOC_END);

		assert_int_equal(vm_event(m, PL_EV_BAD_INPUT), 0);
		assert_ptr_equal(find_vmap_area(x->va_start), x);
		assert_int_equal(pl_check_vmalloc(m), 0);	/* checks the node of each */
		free_vmap_area_noflush(take_busy(vs, x));
	}
	free_vmap_area_noflush(take_busy(vs, again));
	free_vmap_area_noflush(take_busy(vs, other));
	/* A 25% decay leaves pools of 4+ entries partly filled; the full one empties them. */
	purge_vmap_area_lazy(vs);
	assert_int_equal(pl_check_vmalloc(m), 0);
	pl_vmalloc_stats(m, &st);
	assert_true(st.nr_pooled > 0);
	vm_test_done(m);
}

static void quiet_report(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

/* The checker is not blind: each corruption is reported, and undone. */
static void test_checker_catches(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct vmap_space *vs = m->vmap;
	struct vmap_area *a = area(4 * P, P, S, VMALLOC_END), *b = area(P, P, S, VMALLOC_END);
	struct vmap_area *fva = list_first_entry(&vs->free.head, struct vmap_area, list);
	unsigned long saved;

	(void)state;
	pl_warn_set_quiet(true);
	assert_int_equal(pl_check_vmalloc(m), 0);
	if (vs->ops == &vmap_index_rbtree_ops) {
		saved = fva->subtree_max_size;		/* a stale augmented value */
		fva->subtree_max_size = saved - P;
		assert_true(pl_check_vmalloc(m) > 0);
		fva->subtree_max_size = saved;
	} else {
		saved = fva->va_end;			/* the list disagrees with the tree */
		fva->va_end = saved - P;
		assert_true(vs->ops->check_free(&vs->free, quiet_report, NULL) > 0);
		fva->va_end = saved;
	}
	a->va_end -= P;				/* a hole */
	assert_true(pl_check_vmalloc(m) > 0);
	a->va_end += 2 * P;			/* an overlap */
	assert_true(pl_check_vmalloc(m) > 0);
	a->va_end -= P;
	vs->vmap_lazy_nr += 1;			/* a counter off by one */
	assert_true(pl_check_vmalloc(m) > 0);
	vs->vmap_lazy_nr -= 1;
	assert_int_equal(pl_check_vmalloc(m), 0);
	pl_warn_set_quiet(false);
	free_vmap_area(a);
	free_vmap_area(b);
	vm_test_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify),
		cmocka_unit_test(test_fit_types),
		cmocka_unit_test(test_alignment_edges),
		cmocka_unit_test(test_random_against_model),
		cmocka_unit_test(test_lazy_purge),
		cmocka_unit_test(test_pools_and_nodes),
		cmocka_unit_test(test_checker_catches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
