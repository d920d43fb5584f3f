// SPDX-License-Identifier: MIT
/*
 * validate.c - the out-of-line half of pagelab's argument-validation layer
 * (validate.h): the warnings of refused calls, vCPU ownership, the
 * cross-machine and zone checks, and free_frozen_pages()'s block walk.
 *
 * vCPU ownership: struct pl_cpu's @owner is the address of the owning
 * thread's pl_this (unique among live threads), set by compare-and-swap in
 * pl_enter() and cleared by pl_leave(), a switch to another vCPU, or the
 * thread's exit (a pthread key destructor). The destructor may run after
 * the machine was destroyed, so it first looks the machine up in the
 * registry of live machines (live_lock), which pl_machine_create() and
 * pl_machine_destroy() keep.
 *
 * Invariant: a vCPU has at most one owner; only the owner clears it.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "internal.h"
#include "validate.h"

int pl_bad_arg(const char *fn, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pl_this.cpu)
		pl_count(PL_EV_BAD_INPUT, 1);
	pl_warn_ratelimited("%s: %s", fn, msg);
	return -EINVAL;
}

int pl_bad_gfp(const char *fn, gfp_t gfp)
{
	if (gfp & ~(gfp_t)PL_GFP_KNOWN)
		return pl_bad_arg(fn, "gfp %#x has unknown bits %#x", gfp,
				  gfp & ~(gfp_t)PL_GFP_KNOWN);
	return pl_bad_arg(fn, "gfp %#x asks for both __GFP_MOVABLE and __GFP_RECLAIMABLE", gfp);
}

int pl_check_this_machine(const char *fn, const struct pl_machine *m)
{
	if (unlikely(!m))
		return pl_bad_arg(fn, "machine is NULL");
	if (unlikely(!pl_this.machine))
		return pl_bad_arg(fn, "the calling thread has not entered a machine (pl_enter)");
	if (unlikely(pl_this.machine != m))
		return pl_bad_arg(fn, "machine %p is not the one the calling thread entered (%p)",
				  (const void *)m, (const void *)pl_this.machine);
	return 0;
}

int pl_check_zone(const char *fn, const struct zone *zone, bool null_ok)
{
	struct pl_machine *m = pl_this.machine;

	if (unlikely(!m))
		return pl_bad_arg(fn, "the calling thread has not entered a machine (pl_enter)");
	if (!zone)
		return null_ok ? 0 : pl_bad_arg(fn, "zone is NULL");
	if (unlikely(zone < m->node_zones || zone >= m->node_zones + MAX_NR_ZONES ||
		     zone != &m->node_zones[zone - m->node_zones]))
		return pl_bad_arg(fn, "zone %p is not a zone of the machine the calling thread "
				  "entered", (const void *)zone);
	return 0;
}

/* ---- vCPU ownership ------------------------------------------------------- */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pl_machine **live;	/* protected by live_lock */
static size_t nr_live, live_cap;	/* protected by live_lock */
static pthread_key_t vcpu_key;
static pthread_once_t vcpu_key_once = PTHREAD_ONCE_INIT;

static bool machine_is_live(const struct pl_machine *m)
{
	for (size_t i = 0; i < nr_live; i++)
		if (live[i] == m)
			return true;
	return false;
}

void pl_machine_register(struct pl_machine *m)
{
	pthread_mutex_lock(&live_lock);
	if (nr_live == live_cap) {
		size_t cap = live_cap ? 2 * live_cap : 16;
		struct pl_machine **n = realloc(live, cap * sizeof(*n));

		if (!n) {	/* the registry only guards thread-exit releases */
			pthread_mutex_unlock(&live_lock);
			return;
		}
		live = n;
		live_cap = cap;
	}
	live[nr_live++] = m;
	pthread_mutex_unlock(&live_lock);
}

void pl_machine_unregister(struct pl_machine *m)
{
	pthread_mutex_lock(&live_lock);
	for (size_t i = 0; i < nr_live; i++) {
		if (live[i] == m) {
			live[i] = live[--nr_live];
			break;
		}
	}
	if (!nr_live) {
		free(live);
		live = NULL;
		live_cap = 0;
	}
	pthread_mutex_unlock(&live_lock);
}

static void release_cpu(struct pl_cpu *cpu)
{
	void *me = &pl_this;

	__atomic_compare_exchange_n(&cpu->owner, &me, NULL, false, __ATOMIC_RELEASE,
				    __ATOMIC_RELAXED);
}

/* A thread exits holding a vCPU: give it back if its machine still exists. */
static void vcpu_thread_exit(void *arg)
{
	struct pl_this *held = arg;

	pthread_mutex_lock(&live_lock);
	if (machine_is_live(held->machine))
		release_cpu(held->cpu);
	pthread_mutex_unlock(&live_lock);
	free(held);
}

static void vcpu_key_create(void)
{
	if (pthread_key_create(&vcpu_key, vcpu_thread_exit))
		abort();
}

/* Remember the held vCPU for the exit destructor (one small block per thread). */
static void note_held(struct pl_machine *m, struct pl_cpu *cpu)
{
	struct pl_this *held;

	pthread_once(&vcpu_key_once, vcpu_key_create);
	held = pthread_getspecific(vcpu_key);
	if (!held) {
		if (!m)
			return;
		held = malloc(sizeof(*held));
		if (!held || pthread_setspecific(vcpu_key, held)) {
			free(held);
			return;
		}
	}
	held->machine = m;
	held->cpu = cpu;
}

int pl_vcpu_claim(struct pl_machine *m, unsigned int cpu)
{
	struct pl_cpu *c = &m->cpus[cpu];
	void *expected = NULL;

	if (pl_this.cpu == c)
		return 0;
	if (!__atomic_compare_exchange_n(&c->owner, &expected, (void *)&pl_this, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED) &&
	    expected != &pl_this) {
		pl_warn_ratelimited("pl_enter: vCPU %u of machine %p is in use by another thread",
				    cpu, (void *)m);
		return -EBUSY;
	}
	if (pl_this.cpu)
		release_cpu(pl_this.cpu);
	note_held(m, c);
	return 0;
}

void pl_vcpu_release(void)
{
	if (pl_this.cpu)
		release_cpu(pl_this.cpu);
	note_held(NULL, NULL);
}

/* ---- free_frozen_pages() ---------------------------------------------------- */

/* Is @pfn inside a block of a PCP list of @zone (any vCPU's)? */
static bool pfn_on_pcp_list(struct pl_machine *m, struct zone *zone, unsigned long pfn)
{
	bool found = false;

	if (!zone->per_cpu_pageset)
		return false;
	for (unsigned int c = 0; c < m->nr_cpus && !found; c++) {
		struct per_cpu_pages *pcp = &zone->per_cpu_pageset[c];

		spin_lock(&pcp->lock);
		for (unsigned int pi = 0; pi < NR_PCP_LISTS && !found; pi++) {
			unsigned long nr = 1UL << pindex_to_order(pi);
			struct list_head *pos;

			list_for_each(pos, &pcp->lists[pi]) {
				struct page *p = list_entry(pos, struct page, pcp_list);
				unsigned long start = page_to_pfn(p);

				if (pfn >= start && pfn < start + nr) {
					found = true;
					break;
				}
			}
		}
		spin_unlock(&pcp->lock);
	}
	return found;
}

int pl_check_frozen_free(const char *fn, struct page *page, unsigned int order)
{
	struct pl_machine *m = pl_this.machine;
	unsigned long pfn = page_to_pfn(page);
	struct zone *zone = page_zone(page);
	const char *why = NULL;

	if (PageTail(page))
		return pl_bad_arg(fn, "pfn %#lx order %u: tail page of a compound page", pfn, order);
	if (page->alloc_order != order)
		return pl_bad_arg(fn, "pfn %#lx order %u: order differs from the allocation's (%u)",
				  pfn, order, page->alloc_order);
	if (PagePCPBuddy(page))
		why = "page is free (on a per-CPU owned list; double free?)";
	spin_lock(&zone->lock);
	for (unsigned int o = 1; !why && o <= MAX_PAGE_ORDER; o++) {
		unsigned long head = pfn & ~((1UL << o) - 1);
		struct page *hp;

		if (head < zone->zone_start_pfn)
			break;
		hp = pfn_to_page(head);
		if (head == pfn)
			continue;
		if ((PageBuddy(hp) || PagePCPBuddy(hp)) && buddy_order(hp) >= o)
			why = "page is inside a free block (double free?)";
		else if (hp->alloc_order >= o && !PageBuddy(hp) && !PagePCPBuddy(hp))
			why = "page is inside an allocated block of higher order";
	}
	spin_unlock(&zone->lock);
	if (!why && pfn_on_pcp_list(m, zone, pfn))
		why = "page is free (on a per-CPU list; double free?)";
	if (why)
		return pl_bad_arg(fn, "pfn %#lx order %u: %s", pfn, order, why);
	return 0;
}

/* ---- machine configuration -------------------------------------------------- */

int pl_check_vm_sysctls(const char *who, const struct pl_config *cfg)
{
	unsigned long wsf = cfg->watermark_scale_factor, boost = cfg->watermark_boost_factor;
	unsigned long fraction = cfg->percpu_pagelist_high_fraction;

	if (wsf > PL_MAX_WMARK_SCALE_FACTOR)
		return pl_bad_arg(who, "watermark_scale_factor %lu: want 1..%lu", wsf,
				  PL_MAX_WMARK_SCALE_FACTOR);
	if (boost != PL_WMARK_BOOST_OFF && boost > INT_MAX)
		return pl_bad_arg(who, "watermark_boost_factor %lu: want 0..%d", boost, INT_MAX);
	if (fraction && (fraction < PL_MIN_PCP_HIGH_FRACTION || fraction > INT_MAX))
		return pl_bad_arg(who, "percpu_pagelist_high_fraction %lu: want 0, or %lu..%d",
				  fraction, PL_MIN_PCP_HIGH_FRACTION, INT_MAX);
	return 0;
}

int pl_check_config(const struct pl_config *cfg)
{
	const unsigned long block = pageblock_nr_pages << PAGE_SHIFT;

	if (!cfg)
		return pl_bad_arg("machine", "config is NULL");
	if (!cfg->mem_bytes || cfg->mem_bytes % block || cfg->dma32_bytes % block)
		return pl_bad_arg("machine", "bad config (memory %lu bytes, DMA32 end %lu): sizes "
				  "must be non-zero multiples of 2 MiB", cfg->mem_bytes,
				  cfg->dma32_bytes);
	if (!cfg->nr_cpus || cfg->nr_cpus > PL_MAX_NR_CPUS)
		return pl_bad_arg("machine", "bad config: %u cpus (1..%u)", cfg->nr_cpus,
				  PL_MAX_NR_CPUS);
	if (cfg->debug < 0 || cfg->debug > 3)
		return pl_bad_arg("machine", "bad config: debug level %d (0..3)", cfg->debug);
	/* A watermark above the memory can never be met, and pages << 10 would wrap. */
	if (cfg->min_free_kbytes > cfg->mem_bytes >> 10)
		return pl_bad_arg("machine", "bad config: min_free_kbytes %lu exceeds the memory "
				  "(%lu kB)", cfg->min_free_kbytes, cfg->mem_bytes >> 10);
	if (cfg->tlb_flush_ns_per_cpu > PL_MAX_TLB_FLUSH_NS)
		return pl_bad_arg("machine", "bad config: tlb_flush_ns_per_cpu %lu above %lu",
				  cfg->tlb_flush_ns_per_cpu, PL_MAX_TLB_FLUSH_NS);
	if ((unsigned int)cfg->design.vmap_index > VMAP_INDEX_MAPLE)
		return pl_bad_arg("machine", "bad config: vmap_index %d",
				  (int)cfg->design.vmap_index);
	if (pl_check_vm_sysctls("machine: bad config", cfg))
		return -EINVAL;
	if (cfg->vt_costs >= NR_PL_VT_COSTS)
		return pl_bad_arg("machine", "bad config: vt_costs %u (0 anchors, 1 host)",
				  cfg->vt_costs);
	{
		/* all zero: the default shape; else each part 1..PL_MAX_NR_CPUS, in all as many */
		const struct pl_cpu_topology *t = &cfg->topology;
		unsigned long hw = (unsigned long)t->nr_sockets * t->cores_per_socket *
				   t->threads_per_core;
		bool unset = !t->nr_sockets && !t->cores_per_socket && !t->threads_per_core;

		if (!unset && (!hw || t->nr_sockets > PL_MAX_NR_CPUS ||
			       t->cores_per_socket > PL_MAX_NR_CPUS ||
			       t->threads_per_core > PL_MAX_NR_CPUS || hw > PL_MAX_NR_CPUS))
			return pl_bad_arg("machine", "bad config: topology %ux%ux%u (sockets x cores "
					  "x threads, each at least 1, at most %u hardware threads)",
					  t->nr_sockets, t->cores_per_socket, t->threads_per_core,
					  PL_MAX_NR_CPUS);
	}
	return 0;
}
