// SPDX-License-Identifier: MIT
/*
 * tracedat_fmt.c - the event format files of a trace.dat: each event's
 * field offsets and sizes (the kernel writes them per build, so nothing is
 * assumed), the ring-buffer page layout of header_page, and
 * mm_page_alloc's gfp_flags table taken from its print format.
 *
 * gfp_flags: the kernel prints them with __print_flags(), walking a table
 * of masks in order and printing each name whose mask is wholly set, then
 * clearing those bits. The table's masks are C expressions of the build's
 * own bit numbers, evaluated here (casts, <<, |, &, ~, parentheses); a
 * value's names are then read exactly as the text parser reads them, so a
 * trace.dat and its `trace-cmd report` text give the same gfp_t.
 *
 * Invariants: a format of an event pagelab reads either yields every
 * field it needs, with a size of 1, 2, 4 or 8 bytes, or is refused with one
 * line naming the event and the field; nothing reads past @len.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tracedat.h"
#include "tracedat_fmt.h"

/* ---- which event, which fields -------------------------------------------- */

struct td_event_spec {
	const char *system, *name;	/* name NULL: every event of the system */
	int kind;
	uint32_t need;			/* TDF_* bits that must be present */
	const char *fields[NR_TDF];	/* the format's name of each field read */
};

#define B(f) (1u << (f))
static const struct td_event_spec specs[] = {
	{ "kmem", "mm_page_alloc", PL_TRACE_PAGE_ALLOC, B(TDF_PFN) | B(TDF_ORDER) | B(TDF_MT),
	  { [TDF_PFN] = "pfn", [TDF_ORDER] = "order", [TDF_MT] = "migratetype",
	    [TDF_GFP] = "gfp_flags" } },
	{ "kmem", "mm_page_free", PL_TRACE_PAGE_FREE, B(TDF_PFN) | B(TDF_ORDER),
	  { [TDF_PFN] = "pfn", [TDF_ORDER] = "order" } },
	{ "kmem", "mm_page_free_batched", PL_TRACE_PAGE_FREE_BATCHED, B(TDF_PFN),
	  { [TDF_PFN] = "pfn" } },
	{ "kmem", "mm_page_alloc_zone_locked", PL_TRACE_ZONE_LOCKED,
	  B(TDF_PFN) | B(TDF_ORDER) | B(TDF_MT) | B(TDF_REFILL),
	  { [TDF_PFN] = "pfn", [TDF_ORDER] = "order", [TDF_MT] = "migratetype",
	    [TDF_REFILL] = "percpu_refill" } },
	{ "kmem", "mm_page_pcpu_drain", PL_TRACE_PCPU_DRAIN, B(TDF_PFN) | B(TDF_ORDER) | B(TDF_MT),
	  { [TDF_PFN] = "pfn", [TDF_ORDER] = "order", [TDF_MT] = "migratetype" } },
	{ "kmem", "mm_page_alloc_extfrag", PL_TRACE_EXTFRAG,
	  B(TDF_PFN) | B(TDF_ORDER) | B(TDF_MT) | B(TDF_FBORDER) | B(TDF_FBMT) | B(TDF_OWN),
	  { [TDF_PFN] = "pfn", [TDF_ORDER] = "alloc_order", [TDF_MT] = "alloc_migratetype",
	    [TDF_FBORDER] = "fallback_order", [TDF_FBMT] = "fallback_migratetype",
	    [TDF_OWN] = "change_ownership" } },
	{ "vmalloc", "alloc_vmap_area", PL_TRACE_ALLOC_VMAP_AREA, B(TDF_VA) | B(TDF_SIZE),
	  { [TDF_VA] = "addr", [TDF_SIZE] = "size", [TDF_FAILED] = "failed" } },
	{ "vmalloc", "free_vmap_area_noflush", PL_TRACE_FREE_VMAP_AREA, B(TDF_VA),
	  { [TDF_VA] = "va_start", [TDF_NRLAZY] = "nr_lazy" } },
	{ "vmalloc", "purge_vmap_area_lazy", PL_TRACE_PURGE_VMAP_AREA, B(TDF_NPURGED),
	  { [TDF_NPURGED] = "npurged" } },
	{ "percpu", NULL, PL_TRACE_PERCPU, 0, { 0 } },
	{ "sched", "sched_process_fork", TD_KIND_FORK, B(TDF_PARENT) | B(TDF_CHILD),
	  { [TDF_PARENT] = "parent_pid", [TDF_CHILD] = "child_pid" } },
};
#undef B

static const struct td_event_spec *spec_of(const char *system, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(specs); i++)
		if (!strcmp(specs[i].system, system) &&
		    (!specs[i].name || !strcmp(specs[i].name, name)))
			return &specs[i];
	return NULL;
}

/* ---- format text ------------------------------------------------------------- */

/* The line at *@p (up to @end), advancing *@p past its newline. */
static const char *next_line(const char **p, const char *end, size_t *n)
{
	const char *s = *p, *nl;

	if (s >= end)
		return NULL;
	nl = memchr(s, '\n', (size_t)(end - s));
	*n = (size_t)((nl ? nl : end) - s);
	*p = nl ? nl + 1 : end;
	return s;
}

/* "key:N" inside [s, e): N, or -1. */
static long field_num(const char *s, const char *e, const char *key)
{
	size_t kl = strlen(key);
	const char *p = memmem(s, (size_t)(e - s), key, kl);
	long v = 0;
	bool any = false;

	if (!p)
		return -1;
	for (p += kl; p < e && *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		any = true;
		if (v > 1000000)
			return -1;
	}
	return any ? v : -1;
}

/*
 * A "field:TYPE NAME[N];\toffset:O;\tsize:S;" line: the name (the last
 * identifier before the ';', an array suffix dropped) into @name.
 * Return: false if the line is not one.
 */
static bool parse_field_line(const char *s, size_t n, char *name, size_t cap, long *off,
			     long *size)
{
	const char *e = s + n, *f = memmem(s, n, "field:", 6), *semi, *q, *ne;

	if (!f)
		return false;
	f += 6;
	semi = memchr(f, ';', (size_t)(e - f));
	if (!semi)
		return false;
	ne = semi;
	while (ne > f && ne[-1] == ' ')
		ne--;
	if (ne > f && ne[-1] == ']') {	/* "char comm[16]": the name is before the [] */
		q = memrchr(f, '[', (size_t)(ne - f));
		if (!q)
			return false;
		ne = q;
	}
	while (ne > f && ne[-1] == ' ')
		ne--;
	q = ne;
	while (q > f && (q[-1] == '_' || (q[-1] >= 'a' && q[-1] <= 'z') ||
			 (q[-1] >= 'A' && q[-1] <= 'Z') || (q[-1] >= '0' && q[-1] <= '9')))
		q--;
	if (q == ne || (size_t)(ne - q) >= cap)
		return false;
	memcpy(name, q, (size_t)(ne - q));
	name[ne - q] = '\0';
	*off = field_num(semi, e, "offset:");
	*size = field_num(semi, e, "size:");
	return *off >= 0 && *size >= 0;
}

/* ---- gfp_flags: the print format's __print_flags() table ----------------- */

struct expr {
	const char *p, *end;
	bool bad;
};

static void ex_space(struct expr *x)
{
	while (x->p < x->end && (*x->p == ' ' || *x->p == '\t'))
		x->p++;
}

static bool is_ident(char c)
{
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static uint64_t ex_or(struct expr *x, int depth);

static uint64_t ex_unary(struct expr *x, int depth)
{
	uint64_t v = 0;

	if (depth > 64) {
		x->bad = true;
		return 0;
	}
	ex_space(x);
	if (x->p >= x->end) {
		x->bad = true;
		return 0;
	}
	if (*x->p == '~') {
		x->p++;
		return ~ex_unary(x, depth + 1);
	}
	if (*x->p == '(') {
		const char *q = x->p + 1;

		while (q < x->end && *q == ' ')
			q++;
		if (q < x->end && is_ident(*q)) {	/* a cast: ( gfp_t) or ( unsigned long) */
			while (q < x->end && (is_ident(*q) || *q == ' '))
				q++;
			if (q >= x->end || *q != ')') {
				x->bad = true;
				return 0;
			}
			x->p = q + 1;
			return ex_unary(x, depth + 1);
		}
		x->p++;
		v = ex_or(x, depth + 1);
		ex_space(x);
		if (x->p >= x->end || *x->p != ')') {
			x->bad = true;
			return 0;
		}
		x->p++;
		return v;
	}
	if (*x->p >= '0' && *x->p <= '9') {
		char *e;

		v = strtoull(x->p, &e, 0);	/* the text is NUL-terminated (a copy) */
		x->p = e;
		while (x->p < x->end && (*x->p == 'U' || *x->p == 'L' || *x->p == 'u' || *x->p == 'l'))
			x->p++;
		return v;
	}
	x->bad = true;
	return 0;
}

static uint64_t ex_shift(struct expr *x, int depth)
{
	uint64_t v = ex_unary(x, depth);

	for (;;) {
		ex_space(x);
		if (x->end - x->p >= 2 && x->p[0] == '<' && x->p[1] == '<') {
			uint64_t s;

			x->p += 2;
			s = ex_unary(x, depth);
			v = s < 64 ? v << s : 0;
		} else {
			return v;
		}
	}
}

static uint64_t ex_and(struct expr *x, int depth)
{
	uint64_t v = ex_shift(x, depth);

	for (;;) {
		ex_space(x);
		if (x->p < x->end && *x->p == '&' && (x->p + 1 >= x->end || x->p[1] != '&')) {
			x->p++;
			v &= ex_shift(x, depth);
		} else {
			return v;
		}
	}
}

static uint64_t ex_or(struct expr *x, int depth)
{
	uint64_t v = ex_and(x, depth);

	for (;;) {
		ex_space(x);
		if (x->p < x->end && *x->p == '|' && (x->p + 1 >= x->end || x->p[1] != '|')) {
			x->p++;
			v |= ex_and(x, depth);
		} else {
			return v;
		}
	}
}

/*
 * The { mask, "NAME" } entries of the first __print_flags() in @s (NUL
 * terminated), each with the gfp_t its name means. An entry that does not
 * evaluate ends the table (the rest is left out).
 */
static int parse_gfp_table(const char *s, struct td_format *f)
{
	const char *p = strstr(s, "__print_flags(");
	size_t cap = 0;

	if (!p)
		return 0;
	p = strchr(p, '{');
	while (p && *p == '{') {
		const char *comma, *q, *close;
		struct expr x;
		uint64_t mask;
		int depth = 0;

		/* the mask expression ends at the first ',' outside parentheses */
		for (comma = p + 1; *comma && !(*comma == ',' && !depth); comma++)
			depth += *comma == '(' ? 1 : *comma == ')' ? -1 : 0;
		if (!*comma)
			break;
		x = (struct expr){ p + 1, comma, false };
		mask = ex_or(&x, 0);
		ex_space(&x);
		q = comma + 1;
		while (*q == ' ')
			q++;
		if (*q != '"' || x.bad || x.p != comma)
			break;		/* { 0, ((void *)0) } ends the table */
		close = strchr(q + 1, '"');
		if (!close)
			break;
		if (f->nr_gfp == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			struct td_gfp_entry *n = realloc(f->gfp_tab, ncap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			f->gfp_tab = n;
			cap = ncap;
		}
		f->gfp_tab[f->nr_gfp].mask = mask;
		f->gfp_tab[f->nr_gfp].gfp = pl_trace_gfp_from_names(q + 1, close);
		f->nr_gfp++;
		p = strchr(close, '}');
		if (!p)
			break;
		p++;
		while (*p == ',' || *p == ' ')
			p++;
	}
	return 0;
}

gfp_t td_format_gfp(struct td_format *f, uint64_t raw)
{
	unsigned int slot = (unsigned int)((raw ^ (raw >> 17)) * 0x9e3779b1u) % TD_GFP_CACHE;
	uint64_t left = raw;
	gfp_t gfp = 0;

	if ((f->cache_used >> slot & 1) && f->cache_key[slot] == raw)
		return f->cache_val[slot];
	for (size_t i = 0; i < f->nr_gfp && left; i++) {
		uint64_t m = f->gfp_tab[i].mask;

		if (m && (left & m) == m) {
			gfp |= f->gfp_tab[i].gfp;
			left &= ~m;
		}
	}
	f->cache_key[slot] = raw;
	f->cache_val[slot] = gfp;
	f->cache_used |= 1ull << slot;
	return gfp;
}

/* ---- the format file ----------------------------------------------------------- */

int td_format_parse(const char *text, size_t len, const char *system, struct td_format *f,
		    char *err, size_t errlen)
{
	const char *p = text, *end = text + len, *line, *pf = NULL;
	const struct td_event_spec *spec;
	bool have_name = false;
	size_t n;

	memset(f, 0, sizeof(*f));
	f->id = -1;
	snprintf(f->system, sizeof(f->system), "%s", system);
	while ((line = next_line(&p, end, &n)) != NULL) {
		char name[64];
		long off, size;

		if (n > 6 && !memcmp(line, "name: ", 6)) {
			size_t l = n - 6 < sizeof(f->name) - 1 ? n - 6 : sizeof(f->name) - 1;

			memcpy(f->name, line + 6, l);
			f->name[l] = '\0';
			have_name = true;
		} else if (n > 4 && !memcmp(line, "ID: ", 4)) {
			f->id = (int)field_num(line, line + n, "ID: ");
		} else if (n > 10 && !memcmp(line, "print fmt:", 10)) {
			pf = line;
			break;
		} else if (parse_field_line(line, n, name, sizeof(name), &off, &size)) {
			int which = -1;

			if (!strcmp(name, "common_type"))
				which = TDF_TYPE;
			else if (!strcmp(name, "common_pid"))
				which = TDF_PID;
			spec = which < 0 && have_name ? spec_of(system, f->name) : NULL;
			for (int i = 0; spec && i < NR_TDF && which < 0; i++)
				if (spec->fields[i] && !strcmp(spec->fields[i], name))
					which = i;
			if (which < 0)
				continue;
			if (off > 65535 || (size != 1 && size != 2 && size != 4 && size != 8)) {
				snprintf(err, errlen, "unknown event layout: %s/%s's field %s has "
					 "size %ld at offset %ld", system, f->name, name, size, off);
				return -EINVAL;
			}
			f->off[which] = (uint16_t)off;
			f->size[which] = (uint8_t)size;
			f->have |= 1u << which;
			if ((uint32_t)(off + size) > f->min_size)
				f->min_size = (uint32_t)(off + size);
		}
	}
	if (!have_name || f->id < 0 || f->id > 65535) {
		snprintf(err, errlen, "a format file of system %s has no name or ID", system);
		return -EINVAL;
	}
	if ((f->have & (1u << TDF_TYPE | 1u << TDF_PID)) != (1u << TDF_TYPE | 1u << TDF_PID)) {
		snprintf(err, errlen, "unknown event layout: %s/%s has no common_type or common_pid",
			 system, f->name);
		return -EINVAL;
	}
	spec = spec_of(system, f->name);
	f->kind = spec ? spec->kind : TD_KIND_OTHER;
	if (spec && (f->have & spec->need) != spec->need) {
		for (int i = 0; i < NR_TDF; i++)
			if ((spec->need >> i & 1) && !(f->have >> i & 1)) {
				snprintf(err, errlen, "unknown event layout: %s/%s has no field %s",
					 system, f->name, spec->fields[i]);
				break;
			}
		return -EINVAL;
	}
	if (spec && f->kind == PL_TRACE_PAGE_ALLOC && pf) {
		char *copy = strndup(pf, (size_t)(end - pf));
		int ret;

		if (!copy)
			return -ENOMEM;
		ret = parse_gfp_table(copy, f);
		free(copy);
		if (ret)
			return ret;
	}
	return 0;
}

void td_format_release(struct td_format *f)
{
	free(f->gfp_tab);
	f->gfp_tab = NULL;
	f->nr_gfp = 0;
}

int td_header_page_parse(const char *text, size_t len, struct td_page_layout *l, char *err,
			 size_t errlen)
{
	const char *p = text, *end = text + len, *line;
	unsigned int found = 0;
	size_t n;

	memset(l, 0, sizeof(*l));
	while ((line = next_line(&p, end, &n)) != NULL) {
		char name[64];
		long off, size;

		if (!parse_field_line(line, n, name, sizeof(name), &off, &size) || off > 4096)
			continue;
		if (!strcmp(name, "timestamp") && size == 8) {
			l->ts_off = (uint16_t)off;
			l->ts_size = 8;
			found |= 1;
		} else if (!strcmp(name, "commit") && (size == 4 || size == 8)) {
			l->commit_off = (uint16_t)off;
			l->commit_size = (uint8_t)size;
			found |= 2;
		} else if (!strcmp(name, "data")) {
			l->data_off = (uint16_t)off;
			found |= 4;
		}
	}
	if (found != 7 || l->data_off < l->commit_off + l->commit_size ||
	    l->data_off < l->ts_off + 8) {
		snprintf(err, errlen, "header_page does not describe a ring-buffer page "
			 "(timestamp, commit, data)");
		return -EINVAL;
	}
	return 0;
}
