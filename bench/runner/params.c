// SPDX-License-Identifier: MIT
/*
 * params.c - pagelab-bench's parameter validation layer: every key=value
 * pair of a run checked against its key's row (kind and range, from the
 * key tables: keys.c) before the suite starts, so bad input is one line on
 * stderr and exit status 2 before any machine exists; and the strict
 * number parser the suites read their values with.
 *
 * Invariants: a value that passed bench_check_params() parses with
 * param_ulong() and lies in its row's range (`pagelab-bench --keys` prints
 * the rows, and the CLI contract test feeds each one invalid values).
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "bench.h"
#include "pagelab/snapshot.h"

/*
 * Parse @s (to @end, or its NUL) as an unsigned number: digits only (0x for
 * hex), no sign, no blanks; with @size a K/M/G suffix. Return: 0, or
 * -EINVAL (not a number) / -ERANGE (above ULONG_MAX).
 */
static int parse_number(const char *s, size_t len, bool size, unsigned long *out)
{
	char buf[64], *end;
	unsigned long long n;
	unsigned int shift = 0;

	if (!len || len >= sizeof(buf) || s[0] < '0' || s[0] > '9')
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (size && len > 1) {
		switch (buf[len - 1]) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		case 'T': case 't': shift = 40; break;
		default: break;
		}
		if (shift)
			buf[len - 1] = '\0';
	}
	errno = 0;
	n = strtoull(buf, &end, 0);
	if (*end || end == buf)
		return -EINVAL;
	if (errno == ERANGE || n > ULONG_MAX || (shift && n > (ULONG_MAX >> shift)))
		return -ERANGE;
	*out = (unsigned long)(n << shift);
	return 0;
}

static __printf(3, 4) int bad(const char *key, const char *val, const char *fmt, ...)
{
	char why[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "pagelab-bench: %s=%.60s%s: %s\n", key, val, strlen(val) > 60 ? "..." : "",
		why);
	return 2;
}

static int check_number(const struct bench_key *sp, const char *val, const char *s, size_t len)
{
	unsigned long n;
	int err = parse_number(s, len, sp->kind == BK_SIZE, &n);

	if (err == -ERANGE)
		return bad(sp->name, val, "too large (overflows)");
	if (err)
		return bad(sp->name, val, "not a number (a non-negative integer%s)",
			   sp->kind == BK_SIZE ? ", K/M/G/T suffixes allowed" : "");
	if (n < sp->min || n > sp->max)
		return bad(sp->name, val, "%lu is not in %lu..%lu", n, sp->min, sp->max);
	if (sp->kind == BK_POW2LIST && (n & (n - 1)))
		return bad(sp->name, val, "%lu is not a power of two", n);
	return 0;
}

static bool name_in(const char *names, const char *s, size_t len)
{
	for (const char *p = names; *p;) {
		size_t n = strcspn(p, ",");

		if (n == len && !strncmp(p, s, len))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

static int check_item(const struct bench_key *sp, const char *val, const char *s, size_t len)
{
	char name[160], err[160];
	struct pl_design d;

	switch (sp->kind) {
	case BK_DESIGN:
	case BK_DESIGNS:
		if (!len || len >= sizeof(name))
			return bad(sp->name, val, "empty or unknown design");
		memcpy(name, s, len);
		name[len] = '\0';
		/* a preset, switches, or a preset plus switches (pl_design_parse()) */
		if (pl_design_parse(name, &d, err, sizeof(err))) {
			fprintf(stderr, "pagelab-bench: unknown design '%s': %s (see pagelab-bench "
				"--list)\n", name, err);
			return 2;
		}
		return 0;
	case BK_NAME:
	case BK_NAMES:
		if (!name_in(sp->names, s, len))
			return bad(sp->name, val, "'%.*s' is not one of %s", (int)len, s, sp->names);
		return 0;
	default:
		return check_number(sp, val, s, len);
	}
}

static int check_value(const struct bench_key *sp, const char *val)
{
	bool list = sp->kind == BK_NUMLIST || sp->kind == BK_POW2LIST || sp->kind == BK_DESIGNS ||
		    sp->kind == BK_NAMES;
	int n = 0;

	if (!*val)
		return bad(sp->name, val, "empty value");
	if (sp->kind == BK_TEXT) {
		/* peers= is quoted into a shell command (range_workload.c run_peer()) */
		if (!strcmp(sp->name, "peers") && strchr(val, '\''))
			return bad(sp->name, val, "a path with a single quote");
		return strlen(val) < PATH_MAX ? 0 : bad(sp->name, val, "too long");
	}
	if (!list)
		return check_item(sp, val, val, strlen(val));
	for (const char *p = val;; n++) {
		size_t len = strcspn(p, ",");
		int err = check_item(sp, val, p, len);

		if (err)
			return err;
		if (n == 32)
			return bad(sp->name, val, "more than 32 items");
		if (!p[len])
			break;
		p += len + 1;
	}
	return 0;
}

int bench_check_params(const struct bench *b)
{
	for (int i = 0; i < b->nr_params; i++) {
		struct bench_key k;
		const struct bench_key *sp = &k;
		int err;

		if (bench_key_find(b->key_table, b->no_machine, b->keys[i], &k) || k.kind == BK_SHARED)
			return bad(b->keys[i], b->vals[i], "no validation rule (a bug)");
		for (int j = 0; j < i; j++)
			if (!strcmp(b->keys[j], b->keys[i]))
				return bad(b->keys[i], b->vals[i], "given twice");
		err = check_value(sp, b->vals[i]);
		if (err)
			return err;
	}
	return 0;
}

unsigned long param_ulong(const struct bench *b, const char *key, unsigned long def)
{
	const char *v = param_str(b, key, NULL);
	struct bench_key k;
	unsigned long n;

	if (!v)
		return def;
	if (parse_number(v, strlen(v), !bench_key_find(b->key_table, b->no_machine, key, &k) && k.kind == BK_SIZE,
			 &n)) {
		fprintf(stderr, "pagelab-bench: %s=%s is not a number\n", key, v);
		exit(2);
	}
	return n;
}

/*
 * The machine's metadata must fit the host: the memmap (a struct page per
 * 4 KiB) must fit in the memory available now even if every struct page
 * were touched. It is a MAP_NORESERVE mapping committed as touched (boot
 * writes the heads of the blocks it frees and the pages below 4 GiB), so
 * a run commits far less: 2.2 GiB at mem=1T on exit_avalanche at 128 vCPUs
 * (the memmap is 12 GiB), 0.66 GiB at 256G. The limit was half the
 * available memory, which refused 1 TiB on a 24 GiB host.
 *
 * A machine loaded with a snapshot's state (@touched) is another matter:
 * every page not free in the snapshot is allocated, so nearly every
 * struct page is written and the whole memmap committed. That must fit
 * in half the memory available, leaving the rest to the host.
 * Return: 0, or 2 after the one-line message.
 */
int bench_check_host_fit(unsigned long mem_bytes, bool touched)
{
	long avail = sysconf(_SC_AVPHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	unsigned long pages = (mem_bytes >> PAGE_SHIFT) + MAX_ORDER_NR_PAGES;
	unsigned long need = pages * sizeof(struct page), have;

	if (avail <= 0 || psize <= 0)
		return 0;
	have = (unsigned long)avail * (unsigned long)psize;
	if (touched && need > have / 2) {
		fprintf(stderr, "pagelab-bench: a %lu MiB machine loaded with a snapshot's state "
			"writes %.1f MiB of page metadata (struct page), more than half the host's "
			"%.1f MiB available\n", mem_bytes >> 20, (double)need / (1 << 20),
			(double)have / (1 << 20));
		return 2;
	}
	if (need <= have)
		return 0;
	fprintf(stderr, "pagelab-bench: mem=%lu MiB needs %.1f MiB of page metadata (struct page), "
		"more than the host's %.1f MiB available\n", mem_bytes >> 20,
		(double)need / (1 << 20), (double)have / (1 << 20));
	return 2;
}

int bench_snapshot_read(const char *key, const char *dir, struct pl_snapshot *snap)
{
	char why[256];
	int err;

	pl_warn_set_quiet(true);
	err = pl_snapshot_read(dir, snap);
	pl_warn_set_quiet(false);
	if (!err)
		return 0;
	pl_warn_last(why, sizeof(why));
	fprintf(stderr, "pagelab-bench: %s=%s: %s\n", key, dir, why);
	return 2;
}

const char *param_str(const struct bench *b, const char *key, const char *def)
{
	for (int i = 0; i < b->nr_params; i++)
		if (!strcmp(b->keys[i], key))
			return b->vals[i];
	return def;
}

void bench_design(const char *spec, struct pl_design *out)
{
	char err[160];

	if (pl_design_parse(spec, out, err, sizeof(err))) {
		fprintf(stderr, "pagelab-bench: unknown design '%s': %s (see pagelab-bench --list)\n", spec,
			err);
		exit(2);
	}
}

int bench_designs(const struct bench *b, const char *def, const char **names, int max)
{
	static char buf[256];
	const char *list = param_str(b, "design", def);
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	if (!*buf) {
		fprintf(stderr, "pagelab-bench: design= names no design\n");
		exit(2);
	}
	for (char *tok = strtok(buf, ","); tok && n < max; tok = strtok(NULL, ",")) {
		struct pl_design d;

		bench_design(tok, &d);
		names[n++] = tok;
	}
	return n;
}

bool bench_vt_on(const struct bench *b)
{
	return param_ulong(b, "vtime", 0) != 0;
}
