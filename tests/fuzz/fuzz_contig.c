// SPDX-License-Identifier: MIT
/*
 * fuzz_contig.c - the fuzzer's contiguous-range operations: split_page(),
 * free_contig_range()/__free_contig_range(), free_pages_bulk(),
 * alloc_contig_range() and alloc_contig_pages(), and their bad input.
 *
 * The model: runs of order-0 pages with _refcount 1 that the fuzzer owns
 * (f->runs; their pfns are FZ_PFN_OWNED). Because the model knows every
 * free pfn, it predicts alloc_contig_range() exactly (0 iff every page of
 * the range is free, -EBUSY otherwise, -EINVAL for a range outside one
 * zone) and alloc_contig_pages() to the pfn: the lowest aligned candidate
 * whose pages are all free, highest zone first.
 */
#include <stdio.h>
#include <string.h>
#include "fuzz_internal.h"

#define DMA32_END_PFN	(DMA32_BYTES / PAGE_SIZE)
#define FZ_ALIGN(x, a)	ALIGN_DOWN((x) + (a) - 1, (a))

static bool range_free(struct fz *f, unsigned long pfn, unsigned long nr)
{
	for (unsigned long i = pfn; i < pfn + nr; i++)
		if (f->model[i] != FZ_PFN_FREE)
			return false;
	return true;
}

static void assert_pages_ref1(struct fz *f, unsigned long pfn, unsigned long nr)
{
	for (unsigned long i = pfn; i < pfn + nr; i++)
		if (page_ref_count(pfn_to_page(i)) != 1)
			fz_fail(f, "pfn %#lx of a run has _refcount %d", i, page_ref_count(pfn_to_page(i)));
}

static void assert_zeroed(struct fz *f, unsigned long pfn, unsigned long nr)
{
	for (unsigned long i = pfn; i < pfn + nr; i++) {
		const uint64_t *p = page_address(pfn_to_page(i));

		if (p[0] || p[PAGE_SIZE / sizeof(*p) - 1])
			fz_fail(f, "pfn %#lx: __GFP_ZERO page not zeroed", i);
	}
}

/* Free [pfn, pfn + nr) of the fuzzer's order-0 pages, through the model too. */
static void free_run_part(struct fz *f, unsigned long pfn, unsigned long nr, bool quiet)
{
	long ret = quiet ? __free_contig_range(pfn, nr) : free_contig_range(pfn, nr);

	if (ret)
		fz_fail(f, "free_contig_range(%#lx, %lu) of owned pages returned %ld", pfn, nr, ret);
	model_free(f, pfn, nr);
}

static void add_run(struct fz *f, unsigned long pfn, unsigned long nr)
{
	if (!nr)
		return;
	if (f->nr_runs == RUN_MAX) {
		free_run_part(f, pfn, nr, false);
		return;
	}
	f->runs[f->nr_runs++] = (struct run){ pfn, nr };
}

static void remove_run(struct fz *f, struct run *r)
{
	*r = f->runs[--f->nr_runs];
}

/* Take [off, off + len) out of @r, keeping what is left on either side. */
static void cut_run(struct fz *f, struct run *r, unsigned long off, unsigned long len)
{
	struct run old = *r;

	remove_run(f, r);
	add_run(f, old.pfn, off);
	add_run(f, old.pfn + off + len, old.nr - off - len);
}

void op_split_page(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	unsigned long pfn;
	struct bad_call bc;
	unsigned int order;

	if (!l || l->refs != 1)
		return;
	if (l->compound) {
		bad_begin(f, &bc);
		bad_end(f, &bc, split_page(l->page, l->order), -EINVAL);
		return;
	}
	pfn = page_to_pfn(l->page);
	order = l->order;
	if (*(uint64_t *)page_address(l->page) != l->stamp)
		fz_fail(f, "pfn %#lx: contents changed while allocated", pfn);
	if (split_page(l->page, order))
		fz_fail(f, "split_page() of a live order-%u block failed", order);
	assert_pages_ref1(f, pfn, 1UL << order);
	remove_live(f, l);
	add_run(f, pfn, 1UL << order);
}

void op_free_contig_range(struct fz *f, const uint8_t *a)
{
	struct run *r;
	unsigned long off, len;

	if (!f->nr_runs)
		return;
	r = &f->runs[a[0] % f->nr_runs];
	off = a[1] % r->nr;
	len = a[2] == 0xff ? r->nr - off : 1 + (a[2] & 0x7f) % (r->nr - off);
	assert_pages_ref1(f, r->pfn + off, len);
	free_run_part(f, r->pfn + off, len, a[2] & 0x80);
	cut_run(f, r, off, len);
}

void op_free_pages_bulk(struct fz *f, const uint8_t *a)
{
	struct page *pages[130];
	unsigned long n, start, warns = pl_warn_count();
	bool dup = a[2] & 1;
	struct run *r;
	long ret;

	if (!f->nr_runs)
		return;
	r = &f->runs[a[0] % f->nr_runs];
	n = 1 + a[1] % min(r->nr, 128UL);
	start = r->nr - n;
	/* In order, reversed, or evens then odds: the bulk free finds the pfn runs. */
	for (unsigned long i = 0; i < n; i++) {
		unsigned long half = (n + 1) / 2, k = i;

		if (a[2] & 2)
			k = n - 1 - i;
		else if (a[2] & 4)
			k = i < half ? 2 * i : 2 * (i - half) + 1;
		pages[i] = pfn_to_page(r->pfn + start + k);
	}
	/* A page listed twice: its second entry is a double free, warned and skipped. */
	if (dup)
		pages[n] = pages[a[1] % n];
	ret = free_pages_bulk(n + dup, pages);
	if (ret != (long)dup)
		fz_fail(f, "free_pages_bulk() of %lu owned pages%s returned %ld", n,
			dup ? " and a repeat" : "", ret);
	if (pl_warn_count() != warns + dup)
		fz_fail(f, "free_pages_bulk() gave %lu warnings, expected %d", pl_warn_count() - warns,
			dup);
	model_free(f, r->pfn + start, n);
	cut_run(f, r, start, n);
}

static gfp_t contig_gfp(uint8_t c)
{
	return gfp_class(c & ~0x28) & ~(gfp_t)__GFP_COMP;
}

void op_alloc_contig_range(struct fz *f, const uint8_t *a)
{
	unsigned long start = ((unsigned long)a[0] | (unsigned long)a[1] << 8) % NR_PFNS, nr, end;
	gfp_t gfp = contig_gfp(a[3]);
	bool comp = a[3] & 0x08, dma32 = gfp & __GFP_DMA32;
	unsigned long warns = pl_warn_count();
	struct bad_call bc;
	int ret, want;

	if (comp) {
		unsigned int order = a[2] % NR_PAGE_ORDERS;

		nr = 1UL << order;
		start = ALIGN_DOWN(start, nr);
		gfp |= __GFP_COMP;
	} else {
		nr = 1 + a[2];
	}
	end = start + nr;
	if (end > NR_PFNS || (start < DMA32_END_PFN && end > DMA32_END_PFN) ||
	    (dma32 && start >= DMA32_END_PFN)) {
		bad_begin(f, &bc);
		bad_end(f, &bc, alloc_contig_range(start, end, gfp), -EINVAL);
		return;
	}
	want = range_free(f, start, nr) ? 0 : -EBUSY;
	ret = alloc_contig_range(start, end, gfp);
	if (ret != want)
		fz_fail(f, "alloc_contig_range(%#lx, %#lx) returned %d, the model says %d", start, end,
			ret, want);
	if (pl_warn_count() != warns)
		fz_fail(f, "alloc_contig_range() warned");
	if (ret)
		return;
	if (gfp & __GFP_ZERO)
		assert_zeroed(f, start, nr);
	if (comp) {
		FZ_ASSERT(f, page_ref_count(pfn_to_page(start)) == 1);
		add_live(f, pfn_to_page(start), (unsigned int)__builtin_ctzl(nr), nr > 1);
		return;
	}
	model_alloc_range(f, start, nr);
	assert_pages_ref1(f, start, nr);
	add_run(f, start, nr);
}

/* The model's answer: the lowest aligned free candidate, highest zone first. */
static long contig_pages_model(struct fz *f, unsigned long nr, bool dma32, bool comp)
{
	unsigned long align = 1;

	while (align < nr)
		align <<= 1;
	/* A compound page is naturally aligned; otherwise at most a pageblock. */
	if (!comp)
		align = min(align, pageblock_nr_pages);
	/* The fuzz machine's ZONE_DMA is empty: Normal, then DMA32. */
	for (int zi = dma32 ? ZONE_DMA32 : ZONE_NORMAL; zi >= ZONE_DMA32; zi--) {
		unsigned long zstart = zi == ZONE_DMA32 ? 0 : DMA32_END_PFN;
		unsigned long zend = zi == ZONE_DMA32 ? DMA32_END_PFN : NR_PFNS;

		for (unsigned long pfn = FZ_ALIGN(zstart, align); pfn + nr <= zend; pfn += align)
			if (range_free(f, pfn, nr))
				return (long)pfn;
	}
	return -1;
}

void op_alloc_contig_pages(struct fz *f, const uint8_t *a)
{
	gfp_t gfp = contig_gfp(a[1]);
	bool comp = a[1] & 0x08;
	unsigned long nr = (a[1] & 0x80) ? 1 + a[0] * 4UL : 1UL + a[0];
	unsigned long warns = pl_warn_count(), pfn;
	struct page *page;
	long want;

	if (comp) {
		nr = 1UL << (a[0] % NR_PAGE_ORDERS);
		gfp |= __GFP_COMP;
	}
	want = contig_pages_model(f, nr, gfp & __GFP_DMA32, comp);
	page = alloc_contig_pages(nr, gfp);
	if (!page) {
		if (want >= 0)
			fz_fail(f, "alloc_contig_pages(%lu%s) failed, the model has pfn %#lx free", nr,
				comp ? ", __GFP_COMP" : "", want);
		if (pl_warn_count() != warns + ((gfp & __GFP_NOWARN) ? 0 : 1))
			fz_fail(f, "alloc_contig_pages() failure gave %lu warnings",
				pl_warn_count() - warns);
		return;
	}
	pfn = page_to_pfn(page);
	if ((long)pfn != want)
		fz_fail(f, "alloc_contig_pages(%lu%s) returned pfn %#lx, the model %#lx", nr,
			comp ? ", __GFP_COMP" : "", pfn, want);
	if (pl_warn_count() != warns)
		fz_fail(f, "alloc_contig_pages() succeeded with %lu warnings", pl_warn_count() - warns);
	if (gfp & __GFP_ZERO)
		assert_zeroed(f, pfn, nr);
	if (comp) {
		add_live(f, page, (unsigned int)__builtin_ctzl(nr), nr > 1);
		return;
	}
	model_alloc_range(f, pfn, nr);
	assert_pages_ref1(f, pfn, nr);
	add_run(f, pfn, nr);
}

void op_bad_contig(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[1]);
	struct page *pages[2];
	struct bad_call bc;
	long pfn, ret;

	switch (a[0] % 8) {
	case 0: /* free_contig_range() over free pages */
		pfn = find_free_pfn(f, (unsigned long)a[1] << 4 | (a[2] & 15));
		if (pfn < 0)
			return;
		bad_begin(f, &bc);
		ret = free_contig_range((unsigned long)pfn, 1 + a[2] % 16);
		break;
	case 1: /* free_contig_range() over a block that is not split */
		if (!l || (!l->order && !l->compound))
			return;
		bad_begin(f, &bc);
		ret = free_contig_range(page_to_pfn(l->page), 1UL << l->order);
		break;
	case 2: /* a range past the machine's end */
		bad_begin(f, &bc);
		ret = __free_contig_range(NR_PFNS - 1 - a[2] % 4, 8 + a[2]);
		break;
	case 3: /* split_page() at the wrong order */
		if (!l || l->compound)
			return;
		bad_begin(f, &bc);
		ret = split_page(l->page, l->order + 1 + a[2] % 3);
		break;
	case 4: /* split_page() of a free page */
		pfn = find_free_pfn(f, (unsigned long)a[1] << 4);
		if (pfn < 0)
			return;
		bad_begin(f, &bc);
		ret = split_page(pfn_to_page((unsigned long)pfn), 0);
		break;
	case 5: /* alloc_contig_range() across the zone boundary, or past the end */
		bad_begin(f, &bc);
		ret = (a[2] & 1) ? alloc_contig_range(DMA32_END_PFN - 1 - a[1] % 8,
						      DMA32_END_PFN + 1 + a[2] % 8, GFP_KERNEL)
				 : alloc_contig_range(NR_PFNS - a[1] % 8, NR_PFNS + 1 + a[2], GFP_KERNEL);
		break;
	case 6: /* __GFP_COMP over a range that is not a naturally aligned power of two */
		bad_begin(f, &bc);
		pfn = 1 + 2 * (a[1] % 64);	/* odd: 4 pages misaligned, or 3 pages */
		ret = alloc_contig_range((unsigned long)pfn, (unsigned long)pfn + 3 + (a[2] & 1),
					 GFP_KERNEL | __GFP_COMP);
		break;
	default: /* free_pages_bulk() with a free page in the array */
		pfn = find_free_pfn(f, (unsigned long)a[1] << 4);
		if (pfn < 0)
			return;
		pages[0] = f->nr_runs ? pfn_to_page(f->runs[a[2] % f->nr_runs].pfn)
				      : pfn_to_page((unsigned long)pfn);
		pages[1] = pfn_to_page((unsigned long)pfn);
		bad_begin(f, &bc);
		ret = free_pages_bulk(2, pages);
		break;
	}
	bad_end(f, &bc, ret, -EINVAL);
}

void fz_contig_free_all(struct fz *f)
{
	while (f->nr_runs) {
		struct run *r = &f->runs[f->nr_runs - 1];

		assert_pages_ref1(f, r->pfn, r->nr);
		free_run_part(f, r->pfn, r->nr, false);
		f->nr_runs--;
	}
}
