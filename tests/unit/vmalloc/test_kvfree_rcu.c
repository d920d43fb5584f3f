// SPDX-License-Identifier: MIT
/*
 * test_kvfree_rcu.c - kvfree_rcu() with one and two arguments: objects
 * are batched (a page of pointers per block), freed only after a grace
 * period, never while a reader that could see them is inside
 * rcu_read_lock(); the two-argument form falls back to the object's own
 * rcu_head when no block page is cached; bad input warns, fails and
 * changes nothing. Every test ends with the space empty and the machine
 * fully coalesced.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>
#include <urcu.h>
#include "vmalloc_helpers.h"

struct test_kvfree_rcu {
	struct callback_head rcu;
	unsigned char array[20];
};

static void kvfree_done(struct pl_machine *m)
{
	kvfree_rcu_barrier();
	assert_int_equal(pl_kvfree_rcu_pending(m), 0);
	vm_test_done(m);
}

static void test_one_and_two_args(void **state)
{
	struct pl_machine *m = vm_test_machine(2, "v6.18");
	struct pl_vmalloc_stats st;

	(void)state;
	for (int i = 0; i < 3000; i++) {
		struct test_kvfree_rcu *p = vmalloc(PAGE_SIZE);

		assert_non_null(p);
		assert_int_equal(vmalloc_write(&p->array[0], "a", 1), 0);
		if (i % 2)
			assert_int_equal(kvfree_rcu(p, rcu), 0);
		else
			assert_int_equal(kvfree_rcu_mightsleep(p), 0);
	}
	/* Batched: not all freed yet, none lost. */
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.vmalloc_pages + 0, st.nr_busy);
	assert_true(pl_kvfree_rcu_pending(m) > 0);
	assert_int_equal(pl_kvfree_rcu_pending(m), st.nr_busy);
	assert_int_equal(pl_check_vmalloc(m), 0);
	kvfree_rcu_barrier();
	assert_int_equal(pl_kvfree_rcu_pending(m), 0);
	pl_vmalloc_stats(m, &st);
	assert_int_equal(st.nr_busy, 0);
	assert_true(vm_event(m, PL_EV_KVFREE_RCU_BATCH) >= 1);
	kvfree_done(m);
}

/* With no cached block page the two-argument form uses the object's rcu_head. */
static void test_head_channel(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct test_kvfree_rcu *p[3];
	struct callback_head h;

	(void)state;
	for (int i = 0; i < 3; i++) {
		p[i] = vmalloc(PAGE_SIZE);
		assert_int_equal(kvfree_rcu(p[i], rcu), 0);
	}
	/* Each head names its object and links the previous one. */
	assert_int_equal(vmalloc_read(&h, &p[2]->rcu, sizeof(h)), 0);
	assert_ptr_equal((void *)h.func, p[2]);
	assert_ptr_equal(h.next, &p[1]->rcu);
	assert_int_equal(pl_kvfree_rcu_pending(m), 3);
	kvfree_rcu_barrier();
	assert_null(find_vm_area(p[0]));
	assert_null(find_vm_area(p[2]));
	kvfree_done(m);
}

struct reader {
	struct pl_machine *m;
	int state;	/* 1: inside the read side, 2: leave it, 3: left */
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;

	rcu_register_thread();
	rcu_read_lock();
	__atomic_store_n(&r->state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) != 2)
		usleep(100);
	rcu_read_unlock();
	__atomic_store_n(&r->state, 3, __ATOMIC_RELEASE);
	rcu_unregister_thread();
	return NULL;
}

/* Nothing is freed while a reader that started before kvfree_rcu() is inside. */
static void test_waits_for_readers(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct reader r = { m, 0 };
	enum { N = 1200 };	/* more than one block: a batch is queued */
	static void *objs[N];
	pthread_t t;

	(void)state;
	assert_int_equal(pthread_create(&t, NULL, reader_fn, &r), 0);
	while (__atomic_load_n(&r.state, __ATOMIC_ACQUIRE) != 1)
		usleep(100);
	for (int i = 0; i < N; i++) {
		objs[i] = vmalloc(PAGE_SIZE);
		assert_int_equal(kvfree_rcu_mightsleep(objs[i]), 0);
	}
	for (int k = 0; k < 20; k++) {
		usleep(1000);
		kvfree_rcu_poll();
	}
	for (int i = 0; i < N; i++)
		assert_non_null(find_vm_area(objs[i]));	/* all still there */
	assert_int_equal(pl_kvfree_rcu_pending(m), N);
	__atomic_store_n(&r.state, 2, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	kvfree_rcu_barrier();
	for (int i = 0; i < N; i++)
		assert_null(find_vm_area(objs[i]));
	kvfree_done(m);
}

static void test_bad_input(void **state)
{
	struct pl_machine *m = vm_test_machine(1, "v6.18");
	struct test_kvfree_rcu *p = vmalloc(2 * PAGE_SIZE);
	struct page *page = alloc_page(GFP_KERNEL);
	void *vm = vmap(&page, 1, VM_MAP, PAGE_KERNEL);
	unsigned long w;

	(void)state;
	pl_warn_set_quiet(true);
	w = pl_warn_count();
	assert_int_equal(kvfree_call_rcu(NULL, (char *)p + 8), -EINVAL);
	assert_warned(w, "not the start");
	w = pl_warn_count();
	assert_int_equal(kvfree_call_rcu(NULL, (void *)0x1000), -EINVAL);
	assert_warned(w, "not the start");
	w = pl_warn_count();
	assert_int_equal(kvfree_call_rcu(NULL, vm), -EINVAL);	/* vmap: not vmalloc'ed */
	assert_warned(w, "not the start");
	w = pl_warn_count();
	assert_int_equal(kvfree_call_rcu((struct callback_head *)((char *)p + 2 * PAGE_SIZE), p),
			 -EINVAL);
	assert_warned(w, "rcu_head outside");
	pl_warn_set_quiet(false);
	assert_int_equal(pl_kvfree_rcu_pending(m), 0);
	assert_non_null(find_vm_area(p));
	assert_int_equal(pl_check_vmalloc(m), 0);
	assert_int_equal(kvfree_rcu(p, rcu), 0);
	assert_int_equal(vunmap(vm), 0);
	__free_page(page);
	kvfree_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_and_two_args),
		cmocka_unit_test(test_head_channel),
		cmocka_unit_test(test_waits_for_readers),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
