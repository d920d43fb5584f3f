/* SPDX-License-Identifier: MIT */
/*
 * list.h - intrusive circular doubly linked list, with the kernel's names and
 * semantics (list_add adds at the head, list_add_tail at the tail, an empty
 * list points at itself).
 *
 * As in the kernel, every store to a ->next pointer is a WRITE_ONCE so that
 * list_empty() may be called without the list's lock (the page allocator's
 * watermark check does).
 */
#ifndef PAGELAB_LIST_H
#define PAGELAB_LIST_H

#include <stdbool.h>
#include "compiler.h"

struct list_head {
	struct list_head *next, *prev;
};

static inline void INIT_LIST_HEAD(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	list->prev = list;
}

static inline void __list_link(struct list_head *entry, struct list_head *prev,
			       struct list_head *next)
{
	next->prev = entry;
	entry->next = next;
	entry->prev = prev;
	WRITE_ONCE(prev->next, entry);
}

static inline void list_add(struct list_head *entry, struct list_head *head)
{
	__list_link(entry, head, head->next);
}

static inline void list_add_tail(struct list_head *entry, struct list_head *head)
{
	__list_link(entry, head->prev, head);
}

static inline void __list_del_entry(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	WRITE_ONCE(entry->prev->next, entry->next);
}

static inline void list_del(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->next = NULL;
	entry->prev = NULL;
}

static inline void list_move(struct list_head *entry, struct list_head *head)
{
	__list_del_entry(entry);
	list_add(entry, head);
}

static inline void list_move_tail(struct list_head *entry, struct list_head *head)
{
	__list_del_entry(entry);
	list_add_tail(entry, head);
}

static inline bool list_empty(const struct list_head *head)
{
	return READ_ONCE(head->next) == head;
}

#define list_entry(ptr, type, member) container_of(ptr, type, member)
#define list_first_entry(head, type, member) list_entry((head)->next, type, member)
#define list_last_entry(head, type, member) list_entry((head)->prev, type, member)
#define list_prev_entry(pos, member) \
	list_entry((pos)->member.prev, __typeof__(*(pos)), member)
#define list_first_entry_or_null(head, type, member) \
	(list_empty(head) ? NULL : list_first_entry(head, type, member))

#define list_for_each(pos, head) \
	for ((pos) = (head)->next; (pos) != (head); (pos) = (pos)->next)

#endif /* PAGELAB_LIST_H */
