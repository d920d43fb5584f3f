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
/*
 * tag + mask + 16 fields and nr_lazy, 10 bytes each at most; in full mode
 * also the type, the pressure fields' mask and the 19 pressure fields
 */
#define EVS_MAX_EVENT	(1 + 2 + 17 * 10 + 10 + 10 + NR_XF * 10)

/* Full mode: the memory-pressure events' own fields (and the task's pid). */
enum {
	X_START_PFN, X_END_PFN, X_NR_SCANNED, X_NR_TAKEN, X_MIGRATE_PFN, X_FREE_PFN,
	X_ZONE_START, X_ZONE_END, X_SYNC, X_STATUS, X_PRIORITY, X_REASON, X_ORDER_FAILED,
	X_CONSIDERED, X_DEFER_LIMIT, X_NR_SUCCEEDED, X_NR_FAILED, X_NR_RECLAIMED, X_PID, NR_XF
};

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
#define TAG_EXT		0x80u	/* full mode: a memory-pressure event, its type and fields follow */

struct pl_evstream {
	int fd;
	bool finished;
	bool full;		/* the memory-pressure events too (evcache.h) */
	uint64_t base;		/* file offset of the stream's first byte */
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

struct pl_evstream *pl_evstream_create_full(const char *dir)
{
	struct pl_evstream *s = pl_evstream_create(dir);

	if (s)
		s->full = true;
	return s;
}

struct pl_evstream *pl_evstream_adopt(int fd, uint64_t base, uint64_t bytes,
				      unsigned long events)
{
	struct pl_evstream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = fd;
	s->full = true;
	s->finished = true;
	s->base = base;
	s->bytes = bytes;
	s->events = events;
	return s;
}

ssize_t pl_evstream_pread(const struct pl_evstream *s, void *buf, size_t len, uint64_t off)
{
	size_t done = 0;

	if (!s->finished)
		return -EINVAL;
	if (off >= s->bytes)
		return 0;
	if (len > s->bytes - off)
		len = (size_t)(s->bytes - off);
	while (done < len) {
		ssize_t n = pread(s->fd, (char *)buf + done, len - done,
				  (off_t)(s->base + off + done));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (!n)
			return -EIO;
		done += (size_t)n;
	}
	return (ssize_t)done;
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
	bool ext = ev->type >= PL_TRACE_PRESSURE_FIRST && ev->type != PL_TRACE_KCOMPACTD_WAKE;

	if (ext && !s->full)
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
	*p++ = (unsigned char)((ext ? 0 : ev->type == PL_TRACE_KCOMPACTD_WAKE ?
				TAG_TYPE_KCOMPACTD_WAKE : ((unsigned int)ev->type & TAG_TYPE)) |
			       (ev->kworker ? TAG_KWORKER : 0) | (ev->kswapd ? TAG_KSWAPD : 0) |
			       (ev->nr_lazy ? TAG_LAZY : 0) | (ext ? TAG_EXT : 0));
	*p++ = (unsigned char)mask;
	*p++ = (unsigned char)(mask >> 8);
	for (unsigned int m = mask; m; m &= m - 1)
		p = put_varint(p, f[__builtin_ctz(m)]);
	if (ev->nr_lazy)
		p = put_varint(p, zz(ev->nr_lazy));
	if (ext) {
		uint64_t x[NR_XF];
		unsigned int xmask = 0;

#define XFIELD(bit, val) do { x[bit] = (val); if (x[bit]) xmask |= 1u << (bit); } while (0)
		XFIELD(X_START_PFN, ev->start_pfn);
		XFIELD(X_END_PFN, ev->end_pfn);
		XFIELD(X_NR_SCANNED, ev->nr_scanned);
		XFIELD(X_NR_TAKEN, ev->nr_taken);
		XFIELD(X_MIGRATE_PFN, ev->migrate_pfn);
		XFIELD(X_FREE_PFN, ev->free_pfn);
		XFIELD(X_ZONE_START, ev->zone_start);
		XFIELD(X_ZONE_END, ev->zone_end);
		XFIELD(X_SYNC, zz(ev->sync));
		XFIELD(X_STATUS, zz(ev->status));
		XFIELD(X_PRIORITY, zz(ev->priority));
		XFIELD(X_REASON, zz(ev->reason));
		XFIELD(X_ORDER_FAILED, zz(ev->order_failed));
		XFIELD(X_CONSIDERED, ev->considered);
		XFIELD(X_DEFER_LIMIT, ev->defer_limit);
		XFIELD(X_NR_SUCCEEDED, ev->nr_succeeded);
		XFIELD(X_NR_FAILED, ev->nr_failed);
		XFIELD(X_NR_RECLAIMED, ev->nr_reclaimed);
		XFIELD(X_PID, zz(ev->pid));
#undef XFIELD
		p = put_varint(p, (uint64_t)ev->type);
		p = put_varint(p, xmask);
		for (unsigned int m = xmask; m; m &= m - 1)
			p = put_varint(p, x[__builtin_ctz(m)]);
	}
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
		size_t want = EVS_BUF - r->len;
		ssize_t n;

		if (want > r->s->bytes - r->off)
			want = (size_t)(r->s->bytes - r->off);	/* never past the stream's end */
		n = pread(r->s->fd, r->buf + r->len, want, (off_t)(r->s->base + r->off));

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
	if ((tag & TAG_TYPE) >= NR_PL_TRACE_TYPES || ((tag & TAG_EXT) && !r->s->full))
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
	if (tag & TAG_EXT) {
		uint64_t type = get_varint(&p, end, &bad), xmask = get_varint(&p, end, &bad);

		if (type < PL_TRACE_PRESSURE_FIRST || type >= NR_PL_TRACE_TYPES ||
		    type == PL_TRACE_KCOMPACTD_WAKE || xmask >> NR_XF)
			return -EIO;
		for (unsigned int m = (unsigned int)xmask; m; m &= m - 1) {
			uint64_t v = get_varint(&p, end, &bad);

			switch (__builtin_ctz(m)) {
			case X_START_PFN: ev->start_pfn = (unsigned long)v; break;
			case X_END_PFN: ev->end_pfn = (unsigned long)v; break;
			case X_NR_SCANNED: ev->nr_scanned = (unsigned long)v; break;
			case X_NR_TAKEN: ev->nr_taken = (unsigned long)v; break;
			case X_MIGRATE_PFN: ev->migrate_pfn = (unsigned long)v; break;
			case X_FREE_PFN: ev->free_pfn = (unsigned long)v; break;
			case X_ZONE_START: ev->zone_start = (unsigned long)v; break;
			case X_ZONE_END: ev->zone_end = (unsigned long)v; break;
			case X_SYNC: ev->sync = (int)unzz(v); break;
			case X_STATUS: ev->status = (int)unzz(v); break;
			case X_PRIORITY: ev->priority = (int)unzz(v); break;
			case X_REASON: ev->reason = (int)unzz(v); break;
			case X_ORDER_FAILED: ev->order_failed = (int)unzz(v); break;
			case X_CONSIDERED: ev->considered = (unsigned int)v; break;
			case X_DEFER_LIMIT: ev->defer_limit = (unsigned long)v; break;
			case X_NR_SUCCEEDED: ev->nr_succeeded = (unsigned long)v; break;
			case X_NR_FAILED: ev->nr_failed = (unsigned long)v; break;
			case X_NR_RECLAIMED: ev->nr_reclaimed = (unsigned long)v; break;
			default: ev->pid = (int)unzz(v); break;
			}
		}
		ev->type = (enum pl_trace_type)type;
	} else {
		ev->type = (tag & TAG_TYPE) == TAG_TYPE_KCOMPACTD_WAKE ? PL_TRACE_KCOMPACTD_WAKE :
			   (enum pl_trace_type)(tag & TAG_TYPE);
	}
	if (bad)
		return -EIO;
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
