// SPDX-License-Identifier: MIT
/*
 * warn.c - rate-limited warnings and the vm event names.
 *
 * Like the kernel's printk_ratelimited(): at most RATELIMIT_BURST messages
 * per RATELIMIT_INTERVAL are printed, the rest are counted as suppressed and
 * the count is reported when printing resumes. A warning given while quiet
 * (pl_warn_set_quiet(): the caller reports it its own way) is recorded and
 * spends none of the burst, so a front end that runs the same work quietly
 * several times (replay's tick probes) still prints the next run's warnings.
 * All state is protected by warn_lock (a pthread mutex: warnings are a slow
 * path).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "pagelab/base.h"

#define RATELIMIT_INTERVAL_NS (5ull * 1000000000ull)
#define RATELIMIT_BURST 10

const char *const pl_vm_event_names[NR_PL_VM_EVENTS] = {
#define PL_EV_NAME(name, desc) #name,
	PL_VM_EVENTS(PL_EV_NAME)
#undef PL_EV_NAME
};

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	uint64_t begin;
	unsigned int printed;
	unsigned long missed;
	unsigned long total;	/* every warning, printed or not */
	bool quiet;
	char last[256];
} ws;

void pl_warn_ratelimited(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	uint64_t now = pl_now_ns();

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	pthread_mutex_lock(&warn_lock);
	ws.total++;
	memcpy(ws.last, msg, sizeof(msg));
	if (now - ws.begin >= RATELIMIT_INTERVAL_NS) {
		if (ws.missed && !ws.quiet)
			fprintf(stderr, "pagelab: %lu warnings suppressed\n", ws.missed);
		ws.begin = now;
		ws.printed = 0;
		ws.missed = 0;
	}
	/* a quiet warning (recorded, not printed) spends none of the burst */
	if (ws.quiet) {
		/* counted in total and kept as the last one, no more */
	} else if (ws.printed < RATELIMIT_BURST) {
		ws.printed++;
		fprintf(stderr, "pagelab: %s\n", msg);
	} else {
		ws.missed++;
	}
	pthread_mutex_unlock(&warn_lock);
}

unsigned long pl_warn_count(void)
{
	unsigned long n;

	pthread_mutex_lock(&warn_lock);
	n = ws.total;
	pthread_mutex_unlock(&warn_lock);
	return n;
}

void pl_warn_last(char *buf, size_t len)
{
	pthread_mutex_lock(&warn_lock);
	snprintf(buf, len, "%s", ws.last);
	pthread_mutex_unlock(&warn_lock);
}

void pl_warn_set_quiet(bool quiet)
{
	pthread_mutex_lock(&warn_lock);
	ws.quiet = quiet;
	pthread_mutex_unlock(&warn_lock);
}

static unsigned long warn_on_total;

/* PL_WARN_ON*() fired (base.h): @what names the check and, for a page, the page. */
void pl_warn_on_fail(const char *file, int line, const char *func, const char *what)
{
	__atomic_add_fetch(&warn_on_total, 1, __ATOMIC_RELAXED);
	pl_warn_ratelimited("WARNING: %s:%d %s(): %s", file, line, func, what);
}

unsigned long pl_warn_on_count(void)
{
	return __atomic_load_n(&warn_on_total, __ATOMIC_RELAXED);
}

void pl_set_err(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;

	if (!err || !errsize)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
}
