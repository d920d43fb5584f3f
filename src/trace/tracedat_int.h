/* SPDX-License-Identifier: MIT */
/*
 * tracedat_int.h - what the two halves of the trace.dat reader share,
 * private to them: tracedat.c opens a file (header, options, formats,
 * command lines, the CPUs' data), tracedat_read.c reads its pages and
 * decodes their events. The layout facts are in tracedat.c's header.
 */
#ifndef PAGELAB_TRACE_TRACEDAT_INT_H
#define PAGELAB_TRACE_TRACEDAT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "tracedat.h"
#include "tracedat_fmt.h"

#define TD_MAGIC	"\x17\x08\x44tracing"
#define TD_MAGIC_LEN	10
#define TD_PAGE_SIZE	4096u		/* pagelab models 4 KiB pages */
#define TD_MAX_CHUNK	(64u << 20)	/* a decompressed chunk or section */
#define RB_MISSED_EVENTS (1ull << 31)
#define RB_MISSED_STORED (1ull << 30)
#define RB_SIZE_MASK	((1ull << 30) - 1)
#define TS_ABS_BITS	59

enum { COMP_NONE, COMP_ZSTD, COMP_ZLIB };

struct td_cpu {
	unsigned int cpu;
	const unsigned char *data;	/* pages (raw, or the decompressed chunk) */
	size_t size, pos;
	const unsigned char *cdata;	/* compressed chunks (version 7) */
	size_t csize, cpos;
	uint32_t chunks_left;
	unsigned char *ubuf;
	size_t ucap;
	const unsigned char *p, *pend;	/* the page being read */
	uint64_t ts;
	const unsigned char *rec;	/* the pending event */
	uint32_t rec_len;
	uint64_t rec_ts;
	bool pending, done;
	int last_pid, last_comm;	/* comm lookup cache */
};

struct td_comm {
	int pid;
	char comm[16];
};

struct pl_tracedat {
	const unsigned char *buf;
	size_t len;
	int version, comp;
	unsigned int long_size;
	struct td_page_layout pl;
	struct td_format *fmts;
	size_t nr_fmts, cap_fmts;
	struct td_format **by_id;	/* 65536 entries */
	uint16_t type_off;
	uint8_t type_size;
	struct td_comm *comms;
	size_t nr_comms;
	int32_t *hash;			/* open addressing: index + 1 into comms */
	size_t hash_mask;
	struct td_cpu *cpus;
	unsigned int nr_cpus;
	unsigned char **owned;		/* decompressed sections */
	size_t nr_owned;
	unsigned long records;
	bool failed;
	char err[256];
};

/* Record why the file cannot be read (one line) and fail it. Return: -EINVAL. */
__attribute__((format(printf, 2, 3)))
int td_fail(struct pl_tracedat *d, const char *fmt, ...);

/* Decompress one version 7 section or chunk of exactly @dlen bytes. Return: 0 or -EIO. */
int td_decompress(struct pl_tracedat *d, const unsigned char *src, size_t slen,
		  unsigned char *dst, size_t dlen);

/* A little-endian value of @size bytes (1, 2, 4 or 8) at @p, unaligned. */
static inline uint64_t td_ld(const unsigned char *p, unsigned int size)
{
	switch (size) {
	case 1:
		return p[0];
	case 2: {
		uint16_t v;

		memcpy(&v, p, 2);
		return v;
	}
	case 4: {
		uint32_t v;

		memcpy(&v, p, 4);
		return v;
	}
	default: {
		uint64_t v;

		memcpy(&v, p, 8);
		return v;
	}
	}
}

/* ---- bounded reads ---- */

/* A cursor over [base, base + len): every read checks the bounds. */
struct cur {
	const unsigned char *base;
	size_t len, pos;
	bool bad;
};

static inline bool cur_have(struct cur *c, size_t n)
{
	if (c->bad || n > c->len - c->pos) {
		c->bad = true;
		return false;
	}
	return true;
}

static inline uint64_t cur_u(struct cur *c, unsigned int size)
{
	uint64_t v;

	if (!cur_have(c, size))
		return 0;
	v = td_ld(c->base + c->pos, size);
	c->pos += size;
	return v;
}

/* A NUL-terminated string at the cursor (NULL if none within the bounds). */
static inline const char *cur_str(struct cur *c)
{
	const unsigned char *s = c->base + c->pos, *z;

	if (c->bad)
		return NULL;
	z = memchr(s, '\0', c->len - c->pos);
	if (!z) {
		c->bad = true;
		return NULL;
	}
	c->pos += (size_t)(z - s) + 1;
	return (const char *)s;
}

static inline const unsigned char *cur_take(struct cur *c, uint64_t n)
{
	const unsigned char *p = c->base + c->pos;

	if (c->bad || n > c->len - c->pos) {
		c->bad = true;
		return NULL;
	}
	c->pos += (size_t)n;
	return p;
}

/* The pid -> comm table's first slot for @pid. */
static inline size_t td_comm_slot(const struct pl_tracedat *d, int pid)
{
	return ((uint32_t)pid * 2654435761u) & d->hash_mask;
}

#endif /* PAGELAB_TRACE_TRACEDAT_INT_H */
