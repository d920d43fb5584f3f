/* SPDX-License-Identifier: MIT */
/*
 * fuzz_ops.h - the operation-sequence language of the pagelab fuzzer
 * (fuzz_ops.c), shared by the libFuzzer target and the replay/assembler
 * tool (replay.c).
 *
 * An input is one config byte, then operations. Each operation is an
 * opcode byte followed by its fixed number of argument bytes (missing
 * bytes at the end of the input read as 0):
 *
 *   opcode byte:  bits 0-5  the operation (enum fz_opcode; unassigned
 *                           numbers are no-ops taking no arguments)
 *                 bits 6-7  the vCPU that runs it (the machine has 4)
 *   config byte:  bits 0-2  design: pl_design_presets[n % count] (v6.18,
 *                           mt-counts, pcp-owner, contig-batch, v6.19-rc1,
 *                           v6.19-rc1+contig, all, ...), with bit 4 as
 *                           n's bit 3 (the presets from the 9th on:
 *                           mt-counts+blocks, maple+wide-align,
 *                           pcp-owner+bulk, ...) and bit 5 as n's bit 4
 *                           (the 17th on: block-economy+batch,
 *                           block-economy+ramp)
 *                 bit  3    pcp_disabled
 *
 * Opcode numbers are fixed forever, so a committed corpus keeps its
 * meaning as operations are added: new ones take unassigned numbers.
 */
#ifndef PAGELAB_FUZZ_OPS_H
#define PAGELAB_FUZZ_OPS_H

#include <stddef.h>
#include <stdint.h>

#define FZ_NR_OPCODES 64
#define FZ_NR_CPUS 4

/* The preset number of a config byte: bits 0-2, then bits 4 and 5 above them. */
static inline unsigned int fz_preset_index(uint8_t config)
{
	return (config & 7u) | ((config >> 1) & 24u);
}

enum fz_opcode {
	FZ_NOP = 0,
	/* page allocator */
	FZ_ALLOC = 1,		/* order, gfp class */
	FZ_FREE = 2,		/* live index */
	FZ_GET_PAGE = 3,	/* live index, page within the block */
	FZ_PUT_PAGE = 4,	/* live index, page within the block */
	FZ_CHECK = 5,		/* checker; with nothing live: fully coalesced */
	FZ_SHOW = 6,		/* report: buddyinfo, pagetypeinfo, zoneinfo */
	FZ_DRAIN = 7,		/* local or all */
	FZ_VMSTAT_TICK = 8,
	FZ_ALLOC_BULK = 9,	/* count, gfp class */
	FZ_FAIL_SET = 10,	/* probability, interval, times, min-order|flags */
	FZ_FREE_BY_ADDR = 11,	/* live index: free_pages(page_address()) */
	/* bad input: each must be refused with one warning and no change */
	FZ_BAD_DOUBLE_FREE = 16,	/* index into recently freed blocks */
	FZ_BAD_FREE_FREE_PFN = 17,	/* pfn lo, pfn hi, order */
	FZ_BAD_WRONG_ORDER = 18,	/* live index, order */
	FZ_BAD_INTERIOR = 19,		/* live index, page within the block */
	FZ_BAD_OUT_OF_RANGE = 20,	/* kind, delta */
	FZ_BAD_ALLOC_ORDER = 21,	/* delta above MAX_PAGE_ORDER */
	FZ_BAD_FREE_FROZEN_HELD = 22,	/* live index */
	FZ_BAD_GET_FREE = 23,		/* pfn lo, pfn hi */
	FZ_FAULT_SITE_SET = 12,		/* site, probability, interval, times */
	/* contiguous ranges (fuzz_contig.c) */
	FZ_SPLIT_PAGE = 24,		/* live index */
	FZ_FREE_CONTIG_RANGE = 25,	/* run index, offset, length */
	FZ_ALLOC_CONTIG_RANGE = 26,	/* pfn lo, pfn hi, pages, gfp class */
	FZ_ALLOC_CONTIG_PAGES = 27,	/* pages, gfp class */
	FZ_FREE_PAGES_BULK = 28,	/* run index, length, stride */
	FZ_BAD_CONTIG = 29,		/* kind, index, argument */
	/* vmalloc (fuzz_vmalloc.c) */
	FZ_VMALLOC = 32,		/* size lo, size class, alignment, kind */
	FZ_VFREE = 33,			/* live area index, atomic */
	FZ_VM_MAP_RAM = 34,		/* pages */
	FZ_VM_UNMAP_RAM = 35,		/* live mapping index */
	FZ_VPURGE = 36,			/* kind */
	FZ_VCHECK = 37,			/* live area index */
	FZ_BAD_VFREE = 38,		/* kind, index, offset */
	FZ_BAD_VM_UNMAP_RAM = 39,	/* kind, index, delta */
	/* percpu (fuzz_percpu.c) */
	FZ_ALLOC_PERCPU = 40,		/* size lo, size class, alignment */
	FZ_FREE_PERCPU = 41,		/* live index */
	FZ_BAD_VMALLOC = 42,		/* kind, argument */
	FZ_BAD_FREE_PERCPU = 43,	/* kind, index, offset */
	/* maple tree (fuzz_maple.c) */
	FZ_MAPLE_STORE = 48,		/* first lo, flags, length, entry */
	FZ_MAPLE_ERASE = 49,		/* index lo, index hi */
	FZ_MAPLE_EMPTY_AREA = 50,	/* min, span, size, flags */
	/* API misuse (fuzz_misuse.c) */
	FZ_MISUSE = 56,			/* case, 7 argument bytes choosing the invalid values */
	FZ_RAW_CALL = 57,		/* entry, 7 raw argument bytes */
};

/**
 * struct fz_op_desc - one operation of the language.
 * @name:  its name in the text form (replay.c assembles it).
 * @nargs: argument bytes after the opcode.
 */
struct fz_op_desc {
	const char *name;
	unsigned int nargs;
};

/** fz_op_descs - the table, indexed by opcode; NULL names are no-ops. */
extern const struct fz_op_desc fz_op_descs[FZ_NR_OPCODES];

/** fz_run() - run one input; aborts with a report on any finding. */
void fz_run(const uint8_t *data, size_t size);

/** fz_set_trace() - print each operation as it runs (stderr). */
void fz_set_trace(int on);

#endif /* PAGELAB_FUZZ_OPS_H */
