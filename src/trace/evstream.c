// SPDX-License-Identifier: MIT
/*
 * evstream.c - the compact binary event stream of evstream.h: a parsed
 * trace written once and replayed from as often as needed.
 *
 * Invariants: the writer's and each reader's memory is one fixed buffer
 * (EVS_BUF) whatever the stream's length; an event's encoding is at most
 * EVS_MAX_EVENT bytes, so a reader refills before decoding whenever fewer
 * are left and the file has more; decoding an encoded event gives back the
 * event as appended, field for field.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pagelab/evstream.h"

#define EVS_BUF		(256u << 10)
/* tag + mask + 16 fields and nr_lazy, 10 bytes each at most */
#define EVS_MAX_EVENT	(1 + 2 + 17 * 10)

enum {
	F_CPU, F_TS, F_LINE, F_PFN, F_ORDER, F_MT, F_GFP, F_REFILL, F_FB_ORDER, F_FB_MT,
	F_FRAG, F_CHOWN, F_FAILED, F_VA, F_SIZE, F_NPURGED,
};

#define TAG_TYPE	0x0fu
/* the one pressure event a replay follows (kcompactd's work), in the first free type code */
#define TAG_TYPE_KCOMPACTD_WAKE	((unsigned int)PL_TRACE_PRESSURE_FIRST)
_Static_assert(PL_TRACE_PRESSURE_FIRST <= TAG_TYPE, "the stream's event types fit the tag");
#define TAG_KWORKER	0x10u
#define TAG_KSWAPD	0x20u
#define TAG_LAZY	0x40u

struct pl_evstream {
	int fd;
	bool finished;
	unsigned char *buf;
	size_t used;
	uint64_t bytes;
	unsigned long events;
	uint64_t last_ts;
	unsigned long last_line;
};

struct pl_evstream_reader {
	const struct pl_evstream *s;
	unsigned char *buf;
	size_t pos, len;
	uint64_t off;		/* file offset of buf[len] */
	uint64_t last_ts;
	unsigned long last_line;
};

static inline uint64_t zz(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzz(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

static inline unsigned char *put_varint(unsigned char *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	*p++ = (unsigned char)v;
	return p;
}

struct pl_evstream *pl_evstream_create(const char *dir)
{
	struct pl_evstream *s = calloc(1, sizeof(*s));
	char path[4096];
	int n;

	if (!s)
		return NULL;
	if (!dir)
		dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	n = snprintf(path, sizeof(path), "%s/pagelab-evstream-XXXXXX", dir);
	s->buf = malloc(EVS_BUF);
	if (n < 0 || (size_t)n >= sizeof(path) || !s->buf) {
		free(s->buf);
		free(s);
		errno = n < 0 || (size_t)n >= sizeof(path) ? ENAMETOOLONG : ENOMEM;
		return NULL;
	}
	s->fd = mkstemp(path);
	if (s->fd < 0) {
		int e = errno;

		free(s->buf);
		free(s);
		errno = e;
		return NULL;
	}
	unlink(path);		/* the file goes with the last descriptor */
	return s;
}

static int flush(struct pl_evstream *s)
{
	size_t done = 0;

	while (done < s->used) {
		ssize_t w = write(s->fd, s->buf + done, s->used - done);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)w;
	}
	s->used = 0;
	return 0;
}

int pl_evstream_append(struct pl_evstream *s, const struct pl_trace_event *ev)
{
	unsigned char *start, *p;
	unsigned int mask = 0;
	uint64_t f[16];
	int64_t dts, dline;

	if ((!s || !ev || s->finished) && pl_arg_refused(__func__, "NULL or finished stream"))
		return -EINVAL;
	dts = (int64_t)(ev->ts_ns - s->last_ts);
	dline = (int64_t)(ev->line - s->last_line);

	/*
	 * The memory-pressure events are the kernel side's (scored in the text
	 * pass); a replay makes its own compaction and reclaim, and their types
	 * do not fit the tag's four bits: they are not in the stream, but for
	 * kcompactd's work, which a replay runs where the kernel's ran
	 * (pl_replay_event()), in the first free code.
	 */
	if (ev->type >= PL_TRACE_PRESSURE_FIRST && ev->type != PL_TRACE_KCOMPACTD_WAKE)
		return 0;
	if (s->used + EVS_MAX_EVENT > EVS_BUF) {
		int err = flush(s);

		if (err)
			return err;
	}
#define FIELD(bit, val) do { f[bit] = (val); if (f[bit]) mask |= 1u << (bit); } while (0)
	FIELD(F_CPU, ev->cpu);
	FIELD(F_TS, zz(dts));
	FIELD(F_LINE, zz(dline));
	FIELD(F_PFN, ev->pfn);
	FIELD(F_ORDER, zz(ev->order));
	FIELD(F_MT, zz(ev->migratetype));
	FIELD(F_GFP, ev->gfp);
	FIELD(F_REFILL, zz(ev->percpu_refill));
	FIELD(F_FB_ORDER, zz(ev->fallback_order));
	FIELD(F_FB_MT, zz(ev->fallback_migratetype));
	FIELD(F_FRAG, zz(ev->fragmenting));
	FIELD(F_CHOWN, zz(ev->change_ownership));
	FIELD(F_FAILED, zz(ev->failed));
	FIELD(F_VA, ev->va_start);
	FIELD(F_SIZE, ev->size);
	FIELD(F_NPURGED, ev->npurged);
#undef FIELD
	start = p = s->buf + s->used;
	*p++ = (unsigned char)((ev->type == PL_TRACE_KCOMPACTD_WAKE ? TAG_TYPE_KCOMPACTD_WAKE :
				((unsigned int)ev->type & TAG_TYPE)) |
			       (ev->kworker ? TAG_KWORKER : 0) | (ev->kswapd ? TAG_KSWAPD : 0) |
			       (ev->nr_lazy ? TAG_LAZY : 0));
	*p++ = (unsigned char)mask;
	*p++ = (unsigned char)(mask >> 8);
	for (unsigned int m = mask; m; m &= m - 1)
		p = put_varint(p, f[__builtin_ctz(m)]);
	if (ev->nr_lazy)
		p = put_varint(p, zz(ev->nr_lazy));
	s->used += (size_t)(p - start);
	s->bytes += (uint64_t)(p - start);
	s->events++;
	s->last_ts = ev->ts_ns;
	s->last_line = ev->line;
	return 0;
}

int pl_evstream_finish(struct pl_evstream *s)
{
	int err;

	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	err = flush(s);

	if (!err)
		s->finished = true;
	return err;
}

unsigned long pl_evstream_events(const struct pl_evstream *s)
{
	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	return s->events;
}

uint64_t pl_evstream_bytes(const struct pl_evstream *s)
{
	if (!s && pl_arg_refused(__func__, "NULL argument"))
		return 0;
	return s->bytes;
}

void pl_evstream_destroy(struct pl_evstream *s)
{
	if (!s)
		return;
	close(s->fd);
	free(s->buf);
	free(s);
}

struct pl_evstream_reader *pl_evstream_open(const struct pl_evstream *s)
{
	struct pl_evstream_reader *r;

	if (!s && pl_arg_refused(__func__, "NULL argument")) {
		errno = EINVAL;
		return NULL;
	}
	if (!s->finished) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->buf = malloc(EVS_BUF);
	if (!r->buf) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->s = s;
	return r;
}

/* Move what is left to the front and read more after it. Return: -errno or 0. */
static int refill(struct pl_evstream_reader *r)
{
	size_t left = r->len - r->pos;

	memmove(r->buf, r->buf + r->pos, left);
	r->pos = 0;
	r->len = left;
	while (r->len < EVS_BUF && r->off < r->s->bytes) {
		ssize_t n = pread(r->s->fd, r->buf + r->len, EVS_BUF - r->len, (off_t)r->off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;	/* shorter than written */
		r->len += (size_t)n;
		r->off += (uint64_t)n;
	}
	return 0;
}

static inline uint64_t get_varint(const unsigned char **pp, const unsigned char *end, bool *bad)
{
	const unsigned char *p = *pp;
	uint64_t v = 0;
	unsigned int shift = 0;

	if (likely(p < end && *p < 0x80)) {
		*pp = p + 1;
		return *p;
	}
	while (p < end && shift < 64) {
		unsigned char b = *p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*pp = p;
			return v;
		}
		shift += 7;
	}
	*bad = true;
	*pp = p;
	return 0;
}

int pl_evstream_next(struct pl_evstream_reader *r, struct pl_trace_event *ev)
{
	const unsigned char *p, *end;
	unsigned int tag, mask;
	bool bad = false;
	int64_t dts = 0, dline = 0;

	if ((!r || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (r->len - r->pos < EVS_MAX_EVENT && r->off < r->s->bytes) {
		int err = refill(r);

		if (err)
			return -EIO;
	}
	if (r->pos >= r->len)
		return 0;
	p = r->buf + r->pos;
	end = r->buf + r->len;
	if (end - p < 3)
		return -EIO;
	tag = p[0];
	mask = (unsigned int)p[1] | (unsigned int)p[2] << 8;
	p += 3;
	if ((tag & TAG_TYPE) >= NR_PL_TRACE_TYPES)
		return -EIO;
	memset(ev, 0, sizeof(*ev));
	for (unsigned int m = mask; m; m &= m - 1) {
		uint64_t v = get_varint(&p, end, &bad);

		switch (__builtin_ctz(m)) {
		case F_CPU: ev->cpu = (unsigned int)v; break;
		case F_TS: dts = unzz(v); break;
		case F_LINE: dline = unzz(v); break;
		case F_PFN: ev->pfn = (unsigned long)v; break;
		case F_ORDER: ev->order = (int)unzz(v); break;
		case F_MT: ev->migratetype = (int)unzz(v); break;
		case F_GFP: ev->gfp = (gfp_t)v; break;
		case F_REFILL: ev->percpu_refill = (int)unzz(v); break;
		case F_FB_ORDER: ev->fallback_order = (int)unzz(v); break;
		case F_FB_MT: ev->fallback_migratetype = (int)unzz(v); break;
		case F_FRAG: ev->fragmenting = (int)unzz(v); break;
		case F_CHOWN: ev->change_ownership = (int)unzz(v); break;
		case F_FAILED: ev->failed = (int)unzz(v); break;
		case F_VA: ev->va_start = (unsigned long)v; break;
		case F_SIZE: ev->size = (unsigned long)v; break;
		default: ev->npurged = (unsigned long)v; break;
		}
	}
	if (tag & TAG_LAZY)
		ev->nr_lazy = (long)unzz(get_varint(&p, end, &bad));
	if (bad)
		return -EIO;
	ev->type = (tag & TAG_TYPE) == TAG_TYPE_KCOMPACTD_WAKE ? PL_TRACE_KCOMPACTD_WAKE :
		   (enum pl_trace_type)(tag & TAG_TYPE);
	ev->kworker = tag & TAG_KWORKER;
	ev->kswapd = tag & TAG_KSWAPD;
	r->last_ts += (uint64_t)dts;
	r->last_line += (unsigned long)dline;
	ev->ts_ns = r->last_ts;
	ev->line = r->last_line;
	r->pos = (size_t)(p - r->buf);
	return 1;
}

void pl_evstream_close(struct pl_evstream_reader *r)
{
	if (!r)
		return;
	free(r->buf);
	free(r);
}
