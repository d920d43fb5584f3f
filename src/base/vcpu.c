// SPDX-License-Identifier: MIT
/*
 * vcpu.c - run many virtual CPUs on few threads.
 *
 * Thread t runs the vCPUs v with v % nr_threads == t, round robin: a vCPU
 * gets a turn of up to `slice` steps, then the next one. With one thread
 * the interleaving depends only on the workload, so a 256-CPU run is the
 * same sequence of allocator calls, the same counters, every time. With
 * more threads the vCPUs of different threads run truly in parallel.
 *
 * With a vtime all vCPUs run on the calling thread, one step
 * at a time, the vCPU with the earliest virtual clock first: a
 * discrete-event order that is the same on every host. vt->steps counts
 * the steps: between two of them no vCPU is inside the allocator, which is
 * where kvfree_rcu ends its grace periods in virtual time.
 *
 * Invariant: a vCPU is only ever run by its one thread, so per-vCPU state
 * (the workload's and the allocator's per-CPU data) needs no locking
 * beyond what the allocator already does for remote access.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include "pagelab/base.h"

struct vcpu_thread {
	const struct pl_vcpu_run *run;
	unsigned int id;
};

static void *vcpu_thread_fn(void *arg)
{
	struct vcpu_thread *t = arg;
	const struct pl_vcpu_run *r = t->run;
	unsigned int mine = 0, live;
	bool *done;

	for (unsigned int v = t->id; v < r->nr_vcpus; v += r->nr_threads)
		mine++;
	done = calloc(mine ? mine : 1, sizeof(*done));
	if (!done)
		abort();
	live = mine;
	while (live) {
		unsigned int i = 0;

		for (unsigned int v = t->id; v < r->nr_vcpus; v += r->nr_threads, i++) {
			if (done[i])
				continue;
			if (r->enter)
				r->enter(r->ctx, v);
			for (unsigned long s = 0; s < r->slice; s++) {
				if (!r->step(r->ctx, v)) {
					done[i] = true;
					live--;
					break;
				}
			}
		}
	}
	free(done);
	return NULL;
}

/* Earliest clock first, one step per pick, until every vCPU is done. */
static int run_vtime(const struct pl_vcpu_run *r)
{
	unsigned int n = r->nr_vcpus, live = n;
	/* done, then idle (its last step did no work), then a scratch mask */
	bool *done = calloc(3 * (size_t)n, sizeof(*done)), *idle = done + n, *skip = idle + n;

	if (!done)
		return -ENOMEM;
	while (live) {
		unsigned int v = pl_vt_pick(r->vt, done, n), w;
		uint64_t before = r->vt->cpu[v].now;

		if (r->enter)
			r->enter(r->ctx, v);
		if (!r->step(r->ctx, v)) {
			done[v] = true;
			live--;
		}
		r->vt->steps++;
		idle[v] = r->vt->cpu[v].now == before && !done[v];
		/*
		 * A step that did no allocator work (a vCPU polling for work
		 * another one must produce) still takes time, or the earliest
		 * clock would be picked forever: it sleeps until just after the
		 * next clock of a vCPU that is working (nothing can change
		 * before then: polling changes nothing), or, when every other
		 * vCPU polls too, of any other vCPU. Waking at every other
		 * poller's clock instead made 100 blocked vCPUs leapfrog each
		 * other by a few ns for every step of real work.
		 */
		if (idle[v]) {
			uint64_t next = before + r->vt->p.idle_ps;

			for (unsigned int c = 0; c < n; c++)
				skip[c] = done[c] || idle[c];
			w = pl_vt_pick(r->vt, skip, n);
			if (w == n) {
				done[v] = true;
				w = pl_vt_pick(r->vt, done, n);
				done[v] = false;
			}
			if (w < n && r->vt->cpu[w].now + 1 > next)
				next = r->vt->cpu[w].now + 1;
			r->vt->cpu[v].now = next;
		}
	}
	free(done);
	return 0;
}

int pl_run_vcpus(const struct pl_vcpu_run *r)
{
	struct vcpu_thread threads[PL_MAX_VCPU_THREADS];
	pthread_t tids[PL_MAX_VCPU_THREADS];

	if (!r || !r->nr_vcpus || r->nr_vcpus > PL_MAX_VCPUS || !r->nr_threads ||
	    r->nr_threads > PL_MAX_VCPU_THREADS || r->nr_threads > r->nr_vcpus || !r->slice ||
	    !r->step) {
		pl_warn_ratelimited("pl_run_vcpus: bad run (%u vCPUs 1..%u, %u threads 1..%u, "
				    "slice, step)", r ? r->nr_vcpus : 0, PL_MAX_VCPUS,
				    r ? r->nr_threads : 0, PL_MAX_VCPU_THREADS);
		return -EINVAL;
	}
	if (r->vt)
		return r->vt->nr_cpus < r->nr_vcpus ? -EINVAL : run_vtime(r);
	for (unsigned int t = 0; t < r->nr_threads; t++) {
		threads[t] = (struct vcpu_thread){ r, t };
		if (t && pthread_create(&tids[t], NULL, vcpu_thread_fn, &threads[t]))
			abort();
	}
	vcpu_thread_fn(&threads[0]);
	for (unsigned int t = 1; t < r->nr_threads; t++)
		pthread_join(tids[t], NULL);
	return 0;
}
