/* SPDX-License-Identifier: MIT */
/*
 * pagelab.h - the public API of libpagelab: the Linux page allocator as a
 * userspace library. Include this one header.
 */
#ifndef PAGELAB_H
#define PAGELAB_H

#include "base.h"
#include "list.h"
#include "mm.h"
#include "fault_inject.h"
#include "vmalloc.h"
#include "machine.h"
#include "percpu.h"
#include "kvfree_rcu.h"

#define PAGELAB_VERSION "0.1.0"

#endif /* PAGELAB_H */
