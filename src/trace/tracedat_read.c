// SPDX-License-Identifier: MIT
/*
 * tracedat_read.c - the pages of an opened trace.dat (tracedat.c): each
 * CPU's ring-buffer pages in turn (a version 7 file's compressed chunks
 * decompressed one at a time), their events merged by timestamp across the
 * CPUs and decoded by the event formats into pagelab's events, held to the
 * ranges the text parser holds its lines to.
 *
 * Invariants: every event header, length and field is checked against its
 * page before it is read; corrupt data ends the stream with one line (the
 * events before it standing); a value no kernel writes is a malformed
 * event, counted and skipped. Memory: per CPU one decompressed chunk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "tracedat_int.h"

/* ---- reading the pages ---------------------------------------------------------- */

/* The next decompressed chunk of @c's data. Return: 1, 0 at the end, -EIO. */
static int next_chunk(struct pl_tracedat *d, struct td_cpu *c)
{
	struct cur z = { c->cdata, c->csize, c->cpos, false };
	uint32_t csize, usize;
	const unsigned char *src;

	if (!c->chunks_left)
		return 0;
	csize = (uint32_t)cur_u(&z, 4);
	usize = (uint32_t)cur_u(&z, 4);
	src = cur_take(&z, csize);
	if (z.bad || usize > TD_MAX_CHUNK || usize % TD_PAGE_SIZE)
		return td_fail(d, "truncated or corrupt: CPU %u's compressed chunk at byte %zu",
			    c->cpu, c->cpos), -EIO;
	if (usize > c->ucap) {
		unsigned char *n = realloc(c->ubuf, usize);

		if (!n)
			return td_fail(d, "out of memory decompressing CPU %u's data", c->cpu), -EIO;
		c->ubuf = n;
		c->ucap = usize;
	}
	if (td_decompress(d, src, csize, c->ubuf, usize))
		return td_fail(d, "corrupt: CPU %u's chunk at byte %zu does not decompress", c->cpu,
			    c->cpos), -EIO;
	c->cpos = z.pos;
	c->chunks_left--;
	c->data = c->ubuf;
	c->size = usize;
	c->pos = 0;
	return 1;
}

/* Load @c's next page. Return: 1, 0 at the end of its data, -EIO. */
static int next_page(struct pl_tracedat *d, struct td_cpu *c, struct pl_trace_stats *st)
{
	const unsigned char *pg;
	uint64_t commit, size;
	size_t avail;

	for (;;) {
		if (c->pos < c->size)
			break;
		if (!c->cdata)
			return 0;
		int r = next_chunk(d, c);

		if (r <= 0)
			return r;
	}
	pg = c->data + c->pos;
	avail = c->size - c->pos;
	if (avail < d->pl.data_off)
		return td_fail(d, "truncated: CPU %u's data ends inside a page header", c->cpu), -EIO;
	if (avail > TD_PAGE_SIZE)
		avail = TD_PAGE_SIZE;
	c->pos += TD_PAGE_SIZE;
	commit = td_ld(pg + d->pl.commit_off, d->pl.commit_size);
	size = commit & RB_SIZE_MASK;
	if (size > avail - d->pl.data_off)
		return td_fail(d, "corrupt: a page of CPU %u says it holds %llu bytes, more than a page "
			    "(or than the file) has", c->cpu, (unsigned long long)size), -EIO;
	c->ts = td_ld(pg + d->pl.ts_off, 8);
	c->p = pg + d->pl.data_off;
	c->pend = c->p + size;
	if (commit & RB_MISSED_EVENTS) {	/* as `trace-cmd report` prints and the text parser counts */
		uint64_t lost = 1;

		if ((commit & RB_MISSED_STORED) &&
		    size + d->pl.commit_size <= avail - d->pl.data_off)
			lost = td_ld(c->pend, d->pl.commit_size);
		st->lost_events += lost;
		st->warn[PL_TW_lost_events]++;
	}
	return 1;
}

/* Advance @c to its next data event (pending). Return: 1, 0 at its end, -EIO. */
static int cpu_advance(struct pl_tracedat *d, struct td_cpu *c, struct pl_trace_stats *st)
{
	for (;;) {
		uint32_t w, type_len, delta, len;

		if (c->p >= c->pend) {
			int r = next_page(d, c, st);

			if (r <= 0) {
				c->pending = false;
				c->done = true;
				return r;
			}
			continue;
		}
		if (c->pend - c->p < 4)
			goto corrupt;
		w = (uint32_t)td_ld(c->p, 4);
		type_len = w & 31;
		delta = w >> 5;
		switch (type_len) {
		case 0:
			if (c->pend - c->p < 8)
				goto corrupt;
			len = (uint32_t)td_ld(c->p + 4, 4);
			if (len < 4 || len - 4 > (size_t)(c->pend - c->p - 8))
				goto corrupt;
			c->ts += delta;
			c->rec = c->p + 8;
			c->rec_len = len - 4;
			c->p += 4 + len;
			break;
		case 29:	/* padding: the rest of the page, or a discarded event */
			if (!delta) {
				c->p = c->pend;
				continue;
			}
			if (c->pend - c->p < 8)
				goto corrupt;
			len = (uint32_t)td_ld(c->p + 4, 4);
			if (len > (size_t)(c->pend - c->p - 4))
				goto corrupt;
			c->ts += delta;
			c->p += 4 + len;
			continue;
		case 30:	/* time extend */
			if (c->pend - c->p < 8)
				goto corrupt;
			c->ts += ((uint64_t)td_ld(c->p + 4, 4) << 27) + delta;
			c->p += 8;
			continue;
		case 31:	/* absolute timestamp: the low 59 bits */
			if (c->pend - c->p < 8)
				goto corrupt;
			c->ts = (c->ts & ~((1ull << TS_ABS_BITS) - 1)) |
				(((uint64_t)td_ld(c->p + 4, 4) << 27) | delta);
			c->p += 8;
			continue;
		default:
			len = type_len * 4;
			if (len > (size_t)(c->pend - c->p - 4))
				goto corrupt;
			c->ts += delta;
			c->rec = c->p + 4;
			c->rec_len = len;
			c->p += 4 + len;
			break;
		}
		c->rec_ts = c->ts;
		c->pending = true;
		return 1;
	}
corrupt:
	c->pending = false;
	c->done = true;
	return td_fail(d, "corrupt: an event of CPU %u overruns its ring-buffer page", c->cpu), -EIO;
}

static const char *comm_of(struct pl_tracedat *d, struct td_cpu *c, int pid)
{
	size_t h;

	if (pid == c->last_pid)
		return c->last_comm >= 0 ? d->comms[c->last_comm].comm : "<...>";
	c->last_pid = pid;
	c->last_comm = -1;
	if (!pid)
		return "<idle>";
	for (h = td_comm_slot(d, pid); d->hash[h]; h = (h + 1) & d->hash_mask)
		if (d->comms[d->hash[h] - 1].pid == pid) {
			c->last_comm = d->hash[h] - 1;
			return d->comms[c->last_comm].comm;
		}
	return "<...>";
}

static inline long sfield(const struct td_format *f, const unsigned char *rec, int which)
{
	uint64_t v = td_ld(rec + f->off[which], f->size[which]);

	switch (f->size[which]) {	/* the kernel's int fields are signed */
	case 1:
		return (int8_t)v;
	case 2:
		return (int16_t)v;
	case 4:
		return (int32_t)v;
	default:
		return (long)v;
	}
}

static inline unsigned long ufield(const struct td_format *f, const unsigned char *rec,
				   int which)
{
	return (unsigned long)td_ld(rec + f->off[which], f->size[which]);
}

/*
 * The ranges the text parser holds its fields to (src/trace/parse.c: what a
 * kernel can print): a value outside is a malformed event, counted and
 * skipped, never handed on.
 */
static bool in_range(const struct td_format *f, const struct pl_trace_event *ev)
{
	bool mt = f->have >> TDF_MT & 1;

	if ((f->have >> TDF_ORDER & 1) && f->kind != PL_TRACE_PAGE_FREE_BATCHED &&
	    (ev->order < 0 || ev->order > MAX_PAGE_ORDER))
		return false;
	if ((f->have >> TDF_PFN & 1) && ev->pfn >= PL_TRACE_PFN_LIMIT && ev->pfn != -1UL)
		return false;
	if (mt && (ev->migratetype < 0 || ev->migratetype > PL_TRACE_MAX_MIGRATETYPE))
		return false;
	switch (f->kind) {
	case PL_TRACE_ZONE_LOCKED:
		return ev->percpu_refill == 0 || ev->percpu_refill == 1;
	case PL_TRACE_EXTFRAG:
		return ev->fallback_order >= 0 && ev->fallback_order <= MAX_PAGE_ORDER &&
		       ev->fallback_migratetype >= 0 &&
		       ev->fallback_migratetype <= PL_TRACE_MAX_MIGRATETYPE &&
		       (ev->change_ownership == 0 || ev->change_ownership == 1);
	case PL_TRACE_ALLOC_VMAP_AREA:	/* an area that wraps the address space */
		return (ev->failed == 0 || ev->failed == 1) &&
		       ev->size <= ULONG_MAX - ev->va_start;
	case PL_TRACE_PURGE_VMAP_AREA:
		return ev->npurged <= LONG_MAX;
	default:
		return true;
	}
}

/*
 * Decode the pending event of @c into *@ev. Return: 1 an event, 0 one that
 * pagelab does not read (counted), 2 a fork (*@child set), -1 a malformed
 * event (counted, skipped as the text parser skips a malformed line), -EIO
 * corrupt.
 */
static int decode(struct pl_tracedat *d, struct td_cpu *c, struct pl_trace_event *ev,
		  struct pl_trace_stats *st, int *child)
{
	const unsigned char *rec = c->rec;
	struct td_format *f;
	unsigned int id;
	const char *comm;
	int pid;

	if (c->rec_len < (uint32_t)d->type_off + d->type_size)
		return td_fail(d, "corrupt: a %u-byte event on CPU %u", c->rec_len, c->cpu), -EIO;
	id = (unsigned int)td_ld(rec + d->type_off, d->type_size);
	f = id < 65536 ? d->by_id[id] : NULL;
	if (!f)
		return td_fail(d, "event id %u on CPU %u has no format file in the trace.dat", id,
			    c->cpu), -EIO;
	if (c->rec_len < f->min_size)
		return td_fail(d, "corrupt: a %s/%s event on CPU %u is %u bytes, its format needs %u",
			    f->system, f->name, c->cpu, c->rec_len, f->min_size), -EIO;
	if (f->kind == TD_KIND_OTHER) {
		st->warn[PL_TW_unknown_event]++;
		return 0;
	}
	pid = (int)sfield(f, rec, TDF_PID);
	if (f->kind == TD_KIND_FORK) {
		ev->pid = (int)sfield(f, rec, TDF_PARENT);
		*child = (int)sfield(f, rec, TDF_CHILD);
		return 2;
	}
	memset(ev, 0, sizeof(*ev));
	ev->type = (enum pl_trace_type)f->kind;
	ev->cpu = c->cpu;
	ev->ts_ns = c->rec_ts;
	ev->nr_lazy = -1;
	ev->pid = pid;
	comm = comm_of(d, c, pid);
	memcpy(ev->comm, comm, sizeof(ev->comm));
	ev->comm[sizeof(ev->comm) - 1] = '\0';
	ev->kworker = !memcmp(comm, "kworker/", 8);
	ev->kswapd = !memcmp(comm, "kswapd", 6);
	if (f->have >> TDF_PFN & 1) {
		ev->pfn = ufield(f, rec, TDF_PFN);
		if (f->size[TDF_PFN] == 4 && ev->pfn == 0xffffffffUL)
			ev->pfn = -1UL;
	}
	if (f->have >> TDF_ORDER & 1)
		ev->order = (int)sfield(f, rec, TDF_ORDER);
	if (f->have >> TDF_MT & 1)
		ev->migratetype = (int)sfield(f, rec, TDF_MT);
	switch (f->kind) {
	case PL_TRACE_PAGE_ALLOC:
		if (f->have >> TDF_GFP & 1)
			ev->gfp = td_format_gfp(f, ufield(f, rec, TDF_GFP));
		break;
	case PL_TRACE_ZONE_LOCKED:
		ev->percpu_refill = (int)sfield(f, rec, TDF_REFILL);
		break;
	case PL_TRACE_EXTFRAG:
		ev->fallback_order = (int)sfield(f, rec, TDF_FBORDER);
		ev->fallback_migratetype = (int)sfield(f, rec, TDF_FBMT);
		ev->change_ownership = (int)sfield(f, rec, TDF_OWN);
		ev->fragmenting = ev->fallback_order < pageblock_order;
		break;
	case PL_TRACE_ALLOC_VMAP_AREA:
		ev->va_start = ufield(f, rec, TDF_VA);
		ev->size = ufield(f, rec, TDF_SIZE);
		if (f->have >> TDF_FAILED & 1)
			ev->failed = (int)sfield(f, rec, TDF_FAILED);
		break;
	case PL_TRACE_FREE_VMAP_AREA:
		ev->va_start = ufield(f, rec, TDF_VA);
		if (f->have >> TDF_NRLAZY & 1) {
			long v = (long)ufield(f, rec, TDF_NRLAZY);

			ev->nr_lazy = v >= 0 ? v : -1;
		}
		break;
	case PL_TRACE_PURGE_VMAP_AREA:
		ev->npurged = ufield(f, rec, TDF_NPURGED);
		break;
	case PL_TRACE_PAGE_FREE_BATCHED:
		ev->order = 0;
		break;
	default:
		break;
	}
	if (!in_range(f, ev)) {
		st->warn[PL_TW_malformed_line]++;
		return -1;
	}
	return 1;
}

int pl_tracedat_next(struct pl_tracedat *d, struct pl_trace_event *ev, struct pl_trace_stats *st)
{
	if (d->failed)
		return -EIO;
	if (!d->records) {	/* first call: prime every CPU */
		for (unsigned int i = 0; i < d->nr_cpus; i++)
			if (cpu_advance(d, &d->cpus[i], st) < 0)
				return -EIO;
	}
	for (;;) {
		struct td_cpu *best = NULL;
		int ret, child = 0;

		for (unsigned int i = 0; i < d->nr_cpus; i++) {
			struct td_cpu *c = &d->cpus[i];

			if (c->pending && (!best || c->rec_ts < best->rec_ts))
				best = c;
		}
		if (!best) {
			d->records += !d->records;	/* never prime twice */
			return 0;
		}
		d->records++;
		ret = decode(d, best, ev, st, &child);
		if (ret == -EIO)
			return -EIO;
		if (cpu_advance(d, best, st) < 0)
			return -EIO;
		if (ret == 2) {
			ev->size = (unsigned long)child;	/* the caller follows forks */
			ev->line = d->records;
			return 2;
		}
		if (ret == 1) {
			ev->line = d->records;
			return 1;
		}
	}
}
