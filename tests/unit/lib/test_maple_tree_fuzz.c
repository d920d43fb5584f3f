// SPDX-License-Identifier: MIT
/*
 * test_maple_tree_fuzz.c - differential fuzz of the maple tree against a plain
 * interval map, seeded and deterministic.
 *
 * The model is an array of cells. Cells 0..K-1 are the indices 0..K-1,
 * cell K is the whole middle [K, ULONG_MAX - K] as one unit, cells K+1..2K
 * are the top K indices; so ranges, gaps and windows at 0 and at ULONG_MAX
 * are exercised next to a huge range. Every store gets a fresh entry, so
 * a run of equal cells in the model is exactly one range of the tree and the
 * whole tree can be compared slot by slot. Operations: store (entry or NULL)
 * over random cell ranges of mixed widths, erase, load, empty_area and
 * empty_area_rev over random windows (checked against a brute force over the
 * model), mtree_alloc_range, iteration; mt_validate() after every operation.
 * Trees: range and allocation, RCU mode off and on.
 */
#include "maple_helpers.h"

#define K	700
#define NCELLS	(2 * K + 1)

static void *model[NCELLS];

static unsigned long cell_lo(unsigned int c)
{
	return c <= K ? c : ULONG_MAX - (2 * K - c);
}

static unsigned long cell_hi(unsigned int c)
{
	return c < K ? c : ULONG_MAX - (2 * K - c);
}

static unsigned int cell_of(unsigned long x)
{
	if (x < K)
		return (unsigned int)x;
	if (x > ULONG_MAX - K)
		return (unsigned int)(2 * K - (ULONG_MAX - x));
	return K;
}

static uint64_t rng;
static unsigned long trace_op = ~0UL;	/* MAPLE_FUZZ_TRACE=op: dump before that store */

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static unsigned int rnd_cell(void)
{
	/* Favour the ends (where the tree's structure lives). */
	switch (rnd() % 4) {
	case 0:
		return (unsigned int)(rnd() % NCELLS);
	case 1:
		return (unsigned int)(2 * K - rnd() % 60);
	default:
		return (unsigned int)(rnd() % K);
	}
}

static unsigned long rnd_index_in(unsigned int c)
{
	unsigned long lo = cell_lo(c), hi = cell_hi(c);

	if (lo == hi)
		return lo;
	switch (rnd() % 3) {
	case 0:
		return lo;
	case 1:
		return hi;
	default:
		return lo + rnd() % (hi - lo + 1);
	}
}

/* Brute force over the model: lowest (highest) NULL run fitting @size in [min, max]. */
static int model_empty_area(unsigned long min, unsigned long max, unsigned long size, bool rev,
			    unsigned long *index)
{
	bool found = false;

	if (min > max || !size || max - min < size - 1)
		return -EINVAL;
	for (unsigned int c = 0; c < NCELLS;) {
		unsigned int e = c;
		unsigned long lo, hi;

		if (model[c]) {
			c++;
			continue;
		}
		while (e + 1 < NCELLS && !model[e + 1])
			e++;
		lo = max(cell_lo(c), min);
		hi = min(cell_hi(e), max);
		if (lo <= hi && hi - lo >= size - 1) {
			found = true;
			*index = rev ? hi - size + 1 : lo;
			if (!rev)
				return 0;
		}
		c = e + 1;
	}
	return found ? 0 : -EBUSY;
}

/* Compare every range of the tree with the runs of the model. */
static void compare_all(struct maple_tree *mt)
{
	MA_STATE(mas, mt, 0, 0);
	unsigned int c = 0;

	while (c < NCELLS) {
		unsigned int e = c;
		void *entry;

		while (e + 1 < NCELLS && model[e + 1] == model[c])
			e++;
		mas_set(&mas, cell_lo(c));
		entry = mas_walk(&mas);
		assert_ptr_equal(entry, model[c]);
		assert_true(mas.index == cell_lo(c));
		assert_true(mas.last == cell_hi(e));
		c = e + 1;
	}
}

static void run_fuzz(unsigned int flags, uint64_t seed, unsigned long ops)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	unsigned long next_entry = 1;

	rng = seed;
	if (getenv("MAPLE_FUZZ_TRACE"))
		trace_op = strtoul(getenv("MAPLE_FUZZ_TRACE"), NULL, 0);
	memset(model, 0, sizeof(model));
	mt_init_flags(&mt, flags);
	for (unsigned long op = 0; op < ops; op++) {
		unsigned int kind = (unsigned int)(rnd() % 16);

		if (kind < 9) {	/* store */
			unsigned int c1 = rnd_cell(), c2;
			unsigned int w = (unsigned int)(rnd() % 8 == 0 ? rnd() % 400 : rnd() % 6);
			void *entry = rnd() % 3 ? mk(next_entry++) : NULL;

			c2 = c1 + w < NCELLS ? c1 + w : NCELLS - 1;
			if (trace_op == op) {
				fprintf(stderr, "op %lu: store [%lu, %lu] = %p\n", op, cell_lo(c1), cell_hi(c2), entry);
				mt_dump(&mt, mt_dump_dec);
			}
			assert_int_equal(mtree_store_range(&mt, cell_lo(c1), cell_hi(c2), entry,
							   GFP_KERNEL), 0);
			for (unsigned int c = c1; c <= c2; c++)
				model[c] = entry;
		} else if (kind < 11) {	/* erase */
			unsigned int c = rnd_cell();
			void *want = model[c];
			unsigned int a = c, b = c;

			while (a > 0 && model[a - 1] == want)
				a--;
			while (b + 1 < NCELLS && model[b + 1] == want)
				b++;
			assert_ptr_equal(mtree_erase(&mt, rnd_index_in(c)), want);
			if (want)
				for (unsigned int x = a; x <= b; x++)
					model[x] = NULL;
		} else if (kind < 13) {	/* loads */
			for (int i = 0; i < 8; i++) {
				unsigned int c = rnd_cell();

				assert_ptr_equal(mtree_load(&mt, rnd_index_in(c)), model[c]);
			}
		} else if (kind < 15 && (flags & MT_FLAGS_ALLOC_RANGE)) {	/* empty_area */
			unsigned long min = rnd_index_in(rnd_cell()), max = rnd_index_in(rnd_cell());
			unsigned long size = rnd() % 4 == 0 ? 1 + rnd() % 300 : 1 + rnd() % 4;
			bool rev = rnd() % 2;
			unsigned long want = 0;
			int ret, wret;
			MA_STATE(mas, &mt, 0, 0);

			if (rnd() % 8 == 0)
				size = rnd() % 2 ? ULONG_MAX - 2 * K : ULONG_MAX - 2 * K + 2;
			if (min > max && rnd() % 4) {
				unsigned long t = min;

				min = max;
				max = t;
			}
			wret = model_empty_area(min, max, size, rev, &want);
			ret = rev ? mas_empty_area_rev(&mas, min, max, size)
				  : mas_empty_area(&mas, min, max, size);
			assert_int_equal(ret, wret);
			if (!ret) {
				assert_true(mas.index == want);
				assert_true(mas.last == want + size - 1);
				/* Take it, if it is whole cells (the model has no half cells). */
				if (rnd() % 2 && want == cell_lo(cell_of(want)) &&
				    want + size - 1 == cell_hi(cell_of(want + size - 1))) {
					void *entry = mk(next_entry++);

					mtree_lock(&mt);
					assert_int_equal(mas_store_gfp(&mas, entry, GFP_KERNEL), 0);
					mtree_unlock(&mt);
					for (unsigned int c = cell_of(want); c <= cell_of(want + size - 1); c++)
						model[c] = entry;
				}
			}
		} else {	/* iterate from a random point */
			unsigned int c = rnd_cell();
			unsigned long idx = cell_lo(c);
			unsigned int n = 0;
			void *e;

			mt_for_each(&mt, e, idx, ULONG_MAX) {
				while (c < NCELLS && model[c] != e)
					c++;
				assert_true(c < NCELLS);
				if (++n == 20)
					break;
			}
		}
		if (mt_validate(&mt)) {
			fprintf(stderr, "seed %lu op %lu\n", (unsigned long)seed, op);
			fail();
		}
		if (op % 64 == 0)
			compare_all(&mt);
	}
	compare_all(&mt);
	check_done(&mt, before);
}

static void test_fuzz_range(void **state)
{
	(void)state;
	for (uint64_t seed = 1; seed <= 3; seed++)
		run_fuzz(0, seed * 0x9e3779b97f4a7c15ULL, 15000);
}

static void test_fuzz_alloc(void **state)
{
	(void)state;
	for (uint64_t seed = 11; seed <= 13; seed++)
		run_fuzz(MT_FLAGS_ALLOC_RANGE, seed * 0x9e3779b97f4a7c15ULL, 15000);
}

static void test_fuzz_alloc_rcu(void **state)
{
	(void)state;
	for (uint64_t seed = 21; seed <= 22; seed++)
		run_fuzz(MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU, seed * 0x9e3779b97f4a7c15ULL, 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fuzz_range),
		cmocka_unit_test(test_fuzz_alloc),
		cmocka_unit_test(test_fuzz_alloc_rcu),
	};

	return cmocka_run_group_tests(tests, test_rcu_setup, test_rcu_teardown);
}
