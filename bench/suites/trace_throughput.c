// SPDX-License-Identifier: MIT
/*
 * trace_throughput.c - `pagelab-bench trace_throughput trace=FILE`: how
 * fast the trace layer parses (events/s, one core, decompression
 * included) and replays (events/s, parse included, on a machine of mem=
 * with one vCPU per trace CPU). A benchmark, not a test: the numbers are
 * reported, never asserted. max_events= stops early. Times are the
 * thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a shared machine wall time
 * measures the other tenants.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

static const char *const throughput_keys[] = { "trace", "mem", "dma32", "design", "max_events",
					       "reps", NULL };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct pl_trace_reader *open_or_die(const char *path)
{
	struct pl_trace_reader *r = pl_trace_open(path);

	if (!r) {
		fprintf(stderr, "pagelab-bench: trace_throughput: cannot read %s: %s\n", path,
			strerror(errno));
		exit(2);
	}
	return r;
}

static int run_throughput(struct bench *b)
{
	const char *path = param_str(b, "trace", NULL);
	unsigned long max = param_ulong(b, "max_events", ~0UL);
	int reps = (int)param_ulong(b, "reps", 1);
	const char *designs[1];
	struct pl_trace_event ev;
	unsigned int nr_cpus = 1;

	if (!path) {
		fprintf(stderr, "pagelab-bench: trace_throughput: trace=FILE is required\n");
		return 2;
	}
	bench_designs(b, "v6.18", designs, 1);
	for (int rep = 0; rep < reps; rep++) {
		struct pl_trace_reader *r = open_or_die(path);
		unsigned long n = 0;
		double t0 = now_s(), t;

		while (n < max && pl_trace_next(r, &ev) > 0)
			n++;
		t = now_s() - t0;
		nr_cpus = (unsigned int)pl_trace_get_stats(r)->max_cpu + 1;
		pl_trace_close(r);
		fprintf(b->out, "parse   %lu events in %.3f s: %.2f M events/s\n", n, t,
			(double)n / t / 1e6);
		bench_emit(b, "parse", designs[0], rep, (double)n / t, "events-per-s", NULL);
	}
	for (int rep = 0; rep < reps; rep++) {
		struct pl_trace_reader *r = open_or_die(path);
		struct pl_config cfg;
		struct pl_machine *m;
		struct pl_replay *rp;
		unsigned long n = 0;
		double t0, t;

		pl_config_default(&cfg);
		cfg.mem_bytes = param_ulong(b, "mem", 8UL << 30);
		cfg.dma32_bytes = param_ulong(b, "dma32", 2UL << 30);
		cfg.nr_cpus = nr_cpus ? nr_cpus : 1;
		pl_design_preset(designs[0], &cfg.design);
		m = pl_machine_create(&cfg);
		if (!m) {
			fprintf(stderr, "pagelab-bench: trace_throughput: cannot create the machine\n");
			return 2;
		}
		bench_snap_machine(m, designs[0]);
		rp = pl_replay_create(m, NULL);
		pl_warn_set_quiet(true);
		t0 = now_s();
		while (n < max && pl_trace_next(r, &ev) > 0) {
			pl_replay_event(rp, &ev);
			n++;
		}
		t = now_s() - t0;
		pl_warn_set_quiet(false);
		pl_trace_close(r);
		fprintf(b->out, "replay  %lu events in %.3f s: %.2f M events/s (parse included)\n", n,
			t, (double)n / t / 1e6);
		bench_emit(b, "replay", designs[0], rep, (double)n / t, "events-per-s", m);
		pl_replay_destroy(rp, true);
		bench_machine_destroy(m);
	}
	return 0;
}

const struct bench_suite suite_trace_throughput = {
	.name = "trace_throughput",
	.summary = "parse and replay speed of the trace layer (events/s, one core)",
	.keys = throughput_keys,
	.run = run_throughput,
};
