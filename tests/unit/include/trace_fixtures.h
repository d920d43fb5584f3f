/* SPDX-License-Identifier: MIT */
/*
 * trace_fixtures.h - where the trace tests find their fixtures: real 6.18
 * captures and a /proc snapshot under tests/fixtures/traces (or
 * $PAGELAB_FIXTURES/traces, as CTest sets it), and a replay on a machine
 * loaded from that snapshot.
 */
#ifndef PAGELAB_TEST_TRACE_FIXTURES_H
#define PAGELAB_TEST_TRACE_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>
#include "helpers.h"
#include "pagelab/replay.h"
#include "pagelab/snapshot.h"
#include "pagelab/trace.h"

/* The path of fixture @name (a static buffer: use it before the next call). */
static inline char *fixture_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("PAGELAB_FIXTURES");

	snprintf(path, sizeof(path), "%s/traces/%s", dir ? dir : "tests/fixtures", name);
	return path;
}

/* A 2-CPU machine of @design loaded (level COUNTS) from the fixture snapshot. */
static inline struct pl_machine *loaded_machine(struct pl_snapshot *snap,
						struct pl_loaded_state **st, const char *design)
{
	struct pl_config cfg;
	struct pl_machine *m;

	assert_int_equal(pl_snapshot_read(fixture_path("snapshot-6.18"), snap), 0);
	pl_config_default(&cfg);
	cfg.nr_cpus = 2;
	assert_int_equal(pl_design_preset(design, &cfg.design), 0);
	pl_snapshot_config(snap, &cfg);
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	*st = pl_machine_load_state(m, snap);
	assert_non_null(*st);
	return m;
}

/*
 * A 2-CPU machine on the kernel's pfn layout, loaded at level POSITIONAL
 * from @snap and the trace's sightings @pos (*@st: the state).
 */
static inline struct pl_machine *positional_machine(const struct pl_snapshot *snap,
						    const struct pl_positional *pos,
						    struct pl_loaded_state **st)
{
	struct pl_config cfg;
	struct pl_machine *m;

	pl_config_default(&cfg);
	cfg.nr_cpus = 2;
	pl_snapshot_config_positional(snap, pos, &cfg);
	assert_int_equal(cfg.dma32_bytes, 4UL << 30);	/* the kernel's pfn layout */
	m = pl_machine_create(&cfg);
	assert_non_null(m);
	*st = pl_machine_load_positional(m, snap, pos);
	assert_non_null(*st);
	return m;
}

/* Pages on vCPU @cpu's PCPs, every zone. */
static inline int pcp_pages(struct pl_machine *m, unsigned int cpu)
{
	int n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		if (populated_zone(&m->node_zones[z]))
			n += m->node_zones[z].per_cpu_pageset[cpu].count;
	return n;
}

/* A replay of trace text on a machine loaded from the fixture snapshot. */
struct loaded_replay {
	struct pl_snapshot snap;
	struct pl_loaded_state *st;
	struct pl_machine *m;
	struct pl_trace_reader *r;
	struct pl_replay *rp;
};

static inline void loaded_replay_start(struct loaded_replay *lr, const char *text, size_t len)
{
	lr->m = loaded_machine(&lr->snap, &lr->st, "v6.18");
	lr->r = pl_trace_open_mem(text, len);
	lr->rp = pl_replay_create(lr->m, lr->st);
	assert_non_null(lr->r);
	assert_non_null(lr->rp);
}

/* The checker's recount, then everything released. */
/* loaded_replay_start(), then every PCP emptied: a drain test sees only the trace's pages. */
static inline void loaded_replay_start_drained(struct loaded_replay *lr, const char *text, size_t len)
{
	loaded_replay_start(lr, text, len);
	pl_enter(lr->m, 0);
	drain_all_pages(NULL);
}

static inline void loaded_replay_end(struct loaded_replay *lr)
{
	assert_int_equal(pl_check_machine(lr->m), 0);
	pl_replay_destroy(lr->rp, true);
	pl_trace_close(lr->r);
	pl_state_release(lr->st);
	pl_machine_destroy(lr->m);
}

#endif
