/* SPDX-License-Identifier: MIT */
/*
 * pagelab.h - the public API of libpagelab: the Linux page allocator as a
 * userspace library. Include this one header.
 *
 * Link line: `pkg-config --cflags --libs pagelab` (shared: -lpagelab;
 * static: add --static for -lurcu-common -lurcu -lz -lzstd -llzma
 * -pthread), or in CMake find_package(pagelab) and
 * target_link_libraries(app pagelab::pagelab).
 * By hand: cc app.c -lpagelab -lurcu-common -lurcu -lz -lzstd -llzma -pthread.
 */
#ifndef PAGELAB_H
#define PAGELAB_H

#include "base.h"
#include "list.h"
#include "config.h"
#include "mm_types.h"
#include "mm.h"
#include "compaction.h"
#include "fault_inject.h"
#include "vmalloc.h"
#include "machine.h"
#include "percpu.h"
#include "kvfree_rcu.h"
#include "metric.h"

#define PAGELAB_VERSION "0.10.0"

/** pl_version() - the library's version, e.g. "0.10.0" (PAGELAB_VERSION of the build). */
const char *pl_version(void);

/**
 * pl_git_commit() - the git commit the library was built from: 12 hex
 * digits, "-dirty" appended when tracked files had changes, or "unknown".
 */
const char *pl_git_commit(void);

#endif /* PAGELAB_H */
