/* SPDX-License-Identifier: MIT */
/*
 * vtime_cache.h - the virtual-time model's per-vCPU cache (vtime.h,
 * @cache_lines): an exact LRU of the last K distinct lines a vCPU touched.
 *
 * Exact (a hash index over a doubly linked recency list, no sets, no
 * address bits choosing a slot) so that what hits and what misses depends
 * only on the sequence of lines touched, never on where the host placed a
 * structure; the hash only finds a line, it never decides an outcome.
 */
#ifndef PAGELAB_BASE_VTIME_CACHE_H
#define PAGELAB_BASE_VTIME_CACHE_H

#include <stdbool.h>
#include <stdint.h>

struct pl_vt_cache;

/** pl_vt_cache_create() - an empty cache of @lines lines (1..2^24), or NULL. */
struct pl_vt_cache *pl_vt_cache_create(uint64_t lines);
void pl_vt_cache_destroy(struct pl_vt_cache *c);
/**
 * pl_vt_cache_touch() - touch @line (an address >> 6): it becomes the most
 * recent line, evicting the least recent one when the cache is full.
 * Return: true if @line or the line before it was in the cache before the
 * touch (a hit, the second by next-line prefetch), false for a miss.
 */
bool pl_vt_cache_touch(struct pl_vt_cache *c, uintptr_t line);
/** pl_vt_cache_has() - whether @line itself is in the cache (nothing changes). */
bool pl_vt_cache_has(const struct pl_vt_cache *c, uintptr_t line);

#endif /* PAGELAB_BASE_VTIME_CACHE_H */
