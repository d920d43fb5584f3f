// SPDX-License-Identifier: MIT
/*
 * replay.c - a kernel trace's allocations and frees replayed on a pagelab
 * machine, one vCPU per trace CPU, in trace order.
 *
 * The kernel's pfns are not pagelab's: each traced block maps to the block
 * pagelab handed out for it (a hash table from the kernel's head pfn to the
 * struct page and order). A free of part of a block split_page()s it first
 * and maps every page. A free of a pfn pagelab never handed out is a page
 * allocated before the trace: with a loaded state it gives back one of the
 * state's allocated blocks (pl_state_take()), without one it is a counted
 * warning. Refills, drains and fallbacks are not replayed: pagelab makes
 * its own, seen through its tracepoints and scored as the kernel's are.
 *
 * A free of a block the trace freed before, with no traced allocation
 * between, is a block the kernel took again without an mm_page_alloc
 * event: taken and given back, it changes nothing to replay (a counted
 * "refreed"; freeing a loaded block for it would add free memory the
 * kernel never had).
 *
 * mm_page_free_batched is not a free of its own: the kernel fires
 * mm_page_free for the same page first, in free_pages_prepare() (then
 * free_unref_folios() fires _batched as it commits the page to the PCP).
 *
 * A vmalloc'ed area's pages come from alloc_pages_bulk() (vmalloc's
 * vm_area_alloc_pages()), which fires no mm_page_alloc, while vfree()'s
 * frees of them, right after the area's free_vmap_area_noflush, are
 * traced. So each traced area takes its pages (less the guard page) with
 * alloc_pages_bulk() on its CPU, and after the area's free the refreed
 * order-0 frees on that CPU give them back, until another kind of event
 * comes on that CPU: then what is left goes back too (an area whose pages
 * the trace shows, a vm_map_ram() or an ioremap, held them only while it
 * lived). Before this the replay's PCPs kept pages the kernel's had lent
 * out (kbuild: 9,814 refreed frees).
 *
 * The kernel's drains are pagelab's own to make, with one exception it
 * cannot make by itself: drain_all_pages() (direct reclaim's, compaction's,
 * page isolation's), seen as a drain run on one CPU of pages another CPU's
 * PCP held (follow_pcp()); the replay does one of its own there.
 *
 * Compaction: the replay is the holder of its movable blocks
 * (pl_set_migrate_ops()): each mapped block's head page carries its key
 * (kernel pfn + 1) in page->private, so compaction can ask whether a page
 * is one of them and, when it moves one, the table follows it to its new
 * page; the loaded state's held pages move too (pl_state_moved()). The
 * next traced free of the kernel pfn then frees the block where it is now.
 * kcompactd works where the trace shows the kernel's did
 * (mm_compaction_kcompactd_wake), and looks at the fragmentation score
 * for proactive compaction on the trace's clock; pagelab's kswapd does
 * not wake it during a replay.
 *
 * Invariants: every blocks-table entry is a block pagelab allocated and has
 * not freed, and its head page's private is its key; the tables and the claim lists are the only owners of the
 * replay's live blocks and bulk pages.
 * Single-threaded: all vCPUs run on the caller's thread.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/compaction.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"
#include "pagelab/vmalloc.h"

#define NSEC_PER_SEC 1000000000ull
/* kswapd counts as running until it has been quiet this long: follow_kswapd() */
#define KSWAPD_QUIET_NS 1000000ull
/* four times lazy_max_pages() of a PL_TRACE_MAX_CPUS machine (fls(8192) = 14) */
#define LAZY_NR_MAX (4L * 14 * ((32L << 20) >> PAGE_SHIFT))

/* A traced vmap area: its reserved range and the pages taken for it in bulk. */
struct replay_area {
	struct vm_struct *vm;
	unsigned long nr_bulk;
	struct page *bulk[];
};

struct pfn_ent {
	unsigned long key;	/* kernel head pfn + 1; 0 = empty slot */
	union {
		struct page *page;
		struct replay_area *area;	/* vmap table: the area reserved for it */
	};
	unsigned int order;
};

struct pfn_table {
	struct pfn_ent *slot;
	size_t cap, nr;		/* cap a power of two */
};

struct pl_replay {
	struct pl_machine *m;
	struct pl_loaded_state *st;
	struct pfn_table blocks;	/* kernel head pfn -> pagelab block */
	struct pfn_table areas;		/* va_start -> get_vm_area() area */
	struct pl_trace_score score;
	unsigned long warn[NR_PL_TRACE_WARN];
	unsigned long pfn_limit;	/* kernel pfns at or above: out of range (0: none) */
	FILE *emit;
	uint64_t now_ns, next_tick_ns;	/* next_tick_ns: the timeline's next second */
	uint64_t *cpu_tick_ns;		/* per vCPU: its next pl_vmstat_tick() */
	uint64_t *tick_nominal;		/* per vCPU: that tick's second at the phase */
	long *tick_phase;		/* per vCPU: ns into the second, or -1 (default) */
	struct tick_times {		/* per vCPU: the kernel's own ticks, ascending */
		uint64_t *t;
		size_t n, next;		/* next: the first not yet passed */
	} *tick_times;
	bool started;
	void (*timeline)(void *ctx, unsigned long t);
	void *timeline_ctx;
	unsigned long t;		/* seconds of trace time replayed */
	uint64_t *freed;		/* kernel pfns freed and not allocated since */
	size_t freed_words;
	long last_nr_lazy;		/* the kernel's vmap_lazy_nr at the last lazy free; -1 unknown */
	bool lazy_loaded;		/* the kernel's lazy backlog stood in for */
	unsigned int last_area_pages;	/* pages (with the guard) of the last traced vmap area */
	struct replay_area **claim;	/* per vCPU: a freed area whose bulk pages vfree gives back */
	uint64_t kswapd_until;		/* a traced kswapd run ends after this trace time (0: none) */
	struct pfn_table on_pcp;	/* kernel pfn -> PCP_HELD(cpu, order) of its PCP (in .order) */
	bool *drained_all;		/* per vCPU: this drain run was replayed as drain_all_pages() */
	const struct pl_pcp_busy *busy;	/* frees the kernel sent to the buddy; NULL: none */
	bool busy_free;			/* the free being replayed is one of them */
};

/* ---- the pfn table (linear probing, backward-shift deletion) ---------------- */

static inline size_t hash_pfn(unsigned long key, size_t cap)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int table_grow(struct pfn_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1 << 16;
	struct pfn_ent *n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->slot[i].key)
			continue;
		for (j = hash_pfn(t->slot[i].key, ncap); n[j].key; j = (j + 1) & (ncap - 1))
			;
		n[j] = t->slot[i];
	}
	free(t->slot);
	t->slot = n;
	t->cap = ncap;
	return 0;
}

static struct pfn_ent *table_find(const struct pfn_table *t, unsigned long pfn)
{
	unsigned long key = pfn + 1;

	if (!t->cap)
		return NULL;
	for (size_t i = hash_pfn(key, t->cap); t->slot[i].key; i = (i + 1) & (t->cap - 1))
		if (t->slot[i].key == key)
			return &t->slot[i];
	return NULL;
}

static int table_insert(struct pfn_table *t, unsigned long pfn, void *ptr, unsigned int order);

/* A mapped block: its entry, and its head page told its key. */
static int map_block(struct pl_replay *r, unsigned long pfn, struct page *page, unsigned int order)
{
	if (table_insert(&r->blocks, pfn, page, order))
		return -ENOMEM;
	page->private = pfn + 1;
	return 0;
}

static int table_insert(struct pfn_table *t, unsigned long pfn, void *ptr, unsigned int order)
{
	unsigned long key = pfn + 1;
	size_t i;

	/* at most half full: a miss (find_containing() makes up to ten) probes ~2.5 slots */
	if ((t->nr + 1) * 2 > t->cap && table_grow(t))
		return -ENOMEM;
	for (i = hash_pfn(key, t->cap); t->slot[i].key; i = (i + 1) & (t->cap - 1))
		;
	t->slot[i].key = key;
	t->slot[i].page = ptr;
	t->slot[i].order = order;
	t->nr++;
	return 0;
}

static void table_remove(struct pfn_table *t, struct pfn_ent *e)
{
	size_t i = (size_t)(e - t->slot), j = i;

	t->slot[i].key = 0;
	t->nr--;
	for (;;) {
		size_t home;

		j = (j + 1) & (t->cap - 1);
		if (!t->slot[j].key)
			return;
		home = hash_pfn(t->slot[j].key, t->cap);
		/* move j back to i unless its home lies cyclically in (i, j] */
		if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
			t->slot[i] = t->slot[j];
			t->slot[j].key = 0;
			i = j;
		}
	}
}

/* ---- tracepoints ------------------------------------------------------------- */

static void replay_tp(void *ctx, const struct pl_tp_event *tp)
{
	struct pl_replay *r = ctx;
	struct pl_trace_event ev;

	pl_tp_to_trace_event(tp, r->now_ns, &ev);
	pl_trace_score_event(&r->score, &ev);
	if (r->emit)
		pl_trace_print_event(r->emit, &ev);
}

static void set_on_pcp(struct pl_replay *r, unsigned long pfn, int cpu, int order);

/* ---- compaction's holder ------------------------------------------------------ */

static void mark_movable(struct pl_machine *m, unsigned long pfn)
{
	struct page *page = m->mem_map + pfn;

	if (get_pageblock_migratetype(page) == MIGRATE_MOVABLE && page_ref_count(page) == 1)
		SetPageFlag(page, PG_movable);
}

static int replay_isolate(void *ctx, struct page *page, unsigned int order)
{
	struct pl_replay *r = ctx;
	struct pfn_ent *e;

	if (!page->private)	/* a page the loaded state holds, or none of ours */
		return !order && pl_state_holds(r->st, page_to_pfn(page)) ? 0 : -1;
	e = table_find(&r->blocks, page->private - 1);
	return e && e->page == page && e->order == order ? 0 : -1;
}

static void replay_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	struct pl_replay *r = ctx;
	struct pfn_ent *e;

	(void)order;
	if (!src->private) {
		pl_state_moved(r->st, page_to_pfn(src), page_to_pfn(dst));
		return;
	}
	e = table_find(&r->blocks, src->private - 1);
	e->page = dst;
	dst->private = src->private;
	src->private = 0;
}

static void replay_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

static const struct pl_migrate_ops replay_migrate_ops = {
	.isolate = replay_isolate, .migrate = replay_migrate, .putback = replay_putback,
};

struct pl_replay *pl_replay_create(struct pl_machine *m, struct pl_loaded_state *st)
{
	struct pl_replay *r;

	if (!m && pl_arg_refused(__func__, "NULL machine"))
		return NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->m = m;
	r->st = st;
	r->last_nr_lazy = -1;
	pl_trace_score_init(&r->score);
	r->cpu_tick_ns = calloc(m->nr_cpus, sizeof(*r->cpu_tick_ns));
	r->tick_nominal = calloc(m->nr_cpus, sizeof(*r->tick_nominal));
	r->tick_phase = malloc(m->nr_cpus * sizeof(*r->tick_phase));
	r->tick_times = calloc(m->nr_cpus, sizeof(*r->tick_times));
	r->claim = calloc(m->nr_cpus, sizeof(*r->claim));
	r->drained_all = calloc(m->nr_cpus, sizeof(*r->drained_all));
	if (!r->cpu_tick_ns || !r->tick_nominal || !r->tick_phase || !r->tick_times ||
	    !r->claim || !r->drained_all || table_grow(&r->blocks) || table_grow(&r->areas)) {
		free(r->blocks.slot);
		free(r->areas.slot);
		free(r->cpu_tick_ns);
		free(r->tick_nominal);
		free(r->tick_phase);
		free(r->tick_times);
		free(r->claim);
		free(r->drained_all);
		free(r);
		return NULL;
	}
	for (unsigned int c = 0; c < m->nr_cpus; c++)
		r->tick_phase[c] = -1;
	/* a positional state's allocated blocks sit at the kernel's own pfns */
	if (st) {
		const unsigned long *pfn;
		const unsigned char *order;
		const unsigned short *cpu;
		size_t n = pl_state_pretrace(st, &pfn, &order);

		for (size_t i = 0; i < n; i++)
			if (map_block(r, pfn[i], m->mem_map + pfn[i], order[i])) {
				pl_replay_destroy(r, false);
				return NULL;
			}
		/*
		 * What the kernel had allocated in a Movable pageblock is taken
		 * as movable (page cache, anonymous memory: what its compaction
		 * moves); elsewhere as not. pagelab's assumption: the trace
		 * does not say which pre-trace page is which.
		 */
		pl_enter(m, 0);
		for (size_t i = 0; i < n; i++)
			mark_movable(m, pfn[i]);
		for (unsigned long p = 0; p < m->max_pfn; p++)
			if (pl_state_holds(st, p))
				mark_movable(m, p);
		/* and its PCP sightings where the kernel's PCPs held them: follow_pcp() */
		n = pl_state_pcp_sighted(st, &pfn, &cpu);
		for (size_t i = 0; i < n; i++)
			set_on_pcp(r, pfn[i], cpu[i], -1);
	}
	pl_set_tracepoint_sink(m, replay_tp, r);
	pl_set_migrate_ops(m, &replay_migrate_ops, r);
	pl_kcompactd_set_traced(m, true);	/* the trace's kcompactd wakes: see pl_replay_event() */
	return r;
}

void pl_replay_set_emit(struct pl_replay *r, FILE *f)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return;
	r->emit = f;
}

void pl_replay_set_pfn_limit(struct pl_replay *r, unsigned long limit)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return;
	r->pfn_limit = limit;
}

int pl_replay_set_tick_phase(struct pl_replay *r, unsigned int cpu, long phase_ns)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	if (cpu >= r->m->nr_cpus || phase_ns < 0 || phase_ns >= (long)NSEC_PER_SEC || r->started) {
		pl_warn_ratelimited("pl_replay_set_tick_phase: cpu %u phase %ld ns: %s", cpu, phase_ns,
				    r->started ? "the replay has started" : "out of range");
		return -EINVAL;
	}
	r->tick_phase[cpu] = phase_ns;
	return 0;
}

int pl_replay_set_tick_times(struct pl_replay *r, unsigned int cpu, const uint64_t *times,
			     size_t n)
{
	const char *why = !r ? "NULL replay" : cpu >= r->m->nr_cpus ? "no such vCPU"
			  : r->started ? "the replay has started" : n && !times ? "NULL times" : NULL;
	uint64_t *t = NULL;

	for (size_t i = 1; !why && i < n; i++)
		if (times[i] < times[i - 1])
			why = "times out of order";
	if (why) {
		pl_warn_ratelimited("pl_replay_set_tick_times: cpu %u, %zu times: %s", cpu, n, why);
		return -EINVAL;
	}
	if (n) {
		t = malloc(n * sizeof(*t));
		if (!t)
			return -ENOMEM;
		memcpy(t, times, n * sizeof(*t));
	}
	free(r->tick_times[cpu].t);
	r->tick_times[cpu] = (struct tick_times){ .t = t, .n = n };
	return 0;
}

void pl_replay_set_pcp_busy(struct pl_replay *r, const struct pl_pcp_busy *busy)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return;
	r->busy = busy;
}

void pl_replay_set_timeline(struct pl_replay *r, void (*fn)(void *ctx, unsigned long t), void *ctx)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return;
	r->timeline = fn;
	r->timeline_ctx = ctx;
}

const struct pl_trace_score *pl_replay_score(const struct pl_replay *r)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return NULL;
	return &r->score;
}

const unsigned long *pl_replay_warnings(const struct pl_replay *r)
{
	if (!r && pl_arg_refused(__func__, "NULL argument"))
		return NULL;
	return r->warn;
}

static int warn(struct pl_replay *r, enum pl_trace_warn w, const struct pl_trace_event *ev)
{
	/* the first few of each class name their line; the rest are counted */
	if (r->warn[w]++ >= 10)
		return (int)w + 1;
	pl_warn_ratelimited("replay: line %lu: %s %s (cpu %u pfn %#lx order %d)", ev->line,
			    pl_trace_warn_names[w], pl_trace_type_names[ev->type], ev->cpu, ev->pfn,
			    ev->order);
	return (int)w + 1;
}

/* ---- time -------------------------------------------------------------------- */

/*
 * vCPU @c's next tick, in the second of its nominal one: the first of the
 * kernel's own tick times (pl_replay_set_tick_times()) within
 * PL_TICK_WINDOW_NS of it, else the nominal time.
 */
static void schedule_tick(struct pl_replay *r, unsigned int c)
{
	struct tick_times *tt = &r->tick_times[c];
	uint64_t nominal = r->tick_nominal[c];

	while (tt->next < tt->n && tt->t[tt->next] + PL_TICK_WINDOW_NS < nominal)
		tt->next++;
	r->cpu_tick_ns[c] = r->tick_phase[c] >= 0 && tt->next < tt->n &&
			    tt->t[tt->next] <= nominal + PL_TICK_WINDOW_NS ? tt->t[tt->next] : nominal;
}

/*
 * Once per second of trace time each vCPU's vmstat tick, at its phase
 * (pl_replay_set_tick_phase()), or where the kernel's own tick shows near
 * it (pl_replay_set_tick_times()), or one second after the first event;
 * the timeline once per second from the first event.
 */
static void advance_time(struct pl_replay *r, uint64_t ts)
{
	unsigned int nr = r->m->nr_cpus;

	if (!r->started) {
		r->started = true;
		r->next_tick_ns = ts + NSEC_PER_SEC;
		for (unsigned int c = 0; c < nr; c++) {
			uint64_t at = ts - ts % NSEC_PER_SEC + (uint64_t)r->tick_phase[c];

			r->tick_nominal[c] = r->tick_phase[c] < 0 ? r->next_tick_ns
								  : at > ts ? at : at + NSEC_PER_SEC;
			schedule_tick(r, c);
		}
	}
	if (ts > r->now_ns)
		r->now_ns = ts;
	/* a gap of hours is idle time: its ticks change nothing after a few */
	if (ts > r->next_tick_ns + 600 * NSEC_PER_SEC) {
		uint64_t skip = (ts - r->next_tick_ns) / NSEC_PER_SEC - 600;

		r->t += skip;
		r->next_tick_ns += skip * NSEC_PER_SEC;
		for (unsigned int c = 0; c < nr; c++) {
			r->tick_nominal[c] += skip * NSEC_PER_SEC;
			schedule_tick(r, c);
		}
	}
	for (;;) {
		unsigned int who = 0;	/* the earliest vCPU tick; at a tie with the timeline, first */

		for (unsigned int c = 1; c < nr; c++)
			if (r->cpu_tick_ns[c] < r->cpu_tick_ns[who])
				who = c;
		if (ts < min(r->cpu_tick_ns[who], r->next_tick_ns))
			break;
		if (r->cpu_tick_ns[who] <= r->next_tick_ns) {
			struct tick_times *tt = &r->tick_times[who];

			pl_enter(r->m, who);
			pl_vmstat_tick();
			if (tt->next < tt->n && tt->t[tt->next] == r->cpu_tick_ns[who])
				tt->next++;	/* the kernel's tick, taken */
			r->tick_nominal[who] += NSEC_PER_SEC;
			schedule_tick(r, who);
			continue;
		}
		r->t++;
		if (r->timeline)
			r->timeline(r->timeline_ctx, r->t);
		r->next_tick_ns += NSEC_PER_SEC;
	}
}

/* ---- allocations and frees --------------------------------------------------- */

/*
 * The kernel pfns the replay's bitmap covers: the snapshot's span (the pfn
 * limit) or PL_TRACE_DENSE_SPAN, never the highest pfn a trace names.
 */
static unsigned long dense_end(const struct pl_replay *r)
{
	return r->pfn_limit && r->pfn_limit < PL_TRACE_DENSE_SPAN ? r->pfn_limit
								   : PL_TRACE_DENSE_SPAN;
}

/* Mark (or clear) kernel pfns [@pfn, @end) as freed by the trace. */
static void mark_freed(struct pl_replay *r, unsigned long pfn, unsigned long end, bool on)
{
	if (end > dense_end(r))
		return;
	if (on && (end + 63) / 64 > r->freed_words) {
		size_t nw = max((end + 63) / 64, r->freed_words * 2);
		uint64_t *n = realloc(r->freed, nw * sizeof(*n));

		if (!n)
			return;	/* then a refree falls back to the loaded state */
		memset(n + r->freed_words, 0, (nw - r->freed_words) * sizeof(*n));
		r->freed = n;
		r->freed_words = nw;
	}
	for (; pfn < end && pfn / 64 < r->freed_words; pfn++) {
		if (on)
			r->freed[pfn / 64] |= 1ull << (pfn % 64);
		else
			r->freed[pfn / 64] &= ~(1ull << (pfn % 64));
	}
}

static bool all_freed(const struct pl_replay *r, unsigned long pfn, unsigned long end)
{
	for (; pfn < end; pfn++)
		if (pfn / 64 >= r->freed_words || !(r->freed[pfn / 64] >> (pfn % 64) & 1))
			return false;
	return true;
}

static gfp_t replay_gfp(const struct pl_trace_event *ev)
{
	gfp_t gfp = ev->gfp ? ev->gfp : GFP_KERNEL;

	/* zeroing would touch the machine's memory for nothing */
	gfp &= ~(__GFP_ZERO | GFP_MOVABLE_MASK);
	if (ev->migratetype == MIGRATE_MOVABLE)
		gfp |= __GFP_MOVABLE;
	else if (ev->migratetype == MIGRATE_RECLAIMABLE)
		gfp |= __GFP_RECLAIMABLE;
	return gfp | __GFP_NOWARN;
}

/* Free a block as the kernel freed the traced one: to the PCP, or past a busy one. */
static void free_block(struct pl_replay *r, struct page *page, unsigned int order)
{
	if (r->busy_free)
		pl_free_pages_pcp_busy(page, order);
	else
		__free_pages(page, order);
}

static void free_entry(struct pl_replay *r, struct pfn_ent *e)
{
	struct page *page = e->page;
	unsigned int order = e->order;

	table_remove(&r->blocks, e);
	free_block(r, page, order);
}

/* split_page() the block at @e and map each of its pages on its own. */
static int split_entry(struct pl_replay *r, struct pfn_ent *e)
{
	unsigned long head = e->key - 1;
	struct page *page = e->page;
	unsigned int order = e->order;

	if (PageHead(page) || split_page(page, order))
		return -EINVAL;
	e->order = 0;
	for (unsigned long i = 1; i < (1UL << order); i++)
		if (map_block(r, head + i, page + i, 0))
			return -ENOMEM;
	return 0;
}

/* The mapped block that contains @pfn, or NULL. */
static struct pfn_ent *find_containing(struct pl_replay *r, unsigned long pfn)
{
	for (unsigned int k = 1; k <= MAX_PAGE_ORDER; k++) {
		struct pfn_ent *e = table_find(&r->blocks, pfn & ~((1UL << k) - 1));

		if (e && e->order >= k)
			return e;
	}
	return NULL;
}

static int replay_alloc(struct pl_replay *r, const struct pl_trace_event *ev)
{
	struct pfn_ent *e;
	struct page *page;

	if (ev->pfn == -1UL)	/* the kernel's allocation failed too */
		return 0;
	e = table_find(&r->blocks, ev->pfn);
	if (e) {
		/* the kernel freed it without a traced free: follow the kernel */
		free_entry(r, e);
		warn(r, PL_TW_realloc_unfreed, ev);
	}
	mark_freed(r, ev->pfn, ev->pfn + (1UL << ev->order), false);
	page = alloc_pages(replay_gfp(ev), (unsigned int)ev->order);
	if (!page) {
		/* one the kernel satisfied: a fidelity miss, in the score as the kernel's are */
		r->score.pr.alloc_failures++;
		r->score.pr.alloc_failures_high_order += ev->order > 0;
		return warn(r, PL_TW_alloc_failed, ev);
	}
	if (map_block(r, ev->pfn, page, (unsigned int)ev->order)) {
		__free_pages(page, (unsigned int)ev->order);
		return warn(r, PL_TW_alloc_failed, ev);
	}
	return 0;
}

static int replay_free(struct pl_replay *r, const struct pl_trace_event *ev)
{
	unsigned long pfn = ev->pfn, end = ev->pfn + (1UL << ev->order);
	struct pfn_ent *e = table_find(&r->blocks, pfn);
	bool missing = false;

	if (!e) {
		e = find_containing(r, pfn);
		if (e && split_entry(r, e))
			return warn(r, PL_TW_order_mismatch, ev);
		e = table_find(&r->blocks, pfn);
	}
	if (e && e->order > (unsigned int)ev->order && split_entry(r, e))
		return warn(r, PL_TW_order_mismatch, ev);
	if (!e) {
		struct page *page;

		if (all_freed(r, pfn, end)) {
			struct replay_area *ra = r->claim[ev->cpu];

			if (ra && ra->nr_bulk && !ev->order) {	/* one of vfree()'s */
				__free_pages(ra->bulk[--ra->nr_bulk], 0);
				return 0;
			}
			return warn(r, PL_TW_refreed, ev);
		}
		page = r->st ? pl_state_take(r->st, (unsigned int)ev->order, -1) : NULL;
		if (!page)
			return warn(r, PL_TW_free_unallocated, ev);
		mark_freed(r, pfn, end, true);
		free_block(r, page, (unsigned int)ev->order);
		return 0;
	}
	/*
	 * Memory hotplug onlining a block the snapshot counted offline: the
	 * kernel's online_pages() grows managed_pages and sets the watermarks
	 * and pageset limits again (git, kbuild and xz run near the high
	 * watermark when the VM onlines memory; a stale watermark misses the
	 * kernel's ZONE_BELOW_HIGH spells).
	 */
	if (pl_state_onlining(r->st, ev->pfn, (unsigned int)ev->order)) {
		pl_zone_set_section_online(page_zone(e->page), page_to_pfn(e->page), true);
		pl_zone_online_pages(page_zone(e->page), 1UL << ev->order);
	}
	mark_freed(r, pfn, end, true);
	/* free every mapped block inside [pfn, end) */
	while (pfn < end) {
		e = table_find(&r->blocks, pfn);
		if (!e) {
			missing = true;
			pfn++;
			continue;
		}
		pfn += 1UL << e->order;
		free_entry(r, e);
	}
	return missing ? warn(r, PL_TW_order_mismatch, ev) : 0;
}

/* ---- vmap areas ---------------------------------------------------------------- */

/*
 * A traced area's range, with nothing mapped: the kernel's page-table pages
 * for it are in the trace as mm_page_alloc events of their own, which the
 * replay makes; mapping here would allocate them a second time.
 */
static struct vm_struct *reserve_area(unsigned long count)
{
	return get_vm_area(count << PAGE_SHIFT, VM_MAP);
}

/* Give back the bulk pages of @ra vfree() did not free, and @ra itself. */
static void area_release(struct replay_area *ra)
{
	if (!ra)
		return;
	while (ra->nr_bulk)
		__free_pages(ra->bulk[--ra->nr_bulk], 0);
	free(ra);
}

/* The claim window of vCPU @cpu closes: what vfree did not give back goes back. */
static void claim_close(struct pl_replay *r, unsigned int cpu)
{
	area_release(r->claim[cpu]);
	r->claim[cpu] = NULL;
}

static int replay_vmap(struct pl_replay *r, const struct pl_trace_event *ev)
{
	unsigned long count = ev->size >> PAGE_SHIFT;
	struct replay_area *ra;

	if (ev->failed || count < 2)
		return 0;
	/* an area of more pages than the machine has cannot be vmalloc'ed on it */
	if (count - 1 > r->m->max_pfn)
		return warn(r, PL_TW_alloc_failed, ev);
	r->last_area_pages = (unsigned int)count;
	ra = calloc(1, sizeof(*ra) + (count - 1) * sizeof(ra->bulk[0]));
	if (!ra)
		return warn(r, PL_TW_alloc_failed, ev);
	ra->vm = reserve_area(count - 1);	/* less the guard page */
	if (!ra->vm) {
		free(ra);
		return warn(r, PL_TW_alloc_failed, ev);
	}
	/* vm_area_alloc_pages(): order-0 pages in bulk, no event (see the top) */
	ra->nr_bulk = alloc_pages_bulk(GFP_KERNEL, count - 1, ra->bulk);
	if (table_insert(&r->areas, ev->va_start, ra, (unsigned int)count)) {
		free_vm_area(ra->vm);
		area_release(ra);
		return warn(r, PL_TW_alloc_failed, ev);
	}
	r->score.vmalloc_allocs++;	/* pagelab has no vmalloc tracepoint: count here */
	return 0;
}

/*
 * A lazily freed stand-in of @pages pages (guard included) for an area of
 * the kernel's pagelab does not have, so that vmap_lazy_nr, and with it the
 * purges, follow the kernel's.
 */
static void stand_in(unsigned long pages)
{
	struct vm_struct *area;

	if (pages < 2)
		return;
	area = reserve_area(pages - 1);
	if (area)
		free_vm_area(area);
}

/*
 * free_vmap_area_noflush carries the kernel's vmap_lazy_nr after the free.
 * At the first one, the kernel's lazy backlog from before the trace is
 * stood in for (areas of the traced size); an area from before the trace
 * is stood in for by the pages nr_lazy grew by.
 */
static int replay_vunmap(struct pl_replay *r, const struct pl_trace_event *in)
{
	struct pfn_ent *e = table_find(&r->areas, in->va_start);
	unsigned long pages = e ? e->order : 0;
	struct pl_trace_event capped = *in;
	const struct pl_trace_event *ev = &capped;
	struct replay_area *ra;

	/*
	 * The kernel purges once vmap_lazy_nr passes lazy_max_pages(), 32 MiB
	 * per bit of the CPU count: a backlog far past that for the largest
	 * machine is no kernel's, and standing in for it would never end.
	 */
	if (capped.nr_lazy > LAZY_NR_MAX)
		capped.nr_lazy = -1;

	if (!e && ev->nr_lazy > 0 && r->last_nr_lazy > 0 && ev->nr_lazy > r->last_nr_lazy)
		pages = (unsigned long)(ev->nr_lazy - r->last_nr_lazy);
	if (!r->lazy_loaded && ev->nr_lazy > 0) {
		unsigned long chunk = pages ? pages : (r->last_area_pages ? r->last_area_pages : 2);
		unsigned long backlog = (unsigned long)ev->nr_lazy - (e ? pages : 0);

		r->lazy_loaded = true;
		for (; backlog >= chunk && chunk >= 2; backlog -= chunk)
			stand_in(chunk);
		stand_in(backlog);
		pages = e ? pages : 0;	/* this area is in the backlog */
	}
	if (ev->nr_lazy > 0)
		r->last_nr_lazy = ev->nr_lazy;
	if (!e) {	/* an area from before the trace */
		stand_in(pages);
		return 0;
	}
	ra = e->area;
	table_remove(&r->areas, e);
	free_vm_area(ra->vm);
	/* vfree() frees the pages next: this CPU's refreed frees give them back */
	r->claim[ev->cpu] = ra;
	return 0;
}

/* ---- remote drains: drain_all_pages() -------------------------------------------- */

/*
 * An on_pcp entry: 1 + the CPU in the low byte, 1 + the block's order above
 * it (0: not known, for the loaded state's sightings).
 */
#define PCP_HELD(cpu, order)	((uint16_t)(((cpu) + 1) | (((order) + 1) << 8)))

/*
 * The CPU whose PCP holds a block drained at @order, from its on_pcp entry
 * @held; -1 if none is known. A page the kernel's events put on a PCP at
 * another order is not that block: the kernel moved it without an event
 * pagelab follows, so the sighting says nothing about who drains it.
 */
static int pcp_holder(uint16_t held, int order)
{
	int known = (held >> 8) - 1;

	if (!held || (known >= 0 && known != order))
		return -1;
	return (held & 0xff) - 1;
}

/*
 * Note that the kernel's PCP of CPU @cpu (-1: none) holds kernel pfn @pfn,
 * a block of @order (-1: not known).
 */
static void set_on_pcp(struct pl_replay *r, unsigned long pfn, int cpu, int order)
{
	struct pfn_ent *e;

	if (pfn >= PL_TRACE_PFN_LIMIT || cpu >= 255)
		return;
	/* a hash: its size follows the pages on PCPs, not the pfns' values */
	e = table_find(&r->on_pcp, pfn);
	if (cpu < 0) {
		if (e)
			table_remove(&r->on_pcp, e);
		return;
	}
	if (e)
		e->order = PCP_HELD(cpu, order);
	else
		table_insert(&r->on_pcp, pfn, NULL, PCP_HELD(cpu, order));
	/* out of memory: remote drains go unseen, a replay as before */
}

/* The on_pcp entry of kernel pfn @pfn, 0 if none. */
static uint16_t on_pcp(const struct pl_replay *r, unsigned long pfn)
{
	const struct pfn_ent *e = table_find(&r->on_pcp, pfn);

	return e ? (uint16_t)e->order : 0;
}

/*
 * Follow which CPU's PCP holds each page in the kernel, from the events:
 * a free puts a page of a PCP order on the freeing CPU's, a refill or a
 * fallback on the allocating CPU's; an allocation or a drain takes it
 * off. A drain run on one CPU that takes a page off another CPU's PCP, at
 * the order that PCP got it, is drain_all_pages() (direct reclaim's, after
 * a failed attempt; compaction's; page isolation's): since 5.19 the caller
 * drains every CPU's PCP itself, so the events fire on its CPU. pagelab
 * replays it as a drain_all_pages() of its own, once per run: the
 * kernel's drains are not replayed otherwise, and without it pagelab's
 * PCPs keep pages the kernel gave back. A free that found its PCP busy
 * (pcp_busy.c) went to the buddy: no PCP holds it.
 */
static void follow_pcp(struct pl_replay *r, const struct pl_trace_event *ev)
{
	unsigned int cpu = ev->cpu;
	int held;

	if (ev->type != PL_TRACE_PCPU_DRAIN)
		r->drained_all[cpu] = false;
	if (ev->pfn == -1UL)
		return;
	switch (ev->type) {
	case PL_TRACE_PAGE_FREE:	/* a busy PCP's free went to the buddy */
		set_on_pcp(r, ev->pfn, (ev->order <= PAGE_ALLOC_COSTLY_ORDER ||
					ev->order == pageblock_order) && !r->busy_free ? (int)cpu : -1,
			   (int)ev->order);
		break;
	case PL_TRACE_ZONE_LOCKED:
		set_on_pcp(r, ev->pfn, ev->percpu_refill ? (int)cpu : -1, (int)ev->order);
		break;
	case PL_TRACE_PAGE_ALLOC:
		set_on_pcp(r, ev->pfn, -1, 0);
		break;
	case PL_TRACE_EXTFRAG:
		/*
		 * A fallback took the block from the buddy for this CPU. A
		 * steal fires no zone_locked event, so this is all that says
		 * where the block went: a refill's goes to this CPU's PCP, and
		 * rmqueue_buddy()'s is allocated at once (the mm_page_alloc
		 * that follows takes it off). Without it the block kept an
		 * older sighting: a free on another CPU whose PCP trylock
		 * failed (a softirq's; pcp_busy.c finds most, not all) had
		 * sent it to the buddy, and the drain that later took it off
		 * this CPU's PCP read as a drain_all_pages() (lowmem4: three
		 * of them, 30-44 k pages).
		 */
		set_on_pcp(r, ev->pfn, (int)cpu, (int)ev->order);
		break;
	case PL_TRACE_PCPU_DRAIN:
		held = pcp_holder(on_pcp(r, ev->pfn), (int)ev->order);
		set_on_pcp(r, ev->pfn, -1, 0);
		if (held < 0 || held == (int)cpu || r->drained_all[cpu])
			break;
		r->drained_all[cpu] = true;
		drain_all_pages(NULL);
		r->warn[PL_TW_drain_all_replayed]++;
		break;
	default:
		break;
	}
}

/*
 * kswapd's runs where the kernel's were: an event of kswapd's own task
 * (a page its reclaim freed) starts a run, which ends once kswapd has
 * been quiet for KSWAPD_QUIET_NS of trace time. While it runs the zones
 * are ZONE_RECLAIM_ACTIVE, whose PCP cap sends kswapd's frees back to
 * the buddy a few batches at a time, and its end drops the boost the
 * zones had at its start. Without it pagelab's kswapd ran only at the
 * next vmstat tick (up to a second late), for an instant, with no cap.
 *
 * Between traced runs, a kswapd that pagelab's allocations woke (a
 * boosted watermark, a zone under low) runs at the next event, not at
 * the tick: the kernel's kswapd runs moments after its wakeup, and a run
 * the trace shows no event of freed nothing, so it ended at once and took
 * its boost with it, which is what pl_kswapd_run() does. Left to the tick,
 * the boost stayed up to a second: lowmem2's Normal zone kept 39
 * pageblocks of it through 65 ms with no kswapd event, failed its min
 * watermark where the kernel allocated without reclaim, and drained and
 * refilled a 1,576-page PCP at every allocation (730 k pages each way).
 */
static void follow_kswapd(struct pl_replay *r, const struct pl_trace_event *ev)
{
	if (ev->kswapd) {
		pl_kswapd_begin(r->m);
		r->kswapd_until = ev->ts_ns + KSWAPD_QUIET_NS;
	} else if (r->kswapd_until && ev->ts_ns > r->kswapd_until) {
		pl_kswapd_end(r->m);
		r->kswapd_until = 0;
	} else if (!r->kswapd_until) {
		pl_kswapd_run(r->m);	/* if woken; nothing otherwise */
	}
}

int pl_replay_event(struct pl_replay *r, const struct pl_trace_event *ev)
{
	if ((!r || !ev) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	/* an event the parser never returns: refused, nothing replayed */
	if (((unsigned int)ev->type >= NR_PL_TRACE_TYPES || ev->order < 0 ||
	     ev->order > MAX_PAGE_ORDER || ev->fallback_order < 0 || ev->fallback_order > MAX_PAGE_ORDER ||
	     ev->migratetype < 0 || ev->migratetype > PL_TRACE_MAX_MIGRATETYPE ||
	     (ev->pfn >= PL_TRACE_PFN_LIMIT && ev->pfn != -1UL)) &&
	    pl_arg_refused(__func__, "an event outside the parser's ranges"))
		return -EINVAL;
	if (ev->cpu >= r->m->nr_cpus)
		return warn(r, PL_TW_cpu_out_of_range, ev);
	advance_time(r, ev->ts_ns);
	if (pl_this.cpu != &r->m->cpus[ev->cpu] || pl_this.machine != r->m)
		pl_enter(r->m, ev->cpu);
	r->busy_free = ev->type == PL_TRACE_PAGE_FREE && pl_pcp_busy_has(r->busy, ev->line);
	follow_kswapd(r, ev);
	/* kcompactd's proactive look, on the trace's clock */
	if (unlikely(ev->ts_ns >= r->m->kcompactd.next_ns))
		pl_kcompactd_run(r->m, ev->ts_ns);
	follow_pcp(r, ev);
	if (r->claim[ev->cpu] && (ev->type != PL_TRACE_PAGE_FREE || ev->order))
		claim_close(r, ev->cpu);
	switch (ev->type) {
	case PL_TRACE_PAGE_ALLOC:
	case PL_TRACE_PAGE_FREE:
		if (r->pfn_limit && ev->pfn != -1UL && ev->pfn + (1UL << ev->order) > r->pfn_limit)
			return warn(r, PL_TW_pfn_out_of_range, ev);
		return ev->type == PL_TRACE_PAGE_ALLOC ? replay_alloc(r, ev) : replay_free(r, ev);
	case PL_TRACE_ALLOC_VMAP_AREA:
		return replay_vmap(r, ev);
	case PL_TRACE_FREE_VMAP_AREA:
		return replay_vunmap(r, ev);
	case PL_TRACE_PURGE_VMAP_AREA:
		r->last_nr_lazy = -1;	/* the kernel's counter fell by what it purged */
		return 0;
	case PL_TRACE_KCOMPACTD_WAKE:
		/* the kernel's kcompactd ran its work here: pagelab's runs for the same order */
		pl_kcompactd_traced_wake(r->m, (int)ev->order, ev->ts_ns);
		return 0;
	default:
		return 0;	/* the kernel's internal steps: pagelab makes its own */
	}
}

void pl_replay_destroy(struct pl_replay *r, bool free_live)
{
	if (!r)
		return;
	pl_set_tracepoint_sink(r->m, NULL, NULL);
	pl_set_migrate_ops(r->m, NULL, NULL);
	pl_kcompactd_set_traced(r->m, false);
	pl_enter(r->m, 0);
	pl_kswapd_end(r->m);	/* a kswapd run still open when the trace ended */
	for (size_t i = 0; i < r->areas.cap; i++) {
		struct replay_area *ra = r->areas.slot[i].area;

		if (!r->areas.slot[i].key)
			continue;
		free_vm_area(ra->vm);
		if (!free_live)
			ra->nr_bulk = 0;	/* left to the machine, as the live blocks are */
		area_release(ra);
	}
	for (unsigned int c = 0; c < r->m->nr_cpus; c++) {
		if (!free_live && r->claim[c])
			r->claim[c]->nr_bulk = 0;
		claim_close(r, c);
	}
	free(r->claim);
	if (free_live)
		for (size_t i = 0; i < r->blocks.cap; i++)
			if (r->blocks.slot[i].key)
				__free_pages(r->blocks.slot[i].page, r->blocks.slot[i].order);
	free(r->freed);
	free(r->on_pcp.slot);
	free(r->drained_all);
	for (unsigned int c = 0; c < r->m->nr_cpus; c++)
		free(r->tick_times[c].t);
	free(r->cpu_tick_ns);
	free(r->tick_nominal);
	free(r->tick_times);
	free(r->tick_phase);
	free(r->blocks.slot);
	free(r->areas.slot);
	free(r);
}

void pl_free_pages_by_order(struct pl_machine *m, unsigned long out[NR_PAGE_ORDERS])
{
	struct zone *zone;

	if ((!m || !out) && pl_arg_refused(__func__, "NULL argument"))
		return;

	memset(out, 0, sizeof(unsigned long) * NR_PAGE_ORDERS);
	for_each_populated_zone(zone, m)
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			out[o] += READ_ONCE(zone->free_area[o].nr_free) << o;
}
