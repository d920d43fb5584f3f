// SPDX-License-Identifier: MIT
/*
 * vmalloc_debug.c - /proc/vmallocinfo and the vmalloc checker.
 *
 * /proc/vmallocinfo (mm/vmalloc.c's s_show): the vmap nodes in index
 * order, each node's busy areas in address order (so the whole is sorted
 * only with one node), one line per area:
 *   0x<start>-0x<end> <size %7ld> <caller> pages=<n> vmalloc N0=<n>
 * vm_map_ram areas as "vm_map_ram", then every lazily freed area as
 * "unpurged vm_area". Addresses print as 16 hex digits (%pK for root);
 * the caller as %pS does without kallsyms: 0x + 16 hex digits.
 *
 * pl_check_vmalloc() trusts no counter: it collects every area of every
 * index, list and pool, sorts them and checks they tile [VMALLOC_START,
 * VMALLOC_END); it recounts vmap_lazy_nr, nr_vmalloc_pages, the pool
 * lengths and the vmap_area/vm_struct objects in use; it walks the page
 * tables of each busy area (each page mapped to the right frame, the guard
 * page not) and counts every mapping in the tables against the busy areas.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/percpu.h"
#include "vmap_area.h"
#include "mm/validate.h"

/* ---- /proc/vmallocinfo ---------------------------------------------------- */

static __printf(2, 3) void seq_printf(struct pl_seq *s, const char *fmt, ...)
{
	va_list ap;
	size_t room;
	int n;

	if (s->overflow)
		return;
	/* Measuring (no buffer) counts; otherwise one byte stays for the NUL. */
	room = s->buf && s->size ? s->size - s->count : 0;
	va_start(ap, fmt);
	n = vsnprintf(room ? s->buf + s->count : NULL, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if (s->buf && (size_t)n >= room) {
		s->overflow = true;	/* vsnprintf left a terminated prefix */
		s->count = room ? s->size - 1 : 0;
		return;
	}
	s->count += (size_t)n;
}

static void show_vm_area(struct pl_seq *s, struct vmap_area *va)
{
	struct vm_struct *v = va->vm;

	if (!v) {
		if (va->flags & VMAP_RAM)
			seq_printf(s, "0x%016lx-0x%016lx %7ld vm_map_ram\n", va->va_start, va->va_end,
				   (long)va_size(va));
		return;
	}
	if (__atomic_load_n(&v->flags, __ATOMIC_ACQUIRE) & VM_UNINITIALIZED)
		return;
	seq_printf(s, "0x%016lx-0x%016lx %7ld", v->addr, v->addr + v->size, (long)v->size);
	if (v->caller)
		seq_printf(s, " 0x%016lx", (unsigned long)v->caller);
	if (v->nr_pages)
		seq_printf(s, " pages=%u", v->nr_pages);
	if (v->phys_addr)
		seq_printf(s, " phys=0x%016lx", v->phys_addr);
	if (v->flags & VM_IOREMAP)
		seq_printf(s, " ioremap");
	if (v->flags & VM_SPARSE)
		seq_printf(s, " sparse");
	if (v->flags & VM_ALLOC)
		seq_printf(s, " vmalloc");
	if (v->flags & VM_MAP)
		seq_printf(s, " vmap");
	if (v->flags & VM_USERMAP)
		seq_printf(s, " user");
	if (v->flags & VM_DMA_COHERENT)
		seq_printf(s, " dma-coherent");
	if (is_vmalloc_addr(v->pages))
		seq_printf(s, " vpages");
	if (v->nr_pages)	/* show_numa_info(): one memory node */
		seq_printf(s, " N0=%u", v->nr_pages);
	seq_printf(s, "\n");
}

static void show_bump_area(void *ctx, struct vmap_area *va)
{
	show_vm_area(ctx, va);
}

long pl_show_vmallocinfo(struct pl_machine *m, char *buf, size_t size)
{
	struct pl_seq s = { .buf = buf, .size = size };
	struct vmap_space *vs;
	struct list_head *pos;

	if (pl_check_ptr(__func__, m, "machine") ||
	    (size && pl_check_ptr(__func__, buf, "buf")))
		return -EINVAL;
	vs = m->vmap;
	if (!vs)
		return pl_seq_finish(&s);
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		spin_lock(&vn->busy.lock);
		list_for_each(pos, &vn->busy.head) {
			struct vmap_area *va = list_entry(pos, struct vmap_area, list);

			if (va->flags & VMAP_BUMP_CHUNK)	/* its areas, not itself */
				vmap_bump_for_each(vs, va, show_bump_area, &s);
			else
				show_vm_area(&s, va);
		}
		spin_unlock(&vn->busy.lock);
	}
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {	/* show_purge_info() */
		struct vmap_node *vn = &vs->vmap_nodes[i];

		spin_lock(&vn->lazy.lock);
		list_for_each(pos, &vn->lazy.head) {
			struct vmap_area *va = list_entry(pos, struct vmap_area, list);

			seq_printf(&s, "0x%016lx-0x%016lx %7ld unpurged vm_area\n", va->va_start,
				   va->va_end, (long)va_size(va));
		}
		spin_unlock(&vn->lazy.lock);
	}
	return pl_seq_finish(&s);
}

long pl_show_vmallocinfo_file(struct pl_machine *m, FILE *f)
{
	return pl_show_to_file(m, pl_show_vmallocinfo, f);
}

/* ---- the checker ------------------------------------------------------------ */

#define MAX_REPORTS 20

enum va_state { VA_FREE, VA_BUSY, VA_LAZY, VA_POOLED, VA_PARKED, VA_BUMP };
static const char *const state_names[] = { "free", "busy", "lazy", "pooled", "parked",
					    "bump chunk" };

struct va_ref {
	unsigned long start, end;
	enum va_state state;
};

struct vchecker {
	struct vmap_space *vs;
	unsigned long bump_areas, bump_vm, bump_mapped, bump_vmalloc_pages;
	int errors;
	struct va_ref *refs;
	size_t nr, cap;
	bool oom;
};

static __printf(2, 3) void vreport(struct vchecker *c, const char *fmt, ...)
{
	va_list ap;

	if (c->errors++ >= MAX_REPORTS)
		return;
	fprintf(stderr, "pl_check_vmalloc: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void report_cb(void *ctx, const char *msg)
{
	struct vchecker *c = ctx;

	if (c->errors < MAX_REPORTS)
		fprintf(stderr, "pl_check_vmalloc: %s\n", msg);
	/* the index's check returns its own count; this only prints */
}

static void add_ref(struct vchecker *c, struct vmap_area *va, enum va_state state)
{
	if (c->nr == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 1024;
		struct va_ref *r = realloc(c->refs, cap * sizeof(*r));

		if (!r) {
			c->oom = true;
			return;
		}
		c->refs = r;
		c->cap = cap;
	}
	c->refs[c->nr++] = (struct va_ref){ va->va_start, va->va_end, state };
}

static int cmp_ref(const void *a, const void *b)
{
	const struct va_ref *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* One busy area with a vm_struct: its fields and its mappings. Return: pages mapped. */
static unsigned long check_busy_vm(struct vchecker *c, struct vmap_space *vs, struct vmap_area *va)
{
	struct vm_struct *vm = va->vm;
	unsigned long mapped = get_vm_area_size(vm) >> PAGE_SHIFT;

	if (vm->addr != va->va_start || vm->size != va_size(va)) {
		vreport(c, "busy area [%#lx, %#lx): vm_struct says addr %#lx size %#lx", va->va_start,
			va->va_end, vm->addr, vm->size);
		return 0;
	}
	if (vm->flags & VM_UNINITIALIZED)
		return 0;	/* being set up */
	/* populated on demand (pl_check_percpu() checks it), or by get_vm_area()'s caller */
	if (vm->flags & (VM_PCPU | VM_GET_AREA))
		return pgtable_count_mapped(vs, va->va_start, va->va_end);
	for (unsigned long i = 0; i < mapped; i++) {
		unsigned long a = vm->addr + (i << PAGE_SHIFT);
		void *host = vmalloc_host_addr(vs, a);

		if (!host) {
			vreport(c, "busy area %#lx: page %lu is not mapped", vm->addr, i);
			return mapped;
		}
		if (vm->pages && i < vm->nr_pages &&
		    host != page_address(vm->pages[i])) {
			vreport(c, "busy area %#lx: page %lu maps pfn %#lx, pages[] has pfn %#lx",
				vm->addr, i, vmalloc_to_pfn((void *)a), page_to_pfn(vm->pages[i]));
			return mapped;
		}
		if (vm->pages && i < vm->nr_pages && !vm->page_order &&
		    page_ref_count(vm->pages[i]) <= 0)
			vreport(c, "busy area %#lx: page %lu (pfn %#lx) is free", vm->addr, i,
				page_to_pfn(vm->pages[i]));
	}
	if (!(vm->flags & VM_NO_GUARD) && vmalloc_host_addr(vs, va->va_end - PAGE_SIZE))
		vreport(c, "busy area %#lx: its guard page is mapped", vm->addr);
	return mapped;
}

/* A live area of a bump chunk: a busy area inside its chunk's ref. */
static void check_bump_area(void *ctx, struct vmap_area *va)
{
	struct vchecker *c = ctx;

	c->bump_areas++;
	if (!va->vm) {
		vreport(c, "bump area [%#lx, %#lx) has no vm_struct", va->va_start, va->va_end);
		return;
	}
	c->bump_vm++;
	c->bump_mapped += check_busy_vm(c, c->vs, va);
	if ((va->vm->flags & VM_ALLOC) && !(va->vm->flags & VM_MAP_PUT_PAGES))
		c->bump_vmalloc_pages += va->vm->nr_pages;
}

static void lock_all(struct vmap_space *vs)
{
	spin_lock(&vs->free.lock);
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		spin_lock(&vs->vmap_nodes[i].busy.lock);
		spin_lock(&vs->vmap_nodes[i].lazy.lock);
		spin_lock(&vs->vmap_nodes[i].pool_lock);
	}
}

static void unlock_all(struct vmap_space *vs)
{
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		spin_unlock(&vs->vmap_nodes[i].pool_lock);
		spin_unlock(&vs->vmap_nodes[i].lazy.lock);
		spin_unlock(&vs->vmap_nodes[i].busy.lock);
	}
	spin_unlock(&vs->free.lock);
}

static void check_space(struct vchecker *c, struct vmap_space *vs)
{
	unsigned long lazy_pages = 0, vmalloc_pages = 0, mapped = 0, nr_vm = 0, spares = 0;
	unsigned long nr_blocks = 0;
	struct list_head *pos;
	unsigned long expect;

	c->errors += vs->ops->check_free(&vs->free, report_cb, c);
	list_for_each(pos, &vs->free.head)
		add_ref(c, list_entry(pos, struct vmap_area, list), VA_FREE);
	/* Free areas the maple index parked (no nodes): free, outside its tree. */
	if (vs->ops->parked) {
		struct list_head *parked = vs->ops->parked(&vs->free);

		for (pos = parked ? parked->next : NULL; pos && pos != parked; pos = pos->next)
			add_ref(c, list_entry(pos, struct vmap_area, list), VA_PARKED);
	}

	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		struct vmap_node *vn = &vs->vmap_nodes[i];

		c->errors += vs->ops->check_set(&vn->busy, report_cb, c);
		c->errors += vs->ops->check_set(&vn->lazy, report_cb, c);
		list_for_each(pos, &vn->busy.head) {
			struct vmap_area *va = list_entry(pos, struct vmap_area, list);

			add_ref(c, va, VA_BUSY);
			if (addr_to_node_id(vs, va->va_start) != i)
				vreport(c, "busy area %#lx in node %u, belongs to node %u", va->va_start,
					i, addr_to_node_id(vs, va->va_start));
			if (!va->vm) {
				/* vm_map_ram: a block's live mappings, or a whole area */
				if (va->flags & VMAP_BLOCK) {
					nr_blocks++;
					mapped += vmap_block_check(vs, va, report_cb, c, &c->errors);
				} else if (va->flags & VMAP_RAM) {
					mapped += va_size(va) >> PAGE_SHIFT;
				} else if (va->flags & VMAP_BUMP_CHUNK) {
					vmap_bump_check(vs, va, check_bump_area, report_cb, c,
							&c->errors);
				}
				continue;
			}
			nr_vm++;
			mapped += check_busy_vm(c, vs, va);
			if ((va->vm->flags & VM_ALLOC) && !(va->vm->flags & VM_MAP_PUT_PAGES))
				vmalloc_pages += va->vm->nr_pages;
		}
		list_for_each(pos, &vn->lazy.head) {
			struct vmap_area *va = list_entry(pos, struct vmap_area, list);
			unsigned int id = decode_vn_id(vs, va->flags);
			unsigned int want = id < vs->nr_vmap_nodes ? id : addr_to_node_id(vs, va->va_start);

			add_ref(c, va, VA_LAZY);
			lazy_pages += va_size(va) >> PAGE_SHIFT;
			if (want != i)
				vreport(c, "lazy area %#lx in node %u, belongs to node %u", va->va_start,
					i, want);
		}
		for (int p = 0; p < MAX_VA_SIZE_PAGES; p++) {
			unsigned long n = 0;

			list_for_each(pos, &vn->pool[p].head) {
				struct vmap_area *va = list_entry(pos, struct vmap_area, list);

				add_ref(c, va, VA_POOLED);
				if (va_size(va) != (unsigned long)(p + 1) * PAGE_SIZE)
					vreport(c, "node %u pool %d holds area [%#lx, %#lx)", i, p,
						va->va_start, va->va_end);
				n++;
			}
			if (n != vn->pool[p].len)
				vreport(c, "node %u pool %d: len %lu, holds %lu", i, p,
					vn->pool[p].len, n);
		}
	}
	if (c->oom) {
		vreport(c, "out of memory");
		return;
	}
	/* bump areas: busy, inside their chunk's ref */
	nr_vm += c->bump_vm;
	mapped += c->bump_mapped;
	vmalloc_pages += c->bump_vmalloc_pages;

	/* The partition of [VMALLOC_START, VMALLOC_END). */
	qsort(c->refs, c->nr, sizeof(*c->refs), cmp_ref);
	expect = VMALLOC_START;
	for (size_t k = 0; k < c->nr; k++) {
		struct va_ref *r = &c->refs[k];

		if (r->start > expect)
			vreport(c, "hole [%#lx, %#lx) before %s area [%#lx, %#lx)", expect, r->start,
				state_names[r->state], r->start, r->end);
		else if (r->start < expect)
			vreport(c, "%s area [%#lx, %#lx) overlaps the area before it (ending %#lx)",
				state_names[r->state], r->start, r->end, expect);
		if (r->end <= r->start || !IS_ALIGNED(r->start, PAGE_SIZE) ||
		    !IS_ALIGNED(r->end, PAGE_SIZE))
			vreport(c, "%s area [%#lx, %#lx) empty or not page aligned",
				state_names[r->state], r->start, r->end);
		if (r->end > expect)
			expect = r->end;
	}
	if (expect != VMALLOC_END)
		vreport(c, "the areas end at %#lx, the space at %#lx", expect, VMALLOC_END);

	/* Counters. */
	if ((unsigned long)__atomic_load_n(&vs->vmap_lazy_nr, __ATOMIC_RELAXED) != lazy_pages)
		vreport(c, "vmap_lazy_nr %ld, lazy areas hold %lu pages",
			__atomic_load_n(&vs->vmap_lazy_nr, __ATOMIC_RELAXED), lazy_pages);
	if ((unsigned long)__atomic_load_n(&vs->nr_vmalloc_pages, __ATOMIC_RELAXED) != vmalloc_pages)
		vreport(c, "nr_vmalloc_pages %ld, busy areas hold %lu",
			__atomic_load_n(&vs->nr_vmalloc_pages, __ATOMIC_RELAXED), vmalloc_pages);
	for (unsigned int cpu = 0; cpu < vs->m->nr_cpus; cpu++)
		spares += vs->ne_fit_preload[cpu] != NULL;
	if ((unsigned long)pl_objcache_in_use(vs->vmap_area_cachep) != c->nr + spares + c->bump_areas)
		vreport(c, "%ld vmap_area objects in use, %zu areas + %lu preloaded spares + %lu "
			"bump areas", pl_objcache_in_use(vs->vmap_area_cachep), c->nr, spares,
			c->bump_areas);
	if ((unsigned long)pl_objcache_in_use(vs->vm_struct_cachep) != nr_vm)
		vreport(c, "%ld vm_struct objects in use, %lu busy areas have one",
			pl_objcache_in_use(vs->vm_struct_cachep), nr_vm);

	if (vmap_blocks_count(vs) != nr_blocks)
		vreport(c, "%lu vmap blocks, %lu busy block areas", vmap_blocks_count(vs), nr_blocks);

	/* Nothing mapped outside the busy areas. */
	if (pgtable_count_mapped(vs, VMALLOC_START, VMALLOC_END) != mapped)
		vreport(c, "page tables map %lu pages, busy areas %lu",
			pgtable_count_mapped(vs, VMALLOC_START, VMALLOC_END), mapped);
}

int pl_check_vmalloc(struct pl_machine *m)
{
	struct vchecker c = { 0 };
	struct pl_this saved = pl_this;
	struct vmap_space *vs;

	if (pl_check_ptr(__func__, m, "machine"))
		return -EINVAL;
	vs = m->vmap;
	if (!vs)
		return 0;
	/* The walk needs the machine's memmap: act from its CPU 0, read only. */
	pl_this.machine = m;
	pl_this.cpu = &m->cpus[0];
	c.vs = vs;
	lock_all(vs);
	check_space(&c, vs);
	unlock_all(vs);
	pl_this = saved;
	c.errors += pl_check_percpu(m);
	free(c.refs);
	if (c.errors > MAX_REPORTS)
		fprintf(stderr, "pl_check_vmalloc: %d more\n", c.errors - MAX_REPORTS);
	return c.errors;
}

void pl_vmalloc_for_each_lock(struct pl_machine *m,
			      void (*fn)(void *ctx, const char *cls, const struct pl_spinlock *lock),
			      void *ctx)
{
	struct vmap_space *vs;

	if (pl_check_ptr(__func__, m, "machine") || pl_check_ptr(__func__, fn, "fn"))
		return;
	vs = m->vmap;
	if (!vs)
		return;
	/* the kernel's names: a global lock by its own, the others by init site */
	fn(ctx, "free_vmap_area_lock", &vs->free.lock);
	for (unsigned int i = 0; i < vs->nr_vmap_nodes; i++) {
		fn(ctx, "&vn->busy.lock", &vs->vmap_nodes[i].busy.lock);
		fn(ctx, "&vn->lazy.lock", &vs->vmap_nodes[i].lazy.lock);
		fn(ctx, "&vn->pool_lock", &vs->vmap_nodes[i].pool_lock);
	}
	vmap_blocks_for_each_lock(vs, fn, ctx);
	vmap_bump_for_each_lock(vs, fn, ctx);
	pcpu_for_each_lock(vs, fn, ctx);
}
