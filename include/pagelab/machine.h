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

/* ---- /proc/lock_stat (lock_stat_show.c) ----------------------------------- */

/**
 * pl_show_lock_stat() - /proc/lock_stat in the kernel's format (version
 * 0.4): the machine's timed spinlocks folded into lockdep's classes
 * (&zone->lock, &pcp->lock, free_vmap_area_lock, &vn->busy.lock, ...), one
 * line each, most contended first, times in microseconds. The pl_show_*()
 * contract of mm.h: NUL-terminated, (m, NULL, 0) gives the length needed.
 * Contention points (call sites) are not recorded and not printed.
 * @m:    a machine created with lock_stat=1 (struct pl_config.lock_stat).
 * @buf:  where the text goes, or NULL with @size 0.
 * @size: bytes at @buf.
 * Context: any thread; reads the locks' numbers racily.
 * Return: length, -ENOSPC, -EINVAL (NULL machine, NULL buffer with a size)
 * or -ENOENT (no lock_stat on @m), the errors after a rate-limited warning.
 */
long pl_show_lock_stat(struct pl_machine *m, char *buf, size_t size);
/** pl_show_lock_stat_file() - /proc/lock_stat to @f. Return: length or a -errno as above, -ENOMEM, -EIO. */
long pl_show_lock_stat_file(struct pl_machine *m, FILE *f);

/* ---- designs from switches (design.c) ----------------------------------- */

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
 *        the pagelab-own designs "pcp-premerge", "targeted-drain",
 *        "block-economy" and "pcp-owner+targeted-drain", or
 *        "all" (every seed's switch; pagelab's own extensions are not in it);
 *        pl_design_preset_table[] lists them.
 * Return: 0, or -EINVAL for an unknown name (@out untouched).
 */
int pl_design_preset(const char *name, struct pl_design *out);

/** pl_design_presets - NULL-terminated list of preset names. */
extern const char *const pl_design_presets[];

/* How a switch's value is stored in struct pl_design. */
enum pl_switch_kind {
	PL_SWITCH_BOOL,		/* a bool field: "name" sets it, "name=0" clears it */
	PL_SWITCH_ENUM,		/* an int-sized enum field: "name=value" */
};

/**
 * struct pl_design_switch - one design switch (a row of pl_design_switches[]).
 * @name:    as written in a design spec, e.g. "pcp_owner".
 * @offset:  offsetof(struct pl_design, field).
 * @kind:    bool or enum.
 * @values:  an enum's value names (index = value), NULL-terminated; NULL for bool.
 * @origin:  where the behaviour comes from: "seed 003", a kernel commit, or
 *           "pagelab" for pagelab's own additions beyond a patch.
 * @meaning: one line for `pagelab list`.
 * @implies: a bool switch this one needs, turned on with it (NULL: none).
 */
struct pl_design_switch {
	const char *name;
	size_t offset;
	enum pl_switch_kind kind;
	const char *const *values;
	const char *origin;
	const char *meaning;
	const char *implies;
};

/** pl_design_switches - every switch, terminated by a row with name NULL. */
extern const struct pl_design_switch pl_design_switches[];

/**
 * struct pl_design_preset_def - a named preset: @switches is its spec
 * ("vmap_index=maple+vmap_pcpu_bump", "" for the baseline).
 */
struct pl_design_preset_def {
	const char *name;
	const char *switches;
	const char *meaning;
};

/** pl_design_preset_table - every preset, terminated by a row with name NULL. */
extern const struct pl_design_preset_def pl_design_preset_table[];

/**
 * pl_design_parse() - a design from a spec: "PRESET", "PRESET+SWITCH+...",
 * or switches alone on the baseline ("pcp_owner+mt_counts"). A switch is
 * "name" (bool on), "name=0"/"name=1", or "name=value" for an enum
 * ("vmap_index=maple"). @out->name is the spec itself (interned: valid for
 * the life of the process), or the preset's name for a bare preset.
 * @err: where a one-line reason goes on failure (may be NULL).
 * Does not warn: the caller reports @err (a CLI's one line).
 * Return: 0; -EINVAL for an unknown preset or switch or a bad value, with
 * @out untouched; -ENOMEM if the name cannot be kept.
 */
int pl_design_parse(const char *spec, struct pl_design *out, char *err, size_t errsize);

/**
 * pl_design_format() - write @d's switches as a spec ("mt_counts+pcp_owner";
 * "" for the baseline) into @buf, always NUL-terminated when @size > 0.
 * Return: the length, or -ENOSPC if @size is too small (truncated).
 */
long pl_design_format(const struct pl_design *d, char *buf, size_t size);

/**
 * pl_design_canonical() - @d's canonical string: "v6.18" followed by
 * "+SWITCH" for each switch on, in the switch table's order ("v6.18" for
 * the baseline, "v6.18+pcp_owner" for pcp-owner, pcp_owner and
 * v6.18+pcp_owner alike). Two specs build the same design exactly when
 * their canonical strings are equal; every front end reports it.
 * Return: the length, or -ENOSPC if @size is too small (truncated).
 */
long pl_design_canonical(const struct pl_design *d, char *buf, size_t size);

/**
 * pl_design_check() - parse @spec and write its canonical string: the one
 * call a front end without C structs needs (the Python API, tests).
 * Return: 0, or pl_design_parse()'s error with the reason in @err.
 */
int pl_design_check(const char *spec, char *canon, size_t size, char *err, size_t errsize);

/** pl_design_switch_get() - the value of switch @s in @d (0/1 for bool). */
int pl_design_switch_get(const struct pl_design *d, const struct pl_design_switch *s);

/** pl_design_switch_find() - the switch named by @name[0..@len), or NULL. */
const struct pl_design_switch *pl_design_switch_find(const char *name, size_t len);

/* ---- configuration from strings (config.c) -------------------------------- */

/** pl_config_new() - a heap-allocated default config (pl_config_default()), or NULL. */
struct pl_config *pl_config_new(void);
/** pl_config_free() - free a config from pl_config_new(). */
void pl_config_free(struct pl_config *cfg);

/**
 * pl_config_set() - set one key of @cfg from a string, as pagelab-bench's
 * keys: machine (a profile: replaces memory layout, CPUs and topology,
 * keeps the design and knobs; so set it before mem=, dma32=, vcpus=),
 * mem, dma32 (sizes with K/M/G), vcpus, design (a pl_design_parse()
 * spec), debug (0-3), lock_stat (0/1), pcp (0/1), min_free_kbytes,
 * tlb_flush_ns. Does not warn: a refusal's reason goes to @err.
 * Return: 0, or -EINVAL (@cfg unchanged).
 */
int pl_config_set(struct pl_config *cfg, const char *key, const char *value, char *err,
		  size_t errsize);

/**
 * pl_gfp_parse() - gfp flags from their kernel names joined by '|'
 * ("GFP_KERNEL|__GFP_ZERO"). Return: 0, or -EINVAL (@out unchanged).
 */
int pl_gfp_parse(const char *spec, gfp_t *out, char *err, size_t errsize);

/**
 * pl_page_pfn() - page_to_pfn() for callers that cannot use the inline. Context: entered.
 * Return: the pfn, or -1UL with one warning for a NULL page.
 */
unsigned long pl_page_pfn(const struct page *page);

/** pl_machine_max_pfn() - @m's max_pfn, for bindings that do not see struct pl_machine. */
unsigned long pl_machine_max_pfn(const struct pl_machine *m);

/** pl_vm_event_count() - NR_PL_VM_EVENTS, the length of pl_vm_event_names[] (for bindings). */
unsigned int pl_vm_event_count(void);

/* ---- built-in workloads (workload.c) -------------------------------------- */

/*
 * Simulated time for the vmstat tick: a vCPU's second is PL_TICK_OPS of
 * its page operations (pages allocated + freed), the kernel's once-a-second
 * refresh_cpu_vm_stats() at 100,000 of them per CPU-second, the order of a
 * parallel kernel build's rate. See the README, "The slow path before
 * failing". The built-in workloads and the bench loops tick this way.
 */
#define PL_TICK_OPS 100000UL

/**
 * pl_vmstat_tick_due() - run the current vCPU's pl_vmstat_tick() when its
 * page operations have passed *@next (0: not started, start counting now),
 * and move *@next on by PL_TICK_OPS. Context: entered.
 */
static inline void pl_vmstat_tick_due(unsigned long *next)
{
	const struct pl_cpu_events *e = &pl_this.cpu->events;
	unsigned long ops = READ_ONCE(e->ev[PL_EV_PGALLOC_PAGES]) +
			    READ_ONCE(e->ev[PL_EV_PGFREE_PAGES]);

	if (*next && ops < *next)
		return;
	if (*next)
		pl_vmstat_tick();
	*next = ops + PL_TICK_OPS;
}

/** struct pl_churn_result - what pl_churn_run() did and left. */
struct pl_churn_result {
	unsigned long live_blocks;	/* blocks still allocated */
	unsigned long free_blocks;	/* sum of nr_free over zones and orders */
	unsigned long allocs, frees;
};

struct pl_churn;

/**
 * pl_churn_run() - kernel-build-like churn: fill memory with mixed order
 * 0..4 (and a few order-9) blocks of all three PCP migratetypes down to 5%
 * free, free a random half, then replace random blocks for @rounds steps.
 * The same seed gives the same state under every design that does not
 * change placement. The survivors stay allocated until pl_churn_release().
 * Context: the calling thread has entered @m.
 * Return: the survivors, or NULL if out of host memory.
 */
struct pl_churn *pl_churn_run(struct pl_machine *m, uint64_t seed, unsigned long rounds,
			      struct pl_churn_result *res);

/** pl_churn_release() - free every survivor of pl_churn_run() (on the current vCPU). */
void pl_churn_release(struct pl_churn *st);

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
