// SPDX-License-Identifier: MIT
/*
 * fuzz_ops.c - the pagelab fuzzer: decodes an input into a sequence of
 * allocator operations (the language is in fuzz_ops.h) and runs them on a
 * fresh 16 MiB machine with 4 vCPUs, against a reference model.
 *
 * The model is a byte per pfn (FZ_PFN_FREE, _OWNED, _SYS: fuzz_internal.h),
 * plus the table of live blocks (page, order, compound, references); the
 * other layers keep their own models (fuzz_contig.c, fuzz_vmalloc.c,
 * fuzz_percpu.c, fuzz_maple.c). After every operation:
 *  - the checker, pl_check_machine() (zones, the vmalloc space's partition
 *    and page tables, percpu chunks), finds nothing;
 *  - the pages on the buddy free lists, the per-CPU lists and the
 *    pcp_owner chunk lists are exactly the model's free pages, and the
 *    pages the vmalloc layer holds are as many as it says;
 * and each operation checks its own result: an allocation returns aligned
 * pages the model has free (zeroed if asked, order-0 pages from the bulk
 * allocator), a free succeeds, a reference moves the count by one. A
 * failed allocation, genuine or injected, leaves the model's free set.
 * Bad-input operations must return their error with exactly one warning
 * and leave buddyinfo, pagetypeinfo, zoneinfo and vmallocinfo
 * byte-identical, and the vmalloc and percpu counters unchanged.
 *
 * Findings abort() with the operation's index and name; PAGELAB_FUZZ_TRACE=1
 * prints each operation first (replay.c turns a crash input into the text
 * form for tests/fuzz/seeds.txt).
 *
 * At the end everything is freed, purged and trimmed: the machine must be
 * fully coalesced and the vmalloc space one free area again.
 *
 * Built two ways: with clang -fsanitize=fuzzer,address,undefined as the
 * libFuzzer target fuzz_ops (FUZZ_MAIN), and into fuzz_replay, which runs
 * the seed corpus in every ordinary build.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fuzz_internal.h"

const struct fz_op_desc fz_op_descs[FZ_NR_OPCODES] = {
	[FZ_ALLOC] = { "alloc", 2 },
	[FZ_FREE] = { "free", 1 },
	[FZ_GET_PAGE] = { "get_page", 2 },
	[FZ_PUT_PAGE] = { "put_page", 2 },
	[FZ_CHECK] = { "check", 0 },
	[FZ_SHOW] = { "show", 1 },
	[FZ_DRAIN] = { "drain", 1 },
	[FZ_VMSTAT_TICK] = { "vmstat_tick", 0 },
	[FZ_ALLOC_BULK] = { "alloc_bulk", 2 },
	[FZ_FAIL_SET] = { "fail_set", 4 },
	[FZ_FREE_BY_ADDR] = { "free_by_addr", 1 },
	[FZ_BAD_DOUBLE_FREE] = { "bad_double_free", 1 },
	[FZ_BAD_FREE_FREE_PFN] = { "bad_free_free_pfn", 3 },
	[FZ_BAD_WRONG_ORDER] = { "bad_wrong_order", 2 },
	[FZ_BAD_INTERIOR] = { "bad_interior", 2 },
	[FZ_BAD_OUT_OF_RANGE] = { "bad_out_of_range", 2 },
	[FZ_BAD_ALLOC_ORDER] = { "bad_alloc_order", 1 },
	[FZ_BAD_FREE_FROZEN_HELD] = { "bad_free_frozen_held", 1 },
	[FZ_BAD_GET_FREE] = { "bad_get_free", 2 },
	[FZ_FAULT_SITE_SET] = { "fault_site_set", 4 },
	[FZ_SPLIT_PAGE] = { "split_page", 1 },
	[FZ_FREE_CONTIG_RANGE] = { "free_contig_range", 3 },
	[FZ_ALLOC_CONTIG_RANGE] = { "alloc_contig_range", 4 },
	[FZ_ALLOC_CONTIG_PAGES] = { "alloc_contig_pages", 2 },
	[FZ_FREE_PAGES_BULK] = { "free_pages_bulk", 3 },
	[FZ_BAD_CONTIG] = { "bad_contig", 3 },
	[FZ_VMALLOC] = { "vmalloc", 4 },
	[FZ_VFREE] = { "vfree", 2 },
	[FZ_VM_MAP_RAM] = { "vm_map_ram", 1 },
	[FZ_VM_UNMAP_RAM] = { "vm_unmap_ram", 1 },
	[FZ_VPURGE] = { "vpurge", 1 },
	[FZ_VCHECK] = { "vcheck", 1 },
	[FZ_BAD_VFREE] = { "bad_vfree", 3 },
	[FZ_BAD_VM_UNMAP_RAM] = { "bad_vm_unmap_ram", 3 },
	[FZ_ALLOC_PERCPU] = { "alloc_percpu", 3 },
	[FZ_FREE_PERCPU] = { "free_percpu", 1 },
	[FZ_BAD_VMALLOC] = { "bad_vmalloc", 2 },
	[FZ_BAD_FREE_PERCPU] = { "bad_free_percpu", 3 },
	[FZ_MAPLE_STORE] = { "maple_store", 4 },
	[FZ_MAPLE_ERASE] = { "maple_erase", 2 },
	[FZ_MAPLE_EMPTY_AREA] = { "maple_empty_area", 4 },
	[FZ_MISUSE] = { "misuse", 8 },
	[FZ_RAW_CALL] = { "raw_call", 8 },
};

static struct fz fz_state;
unsigned long fz_ops_total;
static int trace;

void fz_set_trace(int on)
{
	trace = on;
}

void fz_fail(struct fz *f, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fuzz_ops: op %u (%s): ", f->op_index,
		fz_op_descs[f->opcode].name ? fz_op_descs[f->opcode].name : "nop");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

/* ---- the model ------------------------------------------------------------ */

void model_alloc_range(struct fz *f, unsigned long pfn, unsigned long nr)
{
	if (pfn >= NR_PFNS || nr > NR_PFNS - pfn)
		fz_fail(f, "pfn %#lx + %lu outside memory", pfn, nr);
	for (unsigned long i = pfn; i < pfn + nr; i++) {
		if (f->model[i] != FZ_PFN_FREE)
			fz_fail(f, "pfn %#lx handed out while %s", i,
				f->model[i] == FZ_PFN_SYS ? "the vmalloc layer holds it" : "allocated");
		f->model[i] = FZ_PFN_OWNED;
	}
}

void model_alloc(struct fz *f, struct page *page, unsigned int order)
{
	unsigned long pfn = page_to_pfn(page);

	if (!IS_ALIGNED(pfn, 1UL << order))
		fz_fail(f, "pfn %#lx misaligned for order %u", pfn, order);
	model_alloc_range(f, pfn, 1UL << order);
}

void model_free(struct fz *f, unsigned long pfn, unsigned long nr)
{
	for (unsigned long i = pfn; i < pfn + nr; i++) {
		FZ_ASSERT(f, f->model[i] == FZ_PFN_OWNED);
		f->model[i] = FZ_PFN_FREE;
	}
}

/*
 * What the zones keep back from a GFP_KERNEL allocation now: each populated
 * zone's high watermark and its largest lowmem_reserve. The fuzzer's sysctl
 * ops can raise min_free_kbytes until these pass FZ_SPARE_PAGES (a vmalloc
 * of 1,024 pages failed, rightly, with 2,086 free and two zones' min
 * watermarks at 576 each).
 */
unsigned long fz_watermark_pages(struct fz *f)
{
	unsigned long n = 0;
	struct zone *zone;

	for_each_populated_zone(zone, f->m) {
		long reserve = 0;

		for (int i = 0; i < MAX_NR_ZONES; i++)
			reserve = max(reserve, zone->lowmem_reserve[i]);
		n += high_wmark_pages(zone) + (unsigned long)reserve;
	}
	return n;
}

unsigned long fz_nr_model_free(struct fz *f)
{
	unsigned long n = 0;

	for (unsigned long pfn = 0; pfn < NR_PFNS; pfn++)
		n += f->model[pfn] == FZ_PFN_FREE;
	return n;
}

static void mark_list(struct fz *f, struct list_head *head, unsigned int order, bool pcp)
{
	struct list_head *pos;

	list_for_each(pos, head) {
		struct page *page = pcp ? list_entry(pos, struct page, pcp_list)
					: list_entry(pos, struct page, buddy_list);
		unsigned long pfn = page_to_pfn(page);

		FZ_ASSERT(f, pfn + (1UL << order) <= NR_PFNS);
		for (unsigned long i = pfn; i < pfn + (1UL << order); i++) {
			if (f->lists[i])
				fz_fail(f, "pfn %#lx on two free lists", i);
			f->lists[i] = 1;
		}
	}
}

/* The pages the model gives the vmalloc layer: as many as it says it holds. */
static void compare_sys_pages(struct fz *f)
{
	struct pl_vmalloc_stats st;
	struct pl_percpu_stats ps;
	unsigned long sys = 0, held;

	for (unsigned long pfn = 0; pfn < NR_PFNS; pfn++)
		sys += f->model[pfn] == FZ_PFN_SYS;
	pl_vmalloc_stats(f->m, &st);
	pl_percpu_stats(f->m, &ps);
	held = st.vmalloc_pages + st.pgtable_pages + ps.nr_populated * f->m->nr_cpus;
	if (sys != held)
		fz_fail(f, "%lu pages neither free nor the fuzzer's, but the vmalloc layer holds %lu "
			"(%lu vmalloc, %lu page tables, %lu percpu x %u CPUs)", sys, held,
			st.vmalloc_pages, st.pgtable_pages, ps.nr_populated, f->m->nr_cpus);
}

/* Every free list of the machine against the model's free set. */
void compare_with_model(struct fz *f)
{
	struct pl_machine *m = f->m;
	struct zone *zone;

	memset(f->lists, 0, sizeof(f->lists));
	for_each_populated_zone(zone, m) {
		for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++)
			for (int mt = 0; mt < MIGRATE_TYPES; mt++)
				mark_list(f, &zone->free_area[o].free_list[mt], o, false);
		for (unsigned int cpu = 0; cpu < m->nr_cpus; cpu++) {
			struct per_cpu_pages *pcp = &zone->per_cpu_pageset[cpu];

			for (unsigned int i = 0; i < NR_PCP_LISTS; i++)
				mark_list(f, &pcp->lists[i],
					  i < NR_LOWORDER_PCP_LISTS ? i / MIGRATE_PCPTYPES : HPAGE_PMD_ORDER,
					  true);
			for (int mt = 0; mt < MIGRATE_PCPTYPES; mt++)
				for (unsigned int o = 0; o <= pageblock_order; o++)
					mark_list(f, &pcp->owned_free[mt][o], o, true);
		}
	}
	for (unsigned long pfn = 0; pfn < NR_PFNS; pfn++) {
		bool free = f->model[pfn] == FZ_PFN_FREE;

		if (free == f->lists[pfn])
			continue;
		/* Only the vmalloc layer's operations move pages between FREE and SYS. */
		if (f->sys_op && f->model[pfn] != FZ_PFN_OWNED) {
			f->model[pfn] = f->lists[pfn] ? FZ_PFN_FREE : FZ_PFN_SYS;
			continue;
		}
		fz_fail(f, "pfn %#lx: model says %s, free lists say %s", pfn,
			free ? "free" : f->model[pfn] == FZ_PFN_SYS ? "vmalloc's" : "the fuzzer's",
			f->lists[pfn] ? "free" : "allocated");
	}
	compare_sys_pages(f);
}

/* ---- snapshots for bad input ----------------------------------------------- */

static void snapshot(struct fz *f, int which)
{
	char *buf = f->report[which];
	long a = pl_show_buddyinfo(f->m, buf, REPORT_SIZE);
	long b = pl_show_pagetypeinfo(f->m, buf + a, REPORT_SIZE);
	long c = pl_show_zoneinfo(f->m, buf + a + b, REPORT_SIZE);
	long d = pl_show_vmallocinfo(f->m, buf + a + b + c, REPORT_SIZE);

	FZ_ASSERT(f, a > 0 && b > 0 && c > 0 && d >= 0);
	f->report_len[which] = a + b + c + d;
	pl_vmalloc_stats(f->m, &f->vst[which]);
	pl_percpu_stats(f->m, &f->pst[which]);
}

void bad_begin(struct fz *f, struct bad_call *bc)
{
	bool sys_op = f->sys_op;

	/* A queued vfree_atomic() would run in the bad call: run it first. */
	pl_vmalloc_flush_deferred(f->m);
	f->sys_op = true;
	compare_with_model(f);
	f->sys_op = sys_op;
	snapshot(f, 0);
	bc->warns = pl_warn_count();
}

/* The call was refused (@ret == @want) with one warning and nothing changed. */
void bad_end(struct fz *f, struct bad_call *bc, long ret, long want)
{
	if (ret != want)
		fz_fail(f, "bad input returned %ld, expected %ld", ret, want);
	if (pl_warn_count() != bc->warns + 1)
		fz_fail(f, "bad input gave %lu warnings, expected 1", pl_warn_count() - bc->warns);
	snapshot(f, 1);
	if (f->report_len[0] != f->report_len[1] ||
	    memcmp(f->report[0], f->report[1], (size_t)f->report_len[0]))
		fz_fail(f, "bad input changed the reports:\n%.*s\n----\n%.*s", (int)f->report_len[0],
			f->report[0], (int)f->report_len[1], f->report[1]);
	if (memcmp(&f->vst[0], &f->vst[1], sizeof(f->vst[0])))
		fz_fail(f, "bad input changed the vmalloc counters");
	if (memcmp(&f->pst[0], &f->pst[1], sizeof(f->pst[0])))
		fz_fail(f, "bad input changed the percpu counters");
}

/* ---- helpers ------------------------------------------------------------- */

gfp_t gfp_class(uint8_t c)
{
	static const gfp_t base[] = { GFP_KERNEL, GFP_ATOMIC, GFP_NOWAIT, GFP_HIGHUSER_MOVABLE,
				      GFP_KERNEL | __GFP_RECLAIMABLE, GFP_KERNEL | __GFP_DMA32 };
	gfp_t gfp = base[(c & 7) % ARRAY_SIZE(base)];

	if (c & 0x08)
		gfp |= __GFP_COMP;
	if (c & 0x10)
		gfp |= __GFP_ZERO;
	if (c & 0x40)
		gfp |= __GFP_NOWARN;
	return gfp;
}

struct live *pick_live(struct fz *f, uint8_t idx)
{
	return f->nr_live ? &f->live[idx % f->nr_live] : NULL;
}

void remove_live(struct fz *f, struct live *l)
{
	*l = f->live[--f->nr_live];
}

static void bury(struct fz *f, struct page *page, unsigned int order)
{
	f->grave[f->grave_next] = (struct grave){ page, order };
	f->grave_next = (f->grave_next + 1) % GRAVE_MAX;
	if (f->nr_grave < GRAVE_MAX)
		f->nr_grave++;
}

static uint64_t *stamp_word(struct page *page)
{
	return page_address(page);
}

static void check_stamp(struct fz *f, const struct live *l)
{
	if (*stamp_word(l->page) != l->stamp)
		fz_fail(f, "pfn %#lx: contents changed while allocated", page_to_pfn(l->page));
}

void add_live(struct fz *f, struct page *page, unsigned int order, bool compound)
{
	struct live *l;

	model_alloc(f, page, order);
	if (f->nr_live == LIVE_MAX) {
		/* Table full: give it straight back. */
		FZ_ASSERT(f, __free_pages(page, order) == 0);
		model_free(f, page_to_pfn(page), 1UL << order);
		return;
	}
	l = &f->live[f->nr_live++];
	*l = (struct live){ page, order, compound, 1, ++f->stamps };
	*stamp_word(page) = l->stamp;
}

/* The model's side of a successful __free_pages()/free_pages() of @l. */
static void freed_one_ref(struct fz *f, struct live *l)
{
	if (l->refs == 1) {
		model_free(f, page_to_pfn(l->page), 1UL << l->order);
		bury(f, l->page, l->order);
		remove_live(f, l);
		return;
	}
	l->refs--;
	if (!l->compound && l->order) {
		/* All but the first page go now; it waits for the last put_page(). */
		model_free(f, page_to_pfn(l->page) + 1, (1UL << l->order) - 1);
		l->order = 0;
	}
}

/* A free pfn at or after @from, wrapping; -1 if none. */
long find_free_pfn(struct fz *f, unsigned long from)
{
	for (unsigned long i = 0; i < NR_PFNS; i++) {
		unsigned long pfn = (from + i) % NR_PFNS;

		if (f->model[pfn] == FZ_PFN_FREE)
			return (long)pfn;
	}
	return -1;
}

/* ---- operations ----------------------------------------------------------- */

static void op_alloc(struct fz *f, const uint8_t *a)
{
	unsigned int order = a[0] % NR_PAGE_ORDERS;
	gfp_t gfp = gfp_class(a[1]);
	struct page *page;

	if (a[1] & 0x20) {
		unsigned long addr = __get_free_pages(gfp, order);

		page = addr ? virt_to_page((void *)addr) : NULL;
		FZ_ASSERT(f, !addr || (page && page_address(page) == (void *)addr));
	} else {
		page = alloc_pages(gfp, order);
	}
	if (!page)
		return;
	FZ_ASSERT(f, page_ref_count(page) == 1);
	if (gfp & __GFP_ZERO) {
		const uint64_t *p = page_address(page);

		for (size_t i = 0; i < (PAGE_SIZE << order) / sizeof(*p); i += 509)
			if (p[i])
				fz_fail(f, "__GFP_ZERO block not zeroed");
	}
	add_live(f, page, order, (gfp & __GFP_COMP) && order);
}

static void op_free(struct fz *f, const uint8_t *a, bool by_addr)
{
	struct live *l = pick_live(f, a[0]);
	int ret;

	if (!l)
		return;
	check_stamp(f, l);
	ret = by_addr ? free_pages((unsigned long)page_address(l->page), l->order)
		      : __free_pages(l->page, l->order);
	if (ret)
		fz_fail(f, "free of a live block returned %d", ret);
	freed_one_ref(f, l);
}

static void op_get_page(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	unsigned long sub;
	struct bad_call bc;

	if (!l)
		return;
	sub = a[1] % (1UL << l->order);
	if (sub && !l->compound) {
		/* An inner page of a non-compound block is not in use. */
		bad_begin(f, &bc);
		get_page(l->page + sub);
		bad_end(f, &bc, 0, 0);
		return;
	}
	get_page(l->page + sub);
	l->refs++;
	FZ_ASSERT(f, page_ref_count(l->page) == l->refs);
}

static void op_put_page(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	unsigned long sub;
	struct bad_call bc;

	if (!l)
		return;
	sub = a[1] % (1UL << l->order);
	if ((sub && !l->compound) || (!l->compound && l->order && l->refs == 1)) {
		bad_begin(f, &bc);
		bad_end(f, &bc, put_page(l->page + sub), -EINVAL);
		return;
	}
	check_stamp(f, l);
	FZ_ASSERT(f, put_page(l->page + sub) == 0);
	if (--l->refs == 0) {
		model_free(f, page_to_pfn(l->page), 1UL << l->order);
		bury(f, l->page, l->order);
		remove_live(f, l);
	} else {
		FZ_ASSERT(f, page_ref_count(l->page) == l->refs);
	}
}

static void assert_whole(struct fz *f)
{
	struct zone *zone;

	drain_all_pages(NULL);
	for (unsigned long pfn = 0; pfn < NR_PFNS; pfn++)
		FZ_ASSERT(f, f->model[pfn] == FZ_PFN_FREE);
	for_each_populated_zone(zone, f->m)
		for (unsigned int o = 0; o < MAX_PAGE_ORDER; o++)
			if (zone->free_area[o].nr_free)
				fz_fail(f, "nothing allocated, yet zone %s has %lu free order-%u blocks",
					zone->name, zone->free_area[o].nr_free, o);
	FZ_ASSERT(f, pl_nr_free_pages(f->m) == NR_PFNS);
}

/* buddyinfo's free blocks plus every PCP's pages == the model's free pages. */
static void check_buddyinfo(struct fz *f, const char *text)
{
	unsigned long from_report = 0, model_free_pages = 0;
	struct zone *zone;
	const char *line = text;

	while ((line = strstr(line, "zone"))) {
		char name[16];
		int used;

		FZ_ASSERT(f, sscanf(line, "zone %15s%n", name, &used) == 1);
		line += used;
		for (unsigned int o = 0; o < NR_PAGE_ORDERS; o++) {
			unsigned long n;

			FZ_ASSERT(f, sscanf(line, "%lu%n", &n, &used) == 1);
			line += used;
			from_report += n << o;
		}
	}
	for_each_populated_zone(zone, f->m)
		for (unsigned int cpu = 0; cpu < f->m->nr_cpus; cpu++)
			from_report += (unsigned long)zone->per_cpu_pageset[cpu].count;
	for (unsigned long pfn = 0; pfn < NR_PFNS; pfn++)
		model_free_pages += f->model[pfn] == FZ_PFN_FREE;
	if (from_report != model_free_pages)
		fz_fail(f, "buddyinfo + PCP counts say %lu free pages, the model %lu", from_report,
			model_free_pages);
}

static void op_show(struct fz *f, const uint8_t *a)
{
	char *buf = f->report[0];
	long n;

	switch (a[0] % 3) {
	case 0:
		n = pl_show_buddyinfo(f->m, buf, REPORT_SIZE - 1);
		FZ_ASSERT(f, n > 0);
		buf[n] = '\0'; /* reports are not NUL-terminated */
		check_buddyinfo(f, buf);
		break;
	case 1:
		FZ_ASSERT(f, pl_show_pagetypeinfo(f->m, buf, REPORT_SIZE) > 0);
		break;
	default:
		FZ_ASSERT(f, pl_show_zoneinfo(f->m, buf, REPORT_SIZE) > 0);
		break;
	}
}

static void op_alloc_bulk(struct fz *f, const uint8_t *a)
{
	struct page *pages[32] = { 0 };
	unsigned long n = 1 + a[0] % 32, got;

	got = alloc_pages_bulk(gfp_class(a[1]) & ~(gfp_t)(__GFP_COMP | __GFP_ZERO), n, pages);
	FZ_ASSERT(f, got <= n);
	for (unsigned long i = 0; i < n; i++) {
		FZ_ASSERT(f, (i < got) == (pages[i] != NULL));
		if (pages[i]) {
			FZ_ASSERT(f, page_ref_count(pages[i]) == 1);
			add_live(f, pages[i], 0, false);
		}
	}
}

static void op_fail_set(struct fz *f, const uint8_t *a)
{
	struct pl_fault_attr attr;

	pl_fault_attr_default(&attr);
	attr.probability = a[0] % 101;
	attr.interval = 1 + a[1] % 8;
	attr.times = a[2] == 0xff ? -1 : a[2] % 16;
	attr.min_order = (a[3] & 0x0f) % NR_PAGE_ORDERS;
	attr.ignore_gfp_reclaim = a[3] & 0x10;
	attr.verbose = (a[3] >> 5) & 1;
	attr.seed = f->op_index;
	FZ_ASSERT(f, pl_fail_page_alloc_set(f->m, &attr) == 0);
	f->faults_on |= attr.probability && attr.times;
}

/* ---- bad input -------------------------------------------------------------- */

static void op_bad_double_free(struct fz *f, const uint8_t *a)
{
	struct grave *g;
	struct bad_call bc;

	if (!f->nr_grave)
		return;
	g = &f->grave[a[0] % f->nr_grave];
	if (f->model[page_to_pfn(g->page)] != FZ_PFN_FREE)
		return; /* allocated again since (by us or vmalloc): a free would be legitimate */
	bad_begin(f, &bc);
	bad_end(f, &bc, __free_pages(g->page, g->order), -EINVAL);
}

static void op_bad_free_free_pfn(struct fz *f, const uint8_t *a)
{
	long pfn = find_free_pfn(f, (unsigned long)a[0] | (unsigned long)a[1] << 8);
	struct bad_call bc;

	if (pfn < 0)
		return;
	bad_begin(f, &bc);
	bad_end(f, &bc, __free_pages(pfn_to_page((unsigned long)pfn), a[2] % (NR_PAGE_ORDERS + 1)),
		-EINVAL);
}

static void op_bad_wrong_order(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	unsigned int order = a[1] % (NR_PAGE_ORDERS + 1);
	struct bad_call bc;

	if (!l)
		return;
	if (order == l->order)
		order = (order + 1) % (NR_PAGE_ORDERS + 1);
	bad_begin(f, &bc);
	bad_end(f, &bc, __free_pages(l->page, order), -EINVAL);
	FZ_ASSERT(f, page_ref_count(l->page) == l->refs);
}

static void op_bad_interior(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	struct bad_call bc;
	unsigned long sub;

	if (!l || !l->order)
		return;
	sub = 1 + a[1] % ((1UL << l->order) - 1);
	bad_begin(f, &bc);
	bad_end(f, &bc, __free_pages(l->page + sub, 0), -EINVAL);
}

static void op_bad_out_of_range(struct fz *f, const uint8_t *a)
{
	struct pl_machine *m = f->m;
	struct live *l = pick_live(f, a[1]);
	struct bad_call bc;
	long ret;

	bad_begin(f, &bc);
	switch (a[0] % 6) {
	case 0: /* past the memmap (never dereferenced: refused first) */
		ret = __free_pages(m->mem_map + m->max_pfn + a[1], 0);
		break;
	case 1: /* not a struct page boundary */
		ret = __free_pages((struct page *)((char *)m->mem_map + 1 + a[1] % 63), 0);
		break;
	case 2: /* an address past the machine's memory */
		ret = free_pages((unsigned long)m->mem_base + MEM_BYTES + (unsigned long)a[1] * PAGE_SIZE,
				 0);
		break;
	case 3: /* an address inside a page, not at its start */
		if (!l) {
			ret = __free_pages(NULL, 0);
			break;
		}
		ret = free_pages((unsigned long)page_address(l->page) + 1 + a[1] % (PAGE_SIZE - 1),
				 l->order);
		break;
	case 4:
		ret = put_page(m->mem_map + m->max_pfn + a[1]);
		break;
	default:
		ret = __free_pages(NULL, a[1] % NR_PAGE_ORDERS);
		break;
	}
	bad_end(f, &bc, ret, -EINVAL);
}

static void op_bad_alloc_order(struct fz *f, const uint8_t *a)
{
	struct bad_call bc;

	bad_begin(f, &bc);
	bad_end(f, &bc, alloc_pages(GFP_KERNEL, MAX_PAGE_ORDER + 1 + a[0]) ? 1 : 0, 0);
}

static void op_bad_free_frozen_held(struct fz *f, const uint8_t *a)
{
	struct live *l = pick_live(f, a[0]);
	struct bad_call bc;

	if (!l)
		return;
	bad_begin(f, &bc);
	bad_end(f, &bc, free_frozen_pages(l->page, l->order), -EBUSY);
	FZ_ASSERT(f, page_ref_count(l->page) == l->refs);
}

static void op_bad_get_free(struct fz *f, const uint8_t *a)
{
	long pfn = find_free_pfn(f, (unsigned long)a[0] | (unsigned long)a[1] << 8);
	struct bad_call bc;

	if (pfn < 0)
		return;
	bad_begin(f, &bc);
	get_page(pfn_to_page((unsigned long)pfn));
	bad_end(f, &bc, 0, 0);
	FZ_ASSERT(f, page_ref_count(pfn_to_page((unsigned long)pfn)) == 0);
}

/* failslab on vmalloc's object caches, or the maple node site. */
static void op_fault_site_set(struct fz *f, const uint8_t *a)
{
	enum pl_fault_site site = (a[0] & 1) ? PL_FAULT_MAPLE_NODE : PL_FAULT_SLAB;
	struct pl_fault_attr attr;

	pl_fault_attr_default(&attr);
	attr.probability = a[1] % 101;
	attr.interval = 1 + a[2] % 8;
	attr.times = a[3] == 0xff ? -1 : a[3] % 16;
	attr.min_order = 0;
	attr.verbose = 0;
	attr.seed = f->op_index;
	FZ_ASSERT(f, pl_fault_set(f->m, site, &attr) == 0);
	f->faults_on |= attr.probability && attr.times;
}

/* Operations after which pages may move between FREE and SYS. */
static bool is_sys_op(unsigned int op)
{
	switch (op) {
	case FZ_CHECK: case FZ_VMALLOC: case FZ_VFREE: case FZ_VM_MAP_RAM: case FZ_VM_UNMAP_RAM:
	case FZ_VPURGE: case FZ_ALLOC_PERCPU: case FZ_FREE_PERCPU: case FZ_MISUSE: case FZ_RAW_CALL:
		return true;
	default:
		return false;
	}
}

static void run_op(struct fz *f, unsigned int op, const uint8_t *a)
{
	switch (op) {
	case FZ_ALLOC: op_alloc(f, a); break;
	case FZ_FREE: op_free(f, a, false); break;
	case FZ_GET_PAGE: op_get_page(f, a); break;
	case FZ_PUT_PAGE: op_put_page(f, a); break;
	case FZ_CHECK:
		if (!f->nr_live && !f->nr_runs && fz_vm_settle_if_empty(f))
			assert_whole(f);
		break;
	case FZ_SHOW: op_show(f, a); break;
	case FZ_DRAIN:
		if (a[0] & 1)
			drain_all_pages(NULL);
		else
			drain_local_pages(NULL);
		break;
	case FZ_VMSTAT_TICK: pl_vmstat_tick(); break;
	case FZ_ALLOC_BULK: op_alloc_bulk(f, a); break;
	case FZ_FAIL_SET: op_fail_set(f, a); break;
	case FZ_FREE_BY_ADDR: op_free(f, a, true); break;
	case FZ_BAD_DOUBLE_FREE: op_bad_double_free(f, a); break;
	case FZ_BAD_FREE_FREE_PFN: op_bad_free_free_pfn(f, a); break;
	case FZ_BAD_WRONG_ORDER: op_bad_wrong_order(f, a); break;
	case FZ_BAD_INTERIOR: op_bad_interior(f, a); break;
	case FZ_BAD_OUT_OF_RANGE: op_bad_out_of_range(f, a); break;
	case FZ_BAD_ALLOC_ORDER: op_bad_alloc_order(f, a); break;
	case FZ_BAD_FREE_FROZEN_HELD: op_bad_free_frozen_held(f, a); break;
	case FZ_BAD_GET_FREE: op_bad_get_free(f, a); break;
	case FZ_FAULT_SITE_SET: op_fault_site_set(f, a); break;
	case FZ_SPLIT_PAGE: op_split_page(f, a); break;
	case FZ_FREE_CONTIG_RANGE: op_free_contig_range(f, a); break;
	case FZ_ALLOC_CONTIG_RANGE: op_alloc_contig_range(f, a); break;
	case FZ_ALLOC_CONTIG_PAGES: op_alloc_contig_pages(f, a); break;
	case FZ_FREE_PAGES_BULK: op_free_pages_bulk(f, a); break;
	case FZ_BAD_CONTIG: op_bad_contig(f, a); break;
	case FZ_VMALLOC: op_vmalloc(f, a); break;
	case FZ_VFREE: op_vfree(f, a); break;
	case FZ_VM_MAP_RAM: op_vm_map_ram(f, a); break;
	case FZ_VM_UNMAP_RAM: op_vm_unmap_ram(f, a); break;
	case FZ_VPURGE: op_vpurge(f, a); break;
	case FZ_VCHECK: op_vcheck(f, a); break;
	case FZ_BAD_VFREE: op_bad_vfree(f, a); break;
	case FZ_BAD_VM_UNMAP_RAM: op_bad_vm_unmap_ram(f, a); break;
	case FZ_BAD_VMALLOC: op_bad_vmalloc(f, a); break;
	case FZ_ALLOC_PERCPU: op_alloc_percpu(f, a); break;
	case FZ_FREE_PERCPU: op_free_percpu(f, a); break;
	case FZ_BAD_FREE_PERCPU: op_bad_free_percpu(f, a); break;
	case FZ_MAPLE_STORE: op_maple_store(f, a); break;
	case FZ_MAPLE_ERASE: op_maple_erase(f, a); break;
	case FZ_MAPLE_EMPTY_AREA: op_maple_empty_area(f, a); break;
	case FZ_MISUSE: op_misuse(f, a); break;
	case FZ_RAW_CALL: op_raw_call(f, a); break;
	default: break;
	}
}

static struct pl_machine *make_machine(uint8_t config)
{
	unsigned int nr_presets = 0;
	struct pl_config cfg;

	while (pl_design_presets[nr_presets])
		nr_presets++;
	pl_config_default(&cfg);
	cfg.mem_bytes = MEM_BYTES;
	cfg.dma32_bytes = DMA32_BYTES;
	cfg.nr_cpus = FZ_NR_CPUS;
	cfg.pcp_disabled = config & 0x08;
	cfg.debug = 1;	/* the PL_WARN_ON*() checks at the kernel's sites: on */
	if (pl_design_preset(pl_design_presets[fz_preset_index(config) % nr_presets], &cfg.design))
		abort();
	return pl_machine_create(&cfg);
}

void fz_run(const uint8_t *data, size_t size)
{
	struct fz *f = &fz_state;
	unsigned long warn_ons;
	char why[256];
	size_t pos = 1;

	if (!size)
		return;
	pl_warn_set_quiet(true);
	memset(f->model, FZ_PFN_FREE, sizeof(f->model));
	f->nr_live = f->nr_grave = f->grave_next = f->nr_runs = 0;
	f->op_index = 0;
	f->opcode = 0;
	f->sys_op = f->faults_on = false;
	f->m = make_machine(data[0]);
	if (!f->m)
		abort();
	fz_vm_begin(f);
	fz_pcpu_begin(f);
	fz_maple_begin(f);
	if (trace)
		fprintf(stderr, "config %u (%s%s)\n", data[0], f->m->config.design.name,
			f->m->config.pcp_disabled ? ", pcp=0" : "");
	while (pos < size) {
		uint8_t args[8] = { 0 };
		unsigned int op = data[pos] & (FZ_NR_OPCODES - 1), cpu = data[pos] >> 6;
		const struct fz_op_desc *d = &fz_op_descs[op];

		pos++;
		for (unsigned int i = 0; d->name && i < d->nargs; i++)
			args[i] = pos < size ? data[pos++] : 0;
		f->opcode = op;
		if (trace && d->name) {
			fprintf(stderr, "%u: cpu%u %s", f->op_index, cpu % FZ_NR_CPUS, d->name);
			for (unsigned int i = 0; i < d->nargs; i++)
				fprintf(stderr, " %u", args[i]);
			fputc('\n', stderr);
		}
		pl_enter(f->m, cpu % FZ_NR_CPUS);
		f->sys_op = is_sys_op(op);
		warn_ons = pl_warn_on_count();
		run_op(f, op, args);
		if (pl_warn_on_count() != warn_ons) {
			pl_warn_last(why, sizeof(why));
			fz_fail(f, "a PL_WARN_ON check fired: %s", why);
		}
		if (pl_check_machine(f->m))
			fz_fail(f, "the checker found inconsistencies");
		compare_with_model(f);
		fz_vm_after_op(f);
		f->op_index++;
		fz_ops_total++;
	}
	/* Free what is left, then the machine must be whole again. */
	pl_enter(f->m, 0);
	f->opcode = FZ_CHECK;
	f->sys_op = true;
	fz_maple_end(f);
	fz_pcpu_free_all(f);
	fz_vm_free_all(f);
	fz_contig_free_all(f);
	while (f->nr_live) {
		struct live *l = &f->live[f->nr_live - 1];

		check_stamp(f, l);
		while (l->refs > 1) {
			FZ_ASSERT(f, __free_pages(l->page, l->order) == 0);
			freed_one_ref(f, l);
		}
		FZ_ASSERT(f, __free_pages(l->page, l->order) == 0);
		freed_one_ref(f, l);
	}
	FZ_ASSERT(f, fz_vm_settle_if_empty(f));
	assert_whole(f);
	if (pl_check_machine(f->m))
		fz_fail(f, "the checker found inconsistencies at the end");
	pl_machine_destroy(f->m);
	f->m = NULL;
	fz_misuse_end();
}

#ifdef FUZZ_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* The count `make test-fuzz` checks: every operation ran with the checker after it. */
static void report_ops(void)
{
	fprintf(stderr, "fuzz_ops: %lu operations, each followed by the checker\n", fz_ops_total);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fz_set_trace(getenv("PAGELAB_FUZZ_TRACE") != NULL);
	atexit(report_ops);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fz_run(data, size);
	return 0;
}
#endif
