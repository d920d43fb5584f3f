// SPDX-License-Identifier: MIT
/*
 * parallel.c - bench_parallel(): independent tasks of one run (a replay's
 * designs x tick probes) in up to `jobs` forked processes, each task's
 * result sent back to the parent as a byte string through a pipe.
 *
 * A child inherits everything the parent built before the fork (the
 * decoded event stream, the inferred state), so nothing is parsed twice;
 * it runs one task, writes its result and leaves with _exit() (no atexit
 * handler, no second flush of the parent's stdio buffers). The parent
 * collects the children in the order it started them, so the results do
 * not depend on which finishes first.
 *
 * Invariants: at most @jobs children at once; out[i] is task i's result
 * whatever @jobs is; a child that fails fails the whole call (its own
 * message is its one line on stderr).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "bench.h"

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += w;
		n -= (size_t)w;
	}
	return 0;
}

static int read_all(int fd, void *p, size_t n)
{
	char *c = p;

	while (n) {
		ssize_t r = read(fd, c, n);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0)
			return -1;
		c += r;
		n -= (size_t)r;
	}
	return 0;
}

struct child {
	pid_t pid;
	int fd;
};

/* Read task @i's result from @c and reap it. Return: 0, or the exit status to fail with. */
static int collect(struct child *c, void **out, size_t *out_len)
{
	size_t len = 0;
	void *blob = NULL;
	int status = 0, rc = 0;

	if (read_all(c->fd, &len, sizeof(len)) || !(blob = malloc(len ? len : 1)) ||
	    read_all(c->fd, blob, len)) {
		free(blob);
		blob = NULL;
		rc = 1;
	}
	close(c->fd);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(status) && WEXITSTATUS(status))
		rc = WEXITSTATUS(status);
	else if (!WIFEXITED(status))
		rc = 1;
	if (rc) {
		free(blob);
		return rc;
	}
	*out = blob;
	*out_len = len;
	return 0;
}

/**
 * bench_parallel() - run @fn(@ctx, i, &blob, &len) for each task i < @nr.
 * @jobs: processes at once; 0 or 1 runs every task in this process.
 * @out, @out_len: task i's result (malloc'd; the caller frees it).
 *
 * Return: 0, or the exit status of the first task that failed (every
 * other child is killed and reaped, every result freed).
 */
int bench_parallel(unsigned int nr, unsigned int jobs, bench_task_fn fn, void *ctx, void **out,
		   size_t *out_len)
{
	struct child *kids;
	unsigned int started = 0, done = 0;
	int rc = 0;

	if (jobs <= 1 || nr <= 1) {
		for (unsigned int i = 0; i < nr; i++)
			fn(ctx, i, &out[i], &out_len[i]);
		return 0;
	}
	kids = calloc(nr, sizeof(*kids));
	if (!kids) {
		fprintf(stderr, "pagelab-bench: out of memory\n");
		return 1;
	}
	while (done < nr && !rc) {
		while (started < nr && started - done < jobs) {
			int p[2];
			pid_t pid;

			fflush(NULL);	/* no buffered output is copied into the child */
			if (pipe(p) || (pid = fork()) < 0) {
				fprintf(stderr, "pagelab-bench: cannot start a job: %s\n",
					strerror(errno));
				rc = 1;
				break;
			}
			if (pid == 0) {
				void *blob = NULL;
				size_t len = 0;

				close(p[0]);
				fn(ctx, started, &blob, &len);
				fflush(NULL);
				_exit(write_all(p[1], &len, sizeof(len)) || write_all(p[1], blob, len) ?
				      1 : 0);
			}
			close(p[1]);
			kids[started].pid = pid;
			kids[started].fd = p[0];
			started++;
		}
		if (rc)
			break;
		rc = collect(&kids[done], &out[done], &out_len[done]);
		done++;
	}
	if (rc) {
		for (unsigned int i = done; i < started; i++) {
			kill(kids[i].pid, SIGKILL);
			close(kids[i].fd);
			while (waitpid(kids[i].pid, NULL, 0) < 0 && errno == EINTR)
				;
		}
		for (unsigned int i = 0; i < done; i++) {
			free(out[i]);
			out[i] = NULL;
		}
	}
	free(kids);
	return rc;
}
