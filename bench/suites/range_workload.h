/* SPDX-License-Identifier: MIT */
/*
 * range_workload.h - one vmalloc-like range workload, driven the same way
 * over pagelab's maple tree (bench/suites/range_workload.c) and over the peers built
 * from Debian's linux-source-6.12 at benchmark time (bench/peers/, see
 * scripts/build-peers.sh): the kernel's own maple tree and drm_mm.
 *
 * Units are pages. The window is 32 TiB (2^33 pages) from VMALLOC_START.
 * Each area is 1..16 pages plus a guard page, aligned to 1 page or 2 MiB
 * (512 pages), placed lowest-fit in the window. The live set is filled to
 * @live areas, then @pairs steady pairs free a random live area and allocate
 * a new one. The random sequence (sizes, which area is freed) depends only on
 * the seed, so every backend sees the same requests. A backend keeps the
 * space outside the window out of its searches its own way (see
 * range_workload.c and the peers). Reported: ns per
 * free+alloc pair over the steady phase, and ns per allocation in the fill.
 *
 * A backend defines, before including this file:
 *   struct rw_area { unsigned long start, size; <backend's per-area data> };
 *   void *rw_init(unsigned long start, unsigned long end)  (end inclusive)
 *   int rw_alloc(void *be, struct rw_area *a, unsigned long size, unsigned long align)
 *          sets a->start, returns 0
 *   void rw_free(void *be, struct rw_area *a)
 *   void rw_fini(void *be)
 * This header is also compiled into the peers, so it uses only libc.
 */
#ifndef PAGELAB_RANGE_WORKLOAD_H
#define PAGELAB_RANGE_WORKLOAD_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define RW_VMALLOC_START_PFN	(0xffffc90000000000UL >> 12)
#define RW_WINDOW_PAGES		(1UL << 33)	/* 32 TiB */

struct rw_result {
	double ns_per_pair;
	double ns_per_fill_alloc;
	unsigned long span_pages;	/* highest end - window start, after the run */
};

static inline uint64_t rw_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static inline double rw_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Size of the next area: 1..16 pages plus the guard page. */
static inline unsigned long rw_next_size(uint64_t *s)
{
	return 1 + rw_rand(s) % 16 + 1;
}

/* Run the workload. Return: 0, or -1 if an allocation failed. */
static int rw_run(unsigned long live, unsigned long align, unsigned long pairs, uint64_t seed,
		  struct rw_result *res)
{
	unsigned long start = RW_VMALLOC_START_PFN, end = start + RW_WINDOW_PAGES - 1;
	struct rw_area *areas = calloc(live, sizeof(*areas));
	void *be = rw_init(start, end);
	unsigned long hi = 0;
	uint64_t s = seed ? seed : 1;
	double t0, t1, t2;

	if (!areas || !be)
		goto fail;
	t0 = rw_now_ns();
	for (unsigned long i = 0; i < live; i++) {
		areas[i].size = rw_next_size(&s);
		if (rw_alloc(be, &areas[i], areas[i].size, align))
			goto fail;
	}
	t1 = rw_now_ns();
	for (unsigned long p = 0; p < pairs; p++) {
		struct rw_area *a = &areas[rw_rand(&s) % live];

		rw_free(be, a);
		a->size = rw_next_size(&s);
		if (rw_alloc(be, a, a->size, align))
			goto fail;
	}
	t2 = rw_now_ns();
	for (unsigned long i = 0; i < live; i++) {
		unsigned long e = areas[i].start + areas[i].size - start;

		if (e > hi)
			hi = e;
		rw_free(be, &areas[i]);
	}
	rw_fini(be);
	res->ns_per_fill_alloc = (t1 - t0) / (double)live;
	res->ns_per_pair = pairs ? (t2 - t1) / (double)pairs : 0;
	res->span_pages = hi;
	free(areas);
	return 0;
fail:	/* the backend's teardown takes whatever areas it still holds (no leak) */
	if (be)
		rw_fini(be);
	free(areas);
	return -1;
}

/* The peers' main(): `NAME live align pairs seed` -> one line of results. */
#define RW_PEER_MAIN(name)							\
int main(int argc, char **argv)						\
{									\
	struct rw_result r;						\
									\
	if (argc != 5) {						\
		fprintf(stderr, "usage: %s live align_pages pairs seed\n", argv[0]); \
		return 2;						\
	}								\
	if (rw_run(strtoul(argv[1], NULL, 0), strtoul(argv[2], NULL, 0),	\
		   strtoul(argv[3], NULL, 0), strtoull(argv[4], NULL, 0), &r)) { \
		fprintf(stderr, "%s: allocation failed\n", name);	\
		return 1;						\
	}								\
	printf("backend=%s ns_per_pair=%.1f ns_per_fill_alloc=%.1f span_pages=%lu\n", \
	       name, r.ns_per_pair, r.ns_per_fill_alloc, r.span_pages);	\
	return 0;							\
}

#endif /* PAGELAB_RANGE_WORKLOAD_H */
