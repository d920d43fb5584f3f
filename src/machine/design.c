// SPDX-License-Identifier: MIT
/*
 * design.c - the design switches and presets: one table row per switch
 * (its name, the struct pl_design field it sets, its values, where it comes
 * from and what it means) and one row per preset (its name and its switches
 * written as a spec). pl_design_parse() reads "PRESET+SWITCH+SWITCH=VALUE",
 * pl_design_preset() is the same for a bare preset name, and
 * pl_design_format() writes a design back as its switches, pl_design_canonical()
 * as the one string every front end reports for it ("v6.18+SWITCH..."), and
 * pl_design_check() parses a spec into that string (for front ends with no C
 * structs). This is the only parser of a design spec: pagelab-bench (every
 * suite), the pagelab commands (through pagelab-bench --design), the Python
 * API and the C API all call it.
 *
 * Adding a switch is one row in pl_design_switches[] plus its field in
 * struct pl_design (include/pagelab/config.h); every front end (pagelab-bench
 * design=, pagelab list, the Python API, the fuzzer) reads the table.
 *
 * Invariants: a parse either fills *out completely or leaves it untouched;
 * the name of a parsed design is interned (one copy per distinct spec, kept
 * for the life of the process) so struct pl_design stays a plain value that
 * machines copy.
 */
#include <errno.h>
#include <stddef.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mm/validate.h"
#include "pagelab/pagelab.h"

_Static_assert(sizeof(enum vmap_index) == sizeof(int), "enum switches are stored as int");

static const char *const vmap_index_values[] = { "rbtree", "maple", NULL };

#define BOOL_SWITCH(field, orig, text) \
	{ #field, offsetof(struct pl_design, field), PL_SWITCH_BOOL, NULL, orig, text, NULL }
#define BOOL_SWITCH_IMPLIES(field, orig, text, other) \
	{ #field, offsetof(struct pl_design, field), PL_SWITCH_BOOL, NULL, orig, text, #other }

const struct pl_design_switch pl_design_switches[] = {
	BOOL_SWITCH(mt_counts, "seed 002",
		    "per-migratetype free block counts; /proc/pagetypeinfo's free-block section reads them without zone->lock"),
	BOOL_SWITCH(mt_counts_blocks, "pagelab",
		    "per-migratetype pageblock counts: \"Number of blocks type\" O(1) and lock-free too (beyond seed 002)"),
	BOOL_SWITCH(pcp_owner, "seed 003",
		    "PCPs take whole pageblocks and own them; frees route to the owner, buddies merge under pcp->lock"),
	BOOL_SWITCH(pcp_owner_bulk_fallback, "pagelab",
		    "pcp_owner's degraded refill is the baseline's rmqueue_bulk(), not the RFC's chunks"),
	BOOL_SWITCH(free_contig_batch, "seed 001",
		    "__free_contig_range() frees order-0 pages as the largest aligned power-of-two chunks"),
	BOOL_SWITCH(vmalloc_high_order, "a06157804399 (v6.19-rc1)",
		    "vm_area_alloc_pages() takes the largest orders first and split_page()s them"),
	BOOL_SWITCH(vfree_batch, "seed 000",
		    "vfree() frees an area's pages through free_pages_bulk() (contiguous pfn runs)"),
	{ "vmap_index", offsetof(struct pl_design, vmap_index), PL_SWITCH_ENUM, vmap_index_values,
	  "seed 004", "the vmap_area index: rbtree (the augmented rbtree of 6.18) or maple (maple trees)",
	  NULL },
	BOOL_SWITCH(vmap_pcpu_bump, "seed 004 (patches 10-12)",
		    "short-lived page-aligned vmalloc areas come from per-CPU bump chunks"),
	BOOL_SWITCH(vmap_bump_wide_align, "pagelab",
		    "the bump chunks also serve alignments up to 64 KiB (vmalloc'd stacks; beyond seed 004)"),
	BOOL_SWITCH(pcp_premerge, "pagelab",
		    "a PCP drain merges buddies on the same PCP under pcp->lock first (Zi Yan's review of seed 003)"),
	BOOL_SWITCH(targeted_drain, "pagelab",
		    "a failed allocation drains only the CPUs holding the migratetype, most first (seed 003 thread)"),
	BOOL_SWITCH(pcp_batch2x, "pagelab",
		    "zone_batchsize() doubled (63 -> 127): the batch that sizes refills, drains and pcp->high's floor (a what-if of 6.18's batch rule)"),
	BOOL_SWITCH_IMPLIES(pcp_block_economy, "pagelab",
			    "the zone buddy deals in whole pageblocks, PCPs split and merge below them, steal blocks (seed 003 thread)",
			    pcp_owner),
	BOOL_SWITCH_IMPLIES(economy_batch, "pagelab",
			    "the block economy with 6.18's batch sizes: refills take nr_pcp_alloc()'s pages and drains give back nr_pcp_free()'s, in whole blocks",
			    pcp_block_economy),
	BOOL_SWITCH_IMPLIES(economy_ramp, "pagelab",
			    "economy_batch whose refills double the pages the last one took, as 6.18 doubles its batch (alloc_factor), never past pcp->high - batch",
			    economy_batch),
	{ NULL, 0, PL_SWITCH_BOOL, NULL, NULL, NULL, NULL },
};

const struct pl_design_preset_def pl_design_preset_table[] = {
	{ "v6.18", "", "the baseline" },
	{ "mt-counts", "mt_counts", "seed 002" },
	{ "pcp-owner", "pcp_owner", "seed 003" },
	{ "contig-batch", "free_contig_batch", "seed 001" },
	{ "v6.19-rc1", "vmalloc_high_order", "v6.19-rc1's vmalloc (a06157804399)" },
	{ "v6.19-rc1+contig", "free_contig_batch+vmalloc_high_order+vfree_batch",
	  "seed 000 on v6.19-rc1" },
	{ "all", "mt_counts+pcp_owner+free_contig_batch+vmalloc_high_order+vfree_batch+"
		 "vmap_index=maple+vmap_pcpu_bump", "every seed's switch (not pagelab's own)" },
	{ "maple", "vmap_index=maple+vmap_pcpu_bump", "seed 004" },
	{ "maple-index", "vmap_index=maple", "seed 004's maple index alone, without the bump chunks" },
	{ "mt-counts+blocks", "mt_counts+mt_counts_blocks", "seed 002 plus pagelab's O(1) block counts" },
	{ "maple+wide-align", "vmap_index=maple+vmap_pcpu_bump+vmap_bump_wide_align",
	  "seed 004 plus pagelab's wide-alignment bump chunks" },
	{ "pcp-owner+bulk", "pcp_owner+pcp_owner_bulk_fallback",
	  "seed 003 degrading to rmqueue_bulk() (pagelab's option)" },
	{ "pcp-premerge", "pcp_premerge", "pagelab's own, from seed 003's review" },
	{ "targeted-drain", "targeted_drain", "pagelab's own, from the seed 003 thread" },
	{ "block-economy", "pcp_owner+pcp_block_economy", "pagelab's own, from the seed 003 thread" },
	{ "pcp-owner+targeted-drain", "pcp_owner+targeted_drain",
	  "seed 003 with pagelab's own targeted drain" },
	{ "block-economy+batch", "pcp_owner+pcp_block_economy+economy_batch",
	  "pagelab's own: the block economy with 6.18's batch sizes in whole blocks" },
	{ "block-economy+ramp", "pcp_owner+pcp_block_economy+economy_batch+economy_ramp",
	  "pagelab's own: block-economy+batch, each refill doubling the pages the last one took" },
	{ NULL, NULL, NULL },
};

/* pl_design_presets[] predates the table; kept in the table's order. */
const char *const pl_design_presets[] = { "v6.18", "mt-counts", "pcp-owner", "contig-batch",
					  "v6.19-rc1", "v6.19-rc1+contig", "all", "maple", "maple-index",
					  "mt-counts+blocks", "maple+wide-align", "pcp-owner+bulk",
					  "pcp-premerge", "targeted-drain", "block-economy",
					  "pcp-owner+targeted-drain", "block-economy+batch",
					  "block-economy+ramp", NULL };

const struct pl_design_switch *pl_design_switch_find(const char *name, size_t len)
{
	if (!name)
		return NULL;
	for (const struct pl_design_switch *s = pl_design_switches; s->name; s++)
		if (strlen(s->name) == len && !strncmp(s->name, name, len))
			return s;
	return NULL;
}

static const struct pl_design_preset_def *preset_find(const char *name, size_t len)
{
	for (const struct pl_design_preset_def *p = pl_design_preset_table; p->name; p++)
		if (strlen(p->name) == len && !strncmp(p->name, name, len))
			return p;
	return NULL;
}

int pl_design_switch_get(const struct pl_design *d, const struct pl_design_switch *s)
{
	const char *field;

	if ((!d || !s) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	field = (const char *)d + s->offset;

	return s->kind == PL_SWITCH_BOOL ? *(const bool *)field : *(const int *)field;
}

static void switch_set(struct pl_design *d, const struct pl_design_switch *s, int value)
{
	char *field = (char *)d + s->offset;

	if (s->kind == PL_SWITCH_BOOL)
		*(bool *)field = value;
	else
		*(int *)field = value;
}

/* One "name" or "name=value" token of length @len. */
static int apply_switch(struct pl_design *d, const char *tok, size_t len, char *err, size_t errsize)
{
	const char *eq = memchr(tok, '=', len);
	size_t nlen = eq ? (size_t)(eq - tok) : len;
	const struct pl_design_switch *s = pl_design_switch_find(tok, nlen);
	const char *val = eq ? eq + 1 : NULL;
	size_t vlen = eq ? len - nlen - 1 : 0;

	if (!s) {
		pl_set_err(err, errsize, "unknown design preset or switch '%.*s'", (int)nlen, tok);
		return -EINVAL;
	}
	if (s->kind == PL_SWITCH_BOOL) {
		if (!val || (vlen == 1 && (*val == '1' || *val == 'y' || *val == 'Y'))) {
			switch_set(d, s, 1);
			/* a switch that needs another turns it on, and what that one needs */
			for (const struct pl_design_switch *i = s; i && i->implies;) {
				i = pl_design_switch_find(i->implies, strlen(i->implies));
				if (i)
					switch_set(d, i, 1);
			}
		} else if (vlen == 1 && (*val == '0' || *val == 'n' || *val == 'N')) {
			switch_set(d, s, 0);
		} else {
			pl_set_err(err, errsize, "design switch %s takes no value, or 0/1 (got '%.*s')",
				s->name, (int)vlen, val);
			return -EINVAL;
		}
		return 0;
	}
	for (int i = 0; val && s->values[i]; i++) {
		if (strlen(s->values[i]) == vlen && !strncmp(s->values[i], val, vlen)) {
			switch_set(d, s, i);
			return 0;
		}
	}
	pl_set_err(err, errsize, "design switch %s needs a value: %s=%s%s%s", s->name, s->name,
		s->values[0], s->values[1] ? "|" : "", s->values[1] ? s->values[1] : "");
	return -EINVAL;
}

/* Apply a '+'-separated list of switches (possibly empty) to @d. */
static int apply_switches(struct pl_design *d, const char *list, char *err, size_t errsize)
{
	while (*list) {
		const char *plus = strchr(list, '+');
		size_t len = plus ? (size_t)(plus - list) : strlen(list);

		if (!len) {
			pl_set_err(err, errsize, "empty design switch in '%s'", list);
			return -EINVAL;
		}
		if (apply_switch(d, list, len, err, errsize))
			return -EINVAL;
		list += len + (plus ? 1 : 0);
		if (plus && !*list) {
			pl_set_err(err, errsize, "design ends with '+'");
			return -EINVAL;
		}
	}
	return 0;
}

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
struct interned {
	struct interned *next;
	char name[];
};
static struct interned *interned;	/* protected by intern_lock; never freed */

static const char *intern_name(const char *name)
{
	struct interned *i;
	size_t len = strlen(name);

	pthread_mutex_lock(&intern_lock);
	for (i = interned; i; i = i->next)
		if (!strcmp(i->name, name))
			break;
	if (!i) {
		i = malloc(sizeof(*i) + len + 1);
		if (i) {
			memcpy(i->name, name, len + 1);
			i->next = interned;
			interned = i;
		}
	}
	pthread_mutex_unlock(&intern_lock);
	return i ? i->name : NULL;
}

int pl_design_parse(const char *spec, struct pl_design *out, char *err, size_t errsize)
{
	const struct pl_design_preset_def *p = NULL;
	const char *rest = spec;
	struct pl_design d;
	size_t len;

	if (!spec || !*spec || !out) {
		pl_set_err(err, errsize, out ? "empty design" : "nowhere to put the design");
		return -EINVAL;
	}
	/* The longest preset name that is a '+'-prefix of the spec ("v6.19-rc1+contig"). */
	for (const char *end = spec; ; end++) {
		if (*end == '+' || !*end) {
			len = (size_t)(end - spec);
			if (preset_find(spec, len)) {
				p = preset_find(spec, len);
				rest = *end ? end + 1 : end;
			}
		}
		if (!*end)
			break;
	}
	memset(&d, 0, sizeof(d));
	/* Without a preset the switches apply to the baseline (design=pcp_owner). */
	if (p && apply_switches(&d, p->switches, err, errsize))
		return -EINVAL;	/* a bad table row: caught by the tests */
	if (p && rest != spec && *rest == '\0' && rest[-1] == '+') {
		pl_set_err(err, errsize, "design ends with '+'");
		return -EINVAL;
	}
	if (apply_switches(&d, rest, err, errsize))
		return -EINVAL;
	d.name = p && !*rest ? p->name : intern_name(spec);
	if (!d.name) {
		pl_set_err(err, errsize, "out of memory");
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

int pl_design_preset(const char *name, struct pl_design *out)
{
	const struct pl_design_preset_def *p;

	if (pl_check_ptr(__func__, name, "name") || pl_check_ptr(__func__, out, "out"))
		return -EINVAL;
	p = preset_find(name, strlen(name));
	if (!p)
		return -EINVAL;
	return pl_design_parse(p->name, out, NULL, 0);
}

long pl_design_format(const struct pl_design *d, char *buf, size_t size)
{
	size_t n = 0;

	if ((!d || (!buf && size)) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (size)
		buf[0] = '\0';
	for (const struct pl_design_switch *s = pl_design_switches; s->name; s++) {
		int v = pl_design_switch_get(d, s);
		int w;

		if (!v)
			continue;
		if (s->kind == PL_SWITCH_BOOL)
			w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%s",
				     n ? "+" : "", s->name);
		else
			w = snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, "%s%s=%s",
				     n ? "+" : "", s->name, s->values[v]);
		n += (size_t)w;
	}
	return n < size ? (long)n : -ENOSPC;
}

long pl_design_canonical(const struct pl_design *d, char *buf, size_t size)
{
	char sw[512];
	long n;
	int w;

	if (!d || !buf || !size)
		return -ENOSPC;
	n = pl_design_format(d, sw, sizeof(sw));
	if (n < 0)
		return n;
	w = snprintf(buf, size, "v6.18%s%s", n ? "+" : "", sw);
	return (size_t)w < size ? w : -ENOSPC;
}

int pl_design_check(const char *spec, char *canon, size_t size, char *err, size_t errsize)
{
	struct pl_design d;
	int ret = pl_design_parse(spec, &d, err, errsize);

	if (ret)
		return ret;
	if (pl_design_canonical(&d, canon, size) < 0) {
		pl_set_err(err, errsize, "design '%s': its canonical string does not fit", spec);
		return -ENOSPC;
	}
	return 0;
}
