/* SPDX-License-Identifier: MIT */
/* pagelab shim for building drm_mm.c in userspace: nothing needed. */
#pragma once
