/* SPDX-License-Identifier: MIT */
/*
 * metric.h - the metric registry: every figure pagelab prints is declared
 * once here (src/machine/metric.c) with its id, name, unit, which way is
 * better, its family and whether a replay compares it with the kernel.
 *
 * pagelab-bench names a metric in every JSON record it emits ("metric": id)
 * and prints the whole registry in `pagelab-bench --list --json`; the Python
 * side (pagelab.metrics) reads it from there, so tables, verdict marks,
 * plots and replay tables take direction and labels from this one table and
 * never guess them from a unit.
 *
 * Invariants: ids are unique and never reused for another meaning; a
 * PL_METRIC_NEUTRAL figure is shown, never judged better or worse.
 */
#ifndef PAGELAB_METRIC_H
#define PAGELAB_METRIC_H

#include <stdbool.h>

/* Which way a change is an improvement. */
enum pl_metric_direction {
	PL_METRIC_LOWER,	/* lower is better: a time, a cost, a lock trip */
	PL_METRIC_HIGHER,	/* higher is better: a rate, pages per lock trip, free blocks */
	PL_METRIC_NEUTRAL,	/* shown, never judged (the workload's own counts, state) */
};

/* What a figure is about. */
enum pl_metric_family {
	PL_METRIC_SPEED,	/* time or rate of a measured region */
	PL_METRIC_LOCK,		/* zone->lock and PCP traffic */
	PL_METRIC_FRAG,		/* fragmentation: free blocks, fallbacks, high orders won */
	PL_METRIC_FIDELITY,	/* closeness of a replay to the kernel */
	PL_METRIC_STATE,	/* the machine's state (free pages, workload counts) */
};

/**
 * struct pl_metric - one figure pagelab prints.
 * @id:        stable name in JSON ("pages-per-zone-lock").
 * @name:      the label tables print ("pages per zone->lock").
 * @unit:      what the value counts ("pages", "ns", "Mops/s").
 * @direction: which way is better (enum pl_metric_direction).
 * @family:    enum pl_metric_family.
 * @kernel:    a replay judges this figure against the kernel's (ok/MISS).
 * @counter:   in a replay record's "counters", the key holding the value
 *             (or the numerator with @per); NULL when not a replay figure.
 * @per:       the denominator counter of a ratio, or NULL.
 * @meaning:   one sentence for `pagelab list --metrics`.
 */
struct pl_metric {
	const char *id;
	const char *name;
	const char *unit;
	enum pl_metric_direction direction;
	enum pl_metric_family family;
	bool kernel;
	const char *counter;
	const char *per;
	const char *meaning;
};

/* The registry, ending with a row whose id is NULL. */
extern const struct pl_metric pl_metrics[];

/** pl_metric_find() - the metric named @id, or NULL. */
const struct pl_metric *pl_metric_find(const char *id);

/** pl_metric_direction_name() - "lower", "higher" or "neutral". */
const char *pl_metric_direction_name(enum pl_metric_direction d);

/** pl_metric_family_name() - "speed", "lock traffic", "fragmentation", "fidelity" or "state". */
const char *pl_metric_family_name(enum pl_metric_family f);

#endif /* PAGELAB_METRIC_H */
