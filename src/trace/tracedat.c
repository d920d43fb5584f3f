// SPDX-License-Identifier: MIT
/*
 * tracedat.c - trace-cmd's binary trace.dat, versions 6 and 7, read
 * straight into pagelab's event stream (this file opens it; tracedat_read.c
 * reads its pages): the file's header, its options
 * (version 7: sections, compressed with zstd or zlib where the file says
 * so), the event format files, the saved command lines (pid -> comm), and
 * each CPU's ring-buffer pages, merged by timestamp.
 *
 * Format facts are those of trace-cmd.dat.v6(5) and trace-cmd.dat.v7(5) and
 * of the kernel's events/header_page and header_event; the code is
 * pagelab's own. A ring-buffer page is: a timestamp, a commit word (bytes of
 * data; bit 31: events were lost before this page, bit 30: and their count
 * is stored after the data), then events, each a 32-bit header (type_len:5,
 * time_delta:27) with type_len 1..28 the data's length in words, 0 a length
 * word first, 29 padding, 30 a time extend and 31 an absolute timestamp.
 *
 * Invariants: every offset and length read from the file is checked
 * against the file (or the page) before use; a file pagelab cannot read
 * right (big-endian, pages other than 4 KiB, an event it reads whose layout
 * lacks a field, an event id without a format) is refused at open with one
 * line naming it, and corrupt data met later ends the stream with one line,
 * the events before it standing. Memory: the formats, the command lines,
 * and per CPU one decompressed chunk (version 7 compressed) whatever the
 * file's length.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>
#include "tracedat_int.h"

bool pl_tracedat_magic(const void *buf, size_t len)
{
	return len >= TD_MAGIC_LEN && !memcmp(buf, TD_MAGIC, TD_MAGIC_LEN);
}

const char *pl_tracedat_error(const struct pl_tracedat *d)
{
	return d->err;
}

int pl_tracedat_version(const struct pl_tracedat *d)
{
	return d->version;
}

__attribute__((format(printf, 2, 3)))
int td_fail(struct pl_tracedat *d, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	d->failed = true;
	return -EINVAL;
}

/* ---- decompression ---------------------------------------------------------- */

int td_decompress(struct pl_tracedat *d, const unsigned char *src, size_t slen,
		      unsigned char *dst, size_t dlen)
{
	if (d->comp == COMP_ZSTD) {
		size_t got = ZSTD_decompress(dst, dlen, src, slen);

		return ZSTD_isError(got) || got != dlen ? -EIO : 0;
	}
	if (d->comp == COMP_ZLIB) {
		uLongf got = dlen;

		return uncompress(dst, &got, src, slen) != Z_OK || got != dlen ? -EIO : 0;
	}
	return -EIO;
}

static unsigned char *own(struct pl_tracedat *d, size_t n)
{
	unsigned char **o = realloc(d->owned, (d->nr_owned + 1) * sizeof(*o));
	unsigned char *b;

	if (!o)
		return NULL;
	d->owned = o;
	b = malloc(n ? n : 1);
	if (b)
		d->owned[d->nr_owned++] = b;
	return b;
}

/*
 * The version 7 section at @off, of id @id: its content (decompressed if
 * the section says so) as a cursor. Return: 0 or -EINVAL/-ENOMEM.
 */
static int section(struct pl_tracedat *d, uint64_t off, unsigned int id, struct cur *out)
{
	struct cur c = { d->buf, d->len, 0, false };
	unsigned int sid, flags;
	uint64_t size;
	const unsigned char *body;

	if (off > d->len)
		return td_fail(d, "truncated or corrupt: section %u at offset %llu is past the end "
			    "of the file (%zu bytes)", id, (unsigned long long)off, d->len);
	c.pos = (size_t)off;
	sid = (unsigned int)cur_u(&c, 2);
	flags = (unsigned int)cur_u(&c, 2);
	cur_u(&c, 4);
	size = cur_u(&c, 8);
	body = cur_take(&c, size);
	if (c.bad)
		return td_fail(d, "truncated: section %u at offset %llu runs past the end of the file",
			    id, (unsigned long long)off);
	if (sid != id)
		return td_fail(d, "corrupt: offset %llu holds section %u where section %u belongs",
			    (unsigned long long)off, sid, id);
	if (!(flags & 1)) {
		*out = (struct cur){ body, (size_t)size, 0, false };
		return 0;
	}
	{
		struct cur z = { body, (size_t)size, 0, false };
		uint32_t csize = (uint32_t)cur_u(&z, 4), usize = (uint32_t)cur_u(&z, 4);
		const unsigned char *src = cur_take(&z, csize);
		unsigned char *dst;

		if (z.bad || usize > TD_MAX_CHUNK)
			return td_fail(d, "corrupt: compressed section %u at offset %llu has bad sizes",
				    id, (unsigned long long)off);
		dst = own(d, usize);
		if (!dst)
			return -ENOMEM;
		if (td_decompress(d, src, csize, dst, usize))
			return td_fail(d, "corrupt: section %u at offset %llu does not decompress",
				    id, (unsigned long long)off);
		*out = (struct cur){ dst, usize, 0, false };
	}
	return 0;
}

/* ---- metadata --------------------------------------------------------------- */

static int header_info(struct pl_tracedat *d, struct cur *c)
{
	const char *name = cur_str(c);
	uint64_t n = 0;
	const unsigned char *text;
	char why[sizeof(d->err)];
	int ret;

	if (!name || strcmp(name, "header_page"))
		return td_fail(d, "corrupt: no header_page where the file format puts it");
	n = cur_u(c, 8);
	text = cur_take(c, n);
	if (!text)
		return td_fail(d, "truncated: header_page runs past the end of the file");
	ret = td_header_page_parse((const char *)text, (size_t)n, &d->pl, why, sizeof(why));
	if (ret)
		return td_fail(d, "%s", why);
	name = cur_str(c);
	if (!name || strcmp(name, "header_event"))
		return td_fail(d, "corrupt: no header_event after header_page");
	n = cur_u(c, 8);
	if (!cur_take(c, n))
		return td_fail(d, "truncated: header_event runs past the end of the file");
	return 0;
}

static int add_format(struct pl_tracedat *d, const char *system, const unsigned char *text,
		      size_t n)
{
	struct td_format *f;
	char why[sizeof(d->err)];
	int ret;

	if (d->nr_fmts == d->cap_fmts) {
		size_t cap = d->cap_fmts ? d->cap_fmts * 2 : 256;
		struct td_format *nf = realloc(d->fmts, cap * sizeof(*nf));

		if (!nf)
			return -ENOMEM;
		d->fmts = nf;
		d->cap_fmts = cap;
	}
	f = &d->fmts[d->nr_fmts];
	ret = td_format_parse((const char *)text, n, system, f, why, sizeof(why));
	if (ret == -ENOMEM) {
		td_format_release(f);
		return ret;
	}
	if (ret) {
		td_format_release(f);
		return td_fail(d, "%s", why);
	}
	d->nr_fmts++;
	return 0;
}

static int event_formats(struct pl_tracedat *d, struct cur *c)
{
	uint32_t nsys = (uint32_t)cur_u(c, 4);

	if (c->bad)
		return td_fail(d, "truncated: the event formats end early");
	for (uint32_t s = 0; s < nsys; s++) {
		const char *system = cur_str(c);
		uint32_t n = (uint32_t)cur_u(c, 4);

		if (!system || c->bad)
			return td_fail(d, "truncated: the event formats end early (system %u of %u)",
				    s + 1, nsys);
		for (uint32_t e = 0; e < n; e++) {
			uint64_t len = cur_u(c, 8);
			const unsigned char *text = cur_take(c, len);
			int ret;

			if (!text)
				return td_fail(d, "truncated: a format file of system %s runs past the "
					    "end of the file", system);
			ret = add_format(d, system, text, (size_t)len);
			if (ret)
				return ret;
		}
	}
	return 0;
}

/* The ftrace formats (version 6: in line; skipped, pagelab reads none of them). */
static int skip_ftrace_formats(struct pl_tracedat *d, struct cur *c)
{
	uint32_t n = (uint32_t)cur_u(c, 4);

	for (uint32_t i = 0; i < n && !c->bad; i++)
		cur_take(c, cur_u(c, 8));
	return c->bad ? td_fail(d, "truncated: the ftrace formats end early") : 0;
}

static int cmdlines(struct pl_tracedat *d, const unsigned char *text, size_t n)
{
	const char *p = (const char *)text, *end = p + n;
	size_t lines = 0, cap;

	for (const char *q = p; q < end; q++)
		lines += *q == '\n';
	lines++;
	d->comms = calloc(lines, sizeof(*d->comms));
	for (cap = 64; cap < lines * 2; cap *= 2)
		;
	d->hash = calloc(cap, sizeof(*d->hash));
	if (!d->comms || !d->hash)
		return -ENOMEM;
	d->hash_mask = cap - 1;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *s = p;
		long pid = 0;
		bool any = false;

		while (s < le && *s >= '0' && *s <= '9' && pid < (1l << 30)) {
			pid = pid * 10 + (*s++ - '0');
			any = true;
		}
		if (any && s < le && *s == ' ') {
			struct td_comm *t = &d->comms[d->nr_comms];
			size_t l = (size_t)(le - s - 1), h = td_comm_slot(d, (int)pid);

			t->pid = (int)pid;
			if (l > sizeof(t->comm) - 1)
				l = sizeof(t->comm) - 1;
			memcpy(t->comm, s + 1, l);
			while (d->hash[h] && d->comms[d->hash[h] - 1].pid != (int)pid)
				h = (h + 1) & d->hash_mask;
			d->hash[h] = (int32_t)++d->nr_comms;	/* a later line of a pid wins */
		}
		p = nl ? nl + 1 : end;
	}
	return 0;
}

/* ---- the CPUs' data ---------------------------------------------------------------- */

static int add_cpus(struct pl_tracedat *d, const uint64_t (*tab)[3], unsigned int n)
{
	d->cpus = calloc(n ? n : 1, sizeof(*d->cpus));
	if (!d->cpus)
		return -ENOMEM;
	for (unsigned int i = 0; i < n; i++) {
		struct td_cpu *c = &d->cpus[i];
		uint64_t off = tab[i][1], size = tab[i][2];

		if (off > d->len || size > d->len - off)
			return td_fail(d, "truncated: CPU %llu's data (%llu bytes at offset %llu) runs "
				    "past the end of the file (%zu bytes)",
				    (unsigned long long)tab[i][0], (unsigned long long)size,
				    (unsigned long long)off, d->len);
		if (tab[i][0] >= PL_TRACE_MAX_CPUS)	/* the text parser's limit too */
			return td_fail(d, "corrupt: CPU %llu (no kernel has %u CPUs)",
				    (unsigned long long)tab[i][0], PL_TRACE_MAX_CPUS);
		c->cpu = (unsigned int)tab[i][0];
		c->last_pid = -1;
		if (d->comp != COMP_NONE && size) {
			struct cur z = { d->buf + off, (size_t)size, 0, false };

			c->chunks_left = (uint32_t)cur_u(&z, 4);
			c->cdata = d->buf + off;
			/* the size trace-cmd records leaves out the chunk count */
			c->csize = (size_t)(size + 4 <= d->len - off ? size + 4 : size);
			c->cpos = 4;
			if (z.bad)
				return td_fail(d, "truncated: CPU %u's compressed data has no chunk count",
					    c->cpu);
		} else {
			c->data = d->buf + off;
			c->size = (size_t)size;
		}
	}
	d->nr_cpus = n;
	return 0;
}

/* Version 6: "flyrecord\0" then per CPU an offset and a size. */
static int flyrecord_v6(struct pl_tracedat *d, struct cur *c, unsigned int cpus, bool *has_data,
			uint64_t (**tab)[3])
{
	const unsigned char *tag = cur_take(c, 10);

	*has_data = false;
	if (!tag)
		return td_fail(d, "truncated: the file ends before its CPU data");
	if (!memcmp(tag, "latency  ", 10))
		return td_fail(d, "a latency-tracer trace.dat (text data): pagelab reads flyrecord "
			    "data of the kmem events");
	if (memcmp(tag, "flyrecord", 10))
		return td_fail(d, "corrupt: no flyrecord section where the file format puts it");
	*tab = calloc(cpus ? cpus : 1, sizeof(**tab));
	if (!*tab)
		return -ENOMEM;
	for (unsigned int i = 0; i < cpus; i++) {
		(*tab)[i][0] = i;
		(*tab)[i][1] = cur_u(c, 8);
		(*tab)[i][2] = cur_u(c, 8);
		*has_data |= (*tab)[i][2] != 0;
	}
	return c->bad ? td_fail(d, "truncated: the CPU data table ends early") : 0;
}

/* ---- opening ---------------------------------------------------------------------- */

static int open_v6(struct pl_tracedat *d, struct cur *c)
{
	uint64_t (*tab)[3] = NULL, (*btab)[3] = NULL;
	unsigned int cpus;
	bool has, bhas = false;
	int ret;

	if ((ret = header_info(d, c)) || (ret = skip_ftrace_formats(d, c)) ||
	    (ret = event_formats(d, c)))
		return ret;
	cur_take(c, cur_u(c, 4));	/* kallsyms */
	cur_take(c, cur_u(c, 4));	/* printk formats */
	{
		uint64_t n = cur_u(c, 8);
		const unsigned char *text = cur_take(c, n);

		if (!text)
			return td_fail(d, "truncated: the file ends in its kallsyms, printk formats or "
				    "command lines");
		if ((ret = cmdlines(d, text, (size_t)n)))
			return ret;
	}
	cpus = (unsigned int)cur_u(c, 4);
	if (c->bad || cpus >= PL_TRACE_MAX_CPUS)
		return td_fail(d, "truncated or corrupt: no CPU count (or %u CPUs)", cpus);
	if (cur_have(c, 10) && !memcmp(c->base + c->pos, "options  ", 10)) {
		c->pos += 10;
		for (;;) {
			unsigned int id = (unsigned int)cur_u(c, 2);
			uint32_t size;
			const unsigned char *opt;

			if (c->bad)
				return td_fail(d, "truncated: the options end early");
			if (!id)
				break;
			size = (uint32_t)cur_u(c, 4);
			opt = cur_take(c, size);
			if (!opt)
				return td_fail(d, "truncated: option %u runs past the end of the file", id);
			if (id == 3 && !bhas && size > 8) {	/* BUFFER: an instance's data */
				struct cur b = { d->buf, d->len, 0, false };
				uint64_t off = td_ld(opt, 8);

				if (off > d->len)
					return td_fail(d, "truncated: an instance's data at offset %llu is "
						    "past the end of the file", (unsigned long long)off);
				b.pos = (size_t)off;
				free(btab);
				btab = NULL;
				ret = flyrecord_v6(d, &b, cpus, &bhas, &btab);
				if (ret) {
					free(btab);
					return ret;
				}
			}
		}
	}
	ret = flyrecord_v6(d, c, cpus, &has, &tab);
	if (!ret)	/* the top instance's data, or else the first instance's that has any */
		ret = add_cpus(d, has || !bhas ? tab : btab, cpus);
	free(tab);
	free(btab);
	return ret;
}

static int open_v7(struct pl_tracedat *d, struct cur *c)
{
	const char *cname = cur_str(c), *cver = cur_str(c);
	uint64_t next = cur_u(c, 8), (*tab)[3] = NULL;
	uint64_t hdr_off = 0, fmt_off = 0, cmd_off = 0;
	unsigned int ncpu = 0, hops = 0;
	bool found_buf = false;
	struct cur s;
	int ret;

	(void)cver;
	if (!cname || c->bad)
		return td_fail(d, "truncated: the file ends in its header");
	if (!strcmp(cname, "none") || !*cname)
		d->comp = COMP_NONE;
	else if (!strcmp(cname, "zstd"))
		d->comp = COMP_ZSTD;
	else if (!strcmp(cname, "zlib"))
		d->comp = COMP_ZLIB;
	else
		return td_fail(d, "compressed with %.32s: pagelab reads zstd, zlib or none", cname);
	while (next) {
		if (++hops > 64)
			return td_fail(d, "corrupt: the options sections loop");
		if ((ret = section(d, next, 0, &s)))
			goto out;
		next = 0;
		for (;;) {
			unsigned int id = (unsigned int)cur_u(&s, 2);
			uint32_t size = (uint32_t)cur_u(&s, 4);
			const unsigned char *opt = cur_take(&s, size);
			struct cur o;

			if (s.bad) {
				ret = td_fail(d, "truncated or corrupt: an options section ends early");
				goto out;
			}
			o = (struct cur){ opt, size, 0, false };
			if (id == 0) {			/* DONE: the next options section */
				next = size >= 8 ? td_ld(opt, 8) : 0;
				break;
			}
			if (id == 16 && size >= 8)
				hdr_off = td_ld(opt, 8);
			else if (id == 18 && size >= 8)
				fmt_off = td_ld(opt, 8);
			else if (id == 21 && size >= 8)
				cmd_off = td_ld(opt, 8);
			else if (id == 3 && !found_buf) {	/* BUFFER */
				uint64_t boff = cur_u(&o, 8);
				const char *name = cur_str(&o), *clock = cur_str(&o);
				uint32_t psize = (uint32_t)cur_u(&o, 4), n = (uint32_t)cur_u(&o, 4);
				bool any = false;

				(void)boff;
				(void)name;
				(void)clock;
				if (o.bad || n >= PL_TRACE_MAX_CPUS) {
					ret = td_fail(d, "corrupt: a BUFFER option is malformed");
					goto out;
				}
				if (psize != TD_PAGE_SIZE) {
					ret = td_fail(d, "recorded with %u-byte ring-buffer pages; pagelab "
						   "reads 4096-byte pages", psize);
					goto out;
				}
				free(tab);
				tab = calloc(n ? n : 1, sizeof(*tab));
				if (!tab) {
					ret = -ENOMEM;
					goto out;
				}
				for (uint32_t i = 0; i < n; i++) {
					tab[i][0] = cur_u(&o, 4);
					tab[i][1] = cur_u(&o, 8);
					tab[i][2] = cur_u(&o, 8);
					any |= tab[i][2] != 0;
				}
				if (o.bad) {
					ret = td_fail(d, "corrupt: a BUFFER option's CPU table is cut");
					goto out;
				}
				ncpu = n;
				found_buf = any;	/* the first instance with data */
			}
		}
	}
	if (!hdr_off || !fmt_off) {
		ret = td_fail(d, "corrupt: no %s section", hdr_off ? "event formats" : "header");
		goto out;
	}
	if ((ret = section(d, hdr_off, 16, &s)) || (ret = header_info(d, &s)) ||
	    (ret = section(d, fmt_off, 18, &s)) || (ret = event_formats(d, &s)))
		goto out;
	if (cmd_off) {
		uint64_t n;
		const unsigned char *text;

		if ((ret = section(d, cmd_off, 21, &s)))
			goto out;
		n = cur_u(&s, 8);
		text = cur_take(&s, n);
		if (!text) {
			ret = td_fail(d, "truncated: the command lines section ends early");
			goto out;
		}
		if ((ret = cmdlines(d, text, (size_t)n)))
			goto out;
	} else if ((ret = cmdlines(d, NULL, 0))) {
		goto out;
	}
	ret = add_cpus(d, tab, tab ? ncpu : 0);
out:
	free(tab);
	return ret;
}

static int index_formats(struct pl_tracedat *d)
{
	d->by_id = calloc(65536, sizeof(*d->by_id));
	if (!d->by_id)
		return -ENOMEM;
	for (size_t i = 0; i < d->nr_fmts; i++) {
		struct td_format *f = &d->fmts[i];

		if (!i) {
			d->type_off = f->off[TDF_TYPE];
			d->type_size = f->size[TDF_TYPE];
		} else if (f->off[TDF_TYPE] != d->type_off || f->size[TDF_TYPE] != d->type_size) {
			return td_fail(d, "unknown event layout: %s/%s's common_type is not where the "
				    "other events have it", f->system, f->name);
		}
		d->by_id[f->id] = f;
	}
	return 0;
}

struct pl_tracedat *pl_tracedat_open(const unsigned char *buf, size_t len, char *err,
				     size_t errlen)
{
	struct pl_tracedat *d = calloc(1, sizeof(*d));
	struct cur c = { buf, len, TD_MAGIC_LEN, false };
	const char *ver;
	unsigned int endian, page;
	int ret;

	if (!d) {
		snprintf(err, errlen, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	d->buf = buf;
	d->len = len;
	if (!pl_tracedat_magic(buf, len)) {
		ret = td_fail(d, "not a trace.dat file (no trace-cmd magic)");
		goto out;
	}
	ver = cur_str(&c);
	endian = (unsigned int)cur_u(&c, 1);
	d->long_size = (unsigned int)cur_u(&c, 1);
	page = (unsigned int)cur_u(&c, 4);
	if (!ver || c.bad) {
		ret = td_fail(d, "truncated: the file ends in its header");
		goto out;
	}
	d->version = atoi(ver);
	if (strcmp(ver, "6") && strcmp(ver, "7")) {
		ret = td_fail(d, "trace.dat version %.16s: pagelab reads versions 6 and 7", ver);
		goto out;
	}
	if (endian != 0) {
		ret = td_fail(d, "a big-endian trace.dat (another architecture): pagelab reads "
			   "little-endian traces");
		goto out;
	}
	if (d->long_size != 4 && d->long_size != 8) {
		ret = td_fail(d, "corrupt: the header gives %u-byte longs", d->long_size);
		goto out;
	}
	if (page != TD_PAGE_SIZE) {
		ret = td_fail(d, "recorded on a kernel with %u-byte pages; pagelab models 4096-byte "
			   "pages, so its pfns would be read wrongly", page);
		goto out;
	}
	ret = d->version == 6 ? open_v6(d, &c) : open_v7(d, &c);
	if (!ret)
		ret = index_formats(d);
out:
	if (ret) {
		if (ret == -ENOMEM)
			snprintf(d->err, sizeof(d->err), "out of memory");
		snprintf(err, errlen, "%s", d->err);
		pl_tracedat_close(d);
		errno = ret == -ENOMEM ? ENOMEM : EINVAL;
		return NULL;
	}
	return d;
}

void pl_tracedat_close(struct pl_tracedat *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr_fmts; i++)
		td_format_release(&d->fmts[i]);
	free(d->fmts);
	free(d->by_id);
	for (unsigned int i = 0; d->cpus && i < d->nr_cpus; i++)
		free(d->cpus[i].ubuf);
	free(d->cpus);
	for (size_t i = 0; i < d->nr_owned; i++)
		free(d->owned[i]);
	free(d->owned);
	free(d->comms);
	free(d->hash);
	free(d);
}
