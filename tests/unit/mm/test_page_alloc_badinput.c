// SPDX-License-Identifier: MIT
/*
 * test_page_alloc_badinput.c - the bad-input table: each misuse gets its error, a
 * warning naming it, and leaves the machine's free state byte-identical.
 */
#include "helpers.h"

struct fixture {
	struct pl_machine *m;
	struct page *a3;	/* an order-3 block */
	struct page *p0;	/* an order-0 page */
	struct page *comp;	/* an order-2 compound page */
	struct snapshot before;
	unsigned long warns;
};

static int setup(void **state)
{
	static struct fixture f;

	f.m = test_machine("mt-counts");
	f.a3 = alloc_pages(GFP_KERNEL, 3);
	f.p0 = alloc_pages(GFP_KERNEL, 0);
	f.comp = alloc_pages(GFP_KERNEL | __GFP_COMP, 2);
	take_snapshot(f.m, &f.before);
	f.warns = pl_warn_count();
	pl_warn_set_quiet(true);
	*state = &f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	pl_warn_set_quiet(false);
	assert_int_equal(__free_pages(f->a3, 3), 0);
	assert_int_equal(__free_pages(f->p0, 0), 0);
	assert_int_equal(__free_pages(f->comp, 2), 0);
	assert_fully_coalesced(f->m);
	test_machine_done(f->m);
	return 0;
}

/* The call's warning was issued and says @what; nothing else changed. */
static void assert_rejected(struct fixture *f, const char *what)
{
	char last[256];

	assert_int_equal(pl_warn_count(), f->warns + 1);
	pl_warn_last(last, sizeof(last));
	if (!strstr(last, what))
		fail_msg("warning '%s' does not say '%s'", last, what);
	assert_unchanged(f->m, &f->before);
}

static void test_double_free(void **state)
{
	struct fixture *f = *state;
	struct page *page = alloc_pages(GFP_KERNEL, 0);

	assert_int_equal(__free_pages(page, 0), 0);
	take_snapshot(f->m, &f->before);
	f->warns = pl_warn_count();
	assert_int_equal(__free_pages(page, 0), -EINVAL);
	assert_rejected(f, "double free");
}

static void test_free_never_allocated(void **state)
{
	struct fixture *f = *state;
	struct page *page = pfn_to_page(f->m->max_pfn - 3); /* inside a free block */

	assert_int_equal(__free_pages(page, 0), -EINVAL);
	assert_rejected(f, "not allocated");
}

static void test_pfn_out_of_range(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(__free_pages(pfn_to_page(f->m->max_pfn + 5), 0), -EINVAL);
	assert_rejected(f, "out of range");
	f->warns++;
	assert_int_equal(__free_pages((struct page *)((char *)f->p0 + 8), 0), -EINVAL);
	assert_rejected(f, "out of range");
	f->warns++;
	assert_int_equal(free_pages((unsigned long)f->m->mem_base + f->m->config.mem_bytes, 0),
			 -EINVAL);
	assert_rejected(f, "not a page of this machine");
	f->warns++;
	assert_int_equal(free_pages((unsigned long)page_address(f->p0) + 12, 0), -EINVAL);
	assert_rejected(f, "not a page of this machine");
}

static void test_order_too_large(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(__free_pages(f->a3, MAX_PAGE_ORDER + 1), -EINVAL);
	assert_rejected(f, "above MAX_PAGE_ORDER");
	f->warns++;
	assert_null(alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1));
	assert_rejected(f, "above MAX_PAGE_ORDER");
}

static void test_misaligned_pfn(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(__free_pages(f->a3 + 1, 1), -EINVAL);
	assert_rejected(f, "misaligned");
}

static void test_refcount_held(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(free_frozen_pages(f->p0, 0), -EBUSY);
	assert_rejected(f, "nonzero _refcount");
	assert_int_equal(page_ref_count(f->p0), 1);
}

static void test_wrong_order(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(__free_pages(f->a3, 2), -EINVAL);
	assert_rejected(f, "order differs");
	assert_int_equal(page_ref_count(f->a3), 1);
}

static void test_tail_page(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(__free_pages(f->comp + 2, 0), -EINVAL);
	assert_rejected(f, "tail page");
}

static void test_put_page_noncompound(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(put_page(f->a3), -EINVAL);
	assert_rejected(f, "use __free_pages");
	assert_int_equal(page_ref_count(f->a3), 1);
}

static void test_get_page_free(void **state)
{
	struct fixture *f = *state;

	get_page(pfn_to_page(f->m->max_pfn - 1));
	assert_rejected(f, "not in use");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_double_free),	T(test_free_never_allocated), T(test_pfn_out_of_range),
		T(test_order_too_large), T(test_misaligned_pfn),      T(test_refcount_held),
		T(test_wrong_order),	T(test_tail_page),	      T(test_put_page_noncompound),
		T(test_get_page_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
