// SPDX-License-Identifier: MIT
/*
 * keys.c - the shared key table and what the runner derives from every
 * key table: lookup (bench_key_find()), the rows --list prints in order
 * (bench_key_at()) and `--keys`.
 *
 * A key is declared once. A suite's own keys are rows of its ->keys
 * (bench/suites/), in the order --list shows them; a key several suites
 * read the same way (the machine's, a workload's seed or reps) is a row
 * here, which a suite takes with BENCH_KEY(name) and may give its own
 * default or text (BENCH_KEY_DEF/_DOC). The every-suite rows (pin=,
 * machine=, vtime=, snapshot_ms= ...) are taken by every suite without
 * being named. The validation layer (params.c) reads kind and range from
 * the same rows, so a key cannot be documented and checked differently.
 *
 * Invariants: every BENCH_KEY() in a suite's table names a row here
 * (test bench_list fails on "(undocumented)"); a row's default is the one
 * its readers pass to param_ulong()/param_str().
 */
#include <limits.h>
#include <string.h>
#include "bench.h"

#define T_ (1UL << 40)

/* Where a shared row applies. */
enum key_scope {
	KS_NAMED,	/* a suite that names it in its table */
	KS_EVERY,	/* every suite, shown under "every suite" by --list */
	KS_MACHINE,	/* every suite whose machine is bench_machine()'s (snapshot=, state=) */
};

struct shared_key {
	struct bench_key key;
	enum key_scope scope;
};

static const struct shared_key shared[] = {
	/* the machine (bench_machine()) */
	{ { "mem", BK_SIZE, 2UL << 20, PL_MAX_MEM_BYTES, NULL, "16G",	/* a pageblock: the smallest */
	    "memory size (K/M/G suffixes), a multiple of 2 MiB" }, KS_NAMED },
	{ { "dma32", BK_SIZE, 0, 4 * T_, NULL, "4G", "end of ZONE_DMA32 (clipped to mem)" }, KS_NAMED },
	{ { "vcpus", BK_NUM, 1, PL_MAX_VCPUS, NULL, "1", "virtual CPUs of the machine" }, KS_NAMED },
	{ { "debug", BK_NUM, 0, 3, NULL, "0", "checker level: 0 off, 1 at teardown, 2 after "
	    "slow-path events, 3 after every op" }, KS_NAMED },
	{ { "lock_stat", BK_NUM, 0, 1, NULL, "0", "time lock holds and waits (1 on)" }, KS_NAMED },
	{ { "pcp", BK_NUM, 0, 1, NULL, "1", "per-CPU page lists (0: every alloc/free goes to the "
	    "buddy)" }, KS_NAMED },
	{ { "design", BK_DESIGNS, 0, 0, NULL, "v6.18", "comma-separated designs, each "
	    "PRESET[+SWITCH...] (presets and switches below)" }, KS_NAMED },
	/* how a suite's workload runs */
	{ { "seed", BK_NUM, 0, ULONG_MAX, NULL, "1", "PRNG seed of the workload" }, KS_NAMED },
	{ { "reps", BK_NUM, 1, 1000, NULL, "3", "repetitions per design (the best or each is "
	    "reported)" }, KS_NAMED },
	{ { "threads", BK_NUM, 1, PL_MAX_VCPU_THREADS, NULL, "1", "real threads, each entering "
	    "its own vCPU" }, KS_NAMED },
	{ { "order", BK_NUM, 0, MAX_PAGE_ORDER, NULL, "0", "allocation order" }, KS_NAMED },
	/* every suite: the harness (harness.c), the machine profile, virtual time */
	{ { "pin", BK_NUM, 0, 1, NULL, "1", "pin the main thread to its CPU (every suite; "
	    "bench/harness.c)" }, KS_EVERY },
	{ { "machine", BK_TEXT, 0, 0, NULL, "(none)", "a machine profile: CPUs, memory layout, "
	    "topology (machine profiles below)" }, KS_EVERY },	/* the profile checked in main() */
	{ { "snapshot", BK_TEXT, 0, 0, NULL, "(none)", "a /proc snapshot directory to load the "
	    "machine's state from" }, KS_MACHINE },
	{ { "state", BK_NAME, 0, 0, "fresh,counts", "counts with a snapshot, else fresh",
	    "the state loaded from snapshot=: fresh or counts" }, KS_MACHINE },
	{ { "vtime", BK_NUM, 0, 1, NULL, "0", "1: virtual time: every record gets a "
	    "deterministic \"vtime\" figure" }, KS_EVERY },
	{ { "vt_costs", BK_NAME, 0, 0, "anchors,host", "anchors", "with vtime=1, the model's cost "
	    "set: anchors (the LLFree anchor machine) or host (this build host, measured here)" },
	  KS_EVERY },	/* vtime_params.c */
	/* snapshots during a run (snapshot.c); needed together: bench_snap_check() */
	{ { "snapshot_ms", BK_NUM, 1, 86400000UL, NULL, "(off)", "every N ms of wall time: "
	    "buddyinfo, pagetypeinfo, vmstat, zoneinfo into snapshot_dir (outside measured "
	    "regions)" }, KS_EVERY },
	{ { "snapshot_ops", BK_NUM, 1, 100000000000UL, NULL, "(off)", "the same every K page "
	    "operations (pages allocated + freed): deterministic, for vtime=1" }, KS_EVERY },
	{ { "snapshot_dir", BK_TEXT, 0, 0, NULL, "(none)", "where snapshots go: "
	    "DIR/NNNN/{buddyinfo,...} and DIR/index" }, KS_EVERY },
};

static const char *const kind_names[] = {
	[BK_SHARED] = "none", [BK_NUM] = "number", [BK_SIZE] = "size",
	[BK_NUMLIST] = "number-list", [BK_POW2LIST] = "power-of-2-list",
	[BK_DESIGNS] = "design-list", [BK_DESIGN] = "design", [BK_NAMES] = "name-list",
	[BK_NAME] = "name", [BK_TEXT] = "text",
};

const char *bench_kind_name(enum bench_kind kind)
{
	return kind_names[kind];
}

static const struct shared_key *find_shared(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(shared); i++)
		if (!strcmp(shared[i].key.name, name))
			return &shared[i];
	return NULL;
}

/* @row completed from the shared row of its name (kind, range, default, text). */
static void resolve(const struct bench_key *row, struct bench_key *out)
{
	const struct shared_key *sk = find_shared(row->name);

	*out = *row;
	if (!sk)
		return;
	if (row->kind == BK_SHARED) {
		out->kind = sk->key.kind;
		out->min = sk->key.min;
		out->max = sk->key.max;
		out->names = sk->key.names;
	}
	if (!out->def)
		out->def = sk->key.def;
	if (!out->meaning)
		out->meaning = sk->key.meaning;
}

int bench_key_find(const struct bench_key *table, bool no_machine, const char *name,
		   struct bench_key *out)
{
	const struct shared_key *sk;

	for (const struct bench_key *k = table; k && k->name; k++) {
		if (!strcmp(k->name, name)) {
			resolve(k, out);
			return 0;
		}
	}
	sk = find_shared(name);
	if (!sk || sk->scope == KS_NAMED || (no_machine && sk->scope == KS_MACHINE))
		return -1;
	*out = sk->key;
	return 0;
}

int bench_key_at(const struct bench_key *table, unsigned int i, struct bench_key *out)
{
	if (!table) {	/* the every-suite keys --list shows */
		for (size_t j = 0; j < ARRAY_SIZE(shared); j++) {
			if (shared[j].scope == KS_EVERY && !i--) {
				*out = shared[j].key;
				return 0;
			}
		}
		return -1;
	}
	for (const struct bench_key *row = table; row->name; row++) {
		if (!i--) {
			resolve(row, out);
			return 0;
		}
	}
	return -1;
}

static void rule_line(FILE *f, const char *suite, const struct bench_key *k)
{
	fprintf(f, "%s %s %s", suite, k->name, kind_names[k->kind]);
	if (k->kind >= BK_NUM && k->kind <= BK_POW2LIST)
		fprintf(f, " %lu %lu", k->min, k->max);
	else if (k->names)
		fprintf(f, " %s", k->names);
	fputc('\n', f);
}

void bench_key_rules(FILE *f, const char *suite, const struct bench_key *table, bool no_machine)
{
	struct bench_key k;

	for (const struct bench_key *row = table; row->name; row++) {
		resolve(row, &k);
		rule_line(f, suite, &k);
	}
	/* the keys every suite takes, unless the suite declares its own */
	for (size_t i = 0; i < ARRAY_SIZE(shared); i++) {
		const struct bench_key *row = table;

		while (row->name && strcmp(row->name, shared[i].key.name))
			row++;
		if (shared[i].scope != KS_NAMED && !row->name &&
		    !(no_machine && shared[i].scope == KS_MACHINE))
			rule_line(f, suite, &shared[i].key);
	}
}
