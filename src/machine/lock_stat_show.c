// SPDX-License-Identifier: MIT
/*
 * lock_stat_show.c - /proc/lock_stat of a whole machine: its spinlocks
 * folded into lock classes as lockdep folds them (every instance of one
 * spin_lock_init() site is one class, named after that site's expression),
 * printed by pl_lock_stat_print() (src/base/lock_stat.c).
 *
 * It lives in the composition root because the classes come from two
 * layers: &zone->lock and &pcp->lock from mm/, the vmalloc locks through
 * pl_vmalloc_for_each_lock(). Only locks with lock_stat's timing are
 * classes here; on a machine made without lock_stat=1 there is no report
 * (as a kernel without CONFIG_LOCK_STAT has no /proc/lock_stat) and the
 * call is refused: its times would read as zero, not as unmeasured.
 *
 * Invariant: the numbers are read without stopping the vCPUs, per lock,
 * as the kernel reads its per-CPU class statistics; a report taken while
 * the machine runs is a consistent sum per lock, not across locks.
 */
#include <errno.h>
#include <string.h>
#include "pagelab/machine.h"
#include "pagelab/vmalloc.h"
#include "mm/validate.h"

#define MAX_LOCK_CLASSES 16

struct classes {
	struct pl_lock_class_stat c[MAX_LOCK_CLASSES];
	unsigned int nr;
};

static void add_lock(void *ctx, const char *cls, const struct pl_spinlock *lock)
{
	struct classes *cs = ctx;
	unsigned int i;

	if (!lock->timed)	/* no lock_stat numbers to show */
		return;
	for (i = 0; i < cs->nr; i++)
		if (!strcmp(cs->c[i].name, cls))
			break;
	if (i == cs->nr) {
		if (cs->nr == MAX_LOCK_CLASSES)
			return;
		cs->c[cs->nr++] = (struct pl_lock_class_stat){ .name = cls };
	}
	pl_lock_class_add(&cs->c[i], lock);
}

long pl_show_lock_stat(struct pl_machine *m, char *buf, size_t size)
{
	struct pl_seq s = { .buf = buf, .size = size };
	struct classes cs = { .nr = 0 };
	struct zone *zone;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;
	if (!m->config.lock_stat) {
		pl_warn_ratelimited("pl_show_lock_stat: the machine has no lock_stat (create it "
				    "with lock_stat=1)");
		return -ENOENT;
	}
	for_each_populated_zone(zone, m) {
		add_lock(&cs, "&zone->lock", &zone->lock);
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
			add_lock(&cs, "&pcp->lock", &zone->per_cpu_pageset[cpu].lock);
	}
	pl_vmalloc_for_each_lock(m, add_lock, &cs);
	pl_lock_stat_print(&s, cs.c, cs.nr);
	return pl_seq_finish(&s);
}

long pl_show_lock_stat_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_lock_stat, f);
}
