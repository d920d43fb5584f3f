// SPDX-License-Identifier: MIT
/*
 * kmaple_slab.c - a slab-like home for the kernel maple tree peer's nodes
 * (linked into range_kmaple by scripts/build-peers.sh with
 * -Wl,--wrap=posix_memalign,--wrap=free).
 *
 * tools/testing/shared's kmem_cache keeps no free list for caches with an
 * alignment: every maple node (256 bytes, 256-aligned) is a posix_memalign()
 * and every free a free(), about a fifth of the peer's time in glibc malloc.
 * In the kernel the maple_node cache is a slab with per-CPU lists, and
 * pagelab's own nodes come from a per-thread array (src/lib/maple_alloc.c).
 * To compare the trees and not the allocators, 256-byte 256-aligned requests
 * are served here from a free list, refilled from one reserved region;
 * everything else goes to glibc. free() of a pointer in the region puts it
 * back on the list.
 * Thread-safe under one mutex (the peer is single-threaded; so is the shim's
 * own list).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

#define KS_OBJ		256
#define KS_REGION	(4UL << 30)	/* reserved, not committed: 16M nodes at most */

int __real_posix_memalign(void **p, size_t align, size_t size);
void __real_free(void *p);
int __wrap_posix_memalign(void **p, size_t align, size_t size);
void __wrap_free(void *p);

struct ks_free {
	struct ks_free *next;
};

static pthread_mutex_t ks_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ks_free *ks_list;		/* protected by ks_lock */
static char *ks_base, *ks_bump;		/* protected by ks_lock; ks_base set once */

int __wrap_posix_memalign(void **p, size_t align, size_t size)
{
	struct ks_free *f;

	if (align != KS_OBJ || size != KS_OBJ)
		return __real_posix_memalign(p, align, size);
	pthread_mutex_lock(&ks_lock);
	if (!ks_base) {
		void *r = mmap(NULL, KS_REGION, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (r == MAP_FAILED) {
			pthread_mutex_unlock(&ks_lock);
			return __real_posix_memalign(p, align, size);
		}
		ks_base = ks_bump = r;
	}
	f = ks_list;
	if (f) {
		ks_list = f->next;
	} else if (ks_bump + KS_OBJ <= ks_base + KS_REGION) {
		f = (struct ks_free *)ks_bump;
		ks_bump += KS_OBJ;
	}
	pthread_mutex_unlock(&ks_lock);
	if (!f)
		return __real_posix_memalign(p, align, size);
	*p = f;
	return 0;
}

void __wrap_free(void *p)
{
	struct ks_free *f = p;

	if ((char *)p >= ks_base && (char *)p < ks_base + KS_REGION && ks_base) {
		pthread_mutex_lock(&ks_lock);
		f->next = ks_list;
		ks_list = f;
		pthread_mutex_unlock(&ks_lock);
		return;
	}
	__real_free(p);
}
