/* SPDX-License-Identifier: MIT */
/*
 * config.h - what a simulated machine is made of (struct pl_config: memory
 * layout, CPUs, topology, debug level, vm sysctls) and the design switches of
 * the seed series (struct pl_design), fixed when a machine is created.
 * Invariant: a seed design is exactly its patch behind one switch; anything
 * beyond a patch is a separate switch labelled as pagelab's own.
 */
#ifndef PAGELAB_CONFIG_H
#define PAGELAB_CONFIG_H

#include <stdbool.h>

/* ---- designs and the machine ---------------------------------------------- */

/**
 * struct pl_design - run-time switches for the designs of the seed series.
 * Fixed when a machine is created; see pl_design_preset() for the presets.
 * @name:      the preset's name, for reports.
 * @mt_counts: seed 002 (patches 1-3, exactly), per-migratetype free block
 *             counts; pagetypeinfo's free-block section reads them without
 *             zone->lock; "Number of blocks type" still walks every
 *             pageblock under zone->lock, as the patch leaves it.
 * @mt_counts_blocks: pagelab's own extension beyond seed 002 (not in any
 *             patch): per-migratetype pageblock counts, so that the
 *             "Number of blocks type" section is O(1) and lock-free too.
 * @pcp_owner: seed 003, PCPs take whole pageblocks, own them, and frees
 *             route back to the owner where buddies merge under pcp->lock;
 *             when no whole block fits pcp->high or none is free, a refill
 *             takes unowned chunks larger than the order asked and splits
 *             them under pcp->lock (the RFC's degraded mode).
 * @pcp_owner_bulk_fallback: pagelab's own option beyond seed 003 (not the
 *             RFC): pcp_owner's degraded refill is the baseline's
 *             rmqueue_bulk() instead of the RFC's chunks.
 * @free_contig_batch: seed 001, __free_contig_range() frees a range of
 *             order-0 pages as the largest aligned power-of-two chunks.
 * @vmalloc_high_order: a06157804399 (v6.19-rc1), vm_area_alloc_pages()
 *             asks the buddy for the largest orders first and split_page()s
 *             them.
 * @vfree_batch: seed 000, vfree() frees an area's pages with
 *             free_pages_bulk() (contiguous pfn runs) instead of one by one.
 * @vmap_index: how vmalloc indexes its free/busy/lazy areas (enum vmap_index).
 * @vmap_pcpu_bump: seed 004 (patches 10-12), short-lived page-aligned
 *             vmalloc areas come from per-CPU bump chunks reserved from the
 *             space, found again in O(1) through the chunk's back-pointers.
 * @vmap_bump_wide_align: pagelab's own extension beyond seed 004 (not in
 *             the series): the bump chunks also serve alignments up to
 *             64 KiB (vmalloc'd stacks), not only page-aligned areas.
 * @pcp_premerge: pagelab's own, from Zi Yan's review of seed 003: a PCP
 *             drain merges blocks with buddies on the same PCP under
 *             pcp->lock before it takes zone->lock (per-page CPU field).
 * @pcp_block_economy: pagelab's own, from the seed 003 thread: the zone
 *             buddy deals in whole pageblocks only; all splitting and
 *             merging below a block happens under pcp->lock; a CPU with no
 *             block steals one from another CPU. Implies pcp_owner.
 * @economy_batch: pagelab's own, on the block economy: 6.18's batch sizes
 *             in whole blocks. A refill takes the blocks that hold
 *             nr_pcp_alloc()'s pages under one zone->lock hold (at least
 *             one); a drain gives back the whole free blocks that fit in
 *             nr_pcp_free()'s pages, or at least enough to bring the PCP
 *             back to pcp->high. Implies pcp_block_economy.
 * @economy_ramp: pagelab's own, on economy_batch: alloc_factor follows
 *             the pages a refill took (6.18 doubles the pages of each
 *             refill while a CPU allocates without freeing; one block is
 *             already batch << 3), and an order-0 refill rounds down to
 *             whole blocks where rounding up would fill the PCP past
 *             pcp->high - batch (nr_pcp_alloc()'s limit). Implies
 *             economy_batch.
 * @targeted_drain: pagelab's own, from the seed 003 thread: when an
 *             allocation fails, drain only the CPUs that hold pages of the
 *             needed migratetype, most first, retrying after each, instead
 *             of drain_all_pages().
 * @pcp_batch2x: pagelab's own what-if of 6.18's batch rule: zone_batchsize()
 *             doubled (63 -> 127 on a zone over 1 GiB), the batch that
 *             nr_pcp_alloc() and nr_pcp_free() scale and pcp->high's floor
 *             (batch << 2) follows. After a loaded state the batch is
 *             recomputed from the loaded zone (pl_pcp_design_batch()).
 */
enum vmap_index {
	VMAP_INDEX_RBTREE,	/* the augmented rbtree of 6.18 */
	VMAP_INDEX_MAPLE,	/* seed 004: maple trees, vmap_index=maple */
};

struct pl_design {
	const char *name;
	bool mt_counts;
	bool mt_counts_blocks;	/* pagelab's own extension, see above */
	bool pcp_owner;
	bool pcp_owner_bulk_fallback;	/* pagelab's own option, see above */
	bool free_contig_batch;
	bool vmalloc_high_order;
	bool vfree_batch;
	enum vmap_index vmap_index;
	bool vmap_pcpu_bump;
	bool pcp_premerge;
	bool targeted_drain;
	bool pcp_block_economy;
	bool economy_batch;		/* pagelab's own, see above */
	bool economy_ramp;		/* pagelab's own, see above */
	bool vmap_bump_wide_align;	/* pagelab's own extension, see above */
	bool pcp_batch2x;		/* pagelab's own, see above */
};

/* The architectures whose boot-time memory shapes pagelab models. */
enum pl_arch { PL_ARCH_X86_64, PL_ARCH_ARM64 };

/** struct pl_mem_range - a physical address range [@start, @end), in bytes. */
struct pl_mem_range {
	unsigned long start;
	unsigned long end;
};

#define PL_MAX_HOLES 8

/**
 * struct pl_cpu_topology - the CPUs of a machine profile, for the layers that
 * price or size things by them (PCPF_FREE_HIGH_BATCH here, virtual time).
 * @nr_sockets:       packages.
 * @cores_per_socket: cores in one package.
 * @threads_per_core: SMT threads (1: no SMT).
 * @llc_bytes:        the size of one last-level cache (data or unified).
 * @llc_shared_cpus:  CPUs that share one last-level cache (the kernel's
 *                    cpumask_weight(&llc->shared_cpu_map)).
 * All zero: unknown (a bare configuration); nothing is derived from it.
 * nr_sockets * cores_per_socket * threads_per_core may exceed the number of
 * CPUs on hybrid parts (the i7-12700's E-cores have no SMT).
 */
struct pl_cpu_topology {
	unsigned int nr_sockets;
	unsigned int cores_per_socket;
	unsigned int threads_per_core;
	unsigned long llc_bytes;
	unsigned int llc_shared_cpus;
};

/**
 * struct pl_config - what a machine is made of.
 * @mem_bytes:       end of physical memory (max_pfn), a multiple of 2 MiB
 *                   (default 16 GiB); RAM is [0, @mem_bytes) less @holes.
 * @dma_bytes:       end of ZONE_DMA (0: ZONE_DMA is empty, as on a bare
 *                   config; 16 MiB on x86_64 profiles), a multiple of 2 MiB.
 * @dma32_bytes:     end of ZONE_DMA32 (default 4 GiB, clipped to memory).
 * @holes:           up to PL_MAX_HOLES page-aligned ranges that are not RAM
 *                   (the e820 holes: no struct page is free there, and they
 *                   count in a zone's spanned but not its present pages).
 * @nr_holes:        entries used in @holes.
 * @arch:            the architecture whose boot-time reserve to model.
 * @boot_reserve:    reserve what the kernel's boot keeps out of the buddy
 *                   allocator, so that managed < present (mm_init.c): the
 *                   memmap, x86_64's first MiB, the kernel image, the dentry
 *                   and inode hash tables and the percpu first chunk.
 * @kernel_image_bytes: the kernel image's text, data and bss (with
 *                   @boot_reserve).
 * @thp:             transparent hugepages are enabled: khugepaged's
 *                   set_recommended_min_free_kbytes() may raise min_free_kbytes.
 * @topology:        the CPUs' shape and last-level cache (profiles set it).
 * @profile:         the name of the profile this config came from, or NULL.
 * @nr_cpus:         number of virtual CPUs (default 1).
 * @design:          the design switches (default v6.18).
 * @debug:           0..3: how often the allocator runs the checker itself
 *                   (0 never, 1 on machine teardown, 2 after every slow-path
 *                   event, 3 after every alloc and free).
 * @lock_stat:       time lock holds and waits (costs a clock read per edge).
 * @min_free_kbytes: 0 to compute as the kernel does.
 * @pcp_disabled:    no per-CPU page lists: every allocation and free goes
 *                   to the buddy under zone->lock (to measure the buddy alone).
 * @tlb_flush_ns_per_cpu: what one kernel TLB flush costs per vCPU, spent
 *                   in a calibrated busy loop (default 1000; 0: free).
 * @vtime:           keep virtual time (include/pagelab/vtime.h):
 *                   per-vCPU clocks, locks and cache lines in virtual time;
 *                   @topology prices its cache line transfers (all zero:
 *                   pl_topology_default(), 2 sockets x 26 cores, no SMT).
 * @pcp_no_autotune: pagelab's own switch, not a kernel option: pcp->high
 *                   stays fixed at high_min and refills take a plain batch, as Linux 6.0's PCP had no
 *                   auto-tuning (to compare with the 6.0 scaling anchors).
 * @vt_costs:        with @vtime, the calibrated cost set (enum pl_vt_costs,
 *                   vtime.h): 0 the anchors' (default), 1 this build host's.
 * @watermark_scale_factor: vm.watermark_scale_factor, 1..3000 (the gap
 *                   between watermarks in 1/10000 of a zone's managed
 *                   pages); 0 for the kernel's default, 10.
 * @watermark_boost_factor: vm.watermark_boost_factor, in 1/10000 of the
 *                   high watermark; 0 for the kernel's default, 15000, and
 *                   PL_WMARK_BOOST_OFF for the sysctl's 0 (no boosting).
 * @percpu_pagelist_high_fraction: vm.percpu_pagelist_high_fraction: 0 (the
 *                   default: pcp->high auto-tuned between high_min and
 *                   high_max), or 8 and up: pcp->high fixed at the zone's
 *                   managed pages over the fraction, split over the CPUs.
 */
struct pl_config {
	unsigned long mem_bytes;
	unsigned long dma_bytes;
	unsigned long dma32_bytes;
	struct pl_mem_range holes[PL_MAX_HOLES];
	unsigned int nr_holes;
	enum pl_arch arch;
	bool boot_reserve;
	unsigned long kernel_image_bytes;
	bool thp;
	struct pl_cpu_topology topology;
	const char *profile;
	unsigned int nr_cpus;
	struct pl_design design;
	int debug;
	bool lock_stat;
	unsigned long min_free_kbytes;
	bool pcp_disabled;
	unsigned long tlb_flush_ns_per_cpu;
	bool vtime;
	bool pcp_no_autotune;
	unsigned int vt_costs;
	unsigned long watermark_scale_factor;
	unsigned long watermark_boost_factor;
	unsigned long percpu_pagelist_high_fraction;
	unsigned int extfrag_threshold;	/* vm.extfrag_threshold + 1; 0: the default 500 */
	unsigned int compaction_proactiveness;	/* vm.compaction_proactiveness + 1; 0: the default 20 */
};

/* pl_config.watermark_boost_factor: the sysctl's 0, boosting off. */
#define PL_WMARK_BOOST_OFF		(~0UL)
/* The sysctls' limits (mm/page_alloc.c's sysctl table). */
#define PL_MAX_WMARK_SCALE_FACTOR	3000UL
#define PL_MIN_PCP_HIGH_FRACTION	8UL

/**
 * pl_check_vm_sysctls() - are @cfg's vm sysctl fields (watermark_scale_factor,
 * watermark_boost_factor, percpu_pagelist_high_fraction, in pl_config's
 * terms) within the limits the kernel's sysctls set? Machine creation and
 * the snapshot reader both ask.
 * Return: 0, or -EINVAL after one rate-limited warning "@who: NAME VALUE:
 * want RANGE".
 */
int pl_check_vm_sysctls(const char *who, const struct pl_config *cfg);

#endif /* PAGELAB_CONFIG_H */
