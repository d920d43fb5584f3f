/* SPDX-License-Identifier: MIT */
/*
 * pagelab shim for building drm_mm.c (Debian's linux-source-6.12) in
 * userspace against the kernel's tools/include: included before everything.
 */
#pragma once
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/types.h>
#include <linux/kernel.h>
#include <linux/bits.h>
#include <linux/log2.h>
#include <linux/err.h>
#include <linux/bug.h>
#include <linux/math64.h>
#include <linux/align.h>
#ifndef WARN
#define WARN(c, ...) ({ int __c = !!(c); if (__c) fprintf(stderr, __VA_ARGS__); __c; })
#endif
#ifndef WARN_ON
#define WARN_ON(c) ({ int __c = !!(c); __c; })
#endif
#ifndef IS_ALIGNED
#define IS_ALIGNED(x, a) (((x) & ((typeof(x))(a) - 1)) == 0)
#endif
#define range_overflows(start, size, max) ((start) >= (max) || (size) > (max) - (start))
#define pr_info(...) printf(__VA_ARGS__)
#define kmemleak_update_trace(p) do { } while (0)
#define EXPORT_SYMBOL(s)
#define EXPORT_SYMBOL_GPL(s)
