// SPDX-License-Identifier: MIT
/*
 * test_compaction_threads.c - compaction on a machine with a migrate
 * holder and several real threads: while worker threads allocate and free
 * movable pages (each on its own vCPU), others compact (direct compaction
 * through order-9 allocations, and whole-zone compact_zone() runs), so the
 * migrate scanner looks at pages other threads are allocating and freeing.
 * It takes a speculative reference before it reads a page's allocation
 * state, as the kernel's folio_try_get(), and rechecks after; under
 * `make test-tsan` this test shows no data race. Afterwards every held
 * page still holds its stamp and the machine checks clean.
 */
#include <pthread.h>
#include <stdio.h>
#include "helpers.h"
#include "pagelab/compaction.h"
#include "mm/internal.h"

#define NR_WORKERS	3
#define SLOTS		4096	/* per worker */
#define ROUNDS		20000

/* The holder: each worker's slots, one lock for all (the holder's own lock). */
struct slot {
	struct page *page;
	unsigned int order;
	bool isolated;
	unsigned long stamp;
};

struct holder {
	pthread_mutex_t lock;
	struct slot slots[NR_WORKERS][SLOTS];
	unsigned long moved;
};

static struct holder hold = { .lock = PTHREAD_MUTEX_INITIALIZER };
static struct pl_machine *mach;

/* A held page's private: its worker and slot, + 1. */
static unsigned long key_of(unsigned int w, unsigned int i) { return (unsigned long)w * SLOTS + i + 1; }

static struct slot *slot_of(struct page *page)
{
	unsigned long key = page->private;

	if (!key || key > NR_WORKERS * SLOTS)
		return NULL;
	return &hold.slots[(key - 1) / SLOTS][(key - 1) % SLOTS];
}

static int h_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct slot *s;
	int ret = -1;

	(void)ctx;
	pthread_mutex_lock(&hold.lock);
	s = slot_of(page);
	if (s && s->page == page && s->order == order && !s->isolated) {
		s->isolated = true;
		ret = 0;
	}
	pthread_mutex_unlock(&hold.lock);
	return ret;
}

static void h_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	struct slot *s;

	(void)ctx;
	(void)order;
	pthread_mutex_lock(&hold.lock);
	s = slot_of(src);
	assert_non_null(s);
	dst->private = src->private;
	src->private = 0;
	s->page = dst;
	s->isolated = false;
	hold.moved++;
	pthread_mutex_unlock(&hold.lock);
}

static void h_putback(void *ctx, struct page *page, unsigned int order)
{
	struct slot *s;

	(void)ctx;
	(void)order;
	pthread_mutex_lock(&hold.lock);
	s = slot_of(page);
	assert_non_null(s);
	s->isolated = false;
	pthread_mutex_unlock(&hold.lock);
}

static const struct pl_migrate_ops ops = { h_isolate, h_migrate, h_putback };

static unsigned long rng(unsigned long *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* Free slot @i of worker @w unless compaction has it isolated. */
static void release_slot(unsigned int w, unsigned int i)
{
	struct page *page = NULL;
	unsigned int order = 0;

	pthread_mutex_lock(&hold.lock);
	if (hold.slots[w][i].page && !hold.slots[w][i].isolated) {
		page = hold.slots[w][i].page;
		order = hold.slots[w][i].order;
		assert_int_equal(*(unsigned long *)page_address(page), hold.slots[w][i].stamp);
		hold.slots[w][i].page = NULL;
		page->private = 0;
	}
	pthread_mutex_unlock(&hold.lock);
	if (page)
		assert_int_equal(__free_pages(page, order), 0);
}

static void *worker(void *arg)
{
	unsigned int w = (unsigned int)(uintptr_t)arg;
	unsigned long x = 0x9e3779b97f4a7c15UL * (w + 1);

	assert_int_equal(pl_enter(mach, w), 0);
	for (unsigned int r = 0; r < ROUNDS; r++) {
		unsigned int i = (unsigned int)(rng(&x) % SLOTS);
		bool filled;

		/*
		 * Only this worker fills its slots, but compaction moves a
		 * filled slot's page under the holder's lock: read it there.
		 */
		pthread_mutex_lock(&hold.lock);
		filled = hold.slots[w][i].page != NULL;
		pthread_mutex_unlock(&hold.lock);
		if (filled) {
			release_slot(w, i);
		} else {
			unsigned int order = rng(&x) % 4 == 0 ? 1 : 0;
			gfp_t gfp = GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN | (order ? __GFP_COMP : 0);
			struct page *page = alloc_pages(gfp, order);

			if (page) {
				unsigned long stamp = rng(&x);

				*(unsigned long *)page_address(page) = stamp;
				pthread_mutex_lock(&hold.lock);
				page->private = key_of(w, i);
				hold.slots[w][i] = (struct slot){ page, order, false, stamp };
				pthread_mutex_unlock(&hold.lock);
			}
		}
		/* now and then an order-9 allocation: direct compaction */
		if (r % 512 == 511) {
			struct page *big = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_COMP |
						       __GFP_NOWARN | __GFP_RETRY_MAYFAIL, 9);

			if (big)
				__free_pages(big, 9);
		}
	}
	pl_leave();
	return NULL;
}

static void *compactor(void *arg)
{
	volatile bool *stop = arg;

	assert_int_equal(pl_enter(mach, NR_WORKERS), 0);
	while (!__atomic_load_n(stop, __ATOMIC_ACQUIRE)) {
		pl_compact_zone(mach, ZONE_NORMAL, -1, true);
		pl_compact_zone(mach, ZONE_NORMAL, 9, false);
		pl_kcompactd_run(mach, 0);
	}
	pl_leave();
	return NULL;
}

static void test_compaction_against_threads(void **state)
{
	pthread_t tid[NR_WORKERS], ctid;
	bool stop = false;
	struct pl_config cfg;

	(void)state;
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = NR_WORKERS + 1;
	mach = pl_machine_create(&cfg);
	assert_non_null(mach);
	assert_int_equal(pl_set_migrate_ops(mach, &ops, NULL), 0);
	assert_int_equal(pthread_create(&ctid, NULL, compactor, &stop), 0);
	for (unsigned int w = 0; w < NR_WORKERS; w++)
		assert_int_equal(pthread_create(&tid[w], NULL, worker, (void *)(uintptr_t)w), 0);
	for (unsigned int w = 0; w < NR_WORKERS; w++)
		assert_int_equal(pthread_join(tid[w], NULL), 0);
	__atomic_store_n(&stop, true, __ATOMIC_RELEASE);
	assert_int_equal(pthread_join(ctid, NULL), 0);

	assert_int_equal(pl_enter(mach, 0), 0);
	assert_true(hold.moved > 0);
	for (unsigned int w = 0; w < NR_WORKERS; w++)
		for (unsigned int i = 0; i < SLOTS; i++) {
			assert_false(hold.slots[w][i].isolated);
			release_slot(w, i);
		}
	drain_all_pages(NULL);
	assert_int_equal(pl_check_machine(mach), 0);
	pl_set_migrate_ops(mach, NULL, NULL);
	pl_leave();
	pl_machine_destroy(mach);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compaction_against_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
