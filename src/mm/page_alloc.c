// SPDX-License-Identifier: MIT
/*
 * page_alloc.c - the buddy allocator, after the kernel's mm/page_alloc.c
 * (v6.18): free lists per order and migratetype, merging on free, expand()
 * on allocation, the migratetype fallback table with claim and steal,
 * watermarks and lowmem reserves, and the out-of-line parts of the
 * free_pages_prepare() checks (the inline test is in internal.h).
 *
 * Locking: every free list, nr_free, mt_nr_free, vm_stat and pageblock
 * migratetype change happens under zone->lock. nr_free, mt_nr_free and
 * vm_stat are also read without it (watermark checks, pagetypeinfo with
 * mt_counts), through READ_ONCE.
 *
 * Invariants kept here (and checked by debug.c):
 *  - a block on free_area[o].free_list[mt]: head PageBuddy, private == o,
 *    pfn aligned to 2^o, inside its zone, pageblock migratetype mt;
 *  - with mt_counts, mt_nr_free[mt] == length of free_list[mt].
 *
 * The per-CPU page lists (pcp.c) sit in front: rmqueue() tries them first
 * for pcp_allowed_order() blocks, and __free_frozen_pages() hands such
 * blocks to them. The public entry points (alloc_pages(), __free_pages(),
 * get_page()/put_page() ...) and their argument checks are in
 * page_alloc_api.c, above this file.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include "page_alloc_hot.h"
#include "validate.h"

/* The kernel's table: only the three PCP types fall back, in this order. */
static const int fallbacks[MIGRATE_PCPTYPES][MIGRATE_PCPTYPES - 1] = {
	[MIGRATE_UNMOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_MOVABLE },
	[MIGRATE_MOVABLE] = { MIGRATE_RECLAIMABLE, MIGRATE_UNMOVABLE },
	[MIGRATE_RECLAIMABLE] = { MIGRATE_UNMOVABLE, MIGRATE_MOVABLE },
};

static inline bool design_mt_counts(const struct zone *zone)
{
	return zone->machine->config.design.mt_counts;
}

/* ---- pageblock migratetype ------------------------------------------------ */

int get_pfnblock_migratetype(const struct page *page, unsigned long pfn)
{
	const struct zone *zone = page_zone(page);

	return pb_flags_to_mt(READ_ONCE(zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)]));
}

int get_pageblock_migratetype(const struct page *page)
{
	if (!pl_this.machine || !page || !pl_page_in_machine(pl_this.machine, page))
		return pl_bad_arg(__func__, "page %p is not a page of the entered machine",
				  (const void *)page);
	return get_pfnblock_migratetype(page, page_to_pfn(page));
}

/*
 * Set the pageblock's migratetype; MIGRATE_ISOLATE sets the isolate bit on
 * top of the real type, as 6.17+ does. With mt_counts_blocks (pagelab's own
 * extension, not seed 002) the per-type pageblock counts follow, so the
 * "Number of blocks type" report needs no walk.
 * Context: zone->lock.
 */
static void set_pfnblock_flags(struct zone *zone, unsigned long pfn, unsigned int flags)
{
	unsigned char *pb = &zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)];
	int old_mt = pb_flags_to_mt(*pb), new_mt = pb_flags_to_mt(flags);

	WRITE_ONCE(*pb, (unsigned char)flags);
	if (zone->machine->config.design.mt_counts_blocks && old_mt != new_mt) {
		WRITE_ONCE(zone->nr_pageblocks_mt[old_mt], zone->nr_pageblocks_mt[old_mt] - 1);
		WRITE_ONCE(zone->nr_pageblocks_mt[new_mt], zone->nr_pageblocks_mt[new_mt] + 1);
	}
}

void set_pageblock_migratetype(struct page *page, int migratetype)
{
	struct zone *zone = page_zone(page);
	unsigned long pfn = page_to_pfn(page);
	unsigned int flags;

	/* set_pfnblock_flags_mask()'s VM_BUG_ON_PAGE(!zone_spans_pfn()) */
	if (PL_WARN_ON_PAGE(zone->vm_debug, !zone_spans_pfn(zone, pfn) ||
			    (unsigned int)migratetype >= MIGRATE_TYPES, page,
			    "a pageblock's type is set in its own zone, to a migratetype"))
		return;
	flags = zone->pageblock_flags[pfn_to_pageblock_idx(zone, pfn)];
	if (migratetype == MIGRATE_ISOLATE)
		flags |= PB_migrate_isolate;
	else	/* the compaction skip bit is a bit of its own, as the kernel's PB_compact_skip */
		flags = (flags & PB_migrate_skip) | (unsigned int)migratetype;
	set_pfnblock_flags(zone, pfn, flags);
}

void change_pageblock_range(struct page *page, unsigned int order, int migratetype)
{
	unsigned long nr = 1UL << (order - pageblock_order);

	while (nr--) {
		set_pageblock_migratetype(page, migratetype);
		page += pageblock_nr_pages;
	}
}

/* ---- free lists --------------------------------------------------------- */

static inline void set_buddy_order(struct page *page, unsigned int order)
{
	WRITE_ONCE(page->private, order);
	WRITE_ONCE(page->page_type, PGTY_buddy);
}

/* NR_FREE_PAGES, and nr_free_highatomic for the HIGHATOMIC lists (kernel 6.10+). */
static inline void account_freepages(struct zone *zone, long nr_pages, int migratetype)
{
	if (is_migrate_isolate(migratetype))
		return;
	__mod_zone_page_state(zone, NR_FREE_PAGES, nr_pages);
	if (migratetype == MIGRATE_HIGHATOMIC)
		WRITE_ONCE(zone->nr_free_highatomic, zone->nr_free_highatomic + (unsigned long)nr_pages);
}

static __always_inline void mt_nr_free_add_h(struct zone *zone, struct free_area *area, int mt,
					     long delta, const bool hooks)
{
	if (hooks && design_mt_counts(zone))
		WRITE_ONCE(area->mt_nr_free[mt], area->mt_nr_free[mt] + (unsigned long)delta);
}

static inline void mt_nr_free_add(struct zone *zone, struct free_area *area, int mt, long delta)
{
	if (design_mt_counts(zone))
		WRITE_ONCE(area->mt_nr_free[mt], area->mt_nr_free[mt] + (unsigned long)delta);
}

/*
 * Virtual time: a free-list edit writes the list head's line (in struct
 * free_area, with nr_free), the block's struct page and a neighbour on the
 * list. With the model's list_neighbours on (vtime.h), the neighbours the
 * list operation really writes: list_add() the first block (head->next),
 * list_add_tail() the last (head->prev), list_del() the block's own prev
 * and next, which for a block deep in a long list are struct pages
 * anywhere in the zone, so a random free's merges pay for those lines.
 * Off, the head's first block stands for all of them (see vtime.h why
 * the anchors' cost set keeps that).
 */
static inline void vt_touch_free_list_add(struct page *page, struct list_head *head, bool tail)
{
	if (unlikely(pl_vt_cur)) {
		struct list_head *next = tail && pl_vt_cur->vt->p.list_neighbours ? head->prev :
										    head->next;

		__pl_vt_touch(head, true);
		__pl_vt_touch(page, true);
		if (next != head)
			__pl_vt_touch(next, true);
	}
}

static inline void vt_touch_free_list_del(struct page *page, struct list_head *head)
{
	if (unlikely(pl_vt_cur)) {
		__pl_vt_touch(head, true);
		__pl_vt_touch(page, true);
		if (!pl_vt_cur->vt->p.list_neighbours) {
			if (head->next != head)
				__pl_vt_touch(head->next, true);
			return;
		}
		if (page->buddy_list.prev != head)
			__pl_vt_touch(page->buddy_list.prev, true);
		if (page->buddy_list.next != head)
			__pl_vt_touch(page->buddy_list.next, true);
	}
}

/*
 * The free-list operations and the merge and split loops take @hooks as a
 * constant: __free_one_page() and page_del_and_expand() read
 * pl_hooks_off() once per call and run a body with the hooks these loops
 * have (the PL_WARN_ON*() checks of vm_debug, virtual time's touches and
 * events, seed 002's per-migratetype counts), each testing itself, or one
 * without any of them (compiled out), so that the loops cost the same as
 * without the hooks when none is on.
 */
static __always_inline void add_to_free_list_dbg(struct page *page, struct zone *zone,
						 unsigned int order, int migratetype, bool tail,
						 const bool hooks)
{
	struct free_area *area = &zone->free_area[order];
	const bool dbg = hooks && zone->vm_debug;

	/* the kernel's VM_WARN_ONCE() on the type; expand()'s bad_range() check */
	PL_WARN_ON_PAGE(dbg, get_pfnblock_migratetype(page, page_to_pfn(page)) != migratetype ||
			!zone_spans_pfn(zone, page_to_pfn(page)), page,
			"a block goes on its pageblock's migratetype's list, in its zone");
	if (hooks)
		vt_touch_free_list_add(page, &area->free_list[migratetype], tail);
	if (tail)
		list_add_tail(&page->buddy_list, &area->free_list[migratetype]);
	else
		list_add(&page->buddy_list, &area->free_list[migratetype]);
	WRITE_ONCE(area->nr_free, area->nr_free + 1);
	mt_nr_free_add_h(zone, area, migratetype, 1, hooks);
	if (order >= pageblock_order && !is_migrate_isolate(migratetype))
		__mod_zone_page_state(zone, NR_FREE_PAGES_BLOCKS, 1L << order);
}

/* Move a free block between lists when its pageblock changes type. */
inline void move_to_free_list(struct page *page, struct zone *zone, unsigned int order,
				     int old_mt, int new_mt)
{
	struct free_area *area = &zone->free_area[order];
	long nr_pages = 1L << order;

	/* the caller has changed the pageblock's type to @new_mt already */
	PL_WARN_ON_PAGE(zone->vm_debug, !PageBuddy(page) || buddy_order(page) != order, page,
			"a block moved between free lists is a free head of its order");
	list_move_tail(&page->buddy_list, &area->free_list[new_mt]);
	mt_nr_free_add(zone, area, old_mt, -1);
	mt_nr_free_add(zone, area, new_mt, 1);
	account_freepages(zone, -nr_pages, old_mt);
	account_freepages(zone, nr_pages, new_mt);
	if (order >= pageblock_order && is_migrate_isolate(old_mt) != is_migrate_isolate(new_mt))
		__mod_zone_page_state(zone, NR_FREE_PAGES_BLOCKS,
				      is_migrate_isolate(new_mt) ? -nr_pages : nr_pages);
}

static __always_inline void del_page_from_free_list_dbg(struct page *page, struct zone *zone,
							unsigned int order, int migratetype,
							const bool hooks)
{
	struct free_area *area = &zone->free_area[order];
	const bool dbg = hooks && zone->vm_debug;

	/* the kernel's VM_WARN_ONCE() on the type, and __ClearPageBuddy()'s check */
	PL_WARN_ON_PAGE(dbg, get_pfnblock_migratetype(page, page_to_pfn(page)) != migratetype,
			page, "a block leaves its pageblock's migratetype's list");
	PL_WARN_ON_PAGE(dbg, !PageBuddy(page) || buddy_order(page) != order, page,
			"a block taken off a free list is a free head of that list's order");
	if (hooks)
		vt_touch_free_list_del(page, &area->free_list[migratetype]);
	list_del(&page->buddy_list);
	WRITE_ONCE(page->page_type, 0);
	WRITE_ONCE(page->private, 0);
	WRITE_ONCE(area->nr_free, area->nr_free - 1);
	mt_nr_free_add_h(zone, area, migratetype, -1, hooks);
	if (order >= pageblock_order && !is_migrate_isolate(migratetype))
		__mod_zone_page_state(zone, NR_FREE_PAGES_BLOCKS, -(1L << order));
}

static inline void __del_page_from_free_list(struct page *page, struct zone *zone,
					     unsigned int order, int migratetype)
{
	del_page_from_free_list_dbg(page, zone, order, migratetype, true);
}

void del_page_from_free_list(struct page *page, struct zone *zone, unsigned int order,
			     int migratetype)
{
	__del_page_from_free_list(page, zone, order, migratetype);
	account_freepages(zone, -(1L << order), migratetype);
}

/*
 * Seed 002 patch 3: with per-migratetype counts the emptiness test reads a
 * counter instead of the list head, so it is safe without zone->lock.
 */
/* The allocator's own calls: @mt is one of its loop variables. */
static inline bool __free_area_empty(const struct zone *zone, const struct free_area *area,
				     int mt)
{
	if (design_mt_counts(zone))
		return READ_ONCE(area->mt_nr_free[mt]) == 0;
	return list_empty(&area->free_list[mt]);
}

bool free_area_empty(const struct zone *zone, const struct free_area *area, int mt)
{
	if (pl_check_ptr(__func__, zone, "zone") || pl_check_ptr(__func__, area, "area"))
		return true;
	if ((unsigned int)mt >= MIGRATE_TYPES) {
		pl_bad_arg(__func__, "migratetype %d out of range", mt);
		return true;
	}
	if (area < zone->free_area || area >= zone->free_area + NR_PAGE_ORDERS) {
		pl_bad_arg(__func__, "area %p is not one of the zone's", (const void *)area);
		return true;
	}
	return __free_area_empty(zone, area, mt);
}

/* ---- freeing -------------------------------------------------------------- */

static inline bool page_is_buddy(const struct page *page, const struct page *buddy,
				 unsigned int order)
{
	return PageBuddy(buddy) && buddy_order(buddy) == order &&
	       page_zonenum(buddy) == page_zonenum(page);
}

static inline struct page *find_buddy_page_pfn(struct page *page, unsigned long pfn,
					       unsigned int order, unsigned long *buddy_pfn)
{
	unsigned long __buddy_pfn = pfn ^ (1UL << order);
	struct page *buddy = page + ((long)__buddy_pfn - (long)pfn);

	if (buddy_pfn)
		*buddy_pfn = __buddy_pfn;
	return page_is_buddy(page, buddy, order) ? buddy : NULL;
}

/*
 * If the block one order up is about to merge (its buddy is free), put the
 * freed block at the tail so it is less likely to be allocated first.
 */
static inline bool buddy_merge_likely(unsigned long pfn, unsigned long buddy_pfn,
				      struct page *page, unsigned int order)
{
	unsigned long higher_page_pfn;
	struct page *higher_page;

	if (order >= MAX_PAGE_ORDER - 1)
		return false;
	higher_page_pfn = buddy_pfn & pfn;
	higher_page = page + ((long)higher_page_pfn - (long)pfn);
	return find_buddy_page_pfn(higher_page, higher_page_pfn, order + 1, NULL) != NULL;
}

/**
 * __free_one_page() - put a block on the free lists, merging with free buddies.
 * @page: head of the block; @pfn: its pfn; @zone: its zone.
 * @order: the block's order; @migratetype: its pageblock's type.
 * @fpi_flags: FPI_TO_TAIL to queue at the tail.
 * Context: zone->lock.
 */
/*
 * The merge loop, with compaction_capture() compiled in only for the call
 * made while a direct compactor of this zone runs (@capc non-NULL, a
 * constant in each caller): the loop without one costs what it did.
 */
static __always_inline void
free_one_page_merge(struct page *page, unsigned long pfn, struct zone *zone, unsigned int order,
		    int migratetype, fpi_t fpi_flags, struct capture_control *capc, const bool hooks)
{
	const bool dbg = hooks && zone->vm_debug;
	unsigned long buddy_pfn = 0, combined_pfn, merges = 0;
	struct page *buddy;
	bool to_tail;

	if (hooks)
		pl_vt_path(VT_P_FREE_ONE);
	PL_WARN_ON(dbg, (unsigned int)migratetype >= MIGRATE_TYPES);
	PL_WARN_ON_PAGE(dbg, pfn & ((1UL << order) - 1), page,
			"a freed block starts at a pfn aligned to its order");
	PL_WARN_ON_PAGE(dbg, !zone_spans_pfn(zone, pfn) || PageBuddy(page), page,
			"a freed block lies in its zone and is not on a free list already");
	account_freepages(zone, 1L << order, migratetype);

	while (order < MAX_PAGE_ORDER) {
		int buddy_mt = migratetype;

		/* a direct compactor of this zone takes the block it wanted as it forms */
		if (capc && compaction_capture(capc, page, order, migratetype)) {
			account_freepages(zone, -(1L << order), migratetype);
			pl_count_only(PL_EV_BUDDY_MERGE, merges);
			return;
		}

		buddy = find_buddy_page_pfn(page, pfn, order, &buddy_pfn);
		if (!buddy)
			break;
		if (unlikely(order >= pageblock_order)) {
			/*
			 * The buddy is in another pageblock: merge only if
			 * neither side is a non-mergeable type (isolate,
			 * highatomic) unless both are the same.
			 */
			buddy_mt = get_pfnblock_migratetype(buddy, buddy_pfn);
			if (migratetype != buddy_mt &&
			    (!migratetype_is_mergeable(migratetype) ||
			     !migratetype_is_mergeable(buddy_mt)))
				break;
		}
		del_page_from_free_list_dbg(buddy, zone, order, buddy_mt, hooks);
		if (unlikely(buddy_mt != migratetype))
			set_pageblock_migratetype(buddy, migratetype);
		if (hooks)
			pl_count_vt(PL_EV_BUDDY_MERGE, 1);
		merges++;
		combined_pfn = buddy_pfn & pfn;
		page = page + ((long)combined_pfn - (long)pfn);
		pfn = combined_pfn;
		order++;
	}

	pl_count_only(PL_EV_BUDDY_MERGE, merges);
	set_buddy_order(page, order);
	if (fpi_flags & FPI_TO_TAIL)
		to_tail = true;
	else
		to_tail = buddy_merge_likely(pfn, buddy_pfn, page, order);
	add_to_free_list_dbg(page, zone, order, migratetype, to_tail, hooks);
}

static __attribute__((noinline)) void free_one_page_capture(struct page *page, unsigned long pfn,
							    struct zone *zone, unsigned int order,
							    int migratetype, fpi_t fpi_flags,
							    struct capture_control *capc)
{
	free_one_page_merge(page, pfn, zone, order, migratetype, fpi_flags, capc, true);
}

/*
 * Out of line: inlined into its callers, its capture branch made the PCP
 * free path save more registers on every call (+14 instructions a free).
 */
__attribute__((noinline)) void __free_one_page(struct page *page, unsigned long pfn,
					       struct zone *zone, unsigned int order,
					       int migratetype, fpi_t fpi_flags)
{
	/* a direct compactor runs (task_capc() says whether of this zone, on this thread) */
	if (unlikely(READ_ONCE(zone->machine->compact_capturing))) {
		struct capture_control *capc = task_capc(zone);

		if (capc) {
			free_one_page_capture(page, pfn, zone, order, migratetype, fpi_flags, capc);
			return;
		}
	}
	if (likely(pl_hooks_off(zone->machine)))
		free_one_page_merge(page, pfn, zone, order, migratetype, fpi_flags, NULL, false);
	else
		free_one_page_merge(page, pfn, zone, order, migratetype, fpi_flags, NULL, true);
}

/*
 * A block larger than a pageblock is freed one pageblock at a time, each
 * with its own migratetype; __free_one_page() merges them back when allowed.
 */
void split_large_buddy(struct zone *zone, struct page *page, unsigned long pfn,
		       unsigned int order, fpi_t fpi)
{
	unsigned long end = pfn + (1UL << order);

	if (order > pageblock_order)
		order = pageblock_order;
	for (;;) {
		__free_one_page(page, pfn, zone, order, get_pfnblock_migratetype(page, pfn), fpi);
		pfn += 1UL << order;
		if (pfn == end)
			break;
		page += 1UL << order;
	}
}

static __always_inline void free_one_page_h(struct zone *zone, struct page *page,
					    unsigned long pfn, unsigned int order, fpi_t fpi_flags,
					    const bool hooks)
{
	spin_lock_h(&zone->lock, hooks);
	split_large_buddy(zone, page, pfn, order, fpi_flags);
	spin_unlock_h(&zone->lock, hooks);
	pl_count_h(PL_EV_ZONE_LOCK_PAGES, 1UL << order, hooks);
	pl_count_h(PL_EV_BUDDY_DIRECT_FREE, 1, hooks);
}

void free_one_page(struct zone *zone, struct page *page, unsigned long pfn,
		   unsigned int order, fpi_t fpi_flags)
{
	free_one_page_h(zone, page, pfn, order, fpi_flags, true);
}

__attribute__((__noinline__)) void free_one_page_nohooks(struct zone *zone, struct page *page,
							 unsigned long pfn, unsigned int order,
							 fpi_t fpi_flags)
{
	free_one_page_h(zone, page, pfn, order, fpi_flags, false);
}

void bad_page(struct page *page, const char *reason)
{
	pl_count(PL_EV_BAD_PAGE, 1);
	pl_warn_ratelimited("BUG: Bad page state: pfn:%05lx refcount:%d flags:%#lx type:%#x: %s",
			    page_to_pfn(page), page_ref_count(page), page->flags & 0xffff,
			    page->page_type, reason);
}

/*
 * The kernel's free_page_is_bad_report(): the inline page_expected_state()
 * test in free_page_is_bad() failed; say which part, in its order.
 */
void free_page_is_bad_report(struct page *page)
{
	if (page_ref_count(page) != 0)
		bad_page(page, "nonzero _refcount");
	else if (PageBuddy(page))
		bad_page(page, "page is already free (PageBuddy)");
	else
		bad_page(page, "PAGE_FLAGS_CHECK_AT_FREE flag(s) set");
}

/*
 * The order > 0 part of free_pages_prepare(): a compound block's tails must
 * point at its head; they are unlinked once all of them do.
 */
bool free_pages_prepare_tails(struct page *page, unsigned int order)
{
	if (!PageHead(page))
		return true;
	for (unsigned long i = 1; i < (1UL << order); i++) {
		struct page *p = page + i;

		if (p->compound_head != ((unsigned long)page | 1)) {
			bad_page(p, "corrupted compound tail");
			return false;
		}
	}
	for (unsigned long i = 1; i < (1UL << order); i++)
		page[i].compound_head = 0;
	return true;
}

/*
 * The three variants __free_pages() picks from (page_alloc_api.c): the
 * frees of prepared chunks (seed 001's __free_contig_range(), seed 000's
 * vfree()) must not test hooks that the baseline's __free_page() of the
 * same page compiles away, or a comparison of the designs counts pagelab's
 * own overhead as theirs.
 */
void __free_frozen_pages(struct page *page, unsigned int order, fpi_t fpi_flags)
{
	const struct pl_machine *m = page_zone(page)->machine;

	if (pl_hooks_off(m))
		__free_frozen_pages_h(page, order, fpi_flags, 0);
	else if (pl_hooks_design_only(m))
		__free_frozen_pages_h(page, order, fpi_flags, PL_HV_DESIGN);
	else
		__free_frozen_pages_h(page, order, fpi_flags, PL_HV_ALL);
}

/* ---- allocation ----------------------------------------------------------- */

/*
 * expand() - split a block of order @high down to @low, queueing the upper
 * halves on @migratetype's lists. Return: pages put back on the lists.
 */
static __always_inline unsigned int expand_dbg(struct zone *zone, struct page *page,
					       unsigned int low, unsigned int high, int migratetype,
					       const bool hooks)
{
	unsigned int size = 1U << high, nr_added = 0, splits = high - low;

	while (high > low) {
		high--;
		size >>= 1;
		/* VM_BUG_ON_PAGE(bad_range(zone, &page[size]), &page[size]): in the add */
		add_to_free_list_dbg(&page[size], zone, high, migratetype, false, hooks);
		set_buddy_order(&page[size], high);
		nr_added += size;
		if (hooks)
			pl_count_vt(PL_EV_BUDDY_SPLIT, 1);
	}
	if (splits)
		pl_count_only(PL_EV_BUDDY_SPLIT, splits);
	return nr_added;
}

static unsigned int expand(struct zone *zone, struct page *page, unsigned int low,
			   unsigned int high, int migratetype)
{
	return expand_dbg(zone, page, low, high, migratetype, true);
}

static __always_inline void page_del_and_expand_dbg(struct zone *zone, struct page *page,
						    unsigned int low, unsigned int high,
						    int migratetype, const bool hooks)
{
	long nr_pages = 1L << high;

	del_page_from_free_list_dbg(page, zone, high, migratetype, hooks);
	nr_pages -= expand_dbg(zone, page, low, high, migratetype, hooks);
	account_freepages(zone, -nr_pages, migratetype);
}

static void page_del_and_expand(struct zone *zone, struct page *page, unsigned int low,
				unsigned int high, int migratetype)
{
	if (likely(pl_hooks_off(zone->machine)))
		page_del_and_expand_dbg(zone, page, low, high, migratetype, false);
	else
		page_del_and_expand_dbg(zone, page, low, high, migratetype, true);
}

struct page *__rmqueue_smallest(struct zone *zone, unsigned int order, int migratetype)
{
	for (unsigned int current_order = order; current_order < NR_PAGE_ORDERS; current_order++) {
		struct page *page = get_page_from_free_area(&zone->free_area[current_order], migratetype);

		if (!page)
			continue;
		page_del_and_expand(zone, page, order, current_order, migratetype);
		/* as the kernel: a refill is a pcp order of a pcp type */
		pl_trace(zone->machine, PL_TP_MM_PAGE_ALLOC_ZONE_LOCKED,
			 (struct pl_tp_event){
				 .pfn = page_to_pfn(page), .order = (int)order,
				 .migratetype = migratetype,
				 .percpu_refill = pcp_allowed_order(order) &&
						  migratetype < MIGRATE_PCPTYPES });
		return page;
	}
	return NULL;
}

/* Small movable requests never claim a pageblock: they would mix it. */
static bool should_try_claim_block(unsigned int order, int start_mt)
{
	if (order >= pageblock_order)
		return true;
	if (order >= pageblock_order / 2 || start_mt == MIGRATE_RECLAIMABLE ||
	    start_mt == MIGRATE_UNMOVABLE)
		return true;
	return false;
}

/* Return: the first fallback type with a free block, -1 if none, -2 to stop. */
static int find_suitable_fallback(const struct zone *zone, const struct free_area *area,
				  unsigned int order, int migratetype, bool claimable)
{
	if (claimable && !should_try_claim_block(order, migratetype))
		return -2;
	if (READ_ONCE(area->nr_free) == 0)
		return -1;
	for (int i = 0; i < MIGRATE_PCPTYPES - 1; i++) {
		int fallback_mt = fallbacks[migratetype][i];

		if (!__free_area_empty(zone, area, fallback_mt))
			return fallback_mt;
	}
	return -1;
}

/*
 * Count the free and movable pages of @page's pageblock. Return: false if
 * the pageblock is not entirely inside the zone.
 */
static bool prep_move_freepages_block(struct zone *zone, struct page *page,
				      unsigned long *start_pfn, unsigned long *num_free,
				      unsigned long *num_movable)
{
	unsigned long pfn = page_to_pfn(page);
	unsigned long start = ALIGN_DOWN(pfn, pageblock_nr_pages);
	unsigned long end = start + pageblock_nr_pages;

	if (!zone_spans_pfn(zone, start) || !zone_spans_pfn(zone, end - 1))
		return false;
	*start_pfn = start;
	*num_free = 0;
	*num_movable = 0;
	for (pfn = start; pfn < end;) {
		struct page *p = pfn_to_page(pfn);

		if (PageBuddy(p)) {
			unsigned long nr = 1UL << buddy_order(p);

			*num_free += nr;
			pfn += nr;
			continue;
		}
		/*
		 * Movable allocations stand for the kernel's LRU pages. An
		 * allocated page's flags change under its owner, not this
		 * lock: a racy read, as the kernel's PageLRU() test here.
		 */
		if (page_flags(p) & (1UL << PG_movable))
			(*num_movable)++;
		pfn++;
	}
	return true;
}

/*
 * move_freepages_block() - move the free blocks of @page's pageblock from
 * @old_mt's lists to @new_mt's and retag the pageblock (kernel 6.10+).
 * Return: pages moved, or -1 if the pageblock is not wholly in the zone.
 * Context: zone->lock.
 */
long move_freepages_block(struct zone *zone, struct page *page, int old_mt, int new_mt)
{
	unsigned long start_pfn, nr_free, nr_movable, moved;

	if (!prep_move_freepages_block(zone, page, &start_pfn, &nr_free, &nr_movable))
		return -1;
	moved = __move_freepages_block(zone, start_pfn, old_mt, new_mt);
	set_pageblock_migratetype(pfn_to_page(start_pfn), new_mt);
	return (long)moved;
}

unsigned long __move_freepages_block(struct zone *zone, unsigned long start_pfn,
				     int old_mt, int new_mt)
{
	unsigned long pfn, moved = 0;
	struct page *page;
	unsigned int order;

	for_each_buddy_in_range(page, order, pfn, start_pfn, start_pfn + pageblock_nr_pages) {
		move_to_free_list(page, zone, order, old_mt, new_mt);
		moved += 1UL << order;
	}
	return moved;
}

/*
 * try_to_claim_block() - take a whole free block of another type, or
 * convert the pageblock of a smaller one if at least half of it is free or
 * compatible. Before trying a smaller one, boost the watermark (to make
 * kswapd reclaim and compaction avoid further fallbacks) and, with
 * ALLOC_KSWAPD, flag the zone so that rmqueue() wakes kswapd.
 */
static struct page *try_to_claim_block(struct zone *zone, struct page *page,
				       unsigned int current_order, unsigned int order,
				       int start_type, int block_type, unsigned int alloc_flags)
{
	unsigned long start_pfn, free_pages, movable_pages, alike_pages;

	if (current_order >= pageblock_order) {
		unsigned int nr_added;

		del_page_from_free_list(page, zone, current_order, block_type);
		change_pageblock_range(page, current_order, start_type);
		nr_added = expand(zone, page, order, current_order, start_type);
		account_freepages(zone, nr_added, start_type);
		pl_count(PL_EV_FALLBACK_CLAIM, 1UL << (current_order - pageblock_order));
		return page;
	}

	if (boost_watermark(zone) && (alloc_flags & ALLOC_KSWAPD))
		zone_set_flag(zone, ZONE_BOOSTED_WATERMARK);
	if (!prep_move_freepages_block(zone, page, &start_pfn, &free_pages, &movable_pages))
		return NULL;
	if (start_type == MIGRATE_MOVABLE)
		alike_pages = movable_pages;
	else if (block_type == MIGRATE_MOVABLE)
		alike_pages = pageblock_nr_pages - (free_pages + movable_pages);
	else
		alike_pages = 0;

	if (free_pages + alike_pages >= (1UL << (pageblock_order - 1))) {
		__move_freepages_block(zone, start_pfn, block_type, start_type);
		set_pageblock_migratetype(pfn_to_page(start_pfn), start_type);
		pl_count(PL_EV_FALLBACK_CLAIM, 1);
		return __rmqueue_smallest(zone, order, start_type);
	}
	return NULL;
}

/*
 * The kernel's mm_page_alloc_extfrag: one per fallback, fragmenting when
 * the fallback block was smaller than a pageblock, change_ownership when
 * the page's pageblock now has the requested type.
 */
static void count_extfrag(struct zone *zone, struct page *page, unsigned int order,
			  unsigned int fallback_order, int start_mt, int fallback_mt)
{
	bool owned = get_pageblock_migratetype(page) == start_mt;

	pl_count(PL_EV_FALLBACK_EVENTS, 1);
	if (fallback_order < pageblock_order)
		pl_count(PL_EV_FALLBACK_FRAGMENTING, 1);
	if (owned)
		pl_count(PL_EV_FALLBACK_CHANGE_OWNERSHIP, 1);
	pl_trace(zone->machine, PL_TP_MM_PAGE_ALLOC_EXTFRAG,
		 (struct pl_tp_event){ .pfn = page_to_pfn(page), .order = (int)order,
				       .fallback_order = (int)fallback_order,
				       .migratetype = start_mt,
				       .fallback_migratetype = fallback_mt,
				       .change_ownership = owned });
}

static struct page *__rmqueue_claim(struct zone *zone, unsigned int order, int start_mt,
				    unsigned int alloc_flags)
{
	int min_order = (int)order;

	if (order < pageblock_order && (alloc_flags & ALLOC_NOFRAGMENT))
		min_order = pageblock_order;
	for (int current_order = MAX_PAGE_ORDER; current_order >= min_order; current_order--) {
		struct free_area *area = &zone->free_area[current_order];
		int fallback_mt = find_suitable_fallback(zone, area, (unsigned int)current_order,
							 start_mt, true);
		struct page *page;

		if (fallback_mt == -1)
			continue;
		if (fallback_mt == -2)
			break;
		page = get_page_from_free_area(area, fallback_mt);
		page = try_to_claim_block(zone, page, (unsigned int)current_order, order, start_mt,
					  fallback_mt, alloc_flags);
		if (page) {
			count_extfrag(zone, page, order, (unsigned int)current_order, start_mt,
				      fallback_mt);
			return page;
		}
	}
	return NULL;
}

/* Take a block of another type without claiming its pageblock. */
static struct page *__rmqueue_steal(struct zone *zone, unsigned int order, int start_mt)
{
	for (unsigned int current_order = order; current_order < NR_PAGE_ORDERS; current_order++) {
		struct free_area *area = &zone->free_area[current_order];
		int fallback_mt = find_suitable_fallback(zone, area, current_order, start_mt, false);
		struct page *page;

		if (fallback_mt == -1)
			continue;
		page = get_page_from_free_area(area, fallback_mt);
		page_del_and_expand(zone, page, order, current_order, fallback_mt);
		pl_count(PL_EV_FALLBACK_STEAL, 1);
		count_extfrag(zone, page, order, current_order, start_mt, fallback_mt);
		return page;
	}
	return NULL;
}

/*
 * __rmqueue() - take a block off the free lists: the preferred type, then a
 * claimed pageblock of a fallback type, then (unless ALLOC_NOFRAGMENT) a
 * stolen block. @mode remembers the last step that worked, for a batch.
 * Context: zone->lock.
 */
struct page *__rmqueue(struct zone *zone, unsigned int order, int migratetype,
		       unsigned int alloc_flags, enum rmqueue_mode *mode)
{
	struct page *page;

	pl_vt_path(VT_P_RMQUEUE);
	switch (*mode) {
	case RMQUEUE_NORMAL:
		page = __rmqueue_smallest(zone, order, migratetype);
		if (page)
			return page;
		fallthrough;
	case RMQUEUE_CLAIM:
		page = __rmqueue_claim(zone, order, migratetype, alloc_flags);
		if (page) {
			*mode = RMQUEUE_NORMAL;
			return page;
		}
		fallthrough;
	case RMQUEUE_STEAL:
		if (!(alloc_flags & ALLOC_NOFRAGMENT)) {
			page = __rmqueue_steal(zone, order, migratetype);
			if (page) {
				*mode = RMQUEUE_STEAL;
				return page;
			}
		}
	}
	return NULL;
}

/* check_new_page()'s report (internal.h), out of line. */
bool check_new_page_bad(struct page *page)
{
	bad_page(page, "bad page found on a free list");
	return true;
}

/*
 * The HIGHATOMIC reserve: high-order atomic requests (ALLOC_HIGHATOMIC) try
 * it first; when everything else failed, OOM and non-blocking requests of
 * any order may use it rather than fail.
 */
static __always_inline struct page *rmqueue_buddy_h(struct zone *zone, unsigned int order,
						    unsigned int alloc_flags, int migratetype,
						    const bool hooks)
{
	struct page *page;

	do {
		page = NULL;
		spin_lock_h(&zone->lock, hooks);
		if (alloc_flags & ALLOC_HIGHATOMIC)
			page = __rmqueue_smallest(zone, order, MIGRATE_HIGHATOMIC);
		if (!page) {
			enum rmqueue_mode rmqm = RMQUEUE_NORMAL;

			page = __rmqueue(zone, order, migratetype, alloc_flags, &rmqm);
			if (!page && (alloc_flags & (ALLOC_OOM | ALLOC_NON_BLOCK)))
				page = __rmqueue_smallest(zone, order, MIGRATE_HIGHATOMIC);
		}
		spin_unlock_h(&zone->lock, hooks);
		if (!page)
			return NULL;
		pl_count_h(PL_EV_ZONE_LOCK_PAGES, 1UL << order, hooks);
		pl_count_h(PL_EV_BUDDY_DIRECT_ALLOC, 1, hooks);
	} while (check_new_page(page));
	return page;
}

__attribute__((__noinline__)) struct page *rmqueue_buddy(struct zone *zone, unsigned int order,
							 unsigned int alloc_flags, int migratetype)
{
	return rmqueue_buddy_h(zone, order, alloc_flags, migratetype, true);
}

__attribute__((__noinline__)) struct page *rmqueue_buddy_nohooks(struct zone *zone,
								 unsigned int order,
								 unsigned int alloc_flags,
								 int migratetype)
{
	return rmqueue_buddy_h(zone, order, alloc_flags, migratetype, false);
}

static bool __zone_watermark_ok(const struct zone *z, unsigned int order, unsigned long mark,
				int highest_zoneidx, unsigned int alloc_flags, long free_pages)
{
	long min = (long)mark;

	free_pages -= __zone_watermark_unusable_free(z, order, alloc_flags);
	if (unlikely(alloc_flags & ALLOC_RESERVES)) {
		if (alloc_flags & ALLOC_MIN_RESERVE) {
			min -= min / 2;
			if (alloc_flags & ALLOC_NON_BLOCK)
				min -= min / 4;
		}
		if (alloc_flags & ALLOC_OOM)
			min -= min / 2;
	}
	if (free_pages <= min + z->lowmem_reserve[highest_zoneidx])
		return false;
	if (!order)
		return true;
	for (unsigned int o = order; o < NR_PAGE_ORDERS; o++) {
		const struct free_area *area = &z->free_area[o];

		if (!READ_ONCE(area->nr_free))
			continue;
		for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
			if (!__free_area_empty(z, area, mt))
				return true;
		if ((alloc_flags & (ALLOC_HIGHATOMIC | ALLOC_OOM)) &&
		    !free_area_empty(z, area, MIGRATE_HIGHATOMIC))
			return true;
	}
	return false;
}

/*
 * pcp_block_economy keeps most free pages on the PCPs, outside
 * NR_FREE_PAGES: when the zone's own count fails, count them too (summed
 * only then, so the common check stays one read). It takes every pcp->lock,
 * so only the allocation path, which holds none, asks: zone_watermark_ok()
 * is called under pcp->lock and keeps the zone's own count.
 */
static bool economy_watermark_ok(const struct zone *z, unsigned int order, unsigned long mark,
				 int highest_zoneidx, unsigned int alloc_flags)
{
	long free_pages = zone_page_state(z, NR_FREE_PAGES);

	if (!design_block_economy(z))
		return false;
	free_pages += (long)economy_free_pages((struct zone *)z);
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags, free_pages);
}

bool zone_watermark_ok(const struct zone *z, unsigned int order, unsigned long mark,
		       int highest_zoneidx, unsigned int alloc_flags)
{
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags,
				   zone_page_state(z, NR_FREE_PAGES));
}

bool zone_watermark_ok_safe(const struct zone *z, unsigned int order, unsigned long mark,
			    int highest_zoneidx)
{
	long free_pages = zone_page_state(z, NR_FREE_PAGES);
	unsigned long drift_mark = READ_ONCE(z->percpu_drift_mark);

	if (drift_mark && free_pages < (long)drift_mark)
		free_pages = zone_page_state_snapshot(z, NR_FREE_PAGES);
	return __zone_watermark_ok(z, order, mark, highest_zoneidx, 0, free_pages);
}

/* zone_watermark_fast()'s checks past its order-0 test, out of line. */
static __attribute__((__noinline__)) bool zone_watermark_fast_slow(const struct zone *z, unsigned int order,
					      unsigned long mark, int highest_zoneidx,
					      unsigned int alloc_flags, long free_pages)
{
	if (__zone_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags, free_pages))
		return true;
	/*
	 * __GFP_HIGH order-0 requests at the min watermark ignore the boost:
	 * min is where boosting stops, so that kswapd is woken below low.
	 */
	if (unlikely(!order && (alloc_flags & ALLOC_MIN_RESERVE) && READ_ONCE(z->watermark_boost) &&
		     (alloc_flags & ALLOC_WMARK_MASK) == WMARK_MIN))
		return __zone_watermark_ok(z, order, z->_watermark[WMARK_MIN], highest_zoneidx,
					   alloc_flags, free_pages);
	return economy_watermark_ok(z, order, mark, highest_zoneidx, alloc_flags);
}

/*
 * The kernel's zone_watermark_fast(): inline, as there, so that the usual
 * order-0 answer (plenty free) is a few loads and one compare.
 */
static __always_inline bool zone_watermark_fast(const struct zone *z, unsigned int order,
						unsigned long mark, int highest_zoneidx,
						unsigned int alloc_flags)
{
	long free_pages = zone_page_state(z, NR_FREE_PAGES);

	if (!order) {
		long reserved = __zone_watermark_unusable_free(z, 0, alloc_flags);
		long usable_free = free_pages - min(free_pages, reserved);

		if (usable_free > (long)mark + z->lowmem_reserve[highest_zoneidx])
			return true;
	}
	return zone_watermark_fast_slow(z, order, mark, highest_zoneidx, alloc_flags, free_pages);
}

/*
 * The zonelist walk: highest allowed zone first, down to DMA32, from
 * @zi_start (get_page_from_freelist() may have tried the zones above it);
 * the retry without ALLOC_NOFRAGMENT starts again from @highest_zoneidx.
 */
__attribute__((__noinline__)) struct page *
zonelist_walk(struct pl_machine *m, gfp_t gfp, unsigned int order, unsigned int alloc_flags,
	      int highest_zoneidx, int migratetype, int zi_start)
{
	bool no_fallback;
	int zi = zi_start;

retry:
	no_fallback = alloc_flags & ALLOC_NOFRAGMENT;
	for (; zi >= 0; zi--) {
		struct zone *zone = &m->node_zones[zi];
		unsigned long mark;
		struct page *page;

		if (!populated_zone(zone))
			continue;
		/*
		 * Note when the zone falls below its high watermark: the PCP
		 * free path then trims pcp->high. Checked here, off the
		 * hotter free path, as the kernel does.
		 */
		if (!zone_test_flag(zone, ZONE_BELOW_HIGH)) {
			if (zone_watermark_fast(zone, order, high_wmark_pages(zone),
						highest_zoneidx, alloc_flags))
				goto try_this_zone;
			zone_set_flag(zone, ZONE_BELOW_HIGH);
		}
		mark = wmark_pages(zone, alloc_flags & ALLOC_WMARK_MASK);
		if (!(alloc_flags & ALLOC_NO_WATERMARKS) &&
		    !zone_watermark_fast(zone, order, mark, highest_zoneidx, alloc_flags))
			continue;
try_this_zone:
		page = rmqueue_h(zone, order, alloc_flags, migratetype, true);
		if (page) {
			prep_new_page(page, order, gfp, migratetype);
			/* A high-order atomic request: keep its pageblock for the next ones. */
			if (unlikely(alloc_flags & ALLOC_HIGHATOMIC))
				reserve_highatomic_pageblock(page, order, zone);
			return page;
		}
	}
	/* Every zone is fragmented: accept mixing pageblocks rather than fail. */
	if (no_fallback) {
		alloc_flags &= ~ALLOC_NOFRAGMENT;
		zi = highest_zoneidx;
		goto retry;
	}
	return NULL;
}

struct page *get_page_from_freelist(struct pl_machine *m, gfp_t gfp, unsigned int order,
				    unsigned int alloc_flags, int highest_zoneidx, int migratetype)
{
	return get_page_from_freelist_h(m, gfp, order, alloc_flags, highest_zoneidx, migratetype,
					true);
}
