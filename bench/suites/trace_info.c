// SPDX-License-Identifier: MIT
/*
 * trace_info.c - `pagelab-bench trace_info trace=FILE [command_pid=PID]
 * [tasks=SPEC] [top=N]`: what a trace holds, in one JSON record: its
 * format, events by type, records, lost events, CPUs and span, and who
 * allocated: page allocations and frees by task (the top N and the rest),
 * the recorded command's tasks (PID and what the trace shows it forking)
 * and the tasks of SPEC (pids, comms, "command"). `pagelab trace info`
 * prints it; `pagelab trace record` takes its counts for the manifest.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "pagelab/trace.h"

static const struct bench_key info_keys[] = {
	{ "trace", BK_TEXT, 0, 0, NULL, "(required)",
	  "a trace file or artifact trace (trace.dat, or text)" },
	{ "command_pid", BK_NUM, 1, 4194304, NULL, "(none)",
	  "the recorded command's pid: its tasks and the ones the trace shows it forking are its "
	  "share" },
	{ "tasks", BK_TEXT, 0, 0, NULL, "(none)",
	  "pids, comms or \"command\", comma-separated: their share apart" },
	{ "top", BK_NUM, 1, 1000, NULL, "10", "tasks listed by name (the rest summed)" },
	BENCH_KEY_END
};

static void put_stat(FILE *f, const char *key, const struct pl_task_stat *s, unsigned long tasks)
{
	fprintf(f, "\"%s\": {\"tasks\": %lu, \"allocs\": %lu, \"frees\": %lu, \"alloc_pages\": %lu, "
		"\"free_pages\": %lu}", key, tasks, s->allocs, s->frees, s->alloc_pages, s->free_pages);
}

/* @s as a JSON string (comms may hold quotes or backslashes). */
static void put_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static int run_info(struct bench *b)
{
	const char *path = param_str(b, "trace", NULL), *spec = param_str(b, "tasks", NULL);
	long command = (long)param_ulong(b, "command_pid", 0);
	unsigned long top = param_ulong(b, "top", 10), n_cmd = 0, n_sel = 0;
	struct pl_task_table tt = { 0 };
	struct pl_task_stat sel = { 0 }, rest = { 0 };
	const struct pl_trace_stats *st;
	struct pl_trace_reader *r;
	struct pl_trace_event ev;
	int ret;

	if (!path) {
		fprintf(stderr, "pagelab-bench: trace_info: trace=FILE is required\n");
		return 2;
	}
	r = pl_trace_open(path);
	if (!r) {
		if (*pl_trace_open_error())
			fprintf(stderr, "pagelab-bench: trace_info: %s: %s\n", path,
				pl_trace_open_error());
		else
			fprintf(stderr, "pagelab-bench: trace_info: cannot read %s: %s\n", path,
				pl_file_strerror(errno));
		return 2;
	}
	if (command && pl_trace_set_command_pid(r, (int)command))
		goto oom;
	while ((ret = pl_trace_next(r, &ev)) > 0) {
		if (pl_task_table_event(&tt, &ev))
			goto oom;
		if (spec && pl_task_match(spec, &ev)) {
			struct pl_task_table one = { 0 };

			/* the selection's own sums, without a table of its own */
			if (pl_task_table_event(&one, &ev))
				goto oom;
			sel.allocs += one.total.allocs;
			sel.frees += one.total.frees;
			sel.alloc_pages += one.total.alloc_pages;
			sel.free_pages += one.total.free_pages;
			pl_task_table_release(&one);
		}
	}
	st = pl_trace_get_stats(r);
	if (ret == 0 && st->format == PL_TRACE_FMT_UNKNOWN) {
		/* no line in any format: an empty file or one that is no trace */
		fprintf(stderr, "pagelab-bench: trace_info: %s: not a trace (no line of %lu in "
			"tracefs, trace-cmd report or perf script form)\n", path, st->lines);
		pl_trace_close(r);
		pl_task_table_release(&tt);
		return 2;
	}
	if (ret < 0) {
		fprintf(stderr, "pagelab-bench: trace_info: %s: %s after %lu events\n", path,
			ret == -EIO ? "unreadable" : "out of memory", st->events);
		pl_trace_close(r);
		pl_task_table_release(&tt);
		return 2;
	}
	pl_task_table_sort(&tt);
	for (size_t i = 0; i < tt.nr; i++) {
		n_cmd += tt.t[i].command;
		if (spec) {
			struct pl_trace_event probe = { .pid = tt.t[i].pid, .command = tt.t[i].command };

			memcpy(probe.comm, tt.t[i].comm, sizeof(probe.comm));
			n_sel += pl_task_match(spec, &probe);
		}
		if (i >= top) {
			rest.allocs += tt.t[i].allocs;
			rest.frees += tt.t[i].frees;
			rest.alloc_pages += tt.t[i].alloc_pages;
			rest.free_pages += tt.t[i].free_pages;
		}
	}
	fprintf(b->out, "{\"suite\": \"trace_info\", \"trace\": ");
	put_str(b->out, path);
	fprintf(b->out, ", \"format\": \"%s\", \"dat_version\": %d, \"events\": %lu, \"records\": %lu, "
		"\"lost_events\": %lu, \"forks\": %lu, \"cpus\": %d, \"first_ns\": %llu, "
		"\"last_ns\": %llu, \"unknown_events\": %lu, \"malformed\": %lu, \"by_type\": {",
		pl_trace_format_names[st->format], st->dat_version, st->events, st->lines,
		st->lost_events, st->forks, st->max_cpu + 1, (unsigned long long)st->first_ns,
		(unsigned long long)st->last_ns, st->warn[PL_TW_unknown_event],
		st->warn[PL_TW_malformed_line]);
	for (int t = 0; t < NR_PL_TRACE_TYPES; t++)
		fprintf(b->out, "%s\"%s\": %lu", t ? ", " : "", pl_trace_type_names[t], st->by_type[t]);
	fprintf(b->out, "}, \"nr_tasks\": %zu, ", tt.nr);
	put_stat(b->out, "total", &tt.total, tt.nr);
	fprintf(b->out, ", \"tasks\": [");
	for (size_t i = 0; i < tt.nr && i < top; i++) {
		const struct pl_task_stat *s = &tt.t[i];

		fprintf(b->out, "%s{\"pid\": %d, \"comm\": ", i ? ", " : "", s->pid);
		put_str(b->out, s->comm[0] ? s->comm : "<...>");
		fprintf(b->out, ", \"command\": %s, \"allocs\": %lu, \"frees\": %lu, "
			"\"alloc_pages\": %lu, \"free_pages\": %lu}", s->command ? "true" : "false",
			s->allocs, s->frees, s->alloc_pages, s->free_pages);
	}
	fprintf(b->out, "], ");
	put_stat(b->out, "rest", &rest, tt.nr > top ? tt.nr - top : 0);
	fprintf(b->out, ", ");
	if (command)
		put_stat(b->out, "command", &tt.command, n_cmd);
	else
		fprintf(b->out, "\"command\": null");
	fprintf(b->out, ", ");
	if (spec)
		put_stat(b->out, "selected", &sel, n_sel);
	else
		fprintf(b->out, "\"selected\": null");
	fprintf(b->out, "}\n");
	pl_trace_close(r);
	pl_task_table_release(&tt);
	return 0;
oom:
	fprintf(stderr, "pagelab-bench: trace_info: out of memory\n");
	pl_trace_close(r);
	pl_task_table_release(&tt);
	return 1;
}

const struct bench_suite suite_trace_info = {
	.name = "trace_info",
	.summary = "what a trace holds: events, losses, and page allocations and frees by task",
	.keys = info_keys,
	.no_machine = true,
	.run = run_info,
};
