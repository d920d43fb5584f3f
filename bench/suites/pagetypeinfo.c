// SPDX-License-Identifier: MIT
/*
 * pagetypeinfo.c - seed 002's first experiment: the average latency of a
 * /proc/pagetypeinfo read just after boot and after a kernel-build-like
 * churn, for each design, on machines built identically in one process.
 * Reads are interleaved across designs in chunks so drift hits all alike.
 * The default designs are the baseline, seed 002 exactly (mt-counts) and
 * seed 002 plus pagelab's own O(1) block counts (mt-counts+blocks), which
 * the output labels as pagelab's extension.
 */
#include <stdlib.h>
#include <string.h>
#include "bench.h"

#define MAX_DESIGNS 8
#define BUF_SIZE (64 << 10)

static const struct bench_key keys[] = {
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY_DEF("design", "v6.18,mt-counts"),
	{ "reads", BK_NUM, 1, 100000000UL, NULL, "10000",
	  "/proc/pagetypeinfo reads per measurement" },
	BENCH_KEY("seed"),
	{ "rounds", BK_NUM, 0, 1000000000UL, NULL, "max_pfn/8",
	  "churn steps of the kernel-build-like workload" },
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY_END
};

static void fmt_latency(char *out, size_t len, double us)
{
	if (us >= 1000.0)
		snprintf(out, len, "%.1f ms", us / 1000.0);
	else
		snprintf(out, len, "%.1f us", us);
}

/*
 * Average µs per read for each machine, interleaved in chunks; machine i's
 * reads are harness slot @slot0 + i.
 */
static void measure(struct bench *b, int slot0, struct pl_machine **m, int n,
		    unsigned long reads, char **bufs, double *avg,
		    double *vt_avg)
{
	unsigned long chunk = reads < 10 ? 1 : reads / 10;
	uint64_t total[MAX_DESIGNS] = { 0 }, vt_total[MAX_DESIGNS] = { 0 };

	for (unsigned long done = 0; done < reads; done += chunk) {
		unsigned long todo = min(chunk, reads - done);

		for (int i = 0; i < n; i++) {
			uint64_t v0;

			pl_enter(m[i], 0);	/* the reader is vCPU 0 (its virtual clock) */
			v0 = pl_vt_now();
			bench_region_begin(b, slot0 + i);
			for (unsigned long r = 0; r < todo; r++)
				if (pl_show_pagetypeinfo(m[i], bufs[i], BUF_SIZE) < 0)
					abort();
			total[i] += bench_region_end(b, slot0 + i);
			vt_total[i] += pl_vt_now() - v0;
			pl_leave();
		}
	}
	for (int i = 0; i < n; i++) {
		avg[i] = (double)total[i] / (double)reads / 1000.0;
		vt_avg[i] = (double)vt_total[i] / (double)reads / 1e6;	/* ps -> us */
	}
}

static double per_read(const struct pl_lock_stat *before, const struct pl_lock_stat *after,
		       unsigned long reads)
{
	return (double)(after->acquisitions - before->acquisitions) / (double)reads;
}

static void print_row(FILE *f, const char *label, const double *avg, int n)
{
	char cell[32];

	fprintf(f, "| %-21s |", label);
	for (int i = 0; i < n; i++) {
		fmt_latency(cell, sizeof(cell), avg[i]);
		fprintf(f, " %16s |", cell);
	}
	fprintf(f, "\n");
}

static void print_rule(FILE *f, int n)
{
	fprintf(f, "+-----------------------+");
	for (int i = 0; i < n; i++)
		fprintf(f, "------------------+");
	fprintf(f, "\n");
}

static int run(struct bench *b)
{
	const char *names[MAX_DESIGNS];
	int n = bench_designs(b, "v6.18,mt-counts,mt-counts+blocks", names, MAX_DESIGNS);
	unsigned long reads = param_ulong(b, "reads", 10000);
	uint64_t seed = param_ulong(b, "seed", 1);
	struct pl_machine *m[MAX_DESIGNS] = { NULL };
	struct pl_churn *st[MAX_DESIGNS];
	struct pl_churn_result res[MAX_DESIGNS];
	double fresh[MAX_DESIGNS], frag[MAX_DESIGNS], vt_fresh[MAX_DESIGNS], vt_frag[MAX_DESIGNS];
	/* zone->lock acquisitions around each read phase: what the reads cost the lock */
	struct pl_lock_stat lk[4][MAX_DESIGNS];
	char *bufs[MAX_DESIGNS];
	long len[MAX_DESIGNS];
	bool identical = true;
	FILE *f = b->out;

	if (!reads) {
		fprintf(stderr, "pagelab-bench: reads must be at least 1\n");
		return 2;
	}
	for (int i = 0; i < n; i++) {
		m[i] = bench_machine(b, names[i]);
		bufs[i] = malloc(BUF_SIZE);
	}
	for (int i = 0; i < n; i++)
		bench_zone_lock_stat(m[i], &lk[0][i]);
	measure(b, 0, m, n, reads, bufs, fresh, vt_fresh);
	for (int i = 0; i < n; i++) {
		bench_zone_lock_stat(m[i], &lk[1][i]);
		pl_enter(m[i], 0);
		st[i] = pl_churn_run(m[i], seed, param_ulong(b, "rounds", m[i]->max_pfn / 8), &res[i]);
		pl_leave();
	}
	for (int i = 0; i < n; i++)
		bench_zone_lock_stat(m[i], &lk[2][i]);
	measure(b, MAX_DESIGNS, m, n, reads, bufs, frag, vt_frag);
	for (int i = 0; i < n; i++)
		bench_zone_lock_stat(m[i], &lk[3][i]);
	for (int i = 0; i < n; i++)
		len[i] = pl_show_pagetypeinfo(m[i], bufs[i], BUF_SIZE);
	for (int i = 1; i < n; i++)
		identical &= len[i] == len[0] && !memcmp(bufs[0], bufs[i], (size_t)len[0]);

	fprintf(f, "Average latency over %lu /proc/pagetypeinfo reads (%lu MiB machine)\n", reads,
		m[0]->max_pfn >> (20 - PAGE_SHIFT));
	print_rule(f, n);
	fprintf(f, "| %-21s |", "");
	for (int i = 0; i < n; i++)
		fprintf(f, " %16s |", names[i]);
	fprintf(f, "\n");
	print_rule(f, n);
	print_row(f, "Just after boot", fresh, n);
	print_rule(f, n);
	print_row(f, "After building kernel", frag, n);
	print_rule(f, n);
	for (int i = 0; i < n; i++)
		if (m[i]->config.design.mt_counts_blocks)
			fprintf(f, "%s is pagelab's own extension beyond seed 002: \"Number of blocks "
				"type\" from per-type counts, without zone->lock\n", names[i]);
	for (int i = 1; i < n; i++)
		fprintf(f, "%s / %s: %.1fx just after boot, %.1fx after the churn\n", names[0],
			names[i], fresh[0] / fresh[i], frag[0] / frag[i]);
	fprintf(f, "after the churn: %lu free blocks, %lu live blocks; reports %s across designs\n",
		res[0].free_blocks, res[0].live_blocks, identical ? "identical" : "DIFFER");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s: %.1f zone->lock acquisitions per read just after boot, %.1f after the churn\n",
			names[i], per_read(&lk[0][i], &lk[1][i], reads),
			per_read(&lk[2][i], &lk[3][i], reads));

	for (int i = 0; i < n; i++) {
		bench_use_slot(b, i);
		bench_vt_set(vt_fresh[i]);
		bench_emit(b, "read-fresh", names[i], 0, fresh[i], "read-us", m[i]);
		bench_use_slot(b, MAX_DESIGNS + i);
		bench_vt_set(vt_frag[i]);
		bench_emit(b, "read-fragmented", names[i], 0, frag[i], "read-us", m[i]);
		bench_use_slot(b, -1);
		bench_emit(b, "zone-lock-per-read-fresh", names[i], 0,
			   per_read(&lk[0][i], &lk[1][i], reads), "zone-lock-per-read", m[i]);
		bench_emit(b, "zone-lock-per-read-fragmented", names[i], 0,
			   per_read(&lk[2][i], &lk[3][i], reads), "zone-lock-per-read", m[i]);
		bench_emit(b, "free-blocks-after-churn", names[i], 0, (double)res[i].free_blocks,
			   "free-pageblocks", m[i]);
		pl_enter(m[i], 0);
		pl_churn_release(st[i]);
		pl_leave();
		bench_machine_destroy(m[i]);
		free(bufs[i]);
	}
	return identical ? 0 : 1;
}

const struct bench_suite suite_pagetypeinfo = {
	.name = "pagetypeinfo",
	.summary = "seed 002: /proc/pagetypeinfo read latency, fresh and after a churn",
	.keys = keys,
	.run = run,
};
