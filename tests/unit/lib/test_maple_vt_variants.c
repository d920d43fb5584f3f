// SPDX-License-Identifier: MIT
/*
 * test_maple_vt_variants.c - the maple tree's walks and stores run from a
 * body compiled without virtual time when the calling thread has none
 * (mt_vt_on() false) and from one that charges every node when it has:
 * the same random allocation-tree workload (gap search, store, erase,
 * load, a NULL store over a range) runs on a thread without virtual time
 * and on one with a vCPU current, and the two trees must give the same
 * answers and end slot for slot the same; the second's clock must have
 * advanced by whole node steps, the first must have charged nothing.
 */
#include <limits.h>
#include "maple_helpers.h"
#include "pagelab/base.h"

#define STEPS	20000
#define LIVE	3000
#define LO	0x1000UL
#define HI	0x80000UL

struct outcome {
	unsigned long got[STEPS];	/* per step: a start, an entry number or an error */
	struct mt_slot_rec slots[4 * LIVE + 8];
	unsigned long nr_slots;
	uint64_t clock;
};

static const unsigned long reserved_token;
#define RESERVED ((void *)&reserved_token)

static void run(struct pl_vtime *vt, uint64_t seed, struct outcome *out)
{
	static unsigned long live[LIVE];
	unsigned long nr_live = 0;
	struct maple_tree mt;
	struct pl_rng rng;
	long nodes = mt_nr_allocated();

	memset(out, 0, sizeof(*out));
	mt_init_flags(&mt, MT_FLAGS_ALLOC_RANGE);
	assert_int_equal(mtree_store_range(&mt, 0, LO - 1, RESERVED, GFP_KERNEL), 0);
	assert_int_equal(mtree_store_range(&mt, HI + 1, ULONG_MAX, RESERVED, GFP_KERNEL), 0);
	pl_vt_enter(vt, 0);
	pl_rng_seed(&rng, seed);
	for (int step = 0; step < STEPS; step++) {
		unsigned int op = (unsigned int)pl_rng_below(&rng, 100);

		if (nr_live < LIVE && (nr_live == 0 || op < 50)) {
			unsigned long size = 1 + pl_rng_below(&rng, 32);
			bool rev = pl_rng_below(&rng, 8) == 0;
			MA_STATE(mas, &mt, 0, 0);
			int ret;

			mtree_lock(&mt);
			ret = rev ? mas_empty_area_rev(&mas, LO, HI, size) :
				    mas_empty_area(&mas, LO, HI, size);
			if (!ret)
				ret = mas_store_gfp(&mas, mk(mas.index), GFP_KERNEL);
			mtree_unlock(&mt);
			out->got[step] = ret ? (unsigned long)-ret : mas.index;
			if (!ret)
				live[nr_live++] = mas.index;
		} else if (op < 85) {
			unsigned long i = pl_rng_below(&rng, nr_live);

			out->got[step] = unmk(mtree_erase(&mt, live[i]));
			live[i] = live[--nr_live];
		} else if (op < 97) {
			void *e = mtree_load(&mt, LO + pl_rng_below(&rng, HI - LO));

			out->got[step] = e == RESERVED ? 1 : e ? unmk(e) : 0;
		} else if (nr_live) {
			/* Clear a live area's range and what follows it, as one NULL store. */
			unsigned long i = pl_rng_below(&rng, nr_live), a = live[i];

			out->got[step] = (unsigned long)mtree_store_range(&mt, a, a, NULL, GFP_KERNEL);
			live[i] = live[--nr_live];
		}
	}
	out->clock = vt ? vt->cpu[0].now : 0;
	pl_vt_enter(NULL, 0);
	out->nr_slots = mt_snapshot(&mt, out->slots, ARRAY_SIZE(out->slots));
	check_done(&mt, nodes);
}

static void test_variants_agree(void **state)
{
	static struct outcome plain, timed;
	struct pl_topology topo = { 1, 1, 1 };
	struct pl_vt_params p;
	struct pl_vtime *vt;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.path_ps[VT_P_MT_NODE] = 1000;
	vt = pl_vtime_create(1, &topo, &p);
	assert_non_null(vt);
	for (uint64_t seed = 1; seed <= 3; seed++) {
		run(NULL, seed, &plain);
		vt->cpu[0].now = 0;
		run(vt, seed, &timed);
		assert_int_equal(plain.clock, 0);
		assert_memory_equal(plain.got, timed.got, sizeof(plain.got));
		assert_int_equal(plain.nr_slots, timed.nr_slots);
		assert_memory_equal(plain.slots, timed.slots,
				    plain.nr_slots * sizeof(plain.slots[0]));
		/* Every step charged: at least one node per operation, in whole steps. */
		assert_true(timed.clock >= (uint64_t)STEPS * 1000);
		assert_int_equal(timed.clock % 1000, 0);
	}
	pl_vtime_destroy(vt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_variants_agree),
	};

	return cmocka_run_group_tests(tests, test_rcu_setup, test_rcu_teardown);
}
