// SPDX-License-Identifier: MIT
/*
 * main.c - pagelab-bench: `pagelab-bench SUITE [key=value ...] [--json]`.
 * Parameters take the kernel benchmarks' own names; an unknown suite or
 * parameter is a one-line error and exit status 2. `--list` prints the
 * suites with every key's default and meaning, the presets and the switches
 * (`--list --json` the same as one JSON object); `--version` the commit.
 */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "pagelab/snapshot.h"

#define PL_MAX_VT_REPORT 1024

static const struct bench_suite *const suites[] = {
	&suite_pagetypeinfo,
	&suite_buddy_alloc_free,
	&suite_alloc_many_free_few,
	&suite_exit_avalanche,
	&suite_kbuild,
	&suite_alloc_one_free_many,
	&suite_hugetlb_1g,
	&suite_pagealloc_micro,
	&suite_show,
	&suite_range_workload,
	&suite_vmalloc_fix_size,
	&suite_test_vmalloc,
	&suite_page_alloc_high_order,
	&suite_machines,
	&suite_replay,
	&suite_trace_throughput,
	&suite_llfree_anchors,
};

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

struct pl_machine *bench_machine(const struct bench *b, const char *design)
{
	const char *snapdir = param_str(b, "snapshot", NULL);
	int state = pl_state_level_parse(param_str(b, "state", snapdir ? "counts" : "fresh"));
	static struct pl_snapshot snap;
	struct pl_config cfg;
	struct pl_machine *m;

	/* snapshot=DIR state=counts (every suite): a machine in a real kernel's state */
	if (state < 0 || state == PL_STATE_POSITIONAL || (state == PL_STATE_COUNTS && !snapdir)) {
		fprintf(stderr, "pagelab-bench: state=%s: suites take fresh, or counts with "
			"snapshot=DIR\n", param_str(b, "state", ""));
		exit(2);
	}
	if (param_str(b, "machine", NULL)) {
		/* a named profile (checked in main()); mem=/dma32=/vcpus= still override */
		pl_machine_profile(param_str(b, "machine", NULL), &cfg);
	} else {
		pl_config_default(&cfg);
	}
	cfg.mem_bytes = param_ulong(b, "mem", cfg.mem_bytes);
	cfg.dma32_bytes = param_ulong(b, "dma32", cfg.dma32_bytes);
	cfg.nr_cpus = (unsigned int)param_ulong(b, "vcpus", cfg.profile ? cfg.nr_cpus : 1);
	cfg.debug = (int)param_ulong(b, "debug", 0);
	cfg.lock_stat = param_ulong(b, "lock_stat", 0) != 0;
	cfg.pcp_disabled = param_ulong(b, "pcp", 1) == 0;
	cfg.vtime = bench_vt_on(b);
	/* vt_costs=anchors|host (checked in main()): the model's cost set */
	cfg.vt_costs = (unsigned int)pl_vt_costs_parse(param_str(b, "vt_costs", "anchors"));
	/* pagelab's own switch (not a kernel option): fixed pcp->high, as Linux 6.0 */
	cfg.pcp_no_autotune = param_ulong(b, "pcp_autotune", 1) == 0;
	{
		const char *t = param_str(b, "topology", NULL);	/* SOCKETSxCORESxTHREADS */

		if (t && sscanf(t, "%ux%ux%u", &cfg.topology.nr_sockets,
				&cfg.topology.cores_per_socket,
				&cfg.topology.threads_per_core) != 3) {
			fprintf(stderr, "pagelab-bench: topology=%s: want SOCKETSxCORESxTHREADS\n", t);
			exit(2);
		}
	}
	bench_design(design, &cfg.design);
	if (snapdir) {
		if (bench_snapshot_read("snapshot", snapdir, &snap))
			exit(2);
		pl_snapshot_config(&snap, &cfg);
		if (!param_str(b, "vcpus", NULL) && pl_snapshot_nr_cpus(&snap))
			cfg.nr_cpus = pl_snapshot_nr_cpus(&snap);
	}
	if (bench_check_host_fit(cfg.mem_bytes))
		exit(2);
	/* The library's own warning becomes this one line. */
	pl_warn_set_quiet(true);
	m = pl_machine_create(&cfg);
	pl_warn_set_quiet(false);
	if (!m) {
		char why[256];

		pl_warn_last(why, sizeof(why));
		fprintf(stderr, "pagelab-bench: cannot create the machine: %s\n", why);
		exit(2);
	}
	if (snapdir && state == PL_STATE_COUNTS) {
		struct pl_loaded_state *st = pl_machine_load_state(m, &snap);

		if (!st) {
			fprintf(stderr, "pagelab-bench: cannot load the snapshot's state\n");
			exit(1);
		}
		pl_state_release(st);	/* its pages stay allocated: the booted machine's */
	}
	bench_snap_machine(m, design);
	return m;
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

static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			putchar('\\');
		putchar(*s);
	}
	putchar('"');
}

void bench_zone_lock_stat(struct pl_machine *m, struct pl_lock_stat *out)
{
	struct zone *zone;

	*out = (struct pl_lock_stat){ 0 };
	for_each_populated_zone(zone, m) {
		struct pl_lock_stat z;

		pl_lock_stat_read(&zone->lock, &z);
		out->acquisitions += z.acquisitions;
		out->contentions += z.contentions;
		out->wait_ns += z.wait_ns;
		out->hold_ns += z.hold_ns;
	}
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

bool bench_vt_on(const struct bench *b)
{
	return param_ulong(b, "vtime", 0) != 0;
}

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
	json_str(b->suite);
	printf(", \"test\": ");
	json_str(test);
	printf(", \"design\": ");
	json_str(design);
	printf(", \"rep\": %d, \"value\": %.6g, \"unit\": ", rep, value);
	json_str(unit);
	printf(", \"metric\": ");
	json_str(mt->id);
	printf(", \"params\": {");
	for (int i = 0; i < b->nr_params; i++) {
		printf(i ? ", " : "");
		json_str(b->keys[i]);
		printf(": ");
		json_str(b->vals[i]);
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

/* --list: suites and every key with its default and meaning, presets, switches. */
static int list(bool json)
{
	const char *def, *meaning;
	char sw[256];

	if (json)
		printf("{\"suites\": [");
	else
		printf("suites (pagelab-bench SUITE key=value ...):\n");
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		if (json) {
			printf("%s{\"name\": ", i ? ", " : "");
			json_str(suites[i]->name);
			printf(", \"summary\": ");
			json_str(suites[i]->summary);
			printf(", \"keys\": [");
		} else {
			printf("  %s: %s\n", suites[i]->name, suites[i]->summary);
		}
		for (const char *const *k = suites[i]->keys; *k; k++) {
			if (bench_key_doc(suites[i]->name, *k, &def, &meaning)) {
				def = "?";
				meaning = "(undocumented)";
			}
			if (json) {
				printf("%s{\"key\": ", k == suites[i]->keys ? "" : ", ");
				json_str(*k);
				printf(", \"default\": ");
				json_str(def);
				printf(", \"meaning\": ");
				json_str(meaning);
				printf("}");
			} else {
				printf("      %-22s %-16s %s\n", *k, def, meaning);
			}
		}
		if (json)
			printf("]}");
	}
	/* the keys every suite takes: the harness's and the machine profile */
	printf(json ? "], \"common_keys\": [" : "  every suite:\n");
	static const char *const common[] = { "pin", "machine", "vtime", "vt_costs", "snapshot_ms",
					      "snapshot_ops", "snapshot_dir" };

	for (int i = 0; i < (int)ARRAY_SIZE(common); i++) {
		const char *key = common[i];

		bench_key_doc("", key, &def, &meaning);
		if (json) {
			printf("%s{\"key\": ", i ? ", " : "");
			json_str(key);
			printf(", \"default\": ");
			json_str(def);
			printf(", \"meaning\": ");
			json_str(meaning);
			printf("}");
		} else {
			printf("      %-22s %-16s %s\n", key, def, meaning);
		}
	}
	printf(json ? "], \"presets\": [" : "\npresets (design=PRESET[+SWITCH...]):\n");
	for (const struct pl_design_preset_def *p = pl_design_preset_table; p->name; p++) {
		struct pl_design d;

		pl_design_preset(p->name, &d);
		pl_design_format(&d, sw, sizeof(sw));
		if (json) {
			printf("%s{\"name\": ", p == pl_design_preset_table ? "" : ", ");
			json_str(p->name);
			printf(", \"switches\": ");
			json_str(sw);
			printf(", \"meaning\": ");
			json_str(p->meaning);
			printf("}");
		} else {
			printf("  %-18s %s\n  %-18s   switches: %s\n", p->name, p->meaning, "",
			       *sw ? sw : "(none)");
		}
	}
	printf(json ? "], \"switches\": [" : "\nswitches (NAME, NAME=0, or NAME=VALUE):\n");
	for (const struct pl_design_switch *s = pl_design_switches; s->name; s++) {
		size_t n = (size_t)snprintf(sw, sizeof(sw), "%s", s->name);

		for (int v = 0; s->values && s->values[v]; v++)
			n += (size_t)snprintf(sw + n, sizeof(sw) - n, "%s%s", v ? "|" : "=",
					      s->values[v]);
		if (json) {
			printf("%s{\"name\": ", s == pl_design_switches ? "" : ", ");
			json_str(s->name);
			printf(", \"syntax\": ");
			json_str(sw);
			printf(", \"origin\": ");
			json_str(s->origin);
			printf(", \"meaning\": ");
			json_str(s->meaning);
			printf("}");
		} else {
			printf("  %-28s [%s] %s\n", sw, s->origin, s->meaning);
		}
	}
	printf(json ? "], \"machines\": [" : "\nmachine profiles (machine=NAME):\n");
	for (const struct pl_machine_profile *p = pl_machine_profiles; p->name; p++) {
		if (json) {
			printf("%s{\"name\": ", p == pl_machine_profiles ? "" : ", ");
			json_str(p->name);
			printf(", \"meaning\": ");
			json_str(p->summary);
			printf(", \"hardware\": ");
			json_str(p->hardware);
			printf(", \"seeds\": ");
			json_str(p->seeds);
			printf("}");
		} else {
			printf("  %-18s %s [seeds %s]\n", p->name, p->summary, p->seeds);
		}
	}
	printf(json ? "], \"metrics\": [" : "\nmetrics (ID: name, unit; which way is better; family):\n");
	for (const struct pl_metric *mt = pl_metrics; mt->id; mt++) {
		if (json) {
			printf("%s{\"id\": ", mt == pl_metrics ? "" : ", ");
			json_str(mt->id);
			printf(", \"name\": ");
			json_str(mt->name);
			printf(", \"unit\": ");
			json_str(mt->unit);
			printf(", \"direction\": \"%s\", \"family\": \"%s\", \"kernel\": %s, "
			       "\"counter\": ", pl_metric_direction_name(mt->direction),
			       pl_metric_family_name(mt->family), mt->kernel ? "true" : "false");
			if (mt->counter)
				json_str(mt->counter);
			else
				printf("null");
			printf(", \"per\": ");
			if (mt->per)
				json_str(mt->per);
			else
				printf("null");
			printf(", \"meaning\": ");
			json_str(mt->meaning);
			printf("}");
		} else {
			printf("  %-28s %s (%s); %s; %s%s\n", mt->id, mt->name, mt->unit,
			       pl_metric_direction_name(mt->direction),
			       pl_metric_family_name(mt->family), mt->kernel ? "; vs the kernel" : "");
		}
	}
	printf(json ? "]}\n" : "");
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: pagelab-bench SUITE [key=value ...] [--json]\n"
		"       pagelab-bench --list [--json] | --version\n\n"
		"every suite also takes machine=NAME, a machine profile (pagelab-bench machines),\n"
		"and pin=0|1 (pin the main thread to its CPU, default 1)\n\n"
		"suites:\n");
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		fprintf(f, "  %-18s %s\n    keys:", suites[i]->name, suites[i]->summary);
		for (const char *const *k = suites[i]->keys; *k; k++)
			fprintf(f, " %s", *k);
		fputc('\n', f);
	}
	fprintf(f, "\ndesigns (design=A,B,...):\n");
	for (const char *const *name = pl_design_presets; *name; name++) {
		struct pl_design d;

		if (pl_design_preset(*name, &d))
			continue;
		/* a switch beyond every seed's patch is labelled wherever it is shown */
		fprintf(f, "  %s%s\n", *name,
			d.mt_counts_blocks || d.vmap_bump_wide_align || d.pcp_owner_bulk_fallback ||
			d.pcp_premerge || d.targeted_drain || d.pcp_block_economy || d.economy_batch ||
			d.economy_ramp
				? "  (with pagelab's own extension, not in any seed)" : "");
	}
}

/*
 * Output that could not be written is an error, not a result: at exit,
 * stdout must flush. One line, exit status 2 (issue 18).
 */
static void check_stdout(void)
{
	if (fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "pagelab-bench: write error on stdout: %s\n", strerror(errno));
		_exit(2);
	}
}

int main(int argc, char **argv)
{
	const struct bench_suite *suite = NULL;
	struct bench b = { .out = stdout };

	atexit(check_stdout);
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		printf("pagelab-bench %s (git %s)\n", pl_version(), pl_git_commit());
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--list")) {
		if (argc > 3 || (argc == 3 && strcmp(argv[2], "--json"))) {
			fprintf(stderr, "pagelab-bench: usage: pagelab-bench --list [--json]\n");
			return 2;
		}
		return list(argc == 3);
	}
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2) {
			fprintf(stderr, "pagelab-bench: no suite given (try --help)\n");
			return 2;
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--keys")) {
		/* harness.c's, and bench_machine()'s for every suite */
		static const char *const harness_keys[] = { "pin", "machine", "snapshot", "state", "vtime",
							    "vt_costs",
							    "snapshot_ms", "snapshot_ops",
							    "snapshot_dir", NULL };

		for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
			bench_list_keys(stdout, suites[i]->name, suites[i]->keys);
			bench_list_keys(stdout, suites[i]->name, harness_keys);
		}
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++)
		if (!strcmp(argv[1], suites[i]->name))
			suite = suites[i];
	if (!suite) {
		fprintf(stderr, "pagelab-bench: unknown suite '%s' (try --help)\n", argv[1]);
		return 2;
	}
	b.suite = suite->name;
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		bool known = false;

		if (!strcmp(argv[i], "--json")) {
			b.json = true;
			b.out = stderr;
			continue;
		}
		if (!eq || b.nr_params == BENCH_MAX_PARAMS) {
			fprintf(stderr, "pagelab-bench: expected key=value, got '%s'\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		/* machine=NAME (a profile, machine.h) is common to every suite */
		known = !strcmp(argv[i], "machine");
		if (known && !pl_machine_profile_find(eq + 1)) {
			fprintf(stderr, "pagelab-bench: unknown machine '%s' (pagelab-bench machines "
				"lists them)\n", eq + 1);
			return 2;
		}
		/* common to every suite */
		known |= !strcmp(argv[i], "vtime") || !strcmp(argv[i], "vt_costs");
		for (const char *const *k = suite->keys; *k; k++)
			known |= !strcmp(*k, argv[i]);
		/* common to every suite that builds its machines with bench_machine() */
		known |= !strcmp(argv[i], "snapshot") || !strcmp(argv[i], "state");
		known |= bench_harness_key(argv[i]);
		if (!known) {
			fprintf(stderr, "pagelab-bench: %s: unknown parameter '%s'\n", suite->name,
				argv[i]);
			return 2;
		}
		b.keys[b.nr_params] = argv[i];
		b.vals[b.nr_params++] = eq + 1;
	}
	if (bench_check_params(&b) || bench_snap_check(&b))
		return 2;
	if (param_str(&b, "vt_costs", NULL) && !bench_vt_on(&b)) {
		fprintf(stderr, "pagelab-bench: vt_costs= needs vtime=1 (it picks the model's "
			"cost set)\n");
		return 2;
	}
	bench_harness_init(&b);
	bench_snap_init(&b);
	return suite->run(&b);
}
