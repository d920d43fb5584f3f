/* SPDX-License-Identifier: MIT */
/*
 * trace_fixtures.h - where the trace tests find their fixtures: real 6.18
 * captures and a /proc snapshot under tests/fixtures/traces (or
 * $PAGELAB_FIXTURES/traces, as CTest sets it).
 */
#ifndef PAGELAB_TEST_TRACE_FIXTURES_H
#define PAGELAB_TEST_TRACE_FIXTURES_H

#include <stdio.h>
#include <stdlib.h>

/* The path of fixture @name (a static buffer: use it before the next call). */
static inline char *fixture_path(const char *name)
{
	static char path[4096];
	const char *dir = getenv("PAGELAB_FIXTURES");

	snprintf(path, sizeof(path), "%s/traces/%s", dir ? dir : "tests/fixtures", name);
	return path;
}

#endif
