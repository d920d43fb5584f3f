/* SPDX-License-Identifier: MIT */
/*
 * tracedat.h - the trace layer's reader of trace-cmd's binary trace.dat
 * (file versions 6 and 7), private to src/trace/: reader.c hands it a whole
 * file in memory (mapped or decompressed) when the file starts with the
 * trace.dat magic, and streams its events through pl_trace_next().
 */
#ifndef PAGELAB_TRACE_TRACEDAT_H
#define PAGELAB_TRACE_TRACEDAT_H

#include <stdbool.h>
#include <stddef.h>
#include "pagelab/trace.h"

struct pl_tracedat;

/** pl_tracedat_magic() - does @buf (@len bytes) start with trace.dat's magic? */
bool pl_tracedat_magic(const void *buf, size_t len);

/**
 * pl_tracedat_open() - check and index the trace.dat of @len bytes at @buf
 * (not copied: it must outlive the reader): header, options, event
 * formats, saved command lines and each CPU's ring-buffer data.
 * Return: the reader, or NULL with one line naming what is wrong in @err
 * (@errlen bytes) and errno set (EINVAL a bad or unsupported file,
 * ENOMEM).
 */
struct pl_tracedat *pl_tracedat_open(const unsigned char *buf, size_t len, char *err,
				     size_t errlen);

/**
 * pl_tracedat_next() - the next event in timestamp order over all CPUs
 * (ties: the lower CPU first, as `trace-cmd report` orders them). Events
 * pagelab does not read are counted in @st (unknown_event), lost-event
 * marks of the ring-buffer pages in @st->lost_events.
 * Return: 1 with *@ev filled, 0 at the end, -EIO on corrupt data (the
 * events before it stand; pl_tracedat_error() names the problem).
 */
int pl_tracedat_next(struct pl_tracedat *d, struct pl_trace_event *ev, struct pl_trace_stats *st);

/** pl_tracedat_error() - the last error's one-line description ("" if none). */
const char *pl_tracedat_error(const struct pl_tracedat *d);

/** pl_tracedat_version() - the file version (6 or 7). */
int pl_tracedat_version(const struct pl_tracedat *d);

/** pl_tracedat_close() - release the reader (NULL is fine). */
void pl_tracedat_close(struct pl_tracedat *d);

/*
 * Shared with parse.c: the gfp_flags names of the kernel's print format
 * onto pagelab's gfp_t, one "|"-separated list.
 */
gfp_t pl_trace_gfp_from_names(const char *s, const char *end);

#endif /* PAGELAB_TRACE_TRACEDAT_H */
