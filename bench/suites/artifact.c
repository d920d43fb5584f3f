// SPDX-License-Identifier: MIT
/*
 * artifact.c - the trace argument of `pagelab-bench replay`, read as
 * untrusted input (artifact.h): the manifest through pl_read_input() (a
 * regular file, capped), its values checked before any is used.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "artifact.h"
#include "pagelab/pagelab.h"

static bool is_dir(const char *p)
{
	struct stat sb;

	return !stat(p, &sb) && S_ISDIR(sb.st_mode);
}

/* The value of "key" in a flat JSON object: a string or a number, as text. */
static bool json_get(const char *json, const char *key, char *out, size_t len)
{
	char pat[128];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(json, pat);
	if (!p)
		return false;
	p += strlen(pat);
	while (*p == ' ' || *p == ':' || *p == '\t' || *p == '\n')
		p++;
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < len; p++)
			out[n++] = *p;
	} else {
		for (; *p && (*p == '-' || *p == '.' || (*p >= '0' && *p <= '9')) && n + 1 < len; p++)
			out[n++] = *p;
	}
	out[n] = '\0';
	return n > 0;
}

/* @v made fit for a one-line message: control bytes become '?'. */
static const char *printable(char *v)
{
	for (char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return v;
}

/* A manifest number: all digits, no wrap, at most @max. */
static bool manifest_ulong(const char *json, const char *key, unsigned long max,
			   unsigned long *out, char *why, size_t whylen)
{
	char val[64], *end;
	unsigned long v;

	if (!json_get(json, key, val, sizeof(val)))
		return true;	/* absent: the default */
	errno = 0;
	v = strtoul(val, &end, 10);
	if (val[0] < '0' || val[0] > '9' || *end || errno || v > max) {
		snprintf(why, whylen, "manifest.json: %s %.40s is not in 0..%lu", key, printable(val),
			 max);
		return false;
	}
	*out = v;
	return true;
}

/* A file the manifest names: inside the artifact (no absolute path, no ".."). */
static bool manifest_path(const char *json, const char *key, const char *def, const char *dir,
			  char *out, size_t len, char *why, size_t whylen)
{
	char val[512];
	const char *v = json_get(json, key, val, sizeof(val)) ? val : def;

	for (const char *c = v; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f) {
			snprintf(why, whylen, "manifest.json: %s \"%.60s\" has a control character",
				 key, printable(val));
			return false;
		}
	if (v[0] == '/' || !strcmp(v, "..") || !strncmp(v, "../", 3) || strstr(v, "/../") ||
	    (strlen(v) >= 3 && !strcmp(v + strlen(v) - 3, "/.."))) {
		snprintf(why, whylen, "manifest.json: %s \"%.60s\" is outside the artifact", key,
			 v == val ? printable(val) : v);
		return false;
	}
	snprintf(out, len, "%s/%s", dir, v);
	return true;
}

int artifact_read(const char *path, struct artifact *a, char *why, size_t whylen)
{
	char mpath[4096], *json;
	bool ok;

	memset(a, 0, sizeof(*a));
	if (!is_dir(path)) {
		snprintf(a->trace, sizeof(a->trace), "%s", path);
		return 0;
	}
	snprintf(mpath, sizeof(mpath), "%s/manifest.json", path);
	json = pl_read_input(mpath, ARTIFACT_MANIFEST_MAX, NULL);	/* a regular file, capped */
	if (!json) {
		snprintf(why, whylen, "no readable manifest.json (%s)",
			 errno == EFBIG ? "over 1 MiB" : pl_file_strerror(errno));
		return -1;
	}
	a->has_manifest = true;
	ok = !artifact_parse_manifest(path, json, a, why, whylen);
	free(json);
	if (!ok)
		return -1;
	a->has_before = is_dir(a->before);
	a->has_after = is_dir(a->after);
	return 0;
}

int artifact_parse_manifest(const char *dir, const char *json, struct artifact *a, char *why,
			    size_t whylen)
{
	unsigned long nr_cpus = 0;
	bool ok;

	ok = manifest_path(json, "trace", "trace.txt", dir, a->trace, sizeof(a->trace), why, whylen) &&
	     manifest_path(json, "before", "before", dir, a->before, sizeof(a->before), why, whylen) &&
	     manifest_path(json, "after", "after", dir, a->after, sizeof(a->after), why, whylen) &&
	     manifest_ulong(json, "nr_cpus", PL_MAX_VCPUS, &nr_cpus, why, whylen) &&
	     manifest_ulong(json, "mem_bytes", 1UL << 52, &a->mem_bytes, why, whylen) &&
	     manifest_ulong(json, "lost_events", LONG_MAX, &a->lost_events, why, whylen);
	if (!ok)
		return -1;
	a->nr_cpus = (unsigned int)nr_cpus;
	return 0;
}

