// SPDX-License-Identifier: MIT
/*
 * params.c - pagelab-bench's parameter validation layer: one table giving
 * every suite key its kind and range, checked for all of a run's key=value
 * pairs before the suite starts, so bad input is one line on stderr and exit
 * status 2 before any machine exists; and the strict number parser the
 * suites read their values with.
 *
 * Invariants: every key a suite lists in its ->keys has a spec here
 * (`pagelab-bench --keys` prints them, and the CLI contract test feeds each
 * one invalid values); a value that passed bench_check_params() parses with
 * param_ulong() and lies in its range.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "pagelab/snapshot.h"

enum param_kind {
	PK_NUM,		/* a number in [min, max] */
	PK_SIZE,	/* a byte count with an optional K/M/G suffix, in [min, max] */
	PK_NUMLIST,	/* comma-separated numbers, each in [min, max] */
	PK_POW2LIST,	/* ... each also a power of two */
	PK_DESIGNS,	/* comma-separated design presets */
	PK_DESIGN,	/* one design preset */
	PK_NAMES,	/* comma-separated names from ->names */
	PK_NAME,	/* one name from ->names */
	PK_TEXT,	/* any non-empty text (a path) */
};

static const char *const kind_names[] = {
	[PK_NUM] = "number", [PK_SIZE] = "size", [PK_NUMLIST] = "number-list",
	[PK_POW2LIST] = "power-of-2-list", [PK_DESIGNS] = "design-list", [PK_DESIGN] = "design",
	[PK_NAMES] = "name-list", [PK_NAME] = "name", [PK_TEXT] = "text",
};

/**
 * struct param_spec - what one key accepts.
 * @suite: the suite it applies to, or NULL for every suite listing the key
 *         (a suite's own entry comes first and wins).
 * @names: for PK_NAME(S): the accepted names, comma-separated.
 */
struct param_spec {
	const char *suite;
	const char *key;
	enum param_kind kind;
	unsigned long min, max;
	const char *names;
};

#define G_ (1UL << 30)
#define T_ (1UL << 40)

static const struct param_spec specs[] = {
	/* suite-specific meanings first */
	{ "page_alloc_high_order", "order", PK_NUMLIST, 0, MAX_PAGE_ORDER, NULL },
	{ "alloc_many_free_few", "vcpus", PK_NUMLIST, 2, PL_MAX_VCPUS, NULL },
	{ "exit_avalanche", "vcpus", PK_NUMLIST, 1, PL_MAX_VCPUS, NULL },
	{ "kbuild", "vcpus", PK_NUMLIST, 1, PL_MAX_VCPUS, NULL },
	{ "alloc_one_free_many", "vcpus", PK_NUMLIST, 1, PL_MAX_VCPUS, NULL },
	{ "hugetlb_1g", "vcpus", PK_NUMLIST, 1, PL_MAX_VCPUS, NULL },
	{ "show", "design", PK_DESIGN, 0, 0, NULL },
	{ "test_vmalloc", "nr_pages", PK_NUM, 0, 1UL << 20, NULL },
	{ "test_vmalloc", "vcpus", PK_NUM, 0, PL_MAX_VCPUS, NULL },
	{ "range_workload", "reps", PK_NUM, 1, 15, NULL },
	{ "buddy_alloc_free", "threads", PK_NUM, 1, 16, NULL },	/* its MAX_THREADS */
	{ "replay", "state", PK_NAME, 0, 0, "fresh,counts,positional" },	/* RW_MAX_REPS */
	{ "replay", "tick", PK_NAME, 0, 0, "kernel,first" },	/* each vCPU's vmstat tick phase */
	{ "replay", "tick_ms", PK_NUM, 0, 999, NULL },		/* ... or a fixed one */
	{ "replay", "pcp_busy", PK_NUM, 0, 1, NULL },		/* frees past a busy PCP */
	{ "replay", "jobs", PK_NUM, 1, 256, NULL },		/* replays in processes at once */
	{ "trace_throughput", "pass", PK_NAME, 0, 0, "all,parse,decode,replay" },
	{ "llfree_anchors", "threads", PK_NUM, 1, 1024, NULL },	/* running vCPUs, not host threads */
	{ "llfree_anchors", "workload", PK_NAMES, 0, 0, "bulk,repeat,rand" },
	{ "llfree_anchors", "allocs", PK_NUM, 1, 100000000UL, NULL },
	{ "llfree_anchors", "pcp_autotune", PK_NUM, 0, 1, NULL },
	{ "llfree_anchors", "warmup", PK_NUM, 0, 1, NULL },
	{ "llfree_anchors", "clock", PK_NAME, 0, 0, "wall,thread" },
	{ NULL, "vtime", PK_NUM, 0, 1, NULL },	/* the virtual-time model */
	{ NULL, "vt_costs", PK_NAME, 0, 0, "anchors,host" },	/* its cost set (vtime_params.c) */
	{ NULL, "topology", PK_TEXT, 0, 0, NULL },	/* SOCKETSxCORESxTHREADS, parsed by bench_machine() */
	/* the machine */
	{ NULL, "mem", PK_SIZE, 2UL << 20, PL_MAX_MEM_BYTES, NULL },	/* a pageblock: the smallest machine */
	{ NULL, "dma32", PK_SIZE, 0, 4 * T_, NULL },
	{ NULL, "vcpus", PK_NUM, 1, PL_MAX_VCPUS, NULL },
	{ NULL, "design", PK_DESIGNS, 0, 0, NULL },
	{ NULL, "debug", PK_NUM, 0, 3, NULL },
	{ NULL, "lock_stat", PK_NUM, 0, 1, NULL },
	{ NULL, "pcp", PK_NUM, 0, 1, NULL },
	/* how a suite runs */
	{ NULL, "threads", PK_NUM, 1, PL_MAX_VCPU_THREADS, NULL },
	{ NULL, "slice", PK_NUM, 1, 1000000000UL, NULL },
	{ NULL, "reps", PK_NUM, 1, 1000, NULL },
	{ NULL, "seed", PK_NUM, 0, ULONG_MAX, NULL },
	{ NULL, "reads", PK_NUM, 1, 100000000UL, NULL },
	{ NULL, "rounds", PK_NUM, 0, 1000000000UL, NULL },
	{ NULL, "order", PK_NUM, 0, MAX_PAGE_ORDER, NULL },
	{ NULL, "nr", PK_NUM, 1, 100000000000UL, NULL },
	{ NULL, "batch", PK_NUM, 1, 1000000UL, NULL },
	{ NULL, "ops", PK_NUM, 1, 100000000000UL, NULL },
	{ NULL, "exit_pages", PK_NUM, 1, 1000000000UL, NULL },
	{ NULL, "gig_probe", PK_NUM, 0, ULONG_MAX, NULL },	/* 1 GiB ranges tried after a run */
	{ NULL, "order_min", PK_NUM, 0, MAX_PAGE_ORDER, NULL },
	{ NULL, "order_max", PK_NUM, 0, MAX_PAGE_ORDER, NULL },
	{ NULL, "iterations", PK_NUM, 1, 1000000UL, NULL },
	{ NULL, "plus1", PK_NUM, 0, 1, NULL },
	{ NULL, "monitor", PK_NUM, 0, 1, NULL },
	{ NULL, "monitor_ms", PK_NUM, 1, 1000, NULL },	/* the run waits out a period */
	{ NULL, "churn", PK_NUM, 0, 1, NULL },
	{ NULL, "what", PK_NAMES, 0, 0, "buddyinfo,pagetypeinfo,zoneinfo,vmallocinfo,vmstat,extfrag_index,unusable_index,lock_stat,events" },
	{ NULL, "workload", PK_NAME, 0, 0, "fresh,churn" },
	{ NULL, "live", PK_NUMLIST, 1, 100000000UL, NULL },
	{ NULL, "align", PK_POW2LIST, 1, 1UL << 20, NULL },
	{ NULL, "pairs", PK_NUM, 1, 1000000000UL, NULL },
	{ NULL, "peers", PK_TEXT, 0, 0, NULL },
	{ NULL, "peer_timeout", PK_NUM, 1, 86400, NULL },
	{ NULL, "nr_pages", PK_NUM, 1, 1UL << 20, NULL },
	{ NULL, "use_huge", PK_NUM, 0, 1, NULL },
	{ NULL, "test_loop_count", PK_NUM, 1, 1000000000UL, NULL },
	{ NULL, "test_repeat_count", PK_NUM, 1, 10000, NULL },
	{ NULL, "run_test_mask", PK_NUM, 1, 4095, NULL },
	{ NULL, "nr_threads", PK_NUM, 0, PL_MAX_VCPUS, NULL },
	{ NULL, "sequential_test_order", PK_NUM, 0, 1, NULL },
	{ NULL, "nr_pcpu_objects", PK_NUM, 1, 10000000UL, NULL },
	{ NULL, "template", PK_NAME, 0, 0, "performance,smoke,stress" },
	{ NULL, "floor", PK_NUM, 0, 1, NULL },
	{ NULL, "tick_ops", PK_NUM, 1, 100000000000UL, NULL },
	{ NULL, "trace", PK_TEXT, 0, 0, NULL },
	{ "trace_record", "instance", PK_TEXT, 0, 0, NULL },
	{ "trace_record", "out", PK_TEXT, 0, 0, NULL },
	{ "trace_record", "events", PK_TEXT, 0, 0, NULL },
	{ "trace_record", "tracefs", PK_TEXT, 0, 0, NULL },
	{ "trace_record", "scratch", PK_TEXT, 0, 0, NULL },
	{ "trace_info", "tasks", PK_TEXT, 0, 0, NULL },
	{ "trace_info", "command_pid", PK_NUM, 1, 4194304, NULL },
	{ "trace_info", "top", PK_NUM, 1, 1000, NULL },
	{ "trace_convert", "out", PK_TEXT, 0, 0, NULL },
	{ NULL, "emit_trace", PK_TEXT, 0, 0, NULL },
	{ NULL, "after", PK_TEXT, 0, 0, NULL },
	{ NULL, "show_state", PK_TEXT, 0, 0, NULL },
	{ NULL, "cpus", PK_NUM, 1, PL_MAX_VCPUS, NULL },
	{ NULL, "vmalloc", PK_NUM, 0, 1, NULL },
	{ NULL, "max_events", PK_NUM, 1, ULONG_MAX, NULL },
	{ NULL, "warmup", PK_NUM, 0, 1000000000UL, NULL },
	{ NULL, "pin", PK_NUM, 0, 1, NULL },	/* the harness's (harness.c), every suite */
	/* snapshots during a run (snapshot.c), every suite; needed together: bench_snap_check() */
	{ NULL, "snapshot_ms", PK_NUM, 1, 86400000UL, NULL },
	{ NULL, "snapshot_ops", PK_NUM, 1, 100000000000UL, NULL },
	{ NULL, "snapshot_dir", PK_TEXT, 0, 0, NULL },
	/* every suite's machine (bench_machine()); machine= is also checked in main() */
	{ NULL, "machine", PK_TEXT, 0, 0, NULL },
	{ NULL, "snapshot", PK_TEXT, 0, 0, NULL },
	{ NULL, "state", PK_NAME, 0, 0, "fresh,counts" },
};

static const struct param_spec *find_spec(const char *suite, const char *key)
{
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++)
		if (!strcmp(specs[i].key, key) && (!specs[i].suite || !strcmp(specs[i].suite, suite)))
			return &specs[i];
	return NULL;
}

/*
 * Parse @s (to @end, or its NUL) as an unsigned number: digits only (0x for
 * hex), no sign, no blanks; with @size a K/M/G suffix. Return: 0, or
 * -EINVAL (not a number) / -ERANGE (above ULONG_MAX).
 */
static int parse_number(const char *s, size_t len, bool size, unsigned long *out)
{
	char buf[64], *end;
	unsigned long long n;
	unsigned int shift = 0;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (size && len > 1) {
		switch (buf[len - 1]) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		case 'T': case 't': shift = 40; break;
		default: break;
		}
		if (shift)
			buf[len - 1] = '\0';
	}
	errno = 0;
	n = strtoull(buf, &end, 0);
	if (*end || end == buf)
		return -EINVAL;
	if (errno == ERANGE || n > ULONG_MAX || (shift && n > (ULONG_MAX >> shift)))
		return -ERANGE;
	*out = (unsigned long)(n << shift);
	return 0;
}

static __printf(3, 4) int bad(const char *key, const char *val, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pagelab-bench: %s=%.60s%s: %s\n", key, val, strlen(val) > 60 ? "..." : "",
		why);
	return 2;
}

static int check_number(const struct param_spec *sp, const char *val, const char *s, size_t len)
{
	unsigned long n;
	int err = parse_number(s, len, sp->kind == PK_SIZE, &n);

	if (err == -ERANGE)
		return bad(sp->key, val, "too large (overflows)");
	if (err)
		return bad(sp->key, val, "not a number (a non-negative integer%s)",
			   sp->kind == PK_SIZE ? ", K/M/G/T suffixes allowed" : "");
	if (n < sp->min || n > sp->max)
		return bad(sp->key, val, "%lu is not in %lu..%lu", n, sp->min, sp->max);
	if (sp->kind == PK_POW2LIST && (n & (n - 1)))
		return bad(sp->key, val, "%lu is not a power of two", n);
	return 0;
}

static bool name_in(const char *names, const char *s, size_t len)
{
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, s, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static int check_item(const struct param_spec *sp, const char *val, const char *s, size_t len)
{
	char name[160], err[160];
	struct pl_design d;

	switch (sp->kind) {
	case PK_DESIGN:
	case PK_DESIGNS:
		if (!len || len >= sizeof(name))
			return bad(sp->key, val, "empty or unknown design");
		memcpy(name, s, len);
		name[len] = '\0';
		/* a preset, switches, or a preset plus switches (pl_design_parse()) */
		if (pl_design_parse(name, &d, err, sizeof(err))) {
			fprintf(stderr, "pagelab-bench: unknown design '%s': %s (see pagelab-bench "
				"--list)\n", name, err);
			return 2;
		}
		return 0;
	case PK_NAME:
	case PK_NAMES:
		if (!name_in(sp->names, s, len))
			return bad(sp->key, val, "'%.*s' is not one of %s", (int)len, s, sp->names);
		return 0;
	default:
		return check_number(sp, val, s, len);
	}
}

static int check_value(const struct param_spec *sp, const char *val)
{
	bool list = sp->kind == PK_NUMLIST || sp->kind == PK_POW2LIST || sp->kind == PK_DESIGNS ||
		    sp->kind == PK_NAMES;
	int n = 0;

	if (!*val)
		return bad(sp->key, val, "empty value");
	if (sp->kind == PK_TEXT) {
		/* peers= is quoted into a shell command (range_workload.c run_peer()) */
		if (!strcmp(sp->key, "peers") && strchr(val, '\''))
			return bad(sp->key, val, "a path with a single quote");
		return strlen(val) < PATH_MAX ? 0 : bad(sp->key, val, "too long");
	}
	if (!list)
		return check_item(sp, val, val, strlen(val));
	for (const char *p = val;; n++) {
		size_t len = strcspn(p, ",");
		int err = check_item(sp, val, p, len);

		if (err)
			return err;
		if (n == 32)
			return bad(sp->key, val, "more than 32 items");
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

int bench_check_params(const struct bench *b)
{
	for (int i = 0; i < b->nr_params; i++) {
		const struct param_spec *sp = find_spec(b->suite, b->keys[i]);
		int err;

		if (!sp)	/* a key without a spec is the program's bug */
			return bad(b->keys[i], b->vals[i], "no validation rule (a bug)");
		for (int j = 0; j < i; j++)
			if (!strcmp(b->keys[j], b->keys[i]))
				return bad(b->keys[i], b->vals[i], "given twice");
		err = check_value(sp, b->vals[i]);
		if (err)
			return err;
	}
	return 0;
}

unsigned long param_ulong(const struct bench *b, const char *key, unsigned long def)
{
	const char *v = param_str(b, key, NULL);
	const struct param_spec *sp;
	unsigned long n;

	if (!v)
		return def;
	sp = find_spec(b->suite, key);
	if (parse_number(v, strlen(v), sp && sp->kind == PK_SIZE, &n)) {
		fprintf(stderr, "pagelab-bench: %s=%s is not a number\n", key, v);
		exit(2);
	}
	return n;
}

void bench_list_keys(FILE *f, const char *suite, const char *const *keys)
{
	for (const char *const *k = keys; *k; k++) {
		const struct param_spec *sp = find_spec(suite, *k);

		if (!sp) {
			fprintf(f, "%s %s none\n", suite, *k);
			continue;
		}
		fprintf(f, "%s %s %s", suite, *k, kind_names[sp->kind]);
		if (sp->kind <= PK_POW2LIST)
			fprintf(f, " %lu %lu", sp->min, sp->max);
		else if (sp->names)
			fprintf(f, " %s", sp->names);
		fputc('\n', f);
	}
}

/*
 * The machine's metadata must fit the host: the memmap (a struct page per
 * 4 KiB) must fit in the memory available now even if every struct page
 * were touched. It is a MAP_NORESERVE mapping committed as touched (boot
 * writes the heads of the blocks it frees and the pages below 4 GiB), so
 * a run commits far less: 2.2 GiB at mem=1T on exit_avalanche at 128 vCPUs
 * (the memmap is 12 GiB), 0.66 GiB at 256G. The limit was half the
 * available memory, which refused 1 TiB on a 24 GiB host.
 *
 * A machine loaded with a snapshot's state (@touched) is another matter:
 * every page not free in the snapshot is allocated, so nearly every
 * struct page is written and the whole memmap committed. That must fit
 * in half the memory available, leaving the rest to the host.
 * Return: 0, or 2 after the one-line message.
 */
int bench_check_host_fit(unsigned long mem_bytes, bool touched)
{
	long avail = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	unsigned long pages = (mem_bytes >> PAGE_SHIFT) + MAX_ORDER_NR_PAGES;
	unsigned long need = pages * sizeof(struct page), have;

	if (avail <= 0 || psize <= 0)
		return 0;
	have = (unsigned long)avail * (unsigned long)psize;
	if (touched && need > have / 2) {
		fprintf(stderr, "pagelab-bench: a %lu MiB machine loaded with a snapshot's state "
			"writes %.1f MiB of page metadata (struct page), more than half the host's "
			"%.1f MiB available\n", mem_bytes >> 20, (double)need / (1 << 20),
			(double)have / (1 << 20));
		return 2;
	}
	if (need <= have)
		return 0;
	fprintf(stderr, "pagelab-bench: mem=%lu MiB needs %.1f MiB of page metadata (struct page), "
		"more than the host's %.1f MiB available\n", mem_bytes >> 20,
		(double)need / (1 << 20), (double)have / (1 << 20));
	return 2;
}

int bench_snapshot_read(const char *key, const char *dir, struct pl_snapshot *snap)
{
	char why[256];
	int err;

	pl_warn_set_quiet(true);
	err = pl_snapshot_read(dir, snap);
	pl_warn_set_quiet(false);
	if (!err)
		return 0;
	pl_warn_last(why, sizeof(why));
	fprintf(stderr, "pagelab-bench: %s=%s: %s\n", key, dir, why);
	return 2;
}

const char *param_str(const struct bench *b, const char *key, const char *def)
{
	for (int i = 0; i < b->nr_params; i++)
		if (!strcmp(b->keys[i], key))
			return b->vals[i];
	return def;
}

void bench_design(const char *spec, struct pl_design *out)
{
	char err[160];

	if (pl_design_parse(spec, out, err, sizeof(err))) {
		fprintf(stderr, "pagelab-bench: unknown design '%s': %s (see pagelab-bench --list)\n", spec,
			err);
		exit(2);
	}
}

int bench_designs(const struct bench *b, const char *def, const char **names, int max)
{
	static char buf[256];
	const char *list = param_str(b, "design", def);
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	if (!*buf) {
		fprintf(stderr, "pagelab-bench: design= names no design\n");
		exit(2);
	}
	for (char *tok = strtok(buf, ","); tok && n < max; tok = strtok(NULL, ",")) {
		struct pl_design d;

		bench_design(tok, &d);
		names[n++] = tok;
	}
	return n;
}

bool bench_vt_on(const struct bench *b)
{
	return param_ulong(b, "vtime", 0) != 0;
}
