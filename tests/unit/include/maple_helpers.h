/* SPDX-License-Identifier: MIT */
/*
 * maple_helpers.h - shared pieces of the maple tree tests: entries that
 * encode a number, the end-of-test check (mt_validate() finds nothing, every
 * node goes back), and a slot-by-slot snapshot for "nothing changed".
 */
#ifndef PAGELAB_TEST_MAPLE_HELPERS_H
#define PAGELAB_TEST_MAPLE_HELPERS_H

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <urcu.h>
#include "pagelab/maple_tree.h"
#include "pagelab/rcu.h"

/* Entry number @v (never NULL: odd values). */
static inline void *mk(unsigned long v)
{
	return (void *)(uintptr_t)((v << 1) | 1);
}

static inline unsigned long unmk(const void *e)
{
	return (unsigned long)(uintptr_t)e >> 1;
}

static inline void check_valid(struct maple_tree *mt)
{
	assert_int_equal(mt_validate(mt), 0);
}

/* Every test ends here: valid, then destroyed with no node left behind. */
static inline void check_done(struct maple_tree *mt, long nodes_before)
{
	check_valid(mt);
	mtree_destroy(mt);
	assert_true(mt_empty(mt));
	mt_rcu_barrier();
	assert_int_equal(mt_nr_allocated(), nodes_before);
}

/* All slots of @mt as (min, max, entry) triples; returns how many. */
struct mt_slot_rec {
	unsigned long min, max;
	void *entry;
};

static inline unsigned long mt_snapshot(struct maple_tree *mt, struct mt_slot_rec *out,
					unsigned long cap)
{
	MA_STATE(mas, mt, 0, 0);
	unsigned long n = 0;

	for (;;) {
		void *e = mas_walk(&mas);

		assert_true(n < cap);
		out[n].min = mas.index;
		out[n].max = mas.last;
		out[n].entry = e;
		n++;
		if (mas.last == ULONG_MAX)
			break;
		mas_set(&mas, mas.last + 1);
	}
	return n;
}

static inline int test_rcu_setup(void **state)
{
	(void)state;
	rcu_register_thread();
	return 0;
}

static inline int test_rcu_teardown(void **state)
{
	(void)state;
	rcu_unregister_thread();
	return 0;
}

#endif /* PAGELAB_TEST_MAPLE_HELPERS_H */
