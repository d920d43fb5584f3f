/* SPDX-License-Identifier: MIT */
/* pagelab shim for building drm_mm.c in userspace: printing to stderr. */
#pragma once
#include <stdio.h>
struct drm_printer { int d; };
#define drm_printf(p, ...) fprintf(stderr, __VA_ARGS__)
#define drm_err(d, ...) fprintf(stderr, __VA_ARGS__)
#define DRM_ERROR(...) fprintf(stderr, __VA_ARGS__)
#define DRM_DEBUG(...) do { } while (0)
