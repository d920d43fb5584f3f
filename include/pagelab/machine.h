/* SPDX-License-Identifier: MIT */
/*
 * machine.h - the machine as a whole (src/machine/, the composition root
 * above mm/ and vmalloc/): creating and destroying one, the design presets,
 * the checker that runs every layer's checker, and the registries through
 * which the layers' checkers and fault injection sites are reached.
 *
 * The layers never call into src/machine/: each one exports its init, its
 * checker and its fault sites' state, and pl_machine_create() puts them
 * together and registers them (machine.c).
 */
#ifndef PAGELAB_MACHINE_H
#define PAGELAB_MACHINE_H

#include "fault_inject.h"
#include "mm.h"

/* ---- creating a machine (machine.c) --------------------------------------- */

/** pl_config_default() - the default machine: 16 GiB, DMA32 + Normal, 1 vCPU, v6.18. */
void pl_config_default(struct pl_config *cfg);

/**
 * pl_machine_create() - build a machine: memmap, zones, watermarks, and all
 * memory freed into the buddy allocator as the kernel does at boot.
 * Return: the machine, or NULL (with a warning) for a bad config or no memory.
 */
struct pl_machine *pl_machine_create(const struct pl_config *cfg);

/** pl_machine_destroy() - release a machine (runs the checker at debug >= 1). */
void pl_machine_destroy(struct pl_machine *m);

/**
 * pl_design_preset() - fill @out with the named preset.
 * @name: "v6.18" (baseline), "mt-counts" (seed 002 exactly),
 *        "mt-counts+blocks" (that plus pagelab's own O(1) block counts),
 *        "pcp-owner", "pcp-owner+bulk" (seed 003 degrading to rmqueue_bulk(),
 *        pagelab's own option), "contig-batch",
 *        "v6.19-rc1" (vmalloc_high_order), "v6.19-rc1+contig" (that plus
 *        free_contig_batch and vfree_batch), "maple" (vmap_index=maple and
 *        vmap_pcpu_bump), "maple+wide-align" (that plus pagelab's own
 *        vmap_bump_wide_align), "maple-index" (vmap_index=maple alone),
 *        issue 16's pagelab-own designs "pcp-premerge", "targeted-drain",
 *        "block-economy" (pcp_owner + pcp_block_economy) and
 *        "pcp-owner+targeted-drain", or
 *        "all" (every seed's switch; pagelab's own extensions are not in it).
 * Return: 0, or -EINVAL for an unknown name.
 */
int pl_design_preset(const char *name, struct pl_design *out);

/** pl_design_presets - NULL-terminated list of preset names. */
extern const char *const pl_design_presets[];

/* ---- named machine profiles (profile.c) ------------------------------------ */

/**
 * struct pl_machine_profile - a named machine: the hardware a seed ran on.
 * @name:      what machine=NAME selects.
 * @summary:   the machine in a few words, and where it comes from.
 * @hardware:  the CPUs, memory and cache it models.
 * @seeds:     the seeds measured on it ("000", ...), "-" for none.
 * @arch:      x86_64 or arm64 (zone layout, boot reserve, vmalloc_huge).
 * @nr_cpus:   CPUs.
 * @ram_bytes: RAM (the physical address space adds the holes).
 * @ram_base:  where RAM starts (arm64 QEMU virt: 1 GiB), else 0.
 * @topology:  sockets, cores, threads and the last-level cache.
 */
struct pl_machine_profile {
	const char *name;
	const char *summary;
	const char *hardware;
	const char *seeds;
	enum pl_arch arch;
	unsigned int nr_cpus;
	unsigned long ram_bytes;
	unsigned long ram_base;
	struct pl_cpu_topology topology;
};

/** pl_machine_profiles - every profile, ended by one with a NULL @name. */
extern const struct pl_machine_profile pl_machine_profiles[];

/** pl_machine_profile_find() - the profile called @name, or NULL. */
const struct pl_machine_profile *pl_machine_profile_find(const char *name);

/**
 * pl_machine_profile() - fill @cfg with profile @name: pl_config_default()'s
 * design and knobs, the profile's CPUs, memory layout (ZONE_DMA, holes),
 * boot reserve, THP and topology. The caller may still change the design,
 * debug level, lock_stat, the number of vCPUs, and so on.
 * Return: 0, or -EINVAL (with a warning) for an unknown name.
 */
int pl_machine_profile(const char *name, struct pl_config *cfg);

/* ---- the layers' checkers (machine.c) ------------------------------------- */

/**
 * pl_check_machine() - walk every free list and pageblock and recount every
 * counter (the "zones" checker, mm/debug.c), then run pl_check_vmalloc()
 * ("vmalloc"), and any other registered checker, in registration order;
 * print each inconsistency on stderr.
 * Context: takes each zone->lock in turn; no vmalloc call may be running.
 * Return: the number of inconsistencies (0 = clean).
 */
int pl_check_machine(struct pl_machine *m);

/**
 * pl_machine_register_checker() - add @check to the checkers that
 * pl_check_machine() runs on @m. Called while @m is being made.
 * Return: 0, or -EINVAL (no room, bad arguments).
 */
int pl_machine_register_checker(struct pl_machine *m, const char *name,
				int (*check)(struct pl_machine *m));

/* ---- the layers' fault injection sites (fault_sites.c) -------------------- */

/**
 * pl_machine_register_fault_site() - make @fs the state behind @site on @m.
 * Called while @m is being made; each site once.
 * Return: 0, or -EINVAL (bad site, already registered).
 */
int pl_machine_register_fault_site(struct pl_machine *m, enum pl_fault_site site,
				   struct pl_fault_state *fs);

/**
 * pl_fault_set() - set the knobs of @site on machine @m. Takes effect for
 * the next call on any of @m's vCPUs.
 * Return: 0, or -EINVAL for a bad site or attribute (nothing changed).
 */
int pl_fault_set(struct pl_machine *m, enum pl_fault_site site, const struct pl_fault_attr *attr);

/**
 * pl_fault_get() - the knobs (times/space as counted down so far) and the
 * statistics of @site on @m; either pointer may be NULL.
 * Return: 0 or -EINVAL for a bad site.
 */
int pl_fault_get(struct pl_machine *m, enum pl_fault_site site, struct pl_fault_attr *attr,
		 struct pl_fault_stats *stats);

/**
 * pl_fault_site_state() - the live state of @site on @m, as registered
 * when @m was made (PL_FAULT_MAPLE_NODE: the process-wide maple node state).
 * Return: the state, or NULL for a bad site.
 */
struct pl_fault_state *pl_fault_site_state(struct pl_machine *m, enum pl_fault_site site);

/** pl_fail_page_alloc_set() - pl_fault_set() for fail_page_alloc. */
static inline int pl_fail_page_alloc_set(struct pl_machine *m, const struct pl_fault_attr *attr)
{
	return pl_fault_set(m, PL_FAULT_PAGE_ALLOC, attr);
}

#endif /* PAGELAB_MACHINE_H */
