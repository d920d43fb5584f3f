// SPDX-License-Identifier: MIT
/*
 * test_vm_warn_sites.c - the PL_WARN_ON*() checks at the kernel's
 * VM_WARN_ON/VM_BUG_ON_PAGE sites: a free list corrupted behind the
 * allocator's back is caught AT the list operation that meets it (the
 * warning is there right after the call, before any checker runs), names
 * the rule and the page; with the machine's debug level 0 the same
 * corruption passes silently (the checks are off).
 */
#include <string.h>
#include "helpers.h"

/* The first block of the Normal zone's order-10 Movable list: the next one taken. */
static struct page *next_max_order_block(struct pl_machine *m)
{
	struct list_head *head =
		&m->node_zones[ZONE_NORMAL].free_area[MAX_PAGE_ORDER].free_list[MIGRATE_MOVABLE];

	assert_false(list_empty(head));
	return list_first_entry(head, struct page, buddy_list);
}

/* Allocate the corrupted block; Return: the PL_WARN_ON*() that fired in the call. */
static unsigned long alloc_it(struct page *expect, struct page **got)
{
	unsigned long before = pl_warn_on_count();

	*got = alloc_pages(GFP_KERNEL | __GFP_MOVABLE, MAX_PAGE_ORDER);
	assert_ptr_equal(*got, expect);
	return pl_warn_on_count() - before;
}

/* A listed head that records the wrong order: caught as it leaves the list. */
static void test_wrong_order_on_list(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct page *victim = next_max_order_block(m), *got;
	char msg[256], want[64];

	(void)state;
	pl_warn_set_quiet(true);
	WRITE_ONCE(victim->private, 3);		/* the corruption */
	assert_int_equal(alloc_it(victim, &got), 1);
	pl_warn_set_quiet(false);
	pl_warn_last(msg, sizeof(msg));
	assert_non_null(strstr(msg, "del_page_from_free_list"));
	assert_non_null(strstr(msg, "a block taken off a free list is a free head of that list's order"));
	snprintf(want, sizeof(want), "page pfn %#lx order 3 ", page_to_pfn(victim));
	assert_non_null(strstr(msg, want));
	/* the allocation itself went on as without CONFIG_DEBUG_VM: state whole */
	assert_int_equal(__free_pages(got, MAX_PAGE_ORDER), 0);
	test_machine_done(m);
}

/* A listed block whose pageblock changed type without the block moving lists. */
static void test_block_on_wrong_type_list(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct zone *zone = &m->node_zones[ZONE_NORMAL];
	struct page *victim = next_max_order_block(m), *got;
	unsigned long idx = (page_to_pfn(victim) - zone_pageblock_base(zone)) >> pageblock_order;
	unsigned char saved = zone->pageblock_flags[idx];
	char msg[256];

	(void)state;
	pl_warn_set_quiet(true);
	zone->pageblock_flags[idx] = MIGRATE_UNMOVABLE;		/* the corruption */
	assert_true(alloc_it(victim, &got) >= 1);
	pl_warn_set_quiet(false);
	pl_warn_last(msg, sizeof(msg));
	zone->pageblock_flags[idx] = saved;
	assert_int_equal(__free_pages(got, MAX_PAGE_ORDER), 0);
	/* the first check the block met names the list's type rule */
	assert_true(strstr(msg, "migratetype's list") != NULL);
	test_machine_done(m);
}

/* debug=0: the checks cost a flag test and report nothing. */
static void test_off_at_debug_0(void **state)
{
	struct pl_machine *m = test_machine_cfg(64 * MiB, 16 * MiB, "v6.18", 0);
	struct page *victim = next_max_order_block(m), *got;

	(void)state;
	assert_false(m->node_zones[ZONE_NORMAL].vm_debug);
	WRITE_ONCE(victim->private, 3);
	assert_int_equal(alloc_it(victim, &got), 0);
	assert_int_equal(__free_pages(got, MAX_PAGE_ORDER), 0);
	test_machine_done(m);
}

/* A normal run at debug 1 fires none of them. */
static void test_quiet_when_whole(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	unsigned long before = pl_warn_on_count();
	struct page *p[64];

	(void)state;
	for (unsigned int i = 0; i < 64; i++)
		p[i] = alloc_pages(GFP_KERNEL | (i & 1 ? __GFP_MOVABLE : 0), i % 5);
	for (unsigned int i = 0; i < 64; i++)
		assert_int_equal(__free_pages(p[i], i % 5), 0);
	drain_all_pages(NULL);
	assert_int_equal(pl_warn_on_count(), before);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wrong_order_on_list),
		cmocka_unit_test(test_block_on_wrong_type_list),
		cmocka_unit_test(test_off_at_debug_0),
		cmocka_unit_test(test_quiet_when_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
