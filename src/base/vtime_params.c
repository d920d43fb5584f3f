// SPDX-License-Identifier: MIT
/*
 * vtime_params.c - the virtual-time model's calibrated parameters.
 *
 * Per-path costs: scripts/vtime-calibrate.py fits them (non-negative least
 * squares) to callgrind instruction counts of 11 single-vCPU workloads
 * measured here, and converts instructions to time with the one factor
 * that matches the LLFree artifact's 1-thread Linux-buddy figures (0.263
 * ns per instruction, the anchor machine's 2.2 GHz Xeon); it prints the
 * "calibrated" block. The fit cannot tell the PCP lock from the PCP fast
 * path (one of each per call): the path's cost sits in lock_ps, spent
 * under the lock as in the kernel. The vmalloc layer's costs (VMALLOC,
 * VFREE, vmap_lock_ps, the P_RB_NODE and P_MT_NODE steps) come from the
 * script's --vmalloc fit instead, the others held. Two costs are measured,
 * not fitted: a PCP drain's and a refill's own work per block under
 * zone->lock (VT_P_PCP_DRAIN, VT_P_PCP_REFILL; the fit has no column for
 * them), callgrind's instructions of those loops times the same factor.
 * Transfer and handoff costs are set
 * against the anchors' growth factors (the LLFree paper's artifact, USENIX ATC 2023).
 * README "Time at many CPUs" gives the procedure, the fit and the checks.
 * All values in picoseconds (cache_lines, llc_lines: counts of lines;
 * tlb_entries: of pages).
 *
 * Two sets (enum pl_vt_costs): the anchors' above, the default, and the
 * build host's (vt_costs=host, below), for comparing with real threads
 * here. Each is a constant block: the same predictions on any host.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "pagelab/base.h"

static const char *const path_names[NR_VT_PATHS] = {
	"P_RMQUEUE", "P_FREE_ONE", "P_LIST_ENTRY", "P_PAGEBLOCK", "P_SEQ_LINE", "P_RB_NODE",
	"P_MT_NODE", "P_PCP_DRAIN", "P_PCP_REFILL",
};
static const char *const lock_names[NR_VT_LOCK_CLASSES] = {
	"HOLD_OTHER", "HOLD_ZONE", "HOLD_PCP", "HOLD_VMAP_FREE", "HOLD_VMAP_NODE",
	"HOLD_VMAP_OTHER",
};

/* The parameter called @name, or NULL. */
static uint64_t *param_slot(struct pl_vt_params *p, const char *name)
{
	static const char *const xfer[NR_VT_DIST] = { "XFER_CORE", "XFER_SOCKET", "XFER_REMOTE" };

	for (int i = 0; i < NR_PL_VM_EVENTS; i++)
		if (!strcmp(name, pl_vm_event_names[i]))
			return &p->event_ps[i];
	for (int i = 0; i < NR_VT_PATHS; i++)
		if (!strcmp(name, path_names[i]))
			return &p->path_ps[i];
	for (int i = 0; i < NR_VT_LOCK_CLASSES; i++)
		if (!strcmp(name, lock_names[i]))
			return &p->hold_ps[i];
	for (int i = 0; i < NR_VT_DIST; i++)
		if (!strcmp(name, xfer[i]))
			return &p->xfer_ps[i];
	if (!strcmp(name, "LOCK"))
		return &p->lock_ps;
	if (!strcmp(name, "HANDOFF"))
		return &p->handoff_ps;
	if (!strcmp(name, "IDLE"))
		return &p->idle_ps;
	if (!strcmp(name, "VMAP_LOCK"))
		return &p->vmap_lock_ps;
	if (!strcmp(name, "MISS"))
		return &p->miss_ps;
	if (!strcmp(name, "CACHE_LINES"))
		return &p->cache_lines;
	if (!strcmp(name, "REMOTE_MISS"))
		return &p->remote_miss_ps;
	if (!strcmp(name, "TLB_ENTRIES"))
		return &p->tlb_entries;
	if (!strcmp(name, "TLB_MISS"))
		return &p->tlb_miss_ps;
	if (!strcmp(name, "LLC_LINES"))
		return &p->llc_lines;
	if (!strcmp(name, "LLC_MISS"))
		return &p->llc_miss_ps;
	if (!strcmp(name, "LIST_NEIGHBOURS"))
		return &p->list_neighbours;
	return NULL;
}

/**
 * pl_vt_params_override() - apply "NAME=ps,NAME=ps,..." (the calibration
 * script's PAGELAB_VT_PARAMS; "ZERO" first clears every cost) to @p.
 * Return: 0, or -1 for an unknown name or a bad number (@p then unchanged).
 */
int pl_vt_params_override(struct pl_vt_params *p, const char *spec)
{
	struct pl_vt_params q;
	char buf[2048], *save = NULL;

	if ((!p || !spec) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	q = *p;
	snprintf(buf, sizeof(buf), "%s", spec);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '='), *end;
		uint64_t *slot;

		if (!strcmp(tok, "ZERO")) {
			memset(&q, 0, sizeof(q));
			continue;
		}
		if (!eq)
			return -1;
		*eq = '\0';
		slot = param_slot(&q, tok);
		if (!slot)
			return -1;
		*slot = strtoull(eq + 1, &end, 10);
		if (*end || end == eq + 1)
			return -1;
	}
	*p = q;
	return 0;
}

const char *const pl_vt_costs_names[NR_PL_VT_COSTS] = { "anchors", "host" };

int pl_vt_costs_parse(const char *name)
{
	for (int i = 0; name && i < NR_PL_VT_COSTS; i++)
		if (!strcmp(name, pl_vt_costs_names[i]))
			return i;
	return -1;
}

/* The default set: instructions scaled to the anchor machine (see the top). */
static void costs_anchors(struct pl_vt_params *p)
{
	/* calibrated: BEGIN (scripts/vtime-calibrate.py rewrites this block) */
	p->event_ps[PL_EV_PGALLOC] = 0;
	p->event_ps[PL_EV_PGFREE] = 0;
	p->event_ps[PL_EV_PCP_HIT] = 0;
	p->event_ps[PL_EV_PCP_MISS] = 0;
	p->event_ps[PL_EV_PCP_FREE] = 0;
	p->path_ps[VT_P_RMQUEUE] = 20930;
	p->path_ps[VT_P_FREE_ONE] = 20930;
	p->event_ps[PL_EV_BUDDY_SPLIT] = 13237;
	p->event_ps[PL_EV_BUDDY_MERGE] = 13237;
	p->event_ps[PL_EV_PCP_SPLIT] = 13237;
	p->event_ps[PL_EV_PCP_MERGE] = 13237;
	p->lock_ps = 85949;
	p->event_ps[PL_EV_VMALLOC] = 302520;
	p->event_ps[PL_EV_VFREE] = 302520;
	p->vmap_lock_ps = 0;
	p->path_ps[VT_P_RB_NODE] = 3989;
	p->path_ps[VT_P_MT_NODE] = 38292;
	p->event_ps[PL_EV_VMAP_PURGE_AREAS] = 0;
	p->path_ps[VT_P_LIST_ENTRY] = 1623;
	p->path_ps[VT_P_PAGEBLOCK] = 0;
	p->path_ps[VT_P_SEQ_LINE] = 546477;
	p->idle_ps = 5000;	/* one pass of a polling loop (not fitted) */
	/* calibrated: END */
	/* anchors: BEGIN */
	p->handoff_ps = 20000;
	p->xfer_ps[VT_SAME_CORE] = 10000;
	p->xfer_ps[VT_SAME_SOCKET] = 60000;
	p->xfer_ps[VT_OTHER_SOCKET] = 140000;
	/* anchors: END */
	/*
	 * measured: the loops of free_pcppages_bulk() and rmqueue_bulk() around
	 * __free_one_page() and __rmqueue(), per block, under zone->lock: 69 and
	 * 17 instructions (callgrind slopes of llfree_anchors bulk, README "The
	 * anchors"), x 0.2626 ns.
	 */
	p->path_ps[VT_P_PCP_DRAIN] = 18119;
	p->path_ps[VT_P_PCP_REFILL] = 4464;
}

/*
 * vt_costs=host: the build host (firecracker-24g: AMD EPYC, 2 vCPUs, one
 * socket). scripts/vtime-calibrate.py --host rewrites this block: per-path
 * costs and the cache model's miss cost fitted (nnls) to timed
 * single-thread runs here, the transfer and the lock handoff measured by
 * pagelab-xfer between the two pinned vCPUs. The host has one socket and
 * no SMT: the same-core and other-socket transfers take the one measured
 * cross-core figure. cache_lines is the L2 of one core (1 MiB); the TLB's
 * entries and the shared LLC's lines are the candidates that fit best.
 */
static void costs_host(struct pl_vt_params *p)
{
	/* host: BEGIN (scripts/vtime-calibrate.py --host rewrites this block) */
	p->event_ps[PL_EV_PGALLOC] = 0;
	p->event_ps[PL_EV_PGFREE] = 0;
	p->event_ps[PL_EV_PCP_HIT] = 0;
	p->event_ps[PL_EV_PCP_MISS] = 0;
	p->event_ps[PL_EV_PCP_FREE] = 0;
	p->event_ps[PL_EV_BUDDY_SPLIT] = 1190;
	p->event_ps[PL_EV_BUDDY_MERGE] = 1190;
	p->event_ps[PL_EV_PCP_SPLIT] = 1190;
	p->event_ps[PL_EV_PCP_MERGE] = 1190;
	p->lock_ps = 21604;
	p->event_ps[PL_EV_VMALLOC] = 0;
	p->event_ps[PL_EV_VFREE] = 0;
	p->vmap_lock_ps = 0;
	p->path_ps[VT_P_RB_NODE] = 5259;
	p->path_ps[VT_P_MT_NODE] = 36211;
	p->event_ps[PL_EV_VMAP_PURGE_AREAS] = 0;
	p->path_ps[VT_P_LIST_ENTRY] = 23696;
	p->path_ps[VT_P_PAGEBLOCK] = 10078;
	p->path_ps[VT_P_SEQ_LINE] = 0;
	p->path_ps[VT_P_RMQUEUE] = 13159;
	p->path_ps[VT_P_FREE_ONE] = 15697;
	p->miss_ps = 17871;
	p->tlb_miss_ps = 12257;
	p->llc_miss_ps = 0;
	p->idle_ps = 5000;	/* one pass of a polling loop (not fitted) */
	p->cache_lines = 16384;
	p->tlb_entries = 2048;
	p->llc_lines = 0;
	p->list_neighbours = 1;	/* a list edit's real neighbours (vtime.h) */
	p->remote_miss_ps = 20653;	/* miss_ps x 1.16 (pagelab-xfer) */
	p->handoff_ps = 73450;
	p->xfer_ps[VT_SAME_CORE] = 56990;
	p->xfer_ps[VT_SAME_SOCKET] = 56990;
	p->xfer_ps[VT_OTHER_SOCKET] = 56990;
	/* host: END */
	/*
	 * VT_P_PCP_DRAIN and VT_P_PCP_REFILL stay 0 here: the timed fit has no
	 * column for them, so their time is inside the fitted per-path costs.
	 */
}

void pl_vt_params_costs(struct pl_vt_params *p, unsigned int set)
{
	if (!p && pl_arg_refused(__func__, "NULL argument"))
		return;
	memset(p, 0, sizeof(*p));
	if (set >= NR_PL_VT_COSTS) {
		pl_warn_ratelimited("vtime: no cost set %u (the anchors' used)", set);
		set = PL_VT_COSTS_ANCHORS;
	}
	if (set == PL_VT_COSTS_HOST)
		costs_host(p);
	else
		costs_anchors(p);
	{
		const char *env = getenv("PAGELAB_VT_PARAMS");

		if (env && pl_vt_params_override(p, env))
			pl_warn_ratelimited("PAGELAB_VT_PARAMS: bad entry in '%s' (ignored)", env);
	}
}

void pl_vt_params_default(struct pl_vt_params *p)
{
	pl_vt_params_costs(p, PL_VT_COSTS_ANCHORS);
}
