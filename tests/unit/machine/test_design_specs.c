// SPDX-License-Identifier: MIT
/*
 * test_design_specs.c - the switch table and design specs (src/mm/design.c):
 * every preset equals its switches, specs combine a preset with switches,
 * a bad spec is refused with a reason and leaves the design untouched, and
 * pl_design_format() writes back what pl_design_parse() reads.
 */
#include <stdio.h>
#include "helpers.h"

static void test_presets_match_table(void **state)
{
	int n = 0;

	(void)state;
	for (const struct pl_design_preset_def *p = pl_design_preset_table; p->name; p++, n++) {
		struct pl_design a, b;
		char spec[256], fmt[256];

		/* the old list names the same presets in the same order */
		assert_non_null(pl_design_presets[n]);
		assert_string_equal(pl_design_presets[n], p->name);
		assert_int_equal(pl_design_preset(p->name, &a), 0);
		assert_string_equal(a.name, p->name);
		/* the preset is exactly its switches on the baseline */
		snprintf(spec, sizeof(spec), "v6.18%s%s", *p->switches ? "+" : "", p->switches);
		assert_int_equal(pl_design_parse(spec, &b, NULL, 0), 0);
		b.name = a.name;
		assert_memory_equal(&a, &b, sizeof(a));
		assert_true(pl_design_format(&a, fmt, sizeof(fmt)) >= 0);
		assert_string_equal(fmt, p->switches);
	}
	assert_null(pl_design_presets[n]);
	assert_true(n >= 9);
}

static void test_known_presets(void **state)
{
	struct pl_design d;

	(void)state;
	assert_int_equal(pl_design_preset("all", &d), 0);
	assert_true(d.mt_counts && d.pcp_owner && d.free_contig_batch && d.vmalloc_high_order &&
		    d.vfree_batch && d.vmap_pcpu_bump);
	assert_int_equal(d.vmap_index, VMAP_INDEX_MAPLE);
	assert_int_equal(pl_design_preset("maple-index", &d), 0);
	assert_int_equal(d.vmap_index, VMAP_INDEX_MAPLE);
	assert_false(d.vmap_pcpu_bump);
	assert_int_equal(pl_design_preset("v6.18", &d), 0);
	assert_false(d.mt_counts || d.pcp_owner || d.vfree_batch);
}

static void test_parse_combinations(void **state)
{
	struct pl_design d;
	char fmt[128];
	long len;

	(void)state;
	assert_int_equal(pl_design_parse("v6.18+pcp_owner+mt_counts", &d, NULL, 0), 0);
	assert_true(d.pcp_owner && d.mt_counts);
	assert_false(d.free_contig_batch);
	assert_string_equal(d.name, "v6.18+pcp_owner+mt_counts");
	/* a switch that needs another brings it along */
	assert_int_equal(pl_design_parse("v6.18+pcp_block_economy", &d, NULL, 0), 0);
	assert_true(d.pcp_block_economy && d.pcp_owner);
	assert_int_equal(pl_design_parse("v6.18+economy_batch", &d, NULL, 0), 0);
	assert_true(d.economy_batch && d.pcp_block_economy && d.pcp_owner);
	assert_int_equal(pl_design_preset("block-economy+batch", &d), 0);
	assert_true(d.economy_batch && d.pcp_block_economy && d.pcp_owner);
	assert_int_equal(pl_design_parse("v6.18+economy_ramp", &d, NULL, 0), 0);
	assert_true(d.economy_ramp && d.economy_batch && d.pcp_block_economy && d.pcp_owner);
	assert_int_equal(pl_design_preset("block-economy+ramp", &d), 0);
	assert_true(d.economy_ramp && d.economy_batch && d.pcp_block_economy && d.pcp_owner);
	/* switches alone apply to the baseline */
	assert_int_equal(pl_design_parse("pcp_owner", &d, NULL, 0), 0);
	assert_true(d.pcp_owner);
	assert_false(d.mt_counts);
	/* a preset whose name holds a '+', then a switch */
	assert_int_equal(pl_design_parse("v6.19-rc1+contig+mt_counts", &d, NULL, 0), 0);
	assert_true(d.vmalloc_high_order && d.free_contig_batch && d.vfree_batch && d.mt_counts);
	/* a switch turned back off, an enum switch set back */
	assert_int_equal(pl_design_parse("all+pcp_owner=0+vmap_index=rbtree", &d, NULL, 0), 0);
	assert_false(d.pcp_owner);
	assert_true(d.mt_counts);
	assert_int_equal(d.vmap_index, VMAP_INDEX_RBTREE);
	len = pl_design_format(&d, fmt, sizeof(fmt));
	assert_int_equal(len, (long)strlen(fmt));
	assert_string_equal(fmt, "mt_counts+free_contig_batch+vmalloc_high_order+vfree_batch+"
				 "vmap_pcpu_bump");
	/* the same spec twice gives the same interned name */
	{
		struct pl_design e;
		char spec[] = "mt_counts+vfree_batch";

		assert_int_equal(pl_design_parse(spec, &d, NULL, 0), 0);
		spec[0] = 'M';	/* the name does not point into the caller's string */
		assert_string_equal(d.name, "mt_counts+vfree_batch");
		assert_int_equal(pl_design_parse("mt_counts+vfree_batch", &e, NULL, 0), 0);
		assert_ptr_equal(d.name, e.name);
	}
}

static void test_parse_errors(void **state)
{
	static const char *const bad[] = {
		"", "bogus", "v6.18+", "+mt_counts", "v6.18++mt_counts", "mt_counts=2",
		"vmap_index", "vmap_index=avl", "pcp-owner+pcp_ownr", "v6.18+v6.18", "maple+",
	};
	struct pl_design d, before;
	char err[128];

	(void)state;
	assert_int_equal(pl_design_preset("pcp-owner", &d), 0);
	before = d;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(pl_design_parse(bad[i], &d, err, sizeof(err)), -EINVAL);
		assert_true(strlen(err) > 0);
		assert_null(strchr(err, '\n'));
		assert_memory_equal(&d, &before, sizeof(d));
	}
	assert_int_equal(pl_design_parse(NULL, &d, NULL, 0), -EINVAL);
	assert_int_equal(pl_design_preset("pcp_owner", &d), -EINVAL);	/* a switch, not a preset */
	assert_int_equal(pl_design_preset(NULL, &d), -EINVAL);
	assert_memory_equal(&d, &before, sizeof(d));
	pl_design_parse("bogus", &d, err, sizeof(err));
	assert_non_null(strstr(err, "bogus"));
}

static void test_format_small_buffer(void **state)
{
	struct pl_design d;
	char buf[8];

	(void)state;
	assert_int_equal(pl_design_preset("all", &d), 0);
	assert_int_equal(pl_design_format(&d, buf, sizeof(buf)), -ENOSPC);
	assert_int_equal(strlen(buf), sizeof(buf) - 1);
	assert_int_equal(pl_design_preset("v6.18", &d), 0);
	assert_int_equal(pl_design_format(&d, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
}

/* Every switch is documented and settable, and a machine builds with it. */
static void test_every_switch_builds_a_machine(void **state)
{
	(void)state;
	for (const struct pl_design_switch *s = pl_design_switches; s->name; s++) {
		struct pl_config cfg;
		struct pl_machine *m;
		char spec[64];

		assert_non_null(s->meaning);
		assert_non_null(s->origin);
		assert_ptr_equal(pl_design_switch_find(s->name, strlen(s->name)), s);
		snprintf(spec, sizeof(spec), "%s%s%s", s->name, s->values ? "=" : "",
			 s->values ? s->values[1] : "");
		pl_config_default(&cfg);
		cfg.mem_bytes = 64 * MiB;
		cfg.dma32_bytes = 16 * MiB;
		assert_int_equal(pl_design_parse(spec, &cfg.design, NULL, 0), 0);
		assert_int_equal(pl_design_switch_get(&cfg.design, s), 1);
		m = pl_machine_create(&cfg);
		assert_non_null(m);
		assert_int_equal(pl_enter(m, 0), 0);
		__free_pages(alloc_pages(GFP_KERNEL, 0), 0);
		test_machine_done(m);
	}
}

/*
 * The metric registry (src/machine/metric.c): ids unique and found, every
 * row complete, and the directions the tables depend on are the ones a
 * reader expects: a lock trip is a cost, pages per lock trip and free
 * pageblocks a gain, the workload's own counts never judged.
 */
static void test_metric_registry(void **state)
{
	static const struct {
		const char *id;
		enum pl_metric_direction dir;
	} want[] = {
		{ "zone-lock", PL_METRIC_LOWER }, { "pcp-refills", PL_METRIC_LOWER },
		{ "pages-per-zone-lock", PL_METRIC_HIGHER }, { "free-pageblocks", PL_METRIC_HIGHER },
		{ "contig-1g-won", PL_METRIC_HIGHER }, { "throughput", PL_METRIC_HIGHER },
		{ "page-allocs", PL_METRIC_NEUTRAL }, { "zone-lock-pages", PL_METRIC_NEUTRAL },
		{ "instructions", PL_METRIC_LOWER },
	};
	int n = 0, kernel = 0;

	(void)state;
	for (const struct pl_metric *m = pl_metrics; m->id; m++, n++) {
		assert_non_null(m->name);
		assert_non_null(m->unit);
		assert_non_null(m->meaning);
		assert_true(m->direction <= PL_METRIC_NEUTRAL);
		assert_true(m->family <= PL_METRIC_STATE);
		assert_ptr_equal(pl_metric_find(m->id), m);	/* unique: the first is itself */
		assert_true(!m->per || m->counter);
		kernel += m->kernel;
	}
	assert_true(n >= 30);
	assert_true(kernel >= 5);
	for (size_t i = 0; i < ARRAY_SIZE(want); i++) {
		assert_non_null(pl_metric_find(want[i].id));
		assert_int_equal(pl_metric_find(want[i].id)->direction, want[i].dir);
	}
	assert_null(pl_metric_find("no-such-metric"));
	assert_null(pl_metric_find(NULL));
	assert_string_equal(pl_metric_direction_name(PL_METRIC_HIGHER), "higher");
	assert_string_equal(pl_metric_direction_name(PL_METRIC_NEUTRAL), "neutral");
	assert_string_equal(pl_metric_family_name(PL_METRIC_LOCK), "lock traffic");
}

/* The canonical string: one per switch set, whatever spelled it. */
static void test_canonical(void **state)
{
	static const char *const same[] = { "pcp-owner", "pcp_owner", "v6.18+pcp_owner",
					    "pcp_owner+pcp_owner", "all+mt_counts=0+free_contig_batch=0+"
					    "vmalloc_high_order=0+vfree_batch=0+vmap_index=rbtree+"
					    "vmap_pcpu_bump=0" };
	char canon[256], err[160];
	struct pl_design d;

	(void)state;
	for (size_t i = 0; i < ARRAY_SIZE(same); i++) {
		assert_int_equal(pl_design_check(same[i], canon, sizeof(canon), err, sizeof(err)), 0);
		assert_string_equal(canon, "v6.18+pcp_owner");
	}
	assert_int_equal(pl_design_check("v6.18", canon, sizeof(canon), NULL, 0), 0);
	assert_string_equal(canon, "v6.18");
	assert_int_equal(pl_design_check("v6.18+", canon, sizeof(canon), err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "design ends with '+'");
	/* too small: truncated, refused */
	assert_int_equal(pl_design_preset("pcp-owner", &d), 0);
	assert_int_equal(pl_design_canonical(&d, canon, 8), -ENOSPC);
	assert_int_equal(pl_design_canonical(&d, canon, 16), 15);
	assert_int_equal(pl_design_canonical(NULL, canon, 16), -ENOSPC);
}

static void test_version(void **state)
{
	(void)state;
	assert_string_equal(pl_version(), PAGELAB_VERSION);
	assert_true(strlen(pl_git_commit()) > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_presets_match_table),
		cmocka_unit_test(test_known_presets),
		cmocka_unit_test(test_parse_combinations),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_format_small_buffer),
		cmocka_unit_test(test_every_switch_builds_a_machine),
		cmocka_unit_test(test_metric_registry),
		cmocka_unit_test(test_canonical),
		cmocka_unit_test(test_version),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
