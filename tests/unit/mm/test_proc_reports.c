// SPDX-License-Identifier: MIT
/*
 * test_proc_reports.c - /proc/buddyinfo, /proc/pagetypeinfo and /proc/zoneinfo
 * against samples from a real 6.18 kernel (tests/fixtures), and the two
 * pagetypeinfo implementations against each other, below and above the
 * 100000 cap.
 */
#include <stdio.h>
#include "helpers.h"

static char *read_fixture(const char *name)
{
	const char *dir = getenv("PAGELAB_FIXTURES");
	char path[512];
	static char buf[8][16384];
	static int next;
	char *out = buf[next++ % 8];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/fixtures", name);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(out, 1, sizeof(buf[0]) - 1, f);
	out[n] = '\0';
	fclose(f);
	return out;
}

/* The @n-th line (0-based) of @text that starts with @prefix, or NULL. */
static const char *find_line(const char *text, const char *prefix, int n, size_t *len)
{
	for (const char *p = text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t l = nl ? (size_t)(nl - p) : strlen(p);

		if (!strncmp(p, prefix, strlen(prefix)) && n-- == 0) {
			*len = l;
			return p;
		}
		if (!nl)
			break;
		p = nl + 1;
	}
	return NULL;
}

static char out[65536];

static void test_buddyinfo_layout(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	const char *fx = read_fixture("buddyinfo.6.18"), *ours, *theirs;
	size_t lo, lt;
	long len = pl_show_buddyinfo(m, out, sizeof(out));

	(void)state;
	assert_true(len > 0);
	out[len] = '\0';
	/* Same zone names, same column widths: with numbers under 10^6 the lines match in length. */
	ours = find_line(out, "Node 0, zone    DMA32 ", 0, &lo);
	theirs = find_line(fx, "Node 0, zone    DMA32 ", 0, &lt);
	assert_non_null(ours);
	assert_non_null(theirs);
	assert_int_equal(lo, lt);
	ours = find_line(out, "Node 0, zone   Normal ", 0, &lo);
	theirs = find_line(fx, "Node 0, zone   Normal ", 0, &lt);
	assert_non_null(ours);
	assert_int_equal(lo, lt);
	assert_string_equal(out + len - 1, "\n");
	assert_non_null(strstr(out, "Node 0, zone    DMA32      0      0      0      0      0      0"
				    "      0      0      0      0      4 \n"));
	test_machine_done(m);
}

static void test_pagetypeinfo_layout(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	const char *fx = read_fixture("pagetypeinfo.6.18");
	static const char *const prefixes[] = {
		"Page block order: 9",
		"Pages per block:  512",
		"Free pages count per migrate type at order",
		"Node    0, zone    DMA32, type    Unmovable ",
		"Node    0, zone    DMA32, type  Reclaimable ",
		"Node    0, zone   Normal, type   HighAtomic ",
		"Node    0, zone   Normal, type      Isolate ",
		"Number of blocks type ",
		"Node 0, zone    DMA32 ",
		"Node 0, zone   Normal ",
	};
	long len = pl_show_pagetypeinfo(m, out, sizeof(out));

	(void)state;
	assert_true(len > 0);
	out[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		size_t lo, lt;
		const char *ours = find_line(out, prefixes[i], 0, &lo);
		const char *theirs = find_line(fx, prefixes[i], 0, &lt);

		if (!ours || !theirs)
			fail_msg("line '%s' missing (ours %p, kernel's %p)", prefixes[i],
				 (const void *)ours, (const void *)theirs);
		if (lo != lt)
			fail_msg("line '%s': %zu bytes, the kernel's %zu", prefixes[i], lo, lt);
	}
	/* The headers carry no numbers: byte-identical to the kernel's. */
	assert_memory_equal(out, fx, (size_t)(strstr(fx, "\nNode") - fx));
	{
		size_t lo, lt;
		const char *ours = find_line(out, "Number of blocks type", 0, &lo);
		const char *theirs = find_line(fx, "Number of blocks type", 0, &lt);

		assert_int_equal(lo, lt);
		assert_memory_equal(ours, theirs, lo);
	}
	assert_non_null(strstr(out, "Node 0, zone   Normal            0           24 "));
	test_machine_done(m);
}

static void test_zoneinfo_layout(void **state)
{
	struct pl_machine *m = test_machine("v6.18");
	const char *fx = read_fixture("zoneinfo.6.18");
	static const char *const labels[] = {
		"Node 0, zone    DMA32", "  pages free     ", "        boost    ",
		"        min      ",     "        low      ", "        high     ",
		"        promo    ",     "        spanned  ", "        present  ",
		"        managed  ",     "        cma      ", "        protection: (",
		"      nr_free_pages ",  "      nr_free_pages_blocks ",
		"  pagesets",            "    cpu: 0",
		"              count:    ", "              high:     ",
		"              batch:    ", "              high_min: ",
		"              high_max: ",
		"  node_unreclaimable:  ", "  start_pfn:           ",
	};
	long len = pl_show_zoneinfo(m, out, sizeof(out));

	(void)state;
	assert_true(len > 0);
	out[len] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(labels); i++) {
		size_t l;

		if (!find_line(out, labels[i], 0, &l))
			fail_msg("our zoneinfo lacks '%s'", labels[i]);
		if (!find_line(fx, labels[i], 0, &l))
			fail_msg("the kernel's zoneinfo lacks '%s'", labels[i]);
	}
	assert_non_null(strstr(out, "  pages free     12288\n"));
	assert_non_null(strstr(out, "        protection: (0, 0, 48)\n"));
	test_machine_done(m);
}

/*
 * Same state built under the baseline, seed 002 and seed 002 plus pagelab's
 * O(1) block counts; their pagetypeinfo must match.
 */
static void both_designs_identical(unsigned long mem, unsigned int stride, bool expect_cap)
{
	static const char *const designs[3] = { "v6.18", "mt-counts", "mt-counts+blocks" };
	static char a[65536], b[65536];
	struct pl_machine *m[3];
	static struct page **pages;
	unsigned long nr = mem / PAGE_SIZE, n[3];
	long la, lb;

	pages = realloc(pages, sizeof(*pages) * nr);
	for (int d = 0; d < 3; d++) {
		m[d] = test_machine_cfg(mem, mem, designs[d], 0);
		n[d] = exhaust(GFP_ATOMIC, 0, pages, nr);
		for (unsigned long i = 0; i < n[d]; i += stride)
			assert_int_equal(__free_pages(pages[i], 0), 0);
		assert_int_equal(pl_check_machine(m[d]), 0);
		pl_leave();
	}
	la = pl_show_pagetypeinfo(m[0], a, sizeof(a));
	assert_true(la > 0);
	for (int d = 1; d < 3; d++) {
		assert_int_equal(n[0], n[d]);
		lb = pl_show_pagetypeinfo(m[d], b, sizeof(b));
		assert_int_equal(la, lb);
		assert_memory_equal(a, b, (size_t)la);
	}
	a[la] = '\0';
	assert_int_equal(strstr(a, ">100000") != NULL, expect_cap);
	for (int d = 0; d < 3; d++)
		pl_machine_destroy(m[d]);
}

static uint64_t zone_lock_acquisitions(struct pl_machine *m)
{
	uint64_t n = 0;

	for (int z = 0; z < MAX_NR_ZONES; z++)
		n += m->node_zones[z].lock.stat.acquisitions;
	return n;
}

/*
 * What each design's read costs zone->lock on a machine with two zones.
 * v6.18: per zone one hold for the free section, retaken after each of
 * the 5 types x 11 orders, and one for the pageblock walk. Seed 002 takes
 * none for the free section but keeps the pageblock walk under the lock
 * (one per zone); only pagelab's mt_counts_blocks extension takes none.
 */
static void test_pagetypeinfo_zone_lock_per_design(void **state)
{
	static const struct { const char *design; uint64_t per_read; } want[] = {
		{ "v6.18", 2 * (1 + MIGRATE_TYPES * NR_PAGE_ORDERS + 1) },
		{ "mt-counts", 2 },
		{ "mt-counts+blocks", 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct pl_machine *m = test_machine(want[i].design);
		uint64_t before = zone_lock_acquisitions(m);

		assert_true(pl_show_pagetypeinfo(m, out, sizeof(out)) > 0);
		assert_int_equal(zone_lock_acquisitions(m) - before, want[i].per_read);
		/* Only the extension keeps the per-type pageblock counts exact. */
		if (m->config.design.mt_counts_blocks)
			assert_int_equal(m->node_zones[ZONE_NORMAL].nr_pageblocks_mt[MIGRATE_MOVABLE],
					 m->node_zones[ZONE_NORMAL].spanned_pages / pageblock_nr_pages);
		test_machine_done(m);
	}
}

static void test_designs_agree_below_cap(void **state)
{
	(void)state;
	both_designs_identical(64 * MiB, 3, false);
}

static void test_designs_agree_above_cap(void **state)
{
	(void)state;
	/* 1 GiB, every other page free: ~131k order-0 blocks on one list. */
	both_designs_identical(1024 * MiB, 2, true);
}

static void test_buffer_too_small(void **state)
{
	struct pl_machine *m = test_machine("mt-counts");

	(void)state;
	assert_int_equal(pl_show_pagetypeinfo(m, out, 100), -ENOSPC);
	assert_int_equal(pl_show_buddyinfo(m, out, 10), -ENOSPC);
	test_machine_done(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_buddyinfo_layout),
		cmocka_unit_test(test_pagetypeinfo_layout),
		cmocka_unit_test(test_zoneinfo_layout),
		cmocka_unit_test(test_designs_agree_below_cap),
		cmocka_unit_test(test_designs_agree_above_cap),
		cmocka_unit_test(test_pagetypeinfo_zone_lock_per_design),
		cmocka_unit_test(test_buffer_too_small),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
