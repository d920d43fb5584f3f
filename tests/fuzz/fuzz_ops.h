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
 *   config byte:  bits 0-2  design: pl_design_presets[n % count]
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
	/*
	 * Reserved for the layers still to land (same shape: a handler and
	 * a model update; bad-input variants in the 16..31 style):
	 *   24 split_page            25 free_contig_range   26 alloc_contig_range
	 *   27 alloc_contig_pages    28 free_pages_bulk
	 *   32 vmalloc  33 vfree  34 vm_map_ram  35 vm_unmap_ram  36 purge
	 *   40 alloc_percpu  41 free_percpu
	 *   48 maple store  49 maple erase  50 maple empty_area
	 */
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
