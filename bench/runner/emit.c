// SPDX-License-Identifier: MIT
/*
 * emit.c - the JSON-lines records of pagelab-bench: one object per
 * measurement (suite, test, design, rep, value, unit, params, counters,
 * harness figures) and, with vtime=1, the record's virtual-time figures.
 * Invariant: one record is one line on stdout, flushed when written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define PL_MAX_VT_REPORT 1024

void bench_json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

/* ---- vtime=1 ------------------------------------------------------------- */

static struct {
	struct pl_vt_snap start;
	unsigned int nr_cpus, active;	/* vCPUs, and those whose clock moved */
	double ns, ops, wait_share, contention_rate, transfers;
	double cpu_ns[PL_MAX_VT_REPORT];
	double value;
	bool has_value;
} vtr;

void bench_vt_begin(struct pl_machine *m)
{
	if (!m || !m->vt)
		return;
	pl_vt_snapshot(m->vt, &vtr.start);
	vtr.nr_cpus = min(m->vt->nr_cpus, (unsigned int)PL_MAX_VT_REPORT);
	for (unsigned int c = 0; c < vtr.nr_cpus; c++)
		vtr.cpu_ns[c] = (double)m->vt->cpu[c].now;
}

void bench_vt_end(struct pl_machine *m, double ops)
{
	struct pl_vt_snap e;
	uint64_t start_min = UINT64_MAX;

	if (!m || !m->vt)
		return;
	pl_vt_snapshot(m->vt, &e);
	vtr.active = 0;
	for (unsigned int c = 0; c < vtr.nr_cpus; c++) {
		start_min = min(start_min, (uint64_t)vtr.cpu_ns[c]);
		vtr.cpu_ns[c] = ((double)m->vt->cpu[c].now - vtr.cpu_ns[c]) / 1000.0;
		vtr.active += vtr.cpu_ns[c] > 0;
	}
	if (start_min == UINT64_MAX)
		start_min = 0;
	/* The makespan: from the earliest clock at the start to the latest at the end. */
	vtr.ns = (double)(e.now_max - start_min) / 1000.0;
	vtr.ops = ops;
	vtr.wait_share = e.busy > vtr.start.busy ?
		(double)(e.wait_ps - vtr.start.wait_ps) / (double)(e.busy - vtr.start.busy) : 0;
	vtr.contention_rate = e.acquisitions > vtr.start.acquisitions ?
		(double)(e.contentions - vtr.start.contentions) /
		(double)(e.acquisitions - vtr.start.acquisitions) : 0;
	vtr.transfers = (double)(e.transfers - vtr.start.transfers);
}

double bench_vt_ns(void)
{
	return vtr.ns;
}

double bench_vt_cpu_ns(unsigned int cpu)
{
	return cpu < vtr.nr_cpus ? vtr.cpu_ns[cpu] : 0;
}

void bench_vt_set(double value)
{
	vtr.value = value;
	vtr.has_value = true;
}

static void emit_vtime(double value, const struct pl_metric *mt)
{
	double ops = vtr.ops > 0 ? vtr.ops : 1;

	/* A time the suite could not model (no machine, an external peer): null. */
	if (!vtr.has_value && mt->family == PL_METRIC_SPEED)
		printf(", \"vtime\": {\"value\": null");
	else
		printf(", \"vtime\": {\"value\": %.6g", vtr.has_value ? vtr.value : value);
	printf(", \"ns_per_op\": %.6g, \"ops_per_s\": %.6g, "
	       "\"lock_wait_share\": %.6g, \"contention_rate\": %.6g, \"transfers_per_op\": %.6g}",
	       vtr.ns * (vtr.active ? vtr.active : 1) / ops,
	       vtr.ns > 0 ? ops * 1e9 / vtr.ns : 0, vtr.wait_share, vtr.contention_rate,
	       vtr.transfers / ops);
	vtr.has_value = false;
}

void bench_emit(const struct bench *b, const char *test, const char *design, int rep,
		double value, const char *metric, struct pl_machine *m)
{
	const struct pl_metric *mt = pl_metric_find(metric);
	unsigned long ev[NR_PL_VM_EVENTS];
	const char *unit;

	if (!mt) {
		fprintf(stderr, "pagelab-bench: %s: figure '%s' names metric '%s', not in the "
			"registry\n", b->suite, test, metric ? metric : "(null)");
		abort();
	}
	unit = mt->unit;
	bench_snap_poll();	/* records are emitted outside every region */
	if (!b->json)
		return;
	printf("{\"suite\": ");
	bench_json_str(b->suite);
	printf(", \"test\": ");
	bench_json_str(test);
	printf(", \"design\": ");
	bench_json_str(design);
	printf(", \"rep\": %d, \"value\": %.6g, \"unit\": ", rep, value);
	bench_json_str(unit);
	printf(", \"metric\": ");
	bench_json_str(mt->id);
	{
		/* what was built, in the one form every front end reports (a suite
		 * comparing its own backends names no design: no canonical) */
		char canon[512];

		if (!pl_design_check(design, canon, sizeof(canon), NULL, 0)) {
			printf(", \"canonical\": ");
			bench_json_str(canon);
		}
	}
	printf(", \"params\": {");
	for (int i = 0; i < b->nr_params; i++) {
		printf(i ? ", " : "");
		bench_json_str(b->keys[i]);
		printf(": ");
		bench_json_str(b->vals[i]);
	}
	printf("}, \"counters\": {");
	if (m) {
		struct pl_lock_stat ls;

		pl_events_sum(m, ev);
		for (int i = 0; i < NR_PL_VM_EVENTS; i++)
			printf("%s\"%s\": %lu", i ? ", " : "", pl_vm_event_names[i], ev[i]);
		bench_zone_lock_stat(m, &ls);
		printf(", \"zone_lock_acquisitions\": %llu, \"zone_lock_contentions\": %llu, "
		       "\"zone_lock_wait_ns\": %llu, \"zone_lock_hold_ns\": %llu",
		       (unsigned long long)ls.acquisitions, (unsigned long long)ls.contentions,
		       (unsigned long long)ls.wait_ns, (unsigned long long)ls.hold_ns);
		if (m->vmap) {
			struct pl_vmalloc_stats vst;

			pl_vmalloc_stats(m, &vst);
			printf(", \"VMAP_AREA_BYTES\": %lu", vst.va_objsize);
		}
	}
	printf("}, ");
	bench_harness_json(b);
	if (bench_vt_on(b))
		emit_vtime(value, mt);
	printf("}\n");
	fflush(stdout);
}
