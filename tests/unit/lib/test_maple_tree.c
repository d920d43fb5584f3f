// SPDX-License-Identifier: MIT
/*
 * test_maple_tree.c - maple tree edge cases: empty trees, node splits exactly at
 * the 16-slot boundary, stores spanning 2..4 levels, ranges and gaps at
 * ULONG_MAX, empty_area windows, overwrites, erase merges, iteration,
 * preallocation and node allocation failure. Every test ends with
 * mt_validate() and checks that every node was given back.
 */
#include "maple_helpers.h"

static void test_empty_tree(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	MA_STATE(mas, &mt, 12345, 12345);

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	assert_true(mt_empty(&mt));
	assert_null(mtree_load(&mt, 0));
	assert_null(mtree_load(&mt, ULONG_MAX));
	assert_null(mas_walk(&mas));
	assert_int_equal(mas.index, 0);
	assert_true(mas.last == ULONG_MAX);
	assert_int_equal(mas_empty_area(&mas, 100, 200, 50), 0);
	assert_int_equal(mas.index, 100);
	assert_int_equal(mas.last, 149);
	assert_int_equal(mas_empty_area_rev(&mas, 100, 200, 50), 0);
	assert_int_equal(mas.index, 151);
	assert_int_equal(mas.last, 200);
	/* Bad windows. */
	assert_int_equal(mas_empty_area(&mas, 200, 100, 1), -EINVAL);
	assert_int_equal(mas_empty_area(&mas, 0, 100, 0), -EINVAL);
	assert_int_equal(mas_empty_area(&mas, 0, 99, 101), -EINVAL);
	/* Erasing or storing NULL in an empty tree allocates nothing. */
	assert_null(mtree_erase(&mt, 5));
	assert_int_equal(mtree_store_range(&mt, 5, 10, NULL, GFP_KERNEL), 0);
	assert_true(mt_empty(&mt));
	assert_int_equal(mt_nr_allocated(), before);
	assert_int_equal(mtree_store_range(&mt, 10, 5, mk(1), GFP_KERNEL), -EINVAL);
	check_done(&mt, before);
}

static void test_store_load_erase(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	MA_STATE(mas, &mt, 15, 15);

	(void)state;
	mt_init(&mt);
	assert_int_equal(mtree_store_range(&mt, 10, 20, mk(7), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_int_equal(mt_height(&mt), 1);
	assert_null(mtree_load(&mt, 9));
	assert_ptr_equal(mtree_load(&mt, 10), mk(7));
	assert_ptr_equal(mtree_load(&mt, 20), mk(7));
	assert_null(mtree_load(&mt, 21));
	assert_ptr_equal(mas_walk(&mas), mk(7));
	assert_int_equal(mas.index, 10);
	assert_int_equal(mas.last, 20);
	mas_set(&mas, 3);
	assert_null(mas_walk(&mas));
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas.last, 9);
	/* Erase by any index inside the range. */
	assert_ptr_equal(mtree_erase(&mt, 17), mk(7));
	assert_null(mtree_load(&mt, 15));
	/* The last entry gone, the tree is empty again (no node left). */
	assert_true(mt_empty(&mt));
	assert_int_equal(mt_height(&mt), 0);
	assert_int_equal(mt_nr_allocated(), before);
	/* Index 0 and ULONG_MAX themselves. */
	assert_int_equal(mtree_store(&mt, 0, mk(1), GFP_KERNEL), 0);
	assert_int_equal(mtree_store(&mt, ULONG_MAX, mk(2), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_ptr_equal(mtree_load(&mt, 0), mk(1));
	assert_ptr_equal(mtree_load(&mt, ULONG_MAX), mk(2));
	assert_null(mtree_load(&mt, 1));
	/* The whole space as one range. */
	assert_int_equal(mtree_store_range(&mt, 0, ULONG_MAX, mk(3), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_ptr_equal(mtree_load(&mt, 123456789), mk(3));
	assert_ptr_equal(mtree_erase(&mt, 99), mk(3));
	assert_true(mt_empty(&mt));
	check_done(&mt, before);
}

/* A leaf holds 16 slots: the 17th splits it, exactly. */
static void test_split_boundary(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	/* Entries at 0..14 plus the NULL range [15, ULONG_MAX]: 16 slots. */
	for (unsigned long i = 0; i < 15; i++) {
		assert_int_equal(mtree_store(&mt, i, mk(i), GFP_KERNEL), 0);
		check_valid(&mt);
		assert_int_equal(mt_height(&mt), 1);
	}
	assert_int_equal(mt_nr_nodes(&mt), 1);
	/* 15 makes 17 slots: two leaves under a new root. */
	assert_int_equal(mtree_store(&mt, 15, mk(15), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_int_equal(mt_height(&mt), 2);
	assert_int_equal(mt_nr_nodes(&mt), 3);
	for (unsigned long i = 0; i < 16; i++)
		assert_ptr_equal(mtree_load(&mt, i), mk(i));
	/* Erasing back below the minimum fill merges the two leaves. */
	for (unsigned long i = 15; i >= 8; i--) {
		assert_ptr_equal(mtree_erase(&mt, i), mk(i));
		check_valid(&mt);
	}
	assert_int_equal(mt_height(&mt), 1);
	/* Splits in the middle of a full leaf, too. */
	for (unsigned long i = 0; i < 8; i++)
		assert_int_equal(mtree_store_range(&mt, 100 + 10 * i, 100 + 10 * i + 4, mk(100 + i),
						   GFP_KERNEL), 0);
	check_valid(&mt);
	assert_int_equal(mtree_store_range(&mt, 131, 132, mk(999), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_ptr_equal(mtree_load(&mt, 130), mk(103));
	assert_ptr_equal(mtree_load(&mt, 131), mk(999));
	assert_ptr_equal(mtree_load(&mt, 133), mk(103));
	check_done(&mt, before);
}

/* Sequential and reverse fills grow the tree to 3+ levels; erase it all. */
static void test_fill_and_drain(void **state)
{
	const unsigned long n = 20000;
	unsigned int flags[] = { 0, MT_FLAGS_ALLOC_RANGE };

	(void)state;
	for (unsigned int f = 0; f < 2; f++) {
		struct maple_tree mt;
		long before = mt_nr_allocated();
		unsigned long *order = malloc(n * sizeof(*order));

		mt_init_flags(&mt, flags[f]);
		for (unsigned long i = 0; i < n; i++) {
			unsigned long idx = (f ? n - 1 - i : i) * 4;

			assert_int_equal(mtree_store_range(&mt, idx, idx + 2, mk(idx), GFP_KERNEL), 0);
			if (i % 997 == 0)
				check_valid(&mt);
		}
		check_valid(&mt);
		assert_true(mt_height(&mt) >= 3);
		for (unsigned long i = 0; i < n; i++) {
			assert_ptr_equal(mtree_load(&mt, i * 4 + 1), mk(i * 4));
			assert_null(mtree_load(&mt, i * 4 + 3));
		}
		/* Erase in a shuffled order. */
		for (unsigned long i = 0; i < n; i++)
			order[i] = i;
		srand(42);
		for (unsigned long i = n - 1; i > 0; i--) {
			unsigned long j = (unsigned long)rand() % (i + 1), t = order[i];

			order[i] = order[j];
			order[j] = t;
		}
		for (unsigned long i = 0; i < n; i++) {
			assert_ptr_equal(mtree_erase(&mt, order[i] * 4 + 2), mk(order[i] * 4));
			if (i % 1009 == 0)
				check_valid(&mt);
		}
		assert_true(mt_empty(&mt));
		free(order);
		check_done(&mt, before);
	}
}

/* Build a tree of at least @levels levels with entries [10i, 10i+4]. */
static unsigned long build_deep(struct maple_tree *mt, unsigned int flags, unsigned int levels)
{
	unsigned long i = 0;

	mt_init_flags(mt, flags);
	while (mt_height(mt) < levels) {
		assert_int_equal(mtree_store_range(mt, 10 * i, 10 * i + 4, mk(i), GFP_KERNEL), 0);
		i++;
	}
	/* Fill on a little so the last leaves are not all minimal. */
	for (unsigned long j = 0; j < 1000; j++, i++)
		assert_int_equal(mtree_store_range(mt, 10 * i, 10 * i + 4, mk(i), GFP_KERNEL), 0);
	check_valid(mt);
	return i;
}

/* What build_deep() then spans[0..@s) stored at @x. */
static void *span_expect(unsigned long (*spans)[2], unsigned int s, unsigned long x)
{
	void *e = x % 10 <= 4 ? mk(x / 10) : NULL;

	for (unsigned int t = 0; t < s; t++)
		if (x >= spans[t][0] && x <= spans[t][1])
			e = mk(1000000 + t);
	return e;
}

/* Stores that span 2, 3 and 4 levels: the spines part high in the tree. */
static void test_spanning_stores(void **state)
{
	unsigned int flags[] = { 0, MT_FLAGS_ALLOC_RANGE };

	(void)state;
	for (unsigned int f = 0; f < 2; f++) {
		struct maple_tree mt;
		long before = mt_nr_allocated();
		unsigned long n = build_deep(&mt, flags[f], 4);
		unsigned long nodes = mt_nr_nodes(&mt);
		/* Spans of growing width: a few slots, many leaves, most of the tree. */
		unsigned long spans[][2] = { { 13, 47 }, { 1003, 1997 }, { 5005, 10 * (n / 2) + 3 },
					     { 37, 10 * (n - 3) } };

		assert_true(mt_height(&mt) >= 4);
		assert_true(spans[2][1] > spans[2][0] + 1000);
		for (unsigned int s = 0; s < 4; s++) {
			unsigned long a = spans[s][0], b = spans[s][1];

			assert_int_equal(mtree_store_range(&mt, a, b, mk(1000000 + s), GFP_KERNEL), 0);
			check_valid(&mt);
			assert_ptr_equal(mtree_load(&mt, a), mk(1000000 + s));
			assert_ptr_equal(mtree_load(&mt, b), mk(1000000 + s));
			assert_ptr_equal(mtree_load(&mt, (a + b) / 2), mk(1000000 + s));
			/* Neighbours keep their (clipped) entries or gaps. */
			assert_ptr_equal(mtree_load(&mt, a - 1), span_expect(spans, s, a - 1));
			assert_ptr_equal(mtree_load(&mt, b + 1), span_expect(spans, s, b + 1));
		}
		/* The widest store left few nodes. */
		assert_true(mt_nr_nodes(&mt) < nodes / 10);
		/* Now erase a span covering the whole tree but its ends, with NULL. */
		assert_int_equal(mtree_store_range(&mt, 5, 10 * (n - 1) + 2, NULL, GFP_KERNEL), 0);
		check_valid(&mt);
		assert_ptr_equal(mtree_load(&mt, 0), mk(0));
		assert_null(mtree_load(&mt, 5));
		assert_null(mtree_load(&mt, 10 * (n - 1) + 2));
		assert_ptr_equal(mtree_load(&mt, 10 * (n - 1) + 3), mk(n - 1));
		check_done(&mt, before);
	}
}

/* NULL stores widen over NULL neighbours, across leaves too. */
static void test_erase_merges(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	MA_STATE(mas, &mt, 0, 0);
	unsigned long n;

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	assert_int_equal(mtree_store_range(&mt, 10, 19, mk(1), GFP_KERNEL), 0);
	assert_int_equal(mtree_store_range(&mt, 20, 29, mk(2), GFP_KERNEL), 0);
	assert_int_equal(mtree_store_range(&mt, 30, 39, mk(3), GFP_KERNEL), 0);
	assert_ptr_equal(mtree_erase(&mt, 25), mk(2));
	check_valid(&mt);
	mas_set(&mas, 25);
	assert_null(mas_walk(&mas));
	assert_int_equal(mas.index, 20);
	assert_int_equal(mas.last, 29);
	assert_ptr_equal(mtree_erase(&mt, 10), mk(1));
	check_valid(&mt);
	mas_set(&mas, 25);
	assert_null(mas_walk(&mas));
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas.last, 29);
	assert_ptr_equal(mtree_erase(&mt, 30), mk(3));
	assert_true(mt_empty(&mt));

	/* Many leaves: erase every other entry, then the rest; gaps grow across leaves. */
	n = build_deep(&mt, MT_FLAGS_ALLOC_RANGE, 3);
	for (unsigned long i = 1; i < n; i += 2)
		assert_ptr_equal(mtree_erase(&mt, 10 * i), mk(i));
	check_valid(&mt);
	for (unsigned long i = 0; i < n; i += 2) {
		assert_ptr_equal(mtree_erase(&mt, 10 * i + 4), mk(i));
		if (i % 64 == 0)
			check_valid(&mt);
	}
	assert_true(mt_empty(&mt));
	check_done(&mt, before);
}

static void test_overwrite(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	struct mt_slot_rec snap[16];
	unsigned long n;

	(void)state;
	mt_init(&mt);
	assert_int_equal(mtree_store_range(&mt, 100, 200, mk(1), GFP_KERNEL), 0);
	assert_int_equal(mtree_store_range(&mt, 150, 250, mk(2), GFP_KERNEL), 0);
	check_valid(&mt);
	n = mt_snapshot(&mt, snap, 16);
	assert_int_equal(n, 4);
	assert_int_equal(snap[1].min, 100);
	assert_int_equal(snap[1].max, 149);
	assert_ptr_equal(snap[1].entry, mk(1));
	assert_int_equal(snap[2].min, 150);
	assert_int_equal(snap[2].max, 250);
	/* Inside one range: it is cut in three. */
	assert_int_equal(mtree_store_range(&mt, 120, 130, mk(3), GFP_KERNEL), 0);
	n = mt_snapshot(&mt, snap, 16);
	assert_int_equal(n, 6);
	assert_ptr_equal(snap[1].entry, mk(1));
	assert_ptr_equal(snap[2].entry, mk(3));
	assert_ptr_equal(snap[3].entry, mk(1));
	assert_int_equal(snap[3].min, 131);
	/* Over all of them. */
	assert_int_equal(mtree_store_range(&mt, 50, 300, mk(4), GFP_KERNEL), 0);
	check_valid(&mt);
	n = mt_snapshot(&mt, snap, 16);
	assert_int_equal(n, 3);
	assert_int_equal(snap[1].min, 50);
	assert_int_equal(snap[1].max, 300);
	/* Insert refuses to overwrite. */
	assert_int_equal(mtree_insert_range(&mt, 300, 310, mk(5), GFP_KERNEL), -EEXIST);
	assert_int_equal(mtree_insert_range(&mt, 301, 310, mk(5), GFP_KERNEL), 0);
	assert_int_equal(mtree_insert(&mt, 400, NULL, GFP_KERNEL), -EINVAL);
	check_done(&mt, before);
}

/* Gaps at the very top of the index space. */
static void test_gaps_near_ulong_max(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	MA_STATE(mas, &mt, 0, 0);
	const unsigned long top = ULONG_MAX;

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	assert_int_equal(mtree_store_range(&mt, top - 10, top, mk(1), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_int_equal(mas_empty_area(&mas, top - 20, top, 10), 0);
	assert_true(mas.index == top - 20 && mas.last == top - 11);
	assert_int_equal(mas_empty_area(&mas, top - 20, top, 12), -EBUSY);
	assert_int_equal(mas_empty_area_rev(&mas, 0, top, 5), 0);
	assert_true(mas.index == top - 15 && mas.last == top - 11);
	/* The largest possible request. */
	assert_int_equal(mas_empty_area(&mas, 0, top, top - 10), 0);
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas_empty_area(&mas, 0, top, top - 9), -EBUSY);
	/* Fill the top with single entries, then find the hole left in them. */
	for (unsigned long i = 11; i < 200; i++)
		assert_int_equal(mtree_store(&mt, top - i, mk(i), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_ptr_equal(mtree_erase(&mt, top - 100), mk(100));
	assert_int_equal(mas_empty_area_rev(&mas, top - 1000, top, 1), 0);
	assert_true(mas.index == top - 100);
	assert_int_equal(mas_empty_area_rev(&mas, top - 1000, top, 2), 0);
	assert_true(mas.last == top - 200);
	assert_int_equal(mas_empty_area(&mas, top - 1000, top, 1), 0);
	assert_true(mas.index == top - 1000);
	assert_int_equal(mas_empty_area(&mas, top - 199, top, 1), 0);
	assert_true(mas.index == top - 100);
	assert_int_equal(mas_empty_area(&mas, top - 199, top, 2), -EBUSY);
	/* mt_find stops at the top without wrapping. */
	{
		unsigned long idx = top - 5, count = 0;
		void *e;

		mt_for_each(&mt, e, idx, top)
			count++;
		assert_int_equal(count, 1);
		assert_int_equal(idx, 0);
	}
	check_done(&mt, before);
}

/* empty_area windows cut through free ranges and busy ones. */
static void test_empty_area_windows(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	MA_STATE(mas, &mt, 0, 0);

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	/* Busy [100k, 100k + 49] for k = 1..2000: free runs of 50, plus [0, 99] and the top. */
	for (unsigned long k = 1; k <= 2000; k++)
		assert_int_equal(mtree_store_range(&mt, 100 * k, 100 * k + 49, mk(k), GFP_KERNEL), 0);
	/* One bigger hole deep inside: [149950, 150099]. */
	assert_ptr_equal(mtree_erase(&mt, 150000), mk(1500));
	check_valid(&mt);
	assert_true(mt_height(&mt) >= 3);
	assert_int_equal(mas_empty_area(&mas, 0, ULONG_MAX, 100), 0);
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas_empty_area(&mas, 1, ULONG_MAX, 100), 0);
	assert_int_equal(mas.index, 149950);	/* the hole */
	assert_int_equal(mas_empty_area(&mas, 1, ULONG_MAX, 151), 0);
	assert_int_equal(mas.index, 200050);	/* past the last busy range */
	/* Windows starting inside a busy range, inside a free one, tight ones. */
	assert_int_equal(mas_empty_area(&mas, 120, ULONG_MAX, 50), 0);
	assert_int_equal(mas.index, 150);
	assert_int_equal(mas_empty_area(&mas, 160, ULONG_MAX, 50), 0);
	assert_int_equal(mas.index, 250);
	assert_int_equal(mas_empty_area(&mas, 160, 199, 40), 0);
	assert_int_equal(mas.index, 160);
	assert_int_equal(mas_empty_area(&mas, 160, 199, 41), -EINVAL);
	assert_int_equal(mas_empty_area(&mas, 160, 248, 50), -EBUSY);
	assert_int_equal(mas_empty_area(&mas, 160, 299, 50), 0);
	assert_int_equal(mas.index, 250);
	/* Reverse. */
	assert_int_equal(mas_empty_area_rev(&mas, 0, 150049, 50), 0);
	assert_int_equal(mas.index, 150000);
	assert_int_equal(mas_empty_area_rev(&mas, 0, 149999, 101), -EBUSY);
	assert_int_equal(mas_empty_area_rev(&mas, 0, 149999, 100), 0);
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas_empty_area_rev(&mas, 0, 149999, 50), 0);
	assert_int_equal(mas.index, 149950);
	assert_int_equal(mas_empty_area_rev(&mas, 0, 99, 100), 0);
	assert_int_equal(mas.index, 0);
	assert_int_equal(mas_empty_area_rev(&mas, 100, 149, 1), -EBUSY);
	/* mtree_alloc_range and rrange put entries there. */
	{
		unsigned long start;

		assert_int_equal(mtree_alloc_range(&mt, &start, mk(7), 60, 0, ULONG_MAX, GFP_KERNEL), 0);
		assert_int_equal(start, 0);
		assert_int_equal(mtree_alloc_range(&mt, &start, mk(8), 60, 0, ULONG_MAX, GFP_KERNEL), 0);
		assert_int_equal(start, 149950);
		assert_int_equal(mtree_alloc_rrange(&mt, &start, mk(9), 10, 0, 1000, GFP_KERNEL), 0);
		assert_int_equal(start, 990);
		assert_int_equal(mtree_alloc_range(&mt, &start, mk(9), 60, 0, 1000, GFP_KERNEL), -EBUSY);
	}
	check_done(&mt, before);
}

static void test_iteration(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	unsigned long idx = 0, count = 0;
	void *e;

	(void)state;
	mt_init(&mt);
	for (unsigned long i = 0; i < 3000; i++)
		assert_int_equal(mtree_store_range(&mt, 10 * i + 5, 10 * i + 7, mk(i), GFP_KERNEL), 0);
	mt_for_each(&mt, e, idx, ULONG_MAX) {
		assert_ptr_equal(e, mk(count));
		assert_int_equal(idx, 10 * count + 8);
		count++;
	}
	assert_int_equal(count, 3000);
	/* mas_find / mas_next / mas_prev. */
	{
		MA_STATE(mas, &mt, 1000, 1000);

		assert_ptr_equal(mas_find(&mas, ULONG_MAX), mk(100));
		assert_int_equal(mas.index, 1005);
		assert_int_equal(mas.last, 1007);
		assert_ptr_equal(mas_next(&mas, ULONG_MAX), mk(101));
		assert_ptr_equal(mas_next(&mas, ULONG_MAX), mk(102));
		assert_ptr_equal(mas_prev(&mas, 0), mk(101));
		assert_ptr_equal(mas_prev(&mas, 0), mk(100));
		assert_null(mas_next(&mas, 1014));
		mas_set(&mas, 6);
		assert_ptr_equal(mas_find(&mas, 100), mk(0));
		assert_null(mas_prev(&mas, 0));
		count = 0;
		mas_set(&mas, 0);
		mas_for_each(&mas, e, 20000)
			count++;
		assert_int_equal(count, 2000);
	}
	/* Bounded iteration. */
	idx = 100;
	count = 0;
	mt_for_each(&mt, e, idx, 205)
		count++;
	assert_int_equal(count, 11);	/* 105 .. 205 */
	check_done(&mt, before);
}

/* After mas_preallocate(), the store takes no node from the allocator. */
static void test_preallocate(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	struct pl_fault_attr attr, off;
	struct pl_fault_stats stats;
	unsigned long warns = pl_warn_count();
	uint64_t x = 1;

	(void)state;
	pl_fault_attr_default(&off);
	pl_fault_attr_default(&attr);
	attr.probability = 100;
	attr.times = -1;
	attr.verbose = 0;
	build_deep(&mt, MT_FLAGS_ALLOC_RANGE, 3);
	for (int i = 0; i < 5000; i++) {
		MA_STATE(mas, &mt, 0, 0);
		unsigned long a, len;
		void *entry;

		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		a = (x >> 20) % 200000;
		len = (x >> 50) % (i % 10 == 0 ? 3000 : 20);
		entry = (x >> 7) % 3 ? mk(i) : NULL;
		mas_set_range(&mas, a, a + len);
		assert_int_equal(mas_preallocate(&mas, entry, GFP_KERNEL), 0);
		/* Now every allocation would fail. */
		assert_int_equal(mt_fault_set(&attr), 0);
		mas_store_prealloc(&mas, entry);
		assert_int_equal(mt_fault_set(&off), 0);
		assert_false(mas_is_err(&mas));
		assert_null(mas.alloc);
		assert_ptr_equal(mtree_load(&mt, a + len), entry);
		if (i % 250 == 0)
			check_valid(&mt);
	}
	mt_fault_get(&attr, &stats);
	assert_int_equal(stats.injected, 0);
	assert_int_equal(pl_warn_count(), warns);
	check_done(&mt, before);
}

/* A store that cannot get its nodes fails whole: the tree is unchanged. */
static void test_alloc_failure(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();
	struct pl_fault_attr attr, off, got;
	struct pl_fault_stats stats;
	static struct mt_slot_rec a[20000], b[20000];
	unsigned long na, nb, n, failures = 0, injected = 0;

	(void)state;
	pl_fault_attr_default(&off);
	pl_fault_attr_default(&attr);
	attr.probability = 100;
	attr.times = -1;
	attr.verbose = 0;
	n = build_deep(&mt, MT_FLAGS_ALLOC_RANGE, 3);
	for (unsigned long i = 0; i < 300; i++) {
		unsigned long lo = (i * 7919) % (10 * n), hi = lo + (i % 7) * 97 + (i % 3);
		long nodes;
		int ret;

		na = mt_snapshot(&mt, a, 20000);
		nodes = mt_nr_allocated();
		assert_int_equal(mt_fault_set(&attr), 0);
		ret = mtree_store_range(&mt, lo, hi, i % 2 ? NULL : mk(i), GFP_KERNEL);
		mt_fault_get(&got, &stats);
		injected += stats.injected;
		assert_int_equal(mt_fault_set(&off), 0);
		if (ret) {
			assert_int_equal(ret, -ENOMEM);
			failures++;
			nb = mt_snapshot(&mt, b, 20000);
			assert_int_equal(na, nb);
			assert_memory_equal(a, b, na * sizeof(a[0]));
			assert_int_equal(mt_nr_allocated(), nodes);
		}
		check_valid(&mt);
	}
	assert_true(failures > 0);
	assert_true(injected >= failures);
	check_done(&mt, before);
}

/* The leaf holding @index (its encoded node) and that leaf's range. */
static struct maple_enode *leaf_of(struct maple_tree *mt, unsigned long index, unsigned long *min,
				   unsigned long *max)
{
	MA_STATE(mas, mt, index, index);

	mas_walk(&mas);
	if (min)
		*min = mas.min;
	if (max)
		*max = mas.max;
	return mas.node;
}

/*
 * Outside RCU mode an erase widened across a leaf boundary rebalances the two
 * leaves in place, and a leaf one slot too full splits in place (it keeps
 * its first half); in RCU mode both publish new nodes and never touch a leaf
 * a reader may hold. Either way the content is the same.
 */
static void test_inplace_outside_rcu(void **state)
{
	(void)state;
	for (int rcu = 0; rcu < 2; rcu++) {
		struct maple_tree mt;
		long before = mt_nr_allocated();
		unsigned long n = build_deep(&mt, MT_FLAGS_ALLOC_RANGE, 3), i, lmax = 0, lmin = 0;
		struct maple_enode *l1 = NULL, *l2, *a, *b;
		unsigned long nodes;

		if (rcu)
			mt_set_in_rcu(&mt);
		/* An entry last in its leaf, with the NULL after it in the next leaf. */
		for (i = 1; i + 1 < n; i++) {
			l1 = leaf_of(&mt, 10 * i, NULL, &lmax);
			if (lmax == 10 * i + 4)
				break;
		}
		assert_true(i + 1 < n);
		l2 = leaf_of(&mt, 10 * i + 5, NULL, NULL);
		assert_ptr_not_equal(l1, l2);
		nodes = mt_nr_nodes(&mt);
		assert_ptr_equal(mtree_erase(&mt, 10 * i), mk(i));
		check_valid(&mt);
		{
			MA_STATE(mas, &mt, 10 * i, 10 * i);

			assert_null(mas_walk(&mas));
			assert_int_equal(mas.index, 10 * i - 5);
			assert_int_equal(mas.last, 10 * i + 9);
		}
		assert_ptr_equal(mtree_load(&mt, 10 * i - 6), mk(i - 1));
		assert_ptr_equal(mtree_load(&mt, 10 * i + 10), mk(i + 1));
		a = leaf_of(&mt, 10 * i - 6, NULL, NULL);
		b = leaf_of(&mt, 10 * i + 10, NULL, NULL);
		if (!rcu) {
			assert_true(a == l1 || a == l2);
			assert_true(b == l1 || b == l2);
			assert_int_equal(mt_nr_nodes(&mt), nodes);
		} else {
			assert_true(a != l1 && a != l2 && b != l1 && b != l2);
		}

		/* Fill the NULL ranges of one leaf until it splits. */
		nodes = mt_nr_nodes(&mt);
		for (unsigned long j = n / 2;; j++) {
			struct maple_enode *leaf = leaf_of(&mt, 10 * j + 6, &lmin, NULL);

			assert_true(j < n);
			assert_int_equal(mtree_store_range(&mt, 10 * j + 6, 10 * j + 7, mk(n + j),
							   GFP_KERNEL), 0);
			check_valid(&mt);
			assert_ptr_equal(mtree_load(&mt, 10 * j + 7), mk(n + j));
			assert_null(mtree_load(&mt, 10 * j + 8));
			if (mt_nr_nodes(&mt) == nodes)
				continue;
			assert_int_equal(mt_nr_nodes(&mt), nodes + 1);
			if (rcu)
				assert_ptr_not_equal(leaf_of(&mt, lmin, NULL, NULL), leaf);
			else
				assert_ptr_equal(leaf_of(&mt, lmin, NULL, NULL), leaf);
			break;
		}
		check_done(&mt, before);
	}
}

/*
 * Outside RCU mode a sequential fill keeps nodes fuller than halves: a leaf
 * split at the end of its data leaves the left leaf full, and a leaf with a
 * sibling that has room shares with it instead of splitting. 20000 entries
 * with a NULL range after each are 40001 ranges; plain halving splits use
 * about 4200 nodes for them, these rules under 3640 (11 ranges a node).
 */
static void test_fill_density(void **state)
{
	struct maple_tree mt;
	long before = mt_nr_allocated();

	(void)state;
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	for (unsigned long i = 0; i < 20000; i++)
		assert_int_equal(mtree_store_range(&mt, 10 * i, 10 * i + 4, mk(i), GFP_KERNEL), 0);
	check_valid(&mt);
	assert_true(mt_nr_nodes(&mt) <= 40001 / 11);
	for (unsigned long i = 0; i < 20000; i += 97)
		assert_ptr_equal(mtree_load(&mt, 10 * i + 4), mk(i));
	check_done(&mt, before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_tree),
		cmocka_unit_test(test_store_load_erase),
		cmocka_unit_test(test_split_boundary),
		cmocka_unit_test(test_fill_and_drain),
		cmocka_unit_test(test_spanning_stores),
		cmocka_unit_test(test_erase_merges),
		cmocka_unit_test(test_overwrite),
		cmocka_unit_test(test_gaps_near_ulong_max),
		cmocka_unit_test(test_empty_area_windows),
		cmocka_unit_test(test_iteration),
		cmocka_unit_test(test_preallocate),
		cmocka_unit_test(test_alloc_failure),
		cmocka_unit_test(test_inplace_outside_rcu),
		cmocka_unit_test(test_fill_density),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
