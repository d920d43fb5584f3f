// SPDX-License-Identifier: MIT
/*
 * xfer.c - pagelab-xfer: what a cache line transfer and a lock handoff cost
 * between two CPUs of this host, for the virtual-time model's host cost set
 * (scripts/vtime-calibrate.py --host reads its JSON).
 *
 * Two threads, pinned to the first two CPUs the process may use, measure:
 *  - pingpong: a counter on its own line, each thread waiting for the other
 *    one's value and writing the next: every write moves the line to the
 *    other CPU and back, so the round trip / 2 is one transfer (the model's
 *    xfer_ps between two cores);
 *  - lock: pl_spinlock (pagelab's own, base.h) taken and released around an
 *    increment of a counter on another line, first by one thread alone
 *    (uncontended: lock + increment + unlock), then by both taking turns
 *    (a turn flag written under the lock, waited for outside it), so that
 *    every acquisition follows the other thread's release: a handover
 *    costs the alternating period minus the uncontended one. The model
 *    charges a contended acquisition handoff_ps plus the transfers of the
 *    lock word and of the data line, so handoff = that - 2 transfers (at
 *    least 0), from the lower quartiles of the trials (below).
 *  - miss: a pointer chase in random order over 16 MiB of lines (more than
 *    a core's L2, as the rand workload's struct pages), the lines written
 *    first by the reading CPU itself (a miss on one's own lines) or by the
 *    other CPU (a remote miss: the line is dirty in the other CPU's outer
 *    cache, or in memory). The model's miss_ps is fitted to timed runs;
 *    remote_miss_ps is miss_ps times the measured ratio of the two.
 * Each figure is the median of the trials (wall clock, CLOCK_MONOTONIC, from
 * the first thread's start to the last one's end), with the lower quartile
 * beside it, which the model takes (see main()). Many short trials
 * (default 101 x 2,000 rounds, 0.1-1 ms each): on a shared host a trial
 * during which another task took one of the two CPUs is far off, and most
 * trials fit between such interruptions.
 *
 * Usage: pagelab-xfer [rounds=N] [trials=N] [--json]. Bad input: one line
 * on stderr, exit 2; fewer than two usable CPUs: exit 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/base.h"

#define MAX_TRIALS 101

/* Shared between the two threads; each field on its own line. */
static struct {
	unsigned long flag __cacheline_aligned;		/* pingpong: whose turn */
	struct pl_spinlock lock __cacheline_aligned;
	unsigned long data __cacheline_aligned;		/* the lock's protected data */
	int last __cacheline_aligned;			/* last holder, under the lock */
	unsigned long handovers;			/* under the lock */
	pthread_barrier_t start;
} sh;

static int cpus[2];
static unsigned long rounds = 2000;
/* Each thread's first and last instant: a loaded host may keep the main thread off a CPU. */
static uint64_t t_start[2], t_end[2];

static inline void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* Pingpong: thread @me (0 or 1) waits for flag == 2i + me, writes 2i + me + 1. */
static void *pingpong(void *arg)
{
	unsigned long me = (unsigned long)arg;

	pin(cpus[me]);
	pthread_barrier_wait(&sh.start);
	t_start[me] = pl_now_ns();
	for (unsigned long i = 0; i < rounds; i++) {
		unsigned long want = 2 * i + me;

		while (__atomic_load_n(&sh.flag, __ATOMIC_ACQUIRE) != want)
			relax();
		__atomic_store_n(&sh.flag, want + 1, __ATOMIC_RELEASE);
	}
	t_end[me] = pl_now_ns();
	return NULL;
}

/* One thread alone: lock, increment, unlock (@arg 0). */
static void *locker(void *arg)
{
	int me = (int)(unsigned long)arg;

	pin(cpus[me]);
	pthread_barrier_wait(&sh.start);
	t_start[me] = pl_now_ns();
	for (unsigned long i = 0; i < rounds; i++) {
		spin_lock(&sh.lock);
		sh.data++;
		spin_unlock(&sh.lock);
	}
	t_end[me] = pl_now_ns();
	return NULL;
}

/*
 * Two threads taking turns: each takes the lock until it finds its turn
 * (sh.last, under the lock), increments and passes the turn. Every
 * acquisition that finds its turn follows the other thread's release: a
 * handover, 2 x rounds of them.
 */
static void *alternator(void *arg)
{
	int me = (int)(unsigned long)arg;

	pin(cpus[me]);
	pthread_barrier_wait(&sh.start);
	t_start[me] = pl_now_ns();
	for (unsigned long i = 0; i < rounds; i++) {
		for (;;) {
			/* wait for the turn outside the lock, as a waiter spins on a load */
			while (__atomic_load_n(&sh.last, __ATOMIC_RELAXED) != me)
				relax();
			spin_lock(&sh.lock);
			if (sh.last == me)
				break;
			spin_unlock(&sh.lock);
		}
		sh.data++;
		__atomic_store_n(&sh.last, !me, __ATOMIC_RELAXED);
		sh.handovers++;
		spin_unlock(&sh.lock);
	}
	t_end[me] = pl_now_ns();
	return NULL;
}

#define CHASE_LINES	(16UL << 20 >> 6)
#define LINE_WORDS	(64 / sizeof(unsigned long))

static unsigned long *chase;	/* line i's first word: the next line of the chase */
static unsigned long *chase_next;

struct chase_job {
	int cpu;
	bool write;
	double ns;	/* reader: ns per line */
};

/* On @job->cpu: write every line's next index, or chase them all. */
static void *chase_run(void *arg)
{
	struct chase_job *job = arg;
	unsigned long idx = 0;
	uint64_t t0;

	pin(job->cpu);
	if (job->write) {
		for (unsigned long i = 0; i < CHASE_LINES; i++)
			__atomic_store_n(&chase[i * LINE_WORDS], chase_next[i], __ATOMIC_RELAXED);
		return NULL;
	}
	t0 = pl_now_ns();
	for (unsigned long i = 0; i < CHASE_LINES; i++)
		idx = __atomic_load_n(&chase[idx * LINE_WORDS], __ATOMIC_RELAXED);
	job->ns = (double)(pl_now_ns() - t0) / (double)CHASE_LINES;
	if (idx)	/* a cycle over every line comes back to 0 */
		fprintf(stderr, "pagelab-xfer: the chase is not one cycle\n");
	return NULL;
}

static void on_cpu(struct chase_job *job)
{
	pthread_t t;

	if (pthread_create(&t, NULL, chase_run, job)) {
		fprintf(stderr, "pagelab-xfer: cannot create a thread\n");
		exit(1);
	}
	pthread_join(t, NULL);
}

/* One random cycle through all lines (Sattolo's shuffle, a fixed seed). */
static void chase_init(void)
{
	unsigned long *perm = malloc(sizeof(*perm) * CHASE_LINES);
	struct pl_rng rng;

	chase = aligned_alloc(64, CHASE_LINES * 64);
	chase_next = malloc(sizeof(*chase_next) * CHASE_LINES);
	if (!perm || !chase || !chase_next) {
		fprintf(stderr, "pagelab-xfer: out of memory\n");
		exit(1);
	}
	for (unsigned long i = 0; i < CHASE_LINES; i++)
		perm[i] = i;
	pl_rng_seed(&rng, 1);
	for (unsigned long i = CHASE_LINES - 1; i > 0; i--) {
		unsigned long j = pl_rng_below(&rng, i), tmp = perm[i];

		perm[i] = perm[j];
		perm[j] = tmp;
	}
	for (unsigned long i = 0; i < CHASE_LINES; i++)
		chase_next[perm[i]] = perm[(i + 1) % CHASE_LINES];
	free(perm);
}

/* Write the lines on @writer, chase them on @reader: ns per line. */
static double chase_trial(int writer, int reader)
{
	struct chase_job w = { .cpu = writer, .write = true }, r = { .cpu = reader };

	on_cpu(&w);
	on_cpu(&r);
	return r.ns;
}

/* Run @fn on @n threads (1 or 2) at once; ns from the first start to the last end. */
static double run_threads(void *(*fn)(void *), int n)
{
	pthread_t t[2];
	uint64_t t0 = UINT64_MAX, t1 = 0;

	pthread_barrier_init(&sh.start, NULL, (unsigned int)n + 1);
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, fn, (void *)(unsigned long)i)) {
			fprintf(stderr, "pagelab-xfer: cannot create a thread\n");
			exit(1);
		}
	pthread_barrier_wait(&sh.start);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&sh.start);
	for (int i = 0; i < n; i++) {
		t0 = t_start[i] < t0 ? t_start[i] : t0;
		t1 = t_end[i] > t1 ? t_end[i] : t1;
	}
	return (double)(t1 - t0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The lower quartile (the value at rank n / 4 of the sorted trials). */
static double quartile1(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 4];
}

/* key=value with value a whole number in [min, max]; -1 if malformed. */
static int parse_arg(const char *arg, const char *key, unsigned long min, unsigned long max,
		     unsigned long *out)
{
	size_t kl = strlen(key);
	char *end;

	if (strncmp(arg, key, kl) || arg[kl] != '=')
		return 0;
	errno = 0;
	if (arg[kl + 1] < '0' || arg[kl + 1] > '9')
		return -1;
	*out = strtoul(arg + kl + 1, &end, 10);
	if (errno || *end || *out < min || *out > max)
		return -1;
	return 1;
}

int main(int argc, char **argv)
{
	unsigned long trials = 101;
	double pp[MAX_TRIALS], unc[MAX_TRIALS], con[MAX_TRIALS], hand[MAX_TRIALS];
	double own[MAX_TRIALS], other[MAX_TRIALS], miss_own, miss_other;
	double pp_q1, xfer, uncont, per_handover, hand_q1, handoff, handover_share = 0;
	bool json = false;
	cpu_set_t set;
	int n = 0;

	for (int i = 1; i < argc; i++) {
		int r;

		if (!strcmp(argv[i], "--json")) {
			json = true;
			continue;
		}
		r = parse_arg(argv[i], "rounds", 1000, 100000000UL, &rounds);
		if (!r)
			r = parse_arg(argv[i], "trials", 1, MAX_TRIALS, &trials);
		if (r <= 0) {
			fprintf(stderr, "pagelab-xfer: bad argument '%s' (rounds=1000..100000000, "
				"trials=1..%d, --json)\n", argv[i], MAX_TRIALS);
			return 2;
		}
	}
	if (sched_getaffinity(0, sizeof(set), &set)) {
		fprintf(stderr, "pagelab-xfer: cannot read the CPU affinity\n");
		return 1;
	}
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpus[n++] = c;
	if (n < 2) {
		fprintf(stderr, "pagelab-xfer: needs two usable CPUs\n");
		return 1;
	}
	pl_spin_init(&sh.lock, false);
	for (unsigned long t = 0; t < trials; t++) {
		sh.flag = 0;
		pp[t] = run_threads(pingpong, 2) / (2.0 * (double)rounds);
		unc[t] = run_threads(locker, 1) / (double)rounds;
		sh.handovers = 0;
		sh.last = 0;
		con[t] = run_threads(alternator, 2) / (2.0 * (double)rounds);
		handover_share += (double)sh.handovers / (2.0 * (double)rounds) / (double)trials;
		hand[t] = con[t] - unc[t];	/* each acquisition a handover */
	}
	chase_init();
	for (unsigned long t = 0; t < trials && t < 7; t++) {	/* ~25 ms each */
		own[t] = chase_trial(cpus[0], cpus[0]);
		other[t] = chase_trial(cpus[1], cpus[0]);
	}
	miss_own = median(own, trials < 7 ? (int)trials : 7);
	miss_other = median(other, trials < 7 ? (int)trials : 7);
	free(chase);
	free(chase_next);
	/*
	 * The model's figures are the lower quartiles: a trial during which
	 * another task held one of the two CPUs only adds (at load 6 on this
	 * 2-CPU host the median pingpong was up to 50x the quiet one), and the
	 * hypervisor now and then runs the two vCPUs on one core's two threads
	 * for a while (a 14 ns pingpong against the usual 30-33): the quartile
	 * leaves out both.
	 */
	xfer = median(pp, (int)trials);
	pp_q1 = quartile1(pp, (int)trials);
	uncont = median(unc, (int)trials);
	per_handover = median(hand, (int)trials);
	hand_q1 = quartile1(hand, (int)trials);
	handoff = hand_q1 - 2 * pp_q1 > 0 ? hand_q1 - 2 * pp_q1 : 0;
	if (json) {
		printf("{\"cpus\": [%d, %d], \"rounds\": %lu, \"trials\": %lu, "
		       "\"xfer_ns\": %.2f, \"xfer_q1_ns\": %.2f, \"lock_uncontended_ns\": %.2f, "
		       "\"lock_contended_ns\": %.2f, \"handover_share\": %.3f, "
		       "\"per_handover_ns\": %.2f, \"per_handover_q1_ns\": %.2f, "
		       "\"handoff_ns\": %.2f, \"miss_own_ns\": %.2f, \"miss_other_ns\": %.2f}\n",
		       cpus[0], cpus[1], rounds, trials, xfer, pp_q1, uncont,
		       median(con, (int)trials), handover_share, per_handover, hand_q1, handoff,
		       miss_own, miss_other);
		return 0;
	}
	printf("CPUs %d and %d, %lu rounds, median of %lu trials (lower quartile in parentheses)\n",
	       cpus[0], cpus[1], rounds, trials);
	printf("  line transfer (pingpong / 2)      %8.1f ns  (%.1f)\n", xfer, pp_q1);
	printf("  lock+unlock, one thread           %8.1f ns\n", uncont);
	printf("  lock+unlock, two taking turns     %8.1f ns  (%.0f%% handovers)\n",
	       median(con, (int)trials), 100 * handover_share);
	printf("  per handover, above uncontended   %8.1f ns  (%.1f)\n", per_handover, hand_q1);
	printf("  model handoff (quartiles: handover - 2 transfers) %.1f ns\n", handoff);
	printf("  random miss, lines written here   %8.1f ns\n", miss_own);
	printf("  random miss, lines written there  %8.1f ns  (ratio %.2f)\n", miss_other,
	       miss_other / miss_own);
	return 0;
}
