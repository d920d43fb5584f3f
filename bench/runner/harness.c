// SPDX-License-Identifier: MIT
/*
 * harness.c - the timing harness every suite's measured region goes through.
 *
 * A suite brackets the work whose time becomes a record's value with
 * bench_region_begin(b, slot) / bench_region_end(b, slot).  A slot
 * accumulates: a suite that interleaves designs in chunks (pagetypeinfo)
 * enters the same slot many times.  Before bench_emit() the suite names the
 * slot the record's value came from (bench_use_slot()); the record then
 * carries "harness": the slot, its wall time, the host minor faults taken
 * inside the slot's regions and outside every region, the CPU the process
 * was pinned to, and whether it ran under callgrind.
 *
 * Under valgrind --tool=callgrind --instr-atstart=no (pagelab's --mode instr),
 * a region switches instrumentation on at its start and off at its end and
 * dumps the counts with the label "pagelab-slot-N.G" (G: the slot's
 * generation, bumped by bench_slot_clear()); instrumentation is
 * global, so every thread's instructions inside the region are counted and
 * nothing outside any region is.  The Python runner sums a slot's dumps.
 *
 * Snapshots (snapshot.c) are taken at the regions' edges, outside them:
 * before a region's clock starts and after it stops.
 *
 * Invariants: regions do not nest (one open region per process, opened and
 * closed by the same thread); a slot's figures only grow.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "bench.h"
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#endif
#endif
#ifndef CALLGRIND_START_INSTRUMENTATION	/* built without valgrind's headers */
#define RUNNING_ON_VALGRIND 0
#define CALLGRIND_START_INSTRUMENTATION do { } while (0)
#define CALLGRIND_STOP_INSTRUMENTATION do { } while (0)
#define CALLGRIND_DUMP_STATS_AT(label) do { (void)(label); } while (0)
#endif

static long minflt_now(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return ru.ru_minflt;
}

/**
 * bench_harness_init() - pin the process and take the fault baseline.
 * @b: the run; its pin= parameter (default 1) says whether to pin.
 *
 * The main thread (which runs every vCPU when threads=1) is pinned to the
 * CPU it started on, so the measured region does not migrate between host
 * CPUs. Worker threads started later inherit the mask; suites with more than
 * one host thread pass pin=0.
 */
void bench_harness_init(struct bench *b)
{
	b->open_slot = -1;
	b->emit_slot = -1;
	b->pinned_cpu = -1;
	b->under_callgrind = RUNNING_ON_VALGRIND != 0;
	if (param_ulong(b, "pin", 1)) {
		int cpu = sched_getcpu();
		cpu_set_t set;

		CPU_ZERO(&set);
		if (cpu >= 0) {
			CPU_SET(cpu, &set);
			if (!sched_setaffinity(0, sizeof(set), &set))
				b->pinned_cpu = cpu;
		}
	}
}

static struct bench_slot *slot_of(struct bench *b, int slot)
{
	if (slot < 0 || slot >= BENCH_MAX_SLOTS) {
		fprintf(stderr, "pagelab-bench: harness: slot %d out of range\n", slot);
		exit(1);
	}
	return &b->slots[slot];
}

/**
 * bench_region_begin() - start a measured region that adds to @slot.
 * @b: the run.
 * @slot: 0..BENCH_MAX_SLOTS-1, one per figure the suite reports.
 */
void bench_region_begin(struct bench *b, int slot)
{
	struct bench_slot *s = slot_of(b, slot);

	if (b->open_slot >= 0) {
		fprintf(stderr, "pagelab-bench: harness: region %d opened inside %d\n", slot,
			b->open_slot);
		exit(1);
	}
	bench_snap_poll();	/* a snapshot due goes before the region, not in it */
	b->open_slot = slot;
	s->entries++;
	s->minflt_start = minflt_now();
	if (b->under_callgrind)
		CALLGRIND_START_INSTRUMENTATION;
	s->t0 = pl_now_ns();
}

/**
 * bench_region_end() - close the open region of @slot.
 * @b: the run.
 * @slot: the slot bench_region_begin() opened.
 *
 * Return: the region's wall time in ns (what the suite used to compute
 * itself from pl_now_ns()).
 */
uint64_t bench_region_end(struct bench *b, int slot)
{
	uint64_t ns = pl_now_ns();
	struct bench_slot *s = slot_of(b, slot);
	long flt;

	ns -= s->t0;
	if (b->under_callgrind) {
		char label[32];

		CALLGRIND_STOP_INSTRUMENTATION;
		snprintf(label, sizeof(label), "pagelab-slot-%d.%u", slot, s->gen);
		CALLGRIND_DUMP_STATS_AT(label);
	}
	flt = minflt_now() - s->minflt_start;
	if (b->open_slot != slot) {
		fprintf(stderr, "pagelab-bench: harness: region %d closed, %d open\n", slot,
			b->open_slot);
		exit(1);
	}
	b->open_slot = -1;
	s->ns += ns;
	s->minflt += flt;
	b->minflt_in += flt;
	bench_snap_poll();	/* after the region's figures are taken */
	return ns;
}

/**
 * bench_slot_clear() - start @slot afresh (a new sample in a reused slot).
 * @b: the run.
 * @slot: a slot that has no open region.
 */
void bench_slot_clear(struct bench *b, int slot)
{
	struct bench_slot *s = slot_of(b, slot);
	unsigned int gen = s->gen + 1;

	*s = (struct bench_slot){ .gen = gen };
}

/**
 * bench_use_slot() - the records emitted next report @slot's region figures.
 * @b: the run.
 * @slot: a slot, or -1 for records that no region measured (counters).
 */
void bench_use_slot(struct bench *b, int slot)
{
	if (slot >= 0)
		slot_of(b, slot);
	b->emit_slot = slot;
}

/* The "harness" member of a JSON record (without a leading comma). */
void bench_harness_json(const struct bench *b)
{
	long outside = minflt_now() - b->minflt_in;

	printf("\"harness\": {");
	if (b->emit_slot >= 0) {
		const struct bench_slot *s = &b->slots[b->emit_slot];

		printf("\"slot\": %d, \"gen\": %u, \"region_ns\": %llu, "
		       "\"region_entries\": %u, \"minflt_in\": %ld, ", b->emit_slot, s->gen,
		       (unsigned long long)s->ns, s->entries, s->minflt);
	}
	printf("\"minflt_in_all\": %ld, \"minflt_out\": %ld, \"pinned_cpu\": %d, "
	       "\"callgrind\": %d}", b->minflt_in, outside, b->pinned_cpu,
	       b->under_callgrind ? 1 : 0);
}
