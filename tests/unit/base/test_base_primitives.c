// SPDX-License-Identifier: MIT
/* test_base_primitives.c - spinlock and lock_stat, PRNG, rate-limited warnings, vCPUs, events. */
#include <pthread.h>
#include "helpers.h"

static struct pl_spinlock shared_lock;
static unsigned long shared_counter;

static void *locker(void *arg)
{
	for (int i = 0; i < 20000; i++) {
		spin_lock(&shared_lock);
		shared_counter++;
		spin_unlock(&shared_lock);
	}
	return arg;
}

static void test_spinlock_counts(void **state)
{
	pthread_t t[2];
	struct pl_lock_stat ls;

	(void)state;
	pl_spin_init(&shared_lock, true);
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, locker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pl_lock_stat_read(&shared_lock, &ls);
	assert_int_equal(shared_counter, 40000);
	assert_int_equal(ls.acquisitions, 40000);
	assert_true(ls.contentions <= ls.acquisitions);
	assert_true(ls.hold_max_ns <= ls.hold_ns);
	assert_true(spin_trylock(&shared_lock));
	assert_false(spin_trylock(&shared_lock));
	spin_unlock(&shared_lock);
	pl_lock_stat_read(&shared_lock, &ls);
	assert_int_equal(ls.acquisitions, 40001);
}

static void test_rng_deterministic(void **state)
{
	struct pl_rng a, b, c;
	int differ = 0;

	(void)state;
	pl_rng_seed(&a, 42);
	pl_rng_seed(&b, 42);
	pl_rng_seed(&c, 43);
	for (int i = 0; i < 1000; i++) {
		uint64_t x = pl_rng_next(&a);

		assert_int_equal(x, pl_rng_next(&b));
		differ += x != pl_rng_next(&c);
		assert_true(pl_rng_below(&a, 7) < 7);
		pl_rng_next(&b);
	}
	assert_true(differ > 990);
}

static void test_warn_ratelimited(void **state)
{
	unsigned long before = pl_warn_count();
	char last[256];

	(void)state;
	pl_warn_set_quiet(true);
	for (int i = 0; i < 50; i++)
		pl_warn_ratelimited("warning number %d", i);
	pl_warn_set_quiet(false);
	assert_int_equal(pl_warn_count() - before, 50);
	pl_warn_last(last, sizeof(last));
	assert_string_equal(last, "warning number 49");
}

static void test_vcpus_and_events(void **state)
{
	struct pl_config cfg;
	struct pl_machine *m;
	unsigned long ev[NR_PL_VM_EVENTS];

	(void)state;
	pl_config_default(&cfg);
	cfg.mem_bytes = 16 * MiB;
	cfg.nr_cpus = 4;
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	pl_warn_set_quiet(true);
	assert_int_equal(pl_enter(m, 4), -EINVAL);
	pl_warn_set_quiet(false);
	for (unsigned int cpu = 0; cpu < 4; cpu++) {
		assert_int_equal(pl_enter(m, cpu), 0);
		for (unsigned int i = 0; i <= cpu; i++)
			assert_int_equal(__free_pages(alloc_pages(GFP_KERNEL, 1), 1), 0);
	}
	pl_events_sum(m, ev);
	assert_int_equal(ev[PL_EV_PGALLOC], 10);
	assert_int_equal(ev[PL_EV_PGALLOC_PAGES], 20);
	assert_int_equal(ev[PL_EV_PGFREE], 10);
	assert_int_equal(m->cpus[3].events.ev[PL_EV_PGALLOC], 4);
	pl_leave();
	pl_warn_set_quiet(true);
	assert_null(alloc_pages(GFP_KERNEL, 0)); /* no machine entered */
	pl_warn_set_quiet(false);
	assert_int_equal(pl_check_machine(m), 0);
	pl_machine_destroy(m);
}

static void test_bad_config(void **state)
{
	struct pl_config cfg;

	(void)state;
	pl_config_default(&cfg);
	cfg.mem_bytes = 3 * MiB; /* not a multiple of a pageblock */
	pl_warn_set_quiet(true);
	assert_null(pl_machine_create(&cfg));
	cfg.mem_bytes = 0;
	assert_null(pl_machine_create(&cfg));
	pl_warn_set_quiet(false);
	assert_int_equal(pl_design_preset("no-such-design", &cfg.design), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinlock_counts),
		cmocka_unit_test(test_rng_deterministic),
		cmocka_unit_test(test_warn_ratelimited),
		cmocka_unit_test(test_vcpus_and_events),
		cmocka_unit_test(test_bad_config),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
