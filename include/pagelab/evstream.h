/* SPDX-License-Identifier: MIT */
/*
 * evstream.h - a parsed trace as a compact binary event stream: decoded once
 * from the text (pl_trace_next()), then read back as often as a replay needs
 * it (the kernel-side pass writes it; every design x tick probe replays from
 * it) at a small fraction of a text parse's cost.
 *
 * The stream lives in a file (an unlinked temporary one by default), so
 * the memory it takes is its two fixed buffers whatever the trace's length.
 * A reader reads with pread() at its own offset: readers in forked
 * processes share the file without sharing a position.
 *
 * Encoding, per event: a tag byte (the type in the low 4 bits, kworker and
 * kswapd in bits 4 and 5), a 16-bit mask of the fields that are not zero,
 * then each such field as a LEB128 varint (signed fields zigzag, the
 * timestamp and line as deltas from the previous event's). Decoding gives
 * back exactly the struct pl_trace_event the parser gave. A full-mode
 * stream marks a memory-pressure event with a tag bit and adds its type,
 * a mask of its non-zero pressure fields and those fields.
 */
#ifndef PAGELAB_EVSTREAM_H
#define PAGELAB_EVSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "trace.h"

struct pl_evstream;
struct pl_evstream_reader;

/**
 * pl_evstream_create() - an empty stream in a temporary file of @dir
 * (NULL: $TMPDIR, else /tmp), unlinked at once so it goes with the process.
 * Return: the stream, or NULL with errno set.
 */
struct pl_evstream *pl_evstream_create(const char *dir);

/**
 * pl_evstream_create_full() - pl_evstream_create() of a full-mode stream:
 * the memory-pressure events too, with their own fields and the task's pid
 * (a plain stream keeps only what a replay follows). For the decoded-stream
 * cache (evcache.h), which replaces the text parse of the kernel's side.
 */
struct pl_evstream *pl_evstream_create_full(const char *dir);

/**
 * pl_evstream_adopt() - a finished full-mode stream of @events events
 * already in @fd: @bytes bytes from offset @base (the caller has checked
 * that the file holds them). @fd is the stream's from then on.
 * Return: the stream, or NULL (ENOMEM; @fd is then still the caller's).
 */
struct pl_evstream *pl_evstream_adopt(int fd, uint64_t base, uint64_t bytes,
				      unsigned long events);

/**
 * pl_evstream_pread() - up to @len bytes of finished stream @s's encoding
 * from @off (its first byte is 0) into @buf.
 * Return: the bytes read (0 at the end), or -errno (-EIO: the file is
 * shorter than the stream).
 */
ssize_t pl_evstream_pread(const struct pl_evstream *s, void *buf, size_t len, uint64_t off);

/**
 * pl_evstream_append() - encode @ev at the end of @s.
 * Return: 0, or -errno on a write error (then the stream is unusable).
 */
int pl_evstream_append(struct pl_evstream *s, const struct pl_trace_event *ev);

/**
 * pl_evstream_finish() - flush what is buffered; no append after it.
 * Return: 0, or -errno.
 */
int pl_evstream_finish(struct pl_evstream *s);

/** pl_evstream_events() - events appended. */
unsigned long pl_evstream_events(const struct pl_evstream *s);

/** pl_evstream_bytes() - the encoded size. */
uint64_t pl_evstream_bytes(const struct pl_evstream *s);

/** pl_evstream_destroy() - close and free @s (NULL is fine). */
void pl_evstream_destroy(struct pl_evstream *s);

/**
 * pl_evstream_open() - a reader from the start of finished stream @s (which
 * must outlive it).
 * Return: the reader, or NULL (ENOMEM, EINVAL if @s is not finished).
 */
struct pl_evstream_reader *pl_evstream_open(const struct pl_evstream *s);

/**
 * pl_evstream_next() - the next event into *@ev.
 * Return: 1, 0 at the end, -EIO on a read error or a corrupt stream.
 */
int pl_evstream_next(struct pl_evstream_reader *r, struct pl_trace_event *ev);

/** pl_evstream_close() - free @r (NULL is fine). */
void pl_evstream_close(struct pl_evstream_reader *r);

#endif /* PAGELAB_EVSTREAM_H */
