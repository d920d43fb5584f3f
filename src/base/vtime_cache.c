// SPDX-License-Identifier: MIT
/*
 * vtime_cache.c - the per-vCPU LRU of the virtual-time cache model (see
 * vtime_cache.h).
 *
 * Layout: @node[0..used) hold the cached lines; a recency list threads them
 * from @head (most recent) to @tail (least recent) through prev/next; each
 * hash bucket chains its nodes through hnext. Indices, not pointers, with
 * NIL ending a chain. Invariants: used <= cap; every node in use is on the
 * recency list once and in exactly the bucket of its tag; tags are unique.
 */
#include <stdlib.h>
#include "vtime_cache.h"

#define NIL UINT32_MAX

struct vt_cache_node {
	uintptr_t tag;
	uint32_t prev, next, hnext;
};

struct pl_vt_cache {
	uint32_t cap, used, head, tail, mask;
	uint32_t *bucket;
	struct vt_cache_node *node;
};

static uint32_t vt_hash(const struct pl_vt_cache *c, uintptr_t tag)
{
	return (uint32_t)((tag * 0x9e3779b97f4a7c15ULL) >> 32) & c->mask;
}

struct pl_vt_cache *pl_vt_cache_create(uint64_t lines)
{
	struct pl_vt_cache *c;
	uint32_t nb = 1;

	if (!lines || lines > (1u << 24))
		return NULL;
	while (nb < 2 * lines)
		nb <<= 1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->cap = (uint32_t)lines;
	c->head = c->tail = NIL;
	c->mask = nb - 1;
	c->bucket = malloc(sizeof(*c->bucket) * nb);
	c->node = malloc(sizeof(*c->node) * lines);
	if (!c->bucket || !c->node) {
		pl_vt_cache_destroy(c);
		return NULL;
	}
	for (uint32_t i = 0; i < nb; i++)
		c->bucket[i] = NIL;
	return c;
}

void pl_vt_cache_destroy(struct pl_vt_cache *c)
{
	if (!c)
		return;
	free(c->bucket);
	free(c->node);
	free(c);
}

static uint32_t vt_find(const struct pl_vt_cache *c, uintptr_t tag)
{
	uint32_t i = c->bucket[vt_hash(c, tag)];

	while (i != NIL && c->node[i].tag != tag)
		i = c->node[i].hnext;
	return i;
}

static void vt_unlink(struct pl_vt_cache *c, uint32_t i)
{
	struct vt_cache_node *n = &c->node[i];

	if (n->prev != NIL)
		c->node[n->prev].next = n->next;
	else
		c->head = n->next;
	if (n->next != NIL)
		c->node[n->next].prev = n->prev;
	else
		c->tail = n->prev;
}

static void vt_push_front(struct pl_vt_cache *c, uint32_t i)
{
	c->node[i].prev = NIL;
	c->node[i].next = c->head;
	if (c->head != NIL)
		c->node[c->head].prev = i;
	c->head = i;
	if (c->tail == NIL)
		c->tail = i;
}

/* Take node @i out of its bucket's chain. */
static void vt_unhash(struct pl_vt_cache *c, uint32_t i)
{
	uint32_t *p = &c->bucket[vt_hash(c, c->node[i].tag)];

	while (*p != i)
		p = &c->node[*p].hnext;
	*p = c->node[i].hnext;
}

bool pl_vt_cache_touch(struct pl_vt_cache *c, uintptr_t line)
{
	uint32_t i = vt_find(c, line), h;
	bool hit;

	if (i != NIL) {
		vt_unlink(c, i);
		vt_push_front(c, i);
		return true;
	}
	hit = vt_find(c, line - 1) != NIL;	/* next-line prefetch */
	if (c->used < c->cap) {
		i = c->used++;
	} else {
		i = c->tail;
		vt_unlink(c, i);
		vt_unhash(c, i);
	}
	h = vt_hash(c, line);
	c->node[i].tag = line;
	c->node[i].hnext = c->bucket[h];
	c->bucket[h] = i;
	vt_push_front(c, i);
	return hit;
}

bool pl_vt_cache_has(const struct pl_vt_cache *c, uintptr_t line)
{
	return vt_find(c, line) != NIL;
}
