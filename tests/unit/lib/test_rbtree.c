// SPDX-License-Identifier: MIT
/*
 * test_rbtree.c - src/lib/rbtree.c against a model: random inserts
 * and erases, plain and augmented (maximum of a value over the subtree,
 * the shape vmalloc's free tree uses), checking after every step the
 * red-black invariants, the in-order sequence against a sorted model, and
 * every augmented value recomputed from scratch.
 */
#include "helpers.h"
#include "lib/rbtree.h"

#define N_KEYS 512

struct item {
	struct rb_node rb;
	unsigned long key;
	unsigned long val;
	unsigned long max;	/* augmented: max val over the subtree */
	bool in;
};

static inline unsigned long item_val(struct item *it) { return it->val; }

RB_DECLARE_CALLBACKS_MAX(static, item_cb, struct item, rb, unsigned long, max, item_val);

static struct item items[N_KEYS];

static void insert(struct rb_root *root, struct item *it, bool augment)
{
	struct rb_node **link = &root->rb_node, *parent = NULL;

	while (*link) {
		parent = *link;
		link = it->key < rb_entry(parent, struct item, rb)->key ? &parent->rb_left
									: &parent->rb_right;
	}
	if (augment) {
		/* raise the path first, as rbtree.h asks */
		it->max = it->val;
		for (struct rb_node *n = parent; n; n = rb_parent(n))
			if (rb_entry(n, struct item, rb)->max < it->val)
				rb_entry(n, struct item, rb)->max = it->val;
		rb_link_node(&it->rb, parent, link);
		rb_insert_augmented(&it->rb, root, &item_cb);
	} else {
		rb_link_node(&it->rb, parent, link);
		rb_insert_color(&it->rb, root);
	}
	it->in = true;
}

static unsigned long check_max(struct rb_node *n)
{
	struct item *it;
	unsigned long m, l, r;

	if (!n)
		return 0;
	it = rb_entry(n, struct item, rb);
	l = check_max(n->rb_left);
	r = check_max(n->rb_right);
	m = max(it->val, max(l, r));
	assert_int_equal(it->max, m);
	return m;
}

static void check(struct rb_root *root, bool augment)
{
	unsigned long k = 0, count = 0;
	struct rb_node *n;

	assert_true(rb_check(root) > 0);
	for (n = rb_first(root); n; n = rb_next(n)) {
		struct item *it = rb_entry(n, struct item, rb);

		while (k < N_KEYS && !items[k].in)
			k++;
		assert_ptr_equal(it, &items[k]);
		k++;
		count++;
	}
	for (; k < N_KEYS; k++)
		assert_false(items[k].in);
	/* and backwards */
	for (n = rb_last(root); n; n = rb_prev(n))
		count--;
	assert_int_equal(count, 0);
	if (augment)
		check_max(root->rb_node);
}

static void run(bool augment, uint64_t seed)
{
	struct rb_root root = RB_ROOT;
	struct pl_rng rng;

	pl_rng_seed(&rng, seed);
	for (unsigned long i = 0; i < N_KEYS; i++)
		items[i] = (struct item){ .key = i, .val = pl_rng_below(&rng, 1000) };
	for (int step = 0; step < 20000; step++) {
		struct item *it = &items[pl_rng_below(&rng, N_KEYS)];

		if (it->in) {
			if (augment)
				rb_erase_augmented(&it->rb, &root, &item_cb);
			else
				rb_erase(&it->rb, &root);
			assert_true(RB_EMPTY_NODE(&it->rb));
			it->in = false;
		} else {
			insert(&root, it, augment);
		}
		if (step % 7 == 0 || step > 19900)
			check(&root, augment);
	}
	/* drain completely */
	for (unsigned long i = 0; i < N_KEYS; i++) {
		if (!items[i].in)
			continue;
		if (augment)
			rb_erase_augmented(&items[i].rb, &root, &item_cb);
		else
			rb_erase(&items[i].rb, &root);
		items[i].in = false;
		check(&root, augment);
	}
	assert_true(RB_EMPTY_ROOT(&root));
}

static void test_plain_random(void **state)
{
	(void)state;
	run(false, 1);
	run(false, 2);
}

static void test_augmented_random(void **state)
{
	(void)state;
	run(true, 3);
	run(true, 4);
}

/* Ascending and descending inserts: the rotation-heavy cases. */
static void test_sequential(void **state)
{
	struct rb_root root = RB_ROOT;

	(void)state;
	for (unsigned long i = 0; i < N_KEYS; i++)
		items[i] = (struct item){ .key = i, .val = i };
	for (unsigned long i = 0; i < N_KEYS; i++)
		insert(&root, &items[i], true);
	check(&root, true);
	assert_int_equal(rb_entry(root.rb_node, struct item, rb)->max, N_KEYS - 1);
	/* erase the maximum repeatedly: the root's max must follow */
	for (unsigned long i = N_KEYS; i-- > 1;) {
		rb_erase_augmented(&items[i].rb, &root, &item_cb);
		items[i].in = false;
		assert_int_equal(rb_entry(root.rb_node, struct item, rb)->max, i - 1);
	}
	check(&root, true);
}

/* The checker is not blind: a broken colour or a stale max is caught. */
static void test_check_catches_corruption(void **state)
{
	struct rb_root root = RB_ROOT;

	(void)state;
	for (unsigned long i = 0; i < 16; i++) {
		items[i] = (struct item){ .key = i, .val = i };
		insert(&root, &items[i], false);
	}
	assert_true(rb_check(&root) > 0);
	root.rb_node->__rb_parent_color &= ~1UL;	/* a red root */
	assert_int_equal(rb_check(&root), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_random),
		cmocka_unit_test(test_augmented_random),
		cmocka_unit_test(test_sequential),
		cmocka_unit_test(test_check_catches_corruption),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
