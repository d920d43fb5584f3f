// SPDX-License-Identifier: MIT
/*
 * tick.c - when in each second the kernel ran a CPU's vmstat_update, read
 * off a trace, so that a replay ticks each vCPU (pl_vmstat_tick(): the
 * pcp->high decay and its drain) at the kernel's moment, not at an
 * arbitrary one.
 *
 * vmstat_update is per-CPU deferrable work on a round_jiffies() 1 s grid;
 * the drains of its decay_pcp_high() are mm_page_pcpu_drain runs of a
 * kworker task on that CPU. A run's start time modulo one second falls in
 * 10 ms bins; the phase is the mean offset over the busiest three adjacent
 * bins (circularly), which leaves out the kworker drains of other work
 * (drain_all_pages()'s drain_local_pages_wq) that come at other moments.
 * Where the replay's tick falls within the second changes its figures by
 * several percent (git's drain calls ranged 0.69-1.05x the kernel's over
 * four phases 250 ms apart), so the kernel's own phase is the one to use.
 *
 * Where a trace has no such drain, the phase is unknown and a replay tries
 * PL_TICK_PROBES of them; pl_tick_medoid() picks the typical run.
 *
 * Invariant: @bins and @sum_us hold @nr_cpus rows; @in_drain one flag per
 * row.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

static int grow(struct pl_tick_phase *tp, unsigned int cpu)
{
	unsigned int n = tp->nr_cpus ? tp->nr_cpus : 2;
	uint32_t (*bins)[PL_TICK_BINS];
	uint64_t (*sum)[PL_TICK_BINS];
	bool *in;
	struct pl_tick_runs *runs;

	while (n <= cpu)
		n *= 2;
	bins = realloc(tp->bins, n * sizeof(*bins));
	if (bins)
		tp->bins = bins;
	sum = realloc(tp->sum_us, n * sizeof(*sum));
	if (sum)
		tp->sum_us = sum;
	in = realloc(tp->in_drain, n * sizeof(*in));
	if (in)
		tp->in_drain = in;
	runs = realloc(tp->runs, n * sizeof(*runs));
	if (runs)
		tp->runs = runs;
	if (!bins || !sum || !in || !runs)
		return -ENOMEM;
	memset(tp->runs + tp->nr_cpus, 0, (n - tp->nr_cpus) * sizeof(*runs));
	memset(tp->bins + tp->nr_cpus, 0, (n - tp->nr_cpus) * sizeof(*bins));
	memset(tp->sum_us + tp->nr_cpus, 0, (n - tp->nr_cpus) * sizeof(*sum));
	memset(tp->in_drain + tp->nr_cpus, 0, (n - tp->nr_cpus) * sizeof(*in));
	tp->nr_cpus = n;
	return 0;
}

int pl_tick_phase_event(struct pl_tick_phase *tp, const struct pl_trace_event *ev)
{
	unsigned int cpu;
	bool drain;

	if ((!tp || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	cpu = ev->cpu;
	drain = ev->type == PL_TRACE_PCPU_DRAIN;

	if (cpu >= PL_SNAP_MAX_CPUS)
		return 0;
	if (cpu >= tp->nr_cpus && grow(tp, cpu))
		return -ENOMEM;
	if (drain && !tp->in_drain[cpu] && ev->kworker) {
		unsigned long us = (unsigned long)(ev->ts_ns % 1000000000ull / 1000);
		unsigned int b = (unsigned int)(us / (1000000 / PL_TICK_BINS));

		struct pl_tick_runs *rn = &tp->runs[cpu];

		tp->bins[cpu][b]++;
		tp->sum_us[cpu][b] += us;
		if (rn->nr == rn->cap) {
			size_t cap = rn->cap ? rn->cap * 2 : 64;
			uint64_t *p = realloc(rn->start, cap * sizeof(*p));

			if (!p)
				return -ENOMEM;
			rn->start = p;
			rn->cap = cap;
		}
		rn->start[rn->nr++] = ev->ts_ns;
	}
	tp->in_drain[cpu] = drain;
	return 0;
}

/* The phase (ns) of one set of bins, or -1 with fewer than @min_runs in its busiest three. */
static long phase_of(const uint32_t bins[PL_TICK_BINS], const uint64_t sum_us[PL_TICK_BINS],
		     unsigned long min_runs)
{
	unsigned long best = 0, n = 0;
	unsigned int at = 0;
	double us = 0;

	for (unsigned int b = 0; b < PL_TICK_BINS; b++) {
		unsigned long w = 0;

		for (int d = -1; d <= 1; d++)
			w += bins[(b + PL_TICK_BINS + d) % PL_TICK_BINS];
		if (w > best) {
			best = w;
			at = b;
		}
	}
	if (!best || best < min_runs)
		return -1;
	/* the mean offset over the three bins, unwrapped around bin @at */
	for (int d = -1; d <= 1; d++) {
		int b = ((int)at + PL_TICK_BINS + d) % PL_TICK_BINS;
		double shift = (int)at + d < 0 ? -1e6 : (int)at + d >= PL_TICK_BINS ? 1e6 : 0;

		us += (double)sum_us[b] + shift * bins[b];
		n += bins[b];
	}
	us /= (double)n;
	if (us < 0)
		us += 1e6;
	if (us >= 1e6)
		us -= 1e6;
	return (long)(us * 1000);
}

/*
 * A CPU whose own drains are too few takes the phase of all CPUs' drains
 * together: every CPU's vmstat_update is queued round_jiffies_relative()
 * on the same whole-second jiffies grid (the per-CPU skew is 3 jiffies a
 * CPU), so one CPU's phase is the others' (kbuild3: CPU 0 at 126 ms, CPU 1
 * with no kworker drain at all). Pooled, one run is enough: a short trace
 * may show a single decay drain (tarxz: one, at 110 ms), and any run is
 * nearer the kernel's moment than one second after the first event.
 */
long pl_tick_phase_ns(const struct pl_tick_phase *tp, unsigned int cpu)
{
	uint32_t bins[PL_TICK_BINS] = { 0 };
	uint64_t sum_us[PL_TICK_BINS] = { 0 };
	long ns;

	if (!tp && pl_arg_refused(__func__, "NULL argument"))
		return -1;
	ns = cpu < tp->nr_cpus ? phase_of(tp->bins[cpu], tp->sum_us[cpu], PL_TICK_MIN_RUNS) : -1;

	if (ns >= 0)
		return ns;
	for (unsigned int c = 0; c < tp->nr_cpus; c++)
		for (unsigned int b = 0; b < PL_TICK_BINS; b++) {
			bins[b] += tp->bins[c][b];
			sum_us[b] += tp->sum_us[c][b];
		}
	return phase_of(bins, sum_us, 1);
}

size_t pl_tick_phase_runs(const struct pl_tick_phase *tp, unsigned int cpu,
			  const uint64_t **starts)
{
	if ((!tp || !starts) && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	if (cpu >= tp->nr_cpus || !tp->runs[cpu].nr) {
		*starts = NULL;
		return 0;
	}
	*starts = tp->runs[cpu].start;
	return tp->runs[cpu].nr;
}

void pl_tick_phase_release(struct pl_tick_phase *tp)
{
	if (!tp)
		return;
	for (unsigned int c = 0; tp->runs && c < tp->nr_cpus; c++)
		free(tp->runs[c].start);
	free(tp->runs);
	free(tp->bins);
	free(tp->sum_us);
	free(tp->in_drain);
	memset(tp, 0, sizeof(*tp));
}

/* The scored figures of @c, to set runs against each other. */
static void medoid_figures(const struct pl_trace_score *c, double f[5])
{
	f[0] = (double)c->pcp_refills;
	f[1] = c->pcp_refills ? (double)c->pcp_refill_pages / (double)c->pcp_refills : 0;
	f[2] = (double)c->pcp_drain_calls;
	f[3] = (double)c->pcp_drained_pages;
	f[4] = (double)pl_trace_score_zone_lock(c);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int pl_tick_medoid(const struct pl_trace_score *runs, size_t n)
{
	double f[PL_TICK_PROBES][5], med[5], best = 0;
	int at = 0;

	if (!runs || !n || n > PL_TICK_PROBES) {
		pl_warn_ratelimited("pl_tick_medoid: %s%zu runs: want 1..%d",
				    runs ? "" : "NULL, ", n, PL_TICK_PROBES);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		medoid_figures(&runs[i], f[i]);
	for (int j = 0; j < 5; j++) {
		double v[PL_TICK_PROBES];

		for (size_t i = 0; i < n; i++)
			v[i] = f[i][j];
		qsort(v, n, sizeof(v[0]), cmp_double);
		med[j] = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	}
	/* the product of the ratios, larger over smaller: the sum of |ln| without libm */
	for (size_t i = 0; i < n; i++) {
		double d = 1;

		for (int j = 0; j < 5; j++) {
			double x = f[i][j] + 1, y = med[j] + 1;

			d *= x > y ? x / y : y / x;
		}
		if (!i || d < best) {
			best = d;
			at = (int)i;
		}
	}
	return at;
}
