// SPDX-License-Identifier: MIT
/*
 * parse.c - one line of a trace: raw tracefs `trace`/`trace_pipe` text,
 * `trace-cmd report` text and `perf script` text of the kmem, vmalloc,
 * percpu and memory-pressure events, into a struct pl_trace_event
 * (pl_trace_parse_line()); the reader (reader.c) feeds it line by line.
 *
 * One line format covers the three: "COMM-PID [CPU] FLAGS? SECS.FRAC:
 * [SYSTEM:]EVENT: key=value ...". The CPU is the first "[digits]" on the
 * line, the timestamp the first token after it that starts with a digit and
 * ends with ':' (tracefs and trace-cmd may put latency flags between), the
 * event name the next token with any "system:" prefix (perf) dropped.
 * perf's callchain frames (perf record -g) under an event are counted and
 * skipped, as header and comment lines are.
 *
 * The task: the token right before the "[CPU]" column is "COMM-PID"
 * (tracefs, trace-cmd; "<...>-PID" where the kernel had no name) or, in
 * perf's "COMM PID [CPU]", PID alone after COMM. A sched_process_fork is
 * returned as such (2) for the reader to follow.
 *
 * Invariants: no allocation; every number is parsed strictly and held to
 * what a kernel can print (trace.h: PL_TRACE_PFN_LIMIT, PL_TRACE_MAX_CPUS,
 * PL_TRACE_MAX_MIGRATETYPE, MAX_PAGE_ORDER); a line outside is malformed.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/trace.h"
#include "tracedat.h"

const char *const pl_trace_type_names[NR_PL_TRACE_TYPES] = {
	"mm_page_alloc", "mm_page_free", "mm_page_free_batched", "mm_page_alloc_zone_locked",
	"mm_page_pcpu_drain", "mm_page_alloc_extfrag", "alloc_vmap_area",
	"free_vmap_area_noflush", "purge_vmap_area_lazy", "percpu",
	"mm_compaction_try_to_compact_pages", "mm_compaction_begin", "mm_compaction_end",
	"mm_compaction_isolate_migratepages", "mm_compaction_isolate_freepages",
	"mm_compaction_fast_isolate_freepages", "mm_compaction_migratepages",
	"mm_compaction_suitable", "mm_compaction_finished", "mm_compaction_deferred",
	"mm_compaction_defer_compaction", "mm_compaction_defer_reset",
	"mm_compaction_wakeup_kcompactd", "mm_compaction_kcompactd_wake",
	"mm_compaction_kcompactd_sleep", "mm_migrate_pages", "mm_migrate_pages_start",
	"mm_vmscan_wakeup_kswapd", "mm_vmscan_kswapd_wake", "mm_vmscan_kswapd_sleep",
	"mm_vmscan_direct_reclaim_begin", "mm_vmscan_direct_reclaim_end",
};

/* As include/trace/events/compaction.h and migrate.h print them. */
const char *const pl_compact_result_names[NR_PL_COMPACT_RESULTS] = {
	"not_suitable_zone", "skipped", "deferred", "no_suitable_page", "continue", "complete",
	"partial_skipped", "contended", "success",
};

const char *const pl_migrate_reason_names[NR_PL_MR_REASONS] = {
	"compaction", "memory_failure", "memory_hotplug", "syscall_or_cpuset", "mempolicy_mbind",
	"numa_misplaced", "contig_range", "longterm_pin", "demotion", "damon",
};

const char *const pl_trace_warn_names[NR_PL_TRACE_WARN] = {
#define PL_TW_NAME(name) #name,
	PL_TRACE_WARNINGS(PL_TW_NAME)
#undef PL_TW_NAME
};

const char *const pl_trace_format_names[] = { "unknown", "ftrace", "trace-cmd", "perf",
					      "trace.dat" };

/* ---- one line ----------------------------------------------------------------- */

static inline bool is_digit(char c) { return c >= '0' && c <= '9'; }

/*
 * A number at *@p (decimal, or hex after 0x; '-' allowed), advancing *@p.
 * Strict: a value that does not fit an unsigned long (or, negative, a
 * long) is no number: "order=4294967299" must not read as 3.
 */
static bool parse_unum(const char **p, const char *end, unsigned long *out, bool *neg)
{
	const char *s = *p;
	unsigned long v = 0;
	bool any = false, over = false;

	*neg = false;
	if (s < end && *s == '-') {
		*neg = true;
		s++;
	}
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		for (s += 2; s < end; s++) {
			unsigned int d;

			if (is_digit(*s))
				d = (unsigned int)(*s - '0');
			else if ((*s | 0x20) >= 'a' && (*s | 0x20) <= 'f')
				d = (unsigned int)((*s | 0x20) - 'a' + 10);
			else
				break;
			over |= v >> (sizeof(v) * 8 - 4) != 0;
			v = v << 4 | d;
			any = true;
		}
	} else {
		for (; s < end && is_digit(*s); s++) {
			unsigned long d = (unsigned long)(*s - '0');

			over |= v > (ULONG_MAX - d) / 10;
			v = v * 10 + d;
			any = true;
		}
	}
	*p = s;
	*out = v;
	if (*neg && v > (unsigned long)LONG_MAX + 1)
		over = true;
	return any && !over;
}

/* A signed number (see parse_unum()) that fits a long. */
static bool parse_num(const char **p, const char *end, long *out)
{
	unsigned long v;
	bool neg;

	if (!parse_unum(p, end, &v, &neg) || (!neg && v > LONG_MAX))
		return false;
	*out = neg ? (long)(0 - v) : (long)v;
	return true;
}

/* A number in [@lo, @hi] (see parse_num()). */
static bool parse_range(const char **p, const char *end, long lo, long hi, long *out)
{
	return parse_num(p, end, out) && *out >= lo && *out <= hi;
}

/* A token against a string literal: the length test first, memcmp of a constant size. */
#define tok_eq(s, n, lit) ((n) == sizeof(lit) - 1 && !memcmp((s), (lit), sizeof(lit) - 1))

/* gfp_flags=A|B|C onto pagelab's gfp_t; the migratetype comes from its own field. */
gfp_t pl_trace_gfp_from_names(const char *s, const char *end)
{
	gfp_t gfp = 0;

	while (s < end) {
		const char *t = s;
		size_t n;

		while (s < end && *s != '|')
			s++;
		n = (size_t)(s - t);
		if (s < end)
			s++;
		if (tok_eq(t, n, "GFP_ATOMIC"))
			gfp |= GFP_ATOMIC;
		else if (tok_eq(t, n, "GFP_NOWAIT"))
			gfp |= GFP_NOWAIT;
		else if (tok_eq(t, n, "__GFP_HIGH"))
			gfp |= __GFP_HIGH;
		else if (tok_eq(t, n, "GFP_DMA32") || tok_eq(t, n, "__GFP_DMA32"))
			gfp |= __GFP_DMA32;
		else if (tok_eq(t, n, "__GFP_COMP"))
			gfp |= __GFP_COMP;
		else if (tok_eq(t, n, "__GFP_NOWARN"))
			gfp |= __GFP_NOWARN;
		else if (tok_eq(t, n, "__GFP_ZERO"))
			gfp |= __GFP_ZERO;
		else if (n >= 13 && !memcmp(t, "GFP_TRANSHUGE", 13))
			gfp |= GFP_KERNEL | __GFP_COMP;
		else if (n > 4 && !memcmp(t, "GFP_", 4))	/* KERNEL, USER, NOFS, NOIO, ... */
			gfp |= GFP_KERNEL;
		else if (tok_eq(t, n, "__GFP_DIRECT_RECLAIM") || tok_eq(t, n, "__GFP_RECLAIM"))
			gfp |= __GFP_RECLAIM;
		else if (tok_eq(t, n, "__GFP_KSWAPD_RECLAIM"))
			gfp |= __GFP_KSWAPD_RECLAIM;
		else if (tok_eq(t, n, "__GFP_RETRY_MAYFAIL"))
			gfp |= __GFP_RETRY_MAYFAIL;
		else if (tok_eq(t, n, "__GFP_NORETRY"))
			gfp |= __GFP_NORETRY;
	}
	return gfp;
}

/* Field bits, to check that an event has what it needs. */
enum {
	F_PFN = 1 << 0, F_ORDER = 1 << 1, F_MT = 1 << 2, F_REFILL = 1 << 3, F_FBORDER = 1 << 4,
	F_FBMT = 1 << 5, F_OWN = 1 << 6, F_VA = 1 << 7, F_SIZE = 1 << 8, F_PURGED = 1 << 9,
	F_MIGPFN = 1 << 10, F_FREEPFN = 1 << 11, F_RANGE = 1 << 12, F_SCANNED = 1 << 13,
	F_TAKEN = 1 << 14, F_NRMIG = 1 << 15, F_STATUS = 1 << 16, F_SUCC = 1 << 17,
	F_FAILED = 1 << 18, F_RECLAIMED = 1 << 19,
	F_BAD = 1u << 31,	/* a field is there with a value out of its range */
};

static const unsigned int required[NR_PL_TRACE_TYPES] = {
	[PL_TRACE_PAGE_ALLOC] = F_PFN | F_ORDER | F_MT,
	[PL_TRACE_PAGE_FREE] = F_PFN | F_ORDER,
	[PL_TRACE_PAGE_FREE_BATCHED] = F_PFN,
	[PL_TRACE_ZONE_LOCKED] = F_PFN | F_ORDER | F_MT | F_REFILL,
	[PL_TRACE_PCPU_DRAIN] = F_PFN | F_ORDER | F_MT,
	[PL_TRACE_EXTFRAG] = F_PFN | F_ORDER | F_MT | F_FBORDER | F_FBMT | F_OWN,
	[PL_TRACE_ALLOC_VMAP_AREA] = F_VA | F_SIZE,
	[PL_TRACE_FREE_VMAP_AREA] = F_VA,
	[PL_TRACE_PURGE_VMAP_AREA] = F_PURGED,
	[PL_TRACE_PERCPU] = 0,
	[PL_TRACE_COMPACT_TRY] = F_ORDER,
	[PL_TRACE_COMPACT_BEGIN] = F_MIGPFN | F_FREEPFN,
	[PL_TRACE_COMPACT_END] = F_MIGPFN | F_FREEPFN | F_STATUS,
	[PL_TRACE_COMPACT_ISOLATE_MIGRATE] = F_RANGE | F_SCANNED | F_TAKEN,
	[PL_TRACE_COMPACT_ISOLATE_FREE] = F_RANGE | F_SCANNED | F_TAKEN,
	[PL_TRACE_COMPACT_FAST_ISOLATE_FREE] = F_RANGE | F_SCANNED | F_TAKEN,
	[PL_TRACE_COMPACT_MIGRATEPAGES] = F_NRMIG | F_FAILED,
	[PL_TRACE_COMPACT_SUITABLE] = F_ORDER | F_STATUS,
	[PL_TRACE_COMPACT_FINISHED] = F_ORDER | F_STATUS,
	[PL_TRACE_COMPACT_DEFERRED] = F_ORDER,
	[PL_TRACE_COMPACT_DEFER] = F_ORDER,
	[PL_TRACE_COMPACT_DEFER_RESET] = F_ORDER,
	[PL_TRACE_WAKEUP_KCOMPACTD] = F_ORDER,
	[PL_TRACE_KCOMPACTD_WAKE] = F_ORDER,
	[PL_TRACE_KCOMPACTD_SLEEP] = 0,
	[PL_TRACE_MIGRATE_PAGES] = F_SUCC | F_FAILED,
	[PL_TRACE_MIGRATE_PAGES_START] = 0,
	[PL_TRACE_WAKEUP_KSWAPD] = F_ORDER,
	[PL_TRACE_KSWAPD_WAKE] = F_ORDER,
	[PL_TRACE_KSWAPD_SLEEP] = 0,
	[PL_TRACE_DIRECT_RECLAIM_BEGIN] = F_ORDER,
	[PL_TRACE_DIRECT_RECLAIM_END] = F_RECLAIMED,
};

/* The memory-pressure events after their "mm_compaction_", "mm_migrate_pages", "mm_vmscan_". */
static int pressure_event_type(const char *s, size_t n)
{
	static const struct { const char *name; int type; } compaction[] = {
		{ "try_to_compact_pages", PL_TRACE_COMPACT_TRY },
		{ "begin", PL_TRACE_COMPACT_BEGIN }, { "end", PL_TRACE_COMPACT_END },
		{ "isolate_migratepages", PL_TRACE_COMPACT_ISOLATE_MIGRATE },
		{ "isolate_freepages", PL_TRACE_COMPACT_ISOLATE_FREE },
		{ "fast_isolate_freepages", PL_TRACE_COMPACT_FAST_ISOLATE_FREE },
		{ "migratepages", PL_TRACE_COMPACT_MIGRATEPAGES },
		{ "suitable", PL_TRACE_COMPACT_SUITABLE }, { "finished", PL_TRACE_COMPACT_FINISHED },
		{ "deferred", PL_TRACE_COMPACT_DEFERRED },
		{ "defer_compaction", PL_TRACE_COMPACT_DEFER },
		{ "defer_reset", PL_TRACE_COMPACT_DEFER_RESET },
		{ "wakeup_kcompactd", PL_TRACE_WAKEUP_KCOMPACTD },
		{ "kcompactd_wake", PL_TRACE_KCOMPACTD_WAKE },
		{ "kcompactd_sleep", PL_TRACE_KCOMPACTD_SLEEP },
	}, vmscan[] = {
		{ "wakeup_kswapd", PL_TRACE_WAKEUP_KSWAPD }, { "kswapd_wake", PL_TRACE_KSWAPD_WAKE },
		{ "kswapd_sleep", PL_TRACE_KSWAPD_SLEEP },
		{ "direct_reclaim_begin", PL_TRACE_DIRECT_RECLAIM_BEGIN },
		{ "direct_reclaim_end", PL_TRACE_DIRECT_RECLAIM_END },
	};

	if (n > 14 && !memcmp(s, "mm_compaction_", 14)) {
		for (size_t i = 0; i < ARRAY_SIZE(compaction); i++)
			if (strlen(compaction[i].name) == n - 14 &&
			    !memcmp(s + 14, compaction[i].name, n - 14))
				return compaction[i].type;
	} else if (n > 10 && !memcmp(s, "mm_vmscan_", 10)) {
		for (size_t i = 0; i < ARRAY_SIZE(vmscan); i++)
			if (strlen(vmscan[i].name) == n - 10 && !memcmp(s + 10, vmscan[i].name, n - 10))
				return vmscan[i].type;
	} else if (tok_eq(s, n, "mm_migrate_pages")) {
		return PL_TRACE_MIGRATE_PAGES;
	} else if (tok_eq(s, n, "mm_migrate_pages_start")) {
		return PL_TRACE_MIGRATE_PAGES_START;
	}
	return -1;
}

/* The index of @val..@vend in @names (@n of them), or -1. */
static int name_index(const char *const *names, int n, const char *val, const char *vend)
{
	for (int i = 0; i < n; i++)
		if (strlen(names[i]) == (size_t)(vend - val) && !memcmp(names[i], val, (size_t)(vend - val)))
			return i;
	return -1;
}

/* compaction's mode=sync|async and migration's mode=MIGRATE_ASYNC|_SYNC_LIGHT|_SYNC. */
static int parse_mode(const char *val, const char *vend)
{
	static const char *const modes[] = { "MIGRATE_ASYNC", "MIGRATE_SYNC_LIGHT", "MIGRATE_SYNC" };

	if (tok_eq(val, (size_t)(vend - val), "sync"))
		return 1;
	if (tok_eq(val, (size_t)(vend - val), "async"))
		return 0;
	return name_index(modes, 3, val, vend);
}

static int event_type(const char *s, size_t n)
{
	if (n > 7 && !memcmp(s, "percpu_", 7))
		return PL_TRACE_PERCPU;
	if (n > 8 && !memcmp(s, "mm_page_", 8)) {
		s += 8;
		n -= 8;
		if (tok_eq(s, n, "alloc"))
			return PL_TRACE_PAGE_ALLOC;
		if (tok_eq(s, n, "free"))
			return PL_TRACE_PAGE_FREE;
		if (tok_eq(s, n, "free_batched"))
			return PL_TRACE_PAGE_FREE_BATCHED;
		if (tok_eq(s, n, "alloc_zone_locked"))
			return PL_TRACE_ZONE_LOCKED;
		if (tok_eq(s, n, "pcpu_drain"))
			return PL_TRACE_PCPU_DRAIN;
		if (tok_eq(s, n, "alloc_extfrag"))
			return PL_TRACE_EXTFRAG;
		return -1;
	}
	if (n > 10 && s[0] == 'm' && s[1] == 'm' && s[2] == '_')
		return pressure_event_type(s, n);
	if (tok_eq(s, n, "alloc_vmap_area"))
		return PL_TRACE_ALLOC_VMAP_AREA;
	if (tok_eq(s, n, "free_vmap_area_noflush"))
		return PL_TRACE_FREE_VMAP_AREA;
	if (tok_eq(s, n, "purge_vmap_area_lazy"))
		return PL_TRACE_PURGE_VMAP_AREA;
	return -1;
}

/* The pressure events' nr_* counts: where @key's value goes and its F_* bit; NULL if not ours. */
static unsigned long *nr_field(const char *key, size_t klen, struct pl_trace_event *ev,
			       unsigned int *bit)
{
	static const struct { const char *name; size_t off; unsigned int bit; } nr[] = {
		{ "nr_scanned", offsetof(struct pl_trace_event, nr_scanned), F_SCANNED },
		{ "nr_taken", offsetof(struct pl_trace_event, nr_taken), F_TAKEN },
		{ "nr_migrated", offsetof(struct pl_trace_event, nr_succeeded), F_NRMIG },
		{ "nr_succeeded", offsetof(struct pl_trace_event, nr_succeeded), F_SUCC },
		{ "nr_failed", offsetof(struct pl_trace_event, nr_failed), F_FAILED },
		{ "nr_reclaimed", offsetof(struct pl_trace_event, nr_reclaimed), F_RECLAIMED },
	};

	for (size_t i = 0; i < ARRAY_SIZE(nr); i++) {
		if (strlen(nr[i].name) == klen && !memcmp(key, nr[i].name, klen)) {
			*bit = nr[i].bit;
			return (unsigned long *)((char *)ev + nr[i].off);
		}
	}
	return NULL;
}

/*
 * The compaction deferral's numbers (mm/compaction.c): compact_considered
 * stops at the limit, 1 << compact_defer_shift, and the shift at
 * COMPACT_MAX_DEFER_SHIFT (6); compact_order_failed is an order, or one
 * above the largest after a success (order + 1).
 */
#define PL_COMPACT_MAX_DEFER_LIMIT	(1L << 6)
/* compaction's priorities: COMPACT_PRIO_SYNC_FULL 0 .. COMPACT_PRIO_ASYNC 2 */
#define PL_COMPACT_MAX_PRIORITY		2

/* "range=(0xSTART ~ 0xEND)": three tokens from @val; @p past them. Return: false if malformed. */
static bool parse_pfn_range(const char *val, const char *vend, const char **p, const char *end,
			    struct pl_trace_event *ev)
{
	const char *q = val;
	long a, b;

	if (q >= vend || *q++ != '(' || !parse_range(&q, vend, 0, PL_TRACE_PFN_LIMIT, &a) ||
	    q != vend)
		return false;
	q = *p;
	while (q < end && *q == ' ')
		q++;
	if (q >= end || *q++ != '~')
		return false;
	while (q < end && *q == ' ')
		q++;
	if (!parse_range(&q, end, 0, PL_TRACE_PFN_LIMIT, &b) || q >= end || *q++ != ')' ||
	    (q < end && *q != ' '))
		return false;
	*p = q;
	ev->start_pfn = (unsigned long)a;
	ev->end_pfn = (unsigned long)b;
	return true;
}

/*
 * One field of an event's text: "key=value", or with @colon the "key: value"
 * alloc_vmap_area prints. The key ends at '=', ':' or a space; the value at
 * the next space. A bare word, or a ':' when @colon is false, is passed over.
 */
struct pl_field {
	const char *key, *val, *vend;
	size_t klen;
};

/*
 * next_field() - the next field from *@p (before @end) into @f, *@p moved
 * to the end of its value. The one tokenizer of both field parsers: *@p
 * moves forward on every step, whatever the bytes (a ':' where no key was
 * looped forever once). Return: false at the end of the text.
 */
static __always_inline bool next_field(const char **p, const char *end, bool colon,
				       struct pl_field *f)
{
	const char *q = *p;

	for (;;) {
		while (q < end && *q == ' ')
			q++;
		f->key = q;
		while (q < end && *q != '=' && *q != ':' && *q != ' ')
			q++;
		f->klen = (size_t)(q - f->key);
		if (q >= end) {
			*p = q;
			return false;
		}
		if (*q == ' ')
			continue;	/* a bare word: no field */
		if (*q++ == ':') {
			if (!colon)
				continue;	/* "key:" ends no key=value here */
			while (q < end && *q == ' ')
				q++;
		}
		f->val = q;
		while (q < end && *q != ' ')
			q++;
		f->vend = q;
		*p = q;
		return true;
	}
}

/*
 * The pressure events' "key=value" fields into @ev: their own loop, so that
 * the page events' parse_fields() is not slowed by keys it never meets.
 * As strict as parse_fields(): a field pagelab reads must be the whole
 * token (mm_compaction_begin/_end's "zone_end=0x..," keeps its comma),
 * a number within what the kernel can print (pfns below
 * PL_TRACE_PFN_LIMIT, orders -1..MAX_PAGE_ORDER, counts of pages below
 * it too, no overflow, no sign where the kernel prints none), a name one
 * the kernel prints; anything else makes the line malformed. Keys pagelab
 * does not read are passed over, as there.
 * Return: the F_* bits found, or F_BAD.
 */
static __attribute__((noinline)) unsigned int parse_pressure_fields(const char *p, const char *end,
								    struct pl_trace_event *ev)
{
	unsigned int found = 0, bit;
	struct pl_field f;

	while (next_field(&p, end, false, &f)) {
		const char *key = f.key, *val = f.val, *vend = f.vend;
		size_t klen = f.klen;
		unsigned long *nr;
		long v;

/* the whole value a number in [lo, hi], else the line is malformed */
#define NUM_FIELD(lit, lo, hi, dst, bits)						\
		if (tok_eq(key, klen, lit)) {						\
			if (!parse_range(&val, vend, (lo), (hi), &v) || val != vend)	\
				return F_BAD;						\
			(dst) = (typeof(dst))v;						\
			found |= (bits);						\
			continue;							\
		}
		NUM_FIELD("order", -1, MAX_PAGE_ORDER, ev->order, F_ORDER)
		NUM_FIELD("priority", 0, PL_COMPACT_MAX_PRIORITY, ev->priority, 0)
		NUM_FIELD("order_failed", 0, MAX_PAGE_ORDER + 1, ev->order_failed, 0)
		NUM_FIELD("consider", 0, PL_COMPACT_MAX_DEFER_LIMIT, ev->considered, 0)
		NUM_FIELD("limit", 1, PL_COMPACT_MAX_DEFER_LIMIT, ev->defer_limit, 0)
		NUM_FIELD("migrate_pfn", 0, PL_TRACE_PFN_LIMIT, ev->migrate_pfn, F_MIGPFN)
		NUM_FIELD("free_pfn", 0, PL_TRACE_PFN_LIMIT, ev->free_pfn, F_FREEPFN)
		NUM_FIELD("zone_start", 0, PL_TRACE_PFN_LIMIT, ev->zone_start, 0)
		if (tok_eq(key, klen, "zone_end")) {	/* "zone_end=0x%lx, mode=%s" */
			if (vend > val && vend[-1] == ',')
				vend--;
			NUM_FIELD("zone_end", 0, PL_TRACE_PFN_LIMIT, ev->zone_end, 0)
		}
#undef NUM_FIELD
		if (tok_eq(key, klen, "gfp_flags") || tok_eq(key, klen, "gfp_mask")) {
			ev->gfp = pl_trace_gfp_from_names(val, vend);
		} else if (tok_eq(key, klen, "mode")) {
			ev->sync = parse_mode(val, vend);
			if (ev->sync < 0)
				return F_BAD;
		} else if (tok_eq(key, klen, "status") || tok_eq(key, klen, "ret")) {
			ev->status = name_index(pl_compact_result_names, NR_PL_COMPACT_RESULTS, val, vend);
			if (ev->status < 0)
				return F_BAD;
			found |= F_STATUS;
		} else if (tok_eq(key, klen, "reason")) {
			ev->reason = name_index(pl_migrate_reason_names, NR_PL_MR_REASONS, val, vend);
			if (ev->reason < 0)
				return F_BAD;
		} else if ((nr = nr_field(key, klen, ev, &bit))) {
			if (!parse_range(&val, vend, 0, PL_TRACE_PFN_LIMIT, &v) || val != vend)
				return F_BAD;	/* a count of pages: below the pfn space */
			*nr = (unsigned long)v;
			found |= bit;
		} else if (tok_eq(key, klen, "range")) {
			if (!parse_pfn_range(val, vend, &p, end, ev))
				return F_BAD;
			found |= F_RANGE;
		}
	}
	return found;
}

/* "key=value" fields from @p to @end into @ev. Return: the F_* bits found. */
static unsigned int parse_fields(const char *p, const char *end, struct pl_trace_event *ev)
{
	unsigned int found = 0;
	bool null_page = false, bad = false;
	struct pl_field f;

	/* with "key: value": alloc_vmap_area's "va_start: N" */
	while (next_field(&p, end, true, &f)) {
		const char *key = f.key, *val = f.val, *vend = f.vend;
		size_t klen = f.klen;
		long v;

/* the whole value a number in [lo, hi], else the line is malformed */
#define INT_FIELD(lit, lo, hi, dst, bit)                                         \
		if (tok_eq(key, klen, lit)) {                                    \
			if (!parse_range(&val, vend, (lo), (hi), &v) || val != vend) \
				bad = true;                                      \
			else                                                     \
				(dst) = (typeof(dst))v, found |= (bit);          \
			continue;                                                \
		}
		switch (key[0]) {
		case 'p':
			if (tok_eq(key, klen, "pfn")) {
				unsigned long u;
				bool neg;

				/* the kernel prints -1UL for a failed allocation */
				if (!parse_unum(&val, vend, &u, &neg) || val != vend ||
				    (neg ? u != 1 : u >= PL_TRACE_PFN_LIMIT && u != ULONG_MAX))
					bad = true;
				else
					ev->pfn = neg ? -1UL : u, found |= F_PFN;
				continue;
			}
			if (tok_eq(key, klen, "page")) {
				/* a failed mm_page_alloc prints a NULL page */
				null_page = tok_eq(val, (size_t)(vend - val), "0000000000000000") ||
					    tok_eq(val, (size_t)(vend - val), "(null)") ||
					    tok_eq(val, (size_t)(vend - val), "0x0");
				continue;
			}
			INT_FIELD("percpu_refill", 0, 1, ev->percpu_refill, F_REFILL)
			break;
		case 'o':
			INT_FIELD("order", 0, MAX_PAGE_ORDER, ev->order, F_ORDER)
			break;
		case 'm':
			INT_FIELD("migratetype", 0, PL_TRACE_MAX_MIGRATETYPE, ev->migratetype, F_MT)
			break;
		case 'g':
			if (tok_eq(key, klen, "gfp_flags"))
				ev->gfp = pl_trace_gfp_from_names(val, vend);
			break;
		case 'a':
			INT_FIELD("alloc_order", 0, MAX_PAGE_ORDER, ev->order, F_ORDER)
			INT_FIELD("alloc_migratetype", 0, PL_TRACE_MAX_MIGRATETYPE, ev->migratetype, F_MT)
			break;
		case 'f':
			INT_FIELD("fallback_order", 0, MAX_PAGE_ORDER, ev->fallback_order, F_FBORDER)
			INT_FIELD("fallback_migratetype", 0, PL_TRACE_MAX_MIGRATETYPE,
				  ev->fallback_migratetype, F_FBMT)
			INT_FIELD("failed", 0, 1, ev->failed, 0)
			break;
		case 'c':
			INT_FIELD("change_ownership", 0, 1, ev->change_ownership, F_OWN)
			break;
		case 'v':
		case 's':
			if (tok_eq(key, klen, "va_start") || tok_eq(key, klen, "size")) {
				unsigned long u;
				bool neg;

				if (!parse_unum(&val, vend, &u, &neg) || neg || val != vend) {
					bad = true;
				} else if (key[0] == 'v') {
					ev->va_start = u;
					found |= F_VA;
				} else {
					ev->size = u;
					found |= F_SIZE;
				}
				continue;
			}
			break;
		case 'n':
			INT_FIELD("num_purged", 0, LONG_MAX, ev->npurged, F_PURGED)
			INT_FIELD("nr_lazy", 0, LONG_MAX, ev->nr_lazy, 0)	/* free_vmap_area_noflush */
			break;
		default:
			break;
		}
#undef INT_FIELD
	}
	if ((found & (F_VA | F_SIZE)) == (F_VA | F_SIZE) && ev->size > ULONG_MAX - ev->va_start)
		bad = true;	/* an area that wraps the address space */
	if (bad)
		return F_BAD;
	if (null_page)
		ev->pfn = -1UL;
	return found;
}

/*
 * Lost-event markers, looked for only on lines that are not events:
 * "CPU:N [LOST M EVENTS]" (tracefs, trace-cmd) and trace-cmd's
 * "CPU:N [EVENTS DROPPED]" (a count it does not know: counted as one).
 * Return: true if @s was one.
 */
static bool parse_lost(const char *s, const char *end, struct pl_trace_stats *st)
{
	const char *p = memmem(s, (size_t)(end - s), "[LOST ", 6);
	long n = 1;

	if (p) {
		p += 6;
		if (!parse_num(&p, end, &n) || n < 0)
			return false;
	} else if (!memmem(s, (size_t)(end - s), "[EVENTS DROPPED]", 16)) {
		return false;
	}
	if (st) {
		st->lost_events += (unsigned long)n;
		st->warn[PL_TW_lost_events]++;
	}
	return true;
}

/*
 * A frame of a `perf script` callchain (perf record -g): a tab, then an
 * address in hex, a space, the symbol and "(dso)", under the event it
 * belongs to. Return: true if @s..@end (leading blanks gone) was one.
 */
static bool perf_callchain_frame(const char *line, const char *s, const char *end)
{
	const char *p = s;

	if (*line != '\t' || end[-1] != ')')
		return false;
	while (p < end && ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
		p++;
	return p > s && p < end && *p == ' ';
}

/* Header and comment lines. Return: true if @s was one. */
static bool parse_meta(const char *s, const char *end, struct pl_trace_stats *st)
{
	const char *p;

	if (*s == '#') {
		static const char key[] = "entries-in-buffer/entries-written:";

		p = memmem(s, (size_t)(end - s), key, sizeof(key) - 1);
		if (p && st) {
			long a = 0, b = 0;

			p += sizeof(key) - 1;
			while (p < end && *p == ' ')
				p++;
			if (parse_num(&p, end, &a) && p < end && *p == '/' && (p++, parse_num(&p, end, &b))) {
				st->entries_in_buffer = (unsigned long)a;
				st->entries_written = (unsigned long)b;
				if (b > a)
					st->lost_events += (unsigned long)(b - a);
				if (b > a)
					st->warn[PL_TW_lost_events]++;
			}
			st->format = PL_TRACE_FMT_FTRACE;
		}
		return true;
	}
	if (end - s >= 5 && !memcmp(s, "cpus=", 5)) {	/* trace-cmd report's first line */
		if (st)
			st->format = PL_TRACE_FMT_TRACE_CMD;
		return true;
	}
	if (end - s >= 10 && !memcmp(s, "version = ", 10))
		return true;
	return false;
}

/*
 * The task of an event line: the text before the "[CPU]" column at
 * @bracket. tracefs and trace-cmd write "COMM-PID" (a trace-cmd report of
 * an instance puts "INSTANCE: " before it), perf "COMM PID" or
 * "COMM PID/TID". Fills @pid (-1 if none) and @comm ("" if none).
 */
static void parse_task(const char *s, const char *bracket, int *pid, char comm[16])
{
	const char *e = bracket, *d, *c;
	long v = 0;

	*pid = -1;
	comm[0] = '\0';
	while (e > s && e[-1] == ' ')
		e--;
	d = e;
	while (d > s && is_digit(d[-1]))
		d--;
	if (d == e)
		return;
	if (d > s && d[-1] == '/') {	/* perf's PID/TID: the PID */
		e = d - 1;
		d = e;
		while (d > s && is_digit(d[-1]))
			d--;
		if (d == e)
			return;
	}
	for (c = d; c < e && v < (1l << 30); c++)
		v = v * 10 + (*c - '0');
	*pid = (int)v;
	if (d == s || (d[-1] != '-' && d[-1] != ' '))
		return;
	e = d - 1;
	while (e > s && e[-1] == ' ')
		e--;
	c = e;
	while (c > s && !(c[-1] == ' ' && c - 1 > s && c[-2] == ':'))	/* "INSTANCE: " */
		c--;
	while (c < e && (*c == ' ' || *c == '\t'))
		c++;
	if (e - c > 15)
		c = e - 15;
	memcpy(comm, c, (size_t)(e - c));
	comm[e - c] = '\0';
}

/* sched_process_fork's "pid=P ... child_pid=C": 2 with ev->pid and ev->size, else -1. */
static int parse_fork(const char *p, const char *end, struct pl_trace_event *ev)
{
	const char *a = memmem(p, (size_t)(end - p), " pid=", 5);
	const char *b = memmem(p, (size_t)(end - p), "child_pid=", 10);
	long parent, child;

	if (!a || !b)
		return -1;
	a += 5;
	b += 10;
	if (!parse_num(&a, end, &parent) || !parse_num(&b, end, &child))
		return -1;
	ev->pid = (int)parent;
	ev->size = (unsigned long)child;
	return 2;
}

int pl_trace_parse_line(const char *line, size_t len, struct pl_trace_event *ev,
			struct pl_trace_stats *st)
{
	const char *s = line, *end = line + len, *p, *tok, *name, *nend, *bracket = NULL;
	long cpu = -1, secs, frac = 0;
	int type, ndigits;
	unsigned int need, fields;
	struct pl_trace_event e;

	if ((!line || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -1;
	while (end > s && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	if (s == end)
		return 0;
	if (parse_meta(s, end, st))
		return 0;
	if (perf_callchain_frame(line, s, end)) {
		if (st) {
			st->callchain_lines++;
			st->format = PL_TRACE_FMT_PERF;
		}
		return 0;
	}
	/* the CPU: the first [digits] */
	for (p = s; (p = memchr(p, '[', (size_t)(end - p))) != NULL; p++) {
		const char *q = p + 1;

		if (q < end && is_digit(*q) && parse_num(&q, end, &cpu) && q < end && *q == ']') {
			if (cpu >= PL_TRACE_MAX_CPUS)
				return -1;	/* no kernel has that CPU */
			bracket = p;
			p = q + 1;
			break;
		}
		cpu = -1;
	}
	if (!p || cpu < 0)
		return parse_lost(s, end, st) ? 0 : -1;
	/* the timestamp: the first token starting with a digit and ending in ':' */
	for (int i = 0; i < 3; i++) {
		while (p < end && *p == ' ')
			p++;
		tok = p;
		while (p < end && *p != ' ')
			p++;
		if (p > tok + 1 && p[-1] == ':' && is_digit(*tok))
			break;
		tok = NULL;
	}
	if (!tok)
		return -1;
	/* seconds whose nanoseconds fit 64 bits: no wrapped timestamp */
	if (!parse_range(&tok, p, 0, (long)(UINT64_MAX / 1000000000ull) - 1, &secs) || *tok != '.')
		return -1;
	tok++;
	for (ndigits = 0; tok < p && is_digit(*tok); tok++, ndigits++)
		if (ndigits < 9)
			frac = frac * 10 + (*tok - '0');
	if (*tok != ':' || !ndigits)
		return -1;
	for (; ndigits < 9; ndigits++)
		frac *= 10;
	/* the event name, "system:" dropped */
	while (p < end && *p == ' ')
		p++;
	name = p;
	while (p < end && *p != ' ')
		p++;
	nend = p;
	if (nend > name && nend[-1] == ':')
		nend--;
	for (const char *c = name; c < nend; c++)
		if (*c == ':') {
			name = c + 1;
			if (st)
				st->format = PL_TRACE_FMT_PERF;
		}
	if (nend == name)
		return -1;
	type = event_type(name, (size_t)(nend - name));
	if (type < 0 && tok_eq(name, (size_t)(nend - name), "sched_process_fork"))
		return parse_fork(p, end, ev);
	if (type < 0) {
		if (st)
			st->warn[PL_TW_unknown_event]++;
		return 0;
	}
	/* the pressure fields only for pressure events: a page event's copy stays small */
	memset(&e, 0, offsetof(struct pl_trace_event, start_pfn));
	e.nr_lazy = -1;
	e.type = (enum pl_trace_type)type;
	e.cpu = (unsigned int)cpu;
	e.ts_ns = (uint64_t)secs * 1000000000ull + (uint64_t)frac;
	parse_task(s, bracket, &e.pid, e.comm);
	if (e.comm[0]) {
		e.kworker = !strncmp(e.comm, "kworker/", 8);
		e.kswapd = !strncmp(e.comm, "kswapd", 6);
	} else {	/* the task column leads */
		e.kworker = end - s > 8 && !memcmp(s, "kworker/", 8);
		e.kswapd = end - s > 6 && !memcmp(s, "kswapd", 6);
	}
	need = required[type];
	if (type >= PL_TRACE_PRESSURE_FIRST) {
		memset(&e.start_pfn, 0, sizeof(e) - offsetof(struct pl_trace_event, start_pfn));
		e.status = -1;
		e.reason = -1;
		e.sync = -1;
	}
	fields = type >= PL_TRACE_PRESSURE_FIRST ? parse_pressure_fields(p, end, &e) :
						   parse_fields(p, end, &e);
	if ((fields & F_BAD) || (fields & need) != need)
		return -1;
	if (type == PL_TRACE_PAGE_FREE_BATCHED)
		e.order = 0;
	if (type == PL_TRACE_EXTFRAG)
		e.fragmenting = e.fallback_order < pageblock_order;
	if ((need & F_ORDER) && (e.order < (type >= PL_TRACE_PRESSURE_FIRST ? -1 : 0) ||
				 e.order > MAX_PAGE_ORDER))
		return -1;	/* -1: proactive compaction's order */
	memcpy(ev, &e, type >= PL_TRACE_PRESSURE_FIRST ? sizeof(e) :
					       offsetof(struct pl_trace_event, start_pfn));
	return 1;
}
