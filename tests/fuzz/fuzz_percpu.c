// SPDX-License-Identifier: MIT
/*
 * fuzz_percpu.c - the fuzzer's percpu operations: __alloc_percpu() and
 * __alloc_percpu_gfp() of sizes from 1 byte to PCPU_MIN_UNIT_SIZE at
 * alignments up to a page, free_percpu(), and its bad input (a double
 * free, a pointer inside an allocation, another CPU's copy, a vmalloc
 * address, a host address).
 *
 * The model: the live allocations (pointer, size). Every CPU's copy of each
 * must be aligned, zeroed when new, and stamped with a word per CPU at both
 * ends that must survive until the free; no copy may overlap another or a
 * vmalloc area (fz_vm_check_overlaps()); the allocator's live count and
 * bytes in use (sizes rounded up to PCPU_MIN_ALLOC_SIZE) equal the model's.
 */
#include <stdio.h>
#include <string.h>
#include "fuzz_internal.h"

#define PCPU_MAX	64
#define PGRAVE_MAX	16

struct pobj {
	void *ptr;
	size_t size;
	uint64_t seed;
};

static struct {
	struct pobj o[PCPU_MAX];
	unsigned int nr;
	void *graves[PGRAVE_MAX];
	unsigned int nr_graves, grave_next;
} pc;

void fz_pcpu_begin(struct fz *f)
{
	(void)f;
	memset(&pc, 0, sizeof(pc));
}

unsigned int fz_pcpu_nr_live(void)
{
	return pc.nr;
}

void *fz_pcpu_any(uint8_t idx, size_t *size)
{
	if (!pc.nr)
		return NULL;
	*size = pc.o[idx % pc.nr].size;
	return pc.o[idx % pc.nr].ptr;
}

unsigned int fz_pcpu_ranges(struct fz_range *out, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < pc.nr; i++)
		for (unsigned int cpu = 0; cpu < FZ_NR_CPUS && n < max; cpu++) {
			unsigned long a = (unsigned long)per_cpu_ptr(pc.o[i].ptr, cpu);

			out[n++] = (struct fz_range){ a, a + pc.o[i].size, "percpu copy" };
		}
	return n;
}

static uint64_t cpu_word(const struct pobj *o, unsigned int cpu, unsigned int end)
{
	return o->seed * 0x100000001b3ULL + cpu * 2 + end;
}

/* Write (@check false) or check the stamp at both ends of every CPU's copy. */
static void stamp(struct fz *f, const struct pobj *o, bool check)
{
	size_t len = min(o->size, sizeof(uint64_t));

	for (unsigned int cpu = 0; cpu < FZ_NR_CPUS; cpu++) {
		char *p = per_cpu_ptr(o->ptr, cpu);

		for (unsigned int end = 0; end < 2; end++) {
			char *at = end ? p + o->size - len : p;
			uint64_t w = cpu_word(o, cpu, end), got = 0;

			if (end && o->size < 2 * sizeof(uint64_t))
				break;
			if (!check) {
				FZ_ASSERT(f, vmalloc_write(at, &w, len) == 0);
				continue;
			}
			FZ_ASSERT(f, vmalloc_read(&got, at, len) == 0);
			if (memcmp(&got, &w, len))
				fz_fail(f, "percpu %p (%zu bytes) CPU %u: contents changed", o->ptr,
					o->size, cpu);
		}
	}
}

static void check_counts(struct fz *f)
{
	struct pl_percpu_stats ps;
	unsigned long bytes = 0;

	for (unsigned int i = 0; i < pc.nr; i++)
		bytes += ALIGN_DOWN(pc.o[i].size + PCPU_MIN_ALLOC_SIZE - 1, PCPU_MIN_ALLOC_SIZE);
	pl_percpu_stats(f->m, &ps);
	if (ps.nr_alloc != pc.nr || ps.bytes_used != bytes)
		fz_fail(f, "percpu: %lu allocations of %lu bytes, the model has %u of %lu",
			ps.nr_alloc, ps.bytes_used, pc.nr, bytes);
}

void op_alloc_percpu(struct fz *f, const uint8_t *a)
{
	static const unsigned int scale[4] = { 1, 4, 16, 128 };
	size_t size = 1 + (size_t)(a[1] & 3 ? a[0] * scale[a[1] & 3] : a[0] % 64);
	size_t align = 1UL << (a[2] % 13);
	struct pobj *o;
	void *p;

	size = min(size, (size_t)PCPU_MIN_UNIT_SIZE);
	p = (a[1] & 4) ? __alloc_percpu_gfp(size, align, GFP_NOWAIT) : __alloc_percpu(size, align);
	if (!p) {
		/* Without injected faults, and with pages to spare, only GFP_NOWAIT may fail. */
		if (!(a[1] & 4) && !f->faults_on &&
		    fz_nr_model_free(f) > FZ_NR_CPUS * (size / PAGE_SIZE + 2) + FZ_SPARE_PAGES +
		    fz_watermark_pages(f))
			fz_fail(f, "__alloc_percpu(%zu, %zu) failed with %lu pages free", size, align,
				fz_nr_model_free(f));
		check_counts(f);
		return;
	}
	for (unsigned int cpu = 0; cpu < FZ_NR_CPUS; cpu++) {
		char *c = per_cpu_ptr(p, cpu);
		unsigned char buf[64];
		size_t n = min(size, sizeof(buf));

		if (!IS_ALIGNED((unsigned long)c, align) || !is_vmalloc_addr(c))
			fz_fail(f, "__alloc_percpu(%zu, %zu): CPU %u's copy at %p", size, align, cpu,
				(void *)c);
		for (int end = 0; end < 2; end++) {
			FZ_ASSERT(f, vmalloc_read(buf, end ? c + size - n : c, n) == 0);
			for (size_t i = 0; i < n; i++)
				if (buf[i])
					fz_fail(f, "new percpu %p CPU %u: not zeroed", p, cpu);
		}
	}
	if (pc.nr == PCPU_MAX) {
		FZ_ASSERT(f, free_percpu(p) == 0);
		check_counts(f);
		return;
	}
	o = &pc.o[pc.nr++];
	*o = (struct pobj){ p, size, ++f->stamps };
	stamp(f, o, false);
	check_counts(f);
	fz_vm_check_overlaps(f, NULL, 0);
}

static void free_one(struct fz *f, struct pobj *o)
{
	stamp(f, o, true);
	FZ_ASSERT(f, free_percpu(o->ptr) == 0);
	pc.graves[pc.grave_next] = o->ptr;
	pc.grave_next = (pc.grave_next + 1) % PGRAVE_MAX;
	if (pc.nr_graves < PGRAVE_MAX)
		pc.nr_graves++;
	*o = pc.o[--pc.nr];
	check_counts(f);
}

void op_free_percpu(struct fz *f, const uint8_t *a)
{
	if (pc.nr)
		free_one(f, &pc.o[a[0] % pc.nr]);
}

static bool live_ptr(const void *p)
{
	for (unsigned int i = 0; i < pc.nr; i++)
		if (pc.o[i].ptr == p)
			return true;
	return false;
}

void op_bad_free_percpu(struct fz *f, const uint8_t *a)
{
	struct pobj *o = pc.nr ? &pc.o[a[1] % pc.nr] : NULL;
	struct bad_call bc;
	char *p;

	switch (a[0] % 5) {
	case 0: /* double free */
		if (!pc.nr_graves)
			return;
		p = pc.graves[a[1] % pc.nr_graves];
		if (live_ptr(p))
			return;
		break;
	case 1: /* inside an allocation */
		if (!o || o->size <= PCPU_MIN_ALLOC_SIZE)
			return;
		p = (char *)o->ptr + 1 + a[2] % (o->size - 1);
		break;
	case 2: /* another CPU's copy */
		if (!o)
			return;
		p = per_cpu_ptr(o->ptr, 1 + a[2] % (FZ_NR_CPUS - 1));
		break;
	case 3: /* a vmalloc address */
		p = (char *)VMALLOC_START + (unsigned long)a[2] * PAGE_SIZE;
		break;
	default: /* a host address */
		p = (char *)&pc + a[2];
		break;
	}
	bad_begin(f, &bc);
	bad_end(f, &bc, free_percpu(p), -EINVAL);
}

void fz_pcpu_free_all(struct fz *f)
{
	while (pc.nr)
		free_one(f, &pc.o[pc.nr - 1]);
}
