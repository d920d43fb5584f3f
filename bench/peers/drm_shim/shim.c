// SPDX-License-Identifier: MIT
/* pagelab shim for building drm_mm.c in userspace: the two helpers it links to. */
#include <linux/types.h>

u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder);
void clear_bit_unlock(long nr, volatile unsigned long *addr);

u64 div64_u64_rem(u64 dividend, u64 divisor, u64 *remainder)
{
	*remainder = dividend % divisor;
	return dividend / divisor;
}

void clear_bit_unlock(long nr, volatile unsigned long *addr)
{
	__atomic_and_fetch(&addr[nr / 64], ~(1UL << (nr % 64)), __ATOMIC_RELEASE);
}
