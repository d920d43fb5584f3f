// SPDX-License-Identifier: MIT
/*
 * show.c - the kernel's /proc reports of a machine after a chosen workload:
 * `pagelab-bench show what=buddyinfo,pagetypeinfo,zoneinfo,vmstat,lock_stat,events
 * (also extfrag_index, unusable_index: debugfs extfrag/)
 * workload=fresh|churn` (events: all of pagelab's counters, /proc/vmstat-style
 * but with pagelab's names, not a kernel report; vmstat is the kernel's).
 * lock_stat turns lock_stat=1 on unless the run says lock_stat=0 (then the
 * report is refused, as a kernel without CONFIG_LOCK_STAT has none).
 *
 * fresh: the machine just after boot. churn: after the kernel-build-like
 * churn of workloads.c (seed=, rounds= as in the pagetypeinfo suite), with
 * the survivors still allocated. The reports go to stdout byte for byte as
 * the kernel prints them (with a `==> /proc/NAME <==` line between them when
 * more than one is asked for); with --json they go to stderr and stdout gets
 * one record with the machine's counters and free pages.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"

static const struct bench_key keys[] = {
	{ "what", BK_NAMES, 0, 0,
	  "buddyinfo,pagetypeinfo,zoneinfo,vmallocinfo,vmstat,extfrag_index,unusable_index,"
	  "lock_stat,events", "buddyinfo",
	  "comma-separated: buddyinfo, pagetypeinfo, zoneinfo, vmallocinfo" },
	{ "workload", BK_NAME, 0, 0, "fresh,churn", "fresh",
	  "fresh (just booted) or churn (kernel-build-like)" },
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	{ "design", BK_DESIGN, 0, 0, NULL, NULL, NULL },
	BENCH_KEY("seed"),
	{ "rounds", BK_NUM, 0, 1000000000UL, NULL, "max_pfn/8", "churn steps" },
	BENCH_KEY("vcpus"),
	BENCH_KEY("debug"),
	BENCH_KEY("lock_stat"),
	BENCH_KEY_END
};

struct report {
	const char *name;
	long (*show)(struct pl_machine *m, char *buf, size_t size);
};

/*
 * pagelab's event counters (slow path included: drain-retries, highatomic
 * reserves, watermark boosts, kswapd runs), summed over the vCPUs, one
 * "name value" line each as /proc/vmstat lays its counters out; the names
 * are pagelab's, lower-cased.
 */
static long show_events(struct pl_machine *m, char *buf, size_t size)
{
	unsigned long ev[NR_PL_VM_EVENTS];
	size_t len = 0;

	pl_events_sum(m, ev);
	for (int i = 0; i < NR_PL_VM_EVENTS; i++) {
		char name[64];
		size_t j;
		int n;

		for (j = 0; pl_vm_event_names[i][j] && j < sizeof(name) - 1; j++)
			name[j] = (char)tolower((unsigned char)pl_vm_event_names[i][j]);
		name[j] = '\0';
		n = snprintf(buf + len, size - len, "%s %lu\n", name, ev[i]);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (long)len;
}

static const struct report reports[] = {
	{ "buddyinfo", pl_show_buddyinfo },
	{ "pagetypeinfo", pl_show_pagetypeinfo },
	{ "zoneinfo", pl_show_zoneinfo },
	{ "vmallocinfo", pl_show_vmallocinfo },
	{ "vmstat", pl_show_vmstat },
	{ "extfrag_index", pl_show_extfrag_index },
	{ "unusable_index", pl_show_unusable_index },
	{ "lock_stat", pl_show_lock_stat },
	{ "events", show_events },
};

static const struct report *find_report(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(reports); i++)
		if (!strcmp(reports[i].name, name))
			return &reports[i];
	return NULL;
}

/* Print one report, growing the buffer until it fits. */
static int print_report(FILE *f, const struct report *r, struct pl_machine *m)
{
	size_t size = 64 << 10;

	for (;;) {
		char *buf = malloc(size);
		long len;

		if (!buf)
			return -ENOMEM;
		len = r->show(m, buf, size);
		if (len >= 0) {
			fwrite(buf, 1, (size_t)len, f);
			free(buf);
			return 0;
		}
		free(buf);
		if (len != -ENOSPC || size >= (64UL << 20))
			return (int)len;
		size *= 2;
	}
}

static int run(struct bench *b)
{
	const struct report *want[ARRAY_SIZE(reports)];
	const char *workload = param_str(b, "workload", "fresh");
	const char *design = param_str(b, "design", "v6.18");
	char list[128];
	int nr = 0, ret = 0;
	struct pl_churn *st = NULL;
	struct pl_churn_result res;
	struct pl_machine *m;

	snprintf(list, sizeof(list), "%s", param_str(b, "what", "buddyinfo"));
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		const struct report *r = find_report(tok);

		if (!r) {
			fprintf(stderr, "pagelab-bench: show: unknown report '%s' "
				"(buddyinfo, pagetypeinfo, zoneinfo, vmallocinfo, vmstat, "
				"extfrag_index, unusable_index, lock_stat, events)\n", tok);
			return 2;
		}
		if (nr < (int)ARRAY_SIZE(want))
			want[nr++] = r;
	}
	if (!nr) {
		fprintf(stderr, "pagelab-bench: show: what= names no report\n");
		return 2;
	}
	if (strcmp(workload, "fresh") && strcmp(workload, "churn")) {
		fprintf(stderr, "pagelab-bench: show: unknown workload '%s' (fresh, churn)\n",
			workload);
		return 2;
	}
	if (strchr(design, ',')) {
		fprintf(stderr, "pagelab-bench: show: one design at a time\n");
		return 2;
	}

	for (int i = 0; i < nr; i++) {
		if (want[i]->show != pl_show_lock_stat)
			continue;
		if (!param_str(b, "lock_stat", NULL) && b->nr_params < BENCH_MAX_PARAMS) {
			b->keys[b->nr_params] = "lock_stat";
			b->vals[b->nr_params++] = "1";
		} else if (!param_ulong(b, "lock_stat", 1)) {
			fprintf(stderr, "pagelab-bench: show: what=lock_stat needs lock_stat=1 "
				"(a kernel without CONFIG_LOCK_STAT has no /proc/lock_stat)\n");
			return 2;
		}
	}
	m = bench_machine(b, design);
	if (!strcmp(workload, "churn")) {
		pl_enter(m, 0);
		st = pl_churn_run(m, param_ulong(b, "seed", 1),
			       param_ulong(b, "rounds", m->max_pfn / 8), &res);
		pl_leave();
	}
	for (int i = 0; i < nr && !ret; i++) {
		if (nr > 1)
			fprintf(b->out, "%s==> /proc/%s <==\n", i ? "\n" : "", want[i]->name);
		ret = print_report(b->out, want[i], m);
	}
	if (ret)
		fprintf(stderr, "pagelab-bench: show: report failed (%d)\n", ret);
	fflush(b->out);
	bench_emit(b, workload, design, 0, (double)pl_nr_free_pages(m), "free-pages", m);
	if (st) {
		pl_enter(m, 0);
		pl_churn_release(st);
		pl_leave();
	}
	bench_machine_destroy(m);
	return ret ? 1 : 0;
}

const struct bench_suite suite_show = {
	.name = "show",
	.summary = "/proc/buddyinfo, pagetypeinfo, zoneinfo after a workload (fresh, churn)",
	.keys = keys,
	.run = run,
};
