// SPDX-License-Identifier: MIT
/*
 * percpu.c - the dynamic percpu allocator of mm/percpu.c + mm/percpu-vm.c
 * (Linux 6.18) over the simulated vmalloc space, and
 * pcpu_get_vm_areas() (§2.10) that gives its chunks their addresses.
 *
 *   chunk = nr_cpus units of PCPU_UNIT_SIZE, congruent: an allocation at
 *   offset off exists at base + cpu * PCPU_UNIT_SIZE + off for every cpu.
 *
 *     alloc_map  1 bit per 4 bytes (PCPU_MIN_ALLOC_SIZE), set = in use
 *     bound_map  a bit at every allocation's first granule (and its end)
 *     populated  1 bit per page: backed in every unit (nr_cpus pages)
 *
 *   chunks sit on slot lists by their largest free run (pcpu_chunk_slot:
 *   max(fls(bytes) - PCPU_SLOT_BASE_SHIFT + 2, 1)); a wholly free chunk on
 *   the last slot. __alloc_percpu() scans slots from the request's size
 *   up, takes the first fit in a chunk, and creates a chunk
 *   (pcpu_get_vm_areas, top-down) when none fits; then it populates the
 *   pages the area touches (one order-0 page per unit per page) and zeroes
 *   the area in every unit.
 *
 * Locks: pcpu_alloc_mutex (chunk creation, population, destruction) before
 * pcpu_lock (the bitmaps, slots and counters).
 *
 * Where pagelab differs: no first chunk (no static percpu data, no
 * reserved area) and one unit group; block-level hints (pcpu_block_md)
 * are replaced by an exact largest-free-run per chunk, recomputed after
 * each change by a word-at-a-time scan; an emptied chunk is destroyed at
 * once when another empty chunk exists (the kernel's balance work does it
 * later); populated pages stay until the chunk goes. pcpu_get_vm_areas()
 * takes the highest fit of the last area and checks the others around it
 * rather than walking every candidate base.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/percpu.h"
#include "vmap_area.h"
#include "mm/validate.h"

#define PCPU_BITS		(PCPU_UNIT_SIZE / PCPU_MIN_ALLOC_SIZE)
#define PCPU_MAP_LONGS		(PCPU_BITS / 64)
#define PCPU_UNIT_PAGES		(PCPU_UNIT_SIZE / PAGE_SIZE)
#define PCPU_SLOT_BASE_SHIFT	5
#define VM_PCPU_FLAGS		(VM_ALLOC | VM_NO_GUARD | VM_PCPU)

/**
 * struct pcpu_chunk - one chunk.
 * @list:        on its slot list (pcpu_lock).
 * @vm:          the vm_struct of its area (from pcpu_get_vm_areas).
 * @base:        unit 0's address.
 * @free_bits:   free granules; @contig_bits: the largest free run.
 * @first_free:  no free granule below it.
 * @nr_alloc:    live allocations; @nr_populated: populated pages.
 */
struct pcpu_chunk {
	struct list_head list;
	struct vm_struct *vm;
	unsigned long base;
	int slot;
	unsigned long free_bits, contig_bits, first_free;
	unsigned long nr_alloc, nr_populated;
	unsigned long alloc_map[PCPU_MAP_LONGS];
	unsigned long bound_map[PCPU_MAP_LONGS + 1];
	unsigned long populated[PCPU_UNIT_PAGES / 64 + 1];
};

/**
 * struct pcpu_space - one machine's percpu allocator (vs->percpu).
 * @chunks: every chunk, sorted by base, for address lookups (pcpu_lock).
 */
struct pcpu_space {
	pthread_mutex_t alloc_mutex;
	struct pl_spinlock lock;
	int nr_slots;
	struct list_head *slots;
	struct pcpu_chunk **chunks;
	unsigned long nr_chunks, cap_chunks;
	unsigned long bytes_used;
};

/* ---- bitmaps --------------------------------------------------------------------- */

static inline bool test_bit_ul(const unsigned long *map, unsigned long b)
{
	return map[b / 64] >> (b % 64) & 1;
}

static inline void set_bit_ul(unsigned long *map, unsigned long b)
{
	map[b / 64] |= 1UL << (b % 64);
}

static inline void clear_bit_ul(unsigned long *map, unsigned long b)
{
	map[b / 64] &= ~(1UL << (b % 64));
}

/* The first bit at or after @b that equals @val, or @size. */
static unsigned long find_next(const unsigned long *map, unsigned long size, unsigned long b,
			       bool val)
{
	while (b < size) {
		unsigned long w = map[b / 64];

		if (!val)
			w = ~w;
		w &= ~0UL << (b % 64);
		if (w) {
			b = (b & ~63UL) + (unsigned long)__builtin_ctzl(w);
			return min(b, size);
		}
		b = (b | 63) + 1;
	}
	return size;
}

static void set_range(unsigned long *map, unsigned long start, unsigned long n, bool val)
{
	for (unsigned long b = start; b < start + n;) {
		unsigned long bit = b % 64, k = min(64 - bit, start + n - b);
		unsigned long mask = (k == 64 ? ~0UL : ((1UL << k) - 1)) << bit;

		if (val)
			map[b / 64] |= mask;
		else
			map[b / 64] &= ~mask;
		b += k;
	}
}

/* ---- chunk hints and slots ------------------------------------------------------ */

static int pcpu_size_to_slot(unsigned long bytes)
{
	int fls = bytes ? 64 - __builtin_clzl(bytes) : 0;

	return max(fls - PCPU_SLOT_BASE_SHIFT + 2, 1);
}

/* Recount free bits, the largest free run and the first free bit. */
static void pcpu_chunk_refresh_hint(struct pcpu_chunk *chunk)
{
	unsigned long b = find_next(chunk->alloc_map, PCPU_BITS, 0, false), end;

	chunk->first_free = b;
	chunk->contig_bits = 0;
	chunk->free_bits = 0;
	while (b < PCPU_BITS) {
		end = find_next(chunk->alloc_map, PCPU_BITS, b, true);
		chunk->free_bits += end - b;
		chunk->contig_bits = max(chunk->contig_bits, end - b);
		b = find_next(chunk->alloc_map, PCPU_BITS, end, false);
	}
}

/* pcpu_chunk_relocate(): onto the slot of its largest free run. Context: pcpu_lock. */
static void pcpu_chunk_relocate(struct pcpu_space *ps, struct pcpu_chunk *chunk)
{
	int slot = chunk->free_bits == PCPU_BITS ? ps->nr_slots - 1 :
		   min(pcpu_size_to_slot(chunk->contig_bits * PCPU_MIN_ALLOC_SIZE),
		       ps->nr_slots - 2);

	if (slot == chunk->slot)
		return;
	list_del(&chunk->list);
	list_add_tail(&chunk->list, &ps->slots[slot]);
	chunk->slot = slot;
}

/*
 * pcpu_find_fit() - the first offset (in granules) of a free run of @bits
 * aligned to @align_bits, or -1.
 */
static long pcpu_find_fit(struct pcpu_chunk *chunk, unsigned long bits, unsigned long align_bits)
{
	unsigned long b = chunk->first_free;

	if (chunk->contig_bits < bits)
		return -1;
	while (b < PCPU_BITS) {
		unsigned long start = (b + align_bits - 1) & ~(align_bits - 1);
		unsigned long end;

		if (start + bits > PCPU_BITS)
			return -1;
		end = find_next(chunk->alloc_map, PCPU_BITS, b, true);
		if (start + bits <= end)
			return (long)start;
		b = find_next(chunk->alloc_map, PCPU_BITS, end, false);
	}
	return -1;
}

/* ---- pcpu_get_vm_areas (mm/vmalloc.c) ------------------------------------------- */

/*
 * pcpu_get_vm_areas() - @nr_vms areas at @offsets/@sizes from one base,
 * aligned to @align, as high in the space as they fit (top-down from
 * VMALLOC_END). Return: their vm_structs in @vms, or -ENOMEM (nothing
 * allocated); -EINVAL for overlapping or misaligned requests.
 */
static int pcpu_get_vm_areas(const unsigned long *offsets, const unsigned long *sizes,
			     int nr_vms, unsigned long align, struct vm_struct **vms)
{
	struct vmap_space *vs = this_vmap();
	struct vmap_area *vas[8] = { 0 }, *va;
	unsigned long last_end = 0, base = 0;
	int last = 0, err = 0;
	bool purged = false, found = false;
	struct list_head *pos;

	if (nr_vms < 1 || nr_vms > 8 || !align || (align & (align - 1)))
		return -EINVAL;
	for (int i = 0; i < nr_vms; i++) {
		vms[i] = NULL;
		if (!IS_ALIGNED(offsets[i], align) || !sizes[i] || !IS_ALIGNED(sizes[i], PAGE_SIZE)) {
			nr_vms = i;
			err = -EINVAL;
			goto out_free;
		}
		if (offsets[i] + sizes[i] > last_end) {
			last_end = offsets[i] + sizes[i];
			last = i;
		}
		for (int j = 0; j < i; j++) {
			if (offsets[i] < offsets[j] + sizes[j] && offsets[j] < offsets[i] + sizes[i]) {
				nr_vms = i;
				err = -EINVAL;
				goto out_free;
			}
		}
		vas[i] = va_cache_alloc(vs);
		vms[i] = pl_objcache_alloc(vs->vm_struct_cachep, this_cpu_id());
		if (!vas[i] || !vms[i]) {
			nr_vms = i + 1;
			err = -ENOMEM;
			goto out_free;
		}
		memset(vms[i], 0, sizeof(*vms[i]));
	}
retry:
	spin_lock(&vs->free.lock);
	/* Top-down: the highest free area that holds the last area at an aligned base. */
	for (pos = vs->free.head.prev; pos != &vs->free.head && !found; pos = pos->prev) {
		struct vmap_area *f = list_entry(pos, struct vmap_area, list);

		if (va_size(f) < sizes[last])
			continue;
		base = ALIGN_DOWN(f->va_end - last_end, align);
		if (base + offsets[last] < f->va_start || base < VMALLOC_START)
			continue;
		found = true;
		for (int i = 0; i < nr_vms && found; i++) {
			unsigned long s = base + offsets[i], e = s + sizes[i];
			struct list_head *q;

			found = false;
			list_for_each(q, &vs->free.head) {
				struct vmap_area *g = list_entry(q, struct vmap_area, list);

				if (g->va_start <= s && e <= g->va_end) {
					found = true;
					break;
				}
			}
		}
	}
	for (int i = 0; found && i < nr_vms; i++) {
		unsigned long st = base + offsets[i];
		struct list_head *q;

		list_for_each(q, &vs->free.head) {
			struct vmap_area *g = list_entry(q, struct vmap_area, list);

			if (g->va_start <= st && st + sizes[i] <= g->va_end) {
				err = vs->ops->va_clip(vs, &vs->free, g, st, sizes[i]);
				break;
			}
		}
		if (err)
			pl_warn_ratelimited("pcpu_get_vm_areas: va_clip at %#lx failed (%d)", st, err);
	}
	spin_unlock(&vs->free.lock);
	if (!found) {
		if (!purged) {
			purged = true;
			pl_vmalloc_purge(vs->m);
			goto retry;
		}
		err = -ENOMEM;
		goto out_free;
	}
	for (int i = 0; i < nr_vms; i++) {
		struct vmap_node *vn;

		va = vas[i];
		va->va_start = base + offsets[i];
		va->va_end = va->va_start + sizes[i];
		va->flags = 0;
		va->vm = vms[i];
		vms[i]->addr = va->va_start;
		vms[i]->size = sizes[i];
		vms[i]->flags = VM_PCPU_FLAGS;
		vms[i]->caller = (const void *)pcpu_get_vm_areas;
		vn = addr_to_node(vs, va->va_start);
		spin_lock(&vn->busy.lock);
		vs->ops->insert(&vn->busy, va);
		spin_unlock(&vn->busy.lock);
	}
	return 0;
out_free:
	for (int i = 0; i < nr_vms; i++) {
		if (vas[i])
			va_cache_free(vs, vas[i]);
		if (vms[i])
			pl_objcache_free(vs->vm_struct_cachep, vms[i], this_cpu_id());
		vms[i] = NULL;
	}
	return err;
}

/* pcpu_free_vm_areas(): unmap and free the areas lazily, as vfree's ranges. */
static void pcpu_free_vm_areas(struct vm_struct **vms, int nr_vms)
{
	struct vmap_space *vs = this_vmap();

	for (int i = 0; i < nr_vms; i++) {
		struct vmap_area *va = find_unlink_vmap_area(vms[i]->addr, VA_WANT_VM);

		if (va) {
			vunmap_range_noflush(va->va_start, va->va_end);
			free_vmap_area_noflush(va);
		}
		pl_objcache_free(vs->vm_struct_cachep, vms[i], this_cpu_id());
	}
}

/* ---- chunks ------------------------------------------------------------------------- */

static struct pcpu_space *pcpu_space(struct vmap_space *vs)
{
	struct pcpu_space *ps = __atomic_load_n(&vs->percpu, __ATOMIC_ACQUIRE), *fresh;

	if (likely(ps))
		return ps;
	fresh = pl_zalloc_lines(sizeof(*fresh));
	if (!fresh)
		return NULL;
	fresh->nr_slots = pcpu_size_to_slot(PCPU_UNIT_SIZE) + 2;
	fresh->slots = calloc((size_t)fresh->nr_slots, sizeof(*fresh->slots));
	if (!fresh->slots) {
		free(fresh);
		return NULL;
	}
	for (int i = 0; i < fresh->nr_slots; i++)
		INIT_LIST_HEAD(&fresh->slots[i]);
	pthread_mutex_init(&fresh->alloc_mutex, NULL);
	pl_spin_init(&fresh->lock, vs->m->config.lock_stat);
	pl_spin_set_class(&fresh->lock, VT_LOCK_VMAP_OTHER);
	if (!__atomic_compare_exchange_n(&vs->percpu, &ps, fresh, false, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		pthread_mutex_destroy(&fresh->alloc_mutex);
		free(fresh->slots);
		free(fresh);
		return ps;
	}
	return fresh;
}

/* The chunk whose unit 0 holds @addr, or NULL. Context: pcpu_lock. */
static struct pcpu_chunk *pcpu_chunk_addr_search(struct pcpu_space *ps, unsigned long addr)
{
	unsigned long lo = 0, hi = ps->nr_chunks;

	while (lo < hi) {
		unsigned long mid = (lo + hi) / 2;
		struct pcpu_chunk *c = ps->chunks[mid];

		if (addr < c->base)
			hi = mid;
		else if (addr >= c->base + PCPU_UNIT_SIZE)
			lo = mid + 1;
		else
			return c;
	}
	return NULL;
}

/* pcpu_create_chunk(): the areas of all units, no page populated yet. */
static struct pcpu_chunk *pcpu_create_chunk(struct pcpu_space *ps)
{
	unsigned long offset = 0, size = PCPU_UNIT_SIZE * pl_this.machine->nr_cpus;
	struct pcpu_chunk *chunk = calloc(1, sizeof(*chunk));
	unsigned long i;

	if (!chunk)
		return NULL;
	if (ps->nr_chunks == ps->cap_chunks) {
		unsigned long cap = ps->cap_chunks ? ps->cap_chunks * 2 : 16;
		struct pcpu_chunk **c = realloc(ps->chunks, cap * sizeof(*c));

		if (!c) {
			free(chunk);
			return NULL;
		}
		ps->chunks = c;
		ps->cap_chunks = cap;
	}
	if (pcpu_get_vm_areas(&offset, &size, 1, PAGE_SIZE, &chunk->vm)) {
		free(chunk);
		return NULL;
	}
	chunk->base = chunk->vm->addr;
	set_bit_ul(chunk->bound_map, PCPU_BITS);
	pcpu_chunk_refresh_hint(chunk);
	chunk->slot = -1;
	INIT_LIST_HEAD(&chunk->list);
	spin_lock(&ps->lock);
	for (i = ps->nr_chunks; i > 0 && ps->chunks[i - 1]->base > chunk->base; i--)
		ps->chunks[i] = ps->chunks[i - 1];
	ps->chunks[i] = chunk;
	ps->nr_chunks++;
	chunk->slot = ps->nr_slots - 1;
	list_add_tail(&chunk->list, &ps->slots[chunk->slot]);
	spin_unlock(&ps->lock);
	vm_count(PL_EV_PCPU_CHUNK_NEW, 1);
	return chunk;
}

/* Unmap and free page @pg of the first @nr_cpus units of @chunk. */
static void pcpu_unmap_units(struct pcpu_chunk *chunk, unsigned long pg, unsigned int nr_cpus)
{
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
		unsigned long a = chunk->base + cpu * PCPU_UNIT_SIZE + pg * PAGE_SIZE;
		struct page *page = vmalloc_to_page((void *)a);

		vunmap_range_noflush(a, a + PAGE_SIZE);
		if (page)
			__free_page(page);
	}
}

/* pcpu_destroy_chunk(): depopulate, give back the areas. Context: alloc_mutex; off the lists. */
static void pcpu_destroy_chunk(struct pcpu_chunk *chunk)
{
	unsigned int nr_cpus = pl_this.machine->nr_cpus;

	for (unsigned long pg = 0; pg < PCPU_UNIT_PAGES; pg++)
		if (test_bit_ul(chunk->populated, pg))
			pcpu_unmap_units(chunk, pg, nr_cpus);
	pcpu_free_vm_areas(&chunk->vm, 1);
	free(chunk);
}

/*
 * pcpu_discard_chunk() - give back a chunk that was never populated (made
 * for an allocation that then failed): nothing was mapped, so its areas go
 * back at once, as pcpu_get_vm_areas()'s own error path gives them.
 * Context: alloc_mutex; off the lists.
 */
static void pcpu_discard_chunk(struct pcpu_chunk *chunk)
{
	struct vmap_space *vs = this_vmap();
	struct vmap_area *va;

	va = find_vmap_area(chunk->vm->addr);
	if (va) {
		va->vm = NULL;
		free_vmap_area(va);
	}
	pl_objcache_free(vs->vm_struct_cachep, chunk->vm, this_cpu_id());
	free(chunk);
}

/* Take @chunk out of the lists and the search array. Context: pcpu_lock. */
static void pcpu_unlink_chunk(struct pcpu_space *ps, struct pcpu_chunk *chunk)
{
	unsigned long i;

	list_del(&chunk->list);
	for (i = 0; i < ps->nr_chunks && ps->chunks[i] != chunk; i++)
		;
	for (; i + 1 < ps->nr_chunks; i++)
		ps->chunks[i] = ps->chunks[i + 1];
	ps->nr_chunks--;
}

/*
 * pcpu_populate_chunk() - back pages [@pg_start, @pg_end) in every unit:
 * one order-0 page per unit per page, mapped into the chunk.
 * Return: 0 or -ENOMEM (the pages of this call freed again, the earlier
 * ones of the range included: a chunk made for a failed allocation must
 * be left with nothing mapped).
 * Context: alloc_mutex.
 */
static int pcpu_populate_chunk(struct pcpu_chunk *chunk, unsigned long pg_start,
			       unsigned long pg_end, gfp_t gfp)
{
	unsigned int nr_cpus = pl_this.machine->nr_cpus;
	unsigned long done[PCPU_UNIT_PAGES / 64 + 1] = { 0 };

	for (unsigned long pg = pg_start; pg < pg_end; pg++) {
		if (test_bit_ul(chunk->populated, pg))
			continue;
		for (unsigned int cpu = 0; cpu < nr_cpus; cpu++) {
			unsigned long a = chunk->base + cpu * PCPU_UNIT_SIZE + pg * PAGE_SIZE;
			struct page *page = alloc_pages(gfp | __GFP_NOWARN, 0);

			if (!page || vmap_pages_range(a, a + PAGE_SIZE, &page, PAGE_SHIFT)) {
				if (page)
					__free_page(page);
				pcpu_unmap_units(chunk, pg, cpu);
				for (unsigned long p = pg_start; p < pg; p++) {
					if (!test_bit_ul(done, p))
						continue;
					pcpu_unmap_units(chunk, p, nr_cpus);
					clear_bit_ul(chunk->populated, p);
					chunk->nr_populated--;
				}
				return -ENOMEM;
			}
		}
		set_bit_ul(chunk->populated, pg);
		set_bit_ul(done, pg);
		chunk->nr_populated++;
		vm_count(PL_EV_PCPU_POPULATE_PAGES, nr_cpus);
	}
	return 0;
}

/* pcpu_free_area(): clear the allocation at granule @off. Context: pcpu_lock. */
static unsigned long pcpu_free_area(struct pcpu_space *ps, struct pcpu_chunk *chunk,
				    unsigned long off)
{
	unsigned long end = find_next(chunk->bound_map, PCPU_BITS + 1, off + 1, true);

	end = min(end, find_next(chunk->alloc_map, PCPU_BITS, off, false));
	set_range(chunk->alloc_map, off, end - off, false);
	clear_bit_ul(chunk->bound_map, off);
	chunk->nr_alloc--;
	ps->bytes_used -= (end - off) * PCPU_MIN_ALLOC_SIZE;
	pcpu_chunk_refresh_hint(chunk);
	pcpu_chunk_relocate(ps, chunk);
	return end - off;
}

/* ---- the API ------------------------------------------------------------------------ */

void *__alloc_percpu_gfp(size_t size, size_t align, gfp_t gfp)
{
	struct pl_machine *m = pl_this.machine;
	bool atomic = !(gfp & __GFP_DIRECT_RECLAIM);
	unsigned long bits, align_bits, pg_start, pg_end;
	struct pcpu_chunk *chunk = NULL;
	struct pcpu_space *ps;
	bool created = false;
	long off = -1;

	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("__alloc_percpu: the calling thread has not entered a machine");
		return NULL;
	}
	if (pl_check_gfp("__alloc_percpu", gfp))
		return NULL;
	if (align < PCPU_MIN_ALLOC_SIZE)
		align = PCPU_MIN_ALLOC_SIZE;
	size = (size + PCPU_MIN_ALLOC_SIZE - 1) & ~(size_t)(PCPU_MIN_ALLOC_SIZE - 1);
	if (unlikely(!size || size > PCPU_MIN_UNIT_SIZE || align > PAGE_SIZE ||
		     (align & (align - 1)))) {
		vmap_bad_input("illegal size (%zu) or align (%zu) for percpu allocation", size, align);
		return NULL;
	}
	ps = pcpu_space(m->vmap);
	if (!ps)
		return NULL;
	bits = size / PCPU_MIN_ALLOC_SIZE;
	align_bits = align / PCPU_MIN_ALLOC_SIZE;
	if (!atomic)
		pthread_mutex_lock(&ps->alloc_mutex);
restart:
	spin_lock(&ps->lock);
	for (int slot = pcpu_size_to_slot(size); slot < ps->nr_slots && off < 0; slot++) {
		struct list_head *pos;

		list_for_each(pos, &ps->slots[slot]) {
			chunk = list_entry(pos, struct pcpu_chunk, list);
			off = pcpu_find_fit(chunk, bits, align_bits);
			if (off >= 0)
				break;
		}
	}
	if (off >= 0) {
		/* pcpu_alloc_area() */
		set_range(chunk->alloc_map, (unsigned long)off, bits, true);
		set_bit_ul(chunk->bound_map, (unsigned long)off);
		chunk->nr_alloc++;
		ps->bytes_used += size;
		pcpu_chunk_refresh_hint(chunk);
		pcpu_chunk_relocate(ps, chunk);
	}
	spin_unlock(&ps->lock);
	if (off < 0) {
		if (atomic || created)
			goto fail;
		if (!pcpu_create_chunk(ps))
			goto fail;
		created = true;
		goto restart;
	}

	/* Populate what the area touches, then zero it in every unit. */
	pg_start = (unsigned long)off * PCPU_MIN_ALLOC_SIZE / PAGE_SIZE;
	pg_end = ((unsigned long)off * PCPU_MIN_ALLOC_SIZE + size + PAGE_SIZE - 1) / PAGE_SIZE;
	if (atomic) {
		for (unsigned long pg = pg_start; pg < pg_end; pg++) {
			if (!test_bit_ul(chunk->populated, pg)) {
				spin_lock(&ps->lock);
				pcpu_free_area(ps, chunk, (unsigned long)off);
				spin_unlock(&ps->lock);
				return NULL;	/* atomic users only get populated space */
			}
		}
	} else if (pcpu_populate_chunk(chunk, pg_start, pg_end, gfp & ~__GFP_ZERO)) {
		spin_lock(&ps->lock);
		pcpu_free_area(ps, chunk, (unsigned long)off);
		/*
		 * A chunk made for this call goes again: a failed allocation
		 * leaves nothing behind (the kernel leaves it to the balance
		 * work). alloc_mutex is held, so nobody else has used it.
		 */
		if (created && chunk->free_bits == PCPU_BITS)
			pcpu_unlink_chunk(ps, chunk);
		else
			created = false;
		spin_unlock(&ps->lock);
		if (created)
			pcpu_discard_chunk(chunk);
		goto fail;
	}
	for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++)
		vmalloc_memset((void *)(chunk->base + cpu * PCPU_UNIT_SIZE +
					(unsigned long)off * PCPU_MIN_ALLOC_SIZE), 0, size);
	if (!atomic)
		pthread_mutex_unlock(&ps->alloc_mutex);
	return (void *)(chunk->base + (unsigned long)off * PCPU_MIN_ALLOC_SIZE);
fail:
	if (!atomic)
		pthread_mutex_unlock(&ps->alloc_mutex);
	vm_count(PL_EV_ALLOC_FAIL, 1);
	if (!(gfp & __GFP_NOWARN))
		pl_warn_ratelimited("percpu: allocation failed, size=%zu align=%zu atomic=%d", size,
				    align, atomic);
	return NULL;
}

void *__alloc_percpu(size_t size, size_t align)
{
	return __alloc_percpu_gfp(size, align, GFP_KERNEL);
}

int free_percpu(void *ptr)
{
	unsigned long addr = (unsigned long)ptr, off;
	struct pl_machine *m = pl_this.machine;
	struct pcpu_chunk *chunk, *other = NULL;
	struct pcpu_space *ps;

	if (!ptr)
		return 0;
	if (unlikely(!m || !m->vmap)) {
		pl_warn_ratelimited("free_percpu: the calling thread has not entered a machine");
		return -EINVAL;
	}
	ps = __atomic_load_n(&m->vmap->percpu, __ATOMIC_ACQUIRE);
	if (!ps) {
		vmap_bad_input("free_percpu: %p is not a percpu pointer", ptr);
		return -EINVAL;
	}
	spin_lock(&ps->lock);
	chunk = pcpu_chunk_addr_search(ps, addr);
	off = chunk ? (addr - chunk->base) / PCPU_MIN_ALLOC_SIZE : 0;
	if (!chunk || !IS_ALIGNED(addr, PCPU_MIN_ALLOC_SIZE) ||
	    !test_bit_ul(chunk->bound_map, off) || !test_bit_ul(chunk->alloc_map, off)) {
		spin_unlock(&ps->lock);
		vmap_bad_input("free_percpu: %p is %s", ptr, chunk ? "not the start of a live percpu "
			  "allocation" : "not a percpu pointer");
		return -EINVAL;
	}
	pcpu_free_area(ps, chunk, off);
	/* Keep one empty chunk; another goes (the balance work's job). */
	if (chunk->free_bits == PCPU_BITS) {
		struct list_head *pos;

		list_for_each(pos, &ps->slots[ps->nr_slots - 1]) {
			struct pcpu_chunk *c = list_entry(pos, struct pcpu_chunk, list);

			if (c != chunk)
				other = c;
		}
	}
	spin_unlock(&ps->lock);
	if (other) {
		pthread_mutex_lock(&ps->alloc_mutex);
		spin_lock(&ps->lock);
		/* Still empty, still on the list (nobody allocated from it meanwhile)? */
		if (pcpu_chunk_addr_search(ps, chunk->base) == chunk && chunk->free_bits == PCPU_BITS)
			pcpu_unlink_chunk(ps, chunk);
		else
			chunk = NULL;
		spin_unlock(&ps->lock);
		if (chunk)
			pcpu_destroy_chunk(chunk);
		pthread_mutex_unlock(&ps->alloc_mutex);
	}
	return 0;
}

void *per_cpu_ptr(void *ptr, unsigned int cpu)
{
	if (unlikely(!pl_this.machine || cpu >= pl_this.machine->nr_cpus)) {
		pl_bad_arg(__func__, "cpu %u is not a vCPU of the entered machine", cpu);
		return NULL;
	}
	return (char *)ptr + (unsigned long)cpu * PCPU_UNIT_SIZE;
}

/* ---- reclaim, stats, the checker, teardown ----------------------------------------- */

void pl_percpu_reclaim(struct pl_machine *m)
{
	struct pcpu_space *ps;

	if (pl_check_this_machine(__func__, m))
		return;
	ps = m->vmap ? m->vmap->percpu : NULL;
	if (!ps)
		return;
	pthread_mutex_lock(&ps->alloc_mutex);
	for (;;) {
		struct pcpu_chunk *chunk = NULL;

		spin_lock(&ps->lock);
		if (!list_empty(&ps->slots[ps->nr_slots - 1])) {
			chunk = list_first_entry(&ps->slots[ps->nr_slots - 1], struct pcpu_chunk,
						 list);
			pcpu_unlink_chunk(ps, chunk);
		}
		spin_unlock(&ps->lock);
		if (!chunk)
			break;
		pcpu_destroy_chunk(chunk);
	}
	pthread_mutex_unlock(&ps->alloc_mutex);
}

void pl_percpu_stats(struct pl_machine *m, struct pl_percpu_stats *out)
{
	struct pcpu_space *ps;

	if (pl_check_ptr(__func__, m, "machine") || pl_check_ptr(__func__, out, "out"))
		return;
	ps = m->vmap ? m->vmap->percpu : NULL;
	memset(out, 0, sizeof(*out));
	if (!ps)
		return;
	spin_lock(&ps->lock);
	out->nr_chunks = ps->nr_chunks;
	for (unsigned long i = 0; i < ps->nr_chunks; i++) {
		out->nr_populated += ps->chunks[i]->nr_populated;
		out->nr_alloc += ps->chunks[i]->nr_alloc;
	}
	out->bytes_used = ps->bytes_used;
	spin_unlock(&ps->lock);
}

int pl_check_percpu(struct pl_machine *m)
{
	struct pcpu_space *ps = m && m->vmap ? m->vmap->percpu : NULL;
	struct pl_this saved = pl_this;
	unsigned long bytes = 0, on_lists = 0;
	int errors = 0;

#define PREPORT(...) do { if (errors++ < 20) { fprintf(stderr, "pl_check_percpu: "); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)
	if (pl_check_ptr(__func__, m, "machine"))
		return -EINVAL;
	if (!ps)
		return 0;
	pl_this.machine = m;
	pl_this.cpu = &m->cpus[0];
	spin_lock(&ps->lock);
	for (int s = 0; s < ps->nr_slots; s++) {
		struct list_head *pos;

		list_for_each(pos, &ps->slots[s]) {
			struct pcpu_chunk *c = list_entry(pos, struct pcpu_chunk, list);

			on_lists++;
			if (c->slot != s)
				PREPORT("chunk %#lx on slot %d, says %d", c->base, s, c->slot);
		}
	}
	if (on_lists != ps->nr_chunks)
		PREPORT("%lu chunks on the slot lists, %lu known", on_lists, ps->nr_chunks);
	for (unsigned long i = 0; i < ps->nr_chunks; i++) {
		struct pcpu_chunk *c = ps->chunks[i];
		unsigned long free_bits = c->free_bits, contig = c->contig_bits, nr_alloc = 0, pop = 0;
		struct vm_struct *vm = find_vm_area((void *)c->base);

		if (i && ps->chunks[i - 1]->base >= c->base)
			PREPORT("chunks out of order at %lu", i);
		if (vm != c->vm || !vm || vm->size != PCPU_UNIT_SIZE * m->nr_cpus ||
		    vm->flags != VM_PCPU_FLAGS)
			PREPORT("chunk %#lx: its area is not a busy percpu area", c->base);
		pcpu_chunk_refresh_hint(c);
		if (c->free_bits != free_bits || c->contig_bits != contig)
			PREPORT("chunk %#lx: free %lu contig %lu, the map says %lu %lu", c->base,
				free_bits, contig, c->free_bits, c->contig_bits);
		/* a word at a time: the checker runs after every fuzzer operation */
		for (unsigned long w = 0; w < PCPU_MAP_LONGS; w++) {
			unsigned long stray = c->bound_map[w] & ~c->alloc_map[w];

			if (stray)
				PREPORT("chunk %#lx: bound at %lu of no allocation", c->base,
					w * 64 + (unsigned long)__builtin_ctzl(stray));
			nr_alloc += (unsigned long)__builtin_popcountl(c->bound_map[w]);
		}
		bytes += (PCPU_BITS - c->free_bits) * PCPU_MIN_ALLOC_SIZE;
		if (nr_alloc != c->nr_alloc)
			PREPORT("chunk %#lx: nr_alloc %lu, bound_map has %lu", c->base, c->nr_alloc,
				nr_alloc);
		for (unsigned long pg = 0; pg < PCPU_UNIT_PAGES; pg++) {
			bool want = test_bit_ul(c->populated, pg);

			pop += want;
			for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
				unsigned long a = c->base + cpu * PCPU_UNIT_SIZE + pg * PAGE_SIZE;

				if ((vmalloc_to_page((void *)a) != NULL) != want)
					PREPORT("chunk %#lx: cpu %u page %lu %smapped", c->base, cpu, pg,
						want ? "not " : "");
			}
			/* every allocated granule lies on a populated page */
			if (!want && find_next(c->alloc_map, (pg + 1) * (PAGE_SIZE / 4),
					       pg * (PAGE_SIZE / 4), true) < (pg + 1) * (PAGE_SIZE / 4))
				PREPORT("chunk %#lx: page %lu in use but not populated", c->base, pg);
		}
		if (pop != c->nr_populated)
			PREPORT("chunk %#lx: nr_populated %lu, bitmap %lu", c->base, c->nr_populated,
				pop);
	}
	if (bytes != ps->bytes_used)
		PREPORT("bytes_used %lu, chunks hold %lu", ps->bytes_used, bytes);
	spin_unlock(&ps->lock);
	pl_this = saved;
#undef PREPORT
	return errors;
}

/* Free the allocator's host memory (the machine and its pages go with it). */
void percpu_destroy(struct vmap_space *vs)
{
	struct pcpu_space *ps = vs->percpu;

	if (!ps)
		return;
	for (unsigned long i = 0; i < ps->nr_chunks; i++)
		free(ps->chunks[i]);
	free(ps->chunks);
	free(ps->slots);
	pthread_mutex_destroy(&ps->alloc_mutex);
	free(ps);
	vs->percpu = NULL;
}

/* pcpu_lock, the kernel's global spinlock (made with the space, on first use) */
void pcpu_for_each_lock(struct vmap_space *vs, vmap_lock_fn fn, void *ctx)
{
	struct pcpu_space *ps = __atomic_load_n(&vs->percpu, __ATOMIC_ACQUIRE);

	if (ps)
		fn(ctx, "pcpu_lock", &ps->lock);
}
