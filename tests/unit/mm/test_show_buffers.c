// SPDX-License-Identifier: MIT
/*
 * test_show_buffers.c - the pl_show_*() contract: the buffer is always
 * NUL-terminated, so a caller's fputs() never prints an earlier report's
 * leftovers; (NULL, 0) gives the length needed and that plus one fits; a
 * buffer too small gets -ENOSPC and a terminated prefix; the FILE *
 * variants write exactly the report.
 */
#include <stdio.h>
#include "helpers.h"

typedef long (*show_fn)(struct pl_machine *, char *, size_t);
typedef long (*show_file_fn)(struct pl_machine *, FILE *);

static const struct {
	const char *name;
	show_fn show;
	show_file_fn show_file;
} reports[] = {
	{ "buddyinfo", pl_show_buddyinfo, pl_show_buddyinfo_file },
	{ "pagetypeinfo", pl_show_pagetypeinfo, pl_show_pagetypeinfo_file },
	{ "zoneinfo", pl_show_zoneinfo, pl_show_zoneinfo_file },
	{ "vmallocinfo", pl_show_vmallocinfo, pl_show_vmallocinfo_file },
	{ "vmstat", pl_show_vmstat, pl_show_vmstat_file },
	{ "lock_stat", pl_show_lock_stat, pl_show_lock_stat_file },
};

static char big[1 << 20];

/* A machine with some vmalloc areas, so vmallocinfo has lines, and lock_stat. */
static struct pl_machine *busy_machine(void **areas, int n)
{
	struct pl_config cfg;
	struct pl_machine *m;

	/* lock_stat=1: /proc/lock_stat exists only with it */
	pl_config_default(&cfg);
	cfg.mem_bytes = 64 * MiB;
	cfg.dma32_bytes = 16 * MiB;
	cfg.debug = 1;
	cfg.lock_stat = true;
	m = test_machine_config(&cfg, "v6.18");
	for (int i = 0; i < n; i++) {
		areas[i] = vmalloc((unsigned long)(i + 1) * 4096);
		assert_non_null(areas[i]);
	}
	return m;
}

static void done(struct pl_machine *m, void **areas, int n)
{
	for (int i = 0; i < n; i++)
		vfree(areas[i]);
	test_machine_done(m);
}

static void test_nul_terminated_after_longer_report(void **state)
{
	void *areas[4];
	struct pl_machine *m = busy_machine(areas, 4);

	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(reports); r++) {
		long n;

		memset(big, 'X', sizeof(big));	/* leftovers of an "earlier report" */
		n = reports[r].show(m, big, sizeof(big));
		assert_true(n > 0);
		assert_int_equal(big[n], '\0');
		assert_int_equal((long)strlen(big), n);
	}
	done(m, areas, 4);
}

static void test_measure_then_exact_fit(void **state)
{
	void *areas[4];
	struct pl_machine *m = busy_machine(areas, 4);

	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(reports); r++) {
		long need = reports[r].show(m, NULL, 0), full;
		char *buf;

		full = reports[r].show(m, big, sizeof(big));
		assert_int_equal(need, full);
		buf = malloc((size_t)need + 1);
		assert_non_null(buf);
		assert_int_equal(reports[r].show(m, buf, (size_t)need + 1), need);
		assert_memory_equal(buf, big, (size_t)need + 1);
		/* one byte less: the NUL does not fit, a terminated prefix stays */
		assert_int_equal(reports[r].show(m, buf, (size_t)need), -ENOSPC);
		assert_int_equal((long)strlen(buf), need - 1);
		assert_memory_equal(buf, big, (size_t)need - 1);
		assert_int_equal(reports[r].show(m, buf, 1), -ENOSPC);
		assert_string_equal(buf, "");
		free(buf);
	}
	done(m, areas, 4);
}

static void test_file_variants(void **state)
{
	void *areas[4];
	struct pl_machine *m = busy_machine(areas, 4);

	(void)state;
	for (size_t r = 0; r < ARRAY_SIZE(reports); r++) {
		long n = reports[r].show(m, big, sizeof(big));
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		assert_non_null(f);
		assert_int_equal(reports[r].show_file(m, f), n);
		fclose(f);
		assert_int_equal((long)len, n);
		assert_string_equal(text, big);
		free(text);
	}
	done(m, areas, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nul_terminated_after_longer_report),
		cmocka_unit_test(test_measure_then_exact_fit),
		cmocka_unit_test(test_file_variants),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
