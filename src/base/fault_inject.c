// SPDX-License-Identifier: MIT
/*
 * fault_inject.c - the decision engine behind fail_page_alloc (and, as they
 * land, the vmap_area and maple node sites): the knobs of the kernel's
 * Documentation/fault-injection, applied in the documented order:
 *
 *   0. the site's filters    order below min-order, or a call that may
 *                            sleep with ignore-gfp-wait: never fail;
 *   1. times == 0            no more failures;
 *   2. space > size          use up budget, let the call through;
 *   3. interval > 1          count eligible calls, only every interval-th
 *                            may fail;
 *   4. probability           a seeded PRNG draw in [0, 100) below it fails;
 *   then times counts down (unless -1).
 *
 * Invariants: all of a site's state except @enabled is read and written
 * under its mutex; @enabled mirrors "probability > 0 and times != 0" and is
 * written with WRITE_ONCE under the mutex, so a disabled site costs one
 * relaxed load. With a single caller, the decisions are a pure function of
 * the attributes and the call sequence.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "pagelab/fault_inject.h"

void pl_fault_attr_default(struct pl_fault_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->probability = 0;
	attr->interval = 1;
	attr->times = 1;
	attr->space = 0;
	attr->min_order = 1;
	attr->ignore_gfp_reclaim = true;
	attr->verbose = 2;
	attr->seed = 1;
}

int pl_fault_attr_valid(const struct pl_fault_attr *attr)
{
	if (!attr || attr->probability > 100 || attr->interval < 1 || attr->times < -1 ||
	    attr->space < 0 || attr->verbose < 0 || attr->verbose > 2)
		return -EINVAL;
	return 0;
}

static bool parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "y") || !strcmp(v, "1") || !strcasecmp(v, "yes") ||
	    !strcasecmp(v, "true")) {
		*out = true;
		return true;
	}
	if (!strcasecmp(v, "n") || !strcmp(v, "0") || !strcasecmp(v, "no") ||
	    !strcasecmp(v, "false")) {
		*out = false;
		return true;
	}
	return false;
}

static bool parse_long(const char *v, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(v, &end, 0);
	return *v && !*end && !errno;
}

/* One "key=value" into @a; the key with '_' already turned into '-'. */
static bool parse_one(struct pl_fault_attr *a, const char *key, const char *val)
{
	long n;

	if (!strcmp(key, "ignore-gfp-wait"))
		return parse_bool(val, &a->ignore_gfp_reclaim);
	if (!strcmp(key, "seed")) {
		char *end;

		errno = 0;
		a->seed = strtoull(val, &end, 0);
		return *val && *val != '-' && !*end && !errno;
	}
	if (!parse_long(val, &n))
		return false;
	if (!strcmp(key, "probability") && n >= 0 && n <= 100)
		a->probability = (unsigned int)n;
	else if (!strcmp(key, "interval") && n >= 1)
		a->interval = (unsigned long)n;
	else if (!strcmp(key, "times") && n >= -1)
		a->times = n;
	else if (!strcmp(key, "space") && n >= 0)
		a->space = n;
	else if (!strcmp(key, "min-order") && n >= 0 && n <= 64)
		a->min_order = (unsigned int)n;
	else if (!strcmp(key, "verbose") && n >= 0 && n <= 2)
		a->verbose = (int)n;
	else
		return false;
	return true;
}

int pl_fault_attr_parse(struct pl_fault_attr *attr, const char *spec)
{
	struct pl_fault_attr a;
	char buf[512], *save = NULL;

	if ((!attr || !spec) && pl_arg_refused(__func__, "NULL argument"))
		return -EINVAL;
	a = *attr;

	if (strlen(spec) >= sizeof(buf)) {
		pl_warn_ratelimited("fault injection: spec too long");
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (!eq) {
			pl_warn_ratelimited("fault injection: '%s' is not key=value", tok);
			return -EINVAL;
		}
		*eq = '\0';
		for (char *p = tok; *p; p++)
			if (*p == '_')
				*p = '-';
		if (!parse_one(&a, tok, eq + 1)) {
			pl_warn_ratelimited("fault injection: bad knob or value '%s=%s'", tok, eq + 1);
			return -EINVAL;
		}
	}
	*attr = a;
	return 0;
}

static void update_enabled(struct pl_fault_state *fs)
{
	WRITE_ONCE(fs->enabled, fs->attr.probability > 0 && fs->attr.times != 0);
}

void pl_fault_state_init(struct pl_fault_state *fs)
{
	memset(fs, 0, sizeof(*fs));
	pthread_mutex_init(&fs->lock, NULL);
	pl_fault_attr_default(&fs->attr);
	pl_rng_seed(&fs->rng, fs->attr.seed);
	update_enabled(fs);
}

void pl_fault_state_destroy(struct pl_fault_state *fs)
{
	pthread_mutex_destroy(&fs->lock);
}

int pl_fault_state_set(struct pl_fault_state *fs, const struct pl_fault_attr *attr)
{
	if (pl_fault_attr_valid(attr))
		return -EINVAL;
	pthread_mutex_lock(&fs->lock);
	fs->attr = *attr;
	fs->count = 0;
	memset(&fs->stats, 0, sizeof(fs->stats));
	pl_rng_seed(&fs->rng, attr->seed);
	update_enabled(fs);
	pthread_mutex_unlock(&fs->lock);
	return 0;
}

void pl_fault_state_get(struct pl_fault_state *fs, struct pl_fault_attr *attr,
			struct pl_fault_stats *stats)
{
	pthread_mutex_lock(&fs->lock);
	if (attr)
		*attr = fs->attr;
	if (stats)
		*stats = fs->stats;
	pthread_mutex_unlock(&fs->lock);
}

bool __pl_should_fail(struct pl_fault_state *fs, size_t size, unsigned int order, bool may_sleep,
		      int *verbose)
{
	struct pl_fault_attr *a = &fs->attr;
	bool fail = false;

	pthread_mutex_lock(&fs->lock);
	if ((order != PL_FAULT_NO_ORDER && order < a->min_order) ||
	    (may_sleep && a->ignore_gfp_reclaim))
		goto out;
	fs->stats.calls++;
	if (a->times == 0)
		goto out;
	if (a->space > 0 && (unsigned long)a->space > size) {
		a->space -= (long)size;
		goto out;
	}
	if (a->interval > 1 && ++fs->count % a->interval)
		goto out;
	if (pl_rng_below(&fs->rng, 100) >= a->probability)
		goto out;
	fail = true;
	fs->stats.injected++;
	if (a->times > 0)
		a->times--;
	*verbose = a->verbose;
	update_enabled(fs);
out:
	pthread_mutex_unlock(&fs->lock);
	return fail;
}
