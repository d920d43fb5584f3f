// SPDX-License-Identifier: MIT
/*
 * kvfree_rcu.c - kvfree_rcu() for vmalloc'ed objects, batched per vCPU and
 * freed after an RCU grace period, as CONFIG_KVFREE_RCU_BATCHED in
 * mm/slab_common.c of Linux 6.18.
 *
 *   kvfree_call_rcu(head, ptr) on vCPU c, krc = c's kfree_rcu_cpu:
 *     channel 2 (vmalloc pointers): ptr appended to the first page-sized
 *       kvfree_rcu_bulk_data block of krc->bulk_head; a full or missing
 *       block is replaced by a cached page (bkvcache, up to
 *       rcu_min_cached_objs = 5), or - headless form only - a fresh page;
 *     channel 3: no block to be had, two-argument form: the object's own
 *       rcu_head joins krc->head (head->func = ptr, written through the
 *       page tables: the object lives in the simulated space);
 *     headless form without a block: synchronize_rcu() and vfree() inline.
 *   Once KVFREE_BULK_MAX_ENTR objects are pending, they move to a batch
 *   that waits for a grace period (the kernel's monitor work after one
 *   jiffy). A batch records the grace-period number it needs; a helper
 *   thread per machine runs synchronize_rcu() (liburcu) for the highest
 *   number requested and publishes it as completed, so every batch queued
 *   while it waits shares the next grace period.
 *   Ready batches are freed with vfree() by the vCPU that queued them, on
 *   its next kvfree_call_rcu() or kvfree_rcu_poll(), or by
 *   kvfree_rcu_barrier(); emptied blocks go back to the page cache.
 *
 * In virtual time (a machine with a vtime, whose vCPUs all run on one
 * thread, a step at a time) there is no helper thread: its grace periods
 * would end after however many steps the host let pass, and the frees,
 * their clocks and their lines with them. Instead a grace period
 * requested during a step of the interleaver ends when the step does (no
 * vCPU is in a read-side section between steps: each has passed a
 * quiescent state), so the batch is freed on the vCPU's next
 * kvfree_call_rcu() - the helper thread's "as soon as it can", at a point
 * that depends only on the run.
 *
 * Where pagelab differs: the kernel frees a ready batch in a workqueue;
 * here a vCPU does it (the helper thread is not a vCPU and may not call
 * into the allocator), so the frees are counted on the vCPU that queued
 * them. Batches are not limited to KFREE_N_BATCHES = 2 in flight, there is
 * no 5-second timer (the barrier flushes what is left), and
 * kvfree_rcu_barrier() also gives the cached block pages back, as the
 * kernel's shrinker would.
 *
 * Locks: krc->lock (one vCPU's channels, cache and batches); gp_lock (the
 * grace-period numbers), never held with krc->lock.
 *
 * Invariants: gp_completed <= gp_requested; a batch waits for a number
 * <= gp_requested; with a vtime, every number requested before step
 * vt_step of the interleaver is completed (see gp_done()).
 */
#include <stdlib.h>
#include <string.h>
#include <urcu.h>
#include "pagelab/kvfree_rcu.h"
#include "vmap_area.h"
#include "mm/validate.h"

/**
 * struct kvfree_rcu_bulk_data - one page of pointers (in the machine's memory).
 * @list:       on krc->bulk_head or a batch.
 * @nr_records: pointers in @records.
 */
struct kvfree_rcu_bulk_data {
	struct list_head list;
	unsigned long gp_snap;
	unsigned long nr_records;
	void *records[];
};

#define KVFREE_BULK_MAX_ENTR \
	((PAGE_SIZE - sizeof(struct kvfree_rcu_bulk_data)) / sizeof(void *))
#define RCU_MIN_CACHED_OBJS	5

/* A set of objects waiting for grace period @gp. */
struct kvfree_rcu_batch {
	struct list_head list;
	unsigned long gp;
	struct list_head bulk;
	unsigned long head;	/* channel 3: first rcu_head's address, 0 if none */
	unsigned long nr;
};

/**
 * struct kfree_rcu_cpu - one vCPU's state, under @lock.
 * @bulk_head: blocks being filled, the current one first.
 * @head:      channel 3's list (simulated address of the newest rcu_head).
 * @count:     objects in @bulk_head and @head.
 * @bkvcache:  spare block pages, @nr_bkv_objs of them.
 * @waiting:   batches waiting for their grace period, oldest first.
 */
struct kfree_rcu_cpu {
	struct pl_spinlock lock;
	struct list_head bulk_head;
	unsigned long head;
	unsigned long count;
	struct list_head bkvcache;
	unsigned long nr_bkv_objs;
	struct list_head waiting;
	unsigned long nr_waiting;
} __cacheline_aligned;

/**
 * struct kvfree_rcu_space - a machine's kvfree_rcu state (vs->krcp).
 * @gp_requested: the highest grace-period number asked for (gp_lock).
 * @gp_completed: the highest one whose grace period ended (atomic).
 * @vt:           the machine's vtime, or NULL (then a helper thread ends
 *                the grace periods).
 * @vt_step:      with @vt: the interleaver's step (@vt->steps) in which
 *                @gp_requested was requested.
 */
struct kvfree_rcu_space {
	struct kfree_rcu_cpu *krc;
	unsigned int nr_cpus;
	pthread_mutex_t gp_lock;
	pthread_cond_t gp_cond;
	pthread_t gp_thread;
	bool thread_started, stop;
	unsigned long gp_requested;
	unsigned long gp_completed;
	struct pl_vtime *vt;
	uint64_t vt_step;
};

_Static_assert(KVFREE_BULK_MAX_ENTR >= 500, "a page of pointers holds ~508 records");

/* ---- grace periods ------------------------------------------------------------- */

static void *kvfree_rcu_gp_thread(void *arg)
{
	struct kvfree_rcu_space *krs = arg;

	pthread_mutex_lock(&krs->gp_lock);
	while (!krs->stop) {
		unsigned long target = krs->gp_requested;

		if (target == __atomic_load_n(&krs->gp_completed, __ATOMIC_RELAXED)) {
			pthread_cond_wait(&krs->gp_cond, &krs->gp_lock);
			continue;
		}
		pthread_mutex_unlock(&krs->gp_lock);
		synchronize_rcu();
		pthread_mutex_lock(&krs->gp_lock);
		__atomic_store_n(&krs->gp_completed, target, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&krs->gp_cond);
	}
	pthread_mutex_unlock(&krs->gp_lock);
	return NULL;
}

/* A new grace-period number: its grace period starts after this call. */
static unsigned long kvfree_rcu_request_gp(struct kvfree_rcu_space *krs)
{
	unsigned long gp;

	pthread_mutex_lock(&krs->gp_lock);
	if (krs->vt) {
		/* A step has ended since the last request: so has its grace period. */
		if (krs->vt->steps != krs->vt_step)
			__atomic_store_n(&krs->gp_completed, krs->gp_requested, __ATOMIC_RELEASE);
		krs->vt_step = krs->vt->steps;
		gp = ++krs->gp_requested;
		pthread_mutex_unlock(&krs->gp_lock);
		return gp;
	}
	if (!krs->thread_started) {
		if (pthread_create(&krs->gp_thread, NULL, kvfree_rcu_gp_thread, krs))
			abort();
		krs->thread_started = true;
	}
	gp = ++krs->gp_requested;
	pthread_cond_broadcast(&krs->gp_cond);
	pthread_mutex_unlock(&krs->gp_lock);
	return gp;
}

/*
 * Has grace period @gp ended? With a vtime, every one requested is over once
 * the interleaver has moved past the step of the last request (the vtime's
 * vCPUs all run on the calling thread, so @krs->vt_step is not racy).
 */
static inline bool gp_done(struct kvfree_rcu_space *krs, unsigned long gp)
{
	if (krs->vt && krs->vt->steps != krs->vt_step)
		return true;
	return __atomic_load_n(&krs->gp_completed, __ATOMIC_ACQUIRE) >= gp;
}

/* ---- the state ----------------------------------------------------------------- */

static struct kvfree_rcu_space *krs_get(struct vmap_space *vs)
{
	struct kvfree_rcu_space *krs = __atomic_load_n(&vs->krcp, __ATOMIC_ACQUIRE), *fresh;

	if (likely(krs))
		return krs;
	fresh = calloc(1, sizeof(*fresh));
	if (!fresh)
		return NULL;
	fresh->nr_cpus = vs->m->nr_cpus;
	fresh->vt = vs->m->vt;
	fresh->krc = pl_zalloc_lines(sizeof(struct kfree_rcu_cpu) * fresh->nr_cpus);
	if (!fresh->krc) {
		free(fresh);
		return NULL;
	}
	for (unsigned int i = 0; i < fresh->nr_cpus; i++) {
		struct kfree_rcu_cpu *krc = &fresh->krc[i];

		pl_spin_init(&krc->lock, false);
		pl_spin_set_class(&krc->lock, VT_LOCK_VMAP_OTHER);
		INIT_LIST_HEAD(&krc->bulk_head);
		INIT_LIST_HEAD(&krc->bkvcache);
		INIT_LIST_HEAD(&krc->waiting);
	}
	pthread_mutex_init(&fresh->gp_lock, NULL);
	pthread_cond_init(&fresh->gp_cond, NULL);
	if (!__atomic_compare_exchange_n(&vs->krcp, &krs, fresh, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		free(fresh->krc);
		free(fresh);
		return krs;
	}
	return fresh;
}

/* A block page: from the cache, else (if @can_alloc) a fresh one. Context: krc->lock. */
static struct kvfree_rcu_bulk_data *get_cached_bnode(struct kfree_rcu_cpu *krc)
{
	struct kvfree_rcu_bulk_data *bnode;

	if (!krc->nr_bkv_objs)
		return NULL;
	bnode = list_first_entry(&krc->bkvcache, struct kvfree_rcu_bulk_data, list);
	list_del(&bnode->list);
	krc->nr_bkv_objs--;
	return bnode;
}

/* Give an emptied block back to @krc's cache, or to the page allocator. */
static void put_cached_bnode(struct kfree_rcu_cpu *krc, struct kvfree_rcu_bulk_data *bnode)
{
	spin_lock(&krc->lock);
	if (krc->nr_bkv_objs < RCU_MIN_CACHED_OBJS) {
		list_add(&bnode->list, &krc->bkvcache);
		krc->nr_bkv_objs++;
		bnode = NULL;
	}
	spin_unlock(&krc->lock);
	if (bnode)
		free_page((unsigned long)bnode);
}

/* Move @krc's pending objects into a batch waiting for a new grace period. Context: krc->lock. */
static void kvfree_rcu_queue_batch(struct kvfree_rcu_space *krs, struct kfree_rcu_cpu *krc,
				   struct kvfree_rcu_batch *batch)
{
	INIT_LIST_HEAD(&batch->bulk);
	vlist_splice_tail_init(&krc->bulk_head, &batch->bulk);
	batch->head = krc->head;
	batch->nr = krc->count;
	krc->head = 0;
	krc->count = 0;
	batch->gp = kvfree_rcu_request_gp(krs);
	list_add_tail(&batch->list, &krc->waiting);
	krc->nr_waiting += batch->nr;
}

/* Free one batch whose grace period has ended: every object with vfree(). */
static void kvfree_rcu_free_batch(struct kfree_rcu_cpu *krc, struct kvfree_rcu_batch *batch)
{
	while (!list_empty(&batch->bulk)) {
		struct kvfree_rcu_bulk_data *bnode =
			list_first_entry(&batch->bulk, struct kvfree_rcu_bulk_data, list);

		list_del(&bnode->list);
		for (unsigned long i = 0; i < bnode->nr_records; i++)
			vfree_queued(bnode->records[i]);
		bnode->nr_records = 0;
		put_cached_bnode(krc, bnode);
	}
	/* Channel 3: each rcu_head holds the next head and the object. */
	for (unsigned long h = batch->head; h;) {
		struct callback_head head;

		if (vmalloc_read(&head, (void *)h, sizeof(head))) {
			pl_warn_ratelimited("kvfree_rcu: rcu_head at %#lx unmapped: leaked", h);
			break;
		}
		vfree_queued((void *)head.func);
		h = (unsigned long)head.next;
	}
	vm_count(PL_EV_KVFREE_RCU_BATCH, 1);
	free(batch);
}

/* kvfree_rcu_drain_ready(): free @krc's batches whose grace period ended. */
static unsigned long kvfree_rcu_drain_ready(struct kvfree_rcu_space *krs,
					    struct kfree_rcu_cpu *krc)
{
	struct list_head ready;
	unsigned long n = 0;

	if (list_empty(&krc->waiting))
		return 0;
	INIT_LIST_HEAD(&ready);
	spin_lock(&krc->lock);
	while (!list_empty(&krc->waiting)) {
		struct kvfree_rcu_batch *b = list_first_entry(&krc->waiting, struct kvfree_rcu_batch,
							      list);

		if (!gp_done(krs, b->gp))
			break;
		list_move_tail(&b->list, &ready);
		krc->nr_waiting -= b->nr;
		n += b->nr;
	}
	spin_unlock(&krc->lock);
	while (!list_empty(&ready)) {
		struct kvfree_rcu_batch *b = list_first_entry(&ready, struct kvfree_rcu_batch, list);

		list_del(&b->list);
		kvfree_rcu_free_batch(krc, b);
	}
	return n;
}

/* ---- the API -------------------------------------------------------------------- */

static int kvfree_rcu_bad(const char *why, void *ptr)
{
	vm_count(PL_EV_BAD_INPUT, 1);
	pl_warn_ratelimited("kvfree_rcu: %p: %s", ptr, why);
	return -EINVAL;
}

int kvfree_call_rcu(struct callback_head *head, void *ptr)
{
	struct pl_machine *m = pl_this.machine;
	struct kvfree_rcu_bulk_data *bnode;
	struct kvfree_rcu_batch *batch = NULL;
	struct kvfree_rcu_space *krs;
	struct kfree_rcu_cpu *krc;
	struct vm_struct *vm;
	bool queued = false;

	if (!ptr)
		return 0;
	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("kvfree_rcu: the calling thread has not entered a machine");
		return -EINVAL;
	}
	vm = find_vm_area(ptr);
	if (unlikely(!vm || vm->addr != (unsigned long)ptr || !(vm->flags & VM_ALLOC) ||
		     (vm->flags & (VM_UNINITIALIZED | VM_PCPU | VM_MAP))))
		return kvfree_rcu_bad("not the start of a live vmalloc area", ptr);
	if (unlikely(__atomic_load_n(&vm->flags, __ATOMIC_RELAXED) & VM_FREE_QUEUED))
		return kvfree_rcu_bad("already queued for freeing (double free?)", ptr);
	if (unlikely(head && ((unsigned long)head < vm->addr ||
			      (unsigned long)head + sizeof(*head) > vm->addr + get_vm_area_size(vm))))
		return kvfree_rcu_bad("rcu_head outside the object", ptr);
	krs = krs_get(m->vmap);
	if (!krs)
		return -ENOMEM;
	/* Claimed last: nothing below refuses, and a racing second call loses here. */
	if (__atomic_fetch_or(&vm->flags, VM_FREE_QUEUED, __ATOMIC_ACQ_REL) & VM_FREE_QUEUED)
		return kvfree_rcu_bad("already queued for freeing (double free?)", ptr);
	krc = &krs->krc[this_cpu_id()];
	kvfree_rcu_drain_ready(krs, krc);

	spin_lock(&krc->lock);
	/* add_ptr_to_bulk_krc_lock() */
	bnode = list_first_entry_or_null(&krc->bulk_head, struct kvfree_rcu_bulk_data, list);
	if (!bnode || bnode->nr_records == KVFREE_BULK_MAX_ENTR) {
		bnode = get_cached_bnode(krc);
		if (!bnode && !head) {
			unsigned long page;

			spin_unlock(&krc->lock);
			page = __get_free_pages(GFP_KERNEL | __GFP_NOWARN, 0);
			spin_lock(&krc->lock);
			bnode = page ? (struct kvfree_rcu_bulk_data *)page : NULL;
		}
		if (bnode) {
			bnode->nr_records = 0;
			list_add(&bnode->list, &krc->bulk_head);
		}
	}
	if (bnode) {
		bnode->records[bnode->nr_records++] = ptr;
		krc->count++;
		queued = true;
	} else if (head) {
		struct callback_head h = { (struct callback_head *)krc->head,
					   (void (*)(struct callback_head *))ptr };

		if (!vmalloc_write(head, &h, sizeof(h))) {
			krc->head = (unsigned long)head;
			krc->count++;
			queued = true;
		}
	}
	if (queued && krc->count >= KVFREE_BULK_MAX_ENTR) {
		spin_unlock(&krc->lock);
		batch = malloc(sizeof(*batch));
		spin_lock(&krc->lock);
		if (batch && krc->count)
			kvfree_rcu_queue_batch(krs, krc, batch);
		else
			free(batch);
	}
	spin_unlock(&krc->lock);
	if (!queued) {
		/* Headless and no page for a block: wait for readers, free inline. */
		synchronize_rcu();
		vfree_queued(ptr);
	}
	return 0;
}

unsigned long kvfree_rcu_poll(void)
{
	struct pl_machine *m = pl_this.machine;
	struct kvfree_rcu_space *krs = m && m->vmap ? m->vmap->krcp : NULL;

	if (!krs)
		return 0;
	return kvfree_rcu_drain_ready(krs, &krs->krc[this_cpu_id()]);
}

void kvfree_rcu_barrier(void)
{
	struct pl_machine *m = pl_this.machine;
	struct kvfree_rcu_space *krs = m && m->vmap ? __atomic_load_n(&m->vmap->krcp,
								   __ATOMIC_ACQUIRE) : NULL;
	unsigned long want;

	if (!krs)
		return;
	for (unsigned int c = 0; c < krs->nr_cpus; c++) {
		struct kfree_rcu_cpu *krc = &krs->krc[c];
		struct kvfree_rcu_batch *batch = malloc(sizeof(*batch));

		spin_lock(&krc->lock);
		if (batch && krc->count) {
			kvfree_rcu_queue_batch(krs, krc, batch);
			batch = NULL;
		}
		spin_unlock(&krc->lock);
		free(batch);
	}
	pthread_mutex_lock(&krs->gp_lock);
	want = krs->gp_requested;
	if (krs->vt)	/* the barrier is a point between steps: every grace period ends */
		__atomic_store_n(&krs->gp_completed, want, __ATOMIC_RELEASE);
	while (!gp_done(krs, want))
		pthread_cond_wait(&krs->gp_cond, &krs->gp_lock);
	pthread_mutex_unlock(&krs->gp_lock);
	for (unsigned int c = 0; c < krs->nr_cpus; c++) {
		struct kfree_rcu_cpu *krc = &krs->krc[c];

		kvfree_rcu_drain_ready(krs, krc);
		/* and the spare pages, as the shrinker gives them back */
		for (;;) {
			struct kvfree_rcu_bulk_data *bnode;

			spin_lock(&krc->lock);
			bnode = get_cached_bnode(krc);
			spin_unlock(&krc->lock);
			if (!bnode)
				break;
			free_page((unsigned long)bnode);
		}
	}
}

unsigned long pl_kvfree_rcu_pending(struct pl_machine *m)
{
	struct kvfree_rcu_space *krs = m && m->vmap ? __atomic_load_n(&m->vmap->krcp,
								      __ATOMIC_ACQUIRE) : NULL;
	unsigned long n = 0;

	if (pl_check_ptr(__func__, m, "machine") || !krs)
		return 0;
	for (unsigned int c = 0; c < krs->nr_cpus; c++) {
		spin_lock(&krs->krc[c].lock);
		n += krs->krc[c].count + krs->krc[c].nr_waiting;
		spin_unlock(&krs->krc[c].lock);
	}
	return n;
}

/* Stop the helper thread, free the host-side state (the machine's pages go with it). */
void kvfree_rcu_destroy(struct vmap_space *vs)
{
	struct kvfree_rcu_space *krs = vs->krcp;

	if (!krs)
		return;
	pthread_mutex_lock(&krs->gp_lock);
	krs->stop = true;
	pthread_cond_broadcast(&krs->gp_cond);
	pthread_mutex_unlock(&krs->gp_lock);
	if (krs->thread_started)
		pthread_join(krs->gp_thread, NULL);
	for (unsigned int c = 0; c < krs->nr_cpus; c++) {
		while (!list_empty(&krs->krc[c].waiting)) {
			struct kvfree_rcu_batch *b = list_first_entry(&krs->krc[c].waiting,
								      struct kvfree_rcu_batch, list);

			list_del(&b->list);
			free(b);
		}
	}
	pthread_cond_destroy(&krs->gp_cond);
	pthread_mutex_destroy(&krs->gp_lock);
	free(krs->krc);
	free(krs);
	vs->krcp = NULL;
}
