// SPDX-License-Identifier: MIT
/*
 * fuzz_trace.c - the fuzzer of pagelab's untrusted-input surfaces: the
 * first byte of an input picks the surface, the rest is the file.
 *
 *   0 trace      pl_trace_open_mem() over the bytes as they are (any of
 *                the text formats, a trace-cmd trace.dat, or a compressed
 *                stream the corpus holds)
 *   1-3 gzip/zstd/xz   the bytes compressed first, then parsed: every
 *                decompressor reaches the parser with a valid stream
 *   4 snapshot   the bytes cut at NUL into buddyinfo, pagetypeinfo,
 *                zoneinfo and vmstat, read by pl_snapshot_read() and loaded
 *                onto a 64 MiB machine: loaded or refused, the checker
 *                passes; refused, the machine's reports are unchanged
 *   5 manifest   artifact_parse_manifest() of pagelab-bench replay
 *   6 replay     the trace replayed on a 32 MiB, 2-CPU machine with the
 *                PCP-busy, tick-phase and positional passes; then every
 *                live block freed and the checker run
 *
 * A finding is a crash, a sanitizer report, a checker failure (abort()),
 * or, under libFuzzer's -rss_limit_mb / -malloc_limit_mb / -timeout, an
 * allocation or a run that grows with the numbers in the input rather
 * than its size.
 *
 * Built as the libFuzzer target fuzz_trace (FUZZ_MAIN, clang) and as
 * fuzz_trace_replay, which runs the committed corpus
 * (tests/fuzz/trace-corpus) in every build.
 */
#include <dirent.h>
#include <lzma.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "../../bench/suites/artifact.h"
#include "pagelab/pagelab.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

#define FZ_TRACE_MAX	(256u << 10)

enum { S_TRACE, S_GZIP, S_ZSTD, S_XZ, S_SNAPSHOT, S_MANIFEST, S_REPLAY, NR_SURFACES };

static void finding(const char *what)
{
	fprintf(stderr, "fuzz_trace: %s\n", what);
	abort();
}

/* Every event of a reader over @buf; the statistics must add up. */
static void parse_all(const void *buf, size_t len)
{
	struct pl_trace_reader *r = pl_trace_open_mem(buf, len);
	struct pl_trace_event ev;
	unsigned long n = 0;

	if (!r)
		return;
	while (pl_trace_next(r, &ev) > 0) {
		if (ev.type >= NR_PL_TRACE_TYPES || ev.cpu >= PL_TRACE_MAX_CPUS ||
		    ev.order < 0 || ev.order > MAX_PAGE_ORDER ||
		    (ev.pfn >= PL_TRACE_PFN_LIMIT && ev.pfn != -1UL))
			finding("the parser returned an event outside its ranges");
		n++;
	}
	if (pl_trace_get_stats(r)->events != n)
		finding("events counted differ from events returned");
	pl_trace_close(r);
}

static void fuzz_compressed(int how, const uint8_t *data, size_t size)
{
	size_t cap = size + size / 2 + 1024;
	uint8_t *out = malloc(cap);
	size_t n = 0;

	if (!out)
		return;
	if (how == S_GZIP) {
		z_stream zs = { 0 };

		if (deflateInit2(&zs, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK) {
			zs.next_in = (uint8_t *)data;
			zs.avail_in = (uInt)size;
			zs.next_out = out;
			zs.avail_out = (uInt)cap;
			if (deflate(&zs, Z_FINISH) == Z_STREAM_END)
				n = cap - zs.avail_out;
			deflateEnd(&zs);
		}
	} else if (how == S_ZSTD) {
		size_t ret = ZSTD_compress(out, cap, data, size, 1);

		n = ZSTD_isError(ret) ? 0 : ret;
	} else {
		if (lzma_easy_buffer_encode(0, LZMA_CHECK_CRC32, NULL, data, size, out, &n, cap) !=
		    LZMA_OK)
			n = 0;
	}
	if (n) {
		parse_all(out, n);
		parse_all(out, n / 2);	/* a cut stream: an error, not a hang */
	}
	free(out);
}

/* ---- snapshots ------------------------------------------------------------ */

static char snap_dir[64];

static void write_part(const char *name, const uint8_t *p, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", snap_dir, name);
	f = fopen(path, "w");
	if (!f)
		finding("cannot write the snapshot directory");
	fwrite(p, 1, n, f);
	fclose(f);
}

static char *reports(struct pl_machine *m)
{
	size_t cap = 1 << 18;
	char *buf = malloc(cap);
	long a, b;

	if (!buf)
		return NULL;
	a = pl_show_buddyinfo(m, buf, cap);
	b = a >= 0 ? pl_show_zoneinfo(m, buf + a, cap - (size_t)a) : -1;
	if (b < 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void fuzz_snapshot(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "buddyinfo", "pagetypeinfo", "zoneinfo", "vmstat" };
	static struct pl_machine *m;
	struct pl_snapshot *snap = malloc(sizeof(*snap));
	struct pl_loaded_state *st;
	const uint8_t *p = data, *end = data + size;
	char *before, *after;

	if (!snap)
		return;
	if (!snap_dir[0]) {
		snprintf(snap_dir, sizeof(snap_dir), "/tmp/pl-fuzz-snap-%d", (int)getpid());
		mkdir(snap_dir, 0700);
	}
	for (size_t i = 0; i < 4; i++) {
		const uint8_t *nul = p < end ? memchr(p, 0, (size_t)(end - p)) : NULL;
		const uint8_t *stop = nul ? nul : end;

		write_part(names[i], p, (size_t)(stop - p));
		p = nul ? nul + 1 : end;
	}
	if (pl_snapshot_read(snap_dir, snap)) {
		free(snap);
		return;
	}
	if (!m) {	/* one machine for the run: a refusal must leave it as it was */
		struct pl_config cfg;

		pl_config_default(&cfg);
		cfg.mem_bytes = 64UL << 20;
		cfg.dma32_bytes = 16UL << 20;
		cfg.nr_cpus = 2;
		m = pl_machine_create(&cfg);
		if (!m)
			finding("cannot create the machine");
	}
	pl_enter(m, 0);
	before = reports(m);
	st = pl_machine_load_state(m, snap);
	pl_enter(m, 0);
	after = reports(m);
	if (pl_check_machine(m))
		finding("the checker fails after a snapshot load");
	if (st) {	/* loaded: this machine is spent, a fresh one next time */
		pl_state_release(st);
		pl_machine_destroy(m);
		m = NULL;
	} else if (before && after && strcmp(before, after)) {
		finding("a refused snapshot changed the machine");
	}
	free(before);
	free(after);
	free(snap);
}

/* ---- the manifest ----------------------------------------------------------- */

static void fuzz_manifest(const uint8_t *data, size_t size)
{
	char *json = malloc(size + 1), why[256];
	struct artifact *a = calloc(1, sizeof(*a));

	if (json && a) {
		memcpy(json, data, size);
		json[size] = '\0';
		why[0] = '\0';
		if (artifact_parse_manifest("/nonexistent/a.pltrace", json, a, why, sizeof(why))) {
			if (!why[0] || strchr(why, '\n'))
				finding("a manifest refusal is not one line");
		} else if (strstr(a->trace, "/../") || a->nr_cpus > PL_MAX_VCPUS) {
			finding("a manifest escaped its checks");
		}
	}
	free(json);
	free(a);
}

/* ---- replay ------------------------------------------------------------------ */

static void fuzz_replay(const uint8_t *data, size_t size)
{
	struct pl_trace_reader *r;
	struct pl_trace_event ev;
	struct pl_pcp_busy busy = { 0 };
	struct pl_tick_phase tick = { 0 };
	struct pl_positional pos = { 0 };
	struct pl_trace_score score;
	struct pl_replay *rp;
	struct pl_machine *m;
	struct pl_config cfg;

	/* the passes before the replay, as pagelab-bench makes them */
	r = pl_trace_open_mem(data, size);
	if (!r)
		return;
	pl_trace_score_init(&score);
	while (pl_trace_next(r, &ev) > 0) {
		pl_trace_score_event(&score, &ev);
		if (pl_pcp_busy_event(&busy, &ev) || pl_tick_phase_event(&tick, &ev) ||
		    pl_positional_event(&pos, &ev))
			break;	/* out of memory under -malloc_limit_mb: a finding of its own */
	}
	pl_trace_close(r);
	pl_pcp_busy_finish(&busy);

	pl_config_default(&cfg);
	cfg.mem_bytes = 32UL << 20;
	cfg.dma32_bytes = 16UL << 20;
	cfg.nr_cpus = 2;
	m = pl_machine_create(&cfg);
	if (!m)
		finding("cannot create the machine");
	rp = pl_replay_create(m, NULL);
	if (!rp)
		finding("cannot create the replay");
	pl_replay_set_pcp_busy(rp, &busy);
	for (unsigned int c = 0; c < 2; c++) {
		const uint64_t *starts;
		size_t n = pl_tick_phase_runs(&tick, c, &starts);
		long ph = pl_tick_phase_ns(&tick, c);

		if (ph >= 0) {
			pl_replay_set_tick_phase(rp, c, ph);
			pl_replay_set_tick_times(rp, c, starts, n);
		}
	}
	r = pl_trace_open_mem(data, size);
	while (r && pl_trace_next(r, &ev) > 0)
		pl_replay_event(rp, &ev);
	pl_trace_close(r);
	pl_replay_destroy(rp, true);
	pl_enter(m, 0);
	if (pl_check_machine(m))
		finding("the checker fails after a replay");
	pl_machine_destroy(m);
	pl_pcp_busy_release(&busy);
	pl_tick_phase_release(&tick);
	pl_positional_release(&pos);
}

static int fuzz_one(const uint8_t *data, size_t size)
{
	if (!size || size > FZ_TRACE_MAX)
		return 0;
	switch (data[0] % NR_SURFACES) {
	case S_TRACE:
		parse_all(data + 1, size - 1);
		break;
	case S_GZIP:
	case S_ZSTD:
	case S_XZ:
		fuzz_compressed(data[0] % NR_SURFACES, data + 1, size - 1);
		break;
	case S_SNAPSHOT:
		fuzz_snapshot(data + 1, size - 1);
		break;
	case S_MANIFEST:
		fuzz_manifest(data + 1, size - 1);
		break;
	case S_REPLAY:
		fuzz_replay(data + 1, size - 1);
		break;
	}
	return 0;
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	pl_warn_set_quiet(true);	/* bad input warns by design */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_one(data, size);
}
#else
/* fuzz_trace_replay FILE|DIR...: run each input once (the committed corpus). */
static int run_file(const char *path)
{
	static uint8_t buf[FZ_TRACE_MAX];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f) {
		fprintf(stderr, "fuzz_trace_replay: cannot read %s\n", path);
		return 1;
	}
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	fuzz_one(buf, n);
	return 0;
}

int main(int argc, char **argv)
{
	int bad = 0, runs = 0;

	pl_warn_set_quiet(true);
	for (int i = 1; i < argc; i++) {
		struct stat sb;
		DIR *d;
		struct dirent *e;

		if (stat(argv[i], &sb) || !S_ISDIR(sb.st_mode)) {
			bad |= run_file(argv[i]);
			runs++;
			continue;
		}
		d = opendir(argv[i]);
		while (d && (e = readdir(d))) {
			char path[4096];

			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			bad |= run_file(path);
			runs++;
		}
		if (d)
			closedir(d);
	}
	printf("fuzz_trace_replay: %d inputs\n", runs);
	return bad;
}
#endif
