// SPDX-License-Identifier: MIT
/*
 * test_evstream.c - the binary event stream a replay reads (evstream.h):
 * every event of a real trace (the dd-xz capture, 364,695 events of every
 * kind the parser knows) comes back field for field as the parser gave it;
 * extreme values (a failed allocation's pfn -1, negative fields, time
 * going backwards) survive; a stream is read only once finished and takes
 * no append after; two readers keep positions of their own.
 */
#include <string.h>
#include "helpers.h"
#include "pagelab/evstream.h"
#include "trace_fixtures.h"

static bool same_event(const struct pl_trace_event *a, const struct pl_trace_event *b)
{
	return a->type == b->type && a->cpu == b->cpu && a->ts_ns == b->ts_ns &&
	       a->line == b->line && a->pfn == b->pfn && a->order == b->order &&
	       a->migratetype == b->migratetype && a->gfp == b->gfp &&
	       a->percpu_refill == b->percpu_refill && a->fallback_order == b->fallback_order &&
	       a->fallback_migratetype == b->fallback_migratetype &&
	       a->fragmenting == b->fragmenting && a->change_ownership == b->change_ownership &&
	       a->failed == b->failed && a->va_start == b->va_start && a->size == b->size &&
	       a->npurged == b->npurged && a->nr_lazy == b->nr_lazy && a->kworker == b->kworker &&
	       a->kswapd == b->kswapd;
}

static void test_real_trace_round_trip(void **state)
{
	struct pl_trace_reader *text = pl_trace_open(fixture_path("dd-xz.pltrace/trace.txt.zst"));
	struct pl_evstream *es = pl_evstream_create(NULL);
	struct pl_evstream_reader *rd;
	struct pl_trace_event ev, back;
	unsigned long n = 0, by_type[NR_PL_TRACE_TYPES] = { 0 };

	(void)state;
	assert_non_null(text);
	assert_non_null(es);
	while (pl_trace_next(text, &ev) > 0)
		assert_int_equal(pl_evstream_append(es, &ev), 0);
	pl_trace_close(text);
	assert_null(pl_evstream_open(es));		/* not finished yet */
	assert_int_equal(pl_evstream_finish(es), 0);
	assert_int_equal(pl_evstream_events(es), 364695);
	/* compact: a few bytes an event, against ~100 of text */
	assert_true(pl_evstream_bytes(es) < 20 * pl_evstream_events(es));

	/* the text again beside the stream: the same events in the same order */
	text = pl_trace_open(fixture_path("dd-xz.pltrace/trace.txt.zst"));
	rd = pl_evstream_open(es);
	assert_non_null(rd);
	while (pl_trace_next(text, &ev) > 0) {
		assert_int_equal(pl_evstream_next(rd, &back), 1);
		assert_true(same_event(&ev, &back));
		by_type[back.type]++;
		n++;
	}
	assert_int_equal(pl_evstream_next(rd, &back), 0);
	assert_int_equal(n, 364695);
	assert_true(by_type[PL_TRACE_PAGE_ALLOC] > 0 && by_type[PL_TRACE_PAGE_FREE] > 0 &&
		    by_type[PL_TRACE_ALLOC_VMAP_AREA] > 0 && by_type[PL_TRACE_FREE_VMAP_AREA] > 0);
	pl_evstream_close(rd);
	pl_trace_close(text);
	pl_evstream_destroy(es);
}

static void test_extreme_values(void **state)
{
	struct pl_evstream *es = pl_evstream_create(NULL);
	struct pl_trace_event in[4], out;
	struct pl_evstream_reader *rd, *rd2;

	(void)state;
	memset(in, 0, sizeof(in));
	in[0] = (struct pl_trace_event){ .type = PL_TRACE_PAGE_ALLOC, .cpu = 4095, .ts_ns = ~0ull,
					 .line = 1, .pfn = -1UL, .order = 10, .gfp = ~0u,
					 .nr_lazy = -1, .kworker = true };
	in[1] = (struct pl_trace_event){ .type = PL_TRACE_EXTFRAG, .ts_ns = 5, .line = 3,
					 .migratetype = -7, .fallback_order = -1,
					 .fragmenting = 1, .change_ownership = 1, .kswapd = true };
	in[2] = (struct pl_trace_event){ .type = PL_TRACE_FREE_VMAP_AREA, .ts_ns = 6, .line = 2,
					 .va_start = ~0UL, .size = 1UL << 40, .npurged = 12,
					 .nr_lazy = 1L << 40, .failed = -1 };
	in[3] = (struct pl_trace_event){ .type = PL_TRACE_PERCPU };	/* all zero */
	for (int i = 0; i < 4; i++)
		assert_int_equal(pl_evstream_append(es, &in[i]), 0);
	assert_int_equal(pl_evstream_finish(es), 0);
	assert_int_equal(pl_evstream_append(es, &in[0]), -EINVAL);	/* finished */
	rd = pl_evstream_open(es);
	rd2 = pl_evstream_open(es);	/* readers have positions of their own */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(pl_evstream_next(rd, &out), 1);
		assert_true(same_event(&in[i], &out));
	}
	assert_int_equal(pl_evstream_next(rd, &out), 0);
	assert_int_equal(pl_evstream_next(rd2, &out), 1);
	assert_true(same_event(&in[0], &out));
	pl_evstream_close(rd);
	pl_evstream_close(rd2);
	pl_evstream_destroy(es);
	pl_evstream_destroy(NULL);
	pl_evstream_close(NULL);
}

/*
 * The pressure events stay out of the stream but for kcompactd's work
 * (mm_compaction_kcompactd_wake), which a replay runs where the kernel's ran.
 */
static void test_kcompactd_wake_kept(void **state)
{
	struct pl_evstream *es = pl_evstream_create(NULL);
	struct pl_trace_event wake = { .type = PL_TRACE_KCOMPACTD_WAKE, .ts_ns = 7, .line = 4,
				       .order = 9, .pfn = -1UL };
	struct pl_trace_event other = { .type = PL_TRACE_WAKEUP_KCOMPACTD, .ts_ns = 6, .line = 3,
					.order = 9, .pfn = -1UL };
	struct pl_trace_event out;
	struct pl_evstream_reader *rd;

	(void)state;
	assert_int_equal(pl_evstream_append(es, &other), 0);
	assert_int_equal(pl_evstream_append(es, &wake), 0);
	assert_int_equal(pl_evstream_finish(es), 0);
	rd = pl_evstream_open(es);
	assert_int_equal(pl_evstream_next(rd, &out), 1);
	assert_true(same_event(&wake, &out));
	assert_int_equal(pl_evstream_next(rd, &out), 0);
	pl_evstream_close(rd);
	pl_evstream_destroy(es);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_trace_round_trip),
		cmocka_unit_test(test_extreme_values),
		cmocka_unit_test(test_kcompactd_wake_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
