// SPDX-License-Identifier: MIT
/*
 * profile.c - named machine profiles: the hardware each seed was measured
 * on (and a few more), as a pl_config with the boot-time shape of a real
 * Linux 6.18 machine: ZONE_DMA, the firmware's holes, the boot reserve
 * (memmap, first MiB, kernel image, hash tables, percpu), THP's
 * min_free_kbytes bump, the CPU topology and the last-level cache that sets
 * PCPF_FREE_HIGH_BATCH.
 *
 * Where a number comes from:
 *  - x86_64 RAM map: e820 with the first page and [0x9f000, 1 MiB) absent,
 *    RAM below 4 GiB ending at 3 GiB (the 1 GiB PCI hole of QEMU's pc
 *    machine and of this host's Firecracker VM, whose zoneinfo the tests
 *    compare with), the rest from 4 GiB up;
 *  - arm64: ZONE_DMA covers the 32-bit range and ZONE_DMA32 is empty (as
 *    arm64's zone_sizes_init() leaves it when the DMA limit is 4 GiB); QEMU's
 *    virt machine puts RAM at 1 GiB, the m7g's RAM map is taken to start at 0;
 *  - the kernel image: 32470 KiB (this host's 6.18 dmesg: 18478K code +
 *    2544K rwdata + 10280K rodata + 1168K bss, init memory freed);
 *  - CPUs and caches: the vendors' data, or the seed's text; where the seed
 *    does not say, the profile says "not stated" and uses what is written.
 *
 * Invariant: pl_machine_profiles[] is constant; a profile fills a config
 * that pl_machine_create() accepts.
 */
#include <errno.h>
#include <string.h>
#include "pagelab/pagelab.h"

#define KiB (1UL << 10)
#define MiB (1UL << 20)
#define GiB (1UL << 30)

/* The kernel image of a 6.18 x86_64 distro-style build (see above). */
#define KERNEL_IMAGE_BYTES	(32470 * KiB)

const struct pl_machine_profile pl_machine_profiles[] = {
	{
		.name = "default",
		.summary = "x86_64 server shape at pagelab's default size",
		.hardware = "x86_64, 16 GiB, 16 CPUs (1 socket x 8 cores x 2 threads), "
			    "LLC not modelled",
		.seeds = "-",
		.arch = PL_ARCH_X86_64, .nr_cpus = 16, .ram_bytes = 16 * GiB,
		.topology = { 1, 8, 2, 0, 0 },
	},
	{
		.name = "m7g.metal",
		.summary = "AWS m7g.metal (Graviton3)",
		.hardware = "arm64, 64 CPUs (64 Neoverse V1 cores), 256 GiB, 32 MiB L3 "
			    "shared by all cores",
		.seeds = "000",
		.arch = PL_ARCH_ARM64, .nr_cpus = 64, .ram_bytes = 256 * GiB,
		.topology = { 1, 64, 1, 32 * MiB, 64 },
	},
	{
		.name = "i7-12700",
		.summary = "12th Gen Intel Core i7-12700, 1 NUMA node, 16G",
		.hardware = "x86_64, 20 CPUs (8 P-cores x 2 threads + 4 E-cores), 16 GiB, "
			    "25 MiB L3 shared by all 20",
		.seeds = "002",
		.arch = PL_ARCH_X86_64, .nr_cpus = 20, .ram_bytes = 16 * GiB,
		.topology = { 1, 12, 2, 25 * MiB, 20 },
	},
	{
		.name = "x86-32c-32g",
		.summary = "the RFC's \"32-way, 32G RAM test machine\" (CPU not stated)",
		.hardware = "x86_64, 32 CPUs, 32 GiB, one node; LLC not stated",
		.seeds = "003",
		.arch = PL_ARCH_X86_64, .nr_cpus = 32, .ram_bytes = 32 * GiB,
		.topology = { 1, 32, 1, 0, 0 },
	},
	{
		.name = "kvm-smp8",
		.summary = "QEMU/KVM x86_64 guest, -smp 8 (memory not stated: 8 GiB)",
		.hardware = "x86_64, 8 CPUs (1 socket x 8 cores), 8 GiB, QEMU's 16 MiB "
			    "legacy L3 shared by all",
		.seeds = "004",
		.arch = PL_ARCH_X86_64, .nr_cpus = 8, .ram_bytes = 8 * GiB,
		.topology = { 1, 8, 1, 16 * MiB, 8 },
	},
	{
		.name = "kvm-smp16",
		.summary = "QEMU/KVM x86_64 guest, -smp 16 (memory not stated: 8 GiB)",
		.hardware = "x86_64, 16 CPUs (1 socket x 16 cores), 8 GiB, QEMU's 16 MiB "
			    "legacy L3 shared by all",
		.seeds = "004",
		.arch = PL_ARCH_X86_64, .nr_cpus = 16, .ram_bytes = 8 * GiB,
		.topology = { 1, 16, 1, 16 * MiB, 16 },
	},
	{
		.name = "tcg-a72-smp8",
		.summary = "QEMU TCG arm64 virt, cortex-a72, -smp 8 (memory not stated: 8 GiB)",
		.hardware = "arm64, 8 CPUs, 8 GiB of RAM from 1 GiB up; no cache "
			    "topology (no PPTT)",
		.seeds = "004",
		.arch = PL_ARCH_ARM64, .nr_cpus = 8, .ram_bytes = 8 * GiB, .ram_base = 1 * GiB,
		.topology = { 1, 8, 1, 0, 0 },
	},
	{
		.name = "xeon-5320-2s",
		.summary = "KVM guest on 2 x Intel Xeon Gold 5320 (the scaling anchors)",
		.hardware = "x86_64, 52 CPUs (2 sockets x 26 cores, SMT off), 128 GiB, "
			    "39 MiB L3 per socket",
		.seeds = "anchors",
		.arch = PL_ARCH_X86_64, .nr_cpus = 52, .ram_bytes = 128 * GiB,
		.topology = { 2, 26, 1, 39 * MiB, 26 },
	},
	{
		.name = "firecracker-24g",
		.summary = "this project's build host: a Firecracker VM (AMD EPYC, 2 vCPUs, 24 GiB)",
		.hardware = "x86_64, 2 CPUs, 24 GiB (e820 of its 6.18 dmesg), 32 MiB L3 "
			    "shared by both",
		.seeds = "-",
		.arch = PL_ARCH_X86_64, .nr_cpus = 2, .ram_bytes = 24 * GiB,
		.topology = { 1, 2, 1, 32 * MiB, 2 },
	},
	{ .name = NULL },
};

const struct pl_machine_profile *pl_machine_profile_find(const char *name)
{
	for (const struct pl_machine_profile *p = pl_machine_profiles; name && p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

static void add_hole(struct pl_config *cfg, unsigned long start, unsigned long end)
{
	cfg->holes[cfg->nr_holes].start = start;
	cfg->holes[cfg->nr_holes].end = end;
	cfg->nr_holes++;
}

/* x86_64: e820 as described at the top; RAM below 4 GiB ends at 3 GiB. */
static void x86_64_layout(struct pl_config *cfg, unsigned long ram)
{
	const unsigned long low_end = 3 * GiB;

	add_hole(cfg, 0, 4 * KiB);
	add_hole(cfg, 0x9f000, 1 * MiB);
	if (ram > low_end) {
		add_hole(cfg, low_end, 4 * GiB);
		cfg->mem_bytes = ram + (4 * GiB - low_end);
	} else {
		cfg->mem_bytes = ram;
	}
	cfg->dma_bytes = 16 * MiB;
	cfg->dma32_bytes = 4 * GiB;
}

/* arm64: RAM from @base; ZONE_DMA up to 4 GiB, ZONE_DMA32 empty. */
static void arm64_layout(struct pl_config *cfg, unsigned long ram, unsigned long base)
{
	if (base)
		add_hole(cfg, 0, base);
	cfg->mem_bytes = base + ram;
	cfg->dma_bytes = 4 * GiB;
	cfg->dma32_bytes = 4 * GiB;
}

int pl_machine_profile(const char *name, struct pl_config *cfg)
{
	const struct pl_machine_profile *p = pl_machine_profile_find(name);

	if (!p || !cfg) {
		pl_warn_ratelimited("machine: unknown profile '%s'", name ? name : "(null)");
		return -EINVAL;
	}
	pl_config_default(cfg);
	cfg->nr_cpus = p->nr_cpus;
	cfg->arch = p->arch;
	if (p->arch == PL_ARCH_X86_64)
		x86_64_layout(cfg, p->ram_bytes);
	else
		arm64_layout(cfg, p->ram_bytes, p->ram_base);
	cfg->boot_reserve = true;
	cfg->kernel_image_bytes = KERNEL_IMAGE_BYTES;
	cfg->thp = true;
	cfg->topology = p->topology;
	cfg->profile = p->name;
	return 0;
}
