// SPDX-License-Identifier: MIT
/*
 * vmap_bump.c - seed 004's per-CPU bump allocator (design switch
 * vmap_pcpu_bump, patches 10-12 of the series): short-lived, page-aligned
 * vmalloc areas come from a chunk of the space the CPU has reserved, by
 * moving a pointer, and are found again from their address in O(1).
 *
 *   chunk (64 MiB, 64 MiB aligned, one busy area flagged VMAP_BUMP_CHUNK)
 *   | a0 | a1 | a2 | ...               | next -->            free tail |
 *   back[page] = the area starting at that page (NULL: none, or freed)
 *
 * Why 64 MiB: the largest bump area is 256 pages (1 MiB, what the vmap
 * node pools serve) plus its guard page, so a chunk wastes at most 1/64 of
 * itself at its end; a chunk holds 8192 one-page vmallocs (two pages with
 * the guard), i.e. a drain and one TLB flush per 8192 frees, and one
 * chunk per CPU costs nr_cpus * 64 MiB of a 32 TiB space. Its back-pointer
 * array is 16384 words.
 *
 * Lifetime: a CPU allocates from its current chunk until the next area
 * does not fit; the chunk is then retired (full) and a new one reserved
 * with alloc_vmap_area(). Areas are never reused inside a chunk: a freed
 * area only clears its back-pointers and drops nr_live. When a full chunk's
 * last area goes, the whole chunk leaves the busy index and is freed
 * lazily like any area (free_vmap_area_noflush), so the TLB flush of the
 * purge still comes before any of its addresses is handed out again - the
 * same guarantee lazy freeing gives. The purge path drains the CPUs'
 * current chunks first (vmap_bump_drain_all), which gives the whole space
 * back once everything is freed.
 *
 * Lookup: a bounded fast reject - an address outside [lo, hi) of all
 * chunks, or whose 64 MiB slot of the hash table names no chunk holding
 * it, is not a bump area and goes to the busy index - then back[] in O(1):
 * one read for an area's start (vfree, find_vm_area of the pointer
 * vmalloc returned); an address inside an area reads back at most
 * VMAP_BUMP_MAX_SIZE / PAGE_SIZE entries to the area's start. Only the
 * first page names its area, so bumping and freeing write one entry
 * whatever the size (writing every page cost more than the rbtree's whole
 * insert for random_size_alloc_test, callgrind).
 * An address inside a chunk is never looked up in the index: the only busy
 * area there is the chunk itself, which no caller may see.
 *
 * Locks: per CPU, cpu->lock protects cpu->cur (the owner allocates under
 * it; the drain steals under it); per chunk, ch->lock protects next,
 * nr_live, full and back[]; table_lock (rwlock) protects the hash table,
 * the chunk list and lo/hi. Order: cpu->lock, then table_lock (read), then
 * ch->lock. No bump lock is held across alloc_vmap_area() or
 * free_vmap_area_noflush().
 *
 * Invariants (vmap_bump_check): each chunk's live areas lie in [start,
 * next), do not overlap, each has back[] naming it on its first page and
 * every other back[] is NULL; their count is nr_live; a chunk in the table
 * is a busy area flagged VMAP_BUMP_CHUNK covering [start, end).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vmap_area.h"

#define VMAP_BUMP_CHUNK_SHIFT	26				/* 64 MiB */
#define VMAP_BUMP_CHUNK_SIZE	(1UL << VMAP_BUMP_CHUNK_SHIFT)
#define VMAP_BUMP_CHUNK_PAGES	(VMAP_BUMP_CHUNK_SIZE >> PAGE_SHIFT)
#define VMAP_BUMP_MAX_SIZE	((MAX_VA_SIZE_PAGES + 1) * PAGE_SIZE)	/* guard included */
#define VMAP_BUMP_SLOTS		256
/*
 * Alignments the chunks serve. Seed 004's overlay is for page-aligned areas
 * only: anything asking for more goes to the index. pagelab's own switch
 * vmap_bump_wide_align (not in the seed) widens that up to 64 KiB, which
 * covers vmalloc'd thread stacks (THREAD_ALIGN, 32 KiB with KASAN off, what
 * fix_align_alloc_test asks for): the pointer is bumped to the alignment
 * (the skipped pages stay unused until the chunk goes), at most 15 pages
 * per area.
 */
#define VMAP_BUMP_SEED_ALIGN	PAGE_SIZE
#define VMAP_BUMP_WIDE_ALIGN	(16 * PAGE_SIZE)

struct vmap_bump_chunk {
	struct pl_spinlock lock;
	struct vmap_area *va;
	unsigned long start, end;
	unsigned long next;		/* under lock */
	unsigned long nr_live;		/* under lock */
	bool full;			/* under lock: no more bump allocations */
	struct vmap_bump_chunk *hnext;	/* under table_lock */
	struct list_head list;		/* under table_lock */
	struct vmap_area *back[VMAP_BUMP_CHUNK_PAGES];	/* under lock */
};

struct vmap_bump_cpu {
	struct pl_spinlock lock;
	struct vmap_bump_chunk *cur;	/* under lock */
} __cacheline_aligned;

struct vmap_bump {
	pthread_rwlock_t table_lock;
	struct vmap_bump_chunk *table[VMAP_BUMP_SLOTS];	/* under table_lock */
	struct list_head chunks;			/* under table_lock */
	unsigned long lo, hi;		/* written under table_lock, read racily */
	struct vmap_bump_chunk *spare;	/* under table_lock: a returned chunk's memory */
	unsigned long max_align;	/* VMAP_BUMP_SEED_ALIGN or _WIDE_ALIGN, fixed */
	unsigned int nr_cpus;
	struct vmap_bump_cpu cpu[];
};

/* A bump area's chunk: its list linkage is unused, list.next names the chunk. */
static inline struct vmap_bump_chunk *va_chunk(struct vmap_area *va)
{
	return (struct vmap_bump_chunk *)va->list.next;
}

static inline unsigned int bump_slot(unsigned long addr)
{
	return (unsigned int)((addr >> VMAP_BUMP_CHUNK_SHIFT) % VMAP_BUMP_SLOTS);
}

int vmap_bump_init(struct vmap_space *vs)
{
	unsigned int n = vs->m->nr_cpus;
	struct vmap_bump *b;

	if (!vs->m->config.design.vmap_pcpu_bump)
		return 0;
	b = pl_zalloc_lines(sizeof(*b) + n * sizeof(b->cpu[0]));
	if (!b)
		return -ENOMEM;
	pthread_rwlock_init(&b->table_lock, NULL);
	INIT_LIST_HEAD(&b->chunks);
	b->nr_cpus = n;
	b->max_align = vs->m->config.design.vmap_bump_wide_align ? VMAP_BUMP_WIDE_ALIGN
								 : VMAP_BUMP_SEED_ALIGN;
	for (unsigned int i = 0; i < n; i++) {
		pl_spin_init(&b->cpu[i].lock, vs->m->config.lock_stat);
		pl_spin_set_class(&b->cpu[i].lock, VT_LOCK_VMAP_OTHER);
	}
	vs->bump = b;
	return 0;
}

void vmap_bump_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx)
{
	for (unsigned int i = 0; vs->bump && i < vs->bump->nr_cpus; i++)
		fn(ctx, "&b->cpu[i].lock", &vs->bump->cpu[i].lock);
}

/* Teardown: the chunks' areas go with the object cache. */
void vmap_bump_destroy(struct vmap_space *vs)
{
	struct vmap_bump *b = vs->bump;

	if (!b)
		return;
	free(b->spare);
	while (!list_empty(&b->chunks)) {
		struct vmap_bump_chunk *ch = list_first_entry(&b->chunks, struct vmap_bump_chunk, list);

		list_del(&ch->list);
		free(ch);
	}
	pthread_rwlock_destroy(&b->table_lock);
	free(b);
	vs->bump = NULL;
}

/* The chunk holding @addr, or NULL. Context: table_lock held. */
static struct vmap_bump_chunk *chunk_lookup(struct vmap_bump *b, unsigned long addr)
{
	struct vmap_bump_chunk *ch;

	for (ch = b->table[bump_slot(addr)]; ch; ch = ch->hnext)
		if (ch->start <= addr && addr < ch->end)
			return ch;
	return NULL;
}

static void bounds_update(struct vmap_bump *b)
{
	unsigned long lo = ULONG_MAX, hi = 0;
	struct list_head *pos;

	list_for_each(pos, &b->chunks) {
		struct vmap_bump_chunk *ch = list_entry(pos, struct vmap_bump_chunk, list);

		lo = min(lo, ch->start);
		hi = max(hi, ch->end);
	}
	WRITE_ONCE(b->lo, lo);
	WRITE_ONCE(b->hi, hi);
}

/* Reserve a new chunk from the space. Return: it, or NULL. */
static struct vmap_bump_chunk *chunk_new(struct vmap_space *vs, gfp_t gfp)
{
	struct vmap_bump *b = vs->bump;
	struct vmap_bump_chunk *ch;
	struct vmap_area *va;
	int err;

	/*
	 * The last chunk returned, if any: its back[] is all NULL already
	 * (each free cleared its entry), so it is not zeroed again - a new
	 * 128 KiB calloc() per chunk was most of the bump path's cost.
	 */
	pthread_rwlock_wrlock(&b->table_lock);
	ch = b->spare;
	b->spare = NULL;
	pthread_rwlock_unlock(&b->table_lock);
	if (!ch)
		ch = pl_zalloc_lines(sizeof(*ch));
	if (!ch)
		return NULL;
	ch->nr_live = 0;
	ch->full = false;
	va = alloc_vmap_area(VMAP_BUMP_CHUNK_SIZE, VMAP_BUMP_CHUNK_SIZE, VMALLOC_START, VMALLOC_END,
			     NUMA_NO_NODE, gfp | __GFP_NOWARN, VMAP_BUMP_CHUNK, NULL, &err);
	if (!va) {
		free(ch);
		return NULL;
	}
	pl_spin_init(&ch->lock, false);
	pl_spin_set_class(&ch->lock, VT_LOCK_VMAP_OTHER);
	ch->va = va;
	ch->start = ch->next = va->va_start;
	ch->end = va->va_end;
	pthread_rwlock_wrlock(&b->table_lock);
	ch->hnext = b->table[bump_slot(ch->start)];
	b->table[bump_slot(ch->start)] = ch;
	list_add_tail(&ch->list, &b->chunks);
	bounds_update(b);
	pthread_rwlock_unlock(&b->table_lock);
	vm_count(PL_EV_VMAP_BUMP_CHUNK_NEW, 1);
	return ch;
}

/* A full chunk whose last area went: out of the table, back to the space. */
static void chunk_return(struct vmap_space *vs, struct vmap_bump_chunk *ch)
{
	struct vmap_bump *b = vs->bump;
	struct vmap_bump_chunk **pp;
	struct vmap_area *va;

	pthread_rwlock_wrlock(&b->table_lock);
	for (pp = &b->table[bump_slot(ch->start)]; *pp != ch; pp = &(*pp)->hnext)
		;
	*pp = ch->hnext;
	list_del(&ch->list);
	bounds_update(b);
	pthread_rwlock_unlock(&b->table_lock);
	/* A lookup that found it before holds its lock: wait for it. */
	spin_lock(&ch->lock);
	spin_unlock(&ch->lock);
	va = find_unlink_vmap_area(ch->start, 0);
	if (va != ch->va)
		pl_warn_ratelimited("vmalloc: bump chunk %#lx is not a busy area", ch->start);
	else
		free_vmap_area_noflush(va);	/* lazy: the purge flushes before reuse */
	pthread_rwlock_wrlock(&b->table_lock);
	if (!b->spare) {
		b->spare = ch;
		ch = NULL;
	}
	pthread_rwlock_unlock(&b->table_lock);
	free(ch);
	vm_count(PL_EV_VMAP_BUMP_CHUNK_FREE, 1);
}

bool vmap_bump_eligible(struct vmap_space *vs, unsigned long size, unsigned long align,
			unsigned long vstart, unsigned long vend, unsigned long va_flags,
			const struct vm_struct *vm)
{
	return vs->bump && vm && (vm->flags & VM_ALLOC) && !va_flags && align <= vs->bump->max_align &&
	       size <= VMAP_BUMP_MAX_SIZE && vstart == VMALLOC_START && vend == VMALLOC_END;
}

/* Bump @va ([size]) out of @ch. Return: true, or false (retired: full). */
static bool chunk_bump(struct vmap_bump_chunk *ch, struct vmap_area *va, unsigned long size,
		       unsigned long align, bool *drain)
{
	unsigned long addr, idx;

	spin_lock(&ch->lock);
	addr = align > PAGE_SIZE ? (ch->next + align - 1) & ~(align - 1) : ch->next;
	if (ch->full || addr > ch->end || ch->end - addr < size) {
		ch->full = true;
		*drain = !ch->nr_live;
		spin_unlock(&ch->lock);
		return false;
	}
	ch->next = addr + size;
	ch->nr_live++;
	va->va_start = addr;
	va->va_end = addr + size;
	idx = (addr - ch->start) >> PAGE_SHIFT;
	ch->back[idx] = va;
	spin_unlock(&ch->lock);
	return true;
}

struct vmap_area *vmap_bump_alloc(struct vmap_space *vs, unsigned long size, unsigned long align,
				  gfp_t gfp, struct vm_struct *vm)
{
	struct vmap_bump_cpu *c = &vs->bump->cpu[this_cpu_id()];
	struct vmap_area *va = va_cache_alloc(vs);
	struct vmap_bump_chunk *old = NULL, *ch;
	bool drain = false;

	if (!va)
		return NULL;
	va->vm = vm;
	va->flags = VMAP_BUMP;
	for (int attempt = 0; attempt < 2; attempt++) {
		spin_lock(&c->lock);
		ch = c->cur;
		if (ch && chunk_bump(ch, va, size, align, &drain)) {
			spin_unlock(&c->lock);
			va->list.next = (struct list_head *)ch;
			va->list.prev = NULL;
			vm->addr = va->va_start;
			vm->size = size;
			vm_count(PL_EV_VMAP_BUMP_ALLOC, 1);
			return va;
		}
		c->cur = NULL;
		spin_unlock(&c->lock);
		if (ch && drain)
			chunk_return(vs, ch);
		if (attempt)
			break;
		ch = chunk_new(vs, gfp);
		if (!ch)
			break;
		spin_lock(&c->lock);
		old = c->cur;	/* a drain may have run meanwhile; only we install */
		c->cur = ch;
		spin_unlock(&c->lock);
		if (old)	/* cannot happen: only the owner installs */
			pl_warn_ratelimited("vmalloc: bump chunk of CPU %u replaced", this_cpu_id());
	}
	va_cache_free(vs, va);
	return NULL;	/* the caller falls back to the free index */
}

/* The live area of @ch holding @addr, or NULL. Context: ch->lock. */
static struct vmap_area *chunk_area_at(struct vmap_bump_chunk *ch, unsigned long addr)
{
	unsigned long idx = (addr - ch->start) >> PAGE_SHIFT;
	unsigned long stop = idx >= VMAP_BUMP_MAX_SIZE / PAGE_SIZE ?
			     idx - VMAP_BUMP_MAX_SIZE / PAGE_SIZE + 1 : 0;

	for (unsigned long i = idx + 1; i-- > stop;) {
		struct vmap_area *va = ch->back[i];

		if (va)
			return addr < va->va_end ? va : NULL;
	}
	return NULL;
}

int vmap_bump_find(struct vmap_space *vs, unsigned long addr, struct vmap_area **vap,
		   bool unlink, unsigned long want)
{
	struct vmap_bump *b = vs->bump;
	struct vmap_bump_chunk *ch;
	struct vmap_area *va;

	*vap = NULL;
	if (!b || addr < READ_ONCE(b->lo) || addr >= READ_ONCE(b->hi))
		return 0;	/* the fast reject */
	pthread_rwlock_rdlock(&b->table_lock);
	ch = chunk_lookup(b, addr);
	if (!ch) {
		pthread_rwlock_unlock(&b->table_lock);
		return 0;
	}
	spin_lock(&ch->lock);
	pthread_rwlock_unlock(&b->table_lock);
	va = chunk_area_at(ch, addr);
	if (va && unlink) {
		if (va_unlink_refused(va, addr, want))
			va = ERR_AREA;
		else
			ch->back[(addr - ch->start) >> PAGE_SHIFT] = NULL;
	}
	spin_unlock(&ch->lock);
	*vap = va;
	return 1;
}

void vmap_bump_free(struct vmap_space *vs, struct vmap_area *va)
{
	struct vmap_bump_chunk *ch = va_chunk(va);
	unsigned long idx = (va->va_start - ch->start) >> PAGE_SHIFT;
	bool drain;

	spin_lock(&ch->lock);
	if (ch->back[idx] == va)	/* not unlinked by a lookup (error paths) */
		ch->back[idx] = NULL;
	ch->nr_live--;
	drain = ch->full && !ch->nr_live;
	spin_unlock(&ch->lock);
	va_cache_free(vs, va);
	if (drain)
		chunk_return(vs, ch);
}

void vmap_bump_drain_all(struct vmap_space *vs)
{
	struct vmap_bump *b = vs->bump;

	if (!b)
		return;
	for (unsigned int i = 0; i < b->nr_cpus; i++) {
		struct vmap_bump_cpu *c = &b->cpu[i];
		struct vmap_bump_chunk *ch;
		bool drain = false;

		spin_lock(&c->lock);
		ch = c->cur;
		c->cur = NULL;
		if (ch) {
			spin_lock(&ch->lock);
			ch->full = true;
			drain = !ch->nr_live;
			spin_unlock(&ch->lock);
		}
		spin_unlock(&c->lock);
		if (drain)
			chunk_return(vs, ch);
	}
}

unsigned long vmap_bump_check(struct vmap_space *vs, struct vmap_area *cva,
			      void (*area)(void *ctx, struct vmap_area *va),
			      void (*report)(void *ctx, const char *msg), void *ctx, int *errors)
{
	struct vmap_bump *b = vs->bump;
	struct vmap_bump_chunk *ch;
	unsigned long live = 0, i;
	char msg[200];

	if (!b) {
		report(ctx, "bump chunk in a space without vmap_pcpu_bump");
		(*errors)++;
		return 0;
	}
	pthread_rwlock_rdlock(&b->table_lock);
	ch = chunk_lookup(b, cva->va_start);
	pthread_rwlock_unlock(&b->table_lock);
	if (!ch || ch->va != cva || ch->start != cva->va_start || ch->end != cva->va_end) {
		snprintf(msg, sizeof(msg), "bump chunk [%#lx, %#lx) is not in the chunk table",
			 cva->va_start, cva->va_end);
		report(ctx, msg);
		(*errors)++;
		return 0;
	}
	spin_lock(&ch->lock);
	for (i = 0; i < VMAP_BUMP_CHUNK_PAGES;) {
		struct vmap_area *va = ch->back[i];
		unsigned long addr = ch->start + (i << PAGE_SHIFT), n;

		if (!va) {
			i++;
			continue;
		}
		n = va_size(va) >> PAGE_SHIFT;
		if (va->va_start != addr || va->va_end > ch->next || !(va->flags & VMAP_BUMP) ||
		    va_chunk(va) != ch || !n) {
			snprintf(msg, sizeof(msg), "bump chunk %#lx: page %lu names area [%#lx, %#lx)",
				 ch->start, i, va->va_start, va->va_end);
			report(ctx, msg);
			(*errors)++;
			break;
		}
		for (unsigned long j = 1; j < n; j++) {
			if (ch->back[i + j]) {
				snprintf(msg, sizeof(msg), "bump chunk %#lx: area %#lx has another "
					 "area's back-pointer on its page %lu", ch->start, va->va_start, j);
				report(ctx, msg);
				(*errors)++;
				break;
			}
		}
		area(ctx, va);
		live++;
		i += n;
	}
	if (live != ch->nr_live) {
		snprintf(msg, sizeof(msg), "bump chunk %#lx: %lu live areas, nr_live %lu", ch->start,
			 live, ch->nr_live);
		report(ctx, msg);
		(*errors)++;
	}
	spin_unlock(&ch->lock);
	return live;
}

void vmap_bump_for_each(struct vmap_space *vs, struct vmap_area *cva,
			void (*fn)(void *ctx, struct vmap_area *va), void *ctx)
{
	struct vmap_bump *b = vs->bump;
	struct vmap_bump_chunk *ch;

	if (!b)
		return;
	pthread_rwlock_rdlock(&b->table_lock);
	ch = chunk_lookup(b, cva->va_start);
	if (ch)
		spin_lock(&ch->lock);
	pthread_rwlock_unlock(&b->table_lock);
	if (!ch)
		return;
	for (unsigned long i = 0; i < VMAP_BUMP_CHUNK_PAGES;) {
		struct vmap_area *va = ch->back[i];

		if (!va || va->va_start != ch->start + (i << PAGE_SHIFT)) {
			i++;
			continue;
		}
		fn(ctx, va);
		i += va_size(va) >> PAGE_SHIFT;
	}
	spin_unlock(&ch->lock);
}

void vmap_bump_stats(struct vmap_space *vs, unsigned long *nr_chunks, unsigned long *nr_live)
{
	struct vmap_bump *b = vs->bump;
	struct list_head *pos;

	*nr_chunks = *nr_live = 0;
	if (!b)
		return;
	pthread_rwlock_rdlock(&b->table_lock);
	list_for_each(pos, &b->chunks) {
		struct vmap_bump_chunk *ch = list_entry(pos, struct vmap_bump_chunk, list);

		spin_lock(&ch->lock);
		*nr_live += ch->nr_live;
		spin_unlock(&ch->lock);
		(*nr_chunks)++;
	}
	pthread_rwlock_unlock(&b->table_lock);
}
