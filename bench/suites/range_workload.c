// SPDX-License-Identifier: MIT
/*
 * range_workload.c - `pagelab-bench range_workload`: the vmalloc-like range
 * workload of bench/suites/range_workload.h over pagelab's maple tree, and in the
 * same run over the peers scripts/build-peers.sh built from Debian's
 * linux-source-6.12 (the kernel's maple tree, drm_mm), if they are there.
 *
 * Parameters: live= (comma list, default 10000,100000,1000000),
 * align= (pages, comma list, default 1,512), pairs= (default 200000),
 * seed=, peers= (directory of the peer binaries, default build/peers next to
 * this binary's directory; peers=none runs ours only), peer_timeout= (seconds
 * per peer run, default 120: drm_mm's aligned lowest fit is slow), reps=
 * (default 3: rounds of ours-then-each-peer, the median of each reported).
 *
 * Ours and the kernel's maple tree are driven alike: the space outside the
 * window is stored as one reserved entry on each side (XA_ZERO_ENTRY in the
 * kernel's tree, a token in ours), as vmalloc's maple index keeps
 * [0, VMALLOC_START) and [VMALLOC_END, ~0] as entries; under the tree lock,
 * mas_empty_area() for size + align - 1 pages, round the start up with the
 * kernel's ALIGN() (align must be a power of 2), store;
 * free is mtree_erase(). drm_mm gets DRM_MM_INSERT_LOW with its own alignment.
 */
#include <libgen.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"
#include "pagelab/maple_tree.h"

struct rw_area {
	unsigned long start, size;
};

static unsigned long rw_lo, rw_hi;

/* What ours stores over the space outside the window (the kernel peer: XA_ZERO_ENTRY). */
static const unsigned long rw_reserved_token;
#define RW_RESERVED	((void *)&rw_reserved_token)

static void *rw_init(unsigned long start, unsigned long end)
{
	struct maple_tree *mt = malloc(sizeof(*mt));

	if (!mt)
		return NULL;
	mt_init_flags(mt, MT_FLAGS_ALLOC_RANGE);
	if (mtree_store_range(mt, 0, start - 1, RW_RESERVED, GFP_KERNEL) ||
	    mtree_store_range(mt, end + 1, ULONG_MAX, RW_RESERVED, GFP_KERNEL)) {
		mtree_destroy(mt);
		free(mt);
		return NULL;
	}
	rw_lo = start;
	rw_hi = end;
	return mt;
}

static int rw_alloc(void *be, struct rw_area *a, unsigned long size, unsigned long align)
{
	struct maple_tree *mt = be;
	MA_STATE(mas, mt, 0, 0);
	int ret;

	mtree_lock(mt);
	ret = mas_empty_area(&mas, rw_lo, rw_hi, size + align - 1);
	if (!ret) {
		/* The kernel's ALIGN(), as the peer range_kmaple.c does (@align is a power of 2). */
		unsigned long s = (mas.index + align - 1) & ~(align - 1);

		mas_set_range(&mas, s, s + size - 1);
		ret = mas_store_gfp(&mas, a, GFP_KERNEL);
		a->start = s;
	}
	mtree_unlock(mt);
	return ret;
}

static void rw_free(void *be, struct rw_area *a)
{
	mtree_erase(be, a->start);
}

static void rw_fini(void *be)
{
	mtree_destroy(be);
	free(be);
}

#include "range_workload.h"

static const char *const peer_bins[] = { "range_kmaple", "range_drmmm" };

/* Run one peer binary. Return: 0 with @r filled, -1 if it is missing or failed. */
static int run_peer(const char *dir, const char *bin, unsigned long live, unsigned long align,
		    unsigned long pairs, unsigned long seed, unsigned long timeout, char *name,
		    size_t name_len, struct rw_result *r)
{
	char path[PATH_MAX + 64], cmd[PATH_MAX + 256], line[512];
	FILE *p;
	int ok = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, bin);
	/* the path goes into a shell command in single quotes: a quote would end them */
	if (strchr(path, '\'') || access(path, X_OK))
		return -1;
	snprintf(cmd, sizeof(cmd), "timeout %lu '%s' %lu %lu %lu %lu", timeout, path, live, align,
		 pairs, seed);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *b = strstr(line, "backend="), *n = strstr(line, " ns_per_pair=");

		if (b && n && sscanf(n, " ns_per_pair=%lf ns_per_fill_alloc=%lf span_pages=%lu",
				     &r->ns_per_pair, &r->ns_per_fill_alloc, &r->span_pages) == 3) {
			size_t len = (size_t)(n - b) - 8;

			if (len >= name_len)
				len = name_len - 1;
			memcpy(name, b + 8, len);
			name[len] = 0;
			ok = 1;
		}
	}
	return pclose(p) == 0 && ok ? 0 : -1;
}

static void default_peers_dir(char *out, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0) {
		snprintf(out, len, "build/peers");
		return;
	}
	exe[n] = 0;
	snprintf(out, len, "%s/peers", dirname(exe));
}

#define RW_MAX_REPS	15
#define RW_BACKENDS	(1 + ARRAY_SIZE(peer_bins))

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/*
 * One (live, align) row: @reps rounds, each running ours and then every peer,
 * so that a slow spell on a shared machine hits every backend alike. A peer
 * that fails or times out is not run again (its earlier runs are dropped).
 * Reported: the median of each backend's ns/pair and ns per fill
 * allocation, and "x ours", the median over the rounds of the peer's time
 * divided by ours in the same round (a drift of the machine's speed between
 * rounds cancels out).
 */
static int range_workload_row(struct bench *b, const char *dir, unsigned long live,
			      unsigned long align, unsigned long pairs, unsigned long seed,
			      unsigned long reps, unsigned long timeout, bool peers_off,
			      bool *missing_said)
{
	double pair[RW_BACKENDS][RW_MAX_REPS], fill[RW_BACKENDS][RW_MAX_REPS];
	unsigned int got[RW_BACKENDS] = { 0 };
	bool skip[RW_BACKENDS] = { false }, failed[RW_BACKENDS] = { false };
	char name[RW_BACKENDS][64] = { "pagelab maple_tree" }, test[96];
	double ratio[RW_MAX_REPS], x;

	for (size_t i = 0; i < ARRAY_SIZE(peer_bins); i++) {
		char path[PATH_MAX + 64];

		snprintf(path, sizeof(path), "%s/%s", dir, peer_bins[i]);
		skip[i + 1] = peers_off || access(path, X_OK);
		if (skip[i + 1] && !peers_off && !*missing_said) {
			fprintf(b->out, "range_workload: no peer %s (scripts/build-peers.sh builds them); "
				"ours only\n", path);
			*missing_said = true;
		}
	}
	for (unsigned long r = 0; r < reps; r++) {
		struct rw_result res;

		if (rw_run(live, align, pairs, seed, &res)) {
			fprintf(stderr, "range_workload: live=%lu align=%lu failed\n", live, align);
			return 1;
		}
		pair[0][got[0]] = res.ns_per_pair;
		fill[0][got[0]++] = res.ns_per_fill_alloc;
		for (size_t i = 0; i < ARRAY_SIZE(peer_bins); i++) {
			size_t k = i + 1;

			if (skip[k])
				continue;
			if (run_peer(dir, peer_bins[i], live, align, pairs, seed, timeout, name[k],
				     sizeof(name[k]), &res)) {
				skip[k] = failed[k] = true;
				snprintf(name[k], sizeof(name[k]), "%s", peer_bins[i]);
				continue;
			}
			pair[k][got[k]] = res.ns_per_pair;
			fill[k][got[k]++] = res.ns_per_fill_alloc;
		}
	}
	snprintf(test, sizeof(test), "live%lu-align%lu", live, align);
	for (size_t k = 0; k < RW_BACKENDS; k++) {
		double p, f;

		if (failed[k])
			fprintf(b->out, "%-9lu %-6lu %-24s %12s\n", live, align, name[k],
				"failed, or over peer_timeout");
		if (failed[k] || !got[k])
			continue;
		/* x: the median of each round's ratio, both runs of a round back to back. */
		for (unsigned int r = 0; r < got[k]; r++)
			ratio[r] = pair[k][r] / pair[0][r];
		x = median(ratio, got[k]);
		p = median(pair[k], got[k]);
		f = median(fill[k], got[k]);
		fprintf(b->out, "%-9lu %-6lu %-24s %12.1f %14.1f %9.2f\n", live, align, name[k], p, f, x);
		bench_emit(b, test, k ? name[k] : "pagelab-maple", 0, p, "pair-ns", NULL);
	}
	return 0;
}

static int range_workload_run(struct bench *b)
{
	const char *lives = param_str(b, "live", "10000,100000,1000000");
	const char *aligns = param_str(b, "align", "1,512");
	unsigned long pairs = param_ulong(b, "pairs", 200000);
	unsigned long seed = param_ulong(b, "seed", 1);
	unsigned long reps = param_ulong(b, "reps", 3);
	const char *peers = param_str(b, "peers", NULL);
	unsigned long timeout = param_ulong(b, "peer_timeout", 120);
	char dir[PATH_MAX], lbuf[256], abuf[256], *lsave, *asave;
	bool missing_said = false, peers_off = peers && !strcmp(peers, "none");

	if (!reps || reps > RW_MAX_REPS) {
		fprintf(stderr, "range_workload: reps=%lu is not in 1..%d\n", reps, RW_MAX_REPS);
		return 2;
	}
	if (peers && !peers_off) {
		struct stat sb;

		/* a directory the user named: missing or not one is a mistake, not "no peers" */
		if (stat(peers, &sb) || !S_ISDIR(sb.st_mode)) {
			fprintf(stderr, "range_workload: peers=%.200s: not a directory of peer "
				"binaries (or none)\n", peers);
			return 2;
		}
	}
	if (peers)
		snprintf(dir, sizeof(dir), "%s", peers);
	else
		default_peers_dir(dir, sizeof(dir));
	fprintf(b->out, "range_workload: 32 TiB window, 1..16 pages + guard, lowest fit, %lu free+alloc "
		"pairs; median of %lu interleaved runs\n", pairs, reps);
	fprintf(b->out, "%-9s %-6s %-24s %12s %14s %9s\n", "live", "align", "backend", "ns/pair",
		"ns/fill-alloc", "x ours");
	snprintf(lbuf, sizeof(lbuf), "%s", lives);
	for (char *l = strtok_r(lbuf, ",", &lsave); l; l = strtok_r(NULL, ",", &lsave)) {
		unsigned long live = strtoul(l, NULL, 0);

		snprintf(abuf, sizeof(abuf), "%s", aligns);
		for (char *a = strtok_r(abuf, ",", &asave); a; a = strtok_r(NULL, ",", &asave)) {
			unsigned long align = strtoul(a, NULL, 0);

			if (!align || (align & (align - 1))) {
				fprintf(stderr, "range_workload: align=%lu is not a power of 2 (pages)\n",
					align);
				return 2;
			}
			if (!live || range_workload_row(b, dir, live, align, pairs, seed, reps, timeout,
							peers_off, &missing_said))
				return 1;
		}
	}
	return 0;
}

static const struct bench_key range_workload_keys[] = {
	{ "live", BK_NUMLIST, 1, 100000000UL, NULL, "10000,100000,1000000",
	  "comma-separated numbers of live ranges" },
	{ "align", BK_POW2LIST, 1, 1UL << 20, NULL, "1,512",
	  "comma-separated alignments in pages" },
	{ "pairs", BK_NUM, 1, 1000000000UL, NULL, "200000", "alloc/free pairs per measurement" },
	BENCH_KEY("seed"),
	{ "peers", BK_TEXT, 0, 0, NULL, "(none)",
	  "comma-separated peer implementations (see scripts/build-peers.sh)" },
	{ "peer_timeout", BK_NUM, 1, 86400, NULL, "120", "seconds before a peer run is abandoned" },
	{ "reps", BK_NUM, 1, 15, NULL, NULL, NULL },
	BENCH_KEY_END
};

const struct bench_suite suite_range_workload = {
	.name = "range_workload",
	.summary = "vmalloc-like range alloc/free: pagelab maple tree vs the kernel's maple tree and drm_mm",
	.keys = range_workload_keys,
	.no_machine = true,
	.run = range_workload_run,
};
