/* SPDX-License-Identifier: MIT */
/* pagelab shim for building drm_mm.c in userspace: kmalloc on top of malloc. */
#pragma once
#include <stdlib.h>
#include <string.h>
#define kmalloc(n, gfp) malloc(n)
#define kzalloc(n, gfp) calloc(1, n)
#define kcalloc(n, s, gfp) calloc(n, s)
#define kmalloc_array(n, s, gfp) malloc((n) * (s))
#define kfree(p) free(p)
