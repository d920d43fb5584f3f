/* SPDX-License-Identifier: MIT */
/* pagelab shim for building drm_mm.c in userspace. */
#pragma once
#define cond_resched() do { } while (0)
