// SPDX-License-Identifier: MIT
/*
 * range_drmmm.c - the range workload (bench/suites/range_workload.h) over drm_mm
 * (drivers/gpu/drm/drm_mm.c from Debian's linux-source-6.12, built by
 * scripts/build-peers.sh with the shims in bench/peers/drm_shim). Each area
 * carries its drm_mm_node, as a vmap_area would; allocation is
 * drm_mm_insert_node_in_range(..., DRM_MM_INSERT_LOW) with drm_mm's own
 * alignment handling, free is drm_mm_remove_node().
 */
#include <linux/slab.h>
#include <drm/drm_mm.h>

struct rw_area {
	unsigned long start, size;
	struct drm_mm_node node;
};

static struct drm_mm rw_mm;
static unsigned long rw_lo, rw_hi;

static void *rw_init(unsigned long start, unsigned long end)
{
	drm_mm_init(&rw_mm, start, end - start + 1);
	rw_lo = start;
	rw_hi = end;
	return &rw_mm;
}

static int rw_alloc(void *be, struct rw_area *a, unsigned long size, unsigned long align)
{
	memset(&a->node, 0, sizeof(a->node));
	if (drm_mm_insert_node_in_range(be, &a->node, size, align == 1 ? 0 : align, 0, rw_lo,
					rw_hi + 1, DRM_MM_INSERT_LOW))
		return -1;
	a->start = a->node.start;
	return 0;
}

static void rw_free(void *be, struct rw_area *a)
{
	(void)be;
	drm_mm_remove_node(&a->node);
}

static void rw_fini(void *be)
{
	drm_mm_takedown(be);
}

#include "range_workload.h"

RW_PEER_MAIN("linux-6.12 drm_mm")
