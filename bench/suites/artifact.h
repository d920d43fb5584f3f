/* SPDX-License-Identifier: MIT */
/*
 * artifact.h - a trace argument of `pagelab-bench replay`: a bare trace
 * file, or an artifact directory whose manifest.json names the trace and
 * the before/after snapshots. The manifest is untrusted: read as a regular
 * file of at most ARTIFACT_MANIFEST_MAX bytes, its paths must stay inside
 * the artifact and its numbers must fit without wrapping.
 */
#ifndef PAGELAB_BENCH_ARTIFACT_H
#define PAGELAB_BENCH_ARTIFACT_H

#include <stdbool.h>
#include <stddef.h>

/* A manifest is a few hundred bytes; this much is no manifest. */
#define ARTIFACT_MANIFEST_MAX	(1u << 20)

struct artifact {
	char trace[4096];
	char before[4096], after[4096];
	bool has_before, has_after;
	unsigned int nr_cpus;
	unsigned long mem_bytes, lost_events;
	bool has_manifest;
};

/**
 * artifact_read() - @path as a trace argument into *@a.
 * Return: 0, or -1 with the one-line reason in @why.
 */
int artifact_read(const char *path, struct artifact *a, char *why, size_t whylen);

/**
 * artifact_parse_manifest() - the manifest text @json of artifact directory
 * @dir into *@a's paths and numbers (the caller zeroes *@a).
 * Return: 0, or -1 with the one-line reason in @why.
 */
int artifact_parse_manifest(const char *dir, const char *json, struct artifact *a, char *why,
			    size_t whylen);

#endif /* PAGELAB_BENCH_ARTIFACT_H */
