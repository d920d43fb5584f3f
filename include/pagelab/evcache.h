/* SPDX-License-Identifier: MIT */
/*
 * evcache.h - the decoded-stream cache: a trace's every parsed event (the
 * memory-pressure ones too, evstream.h's full mode) and its parser
 * statistics, kept on disk under a key made of the trace file's content
 * hash and size and the stream's format version, so a second replay of
 * the same trace - another design, more reps, another run - decodes the
 * binary stream instead of parsing the compressed text again.
 *
 * Invariants: an entry is used only if its header names this key and this
 * format, its header checksum holds, the file is exactly as long as the
 * header says (a size inside it is never trusted beyond the file's real
 * size) and its stream's checksum holds; anything else is a miss (the
 * caller parses the text, and may store a new entry over the bad one).
 * Entries are written to a temporary file and renamed into place, so a
 * reader never sees half an entry. After a store the directory's entries
 * are trimmed, oldest use first, to the caller's byte limit. The
 * checksums catch stale, cut and corrupted files, not a forger with write
 * access to the user's own cache directory.
 */
#ifndef PAGELAB_EVCACHE_H
#define PAGELAB_EVCACHE_H

#include <stdint.h>
#include "evstream.h"
#include "trace.h"

/* Bumped with any change to the stream's encoding, the parser's output or struct pl_trace_stats. */
#define PL_EVCACHE_VERSION	1u

/** struct pl_evcache_key - what names a trace's entry: its content's hash and size. */
struct pl_evcache_key {
	uint64_t hash[2];
	uint64_t size;
};

/**
 * pl_evcache_key() - hash the file at @path (its bytes as stored,
 * compressed or not) into @key.
 * Return: 0, or -errno (-EINVAL: not a regular file - a FIFO, a device -
 * which has no content to name and is never read here).
 */
int pl_evcache_key(const char *path, struct pl_evcache_key *key);

/**
 * pl_evcache_dir() - the cache directory: $PAGELAB_CACHE_DIR, else
 * $XDG_CACHE_HOME/pagelab/evstream, else $HOME/.cache/pagelab/evstream,
 * written into @buf of @len bytes.
 * Return: @buf, or NULL if none can be named (no HOME, or too long).
 */
const char *pl_evcache_dir(char *buf, size_t len);

/**
 * pl_evcache_load() - the entry of @key in @dir, validated (see the
 * invariants above), as a finished full-mode stream, and its parser
 * statistics into *@stats. A hit marks the entry as just used.
 * Return: the stream (pl_evstream_destroy() it), or NULL on a miss or an
 * invalid entry (*@why then says which, for a log line; "" for a plain miss).
 */
struct pl_evstream *pl_evcache_load(const char *dir, const struct pl_evcache_key *key,
				    struct pl_trace_stats *stats, const char **why);

/**
 * pl_evcache_store() - store finished full-mode stream @s and @stats as
 * the entry of @key in @dir (created if missing), then remove the entries
 * used longest ago until those left take at most @max_bytes. An entry
 * larger than @max_bytes alone is not written at all.
 * Return: 0, or -errno (nothing half-written is left behind).
 */
int pl_evcache_store(const char *dir, const struct pl_evcache_key *key,
		     const struct pl_evstream *s, const struct pl_trace_stats *stats,
		     uint64_t max_bytes);

#endif /* PAGELAB_EVCACHE_H */
