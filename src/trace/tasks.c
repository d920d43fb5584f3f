// SPDX-License-Identifier: MIT
/*
 * tasks.c - who allocated: a trace's page allocations and frees by task
 * (pid, comm), the recorded command's share apart, and the task filter of
 * `pagelab replay --tasks` and `pagelab trace info --tasks`.
 *
 * A system-wide trace on a shared host may be mostly other processes':
 * these figures say so at once.
 *
 * Invariants: one entry per pid, memory proportional to the tasks seen;
 * the totals are the sums of the entries.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/trace.h"

static size_t slot_of(const struct pl_task_table *tt, int pid)
{
	return ((uint32_t)pid * 2654435761u) & tt->mask;
}

static int rehash(struct pl_task_table *tt, size_t cap)
{
	int32_t *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	free(tt->slot);
	tt->slot = s;
	tt->mask = cap - 1;
	for (size_t i = 0; i < tt->nr; i++) {
		size_t h = slot_of(tt, tt->t[i].pid);

		while (s[h])
			h = (h + 1) & tt->mask;
		s[h] = (int32_t)(i + 1);
	}
	return 0;
}

static struct pl_task_stat *lookup(struct pl_task_table *tt, int pid)
{
	size_t h;

	if (!tt->slot || (tt->nr + 1) * 2 > tt->mask + 1) {
		if (rehash(tt, tt->slot ? (tt->mask + 1) * 2 : 256))
			return NULL;
	}
	for (h = slot_of(tt, pid); tt->slot[h]; h = (h + 1) & tt->mask)
		if (tt->t[tt->slot[h] - 1].pid == pid)
			return &tt->t[tt->slot[h] - 1];
	if (tt->nr == tt->cap) {
		size_t cap = tt->cap ? tt->cap * 2 : 256;
		struct pl_task_stat *n = realloc(tt->t, cap * sizeof(*n));

		if (!n)
			return NULL;
		tt->t = n;
		tt->cap = cap;
	}
	memset(&tt->t[tt->nr], 0, sizeof(tt->t[0]));
	tt->t[tt->nr].pid = pid;
	tt->slot[h] = (int32_t)++tt->nr;
	return &tt->t[tt->nr - 1];
}

static void add(struct pl_task_stat *s, const struct pl_trace_event *ev)
{
	unsigned long pages = 1ul << (ev->order > 0 && ev->order <= MAX_PAGE_ORDER ? ev->order : 0);

	if (ev->type == PL_TRACE_PAGE_ALLOC) {
		s->allocs++;
		s->alloc_pages += pages;
	} else {
		s->frees++;
		s->free_pages += pages;
	}
}

int pl_task_table_event(struct pl_task_table *tt, const struct pl_trace_event *ev)
{
	struct pl_task_stat *s;

	if ((!tt || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (ev->type == PL_TRACE_PAGE_ALLOC ? ev->pfn == -1UL :
	    ev->type != PL_TRACE_PAGE_FREE && ev->type != PL_TRACE_PAGE_FREE_BATCHED)
		return 0;
	s = lookup(tt, ev->pid);
	if (!s)
		return -ENOMEM;
	if (ev->comm[0])
		memcpy(s->comm, ev->comm, sizeof(s->comm));
	s->command |= ev->command;
	add(s, ev);
	add(&tt->total, ev);
	if (ev->command)
		add(&tt->command, ev);
	return 0;
}

static int by_events(const void *a, const void *b)
{
	const struct pl_task_stat *x = a, *y = b;
	unsigned long nx = x->allocs + x->frees, ny = y->allocs + y->frees;

	if (nx != ny)
		return nx > ny ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

void pl_task_table_sort(struct pl_task_table *tt)
{
	if (!tt && pl_arg_refused(__func__, "NULL argument"))
		return;
	if (!tt->nr)
		return;
	qsort(tt->t, tt->nr, sizeof(tt->t[0]), by_events);
	rehash(tt, tt->mask + 1);	/* same size: cannot fail for lack of room */
}

void pl_task_table_release(struct pl_task_table *tt)
{
	if (!tt)
		return;
	free(tt->t);
	free(tt->slot);
	memset(tt, 0, sizeof(*tt));
}

bool pl_task_match(const char *spec, const struct pl_trace_event *ev)
{
	const char *p = spec;

	if (!spec)
		return false;
	if (!ev && pl_arg_refused(__func__, "NULL event"))
		return false;
	while (*p) {
		size_t n = strcspn(p, ","), i;
		bool digits = n > 0;

		for (i = 0; i < n; i++)
			digits &= p[i] >= '0' && p[i] <= '9';
		if (digits && strtol(p, NULL, 10) == ev->pid)
			return true;
		if (!digits && n == 7 && !memcmp(p, "command", 7) && ev->command)
			return true;
		if (!digits && n && n < sizeof(ev->comm) && !strncmp(p, ev->comm, n) && !ev->comm[n])
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}
