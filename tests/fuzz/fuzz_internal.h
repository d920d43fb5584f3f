/* SPDX-License-Identifier: MIT */
/*
 * fuzz_internal.h - what the fuzzer's modules share: the run's state and
 * its reference models, the finding report, and the bad-input bracket.
 *
 *   fuzz_ops.c      decoding, the page allocator ops, the pfn model and
 *                   the checks after every operation
 *   fuzz_contig.c   split_page, free_contig_range, alloc_contig_range,
 *                   alloc_contig_pages, free_pages_bulk
 *   fuzz_vmalloc.c  vmalloc/vfree, vm_map_ram/vm_unmap_ram, purge, and
 *                   the interval model of the vmalloc space
 *   fuzz_percpu.c   __alloc_percpu/free_percpu
 *   fuzz_maple.c    a maple tree of its own against an interval map
 *
 * The pfn model gives every page frame one state: FZ_PFN_FREE (on a free
 * list), FZ_PFN_OWNED (the fuzzer holds it: a live block, a run of split
 * pages, pages mapped with vm_map_ram) or FZ_PFN_SYS (held by the vmalloc
 * layer for the fuzzer: vmalloc'ed pages, page tables, percpu pages). The
 * fuzzer cannot predict which pages the vmalloc layer takes, so after a
 * vmalloc-layer operation FREE and SYS pages are re-read from the free
 * lists, and the SYS count must equal what the layer says it holds; after
 * any other operation the model must equal the free lists exactly.
 */
#ifndef PAGELAB_FUZZ_INTERNAL_H
#define PAGELAB_FUZZ_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include "pagelab/pagelab.h"
#include "fuzz_ops.h"

#define MEM_BYTES	(16UL << 20)
#define DMA32_BYTES	(8UL << 20)
#define NR_PFNS		(MEM_BYTES / PAGE_SIZE)
#define LIVE_MAX	256
#define GRAVE_MAX	16
#define RUN_MAX		64
#define REPORT_SIZE	(64 * 1024)
#define NR_REPORTS	4	/* buddyinfo, pagetypeinfo, zoneinfo, vmallocinfo */

enum { FZ_PFN_OWNED = 0, FZ_PFN_FREE = 1, FZ_PFN_SYS = 2 };

/*
 * Free pages beyond which a GFP_KERNEL allocation with no fault injected
 * must succeed: a quarter of the machine for page tables and the PCPs, on
 * top of what the watermarks keep back (fz_watermark_pages()).
 */
#define FZ_SPARE_PAGES	(NR_PFNS / 4)

/* A block from the page allocator the fuzzer holds. */
struct live {
	struct page *page;
	unsigned int order;
	bool compound;
	int refs;
	uint64_t stamp;
};

struct grave {
	struct page *page;
	unsigned int order;
};

/* [pfn, pfn + nr): order-0 pages with _refcount 1 (split or alloc_contig'ed). */
struct run {
	unsigned long pfn, nr;
};

struct fz {
	struct pl_machine *m;
	unsigned char model[NR_PFNS];	/* FZ_PFN_* */
	unsigned char lists[NR_PFNS];	/* 1 = on a free list */
	struct live live[LIVE_MAX];
	unsigned int nr_live;
	struct grave grave[GRAVE_MAX];
	unsigned int nr_grave, grave_next;
	struct run runs[RUN_MAX];
	unsigned int nr_runs;
	uint64_t stamps;
	unsigned int op_index, opcode;
	bool sys_op;		/* this op may move pages between FREE and SYS */
	bool faults_on;		/* a fault injection site was armed */
	char report[2][NR_REPORTS * REPORT_SIZE];
	long report_len[2];
	struct pl_vmalloc_stats vst[2];
	struct pl_percpu_stats pst[2];
};

void fz_fail(struct fz *f, const char *fmt, ...) __attribute__((noreturn, format(printf, 2, 3)));

#define FZ_ASSERT(f, cond) \
	do { if (!(cond)) fz_fail(f, "%s:%d: %s", __FILE__, __LINE__, #cond); } while (0)

/* The pfn model (fuzz_ops.c). */
void model_alloc(struct fz *f, struct page *page, unsigned int order);
void model_alloc_range(struct fz *f, unsigned long pfn, unsigned long nr);
void model_free(struct fz *f, unsigned long pfn, unsigned long nr);
void add_live(struct fz *f, struct page *page, unsigned int order, bool compound);
void remove_live(struct fz *f, struct live *l);
struct live *pick_live(struct fz *f, uint8_t idx);
gfp_t gfp_class(uint8_t c);
unsigned long fz_nr_model_free(struct fz *f);
/** fz_watermark_pages() - the pages the zones' watermarks and reserves keep back now. */
unsigned long fz_watermark_pages(struct fz *f);
/* A pfn the model has free, at or after @from, wrapping; -1 if none. */
long find_free_pfn(struct fz *f, unsigned long from);
/* Compare the free lists with the model (re-reading FREE/SYS if f->sys_op). */
void compare_with_model(struct fz *f);

/* Bad input: refused with @want, one warning, every report and count unchanged. */
struct bad_call {
	unsigned long warns;
};
void bad_begin(struct fz *f, struct bad_call *bc);
void bad_end(struct fz *f, struct bad_call *bc, long ret, long want);

/* Contiguous ranges (fuzz_contig.c). */
void op_split_page(struct fz *f, const uint8_t *a);
void op_free_contig_range(struct fz *f, const uint8_t *a);
void op_alloc_contig_range(struct fz *f, const uint8_t *a);
void op_alloc_contig_pages(struct fz *f, const uint8_t *a);
void op_free_pages_bulk(struct fz *f, const uint8_t *a);
void op_bad_contig(struct fz *f, const uint8_t *a);
void fz_contig_free_all(struct fz *f);

/* API misuse (fuzz_misuse.c). */
void op_misuse(struct fz *f, const uint8_t *a);
void op_raw_call(struct fz *f, const uint8_t *a);
void fz_misuse_end(void);
/* Operations run since the process started (every one followed by the checker). */
extern unsigned long fz_ops_total;

/* vmalloc (fuzz_vmalloc.c). */
void fz_vm_begin(struct fz *f);
void op_vmalloc(struct fz *f, const uint8_t *a);
void op_vfree(struct fz *f, const uint8_t *a);
void op_vm_map_ram(struct fz *f, const uint8_t *a);
void op_vm_unmap_ram(struct fz *f, const uint8_t *a);
void op_vpurge(struct fz *f, const uint8_t *a);
void op_vcheck(struct fz *f, const uint8_t *a);
void op_bad_vfree(struct fz *f, const uint8_t *a);
void op_bad_vm_unmap_ram(struct fz *f, const uint8_t *a);
void op_bad_vmalloc(struct fz *f, const uint8_t *a);
void fz_vm_after_op(struct fz *f);
void fz_vm_free_all(struct fz *f);
/*
 * If nothing is live in the vmalloc layer: purge, reclaim percpu chunks,
 * trim page tables, check the space is one free area; Return: whether.
 */
bool fz_vm_settle_if_empty(struct fz *f);
/* The live ranges of the vmalloc space the fuzzer knows of, to check overlaps. */
struct fz_range {
	unsigned long start, end;
	const char *what;
};
void fz_vm_check_overlaps(struct fz *f, const struct fz_range *extra, unsigned int nr_extra);

/* percpu (fuzz_percpu.c). */
void fz_pcpu_begin(struct fz *f);
void op_alloc_percpu(struct fz *f, const uint8_t *a);
void op_free_percpu(struct fz *f, const uint8_t *a);
void op_bad_free_percpu(struct fz *f, const uint8_t *a);
unsigned int fz_pcpu_ranges(struct fz_range *out, unsigned int max);
void *fz_pcpu_any(uint8_t idx, size_t *size);
void fz_pcpu_free_all(struct fz *f);
unsigned int fz_pcpu_nr_live(void);

/* maple (fuzz_maple.c). */
void fz_maple_begin(struct fz *f);
void op_maple_store(struct fz *f, const uint8_t *a);
void op_maple_erase(struct fz *f, const uint8_t *a);
void op_maple_empty_area(struct fz *f, const uint8_t *a);
void fz_maple_end(struct fz *f);

#endif /* PAGELAB_FUZZ_INTERNAL_H */
