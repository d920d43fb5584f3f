/* SPDX-License-Identifier: MIT */
/* pagelab shim for building drm_mm.c in userspace. */
#pragma once
#include <limits.h>
#include <stdint.h>
#ifndef U64_MAX
#define U64_MAX UINT64_MAX
#endif
#ifndef S64_MAX
#define S64_MAX INT64_MAX
#endif
