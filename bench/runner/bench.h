/* SPDX-License-Identifier: MIT */
/*
 * bench.h - the runner's shared pieces: key=value parameters with the
 * kernel's names, the suite table, and the JSON-lines emitter (one object
 * per measurement: suite, test, design, rep, value, unit, params, counters).
 */
#ifndef PAGELAB_BENCH_H
#define PAGELAB_BENCH_H

#include <stdbool.h>
#include <stdio.h>
#include "pagelab/pagelab.h"

#define BENCH_MAX_PARAMS 32
#define BENCH_MAX_SLOTS 64

/* One figure's measured regions (harness.c); protected by: the main thread. */
struct bench_slot {
	uint64_t t0;		/* the open region's start */
	uint64_t ns;		/* wall time summed over the slot's regions */
	long minflt_start;
	long minflt;		/* host minor faults inside the slot's regions */
	unsigned int entries;	/* regions entered */
	unsigned int gen;	/* bench_slot_clear() calls: names the callgrind dumps */
};

/**
 * enum bench_kind - what a key's value is; BK_SHARED in a suite's table:
 * the shared key of that name's kind and range (keys.c).
 */
enum bench_kind {
	BK_SHARED,
	BK_NUM,		/* a number in [min, max] */
	BK_SIZE,	/* a byte count with an optional K/M/G/T suffix, in [min, max] */
	BK_NUMLIST,	/* comma-separated numbers, each in [min, max] */
	BK_POW2LIST,	/* ... each also a power of two */
	BK_DESIGNS,	/* comma-separated design specs */
	BK_DESIGN,	/* one design spec */
	BK_NAMES,	/* comma-separated names from ->names */
	BK_NAME,	/* one name from ->names */
	BK_TEXT,	/* any non-empty text (a path) */
};

/**
 * struct bench_key - one key=value parameter, declared once: in its suite's
 * table (bench/suites/, the suite's ->keys, in the order --list shows) or,
 * for a key several suites read the same way, in the shared table (keys.c)
 * that a suite's row names with BENCH_KEY(). Parsing, validation, --list,
 * --keys and the docs reference are all read from these tables.
 * @name: the key, the kernel benchmark's own name where there is one.
 * @kind: what the value is; BK_SHARED: the shared key's kind, range, names.
 * @min, @max: numbers: the accepted range (each item's for a list).
 * @names: BK_NAME(S): the accepted names, comma-separated.
 * @def: the default as --list shows it; NULL: the shared key's.
 * @meaning: one line of help; NULL: the shared key's.
 */
struct bench_key {
	const char *name;
	enum bench_kind kind;
	unsigned long min, max;
	const char *names;
	const char *def;
	const char *meaning;
};

/* A suite's row for a shared key: as shared, with its own default, with its own text. */
#define BENCH_KEY(key) { (key), BK_SHARED, 0, 0, NULL, NULL, NULL }
#define BENCH_KEY_DEF(key, d) { (key), BK_SHARED, 0, 0, NULL, (d), NULL }
#define BENCH_KEY_DOC(key, d, m) { (key), BK_SHARED, 0, 0, NULL, (d), (m) }
#define BENCH_KEY_END { NULL, BK_SHARED, 0, 0, NULL, NULL, NULL }

struct bench {
	const char *suite;
	const struct bench_key *key_table;	/* the suite's ->keys */
	bool no_machine;			/* the suite's ->no_machine */
	int nr_params;
	const char *keys[BENCH_MAX_PARAMS];
	const char *vals[BENCH_MAX_PARAMS];
	bool json;	/* --json: JSON lines on stdout, tables on stderr */
	FILE *out;	/* where the human-readable tables go */
	/* the timing harness (harness.c) */
	struct bench_slot slots[BENCH_MAX_SLOTS];
	int open_slot;		/* -1: no region open */
	int emit_slot;		/* the slot bench_emit() reports, -1 none */
	long minflt_in;		/* minor faults inside every region */
	int pinned_cpu;		/* -1: not pinned */
	bool under_callgrind;
};

struct bench_suite {
	const char *name;
	const char *summary;
	const struct bench_key *keys;	/* its own keys, BENCH_KEY_END-terminated */
	bool no_machine;	/* no bench_machine(): snapshot= and state= are not its keys */
	int (*run)(struct bench *b);
};

/* params.c: @key's value in the run's key=value pairs, or @def. */
const char *param_str(const struct bench *b, const char *key, const char *def);
/* Unsigned number (mem=/dma32=: K/M/G/T suffixes, powers of 1024). Exits 2 on junk. */
unsigned long param_ulong(const struct bench *b, const char *key, unsigned long def);

/*
 * keys.c: @name as @table (a suite's ->keys) takes it, with what it
 * inherits from the shared table filled in; the keys every suite takes
 * (pin=, machine=, vtime=, snapshot_ms= ...) are found for any table, the
 * machine's (snapshot=, state=) unless @no_machine (a suite that builds no
 * machine of bench_machine()'s: it would ignore them).
 * Return: 0, or -1 if the suite does not take @name.
 */
int bench_key_find(const struct bench_key *table, bool no_machine, const char *name,
		   struct bench_key *out);
/* keys.c: the name of @kind as `--keys` prints it ("number", "size", ...). */
const char *bench_kind_name(enum bench_kind kind);
/*
 * keys.c: the @i-th key --list shows for a suite (@table, resolved as by
 * bench_key_find()), or with @table NULL the @i-th every-suite key.
 * Return: 0, or -1 past the last.
 */
int bench_key_at(const struct bench_key *table, unsigned int i, struct bench_key *out);
/* keys.c: `--keys`: one line per key of @suite: suite, key, kind, range or names. */
void bench_key_rules(FILE *f, const char *suite, const struct bench_key *table, bool no_machine);
/* params.c: the validation layer. Return 0, or 2 after a one-line message. */
int bench_check_params(const struct bench *b);
int bench_check_host_fit(unsigned long mem_bytes, bool touched);
/*
 * params.c: pl_snapshot_read() of @dir for key @key. Return 0, or 2 after
 * one line giving the library's reason (its warning, printed once here).
 */
struct pl_snapshot;
int bench_snapshot_read(const char *key, const char *dir, struct pl_snapshot *snap);

/*
 * machine.c: a machine for suite runs: the profile of machine= (else the default
 * config), then mem=, dma32=, vcpus= (default: the profile's CPUs, else 1),
 * debug= from the params.
 */
struct pl_machine *bench_machine(const struct bench *b, const char *design);

/* params.c: a design from a spec (pl_design_parse()); one line on stderr and exit 2 if bad. */
void bench_design(const char *spec, struct pl_design *out);

/* params.c: parse "design=a,b,c" (each a preset plus switches) into up to @max names. Return: how many. */
int bench_designs(const struct bench *b, const char *def, const char **names, int max);

/* harness.c: measured regions, fault counts, pinning, callgrind (see there). */
void bench_harness_init(struct bench *b);
void bench_region_begin(struct bench *b, int slot);
uint64_t bench_region_end(struct bench *b, int slot);
void bench_slot_clear(struct bench *b, int slot);
void bench_use_slot(struct bench *b, int slot);
void bench_harness_json(const struct bench *b);

/*
 * snapshot.c: snapshot_ms=/snapshot_ops= with snapshot_dir= (every suite).
 * bench_snap_check() validates the three together (0, or 2 after one line);
 * bench_machine() registers its machines (bench_snap_machine(), also for
 * suites that make their own); the harness's pause points call
 * bench_snap_poll(); suites end their machines with bench_machine_destroy().
 */
int bench_snap_check(const struct bench *b);
void bench_snap_init(const struct bench *b);
void bench_snap_machine(struct pl_machine *m, const char *design);
void bench_snap_poll(void);
void bench_machine_destroy(struct pl_machine *m);

/* emit.c: @s as a JSON string on stdout (quotes and backslashes escaped). */
void bench_json_str(const char *s);
/*
 * emit.c: bench_emit() - one JSON record (with --json): @test's @value for @design,
 * a figure of the registry's metric @metric (include/pagelab/metric.h),
 * whose unit it prints; @m's counters when @m is not NULL. A @metric the
 * registry lacks is a bug in the suite: abort.
 */
void bench_emit(const struct bench *b, const char *test, const char *design, int rep,
		double value, const char *metric, struct pl_machine *m);

/*
 * vtime=1 (every suite): the machine keeps virtual time (include/pagelab/
 * vtime.h) and every record carries "vtime": {"value": the record's value
 * computed from virtual time, deterministic, in the record's unit;
 * "ns_per_op", "ops_per_s", "lock_wait_share", "contention_rate",
 * "transfers_per_op" of the measured region}.
 *
 * A suite brackets its measured region with bench_vt_begin()/_end() (on
 * the machine it measures), and before emitting a time-valued record
 * passes that record's value computed from bench_vt_ns() to bench_vt_set().
 * Records of counts need nothing: their vtime value is their value.
 */
/* params.c: vtime=1 was given. */
bool bench_vt_on(const struct bench *b);
void bench_vt_begin(struct pl_machine *m);
/* @ops: operations in the region (for ns/op, ops/s, transfers/op). */
void bench_vt_end(struct pl_machine *m, double ops);
/* Makespan of the last region in ns (0 without vtime). */
double bench_vt_ns(void);
/* Virtual ns of vCPU @cpu over the last region. */
double bench_vt_cpu_ns(unsigned int cpu);
void bench_vt_set(double value);

extern const struct bench_suite suite_pagetypeinfo;
extern const struct bench_suite suite_buddy_alloc_free;
extern const struct bench_suite suite_alloc_many_free_few;
extern const struct bench_suite suite_exit_avalanche;
extern const struct bench_suite suite_kbuild;
extern const struct bench_suite suite_alloc_one_free_many;
extern const struct bench_suite suite_hugetlb_1g;
extern const struct bench_suite suite_pagealloc_micro;
extern const struct bench_suite suite_show;
extern const struct bench_suite suite_range_workload;
extern const struct bench_suite suite_vmalloc_fix_size;
extern const struct bench_suite suite_test_vmalloc;
extern const struct bench_suite suite_page_alloc_high_order;
extern const struct bench_suite suite_machines;
extern const struct bench_suite suite_replay;
extern const struct bench_suite suite_trace_throughput;
extern const struct bench_suite suite_trace_record;
extern const struct bench_suite suite_trace_info;
extern const struct bench_suite suite_trace_convert;
extern const struct bench_suite suite_llfree_anchors;

/* parallel.c: independent tasks of a run in up to @jobs forked processes */
typedef void (*bench_task_fn)(void *ctx, unsigned int i, void **blob, size_t *len);
int bench_parallel(unsigned int nr, unsigned int jobs, bench_task_fn fn, void *ctx, void **out,
		   size_t *out_len);

/* machine.c: sum of every populated zone's zone->lock numbers (acquisitions, ...). */
void bench_zone_lock_stat(struct pl_machine *m, struct pl_lock_stat *out);

/* The kernel-build-like churn is the library's: pl_churn_run() (machine.h). */

/* The vmstat tick once per simulated second: the library's (machine.h). */
#define BENCH_TICK_OPS PL_TICK_OPS
static inline void bench_vmstat_tick(unsigned long *next)
{
	pl_vmstat_tick_due(next);
}

#endif /* PAGELAB_BENCH_H */
