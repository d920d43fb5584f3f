// SPDX-License-Identifier: MIT
/*
 * fuzz_maple.c - the fuzzer's maple tree operations on a tree of its own
 * (MT_FLAGS_ALLOC_RANGE): stores and inserts of ranges through every store
 * API (mtree_store_range, mtree_insert_range, mas_preallocate +
 * mas_store_prealloc, mas_store_gfp), erases, and empty_area searches up and
 * down, some then stored into (mtree_alloc_range/rrange too).
 *
 * The model is an interval map of [0, MT_N): each index has the id of the
 * store that wrote it (0 = NULL) and that store's entry; a range is a
 * maximal run of one id. Every call's result is predicted exactly: the
 * entry erased, -EEXIST, the index empty_area finds. After each operation
 * the tree, walked with mas_find(), must hold exactly the model's ranges
 * (same boundaries, same entries, NULL elsewhere) and mt_validate() must
 * find nothing. Injected node allocation failures (the maple node fault
 * site) must return -ENOMEM and leave the tree as it was.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "pagelab/maple_tree.h"
#include "fuzz_internal.h"

#define MT_N		512
#define NR_TOKENS	16

static struct {
	struct maple_tree mt;
	uint32_t id[MT_N];
	uint8_t tok[MT_N];
	uint32_t next_id;
} mp;

static long tokens[NR_TOKENS];

static void *token(unsigned int k)
{
	return k ? &tokens[k] : NULL;
}

static void reset_fault(void)
{
	struct pl_fault_attr attr;

	pl_fault_attr_default(&attr);
	mt_fault_set(&attr);
}

void fz_maple_begin(struct fz *f)
{
	(void)f;
	memset(&mp, 0, sizeof(mp));
	mt_init_flags(&mp.mt, MT_FLAGS_ALLOC_RANGE);
	reset_fault();
}

void fz_maple_end(struct fz *f)
{
	(void)f;
	reset_fault();
	mtree_destroy(&mp.mt);
}

static void model_store(unsigned long first, unsigned long last, unsigned int k)
{
	uint32_t id = k ? ++mp.next_id : 0;

	for (unsigned long i = first; i <= last && i < MT_N; i++) {
		mp.id[i] = id;
		mp.tok[i] = (uint8_t)k;
	}
}

static bool model_range_null(unsigned long first, unsigned long last)
{
	for (unsigned long i = first; i <= last && i < MT_N; i++)
		if (mp.id[i])
			return false;
	return true;
}

/* The tree against the model, range by range; then mt_validate(). */
static void compare(struct fz *f)
{
	MA_STATE(mas, &mp.mt, 0, 0);
	unsigned long next = 0;
	void *e;

	mtree_lock(&mp.mt);
	mas_for_each(&mas, e, ULONG_MAX) {
		unsigned long lo = mas.index, hi = mas.last;

		if (hi >= MT_N || lo > hi)
			fz_fail(f, "maple: range [%lu, %lu] the model never stored", lo, hi);
		if (lo > next && !model_range_null(next, lo - 1))
			fz_fail(f, "maple: [%lu, %lu) NULL in the tree, not in the model", next, lo);
		if (!mp.id[lo] || e != token(mp.tok[lo]) || (lo && mp.id[lo - 1] == mp.id[lo]) ||
		    (hi + 1 < MT_N && mp.id[hi + 1] == mp.id[lo]))
			fz_fail(f, "maple: tree has [%lu, %lu] -> %p, the model differs", lo, hi, e);
		for (unsigned long i = lo; i <= hi; i++)
			if (mp.id[i] != mp.id[lo])
				fz_fail(f, "maple: [%lu, %lu] is several ranges in the model", lo, hi);
		next = hi + 1;
	}
	mtree_unlock(&mp.mt);
	if (next < MT_N && !model_range_null(next, MT_N - 1))
		fz_fail(f, "maple: the model has entries after %lu, the tree none", next);
	if (mt_validate(&mp.mt))
		fz_fail(f, "maple: mt_validate() found problems");
}

static void store_failed(struct fz *f, int ret)
{
	if (ret != -ENOMEM || !f->faults_on)
		fz_fail(f, "maple store returned %d", ret);
}

void op_maple_store(struct fz *f, const uint8_t *a)
{
	unsigned long first = ((unsigned long)a[0] | (unsigned long)(a[1] & 1) << 8) % MT_N;
	unsigned long len = (a[1] & 2) ? 1 + a[2] * 2UL : 1UL + a[2] % 16;
	unsigned long last = min(first + len - 1, (unsigned long)MT_N - 1);
	unsigned int k = a[3] % NR_TOKENS;
	MA_STATE(mas, &mp.mt, first, last);
	int ret, want = 0;

	switch ((a[1] >> 2) % 5) {
	case 0:
		ret = mtree_store_range(&mp.mt, first, last, token(k), GFP_KERNEL);
		break;
	case 1:
		want = !k ? -EINVAL : model_range_null(first, last) ? 0 : -EEXIST;
		ret = mtree_insert_range(&mp.mt, first, last, token(k), GFP_KERNEL);
		break;
	case 2:
		mtree_lock(&mp.mt);
		ret = mas_preallocate(&mas, token(k), GFP_KERNEL);
		if (!ret) {
			mas_store_prealloc(&mas, token(k));
			ret = mas_is_err(&mas) ? mas.error : 0;
		}
		mtree_unlock(&mp.mt);
		break;
	case 3:
		mtree_lock(&mp.mt);
		ret = mas_store_gfp(&mas, token(k), GFP_KERNEL);
		mtree_unlock(&mp.mt);
		break;
	default: /* first > last */
		want = -EINVAL;
		ret = mtree_store_range(&mp.mt, last + 1, last, token(k), GFP_KERNEL);
		break;
	}
	if (ret && ret != want)
		store_failed(f, ret);
	if (!ret && want)
		fz_fail(f, "maple store [%lu, %lu] returned 0, the model says %d", first, last, want);
	if (!ret)
		model_store(first, last, k);
	compare(f);
}

void op_maple_erase(struct fz *f, const uint8_t *a)
{
	unsigned long index = ((unsigned long)a[0] | (unsigned long)a[1] << 8) % MT_N;
	unsigned long lo = index, hi = index;
	MA_STATE(mas, &mp.mt, index, index);
	void *old;

	while (lo && mp.id[lo - 1] == mp.id[index])
		lo--;
	while (hi + 1 < MT_N && mp.id[hi + 1] == mp.id[index])
		hi++;
	mtree_lock(&mp.mt);
	old = mas_erase(&mas);
	mtree_unlock(&mp.mt);
	if (mas_is_err(&mas)) {
		store_failed(f, mas.error);
	} else {
		if (old != token(mp.tok[index]))
			fz_fail(f, "maple erase %lu returned %p, the model has %p", index, old,
				token(mp.tok[index]));
		if (old && (mas.index != lo || mas.last != hi))
			fz_fail(f, "maple erase %lu erased [%lu, %lu], the model's range is [%lu, %lu]",
				index, mas.index, mas.last, lo, hi);
		if (mp.id[index])
			model_store(lo, hi, 0);
	}
	compare(f);
}

static bool free_at(unsigned long i)
{
	return i >= MT_N || !mp.id[i];
}

static bool run_free(unsigned long s, unsigned long size)
{
	for (unsigned long i = s; i < s + size && i < MT_N; i++)
		if (!free_at(i))
			return false;
	return true;
}

/* The model's empty_area answer: the lowest (highest) free start in *@out. */
static bool model_empty_area(unsigned long min, unsigned long max, unsigned long size, bool rev,
			     unsigned long *out)
{
	unsigned long hi_start = max - size + 1;

	if (rev) {
		if (hi_start >= MT_N) {	/* everything past MT_N is free */
			*out = hi_start;
			return true;
		}
		for (unsigned long s = hi_start + 1; s-- > min;)
			if (run_free(s, size)) {
				*out = s;
				return true;
			}
		return false;
	}
	for (unsigned long s = min; s <= hi_start && s <= MT_N; s++)
		if (run_free(s, size)) {
			*out = s;
			return true;
		}
	return false;
}

void op_maple_empty_area(struct fz *f, const uint8_t *a)
{
	unsigned long min = (a[0] * 2UL) % MT_N, size = 1 + a[2] % 32, max, start = 0;
	bool rev = a[3] & 1, store = a[3] & 2, api = a[3] & 4;
	unsigned int k = 1 + a[3] % (NR_TOKENS - 1);
	MA_STATE(mas, &mp.mt, 0, 0);
	unsigned long want = 0;
	bool found;
	int ret;

	max = a[1] == 0xff && !api ? ULONG_MAX : min(min + a[1] * 2UL, (unsigned long)MT_N - 1);
	if (size - 1 > max - min) {
		mtree_lock(&mp.mt);
		ret = rev ? mas_empty_area_rev(&mas, min, max, size)
			  : mas_empty_area(&mas, min, max, size);
		mtree_unlock(&mp.mt);
		if (ret != -EINVAL)
			fz_fail(f, "maple empty_area of %lu in [%lu, %lu] returned %d", size, min, max,
				ret);
		return;
	}
	found = model_empty_area(min, max, size, rev, &want);
	if (api) {
		ret = rev ? mtree_alloc_rrange(&mp.mt, &start, token(k), size, min, max, GFP_KERNEL)
			  : mtree_alloc_range(&mp.mt, &start, token(k), size, min, max, GFP_KERNEL);
		if (ret == -ENOMEM && found) {
			store_failed(f, ret);
		} else if (ret != (found ? 0 : -EBUSY) || (!ret && start != want)) {
			fz_fail(f, "mtree_alloc_%srange(%lu in [%lu, %lu]) = %d at %lu, the model %d at %lu",
				rev ? "r" : "", size, min, max, ret, start, found, want);
		} else if (!ret) {
			model_store(start, start + size - 1, k);
		}
		compare(f);
		return;
	}
	mtree_lock(&mp.mt);
	ret = rev ? mas_empty_area_rev(&mas, min, max, size) : mas_empty_area(&mas, min, max, size);
	if (ret != (found ? 0 : -EBUSY) ||
	    (!ret && (mas.index != want || mas.last != mas.index + size - 1))) {
		mtree_unlock(&mp.mt);
		fz_fail(f, "mas_empty_area%s(%lu in [%lu, %lu]) = %d at [%lu, %lu], the model %d at %lu",
			rev ? "_rev" : "", size, min, max, ret, mas.index, mas.last, found, want);
	}
	if (!ret && store && mas.last < MT_N) {
		ret = mas_store_gfp(&mas, token(k), GFP_KERNEL);
		mtree_unlock(&mp.mt);
		if (ret)
			store_failed(f, ret);
		else
			model_store(want, want + size - 1, k);
		compare(f);
		return;
	}
	mtree_unlock(&mp.mt);
}
