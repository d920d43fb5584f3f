/* SPDX-License-Identifier: MIT */
/*
 * compiler.h - the few compiler helpers pagelab shares with kernel style code.
 *
 * READ_ONCE/WRITE_ONCE are relaxed atomic accesses on plain fields: they
 * compile to ordinary loads and stores on x86_64 but tell TSan (and the
 * reader) that the field is read without its lock, as in the kernel.
 */
#ifndef PAGELAB_COMPILER_H
#define PAGELAB_COMPILER_H

#include <stddef.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define READ_ONCE(x)     __atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)

#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a) - 1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a) - 1)) == 0)

#define min(a, b) ((a) < (b) ? (a) : (b))
#define max(a, b) ((a) > (b) ? (a) : (b))

/*
 * PL_TLS: pagelab's own thread-locals (the entered machine and vCPU, the
 * virtual-time CPU), read on every call. The static library goes into
 * executables only (it is not position independent), so its objects use
 * the local-exec model (PAGELAB_TLS_LOCAL_EXEC, CMakeLists.txt): one
 * %fs-relative access instead of an offset load and the access. The shared
 * library and everything else use the default.
 */
#ifdef PAGELAB_TLS_LOCAL_EXEC
#define PL_TLS __attribute__((tls_model("local-exec")))
#else
#define PL_TLS
#endif

#ifndef __always_inline		/* glibc's sys/cdefs.h has it */
#define __always_inline inline __attribute__((__always_inline__))
#endif
#define __cacheline_aligned __attribute__((aligned(64)))
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define fallthrough __attribute__((__fallthrough__))

#endif /* PAGELAB_COMPILER_H */
