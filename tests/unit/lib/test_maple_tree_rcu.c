// SPDX-License-Identifier: MIT
/*
 * test_maple_tree_rcu.c - RCU readers on real threads beside a writer, on a tree
 * in RCU mode. Meant to be TSan clean (CTest label "concurrency").
 *
 * Every entry encodes the range it was stored over (start << 20 | length),
 * and stores only ever shrink what is left of an entry, so whatever a reader
 * sees must satisfy: a load of i returns NULL or an entry whose range holds
 * i; an iteration returns ranges in increasing order, each inside its
 * entry's range. Readers also run mas_empty_area() and check the answer lies
 * in the window. The writer stores, erases and allocates (spanning stores
 * included), validating the tree now and then; retired nodes are freed by
 * call_rcu() while readers run.
 */
#include <pthread.h>
#include <sched.h>
#include "maple_helpers.h"

#define SPACE		200000UL
#define NR_READERS	3

static struct maple_tree tree;
static int stop;	/* atomic */
static unsigned long started;	/* atomic: readers running */
static unsigned long reader_checks[NR_READERS];
static unsigned long violations;	/* atomic: cmocka asserts belong to the main thread */

#define CHECK(cond)							\
	do {								\
		if (!(cond))						\
			__atomic_fetch_add(&violations, 1, __ATOMIC_RELAXED); \
	} while (0)

static void *enc(unsigned long start, unsigned long last)
{
	return mk(start << 20 | (last - start));
}

static void dec(void *e, unsigned long *start, unsigned long *last)
{
	unsigned long v = unmk(e);

	*start = v >> 20;
	*last = *start + (v & ((1UL << 20) - 1));
}

static void *reader(void *arg)
{
	unsigned long id = (unsigned long)arg, checks = 0;
	uint64_t x = 0x1234567 + id;

	rcu_register_thread();
	__atomic_fetch_add(&started, 1, __ATOMIC_RELEASE);
	/*
	 * do/while: on a loaded host a reader may first run after the writer
	 * has finished; it still makes one pass, so every reader checks.
	 */
	do {
		unsigned long i, s, l, prev_last = 0;
		unsigned int n = 0;
		void *e;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		i = x % SPACE;
		/* One load. */
		e = mtree_load(&tree, i);
		if (e) {
			dec(e, &s, &l);
			CHECK(s <= i && i <= l);
		}
		/* A short iteration inside one read-side section. */
		{
			MA_STATE(mas, &tree, i, i);

			pl_rcu_read_lock();
			mas_for_each(&mas, e, ULONG_MAX) {
				dec(e, &s, &l);
				CHECK(s <= mas.index && mas.last <= l);
				CHECK(n == 0 || mas.index > prev_last);
				prev_last = mas.last;
				if (++n == 16)
					break;
			}
			pl_rcu_read_unlock();
		}
		/* A gap search. */
		{
			MA_STATE(mas, &tree, 0, 0);
			unsigned long size = 1 + x % 64;

			pl_rcu_read_lock();
			if (!mas_empty_area(&mas, i, ULONG_MAX, size))
				CHECK(mas.index >= i && mas.last == mas.index + size - 1);
			pl_rcu_read_unlock();
		}
		checks++;
	} while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE));
	reader_checks[id] = checks;
	rcu_unregister_thread();
	return NULL;
}

static void test_rcu_readers(void **state)
{
	pthread_t th[NR_READERS];
	long before = mt_nr_allocated();
	uint64_t x = 42;

	(void)state;
	mt_init_flags(&tree, MT_FLAGS_ALLOC_RANGE | MT_FLAGS_USE_RCU);
	for (unsigned long i = 0; i < SPACE; i += 16)
		assert_int_equal(mtree_store_range(&tree, i, i + 9, enc(i, i + 9), GFP_KERNEL), 0);
	for (unsigned long t = 0; t < NR_READERS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, reader, (void *)t), 0);
	/* The writes must overlap the readers: wait until every reader runs. */
	while (__atomic_load_n(&started, __ATOMIC_ACQUIRE) < NR_READERS)
		sched_yield();
	for (unsigned long op = 0; op < 40000; op++) {
		unsigned long a, len;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		a = x % SPACE;
		len = (x >> 40) % 8 == 0 ? (x >> 20) % 3000 : (x >> 20) % 20;
		switch ((x >> 60) % 4) {
		case 0:
		case 1:
			assert_int_equal(mtree_store_range(&tree, a, a + len, enc(a, a + len),
							   GFP_KERNEL), 0);
			break;
		case 2:
			mtree_erase(&tree, a);
			break;
		default: {
			unsigned long start;
			int ret;

			mtree_lock(&tree);
			{
				MA_STATE(mas, &tree, 0, 0);

				ret = mas_empty_area(&mas, a, ULONG_MAX, len + 1);
				if (!ret)
					ret = mas_store_gfp(&mas, enc(mas.index, mas.last), GFP_KERNEL);
				start = mas.index;
			}
			mtree_unlock(&tree);
			assert_int_equal(ret, 0);
			assert_true(start >= a);
			break;
		}
		}
		if (op % 5000 == 0) {
			mtree_lock(&tree);
			assert_int_equal(mt_validate(&tree), 0);
			mtree_unlock(&tree);
		}
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	for (int t = 0; t < NR_READERS; t++)
		pthread_join(th[t], NULL);
	for (int t = 0; t < NR_READERS; t++)
		assert_true(reader_checks[t] > 0);
	assert_int_equal(violations, 0);
	check_done(&tree, before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rcu_readers),
	};

	return cmocka_run_group_tests(tests, test_rcu_setup, test_rcu_teardown);
}
