// SPDX-License-Identifier: MIT
/*
 * lock_stat.c - /proc/lock_stat's text (kernel/locking/lockdep_proc.c,
 * Documentation/locking/lockstat.rst) from pagelab's per-lock numbers, and
 * pl_seq_finish(), the end of every pl_show_*() report.
 *
 * The kernel keeps lock_stat per lock class (all instances of one
 * spin_lock_init() site share it) and prints, after a header, one line per
 * class in use, sorted by contentions, most first:
 *
 *   "%40s:" class name, "%14lu " con-bounces, "%14lu" contentions,
 *   " %14s" x4 wait min/max/total/avg, " %14lu " acq-bounces,
 *   "%14lu" acquisitions, " %14s" x4 hold min/max/total/avg
 *
 * with times in microseconds and two decimals, rounded at 10 ns (the
 * kernel's snprint_time()). pagelab has the numbers per lock; the caller
 * folds its locks into classes (pl_lock_class_add()) the way lockdep does.
 *
 * What the kernel prints and pagelab does not: the contention points (the
 * call sites that waited and that held, under a short dashed rule) are not
 * recorded, so a contended class has no such lines; the dotted rule that
 * closes them is still printed after a contended class, where the kernel
 * puts it. Locks are plain spinlocks: no -R/-W lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include "pagelab/base.h"
#include "seq.h"

#define LS_NAME_W	40	/* "%40s" */
#define LS_COL_W	14	/* "%14lu", "%14s" */
#define LS_RULE_W	(40 + 1 + 12 * (14 + 1))

long pl_seq_finish(struct pl_seq *s)
{
	if (!s->buf)
		return (long)s->count;
	if (s->size)
		s->buf[s->count] = '\0';
	return s->overflow || !s->size ? -ENOSPC : (long)s->count;
}

void pl_lock_class_add(struct pl_lock_class_stat *c, const struct pl_spinlock *lock)
{
	struct pl_lock_stat l;

	pl_lock_stat_read(lock, &l);
	/* a min over the locks that had a sample, as lock_stats() folds CPUs */
	if (l.contentions && (!c->st.contentions || l.wait_min_ns < c->st.wait_min_ns))
		c->st.wait_min_ns = l.wait_min_ns;
	if (l.acquisitions && (!c->st.acquisitions || l.hold_min_ns < c->st.hold_min_ns))
		c->st.hold_min_ns = l.hold_min_ns;
	if (l.wait_max_ns > c->st.wait_max_ns)
		c->st.wait_max_ns = l.wait_max_ns;
	if (l.hold_max_ns > c->st.hold_max_ns)
		c->st.hold_max_ns = l.hold_max_ns;
	c->st.acquisitions += l.acquisitions;
	c->st.contentions += l.contentions;
	c->st.wait_ns += l.wait_ns;
	c->st.hold_ns += l.hold_ns;
	c->st.con_bounces += l.con_bounces;
	c->st.acq_bounces += l.acq_bounces;
	c->nr_locks++;
}

static void seq_rule(struct pl_seq *s, char c, size_t len)
{
	char line[LS_RULE_W];

	memset(line, c, sizeof(line));
	while (len) {
		size_t k = len < sizeof(line) ? len : sizeof(line);

		seq_write(s, line, k);
		len -= k;
	}
	seq_putc(s, '\n');
}

/* snprint_time(): ns as "us.hh", rounded to 10 ns, in " %14s" */
static void seq_time(struct pl_seq *s, uint64_t ns)
{
	char num[32];

	ns += 5;
	snprintf(num, sizeof(num), "%" PRIu64 ".%02u", ns / 1000, (unsigned int)(ns % 1000) / 10);
	seq_putc(s, ' ');
	seq_put_str(s, num, LS_COL_W);
}

/* seq_lock_time(): "%14lu" count, then min, max, total, avg */
static void seq_lock_time(struct pl_seq *s, uint64_t nr, uint64_t min, uint64_t max,
			  uint64_t total)
{
	seq_put_num(s, NULL, nr, LS_COL_W);
	seq_time(s, min);
	seq_time(s, max);
	seq_time(s, total);
	seq_time(s, nr ? total / nr : 0);
}

static void seq_class(struct pl_seq *s, const struct pl_lock_class_stat *c)
{
	char name[39];

	/* the kernel copies the class name into 38 characters */
	snprintf(name, sizeof(name), "%s", c->name);
	seq_put_str(s, name, LS_NAME_W);
	seq_putc(s, ':');
	seq_put_num(s, NULL, c->st.con_bounces, LS_COL_W);
	seq_putc(s, ' ');
	seq_lock_time(s, c->st.contentions, c->st.wait_min_ns, c->st.wait_max_ns, c->st.wait_ns);
	seq_putc(s, ' ');
	seq_put_num(s, NULL, c->st.acq_bounces, LS_COL_W);
	seq_putc(s, ' ');
	seq_lock_time(s, c->st.acquisitions, c->st.hold_min_ns, c->st.hold_max_ns, c->st.hold_ns);
	seq_putc(s, '\n');
	if (c->st.contentions) {
		/* where the contention points would end */
		seq_putc(s, '\n');
		seq_rule(s, '.', LS_RULE_W);
		seq_putc(s, '\n');
	}
}

void pl_lock_stat_print(struct pl_seq *s, struct pl_lock_class_stat *classes, unsigned int nr)
{
	static const char *const cols[] = {
		"con-bounces", "contentions", "waittime-min", "waittime-max", "waittime-total",
		"waittime-avg", "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max",
		"holdtime-total", "holdtime-avg",
	};

	/* lock_stat_cmp(): most contentions first; insertion sort keeps ties in order */
	for (unsigned int i = 1; i < nr; i++) {
		struct pl_lock_class_stat c = classes[i];
		unsigned int j = i;

		for (; j > 0 && classes[j - 1].st.contentions < c.st.contentions; j--)
			classes[j] = classes[j - 1];
		classes[j] = c;
	}
	seq_puts(s, "lock_stat version 0.4\n");
	seq_rule(s, '-', LS_RULE_W);
	seq_put_str(s, "class name", LS_NAME_W);
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++) {
		seq_putc(s, ' ');
		seq_put_str(s, cols[i], LS_COL_W);
	}
	seq_putc(s, '\n');
	seq_rule(s, '-', LS_RULE_W);
	seq_putc(s, '\n');
	for (unsigned int i = 0; i < nr; i++)
		if (classes[i].st.acquisitions)
			seq_class(s, &classes[i]);
}
