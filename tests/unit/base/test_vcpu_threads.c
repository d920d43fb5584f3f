// SPDX-License-Identifier: MIT
/*
 * test_vcpu_threads.c - many vCPUs on few threads: with one thread a 64-vCPU run
 * repeats exactly (same events, same free lists, same per-CPU lists); with
 * two threads it completes and leaves a consistent machine.
 */
#include <pthread.h>
#include "helpers.h"

#define NR_VCPUS 64
#define LIVE 64

struct ctx {
	struct pl_machine *m;
	pthread_mutex_t lock; /* the live table is shared between vCPUs */
	struct pl_rng rng[NR_VCPUS];
	struct page *live[NR_VCPUS][LIVE];
	unsigned int order[NR_VCPUS][LIVE];
	unsigned long steps[NR_VCPUS];
};

static void enter(void *c, unsigned int vcpu)
{
	pl_enter(((struct ctx *)c)->m, vcpu);
}

/* Allocate into a random slot of a random vCPU's table, freeing what was there. */
static bool step(void *c, unsigned int vcpu)
{
	struct ctx *x = c;
	unsigned int owner, slot, order;
	struct page *old, *page;

	if (x->steps[vcpu]++ == 2000)
		return false;
	owner = (unsigned int)pl_rng_below(&x->rng[vcpu], NR_VCPUS);
	slot = (unsigned int)pl_rng_below(&x->rng[vcpu], LIVE);
	order = (unsigned int)pl_rng_below(&x->rng[vcpu], 4);
	page = alloc_pages(GFP_KERNEL | __GFP_NOWARN, order);
	pthread_mutex_lock(&x->lock);
	old = x->live[owner][slot];
	x->live[owner][slot] = page;
	{
		unsigned int o = x->order[owner][slot];

		x->order[owner][slot] = order;
		order = o;
	}
	pthread_mutex_unlock(&x->lock);
	if (old && __free_pages(old, order))
		abort();
	return true;
}

static void run(struct ctx *x, const char *design, unsigned int threads, unsigned long *ev,
		char *text, long *len)
{
	struct pl_config cfg;
	struct pl_vcpu_run r = { .nr_vcpus = NR_VCPUS, .nr_threads = threads, .slice = 7,
				 .enter = enter, .step = step, .ctx = x };

	memset(x, 0, sizeof(*x));
	pthread_mutex_init(&x->lock, NULL);
	pl_config_default(&cfg);
	cfg.mem_bytes = 256 * MiB;
	cfg.dma32_bytes = 64 * MiB;
	cfg.nr_cpus = NR_VCPUS;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	x->m = pl_machine_create(&cfg);
	for (int v = 0; v < NR_VCPUS; v++)
		pl_rng_seed(&x->rng[v], 99 + (uint64_t)v);
	assert_int_equal(pl_run_vcpus(&r), 0);
	pl_enter(x->m, 0);
	pl_events_sum(x->m, ev);
	*len = pl_show_zoneinfo(x->m, text, 1 << 20);
	assert_true(*len > 0);
	assert_int_equal(pl_check_machine(x->m), 0);
	for (int v = 0; v < NR_VCPUS; v++)
		for (int s = 0; s < LIVE; s++)
			if (x->live[v][s])
				assert_int_equal(__free_pages(x->live[v][s], x->order[v][s]), 0);
	assert_fully_coalesced(x->m);
	test_machine_done(x->m);
}

static void test_one_thread_is_deterministic(void **state)
{
	static struct ctx x;
	static char a[1 << 20], b[1 << 20];
	unsigned long ea[NR_PL_VM_EVENTS], eb[NR_PL_VM_EVENTS];
	long la, lb;
	const char *designs[] = { "v6.18", "pcp-owner" };

	(void)state;
	for (int d = 0; d < 2; d++) {
		run(&x, designs[d], 1, ea, a, &la);
		run(&x, designs[d], 1, eb, b, &lb);
		assert_memory_equal(ea, eb, sizeof(ea));
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, (size_t)la); /* every pcp's count and high too */
		assert_int_equal(ea[PL_EV_PGALLOC], NR_VCPUS * 2000);
	}
}

static void test_two_threads_consistent(void **state)
{
	static struct ctx x;
	static char a[1 << 20];
	unsigned long ev[NR_PL_VM_EVENTS];
	long len;

	(void)state;
	run(&x, "pcp-owner", 2, ev, a, &len);
	assert_int_equal(ev[PL_EV_PGALLOC], NR_VCPUS * 2000);
}

static void test_bad_runs(void **state)
{
	struct pl_vcpu_run r = { .nr_vcpus = 4, .nr_threads = 8, .slice = 1, .step = step };

	(void)state;
	assert_int_equal(pl_run_vcpus(&r), -EINVAL); /* more threads than vCPUs */
	r.nr_threads = 0;
	assert_int_equal(pl_run_vcpus(&r), -EINVAL);
	r.nr_threads = 1;
	r.slice = 0;
	assert_int_equal(pl_run_vcpus(&r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_thread_is_deterministic),
		cmocka_unit_test(test_two_threads_consistent),
		cmocka_unit_test(test_bad_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
