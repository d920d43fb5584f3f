// SPDX-License-Identifier: MIT
/*
 * example.c - a program outside the pagelab tree, built against an installed
 * pagelab (tests/install/run.sh builds it with pkg-config, with
 * find_package(pagelab), and through add_subdirectory): it creates a small
 * machine with a design parsed from switches, allocates and frees pages,
 * prints /proc/buddyinfo, and exits 0 only if the checker finds nothing and
 * the memory is back where it started.
 */
#include <stdio.h>
#include <pagelab/pagelab.h>

int main(void)
{
	struct pl_config cfg;
	struct pl_machine *m;
	struct page *pages[64];
	unsigned long before;
	char err[128];
	int bad = 0;

	pl_config_default(&cfg);
	cfg.mem_bytes = 64UL << 20;
	cfg.dma32_bytes = 16UL << 20;
	if (pl_design_parse("v6.18+pcp_owner+mt_counts", &cfg.design, err, sizeof(err))) {
		fprintf(stderr, "example: %s\n", err);
		return 1;
	}
	m = pl_machine_create(&cfg);
	if (!m)
		return 1;
	pl_enter(m, 0);
	before = pl_nr_free_pages(m);
	for (int i = 0; i < 64; i++)
		bad |= !(pages[i] = alloc_pages(GFP_KERNEL, (unsigned int)(i % 4)));
	for (int i = 0; i < 64; i++)
		if (pages[i])
			__free_pages(pages[i], (unsigned int)(i % 4));
	drain_all_pages(NULL);
	pl_show_buddyinfo_file(m, stdout);
	bad |= pl_check_machine(m) != 0;
	bad |= pl_nr_free_pages(m) != before;
	printf("pagelab %s (%s), design %s: %s\n", pl_version(), pl_git_commit(),
	       m->config.design.name, bad ? "FAILED" : "ok");
	pl_leave();
	pl_machine_destroy(m);
	return bad;
}
