// SPDX-License-Identifier: MIT
/*
 * test_config_parse.c - configuration and gfp flags from strings (config.c): every
 * key sets its field, bad keys and values are refused with a reason and
 * leave the config unchanged, and the built-in churn workload runs on a
 * machine built that way and gives everything back.
 */
#include <stdio.h>
#include "helpers.h"

static void test_keys(void **state)
{
	struct pl_config *cfg = pl_config_new();
	char err[160];

	(void)state;
	assert_non_null(cfg);
	assert_int_equal(pl_config_set(cfg, "mem", "64M", err, sizeof(err)), 0);
	assert_int_equal(cfg->mem_bytes, 64 * MiB);
	assert_int_equal(pl_config_set(cfg, "dma32", "0x1000000", err, sizeof(err)), 0);
	assert_int_equal(cfg->dma32_bytes, 16 * MiB);
	assert_int_equal(pl_config_set(cfg, "vcpus", "4", err, sizeof(err)), 0);
	assert_int_equal(cfg->nr_cpus, 4);
	assert_int_equal(pl_config_set(cfg, "pcp", "0", err, sizeof(err)), 0);
	assert_true(cfg->pcp_disabled);
	assert_int_equal(pl_config_set(cfg, "design", "v6.18+pcp_owner", err, sizeof(err)), 0);
	assert_true(cfg->design.pcp_owner);
	assert_int_equal(pl_config_set(cfg, "debug", "3", err, sizeof(err)), 0);
	assert_int_equal(cfg->debug, 3);
	pl_config_free(cfg);
}

static void test_refusals_change_nothing(void **state)
{
	static const char *const bad[][2] = {
		{ "mem", "lots" }, { "mem", "-1" }, { "mem", "" }, { "mem", "2000G" },
		{ "vcpus", "1e3" }, { "debug", "4" }, { "lock_stat", "2" }, { "design", "v6.18+x" },
		{ "memory", "64M" }, { "pcp", "0x" },
	};
	struct pl_config *cfg = pl_config_new(), before;
	char err[160];

	(void)state;
	before = *cfg;
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		err[0] = '\0';
		assert_int_equal(pl_config_set(cfg, bad[i][0], bad[i][1], err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
		assert_memory_equal(cfg, &before, sizeof(before));
	}
	assert_int_equal(pl_config_set(cfg, NULL, "1", NULL, 0), -EINVAL);
	pl_config_free(cfg);
}

static void test_gfp(void **state)
{
	gfp_t gfp = 12345, before;
	char err[80];

	(void)state;
	assert_int_equal(pl_gfp_parse("GFP_KERNEL", &gfp, NULL, 0), 0);
	assert_int_equal(gfp, GFP_KERNEL);
	assert_int_equal(pl_gfp_parse("GFP_KERNEL | __GFP_ZERO|__GFP_COMP", &gfp, NULL, 0), 0);
	assert_int_equal(gfp, GFP_KERNEL | __GFP_ZERO | __GFP_COMP);
	before = gfp;
	assert_int_equal(pl_gfp_parse("GFP_KERNEL|__GFP_BOGUS", &gfp, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "__GFP_BOGUS"));
	assert_int_equal(pl_gfp_parse("GFP_KERNEL|", &gfp, err, sizeof(err)), -EINVAL);
	assert_int_equal(pl_gfp_parse("", &gfp, err, sizeof(err)), -EINVAL);
	assert_int_equal(gfp, before);
}

static void test_churn_gives_everything_back(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	unsigned long free_before = pl_nr_free_pages(m);
	struct pl_churn_result res, again;
	struct pl_churn *st;

	(void)state;
	st = pl_churn_run(m, 7, 2000, &res);
	assert_non_null(st);
	assert_true(res.live_blocks > 0 && res.allocs > res.live_blocks && res.frees > 0);
	assert_true(pl_nr_free_pages(m) < free_before / 4 * 3);
	assert_int_equal(pl_check_machine(m), 0);
	pl_churn_release(st);
	drain_all_pages(NULL);
	assert_int_equal(pl_nr_free_pages(m), free_before);
	assert_fully_coalesced(m);
	test_machine_done(m);
	/* the same seed on a fresh machine gives the same result */
	m = test_machine("v6.18");
	st = pl_churn_run(m, 7, 2000, &again);
	assert_int_equal(again.live_blocks, res.live_blocks);
	assert_int_equal(again.allocs, res.allocs);
	pl_churn_release(st);
	drain_all_pages(NULL);
	assert_fully_coalesced(m);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keys),
		cmocka_unit_test(test_refusals_change_nothing),
		cmocka_unit_test(test_gfp),
		cmocka_unit_test(test_churn_gives_everything_back),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
