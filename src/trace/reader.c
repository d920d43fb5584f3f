// SPDX-License-Identifier: MIT
/*
 * reader.c - the streaming trace reader (pl_trace_open(), pl_trace_next()):
 * a file a user named, opened as every input is (src/base/file.c: a
 * regular file, never a FIFO or device), plain or gzip/zstd/xz compressed
 * (recognised by their magic bytes, decompressed on the fly), cut into
 * lines for parse.c.
 *
 * A trace-cmd trace.dat is recognised by its magic and handed whole to
 * tracedat.c (read into memory, at most half the host's memory: not mapped,
 * so a file truncated while read cannot raise SIGBUS; inside gzip/zstd/xz,
 * decompressed into memory, at most PL_TRACE_DAT_RATIO times its size): its events come through the same
 * pl_trace_next() and the same checks (the one-week gap, the counts).
 *
 * sched_process_fork events are not returned: the reader follows them to
 * mark the events of a recorded command's tasks (pl_trace_set_command_pid()).
 *
 * Invariants: memory is one fixed input buffer and one fixed line buffer
 * (PL_TRACE_BUFSZ each), whatever the trace's length (a trace.dat: the file's
 * bytes, or its decompressed bytes); a line longer than the buffer is a
 * malformed line, skipped to its end. Every line is counted, every skipped
 * one is a counted warning with its line number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>
#include "pagelab/trace.h"
#include "tracedat.h"

#define PL_TRACE_BUFSZ	(1u << 20)

static __thread char open_error[256];

const char *pl_trace_open_error(void)
{
	return open_error;
}

/* The recorded command's tasks: an open-addressing set of pids. */
struct pid_set {
	int *slot;		/* pid + 1; 0 empty */
	size_t mask, nr;
};

static bool pid_set_has(const struct pid_set *s, int pid)
{
	if (!s->slot)
		return false;
	for (size_t h = ((uint32_t)pid * 2654435761u) & s->mask; s->slot[h];
	     h = (h + 1) & s->mask)
		if (s->slot[h] == pid + 1)
			return true;
	return false;
}

static int pid_set_add(struct pid_set *s, int pid)
{
	size_t h;

	if (pid < 0 || pid_set_has(s, pid))
		return 0;
	if (!s->slot || (s->nr + 1) * 2 > s->mask + 1) {
		size_t cap = s->slot ? (s->mask + 1) * 2 : 64;
		struct pid_set n = { calloc(cap, sizeof(int)), cap - 1, 0 };

		if (!n.slot)
			return -ENOMEM;
		for (size_t i = 0; s->slot && i <= s->mask; i++)
			if (s->slot[i])
				pid_set_add(&n, s->slot[i] - 1);
		free(s->slot);
		*s = n;
	}
	for (h = ((uint32_t)pid * 2654435761u) & s->mask; s->slot[h]; h = (h + 1) & s->mask)
		;
	s->slot[h] = pid + 1;
	s->nr++;
	return 0;
}

enum comp { COMP_NONE, COMP_GZIP, COMP_ZSTD, COMP_XZ };

struct pl_trace_reader {
	int fd;				/* -1 for a memory reader */
	const unsigned char *mem;
	size_t mem_len, mem_pos;
	enum comp comp;
	z_stream zs;
	ZSTD_DStream *zd;
	lzma_stream xz;
	unsigned char *in;		/* compressed input window */
	size_t in_len, in_pos;
	bool in_eof;
	bool mid_frame;			/* a gzip member or zstd frame is open */
	char *buf;			/* decompressed text window */
	size_t len, pos;
	bool eof, error;
	struct pl_trace_stats stats;
	struct pl_tracedat *dat;	/* a trace.dat: read in binary */
	unsigned char *dat_buf;		/* its bytes, read or decompressed */
	size_t dat_len;
	struct pid_set command;
	bool follow;			/* pl_trace_set_command_pid() was called */
};

/* ---- input ------------------------------------------------------------------ */

static ssize_t raw_read(struct pl_trace_reader *r, void *dst, size_t n)
{
	if (r->fd < 0) {
		size_t left = r->mem_len - r->mem_pos;

		if (n > left)
			n = left;
		memcpy(dst, r->mem + r->mem_pos, n);
		r->mem_pos += n;
		return (ssize_t)n;
	}
	for (;;) {
		ssize_t got = read(r->fd, dst, n);

		if (got >= 0 || errno != EINTR)
			return got;
	}
}

/* Refill the compressed window when it is consumed. */
static int in_fill(struct pl_trace_reader *r)
{
	ssize_t got;

	if (r->in_pos < r->in_len || r->in_eof)
		return 0;
	got = raw_read(r, r->in, PL_TRACE_BUFSZ);
	if (got < 0)
		return -EIO;
	r->in_len = (size_t)got;
	r->in_pos = 0;
	if (!got)
		r->in_eof = true;
	return 0;
}

/* Decompress into @dst up to @cap bytes. Return: bytes, 0 at the end, <0 error. */
static ssize_t decompress(struct pl_trace_reader *r, char *dst, size_t cap)
{
	int idle = 0;

	for (;;) {
		size_t produced = 0;

		if (in_fill(r))
			return -EIO;
		if (r->in_pos == r->in_len && r->in_eof && r->comp != COMP_XZ)
			return r->mid_frame ? -EIO : 0;	/* a cut stream is an error */
		switch (r->comp) {
		case COMP_NONE:
			produced = min(cap, r->in_len - r->in_pos);
			memcpy(dst, r->in + r->in_pos, produced);
			r->in_pos += produced;
			break;
		case COMP_GZIP: {
			int ret;

			r->zs.next_in = r->in + r->in_pos;
			r->zs.avail_in = (uInt)(r->in_len - r->in_pos);
			r->zs.next_out = (unsigned char *)dst;
			r->zs.avail_out = (uInt)cap;
			ret = inflate(&r->zs, Z_NO_FLUSH);
			produced = cap - r->zs.avail_out;
			r->in_pos = r->in_len - r->zs.avail_in;
			r->mid_frame = ret != Z_STREAM_END;
			if (ret == Z_STREAM_END)	/* another gzip member may follow */
				inflateReset(&r->zs);
			else if (ret != Z_OK && !(ret == Z_BUF_ERROR && r->in_eof && !produced))
				return -EIO;
			break;
		}
		case COMP_ZSTD: {
			ZSTD_inBuffer in = { r->in, r->in_len, r->in_pos };
			ZSTD_outBuffer out = { dst, cap, 0 };
			size_t ret = ZSTD_decompressStream(r->zd, &out, &in);

			if (ZSTD_isError(ret))
				return -EIO;
			r->mid_frame = ret != 0;	/* 0: a frame ended, all flushed */
			r->in_pos = in.pos;
			produced = out.pos;
			break;
		}
		case COMP_XZ: {
			lzma_ret ret;

			r->xz.next_in = r->in + r->in_pos;
			r->xz.avail_in = r->in_len - r->in_pos;
			r->xz.next_out = (uint8_t *)dst;
			r->xz.avail_out = cap;
			ret = lzma_code(&r->xz, r->in_eof ? LZMA_FINISH : LZMA_RUN);
			produced = cap - r->xz.avail_out;
			r->in_pos = r->in_len - r->xz.avail_in;
			if (ret == LZMA_STREAM_END)
				return (ssize_t)produced;
			if (ret != LZMA_OK && ret != LZMA_BUF_ERROR)
				return -EIO;
			/*
			 * The input is all in and the stream has not ended: a
			 * cut file. liblzma says so (LZMA_BUF_ERROR) on the
			 * second call that makes no progress, so ask again.
			 */
			if (!produced && r->in_eof && r->in_pos == r->in_len &&
			    (ret == LZMA_BUF_ERROR || ++idle > 2))
				return -EIO;
			break;
		}
		}
		if (produced)
			return (ssize_t)produced;
	}
}

static bool buf_fill(struct pl_trace_reader *r);

static int dat_open(struct pl_trace_reader *r, const unsigned char *buf, size_t len)
{
	r->dat = pl_tracedat_open(buf, len, open_error, sizeof(open_error));
	if (!r->dat)
		return -1;
	r->stats.format = PL_TRACE_FMT_TRACE_DAT;
	r->stats.dat_version = pl_tracedat_version(r->dat);
	return 0;
}

/* Half the host's memory: the most a trace.dat may take in memory, read or unpacked. */
static size_t dat_host_limit(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);

	return pages > 0 && psz > 0 ? (size_t)pages / 2 * (size_t)psz : (size_t)1 << 30;
}

/*
 * A plain trace.dat: the whole file read into memory (or the caller's memory).
 * Read, not mapped: a file truncated while mapped would raise SIGBUS at the
 * first access past its new end. The read stops at the size fstat() gave
 * (a file still growing is taken as it was) and at end of file (one cut
 * short while read is parsed as the shorter file it became: its cut-off
 * page ends the stream in one line).
 */
static int dat_open_raw(struct pl_trace_reader *r)
{
	size_t size, got = 0;
	struct stat sb;
	unsigned char *b;

	if (r->fd < 0)
		return dat_open(r, r->mem, r->mem_len);
	if (fstat(r->fd, &sb) || sb.st_size <= 0) {
		snprintf(open_error, sizeof(open_error), "cannot stat the trace.dat");
		errno = EIO;
		return -1;
	}
	if ((unsigned long long)sb.st_size > dat_host_limit()) {
		snprintf(open_error, sizeof(open_error), "the trace.dat (%llu bytes) is larger than "
			 "half the host's memory", (unsigned long long)sb.st_size);
		errno = EFBIG;
		return -1;
	}
	size = (size_t)sb.st_size;
	b = malloc(size);
	if (!b) {
		snprintf(open_error, sizeof(open_error), "no memory for the trace.dat (%zu bytes)",
			 size);
		errno = ENOMEM;
		return -1;
	}
	while (got < size) {
		ssize_t n = pread(r->fd, b + got, size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			snprintf(open_error, sizeof(open_error), "cannot read the trace.dat: %s",
				 strerror(errno));
			free(b);
			errno = EIO;
			return -1;
		}
		if (!n)
			break;	/* cut short since fstat(): parse what there is */
		got += (size_t)n;
	}
	r->dat_buf = b;
	r->dat_len = got;
	return dat_open(r, b, got);
}

/*
 * The most a compressed trace.dat may unpack to: PL_TRACE_DAT_RATIO times
 * its compressed length (a real one packs 10-20 to 1), at least 64 MiB, and
 * never past half the host's memory; a file that unpacks further is a
 * decompression bomb, refused. Memory follows the file's real size.
 */
#define PL_TRACE_DAT_RATIO	256u

static size_t dat_unpack_limit(const struct pl_trace_reader *r)
{
	size_t in = r->mem_len, lim, host = dat_host_limit();
	struct stat sb;

	if (r->fd >= 0)
		in = !fstat(r->fd, &sb) && sb.st_size > 0 ? (size_t)sb.st_size : 0;
	lim = in > SIZE_MAX / PL_TRACE_DAT_RATIO ? SIZE_MAX : in * PL_TRACE_DAT_RATIO;
	if (lim < ((size_t)64 << 20))
		lim = (size_t)64 << 20;
	return lim < host ? lim : host;
}

/* A trace.dat inside gzip/zstd/xz: decompressed whole into memory first. */
static int dat_open_decompressed(struct pl_trace_reader *r)
{
	size_t cap = PL_TRACE_BUFSZ * 4, len = r->len, limit = dat_unpack_limit(r);
	unsigned char *b = malloc(cap);

	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(b, r->buf, len);
	for (;;) {
		ssize_t got;

		if (cap - len < PL_TRACE_BUFSZ) {
			unsigned char *n;

			if (cap >= limit) {
				free(b);
				snprintf(open_error, sizeof(open_error),
					 "the compressed trace.dat unpacks past %zu MiB (%u times its "
					 "size, or half this host's memory): refused", limit >> 20,
					 PL_TRACE_DAT_RATIO);
				errno = EINVAL;
				return -1;
			}
			n = realloc(b, cap * 2 < limit + PL_TRACE_BUFSZ ? cap * 2 : limit + PL_TRACE_BUFSZ);
			if (!n) {
				free(b);
				snprintf(open_error, sizeof(open_error),
					 "out of memory decompressing the trace.dat");
				errno = ENOMEM;
				return -1;
			}
			b = n;
			cap = cap * 2 < limit + PL_TRACE_BUFSZ ? cap * 2 : limit + PL_TRACE_BUFSZ;
		}
		got = decompress(r, (char *)b + len, cap - len);
		if (got < 0) {
			free(b);
			snprintf(open_error, sizeof(open_error),
				 "truncated or corrupt: the compressed trace.dat does not decompress");
			errno = EINVAL;
			return -1;
		}
		if (!got)
			break;
		len += (size_t)got;
	}
	r->dat_buf = b;
	r->dat_len = len;
	r->pos = r->len = 0;
	r->eof = true;
	return dat_open(r, b, len);
}

static struct pl_trace_reader *reader_new(int fd, const void *mem, size_t len)
{
	struct pl_trace_reader *r = calloc(1, sizeof(*r));
	ssize_t got;

	if (!r)
		return NULL;
	r->fd = fd;
	r->mem = mem;
	r->mem_len = len;
	r->stats.max_cpu = -1;
	open_error[0] = '\0';
	r->in = malloc(PL_TRACE_BUFSZ);
	r->buf = malloc(PL_TRACE_BUFSZ);
	if (!r->in || !r->buf)
		goto fail;
	got = raw_read(r, r->in, PL_TRACE_BUFSZ);
	if (got < 0)
		goto fail;
	r->in_len = (size_t)got;
	if (got >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
		r->comp = COMP_GZIP;
		if (inflateInit2(&r->zs, 15 + 32) != Z_OK)
			goto fail;
	} else if (got >= 4 && r->in[0] == 0x28 && r->in[1] == 0xb5 && r->in[2] == 0x2f &&
		   r->in[3] == 0xfd) {
		r->comp = COMP_ZSTD;
		r->zd = ZSTD_createDStream();
		if (!r->zd)
			goto fail;
	} else if (got >= 6 && !memcmp(r->in, "\xfd" "7zXZ\0", 6)) {
		lzma_stream init = LZMA_STREAM_INIT;

		r->comp = COMP_XZ;
		r->xz = init;
		if (lzma_stream_decoder(&r->xz, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK)
			goto fail;
	}
	if (!got)
		r->in_eof = true;
	if (got >= 8 && !memcmp(r->in, "PERFILE2", 8)) {
		/* no maintained C library reads perf.data: its own tool does */
		snprintf(open_error, sizeof(open_error), "a perf.data file: pagelab reads its "
			 "text, `perf script -i FILE > FILE.txt`");
		errno = EINVAL;
		goto fail_dat;
	}
	if (r->comp == COMP_NONE && pl_tracedat_magic(r->in, (size_t)got)) {
		if (dat_open_raw(r))
			goto fail_dat;
	} else if (r->comp != COMP_NONE) {
		/* a read error here stays the stream's: pl_trace_next() reports it */
		buf_fill(r);
		if (pl_tracedat_magic(r->buf, r->len) && dat_open_decompressed(r))
			goto fail_dat;
	}
	return r;
fail:
	r->fd = -1;	/* the caller closes it */
	pl_trace_close(r);
	errno = ENOMEM;
	return NULL;
fail_dat: {
		int e = errno;

		if (r->fd >= 0)
			r->fd = -1;	/* the caller closes it */
		pl_trace_close(r);
		errno = e;
		return NULL;
	}
}

struct pl_trace_reader *pl_trace_open(const char *path)
{
	struct pl_trace_reader *r;
	int fd = pl_open_input(path, false);	/* no FIFO, device or directory; NULL, "" */

	if (fd < 0)
		return NULL;
	r = reader_new(fd, NULL, 0);
	if (!r) {
		int e = errno;

		close(fd);
		errno = e;
	}
	return r;
}

struct pl_trace_reader *pl_trace_open_mem(const void *buf, size_t len)
{
	if (!buf && len && pl_arg_refused(__func__, "NULL buffer")) {
		errno = EINVAL;
		return NULL;
	}
	return reader_new(-1, buf, len);
}

void pl_trace_close(struct pl_trace_reader *r)
{
	if (!r)
		return;
	if (r->comp == COMP_GZIP)
		inflateEnd(&r->zs);
	if (r->zd)
		ZSTD_freeDStream(r->zd);
	if (r->comp == COMP_XZ)
		lzma_end(&r->xz);
	if (r->fd >= 0)
		close(r->fd);
	pl_tracedat_close(r->dat);
	free(r->dat_buf);
	free(r->command.slot);
	free(r->in);
	free(r->buf);
	free(r);
}

int pl_trace_set_command_pid(struct pl_trace_reader *r, int pid)
{
	if ((!r || pid <= 0) && pl_arg_refused(__func__, "NULL reader or a pid below 1"))
		return -EINVAL;
	r->follow = true;
	return pid_set_add(&r->command, pid);
}

const struct pl_trace_stats *pl_trace_get_stats(const struct pl_trace_reader *r)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return NULL;
	return &r->stats;
}

/* ---- the line loop -------------------------------------------------------------- */

/* Make room and read more text. Return: false at the end or on error. */
static bool buf_fill(struct pl_trace_reader *r)
{
	ssize_t got;

	if (r->eof || r->error)
		return false;
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->len - r->pos);
		r->len -= r->pos;
		r->pos = 0;
	}
	if (r->len == PL_TRACE_BUFSZ)
		return false;
	got = decompress(r, r->buf + r->len, PL_TRACE_BUFSZ - r->len);
	if (got < 0) {
		r->error = true;
		pl_warn_ratelimited("trace: read or decompression error after line %lu",
				    r->stats.lines);
		return false;
	}
	if (!got) {
		r->eof = true;
		return false;
	}
	r->len += (size_t)got;
	return true;
}

static void warn_line(struct pl_trace_reader *r, const char *what)
{
	/*
	 * every one counted; the first few named on stderr (then rate-limited),
	 * once a line has shown the trace's format: before that the file may be
	 * no trace at all, and its refusal is one line, not one per line read
	 */
	if (r->stats.warn[PL_TW_malformed_line]++ >= 100 ||
	    r->stats.format == PL_TRACE_FMT_UNKNOWN)
		return;
	pl_warn_ratelimited("trace: line %lu: %s", r->stats.lines, what);
}

/*
 * An event more than PL_TRACE_MAX_GAP_S after the one before it: the clock
 * jumped or two traces were joined; skipped, in text and trace.dat alike.
 */
static bool gap_too_long(const struct pl_trace_reader *r, const struct pl_trace_event *ev)
{
	return r->stats.events && ev->ts_ns > r->stats.last_ns &&
	       ev->ts_ns - r->stats.last_ns > PL_TRACE_MAX_GAP_S * 1000000000ull;
}

/* Account an event returned and mark the command's tasks. */
static int returned(struct pl_trace_reader *r, struct pl_trace_event *ev)
{
	ev->command = r->follow && pid_set_has(&r->command, ev->pid);
	if (!r->stats.events)
		r->stats.first_ns = ev->ts_ns;
	r->stats.last_ns = ev->ts_ns;
	r->stats.events++;
	r->stats.by_type[ev->type]++;
	if ((int)ev->cpu > r->stats.max_cpu)
		r->stats.max_cpu = (int)ev->cpu;
	if (r->stats.format == PL_TRACE_FMT_UNKNOWN)
		r->stats.format = PL_TRACE_FMT_FTRACE;
	return 1;
}

/* A fork: its child joins the command's tasks if its parent is one. */
static int follow_fork(struct pl_trace_reader *r, const struct pl_trace_event *ev)
{
	r->stats.forks++;
	if (r->follow && pid_set_has(&r->command, ev->pid))
		return pid_set_add(&r->command, (int)ev->size);
	return 0;
}

static int dat_next(struct pl_trace_reader *r, struct pl_trace_event *ev)
{
	for (;;) {
		int ret = pl_tracedat_next(r->dat, ev, &r->stats);

		if (ret == 2) {
			if (follow_fork(r, ev)) {
				pl_warn_ratelimited("trace: out of memory following the forks");
				return -ENOMEM;
			}
			continue;
		}
		if (ret < 0) {
			if (!r->error)
				pl_warn_ratelimited("trace: trace.dat: %s", pl_tracedat_error(r->dat));
			r->error = true;
			return -EIO;
		}
		if (!ret)
			return 0;
		r->stats.lines = ev->line;
		if (gap_too_long(r, ev)) {
			warn_line(r, "timestamp jumps more than a week, skipped");
			continue;
		}
		return returned(r, ev);
	}
}

int pl_trace_next(struct pl_trace_reader *r, struct pl_trace_event *ev)
{
	if ((!r || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (r->dat)
		return dat_next(r, ev);
	for (;;) {
		char *line = r->buf + r->pos, *nl;
		size_t avail = r->len - r->pos;
		int ret;

		nl = memchr(line, '\n', avail);
		if (!nl) {
			if (buf_fill(r))
				continue;
			if (r->len - r->pos == PL_TRACE_BUFSZ) {
				/* a line longer than the buffer: skip to its end */
				r->stats.lines++;
				warn_line(r, "longer than 1 MiB, skipped");
				do {
					r->pos = r->len;
					if (!buf_fill(r))
						break;
					nl = memchr(r->buf, '\n', r->len);
				} while (!nl);
				if (nl)
					r->pos = (size_t)(nl - r->buf) + 1;
				continue;
			}
			if (r->error)
				return -EIO;
			if (r->pos == r->len)
				return 0;
			line = r->buf + r->pos;	/* buf_fill() may have moved it */
			nl = r->buf + r->len;	/* last line without a newline */
		}
		r->stats.lines++;
		r->pos = (size_t)(nl - r->buf) + (nl < r->buf + r->len);
		ret = pl_trace_parse_line(line, (size_t)(nl - line), ev, &r->stats);
		if (ret < 0) {
			warn_line(r, "malformed event line, skipped");
			continue;
		}
		if (!ret)
			continue;
		if (ret == 2) {
			if (follow_fork(r, ev)) {
				pl_warn_ratelimited("trace: out of memory following the forks");
				return -ENOMEM;
			}
			continue;
		}
		if (gap_too_long(r, ev)) {
			warn_line(r, "timestamp jumps more than a week, skipped");
			continue;
		}
		ev->line = r->stats.lines;
		return returned(r, ev);
	}
}
