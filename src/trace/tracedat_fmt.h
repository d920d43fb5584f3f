/* SPDX-License-Identifier: MIT */
/*
 * tracedat_fmt.h - event format files (events/SYSTEM/EVENT/format and
 * events/header_page) as the trace.dat reader uses them: which pagelab
 * event an id is, where each field it reads sits in the record, and the
 * gfp_flags names of the event's print format. Private to src/trace/.
 */
#ifndef PAGELAB_TRACE_TRACEDAT_FMT_H
#define PAGELAB_TRACE_TRACEDAT_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pagelab/trace.h"

/* the fields pagelab reads, by the name their event's format gives them */
enum td_field {
	TDF_PFN, TDF_ORDER, TDF_MT, TDF_GFP, TDF_REFILL, TDF_FBORDER, TDF_FBMT, TDF_OWN,
	TDF_VA, TDF_SIZE, TDF_FAILED, TDF_NPURGED, TDF_NRLAZY, TDF_PARENT, TDF_CHILD,
	TDF_TYPE, TDF_PID, NR_TDF
};

/* what an event id is: a pl_trace_type, a fork, or an event pagelab does not read */
#define TD_KIND_FORK	NR_PL_TRACE_TYPES
#define TD_KIND_OTHER	(NR_PL_TRACE_TYPES + 1)

#define TD_GFP_CACHE	64

struct td_gfp_entry {
	uint64_t mask;
	gfp_t gfp;
};

/**
 * struct td_format - one event format.
 * @id, @kind:   the event's id and what pagelab makes of it.
 * @off, @size:  each field's offset and size in the record (@have: bit
 *               per field present).
 * @min_size:    the bytes a record needs for the fields pagelab reads.
 * @gfp_tab:     mm_page_alloc's __print_flags() table, in print order,
 *               each mask with the gfp_t its name means to pagelab.
 */
struct td_format {
	int id;
	int kind;
	char system[32], name[64];
	uint16_t off[NR_TDF];
	uint8_t size[NR_TDF];
	uint32_t have;
	uint32_t min_size;
	struct td_gfp_entry *gfp_tab;
	size_t nr_gfp;
	uint64_t cache_key[TD_GFP_CACHE];
	gfp_t cache_val[TD_GFP_CACHE];
	uint64_t cache_used;
};

/**
 * td_format_parse() - parse the format file @text (@len bytes) of an event
 * of @system into *@f. Return: 0, or -EINVAL with one line in @err: the
 * file is not a format file, or it is an event pagelab reads whose layout
 * lacks a field it needs or gives one a size pagelab cannot read.
 */
int td_format_parse(const char *text, size_t len, const char *system, struct td_format *f,
		    char *err, size_t errlen);

/** td_format_gfp() - a raw gfp_flags value as pagelab's gfp_t, as its text would read. */
gfp_t td_format_gfp(struct td_format *f, uint64_t raw);

/** td_format_release() - free what td_format_parse() allocated. */
void td_format_release(struct td_format *f);

/**
 * struct td_page_layout - events/header_page: where a ring-buffer page
 * keeps its timestamp, its commit word (data size and missed-event flags)
 * and its data.
 */
struct td_page_layout {
	uint16_t ts_off, commit_off, data_off;
	uint8_t ts_size, commit_size;
};

/** td_header_page_parse() - parse header_page. Return: 0 or -EINVAL (one line in @err). */
int td_header_page_parse(const char *text, size_t len, struct td_page_layout *l, char *err,
			 size_t errlen);

#endif /* PAGELAB_TRACE_TRACEDAT_FMT_H */
