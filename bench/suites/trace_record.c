// SPDX-License-Identifier: MIT
/*
 * trace_record.c - `pagelab-bench trace_record instance=DIR out=FILE
 * events=SYS/EV,...`: drain an ftrace instance's per-CPU ring buffers in
 * binary into a trace-cmd trace.dat (version 6), the recorder behind
 * `pagelab trace record`, which sets the instance up, runs the workload and
 * tears the instance down (python/pagelab/trace_record.py).
 *
 * One thread per CPU moves whole ring-buffer pages from
 * per_cpu/cpuN/trace_pipe_raw to a file with splice(2): no copy through
 * user space and no parsing while the workload runs. It prints "ready" when
 * every CPU is open, and stops when its standard input closes (the caller
 * turns tracing off first); it then reads the partly filled pages left in
 * each buffer and writes the trace.dat: the page and event headers, the
 * format files of the events recorded (decoding needs nothing else), the
 * pid -> comm lines (saved_cmdlines and /proc at start and end), and each
 * CPU's pages, page-aligned.
 *
 * Invariants: the recorder only reads tracefs (it changes no setting); its
 * per-CPU scratch files are removed whatever happens; a failure is one
 * line on stderr and exit status 1, with no trace.dat left behind.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "bench.h"

#define REC_PAGE	4096u
#define REC_SPLICE	(REC_PAGE * 64)
#define REC_MAX_CPUS	1024

static const struct bench_key record_keys[] = {
	{ "instance", BK_TEXT, 0, 0, NULL, "(required)",
	  "the ftrace instance directory whose per_cpu/cpuN/trace_pipe_raw are drained" },
	{ "out", BK_TEXT, 0, 0, NULL, "(required)", "the trace.dat to write" },
	{ "events", BK_TEXT, 0, 0, NULL, "(required)",
	  "SYSTEM/EVENT,... whose format files go into the trace.dat" },
	{ "tracefs", BK_TEXT, 0, 0, NULL, "/sys/kernel/tracing",
	  "where tracefs is mounted (header_page, formats, saved_cmdlines)" },
	{ "scratch", BK_TEXT, 0, 0, NULL, "(out's directory)",
	  "where the per-CPU pages wait until the trace.dat is written (a tmpfs keeps disk "
	  "writeback away from the workload)" },
	BENCH_KEY_END
};

struct rec_cpu {
	int cpu, raw, file, pipe[2];
	unsigned long long bytes;
	int err;
	pthread_t thread;
	char path[4200];
};

static atomic_bool rec_stop;

/* Copy all of a pipe's @n bytes to @fd. Return: 0 or -errno. */
static int drain_pipe(int pipe_r, int fd, ssize_t n)
{
	while (n > 0) {
		ssize_t m = splice(pipe_r, NULL, fd, NULL, (size_t)n, SPLICE_F_MOVE);

		if (m < 0 && errno == EINTR)
			continue;
		if (m <= 0)
			return m < 0 ? -errno : -EIO;
		n -= m;
	}
	return 0;
}

static void *cpu_thread(void *arg)
{
	struct rec_cpu *c = arg;
	const struct timespec nap = { 0, 50 * 1000 * 1000 };

	for (;;) {
		ssize_t n = splice(c->raw, NULL, c->pipe[1], NULL, REC_SPLICE,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

		if (n > 0) {
			c->err = drain_pipe(c->pipe[0], c->file, n);
			if (c->err)
				return NULL;
			c->bytes += (unsigned long long)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR) {
			c->err = -errno;
			return NULL;
		}
		/* no full page yet: the buffer absorbs the wait (50 ms of events) */
		if (atomic_load(&rec_stop))
			return NULL;
		nanosleep(&nap, NULL);
	}
}

/* The partly filled pages left after tracing stopped: read(2) hands them out. */
static int flush_cpu(struct rec_cpu *c)
{
	static unsigned char page[REC_PAGE];

	for (int i = 0; i < 1 << 20; i++) {
		ssize_t n = read(c->raw, page, sizeof(page));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 && errno != EAGAIN ? -errno : 0;
		memset(page + n, 0, sizeof(page) - (size_t)n);
		if (write(c->file, page, sizeof(page)) != (ssize_t)sizeof(page))
			return -EIO;
		c->bytes += sizeof(page);
	}
	return 0;
}

/* ---- the trace.dat ---------------------------------------------------------- */

struct out {
	FILE *f;
	bool bad;
};

static void put(struct out *o, const void *p, size_t n)
{
	if (!o->bad && fwrite(p, 1, n, o->f) != n)
		o->bad = true;
}

static void put_u(struct out *o, uint64_t v, size_t size)
{
	put(o, &v, size);	/* little-endian: the host's, as the header says */
}

/* The whole of a (proc or tracefs) file; NULL if unreadable. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 65536, n = 0;
	char *b;

	if (fd < 0)
		return NULL;
	b = malloc(cap);
	while (b) {
		ssize_t got;

		if (n == cap) {
			char *nb = realloc(b, cap * 2);

			if (!nb) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
		got = read(fd, b + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += (size_t)got;
	}
	close(fd);
	*len = n;
	return b;
}

/* "pid comm\n" of every live process, appended to @buf. */
static void proc_comms(char **buf, size_t *len, size_t *cap)
{
	DIR *d = opendir("/proc");
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300], comm[300];
		size_t n = 0;
		char *c;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/comm", e->d_name);
		c = slurp(path, &n);
		if (!c)
			continue;
		while (n && (c[n - 1] == '\n' || c[n - 1] == '\0'))
			n--;
		snprintf(comm, sizeof(comm), "%s %.*s\n", e->d_name, (int)(n < 15 ? n : 15), c);
		free(c);
		n = strlen(comm);
		if (*len + n > *cap) {
			char *nb = realloc(*buf, (*cap + n) * 2);

			if (!nb)
				break;
			*buf = nb;
			*cap = (*cap + n) * 2;
		}
		memcpy(*buf + *len, comm, n);
		*len += n;
	}
	closedir(d);
}

/* events/SYSTEM/EVENT/format of each event, grouped by system. */
static int put_formats(struct out *o, const char *tracefs, char **ev, size_t nr)
{
	size_t nsys = 0;

	for (size_t i = 0; i < nr; i++) {
		bool first = true;

		for (size_t j = 0; j < i; j++)
			if (!strncmp(ev[i], ev[j], strcspn(ev[i], "/") + 1))
				first = false;
		nsys += first;
	}
	put_u(o, nsys, 4);
	for (size_t i = 0; i < nr; i++) {
		size_t sl = strcspn(ev[i], "/"), count = 0;
		bool first = true;

		for (size_t j = 0; j < i; j++)
			if (!strncmp(ev[i], ev[j], sl + 1))
				first = false;
		if (!first)
			continue;
		for (size_t j = i; j < nr; j++)
			count += !strncmp(ev[i], ev[j], sl + 1);
		put(o, ev[i], sl);
		put(o, "", 1);
		put_u(o, count, 4);
		for (size_t j = i; j < nr; j++) {
			char path[4400], *text;
			size_t n;

			if (strncmp(ev[i], ev[j], sl + 1))
				continue;
			snprintf(path, sizeof(path), "%s/events/%s/format", tracefs, ev[j]);
			text = slurp(path, &n);
			if (!text) {
				fprintf(stderr, "pagelab-bench: trace_record: cannot read %s\n", path);
				return -1;
			}
			put_u(o, n, 8);
			put(o, text, n);
			free(text);
		}
	}
	return 0;
}

static int put_text_file(struct out *o, const char *tracefs, const char *name, const char *tag)
{
	char path[4200], *text;
	size_t n;

	snprintf(path, sizeof(path), "%s/events/%s", tracefs, name);
	text = slurp(path, &n);
	if (!text) {
		fprintf(stderr, "pagelab-bench: trace_record: cannot read %s\n", path);
		return -1;
	}
	put(o, tag, strlen(tag) + 1);
	put_u(o, n, 8);
	put(o, text, n);
	free(text);
	return 0;
}

/* copy_file_range() where it cannot cross filesystems (scratch on tmpfs). */
static ssize_t copy_plain(int in, loff_t *off, int out, unsigned long long n)
{
	static unsigned char buf[1 << 20];
	ssize_t got = pread(in, buf, n < sizeof(buf) ? (size_t)n : sizeof(buf), *off);

	if (got <= 0 || write(out, buf, (size_t)got) != got)
		return -1;
	*off += got;
	return got;
}

static int write_dat(const char *out_path, const char *tracefs, char **ev, size_t nr_ev,
		     struct rec_cpu *cpus, int nr_cpus, char *comms, size_t comms_len)
{
	struct out o = { pl_fopen_output(out_path, false), false };
	char path[4200], *saved;
	size_t n;
	long off;
	uint64_t data_off;

	if (!o.f) {
		fprintf(stderr, "pagelab-bench: trace_record: cannot write %s: %s\n", out_path,
			pl_file_strerror(errno));
		return -1;
	}
	put(&o, "\x17\x08\x44tracing6", 11);
	put(&o, "", 1);
	put_u(&o, 0, 1);			/* little-endian */
	put_u(&o, sizeof(long), 1);
	put_u(&o, REC_PAGE, 4);
	if (put_text_file(&o, tracefs, "header_page", "header_page") ||
	    put_text_file(&o, tracefs, "header_event", "header_event"))
		goto fail;
	put_u(&o, 0, 4);			/* no ftrace formats */
	if (put_formats(&o, tracefs, ev, nr_ev))
		goto fail;
	put_u(&o, 0, 4);			/* no kallsyms: pagelab decodes no addresses */
	put_u(&o, 0, 4);			/* no trace_printk formats */
	snprintf(path, sizeof(path), "%s/saved_cmdlines", tracefs);
	saved = slurp(path, &n);
	put_u(&o, comms_len + (saved ? n : 0), 8);
	put(&o, comms, comms_len);		/* /proc first: the ring buffer's names win */
	if (saved)
		put(&o, saved, n);
	free(saved);
	put_u(&o, (uint64_t)nr_cpus, 4);
	put(&o, "options  ", 10);
	put_u(&o, 8, 2);			/* CPUCOUNT */
	put_u(&o, 4, 4);
	put_u(&o, (uint64_t)nr_cpus, 4);
	put_u(&o, 0, 2);
	put(&o, "flyrecord", 10);
	off = ftell(o.f) + (long)nr_cpus * 16;
	data_off = ((uint64_t)off + REC_PAGE - 1) / REC_PAGE * REC_PAGE;
	for (int i = 0; i < nr_cpus; i++) {
		put_u(&o, data_off, 8);
		put_u(&o, cpus[i].bytes, 8);
		data_off += cpus[i].bytes;
	}
	for (long pad = ((off + REC_PAGE - 1) / REC_PAGE * REC_PAGE) - off; pad > 0; pad--)
		put(&o, "", 1);
	fflush(o.f);
	for (int i = 0; i < nr_cpus && !o.bad; i++) {
		loff_t in = 0;
		unsigned long long left = cpus[i].bytes;

		while (left) {
			ssize_t m = copy_file_range(cpus[i].file, &in, fileno(o.f), NULL, left, 0);

			if (m < 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				      errno == EOPNOTSUPP))
				m = copy_plain(cpus[i].file, &in, fileno(o.f), left);	/* across filesystems */
			if (m <= 0) {
				o.bad = true;
				break;
			}
			left -= (unsigned long long)m;
		}
		fseek(o.f, 0, SEEK_END);
	}
	if (o.bad || fclose(o.f)) {
		o.f = NULL;
		fprintf(stderr, "pagelab-bench: trace_record: writing %s failed\n", out_path);
		goto fail_closed;
	}
	return 0;
fail:
	fclose(o.f);
fail_closed:
	unlink(out_path);
	return -1;
}

/* ---- the run ------------------------------------------------------------------ */

/* @path is a directory (@what names it in the refusal); 0, or -1 after one line. */
static int want_dir(const char *what, const char *path)
{
	struct stat sb;

	if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "pagelab-bench: trace_record: %s=%s: %s\n", what, path,
			errno == ENOENT ? "no such directory" : "not a directory");
		return -1;
	}
	return 0;
}

/*
 * Every argument checked before a buffer is opened or a file made: out= a new
 * path or a regular file in a writable directory, scratch= and tracefs=
 * directories, each event's format file present, instance= an ftrace instance
 * (its per_cpu/ directory). Return 0, or -1 after one line.
 */
static int check_args(const char *inst, const char *out, const char *tracefs,
		      const char *scratch, char *const *ev, size_t nr_ev)
{
	char path[4200], *slash, *dir;
	struct stat sb;

	if (!stat(out, &sb) && !S_ISREG(sb.st_mode)) {
		fprintf(stderr, "pagelab-bench: trace_record: cannot write %s: %s\n", out,
			pl_file_strerror(EINVAL));
		return -1;
	}
	dir = strdup(out);
	if (!dir)
		return -1;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	if (access(slash ? (*dir ? dir : "/") : ".", W_OK | X_OK)) {
		fprintf(stderr, "pagelab-bench: trace_record: cannot write %s: %s\n", out,
			strerror(errno));
		free(dir);
		return -1;
	}
	free(dir);
	if ((scratch && want_dir("scratch", scratch)) || want_dir("tracefs", tracefs))
		return -1;
	if (!nr_ev) {
		fprintf(stderr, "pagelab-bench: trace_record: events= names no event\n");
		return -1;
	}
	for (size_t i = 0; i < nr_ev; i++) {
		snprintf(path, sizeof(path), "%s/events/%s/format", tracefs, ev[i]);
		if (!strchr(ev[i], '/') || strstr(ev[i], "..") || access(path, R_OK)) {
			fprintf(stderr, "pagelab-bench: trace_record: events=: no event '%.200s' in %s "
				"(want SYSTEM/EVENT)\n", ev[i], tracefs);
			return -1;
		}
	}
	snprintf(path, sizeof(path), "%s/per_cpu", inst);
	if (want_dir("instance", inst))
		return -1;
	if (stat(path, &sb) || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "pagelab-bench: trace_record: instance=%s: not an ftrace instance "
			"(no per_cpu/)\n", inst);
		return -1;
	}
	return 0;
}

static int run_record(struct bench *b)
{
	const char *inst = param_str(b, "instance", NULL), *out = param_str(b, "out", NULL);
	const char *evs = param_str(b, "events", NULL);
	const char *tracefs = param_str(b, "tracefs", "/sys/kernel/tracing");
	const char *scratch = param_str(b, "scratch", NULL);
	struct rec_cpu *cpus = calloc(REC_MAX_CPUS, sizeof(*cpus));
	char *ev[256], *list, *comms = NULL, line[64];
	size_t nr_ev = 0, comms_len = 0, comms_cap = 0;
	int nr_cpus = 0, ret = 1;
	unsigned long long total = 0;

	if (!inst || !out || !evs || !cpus) {
		fprintf(stderr, "pagelab-bench: trace_record: instance=, out= and events= are "
			"required\n");
		free(cpus);
		return 2;
	}
	list = strdup(evs);
	for (char *t = strtok(list, ","); t && nr_ev < ARRAY_SIZE(ev); t = strtok(NULL, ","))
		ev[nr_ev++] = t;
	if (!list || check_args(inst, out, tracefs, scratch, ev, nr_ev)) {
		free(list);
		free(cpus);
		return 2;
	}
	for (int c = 0; c < REC_MAX_CPUS; c++) {
		struct rec_cpu *r = &cpus[nr_cpus];
		char path[4200];

		snprintf(path, sizeof(path), "%s/per_cpu/cpu%d/trace_pipe_raw", inst, c);
		r->raw = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (r->raw < 0) {
			if (errno == ENOENT)
				break;
			fprintf(stderr, "pagelab-bench: trace_record: cannot open %s: %s\n", path,
				strerror(errno));
			goto out;
		}
		r->cpu = c;
		if (scratch)	/* tmpfs: no disk writeback while the workload runs */
			snprintf(r->path, sizeof(r->path), "%s/pagelab-record-%d.cpu%d", scratch,
				 getpid(), c);
		else
			snprintf(r->path, sizeof(r->path), "%s.cpu%d", out, c);
		/* a new file of the recorder's own: never a link or node left there */
		unlink(r->path);
		r->file = open(r->path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (r->file < 0 || pipe2(r->pipe, O_CLOEXEC)) {
			fprintf(stderr, "pagelab-bench: trace_record: cannot create %s: %s\n", r->path,
				strerror(errno));
			nr_cpus++;
			goto out;
		}
		unlink(r->path);	/* scratch: gone whatever happens */
		nr_cpus++;
	}
	if (!nr_cpus) {
		fprintf(stderr, "pagelab-bench: trace_record: %s has no per_cpu buffers\n", inst);
		goto out;
	}
	proc_comms(&comms, &comms_len, &comms_cap);
	for (int i = 0; i < nr_cpus; i++)
		if (pthread_create(&cpus[i].thread, NULL, cpu_thread, &cpus[i])) {
			atomic_store(&rec_stop, true);
			for (int j = 0; j < i; j++)
				pthread_join(cpus[j].thread, NULL);
			fprintf(stderr, "pagelab-bench: trace_record: cannot start a thread\n");
			goto out;
		}
	printf("ready %d\n", getpid());
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin))	/* until the caller closes it */
		;
	atomic_store(&rec_stop, true);
	for (int i = 0; i < nr_cpus; i++)
		pthread_join(cpus[i].thread, NULL);
	for (int i = 0; i < nr_cpus; i++) {
		if (!cpus[i].err)
			cpus[i].err = flush_cpu(&cpus[i]);
		if (cpus[i].err) {
			fprintf(stderr, "pagelab-bench: trace_record: CPU %d: %s\n", cpus[i].cpu,
				strerror(-cpus[i].err));
			goto out;
		}
		total += cpus[i].bytes;
	}
	proc_comms(&comms, &comms_len, &comms_cap);
	if (write_dat(out, tracefs, ev, nr_ev, cpus, nr_cpus, comms, comms_len))
		goto out;
	printf("{\"suite\": \"trace_record\", \"cpus\": %d, \"pages\": %llu}\n", nr_cpus,
	       total / REC_PAGE);
	ret = 0;
out:
	for (int i = 0; i < nr_cpus; i++) {
		if (cpus[i].raw >= 0)
			close(cpus[i].raw);
		if (cpus[i].file > 0)
			close(cpus[i].file);
		if (cpus[i].pipe[0] > 0) {
			close(cpus[i].pipe[0]);
			close(cpus[i].pipe[1]);
		}
	}
	free(comms);
	free(list);
	free(cpus);
	return ret;
}

const struct bench_suite suite_trace_record = {
	.name = "trace_record",
	.summary = "drain an ftrace instance's per-CPU ring buffers into a trace.dat (pagelab "
		   "trace record runs it)",
	.keys = record_keys,
	.no_machine = true,
	.run = run_record,
};
