// SPDX-License-Identifier: MIT
/*
 * trace_convert.c - `pagelab-bench trace_convert trace=IN out=OUT`: any
 * trace pagelab reads (trace.dat, tracefs, trace-cmd or perf text) as raw
 * tracefs text that pagelab's text parser reads back to the same events:
 * the task column (COMM-PID), the CPU, the timestamp to the nanosecond and
 * each event's fields, lost events as "[LOST N EVENTS]" lines. `pagelab
 * trace convert` runs it (and compresses the text with zstd when OUT ends
 * in .zst). Events pagelab does not read, and the forks the reader follows,
 * are not kept: a converted trace credits the recorded command with its
 * own pid's events only.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"
#include "pagelab/trace.h"

static const struct bench_key convert_keys[] = {
	{ "trace", BK_TEXT, 0, 0, NULL, "(required)", "the trace to convert (trace.dat or text)" },
	{ "out", BK_TEXT, 0, 0, NULL, "(required)", "the raw tracefs text to write" },
	BENCH_KEY_END
};

static void print_event(FILE *f, const struct pl_trace_event *ev)
{
	fprintf(f, "%16s-%-7d [%03u] ..... %llu.%09llu: ", ev->comm[0] ? ev->comm : "<...>",
		ev->pid < 0 ? 0 : ev->pid, ev->cpu, (unsigned long long)(ev->ts_ns / 1000000000ull),
		(unsigned long long)(ev->ts_ns % 1000000000ull));
	switch (ev->type) {
	case PL_TRACE_PAGE_ALLOC:
		if (ev->pfn == -1UL)
			fprintf(f, "mm_page_alloc: page=0000000000000000 pfn=0x0");
		else
			fprintf(f, "mm_page_alloc: page=%lx pfn=0x%lx", ev->pfn, ev->pfn);
		fprintf(f, " order=%d migratetype=%d gfp_flags=", ev->order, ev->migratetype);
		pl_trace_print_gfp(f, ev->gfp);
		break;
	case PL_TRACE_PAGE_FREE:
	case PL_TRACE_PAGE_FREE_BATCHED:
		fprintf(f, "%s: page=%lx pfn=0x%lx order=%d", pl_trace_type_names[ev->type], ev->pfn,
			ev->pfn, ev->order);
		break;
	case PL_TRACE_ZONE_LOCKED:
		fprintf(f, "mm_page_alloc_zone_locked: page=%lx pfn=0x%lx order=%d migratetype=%d "
			"percpu_refill=%d", ev->pfn, ev->pfn, ev->order, ev->migratetype,
			ev->percpu_refill);
		break;
	case PL_TRACE_PCPU_DRAIN:
		fprintf(f, "mm_page_pcpu_drain: page=%lx pfn=0x%lx order=%d migratetype=%d", ev->pfn,
			ev->pfn, ev->order, ev->migratetype);
		break;
	case PL_TRACE_EXTFRAG:
		fprintf(f, "mm_page_alloc_extfrag: page=%lx pfn=0x%lx alloc_order=%d fallback_order=%d "
			"pageblock_order=%d alloc_migratetype=%d fallback_migratetype=%d "
			"fragmenting=%d change_ownership=%d", ev->pfn, ev->pfn, ev->order,
			ev->fallback_order, pageblock_order, ev->migratetype, ev->fallback_migratetype,
			ev->fragmenting, ev->change_ownership);
		break;
	case PL_TRACE_ALLOC_VMAP_AREA:
		fprintf(f, "alloc_vmap_area: va_start: %lu size=%lu failed=%d", ev->va_start, ev->size,
			ev->failed);
		break;
	case PL_TRACE_FREE_VMAP_AREA:
		fprintf(f, "free_vmap_area_noflush: va_start=0x%lx", ev->va_start);
		if (ev->nr_lazy >= 0)
			fprintf(f, " nr_lazy=%ld", ev->nr_lazy);
		break;
	case PL_TRACE_PURGE_VMAP_AREA:
		fprintf(f, "purge_vmap_area_lazy: num_purged=%lu", ev->npurged);
		break;
	default:
		fprintf(f, "percpu_event:");	/* counted only: no field is read */
		break;
	}
	fputc('\n', f);
}

static int run_convert(struct bench *b)
{
	const char *in = param_str(b, "trace", NULL), *out = param_str(b, "out", NULL);
	unsigned long lost = 0, n = 0;
	struct pl_trace_reader *r;
	struct pl_trace_event ev;
	struct stat sb;
	bool existed;
	FILE *f;
	int ret;

	if (!in || !out) {
		fprintf(stderr, "pagelab-bench: trace_convert: trace= and out= are required\n");
		return 2;
	}
	r = pl_trace_open(in);
	if (!r) {
		fprintf(stderr, "pagelab-bench: trace_convert: %s: %s\n", in,
			*pl_trace_open_error() ? pl_trace_open_error() : pl_file_strerror(errno));
		return 2;
	}
	existed = stat(out, &sb) == 0;
	f = pl_fopen_output(out, false);
	if (!f) {
		fprintf(stderr, "pagelab-bench: trace_convert: cannot write %s: %s\n", out,
			pl_file_strerror(errno));
		pl_trace_close(r);
		return 2;
	}
	fprintf(f, "# tracer: nop\n#\n# converted by pagelab from %s\n", in);
	while ((ret = pl_trace_next(r, &ev)) > 0) {
		const struct pl_trace_stats *st = pl_trace_get_stats(r);

		if (st->lost_events > lost) {	/* as the kernel marks them, before the event */
			fprintf(f, "CPU:%u [LOST %lu EVENTS]\n", ev.cpu, st->lost_events - lost);
			lost = st->lost_events;
		}
		print_event(f, &ev);
		n++;
	}
	if (ret == 0 && pl_trace_get_stats(r)->format == PL_TRACE_FMT_UNKNOWN) {
		/* no line in any format: nothing to convert, and no output left behind */
		fprintf(stderr, "pagelab-bench: trace_convert: %s: not a trace (no line of %lu in "
			"tracefs, trace-cmd report or perf script form)\n", in,
			pl_trace_get_stats(r)->lines);
		fclose(f);
		if (!existed)
			unlink(out);
		pl_trace_close(r);
		return 2;
	}
	if (ret < 0 || ferror(f) || fclose(f)) {
		fprintf(stderr, "pagelab-bench: trace_convert: %s after %lu events\n",
			ret < 0 ? "the input is unreadable" : "writing failed", n);
		pl_trace_close(r);
		return 2;
	}
	fprintf(b->out, "{\"suite\": \"trace_convert\", \"events\": %lu, \"lost_events\": %lu}\n", n,
		pl_trace_get_stats(r)->lost_events);
	pl_trace_close(r);
	return 0;
}

const struct bench_suite suite_trace_convert = {
	.name = "trace_convert",
	.summary = "a trace (trace.dat or text) as raw tracefs text (pagelab trace convert runs it)",
	.keys = convert_keys,
	.no_machine = true,
	.run = run_convert,
};
