// SPDX-License-Identifier: MIT
/*
 * replay.c - `pagelab-bench replay`: a kernel's page-allocator trace scored
 * as the kernel ran it, and replayed under one or more designs from a
 * fresh or loaded machine state.
 *
 * trace= is an artifact directory (manifest.json, before/, after/, the
 * trace file) or a bare trace file. With --json: one record "kernel" and
 * one record "replay" per design, both with the same counter keys.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "artifact.h"
#include "bench.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "pagelab/evstream.h"
#include "pagelab/evcache.h"

static const struct bench_key replay_keys[] = {
	{ "trace", BK_TEXT, 0, 0, NULL, "(required)",
	  "a trace artifact directory (manifest.json, before/, after/) or a trace file" },
	{ "state", BK_NAME, 0, 0, "fresh,counts,positional",
	  "positional with a snapshot, else fresh",
	  "starting state: fresh, counts or positional" },
	{ "snapshot", BK_TEXT, 0, 0, NULL, "the artifact's before/",
	  "a /proc snapshot directory to load the state from" },
	{ "after", BK_TEXT, 0, 0, NULL, "the artifact's after/",
	  "a /proc snapshot directory of the kernel's end state (end free pages, buddyinfo "
	  "distance)" },
	BENCH_KEY("design"),
	{ "emit_trace", BK_TEXT, 0, 0, NULL, "(none)",
	  "write pagelab's own trace of the replay here" },
	{ "cpus", BK_NUM, 1, PL_MAX_VCPUS, NULL, "the trace's CPUs",
	  "vCPUs of the replaying machine" },
	BENCH_KEY("mem"),
	BENCH_KEY("dma32"),
	BENCH_KEY("debug"),
	{ "vmalloc", BK_NUM, 0, 1, NULL, "1",
	  "replay the vmap_area events too (0: page allocator only)" },
	{ "show_state", BK_TEXT, 0, 0, NULL, "(none)",
	  "append the machine's pagetypeinfo, buddyinfo and zoneinfo, as loaded and at the end, "
	  "to this file" },
	{ "tick", BK_NAME, 0, 0, "kernel,first", "kernel",
	  "when each vCPU's vmstat tick runs: kernel (four runs around the phase of the trace's "
	  "kworker drains, ticking at those drains, or at 0/250/500/750 ms without any; the run "
	  "nearest their median reported) or first (1 s after the first event)" },
	{ "tick_ms", BK_NUM, 0, 999, NULL, "(none)",
	  "every vCPU's vmstat tick this many ms (0..999) into each second of the trace clock, "
	  "instead of tick=" },
	{ "pcp_busy", BK_NUM, 0, 1, NULL, "1",
	  "replay the frees the trace shows found their CPU's PCP lock held (a softirq's during a "
	  "refill or drain) as the kernel ran them, straight to the buddy (0: to the PCP)" },
	{ "cache", BK_NUM, 0, 1, NULL, "1 (0 with PAGELAB_NO_CACHE=1)",
	  "read the trace's events from the decoded-stream cache, keyed by the file's content "
	  "hash, and store them there after a parse (0: parse the text, store nothing); the "
	  "directory: $PAGELAB_CACHE_DIR, else ~/.cache/pagelab/evstream, trimmed to "
	  "$PAGELAB_CACHE_MAX_MB (default 4096)" },
	{ "jobs", BK_NUM, 1, 256, NULL, "the online CPUs",
	  "replays (designs x tick probes) run at once, each in a process of its own, all from "
	  "the one decoded event stream (1: one after another in this process)" },
	BENCH_KEY_END
};


/*
 * Timeline: one sample per second of trace time, at most TL_MAX_SAMPLES:
 * when full, every other one goes and the seconds between samples double,
 * so a trace of any length (or with any gaps: idle gaps are skipped as the
 * replay skips them, after TL_IDLE_S seconds) has a bounded timeline.
 */
#define TL_MAX_SAMPLES	4096
#define TL_IDLE_S	600
struct sample {
	unsigned long t;		/* seconds of trace time */
	unsigned long refills[PL_SCORE_MAX_CPUS > 64 ? 64 : PL_SCORE_MAX_CPUS];
	unsigned long free_by_order[NR_PAGE_ORDERS];
};

struct side {
	const char *test, *design, *state;
	struct pl_trace_score score;
	unsigned long free_by_order[NR_PAGE_ORDERS];
	unsigned long nr_free;
	unsigned long pcp_pages;	/* pages on every CPU's PCP at the end */
	bool has_free;
	unsigned long warn[NR_PL_TRACE_WARN];
	struct sample *tl;
	size_t nr_tl, cap_tl;
	unsigned long tl_stride;	/* seconds between samples (0: 1) */
	unsigned int nr_cpus;
	unsigned long mm_ev[NR_PL_VM_EVENTS];
	unsigned long long zone_lock_actual;
	bool has_mm;
	double seconds;
	double state_tvd;	/* loaded state's buddyinfo against the snapshot's */
	struct pl_snapshot_gap gap;	/* the kernel's side: do the snapshots bracket the trace? */
	bool has_gap;
	unsigned long vmstat_pressure[NR_PL_VMSTAT_PRESSURE];	/* the kernel's, after - before */
	bool has_vmstat_pressure;
	long tick_ms;		/* vCPU 0's phase in the run reported (tick_probe()), else -1 */
	long probe_ms[PL_TICK_PROBES];			/* vCPU 0's phase in each probe */
	unsigned long probe_drain_calls[PL_TICK_PROBES];	/* and its drain calls */
	struct pl_trace_score probe_score[PL_TICK_PROBES];	/* each probe's counters */
	double parse_s;		/* the kernel's side: reading and scoring the trace */
	double replay_s;	/* the reported run's replay loop */
	double replay_total_s;	/* every run of this design (the tick probes) */
	/* what the design changed in the loaded state, or could not (pl_state_design_notes()) */
	char notes[PL_STATE_MAX_NOTES][PL_STATE_NOTE_LEN];
	int nr_notes;
	unsigned long state_free_by_order[NR_PAGE_ORDERS];
};

static double tvd(const unsigned long *a, const unsigned long *b);

/* One past the snapshot's highest pfn: the traced machine's span. */
static unsigned long snap_end_pfn(const struct pl_snapshot *snap)
{
	unsigned long end = 0;

	for (int i = 0; i < snap->nr_zones; i++)
		if (snap->zone[i].start_pfn + snap->zone[i].spanned > end)
			end = snap->zone[i].start_pfn + snap->zone[i].spanned;
	return end;
}

static struct pl_trace_reader *open_trace(const char *path)
{
	struct pl_trace_reader *r = pl_trace_open(path);

	if (!r) {
		if (*pl_trace_open_error())	/* a trace.dat it cannot read: why */
			fprintf(stderr, "pagelab-bench: replay: %s: %s\n", path, pl_trace_open_error());
		else
			fprintf(stderr, "pagelab-bench: replay: cannot read %s: %s\n", path,
				pl_file_strerror(errno));
		exit(2);
	}
	return r;
}

static void tl_push(struct side *s, unsigned long t, const unsigned long *refills,
		    unsigned int nr_cpus, const unsigned long *free_by_order)
{
	struct sample *x;

	if (!s->tl_stride)
		s->tl_stride = 1;
	while (s->nr_tl == TL_MAX_SAMPLES) {	/* halve the resolution */
		size_t j = 0;

		s->tl_stride = s->tl_stride > ULONG_MAX / 2 ? ULONG_MAX : s->tl_stride * 2;
		for (size_t i = 0; i < s->nr_tl; i++)
			if (!(s->tl[i].t % s->tl_stride))
				s->tl[j++] = s->tl[i];
		s->nr_tl = j;
	}
	if (t % s->tl_stride)
		return;
	if (s->nr_tl == s->cap_tl) {
		size_t cap = s->cap_tl ? s->cap_tl * 2 : 256;
		struct sample *n = realloc(s->tl, cap * sizeof(*n));

		if (!n)
			return;
		s->tl = n;
		s->cap_tl = cap;
	}
	x = &s->tl[s->nr_tl++];
	memset(x, 0, sizeof(*x));
	x->t = t;
	for (unsigned int c = 0; c < nr_cpus && c < ARRAY_SIZE(x->refills); c++)
		x->refills[c] = refills[c];
	if (free_by_order)
		memcpy(x->free_by_order, free_by_order, sizeof(x->free_by_order));
}

/* ---- the kernel side ------------------------------------------------------------ */

/* The decoded-stream cache (evcache.h) of one replay: an entry read, or one being written. */
struct replay_cache {
	char dir[4096];
	struct pl_evcache_key key;
	struct pl_evstream *hit;	/* the entry: the kernel side reads it, not the text */
	struct pl_trace_stats stats;	/* ... and its parser's statistics */
	struct pl_evstream *full;	/* a parse's events, stored after it */
};

/*
 * The kernel's figures; with @pos, the first sightings in the same pass.
 * The events come from @rc's entry if it has one, else from the text, then
 * also recorded for @rc if it wants them.
 */
static void kernel_side(const struct artifact *a, const struct pl_snapshot *before, struct side *k,
			struct pl_trace_stats *stats, struct pl_positional *pos,
			struct pl_tick_phase *tick, struct pl_pcp_busy *busy, struct pl_evstream *es,
			struct replay_cache *rc)
{
	struct pl_trace_reader *r = rc->hit ? NULL : open_trace(a->trace);
	struct pl_evstream_reader *cr = rc->hit ? pl_evstream_open(rc->hit) : NULL;
	struct pl_trace_event ev;
	uint64_t next = 0;
	unsigned long t = 0;
	int ret;

	if (rc->hit && !cr) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	pl_trace_score_init(&k->score);
	while ((ret = r ? pl_trace_next(r, &ev) : pl_evstream_next(cr, &ev)) > 0) {
		if (!next)
			next = ev.ts_ns + 1000000000ull;
		/* an idle gap: skipped as the replay skips it (pl_replay_event()) */
		if (ev.ts_ns > next + TL_IDLE_S * 1000000000ull) {
			uint64_t skip = (ev.ts_ns - next) / 1000000000ull - TL_IDLE_S;

			t += skip;
			next += skip * 1000000000ull;
		}
		while (ev.ts_ns >= next) {
			tl_push(k, ++t, k->score.refills_per_cpu, k->score.nr_cpus, NULL);
			next += 1000000000ull;
		}
		pl_trace_score_event(&k->score, &ev);
		if (rc->full && pl_evstream_append(rc->full, &ev)) {
			pl_evstream_destroy(rc->full);	/* no room: nothing stored, the replay goes on */
			rc->full = NULL;
		}
		if (pl_evstream_append(es, &ev)) {
			fprintf(stderr, "pagelab-bench: replay: cannot write the decoded events: %s\n",
				strerror(errno));
			exit(1);
		}
		if ((pos && pl_positional_event(pos, &ev)) || pl_tick_phase_event(tick, &ev) ||
		    (busy && pl_pcp_busy_event(busy, &ev))) {
			fprintf(stderr, "pagelab-bench: replay: out of memory inferring the state\n");
			exit(1);
		}
	}
	pl_trace_score_pressure_finish(&k->score);
	if (r) {
		*stats = *pl_trace_get_stats(r);
		pl_trace_close(r);
	} else {
		*stats = rc->stats;
		pl_evstream_close(cr);
		if (ret < 0) {
			fprintf(stderr, "pagelab-bench: replay: %s: the decoded-stream cache's entry in "
				"%s cannot be read (run with cache=0, or remove it)\n", a->trace,
				rc->dir);
			exit(1);
		}
	}
	if (pl_evstream_finish(es)) {
		fprintf(stderr, "pagelab-bench: replay: cannot write the decoded events: %s\n",
			strerror(errno));
		exit(1);
	}
	if (ret < 0) {
		fprintf(stderr, "pagelab-bench: replay: %s: read or decompression error after line %lu "
			"(a cut or corrupt file?)\n", a->trace,
			stats->lines);
		exit(2);
	}
	if (a->lost_events > stats->lost_events)
		stats->lost_events = a->lost_events;
	memcpy(k->warn, stats->warn, sizeof(k->warn));
	if (stats->lost_events && !k->warn[PL_TW_lost_events])
		k->warn[PL_TW_lost_events] = 1;
	k->nr_cpus = k->score.nr_cpus;
	k->seconds = stats->events ? (double)(stats->last_ns - stats->first_ns) / 1e9 : 0;
	if (a->has_after) {
		struct pl_snapshot after;

		if (!pl_snapshot_read(a->after, &after)) {
			pl_snapshot_free_by_order(&after, k->free_by_order);
			k->nr_free = after.nr_free_pages;
			k->has_free = true;
			for (int z = 0; z < after.nr_zones; z++)
				for (unsigned int c = 0; c < after.zone[z].nr_pcp_cpus; c++)
					k->pcp_pages += (unsigned long)after.zone[z].pcp_count[c];
			k->has_gap = before && !pl_snapshot_gap(before, &after, &k->score, &k->gap);
			k->has_vmstat_pressure = !pl_snapshot_pressure_delta(before, &after,
									     k->vmstat_pressure);
		}
	}
}

/* ---- the pagelab side ----------------------------------------------------------- */

struct tl_ctx {
	struct side *s;
	struct pl_replay *r;
	struct pl_machine *m;
};

static void on_second(void *ctx, unsigned long t)
{
	struct tl_ctx *c = ctx;
	const struct pl_trace_score *sc = pl_replay_score(c->r);
	unsigned long fbo[NR_PAGE_ORDERS];

	pl_free_pages_by_order(c->m, fbo);
	tl_push(c->s, t, sc->refills_per_cpu, c->m->nr_cpus, fbo);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * show_state=FILE: the machine's /proc/pagetypeinfo, buddyinfo and zoneinfo, once as
 * loaded and once at the end of the replay, appended to FILE (%s: design),
 * to set against the trace's before/ and after/ snapshots.
 */
static void show_state(const struct bench *b, struct pl_machine *m, const char *design,
		       const char *when)
{
	const char *path = param_str(b, "show_state", NULL);
	char name[4096];
	FILE *f;

	if (!path)
		return;
	snprintf(name, sizeof(name), "%s", path);
	if (strstr(path, "%s"))
		snprintf(name, sizeof(name), path, design);
	f = pl_fopen_output(name, true);
	if (!f) {
		fprintf(stderr, "pagelab-bench: replay: cannot write %s: %s\n", name, pl_file_strerror(errno));
		exit(2);
	}
	fprintf(f, "# %s, %s\n", design, when);
	pl_enter(m, 0);
	pl_show_pagetypeinfo_file(m, f);
	pl_show_buddyinfo_file(m, f);
	pl_show_zoneinfo_file(m, f);
	fclose(f);
}

/* How pagelab_side() reports: a probe of tick_probe() writes less. */
enum side_out {
	SIDE_ALL,		/* warnings, emit_trace and show_state */
	SIDE_WARNINGS,		/* the warnings only */
	SIDE_QUIET,		/* nothing */
};

/*
 * One replay of @design, reporting as @out says. With @ticks, each vCPU
 * also ticks where the kernel's kworker drains show its tick.
 */
static void pagelab_side(const struct bench *b, const struct artifact *a, const char *design,
			 int state, const struct pl_snapshot *snap, const struct pl_positional *pos,
			 const struct pl_pcp_busy *busy, const long *tick_ns,
			 const struct pl_tick_phase *ticks, unsigned int nr_cpus,
			 const struct pl_evstream *es, enum side_out out, struct side *s,
			 double *replay_secs)
{
	bool quiet = out == SIDE_QUIET, probe = out != SIDE_ALL;
	struct pl_config cfg;
	struct pl_machine *m;
	struct pl_loaded_state *st = NULL;
	struct pl_evstream_reader *rd;
	bool with_vmalloc = param_ulong(b, "vmalloc", 1) != 0;
	struct pl_replay *r;
	struct pl_trace_event ev;
	struct pl_lock_stat ls;
	struct zone *zone;
	const char *emit = probe ? NULL : param_str(b, "emit_trace", NULL);
	FILE *ef = NULL;
	struct tl_ctx tc;
	unsigned long long lock0;
	double t0;
	int ret;

	pl_config_default(&cfg);
	cfg.nr_cpus = nr_cpus;
	cfg.lock_stat = true;
	cfg.debug = (int)param_ulong(b, "debug", 0);
	if (a->mem_bytes)
		cfg.mem_bytes = a->mem_bytes & ~((4UL << 20) - 1);
	if (snap && state == PL_STATE_COUNTS)
		pl_snapshot_config(snap, &cfg);
	if (snap && state == PL_STATE_POSITIONAL)
		pl_snapshot_config_positional(snap, pos, &cfg);
	cfg.mem_bytes = param_ulong(b, "mem", cfg.mem_bytes);
	cfg.dma32_bytes = param_ulong(b, "dma32", cfg.dma32_bytes);
	bench_design(design, &cfg.design);	/* pl_design_parse(): presets and switches */
	if (bench_check_host_fit(cfg.mem_bytes, snap && state != PL_STATE_FRESH))
		exit(2);
	/* the library's warning becomes the one line */
	pl_warn_set_quiet(true);
	m = pl_machine_create(&cfg);
	pl_warn_set_quiet(quiet);
	if (!m) {
		char why[256];

		pl_warn_last(why, sizeof(why));
		fprintf(stderr, "pagelab-bench: replay: cannot create the machine: %s\n", why);
		exit(2);
	}
	bench_snap_machine(m, design);
	if (snap && state != PL_STATE_FRESH) {
		/* a failure is one line; a load's own note (blocks left unplaced) still shows */
		unsigned long warns = pl_warn_count();
		char why[256];

		pl_warn_set_quiet(true);
		st = state == PL_STATE_POSITIONAL ? pl_machine_load_positional(m, snap, pos)
						  : pl_machine_load_state(m, snap);
		pl_warn_set_quiet(quiet);
		if (pl_warn_count() != warns)
			pl_warn_last(why, sizeof(why));
		if (!st) {
			fprintf(stderr, "pagelab-bench: replay: cannot load the snapshot's state: %s\n",
				pl_warn_count() != warns ? why : "out of memory");
			exit(2);
		}
		if (pl_warn_count() != warns && !quiet)
			fprintf(stderr, "pagelab: %s\n", why);
		{
			const char *notes[PL_STATE_MAX_NOTES];

			s->nr_notes = pl_state_design_notes(st, notes);
			for (int i = 0; i < s->nr_notes; i++)
				snprintf(s->notes[i], sizeof(s->notes[i]), "%s", notes[i]);
		}
	}
	s->state_tvd = -1;
	if (st) {
		unsigned long want[NR_PAGE_ORDERS];

		pl_free_pages_by_order(m, s->state_free_by_order);
		pl_snapshot_free_by_order(snap, want);
		s->state_tvd = tvd(want, s->state_free_by_order);
	}
	r = pl_replay_create(m, st);
	if (!r) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	if (snap && state != PL_STATE_FRESH)
		pl_replay_set_pfn_limit(r, snap_end_pfn(snap));
	for (unsigned int c = 0; c < nr_cpus; c++) {
		const uint64_t *starts;
		size_t n = ticks ? pl_tick_phase_runs(ticks, c, &starts) : 0;

		if (tick_ns[c] >= 0)
			pl_replay_set_tick_phase(r, c, tick_ns[c]);
		if (n && pl_replay_set_tick_times(r, c, starts, n)) {
			fprintf(stderr, "pagelab-bench: replay: out of memory\n");
			exit(1);
		}
	}
	pl_replay_set_pcp_busy(r, busy);
	if (emit) {
		char path[4096];

		snprintf(path, sizeof(path), "%s", emit);
		if (strstr(emit, "%s"))
			snprintf(path, sizeof(path), emit, design);
		ef = pl_fopen_output(path, false);
		if (!ef) {
			fprintf(stderr, "pagelab-bench: replay: cannot write %s: %s\n", path,
				pl_file_strerror(errno));
			exit(2);
		}
		fprintf(ef, "# tracer: nop\n#\n# pagelab %s replay of %s\n#\n", design, a->trace);
		pl_replay_set_emit(r, ef);
	}
	if (!probe)
		show_state(b, m, design, "loaded");
	tc = (struct tl_ctx){ .s = s, .r = r, .m = m };
	pl_replay_set_timeline(r, on_second, &tc);
	/* the events the kernel side decoded, read back from the stream: no second parse */
	rd = pl_evstream_open(es);
	if (!rd) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	/* the lock traffic of the replay alone: not the machine's boot or the state's load */
	bench_zone_lock_stat(m, &ls);
	lock0 = ls.acquisitions;
	t0 = now_s();
	while ((ret = pl_evstream_next(rd, &ev)) > 0) {
		if (ev.type == PL_TRACE_ALLOC_VMAP_AREA || ev.type == PL_TRACE_FREE_VMAP_AREA)
			if (!with_vmalloc)
				continue;
		pl_replay_event(r, &ev);
	}
	*replay_secs = now_s() - t0;
	pl_evstream_close(rd);
	if (ret < 0) {
		fprintf(stderr, "pagelab-bench: replay: the decoded events cannot be read back\n");
		exit(1);
	}
	s->score = *pl_replay_score(r);
	memcpy(s->warn, pl_replay_warnings(r), sizeof(s->warn));
	if (!probe)
		show_state(b, m, design, "end of the replay");
	pl_free_pages_by_order(m, s->free_by_order);
	s->nr_free = pl_nr_free_pages(m);
	s->has_free = true;
	for_each_populated_zone(zone, m)
		for (unsigned int c = 0; zone->per_cpu_pageset && c < m->nr_cpus; c++)
			s->pcp_pages += (unsigned long)zone->per_cpu_pageset[c].count;
	s->nr_cpus = m->nr_cpus;
	pl_events_sum(m, s->mm_ev);
	s->score.vmalloc_purges = s->mm_ev[PL_EV_VMAP_PURGE];
	/* pagelab's compaction and kswapd, by its own counters (no tracepoint) */
	s->score.pr.compact_stalls = s->mm_ev[PL_EV_COMPACT_STALL];
	s->score.pr.compact_successes = s->mm_ev[PL_EV_COMPACT_SUCCESS];
	s->score.pr.compact_failures = s->mm_ev[PL_EV_COMPACT_FAIL];
	s->score.pr.compact_runs = s->mm_ev[PL_EV_COMPACT_RUN];
	s->score.pr.compact_isolated_free = s->mm_ev[PL_EV_COMPACT_ISOLATED_FREE];
	s->score.pr.compact_isolated_migrate = s->mm_ev[PL_EV_COMPACT_ISOLATED] -
					       s->mm_ev[PL_EV_COMPACT_ISOLATED_FREE];
	s->score.pr.compact_migrate_scanned = s->mm_ev[PL_EV_COMPACT_MIGRATE_SCANNED];
	s->score.pr.compact_free_scanned = s->mm_ev[PL_EV_COMPACT_FREE_SCANNED];
	s->score.pr.compact_migrated = s->mm_ev[PL_EV_PGMIGRATE_SUCCESS];
	s->score.pr.pgmigrate_success = s->mm_ev[PL_EV_PGMIGRATE_SUCCESS];
	s->score.pr.pgmigrate_fail = s->mm_ev[PL_EV_PGMIGRATE_FAIL];
	s->score.pr.compact_deferred = s->mm_ev[PL_EV_COMPACT_DEFERRED];
	s->score.pr.kswapd_wakes = s->mm_ev[PL_EV_KSWAPD_RUN];
	bench_zone_lock_stat(m, &ls);
	s->zone_lock_actual = ls.acquisitions - lock0;
	s->has_mm = true;
	pl_replay_destroy(r, true);
	pl_state_release(st);
	if (ef)
		fclose(ef);
	bench_machine_destroy(m);
	pl_warn_set_quiet(false);
}

/* ---- the tick phase: four runs, the typical one reported ------------------------- */

static const long tick_probe_ms[PL_TICK_PROBES] = PL_TICK_PROBE_MS;
static const long tick_jitter[PL_TICK_PROBES] = PL_TICK_JITTER_MS;

/* Probe @i's phase per vCPU into @at_ns: around each vCPU's @phase_ns, or across the second. */
static void probe_phases(long *at_ns, const long *phase_ns, unsigned int nr_cpus, size_t i)
{
	const long sec = 1000000000L;

	for (unsigned int c = 0; c < nr_cpus; c++)
		at_ns[c] = phase_ns[c] < 0 ? tick_probe_ms[i] * 1000000L
			   : ((phase_ns[c] + tick_jitter[i] * 1000000L) % sec + sec) % sec;
}

static bool want_outputs(const struct bench *b)
{
	return param_str(b, "emit_trace", NULL) || param_str(b, "show_state", NULL);
}

/*
 * The replays of a run: every design, at PL_TICK_PROBES tick phases each
 * with tick=kernel (else once), as independent tasks that bench_parallel()
 * runs in up to jobs= processes, all from the one decoded event stream.
 */
struct replay_run {
	const struct bench *b;
	const struct artifact *a;
	const char *const *designs;
	int state;
	const struct pl_snapshot *snap;
	const struct pl_positional *pos;
	const struct pl_pcp_busy *busy;
	const long *tick_ns;		/* per vCPU: the phase, or -1 */
	const struct pl_tick_phase *ticks;
	unsigned int nr_cpus, nr_probes;	/* nr_probes: 1 without probing */
	bool probing;
	const struct pl_evstream *es;
};

/* One task's result as it crosses the pipe: the side, its replay time, its timeline. */
struct task_out {
	struct side s;
	double secs;
	struct sample tl[];
};

/*
 * Task @i: design @i / nr_probes at probe @i % nr_probes. With tick=kernel
 * the phase per vCPU is around the trace's (@tick_ns), or across the second
 * without one, each also ticking where the kernel's kworker drains show its
 * tick; the first probe prints the warnings (unless the picked one reruns
 * for emit_trace or show_state).
 */
static void replay_task(void *ctx, unsigned int i, void **blob, size_t *len)
{
	const struct replay_run *c = ctx;
	unsigned int d = i / c->nr_probes, p = i % c->nr_probes;
	struct side s = { .test = "replay", .design = c->designs[d],
			  .state = pl_state_level_names[c->state], .tick_ms = -1 };
	struct task_out *o;
	double secs;

	if (c->probing) {
		long *at_ns = malloc(c->nr_cpus * sizeof(*at_ns));

		if (!at_ns) {
			fprintf(stderr, "pagelab-bench: replay: out of memory\n");
			exit(1);
		}
		probe_phases(at_ns, c->tick_ns, c->nr_cpus, p);
		pagelab_side(c->b, c->a, s.design, c->state, c->snap, c->pos, c->busy, at_ns,
			     c->ticks, c->nr_cpus, c->es,
			     p || want_outputs(c->b) ? SIDE_QUIET : SIDE_WARNINGS, &s, &secs);
		s.tick_ms = at_ns[0] / 1000000L;
		free(at_ns);
	} else {
		pagelab_side(c->b, c->a, s.design, c->state, c->snap, c->pos, c->busy, c->tick_ns,
			     NULL, c->nr_cpus, c->es, SIDE_ALL, &s, &secs);
	}
	*len = sizeof(*o) + s.nr_tl * sizeof(o->tl[0]);
	o = malloc(*len);
	if (!o) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	o->s = s;
	o->s.tl = NULL;
	o->secs = secs;
	if (s.nr_tl)
		memcpy(o->tl, s.tl, s.nr_tl * sizeof(o->tl[0]));
	free(s.tl);
	*blob = o;
}

/* The side of task output @o, its timeline in memory of its own. */
static struct side task_side(const struct task_out *o, double *secs)
{
	struct side s = o->s;

	s.tl = NULL;
	s.cap_tl = 0;
	if (s.nr_tl) {
		s.tl = malloc(s.nr_tl * sizeof(*s.tl));
		if (!s.tl) {
			fprintf(stderr, "pagelab-bench: replay: out of memory\n");
			exit(1);
		}
		memcpy(s.tl, o->tl, s.nr_tl * sizeof(*s.tl));
		s.cap_tl = s.nr_tl;
	}
	*secs = o->secs;
	return s;
}

/*
 * Design @d's reported side from its probes' outputs @outs: the run
 * pl_tick_medoid() picks, with every probe's phase and drain calls; with
 * emit_trace or show_state the picked phase runs once more here to write
 * them.
 */
static void pick_probe(const struct replay_run *c, unsigned int d, void *const *outs,
		       struct side *s, double *replay_secs)
{
	struct pl_trace_score scores[PL_TICK_PROBES];
	long probe_ms[PL_TICK_PROBES];
	unsigned long drains[PL_TICK_PROBES];
	struct pl_trace_score probe_score[PL_TICK_PROBES];
	double total_s = 0;
	int at;

	for (size_t i = 0; i < PL_TICK_PROBES; i++) {
		const struct task_out *o = outs[i];

		scores[i] = o->s.score;
		probe_ms[i] = o->s.tick_ms;
		drains[i] = o->s.score.pcp_drain_calls;
		probe_score[i] = o->s.score;
		total_s += o->secs;
	}
	at = pl_tick_medoid(scores, PL_TICK_PROBES);
	if (want_outputs(c->b)) {
		long *at_ns = malloc(c->nr_cpus * sizeof(*at_ns));

		if (!at_ns) {
			fprintf(stderr, "pagelab-bench: replay: out of memory\n");
			exit(1);
		}
		probe_phases(at_ns, c->tick_ns, c->nr_cpus, (size_t)at);
		*s = (struct side){ .test = "replay", .design = c->designs[d],
				    .state = pl_state_level_names[c->state], .tick_ms = -1 };
		pagelab_side(c->b, c->a, c->designs[d], c->state, c->snap, c->pos, c->busy, at_ns,
			     c->ticks, c->nr_cpus, c->es, SIDE_ALL, s, replay_secs);
		free(at_ns);
	} else {
		*s = task_side(outs[at], replay_secs);
	}
	memcpy(s->probe_ms, probe_ms, sizeof(s->probe_ms));
	memcpy(s->probe_drain_calls, drains, sizeof(s->probe_drain_calls));
	memcpy(s->probe_score, probe_score, sizeof(s->probe_score));
	s->replay_total_s = total_s;
	s->tick_ms = probe_ms[at];
}

/* ---- output ---------------------------------------------------------------- */

/* Each vCPU's tick phase in ms ("-": none), the first 64. */
static void print_phases(FILE *f, const long *tick_ns, unsigned int nr_cpus)
{
	for (unsigned int c = 0; c < nr_cpus && c < 64; c++)
		if (tick_ns[c] < 0)
			fprintf(f, " -");
		else
			fprintf(f, " %ld", tick_ns[c] / 1000000);
	if (nr_cpus > 64)
		fprintf(f, " ...");
}

/* The snapshots' page traffic against the trace's (pl_snapshot_gap()). */
static void print_gap(FILE *f, const struct pl_snapshot_gap *g)
{
	bool by_alloc = labs(g->alloc_gap) >= labs(g->free_gap);

	fprintf(f, "         snapshots: vmstat counted %ld pages allocated and %ld freed between "
		"them, the trace %ld and %ld (%.1f%% apart)\n", g->pgalloc, g->pgfree,
		g->traced_alloc, g->traced_free, 100 * g->share);
	if (g->stale)
		fprintf(f, "WARNING: STALE SNAPSHOT: the kernel %s %ld pages outside the trace: its "
			"before/after snapshots were not taken right at its ends (by hand, around "
			"perf record's ring buffer setup?), so the loaded state is not the trace's "
			"starting state and every figure is suspect\n",
			by_alloc ? "allocated" : "freed", by_alloc ? g->alloc_gap : g->free_gap);
}

static void print_arr(const unsigned long *v, int n)
{
	putchar('[');
	for (int i = 0; i < n; i++)
		printf("%s%lu", i ? ", " : "", v[i]);
	putchar(']');
}

/*
 * /proc/vmstat's pressure counters in a record: the kernel's between the
 * snapshots, pagelab's from its own event counters (-1: pagelab keeps none).
 * Each names its registry row, whose counter is the record's key.
 */
static const struct vmstat_row {
	enum pl_vmstat_pressure vp;
	int ev;
	const char *metric;
} vmstat_rows[] = {
	{ PL_VP_compact_stall, PL_EV_COMPACT_STALL, "vmstat-compact-stall" },
	{ PL_VP_compact_fail, PL_EV_COMPACT_FAIL, "vmstat-compact-fail" },
	{ PL_VP_compact_success, PL_EV_COMPACT_SUCCESS, "vmstat-compact-success" },
	{ PL_VP_compact_migrate_scanned, PL_EV_COMPACT_MIGRATE_SCANNED,
	  "vmstat-compact-migrate-scanned" },
	{ PL_VP_compact_free_scanned, PL_EV_COMPACT_FREE_SCANNED, "vmstat-compact-free-scanned" },
	{ PL_VP_compact_isolated, PL_EV_COMPACT_ISOLATED, "vmstat-compact-isolated" },
	{ PL_VP_compact_daemon_wake, PL_EV_COMPACT_DAEMON_WAKE, "vmstat-compact-daemon-wake" },
	{ PL_VP_compact_daemon_migrate_scanned, PL_EV_COMPACT_DAEMON_MIGRATE_SCANNED,
	  "vmstat-compact-daemon-migrate-scanned" },
	{ PL_VP_compact_daemon_free_scanned, PL_EV_COMPACT_DAEMON_FREE_SCANNED,
	  "vmstat-compact-daemon-free-scanned" },
	{ PL_VP_pgmigrate_success, PL_EV_PGMIGRATE_SUCCESS, "vmstat-pgmigrate-success" },
	{ PL_VP_pgmigrate_fail, PL_EV_PGMIGRATE_FAIL, "vmstat-pgmigrate-fail" },
	{ PL_VP_pgsteal_kswapd, -1, "vmstat-pgsteal-kswapd" },
	{ PL_VP_pgsteal_direct, -1, "vmstat-pgsteal-direct" },
	{ PL_VP_pageoutrun, -1, "vmstat-pageoutrun" },
};

/* @s's value of vmstat row @i into *@v: false when that side has none. */
static bool vmstat_value(const struct side *s, size_t i, unsigned long *v)
{
	if (s->has_mm) {
		if (vmstat_rows[i].ev < 0)
			return false;
		*v = s->mm_ev[vmstat_rows[i].ev];
		return true;
	}
	if (!s->has_vmstat_pressure)
		return false;
	*v = s->vmstat_pressure[vmstat_rows[i].vp];
	return true;
}

static void print_vmstat_counters(const struct side *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(vmstat_rows); i++) {
		unsigned long v;

		if (vmstat_value(s, i, &v))
			printf(", \"%s\": %lu", pl_metric_find(vmstat_rows[i].metric)->counter, v);
	}
}

/* One text line of the side's vmstat counters, each with its registry unit; none if all 0. */
static void emit_vmstat_text(FILE *f, const struct side *s)
{
	unsigned long v, any = 0;

	for (size_t i = 0; i < ARRAY_SIZE(vmstat_rows); i++)
		if (vmstat_value(s, i, &v))
			any |= v;
	if (!any)
		return;
	fprintf(f, "%-8s %-18s vmstat:", "", "");
	for (size_t i = 0; i < ARRAY_SIZE(vmstat_rows); i++) {
		const struct pl_metric *mt = pl_metric_find(vmstat_rows[i].metric);

		if (vmstat_value(s, i, &v))
			fprintf(f, " %s %lu %s%s", mt->name, v, mt->unit,
				i + 1 < ARRAY_SIZE(vmstat_rows) ? "," : "");
	}
	fputc('\n', f);
}

/* The pressure counters of a score, as JSON members of "counters". */
static void print_pressure(const struct pl_trace_pressure *p)
{
	printf(", \"compact_stalls\": %lu, \"compact_successes\": %lu, \"compact_failures\": %lu, "
	       "\"compact_runs\": %lu, \"compact_runs_success\": %lu, "
	       "\"compact_migrate_scanned\": %lu, \"compact_free_scanned\": %lu, "
	       "\"compact_isolated_migrate\": %lu, \"compact_isolated_free\": %lu, "
	       "\"compact_migrated\": %lu, \"compact_migrate_failed\": %lu, "
	       "\"pgmigrate_success\": %lu, \"pgmigrate_fail\": %lu, \"contig_migrated\": %lu, "
	       "\"compact_deferred\": %lu, \"kcompactd_wakes\": %lu, \"wakeup_kcompactd\": %lu, "
	       "\"kswapd_wakes\": %lu, \"wakeup_kswapd\": %lu, \"kswapd_freed_pages\": %lu, "
	       "\"direct_reclaims\": %lu, \"direct_reclaimed\": %lu, \"alloc_failures\": %lu, "
	       "\"alloc_failures_high_order\": %lu",
	       p->compact_stalls, p->compact_successes, p->compact_failures, p->compact_runs,
	       p->compact_runs_success, p->compact_migrate_scanned, p->compact_free_scanned,
	       p->compact_isolated_migrate, p->compact_isolated_free, p->compact_migrated,
	       p->compact_migrate_failed, p->pgmigrate_success, p->pgmigrate_fail,
	       p->contig_migrated, p->compact_deferred, p->kcompactd_wakes, p->wakeup_kcompactd,
	       p->kswapd_wakes, p->wakeup_kswapd, p->kswapd_freed_pages, p->direct_reclaims,
	       p->direct_reclaimed, p->alloc_failures, p->alloc_failures_high_order);
}

static void emit_json(const struct bench *b, const struct side *s, const struct pl_trace_stats *st)
{
	const struct pl_trace_score *c = &s->score;
	const struct pl_metric *mt = pl_metric_find("zone-lock-est");

	printf("{\"suite\": \"replay\", \"test\": \"%s\", \"design\": \"%s\", \"rep\": 0, "
	       "\"value\": %lu, \"unit\": \"%s\", \"metric\": \"%s\", \"params\": {", s->test,
	       s->design, pl_trace_score_zone_lock(c), mt->unit, mt->id);
	for (int i = 0; i < b->nr_params; i++)
		printf("%s\"%s\": \"%s\"", i ? ", " : "", b->keys[i], b->vals[i]);
	printf("}");
	{
		char canon[512];	/* the kernel's side is no design */

		if (strcmp(s->test, "kernel") &&
		    !pl_design_check(s->design, canon, sizeof(canon), NULL, 0))
			printf(", \"canonical\": \"%s\"", canon);
	}
	printf(", \"events\": %lu, \"lost_events\": %lu, \"state\": \"%s\", \"seconds\": %.3f, "
	       "\"counters\": {", st->events, st->lost_events, s->state, s->seconds);
	printf("\"pcp_refills\": %lu, \"pcp_refill_pages\": %lu, \"pcp_refill_pages_by_order\": ",
	       c->pcp_refills, c->pcp_refill_pages);
	print_arr(c->pcp_refill_pages_by_order, NR_PAGE_ORDERS);
	printf(", \"pcp_refills_by_order\": ");
	print_arr(c->refills_by_order, NR_PAGE_ORDERS);
	printf(", \"pcp_drain_calls\": %lu, \"pcp_drained_pages\": %lu, \"fallback_events\": %lu, "
	       "\"fallback_fragmenting\": %lu, \"fallback_change_ownership\": %lu, "
	       "\"fallback_pageblocks_claimed\": %lu, \"zone_lock_acquisitions\": %lu, "
	       "\"buddy_direct_allocs\": %lu, \"buddy_direct_frees\": %lu, \"allocs\": %lu, "
	       "\"frees\": %lu, \"vmalloc_allocs\": %lu, \"vmalloc_purges\": %lu",
	       c->pcp_drain_calls, c->pcp_drained_pages, c->fallback_events, c->fallback_fragmenting,
	       c->fallback_change_ownership, c->fallback_pageblocks_claimed,
	       pl_trace_score_zone_lock(c), c->buddy_direct_allocs, c->buddy_direct_frees, c->allocs,
	       c->frees, c->vmalloc_allocs, c->vmalloc_purges);
	print_pressure(&c->pr);
	print_vmstat_counters(s);
	printf(", \"drained_pages_by_order_mt\": [");
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		printf(o ? ", " : "");
		print_arr(c->drained_pages_by_order_mt[o], MIGRATE_TYPES);
	}
	putchar(']');
	if (s->has_mm)	/* the registry's zone-lock-actual, beside the estimator */
		printf(", \"zone_lock_acquisitions_actual\": %llu", s->zone_lock_actual);
	if (s->has_free) {
		printf(", \"nr_free_pages_end\": %lu, \"pcp_pages_end\": %lu, "
		       "\"free_pages_by_order_end\": ", s->nr_free, s->pcp_pages);
		print_arr(s->free_by_order, NR_PAGE_ORDERS);
	}
	printf("}");
	if (s->has_vmstat_pressure) {
		printf(", \"vmstat_pressure\": {");
		for (int i = 0; i < NR_PL_VMSTAT_PRESSURE; i++)
			printf("%s\"%s\": %lu", i ? ", " : "", pl_vmstat_pressure_names[i],
			       s->vmstat_pressure[i]);
		putchar('}');
	}
	printf(", \"warnings\": {");
	for (int w = 0, first = 1; w < NR_PL_TRACE_WARN; w++)
		if (s->warn[w]) {
			printf("%s\"%s\": %lu", first ? "" : ", ", pl_trace_warn_names[w], s->warn[w]);
			first = 0;
		}
	printf("}");
	if (s->has_gap)
		printf(", \"snapshot_gap\": {\"pgalloc\": %ld, \"pgfree\": %ld, \"traced_alloc\": %ld, "
		       "\"traced_free\": %ld, \"alloc_gap\": %ld, \"free_gap\": %ld, \"share\": %.4f, "
		       "\"stale\": %s}", s->gap.pgalloc, s->gap.pgfree, s->gap.traced_alloc,
		       s->gap.traced_free, s->gap.alloc_gap, s->gap.free_gap, s->gap.share,
		       s->gap.stale ? "true" : "false");
	if (s->state_tvd >= 0) {
		printf(", \"state_buddyinfo_tvd\": %.4f, \"state_free_pages_by_order\": ", s->state_tvd);
		print_arr(s->state_free_by_order, NR_PAGE_ORDERS);
	}
	if (s->has_mm) {
		printf(", \"mm_counters\": {\"zone_lock_acquisitions_actual\": %llu",
		       s->zone_lock_actual);
		for (int i = 0; i < NR_PL_VM_EVENTS; i++)
			printf(", \"%s\": %lu", pl_vm_event_names[i], s->mm_ev[i]);
		putchar('}');
	}
	if (s->tick_ms >= 0) {
		printf(", \"tick_phase_ms\": %ld, \"tick_probe_ms\": [", s->tick_ms);
		for (int i = 0; i < PL_TICK_PROBES; i++)
			printf("%s%ld", i ? ", " : "", s->probe_ms[i]);
		printf("], \"tick_probe_drain_calls\": ");
		print_arr(s->probe_drain_calls, PL_TICK_PROBES);
		/* every probe's counters: the spread beside the reported run */
		printf(", \"tick_probe_counters\": [");
		for (int i = 0; i < PL_TICK_PROBES; i++) {
			const struct pl_trace_score *p = &s->probe_score[i];

			printf("%s{\"pcp_refills\": %lu, \"pcp_refill_pages\": %lu, "
			       "\"pcp_drain_calls\": %lu, \"pcp_drained_pages\": %lu, "
			       "\"zone_lock_acquisitions\": %lu, \"fallback_events\": %lu}", i ? ", " : "",
			       p->pcp_refills, p->pcp_refill_pages, p->pcp_drain_calls,
			       p->pcp_drained_pages, pl_trace_score_zone_lock(p), p->fallback_events);
		}
		putchar(']');
	}
	if (strcmp(s->test, "kernel")) {
		printf(", \"design_notes\": [");
		for (int i = 0; i < s->nr_notes; i++) {
			printf("%s\"", i ? ", " : "");
			for (const char *ch = s->notes[i]; *ch; ch++)
				printf(*ch == '"' || *ch == '\\' ? "\\%c" : "%c", *ch);
			putchar('"');
		}
		putchar(']');
	}
	/* where the time went: the kernel's side parses, a design's side replays */
	printf(", \"timings\": {\"parse_s\": %.6f, \"replay_s\": %.6f, \"replay_total_s\": %.6f, "
	       "\"events_per_s\": %.6g}", s->parse_s, s->replay_s, s->replay_total_s,
	       !strcmp(s->test, "kernel") ? (s->parse_s > 0 ? (double)st->events / s->parse_s : 0)
	       : (s->replay_s > 0 ? (double)st->events / s->replay_s : 0));
	printf(", \"timeline\": [");
	for (size_t i = 0; i < s->nr_tl; i++) {
		unsigned int n = min(s->nr_cpus, (unsigned int)ARRAY_SIZE(s->tl[i].refills));

		printf("%s{\"t\": %lu, \"pcp_refills\": ", i ? ", " : "", s->tl[i].t);
		print_arr(s->tl[i].refills, (int)n);
		if (s->has_mm) {
			printf(", \"free_pages_by_order\": ");
			print_arr(s->tl[i].free_by_order, NR_PAGE_ORDERS);
		}
		putchar('}');
	}
	printf("]}\n");
	fflush(stdout);
}

static void emit_text(FILE *f, const struct side *s)
{
	const struct pl_trace_score *c = &s->score;

	fprintf(f, "%-8s %-18s refills %9lu  pages/refill %6.2f  drain calls %8lu  drained %10lu  "
		"fallbacks %6lu  zone->lock %9lu\n", s->test, s->design, c->pcp_refills,
		c->pcp_refills ? (double)c->pcp_refill_pages / (double)c->pcp_refills : 0.0,
		c->pcp_drain_calls, c->pcp_drained_pages, c->fallback_events,
		pl_trace_score_zone_lock(c));
	if (c->pr.compact_runs || c->pr.kswapd_wakes || c->pr.direct_reclaims ||
	    c->pr.alloc_failures || c->pr.kswapd_freed_pages)
		fprintf(f, "%-8s %-18s compaction stalls %lu (success %lu, fail %lu)  isolated %lu+%lu  "
			"migrated %lu  kswapd wakes %lu (freed %lu)  direct reclaim %lu (%lu pages)  "
			"failed allocs %lu (order>0 %lu)\n", "", "", c->pr.compact_stalls,
			c->pr.compact_successes, c->pr.compact_failures, c->pr.compact_isolated_migrate,
			c->pr.compact_isolated_free, c->pr.compact_migrated, c->pr.kswapd_wakes,
			c->pr.kswapd_freed_pages, c->pr.direct_reclaims, c->pr.direct_reclaimed,
			c->pr.alloc_failures, c->pr.alloc_failures_high_order);
	emit_vmstat_text(f, s);
}

/* Total variation distance of two free-pages-by-order distributions. */
static double tvd(const unsigned long *a, const unsigned long *b)
{
	double sa = 0, sb = 0, d = 0;

	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		sa += (double)a[o];
		sb += (double)b[o];
	}
	if (sa == 0 || sb == 0)
		return 1;
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		double x = (double)a[o] / sa - (double)b[o] / sb;

		d += x < 0 ? -x : x;
	}
	return d / 2;
}

/*
 * cache=1 (the default; PAGELAB_NO_CACHE=1 makes it 0): look the trace's
 * content up in the cache directory. An entry that fails its checks is
 * said in one line and parsed over; a miss parses into a full-mode stream
 * for cache_close() to store.
 */
static void cache_open(const struct bench *b, const struct artifact *a, struct replay_cache *c)
{
	const char *no = getenv("PAGELAB_NO_CACHE");
	const char *why;

	memset(c, 0, sizeof(*c));
	if (!param_ulong(b, "cache", no && *no && strcmp(no, "0") ? 0 : 1))
		return;
	if (!pl_evcache_dir(c->dir, sizeof(c->dir)))
		return;		/* no directory to name: no cache */
	if (pl_evcache_key(a->trace, &c->key)) {
		c->dir[0] = 0;
		return;		/* unreadable: the parse says why */
	}
	c->hit = pl_evcache_load(c->dir, &c->key, &c->stats, &why);
	if (!c->hit && *why)
		fprintf(stderr, "pagelab-bench: replay: ignoring the decoded-stream cache's entry for "
			"%s (%s); parsing the text\n", a->trace, why);
	if (!c->hit)
		c->full = pl_evstream_create_full(NULL);
}

/* After the kernel's side: store a parse's events (best effort), free the entry. */
static void cache_close(struct replay_cache *c, const struct pl_trace_stats *stats)
{
	const char *max_mb = getenv("PAGELAB_CACHE_MAX_MB");
	unsigned long long mb = max_mb && *max_mb ? strtoull(max_mb, NULL, 10) : 4096;

	if (c->full && stats->events && !pl_evstream_finish(c->full))
		pl_evcache_store(c->dir, &c->key, c->full, stats, (uint64_t)mb << 20);
	pl_evstream_destroy(c->full);
	pl_evstream_destroy(c->hit);
	c->full = c->hit = NULL;
}

static int run_replay(struct bench *b)
{
	const char *path = param_str(b, "trace", NULL);
	const char *designs[16];
	struct pl_snapshot snap;
	bool has_snap = false;
	struct artifact a;
	struct pl_trace_stats stats;
	struct side k = { .test = "kernel", .design = "kernel", .state_tvd = -1 };
	struct pl_positional pos = { 0 };
	struct pl_tick_phase tick = { 0 };
	struct pl_pcp_busy busy = { 0 };
	bool follow_busy, probing, has_phase = false;
	const char *snapdir, *state_s, *tick_s;
	long *tick_ns, tick_ms;
	int nr_designs, state, rc;
	unsigned int nr_cpus, nr_tasks, jobs;
	struct replay_run run;
	struct replay_cache cache;
	bool cache_hit;
	struct pl_evstream *es;
	void **outs;
	size_t *out_len;
	char why[256];

	if (!path) {
		fprintf(stderr, "pagelab-bench: replay: trace=PATH is required\n");
		return 2;
	}
	if (artifact_read(path, &a, why, sizeof(why))) {
		fprintf(stderr, "pagelab-bench: replay: %s: %s\n", path, why);
		return 2;
	}
	if (param_str(b, "after", NULL)) {	/* the kernel's end state, for a bare trace */
		struct pl_snapshot *after = malloc(sizeof(*after));
		const char *dir = param_str(b, "after", NULL);

		if (!after || bench_snapshot_read("after", dir, after)) {
			free(after);
			return 2;
		}
		free(after);
		snprintf(a.after, sizeof(a.after), "%s", dir);
		a.has_after = true;
	}
	snapdir = param_str(b, "snapshot", a.has_before ? a.before : NULL);
	if (snapdir) {
		if (bench_snapshot_read("snapshot", snapdir, &snap))
			return 2;
		has_snap = true;
	}
	state_s = param_str(b, "state", has_snap ? "positional" : "fresh");
	state = pl_state_level_parse(state_s);
	if (state < 0) {
		fprintf(stderr, "pagelab-bench: replay: state=%s: want fresh, counts or positional\n",
			state_s);
		return 2;
	}
	if (state != PL_STATE_FRESH && !has_snap) {
		fprintf(stderr, "pagelab-bench: replay: state=%s needs a snapshot: %s has no before/ "
			"(record with `pagelab trace record`, or pass snapshot=DIR)\n", state_s, path);
		return 2;
	}
	nr_designs = bench_designs(b, "v6.18", designs, 16);
	/* jobs=: replays at once, in processes of their own (default: the online CPUs) */
	jobs = (unsigned int)param_ulong(b, "jobs", (unsigned long)sysconf(_SC_NPROCESSORS_ONLN));
	if (!jobs || jobs > 256) {
		fprintf(stderr, "pagelab-bench: replay: jobs=%u: want 1..256\n", jobs);
		return 2;
	}
	if (has_snap)	/* the positional pass follows the snapshot's pfns only */
		pos.pfn_limit = snap_end_pfn(&snap);

	tick_s = param_str(b, "tick", "kernel");
	tick_ms = param_str(b, "tick_ms", NULL) ? (long)param_ulong(b, "tick_ms", 0) : -1;
	/* pcp_busy=1: the frees the trace shows found their PCP busy go to the buddy */
	follow_busy = param_ulong(b, "pcp_busy", 1) != 0;
	/*
	 * The decoded-stream cache: the trace's events as a previous parse of
	 * the same content decoded them, validated, else a parse recorded for
	 * the next run.
	 */
	cache_open(b, &a, &cache);
	/* the one text parse: the kernel's side, and the events decoded for every replay */
	es = pl_evstream_create(NULL);
	if (!es) {
		fprintf(stderr, "pagelab-bench: replay: cannot create the decoded event stream: %s\n",
			strerror(errno));
		return 1;
	}
	k.parse_s = now_s();
	kernel_side(&a, has_snap ? &snap : NULL, &k, &stats,
		    state == PL_STATE_POSITIONAL ? &pos : NULL, &tick, follow_busy ? &busy : NULL, es,
		    &cache);
	k.parse_s = now_s() - k.parse_s;
	cache_hit = cache.hit != NULL;
	cache_close(&cache, &stats);
	pl_pcp_busy_finish(&busy);
	if (!stats.events) {
		/* an empty file, or text that is no trace: nothing to score */
		fprintf(stderr, "pagelab-bench: replay: %s: no page-allocator events in %lu lines "
			"(want tracefs, trace-cmd report or perf script text of kmem/vmalloc "
			"events)\n", path, stats.lines);
		free(k.tl);
		pl_evstream_destroy(es);
		pl_positional_release(&pos);
		pl_tick_phase_release(&tick);
		pl_pcp_busy_release(&busy);
		return 2;
	}
	k.state = pl_state_level_names[state];
	/*
	 * The machine's CPUs: the manifest's, else the snapshot's pagesets
	 * (zoneinfo lists one per possible CPU), else the trace's highest
	 * CPU. An event of a CPU beyond them is counted cpu_out_of_range.
	 */
	nr_cpus = a.nr_cpus ? a.nr_cpus : min((unsigned int)(stats.max_cpu + 1), PL_MAX_VCPUS);
	if (!a.nr_cpus && has_snap && pl_snapshot_nr_cpus(&snap))
		nr_cpus = min(pl_snapshot_nr_cpus(&snap), PL_MAX_VCPUS);
	nr_cpus = (unsigned int)param_ulong(b, "cpus", nr_cpus);
	if (!nr_cpus)
		nr_cpus = 1;
	tick_ns = malloc(nr_cpus * sizeof(*tick_ns));
	if (!tick_ns) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	/*
	 * Each vCPU's vmstat tick: given (tick_ms=), one second after the
	 * first event (tick=first), or, with tick=kernel, tick_probe()'s: four
	 * phases around the kernel's, or across the second without one.
	 */
	probing = tick_ms < 0 && !strcmp(tick_s, "kernel");
	for (unsigned int c = 0; c < nr_cpus; c++) {
		tick_ns[c] = tick_ms >= 0 ? tick_ms * 1000000L : probing ? pl_tick_phase_ns(&tick, c) : -1;
		has_phase |= tick_ns[c] >= 0;
	}
	if (probing && has_phase) {
		fprintf(b->out, "         vmstat tick per vCPU (ms into each second, from the trace's "
			"kworker drains):");
		print_phases(b->out, tick_ns, nr_cpus);
		fprintf(b->out, "; each design replayed at it %+ld/%+ld/%+ld/%+ld ms, ticking at "
			"the kernel's kworker drains within %ld ms, and the run nearest their median "
			"reported\n", tick_jitter[0], tick_jitter[1], tick_jitter[2], tick_jitter[3],
			PL_TICK_WINDOW_NS / 1000000);
	} else if (probing) {
		fprintf(b->out, "         vmstat tick: the trace shows no kworker drain to read its "
			"phase from; each design replayed at 0, 250, 500 and 750 ms into the "
			"second, and the run nearest their median reported\n");
	} else {
		fprintf(b->out, "         vmstat tick per vCPU (ms into each second; - one second "
			"after the first event):");
		print_phases(b->out, tick_ns, nr_cpus);
		fputc('\n', b->out);
	}
	if (b->json)
		emit_json(b, &k, &stats);
	emit_text(b->out, &k);
	fprintf(b->out, "         %lu events (%lu lines), %lu lost, %.1f s of trace, format %s; "
		"%s and scored in %.2f s (%.2f M events/s)\n",
		stats.events, stats.lines, stats.lost_events, k.seconds,
		pl_trace_format_names[stats.format],
		cache_hit ? "decoded from the cache" : "parsed", k.parse_s,
		k.parse_s > 0 ? (double)stats.events / k.parse_s / 1e6 : 0.0);
	if (k.has_gap)
		print_gap(b->out, &k.gap);
	if (follow_busy)
		fprintf(b->out, "         %zu frees found their PCP busy and went to the buddy "
			"(pcp_busy=0: replay them as PCP frees)\n", busy.nr);
	run = (struct replay_run){ .b = b, .a = &a, .designs = designs, .state = state,
				   .snap = has_snap ? &snap : NULL, .pos = &pos,
				   .busy = follow_busy ? &busy : NULL, .tick_ns = tick_ns,
				   .ticks = &tick, .nr_cpus = nr_cpus,
				   .nr_probes = probing ? PL_TICK_PROBES : 1, .probing = probing,
				   .es = es };
	nr_tasks = (unsigned int)nr_designs * run.nr_probes;
	outs = calloc(nr_tasks, sizeof(*outs));
	out_len = calloc(nr_tasks, sizeof(*out_len));
	if (!outs || !out_len) {
		fprintf(stderr, "pagelab-bench: replay: out of memory\n");
		exit(1);
	}
	rc = bench_parallel(nr_tasks, jobs, replay_task, &run, outs, out_len);
	if (rc)
		exit(rc);
	for (int d = 0; d < nr_designs; d++) {
		struct side s;
		double secs;

		if (probing)
			pick_probe(&run, (unsigned int)d, outs + (size_t)d * run.nr_probes, &s, &secs);
		else
			s = task_side(outs[d], &secs);
		s.seconds = k.seconds;
		s.replay_s = secs;
		if (!probing)
			s.replay_total_s = secs;
		if (b->json)
			emit_json(b, &s, &stats);
		emit_text(b->out, &s);
		fprintf(b->out, "         replayed in %.2f s (%.2f M events/s)", secs,
			secs > 0 ? (double)stats.events / secs / 1e6 : 0.0);
		if (k.has_free)
			fprintf(b->out, ", end buddyinfo TVD %.3f", tvd(k.free_by_order, s.free_by_order));
		if (s.state_tvd >= 0)
			fprintf(b->out, ", loaded state's buddyinfo TVD %.4f", s.state_tvd);
		fputc('\n', b->out);
		for (int i = 0; i < s.nr_notes; i++)
			fprintf(b->out, "         design %s: %s\n", designs[d], s.notes[i]);
		if (s.tick_ms >= 0)
			fprintf(b->out, "         tick at %ld ms; drain calls at %ld/%ld/%ld/%ld ms: "
				"%lu/%lu/%lu/%lu\n", s.tick_ms, s.probe_ms[0], s.probe_ms[1],
				s.probe_ms[2], s.probe_ms[3], s.probe_drain_calls[0],
				s.probe_drain_calls[1], s.probe_drain_calls[2], s.probe_drain_calls[3]);
		free(s.tl);
	}
	for (unsigned int i = 0; i < nr_tasks; i++)
		free(outs[i]);
	free(outs);
	free(out_len);
	pl_evstream_destroy(es);
	free(k.tl);
	free(tick_ns);
	pl_tick_phase_release(&tick);
	pl_positional_release(&pos);
	pl_pcp_busy_release(&busy);
	return 0;
}

const struct bench_suite suite_replay = {
	.name = "replay",
	.summary = "replay a kernel page-allocator trace and score it against the kernel's events",
	.keys = replay_keys,
	.run = run_replay,
};
