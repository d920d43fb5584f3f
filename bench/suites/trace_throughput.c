// SPDX-License-Identifier: MIT
/*
 * trace_throughput.c - `pagelab-bench trace_throughput trace=FILE`: how
 * fast the trace layer parses text (events/s, one core, decompression
 * included), decodes the binary event stream a replay reads (evstream.h),
 * and replays from it (events/s, decoding included, on a machine of mem=
 * with one vCPU per trace CPU). pass= runs one of them (parse, decode,
 * replay) or all (default); decode and replay first parse the text into the
 * stream, untimed. A benchmark, not a test: the numbers are reported, never
 * asserted (the instruction budgets count pass= runs). max_events= stops
 * early. Times are the thread's CPU time (CLOCK_THREAD_CPUTIME_ID): on a
 * shared machine wall time measures the other tenants.
 */
#include <limits.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "pagelab/evstream.h"

static const struct bench_key throughput_keys[] = {
	{ "trace", BK_TEXT, 0, 0, NULL, "(required)", "a trace file to parse and replay" },
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY("design"),
	{ "max_events", BK_NUM, 1, ULONG_MAX, NULL, "all", "stop after this many events" },
	BENCH_KEY_DOC("reps", "1", "repetitions"),
	{ "pass", BK_NAME, 0, 0, "all,parse,decode,replay", "all",
	  "parse (text), decode (the binary event stream a replay reads), replay (from that "
	  "stream) or all" },
	BENCH_KEY_END
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct pl_trace_reader *open_or_die(const char *path)
{
	struct pl_trace_reader *r = pl_trace_open(path);

	if (!r) {
		if (*pl_trace_open_error())
			fprintf(stderr, "pagelab-bench: trace_throughput: %s: %s\n", path,
				pl_trace_open_error());
		else
			fprintf(stderr, "pagelab-bench: trace_throughput: cannot read %s: %s\n",
				path, pl_file_strerror(errno));
		exit(2);
	}
	return r;
}

/*
 * Whether @path holds a page-allocator event (read up to the first): an empty
 * file or text that is no trace is refused in one line, as replay refuses it.
 */
static bool has_events(const char *path)
{
	struct pl_trace_reader *r = open_or_die(path);
	struct pl_trace_event ev;
	int ret = pl_trace_next(r, &ev);

	if (ret == 0)
		fprintf(stderr, "pagelab-bench: trace_throughput: %s: no page-allocator events in %lu "
			"lines (want tracefs, trace-cmd report or perf script text of kmem/vmalloc "
			"events)\n", path, pl_trace_get_stats(r)->lines);
	else if (ret < 0)
		fprintf(stderr, "pagelab-bench: trace_throughput: %s: unreadable\n", path);
	pl_trace_close(r);
	return ret > 0;
}

/* The first @max events of @path decoded into a stream (the one text parse a replay makes). */
static struct pl_evstream *decode_once(const char *path, unsigned long max, unsigned int *nr_cpus)
{
	struct pl_trace_reader *r = open_or_die(path);
	struct pl_evstream *es = pl_evstream_create(NULL);
	struct pl_trace_event ev;
	unsigned long n = 0;

	if (!es) {
		fprintf(stderr, "pagelab-bench: trace_throughput: cannot create the event stream: %s\n",
			strerror(errno));
		exit(1);
	}
	while (n < max && pl_trace_next(r, &ev) > 0) {
		if (pl_evstream_append(es, &ev)) {
			fprintf(stderr, "pagelab-bench: trace_throughput: cannot write the event "
				"stream: %s\n", strerror(errno));
			exit(1);
		}
		n++;
	}
	*nr_cpus = (unsigned int)pl_trace_get_stats(r)->max_cpu + 1;
	pl_trace_close(r);
	if (pl_evstream_finish(es)) {
		fprintf(stderr, "pagelab-bench: trace_throughput: cannot write the event stream\n");
		exit(1);
	}
	return es;
}

static struct pl_evstream_reader *stream_or_die(const struct pl_evstream *es)
{
	struct pl_evstream_reader *rd = pl_evstream_open(es);

	if (!rd) {
		fprintf(stderr, "pagelab-bench: trace_throughput: out of memory\n");
		exit(1);
	}
	return rd;
}

static void pass_parse(struct bench *b, const char *path, unsigned long max, const char *design,
		       int reps)
{
	struct pl_trace_event ev;

	for (int rep = 0; rep < reps; rep++) {
		struct pl_trace_reader *r = open_or_die(path);
		unsigned long n = 0;
		double t0 = now_s(), t;
		const char *fmt;

		while (n < max && pl_trace_next(r, &ev) > 0)
			n++;
		t = now_s() - t0;
		/* the file's own format: text, or a trace.dat decoded in binary */
		fmt = pl_trace_format_names[pl_trace_get_stats(r)->format];
		pl_trace_close(r);
		fprintf(b->out, "parse   %lu events in %.3f s: %.2f M events/s (events-per-s, %s)\n",
			n, t, (double)n / t / 1e6, fmt);
		bench_emit(b, "parse", design, rep, (double)n / t, "events-per-s", NULL);
	}
}

static void pass_decode(struct bench *b, const struct pl_evstream *es, const char *design, int reps)
{
	struct pl_trace_event ev;

	for (int rep = 0; rep < reps; rep++) {
		struct pl_evstream_reader *rd = stream_or_die(es);
		unsigned long n = 0;
		double t0 = now_s(), t;
		int ret;

		while ((ret = pl_evstream_next(rd, &ev)) > 0)
			n++;
		t = now_s() - t0;
		pl_evstream_close(rd);
		if (ret < 0) {
			fprintf(stderr, "pagelab-bench: trace_throughput: the stream cannot be read back\n");
			exit(1);
		}
		fprintf(b->out, "decode  %lu events in %.3f s: %.2f M events/s (binary stream, "
			"%.1f bytes an event)\n", n, t, (double)n / t / 1e6,
			n ? (double)pl_evstream_bytes(es) / (double)n : 0.0);
		bench_emit(b, "decode", design, rep, (double)n / t, "events-per-s", NULL);
	}
}

static int pass_replay(struct bench *b, const struct pl_evstream *es, unsigned int nr_cpus,
		       const char *design, int reps)
{
	struct pl_trace_event ev;

	for (int rep = 0; rep < reps; rep++) {
		struct pl_evstream_reader *rd = stream_or_die(es);
		struct pl_config cfg;
		struct pl_machine *m;
		struct pl_replay *rp;
		unsigned long n = 0;
		double t0, t;

		pl_config_default(&cfg);
		cfg.mem_bytes = param_ulong(b, "mem", 8UL << 30);
		cfg.dma32_bytes = param_ulong(b, "dma32", 2UL << 30);
		cfg.nr_cpus = nr_cpus ? nr_cpus : 1;
		bench_design(design, &cfg.design);	/* pl_design_parse(): presets and switches */
		m = pl_machine_create(&cfg);
		if (!m) {
			fprintf(stderr, "pagelab-bench: trace_throughput: cannot create the machine\n");
			return 2;
		}
		bench_snap_machine(m, design);
		rp = pl_replay_create(m, NULL);
		pl_warn_set_quiet(true);
		t0 = now_s();
		while (pl_evstream_next(rd, &ev) > 0) {
			pl_replay_event(rp, &ev);
			n++;
		}
		t = now_s() - t0;
		pl_warn_set_quiet(false);
		pl_evstream_close(rd);
		fprintf(b->out, "replay  %lu events in %.3f s: %.2f M events/s (%s, from the binary "
			"stream, decoding included)\n", n, t, (double)n / t / 1e6, design);
		bench_emit(b, "replay", design, rep, (double)n / t, "events-per-s", m);
		pl_replay_destroy(rp, true);
		bench_machine_destroy(m);
	}
	return 0;
}

static int run_throughput(struct bench *b)
{
	const char *path = param_str(b, "trace", NULL);
	const char *pass = param_str(b, "pass", "all");
	unsigned long max = param_ulong(b, "max_events", ~0UL);
	int reps = (int)param_ulong(b, "reps", 1), rc = 0;
	bool all = !strcmp(pass, "all");
	const char *designs[1];
	unsigned int nr_cpus = 1;
	struct pl_evstream *es = NULL;

	if (!path) {
		fprintf(stderr, "pagelab-bench: trace_throughput: trace=FILE is required\n");
		return 2;
	}
	bench_designs(b, "v6.18", designs, 1);
	if (!has_events(path))
		return 2;
	if (all || !strcmp(pass, "parse"))
		pass_parse(b, path, max, designs[0], reps);
	if (all || strcmp(pass, "parse"))
		es = decode_once(path, max, &nr_cpus);
	if (all || !strcmp(pass, "decode"))
		pass_decode(b, es, designs[0], reps);
	if (all || !strcmp(pass, "replay"))
		rc = pass_replay(b, es, nr_cpus, designs[0], reps);
	pl_evstream_destroy(es);
	return rc;
}

const struct bench_suite suite_trace_throughput = {
	.name = "trace_throughput",
	.summary = "parse and replay speed of the trace layer (events/s, one core)",
	.keys = throughput_keys,
	.no_machine = true,
	.run = run_throughput,
};
