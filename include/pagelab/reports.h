/* SPDX-License-Identifier: MIT */
/*
 * reports.h - a machine's reports in the kernel's formats: /proc/buddyinfo,
 * /proc/pagetypeinfo, /proc/zoneinfo (its page-allocator part), /proc/vmstat
 * (mm/vmstat.c), and debugfs extfrag's unusable free space index.
 *
 * Invariant: every report is byte for byte what 6.18 prints for the same
 * state, for the items pagelab keeps; an item it does not keep is left out.
 * mm.h includes this header; it may also be included on its own.
 */
#ifndef PAGELAB_REPORTS_H
#define PAGELAB_REPORTS_H

#include <stddef.h>
#include <stdio.h>
#include "mm.h"

/* struct pl_seq and pl_seq_finish(): base.h. */

/*
 * The pl_show_*() reports share one contract: the text goes into @buf and is
 * always NUL-terminated (size > 0); the return is its length without the
 * NUL, or -ENOSPC if @size was too small (a terminated prefix is left).
 * pl_show_X(m, NULL, 0) returns the length needed, so a buffer of that
 * plus one fits (unless the machine changes in between). The _file
 * variants do that and write the report to @f: they return its length,
 * -ENOMEM or -EIO.
 */

/** pl_show_buddyinfo() - /proc/buddyinfo. Return: length or -ENOSPC (see above). */
long pl_show_buddyinfo(struct pl_machine *m, char *buf, size_t size);
/**
 * pl_show_pagetypeinfo() - /proc/pagetypeinfo: the baseline walks the free
 * lists under zone->lock (capped at 100000 per list); mt_counts reads counts
 * for that section. "Number of blocks type" walks the pageblocks under
 * zone->lock unless mt_counts_blocks (pagelab's extension).
 * Return: length or -ENOSPC.
 */
long pl_show_pagetypeinfo(struct pl_machine *m, char *buf, size_t size);
/** pl_show_zoneinfo() - the page-allocator part of /proc/zoneinfo. Return: length or -ENOSPC. */
long pl_show_zoneinfo(struct pl_machine *m, char *buf, size_t size);
/**
 * pl_show_vmstat() - /proc/vmstat: "name value" lines in the kernel's order
 * (mm/vmstat.c's vmstat_text), only for the items pagelab keeps:
 * nr_free_pages, nr_free_pages_blocks, nr_memmap_boot_pages (with the boot
 * reserve modelled), pgalloc_dma, pgalloc_dma32, pgalloc_normal and pgfree
 * (boot's frees included, as __free_pages_core() counts them). Items pagelab
 * does not model are left out, not printed as 0 (docs/reference/reports.md).
 * @m:    the machine.
 * @buf:  where the text goes (NUL-terminated), or NULL with @size 0.
 * @size: bytes at @buf.
 * Context: any thread; reads the vCPUs' counters racily, as the kernel does.
 * Return: length, -ENOSPC (see above), or -EINVAL after a rate-limited
 * warning for a NULL machine or a NULL buffer with a size.
 */
long pl_show_vmstat(struct pl_machine *m, char *buf, size_t size);

/** pl_show_buddyinfo_file() - /proc/buddyinfo to @f. Return: length, -ENOMEM or -EIO. */
long pl_show_buddyinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_pagetypeinfo_file() - /proc/pagetypeinfo to @f. */
long pl_show_pagetypeinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_zoneinfo_file() - /proc/zoneinfo (page-allocator part) to @f. */
long pl_show_zoneinfo_file(struct pl_machine *m, FILE *f);
/** pl_show_vmstat_file() - /proc/vmstat to @f. Return: length, -EINVAL, -ENOMEM or -EIO. */
long pl_show_vmstat_file(struct pl_machine *m, FILE *f);

/**
 * pl_show_to_file() - run report @show into a buffer of the size it needs
 * and write it to @f. Return: the length written, -ENOMEM or -EIO.
 */
long pl_show_to_file(struct pl_machine *m, long (*show)(struct pl_machine *, char *, size_t),
		     FILE *f);

/**
 * pl_unusable_free_index() - the kernel's unusable free space index of
 * @zone for @order (debugfs extfrag/unusable_index), in thousandths: the
 * share of free memory in blocks too small for an order-@order request.
 * 1000 when nothing is free. PCP pages are not counted: drain first.
 * Context: takes zone->lock.
 */
unsigned int pl_unusable_free_index(struct zone *zone, unsigned int order);
/** pl_free_pageblocks() - pageblocks of @zone wholly free in the buddy (zone->lock). */
unsigned long pl_free_pageblocks(struct zone *zone);

#endif /* PAGELAB_REPORTS_H */
