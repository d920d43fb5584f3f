// SPDX-License-Identifier: MIT
/*
 * test_vtime_vmalloc.c - virtual time prices vmalloc's index by its steps
 * (seed 004): a search of the free space costs one VT_P_RB_NODE
 * or VT_P_MT_NODE per node it visits, under free_vmap_area_lock, so
 *  - the same request over a deep free tree (many holes) costs more, and
 *    holds the lock longer, than over a tree of one area, on either index;
 *  - a vCPU searching a tree another vCPU built pays a transfer per node
 *    line it reads, more of them over the deeper tree;
 *  - the vmalloc layer's locks cost VMAP_LOCK, not the page allocator's
 *    LOCK;
 *  - with the default costs two identical runs give bit-identical clocks
 *    and counters (line addresses come from 64-byte aligned slabs);
 *  - so do two identical interleaved runs of test_vmalloc's percpu and
 *    kvfree_rcu work on four vCPUs, with the host heap moved in between:
 *    kvfree_rcu's grace periods end at the interleaver's step boundaries,
 *    not when a host thread gets round to it, so a full batch is freed on
 *    its vCPU's very next call;
 *  - the host structures whose lines the model touches (the vmalloc space
 *    with free_vmap_area_lock, the object caches, the maple index, the
 *    percpu space) start on a 64-byte line, whatever the heap held before.
 * Asserts behaviour (more, less, equal), never a time of the host.
 */
#include <stdlib.h>
#include "vmalloc_helpers.h"

#define P PAGE_SIZE
#define NR_AREAS 1024

/* A 1-vCPU-or-more machine with vtime on, @spec over the anchors' costs. */
static struct pl_machine *vt_machine(unsigned int cpus, const char *design, const char *spec)
{
	struct pl_config cfg;
	struct pl_machine *m;

	if (spec)
		assert_int_equal(setenv("PAGELAB_VT_PARAMS", spec, 1), 0);
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.nr_cpus = cpus;
	cfg.tlb_flush_ns_per_cpu = 0;
	cfg.vtime = true;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	m = pl_machine_create(&cfg);
	unsetenv("PAGELAB_VT_PARAMS");
	assert_non_null(m);
	assert_non_null(m->vt);
	assert_int_equal(pl_enter(m, 0), 0);
	return m;
}

static struct vmap_area *area(unsigned long size)
{
	int err;

	return alloc_vmap_area(size, P, VMALLOC_START, VMALLOC_END, NUMA_NO_NODE,
			       GFP_KERNEL | __GFP_NOWARN, 0, NULL, &err);
}

/* @n one-page areas, every other one freed: n / 2 one-page holes in the free index. */
static void make_holes(struct vmap_area **va, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		va[i] = area(P);
		assert_non_null(va[i]);
	}
	for (unsigned int i = 0; i < n; i += 2) {
		free_vmap_area(va[i]);
		va[i] = NULL;
	}
}

static void free_rest(struct vmap_area **va, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (va[i])
			free_vmap_area(va[i]);
}

struct probe {
	uint64_t ps;		/* the vCPU's clock over the probe */
	uint64_t hold_ps;	/* free_vmap_area_lock's last hold */
	uint64_t transfers;
};

/*
 * On vCPU @cpu, a two-page area (no hole holds it: the search must pass
 * them all) and its free.
 */
static struct probe probe(struct pl_machine *m, unsigned int cpu)
{
	struct pl_vt_cpu *c = &m->vt->cpu[cpu];
	struct pl_spinlock *lock = &m->vmap->free.lock;
	uint64_t t0, x0;
	struct vmap_area *va;
	struct probe r;

	assert_int_equal(pl_enter(m, cpu), 0);
	t0 = c->now;
	x0 = c->transfers;
	va = area(2 * P);
	assert_non_null(va);
	r.hold_ps = lock->vt_free_at - lock->vt_acq_at;
	free_vmap_area(va);
	r.ps = c->now - t0;
	r.transfers = c->transfers - x0;
	assert_int_equal(pl_enter(m, 0), 0);
	return r;
}

/* One probe over @holes holes (0: the whole space is one area), node steps only. */
static struct probe probe_over(const char *design, unsigned int holes, const char *spec,
			       unsigned int cpu)
{
	static struct vmap_area *va[2 * NR_AREAS];
	struct pl_machine *m = vt_machine(2, design, spec);
	struct probe r;

	make_holes(va, 2 * holes);
	r = probe(m, cpu);
	free_rest(va, 2 * holes);
	vm_test_done(m);
	return r;
}

static void check_depth(const char *design)
{
	const char *steps = "ZERO,P_RB_NODE=1000,P_MT_NODE=1000";
	struct probe shallow = probe_over(design, 0, steps, 0);
	struct probe deep = probe_over(design, NR_AREAS, steps, 0);

	/* Only steps cost (1 ns each): the deep search takes more of them. */
	assert_true(shallow.ps > 0);
	assert_true(deep.ps > shallow.ps);
	assert_int_equal(shallow.ps % 1000, 0);
	assert_int_equal(deep.ps % 1000, 0);
	/* ... and holds free_vmap_area_lock for longer. */
	assert_true(deep.hold_ps > shallow.hold_ps);
	assert_int_equal(shallow.transfers, 0);	/* one vCPU: nothing moves */
	assert_int_equal(deep.transfers, 0);
}

static void test_rbtree_depth(void **state)
{
	(void)state;
	check_depth("v6.18");
}

static void test_maple_depth(void **state)
{
	(void)state;
	check_depth("maple-index");
}

/* The rbtree's search steps are RB_NODE's, the maple tree's MT_NODE's. */
static void test_step_kinds(void **state)
{
	(void)state;
	assert_int_equal(probe_over("v6.18", NR_AREAS, "ZERO,P_MT_NODE=1000", 0).ps, 0);
	assert_true(probe_over("v6.18", NR_AREAS, "ZERO,P_RB_NODE=1000", 0).ps > 0);
	assert_int_equal(probe_over("maple-index", NR_AREAS, "ZERO,P_RB_NODE=1000", 0).ps, 0);
	assert_true(probe_over("maple-index", NR_AREAS, "ZERO,P_MT_NODE=1000", 0).ps > 0);
}

/*
 * vCPU 0 built the tree: vCPU 1's search reads its node lines, a transfer
 * each, more of them over the deep tree (boot's tree of one area was built
 * before the clocks started: no line of it has a writer).
 */
static void test_transfers_by_depth(void **state)
{
	const char *xfer = "ZERO,XFER_CORE=1000,XFER_SOCKET=1000,XFER_REMOTE=1000";
	const char *designs[] = { "v6.18", "maple-index" };

	(void)state;
	for (unsigned int d = 0; d < 2; d++) {
		struct probe shallow = probe_over(designs[d], 0, xfer, 1);
		struct probe deep = probe_over(designs[d], NR_AREAS, xfer, 1);

		assert_true(deep.transfers > shallow.transfers + 4);
		assert_true(deep.ps > shallow.ps);
	}
}

/* The vmalloc layer's locks cost VMAP_LOCK; the page allocator's LOCK is not theirs. */
static void test_vmap_lock_cost(void **state)
{
	struct probe a = probe_over("v6.18", 0, "ZERO,LOCK=1000", 0);
	struct probe b = probe_over("v6.18", 0, "ZERO,VMAP_LOCK=1000", 0);
	struct pl_vt_params p;

	(void)state;
	assert_int_equal(a.ps, 0);	/* no page is allocated: no PCP lock */
	/* free_vmap_area_lock twice, the busy node lock twice, at least */
	assert_true(b.ps >= 4000);
	assert_int_equal(b.ps % 1000, 0);
	pl_vt_params_default(&p);
	assert_true(p.path_ps[VT_P_RB_NODE] > 0 && p.path_ps[VT_P_MT_NODE] > 0);
}

/* Default costs, two vCPUs building and probing: the same run, the same clocks. */
static void det_run(const char *design, uint64_t clocks[2], uint64_t xfers[2])
{
	static struct vmap_area *va[2 * NR_AREAS];
	struct pl_machine *m = vt_machine(2, design, NULL);

	for (unsigned int i = 0; i < 2 * NR_AREAS; i++) {
		assert_int_equal(pl_enter(m, i & 1), 0);	/* both vCPUs write the tree */
		va[i] = area(P);
		assert_non_null(va[i]);
	}
	for (unsigned int i = 0; i < 2 * NR_AREAS; i += 2) {
		assert_int_equal(pl_enter(m, (i >> 1) & 1), 0);
		free_vmap_area(va[i]);
		va[i] = NULL;
	}
	probe(m, 1);
	probe(m, 0);
	for (unsigned int v = 0; v < 2; v++) {
		clocks[v] = m->vt->cpu[v].now;
		xfers[v] = m->vt->cpu[v].transfers;
	}
	assert_int_equal(pl_enter(m, 0), 0);
	free_rest(va, 2 * NR_AREAS);
	vm_test_done(m);
}

static void test_determinism(void **state)
{
	const char *designs[] = { "v6.18", "maple-index" };

	(void)state;
	for (unsigned int d = 0; d < 2; d++) {
		uint64_t c1[2], c2[2], x1[2], x2[2];
		void *spacer = malloc(4000);	/* the host heap moves between the two runs */

		det_run(designs[d], c1, x1);
		det_run(designs[d], c2, x2);
		free(spacer);
		assert_memory_equal(c1, c2, sizeof(c1));
		assert_memory_equal(x1, x2, sizeof(x1));
		assert_true(x1[0] + x1[1] > 0);
	}
}

/* ---- percpu and kvfree_rcu through the interleaver -------------------------------- */

#define DET_VCPUS	4
#define DET_STEPS	1200	/* per vCPU: past two kvfree_rcu batches of ~508 */
#define DET_PCPU	64	/* percpu objects a vCPU holds at most */

struct det_work {
	struct pl_machine *m;
	struct pl_rng rng[DET_VCPUS];
	unsigned long step[DET_VCPUS];
	void *pcpu[DET_VCPUS][DET_PCPU];
	unsigned long pending[DET_STEPS];	/* one-vCPU runs: pending after each step */
	bool two_kinds;				/* percpu work too, else kvfree_rcu only */
};

static void det_enter(void *ctx, unsigned int v)
{
	struct det_work *w = ctx;

	assert_int_equal(pl_enter(w->m, v), 0);
}

/* One vmalloc'ed page handed to kvfree_rcu_mightsleep(), as test_vmalloc's case. */
static void det_kvfree_one(void)
{
	char *p = vmalloc(PAGE_SIZE);

	assert_non_null(p);
	assert_int_equal(vmalloc_write(p, "a", 1), 0);
	assert_int_equal(kvfree_rcu_mightsleep(p), 0);
}

/*
 * A step: one kvfree_rcu'ed page, and with @two_kinds a percpu object of
 * test_vmalloc's sizes and alignments into a slot, freeing the slot's old one.
 */
static bool det_step(void *ctx, unsigned int v)
{
	struct det_work *w = ctx;
	unsigned long i = w->step[v]++;

	if (i == DET_STEPS)
		return false;
	det_kvfree_one();
	if (w->two_kinds) {
		void **slot = &w->pcpu[v][pl_rng_next(&w->rng[v]) % DET_PCPU];
		size_t size = 1 + pl_rng_next(&w->rng[v]) % (PAGE_SIZE / 4);
		size_t align = 1UL << (1 + pl_rng_next(&w->rng[v]) % 11);

		free_percpu(*slot);
		*slot = __alloc_percpu(size, align);
		assert_non_null(*slot);
	} else {
		w->pending[i] = pl_kvfree_rcu_pending(w->m);
	}
	return true;
}

/* @w's work on @nr vCPUs of a fresh vtime machine; everything freed after. */
static struct pl_machine *det_interleave(struct det_work *w, unsigned int nr, bool two_kinds)
{
	struct pl_vcpu_run run;

	memset(w, 0, sizeof(*w));
	w->m = vt_machine(nr, "v6.18", NULL);
	w->two_kinds = two_kinds;
	for (unsigned int v = 0; v < nr; v++)
		pl_rng_seed(&w->rng[v], 1000 + v);
	run = (struct pl_vcpu_run){ .nr_vcpus = nr, .nr_threads = 1, .slice = 1,
				    .enter = det_enter, .step = det_step, .ctx = w,
				    .vt = w->m->vt };
	assert_int_equal(pl_run_vcpus(&run), 0);
	assert_int_equal(pl_enter(w->m, 0), 0);
	return w->m;
}

static void det_done(struct det_work *w, unsigned int nr)
{
	assert_int_equal(pl_enter(w->m, 0), 0);
	for (unsigned int v = 0; v < nr; v++)
		for (unsigned int i = 0; i < DET_PCPU; i++)
			free_percpu(w->pcpu[v][i]);
	kvfree_rcu_barrier();
	assert_int_equal(pl_kvfree_rcu_pending(w->m), 0);
	assert_int_equal(pl_check_percpu(w->m), 0);
	pl_percpu_reclaim(w->m);	/* the empty chunks go back to vmalloc */
	vm_test_done(w->m);
}

/*
 * One vCPU: the call that fills a block queues the batch; the grace period
 * ends with that step, so the very next call frees the whole batch.
 */
static void test_kvfree_rcu_gp_ends_with_step(void **state)
{
	static struct det_work w;
	unsigned long full = 0;

	(void)state;
	det_interleave(&w, 1, false);
	for (unsigned long i = 0; i < DET_STEPS && !full; i++)
		if (i && w.pending[i] < w.pending[i - 1])
			full = i;	/* the first step whose call freed something */
	assert_true(full >= 500);
	assert_int_equal(w.pending[full - 1], full);	/* nothing freed before */
	assert_int_equal(w.pending[full], 1);		/* the batch, at once */
	assert_true(vm_event(w.m, PL_EV_KVFREE_RCU_BATCH) >= 2);
	det_done(&w, 1);
}

/*
 * Four vCPUs of kvfree_rcu and percpu work, twice, with an odd-sized host
 * allocation in between: the same clocks, transfers and misses, the same
 * batches freed before the final barrier.
 */
static void test_determinism_pcpu_kvfree(void **state)
{
	static struct det_work w;
	uint64_t c[2][DET_VCPUS], x[2][DET_VCPUS], b[2];
	void *spacer = NULL;

	(void)state;
	for (unsigned int r = 0; r < 2; r++) {
		det_interleave(&w, DET_VCPUS, true);
		for (unsigned int v = 0; v < DET_VCPUS; v++) {
			c[r][v] = w.m->vt->cpu[v].now;
			x[r][v] = w.m->vt->cpu[v].transfers;
		}
		b[r] = vm_event(w.m, PL_EV_KVFREE_RCU_BATCH);
		det_done(&w, DET_VCPUS);
		if (!r)
			spacer = malloc(1000 + 8 * 3 + 1);	/* the host heap moves */
	}
	free(spacer);
	assert_memory_equal(c[0], c[1], sizeof(c[0]));
	assert_memory_equal(x[0], x[1], sizeof(x[0]));
	assert_int_equal(b[0], b[1]);
	assert_true(b[0] >= DET_VCPUS);	/* batches were freed during the run */
	assert_true(x[0][0] + x[0][1] > 0);
}

/* Lines are keyed by host address: what the model touches starts on a line. */
static void test_lines_host_aligned(void **state)
{
	const char *designs[] = { "v6.18", "maple" };

	(void)state;
	for (unsigned int d = 0; d < 2; d++) {
		void *spacer = malloc(24);	/* an odd heap offset before the machine */
		struct pl_machine *m = vt_machine(2, designs[d], NULL);
		void *p = __alloc_percpu(8, 8);

		assert_non_null(p);
		assert_int_equal((uintptr_t)m->vmap % 64, 0);
		assert_int_equal((uintptr_t)m->vmap->vmap_area_cachep % 64, 0);
		assert_int_equal((uintptr_t)m->vmap->vm_struct_cachep % 64, 0);
		assert_int_equal((uintptr_t)m->vmap->percpu % 64, 0);
		if (m->config.design.vmap_index == VMAP_INDEX_MAPLE)
			assert_int_equal((uintptr_t)m->vmap->free.priv % 64, 0);
		free_percpu(p);
		assert_int_equal(pl_check_percpu(m), 0);
		pl_percpu_reclaim(m);
		vm_test_done(m);
		free(spacer);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rbtree_depth),
		cmocka_unit_test(test_maple_depth),
		cmocka_unit_test(test_step_kinds),
		cmocka_unit_test(test_transfers_by_depth),
		cmocka_unit_test(test_vmap_lock_cost),
		cmocka_unit_test(test_determinism),
		cmocka_unit_test(test_kvfree_rcu_gp_ends_with_step),
		cmocka_unit_test(test_determinism_pcpu_kvfree),
		cmocka_unit_test(test_lines_host_aligned),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
