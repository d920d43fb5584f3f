/* SPDX-License-Identifier: MIT */
/*
 * gfp_types.h - gfp_t and the __GFP_* flags, as the kernel's
 * include/linux/gfp_types.h: the allocation-context bits alone, with no
 * allocator behind them, so that a data structure that takes a gfp (the
 * maple tree) can name them without including the page allocator (mm.h).
 * The bit positions of __GFP_MOVABLE and __GFP_RECLAIMABLE make
 * gfp_migratetype() (mm.h) a shift.
 */
#ifndef PAGELAB_GFP_TYPES_H
#define PAGELAB_GFP_TYPES_H

typedef unsigned int gfp_t;

#define __GFP_DMA32		0x04u
#define __GFP_MOVABLE		0x08u /* bit positions make gfp_migratetype() a shift */
#define __GFP_RECLAIMABLE	0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_ZERO		0x100u
#define __GFP_DIRECT_RECLAIM	0x400u
#define __GFP_KSWAPD_RECLAIM	0x800u
#define __GFP_NOWARN		0x2000u
#define __GFP_RETRY_MAYFAIL	0x4000u /* costly orders: reclaim and compact, then may fail */
#define __GFP_NORETRY		0x10000u /* one round of reclaim and compaction only */
#define __GFP_COMP		0x40000u
#define __GFP_HARDWALL		0x100000u
#define GFP_MOVABLE_MASK	(__GFP_MOVABLE | __GFP_RECLAIMABLE)
#define GFP_MOVABLE_SHIFT	3
#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)

#define GFP_ATOMIC		(__GFP_HIGH | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_NOWAIT		(__GFP_KSWAPD_RECLAIM | __GFP_NOWARN)
#define GFP_USER		(GFP_KERNEL | __GFP_HARDWALL)
#define GFP_HIGHUSER_MOVABLE	(GFP_USER | __GFP_MOVABLE)
#define GFP_DMA32		__GFP_DMA32
#define GFP_KERNEL_ACCOUNT	GFP_KERNEL

#endif /* PAGELAB_GFP_TYPES_H */
