// SPDX-License-Identifier: MIT
/*
 * snapshot.c - snapshot_ms=N / snapshot_ops=K with snapshot_dir=DIR (every
 * suite): /proc/buddyinfo, pagetypeinfo, vmstat and zoneinfo of the
 * suite's machines, written while the suite runs, each snapshot a
 * directory DIR/NNNN/ in the layout `pagelab trace record` copies a real
 * kernel's /proc into (src/trace/snapshot.c reads it: snapshot=DIR/NNNN
 * state=counts boots a machine in that state), and one line per snapshot
 * appended to DIR/index:
 *
 *   NNNN SUITE DESIGN MACHINE T_MS PAGE_OPS WHY
 *
 * MACHINE numbers the run's machines from 0, T_MS is wall time since the
 * machine was made, PAGE_OPS its pages allocated plus pages freed (every
 * vCPU's PGALLOC_PAGES + PGFREE_PAGES), WHY is start, time, ops or end.
 *
 * When: a snapshot is never taken inside a measured region (harness.c),
 * so no timing includes one. The harness's pause points are the machine's
 * creation (start), the edges of every measured region, every record
 * emitted, and the machine's end (end); at a pause point a machine gets a
 * snapshot when the next multiple of N ms since its start (snapshot_ms)
 * or of K page operations (snapshot_ops) has been passed; multiples passed
 * inside one region give one snapshot after it, not several. Wall time
 * means nothing under vtime=1 and differs run to run: snapshot_ops counts
 * the machine's own work, so the same run writes the same snapshots.
 * NNNN continues after the highest number already in DIR, so repeated
 * runs (pagelab bench's reps and designs) add to one directory.
 *
 * A snapshot observes and leaves no trace: the reports take zone->lock,
 * so each zone lock's lock_stat numbers (and last CPU) are put back after
 * it (pl_lock_stat_save()/_put_back()), and it runs outside virtual time
 * (pl_vt_cur cleared), so no vCPU's clock moves; the machine's free lists
 * and counters are only read. At a pause point no vCPU runs; the one
 * thread that may (pagealloc_micro's monitor=1 reader, which only reads)
 * loses the lock_stat counts it makes during a snapshot, in a suite whose
 * records carry no counters.
 *
 * Protected by: the main thread (the harness's pause points run there).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "bench.h"

#define SNAP_MAX_MACHINES 16

struct snap_machine {
	struct pl_machine *m;
	const char *design;
	unsigned int idx;
	uint64_t t0, next_ns;
	unsigned long next_ops;
};

static struct {
	const struct bench *b;
	const char *dir;
	uint64_t every_ns;		/* 0: off */
	unsigned long every_ops;	/* 0: off */
	unsigned int next_nr, nr_made;
	struct snap_machine live[SNAP_MAX_MACHINES];
	unsigned int nr_live;
} snap;

static unsigned long page_ops(struct pl_machine *m)
{
	unsigned long ev[NR_PL_VM_EVENTS];

	pl_events_sum(m, ev);
	return ev[PL_EV_PGALLOC_PAGES] + ev[PL_EV_PGFREE_PAGES];
}

/* The first free snapshot number: one past the highest NNNN in the directory. */
static unsigned int first_free(const char *dir)
{
	unsigned int next = 0;
	struct dirent *e;
	DIR *d = opendir(dir);

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		char *end;
		unsigned long n = strtoul(e->d_name, &end, 10);

		if (end != e->d_name && !*end && n + 1 > next && n < 100000000UL)
			next = (unsigned int)n + 1;
	}
	closedir(d);
	return next;
}

int bench_snap_check(const struct bench *b)
{
	const char *dir = param_str(b, "snapshot_dir", NULL);
	bool timed = param_str(b, "snapshot_ms", NULL) || param_str(b, "snapshot_ops", NULL);
	struct stat st;

	if (!dir && !timed)
		return 0;
	if (!dir) {
		fprintf(stderr, "pagelab-bench: %s=%s: needs snapshot_dir=DIR for the snapshots\n",
			param_str(b, "snapshot_ms", NULL) ? "snapshot_ms" : "snapshot_ops",
			param_str(b, "snapshot_ms", NULL) ? param_str(b, "snapshot_ms", NULL)
							    : param_str(b, "snapshot_ops", NULL));
		return 2;
	}
	if (!timed) {
		fprintf(stderr, "pagelab-bench: snapshot_dir=%.60s: needs snapshot_ms=N or "
			"snapshot_ops=K (how often)\n", dir);
		return 2;
	}
	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "pagelab-bench: snapshot_dir=%.60s: cannot create it: %s\n", dir,
			strerror(errno));
		return 2;
	}
	if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK)) {
		fprintf(stderr, "pagelab-bench: snapshot_dir=%.60s: not a writable directory\n", dir);
		return 2;
	}
	return 0;
}

void bench_snap_init(const struct bench *b)
{
	snap.b = b;
	snap.dir = param_str(b, "snapshot_dir", NULL);
	if (!snap.dir)
		return;
	snap.every_ns = param_ulong(b, "snapshot_ms", 0) * 1000000ULL;
	snap.every_ops = param_ulong(b, "snapshot_ops", 0);
	snap.next_nr = first_free(snap.dir);
}

static int write_report(const char *dir, const char *name, struct pl_machine *m,
			long (*show)(struct pl_machine *, char *, size_t))
{
	char path[4200];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = pl_fopen_output(path, false);
	if (!f)
		return -errno;
	n = pl_show_to_file(m, show, f);
	if (fclose(f) && n >= 0)
		n = -EIO;
	return n < 0 ? (int)n : 0;
}

static void take(struct snap_machine *s, const char *why)
{
	static const struct {
		const char *name;
		long (*show)(struct pl_machine *, char *, size_t);
	} reports[] = {
		{ "buddyinfo", pl_show_buddyinfo }, { "pagetypeinfo", pl_show_pagetypeinfo },
		{ "vmstat", pl_show_vmstat }, { "zoneinfo", pl_show_zoneinfo },
	};
	struct pl_lock_saved saved[MAX_NR_ZONES];
	struct pl_vt_cpu *vt = pl_vt_cur;
	char dir[4120], index[4120];
	int err = 0;
	FILE *f;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		pl_lock_stat_save(&s->m->node_zones[z].lock, &saved[z]);
	pl_vt_cur = NULL;
	snprintf(dir, sizeof(dir), "%s/%04u", snap.dir, snap.next_nr);
	if (mkdir(dir, 0777) && errno != EEXIST)
		err = -errno;
	for (size_t i = 0; !err && i < ARRAY_SIZE(reports); i++)
		err = write_report(dir, reports[i].name, s->m, reports[i].show);
	pl_vt_cur = vt;
	for (int z = 0; z < MAX_NR_ZONES; z++)
		pl_lock_stat_put_back(&s->m->node_zones[z].lock, &saved[z]);
	snprintf(index, sizeof(index), "%s/index", snap.dir);
	f = err ? NULL : pl_fopen_output(index, true);
	if (!f || fprintf(f, "%04u %s %s %u %.3f %lu %s\n", snap.next_nr, snap.b->suite,
			  s->design, s->idx, (double)(pl_now_ns() - s->t0) / 1e6, page_ops(s->m),
			  why) < 0 || fclose(f)) {
		/* the run's results stay good; the snapshots stop */
		fprintf(stderr, "pagelab-bench: snapshot_dir=%.60s: cannot write snapshot %04u: %s\n",
			snap.dir, snap.next_nr, strerror(err ? -err : errno));
		snap.dir = NULL;
		return;
	}
	snap.next_nr++;
}

/* Past a multiple of the period: the next multiple after @now. */
static bool due(uint64_t now, uint64_t *next, uint64_t every)
{
	if (!every || now < *next)
		return false;
	*next += (now - *next) / every * every + every;
	return true;
}

void bench_snap_machine(struct pl_machine *m, const char *design)
{
	struct snap_machine *s;

	if (!snap.dir || !m)
		return;
	if (snap.nr_live == SNAP_MAX_MACHINES) {
		fprintf(stderr, "pagelab-bench: snapshots: more than %d machines alive; "
			"machine %u has none\n", SNAP_MAX_MACHINES, snap.nr_made++);
		return;
	}
	s = &snap.live[snap.nr_live++];
	*s = (struct snap_machine){ .m = m, .design = design, .idx = snap.nr_made++,
				    .t0 = pl_now_ns() };
	s->next_ns = s->t0 + snap.every_ns;
	s->next_ops = page_ops(m) + snap.every_ops;
	take(s, "start");
}

void bench_snap_poll(void)
{
	for (unsigned int i = 0; snap.dir && i < snap.nr_live; i++) {
		struct snap_machine *s = &snap.live[i];
		uint64_t next_ops = s->next_ops;
		bool by_time = due(pl_now_ns(), &s->next_ns, snap.every_ns);
		bool by_ops = due(page_ops(s->m), &next_ops, snap.every_ops);

		s->next_ops = (unsigned long)next_ops;
		if (by_time || by_ops)
			take(s, by_time ? "time" : "ops");
	}
}

void bench_machine_destroy(struct pl_machine *m)
{
	for (unsigned int i = 0; i < snap.nr_live; i++) {
		if (snap.live[i].m != m)
			continue;
		if (snap.dir)
			take(&snap.live[i], "end");
		snap.live[i] = snap.live[--snap.nr_live];
		break;
	}
	pl_machine_destroy(m);
}
