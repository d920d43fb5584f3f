// SPDX-License-Identifier: MIT
/*
 * test_extfrag.c - debugfs extfrag/extfrag_index and extfrag/unusable_index
 * byte for byte against a real 6.18's files (tests/fixtures/extfrag-6.18:
 * buddyinfo read with them), and the fragmentation index's rules: -1000
 * when a block would serve the order, 0 with nothing free, towards 1000
 * when the free memory is all in small blocks.
 */
#include <stdio.h>
#include "helpers.h"
#include "pagelab/compaction.h"

static char *read_fixture(const char *name)
{
	const char *dir = getenv("PAGELAB_FIXTURES");
	static char buf[4][8192];
	static int next;
	char path[512], *out = buf[next++ % 4];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/extfrag-6.18/%s", dir ? dir : "tests/fixtures", name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(buf[0]) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

static struct zone *zone_named(struct pl_machine *m, const char *name)
{
	struct zone *zone;

	for_each_populated_zone(zone, m)
		if (!strcmp(zone->name, name))
			return zone;
	return NULL;
}

/*
 * Give @m's zones the nr_free counts of the real buddyinfo (the reports
 * read nothing else), print both reports and compare them with the real
 * files; then put the counts back.
 */
static void test_reports_match_kernel(void **state)
{
	struct pl_machine *m;
	struct pl_config cfg;
	unsigned long saved[MAX_NR_ZONES][NR_PAGE_ORDERS];
	char *bi = read_fixture("buddyinfo"), out[4096], *line, *save = NULL;
	struct zone *zone;
	long len;

	(void)state;
	pl_config_default(&cfg);	/* the three zones of the real machine */
	cfg.mem_bytes = 128 * MiB;
	cfg.dma_bytes = 16 * MiB;
	cfg.dma32_bytes = 64 * MiB;
	m = test_machine_config(&cfg, "v6.18");
	for_each_populated_zone(zone, m)
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			saved[zone->zone_idx][o] = zone->free_area[o].nr_free;
	for (line = strtok_r(bi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[16];
		int pos;

		assert_int_equal(sscanf(line, "Node 0, zone %15s%n", name, &pos), 1);
		zone = zone_named(m, name);
		assert_non_null(zone);
		for (int o = 0; o < NR_PAGE_ORDERS; o++) {
			int used;

			assert_int_equal(sscanf(line + pos, "%lu%n", &zone->free_area[o].nr_free, &used), 1);
			pos += used;
		}
	}
	len = pl_show_unusable_index(m, out, sizeof(out));
	assert_true(len > 0);
	assert_string_equal(out, read_fixture("unusable_index"));
	len = pl_show_extfrag_index(m, out, sizeof(out));
	assert_true(len > 0);
	assert_string_equal(out, read_fixture("extfrag_index"));
	/* the measuring call gives the length */
	assert_int_equal(pl_show_extfrag_index(m, NULL, 0), len);
	for_each_populated_zone(zone, m)
		for (int o = 0; o < NR_PAGE_ORDERS; o++)
			zone->free_area[o].nr_free = saved[zone->zone_idx][o];
	test_machine_done(m);
}

/* The index's rules on a zone whose nr_free the test sets. */
static void test_fragmentation_index_rules(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	struct zone *zone = zone_named(m, "Normal");
	unsigned long saved[NR_PAGE_ORDERS];
	char out[4096];

	(void)state;
	assert_non_null(zone);
	for (int o = 0; o < NR_PAGE_ORDERS; o++) {
		saved[o] = zone->free_area[o].nr_free;
		zone->free_area[o].nr_free = 0;
	}
	assert_int_equal(fragmentation_index(zone, 9), 0);		/* nothing free */
	assert_int_equal(unusable_free_index(zone, 9), 0);
	zone->free_area[0].nr_free = 1024;				/* 1024 single pages */
	/* 1000 - (1000 + 1024 * 1000 / 512) / 1024 = 1000 - 2 */
	assert_int_equal(fragmentation_index(zone, 9), 998);
	assert_int_equal(unusable_free_index(zone, 9), 1000);
	zone->free_area[9].nr_free = 1;					/* one order-9 block */
	assert_int_equal(fragmentation_index(zone, 9), -1000);
	/* (1536 - 512) * 1000 / 1536 */
	assert_int_equal(unusable_free_index(zone, 9), 666);
	zone->free_area[9].nr_free = 0;
	zone->free_area[8].nr_free = 4;					/* lack of memory, not fragments */
	/* free 2048 pages in 1028 blocks: 1000 - (1000 + 4000) / 1028 = 996 */
	assert_int_equal(fragmentation_index(zone, 9), 996);
	zone->free_area[0].nr_free = 0;
	/* four order-8 blocks: 1000 - (1000 + 2000) / 4 = 250: mostly a lack of memory */
	assert_int_equal(fragmentation_index(zone, 9), 250);
	assert_true(pl_show_extfrag_index(m, out, sizeof(out)) > 0);
	assert_non_null(strstr(out, "Normal -1.000 -1.000 -1.000 -1.000 -1.000 -1.000 -1.000 -1.000 "
				    "-1.000  0.250  0.500 \n"));
	for (int o = 0; o < NR_PAGE_ORDERS; o++)
		zone->free_area[o].nr_free = saved[o];
	test_machine_done(m);
}

/* Bad input: one warning, an error code, nothing written. */
static void test_bad_input(void **state)
{
	char out[16] = "x";

	(void)state;
	assert_int_equal(pl_show_extfrag_index(NULL, out, sizeof(out)), -EINVAL);
	assert_int_equal(pl_show_unusable_index(NULL, out, sizeof(out)), -EINVAL);
	assert_string_equal(out, "x");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reports_match_kernel),
		cmocka_unit_test(test_fragmentation_index_rules),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
