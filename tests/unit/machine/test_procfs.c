// SPDX-License-Identifier: MIT
/*
 * test_procfs.c - /proc/vmstat and /proc/lock_stat in the kernel's formats:
 * exact text for counters whose values the test knows, vmstat's names in
 * a real 6.18's order (its compaction and migration lines too), the
 * kernel's column layout and time format for lock_stat, and bad arguments
 * refused with one warning and nothing changed. The NUL and size-query
 * contract is test_show_buffers.c's, which covers both reports too.
 */
#include <pthread.h>
#include <stdio.h>
#include "helpers.h"
#include "trace_fixtures.h"
#include "pagelab/compaction.h"

static char buf[1 << 16];

static struct pl_machine *machine(bool lock_stat, bool boot_reserve, unsigned int cpus)
{
	struct pl_config cfg;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 1;
	cfg.lock_stat = lock_stat;
	cfg.boot_reserve = boot_reserve;
	cfg.nr_cpus = cpus;
	return test_machine_config(&cfg, "v6.18");
}

static unsigned long managed(struct pl_machine *m)
{
	unsigned long n = 0;
	struct zone *zone;

	for_each_zone(zone, m)
		n += zone->managed_pages;
	return n;
}

static void expect_vmstat(struct pl_machine *m, unsigned long dma32, unsigned long normal,
			  unsigned long pgfree)
{
	char want[512];
	long free = 0, blocks = 0;
	struct zone *zone;

	for_each_zone(zone, m) {
		free += zone_page_state(zone, NR_FREE_PAGES);
		blocks += zone_page_state(zone, NR_FREE_PAGES_BLOCKS);
	}
	snprintf(want, sizeof(want),
		 "nr_free_pages %ld\nnr_free_pages_blocks %ld\npgalloc_dma 0\n"
		 "pgalloc_dma32 %lu\npgalloc_normal %lu\npgfree %lu\n"
		 "pgmigrate_success 0\npgmigrate_fail 0\ncompact_migrate_scanned 0\n"
		 "compact_free_scanned 0\ncompact_isolated 0\ncompact_stall 0\ncompact_fail 0\n"
		 "compact_success 0\ncompact_daemon_wake 0\ncompact_daemon_migrate_scanned 0\n"
		 "compact_daemon_free_scanned 0\n",
		 free, blocks, dma32, normal, pgfree);
	assert_int_equal(pl_show_vmstat(m, buf, sizeof(buf)), (long)strlen(want));
	assert_string_equal(buf, want);
}

/* pgalloc_* in pages by zone where rmqueue and the bulk allocator count; pgfree in pages. */
static void test_vmstat_counts(void **state)
{
	struct pl_machine *m = machine(false, false, 1);
	unsigned long boot = managed(m);
	struct page *p[3], *d, *bulk[5] = { NULL };
	struct page *range;

	(void)state;
	/* a fresh machine: boot freed every managed page (memblock_free_all) */
	assert_int_equal(m->boot_freed_pages, boot);
	expect_vmstat(m, 0, 0, boot);
	for (int i = 0; i < 3; i++)
		assert_non_null(p[i] = alloc_pages(GFP_KERNEL, 0));
	assert_non_null(d = alloc_pages(GFP_KERNEL | __GFP_DMA32, 2));
	expect_vmstat(m, 4, 3, boot);
	assert_int_equal(alloc_pages_bulk(GFP_KERNEL, 5, bulk), 5);
	expect_vmstat(m, 4, 8, boot);
	assert_int_equal(__free_pages(d, 2), 0);
	assert_int_equal(__free_page(p[0]), 0);
	expect_vmstat(m, 4, 8, boot + 5);
	/* alloc_contig_range() is not in pgalloc_* (isolation, not rmqueue); its free is */
	assert_non_null(range = alloc_contig_pages(16, GFP_KERNEL));
	expect_vmstat(m, 4, 8, boot + 5);
	assert_true(free_contig_range(page_to_pfn(range), 16) == 0);
	expect_vmstat(m, 4, 8, boot + 21);
	for (int i = 1; i < 3; i++)
		__free_page(p[i]);
	for (int i = 0; i < 5; i++)
		__free_page(bulk[i]);
	expect_vmstat(m, 4, 8, boot + 28);
	test_machine_done(m);
}

/* With the boot reserve modelled, the memmap memblock allocated is printed where the kernel puts it. */
static void test_vmstat_memmap_boot_pages(void **state)
{
	struct pl_machine *m = machine(false, true, 1);
	char want[128];
	const char *a, *b, *c;

	(void)state;
	assert_true(pl_show_vmstat(m, buf, sizeof(buf)) > 0);
	/* 64 bytes of struct page per page of the one present 128 MiB section */
	assert_int_equal(m->boot_reserved[PL_RESERVE_MEMMAP], (128 * MiB / 4096) * 64 / 4096);
	snprintf(want, sizeof(want), "\nnr_memmap_boot_pages %lu\n",
		 m->boot_reserved[PL_RESERVE_MEMMAP]);
	a = strstr(buf, "\nnr_free_pages_blocks ");
	b = strstr(buf, want);
	c = strstr(buf, "\npgalloc_dma ");
	assert_true(a && b && c && a < b && b < c);
	assert_non_null(strstr(buf, "\npgfree "));
	test_machine_done(m);
}

/* A holder that lets every movable page move (slot i's page has private i + 1). */
static struct page **held;

static int hold_isolate(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)order;
	return page->private ? 0 : -1;
}

static void hold_migrate(void *ctx, struct page *src, struct page *dst, unsigned int order)
{
	(void)ctx;
	(void)order;
	held[src->private - 1] = dst;
	dst->private = src->private;
}

static void hold_putback(void *ctx, struct page *page, unsigned int order)
{
	(void)ctx;
	(void)page;
	(void)order;
}

/*
 * The migration and compaction lines: pagelab's counters after a
 * compaction, and every name pagelab prints in the order a real 6.18's
 * /proc/vmstat (the fixture snapshot's) prints it.
 */
static void test_vmstat_compaction_lines(void **state)
{
	static const struct pl_migrate_ops ops = { hold_isolate, hold_migrate, hold_putback };
	struct pl_machine *m = machine(false, false, 1);
	unsigned long ev[NR_PL_VM_EVENTS], n = 0, val;
	char name[64], line[256], *p;
	struct page *page;
	size_t at = 0;
	FILE *f;

	(void)state;
	held = calloc(m->max_pfn, sizeof(*held));
	while ((page = alloc_pages(GFP_KERNEL | __GFP_MOVABLE | __GFP_NOWARN, 0)) != NULL) {
		held[n] = page;
		page->private = ++n;
	}
	for (unsigned long i = 0; i < n; i += 2) {
		held[i]->private = 0;
		__free_pages(held[i], 0);
		held[i] = NULL;
	}
	drain_all_pages(NULL);
	assert_int_equal(pl_set_migrate_ops(m, &ops, NULL), 0);
	assert_int_equal(pl_compact_zone(m, ZONE_NORMAL, -1, true), PL_COMPACT_COMPLETE);
	pl_events_sum(m, ev);
	assert_true(ev[PL_EV_PGMIGRATE_SUCCESS] > 0);
	assert_true(pl_show_vmstat(m, buf, sizeof(buf)) > 0);
	assert_non_null(p = strstr(buf, "\npgmigrate_success "));
	assert_int_equal(strtoul(p + strlen("\npgmigrate_success "), NULL, 10),
			 ev[PL_EV_PGMIGRATE_SUCCESS]);
	assert_non_null(p = strstr(buf, "\ncompact_migrate_scanned "));
	assert_int_equal(strtoul(p + strlen("\ncompact_migrate_scanned "), NULL, 10),
			 ev[PL_EV_COMPACT_MIGRATE_SCANNED]);
	assert_non_null(p = strstr(buf, "\ncompact_isolated "));
	assert_int_equal(strtoul(p + strlen("\ncompact_isolated "), NULL, 10),
			 ev[PL_EV_COMPACT_ISOLATED]);
	assert_non_null(strstr(buf, "\ncompact_stall 0\n"));	/* no direct compaction ran */
	/* each of pagelab's names appears in the real file, later than the one before */
	assert_non_null(f = fopen(strcat(fixture_path("snapshot-6.18"), "/vmstat"), "r"));
	for (p = buf; sscanf(p, "%63s %lu", name, &val) == 2; p = strchr(p, '\n') + 1) {
		bool found = false;

		while (!found && fgets(line, sizeof(line), f)) {
			size_t len = strlen(name);

			found = !strncmp(line, name, len) && line[len] == ' ';
		}
		assert_true(found);
		at++;
	}
	assert_int_equal(at, 17);
	fclose(f);
	pl_set_migrate_ops(m, NULL, NULL);
	for (unsigned long i = 0; i < n; i++)
		if (held[i]) {
			held[i]->private = 0;
			__free_pages(held[i], 0);
		}
	free(held);
	test_machine_done(m);
}

/* The kernel's layout and rounding, on classes with chosen numbers. */
static void test_lock_stat_format(void **state)
{
	struct pl_lock_class_stat cls[3] = {
		{ .name = "&pcp->lock", .st = { .acquisitions = 100, .hold_ns = 123456,
						.hold_min_ns = 4, .hold_max_ns = 9995,
						.acq_bounces = 7 } },
		{ .name = "&zone->lock", .st = { .acquisitions = 50, .contentions = 3,
						 .con_bounces = 2, .wait_ns = 3004,
						 .wait_min_ns = 1235, .wait_max_ns = 999995,
						 .hold_ns = 1000000, .hold_min_ns = 10,
						 .hold_max_ns = 20000, .acq_bounces = 1 } },
		{ .name = "unused_lock" },
	};
	struct pl_seq s = { .buf = buf, .size = sizeof(buf) };
	char rule[222], dots[222], want[4096];
	long n;

	(void)state;
	memset(rule, '-', 221);
	rule[221] = '\0';
	memset(dots, '.', 221);
	dots[221] = '\0';
	pl_lock_stat_print(&s, cls, 3);
	n = pl_seq_finish(&s);
	snprintf(want, sizeof(want),
		 "lock_stat version 0.4\n%s\n"
		 "%40s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s %14s\n%s\n\n"
		 /* most contended first: zone->lock, then its (absent) points' dotted rule */
		 "%40s:%14d %14d %14s %14s %14s %14s %14d %14d %14s %14s %14s %14s\n\n%s\n\n"
		 "%40s:%14d %14d %14s %14s %14s %14s %14d %14d %14s %14s %14s %14s\n",
		 rule, "class name", "con-bounces", "contentions", "waittime-min", "waittime-max",
		 "waittime-total", "waittime-avg", "acq-bounces", "acquisitions", "holdtime-min",
		 "holdtime-max", "holdtime-total", "holdtime-avg", rule,
		 "&zone->lock", 2, 3, "1.24", "1000.00", "3.00", "1.00", 1, 50, "0.01", "20.00",
		 "1000.00", "20.00", dots,
		 "&pcp->lock", 0, 0, "0.00", "0.00", "0.00", "0.00", 7, 100, "0.00", "10.00",
		 "123.46", "1.23");
	assert_string_equal(buf, want);
	assert_int_equal(n, (long)strlen(want));
}

static unsigned long long field(const char *line, int col)
{
	const char *p = strchr(line, ':') + 1;
	char *end;
	unsigned long long v = 0;

	for (int i = 0; i <= col; i++) {
		v = strtoull(p, &end, 10);
		p = end;
		if (*p == '.')
			strtoull(p + 1, &end, 10), p = end;
	}
	return v;
}

/* A live machine: one line per class, acquisitions and bounces as the locks counted them. */
static void test_lock_stat_machine(void **state)
{
	struct pl_machine *m = machine(true, false, 2);
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	unsigned long long acq = 0, bounces = 0;
	struct pl_lock_stat before, after;
	const char *zl, *pl;
	struct page *p;
	struct zone *zone;

	(void)state;
	assert_non_null(p = alloc_pages(GFP_KERNEL, 3));
	assert_int_equal(__free_pages(p, 3), 0);
	spin_lock(&normal->lock);	/* on vCPU 0: the lock's last CPU from now on */
	spin_unlock(&normal->lock);
	pl_lock_stat_read(&normal->lock, &before);
	pl_leave();
	assert_int_equal(pl_enter(m, 1), 0);
	spin_lock(&normal->lock);	/* a bounce: last taken on vCPU 0 */
	spin_unlock(&normal->lock);
	spin_lock(&normal->lock);	/* none: last taken here */
	spin_unlock(&normal->lock);
	pl_leave();
	assert_int_equal(pl_enter(m, 0), 0);
	assert_true(spin_trylock(&normal->lock));	/* a trylock is no bounce (no lock_acquired()) */
	spin_unlock(&normal->lock);
	spin_lock(&normal->lock);	/* a bounce: last spin_lock()ed on vCPU 1 */
	spin_unlock(&normal->lock);
	pl_lock_stat_read(&normal->lock, &after);
	assert_int_equal(after.acq_bounces - before.acq_bounces, 2);
	assert_int_equal(after.acquisitions - before.acquisitions, 4);
	assert_true(after.hold_min_ns <= after.hold_max_ns);
	for_each_populated_zone(zone, m) {
		struct pl_lock_stat z;

		pl_lock_stat_read(&zone->lock, &z);
		acq += z.acquisitions;
		bounces += z.acq_bounces;
	}
	assert_true(pl_show_lock_stat(m, buf, sizeof(buf)) > 0);
	assert_true(!strncmp(buf, "lock_stat version 0.4\n", 22));
	zl = strstr(buf, "                             &zone->lock:");
	pl = strstr(buf, "                              &pcp->lock:");
	assert_non_null(zl);
	assert_non_null(pl);
	assert_int_equal(field(zl, 0), 0);		/* con-bounces: no contention here */
	assert_int_equal(field(zl, 1), 0);		/* contentions */
	assert_int_equal(field(zl, 6), bounces);	/* acq-bounces */
	assert_int_equal(field(zl, 7), acq);		/* acquisitions */
	assert_true(field(pl, 7) > 0);
	/* classes in use only: vmalloc's locks appear once vmalloc ran */
	assert_null(strstr(buf, "free_vmap_area_lock:"));
	{
		void *v = vmalloc(3 * 4096);

		assert_non_null(v);
		vfree(v);
	}
	assert_true(pl_show_lock_stat(m, buf, sizeof(buf)) > 0);
	assert_non_null(strstr(buf, "                     free_vmap_area_lock:"));
	test_machine_done(m);
}

struct hammer {
	struct pl_machine *m;
	unsigned int cpu;
};

static void *hammer_fn(void *arg)
{
	struct hammer *h = arg;
	struct zone *normal = &h->m->node_zones[ZONE_NORMAL];

	assert_int_equal(pl_enter(h->m, h->cpu), 0);
	for (int i = 0; i < 20000; i++) {
		spin_lock(&normal->lock);
		spin_unlock(&normal->lock);
	}
	pl_leave();
	return NULL;
}

/* Real threads on two vCPUs: the numbers stay consistent whatever the interleaving. */
static void test_lock_stat_threads(void **state)
{
	struct pl_machine *m = machine(true, false, 2);
	struct zone *normal = &m->node_zones[ZONE_NORMAL];
	struct hammer h[2] = { { m, 0 }, { m, 1 } };
	struct pl_lock_stat before, after;
	pthread_t t[2];

	(void)state;
	pl_leave();
	pl_lock_stat_read(&normal->lock, &before);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, hammer_fn, &h[i]), 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pl_lock_stat_read(&normal->lock, &after);
	assert_int_equal(after.acquisitions - before.acquisitions, 40000);
	assert_true(after.acq_bounces - before.acq_bounces >= 1);
	assert_true(after.acq_bounces <= after.acquisitions);
	assert_true(after.con_bounces <= after.contentions);
	assert_true(after.wait_min_ns <= after.wait_max_ns);
	assert_true(after.hold_min_ns <= after.hold_max_ns);
	assert_true(after.contentions == 0 || after.wait_max_ns <= after.wait_ns);
	assert_true(pl_show_lock_stat(m, buf, sizeof(buf)) > 0);
	assert_int_equal(pl_enter(m, 0), 0);
	test_machine_done(m);
}

static void test_bad_arguments(void **state)
{
	struct pl_machine *m = machine(false, false, 1);
	static struct snapshot before;
	unsigned long warns;

	(void)state;
	pl_warn_set_quiet(true);
	take_snapshot(m, &before);
	memset(buf, 'X', 64);
	warns = pl_warn_count();
	assert_int_equal(pl_show_vmstat(NULL, buf, 64), -EINVAL);
	assert_int_equal(pl_show_vmstat(m, NULL, 64), -EINVAL);
	assert_int_equal(pl_show_vmstat_file(m, NULL), -EINVAL);
	assert_int_equal(pl_show_vmstat_file(NULL, stdout), -EINVAL);
	assert_int_equal(pl_show_lock_stat(NULL, buf, 64), -EINVAL);
	assert_int_equal(pl_show_lock_stat(m, NULL, 64), -EINVAL);
	assert_int_equal(pl_show_lock_stat_file(m, NULL), -EINVAL);
	/* no lock_stat on this machine: no report, as without CONFIG_LOCK_STAT */
	assert_int_equal(pl_show_lock_stat(m, buf, 64), -ENOENT);
	assert_int_equal(pl_show_lock_stat(m, NULL, 0), -ENOENT);
	assert_int_equal(pl_warn_count() - warns, 9);
	for (int i = 0; i < 64; i++)
		assert_int_equal(buf[i], 'X');
	assert_unchanged(m, &before);
	pl_warn_set_quiet(false);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vmstat_counts),
		cmocka_unit_test(test_vmstat_memmap_boot_pages),
		cmocka_unit_test(test_vmstat_compaction_lines),
		cmocka_unit_test(test_lock_stat_format),
		cmocka_unit_test(test_lock_stat_machine),
		cmocka_unit_test(test_lock_stat_threads),
		cmocka_unit_test(test_bad_arguments),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
