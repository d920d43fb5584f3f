// SPDX-License-Identifier: MIT
/*
 * machine.c - the machines suites run on: bench_machine() builds one from
 * the common keys (machine=, mem=, dma32=, vcpus=, debug=, vtime=,
 * snapshot=/state=) and registers it for snapshots; bench_zone_lock_stat()
 * sums a machine's zone->lock statistics for the records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "bench.h"
#include "pagelab/snapshot.h"

struct pl_machine *bench_machine(const struct bench *b, const char *design)
{
	const char *snapdir = param_str(b, "snapshot", NULL);
	int state = pl_state_level_parse(param_str(b, "state", snapdir ? "counts" : "fresh"));
	static struct pl_snapshot snap;
	struct pl_config cfg;
	struct pl_machine *m;

	/* snapshot=DIR state=counts (every suite): a machine in a real kernel's state */
	if (state < 0 || state == PL_STATE_POSITIONAL || (state == PL_STATE_COUNTS && !snapdir)) {
		fprintf(stderr, "pagelab-bench: state=%s: suites take fresh, or counts with "
			"snapshot=DIR\n", param_str(b, "state", ""));
		exit(2);
	}
	if (param_str(b, "machine", NULL)) {
		/* a named profile (checked in main()); mem=/dma32=/vcpus= still override */
		pl_machine_profile(param_str(b, "machine", NULL), &cfg);
	} else {
		pl_config_default(&cfg);
	}
	cfg.mem_bytes = param_ulong(b, "mem", cfg.mem_bytes);
	cfg.dma32_bytes = param_ulong(b, "dma32", cfg.dma32_bytes);
	cfg.nr_cpus = (unsigned int)param_ulong(b, "vcpus", cfg.profile ? cfg.nr_cpus : 1);
	cfg.debug = (int)param_ulong(b, "debug", 0);
	cfg.lock_stat = param_ulong(b, "lock_stat", 0) != 0;
	cfg.pcp_disabled = param_ulong(b, "pcp", 1) == 0;
	cfg.vtime = bench_vt_on(b);
	/* vt_costs=anchors|host (checked in main()): the model's cost set */
	cfg.vt_costs = (unsigned int)pl_vt_costs_parse(param_str(b, "vt_costs", "anchors"));
	/* pagelab's own switch (not a kernel option): fixed pcp->high, as Linux 6.0 */
	cfg.pcp_no_autotune = param_ulong(b, "pcp_autotune", 1) == 0;
	{
		const char *t = param_str(b, "topology", NULL);	/* SOCKETSxCORESxTHREADS */

		if (t && sscanf(t, "%ux%ux%u", &cfg.topology.nr_sockets,
				&cfg.topology.cores_per_socket,
				&cfg.topology.threads_per_core) != 3) {
			fprintf(stderr, "pagelab-bench: topology=%s: want SOCKETSxCORESxTHREADS\n", t);
			exit(2);
		}
	}
	bench_design(design, &cfg.design);
	if (snapdir) {
		if (bench_snapshot_read("snapshot", snapdir, &snap))
			exit(2);
		pl_snapshot_config(&snap, &cfg);
		if (!param_str(b, "vcpus", NULL) && pl_snapshot_nr_cpus(&snap))
			cfg.nr_cpus = pl_snapshot_nr_cpus(&snap);
	}
	if (bench_check_host_fit(cfg.mem_bytes, snapdir && state == PL_STATE_COUNTS))
		exit(2);
	/* The library's own warning becomes this one line. */
	pl_warn_set_quiet(true);
	m = pl_machine_create(&cfg);
	pl_warn_set_quiet(false);
	if (!m) {
		char why[256];

		pl_warn_last(why, sizeof(why));
		fprintf(stderr, "pagelab-bench: cannot create the machine: %s\n", why);
		exit(2);
	}
	if (snapdir && state == PL_STATE_COUNTS) {
		struct pl_loaded_state *st = pl_machine_load_state(m, &snap);

		if (!st) {
			fprintf(stderr, "pagelab-bench: cannot load the snapshot's state\n");
			exit(1);
		}
		pl_state_release(st);	/* its pages stay allocated: the booted machine's */
	}
	bench_snap_machine(m, design);
	return m;
}

void bench_zone_lock_stat(struct pl_machine *m, struct pl_lock_stat *out)
{
	struct zone *zone;

	*out = (struct pl_lock_stat){ 0 };
	for_each_populated_zone(zone, m) {
		struct pl_lock_stat z;

		pl_lock_stat_read(&zone->lock, &z);
		out->acquisitions += z.acquisitions;
		out->contentions += z.contentions;
		out->wait_ns += z.wait_ns;
		out->hold_ns += z.hold_ns;
	}
}
