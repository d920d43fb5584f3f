// SPDX-License-Identifier: MIT
/*
 * file.c - the one way pagelab opens a file a user named: inputs must be
 * regular files (or directories where asked), outputs regular files or new
 * paths. A FIFO, socket or device is refused before a byte is read or
 * written: the open is O_NONBLOCK (a FIFO without a writer or reader would
 * block it) and the kind comes from fstat() of what was opened, so nothing
 * can be swapped in between the check and the use.
 *
 * Invariant: a descriptor returned refers to a regular file (or, for an
 * input with dir_ok, a directory), blocking again and close-on-exec.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pagelab/base.h"

/* Keep @fd if fstat() says it is of an allowed kind; else close it, set errno. */
static int check_kind(int fd, bool dir_ok)
{
	struct stat sb;
	int flags, err = 0;

	if (fstat(fd, &sb))
		err = errno;
	else if (S_ISDIR(sb.st_mode) && !dir_ok)
		err = EISDIR;
	else if (!S_ISREG(sb.st_mode) && !S_ISDIR(sb.st_mode))
		err = EINVAL;
	else if ((flags = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK))
		err = errno;
	if (err) {
		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

int pl_open_input(const char *path, bool dir_ok)
{
	int fd;

	if (!path || !*path) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		if (errno == ENXIO)	/* a socket, or a device without its driver */
			errno = EINVAL;
		return -1;
	}
	return check_kind(fd, dir_ok);
}

char *pl_read_input(const char *path, size_t max, size_t *len)
{
	size_t n = 0, cap = 4096;
	char *buf;
	int fd = pl_open_input(path, false), err = 0;

	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t got;

		if (n == cap) {
			char *nb;

			if (cap > max) {
				err = EFBIG;
				break;
			}
			cap *= 2;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = ENOMEM;
				break;
			}
			buf = nb;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			err = EIO;
			break;
		}
		if (!got)
			break;
		n += (size_t)got;
		if (n > max) {
			err = EFBIG;
			break;
		}
	}
	if (!buf)
		err = ENOMEM;
	close(fd);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

int pl_open_output(const char *path, bool append)
{
	struct stat sb;
	int fd;

	if (!path || !*path) {
		errno = EINVAL;
		return -1;
	}
	/* an existing non-regular file is refused before it is opened at all */
	if (!stat(path, &sb) && !S_ISREG(sb.st_mode)) {
		errno = S_ISDIR(sb.st_mode) ? EISDIR : EINVAL;
		return -1;
	}
	fd = open(path, O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC | O_NOCTTY |
			(append ? O_APPEND : O_TRUNC), 0644);
	if (fd < 0) {
		if (errno == ENXIO)	/* a FIFO without a reader, a socket */
			errno = EINVAL;
		return -1;
	}
	return check_kind(fd, false);
}

/* A stream over @fd, or -1 -> NULL with errno kept. */
static FILE *stream(int fd, const char *mode)
{
	FILE *f;
	int err;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, mode);
	if (!f) {
		err = errno;
		close(fd);
		errno = err;
	}
	return f;
}

FILE *pl_fopen_input(const char *path)
{
	return stream(pl_open_input(path, false), "r");
}

FILE *pl_fopen_output(const char *path, bool append)
{
	return stream(pl_open_output(path, append), append ? "a" : "w");
}

const char *pl_file_strerror(int err)
{
	return err == EINVAL ? "not a regular file (a FIFO, socket or device?)" : strerror(err);
}
