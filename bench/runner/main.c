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
	&suite_trace_record,
	&suite_trace_info,
	&suite_trace_convert,
	&suite_llfree_anchors,
};

/* True if @s holds a control character (C0 or DEL). */
static bool has_control(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return true;
	return false;
}

/* At most @max bytes of @s, each control character as '?'. */
static void print_clean(FILE *f, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++)
		fputc((unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i], f);
}

/* --list's keys of a suite (@table), or with @table NULL the every-suite ones. */
static void list_keys(const struct bench_key *table, bool json)
{
	struct bench_key k;

	for (unsigned int i = 0; !bench_key_at(table, i, &k); i++) {
		const char *def = k.def, *meaning = k.meaning ? k.meaning : "";

		if (k.kind == BK_SHARED || !def) {	/* a BENCH_KEY() the shared table lacks */
			def = "?";
			meaning = "(undocumented)";
		}
		if (json) {
			printf("%s{\"key\": ", i ? ", " : "");
			bench_json_str(k.name);
			printf(", \"default\": ");
			bench_json_str(def);
			printf(", \"meaning\": ");
			bench_json_str(meaning);
			printf("}");
		} else {
			printf("      %-22s %-16s %s\n", k.name, def, meaning);
		}
	}
}

/* --list: suites and every key with its default and meaning, presets, switches. */
static int list(bool json)
{
	char sw[256];

	if (json)
		printf("{\"suites\": [");
	else
		printf("suites (pagelab-bench SUITE key=value ...):\n");
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		if (json) {
			printf("%s{\"name\": ", i ? ", " : "");
			bench_json_str(suites[i]->name);
			printf(", \"summary\": ");
			bench_json_str(suites[i]->summary);
			printf(", \"keys\": [");
		} else {
			printf("  %s: %s\n", suites[i]->name, suites[i]->summary);
		}
		list_keys(suites[i]->keys, json);
		if (json)
			printf("]}");
	}
	/* the keys every suite takes: the harness's and the machine profile */
	printf(json ? "], \"common_keys\": [" : "  every suite:\n");
	list_keys(NULL, json);
	printf(json ? "], \"presets\": [" : "\npresets (design=PRESET[+SWITCH...]):\n");
	for (const struct pl_design_preset_def *p = pl_design_preset_table; p->name; p++) {
		struct pl_design d;

		pl_design_preset(p->name, &d);
		pl_design_format(&d, sw, sizeof(sw));
		if (json) {
			printf("%s{\"name\": ", p == pl_design_preset_table ? "" : ", ");
			bench_json_str(p->name);
			printf(", \"switches\": ");
			bench_json_str(sw);
			printf(", \"meaning\": ");
			bench_json_str(p->meaning);
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
			bench_json_str(s->name);
			printf(", \"syntax\": ");
			bench_json_str(sw);
			printf(", \"origin\": ");
			bench_json_str(s->origin);
			printf(", \"meaning\": ");
			bench_json_str(s->meaning);
			printf("}");
		} else {
			printf("  %-28s [%s] %s\n", sw, s->origin, s->meaning);
		}
	}
	printf(json ? "], \"machines\": [" : "\nmachine profiles (machine=NAME):\n");
	for (const struct pl_machine_profile *p = pl_machine_profiles; p->name; p++) {
		if (json) {
			printf("%s{\"name\": ", p == pl_machine_profiles ? "" : ", ");
			bench_json_str(p->name);
			printf(", \"meaning\": ");
			bench_json_str(p->summary);
			printf(", \"hardware\": ");
			bench_json_str(p->hardware);
			printf(", \"seeds\": ");
			bench_json_str(p->seeds);
			printf("}");
		} else {
			printf("  %-18s %s [seeds %s]\n", p->name, p->summary, p->seeds);
		}
	}
	printf(json ? "], \"metrics\": [" : "\nmetrics (ID: name, unit; which way is better; family):\n");
	for (const struct pl_metric *mt = pl_metrics; mt->id; mt++) {
		if (json) {
			printf("%s{\"id\": ", mt == pl_metrics ? "" : ", ");
			bench_json_str(mt->id);
			printf(", \"name\": ");
			bench_json_str(mt->name);
			printf(", \"unit\": ");
			bench_json_str(mt->unit);
			printf(", \"direction\": \"%s\", \"family\": \"%s\", \"kernel\": %s, "
			       "\"counter\": ", pl_metric_direction_name(mt->direction),
			       pl_metric_family_name(mt->family), mt->kernel ? "true" : "false");
			if (mt->counter)
				bench_json_str(mt->counter);
			else
				printf("null");
			printf(", \"per\": ");
			if (mt->per)
				bench_json_str(mt->per);
			else
				printf("null");
			printf(", \"meaning\": ");
			bench_json_str(mt->meaning);
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
		"       pagelab-bench --list [--json] | --version | --design SPEC...\n\n"
		"every suite also takes machine=NAME, a machine profile (pagelab-bench machines),\n"
		"and pin=0|1 (pin the main thread to its CPU, default 1)\n\n"
		"suites:\n");
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++) {
		fprintf(f, "  %-18s %s\n    keys:", suites[i]->name, suites[i]->summary);
		for (const struct bench_key *k = suites[i]->keys; k->name; k++)
			fprintf(f, " %s", k->name);
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
			d.economy_ramp || d.pcp_batch2x
				? "  (with pagelab's own extension, not in any seed)" : "");
	}
}

/*
 * Output that could not be written is an error, not a result: at exit,
 * stdout must flush. One line, exit status 2.
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
	if (argc >= 2 && !strcmp(argv[1], "--design")) {
		/* each SPEC's canonical string, a line each: what every suite would build */
		char canon[512], err[160];

		if (argc < 3) {
			fprintf(stderr, "pagelab-bench: usage: pagelab-bench --design SPEC...\n");
			return 2;
		}
		for (int i = 2; i < argc; i++) {
			if (pl_design_check(argv[i], canon, sizeof(canon), err, sizeof(err))) {
				fprintf(stderr, "pagelab-bench: unknown design '%s': %s (see pagelab-bench "
					"--list)\n", argv[i], err);
				return 2;
			}
			printf("%s\n", canon);
		}
		return 0;
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
		for (size_t i = 0; i < ARRAY_SIZE(suites); i++)
			bench_key_rules(stdout, suites[i]->name, suites[i]->keys,
					suites[i]->no_machine);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(suites); i++)
		if (!strcmp(argv[1], suites[i]->name))
			suite = suites[i];
	if (!suite) {
		fprintf(stderr, "pagelab-bench: unknown suite '");
		print_clean(stderr, argv[1], 200);
		fprintf(stderr, "' (try --help)\n");
		return 2;
	}
	b.suite = suite->name;
	b.key_table = suite->keys;
	b.no_machine = suite->no_machine;
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		struct bench_key k;

		if (!strcmp(argv[i], "--json")) {
			b.json = true;
			b.out = stderr;
			continue;
		}
		if (has_control(argv[i])) {
			/* printed with '?' for each: a newline must not split the one line */
			fprintf(stderr, "pagelab-bench: ");
			print_clean(stderr, argv[i], 200);
			fprintf(stderr, ": a parameter with a control character\n");
			return 2;
		}
		if (!eq || b.nr_params == BENCH_MAX_PARAMS) {
			fprintf(stderr, "pagelab-bench: expected key=value, got '%s'\n", argv[i]);
			return 2;
		}
		*eq = '\0';
		/* its own keys and the every-suite ones (keys.c) */
		if (bench_key_find(suite->keys, suite->no_machine, argv[i], &k)) {
			fprintf(stderr, "pagelab-bench: %s: unknown parameter '%s'\n", suite->name,
				argv[i]);
			return 2;
		}
		/* machine=NAME: a profile (machine.h) */
		if (!strcmp(argv[i], "machine") && !pl_machine_profile_find(eq + 1)) {
			fprintf(stderr, "pagelab-bench: unknown machine '%s' (pagelab-bench machines "
				"lists them)\n", eq + 1);
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
